"""The redaction of one result object for participants: each slice, table and curve as the rules allow.

``SliceRules`` holds one phase's rules (disclosure/policy.py) and the notes to show
with the result; disclosure/visibility.py calls it. Every switch is read from the policy
module when a result is redacted (``policy.SAMPLE_PRECISION``), never copied at import.
"""

from __future__ import annotations

import math
from typing import Any

from leaderboard.disclosure import policy as policy
from leaderboard.disclosure.precision import Dither, differences, draw_of_results, grid_for, thinned
from leaderboard.disclosure.probing import probing_settings
from leaderboard.disclosure.ranked_figures import ranked_figures
from leaderboard.models import Phase


class SliceRules:
    """The slice rules of one phase, collecting the notes to show with the result."""

    def __init__(self, phase: Phase, results: dict[str, Any]) -> None:
        self.settings = probing_settings(phase)
        self.ranked = ranked_figures(phase)
        self.notes: list[str] = []
        self.hide = False
        self.path = ""
        draw = draw_of_results(results) if policy.FRESH_DRAWS else None
        self.dither = Dither(phase.labels_sha256, draw) if policy.SAMPLE_PRECISION else None

    def redact(self, result: dict[str, Any], *, reference: dict[str, Any], path: str = "",
               hide_membership: bool = False) -> dict[str, Any]:
        """Return result without what its reference's answered counts do not allow."""
        self.hide, self.path = hide_membership, path
        shown: dict[str, Any] = {key: result[key] for key in ("n_items",) if key in result}
        reach = answered_items(reference.get("overall") or {})
        if "overall" in result:
            shown["overall"] = self.overall(result["overall"], reach, items=int(reference.get("n_items") or 0))
        if reach >= policy.CURVE_MIN_ANSWERED and not hide_membership:
            if "aurc" in result:
                shown["aurc"] = self._calibration(result["aurc"], reach, exact=result, path="aurc")
            if "risk_coverage" in result:
                shown["risk_coverage"] = self.thinned(result["risk_coverage"], int(result.get("n_items") or 0))
            if isinstance(result.get("reliability"), list) and self.dither is not None:
                shown["reliability"] = self.dither.bins(result["reliability"], path=self.path + "reliability",
                                                        min_items=self._curve_gap(int(result.get("n_items") or 0)))
        if "breakdowns" in result:
            shown["breakdowns"] = self.breakdowns(result["breakdowns"], reference.get("breakdowns") or {})
        if "popularity" in result:
            shown["popularity"] = self.popularity(result["popularity"], reference.get("popularity") or {})
        if "pairs" in result:
            shown["pairs"] = self.pairs(result["pairs"], reference)
        if "popularity_curve" in result:
            curve = self.curve(result["popularity_curve"], reference.get("popularity_curve") or [], reach)
            if curve is not None:
                shown["popularity_curve"] = curve
        return shown

    def overall(self, part: dict[str, Any], answered: int, *, items: int) -> dict[str, Any]:
        """Return the overall slice as shown: ranked figures and own counts exact, the rest on the grid.

        A file answering fewer than min_slice_items items (every item, in a phase of fewer
        items: ``items``, counted like ``answered``) shows its own counts only.
        """
        if not policy.OVERALL_BOUNDED:
            return self.slice(part, answered, path="overall", keep_small=True) or {}
        own = set() if self.hide else set(policy.OWN_KEYS)
        if answered < min(self.settings.min_slice_items, max(items, 1)):
            self.notes.append(policy.FEW_ANSWERED_NOTE.format(k=self.settings.min_slice_items))
            return {key: part[key] for key in ("n", "answered") if key in part and key in own}
        return self.slice(part, answered, path="overall", keep_small=True, own=frozenset(own)) or {}

    def slice(self, part: dict[str, Any], answered: int, *, path: str, keep_small: bool = False,
              own: frozenset[str] = frozenset()) -> dict[str, Any] | None:
        """Return one slice as shown, or None when it has too few answered items.

        Every slice is shown on its grid (no counts) but for the figures the phase ranks
        by and, in overall, the file's own counts (``own``). With policy.OVERALL_BOUNDED off,
        overall keeps every rate exact, its calibration figures on the grid.
        """
        small = answered < self.settings.min_slice_items
        if small and not keep_small:
            self._note()
            return None
        exact = self.ranked.get(path, frozenset())
        hidden = set(policy.CURVE_KEYS - exact) if answered < policy.CURVE_MIN_ANSWERED else set()
        coarse = self.dither is not None and (not keep_small or policy.OVERALL_BOUNDED)
        if small or coarse:
            hidden |= policy.COUNT_KEYS - own
        if self.hide:
            hidden |= policy.MEMBERSHIP_KEYS - exact
        if not keep_small and self.dither is not None:
            hidden |= policy.SENSITIVE_KEYS - exact
        shown = {key: value for key, value in part.items() if key in policy.SLICE_KEYS and key not in hidden}
        if "risk_coverage" in shown:
            shown["risk_coverage"] = self.thinned(shown["risk_coverage"], int(part.get("n") or 0))
        if isinstance(shown.get("ci"), dict):
            shown["ci"] = {metric: ci for metric, ci in shown["ci"].items() if metric not in hidden}
        if coarse and self.dither is not None:
            return self.dither.slice(shown, exact=part, path=self.path + path, grid=grid_for(answered),
                                     rates=policy.RATE_KEYS, calibration=policy.CURVE_KEYS,
                                     keep=(exact | own) & shown.keys())
        for key in ("ece", "aurc"):
            if key in shown and key not in exact:
                shown[key] = self._calibration(shown[key], answered, exact=part, path=f"{path}.{key}")
        return shown

    def breakdowns(self, tables: dict[str, Any], reference: dict[str, Any]) -> dict[str, Any]:
        """Return every breakdown table with its too-small rows left out."""
        out: dict[str, Any] = {}
        for field, values in tables.items():
            ref = reference.get(field) or {}
            kept = {value: self.slice(part, answered_items(ref.get(value) or {}), path=f"breakdowns.{field}.{value}")
                    for value, part in values.items()}
            out[field] = {value: part for value, part in kept.items() if part is not None}
        return out

    def popularity(self, popularity: dict[str, Any], reference: dict[str, Any]) -> dict[str, Any]:
        """Return the head/torso/tail buckets big enough to show, with gap and drop when head and tail are."""
        out: dict[str, Any] = {}
        for bucket in ("head", "torso", "tail"):
            if bucket in popularity:
                part = self.slice(popularity[bucket], answered_items(reference.get(bucket) or {}),
                                  path=f"popularity.{bucket}")
                if part is not None:
                    out[bucket] = part
        both = "head" in out and "tail" in out
        if self.dither is not None:  # from the figures shown, so the differences add nothing to them
            out.update(differences(out, policy.RATE_KEYS) if both else {"gap": {}, "relative_drop": {}})
            for key in ("gap", "relative_drop") if both else ():
                for metric in self.ranked.get(f"popularity.{key}", frozenset()):  # a ranked difference is exact
                    exact = (popularity.get(key) or {}).get(metric)
                    if metric in out[key] and isinstance(exact, (int, float)):
                        out[key][metric] = exact
                        out.get("error", {}).get(key, {}).pop(metric, None)
            return out
        for key in ("gap", "relative_drop"):
            values = popularity.get(key) or {}
            out[key] = {m: v for m, v in values.items() if both and m in out["head"] and m in out["tail"]}
        return out

    def pairs(self, pairs: dict[str, Any], reference: dict[str, Any]) -> dict[str, Any]:
        """Return the pair table; its shares only when enough of its items are answered (on the grid)."""
        shown = {key: pairs[key] for key in ("n_pairs", "incomplete_pairs", *policy.SHARES) if key in pairs}
        if (pairs.get("n_pairs") or 0) and _pair_items_answered(reference) < self.settings.min_slice_items:
            shown.update({share: None for share in policy.SHARES})
            self._note()
        elif self.dither is not None and pairs.get("n_pairs"):
            keep = self.ranked.get("pairs", frozenset())
            shown = self.dither.shares(shown, exact=pairs, path=self.path + "pairs",
                                       grid=grid_for(int(pairs["n_pairs"])), keys=policy.SHARES, keep=keep)
        return shown

    def curve(self, bins: list[dict[str, Any]], reference: list[dict[str, Any]],
              reach: int) -> list[dict[str, Any]] | None:
        """Return the popularity-curve bins big enough to show, or None when the curve is not shown."""
        if reach < policy.CURVE_MIN_ANSWERED:
            self._note()
            return None
        out = []
        for index, part in enumerate(bins):
            ref = _bin_of(part, reference) if self.hide else part
            shown = self.slice(part, answered_items(ref or {}), path=f"popularity_curve[{index}]")
            if shown is not None and ref is not None:
                out.append({"lo": ref.get("lo"), "hi": ref.get("hi"), **shown})
        return out

    def thinned(self, points: Any, n: int) -> list[Any]:
        """Return the risk-coverage points far enough apart (precision.thinned), their risks on the grid."""
        if not isinstance(points, list) or not points or n <= 0:
            return []
        kept = thinned(points, n=n, gap=self._curve_gap(n))
        return kept if self.dither is None else self.dither.curve(kept, exact=points, path=self.path + "rc", n=n)

    def _curve_gap(self, n: int) -> int:
        """Return the fewest items between two shown calibration points (or in a reliability bin)."""
        return max(self.settings.min_slice_items, math.ceil(n / policy.CURVE_POINTS) if self.dither is not None else 0)

    def _calibration(self, value: Any, answered: int, *, exact: dict[str, Any], path: str) -> Any:
        """Return a calibration figure of the overall result: on its grid, or to 2 decimals without the rule."""
        if self.dither is None or not isinstance(value, float):
            return round(value, policy.CALIBRATION_DECIMALS) if isinstance(value, float) else value
        return self.dither.value(value, exact=exact, path=self.path + path, grid=grid_for(answered))

    def _note(self) -> None:
        self.notes.append(policy.SMALL_SLICE_NOTE.format(k=self.settings.min_slice_items))


def answered_items(part: dict[str, Any]) -> int:
    """Return a slice's answered items: its count, else answer_rate x n, else 0 (not shown)."""
    answered = part.get("answered")
    if isinstance(answered, int) and not isinstance(answered, bool):
        return answered
    rate, n = part.get("answer_rate"), part.get("n")
    if isinstance(rate, (int, float)) and isinstance(n, int):
        return int(round(rate * n))
    return 0


def _pair_items_answered(reference: dict[str, Any]) -> int:
    """Return how many items of complete pairs are answered, 0 when the result cannot tell."""
    pairs = reference.get("pairs") or {}
    if isinstance(pairs.get("answered"), int):
        return int(pairs["answered"])
    every_item_paired = pairs.get("incomplete_pairs") == 0 and 2 * (pairs.get("n_pairs") or 0) == reference.get(
        "n_items")
    return answered_items(reference.get("overall") or {}) if every_item_paired else 0


def _bin_of(part: dict[str, Any], reference: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Return the whole-file curve bin whose value range holds a split's bin."""
    lo, hi = part.get("lo"), part.get("hi")
    for ref in reference:
        if lo is not None and hi is not None and ref.get("lo") is not None and ref["lo"] <= lo and hi <= ref["hi"]:
            return ref
    return None
