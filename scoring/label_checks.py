"""Column checks of the careful label reader: each finds its column's first bad row.

A check takes the raw JSON values of one field, one per item, and returns the
converted column plus ``(row, message)`` for the first value that breaks SPEC §2.1
(or None). ``scoring.label_lines`` reports the earliest problem of all columns, so
the error names the first bad line of the file. Loops have a fast path for the common
all-strings column, since this reader handles files of a million lines too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from scoring.config import binary_code, letter
from scoring.types import PhaseConfig

Problem = tuple[int, str] | None
POPULARITY_BUCKETS: dict[str, int] = {"tail": 0, "torso": 1, "head": 2}
SPLITS: dict[str, int] = {"public": 0, "private": 1}


def text_of(value: object) -> str | None:
    """Return the breakdown text of a JSON scalar (numbers as decimal text), else None."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value) if isinstance(value, int) else repr(value)
    return None


def ids(values: list[Any], lines: list[int]) -> tuple[list[str], Problem]:
    """Return the ids as text; a missing, empty, non-text or repeated id is a problem."""
    if all(type(v) is str and v for v in values):
        texts: list[str] = values
    else:
        texts = []
        for row, value in enumerate(values):
            text = text_of(value) if not isinstance(value, bool) else None
            if value is None:
                return texts, (row, "missing id")
            if not text:
                return texts, (row, f"id must be a non-empty string, not {value!r}")
            texts.append(text)
    if len(set(texts)) == len(texts):
        return texts, None
    first: dict[str, int] = {}
    for row, text in enumerate(texts):
        if text in first:
            return texts, (row, f"duplicate id {text!r} (first on line {lines[first[text]]})")
        first[text] = row
    raise AssertionError("a repeated id was not found")


def labels(values: list[Any]) -> Problem:
    """Return the first missing or non-scalar label."""
    for row, value in enumerate(values):
        if value is None:
            return row, "missing label"
        if isinstance(value, (list, dict)):
            return row, "label must be a string, a number or a boolean"
    return None


def label_kinds(values: list[Any], lines: list[int]) -> Problem:
    """Return why the task type cannot be inferred: a label neither yes/no nor a letter, or a mix."""
    kinds = _by_distinct(values, lambda v: "binary" if binary_code(v) is not None else "letter" if letter(v) else None)
    if None in kinds:
        row = kinds.index(None)
        return row, (f"label {values[row]!r} is neither yes/no nor one letter, so the task type cannot be "
                     "inferred; give a phase config with task_type")
    if len(set(kinds)) > 1:
        b, m = kinds.index("binary"), kinds.index("letter")
        return max(b, m), (f"cannot infer the task type: line {lines[b]} has a yes/no label and line {lines[m]} "
                           "a letter; give a phase config with task_type")
    return None


def gold(values: list[Any], config: PhaseConfig) -> tuple[list[int | None], Problem]:
    """Return the class code of every label, and the first label the task does not accept."""
    if config.task_type == "binary":
        codes = _by_distinct(values, binary_code)
        allowed = "a boolean, true/false, yes/no or 1/0"
    else:
        index = {o.lower(): i for i, o in enumerate(config.options)}
        codes = _by_distinct(values, lambda v: index.get(v.strip().lower()) if isinstance(v, str) else None)
        allowed = f"one of the options {', '.join(config.options)}"
    if None in codes:
        row = codes.index(None)
        return codes, (row, f"label {values[row]!r} is not {allowed}")
    return codes, None


def popularity(values: list[Any]) -> tuple[list[int], list[float], Problem]:
    """Return (bucket code or -1, numeric popularity or NaN) per item."""
    buckets: list[int] = []
    counts: list[float] = []
    for row, value in enumerate(values):
        kind = type(value)
        if value is None:
            buckets.append(-1)
            counts.append(np.nan)
        elif kind is int or kind is float:
            buckets.append(-1)
            counts.append(float(value))
        elif kind is str and value.strip().lower() in POPULARITY_BUCKETS:
            buckets.append(POPULARITY_BUCKETS[value.strip().lower()])
            counts.append(np.nan)
        else:
            return buckets, counts, (row, f'popularity must be "head", "torso", "tail" or a number, not {value!r}')
    return buckets, counts, None


def names(values: list[Any], key: str) -> tuple[list[str | None], Problem]:
    """Return group or pair names as text (numbers as decimal text), None where absent."""
    if all(v is None or type(v) is str for v in values):
        return values, None
    out: list[str | None] = []
    for row, value in enumerate(values):
        text = text_of(value) if not isinstance(value, bool) else None
        if value is not None and text is None:
            return out, (row, f"{key} must be a string, not {value!r}")
        out.append(text)
    return out, None


def splits(values: list[Any]) -> tuple[list[int | None], Problem]:
    """Return split codes, None where absent."""
    out: list[int | None] = []
    for row, value in enumerate(values):
        if value is None:
            out.append(None)
        elif isinstance(value, str) and value.strip().lower() in SPLITS:
            out.append(SPLITS[value.strip().lower()])
        else:
            return out, (row, f'split must be "public" or "private", not {value!r}')
    return out, None


def breakdown(values: list[Any], key: str) -> tuple[list[list[str] | None], Problem]:
    """Return a breakdown field's values as lists of text (a list gives several), None where absent."""
    out: list[list[str] | None] = []
    for row, value in enumerate(values):
        if value is None:
            out.append(None)
        elif type(value) is str:
            out.append([value])
        else:
            texts = [text_of(v) for v in (value if isinstance(value, list) else [value])]
            if any(t is None for t in texts):
                return out, (row, f"{key} must be a string, a number or a list of them, not {value!r}")
            out.append([t for t in texts if t is not None])
    return out, None


def _by_distinct(values: list[Any], convert: Callable[[Any], Any]) -> list[Any]:
    """Return ``convert`` of every value, computed once per distinct (type, value)."""
    seen: dict[tuple[type, Any], Any] = {}
    out = []
    for value in values:
        key = (type(value), value)
        if key not in seen:
            seen[key] = convert(value)
        out.append(seen[key])
    return out
