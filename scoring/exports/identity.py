"""Who an exported record is about, which entries are exported, and how records are written.

**Model id.** An entry's ``metadata.model_id`` (e.g. a Hugging Face repo id such as
``meta-llama/Llama-3-8B``) is the record's model id as given. Both formats need an id,
so an entry without one gets a fallback that cannot be taken for a Hub repo and cannot
collide with another entry's:

- a participant's entry: ``tailboard/<competition>/team-<team>/<method>`` or
  ``tailboard/<competition>/user-<display name>/<method>`` (team and user names are
  each unique, the prefix keeps a team apart from a user of the same name);
- a baseline: ``tailboard/<competition>/baseline/<display name>``;

each part percent-encoded (RFC 3986 unreserved characters kept), so a ``/`` or a space
in a name never makes another id. Records say which kind of id they carry.

**Order and time.** Records follow the board's order (the order entries are given);
keys are sorted at every level; times are UTC: ISO 8601 (``2026-03-01T12:00:00Z``)
wherever Tailboard chooses the form, whole Unix seconds where the format asks for them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from scoring.exports.model import ExportEntry, ExportPhase, MetadataValue

FALLBACK_PREFIX = "tailboard"
CI_LEVEL = 0.95
METADATA_KEYS = ("model", "model_id", "parameters_b", "open_weights", "uses_retrieval", "uses_knowledge_graph",
                 "prompting", "url", "notes")
"""The metadata keys exported (docs/ENTRIES.md and ``model_id``); any other key is left out, so a key added to
uploads later is not published by the exports until it is listed here."""


def model_id(phase: ExportPhase, entry: ExportEntry) -> tuple[str, bool]:
    """Return the entry's model id and whether it is Tailboard's fallback (no ``metadata.model_id``)."""
    declared = entry.model_id
    if declared is not None:
        return declared, False
    if entry.is_baseline:
        owner, name = "baseline", entry.display_name
    else:
        owner = f"team-{_part(entry.team)}" if entry.team is not None else f"user-{_part(entry.display_name)}"
        name = entry.method
    return f"{FALLBACK_PREFIX}/{_part(phase.competition_slug)}/{owner}/{_part(name)}", True


def model_name(phase: ExportPhase, entry: ExportEntry) -> str:
    """Return the model's name: ``metadata.model`` as typed, else the model id (declared or fallback)."""
    typed = entry.metadata.get("model")
    return typed.strip() if isinstance(typed, str) and typed.strip() else model_id(phase, entry)[0]


def developer(entry: ExportEntry) -> str | None:
    """Return who provides the model: the model id's owner, else the team or user (None for a baseline)."""
    declared = entry.model_id
    if declared is not None and "/" in declared:
        return declared.split("/", 1)[0]
    if declared is not None or entry.is_baseline:
        return None
    return entry.team if entry.team is not None else entry.display_name


def exported_entries(phase: ExportPhase, entries: Iterable[ExportEntry], *,
                     include_baselines: bool) -> list[ExportEntry]:
    """Return the entries to export, in the order given: ranked ones with their ranking figure, baselines if asked.

    An entry whose ranking figure the board does not show (under the ladder, before its
    first release) has nothing to export and is left out.
    """
    return [entry for entry in entries
            if (include_baselines if entry.is_baseline else entry.rank is not None)
            and phase.ranking_metric in entry.figures]


def entry_details(entry: ExportEntry) -> dict[str, str]:
    """Return who the entry is and what it declared, every value a string (its metadata, docs/ENTRIES.md)."""
    details = {"display_name": entry.display_name, "method": entry.method, "is_baseline": _text(entry.is_baseline),
               "submission_id": str(entry.submission_id), "submitted_at": iso_utc(entry.submitted_at)}
    if entry.team is not None:
        details["team"] = entry.team
    for key, value in entry.metadata.items():
        if key in METADATA_KEYS and not (isinstance(value, str) and not value.strip()):
            details[key] = _text(value)
    return details



def iso_utc(moment: datetime) -> str:
    """Return an aware time as ISO 8601 in UTC, to the second, with a ``Z``."""
    return moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def epoch_text(moment: datetime) -> str:
    """Return an aware time as whole Unix seconds, as text (Every Eval Ever's timestamp form)."""
    return str(math.floor(moment.timestamp()))


def bound(value: float) -> float | str:
    """Return a range bound as JSON can carry it: a number, or "Infinity"/"-Infinity" (Every Eval Ever's form)."""
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return value


def sorted_keys(value: Any) -> Any:
    """Return a copy of a JSON-ready value whose objects list their keys in sorted order, at every level."""
    if isinstance(value, Mapping):
        return {key: sorted_keys(value[key]) for key in sorted(value)}
    if isinstance(value, (list, tuple)):
        return [sorted_keys(item) for item in value]
    return value


def sorted_object(value: Mapping[str, Any]) -> dict[str, Any]:
    """Return a copy of a JSON object with its keys sorted at every level."""
    return {key: sorted_keys(value[key]) for key in sorted(value)}


def to_json(value: Any) -> str:
    """Return records as strict JSON text: keys sorted, no NaN or infinity, UTF-8 characters kept."""
    return json.dumps(value, sort_keys=True, allow_nan=False, ensure_ascii=False)


def _part(text: str | None) -> str:
    """Return one part of a fallback id: the text percent-encoded, "/" and spaces included."""
    return quote(text or "", safe="")


def _text(value: MetadataValue) -> str:
    """Return a metadata value as text: strings as they are, numbers and booleans as JSON writes them."""
    return value if isinstance(value, str) else json.dumps(value)
