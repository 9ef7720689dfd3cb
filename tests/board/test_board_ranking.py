"""The materialized board (docs/RANKING.md): entries, ties, splits, close by clock, moderation, rescoring, selection.

Every change a writer makes is on the board when its call returns; reading a board
never sees a stale row.
"""

from __future__ import annotations

import csv
import io
from datetime import timedelta

import pytest
from sqlalchemy import select, update

from leaderboard.accounts import OPERATOR
from leaderboard.board import BoardQuery, board_changed, board_csv, ranking, rebuild_from_scratch
from leaderboard.board.versions import REFRESH_GRACE
from leaderboard.models import Board, BoardRow, Phase, Score, ScoreCell, Submission, Team, TeamMember
from leaderboard.organizing import phases, update_settings
from leaderboard.platform import Forbidden, InvalidInput
from leaderboard.platform.db import utcnow
from leaderboard.submissions import accept_submission, score_submission


def upload(ctx, phase, user, content: bytes, **fields):
    """Accept content as an upload by user (scored inline)."""
    return accept_submission(ctx, phase_id=phase.id, user=user, filename="p.csv", stream=io.BytesIO(content),
                             **fields)


def people(board) -> list[tuple]:
    """Return (rank, name, method, value) of the board's ranked rows."""
    return [(r.rank, r.display_name, r.method, r.value) for r in board.rows if not r.is_baseline]


def read(ctx, phase, **query):
    """Return the phase's board as an anonymous reader sees it."""
    ctx.session.expire_all()
    return ranking.leaderboard(ctx, phase_id=phase.id, query=BoardQuery(**query))


def test_one_row_per_entry_best_first_baselines_flagged(ctx, make_phase, make_user, make_predictions):
    phase = make_phase()
    alice, bob = make_user(display_name="alice"), make_user(display_name="bob")
    upload(ctx, phase, alice, make_predictions(wrong=4))
    best = upload(ctx, phase, alice, make_predictions(wrong=1))
    upload(ctx, phase, bob, make_predictions(wrong=2))
    board = read(ctx, phase)
    assert people(board) == [(1, "alice", "default", 0.875), (2, "bob", "default", 0.75)]
    assert board.rows[0].submission_id == best.id and board.rows[0].submissions == 2
    baselines = [r for r in board.rows if r.is_baseline]
    assert {r.display_name for r in baselines} == {"Majority class", "Random (seed 0)", "All yes"}
    assert all(r.rank is None and r.stat_rank is None and r.p_vs_previous is None for r in baselines)
    values = [r.value for r in board.rows]
    assert values == sorted(values, reverse=True)


def test_two_methods_are_two_rows_and_a_team_is_one(ctx, make_phase, make_user, make_predictions):
    phase = make_phase()
    alice, bob, carol = make_user(display_name="alice"), make_user(display_name="bob"), make_user()
    upload(ctx, phase, alice, make_predictions(wrong=1), method="zero-shot")
    upload(ctx, phase, alice, make_predictions(wrong=3), method="few-shot")
    team = Team(competition_id=phase.competition_id, name="Tail Team", invite_code="code-1")
    ctx.session.add(team)
    ctx.session.flush()
    ctx.session.add_all([TeamMember(team_id=team.id, user_id=u.id, competition_id=phase.competition_id)
                         for u in (bob, carol)])
    ctx.session.commit()
    upload(ctx, phase, bob, make_predictions(wrong=2))
    upload(ctx, phase, carol, make_predictions(wrong=0))
    assert people(read(ctx, phase)) == [(1, "Tail Team", "default", 1.0), (2, "alice", "zero-shot", 0.875),
                                        (3, "alice", "few-shot", 0.625)]
    mine = ranking.leaderboard(ctx, phase_id=phase.id, viewer=bob).rows
    assert [r.display_name for r in mine if r.mine] == ["Tail Team"]
    assert [r.method for r in ranking.viewer_entries(ctx, phase_id=phase.id, viewer=alice)] == ["zero-shot",
                                                                                              "few-shot"]


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
    board_changed(ctx, phase_id=phase.id)
    board = read(ctx, phase)
    assert [r.submission_id for r in board.rows if not r.is_baseline] == [early_sub.id, late_sub.id, same_sub.id]
    assert "earlier submission" in board.rule and "lower submission id" in board.rule


