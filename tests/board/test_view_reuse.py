"""A view loaded after a board change reuses the cells an earlier load showed (board/read.py ``_load``).

Every reuse must give exactly the rows a load from nothing gives. Two things keep it so:
the signature (a new one writes every cell anew, with other values), and the scores whose
cells were there (a score read before its cells were written showed none). Each has a
twin below: with the check fooled, the board shows figures it no longer has.
"""

from __future__ import annotations

import io
from dataclasses import replace

from sqlalchemy import delete, select

from leaderboard.accounts import OPERATOR
from leaderboard.board import BoardQuery, board_changed, ranking
from leaderboard.board import read as board_read
from leaderboard.board.layout import cached_layout
from leaderboard.disclosure.probing import update_probing_settings
from leaderboard.models import Board, Score, ScoreCell
from leaderboard.submissions import accept_submission


def upload(ctx, phase, user, content: bytes):
    """Accept content as an upload by user (scored inline)."""
    return accept_submission(ctx, phase_id=phase.id, user=user, filename="p.csv", stream=io.BytesIO(content))


def board(ctx, phase):
    """Return the phase's board as an anonymous reader sees it (through the process's view cache)."""
    ctx.session.expire_all()
    return ranking.leaderboard(ctx, phase_id=phase.id, query=BoardQuery())


def loaded(ctx, phase, *, earlier=None):
    """Return the first view of the phase's open board loaded now: from nothing, or from an earlier load."""
    ctx.session.expire_all()
    answer = board(ctx, phase)
    columns = cached_layout(ctx, answer.phase).columns(0)
    return board_read._load(ctx, phase_id=phase.id, board=answer.board, view=0, version=answer.version,
                            columns=columns, earlier=earlier)


def figures(view) -> list[tuple]:
    """Return (submission, rank, value, column cells) of a loaded view's rows."""
    return [(r.submission_id, r.rank, r.value, r.columns) for r in view.rows]


def test_each_board_change_loads_the_same_rows_as_a_load_from_nothing(ctx, make_phase, make_user, make_predictions):
    phase = make_phase()
    alice, bob, carol = (make_user(display_name=name) for name in ("alice", "bob", "carol"))
    upload(ctx, phase, alice, make_predictions(wrong=3))
    upload(ctx, phase, bob, make_predictions(wrong=2))
    earlier = loaded(ctx, phase)
    def feedback(**settings):
        update_probing_settings(ctx, phase_id=phase.id, actor=OPERATOR, **settings)
        board_changed(ctx, phase_id=phase.id)

    changes = [lambda: upload(ctx, phase, carol, make_predictions(wrong=0)),  # a new entry on top: rows move
               lambda: upload(ctx, phase, alice, make_predictions(wrong=1)),  # an entry's score replaced
               lambda: feedback(public_feedback="ladder", ladder_step=0.25),  # a new signature, figures on the ladder
               lambda: feedback(public_feedback=None, ladder_step=None)]
    for change in changes:
        change()
        now = loaded(ctx, phase, earlier=earlier)
        assert now.version != earlier.version
        assert now == loaded(ctx, phase), change
        earlier = now
    assert [row[:3] for row in figures(earlier) if row[1] is not None][:3] == [
        (earlier.rows[0].submission_id, 1, 1.0), (earlier.rows[1].submission_id, 2, 0.875),
        (earlier.rows[2].submission_id, 3, 0.75)]


def test_a_new_signature_reads_every_cell_again(ctx, make_phase, make_user, make_predictions):
    phase = make_phase()
    upload(ctx, phase, make_user(), make_predictions(wrong=1))
    real = loaded(ctx, phase)
    # Cells as an older signature computed them (other figures), then a refresh under the phase's own signature.
    ctx.session.execute(ScoreCell.__table__.update().where(ScoreCell.phase_id == phase.id).values(value=0.123))
    ctx.session.execute(Board.__table__.update().where(Board.phase_id == phase.id).values(signature="older"))
    ctx.session.commit()
    older = loaded(ctx, phase)
    assert older.signature == "older" and older.rows[0].columns["f1"][0] == 0.123
    board_changed(ctx, phase_id=phase.id)
    now = loaded(ctx, phase, earlier=older)
    assert now.signature == real.signature and figures(now) == figures(real)
    # The twin: an earlier load taken for one under the new signature shows the older figures.
    fooled = loaded(ctx, phase, earlier=replace(older, signature=real.signature))
    assert fooled.rows[0].columns["f1"][0] == 0.123


def test_a_score_read_before_its_cells_were_written_is_read_again(ctx, make_phase, make_user, make_predictions):
    phase = make_phase()
    first = upload(ctx, phase, make_user(), make_predictions(wrong=1))
    score_id = ctx.session.scalar(select(Score.id).where(Score.submission_id == first.id))
    kept = ctx.session.execute(select(ScoreCell).where(ScoreCell.phase_id == phase.id)).scalars().all()
    saved = [{column.name: getattr(cell, column.key) for column in ScoreCell.__table__.columns} for cell in kept]
    ctx.session.execute(delete(ScoreCell).where(ScoreCell.phase_id == phase.id, ScoreCell.score_id == score_id))
    ctx.session.commit()
    without = loaded(ctx, phase)  # as a reader between the rows' and the cells' writes would
    row = next(r for r in without.rows if r.submission_id == first.id)
    assert row.columns["f1"][0] is None and row.score_id not in without.with_cells
    ctx.session.execute(ScoreCell.__table__.insert(), [c for c in saved if c["score_id"] == score_id])
    ctx.session.commit()
    board_changed(ctx, phase_id=phase.id)
    upload(ctx, phase, make_user(), make_predictions(wrong=2))  # a new version, the first row unchanged
    now = loaded(ctx, phase, earlier=without)
    assert now == loaded(ctx, phase)
    assert next(r for r in now.rows if r.submission_id == first.id).columns["f1"][0] is not None
    # The twin: taking the cell-less row for one with cells keeps its figures blank.
    fooled = loaded(ctx, phase, earlier=replace(without, with_cells=without.with_cells | {row.score_id}))
    assert next(r for r in fooled.rows if r.submission_id == first.id).columns["f1"][0] is None
