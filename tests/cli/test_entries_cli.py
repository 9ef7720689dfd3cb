"""The organizer command line for entries (docs/ENTRIES.md): baselines with metadata, max_methods, final_selections."""

from __future__ import annotations

import json

from sqlalchemy import select

from leaderboard.entries import rules
from leaderboard.models import AuditEntry, Baseline, Phase, Submission


def run(runner, *args: str):
    """Invoke a CLI command and return (exit code, output lines)."""
    result = runner.invoke(args=list(args))
    return result.exit_code, result.output.strip().splitlines()


def test_baselines_add_scores_a_flagged_baseline_with_typed_metadata(runner, ctx, make_phase, make_predictions,
                                                                     tmp_path):
    phase = make_phase()
    path = tmp_path / "gpt.csv"
    path.write_bytes(make_predictions(wrong=2))
    code, lines = run(runner, "baselines", "add", str(phase.id), "--name", "GPT-4o zero-shot", "--file", str(path),
                      "--meta", "model=GPT-4o", "--meta", "open_weights=no", "--meta", "parameters_b=200",
                      "--meta", "prompting=zero-shot")
    assert code == 0, lines
    submission = ctx.session.get(Submission, int(lines[-1]))
    assert submission.is_baseline and submission.status == "scored"
    assert submission.entry_metadata == {"model": "GPT-4o", "parameters_b": 200, "open_weights": False,
                                         "prompting": "zero-shot"}
    baseline = ctx.session.scalar(select(Baseline).where(Baseline.submission_id == submission.id))
    assert (baseline.name, baseline.kind) == ("GPT-4o zero-shot", "uploaded")
    audit = ctx.session.scalars(select(AuditEntry.summary)).all()
    assert any("baseline “GPT-4o zero-shot” added" in line for line in audit)


def test_baselines_add_names_an_unknown_metadata_key_and_adds_nothing(runner, ctx, make_phase, make_predictions,
                                                                      tmp_path):
    phase = make_phase()
    path = tmp_path / "b.csv"
    path.write_bytes(make_predictions())
    code, lines = run(runner, "baselines", "add", str(phase.id), "--name", "Human", "--file", str(path),
                      "--meta", "gpu=yes")
    assert code == 1 and "gpu" in lines[-1]
    code, lines = run(runner, "baselines", "add", str(phase.id), "--name", "Human", "--file", str(path),
                      "--meta", "parameters_b")
    assert code == 1 and "not key=value" in lines[-1]
    assert ctx.session.scalar(select(Baseline.id).where(Baseline.name == "Human")) is None


def test_baselines_add_refuses_a_bad_file_and_a_missing_phase(runner, make_phase, tmp_path):
    phase = make_phase()
    path = tmp_path / "b.csv"
    path.write_bytes(b"id,prediction\nq1,maybe\n")
    code, lines = run(runner, "baselines", "add", str(phase.id), "--name", "Broken", "--file", str(path))
    assert code == 1 and "not accepted" in lines[-1]
    code, lines = run(runner, "baselines", "add", "9999", "--name", "X", "--file", str(path))
    assert code == 1 and "No phase 9999" in lines[-1]


def test_phases_set_changes_the_entry_settings(runner, ctx, make_phase):
    phase = make_phase()
    code, lines = run(runner, "phases", "set", str(phase.id), "--max-methods", "2", "--final-selections", "1")
    assert code == 0, lines
    assert lines[-1].endswith("max_methods 2, final_selections 1.")
    ctx.session.expire_all()
    assert (rules.max_methods(phase), rules.final_selections(phase)) == (2, 1)
    code, lines = run(runner, "phases", "set", str(phase.id), "--final-selections", "default")
    ctx.session.expire_all()
    assert code == 0 and rules.final_selections(phase) is None
    code, lines = run(runner, "phases", "set", str(phase.id), "--max-methods", "0")
    assert code != 0


def test_phases_create_takes_the_entry_settings(runner, ctx, make_competition, labels_file, tmp_path):
    competition = make_competition()
    labels = tmp_path / "labels.jsonl"
    labels.write_bytes(labels_file())
    config = tmp_path / "phase.json"
    config.write_text(json.dumps({"task_type": "binary"}))
    code, lines = run(runner, "phases", "create", competition.slug, "--name", "P", "--labels", str(labels),
                      "--config", str(config), "--max-methods", "4", "--final-selections", "2")
    assert code == 0, lines
    phase = ctx.session.get(Phase, int(lines[-1]))
    assert (rules.max_methods(phase), rules.final_selections(phase)) == (4, 2)