def test_public_split_while_open_private_after_close(ctx, make_phase, make_user, make_predictions, labels_file):
    labels = labels_file(private=True)
    phase = make_phase(private=True)
    upload(ctx, phase, make_user(display_name="public-star"), make_predictions(labels, wrong={"q5", "q6", "q7"}))
    upload(ctx, phase, make_user(display_name="private-star"), make_predictions(labels, wrong={"q1"}))
    board = read(ctx, phase)
    assert board.split == "public" and [r[1] for r in people(board)] == ["public-star", "private-star"]
    phases.close_phase(ctx, actor=OPERATOR, phase_id=phase.id)
    closed = read(ctx, phase)
    assert closed.split == "private" and "private split" in closed.rule
    assert [(r[1], r[3]) for r in people(closed)] == [("private-star", 1.0), ("public-star", 0.25)]


def test_a_phase_closing_by_the_clock_shows_its_private_ranking_without_any_write(ctx, make_phase, make_user,
                                                                                  make_predictions, labels_file):
    labels = labels_file(private=True)
    phase = make_phase(private=True, status="upcoming", start_at=utcnow() - timedelta(days=1),
                       end_at=utcnow() + timedelta(days=1))
    upload(ctx, phase, make_user(display_name="public-star"), make_predictions(labels, wrong={"q5", "q6", "q7"}))
    upload(ctx, phase, make_user(display_name="private-star"), make_predictions(labels, wrong={"q1"}))
    assert read(ctx, phase).split == "public"
    before = ctx.session.scalar(select(Board.version).where(Board.phase_id == phase.id))
    # the end date passes: no writer, no board_changed
    ctx.session.execute(update(Phase).where(Phase.id == phase.id).values(end_at=utcnow() - timedelta(seconds=1)))
    ctx.session.commit()
    closed = read(ctx, phase)
    assert closed.split == "private" and [r[1] for r in people(closed)] == ["private-star", "public-star"]
    assert ctx.session.scalar(select(Board.version).where(Board.phase_id == phase.id)) == before


def test_hiding_and_rescoring_change_the_board_at_once(ctx, runtime, make_phase, make_user, make_predictions):
    phase = make_phase()
    alice, bob = make_user(display_name="alice"), make_user(display_name="bob")
    upload(ctx, phase, alice, make_predictions(wrong=3))
    top = upload(ctx, phase, alice, make_predictions(wrong=0))
    upload(ctx, phase, bob, make_predictions(wrong=1))
    assert people(read(ctx, phase))[0] == (1, "alice", "default", 1.0)
    ctx.session.execute(update(Submission).where(Submission.id == top.id).values(moderation="disqualified"))
    ctx.session.commit()
    board_changed(ctx, phase_id=phase.id)
    assert people(read(ctx, phase)) == [(1, "bob", "default", 0.875), (2, "alice", "default", 0.625)]
    assert str(top.id) not in board_csv(read(ctx, phase, every_row=True)).split(",")
    # re-scoring bob's file against corrected labels moves him at once
    bob_sub = next(r.submission_id for r in read(ctx, phase).rows if r.display_name == "bob")
    ctx.session.execute(update(Submission).where(Submission.id == bob_sub).values(status="queued"))
    ctx.session.commit()
    score_submission(runtime.context(runtime.sessions()), submission_id=bob_sub)
    assert people(read(ctx, phase))[0][1] == "bob"
    active = ctx.session.scalars(select(Score.id).where(Score.submission_id == bob_sub,
                                                          Score.retired_at.is_(None))).all()
    shown = read(ctx, phase).rows[0]
    assert len(active) == 1 and ctx.session.scalar(select(BoardRow.score_id).where(
        BoardRow.submission_id == bob_sub, BoardRow.board == "open", BoardRow.view == 0)) == active[0]
    assert shown.submission_id == bob_sub


def test_a_reader_refreshes_an_announced_change_nobody_built_once_the_grace_is_over(ctx, make_phase, make_user,
                                                                             make_predictions):
    phase = make_phase()
    top = upload(ctx, phase, make_user(display_name="alice"), make_predictions(wrong=0))
    upload(ctx, phase, make_user(display_name="bob"), make_predictions(wrong=1))
    ctx.session.execute(update(Submission).where(Submission.id == top.id).values(moderation="hidden"))
    ctx.session.execute(update(Board).where(Board.phase_id == phase.id).values(wanted=Board.wanted + 1))
    ctx.session.commit()  # a writer that died between its commit and its refresh
    # Within the grace its announcer would refresh it: readers show the last built rows, and leave it be.
    assert people(read(ctx, phase)) == [(1, "alice", "default", 1.0), (2, "bob", "default", 0.875)]
    last = utcnow() - REFRESH_GRACE - timedelta(seconds=1)
    ctx.session.execute(update(Board).where(Board.phase_id == phase.id).values(refreshed_at=last))
    ctx.session.commit()  # the grace is over and nobody refreshed it: the next reader does
    assert people(read(ctx, phase)) == [(1, "bob", "default", 0.875)]


