"""Entries (docs/ENTRIES.md): an upload's method and metadata, the max_methods cap, and the entry settings of a phase.

An entry is (team, or user without a team; method). ``check_method`` and
``check_metadata`` are the one rule for a method name and a metadata object, used by the
web form, the API, the organizer CLI and baselines; ``metadata_from_fields`` reads the
text of a form or a command line (``key=value``) into that object first. A method
counts against ``max_methods`` once one of its uploads has been acknowledged (queued,
scoring or scored): ``check_method_cap`` refuses a new one past the cap, early (before
the file is stored) and again in the transaction that charges the quota, where the
owner's quota row lock makes the count exact under concurrent uploads.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy import select

from leaderboard.accounts import Actor, audit, managed_phase, team_of
from leaderboard.models import Phase, Submission, User
from leaderboard.phase_data import config_to_json
from leaderboard.platform import Conflict, InvalidInput, ServiceContext
from scoring.config import ENTRY_KEYS, load_config
from scoring.types import LabelFileError

DEFAULT_METHOD = "default"
MAX_METHOD_LENGTH = 80
MAX_NOTES_LENGTH = 500
MAX_TEXT_LENGTH = 200  # model
MAX_URL_LENGTH = 500
PROMPTING = ("zero-shot", "few-shot", "chain-of-thought", "fine-tuned", "other")
BOOLEAN_KEYS = ("open_weights", "uses_retrieval", "uses_knowledge_graph")
METADATA_KEYS = ("model", "model_id", "parameters_b", *BOOLEAN_KEYS, "prompting", "url", "notes")
"""The only keys an entry's metadata may carry (docs/ENTRIES.md), in the order pages show them."""
MAX_MODEL_ID_LENGTH = 200
_MODEL_ID = re.compile(r"^[\w.\-]+(?:/[\w.\-]+)*$")
"""A model id, e.g. a Hugging Face repo id ``meta-llama/Llama-3-8B`` (docs/MOVING.md): the result exports' model."""
ACKNOWLEDGED = ("queued", "scoring", "scored")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_TRUE, _FALSE = ("true", "yes", "1", "on"), ("false", "no", "0", "off")


def check_method(value: str | None) -> str:
    """Return the method name of an upload: trimmed, 'default' when empty; InvalidInput naming 'method'."""
    method = (value or "").strip()
    if not method:
        return DEFAULT_METHOD
    if len(method) > MAX_METHOD_LENGTH:
        raise _invalid("method", f"a method name has at most {MAX_METHOD_LENGTH} characters")
    if _CONTROL.search(method):
        raise _invalid("method", "a method name cannot contain control characters")
    return method


