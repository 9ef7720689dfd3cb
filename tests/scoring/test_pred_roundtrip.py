"""Properties of the prediction reader: every format round-trips, fast and exact CSV agree."""

from __future__ import annotations

import csv
import gzip
import io
import json
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from unittest import mock

import numpy as np
import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scoring.labels import LabelSet
from scoring.predictions import read_predictions
from scoring.predictions.tokens import TRIM_CHARS
from scoring.types import ABSTAIN, BINARY_OPTIONS, PhaseConfig, PredictionFileError

TRUE_WORDS = ["true", "yes", "t", "y", "1"]
FALSE_WORDS = ["false", "no", "f", "n", "0"]
ABSTAIN_WORDS = ["", "unknown", "idk", "abstain", "none", "n/a", "i don't know"]
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@dataclass(frozen=True)
class Case:
    """A label set and the predictions a file states for some of its items."""

    labels: LabelSet
    listed: list[int]  # item indices, in file order
    codes: list[int]  # class code or ABSTAIN per listed item
    confidence: list[float] | None  # per listed item, when the file has confidences


ids_strategy = st.lists(
    st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=8).filter(
        lambda s: s == s.strip(TRIM_CHARS) and s not in ("id", "prediction")
    ),
    min_size=1,
    max_size=12,
    unique=True,
)


@st.composite
def cases(draw: st.DrawFn, with_confidence: bool | None = None) -> Case:
    """Draw a label set and a prediction for a non-empty subset of its items."""
    ids = draw(ids_strategy)
    options = draw(st.sampled_from([None, ("A", "B", "C", "D"), ("A", "B", "C", "D", "E")]))
    config = PhaseConfig("binary") if options is None else PhaseConfig("multiple_choice", options)
    labels = LabelSet(config, pa.array(ids, pa.string()), np.zeros(len(ids), np.int8))
    listed = draw(st.permutations(range(len(ids))).map(list))
    listed = listed[: draw(st.integers(1, len(ids)))]
    n_classes = len(config.options)
    codes = [draw(st.integers(ABSTAIN, n_classes - 1)) for _ in listed]
    has_confidence = draw(st.booleans()) if with_confidence is None else with_confidence
    confidence = [draw(st.floats(0.0, 1.0)) for _ in listed] if has_confidence else None
    return Case(labels, listed, codes, confidence)


def spelled(draw: st.DrawFn, case: Case, code: int) -> str:
    """Draw one way a participant may write a class code: any case, spaces around."""
    if code == ABSTAIN:
        word = draw(st.sampled_from(ABSTAIN_WORDS))
    elif case.labels.config.task_type == "binary":
        word = draw(st.sampled_from(TRUE_WORDS if code == 1 else FALSE_WORDS))
    else:
        word = case.labels.config.options[code]
    word = "".join(c.upper() if draw(st.booleans()) else c.lower() for c in word)
    return draw(st.sampled_from(["", " ", "\t"])) + word + draw(st.sampled_from(["", " ", "  "]))


def json_value(draw: st.DrawFn, case: Case, code: int) -> Any:
    """Draw a JSON value for a class code: a string token, or a boolean, number or null."""
    natives: list[Any] = [None] if code == ABSTAIN else []
    if case.labels.config.task_type == "binary" and code != ABSTAIN:
        natives = [bool(code), code]
    if natives and draw(st.booleans()):
        return draw(st.sampled_from(natives))
    return spelled(draw, case, code)


def write_csv(draw: st.DrawFn, case: Case) -> bytes:
    """Write the case as CSV, with random header case, line ends and BOM."""
    buffer = io.StringIO()
    ids = case.labels.ids.to_pylist()
    # the csv module leaves a lone "\r" unquoted when the line terminator is "\n"
    quoting = csv.QUOTE_ALL if any("\r" in i for i in ids) else draw(st.sampled_from([0, 1]))
    end = draw(st.sampled_from(["\n", "\r\n"]))
    writer = csv.writer(buffer, lineterminator=end, quoting=quoting)
    header = ["id", "prediction"] + (["confidence"] if case.confidence is not None else [])
    writer.writerow([draw(st.sampled_from([h, h.upper(), f" {h.title()} "])) for h in header])
    for k, item in enumerate(case.listed):
        row = [case.labels.ids[item].as_py(), spelled(draw, case, case.codes[k])]
        if case.confidence is not None:
            row.append(repr(case.confidence[k]))
        writer.writerow(row)
    bom = draw(st.sampled_from(["", "\ufeff"]))
    return (bom + buffer.getvalue()).encode()