def test_an_upgraded_instance_builds_the_same_board_from_its_scores(ctx, make_phase, make_user, make_predictions):
    phase = make_phase()
    for wrong, name in ((2, "ann"), (1, "ben"), (3, "cat")):
        upload(ctx, phase, make_user(display_name=name), make_predictions(wrong=wrong))
    before = [(r.rank, r.display_name, r.value, r.ci, r.columns) for r in read(ctx, phase).rows]
    for model in (BoardRow, ScoreCell, Board):  # what an instance migrated from 0002/0003 has: no board yet
        ctx.session.query(model).delete()
    ctx.session.commit()
    assert [(r.rank, r.display_name, r.value, r.ci, r.columns) for r in read(ctx, phase).rows] == before


def test_builtin_baselines_show_their_slices_like_any_upload(ctx, make_phase, make_user, make_predictions):
    views = [{"name": "Overall", "metric": "accuracy", "columns": ["popularity.tail.accuracy"]},
             {"name": "Long tail", "metric": "popularity.tail.accuracy"}]
    phase = make_phase(config={"task_type": "binary", "min_slice_items": 1, "views": views})
    upload(ctx, phase, make_user(), make_predictions(wrong=1))
    overall = read(ctx, phase)
    builtin = [r for r in overall.rows if r.is_baseline]
    assert builtin and all(r.value is not None for r in builtin)
    assert all(r.columns["popularity.tail.accuracy"][0] is not None for r in builtin)
    tail = read(ctx, phase, view="long tail")
    assert [r.is_baseline for r in tail.rows][0] is False
    assert all(r.value is not None and r.rank is None for r in tail.rows if r.is_baseline)


def test_a_tail_ranked_phase_ranks_by_tail_accuracy_and_says_so(ctx, make_phase, make_user, make_predictions):
    phase = make_phase(config={"task_type": "binary", "min_slice_items": 1,
                               "primary_metric": "popularity.tail.accuracy"})
    upload(ctx, phase, make_user(display_name="head-expert"), make_predictions(wrong={"q3", "q4", "q6"}))
    upload(ctx, phase, make_user(display_name="tail-expert"), make_predictions(wrong={"q1", "q2", "q5", "q8"}))
    board = read(ctx, phase)
    assert [(r[1], r[3]) for r in people(board)] == [("tail-expert", 1.0), ("head-expert", 0.25)]
    assert board.view.metric == "popularity.tail.accuracy" and "popularity.tail.accuracy" in board.rule
    assert "Accuracy · tail" in board.rule


def test_final_selection_ranks_the_selected_or_the_best_public_after_close(ctx, make_phase, make_user,
                                                                           make_predictions, labels_file):
    labels = labels_file(private=True)
    phase = make_phase(private=True, config={"task_type": "binary", "final_selections": 1})
    chooser, lazy = make_user(display_name="chooser"), make_user(display_name="lazy")
    upload(ctx, phase, chooser, make_predictions(labels, wrong={"q5", "q6", "q7", "q8"}))  # best public, worst private
    kept = upload(ctx, phase, chooser, make_predictions(labels, wrong={"q1"}))  # 0.75 public, 1.0 private
    upload(ctx, phase, lazy, make_predictions(labels, wrong={"q5"}))  # best public: 1.0 / 0.75
    upload(ctx, phase, lazy, make_predictions(labels, wrong={"q1", "q2"}))  # 0.5 public, 1.0 private: not picked
    ctx.session.execute(update(Submission).where(Submission.id == kept.id).values(selected=True))
    ctx.session.commit()
    board_changed(ctx, phase_id=phase.id)
    phases.close_phase(ctx, actor=OPERATOR, phase_id=phase.id)
    closed = read(ctx, phase)
    assert [(r[1], r[3]) for r in people(closed)] == [("chooser", 1.0), ("lazy", 0.75)]
    assert "final selections (at most 1)" in closed.rule


