"""A disk cache of parsed label sets, so scoring a submission does not re-parse the labels.

One entry per key (``scoring.labels.cache_key``: label bytes, phase config, the source
of the code that builds label sets, ``LABEL_CACHE_FORMAT``): a directory holding
``items.arrow`` (one row per item: id, gold, popularity, group, pair, split codes and
the ids' sort order) and ``m<k>.arrow`` per breakdown field (membership rows), all
uncompressed Arrow IPC files (Feather v2) that are memory-mapped on load. The rest
(config, cuts, warnings, breakdown values) is JSON in the schema metadata. An entry
is written to a temporary directory and renamed into place; one that fails any check
on load is ignored, removed and rewritten. ``TAILBOARD_CACHE_DIR`` moves the cache,
``TAILBOARD_LABEL_CACHE=0`` turns it off.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from scoring.config import ConfigSource
from scoring.labels.byte_scan import LabelSource
from scoring.labels.cache_key import LABEL_CACHE_FORMAT, entry_key
from scoring.labels.labelset import LabelSet, Membership
from scoring.types import HEAD, NO_BUCKET, PhaseConfig
from scoring.views import View

_META = b"tailboard"
_ITEMS: tuple[tuple[str, pa.DataType], ...] = (
    ("ids", pa.string()), ("gold", pa.int8()), ("popularity", pa.int8()), ("popularity_value", pa.float64()),
    ("groups", pa.int32()), ("pairs", pa.int32()), ("split", pa.int8()),
)
_ORDER = ("id_order", pa.int64())
_ROWS = pa.schema([("items", pa.int64()), ("codes", pa.int32())])


def enabled() -> bool:
    """Return whether the environment allows the label cache (TAILBOARD_LABEL_CACHE)."""
    return os.environ.get("TAILBOARD_LABEL_CACHE", "1").strip().lower() not in ("0", "false", "no", "off")


def cache_dir() -> Path:
    """Return the cache directory: TAILBOARD_CACHE_DIR, else the user cache dir's tailboard/labels."""
    explicit = os.environ.get("TAILBOARD_CACHE_DIR")
    if explicit:
        return Path(explicit)
    try:
        from platformdirs import user_cache_dir

        base = Path(user_cache_dir("tailboard", appauthor=False))
    except ImportError:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "tailboard"
    return base / "labels"


def cached_load(source: LabelSource, config: ConfigSource,
                parse: Callable[[], LabelSet]) -> LabelSet:
    """Return the cached label set of this file and config, or ``parse()`` it and cache it."""
    key = entry_key(source, config)
    if key is None:
        return parse()
    entry = cache_dir() / key
    labels = read_entry(entry)
    if labels is None:
        labels = parse()
        if entry_key(source, config) == key:  # the file did not change while it was parsed
            write_entry(entry, labels)
    return labels


def write_entry(entry: Path, labels: LabelSet) -> None:
    """Write a label set as a cache entry, atomically; failures only mean no cache."""
    import tempfile  # only a cold load writes

    try:
        os.makedirs(entry.parent.parent, mode=0o700, exist_ok=True)
        os.makedirs(entry.parent, mode=0o700, exist_ok=True)
        temporary = Path(tempfile.mkdtemp(prefix=f".{entry.name}.", dir=entry.parent))
    except OSError:
        return
    try:
        _write_files(temporary, labels)
        if (entry / "items.arrow").is_file() and read_entry(entry) is not None:
            return  # another process wrote a good entry meanwhile: keep it
        shutil.rmtree(entry, ignore_errors=True)  # a corrupt entry that failed to load
        os.rename(temporary, entry)
    except (OSError, ValueError, pa.ArrowException):
        pass  # e.g. another process renamed its copy in first
    finally:
        shutil.rmtree(temporary, ignore_errors=True)


def _write_files(directory: Path, labels: LabelSet) -> None:
    """Write items.arrow and one m<k>.arrow per membership into a directory."""
    fields = list(labels.memberships)
    meta = {
        "format": LABEL_CACHE_FORMAT, "n": labels.n, "config": dataclasses.asdict(labels.config),
        "has_split": labels.has_split, "popularity_cuts": labels.popularity_cuts,
        "warnings": list(labels.warnings),
        "memberships": [{"field": name, "values": list(labels.memberships[name].values),
                         "rows": len(labels.memberships[name].items)} for name in fields],
    }
    columns = [labels.ids.cast(pa.string())] + [pa.array(np.ascontiguousarray(getattr(labels, name)), type=kind)
                                                for name, kind in _ITEMS[1:]]
    schema = pa.schema(list(_ITEMS))
    order = labels.sort_order()
    if order is not None:
        columns.append(pa.array(order, type=pa.int64()))
        schema = schema.append(pa.field(*_ORDER))
    schema = schema.with_metadata({_META: json.dumps(meta, allow_nan=False).encode()})
    _write_table(directory / "items.arrow", pa.Table.from_arrays(columns, schema=schema))
    for k, name in enumerate(fields):
        rows = labels.memberships[name]
        table = pa.Table.from_arrays([pa.array(rows.items), pa.array(rows.codes)], schema=_ROWS)
        _write_table(directory / f"m{k}.arrow", table)


