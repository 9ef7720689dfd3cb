"""Percentile intervals over resampled values: numpy's default percentile at 2.5 and 97.5, every row at once.

Numpy's default percentile is linear interpolation between the order statistics around
(count - 1) * p / 100; here the same index arithmetic and interpolation run for all the
rows of a sorted array at once, over each row's values that are not NaN.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

PERCENTILES = (2.5, 97.5)


def percentile_interval(values: FloatArray) -> FloatArray:
    """Return (S, 2): numpy's default percentiles 2.5 and 97.5 of each row's non-NaN values.

    NaN where a row has none. Equal to ``np.percentile(row[~np.isnan(row)], (2.5, 97.5))``
    (same index arithmetic and interpolation), computed for every row at once.
    """
    ordered = np.sort(values, axis=1)  # NaN sorts last
    return _interpolate(ordered, values.shape[1] - np.isnan(values).sum(axis=1))


def count_interval(counts: IntArray, n: IntArray) -> FloatArray:
    """Return ``percentile_interval(counts / n[:, None])``, sorting the integer counts instead.

    Dividing by a positive n keeps the order, and each order statistic is divided
    exactly as the metric divides, so the numbers are the same; sorting small integers
    costs a quarter of sorting floats. A row with n = 0 is NaN.
    """
    top = int(n.max(initial=0))
    narrow = np.int16 if top < 2**15 else np.int32 if top < 2**31 else np.int64
    with np.errstate(divide="ignore", invalid="ignore"):
        ordered = np.sort(counts.astype(narrow), axis=1) / n[:, None]  # equal integers: any sort order is the same
    return _interpolate(ordered, np.where(n > 0, counts.shape[1], 0))


def _interpolate(ordered: FloatArray, count: IntArray) -> FloatArray:
    """Return (S, 2) percentiles 2.5 and 97.5 of rows sorted ascending whose first ``count`` values count."""
    count = count[:, None]
    virtual = (count - 1) * np.true_divide(PERCENTILES, 100)
    below = np.floor(virtual).astype(np.int64)
    at_end = virtual >= count - 1  # numpy takes the last value there
    lower = np.maximum(np.where(at_end, count - 1, below), 0)
    upper = np.maximum(np.where(at_end, count - 1, below + 1), 0)
    rows = np.arange(len(ordered))[:, None]
    a, b = ordered[rows, lower], ordered[rows, upper]
    t = np.where(at_end, 0.0, virtual - below)
    diff = b - a
    out: FloatArray = np.where(t >= 0.5, b - diff * (1 - t), a + diff * t)
    out[count[:, 0] == 0] = np.nan
    return out