def test_the_ladder_shows_released_values_and_withholds_the_rest(ctx, make_phase, make_user, make_predictions):
    phase = make_phase(config={"task_type": "binary", "public_feedback": "ladder", "ladder_step": 0.2,
                               "min_slice_items": 1})
    climber = make_user(display_name="climber")
    upload(ctx, phase, climber, make_predictions(wrong=3))  # 0.625 released as 0.6
    upload(ctx, phase, climber, make_predictions(wrong=2))  # 0.75: not 0.2 above the shown 0.6, held
    row = next(r for r in read(ctx, phase).rows if not r.is_baseline)
    assert (row.value, row.p_vs_previous) == (0.6, None) and "ladder" in read(ctx, phase).rule
    assert all(v is None or round(v / 0.2, 6).is_integer() for cell in row.columns.values() for v in cell[:3])
    phases.close_phase(ctx, actor=OPERATOR, phase_id=phase.id)
    assert next(r for r in read(ctx, phase).rows if not r.is_baseline).value == 0.75  # exact after close


def test_views_are_edited_live_and_checked_against_the_labels(ctx, make_phase, make_user, make_predictions):
    phase = make_phase(config={"task_type": "binary", "min_slice_items": 1})
    upload(ctx, phase, make_user(), make_predictions(wrong={"q3"}))
    update_settings(ctx, phase_id=phase.id, actor=OPERATOR,
                    views=[{"name": "Tail", "metric": "popularity.tail.accuracy", "columns": ["answer_rate"]}])
    board = read(ctx, phase)
    assert [v.name for v in board.layout.views] == ["Tail"] and board.rows[0].value == 0.75
    assert board.columns == ("answer_rate",)
    with pytest.raises(InvalidInput, match="breakdowns.category.physics.accuracy"):
        update_settings(ctx, phase_id=phase.id, actor=OPERATOR,
                        views=[{"name": "X", "metric": "breakdowns.category.physics.accuracy"}])
    update_settings(ctx, phase_id=phase.id, actor=OPERATOR, views=None)
    assert read(ctx, phase).view.name == "Overall"


def test_paging_sorting_search_and_filters_keep_the_views_ranks(ctx, make_phase, make_user, make_predictions):
    phase = make_phase(config={"task_type": "binary", "min_slice_items": 1})
    for n in range(7):
        meta = {"open_weights": n % 2 == 0, "prompting": "few-shot" if n < 3 else "zero-shot", "model": f"m{n}"}
        upload(ctx, phase, make_user(display_name=f"user-{n}"), make_predictions(wrong=n), metadata=meta)
    everything = [r.submission_id for r in read(ctx, phase, every_row=True).rows]
    first = read(ctx, phase, per_page=3)
    assert (first.total, first.pages, [r.rank for r in first.rows]) == (10, 4, [1, 2, 3])
    assert [r.submission_id for r in read(ctx, phase, per_page=3, page=2).rows] == everything[3:6]
    assert read(ctx, phase, per_page=3, page=99).page == 4  # past the end: the last page
    open_weights = read(ctx, phase, flags={"open_weights": True})
    assert [r.rank for r in open_weights.rows] == [1, 3, 5, 7]
    assert [r.display_name for r in read(ctx, phase, q="USER-3").rows] == ["user-3"]
    assert [r.rank for r in read(ctx, phase, prompting="few-shot").rows] == [1, 2, 3]
    by_name = read(ctx, phase, sort="name", order="desc")
    assert [r.display_name for r in by_name.rows][:2] == ["user-6", "user-5"]
    worst_first = read(ctx, phase, sort="accuracy", order="asc")
    assert [r.value for r in worst_first.rows] == sorted(r.value for r in worst_first.rows)
    with pytest.raises(InvalidInput, match="Cannot sort by"):
        read(ctx, phase, sort="breakdowns.category.science.accuracy")
    with pytest.raises(InvalidInput, match="No view"):
        read(ctx, phase, view="nope")


