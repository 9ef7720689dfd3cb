"""Ranking v2 (docs/RANKING.md): per-item correctness bits on scores, score cells, the materialized board.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-25 05:30:00

scores.correct_bits and answered_bits (packed per-item correctness, for McNemar);
score_cells (each active score's shown figures per board and metric path); board_rows
(each view's ranked entries, on the board while open and the board after close); boards
(where each phase's board stands); board_dirty (changes announced and not yet built).
Existing phases get their boards on first read or with ``flask --app app boards rebuild``,
from the scores already stored: the same rows as before (scores recorded before this
revision have no bits, so no p_vs_previous until a rescore).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("scores") as batch:
        batch.add_column(sa.Column("correct_bits", sa.LargeBinary(), nullable=True))
        batch.add_column(sa.Column("answered_bits", sa.LargeBinary(), nullable=True))
    op.create_table(
        "boards",
        sa.Column("phase_id", sa.Integer(), nullable=False),
        sa.Column("wanted", sa.Integer(), nullable=False),
        sa.Column("built", sa.Integer(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("signature", sa.String(length=64), nullable=False),
        sa.Column("refreshed_at", sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(["phase_id"], ["phases.id"], name=op.f("fk_boards_phase_id_phases"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("phase_id", name=op.f("pk_boards")),
    )
    op.create_table(
        "board_dirty",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("phase_id", sa.Integer(), nullable=False),
        sa.Column("submission_id", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(["phase_id"], ["phases.id"], name=op.f("fk_board_dirty_phase_id_phases"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_board_dirty")),
    )
    op.create_index(op.f("ix_board_dirty_phase_id"), "board_dirty", ["phase_id"], unique=False)
    op.create_table(
        "score_cells",
        sa.Column("score_id", sa.Integer(), nullable=False),
        sa.Column("board", sa.String(length=8), nullable=False),
        sa.Column("path", sa.String(length=300), nullable=False),
        sa.Column("phase_id", sa.Integer(), nullable=False),
        sa.Column("value", sa.Float(), nullable=True),
        sa.Column("lo", sa.Float(), nullable=True),
        sa.Column("hi", sa.Float(), nullable=True),
        sa.ForeignKeyConstraint(["phase_id"], ["phases.id"], name=op.f("fk_score_cells_phase_id_phases"),
                                ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["score_id"], ["scores.id"], name=op.f("fk_score_cells_score_id_scores"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("score_id", "board", "path", name=op.f("pk_score_cells")),
    )
    op.create_index("ix_score_cells_phase_board_path", "score_cells", ["phase_id", "board", "path"], unique=False)
    op.create_table(
        "board_rows",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("phase_id", sa.Integer(), nullable=False),
        sa.Column("board", sa.String(length=8), nullable=False),
        sa.Column("view", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("entry", sa.String(length=120), nullable=False),
        sa.Column("submission_id", sa.Integer(), nullable=False),
        sa.Column("score_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=True),
        sa.Column("team_id", sa.Integer(), nullable=True),
        sa.Column("display_name", sa.String(length=120), nullable=False),
        sa.Column("team", sa.String(length=80), nullable=True),
        sa.Column("method", sa.String(length=80), nullable=False),
        sa.Column("entry_metadata", sa.JSON(), nullable=True),
        sa.Column("is_baseline", sa.Boolean(), nullable=False),
        sa.Column("builtin", sa.Boolean(), nullable=False),
        sa.Column("submitted_at", sa.DateTime(), nullable=False),
        sa.Column("submissions", sa.Integer(), nullable=False),
        sa.Column("rank", sa.Integer(), nullable=True),
        sa.Column("stat_rank", sa.Integer(), nullable=True),
        sa.Column("p_vs_previous", sa.Float(), nullable=True),
        sa.Column("value", sa.Float(), nullable=True),
        sa.Column("ci_lo", sa.Float(), nullable=True),
        sa.Column("ci_hi", sa.Float(), nullable=True),
        sa.Column("ladder_step", sa.Float(), nullable=True),
        sa.Column("withheld", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(["phase_id"], ["phases.id"], name=op.f("fk_board_rows_phase_id_phases"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_board_rows")),
        sa.UniqueConstraint("phase_id", "board", "view", "entry", name=op.f("uq_board_rows_phase_id")),
    )
    op.create_index("ix_board_rows_phase_board_view_position", "board_rows",
                    ["phase_id", "board", "view", "position"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_board_rows_phase_board_view_position", table_name="board_rows")
    op.drop_table("board_rows")
    op.drop_index("ix_score_cells_phase_board_path", table_name="score_cells")
    op.drop_table("score_cells")
    op.drop_index(op.f("ix_board_dirty_phase_id"), table_name="board_dirty")
    op.drop_table("board_dirty")
    op.drop_table("boards")
    with op.batch_alter_table("scores") as batch:
        batch.drop_column("answered_bits")
        batch.drop_column("correct_bits")
