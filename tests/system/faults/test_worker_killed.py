"""A Celery worker killed with -9 in the middle of scoring, on Redis at 127.0.0.1:6379.

A real ``celery worker`` (slowed so the kill lands mid-task) and ``celery beat`` run the
scale-out deployment's roles. The worker and its pool process are killed at once while a
submission is ``scoring``, then a new worker starts, as systemd's Restart= would. Every
submission must end scored within a minute of the restart, the interrupted one counted as
one failed attempt, without anyone running ``flask requeue``: its run stopped renewing its
lease (20 s), and beat's sweep takes it back. TAILBOARD_STALE_SECONDS stays at 900 s, so
nothing but the lease can bring it back that soon (docs/RUNNING.md#leases).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from fault_support import (
    QUICK_RECOVERY,
    attempts,
    celery_beat,
    celery_worker,
    make_instance,
    queue_uploads,
    statuses,
    wait_until,
)

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("faults")]
FAULTS_DIR = Path(__file__).resolve().parent


def test_a_worker_killed_mid_task_leaves_nothing_unscored_and_nobody_requeues(tmp_path: Path, redis_url: str) -> None:
    env = {
        **QUICK_RECOVERY,
        "TAILBOARD_STALE_SECONDS": "900",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'tailboard.sqlite3'}",
        "TAILBOARD_DATA_DIR": str(tmp_path / "data"),
        "TAILBOARD_STORAGE": "local",
        "TAILBOARD_SCORING": "celery",
        "CELERY_BROKER_URL": redis_url,
        "FAULT_SCORING_DELAY": "3",
        "PYTHONPATH": os.pathsep.join([str(FAULTS_DIR), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
    }
    instance = make_instance(env, participants=1)
    runtime = instance.runtime()
    beat = celery_beat(env, tmp_path).start()
    first = celery_worker("slow_tasks", env, tmp_path / "worker-1.log").start()
    second = celery_worker("slow_tasks", env, tmp_path / "worker-2.log")
    try:
        assert first.wait_for_line(" ready."), first.log_tail()  # consuming before the uploads are sent
        ids = queue_uploads(runtime, instance, count=3)
        assert wait_until(lambda: "scoring" in statuses(runtime, ids).values(), seconds=60), (
            f"{statuses(runtime, ids)}; the worker's tasks: {first.log_lines('tailboard.score_submission')}; "
            f"the broker: {broker_state(redis_url)}")
        first.kill()  # the worker and its pool process, at once
        victims = {i for i, status in statuses(runtime, ids).items() if status == "scoring"}
        assert len(victims) == 1, statuses(runtime, ids)  # killed in the middle of that one
        second.start()
        restarted = time.monotonic()
        scored = wait_until(lambda: set(statuses(runtime, ids).values()) == {"scored"}, seconds=60)
        took = time.monotonic() - restarted
        assert scored, f"{statuses(runtime, ids)} after {took:.0f} s\n{second.log_tail()}\n{beat.log_tail()}"
        assert {i: n for i, n in attempts(runtime, ids).items() if i in victims} == {i: 1 for i in victims}
        print(f"every submission scored {took:.1f} s after the restart")
    finally:
        for process in (first, second, beat):
            process.stop()
        runtime.engine.dispose()



def broker_state(url: str) -> dict[str, object]:
    """Return the broker database's keys and the length of Celery's queue, for failure messages."""
    import redis

    client = redis.Redis.from_url(url)
    return {"keys": sorted(k.decode() for k in client.keys("*")), "queued": client.llen("celery"),
            "clients": [(c["addr"], c["cmd"]) for c in client.client_list() if str(c["db"]) == url.rsplit("/", 1)[1]]}
