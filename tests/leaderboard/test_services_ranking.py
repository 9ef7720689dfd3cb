"""Visibility of results and the ranking: private split hidden until close, ties, baselines, CSV."""

from __future__ import annotations

import csv
import io
from datetime import timedelta

import pytest
from sqlalchemy import update

from leaderboard.models import Submission
from leaderboard.services import phases, ranking
from leaderboard.services.errors import Forbidden
from leaderboard.services.submissions import accept_submission, active_score
from leaderboard.services.visibility import round_floats, visible_results
from leaderboard.services.permissions import OPERATOR


def upload(ctx, phase, user, content: bytes):
    """Accept content as an upload by user."""
    return accept_submission(ctx, phase_id=phase.id, user=user, filename="p.csv", stream=io.BytesIO(content))


def floats(value):
    """Yield every float in a nested structure."""
    if isinstance(value, float):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from floats(item)
    elif isinstance(value, list):
        for item in value:
            yield from floats(item)


def test_private_split_is_hidden_while_open_and_shown_after_close(ctx, make_phase, make_user, make_predictions,
                                                                  labels_file):
    phase, user = make_phase(private=True), make_user()
    submission = upload(ctx, phase, user, make_predictions(labels_file(private=True), wrong={"q2", "q5", "q6"}))
    results = active_score(submission).results
    shown = visible_results(results, phase=phase)
    assert "splits" not in shown
    assert shown["overall"] == round_floats(results["splits"]["public"]["overall"])
    assert shown["overall"]["n"] == 4 and shown["overall"]["accuracy"] == 0.75
    phases.close_phase(ctx, actor=OPERATOR, phase_id=phase.id)
    after = visible_results(results, phase=phase)
    assert after["splits"]["private"]["overall"]["accuracy"] == 0.5
    assert after["overall"]["accuracy"] == 0.625


def test_organizers_see_private_results_before_close(ctx, make_phase, make_user, make_predictions, labels_file):
    phase, user = make_phase(private=True), make_user()
    results = active_score(upload(ctx, phase, user, make_predictions(labels_file(private=True)))).results
    assert "private" in visible_results(results, phase=phase, viewer_is_organizer=True)["splits"]


def test_without_splits_the_whole_object_is_shown(ctx, make_phase, make_user, make_predictions):
    phase, user = make_phase(), make_user()
    results = active_score(upload(ctx, phase, user, make_predictions(wrong=3))).results
    assert visible_results(results, phase=phase) == round_floats(results)
    assert visible_results(results, phase=phase)["overall"]["accuracy"] == 0.625


def test_every_shown_float_is_rounded_to_four_decimals(ctx, make_phase, make_user, make_predictions):
    phase, user = make_phase(), make_user()
    results = active_score(upload(ctx, phase, user, make_predictions(wrong=1, abstain={"q8"}))).results
    shown = visible_results(results, phase=phase)
    values = list(floats(shown))
    assert values and all(round(v, 4) == v for v in values)
    assert any(round(v, 4) != v for v in floats(results))  # there was something to round
    assert all(len(pair) == 2 for pair in shown["overall"]["ci"].values() if pair is not None)


def test_round_floats_reaches_nested_lists():
    assert round_floats({"ci": {"f1": [0.123456, None]}, "n": 3, "ok": True}) == {
        "ci": {"f1": [0.1235, None]}, "n": 3, "ok": True}


def test_one_row_per_participant_best_first_baselines_flagged(ctx, make_phase, make_user, make_predictions):
    phase = make_phase()
    alice, bob = make_user(display_name="alice"), make_user(display_name="bob")
    upload(ctx, phase, alice, make_predictions(wrong=4))
    best = upload(ctx, phase, alice, make_predictions(wrong=1))
    upload(ctx, phase, bob, make_predictions(wrong=2))
    board = ranking.leaderboard(ctx, phase_id=phase.id)
    people = [r for r in board.rows if not r.is_baseline]
    assert [(r.rank, r.display_name, r.primary, r.entries) for r in people] == [
        (1, "alice", 0.875, 2), (2, "bob", 0.75, 1)]
    assert people[0].submission_id == best.id
    baselines = [r for r in board.rows if r.is_baseline]
    assert {r.baseline_name for r in baselines} == {"Majority class", "Random (seed 0)", "All yes"}
    assert all(r.rank is None for r in baselines)
    primaries = [r.primary for r in board.rows]
    assert primaries == sorted(primaries, reverse=True)
    assert "@" not in repr([(r.display_name, r.results) for r in board.rows])


