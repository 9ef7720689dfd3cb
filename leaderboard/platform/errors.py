"""Domain errors raised by services; leaderboard/web/errors.py turns them into responses.

Every message is safe to show the user who caused it: it never quotes hidden labels.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any


class DomainError(Exception):
    """Base of every error a service raises on purpose."""

    def __init__(self, message: str, details: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class NotFound(DomainError):
    """The thing asked for does not exist (or the caller may not know it exists)."""


class Forbidden(DomainError):
    """The caller is known but may not do this."""


class Unauthorized(DomainError):
    """The caller must log in or send a valid token."""


class Conflict(DomainError):
    """The request clashes with the current state (duplicate slug, phase not open...)."""


class InvalidInput(DomainError):
    """A form field, config or organizer file is wrong; details say which."""


class SubmissionInvalid(DomainError):
    """The prediction file failed validation; details is the errors object of docs/FORMATS.md#validation-problems."""

    def __init__(self, message: str, details: dict[str, Any], submission_id: int | None = None) -> None:
        super().__init__(message, details)
        self.submission_id = submission_id


class TooLarge(DomainError):
    """An upload is larger than the instance accepts."""


class QuotaExceeded(DomainError):
    """The daily or total submission limit is used up; resets_at is None for the total."""

    def __init__(self, message: str, resets_at: datetime | None) -> None:
        super().__init__(message, {"resets_at": resets_at.isoformat() + "Z" if resets_at else None})
        self.resets_at = resets_at


class ScoringUnavailable(DomainError):
    """A phase cannot score now (its label file fails its integrity check); nothing was charged or changed."""


class LabelIntegrityError(Exception):
    """A phase's stored label file is not the one it was created with (its SHA-256 differs).

    A platform fault, not a DomainError: nobody who sent a request caused it, and nothing is
    ever scored against other labels. Scoring runs wait, refunded, for the file to be restored
    (recovery.wait_for_labels); uploads and rescores are refused with ScoringUnavailable (503).
    """

    def __init__(self, *, phase_id: int, key: str, expected: str, actual: str) -> None:
        super().__init__(f"label file {key!r} of phase {phase_id} has SHA-256 {actual}, expected {expected}")
        self.phase_id, self.key, self.expected, self.actual = phase_id, key, expected, actual
