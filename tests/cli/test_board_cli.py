"""``flask boards rebuild`` builds the boards of an upgraded instance from its scores: the same rows as before."""

from __future__ import annotations

import io

from sqlalchemy import func, select

from leaderboard.board import ranking
from leaderboard.models import Board, BoardRow, ScoreCell
from leaderboard.submissions import accept_submission


def test_rebuild_recreates_the_rows_an_upgrade_lacks(app, runner, ctx, make_phase, make_user, make_predictions):
    phase = make_phase()
    for wrong, name in ((2, "ann"), (0, "ben")):
        accept_submission(ctx, phase_id=phase.id, user=make_user(display_name=name), filename="p.csv",
                          stream=io.BytesIO(make_predictions(wrong=wrong)))
    before = [(r.rank, r.display_name, r.value, r.ci) for r in ranking.leaderboard(ctx, phase_id=phase.id).rows]
    rows = ctx.session.scalar(select(func.count()).select_from(BoardRow))
    for model in (BoardRow, ScoreCell, Board):
        ctx.session.query(model).delete()
    ctx.session.commit()
    result = runner.invoke(args=["boards", "rebuild"])
    assert result.exit_code == 0, result.output
    assert result.output.strip().splitlines()[-1].startswith(f"phase {phase.id}: board rebuilt")
    assert ctx.session.scalar(select(func.count()).select_from(BoardRow)) == rows
    ctx.session.expire_all()
    assert [(r.rank, r.display_name, r.value, r.ci) for r in ranking.leaderboard(ctx, phase_id=phase.id).rows] == before


def test_rebuild_of_an_unknown_phase_fails_saying_so(app, runner, make_phase):
    make_phase()
    result = runner.invoke(args=["boards", "rebuild", "999"])
    assert result.exit_code != 0 and "No phase 999" in result.output