def test_ties_go_to_the_earlier_submission_then_the_lower_id(ctx, make_phase, make_user, make_predictions):
    phase = make_phase()
    late, early, same_time = make_user(), make_user(), make_user()
    late_sub = upload(ctx, phase, late, make_predictions(wrong=1))
    early_sub = upload(ctx, phase, early, make_predictions(wrong={"q3"}))
    same_sub = upload(ctx, phase, same_time, make_predictions(wrong={"q4"}))
    base = late_sub.created_at
    for submission, when in ((late_sub, base + timedelta(minutes=5)), (early_sub, base),
                             (same_sub, base + timedelta(minutes=5))):
        ctx.session.execute(update(Submission).where(Submission.id == submission.id).values(created_at=when))
    ctx.session.commit()
    ctx.session.expire_all()
    board = ranking.leaderboard(ctx, phase_id=phase.id)
    people = [r.submission_id for r in board.rows if not r.is_baseline]
    assert people == [early_sub.id, late_sub.id, same_sub.id]
    assert "earlier submission" in board.rule and "lower submission id" in board.rule


def test_a_participants_tied_resubmission_does_not_replace_the_earlier_one(ctx, make_phase, make_user,
                                                                          make_predictions):
    phase, user = make_phase(), make_user()
    first = upload(ctx, phase, user, make_predictions(wrong=1))
    upload(ctx, phase, user, make_predictions(wrong={"q8"}))
    row = next(r for r in ranking.leaderboard(ctx, phase_id=phase.id).rows if not r.is_baseline)
    assert row.submission_id == first.id


def test_ranking_uses_public_split_while_open_and_private_after_close(ctx, make_phase, make_user,
                                                                      make_predictions, labels_file):
    labels = labels_file(private=True)
    phase = make_phase(private=True)
    public_star, private_star = make_user(display_name="public-star"), make_user(display_name="private-star")
    upload(ctx, phase, public_star, make_predictions(labels, wrong={"q5", "q6", "q7"}))
    upload(ctx, phase, private_star, make_predictions(labels, wrong={"q1"}))
    open_board = ranking.leaderboard(ctx, phase_id=phase.id)
    assert open_board.split == "public"
    assert [r.display_name for r in open_board.rows if not r.is_baseline] == ["public-star", "private-star"]
    assert all("splits" not in r.results for r in open_board.rows)
    phases.close_phase(ctx, actor=OPERATOR, phase_id=phase.id)
    closed_board = ranking.leaderboard(ctx, phase_id=phase.id)
    assert closed_board.split == "private" and "private split" in closed_board.rule
    assert [(r.display_name, r.primary) for r in closed_board.rows if not r.is_baseline] == [
        ("private-star", 1.0), ("public-star", 0.25)]


def test_phase_without_splits_ranks_on_all_items(ctx, make_phase):
    board = ranking.leaderboard(ctx, phase_id=make_phase().id)
    assert board.split == "all" and board.primary_metric == "accuracy" and board.higher_is_better


def test_hidden_leaderboard_is_for_organizers_only(ctx, make_phase, make_user, make_organizer):
    phase = make_phase(leaderboard_visibility="hidden")
    for viewer in (None, make_user()):
        with pytest.raises(Forbidden):
            ranking.leaderboard(ctx, phase_id=phase.id, viewer=viewer)
    assert ranking.leaderboard(ctx, phase_id=phase.id, viewer=make_organizer()).rows


def test_hidden_leaderboard_is_refused_to_another_competitions_organizer(ctx, make_competition, make_phase,
                                                                          make_organizer):
    owner, other = make_organizer(), make_organizer()
    phase = make_phase(make_competition(created_by=owner), leaderboard_visibility="hidden")
    with pytest.raises(Forbidden):
        ranking.leaderboard(ctx, phase_id=phase.id, viewer=other)
    assert ranking.leaderboard(ctx, phase_id=phase.id, viewer=owner).rows


def test_leaderboard_csv_has_a_row_per_entry_and_the_primary_metric(ctx, make_phase, make_user, make_predictions):
    phase = make_phase()
    upload(ctx, phase, make_user(display_name="-cmd"), make_predictions(wrong=2))
    board = ranking.leaderboard(ctx, phase_id=phase.id)
    rows = list(csv.DictReader(io.StringIO(ranking.leaderboard_csv(board))))
    assert len(rows) == len(board.rows) == 4
    top = rows[0]
    assert (top["rank"], top["name"], top["is_baseline"], top["accuracy"]) == ("1", "'-cmd", "false", "0.75")
    assert top["overall.n"] == "8" and "category.science.accuracy" in top and "popularity.tail.accuracy" in top
    assert top["submitted_at"].endswith("Z")
    assert all(r["rank"] == "" for r in rows[1:])


def test_builtin_baselines_rank_rows_carry_overall_scores_only(ctx, make_phase, make_user, make_predictions):
    phase = make_phase()
    upload(ctx, phase, make_user(), make_predictions(wrong=1))
    rows = ranking.leaderboard(ctx, phase_id=phase.id).rows
    builtin = [r for r in rows if r.is_baseline]
    assert builtin and all(set(r.results) <= {"n_items", "overall", "warnings"} for r in builtin)
    participant = next(r for r in rows if not r.is_baseline)
    assert "breakdowns" in participant.results and "popularity" in participant.results
