"""A label file as parsed, before any check: per field, each line's JSON value, sorted by kind.

Both parsers produce a ``RawFile``: the fast one (``scoring.labels.fast``) from
pyarrow's typed columns, the careful one (``scoring.labels.careful``) from the values
of Python's strict JSON decoder. The one checker (``scoring.labels.check``) reads only
this form, so what a file may hold is decided in one place whichever parser read it.

A ``RawColumn`` keeps each row's kind of value (``Kind``) and, per kind, an Arrow
array over all rows holding that kind's values (null on the rows of other kinds):
strings, integers as their decimal text, reals as float64, booleans, lists of
strings. Any other value (an object, a list holding anything but strings) stays the
Python value the decoder gave.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from scoring import arrays

RAW_FIELDS = ("id", "label", "popularity", "group", "pair", "split")
"""The fields every parser collects, besides the breakdown fields of the phase config."""


class Kind(enum.IntEnum):
    """The kind of JSON value a row holds in one field."""

    ABSENT = 0  # null, or no such key on the line
    TEXT = 1
    INTEGER = 2
    REAL = 3  # a number with a fraction or exponent (the fast parser also widens label and popularity here)
    BOOLEAN = 4
    TEXT_LIST = 5  # a list whose every element is a string
    OTHER = 6  # an object, or a list holding anything but strings


SCALARS = (Kind.TEXT, Kind.INTEGER, Kind.REAL, Kind.BOOLEAN)
PART_TYPES: Mapping[Kind, pa.DataType] = {
    Kind.TEXT: pa.string(), Kind.INTEGER: pa.string(), Kind.REAL: pa.float64(), Kind.BOOLEAN: pa.bool_(),
    Kind.TEXT_LIST: pa.list_(pa.string()),
}
_KIND_OF_TYPE: Mapping[type, Kind] = {
    type(None): Kind.ABSENT, str: Kind.TEXT, int: Kind.INTEGER, float: Kind.REAL, bool: Kind.BOOLEAN,
    list: Kind.TEXT_LIST,
}


def text_of(value: object) -> str | None:
    """Return the text a JSON scalar stands for as a name (numbers in decimal, booleans true/false), else None."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value) if isinstance(value, int) else repr(value)
    return None


@dataclass(frozen=True)
class RawColumn:
    """One field of every row: its kind, and per kind an Arrow array over all rows (null elsewhere)."""

    kinds: npt.NDArray[np.int8]
    parts: Mapping[Kind, pa.Array] = field(default_factory=dict)
    others: Mapping[int, Any] = field(default_factory=dict)  # row -> value, for Kind.OTHER rows

    @property
    def n(self) -> int:
        """Return the number of rows."""
        return len(self.kinds)

    def of_kind(self, *kinds: Kind) -> npt.NDArray[np.bool_]:
        """Return which rows hold a value of one of these kinds."""
        return np.isin(self.kinds, np.array(kinds, dtype=np.int8))

    def has_values(self) -> bool:
        """Return whether any row holds a value."""
        return bool((self.kinds != Kind.ABSENT).any())

    def value_at(self, row: int) -> Any:
        """Return a row's value as Python's JSON decoder gives it (for messages)."""
        kind = Kind(int(self.kinds[row]))
        if kind == Kind.ABSENT:
            return None
        if kind == Kind.OTHER:
            return self.others[row]
        value = self.parts[kind][row].as_py()
        return int(value) if kind == Kind.INTEGER else value

    def distinct(self, kind: Kind) -> tuple[list[Any], npt.NDArray[np.int64]]:
        """Return one scalar kind's distinct values (first seen first) and each row's index into them, else -1."""
        part = self.parts.get(kind)
        if part is None:
            return [], np.full(self.n, -1, dtype=np.int64)
        encoded = part.dictionary_encode()
        values = encoded.dictionary.to_pylist()
        if kind == Kind.INTEGER:
            values = [int(v) for v in values]
        return values, arrays.values(encoded.indices, np.int64, fill=-1)

    def distinct_values(self) -> list[Any]:
        """Return the distinct scalar values in the order they first appear (equal numbers and booleans once)."""
        found: list[tuple[int, Any]] = []
        kinds = [kind for kind in SCALARS if kind in self.parts]
        for kind in kinds:
            values, index = self.distinct(kind)
            if len(kinds) == 1:
                return list(dict.fromkeys(values))  # one kind: the dictionary is in first-seen order already
            codes, first_rows = np.unique(index, return_index=True)
            pairs = zip(codes.tolist(), first_rows.tolist(), strict=True)
            found += [(row, values[code]) for code, row in pairs if code >= 0]
        return list(dict.fromkeys(value for _, value in sorted(found, key=lambda pair: pair[0])))

    def texts(self, kinds: tuple[Kind, ...] = SCALARS) -> pa.Array:
        """Return the text of every row of these scalar kinds (``text_of``) as a string array, null elsewhere."""
        pieces = []
        for kind in kinds:
            part = self.parts.get(kind)
            if part is None:
                continue
            if kind == Kind.REAL:
                part = pa.array([None if v is None else text_of(v) for v in part.to_pylist()], type=pa.string())
            elif kind == Kind.BOOLEAN:
                part = arrays.strings([text_of(False) or "", text_of(True) or ""]).take(part.cast(pa.int8()))
            pieces.append(part)
        if not pieces:
            return pa.nulls(self.n, pa.string())
        return pieces[0] if len(pieces) == 1 else pc.coalesce(*pieces)

    def numbers(self) -> npt.NDArray[np.float64]:
        """Return every integer or real row as a float, NaN elsewhere."""
        out = np.full(self.n, np.nan)
        for kind in (Kind.INTEGER, Kind.REAL):
            part = self.parts.get(kind)
            if part is not None:
                values = arrays.values(part.cast(pa.float64()), np.float64, fill=np.nan)
                rows = self.kinds == kind
                out[rows] = values[rows]
        return out


