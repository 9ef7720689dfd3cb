"""Passwords are stored as werkzeug's default scrypt hash; tests hash with a cheaper one (tests/conftest.py)."""

from __future__ import annotations

import pytest
from werkzeug.security import check_password_hash, generate_password_hash

from leaderboard import accounts
from leaderboard.accounts import users
from leaderboard.platform import ServiceContext, Unauthorized

pytestmark = pytest.mark.backends("sqlite")


def test_an_account_stores_the_default_scrypt_hash(ctx: ServiceContext, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(users, "generate_password_hash", generate_password_hash)  # undo the suite's cheap hash
    user = accounts.register_user(ctx, email="ada@example.org", password="analytical engine")
    assert user.password_hash.startswith("scrypt:32768:8:1$")
    assert check_password_hash(user.password_hash, "analytical engine")
    assert accounts.authenticate(ctx, email="ada@example.org", password="analytical engine").id == user.id


def test_the_suite_hashes_with_the_cheap_scrypt_that_still_checks(ctx: ServiceContext) -> None:
    user = accounts.register_user(ctx, email="bob@example.org", password="difference engine")
    assert user.password_hash.startswith("scrypt:1024:8:1$")
    assert accounts.authenticate(ctx, email="bob@example.org", password="difference engine").id == user.id
    with pytest.raises(Unauthorized):
        accounts.authenticate(ctx, email="bob@example.org", password="wrong password")
