"""Read and check a phase config, or infer one from the labels (docs/FORMATS.md, Phase config; Without a config)."""

from __future__ import annotations

import json
import math
import os
import string
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, cast

from scoring.public_fields import check_public_fields
from scoring.types import (
    BINARY_OPTIONS,
    DEFAULT_MIN_SLICE_ITEMS,
    LabelFileError,
    MissingIds,
    PhaseConfig,
    PredictionFormat,
    PublicFeedback,
    TaskType,
)
from scoring.views import check_path, check_views

PROBING_KEYS = ("min_slice_items", "public_feedback", "ladder_step", "min_answered")
"""The probing-defence settings of docs/PROBING.md; the platform may change them after a phase exists."""
ENTRY_KEYS = ("max_methods", "final_selections")
"""The entry settings of docs/ENTRIES.md; like the probing settings, editable after a phase exists."""
CONFIG_KEYS = ("task_type", "options", "primary_metric", "breakdowns", "popularity", "missing_ids", *PROBING_KEYS,
               "public_fields", "views", *ENTRY_KEYS, "prediction_format")
DEFAULT_MAX_METHODS = 3
TASK_TYPES = ("binary", "multiple_choice")
MISSING_IDS = ("abstain", "error")
PUBLIC_FEEDBACK = ("exact", "ladder")
PREDICTION_FORMATS = ("ids", "lines")
RESERVED_FIELDS = ("id", "label")

ConfigSource = PhaseConfig | Mapping[str, Any] | str | os.PathLike[str] | None
"""What a phase config may be given as: checked, a raw object, a JSON file's path, or nothing (inferred)."""

BINARY_WORDS: dict[str, int] = {"false": 0, "no": 0, "0": 0, "true": 1, "yes": 1, "1": 1}
"""Spellings of a binary gold label (compared after trimming and lower-casing)."""


