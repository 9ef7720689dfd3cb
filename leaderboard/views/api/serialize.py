"""Turn models and service results into the API's response models."""

from __future__ import annotations

from typing import Any, cast

from flask import request, url_for

from leaderboard.models import Competition, Phase, Submission
from leaderboard.services import phases as phase_service
from leaderboard.services.quota import QuotaStatus
from leaderboard.services.ranking import Leaderboard
from leaderboard.views.api import schemas
from leaderboard.views.api.parsing import as_utc

FAILED_SCORING = "Scoring failed on the platform's side; your quota was refunded. Try again later."


def competition(item: Competition) -> schemas.Competition:
    """Return a competition with its phases."""
    return schemas.Competition(
        slug=item.slug,
        title=item.title,
        description=item.description,
        phases=[phase_summary(phase) for phase in item.phases],
        url=request.host_url.rstrip("/") + f"/c/{item.slug}",
    )


def status(item: Phase) -> schemas.PhaseStatus:
    """Return the phase's derived status."""
    return cast(schemas.PhaseStatus, phase_service.phase_status(item))


def phase_summary(phase: Phase) -> schemas.PhaseSummary:
    """Return the fields of a phase listed under its competition."""
    return schemas.PhaseSummary(**_summary_fields(phase))


def phase(item: Phase, quota: QuotaStatus | None) -> schemas.Phase:
    """Return a phase's details with the caller's quota (None for anonymous callers)."""
    config = item.task_config
    return schemas.Phase(
        **_summary_fields(item),
        competition=item.competition.slug,
        description=item.description,
        task_type=str(config.get("task_type", "binary")),
        options=config.get("options"),
        primary_metric=str(config.get("primary_metric", "accuracy")),
        breakdowns=list(config.get("breakdowns", [])),
        n_items=item.n_items,
        has_private_split=item.has_private_split,
        leaderboard_visibility=item.leaderboard_visibility,
        max_per_day=item.max_per_day,
        max_total=item.max_total,
        quota=None if quota is None else _quota(quota),
        leaderboard_url=url_for("api.get_leaderboard", phase_id=item.id, _external=True),
        submissions_url=url_for("api.create_submission", phase_id=item.id, _external=True),
    )


def accepted(item: Submission) -> schemas.SubmissionAccepted:
    """Return the 202 answer to an upload."""
    return schemas.SubmissionAccepted(id=item.id, status=item.status, url=_submission_url(item))  # type: ignore[arg-type]


def submission(item: Submission, *, shown: dict[str, Any] | None, scope: str | None) -> schemas.Submission:
    """Return a submission with the scores its viewer may see (submissions.visible_scores and scores_scope)."""
    scores = None
    if item.status == "scored" and shown is not None:
        scores = schemas.Results.model_validate(shown)
    else:
        scope = None
    errors = schemas.ValidationErrors.model_validate(item.validation_errors) if item.validation_errors else None
    failure = FAILED_SCORING if item.status == "failed" and errors is None else None
    return schemas.Submission(
        id=item.id,
        phase_id=item.phase_id,
        status=item.status,  # type: ignore[arg-type]
        description=item.description,
        filename=item.filename,
        created_at=as_utc(item.created_at),
        updated_at=as_utc(item.updated_at),
        primary_metric=str(item.phase.task_config.get("primary_metric", "accuracy")),
        scores=scores,
        scores_scope=scope,  # type: ignore[arg-type]
        errors=errors,
        failure=failure,
        url=_submission_url(item),
    )


def leaderboard(board: Leaderboard) -> schemas.Leaderboard:
    """Return a ranking with display names (never emails) and visible, rounded results."""
    rows = [
        schemas.LeaderboardRow(
            rank=row.rank,
            display_name=row.display_name,
            is_baseline=row.is_baseline,
            baseline_name=row.baseline_name,
            submission_id=row.submission_id,
            submitted_at=as_utc(row.submitted_at),
            primary=row.primary,
            entries=row.entries,
            results=schemas.Results.model_validate(row.results or {}),
        )
        for row in board.rows
    ]
    return schemas.Leaderboard(
        phase_id=board.phase.id,
        split=board.split,  # type: ignore[arg-type]
        primary_metric=board.primary_metric,
        higher_is_better=board.higher_is_better,
        rule=board.rule,
        rows=rows,
    )


def _summary_fields(item: Phase) -> dict[str, Any]:
    return {
        "id": item.id,
        "name": item.name,
        "position": item.position,
        "status": status(item),
        "start_at": as_utc(item.start_at),
        "end_at": as_utc(item.end_at),
        "url": url_for("api.get_phase", phase_id=item.id, _external=True),
    }


def _quota(status: QuotaStatus) -> schemas.Quota:
    return schemas.Quota(
        max_per_day=status.max_per_day,
        used_today=status.used_today,
        remaining_today=status.remaining_today,
        max_total=status.max_total,
        used_total=status.used_total,
        remaining_total=status.remaining_total,
        resets_at=as_utc(status.resets_at),
    )


def _submission_url(item: Submission) -> str:
    return url_for("api.get_submission", submission_id=item.id, _external=True)
