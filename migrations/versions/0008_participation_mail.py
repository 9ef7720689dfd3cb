"""Participation approval, email confirmation and the mail outbox (issue 17).

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-26 09:00:00

competitions.requires_approval (off for every existing competition) and the
participations table: one row per account that asked to take part in a competition
requiring approval. users.email_confirmed_at: accounts that exist before this revision
count as confirmed (set to their creation time), so switching mail on later locks
nobody out; new ones confirm by the emailed link (accounts/confirmation.py). mail_outbox:
mails written with the event that causes them and sent by a background sender
(notify/outbox.py).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | Sequence[str] | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add the approval setting, the participations and the outbox, and confirm existing accounts."""
    with op.batch_alter_table("competitions") as batch:
        batch.add_column(sa.Column("requires_approval", sa.Boolean(), server_default="0", nullable=False))
    with op.batch_alter_table("users") as batch:
        batch.add_column(sa.Column("email_confirmed_at", sa.DateTime(), nullable=True))
    op.execute("UPDATE users SET email_confirmed_at = created_at")
    _create_participations()
    _create_outbox()


def _create_participations() -> None:
    """Create the participations table."""
    op.create_table(
        "participations",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("competition_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("requested_at", sa.DateTime(), nullable=False),
        sa.Column("decided_at", sa.DateTime(), nullable=True),
        sa.Column("decided_by_id", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(["competition_id"], ["competitions.id"],
                                name=op.f("fk_participations_competition_id_competitions"), ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["decided_by_id"], ["users.id"], name=op.f("fk_participations_decided_by_id_users"),
                                ondelete="SET NULL"),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_participations_user_id_users"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_participations")),
        sa.UniqueConstraint("competition_id", "user_id", name=op.f("uq_participations_competition_id")),
    )
    op.create_index(op.f("ix_participations_competition_id"), "participations", ["competition_id"], unique=False)
    op.create_index(op.f("ix_participations_user_id"), "participations", ["user_id"], unique=False)


def _create_outbox() -> None:
    """Create the mail outbox table."""
    op.create_table(
        "mail_outbox",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("recipient", sa.String(length=320), nullable=False),
        sa.Column("subject", sa.String(length=300), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("sent_at", sa.DateTime(), nullable=True),
        sa.Column("attempts", sa.Integer(), server_default="0", nullable=False),
        sa.Column("next_attempt_at", sa.DateTime(), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_mail_outbox")),
    )
    op.create_index(op.f("ix_mail_outbox_next_attempt_at"), "mail_outbox", ["next_attempt_at"], unique=False)


def downgrade() -> None:
    """Drop the outbox, the participations, the confirmation time and the approval setting."""
    op.drop_index(op.f("ix_mail_outbox_next_attempt_at"), table_name="mail_outbox")
    op.drop_table("mail_outbox")
    op.drop_index(op.f("ix_participations_user_id"), table_name="participations")
    op.drop_index(op.f("ix_participations_competition_id"), table_name="participations")
    op.drop_table("participations")
    with op.batch_alter_table("users") as batch:
        batch.drop_column("email_confirmed_at")
    with op.batch_alter_table("competitions") as batch:
        batch.drop_column("requires_approval")
