"""Parts of the fault suite: an instance to break, servers on loopback, clients that keep uploading.

Everything runs on 127.0.0.1: gunicorn, rclone's S3 server, PostgreSQL, Redis. Processes
are started in their own session so a test can freeze or kill them (and their children)
as a crash would, and are always stopped at the end.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests
from alembic import command
from alembic_support import alembic_config
from ports import free_port, wait_for_port
from sqlalchemy import func, select

from leaderboard.accounts import OPERATOR
from leaderboard.board import board_changed
from leaderboard.models import QuotaUsage, Submission, User
from leaderboard.platform import Runtime, Settings, build_runtime
from leaderboard.submissions import score_submission

PROJECT_ROOT = Path(__file__).resolve().parents[3]
LABELS = b"".join(json.dumps({"id": f"q{i}", "label": i % 2 == 0, "category": "ab"[i % 2]}).encode() + b"\n"
                  for i in range(40))
PREDICTIONS = b"id,prediction\n" + b"".join(f"q{i},{'yes' if i % 3 else 'no'}\n".encode() for i in range(40))
QUICK_RECOVERY = {
    "TAILBOARD_SWEEP_SECONDS": "1",  # the embedded timer / beat: every second
    "TAILBOARD_STALE_SECONDS": "4",  # abandoned work is taken back after 4 s
    "TAILBOARD_RETRY_SECONDS": "0.5",  # first retry after half a second, doubling
    "SECRET_KEY": "fault-suite",
}


@dataclass
class Instance:
    """A migrated instance with one open phase and participants holding API tokens."""

    env: dict[str, str]
    phase_id: int
    tokens: list[str]

    def runtime(self) -> Runtime:
        """Return a runtime on the instance's settings (close it with .engine.dispose())."""
        return build_runtime(Settings.from_env(self.env), score=score_submission, board_changed=board_changed)


def make_instance(env: dict[str, str], *, participants: int) -> Instance:
    """Migrate the database of env, create an open phase without limits and participants with tokens."""
    from leaderboard import accounts
    from leaderboard.organizing import competitions, phases

    command.upgrade(alembic_config(env["DATABASE_URL"]), "head")
    runtime = build_runtime(Settings.from_env(env), score=score_submission, board_changed=board_changed)
    try:
        with runtime.sessions() as session:
            ctx = runtime.context(session)
            competitions.create_competition(ctx, slug="faults", title="Faults", actor=OPERATOR)
            phase = phases.create_phase(ctx, actor=OPERATOR, competition_slug="faults", name="Dev", labels=LABELS,
                                        config={"task_type": "binary", "primary_metric": "accuracy"},
                                        max_per_day=phases.UNLIMITED)
            phases.open_phase(ctx, actor=OPERATOR, phase_id=phase.id)
            tokens = []
            for n in range(participants):
                user = accounts.register_user(ctx, email=f"p{n}@example.org", password="participant-pass")
                tokens.append(accounts.create_token(ctx, user=user)[1])
            return Instance(env=env, phase_id=phase.id, tokens=tokens)
    finally:
        runtime.engine.dispose()


