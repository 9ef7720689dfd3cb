"""Entries (docs/ENTRIES.md) and moderation: teams, a submission's method, metadata, team, selection, state.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-25 05:30:00

teams and team_members (one team per user per competition); submissions.method
(default "default"), entry_metadata, team_id, selected (a final selection), and the
moderation columns (moderation, moderation_reason, moderated_at, moderated_by_id).
Existing submissions become the "default" method of their uploader, unselected and
unmoderated: the board shows the same rows as before.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "teams",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("competition_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=80), nullable=False),
        sa.Column("invite_code", sa.String(length=32), nullable=False),
        sa.Column("created_by_id", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["competition_id"], ["competitions.id"],
                                name=op.f("fk_teams_competition_id_competitions"), ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["created_by_id"], ["users.id"],
                                name=op.f("fk_teams_created_by_id_users"), ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_teams")),
        sa.UniqueConstraint("competition_id", "name", name=op.f("uq_teams_competition_id")),
        sa.UniqueConstraint("invite_code", name=op.f("uq_teams_invite_code")),
    )
    op.create_index(op.f("ix_teams_competition_id"), "teams", ["competition_id"], unique=False)
    op.create_table(
        "team_members",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("team_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("competition_id", sa.Integer(), nullable=False),
        sa.Column("joined_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["competition_id"], ["competitions.id"],
                                name=op.f("fk_team_members_competition_id_competitions"), ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["team_id"], ["teams.id"], name=op.f("fk_team_members_team_id_teams"),
                                ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_team_members_user_id_users"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_team_members")),
        sa.UniqueConstraint("competition_id", "user_id", name=op.f("uq_team_members_competition_id")),
    )
    op.create_index(op.f("ix_team_members_team_id"), "team_members", ["team_id"], unique=False)
    with op.batch_alter_table("submissions") as batch:
        batch.add_column(sa.Column("method", sa.String(length=80), server_default="default", nullable=False))
        batch.add_column(sa.Column("entry_metadata", sa.JSON(), nullable=True))
        batch.add_column(sa.Column("team_id", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("selected", sa.Boolean(), server_default="0", nullable=False))
        batch.add_column(sa.Column("moderation", sa.String(length=16), nullable=True))
        batch.add_column(sa.Column("moderation_reason", sa.Text(), nullable=True))
        batch.add_column(sa.Column("moderated_at", sa.DateTime(), nullable=True))
        batch.add_column(sa.Column("moderated_by_id", sa.Integer(), nullable=True))
        batch.create_index(batch.f("ix_submissions_team_id"), ["team_id"], unique=False)
        batch.create_foreign_key(batch.f("fk_submissions_team_id_teams"), "teams", ["team_id"], ["id"],
                                 ondelete="SET NULL")
        batch.create_foreign_key(batch.f("fk_submissions_moderated_by_id_users"), "users", ["moderated_by_id"],
                                 ["id"], ondelete="SET NULL")


def downgrade() -> None:
    with op.batch_alter_table("submissions") as batch:
        batch.drop_constraint(batch.f("fk_submissions_moderated_by_id_users"), type_="foreignkey")
        batch.drop_constraint(batch.f("fk_submissions_team_id_teams"), type_="foreignkey")
        batch.drop_index(batch.f("ix_submissions_team_id"))
        for column in ("moderated_by_id", "moderated_at", "moderation_reason", "moderation", "selected", "team_id",
                       "entry_metadata", "method"):
            batch.drop_column(column)
    op.drop_index(op.f("ix_team_members_team_id"), table_name="team_members")
    op.drop_table("team_members")
    op.drop_index(op.f("ix_teams_competition_id"), table_name="teams")
    op.drop_table("teams")
