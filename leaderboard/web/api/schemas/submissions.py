"""Submissions in the API: an upload's form, its acknowledgement, its redacted and rounded results."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from leaderboard.web.api.schemas.common import SubmissionStatus, ValidationErrors
from leaderboard.web.api.schemas.entries import METADATA_HELP, METHOD_HELP
from leaderboard.web.api.schemas.operations import Moderation


class Metrics(BaseModel):
    """One slice's metrics (docs/METRICS.md#metrics), rounded to 4 decimals; other keys may appear."""

    model_config = ConfigDict(extra="allow")

    accuracy: float | None = None
    answer_rate: float | None = None
    selective_accuracy: float | None = None
    f1: float | None = None
    macro_f1: float | None = None
    group_accuracy: float | None = None
    macro_f1_fixed: float | None = None
    avg_macro_f1: float | None = None
    ece: float | None = None
    aurc: float | None = Field(default=None, description="Area under the risk-coverage curve (docs/LONG_TAIL.md).")
    risk_coverage: list[list[float]] | None = Field(
        default=None, description="Risk-coverage points [coverage, risk], thinned (docs/PROBING.md).")
    n: int | None = None
    answered: int | None = None
    correct: int | None = None
    ci: dict[str, list[float] | None] | None = Field(default=None, description="95% bootstrap intervals [lo, hi].")
    grid: float | None = Field(default=None, description="The step coarse figures of this slice are shown on "
                               "(with noise, docs/PROBING.md); the figures named in `exact` are not coarse.")
    exact: list[str] | None = Field(default=None, description="Figures of this slice shown exactly (the ranked ones).")


class ReliabilityBin(BaseModel):
    """One bin of the reliability diagram (docs/LONG_TAIL.md#reliability-diagram-and-ece)."""

    model_config = ConfigDict(extra="allow")

    lo: float | None = None
    hi: float | None = None
    n: int | None = None
    accuracy: float | None = None
    confidence: float | None = None
    grid: float | None = None


class Results(BaseModel):
    """Scores of the splits the caller may see (docs/METRICS.md#the-result-object, redacted and rounded)."""

    model_config = ConfigDict(extra="allow")

    n_items: int | None = None
    overall: Metrics | None = None
    aurc: float | None = Field(default=None, description="The whole file's area under the risk-coverage curve.")
    risk_coverage: list[list[float]] | None = Field(
        default=None, description="The whole file's risk-coverage points [coverage, risk], thinned.")
    reliability: list[ReliabilityBin] | None = Field(
        default=None, description="Reliability bins with at least the items docs/PROBING.md asks for.")
    popularity_curve: list[dict[str, Any]] | None = Field(
        default=None, description="Accuracy per popularity bin, least popular first (docs/LONG_TAIL.md).")
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
    warnings: list[str] = Field(default_factory=list, description="What the upload form would have asked about "
                                "before charging, e.g. a file answering fewer than 90% of the phase's items; the "
                                "upload is accepted and charged all the same.")


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
    queue_position: int | None = Field(None, description="While queued: its place in the scoring line (1: next; "
                                       "owners take turns, docs/RUNNING.md#the-scoring-queue); null otherwise, and "
                                       "while a retry waits.")
    eta_seconds: int | None = Field(None, description="While queued: about how many seconds until it is scored, "
                                    "from the scorers' throughput of the last ten minutes; null when unknown.")
    url: str


class SubmissionUpload(BaseModel):
    """Multipart form of POST /phases/{id}/submissions; method and metadata make the entry (docs/ENTRIES.md)."""

    file: bytes = Field(description="The prediction file: CSV, JSON Lines, JSON, .zip or .gz (docs/FORMATS.md).")
    description: str = Field(default="", max_length=500)
    method: str = Field(default="", max_length=200, description=METHOD_HELP)
    metadata: str = Field(default="", max_length=20000, description=METADATA_HELP)
