"""Organizer pages for entries (docs/ENTRIES.md): max_methods and final_selections on the phase forms, baselines with
metadata from the web form."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import select
from web_world import World, build_world, label_bytes, predictions

from leaderboard.entries import rules
from leaderboard.models import Baseline, Phase
from leaderboard.platform import ServiceContext

pytestmark = pytest.mark.backends("sqlite")


@pytest.fixture
def world(ctx: ServiceContext) -> World:
    """Return the shared test world."""
    return build_world(ctx)


@pytest.fixture
def organizer(world: World, client: Any, login: Callable) -> Any:
    """Return the test client logged in as the organizer of competition alpha."""
    login(client, world.org_a)
    return client


def post(client: Any, path: str, fields: dict[str, Any], csrf_token: Callable) -> Any:
    """Post a form with the CSRF token of its page."""
    return client.post(path, data={**fields, "csrf_token": csrf_token(client, path)},
                       content_type="multipart/form-data")


def test_a_new_phase_takes_max_methods_and_final_selections(organizer, csrf_token, ctx):
    fields = {"name": "Entries phase", "labels": (io.BytesIO(label_bytes()), "l.jsonl"),
              "config_text": json.dumps({"task_type": "binary"}), "leaderboard_visibility": "public",
              "max_methods": "2", "final_selections": "1"}
    response = post(organizer, "/organizer/c/alpha/phases/new", fields, csrf_token)
    assert response.status_code == 303
    phase = ctx.session.scalar(select(Phase).where(Phase.name == "Entries phase"))
    assert (rules.max_methods(phase), rules.final_selections(phase)) == (2, 1)


def test_the_edit_form_shows_and_changes_the_entry_settings(organizer, csrf_token, ctx, world):
    path = f"/organizer/phases/{world.open_phase.id}/edit"
    page = organizer.get(path).get_data(as_text=True)
    assert "Methods per team or participant" in page and "Final selections per team" in page
    assert re.search(r'<input[^>]*name="max_methods" type="number" value="3"', page)
    response = post(organizer, path, {"name": "Open phase", "max_per_day": "5", "max_total": "20",
                                      "leaderboard_visibility": "public", "max_methods": "4",
                                      "final_selections": "2"}, csrf_token)
    assert response.status_code == 303
    ctx.session.expire_all()
    phase = ctx.session.get(Phase, world.open_phase.id)
    assert (rules.max_methods(phase), rules.final_selections(phase)) == (4, 2)
    post(organizer, path, {"name": "Open phase", "max_per_day": "5", "max_total": "20",
                           "leaderboard_visibility": "public", "max_methods": "4", "final_selections": ""},
         csrf_token)
    ctx.session.expire_all()
    assert rules.final_selections(ctx.session.get(Phase, world.open_phase.id)) is None


def test_a_baseline_from_the_web_form_keeps_its_metadata(organizer, csrf_token, ctx, world):
    path = f"/organizer/phases/{world.open_phase.id}/baselines"
    response = post(organizer, path, {"name": "GPT-4o", "file": (io.BytesIO(predictions(wrong=("c01",))), "g.csv"),
                                      "meta_model": "GPT-4o", "meta_open_weights": "no",
                                      "meta_prompting": "zero-shot"}, csrf_token)
    assert response.status_code == 303
    baseline = ctx.session.scalar(select(Baseline).where(Baseline.name == "GPT-4o"))
    assert baseline.submission.entry_metadata == {"model": "GPT-4o", "open_weights": False, "prompting": "zero-shot"}


def test_a_baseline_with_an_unknown_metadata_key_is_a_form_error_naming_it(organizer, csrf_token, ctx, world):
    path = f"/organizer/phases/{world.open_phase.id}/baselines"
    response = post(organizer, path, {"name": "Odd", "file": (io.BytesIO(predictions()), "o.csv"),
                                      "meta_flops": "1e21", "meta_url": "not a url"}, csrf_token)
    page = response.get_data(as_text=True)
    assert response.status_code == 400
    assert "flops: not a metadata key" in page and "must be an http or https address" in page
    assert ctx.session.scalar(select(Baseline).where(Baseline.name == "Odd")) is None
