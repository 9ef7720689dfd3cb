"""Issue 20: a phase's breakdowns change after creation on its edit page; saving re-scores every submission (a
job), is audited with the fields before and after; a refused choice names the breakdowns and changes nothing."""

from __future__ import annotations

import io
from typing import Any

from sqlalchemy import select

from leaderboard.models import AuditEntry, Job, Phase, Submission
from leaderboard.organizing import phase_settings
from leaderboard.submissions import accept_submission, active_score
from tests.conftest import TINY_ITEMS, tiny_labels

SOURCES = ["wiki", "news"]


def _phase(ctx: Any, make_organizer: Any, make_competition: Any, make_phase: Any, make_user: Any,
           make_predictions: Any) -> tuple[Any, Phase, Submission]:
    """Return (organizer, phase whose labels carry a 'source' field, one scored submission)."""
    organizer = make_organizer()
    items = [{**item, "source": SOURCES[n % 2]} for n, item in enumerate(TINY_ITEMS)]
    phase = make_phase(make_competition(created_by=organizer), labels=tiny_labels(items=items),
                       max_per_day="unlimited")
    row = accept_submission(ctx, phase_id=phase.id, user=make_user(), filename="p.csv",
                            stream=io.BytesIO(make_predictions(wrong=1)))
    return organizer, phase, row


def _summaries(ctx: Any, phase: Phase) -> list[str]:
    """Return the audit summaries of the phase's competition."""
    return list(ctx.session.scalars(select(AuditEntry.summary).where(
        AuditEntry.competition_id == phase.competition_id)))


def test_changing_the_breakdowns_rescores_and_is_audited(
        client: Any, ctx: Any, login: Any, csrf_token: Any, make_organizer: Any, make_competition: Any,
        make_phase: Any, make_user: Any, make_predictions: Any) -> None:
    organizer, phase, row = _phase(ctx, make_organizer, make_competition, make_phase, make_user, make_predictions)
    assert set(active_score(row).results["breakdowns"]) == {"category"}
    login(client, organizer)
    path = f"/organizer/phases/{phase.id}/edit"
    page = client.get(path).get_data(as_text=True)
    for offered in ("category", "popularity", "source"):
        assert f'value="{offered}"' in page
    assert '<option selected value="category">' in page
    assert 'value="label"' not in page and 'value="split"' not in page
    token = csrf_token(client, path)
    saved = client.post(f"/organizer/phases/{phase.id}/breakdowns",
                        data={"csrf_token": token, "breakdowns": ["category", "source"]})
    assert saved.status_code == 303 and "/organizer/jobs/" in saved.location
    ctx.session.expire_all()
    assert ctx.session.get(Phase, phase.id).task_config["breakdowns"] == ["category", "source"]
    job = ctx.session.scalars(select(Job).where(Job.phase_id == phase.id, Job.kind == "rescore")).one()
    assert job.status == "done"
    tables = active_score(ctx.session.get(Submission, row.id)).results["breakdowns"]
    assert set(tables) == {"category", "source"} and set(tables["source"]) == set(SOURCES)
    assert "changed the phase's settings (breakdowns: category → category, source)" in _summaries(ctx, phase)
    again = client.get(path).get_data(as_text=True)
    assert '<option selected value="source">' in again
    unchanged = client.post(f"/organizer/phases/{phase.id}/breakdowns",
                            data={"csrf_token": token, "breakdowns": ["category", "source"]})
    assert unchanged.status_code == 303 and unchanged.location.endswith(path)
    assert ctx.session.scalar(select(Job.id).where(Job.id > job.id)) is None  # no second job for no change


def test_a_refused_choice_names_the_breakdowns_and_changes_nothing(
        client: Any, ctx: Any, login: Any, csrf_token: Any, make_organizer: Any, make_competition: Any,
        make_phase: Any, make_user: Any, make_predictions: Any) -> None:
    organizer, phase, _ = _phase(ctx, make_organizer, make_competition, make_phase, make_user, make_predictions)
    login(client, organizer)
    phase_settings.update_settings(ctx, phase_id=phase.id, actor=organizer, views=[
        {"name": "History", "metric": "breakdowns.category.history.accuracy", "columns": []}])
    token = csrf_token(client, f"/organizer/phases/{phase.id}/edit")
    logged = len(_summaries(ctx, phase))
    for picked, said in ((["label"], "Breakdowns: &#39;label&#39; is not a field of the label file"),
                         (["nope"], "Breakdowns: &#39;nope&#39; is not a field"),
                         (["source"], "breakdowns.category.history.accuracy"),  # a view ranks by a category table
                         ):
        refused = client.post(f"/organizer/phases/{phase.id}/breakdowns", data={"csrf_token": token,
                                                                               "breakdowns": picked})
        assert refused.status_code == 400 and said in refused.get_data(as_text=True)
    ctx.session.expire_all()
    assert ctx.session.get(Phase, phase.id).task_config["breakdowns"] == ["category"]
    assert len(_summaries(ctx, phase)) == logged
    assert ctx.session.scalar(select(Job.id).where(Job.phase_id == phase.id)) is None


def test_only_managers_change_the_breakdowns(client: Any, ctx: Any, login: Any, csrf_token: Any,
                                             make_organizer: Any, make_competition: Any, make_phase: Any,
                                             make_user: Any, make_predictions: Any) -> None:
    _, phase, _ = _phase(ctx, make_organizer, make_competition, make_phase, make_user, make_predictions)
    login(client, make_organizer())
    refused = client.post(f"/organizer/phases/{phase.id}/breakdowns",
                          data={"csrf_token": csrf_token(client, "/organizer/"), "breakdowns": ["source"]})
    assert refused.status_code == 403
    ctx.session.expire_all()
    assert ctx.session.get(Phase, phase.id).task_config["breakdowns"] == ["category"]
