"""Probing settings (docs/PROBING.md) from the CLI and the services, and the ladder's decisions."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from leaderboard.accounts import OPERATOR, access
from leaderboard.board import ranking
from leaderboard.disclosure import ladder_walk, probing_settings, rounded_to_step, update_probing_settings
from leaderboard.disclosure.probing import default_step
from leaderboard.organizing import phase_settings, phases
from leaderboard.platform import Forbidden, InvalidInput
from leaderboard.submissions import accept_submission, visible_scores


def run(runner, *args: str):
    """Invoke a CLI command and return (exit code, output lines)."""
    result = runner.invoke(args=list(args))
    return result.exit_code, result.output.strip().splitlines()


def test_ladder_releases_only_values_beating_the_shown_best_by_more_than_the_step() -> None:
    decisions = ladder_walk([(1, 0.50), (2, 0.55), (3, 0.62), (4, 0.61), (5, None)], step=0.1, higher=True)
    assert [(d.released, d.shown, d.shown_by) for d in decisions.values()] == [
        (True, 0.5, 1), (False, 0.5, 1), (True, 0.6, 3), (False, 0.6, 3), (False, 0.6, 3)]


def test_ladder_for_a_lower_is_better_metric_needs_a_drop_of_more_than_the_step() -> None:
    decisions = ladder_walk([(1, 0.30), (2, 0.25), (3, 0.10)], step=0.1, higher=False)
    assert [d.released for d in decisions.values()] == [True, False, True]
    assert decisions[3].shown == rounded_to_step(0.10, 0.1) == 0.1


def test_one_more_right_item_never_crosses_the_default_step() -> None:
    for n in (10, 100, 1000, 10_000):  # a flip changes the score by 1/n, the step is 1/sqrt(n)
        step = default_step(n)
        assert all(not ladder_walk([(1, k / n), (2, (k + 1) / n)], step=step, higher=True)[2].released
                   for k in range(0, n, max(1, n // 50)))


def test_default_step_is_one_over_root_n_with_a_floor() -> None:
    assert default_step(100) == 0.1 and default_step(10**9) == 0.001


def test_phases_create_takes_probing_flags(runner, ctx, tmp_path: Path, labels_file) -> None:
    (tmp_path / "labels.jsonl").write_bytes(labels_file())
    assert run(runner, "competitions", "create", "demo", "--title", "Demo", "--operator-only")[0] == 0
    code, lines = run(runner, "phases", "create", "demo", "--name", "P", "--labels", str(tmp_path / "labels.jsonl"),
                      "--min-slice-items", "5", "--public-feedback", "ladder", "--ladder-step", "0.05",
                      "--min-answered", "3")
    assert code == 0, lines
    config = access.get_phase(ctx, int(lines[-1])).task_config
    assert (config["min_slice_items"], config["public_feedback"], config["ladder_step"], config["min_answered"]) == (
        5, "ladder", 0.05, 3)


def test_phases_set_changes_and_restores_settings(runner, ctx, make_phase) -> None:
    phase = make_phase()
    code, lines = run(runner, "phases", "set", str(phase.id), "--public-feedback", "ladder", "--min-answered", "4")
    assert code == 0 and "public_feedback ladder" in lines[-1] and "min_answered 4" in lines[-1]
    ctx.session.expire_all()
    assert (probing_settings(phase).public_feedback, probing_settings(phase).min_answered) == ("ladder", 4)
    assert run(runner, "phases", "set", str(phase.id), "--min-answered", "default")[0] == 0
    ctx.session.expire_all()
    assert probing_settings(phase).min_answered is None and probing_settings(phase).ladder


@pytest.mark.parametrize("args", [("--ladder-step", "2"), ("--min-slice-items", "0"), ("--public-feedback", "x"), ()])
def test_phases_set_refuses_bad_values(runner, make_phase, args) -> None:
    code, lines = run(runner, "phases", "set", str(make_phase().id), *args)
    assert code != 0 and lines


def test_service_refuses_a_bad_setting_naming_it(ctx, make_phase) -> None:
    phase = make_phase()
    with pytest.raises(InvalidInput, match="ladder_step"):
        update_probing_settings(ctx, phase_id=phase.id, actor=OPERATOR, ladder_step=0)
    with pytest.raises(InvalidInput, match="min_answered"):
        update_probing_settings(ctx, phase_id=phase.id, actor=OPERATOR, min_answered=phase.n_items + 1)
    with pytest.raises(InvalidInput, match="do not exist"):
        update_probing_settings(ctx, phase_id=phase.id, actor=OPERATOR, rounding=3)


def test_only_the_competitions_organizers_change_settings(ctx, make_phase, make_user) -> None:
    with pytest.raises(Forbidden):
        update_probing_settings(ctx, phase_id=make_phase().id, actor=make_user(), public_feedback="ladder")


def test_raised_min_answered_refuses_the_next_upload_without_rescoring(ctx, make_phase, make_user,
                                                                       make_predictions) -> None:
    phase, user = make_phase(), make_user()
    accept_submission(ctx, phase_id=phase.id, user=user, filename="p.csv", stream=make_predictions(abstain={"q1"}))
    update_probing_settings(ctx, phase_id=phase.id, actor=OPERATOR, min_answered=8)
    from leaderboard.platform import SubmissionInvalid

    with pytest.raises(SubmissionInvalid):
        accept_submission(ctx, phase_id=phase.id, user=user, filename="p.csv",
                          stream=io.BytesIO(make_predictions(abstain={"q1"})))


def test_switching_to_the_ladder_needs_no_rescoring_and_holds_a_worse_file(ctx, make_phase, make_user,
                                                                           make_predictions) -> None:
    phase, user = make_phase(config={"task_type": "binary", "min_slice_items": 1}), make_user()
    first = accept_submission(ctx, phase_id=phase.id, user=user, filename="a.csv", stream=make_predictions(wrong=2))
    second = accept_submission(ctx, phase_id=phase.id, user=user, filename="b.csv", stream=make_predictions(wrong=3))
    assert visible_scores(ctx, submission=second, viewer=user)["overall"]["accuracy"] == 0.625  # exact
    phase_settings.update_settings(ctx, phase_id=phase.id, actor=OPERATOR, public_feedback="ladder", ladder_step=0.1)
    held = visible_scores(ctx, submission=second, viewer=user)
    assert held["overall"] == {"accuracy": 0.8} and held["feedback"]["released"] is False
    assert set(held) == {"n_items", "overall", "feedback", "warnings"}  # nothing but the held value
    shown = visible_scores(ctx, submission=first, viewer=user)
    assert shown["feedback"]["released"] and "correct" not in json.dumps(shown)
    board = ranking.leaderboard(ctx, phase_id=phase.id)
    mine = next(row for row in board.rows if not row.is_baseline)
    assert (mine.submission_id, mine.value, mine.submissions) == (first.id, 0.8, 2) and "ladder" in board.rule
    phases.close_phase(ctx, actor=OPERATOR, phase_id=phase.id)
    assert visible_scores(ctx, submission=second, viewer=user)["overall"]["accuracy"] == 0.625  # exact after close
