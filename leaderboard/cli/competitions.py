"""``flask --app app competitions create|set-owner|set|import-archive`` (docs/CLI.md, docs/ORGANIZING.md).

Every competition has an owner, the organizer account that manages it from the web and
the API, unless the operator says otherwise: ``create`` takes ``--owner EMAIL`` or
``--operator-only`` (then only this command line manages it), and refuses to guess.
``set-owner`` gives an existing competition its owner; the app logs a warning at start
for every competition still without one.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from flask.cli import AppGroup

from leaderboard import accounts
from leaderboard.accounts import OPERATOR, participation
from leaderboard.cli.common import domain_errors, json_option, report, service_context
from leaderboard.models import User
from leaderboard.operations import import_archive
from leaderboard.organizing import competitions
from leaderboard.platform import ServiceContext

competitions_cli = AppGroup("competitions", help="Manage competitions.")

OWNER_HELP = "Email of the organizer account that owns (manages) the competition on the web and the API."
OPERATOR_ONLY_HELP = "Give it no owner: only the instance operator (this command line) manages it."
OWNER_MISSING = ("Give --owner EMAIL (the organizer account that manages the competition), or --operator-only "
                 "to leave it without an owner, managed only from this command line.")


def owner_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add --owner EMAIL and --operator-only to a command that creates a competition."""
    command = click.option("--operator-only", is_flag=True, help=OPERATOR_ONLY_HELP)(command)
    return click.option("--owner", "owner_email", metavar="EMAIL", help=OWNER_HELP)(command)


def _owner(ctx: ServiceContext, owner_email: str | None, operator_only: bool) -> User | None:
    """Return the named owner's account (None with --operator-only); a usage error unless exactly one is given."""
    if owner_email and operator_only:
        raise click.UsageError("Give either --owner or --operator-only, not both.")
    if not owner_email and not operator_only:
        raise click.UsageError(OWNER_MISSING)
    return accounts.get_user_by_email(ctx, owner_email) if owner_email else None


def _managed_by(owner: User | None) -> str:
    """Return who manages a competition, in words."""
    return f"owned by {owner.display_name} <{owner.email}>" if owner is not None else \
        "without an owner: only the operator manages it"


@competitions_cli.command("create")
@click.argument("slug")
@click.option("--title", required=True)
@click.option("--description", default="")
@owner_options
@domain_errors
def competitions_create(slug: str, title: str, description: str, owner_email: str | None,
                        operator_only: bool) -> None:
    """Create a competition owned by --owner (or --operator-only); prints its id last."""
    with service_context() as ctx:
        owner = _owner(ctx, owner_email, operator_only)
        competition = competitions.create_competition(ctx, slug=slug, title=title, description=description,
                                                     actor=OPERATOR, owner=owner)
        click.echo(f"Created competition {competition.slug!r}, {_managed_by(owner)}.")
        click.echo(competition.id)


@competitions_cli.command("set-owner")
@click.argument("slug")
@click.argument("email")
@json_option
@domain_errors
def competitions_set_owner(slug: str, email: str, as_json: bool) -> None:
    """Make the organizer account EMAIL the owner of competition SLUG."""
    with service_context() as ctx:
        owner = accounts.get_user_by_email(ctx, email)
        competition = competitions.set_owner(ctx, slug=slug, owner=owner, actor=OPERATOR)
        report(f"Competition {competition.slug!r} is now {_managed_by(owner)}.",
               {"competition_id": competition.id, "owner": owner.email}, as_json=as_json)


@competitions_cli.command("set")
@click.argument("slug")
@click.option("--requires-approval/--no-requires-approval", default=None,
              help="Participants need an organizer's approval before they can submit.")
@json_option
@domain_errors
def competitions_set(slug: str, requires_approval: bool | None, as_json: bool) -> None:
    """Change a competition's settings."""
    if requires_approval is None:
        raise click.UsageError("Give --requires-approval or --no-requires-approval.")
    with service_context() as ctx:
        competition = competitions.update_competition(ctx, slug=slug, actor=OPERATOR,
                                                      requires_approval=requires_approval)
        report(f"Competition {competition.slug!r}: {participation.approval_rule(competition)}",
               {"competition_id": competition.id, "requires_approval": competition.requires_approval},
               as_json=as_json)


@competitions_cli.command("import-archive")
@click.argument("archive", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--slug", help="Import under this slug instead of the archived one.")
@owner_options
@domain_errors
def competitions_import_archive(archive: Path, slug: str | None, owner_email: str | None,
                                operator_only: bool) -> None:
    """Rebuild a competition from its exported archive (docs/ORGANIZING.md), owned by --owner; prints its id last."""
    with service_context() as ctx:
        owner = _owner(ctx, owner_email, operator_only)
        competition = import_archive(ctx, source=archive, actor=OPERATOR, slug=slug, owner=owner)
        click.echo(f"Imported competition {competition.slug!r} with {len(competition.phases)} phase(s), "
                   f"{_managed_by(owner)}.")
        click.echo(competition.id)

