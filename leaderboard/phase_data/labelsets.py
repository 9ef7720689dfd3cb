"""A phase's hidden label file: checked, stored under its content address, read back verified, parsed once.

Label files are checked against the phase's ``labels_sha256`` on every read, and
parsed label sets are kept in ``runtime.caches`` per (SHA-256, config): a new label
version gets a new cache entry, so a stale set is never used after ``replace_labels``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from typing import Any

import scoring
from leaderboard.models import Phase
from leaderboard.platform import InvalidInput, LabelIntegrityError, ScoringUnavailable, ServiceContext
from leaderboard.platform.storage.base import ObjectNotFound, StorageError, StoredObject
from leaderboard.platform.storage.local import LocalStorage
from scoring.types import LabelFileError, PhaseConfig

log = logging.getLogger(__name__)

CACHE_KEY = "labelsets"
CACHE_SIZE = 32
_lock = threading.Lock()
LEGACY_PREFIX = "phases/"  # keys phases/<id>/labels-v<k>.jsonl, from before labels were content-addressed


def labels_key(sha256: str) -> str:
    """Return the hidden-label storage key of the label file with this SHA-256 (hex).

    Content-addressed: a key only ever names one content, so two phases or two
    instances sharing a label directory can never overwrite each other's labels.
    """
    return f"labels/sha256/{sha256}.jsonl"


def store_labels(ctx: ServiceContext, *, labels: bytes) -> StoredObject:
    """Store a label file in the hidden-label storage under its content address."""
    digest = hashlib.sha256(labels).hexdigest()
    stored = ctx.labels.put(labels_key(digest), labels)
    if stored.sha256 != digest:  # the storage wrote other bytes than it was given
        raise StorageError(f"label file {stored.key!r} was stored with SHA-256 {stored.sha256}, not {digest}")
    return stored


def check_labels(labels: bytes, config: dict[str, Any] | None) -> scoring.LabelSet:
    """Parse an organizer's label file and config, or raise InvalidInput with scoring's message."""
    try:
        return scoring.load_labels(labels, config)
    except LabelFileError as error:
        raise InvalidInput(f"The label file or phase config is invalid: {error}") from None


def config_to_json(config: PhaseConfig) -> dict[str, Any]:
    """Return a checked phase config as the JSON object of docs/FORMATS.md#phase-config."""
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
    data["min_slice_items"] = config.min_slice_items
    data["public_feedback"] = config.public_feedback
    if config.ladder_step is not None:
        data["ladder_step"] = config.ladder_step
    if config.min_answered is not None:
        data["min_answered"] = config.min_answered
    if config.public_fields:
        data["public_fields"] = list(config.public_fields)
    if config.views:
        data["views"] = [view.to_json() for view in config.views]
    data["max_methods"] = config.max_methods
    if config.final_selections is not None:
        data["final_selections"] = config.final_selections
    if config.prediction_format != "ids":
        data["prediction_format"] = config.prediction_format  # line-ordered files (docs/FORMATS.md)
    return data


def has_private_split(labels: bytes) -> bool:
    """Return whether any item of an (already checked) label file is on the private split."""
    for line in labels.decode("utf-8-sig").splitlines():
        if line.strip() and json.loads(line).get("split") == "private":
            return True
    return False


def load_phase_labels(ctx: ServiceContext, phase: Phase) -> scoring.LabelSet:
    """Return the phase's current label set, read only if its bytes hash to phase.labels_sha256.

    Parsed sets are cached per (label SHA-256, config): an entry exists only for bytes
    that passed the check, so a cache hit is the verified file. Raises LabelIntegrityError
    (after logging it as an error) when the stored file is not the phase's.
    """
    key = (phase.labels_sha256, json.dumps(phase.task_config, sort_keys=True))
    with _lock:
        cache: dict[tuple[str, str], Any] = ctx.runtime.caches.setdefault(CACHE_KEY, {})  # type: ignore[assignment]
        if key in cache:
            return cache[key]
    labels = scoring.load_labels(read_phase_label_bytes(ctx, phase), phase.task_config)
    with _lock:
        if len(cache) >= CACHE_SIZE:
            cache.pop(next(iter(cache)))
        cache[key] = labels
    return labels


def read_phase_label_bytes(ctx: ServiceContext, phase: Phase) -> bytes:
    """Return the bytes of the phase's label file, or raise LabelIntegrityError if they are not its own."""
    data = _stored_label_bytes(ctx, phase)
    actual = hashlib.sha256(data).hexdigest()
    if actual != phase.labels_sha256:
        log.error("label file %r of phase %s failed its integrity check: expected sha256 %s, read %s; "
                  "nothing is scored against it", phase.labels_key, phase.id, phase.labels_sha256, actual)
        raise LabelIntegrityError(phase_id=phase.id, key=phase.labels_key, expected=phase.labels_sha256,
                                  actual=actual)
    return data


def ensure_intact(ctx: ServiceContext, phase: Phase) -> None:
    """Read the phase's label file afresh (no cache) and raise ScoringUnavailable, for organizers, unless intact."""
    try:
        read_phase_label_bytes(ctx, phase)
    except LabelIntegrityError as error:
        raise ScoringUnavailable(
            f"Phase {phase.id}'s label file fails its integrity check (stored at {error.key!r}: expected SHA-256 "
            f"{error.expected}, read {error.actual}). Nothing was retired or queued, and nothing is scored against "
            "it: restore the file (or replace the labels) and try again.") from None


def _stored_label_bytes(ctx: ServiceContext, phase: Phase) -> bytes:
    """Return the stored label file; keys of the old shared layout fall back to the legacy dir."""
    try:
        return ctx.labels.read_bytes(phase.labels_key)
    except ObjectNotFound:
        legacy = ctx.settings.legacy_labels_dir
        if legacy is None or ctx.settings.storage_url != "local" or not phase.labels_key.startswith(LEGACY_PREFIX):
            raise
    log.warning("phase %s reads its labels %r from the legacy dir %s; set TAILBOARD_LABELS_DIR to it "
                "or move the file under %s", phase.id, phase.labels_key, legacy, ctx.settings.labels_dir)
    return LocalStorage(legacy).read_bytes(phase.labels_key)


def label_fields(ctx: ServiceContext, phase: Phase) -> list[str]:
    """Return the fields of the phase's label records besides id, label and split (the breakdown candidates)."""
    fields: dict[str, None] = {}
    for line in read_phase_label_bytes(ctx, phase).splitlines():
        if line.strip():
            record = json.loads(line)
            if isinstance(record, dict):
                fields.update(dict.fromkeys(record))
    return sorted(set(fields) - {"id", "label", "split"})
