"""Import CREAK's released files: JSON Lines despite the ``.json`` extension.

Three kinds of file, told apart by content, not by name:
- labelled evaluation data (``dev.json``, ``contrast_set.json``): hidden labels;
  the contrast set's ``pair_id`` becomes ``group``, so ``group_accuracy`` is contrast
  consistency (both claims of a pair right). Only a ``pair_id`` with exactly two claims
  is a pair: the claims of a one-claim or three-claim ``pair_id`` (``p_18``, ``p_74``)
  get no group (reported ``changed``, with the reason) and still count in accuracy. A
  contrast set's phase has two views: accuracy with contrast consistency beside it, and
  the same ranked by contrast consistency;
- ``test_without_labels.json`` (no record has a label): questions.jsonl and
  phase.json only, no labels.jsonl;
- ``train.json`` (every ``ex_id`` starts with ``train_``): public training data,
  written as ``train.jsonl`` with labels and explanations, for a data download.

CREAK releases no category, popularity or split. ``--metadata FILE`` adds an
organizer's own (``scoring.importers.metadata``): labels get all three, questions
the category and popularity, and the phase then breaks down by category.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scoring.importers.common import LABELS, QUESTIONS, TRAIN, Conversion, Record, entry, phase_config, view
from scoring.importers.metadata import Metadata, apply_metadata, read_metadata
from scoring.importers.sources import first_seen, read_json_lines, require_keys

QUESTION_KEYS = ("sentence", "entity", "en_wiki_pageid", "entity_mention_loc")
LABEL_WORDS = {"true": True, "false": False}
CONTRAST_VIEWS = [view("Overall", "accuracy", ["group_accuracy"]),
                  view("Contrast consistency", "group_accuracy", ["accuracy"])]


@dataclass
class _Item:
    """One usable CREAK record, in file order."""

    line: int
    source_id: str
    question: Record
    label: bool | None
    explanation: Any = None
    notes: list[str] = field(default_factory=list)
    ungrouped: bool = False  # its pair_id does not name two claims: no group


def convert(source: Path, metadata: Path | None = None) -> Conversion:
    """Convert one CREAK file into questions, labels (or public train data) and a report.

    ``metadata``: an organizer's JSON object id -> {category, popularity, split}.
    """
    records = read_json_lines(source, "CREAK")
    require_keys(records, ("ex_id", "sentence"), "CREAK", name=source.name, unit="line")
    meta = None if metadata is None else read_metadata(metadata)
    conv = Conversion()
    has_labels = any("label" in r for _, r in records)
    public = has_labels and all(str(r["ex_id"]).startswith("train_") for _, r in records)
    items = _items(records, conv, questions_only=not has_labels)
    _note_duplicate_sentences(items)
    _note_contrast_groups(items)
    contrast = any("group" in it.question for it in items)
    if public:
        conv.files[TRAIN] = [_public_record(it) for it in items]
        conv.notes.append("training data (every ex_id starts with train_): wrote train.jsonl "
                          "with labels and explanations for publishing; no hidden labels")
    else:
        conv.files[QUESTIONS] = [it.question for it in items]
    if has_labels and not public:
        conv.files[LABELS] = [_label_record(it) for it in items]
    elif not has_labels:
        conv.notes.append("no record has a label (CREAK never released test labels): "
                          "wrote questions.jsonl and phase.json only, no labels.jsonl")
    if not public:
        conv.phase = phase_config("binary", breakdowns=_metadata(meta, conv), public_fields=list(QUESTION_KEYS),
                                  views=CONTRAST_VIEWS if contrast else None)
    elif meta is not None:
        conv.notes.append(f"{meta.name} not applied: training data is published as released")
    conv.entries.extend(entry("changed" if it.ungrouped else "kept", it.source_id, it.source_id, it.notes,
                              line=it.line) for it in items)
    conv.entries.sort(key=lambda e: e.line or 0)
    return conv


def _items(records: list[tuple[int, Any]], conv: Conversion, *,
           questions_only: bool) -> list[_Item]:
    """Return the usable records in file order; report the skipped ones into ``conv``."""
    first_line: dict[str, int] = {}
    items = []
    for line, record in records:
        ex_id = str(record["ex_id"])
        if ex_id in first_line:
            conv.entries.append(entry("skipped", ex_id, None,
                                      [f"duplicate id (first on line {first_line[ex_id]})"],
                                      line=line))
            continue
        first_line[ex_id] = line
        label = LABEL_WORDS.get(str(record.get("label")).strip().lower())
        if isinstance(record.get("label"), bool):
            label = record["label"]
        if label is None and not questions_only:
            problem = "no label" if "label" not in record else "label is not true/false"
            conv.entries.append(entry("skipped", ex_id, None, [problem], line=line))
            continue
        question: Record = {"id": ex_id}
        question.update((k, record[k]) for k in QUESTION_KEYS if k in record)
        if "pair_id" in record:
            question["group"] = str(record["pair_id"])
        notes = ["no label: question only"] if questions_only else []
        items.append(_Item(line, ex_id, question, label, record.get("explanation"), notes))
    return items


def _metadata(meta: Metadata | None, conv: Conversion) -> list[str]:
    """Add the organizer's metadata to the questions and labels; return the phase's breakdowns."""
    if meta is None:
        return []
    conv.notes.extend(apply_metadata(meta, labels=conv.files.get(LABELS, []), questions=conv.files[QUESTIONS]))
    return ["category"] if any("category" in q for q in conv.files[QUESTIONS]) else []


def _note_duplicate_sentences(items: list[_Item]) -> None:
    """Note on each repeat of a sentence which id first had it (repeats are kept)."""
    first = first_seen([it.question["sentence"] for it in items])
    for position, it in enumerate(items):
        earlier = first[it.question["sentence"]]
        if earlier != position:
            it.notes.append(f"same sentence as {items[earlier].source_id} (kept: ids differ)")


def _note_contrast_groups(items: list[_Item]) -> None:
    """Take the group off claims whose pair_id is not two claims; note pairs of two claims with one label."""
    groups: dict[str, list[_Item]] = defaultdict(list)
    for it in items:
        if "group" in it.question:
            groups[it.question["group"]].append(it)
    for group, members in groups.items():
        ids = ", ".join(m.source_id for m in members)
        if len(members) != 2:
            note = (f"contrast pair {group} has {len(members)} claim(s) ({ids}): not a pair, "
                    "so no group (not counted in contrast consistency; still scored)")
            for m in members:
                del m.question["group"]
                m.ungrouped = True
        elif members[0].label is not None and members[0].label == members[1].label:
            note = f"contrast pair {group} has two claims with the same label ({ids})"
        else:
            continue
        for m in members:
            m.notes.append(note)


def _label_record(it: _Item) -> Record:
    """Return an item's labels.jsonl record: id, label, and the contrast pair as group."""
    record: Record = {"id": it.source_id, "label": it.label}
    if "group" in it.question:
        record["group"] = it.question["group"]
    return record


def _public_record(it: _Item) -> Record:
    """Return an item's train.jsonl record: the question with its label and explanation (public training data)."""
    return {**it.question, "label": it.label, "explanation": it.explanation}
