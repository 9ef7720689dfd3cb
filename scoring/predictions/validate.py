"""Classify every row of a prediction file at once: known id, duplicate, answer code, confidence.

The readers turn a file into string columns (``Rows``); ``check_rows`` checks them
all in one vectorized pass against the label items, never looking at gold labels.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from scoring import arrays
from scoring.labels import LabelSet
from scoring.predictions.rows import Rows, shown
from scoring.predictions.tokens import INVALID, NUMBER_PATTERN, TRIM_CHARS, TokenTable, whole_number
from scoring.types import ABSTAIN, MAX_LISTED_PROBLEMS, PredictionFileError, Predictions, Problem

Flags = npt.NDArray[np.bool_]
_EMPTY = arrays.strings([""])[0]  # not "" nor pa.scalar(""): they make pyarrow import pandas and dateutil
_NULL = pa.nulls(1, pa.string())[0]
_ID_SHOWN = 200


@dataclass(frozen=True)
class CheckedRows:
    """Every row of a file classified: item position, class code, confidence, problems."""

    positions: npt.NDArray[np.int64]  # item index per row, -1 when unknown or absent
    codes: npt.NDArray[np.int8]  # class code per row, ABSTAIN, or INVALID
    confidence: npt.NDArray[np.float64] | None  # per row, NaN where it does not apply
    flags: dict[str, Flags]  # per-row problem kinds, in the order they are reported
    first: npt.NDArray[np.int64]  # row of the first occurrence of a duplicated id
    missing: Flags  # per item: no row names it
    log_count: int
    refuse_missing: bool

    @property
    def clean(self) -> bool:
        """Return whether the file has no problem at all."""
        if self.log_count or (self.refuse_missing and self.missing.any()):
            return False
        return not any(flag.any() for flag in self.flags.values())

    def predictions(self, labels: LabelSet) -> Predictions:
        """Return the validated predictions aligned with the label items."""
        answer = np.full(labels.n, ABSTAIN, dtype=np.int8)
        answer[self.positions] = self.codes
        confidence = None
        if self.confidence is not None:
            confidence = np.full(labels.n, np.nan, dtype=np.float64)
            confidence[self.positions] = self.confidence
        absent = int(self.missing.sum())
        warnings = [] if not absent else [
            "1 item has no prediction; it counts as an abstention." if absent == 1
            else f"{absent} items have no prediction; they count as abstentions."
        ]
        return Predictions(answer, confidence, len(self.positions), warnings)

    def error(self, rows: Rows, labels: LabelSet, tokens: TokenTable) -> PredictionFileError:
        """Return the error listing the first problems in the order docs/FORMATS.md gives, and their count."""
        missing = np.flatnonzero(self.missing) if self.refuse_missing else np.array([], int)
        listed = [
            Problem(line=None, id=_id(item), message="No prediction for this id.")
            for item in labels.ids.take(missing[:MAX_LISTED_PROBLEMS]).to_pylist()
        ]
        row_count = sum(int(flag.sum()) for flag in self.flags.values())
        by_line = rows.log.kept + self._row_problems(rows, tokens)
        listed += sorted(by_line, key=lambda problem: problem.line or 0)
        total = len(missing) + rows.log.count + row_count
        return PredictionFileError(listed[:MAX_LISTED_PROBLEMS], total)

    def _row_problems(self, rows: Rows, tokens: TokenTable) -> list[Problem]:
        """Return the problems of the first flagged rows, enough to fill the listing."""
        assert rows.lines is not None, "problems are only reported by line-tracking readers"
        bad = np.logical_or.reduce(list(self.flags.values()))
        problems: list[Problem] = []
        for row in np.flatnonzero(bad):
            if len(problems) >= MAX_LISTED_PROBLEMS:
                break
            line, id_ = int(rows.lines[row]), rows.ids[row].as_py()
            for kind, flag in self.flags.items():
                if flag[row]:
                    message = self._message(kind, int(row), rows, tokens)
                    problems.append(Problem(line=line, id=_id(id_), message=message))
        return problems

    def _message(self, kind: str, row: int, rows: Rows, tokens: TokenTable) -> str:
        """Return the sentence for one problem kind of one row."""
        if kind == "empty":
            return "Missing id: every prediction needs an id."
        if kind == "unknown":
            return f"Unknown id {shown(rows.ids[row].as_py())}: it is not an item of this phase."
        if kind == "duplicate":
            assert rows.lines is not None
            return (f"Duplicate id {shown(rows.ids[row].as_py())}: it already appeared on "
                    f"line {rows.lines[self.first[row]]}.")
        if kind == "invalid":
            return tokens.invalid_message(shown(rows.values[row].as_py().strip(TRIM_CHARS)))
        if kind == "confidence_missing":
            return ("Missing confidence: the file gives confidences, so every answered "
                    "prediction needs one (a number between 0 and 1).")
        assert rows.confidences is not None
        given = shown(rows.confidences[row].as_py().strip(TRIM_CHARS))
        if kind == "confidence_nan":
            return f"Invalid confidence {given}: it must be a number between 0 and 1."
        return f"Confidence {given} is out of range: it must be between 0 and 1."


def _id(value: str | None) -> str | None:
    """Return an id as a problem carries it: None when empty, cut when absurdly long."""
    if not value:
        return None
    return value if len(value) <= _ID_SHOWN else value[:_ID_SHOWN] + "..."


def check_rows(rows: Rows, labels: LabelSet, tokens: TokenTable) -> CheckedRows:
    """Classify every row of a file against the label items, without looking at gold."""
    n_rows = len(rows.ids)
    positions = labels.positions(rows.ids)
    empty = _mask(pc.equal(rows.ids, _EMPTY))
    known = positions >= 0
    first = _first_rows(positions)
    codes = _codes(rows.values, tokens)
    flags: dict[str, Flags] = {
        "empty": empty,
        "unknown": ~known & ~empty & ~_mask(rows.ids.is_null()),
        "duplicate": known & (first != np.arange(n_rows)),
        "invalid": codes == INVALID,
    }
    confidence = None
    if rows.confidences is not None:
        confidence, confidence_flags = _confidences(rows.confidences, codes >= 0)
        flags.update(confidence_flags)
    covered = np.zeros(labels.n, dtype=np.bool_)
    covered[positions[known]] = True
    return CheckedRows(
        positions=positions,
        codes=codes,
        confidence=confidence,
        flags=flags,
        first=first,
        missing=~covered,
        log_count=rows.log.count,
        refuse_missing=labels.config.missing_ids == "error",
    )


def _mask(array: pa.Array) -> Flags:
    """Return a boolean arrow array as a numpy mask."""
    return arrays.values(array, np.bool_)  # null as False


def _first_rows(positions: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Return, per row with a known id, the first row naming the same item (else itself)."""
    first = np.arange(len(positions), dtype=np.int64)
    rows = np.flatnonzero(positions >= 0)
    if rows.size == 0 or np.bincount(positions[rows]).max() <= 1:
        return first  # the common case: no duplicates, no sort needed
    items, first_index = np.unique(positions[rows], return_index=True)
    first_of_item = np.zeros(int(items.max()) + 1, dtype=np.int64)
    first_of_item[items] = rows[first_index]
    first[rows] = first_of_item[positions[rows]]
    return first


