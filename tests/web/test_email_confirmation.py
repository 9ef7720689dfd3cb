"""Email confirmation end to end, against a real SMTP server on loopback (aiosmtpd), on both databases.

Register through /register, see the upload refused, receive the mail, follow its link,
then submit. Without SMTP the instance works and nobody is asked to confirm.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest
from smtp_server import MailServer
from sqlalchemy import func, select

from leaderboard.accounts import confirmation
from leaderboard.models import MailOutbox, Phase, Submission, User
from leaderboard.platform import ServiceContext

PASSWORD = "correct horse battery"
pytestmark = pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")
LINK = re.compile(r"http://localhost(/confirm/[A-Za-z0-9_.\-]+)")


@pytest.fixture
def mail_server() -> Iterator[MailServer]:
    """Return a running SMTP server on loopback."""
    with MailServer(login=("tailboard", "mail-pass")) as server:
        yield server


@pytest.fixture
def settings_overrides(mail_server: MailServer) -> dict[str, Any]:
    """Send the instance's mail to the loopback server, logging in."""
    return {"smtp_url": f"smtp://tailboard:mail-pass@127.0.0.1:{mail_server.port}",
            "mail_from": "Tailboard <noreply@example.org>"}


def register(client: Any, csrf_token: Callable, email: str) -> Any:
    """Create an account through the registration form."""
    form = {"email": email, "display_name": email.split("@")[0], "password": PASSWORD, "confirm": PASSWORD,
            "csrf_token": csrf_token(client, "/register")}
    return client.post("/register", data=form)


def upload(client: Any, phase: Phase, csrf_token: Callable) -> Any:
    """Post a prediction file through the phase page's form."""
    path = f"/phases/{phase.id}"
    lines = "\n".join(["id,prediction", *(f"q{n},true" for n in range(1, 9))]) + "\n"
    form = {"file": (io.BytesIO(lines.encode()), "p.csv"), "csrf_token": csrf_token(client, path)}
    return client.post(path, data=form, content_type="multipart/form-data")


def stored_uploads(ctx: ServiceContext) -> int:
    """Return how many participant submissions are stored."""
    ctx.session.expire_all()
    return int(ctx.session.scalar(select(func.count()).select_from(Submission)
                                  .where(Submission.is_baseline.is_(False))))


def test_register_confirm_by_mail_then_submit(app: Any, client: Any, csrf_token: Callable, ctx: ServiceContext,
                                              make_phase: Callable[..., Phase], mail_server: MailServer) -> None:
    phase = make_phase()
    registered = register(client, csrf_token, "ada@example.org")
    assert registered.status_code == 303
    assert mail_server.messages == []  # the request only wrote the outbox row; a sender delivers it
    assert "confirm your address" in client.get("/").get_data(as_text=True)
    refused = upload(client, phase, csrf_token)
    assert refused.status_code == 403 and "Confirm your email address" in refused.get_data(as_text=True)
    assert stored_uploads(ctx) == 0
    assert "Confirm your email address to submit" in client.get(f"/phases/{phase.id}").get_data(as_text=True)

    assert app.extensions["tailboard_mail"].run_once() == 1
    mail = mail_server.wait_for("ada@example.org")
    assert mail["Subject"] == "Confirm your email address for Tailboard"
    assert mail["From"] == "Tailboard <noreply@example.org>"
    body = mail.get_payload(decode=True).decode()
    path = LINK.search(body).group(1)
    confirmed = client.get(path)
    assert confirmed.status_code == 303
    ctx.session.expire_all()
    assert ctx.session.scalar(select(User.email_confirmed_at).where(User.email == "ada@example.org")) is not None
    accepted = upload(client, phase, csrf_token)
    assert accepted.status_code == 303 and "/submissions/" in accepted.headers["Location"]
    assert stored_uploads(ctx) == 1


def test_the_api_refuses_an_unconfirmed_account_with_a_clear_403(app: Any, client: Any, csrf_token: Callable,
                                                                 ctx: ServiceContext, make_token: Callable,
                                                                 make_phase: Callable[..., Phase]) -> None:
    phase = make_phase()
    register(client, csrf_token, "bea@example.org")
    user = ctx.session.scalar(select(User).where(User.email == "bea@example.org"))
    headers = {"Authorization": f"Bearer {make_token(user)}"}
    response = client.post(f"/api/v1/phases/{phase.id}/submissions", headers=headers,
                           data={"file": (io.BytesIO(b"id,prediction\nq1,true\n"), "p.csv")})
    assert response.status_code == 403
    assert "Confirm your email address" in response.get_json()["error"]
    assert "Nothing was stored or charged" in response.get_json()["error"]
    assert client.get(f"/api/v1/phases/{phase.id}", headers=headers).get_json()["quota"]["used_today"] == 0


