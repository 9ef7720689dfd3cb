"""Organizer pages: create competitions and phases (files or importer), edit, open/close, baselines."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from shared_data import released
from web_world import World, build_world, label_bytes, predictions

from leaderboard.accounts import access
from leaderboard.models import Competition, Phase
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


def post(client: Any, path: str, token_page: str, fields: dict[str, Any], csrf_token: Callable) -> Any:
    """Post a form with the CSRF token of the page it lives on."""
    return client.post(path, data={**fields, "csrf_token": csrf_token(client, token_page)},
                       content_type="multipart/form-data")


def test_organizer_creates_a_competition_they_then_manage(organizer: Any, csrf_token: Callable,
                                                          ctx: ServiceContext, world: World) -> None:
    path = "/organizer/competitions/new"
    response = post(organizer, path, path, {"slug": "gamma", "title": "Gamma", "description": "G."}, csrf_token)
    assert response.status_code == 303 and response.headers["Location"].endswith("/organizer/c/gamma")
    created = ctx.session.query(Competition).filter_by(slug="gamma").one()
    assert created.created_by_id == world.org_a.id
    assert "Gamma" in organizer.get("/organizer/").get_data(as_text=True)


def test_duplicate_slug_is_explained_on_the_form(organizer: Any, csrf_token: Callable) -> None:
    path = "/organizer/competitions/new"
    response = post(organizer, path, path, {"slug": "alpha", "title": "Again"}, csrf_token)
    assert response.status_code == 400 and "already exists" in response.get_data(as_text=True)


def test_organizer_adds_a_phase_from_files(organizer: Any, csrf_token: Callable, ctx: ServiceContext) -> None:
    path = "/organizer/c/alpha/phases/new"
    fields = {"name": "Test phase", "description": "Rules here.", "labels": (io.BytesIO(label_bytes()), "l.jsonl"),
              "config_text": json.dumps({"task_type": "binary", "breakdowns": ["category"]}),
              "start_at": "2030-01-01T00:00", "end_at": "2030-02-01T12:30", "max_per_day": "3", "max_total": "",
              "leaderboard_visibility": "public"}
    response = post(organizer, path, path, fields, csrf_token)
    assert response.status_code == 303
    phase = ctx.session.query(Phase).filter_by(name="Test phase").one()
    assert (phase.n_items, phase.max_per_day, phase.max_total, phase.has_private_split) == (10, 3, None, True)
    assert phase.start_at.isoformat() == "2030-01-01T00:00:00"
    page = organizer.get(f"/c/alpha?phase={phase.id}").get_data(as_text=True)
    assert "2030-01-01 00:00 UTC" in page and "2030-02-01 12:30 UTC" in page and "upcoming" in page


def test_bad_label_file_is_explained_to_the_organizer(organizer: Any, csrf_token: Callable) -> None:
    path = "/organizer/c/alpha/phases/new"
    bad = b'{"id": "a", "label": "true"}\n{"id": "a", "label": "false"}\n'
    response = post(organizer, path, path, {"name": "Broken", "labels": (io.BytesIO(bad), "l.jsonl"),
                                            "leaderboard_visibility": "public"}, csrf_token)
    page = response.get_data(as_text=True)
    assert response.status_code == 400 and "flash-error" in page and "line 2" in page.lower()


@pytest.mark.parametrize("config", [{"config_text": "{task_type: binary"}, {"config_text": "[1, 2]"},
                                    {"config_file": (io.BytesIO(b"{oops"), "phase.json")}])
def test_config_that_is_not_a_json_object_is_refused(config: dict[str, Any], organizer: Any,
                                                     csrf_token: Callable) -> None:
    path = "/organizer/c/alpha/phases/new"
    response = post(organizer, path, path, {"name": "X", "labels": (io.BytesIO(label_bytes()), "l.jsonl"),
                                            "leaderboard_visibility": "public", **config}, csrf_token)
    page = response.get_data(as_text=True)
    assert response.status_code == 400 and ("not valid JSON" in page or "must be a JSON object" in page)


def test_import_preview_reports_without_creating_a_phase(organizer: Any, csrf_token: Callable,
                                                        ctx: ServiceContext) -> None:
    path = "/organizer/c/alpha/phases/import"
    source = released("creak", "contrast_set.json").read_bytes()
    before = ctx.session.query(Phase).count()
    response = post(organizer, path, path, {"format": "creak", "source": (io.BytesIO(source), "contrast_set.json"),
                                            "name": "Contrast", "preview": "y", "leaderboard_visibility": "public"},
                    csrf_token)
    page = response.get_data(as_text=True)
    assert response.status_code == 200 and "Preview only" in page and "kept" in page
    assert re.search(r"<b>\d{3}</b><span>kept</span>", page)
    assert ctx.session.query(Phase).count() == before


def test_import_creates_a_phase_from_a_released_file(organizer: Any, csrf_token: Callable,
                                                    ctx: ServiceContext) -> None:
    path = "/organizer/c/alpha/phases/import"
    source = released("creak", "contrast_set.json").read_bytes()
    response = post(organizer, path, path, {"format": "creak", "source": (io.BytesIO(source), "contrast_set.json"),
                                            "name": "Contrast set", "leaderboard_visibility": "public"}, csrf_token)
    assert response.status_code == 200 and "was created with" in response.get_data(as_text=True)
    phase = ctx.session.query(Phase).filter_by(name="Contrast set").one()
    assert phase.n_items == 500 and phase.task_config["task_type"] == "binary"


def test_import_of_an_unreadable_file_is_explained(organizer: Any, csrf_token: Callable) -> None:
    path = "/organizer/c/alpha/phases/import"
    response = post(organizer, path, path, {"format": "colota", "source": (io.BytesIO(b"not json"), "x.json"),
                                            "name": "X", "leaderboard_visibility": "public"}, csrf_token)
    assert response.status_code == 400 and "could not read" in response.get_data(as_text=True)


def test_organizer_edits_phase_settings(organizer: Any, csrf_token: Callable, world: World,
                                        ctx: ServiceContext) -> None:
    path = f"/organizer/phases/{world.open_phase.id}/edit"
    form = organizer.get(path).get_data(as_text=True)
    assert 'value="Open phase"' in form and 'value="5"' in form  # current settings prefilled
    response = post(organizer, path, path, {"name": "Renamed", "max_per_day": "2", "max_total": "9",
                                            "leaderboard_visibility": "public"}, csrf_token)
    assert response.status_code == 303
    ctx.session.expire_all()
    phase = access.get_phase(ctx, world.open_phase.id)
    assert (phase.name, phase.max_per_day, phase.max_total) == ("Renamed", 2, 9)


def test_end_before_start_is_refused(organizer: Any, csrf_token: Callable, world: World) -> None:
    path = f"/organizer/phases/{world.open_phase.id}/edit"
    response = post(organizer, path, path, {"name": "X", "start_at": "2030-02-01T00:00", "end_at": "2030-01-01T00:00",
                                            "leaderboard_visibility": "public"}, csrf_token)
    assert response.status_code == 400 and "must come after the start" in response.get_data(as_text=True)


def test_closing_a_phase_reveals_the_private_split(organizer: Any, csrf_token: Callable, world: World,
                                                   client: Any) -> None:
    board = f"/phases/{world.open_phase.id}/leaderboard"
    before = organizer.get(board).get_data(as_text=True)
    assert "public split" in before and "hidden until the phase closes" in before
    response = post(organizer, f"/organizer/phases/{world.open_phase.id}/close", "/organizer/c/alpha", {}, csrf_token)
    assert response.status_code == 303
    after = organizer.get(board).get_data(as_text=True)
    assert "private split" in after and "hidden until the phase closes" not in after
    sub = organizer.get(f"/submissions/{world.submission_ids['alice_good']}").get_data(as_text=True)
    assert "Private split" in sub and "Public split" in sub


def test_opening_an_upcoming_phase_lets_participants_submit(organizer: Any, csrf_token: Callable,
                                                            world: World) -> None:
    response = post(organizer, f"/organizer/phases/{world.upcoming_phase.id}/open", "/organizer/c/alpha", {},
                    csrf_token)
    assert response.status_code == 303
    page = organizer.get(f"/phases/{world.upcoming_phase.id}").get_data(as_text=True)
    assert 'badge-open' in page and 'type="file"' in page


def test_rescore_keeps_the_ranking(organizer: Any, csrf_token: Callable, world: World) -> None:
    board = f"/phases/{world.open_phase.id}/leaderboard"
    response = post(organizer, f"/organizer/phases/{world.open_phase.id}/rescore", "/organizer/c/alpha", {},
                    csrf_token)
    assert response.status_code == 303
    page = organizer.get(board).get_data(as_text=True)
    assert page.index("Alice Lab") < page.index("Bob Q")


def test_named_baseline_is_flagged_on_the_ranking(organizer: Any, csrf_token: Callable, world: World) -> None:
    path = f"/organizer/phases/{world.open_phase.id}/baselines"
    response = post(organizer, path, path, {"name": "GPT-4o zero-shot",
                                            "file": (io.BytesIO(predictions(wrong=("c01",))), "g.csv")}, csrf_token)
    assert response.status_code == 303
    page = organizer.get(f"/phases/{world.open_phase.id}/leaderboard").get_data(as_text=True)
    row = re.search(r'<tr class="baseline-row[^"]*">\s*<td class="num rank">–</td>\s*(?:<td[^>]*>[^<]*</td>\s*)?'
                    r'<th scope="row" class="entry">\s*<span class="entry-name">GPT-4o zero-shot</span> '
                    r'<span class="tag tag-baseline">baseline', page)
    assert row, "the uploaded baseline is not a flagged, unranked row"


def test_phase_submissions_page_lists_names_and_statuses(organizer: Any, world: World) -> None:
    page = organizer.get(f"/organizer/phases/{world.open_phase.id}/submissions").get_data(as_text=True)
    assert "Alice Lab" in page and "Bob Q" in page and "failed" in page and "scored" in page
    assert "@example.com" not in page


def test_organizer_edits_the_competition(organizer: Any, csrf_token: Callable, ctx: ServiceContext) -> None:
    path = "/organizer/c/alpha/edit"
    response = post(organizer, path, path, {"title": "Alpha, renamed", "description": "New words."}, csrf_token)
    assert response.status_code == 303
    page = organizer.get("/c/alpha").get_data(as_text=True)
    assert "Alpha, renamed" in page and "New words." in page


def test_replacing_labels_makes_a_new_version_and_rescores(organizer: Any, csrf_token: Callable, world: World,
                                                           ctx: ServiceContext) -> None:
    path = f"/organizer/phases/{world.open_phase.id}/labels"
    flipped = label_bytes().replace(b'"id": "c02", "label": "false"', b'"id": "c02", "label": "true"')
    assert flipped != label_bytes()
    edit = f"/organizer/phases/{world.open_phase.id}/edit"
    response = post(organizer, path, edit, {"labels": (io.BytesIO(flipped), "fixed.jsonl")}, csrf_token)
    assert response.status_code == 303
    ctx.session.expire_all()
    assert access.get_phase(ctx, world.open_phase.id).label_version == 2
    from leaderboard.models import Submission
    from leaderboard.submissions import active_score

    alice = ctx.session.get(Submission, world.submission_ids["alice_good"])
    score = active_score(alice)
    assert alice.status == "scored" and score is not None and score.label_version == 2
    assert score.public_primary == 1.0  # alice answered c02 "true", wrong before, right now


def test_a_broken_replacement_label_file_keeps_the_old_version(organizer: Any, csrf_token: Callable,
                                                               world: World, ctx: ServiceContext) -> None:
    path = f"/organizer/phases/{world.open_phase.id}/labels"
    edit = f"/organizer/phases/{world.open_phase.id}/edit"
    response = post(organizer, path, edit, {"labels": (io.BytesIO(b'{"id": "x"}\n'), "bad.jsonl")}, csrf_token)
    page = response.get_data(as_text=True)
    assert response.status_code == 400 and 'value="Open phase"' in page and "error-text" in page
    ctx.session.expire_all()
    assert access.get_phase(ctx, world.open_phase.id).label_version == 1
