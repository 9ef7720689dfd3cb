"""How long a PostgreSQL NOTIFY takes to reach a listening thread after the writer's commit returns.

On PostgreSQL a serving process learns of a board change made by another process
through LISTEN/NOTIFY (leaderboard/web/board_cache/watch.py): until the notification arrives, an
anonymous reader in that process may still be answered from the state it remembered.
This measures that window: one connection LISTENs in a thread (as board_watch does),
another commits ``--count`` notifications, and the delay from each commit's return to
its arrival is printed as p50 / p99 / max.

Usage: python bench/notify_lag_bench.py [--url postgresql://postgres@127.0.0.1:5432/test] [--count 500]
"""

from __future__ import annotations

import argparse
import threading
import time

import psycopg

CHANNEL = "tailboard_lag_bench"


def main() -> None:
    """Send notifications, time their arrival, print the percentiles."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--count", type=int, default=500)
    args = parser.parse_args()
    arrived: list[float] = []
    with psycopg.connect(args.url, autocommit=True) as listener, psycopg.connect(args.url) as sender:
        listener.execute(f"LISTEN {CHANNEL}")
        thread = threading.Thread(target=lambda: arrived.extend(
            time.perf_counter() for _ in listener.notifies(stop_after=args.count, timeout=60)))
        thread.start()
        sent = []
        for n in range(args.count):
            sender.execute("SELECT pg_notify(%s, %s)", (CHANNEL, str(n)))
            sender.commit()
            sent.append(time.perf_counter())
            time.sleep(0.005)
        thread.join(60)
    lags = sorted(1000 * (got - put) for got, put in zip(arrived, sent, strict=False))
    print(f"{len(lags)} notifications: p50 {lags[len(lags) // 2]:.3f} ms, "
          f"p99 {lags[int(0.99 * (len(lags) - 1))]:.3f} ms, max {lags[-1]:.3f} ms after the commit returned")


if __name__ == "__main__":
    main()
