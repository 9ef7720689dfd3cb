"""The careful parser of a label file: line by line with Python's strict JSON decoder.

Each non-blank line is decoded on its own (a key given twice, NaN or Infinity, a
lone surrogate escape or anything but an object stops the reading at that line) and
the fields every check needs are collected raw; ``parse_careful`` returns them as a
``RawFile`` with each row's line, for the one checker (``scoring.labels.check``) to
judge. It reads any file the fast parser cannot take.
"""

from __future__ import annotations

import io
import json
import json.scanner
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from scoring.labels.byte_scan import LabelSource
from scoring.labels.raw import RAW_FIELDS, RawFile, from_values
from scoring.types import LabelFileError


def _lines(source: LabelSource) -> Iterator[tuple[int, bytes]]:
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
        except UnicodeEncodeError as error:
            escape = f"\\u{ord(error.object[error.start]):04x}"
            raise ValueError(f"a \\u escape is not valid Unicode text: {escape} is a lone surrogate, "
                             "not a character (surrogates come in pairs)") from None
    return record


def _scan(source: LabelSource, fields: tuple[str, ...]) -> _Raw:
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


def parse_careful(source: LabelSource, fields: tuple[str, ...]) -> RawFile:
    """Return the raw columns of every line up to the first one that cannot be read (``stop``)."""
    raw = _scan(source, fields)
    columns = {name: from_values(values) for name, values in raw.values.items()}
    return RawFile(columns=columns, lines=np.array(raw.lines, dtype=np.int64), stop=raw.stop)
