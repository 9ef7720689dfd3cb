"""docs/PROBING.md on the web: organizers set the probing defences in the phase forms; pages state the rule."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from web_world import World, build_world, label_bytes, predictions

from leaderboard import submissions
from leaderboard.accounts import OPERATOR, access
from leaderboard.disclosure import probing_settings
from leaderboard.models import Phase
from leaderboard.organizing import phase_settings
from leaderboard.platform import ServiceContext

pytestmark = pytest.mark.backends("sqlite")


@pytest.fixture
def world(ctx: ServiceContext) -> World:
    """Return the shared test world."""
    return build_world(ctx)


def post(client: Any, path: str, fields: dict[str, Any], csrf_token: Callable) -> Any:
    """POST a form with the CSRF token of the page at path."""
    return client.post(path, data={**fields, "csrf_token": csrf_token(client, path)},
                       content_type="multipart/form-data")


def test_edit_form_shows_and_changes_the_probing_settings(world: World, client: Any, login: Callable,
                                                          csrf_token: Callable, ctx: ServiceContext) -> None:
    login(client, world.org_a)
    path = f"/organizer/phases/{world.open_phase.id}/edit"
    page = client.get(path).get_data(as_text=True)
    shown = re.search(r'<input[^>]*name="min_slice_items"[^>]*>', page)
    assert shown and 'value="2"' in shown.group(0) and 'name="public_feedback"' in page  # the world's setting
    response = post(client, path, {"name": "Open phase", "max_per_day": "5", "max_total": "20",
                                   "leaderboard_visibility": "public", "min_slice_items": "10",
                                   "public_feedback": "ladder", "ladder_step": "0.05", "min_answered": ""},
                    csrf_token)
    assert response.status_code == 303
    ctx.session.expire_all()
    settings = probing_settings(access.get_phase(ctx, world.open_phase.id))
    assert (settings.min_slice_items, settings.public_feedback, settings.ladder_step, settings.min_answered) == (
        10, "ladder", 0.05, None)


def test_edit_form_refuses_a_bad_step(world: World, client: Any, login: Callable, csrf_token: Callable) -> None:
    login(client, world.org_a)
    path = f"/organizer/phases/{world.open_phase.id}/edit"
    response = post(client, path, {"name": "Open phase", "leaderboard_visibility": "public",
                                   "public_feedback": "ladder", "ladder_step": "3"}, csrf_token)
    assert response.status_code == 400


def test_create_form_takes_the_probing_settings_and_the_config_wins(world: World, client: Any, login: Callable,
                                                                    csrf_token: Callable,
                                                                    ctx: ServiceContext) -> None:
    login(client, world.org_a)
    path = "/organizer/c/alpha/phases/new"
    response = post(client, path, {
        "name": "Laddered", "labels": (io.BytesIO(label_bytes()), "l.jsonl"), "leaderboard_visibility": "public",
        "config_text": json.dumps({"task_type": "binary", "min_slice_items": 3}),
        "min_slice_items": "7", "public_feedback": "ladder", "min_answered": "4"}, csrf_token)
    assert response.status_code == 303
    phase = ctx.session.query(Phase).filter_by(name="Laddered").one()
    settings = probing_settings(phase)
    assert (settings.min_slice_items, settings.public_feedback, settings.min_answered) == (3, "ladder", 4)


def test_phase_page_states_the_rule_and_lists_shown_values_under_the_ladder(world: World, client: Any,
                                                                           login: Callable,
                                                                           ctx: ServiceContext) -> None:
    phase_id = world.open_phase.id
    phase_settings.update_settings(ctx, phase_id=phase_id, actor=OPERATOR, public_feedback="ladder", ladder_step=0.5)
    submissions.accept_submission(ctx, phase_id=phase_id, user=world.alice, filename="p.csv",
                                  stream=io.BytesIO(predictions(wrong=("c01", "c02", "c03"))))
    login(client, world.alice)
    page = client.get(f"/phases/{phase_id}").get_data(as_text=True)
    assert "follow the ladder" in page
    # alice's first file (5/6 right on the public split) was released as 1.0 (step 0.5); the second is held at it
    assert "0.8333" not in page and "0.5" not in page.split("Your submissions")[1].split("</table>")[0]
    board = client.get(f"/phases/{phase_id}/leaderboard").get_data(as_text=True)
    assert "follow the ladder" in board


def test_phase_page_states_exact_feedback_by_default(world: World, client: Any) -> None:
    page = client.get(f"/phases/{world.open_phase.id}").get_data(as_text=True)
    assert "The public ranking value is exact" in page and "at least 2 answered items" in page  # the world sets 2
