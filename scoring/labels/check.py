"""The one checker of label files (docs/FORMATS.md, Hidden label file): both parsers' output ends here.

``check`` applies every field's rule (``scoring.labels.rules``) to a ``RawFile`` and
raises LabelFileError naming the first bad line of the file; a line the careful
parser could not read counts after every bad row before it. It then settles the
phase config (inferring what the config leaves out from the labels, docs/FORMATS.md, Without a config) and
converts the gold labels under it. The message may quote label data: it is for
organizers only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from scoring.config import infer_config, load_config
from scoring.labels import rules
from scoring.labels.raw import RawColumn, RawFile
from scoring.labels.rules import BadRow
from scoring.types import LabelFileError, PhaseConfig

EarlyConfig = PhaseConfig | Mapping[str, Any] | None
"""A checked config, a raw config object still missing what the labels tell, or nothing."""


@dataclass(frozen=True)
class ItemColumns:
    """Per-item columns of a label file, checked, before popularity buckets and codes are made."""

    ids: pa.Array  # string, unique, non-empty
    gold: npt.NDArray[np.int8]
    pop_bucket: npt.NDArray[np.int8]  # -1 where absent or numeric
    pop_value: npt.NDArray[np.float64]  # NaN where absent or a bucket name
    group: pa.Array  # string, null where absent
    pair: pa.Array
    split: npt.NDArray[np.int8] | None  # None when no item has a split
    fields: dict[str, tuple[pa.Array, ...]]  # per breakdown field: string and list<string> parts


def check(raw: RawFile, config: EarlyConfig, fields: tuple[str, ...]) -> tuple[ItemColumns, PhaseConfig]:
    """Return the checked columns and phase config of a parsed label file, or raise naming the first bad line."""
    ids, id_bad = rules.ids(raw.column("id"), raw.lines)
    label = raw.column("label")
    bucket, value, popularity_bad = rules.popularity(raw.column("popularity"))
    group, group_bad = rules.names(raw.column("group"), "group")
    pair, pair_bad = rules.names(raw.column("pair"), "pair")
    split, split_bad = rules.splits(raw.column("split"))
    parts = {name: rules.breakdown(raw.column(name), name) for name in fields}
    raise_first(raw, [id_bad, rules.label_presence(label), popularity_bad, group_bad, pair_bad, split_bad,
                      *(bad for _, bad in parts.values())])
    if raw.n == 0:
        raise LabelFileError("the label file is empty")
    resolved = resolve_config(config, label, raw)
    gold, gold_bad = rules.gold(label, resolved)
    raise_first(raw, [gold_bad])
    if resolved.primary_metric == "group_accuracy" and not raw.column("group").has_values():
        raise LabelFileError("the phase ranks by group_accuracy, but no item of the label file has a group")
    columns = ItemColumns(ids=ids, gold=gold, pop_bucket=bucket, pop_value=value, group=group, pair=pair,
                          split=split, fields={name: found for name, (found, _) in parts.items()})
    return columns, resolved


def raise_first(raw: RawFile, found: list[BadRow | None]) -> None:
    """Raise the bad row on the earliest line (the first listed on a tie); else the line that could not be read."""
    bad = [b for b in found if b is not None]
    if bad:
        first = min(bad, key=lambda b: b.row)
        raise LabelFileError(f"line {raw.lines[first.row]}: {first.message}")
    if raw.stop is not None:
        raise LabelFileError(f"line {raw.stop[0]}: {raw.stop[1]}")


def resolve_config(config: EarlyConfig, label: RawColumn, raw: RawFile) -> PhaseConfig:
    """Return the phase config, inferring from the labels what it leaves out (docs/FORMATS.md, Without a config)."""
    if isinstance(config, PhaseConfig):
        return config
    if config is None or "task_type" not in config:
        raise_first(raw, [rules.label_kinds(label, raw.lines)])
    distinct = label.distinct_values()
    return infer_config(distinct) if config is None else load_config(config, labels_hint=distinct)