def binary_code(value: object) -> int | None:
    """Return 0/1 for a boolean-ish gold label, else None."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)):
        return int(value) if value in (0, 1) else None
    if isinstance(value, str):
        return BINARY_WORDS.get(value.strip().lower())
    return None


def letter(value: object) -> str | None:
    """Return the upper-case letter a gold label is (``"b"`` -> ``"B"``), else None."""
    if isinstance(value, str):
        text = value.strip().upper()
        if len(text) == 1 and text in string.ascii_uppercase:
            return text
    return None


def infer_config(label_values: Iterable[object]) -> PhaseConfig:
    """Return the config inferred from gold labels (docs/FORMATS.md, Without a config), or raise LabelFileError."""
    values = list(label_values)
    if not values:
        raise LabelFileError("cannot infer the task type: there are no labels")
    if all(binary_code(v) is not None for v in values):
        return PhaseConfig(task_type="binary")
    letters = [letter(v) for v in values]
    if all(x is not None for x in letters):
        highest = max(x for x in letters if x is not None)
        options = tuple(string.ascii_uppercase[: string.ascii_uppercase.index(highest) + 1])
        return PhaseConfig(task_type="multiple_choice", options=options)
    odd = [v for v, x in zip(values, letters, strict=True) if x is None and binary_code(v) is None]
    if not odd:
        raise LabelFileError("cannot infer the task type: some labels are yes/no and others letters; "
                             "give a phase config with task_type")
    raise LabelFileError(
        f"cannot infer the task type: label {odd[0]!r} is neither yes/no nor one letter; "
        "give a phase config with task_type"
    )


def load_config(
    source: PhaseConfig | Mapping[str, Any] | str | os.PathLike[str] | bytes | None,
    *,
    labels_hint: Iterable[object] | None = None,
) -> PhaseConfig:
    """Return the checked phase config from a dict, a JSON file or JSON bytes.

    ``labels_hint`` (the gold label values) fills in what the config leaves out:
    everything when ``source`` is None, ``task_type`` and multiple-choice ``options``
    otherwise. Every problem raises LabelFileError.
    """
    if isinstance(source, PhaseConfig):
        return source
    if source is None:
        if labels_hint is None:
            raise LabelFileError("no phase config and no labels to infer one from")
        return infer_config(labels_hint)
    raw = read_config_object(source)
    hint = list(labels_hint) if labels_hint is not None else None
    return _check(raw, hint)


def read_config_object(source: Mapping[str, Any] | str | os.PathLike[str] | bytes) -> Mapping[str, Any]:
    """Return the raw config object of a dict, a JSON file or JSON bytes, unchecked."""
    if isinstance(source, Mapping):
        return source
    try:
        text = source.decode("utf-8-sig") if isinstance(source, bytes) else Path(source).read_text("utf-8-sig")
        raw = json.loads(text, parse_constant=_reject_constant)
    except OSError as exc:
        raise LabelFileError(f"cannot read the phase config: {exc}") from exc
    except ValueError as exc:  # also UnicodeDecodeError
        raise LabelFileError(f"the phase config is not valid JSON: {exc}") from exc
    if not isinstance(raw, dict):
        raise LabelFileError("the phase config must be a JSON object")
    return raw


def _reject_constant(name: str) -> None:
    """Refuse NaN and Infinity, which strict JSON does not have."""
    raise ValueError(f"{name} is not JSON")


def _check(raw: Mapping[str, Any], hint: list[object] | None) -> PhaseConfig:
    """Return a PhaseConfig from a config object, or raise naming the first problem."""
    unknown = sorted(set(raw) - set(CONFIG_KEYS))
    if unknown:
        raise LabelFileError(f"phase config: unknown key(s) {unknown}; valid keys: {', '.join(CONFIG_KEYS)}")
    task_type, options = _task(raw, hint)
    head_min, tail_max = _popularity(raw.get("popularity"))
    breakdowns = _breakdowns(raw.get("breakdowns", ["category"]))
    return PhaseConfig(
        task_type=task_type,
        options=options,
        primary_metric=check_path(raw.get("primary_metric", "accuracy"), key="primary_metric"),
        views=check_views(raw.get("views")),
        breakdowns=breakdowns,
        public_fields=check_public_fields(raw.get("public_fields"), breakdowns=breakdowns),
        head_min=head_min,
        tail_max=tail_max,
        missing_ids=cast(MissingIds, _choice(raw.get("missing_ids", "abstain"), "missing_ids", MISSING_IDS)),
        prediction_format=cast(PredictionFormat, _choice(raw.get("prediction_format", "ids"), "prediction_format",
                                                         PREDICTION_FORMATS)),
        **probing_settings(raw),
        **entry_settings(raw),
    )


def entry_settings(raw: Mapping[str, Any]) -> dict[str, Any]:
    """Return the checked entry settings (docs/ENTRIES.md): max_methods (>= 1, default 3), final_selections."""
    return {
        "max_methods": _whole(raw.get("max_methods", DEFAULT_MAX_METHODS), "max_methods", nullable=False),
        "final_selections": _whole(raw.get("final_selections"), "final_selections", nullable=True),
    }


def probing_settings(raw: Mapping[str, Any]) -> dict[str, Any]:
    """Return the checked probing settings (docs/PROBING.md) of a raw config object, defaults filled in.

    ``min_slice_items`` is a whole number >= 1; ``public_feedback`` is exact or ladder;
    ``ladder_step`` is null (the default step) or a number in (0, 1]; ``min_answered``
    is null (no minimum) or a whole number >= 1. Each error names its key.
    """
    feedback = _choice(raw.get("public_feedback", "exact"), "public_feedback", PUBLIC_FEEDBACK)
    step = raw.get("ladder_step")
    if step is not None and (not _is_number(step) or not 0 < step <= 1):
        raise LabelFileError(f"phase config: ladder_step must be a number above 0 and at most 1 "
                             f"(or null for the default), not {step!r}")
    return {
        "min_slice_items": _whole(raw.get("min_slice_items", DEFAULT_MIN_SLICE_ITEMS), "min_slice_items",
                                  nullable=False),
        "public_feedback": cast(PublicFeedback, feedback),
        "ladder_step": None if step is None else float(step),
        "min_answered": _whole(raw.get("min_answered"), "min_answered", nullable=True),
    }


def _is_number(value: object) -> bool:
    """Return whether value is a finite JSON number (booleans are not numbers here)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _whole(value: object, key: str, *, nullable: bool) -> Any:
    """Return value as an int >= 1 (None allowed when nullable), or raise naming the key."""
    if value is None and nullable:
        return None
    if not _is_number(value) or int(cast(float, value)) != value or cast(float, value) < 1:
        tail = " (or null for none)" if nullable else ""
        raise LabelFileError(f"phase config: {key} must be a whole number of at least 1{tail}, not {value!r}")
    return int(cast(float, value))


