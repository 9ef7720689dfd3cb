"""Entries on the web (docs/ENTRIES.md): the upload form's method and metadata, the max_methods refusal, quota used up,
teams (create, join with the code, leave), and final selection from the phase page's submission list."""

from __future__ import annotations

import io
import re
from typing import Any

import pytest
from sqlalchemy import select
from web_world import World, build_world, predictions

from leaderboard.accounts import OPERATOR
from leaderboard.entries import quota, rules, teams
from leaderboard.models import Submission, Team
from leaderboard.platform import ServiceContext

pytestmark = pytest.mark.backends("sqlite")


@pytest.fixture
def world(ctx: ServiceContext) -> World:
    """Return the shared test world."""
    return build_world(ctx)


def upload(client: Any, phase_id: int, data: bytes, *, token: str, **fields: str) -> Any:
    """Post a prediction file with form fields (method, meta_*) through the phase page's form."""
    form = {"file": (io.BytesIO(data), "preds.csv"), "csrf_token": token, **fields}
    return client.post(f"/phases/{phase_id}", data=form, content_type="multipart/form-data")


def latest(ctx: ServiceContext, user_id: int) -> Submission:
    """Return the user's newest submission, read afresh."""
    ctx.session.expire_all()
    return ctx.session.scalars(select(Submission).where(Submission.user_id == user_id)
                               .order_by(Submission.id.desc())).first()


def test_the_form_stores_the_method_and_the_metadata_read_by_type(world, client, login, csrf_token, ctx):
    login(client, world.bob)
    path = f"/phases/{world.open_phase.id}"
    response = upload(client, world.open_phase.id, predictions(), token=csrf_token(client, path), method=" CoT ",
                      meta_model="Llama-3-8B", meta_parameters_b="8", meta_open_weights="yes",
                      meta_uses_retrieval="no", meta_uses_knowledge_graph="", meta_prompting="chain-of-thought",
                      meta_url="https://example.org/paper", meta_notes="")
    assert response.status_code == 303
    sub = latest(ctx, world.bob.id)
    assert sub.method == "CoT"
    assert sub.entry_metadata == {"model": "Llama-3-8B", "parameters_b": 8, "open_weights": True,
                                  "uses_retrieval": False, "prompting": "chain-of-thought",
                                  "url": "https://example.org/paper"}


def test_the_form_offers_the_previous_methods_and_labels_every_metadata_field(world, client, login, csrf_token):
    login(client, world.bob)
    path = f"/phases/{world.open_phase.id}"
    upload(client, world.open_phase.id, predictions(), token=csrf_token(client, path), method="with KG")
    page = client.get(path).get_data(as_text=True)
    assert re.search(r'<datalist id="method-choices">.*<option value="default">.*<option value="with KG">', page)
    assert 'list="method-choices"' in page
    for label in ("Model", "Parameters (billions)", "Open weights", "Uses retrieval",
                  "Uses a knowledge graph", "Prompting", "Link (paper or code)", "Notes"):
        assert f">{label}</label>" in page
    assert "2 of 3" in page  # default and "with KG", of max_methods 3


def test_an_unknown_metadata_key_is_a_form_error_naming_it(world, client, login, csrf_token, ctx):
    login(client, world.bob)
    path = f"/phases/{world.open_phase.id}"
    before = quota.quota_status(ctx, phase=world.open_phase, user=world.bob).used_today
    response = upload(client, world.open_phase.id, predictions(), token=csrf_token(client, path),
                      meta_gpu_hours="12", meta_model="kept")
    page = response.get_data(as_text=True)
    assert response.status_code == 400
    assert "gpu_hours: not a metadata key" in page
    assert 'value="kept"' in page  # what was typed stays
    assert quota.quota_status(ctx, phase=world.open_phase, user=world.bob).used_today == before


