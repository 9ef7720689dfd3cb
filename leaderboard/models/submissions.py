"""Submissions: uploaded files, their scores (retired, never overwritten), baselines, quota usage."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from leaderboard.models.accounts import User
from leaderboard.models.competitions import Phase, Team
from leaderboard.platform.db import Base, utcnow


class Submission(Base):
    """One uploaded prediction file; stored before it is acknowledged."""

    __tablename__ = "submissions"
    __table_args__ = (UniqueConstraint("user_id", "idempotency_key"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    phase_id: Mapped[int] = mapped_column(ForeignKey("phases.id", ondelete="CASCADE"), index=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    description: Mapped[str] = mapped_column(String(500), default="")
    filename: Mapped[str] = mapped_column(String(255))
    file_key: Mapped[str] = mapped_column(String(500))
    file_sha256: Mapped[str] = mapped_column(String(64))
    file_size: Mapped[int] = mapped_column(BigInteger)
    status: Mapped[str] = mapped_column(String(16), default="received", index=True)
    # Participant-safe validation problems (docs/FORMATS.md#validation-problems) or None.
    validation_errors: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    # Internal failure detail for organizers and logs; never shown to participants.
    failure_detail: Mapped[str | None] = mapped_column(Text)
    idempotency_key: Mapped[str | None] = mapped_column(String(200))
    quota_day: Mapped[str | None] = mapped_column(String(10))
    is_baseline: Mapped[bool] = mapped_column(Boolean, default=False)
    # Scoring attempts that ended in a platform failure; shown to organizers.
    attempts: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # When a platform-failed or stalled submission is due to be tried again.
    next_attempt_at: Mapped[datetime | None] = mapped_column(DateTime)
    # When the current scoring attempt started (a 'scoring' row older than a limit is stale).
    scoring_started_at: Mapped[datetime | None] = mapped_column(DateTime)
    # While 'scoring': the scorer renews this lease every few seconds; once past, the sweep takes the row back.
    lease_until: Mapped[datetime | None] = mapped_column(DateTime)
    # When a scorer last claimed it: the queue serves first the owner served least recently (docs/RUNNING.md).
    served_at: Mapped[datetime | None] = mapped_column(DateTime)
    # The entry (docs/ENTRIES.md): the method it belongs to, the uploader's team at upload time, public metadata.
    method: Mapped[str] = mapped_column(String(80), default="default", server_default="default")
    entry_metadata: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    team_id: Mapped[int | None] = mapped_column(ForeignKey("teams.id", ondelete="SET NULL"), index=True)
    selected: Mapped[bool] = mapped_column(Boolean, default=False, server_default="0")  # a final selection
    # Moderation (docs/ORGANIZING.md): None, "hidden" or "disqualified"; a moderated submission is never on the board.
    moderation: Mapped[str | None] = mapped_column(String(16))
    moderation_reason: Mapped[str | None] = mapped_column(Text)
    moderated_at: Mapped[datetime | None] = mapped_column(DateTime)
    moderated_by_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow, onupdate=utcnow)

    phase: Mapped[Phase] = relationship()
    user: Mapped[User] = relationship(foreign_keys=[user_id])
    team: Mapped[Team | None] = relationship()
    scores: Mapped[list[Score]] = relationship(back_populates="submission", order_by="Score.id")


class Score(Base):
    """The result of scoring one submission against one label version.

    Re-scoring retires the old row (``retired_at``) instead of overwriting it.
    ``results`` is the full, unrounded ``scoring.evaluate`` object: it may hold the
    private split, so it is redacted (disclosure.visibility) before leaving the server.
    """

    __tablename__ = "scores"

    id: Mapped[int] = mapped_column(primary_key=True)
    submission_id: Mapped[int] = mapped_column(ForeignKey("submissions.id", ondelete="CASCADE"), index=True)
    label_version: Mapped[int] = mapped_column(Integer)
    results: Mapped[dict[str, Any]] = mapped_column(JSON)
    public_primary: Mapped[float | None] = mapped_column(Float)
    private_primary: Mapped[float | None] = mapped_column(Float)
    # What a participant was shown under the phase's public_feedback rule (docs/PROBING.md), or None.
    feedback: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    # Per-item correctness in the scored label version's item order (numpy.packbits, scoring.correctness),
    # for the McNemar test (docs/METRICS.md#figures-on-the-board): never served, never logged, loaded only when asked.
    correct_bits: Mapped[bytes | None] = mapped_column(LargeBinary, deferred=True)
    answered_bits: Mapped[bytes | None] = mapped_column(LargeBinary, deferred=True)
    # Where each slice of ``results`` sits and the fingerprint of its count tables (scoring.metrics.reuse), so a
    # re-score draws intervals only for tables that changed: digests of hidden counts, never served, never logged.
    slice_tables: Mapped[list[Any] | None] = mapped_column(JSON, deferred=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    retired_at: Mapped[datetime | None] = mapped_column(DateTime)

    submission: Mapped[Submission] = relationship(back_populates="scores")


class Baseline(Base):
    """A submission entered by the platform (majority, random, all-yes) or an organizer."""

    __tablename__ = "baselines"
    __table_args__ = (UniqueConstraint("phase_id", "name"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    phase_id: Mapped[int] = mapped_column(ForeignKey("phases.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(120))
    kind: Mapped[str] = mapped_column(String(16))  # 'builtin' or 'uploaded'
    submission_id: Mapped[int] = mapped_column(ForeignKey("submissions.id", ondelete="CASCADE"), unique=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)

    submission: Mapped[Submission] = relationship()


class QuotaUsage(Base):
    """Submissions charged to one entry owner in one phase on one UTC day ('total' for all days).

    The owner is a team ("team:<id>"), whose members share the quota, or a user without a
    team ("user:<id>"); entries.quota.owner_key is the one spelling. Charged with one
    conditional UPDATE (``used < limit``) so concurrent uploads can never exceed the
    limit; refunded on platform failures.
    """

    __tablename__ = "quota_usage"
    __table_args__ = (UniqueConstraint("phase_id", "owner", "day"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    phase_id: Mapped[int] = mapped_column(ForeignKey("phases.id", ondelete="CASCADE"))
    owner: Mapped[str] = mapped_column(String(32))
    day: Mapped[str] = mapped_column(String(10))
    used: Mapped[int] = mapped_column(Integer, default=0)
