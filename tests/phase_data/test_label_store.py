"""The hidden-label store cannot serve the wrong file: per-instance dirs, content-addressed keys, sha256 checks.

Measured before this store (issue 7): a second instance of one checkout, run with its
own ``TAILBOARD_DATA_DIR``, overwrote the first one's ``phases/1/labels-v1.jsonl`` in the
shared ``<project>/hidden_labels``, and the first then scored against foreign labels.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, select
from sqlalchemy.pool import NullPool

from leaderboard import accounts
from leaderboard.accounts import OPERATOR
from leaderboard.board import board_changed
from leaderboard.entries import quota
from leaderboard.models import Phase, Score, Submission
from leaderboard.operations import run_job
from leaderboard.organizing import competitions, phases
from leaderboard.phase_data import load_phase_labels
from leaderboard.platform import (
    LabelIntegrityError,
    Runtime,
    ScoringUnavailable,
    ServiceContext,
    Settings,
    build_runtime,
)
from leaderboard.platform.config import LEGACY_LABELS_DIR
from leaderboard.platform.db import Base
from leaderboard.submissions import accept_submission, active_score, score_submission, scoring_runs


def labels_of(prefix: str, truths: list[bool]) -> bytes:
    """Return a binary label file whose ids start with prefix."""
    return "".join(json.dumps({"id": f"{prefix}{n}", "label": t, "category": "c"}) + "\n"
                   for n, t in enumerate(truths, start=1)).encode()


def perfect(labels: bytes) -> bytes:
    """Return a CSV answering every item of a label file right."""
    rows = [json.loads(line) for line in labels.splitlines()]
    return ("id,prediction\n" + "".join(f"{r['id']},{str(r['label']).lower()}\n" for r in rows)).encode()


@pytest.fixture
def instances(tmp_path: Path) -> Iterator[Callable[..., Runtime]]:
    """Return start(name, env): an instance of this checkout with its own data dir and SQLite database."""
    started: list[Runtime] = []

    def start(name: str, **env: str) -> Runtime:
        settings = Settings.from_env({"TAILBOARD_DATA_DIR": str(tmp_path / name), "SECRET_KEY": "k", **env})
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        engine = create_engine(settings.database_url, poolclass=NullPool)
        Base.metadata.create_all(engine)
        engine.dispose()
        runtime = build_runtime(settings, score=score_submission, board_changed=board_changed, run_job=run_job)
        started.append(runtime)
        return runtime

    yield start
    for runtime in started:
        runtime.engine.dispose()


def first_phase_scored(runtime: Runtime, labels: bytes) -> tuple[Phase, Submission]:
    """Create competition 'bench' with phase 1 on labels, upload a perfect file; return both."""
    with runtime.sessions() as session:
        ctx = runtime.context(session)
        competitions.create_competition(ctx, slug="bench", title="Bench", actor=OPERATOR)
        phase = phases.create_phase(ctx, competition_slug="bench", name="Phase 1", labels=labels, actor=OPERATOR)
        phases.open_phase(ctx, phase_id=phase.id, actor=OPERATOR)
        user = accounts.register_user(ctx, email="p@example.com", password="correct horse battery")
        submission = accept_submission(ctx, phase_id=phase.id, user=user, filename="p.csv",
                                       stream=io.BytesIO(perfect(labels)))
        session.expunge_all()
        return phase, submission


def rescored(runtime: Runtime, phase_id: int, submission_id: int) -> Score | None:
    """Rescore a phase in a fresh process (cold label cache); return the submission's active score."""
    runtime.caches.clear()
    with runtime.sessions() as session:
        ctx = runtime.context(session)
        phases.rescore_phase(ctx, phase_id=phase_id, actor=OPERATOR)
        session.expire_all()
        return active_score(session.get(Submission, submission_id))


