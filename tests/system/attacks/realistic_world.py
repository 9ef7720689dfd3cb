"""A CoLoTa-shaped phase for the slice attacks: 1,200 binary items in 20 categories of skewed sizes.

Like CoLoTa's QA set (1,838 items, 24 categories from 4 to 460 items), most items belong to
two or three categories and a third to one only; 8% are head items; labels are balanced.
With ``private``, every third item is on the private split. The attacker knows what the
public questions file says (ids, categories, popularity); the truth is only used to score
the attack afterwards.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any

N_ITEMS = 1200
CATEGORIES = [f"cat{k:02d}" for k in range(20)]
WEIGHTS = [1.0 / (k + 2) ** 0.7 for k in range(len(CATEGORIES))]
CONFIG = {"task_type": "binary", "breakdowns": ["category"]}


@dataclass(frozen=True)
class Item:
    """One item of the realistic phase, with the truth the attacker is after."""

    id: str
    label: bool
    categories: tuple[str, ...]
    popularity: str
    private: bool

    @property
    def category(self) -> str:
        """Return the item's first category."""
        return self.categories[0]


def make_items(seed: int = 11) -> list[Item]:
    """Return the 1,200 items: 1 to 3 categories each (weights falling like CoLoTa's sizes), 8% head."""
    rng = random.Random(seed)
    items = []
    for i in range(N_ITEMS):
        k = rng.choices((1, 2, 3), weights=(0.35, 0.45, 0.2))[0]
        chosen: list[str] = []
        while len(chosen) < k:
            category = rng.choices(CATEGORIES, weights=WEIGHTS)[0]
            if category not in chosen:
                chosen.append(category)
        items.append(Item(id=f"R{i:04d}", label=rng.random() < 0.49, categories=tuple(chosen),
                          popularity="head" if rng.random() < 0.08 else "tail", private=i % 3 == 0))
    return items


def label_file(items: list[Item], *, private: bool) -> bytes:
    """Return the JSON Lines label file; without private, no item has a split."""
    rows = []
    for item in items:
        row: dict[str, Any] = {"id": item.id, "label": item.label, "category": list(item.categories),
                               "popularity": item.popularity}
        if private:
            row["split"] = "private" if item.private else "public"
        rows.append(json.dumps(row))
    return ("\n".join(rows) + "\n").encode()


def single_category(items: list[Item]) -> dict[str, list[Item]]:
    """Return, per category, the items that belong to it alone (a change there moves one breakdown row)."""
    out: dict[str, list[Item]] = {category: [] for category in CATEGORIES}
    for item in items:
        if len(item.categories) == 1:
            out[item.category].append(item)
    return out
