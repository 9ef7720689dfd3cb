"""Competitions and phases in the API: summaries, details with quota and probing settings, create and change."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from leaderboard.organizing import DEFAULT_MAX_PER_DAY, SLUG_RE
from leaderboard.web.api.schemas.board import LeaderboardView
from leaderboard.web.api.schemas.common import (
    Count,
    LadderStep,
    Omitted,
    PhaseStatus,
    Positive,
    PublicFeedback,
    SliceItems,
    drop_null_defaults,
)
from leaderboard.web.api.schemas.entries import EntrySettings


class PhaseSummary(BaseModel):
    """A phase as listed under its competition."""

    id: int
    name: str
    position: int
    status: PhaseStatus
    start_at: datetime | None
    end_at: datetime | None
    url: str = Field(description="The API address of the phase.")


class Competition(BaseModel):
    """A competition with its phases in order."""

    slug: str
    title: str
    description: str
    requires_approval: bool = Field(description="Participants need the organizers' approval before they can "
                                    "submit: ask with POST /competitions/{slug}/participation.")
    phases: list[PhaseSummary]
    url: str = Field(description="The web page of the competition.")


class CompetitionList(BaseModel):
    """All competitions, those with an open phase first."""

    competitions: list[Competition]


class Quota(BaseModel):
    """The caller's submission quota in one phase; null limits mean unlimited."""

    max_per_day: int | None
    used_today: int
    remaining_today: int | None
    max_total: int | None
    used_total: int
    remaining_total: int | None
    resets_at: datetime | None = Field(description="When the daily quota resets (next UTC midnight).")


class Probing(BaseModel):
    """A phase's probing defences; docs/PROBING.md says what each protects and costs."""

    min_slice_items: int = Field(description="Answered items a slice needs before participants see it.")
    public_feedback: PublicFeedback = Field(description="exact, or ladder (Blum & Hardt).")
    ladder_step: float | None = Field(description="The ladder step; null: max(0.001, 1/sqrt(public items)).")
    min_answered: int | None = Field(description="Files answering fewer items are refused; null: no minimum.")
    rule: str = Field(description="Which feedback rule applies, in a sentence.")


class ProbingUpdate(BaseModel):
    """Body of POST /phases/{id}/settings: probing (docs/PROBING.md) and entry settings to change; null restores
    a default."""

    model_config = ConfigDict(extra="forbid")

    min_slice_items: SliceItems | None = None
    public_feedback: PublicFeedback | None = None
    ladder_step: LadderStep | None = None
    min_answered: SliceItems | None = None
    max_methods: Positive | None = Field(default=None, description="Methods per team or user; null: 3.")
    final_selections: Positive | None = Field(default=None, description="Submissions a team selects for the private "
                                              "ranking; null: no selection.")


class Phase(PhaseSummary):
    """Phase details: task, rules, limits and, for a caller with a token, the remaining quota."""

    competition: str = Field(description="The competition's slug.")
    description: str
    task_type: str
    options: list[str] | None = None
    primary_metric: str
    breakdowns: list[str]
    n_items: int
    has_private_split: bool
    leaderboard_visibility: str
    max_per_day: int | None = Field(description="Submissions per UTC day; null: no daily limit (the organizers' "
                                    "explicit choice).")
    max_total: int | None
    quota: Quota | None = Field(description="The caller's quota (their team's when in one); null for anonymous "
                                "callers.")
    probing: Probing
    views: list[LeaderboardView] = Field(default_factory=list,
                                         description="The leaderboard views (docs/FORMATS.md), the first the default.")
    entries: EntrySettings
    leaderboard_url: str
    submissions_url: str


class ViewsUpdate(BaseModel):
    """Body of POST /phases/{id}/views: the phase's leaderboard views (docs/FORMATS.md); null restores the default."""

    model_config = ConfigDict(extra="forbid")

    views: list[dict[str, Any]] | None = Field(description="[{name, metric, columns}], each path checked against "
                                               "the phase's label file.")


