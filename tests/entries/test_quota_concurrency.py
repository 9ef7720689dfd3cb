"""The daily quota holds under concurrent uploads: never one more than the limit (docs/RULES.md), per user or per team.

Each upload runs in its own thread with its own session, released together by a barrier;
PostgreSQL serializes on the usage row's lock, SQLite on its single writer.
"""

from __future__ import annotations

import io
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from sqlalchemy import func, select

from leaderboard.entries import teams
from leaderboard.models import QuotaUsage, Submission, User
from leaderboard.platform import Conflict, QuotaExceeded
from leaderboard.submissions import accept_submission

UPLOADS = 12
LIMIT = 5


def race(runtime, phase_id: int, user_id: int | list[int], contents: list[bytes], *,
         keys: list[str | None] | None = None) -> list[object]:
    """Upload every content at once from its own thread and session; return each result or exception.

    ``user_id`` is the uploader of every file, or one uploader per file.
    """
    barrier = threading.Barrier(len(contents))
    keys = keys or [None] * len(contents)
    uploaders = user_id if isinstance(user_id, list) else [user_id] * len(contents)

    def one(index: int) -> object:
        with runtime.sessions() as session:
            ctx = runtime.context(session)
            user = session.get(User, uploaders[index])
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
        QuotaUsage.owner == f"user:{user.id}"))}
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
        QuotaUsage.owner == f"user:{user.id}", QuotaUsage.day != "total")) == 1


@pytest.mark.parametrize("attempt", range(3))
def test_members_of_one_team_uploading_at_once_share_one_daily_limit(runtime, ctx, make_phase, make_user,
                                                                     make_predictions, attempt):
    phase = make_phase(max_per_day=LIMIT)
    members = [make_user() for _ in range(3)]
    team = teams.create_team(ctx, competition_slug=phase.competition.slug, name="Lab", user=members[0])
    for member in members[1:]:
        teams.join_team(ctx, invite_code=team.invite_code, user=member)
    uploaders = [members[i % len(members)].id for i in range(UPLOADS)]
    results = race(runtime, phase.id, uploaders, [make_predictions(wrong=i % 8) for i in range(UPLOADS)])
    accepted = [r for r in results if isinstance(r, int)]
    assert (len(accepted), sum(isinstance(r, QuotaExceeded) for r in results)) == (LIMIT, UPLOADS - LIMIT)
    ctx.session.expire_all()
    usage = {row.owner: row.used for row in ctx.session.scalars(select(QuotaUsage).where(QuotaUsage.day != "total"))}
    assert usage == {f"team:{team.id}": LIMIT}
    kept = list(ctx.session.scalars(select(Submission).where(Submission.user_id.in_([m.id for m in members]))))
    assert sorted(s.id for s in kept) == sorted(accepted) and {s.team_id for s in kept} == {team.id}


def test_members_racing_with_new_methods_never_pass_max_methods(runtime, ctx, make_phase, make_user,
                                                                make_predictions):
    phase = make_phase(max_per_day=20, config={"task_type": "binary", "max_methods": 2})
    members = [make_user() for _ in range(2)]
    team = teams.create_team(ctx, competition_slug=phase.competition.slug, name="Lab", user=members[0])
    teams.join_team(ctx, invite_code=team.invite_code, user=members[1])
    uploaders = [members[i % 2].id for i in range(6)]
    methods = [f"method-{i}" for i in range(6)]
    barrier = threading.Barrier(len(methods))

    def one(index: int) -> object:
        with runtime.sessions() as session:
            user = session.get(User, uploaders[index])
            barrier.wait()
            try:
                return accept_submission(runtime.context(session), phase_id=phase.id, user=user, filename="p.csv",
                                         stream=io.BytesIO(make_predictions()), method=methods[index]).method
            except Conflict as error:
                return error

    with ThreadPoolExecutor(max_workers=len(methods)) as pool:
        results = list(pool.map(one, range(len(methods))))
    assert sum(isinstance(r, str) for r in results) == 2
    ctx.session.expire_all()
    kept = set(ctx.session.scalars(select(Submission.method).where(Submission.team_id == team.id)))
    assert len(kept) == 2
    assert ctx.session.scalar(select(QuotaUsage.used).where(QuotaUsage.day == "total")) == 2
