"""The daily quota holds under concurrent uploads: never one more than the limit (SPEC §7).

Each upload runs in its own thread with its own session, released together by a barrier;
PostgreSQL serializes on the usage row's lock, SQLite on its single writer.
"""

from __future__ import annotations

import io
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from sqlalchemy import func, select

from leaderboard.models import QuotaUsage, Submission, User
from leaderboard.services.errors import QuotaExceeded
from leaderboard.services.submissions import accept_submission

UPLOADS = 12
LIMIT = 5


def race(runtime, phase_id: int, user_id: int, contents: list[bytes], *,
         keys: list[str | None] | None = None) -> list[object]:
    """Upload every content at once from its own thread and session; return each result or exception."""
    barrier = threading.Barrier(len(contents))
    keys = keys or [None] * len(contents)

    def one(index: int) -> object:
        with runtime.sessions() as session:
            ctx = runtime.context(session)
            user = session.get(User, user_id)
            barrier.wait()
            try:
                return accept_submission(ctx, phase_id=phase_id, user=user, filename=f"p{index}.csv",
                                         stream=io.BytesIO(contents[index]), idempotency_key=keys[index]).id
            except QuotaExceeded as error:
                return error

    with ThreadPoolExecutor(max_workers=len(contents)) as pool:
        return list(pool.map(one, range(len(contents))))


@pytest.mark.parametrize("attempt", range(3))
def test_twelve_parallel_uploads_against_a_daily_limit_of_five(runtime, ctx, make_phase, make_user,
                                                               make_predictions, attempt):
    phase, user = make_phase(max_per_day=LIMIT), make_user()
    results = race(runtime, phase.id, user.id, [make_predictions(wrong=i % 8) for i in range(UPLOADS)])
    accepted = [r for r in results if isinstance(r, int)]
    refused = [r for r in results if isinstance(r, QuotaExceeded)]
    assert (len(accepted), len(refused)) == (LIMIT, UPLOADS - LIMIT)
    ctx.session.expire_all()
    usage = {row.day: row.used for row in ctx.session.scalars(select(QuotaUsage).where(
        QuotaUsage.user_id == user.id))}
    assert sorted(usage.values()) == [LIMIT, LIMIT]
    kept = list(ctx.session.scalars(select(Submission).where(Submission.user_id == user.id)))
    assert sorted(s.id for s in kept) == sorted(accepted)
    assert {s.status for s in kept} == {"scored"}


def test_parallel_uploads_against_a_total_limit(runtime, ctx, make_phase, make_user, make_predictions):
    phase, user = make_phase(max_per_day=10, max_total=3), make_user()
    results = race(runtime, phase.id, user.id, [make_predictions() for _ in range(8)])
    assert sum(isinstance(r, int) for r in results) == 3
    assert all(r.resets_at is None for r in results if isinstance(r, QuotaExceeded))


def test_parallel_retries_with_one_idempotency_key_make_one_submission(runtime, ctx, make_phase, make_user,
                                                                        make_predictions):
    phase, user = make_phase(max_per_day=LIMIT), make_user()
    results = race(runtime, phase.id, user.id, [make_predictions() for _ in range(6)], keys=["same"] * 6)
    assert len(set(results)) == 1 and isinstance(results[0], int)
    ctx.session.expire_all()
    assert ctx.session.scalar(select(func.count()).select_from(Submission).where(
        Submission.user_id == user.id)) == 1
    assert ctx.session.scalar(select(QuotaUsage.used).where(
        QuotaUsage.user_id == user.id, QuotaUsage.day != "total")) == 1
