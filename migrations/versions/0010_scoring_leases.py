"""Scoring runs hold a lease they renew, and the queue remembers when each submission was last served.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-27 10:00:00

``submissions.lease_until``: while a submission is ``scoring``, its scorer renews this
every few seconds; once it has passed, the scorer is presumed dead and the sweep takes
the submission back (docs/RUNNING.md). ``submissions.served_at``: when a scorer last
claimed the submission; the queue serves first the owner served least recently.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | Sequence[str] | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add the lease and last-served columns."""
    with op.batch_alter_table("submissions") as batch:
        batch.add_column(sa.Column("lease_until", sa.DateTime(), nullable=True))
        batch.add_column(sa.Column("served_at", sa.DateTime(), nullable=True))


def downgrade() -> None:
    """Drop the lease and last-served columns."""
    with op.batch_alter_table("submissions") as batch:
        batch.drop_column("served_at")
        batch.drop_column("lease_until")
