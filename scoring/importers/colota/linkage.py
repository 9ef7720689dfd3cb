"""Which long-tail CoLoTa record is a variant of which popular original (``--modified``).

The CV JSON cycles through the originals in order, record i (0-based array index)
being a variant of original number ``i mod n``. A position is trusted only where the
authors' modified CSV agrees: its rows come in groups headed by the original's id, and
a record is linked when its query is a row of that group or, failing an exact match,
when the closest rows (word overlap of the query without its entity names) lie in
that group. The rule is taken to hold for a file only when at least 90% of its
records match exactly; otherwise nothing is linked. For QA it does not hold
(QA-modified.csv has a broken header, ids inside groups and blank rows; about 8%
agree), so QA items carry no ``original`` and the report says so.
"""

from __future__ import annotations

import re
from pathlib import Path

from scoring.importers.colota.records import ColotaItem
from scoring.importers.common import SourceFormatError
from scoring.importers.sources import read_csv_rows

EXACT_SHARE = 0.9
WORD = re.compile(r"\w+")


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
    for line, row in read_csv_rows(path)[1:]:
        if len(row) < 2 or not any(c.strip() for c in row):
            continue
        group = row[0].strip() or group
        if group is None:
            raise SourceFormatError(f"{path.name} line {line} belongs to no original (no ID above)")
        out.append((group, _norm(row[1])))
    if not out:
        raise SourceFormatError(f"{path.name} has no rows")
    return out


def _norm(text: str) -> str:
    """Return text with runs of whitespace as one space."""
    return " ".join(text.split())


def _words(text: str) -> set[str]:
    """Return the lower-cased words of a text."""
    return set(WORD.findall(text.lower()))
