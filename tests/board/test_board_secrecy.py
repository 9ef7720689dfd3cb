"""Attacks on the board's new surfaces (docs/PROBING.md): columns, sorting, CSV, across phases, p and stat_rank.

The rule tested everywhere: no figure of the board (page, API, CSV, across phases) tells a
participant more than the submission page shows them of that submission, except a view's
ranking figure, which is shown like the overall primary metric; and the statistics drawn
from per-item correctness use the shown split's items of shown slices only.
"""

from __future__ import annotations

import csv
import io

from sqlalchemy import update

from leaderboard.accounts import OPERATOR
from leaderboard.board import BoardQuery, board_changed, board_csv, rank, ranking
from leaderboard.board.across_phases import across_phases
from leaderboard.board.cells import read_path
from leaderboard.models import Phase
from leaderboard.organizing import phases
from leaderboard.submissions import accept_submission, active_score, visible_scores

VIEWS = [{"name": "Overall", "metric": "accuracy",
          "columns": ["answer_rate", "popularity.tail.accuracy", "breakdowns.category.science.accuracy"]},
         {"name": "Tail", "metric": "popularity.tail.accuracy", "columns": ["popularity.head.accuracy"]}]


def upload(ctx, phase, user, content: bytes):
    """Accept content as an upload by user (scored inline)."""
    return accept_submission(ctx, phase_id=phase.id, user=user, filename="p.csv", stream=io.BytesIO(content))


def every_row(ctx, phase, view=None):
    """Return every row of a view as an anonymous reader sees it."""
    ctx.session.expire_all()
    return ranking.leaderboard(ctx, phase_id=phase.id, query=BoardQuery(view=view, every_row=True))


def own_view(ctx, submission, user):
    """Return what the submission page shows its owner (the participant's view of their own scores)."""
    ctx.session.expire_all()
    return visible_scores(ctx, submission=submission, viewer=user)


def test_no_board_column_shows_more_than_the_owners_submission_page(ctx, make_phase, make_user, make_predictions,
                                                                    labels_file):
    labels = labels_file(private=True)
    phase = make_phase(private=True, config={"task_type": "binary", "views": VIEWS, "min_slice_items": 2})
    users = [make_user() for _ in range(3)]
    subs = [upload(ctx, phase, u, make_predictions(labels, wrong=w, abstain=a))
            for u, w, a in zip(users, ({"q1"}, {"q3", "q5"}, set()), (set(), {"q8"}, {"q2", "q3", "q4"}),
                               strict=True)]
    board = every_row(ctx, phase)
    for sub, user in zip(subs, users, strict=True):
        row = next(r for r in board.rows if r.submission_id == sub.id)
        page = own_view(ctx, sub, user)
        for path in board.columns:
            assert row.columns[path][0] == read_path(page, path)[0], path
        assert row.columns["answer_rate"][0] is None  # membership: the public split's answer rate is hidden
    phases.close_phase(ctx, actor=OPERATOR, phase_id=phase.id)
    board = every_row(ctx, phase)
    for sub, user in zip(subs, users, strict=True):
        row = next(r for r in board.rows if r.submission_id == sub.id)
        private = (own_view(ctx, sub, user).get("splits") or {}).get("private") or {}
        assert all(row.columns[p][0] == read_path(private, p)[0] for p in board.columns)


def test_a_slice_below_the_minimum_is_blank_and_sorts_last_in_rank_order(ctx, make_phase, make_user,
                                                                         make_predictions):
    phase = make_phase(config={"task_type": "binary", "views": VIEWS, "min_slice_items": 3})
    # science has q1, q2, q5, q7: files answering one or two of them show no science figure at all
    answered_only = {"q1": {"q2", "q5", "q7"}, "q12": {"q5", "q7"}}
    subs = {}
    for name, skipped in answered_only.items():
        subs[name] = upload(ctx, phase, make_user(display_name=f"probe-{name}"), make_predictions(abstain=skipped))
    upload(ctx, phase, make_user(display_name="full"), make_predictions(wrong=1))
    path = "breakdowns.category.science.accuracy"
    board = every_row(ctx, phase)
    blank = [r for r in board.rows if r.columns[path][0] is None]
    assert {r.display_name for r in blank} >= {"probe-q1", "probe-q12"}
    for order in ("asc", "desc"):
        sorted_rows = ranking.leaderboard(ctx, phase_id=phase.id, query=BoardQuery(
            sort=path, order=order, every_row=True)).rows
        tail = [r for r in sorted_rows if r.columns[path][0] is None]
        assert sorted_rows[-len(tail):] == tail  # hidden figures last ...
        assert [r.position for r in tail] == sorted(r.position for r in tail)  # ... in rank order, either way


