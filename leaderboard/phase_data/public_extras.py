"""A phase's public files as its managers change them (docs/ORGANIZING.md#public-files).

Besides ``questions.jsonl`` (replaceable, never removable) and ``starting_kit.zip``
(built on request), a phase may carry other public files its managers upload: a
README, a training or dev set. They are kept in ``ctx.storage`` under
``public/phases/<id>/extra/<name>`` and served like the others. Nothing that looks like
the hidden labels is accepted: a name mentioning labels or answers, a record or CSV
column named ``label`` or ``split``, a line of the phase's label file, or the label
file itself (inside a zip too). Each change is in the audit log.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import zipfile

from leaderboard.accounts import Actor, audit, managed_phase
from leaderboard.models import Phase
from leaderboard.phase_data.labelsets import read_phase_label_bytes
from leaderboard.phase_data.phase_files import (
    EXTRA_NAME,
    PUBLIC_FILES,
    checked_questions,
    extra_key,
    extra_prefix,
    questions_report,
    store_questions,
)
from leaderboard.platform import InvalidInput, NotFound, ServiceContext
from scoring.public_fields import NEVER_PUBLIC

MAX_PUBLIC_FILE = 50 * 1024 * 1024
MAX_FILES = 20
NAME_RULE = "1 to 100 letters, digits, '.', '_' or '-', starting with a letter or digit"
LABEL_LIKE = re.compile(r"label|answer|solution|gold|truth", re.IGNORECASE)


def public_file_names(ctx: ServiceContext, phase: Phase) -> list[str]:
    """Return the names of the phase's uploaded public files (besides questions.jsonl and the starting kit)."""
    prefix = extra_prefix(phase.id)
    return [key.removeprefix(prefix) for key in ctx.storage.iter_keys(prefix)]


def put_public_file(ctx: ServiceContext, *, phase_id: int, name: str, data: bytes, actor: Actor) -> str:
    """Add or replace one public file of a managed phase after its checks; return what the audit log says."""
    phase = managed_phase(ctx, phase_id=phase_id, actor=actor)
    name = name.strip()
    _check_name(name)
    if len(data) > MAX_PUBLIC_FILE:
        raise InvalidInput(f"{name}: a public file holds at most {MAX_PUBLIC_FILE // (1024 * 1024)} MiB.")
    if name == "questions.jsonl":
        checked_questions(data)  # the check of a questions file given at creation, with its message
    labels = read_phase_label_bytes(ctx, phase)
    _check_content(name, data, labels)
    if name == "questions.jsonl":
        stored = store_questions(ctx, phase_id=phase.id, questions=data)
        phase.questions_key, phase.questions_sha256 = stored.key, stored.sha256
        report = questions_report(labels, data)
        said = f"replaced the public questions.jsonl (fields: {', '.join(report.kept) or 'none'})"
    else:
        existing = public_file_names(ctx, phase)
        if name not in existing and len(existing) >= MAX_FILES:
            raise InvalidInput(f"A phase holds at most {MAX_FILES} public files besides the questions; remove one.")
        ctx.storage.put(extra_key(phase.id, name), data)
        said = f"{'replaced' if name in existing else 'added'} the public file {name}"
    audit.record(ctx, actor=actor, competition=phase.competition, target=audit.phase_target(phase.id, phase.name),
                 summary=said)
    return said


def remove_public_file(ctx: ServiceContext, *, phase_id: int, name: str, actor: Actor) -> None:
    """Remove one uploaded public file of a managed phase (the questions and the starting kit stay)."""
    phase = managed_phase(ctx, phase_id=phase_id, actor=actor)
    if name in PUBLIC_FILES:
        raise InvalidInput(f"{name} cannot be removed: replace questions.jsonl instead; the starting kit is built "
                           "from it.")
    if name not in public_file_names(ctx, phase):
        raise NotFound(f"No public file {name!r}.")
    ctx.storage.delete(extra_key(phase.id, name))
    audit.record(ctx, actor=actor, competition=phase.competition, target=audit.phase_target(phase.id, phase.name),
                 summary=f"removed the public file {name}")


def _check_name(name: str) -> None:
    """Refuse a file name the storage would not take, the starting kit's, or one named like the labels."""
    if not EXTRA_NAME.match(name) or ".." in name:
        raise InvalidInput(f"File name {name!r}: use {NAME_RULE}.")
    if name == "starting_kit.zip":
        raise InvalidInput("starting_kit.zip is built from the questions; it cannot be uploaded.")
    if LABEL_LIKE.search(name):
        raise InvalidInput(f"File name {name!r} looks like hidden labels (it mentions labels or answers); "
                           "public files must not hold them.")


def _check_content(name: str, data: bytes, labels: bytes, depth: int = 0) -> None:
    """Refuse content holding the label file, one of its lines, or a label/split field (zip members too)."""
    if hashlib.sha256(data).digest() == hashlib.sha256(labels).digest():
        raise InvalidInput(f"{name} is the phase's hidden label file.")
    if depth == 0 and zipfile.is_zipfile(io.BytesIO(data)):
        _check_zip(name, data, labels)
        return
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return  # binary content: no JSON record or label line to find
    label_lines = {line.strip() for line in labels.decode("utf-8-sig").splitlines() if line.strip()}
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip() in label_lines:
            raise InvalidInput(f"{name}: line {number} is a line of the hidden label file.")
        _check_record(name, number, line)
    _check_csv_header(name, text)


def _check_record(name: str, number: int, line: str) -> None:
    """Refuse a JSON line whose object (or objects, in a JSON list) carries label or split."""
    try:
        value = json.loads(line)
    except ValueError:
        return
    for record in value if isinstance(value, list) else [value]:
        if isinstance(record, dict) and (hidden := sorted(NEVER_PUBLIC & set(record))):
            raise InvalidInput(f"{name}: line {number} has the answer field {' and '.join(hidden)}; "
                               "public files must not carry labels or the split.")


def _check_csv_header(name: str, text: str) -> None:
    """Refuse a CSV (or TSV) whose header names a label or split column."""
    first = text.splitlines()[0] if text.strip() else ""
    for delimiter in (",", "\t", ";"):
        columns = {cell.strip().lower() for cell in next(csv.reader([first], delimiter=delimiter), [])}
        if hidden := sorted(NEVER_PUBLIC & columns):
            raise InvalidInput(f"{name}: the header has the answer column {' and '.join(hidden)}; "
                               "public files must not carry labels or the split.")


def _check_zip(name: str, data: bytes, labels: bytes) -> None:
    """Check each member of a zip like a file of its own, within the size limit."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        if sum(info.file_size for info in archive.infolist()) > MAX_PUBLIC_FILE:
            raise InvalidInput(f"{name}: unpacked, the zip is over {MAX_PUBLIC_FILE // (1024 * 1024)} MiB.")
        for info in archive.infolist():
            member = info.filename.rsplit("/", 1)[-1]
            if member and LABEL_LIKE.search(member):
                raise InvalidInput(f"{name}: the member {info.filename!r} looks like hidden labels.")
            if not info.is_dir():
                _check_content(f"{name}: {info.filename}", archive.read(info), labels, depth=1)
