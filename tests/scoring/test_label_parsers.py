"""The fast and careful label parsers differ only in how they parse: one checker judges what either read."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest
from test_labels import CAREFUL_ONLY, VALID_FILES, assert_same, jsonl

import scoring.labels.loader as loader
from scoring.labels import load_labels
from scoring.labels.careful import parse_careful
from scoring.labels.check import check
from scoring.labels.fast import parse_fast
from scoring.types import LabelFileError

LABELS = Path(__file__).resolve().parents[2] / "scoring" / "labels"


def parser_of(data: bytes, config: dict[str, Any] | None = None) -> str:
    """Return which parser read a valid file."""
    early = loader.early_config(config)
    fields = early.breakdowns if hasattr(early, "breakdowns") else tuple((config or {}).get("breakdowns", ["category"]))
    return loader.read_checked(data, early, fields).parser


@pytest.mark.parametrize("name", sorted(set(VALID_FILES) - CAREFUL_ONLY))
def test_a_plain_file_is_read_by_the_fast_parser(name: str) -> None:
    data, config = VALID_FILES[name]
    assert parser_of(data, config) == "fast"


@pytest.mark.parametrize("name", sorted(CAREFUL_ONLY))
def test_a_file_with_blank_lines_is_read_by_the_careful_parser(name: str) -> None:
    data, config = VALID_FILES[name]
    assert parser_of(data, config) == "careful"


@pytest.mark.parametrize("name", sorted(set(VALID_FILES) - CAREFUL_ONLY))
def test_the_checker_gives_the_same_columns_whichever_parser_read_the_file(name: str) -> None:
    data, config = VALID_FILES[name]
    fields = tuple((config or {}).get("breakdowns", ["category"]))
    early = loader.early_config(config)
    raw_fast = parse_fast(data, fields)
    assert raw_fast is not None
    fast, careful = check(raw_fast, early, fields), check(parse_careful(data, fields), early, fields)
    assert fast[1] == careful[1]
    assert fast[0].ids.equals(careful[0].ids) and fast[0].gold.tolist() == careful[0].gold.tolist()


def test_a_value_the_checker_refuses_is_reported_from_the_careful_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    data = jsonl({"id": "a", "label": "yes"}, {"id": "b", "label": "maybe"})
    assert parse_fast(data, ("category",)) is not None  # pyarrow reads it; the checker refuses it
    careful_calls: list[int] = []
    real = loader.parse_careful

    def counting(*args: Any) -> Any:
        careful_calls.append(1)
        return real(*args)

    monkeypatch.setattr(loader, "parse_careful", counting)
    with pytest.raises(LabelFileError, match="line 2: label 'maybe' is not"):
        load_labels(data, {"task_type": "binary"})
    assert careful_calls == [1]


@pytest.mark.parametrize(
    "data",
    [
        b'\n{"id": "a", "label": true}{"id": "b", "label": true}\n',
        b'{"id": "a", "label": true}{"id": "b", "label": true}\n\n{"id": "c", "label": true}\n',
        b'{"id": "a",\n"label": true}{"id": "b", "label": true}\n',
        b'{"id": "a", "label": true}{"id": "b", "label": true}\n{"id": "c",\n"label": false}\n',
    ],
)
def test_two_objects_on_a_line_are_refused_even_when_another_line_makes_up_the_count(data: bytes) -> None:
    assert parse_fast(data, ("category",)) is None
    with pytest.raises(LabelFileError, match=r"line \d: not valid JSON"):
        load_labels(data)


def test_lines_framed_by_spaces_or_crlf_stay_on_the_fast_path() -> None:
    records = [{"id": "a", "label": True}, {"id": "b", "label": False}]
    data = b"".join(b"  " + json.dumps(r).encode() + b" \t\r\n" for r in records)
    assert parser_of(data) == "fast"
    assert_same(load_labels(data), load_labels(jsonl(*records)))


@pytest.mark.parametrize("parser", ["fast.py", "careful.py", "byte_scan.py", "raw.py"])
def test_the_parsers_never_judge_values(parser: str) -> None:
    tree = ast.parse((LABELS / parser).read_text(encoding="utf-8"))
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    assert not imported & {"scoring.labels.rules", "scoring.labels.check", "scoring.config"}
