"""The leaderboard in the API: a view's rows and its query string, and the ranking across phases."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from leaderboard.web.api.schemas.common import Omitted, PhaseStatus, drop_null_defaults


class LeaderboardRow(BaseModel):
    """One entry of a view (docs/RANKING.md): its best submission's figures as everyone sees them, or a baseline."""

    rank: int | None = Field(description="1 for the best entry; null for baselines, which take no rank.")
    stat_rank: int | None = Field(description="1 + the ranked entries whose 95% interval lies entirely better; "
                                  "entries sharing it are statistically tied; null without an interval.")
    p_vs_previous: float | None = Field(description="Exact McNemar p-value against the entry ranked just above "
                                        "(accuracy and group accuracy views); null for rank 1, baselines, others, "
                                        "and on open boards other than binary accuracy without a private split.")
    display_name: str = Field(description="The team's name, the participant's display name, or the baseline's.")
    team: str | None
    method: str
    metadata: dict[str, Any] = Field(description="The entry's metadata (docs/ENTRIES.md): model, parameters_b, ...")
    is_baseline: bool
    submission_id: int
    submitted_at: datetime
    value: float | None = Field(description="The view's metric on the shown split; null where not shown.")
    ci: list[float] | None = Field(description="The 95% interval [lo, hi] of value; null without one.")
    columns: dict[str, float | None] = Field(description="The view's column paths and their shown values.")
    errors: dict[str, float] = Field(default_factory=dict, description=(
        "The coarse columns (docs/PROBING.md) and the step each is shown on: a coarse value is rounded to its step "
        "with random noise, about a step from the exact figure (within two steps 93 times in 100). Columns not "
        "listed are exact."))
    submissions: int = Field(description="Scored submissions of this entry.")
    mine: bool = Field(description="Whether the entry is the caller's (their own, or their team's).")


class LeaderboardView(BaseModel):
    """A leaderboard view (docs/FORMATS.md#leaderboard-views): the metric path it ranks by and its columns."""

    name: str
    metric: str
    label: str = Field(description="The metric path in words.")
    higher_is_better: bool
    columns: list[str]


class Leaderboard(BaseModel):
    """One view of a phase's ranking on the split the caller may see (docs/RANKING.md#reading)."""

    phase_id: int
    view: LeaderboardView
    views: list[str] = Field(description="The names of the phase's views; ?view= picks one.")
    split: Literal["public", "private", "all"]
    primary_metric: str = Field(description="The phase's primary metric (its first view's metric by default).")
    rule: str = Field(description="The ranking rule, including the tie-break and the feedback rule.")
    total: int = Field(description="Entries matching the search and filters.")
    page: int
    per_page: int
    rows: list[LeaderboardRow]


class BoardFilters(BaseModel):
    """Query string of GET /phases/{id}/leaderboard.csv: the view, its order and filters (every row is written)."""

    model_config = ConfigDict(json_schema_extra=lambda schema: drop_null_defaults(schema))

    view: Omitted[Annotated[str, Field(max_length=60)]] = Field(default=None, description="A view's name.")
    sort: Omitted[Annotated[str, Field(max_length=300)]] = Field(
        default=None, description="rank (default), name, submitted_at, the view's metric or one of its columns.")
    order: Omitted[Literal["asc", "desc"]] = Field(default=None, description="A metric sorts best first by default.")
    q: Annotated[str, Field(max_length=200)] = Field(default="", description="Case-insensitive text in the name, "
                                                     "team or method.")
    open_weights: Omitted[bool] = Field(default=None, description="Only entries whose metadata says so.")
    uses_retrieval: Omitted[bool] = None
    uses_knowledge_graph: Omitted[bool] = None
    prompting: Omitted[Literal["zero-shot", "few-shot", "chain-of-thought", "fine-tuned", "other"]] = None


class LeaderboardQuery(BoardFilters):
    """Query string of GET /phases/{id}/leaderboard (docs/RANKING.md#reading, docs/ENTRIES.md)."""

    format: Omitted[Literal["json"]] = Field(
        default=None, description="Left out: one page as JSON; json: every row of the view as JSON. The same "
        "rows as text/csv: GET /phases/{id}/leaderboard.csv.")
    page: Annotated[int, Field(ge=1, le=1_000_000)] = 1
    per_page: Annotated[int, Field(ge=1, le=500)] = 50


class LeaderboardAnyFormat(LeaderboardQuery):
    """What GET /phases/{id}/leaderboard accepts: also format=csv, answered as /leaderboard.csv (older clients)."""

    format: Omitted[Literal["json", "csv"]] = None  # type: ignore[assignment]


class CompetitionLeaderboardQuery(BaseModel):
    """Query string of GET /competitions/{slug}/leaderboard (docs/METRICS.md#figures-on-the-board)."""

    model_config = ConfigDict(json_schema_extra=lambda schema: drop_null_defaults(schema))

    page: Annotated[int, Field(ge=1, le=1_000_000)] = 1
    per_page: Annotated[int, Field(ge=1, le=500)] = 50
    sort: Omitted[Annotated[str, Field(max_length=40)]] = Field(
        default=None, description="rank (default), name, mean, phases, or phase-<id> for one phase's column.")
    order: Omitted[Literal["asc", "desc"]] = None
    q: Annotated[str, Field(max_length=200)] = ""


class AcrossPhase(BaseModel):
    """A phase column of the across-phases ranking."""

    id: int
    name: str
    status: PhaseStatus
    metric: str
    higher_is_better: bool
    split: Literal["public", "private", "all"]


class AcrossRow(BaseModel):
    """One entry across a competition's phases."""

    rank: int | None = Field(description="Ranked by mean among entries present in every closed phase; null after.")
    display_name: str
    team: str | None
    method: str
    values: dict[str, float | None] = Field(description="Per phase id: its primary view value, null if absent.")
    mean: float | None
    phases: int = Field(description="How many phases the entry took part in.")
    complete: bool = Field(description="Present in every closed phase (ranked).")
    mine: bool


class CompetitionLeaderboard(BaseModel):
    """The across-phases ranking of a competition (docs/METRICS.md#figures-on-the-board)."""

    competition: str
    phases: list[AcrossPhase]
    rule: str
    total: int
    page: int
    per_page: int
    rows: list[AcrossRow]
