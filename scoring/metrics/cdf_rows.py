"""Tables of binomial CDF rows, and inverting one row for every uniform at once.

A row covers k in [mq - h, mq + h], clipped to [0, m], with h from Bernstein's
inequality so that each tail left out has probability below e^-46 (about 1e-20), far
under the 2^-53 spacing of the uniforms. Its last value in that window is exactly 1.0,
so every uniform (below 1) is drawn inside the window.

A draw inverting a row is the smallest k whose CDF reaches its uniform u (cdf >= u).
``scoring.metrics.sampling`` finds it draw by draw from a starting guess; when many
draws invert the same row with the same uniforms, ``invert_sorted`` finds them all from
the uniforms in ascending order: a CDF value at k reaches exactly the uniforms drawn at
k or below, so counting the sorted uniforms each value reaches gives how many draws
land on each k.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

TAIL_EXPONENT = 46.0
MERGE_ENTRIES = 4096  # a CDF block costs about as much as this many entries
WIDTH_CLASSES = np.round(8 * np.sqrt(2) ** np.arange(48)).astype(np.int64)  # row widths: 8, 11, 16, 23, 32, ...


def window(m: IntArray, q: FloatArray) -> tuple[IntArray, IntArray]:
    """Return the first k and the length of each row's window (Bernstein, tails < e^-46)."""
    third = TAIL_EXPONENT / 3.0
    h = np.ceil(third + np.sqrt(third * third + 2.0 * TAIL_EXPONENT * m * q * (1.0 - q))).astype(np.int64) + 1
    mean = m * q
    k_lo = np.clip(np.floor(mean).astype(np.int64) - h, 0, m)
    k_hi = np.clip(np.ceil(mean).astype(np.int64) + h, 0, m)
    return k_lo, k_hi - k_lo + 1


def cdf_rows(m: IntArray, q: FloatArray, k_lo: IntArray, span: IntArray) -> tuple[FloatArray, IntArray]:
    """Return every row's CDF in one flat array, and where each row's first k sits.

    A row is padded to a width class (more k past its window; their mass is below
    e^-46, or zero past m) and computed with the rows of its class, each row on its
    own: no sum runs across rows, so a row's values depend only on its m and q. Each
    row is framed by -1.0 before it and 2.0 as its last entry, so a walk never leaves it.
    """
    width = _merge_classes(WIDTH_CLASSES[np.searchsorted(WIDTH_CLASSES, span + 2)])
    order = np.argsort(width, kind="stable")
    start = np.empty(len(m), dtype=np.int64)
    start[order] = np.cumsum(width[order]) - width[order] + 1
    cdf = np.empty(int(width.sum()))
    ordered = width[order]
    edges = np.flatnonzero(np.diff(ordered)) + 1
    with np.errstate(over="ignore", invalid="ignore"):  # rows that overflow are redone in logs
        for rows in np.split(order, edges):
            w = int(width[rows[0]])
            block = cdf[start[rows[0]] - 1 : start[rows[0]] - 1 + len(rows) * w].reshape(len(rows), w)
            _fill_block(block, m[rows], q[rows], k_lo[rows], span[rows])
    return cdf, start


def _merge_classes(width: IntArray) -> IntArray:
    """Return the widths with small classes moved up to a wider one.

    A block costs about as much as ``MERGE_ENTRIES`` entries, so rows whose move to
    the next class up would add fewer entries than that join it (and may move on).
    """
    classes, counts = np.unique(width, return_counts=True)
    moves_up = np.zeros(len(classes), dtype=bool)
    carried = 0
    for i in range(len(classes) - 1):
        carried += int(counts[i])
        moves_up[i] = carried * int(classes[i + 1] - classes[i]) < MERGE_ENTRIES
        carried = carried if moves_up[i] else 0
    kept = np.flatnonzero(~moves_up)  # the widest class always stays
    merged: IntArray = classes[kept[np.searchsorted(kept, np.searchsorted(classes, width))]]
    return merged


def _fill_block(block: FloatArray, m: IntArray, q: FloatArray, k_lo: IntArray, span: IntArray) -> None:
    """Write CDF rows into ``block``: -1.0, then the CDF from k_lo on, ending in 2.0.

    Each row is divided by its value at the end of its window (span), so the padding
    past it changes nothing inside the window.
    """
    k_plus_1 = (k_lo + 1.0)[:, None] + np.arange(block.shape[1] - 3, dtype=np.float64)
    ratio = (m + 1.0)[:, None] - k_plus_1  # m - k, exact: 0 at k = m, below past it
    ratio *= (q / (1.0 - q))[:, None]
    ratio /= k_plus_1  # pmf(k + 1) / pmf(k)
    past_m = ratio[:, max(0, int((m - k_lo).min())) :]  # only k past m gives m - k < 0: most blocks have none
    np.maximum(past_m, 0.0, out=past_m)
    block[:, 0] = -1.0
    block[:, 1] = 1.0
    np.cumprod(ratio, axis=1, out=block[:, 2:-1])
    values = block[:, 1:-1]
    np.cumsum(values, axis=1, out=values)
    end = (np.arange(len(m)), span - 1)
    values /= values[end][:, None]
    huge = ~np.isfinite(values[end])  # pmf(k_lo) below 1e-308 of the mode: q within ~1e-9 of 0 or 1
    if huge.any():
        with np.errstate(divide="ignore"):
            log_ratio = np.log(ratio[huge])
        log_pmf = np.concatenate((np.zeros((len(log_ratio), 1)), np.cumsum(log_ratio, axis=1)), axis=1)
        running = np.cumsum(np.exp(log_pmf - log_pmf.max(axis=1, keepdims=True)), axis=1)
        values[huge] = running / running[np.arange(len(running)), span[huge] - 1][:, None]
    block[:, -1] = 2.0


def rank_uniforms(u: FloatArray) -> IntArray:
    """Return where each uniform sits in its row sorted ascending (ties in any order: they draw the same k)."""
    order = np.argsort(u, axis=-1)
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.broadcast_to(np.arange(u.shape[-1]), u.shape), axis=-1)
    return rank


def invert_sorted(cdf: FloatArray, first: IntArray, k_first: IntArray, count: IntArray, u: FloatArray,
                  rank: IntArray) -> IntArray:
    """Return (rows, R) draws inverting ``u`` (R,) in the CDF rows whose ``count`` values start at ``first``.

    ``k_first`` is the k of each row's first value and ``rank`` is ``rank_uniforms(u)``.
    """
    ends = np.cumsum(count)
    starts = ends - count
    local = np.arange(int(ends[-1])) - np.repeat(starts, count)
    ascending = np.empty_like(u)
    ascending[rank] = u
    # how many uniforms each CDF value reaches: the draws at its k or below
    reached = np.searchsorted(ascending, cdf[np.repeat(first, count) + local], side="right")
    at_k = reached.copy()
    at_k[1:] -= reached[:-1]
    at_k[starts] = reached[starts]  # a row's count starts from none
    drawn = np.repeat(np.repeat(k_first, count) + local, at_k).reshape(len(count), len(u))
    return np.take(drawn, rank, axis=1)
