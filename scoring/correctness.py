"""Per-item correctness of a scored file, packed into bits for the server (docs/METRICS.md, Figures on the board).

The exact McNemar test behind ``p_vs_previous`` needs, for two submissions, which items
each got right. The scorer keeps that as two bit strings per score (``numpy.packbits``
of ``correct`` and ``answered``, in the item order of the label version scored against):
about n/4 bytes, never served and never logged, like the labels they come from.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from scoring.labels import LabelSet
from scoring.types import ABSTAIN, Predictions

BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class ItemCorrectness:
    """Which items a file answered and which it answered correctly, in label-set item order."""

    correct: BoolArray
    answered: BoolArray

    def packed(self) -> tuple[bytes, bytes]:
        """Return (correct, answered) as numpy.packbits bytes (big-endian bit order, zero-padded)."""
        return pack_bits(self.correct), pack_bits(self.answered)


def item_correctness(labels: LabelSet, predictions: Predictions) -> ItemCorrectness:
    """Return the per-item correctness of predictions against labels (an abstention is never correct)."""
    answer = np.asarray(predictions.answer).astype(np.int64)
    if answer.shape != (labels.n,):
        raise ValueError(f"predictions cover {answer.shape} items, the label set has {labels.n}")
    answered = answer != ABSTAIN
    correct = answered & (answer == labels.gold.astype(np.int64))
    return ItemCorrectness(correct=correct, answered=answered)


def pack_bits(flags: BoolArray) -> bytes:
    """Return a boolean array as packed bits."""
    return bytes(np.packbits(np.asarray(flags, dtype=bool)).tobytes())


def unpack_bits(data: bytes, n: int) -> BoolArray:
    """Return the first n flags of packed bits; ValueError when data holds fewer than n."""
    if len(data) * 8 < n:
        raise ValueError(f"{len(data)} bytes hold fewer than {n} flags")
    return np.unpackbits(np.frombuffer(data, dtype=np.uint8), count=n).astype(bool)
