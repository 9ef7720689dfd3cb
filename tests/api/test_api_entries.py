"""Entries over the API (docs/ENTRIES.md): method, metadata, max_methods, teams, final selection, baselines."""

from __future__ import annotations

import io
import json

import pytest
from api_helpers import create_phase, make_labels, predictions

from leaderboard.accounts import OPERATOR
from leaderboard.entries import rules


def send(client, caller, phase_id, content=None, **fields):
    """POST a prediction file with extra multipart fields; closing the response runs scoring."""
    data = {"file": (io.BytesIO(content or predictions()), "p.csv"), **fields}
    response = client.post(f"/api/v1/phases/{phase_id}/submissions", data=data, headers=caller.headers)
    response.close()
    return response


def set_entry_settings(app, phase_id, **changes):
    """Change a phase's entry settings as the operator."""
    runtime = app.extensions["tailboard"]
    with runtime.sessions() as session:
        rules.update_entry_settings(runtime.context(session), phase_id=phase_id, actor=OPERATOR, **changes)


def quota_used(client, caller, phase_id) -> int:
    """Return how many submissions the caller (or their team) was charged today."""
    return client.get(f"/api/v1/phases/{phase_id}", headers=caller.headers).get_json()["quota"]["used_today"]


# --- method and metadata ----------------------------------------------------------------------------------

def test_an_upload_carries_its_method_and_metadata(client, users, phase_id):
    meta = {"model": "Llama-3-8B", "parameters_b": 8, "open_weights": True, "uses_retrieval": False,
            "uses_knowledge_graph": True, "prompting": "few-shot", "url": "https://example.org", "notes": "n"}
    response = send(client, users["alice"], phase_id, method="few-shot + KG", metadata=json.dumps(meta))
    assert response.status_code == 202
    body = client.get(response.get_json()["url"], headers=users["alice"].headers).get_json()
    assert (body["method"], body["metadata"], body["team"], body["selected"]) == ("few-shot + KG", meta, None, False)


def test_without_a_method_the_entry_is_default(client, users, phase_id):
    body = client.get(send(client, users["alice"], phase_id).get_json()["url"], headers=users["alice"].headers)
    assert (body.get_json()["method"], body.get_json()["metadata"]) == ("default", None)


def test_metadata_with_an_unknown_key_is_a_400_naming_it_and_costs_nothing(client, users, phase_id):
    response = send(client, users["alice"], phase_id, metadata=json.dumps({"model": "m", "gpu_hours": 12}))
    assert response.status_code == 400
    body = response.get_json()
    assert "gpu_hours" in body["error"]
    assert body["details"][0]["field"] == "metadata.gpu_hours"
    assert quota_used(client, users["alice"], phase_id) == 0


@pytest.mark.parametrize(("metadata", "named"), [
    ('{"parameters_b": -3}', "parameters_b"), ('{"open_weights": "yes"}', "open_weights"),
    ('{"prompting": "magic"}', "prompting"), ('{"url": "file:///etc/passwd"}', "url"),
    ('{"notes": "' + "x" * 501 + '"}', "notes"), ("[1]", "metadata"), ("{not json", "metadata"),
])
def test_wrong_metadata_is_a_400_naming_the_key(client, users, phase_id, metadata, named):
    response = send(client, users["alice"], phase_id, metadata=metadata)
    assert response.status_code == 400 and named in response.get_json()["error"]


def test_a_method_over_80_characters_is_a_400_naming_method(client, users, phase_id):
    response = send(client, users["alice"], phase_id, method="m" * 81)
    assert response.status_code == 400 and "method" in response.get_json()["error"]


def test_a_third_method_past_max_methods_2_is_409_with_a_readable_message(app, client, users, phase_id):
    set_entry_settings(app, phase_id, max_methods=2)
    assert send(client, users["alice"], phase_id, method="zero-shot").status_code == 202
    assert send(client, users["alice"], phase_id, method="few-shot").status_code == 202
    refused = send(client, users["alice"], phase_id, method="cot")
    assert refused.status_code == 409
    assert refused.get_json()["error"].startswith(
        "This phase allows at most 2 methods per participant; you already have: zero-shot, few-shot.")
    assert refused.get_json()["details"] == {"max_methods": 2, "methods": ["zero-shot", "few-shot"]}
    assert quota_used(client, users["alice"], phase_id) == 2
    assert send(client, users["alice"], phase_id, method="few-shot").status_code == 202


def test_two_methods_of_one_participant_are_two_entries(client, users, phase_id):
    first = send(client, users["alice"], phase_id, method="a").get_json()["id"]
    second = send(client, users["alice"], phase_id, predictions(wrong=2), method="b").get_json()["id"]
    keys = {(body["team"] or "alice", body["method"]) for body in (
        client.get(f"/api/v1/submissions/{i}", headers=users["alice"].headers).get_json() for i in (first, second))}
    assert keys == {("alice", "a"), ("alice", "b")}


# --- teams ---------------------------------------------------------------------------------------------------