def test_a_wrong_metadata_value_is_shown_on_its_field(world, client, login, csrf_token):
    login(client, world.bob)
    path = f"/phases/{world.open_phase.id}"
    response = upload(client, world.open_phase.id, predictions(), token=csrf_token(client, path),
                      meta_parameters_b="seven", meta_url="ftp://x.org")
    page = response.get_data(as_text=True)
    assert response.status_code == 400
    parameters = page[page.index('for="meta_parameters_b"'):page.index('for="meta_open_weights"')]
    assert "must be a number" in parameters
    assert "must be an http or https address" in page


def test_a_third_method_past_max_methods_2_is_refused_with_409_and_a_readable_message(world, client, login,
                                                                                       csrf_token, ctx):
    rules.update_entry_settings(ctx, phase_id=world.open_phase.id, actor=OPERATOR, max_methods=2)
    login(client, world.bob)  # bob's submission in the world is his "default" method
    path = f"/phases/{world.open_phase.id}"
    assert upload(client, world.open_phase.id, predictions(), token=csrf_token(client, path),
                  method="zero-shot").status_code == 303
    before = quota.quota_status(ctx, phase=world.open_phase, user=world.bob).used_today
    response = upload(client, world.open_phase.id, predictions(), token=csrf_token(client, path), method="cot",
                      meta_model="m")
    page = response.get_data(as_text=True)
    assert response.status_code == 409
    assert "This phase allows at most 2 methods per participant; you already have: default, zero-shot." in page
    assert "Nothing was stored or charged" in page
    assert 'value="cot"' in page and 'value="m"' in page  # nothing typed is lost
    assert quota.quota_status(ctx, phase=world.open_phase, user=world.bob).used_today == before
    assert latest(ctx, world.bob.id).method == "zero-shot"


def test_the_web_cap_message_names_the_methods(client, login, csrf_token, ctx, make_phase, make_user,
                                              make_predictions):
    phase, alice = make_phase(config={"task_type": "binary", "max_methods": 2}), make_user()
    login(client, alice)
    path = f"/phases/{phase.id}"
    for method in ("a", "b"):
        response = upload(client, phase.id, make_predictions(), token=csrf_token(client, path), method=method)
        assert response.status_code == 303
    response = upload(client, phase.id, make_predictions(), token=csrf_token(client, path), method="c")
    assert response.status_code == 409
    assert "This phase allows at most 2 methods per participant; you already have: a, b." in \
        response.get_data(as_text=True)


def test_with_the_quota_used_up_the_form_is_disabled_and_says_when_it_resets(world, client, login, csrf_token,
                                                                            ctx):
    from leaderboard.organizing import phases

    phases.update_phase(ctx, phase_id=world.open_phase.id, actor=OPERATOR, name=world.open_phase.name,
                        max_per_day=1, max_total=20, start_at=world.open_phase.start_at,
                        end_at=world.open_phase.end_at)
    login(client, world.bob)  # bob used one submission today in the world
    page = client.get(f"/phases/{world.open_phase.id}").get_data(as_text=True)
    assert re.search(r'<fieldset class="plain-fieldset"\s+disabled>', page)
    assert "You have used all of today’s submission" in page
    assert "You can submit again from" in page and "(midnight UTC)" in page


def test_a_fresh_account_sees_an_enabled_form(world, client, login, make_user):
    login(client, make_user())
    page = client.get(f"/phases/{world.open_phase.id}").get_data(as_text=True)
    assert '<fieldset class="plain-fieldset">' in page and "data-upload-progress" in page
    assert "upload.js" in page and "<progress" in page


# --- teams -----------------------------------------------------------------------------------------------

