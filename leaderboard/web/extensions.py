"""Flask extensions, created unbound here and initialised by the app factory."""

from __future__ import annotations

import threading
from typing import Any

from flask_limiter import Limiter
from flask_limiter.util import get_remote_address
from flask_login import LoginManager
from flask_wtf.csrf import CSRFProtect
from limits.storage import MemoryStorage


class LockedMemoryStorage(MemoryStorage):
    """limits' in-process counters (``memory://``, the embedded default) with their expiry timer started under a lock.

    limits' own MemoryStorage checks and restarts its expiry timer without a lock, so two
    threads counting at once could both replace it and start the same Timer twice
    ("threads can only be started once": a 500 for the request that lost the race, seen
    under the deadline bench's 50 readers). Declaring the ``memory`` scheme here makes
    every ``memory://`` limiter storage this class.
    """

    STORAGE_SCHEME = ["memory"]

    def __init__(self, uri: str | None = None, wrap_exceptions: bool = False, **options: Any) -> None:
        self._timer_lock = threading.Lock()
        super().__init__(uri, wrap_exceptions=wrap_exceptions, **options)

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._timer_lock = threading.Lock()
        super().__setstate__(state)

    def _MemoryStorage__schedule_expiry(self) -> None:  # overrides the base class's private __schedule_expiry
        with self._timer_lock:
            if not self.timer.is_alive():
                expire = getattr(self, "_MemoryStorage__expire_events")  # noqa: B009 (the base class's own)
                self.timer = threading.Timer(0.01, expire)
                self.timer.daemon = True
                self.timer.start()


login_manager = LoginManager()
csrf = CSRFProtect()
limiter = Limiter(key_func=get_remote_address, default_limits=[])
