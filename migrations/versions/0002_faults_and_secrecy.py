"""Columns for retried scoring, server-side logout and ladder feedback.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22 20:50:00

users.session_version (logout invalidates old cookies), submissions.attempts,
next_attempt_at and scoring_started_at (platform failures are retried by a sweep),
scores.feedback (what a participant was shown under docs/PROBING.md's ladder).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.add_column(sa.Column("session_version", sa.Integer(), server_default="0", nullable=False))
    with op.batch_alter_table("submissions") as batch:
        batch.add_column(sa.Column("attempts", sa.Integer(), server_default="0", nullable=False))
        batch.add_column(sa.Column("next_attempt_at", sa.DateTime(), nullable=True))
        batch.add_column(sa.Column("scoring_started_at", sa.DateTime(), nullable=True))
    with op.batch_alter_table("scores") as batch:
        batch.add_column(sa.Column("feedback", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("scores") as batch:
        batch.drop_column("feedback")
    with op.batch_alter_table("submissions") as batch:
        batch.drop_column("scoring_started_at")
        batch.drop_column("next_attempt_at")
        batch.drop_column("attempts")
    with op.batch_alter_table("users") as batch:
        batch.drop_column("session_version")
