"""``flask --app app demo``: install the demo competition (leaderboard/demo/)."""

from __future__ import annotations

import click
from flask.cli import with_appcontext

from leaderboard import demo
from leaderboard.cli.common import domain_errors, service_context


@click.command("demo")
@with_appcontext
@domain_errors
def demo_command() -> None:
    """Install a demo competition with phases, participants and scored entries; prints its id last."""
    with service_context() as ctx:
        competition, created = demo.install_demo(ctx)
        if created:
            click.echo(f"Created demo competition {competition.slug!r} with {len(competition.phases)} phases; "
                       f"participants log in as {demo.PARTICIPANT_EMAILS[0]} (and others) with password "
                       f"{demo.PASSWORD!r}.")
        else:
            click.echo(f"demo already present: competition {competition.slug!r}.")
        click.echo(competition.id)