def test_create_a_team_then_a_teammate_joins_with_the_code(world, client, app, login, csrf_token, make_user, ctx):
    carol, dave = make_user(display_name="Carol"), make_user(display_name="Dave")
    login(client, carol)
    choose = f"/c/{world.comp_a.slug}/team"
    response = client.post(choose, data={"name": "Tail Lab", "csrf_token": csrf_token(client, choose)})
    assert response.status_code == 303
    team = ctx.session.scalar(select(Team).where(Team.name == "Tail Lab"))
    page = client.get(response.headers["Location"]).get_data(as_text=True)
    assert "Tail Lab" in page and team.invite_code in page and "Leave Tail Lab" in page

    other = app.test_client()
    login(other, dave)
    joined = other.post(f"{choose}/join", data={"invite_code": team.invite_code,
                                                "csrf_token": csrf_token(other, choose)})
    assert joined.status_code == 303
    page = other.get(joined.headers["Location"]).get_data(as_text=True)
    assert "Carol" in page and "Dave" in page
    assert other.get(choose).headers["Location"].endswith(f"/teams/{team.id}")  # in a team: go to it


def test_a_team_member_submits_for_the_team_and_teammates_share_the_list(world, client, app, login, csrf_token,
                                                                         make_user, ctx):
    carol, dave = make_user(display_name="Carol"), make_user(display_name="Dave")
    team = teams.create_team(ctx, competition_slug=world.comp_a.slug, name="Tail Lab", user=carol)
    teams.join_team(ctx, invite_code=team.invite_code, user=dave)
    login(client, carol)
    path = f"/phases/{world.open_phase.id}"
    page = client.get(path).get_data(as_text=True)
    assert "Submitting as team" in page and "Tail Lab" in page
    assert upload(client, world.open_phase.id, predictions(), token=csrf_token(client, path),
                  method="rag").status_code == 303
    assert latest(ctx, carol.id).team_id == team.id
    other = app.test_client()
    login(other, dave)
    listing = other.get(path).get_data(as_text=True)
    assert "Your team’s submissions" in listing and "Carol" in listing and "rag" in listing
    team_page = other.get(f"/teams/{team.id}").get_data(as_text=True)
    assert "rag" in team_page and "nobody can leave it" in team_page


def test_a_wrong_invite_code_is_a_form_error(world, client, login, csrf_token, make_user):
    login(client, make_user())
    choose = f"/c/{world.comp_a.slug}/team"
    response = client.post(f"{choose}/join", data={"invite_code": "nope", "csrf_token": csrf_token(client, choose)})
    assert response.status_code == 400 and "No team has this invite code" in response.get_data(as_text=True)


def test_joining_after_having_submitted_is_refused_with_a_reason(world, client, login, csrf_token, ctx, make_user):
    team = teams.create_team(ctx, competition_slug=world.comp_a.slug, name="Lab", user=make_user())
    login(client, world.bob)  # bob has submitted to this competition
    choose = f"/c/{world.comp_a.slug}/team"
    response = client.post(f"{choose}/join", data={"invite_code": team.invite_code,
                                                   "csrf_token": csrf_token(client, choose)})
    assert response.status_code == 400
    assert "already submitted to this competition on your own" in response.get_data(as_text=True)


def test_leave_a_team_before_its_first_submission(world, client, login, csrf_token, ctx, make_user):
    carol = make_user()
    team = teams.create_team(ctx, competition_slug=world.comp_a.slug, name="Lab", user=carol)
    login(client, carol)
    response = client.post(f"/teams/{team.id}/leave", data={"csrf_token": csrf_token(client, f"/teams/{team.id}")})
    assert response.status_code == 303 and response.headers["Location"].endswith(f"/c/{world.comp_a.slug}/team")
    assert "You left" in client.get(response.headers["Location"]).get_data(as_text=True)


def test_an_outsider_sees_the_members_but_not_the_code(world, client, login, ctx, make_user):
    team = teams.create_team(ctx, competition_slug=world.comp_a.slug, name="Lab", user=make_user(display_name="Eve"))
    login(client, world.bob)
    page = client.get(f"/teams/{team.id}").get_data(as_text=True)
    assert "Eve" in page and team.invite_code not in page and "Leave" not in page


