"""phase.opened / phase.closed webhooks, each sent once per change of a phase's status, by hand or by its dates.

A phase's status derives from its dates and an organizer's override (accounts.access.
phase_status); ``phases.announced_status`` is the status its webhooks last told. Every
announcement first claims the change with one conditional UPDATE (``WHERE
announced_status = <old>``), in the transaction that writes the deliveries: of two
sweepers, or a sweeper and an organizer's open/close, only the one whose UPDATE
matched writes the event. The sweep (``announce_due``, from submissions.recovery.sweep)
sends what the clock changed; ``announce`` is what organizing.phases' open and close
call. The status function is the caller's (this package may not import accounts).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime

from sqlalchemy import ColumnElement, select, update

from leaderboard.models import Phase
from leaderboard.notify.webhooks import enqueue
from leaderboard.platform import ServiceContext
from leaderboard.platform.db import utcnow

log = logging.getLogger(__name__)

EVENT_OF = {"open": "phase.opened", "closed": "phase.closed"}
"""The event a status change announces (a phase back to upcoming announces nothing)."""
StatusOf = Callable[[datetime | None, datetime | None, str | None, datetime], str]
"""accounts.access.status_at: (start_at, end_at, state_override, now) -> status."""


def announce(ctx: ServiceContext, *, phase: Phase, status: str) -> bool:
    """Claim the phase's change to status and queue its webhook (no commit); False when already announced.

    The phase's own pending changes are flushed first, so on PostgreSQL a concurrent
    sweeper's claim of the same row waits for this transaction and then finds it told.
    """
    ctx.session.flush()
    claimed = _claim(ctx, phase.id, Phase.announced_status.is_distinct_from(status), status)
    ctx.session.expire(phase, ["announced_status"])
    if claimed and status in EVENT_OF:
        _enqueue(ctx, phase_id=phase.id, competition_id=phase.competition_id, name=phase.name, status=status)
    return claimed


def announce_due(ctx: ServiceContext, *, status_of: StatusOf, now: datetime | None = None) -> list[int]:
    """Announce every phase whose status changed since it was last told, once each; return their ids.

    Each change commits on its own. A phase never told (announced_status empty) is only
    recorded, silently: what it was before is not known.
    """
    now = now or utcnow()
    rows = ctx.session.execute(select(Phase.id, Phase.competition_id, Phase.name, Phase.start_at, Phase.end_at,
                                      Phase.state_override, Phase.announced_status).order_by(Phase.id)).all()
    changed = []
    for row in rows:
        status = status_of(row.start_at, row.end_at, row.state_override, now)
        if status == row.announced_status:
            continue
        unchanged = (Phase.announced_status.is_not_distinct_from(row.announced_status)
                     & Phase.start_at.is_not_distinct_from(row.start_at)
                     & Phase.end_at.is_not_distinct_from(row.end_at)
                     & Phase.state_override.is_not_distinct_from(row.state_override))
        if _claim(ctx, row.id, unchanged, status) and row.announced_status is not None:
            if status in EVENT_OF:
                _enqueue(ctx, phase_id=row.id, competition_id=row.competition_id, name=row.name, status=status)
            changed.append(row.id)
            log.info("phase %s is %s by its dates; announced", row.id, status)
        ctx.session.commit()
    return changed


def _claim(ctx: ServiceContext, phase_id: int, held: ColumnElement[bool], status: str) -> bool:
    """Set the phase's announced status if held still matches; return whether this call did."""
    result = ctx.session.execute(update(Phase).where(Phase.id == phase_id, held).values(announced_status=status)
                                 .execution_options(synchronize_session=False))
    return bool(getattr(result, "rowcount", 0))


def _enqueue(ctx: ServiceContext, *, phase_id: int, competition_id: int, name: str, status: str) -> None:
    """Queue the phase's opened or closed webhooks (no commit)."""
    enqueue(ctx.session, competition_id=competition_id, event=EVENT_OF[status], phase_id=phase_id,
            data={"phase_id": phase_id, "phase": name, "at": f"{utcnow():%Y-%m-%dT%H:%M:%S}Z"})
