"""Rebuild a competition from its archive (docs/ORGANIZING.md): ``flask --app app competitions import-archive FILE``.

Everything comes back as it was exported: phases with every label version and their
dates, submissions with their files, statuses, entries and moderation, every score row
(active and retired), the audit log. People come back as accounts that cannot log in,
under the display names they had (a name taken on this instance gets a suffix), since
the archive holds no emails. Every file is checked against its SHA-256. The board of
each phase is rebuilt from the scores; re-scoring here gives the same numbers.

The zip is read with ``scoring.zips.SafeZip``: every member is inflated within a limit
(a member that declares or inflates to more is refused before it fills memory), a name
that would leave the archive refuses it, and a missing manifest key or a bad JSON line
is an InvalidInput naming the member (and line), never a traceback.
"""

from __future__ import annotations

import base64
import secrets
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from sqlalchemy import func, select

from leaderboard.accounts import Actor, audit, ensure_organizer, system_user
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
from leaderboard.operations.archive_export import FORMAT, FORMAT_VERSION
from leaderboard.phase_data import store_labels, store_questions
from leaderboard.platform import Conflict, InvalidInput, ServiceContext
from leaderboard.submissions import store_file
from scoring.zips import MEMBER_LIMIT, ArchiveError, Record, SafeZip

UNUSABLE_PASSWORD = "!"


def import_archive(ctx: ServiceContext, *, source: str | Path | IO[bytes], actor: Actor,
                   slug: str | None = None, owner: User | None = None) -> Competition:
    """Create a competition from an archive (optionally under another slug); Conflict when the slug is taken.

    It is owned by the importing organizer, or by ``owner`` when the operator imports it
    (none: only the operator manages it).
    """
    ensure_organizer(actor)
    owner = actor if isinstance(actor, User) else owner
    if owner is not None and not owner.is_organizer:
        raise InvalidInput(f"{owner.email} is not an organizer account: only organizers own competitions.")
    try:
        archive = SafeZip(source)
    except ArchiveError as error:
        raise InvalidInput(f"This is not a Tailboard archive (not a zip file: {error}).") from None
    with archive:
        try:
            manifest = _manifest(archive)
            competition = _rebuild(ctx, archive, manifest, slug=slug, owner=owner)
        except ArchiveError as error:
            ctx.session.rollback()
            raise InvalidInput(f"The archive cannot be imported: {error}.") from None
        except BaseException:
            ctx.session.rollback()
            raise
        audit.record(ctx, actor=actor, competition=competition, target=f"competition {competition.slug}",
                     summary=f"imported the competition from an archive of Tailboard "
                             f"{manifest.get('tailboard_version', 'unknown')} exported {manifest.get('exported_at')}")
    for phase in competition.phases:
        ctx.board_changed(phase_id=phase.id)
    return competition


def _rebuild(ctx: ServiceContext, archive: SafeZip, manifest: Record, *, slug: str | None,
             owner: User | None) -> Competition:
    """Insert the competition, its people, teams, phases and audit log from the archive, and commit."""
    competition = _competition(ctx, manifest["competition"], slug=slug, owner=owner)
    users = _users(ctx, manifest["users"])
    teams = _teams(ctx, competition, manifest["teams"], users)
    for row in manifest["phases"]:
        _phase(ctx, archive, competition, row, users=users, teams=teams)
    _audit_log(ctx, archive, competition)
    ctx.session.commit()
    return competition


def _manifest(archive: SafeZip) -> Record:
    """Return the archive's manifest, or InvalidInput when it is not one this version reads."""
    if not archive.has("manifest.json"):
        raise InvalidInput("This is not a Tailboard archive (it has no manifest.json).")
    manifest = archive.read_json("manifest.json")
    if not isinstance(manifest, Record):
        raise InvalidInput("This is not a Tailboard archive (manifest.json is not a JSON object).")
    if manifest.get("format") != FORMAT or manifest.get("format_version") != FORMAT_VERSION:
        raise InvalidInput(f"This archive's format is {manifest.get('format')!r} version "
                           f"{manifest.get('format_version')!r}; this instance reads {FORMAT!r} {FORMAT_VERSION}.")
    return manifest


def _competition(ctx: ServiceContext, row: dict[str, Any], *, slug: str | None, owner: User | None) -> Competition:
    """Insert the competition row with its owner (None: only the operator manages it)."""
    slug = slug or row["slug"]
    if ctx.session.scalar(select(Competition.id).where(Competition.slug == slug)) is not None:
        raise Conflict(f"A competition with the slug {slug!r} already exists; import it under another slug.")
    competition = Competition(slug=slug, title=row["title"], description=row["description"],
                              created_by_id=None if owner is None else owner.id,
                              requires_approval=bool(row.get("requires_approval", False)),
                              created_at=_when(row["created_at"]))
    ctx.session.add(competition)
    ctx.session.flush()
    return competition


def _users(ctx: ServiceContext, rows: list[dict[str, Any]]) -> dict[int, int]:
    """Create an account per archived person (none can log in); return archive ref -> user id."""
    mapping: dict[int, int] = {}
    for row in rows:
        if row.get("system"):
            mapping[row["ref"]] = system_user(ctx).id
            continue
        user = User(email=f"archived-{secrets.token_hex(8)}@archive.invalid", password_hash=UNUSABLE_PASSWORD,
                    display_name=_free_name(ctx, row["display_name"]))
        ctx.session.add(user)
        ctx.session.flush()
        mapping[row["ref"]] = user.id
    return mapping