def make_team(client, caller, slug="demo", name="Tail Lab"):
    """Create a team through the API and return its body."""
    response = client.post(f"/api/v1/competitions/{slug}/teams", json={"name": name}, headers=caller.headers)
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def test_create_join_read_and_leave_a_team(client, users, phase_id):
    team = make_team(client, users["alice"])
    assert team["invite_code"] and [m["display_name"] for m in team["members"]] == ["Alice"]
    assert team["url"].endswith(f"/teams/{team['id']}") and team["can_leave"] is True
    joined = client.post("/api/v1/teams/join", json={"invite_code": team["invite_code"]},
                         headers=users["bob"].headers)
    assert joined.status_code == 200 and [m["display_name"] for m in joined.get_json()["members"]] == ["Alice", "Bob"]
    left = client.post(f"/api/v1/teams/{team['id']}/leave", headers=users["bob"].headers)
    assert left.status_code == 200 and left.get_json() == {"id": team["id"], "left": True}
    read = client.get(f"/api/v1/teams/{team['id']}", headers=users["bob"].headers).get_json()
    assert [m["display_name"] for m in read["members"]] == ["Alice"]
    assert read["invite_code"] is None and read["entries"] is None  # bob is an outsider now


def test_members_share_the_quota_and_their_uploads_are_the_teams(client, users):
    phase = create_phase(client, users["organizer"], max_per_day=2)
    team = make_team(client, users["alice"])
    client.post("/api/v1/teams/join", json={"invite_code": team["invite_code"]}, headers=users["bob"].headers)
    assert send(client, users["alice"], phase, method="rag").status_code == 202
    assert send(client, users["bob"], phase, method="rag").status_code == 202
    over = send(client, users["bob"], phase)
    assert over.status_code == 429 and "Your team has used all 2" in over.get_json()["error"]
    assert quota_used(client, users["alice"], phase) == 2
    read = client.get(f"/api/v1/teams/{team['id']}", headers=users["bob"].headers).get_json()
    assert [(e["phase_id"], e["method"], e["submissions"]) for e in read["entries"]] == [(phase, "rag", 2)]
    assert read["can_leave"] is False
    refused = client.post(f"/api/v1/teams/{team['id']}/leave", headers=users["bob"].headers)
    assert refused.status_code == 409 and "already submitted" in refused.get_json()["error"]


def test_joining_after_having_submitted_is_409(client, users, phase_id):
    team = make_team(client, users["alice"])
    send(client, users["bob"], phase_id)
    refused = client.post("/api/v1/teams/join", json={"invite_code": team["invite_code"]},
                          headers=users["bob"].headers)
    assert refused.status_code == 409 and "already submitted to this competition" in refused.get_json()["error"]


def test_one_team_per_user_per_competition_and_unique_names(client, users, phase_id):
    make_team(client, users["alice"])
    again = client.post("/api/v1/competitions/demo/teams", json={"name": "Other"}, headers=users["alice"].headers)
    assert again.status_code == 409
    taken = client.post("/api/v1/competitions/demo/teams", json={"name": "Tail Lab"}, headers=users["bob"].headers)
    assert taken.status_code == 409


def test_team_calls_need_a_token_and_valid_input(client, users, phase_id):
    assert client.post("/api/v1/competitions/demo/teams", json={"name": "X Lab"}).status_code == 401
    assert client.post("/api/v1/competitions/demo/teams", json={"name": "X"},
                       headers=users["alice"].headers).status_code == 400
    assert client.post("/api/v1/competitions/nope/teams", json={"name": "X Lab"},
                       headers=users["alice"].headers).status_code == 404
    assert client.post("/api/v1/teams/join", json={"invite_code": "wrong"},
                       headers=users["alice"].headers).status_code == 404
    assert client.get("/api/v1/teams/999", headers=users["alice"].headers).status_code == 404


# --- final selection ------------------------------------------------------------------------------------

def test_with_final_selections_1_the_selection_is_stored_and_enforced(app, client, users, phase_id):
    set_entry_settings(app, phase_id, final_selections=1)
    first = send(client, users["alice"], phase_id).get_json()["id"]
    second = send(client, users["alice"], phase_id, predictions(wrong=4)).get_json()["id"]
    chosen = client.post(f"/api/v1/submissions/{second}/select", headers=users["alice"].headers)
    assert chosen.status_code == 200
    assert chosen.get_json() == {"id": second, "selected": True, "selected_ids": [second], "final_selections": 1}
    refused = client.post(f"/api/v1/submissions/{first}/select", headers=users["alice"].headers)
    assert refused.status_code == 409 and "allows 1 final selection" in refused.get_json()["error"]
    assert client.get(f"/api/v1/submissions/{second}", headers=users["alice"].headers).get_json()["selected"]
    assert client.post(f"/api/v1/submissions/{second}/unselect", headers=users["alice"].headers).get_json()[
        "selected_ids"] == []
    assert client.post(f"/api/v1/submissions/{first}/select", headers=users["alice"].headers).status_code == 200


