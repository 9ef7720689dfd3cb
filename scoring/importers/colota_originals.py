"""CoLoTa's popular originals (``baselines/data/*-original.csv``) and their linkage.

The paper compares each task's 150 originals (popular entities, from StrategyQA and
CREAK) with the long-tail JSON records. ``--originals`` adds them as head items with
ids ``orig-<ID>`` (no clash with ``S…``/``C…``) and ``original`` = their own id.

Linkage (``--modified``): the CV JSON cycles through the originals in order, record
i (0-based array index) being a variant of original number ``i mod n``. A position is
trusted only where the authors' modified CSV agrees: its rows come in groups headed
by the original's id, and a record is linked when its query is a row of that group
or, failing an exact match, when the closest rows (word overlap of the query
without its entity names) lie in that group.
The rule is taken to hold for a file only when at least 90% of its records match
exactly; otherwise nothing is linked. For QA it does not hold (QA-modified.csv has a
broken header, ids inside groups and blank rows; about 8% agree), so QA items carry
no ``original`` and the report says so.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from scoring.importers.common import (
    ReportEntry, SourceFormatError, entry, read_text,
)

if TYPE_CHECKING:
    from scoring.importers.colota import ColotaItem

ORIGINAL_PREFIX = "orig-"
EXACT_SHARE = 0.9
ANSWERS = {"true": True, "false": False}
WORD = re.compile(r"\w+")


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
    from scoring.importers.colota import ColotaItem

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
    rows = _read_csv(path)
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


def link(items: list[ColotaItem], n_records: int, order: list[str], modified: Path) -> list[str]:
    """Set ``original`` on the items the modified CSV confirms; return notes."""
    rows = read_modified(modified)
    groups_of: dict[str, set[str]] = {}
    for group, text in rows:
        groups_of.setdefault(text, set()).add(group)
    expected = {it.index: order[it.index % len(order)] for it in items}
    exact = [it for it in items
             if expected[it.index] in groups_of.get(_norm(it.question["query"]), ())]
    if len(exact) < EXACT_SHARE * len(items):
        return [f"records not linked to originals: the positional rule (index i -> original "
                f"i mod {len(order)}) agrees with {modified.name} for only {len(exact)} of "
                f"{len(items)} records"]
    for it in exact:
        it.original = expected[it.index]
    near = 0
    for it in items:
        if it.original is None:
            near += _link_closest(it, expected[it.index], rows, modified.name)
    notes = [f"linked {len(exact) + near} of {len(items)} records to their originals "
             f"(record i -> original i mod {len(order)}): {len(exact)} by exact text in "
             f"{modified.name}, {near} by closest text"]
    if n_records % len(order):
        notes.append(f"{n_records} records is not a multiple of {len(order)} originals")
    return notes


def _link_closest(it: ColotaItem, expected: str, rows: list[tuple[str, str]], name: str) -> int:
    """Link ``it`` when its closest modified row is in the expected group; return 1 if so.

    Closeness is the Jaccard overlap of word sets, leaving the record's own entity
    names out of its query: variants of one original share the claim, not the entity.
    """
    entities = set().union(*(_words(e) for e in it.question.get("kg_entities", {})))
    query = _words(it.question["query"]) - entities
    best: dict[str, float] = {}
    for group, text in rows:
        words = _words(text)
        score = len(query & words) / max(1, len(query | words))
        best[group] = max(score, best.get(group, 0.0))
    top = max(best.values())
    if best.get(expected) == top:
        it.original = expected
        it.notes.append(f"original {expected} by position; query is not in {name}, its "
                        f"closest rows (word overlap {top:.2f}) are in {expected}'s group")
        return 1
    rival = next(g for g, score in best.items() if score == top)
    it.notes.append(f"not linked to an original: position says {expected}, but the closest "
                    f"row of {name} (word overlap {top:.2f}) is in {rival}'s group")
    return 0


def read_modified(path: Path) -> list[tuple[str, str]]:
    """Return (group id, normalized question) for every row of a modified CSV.

    The first row is a header (QA's is broken, so it is not checked); a row with an
    id starts a group, rows with a blank id belong to the group above, blank rows are
    ignored.
    """
    out, group = [], None
    for line, row in _read_csv(path)[1:]:
        if len(row) < 2 or not any(c.strip() for c in row):
            continue
        group = row[0].strip() or group
        if group is None:
            raise SourceFormatError(f"{path.name} line {line} belongs to no original (no ID above)")
        out.append((group, _norm(row[1])))
    if not out:
        raise SourceFormatError(f"{path.name} has no rows")
    return out


def _check_same_task(items: list[ColotaItem], rows: list[Original], path: Path) -> None:
    ours = {it.source_id[:1] for it in items}
    theirs = {row.id[:1] for row in rows}
    if not ours & theirs:
        raise SourceFormatError(f"{path.name} has ids {'/'.join(sorted(theirs))}…, but SOURCE "
                                f"has ids {'/'.join(sorted(ours))}…: originals of the other task")


def _read_csv(path: Path) -> list[tuple[int, list[str]]]:
    """Return (1-based starting line, cells) for every CSV record."""
    reader = csv.reader(io.StringIO(read_text(path), newline=""))
    out = []
    try:
        while True:
            start = reader.line_num + 1
            out.append((start, next(reader)))
    except StopIteration:
        return out
    except csv.Error as exc:
        raise SourceFormatError(f"{path.name} is not CSV: {exc}") from exc


def _norm(text: str) -> str:
    return " ".join(text.split())


def _words(text: str) -> set[str]:
    return set(WORD.findall(text.lower()))
