"""Re-scoring in batches (operations/rescoring.py): one transaction per batch, what the board is told, the pool."""

from __future__ import annotations

import io
import json
import multiprocessing
import time
from typing import Any

import pytest
from sqlalchemy import func, select, update

from leaderboard.accounts import OPERATOR
from leaderboard.disclosure import with_draw
from leaderboard.entries import quota
from leaderboard.models import Board, Job, MailOutbox, Phase, Score, Submission
from leaderboard.operations import jobs, rescore_pool, rescoring, run_job
from leaderboard.organizing import phases
from leaderboard.platform.db import utcnow
from leaderboard.submissions import accept_submission, active_score
from scoring import load_labels, read_predictions
from scoring.evaluate import evaluation
from scoring.metrics import batch as batch_module


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    """Mail on (queued in the outbox, never sent: no sender runs here)."""
    return {"smtp_url": "smtp://127.0.0.1:9", "mail_from": "tailboard@example.org"}


@pytest.fixture
def make_user(ctx, make_user: Any) -> Any:
    """Return a factory of confirmed accounts whose confirmation mail is already gone (mail is on here)."""

    def make(*args: Any, **kwargs: Any) -> Any:
        user = make_user(*args, **kwargs)
        user.email_confirmed_at = utcnow()
        ctx.session.execute(MailOutbox.__table__.delete().where(MailOutbox.recipient == user.email))
        ctx.session.commit()
        return user

    return make


def uploads(ctx, phase, user, make_predictions, count: int) -> list[int]:
    """Upload count prediction files (each with one more wrong answer) and return their ids."""
    return [accept_submission(ctx, phase_id=phase.id, user=user, filename="p.csv",
                              stream=io.BytesIO(make_predictions(wrong=i % 8))).id for i in range(count)]


def rescore(ctx, phase) -> Job:
    """Run a re-scoring job of the phase to its end in this thread; return the job, read fresh."""
    job = phases.rescore_phase(ctx, phase_id=phase.id, actor=OPERATOR, run=False)
    run_job(ctx, job_id=job.id)
    ctx.session.expire_all()
    return ctx.session.get(Job, job.id)


def scores_of(ctx, submission_id: int) -> list[Score]:
    """Return a submission's score rows, oldest first."""
    return list(ctx.session.scalars(select(Score).where(Score.submission_id == submission_id).order_by(Score.id)))


def board_calls(monkeypatch, ctx) -> list[list[int] | None]:
    """Record what the board is told (the submission ids, None for everything), then tell it."""
    told: list[list[int] | None] = []
    real = ctx.runtime.board_changed

    def record(context, *, phase_id, submission_ids=None):
        told.append(None if submission_ids is None else list(submission_ids))
        real(context, phase_id=phase_id, submission_ids=submission_ids)

    monkeypatch.setattr(ctx.runtime, "board_changed", record)
    return told


def test_a_file_no_longer_valid_fails_alone_refunded_and_told_while_its_batch_is_scored(
        ctx, make_phase, make_user, make_predictions, monkeypatch):
    monkeypatch.setattr(rescoring, "BATCH", 50)
    phase, user = make_phase(max_per_day=5), make_user("ada@example.org")
    ids = uploads(ctx, phase, user, make_predictions, 4)
    broken = ctx.session.get(Submission, ids[1])
    ctx.storage.put(broken.file_key, b"id,prediction\nnot-an-item,true\n")  # the stored file went bad
    assert quota.quota_status(ctx, phase=phase, user=user).used_today == 4
    job = rescore(ctx, phase)
    assert (job.status, job.done) == ("done", 7)  # 4 uploads and 3 built-in baselines, in one batch
    failed = ctx.session.get(Submission, ids[1])
    assert failed.status == "failed" and failed.validation_errors["errors"]
    assert "not valid against label version 1" in failed.failure_detail
    assert active_score(failed) is None and len(scores_of(ctx, ids[1])) == 1
    for other in (ids[0], *ids[2:]):
        history = scores_of(ctx, other)
        assert len(history) == 2 and history[0].retired_at is not None and history[1].retired_at is None
        assert history[0].results == history[1].results
        assert ctx.session.get(Submission, other).status == "scored"
    assert quota.quota_status(ctx, phase=phase, user=user).used_today == 3
    mails = ctx.session.scalars(select(MailOutbox.kind).where(MailOutbox.recipient == "ada@example.org")).all()
    assert mails.count("submission_failed") == 1 and mails.count("submission_scored") == 4  # no second "scored"


def test_the_board_is_told_only_the_rescored_submissions_coalesced(ctx, make_phase, make_user, make_predictions,
                                                                    monkeypatch):
    monkeypatch.setattr(rescoring, "BATCH", 3)
    phase, user = make_phase(max_per_day="unlimited"), make_user()
    uploads(ctx, phase, user, make_predictions, 5)
    eligible = list(ctx.session.scalars(rescoring.eligible(phase.id)))
    told = board_calls(monkeypatch, ctx)
    rescore(ctx, phase)
    assert told == [eligible]  # one refresh at the end (a run shorter than BOARD_EVERY_SECONDS), never the whole board
    monkeypatch.setattr(rescoring, "BOARD_EVERY_SECONDS", 0.0)
    told.clear()
    rescore(ctx, phase)
    assert None not in told and sorted(sum(told, [])) == eligible  # as batches are recorded, each id once


