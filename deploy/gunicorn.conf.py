"""Gunicorn settings: ``gunicorn -c deploy/gunicorn.conf.py app:app`` from the project root.

Every value can be changed from the environment (see deploy/env.example). nginx in
front buffers each upload completely before it reaches a worker, so a slow client
never holds a worker for the length of a 100 MiB upload; the timeouts below cover
what a worker does with it afterwards (validate, store, and score when inline).
"""

import multiprocessing
import os


def _int(name: str, default: int) -> int:
    value = os.environ.get(name, "").strip()
    return int(value) if value else default


bind = os.environ.get("GUNICORN_BIND", "127.0.0.1:8000").split(",")

# Scoring holds a whole upload (up to 100 MiB) and its parsed arrays in memory, so the
# CPU-based default is capped; raise WEB_CONCURRENCY on a machine with memory to spare.
workers = _int("WEB_CONCURRENCY", min(multiprocessing.cpu_count() * 2 + 1, 8))
worker_class = "gthread"
threads = _int("GUNICORN_THREADS", 2)

# Each worker builds its own engine and storage clients after the fork: no shared
# connections, and a code reload is a plain restart.
preload_app = False

# Validating, storing (S3 too) and inline-scoring a 100 MiB file can take minutes.
timeout = _int("GUNICORN_TIMEOUT", 300)
graceful_timeout = _int("GUNICORN_GRACEFUL_TIMEOUT", 60)
keepalive = 5

# Recycle workers now and then so a slow leak never grows unbounded.
max_requests = _int("GUNICORN_MAX_REQUESTS", 1000)
max_requests_jitter = max_requests // 10

# nginx on the same host sets X-Forwarded-Proto; trust it only from there.
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1,::1")
proxy_allow_ips = forwarded_allow_ips

# The worker heartbeat file lives in RAM, not on a disk that may stall.
worker_tmp_dir = "/dev/shm" if os.path.isdir("/dev/shm") else None

accesslog = os.environ.get("GUNICORN_ACCESSLOG", "-")
errorlog = "-"
loglevel = os.environ.get("GUNICORN_LOGLEVEL", "info")
# No query strings in the access log: keep tokens and ids out of log files.
access_log_format = '%(h)s "%(m)s %(U)s %(H)s" %(s)s %(B)s %(M)sms "%(a)s"'
