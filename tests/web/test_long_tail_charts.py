"""The long-tail charts on the pages (docs/LONG_TAIL.md): a submission's three charts and the ranking's curve overlay.

Each chart reads a JSON block (the CSP allows no inline script) holding only what the
result object shown to that viewer holds, and comes with a table. The overlay and its
JSON endpoint show ranked entries of the view only, each curve as visibility shows it
to participants; the attacks below try to read more through them.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

import pytest
from charts_world import answers, labels, upload

from leaderboard.accounts import OPERATOR
from leaderboard.operations.moderation import moderate
from leaderboard.submissions import visible_scores


def json_block(page: str, block_id: str) -> Any:
    """Return the JSON of a page's <script type="application/json" id=...> block."""
    found = re.search(rf'<script type="application/json" id="{block_id}">(.*?)</script>', page, re.S)
    assert found, f"no JSON block {block_id}"
    return json.loads(html.unescape(found.group(1)))


def inline_scripts(page: str) -> list[str]:
    """Return the page's <script> tags that are neither external nor a JSON data block."""
    tags = re.findall(r"<script\b[^>]*>", page)
    return [t for t in tags if "src=" not in t and 'type="application/json"' not in t]


def test_a_submission_page_draws_three_charts_from_its_shown_result_with_tables(
        ctx, client, make_phase, make_user, login) -> None:
    phase, alice = make_phase(labels=labels()), make_user()
    submission = upload(ctx, phase, alice, answers(1))
    login(client, alice)
    page = client.get(f"/submissions/{submission.id}").get_data(as_text=True)
    data = json_block(page, "charts-scores")
    shown = visible_scores(ctx, submission=submission, viewer=alice)
    assert [(b["lo"], b["hi"], b["accuracy"], b["ci"]) for b in data["popularity"]] == [
        (b["lo"], b["hi"], b["accuracy"], b["ci"]["accuracy"]) for b in shown["popularity_curve"]]
    assert len(data["popularity"]) == 10 and data["risk"] == shown["risk_coverage"]
    assert [(b["lo"], b["n"], b["accuracy"]) for b in data["reliability"]] == [
        (b["lo"], b["n"], b["accuracy"]) for b in shown["reliability"]]
    for kind in ("popularity", "risk", "reliability"):
        label = re.search(rf'<canvas data-chart="{kind}"[^>]*aria-label="([^"]+)"', page)
        assert label and len(label.group(1)) > 40, f"the {kind} chart has no text alternative"
    assert page.count('<tr><th scope="row" class="mono">') == 10 + len(data["reliability"])  # the tables
    assert "AURC" in page and "ECE" in page
    assert "vendor/chartjs/chart.umd.min.js" in page and "js/curves.js" in page
    assert inline_scripts(page) == [] and " style=" not in page


def test_a_file_without_confidences_gets_the_popularity_curve_only(ctx, client, make_phase, make_user, login) -> None:
    phase, alice = make_phase(labels=labels()), make_user()
    plain = b"\n".join(line.rsplit(b",", 1)[0] for line in answers(2).splitlines()) + b"\n"
    submission = upload(ctx, phase, alice, plain)
    login(client, alice)
    page = client.get(f"/submissions/{submission.id}").get_data(as_text=True)
    data = json_block(page, "charts-scores")
    assert data["popularity"] and data["risk"] == [] and data["reliability"] == []
    assert 'data-chart="risk"' not in page and 'data-chart="reliability"' not in page


def test_while_the_private_split_is_hidden_the_charts_show_public_bins_without_counts(
        ctx, client, make_phase, make_user, login) -> None:
    phase, alice = make_phase(labels=labels(private=True)), make_user()
    submission = upload(ctx, phase, alice, answers(3))
    login(client, alice)
    page = client.get(f"/submissions/{submission.id}").get_data(as_text=True)
    blocks = re.findall(r'<script type="application/json" id="(charts-[^"]+)">', page)
    assert blocks == ["charts-scores"]  # the public split's only; nothing of the private one
    data = json_block(page, "charts-scores")
    assert data["popularity"] and data["risk"] == [] and data["reliability"] == []  # they count public items
    assert '<td class="num">–</td>' in page  # the curve table's item counts are withheld


