"""An organizer uploads a bundle, sees the preview (nothing created), confirms, and a line-ordered file uploaded
to the imported phase scores what the bundle's own rule gives; nobody else can confirm that preview."""

from __future__ import annotations

import io
import re
from typing import Any

import pytest
from bundle_world import BundleCase, codabench_bundle, codalab_bundle, draws, lines_of, share_right
from sqlalchemy import func, select

from leaderboard.models import Competition, Phase, Submission
from leaderboard.platform.db import naive_utc
from leaderboard.submissions import active_score

CASES = {"codalab": codalab_bundle, "codabench": codabench_bundle}
UPLOAD = "/organizer/competitions/import-bundle"


@pytest.fixture(params=list(CASES))
def case(request: pytest.FixtureRequest) -> BundleCase:
    return CASES[request.param]()


def count(ctx, model) -> int:
    ctx.session.expire_all()
    return ctx.session.scalar(select(func.count()).select_from(model))


def preview(client: Any, csrf_token: Any, data: bytes, slug: str = "") -> Any:
    """Upload a bundle through the form; return the preview response."""
    form = {"bundle": (io.BytesIO(data), "bundle.zip"), "slug": slug, "csrf_token": csrf_token(client, UPLOAD)}
    return client.post(UPLOAD, data=form, content_type="multipart/form-data")


def confirm_form(page: str) -> dict[str, str]:
    """Return the confirmation form's fields of a preview page."""
    fields = dict(re.findall(r'name="(csrf_token|token|slug)"[^>]*value="([^"]*)"', page))
    fields.update(dict((name, value) for value, name in re.findall(r'value="([^"]*)"[^>]*name="(token)"', page)))
    assert {"csrf_token", "token", "slug"} <= set(fields), fields
    return fields


def test_the_preview_shows_phases_and_report_and_the_confirmation_creates_them(
        ctx, client, login, csrf_token, make_organizer, make_user, case) -> None:
    organizer = make_organizer()
    login(client, organizer)
    shown = preview(client, csrf_token, case.data)
    page = shown.get_data(as_text=True)
    assert shown.status_code == 200, page
    assert "Preview only: nothing has been created" in page and case.title in page
    for name, start, _end, per_day, total, items in case.phases:
        assert name in page and f"{naive_utc(start):%Y-%m-%d %H:%M} UTC" in page
        assert (f"{per_day} a day" if per_day else "Tailboard&#39;s default") in page and f"{total} in all" in page
        assert f"<td>{items}</td>" in page
    assert "<code>accuracy</code>" in page
    assert case.not_carried.replace("'", "&#39;") in page  # what could not be carried over
    assert count(ctx, Competition) == 0 and count(ctx, Phase) == 0  # nothing before the confirmation

    created = client.post(f"{UPLOAD}/confirm", data=confirm_form(page))
    assert created.status_code == 303, created.get_data(as_text=True)
    competition = ctx.session.scalar(select(Competition))
    assert competition.created_by_id == organizer.id and competition.title == case.title
    first = competition.phases[0]
    assert [p.name for p in competition.phases] == [p[0] for p in case.phases]

    participant = make_user()
    login(client, participant)
    guess = draws(7, len(case.truth[0]), case.classes)
    token = csrf_token(client, f"/phases/{first.id}")
    form = {"file": (io.BytesIO(lines_of(guess).encode()), "answer.txt"), "csrf_token": token}
    uploaded = client.post(f"/phases/{first.id}", data=form, content_type="multipart/form-data")
    assert uploaded.status_code == 303, uploaded.get_data(as_text=True)
    ctx.session.expire_all()
    submission = ctx.session.scalar(select(Submission).where(Submission.phase_id == first.id,
                                                             Submission.user_id == participant.id))
    assert submission.status == "scored"
    assert active_score(submission).results["overall"]["accuracy"] == share_right(case.truth[0], guess)


def test_another_organizer_cannot_confirm_someone_elses_preview(ctx, client, login, csrf_token, make_organizer,
                                                                case) -> None:
    owner, other = make_organizer(), make_organizer()
    login(client, owner)
    fields = confirm_form(preview(client, csrf_token, case.data, slug="mine").get_data(as_text=True))
    thief = client.__class__(client.application, client.response_wrapper)
    login(thief, other)
    stolen = {**fields, "csrf_token": csrf_token(thief, UPLOAD), "slug": "stolen"}
    refused = thief.post(f"{UPLOAD}/confirm", data=stolen)
    assert refused.status_code == 400
    assert "not kept for you" in refused.get_data(as_text=True)
    assert count(ctx, Competition) == 0
    assert client.post(f"{UPLOAD}/confirm", data=fields).status_code == 303  # the owner still can
    assert [c.slug for c in ctx.session.scalars(select(Competition))] == ["mine"]


def test_participants_may_not_upload_bundles_and_a_foreign_zip_is_refused_with_its_reason(
        ctx, client, login, csrf_token, make_user, make_organizer) -> None:
    login(client, make_user())
    assert client.get(UPLOAD).status_code == 403
    login(client, make_organizer())
    refused = preview(client, csrf_token, b"PK not really a zip")
    assert refused.status_code == 400 and "not a competition bundle" in refused.get_data(as_text=True)
    assert count(ctx, Competition) == 0


def test_a_taken_slug_shows_the_preview_again_with_the_reason(ctx, client, login, csrf_token, make_organizer,
                                                              make_competition, case) -> None:
    make_competition("taken")
    login(client, make_organizer())
    page = preview(client, csrf_token, case.data, slug="taken").get_data(as_text=True)
    assert "the slug &#39;taken&#39; is taken; choose another before importing" in page
    refused = client.post(f"{UPLOAD}/confirm", data=confirm_form(page))
    assert refused.status_code == 400
    again = refused.get_data(as_text=True)
    assert "already exists" in again and "Create the competition" in again
    assert client.post(f"{UPLOAD}/confirm", data={**confirm_form(again), "slug": "free"}).status_code == 303
    assert sorted(ctx.session.scalars(select(Competition.slug))) == ["free", "taken"]
