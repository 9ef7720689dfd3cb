"""Make a private split at import (docs/FORMATS.md ``split``): a share of items, stratified, reproducible.

Items are drawn in units: a record's ``group`` (or ``pair``) keeps related items (a
statement and its contrast, an original and its long-tail variant) on the same side, so
the public side never answers a private item. Units are stratified by their first
item's first category and popularity band (its head/torso/tail word, or a tercile of a
numeric popularity), and each stratum gives round(percent x units) units to the private
side, drawn with a seeded generator: the same file and percentage always give the same
split. Existing ``split`` fields are replaced (the report says so).
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from leaderboard.platform import InvalidInput

SEED = 20251125
"""The fixed seed of every split made here (shown in the report)."""
MIN_PERCENT, MAX_PERCENT = 1, 90


@dataclass(frozen=True)
class SplitReport:
    """What the split did, for the import report."""

    percent: int
    seed: int
    units: int
    strata: int
    private_items: int
    public_items: int
    replaced: int  # records that had a split before


def assign_private_split(labels: bytes, *, percent: int, seed: int = SEED) -> tuple[bytes, SplitReport]:
    """Return the label file with ``split`` set on every record (percent% of units private) and a report."""
    if not MIN_PERCENT <= percent <= MAX_PERCENT:
        raise InvalidInput(f"The private split is {MIN_PERCENT}% to {MAX_PERCENT}% of the items.")
    records = [json.loads(line) for line in labels.splitlines() if line.strip()]
    if not all(isinstance(r, dict) and "id" in r for r in records):
        raise InvalidInput("The label file must hold one JSON object with an id per line to make a split.")
    units: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        units[str(record.get("group") or record.get("pair") or f"id:{record['id']}")].append(record)
    bands = _popularity_bands(records)
    strata: dict[tuple[str, str], list[str]] = defaultdict(list)
    for key, members in units.items():
        strata[(_category(members[0]), bands(members[0]))].append(key)
    private: set[str] = set()
    for stratum, keys in sorted(strata.items()):
        rng = random.Random(f"{seed}:{stratum[0]}:{stratum[1]}")
        private.update(rng.sample(sorted(keys), round(len(keys) * percent / 100)))
    replaced = sum(1 for record in records if "split" in record)
    for key, members in units.items():
        for record in members:
            record["split"] = "private" if key in private else "public"
    out = ("\n".join(json.dumps(record, ensure_ascii=False) for record in records) + "\n").encode()
    n_private = sum(1 for record in records if record["split"] == "private")
    return out, SplitReport(percent=percent, seed=seed, units=len(units), strata=len(strata),
                            private_items=n_private, public_items=len(records) - n_private, replaced=replaced)


def _category(record: dict[str, Any]) -> str:
    """Return a record's first category ('' without one)."""
    value = record.get("category")
    if isinstance(value, list):
        value = value[0] if value else ""
    return str(value or "")


def _popularity_bands(records: list[dict[str, Any]]) -> Any:
    """Return a function naming a record's popularity band: its word, or a tercile of the numeric values."""
    numbers = sorted(float(r["popularity"]) for r in records if _is_number(r.get("popularity")))
    cuts = (numbers[len(numbers) // 3], numbers[2 * len(numbers) // 3]) if numbers else (0.0, 0.0)

    def band(record: dict[str, Any]) -> str:
        value: Any = record.get("popularity")
        if _is_number(value):
            number = float(value)
            return "low" if number < cuts[0] else "mid" if number < cuts[1] else "high"
        return str(value or "")

    return band


def _is_number(value: Any) -> bool:
    """Return whether value is an int or float (not a bool)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)
