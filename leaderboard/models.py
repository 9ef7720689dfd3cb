"""SQLAlchemy 2 models of Tailboard: accounts, competitions, phases, submissions, scores."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, Boolean, DateTime, Float, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from leaderboard.db import Base, utcnow

SUBMISSION_STATUSES = ("received", "queued", "scoring", "scored", "failed")


class User(Base):
    """A participant or organizer; public pages show display_name, never email."""

    __tablename__ = "users"

    id: Mapped[int] = mapped_column(primary_key=True)
    email: Mapped[str] = mapped_column(String(320), unique=True)
    display_name: Mapped[str] = mapped_column(String(80), unique=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    is_organizer: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)

    # Flask-Login protocol, kept here so the model needs no Flask import.
    @property
    def is_authenticated(self) -> bool:
        """Return True: a loaded user is a logged-in user."""
        return True

    @property
    def is_active(self) -> bool:
        """Return True: accounts are never disabled in this version."""
        return True

    @property
    def is_anonymous(self) -> bool:
        """Return False: anonymous visitors are not User rows."""
        return False

    def get_id(self) -> str:
        """Return the session identifier of this user."""
        return str(self.id)


class ApiToken(Base):
    """A personal API token; only its SHA-256 is stored."""

    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(80))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    prefix: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    last_used_at: Mapped[datetime | None] = mapped_column(DateTime)
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime)

    user: Mapped[User] = relationship()


class Competition(Base):
    """One benchmark, published as an ordered list of phases."""

    __tablename__ = "competitions"

    id: Mapped[int] = mapped_column(primary_key=True)
    slug: Mapped[str] = mapped_column(String(64), unique=True)
    title: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text, default="")
    created_by_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)

    phases: Mapped[list[Phase]] = relationship(
        back_populates="competition", order_by="Phase.position", cascade="all, delete-orphan"
    )


class Phase(Base):
    """An ordered release of a competition with its own data, labels, limits and rules.

    Status is derived (services.phases.phase_status): an organizer override
    (``state_override`` 'open' or 'closed') wins; otherwise the clock decides from
    ``start_at``/``end_at`` (no start date means upcoming until opened).
    """

    __tablename__ = "phases"
    __table_args__ = (UniqueConstraint("competition_id", "position"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    competition_id: Mapped[int] = mapped_column(ForeignKey("competitions.id", ondelete="CASCADE"), index=True)
    position: Mapped[int] = mapped_column(Integer)
    name: Mapped[str] = mapped_column(String(120))
    description: Mapped[str] = mapped_column(Text, default="")
    task_config: Mapped[dict[str, Any]] = mapped_column(JSON)
    labels_key: Mapped[str] = mapped_column(String(500))
    labels_sha256: Mapped[str] = mapped_column(String(64))
    label_version: Mapped[int] = mapped_column(Integer, default=1)
    n_items: Mapped[int] = mapped_column(Integer)
    has_private_split: Mapped[bool] = mapped_column(Boolean, default=False)
    questions_key: Mapped[str | None] = mapped_column(String(500))
    questions_sha256: Mapped[str | None] = mapped_column(String(64))
    start_at: Mapped[datetime | None] = mapped_column(DateTime)
    end_at: Mapped[datetime | None] = mapped_column(DateTime)
    state_override: Mapped[str | None] = mapped_column(String(16))
    max_per_day: Mapped[int | None] = mapped_column(Integer)
    max_total: Mapped[int | None] = mapped_column(Integer)
    leaderboard_visibility: Mapped[str] = mapped_column(String(16), default="public")
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)

    competition: Mapped[Competition] = relationship(back_populates="phases")


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
    # Participant-safe validation problems (SPEC §2.3 objects) or None.
    validation_errors: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    # Internal failure detail for organizers and logs; never shown to participants.
    failure_detail: Mapped[str | None] = mapped_column(Text)
    idempotency_key: Mapped[str | None] = mapped_column(String(200))
    quota_day: Mapped[str | None] = mapped_column(String(10))
    is_baseline: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow, onupdate=utcnow)

    phase: Mapped[Phase] = relationship()
    user: Mapped[User] = relationship()
    scores: Mapped[list[Score]] = relationship(back_populates="submission", order_by="Score.id")


class Score(Base):
    """The result of scoring one submission against one label version.

    Re-scoring retires the old row (``retired_at``) instead of overwriting it.
    ``results`` is the full, unrounded ``scoring.evaluate`` object: it may hold the
    private split, so it is redacted (services.visibility) before leaving the server.
    """

    __tablename__ = "scores"

    id: Mapped[int] = mapped_column(primary_key=True)
    submission_id: Mapped[int] = mapped_column(ForeignKey("submissions.id", ondelete="CASCADE"), index=True)
    label_version: Mapped[int] = mapped_column(Integer)
    results: Mapped[dict[str, Any]] = mapped_column(JSON)
    public_primary: Mapped[float | None] = mapped_column(Float)
    private_primary: Mapped[float | None] = mapped_column(Float)
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
    """Submissions charged to one user in one phase on one UTC day ('total' for all days).

    Charged with one conditional UPDATE (``used < limit``) so concurrent uploads can
    never exceed the limit; refunded on platform failures.
    """

    __tablename__ = "quota_usage"
    __table_args__ = (UniqueConstraint("phase_id", "user_id", "day"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    phase_id: Mapped[int] = mapped_column(ForeignKey("phases.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    day: Mapped[str] = mapped_column(String(10))
    used: Mapped[int] = mapped_column(Integer, default=0)
