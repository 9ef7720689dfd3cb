"""A phase's public files: the questions file and the starting kit.

Questions go to ``ctx.storage`` under ``public/`` (the hidden label file is
phase_data/labelsets.py's, in ``ctx.labels``). The starting kit is built on request from
the questions and the label set's ids, so it always matches the current label version.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections.abc import Iterator
from typing import Any

import scoring
from leaderboard.accounts import can_manage, get_phase, phase_status
from leaderboard.models import Phase, User
from leaderboard.phase_data.labelsets import load_phase_labels, read_phase_label_bytes
from leaderboard.platform import InvalidInput, NotFound, ServiceContext
from leaderboard.platform.storage.base import StoredObject
from scoring.public_fields import NEVER_PUBLIC, FieldReport, field_report, public_field_names, public_record
from scoring.types import PhaseConfig

PUBLIC_FILES = ("questions.jsonl", "starting_kit.zip")
EXTRA_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
"""The name of an uploaded public file: what its storage key may end with."""


def questions_key(phase_id: int) -> str:
    """Return the public storage key of a phase's questions file."""
    return f"public/phases/{phase_id}/questions.jsonl"


def extra_prefix(phase_id: int) -> str:
    """Return the storage prefix of a phase's uploaded public files (phase_data/public_extras.py)."""
    return f"public/phases/{phase_id}/extra/"


def extra_key(phase_id: int, name: str) -> str:
    """Return the storage key of one uploaded public file of a phase."""
    return extra_prefix(phase_id) + name


def store_questions(ctx: ServiceContext, *, phase_id: int, questions: bytes) -> StoredObject:
    """Store a phase's public questions file."""
    return ctx.storage.put(questions_key(phase_id), questions)


def checked_questions(questions: bytes) -> bytes:
    """Return an organizer's questions file if it is JSON Lines of objects with an id and no label or split."""
    for number, record in _numbered_records(questions, "The questions file"):
        if not isinstance(record, dict) or "id" not in record:
            raise InvalidInput(f"The questions file: line {number} is not an object with an id.")
        hidden = sorted(NEVER_PUBLIC & set(record))
        if hidden:
            raise InvalidInput(f"The questions file must not contain {' or '.join(hidden)}: line {number} has it.")
    return questions


def public_fields(config: PhaseConfig) -> frozenset[str]:
    """Return the fields a derived questions record keeps under a checked phase config (docs/FORMATS.md allow list)."""
    return public_field_names(breakdowns=config.breakdowns, marked=config.public_fields)


def derive_questions(labels: bytes, config: PhaseConfig) -> bytes:
    """Return the public questions of a checked label file: each record with its public fields only."""
    allowed = public_fields(config)
    out = [json.dumps(public_record(record, allowed), ensure_ascii=False) for _, record in _numbered_records(labels)]
    return ("\n".join(out) + "\n").encode("utf-8")


def questions_report(labels: bytes, questions: bytes) -> FieldReport:
    """Return the fields the public questions carry and the fields of the label file they withhold."""
    return field_report((r for _, r in _numbered_records(labels)), (r for _, r in _numbered_records(questions)))


def phase_questions_report(ctx: ServiceContext, phase: Phase) -> FieldReport:
    """Return the field report of a phase's stored questions against its (checked) label file."""
    return questions_report(read_phase_label_bytes(ctx, phase), _questions(ctx, phase))


def public_fields_json(config: PhaseConfig) -> dict[str, Any]:
    """Return the public_fields entry of a phase's stored config (empty when the organizer marked none)."""
    return {"public_fields": list(config.public_fields)} if config.public_fields else {}


def public_file(ctx: ServiceContext, *, phase_id: int, name: str, viewer: User | None = None) -> tuple[str, bytes]:
    """Return (download name, bytes) of a public file; before a phase opens only its organizers get it."""
    phase = get_phase(ctx, phase_id)
    uploaded = (name not in PUBLIC_FILES and EXTRA_NAME.match(name) is not None and ".." not in name
                and ctx.storage.exists(extra_key(phase.id, name)))
    if name not in PUBLIC_FILES and not uploaded:
        raise NotFound(f"No file {name!r} in this phase's public files.")
    if phase_status(phase) == "upcoming" and not can_manage(phase.competition, viewer):
        raise NotFound("The data of this phase is published when the phase opens.")
    stem = f"{phase.competition.slug}-phase{phase.position}"
    if uploaded:
        return name, ctx.storage.read_bytes(extra_key(phase.id, name))
    if name == "questions.jsonl":
        return f"{stem}-questions.jsonl", _questions(ctx, phase)
    return f"{stem}-starting_kit.zip", starting_kit(ctx, phase)


