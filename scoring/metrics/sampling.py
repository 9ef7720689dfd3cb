"""Exact binomial draws for many slices at once, by inverting the binomial CDF.

``binomial(u, m, q)`` returns, for every slice s and resample r, an inverse-CDF draw
of Binomial(m[s, r], q[s]) from the uniforms ``u`` (rows of them, one row per draw a
slice makes; see below). Every slice inverts the same uniforms (common random
numbers), so a slice's draws depend only on its own parameters: one slice scored
alone or among a hundred others gets the same numbers, and no slice's counts can
move another's.

Why not ``numpy.random.Generator.binomial``: it costs 40-200 ns a draw, and a
2,000-item submission with 70 slices needs about 350,000 draws. Here a slice builds a
table of CDF rows and each draw is a lookup: it starts at a normal approximation of
its quantile and walks to the exact one (the smallest k whose CDF reaches u), most
often without a step. Three ways, by the size of the table a slice would need:

- **direct**: one row per value m takes among the slice's resamples, inverting u[0];
- **split in two**: Binomial(m, q) is Binomial(lo, q) + Binomial(m - lo, q) for the
  smallest m of the slice, lo; one row for lo (inverting u[0]) and one row per
  m - lo (inverting u[1]), far fewer entries when m varies over a wide range. When
  m - lo spans ``THIRDS_SPREAD`` values or more, it is split again, as B a + b with
  B = ceil(sqrt(spread + 1)): one row per multiple of B (inverting u[1]) and one per
  b < B (inverting u[2]); the rows of the second part would otherwise hold about
  spread^2 / 2 entries, more than the three lookups cost;
- **generator**: ``Generator.binomial`` seeded by (seed, split), for slices of
  millions of items, where even that table would be large and draws are few.

A row covers k in [mq - h, mq + h], clipped to [0, m], with h from Bernstein's
inequality so that each tail left out has probability below e^-46 (about 1e-20), far
under the 2^-53 spacing of the uniforms.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

TAIL_EXPONENT = 46.0
MAX_ENTRIES_PER_DRAW = 4  # a table larger than this many entries per draw is split in two
MAX_SPLIT_ENTRIES_PER_DRAW = 24  # ... and past this, the slice uses the generator
THIRDS_SPREAD = 48  # from this spread of m - lo, the second part is split again (B a + b)
MERGE_ENTRIES = 4096  # a CDF block costs about as much as this many entries
CHUNK_DRAWS = 8192  # draws looked up at once: the working arrays stay in the processor's cache
WIDTH_CLASSES = np.round(8 * np.sqrt(2) ** np.arange(48)).astype(np.int64)  # row widths: 8, 11, 16, 23, 32, ...


def binomial(u: FloatArray, m: IntArray, q: FloatArray, *, seed: int, split: int) -> IntArray:
    """Return draws of Binomial(m[s, r], q[s]) inverting the uniforms u (3, R).

    ``m`` is (S, R), or (S,) when every resample of a slice has the same m.
    """
    shape = (len(q), u.shape[1])
    lo, hi = (m, m) if m.ndim == 1 else (m.min(axis=1), m.max(axis=1))
    m = np.broadcast_to(m[:, None] if m.ndim == 1 else m, shape)
    live = (q > 0.0) & (q < 1.0) & (hi > 0)
    q_safe = np.where(live, q, 0.5)
    direct = live & ((hi - lo + 1) * _window(hi, q_safe)[1] <= MAX_ENTRIES_PER_DRAW * shape[1])
    split_size = _window(lo, q_safe)[1] + (hi - lo + 1) * (hi - lo + 2) // 2
    halves = live & ~direct & (split_size <= MAX_SPLIT_ENTRIES_PER_DRAW * shape[1])
    if direct.all():
        return _table_draws(u[0], m, q, lo, hi)
    out = np.where((q >= 1.0)[:, None], m, 0)
    chosen = np.flatnonzero(direct | halves)
    if chosen.size:
        first = np.where(direct[chosen, None], m[chosen], lo[chosen, None])
        top = np.where(direct[chosen], hi[chosen], lo[chosen])
        out[chosen] = _table_draws(u[0], first, q[chosen], lo[chosen], top)
        part = np.flatnonzero(halves)
        if part.size:
            out[part] += _rest_draws(u, m[part] - lo[part, None], q[part], hi[part] - lo[part])
    for s in np.flatnonzero(live & ~direct & ~halves):
        out[s] = np.random.default_rng([seed, split]).binomial(m[s], q[s])
    return out


def _rest_draws(u: FloatArray, rest: IntArray, q: FloatArray, spread: IntArray) -> IntArray:
    """Return Binomial(rest, q) for the second part of split slices (rest in [0, spread]), inverting u[1] and u[2]."""
    zeros = np.zeros_like(spread)
    wide = spread >= THIRDS_SPREAD
    if not wide.any():
        return _table_draws(u[1], rest, q, zeros, spread)
    out = np.empty(rest.shape, dtype=np.int64)
    narrow = np.flatnonzero(~wide)
    if narrow.size:
        out[narrow] = _table_draws(u[1], rest[narrow], q[narrow], zeros[narrow], spread[narrow])
    chosen = np.flatnonzero(wide)
    step = np.ceil(np.sqrt(spread[chosen] + 1.0)).astype(np.int64)
    times, below = np.divmod(rest[chosen], step[:, None])
    out[chosen] = _table_draws(u[1], times * step[:, None], q[chosen], zeros[chosen], spread[chosen] // step * step,
                               stride=(step, times))
    out[chosen] += _table_draws(u[2], below, q[chosen], zeros[chosen], step - 1)
    return out


def _window(m: IntArray, q: FloatArray) -> tuple[IntArray, IntArray]:
    """Return the first k and the length of each row's window (Bernstein, tails < e^-46)."""
    third = TAIL_EXPONENT / 3.0
    h = np.ceil(third + np.sqrt(third * third + 2.0 * TAIL_EXPONENT * m * q * (1.0 - q))).astype(np.int64) + 1
    mean = m * q
    k_lo = np.clip(np.floor(mean).astype(np.int64) - h, 0, m)
    k_hi = np.clip(np.ceil(mean).astype(np.int64) + h, 0, m)
    return k_lo, k_hi - k_lo + 1


