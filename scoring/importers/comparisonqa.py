"""Import ComparisonQA (one JSON array): each record becomes two multiple-choice items.

``<question_id>-high`` and ``<question_id>-low`` share ``pair`` = question_id (the
same abstract question asked about a popular and an obscure entity). The label is
the answer's letter; ``hypernym`` becomes ``category``; the DBpedia relationship
count becomes a numeric ``popularity``, bucketed by the paper's thresholds in
phase.json: the paper calls an entity high-frequency "above 185" relationships and
low-frequency "below 107", and counts are integers, so ``head_min`` 186 and
``tail_max`` 106 (docs/LONG_TAIL.md). Public questions keep the question text, the options and
the entity URI.

The phase ranks by accuracy; its view shows head and tail accuracy, their gap, the
pair table (both right, head only, tail only, neither) and the paper's own macro-F1
figures as columns: ``avg_macro_f1`` (its "avg Macro F1", the mean of the head and
the tail side over complete pairs) and ``macro_f1_fixed`` of each side (macro-F1
over the four options, an option never seen counting 0), which differ from
Tailboard's ``macro_f1`` (over the options seen, both sides pooled).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scoring.importers.common import LABELS, QUESTIONS, Action, Conversion, Record, entry, phase_config, view
from scoring.importers.sources import read_json_array, require_keys

OPTIONS = ["A", "B", "C", "D"]
HEAD_MIN, TAIL_MAX = 186, 106
SIDES = ("high", "low")


def convert(source: Path) -> Conversion:
    """Convert a ComparisonQA file into questions, labels and a report."""
    records = list(enumerate(read_json_array(source, "ComparisonQA")))
    require_keys(records, ("question_id", "high_question", "low_question"), "ComparisonQA",
                 name=source.name, unit="index")
    conv = Conversion()
    seen: set[str] = set()
    for index, record in records:
        pair = str(record["question_id"])
        if pair in seen:
            conv.entries.append(entry("skipped", pair, None, ["duplicate question_id"],
                                      index=index))
            continue
        seen.add(pair)
        for side in SIDES:
            made = _item(record, pair, side)
            if isinstance(made, str):
                conv.entries.append(entry("skipped", pair, None, [f"{side}: {made}"],
                                          index=index))
                continue
            question, label, notes = made
            conv.files.setdefault(QUESTIONS, []).append(question)
            conv.files.setdefault(LABELS, []).append({
                "id": question["id"], "label": label,
                **{k: question[k] for k in ("category", "popularity", "pair") if k in question},
            })
            action: Action = "kept" if "popularity" in question else "changed"
            conv.entries.append(entry(action, pair, question["id"], notes, index=index))
    conv.files.setdefault(QUESTIONS, [])
    conv.files.setdefault(LABELS, [])
    conv.phase = phase_config("multiple_choice", options=OPTIONS, breakdowns=["category"],
                              public_fields=["question", "options", "entity"],
                              popularity={"head_min": HEAD_MIN, "tail_max": TAIL_MAX},
                              views=_views(conv.files[LABELS]))
    return conv


def _views(labels: list[Record]) -> list[Record] | None:
    """Return the view with head and tail accuracy, their gap, the pair shares and the paper's macro-F1s."""
    counts = [r["popularity"] for r in labels if "popularity" in r]
    head, tail = any(c >= HEAD_MIN for c in counts), any(c <= TAIL_MAX for c in counts)
    sides = [side for side, has in (("head", head), ("tail", tail)) if has]
    columns = [f"popularity.{side}.accuracy" for side in sides]
    if head and tail:
        columns.append("popularity.gap.accuracy")
    if any("pair" in r for r in labels):
        columns += ["pairs.both_correct", "pairs.head_only", "pairs.tail_only", "pairs.neither"]
    if _complete_pair(labels):
        columns.append("avg_macro_f1")
    columns += [f"popularity.{side}.macro_f1_fixed" for side in sides]
    return [view("Overall", "accuracy", columns)] if columns else None


def _complete_pair(labels: list[Record]) -> bool:
    """Return whether some pair has its two items, one in the head bucket and one in the tail bucket."""
    buckets: dict[str, list[str]] = {}
    for r in labels:
        count = r.get("popularity")
        bucket = None if count is None else "head" if count >= HEAD_MIN else "tail" if count <= TAIL_MAX else "torso"
        buckets.setdefault(r["pair"], []).append(str(bucket))
    return any(sorted(found) == ["head", "tail"] for found in buckets.values())


def _item(record: Record, pair: str, side: str) -> tuple[Record, str, list[str]] | str:
    """Return (question, label, notes) for one side of a record, or why it is unusable."""
    block = record[f"{side}_question"]
    if not isinstance(block, dict) or not isinstance(block.get("question"), str):
        return "no question text"
    options = block.get("options")
    if not isinstance(options, dict) or not options or set(options) - set(OPTIONS):
        return f"options are not lettered {', '.join(OPTIONS)}"
    answer = block.get("answer")
    letter = next(iter(answer)) if isinstance(answer, dict) and len(answer) == 1 else None
    if not isinstance(letter, str) or letter not in options:
        return "answer is not one of the option letters"
    notes: list[str] = []
    question: Record = {"id": f"{pair}-{side}", "question": block["question"],
                        "options": options}
    if record.get(f"{side}_entity") is not None:
        question["entity"] = record[f"{side}_entity"]
    if record.get("hypernym") is not None:
        question["category"] = str(record["hypernym"])
    count = _count(record.get(f"{side}_relationshipCount"))
    if count is None:
        notes.append(f"relationship count {record.get(f'{side}_relationshipCount')!r} "
                     "is not a number: no popularity")
    else:
        question["popularity"] = count
        notes += _bucket_note(side, count)
    question["pair"] = pair
    return question, letter, notes


def _count(value: Any) -> int | float | None:
    """Return a relationship count (a number or a numeric string) as a number."""
    if isinstance(value, bool):
        return None
    try:
        number = float(str(value).strip())
    except ValueError:
        return None
    if number != number or number in (float("inf"), float("-inf")):
        return None
    return int(number) if number.is_integer() else number


def _bucket_note(side: str, count: int | float) -> list[str]:
    """Note a count outside its side's bucket (that pair then counts as incomplete)."""
    if side == "high" and count < HEAD_MIN:
        return [f"high entity has {count} relationships, below head_min {HEAD_MIN}"]
    if side == "low" and count > TAIL_MAX:
        return [f"low entity has {count} relationships, above tail_max {TAIL_MAX}"]
    return []