def test_the_link_can_be_sent_again_and_a_bad_or_expired_one_is_explained(
        app: Any, client: Any, csrf_token: Callable, ctx: ServiceContext, mail_server: MailServer,
        monkeypatch: pytest.MonkeyPatch) -> None:
    register(client, csrf_token, "cy@example.org")
    page = client.get("/account/confirm").get_data(as_text=True)
    assert "is not confirmed yet" in page
    again = client.post("/account/confirm", data={"csrf_token": csrf_token(client, "/account/confirm")})
    assert again.status_code == 303
    assert ctx.session.scalar(select(func.count()).select_from(MailOutbox)) == 2
    app.extensions["tailboard_mail"].run_once()
    mail_server.wait_for("cy@example.org")
    path = LINK.search(mail_server.messages[-1][1].get_payload(decode=True).decode()).group(1)
    tampered = client.get(path[:-3] + ("aaa" if not path.endswith("aaa") else "bbb"))
    assert tampered.status_code == 400 and "not valid" in tampered.get_data(as_text=True)
    monkeypatch.setattr(confirmation, "MAX_AGE", confirmation.MAX_AGE * 0 - confirmation.MAX_AGE)
    expired = client.get(path)
    assert expired.status_code == 400 and "expired" in expired.get_data(as_text=True)


def test_operator_made_accounts_count_as_confirmed(runner: Any, client: Any, login: Callable, csrf_token: Callable,
                                                   ctx: ServiceContext, make_phase: Callable[..., Phase],
                                                   mail_server: MailServer) -> None:
    phase = make_phase()
    result = runner.invoke(args=["users", "create", "op@example.org", "--password", PASSWORD])
    assert result.exit_code == 0, result.output
    user = ctx.session.get(User, int(result.output.strip().splitlines()[-1]))
    assert user.email_confirmed_at is not None
    login(client, user)
    assert upload(client, phase, csrf_token).status_code == 303
    assert mail_server.messages == [] and ctx.session.scalar(select(func.count()).select_from(MailOutbox).where(
        MailOutbox.kind == confirmation.KIND)) == 0  # no confirmation mail (the scored-submission mail is queued)


@pytest.mark.parametrize("settings_overrides", [{}])
def test_without_smtp_nobody_confirms_and_registration_works(client: Any, csrf_token: Callable,
                                                             ctx: ServiceContext,
                                                             make_phase: Callable[..., Phase]) -> None:
    phase = make_phase()
    assert register(client, csrf_token, "dee@example.org").status_code == 303
    assert "Your account is ready" in client.get("/").get_data(as_text=True)
    assert upload(client, phase, csrf_token).status_code == 303
    assert ctx.session.scalar(select(func.count()).select_from(MailOutbox)) == 0
    page = client.get("/account/confirm").get_data(as_text=True)
    assert "nothing to confirm" in page


def test_the_confirmation_link_points_at_this_instance(app: Any, client: Any, csrf_token: Callable,
                                                       mail_server: MailServer) -> None:
    register(client, csrf_token, "eve@example.org")
    app.extensions["tailboard_mail"].run_once()
    body = mail_server.wait_for("eve@example.org").get_payload(decode=True).decode()
    link = urlsplit(LINK.search(body).group(0))
    assert (link.scheme, link.netloc) == ("http", "localhost") and link.path.startswith("/confirm/")
    assert "eve" in body and "3 days" in body


def test_a_serving_app_sends_the_mail_from_its_own_thread(settings: Any, csrf_token: Callable,
                                                          mail_server: MailServer) -> None:
    import dataclasses

    from leaderboard import create_app

    serving = create_app({**dataclasses.asdict(settings), "testing": False, "mail_seconds": 0.2})
    sender = serving.extensions["tailboard_mail"]
    try:
        client = serving.test_client()
        assert register(client, csrf_token, "fay@example.org").status_code == 303
        assert mail_server.wait_for("fay@example.org")["Subject"] == "Confirm your email address for Tailboard"
    finally:
        sender.stop()
        serving.extensions["tailboard"].engine.dispose()