def test_a_killed_run_resumes_after_its_last_batch_and_the_board_is_rebuilt_once(ctx, make_phase, make_user,
                                                                                make_predictions, monkeypatch):
    monkeypatch.setattr(rescoring, "BATCH", 2)
    phase, user = make_phase(max_per_day="unlimited"), make_user()
    uploads(ctx, phase, user, make_predictions, 3)  # 6 with the baselines: 3 batches
    job = phases.rescore_phase(ctx, phase_id=phase.id, actor=OPERATOR, run=False)
    real_progress = jobs.progress

    def killed_after_second_batch(ctx, **kwargs):
        if kwargs["done"] == 4:
            raise SystemExit("killed")  # the second batch is recorded, its progress never committed
        return real_progress(ctx, **kwargs)

    monkeypatch.setattr(jobs, "progress", killed_after_second_batch)
    with pytest.raises(SystemExit):
        run_job(ctx, job_id=job.id)
    ctx.session.rollback()
    assert ctx.session.get(Job, job.id, populate_existing=True).params == {"cursor": rescoring_ids(ctx, phase)[1]}
    monkeypatch.setattr(jobs, "progress", real_progress)
    ctx.session.execute(update(Job).where(Job.id == job.id).values(status="queued", claimed_by=None))
    ctx.session.commit()  # as the sweep would once its heartbeat lapsed
    told = board_calls(monkeypatch, ctx)
    run_job(ctx, job_id=job.id)
    ctx.session.expire_all()
    assert (ctx.session.get(Job, job.id).status, ctx.session.get(Job, job.id).done) == ("done", 6)
    counts = [len(scores_of(ctx, sid)) for sid in rescoring_ids(ctx, phase)]
    assert counts == [2, 2, 3, 3, 2, 2]  # the second batch once more, no more
    assert told == [None]  # a resumed run cannot know what its predecessor left untold: the whole board, once


def rescoring_ids(ctx, phase) -> list[int]:
    """Return the ids a re-score of the phase covers."""
    return list(ctx.session.scalars(rescoring.eligible(phase.id)))


def test_labels_replaced_between_scoring_and_recording_drop_that_batch(ctx, make_phase, make_user,
                                                                        make_predictions, monkeypatch):
    monkeypatch.setattr(rescoring, "BATCH", 2)
    monkeypatch.setattr(rescoring, "SCORED_AHEAD", 1)  # the third batch is handed out after the labels change
    phase, user = make_phase(max_per_day="unlimited"), make_user()
    uploads(ctx, phase, user, make_predictions, 3)
    ids = rescoring_ids(ctx, phase)
    real_progress = jobs.progress

    def new_labels_after_first_batch(ctx, **kwargs):
        if kwargs["done"] == 2:  # the second batch is scored on version 1 already; it is recorded after this
            ctx.session.execute(update(Phase).where(Phase.id == phase.id).values(label_version=2))
        return real_progress(ctx, **kwargs)

    monkeypatch.setattr(jobs, "progress", new_labels_after_first_batch)
    job = rescore(ctx, phase)
    assert (job.status, job.done) == ("done", 6)
    versions = [[s.label_version for s in scores_of(ctx, sid)] for sid in ids]
    assert versions == [[1, 1], [1, 1], [1], [1], [1, 2], [1, 2]]  # the second batch left to a newer job
    assert all(active_score(ctx.session.get(Submission, sid)) is not None for sid in ids)


def test_a_large_job_scores_in_a_pool_with_the_same_results_and_leaves_no_process(ctx, make_phase, make_user,
                                                                                  make_predictions, monkeypatch):
    monkeypatch.setattr(rescore_pool, "POOL_FROM", 1)
    monkeypatch.setattr(rescoring, "BATCH", 3)
    started: list[Any] = []
    real_start = rescore_pool._start_pool
    monkeypatch.setattr(rescore_pool, "_start_pool", lambda *a: started.append(real_start(*a)) or started[-1])
    phase, user = make_phase(max_per_day="unlimited"), make_user()
    ids = uploads(ctx, phase, user, make_predictions, 5)
    job = rescore(ctx, phase)
    assert (job.status, job.done) == ("done", 8)
    assert len(started) == 1 and started[0] is not None
    for sid in ids:
        old, new = scores_of(ctx, sid)
        assert old.results == new.results and new.retired_at is None
        assert (old.correct_bits, old.answered_bits) == (new.correct_bits, new.answered_bits)
    deadline = time.monotonic() + 30
    while multiprocessing.active_children() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert multiprocessing.active_children() == []
    total = ctx.session.scalar(select(func.count()).select_from(Score).where(Score.retired_at.is_(None))
                               .where(Score.submission_id.in_(rescoring_ids(ctx, phase))))
    assert total == 8


