"""Committed writes made visible at once: a callback per engine, and a stamp shared by every process on a SQLite file.

``on_committed_write(engine, callback)`` calls back once a connection that committed
goes back to the pool, so after the commit, never before it (SQLAlchemy's ``commit``
event fires before the database commits: a reader told then could read the old rows
and remember them as new). An ORM session gives its connection back at every commit.

``SharedStamp`` is 8 bytes in a file beside a SQLite database (``<database>-changes``,
like its ``-wal`` and ``-shm``), mapped into every process that opens the database
through ``db.make_engine``. Each committed write stores fresh random bytes there, so a
reader in any process on the host sees that something changed by comparing 8 bytes
of memory, with no system call and no query. SQLite databases are local files, so
every writer of one runs on this host; a write made outside Tailboard's engines (the
sqlite3 shell) does not touch the stamp, which is why readers also bound how long
they trust it (web/board_cache/watch.py's MAX_AGE_SECONDS).
"""

from __future__ import annotations

import logging
import mmap
import os
import random
from collections.abc import Callable
from typing import Any

from sqlalchemy import Engine, event

log = logging.getLogger(__name__)
SUFFIX = "-changes"
_WROTE = "tailboard_committed_a_write"
_stamps: dict[str, SharedStamp] = {}


def on_committed_write(engine: Engine, callback: Callable[[], None]) -> None:
    """Call callback after each transaction of engine that committed, once its connection is back in the pool."""

    def committed(connection: Any) -> None:
        connection.info[_WROTE] = True

    def checked_in(_dbapi_connection: Any, record: Any) -> None:
        if record.info.pop(_WROTE, False):
            callback()

    event.listen(engine, "commit", committed)
    event.listen(engine, "checkin", checked_in)


class SharedStamp:
    """8 bytes of a file mapped into memory: a write stores fresh random bytes, a read costs no system call."""

    def __init__(self, path: str, *, like: str) -> None:
        descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)  # less the umask, as SQLite makes a new database
        try:
            if os.fstat(descriptor).st_size < 8:
                _same_access(descriptor, like)
                os.ftruncate(descriptor, 8)
            self._map = mmap.mmap(descriptor, 8)
        finally:
            os.close(descriptor)

    def read(self) -> bytes:
        """Return the current stamp."""
        return self._map[:8]

    def bump(self) -> None:
        """Store a new stamp (random: two writers never need to agree on a counter)."""
        self._map[:8] = random.getrandbits(64).to_bytes(8, "little")


def _same_access(descriptor: int, database: str) -> None:
    """Give a new stamp file the database file's mode (and owner, when run as root), as SQLite does its -wal."""
    try:
        found = os.stat(database)
    except FileNotFoundError:
        return
    os.fchmod(descriptor, found.st_mode & 0o666)
    if os.geteuid() == 0:
        os.fchown(descriptor, found.st_uid, found.st_gid)


def shared_stamp(database: str) -> SharedStamp | None:
    """Return this process's stamp of a SQLite database file, or None when it cannot be opened (logged)."""
    path = os.path.abspath(database) + SUFFIX
    if path not in _stamps:
        try:
            _stamps[path] = SharedStamp(path, like=database)
        except OSError:
            log.warning("cannot open %s: this process's writes reach other processes' board reads only "
                        "after the board watch's MAX_AGE_SECONDS", path, exc_info=True)
            return None
    return _stamps[path]
