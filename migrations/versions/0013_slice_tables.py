"""Scores keep the fingerprints of their slices' count tables (issue 19: a re-score reuses unchanged intervals).

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-27 20:00:00

scores.slice_tables: [[path, fingerprint], ...], where each slice of the result object
sits and a digest of the count tables its bootstrap interval was drawn from
(scoring/metrics/reuse.py). A re-score takes the interval of a slice whose tables did
not change instead of drawing it again. Existing scores get none (NULL): their next
re-score draws every interval, as before, and stores the list.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | Sequence[str] | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add scores.slice_tables."""
    with op.batch_alter_table("scores") as batch:
        batch.add_column(sa.Column("slice_tables", sa.JSON(), nullable=True))


def downgrade() -> None:
    """Drop scores.slice_tables."""
    with op.batch_alter_table("scores") as batch:
        batch.drop_column("slice_tables")
