"""What of a results object may leave the server, rounded to 4 decimals.

While a phase with a private split is not closed, only ``splits.public`` is shown:
the top-level object mixes private items into every number, so it is never shown
then. After the phase closes, everything is. Results hold no per-item data, but a
slice of one item (a category with a single item, a single head/tail pair) would
give that item's correctness away, so participants never see slices smaller than
``MIN_SLICE_ITEMS``; organizers see everything.
"""

from __future__ import annotations

from typing import Any

from leaderboard.models import Phase
from leaderboard.services.phases import phase_status

DECIMALS = 4
MIN_SLICE_ITEMS = 2
SMALL_SLICE_NOTE = (
    f"Breakdown rows with fewer than {MIN_SLICE_ITEMS} items are not shown, "
    "so that no single item's correctness can be read off."
)


def visible_results(results: dict[str, Any], *, phase: Phase, viewer_is_organizer: bool = False,
                    overall_only: bool = False) -> dict[str, Any]:
    """Return the part of results the viewer may see, every float rounded to 4 decimals.

    ``overall_only`` keeps just the overall slices: for the built-in baselines, whose
    per-category scores are functions of the label distribution alone (an "all yes"
    score of 0 on a category says every label in it is false).
    """
    if viewer_is_organizer:
        return round_floats(results)
    if overall_only:
        results = _overall_only(results)
    if private_hidden(results, phase=phase):
        shown = dict((results.get("splits") or {}).get("public") or {})
        if "warnings" in results:
            shown["warnings"] = results["warnings"]
    else:
        shown = dict(results)
        if "splits" in shown:
            shown["splits"] = {name: _without_small_slices(part, note=False) for name, part in shown["splits"].items()}
    return round_floats(_without_small_slices(shown))


def _overall_only(results: dict[str, Any]) -> dict[str, Any]:
    """Return results reduced to n_items, overall and warnings, in every split too."""
    kept = {key: results[key] for key in ("n_items", "overall", "warnings") if key in results}
    if "splits" in results:
        kept["splits"] = {name: _overall_only(part) for name, part in results["splits"].items()}
    return kept


def _without_small_slices(result: dict[str, Any], *, note: bool = True) -> dict[str, Any]:
    """Return result without the breakdown, popularity and pair slices too small to show."""
    shown = dict(result)
    dropped = False
    if "breakdowns" in shown:
        breakdowns = {}
        for field, values in shown["breakdowns"].items():
            kept = {value: part for value, part in values.items() if _big_enough(part)}
            dropped |= len(kept) < len(values)
            breakdowns[field] = kept
        shown["breakdowns"] = breakdowns
    if "popularity" in shown:
        popularity = dict(shown["popularity"])
        for bucket in ("head", "torso", "tail"):
            if bucket in popularity and not _big_enough(popularity[bucket]):
                del popularity[bucket]
                dropped = True
        if "head" not in popularity or "tail" not in popularity:
            popularity["gap"], popularity["relative_drop"] = {}, {}
        shown["popularity"] = popularity
    pairs = shown.get("pairs")
    if pairs and 0 < (pairs.get("n_pairs") or 0) < MIN_SLICE_ITEMS:
        shown["pairs"] = {**pairs, **{key: None for key in ("both_correct", "head_only", "tail_only", "neither")}}
        dropped = True
    if dropped and note:
        shown["warnings"] = [*shown.get("warnings", []), SMALL_SLICE_NOTE]
    return shown


def _big_enough(part: dict[str, Any]) -> bool:
    return int(part.get("n") or 0) >= MIN_SLICE_ITEMS


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
