"""The bootstrap's binomial draws are exact in every way a slice can be drawn (direct, split in two or three).

A draw X of Binomial(m, q) is exact when its randomized probability integral transform
F(X - 1) + V (F(X) - F(X - 1)), V uniform, is uniform on [0, 1]; the tests check it with
a Kolmogorov-Smirnov test against scipy's binomial CDF on many draws, and check a direct
draw against the inverse CDF itself.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from scoring.metrics import sampling
from scoring.metrics.sampling import binomial

R = 1000  # resamples per call, as the bootstrap draws them (the way of drawing depends on it)
CALLS = 20


def draws(lo: int, spread: int, q: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Return (m, draws) pooled over CALLS independent calls; in each, m varies over [lo, lo + spread]."""
    rng = np.random.default_rng(seed)
    ms, xs = [], []
    for _ in range(CALLS):
        m = lo + rng.integers(0, spread + 1, R)
        m[0], m[1] = lo, lo + spread  # the range is exactly [lo, lo + spread]
        ms.append(m)
        xs.append(binomial(rng.random((3, R)), m[None, :], np.array([q]), seed=seed, split=1)[0])
    return np.concatenate(ms), np.concatenate(xs)


def way(lo: int, spread: int, q: float) -> str:
    """Return how binomial() draws a slice like this (its own thresholds, at R resamples)."""
    hi = np.array([lo + spread])
    if (spread + 1) * sampling.window(hi, np.array([q]))[1][0] <= sampling.MAX_ENTRIES_PER_DRAW * R:
        return "direct"
    return "three parts" if spread >= sampling.THIRDS_SPREAD else "two parts"


def pit_pvalue(m: np.ndarray, x: np.ndarray, q: float, seed: int) -> float:
    """Return the KS p-value of the randomized PIT of draws x of Binomial(m, q)."""
    v = np.random.default_rng(seed + 1).random(len(x))
    below, at = stats.binom.cdf(x - 1, m, q), stats.binom.cdf(x, m, q)
    return float(stats.kstest(below + v * (at - below), "uniform").pvalue)


@pytest.mark.parametrize(("lo", "spread", "q", "mode"), [
    (60, 6, 0.3, "direct"),
    (1400, 40, 0.6, "two parts"),
    (1400, 140, 0.25, "three parts"),
    (300, 190, 0.5, "three parts"),
])
def test_every_way_of_drawing_gives_binomial_draws(lo: int, spread: int, q: float, mode: str) -> None:
    assert way(lo, spread, q) == mode
    m, x = draws(lo, spread, q, seed=lo + spread)
    assert ((x >= 0) & (x <= m)).all()
    assert pit_pvalue(m, x, q, seed=lo) > 1e-3, mode


def test_a_direct_draw_is_the_inverse_cdf_of_its_uniform() -> None:
    rng = np.random.default_rng(9)
    m, q = rng.integers(50, 60, 2000), 0.37
    u = rng.random((3, 2000))
    x = binomial(u, m[None, :], np.array([q]), seed=9, split=1)[0]
    assert (stats.binom.cdf(x - 1, m, q) < u[0] + 1e-12).all() and (u[0] <= stats.binom.cdf(x, m, q) + 1e-12).all()


def test_a_three_part_draw_changes_with_the_third_uniform_only_where_it_is_used() -> None:
    rng = np.random.default_rng(4)
    m = 1000 + rng.integers(0, 150, R)
    u = rng.random((3, R))
    q = np.array([0.4])
    assert way(1000, 149, 0.4) == "three parts"
    first = binomial(u, m[None, :], q, seed=1, split=1)
    other = u.copy()
    other[2] = rng.random(R)
    assert not np.array_equal(first, binomial(other, m[None, :], q, seed=1, split=1))
    narrow = 1000 + rng.integers(0, 20, R)
    assert np.array_equal(binomial(u, narrow[None, :], q, seed=1, split=1),
                          binomial(other, narrow[None, :], q, seed=1, split=1))


@pytest.mark.parametrize(("m", "q"), [(60, 0.3), (1400, 0.6), (7, 0.02), (2000, 0.999)])
def test_one_m_per_slice_from_the_sorted_uniforms_equals_the_walk(m: int, q: float) -> None:
    rng = np.random.default_rng(m)
    u = rng.random((3, R))
    u[0, :10] = u[0, 10]  # ties draw the same k
    counts, shares = np.array([m, 5, m // 2]), np.array([q, 0.0, 1 - q])  # a dead slice: parts take some rows
    sorted_way = binomial(u, counts, shares, seed=1, split=1)  # (S,): one row per slice
    walked = binomial(u, np.repeat(counts[:, None], R, axis=1), shares, seed=1, split=1)  # (S, R): the lookups
    assert np.array_equal(sorted_way, walked)
