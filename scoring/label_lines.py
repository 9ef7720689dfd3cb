"""The careful reader of a label file: one line at a time, every error names its line.

``scoring.labels`` tries a vectorized pyarrow read first and comes here whenever that
read fails or sees anything unusual; both produce the same ``Columns``.
"""

from __future__ import annotations

import io
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from scoring.config import binary_code, infer_config, letter, load_config
from scoring.types import LabelFileError, PhaseConfig

POPULARITY_BUCKETS: dict[str, int] = {"tail": 0, "torso": 1, "head": 2}
SPLITS: dict[str, int] = {"public": 0, "private": 1}
SPECIAL_FIELDS = ("id", "label", "popularity", "group", "pair", "split")


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


def text_of(value: object) -> str | None:
    """Return the breakdown text of a JSON scalar (numbers as decimal text), else None."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value) if isinstance(value, int) else repr(value)
    return None


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
        handle = Path(source).open("rb")
    except OSError as exc:
        raise LabelFileError(f"cannot read the label file: {exc}") from exc
    with handle:
        yield from _numbered(handle)


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


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """Build an object, refusing a key given twice."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"key {key!r} appears twice")
        out[key] = value
    return out


def _record(number: int, raw: bytes) -> dict[str, Any]:
    """Return the JSON object on one line, or raise naming the line."""
    try:
        record = json.loads(raw.decode("utf-8"), parse_constant=_no_constants, object_pairs_hook=_no_duplicate_keys)
    except UnicodeDecodeError:
        raise LabelFileError(f"line {number}: not UTF-8 text") from None
    except ValueError as exc:
        raise LabelFileError(f"line {number}: not valid JSON ({exc})") from None
    if not isinstance(record, dict):
        raise LabelFileError(f"line {number}: expected a JSON object, found {type(record).__name__}")
    if b"\\u" in raw:  # an escaped lone surrogate parses, but is no text
        try:
            json.dumps(record, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise LabelFileError(f"line {number}: a \\u escape is not valid Unicode text") from None
    return record


def _id_of(number: int, record: dict[str, Any]) -> str:
    """Return the item id as text (a JSON number becomes its decimal text)."""
    value = record.get("id")
    if value is None:
        raise LabelFileError(f"line {number}: missing id")
    text = text_of(value) if not isinstance(value, bool) else None
    if not text:
        raise LabelFileError(f"line {number}: id must be a non-empty string, not {value!r}")
    return text


def _popularity(number: int, value: object) -> tuple[int, float]:
    """Return (bucket code or -1, numeric popularity or NaN)."""
    if value is None:
        return -1, np.nan
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return -1, float(value)
    if isinstance(value, str) and value.strip().lower() in POPULARITY_BUCKETS:
        return POPULARITY_BUCKETS[value.strip().lower()], np.nan
    raise LabelFileError(f'line {number}: popularity must be "head", "torso", "tail" or a number, not {value!r}')


def _name(number: int, key: str, value: object) -> str | None:
    """Return a group or pair name as text, None when absent."""
    if value is None:
        return None
    text = text_of(value) if not isinstance(value, bool) else None
    if text is None:
        raise LabelFileError(f"line {number}: {key} must be a string, not {value!r}")
    return text


def _split(number: int, value: object) -> int | None:
    """Return the split code, None when absent."""
    if value is None:
        return None
    if isinstance(value, str) and value.strip().lower() in SPLITS:
        return SPLITS[value.strip().lower()]
    raise LabelFileError(f'line {number}: split must be "public" or "private", not {value!r}')


def _values(number: int, key: str, value: object) -> list[str] | None:
    """Return a breakdown field's values as text (a list gives several), None when absent."""
    if value is None:
        return None
    items = value if isinstance(value, list) else [value]
    texts = [text_of(v) for v in items]
    if any(t is None for t in texts):
        raise LabelFileError(f"line {number}: {key} must be a string, a number or a list of them, not {value!r}")
    return [t for t in texts if t is not None]


class _Accumulator:
    """Per-item values gathered line by line."""

    def __init__(self, fields: tuple[str, ...]) -> None:
        self.ids: list[str] = []
        self.lines: list[int] = []
        self.labels: list[object] = []
        self.first_line: dict[str, int] = {}
        self.pop: list[tuple[int, float]] = []
        self.group: list[str | None] = []
        self.pair: list[str | None] = []
        self.split: list[int | None] = []
        self.fields: dict[str, list[list[str] | None]] = {f: [] for f in fields}

    def add(self, number: int, record: dict[str, Any]) -> None:
        """Check one record and append its values."""
        item_id = _id_of(number, record)
        if item_id in self.first_line:
            raise LabelFileError(f"line {number}: duplicate id {item_id!r} (first on line {self.first_line[item_id]})")
        self.first_line[item_id] = number
        label = record.get("label")
        if label is None:
            raise LabelFileError(f"line {number}: missing label")
        if isinstance(label, (list, dict)):
            raise LabelFileError(f"line {number}: label must be a string, a number or a boolean")
        self.ids.append(item_id)
        self.lines.append(number)
        self.labels.append(label)
        self.pop.append(_popularity(number, record.get("popularity")))
        self.group.append(_name(number, "group", record.get("group")))
        self.pair.append(_name(number, "pair", record.get("pair")))
        self.split.append(_split(number, record.get("split")))
        for key, column in self.fields.items():
            column.append(_values(number, key, record.get(key)))


def _resolve(config: PhaseConfig | dict[str, Any] | None, acc: _Accumulator) -> PhaseConfig:
    """Return the phase config, inferring what it lacks from labels, naming lines on failure."""
    if isinstance(config, PhaseConfig):
        return config
    if config is None or "task_type" not in config:
        kinds = ["binary" if binary_code(v) is not None else "letter" if letter(v) else None for v in acc.labels]
        if None in kinds:
            at = kinds.index(None)
            raise LabelFileError(
                f"line {acc.lines[at]}: label {acc.labels[at]!r} is neither yes/no nor one letter, "
                "so the task type cannot be inferred; give a phase config with task_type"
            )
        if len(set(kinds)) > 1:
            b, m = kinds.index("binary"), kinds.index("letter")
            raise LabelFileError(
                f"cannot infer the task type: line {acc.lines[b]} has a yes/no label and line {acc.lines[m]} "
                "a letter; give a phase config with task_type"
            )
    distinct = list(dict.fromkeys(acc.labels))
    return infer_config(distinct) if config is None else load_config(config, labels_hint=distinct)


def _gold(config: PhaseConfig, acc: _Accumulator) -> npt.NDArray[np.int8]:
    """Return the class code of every label, or raise naming the first invalid line."""
    if config.task_type == "binary":
        codes = [binary_code(v) for v in acc.labels]
        allowed = "a boolean, true/false, yes/no or 1/0"
    else:
        index = {o.lower(): i for i, o in enumerate(config.options)}
        codes = [index.get(v.strip().lower()) if isinstance(v, str) else None for v in acc.labels]
        allowed = f"one of the options {', '.join(config.options)}"
    for at, code in enumerate(codes):
        if code is None:
            raise LabelFileError(f"line {acc.lines[at]}: label {acc.labels[at]!r} is not {allowed}")
    return np.array(codes, dtype=np.int8)


def read_columns(
    source: str | os.PathLike[str] | bytes,
    config: PhaseConfig | dict[str, Any] | None,
    fields: tuple[str, ...],
) -> tuple[Columns, PhaseConfig]:
    """Read a label file line by line into checked columns and its phase config."""
    acc = _Accumulator(fields)
    for number, raw in _lines(source):
        acc.add(number, _record(number, raw))
    if not acc.ids:
        raise LabelFileError("the label file is empty")
    resolved = _resolve(config, acc)
    present = [s for s in acc.split if s is not None]
    columns = Columns(
        ids=pa.array(acc.ids, type=pa.string()),
        gold=_gold(resolved, acc),
        pop_bucket=np.array([p[0] for p in acc.pop], dtype=np.int8),
        pop_value=np.array([p[1] for p in acc.pop], dtype=np.float64),
        group=pa.array(acc.group, type=pa.string()),
        pair=pa.array(acc.pair, type=pa.string()),
        split=np.array([s or 0 for s in acc.split], dtype=np.int8) if present else None,
        fields={k: (pa.array(v, type=pa.list_(pa.string())),) for k, v in acc.fields.items()},
    )
    return columns, resolved
