"""Statistical rank and the exact McNemar test (docs/METRICS.md), over shown intervals and server-side correctness bits.

``stat_rank`` is a function of the intervals a participant sees, so it reveals nothing
they could not compute. ``p_vs_previous`` comes from per-item correctness, which never
leaves the server: the board computes it only where both rows' values of the view are
shown (to 4 decimals, so b - c is on the page already for a binary task), never under the
ladder, and only on the shown split's items of the view's slice (docs/PROBING.md).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from scoring import LabelSet
from scoring.correctness import unpack_bits
from scoring.types import BUCKET_NAMES, SPLIT_NAMES

BoolArray = npt.NDArray[np.bool_]
McNEMAR_METRICS = frozenset({"accuracy", "group_accuracy"})
Interval = tuple[float, float] | None


def stat_ranks(intervals: Sequence[Interval], *, higher: bool) -> list[int | None]:
    """Return each row's stat_rank: 1 + the rows whose interval lies entirely better; None without an interval."""
    given = [iv for iv in intervals if iv is not None]
    if higher:  # better: lo above this row's hi
        keys = sorted(lo for lo, _ in given)
        return [None if iv is None else 1 + len(keys) - bisect.bisect_right(keys, iv[1]) for iv in intervals]
    keys = sorted(hi for _, hi in given)  # lower is better: hi below this row's lo
    return [None if iv is None else 1 + bisect.bisect_left(keys, iv[0]) for iv in intervals]


def mcnemar_p(b: int, c: int) -> float:
    """Return the exact two-sided McNemar p-value: min(1, 2 · P[Binomial(b + c, 1/2) ≤ min(b, c)]), 1 when b + c = 0."""
    n, k = b + c, min(b, c)
    if n == 0:
        return 1.0
    # log C(n, i) - n log 2 for i = 0..k: a running sum of log((n - i + 1) / i), added up stably
    steps = np.log(np.arange(n, n - k, -1, dtype=np.float64)) - np.log(np.arange(1, k + 1, dtype=np.float64))
    logs = np.concatenate(([0.0], np.cumsum(steps))) - n * math.log(2.0)
    top = float(logs.max())
    tail = math.exp(top) * float(np.exp(logs - top).sum())
    return min(1.0, 2.0 * tail)


def slice_units(labels: LabelSet, *, path: str, split: str) -> tuple[BoolArray, npt.NDArray[np.int32] | None] | None:
    """Return the items of a path's slice on a split, and for group_accuracy their group codes; None if unknown."""
    parts = path.split(".")
    metric = parts[-1]
    if metric not in McNEMAR_METRICS:
        return None
    mask = np.ones(labels.n, dtype=bool)
    if split in SPLIT_NAMES:
        mask &= labels.split == SPLIT_NAMES.index(split)
    if len(parts) == 3 and parts[0] == "popularity":
        codes = {name: code for code, name in BUCKET_NAMES.items()}
        if parts[1] not in codes:
            return None
        mask &= labels.popularity == codes[parts[1]]
    elif len(parts) >= 4 and parts[0] == "breakdowns":
        membership = labels.memberships.get(parts[1])
        value = ".".join(parts[2:-1])
        if membership is None or value not in membership.values:
            return None
        member = np.zeros(labels.n, dtype=bool)
        member[membership.items[membership.codes == membership.values.index(value)]] = True
        mask &= member
    elif len(parts) != 1:
        return None
    return mask, (labels.groups if metric == "group_accuracy" else None)


def unit_correct(bits: bytes, *, n: int, units: tuple[BoolArray, npt.NDArray[np.int32] | None]) -> BoolArray:
    """Return per unit whether it was right: each item of the slice, or each group whose every item was."""
    mask, groups = units
    correct = unpack_bits(bits, n)
    if groups is None:
        return correct[mask]
    keep = mask & (groups >= 0)
    codes, inverse = np.unique(groups[keep], return_inverse=True)
    wrong = np.bincount(inverse, weights=~correct[keep], minlength=len(codes))
    return wrong == 0


def p_vs_previous(above: bytes, this: bytes, *, n: int,
                  units: tuple[BoolArray, npt.NDArray[np.int32] | None]) -> float:
    """Return the McNemar p-value between the row above and this row over the units of a slice."""
    first, second = unit_correct(above, n=n, units=units), unit_correct(this, n=n, units=units)
    b = int((first & ~second).sum())
    c = int((~first & second).sum())
    return mcnemar_p(b, c)