class CompetitionCreate(BaseModel):
    """Body of POST /competitions."""

    model_config = ConfigDict(extra="forbid")

    slug: str = Field(pattern=SLUG_RE.pattern, description="Lower-case letters, digits and inner dashes.")
    title: str = Field(min_length=1, max_length=200)
    description: str = Field(default="", max_length=20000)
    requires_approval: bool = Field(default=False, description="Participants need an organizer's approval "
                                    "before they can submit (POST /competitions/{slug}/participation).")


class CompetitionCreated(BaseModel):
    """The created competition."""

    slug: str
    title: str
    url: str


class PhaseCreate(BaseModel):
    """Multipart form of POST /competitions/{slug}/phases; a left-out or empty field means "not given"."""

    model_config = ConfigDict(json_schema_extra=drop_null_defaults)

    name: str = Field(min_length=1, max_length=120)
    labels: bytes = Field(description="Hidden label file, JSON Lines (docs/FORMATS.md#hidden-label-file).")
    questions: Omitted[bytes] = Field(default=None, description="Public questions file, JSON Lines.")
    config: Omitted[str] = Field(default=None, description="Phase config JSON (docs/FORMATS.md), as a file or text.")
    description: str = Field(default="", max_length=20000)
    start: Omitted[datetime] = Field(default=None, description="Opening time, ISO 8601 (UTC if no offset).")
    end: Omitted[datetime] = Field(default=None, description="Closing time, ISO 8601 (UTC if no offset).")
    max_per_day: Omitted[Count | Literal["unlimited"]] = Field(
        default=None, description=f"Submissions per UTC day; left out or empty: {DEFAULT_MAX_PER_DAY}. "
        "'unlimited': no daily limit (an explicit choice; each upload is another look at the hidden labels).")
    max_total: Omitted[Count] = Field(default=None, description="Submissions in all; empty for no limit.")
    leaderboard_visibility: Literal["public", "hidden"] = "public"
    min_slice_items: Omitted[SliceItems] = Field(default=None, description="docs/PROBING.md; default 25.")
    public_feedback: Omitted[PublicFeedback] = Field(default=None, description="exact (default) or ladder.")
    ladder_step: Omitted[LadderStep] = Field(default=None, description="Default max(0.001, 1/sqrt(public items)).")
    min_answered: Omitted[SliceItems] = Field(default=None, description="Default: no minimum.")
    max_methods: Omitted[Positive] = Field(default=None, description="Methods per team or user; default 3.")
    final_selections: Omitted[Positive] = Field(default=None, description="Default none (no selection).")

    def probing(self) -> dict[str, Any]:
        """Return the probing settings given in the form (left-out ones are None)."""
        return {"min_slice_items": self.min_slice_items, "public_feedback": self.public_feedback,
                "ladder_step": self.ladder_step, "min_answered": self.min_answered}

    def entry_settings(self) -> dict[str, Any]:
        """Return the entry settings given in the form (left-out ones are None)."""
        return {"max_methods": self.max_methods, "final_selections": self.final_selections}


class PhaseCreated(BaseModel):
    """The created phase, with the fields its public questions file carries and those it withholds."""

    id: int
    name: str
    status: PhaseStatus
    url: str
    public_fields: list[str] = []
    withheld_fields: list[str] = []


class PhaseAction(BaseModel):
    """The phase after an open or close action."""

    id: int
    status: PhaseStatus


class RescoreQueued(BaseModel):
    """The background job that re-scores a phase (docs/ORGANIZING.md): follow it at ``url``."""

    id: int
    queued: int = Field(description="Submissions the job will score again (old scores stay until replaced).")
    job_id: int
    url: str = Field(description="GET it for the job's progress.")


class PhaseOpen(BaseModel):
    """Open a phase; reopening a closed phase whose private split was shown needs ``confirm`` (else 409)."""

    model_config = ConfigDict(extra="forbid", strict=True)  # 1 or "yes" is not a confirmation

    confirm: bool = False