def _codes(values: pa.Array, tokens: TokenTable) -> npt.NDArray[np.int8]:
    """Return the class code of every value: an answer, ABSTAIN, or INVALID."""
    encoded = values.dictionary_encode()  # a few distinct spellings: normalize each once
    normalized = pc.ascii_lower(pc.utf8_trim(encoded.dictionary, characters=TRIM_CHARS))
    if tokens.whole_numbers:
        normalized = arrays.strings([whole_number(value) for value in normalized.to_pylist()])
    found = arrays.values(pc.index_in(normalized, value_set=tokens.keys), np.int64, fill=-1)
    table = np.append(np.where(found >= 0, tokens.codes[found], INVALID), ABSTAIN).astype(np.int8)
    return table[arrays.values(encoded.indices, np.int64, fill=len(found))]  # no value: ABSTAIN (already logged)


def _confidences(
    given: pa.Array, answered: Flags
) -> tuple[npt.NDArray[np.float64], dict[str, Flags]]:
    """Return each answered row's confidence (NaN elsewhere) and the confidence problems."""
    text = pc.utf8_trim(given.fill_null(_EMPTY), characters=TRIM_CHARS)
    present = _mask(pc.not_equal(text, _EMPTY))
    is_number = pc.match_substring_regex(text, NUMBER_PATTERN)
    number = _mask(is_number)
    values = _to_float(text, is_number)
    in_range = (values >= 0.0) & (values <= 1.0)
    flags = {
        "confidence_missing": answered & ~present,
        "confidence_nan": answered & present & ~number,
        "confidence_range": answered & number & ~in_range,
    }
    return np.where(answered, values, np.nan), flags


def _to_float(text: pa.Array, number: pa.Array) -> npt.NDArray[np.float64]:
    """Return the texts that are plain numbers as floats, NaN for the others."""
    kept = pc.if_else(number, text, _NULL)
    try:
        return arrays.values(pc.cast(kept, pa.float64()), np.float64, fill=np.nan)
    except pa.ArrowInvalid:  # a number arrow cannot parse: let Python read each one
        return np.array([float(t) if t is not None else np.nan for t in kept.to_pylist()])
