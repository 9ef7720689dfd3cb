"""Forms: uploads (rejected, accepted, over quota), accounts, and CSRF on every form."""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from typing import Any

import pytest
from web_world import BAD_PREDICTIONS, PASSWORD, World, build_world, label_bytes, predictions

from leaderboard.accounts import OPERATOR, access
from leaderboard.models import Submission
from leaderboard.organizing import phases
from leaderboard.platform import ServiceContext

pytestmark = pytest.mark.backends("sqlite")


@pytest.fixture
def world(ctx: ServiceContext) -> World:
    """Return the shared test world."""
    return build_world(ctx)


def upload(client: Any, phase_id: int, data: bytes, *, token: str, description: str = "") -> Any:
    """Post a prediction file through the phase page's form."""
    form = {"file": (io.BytesIO(data), "preds.csv"), "description": description, "csrf_token": token}
    return client.post(f"/phases/{phase_id}", data=form, content_type="multipart/form-data")


def test_rejected_upload_lists_problems_by_line_and_keeps_description(
        world: World, client: Any, login: Callable, csrf_token: Callable) -> None:
    login(client, world.bob)
    path = f"/phases/{world.open_phase.id}"
    response = upload(client, world.open_phase.id, BAD_PREDICTIONS, token=csrf_token(client, path),
                      description="my <b>broken</b> run")
    page = response.get_data(as_text=True)
    assert response.status_code == 400
    assert "The file was rejected" in page and "quota was not charged" in page
    rows = re.findall(r'<td class="num mono">(\d+|—)</td>', page)
    assert rows and rows == sorted(rows, key=lambda r: -1 if r == "—" else int(r))
    assert rows == ["2", "4", "5"]  # bad value, the repeat of c02 (not its first line), unknown id
    assert 'value="my &lt;b&gt;broken&lt;/b&gt; run"' in page  # kept, and escaped
    assert "<b>broken</b>" not in page


def test_rejected_upload_is_not_charged(world: World, client: Any, login: Callable, csrf_token: Callable,
                                        ctx: ServiceContext) -> None:
    from leaderboard.entries import quota

    login(client, world.bob)
    before = quota.quota_status(ctx, phase=world.open_phase, user=world.bob).used_today
    upload(client, world.open_phase.id, BAD_PREDICTIONS, token=csrf_token(client, f"/phases/{world.open_phase.id}"))
    assert quota.quota_status(ctx, phase=world.open_phase, user=world.bob).used_today == before


def test_good_upload_goes_to_its_scored_submission_page(world: World, client: Any, login: Callable,
                                                       csrf_token: Callable) -> None:
    login(client, world.bob)
    token = csrf_token(client, f"/phases/{world.open_phase.id}")
    response = upload(client, world.open_phase.id, predictions(wrong=("c03",)), token=token, description="run 2")
    assert response.status_code == 303
    location = response.headers["Location"]
    assert re.search(r"/submissions/\d+$", location)
    page = client.get(location).get_data(as_text=True)
    assert "scored" in page and "Public split" in page and "Head versus tail" in page
    assert re.search(r"\[\d\.\d{4}, \d\.\d{4}\]", page)  # a 95% interval shown to 4 decimals
    assert "Private split" not in page  # hidden while the phase is open
    assert "http-equiv=\"refresh\"" not in page


def test_upload_over_the_daily_quota_says_when_it_resets(world: World, client: Any, login: Callable,
                                                         csrf_token: Callable, ctx: ServiceContext) -> None:
    phases.update_phase(ctx, actor=OPERATOR, phase_id=world.open_phase.id, max_per_day=1)
    login(client, world.alice)  # alice already used her one submission today
    path = f"/phases/{world.open_phase.id}"
    page = client.get(path).get_data(as_text=True)
    assert "Daily quota resets" in page and re.search(r"\d{4}-\d\d-\d\d 00:00 UTC", page)
    response = upload(client, world.open_phase.id, predictions(), token=csrf_token(client, path))
    assert response.status_code == 429
    text = response.get_data(as_text=True)
    assert "Quota used up" in text and re.search(r"resets at \d{4}-\d\d-\d\d 00:00 UTC", text)
    assert text.index("Quota used up") < text.index("Submit predictions")  # above the form, not beside it


def test_rejected_uploads_are_rate_limited(world: World, app: Any, client: Any, login: Callable,
                                           csrf_token: Callable) -> None:
    app.config["WEB_INVALID_UPLOAD_RATELIMIT"] = "2 per hour"
    login(client, world.bob)
    token = csrf_token(client, f"/phases/{world.open_phase.id}")
    codes = [upload(client, world.open_phase.id, BAD_PREDICTIONS, token=token).status_code for _ in range(3)]
    assert codes == [400, 400, 429]
    assert "Too many rejected uploads" in upload(client, world.open_phase.id, predictions(), token=token).get_data(
        as_text=True)


def test_upload_needs_a_file(world: World, client: Any, login: Callable, csrf_token: Callable) -> None:
    login(client, world.bob)
    path = f"/phases/{world.open_phase.id}"
    response = client.post(path, data={"csrf_token": csrf_token(client, path), "description": "x"})
    assert response.status_code == 400
    assert "Choose a file to upload." in response.get_data(as_text=True)


def test_upload_to_a_closed_phase_is_refused(world: World, client: Any, login: Callable, csrf_token: Callable) -> None:
    login(client, world.bob)
    token = csrf_token(client, f"/phases/{world.open_phase.id}")
    response = upload(client, world.closed_phase.id, predictions(), token=token)
    assert response.status_code == 409


def test_anonymous_upload_is_sent_to_login(world: World, client: Any) -> None:
    response = client.post(f"/phases/{world.open_phase.id}", data={})
    assert response.status_code in (302, 400)  # the CSRF check may answer first
    page = client.get(f"/phases/{world.open_phase.id}").get_data(as_text=True)
    assert "Log in to submit" in page and 'type="file"' not in page