def _table_draws(u: FloatArray, m: IntArray, q: FloatArray, lo: IntArray, hi: IntArray,
                 stride: tuple[IntArray, IntArray] | None = None) -> IntArray:
    """Return the draws of Binomial(m[s, r], q[s]) at u[r] from one CDF row per (slice, m in [lo, hi]).

    With ``stride`` = (step per slice, (m - lo) / step per draw), a slice's rows are
    m = lo, lo + step, ..., hi only (every m it draws for is one of them).
    """
    step = np.ones_like(lo) if stride is None else stride[0]
    n_rows = (hi - lo) // step + 1
    first_row = np.cumsum(n_rows) - n_rows
    slice_of_row = np.repeat(np.arange(len(q)), n_rows)
    row_m = lo[slice_of_row] + (np.arange(int(n_rows.sum())) - first_row[slice_of_row]) * step[slice_of_row]
    row_q = q[slice_of_row]
    k_lo, span = _window(row_m, row_q)
    cdf, start = _cdf_rows(row_m, row_q, k_lo, span)
    # each draw starts at Cornish-Fisher with a rough normal quantile (Tukey's lambda)
    z = 4.91 * (u**0.14 - (1.0 - u) ** 0.14)
    skew = (1.0 - 2.0 * row_q) / 6.0
    rows = _Rows(
        centre=row_m * row_q - skew + 0.5,  # + 0.5: continuity
        sd=np.sqrt(row_m * row_q * (1.0 - row_q)),
        skew=skew,
        offset=start - k_lo,
    )
    out = np.empty(m.shape, dtype=np.int64)
    chunk = max(1, CHUNK_DRAWS // m.shape[1])
    tiled = np.tile(u, min(chunk, len(q)))
    z2 = z * z
    for first in range(0, len(q), chunk):
        part = slice(first, first + chunk)
        row = first_row[part, None] + (m[part] - lo[part, None] if stride is None else stride[1][part])
        out[part] = _lookup(cdf, rows, row, m[part], (z, z2), tiled[: row.size])
    return out


@dataclass(frozen=True)
class _Rows:
    """Per CDF row: where a draw's search starts (centre + sd z + skew z^2), and k's offset in the table."""

    centre: FloatArray
    sd: FloatArray
    skew: FloatArray
    offset: IntArray


def _lookup(cdf: FloatArray, rows: _Rows, row: IntArray, m: IntArray, z: tuple[FloatArray, FloatArray],
            u: FloatArray) -> IntArray:
    """Return the draws whose CDF rows are ``row`` (slices x resamples); ``z`` is (z, z^2); ``u`` the uniforms, flat."""
    guess = rows.centre[row]
    guess += rows.sd[row] * z[0]
    guess += rows.skew[row] * z[1]
    # |guess - mean| < 4.91 sd + 5 < h: only [0, m] can cut it, and the row holds all of [0, m] there
    position = np.minimum(np.maximum(guess.astype(np.int64), 0), m)
    offset = rows.offset[row]
    position += offset
    found = _walk(cdf, position.ravel(), u).reshape(m.shape)
    found -= offset
    return found


def _cdf_rows(m: IntArray, q: FloatArray, k_lo: IntArray, span: IntArray) -> tuple[FloatArray, IntArray]:
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
    np.maximum(ratio, 0.0, out=ratio)
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


def _walk(cdf: FloatArray, position: IntArray, u: FloatArray) -> IntArray:
    """Return, per draw, the first position of its CDF row that reaches u, searching from ``position``."""
    up = np.flatnonzero(cdf[position] < u)
    while up.size:
        position[up] += 1
        up = up[cdf[position[up]] < u[up]]
    down = np.flatnonzero(cdf[position - 1] >= u)
    while down.size:
        position[down] -= 1
        down = down[cdf[position[down] - 1] >= u[down]]
    return position
