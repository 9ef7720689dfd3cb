"""What each field of a label file may hold (docs/FORMATS.md, Hidden label file), as rules over raw columns.

A rule takes one field's ``RawColumn`` and returns the converted column plus the first
row that breaks it (a ``BadRow``), or None. Conversions work on whole Arrow arrays,
and on the few distinct values where the value itself matters (bucket names, split
names, gold labels), so a rule costs the same whichever parser read the file.
``scoring.labels.check`` applies them in order and reports the earliest bad row.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from scoring import arrays
from scoring.config import binary_code, letter
from scoring.labels.raw import SCALARS, Kind, RawColumn, text_of
from scoring.types import BUCKET_NAMES, NO_BUCKET, SPLIT_NAMES, PhaseConfig

NAME_KINDS = (Kind.TEXT, Kind.INTEGER, Kind.REAL)
"""Values that name something (an id, a group, a pair): strings, and numbers as their decimal text."""
POPULARITY_WORDS: dict[str, int] = {name: code for code, name in BUCKET_NAMES.items()}
SPLITS: dict[str, int] = {name: code for code, name in enumerate(SPLIT_NAMES)}


@dataclass(frozen=True)
class BadRow:
    """The first row of a column that breaks its rule, and why (for the organizer)."""

    row: int
    message: str


def _first(mask: npt.NDArray[np.bool_]) -> int | None:
    """Return the first row where mask holds, None when none does."""
    return int(mask.argmax()) if mask.any() else None


def _bad(column: RawColumn, mask: npt.NDArray[np.bool_], message: Callable[[Any], str]) -> BadRow | None:
    """Return the first row where mask holds, with the message for its value."""
    row = _first(mask)
    return None if row is None else BadRow(row, message(column.value_at(row)))


def _lookup(column: RawColumn, kind: Kind, convert: Callable[[Any], int | None]) -> npt.NDArray[np.int64]:
    """Return ``convert`` of each row's value of one kind (once per distinct value); -1 elsewhere and for None."""
    values, index = column.distinct(kind)
    table = np.array([-1 if (c := convert(v)) is None else c for v in values] + [-1], dtype=np.int64)
    return table[index]  # index -1 picks the trailing -1


def ids(column: RawColumn, lines: npt.NDArray[np.int64]) -> tuple[pa.Array, BadRow | None]:
    """Return the ids as text; a missing, empty, non-text or repeated id is a bad row."""
    texts = column.texts(NAME_KINDS)
    empty = column.of_kind(Kind.TEXT) & (arrays.values(pc.binary_length(texts), np.int64, fill=-1) == 0)
    bad = _bad(column, ~column.of_kind(*NAME_KINDS) | empty,
               lambda v: "missing id" if v is None else f"id must be a non-empty string, not {v!r}")
    return texts, bad if bad is not None else _repeat(texts, lines)


def _repeat(texts: pa.Array, lines: npt.NDArray[np.int64]) -> BadRow | None:
    """Return the first row whose id an earlier row already has."""
    if len(texts) < 2:
        return None
    indices = pc.sort_indices(texts)  # stable: equal ids keep their row order
    ordered, order = texts.take(indices), arrays.values(indices, np.int64)
    same = np.concatenate(([False], arrays.values(pc.equal(ordered[1:], ordered[:-1]), np.bool_)))
    if not same.any():
        return None
    run_start = np.maximum.accumulate(np.where(same, 0, np.arange(len(same))))
    repeats = np.flatnonzero(same)
    at = repeats[order[repeats].argmin()]
    row, first = int(order[at]), int(order[run_start[at]])
    return BadRow(row, f"duplicate id {texts[row].as_py()!r} (first on line {lines[first]})")


def label_presence(column: RawColumn) -> BadRow | None:
    """Return the first missing label, or one that is not a string, a number or a boolean."""
    return _bad(column, ~column.of_kind(*SCALARS),
                lambda v: "missing label" if v is None else "label must be a string, a number or a boolean")


def label_kinds(column: RawColumn, lines: npt.NDArray[np.int64]) -> BadRow | None:
    """Return why the task type cannot be inferred: a label neither yes/no nor a letter, or a mix of both."""
    kind = np.zeros(column.n, dtype=np.int64)  # 0 neither, 1 yes/no, 2 a letter
    for scalar in SCALARS:
        found = _lookup(column, scalar, lambda v: 1 if binary_code(v) is not None else 2 if letter(v) else 0)
        kind = np.where(found >= 0, found, kind)
    neither = _bad(column, kind == 0, lambda v: (f"label {v!r} is neither yes/no nor one letter, so the task type "
                                                 "cannot be inferred; give a phase config with task_type"))
    b, m = _first(kind == 1), _first(kind == 2)
    if neither is not None or b is None or m is None:
        return neither
    return BadRow(max(b, m), f"cannot infer the task type: line {lines[b]} has a yes/no label and line {lines[m]} "
                             "a letter; give a phase config with task_type")


