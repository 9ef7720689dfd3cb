"""The fast parser of a label file: one pyarrow pass, with column types taken from the first lines.

It only parses: what the values may be is for the one checker
(``scoring.labels.check``) to decide, as for the careful parser. It gives up (returns
None, and ``scoring.labels.careful`` reads the file line by line) whenever pyarrow's
reading could differ from Python's strict JSON decoder: a bare NaN or Infinity, bytes
that are not UTF-8, a blank line, two objects on one line or one over two lines, a line that does not fit
the sampled types, a nested or repeated key, or numbers read as float64 in a field
where ``1`` and ``1.0`` are different texts. Numbers are widened to float64 only in
``label`` and in ``popularity`` (unless it is also a breakdown), whose rules treat
``1`` and ``1.0`` alike.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj

from scoring.labels.byte_scan import (
    LIST_SUFFIX,
    LabelSource,
    framed_lines,
    has_bare_constant,
    is_utf8,
    read_bytes,
    rename_lists,
    string_keys,
)
from scoring.labels.raw import RAW_FIELDS, Kind, RawColumn, RawFile, absent, from_parts

_BLOCK_BYTES = 4 << 20
_SAMPLE_BYTES = 1 << 20
_REAL_FIELDS = ("label", "popularity")  # where float64 may hold numbers that were written as integers


def parse_fast(source: LabelSource, fields: tuple[str, ...]) -> RawFile | None:
    """Return the raw columns of a plain label file, or None when only the careful parser can read it exactly."""
    data = read_bytes(source)  # the only reference when read from a path: renaming frees it
    lines = framed_lines(data)
    if lines is None or has_bare_constant(data) or not is_utf8(data):
        return None
    data, listed = rename_lists(data, fields)
    keys = {name: string_keys(data, name) for name in listed}
    names = tuple(dict.fromkeys((*RAW_FIELDS, *fields)))
    widened = tuple(name for name in _REAL_FIELDS if name not in fields)
    table = _parse(data, names, listed, widened)
    del data  # the table holds everything needed from here on
    if table is None or table.num_rows == 0 or table.num_rows != lines:
        return None
    columns: dict[str, RawColumn] = {}
    for name in names:
        column = _raw_column(table, name, widened, keys.get(name) if name in listed else None)
        if column is None:
            return None
        columns[name] = column
    return RawFile(columns=columns, lines=np.arange(1, table.num_rows + 1, dtype=np.int64))


def _parse(data: bytes, used: tuple[str, ...], listed: tuple[str, ...], widened: tuple[str, ...]) -> pa.Table | None:
    """Parse the used columns with types taken from the file's first lines, None on failure.

    An explicit schema is much faster than pyarrow's own inference when a column is
    missing from some lines; columns nobody uses are skipped. A line that does not
    fit the sampled types makes the parse fail, and the careful parser takes over.
    """
    cut = data.find(b"\n", _SAMPLE_BYTES)
    try:
        sample = pj.read_json(pa.BufferReader(data[: cut if cut > 0 else len(data)]))
        types = {f.name: f.type for f in sample.schema if not pa.types.is_null(f.type)}
        schema = [(name, _expected_type(name, types.get(name), widened)) for name in used]
        schema += [(name + LIST_SUFFIX, pa.list_(pa.string())) for name in listed]
        options = pj.ParseOptions(explicit_schema=pa.schema(schema), unexpected_field_behavior="ignore")
        return pj.read_json(pa.BufferReader(data), read_options=pj.ReadOptions(block_size=_BLOCK_BYTES),
                            parse_options=options)
    except (pa.ArrowException, ValueError):
        return None


def _expected_type(name: str, sampled: pa.DataType | None, widened: tuple[str, ...]) -> pa.DataType:
    """Return the type to parse a used column as: ids text or integers, popularity counts float64."""
    if sampled is None or (name == "id" and not pa.types.is_integer(sampled)):
        return pa.string()
    if name == "popularity" and name in widened and pa.types.is_integer(sampled):
        return pa.float64()  # counts: one file may write 3 and 2.5
    return sampled


def _raw_column(table: pa.Table, name: str, widened: tuple[str, ...], string_keys: int | None) -> RawColumn | None:
    """Return a field's raw column, None when its parse may differ from the careful parser's."""
    plain = _column(table, name)
    parts: dict[Kind, pa.Array] = {}
    if plain is not None:
        kind = _kind(plain.type, widened=name in widened)
        if kind is None or (kind == Kind.TEXT_LIST and pc.list_flatten(plain).null_count):
            return None
        parts[kind] = plain.cast(pa.string()) if kind == Kind.INTEGER else plain
    if string_keys is not None:  # list values were renamed to name + LIST_SUFFIX
        listed = _column(table, name + LIST_SUFFIX)
        seen = 0 if plain is None else len(plain) - plain.null_count
        if listed is None or Kind.TEXT_LIST in parts or seen != string_keys:
            return None  # a nested or repeated key: read carefully
        if pc.list_flatten(listed).null_count or (plain is not None and pc.any(
                pc.and_(plain.is_valid(), listed.is_valid())).as_py()):
            return None
        parts[Kind.TEXT_LIST] = listed
    return from_parts(table.num_rows, parts) if parts else absent(table.num_rows)


def _kind(kind: pa.DataType, *, widened: bool) -> Kind | None:
    """Return the kind of value a typed column holds, None for types the careful parser must read."""
    if pa.types.is_string(kind):
        return Kind.TEXT
    if pa.types.is_boolean(kind):
        return Kind.BOOLEAN
    if pa.types.is_int64(kind):
        return Kind.INTEGER
    if pa.types.is_float64(kind) and widened:
        return Kind.REAL
    if pa.types.is_list(kind) and pa.types.is_string(kind.value_type):
        return Kind.TEXT_LIST
    return None


def _column(table: pa.Table, name: str) -> pa.Array | None:
    """Return a column as one array, None when absent or null on every line."""
    if name not in table.column_names:
        return None
    column = table.column(name).combine_chunks()
    return None if column.null_count == len(column) else column