def test_pending_submission_page_refreshes_itself(world: World, client: Any, login: Callable,
                                                  ctx: ServiceContext) -> None:
    sub = ctx.session.get(Submission, world.submission_ids["alice_good"])
    sub.status = "queued"
    ctx.session.commit()
    login(client, world.alice)
    page = client.get(f"/submissions/{sub.id}").get_data(as_text=True)
    assert "waiting to be scored" in page and "Refresh now" in page
    assert 'http-equiv="refresh"' not in page and "js/submission.js" in page  # a script polls (no meta refresh)


def test_register_login_logout_cycle(world: World, client: Any, csrf_token: Callable) -> None:
    form = {"email": "new@example.org", "display_name": "Newcomer", "password": "long enough pw",
            "confirm": "long enough pw", "csrf_token": csrf_token(client, "/register")}
    response = client.post("/register", data=form)
    assert response.status_code == 303
    assert "Newcomer" in client.get("/").get_data(as_text=True)
    response = client.post("/logout", data={"csrf_token": csrf_token(client, "/")})
    assert response.status_code == 303
    assert "Log in" in client.get("/").get_data(as_text=True)
    response = client.post("/login", data={"email": "new@example.org", "password": "long enough pw",
                                           "csrf_token": csrf_token(client, "/login")})
    assert response.status_code == 303
    assert "Newcomer" in client.get("/account").get_data(as_text=True)


def test_register_refuses_a_taken_email(world: World, client: Any, csrf_token: Callable) -> None:
    form = {"email": "alice@example.com", "display_name": "Someone", "password": "long enough pw",
            "confirm": "long enough pw", "csrf_token": csrf_token(client, "/register")}
    response = client.post("/register", data=form)
    assert response.status_code == 400
    assert "already exists" in response.get_data(as_text=True)


def test_wrong_password_is_refused_without_saying_which_part(world: World, client: Any,
                                                              csrf_token: Callable) -> None:
    token = csrf_token(client, "/login")
    for email in ("alice@example.com", "nobody@example.com"):
        response = client.post("/login", data={"email": email, "password": "wrong password", "csrf_token": token})
        assert response.status_code == 401
        assert "The email or the password is wrong." in response.get_data(as_text=True)


def test_login_is_rate_limited(world: World, client: Any, csrf_token: Callable) -> None:
    token = csrf_token(client, "/login")
    codes = [client.post("/login", data={"email": "alice@example.com", "password": "nope nope",
                                         "csrf_token": token}).status_code for _ in range(11)]
    assert codes[:10] == [401] * 10 and codes[10] == 429


@pytest.mark.parametrize("target", ["https://evil.example/", "//evil.example/x", "/\\evil.example"])
def test_login_never_redirects_off_site(target: str, world: World, client: Any, csrf_token: Callable) -> None:
    token = csrf_token(client, "/login")
    response = client.post(f"/login?next={target}", data={"email": "alice@example.com", "password": PASSWORD,
                                                           "csrf_token": token})
    assert response.status_code == 303 and response.headers["Location"] == "/"


def test_login_returns_to_the_page_asked_for(world: World, client: Any, csrf_token: Callable) -> None:
    token = csrf_token(client, "/login")
    path = f"/phases/{world.open_phase.id}"
    response = client.post(f"/login?next={path}", data={"email": "alice@example.com", "password": PASSWORD,
                                                        "csrf_token": token})
    assert response.headers["Location"] == path


def csrf_forms(w: World) -> list[tuple[str, dict[str, Any]]]:
    """Return every form (path, fields) of the site, with otherwise valid fields."""
    p = w.open_phase.id
    return [
        ("/login", {"email": "alice@example.com", "password": PASSWORD}),
        ("/register", {"email": "x@example.org", "display_name": "Xx", "password": "long enough pw",
                       "confirm": "long enough pw"}),
        ("/logout", {}),
        (f"/phases/{p}", {"file": (io.BytesIO(predictions()), "p.csv")}),
        ("/organizer/competitions/new", {"slug": "gamma", "title": "Gamma"}),
        ("/organizer/c/alpha/edit", {"title": "Hijacked"}),
        (f"/organizer/phases/{p}/labels", {"labels": (io.BytesIO(label_bytes()), "l.jsonl")}),
        ("/organizer/c/alpha/phases/new", {"name": "N", "labels": (io.BytesIO(b"{}"), "l.jsonl")}),
        ("/organizer/c/alpha/phases/import", {"name": "N", "format": "creak",
                                              "source": (io.BytesIO(b"{}"), "dev.json")}),
        (f"/organizer/phases/{p}/edit", {"name": "Renamed", "leaderboard_visibility": "public"}),
        (f"/organizer/phases/{p}/baselines", {"name": "B", "file": (io.BytesIO(predictions()), "b.csv")}),
        (f"/organizer/phases/{p}/close", {}),
        (f"/organizer/phases/{p}/open", {}),
        (f"/organizer/phases/{p}/rescore", {}),
        ("/account/tokens", {"name": "laptop"}),
    ]


def test_every_form_refuses_a_post_without_csrf_token(world: World, client: Any, login: Callable,
                                                     ctx: ServiceContext) -> None:
    login(client, world.org_a)
    for path, fields in csrf_forms(world):
        response = client.post(path, data=fields, content_type="multipart/form-data")
        assert response.status_code == 400, path
        assert "CSRF" in response.get_data(as_text=True), path
    ctx.session.expire_all()
    assert access.get_phase(ctx, world.open_phase.id).name == "Open phase"
    assert access.phase_status(access.get_phase(ctx, world.open_phase.id)) == "open"
