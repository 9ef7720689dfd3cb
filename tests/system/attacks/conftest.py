"""Fixtures of the attack suite: the platform behind its API on SQLite and PostgreSQL, an organizer, attackers."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest
from probing_world import Caller, Item, Platform, make_items


@pytest.fixture
def platform(app: Any, client: Any, make_organizer: Callable[..., Any], make_token: Callable[[Any], str]) -> Platform:
    """Return the platform as an organizer's API sees it (rate limits raised: attacks upload a lot)."""
    app.config.update(API_RATELIMIT="100000 per minute", API_INVALID_UPLOAD_RATELIMIT="100000 per minute")
    return Platform(client, Caller(make_token(make_organizer())))


@pytest.fixture
def attacker(make_user: Callable[..., Any], make_token: Callable[[Any], str]) -> Callable[[], Caller]:
    """Return a factory of fresh participant accounts with tokens (registration is open)."""
    counter = itertools.count(1)
    return lambda: Caller(make_token(make_user(f"attacker{next(counter)}@example.com")))


@pytest.fixture
def items() -> list[Item]:
    """Return the attacked items with their truth."""
    return make_items()
