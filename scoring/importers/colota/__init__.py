"""Import CoLoTa's ``CoLoTa_qa.json`` / ``CoLoTa_cv.json`` (one JSON array each).

Every JSON record is a long-tail item (popularity ``tail``); ``reasoning_strategy``
becomes ``category`` (a list). Public questions keep ``query`` and ``kg_entities``
(entity names with their Wikidata ids, which name what the query mentions) and drop
``kg_triples``, ``inference_rule`` and ``reasoning_steps``: the triples state the
facts the answer is derived from ("(Sablé, animal breed, dachshund)"), so they are
treated as answer-revealing. ``--originals`` adds the popular originals as head
items (``originals``), linked to their long-tail variants when asked (``linkage``).

The phase ranks by ``popularity.tail.accuracy`` (docs/METRICS.md, Metric paths). With the originals it has
a ``Long tail`` view (tail accuracy, with head accuracy, head and tail answer rate and
the head - tail gap as columns: the paper's original-versus-modified comparison) and an
``Overall`` view (accuracy with answer rate and selective accuracy).
"""

from __future__ import annotations

from pathlib import Path

from scoring.importers.colota.originals import add_originals
from scoring.importers.colota.records import ColotaItem, label_record, report_entry, usable_items
from scoring.importers.common import (
    LABELS,
    QUESTIONS,
    Conversion,
    ImportUsageError,
    Record,
    ReportEntry,
    phase_config,
    view,
)
from scoring.importers.sources import read_json_array, require_keys

__all__ = ["convert"]

TAIL_ACCURACY = "popularity.tail.accuracy"


def convert(source: Path, *, originals: Path | None = None,
            modified: Path | None = None) -> Conversion:
    """Convert one CoLoTa JSON file (plus optional originals) into phase files."""
    if modified is not None and originals is None:
        raise ImportUsageError("--modified needs --originals (it links records to originals)")
    records = list(enumerate(read_json_array(source, "CoLoTa")))
    require_keys(records, ("id", "query", "answer"), "CoLoTa", name=source.name, unit="index")
    conv = Conversion()
    items, skipped = usable_items(records)
    head: list[ColotaItem] = []
    head_entries: list[ReportEntry] = []
    if originals is not None:
        head, head_entries, notes = add_originals(
            items, len(records), originals, modified)
        conv.notes += notes
    conv.entries = sorted(skipped + [report_entry(it) for it in items], key=lambda e: e.index or 0)
    conv.entries += head_entries
    everything = items + head
    conv.files[QUESTIONS] = [it.question for it in everything]
    conv.files[LABELS] = [label_record(it) for it in everything]
    conv.phase = phase_config("binary", breakdowns=["category"], public_fields=["query", "kg_entities"],
                              primary_metric=TAIL_ACCURACY, views=_views(with_head=bool(head)))
    if any(it.original for it in items):
        conv.notes.append('labels.jsonl links items to their originals in the field '
                          '"original"; add "original" to breakdowns in phase.json to use it')
    return conv


def _views(*, with_head: bool) -> list[Record]:
    """Return the Long tail view (with the head columns when originals are in) and the Overall view."""
    if not with_head:
        return [view("Long tail", TAIL_ACCURACY, ["popularity.tail.answer_rate", "selective_accuracy"])]
    return [view("Long tail", TAIL_ACCURACY, ["popularity.head.accuracy", "popularity.head.answer_rate",
                                              "popularity.tail.answer_rate", "popularity.gap.accuracy"]),
            view("Overall", "accuracy", ["answer_rate", "selective_accuracy"])]
