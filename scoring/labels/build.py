"""Turn checked label columns into a ``LabelSet``: popularity buckets, group and pair codes, memberships."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from scoring import arrays
from scoring.labels.check import ItemColumns
from scoring.labels.labelset import LabelSet, Membership
from scoring.types import HEAD, TAIL, TORSO, PhaseConfig


def build_label_set(columns: ItemColumns, config: PhaseConfig) -> LabelSet:
    """Return the label set of checked columns: popularity buckets, group and pair codes, memberships."""
    popularity, cuts = _buckets(columns.pop_bucket, columns.pop_value, config)
    memberships = {}
    warnings = []
    for name in config.breakdowns:
        membership = _membership(columns.fields.get(name))
        if membership is None:
            warnings.append(f"no item has the breakdown field {name!r} named in the phase config")
        else:
            memberships[name] = membership
    return LabelSet(
        config=config,
        ids=columns.ids,
        gold=columns.gold,
        popularity=popularity,
        popularity_value=columns.pop_value,
        groups=_codes(columns.group, len(columns.ids)),
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
    an item a value (the checker's breakdown rule); a value listed twice on an item counts once.
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
