"""CREAK with ``--metadata``: an organizer's category, popularity and split, which the release does not have.

The README's CREAK walkthrough imports ``leaderboard/demo/creak_claims.json`` with
``leaderboard/demo/creak_metadata.json`` and evaluates an all-true file: the result
then has breakdowns by category, head/tail popularity with the gap, and both splits.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from scoring.importers import configure_parser, import_cmd, run_import

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
DEMO = ROOT / "leaderboard" / "demo"
FIXTURES = HERE / "fixtures" / "importers"


def jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line]


def run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser(prog="scoring import")
    configure_parser(parser)
    code = import_cmd(parser.parse_args([str(a) for a in argv]))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def write(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def test_demo_metadata_goes_into_labels_and_public_fields_into_questions(tmp_path: Path) -> None:
    report = run_import("creak", DEMO / "creak_claims.json", tmp_path / "out", metadata=DEMO / "creak_metadata.json")
    metadata = json.loads((DEMO / "creak_metadata.json").read_text("utf-8"))
    labels = jsonl(tmp_path / "out" / "labels.jsonl")
    questions = jsonl(tmp_path / "out" / "questions.jsonl")
    assert len(labels) == 40
    assert all({k: r[k] for k in ("category", "popularity", "split")} == metadata[r["id"]] for r in labels)
    assert all("split" not in q and q["category"] == metadata[q["id"]]["category"] for q in questions)
    assert json.loads((tmp_path / "out" / "phase.json").read_text())["breakdowns"] == ["category"]
    assert report.notes == ("creak_metadata.json: category, popularity, split added to 40 of 40 items",)


def test_the_readme_walkthrough_evaluates_with_breakdowns_popularity_and_splits(tmp_path: Path) -> None:
    """The README's commands, as a participant runs them (python -m scoring)."""
    out = tmp_path / "creak-claims"
    subprocess.run([sys.executable, "-m", "scoring", "import", "creak", DEMO / "creak_claims.json", out,
                    "--metadata", DEMO / "creak_metadata.json"], check=True, cwd=ROOT, capture_output=True)
    preds = tmp_path / "creak-preds.csv"
    preds.write_text("id,prediction\n" + "".join(q["id"] + ",true\n" for q in jsonl(out / "questions.jsonl")))
    done = subprocess.run([sys.executable, "-m", "scoring", "evaluate", "--labels", out / "labels.jsonl",
                           "--predictions", preds, "--config", out / "phase.json"],
                          check=True, cwd=ROOT, capture_output=True, text=True)
    result = json.loads(done.stdout)
    assert sorted(result["breakdowns"]["category"]) == ["culture", "history", "people", "places", "science"]
    assert set(result["popularity"]) == {"head", "tail", "gap", "relative_drop"}
    assert (result["popularity"]["head"]["n"], result["popularity"]["tail"]["n"]) == (21, 19)
    assert "accuracy" in result["popularity"]["gap"]
    assert (result["splits"]["public"]["n_items"], result["splits"]["private"]["n_items"]) == (27, 13)
    assert "group_accuracy" in result["overall"]  # contrast pairs: both claims right


def test_without_metadata_the_demo_has_no_breakdown_popularity_or_split(tmp_path: Path) -> None:
    run_import("creak", DEMO / "creak_claims.json", tmp_path / "out")
    labels = jsonl(tmp_path / "out" / "labels.jsonl")
    assert not any({"category", "popularity", "split"} & set(r) for r in labels)
    assert json.loads((tmp_path / "out" / "phase.json").read_text())["breakdowns"] == []


def test_ids_without_metadata_and_unknown_ids_are_noted_not_invented(tmp_path: Path) -> None:
    meta = write(tmp_path / "meta.json", {"dev_0": {"popularity": 12}, "dev_99": {"category": "x"}})
    report = run_import("creak", FIXTURES / "creak_dev.json", tmp_path / "out", metadata=meta)
    labels = {r["id"]: r for r in jsonl(tmp_path / "out" / "labels.jsonl")}
    assert labels["dev_0"]["popularity"] == 12 and "dev_99" not in labels
    assert sum("popularity" in r for r in labels.values()) == 1
    assert report.notes[0] == "meta.json: category, popularity added to 1 of 4 items"
    assert report.notes[1].startswith("meta.json names no metadata for 3 item(s)")
    assert report.notes[2] == "meta.json names 1 id(s) the source does not have (first: dev_99); ignored"
    assert json.loads((tmp_path / "out" / "phase.json").read_text())["breakdowns"] == []  # no item has a category


@pytest.mark.parametrize(("content", "message"), [
    ([{"dev_0": {}}], "holds a JSON list"),
    ({"dev_0": "head"}, "the value of 'dev_0' is not a JSON object"),
    ({"dev_0": {"popularity": "famous"}}, "'dev_0' has popularity 'famous'; popularity is one of head"),
    ({"dev_0": {"popularity": True}}, "'dev_0' has popularity True"),
    ({"dev_0": {"split": "hidden"}}, "split is public or private"),
    ({"dev_0": {"category": ""}}, "a category is a non-empty string"),
    ({"dev_0": {"label": True}}, "'dev_0' has 'label'; metadata fields are category, popularity, split"),
])
def test_a_bad_metadata_file_exits_3_naming_the_problem_and_writes_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], content: Any, message: str) -> None:
    meta = write(tmp_path / "meta.json", content)
    code, _, err = run(capsys, "creak", FIXTURES / "creak_dev.json", tmp_path / "out", "--metadata", meta)
    assert code == 3 and message in err
    assert not (tmp_path / "out").exists()


def test_metadata_is_for_creak_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "tgcsr", FIXTURES / "tgcsr_ctx-tf-gt.jsonl", tmp_path / "out",
                       "--metadata", DEMO / "creak_metadata.json")
    assert code == 2 and "--metadata cannot be used with format tgcsr" in err


def test_questions_only_file_gets_public_fields_and_never_a_split(tmp_path: Path) -> None:
    meta = write(tmp_path / "meta.json", {"test_0": {"category": "x", "split": "private"}})
    report = run_import("creak", FIXTURES / "creak_test.json", tmp_path / "out", metadata=meta)
    questions = {q["id"]: q for q in jsonl(tmp_path / "out" / "questions.jsonl")}
    assert questions["test_0"]["category"] == "x" and "split" not in questions["test_0"]
    assert not (tmp_path / "out" / "labels.jsonl").exists()
    assert any(note.startswith("meta.json: category added to 1 of 3 items") for note in report.notes)
