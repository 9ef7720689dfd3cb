"""One email rule (accounts.check_email) for the register page, the CLI and the services."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select

from leaderboard import accounts
from leaderboard.models import User
from leaderboard.platform import InvalidInput

ACCEPTED = ["person@lab.example.org", "Ada.Lovelace+tb@Example.COM"]
REFUSED = ["user@h3.test", "root@localhost", "x@machine.local", "nobody@tailboard.invalid", "no-at-sign",
           "two@@example.org", "a" * 320 + "@example.org"]


@pytest.mark.parametrize("email", ACCEPTED)
def test_accepted_addresses_are_accepted_by_service_cli_and_register_page(
        email: str, ctx: Any, runner: Any, app: Any, csrf_token: Any) -> None:
    assert accounts.check_email(email) == email.strip().lower()
    cli = runner.invoke(args=["users", "create", email, "--password", "long enough", "--name", "From CLI"])
    assert cli.exit_code == 0, cli.output
    web = app.test_client()
    page = web.post("/register", data={"email": "web." + email, "display_name": "From Web", "password": "long enough",
                                       "confirm": "long enough", "csrf_token": csrf_token(web, "/register")})
    assert page.status_code == 303
    stored = set(ctx.session.scalars(select(User.email)))
    assert {email.lower(), "web." + email.lower()} <= stored


@pytest.mark.parametrize("email", REFUSED)
def test_refused_addresses_are_refused_by_service_cli_and_register_page_alike(
        email: str, ctx: Any, runner: Any, client: Any, csrf_token: Any) -> None:
    with pytest.raises(InvalidInput) as refused:
        accounts.check_email(email)
    cli = runner.invoke(args=["users", "create", email, "--password", "long enough"])
    assert cli.exit_code == 1 and refused.value.message in cli.output
    page = client.post("/register", data={"email": email, "display_name": "Someone", "password": "long enough",
                                          "confirm": "long enough", "csrf_token": csrf_token(client, "/register")})
    assert page.status_code == 400 and "email address" in page.get_data(as_text=True)
    assert ctx.session.scalar(select(User.id)) is None


def test_login_page_does_not_refuse_an_address_it_cannot_match_as_malformed(client: Any, csrf_token: Any) -> None:
    # Accounts made before the rule was shared may hold addresses the rule now refuses; they can still log in.
    page = client.post("/login", data={"email": "user@h3.test", "password": "whatever it is",
                                       "csrf_token": csrf_token(client, "/login")})
    assert page.status_code == 401
