"""The long-tail charts of a submission (docs/LONG_TAIL.md) as view models: data for the canvas, rows for the table.

Built from a result object as disclosure.visibility shows it (so only what the viewer may
see): the popularity curve (accuracy per popularity bin with its interval and the answer
rate), the risk–coverage curve with ``aurc``, and the reliability diagram behind ``ece``.
Each chart has a table and a one-sentence summary as its text alternatives; the page
prints them, and static/js/curves.js draws the canvas from ``payload`` (a JSON block:
the app's CSP allows no inline script or style).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from leaderboard.board import BoardCurves

MIN_LOG_VALUE = 0.5
"""Where a bin starting at 0 sits on the log popularity axis (log 0 does not exist)."""
BUCKETS = ("tail", "torso", "head")
"""The popularity buckets in the order of the bucket curve's axis, least popular first."""


@dataclass(frozen=True)
class CurveBin:
    """One popularity bin as shown: its value range, items (when shown), accuracy with interval, answer rate."""

    lo: float
    hi: float
    n: int | None
    accuracy: float | None
    ci: tuple[float, float] | None
    answer_rate: float | None
    grid: float | None = None  # set when visibility shows the bin on its sample's grid
    bucket: str | None = None  # "tail", "torso", "head": a point of the bucket curve (no numeric popularity)
    step: float | None = None  # the ± of a coarse bucket accuracy, as the head/tail table prints it
    rate_step: float | None = None  # the ± of a coarse bucket answer rate

    @property
    def digits(self) -> int:
        """Return the decimals the bin's figures are printed with: 2 on a grid, else 4."""
        return 2 if self.grid else 4

    @property
    def x(self) -> float:
        """Return the bin's place on the axis: its bucket's index, else the geometric mean of its range (log axis)."""
        if self.bucket is not None:
            return float(BUCKETS.index(self.bucket))
        return math.sqrt(max(self.lo, MIN_LOG_VALUE) * max(self.hi, MIN_LOG_VALUE))

    @property
    def label(self) -> str:
        """Return the bin's row label: its bucket, else its value range."""
        return self.bucket if self.bucket is not None else value_range(self.lo, self.hi)


@dataclass(frozen=True)
class ReliabilityBin:
    """One confidence bin of the reliability diagram: range, answered items, accuracy, mean confidence."""

    lo: float
    hi: float
    n: int | None
    accuracy: float | None
    confidence: float | None
    grid: float | None = None

    @property
    def digits(self) -> int:
        """Return the decimals the bin's accuracy is printed with: 2 on a grid, else 4."""
        return 2 if self.grid else 4


