"""The scale-out deployment of deploy/README.md on one machine: two web hosts, two worker hosts, shared services.

Hosts are network namespaces (scale_network.py). In the root namespace run what the
hosts share: PostgreSQL (a throwaway database) and Redis (database 11) through
tcp_forward.py on the bridge address, and an S3 server (rclone) bound on it. Each web host
runs gunicorn with deploy/gunicorn.conf.py; each worker host a one-process Celery worker,
slowed by tests/system/faults/slow_tasks.py so scoring takes a measurable time; the first
worker host also runs beat (exactly one per instance). Every host has its own data dir;
they share only the settings deploy/README.md says they must share.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import requests
from alembic import command
from alembic_support import alembic_config
from s3_servers import ACCESS_KEY, BUCKET, SECRET_KEY
from scale_network import Network
from sqlalchemy import select

from leaderboard.accounts import OPERATOR
from leaderboard.board import board_changed
from leaderboard.models import Board, Score, Submission, User
from leaderboard.platform import Runtime, Settings, build_runtime
from leaderboard.submissions import score_submission

PROJECT_ROOT = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent
FAULTS_DIR = PROJECT_ROOT / "tests" / "system" / "faults"  # slow_tasks.py: the slowed Celery app
HOSTS = {"web-a": 11, "web-b": 12, "worker-1": 21, "worker-2": 22}
WEB_PORT = 8000
REDIS_DB = 11  # the fault tests use 12, the Celery worker tests 13
SCORING_DELAY = "0.5"  # seconds each scoring run sleeps before evaluating (slow_tasks.py)
LEASE_SECONDS = 4  # a killed worker's run is taken back within this (beat sweeps every second)
LABELS = b"".join(json.dumps({"id": f"q{i}", "label": i % 2 == 0}).encode() + b"\n" for i in range(40))
PREDICTIONS = b"id,prediction\n" + b"".join(f"q{i},{'yes' if i % 3 else 'no'}\n".encode() for i in range(40))


class HostProcess:
    """A server process on one host, in its own session (so a kill takes its children too), logging to a file."""

    def __init__(self, args: list[str], *, env: dict[str, str], log_path: Path,
                 ready: Callable[[HostProcess], bool]) -> None:
        self.args, self.env, self.log_path, self.ready = args, env, log_path, ready
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, *, seconds: float = 60) -> HostProcess:
        """Start the process and wait until it is ready; fail with its log if it exits or takes too long."""
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(self.args, cwd=PROJECT_ROOT, env=self.env, stdout=log,
                                            stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + seconds
        while not self.ready(self):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{self.args[4:7]} did not start (exit {self.process.poll()}):\n{self.log_tail()}")
            time.sleep(0.1)
        return self

    @property
    def running(self) -> bool:
        """Return whether the process was started and has not ended."""
        return self.process is not None and self.process.poll() is None

    def kill(self) -> None:
        """Kill the process and all its children at once (-9), as a crashed host would lose them."""
        if self.running:
            assert self.process is not None
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=30)

    def log_tail(self) -> str:
        """Return the end of the log, for failure messages."""
        return self.log_path.read_text(errors="replace")[-3000:] if self.log_path.exists() else ""


def listening(address: str, port: int) -> Callable[[HostProcess], bool]:
    """Return a readiness check: something accepts connections at address:port."""
    def check(_process: HostProcess) -> bool:
        """Return whether a connection to address:port succeeds now."""
        try:
            socket.create_connection((address, port), timeout=0.5).close()
            return True
        except OSError:
            return False
    return check


def logged(text: str) -> Callable[[HostProcess], bool]:
    """Return a readiness check: the process's log contains text."""
    return lambda process: process.log_path.exists() and text in process.log_path.read_text(errors="replace")


def free_port(address: str) -> int:
    """Return a port nobody listens on at address right now."""
    with socket.socket() as sock:
        sock.bind((address, 0))
        return int(sock.getsockname()[1])


def base_env() -> dict[str, str]:
    """Return this process's environment without Tailboard's, gunicorn's and S3's own settings."""
    return {key: value for key, value in os.environ.items()
            if not key.startswith(("TAILBOARD_", "GUNICORN_", "AWS_", "CELERY_", "WEB_CONCURRENCY"))
            and key not in ("DATABASE_URL", "SECRET_KEY", "RATELIMIT_STORAGE_URI")}


