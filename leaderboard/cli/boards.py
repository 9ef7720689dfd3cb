"""``flask --app app boards rebuild [PHASE_ID ...]``: build the materialized boards from the stored scores.

An instance upgraded to migration 0004 builds each phase's board on its first read; this
command does it at once (e.g. as a release step), and recomputes every cell after a
change of what cells hold (board/layout.py's CELLS_VERSION). Prints each phase it rebuilt
(``--json``: one object listing them).
"""

from __future__ import annotations

import json
import time

import click
from flask import current_app
from flask.cli import AppGroup
from sqlalchemy import select

from leaderboard.board import rebuild_from_scratch
from leaderboard.cli.common import json_option
from leaderboard.models import Phase
from leaderboard.platform import Runtime

boards_cli = AppGroup("boards", help="Build the materialized leaderboards.")


@boards_cli.command("rebuild")
@click.argument("phase_ids", type=int, nargs=-1)
@json_option
def rebuild_command(phase_ids: tuple[int, ...], as_json: bool) -> None:
    """Recompute the cells and rows of the given phases' boards (default: every phase)."""
    runtime: Runtime = current_app.extensions["tailboard"]
    with runtime.sessions() as session:
        ctx = runtime.context(session)
        wanted = list(phase_ids) or list(session.scalars(select(Phase.id).order_by(Phase.id)))
        known = set(session.scalars(select(Phase.id).where(Phase.id.in_(wanted))))
        missing = [pid for pid in wanted if pid not in known]
        if missing:
            raise click.ClickException(f"No phase {', '.join(map(str, missing))}.")
        for phase_id in wanted:
            started = time.perf_counter()
            changed = rebuild_from_scratch(ctx, phase_id=phase_id)
            if not as_json:
                click.echo(f"phase {phase_id}: board rebuilt in {time.perf_counter() - started:.2f} s"
                           f"{'' if changed else ' (rows unchanged)'}")
        if as_json:
            click.echo(json.dumps({"rebuilt": wanted}))
