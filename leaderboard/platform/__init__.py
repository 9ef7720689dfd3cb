"""The plumbing every other package stands on: settings, the database, the runtime, storage, domain errors.

``config`` (Settings, read once from the environment), ``db`` (Base with its naming
convention, engines, naive-UTC time), ``runtime`` (Runtime and ServiceContext: the
session, storages, dispatchers and the functions the builder injects), ``storage/`` (one
interface, local and S3 backends), ``errors`` (the domain errors every layer raises),
``sessions`` (quick retries and rollbacks that cannot raise), ``write_signal`` and
``smtp``. It imports no other package of leaderboard/ (the bottom layer; the runtime
knows no domain package: the builder hands it what to call).
"""

from __future__ import annotations

from leaderboard.platform.config import Settings
from leaderboard.platform.errors import (
    Conflict,
    DomainError,
    Forbidden,
    InvalidInput,
    LabelIntegrityError,
    NotFound,
    QuotaExceeded,
    ScoringUnavailable,
    SubmissionInvalid,
    TooLarge,
    Unauthorized,
)
from leaderboard.platform.runtime import Runtime, ServiceContext, build_runtime

__all__ = [
    "Conflict", "DomainError", "Forbidden", "InvalidInput", "LabelIntegrityError", "NotFound", "QuotaExceeded",
    "Runtime", "ScoringUnavailable", "ServiceContext", "Settings", "SubmissionInvalid", "TooLarge", "Unauthorized",
    "build_runtime"
]
