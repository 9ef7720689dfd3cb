"""CoLoTa's JSON records as items: duplicates and non-boolean answers skipped, names cleaned up."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from scoring.importers.common import Record, ReportEntry, entry

CATEGORY_ALIASES = {"educational": "education"}
"""Variant spellings of one reasoning strategy, mapped to the form the CV file uses."""

LEADING_COMMA = re.compile(r"^\s*,\s*")


@dataclass
class ColotaItem:
    """One usable CoLoTa record (or original), in file order."""

    index: int
    source_id: str
    question: Record
    label: bool
    notes: list[str] = field(default_factory=list)
    changed: bool = False
    original: str | None = None


def usable_items(records: list[tuple[int, Any]]) -> tuple[list[ColotaItem], list[ReportEntry]]:
    """Return the usable records, and the entries of duplicates and non-boolean answers."""
    first_index: dict[str, int] = {}
    items: list[ColotaItem] = []
    skipped: list[ReportEntry] = []
    for index, record in records:
        item_id = str(record["id"])
        if item_id in first_index:
            reason = f"duplicate id (first at index {first_index[item_id]})"
            skipped.append(entry("skipped", item_id, None, [reason], index=index))
            continue
        first_index[item_id] = index
        if not isinstance(record["answer"], bool):
            skipped.append(entry("skipped", item_id, None, ["answer not a boolean"],
                                 index=index))
            continue
        items.append(_item(index, item_id, record))
    return items, skipped


def _item(index: int, item_id: str, record: Record) -> ColotaItem:
    """Build one tail item, normalizing entity names and category spellings."""
    notes: list[str] = []
    question: Record = {"id": item_id, "query": record["query"]}
    entities = record.get("kg_entities")
    if isinstance(entities, dict):
        question["kg_entities"] = _clean_entities(entities, notes)
    elif entities is not None:
        notes.append("kg_entities is not an object: left out")
    categories = _categories(record.get("reasoning_strategy"), notes)
    if categories:
        question["category"] = categories
    question["popularity"] = "tail"
    return ColotaItem(index, item_id, question, record["answer"], notes, changed=bool(notes))


def _clean_entities(entities: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    """Strip the stray leading comma some entity names carry."""
    clean = {}
    for name, qid in entities.items():
        fixed = LEADING_COMMA.sub("", name)
        if fixed != name:
            notes.append(f"entity name {name!r} -> {fixed!r}")
        clean[fixed] = qid
    return clean


def _categories(strategies: Any, notes: list[str]) -> list[str]:
    """Return the reasoning strategies as a category list with variants normalized."""
    if strategies is None:
        return []
    if isinstance(strategies, str):
        strategies = [strategies]
    out: list[str] = []
    for strategy in strategies:
        name = CATEGORY_ALIASES.get(str(strategy).strip(), str(strategy).strip())
        if name != strategy:
            notes.append(f"category {strategy!r} -> {name!r}")
        if name and name not in out:
            out.append(name)
    return out


def report_entry(it: ColotaItem) -> ReportEntry:
    """Return the report entry of one usable record: kept, or changed when a value was normalized."""
    return entry("changed" if it.changed else "kept", it.source_id, it.question["id"], it.notes,
                 index=it.index)


def label_record(it: ColotaItem) -> Record:
    """Return an item's labels.jsonl record: id, label, category, popularity and original."""
    record: Record = {"id": it.question["id"], "label": it.label}
    for key in ("category", "popularity"):
        if key in it.question:
            record[key] = it.question[key]
    if it.original is not None:
        record["original"] = it.original
    return record