@dataclass(frozen=True)
class ResultCharts:
    """The three long-tail charts of one result object (any of them may be empty)."""

    key: str
    popularity: tuple[CurveBin, ...]
    risk: tuple[tuple[float, float], ...]
    aurc: float | None
    accuracy: float | None
    reliability: tuple[ReliabilityBin, ...]
    ece: float | None

    @property
    def any(self) -> bool:
        """Return whether there is a chart to draw."""
        return bool(self.popularity or self.risk or self.reliability)

    @property
    def buckets(self) -> bool:
        """Return whether the popularity curve is the bucket curve (head/tail figures, no numeric popularity)."""
        return any(b.bucket is not None for b in self.popularity)

    def payload(self) -> dict[str, Any]:
        """Return the data the script draws from (only what the tables print)."""
        return {
            "popularity": [{"x": b.x, "lo": b.lo, "hi": b.hi, "accuracy": b.accuracy, "answer_rate": b.answer_rate,
                            "ci": list(b.ci) if b.ci else None, "digits": b.digits, **_bucket_fields(b)}
                           for b in self.popularity],
            "risk": [list(p) for p in self.risk], "aurc": self.aurc,
            "reliability": [{"lo": b.lo, "hi": b.hi, "n": b.n, "accuracy": b.accuracy, "confidence": b.confidence,
                             "digits": b.digits} for b in self.reliability],
            "ece": self.ece,
        }

    def popularity_summary(self) -> str:
        """Return the popularity curve in one sentence (the canvas's text alternative)."""
        shown = [b for b in self.popularity if b.accuracy is not None]
        if not shown:
            return ""
        first, last = shown[0], shown[-1]
        if self.buckets:
            return "Accuracy by popularity bucket: " + ", ".join(
                f"{b.accuracy:.2f}{f' ± {b.step:.2f}' if b.step else ''} on {b.bucket} items" for b in shown) + "."
        return (f"Accuracy by popularity, {len(shown)} bins on a log scale: {first.accuracy:.2f} on the least "
                f"popular items ({value_range(first.lo, first.hi)}), {last.accuracy:.2f} on the most popular "
                f"({value_range(last.lo, last.hi)}).")

    def risk_summary(self) -> str:
        """Return the risk–coverage curve in one sentence."""
        if not self.risk:
            return ""
        half = next((risk for coverage, risk in self.risk if coverage >= 0.5), self.risk[-1][1])
        area = "" if self.aurc is None else f"AURC {self.aurc:.2f} (lower is better); "
        return (f"Risk against coverage, most confident answers first: {area}risk {half:.2f} at half coverage "
                f"and {self.risk[-1][1]:.2f} at full coverage.")

    def reliability_summary(self) -> str:
        """Return the reliability diagram in one sentence."""
        shown = [b for b in self.reliability if b.accuracy is not None and b.confidence is not None]
        if not shown:
            return ""
        worst = max(shown, key=lambda b: abs((b.accuracy or 0) - (b.confidence or 0)))
        ece = "" if self.ece is None else f"ECE {self.ece:.2f}; "
        return (f"Accuracy against stated confidence in {len(shown)} confidence bins: {ece}the largest gap is in "
                f"{worst.lo:.1f}–{worst.hi:.1f}, mean confidence {worst.confidence:.2f} against accuracy "
                f"{worst.accuracy:.2f}.")


@dataclass(frozen=True)
class EntryChart:
    """One entry's popularity curve on the ranking page's overlay."""

    submission_id: int
    name: str
    bins: tuple[CurveBin, ...]


@dataclass(frozen=True)
class BoardChart:
    """The view model of the curves overlaid on a ranking page (board.curves.BoardCurves drawn)."""

    entries: tuple[EntryChart, ...]
    candidates: tuple[tuple[int, str, bool], ...]  # (submission id, name, shown now) of the page's ranked rows
    note: str | None

    @property
    def ranges(self) -> tuple[tuple[float, float], ...]:
        """Return the popularity ranges of the bins any entry shows, least popular first (the table's rows)."""
        return tuple(sorted({(b.lo, b.hi) for e in self.entries for b in e.bins}))

    def table(self) -> list[tuple[str, list[CurveBin | None]]]:
        """Return per popularity range its text and each entry's bin there (None where not shown)."""
        rows = []
        for lo, hi in self.ranges:
            cells = [next((b for b in e.bins if (b.lo, b.hi) == (lo, hi)), None) for e in self.entries]
            rows.append((value_range(lo, hi), cells))
        return rows

    def payload(self) -> dict[str, Any]:
        """Return the data the overlay script draws from."""
        return {"entries": [{"id": e.submission_id, "name": e.name,
                             "bins": [{"x": b.x, "lo": b.lo, "hi": b.hi, "accuracy": b.accuracy,
                                       "ci": list(b.ci) if b.ci else None, "digits": b.digits} for b in e.bins]}
                            for e in self.entries]}


def board_chart(curves: BoardCurves) -> BoardChart:
    """Return the overlay's view model of the board's curves: each entry's bins as CurveBins."""
    return BoardChart(entries=tuple(EntryChart(submission_id=e.submission_id, name=e.name,
                                               bins=tuple(curve_bins(list(e.bins)))) for e in curves.entries),
                      candidates=curves.candidates, note=curves.note)


def result_charts(result: Mapping[str, Any] | None, key: str) -> ResultCharts:
    """Return the charts of a (visible) result object; ``key`` makes the page's element ids unique."""
    result = result or {}
    overall = result.get("overall") or {}
    return ResultCharts(
        key=key,
        popularity=tuple(curve_bins(result.get("popularity_curve")) or bucket_bins(result.get("popularity"))),
        risk=tuple((float(c), float(r)) for c, r in _pairs(result.get("risk_coverage"))),
        aurc=_number(overall.get("aurc", result.get("aurc"))),
        accuracy=_number(overall.get("accuracy")),
        reliability=tuple(_reliability(result.get("reliability"))),
        ece=_number(overall.get("ece")),
    )