class Process:
    """A server subprocess in its own session, with its output in a log file."""

    def __init__(self, args: list[str], *, env: dict[str, str], log_path: Path, port: int | None = None) -> None:
        self.args, self.env, self.log_path, self.port = args, env, log_path, port
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> Process:
        """Start the process and wait until its port (if any) accepts connections."""
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(self.args, cwd=PROJECT_ROOT, env={**os.environ, **self.env},
                                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        if self.port is not None:
            wait_for_port(self.port, self.process, self.log_path)
        return self

    def signal(self, signum: int) -> None:
        """Send signum to the process and all its children (its session's group, even once it has exited)."""
        assert self.process is not None
        with contextlib.suppress(ProcessLookupError):  # nobody is left in the group
            os.killpg(self.process.pid, signum)

    def kill(self) -> None:
        """Kill the process and its children at once (-9), as a crash would."""
        if self.process is None:
            return
        # A pool child outlives a leader that died on its own; it would go on taking the next test's tasks.
        self.signal(signal.SIGCONT)
        self.signal(signal.SIGKILL)
        self.process.wait(timeout=30)

    def stop(self) -> None:
        """Stop the process politely, then by force."""
        if self.process is None:
            return
        if self.process.poll() is not None:
            self.kill()  # its children, if any are left
            return
        self.signal(signal.SIGCONT)
        self.signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.kill()

    def wait_for_line(self, containing: str, *, seconds: float = 60) -> bool:
        """Wait until the log has a line containing a string (a worker's "ready."); return whether it came."""
        return wait_until(lambda: bool(self.log_lines(containing)), seconds=seconds, every=0.2)

    def log_lines(self, containing: str) -> list[str]:
        """Return the lines of the log that contain a string, for failure messages."""
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        return [line for line in text.splitlines() if containing in line]

    def log_tail(self) -> str:
        """Return the end of the log, for failure messages."""
        return self.log_path.read_text(errors="replace")[-3000:] if self.log_path.exists() else ""


def celery(app: str, *args: str, env: dict[str, str], log_path: Path) -> Process:
    """Return a celery command (worker or beat) of app as a Process."""
    return Process([sys.executable, "-m", "celery", "-A", app, *args, "--loglevel=INFO"], env=env, log_path=log_path)


def celery_worker(app: str, env: dict[str, str], log_path: Path) -> Process:
    """Return a one-process Celery worker of app."""
    return celery(app, "worker", "--concurrency=1", "--without-gossip", "--without-mingle", "--without-heartbeat",
                  "--hostname", f"tailboard-fault-{uuid.uuid4().hex[:8]}@%h", env=env, log_path=log_path)


def celery_beat(env: dict[str, str], tmp_path: Path) -> Process:
    """Return Tailboard's Celery beat (it sends the sweep every TAILBOARD_SWEEP_SECONDS)."""
    return celery("leaderboard.workers.celery_app", "beat", "--schedule", str(tmp_path / "beat-schedule"), env=env,
                  log_path=tmp_path / "beat.log")


def queue_uploads(runtime: Runtime, instance: Instance, *, count: int) -> set[int]:
    """Accept count uploads of the instance's first participant in this process; return their ids."""
    from leaderboard.submissions import accept_submission

    with runtime.sessions() as session:
        ctx = runtime.context(session)
        user = session.scalar(select(User).where(User.email == "p0@example.org"))
        assert user is not None
        return {accept_submission(ctx, phase_id=instance.phase_id, user=user, filename="p.csv",
                                  stream=io.BytesIO(PREDICTIONS)).id for _ in range(count)}


def gunicorn(env: dict[str, str], log_path: Path) -> Process:
    """Return gunicorn serving app:app on a free loopback port: 2 worker processes, 4 threads each."""
    port = free_port()
    args = [sys.executable, "-m", "gunicorn", "--bind", f"127.0.0.1:{port}", "--workers", "2",
            "--worker-class", "gthread", "--threads", "4", "--timeout", "60", "--graceful-timeout", "5", "app:app"]
    return Process(args, env=env, log_path=log_path, port=port)


@dataclass
class Answers:
    """What the uploading clients were told."""

    acknowledged: set[int] = field(default_factory=set)
    statuses: list[int] = field(default_factory=list)
    empty_errors: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def count(self) -> tuple[int, int]:
        """Return (acknowledged uploads, failed answers: 5xx or no answer) so far."""
        with self.lock:
            return len(self.acknowledged), sum(1 for code in self.statuses if code >= 500 or code == 0)

    def record(self, response: requests.Response | None) -> None:
        """Remember one answer (None: the connection failed)."""
        with self.lock:
            if response is None:
                self.statuses.append(0)
                return
            self.statuses.append(response.status_code)
            if response.status_code == 202:
                self.acknowledged.add(int(response.json()["id"]))
            elif response.status_code >= 500 and not _error_body(response):
                self.empty_errors.append(f"{response.status_code} {response.text[:200]!r}")


def _error_body(response: requests.Response) -> bool:
    """Return whether an error answer says something: a JSON body with an 'error'."""
    try:
        return bool(response.json().get("error"))
    except ValueError:
        return False


def keep_uploading(url: str, instance: Instance, answers: Answers, stop: threading.Event) -> list[threading.Thread]:
    """Start one thread per participant that uploads until stop is set, retrying each upload with its key."""
    def client(token: str) -> None:
        headers = {"Authorization": f"Bearer {token}"}
        while not stop.is_set():
            key = uuid.uuid4().hex
            for _ in range(3):  # a participant who got no answer retries with the same key
                try:
                    response = requests.post(f"{url}/api/v1/phases/{instance.phase_id}/submissions",
                                             headers={**headers, "Idempotency-Key": key},
                                             files={"file": ("p.csv", PREDICTIONS)}, timeout=30)
                except requests.RequestException:
                    response = None
                answers.record(response)
                if response is not None and response.status_code < 500:
                    break
                time.sleep(0.1)
            time.sleep(0.2)  # under the API's 300 calls a minute per token

    threads = [threading.Thread(target=client, args=(token,), daemon=True) for token in instance.tokens]
    for thread in threads:
        thread.start()
    return threads


def wait_until(condition: Callable[[], bool], *, seconds: float, every: float = 0.5) -> bool:
    """Poll condition until it holds or seconds pass; return whether it held."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(every)
    return condition()


def statuses(runtime: Runtime, ids: set[int]) -> dict[int, str]:
    """Return the status of each submission id."""
    return _column(runtime, ids, Submission.status)


def attempts(runtime: Runtime, ids: set[int]) -> dict[int, int]:
    """Return the failed scoring attempts of each submission id."""
    return _column(runtime, ids, Submission.attempts)


def _column(runtime: Runtime, ids: set[int], column: Any) -> dict[int, Any]:
    """Return one column of each submission id, read fresh."""
    with runtime.sessions() as session:
        rows = session.execute(select(Submission.id, column).where(Submission.id.in_(ids)))
        return {row[0]: row[1] for row in rows}


def charged_ids(runtime: Runtime, phase_id: int) -> tuple[set[int], int]:
    """Return the ids of submissions holding a quota charge, and the total units used in the phase."""
    with runtime.sessions() as session:
        ids = set(session.scalars(select(Submission.id).where(Submission.phase_id == phase_id,
                                                              Submission.quota_day.is_not(None))))
        used = session.scalar(select(func.coalesce(func.sum(QuotaUsage.used), 0))
                              .where(QuotaUsage.phase_id == phase_id, QuotaUsage.day == "total"))
        return ids, int(used or 0)


def summary(runtime: Runtime, answers: Answers) -> str:
    """Return one line on what happened: answers by status, and acknowledged uploads by scoring attempts."""
    with runtime.sessions() as session:
        attempts = Counter(session.scalars(select(Submission.attempts)
                                           .where(Submission.id.in_(answers.acknowledged))))
    return (f"answers {dict(sorted(Counter(answers.statuses).items()))}; acknowledged {len(answers.acknowledged)}, "
            f"by failed attempts before scoring {dict(sorted(attempts.items()))}")
