"""The processes a run starts (gunicorn as deployed, a Celery worker and beat), and stopping every one of them.

Every process is started through ``Processes``, which remembers it and stops it by its id
(terminate, then kill after a grace period) when the run ends, however it ends. Nothing
else is ever signalled, except the one worker process a kill row kills on purpose.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import redis
from deadline.loadgen import process_cpu_seconds


class Processes:
    """The processes this run started; stop_all() ends each by its id."""

    def __init__(self) -> None:
        self.started: list[subprocess.Popen[bytes]] = []

    def start(self, args: list[str], *, cwd: Path, env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
        """Start a process with its output appended to log, and remember it."""
        with log.open("ab") as out:
            process = subprocess.Popen(args, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
        self.started.append(process)
        return process

    def stop(self, process: subprocess.Popen[bytes], grace: float = 30.0) -> None:
        """Terminate a process this run started, and kill it if it outlives grace."""
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)
        if process in self.started:
            self.started.remove(process)

    def stop_all(self) -> None:
        """Stop every process still running, newest first."""
        for process in reversed(list(self.started)):
            self.stop(process, grace=20.0)


def free_port() -> int:
    """Return a loopback port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def children(pid: int) -> list[int]:
    """Return the ids of the live child processes of pid."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(entry))
    return sorted(found)


@dataclass
class Web:
    """A gunicorn serving the instance: the master process, its port, its log and its printed config."""

    process: subprocess.Popen[bytes]
    port: int
    log: Path
    workers: str
    threads: str

    def pids(self) -> list[int]:
        """Return the master's and its workers' process ids."""
        return [self.process.pid, *children(self.process.pid)]


def start_web(processes: Processes, *, bin_dir: Path, source: Path, env: dict[str, str], log: Path) -> Web:
    """Start gunicorn with the source tree's deploy/gunicorn.conf.py and wait until GET / answers."""
    port = free_port()
    env = {**env, "GUNICORN_BIND": f"127.0.0.1:{port}"}
    command = [str(bin_dir / "gunicorn"), "-c", "deploy/gunicorn.conf.py", "app:app"]
    printed = subprocess.run([*command[:3], "--print-config", "app:app"], cwd=source, env=env, capture_output=True,
                             text=True, check=False).stdout
    config = dict(re.findall(r"^(\w+)\s+= (.*)$", printed, re.MULTILINE))
    process = processes.start(command, cwd=source, env=env, log=log)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"gunicorn exited ({process.returncode}):\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as response:
                if response.status == 200:
                    return Web(process, port, log, config.get("workers", "?").strip(),
                               config.get("threads", "?").strip())
        except OSError:
            time.sleep(0.3)
    processes.stop(process)
    raise RuntimeError(f"gunicorn did not answer within 120 s:\n{log.read_text()[-3000:]}")


def start_celery(processes: Processes, *, bin_dir: Path, source: Path, env: dict[str, str], module: str,
                 folder: Path, role: str, concurrency: int = 1) -> subprocess.Popen[bytes]:
    """Start a Celery worker (one pool process by default) or beat as deployed, and wait until it is ready."""
    log = folder / f"celery-{role}.log"
    start = log.stat().st_size if log.exists() else 0
    if role == "worker":
        args = ["worker", "--loglevel=INFO", "--without-gossip", "--without-mingle", "--pool=prefork",
                f"--concurrency={concurrency}", f"--hostname=deadline-bench-{os.getpid()}@%h"]
        ready = "ready."
    else:
        args = ["beat", "--loglevel=INFO", f"--schedule={folder / 'beat-schedule'}"]
        ready = "beat: Starting"
    process = processes.start([str(bin_dir / "celery"), "-A", module, *args], cwd=source, env=env, log=log)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"celery {role} exited ({process.returncode}):\n{log.read_text()[-3000:]}")
        if ready in log.read_text(errors="replace")[start:]:
            return process
        time.sleep(0.3)
    processes.stop(process)
    raise RuntimeError(f"celery {role} not ready within 90 s:\n{log.read_text()[-3000:]}")


def busiest(pids: list[int], seconds: float = 1.0) -> tuple[int | None, dict[int, float]]:
    """Return the process using the most CPU over seconds (None unless it clearly leads) and every one's % of a core."""
    before = {pid: process_cpu_seconds(pid) for pid in pids}
    time.sleep(seconds)
    usage = {pid: round(100 * ((process_cpu_seconds(pid) or 0.0) - (before[pid] or 0.0)) / seconds, 1) for pid in pids}
    ranked = sorted(usage, key=usage.__getitem__, reverse=True)
    if not ranked or usage[ranked[0]] < 20:
        return None, usage
    if len(ranked) > 1 and usage[ranked[0]] < 2 * usage[ranked[1]]:
        return None, usage
    return ranked[0], usage


def free_redis_db(host: str = "127.0.0.1", port: int = 6379) -> int:
    """Return the highest-numbered Redis database that holds no keys (the broker of this run alone)."""
    for db in range(15, 0, -1):
        if redis.Redis(host=host, port=port, db=db).dbsize() == 0:
            return db
    raise RuntimeError(f"every Redis database 1-15 at {host}:{port} holds keys; none is free for the broker")


def flush_redis_db(db: int, host: str = "127.0.0.1", port: int = 6379) -> None:
    """Empty the Redis database this run used as its broker (it was empty when the run took it)."""
    redis.Redis(host=host, port=port, db=db).flushdb()
