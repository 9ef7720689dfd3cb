"""The careful reader of a label file: line by line, and every error names its line.

``scoring.labels`` tries a vectorized pyarrow read first and comes here whenever that
read fails or sees anything unusual; both produce the same ``Columns``. Each line is
decoded with the strict JSON decoder and its fields are collected raw; the column
checks of ``scoring.label_checks`` then find the first bad line of the file.
"""

from __future__ import annotations

import io
import json
import json.scanner
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from scoring import label_checks as checks
from scoring.config import infer_config, load_config
from scoring.types import LabelFileError, PhaseConfig


@dataclass
class Columns:
    """Per-item columns of a label file, checked, before buckets and codes are made."""

    ids: pa.Array  # string, unique, non-empty
    gold: npt.NDArray[np.int8]
    pop_bucket: npt.NDArray[np.int8]  # -1 where absent or numeric
    pop_value: npt.NDArray[np.float64]  # NaN where absent or a bucket name
    group: pa.Array | None  # string with nulls
    pair: pa.Array | None
    split: npt.NDArray[np.int8] | None  # None when no item has a split
    fields: dict[str, tuple[pa.Array, ...]] = field(default_factory=dict)  # parts: string or list<string>


def read_bytes(source: str | os.PathLike[str] | bytes) -> bytes:
    """Return the label file's bytes."""
    if isinstance(source, bytes):
        return source
    try:
        return Path(source).read_bytes()
    except OSError as exc:
        raise LabelFileError(f"cannot read the label file: {exc}") from exc


def _lines(source: str | os.PathLike[str] | bytes) -> Iterator[tuple[int, bytes]]:
    """Yield (1-based line number, line) for every non-blank line."""
    if isinstance(source, bytes):
        yield from _numbered(io.BytesIO(source))
        return
    try:
        with Path(source).open("rb") as handle:
            yield from _numbered(handle)
    except OSError as exc:  # also a read error in the middle of the file
        raise LabelFileError(f"cannot read the label file: {exc}") from exc


def _numbered(handle: Iterable[bytes]) -> Iterator[tuple[int, bytes]]:
    """Number the lines of a binary file, skipping blank ones and a leading BOM."""
    for number, raw in enumerate(handle, start=1):
        if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        if raw.strip():
            yield number, raw


def _no_constants(name: str) -> None:
    """Refuse NaN and Infinity: label files are strict JSON."""
    raise ValueError(f"{name} is not valid JSON")


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """Build an object, refusing a key given twice."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"key {key!r} appears twice")
            seen.add(key)
    return out


_DECODER = json.JSONDecoder(parse_constant=_no_constants, object_pairs_hook=_object)
_SCAN = json.scanner.make_scanner(_DECODER)  # type: ignore[arg-type]  # the C scanner, without decode()'s wrapper
_JSON_SPACE = " \t\n\r"
_BATCH = 4096
RAW_FIELDS = ("id", "label", "popularity", "group", "pair", "split")  # the fields every reader collects


@dataclass
class _Raw:
    """Raw field values of every line read, and the problem that stopped the reading."""

    lines: list[int]
    values: dict[str, list[Any]]
    stop: tuple[int, str] | None = None


def _decode(raw: bytes) -> dict[str, Any]:
    """Return the JSON object on one line; ValueError says what is wrong with it."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("not UTF-8 text") from None
    stripped = text.strip(_JSON_SPACE)
    try:
        record, end = _SCAN(stripped, 0)
        if end != len(stripped):
            raise ValueError("extra data")
    except (ValueError, StopIteration):
        try:
            record = _DECODER.decode(text)  # again, for json's own message
        except ValueError as exc:
            raise ValueError(f"not valid JSON ({exc})") from None
    if type(record) is not dict:
        raise ValueError(f"expected a JSON object, found {type(record).__name__}")
    if "\\u" in text:  # an escaped lone surrogate parses, but is no text
        try:
            json.dumps(record, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError("a \\u escape is not valid Unicode text") from None
    return record


def _scan(source: str | os.PathLike[str] | bytes, fields: tuple[str, ...]) -> _Raw:
    """Collect the raw values of the used fields, line by line, until a line cannot be read."""
    keys = tuple(dict.fromkeys((*RAW_FIELDS, *fields)))
    raw = _Raw(lines=[], values={k: [] for k in keys})
    batch: list[dict[str, Any]] = []
    for number, line in _lines(source):
        try:
            batch.append(_decode(line))
        except ValueError as exc:
            raw.stop = (number, str(exc))
            break
        raw.lines.append(number)
        if len(batch) == _BATCH:
            _collect(raw, batch)
    _collect(raw, batch)
    return raw


def _collect(raw: _Raw, batch: list[dict[str, Any]]) -> None:
    """Move the used fields of a batch of records into the raw columns."""
    for key, column in raw.values.items():
        column.extend([record.get(key) for record in batch])
    batch.clear()


def _first(raw: _Raw, problems: list[checks.Problem]) -> None:
    """Raise the problem on the earliest line, if any (a line that could not be read last)."""
    found = [p for p in problems if p is not None]
    if found:
        row, message = min(found, key=lambda p: p[0])
        raise LabelFileError(f"line {raw.lines[row]}: {message}")
    if raw.stop is not None:
        raise LabelFileError(f"line {raw.stop[0]}: {raw.stop[1]}")


def _resolve(config: PhaseConfig | dict[str, Any] | None, raw: _Raw) -> PhaseConfig:
    """Return the phase config, inferring what it lacks from the labels."""
    if isinstance(config, PhaseConfig):
        return config
    labels = raw.values["label"]
    if config is None or "task_type" not in config:
        _first(raw, [checks.label_kinds(labels, raw.lines)])
    distinct = list(dict.fromkeys(labels))
    return infer_config(distinct) if config is None else load_config(config, labels_hint=distinct)


def read_columns(
    source: str | os.PathLike[str] | bytes,
    config: PhaseConfig | dict[str, Any] | None,
    fields: tuple[str, ...],
) -> tuple[Columns, PhaseConfig]:
    """Read a label file line by line into checked columns and its phase config."""
    raw = _scan(source, fields)
    values = raw.values
    ids, id_problem = checks.ids(values["id"], raw.lines)
    buckets, counts, pop_problem = checks.popularity(values["popularity"])
    groups, group_problem = checks.names(values["group"], "group")
    pairs, pair_problem = checks.names(values["pair"], "pair")
    split, split_problem = checks.splits(values["split"])
    parts = {k: checks.breakdown(values[k], k) for k in fields}
    _first(raw, [id_problem, checks.labels(values["label"]), pop_problem, group_problem, pair_problem,
                 split_problem, *(p for _, p in parts.values())])
    if not raw.lines:
        raise LabelFileError("the label file is empty")
    resolved = _resolve(config, raw)
    gold, gold_problem = checks.gold(values["label"], resolved)
    _first(raw, [gold_problem])
    columns = Columns(
        ids=pa.array(ids, type=pa.string()),
        gold=np.array(gold, dtype=np.int8),
        pop_bucket=np.array(buckets, dtype=np.int8),
        pop_value=np.array(counts, dtype=np.float64),
        group=pa.array(groups, type=pa.string()),
        pair=pa.array(pairs, type=pa.string()),
        split=np.array([s or 0 for s in split], dtype=np.int8) if any(s is not None for s in split) else None,
        fields={k: (pa.array(v, type=pa.list_(pa.string())),) for k, (v, _) in parts.items()},
    )
    return columns, resolved
