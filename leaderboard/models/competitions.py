"""Competitions: their phases (with every label version), participation requests, teams."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, DateTime, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from leaderboard.models.accounts import User
from leaderboard.platform.db import Base, utcnow


class Competition(Base):
    """One benchmark, published as an ordered list of phases."""

    __tablename__ = "competitions"

    id: Mapped[int] = mapped_column(primary_key=True)
    slug: Mapped[str] = mapped_column(String(64), unique=True)
    title: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text, default="")
    # The owner: the organizer who manages it (accounts/access.py); None: only the operator (CLI) does.
    created_by_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    # Participants need an organizer's approval before they can submit (accounts/participation.py).
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


class Phase(Base):
    """An ordered release of a competition with its own data, labels, limits and rules.

    Status is derived (accounts.access.phase_status): an organizer override
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
    # The status (upcoming, open, closed) its phase.* webhooks last told: notify/phase_notices.py.
    announced_status: Mapped[str | None] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)

    competition: Mapped[Competition] = relationship(back_populates="phases")

    @property
    def primary_metric(self) -> str:
        """Return the metric (path) the phase ranks by: its config's primary_metric, accuracy by default."""
        return str(self.task_config.get("primary_metric", "accuracy"))


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


class Team(Base):
    """Participants of one competition who submit together: one quota, one name on the board (docs/ENTRIES.md)."""

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
