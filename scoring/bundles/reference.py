"""Reference data of a bundle read as labels: one label per line (ids 1, 2, ... by line), or a table with ids.

A phase's reference data is the truth its scoring program compares predictions with.
Tailboard takes one file of it: the only data file there, or the one the scoring
program names. The file is read as a table when it is JSON, JSON Lines, or a CSV/TSV
whose header names an id column and a label column; otherwise as one label per line,
the form CodaLab's and Codabench's examples use (``numpy.genfromtxt`` reads it).
Labels are kept as text; a number is written as a whole number (``2.0`` and ``2``
are the same class, as numpy reads them), and a label file of other numbers is
refused: Tailboard scores classes, not regression.
"""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from scoring.bundles.files import DATA_LIMIT, Files
from scoring.zips import ArchiveError

ID_COLUMNS = ("id", "item_id", "itemid", "qid", "question_id", "example_id", "sample_id", "uid", "key",
              "filename", "file", "file_name", "image", "image_id", "name", "index")
LABEL_COLUMNS = ("label", "labels", "answer", "gold", "target", "class", "y", "truth", "ground_truth",
                 "solution", "category_label")
HEADERS = frozenset((*LABEL_COLUMNS, "prediction", "predictions"))
_NOT_DATA = re.compile(r"(^|/)(metadata(\.ya?ml)?|readme[^/]*|license[^/]*|[^/]*\.(md|py|html?|pdf|png|jpe?g))$",
                       re.IGNORECASE)
_CELLS = re.compile(r"[\s,;]+")
_NUMBER = re.compile(r"^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$")


class ReferenceProblem(Exception):
    """Why a phase's reference data cannot become a label file; the message completes 'not carried: ...'."""


@dataclass(frozen=True)
class Reference:
    """Labels read from one reference file, in its order, with how they are keyed."""

    source: str  # how the report names the file
    ids: tuple[str, ...]
    labels: tuple[str, ...]  # as text, numbers as whole numbers
    line_ordered: bool
    layout: str  # how the file was read, for the report


def read_reference(files: Files, program_text: str) -> Reference:
    """Return the labels of a phase's reference data, or raise ReferenceProblem saying why there are none."""
    name = _pick(files, program_text)
    try:
        text = files.text(name, limit=DATA_LIMIT)
    except ArchiveError as error:
        raise ReferenceProblem(str(error)) from None
    source = files.label(name)
    stripped = text.lstrip()
    if stripped.startswith(("[", "{")):
        ids, labels, layout = _from_json(text, source)
        return Reference(source, ids, labels, False, layout)
    table = _from_table(text, source)
    if table is not None:
        ids, labels, layout = table
        return Reference(source, ids, labels, False, layout)
    labels = _from_lines(text, source)
    ids = tuple(str(n) for n in range(1, len(labels) + 1))
    header = text.lstrip().split("\n", 1)[0].strip()
    layout = f"one label per line after the header {header!r}" if header.lower() in HEADERS else "one label per line"
    return Reference(source, ids, labels, True, layout)


def _pick(files: Files, program_text: str) -> str:
    """Return the one data file of the reference data, or the one the scoring program names."""
    names = [n for n in files.names() if not _NOT_DATA.search(n)]
    if len(names) == 1:
        return names[0]
    if not names:
        raise ReferenceProblem(f"the reference data {files.shown} holds no data file")
    named = [n for n in names if re.search(rf"\b{re.escape(PurePosixPath(n).name)}\b", program_text)]
    if len(named) == 1:
        return named[0]
    listed = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
    raise ReferenceProblem(f"the reference data {files.shown} holds {len(names)} files ({listed}) and the scoring "
                           "program does not name one of them; Tailboard takes one label file per phase")


