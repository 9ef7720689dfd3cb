"""Request and response models of the API; the OpenAPI document is generated from them."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal, TypeVar, Union

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

from leaderboard.organizing import DEFAULT_MAX_PER_DAY, LIMIT_MIN, SLUG_RE
from leaderboard.web.api.schemas.entries import METADATA_HELP, METHOD_HELP, EntrySettings

T = TypeVar("T")
# A form field that may be left out: None in Python, but never a null on the wire (forms have no null).
Omitted = Union[T, SkipJsonSchema[None]]  # noqa: UP007 (mypy takes a generic alias over T only from Union)
Count = Annotated[int, Field(ge=LIMIT_MIN)]

PhaseStatus = Literal["upcoming", "open", "closed"]
PublicFeedback = Literal["exact", "ladder"]
SliceItems = Annotated[int, Field(ge=1)]
Positive = Annotated[int, Field(ge=1, le=1000)]
LadderStep = Annotated[float, Field(gt=0, le=1)]
SubmissionStatus = Literal["received", "queued", "scoring", "scored", "failed"]


class Error(BaseModel):
    """Every error response: a sentence for people and machine-readable details."""

    error: str = Field(description="What went wrong, in a sentence a person can act on.")
    details: Any = Field(default=None, description="Validation problems, the quota reset time, or null.")


class Problem(BaseModel):
    """One problem of a rejected prediction file (docs/FORMATS.md#prediction-files)."""

    line: int | None = Field(description="1-based line number; null for problems of the whole file.")
    id: str | None = Field(default=None, description="The item id, when known.")
    message: str


class ValidationErrors(BaseModel):
    """The errors object of a rejected prediction file: at most 50 problems and their total."""

    errors: list[Problem]
    error_count: int


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
    """A phase's probing defences (docs/PROBING.md); docs/PROBING.md says what each protects and costs."""

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


class Metrics(BaseModel):
    """One slice's metrics (docs/METRICS.md#metrics), rounded to 4 decimals; other keys may appear."""

    model_config = ConfigDict(extra="allow")

    accuracy: float | None = None
    answer_rate: float | None = None
    selective_accuracy: float | None = None
    f1: float | None = None
    macro_f1: float | None = None
    group_accuracy: float | None = None
    ece: float | None = None
    n: int | None = None
    answered: int | None = None
    correct: int | None = None
    ci: dict[str, list[float] | None] | None = Field(default=None, description="95% bootstrap intervals [lo, hi].")


class Results(BaseModel):
    """Scores of the splits the caller may see (docs/METRICS.md#the-result-object, redacted and rounded)."""

    model_config = ConfigDict(extra="allow")

    n_items: int | None = None
    overall: Metrics | None = None
    breakdowns: dict[str, dict[str, Metrics]] | None = None
    popularity: dict[str, Any] | None = Field(default=None, description="head/torso/tail slices, gap, relative_drop.")
    pairs: dict[str, Any] | None = None
    splits: dict[str, Any] | None = Field(default=None, description="The same object per visible split.")
    file: dict[str, Any] | None = Field(
        default=None, description="While the private split is hidden: n_items, answered and answer_rate of the "
        "whole file (the public split's own answered counts would tell which items are public).")
    feedback: dict[str, Any] | None = Field(
        default=None, description="Under the ladder: rule, step, released, shown, shown_submission_id.")
    warnings: list[Any] | None = None


class SubmissionAccepted(BaseModel):
    """The answer to an upload: the submission is stored and will be scored."""

    id: int
    status: SubmissionStatus
    url: str = Field(description="Where to poll the submission's status.")


class Submission(BaseModel):
    """One submission: status, visible scores and validation problems."""

    id: int
    phase_id: int
    status: SubmissionStatus
    description: str
    filename: str
    method: str = Field(description="The entry's method (docs/ENTRIES.md).")
    metadata: dict[str, Any] | None = Field(description="The entry's metadata as uploaded (keys: docs/ENTRIES.md).")
    team: str | None = Field(description="The team the submission was made for, if any.")
    selected: bool = Field(description="Selected for the final (private) ranking.")
    created_at: datetime
    updated_at: datetime
    primary_metric: str
    scores: Results | None = Field(description="Visible scores once scored; null before.")
    scores_scope: Literal["all", "public"] | None = Field(
        description="What the top level of `scores` covers: all items, or only the public split while the "
        "private split is hidden (phase not closed)."
    )
    errors: ValidationErrors | None = Field(description="Validation problems, if the file was rejected.")
    failure: str | None = Field(description="Why scoring failed, in participant-safe words.")
    attempts: int | None = Field(None, description="Scoring attempts that failed on the platform's side so far "
                                 "(each is retried with backoff); for the competition's organizers, null for others.")
    moderation: Moderation | None = Field(None, description="Hidden or disqualified by the organizers (and why); "
                                          "shown to its owner and the organizers.")
    url: str


class LeaderboardRow(BaseModel):
    """One entry of a view (docs/RANKING.md): its best submission's figures as everyone sees them, or a baseline."""

    rank: int | None = Field(description="1 for the best entry; null for baselines, which take no rank.")
    stat_rank: int | None = Field(description="1 + the ranked entries whose 95% interval lies entirely better; "
                                  "entries sharing it are statistically tied; null without an interval.")
    p_vs_previous: float | None = Field(description="Exact McNemar p-value against the entry ranked just above "
                                        "(accuracy and group accuracy views); null for rank 1, baselines, others.")
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


class LeaderboardQuery(BaseModel):
    """Query string of GET /phases/{id}/leaderboard (docs/RANKING.md#reading, docs/ENTRIES.md)."""

    model_config = ConfigDict(json_schema_extra=lambda schema: _drop_null_defaults(schema))

    format: Omitted[Literal["json", "csv"]] = Field(
        default=None, description="Left out: one page as JSON; json: every row of the view as JSON; csv: every row "
        "as text/csv, one column per path and metadata key.")
    view: Omitted[Annotated[str, Field(max_length=60)]] = Field(default=None, description="A view's name.")
    page: Annotated[int, Field(ge=1, le=1_000_000)] = 1
    per_page: Annotated[int, Field(ge=1, le=500)] = 50
    sort: Omitted[Annotated[str, Field(max_length=300)]] = Field(
        default=None, description="rank (default), name, submitted_at, the view's metric or one of its columns.")
    order: Omitted[Literal["asc", "desc"]] = Field(default=None, description="A metric sorts best first by default.")
    q: Annotated[str, Field(max_length=200)] = Field(default="", description="Case-insensitive text in the name, "
                                                     "team or method.")
    open_weights: Omitted[bool] = Field(default=None, description="Only entries whose metadata says so.")
    uses_retrieval: Omitted[bool] = None
    uses_knowledge_graph: Omitted[bool] = None
    prompting: Omitted[Literal["zero-shot", "few-shot", "chain-of-thought", "fine-tuned", "other"]] = None


class CompetitionLeaderboardQuery(BaseModel):
    """Query string of GET /competitions/{slug}/leaderboard (docs/METRICS.md#figures-on-the-board)."""

    model_config = ConfigDict(json_schema_extra=lambda schema: _drop_null_defaults(schema))

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


class SubmissionUpload(BaseModel):
    """Multipart form of POST /phases/{id}/submissions; method and metadata make the entry (docs/ENTRIES.md)."""

    file: bytes = Field(description="The prediction file: CSV, JSON Lines, JSON, .zip or .gz (docs/FORMATS.md).")
    description: str = Field(default="", max_length=500)
    method: str = Field(default="", max_length=200, description=METHOD_HELP)
    metadata: str = Field(default="", max_length=20000, description=METADATA_HELP)


def _drop_null_defaults(schema: dict[str, Any]) -> None:
    for prop in schema.get("properties", {}).values():
        if "default" in prop and prop["default"] is None:
            del prop["default"]


class PhaseCreate(BaseModel):
    """Multipart form of POST /competitions/{slug}/phases; a left-out or empty field means "not given"."""

    model_config = ConfigDict(json_schema_extra=_drop_null_defaults)

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


class Job(BaseModel):
    """A background job's progress (docs/ORGANIZING.md); for the competition's managers only."""

    id: int
    kind: str
    status: Literal["queued", "running", "done", "failed"]
    done: int
    total: int | None
    error: str | None = Field(description="Why it failed, for managers; null unless failed.")
    url: str


class AuditEntry(BaseModel):
    """One organizer action: when, who, on what, what."""

    at: datetime
    actor: str = Field(description="A display name, or 'operator (<os user>)' for the command line.")
    target: str
    summary: str


class AuditLog(BaseModel):
    """A competition's audit log, newest first (managers only)."""

    entries: list[AuditEntry]


class ModerationReason(BaseModel):
    """Why a submission is disqualified (its owner reads it); optional when hiding."""

    model_config = ConfigDict(extra="forbid")

    reason: str | None = Field(None, max_length=1000)


class Moderation(BaseModel):
    """A submission's moderation as its owner and the managers see it."""

    state: Literal["visible", "hidden", "disqualified"]
    reason: str | None
    at: datetime | None


class OpenApiDocument(BaseModel):
    """The OpenAPI 3.1 document of this API."""

    model_config = ConfigDict(extra="allow")

    openapi: str
    info: dict[str, Any]
    paths: dict[str, Any]
