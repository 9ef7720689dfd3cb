"""Coarse figures carry their step on the board, and every stored score draws its dither from its own file.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-27 08:00:00

``score_cells.error`` holds how far a coarse figure shown on the board can be from the
exact one (its grid step; null when the figure is exact), so pages and exports mark it
(docs/PROBING.md). A score stored before draws existed gets ``results["draw"]`` from its
submission's file SHA-256: from now on its dither offsets come from its file, never from
its exact figures. Cells are recomputed by the board (``board_spec.CELLS_VERSION``).

Scores of a phase ranked by a metric path (CoLoTa's ``popularity.tail.accuracy``) stored
no primary value (only overall metrics were read): they get it from their results, so
the ladder, final selection and the participant's list see it.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from scoring.metrics.paths import path_value

revision: str = "0009"
down_revision: str | Sequence[str] | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BATCH = 500
scores = sa.table("scores", sa.column("id", sa.Integer), sa.column("submission_id", sa.Integer),
                  sa.column("results", sa.JSON))
submissions = sa.table("submissions", sa.column("id", sa.Integer), sa.column("file_sha256", sa.String),
                        sa.column("phase_id", sa.Integer))
phases = sa.table("phases", sa.column("id", sa.Integer), sa.column("task_config", sa.JSON))
primaries = sa.table("scores", sa.column("id", sa.Integer), sa.column("submission_id", sa.Integer),
                     sa.column("results", sa.JSON), sa.column("public_primary", sa.Float),
                     sa.column("private_primary", sa.Float))


def upgrade() -> None:
    """Add score_cells.error; give every stored score a draw from its file's digest."""
    with op.batch_alter_table("score_cells") as batch:
        batch.add_column(sa.Column("error", sa.Float(), nullable=True))
    connection = op.get_bind()
    last = 0
    while True:
        rows = connection.execute(
            sa.select(scores.c.id, scores.c.results, submissions.c.file_sha256)
            .join(submissions, submissions.c.id == scores.c.submission_id)
            .where(scores.c.id > last).order_by(scores.c.id).limit(BATCH)).all()
        if not rows:
            break
        for score_id, results, digest in rows:
            if isinstance(results, dict) and "draw" not in results:
                draw = {"answers": digest[:32], "confidences": digest[:32]}
                connection.execute(scores.update().where(scores.c.id == score_id)
                                   .values(results={**results, "draw": draw}))
        last = rows[-1][0]
    _primaries_of_paths(connection)


def _primaries_of_paths(connection: sa.Connection) -> None:
    """Store the primary values of scores whose phase ranks by a metric path."""
    for phase_id, config in connection.execute(sa.select(phases.c.id, phases.c.task_config)).all():
        metric = (config or {}).get("primary_metric", "accuracy")
        if "." not in metric:
            continue
        rows = connection.execute(
            sa.select(primaries.c.id, primaries.c.results)
            .join(submissions, submissions.c.id == primaries.c.submission_id)
            .where(submissions.c.phase_id == phase_id)).all()
        for score_id, results in rows:
            splits = (results or {}).get("splits")
            public = path_value(splits.get("public") if splits else results, metric)
            private = path_value(splits.get("private"), metric) if splits else None
            connection.execute(primaries.update().where(primaries.c.id == score_id)
                               .values(public_primary=public, private_primary=private))


def downgrade() -> None:
    """Drop score_cells.error (stored draws stay: earlier code ignores them)."""
    with op.batch_alter_table("score_cells") as batch:
        batch.drop_column("error")
