"""Entry pages and the comparison of two submissions (docs/RANKING.md#entry-pages): access, figures, McNemar."""

from __future__ import annotations

import io
import json
import math
import re

import pytest

from leaderboard.accounts import OPERATOR
from leaderboard.board import compare as compare_module
from leaderboard.board.compare import mcnemar
from leaderboard.operations.moderation import moderate
from leaderboard.organizing import phases
from leaderboard.submissions import accept_submission

CONFIG = {"task_type": "binary", "min_slice_items": 2}
N = 60


def labels(n: int = N) -> bytes:
    """Return a binary label file of n items, alternating labels, head and tail, two categories."""
    rows = [{"id": f"i{k:03d}", "label": "true" if k % 2 else "false", "category": "a" if k % 3 else "b",
             "popularity": "head" if k % 4 else "tail"} for k in range(n)]
    return ("\n".join(json.dumps(r) for r in rows) + "\n").encode()


def upload(ctx, phase, user, *, wrong=(), method="default", content=None):
    """Upload a file right on every item but the indexes in wrong."""
    content = content or _predictions(wrong)
    return accept_submission(ctx, phase_id=phase.id, user=user, filename="p.csv", stream=io.BytesIO(content),
                             method=method)


def _predictions(wrong) -> bytes:
    """Return a CSV right on every item of labels() but the indexes in wrong."""
    lines = ["id,prediction"]
    for k in range(N):
        truth = bool(k % 2)
        lines.append(f"i{k:03d},{str(truth != (k in wrong)).lower()}")
    return ("\n".join(lines) + "\n").encode()


# --- McNemar -------------------------------------------------------------------------------------------


def test_mcnemar_exact_for_few_discordant_items_matches_a_hand_computed_binomial():
    p, test = mcnemar(1, 9)  # 2 · P[Bin(10, 1/2) ≤ 1] = 2 · 11 / 1024
    assert test == "exact binomial"
    assert p == pytest.approx(22 / 1024)
    assert mcnemar(0, 0)[0] == 1.0 and mcnemar(3, 3)[0] == 1.0


def test_mcnemar_chi_square_with_continuity_correction_for_many_discordant_items():
    p, test = mcnemar(10, 30)  # (|10 − 30| − 1)² / 40 = 9.025 on one degree of freedom
    assert test == "chi-square with continuity correction"
    assert p == pytest.approx(math.erfc(math.sqrt(9.025 / 2)))
    assert p == pytest.approx(0.002663, abs=1e-6)


def test_mcnemar_agrees_with_scipy():
    stats = pytest.importorskip("scipy.stats")
    for b, c in [(0, 5), (2, 11), (7, 9), (12, 1)]:
        assert mcnemar(b, c)[0] == pytest.approx(min(1.0, stats.binomtest(b, b + c, 0.5).pvalue))
    for b, c in [(10, 30), (40, 22), (100, 90)]:
        chi = (abs(b - c) - 1) ** 2 / (b + c)
        assert mcnemar(b, c)[0] == pytest.approx(stats.chi2.sf(chi, 1))


# --- access ---------------------------------------------------------------------------------------------


def test_own_uploads_compare_before_close_without_significance(app, client, ctx, make_phase, make_user, login):
    phase = make_phase(labels=labels(), config=CONFIG)
    alice = make_user(display_name="alice")
    first, second = upload(ctx, phase, alice, wrong={1, 2, 3}), upload(ctx, phase, alice, wrong={1})
    login(client, alice)
    page = client.get(f"/compare?a={first.id}&b={second.id}")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert "significance-none" in html and "McNemar" not in html
    assert "0.9500" in html and "0.9833" in html and "−0.0333" in html  # the exact ranked figures and their difference


def test_another_participants_submission_cannot_be_compared_before_close(client, ctx, make_phase, make_user, login):
    phase = make_phase(labels=labels(), config=CONFIG)
    alice, bob = make_user(display_name="alice"), make_user(display_name="bob")
    mine, theirs = upload(ctx, phase, alice), upload(ctx, phase, bob, wrong={4})
    login(client, alice)
    assert client.get(f"/compare?a={mine.id}&b={theirs.id}").status_code == 404
    client.get("/logout")
    assert client.get(f"/compare?a={mine.id}&b={theirs.id}").status_code == 404


def test_public_bests_compare_after_close_with_mcnemar(client, ctx, make_phase, make_user):
    phase = make_phase(labels=labels(), config=CONFIG)
    wrong_a = set(range(0, 30, 2)) | {1}  # 16 wrong
    wrong_b = {1, 3, 5}
    a = upload(ctx, phase, make_user(display_name="alice"), wrong=wrong_a)
    b = upload(ctx, phase, make_user(display_name="bob"), wrong=wrong_b)
    assert client.get(f"/compare?a={a.id}&b={b.id}").status_code == 404  # open: not public to anyone
    phases.close_phase(ctx, actor=OPERATOR, phase_id=phase.id)
    ctx.session.commit()
    found = compare_module.compare(ctx, a_id=a.id, b_id=b.id, viewer=None)
    disc_b, disc_c = len(wrong_b - wrong_a), len(wrong_a - wrong_b)  # right in a only, right in b only
    expected, test = mcnemar(disc_b, disc_c)
    assert found.significance is not None and found.significance.test == test == "exact binomial"
    assert found.significance.p_value == pytest.approx(expected, abs=1e-4)
    assert found.significance.band == "p < 0.01"  # b = 2, c = 15: p = 2 · 154 / 131072
    html = client.get(f"/compare?a={a.id}&b={b.id}").get_data(as_text=True)
    assert "McNemar" in html and "p &lt; 0.01" in html


