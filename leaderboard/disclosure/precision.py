"""The precision a figure computed on hidden labels may be shown with: a grid its sample supports, dithered.

A figure of a slice with A answered items has a sampling error of about 1/√A, yet one
changed item moves it by 1/A: an exact figure (or one rounded to 4 decimals) lets a
participant read each item's correctness by differencing two uploads. So a slice's
figures reach participants as multiples of ``grid_for(A)``: the first of 0.01, 0.02,
0.05, 0.1, 0.2, 0.5, 1 that is at least 1/√A (between 1 and 2.5 sampling errors, under
the width of the slice's 95% interval, and two decimals always print it).

A fixed grid alone still leaks: a participant who moves a figure to a rounding boundary
reads one item per upload there. So a shown figure is *noisy*: rounded up or down at
random (up with probability its fractional step, so it is unbiased), then moved by a
two-sided geometric number of steps (``NOISE_RATIO``), kept in [0, 1]. The randomness is
an HMAC, keyed by the phase's label-file SHA-256 (never shown to participants), of the
figure's path and of the submission's own answers (its *draw*, ``with_draw``), never of
the exact figures. The same file always shows the same numbers; any change of the
answers draws every figure afresh, so two uploads whose slice has the same counts show
independent readings, as two uploads whose counts differ do (a draw keyed on the exact
figures made equal counts show equal figures: an equality oracle). Every grid point can
show whatever the exact figure, so no reading proves anything (with bounded noise an
exact 0 always showed 0, and a positive reading proved a label: the zero floor). A
shown value is about one step from the exact one. docs/PROBING.md measures what is left.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from scoring.types import Predictions

GRIDS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0)
"""The grids a shown figure can sit on, finest first."""


@dataclass(frozen=True)
class Draw:
    """What a submission's dither offsets are drawn from: digests of its answers, and of answers with confidences."""

    answers: str
    confidences: str

    def to_json(self) -> dict[str, str]:
        """Return the draw as stored in a result object (``results["draw"]``; never shown to participants)."""
        return {"answers": self.answers, "confidences": self.confidences}


def draw_of_predictions(predictions: Predictions) -> Draw:
    """Return the draw of a validated prediction file: SHA-256 of its answers, then with its confidences.

    Answers are the class codes in the label set's item order, so the same answers give
    the same draw whatever the file's format; confidences only move the calibration
    figures' offsets (repeating a file with other confidences reads its rates again as they were).
    """
    answers = hashlib.sha256(b"answers\0" + np.asarray(predictions.answer, dtype=np.int8).tobytes()).hexdigest()
    confidence = predictions.confidence
    extra = b"" if confidence is None else np.nan_to_num(np.asarray(confidence, dtype=np.float64), nan=-1.0).tobytes()
    return Draw(answers=answers[:32], confidences=hashlib.sha256(answers.encode() + extra).hexdigest()[:32])


def with_draw(results: dict[str, Any], predictions: Predictions) -> dict[str, Any]:
    """Return a result object with its submission's draw stored beside the figures."""
    return {**results, "draw": draw_of_predictions(predictions).to_json()}


def draw_of_results(results: Mapping[str, Any]) -> Draw:
    """Return the draw stored in a result object; one kept from before draws existed gets one from its figures.

    Such a result (an old archive, a score not rescored since) draws from all its exact
    figures at once: two files then show equal figures only when every figure of theirs
    is equal, never one slice alone. Migration 0009 gives stored scores their file's digest.
    """
    stored = results.get("draw")
    if isinstance(stored, Mapping) and isinstance(stored.get("answers"), str):
        return Draw(answers=str(stored["answers"]), confidences=str(stored.get("confidences") or stored["answers"]))
    figures = hashlib.sha256(json.dumps(results, sort_keys=True, default=str).encode()).hexdigest()[:32]
    return Draw(answers=figures, confidences=figures)


def grid_for(answered: int) -> float:
    """Return the coarsest needed grid of a slice: the first of GRIDS at least 1/sqrt(answered)."""
    error = 1.0 / math.sqrt(max(answered, 1))
    return next((grid for grid in GRIDS if grid >= error - 1e-12), GRIDS[-1])


NOISE_RATIO = 0.2
"""The two-sided geometric noise a coarse figure carries beyond its rounding: P(z) ∝ NOISE_RATIO^|z| steps."""
Noise = tuple[float, int]
"""(u, z): the rounding offset u in [0, 1) and the whole number of steps z added after rounding."""


