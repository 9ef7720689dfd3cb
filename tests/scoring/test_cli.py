"""``python -m scoring``: exit codes 0/2/3 and what each prints (docs/CLI.md), run as a real process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
LABELS = [
    {"id": "a", "label": True, "category": ["x", "y"], "popularity": "head"},
    {"id": "b", "label": False, "category": "x", "popularity": "tail"},
    {"id": "c", "label": True, "popularity": "tail"},
]


def run(*args: str, code: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-c", code, *args] if code else [sys.executable, "-m", "scoring", *args]
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env, timeout=120, check=False)


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps(r) + "\n" for r in LABELS))
    good = tmp_path / "good.csv"
    good.write_text("id,prediction,confidence\na,true,0.9\nb,yes,0.4\nc,,\n")
    bad = tmp_path / "bad.csv"
    bad.write_text("id,prediction\na,true\nzz,false\nb,perhaps\n")
    config = tmp_path / "phase.json"
    config.write_text(json.dumps({"task_type": "binary", "breakdowns": []}))
    return {"labels": labels, "good": good, "bad": bad, "config": config, "dir": tmp_path}


def scoring_args(command: str, files: dict[str, Path], predictions: str = "good", *extra: str) -> list[str]:
    return [command, "--labels", str(files["labels"]), "--predictions", str(files[predictions]), *extra]


def one_json_object(stdout: str) -> dict[str, Any]:
    lines = stdout.strip().splitlines()
    assert len(lines) == 1
    value = json.loads(lines[0])
    assert isinstance(value, dict)
    return value


def test_evaluate_prints_the_result_object_and_exits_0(files: dict[str, Path]) -> None:
    done = run(*scoring_args("evaluate", files))
    assert done.returncode == 0, done.stderr
    result = one_json_object(done.stdout)
    assert list(result) == ["n_items", "overall", "risk_coverage", "reliability", "breakdowns", "popularity",
                            "warnings"]
    assert result["overall"]["accuracy"] == 1 / 3
    assert "0.3333333333333333" in done.stdout  # full precision, not rounded
    assert "NaN" not in done.stdout


def test_evaluate_uses_the_given_config(files: dict[str, Path]) -> None:
    done = run(*scoring_args("evaluate", files, "good", "--config", str(files["config"])))
    assert done.returncode == 0, done.stderr
    assert "breakdowns" not in one_json_object(done.stdout)


def test_validate_prints_ok_and_the_number_of_predictions(files: dict[str, Path]) -> None:
    done = run(*scoring_args("validate", files))
    assert done.returncode == 0, done.stderr
    result = one_json_object(done.stdout)
    assert list(result) == ["ok", "n_predictions", "warnings"]
    assert result["ok"] is True and result["n_predictions"] == 3


@pytest.mark.parametrize("command", ["evaluate", "validate"])
def test_invalid_prediction_file_prints_its_problems_exits_2_and_never_a_score(
    command: str, files: dict[str, Path]
) -> None:
    done = run(*scoring_args(command, files, "bad"))
    assert done.returncode == 2
    result = one_json_object(done.stdout)
    assert list(result) == ["errors", "error_count"]
    assert result["error_count"] >= 2
    assert {e["line"] for e in result["errors"]} >= {3, 4}
    assert "accuracy" not in done.stdout and "overall" not in done.stdout


def test_missing_prediction_file_exits_2(files: dict[str, Path]) -> None:
    done = run("evaluate", "--labels", str(files["labels"]), "--predictions", str(files["dir"] / "none.csv"))
    assert done.returncode == 2
    assert one_json_object(done.stdout)["error_count"] == 1


def test_bad_label_file_exits_3_with_the_line_on_stderr(files: dict[str, Path]) -> None:
    files["labels"].write_text('{"id": "a", "label": true}\n{"id": "a", "label": false}\n')
    done = run(*scoring_args("evaluate", files))
    assert done.returncode == 3
    assert "line 2: duplicate id" in done.stderr
    assert done.stdout == ""


def test_bad_config_exits_3(files: dict[str, Path]) -> None:
    files["config"].write_text(json.dumps({"task_type": "binary", "primary_metric": "auc"}))
    done = run(*scoring_args("validate", files, "good", "--config", str(files["config"])))
    assert done.returncode == 3
    assert "valid metrics" in done.stderr


def test_import_is_delegated_to_the_importers(files: dict[str, Path]) -> None:
    done = run("import", "--help")
    assert done.returncode == 0
    assert "FORMAT" in done.stdout


def test_evaluate_works_when_the_importers_are_broken(files: dict[str, Path]) -> None:
    code = (
        "import sys; sys.modules['scoring.importers'] = None\n"
        "from scoring.cli import run_and_exit\n"
        "run_and_exit(sys.argv[1:])\n"  # as python -m scoring ends: no teardown for pyarrow to abort in
    )
    done = run(*scoring_args("evaluate", files), code=code)
    assert done.returncode == 0, done.stderr
    assert one_json_object(done.stdout)["n_items"] == 3


def test_unknown_command_is_a_usage_error() -> None:
    assert run("score").returncode == 2
