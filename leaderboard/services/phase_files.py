"""A phase's files: hidden labels, public questions and the starting kit.

Hidden labels go to ``ctx.labels`` (never served); questions go to ``ctx.storage``
under ``public/``. The starting kit is built on request from the questions and the
label set's ids, so it always matches the current label version.
"""

from __future__ import annotations

import io
import json
import zipfile
from typing import Any

import scoring

from leaderboard.models import Phase, User
from leaderboard.runtime import ServiceContext
from leaderboard.services.errors import InvalidInput, NotFound
from leaderboard.services.labelsets import load_phase_labels
from leaderboard.services.permissions import can_manage
from leaderboard.services.uploads import prediction_csv
from leaderboard.storage.base import StoredObject

PUBLIC_FILES = ("questions.jsonl", "starting_kit.zip")
# Fields that give the answer away (SPEC §2.1) or say which leaderboard an item counts on.
HIDDEN_FIELDS = frozenset({"label", "split", "answer", "explanation", "inference_rule", "reasoning_steps"})


def labels_key(phase_id: int, version: int) -> str:
    """Return the hidden-label storage key of one label version of a phase."""
    return f"phases/{phase_id}/labels-v{version}.jsonl"


def questions_key(phase_id: int) -> str:
    """Return the public storage key of a phase's questions file."""
    return f"public/phases/{phase_id}/questions.jsonl"


def store_labels(ctx: ServiceContext, *, phase_id: int, version: int, labels: bytes) -> StoredObject:
    """Store a label file in the hidden-label storage."""
    return ctx.labels.put(labels_key(phase_id, version), labels)


def store_questions(ctx: ServiceContext, *, phase_id: int, questions: bytes) -> StoredObject:
    """Store a phase's public questions file."""
    return ctx.storage.put(questions_key(phase_id), questions)


def checked_questions(questions: bytes) -> bytes:
    """Return an organizer's questions file if it is JSON Lines of objects with an id and no label."""
    try:
        lines = questions.decode("utf-8-sig").splitlines()
    except UnicodeDecodeError:
        raise InvalidInput("The questions file is not UTF-8.") from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            raise InvalidInput(f"The questions file is not JSON Lines: line {number} does not parse.") from None
        if not isinstance(record, dict) or "id" not in record:
            raise InvalidInput(f"The questions file: line {number} is not an object with an id.")
        if "label" in record:
            raise InvalidInput(f"The questions file must not contain labels: line {number} has one.")
    return questions


def derive_questions(labels: bytes) -> bytes:
    """Return the public questions of a checked label file: every record without answer fields."""
    out = []
    for line in labels.decode("utf-8-sig").splitlines():
        if line.strip():
            record: dict[str, Any] = json.loads(line)
            out.append(json.dumps({k: v for k, v in record.items() if k not in HIDDEN_FIELDS}, ensure_ascii=False))
    return ("\n".join(out) + "\n").encode("utf-8")


def public_file(ctx: ServiceContext, *, phase_id: int, name: str, viewer: User | None = None) -> tuple[str, bytes]:
    """Return (download name, bytes) of a public file; before a phase opens only its organizers get it."""
    from leaderboard.services.phases import get_phase, phase_status

    phase = get_phase(ctx, phase_id)
    if name not in PUBLIC_FILES:
        raise NotFound(f"No file {name!r}; the public files are {', '.join(PUBLIC_FILES)}.")
    if phase_status(phase) == "upcoming" and not can_manage(phase.competition, viewer):
        raise NotFound("The data of this phase is published when the phase opens.")
    stem = f"{phase.competition.slug}-phase{phase.position}"
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


def sample_submission(labels: "scoring.LabelSet") -> bytes:
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
        f"Ranking: {config.get('primary_metric', 'accuracy')}, then the earlier submission, then the lower id.",
        "Limits: " + (", ".join(x for x in limits if x) or "none") + ". Files that fail validation are not counted.",
        "",
    ])


def _questions(ctx: ServiceContext, phase: Phase) -> bytes:
    """Return the stored questions file of phase."""
    if phase.questions_key is None:
        raise NotFound("This phase has no questions file.")
    return ctx.storage.read_bytes(phase.questions_key)
