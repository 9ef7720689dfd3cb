"""Every page renders for every kind of visitor; organizer pages are guarded; emails never show."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from web_world import World, build_world

from leaderboard.accounts import OPERATOR
from leaderboard.platform import ServiceContext

pytestmark = pytest.mark.backends("sqlite")


@pytest.fixture
def world(ctx: ServiceContext) -> World:
    """Return the shared test world."""
    return build_world(ctx)


def public_pages(w: World) -> list[str]:
    """Return every public page of the world."""
    pages = ["/", "/login", "/register", "/c/alpha", "/c/beta", f"/c/alpha?phase={w.closed_phase.id}"]
    for phase in w.phases:
        pages += [f"/phases/{phase.id}", f"/phases/{phase.id}/leaderboard"]
    return pages


def organizer_pages(w: World) -> list[str]:
    """Return every organizer page (GET) of competition alpha."""
    p = w.open_phase.id
    return ["/organizer/", "/organizer/competitions/new", "/organizer/c/alpha", "/organizer/c/alpha/edit",
            "/organizer/c/alpha/phases/new",
            "/organizer/c/alpha/phases/import", f"/organizer/phases/{p}/edit", f"/organizer/phases/{p}/baselines",
            f"/organizer/phases/{p}/submissions"]


def visitor(name: str, w: World) -> Any:
    """Return the user of a visitor kind, or None for anonymous."""
    return {"anonymous": None, "participant": w.alice, "organizer": w.org_a}[name]


@pytest.mark.parametrize("kind", ["anonymous", "participant", "organizer"])
def test_every_public_page_renders_for_every_visitor(kind: str, world: World, client: Any, login: Callable) -> None:
    user = visitor(kind, world)
    if user is not None:
        login(client, user)
    for path in public_pages(world):
        response = client.get(path)
        assert response.status_code == 200, path
        page = response.get_data(as_text=True)
        assert "<main" in page and "</html>" in page, path
        assert ("Log out" in page) == (user is not None), path
        assert ("/organizer/" in page) == (kind == "organizer"), path


def test_every_organizer_page_renders_for_its_organizer(world: World, client: Any, login: Callable) -> None:
    login(client, world.org_a)
    for path in organizer_pages(world):
        response = client.get(path)
        assert response.status_code == 200, path
        assert 'name="csrf_token"' in response.get_data(as_text=True), path


@pytest.mark.parametrize("name", ["alice_good", "alice_bad", "human_baseline"])
def test_submission_pages_render_for_their_owner(name: str, world: World, client: Any, login: Callable) -> None:
    login(client, world.alice)
    response = client.get(f"/submissions/{world.submission_ids[name]}")
    assert response.status_code == 200


def test_account_page_shows_own_profile(world: World, client: Any, login: Callable) -> None:
    login(client, world.alice)
    page = client.get("/account").get_data(as_text=True)
    assert "Alice Lab" in page and "alice@example.com" in page


def test_account_page_needs_login(world: World, client: Any) -> None:
    response = client.get("/account")
    assert response.status_code == 302 and "/login" in response.headers["Location"]


def test_organizer_pages_send_anonymous_visitors_to_login(world: World, client: Any) -> None:
    for path in organizer_pages(world):
        response = client.get(path)
        assert response.status_code == 302, path
        assert "/login" in response.headers["Location"], path


def test_organizer_pages_refuse_participants(world: World, client: Any, login: Callable) -> None:
    login(client, world.alice)
    for path in organizer_pages(world):
        assert client.get(path).status_code == 403, path
    for action in ("open", "close", "rescore"):
        token = _token(client)
        response = client.post(f"/organizer/phases/{world.open_phase.id}/{action}", data={"csrf_token": token})
        assert response.status_code == 403, action


def test_organizer_of_another_competition_cannot_manage_it(world: World, client: Any, login: Callable) -> None:
    login(client, world.org_b)
    for path in organizer_pages(world)[2:]:
        assert client.get(path).status_code == 403, path
    response = client.post(f"/organizer/phases/{world.open_phase.id}/close", data={"csrf_token": _token(client)})
    assert response.status_code == 403
    dashboard = client.get("/organizer/").get_data(as_text=True)
    assert "Beta benchmark" in dashboard and "Alpha benchmark" not in dashboard


def test_nav_shows_organizer_link_only_to_organizers(world: World, client: Any, login: Callable) -> None:
    assert "Organizer</a>" not in client.get("/").get_data(as_text=True)
    login(client, world.alice)
    assert "Organizer</a>" not in client.get("/").get_data(as_text=True)
    login(client, world.org_b)
    assert "Organizer</a>" in client.get("/").get_data(as_text=True)


@pytest.mark.parametrize("kind", ["anonymous", "participant", "organizer"])
def test_public_pages_show_display_names_never_emails(kind: str, world: World, client: Any, login: Callable) -> None:
    user = visitor(kind, world)
    if user is not None:
        login(client, user)
    pages = public_pages(world) + [f"/submissions/{world.submission_ids['human_baseline']}"]
    for path in pages:
        page = client.get(path).get_data(as_text=True)
        for someone in world.users:
            assert someone.email not in page, (path, someone.email)
        assert not re.search(r"[\w.+-]+@example\.com", page), path
    ranking = client.get(f"/phases/{world.open_phase.id}/leaderboard").get_data(as_text=True)
    assert "Alice Lab" in ranking and "Bob Q" in ranking


def test_competitions_list_open_phases_first(world: World, client: Any, ctx: ServiceContext) -> None:
    from leaderboard.organizing import competitions

    competitions.create_competition(ctx, actor=OPERATOR, slug="zeta", title="Zeta without phases")
    page = client.get("/").get_data(as_text=True)
    assert page.index("Alpha benchmark") < page.index("Zeta without phases")
    assert page.index("Beta benchmark") < page.index("Zeta without phases")


def test_unknown_things_get_the_html_error_page(world: World, client: Any) -> None:
    for path in ("/c/nope", "/phases/99999", "/phases/99999/leaderboard", "/no-such-page"):
        response = client.get(path)
        assert response.status_code == 404, path
        assert "Error 404" in response.get_data(as_text=True), path


def test_other_peoples_submissions_are_not_found(world: World, client: Any, login: Callable) -> None:
    login(client, world.bob)
    assert client.get(f"/submissions/{world.submission_ids['alice_good']}").status_code == 404


def test_anonymous_visitor_is_asked_to_log_in_for_a_submission(world: World, client: Any) -> None:
    response = client.get(f"/submissions/{world.submission_ids['alice_good']}")
    assert response.status_code == 302 and "/login" in response.headers["Location"]


def test_baseline_submission_is_public(world: World, client: Any) -> None:
    page = client.get(f"/submissions/{world.submission_ids['human_baseline']}").get_data(as_text=True)
    assert "Human" in page and "baseline" in page


def test_public_file_downloads_stream_the_questions(world: World, client: Any) -> None:
    response = client.get(f"/phases/{world.open_phase.id}/files/questions.jsonl")
    assert response.status_code == 200
    assert "attachment" in response.headers["Content-Disposition"]
    assert b'"id": "c01"' in response.data or b'"id":"c01"' in response.data
    kit = client.get(f"/phases/{world.open_phase.id}/files/starting_kit.zip")
    assert kit.status_code == 200 and kit.data[:2] == b"PK"


def test_upcoming_phase_data_is_not_published_yet(world: World, client: Any, login: Callable) -> None:
    path = f"/phases/{world.upcoming_phase.id}/files/questions.jsonl"
    assert client.get(path).status_code == 404
    login(client, world.org_a)
    assert client.get(path).status_code == 200


def _token(client: Any) -> str:
    """Return a CSRF token of the client's session (read from the home page's logout form)."""
    page = client.get("/").get_data(as_text=True)
    found = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert found, "no logout form on the home page"
    return found.group(1)
