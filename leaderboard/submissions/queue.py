"""The scoring queue: which submission a free scorer takes next, and where each waiting one stands.

docs/RUNNING.md#the-scoring-queue. A submission is *ready* when it is ``queued`` and due
(no retry pending: ``next_attempt_at`` empty or passed). A free scorer does not take the
oldest ready row but the fairest: owners (the team, else the uploader) are served in
turn, the one served least recently first (``served_at``, stamped on every claim; never
served comes first), each owner's rows by fewest attempts, then oldest (so a row retried
after a platform error does not keep its owner's others waiting). So one owner's flood of uploads
never holds back another owner's single upload by more than the scoring run already
under way. ``queue_positions`` numbers the ready rows in that same order, and
``eta_seconds`` turns a place into seconds from the throughput of the last minutes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from itertools import chain, zip_longest

from sqlalchemy import ColumnElement, and_, func, or_, select

from leaderboard.entries.quota import owner_key
from leaderboard.models import Submission
from leaderboard.platform import ServiceContext
from leaderboard.platform.db import utcnow
from leaderboard.platform.leases import lease_end
from leaderboard.submissions.claims import claim

WINDOW = 5000
"""Ready rows the fair order considers (the oldest); a longer queue is ordered as it shrinks."""
THROUGHPUT_WINDOW = timedelta(minutes=10)
"""How far back the finished scoring runs that give the throughput are counted."""
MIN_SPAN = timedelta(seconds=30)
"""The shortest span a throughput is measured over (a burst is not a rate)."""
CLAIM_TRIES = 20
"""Rows of the fair order a scorer tries to claim before it gives up (others took the first ones)."""


@dataclass(frozen=True)
class QueueStats:
    """A phase's queue as organizers see it."""

    phase_id: int
    length: int
    oldest: datetime | None
    scoring: int
    per_minute: float


@dataclass(frozen=True)
class Place:
    """Where a queued submission stands: its place in line (None while a retry waits) and the seconds to go."""

    position: int | None
    eta_seconds: int | None

    def sentence(self) -> str:
        """Return the place in words, e.g. "3rd in line, about 20 s"."""
        if self.position is None:
            return "waiting to be tried again"
        eta = f", about {self.eta_seconds} s" if self.eta_seconds is not None else ""
        return f"{ordinal(self.position)} in line{eta}"


def ordinal(n: int) -> str:
    """Return 1st, 2nd, 3rd, 4th, 11th, 21st..."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def place_in_line(ctx: ServiceContext, *, submission: Submission) -> Place | None:
    """Return a queued submission's place in line and estimate; None when it is not queued."""
    if submission.status != "queued":
        return None
    position = queue_positions(ctx, [submission.id]).get(submission.id)
    if position is None:  # not in line: waiting for a retry, or taken by a scorer since it was read
        ctx.session.refresh(submission, attribute_names=["status"])
        if submission.status != "queued":  # taken: the caller now shows its new status, not a queued one
            return None
    return Place(position=position, eta_seconds=eta_seconds(position, per_second(ctx)))


def ready(now: datetime | None = None) -> ColumnElement[bool]:
    """Return the condition of a submission waiting to be scored now."""
    now = now or utcnow()
    return and_(Submission.status == "queued",
                or_(Submission.next_attempt_at.is_(None), Submission.next_attempt_at <= now))


def fair_order(ctx: ServiceContext, *, now: datetime | None = None) -> list[int]:
    """Return the ready submissions' ids in the order scorers take them."""
    rows = ctx.session.execute(select(Submission.id, Submission.user_id, Submission.team_id)
                               .where(ready(now)).order_by(Submission.attempts, Submission.id)
                               .limit(WINDOW)).all()
    by_owner: dict[str, list[int]] = {}
    for submission_id, user_id, team_id in rows:
        by_owner.setdefault(owner_key(user_id=user_id, team_id=team_id), []).append(submission_id)
    served = _last_served(ctx, by_owner)
    owners = sorted(by_owner, key=lambda owner: (served.get(owner) or datetime.min, by_owner[owner][0]))
    turns = zip_longest(*(by_owner[owner] for owner in owners))
    return [submission_id for submission_id in chain.from_iterable(turns) if submission_id is not None]