@pytest.mark.parametrize("shared_labels_dir", [False, True], ids=["default label dirs", "one shared label dir"])
def test_two_instances_of_one_checkout_each_score_against_their_own_labels(instances, tmp_path, shared_labels_dir):
    env = {"TAILBOARD_LABELS_DIR": str(tmp_path / "shared-labels")} if shared_labels_dir else {}
    demo, second = instances("demo", **env), instances("second", **env)
    demo_labels = labels_of("CV1-", [True, False, True, True])
    second_labels = labels_of("tg-", [False, False, True, False, True])
    demo_phase, demo_sub = first_phase_scored(demo, demo_labels)
    second_phase, second_sub = first_phase_scored(second, second_labels)  # phase 1 too, after the demo's
    assert demo_phase.id == second_phase.id == 1 and demo_phase.labels_key != second_phase.labels_key
    for runtime, phase, sub, labels in ((demo, demo_phase, demo_sub, demo_labels),
                                        (second, second_phase, second_sub, second_labels)):
        assert runtime.labels.read_bytes(phase.labels_key) == labels
        score = rescored(runtime, phase.id, sub.id)
        assert score is not None and score.public_primary == 1.0 and score.results["n_items"] == labels.count(b"\n")
    if shared_labels_dir:
        assert demo.settings.labels_dir == second.settings.labels_dir == (tmp_path / "shared-labels").resolve()
    else:
        assert demo.settings.labels_dir == (tmp_path / "demo" / "hidden_labels").resolve()
        assert second.settings.labels_dir == (tmp_path / "second" / "hidden_labels").resolve()
        assert demo.settings.legacy_labels_dir == LEGACY_LABELS_DIR
    assert not (LEGACY_LABELS_DIR / demo_phase.labels_key).exists()


def test_the_default_label_dir_is_under_the_data_dir_and_an_explicit_one_wins(tmp_path):
    default = Settings.from_env({"TAILBOARD_DATA_DIR": str(tmp_path / "d"), "SECRET_KEY": "k"})
    explicit = Settings.from_env({"TAILBOARD_DATA_DIR": str(tmp_path / "d"), "SECRET_KEY": "k",
                                  "TAILBOARD_LABELS_DIR": str(tmp_path / "l")})
    assert default.labels_dir == (tmp_path / "d" / "hidden_labels").resolve()
    assert (explicit.labels_dir, explicit.legacy_labels_dir) == ((tmp_path / "l").resolve(), None)


def test_label_keys_are_content_addressed(ctx, make_phase, labels_file):
    first, second = make_phase(), make_phase(labels=labels_file(private=True))
    for phase, data in ((first, labels_file()), (second, labels_file(private=True))):
        digest = hashlib.sha256(data).hexdigest()
        assert (phase.labels_key, phase.labels_sha256) == (f"labels/sha256/{digest}.jsonl", digest)


def corrupt(ctx: ServiceContext, phase: Phase) -> bytes:
    """Change the bytes of the phase's label file on disk (a flipped label), as a crash or a person might.

    Returns the original bytes.
    """
    path = ctx.settings.labels_dir / phase.labels_key
    original = path.read_bytes()
    path.write_bytes(original.replace(b'"label": "true"', b'"label": "false"', 1))
    return original


