"""Turn models and service results into the API's response models."""

from __future__ import annotations

from typing import Any, cast

from flask import request, url_for

from leaderboard.accounts import phase_status
from leaderboard.board import AcrossBoard, Leaderboard, ShownRow, path_label, phase_views
from leaderboard.disclosure import feedback_rule, probing_settings
from leaderboard.entries import QuotaStatus, final_selections, max_methods
from leaderboard.models import Competition, Phase, Submission
from leaderboard.operations import JobView, moderation_state
from leaderboard.platform.db import as_aware_utc
from leaderboard.submissions import Place
from leaderboard.web.api import schemas
from leaderboard.web.api.schemas.entries import EntrySettings
from scoring import higher_is_better
from scoring.views import View

FAILED_SCORING = "Scoring failed on the platform's side; your quota was refunded. Try again later."


def competition(item: Competition) -> schemas.Competition:
    """Return a competition with its phases."""
    return schemas.Competition(
        slug=item.slug,
        title=item.title,
        description=item.description,
        requires_approval=item.requires_approval,
        phases=[phase_summary(phase) for phase in item.phases],
        url=request.host_url.rstrip("/") + f"/c/{item.slug}",
    )


def status(item: Phase) -> schemas.PhaseStatus:
    """Return the phase's derived status."""
    return cast(schemas.PhaseStatus, phase_status(item))


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
        primary_metric=item.primary_metric,
        breakdowns=list(config.get("breakdowns", [])),
        n_items=item.n_items,
        has_private_split=item.has_private_split,
        leaderboard_visibility=item.leaderboard_visibility,
        max_per_day=item.max_per_day,
        max_total=item.max_total,
        quota=None if quota is None else _quota(quota),
        probing=_probing(item),
        views=[_view(v) for v in phase_views(item)],
        entries=EntrySettings(max_methods=max_methods(item), final_selections=final_selections(item)),
        leaderboard_url=url_for("api.get_leaderboard", phase_id=item.id, _external=True),
        submissions_url=url_for("api.create_submission", phase_id=item.id, _external=True),
    )


def accepted(item: Submission, *, warnings: list[str] | None = None) -> schemas.SubmissionAccepted:
    """Return the 202 answer to an upload, with the warnings the upload form would ask about."""
    return schemas.SubmissionAccepted(id=item.id, status=item.status, url=_submission_url(item),  # type: ignore[arg-type]
                                      warnings=warnings or [])


def submission(item: Submission, *, shown: dict[str, Any] | None, scope: str | None,
               attempts: int | None = None, place: Place | None = None) -> schemas.Submission:
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
        method=item.method,
        metadata=item.entry_metadata,
        team=item.team.name if item.team is not None else None,
        selected=item.selected,
        created_at=as_aware_utc(item.created_at),
        updated_at=as_aware_utc(item.updated_at),
        primary_metric=item.phase.primary_metric,
        scores=scores,
        scores_scope=scope,  # type: ignore[arg-type]
        errors=errors,
        failure=failure,
        attempts=attempts,
        moderation=moderation(item),
        queue_position=place.position if place is not None else None,
        eta_seconds=place.eta_seconds if place is not None else None,
        url=_submission_url(item),
    )


def moderation(item: Submission) -> schemas.Moderation | None:
    """Return a submission's moderation (None while it was never moderated)."""
    state = moderation_state(item)
    if state.state == "visible" and item.moderated_at is None:
        return None
    return schemas.Moderation(state=state.state, reason=state.reason,  # type: ignore[arg-type]
                              at=as_aware_utc(state.at) if state.at else None)


def job(view: JobView) -> schemas.Job:
    """Return a background job's progress with its own address."""
    return schemas.Job(id=view.id, kind=view.kind, status=view.status,  # type: ignore[arg-type]
                       done=view.done, total=view.total, error=view.error,
                       url=url_for("api.get_job", job_id=view.id, _external=True))


