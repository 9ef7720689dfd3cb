"""The limiter's in-process storage holds under threads (leaderboard/web/extensions.LockedMemoryStorage)."""

from __future__ import annotations

import threading

from limits import parse
from limits.storage import storage_from_string
from limits.strategies import FixedWindowRateLimiter

from leaderboard.web.extensions import LockedMemoryStorage


def test_memory_uris_get_the_locked_storage() -> None:
    assert isinstance(storage_from_string("memory://"), LockedMemoryStorage)


def test_many_threads_counting_at_once_never_fail() -> None:
    limiter = FixedWindowRateLimiter(storage_from_string("memory://"))
    limit, failures, start = parse("1000000 per second"), [], threading.Barrier(16)

    def count(n: int) -> None:
        start.wait()
        try:
            for i in range(3000):
                limiter.hit(limit, f"bucket-{n}-{i % 7}")  # short windows: the expiry timer restarts often
        except Exception as error:  # the race this storage closes raised RuntimeError here
            failures.append(repr(error))

    threads = [threading.Thread(target=count, args=(n,)) for n in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
