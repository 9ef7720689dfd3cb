"""Background jobs (docs/ORGANIZING.md): one runner, batches with a resume point, abandoned runs taken over."""

from __future__ import annotations

import io
from datetime import timedelta

import pytest
from sqlalchemy import func, select

from leaderboard.accounts import OPERATOR
from leaderboard.models import Job, LabelVersion, Score, Submission
from leaderboard.operations import job_runner, jobs, rescoring, run_job
from leaderboard.organizing import phases
from leaderboard.platform import NotFound
from leaderboard.platform.db import utcnow
from leaderboard.submissions import accept_submission, active_score


def uploads(ctx, phase, user, make_predictions, count: int) -> list[int]:
    """Upload count prediction files (each with one more wrong answer) and return their ids."""
    return [accept_submission(ctx, phase_id=phase.id, user=user, filename="p.csv",
                              stream=io.BytesIO(make_predictions(wrong=i % 8))).id for i in range(count)]


def queued_job(ctx, phase) -> Job:
    """Create a re-scoring job without running it."""
    return phases.rescore_phase(ctx, phase_id=phase.id, actor=OPERATOR, run=False)


def scores_per_submission(ctx, phase_id: int) -> dict[int, int]:
    """Return how many score rows (active and retired) each submission of a phase has."""
    rows = ctx.session.execute(select(Score.submission_id, func.count()).join(Submission)
                               .where(Submission.phase_id == phase_id).group_by(Score.submission_id))
    return dict(rows.all())


def test_a_rescore_job_runs_in_batches_and_every_submission_keeps_an_active_score(ctx, make_phase, make_user,
                                                                                  make_predictions, monkeypatch):
    monkeypatch.setattr(rescoring, "BATCH", 3)
    phase, user = make_phase(max_per_day="unlimited"), make_user()
    ids = uploads(ctx, phase, user, make_predictions, 7)
    job = queued_job(ctx, phase)
    seen: list[int] = []
    real_progress = jobs.progress

    def watch(ctx, **kwargs):
        seen.append(kwargs["done"])
        # Between batches every submission still has exactly one active score: the board is never empty.
        for sid in ids:
            assert active_score(ctx.session.get(Submission, sid, populate_existing=True)) is not None
        return real_progress(ctx, **kwargs)

    monkeypatch.setattr(jobs, "progress", watch)
    run_job(ctx, job_id=job.id)
    ctx.session.expire_all()
    done = ctx.session.get(Job, job.id)
    assert (done.status, done.done, done.total) == ("done", 10, 10)  # 7 uploads and 3 built-in baselines
    assert seen == [0, 3, 6, 9, 10]
    assert set(scores_per_submission(ctx, phase.id).values()) == {2}


def test_an_abandoned_job_is_resumed_after_its_last_committed_batch(ctx, make_phase, make_user, make_predictions,
                                                                   monkeypatch):
    monkeypatch.setattr(rescoring, "BATCH", 4)
    phase, user = make_phase(max_per_day="unlimited"), make_user()
    uploads(ctx, phase, user, make_predictions, 9)  # 12 with the baselines: 3 batches
    job = queued_job(ctx, phase)
    real_progress, calls = jobs.progress, []

    def die_after_first_batch(ctx, **kwargs):
        calls.append(kwargs["done"])
        if kwargs["done"] == 8:
            raise SystemExit("the process was killed")  # not an Exception: nothing marks the job failed
        return real_progress(ctx, **kwargs)

    monkeypatch.setattr(jobs, "progress", die_after_first_batch)
    with pytest.raises(SystemExit):
        run_job(ctx, job_id=job.id)
    ctx.session.rollback()
    assert ctx.session.get(Job, job.id, populate_existing=True).status == "running"
    assert jobs.resumable_ids(ctx) == []  # its heartbeat is fresh: nobody takes it over yet
    later = utcnow() + timedelta(seconds=ctx.settings.stale_seconds + 1)
    assert jobs.resumable_ids(ctx, now=later) == [job.id]
    monkeypatch.setattr(jobs, "progress", real_progress)
    monkeypatch.setattr(jobs, "utcnow", lambda: later)
    run_job(ctx, job_id=job.id)
    ctx.session.expire_all()
    resumed = ctx.session.get(Job, job.id)
    assert (resumed.status, resumed.done) == ("done", 12)
    counts = scores_per_submission(ctx, phase.id)
    assert sorted(counts.values()) == [2] * 8 + [3] * 4  # the lost batch was scored once more, no more


def test_a_newer_job_supersedes_an_unfinished_one_which_then_writes_nothing(ctx, make_phase, make_user,
                                                                            make_predictions):
    phase, user = make_phase(), make_user()
    uploads(ctx, phase, user, make_predictions, 2)
    first = queued_job(ctx, phase)
    token = jobs.claim_job(ctx, job_id=first.id)
    second = queued_job(ctx, phase)
    assert not jobs.progress(ctx, job_id=first.id, token=token, done=1)
    ctx.session.expire_all()
    old = ctx.session.get(Job, first.id)
    assert old.status == "failed" and "superseded" in old.error
    run_job(ctx, job_id=second.id)
    assert ctx.session.get(Job, second.id, populate_existing=True).status == "done"


def test_a_job_claimed_by_a_live_run_is_not_run_twice(ctx, make_phase):
    phase = make_phase()
    job = queued_job(ctx, phase)
    assert jobs.claim_job(ctx, job_id=job.id) is not None
    run_job(ctx, job_id=job.id)  # another worker is handed the same job: it leaves it alone
    assert ctx.session.get(Job, job.id, populate_existing=True).status == "running"


def test_a_failed_job_says_why_to_its_managers_only(ctx, make_phase, make_competition, make_organizer, make_user,
                                                    monkeypatch):
    owner, outsider, participant = make_organizer(), make_organizer(), make_user()
    phase = make_phase(make_competition(created_by=owner))

    def broken(ctx, **_):
        raise RuntimeError("storage away")

    monkeypatch.setitem(job_runner.KINDS, "rescore", broken)
    job = phases.rescore_phase(ctx, phase_id=phase.id, actor=OPERATOR)
    view = jobs.get_job(ctx, job_id=job.id, actor=OPERATOR)
    assert view.status == "failed" and "storage away" in view.error
    for stranger in (participant, outsider, None):
        with pytest.raises(NotFound):
            jobs.get_job(ctx, job_id=job.id, actor=stranger)
    assert jobs.get_job(ctx, job_id=job.id, actor=owner).status == "failed"


def test_replacing_labels_records_every_version(ctx, make_phase, labels_file):
    phase = make_phase()
    phases.replace_labels(ctx, phase_id=phase.id, labels=labels_file().replace(b'"true"', b'"false"'), actor=OPERATOR)
    versions = ctx.session.scalars(select(LabelVersion).where(LabelVersion.phase_id == phase.id)
                                   .order_by(LabelVersion.version)).all()
    assert [v.version for v in versions] == [1, 2] and versions[0].labels_sha256 != versions[1].labels_sha256