def check_metadata(value: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Return checked metadata (None when empty); InvalidInput naming every unknown or wrong key.

    A key whose value is null or an empty string is left out (it was not given).
    """
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise InvalidInput("Invalid metadata: it must be a JSON object.",
                           [{"field": "metadata", "message": "must be a JSON object"}])
    checked, problems = _checked(value)
    _raise_problems(problems)
    return checked


def _checked(value: Mapping[str, Any]) -> tuple[dict[str, Any] | None, list[tuple[str, str]]]:
    """Return the checked metadata of an object and the (key, problem) pairs found."""
    checked: dict[str, Any] = {}
    problems: list[tuple[str, str]] = []
    for key, raw in value.items():
        if key not in METADATA_KEYS:
            problems.append((str(key), f"not a metadata key (the keys are {', '.join(METADATA_KEYS)})"))
            continue
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            continue
        try:
            checked[key] = _checked_value(key, raw)
        except ValueError as error:
            problems.append((key, str(error)))
    return {key: checked[key] for key in METADATA_KEYS if key in checked} or None, problems


def _raise_problems(problems: list[tuple[str, str]]) -> None:
    """Raise InvalidInput naming each key with its problem, if there is any."""
    if problems:
        summary = "; ".join(f"{key}: {message}" for key, message in problems)
        raise InvalidInput(f"Invalid metadata: {summary}.",
                           [{"field": f"metadata.{key}", "message": message} for key, message in problems])


def metadata_from_json(text: str | None) -> dict[str, Any] | None:
    """Return checked metadata from JSON text (the API's multipart field); empty text is no metadata."""
    if text is None or not text.strip():
        return None
    try:
        value = json.loads(text)
    except ValueError as error:
        raise _invalid("metadata", f"not valid JSON ({error})") from None
    return check_metadata(value)


def metadata_from_fields(fields: Mapping[str, str]) -> dict[str, Any] | None:
    """Return checked metadata from text values (a web form, or key=value pairs), read by each key's type.

    parameters_b is read as a number, the three flags as yes/no (true/false, 1/0), the
    others as text; an unknown key is kept so that it is named. Every problem is reported.
    """
    values: dict[str, Any] = {}
    problems: list[tuple[str, str]] = []
    for key, text in fields.items():
        text = (text or "").strip()
        if not text:
            continue
        try:
            values[key] = _from_text(key, text)
        except ValueError as error:
            problems.append((key, str(error)))
    checked, more = _checked(values)
    _raise_problems(problems + more)
    return checked


def metadata_from_pairs(pairs: Iterable[str]) -> dict[str, Any] | None:
    """Return checked metadata from 'key=value' strings (a command line's repeated --meta)."""
    fields: dict[str, str] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key.strip():
            raise _invalid("metadata", f"{pair!r} is not key=value")
        fields[key.strip()] = text
    return metadata_from_fields(fields)


def owner_filter(*, user_id: int, team_id: int | None) -> Any:
    """Return the condition selecting an entry owner's submissions: its team's, or the user's without a team."""
    if team_id is not None:
        return Submission.team_id == team_id
    return (Submission.user_id == user_id) & Submission.team_id.is_(None)


def entry_methods(ctx: ServiceContext, *, phase_id: int, user_id: int, team_id: int | None,
                  exclude_id: int | None = None) -> list[str]:
    """Return the owner's methods in a phase, in the order first used, counting acknowledged uploads only."""
    query = (select(Submission.method, Submission.id)
             .where(Submission.phase_id == phase_id, Submission.is_baseline.is_(False),
                    Submission.status.in_(ACKNOWLEDGED), owner_filter(user_id=user_id, team_id=team_id))
             .order_by(Submission.id))
    if exclude_id is not None:
        query = query.where(Submission.id != exclude_id)
    return list(dict.fromkeys(method for method, _ in ctx.session.execute(query)))


def previous_methods(ctx: ServiceContext, *, phase: Phase, user: User) -> list[str]:
    """Return the methods of the user's entries in the phase (their team's when they have one): what the form offers."""
    team = team_of(ctx, competition_id=phase.competition_id, user_id=user.id)
    return entry_methods(ctx, phase_id=phase.id, user_id=user.id, team_id=None if team is None else team.id)


def max_methods(phase: Phase) -> int:
    """Return the phase's cap on methods per team or user (docs/ENTRIES.md: default 3)."""
    return int((phase.task_config or {}).get("max_methods") or 3)


def final_selections(phase: Phase) -> int | None:
    """Return how many submissions a team may select for the final ranking, or None (no selection)."""
    value = (phase.task_config or {}).get("final_selections")
    return None if value is None else int(value)


def check_method_cap(ctx: ServiceContext, *, phase: Phase, user_id: int, team_id: int | None, method: str,
                     exclude_id: int | None = None) -> None:
    """Raise Conflict when method would be one more than the phase's max_methods for this owner."""
    used = entry_methods(ctx, phase_id=phase.id, user_id=user_id, team_id=team_id, exclude_id=exclude_id)
    cap = max_methods(phase)
    if method in used or len(used) < cap:
        return
    who = "team" if team_id is not None else "participant"
    plural = "method" if cap == 1 else "methods"
    raise Conflict(f"This phase allows at most {cap} {plural} per {who}; you already have: {', '.join(used)}. "
                   "Submit under one of them.", {"max_methods": cap, "methods": used})


def with_entry_settings(config: dict[str, Any] | None, settings: Mapping[str, Any]) -> dict[str, Any] | None:
    """Return a phase config with the given entry settings merged in (None values are left out)."""
    given = {key: value for key, value in settings.items() if value is not None}
    unknown = sorted(set(given) - set(ENTRY_KEYS))
    if unknown:
        raise InvalidInput(f"Unknown entry setting(s): {', '.join(unknown)}.")
    return {**(config or {}), **given} if given else config


def update_entry_settings(ctx: ServiceContext, *, phase_id: int, actor: Actor, **changes: Any) -> Phase:
    """Change a phase's max_methods or final_selections; a None value restores that key's default."""
    unknown = sorted(set(changes) - set(ENTRY_KEYS))
    if unknown:
        raise InvalidInput(f"These entry settings do not exist: {', '.join(unknown)}; "
                           f"valid: {', '.join(ENTRY_KEYS)}.")
    phase = managed_phase(ctx, phase_id=phase_id, actor=actor)
    merged = {**phase.task_config, **changes}
    merged = {key: value for key, value in merged.items() if value is not None}
    try:
        checked = load_config(merged)
    except LabelFileError as error:
        raise InvalidInput(f"The entry settings are invalid: {error}") from None
    before = (max_methods(phase), final_selections(phase))
    phase.task_config = config_to_json(checked)
    ctx.session.commit()
    if before == (checked.max_methods, checked.final_selections):
        return phase  # saved with the rest of a form, unchanged: nothing to log
    audit.record(ctx, actor=actor, competition=phase.competition, target=audit.phase_target(phase.id, phase.name),
                 summary=f"entry settings: max_methods {checked.max_methods}, "
                         f"final_selections {checked.final_selections or 'none'}")
    return phase


def _checked_value(key: str, value: Any) -> Any:
    """Return one metadata value of its key's type, or raise ValueError saying what it must be."""
    if key in BOOLEAN_KEYS:
        if not isinstance(value, bool):
            raise ValueError("must be true or false")
        return value
    if key == "parameters_b":
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
            raise ValueError("must be a number ≥ 0 (billions of parameters)")
        return value
    if not isinstance(value, str):
        raise ValueError("must be text")
    text = value.strip()
    if key == "prompting" and text not in PROMPTING:
        raise ValueError(f"must be one of {', '.join(PROMPTING)}")
    if key == "url":
        return _checked_url(text)
    if key == "model_id":
        return _checked_model_id(text)
    limit = MAX_NOTES_LENGTH if key == "notes" else MAX_TEXT_LENGTH
    if len(text) > limit:
        raise ValueError(f"has at most {limit} characters")
    return text


def _checked_url(text: str) -> str:
    """Return an http or https address, or raise ValueError."""
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.netloc or len(text) > MAX_URL_LENGTH or " " in text:
        raise ValueError(f"must be an http or https address of at most {MAX_URL_LENGTH} characters")
    return text


def _checked_model_id(text: str) -> str:
    """Return a model id such as a Hugging Face repo id ('org/name'), or raise ValueError."""
    if len(text) > MAX_MODEL_ID_LENGTH or not _MODEL_ID.match(text):
        raise ValueError(f"must be a model id such as a Hugging Face repo id (org/name): letters, digits, '-', '_', "
                         f"'.' and '/', at most {MAX_MODEL_ID_LENGTH} characters")
    return text


def _from_text(key: str, text: str) -> Any:
    """Return a form or command-line value as its key's type (unknown keys stay text)."""
    if key in BOOLEAN_KEYS:
        lowered = text.lower()
        if lowered in _TRUE or lowered in _FALSE:
            return lowered in _TRUE
        raise ValueError("must be yes or no")
    if key == "parameters_b":
        try:
            return float(text) if any(c in text for c in ".eE") else int(text)
        except ValueError:
            raise ValueError("must be a number ≥ 0 (billions of parameters)") from None
    return text


def _invalid(field: str, message: str) -> InvalidInput:
    """Return the InvalidInput of one field, naming it."""
    return InvalidInput(f"Invalid {field}: {message}.", [{"field": field, "message": message}])
