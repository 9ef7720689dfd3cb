"""What of a results object may leave the server (docs/PROBING.md), rounded to 4 decimals: ``visible_results``.

Organizers see everything; anyone else sees what disclosure/policy.py allows
(its docstring states every rule), as disclosure/redaction.py applies it. docs/PROBING.md
explains each rule with the attack it stops.
"""

from __future__ import annotations

from typing import Any, cast

from leaderboard.accounts import phase_status
from leaderboard.disclosure.ladder import LadderDecision, ladder_view
from leaderboard.disclosure.policy import COUNT_KEYS, DECIMALS, HIDDEN_SPLIT_NOTE
from leaderboard.disclosure.redaction import SliceRules, answered_items
from leaderboard.models import Phase


def visible_results(results: dict[str, Any], *, phase: Phase, viewer_is_organizer: bool = False,
                    ladder: LadderDecision | None = None) -> dict[str, Any]:
    """Return the part of results the viewer may see, every float rounded to 4 decimals.

    The built-in baselines follow the same rules as any upload (an "all yes" file shows
    what anyone's all-yes upload would). ``ladder`` is the submission's ladder decision
    (probing.submission_decision) when the ladder applies.
    """
    if viewer_is_organizer:
        return cast(dict[str, Any], round_floats({k: v for k, v in results.items() if k != "draw"}))
    rules = SliceRules(phase, results)
    if private_hidden(results, phase=phase):
        public = (results.get("splits") or {}).get("public") or {}
        shown = rules.redact(public, reference=results, path="splits.public.", hide_membership=True)
        shown["file"] = file_summary(results)
        rules.notes.append(HIDDEN_SPLIT_NOTE)
    else:
        shown = rules.redact(results, reference=results)
        if "splits" in results:
            shown["splits"] = {name: rules.redact(part, reference=part, path=f"splits.{name}.")
                               for name, part in results["splits"].items()}
            if rules.settings.ladder and "public" in shown["splits"]:
                shown["splits"]["public"] = _without_counts(shown["splits"]["public"])
        elif rules.settings.ladder:  # every item is public: no exact public counts under the ladder (docs/PROBING.md)
            shown = _without_counts(shown)
    if ladder is not None:
        shown = ladder_view(shown, ladder, metric=phase.primary_metric)
    shown["warnings"] = [*results.get("warnings", []), *dict.fromkeys(rules.notes)]
    return cast(dict[str, Any], round_floats(shown))


def file_summary(results: dict[str, Any]) -> dict[str, Any]:
    """Return what the whole file answered: the participant's own figure, safe to show."""
    overall = results.get("overall") or {}
    n = int(results.get("n_items") or overall.get("n") or 0)
    answered = answered_items(overall)
    return {"n_items": n, "answered": answered, "answer_rate": answered / n if n else None}


def _without_counts(result: dict[str, Any]) -> dict[str, Any]:
    """Return a result object with no answered/correct count at any depth."""
    if isinstance(result, dict):
        return {key: _without_counts(value) for key, value in result.items() if key not in COUNT_KEYS}
    return result


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