def queue_positions(ctx: ServiceContext, submission_ids: Iterable[int]) -> dict[int, int]:
    """Return the place in line (1: next) of each given submission that is ready."""
    wanted = set(submission_ids)
    if not wanted:
        return {}
    return {submission_id: place for place, submission_id in enumerate(fair_order(ctx), start=1)
            if submission_id in wanted}


def per_second(ctx: ServiceContext, *, phase_id: int | None = None, now: datetime | None = None) -> float:
    """Return how many submissions the scorers finished per second lately (0.0: too few to tell)."""
    now = now or utcnow()
    since = now - THROUGHPUT_WINDOW
    query = select(func.count(), func.min(Submission.served_at)).where(
        Submission.served_at >= since, Submission.status.in_(("scored", "failed")))
    if phase_id is not None:
        query = query.where(Submission.phase_id == phase_id)
    count, first = ctx.session.execute(query).one()
    if count < 2 or first is None:
        return 0.0
    return float(count) / max((now - first).total_seconds(), MIN_SPAN.total_seconds())


def eta_seconds(place: int | None, rate: float) -> int | None:
    """Return the seconds until a submission at place is scored, at rate per second (None: unknown)."""
    if place is None or rate <= 0:
        return None
    return max(1, round(place / rate))


def queue_stats(ctx: ServiceContext, *, phase_ids: Iterable[int]) -> list[QueueStats]:
    """Return each phase's queue: length, oldest waiting upload, runs under way, throughput per minute."""
    ids = list(phase_ids)
    if not ids:
        return []
    waiting = {row[0]: (row[1], row[2]) for row in ctx.session.execute(
        select(Submission.phase_id, func.count(), func.min(Submission.created_at))
        .where(Submission.phase_id.in_(ids), Submission.status == "queued").group_by(Submission.phase_id))}
    scoring = dict(ctx.session.execute(  # type: ignore[arg-type]
        select(Submission.phase_id, func.count())
        .where(Submission.phase_id.in_(ids), Submission.status == "scoring").group_by(Submission.phase_id)).all())
    return [QueueStats(phase_id=phase_id, length=waiting.get(phase_id, (0, None))[0],
                       oldest=waiting.get(phase_id, (0, None))[1], scoring=scoring.get(phase_id, 0),
                       per_minute=round(per_second(ctx, phase_id=phase_id) * 60, 1)) for phase_id in ids]


def _last_served(ctx: ServiceContext, owners: Iterable[str]) -> dict[str, datetime]:
    """Return when each owner (``team:N`` / ``user:N``) last had a submission claimed by a scorer."""
    teams = [int(owner[5:]) for owner in owners if owner.startswith("team:")]
    users = [int(owner[5:]) for owner in owners if owner.startswith("user:")]
    if not teams and not users:
        return {}
    rows = ctx.session.execute(
        select(Submission.team_id, Submission.user_id, func.max(Submission.served_at))
        .where(Submission.served_at.is_not(None),
               or_(Submission.team_id.in_(teams), and_(Submission.team_id.is_(None), Submission.user_id.in_(users))))
        .group_by(Submission.team_id, Submission.user_id))
    served: dict[str, datetime] = {}
    for team_id, user_id, last in rows:
        owner = owner_key(user_id=user_id, team_id=team_id)
        if last is not None and (owner not in served or last > served[owner]):
            served[owner] = last
    return served


def claim_next(ctx: ServiceContext) -> tuple[int, datetime] | None:
    """Claim the fairest ready submission for a scoring run; return (its id, the claim's stamp), or None."""
    now = utcnow()
    for submission_id in fair_order(ctx, now=now)[:CLAIM_TRIES]:
        if claim(ctx, submission_id, ready(now), **claim_values(ctx, now)):
            ctx.session.commit()
            return submission_id, now
    ctx.session.rollback()
    return None


def claim_values(ctx: ServiceContext, claimed: datetime) -> dict[str, object]:
    """Return what a scoring run's claim writes: the status, its stamp, its first lease, when the owner was served."""
    return {"status": "scoring", "scoring_started_at": claimed, "served_at": claimed,
            "lease_until": lease_end(ctx.settings.lease_seconds, now=claimed)}
