"""Writers refreshing one board at once lose no update and never deadlock (SQLite and PostgreSQL).

Each upload is scored in its own thread and session (inline scoring: claim, score,
record, board_changed), released together by a barrier. When every writer has returned,
the board shows every entry with its best value and has built every announced change.
"""

from __future__ import annotations

import io
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from sqlalchemy import select

from leaderboard.board import BoardQuery, board_changed, ranking
from leaderboard.models import Board, User
from leaderboard.submissions import accept_submission

WRITERS = 8


@pytest.mark.parametrize("attempt", range(2))
def test_concurrent_scoring_writers_each_see_their_entry_on_the_board(runtime, ctx, make_phase, make_user,
                                                                      make_predictions, attempt):
    phase = make_phase(config={"task_type": "binary", "min_slice_items": 1})
    users = [make_user(display_name=f"writer-{attempt}-{n}") for n in range(WRITERS)]
    barrier = threading.Barrier(WRITERS)
    seen: dict[int, list[str]] = {}

    def one(index: int) -> int:
        with runtime.sessions() as session:
            writer = runtime.context(session)
            user = session.get(User, users[index].id)
            barrier.wait()
            submission = accept_submission(writer, phase_id=phase.id, user=user, filename="p.csv",
                                           stream=io.BytesIO(make_predictions(wrong=index % 8)))
            # the writer has returned: its own row is on the board already
            board = ranking.leaderboard(writer, phase_id=phase.id, query=BoardQuery(every_row=True))
            seen[index] = [r.display_name for r in board.rows]
            return submission.id

    with ThreadPoolExecutor(max_workers=WRITERS) as pool:
        ids = list(pool.map(one, range(WRITERS)))
    assert len(set(ids)) == WRITERS
    for index, names in seen.items():
        assert users[index].display_name in names
    ctx.session.expire_all()
    board = ranking.leaderboard(ctx, phase_id=phase.id, query=BoardQuery(every_row=True))
    values = {r.display_name: r.value for r in board.rows if not r.is_baseline}
    assert values == {u.display_name: (8 - n % 8) / 8 for n, u in enumerate(users)}
    stand = ctx.session.scalar(select(Board).where(Board.phase_id == phase.id))
    assert stand.built == stand.wanted


def test_concurrent_announcements_are_all_built(runtime, ctx, make_phase):
    phase = make_phase()
    barrier = threading.Barrier(6)

    def announce() -> None:
        with runtime.sessions() as session:
            barrier.wait()
            board_changed(runtime.context(session), phase_id=phase.id)

    with ThreadPoolExecutor(max_workers=6) as pool:
        list(pool.map(lambda _: announce(), range(6)))
    ctx.session.expire_all()
    stand = ctx.session.scalar(select(Board).where(Board.phase_id == phase.id))
    assert stand.wanted >= 6 and stand.built == stand.wanted
