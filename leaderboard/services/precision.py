"""The precision a figure computed on hidden labels may be shown with: a grid its sample supports, dithered.

A figure of a slice with A answered items has a sampling error of about 1/√A, yet one
changed item moves it by 1/A: an exact figure (or one rounded to 4 decimals) lets a
participant read each item's correctness by differencing two uploads. So a slice's
figures reach participants as multiples of ``grid_for(A)``: the first of 0.01, 0.02,
0.05, 0.1, 0.2, 0.5, 1 that is at least 1/√A (between 1 and 2.5 sampling errors, under
the width of the slice's 95% interval, and two decimals always print it).

A fixed grid alone still leaks: a participant who moves a figure to a rounding boundary
reads one item per upload there. The grid is therefore *dithered*: a figure is rounded
after adding an offset u in [-½, ½) grid steps that comes from an HMAC, keyed by the
phase's label-file SHA-256 (never shown to participants), of the slice's exact figures.
The same file always shows the same numbers, any change of the slice's items draws a
fresh offset, and a shown value only says the exact one lies within one grid step of
it: a single changed item never decides the shown value. docs/PROBING.md measures it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
from collections.abc import Mapping
from typing import Any

GRIDS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0)
"""The grids a shown figure can sit on, finest first."""


def grid_for(answered: int) -> float:
    """Return the coarsest needed grid of a slice: the first of GRIDS at least 1/sqrt(answered)."""
    error = 1.0 / math.sqrt(max(answered, 1))
    return next((grid for grid in GRIDS if grid >= error - 1e-12), GRIDS[-1])


def offset(key: str, path: str, figures: Any) -> float:
    """Return the dither offset in [-0.5, 0.5) of one slice: an HMAC of its path and exact figures."""
    message = json.dumps([path, figures], sort_keys=True, default=str).encode()
    digest = hmac.new(key.encode(), message, hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") / 2.0 ** 64 - 0.5


def on_grid(value: Any, *, grid: float, shift: float) -> Any:
    """Return a rate in [0, 1] rounded to a multiple of grid after a shift of ``shift`` steps, kept in [0, 1].

    None and non-numbers are returned as they are.
    """
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return value
    steps = math.floor(value / grid + 0.5 + shift)
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
    """Return gap (head - tail) and relative_drop (gap / head) of the rates both shown buckets carry."""
    head, tail = buckets["head"], buckets["tail"]
    gap: dict[str, float] = {}
    drop: dict[str, float | None] = {}
    for metric in sorted(rates):
        if isinstance(head.get(metric), float) and isinstance(tail.get(metric), float):
            gap[metric] = round(head[metric] - tail[metric], 4)
            drop[metric] = round(gap[metric] / head[metric], 4) if head[metric] else None
    return {"gap": gap, "relative_drop": drop}


class Dither:
    """Rounds the figures of one phase's slices onto their grids, with offsets keyed by the phase's label file."""

    def __init__(self, key: str) -> None:
        self.key = key

    def slice(self, part: Mapping[str, Any], *, exact: Mapping[str, Any], path: str, grid: float,
              rates: frozenset[str], calibration: frozenset[str]) -> dict[str, Any]:
        """Return a slice (part, as shown so far) whose rates, intervals and calibration figures sit on the grid.

        The offsets come from the slice's ``exact`` figures: rates share one drawn without
        the calibration ones (changing confidences alone never redraws it); calibration
        figures get one drawn from every figure, confidences included.
        """
        shift = offset(self.key, path, figures_of(exact, leave_out=calibration))
        calibration_shift = offset(self.key, path + "#calibration", exact)
        shown: dict[str, Any] = {}
        for key, value in part.items():
            if key in rates:
                shown[key] = on_grid(value, grid=grid, shift=shift)
            elif key == "ci" and isinstance(value, Mapping):
                shown[key] = {metric: self._interval(bounds, grid=grid, shift=shift)
                              for metric, bounds in value.items()}
            elif key in calibration and key != "risk_coverage":
                shown[key] = on_grid(value, grid=grid, shift=calibration_shift)
            else:
                shown[key] = value
        shown["grid"] = grid
        return shown

    def value(self, value: Any, *, exact: Any, path: str, grid: float) -> Any:
        """Return one calibration figure on the grid, its offset drawn from ``exact``."""
        return on_grid(value, grid=grid, shift=offset(self.key, path + "#calibration", exact))

    def shares(self, part: Mapping[str, Any], *, exact: Mapping[str, Any], path: str, grid: float,
               keys: tuple[str, ...]) -> dict[str, Any]:
        """Return an object whose share figures (keys) sit on the grid, the rest as they are."""
        shift = offset(self.key, path, exact)
        return {key: on_grid(value, grid=grid, shift=shift) if key in keys else value for key, value in part.items()}

    def curve(self, points: list[Any], *, exact: list[Any], path: str, n: int) -> list[list[float]]:
        """Return risk-coverage points with each risk on the grid of the items up to its coverage."""
        shown = []
        for index, point in enumerate(points):
            coverage, risk = float(point[0]), point[1]
            shift = offset(self.key, f"{path}[{index}]", exact)
            shown.append([round(coverage, 4), on_grid(risk, grid=grid_for(round(coverage * n)), shift=shift)])
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
            shift = offset(self.key, f"{path}[{index}]", dict(part))
            shown.append({"lo": part.get("lo"), "hi": part.get("hi"), "n": answered,
                          "accuracy": on_grid(part.get("accuracy"), grid=grid_for(answered), shift=shift),
                          "confidence": _two_decimals(part.get("confidence")), "grid": grid_for(answered)})
        return shown

    @staticmethod
    def _interval(bounds: Any, *, grid: float, shift: float) -> Any:
        """Return an interval [lo, hi] with both bounds on the grid (None as it is)."""
        if not isinstance(bounds, (list, tuple)):
            return bounds
        return [on_grid(bound, grid=grid, shift=shift) for bound in bounds]


def _two_decimals(value: Any) -> Any:
    """Return a float rounded to 2 decimals (None and non-numbers as they are)."""
    return round(value, 2) if isinstance(value, float) else value
