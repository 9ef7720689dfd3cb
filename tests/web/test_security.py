"""Security headers on every response, cookie flags, and a logout that ends the session server-side."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

PASSWORD = "a password for this test"

TEMPLATES = Path(__file__).resolve().parents[2] / "leaderboard" / "templates"
PATHS = ["/", "/login", "/register", "/api/v1/competitions", "/api/v1/docs", "/static/css/tailboard.css",
         "/no-such-page", "/phases/0"]


def csp_directives(response: Any) -> dict[str, str]:
    policy = response.headers["Content-Security-Policy"]
    return {part.split()[0]: part.strip() for part in policy.split(";") if part.strip()}


@pytest.mark.parametrize("path", PATHS)
def test_every_response_carries_the_security_headers(client: Any, path: str) -> None:
    response = client.get(path)
    csp = csp_directives(response)
    assert csp["script-src"] == "script-src 'self'" and csp["style-src"] == "style-src 'self'"
    assert "'unsafe-inline'" not in response.headers["Content-Security-Policy"]
    assert "'unsafe-eval'" not in response.headers["Content-Security-Policy"]
    assert csp["frame-ancestors"] == "frame-ancestors 'none'" and csp["object-src"] == "object-src 'none'"
    assert response.headers["X-Frame-Options"] == "DENY"
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Referrer-Policy"] == "same-origin"
    assert "Strict-Transport-Security" not in response.headers  # plain HTTP, TAILBOARD_HTTPS unset


def test_hsts_is_sent_on_requests_that_came_over_https(client: Any) -> None:
    response = client.get("/", base_url="https://localhost")
    assert response.headers["Strict-Transport-Security"].startswith("max-age=")


class TestServedOverHttps:
    @pytest.fixture
    def settings_overrides(self) -> dict[str, Any]:
        return {"https": True}

    def test_hsts_on_every_response_and_the_session_cookie_is_secure(self, client: Any, make_user: Any,
                                                                       csrf_token: Any) -> None:
        user = make_user(password=PASSWORD)
        assert int(client.get("/").headers["Strict-Transport-Security"].split("=")[1]) >= 180 * 86400
        response = client.post("/login", data={"email": user.email, "password": PASSWORD,
                                               "csrf_token": csrf_token(client, "/login")})
        assert response.status_code == 303
        cookie = session_cookie_header(response)
        assert "; Secure" in cookie and "; HttpOnly" in cookie and "; SameSite=Lax" in cookie


def session_cookie_header(response: Any) -> str:
    found = [c for c in response.headers.getlist("Set-Cookie") if c.startswith("session=")]
    assert found, response.headers
    return found[-1]


def log_in_with_the_form(client: Any, user: Any, csrf_token: Any) -> Any:
    response = client.post("/login", data={"email": user.email, "password": PASSWORD,
                                           "csrf_token": csrf_token(client, "/login")})
    assert response.status_code == 303
    return response


def test_session_cookie_is_samesite_lax_and_httponly_but_not_secure_over_plain_http(
        client: Any, make_user: Any, csrf_token: Any) -> None:
    cookie = session_cookie_header(log_in_with_the_form(client, make_user(password=PASSWORD), csrf_token))
    assert "; SameSite=Lax" in cookie and "; HttpOnly" in cookie and "; Secure" not in cookie


def test_a_session_cookie_captured_before_logout_no_longer_opens_the_account(
        app: Any, client: Any, make_user: Any, make_token: Any, csrf_token: Any) -> None:
    user = make_user(password=PASSWORD)
    token = make_token(user)
    log_in_with_the_form(client, user, csrf_token)
    assert client.get("/account").status_code == 200
    captured = client.get_cookie("session").value

    logout = client.post("/logout", data={"csrf_token": csrf_token(client, "/account")})
    assert logout.status_code == 303

    thief = app.test_client()
    thief.set_cookie("session", captured)
    replay = thief.get("/account")
    assert replay.status_code == 302 and "/login" in replay.location
    # API tokens are not sessions: the user's scripts keep working.
    assert client.get("/api/v1/competitions", headers={"Authorization": f"Bearer {token}"}).status_code == 200
    # Logging in again works and gives a session that opens the account.
    log_in_with_the_form(client, user, csrf_token)
    assert client.get("/account").status_code == 200


def test_logging_in_again_does_not_revive_a_cookie_from_before_the_logout(
        app: Any, client: Any, make_user: Any, csrf_token: Any) -> None:
    user = make_user(password=PASSWORD)
    log_in_with_the_form(client, user, csrf_token)
    captured = client.get_cookie("session").value
    client.post("/logout", data={"csrf_token": csrf_token(client, "/account")})
    log_in_with_the_form(app.test_client(), user, csrf_token)
    thief = app.test_client()
    thief.set_cookie("session", captured)
    assert thief.get("/account").status_code == 302


INLINE = [
    (re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*type=\"application/json\")[^>]*>", re.I), "inline <script>"),
    (re.compile(r"\son[a-z]+\s*=", re.I), "on* event attribute"),
    (re.compile(r"\sstyle\s*=", re.I), "style attribute"),
    (re.compile(r"<style", re.I), "<style> element"),
    (re.compile(r"javascript:", re.I), "javascript: URL"),
]


@pytest.mark.parametrize("template", sorted(p.relative_to(TEMPLATES).as_posix() for p in TEMPLATES.rglob("*.html")))
def test_templates_hold_nothing_the_content_security_policy_would_block(template: str) -> None:
    text = (TEMPLATES / template).read_text()
    found = [what for pattern, what in INLINE if pattern.search(text)]
    assert found == []
