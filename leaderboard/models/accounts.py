"""Accounts: users (participants, organizers) and their API tokens."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, DateTime, ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column, relationship

from leaderboard.platform.db import Base, utcnow


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
    # When the owner followed the emailed confirmation link (accounts/confirmation.py); None: not confirmed.
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