def gold(column: RawColumn, config: PhaseConfig) -> tuple[npt.NDArray[np.int8], BadRow | None]:
    """Return the class code of every label, and the first label the task does not accept."""
    convert = binary_code if config.task_type == "binary" else _option_code(config.options)
    allowed = ("a boolean, true/false, yes/no or 1/0" if config.task_type == "binary"
               else f"one of the options {', '.join(config.options)}")
    codes = np.full(column.n, -1, dtype=np.int64)
    for kind in SCALARS:
        found = _lookup(column, kind, convert)
        codes = np.where(found >= 0, found, codes)
    return codes.astype(np.int8), _bad(column, codes < 0, lambda v: f"label {v!r} is not {allowed}")


def _option_code(options: tuple[str, ...]) -> Callable[[Any], int | None]:
    """Return the function giving a multiple-choice label's option index (case and spaces ignored)."""
    index = {o.lower(): i for i, o in enumerate(options)}

    def code(value: Any) -> int | None:
        """Return the option index of a label, None when it is no option."""
        return index.get(value.strip().lower()) if isinstance(value, str) else None

    return code


def popularity(column: RawColumn) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.float64], BadRow | None]:
    """Return (bucket code or -1, numeric popularity or NaN) per item."""
    bucket = _lookup(column, Kind.TEXT, lambda v: POPULARITY_WORDS.get(v.strip().lower()))
    wrong = column.of_kind(Kind.BOOLEAN, Kind.TEXT_LIST, Kind.OTHER) | (column.of_kind(Kind.TEXT) & (bucket < 0))
    bad = _bad(column, wrong, lambda v: f'popularity must be "head", "torso", "tail" or a number, not {v!r}')
    return np.where(bucket >= 0, bucket, NO_BUCKET).astype(np.int8), column.numbers(), bad


def names(column: RawColumn, key: str) -> tuple[pa.Array, BadRow | None]:
    """Return group or pair names as text (numbers as decimal text), null where absent."""
    bad = _bad(column, column.of_kind(Kind.BOOLEAN, Kind.TEXT_LIST, Kind.OTHER),
               lambda v: f"{key} must be a string, not {v!r}")
    return column.texts(NAME_KINDS), bad


def splits(column: RawColumn) -> tuple[npt.NDArray[np.int8] | None, BadRow | None]:
    """Return split codes (public where absent), None when no item has a split."""
    code = _lookup(column, Kind.TEXT, lambda v: SPLITS.get(v.strip().lower()))
    wrong = ~column.of_kind(Kind.ABSENT, Kind.TEXT) | (column.of_kind(Kind.TEXT) & (code < 0))
    bad = _bad(column, wrong, lambda v: f'split must be "public" or "private", not {v!r}')
    if not column.has_values():
        return None, bad
    return np.where(code < 0, 0, code).astype(np.int8), bad


def breakdown(column: RawColumn, key: str) -> tuple[tuple[pa.Array, ...], BadRow | None]:
    """Return a breakdown field as string and list-of-string parts (a list puts an item in several values)."""
    converted = {row: _list_texts(value) for row, value in column.others.items()}
    wrong = np.zeros(column.n, dtype=bool)
    wrong[[row for row, texts in converted.items() if texts is None]] = True
    bad = _bad(column, wrong, lambda v: f"{key} must be a string, a number or a list of them, not {v!r}")
    lists = column.parts.get(Kind.TEXT_LIST)
    if converted and bad is None:  # lists holding numbers or booleans (only the careful parser keeps those)
        merged = lists.to_pylist() if lists is not None else [None] * column.n
        for row, texts in converted.items():
            merged[row] = texts
        lists = pa.array(merged, type=pa.list_(pa.string()))
    parts = (column.texts(SCALARS), lists)
    return tuple(p for p in parts if p is not None and p.null_count < len(p)), bad


def _list_texts(value: Any) -> list[str] | None:
    """Return the texts of a list of JSON scalars, None for anything else."""
    if not isinstance(value, list):
        return None
    texts = [text_of(v) for v in value]
    return None if any(t is None for t in texts) else [t for t in texts if t is not None]
