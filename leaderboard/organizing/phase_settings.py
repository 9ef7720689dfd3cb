"""Settings an organizer changes on a live phase without rescoring: views, probing defences, entry settings.

Each moves the board (views decide its columns and ranking, probing settings what each
figure shows, final_selections the private ranking after close), so every change here
ends with ``board_changed``. Views (docs/FORMATS.md#leaderboard-views) are checked like at creation: their shape
by scoring's config loader, their paths against the phase's label file (a path it cannot
produce is refused with the valid ones). Entry settings go to entries/rules.py.
"""

from __future__ import annotations

from typing import Any

from leaderboard.accounts import Actor, audit, managed_phase
from leaderboard.disclosure import update_probing_settings
from leaderboard.entries import update_entry_settings
from leaderboard.models import Phase
from leaderboard.phase_data import config_to_json, load_phase_labels
from leaderboard.platform import InvalidInput, ServiceContext
from scoring.config import ENTRY_KEYS, load_config
from scoring.producible import Producible, check_paths
from scoring.types import LabelFileError
from scoring.views import config_paths

VIEWS = "views"


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
