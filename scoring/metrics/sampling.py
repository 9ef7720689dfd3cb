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

All the rows one call needs, of every way and part, are built as one table
(``scoring.metrics.cdf_rows``), so the fixed cost of building CDF blocks is paid once
per call. A part with one m per slice (a slice drawn directly with the same m in every
resample, or the first of its split parts) inverts one row with all the uniforms, so its
draws come from the sorted uniforms at once (``invert_sorted``), with no lookups.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from scoring.metrics.cdf_rows import cdf_rows, invert_sorted, rank_uniforms, window

FloatArray = npt.NDArray[np.float64]
Float32Array = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.int64]

MAX_ENTRIES_PER_DRAW = 4  # a table larger than this many entries per draw is split in two
MAX_SPLIT_ENTRIES_PER_DRAW = 24  # ... and past this, the slice uses the generator
THIRDS_SPREAD = 48  # from this spread of m - lo, the second part is split again (B a + b)
CHUNK_DRAWS = 8192  # draws looked up at once: the working arrays stay in the processor's cache


def binomial(u: FloatArray, m: IntArray, q: FloatArray, *, seed: int, split: int,
             scores: Float32Array | None = None, ranks: IntArray | None = None,
             out: IntArray | None = None) -> IntArray:
    """Return draws of Binomial(m[s, r], q[s]) inverting the uniforms u (3, R), in ``out`` (S, R) when given.

    ``m`` is (S, R), or (S,) when every resample of a slice has the same m. ``scores``
    is ``start_scores(u)`` and ``ranks`` is ``rank_uniforms(u)``, for a caller that keeps
    them beside its fixed uniforms.
    """
    shape = (len(q), u.shape[1])
    lo, hi = (m, m) if m.ndim == 1 else (m.min(axis=1), m.max(axis=1))
    m = m[:, None] if m.ndim == 1 else m  # (S, 1) broadcasts: one row per slice, nothing to copy
    live = (q > 0.0) & (q < 1.0) & (hi > 0)
    q_safe = np.where(live, q, 0.5)
    direct = live & ((hi - lo + 1) * window(hi, q_safe)[1] <= MAX_ENTRIES_PER_DRAW * shape[1])
    split_size = window(lo, q_safe)[1] + (hi - lo + 1) * (hi - lo + 2) // 2
    halves = live & ~direct & (split_size <= MAX_SPLIT_ENTRIES_PER_DRAW * shape[1])
    out = np.empty(shape, dtype=np.int64) if out is None else out
    out[~(direct | halves)] = 0  # the parts write every row of the others
    certain = q >= 1.0
    out[certain] = np.broadcast_to(m, shape)[certain]
    parts = _parts(m, lo, hi, direct, halves)
    if parts:
        _draw_parts(u, scores, ranks, q, parts, out)
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

    ``m`` is each draw's m (S_p, R) or (S_p, 1), or when ``shared`` the call's whole m, of
    which the part's slices are the rows ``take`` (not copied: a part's chunks gather
    theirs); ``times`` each draw's (m - first) / step when the step is not 1. The first
    part of a slice writes its draws, later ones add theirs.
    """

    take: IntArray
    uniform: int
    m: IntArray
    first: IntArray
    last: IntArray
    add: bool
    step: IntArray | None = None
    times: IntArray | None = None
    shared: bool = False

    def own_m(self, c: slice) -> IntArray:
        """Return the m of the part's slices ``c``."""
        return self.m[self.take[c]] if self.shared else self.m[c]


def _parts(m: IntArray, lo: IntArray, hi: IntArray, direct: npt.NDArray[np.bool_],
           halves: npt.NDArray[np.bool_]) -> list[_Part]:
    """Return the parts live slices are drawn in: one row per m, or split in two (or three) parts."""
    parts: list[_Part] = []
    chosen = np.flatnonzero(direct)
    if chosen.size:
        parts.append(_Part(chosen, 0, m, lo[chosen], hi[chosen], add=False, shared=chosen.size < len(m)))
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


