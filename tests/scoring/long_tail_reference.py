"""docs/LONG_TAIL.md (and the ece bins of docs/METRICS.md) read literally, in plain Python, for the tests.

Shares no code with ``scoring``. A row is a dict with ``answer`` (None for an
abstention), ``gold``, ``conf`` (a float on answered rows when the file has confidences)
and ``pop`` (a number, or None when the item has no numeric popularity).
"""

from __future__ import annotations

import math
from typing import Any

DECILES = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]


def quantile(values: list[float], q: float) -> float:
    """numpy's default (linear) quantile, by hand."""
    xs = sorted(values)
    h = (len(xs) - 1) * q
    lo = math.floor(h)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (h - lo) * (xs[hi] - xs[lo])


def curve_cuts(all_values: list[float]) -> list[float] | None:
    """Cut points over every numeric popularity of the label file, duplicates removed."""
    if not all_values:
        return None
    cuts: list[float] = []
    for q in DECILES:
        c = quantile(all_values, q)
        if c not in cuts:
            cuts.append(c)
    return cuts


def bin_of(value: float, cuts: list[float]) -> int:
    """The first bin whose cut point is >= the value; the last bin takes the rest."""
    for i, c in enumerate(cuts):
        if c >= value:
            return i
    return len(cuts)


def popularity_curve(rows: list[dict[str, Any]], cuts: list[float]) -> list[dict[str, Any]]:
    """The bins that have rows, least popular first (no intervals)."""
    bins: dict[int, list[dict[str, Any]]] = {}
    for r in rows:
        if r["pop"] is not None:
            bins.setdefault(bin_of(r["pop"], cuts), []).append(r)
    out = []
    for b in sorted(bins):
        members = bins[b]
        n = len(members)
        out.append({
            "lo": min(r["pop"] for r in members),
            "hi": max(r["pop"] for r in members),
            "n": n,
            "accuracy": sum(r["answer"] is not None and r["answer"] == r["gold"] for r in members) / n,
            "answer_rate": sum(r["answer"] is not None for r in members) / n,
        })
    return out


def curve_points(rows: list[dict[str, Any]]) -> list[tuple[int, int]]:
    """Every point of the risk-coverage curve as (items so far, wrong so far)."""
    answered = [r for r in rows if r["answer"] is not None]
    groups: dict[float, list[dict[str, Any]]] = {}
    for r in answered:
        groups.setdefault(r["conf"], []).append(r)
    ordered = [groups[c] for c in sorted(groups, reverse=True)]
    abstained = [r for r in rows if r["answer"] is None]
    if abstained:
        ordered.append(abstained)
    points, items, wrong = [], 0, 0
    for group in ordered:
        items += len(group)
        wrong += sum(r["answer"] is None or r["answer"] != r["gold"] for r in group)
        points.append((items, wrong))
    return points


def aurc(rows: list[dict[str, Any]]) -> float:
    """Sum of (coverage - previous coverage) x risk over the curve, from coverage 0."""
    total, area, before = len(rows), 0.0, 0
    for items, wrong in curve_points(rows):
        area += (items - before) / total * (wrong / items)
        before = items
    return area


def risk_coverage(rows: list[dict[str, Any]]) -> list[list[float]]:
    """The first point, then for j = 1..100 the first point with coverage >= j / 100, no repeats."""
    points, total = curve_points(rows), len(rows)
    chosen = [0]
    for j in range(1, 101):
        first = next(i for i, (items, _) in enumerate(points) if 100 * items >= j * total)
        if first not in chosen:
            chosen.append(first)
    return [[points[i][0] / total, points[i][1] / points[i][0]] for i in chosen]


def reliability(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ece bins (min(floor(10 conf), 9)) that hold answered rows: range, n, accuracy, mean confidence."""
    bins: dict[int, list[dict[str, Any]]] = {}
    for r in rows:
        if r["answer"] is not None:
            bins.setdefault(min(math.floor(10 * r["conf"]), 9), []).append(r)
    out = []
    for b in sorted(bins):
        members = bins[b]
        out.append({
            "lo": b / 10, "hi": (b + 1) / 10, "n": len(members),
            "accuracy": sum(r["answer"] == r["gold"] for r in members) / len(members),
            "confidence": sum(r["conf"] for r in members) / len(members),
        })
    return out
