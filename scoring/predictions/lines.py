"""Line-ordered prediction files: one value per line, line N answering the label file's item N.

Rules: docs/FORMATS.md, Line-ordered files.
A phase whose config says ``"prediction_format": "lines"`` (the phases imported from
CodaLab and Codabench bundles, ``scoring.bundles``) also takes the files those platforms
score: no header, no ids. The formats with ids are still read as usual; a file is
line-ordered when it is none of them: it does not start with a JSON object or list, and
its first non-blank line is no CSV header (two cells or more, one named ``id`` or
``prediction``). A
phase in the default ``"ids"`` mode never reads a file this way, so a one-column CSV
there is refused for its missing id column, as before.

A blank line abstains; blank lines at the end of the file are ignored. The file must
have exactly one line per item: any other count is a problem of the whole file. One
exception: a file with one line more than there are items, whose first line is no
answer, starts with a header (a scoring program reading it with pandas wrote one),
and that line is skipped.
"""

from __future__ import annotations

import csv
import re

import numpy as np
import pyarrow as pa

from scoring.predictions.formats import Document
from scoring.predictions.rows import ProblemLog, Rows
from scoring.predictions.tokens import TRIM_CHARS, TokenTable, normalize, whole_number

_HEADER_NAMES = frozenset({"id", "prediction"})
_NOT_BLANK = re.compile(rb"[^ \t\r\n\x0b\x0c]")


def is_line_ordered(document: Document) -> bool:
    """Return whether a file of a lines phase holds bare values rather than one of the formats with ids."""
    start = _NOT_BLANK.search(document.data)
    if document.kind == "jsonl" or start is None or document.data[start.start()] in b"[{":
        return False
    if document.kind == "json":
        return True  # one line holding a JSON scalar: the file of a one-item phase
    end = document.data.find(b"\n", start.start())
    first = document.data[start.start(): None if end < 0 else end].decode("utf-8")
    try:
        cells = next(csv.reader([first]), [])
    except csv.Error:
        return True
    return len(cells) < 2 or not any(normalize(cell) in _HEADER_NAMES for cell in cells)


def read_lines(text: str, ids: pa.Array, tokens: TokenTable) -> Rows:
    """Return the rows of a line-ordered file: line i answers item i of ids; a wrong line count is logged."""
    lines = text.split("\n")
    while lines and not lines[-1].strip(TRIM_CHARS):
        lines.pop()
    expected, first = len(ids), 1
    if len(lines) == expected + 1 and not _answer(lines[0], tokens):
        lines, first = lines[1:], 2  # a header
    found = len(lines)
    log = ProblemLog()
    if found != expected:
        log.add(None, None, f"The file has {found:,} line{'s' if found != 1 else ''}; this phase expects "
                            f"{expected:,}: one prediction per line, in the order of its items, with no header "
                            "and no ids.")
    values: list[str | None] = [line.removesuffix("\r") for line in lines[:expected]]
    values += [None] * (expected - len(values))  # items past the end: no value, already counted in the log
    return Rows(ids=ids, values=pa.array(values, type=pa.string()), confidences=None,
                lines=np.arange(first, first + expected, dtype=np.int64), log=log)


def _answer(line: str, tokens: TokenTable) -> bool:
    """Return whether a line holds an answer or an abstention of the phase (so it is no header)."""
    value = normalize(line)
    if tokens.whole_numbers:
        value = whole_number(value)
    return value in set(tokens.keys.to_pylist())
