"""CoLoTa's popular originals (``baselines/data/*-original.csv``) as head items.

The paper compares each task's 150 originals (popular entities, from StrategyQA and
CREAK) with the long-tail JSON records. ``--originals`` adds them as head items with
ids ``orig-<ID>`` (no clash with ``S…``/``C…``) and ``original`` = their own id;
``--modified`` links the long-tail records to them (``scoring.importers.colota.linkage``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from scoring.importers.colota.linkage import link
from scoring.importers.colota.records import ColotaItem
from scoring.importers.common import ReportEntry, SourceFormatError, entry
from scoring.importers.sources import read_csv_rows

ORIGINAL_PREFIX = "orig-"
ANSWERS = {"true": True, "false": False}


@dataclass(frozen=True)
class Original:
    """One row of an originals CSV."""

    line: int
    id: str
    text: str
    answer: str


def add_originals(items: list[ColotaItem], n_records: int, originals: Path,
                  modified: Path | None) -> tuple[list[ColotaItem], list[ReportEntry], list[str]]:
    """Return the head items and their report entries; link ``items`` when asked."""
    rows = read_originals(originals)
    _check_same_task(items, rows, originals)
    head, entries = [], []
    for row in rows:
        label = ANSWERS.get(row.answer.strip().lower())
        where = {"line": row.line, "file": originals.name}
        if label is None:
            reason = "blank answer" if not row.answer.strip() else "answer is not TRUE/FALSE"
            entries.append(entry("skipped", row.id, None, [reason], **where))
            continue
        item_id = ORIGINAL_PREFIX + row.id
        question = {"id": item_id, "query": row.text, "popularity": "head"}
        head.append(ColotaItem(-1, row.id, question, label, original=row.id))
        entries.append(entry("kept", row.id, item_id, None, **where))
    notes = [f"added {len(head)} popular originals from {originals.name} as head items "
             f"(ids {ORIGINAL_PREFIX}<ID>)"]
    if modified is None:
        notes.append("records not linked to their originals: pass --modified "
                     "(the matching *-modified.csv) to link them")
    else:
        notes += link(items, n_records, [r.id for r in rows], modified)
    return head, entries, notes


def read_originals(path: Path) -> list[Original]:
    """Return the data rows of an originals CSV (columns ID, the question, Answer)."""
    rows = read_csv_rows(path)
    header = [h.strip().lower() for h in rows[0][1]] if rows else []
    if "id" not in header or "answer" not in header:
        raise SourceFormatError(f"{path.name} is not a CoLoTa originals CSV: its header "
                                "needs the columns ID and Answer")
    id_col, answer_col = header.index("id"), header.index("answer")
    text_cols = [i for i, h in enumerate(header) if h and i not in (id_col, answer_col)]
    if not text_cols:
        raise SourceFormatError(f"{path.name} has no question column beside ID and Answer")
    out = []
    for line, row in rows[1:]:
        cells = row + [""] * (len(header) - len(row))
        if not any(c.strip() for c in cells):
            continue
        if not cells[id_col].strip():
            raise SourceFormatError(f"{path.name} line {line} has no ID")
        out.append(Original(line, cells[id_col].strip(), cells[text_cols[0]].strip(),
                            cells[answer_col]))
    if len({o.id for o in out}) != len(out):
        raise SourceFormatError(f"{path.name} repeats an ID")
    return out


def _check_same_task(items: list[ColotaItem], rows: list[Original], path: Path) -> None:
    """Refuse an originals CSV of the other task (QA ids start with S, CV ids with C)."""
    ours = {it.source_id[:1] for it in items}
    theirs = {row.id[:1] for row in rows}
    if not ours & theirs:
        raise SourceFormatError(f"{path.name} has ids {'/'.join(sorted(theirs))}…, but SOURCE "
                                f"has ids {'/'.join(sorted(ours))}…: originals of the other task")
