"""Board cells computed ahead by a re-score (board/cells.py keep_ahead): the same cells, taken only when they fit."""

from __future__ import annotations

import io
from typing import Any

import pytest
from sqlalchemy import delete, select

from leaderboard.accounts import OPERATOR
from leaderboard.board import cells as board_cells
from leaderboard.board.cells import keep_ahead
from leaderboard.models import Board, Phase, Score, ScoreCell, Submission
from leaderboard.operations import run_job
from leaderboard.organizing import phases
from leaderboard.submissions import accept_submission, active_score


def stored_cells(ctx, score_id: int) -> dict[tuple[str, str], tuple[Any, ...]]:
    """Return a score's stored cells: {(board, path): (value, lo, hi, error)}."""
    rows = ctx.session.execute(select(ScoreCell).where(ScoreCell.score_id == score_id)).scalars()
    return {(c.board, c.path): (c.value, c.lo, c.hi, c.error) for c in rows}


def recomputed(ctx, phase_id: int, score_id: int) -> dict[tuple[str, str], tuple[Any, ...]]:
    """Drop a score's cells and let the board compute them from its result; return them."""
    ctx.session.execute(delete(ScoreCell).where(ScoreCell.score_id == score_id))
    ctx.session.commit()
    submission_id = ctx.session.get(Score, score_id).submission_id
    ctx.board_changed(phase_id=phase_id, submission_ids=[submission_id])
    ctx.session.expire_all()
    return stored_cells(ctx, score_id)


@pytest.fixture
def scored(ctx, make_phase, make_user, make_predictions) -> tuple[Phase, list[int]]:
    """A phase with a private split and three scored uploads; return it and the submission ids."""
    phase, user = make_phase(max_per_day="unlimited", private=True), make_user()
    ids = [accept_submission(ctx, phase_id=phase.id, user=user, filename="p.csv",
                             stream=io.BytesIO(make_predictions(wrong=i))).id for i in range(3)]
    return phase, ids


def test_a_rescore_leaves_the_cells_a_refresh_would_compute(ctx, scored, monkeypatch):
    phase, ids = scored
    taken: list[int] = []
    real_take = board_cells._take_ahead
    monkeypatch.setattr(board_cells, "_take_ahead",
                        lambda key, signature: (found := real_take(key, signature)) is not None
                        and taken.append(key[2]) or found)
    job = phases.rescore_phase(ctx, phase_id=phase.id, actor=OPERATOR, run=False)
    run_job(ctx, job_id=job.id)
    ctx.session.expire_all()
    scores = [active_score(ctx.session.get(Submission, sid)).id for sid in ids]
    assert set(scores) <= set(taken)  # the refresh took the rescored uploads' cells from the job
    for score_id in scores:
        ahead = stored_cells(ctx, score_id)
        assert ahead and ahead == recomputed(ctx, phase.id, score_id)


@pytest.mark.parametrize("same_signature", [True, False])
def test_cells_kept_ahead_are_taken_only_under_the_signature_they_were_computed_for(ctx, scored, same_signature):
    """The twin: cells kept for the board's signature are what it stores; for another signature they are ignored."""
    phase, ids = scored
    score_id = active_score(ctx.session.get(Submission, ids[0])).id
    true_cells = stored_cells(ctx, score_id)
    ctx.session.execute(delete(ScoreCell).where(ScoreCell.score_id == score_id))
    ctx.session.commit()
    signature = ctx.session.scalar(select(Board.signature).where(Board.phase_id == phase.id))
    marked = [(board, path, (0.123, None, None, None)) for board, path in true_cells]
    key = (ctx.settings.database_url, ids[0], score_id)
    keep_ahead(key, signature if same_signature else "views changed since", marked)
    ctx.board_changed(phase_id=phase.id, submission_ids=[ids[0]])
    ctx.session.expire_all()
    stored = stored_cells(ctx, score_id)
    if same_signature:
        assert set(stored.values()) == {(0.123, None, None, None)}
    else:
        assert stored == true_cells
    assert board_cells._take_ahead(key, signature) is None  # taken or dropped, never twice


def test_at_most_ahead_limit_scores_wait(monkeypatch):
    monkeypatch.setattr(board_cells, "AHEAD_LIMIT", 3)
    monkeypatch.setattr(board_cells, "_ahead", type(board_cells._ahead)())
    for score_id in range(5):
        keep_ahead(("db", 1, score_id), "s", [])
    assert [key[2] for key in board_cells._ahead] == [2, 3, 4]
    assert board_cells._take_ahead(("db", 1, 0), "s") is None and board_cells._take_ahead(("db", 1, 4), "s") == []
    assert board_cells._take_ahead(("other db", 1, 3), "s") is None  # another database's score 3 is not this one
