"""PostgreSQL: a change to a phase, a competition or a board row NOTIFYs ``tailboard_boards``.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-25 11:10:00

What an anonymous board read answers depends on those three tables only
(board/ranking.py's anonymous_key). Every serving process LISTENs on the channel
(leaderboard/web/board_cache/watch.py), so between two notifications it may answer repeated
anonymous reads without asking the database. Triggers, not the application, send the
notification, so no writer can forget it: web requests, Celery workers on other hosts,
the flask CLI and hand-written SQL alike. PostgreSQL delivers a notification when its
transaction commits, and not at all when it rolls back. SQLite has no notifications:
there every anonymous read asks the database (one indexed query on a local file).
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0007"
down_revision: str | Sequence[str] | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLES = ("phases", "competitions", "boards")


def upgrade() -> None:
    """Create the notifying function and one statement-level trigger per table (PostgreSQL only)."""
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(
        "CREATE FUNCTION tailboard_board_notify() RETURNS trigger LANGUAGE plpgsql AS $$ "
        "BEGIN PERFORM pg_notify('tailboard_boards', ''); RETURN NULL; END $$"
    )
    for table in TABLES:
        op.execute(
            f"CREATE TRIGGER tailboard_board_notify AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON {table} "
            "FOR EACH STATEMENT EXECUTE FUNCTION tailboard_board_notify()"
        )


def downgrade() -> None:
    """Drop the triggers and the function."""
    if op.get_bind().dialect.name != "postgresql":
        return
    for table in TABLES:
        op.execute(f"DROP TRIGGER IF EXISTS tailboard_board_notify ON {table}")
    op.execute("DROP FUNCTION IF EXISTS tailboard_board_notify()")