def _from_lines(text: str, source: str) -> tuple[str, ...]:
    """Return the labels of a file of one label per line (blank lines at the end ignored)."""
    lines = [line.strip() for line in text.split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    first = 2 if lines and lines[0].lower() in HEADERS else 1  # a one-column CSV's header ('label')
    lines = lines[first - 1:]
    if not lines:
        raise ReferenceProblem(f"{source} is empty")
    labels = []
    for number, line in enumerate(lines, start=first):
        if not line:
            raise ReferenceProblem(f"{source} line {number} is blank: a file of one label per line cannot skip one")
        cells = _CELLS.split(line)
        if len(cells) > 1 and all(_NUMBER.match(cell) for cell in cells):
            raise ReferenceProblem(f"{source} line {number} holds {len(cells)} numbers, not one label "
                                   "(scores or one-hot rows are not labels Tailboard scores)")
        labels.append(_label(line, source, number))
    return tuple(labels)


def _from_table(text: str, source: str) -> tuple[tuple[str, ...], tuple[str, ...], str] | None:
    """Return ids and labels of a CSV or TSV file whose header names both columns; None when it has no header."""
    first = text.split("\n", 1)[0]
    delimiter = "\t" if "\t" in first else ";" if ";" in first and "," not in first else ","
    rows = [row for row in csv.reader(text.splitlines(), delimiter=delimiter) if any(cell.strip() for cell in row)]
    header = [cell.strip().lower() for cell in rows[0]] if rows else []
    if len(header) < 2:
        return None
    id_at, label_at = _columns(header)
    if id_at is None or label_at is None:
        if id_at is None and label_at is None and not any(not _NUMBER.match(cell) for cell in header):
            return None  # numbers: data, not a header
        raise ReferenceProblem(f"{source} has the columns {', '.join(rows[0])}; Tailboard needs an id column "
                               f"({', '.join(ID_COLUMNS[:4])}, ...) and a label column "
                               f"({', '.join(LABEL_COLUMNS[:4])}, ...)")
    ids, labels = [], []
    for number, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            raise ReferenceProblem(f"{source} row {number} has {len(row)} fields but the header has {len(header)}")
        ids.append(row[id_at].strip())
        labels.append(_label(row[label_at], source, number))
    kind = "TSV" if delimiter == "\t" else "CSV"
    return _checked_ids(ids, source), tuple(labels), (f"{kind} with the id column {rows[0][id_at].strip()!r} "
                                                      f"and the label column {rows[0][label_at].strip()!r}")


def _columns(header: list[str]) -> tuple[int | None, int | None]:
    """Return the positions of the id and label columns of a header (the other one when two columns)."""
    id_at = next((header.index(name) for name in ID_COLUMNS if name in header), None)
    label_at = next((header.index(name) for name in LABEL_COLUMNS if name in header), None)
    if len(header) == 2 and (id_at is None) != (label_at is None):
        id_at = 1 - label_at if id_at is None and label_at is not None else id_at
        label_at = 1 - id_at if label_at is None and id_at is not None else label_at
    return id_at, label_at


def _from_json(text: str, source: str) -> tuple[tuple[str, ...], tuple[str, ...], str]:
    """Return ids and labels of a JSON list of objects, a JSON object of id -> label, or JSON Lines."""
    try:
        value: Any = json.loads(text)
    except json.JSONDecodeError:
        value = _json_lines(text, source)
    except RecursionError:
        raise ReferenceProblem(f"{source} is nested too deeply") from None
    if isinstance(value, dict):
        if not all(not isinstance(v, (dict, list)) for v in value.values()):
            raise ReferenceProblem(f"{source} is a JSON object whose values are not labels")
        labels = tuple(_label(v, source, n) for n, v in enumerate(value.values(), start=1))
        return _checked_ids(list(value), source), labels, "JSON object of id -> label"
    if not isinstance(value, list) or not value or not all(isinstance(r, dict) for r in value):
        raise ReferenceProblem(f"{source} is JSON but neither a list of objects nor an object of id -> label")
    header = [str(key).lower() for key in value[0]]
    keys = list(value[0])
    id_at, label_at = _columns(header)
    if id_at is None or label_at is None:
        raise ReferenceProblem(f"{source} has the keys {', '.join(map(str, keys))}; Tailboard needs an id key and a "
                               "label key")
    id_key, label_key = keys[id_at], keys[label_at]
    missing = next((n for n, r in enumerate(value, start=1) if id_key not in r or label_key not in r), None)
    if missing is not None:
        raise ReferenceProblem(f"{source} record {missing} lacks {id_key!r} or {label_key!r}")
    ids = [_id_text(r[id_key], source, n) for n, r in enumerate(value, start=1)]
    labels = tuple(_label(r[label_key], source, n) for n, r in enumerate(value, start=1))
    return _checked_ids(ids, source), labels, f"JSON records with the id key {id_key!r} and the label key {label_key!r}"


def _json_lines(text: str, source: str) -> list[Any]:
    """Return the values of a JSON Lines file, or raise naming its first line that is not JSON."""
    values = []
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            try:
                values.append(json.loads(line))
            except (json.JSONDecodeError, RecursionError):
                raise ReferenceProblem(f"{source} line {number} is not valid JSON") from None
    return values


def _id_text(value: object, source: str, number: int) -> str:
    """Return an id as text: strings and whole numbers only."""
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return str(value).strip()
    raise ReferenceProblem(f"{source} record {number} has an id that is not a string or a number")


def _checked_ids(ids: list[str], source: str) -> tuple[str, ...]:
    """Return the ids, or raise naming an empty or repeated one."""
    first: dict[str, int] = {}
    for number, id_ in enumerate(ids, start=1):
        if not id_:
            raise ReferenceProblem(f"{source} item {number} has an empty id")
        if id_ in first:
            raise ReferenceProblem(f"{source}: the id {id_!r} appears twice (items {first[id_]} and {number})")
        first[id_] = number
    return tuple(ids)


def _label(value: object, source: str, number: int) -> str:
    """Return a label as text, a number as a whole number; raise for a missing label or a fraction."""
    if isinstance(value, bool):
        return "true" if value else "false"
    text = str(value).strip() if isinstance(value, (str, int, float)) else ""
    if not text:
        raise ReferenceProblem(f"{source} item {number} has no label")
    if _NUMBER.match(text):
        number_value = float(text)
        if not number_value.is_integer():
            raise ReferenceProblem(f"{source} item {number} is the number {text}, not a class: Tailboard scores "
                                   "classes (binary or multiple choice), not regression")
        return str(int(number_value))
    return text