def test_csv_and_api_rows_carry_the_same_figures_as_the_page(ctx, make_phase, make_user, make_predictions,
                                                            labels_file):
    labels = labels_file(private=True)
    phase = make_phase(private=True, config={"task_type": "binary", "views": VIEWS, "min_slice_items": 2})
    for wrong in ({"q1"}, {"q6", "q7"}, {"q3"}):
        upload(ctx, phase, make_user(), make_predictions(labels, wrong=wrong))
    board = every_row(ctx, phase)
    rows = list(csv.DictReader(io.StringIO(board_csv(board))))
    for shown, written in zip(board.rows, rows, strict=True):
        assert written["accuracy"] == ("" if shown.value is None else str(shown.value))
        for path in board.columns:
            value = shown.columns[path][0]
            assert written[path] == ("" if value is None else str(value))
    # while the private split is hidden, no private figure: every file's private errors change nothing shown
    private_only = upload(ctx, phase, make_user(display_name="private-flips"),
                          make_predictions(labels, wrong={"q5", "q6", "q7", "q8"}))
    clean = upload(ctx, phase, make_user(display_name="clean"), make_predictions(labels))
    board = every_row(ctx, phase)
    by_id = {r.submission_id: r for r in board.rows}
    assert by_id[private_only.id].value == by_id[clean.id].value == 1.0
    assert by_id[private_only.id].columns == by_id[clean.id].columns


def test_p_vs_previous_uses_the_shown_split_only_and_never_the_ladder(ctx, make_phase, make_user,
                                                                      make_predictions, labels_file, monkeypatch):
    labels = labels_file(private=True)
    phase = make_phase(private=True, config={"task_type": "binary", "min_slice_items": 1})
    first = upload(ctx, phase, make_user(), make_predictions(labels))
    second = upload(ctx, phase, make_user(), make_predictions(labels, wrong={"q5", "q6", "q7", "q8"}))
    rows = {r.submission_id: r for r in every_row(ctx, phase).rows}
    assert rows[first.id].rank == 1 and rows[second.id].p_vs_previous is None  # a hidden private split: no p
    monkeypatch.setattr(rank, "P_VALUES_WHILE_OPEN_ONLY_WHEN_SAFE", False)
    board_changed(ctx, phase_id=phase.id)
    rows = {r.submission_id: r for r in every_row(ctx, phase).rows}
    assert rows[second.id].p_vs_previous == 1.0  # the public split's items only: private differences, b + c = 0
    monkeypatch.undo()
    phases.close_phase(ctx, actor=OPERATOR, phase_id=phase.id)
    rows = {r.submission_id: r for r in every_row(ctx, phase).rows}
    assert rows[second.id].p_vs_previous == 0.125  # after close, on the private items: b = 4, c = 0
    laddered = make_phase(config={"task_type": "binary", "public_feedback": "ladder", "min_slice_items": 1})
    for wrong in (0, 3):
        upload(ctx, laddered, make_user(), make_predictions(wrong=wrong))
    assert all(r.p_vs_previous is None for r in every_row(ctx, laddered).rows)


def test_stat_rank_is_a_function_of_the_shown_intervals(ctx, make_phase, make_user, make_predictions):
    phase = make_phase(config={"task_type": "binary", "min_slice_items": 1})
    for wrong in (0, 1, 4, 7):
        upload(ctx, phase, make_user(), make_predictions(wrong=wrong))
    ranked = [r for r in every_row(ctx, phase).rows if r.rank is not None]
    for row in ranked:
        better = [o for o in ranked if o.ci is not None and row.ci is not None and o.ci[0] > row.ci[1]]
        assert row.stat_rank == 1 + len(better)


def test_across_phases_shows_only_what_each_phase_board_shows(ctx, make_competition, make_phase, make_user,
                                                              make_predictions, make_organizer):
    owner = make_organizer()
    competition = make_competition(created_by=owner)
    shown = make_phase(competition, name="Shown")
    hidden = make_phase(competition, name="Hidden", leaderboard_visibility="hidden")
    upcoming = make_phase(competition, name="Soon", status="upcoming")
    user = make_user(display_name="solver")
    for phase in (shown, hidden):
        upload(ctx, phase, user, make_predictions(wrong=1))
    ctx.session.execute(update(Phase).where(Phase.id == upcoming.id).values(start_at=None))
    ctx.session.commit()
    board = across_phases(ctx, slug=competition.slug, viewer=user)
    assert [c.phase.name for c in board.columns] == ["Shown"]
    row = next(r for r in board.rows if r.display_name == "solver")
    assert row.values == {shown.id: every_row(ctx, shown).rows[0].value}
    organizer = across_phases(ctx, slug=competition.slug, viewer=owner)
    assert [c.phase.name for c in organizer.columns] == ["Shown", "Hidden", "Soon"]
    stranger = across_phases(ctx, slug=competition.slug, viewer=make_organizer())
    assert [c.phase.name for c in stranger.columns] == ["Shown"]


def test_a_reader_never_receives_result_objects_or_bits(ctx, make_phase, make_user, make_predictions):
    phase = make_phase(config={"task_type": "binary", "min_slice_items": 1})
    sub = upload(ctx, phase, make_user(), make_predictions(wrong=2))
    assert active_score(sub).correct_bits  # the scorer kept the bits ...
    board = every_row(ctx, phase)
    text = repr(board.rows) + board_csv(board)
    assert "correct_bits" not in text and "breakdowns" not in repr(board.rows)  # ... and no row carries them
