"""What of a results object may leave the server (SPEC §7, §12), rounded to 4 decimals.

Organizers see everything. For anyone else:

- While a phase with a private split is not closed, only ``splits.public`` is shown (the
  top-level object mixes private items into every number), and nothing in it may tell
  which answered items are public: the figures that count answered public items
  (``answered``, ``answer_rate``, ``selective_accuracy``, ``ece``, ``aurc``,
  ``risk_coverage``), the per-slice ``n`` and ``correct``, and the bounds of curve bins
  are left out; ``file`` says how many items the whole file answered instead.
- A slice (breakdown value, popularity bucket, curve bin, pair table) is shown only with
  at least ``min_slice_items`` answered items (counted over the whole file while the
  private split is hidden: whether a slice appears must not count public items);
  calibration figures and curves only with 100. Such a slice shows no counts and its
  figures, intervals included, on the grid its answered items support, dithered with
  offsets drawn from the submission's own answers (services/precision.py): an exact
  slice figure is a differencing oracle, open or closed, and offsets drawn from the
  exact figures an equality oracle.
- Exact (4 decimals) are only the figures the phase ranks by (its views' metrics) where
  their slice is shown, and ``overall``'s ``n``, ``answered`` and ``answer_rate`` (the
  participant's own file). Every other figure of ``overall`` is on its grid like a
  slice's, and ``correct`` is not shown. A file answering fewer than ``min_slice_items``
  items shows no figure of ``overall`` at all: two or three answered items with one exact
  figure would tell their labels. ``ece``, ``aurc``, risk-coverage points and reliability
  bins are on the grid, points and bins at least max(min_slice_items, N/20) items apart.
- Built-in baselines show overall scores only. Under ``public_feedback: ladder`` the
  public figures follow the ladder (services/probing.py).

Only known keys are passed on: a key added to the result object later stays hidden
until it is listed here. docs/PROBING.md explains each rule with the attack it stops.
"""

from __future__ import annotations

import math
from typing import Any, cast

from leaderboard.models import Phase
from leaderboard.services.access import phase_status
from leaderboard.services.precision import Dither, differences, draw_of_results, grid_for, thinned
from leaderboard.services.probing import CURVE_MIN_ANSWERED, LadderDecision, ladder_view, probing_settings
from leaderboard.services.ranked_figures import ranked_figures

DECIMALS = 4
CALIBRATION_DECIMALS = 2
"""ece and aurc reach participants to 2 decimals: with chosen confidences, 4 decimals of ece x answered
decode about five labels per upload even at 100 answered items (docs/PROBING.md)."""
RESULT_KEYS = ("n_items", "overall", "breakdowns", "popularity", "pairs", "popularity_curve",
               "risk_coverage", "aurc", "reliability")
SLICE_KEYS = frozenset({"accuracy", "answer_rate", "selective_accuracy", "f1", "macro_f1", "macro_f1_fixed",
                        "avg_macro_f1", "group_accuracy", "ece", "aurc", "risk_coverage", "n", "answered", "correct",
                        "ci"})
CURVE_KEYS = frozenset({"ece", "aurc", "risk_coverage"})
MEMBERSHIP_KEYS = frozenset({"answered", "answer_rate", "selective_accuracy", "ece", "aurc", "risk_coverage",
                             "n", "correct"})
COUNT_KEYS = frozenset({"answered", "correct"})
RATE_KEYS = frozenset({"accuracy", "answer_rate", "selective_accuracy", "f1", "macro_f1", "macro_f1_fixed",
                       "avg_macro_f1", "group_accuracy"})
SHARES = ("both_correct", "head_only", "tail_only", "neither")
SAMPLE_PRECISION = True
"""Slices, calibration figures and curves reach participants on their sample's grid (services/precision.py);
the attack suite's control runs turn it off."""
FRESH_DRAWS = True
"""Dither offsets come from the submission's answers (any change draws afresh); the attack suite's control runs
turn it off (offsets from the slice's exact figures: equal counts show equal figures, an equality oracle)."""
OVERALL_BOUNDED = True
"""Only ranked figures and the file's own counts are exact in ``overall``, the rest on its grid, and a file answering
fewer than min_slice_items items shows none; the attack suite's control runs turn it off (every overall rate exact)."""
SENSITIVE_KEYS = frozenset({"f1", "macro_f1", "macro_f1_fixed", "group_accuracy"})
"""Figures one answer can move by more than a step of their slice (f1 by 2/(predicted + actual positives), group
accuracy by 1/groups): shown in overall, where those counts are large, but in no smaller slice unless ranked."""
OWN_KEYS = frozenset({"n", "answered", "answer_rate"})
"""Figures of ``overall`` that only count the participant's own file (while no private split is hidden)."""
CURVE_POINTS = 20
"""Risk-coverage points and reliability bins shown at most: at least N / CURVE_POINTS items apart (or in a bin)."""
FEW_ANSWERED_NOTE = ("Your file answers fewer than {k} items (or not every item of a smaller phase): no score of it "
                     "is shown, since a figure over so few answers would tell their labels.")
