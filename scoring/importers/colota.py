"""Import CoLoTa's ``CoLoTa_qa.json`` / ``CoLoTa_cv.json`` (one JSON array each).

Every JSON record is a long-tail item (popularity ``tail``); ``reasoning_strategy``
becomes ``category`` (a list). Public questions keep ``query`` and ``kg_entities``
(entity names with their Wikidata ids, which name what the query mentions) and drop
``kg_triples``, ``inference_rule`` and ``reasoning_steps``: the triples state the
facts the answer is derived from ("(Sablé, animal breed, dachshund)"), so they are
treated as answer-revealing. ``--originals`` adds the popular originals as head
items; see ``scoring.importers.colota_originals``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scoring.importers import colota_originals
from scoring.importers.common import (
    LABELS, QUESTIONS, Conversion, ImportUsageError, Record, ReportEntry, entry,
    phase_config, read_json_array, require_keys,
)

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


def convert(source: Path, *, originals: Path | None = None,
            modified: Path | None = None) -> Conversion:
    """Convert one CoLoTa JSON file (plus optional originals) into phase files."""
    if modified is not None and originals is None:
        raise ImportUsageError("--modified needs --originals (it links records to originals)")
    records = list(enumerate(read_json_array(source, "CoLoTa")))
    require_keys(records, ("id", "query", "answer"), "CoLoTa", name=source.name, unit="index")
    conv = Conversion()
    items, skipped = _items(records)
    head: list[ColotaItem] = []
    head_entries: list[ReportEntry] = []
    if originals is not None:
        head, head_entries, notes = colota_originals.add_originals(
            items, len(records), originals, modified)
        conv.notes += notes
    conv.entries = sorted(skipped + [_entry(it) for it in items], key=lambda e: e.index or 0)
    conv.entries += head_entries
    everything = items + head
    conv.files[QUESTIONS] = [it.question for it in everything]
    conv.files[LABELS] = [_label_record(it) for it in everything]
    conv.phase = phase_config("binary", breakdowns=["category"])
    if any(it.original for it in items):
        conv.notes.append('labels.jsonl links items to their originals in the field '
                          '"original"; add "original" to breakdowns in phase.json to use it')
    return conv


def _items(records: list[tuple[int, Any]]) -> tuple[list[ColotaItem], list[ReportEntry]]:
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


def _entry(it: ColotaItem) -> ReportEntry:
    return entry("changed" if it.changed else "kept", it.source_id, it.question["id"], it.notes,
                 index=it.index)


def _label_record(it: ColotaItem) -> Record:
    record: Record = {"id": it.question["id"], "label": it.label}
    for key in ("category", "popularity"):
        if key in it.question:
            record[key] = it.question[key]
    if it.original is not None:
        record["original"] = it.original
    return record
