"""Phases: creation from an organizer's files, status, dates and limits, label replacement.

Every change takes ``actor``: the user asking (Forbidden unless they manage the
competition, see permissions.py) or ``permissions.OPERATOR`` for the CLI.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from leaderboard.db import utcnow
from leaderboard.models import Competition, Phase
from leaderboard.runtime import ServiceContext
from leaderboard.services.errors import Conflict, InvalidInput, NotFound
from leaderboard.services.labelsets import check_labels, config_to_json, has_private_split, load_phase_labels
from leaderboard.services.permissions import Actor, ensure_can_manage
from leaderboard.services.phase_files import (
    checked_questions, derive_questions, public_file, store_labels, store_questions,
)

__all__ = ["close_phase", "create_phase", "get_phase", "load_phase_labels", "managed_competition", "managed_phase",
           "open_phase", "phase_status", "public_file", "replace_labels", "rescore_phase", "update_phase"]

STATUSES = ("upcoming", "open", "closed")
VISIBILITIES = ("public", "hidden")
UPDATABLE = frozenset({"name", "description", "start_at", "end_at", "max_per_day", "max_total",
                       "leaderboard_visibility", "state_override"})


def phase_status(phase: Phase, now: datetime | None = None) -> str:
    """Return 'upcoming', 'open' or 'closed': an organizer's override wins, else the clock decides."""
    if phase.state_override in ("open", "closed"):
        return phase.state_override
    now = now or utcnow()
    if phase.start_at is None or now < phase.start_at:
        return "upcoming"
    if phase.end_at is not None and now >= phase.end_at:
        return "closed"
    return "open"


def create_phase(
    ctx: ServiceContext,
    *,
    competition_slug: str,
    name: str,
    labels: bytes,
    questions: bytes | None = None,
    config: dict[str, Any] | None = None,
    start_at: datetime | None = None,
    end_at: datetime | None = None,
    max_per_day: int | None = None,
    max_total: int | None = None,
    description: str = "",
    leaderboard_visibility: str = "public",
    actor: Actor,
) -> Phase:
    """Create the next phase of a competition, store its files and enter its built-in baselines."""
    from leaderboard.services.baselines import ensure_builtin_baselines

    competition = managed_competition(ctx, slug=competition_slug, actor=actor)
    fields = _checked_fields(
        {"name": name, "description": description, "start_at": start_at, "end_at": end_at,
         "max_per_day": max_per_day, "max_total": max_total, "leaderboard_visibility": leaderboard_visibility}
    )
    label_set = check_labels(labels, config)
    public = checked_questions(questions) if questions is not None else derive_questions(labels)
    position = (ctx.session.scalar(
        select(func.max(Phase.position)).where(Phase.competition_id == competition.id)) or 0) + 1
    phase = Phase(competition_id=competition.id, position=position, task_config=config_to_json(label_set.config),
                  labels_key="", labels_sha256="", label_version=1, n_items=label_set.n,
                  has_private_split=has_private_split(labels), **fields)
    _insert_with_files(ctx, phase, labels=labels, questions=public)
    ensure_builtin_baselines(ctx, phase=phase)
    return phase


def get_phase(ctx: ServiceContext, phase_id: int) -> Phase:
    """Return the phase with this id, else raise NotFound."""
    phase = ctx.session.get(Phase, phase_id)
    if phase is None:
        raise NotFound(f"No phase {phase_id}.")
    return phase


def managed_competition(ctx: ServiceContext, *, slug: str, actor: Actor) -> Competition:
    """Return the competition with this slug if actor manages it (NotFound, Forbidden)."""
    competition = ctx.session.scalar(select(Competition).where(Competition.slug == slug))
    if competition is None:
        raise NotFound(f"No competition {slug!r}.")
    ensure_can_manage(ctx, competition=competition, actor=actor)
    return competition


def managed_phase(ctx: ServiceContext, *, phase_id: int, actor: Actor) -> Phase:
    """Return the phase with this id if actor manages its competition (NotFound, Forbidden)."""
    phase = get_phase(ctx, phase_id)
    ensure_can_manage(ctx, competition=phase.competition, actor=actor)
    return phase


def update_phase(ctx: ServiceContext, *, phase_id: int, actor: Actor, **fields: Any) -> Phase:
    """Change a phase's name, description, dates, limits, leaderboard visibility or state override."""
    unknown = sorted(set(fields) - UPDATABLE)
    if unknown:
        raise InvalidInput(f"These phase fields cannot be changed here: {', '.join(unknown)}.")
    phase = managed_phase(ctx, phase_id=phase_id, actor=actor)
    merged = {key: fields.get(key, getattr(phase, key)) for key in UPDATABLE - {"state_override"}}
    for key, value in _checked_fields(merged).items():
        setattr(phase, key, value)
    if "state_override" in fields:
        if fields["state_override"] not in (None, "open", "closed"):
            raise InvalidInput("state_override is 'open', 'closed' or empty (follow the dates).")
        phase.state_override = fields["state_override"]
    ctx.session.commit()
    return phase


