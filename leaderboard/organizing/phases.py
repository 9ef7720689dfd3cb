"""Phases: creation from an organizer's files, dates and limits, open and close, label replacement, rescoring.

Every change takes ``actor``: the user asking (Forbidden unless they manage the
competition, see access.py) or ``access.OPERATOR`` for the CLI. Looking a phase up and
its status are access.py's.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from leaderboard.accounts import Actor, audit, managed_competition, managed_phase, phase_status
from leaderboard.models import Job, LabelVersion, Phase
from leaderboard.notify import phase_notices
from leaderboard.operations import count_eligible, jobs
from leaderboard.organizing.baselines import ensure_builtin_baselines
from leaderboard.phase_data import (
    check_labels,
    checked_questions,
    config_to_json,
    derive_questions,
    ensure_intact,
    has_private_split,
    public_fields_json,
    store_labels,
    store_questions,
)
from leaderboard.platform import Conflict, InvalidInput, ServiceContext
from leaderboard.platform.db import naive_utc, utcnow

LIMIT_MIN = 0
"""The smallest submission limit (per day or in total); 0 closes uploads to everyone, empty means no limit."""
DEFAULT_MAX_PER_DAY = 5
"""The daily limit of a phase created without one (as Kaggle's): an unlimited phase is an organizer's choice."""
UNLIMITED = "unlimited"
"""The one spelling of "no daily limit" when creating a phase: CLI --max-per-day, API field, form choice."""
DailyLimit = int | str | None
"""A daily limit as given: a number, UNLIMITED, or None (not given: DEFAULT_MAX_PER_DAY when creating)."""
VISIBILITIES = ("public", "hidden")
UPDATABLE = frozenset({"name", "description", "start_at", "end_at", "max_per_day", "max_total",
                       "leaderboard_visibility", "state_override"})


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
    max_per_day: DailyLimit = None,
    max_total: int | None = None,
    description: str = "",
    leaderboard_visibility: str = "public",
    actor: Actor,
) -> Phase:
    """Create the next phase of a competition, store its files and enter its built-in baselines.

    Without ``max_per_day`` the phase takes DEFAULT_MAX_PER_DAY uploads a day; UNLIMITED
    (the organizer's explicit choice) gives it none. ``max_total`` is empty by default.
    """
    competition = managed_competition(ctx, slug=competition_slug, actor=actor)
    fields = _checked_fields(
        {"name": name, "description": description, "start_at": start_at, "end_at": end_at,
         "max_per_day": DEFAULT_MAX_PER_DAY if max_per_day is None else max_per_day, "max_total": max_total,
         "leaderboard_visibility": leaderboard_visibility}
    )
    label_set = check_labels(labels, config)
    public = checked_questions(questions) if questions is not None else derive_questions(labels, label_set.config)
    position = (ctx.session.scalar(
        select(func.max(Phase.position)).where(Phase.competition_id == competition.id)) or 0) + 1
    task_config = {**config_to_json(label_set.config), **public_fields_json(label_set.config)}
    phase = Phase(competition_id=competition.id, position=position, task_config=task_config,
                  labels_key="", labels_sha256="", label_version=1, n_items=label_set.n,
                  has_private_split=has_private_split(labels), **fields)
    phase.announced_status = phase_status(phase)  # its webhooks tell changes from here on (notify/phase_notices.py)
    _insert_with_files(ctx, phase, labels=labels, questions=public)
    audit.record(ctx, actor=actor, competition=competition, target=audit.phase_target(phase.id, phase.name),
                 summary=f"created the phase with {phase.n_items} items"
                         f"{' and a private split' if phase.has_private_split else ''}")
    ensure_builtin_baselines(ctx, phase=phase)
    return phase


def update_phase(ctx: ServiceContext, *, phase_id: int, actor: Actor, **fields: Any) -> Phase:
    """Change a phase's name, description, dates, limits, leaderboard visibility or state override.

    A max_per_day of UNLIMITED (or None) removes the daily limit.
    """
    phase = managed_phase(ctx, phase_id=phase_id, actor=actor)
    before = {key: getattr(phase, key) for key in UPDATABLE}
    for key, value in check_phase_update(phase, **fields).items():
        setattr(phase, key, value)
    changed = sorted(key for key in UPDATABLE if getattr(phase, key) != before[key])
    if not changed:  # a save of the unchanged form: nothing to log or refresh
        ctx.session.commit()
        return phase
    audit.record(ctx, actor=actor, competition=phase.competition, target=audit.phase_target(phase.id, phase.name),
                 summary=f"edited the phase ({', '.join(changed)})")
    ctx.board_changed(phase_id=phase.id)
    return phase


def check_phase_update(phase: Phase, **fields: Any) -> dict[str, Any]:
    """Return the phase fields update_phase would set, checked and normalized, or raise InvalidInput; change nothing."""
    unknown = sorted(set(fields) - UPDATABLE)
    if unknown:
        raise InvalidInput(f"These phase fields cannot be changed here: {', '.join(unknown)}.")
    merged = {key: fields.get(key, getattr(phase, key)) for key in UPDATABLE - {"state_override"}}
    checked = _checked_fields(merged)
    for key in ("start_at", "end_at"):  # a form shows minutes: the same minute keeps the stored seconds
        stored, given = getattr(phase, key), checked[key]
        if stored is not None and given is not None and given == stored.replace(second=0, microsecond=0):
            checked[key] = stored
    if "state_override" in fields:
        if fields["state_override"] not in (None, "open", "closed"):
            raise InvalidInput("state_override is 'open', 'closed' or empty (follow the dates).")
        checked["state_override"] = fields["state_override"]
    return checked


def open_phase(ctx: ServiceContext, *, phase_id: int, actor: Actor, confirm: bool = False) -> Phase:
    """Open a phase for submissions now, whatever its dates say.

    Reopening a closed phase whose private split has been shown needs ``confirm``
    (Conflict otherwise): everyone may have seen the private ranking.
    """
    phase = managed_phase(ctx, phase_id=phase_id, actor=actor)
    now, was = utcnow(), phase_status(phase)
    if was == "closed" and phase.has_private_split and not confirm:
        raise Conflict("This phase is closed and its private split has been shown: reopening it lets participants "
                       "keep submitting against a ranking everyone has seen. Confirm to reopen it anyway.")
    if was == "closed" and phase.private_shown_at is None:
        phase.private_shown_at = min(phase.end_at or now, now)
    phase.state_override = "open"
    if phase.start_at is None:
        phase.start_at = now
    verb = "reopened the closed phase" if was == "closed" else "opened the phase"
    phase_notices.announce(ctx, phase=phase, status="open")  # written with the change, once (docs/NOTIFY.md)
    shown = " (its private split had been shown; confirmed)" if was == "closed" and phase.has_private_split else ""
    audit.record(ctx, actor=actor, competition=phase.competition, target=audit.phase_target(phase.id, phase.name),
                 summary=verb + shown)
    ctx.board_changed(phase_id=phase.id)
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
    if phase.has_private_split and phase.private_shown_at is None:
        phase.private_shown_at = now
    phase_notices.announce(ctx, phase=phase, status="closed")  # written with the change, once (docs/NOTIFY.md)
    audit.record(ctx, actor=actor, competition=phase.competition, target=audit.phase_target(phase.id, phase.name),
                 summary="closed the phase" + (" (the private split is now shown)" if phase.has_private_split else ""))
    ctx.board_changed(phase_id=phase.id)
    return phase


def replace_labels(ctx: ServiceContext, *, phase_id: int, labels: bytes, actor: Actor, run: bool = True) -> Job:
    """Store a new label version (same config), refresh the built-in baselines, and start the re-scoring job."""
    phase = managed_phase(ctx, phase_id=phase_id, actor=actor)
    label_set = check_labels(labels, phase.task_config)
    stored = store_labels(ctx, labels=labels)
    phase.label_version, phase.labels_key, phase.labels_sha256 = phase.label_version + 1, stored.key, stored.sha256
    phase.n_items, phase.has_private_split = label_set.n, has_private_split(labels)
    ctx.session.add(LabelVersion(phase_id=phase.id, version=phase.label_version, labels_key=stored.key,
                                 labels_sha256=stored.sha256))
    audit.record(ctx, actor=actor, competition=phase.competition, target=audit.phase_target(phase.id, phase.name),
                 summary=f"replaced the labels: version {phase.label_version}, {label_set.n} items")
    ensure_builtin_baselines(ctx, phase=phase)
    return _start_rescore(ctx, phase, actor=actor, kind="replace_labels", run=run)


def rescore_phase(ctx: ServiceContext, *, phase_id: int, actor: Actor, run: bool = True) -> Job:
    """Start the job that scores every scored submission of the phase again (old scores stay until replaced).

    The label file is checked first: a file failing its integrity check is refused
    (ScoringUnavailable) before any job, log line or score changes.
    """
    phase = managed_phase(ctx, phase_id=phase_id, actor=actor)
    ensure_intact(ctx, phase)
    return _start_rescore(ctx, phase, actor=actor, kind="rescore", run=run)


def _start_rescore(ctx: ServiceContext, phase: Phase, *, actor: Actor, kind: str, run: bool) -> Job:
    """Create a re-scoring job for the phase, log it, and dispatch it unless the caller runs it (run=False)."""
    total = count_eligible(ctx, phase_id=phase.id)
    job = jobs.create_job(ctx, kind=kind, actor=actor, competition_id=phase.competition_id, phase_id=phase.id,
                          total=total)
    audit.record(ctx, actor=actor, competition=phase.competition, target=audit.phase_target(phase.id, phase.name),
                 summary=f"started re-scoring {total} submission(s) against label version {phase.label_version} "
                         f"(job {job.id})")
    if run:
        ctx.dispatch_job(job.id)
    return job


def _insert_with_files(ctx: ServiceContext, phase: Phase, *, labels: bytes, questions: bytes) -> None:
    """Insert a new phase, store its label and questions files under its id, and commit."""
    ctx.session.add(phase)
    try:
        ctx.session.flush()
        stored = store_labels(ctx, labels=labels)
        shown = store_questions(ctx, phase_id=phase.id, questions=questions)
        phase.labels_key, phase.labels_sha256 = stored.key, stored.sha256
        phase.questions_key, phase.questions_sha256 = shown.key, shown.sha256
        ctx.session.add(LabelVersion(phase_id=phase.id, version=phase.label_version, labels_key=stored.key,
                                     labels_sha256=stored.sha256))
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
    start_at, end_at = naive_utc(fields["start_at"]), naive_utc(fields["end_at"])
    if start_at is not None and end_at is not None and end_at <= start_at:
        raise InvalidInput("The phase must end after it starts.")
    if fields["max_per_day"] == UNLIMITED:
        fields = {**fields, "max_per_day": None}
    for key in ("max_per_day", "max_total"):
        value = fields[key]
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < LIMIT_MIN):
            empty = f"'{UNLIMITED}'" if key == "max_per_day" else "empty"
            raise InvalidInput(f"{key} is a whole number of submissions, {LIMIT_MIN} or more (or {empty} for no "
                               "limit).")
    if fields["leaderboard_visibility"] not in VISIBILITIES:
        raise InvalidInput(f"leaderboard_visibility is one of {', '.join(VISIBILITIES)}.")
    return {"name": name, "description": str(fields["description"] or "").strip(), "start_at": start_at,
            "end_at": end_at, "max_per_day": fields["max_per_day"], "max_total": fields["max_total"],
            "leaderboard_visibility": fields["leaderboard_visibility"]}