def breakdown_fields(raw: Mapping[str, Any]) -> tuple[str, ...]:
    """Return the checked breakdown field names of a raw config object."""
    return _breakdowns(raw.get("breakdowns", ["category"]))


def _choice(value: object, key: str, allowed: tuple[str, ...]) -> str:
    """Return ``value`` if it is one of ``allowed``, else raise naming them."""
    if value not in allowed:
        raise LabelFileError(f"phase config: {key} must be one of {', '.join(allowed)}, not {value!r}")
    return str(value)


def _task(raw: Mapping[str, Any], hint: list[object] | None) -> tuple[TaskType, tuple[str, ...]]:
    """Return the task type and options, inferring what is missing from the labels."""
    inferred = infer_config(hint) if hint is not None and "task_type" not in raw else None
    if "task_type" in raw:
        task_type = cast(TaskType, _choice(raw["task_type"], "task_type", TASK_TYPES))
    elif inferred is not None:
        task_type = inferred.task_type
    else:
        raise LabelFileError(f"phase config: task_type is required ({' or '.join(TASK_TYPES)})")
    options = raw.get("options")
    if task_type == "binary":
        if options is not None:
            raise LabelFileError("phase config: options apply to multiple_choice only")
        return task_type, BINARY_OPTIONS
    if options is None:
        if hint is None:
            raise LabelFileError("phase config: multiple_choice needs options")
        inferred = inferred or infer_config(hint)
        if inferred.task_type != "multiple_choice":
            raise LabelFileError("phase config: multiple_choice needs options (the labels are yes/no)")
        return task_type, inferred.options
    return task_type, _options(options)


def _options(options: object) -> tuple[str, ...]:
    """Return the option strings, trimmed, checked non-empty and distinct."""
    if not isinstance(options, list) or not options:
        raise LabelFileError("phase config: options must be a non-empty list of strings")
    if not all(isinstance(o, str) and o.strip() for o in options):
        raise LabelFileError("phase config: every option must be a non-empty string")
    cleaned = tuple(o.strip() for o in options)
    if len({o.lower() for o in cleaned}) != len(cleaned):
        raise LabelFileError("phase config: options must be distinct (compared case-insensitively)")
    return cleaned


def _breakdowns(fields: object) -> tuple[str, ...]:
    """Return the breakdown field names, checked."""
    if not isinstance(fields, list) or not all(isinstance(f, str) and f for f in fields):
        raise LabelFileError("phase config: breakdowns must be a list of field names")
    if len(set(fields)) != len(fields):
        raise LabelFileError("phase config: breakdowns lists a field twice")
    reserved = [f for f in fields if f in RESERVED_FIELDS]
    if reserved:
        raise LabelFileError(f"phase config: {reserved[0]!r} cannot be a breakdown")
    return tuple(fields)


def _popularity(value: object) -> tuple[float | None, float | None]:
    """Return (head_min, tail_max), both None when the config gives no thresholds."""
    if value is None:
        return None, None
    if not isinstance(value, dict):
        raise LabelFileError("phase config: popularity must be an object with head_min and tail_max")
    unknown = sorted(set(value) - {"head_min", "tail_max"})
    if unknown:
        raise LabelFileError(f"phase config: popularity has unknown key(s) {unknown}")
    head_min, tail_max = value.get("head_min"), value.get("tail_max")
    if head_min is None and tail_max is None:
        return None, None
    if head_min is None or tail_max is None:
        raise LabelFileError("phase config: give both popularity.head_min and popularity.tail_max, or neither")
    for key, number in (("head_min", head_min), ("tail_max", tail_max)):
        if isinstance(number, bool) or not isinstance(number, (int, float)) or not math.isfinite(number):
            raise LabelFileError(f"phase config: popularity.{key} must be a number, not {number!r}")
    if not head_min > tail_max:
        raise LabelFileError("phase config: popularity.head_min must be greater than popularity.tail_max")
    return float(head_min), float(tail_max)