def noise(key: str, path: str, seed: Any) -> Noise:
    """Return the noise of the figures at path: an HMAC of the path and a seed (the file's draw), keyed by key.

    ``u`` rounds the figure up with probability equal to its fractional step (so the
    shown value is unbiased); ``z`` is two-sided geometric, ratio NOISE_RATIO. Every grid
    point of [0, 1] can show for every exact figure: no reading ever proves a figure
    (an exact 0 shows as a step one time in six), and one reading moves the odds between
    two figures a step apart by at most 1/NOISE_RATIO² (docs/PROBING.md).
    """
    message = json.dumps([path, seed], sort_keys=True, default=str).encode()
    digest = hmac.new(key.encode(), message, hashlib.sha256).digest()
    u = int.from_bytes(digest[:8], "big") / 2.0 ** 64
    v = int.from_bytes(digest[8:16], "big") / 2.0 ** 64
    return u, _geometric(v)


def _geometric(v: float) -> int:
    """Return the two-sided geometric (ratio NOISE_RATIO) number of steps at uniform quantile v in [0, 1)."""
    zero = (1 - NOISE_RATIO) / (1 + NOISE_RATIO)
    if v < zero:
        return 0
    w = (v - zero) / (1 - zero)
    sign, w = (1, 2 * w) if w < 0.5 else (-1, 2 * w - 1)
    return sign * (1 + int(math.log1p(-w) / math.log(NOISE_RATIO)))


def on_grid(value: Any, *, grid: float, noise: Noise) -> Any:
    """Return a rate in [0, 1] as a multiple of grid: rounded by the noise's u, moved by its z steps, kept in [0, 1].

    None and non-numbers are returned as they are.
    """
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return value
    u, z = noise
    steps = math.floor(value / grid + u) + z
    return round(min(max(steps * grid, 0.0), 1.0), 4)


def figures_of(part: Mapping[str, Any], *, leave_out: frozenset[str] = frozenset()) -> dict[str, Any]:
    """Return the exact figures of a slice that seed its offset, some keys left out."""
    return {key: value for key, value in part.items() if key not in leave_out}


def thinned(points: list[Any], *, n: int, gap: int) -> list[Any]:
    """Return the risk-coverage points at least gap items apart (and from 0 and the end), the last kept.

    A participant chooses the confidence groups, so two points one item apart would give
    that item's correctness; points ``gap`` items apart give counts over that many items.
    """
    kept, last = [], 0
    for point in points[:-1]:
        items = round(point[0] * n)
        if items - last >= gap and n - items >= gap:
            kept.append(point)
            last = items
    return [*kept, points[-1]]


def differences(buckets: Mapping[str, Any], rates: frozenset[str]) -> dict[str, Any]:
    """Return gap (head - tail) and relative_drop (gap / head) of the rates both shown buckets carry.

    ``error`` bounds how far each difference of coarse figures can be from the exact one:
    the head's and the tail's steps added up (a figure ranked exact counts 0).
    """
    head, tail = buckets["head"], buckets["tail"]
    gap: dict[str, float] = {}
    drop: dict[str, float | None] = {}
    error: dict[str, dict[str, float]] = {"gap": {}, "relative_drop": {}}
    for metric in sorted(rates):
        if isinstance(head.get(metric), float) and isinstance(tail.get(metric), float):
            gap[metric] = round(head[metric] - tail[metric], 4)
            drop[metric] = round(gap[metric] / head[metric], 4) if head[metric] else None
            h_err, t_err = _step(head, metric), _step(tail, metric)
            if h_err or t_err:
                error["gap"][metric] = round(h_err + t_err, 4)
                if drop[metric] is not None:
                    error["relative_drop"][metric] = _drop_error(head[metric], tail[metric], h_err, t_err)
    return {"gap": gap, "relative_drop": drop, "error": error}


def _step(part: Mapping[str, Any], metric: str) -> float:
    """Return how far a shown figure of a slice can be from its exact value: its grid, 0 when it is exact."""
    grid = part.get("grid")
    if not isinstance(grid, float) or metric in (part.get("exact") or ()):
        return 0.0
    return grid


def _drop_error(head: float, tail: float, h_err: float, t_err: float) -> float:
    """Return the largest distance of 1 - tail/head from its shown value over head ± h_err, tail ± t_err (at most 1)."""
    shown = 1.0 - tail / head
    corners = [1.0 - t / h for h in (head - h_err, head + h_err) for t in (tail - t_err, tail + t_err) if h > 0]
    if head - h_err <= 0 or not corners:
        return 1.0
    return round(min(max(abs(c - shown) for c in corners), 1.0), 4)


