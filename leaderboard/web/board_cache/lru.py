"""A thread-safe least-recently-used map bounded by entries and by bytes: every board cache's store.

Each cache in front of the board (the micro-cache's responses, the rendered answers, the
shared ranking bodies) keeps at most ``entries`` values and at most ``max_bytes`` of them
in all (each value's size is what the caller says it weighs); the least recently used
go first. A value heavier than the whole budget is not kept at all.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class BoundedLru(Generic[V]):
    """A least-recently-used map of at most ``entries`` values weighing at most ``max_bytes`` together."""

    def __init__(self, *, entries: int, max_bytes: int) -> None:
        self.entries, self.max_bytes = entries, max_bytes
        self._data: OrderedDict[Hashable, tuple[V, int]] = OrderedDict()
        self._lock = threading.Lock()
        self.bytes = 0

    def __len__(self) -> int:
        """Return how many values are kept."""
        return len(self._data)

    def get(self, key: Hashable) -> V | None:
        """Return the value kept for key (marking it recently used), or None."""
        with self._lock:
            found = self._data.get(key)
            if found is None:
                return None
            self._data.move_to_end(key)
            return found[0]

    def put(self, key: Hashable, value: V, weight: int) -> None:
        """Keep value for key, then drop the least recently used until both bounds hold."""
        if weight > self.max_bytes or self.entries < 1:
            return
        with self._lock:
            old = self._data.pop(key, None)
            if old is not None:
                self.bytes -= old[1]
            self._data[key] = (value, weight)
            self.bytes += weight
            while len(self._data) > self.entries or self.bytes > self.max_bytes:
                _, (_, dropped) = self._data.popitem(last=False)
                self.bytes -= dropped

    def clear(self) -> None:
        """Forget every value."""
        with self._lock:
            self._data.clear()
            self.bytes = 0