def _draw_parts(u: FloatArray, scores: Float32Array | None, ranks: IntArray | None, q: FloatArray,
                parts: list[_Part], out: IntArray) -> None:
    """Write the draws of every part into ``out``, from one table of CDF rows for all of them."""
    first_row, rows = _table(q, parts)
    chunk = max(1, CHUNK_DRAWS // u.shape[1])
    at = 0
    for part in parts:
        part_rows = first_row[at : at + len(part.take)]
        at += len(part.take)
        # a draw's row: part_rows + (m - first) / step, which is m + base when the step is 1
        base = part_rows - part.first if part.times is None else part_rows
        if part.m.shape[1] == 1:  # every resample inverts the slice's one row: all from the sorted uniforms
            row = base + part.own_m(slice(None))[:, 0]  # a part with one m per slice has step 1
            rank = rank_uniforms(u[part.uniform]) if ranks is None else ranks[part.uniform]
            k_lo = rows.k_lo[row]
            found = invert_sorted(rows.cdf, rows.before[row] + k_lo + 1, k_lo, rows.span[row], u[part.uniform], rank)
            _write(out, part, slice(None), found)
            continue
        z = start_scores(u[part.uniform]) if scores is None else scores[part.uniform]
        tiled = np.tile(u[part.uniform], min(chunk, len(part.take)))
        for begin in range(0, len(part.take), chunk):
            c = slice(begin, begin + chunk)
            m = part.own_m(c)
            row = base[c, None] + (m if part.times is None else part.times[c])
            _write(out, part, c, _lookup(rows, row, m, z, tiled))


def _write(out: IntArray, part: _Part, c: slice, found: IntArray) -> None:
    """Write (or add, for a later part) the draws of the part's slices ``c``."""
    if part.add:
        out[part.take[c]] += found
    else:
        out[part.take[c]] = found


def _table(q: FloatArray, parts: list[_Part]) -> tuple[IntArray, _Rows]:
    """Return the first row of each part's slices, and the CDF rows of every part."""
    first = np.concatenate([p.first for p in parts])
    step = np.concatenate([np.ones_like(p.first) if p.step is None else p.step for p in parts])
    n_rows = (np.concatenate([p.last for p in parts]) - first) // step + 1
    first_row = np.cumsum(n_rows) - n_rows
    slice_of_row = np.repeat(np.arange(len(first)), n_rows)
    row_m = first[slice_of_row] + (np.arange(int(n_rows.sum())) - first_row[slice_of_row]) * step[slice_of_row]
    row_q = np.concatenate([q[p.take] for p in parts])[slice_of_row]
    k_lo, span = window(row_m, row_q)
    cdf, start = cdf_rows(row_m, row_q, k_lo, span)
    skew = (1.0 - 2.0 * row_q) / 6.0
    return first_row, _Rows(
        cdf=cdf,
        centre=(row_m * row_q - skew + 0.5).astype(np.float32),  # + 0.5: continuity
        sd=np.sqrt(row_m * row_q * (1.0 - row_q)).astype(np.float32),
        skew=skew.astype(np.float32),
        before=start - k_lo - 1,
        k_lo=k_lo,
        span=span,
    )


@dataclass(frozen=True)
class _Rows:
    """The CDF table, and per row: where a draw's search starts (centre + sd z + skew z^2), where k - 1 sits.

    The start is float32: the walk ends at the same exact k from any start in the row,
    and float32 halves the work of computing it. ``k_lo`` and ``span`` are each row's window.
    """

    cdf: FloatArray
    centre: Float32Array
    sd: Float32Array
    skew: Float32Array
    before: IntArray
    k_lo: IntArray
    span: IntArray


def _lookup(rows: _Rows, row: IntArray, m: IntArray, z: Float32Array, u: FloatArray) -> IntArray:
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
    found = _walk(rows.cdf, position.ravel(), u[: position.size]).reshape(position.shape)
    found -= before
    return found


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
