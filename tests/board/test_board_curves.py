"""The ranking's popularity curves come from cells stored at refresh: the same figures as the result objects shown.

Before, every page read loaded and redacted the five best entries' result objects; now
the refresh stores each score's curve as cells (board/cells.py curve_cells) through the
same disclosure.visibility, and a read draws from them. These tests compute the curve
the old way, from the stored result through visibility, and compare what the chart
draws (docs/RANKING.md#reads-under-a-rush).
"""

from __future__ import annotations

import pytest
from charts_world import answers, labels, upload
from sqlalchemy import event, select

from leaderboard.accounts import OPERATOR
from leaderboard.board import board_curves, ranking
from leaderboard.board.cells import as_board, curve_bins, curve_cells
from leaderboard.disclosure import visible_results
from leaderboard.models import Score, ScoreCell
from leaderboard.organizing import phases
from leaderboard.web.charts import curve_bins as drawn


def shown_curve(ctx, score_id: int, phase, board: str):
    """Return the popularity curve of a score as visibility shows it on a board (the old per-request path)."""
    results = ctx.session.scalar(select(Score.results).where(Score.id == score_id))
    shown = visible_results(results, phase=as_board(phase, board))
    if board == "closed" and phase.has_private_split:
        shown = (shown.get("splits") or {}).get("private") or {}
    return drawn(shown.get("popularity_curve"))


@pytest.mark.parametrize("private", [False, True])
def test_stored_curves_draw_what_visibility_shows_on_each_board(ctx, make_phase, make_user, private: bool) -> None:
    phase = make_phase(labels=labels(private=private))
    for k in range(4):
        upload(ctx, phase, make_user(display_name=f"Team {k}"), answers(30 + k, skill=0.95 - 0.1 * k))
    for board_name in ("open", "closed"):
        if board_name == "closed":
            phases.close_phase(ctx, actor=OPERATOR, phase_id=phase.id)
        board = ranking.leaderboard(ctx, phase_id=phase.id)
        assert board.board == board_name
        curves = board_curves(ctx, board=board)
        by_submission = {r.submission_id: r.score_id for r in board.rows}
        expected = {i: shown_curve(ctx, by_submission[i], phase, board_name) for i in board.top[:5]}
        assert len(expected) == 4, board_name
        assert {e.submission_id: drawn(list(e.bins)) for e in curves.entries} == {
            i: bins for i, bins in expected.items() if bins}, board_name
        # the private split's shown result carries no curve: after close such a phase draws none, as before
        assert bool(curves.entries) is not (private and board_name == "closed"), board_name
        if private and board_name == "open":
            assert all(b.n is None for e in curves.entries for b in drawn(list(e.bins)))  # no public item counts


def test_a_curve_reads_no_result_object(ctx, make_phase, make_user) -> None:
    phase = make_phase(labels=labels())
    upload(ctx, phase, make_user(display_name="Solo"), answers(3))
    board = ranking.leaderboard(ctx, phase_id=phase.id)
    statements: list[str] = []

    def seen(conn, cursor, statement, *rest) -> None:
        statements.append(statement)

    engine = ctx.session.get_bind()
    event.listen(engine, "before_cursor_execute", seen)
    try:
        assert len(board_curves(ctx, board=board).entries) == 1
    finally:
        event.remove(engine, "before_cursor_execute", seen)
    assert any("score_cells" in s for s in statements)
    assert not any("scores.results" in s for s in statements)


def test_curve_cells_round_trip_the_bins_a_chart_draws() -> None:
    part = {"popularity_curve": [
        {"lo": 1, "hi": 30, "n": 30, "accuracy": 0.5, "ci": {"accuracy": [0.3, 0.7]}, "answer_rate": 1.0},
        {"lo": 31, "hi": 60, "accuracy": 0.65, "ci": {"accuracy": [0.45, 0.8]}, "grid": 0.05},
        {"lo": None, "hi": 90, "accuracy": 0.9},  # no range: never drawn
        {"lo": 91, "hi": 120, "n": 3.0, "accuracy": None, "answer_rate": 0.1},
    ]}
    cells = dict(curve_cells(part))
    assert all(path.startswith("curve.") for path in cells)
    assert drawn(list(curve_bins(cells))) == drawn(part["popularity_curve"])


def test_cells_of_a_phase_hold_its_curves(ctx, make_phase, make_user) -> None:
    phase = make_phase(labels=labels())
    upload(ctx, phase, make_user(display_name="Solo"), answers(3))
    ranking.leaderboard(ctx, phase_id=phase.id)
    paths = ctx.session.scalars(select(ScoreCell.path).where(ScoreCell.phase_id == phase.id,
                                                             ScoreCell.path.like("curve.%.bin"))).all()
    assert len(paths) == 2 * 10  # ten bins, on the open and the closed board
