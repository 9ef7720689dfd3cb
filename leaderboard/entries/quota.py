"""Submission quotas: per UTC day and in total, per entry owner, exact under concurrent uploads.

The owner is the uploader's team in the phase's competition (members share one quota,
docs/ENTRIES.md), or the uploader alone without a team: ``owner_key`` spells it. A charge
inserts the (phase, owner, day) and (phase, owner, 'total') rows if they are
missing (``ON CONFLICT DO NOTHING``, so racing inserts are harmless), then takes one
unit from each with ``UPDATE ... SET used = used + 1 WHERE ... AND used < :limit``.
The database serializes the UPDATEs on the row lock and re-checks the condition,
so N concurrent uploads against a limit of L succeed exactly min(N, L) times.
``charge`` and ``refund`` run inside the caller's transaction and never commit.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from leaderboard.accounts import team_of
from leaderboard.models import Phase, QuotaUsage, Submission, User
from leaderboard.platform import QuotaExceeded, ServiceContext
from leaderboard.platform.db import utcnow

TOTAL = "total"
UNIQUE_ROW = ["phase_id", "owner", "day"]


@dataclass(frozen=True)
class QuotaStatus:
    """How many submissions an entry owner (a team, or a user) has made in a phase and may still make."""

    day: str
    used_today: int
    max_per_day: int | None
    used_total: int
    max_total: int | None
    resets_at: datetime  # next midnight UTC, naive UTC like every stored timestamp
    shared: bool = False  # counted for the user's team

    @property
    def used_up(self) -> bool:
        """Return whether no submission is possible now (a limit is reached)."""
        return self.remaining == 0

    @property
    def remaining_today(self) -> int | None:
        """Return what is left of the daily limit, or None without one."""
        return None if self.max_per_day is None else max(0, self.max_per_day - self.used_today)

    @property
    def remaining_total(self) -> int | None:
        """Return what is left of the total limit, or None without one."""
        return None if self.max_total is None else max(0, self.max_total - self.used_total)

    @property
    def remaining(self) -> int | None:
        """Return how many more submissions are possible now, or None when unlimited."""
        left = [n for n in (self.remaining_today, self.remaining_total) if n is not None]
        return min(left) if left else None


def utc_day(now: datetime | None = None) -> str:
    """Return the UTC calendar day of now as YYYY-MM-DD."""
    return (now or utcnow()).strftime("%Y-%m-%d")


def next_reset(now: datetime | None = None) -> datetime:
    """Return the next midnight UTC after now."""
    now = now or utcnow()
    return datetime(now.year, now.month, now.day) + timedelta(days=1)


def owner_key(*, user_id: int, team_id: int | None) -> str:
    """Return the quota owner of an upload: its team when it has one, else its uploader."""
    return f"team:{team_id}" if team_id is not None else f"user:{user_id}"


def owner_of(ctx: ServiceContext, *, phase: Phase, user: User) -> str:
    """Return whose quota the user's uploads to phase use: their team's in its competition, else their own."""
    team = team_of(ctx, competition_id=phase.competition_id, user_id=user.id)
    return owner_key(user_id=user.id, team_id=None if team is None else team.id)


def quota_status(ctx: ServiceContext, *, phase: Phase, user: User, now: datetime | None = None) -> QuotaStatus:
    """Return the used and remaining submissions in phase (today in UTC, and in total) of the user or their team."""
    return owner_status(ctx, phase=phase, owner=owner_of(ctx, phase=phase, user=user), now=now)


def owner_status(ctx: ServiceContext, *, phase: Phase, owner: str, now: datetime | None = None) -> QuotaStatus:
    """Return an owner's used and remaining submissions in phase (today in UTC, and in total)."""
    now = now or utcnow()
    day = utc_day(now)
    query = select(QuotaUsage.day, QuotaUsage.used).where(
        QuotaUsage.phase_id == phase.id, QuotaUsage.owner == owner, QuotaUsage.day.in_([day, TOTAL])
    )
    rows = {row_day: used for row_day, used in ctx.session.execute(query)}
    return QuotaStatus(
        day=day,
        used_today=rows.get(day, 0),
        max_per_day=phase.max_per_day,
        used_total=rows.get(TOTAL, 0),
        max_total=phase.max_total,
        resets_at=next_reset(now),
        shared=owner.startswith("team:"),
    )


