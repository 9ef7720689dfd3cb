"""A gunicorn worker killed with -9 while it scores (embedded mode): the lease lapses, the sweep scores it again.

docs/RUNNING.md#leases. The instance keeps TAILBOARD_STALE_SECONDS at its 900 s default, so
only the lease (20 s, renewed every 5 s) and the sweep (every 10 s) can bring the
submission back: it must be scored within 60 s of the restart, counted as one attempt,
and scored once. gunicorn is killed whole (master and workers), then started again as
systemd's Restart= would, with deploy/gunicorn.conf.py: each worker starts its sweep when
it boots, so nobody has to visit the site for the work to be taken back.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest
import requests
from fault_support import PREDICTIONS, PROJECT_ROOT, Process, attempts, make_instance, statuses, wait_until
from ports import free_port
from sqlalchemy import func, select

from leaderboard.models import Score

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("faults")]
FAULTS_DIR = Path(__file__).resolve().parent
RECOVERY_CEILING = 60.0
"""The promise (docs/RUNNING.md#leases): scored within a minute of the restart."""


def slow_gunicorn(env: dict[str, str], log_path: Path, port: int) -> Process:
    """Return gunicorn as deployed (deploy/gunicorn.conf.py) serving slow_app:app with 2 workers on port."""
    args = [sys.executable, "-m", "gunicorn", "-c", str(PROJECT_ROOT / "deploy" / "gunicorn.conf.py"),
            "--bind", f"127.0.0.1:{port}", "--workers", "2", "--threads", "4", "slow_app:app"]
    return Process(args, env=env, log_path=log_path, port=port)


def test_a_web_worker_killed_mid_scoring_is_scored_again_within_a_minute(tmp_path: Path) -> None:
    env = {
        "DATABASE_URL": f"sqlite:///{tmp_path / 'tailboard.sqlite3'}",
        "TAILBOARD_DATA_DIR": str(tmp_path / "data"),
        "TAILBOARD_STORAGE": "local",
        "TAILBOARD_SCORING": "inline",
        "TAILBOARD_STALE_SECONDS": "900",
        "SECRET_KEY": "fault-suite",
        "FAULT_SCORING_DELAY": "3",
        "PYTHONPATH": os.pathsep.join([str(FAULTS_DIR), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
    }
    instance = make_instance(env, participants=1)
    runtime = instance.runtime()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    first = slow_gunicorn(env, tmp_path / "gunicorn-1.log", port).start()
    second = slow_gunicorn(env, tmp_path / "gunicorn-2.log", port)
    try:
        response = requests.post(f"{url}/api/v1/phases/{instance.phase_id}/submissions",
                                 headers={"Authorization": f"Bearer {instance.tokens[0]}"},
                                 files={"file": ("p.csv", PREDICTIONS)}, timeout=60)
        assert response.status_code == 202, response.text
        ids = {int(response.json()["id"])}
        assert wait_until(lambda: set(statuses(runtime, ids).values()) == {"scoring"}, seconds=60), first.log_tail()
        first.kill()  # master and workers at once, in the middle of the slowed evaluation
        assert set(statuses(runtime, ids).values()) == {"scoring"}
        second.start()
        restarted = time.monotonic()  # and nobody visits the site from now on
        scored = wait_until(lambda: set(statuses(runtime, ids).values()) == {"scored"}, seconds=RECOVERY_CEILING)
        took = time.monotonic() - restarted
        assert scored, f"{statuses(runtime, ids)} after {took:.0f} s\n{second.log_tail()}"
        assert attempts(runtime, ids) == {i: 1 for i in ids}  # the killed run counts as one attempt
        with runtime.sessions() as session:
            assert session.scalar(select(func.count()).select_from(Score).where(Score.submission_id.in_(ids))) == 1
        print(f"scored {took:.1f} s after the restart")
    finally:
        first.kill()
        second.stop()
        runtime.engine.dispose()
