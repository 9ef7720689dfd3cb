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

All the rows one call needs, of every way and part, are built as one table, so the
fixed cost of building CDF blocks is paid once per call.

A row covers k in [mq - h, mq + h], clipped to [0, m], with h from Bernstein's
inequality so that each tail left out has probability below e^-46 (about 1e-20), far
under the 2^-53 spacing of the uniforms.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
Float32Array = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.int64]

TAIL_EXPONENT = 46.0
MAX_ENTRIES_PER_DRAW = 4  # a table larger than this many entries per draw is split in two
MAX_SPLIT_ENTRIES_PER_DRAW = 24  # ... and past this, the slice uses the generator
THIRDS_SPREAD = 48  # from this spread of m - lo, the second part is split again (B a + b)
MERGE_ENTRIES = 4096  # a CDF block costs about as much as this many entries
CHUNK_DRAWS = 8192  # draws looked up at once: the working arrays stay in the processor's cache
WIDTH_CLASSES = np.round(8 * np.sqrt(2) ** np.arange(48)).astype(np.int64)  # row widths: 8, 11, 16, 23, 32, ...


def binomial(u: FloatArray, m: IntArray, q: FloatArray, *, seed: int, split: int,
             scores: Float32Array | None = None, out: IntArray | None = None) -> IntArray:
    """Return draws of Binomial(m[s, r], q[s]) inverting the uniforms u (3, R), in ``out`` (S, R) when given.

    ``m`` is (S, R), or (S,) when every resample of a slice has the same m. ``scores``
    is ``start_scores(u)``, for a caller that keeps it beside its fixed uniforms.
    """
    shape = (len(q), u.shape[1])
    lo, hi = (m, m) if m.ndim == 1 else (m.min(axis=1), m.max(axis=1))
    m = m[:, None] if m.ndim == 1 else m  # (S, 1) broadcasts: one row per slice, nothing to copy
    live = (q > 0.0) & (q < 1.0) & (hi > 0)
    q_safe = np.where(live, q, 0.5)
    direct = live & ((hi - lo + 1) * _window(hi, q_safe)[1] <= MAX_ENTRIES_PER_DRAW * shape[1])
    split_size = _window(lo, q_safe)[1] + (hi - lo + 1) * (hi - lo + 2) // 2
    halves = live & ~direct & (split_size <= MAX_SPLIT_ENTRIES_PER_DRAW * shape[1])
    out = np.empty(shape, dtype=np.int64) if out is None else out
    out[~(direct | halves)] = 0  # the parts write every row of the others
    certain = q >= 1.0
    out[certain] = np.broadcast_to(m, shape)[certain]
    parts = _parts(m, lo, hi, direct, halves)
    if parts:
        _draw_parts(u, start_scores(u) if scores is None else scores, q, parts, out)
    for s in np.flatnonzero(live & ~direct & ~halves):
        out[s] = np.random.default_rng([seed, split]).binomial(m[s], q[s], size=shape[1])
    return out


def start_scores(u: FloatArray) -> Float32Array:
    """Return (..., 2, R): per uniform, z (a rough normal quantile, Tukey's lambda) and z^2, where draws start."""
    z = 4.91 * (u**0.14 - (1.0 - u) ** 0.14)
    return np.stack((z, z * z), axis=-2).astype(np.float32)  # a start only needs to be near: see _Rows


@dataclass(frozen=True)
class _Part:
    """Draws of some slices from CDF rows m = first, first + step, ..., last per slice, inverting u[uniform].

    ``m`` is each draw's m (S_p, R) or (S_p, 1); ``times`` each draw's (m - first) / step
    when the step is not 1. The first part of a slice writes its draws, later ones add theirs.
    """

    take: IntArray
    uniform: int
    m: IntArray
    first: IntArray
    last: IntArray
    add: bool
    step: IntArray | None = None
    times: IntArray | None = None


def _parts(m: IntArray, lo: IntArray, hi: IntArray, direct: npt.NDArray[np.bool_],
           halves: npt.NDArray[np.bool_]) -> list[_Part]:
    """Return the parts live slices are drawn in: one row per m, or split in two (or three) parts."""
    parts: list[_Part] = []
    chosen = np.flatnonzero(direct)
    if chosen.size:
        every = chosen.size == len(m)  # the usual case: no copy of m
        parts.append(_Part(chosen, 0, m if every else m[chosen], lo[chosen], hi[chosen], add=False))
    chosen = np.flatnonzero(halves)
    if chosen.size:
        parts.append(_Part(chosen, 0, lo[chosen, None], lo[chosen], lo[chosen], add=False))
        parts += _rest_parts(chosen, m[chosen] - lo[chosen, None], hi[chosen] - lo[chosen])
    return parts


