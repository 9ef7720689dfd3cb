"""Request and response models of the API; the OpenAPI document is generated from them."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal, TypeVar, Union

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

from leaderboard.services.competitions import SLUG_RE

T = TypeVar("T")
# A form field that may be left out: None in Python, but never a null on the wire (forms have no null).
Omitted = Union[T, SkipJsonSchema[None]]
Count = Annotated[int, Field(ge=0)]

PhaseStatus = Literal["upcoming", "open", "closed"]
SubmissionStatus = Literal["received", "queued", "scoring", "scored", "failed"]


class Error(BaseModel):
    """Every error response: a sentence for people and machine-readable details."""

    error: str = Field(description="What went wrong, in a sentence a person can act on.")
    details: Any = Field(default=None, description="Validation problems, the quota reset time, or null.")


class Problem(BaseModel):
    """One problem of a rejected prediction file (SPEC §2.3)."""

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
    max_per_day: int | None
    max_total: int | None
    quota: Quota | None = Field(description="The caller's quota; null for anonymous callers.")
    leaderboard_url: str
    submissions_url: str


class Metrics(BaseModel):
    """One slice's metrics (SPEC §3), rounded to 4 decimals; other keys may appear."""

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
    """Scores of the splits the caller may see (SPEC §4 result object, redacted and rounded)."""

    model_config = ConfigDict(extra="allow")

    n_items: int | None = None
    overall: Metrics | None = None
    breakdowns: dict[str, dict[str, Metrics]] | None = None
    popularity: dict[str, Any] | None = Field(default=None, description="head/torso/tail slices, gap, relative_drop.")
    pairs: dict[str, Any] | None = None
    splits: dict[str, Any] | None = Field(default=None, description="The same object per visible split.")
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
    url: str


class LeaderboardRow(BaseModel):
    """One ranked entry: a participant's best submission or a baseline."""

    rank: int | None = Field(description="1 for the best participant; null for baselines, which take no rank.")
    display_name: str
    is_baseline: bool
    baseline_name: str | None
    submission_id: int
    submitted_at: datetime
    primary: float | None = Field(description="The primary metric on the ranked split.")
    entries: int = Field(description="How many scored submissions this participant has in the phase.")
    results: Results


class Leaderboard(BaseModel):
    """The ranking of a phase on the split the caller may see."""

    phase_id: int
    split: Literal["public", "private", "all"]
    primary_metric: str
    higher_is_better: bool
    rule: str = Field(description="The ranking rule, including the tie-break.")
    rows: list[LeaderboardRow]


class LeaderboardQuery(BaseModel):
    """Query string of GET /phases/{id}/leaderboard."""

    format: Literal["json", "csv"] = Field(default="json", description="csv returns the same rows as text/csv.")


class CompetitionCreate(BaseModel):
    """Body of POST /competitions."""

    model_config = ConfigDict(extra="forbid")

    slug: str = Field(pattern=SLUG_RE.pattern, description="Lower-case letters, digits and inner dashes.")
    title: str = Field(min_length=1, max_length=200)
    description: str = Field(default="", max_length=20000)


class CompetitionCreated(BaseModel):
    """The created competition."""

    slug: str
    title: str
    url: str


class SubmissionUpload(BaseModel):
    """Multipart form of POST /phases/{id}/submissions."""

    file: bytes = Field(description="The prediction file: CSV, JSON Lines, JSON, .zip or .gz (SPEC §2.3).")
    description: str = Field(default="", max_length=500)


def _drop_null_defaults(schema: dict[str, Any]) -> None:
    for prop in schema.get("properties", {}).values():
        if "default" in prop and prop["default"] is None:
            del prop["default"]


class PhaseCreate(BaseModel):
    """Multipart form of POST /competitions/{slug}/phases; a left-out or empty field means "not given"."""

    model_config = ConfigDict(json_schema_extra=_drop_null_defaults)

    name: str = Field(min_length=1, max_length=120)
    labels: bytes = Field(description="Hidden label file, JSON Lines (SPEC §2.1).")
    questions: Omitted[bytes] = Field(default=None, description="Public questions file, JSON Lines.")
    config: Omitted[str] = Field(default=None, description="Phase config JSON (SPEC §2.2), as a file or text.")
    description: str = Field(default="", max_length=20000)
    start: Omitted[datetime] = Field(default=None, description="Opening time, ISO 8601 (UTC if no offset).")
    end: Omitted[datetime] = Field(default=None, description="Closing time, ISO 8601 (UTC if no offset).")
    max_per_day: Omitted[Count] = Field(default=None, description="Submissions per UTC day; empty for no limit.")
    max_total: Omitted[Count] = Field(default=None, description="Submissions in all; empty for no limit.")
    leaderboard_visibility: Literal["public", "hidden"] = "public"


class PhaseCreated(BaseModel):
    """The created phase."""

    id: int
    name: str
    status: PhaseStatus
    url: str


class PhaseAction(BaseModel):
    """The phase after an open or close action."""

    id: int
    status: PhaseStatus


class RescoreQueued(BaseModel):
    """How many submissions a rescore queued."""

    id: int
    queued: int


class OpenApiDocument(BaseModel):
    """The OpenAPI 3.1 document of this API."""

    model_config = ConfigDict(extra="allow")

    openapi: str
    info: dict[str, Any]
    paths: dict[str, Any]