def _board(ctx: Any, make_phase: Any, make_user: Any, *, config: dict[str, Any] | None = None,
           private: bool = False, entries: int = 6, prefix: str = "Team") -> tuple[Any, list[Any], list[Any]]:
    """A phase with ``entries`` participants of decreasing skill; returns the phase, users and submissions."""
    phase = make_phase(labels=labels(private=private), config=config)
    users = [make_user(display_name=f"{prefix} {k}") for k in range(entries)]
    subs = [upload(ctx, phase, user, answers(10 + k, skill=1.0 - 0.08 * k)) for k, user in enumerate(users)]
    return phase, users, subs


def test_the_ranking_overlays_the_five_best_entries_with_a_table(ctx, client, make_phase, make_user) -> None:
    phase, _, subs = _board(ctx, make_phase, make_user)
    page = client.get(f"/phases/{phase.id}/leaderboard").get_data(as_text=True)
    data = json_block(page, "board-curves-data")
    best = json.loads(client.get(f"/api/v1/phases/{phase.id}/leaderboard").get_data(as_text=True))["rows"]
    assert [e["id"] for e in data["entries"]] == [r["submission_id"] for r in best if r["rank"] is not None][:5]
    assert all(len(e["bins"]) == 10 for e in data["entries"])
    table = page[page.index('id="board-curves-table"'):]
    table = table[:table.index("</table>")]
    assert table.count('<th scope="col" class="num">') == 5 and table.count('<th scope="row"') == 10
    assert 'data-chart="board"' in page and 'aria-label="Accuracy by popularity for 5 entries' in page
    assert inline_scripts(page) == []


def test_the_endpoint_draws_ticked_entries_of_the_view(ctx, client, make_phase, make_user) -> None:
    phase, _, subs = _board(ctx, make_phase, make_user)
    answer = client.get(f"/phases/{phase.id}/leaderboard/curves?submissions={subs[5].id},{subs[0].id}").get_json()
    assert [e["id"] for e in answer["entries"]] == [subs[5].id, subs[0].id]
    assert answer["entries"][0]["name"] == "Team 5"


def test_only_ranked_rows_of_the_view_can_be_drawn(ctx, client, make_phase, make_user, make_predictions) -> None:
    """Attack: ask the endpoint for submissions that are not on the ranking and read their curves."""
    phase, users, subs = _board(ctx, make_phase, make_user)
    worse = upload(ctx, phase, users[0], answers(99, skill=0.3))  # not Team 0's best: not its row
    other = _board(ctx, make_phase, make_user, entries=1, prefix="Other")[2][0]  # another phase's submission
    moderate(ctx, submission_id=subs[1].id, state="hidden", actor=OPERATOR)  # off the board
    asked = ",".join(str(s.id) for s in (worse, other, subs[1]))
    answer = client.get(f"/phases/{phase.id}/leaderboard/curves?submissions={asked}").get_json()
    assert answer["entries"] == []
    junk = client.get(f"/phases/{phase.id}/leaderboard/curves?submissions=x,-1,99999999999999999999").get_json()
    rows = client.get(f"/api/v1/phases/{phase.id}/leaderboard").get_json()["rows"]
    top = [r["submission_id"] for r in rows if r["rank"] is not None][:5]  # what an unusable ask falls back to
    assert [e["id"] for e in junk["entries"]] == top and subs[1].id not in top and worse.id not in top


def test_a_curve_bin_with_few_answered_items_is_never_drawn(ctx, client, make_phase, make_user) -> None:
    """Attack: answer one item of a bin (and 120 elsewhere) to read that item's correctness off the bin."""
    phase = make_phase(labels=labels())
    probe = {f"q{i:03d}" for i in range(150, 270)} | {"q005"}  # bin 1 (popularity 1..30) holds one answer
    attacker = make_user(display_name="Prober")
    submission = upload(ctx, phase, attacker, answers(7, only=probe))
    answer = client.get(f"/phases/{phase.id}/leaderboard/curves?submissions={submission.id}").get_json()
    (entry,) = answer["entries"]
    # only the four bins the file answers 30 items of; not popularity 1..30 (one answer), nor the unanswered ones
    assert [(b["lo"], b["hi"]) for b in entry["bins"]] == [(151, 180), (181, 210), (211, 240), (241, 270)]


