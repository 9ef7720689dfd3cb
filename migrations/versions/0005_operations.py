"""Organizer operations (docs/ORGANIZING.md): background jobs, the audit log, label versions, a phase's reveal time.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-25 05:30:00

jobs (re-scoring, label replacement, imports run in the background, resumable);
audit_log (every organizer action of a competition); label_versions (each phase's
label files, for the archive; existing phases get their current version as its only
row); phases.private_shown_at (when a closed phase's private split was first shown,
kept when it is reopened).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("phases") as batch:
        batch.add_column(sa.Column("private_shown_at", sa.DateTime(), nullable=True))
    op.create_table(
        "label_versions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("phase_id", sa.Integer(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("labels_key", sa.String(length=500), nullable=False),
        sa.Column("labels_sha256", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["phase_id"], ["phases.id"], name=op.f("fk_label_versions_phase_id_phases"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_label_versions")),
        sa.UniqueConstraint("phase_id", "version", name=op.f("uq_label_versions_phase_id")),
    )
    op.create_index(op.f("ix_label_versions_phase_id"), "label_versions", ["phase_id"], unique=False)
    op.execute("INSERT INTO label_versions (phase_id, version, labels_key, labels_sha256, created_at) "
               "SELECT id, label_version, labels_key, labels_sha256, created_at FROM phases")
    op.create_table(
        "jobs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("competition_id", sa.Integer(), nullable=True),
        sa.Column("phase_id", sa.Integer(), nullable=True),
        sa.Column("params", sa.JSON(), nullable=False),
        sa.Column("done", sa.Integer(), nullable=False),
        sa.Column("total", sa.Integer(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("actor_id", sa.Integer(), nullable=True),
        sa.Column("actor_name", sa.String(length=120), nullable=False),
        sa.Column("claimed_by", sa.String(length=64), nullable=True),
        sa.Column("heartbeat_at", sa.DateTime(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("started_at", sa.DateTime(), nullable=True),
        sa.Column("finished_at", sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(["actor_id"], ["users.id"], name=op.f("fk_jobs_actor_id_users"), ondelete="SET NULL"),
        sa.ForeignKeyConstraint(["competition_id"], ["competitions.id"],
                                name=op.f("fk_jobs_competition_id_competitions"), ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["phase_id"], ["phases.id"], name=op.f("fk_jobs_phase_id_phases"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_jobs")),
    )
    op.create_index(op.f("ix_jobs_competition_id"), "jobs", ["competition_id"], unique=False)
    op.create_index(op.f("ix_jobs_status"), "jobs", ["status"], unique=False)
    op.create_table(
        "audit_log",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("competition_id", sa.Integer(), nullable=False),
        sa.Column("at", sa.DateTime(), nullable=False),
        sa.Column("actor_id", sa.Integer(), nullable=True),
        sa.Column("actor_name", sa.String(length=120), nullable=False),
        sa.Column("target", sa.String(length=200), nullable=False),
        sa.Column("summary", sa.String(length=500), nullable=False),
        sa.ForeignKeyConstraint(["actor_id"], ["users.id"], name=op.f("fk_audit_log_actor_id_users"),
                                ondelete="SET NULL"),
        sa.ForeignKeyConstraint(["competition_id"], ["competitions.id"],
                                name=op.f("fk_audit_log_competition_id_competitions"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_log")),
    )
    op.create_index(op.f("ix_audit_log_competition_id"), "audit_log", ["competition_id"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_audit_log_competition_id"), table_name="audit_log")
    op.drop_table("audit_log")
    op.drop_index(op.f("ix_jobs_status"), table_name="jobs")
    op.drop_index(op.f("ix_jobs_competition_id"), table_name="jobs")
    op.drop_table("jobs")
    op.drop_index(op.f("ix_label_versions_phase_id"), table_name="label_versions")
    op.drop_table("label_versions")
    with op.batch_alter_table("phases") as batch:
        batch.drop_column("private_shown_at")
