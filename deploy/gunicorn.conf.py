"""Gunicorn settings: ``gunicorn -c deploy/gunicorn.conf.py app:app`` from the project root.

Every value can be changed from the environment (see deploy/env.example). nginx in
front buffers each request completely before it reaches a worker; without it (a
directly exposed gunicorn) every slow client holds one worker thread for as long
as it trickles its headers or body, so the thread count below is also the number of
slow clients the server survives (see deploy/README.md and bench/slow_clients_bench.py).
The timeouts cover what a worker does with an upload (validate, store, and score when inline).
"""

import gc
import multiprocessing
import os
import re
import sys

from gunicorn.glogging import Logger


def _int(name: str, default: int) -> int:
    value = os.environ.get(name, "").strip()
    return int(value) if value else default


bind = os.environ.get("GUNICORN_BIND", "127.0.0.1:8000").split(",")

# One worker process per CPU (at least 2, at most 8): Python runs one thread of a process at
# a time, so more processes than CPUs only add switching, and each process keeps its own
# caches of the board. Scoring holds a whole upload (up to 100 MiB) and its parsed arrays
# in memory, hence the cap; raise WEB_CONCURRENCY on a machine with memory to spare.
workers = _int("WEB_CONCURRENCY", min(max(multiprocessing.cpu_count(), 2), 8))
worker_class = "gthread"
# Threads per worker. Behind nginx (as deployed) a thread only ever waits on the database
# or the object store, and four keep a worker busy; more threads fight for the process's
# one interpreter lock, and the slowest reads wait longest (bench/deadline_bench.py on 2
# CPUs, new search / sort / page URLs at 50 clients: p99 164 ms with 2 x 4, 252 ms with
# 2 x 16, 579-713 ms with the former 5 x 16). A thread also waits on a slow client's
# headers or body, so a server exposed without nginx needs many more (GUNICORN_THREADS=16
# survives dozens of one-byte-per-second uploads: bench/slow_clients_bench.py).
threads = _int("GUNICORN_THREADS", 4)
# A worker accepts only the connections it has threads for; the rest wait in the
# kernel's queue for any worker with a free thread. (gthread's default, 1000, lets one
# worker take in many slow clients while its threads are all busy: measured, 40 slow
# uploads then starved requests that landed on that worker though 80 threads existed.)
worker_connections = _int("GUNICORN_WORKER_CONNECTIONS", threads)

# Each worker builds its own engine and storage clients after the fork: no shared
# connections, and a code reload is a plain restart.
preload_app = False

# Validating, storing (S3 too) and inline-scoring a 100 MiB file can take minutes.
timeout = _int("GUNICORN_TIMEOUT", 300)
graceful_timeout = _int("GUNICORN_GRACEFUL_TIMEOUT", 60)
# No idle keep-alive connections: with worker_connections = threads every accepted
# connection needs a thread, and an idle one would hold it (gthread keeps idle
# connections only beyond the thread count). nginx then opens a new loopback
# connection per request, which costs well under a millisecond.
keepalive = _int("GUNICORN_KEEPALIVE", 0)

# Recycle workers now and then so a slow leak never grows unbounded. Not often: a fresh
# worker starts with cold caches (board spec, board views), and at 1,000 requests a
# worker was recycled every few seconds under load, each time stalling the requests it
# had accepted for a second or more (bench/platform_bench.py: p99 of seconds at 50 clients).
max_requests = _int("GUNICORN_MAX_REQUESTS", 50_000)
max_requests_jitter = max_requests // 10

# nginx on the same host sets X-Forwarded-Proto; trust it only from there.
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1,::1")
proxy_allow_ips = forwarded_allow_ips

# The worker heartbeat file lives in RAM, not on a disk that may stall.
worker_tmp_dir = "/dev/shm" if os.path.isdir("/dev/shm") else None

# gunicorn >= 25 opens a control socket under $XDG_RUNTIME_DIR or $HOME/.gunicorn; the
# service user has no writable home (ProtectHome=yes), so it is off unless asked for.
if os.environ.get("GUNICORN_CONTROL_SOCKET"):
    control_socket = os.environ["GUNICORN_CONTROL_SOCKET"]
else:
    control_socket_disable = True

# A file holding the master's process id, so a stop can signal this instance alone
# (`kill $(cat FILE)`); none by default (systemd tracks the process itself).
pidfile = os.environ.get("GUNICORN_PIDFILE") or None

accesslog = os.environ.get("GUNICORN_ACCESSLOG", "-") or None
errorlog = "-"
loglevel = os.environ.get("GUNICORN_LOGLEVEL", "info")
# No query strings in the access log: keep tokens and ids out of log files.
access_log_format = '%(h)s "%(m)s %(U)s %(H)s" %(s)s %(B)s %(M)sms "%(a)s"'

_UNSAFE_IN_LOG = re.compile(r'[\x00-\x1f"\\\x7f-\x9f]')


class EscapingLogger(Logger):
    """gunicorn's logger, with control characters, quotes and backslashes of access-log fields as \\xHH.

    The path is logged percent-decoded, so ``/%0d%0a...`` would otherwise start a
    forged line in the access log (nginx escapes the same bytes the same way).
    """

    def atoms(self, resp, req, environ, request_time):  # noqa: ANN001, ANN201 (gunicorn's signature)
        """Return gunicorn's log atoms with every string escaped."""
        atoms = super().atoms(resp, req, environ, request_time)
        return {key: _escaped(value) if isinstance(value, str) else value for key, value in atoms.items()}


def _escaped(text: str) -> str:
    return _UNSAFE_IN_LOG.sub(lambda match: f"\\x{ord(match.group()):02x}", text)


logger_class = EscapingLogger


def post_worker_init(worker) -> None:  # noqa: ANN001 (gunicorn's signature)
    """Compile every Jinja template and start the embedded sweep and job threads before the first request.

    Compiling the board page's templates takes 100-200 ms; paid on the first request, it
    made every fresh worker's first board readers wait that long (bench/platform_bench.py).
    """
    app = sys.modules.get("app")
    flask_app = getattr(app, "app", None)
    if flask_app is None:  # served by another module than app:app
        return
    environment = flask_app.jinja_env
    for name in environment.list_templates(extensions=["html", "txt"]):
        environment.get_template(name)
    _tune_gc()
    # The embedded sweep and job threads start with a worker, not with its first request:
    # a restarted instance takes back a killed scorer's work even while nobody visits it.
    for name in ("tailboard_sweeper", "tailboard_jobs"):
        thread = flask_app.extensions.get(name)
        if thread is not None:
            thread.start()


def _tune_gc() -> None:
    """Keep the cycle collector from pausing a worker for tens of milliseconds at a time.

    A worker holds its boards' loaded views and printed rows (over 150,000 objects); with
    CPython's default thresholds a full collection ran every ~150 new board pages and held
    the interpreter for 50-80 ms, a reader's p99 (bench/deadline_bench.py). Objects made at
    boot (the app, its modules, compiled templates) are frozen out of every collection, and
    young ones are collected less often so that full collections become rare. Memory held by
    cyclic garbage meanwhile is bounded by the worker's recycling (max_requests).
    """
    thresholds = os.environ.get("GUNICORN_GC_THRESHOLDS", "5000,20,1000")
    if thresholds:
        gc.set_threshold(*(int(part) for part in thresholds.split(",")))
    gc.freeze()
