"""Issue 20 items 4 and 5: the upload form asks before charging a file that answers few items (the API accepts it and
says so), and a file over the size limit lands on a page that states the limit with a way back (JSON 413 for the
API)."""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import func, select

from leaderboard.entries import quota
from leaderboard.models import Submission
from leaderboard.platform import ServiceContext

pytestmark = pytest.mark.backends("sqlite")


def _post(client: Any, phase_id: int, data: bytes, csrf_token: Callable) -> Any:
    """Post the upload form with one file."""
    return client.post(f"/phases/{phase_id}", content_type="multipart/form-data", data={
        "csrf_token": csrf_token(client, f"/phases/{phase_id}"), "file": (io.BytesIO(data), "p.csv"),
        "method": "zero-shot", "description": "first try"})


def _count(ctx: ServiceContext) -> int:
    """Return how many submissions exist."""
    ctx.session.expire_all()
    return int(ctx.session.scalar(select(func.count()).select_from(Submission).where(
        Submission.is_baseline.is_(False))) or 0)


def test_a_file_answering_few_items_is_asked_about_before_it_is_charged(
        ctx: ServiceContext, client: Any, login: Callable, make_phase: Callable, make_user: Callable,
        make_predictions: Callable, csrf_token: Callable) -> None:
    phase = make_phase()
    alice = make_user()
    login(client, alice)
    partial = b"id,prediction\nq1,true\nq2,false\n"
    asked = _post(client, phase.id, partial, csrf_token)
    page = asked.get_data(as_text=True)
    assert asked.status_code == 200 and "Your file answers 2 of 8 items" in page and "Submit anyway" in page
    assert _count(ctx) == 0 and quota.quota_status(ctx, phase=phase, user=alice).used_total == 0
    token = re.search(r'name="kept" value="([0-9a-f]{32})"', page)
    assert token
    confirmed = client.post(f"/phases/{phase.id}/confirm-upload", data={
        "csrf_token": csrf_token(client, f"/phases/{phase.id}"), "kept": token.group(1)})
    assert confirmed.status_code == 303 and "/submissions/" in confirmed.headers["Location"]
    sub = ctx.session.scalars(select(Submission).where(Submission.is_baseline.is_(False))).one()
    assert (sub.method, sub.description, sub.status) == ("zero-shot", "first try", "scored")
    again = client.post(f"/phases/{phase.id}/confirm-upload", data={
        "csrf_token": csrf_token(client, f"/phases/{phase.id}"), "kept": token.group(1)})
    assert again.status_code == 400 and "no longer kept" in again.get_data(as_text=True) and _count(ctx) == 1


def test_a_complete_file_is_charged_without_a_question(
        ctx: ServiceContext, client: Any, login: Callable, make_phase: Callable, make_user: Callable,
        make_predictions: Callable, csrf_token: Callable) -> None:
    phase = make_phase()
    login(client, make_user())
    answer = _post(client, phase.id, make_predictions(), csrf_token)
    assert answer.status_code == 303 and _count(ctx) == 1


def test_a_kept_file_is_its_uploaders_alone(
        ctx: ServiceContext, client: Any, login: Callable, make_phase: Callable, make_user: Callable,
        csrf_token: Callable) -> None:
    phase = make_phase()
    login(client, make_user())
    page = _post(client, phase.id, b"id,prediction\nq1,true\n", csrf_token).get_data(as_text=True)
    token = re.search(r'name="kept" value="([0-9a-f]{32})"', page).group(1)  # type: ignore[union-attr]
    login(client, make_user())
    stolen = client.post(f"/phases/{phase.id}/confirm-upload", data={
        "csrf_token": csrf_token(client, f"/phases/{phase.id}"), "kept": token})
    assert stolen.status_code == 400 and _count(ctx) == 0


def test_the_api_accepts_a_partial_file_and_returns_the_warning(
        client: Any, make_phase: Callable, make_user: Callable, make_token: Callable,
        make_predictions: Callable) -> None:
    phase = make_phase()
    headers = {"Authorization": f"Bearer {make_token(make_user())}"}
    partial = client.post(f"/api/v1/phases/{phase.id}/submissions", headers=headers,
                          data={"file": (io.BytesIO(b"id,prediction\nq1,true\n"), "p.csv")})
    assert partial.status_code == 202
    assert partial.get_json()["warnings"] == [
        "Your file answers 1 of 8 items; the other 7 count as abstentions and lower accuracy."]
    full = client.post(f"/api/v1/phases/{phase.id}/submissions", headers=headers,
                       data={"file": (io.BytesIO(make_predictions()), "p.csv")})
    assert full.status_code == 202 and full.get_json()["warnings"] == []


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    """Return a 2 KiB upload limit (the request limit is 1 MiB more: a larger body is cut by Werkzeug)."""
    return {"max_upload_bytes": 2048}


def test_a_file_over_the_limit_lands_on_a_page_that_states_it_with_a_way_back(
        client: Any, login: Callable, make_phase: Callable, make_user: Callable, csrf_token: Callable) -> None:
    phase = make_phase()
    login(client, make_user())
    assert "up to 2 KiB (uncompressed)" in client.get(f"/phases/{phase.id}").get_data(as_text=True)
    answer = _post(client, phase.id, b"id,prediction\n" + b"q1,true\n" * 1000, csrf_token)
    page = answer.get_data(as_text=True)
    assert answer.status_code == 413 and "0.0 MiB" not in page
    assert "The limit is <strong>2 KiB</strong>" in page
    assert f'href="/phases/{phase.id}">Back to the form' in page


def test_a_request_over_the_limit_is_json_413_with_the_limit(
        client: Any, make_phase: Callable, make_user: Callable, make_token: Callable) -> None:
    phase = make_phase()
    headers = {"Authorization": f"Bearer {make_token(make_user())}"}
    big = b"id,prediction\n" + b"q1,true\n" * (1024 * 1024 // 8 + 1000)
    answer = client.post(f"/api/v1/phases/{phase.id}/submissions", headers=headers,
                         data={"file": (io.BytesIO(big), "p.csv")})
    assert answer.status_code == 413
    assert answer.get_json()["details"] == {"limit_bytes": 2048, "limit": "2 KiB"}
    assert "2 KiB at most" in answer.get_json()["error"]


def test_uploads_answered_with_a_question_count_against_the_rejected_upload_limit(
        app: Any, client: Any, login: Callable, make_phase: Callable, make_user: Callable,
        csrf_token: Callable) -> None:
    app.config["WEB_INVALID_UPLOAD_RATELIMIT"] = "2 per hour"
    phase = make_phase()
    login(client, make_user())
    codes = [_post(client, phase.id, b"id,prediction\nq1,true\n", csrf_token).status_code for _ in range(3)]
    assert codes == [200, 200, 429]
