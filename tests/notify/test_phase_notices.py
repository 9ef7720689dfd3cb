"""phase.opened / phase.closed webhooks when a phase's dates open or close it: once each, whoever sweeps.

The sweep (submissions.recovery.sweep) compares each phase's status with the status its
webhooks last told and claims the change with a conditional UPDATE; an organizer's open
and close claim the same column. Every test runs on SQLite and PostgreSQL.
"""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

from sqlalchemy import select

from leaderboard.accounts import OPERATOR
from leaderboard.models import Phase, WebhookDelivery
from leaderboard.notify import phase_notices
from leaderboard.organizing import notifications, phases
from leaderboard.platform import ServiceContext
from leaderboard.platform.db import utcnow
from leaderboard.submissions import recovery

PHASE_EVENTS = ["phase.opened", "phase.closed"]
HOOK_URL = "http://127.0.0.1:9/hook"


def hook(ctx: ServiceContext, competition: Any, events: list[str] | None = None) -> None:
    """Register a webhook of the phase events as the operator."""
    notifications.register_webhook(ctx, slug=competition.slug, url=HOOK_URL, events=events or PHASE_EVENTS,
                                   actor=OPERATOR)


def deliveries(ctx: ServiceContext, phase_id: int) -> list[str]:
    """Return the events of the phase's delivery rows, oldest first."""
    ctx.session.expire_all()
    return list(ctx.session.scalars(select(WebhookDelivery.event).where(WebhookDelivery.phase_id == phase_id)
                                    .order_by(WebhookDelivery.id)))


def dated_phase(make_phase: Any) -> Phase:
    """Return an upcoming phase that starts in an hour and ends in two."""
    now = utcnow()
    return make_phase(status="upcoming", start_at=now + timedelta(hours=1), end_at=now + timedelta(hours=2))


def test_a_phase_opened_and_closed_by_its_dates_sends_each_event_once(ctx, make_phase) -> None:
    phase = dated_phase(make_phase)
    hook(ctx, phase.competition, [*PHASE_EVENTS, "board.changed"])
    recovery.sweep(ctx)
    assert deliveries(ctx, phase.id) == []  # still upcoming
    started = phase.start_at + timedelta(minutes=1)
    recovery.sweep(ctx, now=started)
    recovery.sweep(ctx, now=started + timedelta(seconds=30))
    # the board of a phase opened by its dates changed as an organizer's open changes it
    assert deliveries(ctx, phase.id) == ["phase.opened", "board.changed"]
    ended = phase.end_at + timedelta(minutes=1)
    recovery.sweep(ctx, now=ended)
    recovery.sweep(ctx, now=ended)
    assert deliveries(ctx, phase.id) == ["phase.opened", "board.changed", "phase.closed"]  # board.changed pending
    assert ctx.session.get(Phase, phase.id).announced_status == "closed"


def test_two_concurrent_sweepers_send_one_opened(runtime, ctx, make_phase) -> None:
    phase = dated_phase(make_phase)
    hook(ctx, phase.competition)
    started = phase.start_at + timedelta(minutes=1)
    barrier = threading.Barrier(2)
    changed: list[list[int]] = []

    def sweeper() -> None:
        with runtime.sessions() as session:
            barrier.wait()
            changed.append(recovery.announce_phases(runtime.context(session), now=started))

    threads = [threading.Thread(target=sweeper) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(changed) == [[], [phase.id]]
    assert deliveries(ctx, phase.id) == ["phase.opened"]


def test_a_hand_opened_phase_is_not_announced_again_when_its_start_passes(ctx, make_phase) -> None:
    phase = dated_phase(make_phase)
    hook(ctx, phase.competition)
    phases.open_phase(ctx, actor=OPERATOR, phase_id=phase.id)
    phases.update_phase(ctx, actor=OPERATOR, phase_id=phase.id, state_override=None)  # back to the dates
    recovery.sweep(ctx)  # upcoming by its dates again: recorded, nothing sent
    assert deliveries(ctx, phase.id) == ["phase.opened"]
    assert ctx.session.get(Phase, phase.id).announced_status == "upcoming"
    recovery.sweep(ctx, now=phase.start_at + timedelta(minutes=1))
    assert deliveries(ctx, phase.id) == ["phase.opened", "phase.opened"]
    phases.open_phase(ctx, actor=OPERATOR, phase_id=phase.id)  # already open and told: no second event
    assert deliveries(ctx, phase.id) == ["phase.opened", "phase.opened"]
    phases.close_phase(ctx, actor=OPERATOR, phase_id=phase.id)
    recovery.sweep(ctx, now=phase.end_at + timedelta(days=1))
    assert deliveries(ctx, phase.id) == ["phase.opened", "phase.opened", "phase.closed"]


def test_a_phase_without_webhooks_sends_nothing_but_is_recorded(ctx, make_phase) -> None:
    phase = dated_phase(make_phase)
    other = dated_phase(make_phase)
    hook(ctx, other.competition, ["submission.scored"])  # a webhook that asked for no phase event
    assert recovery.announce_phases(ctx, now=phase.start_at + timedelta(minutes=1)) == [phase.id, other.id]
    assert deliveries(ctx, phase.id) == [] and deliveries(ctx, other.id) == []
    assert ctx.session.get(Phase, phase.id).announced_status == "open"


def test_a_phase_never_told_is_recorded_silently(ctx, make_phase) -> None:
    phase = make_phase()  # open since its creation
    hook(ctx, phase.competition)
    ctx.session.execute(Phase.__table__.update().values(announced_status=None))
    ctx.session.commit()
    assert phase_notices.announce_due(ctx, status_of=lambda *_: "open") == []
    assert deliveries(ctx, phase.id) == []
    assert ctx.session.get(Phase, phase.id).announced_status == "open"


def test_an_organizer_opening_a_phase_the_sweep_has_not_told_yet_sends_one_opened(ctx, make_phase) -> None:
    phase = make_phase(status="upcoming", start_at=utcnow() - timedelta(minutes=1))  # open by its date already
    hook(ctx, phase.competition)
    ctx.session.execute(Phase.__table__.update().values(announced_status="upcoming"))  # no sweep since
    ctx.session.commit()
    phases.open_phase(ctx, actor=OPERATOR, phase_id=phase.id)
    recovery.sweep(ctx)
    assert deliveries(ctx, phase.id) == ["phase.opened"]


def test_an_edited_override_is_announced_by_the_next_sweep_once(ctx, make_phase) -> None:
    phase = make_phase()
    hook(ctx, phase.competition)
    phases.update_phase(ctx, actor=OPERATOR, phase_id=phase.id, state_override="closed")
    assert deliveries(ctx, phase.id) == []
    recovery.sweep(ctx)
    recovery.sweep(ctx)
    assert deliveries(ctx, phase.id) == ["phase.closed"]