def test_csv_has_every_row_with_metadata_and_no_formula(ctx, make_phase, make_user, make_predictions):
    phase = make_phase(config={"task_type": "binary", "min_slice_items": 1})
    upload(ctx, phase, make_user(display_name="-cmd"), make_predictions(wrong=2), method="-x",
           metadata={"model": "@SUM(A1)", "open_weights": True, "parameters_b": 7})
    board = read(ctx, phase, every_row=True)
    rows = list(csv.DictReader(io.StringIO(board_csv(board))))
    assert len(rows) == len(board.rows) == 4
    top = rows[0]
    assert (top["rank"], top["name"], top["method"], top["accuracy"]) == ("1", "'-cmd", "'-x", "0.75")
    assert (top["model"], top["open_weights"], top["parameters_b"]) == ("'@SUM(A1)", "true", "7")
    assert top["submitted_at"].endswith("Z") and "answer_rate" in top
    assert all(r["rank"] == "" for r in rows[1:])


def test_hidden_leaderboard_is_for_organizers_only(ctx, make_phase, make_competition, make_user, make_organizer):
    organizer = make_organizer()
    phase = make_phase(make_competition(created_by=organizer), leaderboard_visibility="hidden")
    for viewer in (None, make_user(), make_organizer()):  # another competition's organizer is a visitor here
        with pytest.raises(Forbidden):
            ranking.leaderboard(ctx, phase_id=phase.id, viewer=viewer)
    assert ranking.leaderboard(ctx, phase_id=phase.id, viewer=organizer).rows


def test_a_tied_resubmission_does_not_replace_the_earlier_one(ctx, make_phase, make_user, make_predictions):
    phase, user = make_phase(), make_user()
    first = upload(ctx, phase, user, make_predictions(wrong=1))
    upload(ctx, phase, user, make_predictions(wrong={"q8"}))
    assert next(r for r in read(ctx, phase).rows if not r.is_baseline).submission_id == first.id


def test_a_phase_without_splits_ranks_on_all_items(ctx, make_phase):
    board = read(ctx, make_phase())
    assert board.split == "all" and board.view.metric == "accuracy" and board.higher_is_better


def test_a_hidden_leaderboard_is_refused_to_another_competitions_organizer(ctx, make_competition, make_phase,
                                                                            make_organizer):
    owner, other = make_organizer(), make_organizer()
    phase = make_phase(make_competition(created_by=owner), leaderboard_visibility="hidden")
    with pytest.raises(Forbidden):
        ranking.leaderboard(ctx, phase_id=phase.id, viewer=other)
    assert ranking.leaderboard(ctx, phase_id=phase.id, viewer=owner).rows


def test_partial_refreshes_build_the_rows_a_full_rebuild_builds(ctx, make_phase, make_user, make_predictions):
    views = [{"name": "Overall", "metric": "accuracy", "columns": ["popularity.tail.accuracy"]},
             {"name": "Tail", "metric": "popularity.tail.accuracy"}]
    phase = make_phase(config={"task_type": "binary", "min_slice_items": 1, "views": views})
    users = [make_user(display_name=f"entrant-{n}") for n in range(4)]
    for step, wrong in enumerate((3, 1, {"q3"}, 0, 2, {"q1", "q8"}, 4, {"q4"})):
        upload(ctx, phase, users[step % 4], make_predictions(wrong=wrong), method=("a", "b")[step % 3 == 0])

    def stored():
        ctx.session.expire_all()
        return sorted((r.board, r.view, r.position, r.entry, r.score_id, r.rank, r.stat_rank, r.p_vs_previous,
                       r.value) for r in ctx.session.scalars(select(BoardRow).where(BoardRow.phase_id == phase.id)))

    partial = stored()
    assert partial and ctx.session.scalar(select(Board.built).where(Board.phase_id == phase.id)) > 1
    rebuild_from_scratch(ctx, phase_id=phase.id)
    assert stored() == partial


def test_the_ladder_step_of_a_phase_ranked_by_a_slice_comes_from_that_slices_public_items(
        ctx, make_phase, make_user, make_predictions):
    phase = make_phase(private=True, config={"task_type": "binary", "public_feedback": "ladder", "min_slice_items": 1,
                                             "primary_metric": "popularity.tail.accuracy"})
    upload(ctx, phase, make_user(), make_predictions(wrong=1))
    board = read(ctx, phase)
    assert board.layout.n_public == 4 and board.layout.n_primary == 2  # the public tail items: q3, q4
    row = next(r for r in board.rows if not r.is_baseline)
    assert row.ladder_step == pytest.approx(1 / 2 ** 0.5)  # 1/sqrt(2), not 1/sqrt(4): one flip moves it by 1/2
