"""Import one TG-CSR context file: ``jsonl/<context>-<mc|tf>[-gt].jsonl``.

One line per (question, candidate answer) pair; an item's id is
``<questionID>-<answerID>`` (answer ids repeat across questions), its ``group`` the
question (all candidates of a question right together), its ``category`` the
Gordon–Hobbs area. The task is binary for both mc and tf files: is this candidate
a right answer. The label is the majority of the non-missing annotator votes
(``labels``), a tie counting as yes; ``-gt`` files carry each annotator's
leave-one-out label in ``gt`` instead, and the same majority rule applies to those
(on the released files it gives the same labels). The files hold bare ``NaN``
tokens, which are read as missing votes. ``agreement`` (unanimous, majority, tie)
goes into labels.jsonl as an extra breakdown field.

Like the paper, the phase ranks by ``f1`` (positive class: a right candidate) and its
one view shows accuracy, group accuracy (every candidate of a question right) and the
F1 of each Gordon–Hobbs category as columns.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scoring.importers.common import LABELS, QUESTIONS, Conversion, Record, entry, phase_config, view
from scoring.importers.sources import read_json_lines, require_keys

VOTE_KEYS = ("labels", "gt")
CATEGORY_COLUMNS = 10  # with accuracy and group accuracy: the 12 columns a view may have


def convert(source: Path) -> Conversion:
    """Convert one TG-CSR annotation file into questions, labels and a report."""
    records = read_json_lines(source, "TG-CSR", parse_constant=_constant)
    require_keys(records, ("questionID", "answerID"), "TG-CSR", name=source.name, unit="line")
    conv = Conversion()
    first_line: dict[str, int] = {}
    questions, labels = [], []
    for line, record in records:
        source_id = f"{record['questionID']}-{record['answerID']}"
        if source_id in first_line:
            reason = f"duplicate id (first on line {first_line[source_id]})"
            conv.entries.append(entry("skipped", source_id, None, [reason], line=line))
            continue
        first_line[source_id] = line
        label, agreement, notes = _vote(record)
        if label is None:
            conv.entries.append(entry("skipped", source_id, None, notes, line=line))
            continue
        question: Record = {"id": source_id, "questionID": str(record["questionID"]),
                            "answerID": str(record["answerID"])}
        if record.get("category") is not None:
            question["category"] = str(record["category"])
        question["group"] = str(record["questionID"])
        questions.append(question)
        label_record: Record = {"id": source_id, "label": label}
        label_record.update((k, question[k]) for k in ("category", "group") if k in question)
        label_record["agreement"] = agreement
        labels.append(label_record)
        conv.entries.append(entry("kept", source_id, source_id, notes, line=line))
    conv.files[QUESTIONS] = questions
    conv.files[LABELS] = labels
    conv.phase = phase_config("binary", breakdowns=["category"], public_fields=["questionID", "answerID"],
                              primary_metric="f1", views=_views(labels, conv))
    return conv


def _views(labels: list[Record], conv: Conversion) -> list[Record]:
    """Return the one view: F1, with accuracy, group accuracy and each category's F1 as columns."""
    categories = sorted({r["category"] for r in labels if "category" in r})
    if len(categories) > CATEGORY_COLUMNS:
        conv.notes.append(f"{len(categories)} categories: the view shows the F1 of the first "
                          f"{CATEGORY_COLUMNS}; the breakdown table shows them all")
    per_category = [f"breakdowns.category.{c}.f1" for c in categories[:CATEGORY_COLUMNS]]
    columns = ["accuracy", "group_accuracy"] if labels else []
    return [view("Overall", "f1", columns + per_category)]


def _vote(record: Record) -> tuple[bool | None, str | None, list[str]]:
    """Return (label, agreement, notes) from a record's votes; label None when unusable."""
    key = next((k for k in VOTE_KEYS if k in record), None)
    if key is None or not isinstance(record[key], list):
        return None, None, ["no annotations (neither a labels nor a gt list)"]
    votes: list[int] = []
    missing = 0
    for vote in record[key]:
        value = vote.get("label") if isinstance(vote, dict) else vote
        if value is None:
            missing += 1
        elif value in (0, 1) and not isinstance(value, str):
            votes.append(int(value))
        else:
            who = vote.get("annotatorID", "?") if isinstance(vote, dict) else "?"
            return None, None, [f"vote of annotator {who} is {value!r}, not 0, 1 or NaN"]
    if not votes:
        return None, None, [f"no usable vote ({missing} missing)"]
    yes, total = sum(votes), len(votes)
    notes = [f"{missing} of {missing + total} votes missing"] if missing else []
    if 2 * yes == total:
        notes.append(f"tie in {key} ({yes} of {total} yes) counted as yes")
        return True, "tie", notes
    agreement = "unanimous" if yes in (0, total) else "majority"
    return 2 * yes > total, agreement, notes


def _constant(token: str) -> Any:
    """Read bare NaN as a missing vote; Infinity stays a number, which no vote is."""
    return None if token == "NaN" else float(token)
