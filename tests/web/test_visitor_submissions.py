"""A ranked entry's submission page is public after close (docs/RANKING.md#ranked-submissions-after-close)."""

from __future__ import annotations

import html as html_text
import io
import json
import re

from charts_world import answers, labels

from leaderboard.accounts import OPERATOR
from leaderboard.operations.moderation import moderate
from leaderboard.organizing import phases
from leaderboard.submissions import accept_submission, visible_scores


def upload(ctx, phase, user, seed: int, *, skill: float = 0.8):
    """Upload a charts-world file with confidences under a file name no visitor may read."""
    return accept_submission(ctx, phase_id=phase.id, user=user, filename="secret-name.csv",
                             stream=io.BytesIO(answers(seed, skill=skill)))


def close(ctx, phase) -> None:
    """Close the phase."""
    phases.close_phase(ctx, actor=OPERATOR, phase_id=phase.id)
    ctx.session.commit()


def json_block(page: str, block_id: str):
    """Return the JSON of a page's <script type="application/json" id=...> block."""
    found = re.search(rf'<script type="application/json" id="{block_id}">(.*?)</script>', page, re.S)
    assert found, f"no JSON block {block_id}"
    return json.loads(html_text.unescape(found.group(1)))


def visitor_get(client, url: str):
    """Return the response an anonymous visitor gets (no redirect followed)."""
    client.get("/logout")
    return client.get(url)


def test_visitor_reads_the_ranked_submission_after_close_with_charts(client, ctx, make_phase, make_user):
    phase = make_phase(labels=labels())
    alice = make_user(email="alice@example.org", display_name="alice")
    older = upload(ctx, phase, alice, 1, skill=0.5)
    best = upload(ctx, phase, alice, 2, skill=0.9)
    before = visitor_get(client, f"/submissions/{best.id}")
    assert before.status_code == 302 and "/login" in before.headers["Location"]  # open: log in
    close(ctx, phase)
    page = visitor_get(client, f"/submissions/{best.id}")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert "Risk versus coverage" in html and "Calibration" in html and 'data-chart="reliability"' in html
    assert "visitor-note" in html and f"/phases/{phase.id}/entries/user:{alice.id}:default" in html
    assert "secret-name.csv" not in html and "alice@example.org" not in html and best.file_sha256[:12] not in html
    assert not [line for line in labels().splitlines() if line.decode() in html]
    assert not re.search(r"q\d{3}", html)  # no item id, so no per-item data
    shown = visible_scores(ctx, submission=best, viewer=None)  # what any non-owner may see of the result
    data = json_block(html, "charts-scores")
    assert data["risk"] == shown["risk_coverage"] and data["risk"]
    assert [b["accuracy"] for b in data["reliability"]] == [b["accuracy"] for b in shown["reliability"]]
    not_ranked = visitor_get(client, f"/submissions/{older.id}")
    assert not_ranked.status_code == 302 and "/login" in not_ranked.headers["Location"]


def test_logged_in_stranger_reads_the_ranked_one_and_gets_404_for_the_others(client, ctx, make_phase, make_user,
                                                                              login):
    phase = make_phase(labels=labels())
    alice, bob = make_user(display_name="alice"), make_user(display_name="bob")
    older, best = upload(ctx, phase, alice, 1, skill=0.5), upload(ctx, phase, alice, 2, skill=0.9)
    login(client, bob)
    assert client.get(f"/submissions/{best.id}").status_code == 404  # open: another's submission is not found
    close(ctx, phase)
    assert client.get(f"/submissions/{best.id}").status_code == 200
    assert client.get(f"/submissions/{older.id}").status_code == 404


def test_moderated_or_hidden_board_submissions_stay_private(client, ctx, make_phase, make_user):
    phase = make_phase(labels=labels())
    alice, bob = make_user(display_name="alice"), make_user(display_name="bob")
    a, b = upload(ctx, phase, alice, 2, skill=0.9), upload(ctx, phase, bob, 3)
    moderate(ctx, submission_id=b.id, state="hidden", actor=OPERATOR)
    ctx.session.commit()
    close(ctx, phase)
    assert visitor_get(client, f"/submissions/{a.id}").status_code == 200
    assert visitor_get(client, f"/submissions/{b.id}").status_code == 302
    hidden = make_phase(labels=labels(), leaderboard_visibility="hidden", name="Phase 2")
    c = upload(ctx, hidden, alice, 4)
    close(ctx, hidden)
    assert visitor_get(client, f"/submissions/{c.id}").status_code == 302
