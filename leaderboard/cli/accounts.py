"""``flask --app app users create`` and ``tokens create``: accounts and API tokens from the operator shell."""

from __future__ import annotations

import click
from flask.cli import AppGroup

from leaderboard import accounts
from leaderboard.cli.common import domain_errors, service_context

users_cli = AppGroup("users", help="Manage accounts.")
tokens_cli = AppGroup("tokens", help="Manage API tokens.")


@users_cli.command("create")
@click.argument("email")
@click.option("--password", required=True, help="At least 8 characters.")
@click.option("--organizer", is_flag=True, help="Let this account manage competitions.")
@click.option("--name", "display_name", help="Public display name (default: from the email).")
@domain_errors
def users_create(email: str, password: str, organizer: bool, display_name: str | None) -> None:
    """Create an account (its email counts as confirmed); prints its id last."""
    with service_context() as ctx:
        user = accounts.register_user(ctx, email=email, password=password, display_name=display_name,
                                      is_organizer=organizer, confirmed=True)
        click.echo(f"Created {'organizer' if organizer else 'user'} {user.display_name} <{user.email}>.")
        click.echo(user.id)


@tokens_cli.command("create")
@click.argument("email")
@click.option("--name", default="cli", show_default=True, help="A label to recognise the token by.")
@domain_errors
def tokens_create(email: str, name: str) -> None:
    """Create an API token for an account; prints the token (shown only once) last."""
    with service_context() as ctx:
        user = accounts.get_user_by_email(ctx, email)
        _, plaintext = accounts.create_token(ctx, user=user, name=name)
        click.echo(f"Created token {name!r} for {user.email}; it is shown only this once.")
        click.echo(plaintext)