def _write_table(path: Path, table: pa.Table) -> None:
    """Write one uncompressed Arrow IPC file."""
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)


def read_entry(entry: Path) -> LabelSet | None:
    """Return the label set of a cache entry, None (and the entry removed) when it fails a check."""
    if not (entry / "items.arrow").is_file():
        return None
    try:
        return _read_entry(entry)
    except (OSError, ValueError, KeyError, TypeError, IndexError, pa.ArrowException):
        shutil.rmtree(entry, ignore_errors=True)
        return None


def _read_table(path: Path) -> pa.Table:
    """Return the table of an Arrow IPC file, memory-mapped."""
    return pa.ipc.open_file(pa.memory_map(str(path), "r")).read_all()


def _column(table: pa.Table, name: str, kind: pa.DataType) -> pa.Array:
    """Return one column as a single array, checked for its type and for nulls."""
    column = table.column(name)
    array = column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
    if array.type != kind or array.null_count:
        raise ValueError(f"cache column {name} is not {kind} without nulls")
    return array


def _numbers(array: pa.Array, dtype: type[np.generic], low: float, high: float) -> npt.NDArray[Any]:
    """Return a numeric column as a read-only numpy view, checked to lie in [low, high]."""
    size = np.dtype(dtype).itemsize
    out = np.frombuffer(array.buffers()[1], dtype=dtype, count=len(array), offset=array.offset * size)
    if len(out) and (out.min() < low or out.max() > high):
        raise ValueError("cache column out of range")
    return out


def _config(raw: Mapping[str, Any]) -> PhaseConfig:
    """Return the phase config stored in an entry."""
    fields = {f.name for f in dataclasses.fields(PhaseConfig)}
    if set(raw) != fields:
        raise ValueError("cache config has other fields")
    values: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in raw.items()}
    values["views"] = tuple(View(name=v["name"], metric=v["metric"], columns=tuple(v["columns"]))
                            for v in values["views"])
    return PhaseConfig(**values)


def _memberships(entry: Path, specs: list[dict[str, Any]], n: int) -> dict[str, Membership]:
    """Return the membership tables of an entry, checked against their specs and the item count."""
    memberships = {}
    for k, spec in enumerate(specs):
        rows = _read_table(entry / f"m{k}.arrow")
        values = tuple(str(v) for v in spec["values"])
        if rows.schema.remove_metadata() != _ROWS or rows.num_rows != spec["rows"]:
            raise ValueError("cache membership of another shape")
        memberships[str(spec["field"])] = Membership(
            values=values,
            items=_numbers(_column(rows, "items", pa.int64()), np.int64, 0, n - 1),
            codes=_numbers(_column(rows, "codes", pa.int32()), np.int32, 0, len(values) - 1),
        )
    return memberships


def _read_entry(entry: Path) -> LabelSet:
    """Return the label set of an entry, raising ValueError (or Arrow's errors) on any mismatch."""
    table = _read_table(entry / "items.arrow")
    meta = json.loads(table.schema.metadata[_META])
    n = meta["n"]
    names = [name for name, _ in _ITEMS] + ([_ORDER[0]] if _ORDER[0] in table.column_names else [])
    if meta["format"] != LABEL_CACHE_FORMAT or table.num_rows != n or table.column_names != names:
        raise ValueError("cache entry of another format or length")
    config = _config(meta["config"])
    items = {name: _column(table, name, kind) for name, kind in _ITEMS}
    ids = items.pop("ids")
    order = None
    if _ORDER[0] in names:
        order = _numbers(_column(table, *_ORDER), np.int64, 0, n - 1)
    limit = np.iinfo(np.int32).max
    cuts = meta["popularity_cuts"]
    return LabelSet(
        config=config,
        ids=ids,
        gold=_numbers(items["gold"], np.int8, 0, len(config.options) - 1),
        popularity=_numbers(items["popularity"], np.int8, NO_BUCKET, HEAD),
        popularity_value=_numbers(items["popularity_value"], np.float64, -np.inf, np.inf),
        groups=_numbers(items["groups"], np.int32, -1, limit),
        pairs=_numbers(items["pairs"], np.int32, -1, limit),
        split=_numbers(items["split"], np.int8, 0, 1),
        has_split=bool(meta["has_split"]),
        memberships=_memberships(entry, meta["memberships"], n),
        popularity_cuts=None if cuts is None else (float(cuts[0]), float(cuts[1])),
        warnings=tuple(str(w) for w in meta["warnings"]),
        id_order=order,
    )