def records(draw: st.DrawFn, case: Case) -> list[dict[str, Any]]:
    """Return the case as JSON records."""
    out = []
    for k, item in enumerate(case.listed):
        record = {"id": case.labels.ids[item].as_py(), "prediction": json_value(draw, case, case.codes[k])}
        if case.confidence is not None:
            value = case.confidence[k]
            record["confidence"] = draw(st.sampled_from([value, repr(value)]))
        out.append(record)
    return out


def write_jsonl(draw: st.DrawFn, case: Case) -> bytes:
    """Write the case as JSON Lines."""
    end = draw(st.sampled_from(["\n", "\r\n"]))
    return end.join(json.dumps(r, ensure_ascii=draw(st.booleans())) for r in records(draw, case)).encode()


def write_json_list(draw: st.DrawFn, case: Case) -> bytes:
    """Write the case as one JSON list, compact or indented."""
    return json.dumps(records(draw, case), indent=draw(st.sampled_from([None, 1, 4]))).encode()


def write_json_mapping(draw: st.DrawFn, case: Case) -> bytes:
    """Write the case as one JSON object mapping id to prediction (never with confidence)."""
    listed = zip(case.listed, case.codes, strict=False)
    mapping = {case.labels.ids[i].as_py(): json_value(draw, case, c) for i, c in listed}
    return json.dumps(mapping, indent=draw(st.sampled_from([None, 2]))).encode()


