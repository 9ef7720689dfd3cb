"""Notifications: per-user mail preferences, competition webhooks and their delivery outbox (leaderboard/notify/)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, Boolean, DateTime, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from leaderboard.platform.db import Base, utcnow


class NotifyPreference(Base):
    """A user's choices about the mails Tailboard sends them; no row means every default (mails on)."""

    __tablename__ = "notify_preferences"

    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    submission_mail: Mapped[bool] = mapped_column(Boolean, default=True, server_default="1")
    updated_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class Webhook(Base):
    """An organizer's endpoint for a competition's events (docs/NOTIFY.md); ``secret`` signs every delivery."""

    __tablename__ = "webhooks"

    id: Mapped[int] = mapped_column(primary_key=True)
    competition_id: Mapped[int] = mapped_column(ForeignKey("competitions.id", ondelete="CASCADE"), index=True)
    url: Mapped[str] = mapped_column(String(2000))
    secret: Mapped[str] = mapped_column(String(128))
    events: Mapped[list[str]] = mapped_column(JSON, default=list)
    active: Mapped[bool] = mapped_column(Boolean, default=True, server_default="1")
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    created_by_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))


class WebhookDelivery(Base):
    """One event to POST to one webhook: written with its event, sent and retried by a background sender.

    ``body`` is the exact JSON sent (and signed) on every attempt; ``delivery_id`` lets the
    receiver drop a repeat. Due while ``delivered_at`` is empty and ``next_attempt_at`` has
    come; each attempt moves ``next_attempt_at`` ahead first (the claim). Given up:
    ``next_attempt_at`` empty, undelivered.
    """

    __tablename__ = "webhook_deliveries"

    id: Mapped[int] = mapped_column(primary_key=True)
    webhook_id: Mapped[int] = mapped_column(ForeignKey("webhooks.id", ondelete="CASCADE"), index=True)
    delivery_id: Mapped[str] = mapped_column(String(36), unique=True)
    event: Mapped[str] = mapped_column(String(32))
    phase_id: Mapped[int | None] = mapped_column(Integer)
    body: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    attempts: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    next_attempt_at: Mapped[datetime | None] = mapped_column(DateTime, index=True)
    delivered_at: Mapped[datetime | None] = mapped_column(DateTime)
    last_status: Mapped[int | None] = mapped_column(Integer)
    last_error: Mapped[str | None] = mapped_column(Text)  # for the competition's managers only
