"""Operations: background jobs, the audit log, the mail outbox."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, DateTime, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from leaderboard.platform.db import Base, utcnow


class Job(Base):
    """A long organizer task run in the background (docs/ORGANIZING.md): re-scoring, replacing labels, importing.

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
    """One organizer action on a competition (docs/ORGANIZING.md): when, who, on what, in one line. Managers only."""

    __tablename__ = "audit_log"

    id: Mapped[int] = mapped_column(primary_key=True)
    competition_id: Mapped[int] = mapped_column(ForeignKey("competitions.id", ondelete="CASCADE"), index=True)
    at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    actor_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    actor_name: Mapped[str] = mapped_column(String(120))  # the display name then, or "operator (<os user>)"
    target: Mapped[str] = mapped_column(String(200))  # e.g. "phase 3 “Camping”", "submission 41"
    summary: Mapped[str] = mapped_column(String(500))


class MailOutbox(Base):
    """One mail to send (notify/outbox.py): written with the event that causes it, sent by a background sender.

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