def leaderboard(board: Leaderboard) -> schemas.Leaderboard:
    """Return one view of a ranking: display names (never emails), shown figures, no result objects."""
    view = board.view
    return schemas.Leaderboard(
        phase_id=board.phase.id,
        view=schemas.LeaderboardView(name=view.name, metric=view.metric, label=path_label(view.metric),
                                     higher_is_better=board.higher_is_better, columns=list(board.columns)),
        views=[v.name for v in board.layout.views],
        split=board.split,  # type: ignore[arg-type]
        primary_metric=board.phase.primary_metric,
        rule=board.rule,
        total=board.total,
        page=board.page,
        per_page=board.per_page,
        rows=[leaderboard_row(row, board.columns) for row in board.rows],
    )


def across(board: AcrossBoard) -> schemas.CompetitionLeaderboard:
    """Return a competition's across-phases table: phase columns, rows with values per phase id, mean, phases."""
    return schemas.CompetitionLeaderboard(
        competition=board.competition.slug,
        phases=[schemas.AcrossPhase(id=c.phase.id, name=c.phase.name, status=c.status,  # type: ignore[arg-type]
                                    metric=c.metric, higher_is_better=c.higher_is_better,
                                    split=c.split) for c in board.columns],  # type: ignore[arg-type]
        rule=board.rule, total=board.total, page=board.page, per_page=board.per_page,
        rows=[schemas.AcrossRow(rank=r.rank, display_name=r.display_name, team=r.team, method=r.method,
                                values={str(c.phase.id): r.values.get(c.phase.id) for c in board.columns},
                                mean=r.mean, phases=r.phases, complete=r.rank is not None, mine=r.mine)
              for r in board.rows],
    )


def leaderboard_row(row: ShownRow, columns: tuple[str, ...]) -> schemas.LeaderboardRow:
    """Return one row of a view with its column values."""
    return schemas.LeaderboardRow(
        rank=row.rank, stat_rank=row.stat_rank, p_vs_previous=row.p_vs_previous, display_name=row.display_name,
        team=row.team, method=row.method, metadata=row.metadata, is_baseline=row.is_baseline,
        submission_id=row.submission_id, submitted_at=as_aware_utc(row.submitted_at), value=row.value,
        ci=None if row.ci is None else list(row.ci),
        columns={path: row.columns.get(path, (None,))[0] for path in columns},
        errors={path: cell[3] for path in columns if (cell := row.columns.get(path)) and cell[3] is not None},
        submissions=row.submissions, mine=row.mine,
    )


def _summary_fields(item: Phase) -> dict[str, Any]:
    return {
        "id": item.id,
        "name": item.name,
        "position": item.position,
        "status": status(item),
        "start_at": as_aware_utc(item.start_at),
        "end_at": as_aware_utc(item.end_at),
        "url": url_for("api.get_phase", phase_id=item.id, _external=True),
    }


def _view(view: View) -> schemas.LeaderboardView:
    """Return a phase's view with its path in words and its direction."""
    return schemas.LeaderboardView(name=view.name, metric=view.metric, label=path_label(view.metric),
                                   higher_is_better=higher_is_better(view.metric), columns=list(view.columns))


def _probing(item: Phase) -> schemas.Probing:
    settings = probing_settings(item)
    return schemas.Probing(min_slice_items=settings.min_slice_items,
                           public_feedback=settings.public_feedback,  # type: ignore[arg-type]
                           ladder_step=settings.ladder_step, min_answered=settings.min_answered,
                           rule=feedback_rule(item))


def _quota(status: QuotaStatus) -> schemas.Quota:
    return schemas.Quota(
        max_per_day=status.max_per_day,
        used_today=status.used_today,
        remaining_today=status.remaining_today,
        max_total=status.max_total,
        used_total=status.used_total,
        remaining_total=status.remaining_total,
        resets_at=as_aware_utc(status.resets_at),
    )


def _submission_url(item: Submission) -> str:
    return url_for("api.get_submission", submission_id=item.id, _external=True)