def test_a_pool_that_breaks_mid_run_is_replaced_by_the_jobs_thread(ctx, make_phase, make_user, make_predictions,
                                                                   monkeypatch):
    monkeypatch.setattr(rescore_pool, "POOL_FROM", 1)
    monkeypatch.setattr(rescoring, "BATCH", 3)

    class Broken:
        def submit(self, *args, **kwargs):
            raise RuntimeError("A process in the process pool was terminated abruptly")

        def shutdown(self, **kwargs):
            pass

    monkeypatch.setattr(rescore_pool, "_start_pool", lambda *a: Broken())
    phase, user = make_phase(max_per_day="unlimited"), make_user()
    ids = uploads(ctx, phase, user, make_predictions, 4)
    job = rescore(ctx, phase)
    assert (job.status, job.done) == ("done", 7)
    assert all(len(scores_of(ctx, sid)) == 2 for sid in ids)


def test_a_batch_holds_at_most_batch_bytes_of_files_and_at_least_one(ctx, make_phase, make_user, make_predictions,
                                                                      monkeypatch):
    phase, user = make_phase(max_per_day="unlimited"), make_user()
    uploads(ctx, phase, user, make_predictions, 3)
    size = max(ctx.session.scalars(select(Submission.file_size).where(Submission.phase_id == phase.id)))
    seen: list[int] = []
    real_progress = jobs.progress
    monkeypatch.setattr(jobs, "progress", lambda ctx, **kw: seen.append(kw["done"]) or real_progress(ctx, **kw))
    monkeypatch.setattr(rescoring, "BATCH_BYTES", 1)  # smaller than any file: one file a batch
    rescore(ctx, phase)
    assert seen == [0, 1, 2, 3, 4, 5, 6]
    monkeypatch.setattr(rescoring, "BATCH_BYTES", 2 * size)  # two files of the largest size fit
    seen.clear()
    rescore(ctx, phase)
    assert seen == [0, 2, 4, 6]


def test_the_job_ends_with_its_board_told_and_fails_when_the_board_cannot_be_told(ctx, make_phase, make_user,
                                                                                  make_predictions, monkeypatch):
    phase, user = make_phase(max_per_day="unlimited"), make_user()
    uploads(ctx, phase, user, make_predictions, 2)
    assert rescore(ctx, phase).status == "done"
    board = ctx.session.get(Board, phase.id, populate_existing=True)
    assert board.built == board.wanted  # refreshed before the job ended, in the job's own run

    def unreachable(context, *, phase_id, submission_ids=None):
        raise RuntimeError("the database went away")

    monkeypatch.setattr(ctx.runtime, "board_changed", unreachable)
    job = rescore(ctx, phase)
    assert (job.status, job.done) == ("failed", 5) and "the database went away" in job.error


def draws(monkeypatch) -> list[int]:
    """Record how many slices each bootstrap draw covers (scoring.metrics.batch) while still drawing them."""
    counted: list[int] = []
    real = batch_module._slice_bounds
    monkeypatch.setattr(batch_module, "_slice_bounds", lambda counts: counted.append(len(counts)) or real(counts))
    return counted


@pytest.mark.parametrize("kept", [True, False])
def test_a_label_fix_draws_only_the_intervals_of_changed_tables_and_scores_as_from_nothing(
        ctx, make_phase, make_user, make_predictions, labels_file, monkeypatch, kept):
    """A re-score takes each unchanged slice's interval from the earlier score; without the slice list (the twin,
    as for scores kept from before migration 0013) every interval is drawn. The scores are the same either way."""
    phase, user = make_phase(max_per_day="unlimited", private=True), make_user()
    ids = uploads(ctx, phase, user, make_predictions, 3)
    assert all(scores_of(ctx, sid)[0].slice_tables for sid in ids)  # the first scoring lists its slices
    if not kept:
        ctx.session.execute(update(Score).values(slice_tables=None))
        ctx.session.commit()
    records = [json.loads(line) for line in labels_file(private=True).decode().splitlines()]
    records[0]["label"] = {"true": "false", "false": "true"}[records[0]["label"]]  # one label fixed
    fixed = ("\n".join(json.dumps(r) for r in records) + "\n").encode()
    counted = draws(monkeypatch)
    job = phases.replace_labels(ctx, phase_id=phase.id, labels=fixed, actor=OPERATOR, run=False)
    run_job(ctx, job_id=job.id)
    drawn = sum(counted[-len(ids):])  # the uploads come last (the baselines were made with the phase)
    ctx.session.expire_all()
    labels = load_labels(fixed, ctx.session.get(Phase, phase.id).task_config)
    every = 0
    for sid in ids:
        data = ctx.storage.read_bytes(ctx.session.get(Submission, sid).file_key)
        predictions = read_predictions(data, labels)
        fresh = evaluation(labels, predictions)
        score = active_score(ctx.session.get(Submission, sid))
        assert (score.label_version, score.results) == (2, with_draw(fresh.results, predictions))
        assert score.slice_tables == fresh.tables
        every += len(fresh.tables) - len(score.results.get("popularity_curve", []))
    assert (drawn < every) if kept else (drawn == every)
