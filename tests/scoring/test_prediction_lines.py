"""Line-ordered prediction files: a phase with ``"prediction_format": "lines"`` takes one value per line.

Line N answers item N of the label file; the formats with ids still work beside it,
and a phase in the default ``"ids"`` mode never reads a file that way.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pyarrow as pa
import pytest
from pred_support import answers, problems, read

from scoring.config import load_config
from scoring.evaluate import evaluate
from scoring.labels import LabelSet, load_labels
from scoring.types import LabelFileError, PhaseConfig

ROOT = Path(__file__).resolve().parents[2]
COUNT = "this phase expects 4: one prediction per line, in the order of its items, with no header and no ids."


def lines_labels(n: int = 4, *, options: tuple[str, ...] | None = None, fmt: str = "lines") -> LabelSet:
    """Return a label set of items '1'..'n': binary, or multiple choice over options."""
    config = PhaseConfig("binary", prediction_format=fmt) if options is None else PhaseConfig(
        "multiple_choice", options=options, prediction_format=fmt)  # type: ignore[arg-type]
    return LabelSet(config, pa.array([str(i) for i in range(1, n + 1)]), pa.array([0] * n, pa.int8()).to_numpy())


def test_the_config_key_defaults_to_ids_and_refuses_other_values() -> None:
    assert load_config({"task_type": "binary"}).prediction_format == "ids"
    assert load_config({"task_type": "binary", "prediction_format": "lines"}).prediction_format == "lines"
    with pytest.raises(LabelFileError, match=r"^phase config: prediction_format must be one of ids, lines, "
                                             r"not 'rows'$"):
        load_config({"task_type": "binary", "prediction_format": "rows"})


def test_line_n_answers_item_n() -> None:
    assert answers("yes\nno\n\ntrue\n", lines_labels()) == [1, 0, -1, 1]  # a blank line abstains
    assert answers("yes\r\nno\r\nidk\r\nf\r\n\r\n\n", lines_labels()) == [1, 0, -1, 0]  # CRLF, blank end lines


def test_a_wrong_line_count_says_how_many_lines_were_expected_and_found() -> None:
    assert problems("yes\nno\nyes\n", lines_labels()) == ([(None, None, f"The file has 3 lines; {COUNT}")], 1)
    assert problems("1\n0\n1\n0\n1\n", lines_labels()) == ([(None, None, f"The file has 5 lines; {COUNT}")], 1)


def test_an_invalid_value_is_reported_on_its_line_with_the_item_id() -> None:
    found, count = problems("yes\nmaybe\nno\n", lines_labels())
    assert count == 2
    assert found[0] == (None, None, f"The file has 3 lines; {COUNT}")
    assert found[1][:2] == (2, "2") and found[1][2].startswith("Invalid prediction 'maybe': expected one of")


def test_a_header_line_is_skipped_when_the_file_has_one_line_too_many() -> None:
    assert answers("prediction\nyes\nno\nyes\nno\n", lines_labels()) == [1, 0, 1, 0]
    found, _ = problems("label\nyes\nno\nmaybe\nno\n", lines_labels())
    assert found[0][:2] == (4, "3")  # the line in the file, the third item
    found, _ = problems("yes\nyes\nno\nyes\nno\n", lines_labels())  # one line too many, and no header
    assert found == [(None, None, f"The file has 5 lines; {COUNT}")]


def test_numbers_equal_to_a_whole_number_are_that_number_in_a_lines_phase() -> None:
    labels = lines_labels(5, options=("0", "1", "2"))
    file = "2.000000000000000000e+00\n1\n\n0.0\n+1.\n"
    assert answers(file, labels) == [2, 1, -1, 0, 1]
    found, _ = problems("2\n1.5\n0\n1\n2\n", labels)
    assert found[0][:2] == (2, "2") and "Invalid prediction '1.5'" in found[0][2]
    ids_phase = lines_labels(2, options=("0", "1", "2"), fmt="ids")
    found, _ = problems("id,prediction\n1,2.0\n2,1\n", ids_phase)
    assert found[0][:2] == (2, "1") and "Invalid prediction '2.0'" in found[0][2]


@pytest.mark.parametrize("text", [
    "id,prediction\n2,no\n1,yes\n",
    "\ufeffID, Prediction\r\n2,no\r\n1,yes\r\n",
    '{"id": "2", "prediction": "no"}\n{"id": "1", "prediction": "yes"}\n',
    '[{"id": "2", "prediction": "no"}, {"id": "1", "prediction": "yes"}]',
    '{"2": "no", "1": "yes"}',
])
def test_files_with_ids_are_still_read_by_their_ids_in_a_lines_phase(text: str) -> None:
    assert answers(text, lines_labels()) == [1, 0, -1, -1]


def test_a_csv_header_with_a_wrong_column_is_reported_as_csv_in_a_lines_phase() -> None:
    found, _ = problems("id,answer\n1,yes\n2,no\n3,no\n4,yes\n", lines_labels())
    assert found[0][0] == 1 and found[0][2].startswith("Unknown column 'answer'")


def test_a_phase_in_ids_mode_never_reads_a_file_as_lines() -> None:
    found, _ = problems("yes\nno\nyes\nno\n", lines_labels(fmt="ids"))
    assert [line for line, _, _ in found] == [1, 1, 1]
    assert found[0][2] == ("Unknown column 'yes': the header must be id,prediction or "
                           "id,prediction,confidence.")
    assert found[1][2].startswith("Missing column 'id'")


def test_a_one_item_phase_takes_a_one_line_file_and_a_zip_of_lines() -> None:
    assert answers("true\n", lines_labels(1)) == [1]
    assert answers("B", lines_labels(1, options=("A", "B"))) == [1]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("prediction", "no\nyes\nyes\nno\n")
    assert read(buffer.getvalue(), lines_labels()).answer.tolist() == [0, 1, 1, 0]


def test_a_lines_file_scores_as_the_same_answers_with_ids() -> None:
    labels = load_labels(b"".join(json.dumps({"id": str(i), "label": "ABCA"[i % 4]}).encode() + b"\n"
                                  for i in range(1, 9)),
                         {"task_type": "multiple_choice", "options": ["A", "B", "C"], "prediction_format": "lines"})
    by_lines = evaluate(labels, read("A\nB\nC\nA\nC\nC\n\nB\n", labels))
    by_ids = evaluate(labels, read("id,prediction\n" + "".join(f"{i},{v}\n" for i, v in enumerate("ABCACC", 1))
                                   + "7,\n8,B\n", labels))
    assert by_lines == by_ids
    assert by_lines["overall"]["correct"] == 2


def run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "scoring", *args], capture_output=True, text=True, cwd=ROOT,
                          env=env, timeout=120, check=False)


@pytest.fixture
def phase(tmp_path: Path) -> dict[str, Path]:
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps({"id": str(i), "label": str(v)}) + "\n"
                              for i, v in enumerate([0, 1, 2, 2, 1], start=1)))
    config = tmp_path / "phase.json"
    config.write_text(json.dumps({"task_type": "multiple_choice", "options": ["0", "1", "2"],
                                  "prediction_format": "lines"}))
    return {"labels": labels, "config": config, "dir": tmp_path}


def test_the_command_line_evaluates_and_validates_a_lines_file(phase: dict[str, Path]) -> None:
    predictions = phase["dir"] / "prediction"
    predictions.write_text("0.000000000000000000e+00\n1.000000000000000000e+00\n0\n2\n2\n")
    common = ["--labels", str(phase["labels"]), "--predictions", str(predictions), "--config", str(phase["config"])]
    result = run("evaluate", *common)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["overall"]["accuracy"] == 3 / 5
    result = run("validate", *common)
    assert (result.returncode, json.loads(result.stdout)["n_predictions"]) == (0, 5)


def test_the_command_line_refuses_a_wrong_count_and_a_bad_format_value(phase: dict[str, Path]) -> None:
    predictions = phase["dir"] / "prediction"
    predictions.write_text("0\n1\n2\n")
    common = ["--labels", str(phase["labels"]), "--predictions", str(predictions)]
    result = run("validate", *common, "--config", str(phase["config"]))
    assert result.returncode == 2
    assert json.loads(result.stdout)["errors"][0]["message"].startswith("The file has 3 lines; this phase expects 5")
    phase["config"].write_text(json.dumps({"task_type": "binary", "prediction_format": "line"}))
    result = run("validate", *common, "--config", str(phase["config"]))
    assert result.returncode == 3
    assert "prediction_format must be one of ids, lines, not 'line'" in result.stderr