def test_selection_is_refused_when_closed_and_to_strangers(app, client, users, phase_id):
    set_entry_settings(app, phase_id, final_selections=2)
    mine = send(client, users["alice"], phase_id).get_json()["id"]
    assert client.post(f"/api/v1/submissions/{mine}/select", headers=users["bob"].headers).status_code == 404
    assert client.post(f"/api/v1/submissions/{mine}/select").status_code == 401
    client.post(f"/api/v1/phases/{phase_id}/close", headers=users["organizer"].headers)
    closed = client.post(f"/api/v1/submissions/{mine}/select", headers=users["alice"].headers)
    assert closed.status_code == 409 and "only while the phase is open" in closed.get_json()["error"]


def test_a_teammate_selects_for_the_team(app, client, users, phase_id):
    set_entry_settings(app, phase_id, final_selections=1)
    team = make_team(client, users["alice"])
    client.post("/api/v1/teams/join", json={"invite_code": team["invite_code"]}, headers=users["bob"].headers)
    alices = send(client, users["alice"], phase_id).get_json()["id"]
    bobs = send(client, users["bob"], phase_id).get_json()["id"]
    assert client.post(f"/api/v1/submissions/{alices}/select", headers=users["bob"].headers).status_code == 200
    refused = client.post(f"/api/v1/submissions/{bobs}/select", headers=users["alice"].headers)
    assert refused.status_code == 409 and "your team has selected" in refused.get_json()["error"]


# --- baselines ----------------------------------------------------------------------------------------

def test_an_organizer_adds_a_baseline_with_metadata(client, users, phase_id):
    response = client.post(f"/api/v1/phases/{phase_id}/baselines", headers=users["organizer"].headers, data={
        "file": (io.BytesIO(predictions(wrong=3)), "gpt.csv"), "name": "GPT-4o zero-shot",
        "metadata": json.dumps({"model": "GPT-4o", "open_weights": False, "prompting": "zero-shot"})})
    response.close()
    assert response.status_code == 201, response.get_json()
    body = response.get_json()
    assert body["name"] == "GPT-4o zero-shot"
    assert body["metadata"] == {"model": "GPT-4o", "open_weights": False, "prompting": "zero-shot"}
    shown = client.get(body["url"], headers=users["organizer"].headers).get_json()
    assert shown["status"] == "scored" and shown["metadata"]["model"] == "GPT-4o"


def test_baselines_are_for_managers_and_checked_like_uploads(client, users, phase_id):
    def add(caller, **fields):
        data = {"file": (io.BytesIO(predictions()), "b.csv"), "name": "Human", **fields}
        return client.post(f"/api/v1/phases/{phase_id}/baselines", headers=caller.headers, data=data)

    assert add(users["alice"]).status_code == 403
    assert add(users["anonymous"]).status_code == 401
    unknown = add(users["organizer"], metadata='{"gpu": 1}')
    assert unknown.status_code == 400 and "gpu" in unknown.get_json()["error"]
    bad_file = client.post(f"/api/v1/phases/{phase_id}/baselines", headers=users["organizer"].headers,
                           data={"file": (io.BytesIO(b"id,prediction\nq0,maybe\n"), "b.csv"), "name": "Broken"})
    assert bad_file.status_code == 400 and bad_file.get_json()["details"]["error_count"] >= 1
    assert add(users["organizer"]).status_code == 201
    assert add(users["organizer"]).status_code == 409  # the name is taken


def test_labels_stay_out_of_every_entries_answer(client, users, phase_id):
    team = make_team(client, users["alice"])
    texts = [json.dumps(team), send(client, users["alice"], phase_id, metadata='{"gpu": 1}').get_data(as_text=True)]
    labels = make_labels().decode()
    assert all('"label"' not in text and labels not in text for text in texts)


# --- settings --------------------------------------------------------------------------------------------

def test_entry_settings_are_set_at_creation_and_edited_like_the_probing_settings(client, users):
    phase = create_phase(client, users["organizer"], max_methods="2", final_selections="1")
    shown = client.get(f"/api/v1/phases/{phase}").get_json()
    assert shown["entries"] == {"max_methods": 2, "final_selections": 1}
    changed = client.post(f"/api/v1/phases/{phase}/settings", json={"max_methods": 5, "final_selections": None},
                          headers=users["organizer"].headers)
    assert changed.status_code == 200 and changed.get_json()["entries"] == {"max_methods": 5, "final_selections": None}
    assert client.post(f"/api/v1/phases/{phase}/settings", json={"max_methods": 0},
                       headers=users["organizer"].headers).status_code == 400
    assert client.post(f"/api/v1/phases/{phase}/settings", json={"max_methods": 2},
                       headers=users["alice"].headers).status_code == 403


def test_a_phase_without_entry_settings_has_the_defaults(client, phase_id):
    assert client.get(f"/api/v1/phases/{phase_id}").get_json()["entries"] == {"max_methods": 3,
                                                                             "final_selections": None}