def test_a_corrupted_label_file_fails_the_scoring_run_loudly_and_is_never_used(
        ctx, make_phase, make_user, make_predictions, monkeypatch, caplog):
    phase, user = make_phase(max_per_day=2), make_user()
    monkeypatch.setattr(ctx.runtime, "dispatcher", None)  # accepted and charged, scored later by a worker
    submission = accept_submission(ctx, phase_id=phase.id, user=user, filename="p.csv",
                                   stream=io.BytesIO(make_predictions()))
    assert quota.quota_status(ctx, phase=phase, user=user).used_today == 1
    original = corrupt(ctx, phase)
    ctx.runtime.caches.clear()  # the worker is another process: nothing parsed yet
    with caplog.at_level(logging.ERROR, logger="leaderboard.phase_data.labelsets"):
        scoring_runs.score_submission(ctx, submission_id=submission.id)
    ctx.session.expire_all()
    assert ctx.session.scalars(select(Score).where(Score.submission_id == submission.id)).all() == []
    actual = hashlib.sha256((ctx.settings.labels_dir / phase.labels_key).read_bytes()).hexdigest()
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR and r.name.endswith("labelsets")]
    assert any(f"phase {phase.id}" in m and phase.labels_sha256 in m and actual in m for m in errors), errors
    run = ctx.session.get(Submission, submission.id)
    # The retry policy is scoring_runs' to choose: failed with the quota refunded, or queued to try again.
    assert run.status in ("failed", "queued")
    if run.status == "failed":
        assert quota.quota_status(ctx, phase=phase, user=user).used_today == 0
    else:  # retried: once the file is restored, it is scored against the phase's own labels
        (ctx.settings.labels_dir / phase.labels_key).write_bytes(original)
        scoring_runs.score_submission(ctx, submission_id=submission.id)
        ctx.session.expire_all()
        assert active_score(ctx.session.get(Submission, submission.id)).public_primary == 1.0


def test_upload_validation_refuses_a_corrupted_label_file_and_charges_nothing(ctx, make_phase, make_user,
                                                                             make_predictions):
    phase, user = make_phase(max_per_day=2), make_user()
    corrupt(ctx, phase)
    ctx.runtime.caches.clear()
    with pytest.raises(ScoringUnavailable) as raised:
        accept_submission(ctx, phase_id=phase.id, user=user, filename="p.csv", stream=io.BytesIO(make_predictions()))
    assert "nothing was charged" in raised.value.message and phase.labels_sha256 not in raised.value.message
    ctx.session.rollback()
    assert quota.quota_status(ctx, phase=phase, user=user).used_today == 0
    assert not ctx.session.scalars(select(Submission).where(Submission.user_id == user.id)).all()  # none left


def test_a_cached_label_set_is_only_ever_one_that_passed_the_check(ctx, make_phase):
    phase = make_phase()
    corrupt(ctx, phase)
    ctx.runtime.caches.clear()
    for _ in range(2):  # a failed read leaves nothing in the cache to hit next time
        with pytest.raises(LabelIntegrityError):
            load_phase_labels(ctx, phase)


@pytest.fixture
def settings_overrides(tmp_path: Path) -> dict[str, Path]:
    """Give these tests a legacy label dir of their own (never the project's)."""
    return {"legacy_labels_dir": tmp_path / "legacy"}


def as_legacy_phase(ctx: ServiceContext, phase: Phase, data: bytes) -> Phase:
    """Make phase look created before content-addressed keys: labels under phases/<id>/ in the legacy dir."""
    key = f"phases/{phase.id}/labels-v1.jsonl"
    (ctx.settings.legacy_labels_dir / key).parent.mkdir(parents=True)
    (ctx.settings.legacy_labels_dir / key).write_bytes(data)
    ctx.labels.delete(phase.labels_key)
    phase.labels_key = key
    ctx.session.commit()
    ctx.runtime.caches.clear()
    return phase


def test_a_phase_from_before_the_move_reads_its_labels_from_the_legacy_dir(ctx, make_phase, labels_file):
    phase = as_legacy_phase(ctx, make_phase(), labels_file())
    assert load_phase_labels(ctx, phase).n == 8


def test_a_legacy_label_file_overwritten_by_another_instance_is_refused(ctx, make_phase, labels_file):
    phase = as_legacy_phase(ctx, make_phase(), labels_file())
    other = labels_of("CV1-CV", [True] * 8)  # what the second instance wrote under the same key
    (ctx.settings.legacy_labels_dir / phase.labels_key).write_bytes(other)
    with pytest.raises(LabelIntegrityError):
        load_phase_labels(ctx, phase)
