"""The organizer form's daily limit: empty is 5 a day, "no daily limit" is a box to tick, unlimited is flagged."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from web_world import World, build_world, label_bytes

from leaderboard.models import Phase
from leaderboard.platform import ServiceContext

FLAG = "unlimited / day"


@pytest.fixture
def organizer(ctx: ServiceContext, client: Any, login: Callable) -> Any:
    """Return the test client logged in as the organizer of competition alpha."""
    world: World = build_world(ctx)
    login(client, world.org_a)
    return client


def create(client: Any, csrf_token: Callable, name: str, **limits: str) -> Any:
    """Post the new-phase form of competition alpha with these limit fields."""
    path = "/organizer/c/alpha/phases/new"
    fields = {"name": name, "labels": (io.BytesIO(label_bytes()), "l.jsonl"), "leaderboard_visibility": "public",
              "config_text": json.dumps({"task_type": "binary"}), "csrf_token": csrf_token(client, path), **limits}
    return client.post(path, data=fields, content_type="multipart/form-data")


def phase_named(ctx: ServiceContext, name: str) -> Phase:
    """Return the phase with this name."""
    ctx.session.expire_all()
    return ctx.session.query(Phase).filter_by(name=name).one()


def test_the_form_without_a_daily_limit_gives_five_a_day(organizer: Any, csrf_token: Callable,
                                                         ctx: ServiceContext) -> None:
    form = organizer.get("/organizer/c/alpha/phases/new").get_data(as_text=True)
    assert "Empty: 5 a day" in form and "No daily limit" in form
    assert create(organizer, csrf_token, "Default", max_per_day="").status_code == 303
    assert phase_named(ctx, "Default").max_per_day == 5


def test_unlimited_is_a_box_to_tick_and_is_flagged_on_the_organizer_pages(organizer: Any, csrf_token: Callable,
                                                                          ctx: ServiceContext) -> None:
    assert FLAG not in organizer.get("/organizer/c/alpha").get_data(as_text=True)
    assert create(organizer, csrf_token, "Open bar", unlimited_per_day="y").status_code == 303
    phase = phase_named(ctx, "Open bar")
    assert phase.max_per_day is None
    assert FLAG in organizer.get("/organizer/c/alpha").get_data(as_text=True)
    edit = organizer.get(f"/organizer/phases/{phase.id}/edit").get_data(as_text=True)
    assert "This phase has no daily limit" in edit
    box = re.search(r'<input[^>]*name="unlimited_per_day"[^>]*>', edit)
    assert box and "checked" in box.group(0)


def test_a_number_and_unlimited_together_are_refused(organizer: Any, csrf_token: Callable,
                                                     ctx: ServiceContext) -> None:
    response = create(organizer, csrf_token, "Both", max_per_day="3", unlimited_per_day="y")
    assert response.status_code == 400 and "not both" in response.get_data(as_text=True)
    assert ctx.session.query(Phase).filter_by(name="Both").count() == 0


def test_editing_asks_for_a_limit_or_the_explicit_unlimited(organizer: Any, csrf_token: Callable,
                                                            ctx: ServiceContext) -> None:
    create(organizer, csrf_token, "Edited")
    phase = phase_named(ctx, "Edited")
    path = f"/organizer/phases/{phase.id}/edit"
    fields = {"name": "Edited", "leaderboard_visibility": "public", "max_per_day": ""}  # as a browser sends it
    empty = organizer.post(path, data={**fields, "csrf_token": csrf_token(organizer, path)})
    assert empty.status_code == 400 and "tick “No daily limit”" in empty.get_data(as_text=True)
    assert phase_named(ctx, "Edited").max_per_day == 5
    lifted = organizer.post(path, data={**fields, "unlimited_per_day": "y", "csrf_token": csrf_token(organizer, path)})
    assert lifted.status_code == 303 and phase_named(ctx, "Edited").max_per_day is None
    back = organizer.post(path, data={**fields, "max_per_day": "4", "csrf_token": csrf_token(organizer, path)})
    assert back.status_code == 303 and phase_named(ctx, "Edited").max_per_day == 4
