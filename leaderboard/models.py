"""SQLAlchemy 2 models of Tailboard: accounts, competitions, phases, submissions, scores."""

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
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from leaderboard.db import Base, utcnow


class User(Base):
    """A participant or organizer; public pages show display_name, never email."""

    __tablename__ = "users"

    id: Mapped[int] = mapped_column(primary_key=True)
    email: Mapped[str] = mapped_column(String(320), unique=True)
    display_name: Mapped[str] = mapped_column(String(80), unique=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    is_organizer: Mapped[bool] = mapped_column(Boolean, default=False)
    # Bumped at logout: a session cookie carries the version it was issued under.
    session_version: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # When the owner followed the emailed confirmation link (services/confirmation.py); None: not confirmed.
    # Asked only while the instance sends mail; accounts made by the operator count as confirmed.
    email_confirmed_at: Mapped[datetime | None] = mapped_column(DateTime)
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
    # The owner: the organizer who manages it (services/access.py); None: only the operator (CLI) does.
    created_by_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    # Participants need an organizer's approval before they can submit (services/participation.py).
    requires_approval: Mapped[bool] = mapped_column(Boolean, default=False, server_default="0")
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)

    phases: Mapped[list[Phase]] = relationship(
        back_populates="competition", order_by="Phase.position", cascade="all, delete-orphan"
    )


class Participation(Base):
    """One account's request to take part in a competition that requires approval, and the organizers' answer.

    ``status`` is 'pending', 'approved' or 'refused'; each account asks for itself (team
    members too). Only an approved account may submit while the competition requires approval.
    """

    __tablename__ = "participations"
    __table_args__ = (UniqueConstraint("competition_id", "user_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    competition_id: Mapped[int] = mapped_column(ForeignKey("competitions.id", ondelete="CASCADE"), index=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    status: Mapped[str] = mapped_column(String(16), default="pending")
    requested_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    decided_at: Mapped[datetime | None] = mapped_column(DateTime)
    decided_by_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))

    user: Mapped[User] = relationship(foreign_keys=[user_id])


