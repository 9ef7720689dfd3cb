"""Load a hidden label file (docs/FORMATS.md): parse, check once, build the label set; cached on disk when asked.

The fast parser (pyarrow) is tried first; when it cannot read the file exactly, or the
checker refuses what it read, the careful parser reads the file again line by line
and the same checker runs on that, so every error names the line it is on. The two
parsers differ only in how they parse, never in what is checked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import pyarrow as pa

from scoring.config import ConfigSource, breakdown_fields, load_config, read_config_object
from scoring.labels import cache as label_cache
from scoring.labels.build import build_label_set
from scoring.labels.byte_scan import LabelSource
from scoring.labels.careful import parse_careful
from scoring.labels.check import EarlyConfig, ItemColumns, check
from scoring.labels.fast import parse_fast
from scoring.labels.labelset import LabelSet
from scoring.producible import check_paths
from scoring.types import LabelFileError, PhaseConfig
from scoring.views import config_paths


@dataclass(frozen=True)
class CheckedFile:
    """A label file's checked columns and phase config, and which parser read it."""

    columns: ItemColumns
    config: PhaseConfig
    parser: Literal["fast", "careful"]


def load_labels(source: LabelSource, config: ConfigSource = None, *, cache: bool = False) -> LabelSet:
    """Read and check a label file; without a config, infer one (docs/FORMATS.md, Without a config).

    Raises LabelFileError, naming the line, for anything docs/FORMATS.md (Hidden label file) refuses. With
    ``cache`` (and unless TAILBOARD_LABEL_CACHE=0) the parsed label set is kept on
    disk and reused while the file, the config and this code stay the same
    (``scoring.labels.cache``).
    """
    if cache and label_cache.enabled():
        labels = label_cache.cached_load(source, config, lambda: load_labels(source, config))
    else:
        early = early_config(config)
        fields = early.breakdowns if isinstance(early, PhaseConfig) else breakdown_fields(early or {})
        checked = read_checked(source, early, fields)
        labels = build_label_set(checked.columns, checked.config)
        pa.default_memory_pool().release_unused()  # return the parser's scratch memory before anything else runs
    check_paths(labels, config_paths(labels.config.primary_metric, labels.config.views))
    return labels


def read_checked(source: LabelSource, config: EarlyConfig, fields: tuple[str, ...]) -> CheckedFile:
    """Parse fast if that is exact and the file passes the checks, else parse carefully and check again."""
    raw = parse_fast(source, fields)
    if raw is not None:
        try:
            columns, resolved = check(raw, config, fields)
            return CheckedFile(columns, resolved, "fast")
        except LabelFileError:
            pass  # the careful parse finds the same problem and the exact line and text to name
        del raw
    columns, resolved = check(parse_careful(source, fields), config, fields)
    return CheckedFile(columns, resolved, "careful")


def early_config(config: ConfigSource) -> PhaseConfig | dict[str, Any] | None:
    """Return the checked config when it needs no labels, else its raw object (or None)."""
    if config is None or isinstance(config, PhaseConfig):
        return config
    raw = dict(read_config_object(config))
    complete = "task_type" in raw and (raw["task_type"] != "multiple_choice" or "options" in raw)
    return load_config(raw) if complete else raw