def test_team_pages_need_a_login(world, client, ctx, make_user):
    team = teams.create_team(ctx, competition_slug=world.comp_a.slug, name="Lab", user=make_user())
    assert client.get(f"/teams/{team.id}").status_code in (302, 303)
    assert client.get(f"/c/{world.comp_a.slug}/team").status_code in (302, 303)


# --- final selection ------------------------------------------------------------------------------------

def test_select_and_unselect_from_the_submission_list(world, client, login, csrf_token, ctx):
    rules.update_entry_settings(ctx, phase_id=world.open_phase.id, actor=OPERATOR, final_selections=1)
    login(client, world.alice)
    path = f"/phases/{world.open_phase.id}"
    page = client.get(path).get_data(as_text=True)
    assert "Final selection: pick up to 1 submission" in page
    good = world.submission_ids["alice_good"]
    assert f'action="/submissions/{good}/select"' in page
    assert f'action="/submissions/{world.submission_ids["alice_bad"]}/select"' not in page  # rejected: no button
    response = client.post(f"/submissions/{good}/select", data={"csrf_token": csrf_token(client, path)})
    assert response.status_code == 303 and response.headers["Location"].endswith(f"{path}#history")
    assert ctx.session.get(Submission, good).selected is True
    page = client.get(path).get_data(as_text=True)
    assert "is now selected for the final ranking" in page and f'action="/submissions/{good}/unselect"' in page
    client.post(f"/submissions/{good}/unselect", data={"csrf_token": csrf_token(client, path)})
    ctx.session.expire_all()
    assert ctx.session.get(Submission, good).selected is False


def test_a_second_selection_past_k_is_refused_with_a_message(world, client, login, csrf_token, ctx):
    rules.update_entry_settings(ctx, phase_id=world.open_phase.id, actor=OPERATOR, final_selections=1)
    login(client, world.alice)
    path = f"/phases/{world.open_phase.id}"
    upload(client, world.open_phase.id, predictions(), token=csrf_token(client, path))
    second = latest(ctx, world.alice.id).id
    client.post(f"/submissions/{world.submission_ids['alice_good']}/select",
                data={"csrf_token": csrf_token(client, path)})
    response = client.post(f"/submissions/{second}/select", data={"csrf_token": csrf_token(client, path)})
    assert "allows 1 final selection" in client.get(response.headers["Location"]).get_data(as_text=True)
    ctx.session.expire_all()
    assert ctx.session.get(Submission, second).selected is False


def test_nobody_else_can_select_a_submission(world, client, login, csrf_token):
    login(client, world.bob)
    path = f"/phases/{world.open_phase.id}"
    response = client.post(f"/submissions/{world.submission_ids['alice_good']}/select",
                           data={"csrf_token": csrf_token(client, path)})
    assert response.status_code == 404


# --- the submission page ---------------------------------------------------------------------------------

def test_the_submission_page_shows_the_ranks_of_the_viewers_entries(world, client, login, csrf_token, ctx):
    login(client, world.bob)
    path = f"/phases/{world.open_phase.id}"
    response = upload(client, world.open_phase.id, predictions(), token=csrf_token(client, path), method="perfect",
                      meta_model="Oracle-1B", meta_open_weights="yes")
    page = client.get(response.headers["Location"]).get_data(as_text=True)
    assert "Your entries on the ranking" in page
    rows = re.findall(r'<th scope="row" class="method-name">([^<]+)</th>\s*<td class="num rank">(\d+|–)</td>', page)
    assert ("perfect", "1") in rows and ("default", "3") in rows  # alice's default is second
    assert 'class="current-entry"' in page and "this one" in page
    assert "Oracle-1B" in page and "method <span class=\"method-name\">perfect</span>" in page


def test_nobody_elses_ranks_appear_on_a_submission_page(world, client, login):
    login(client, world.org_a)  # manages the competition, has no entry
    page = client.get(f"/submissions/{world.submission_ids['bob_good']}").get_data(as_text=True)
    assert "entries on the ranking" not in page