def test_while_open_the_overlay_shows_the_public_split_as_participants_see_it(
        ctx, client, make_phase, make_user) -> None:
    phase, users, subs = _board(ctx, make_phase, make_user, private=True, entries=2)
    answer = client.get(f"/phases/{phase.id}/leaderboard/curves?submissions={subs[0].id}").get_json()
    shown = visible_scores(ctx, submission=subs[0], viewer=users[1])  # another participant's view of it
    (entry,) = answer["entries"]
    assert [(b["lo"], b["hi"], b["accuracy"], b["ci"]) for b in entry["bins"]] == [
        (b["lo"], b["hi"], b["accuracy"], b["ci"]["accuracy"]) for b in shown["popularity_curve"]]
    assert all("n" not in b for b in shown["popularity_curve"])  # no count of public items per bin
    assert set(entry["bins"][0]) == {"x", "lo", "hi", "accuracy", "ci", "digits"}


@pytest.mark.parametrize("feedback", ["ladder"])
def test_under_the_ladder_no_entry_curve_is_drawn(ctx, client, make_phase, make_user, feedback: str) -> None:
    phase, _, subs = _board(ctx, make_phase, make_user, config={"task_type": "binary", "public_feedback": feedback},
                            entries=2)
    page = client.get(f"/phases/{phase.id}/leaderboard").get_data(as_text=True)
    assert json_block(page, "board-curves-data") == {"entries": []}
    assert "show no curve until the phase closes" in page
    answer = client.get(f"/phases/{phase.id}/leaderboard/curves?submissions={subs[0].id}").get_json()
    assert answer == {"entries": []}


def test_a_hidden_ranking_refuses_the_curves_too(ctx, client, make_phase, make_user) -> None:
    phase, _, subs = _board(ctx, make_phase, make_user, entries=1)
    phase.leaderboard_visibility = "hidden"
    ctx.session.commit()
    response = client.get(f"/phases/{phase.id}/leaderboard/curves?submissions={subs[0].id}")
    assert response.status_code == 403 and b"bins" not in response.data


def test_a_confidence_bin_holding_one_answer_is_never_shown(ctx, client, make_phase, make_user, login) -> None:
    """Attack: put one answer alone in the lowest confidence bin to read its correctness off the reliability bin."""
    phase, alice = make_phase(labels=labels()), make_user()
    truth = {json.loads(line)["id"]: json.loads(line)["label"] for line in labels().decode().splitlines()}
    shown = []
    for lone_right in (True, False):
        rows = ["id,prediction,confidence"]
        for k, (item, label) in enumerate(truth.items()):
            if k == 0:  # the probed item, alone at confidence 0.05
                rows.append(f"{item},{str(label == lone_right).lower()},0.05")
            else:
                rows.append(f"{item},{str(label).lower() if k % 4 else str(not label).lower()},0.95")
        submission = upload(ctx, phase, alice, ("\n".join(rows) + "\n").encode())
        login(client, alice)
        page = client.get(f"/submissions/{submission.id}").get_data(as_text=True)
        api = client.get(f"/api/v1/submissions/{submission.id}").get_json()
        shown.append((json_block(page, "charts-scores")["reliability"], json.dumps(api, sort_keys=True)))
        assert [b["lo"] for b in shown[-1][0]] == [0.9]  # the lone answer's bin is left out
        assert '"lo": 0.0' not in shown[-1][1]
    # the bins shown do not depend on the probed item: the same bins, whose accuracies are fresh draws of one count
    assert [{k: v for k, v in b.items() if k != "accuracy"} for b in shown[0][0]] == [
        {k: v for k, v in b.items() if k != "accuracy"} for b in shown[1][0]]
