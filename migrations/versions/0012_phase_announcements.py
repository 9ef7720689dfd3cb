"""Phases remember the status their webhooks last announced (issue 21: phase.* events by dates).

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-27 11:00:00

phases.announced_status: 'upcoming', 'open' or 'closed', the status the last
phase.opened / phase.closed webhook told (notify/phase_notices.py). The sweep announces
a phase whose status (from its dates) differs, claiming the change with a conditional
UPDATE. Existing phases are backfilled with their status now, so upgrading sends no
burst of old events.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | Sequence[str] | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _status(start_at: datetime | None, end_at: datetime | None, override: str | None, now: datetime) -> str:
    """Return a phase's status as accounts.access.status_at does (copied: a migration imports no app code)."""
    if override in ("open", "closed"):
        return override
    if start_at is None or now < start_at:
        return "upcoming"
    if end_at is not None and now >= end_at:
        return "closed"
    return "open"


def upgrade() -> None:
    """Add phases.announced_status and fill it with each phase's current status."""
    with op.batch_alter_table("phases") as batch:
        batch.add_column(sa.Column("announced_status", sa.String(length=16), nullable=True))
    phases = sa.table("phases", sa.column("id", sa.Integer()), sa.column("start_at", sa.DateTime()),
                      sa.column("end_at", sa.DateTime()), sa.column("state_override", sa.String()),
                      sa.column("announced_status", sa.String()))
    bind = op.get_bind()
    now = datetime.now(UTC).replace(tzinfo=None)
    rows = bind.execute(sa.select(phases.c.id, phases.c.start_at, phases.c.end_at, phases.c.state_override)).all()
    for row in rows:
        bind.execute(phases.update().where(phases.c.id == row.id).values(
            announced_status=_status(row.start_at, row.end_at, row.state_override, now)))


def downgrade() -> None:
    """Drop phases.announced_status."""
    with op.batch_alter_table("phases") as batch:
        batch.drop_column("announced_status")