class Dither:
    """Rounds the figures of one phase's slices onto their grids, offsets keyed by the phase's label file.

    ``draw`` is the submission's (``draw_of_results``): every offset comes from it and the
    figure's path. Without one (the attack suite's control runs: ``visibility.FRESH_DRAWS``
    off) offsets come from the slice's exact figures, as before issue 17: an equality oracle.
    """

    def __init__(self, key: str, draw: Draw | None = None) -> None:
        self.key = key
        self.draw = draw

    def _shift(self, path: str, exact: Any, *, calibration: bool = False) -> Noise:
        """Return the noise of the figures at path: from the draw, else from their exact figures."""
        if self.draw is None:
            return noise(self.key, path, exact)
        return noise(self.key, path, self.draw.confidences if calibration else self.draw.answers)

    def slice(self, part: Mapping[str, Any], *, exact: Mapping[str, Any], path: str, grid: float,
              rates: frozenset[str], calibration: frozenset[str],
              keep: frozenset[str] = frozenset()) -> dict[str, Any]:
        """Return a slice (part, as shown so far) whose rates, intervals and calibration figures sit on the grid.

        Rates share one offset (drawn from the answers: changing confidences alone never
        redraws it), calibration figures another (drawn with the confidences). Intervals
        are widened by one step on each side, so they hold the exact interval as well as
        the shown figure. Metrics in ``keep`` (a ranking's figure) stay exact, with their interval.
        """
        shift = self._shift(path, figures_of(exact, leave_out=calibration))
        calibration_shift = self._shift(path + "#calibration", exact, calibration=True)
        shown: dict[str, Any] = {}
        for key, value in part.items():
            if key in keep:
                shown[key] = value
            elif key in rates:
                shown[key] = on_grid(value, grid=grid, noise=shift)
            elif key == "ci" and isinstance(value, Mapping):
                shown[key] = {metric: bounds if metric in keep else self._interval(bounds, grid=grid, shift=shift)
                              for metric, bounds in value.items()}
            elif key in calibration and key != "risk_coverage":
                shown[key] = on_grid(value, grid=grid, noise=calibration_shift)
            else:
                shown[key] = value
        shown["grid"] = grid
        kept = sorted(key for key in keep if key in part)
        if kept:
            shown["exact"] = kept
        return shown

    def value(self, value: Any, *, exact: Any, path: str, grid: float) -> Any:
        """Return one calibration figure on the grid, its offset drawn with the confidences."""
        return on_grid(value, grid=grid, noise=self._shift(path + "#calibration", exact, calibration=True))

    def shares(self, part: Mapping[str, Any], *, exact: Mapping[str, Any], path: str, grid: float,
               keys: tuple[str, ...], keep: frozenset[str] = frozenset()) -> dict[str, Any]:
        """Return an object whose share figures (keys) sit on the grid, the rest (and ``keep``) as they are."""
        shift = self._shift(path, exact)
        shown = {key: on_grid(value, grid=grid, noise=shift) if key in keys and key not in keep else value
                 for key, value in part.items()}
        shown["grid"] = grid
        return shown

    def curve(self, points: list[Any], *, exact: list[Any], path: str, n: int) -> list[list[float]]:
        """Return risk-coverage points with each risk on the grid of the items up to its coverage."""
        shown = []
        for index, point in enumerate(points):
            coverage, risk = float(point[0]), point[1]
            shift = self._shift(f"{path}[{index}]", exact, calibration=True)
            shown.append([round(coverage, 4), on_grid(risk, grid=grid_for(round(coverage * n)), noise=shift)])
        return shown

    def bins(self, bins: list[Any], *, min_items: int, path: str) -> list[dict[str, Any]]:
        """Return the reliability bins of at least min_items answered items, accuracy on the grid of each.

        Their bounds, item counts and mean confidences come from the participant's own
        confidences; only the accuracy depends on the labels.
        """
        shown = []
        for index, part in enumerate(bins):
            answered = part.get("n") if isinstance(part, Mapping) else None
            if not isinstance(answered, int) or answered < min_items:
                continue
            shift = self._shift(f"{path}[{index}]", dict(part), calibration=True)
            shown.append({"lo": part.get("lo"), "hi": part.get("hi"), "n": answered,
                          "accuracy": on_grid(part.get("accuracy"), grid=grid_for(answered), noise=shift),
                          "confidence": _two_decimals(part.get("confidence")), "grid": grid_for(answered)})
        return shown

    @staticmethod
    def _interval(bounds: Any, *, grid: float, shift: Noise) -> Any:
        """Return an interval [lo, hi] moved like its figure, one step wider on each side (within [0, 1]).

        The figure and both bounds take the same noise, so the shown interval holds the shown figure.
        None is returned as it is.
        """
        if not isinstance(bounds, (list, tuple)) or len(bounds) != 2:
            return bounds
        lo, hi = (on_grid(bound, grid=grid, noise=shift) for bound in bounds)
        if not isinstance(lo, float) or not isinstance(hi, float):
            return [lo, hi]
        return [round(max(lo - grid, 0.0), 4), round(min(hi + grid, 1.0), 4)]


def _two_decimals(value: Any) -> Any:
    """Return a float rounded to 2 decimals (None and non-numbers as they are)."""
    return round(value, 2) if isinstance(value, float) else value
