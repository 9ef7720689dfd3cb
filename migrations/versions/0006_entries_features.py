"""Entries (docs/ENTRIES.md) beyond 0003: quota counted per entry owner (a team, or a user without one).

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-25 05:30:00

quota_usage.user_id becomes quota_usage.owner, "user:<id>" or "team:<id>"
(entries.quota.owner_key), unique per (phase, owner, day): members of a team share one
row, charged with the same conditional UPDATE as before. Existing rows keep their
counts as "user:<id>" (no team had submitted before this revision).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Key quota rows by owner instead of user."""
    with op.batch_alter_table("quota_usage") as batch:
        batch.add_column(sa.Column("owner", sa.String(length=32), nullable=True))
    op.execute("UPDATE quota_usage SET owner = 'user:' || CAST(user_id AS VARCHAR(20))")
    with op.batch_alter_table("quota_usage") as batch:
        batch.alter_column("owner", existing_type=sa.String(length=32), nullable=False)
        batch.drop_constraint(batch.f("uq_quota_usage_phase_id"), type_="unique")
        batch.drop_constraint(batch.f("fk_quota_usage_user_id_users"), type_="foreignkey")
        batch.drop_column("user_id")
        batch.create_unique_constraint(batch.f("uq_quota_usage_phase_id"), ["phase_id", "owner", "day"])


def downgrade() -> None:
    """Key quota rows by user again; a team's rows cannot be split among members and are dropped."""
    op.execute("DELETE FROM quota_usage WHERE owner NOT LIKE 'user:%'")
    with op.batch_alter_table("quota_usage") as batch:
        batch.add_column(sa.Column("user_id", sa.Integer(), nullable=True))
    op.execute("UPDATE quota_usage SET user_id = CAST(SUBSTR(owner, 6) AS INTEGER)")
    with op.batch_alter_table("quota_usage") as batch:
        batch.alter_column("user_id", existing_type=sa.Integer(), nullable=False)
        batch.drop_constraint(batch.f("uq_quota_usage_phase_id"), type_="unique")
        batch.drop_column("owner")
        batch.create_foreign_key(batch.f("fk_quota_usage_user_id_users"), "users", ["user_id"], ["id"],
                                 ondelete="CASCADE")
        batch.create_unique_constraint(batch.f("uq_quota_usage_phase_id"), ["phase_id", "user_id", "day"])