SMALL_SLICE_NOTE = ("Breakdown rows with fewer than {k} answered items are not shown, and calibration "
                    "figures need 100, so that no single item's correctness can be read off.")
HIDDEN_SPLIT_NOTE = ("Until the phase closes, figures that would tell which of your answered items belong to this "
                     "split (answered counts, answer rates, item counts per slice, calibration) are not shown; "
                     "'file' gives your whole file's answer rate.")


def visible_results(results: dict[str, Any], *, phase: Phase, viewer_is_organizer: bool = False,
                    overall_only: bool = False, ladder: LadderDecision | None = None) -> dict[str, Any]:
    """Return the part of results the viewer may see, every float rounded to 4 decimals.

    ``overall_only`` keeps just the overall slices: for the built-in baselines, whose
    per-category scores are functions of the label distribution alone (an "all yes"
    score of 0 on a category says every label in it is false). ``ladder`` is the
    submission's ladder decision (probing.submission_decision) when the ladder applies.
    """
    if viewer_is_organizer:
        return cast(dict[str, Any], round_floats({k: v for k, v in results.items() if k != "draw"}))
    rules = _Rules(phase, results)
    if overall_only:
        results = _overall_only(results)
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
        elif rules.settings.ladder:  # every item is public: SPEC §12 shows no exact public counts under the ladder
            shown = _without_counts(shown)
    if ladder is not None:
        shown = ladder_view(shown, ladder, metric=phase.primary_metric)
    shown["warnings"] = [*results.get("warnings", []), *dict.fromkeys(rules.notes)]
    return cast(dict[str, Any], round_floats(shown))


def file_summary(results: dict[str, Any]) -> dict[str, Any]:
    """Return what the whole file answered: the participant's own figure, safe to show."""
    overall = results.get("overall") or {}
    n = int(results.get("n_items") or overall.get("n") or 0)
    answered = _answered(overall)
    return {"n_items": n, "answered": answered, "answer_rate": answered / n if n else None}


