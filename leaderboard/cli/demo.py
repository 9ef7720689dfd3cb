"""``flask --app app demo``: install the demo competition (leaderboard/demo/)."""

from __future__ import annotations

import click
from flask.cli import with_appcontext

from leaderboard import demo
from leaderboard.cli.common import domain_errors, json_option, report, service_context


@click.command("demo")
@with_appcontext
@json_option
@domain_errors
def demo_command(as_json: bool) -> None:
    """Install a demo competition with phases, participants and scored entries (once)."""
    with service_context() as ctx:
        competition, created = demo.install_demo(ctx)
        if created:
            message = (f"Created demo competition {competition.slug!r} with {len(competition.phases)} phases; "
                       f"participants log in as {demo.PARTICIPANT_EMAILS[0]} (and others) with password "
                       f"{demo.PASSWORD!r}.")
        else:
            message = f"demo already present: competition {competition.slug!r}."
        report(message, {"competition_id": competition.id, "slug": competition.slug, "created": created},
               as_json=as_json)


