"""Settings an organizer changes on a live phase: views, probing defences, entry settings; breakdowns re-score.

Each moves the board (views decide its columns and ranking, probing settings what each
figure shows, final_selections the private ranking after close), so every change here
ends with ``board_changed``. Views (docs/FORMATS.md#leaderboard-views) are checked like at creation: their shape
by scoring's config loader, their paths against the phase's label file (a path it cannot
produce is refused with the valid ones). Entry settings go to entries/rules.py.
Breakdowns (the label fields shown as per-value tables) are in every score's results, so
changing them starts a re-scoring job (``update_breakdowns``).
"""

from __future__ import annotations

from typing import Any

from leaderboard.accounts import Actor, audit, managed_phase
from leaderboard.disclosure import update_probing_settings
from leaderboard.entries import update_entry_settings
from leaderboard.models import Job, Phase
from leaderboard.organizing import phases
from leaderboard.phase_data import check_labels, config_to_json, label_fields, load_phase_labels, read_phase_label_bytes
from leaderboard.platform import InvalidInput, ServiceContext
from scoring.config import ENTRY_KEYS, load_config
from scoring.producible import Producible, check_paths
from scoring.types import LabelFileError
from scoring.views import config_paths

VIEWS = "views"
BREAKDOWNS = "breakdowns"


def update_settings(ctx: ServiceContext, *, phase_id: int, actor: Actor, **changes: Any) -> Phase:
    """Change a phase's views, probing and/or entry settings (None restores a default), then refresh its board."""
    views_given, views = VIEWS in changes, changes.pop(VIEWS, None)
    entry_changes = {key: changes.pop(key) for key in ENTRY_KEYS if key in changes}
    phase = managed_phase(ctx, phase_id=phase_id, actor=actor)
    before = _normalized(phase.task_config)
    if views_given:
        _set_views(ctx, phase, views)
    if entry_changes:
        phase = update_entry_settings(ctx, phase_id=phase_id, actor=actor, **entry_changes)
    if changes or not (views_given or entry_changes):
        phase = update_probing_settings(ctx, phase_id=phase_id, actor=actor, **changes)
    after = _normalized(phase.task_config)
    changed = sorted(key for key in {*before, *after} - set(ENTRY_KEYS) if before.get(key) != after.get(key))
    if changed:  # entry settings log themselves (entries/rules.py)
        audit.record(ctx, actor=actor, competition=phase.competition,
                     target=audit.phase_target(phase.id, phase.name),
                     summary=f"changed the phase's settings ({', '.join(changed)})")
    ctx.board_changed(phase_id=phase.id)
    return phase


def check_settings(ctx: ServiceContext, *, phase_id: int, actor: Actor, **changes: Any) -> None:
    """Raise InvalidInput if update_settings would refuse these changes; change nothing.

    A form that saves phase fields and settings together checks both first, so that a
    refused save leaves the phase (and its audit log) as it was.
    """
    phase = managed_phase(ctx, phase_id=phase_id, actor=actor)
    merged = dict(phase.task_config)
    for key, value in changes.items():
        merged.pop(key, None)
        if value is not None:
            merged[key] = value
    try:
        checked = load_config(merged)
    except LabelFileError as error:
        raise InvalidInput(f"The settings are invalid: {str(error).removeprefix('phase config: ')}") from None
    if checked.min_answered is not None and checked.min_answered > phase.n_items:
        raise InvalidInput(f"min_answered ({checked.min_answered}) is more than the phase's "
                           f"{phase.n_items} items: every file would be refused.")
    if VIEWS in changes:
        _checked_views(ctx, phase, changes[VIEWS])


def view_paths(ctx: ServiceContext, *, phase: Phase) -> list[str]:
    """Return every metric path the phase's labels can produce: what a view may rank by or show."""
    return Producible(load_phase_labels(ctx, phase)).paths()


def _normalized(config: dict[str, Any]) -> dict[str, Any]:
    """Return a stored config as the loader writes it back (defaults filled in), to compare two of them."""
    try:
        return dict(config_to_json(load_config(config)))
    except LabelFileError:
        return dict(config)


def _checked_views(ctx: ServiceContext, phase: Phase, views: Any) -> Any:
    """Return the phase's config loaded with these views (None: the default view), or raise InvalidInput."""
    merged = {key: value for key, value in phase.task_config.items() if key != VIEWS}
    if views is not None:
        merged[VIEWS] = views
    try:
        checked = load_config(merged)
        check_paths(load_phase_labels(ctx, phase), config_paths(checked.primary_metric, checked.views))
    except LabelFileError as error:
        raise InvalidInput(f"The views are invalid: {str(error).removeprefix('phase config: ')}") from None
    return checked


def _set_views(ctx: ServiceContext, phase: Phase, views: Any) -> None:
    """Check and store a phase's views (None: back to the one default view), committing the change."""
    checked = _checked_views(ctx, phase, views)
    config = {key: value for key, value in phase.task_config.items() if key != VIEWS}
    if checked.views:
        config[VIEWS] = [view.to_json() for view in checked.views]
    phase.task_config = config
    ctx.session.commit()


def breakdowns_of(phase: Phase) -> list[str]:
    """Return the phase's breakdown fields as its checked config has them (default: category)."""
    return list(load_config(phase.task_config).breakdowns)


def check_breakdowns(ctx: ServiceContext, *, phase_id: int, actor: Actor, breakdowns: list[str]) -> dict[str, Any]:
    """Return the phase's config with these breakdowns, or raise InvalidInput naming the breakdowns; change nothing."""
    phase = managed_phase(ctx, phase_id=phase_id, actor=actor)
    fields = label_fields(ctx, phase)
    unknown = [name for name in breakdowns if name not in fields]
    if unknown:
        raise InvalidInput(f"Breakdowns: {', '.join(map(repr, unknown))} is not a field of the label file "
                           f"(its fields: {', '.join(fields) or 'none besides id and label'}).")
    config = {**phase.task_config, BREAKDOWNS: list(breakdowns)}
    try:
        checked = load_config(config)
        labels = check_labels(read_phase_label_bytes(ctx, phase), config)
        check_paths(labels, config_paths(checked.primary_metric, checked.views))
    except (LabelFileError, InvalidInput) as error:
        message = getattr(error, "message", None) or str(error)
        raise InvalidInput(f"Breakdowns: {message.removeprefix('phase config: ')}") from None
    return config


def update_breakdowns(ctx: ServiceContext, *, phase_id: int, actor: Actor, breakdowns: list[str]) -> Job | None:
    """Set the phase's breakdown fields and start the re-scoring job they need (None when nothing changed)."""
    phase = managed_phase(ctx, phase_id=phase_id, actor=actor)
    before = breakdowns_of(phase)
    if before == list(breakdowns):
        return None
    phase.task_config = check_breakdowns(ctx, phase_id=phase_id, actor=actor, breakdowns=breakdowns)
    ctx.session.commit()
    audit.record(ctx, actor=actor, competition=phase.competition, target=audit.phase_target(phase.id, phase.name),
                 summary=f"changed the phase's settings (breakdowns: {', '.join(before) or 'none'} → "
                         f"{', '.join(breakdowns) or 'none'})")
    return phases.rescore_phase(ctx, phase_id=phase_id, actor=actor)