def shared_settings(*, database_url: str, redis_url: str, s3_endpoint: str) -> dict[str, str]:
    """Return the settings every web and worker host shares (deploy/env.example's PostgreSQL/Redis setup)."""
    return {
        "DATABASE_URL": database_url,
        "TAILBOARD_STORAGE": f"s3://{BUCKET}/scale",
        "AWS_ENDPOINT_URL": s3_endpoint,
        "AWS_ACCESS_KEY_ID": ACCESS_KEY,
        "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
        "AWS_DEFAULT_REGION": "us-east-1",
        "SECRET_KEY": "scale-out-test",
        "TAILBOARD_SCORING": "celery",
        "CELERY_BROKER_URL": redis_url,
        "RATELIMIT_STORAGE_URI": redis_url,
        "TAILBOARD_API_RATELIMIT": "100000 per minute",  # the test's clients upload faster than a person
        "TAILBOARD_SWEEP_SECONDS": "1",  # beat sends the sweep every second
        "TAILBOARD_LEASE_SECONDS": str(LEASE_SECONDS),
        "TAILBOARD_RETRY_SECONDS": "0.5",
    }


@dataclass
class Instance:
    """The instance's open phase and its participants' API tokens, by name."""

    phase_id: int
    tokens: dict[str, str]


def make_instance(settings: Settings, *, participants: list[str]) -> Instance:
    """Migrate the database, create an open phase without limits and one participant with a token per name."""
    from leaderboard import accounts
    from leaderboard.organizing import competitions, phases

    command.upgrade(alembic_config(settings.database_url), "head")  # the triggers the board watch listens to
    runtime = build_runtime(settings, score=score_submission, board_changed=board_changed)
    try:
        with runtime.sessions() as session:
            ctx = runtime.context(session)
            competitions.create_competition(ctx, slug="scale", title="Scale out", actor=OPERATOR)
            phase = phases.create_phase(ctx, actor=OPERATOR, competition_slug="scale", name="Dev", labels=LABELS,
                                        config={"task_type": "binary", "primary_metric": "accuracy"},
                                        max_per_day=phases.UNLIMITED)
            phases.open_phase(ctx, actor=OPERATOR, phase_id=phase.id)
            tokens = {}
            for name in participants:
                user = accounts.register_user(ctx, email=f"{name}@example.org", password="participant-pass",
                                              display_name=name)
                tokens[name] = accounts.create_token(ctx, user=user)[1]
            return Instance(phase_id=phase.id, tokens=tokens)
    finally:
        runtime.engine.dispose()


