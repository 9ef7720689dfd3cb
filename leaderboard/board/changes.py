"""One door for "what a phase's leaderboard shows has changed": every writer calls it, the ranking refreshes.

Writers call ``board_changed`` after committing a change that moves the board: a
submission scored or re-scored, moderated or restored, a final selection changed, a
phase opened, closed or reopened, its views or feedback settings edited. When it
returns, every reader sees the board with that change (board/versions.py: the change
is announced, then the board is refreshed, or found already refreshed by a concurrent
writer's refresh that read it).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable

from leaderboard.board.versions import announce, refresh
from leaderboard.notify import events as notices
from leaderboard.platform import ServiceContext

log = logging.getLogger(__name__)
FRESH_SECONDS = 60.0  # how long a thread that changed a board reads only the versions it asks for
_here = threading.local()


def changed_lately() -> bool:
    """Return whether this thread changed a board in the last FRESH_SECONDS (its reads must show the change)."""
    changed_at = getattr(_here, "changed_at", None)
    return changed_at is not None and time.monotonic() - changed_at < FRESH_SECONDS


def board_changed(ctx: ServiceContext, *, phase_id: int, submission_ids: Iterable[int] | None = None) -> None:
    """Bring the leaderboard of phase_id up to date with what was just committed.

    ``submission_ids``, when the change is only that these submissions were scored or
    re-scored, lets the refresh rebuild just their owners' entries; without it the whole
    board is rebuilt (settings, moderation, selection, open/close: any change).
    """
    wanted = announce_change(ctx, phase_id=phase_id, submission_ids=submission_ids)
    bring_up_to_date(ctx, phase_id=phase_id, covering=wanted)
    _here.changed_at = time.monotonic()  # this thread's reads now wait for new versions (changed_lately)


def announce_change(ctx: ServiceContext, *, phase_id: int, submission_ids: Iterable[int] | None = None) -> int:
    """Record a committed change to the phase's board (the refresh may come later); return the count it needs built.

    A writer that cannot wait for the refresh (the embedded scorer, leaderboard/workers/board_refresher.py)
    announces here and has ``bring_up_to_date`` run later; until then readers show the rows as they
    are, or refresh them when no refresh is under way (board/versions.py).
    """
    return announce(ctx, phase_id=phase_id, submission_ids=submission_ids)


def bring_up_to_date(ctx: ServiceContext, *, phase_id: int, covering: int | None = None) -> None:
    """Refresh the phase's board unless it already covers ``covering``, then queue its board.changed webhooks."""
    try:
        refresh(ctx, phase_id=phase_id, covering=covering)
    except Exception:  # the change is announced: the next reader refreshes before it reads (boards.fresh_version)
        log.exception("refreshing the board of phase %s failed; readers will refresh it", phase_id)
    notices.board_changed(ctx, phase_id=phase_id)  # board.changed webhooks (docs/NOTIFY.md)
