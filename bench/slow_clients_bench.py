"""Does a directly exposed gunicorn (deploy/gunicorn.conf.py) keep answering while slow clients hold connections?

Starts gunicorn with the deploy config on loopback (SQLite in a temporary data dir),
opens ``--slow`` connections that each trickle a request one byte per second, then
asks for ``/`` once a second and reports how many of those normal requests were
answered within ``--patience`` seconds, and how fast.

Slow kinds: ``body`` sends the headers of a 100 kB form POST to /login at once, then
the body one byte per second (the app reads it for the CSRF check); ``headers``
sends the request line and headers one byte per second (slowloris).

Usage: python bench/slow_clients_bench.py [--slow 12] [--kind body|headers] [--probes 15]
       [--patience 5] [--workers N] [--threads N] [--gunicorn-arg ARG ...]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
BODY_HEAD = (b"POST /login HTTP/1.1\r\nHost: bench\r\nContent-Type: application/x-www-form-urlencoded\r\n"
             b"Content-Length: 100000\r\n\r\n")
SLOWLORIS = b"GET / HTTP/1.1\r\nHost: bench\r\nUser-Agent: " + b"a" * 200 + b"\r\n\r\n"


def free_port() -> int:
    """Return a loopback port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_gunicorn(folder: Path, args: argparse.Namespace) -> tuple[subprocess.Popen[bytes], int, Path]:
    """Migrate a fresh SQLite database and start gunicorn with the deploy config; return it, its port and log."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TAILBOARD_", "GUNICORN_"))}
    env.update({"TAILBOARD_DATA_DIR": str(folder / "data"), "SECRET_KEY": "bench",
                "GUNICORN_BIND": f"127.0.0.1:{port}",
                "DATABASE_URL": f"sqlite:///{folder / 'data' / 'tailboard.sqlite3'}",
                "GUNICORN_ACCESSLOG": "/dev/null"})
    if args.workers:
        env["WEB_CONCURRENCY"] = str(args.workers)
    if args.threads:
        env["GUNICORN_THREADS"] = str(args.threads)
    (folder / "data").mkdir()
    subprocess.run([str(BIN / "alembic"), "upgrade", "head"], cwd=ROOT, env=env, check=True, capture_output=True)
    log = folder / "gunicorn.log"
    with log.open("wb") as out:
        process = subprocess.Popen([str(BIN / "gunicorn"), "-c", "deploy/gunicorn.conf.py", *args.gunicorn_arg,
                                    "app:app"], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return process, port, log
        except OSError:
            time.sleep(0.2)
    process.kill()
    raise SystemExit(f"gunicorn did not listen:\n{log.read_text()[-2000:]}")


def slow_client(port: int, kind: str, stop: threading.Event, sent: list[int]) -> None:
    """Hold one connection, sending one byte a second until stopped or cut off."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            if kind == "body":
                sock.sendall(BODY_HEAD)
                payload = b"x" * 100_000
            else:
                payload = SLOWLORIS
            for byte in payload:
                if stop.wait(1.0):
                    return
                sock.sendall(bytes([byte]))
                sent[0] += 1
    except OSError:
        return  # the server closed it: a freed slot, which is the point


def probe(port: int, patience: float) -> float | None:
    """Return the seconds a GET / took, or None when it got no answer within patience."""
    started = time.monotonic()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=patience)
    try:
        connection.request("GET", "/")
        response = connection.getresponse()
        response.read()
        return time.monotonic() - started if response.status == 200 else None
    except OSError:
        return None
    finally:
        connection.close()


def main() -> int:
    """Run the scenario and print what the normal requests saw."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slow", type=int, default=12)
    parser.add_argument("--kind", choices=("body", "headers"), default="body")
    parser.add_argument("--probes", type=int, default=15)
    parser.add_argument("--patience", type=float, default=5.0)
    parser.add_argument("--workers", type=int)
    parser.add_argument("--threads", type=int)
    parser.add_argument("--gunicorn-arg", action="append", default=[])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="slow-clients-") as tmp:
        process, port, log = start_gunicorn(Path(tmp), args)
        printed = subprocess.run([str(BIN / "gunicorn"), "-c", "deploy/gunicorn.conf.py", "--print-config", "app:app"],
                                 cwd=ROOT, capture_output=True, text=True, check=False, env={
                                     **os.environ, **({"WEB_CONCURRENCY": str(args.workers)} if args.workers else {}),
                                     **({"GUNICORN_THREADS": str(args.threads)} if args.threads else {})}).stdout
        config = dict(re.findall(r"^(\w+)\s+= (.*)$", printed, re.MULTILINE))
        stop, sent = threading.Event(), [0]
        clients = [threading.Thread(target=slow_client, args=(port, args.kind, stop, sent), daemon=True)
                   for _ in range(args.slow)]
        try:
            baseline = probe(port, args.patience)
            for client in clients:
                client.start()
            time.sleep(3)  # let every slow client get its connection into a worker
            times = []
            for _ in range(args.probes):
                times.append(probe(port, args.patience))
                time.sleep(1)
            still_open = sum(client.is_alive() for client in clients)
        finally:
            stop.set()
            process.terminate()
            process.wait(timeout=60)
        answered = [t for t in times if t is not None]
        result = {
            "worker_class": config.get("worker_class", "?").strip(), "workers": config.get("workers", "?").strip(),
            "threads": config.get("threads", "?").strip(), "slow_clients": args.slow, "kind": args.kind,
            "baseline_seconds": None if baseline is None else round(baseline, 3),
            "answered": len(answered), "probes": len(times),
            "slowest_answer_seconds": round(max(answered), 3) if answered else None,
            "slow_clients_still_connected_at_end": still_open, "slow_bytes_sent": sent[0],
        }
        print(f"{result['answered']}/{result['probes']} normal GET / answered within {args.patience:g} s while "
              f"{args.slow} slow '{args.kind}' clients trickled 1 byte/s "
              f"({result['worker_class']}, {result['workers']} workers x {result['threads']} threads; "
              f"{still_open} slow clients still connected at the end)")
        print(json.dumps(result))
        return 0 if len(answered) == len(times) else 1


if __name__ == "__main__":
    sys.exit(main())