@dataclass
class Cluster:
    """The running deployment: hosts, their processes, and a runtime on the shared database for checks."""

    network: Network
    folder: Path
    env: dict[str, str]  # base environment plus the shared settings, as the hosts see them
    instance: Instance
    runtime: Runtime
    processes: dict[str, HostProcess] = field(default_factory=dict)

    def url(self, host: str) -> str:
        """Return the base URL of a web host."""
        return f"http://{self.network.address(host)}:{WEB_PORT}"

    def host_env(self, host: str, **extra: str) -> dict[str, str]:
        """Return a host's environment: the shared settings, its own data and cache dirs, extra settings."""
        home = self.folder / host
        home.mkdir(exist_ok=True)
        return {**self.env, "TAILBOARD_DATA_DIR": str(home / "data"), "TAILBOARD_CACHE_DIR": str(home / "cache"),
                **extra}

    def start_web(self, host: str) -> None:
        """Run gunicorn as deployed (deploy/gunicorn.conf.py) on a web host: 2 worker processes of 4 threads."""
        address = self.network.address(host)
        env = self.host_env(host, GUNICORN_BIND=f"{address}:{WEB_PORT}", WEB_CONCURRENCY="2", GUNICORN_THREADS="4")
        args = [sys.executable, "-m", "gunicorn", "-c", "deploy/gunicorn.conf.py", "app:app"]
        self._start(host, args, env, listening(address, WEB_PORT))

    def start_worker(self, host: str) -> None:
        """Run a one-process Celery worker (scoring slowed by SCORING_DELAY) on a worker host."""
        env = self.host_env(host, FAULT_SCORING_DELAY=SCORING_DELAY, PYTHONPATH=str(FAULTS_DIR))
        args = [sys.executable, "-m", "celery", "-A", "slow_tasks", "worker", "--concurrency=1", "--without-gossip",
                "--without-mingle", "--without-heartbeat", "--hostname", f"{host}@%h", "--loglevel=INFO"]
        self._start(host, args, env, logged(" ready."))

    def start_beat(self, host: str) -> None:
        """Run Celery beat (the sweep every second) on a worker host: one per instance."""
        env = self.host_env(host)
        args = [sys.executable, "-m", "celery", "-A", "leaderboard.workers.celery_app", "beat", "--schedule",
                str(self.folder / host / "beat-schedule"), "--loglevel=INFO"]
        self._start(f"{host}-beat", args, env, logged("beat: Starting"), host=host)

    def _start(self, name: str, args: list[str], env: dict[str, str], ready: Callable[[HostProcess], bool],
               *, host: str | None = None) -> None:
        """Start a process inside a host's namespace under name, replacing a dead one."""
        process = HostProcess(self.network.command(host or name, args), env=env,
                              log_path=self.folder / f"{name}.log", ready=ready)
        self.processes[name] = process
        process.start()

    def ensure(self, *, webs: tuple[str, ...] = ("web-a", "web-b"),
               workers: tuple[str, ...] = ("worker-1", "worker-2")) -> None:
        """Start whichever of these web hosts, worker hosts and the beat is not running."""
        for host in webs:
            if not self._running(host):
                self.start_web(host)
        for host in workers:
            if not self._running(host):
                self.start_worker(host)
        if not self._running("worker-1-beat"):
            self.start_beat("worker-1")

    def _running(self, name: str) -> bool:
        """Return whether the process named name runs."""
        return name in self.processes and self.processes[name].running

    def kill(self, name: str) -> None:
        """Kill a host's process and its children with -9 (a web host: gunicorn's master and workers)."""
        self.processes[name].kill()

    def stop_all(self) -> None:
        """Kill every process of every host."""
        for process in self.processes.values():
            process.kill()

    def upload(self, host: str, participant: str, *, key: str | None = None) -> requests.Response:
        """Upload the prediction file as participant through a web host's API."""
        headers = {"Authorization": f"Bearer {self.instance.tokens[participant]}",
                   "Idempotency-Key": key or uuid.uuid4().hex}
        return requests.post(f"{self.url(host)}/api/v1/phases/{self.instance.phase_id}/submissions",
                             headers=headers, files={"file": ("p.csv", PREDICTIONS)}, timeout=30)

    def board(self, host: str) -> list[dict[str, object]]:
        """Return the rows of the phase's public board as an anonymous reader of a web host sees them."""
        response = requests.get(f"{self.url(host)}/api/v1/phases/{self.instance.phase_id}/leaderboard",
                                params={"per_page": 100}, timeout=10)
        response.raise_for_status()
        return list(response.json()["rows"])

    def statuses(self, ids: set[int]) -> dict[int, str]:
        """Return each submission's status, read fresh from the shared database."""
        with self.runtime.sessions() as session:
            return dict(session.execute(select(Submission.id, Submission.status).where(Submission.id.in_(ids))).all())

    def attempts(self, ids: set[int]) -> dict[int, int]:
        """Return each submission's failed scoring attempts."""
        with self.runtime.sessions() as session:
            return dict(session.execute(select(Submission.id, Submission.attempts)
                                        .where(Submission.id.in_(ids))).all())

    def scoring(self, ids: set[int]) -> dict[int, datetime | None]:
        """Return the ones of ids being scored now, with the end of their run's lease (naive UTC)."""
        with self.runtime.sessions() as session:
            rows = session.execute(select(Submission.id, Submission.lease_until)
                                   .where(Submission.id.in_(ids), Submission.status == "scoring"))
            return dict(rows.all())

    def scored_at(self, ids: set[int]) -> dict[int, datetime]:
        """Return when each submission's current score row was recorded (naive UTC)."""
        with self.runtime.sessions() as session:
            rows = session.execute(select(Score.submission_id, Score.created_at)
                                   .where(Score.submission_id.in_(ids), Score.retired_at.is_(None)))
            return dict(rows.all())

    def board_refreshed_at(self) -> datetime | None:
        """Return when the phase's board was last refreshed (naive UTC)."""
        with self.runtime.sessions() as session:
            return session.scalar(select(Board.refreshed_at).where(Board.phase_id == self.instance.phase_id))

    def submissions_of(self, participants: list[str]) -> set[int]:
        """Return the ids of every submission these participants have, whatever its status."""
        emails = [f"{name}@example.org" for name in participants]
        with self.runtime.sessions() as session:
            return set(session.scalars(select(Submission.id).join(User, Submission.user_id == User.id)
                                       .where(User.email.in_(emails))))

    def wait_scored(self, ids: set[int], *, seconds: float) -> bool:
        """Wait until every one of ids is scored (at most seconds); return whether they all were."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if set(self.statuses(ids).values()) == {"scored"}:
                return True
            time.sleep(0.2)
        return set(self.statuses(ids).values()) == {"scored"}

    def logs(self, *names: str) -> str:
        """Return the log tails of the named processes, for failure messages."""
        return "\n".join(f"--- {name}\n{self.processes[name].log_tail()}" for name in names if name in self.processes)
