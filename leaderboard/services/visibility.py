"""What of a results object may leave the server, rounded to 4 decimals.

While a phase with a private split is not closed, only ``splits.public`` is shown:
the top-level object mixes private items into every number, so it is never shown
then. After the phase closes, everything is. Results hold no per-item data.
"""

from __future__ import annotations

from typing import Any

from leaderboard.models import Phase
from leaderboard.services.phases import phase_status

DECIMALS = 4


def visible_results(results: dict[str, Any], *, phase: Phase, viewer_is_organizer: bool = False) -> dict[str, Any]:
    """Return the part of results the viewer may see, every float rounded to 4 decimals."""
    if viewer_is_organizer or not private_hidden(results, phase=phase):
        return round_floats(results)
    shown = dict((results.get("splits") or {}).get("public") or {})
    if "warnings" in results:
        shown["warnings"] = results["warnings"]
    return round_floats(shown)


def private_hidden(results: dict[str, Any], *, phase: Phase) -> bool:
    """Return whether results carry private items that must stay hidden now (phase not closed)."""
    has_private = phase.has_private_split or "private" in (results.get("splits") or {})
    return has_private and phase_status(phase) != "closed"


def round_floats(value: Any, decimals: int = DECIMALS) -> Any:
    """Return value with every float, however deeply nested, rounded to decimals."""
    if isinstance(value, float):
        return round(value, decimals)
    if isinstance(value, dict):
        return {key: round_floats(item, decimals) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [round_floats(item, decimals) for item in value]
    return value