def starting_kit(ctx: ServiceContext, phase: Phase) -> bytes:
    """Return the starting kit zip: questions.jsonl, sample_submission.csv and README.txt."""
    labels = load_phase_labels(ctx, phase)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("questions.jsonl", _questions(ctx, phase))
        archive.writestr("sample_submission.csv", sample_submission(labels))
        archive.writestr("README.txt", readme(phase))
    return buffer.getvalue()


def sample_submission(labels: scoring.LabelSet) -> bytes:
    """Return a valid CSV predicting one placeholder answer for every id."""
    placeholder = "true" if labels.config.task_type == "binary" else labels.config.options[0]
    ids = [str(i) for i in labels.ids.to_pylist()]
    return prediction_csv(ids, [placeholder] * len(ids))


def readme(phase: Phase) -> str:
    """Return the starting kit's README explaining the prediction file format of phase."""
    config = phase.task_config
    if config.get("task_type") == "binary":
        values = "true or false (also yes/no, t/f, y/n, 1/0)"
    else:
        values = "one of the option letters " + ", ".join(config.get("options", []))
    missing = ("is an error" if config.get("missing_ids") == "error"
               else "counts as an abstention (never correct)")
    limits = [f"{phase.max_per_day} per UTC day" if phase.max_per_day is not None else None,
              f"{phase.max_total} in total" if phase.max_total is not None else None]
    return "\n".join([
        f"{phase.competition.title} - {phase.name}",
        "",
        "Files: questions.jsonl (the items to predict), sample_submission.csv (a valid example).",
        "",
        "Upload one prediction per item, as CSV with the header id,prediction[,confidence],",
        'as JSON Lines {"id": ..., "prediction": ..., "confidence": ...}, as a JSON list of such',
        "objects or a JSON object mapping id to prediction; a .zip or .gz holding one such file",
        "is accepted too. The format is read from the content, not the file name.",
        "",
        f"prediction: {values}. To abstain, leave it empty or write unknown, idk, abstain, none, n/a.",
        "confidence (optional): a number from 0 to 1, then required on every answered row.",
        f"An id of questions.jsonl that your file does not mention {missing}.",
        f"Ranking: {phase.primary_metric}, then the earlier submission, then the lower id.",
        "Limits: " + (", ".join(x for x in limits if x) or "none") + ". Files that fail validation are not counted.",
        "",
    ])


def prediction_csv(ids: list[str], answers: list[str]) -> bytes:
    """Return an id,prediction CSV file (ids quoted when they need it): the sample submission and the baselines."""
    lines = ["id,prediction"] + [f"{_cell(i)},{a}" for i, a in zip(ids, answers, strict=True)]
    return ("\n".join(lines) + "\n").encode("utf-8")


def _cell(text: str) -> str:
    """Return text quoted for CSV when it needs quoting."""
    return '"' + text.replace('"', '""') + '"' if any(c in text for c in ',"\r\n') else text


def _numbered_records(data: bytes, what: str | None = None) -> Iterator[tuple[int, Any]]:
    """Yield (line number, parsed value) of each non-blank JSON line; InvalidInput naming ``what`` when one is bad."""
    try:
        lines = data.decode("utf-8-sig").splitlines()
    except UnicodeDecodeError:
        raise InvalidInput(f"{what or 'The file'} is not UTF-8.") from None
    for number, line in enumerate(lines, start=1):
        if line.strip():
            try:
                yield number, json.loads(line)
            except ValueError:
                raise InvalidInput(f"{what or 'The file'} is not JSON Lines: line {number} does not parse.") from None


def _questions(ctx: ServiceContext, phase: Phase) -> bytes:
    """Return the stored questions file of phase."""
    if phase.questions_key is None:
        raise NotFound("This phase has no questions file.")
    return ctx.storage.read_bytes(phase.questions_key)
