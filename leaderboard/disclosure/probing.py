"""Probing defences (docs/PROBING.md): a phase's settings, checked and changed without rescoring.

They are phase config keys (``min_slice_items``, ``public_feedback``, ``ladder_step``,
``min_answered``), checked by scoring's config loader. Phases created before they existed
have none of them in ``task_config`` and get the defaults, which are on. What each one
protects and costs is in docs/PROBING.md; which slices a participant sees is
disclosure/visibility.py's, and the ladder that decides which public score is shown is
disclosure/ladder.py's.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from leaderboard.accounts import Actor, managed_phase
from leaderboard.disclosure.policy import CURVE_MIN_ANSWERED
from leaderboard.models import Phase
from leaderboard.phase_data import config_to_json
from leaderboard.platform import InvalidInput, ServiceContext
from scoring.config import PROBING_KEYS, load_config
from scoring.types import DEFAULT_MIN_SLICE_ITEMS, LabelFileError

MIN_LADDER_STEP = 0.001


@dataclass(frozen=True)
class ProbingSettings:
    """The probing settings of one phase (docs/PROBING.md), defaults filled in."""

    min_slice_items: int = DEFAULT_MIN_SLICE_ITEMS
    public_feedback: str = "exact"
    ladder_step: float | None = None  # None: default_step(public items)
    min_answered: int | None = None

    @property
    def ladder(self) -> bool:
        """Return whether public feedback follows the ladder."""
        return self.public_feedback == "ladder"

    def step(self, n_public: int) -> float:
        """Return the ladder step: the setting, else max(0.001, 1/sqrt(n_public))."""
        return self.ladder_step if self.ladder_step is not None else default_step(n_public)


def default_step(n_public: int) -> float:
    """Return docs/PROBING.md's default ladder step for a public split of n_public items."""
    return max(MIN_LADDER_STEP, 1.0 / math.sqrt(max(n_public, 1)))


def probing_settings(phase: Phase) -> ProbingSettings:
    """Return the phase's probing settings; a key its config lacks takes the default."""
    config = phase.task_config or {}
    return ProbingSettings(
        min_slice_items=int(config.get("min_slice_items", DEFAULT_MIN_SLICE_ITEMS)),
        public_feedback=str(config.get("public_feedback", "exact")),
        ladder_step=None if config.get("ladder_step") is None else float(config["ladder_step"]),
        min_answered=None if config.get("min_answered") is None else int(config["min_answered"]),
    )


def with_probing(config: dict[str, Any] | None, settings: dict[str, Any]) -> dict[str, Any] | None:
    """Return a phase config with the given probing settings merged in (None values are left out)."""
    given = {key: value for key, value in settings.items() if value is not None}
    unknown = sorted(set(given) - set(PROBING_KEYS))
    if unknown:
        raise InvalidInput(f"Unknown probing setting(s): {', '.join(unknown)}.")
    if not given:
        return config
    return {**(config or {}), **given}


def update_probing_settings(ctx: ServiceContext, *, phase_id: int, actor: Actor, **changes: Any) -> Phase:
    """Change a phase's probing settings; a None value restores that key's default. No rescoring is needed."""
    unknown = sorted(set(changes) - set(PROBING_KEYS))
    if unknown:
        raise InvalidInput(f"These probing settings do not exist: {', '.join(unknown)}; "
                           f"valid: {', '.join(PROBING_KEYS)}.")
    phase = managed_phase(ctx, phase_id=phase_id, actor=actor)
    merged = {key: value for key, value in {**phase.task_config, **changes}.items() if value is not None}
    try:
        checked = load_config(merged)
    except LabelFileError as error:
        raise InvalidInput(f"The probing settings are invalid: {error}") from None
    if checked.min_answered is not None and checked.min_answered > phase.n_items:
        raise InvalidInput(f"min_answered ({checked.min_answered}) is more than the phase's "
                           f"{phase.n_items} items: every file would be refused.")
    phase.task_config = config_to_json(checked)
    ctx.session.commit()
    return phase


def feedback_rule(phase: Phase) -> str:
    """Return which public feedback rule applies to the phase, as the phase page and leaderboard state it."""
    settings = probing_settings(phase)
    slices = (f"Breakdown rows need at least {settings.min_slice_items} answered items to be shown, "
              f"calibration figures {CURVE_MIN_ANSWERED}, and a file's scores a file answering at least "
              f"{settings.min_slice_items}; figures other than the ranking's are coarse, shown with ± the step "
              "their sample supports.")
    if settings.min_answered is not None:
        slices += f" A file must answer at least {settings.min_answered} items."
    if not settings.ladder:
        return f"The public ranking value is exact (rounded to 4 decimals). {slices}"
    step = ("a step of " + f"{settings.ladder_step:g}" if settings.ladder_step is not None
            else "a step of max(0.001, 1/√(public items))")
    return ("Public scores follow the ladder with " + step + ": a new submission's public score is shown only "
            "when it beats your best shown score by more than the step, rounded to a multiple of it; otherwise "
            f"your best shown score is repeated and nothing else is shown. {slices} The final ranking after the "
            "phase closes uses exact scores.")