def open_phase(ctx: ServiceContext, *, phase_id: int, actor: Actor) -> Phase:
    """Open a phase for submissions now, whatever its dates say."""
    phase = managed_phase(ctx, phase_id=phase_id, actor=actor)
    phase.state_override = "open"
    if phase.start_at is None:
        phase.start_at = utcnow()
    ctx.session.commit()
    return phase


def close_phase(ctx: ServiceContext, *, phase_id: int, actor: Actor) -> Phase:
    """Close a phase now: no more submissions, and the private leaderboard is revealed."""
    phase = managed_phase(ctx, phase_id=phase_id, actor=actor)
    now = utcnow()
    phase.state_override = "closed"
    if phase.end_at is None or phase.end_at > now:
        phase.end_at = now
    if phase.start_at is not None and phase.start_at > now:
        phase.start_at = now
    ctx.session.commit()
    return phase


def replace_labels(ctx: ServiceContext, *, phase_id: int, labels: bytes, actor: Actor) -> Phase:
    """Store a new label version (same config), refresh the built-in baselines, then rescore the phase."""
    from leaderboard.services.baselines import ensure_builtin_baselines

    phase = managed_phase(ctx, phase_id=phase_id, actor=actor)
    label_set = check_labels(labels, phase.task_config)
    version = phase.label_version + 1
    stored = store_labels(ctx, phase_id=phase.id, version=version, labels=labels)
    phase.label_version, phase.labels_key, phase.labels_sha256 = version, stored.key, stored.sha256
    phase.n_items, phase.has_private_split = label_set.n, has_private_split(labels)
    ctx.session.commit()
    ensure_builtin_baselines(ctx, phase=phase)
    rescore_phase(ctx, phase_id=phase.id, actor=actor)
    return phase


def rescore_phase(ctx: ServiceContext, *, phase_id: int, actor: Actor) -> int:
    """Retire every active score of the phase and queue its scored submissions again; return how many."""
    from leaderboard.services.scoring_runs import requeue_phase

    return len(requeue_phase(ctx, phase=managed_phase(ctx, phase_id=phase_id, actor=actor)))


def _insert_with_files(ctx: ServiceContext, phase: Phase, *, labels: bytes, questions: bytes) -> None:
    """Insert a new phase, store its label and questions files under its id, and commit."""
    ctx.session.add(phase)
    try:
        ctx.session.flush()
        stored = store_labels(ctx, phase_id=phase.id, version=1, labels=labels)
        shown = store_questions(ctx, phase_id=phase.id, questions=questions)
        phase.labels_key, phase.labels_sha256 = stored.key, stored.sha256
        phase.questions_key, phase.questions_sha256 = shown.key, shown.sha256
        ctx.session.commit()
    except IntegrityError:
        ctx.session.rollback()
        raise Conflict("Another phase was added to this competition at the same time; try again.") from None
    except BaseException:
        ctx.session.rollback()
        raise


def _checked_fields(fields: dict[str, Any]) -> dict[str, Any]:
    """Return the editable phase fields checked and normalized, or raise InvalidInput."""
    name = str(fields["name"] or "").strip()
    if not name or len(name) > 120:
        raise InvalidInput("A phase name has 1 to 120 characters.")
    start_at, end_at = _naive_utc(fields["start_at"]), _naive_utc(fields["end_at"])
    if start_at is not None and end_at is not None and end_at <= start_at:
        raise InvalidInput("The phase must end after it starts.")
    for key in ("max_per_day", "max_total"):
        value = fields[key]
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            raise InvalidInput(f"{key} is a whole number of submissions, 0 or more (or empty for no limit).")
    if fields["leaderboard_visibility"] not in VISIBILITIES:
        raise InvalidInput(f"leaderboard_visibility is one of {', '.join(VISIBILITIES)}.")
    return {"name": name, "description": str(fields["description"] or "").strip(), "start_at": start_at,
            "end_at": end_at, "max_per_day": fields["max_per_day"], "max_total": fields["max_total"],
            "leaderboard_visibility": fields["leaderboard_visibility"]}


def _naive_utc(value: datetime | None) -> datetime | None:
    """Return value as naive UTC (aware datetimes are converted; naive ones are taken as UTC)."""
    if value is None or value.tzinfo is None:
        return value
    return value.astimezone(timezone.utc).replace(tzinfo=None)
