"""The ranking as every reader sees it, rendered once per board answer; each viewer's marks added per request.

A ranking page's table (or the API's page of rows) is the same for everyone who asks the
same query of the same board version, except which rows are the viewer's own. So the
body is rendered once, for no viewer at all (``Leaderboard.for_everyone``), with a marker
where a row's mark goes, and kept by the board answer's key (``Leaderboard.cache_key``:
version, phase as shown, the parsed query, whether rows are shown). A request then costs
the marks of the rows it shows: the shared parts joined with " mine-row" / "yours" (or
``true`` / ``false``) per row. Nothing personal is ever in a kept body: no name, no CSRF
token, no mark; the page around it (menu, flashes) is rendered per request.

Markers are a fresh random nonce per render, so no text of the board (a display name,
a method) can pose as one.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from functools import cached_property

from markupsafe import Markup

from leaderboard.web.board_cache.lru import BoundedLru

ENTRIES = 256
MAX_BYTES = 32 * 1024 * 1024
HTML_MARKS = {"row": " mine-row", "tag": ' <span class="tag tag-mine">yours</span>'}
JSON_MARKS = {"mine": "true"}
JSON_UNMARKED = "false"


@dataclass(frozen=True)
class SharedBody:
    """A body rendered for everyone: text parts with slots between them, each slot (kind, row index)."""

    parts: tuple[str, ...]  # len(slots) + 1 texts
    slots: tuple[tuple[str, int], ...]

    def fill(self, mine: Sequence[bool], marks: dict[str, str], unmarked: str = "") -> str:
        """Return the body with each slot filled: its kind's mark when its row is the viewer's, else unmarked."""
        out = [self.parts[0]]
        for (kind, row), text in zip(self.slots, self.parts[1:], strict=True):
            out.append(marks[kind] if row < len(mine) and mine[row] else unmarked)
            out.append(text)
        return "".join(out)

    @cached_property
    def encoded(self) -> tuple[bytes, ...]:
        """Return the parts as UTF-8, encoded once."""
        return tuple(part.encode("utf-8") for part in self.parts)

    def fill_bytes(self, mine: Sequence[bool], marks: dict[str, bytes], unmarked: bytes = b"") -> bytes:
        """Return fill's text as UTF-8, joined from the parts encoded once (a page is some 100 KB)."""
        encoded = self.encoded
        out = [encoded[0]]
        for (kind, row), text in zip(self.slots, encoded[1:], strict=True):
            out.append(marks[kind] if row < len(mine) and mine[row] else unmarked)
            out.append(text)
        return b"".join(out)


class Marker:
    """Hand out markers for one render and remember, per marker, which slot it is."""

    def __init__(self, *, quoted: bool = False) -> None:
        self.nonce = f"tbm{secrets.token_hex(12)}"
        self.slots: list[tuple[str, int]] = []
        self.opening, self.closing = (f'"{self.nonce}', 'x"') if quoted else (self.nonce, "x")

    def __call__(self, kind: str, row: int) -> Markup:
        """Return the marker of a slot: where row's mark of this kind goes."""
        self.slots.append((kind, int(row)))
        return Markup(f"{self.nonce}{len(self.slots) - 1}x")

    def split(self, text: str) -> SharedBody:
        """Return text cut at its markers."""
        first, *rest = text.split(self.opening)  # a plain split: a regex over a 250 KB page cost ten times more
        parts, slots = [first], []
        for piece in rest:
            number, found, after = piece.partition(self.closing)
            if not found or not number.isdigit():
                raise ValueError("a marker was cut by the template")
            slots.append(self.slots[int(number)])
            parts.append(after)
        return SharedBody(parts=tuple(parts), slots=tuple(slots))


_bodies: BoundedLru[SharedBody] = BoundedLru(entries=ENTRIES, max_bytes=MAX_BYTES)
_lock = threading.Lock()
_filling: dict[Hashable, threading.Lock] = {}


def shared_body(key: Hashable, render: Callable[[Marker], str], *, quoted: bool = False) -> SharedBody:
    """Return the shared body for key: kept, or rendered once (other threads asking meanwhile wait for it)."""
    found = _bodies.get(key)
    if found is not None:
        return found
    with _lock:
        flight = _filling.setdefault(key, threading.Lock())
    try:
        with flight:
            found = _bodies.get(key)
            if found is None:
                marker = Marker(quoted=quoted)
                text = render(marker)
                found = marker.split(text)
                _bodies.put(key, found, len(text))
    finally:
        with _lock:
            _filling.pop(key, None)
    return found


def kept() -> BoundedLru[SharedBody]:
    """Return the store of shared bodies (for tests and the bench)."""
    return _bodies
