"""Accounts and competitions: passwords hashed, tokens stored as SHA-256, slugs, ordering."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select

from leaderboard.accounts import OPERATOR, access, users
from leaderboard.models import ApiToken, User
from leaderboard.organizing import competitions
from leaderboard.platform import Conflict, InvalidInput, NotFound, Unauthorized
from leaderboard.platform.db import utcnow


def test_register_hashes_the_password_and_authenticates(ctx):
    user = users.register_user(ctx, email=" Ada@Example.ORG ", password="analytical engine", display_name="Ada")
    assert user.email == "ada@example.org" and user.password_hash != "analytical engine"
    assert users.authenticate(ctx, email="ADA@example.org", password="analytical engine").id == user.id
    for email, password in (("ada@example.org", "wrong password"), ("bob@example.org", "analytical engine")):
        with pytest.raises(Unauthorized):
            users.authenticate(ctx, email=email, password=password)


@pytest.mark.parametrize(("email", "password", "name"), [
    ("not an email", "long enough", None),
    ("a@example.org", "short", None),
    ("a@example.org", "long enough", "x"),
    ("a@example.org", "long enough", "<script>"),
])
def test_register_refuses_bad_input(ctx, email, password, name):
    with pytest.raises(InvalidInput):
        users.register_user(ctx, email=email, password=password, display_name=name)


def test_emails_and_display_names_are_unique(ctx):
    users.register_user(ctx, email="a@example.org", password="long enough", display_name="Ada")
    with pytest.raises(Conflict):
        users.register_user(ctx, email="A@example.org", password="long enough", display_name="Other")
    with pytest.raises(Conflict):
        users.register_user(ctx, email="b@example.org", password="long enough", display_name="ada")


def test_display_name_defaults_to_a_free_name_from_the_email(ctx):
    first = users.register_user(ctx, email="sam@one.example.org", password="long enough")
    second = users.register_user(ctx, email="sam@two.example.org", password="long enough")
    assert (first.display_name, second.display_name) == ("sam", "sam-2")


def test_tokens_are_stored_hashed_shown_once_and_revocable(ctx, make_user):
    user = make_user()
    token, plaintext = users.create_token(ctx, user=user, name="laptop")
    assert plaintext.startswith("tb_") and len(plaintext) > 40
    stored = ctx.session.scalar(select(ApiToken))
    assert stored.token_hash == users.hash_token(plaintext) and plaintext not in (stored.token_hash, stored.prefix)
    assert users.user_for_token(ctx, plaintext).id == user.id
    assert users.user_for_token(ctx, plaintext[:-1] + "x") is None
    assert users.user_for_token(ctx, "") is None
    assert [t.id for t in users.list_tokens(ctx, user=user)] == [token.id]
    with pytest.raises(NotFound):
        users.revoke_token(ctx, user=make_user(), token_id=token.id)
    users.revoke_token(ctx, user=user, token_id=token.id)
    assert users.user_for_token(ctx, plaintext) is None
    assert users.list_tokens(ctx, user=user) == []


def test_token_use_is_noted_at_most_once_a_minute(ctx, make_user):
    token, plaintext = users.create_token(ctx, user=make_user())
    users.user_for_token(ctx, plaintext)
    first = token.last_used_at
    assert first is not None
    users.user_for_token(ctx, plaintext)
    assert token.last_used_at == first
    token.last_used_at = utcnow() - timedelta(minutes=2)
    ctx.session.commit()
    users.user_for_token(ctx, plaintext)
    assert token.last_used_at > first


def test_system_user_cannot_log_in_and_is_created_once(ctx):
    system = users.system_user(ctx)
    assert users.system_user(ctx).id == system.id
    assert not system.is_organizer
    with pytest.raises(Unauthorized):
        users.authenticate(ctx, email=system.email, password="!")
    assert ctx.session.scalar(select(User).where(User.email == system.email)).password_hash == "!"


def test_competition_slugs_are_checked_and_unique(ctx):
    competitions.create_competition(ctx, actor=OPERATOR, slug="colota", title="CoLoTa")
    with pytest.raises(Conflict):
        competitions.create_competition(ctx, actor=OPERATOR, slug="colota", title="Again")
    for slug in ("CoLoTa", "-x", "x-", "a b", "x" * 65, ""):
        with pytest.raises(InvalidInput):
            competitions.create_competition(ctx, actor=OPERATOR, slug=slug, title="t")
    with pytest.raises(NotFound):
        access.get_competition(ctx, "creak")


def test_competitions_with_an_open_phase_come_first(ctx, make_competition, make_phase):
    closed, open_, _empty = make_competition("closed"), make_competition("open"), make_competition("empty")
    make_phase(closed, status="closed")
    make_phase(open_, status="open")
    make_phase(open_, status="upcoming", name="Next")
    assert [c.slug for c in competitions.list_competitions(ctx)] == ["open", "empty", "closed"]
    updated = competitions.update_competition(ctx, actor=OPERATOR, slug="open", title="Now open", description="new")
    assert (updated.title, updated.description) == ("Now open", "new")
    assert access.phase_status(updated.phases[0]) == "open"
