"""The services' one door into the scoring library: labels, configs, predictions, metrics.

Label sets are parsed once per (phase id, label version) and kept in
``runtime.caches``; a new label version gets a new cache entry, so a stale set is
never used after ``replace_labels``.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import scoring
from scoring.types import LabelFileError, PhaseConfig, PredictionFileError

from leaderboard.models import Phase
from leaderboard.runtime import ServiceContext
from leaderboard.services.errors import InvalidInput

__all__ = ["LabelFileError", "PredictionFileError", "check_labels", "config_to_json", "evaluate",
           "has_private_split", "load_phase_labels", "read_predictions"]

CACHE_KEY = "labelsets"
CACHE_SIZE = 32
_lock = threading.Lock()


def check_labels(labels: bytes, config: dict[str, Any] | None) -> "scoring.LabelSet":
    """Parse an organizer's label file and config, or raise InvalidInput with scoring's message."""
    try:
        return scoring.load_labels(labels, config)
    except LabelFileError as error:
        raise InvalidInput(f"The label file or phase config is invalid: {error}") from None


def config_to_json(config: PhaseConfig) -> dict[str, Any]:
    """Return a checked phase config as the SPEC §2.2 JSON object."""
    data: dict[str, Any] = {
        "task_type": config.task_type,
        "primary_metric": config.primary_metric,
        "breakdowns": list(config.breakdowns),
        "missing_ids": config.missing_ids,
    }
    if config.task_type == "multiple_choice":
        data["options"] = list(config.options)
    if config.head_min is not None and config.tail_max is not None:
        data["popularity"] = {"head_min": config.head_min, "tail_max": config.tail_max}
    return data


def has_private_split(labels: bytes) -> bool:
    """Return whether any item of an (already checked) label file is on the private split."""
    for line in labels.decode("utf-8-sig").splitlines():
        if line.strip() and json.loads(line).get("split") == "private":
            return True
    return False


def load_phase_labels(ctx: ServiceContext, phase: Phase) -> "scoring.LabelSet":
    """Return the phase's current label set, parsed once per (phase id, label version)."""
    key = (phase.id, phase.label_version, phase.labels_sha256)
    with _lock:
        cache: dict[tuple[int, int, str], Any] = ctx.runtime.caches.setdefault(CACHE_KEY, {})  # type: ignore[assignment]
        if key in cache:
            return cache[key]
    data = ctx.labels.read_bytes(phase.labels_key)
    labels = scoring.load_labels(data, phase.task_config)
    with _lock:
        if len(cache) >= CACHE_SIZE:
            cache.pop(next(iter(cache)))
        cache[key] = labels
    return labels


def read_predictions(data: bytes, labels: "scoring.LabelSet", *, max_bytes: int) -> "scoring.Predictions":
    """Validate a prediction file against labels; raises PredictionFileError when it is invalid."""
    return scoring.read_predictions(data, labels, max_bytes=max_bytes)


def evaluate(labels: "scoring.LabelSet", predictions: "scoring.Predictions") -> dict[str, Any]:
    """Return the full, unrounded results object of SPEC §4."""
    return scoring.evaluate(labels, predictions)


def primary_metric(phase: Phase) -> str:
    """Return the phase's ranking metric."""
    return str(phase.task_config.get("primary_metric", "accuracy"))


def higher_is_better(metric: str) -> bool:
    """Return the metric's direction from scoring's registry (True for unknown names)."""
    from scoring.metrics import METRICS

    entry = METRICS.get(metric)
    return True if entry is None else bool(entry.higher_is_better)