def zipped(data: bytes) -> bytes:
    """Return data as the one file of a zip archive, beside a macOS resource entry."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("__MACOSX/._predictions", b"junk")
        archive.writestr("predictions", data)
    return buffer.getvalue()


WRITERS: dict[str, Callable[[st.DrawFn, Case], bytes]] = {
    "csv": write_csv,
    "jsonl": write_jsonl,
    "json list": write_json_list,
    "json mapping": write_json_mapping,
}
WRAPPERS: dict[str, Callable[[bytes], bytes]] = {
    "plain": lambda data: data,
    "zip": zipped,
    "gzip": gzip.compress,
}


def expected(case: Case) -> tuple[np.ndarray, np.ndarray | None]:
    """Return the answer and confidence arrays the case should read back as."""
    answer = np.full(case.labels.n, ABSTAIN, np.int8)
    answer[case.listed] = case.codes
    if case.confidence is None:
        return answer, None
    confidence = np.full(case.labels.n, np.nan)
    for item, code, value in zip(case.listed, case.codes, case.confidence, strict=False):
        confidence[item] = value if code != ABSTAIN else np.nan
    return answer, confidence


@SETTINGS
@given(data=st.data(), writer=st.sampled_from(sorted(WRITERS)), wrapper=st.sampled_from(sorted(WRAPPERS)))
def test_valid_predictions_read_back_identically_in_every_format(
    data: st.DataObject, writer: str, wrapper: str
) -> None:
    case = data.draw(cases(with_confidence=False if writer == "json mapping" else None))
    content = WRAPPERS[wrapper](WRITERS[writer](data.draw, case))
    result = read_predictions(content, case.labels)
    answer, confidence = expected(case)
    np.testing.assert_array_equal(result.answer, answer)
    assert result.answer.dtype == np.int8
    if confidence is None:
        assert result.confidence is None
    else:
        assert result.confidence is not None
        np.testing.assert_array_equal(result.confidence, confidence)
    assert result.n_predictions == len(case.listed)
    assert len(result.warnings) == (len(case.listed) < case.labels.n)


# --- the vectorized CSV reader never disagrees with the exact one ------------------

LABEL_IDS = ["q1", "q2", "q3", "q4", "q5", "q6"]
IDS = ["q1", "q2", " q3 ", "Q4", "q5", "\tq6", "zz", "", " ", "q1\n", '"q2"']
VALUES = ["true", "No", " y ", "idk", "", "1", "F", "maybe", '"yes"', "t\r\n"]
CONFIDENCES = ["0.5", "1", "", " .25 ", "0", "2", "x", "1e-3"]
ODD_CELLS = ['"', '""', ",", "\n", "\r\n", "a\"b", "id", "prediction", "confidence"]


def outcome(content: bytes, labels: LabelSet) -> tuple[Any, ...]:
    """Return what reading gives, as plain comparable values."""
    try:
        result = read_predictions(content, labels)
    except PredictionFileError as exc:
        return ("error", exc.error_count, [p.to_json() for p in exc.problems])
    confidence = None if result.confidence is None else [
        None if np.isnan(v) else float(v) for v in result.confidence
    ]
    return ("ok", result.answer.tolist(), confidence, result.n_predictions, result.warnings)


HEADERS = {  # header -> where id, prediction and confidence go in a well-formed row
    "id,prediction": ("id", "prediction"),
    "ID, prediction ,Confidence": ("id", "prediction", "confidence"),
    "prediction,id": ("prediction", "id"),
    "id,prediction,confidence,": ("id", "prediction", "confidence", ""),
    "id": ("id",),
}


@st.composite
def messy_csv(draw: st.DrawFn) -> bytes:
    """Draw CSV-like text: a header, then mostly well-formed rows of odd cells, some odd rows."""
    header = draw(st.sampled_from(sorted(HEADERS)))
    pools = {"id": IDS, "prediction": VALUES, "confidence": CONFIDENCES, "": [""]}
    lines = [header]
    for id_ in draw(st.lists(st.sampled_from(IDS), unique=True, max_size=6)):
        if draw(st.integers(0, 5)):
            cells = [id_ if name == "id" else draw(st.sampled_from(pools[name]))
                     for name in HEADERS[header]]
        else:
            cells = draw(st.lists(st.sampled_from(IDS + VALUES + ODD_CELLS), min_size=1, max_size=4))
        quote = draw(st.booleans())
        lines.append(",".join(f'"{c}"' if quote and '"' not in c else c for c in cells))
    end = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    return (end.join(lines) + draw(st.sampled_from(["", end]))).encode()


@SETTINGS
@given(content=messy_csv(), missing=st.sampled_from(["abstain", "error"]))
def test_fast_csv_reader_agrees_with_the_exact_reader(content: bytes, missing: str) -> None:
    config = PhaseConfig("binary", BINARY_OPTIONS, missing_ids=missing)  # type: ignore[arg-type]
    labels = LabelSet(config, pa.array(LABEL_IDS), np.zeros(len(LABEL_IDS), np.int8))
    with_fast = outcome(content, labels)
    with mock.patch("scoring.predictions.reader.read_csv_fast", return_value=None):
        exact_only = outcome(content, labels)
    assert with_fast == exact_only


# --- corrupt uploads fail as participant problems, never as crashes ----------------


def _archives() -> list[bytes]:
    """Return small valid uploads of every kind, to be corrupted."""
    csv_data = b"id,prediction\nq1,true\n" * 20
    out = [gzip.compress(csv_data), csv_data, b'[{"id": "q1", "prediction": true}]']
    for method in (zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA, zipfile.ZIP_STORED):
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", method) as archive:
            archive.writestr("a.csv", csv_data)
        out.append(buffer.getvalue())
    return out


@st.composite
def corrupted(draw: st.DrawFn) -> bytes:
    """Draw a valid upload with a few bytes overwritten, inserted or deleted."""
    data = bytearray(draw(st.sampled_from(_archives())))
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(data) - 1))
        action = draw(st.sampled_from(["set", "insert", "delete"]))
        if action == "set":
            data[at] = draw(st.integers(0, 255))
        elif action == "insert":
            data.insert(at, draw(st.integers(0, 255)))
        elif len(data) > 1:
            del data[at]
    return bytes(data)


@settings(max_examples=500, deadline=None)
@given(content=corrupted())
def test_corrupt_uploads_raise_only_prediction_file_errors(content: bytes) -> None:
    labels = LabelSet(PhaseConfig("binary"), pa.array(["q1", "q2"]), np.zeros(2, np.int8))
    try:
        read_predictions(content, labels, max_bytes=10_000)
    except PredictionFileError as exc:
        assert exc.error_count >= 1 and 1 <= len(exc.problems) <= 50
