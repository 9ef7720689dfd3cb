"""Who sweeps: a timer thread per serving process in embedded mode, Celery beat in celery mode."""

from __future__ import annotations

import dataclasses
import io
import threading

import pytest
from sqlalchemy.exc import OperationalError

from leaderboard import create_app
from leaderboard.models import Submission
from leaderboard.platform import Settings
from leaderboard.platform.runtime import SWEEP_TASK
from leaderboard.submissions import accept_submission, recovery
from leaderboard.workers import sweeper


def sweeping_threads() -> list[threading.Thread]:
    """Return the live sweeper threads of this process."""
    return [t for t in threading.enumerate() if t.name == "tailboard-sweep" and t.is_alive()]


@pytest.mark.backends("sqlite")
@pytest.mark.parametrize(("changes", "sweeps"), [
    ({"testing": False}, True),
    ({"testing": True}, False),
    ({"testing": False, "sweep_seconds": 0}, False),
    ({"testing": False, "scoring_mode": "celery", "celery_broker_url": "memory://"}, False),
], ids=["embedded", "tests", "turned-off", "celery"])
def test_only_an_embedded_instance_outside_tests_sweeps_in_its_web_processes(settings, changes, sweeps):
    app = create_app({**dataclasses.asdict(settings), **changes})
    assert ("tailboard_sweeper" in app.extensions) is sweeps
    app.extensions["tailboard"].engine.dispose()


@pytest.mark.backends("sqlite")
def test_a_process_starts_one_sweeping_thread_however_many_requests_ask(runtime):
    runtime.settings = dataclasses.replace(runtime.settings, sweep_seconds=60)
    timer = sweeper.Sweeper(runtime)
    before = len(sweeping_threads())
    try:
        for _ in range(3):
            timer.start()
        assert len(sweeping_threads()) == before + 1
    finally:
        timer.stop()


def test_a_sweep_round_dispatches_what_is_due_and_outlives_a_database_error(ctx, make_phase, make_user,
                                                                           make_predictions, monkeypatch):
    phase, user = make_phase(), make_user()

    class Lost:
        def dispatch(self, submission_id: int) -> None:
            """Lose the task, as a broker outage would."""

    monkeypatch.setattr(ctx.runtime, "dispatcher", Lost())
    submission = accept_submission(ctx, phase_id=phase.id, user=user, filename="p.csv",
                                   stream=io.BytesIO(make_predictions()))
    ctx.runtime.settings = dataclasses.replace(ctx.runtime.settings, stale_seconds=0, lease_seconds=0)
    monkeypatch.undo()
    timer = sweeper.Sweeper(ctx.runtime)

    def down(*args, **kwargs):
        raise OperationalError("SELECT", {}, Exception("connection refused"))

    monkeypatch.setattr(recovery, "sweep", down)
    assert timer.run_once() == []  # logged; the next round tries again
    monkeypatch.undo()
    assert timer.run_once() == [submission.id]
    ctx.session.expire_all()
    assert ctx.session.get(Submission, submission.id).status == "scored"


def test_celery_beat_sends_the_sweep_and_redis_gives_messages_back_after_stale_seconds(monkeypatch):
    from leaderboard.workers.celery_app import celery_config, sweep_task

    monkeypatch.setenv("CELERY_BROKER_URL", "redis://127.0.0.1:6379/13")  # the app reads its config on first use

    settings = Settings.from_env({"CELERY_BROKER_URL": "redis://127.0.0.1:6379/13", "SECRET_KEY": "x",
                                  "TAILBOARD_SWEEP_SECONDS": "45", "TAILBOARD_STALE_SECONDS": "600"})
    config = celery_config(settings)
    assert config["beat_schedule"]["sweep"]["task"] == SWEEP_TASK == sweep_task.name
    assert config["beat_schedule"]["sweep"]["schedule"] == 45
    assert config["broker_transport_options"]["visibility_timeout"] == 600  # not Redis's default hour
    assert "sweep" not in celery_config(dataclasses.replace(settings, sweep_seconds=0))["beat_schedule"]

