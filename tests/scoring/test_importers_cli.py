"""The import subcommand glue: arguments, printed report, exit codes, safe writes."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from scoring.importers import ImportUsageError, configure_parser, import_cmd, run_import

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures" / "importers"
ROOT = HERE.parents[1]


def run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    """Parse ``argv`` like the CLI would and run the import; return (code, out, err)."""
    parser = argparse.ArgumentParser(prog="scoring import")
    configure_parser(parser)
    code = import_cmd(parser.parse_args([str(a) for a in argv]))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_verbose_report_prints_one_line_per_entry_then_the_summary(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "creak", FIXTURES / "creak_dev.json", tmp_path / "out", "--verbose")
    lines = out.splitlines()
    assert code == 0 and err == ""
    assert len(lines) == 7  # six records, then the summary
    assert lines[3] == "line 5: dev_1 -> - skipped: duplicate id (first on line 2)"
    assert lines[-1].startswith(
        "creak creak_dev.json: kept 4 (1 with a note), changed 0, skipped 2")
    assert "labels.jsonl (4)" in lines[-1]


@pytest.mark.parametrize("flags", [(), ("--quiet",)])
def test_by_default_only_entries_with_a_reason_are_printed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: tuple[str, ...]) -> None:
    code, out, _ = run(capsys, "tgcsr", FIXTURES / "tgcsr_ctx-tf-gt.jsonl", tmp_path / "out", *flags)
    assert code == 0
    assert out.splitlines()[:2] == [
        "line 2: VC3-VC1 -> VC3-VC1 kept: tie in gt (3 of 6 yes) counted as yes",
        "line 4: VC4-VC0 -> - skipped: no usable vote (6 missing)"]
    assert len(out.splitlines()) == 3
    assert len((tmp_path / "out" / "report.jsonl").read_text().splitlines()) == 4


def test_notes_are_printed_before_the_summary(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "creak", FIXTURES / "creak_test.json", tmp_path / "out", "--quiet")
    assert out.splitlines()[-2].startswith("note: no record has a label")


def test_missing_source_exits_3_and_writes_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "creak", tmp_path / "nope.json", tmp_path / "out")
    assert code == 3 and out == ""
    assert err.startswith("import: cannot read") and "nope.json" in err
    assert not (tmp_path / "out").exists()


def test_wrong_format_exits_3_and_leaves_an_existing_outdir_alone(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outdir = tmp_path / "out"
    run(capsys, "creak", FIXTURES / "creak_dev.json", outdir)
    before = {p.name: p.read_bytes() for p in outdir.iterdir()}
    code, _, err = run(capsys, "tgcsr", FIXTURES / "colota_qa.json", outdir)
    assert code == 3 and "TG-CSR" in err
    assert {p.name: p.read_bytes() for p in outdir.iterdir()} == before


def test_a_broken_json_line_names_its_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "dev.json"
    lines = (FIXTURES / "creak_dev.json").read_text().splitlines()
    source.write_text("\n".join([lines[0], '{"ex_id": "dev_9", "sentence": ', lines[1]]))
    code, _, err = run(capsys, "creak", source, tmp_path / "out")
    assert code == 3 and "line 2 is not JSON" in err
    assert not (tmp_path / "out").exists()


def test_reimport_replaces_outputs_and_removes_stale_labels(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outdir = tmp_path / "out"
    (tmp_path / "out").mkdir()
    (outdir / "README").write_text("organizer notes")
    run(capsys, "creak", FIXTURES / "creak_dev.json", outdir)
    assert (outdir / "labels.jsonl").exists()
    code, _, _ = run(capsys, "creak", FIXTURES / "creak_test.json", outdir)
    assert code == 0
    assert sorted(p.name for p in outdir.iterdir()) == [
        "README", "phase.json", "questions.jsonl", "report.jsonl"]
    assert len((outdir / "questions.jsonl").read_text().splitlines()) == 3


def test_no_temporary_directory_is_left_behind(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "creak", FIXTURES / "creak_dev.json", tmp_path / "a")
    run(capsys, "creak", FIXTURES / "creak_dev.json", tmp_path / "a")
    run(capsys, "tgcsr", FIXTURES / "creak_dev.json", tmp_path / "b")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a"]
    assert not [p for p in (tmp_path / "a").iterdir() if p.name.startswith(".")]


def test_an_option_of_another_format_exits_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "creak", FIXTURES / "creak_dev.json", tmp_path / "out",
                       "--originals", FIXTURES / "colota_qa_original.csv")
    assert code == 2 and "--originals cannot be used with format creak" in err
    assert not (tmp_path / "out").exists()


def test_unknown_format_names_the_choices(tmp_path: Path) -> None:
    with pytest.raises(ImportUsageError, match="creak, colota, tgcsr, comparisonqa"):
        run_import("lint", FIXTURES / "creak_dev.json", tmp_path / "out")


def test_parser_refuses_an_unknown_format(capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser()
    configure_parser(parser)
    with pytest.raises(SystemExit) as exc:
        parser.parse_args(["lint", "a", "b"])
    assert exc.value.code == 2


def test_outputs_are_utf8_json_lines_with_unescaped_text(tmp_path: Path) -> None:
    run_import("comparisonqa", FIXTURES / "comparisonqa_small.json", tmp_path / "out")
    raw = (tmp_path / "out" / "questions.jsonl").read_bytes()
    assert "Kępa Barnicka".encode() in raw and raw.endswith(b"\n") and b"\r" not in raw
    assert json.loads(raw.splitlines()[0])["id"] == "Character_1-high"


def test_importers_never_import_the_web_stack() -> None:
    code = ("import sys, scoring.importers; "
            "print(sorted(m for m in ('flask', 'sqlalchemy', 'boto3', 'pandas', 'sklearn') "
            "if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                            text=True, check=True)
    assert result.stdout.strip() == "[]"
