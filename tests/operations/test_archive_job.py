"""The archive as a job (docs/ORGANIZING.md): the web's "Prepare the archive" button starts a job that stores the
same zip the API streams; its page offers the download to the competition's managers only; both steps are audited."""

from __future__ import annotations

import io
import json
import zipfile
from typing import Any

from sqlalchemy import select

from leaderboard.models import AuditEntry, Job
from leaderboard.submissions import accept_submission


def _world(ctx: Any, make_organizer: Any, make_competition: Any, make_phase: Any, make_user: Any,
           make_predictions: Any) -> tuple[Any, Any]:
    """Return (organizer, competition) with one phase and one scored submission."""
    organizer = make_organizer()
    competition = make_competition("zipme", created_by=organizer)
    phase = make_phase(competition, max_per_day="unlimited")
    accept_submission(ctx, phase_id=phase.id, user=make_user(), filename="p.csv",
                      stream=io.BytesIO(make_predictions(wrong=1)))
    return organizer, competition


def _contents(data: bytes) -> dict[str, bytes]:
    """Return every member of a zip by name."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def test_the_job_stores_the_streamed_zip_and_only_managers_download_it(
        app: Any, client: Any, ctx: Any, login: Any, csrf_token: Any, make_token: Any, make_organizer: Any,
        make_competition: Any, make_phase: Any, make_user: Any, make_predictions: Any) -> None:
    organizer, competition = _world(ctx, make_organizer, make_competition, make_phase, make_user, make_predictions)
    streamed = app.test_client().get("/api/v1/competitions/zipme/export",
                                     headers={"Authorization": f"Bearer {make_token(organizer)}"})
    assert streamed.status_code == 200 and streamed.is_streamed
    streamed_data = streamed.get_data()  # read now: the stream is built as it is read
    login(client, organizer)
    page = client.get("/organizer/c/zipme").get_data(as_text=True)
    assert 'action="/organizer/c/zipme/export"' in page and "Prepare the archive" in page
    assert "download the archive" not in page
    assert client.get("/organizer/c/zipme/export").status_code == 405  # no GET: the button posts
    assert client.post("/organizer/c/zipme/export").status_code == 400  # no CSRF token
    started = client.post("/organizer/c/zipme/export", data={"csrf_token": csrf_token(client, "/organizer/c/zipme")})
    assert started.status_code == 303 and "/organizer/jobs/" in started.location
    job = ctx.session.scalars(select(Job).where(Job.kind == "archive_export")).one()
    ctx.session.refresh(job)
    assert job.status == "done" and job.competition_id == competition.id
    job_page = client.get(f"/organizer/jobs/{job.id}").get_data(as_text=True)
    link = f"/organizer/jobs/{job.id}/archive"
    assert "Preparing the archive" in job_page and f'href="{link}"' in job_page

    download = client.get(link)
    assert download.status_code == 200 and download.mimetype == "application/zip"
    assert download.headers["Content-Disposition"].startswith('attachment; filename="zipme-')
    ours, theirs = _contents(download.get_data()), _contents(streamed_data)
    assert sorted(ours) == sorted(theirs) and "phases/1/labels-v1.jsonl" in ours
    for name in set(ours) - {"manifest.json", "audit.jsonl"}:
        assert ours[name] == theirs[name], name
    manifest, expected = json.loads(ours["manifest.json"]), json.loads(theirs["manifest.json"])
    assert {**manifest, "exported_at": None} == {**expected, "exported_at": None}
    assert ours["audit.jsonl"].startswith(theirs["audit.jsonl"])  # plus the request of this archive

    summaries = list(ctx.session.scalars(select(AuditEntry.summary).where(
        AuditEntry.competition_id == competition.id)))
    assert f"asked for the archive export (job {job.id})" in summaries
    assert f"downloaded the archive (job {job.id})" in summaries

    other = app.test_client()
    assert other.get(link).status_code in (302, 401, 403)  # anonymous: sent to log in, never the file
    login(other, make_organizer())
    assert other.get(link).status_code == 404
    assert other.get(f"/organizer/jobs/{job.id}").status_code == 404
    assert other.post("/organizer/c/zipme/export",
                      data={"csrf_token": csrf_token(other, "/organizer/")}).status_code == 403


def test_a_job_of_another_kind_has_no_archive(client: Any, ctx: Any, login: Any, make_organizer: Any,
                                              make_competition: Any, make_phase: Any, make_user: Any,
                                              make_predictions: Any) -> None:
    from leaderboard.organizing import phases

    organizer, competition = _world(ctx, make_organizer, make_competition, make_phase, make_user, make_predictions)
    job = phases.rescore_phase(ctx, phase_id=competition.phases[0].id, actor=organizer)
    login(client, organizer)
    assert client.get(f"/organizer/jobs/{job.id}").status_code == 200
    assert client.get(f"/organizer/jobs/{job.id}/archive").status_code == 404


def test_a_newer_archive_replaces_the_older_one(app: Any, client: Any, ctx: Any, login: Any, make_organizer: Any,
                                                make_competition: Any, make_phase: Any, make_user: Any,
                                                make_predictions: Any) -> None:
    from leaderboard.operations import archive_jobs

    organizer, _ = _world(ctx, make_organizer, make_competition, make_phase, make_user, make_predictions)
    first = archive_jobs.start_archive_export(ctx, slug="zipme", actor=organizer)
    second = archive_jobs.start_archive_export(ctx, slug="zipme", actor=organizer)
    login(client, organizer)
    assert client.get(f"/organizer/jobs/{second.id}/archive").status_code == 200
    assert client.get(f"/organizer/jobs/{first.id}/archive").status_code == 404
    assert list(ctx.labels.iter_keys("archives/")) == [f"archives/{second.competition_id}/{second.id}.zip"]
