"""An escaped lone surrogate (``"\\ud800"``) is a line-numbered problem, never a crash (issue 19 item 5).

JSON lets a string escape half of a UTF-16 surrogate pair; Python decodes it to a
character no UTF-8 encoder takes. Prediction files refuse it on the record's line;
label files stop at the line with exit 3.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest
from pred_support import make_labels, problems, read

from scoring.labels import LabelSet
from scoring.types import BINARY_OPTIONS, PhaseConfig

ROOT = Path(__file__).resolve().parents[2]
SURROGATE = "Invalid text: \\ud800 is a lone surrogate, not a character."


def message_starts(found: list[tuple[object, object, str]], index: int, start: str) -> bool:
    return found[index][2].startswith(start)


@pytest.mark.parametrize("record", [
    '{"id": "q2", "prediction": "\\ud800"}',
    '{"id": "q2\\ud800", "prediction": "true"}',
    '{"id": "q2", "prediction": "true", "confidence": "0.\\ud800"}',
    '{"id": "q2", "prediction": ["\\ud800"]}',
])
def test_a_json_lines_record_with_a_lone_surrogate_is_refused_on_its_line(record: str) -> None:
    found, count = problems('{"id": "q1", "prediction": "true", "confidence": 0.5}\n' + record + "\n")
    assert count == 1
    assert found[0][:2] == (2, None)
    assert message_starts(found, 0, SURROGATE)


def test_every_other_problem_of_the_file_is_still_listed() -> None:
    found, count = problems('{"id": "q1", "prediction": "\\uDFFF"}\n{"id": "zz", "prediction": "no"}\n')
    assert count == 2
    assert message_starts(found, 0, "Invalid text: \\udfff is a lone surrogate")
    assert found[1][:2] == (2, "zz") and found[1][2].startswith("Unknown id 'zz'")


def test_a_json_list_entry_is_refused_on_the_line_it_starts() -> None:
    text = '[\n {"id": "q1", "prediction": "yes"},\n {"id": "q2",\n  "prediction": "\\ud800"}\n]'
    found, count = problems(text)
    assert (count, found[0][0]) == (1, 3)
    assert message_starts(found, 0, SURROGATE)


@pytest.mark.parametrize("text", ['{"q1": "yes",\n "q2": "\\ud800"}', '{"q1": "yes",\n "\\ud800": "no"}'])
def test_a_json_mapping_key_or_value_is_refused_on_its_line(text: str) -> None:
    found, count = problems(text)
    assert (count, found[0][:2]) == (1, (2, None))
    assert message_starts(found, 0, SURROGATE)


def test_a_surrogate_pair_and_an_escaped_backslash_are_ordinary_text() -> None:
    labels = LabelSet(PhaseConfig("binary", options=BINARY_OPTIONS), pa.array(["q\U0001f600", "q2"]),
                      make_labels(["a", "b"]).gold)
    assert read('{"id": "q\\ud83d\\ude00", "prediction": "yes"}\n', labels).answer.tolist() == [1, -1]
    found, _ = problems('{"id": "q1", "prediction": "\\\\ud800"}\n')
    assert found[0][2].startswith("Invalid prediction '\\ud800':")


def run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "scoring", *args], capture_output=True, text=True, cwd=ROOT,
                          env=env, timeout=120, check=False)


@pytest.fixture
def labels_file(tmp_path: Path) -> Path:
    path = tmp_path / "labels.jsonl"
    path.write_text('{"id": "a", "label": true}\n{"id": "b", "label": false}\n')
    return path


@pytest.mark.parametrize("command", ["validate", "evaluate"])
@pytest.mark.parametrize(("name", "content", "line"), [
    ("p.jsonl", '{"id": "a", "prediction": "yes"}\n{"id": "b", "prediction": "\\ud800"}\n', 2),
    ("p.json", '[{"id": "a", "prediction": "yes"},\n {"id": "b", "prediction": "\\ud800"}]', 2),
])
def test_the_command_line_exits_2_with_the_problem_and_no_traceback(command: str, name: str, content: str,
                                                                   line: int, labels_file: Path) -> None:
    predictions = labels_file.parent / name
    predictions.write_text(content)
    result = run(command, "--labels", str(labels_file), "--predictions", str(predictions))
    assert result.returncode == 2, result.stderr
    assert result.stderr == ""
    errors = json.loads(result.stdout)
    assert errors["error_count"] == 1
    assert errors["errors"][0]["line"] == line
    assert errors["errors"][0]["message"].startswith(SURROGATE)


@pytest.mark.parametrize("record", ['{"id": "x", "label": "\\ud800"}', '{"id": "x\\udbff", "label": true}',
                                    '{"id": "x", "label": true, "note": "\\udc00"}'])
@pytest.mark.parametrize("cache", [True, False])
def test_a_label_file_with_a_lone_surrogate_exits_3_naming_the_line(record: str, cache: bool, labels_file: Path,
                                                                     tmp_path: Path) -> None:
    labels = tmp_path / "bad-labels.jsonl"
    labels.write_text('{"id": "a", "label": true}\n' + record + "\n")
    predictions = tmp_path / "p.csv"
    predictions.write_text("id,prediction\na,yes\n")
    result = run("validate", "--labels", str(labels), "--predictions", str(predictions),
                 *([] if cache else ["--no-cache"]))
    assert result.returncode == 3
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("invalid label file or phase config: line 2: ")
    assert "is a lone surrogate, not a character" in result.stderr
