"""API tokens on the account page: created and shown once, listed with last use, revoked."""

from __future__ import annotations

import re

import pytest


def log_in(client, caller) -> str:
    """Log the caller in (Flask-Login session) and return a CSRF token from the account page."""
    with client.session_transaction() as session:
        session["_user_id"] = str(caller.user_id)
        session["_fresh"] = True
    page = client.get("/account").get_data(as_text=True)
    return re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)


def test_created_token_is_shown_once_and_works_on_the_api(client, users):
    csrf = log_in(client, users["alice"])
    response = client.post("/account/tokens", data={"name": "cluster", "csrf_token": csrf})
    assert response.status_code == 200 and response.headers["Cache-Control"] == "no-store"
    token = re.search(r"tb_[A-Za-z0-9_\-]+", response.get_data(as_text=True)).group(0)
    assert client.get("/api/v1/competitions", headers={"Authorization": f"Bearer {token}"}).status_code == 200
    account = client.get("/account").get_data(as_text=True)
    assert "cluster" in account and token not in account and token[:10] in account


def test_token_list_shows_when_a_token_was_last_used(client, users):
    log_in(client, users["alice"])
    assert "never" in client.get("/account").get_data(as_text=True)  # the fixture's token is unused so far
    client.get("/api/v1/competitions", headers=users["alice"].headers)
    page = client.get("/account").get_data(as_text=True)
    assert "never" not in page and "<time" in page


def test_revoked_token_is_refused_by_the_api(app, client, users):
    csrf = log_in(client, users["alice"])
    token_id = int(re.search(r"/account/tokens/(\d+)/revoke", client.get("/account").get_data(as_text=True)).group(1))
    response = client.post(f"/account/tokens/{token_id}/revoke", data={"csrf_token": csrf})
    assert response.status_code == 302 and response.headers["Location"].endswith("/account#api-tokens")
    assert client.get("/api/v1/competitions", headers=users["alice"].headers).status_code == 401
    assert "You have no API tokens" in client.get("/account").get_data(as_text=True)


def test_nobody_revokes_another_users_token(client, users):
    csrf = log_in(client, users["bob"])
    bob_page = client.get("/account").get_data(as_text=True)
    bob_token_id = int(re.search(r"/account/tokens/(\d+)/revoke", bob_page).group(1))
    csrf = log_in(client, users["alice"])
    assert client.post(f"/account/tokens/{bob_token_id}/revoke", data={"csrf_token": csrf}).status_code == 404
    assert client.get("/api/v1/competitions", headers=users["bob"].headers).status_code == 200


@pytest.mark.parametrize("path", ["/account/tokens", "/account/tokens/1/revoke"])
def test_token_forms_need_the_csrf_token(client, users, path):
    log_in(client, users["alice"])
    assert client.post(path, data={"name": "x"}).status_code == 400
    assert client.get("/api/v1/competitions", headers=users["alice"].headers).status_code == 200


@pytest.mark.parametrize("path", ["/account/tokens", "/account/tokens/1/revoke"])
def test_token_forms_need_a_login(client, users, path):
    csrf = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', client.get("/login").get_data(as_text=True)).group(1)
    response = client.post(path, data={"csrf_token": csrf, "name": "x"})
    assert response.status_code == 302 and "/login" in response.headers["Location"]
