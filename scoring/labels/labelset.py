"""The hidden label set of a phase: items in file order, gold answers and breakdown metadata.

``scoring.labels.load_labels`` builds one from a label file; this module only holds
its layout (per-item numpy arrays, membership tables of breakdown fields) and the
lookup of prediction ids among its ids (``scoring.labels.ids``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from scoring.labels import ids as id_match
from scoring.types import NO_BUCKET, PhaseConfig


@dataclass(frozen=True)
class Membership:
    """Which items carry which value of one breakdown field; an item may carry several.

    One row per (item, value), in no particular order.
    """

    values: tuple[str, ...]  # sorted
    items: npt.NDArray[np.int64]  # item index of each row
    codes: npt.NDArray[np.int32]  # index into ``values`` of each row


def _none_int8() -> npt.NDArray[np.int8]:
    """Return an empty int8 array (metadata not given)."""
    return np.empty(0, dtype=np.int8)


def _none_int32() -> npt.NDArray[np.int32]:
    """Return an empty int32 array (metadata not given)."""
    return np.empty(0, dtype=np.int32)


def _none_float() -> npt.NDArray[np.float64]:
    """Return an empty float64 array (metadata not given)."""
    return np.empty(0, dtype=np.float64)


@dataclass(frozen=True)
class LabelSet:
    """Every item of a label file, in file order, with its gold class code and metadata.

    Metadata arrays left empty (e.g. in a hand-built label set) are filled with "no
    value" for every item: popularity -1, popularity_value NaN, groups and pairs -1,
    split 0 (public).
    """

    config: PhaseConfig
    ids: pa.Array  # pa.string(), length n, unique
    gold: npt.NDArray[np.int8]  # class code per item (index into config.options)
    popularity: npt.NDArray[np.int8] = field(default_factory=_none_int8)  # -1 none, 0 tail, 1 torso, 2 head
    popularity_value: npt.NDArray[np.float64] = field(default_factory=_none_float)  # numeric popularity or NaN
    groups: npt.NDArray[np.int32] = field(default_factory=_none_int32)  # group code or -1
    pairs: npt.NDArray[np.int32] = field(default_factory=_none_int32)  # pair code or -1
    split: npt.NDArray[np.int8] = field(default_factory=_none_int8)  # 0 public, 1 private
    has_split: bool = False  # whether any item of the file had a split field
    memberships: Mapping[str, Membership] = field(default_factory=dict)  # per breakdown field
    popularity_cuts: tuple[float, float] | None = None  # (tail at or below, head from/above)
    warnings: tuple[str, ...] = ()  # notes for the organizer, never copied into results
    id_order: npt.NDArray[np.int64] | None = field(default=None, compare=False, repr=False)  # see id_match

    def __post_init__(self) -> None:
        """Fill metadata left empty with "no value", and check every array has one entry per item."""
        n = len(self.ids)
        for name, fill in (("popularity", NO_BUCKET), ("popularity_value", np.nan),
                           ("groups", -1), ("pairs", -1), ("split", 0)):
            array = getattr(self, name)
            if len(array) == 0 and n:
                object.__setattr__(self, name, np.full(n, fill, dtype=array.dtype))
            elif len(array) != n:
                raise ValueError(f"LabelSet.{name} has {len(array)} entries for {n} items")
        if len(self.gold) != n:
            raise ValueError(f"LabelSet.gold has {len(self.gold)} entries for {n} items")

    @property
    def n(self) -> int:
        """Return the number of items."""
        return len(self.ids)

    def positions(self, ids: pa.Array | pa.ChunkedArray | Sequence[str]) -> npt.NDArray[np.int64]:
        """Return each id's item index, or -1 where the label set has no such id."""
        values = ids if isinstance(ids, (pa.Array, pa.ChunkedArray)) else pa.array(list(ids), type=pa.string())
        values = values.cast(pa.string())
        if isinstance(values, pa.ChunkedArray):
            values = values.combine_chunks()
        if len(values) == self.n and values.equals(self.ids):  # a file in label order: no hashing
            return np.arange(self.n, dtype=np.int64)
        return id_match.find(values, self.ids, self.sort_order())

    def sort_order(self) -> npt.NDArray[np.int64] | None:
        """Return the order that sorts the ids' keys (computed once), None when ids are too long."""
        if "_sort_order" not in self.__dict__:
            computed = self.id_order if self.id_order is not None else id_match.sort_order(self.ids)
            object.__setattr__(self, "_sort_order", computed)
        order: npt.NDArray[np.int64] | None = self.__dict__["_sort_order"]
        return order