def curve_bins(raw: Any) -> list[CurveBin]:
    """Return the popularity-curve bins of a result object that have a value range."""
    out = []
    for part in raw if isinstance(raw, list) else []:
        lo, hi = _number(part.get("lo")), _number(part.get("hi"))
        if lo is None or hi is None:
            continue
        ci = _interval((part.get("ci") or {}).get("accuracy"))
        n = part.get("n")
        out.append(CurveBin(lo=lo, hi=hi, n=n if isinstance(n, int) and not isinstance(n, bool) else None,
                            accuracy=_number(part.get("accuracy")), ci=ci,
                            answer_rate=_number(part.get("answer_rate")), grid=_number(part.get("grid"))))
    return out


def bucket_bins(popularity: Any) -> list[CurveBin]:
    """Return the bucket curve from a shown result's head/tail slices: their figures as printed, coarse ones ±step.

    Drawn when the label file has bucket words but no numeric popularity; needs two buckets with an accuracy.
    """
    out = []
    for name in BUCKETS:
        part = popularity.get(name) if isinstance(popularity, Mapping) else None
        if not isinstance(part, Mapping) or _number(part.get("accuracy")) is None:
            continue
        step, rate_step = _step(part, "accuracy"), _step(part, "answer_rate")
        n = part.get("n")
        out.append(CurveBin(lo=0.0, hi=0.0, n=n if isinstance(n, int) and not isinstance(n, bool) else None,
                            accuracy=_number(part.get("accuracy")),
                            ci=_interval((part.get("ci") or {}).get("accuracy")),
                            answer_rate=_number(part.get("answer_rate")), grid=step or rate_step, bucket=name,
                            step=step, rate_step=rate_step))
    return out if len(out) >= 2 else []


def _bucket_fields(b: CurveBin) -> dict[str, Any]:
    """Return a bucket point's name and ± steps for the payload (nothing for a numeric bin)."""
    return {} if b.bucket is None else {"bucket": b.bucket, "step": b.step, "rate_step": b.rate_step}


def _step(part: Mapping[str, Any], metric: str) -> float | None:
    """Return the step of a coarse figure of a shown slice (templating.coarse_step), None when it is exact."""
    grid = _number(part.get("grid"))
    return None if grid is None or metric in (part.get("exact") or ()) else grid


def value_range(lo: float, hi: float) -> str:
    """Return a popularity range as people read it ("12–40", "7")."""
    def text(value: float) -> str:
        return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.4g}"
    return text(lo) if lo == hi else f"{text(lo)}–{text(hi)}"


def _reliability(raw: Any) -> list[ReliabilityBin]:
    """Return the reliability bins of a result object."""
    out = []
    for part in raw if isinstance(raw, list) else []:
        lo, hi = _number(part.get("lo")), _number(part.get("hi"))
        if lo is None or hi is None:
            continue
        n = part.get("n")
        out.append(ReliabilityBin(lo=lo, hi=hi, n=n if isinstance(n, int) and not isinstance(n, bool) else None,
                                  accuracy=_number(part.get("accuracy")), confidence=_number(part.get("confidence")),
                                  grid=_number(part.get("grid"))))
    return out


def _pairs(raw: Any) -> Sequence[Sequence[float]]:
    """Return the [coverage, risk] points of a result object's risk_coverage."""
    if not isinstance(raw, list):
        return []
    return [p for p in raw if isinstance(p, (list, tuple)) and len(p) == 2 and all(_number(v) is not None for v in p)]


def _interval(bounds: Any) -> tuple[float, float] | None:
    """Return bounds as (lo, hi) when it is a [lo, hi] pair of numbers, else None."""
    if not isinstance(bounds, (list, tuple)) or len(bounds) != 2:
        return None
    lo, hi = _number(bounds[0]), _number(bounds[1])
    return None if lo is None or hi is None else (lo, hi)


def _number(value: Any) -> float | None:
    """Return value as a float when it is a number (not a bool), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)