def absent(n: int) -> RawColumn:
    """Return a column no row has a value in."""
    return RawColumn(kinds=np.zeros(n, dtype=np.int8))


def from_parts(n: int, parts: Mapping[Kind, pa.Array]) -> RawColumn:
    """Return a column from typed Arrow arrays over all rows, one per kind, that never both hold a row."""
    kinds = np.zeros(n, dtype=np.int8)
    for kind, part in parts.items():
        kinds[arrays.valid(part)] = kind
    return RawColumn(kinds=kinds, parts=dict(parts))


def from_values(values: list[Any]) -> RawColumn:
    """Return a column from the values Python's JSON decoder gave, one per row (None where absent)."""
    n = len(values)
    seen = set(map(type, values)) - {type(None)}
    if len(seen) == 1 and (kind := _KIND_OF_TYPE.get(next(iter(seen)))) in SCALARS:
        return from_parts(n, {kind: _part(kind, values)})  # one kind of scalar: the common case
    kinds = np.fromiter(map(_kind, values), dtype=np.int8, count=n)
    parts: dict[Kind, pa.Array] = {}
    for code in np.unique(kinds).tolist():
        kind = Kind(code)
        if kind not in (Kind.ABSENT, Kind.OTHER):
            parts[kind] = _part(kind, [v if k == code else None for v, k in zip(values, kinds.tolist(), strict=True)])
    others = {int(row): values[row] for row in np.flatnonzero(kinds == Kind.OTHER)}
    return RawColumn(kinds=kinds, parts=parts, others=others)


def _kind(value: Any) -> int:
    """Return the kind of one decoded value."""
    kind = _KIND_OF_TYPE.get(type(value), Kind.OTHER)
    if kind == Kind.TEXT_LIST and not all(type(v) is str for v in value):
        return Kind.OTHER
    return kind


def _part(kind: Kind, values: list[Any]) -> pa.Array:
    """Return the Arrow array of one kind's values (None elsewhere); integers become their decimal text."""
    if kind == Kind.INTEGER:
        values = [None if v is None else text_of(v) for v in values]
    return pa.array(values, type=PART_TYPES[kind])


@dataclass(frozen=True)
class RawFile:
    """Every parsed row of a label file: one raw column per field, the line of each row, and where reading stopped."""

    columns: Mapping[str, RawColumn]
    lines: npt.NDArray[np.int64]  # 1-based line of each row
    stop: tuple[int, str] | None = None  # the line that could not be read, and why (the careful parser stops there)

    @property
    def n(self) -> int:
        """Return the number of rows read."""
        return len(self.lines)

    def column(self, name: str) -> RawColumn:
        """Return a field's raw column (no value on any row when the parser did not collect it)."""
        return self.columns.get(name) or absent(self.n)
