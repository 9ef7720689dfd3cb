"""The fast reader of a plain label file: one pyarrow pass, vectorized checks.

It never raises about the file's content: anything it does not accept outright
(pyarrow's parse error, a lenient parse such as a bare NaN or two objects on one line,
a blank line, an invalid or missing value, a value whose type differs from the first
lines') returns None, and ``scoring.label_lines`` reads the file again line by line
and names the line at fault.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj

from scoring import arrays
from scoring.config import BINARY_WORDS, load_config
from scoring.label_bytes import LIST_SUFFIX, count_lines, has_bare_constant, is_utf8, rename_lists, string_keys
from scoring.label_checks import POPULARITY_BUCKETS, SPLITS
from scoring.label_lines import RAW_FIELDS, Columns, read_bytes
from scoring.types import LabelFileError, PhaseConfig

_BLOCK_BYTES = 4 << 20
_SAMPLE_BYTES = 1 << 20


class _Unusual(Exception):
    """The fast reader met something only the careful reader should judge."""


def read_fast(
    source: str | os.PathLike[str] | bytes, config: PhaseConfig | dict[str, Any] | None, fields: tuple[str, ...]
) -> tuple[Columns, PhaseConfig] | None:
    """Return the columns and config of a plain label file, or None to read it line by line."""
    data = read_bytes(source)  # the only reference when read from a path: renaming frees it
    if has_bare_constant(data) or not is_utf8(data):
        return None
    data, listed = rename_lists(data, fields)
    lines = count_lines(data)
    keys = {name: string_keys(data, name) for name in listed}
    table = _parse(data, (*RAW_FIELDS, *fields), listed)
    del data  # the table holds everything needed from here on
    if table is None or table.num_rows == 0 or table.num_rows != lines:
        return None
    try:
        columns, resolved = _columns(table, config, fields)
        for name in listed:
            columns.fields[name] = _merge_lists(table, name, keys[name])
        return columns, resolved
    except _Unusual:
        return None


def _parse(data: bytes, used: tuple[str, ...], listed: tuple[str, ...]) -> pa.Table | None:
    """Parse the used columns with types taken from the file's first lines, None on failure.

    An explicit schema is much faster than pyarrow's own inference when a column is
    missing from some lines; columns nobody uses are skipped. A line that does not
    fit the sampled types makes the parse fail, and the careful reader takes over.
    """
    cut = data.find(b"\n", _SAMPLE_BYTES)
    try:
        sample = pj.read_json(pa.BufferReader(data[: cut if cut > 0 else len(data)]))
        types = {f.name: f.type for f in sample.schema if not pa.types.is_null(f.type)}
        schema = [(name, _expected_type(name, types.get(name))) for name in dict.fromkeys(used)]
        schema += [(name + LIST_SUFFIX, pa.list_(pa.string())) for name in listed]
        options = pj.ParseOptions(explicit_schema=pa.schema(schema), unexpected_field_behavior="ignore")
        return pj.read_json(pa.BufferReader(data), read_options=pj.ReadOptions(block_size=_BLOCK_BYTES),
                            parse_options=options)
    except (pa.ArrowException, ValueError):
        return None


def _expected_type(name: str, sampled: pa.DataType | None) -> pa.DataType:
    """Return the type to parse a used column as: ids text or integers, popularity counts floats."""
    if sampled is None or (name == "id" and not pa.types.is_integer(sampled)):
        return pa.string()
    if name == "popularity" and pa.types.is_integer(sampled):
        return pa.float64()
    return sampled


def _merge_lists(table: pa.Table, name: str, string_keys: int) -> tuple[pa.Array, ...]:
    """Return the string and list parts of a field; ``string_keys`` counts its unrenamed keys."""
    plain = _column(table, name)
    listed = _breakdown(_column(table, name + LIST_SUFFIX))
    if listed is None or not pa.types.is_list(listed.type):
        raise _Unusual
    seen = 0 if plain is None else len(plain) - plain.null_count
    if seen != string_keys:  # a nested or duplicate key: read carefully
        raise _Unusual
    if plain is None:
        return (listed,)
    plain_part = _breakdown(plain)
    both = pc.and_(plain.is_valid(), listed.is_valid())
    if plain_part is None or pc.any(both).as_py():
        raise _Unusual
    return (plain_part, listed)


def _column(table: pa.Table, name: str) -> pa.Array | None:
    """Return a column as one array, None when absent or null on every line."""
    if name not in table.column_names:
        return None
    column = table.column(name).combine_chunks()
    return None if column.null_count == len(column) else column


def _columns(
    table: pa.Table, config: PhaseConfig | dict[str, Any] | None, fields: tuple[str, ...]
) -> tuple[Columns, PhaseConfig]:
    """Return checked columns, raising _Unusual at the first doubt."""
    ids = _ids(table.column("id").combine_chunks())
    labels = _column(table, "label")
    if labels is None or labels.null_count or not _is_scalar_type(labels.type):
        raise _Unusual
    resolved = _resolve(config, labels)
    pop_bucket, pop_value = _popularity(_column(table, "popularity"), table.num_rows)
    columns = Columns(
        ids=ids,
        gold=_gold(labels, resolved),
        pop_bucket=pop_bucket,
        pop_value=pop_value,
        group=_names(_column(table, "group")),
        pair=_names(_column(table, "pair")),
        split=_split(_column(table, "split")),
        fields={f: (c,) for f in fields if (c := _breakdown(_column(table, f))) is not None},
    )
    return columns, resolved


def _is_scalar_type(kind: pa.DataType) -> bool:
    """Return whether a column holds JSON scalars: booleans, numbers or strings."""
    return bool(pa.types.is_boolean(kind) or pa.types.is_integer(kind) or pa.types.is_floating(kind)
                or pa.types.is_string(kind))


def _ids(ids: pa.Array) -> pa.Array:
    """Return the ids as text (integers as their decimal text) if none is empty or repeats."""
    if pa.types.is_integer(ids.type):
        ids = ids.cast(pa.string())
    if ids.null_count or not pa.types.is_string(ids.type) or pc.min(pc.binary_length(ids)).as_py() == 0:
        raise _Unusual
    ordered = ids.take(pc.sort_indices(ids))
    if len(ids) > 1 and pc.any(pc.equal(ordered[1:], ordered[:-1])).as_py():
        raise _Unusual
    return ids


def _resolve(config: PhaseConfig | dict[str, Any] | None, labels: pa.Array) -> PhaseConfig:
    """Return the phase config, inferring from the distinct labels what it leaves out."""
    if isinstance(config, PhaseConfig):
        return config
    try:
        return load_config(config, labels_hint=pc.unique(labels).to_pylist())
    except LabelFileError:
        raise _Unusual from None  # the careful reader names the line


def _lookup(column: pa.Array, words: list[str]) -> npt.NDArray[np.int64]:
    """Return each string's index in ``words`` once trimmed and lower-cased, -1 where it is none."""
    encoded = column.dictionary_encode()  # few distinct values: normalize those, as the careful reader does
    index = {word: i for i, word in enumerate(words)}
    table = np.array([index.get(w.strip().lower(), -1) for w in encoded.dictionary.to_pylist()] + [-1],
                     dtype=np.int64)
    return table[arrays.values(encoded.indices, np.int64, fill=len(table) - 1)]


