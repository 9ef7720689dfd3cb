"""Bootstrap intervals: deterministic, around the estimate, and distributed like item resampling."""

from __future__ import annotations

import json

import numpy as np
import pytest

from scoring.metrics import METRICS, SliceCounts, point_values
from scoring.metrics.bootstrap import RESAMPLES, intervals, resample

CELL_METRICS = [m.name for m in METRICS.values() if m.has_ci and m.table == "cells"]


def items(seed: int, n: int, k: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Return (gold, answer) of n items: 70% right, 10% abstentions."""
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, k, n)
    wrong = (gold + rng.integers(1, k, n)) % k
    answer = np.where(rng.random(n) < 0.7, gold, wrong)
    answer = np.where(rng.random(n) < 0.1, -1, answer)
    return gold, answer


def table(gold: np.ndarray, answer: np.ndarray, k: int = 2) -> np.ndarray:
    return np.bincount(gold * (k + 1) + answer + 1, minlength=k * (k + 1)).reshape(k, k + 1)


def counts_of(gold: np.ndarray, answer: np.ndarray, k: int = 2, groups: np.ndarray | None = None) -> SliceCounts:
    return SliceCounts(cells=table(gold, answer, k), binary=k == 2, groups=groups)


def test_same_counts_give_identical_intervals() -> None:
    counts = counts_of(*items(1, 300))
    points = point_values(counts)
    assert json.dumps(intervals(counts, points)) == json.dumps(intervals(counts, points))


def test_resample_keeps_the_slice_size_and_draws_the_configured_number() -> None:
    counts = counts_of(*items(2, 123))
    batch = resample(counts)
    assert batch.cells.shape == (RESAMPLES, 2, 3)
    assert (batch.cells.sum(axis=(1, 2)) == 123).all()


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("k", [2, 4])
def test_interval_contains_the_point_estimate(seed: int, k: int) -> None:
    counts = counts_of(*items(seed, 250, k), k=k)
    points = point_values(counts)
    for name, bounds in intervals(counts, points).items():
        assert bounds is not None
        assert bounds[0] <= points[name] <= bounds[1], name
        assert bounds[0] < bounds[1], name


def test_interval_is_null_where_the_metric_is_null() -> None:
    gold = np.array([0, 1, 1])
    counts = counts_of(gold, np.array([-1, -1, -1]))
    ci = intervals(counts, point_values(counts))
    assert ci["selective_accuracy"] is None
    assert ci["accuracy"] == [0.0, 0.0]


def test_resamples_with_nothing_answered_are_dropped_not_counted() -> None:
    gold = np.zeros(40, dtype=np.int64)
    answer = np.full(40, -1)
    answer[0] = 0  # one answer: about a third of resamples answer nothing
    counts = counts_of(gold, answer)
    assert intervals(counts, point_values(counts))["selective_accuracy"] == [1.0, 1.0]


def _naive_percentiles(gold: np.ndarray, answer: np.ndarray, k: int, seed: int) -> dict[str, list[float]]:
    """Resample items one by one (the textbook bootstrap) with an unrelated generator."""
    rng = np.random.default_rng(seed)
    n = len(gold)
    values: dict[str, list[float]] = {name: [] for name in CELL_METRICS}
    for _ in range(RESAMPLES):
        pick = rng.integers(0, n, n)
        resampled = point_values(counts_of(gold[pick], answer[pick], k))
        for name in CELL_METRICS:
            if resampled.get(name) is not None:  # a multiple-choice metric is absent from a yes/no task
                values[name].append(resampled[name])
    return {name: np.percentile(v, [2.5, 97.5]).tolist() for name, v in values.items() if v}


@pytest.mark.parametrize(("k", "seed"), [(2, 11), (3, 12)])
def test_multinomial_draw_matches_item_resampling_in_distribution(k: int, seed: int) -> None:
    gold, answer = items(seed, 400, k)
    counts = counts_of(gold, answer, k)
    ours = intervals(counts, point_values(counts))
    naive = _naive_percentiles(gold, answer, k, seed + 1000)
    assert set(ours) & set(CELL_METRICS) == set(naive)
    assert ("macro_f1_fixed" in naive) is (k > 2)
    for name in naive:
        lo, hi = ours[name]
        naive_lo, naive_hi = naive[name]
        assert hi - lo == pytest.approx(naive_hi - naive_lo, rel=0.15), name
        assert (lo + hi) / 2 == pytest.approx((naive_lo + naive_hi) / 2, abs=0.15 * (naive_hi - naive_lo)), name


def test_group_interval_matches_resampling_groups() -> None:
    rng = np.random.default_rng(5)
    right = rng.random(300) < 0.6  # per group: every item right?
    groups = np.array([(~right).sum(), right.sum()])
    counts = SliceCounts(cells=np.array([[0, 1, 0], [0, 0, 1]]), binary=True, groups=groups)
    lo, hi = intervals(counts, point_values(counts))["group_accuracy"]
    shares = [right[rng.integers(0, 300, 300)].mean() for _ in range(RESAMPLES)]
    naive_lo, naive_hi = np.percentile(shares, [2.5, 97.5])
    assert lo <= right.mean() <= hi
    assert hi - lo == pytest.approx(naive_hi - naive_lo, rel=0.15)


def test_interval_depends_only_on_the_slice_counts() -> None:
    counts = counts_of(*items(3, 200))
    points = point_values(counts)
    first = intervals(counts, points)
    intervals(counts_of(*items(4, 50)), points)  # another slice scored in between
    assert intervals(counts, points) == first
