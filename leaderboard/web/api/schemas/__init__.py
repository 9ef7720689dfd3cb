"""Request and response models of the API, one module per noun; the OpenAPI document is generated from them.

``common`` (errors, form-field types), ``phases`` (competitions and phases), ``submissions``,
``board`` (the leaderboard and its query), ``results`` (the result exports), ``operations`` (jobs,
audit log, moderation), ``entries`` (teams, baselines, entry settings) and ``participation``.
Handlers read all but the last two through this front door (``schemas.Phase``); ``entries`` and
``participation`` by module.
"""

from __future__ import annotations

from leaderboard.web.api.schemas.board import (
    AcrossPhase,
    AcrossRow,
    BoardFilters,
    CompetitionLeaderboard,
    CompetitionLeaderboardQuery,
    Leaderboard,
    LeaderboardAnyFormat,
    LeaderboardQuery,
    LeaderboardRow,
    LeaderboardView,
)
from leaderboard.web.api.schemas.common import (
    Error,
    Omitted,
    OpenApiDocument,
    PhaseStatus,
    Problem,
    SubmissionStatus,
    ValidationErrors,
)
from leaderboard.web.api.schemas.operations import AuditEntry, AuditLog, Job, Moderation, ModerationReason
from leaderboard.web.api.schemas.phases import (
    Competition,
    CompetitionCreate,
    CompetitionCreated,
    CompetitionList,
    Phase,
    PhaseAction,
    PhaseCreate,
    PhaseCreated,
    PhaseOpen,
    PhaseSummary,
    Probing,
    ProbingUpdate,
    Quota,
    RescoreQueued,
    ViewsUpdate,
)
from leaderboard.web.api.schemas.results import ResultExport, ResultsQuery
from leaderboard.web.api.schemas.submissions import Metrics, Results, Submission, SubmissionAccepted, SubmissionUpload

__all__ = [
    "AcrossPhase", "AcrossRow", "AuditEntry", "AuditLog", "BoardFilters", "Competition", "CompetitionCreate",
    "CompetitionCreated", "CompetitionLeaderboard", "CompetitionLeaderboardQuery", "CompetitionList", "Error", "Job",
    "Leaderboard", "LeaderboardAnyFormat", "LeaderboardQuery", "LeaderboardRow", "LeaderboardView", "Metrics",
    "Moderation", "ModerationReason", "Omitted", "OpenApiDocument", "Phase", "PhaseAction", "PhaseCreate",
    "PhaseCreated", "PhaseOpen", "PhaseStatus", "PhaseSummary", "Probing", "ProbingUpdate", "Problem", "Quota",
    "RescoreQueued", "ResultExport", "Results", "ResultsQuery", "Submission", "SubmissionAccepted",
    "SubmissionStatus", "SubmissionUpload", "ValidationErrors", "ViewsUpdate"
]
