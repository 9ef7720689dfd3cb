"""The count tables every metric reads: one slice, or a batch of slices or resamples.

Every slice is reduced to these tables before any metric is computed:

- ``cells``: shape ``(..., K, K + 1)``; ``cells[g, 0]`` counts abstentions on items of
  gold class ``g`` and ``cells[g, p + 1]`` answers ``p`` on them;
- ``groups``: shape ``(..., 2)``; groups with a wrong or unanswered item, and groups
  whose every item is right (``None`` when no item of the slice has a group);
- ``calibration``: shape ``(..., 10, 3)``; per confidence bin the answered items, the
  correct ones and the sum of their confidences (``None`` without confidences);
- ``ranking``: shape ``(..., L, 2)``; per confidence level, from the most confident
  down, then one last level for the abstentions: the items and the wrong ones among
  them (abstentions count as wrong). Levels with no items may appear anywhere
  (``None`` without confidences);
- ``pairs``: shape ``(..., 2, K, K + 1)``; the cells of the head items (``[0]``) and of
  the tail items (``[1]``) of the slice's complete pairs, one head and one tail item
  each (``None`` for a slice whose pairs are not counted, or that has none). The
  slice's ``pair_outcomes`` list the same pairs by outcome, to resample pairs whole.

Leading dimensions are batch dimensions, so the same metric functions score one slice
or a thousand bootstrap resamples at once.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
CountArray = npt.NDArray[np.int64]

CALIBRATION_BINS = 10


@dataclass(frozen=True)
class PairOutcomes:
    """A slice's complete head/tail pairs by outcome: each distinct (head cell, tail cell) and how many pairs.

    A cell is the flat code ``gold * (K + 1) + answer + 1`` of the cells table (answer
    -1 an abstention). Outcomes are sorted by (head, tail), so the same pairs always list
    the same way.
    """

    head: CountArray
    tail: CountArray
    count: CountArray


@dataclass(frozen=True)
class SliceCounts:
    """The count tables of one slice (or of a batch of resampled slices)."""

    cells: CountArray
    binary: bool
    groups: CountArray | None = None
    calibration: FloatArray | None = None
    ranking: CountArray | None = None
    pairs: CountArray | None = None
    pair_outcomes: PairOutcomes | None = None  # single slices only

    @property
    def n(self) -> int:
        """Return the number of items of a single (unbatched) slice."""
        return int(self.cells.sum())

    @functools.cached_property
    def sums(self) -> tuple[CountArray, CountArray, CountArray]:
        """Return the counts N, A and C (``totals`` of the cells), computed once."""
        return totals(self.cells)

    @functools.cached_property
    def per_class(self) -> tuple[CountArray, CountArray, CountArray]:
        """Return per class the true positives, gold items and answers, computed once."""
        cells = self.cells
        return np.diagonal(cells[..., 1:], axis1=-2, axis2=-1), cells.sum(axis=-1), cells[..., 1:].sum(axis=-2)

    @functools.cached_property
    def per_class_f1(self) -> tuple[FloatArray, CountArray]:
        """Return per class 2tp / (gold + predicted), 0 where both are 0, and gold + predicted, computed once.

        f1 and macro_f1 both read it. It keeps the layout of the count tables: in a
        bootstrap batch each class's values are contiguous, so every pass runs on long
        contiguous stretches instead of stepping between classes.
        """
        tp, gold, predicted = self.per_class
        den = gold + predicted
        # where den is 0 so is tp: 0 / 1 gives the 0 without a masked divide
        f1: FloatArray = np.true_divide(2 * tp, np.maximum(den, 1))
        return f1, den


def totals(cells: CountArray) -> tuple[CountArray, CountArray, CountArray]:
    """Return the counts N, A and C of a cells table."""
    n = cells.sum(axis=(-2, -1))
    answered = cells[..., 1:].sum(axis=(-2, -1))
    correct = np.diagonal(cells[..., 1:], axis1=-2, axis2=-1).sum(axis=-1)
    return n, answered, correct
