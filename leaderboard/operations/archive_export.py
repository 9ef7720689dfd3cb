"""Export a whole competition as one zip (docs/ORGANIZING.md), for its managers to take anywhere.

The zip holds ``manifest.json`` (the competition, each phase's config and dates, the
people and teams by display name, the scoring library's version), and per phase its
label files (every version), questions, each submission's file and metadata, and every
score row (active and retired); ``audit.jsonl`` is the audit log. Participants' emails
are not exported: the archive names people as the boards do.

Streamed, not built as a job: the zip is written while it is sent (zip data
descriptors need no seeking), so memory holds one file at a time whatever the size of
the competition, nothing is left on disk to clean up, and a dropped download is simply
asked again. The generator reads through its own session, opened when the first byte
is asked for, so it outlives the request that checked the caller's rights.
"""

from __future__ import annotations

import base64
import io
import json
import zipfile
from collections.abc import Iterator
from datetime import datetime
from importlib import metadata
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from leaderboard.accounts import SYSTEM_EMAIL, Actor, managed_competition
from leaderboard.models import (
    AuditEntry,
    Baseline,
    Competition,
    LabelVersion,
    Phase,
    Score,
    Submission,
    Team,
    TeamMember,
    User,
)
from leaderboard.platform import ServiceContext
from leaderboard.platform.db import utcnow

FORMAT = "tailboard-archive"
FORMAT_VERSION = 1
CHUNK = 1024 * 1024


class _Pipe(io.RawIOBase):
    """A write-only, unseekable sink whose bytes are taken out as they come (zipfile streams into it)."""

    def __init__(self) -> None:
        super().__init__()
        self._chunks: list[bytes] = []

    def writable(self) -> bool:
        """Return True: zipfile writes here."""
        return True

    def write(self, data: Any) -> int:
        """Keep a copy of data until it is taken."""
        self._chunks.append(bytes(data))
        return len(data)

    def take(self) -> bytes:
        """Return and forget what was written since the last take."""
        out = b"".join(self._chunks)
        self._chunks.clear()
        return out


def tailboard_version() -> str:
    """Return the installed version of Tailboard, whose scoring library computed the scores."""
    try:
        return metadata.version("tailboard")
    except metadata.PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown"


def export_competition(ctx: ServiceContext, *, slug: str, actor: Actor) -> tuple[str, Iterator[bytes]]:
    """Return (file name, the zip's bytes as a stream) of a competition its actor manages (checked now)."""
    competition = managed_competition(ctx, slug=slug, actor=actor)
    name = f"{competition.slug}-{utcnow():%Y%m%d-%H%M%S}.zip"
    return name, _stream(ctx, competition.id)


def _stream(ctx: ServiceContext, competition_id: int) -> Iterator[bytes]:
    """Yield the archive of a competition piece by piece, reading through a session of its own."""
    pipe = _Pipe()
    with ctx.runtime.sessions() as session, zipfile.ZipFile(pipe, "w", zipfile.ZIP_DEFLATED) as archive:
        competition = session.get(Competition, competition_id)
        assert competition is not None
        phases = list(competition.phases)
        archive.writestr("manifest.json", json.dumps(_manifest(session, competition, phases), indent=1))
        yield pipe.take()
        for phase in phases:
            yield from _phase_files(ctx, session, archive, pipe, phase)
        _write_lines(archive, "audit.jsonl", (_audit_row(row) for row in session.scalars(
            select(AuditEntry).where(AuditEntry.competition_id == competition_id).order_by(AuditEntry.id))))
    yield pipe.take()


def _phase_files(ctx: ServiceContext, session: Session, archive: zipfile.ZipFile, pipe: _Pipe,
                 phase: Phase) -> Iterator[bytes]:
    """Write one phase's label versions, questions, submission files, their metadata and scores."""
    base = f"phases/{phase.position}"
    for version in _versions(session, phase):
        _copy(archive, f"{base}/labels-v{version.version}.jsonl", ctx.labels.open(version.labels_key))
        yield pipe.take()
    if phase.questions_key:
        _copy(archive, f"{base}/questions.jsonl", ctx.storage.open(phase.questions_key))
    rows = list(session.scalars(select(Submission).where(Submission.phase_id == phase.id).order_by(Submission.id)))
    baselines = {b.submission_id: b for b in session.scalars(select(Baseline).where(Baseline.phase_id == phase.id))}
    for submission in rows:
        _copy(archive, f"{base}/files/{submission.id}", ctx.storage.open(submission.file_key))
        yield pipe.take()
    _write_lines(archive, f"{base}/submissions.jsonl", (_submission_row(s, baselines.get(s.id)) for s in rows))
    scores = session.scalars(select(Score).join(Submission).where(Submission.phase_id == phase.id)
                             .order_by(Score.id)).yield_per(500)
    _write_lines(archive, f"{base}/scores.jsonl", (_score_row(score) for score in scores))
    yield pipe.take()