def _free_name(ctx: ServiceContext, name: str) -> str:
    """Return name, or name with a suffix when another account has it here."""
    candidate, n = name, 1
    while ctx.session.scalar(select(User.id).where(func.lower(User.display_name) == candidate.lower())) is not None:
        n += 1
        candidate = f"{name[:70]} ({n})"
    return candidate


def _teams(ctx: ServiceContext, competition: Competition, rows: list[dict[str, Any]],
           users: dict[int, int]) -> dict[int, int]:
    """Recreate the competition's teams and memberships; return archive ref -> team id."""
    mapping: dict[int, int] = {}
    for row in rows:
        team = Team(competition_id=competition.id, name=row["name"], invite_code=secrets.token_urlsafe(12),
                    created_at=_when(row["created_at"]))
        ctx.session.add(team)
        ctx.session.flush()
        mapping[row["ref"]] = team.id
        for member in row["members"]:
            ctx.session.add(TeamMember(team_id=team.id, user_id=users[member], competition_id=competition.id))
    return mapping


def _phase(ctx: ServiceContext, archive: SafeZip, competition: Competition, row: dict[str, Any], *,
           users: dict[int, int], teams: dict[int, int]) -> None:
    """Recreate one phase: label versions, questions, submissions with files, baselines, scores."""
    fields = ("position", "name", "description", "task_config", "label_version", "n_items", "has_private_split",
              "state_override", "max_per_day", "max_total", "leaderboard_visibility")
    phase = Phase(competition_id=competition.id, labels_key="", labels_sha256="", **{k: row[k] for k in fields},
                  **{k: _when(row[k]) for k in ("start_at", "end_at", "private_shown_at", "created_at")})
    ctx.session.add(phase)
    ctx.session.flush()
    for version in row["labels"]:
        stored = store_labels(ctx, labels=_checked(archive, version["path"], version["sha256"]))
        ctx.session.add(LabelVersion(phase_id=phase.id, version=version["version"], labels_key=stored.key,
                                     labels_sha256=stored.sha256, created_at=_when(version["created_at"])))
        if version["version"] == phase.label_version:
            phase.labels_key, phase.labels_sha256 = stored.key, stored.sha256
    if row["questions"]:
        shown = store_questions(ctx, phase_id=phase.id,
                                questions=_checked(archive, row["questions"]["path"], row["questions"]["sha256"]))
        phase.questions_key, phase.questions_sha256 = shown.key, shown.sha256
    base = f"phases/{row['position']}"
    refs = {sub["ref"]: _submission(ctx, archive, phase, sub, base=base, users=users, teams=teams)
            for sub in _lines(archive, f"{base}/submissions.jsonl")}
    for score in _lines(archive, f"{base}/scores.jsonl"):
        ctx.session.add(_score(score, refs[score["submission"]]))
    ctx.session.flush()


def _submission(ctx: ServiceContext, archive: SafeZip, phase: Phase, row: dict[str, Any], *, base: str,
                users: dict[int, int], teams: dict[int, int]) -> int:
    """Store one archived submission's file and insert its row (and its baseline row); return its new id."""
    data = _checked(archive, f"{base}/files/{row['ref']}", row["sha256"],
                    limit=max(ctx.settings.max_upload_bytes, MEMBER_LIMIT))
    stored = store_file(ctx, phase_id=phase.id, data=data)
    submission = Submission(
        phase_id=phase.id, user_id=users[row["user"]], team_id=teams.get(row["team"]) if row["team"] else None,
        filename=row["filename"], file_key=stored.key, file_sha256=stored.sha256, file_size=stored.size,
        **{k: row[k] for k in ("status", "description", "method", "entry_metadata", "selected",
                               "validation_errors", "failure_detail", "quota_day", "is_baseline", "moderation",
                               "moderation_reason")},
        moderated_at=_when(row["moderated_at"]), created_at=_when(row["created_at"]),
        updated_at=_when(row["updated_at"]))
    ctx.session.add(submission)
    ctx.session.flush()
    if row["baseline"]:
        ctx.session.add(Baseline(phase_id=phase.id, submission_id=submission.id, **row["baseline"]))
    return submission.id


def _score(row: dict[str, Any], submission_id: int) -> Score:
    """Return an archived score row for its new submission id."""
    bits = {name: base64.b64decode(row[name]) for name in ("correct_bits", "answered_bits") if name in row}
    return Score(submission_id=submission_id, label_version=row["label_version"], results=row["results"],
                 public_primary=row["public_primary"], private_primary=row["private_primary"],
                 feedback=row["feedback"], created_at=_when(row["created_at"]), retired_at=_when(row["retired_at"]),
                 **bits)


def _audit_log(ctx: ServiceContext, archive: SafeZip, competition: Competition) -> None:
    """Copy the archived audit log (its actors by name only)."""
    for row in _lines(archive, "audit.jsonl"):
        ctx.session.add(AuditEntry(competition_id=competition.id, at=_when(row["at"]), actor_name=row["actor"],
                                   target=row["target"], summary=row["summary"]))


def _checked(archive: SafeZip, name: str, sha256: str | None, *, limit: int = MEMBER_LIMIT) -> bytes:
    """Return an archived file's bytes within limit, or ArchiveError when missing or not what the manifest says."""
    if not archive.has(name):
        raise InvalidInput(f"The archive lacks {name}.")
    return archive.read(name, limit=limit, sha256=sha256 or None)


def _lines(archive: SafeZip, name: str) -> list[Record]:
    """Return the JSON Lines records of an archived file (none when it is absent)."""
    return archive.read_jsonl(name) if archive.has(name) else []


def _when(value: str | None) -> datetime | None:
    """Return an archived ISO timestamp as a naive-UTC datetime."""
    return datetime.fromisoformat(value) if value else None
