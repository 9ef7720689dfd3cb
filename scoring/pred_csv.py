"""CSV prediction files: the header rules, a vectorized reader and an exact reader.

The vectorized reader (pyarrow) gives no line numbers; it is tried first and gives
up (returns None) on anything unusual. The exact reader (the csv module) is the
reference: it tracks the line each row starts on and logs structural problems.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from scoring.formats import file_error
from scoring.pred_rows import ProblemLog, Rows, shown
from scoring.tokens import TRIM_CHARS
from scoring.types import PredictionFileError, Problem

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")
_MAX_COLUMNS = 64  # past three columns the header is wrong anyway; the exact reader says how
_AS_STRINGS = pacsv.ConvertOptions(
    column_types={f"f{i}": pa.string() for i in range(_MAX_COLUMNS)},
    strings_can_be_null=False,
    quoted_strings_can_be_null=False,
)
_COLUMNS_HINT = "the header must be id,prediction or id,prediction,confidence"


@dataclass(frozen=True)
class Columns:
    """Where the id, prediction and optional confidence columns are, and how many there are."""

    id: int
    prediction: int
    confidence: int | None
    width: int


def check_header(names: Sequence[str]) -> Columns:
    """Return the column positions of a CSV header, or raise its whole-file problems."""
    messages: list[str] = []
    where: dict[str, int] = {}
    for index, raw in enumerate(names):
        name = raw.strip(TRIM_CHARS).lower()
        if not name:
            messages.append(f"Column {index + 1} of the header has no name; {_COLUMNS_HINT}.")
        elif name not in ("id", "prediction", "confidence"):
            messages.append(f"Unknown column {shown(raw.strip(TRIM_CHARS))}: {_COLUMNS_HINT}.")
        elif name in where:
            messages.append(f"Column '{name}' appears twice in the header.")
        else:
            where[name] = index
    for name in ("id", "prediction"):
        if name not in where:
            messages.append(f"Missing column '{name}': {_COLUMNS_HINT} (on the first line).")
    if messages:
        problems = [Problem(line=None, id=None, message=m) for m in messages]
        raise PredictionFileError(problems, len(problems))
    return Columns(where["id"], where["prediction"], where.get("confidence"), len(names))


def read_csv_fast(data: bytes) -> Rows | None:
    """Read CSV bytes with pyarrow, or return None when only the exact reader can tell."""
    try:
        table = pacsv.read_csv(
            io.BytesIO(data),
            read_options=pacsv.ReadOptions(autogenerate_column_names=True),
            parse_options=pacsv.ParseOptions(newlines_in_values=True),
            convert_options=_AS_STRINGS,
        )
        if table.num_rows < 2 or table.num_columns > _MAX_COLUMNS:
            return None
        columns = check_header([table.column(i)[0].as_py() for i in range(table.num_columns)])
    except (pa.ArrowException, PredictionFileError):
        return None
    body = table.slice(1)

    def column(index: int) -> pa.Array:
        return body.column(index).combine_chunks()

    confidence = None if columns.confidence is None else column(columns.confidence)
    ids = pc.utf8_trim(column(columns.id), characters=TRIM_CHARS)
    return Rows(ids=ids, values=column(columns.prediction), confidences=confidence, lines=None)


def read_csv_exact(text: str) -> Rows:
    """Read CSV text row by row, noting the line each row starts on and its problems."""
    reader = csv.reader(match.group() for match in _LINE.finditer(text))
    columns: Columns | None = None
    lines: list[int] = []
    cells: list[tuple[str | None, str | None, str | None]] = []
    log, previous = ProblemLog(), 0
    try:
        for row in reader:
            start, previous = previous + 1, reader.line_num
            if all(not cell.strip(TRIM_CHARS) for cell in row):
                continue  # blank lines, and rows of empty cells that spreadsheets leave behind
            if columns is None:
                columns = check_header(row)
                continue
            lines.append(start)
            cells.append(_cells(row, columns, start, log))
    except csv.Error as exc:
        log.add(previous + 1, None, f"This line cannot be read as CSV: {exc}.")
    if not lines and not log.count:
        detail = "it holds no predictions" if columns is None else "it has a header but no rows"
        raise file_error(f"The file is empty: {detail}.")
    ids, values, confidences = zip(*cells) if cells else ((), (), ())
    return Rows(
        ids=pa.array(ids, type=pa.string()),
        values=pa.array(values, type=pa.string()),
        confidences=None if columns is None or columns.confidence is None
        else pa.array(confidences, type=pa.string()),
        lines=np.array(lines, dtype=np.int64),
        log=log,
    )


def _cells(
    row: list[str], columns: Columns, line: int, log: ProblemLog
) -> tuple[str | None, str | None, str | None]:
    """Return one row's id (trimmed), prediction and confidence, logging a wrong width."""
    id_ = row[columns.id].strip(TRIM_CHARS) if columns.id < len(row) else ""
    if len(row) != columns.width:
        log.add(line, id_ or None,
                f"This row has {len(row)} fields but the header has {columns.width} columns.")
        return id_ or None, None, None
    confidence = None if columns.confidence is None else row[columns.confidence]
    return id_, row[columns.prediction], confidence
