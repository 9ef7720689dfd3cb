"""The demo's quota: uploads dated in the past are counted on their own days, not on the day the demo is installed."""

from __future__ import annotations

from collections import Counter

from sqlalchemy import select

from leaderboard.demo import PARTICIPANT_EMAILS, install_demo
from leaderboard.entries import quota
from leaderboard.models import QuotaUsage, Submission, User
from leaderboard.platform import ServiceContext


def test_the_demo_uploads_are_charged_on_the_days_they_are_dated(ctx: ServiceContext) -> None:
    competition, _ = install_demo(ctx)
    today = quota.utc_day()
    for phase in competition.phases:
        uploads = ctx.session.scalars(select(Submission).where(Submission.phase_id == phase.id,
                                                               Submission.quota_day.is_not(None))).all()
        rows = ctx.session.scalars(select(QuotaUsage).where(QuotaUsage.phase_id == phase.id)).all()
        daily = Counter({(r.owner, r.day): r.used for r in rows if r.day != quota.TOTAL and r.used})
        charged = Counter((quota.owner_key(user_id=s.user_id, team_id=s.team_id), s.quota_day) for s in uploads)
        assert daily == charged
        assert all(s.quota_day == quota.utc_day(s.created_at) != today for s in uploads)
        for email in PARTICIPANT_EMAILS if uploads else ():
            user = ctx.session.scalar(select(User).where(User.email == email))
            status = quota.quota_status(ctx, phase=phase, user=user)
            assert (status.used_today, status.used_total) == (0, 3)
