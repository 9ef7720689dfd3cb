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

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from scoring.predictions.formats import file_error
from scoring.predictions.rows import ProblemLog, Rows, collected_rows, shown
from scoring.predictions.tokens import TRIM_CHARS
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
class CsvLayout:
    """Where a CSV header puts the id, prediction and optional confidence columns, and how many there are."""

    id: int
    prediction: int
    confidence: int | None
    width: int


def check_header(names: Sequence[str], *, line: int = 1) -> CsvLayout:
    """Return the column positions of a CSV header, or raise its problems, all on the header's line.

    docs/FORMATS.md, Validation problems: a CSV header is line 1 (later only when blank lines come first).
    """
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
        problems = [Problem(line=line, id=None, message=m) for m in messages]
        raise PredictionFileError(problems, len(problems))
    return CsvLayout(where["id"], where["prediction"], where.get("confidence"), len(names))


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
        layout = check_header([table.column(i)[0].as_py() for i in range(table.num_columns)])
    except (pa.ArrowException, PredictionFileError):
        return None
    body = [column.combine_chunks() for column in table.slice(1).columns]
    confidence = None if layout.confidence is None else body[layout.confidence]
    ids = pc.utf8_trim(body[layout.id], characters=TRIM_CHARS)
    return Rows(ids=ids, values=body[layout.prediction], confidences=confidence, lines=None)


def read_csv_exact(text: str) -> Rows:
    """Read CSV text row by row, noting the line each row starts on and its problems."""
    reader = csv.reader(match.group() for match in _LINE.finditer(text))
    table = _Table()
    previous = 0
    try:
        for row in reader:
            start, previous = previous + 1, reader.line_num
            layout = table.layout
            if layout and len(row) == layout.width and row[layout.id].strip(TRIM_CHARS):
                table.lines.append(start)  # the common case, kept inline for speed
                table.ids.append(row[layout.id].strip(TRIM_CHARS))
                table.values.append(row[layout.prediction])
                if layout.confidence is not None:
                    table.confidences.append(row[layout.confidence])
            else:
                table.add_unusual(row, start)
    except csv.Error as exc:
        table.log.add(previous + 1, None, f"This line cannot be read as CSV: {exc}.")
    return table.rows()


class _Table:
    """Columns of a CSV file being read by the exact reader."""

    def __init__(self) -> None:
        self.layout: CsvLayout | None = None
        self.lines: list[int] = []
        self.ids: list[str | None] = []
        self.values: list[str | None] = []
        self.confidences: list[str | None] = []
        self.log = ProblemLog()

    def add_unusual(self, row: list[str], line: int) -> None:
        """Take a header, skip a blank row, or add a row with a missing id or a wrong width."""
        if all(not cell.strip(TRIM_CHARS) for cell in row):
            return  # blank lines, and rows of empty cells that spreadsheets leave behind
        if self.layout is None:
            self.layout = check_header(row, line=line)
            return
        layout = self.layout
        id_: str | None = row[layout.id].strip(TRIM_CHARS) if layout.id < len(row) else ""
        value = confidence = None
        if len(row) != layout.width:
            self.log.add(line, id_ or None,
                         f"This row has {len(row)} fields but the header has {layout.width}.")
            id_ = id_ or None  # an empty id is not worth a second problem on this row
        else:
            value = row[layout.prediction]
            confidence = None if layout.confidence is None else row[layout.confidence]
        self.lines.append(line)
        self.ids.append(id_)
        self.values.append(value)
        if layout.confidence is not None:
            self.confidences.append(confidence)

    def rows(self) -> Rows:
        """Return the rows read, or raise the empty-file problem when there are none."""
        if not self.lines and not self.log.count:
            detail = "it holds no predictions" if self.layout is None else "it has a header but no rows"
            raise file_error(f"The file is empty: {detail}.")
        has_confidence = self.layout is not None and self.layout.confidence is not None
        confidences = self.confidences if has_confidence else None
        return collected_rows(lines=self.lines, ids=self.ids, values=self.values,
                              confidences=confidences, log=self.log)