def _rest_parts(take: IntArray, rest: IntArray, spread: IntArray) -> list[_Part]:
    """Return the parts of the split slices' second draws, Binomial(rest, q), rest in [0, spread]: u[1] and u[2]."""
    zeros = np.zeros_like(spread)
    wide = spread >= THIRDS_SPREAD
    parts: list[_Part] = []
    narrow = np.flatnonzero(~wide)
    if narrow.size:
        parts.append(_Part(take[narrow], 1, rest[narrow], zeros[narrow], spread[narrow], add=True))
    chosen = np.flatnonzero(wide)
    if chosen.size:
        step = np.ceil(np.sqrt(spread[chosen] + 1.0)).astype(np.int64)
        times, below = np.divmod(rest[chosen], step[:, None])
        parts.append(_Part(take[chosen], 1, times * step[:, None], zeros[chosen], spread[chosen] // step * step,
                           add=True, step=step, times=times))
        parts.append(_Part(take[chosen], 2, below, zeros[chosen], step - 1, add=True))
    return parts


def _window(m: IntArray, q: FloatArray) -> tuple[IntArray, IntArray]:
    """Return the first k and the length of each row's window (Bernstein, tails < e^-46)."""
    third = TAIL_EXPONENT / 3.0
    h = np.ceil(third + np.sqrt(third * third + 2.0 * TAIL_EXPONENT * m * q * (1.0 - q))).astype(np.int64) + 1
    mean = m * q
    k_lo = np.clip(np.floor(mean).astype(np.int64) - h, 0, m)
    k_hi = np.clip(np.ceil(mean).astype(np.int64) + h, 0, m)
    return k_lo, k_hi - k_lo + 1


def _draw_parts(u: FloatArray, scores: Float32Array, q: FloatArray, parts: list[_Part], out: IntArray) -> None:
    """Write the draws of every part into ``out``, from one table of CDF rows for all of them."""
    first = np.concatenate([p.first for p in parts])
    step = np.concatenate([np.ones_like(p.first) if p.step is None else p.step for p in parts])
    n_rows = (np.concatenate([p.last for p in parts]) - first) // step + 1
    first_row = np.cumsum(n_rows) - n_rows
    slice_of_row = np.repeat(np.arange(len(first)), n_rows)
    row_m = first[slice_of_row] + (np.arange(int(n_rows.sum())) - first_row[slice_of_row]) * step[slice_of_row]
    row_q = np.concatenate([q[p.take] for p in parts])[slice_of_row]
    k_lo, span = _window(row_m, row_q)
    cdf, start = _cdf_rows(row_m, row_q, k_lo, span)
    skew = (1.0 - 2.0 * row_q) / 6.0
    rows = _Rows(
        centre=(row_m * row_q - skew + 0.5).astype(np.float32),  # + 0.5: continuity
        sd=np.sqrt(row_m * row_q * (1.0 - row_q)).astype(np.float32),
        skew=skew.astype(np.float32),
        before=start - k_lo - 1,
    )
    chunk = max(1, CHUNK_DRAWS // u.shape[1])
    at = 0
    for part in parts:
        part_rows = first_row[at : at + len(part.take)]
        at += len(part.take)
        # a draw's row: part_rows + (m - first) / step, which is m + base when the step is 1
        base = part_rows - part.first if part.times is None else part_rows
        tiled = np.tile(u[part.uniform], min(chunk, len(part.take)))
        for begin in range(0, len(part.take), chunk):
            c = slice(begin, begin + chunk)
            row = base[c, None] + (part.m[c] if part.times is None else part.times[c])
            found = _lookup(cdf, rows, row, part.m[c], scores[part.uniform], tiled)
            if part.add:
                out[part.take[c]] += found
            else:
                out[part.take[c]] = found


@dataclass(frozen=True)
class _Rows:
    """Per CDF row: where a draw's search starts (centre + sd z + skew z^2), and where k - 1 sits in the table.

    The start is float32: the walk ends at the same exact k from any start in the row,
    and float32 halves the work of computing it.
    """

    centre: Float32Array
    sd: Float32Array
    skew: Float32Array
    before: IntArray


def _lookup(cdf: FloatArray, rows: _Rows, row: IntArray, m: IntArray, z: Float32Array, u: FloatArray) -> IntArray:
    """Return the draws whose CDF rows are ``row`` (slices x resamples, or slices x 1); ``z`` is (z, z^2).

    ``u`` is the uniforms tiled flat, at least one run of them per slice.
    """
    guess = rows.centre[row] + rows.sd[row] * z[0]  # Cornish-Fisher, from a rough normal quantile z
    guess += rows.skew[row] * z[1]
    # |guess - mean| < 4.91 sd + 5 < h: only [0, m] can cut it, and the row holds all of [0, m] there
    position = guess.astype(np.int64)
    np.maximum(position, 0, out=position)
    np.minimum(position, m, out=position)
    before = rows.before[row]
    position += before
    found = _walk(cdf, position.ravel(), u[: position.size]).reshape(position.shape)
    found -= before
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


def _walk(cdf: FloatArray, before: IntArray, u: FloatArray) -> IntArray:
    """Return, per draw, the position just before the first entry of its CDF row that reaches u, from ``before``.

    Working one entry back, both checks index a table directly (no ``position - 1``).
    """
    at = cdf[1:]
    up = np.flatnonzero(at[before] < u)
    while up.size:
        before[up] += 1
        up = up[at[before[up]] < u[up]]
    down = np.flatnonzero(cdf[before] >= u)
    while down.size:
        before[down] -= 1
        down = down[cdf[before[down]] >= u[down]]
    return before
