"""An organizer's own item metadata, added to a release that has none: ``--metadata FILE``.

FILE is one JSON object mapping an item id to an object with any of ``category`` (a
string or a list of strings), ``popularity`` (``head``, ``torso``, ``tail`` or a
number) and ``split`` (``public`` or ``private``), the label-file fields of
docs/FORMATS.md. They go into labels.jsonl; ``category`` and ``popularity`` also
into questions.jsonl (the public allow list has them), ``split`` never (which items
count on the private board stays hidden). Nothing is invented: an item the file does
not name gets no metadata, and the notes say how many.

CREAK's release has no category and no popularity (docs: ../shared/datasets/README.md);
``leaderboard/demo/creak_metadata.json`` is hand-made for the demo claims.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scoring.importers.common import Record, SourceFormatError
from scoring.importers.sources import read_text

BUCKETS = ("head", "torso", "tail")
SPLITS = ("public", "private")
PUBLIC = ("category", "popularity")  # copied into questions.jsonl too


@dataclass(frozen=True)
class Metadata:
    """The fields a metadata file gives per item id, already checked."""

    name: str
    by_id: dict[str, Record]

    @property
    def fields(self) -> list[str]:
        """Return the fields some item has, in the order of FIELDS."""
        return [f for f in FIELDS if any(f in record for record in self.by_id.values())]


def read_metadata(path: Path) -> Metadata:
    """Return a metadata file's fields per id, or raise SourceFormatError naming the first problem."""
    try:
        value = json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise SourceFormatError(f"{path.name} is not JSON (line {exc.lineno}: {exc.msg}); a metadata file is "
                                "one JSON object mapping an id to its category, popularity and split") from exc
    if not isinstance(value, dict):
        raise SourceFormatError(f"{path.name} holds a JSON {type(value).__name__}; a metadata file is one "
                                "JSON object mapping an id to its category, popularity and split")
    by_id: dict[str, Record] = {}
    for item_id, fields in value.items():
        if not isinstance(fields, dict):
            raise SourceFormatError(f"{path.name}: the value of {item_id!r} is not a JSON object")
        for key, field in fields.items():
            check = FIELDS.get(key)
            if check is None:
                raise SourceFormatError(f"{path.name}: {item_id!r} has {key!r}; metadata fields are "
                                        f"{', '.join(FIELDS)}")
            if not check(field):
                raise SourceFormatError(f"{path.name}: {item_id!r} has {key} {field!r}; {EXPECTED[key]}")
        by_id[item_id] = dict(fields)
    return Metadata(name=path.name, by_id=by_id)


def _category(value: Any) -> bool:
    """Return whether value is a category: a non-empty string, or a list of them."""
    values = value if isinstance(value, list) else [value]
    return bool(values) and all(isinstance(v, str) and v.strip() != "" for v in values)


def _popularity(value: Any) -> bool:
    """Return whether value is a bucket name or a finite number (not a boolean)."""
    if isinstance(value, str):
        return value.strip().lower() in BUCKETS
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


FIELDS: dict[str, Callable[[Any], bool]] = {
    "category": _category,
    "popularity": _popularity,
    "split": lambda value: value in SPLITS,
}
EXPECTED = {
    "category": "a category is a non-empty string or a list of them",
    "popularity": f"popularity is one of {', '.join(BUCKETS)} or a number",
    "split": f"split is {' or '.join(SPLITS)}",
}


def apply_metadata(meta: Metadata, *, labels: list[Record], questions: list[Record]) -> list[str]:
    """Add each item's metadata to its label record and its public fields to its question (in place).

    Return the notes for the report: what was added to how many items, which items
    the file does not name, which of its ids the source does not have.
    """
    by_label = {r["id"]: r for r in labels}
    given = 0
    for question in questions:
        fields = meta.by_id.get(question["id"])
        if fields is None:
            continue
        given += 1
        question.update((k, v) for k, v in fields.items() if k in PUBLIC)
        if question["id"] in by_label:
            by_label[question["id"]].update(fields)
    added = meta.fields if labels else [f for f in meta.fields if f in PUBLIC]
    notes = [f"{meta.name}: {', '.join(added)} added to {given} of {len(questions)} items"]
    missing = [q["id"] for q in questions if q["id"] not in meta.by_id]
    if missing:
        notes.append(f"{meta.name} names no metadata for {len(missing)} item(s) (first: {', '.join(missing[:5])}); "
                     "they have none")
    known = {q["id"] for q in questions}
    unused = [i for i in meta.by_id if i not in known]
    if unused:
        notes.append(f"{meta.name} names {len(unused)} id(s) the source does not have (first: "
                     f"{', '.join(unused[:5])}); ignored")
    return notes