def test_under_the_ladder_own_uploads_are_compared_only_after_close(client, ctx, make_phase, make_user, login):
    phase = make_phase(labels=labels(), config={**CONFIG, "public_feedback": "ladder"})
    alice = make_user()
    first, second = upload(ctx, phase, alice, wrong={1, 2}), upload(ctx, phase, alice, wrong={1})
    login(client, alice)
    assert client.get(f"/compare?a={first.id}&b={second.id}").status_code == 403


# --- entry pages ------------------------------------------------------------------------------------------


def entry_links(html: str) -> list[str]:
    """Return the entry page links of a ranking page."""
    return re.findall(r'<a class="entry-page" href="([^"]+)"', html)


def test_ranking_rows_link_to_entry_pages_with_history(client, ctx, make_phase, make_user):
    phase = make_phase(labels=labels(), config=CONFIG)
    alice = make_user(display_name="alice")
    upload(ctx, phase, alice, wrong={1, 2, 3}, method="zero-shot/v2")
    upload(ctx, phase, alice, wrong={1, 2, 3, 4}, method="zero-shot/v2")  # worse: not a new best
    upload(ctx, phase, alice, wrong={1}, method="zero-shot/v2")
    links = entry_links(client.get(f"/phases/{phase.id}/leaderboard").get_data(as_text=True))
    mine = f"/phases/{phase.id}/entries/user:{alice.id}:zero-shot%2Fv2"
    assert mine in links and len(links) == len(set(links)) > 1  # the built-in baselines are entries too
    assert all(client.get(link).status_code == 200 for link in links)
    page = client.get(mine)
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert "zero-shot/v2" in html and "0.9500" in html and "0.9833" in html
    assert "0.9333" not in html  # the worse upload never improved the best
    assert html.count("<tr") == 1 + 2  # header + two bests
    assert "shown once the phase closes" in html and "charts-entry" not in html
    phases.close_phase(ctx, actor=OPERATOR, phase_id=phase.id)
    ctx.session.commit()
    html = client.get(mine).get_data(as_text=True)
    assert "shown once the phase closes" not in html  # after close: the charts anyone may see (none at 60 items)


def test_moderated_entry_and_hidden_board_have_no_entry_page(client, ctx, make_phase, make_competition, make_user):
    phase = make_phase(labels=labels(), config=CONFIG)
    alice = make_user()
    sub = upload(ctx, phase, alice)
    path = f"/phases/{phase.id}/entries/user:{alice.id}:default"
    assert client.get(path).status_code == 200
    moderate(ctx, submission_id=sub.id, state="hidden", actor=OPERATOR)
    ctx.session.commit()
    assert client.get(path).status_code == 404
    hidden = make_phase(make_competition(), labels=labels(), config=CONFIG, leaderboard_visibility="hidden")
    bob = make_user()
    upload(ctx, hidden, bob)
    assert client.get(f"/phases/{hidden.id}/entries/user:{bob.id}:default").status_code == 404
    assert client.get(f"/phases/{phase.id}/entries/user:999:default").status_code == 404


def test_own_submission_page_links_to_the_comparison_with_each_ranked_entry(client, ctx, make_phase, make_user,
                                                                            login):
    phase = make_phase(labels=labels(), config=CONFIG)
    alice = make_user()
    ranked = upload(ctx, phase, alice, wrong={1}, method="a")
    other = upload(ctx, phase, alice, wrong={1, 2}, method="b")
    login(client, alice)
    html = client.get(f"/submissions/{other.id}").get_data(as_text=True)
    link = re.search(r'<a class="compare-link" href="([^"]+)"', html)
    assert link and link.group(1).replace("&amp;", "&") == f"/compare?a={other.id}&b={ranked.id}"
    assert client.get(link.group(1).replace("&amp;", "&")).status_code == 200


def test_a_moderated_submission_is_not_compared_by_others_after_close(client, ctx, make_phase, make_user):
    phase = make_phase(labels=labels(), config=CONFIG)
    a = upload(ctx, phase, make_user(), wrong={1})
    b = upload(ctx, phase, make_user(), wrong={2, 3})
    phases.close_phase(ctx, actor=OPERATOR, phase_id=phase.id)
    ctx.session.commit()
    assert client.get(f"/compare?a={a.id}&b={b.id}").status_code == 200
    moderate(ctx, submission_id=b.id, state="hidden", actor=OPERATOR)
    ctx.session.commit()
    assert client.get(f"/compare?a={a.id}&b={b.id}").status_code == 404


def test_under_the_ladder_the_entry_history_is_the_released_row_alone(client, ctx, make_phase, make_user):
    phase = make_phase(labels=labels(), config={**CONFIG, "public_feedback": "ladder"})
    alice = make_user()
    upload(ctx, phase, alice, wrong={1, 2, 3, 4, 5, 6})  # 0.9000
    upload(ctx, phase, alice, wrong={1})  # 0.9833: within a step of the released best, held
    html = client.get(f"/phases/{phase.id}/entries/user:{alice.id}:default").get_data(as_text=True)
    history = html.split('class="table compact entry-history"')[1].split("</table>")[0]
    assert history.count("<tr") == 2  # header and the released row
    assert "0.9833" not in html and "0.9000" not in html  # exact figures never shown under the ladder