def _manifest(session: Session, competition: Competition, phases: list[Phase]) -> dict[str, Any]:
    """Return what the archive holds, as JSON: the competition, its phases, people and teams."""
    user_ids = set(session.scalars(select(Submission.user_id).join(Phase).where(
        Phase.competition_id == competition.id)))
    teams = list(session.scalars(select(Team).where(Team.competition_id == competition.id).order_by(Team.id)))
    members = session.scalars(select(TeamMember).where(TeamMember.competition_id == competition.id)).all()
    user_ids |= {m.user_id for m in members}
    users: list[User] = list(session.scalars(select(User).where(User.id.in_(user_ids)).order_by(User.id)))
    return {
        "format": FORMAT, "format_version": FORMAT_VERSION, "tailboard_version": tailboard_version(),
        "exported_at": _when(utcnow()),
        "competition": {"slug": competition.slug, "title": competition.title,
                        "description": competition.description, "created_at": _when(competition.created_at),
                        "requires_approval": competition.requires_approval},
        "users": [{"ref": u.id, "display_name": u.display_name, "system": u.email == SYSTEM_EMAIL} for u in users],
        "teams": [{"ref": t.id, "name": t.name, "created_at": _when(t.created_at),
                   "members": [m.user_id for m in members if m.team_id == t.id]} for t in teams],
        "phases": [_phase_row(session, phase) for phase in phases],
    }


def _phase_row(session: Session, phase: Phase) -> dict[str, Any]:
    """Return a phase's settings and the archive paths of its files."""
    base = f"phases/{phase.position}"
    return {
        "position": phase.position, "name": phase.name, "description": phase.description,
        "task_config": phase.task_config, "label_version": phase.label_version, "n_items": phase.n_items,
        "has_private_split": phase.has_private_split, "start_at": _when(phase.start_at),
        "end_at": _when(phase.end_at), "state_override": phase.state_override,
        "private_shown_at": _when(phase.private_shown_at), "max_per_day": phase.max_per_day,
        "max_total": phase.max_total, "leaderboard_visibility": phase.leaderboard_visibility,
        "created_at": _when(phase.created_at),
        "labels": [{"version": v.version, "sha256": v.labels_sha256, "path": f"{base}/labels-v{v.version}.jsonl",
                    "created_at": _when(v.created_at)} for v in _versions(session, phase)],
        "questions": {"path": f"{base}/questions.jsonl", "sha256": phase.questions_sha256}
        if phase.questions_key else None,
    }


def _versions(session: Session, phase: Phase) -> list[LabelVersion]:
    """Return a phase's label versions, oldest first."""
    return list(session.scalars(select(LabelVersion).where(LabelVersion.phase_id == phase.id)
                                .order_by(LabelVersion.version)))


def _submission_row(submission: Submission, baseline: Baseline | None) -> dict[str, Any]:
    """Return one submission's metadata (its file is files/<id> beside it)."""
    return {
        "ref": submission.id, "user": submission.user_id, "team": submission.team_id,
        "filename": submission.filename, "sha256": submission.file_sha256, "size": submission.file_size,
        "status": submission.status, "description": submission.description, "method": submission.method,
        "entry_metadata": submission.entry_metadata, "selected": submission.selected,
        "validation_errors": submission.validation_errors, "failure_detail": submission.failure_detail,
        "quota_day": submission.quota_day, "is_baseline": submission.is_baseline,
        "baseline": {"name": baseline.name, "kind": baseline.kind} if baseline else None,
        "moderation": submission.moderation, "moderation_reason": submission.moderation_reason,
        "moderated_at": _when(submission.moderated_at), "created_at": _when(submission.created_at),
        "updated_at": _when(submission.updated_at),
    }


def _score_row(score: Score) -> dict[str, Any]:
    """Return one score row, active or retired, with its per-item correctness bits when it has them."""
    bits = {name: base64.b64encode(value).decode() for name in ("correct_bits", "answered_bits")
            if (value := getattr(score, name, None)) is not None}
    return {"submission": score.submission_id, "label_version": score.label_version, "results": score.results,
            "public_primary": score.public_primary, "private_primary": score.private_primary,
            "feedback": score.feedback, "created_at": _when(score.created_at), "retired_at": _when(score.retired_at),
            **bits}


def _audit_row(entry: AuditEntry) -> dict[str, Any]:
    """Return one audit entry."""
    return {"at": _when(entry.at), "actor": entry.actor_name, "target": entry.target, "summary": entry.summary}


def _copy(archive: zipfile.ZipFile, name: str, source: Any) -> None:
    """Copy a stored file into the archive in chunks."""
    with source, archive.open(name, "w", force_zip64=True) as target:
        while chunk := source.read(CHUNK):
            target.write(chunk)


def _write_lines(archive: zipfile.ZipFile, name: str, rows: Any) -> None:
    """Write rows as JSON Lines into the archive."""
    with archive.open(name, "w", force_zip64=True) as target:
        for row in rows:
            target.write(json.dumps(row, separators=(",", ":")).encode() + b"\n")


def _when(value: datetime | None) -> str | None:
    """Return a naive-UTC timestamp as ISO 8601, None as None."""
    return value.isoformat() if value is not None else None
