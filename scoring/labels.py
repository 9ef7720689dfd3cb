"""The hidden label set of a phase: items, gold answers and breakdown metadata.

``load_labels`` reads a label file (SPEC §2.1) with one vectorized pyarrow pass when
the file is plain, and falls back to ``scoring.label_lines`` (one line at a time, with
line-numbered errors) when pyarrow fails or sees anything unusual: number ids, a
field that is a string on some lines and a list on others, an invalid value, a blank
line. Both readers produce the same ``Columns``; this module turns them into the
per-item numpy arrays the metrics count over.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from scoring import arrays, id_match
from scoring.config import breakdown_fields, load_config, read_config_object
from scoring.label_fast import read_fast
from scoring.label_lines import Columns, read_columns
from scoring.types import LabelFileError, PhaseConfig

NO_BUCKET, TAIL, TORSO, HEAD = -1, 0, 1, 2
BUCKET_NAMES: dict[int, str] = {HEAD: "head", TORSO: "torso", TAIL: "tail"}
"""Popularity bucket codes and names, in the order results list them."""


@dataclass(frozen=True)
class Membership:
    """Which items carry which value of one breakdown field; an item may carry several.

    One row per (item, value), in no particular order.
    """

    values: tuple[str, ...]  # sorted
    items: npt.NDArray[np.int64]  # item index of each row
    codes: npt.NDArray[np.int32]  # index into ``values`` of each row


def _none_int8() -> npt.NDArray[np.int8]:
    return np.empty(0, dtype=np.int8)


def _none_int32() -> npt.NDArray[np.int32]:
    return np.empty(0, dtype=np.int32)


def _none_float() -> npt.NDArray[np.float64]:
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


def load_labels(
    source: str | os.PathLike[str] | bytes,
    config: PhaseConfig | Mapping[str, Any] | str | os.PathLike[str] | None = None,
    *,
    cache: bool = False,
) -> LabelSet:
    """Read and check a label file; without a config, infer one (SPEC §4).

    Raises LabelFileError, naming the line, for anything that breaks SPEC §2.1. With
    ``cache`` (and unless TAILBOARD_LABEL_CACHE=0) the parsed label set is kept on
    disk and reused while the file and config stay the same (``scoring.label_cache``).
    """
    if cache:
        from scoring import label_cache

        if label_cache.enabled():
            return label_cache.cached_load(source, config, lambda: load_labels(source, config))
    early = _early_config(config)
    fields = early.breakdowns if isinstance(early, PhaseConfig) else breakdown_fields(early or {})
    fast = read_fast(source, early, fields)
    columns, resolved = fast if fast is not None else read_columns(source, early, fields)
    labels = _build(columns, resolved)
    pa.default_memory_pool().release_unused()  # return the parser's scratch memory before anything else runs
    return labels


def _early_config(
    config: PhaseConfig | Mapping[str, Any] | str | os.PathLike[str] | None,
) -> PhaseConfig | dict[str, Any] | None:
    """Return the checked config when it needs no labels, else its raw object (or None)."""
    if config is None or isinstance(config, PhaseConfig):
        return config
    raw = dict(read_config_object(config))
    complete = "task_type" in raw and (raw["task_type"] != "multiple_choice" or "options" in raw)
    return load_config(raw) if complete else raw


def _build(columns: Columns, config: PhaseConfig) -> LabelSet:
    """Return the label set: popularity buckets, group and pair codes, memberships."""
    popularity, cuts = _buckets(columns.pop_bucket, columns.pop_value, config)
    memberships = {}
    warnings = []
    for name in config.breakdowns:
        membership = _membership(columns.fields.get(name))
        if membership is None:
            warnings.append(f"no item has the breakdown field {name!r} named in the phase config")
        else:
            memberships[name] = membership
    groups = _codes(columns.group, len(columns.ids))
    if config.primary_metric == "group_accuracy" and not (groups >= 0).any():
        raise LabelFileError("the phase ranks by group_accuracy, but no item of the label file has a group")
    return LabelSet(
        config=config,
        ids=columns.ids,
        gold=columns.gold,
        popularity=popularity,
        popularity_value=columns.pop_value,
        groups=groups,
        pairs=_codes(columns.pair, len(columns.ids)),
        split=columns.split if columns.split is not None else np.zeros(len(columns.ids), np.int8),
        has_split=columns.split is not None,
        memberships=memberships,
        popularity_cuts=cuts,
        warnings=tuple(warnings),
    )


def _buckets(
    bucket: npt.NDArray[np.int8], value: npt.NDArray[np.float64], config: PhaseConfig
) -> tuple[npt.NDArray[np.int8], tuple[float, float] | None]:
    """Return bucket codes, numeric popularity bucketed by thresholds or file tertiles."""
    numeric = ~np.isnan(value)
    if not numeric.any():
        return bucket, None
    counts = value[numeric]
    if config.head_min is not None and config.tail_max is not None:
        tail, head = counts <= config.tail_max, counts >= config.head_min
        cuts = (config.tail_max, config.head_min)
    else:
        q1, q2 = np.quantile(counts, [1 / 3, 2 / 3])
        tail, head = counts <= q1, counts > q2
        cuts = (float(q1), float(q2))
    out = bucket.copy()
    out[numeric] = np.where(tail, TAIL, np.where(head, HEAD, TORSO))
    return out, cuts


def _codes(names: pa.Array | None, n: int) -> npt.NDArray[np.int32]:
    """Return a code per item for a name column (group, pair), -1 where absent."""
    if names is None or names.null_count == len(names):
        return np.full(n, -1, dtype=np.int32)
    return arrays.values(names.dictionary_encode().indices, np.int32, fill=-1)


def _membership(parts: tuple[pa.Array, ...] | None) -> Membership | None:
    """Return the membership table of a breakdown field, None if no item has it.

    ``parts`` are aligned columns of strings or lists of strings that never both give
    an item a value (the fast reader checks); a value listed twice on an item counts once.
    """
    segments: list[tuple[npt.NDArray[np.int64], bool]] = []
    flat_parts = []
    for column in parts or ():
        if pa.types.is_list(column.type):
            segments.append((arrays.values(pc.list_parent_indices(column), np.int64), True))
            flat_parts.append(pc.list_flatten(column))
        else:
            valid = column.is_valid()
            segments.append((np.flatnonzero(arrays.values(valid, np.bool_)), False))
            flat_parts.append(column.filter(valid))
    if sum(len(f) for f in flat_parts) == 0:
        return None
    encoded = pa.concat_arrays(flat_parts).dictionary_encode()
    names = encoded.dictionary.to_pylist()
    order = sorted(range(len(names)), key=names.__getitem__)
    rank = np.empty(len(names), dtype=np.int64)
    rank[order] = np.arange(len(names))
    codes = rank[arrays.values(encoded.indices, np.int64)]
    out_items, out_codes, start = [], [], 0
    for items, is_list in segments:
        part_codes = codes[start : start + len(items)]
        start += len(items)
        if is_list and len(items):
            keys = np.sort(items * len(names) + part_codes)  # np.unique hashes, and is slower
            keys = keys[np.concatenate(([True], keys[1:] != keys[:-1]))]
            items, part_codes = keys // len(names), keys % len(names)
        out_items.append(items)
        out_codes.append(part_codes)
    values = tuple(names[i] for i in order)
    items_all, codes_all = np.concatenate(out_items), np.concatenate(out_codes)
    return Membership(values=values, items=items_all.astype(np.int64), codes=codes_all.astype(np.int32))
