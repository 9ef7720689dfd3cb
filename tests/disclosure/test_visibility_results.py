"""Visibility of results: private split hidden until close, rounding (the ranking: test_board_ranking.py)."""

from __future__ import annotations

import io

from leaderboard.accounts import OPERATOR
from leaderboard.disclosure import round_floats, visible_results
from leaderboard.organizing import phases
from leaderboard.submissions import accept_submission, active_score


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
    public = round_floats(results["splits"]["public"]["overall"])
    assert shown["overall"]["accuracy"] == public["accuracy"] == 0.75
    assert shown["n_items"] == 4 and shown["file"] == {"n_items": 8, "answered": 8, "answer_rate": 1.0}
    assert not {"n", "answered", "answer_rate", "selective_accuracy"} & set(shown["overall"])  # membership
    phases.close_phase(ctx, actor=OPERATOR, phase_id=phase.id)
    after = visible_results(results, phase=phase)
    assert after["splits"]["private"]["overall"]["accuracy"] == 0.5
    assert after["overall"]["accuracy"] == 0.625


def test_organizers_see_private_results_before_close(ctx, make_phase, make_user, make_predictions, labels_file):
    phase, user = make_phase(private=True), make_user()
    results = active_score(upload(ctx, phase, user, make_predictions(labels_file(private=True)))).results
    assert "private" in visible_results(results, phase=phase, viewer_is_organizer=True)["splits"]


def test_without_splits_the_whole_object_is_shown(ctx, make_phase, make_user, make_predictions):
    phase, user = make_phase(config={"task_type": "binary", "min_slice_items": 1}), make_user()
    results = active_score(upload(ctx, phase, user, make_predictions(wrong=3))).results
    shown = visible_results(results, phase=phase)
    exact = round_floats(results)["overall"]
    assert shown["overall"]["exact"] == ["accuracy", "answer_rate", "answered", "n"]  # the ranked figure, own counts
    assert {key: shown["overall"][key] for key in shown["overall"]["exact"]} == {
        key: exact[key] for key in shown["overall"]["exact"]}
    assert "correct" not in shown["overall"] and abs(shown["overall"]["f1"] - exact["f1"]) <= shown["overall"]["grid"]
    assert {field: set(values) for field, values in shown["breakdowns"].items()} == {
        field: set(values) for field, values in results["breakdowns"].items()}
    assert set(shown["popularity"]) == {*results["popularity"], "error"}  # how far each coarse difference may be
    assert shown["overall"]["accuracy"] == 0.625


def test_every_shown_float_is_rounded_to_four_decimals(ctx, make_phase, make_user, make_predictions):
    phase, user = make_phase(config={"task_type": "binary", "min_slice_items": 1}), make_user()
    results = active_score(upload(ctx, phase, user, make_predictions(wrong=1, abstain={"q8"}))).results
    shown = visible_results(results, phase=phase)
    values = list(floats(shown))
    assert values and all(round(v, 4) == v for v in values)
    assert any(round(v, 4) != v for v in floats(results))  # there was something to round
    assert all(len(pair) == 2 for pair in shown["overall"]["ci"].values() if pair is not None)


def test_round_floats_reaches_nested_lists():
    assert round_floats({"ci": {"f1": [0.123456, None]}, "n": 3, "ok": True}) == {
        "ci": {"f1": [0.1235, None]}, "n": 3, "ok": True}
