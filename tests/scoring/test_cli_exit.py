"""How ``python -m scoring`` ends: 0/2/3 for the three outcomes, output flushed before the fast exit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def scoring(*args: str, stdout: object = subprocess.PIPE) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "scoring", *args], stdout=stdout, stderr=subprocess.PIPE,
                          cwd=ROOT, env=env, timeout=120, check=False)


@pytest.fixture
def inputs(tmp_path: Path) -> dict[str, str]:
    rows = 3000  # enough output that an unflushed buffer would lose part of it
    (tmp_path / "labels.jsonl").write_text(
        "".join(json.dumps({"id": f"q{i}", "label": i % 2 == 0, "category": f"c{i % 40}"}) + "\n"
                for i in range(rows)))
    (tmp_path / "good.csv").write_text("id,prediction\n" + "".join(f"q{i},true\n" for i in range(rows)))
    (tmp_path / "bad.csv").write_text("id,prediction\n" + "".join(f"q{i},maybe\n" for i in range(rows)))
    (tmp_path / "broken.jsonl").write_text('{"id": "q0", "label": \n')
    return {name: str(tmp_path / name) for name in ("labels.jsonl", "good.csv", "bad.csv", "broken.jsonl")}


@pytest.mark.parametrize(("command", "predictions", "labels", "expected"), [
    ("evaluate", "good.csv", "labels.jsonl", 0),
    ("validate", "good.csv", "labels.jsonl", 0),
    ("evaluate", "bad.csv", "labels.jsonl", 2),
    ("validate", "bad.csv", "labels.jsonl", 2),
    ("evaluate", "good.csv", "broken.jsonl", 3),
    ("validate", "good.csv", "broken.jsonl", 3),
])
def test_exit_code_is_0_2_or_3_and_stdout_is_complete_json_when_it_is_a_file(
    inputs: dict[str, str], tmp_path: Path, command: str, predictions: str, labels: str, expected: int,
) -> None:
    out = tmp_path / "out.json"
    with out.open("wb") as sink:  # a file is block-buffered: only a flush before the exit writes it all
        done = scoring(command, "--labels", inputs[labels], "--predictions", inputs[predictions], stdout=sink)
    assert done.returncode == expected, done.stderr
    if expected == 3:
        assert out.read_bytes() == b"" and b"invalid label file" in done.stderr
    else:
        assert isinstance(json.loads(out.read_bytes()), dict)


def test_usage_errors_exit_2_and_help_exits_0() -> None:
    assert scoring("evaluate").returncode == 2
    assert scoring("--help").returncode == 0


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_an_answer_that_cannot_be_written_is_not_a_success(inputs: dict[str, str]) -> None:
    with open("/dev/full", "wb") as full:
        done = scoring("validate", "--labels", inputs["labels.jsonl"], "--predictions", inputs["good.csv"],
                       stdout=full)
    assert done.returncode not in (0, 2, 3)