def _gold(labels: pa.Array, config: PhaseConfig) -> npt.NDArray[np.int8]:
    """Return class codes, raising _Unusual for any label the task does not accept."""
    kind = labels.type
    if config.task_type == "binary":
        if pa.types.is_boolean(kind):
            return arrays.values(labels, np.int8)
        if pa.types.is_integer(kind) or pa.types.is_floating(kind):
            numbers = arrays.values(labels, np.float64)
            if not np.isin(numbers, (0, 1)).all():
                raise _Unusual
            return numbers.astype(np.int8)
        if pa.types.is_string(kind):
            index = _lookup(labels, list(BINARY_WORDS))
            if (index < 0).any():
                raise _Unusual
            return np.array(list(BINARY_WORDS.values()), dtype=np.int8)[index]
        raise _Unusual
    if not pa.types.is_string(kind):
        raise _Unusual
    index = _lookup(labels, [o.lower() for o in config.options])
    if (index < 0).any():
        raise _Unusual
    return index.astype(np.int8)


def _popularity(column: pa.Array | None, n: int) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.float64]]:
    """Return (bucket code or -1, numeric popularity or NaN) per item."""
    bucket = np.full(n, -1, dtype=np.int8)
    value = np.full(n, np.nan)
    if column is None:
        return bucket, value
    if pa.types.is_string(column.type):
        index = _lookup(column, list(POPULARITY_BUCKETS))
        if ((index < 0) & arrays.valid(column)).any():
            raise _Unusual
        codes = np.array(list(POPULARITY_BUCKETS.values()), dtype=np.int8)
        bucket[index >= 0] = codes[index[index >= 0]]
        return bucket, value
    if pa.types.is_integer(column.type) or pa.types.is_floating(column.type):
        value = arrays.values(column, np.float64, fill=np.nan)
        if np.isinf(value).any():
            raise _Unusual
        return bucket, value
    raise _Unusual


def _names(column: pa.Array | None) -> pa.Array | None:
    """Return a group or pair column as strings (integers as their decimal text)."""
    if column is not None and pa.types.is_integer(column.type):
        return column.cast(pa.string())
    if column is not None and not pa.types.is_string(column.type):
        raise _Unusual
    return column


def _split(column: pa.Array | None) -> npt.NDArray[np.int8] | None:
    """Return split codes (0 public where absent), None when no item has a split."""
    if column is None:
        return None
    if not pa.types.is_string(column.type):
        raise _Unusual
    index = _lookup(column, list(SPLITS))
    if ((index < 0) & arrays.valid(column)).any():
        raise _Unusual
    return np.where(index < 0, 0, index).astype(np.int8)


def _breakdown(column: pa.Array | None) -> pa.Array | None:
    """Return a breakdown column as strings or lists of strings."""
    if column is None:
        return None
    kind = column.type
    if pa.types.is_integer(kind) or pa.types.is_boolean(kind):
        return column.cast(pa.string())
    if pa.types.is_string(kind):
        return column
    if pa.types.is_list(kind) and pa.types.is_string(kind.value_type):
        if pc.list_flatten(column).null_count:
            raise _Unusual
        return column
    raise _Unusual