def charge(ctx: ServiceContext, *, phase: Phase, owner: str, now: datetime | None = None) -> str:
    """Take one submission from the owner's daily and total quota and return the UTC day charged.

    Raises QuotaExceeded; the caller must then roll back (the daily unit may be taken).
    """
    now = now or utcnow()
    day = utc_day(now)
    _insert_missing(ctx.session, phase_id=phase.id, owner=owner, days=(day, TOTAL))
    if not _take(ctx.session, phase_id=phase.id, owner=owner, day=day, limit=phase.max_per_day):
        raise _daily_exceeded(phase, owner=owner, resets_at=next_reset(now))
    if not _take(ctx.session, phase_id=phase.id, owner=owner, day=TOTAL, limit=phase.max_total):
        raise _total_exceeded(phase, owner=owner)
    return day


def check_available(ctx: ServiceContext, *, phase: Phase, owner: str, now: datetime | None = None) -> None:
    """Raise QuotaExceeded when nothing is left (a cheap early check; charge is the real guard)."""
    status = owner_status(ctx, phase=phase, owner=owner, now=now)
    if status.remaining_total == 0:
        raise _total_exceeded(phase, owner=owner)
    if status.remaining_today == 0:
        raise _daily_exceeded(phase, owner=owner, resets_at=status.resets_at)


def refund(ctx: ServiceContext, *, submission: Submission) -> None:
    """Give back the unit a submission was charged (on the day it was charged); at most once."""
    if submission.quota_day is None:
        return
    owner = owner_key(user_id=submission.user_id, team_id=submission.team_id)
    for day in (submission.quota_day, TOTAL):
        ctx.session.execute(
            update(QuotaUsage)
            .where(
                QuotaUsage.phase_id == submission.phase_id,
                QuotaUsage.owner == owner,
                QuotaUsage.day == day,
                QuotaUsage.used > 0,
            )
            .values(used=QuotaUsage.used - 1)
            .execution_options(synchronize_session=False)
        )
    submission.quota_day = None


def _who(owner: str) -> str:
    """Return the subject of a quota message: the team's members share it."""
    return "Your team has" if owner.startswith("team:") else "You have"


def _daily_exceeded(phase: Phase, *, owner: str, resets_at: datetime) -> QuotaExceeded:
    """Return the error of a used-up daily limit, saying when it resets."""
    return QuotaExceeded(
        f"{_who(owner)} used all {phase.max_per_day} submissions of today (UTC) in this phase; "
        f"the quota resets at {resets_at:%Y-%m-%d %H:%M} UTC.",
        resets_at=resets_at,
    )


def _total_exceeded(phase: Phase, *, owner: str) -> QuotaExceeded:
    """Return the error of a used-up total limit (it never resets)."""
    return QuotaExceeded(f"{_who(owner)} used all {phase.max_total} submissions allowed in this phase.",
                         resets_at=None)


def _insert_missing(session: Session, *, phase_id: int, owner: str, days: tuple[str, ...]) -> None:
    """Insert zero-usage rows for days that have none, tolerating concurrent inserts."""
    rows = [{"phase_id": phase_id, "owner": owner, "day": day, "used": 0} for day in days]
    dialect = session.get_bind().dialect.name
    statement: postgresql.Insert | sqlite.Insert
    if dialect == "postgresql":
        statement = postgresql.insert(QuotaUsage).values(rows).on_conflict_do_nothing(index_elements=UNIQUE_ROW)
    elif dialect == "sqlite":
        statement = sqlite.insert(QuotaUsage).values(rows).on_conflict_do_nothing(index_elements=UNIQUE_ROW)
    else:  # pragma: no cover - only PostgreSQL and SQLite are supported
        raise NotImplementedError(f"quota rows on {dialect}")
    session.execute(statement)


def _take(session: Session, *, phase_id: int, owner: str, day: str, limit: int | None) -> bool:
    """Add one to the usage row if it is below limit; return whether it was."""
    statement = (
        update(QuotaUsage)
        .where(QuotaUsage.phase_id == phase_id, QuotaUsage.owner == owner, QuotaUsage.day == day)
        .values(used=QuotaUsage.used + 1)
        .execution_options(synchronize_session=False)
    )
    if limit is not None:
        statement = statement.where(QuotaUsage.used < limit)
    return session.execute(statement).rowcount == 1  # type: ignore[attr-defined]