class Team(Base):
    """Participants of one competition who submit together: one quota, one name on the board (SPEC §9)."""

    __tablename__ = "teams"
    __table_args__ = (UniqueConstraint("competition_id", "name"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    competition_id: Mapped[int] = mapped_column(ForeignKey("competitions.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(80))
    invite_code: Mapped[str] = mapped_column(String(32), unique=True)
    created_by_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)

    members: Mapped[list[TeamMember]] = relationship(back_populates="team", cascade="all, delete-orphan",
                                                     order_by="TeamMember.id")


class TeamMember(Base):
    """A user's membership of a team; one team per user per competition."""

    __tablename__ = "team_members"
    __table_args__ = (UniqueConstraint("competition_id", "user_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    team_id: Mapped[int] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"), index=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    competition_id: Mapped[int] = mapped_column(ForeignKey("competitions.id", ondelete="CASCADE"))
    joined_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)

    team: Mapped[Team] = relationship(back_populates="members")
    user: Mapped[User] = relationship()


class Phase(Base):
    """An ordered release of a competition with its own data, labels, limits and rules.

    Status is derived (services.access.phase_status): an organizer override
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
    # When the private split's scores were first shown (the phase closed), kept when an organizer reopens it.
    private_shown_at: Mapped[datetime | None] = mapped_column(DateTime)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)

    competition: Mapped[Competition] = relationship(back_populates="phases")

    @property
    def primary_metric(self) -> str:
        """Return the metric (path) the phase ranks by: its config's primary_metric, accuracy by default."""
        return str(self.task_config.get("primary_metric", "accuracy"))


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
    # Scoring attempts that ended in a platform failure; shown to organizers.
    attempts: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # When a platform-failed or stalled submission is due to be tried again.
    next_attempt_at: Mapped[datetime | None] = mapped_column(DateTime)
    # When the current scoring attempt started (a 'scoring' row older than a limit is stale).
    scoring_started_at: Mapped[datetime | None] = mapped_column(DateTime)
    # The entry (SPEC §9): the method it belongs to, the uploader's team at upload time, public metadata.
    method: Mapped[str] = mapped_column(String(80), default="default", server_default="default")
    entry_metadata: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    team_id: Mapped[int | None] = mapped_column(ForeignKey("teams.id", ondelete="SET NULL"), index=True)
    selected: Mapped[bool] = mapped_column(Boolean, default=False, server_default="0")  # a final selection
    # Moderation (SPEC §10): None, "hidden" or "disqualified"; a moderated submission is never on the board.
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
    private split, so it is redacted (services.visibility) before leaving the server.
    """

    __tablename__ = "scores"

    id: Mapped[int] = mapped_column(primary_key=True)
    submission_id: Mapped[int] = mapped_column(ForeignKey("submissions.id", ondelete="CASCADE"), index=True)
    label_version: Mapped[int] = mapped_column(Integer)
    results: Mapped[dict[str, Any]] = mapped_column(JSON)
    public_primary: Mapped[float | None] = mapped_column(Float)
    private_primary: Mapped[float | None] = mapped_column(Float)
    # What a participant was shown under the phase's public_feedback rule (SPEC §12), or None.
    feedback: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    # Per-item correctness in the scored label version's item order (numpy.packbits, scoring.correctness),
    # for SPEC §8.3's McNemar test: never served, never logged, not loaded unless asked for.
    correct_bits: Mapped[bytes | None] = mapped_column(LargeBinary, deferred=True)
    answered_bits: Mapped[bytes | None] = mapped_column(LargeBinary, deferred=True)
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


class LabelVersion(Base):
    """One version of a phase's hidden label file (the phase points at the newest); kept for the archive."""

    __tablename__ = "label_versions"
    __table_args__ = (UniqueConstraint("phase_id", "version"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    phase_id: Mapped[int] = mapped_column(ForeignKey("phases.id", ondelete="CASCADE"), index=True)
    version: Mapped[int] = mapped_column(Integer)
    labels_key: Mapped[str] = mapped_column(String(500))
    labels_sha256: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class Job(Base):
    """A long organizer task run in the background (SPEC §10): re-scoring, replacing labels, importing.

    ``claimed_by`` and ``heartbeat_at`` belong to the run that holds it; a running job whose
    heartbeat is older than stale_seconds was abandoned (its process died) and is resumed
    from ``params['cursor']``. ``error`` is for the competition's managers only.
    """

    __tablename__ = "jobs"

    id: Mapped[int] = mapped_column(primary_key=True)
    kind: Mapped[str] = mapped_column(String(32))
    status: Mapped[str] = mapped_column(String(16), default="queued", index=True)
    competition_id: Mapped[int | None] = mapped_column(ForeignKey("competitions.id", ondelete="CASCADE"),
                                                       index=True)
    phase_id: Mapped[int | None] = mapped_column(ForeignKey("phases.id", ondelete="CASCADE"))
    params: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    done: Mapped[int] = mapped_column(Integer, default=0)
    total: Mapped[int | None] = mapped_column(Integer)
    error: Mapped[str | None] = mapped_column(Text)
    actor_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    actor_name: Mapped[str] = mapped_column(String(120))
    claimed_by: Mapped[str | None] = mapped_column(String(64))
    heartbeat_at: Mapped[datetime | None] = mapped_column(DateTime)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(DateTime)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime)


class AuditEntry(Base):
    """One organizer action on a competition (SPEC §10): when, who, on what, in one line. Managers only."""

    __tablename__ = "audit_log"

    id: Mapped[int] = mapped_column(primary_key=True)
    competition_id: Mapped[int] = mapped_column(ForeignKey("competitions.id", ondelete="CASCADE"), index=True)
    at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    actor_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    actor_name: Mapped[str] = mapped_column(String(120))  # the display name then, or "operator (<os user>)"
    target: Mapped[str] = mapped_column(String(200))  # e.g. "phase 3 “Camping”", "submission 41"
    summary: Mapped[str] = mapped_column(String(500))


class QuotaUsage(Base):
    """Submissions charged to one entry owner in one phase on one UTC day ('total' for all days).

    The owner is a team ("team:<id>"), whose members share the quota, or a user without a
    team ("user:<id>"); services.quota.owner_key is the one spelling. Charged with one
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


class Board(Base):
    """Where the materialized board of one phase stands (services/boards.py, docs/RANKING.md).

    ``wanted`` counts the changes writers announced (board_events.board_changed), ``built``
    the announced changes the rows reflect; ``version`` moves whenever the rows change
    and keys every cache of the board; ``signature`` names what the score cells were
    computed under (views, probing settings, splits): a new one recomputes them.
    """

    __tablename__ = "boards"

    phase_id: Mapped[int] = mapped_column(ForeignKey("phases.id", ondelete="CASCADE"), primary_key=True)
    wanted: Mapped[int] = mapped_column(Integer, default=0)
    built: Mapped[int] = mapped_column(Integer, default=0)
    version: Mapped[int] = mapped_column(Integer, default=0)
    signature: Mapped[str] = mapped_column(String(64), default="")
    refreshed_at: Mapped[datetime | None] = mapped_column(DateTime)


class BoardDirty(Base):
    """A change announced to a phase's board and not yet built: a submission, or the whole board (NULL)."""

    __tablename__ = "board_dirty"

    id: Mapped[int] = mapped_column(primary_key=True)
    phase_id: Mapped[int] = mapped_column(ForeignKey("phases.id", ondelete="CASCADE"), index=True)
    submission_id: Mapped[int | None] = mapped_column(Integer)


class ScoreCell(Base):
    """One figure of an active score as the board shows it: a metric path's value and interval on one board.

    ``board`` is "open" (the board while the phase is not closed) or "closed" (after close);
    values are what participants may see there (services.visibility), before the ladder.
    """

    __tablename__ = "score_cells"
    __table_args__ = (Index("ix_score_cells_phase_board_path", "phase_id", "board", "path"),)

    score_id: Mapped[int] = mapped_column(ForeignKey("scores.id", ondelete="CASCADE"), primary_key=True)
    board: Mapped[str] = mapped_column(String(8), primary_key=True)
    path: Mapped[str] = mapped_column(String(300), primary_key=True)
    phase_id: Mapped[int] = mapped_column(ForeignKey("phases.id", ondelete="CASCADE"))
    value: Mapped[float | None] = mapped_column(Float)
    lo: Mapped[float | None] = mapped_column(Float)
    hi: Mapped[float | None] = mapped_column(Float)
    error: Mapped[float | None] = mapped_column(Float)  # a coarse figure's step (docs/PROBING.md); None: exact


class BoardRow(Base):
    """One ranked row of a phase's board: an entry's best submission in one view, on one board (SPEC §8.3, §9).

    An entry is (team, or user without a team; method); a baseline is an entry of its own.
    ``position`` is the row's place in the view's order (baselines included), ``rank`` its
    ordinal among ranked rows; the row's other columns are its score's cells.
    """

    __tablename__ = "board_rows"
    __table_args__ = (
        UniqueConstraint("phase_id", "board", "view", "entry"),
        Index("ix_board_rows_phase_board_view_position", "phase_id", "board", "view", "position"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    phase_id: Mapped[int] = mapped_column(ForeignKey("phases.id", ondelete="CASCADE"))
    board: Mapped[str] = mapped_column(String(8))
    view: Mapped[int] = mapped_column(Integer)
    position: Mapped[int] = mapped_column(Integer)
    entry: Mapped[str] = mapped_column(String(120))
    submission_id: Mapped[int] = mapped_column(Integer)
    score_id: Mapped[int] = mapped_column(Integer)
    user_id: Mapped[int | None] = mapped_column(Integer)  # the uploader, for a user without a team
    team_id: Mapped[int | None] = mapped_column(Integer)
    display_name: Mapped[str] = mapped_column(String(120))
    team: Mapped[str | None] = mapped_column(String(80))
    method: Mapped[str] = mapped_column(String(80))
    entry_metadata: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    is_baseline: Mapped[bool] = mapped_column(Boolean)
    builtin: Mapped[bool] = mapped_column(Boolean)
    submitted_at: Mapped[datetime] = mapped_column(DateTime)
    submissions: Mapped[int] = mapped_column(Integer)  # scored submissions of the entry on this board
    rank: Mapped[int | None] = mapped_column(Integer)
    stat_rank: Mapped[int | None] = mapped_column(Integer)
    p_vs_previous: Mapped[float | None] = mapped_column(Float)
    value: Mapped[float | None] = mapped_column(Float)
    ci_lo: Mapped[float | None] = mapped_column(Float)
    ci_hi: Mapped[float | None] = mapped_column(Float)
    ladder_step: Mapped[float | None] = mapped_column(Float)  # figures rounded to this step (the ladder)
    withheld: Mapped[bool] = mapped_column(Boolean, default=False)  # under the ladder, nothing released yet


class MailOutbox(Base):
    """One mail to send (services/outbox.py): written with the event that causes it, sent by a background sender.

    Due while ``sent_at`` is empty and ``next_attempt_at`` has come; each attempt moves
    ``next_attempt_at`` ahead first (the claim), so one sender at a time holds it and a
    sender that dies leaves it due again later. Given up: ``next_attempt_at`` empty, unsent.
    """

    __tablename__ = "mail_outbox"

    id: Mapped[int] = mapped_column(primary_key=True)
    recipient: Mapped[str] = mapped_column(String(320))
    subject: Mapped[str] = mapped_column(String(300))
    body: Mapped[str] = mapped_column(Text)
    kind: Mapped[str] = mapped_column(String(32))  # e.g. "confirm_email"; what the next mails say about themselves
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    sent_at: Mapped[datetime | None] = mapped_column(DateTime)
    attempts: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    next_attempt_at: Mapped[datetime | None] = mapped_column(DateTime, index=True)
    last_error: Mapped[str | None] = mapped_column(Text)  # for the operator's eyes (logs, database), never a page
