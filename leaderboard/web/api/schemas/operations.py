"""Organizer operations in the API: jobs, the audit log, moderation."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class Job(BaseModel):
    """A background job's progress (docs/ORGANIZING.md); for the competition's managers only."""

    id: int
    kind: str
    status: Literal["queued", "running", "done", "failed"]
    done: int
    total: int | None
    error: str | None = Field(description="Why it failed, for managers; null unless failed.")
    url: str


class AuditEntry(BaseModel):
    """One organizer action: when, who, on what, what."""

    at: datetime
    actor: str = Field(description="A display name, or 'operator (<os user>)' for the command line.")
    target: str
    summary: str


class AuditLog(BaseModel):
    """A competition's audit log, newest first (managers only)."""

    entries: list[AuditEntry]


class ModerationReason(BaseModel):
    """Why a submission is disqualified (its owner reads it); optional when hiding."""

    model_config = ConfigDict(extra="forbid")

    reason: str | None = Field(None, max_length=1000)


class Moderation(BaseModel):
    """A submission's moderation as its owner and the managers see it."""

    state: Literal["visible", "hidden", "disqualified"]
    reason: str | None
    at: datetime | None