class _Rules:
    """The slice rules of one phase, collecting the notes to show with the result."""

    def __init__(self, phase: Phase, results: dict[str, Any]) -> None:
        self.settings = probing_settings(phase)
        self.ranked = ranked_figures(phase)
        self.notes: list[str] = []
        self.hide = False
        self.path = ""
        draw = draw_of_results(results) if FRESH_DRAWS else None
        self.dither = Dither(phase.labels_sha256, draw) if SAMPLE_PRECISION else None

    def redact(self, result: dict[str, Any], *, reference: dict[str, Any], path: str = "",
               hide_membership: bool = False) -> dict[str, Any]:
        """Return result without what its reference's answered counts do not allow."""
        self.hide, self.path = hide_membership, path
        shown: dict[str, Any] = {key: result[key] for key in ("n_items",) if key in result}
        reach = _answered(reference.get("overall") or {})
        if "overall" in result:
            shown["overall"] = self.overall(result["overall"], reach, items=int(reference.get("n_items") or 0))
        if reach >= CURVE_MIN_ANSWERED and not hide_membership:
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
        if not OVERALL_BOUNDED:
            return self.slice(part, answered, path="overall", keep_small=True) or {}
        own = set() if self.hide else set(OWN_KEYS)
        if answered < min(self.settings.min_slice_items, max(items, 1)):
            self.notes.append(FEW_ANSWERED_NOTE.format(k=self.settings.min_slice_items))
            return {key: part[key] for key in ("n", "answered") if key in part and key in own}
        return self.slice(part, answered, path="overall", keep_small=True, own=frozenset(own)) or {}

    def slice(self, part: dict[str, Any], answered: int, *, path: str, keep_small: bool = False,
              own: frozenset[str] = frozenset()) -> dict[str, Any] | None:
        """Return one slice as shown, or None when it has too few answered items.

        Every slice is shown on its grid (no counts) but for the figures the phase ranks
        by and, in overall, the file's own counts (``own``). With OVERALL_BOUNDED off,
        overall keeps every rate exact, its calibration figures on the grid.
        """
        small = answered < self.settings.min_slice_items
        if small and not keep_small:
            self._note()
            return None
        exact = self.ranked.get(path, frozenset())
        hidden = set(CURVE_KEYS - exact) if answered < CURVE_MIN_ANSWERED else set()
        coarse = self.dither is not None and (not keep_small or OVERALL_BOUNDED)
        if small or coarse:
            hidden |= COUNT_KEYS - own
        if self.hide:
            hidden |= MEMBERSHIP_KEYS - exact
        if not keep_small and self.dither is not None:
            hidden |= SENSITIVE_KEYS - exact
        shown = {key: value for key, value in part.items() if key in SLICE_KEYS and key not in hidden}
        if "risk_coverage" in shown:
            shown["risk_coverage"] = self.thinned(shown["risk_coverage"], int(part.get("n") or 0))
        if isinstance(shown.get("ci"), dict):
            shown["ci"] = {metric: ci for metric, ci in shown["ci"].items() if metric not in hidden}
        if coarse and self.dither is not None:
            return self.dither.slice(shown, exact=part, path=self.path + path, grid=grid_for(answered),
                                     rates=RATE_KEYS, calibration=CURVE_KEYS, keep=(exact | own) & shown.keys())
        for key in ("ece", "aurc"):
            if key in shown and key not in exact:
                shown[key] = self._calibration(shown[key], answered, exact=part, path=f"{path}.{key}")
        return shown

    def breakdowns(self, tables: dict[str, Any], reference: dict[str, Any]) -> dict[str, Any]:
        """Return every breakdown table with its too-small rows left out."""
        out: dict[str, Any] = {}
        for field, values in tables.items():
            ref = reference.get(field) or {}
            kept = {value: self.slice(part, _answered(ref.get(value) or {}), path=f"breakdowns.{field}.{value}")
                    for value, part in values.items()}
            out[field] = {value: part for value, part in kept.items() if part is not None}
        return out

    def popularity(self, popularity: dict[str, Any], reference: dict[str, Any]) -> dict[str, Any]:
        """Return the head/torso/tail buckets big enough to show, with gap and drop when head and tail are."""
        out: dict[str, Any] = {}
        for bucket in ("head", "torso", "tail"):
            if bucket in popularity:
                part = self.slice(popularity[bucket], _answered(reference.get(bucket) or {}),
                                  path=f"popularity.{bucket}")
                if part is not None:
                    out[bucket] = part
        both = "head" in out and "tail" in out
        if self.dither is not None:  # from the figures shown, so the differences add nothing to them
            out.update(differences(out, RATE_KEYS) if both else {"gap": {}, "relative_drop": {}})
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
        shown = {key: pairs[key] for key in ("n_pairs", "incomplete_pairs", *SHARES) if key in pairs}
        if (pairs.get("n_pairs") or 0) and _pair_items_answered(reference) < self.settings.min_slice_items:
            shown.update({share: None for share in SHARES})
            self._note()
        elif self.dither is not None and pairs.get("n_pairs"):
            keep = self.ranked.get("pairs", frozenset())
            shown = self.dither.shares(shown, exact=pairs, path=self.path + "pairs",
                                       grid=grid_for(int(pairs["n_pairs"])), keys=SHARES, keep=keep)
        return shown

    def curve(self, bins: list[dict[str, Any]], reference: list[dict[str, Any]],
              reach: int) -> list[dict[str, Any]] | None:
        """Return the popularity-curve bins big enough to show, or None when the curve is not shown."""
        if reach < CURVE_MIN_ANSWERED:
            self._note()
            return None
        out = []
        for index, part in enumerate(bins):
            ref = _bin_of(part, reference) if self.hide else part
            shown = self.slice(part, _answered(ref or {}), path=f"popularity_curve[{index}]")
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
        return max(self.settings.min_slice_items, math.ceil(n / CURVE_POINTS) if self.dither is not None else 0)

    def _calibration(self, value: Any, answered: int, *, exact: dict[str, Any], path: str) -> Any:
        """Return a calibration figure of the overall result: on its grid, or to 2 decimals without the rule."""
        if self.dither is None or not isinstance(value, float):
            return round(value, CALIBRATION_DECIMALS) if isinstance(value, float) else value
        return self.dither.value(value, exact=exact, path=self.path + path, grid=grid_for(answered))

    def _note(self) -> None:
        self.notes.append(SMALL_SLICE_NOTE.format(k=self.settings.min_slice_items))


def _answered(part: dict[str, Any]) -> int:
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
    return _answered(reference.get("overall") or {}) if every_item_paired else 0


def _bin_of(part: dict[str, Any], reference: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Return the whole-file curve bin whose value range holds a split's bin."""
    lo, hi = part.get("lo"), part.get("hi")
    for ref in reference:
        if lo is not None and hi is not None and ref.get("lo") is not None and ref["lo"] <= lo and hi <= ref["hi"]:
            return ref
    return None


def _without_counts(result: dict[str, Any]) -> dict[str, Any]:
    """Return a result object with no answered/correct count at any depth."""
    if isinstance(result, dict):
        return {key: _without_counts(value) for key, value in result.items() if key not in COUNT_KEYS}
    return result


def _overall_only(results: dict[str, Any]) -> dict[str, Any]:
    """Return results reduced to n_items, overall and warnings, in every split too."""
    kept: dict[str, Any] = {key: results[key] for key in ("n_items", "overall", "warnings") if key in results}
    if "splits" in results:
        kept["splits"] = {name: _overall_only(part) for name, part in results["splits"].items()}
    return kept


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
