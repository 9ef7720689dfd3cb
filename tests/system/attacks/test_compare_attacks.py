"""Comparing two of one's own uploads before close (docs/PROBING.md#comparing-two-submissions): no per-item oracle.

The attacker uploads a reference file answering yes everywhere and the same file with k
chosen items flipped to no, then opens /compare of the two before the phase closes. The
two exact ranked figures (public-split accuracy) give b − c, the public targets labelled
yes minus those labelled no; McNemar's p on the public items would add b + c, how many of
the k targets are public: split membership (and with b − c, both label counts), which no
figure shown before close may tell. Defended: the page shows no significance before close.
Twin: with ``compare.SIGNIFICANCE_BEFORE_CLOSE`` on, the same reading decodes b and c.
"""

from __future__ import annotations

import io
import json
import re

from leaderboard.board import BoardQuery, rank, ranking
from leaderboard.board import compare as compare_module
from leaderboard.board.compare import mcnemar
from leaderboard.submissions import accept_submission

N = 60
TARGETS = [k for k in range(N) if k % 5 in (0, 1)][:20]  # the attacker's k = 20 flipped items


def split_of(k: int) -> str:
    """Return an item's split (a third private): the attacker does not know it."""
    return "private" if k % 3 == 0 else "public"


def label_of(k: int) -> bool:
    """Return an item's label: the attacker does not know it."""
    return k % 7 not in (0, 3)


def labels() -> bytes:
    """Return the label file of the attacked phase: N binary items, a hidden private split."""
    rows = [{"id": f"i{k:03d}", "label": str(label_of(k)).lower(), "category": "a" if k % 2 else "b",
             "popularity": "head" if k % 4 else "tail", "split": split_of(k)} for k in range(N)]
    return ("\n".join(json.dumps(r) for r in rows) + "\n").encode()


def answers(flipped: set[int]) -> bytes:
    """Return a CSV answering yes everywhere but no on the flipped items."""
    lines = ["id,prediction"] + [f"i{k:03d},{'false' if k in flipped else 'true'}" for k in range(N)]
    return ("\n".join(lines) + "\n").encode()


def attack(ctx, client, make_phase, make_user, login) -> tuple[str, float, float]:
    """Upload the reference and the flipped file, open their comparison; return the page and both ranked figures."""
    phase = make_phase(labels=labels(), private=True, config={"task_type": "binary"})
    attacker = make_user()
    subs = [accept_submission(ctx, phase_id=phase.id, user=attacker, filename="p.csv", stream=io.BytesIO(content))
            for content in (answers(set()), answers(set(TARGETS)))]
    login(client, attacker)
    response = client.get(f"/compare?a={subs[0].id}&b={subs[1].id}")
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    ranked = re.search(r'<tr class="ranked-line"><th scope="row">[^<]*<span class="tag">ranked</span></th>\s*'
                       r'<td class="num">([0-9.]+)[^<]*(?:<span class="ci">[^<]*</span>)?</td>'
                       r'<td class="num">([0-9.]+)', html)
    assert ranked, "the exact ranked figures are on the page"
    return html, float(ranked.group(1)), float(ranked.group(2))


def truth() -> tuple[int, int]:
    """Return the discordant counts on public targets: b (labelled yes: only the reference right), c (no)."""
    public = [k for k in TARGETS if split_of(k) == "public"]
    return sum(label_of(k) for k in public), sum(not label_of(k) for k in public)


def decode(difference: int, p_text: str) -> list[tuple[int, int]]:
    """Return every (b, c) with b − c = difference, b + c ≤ k, whose McNemar p prints as p_text."""
    out = []
    for total in range(abs(difference), len(TARGETS) + 1, 2):
        b, c = (total + difference) // 2, (total - difference) // 2
        if f"{round(mcnemar(b, c)[0], 4):.4f}" == p_text:
            out.append((b, c))
    return out


def test_comparing_own_uploads_before_close_reads_no_split_membership(ctx, client, make_phase, make_user, login):
    html, reference, flipped = attack(ctx, client, make_phase, make_user, login)
    n_public = sum(split_of(k) == "public" for k in range(N))  # public structure (docs/PROBING.md)
    difference = round((reference - flipped) * n_public)
    assert difference == truth()[0] - truth()[1]  # b − c: what the two exact ranked figures tell, as documented
    assert "McNemar" not in html and "p = " not in html and "significance-none" in html
    hypotheses = [(b, b - difference) for b in range(len(TARGETS) + 1) if b - difference >= 0 and
                  2 * b - difference <= len(TARGETS)]
    assert len(hypotheses) > 3  # the figures alone leave the public count of the targets open


def test_twin_significance_before_close_decodes_b_and_c(ctx, client, make_phase, make_user, login, monkeypatch):
    monkeypatch.setattr(compare_module, "SIGNIFICANCE_BEFORE_CLOSE", True)
    html, reference, flipped = attack(ctx, client, make_phase, make_user, login)
    n_public = sum(split_of(k) == "public" for k in range(N))
    difference = round((reference - flipped) * n_public)
    found = re.search(r"p = ([0-9.]+)", html)
    assert found, "the twin shows McNemar's p before close"
    decoded = decode(difference, found.group(1))
    assert decoded == [truth()]  # b and c, hence how many targets are public and both label counts
    assert sum(truth()) < len(TARGETS)  # some targets are private: membership was read


def board_attack(ctx, make_phase, make_user) -> tuple[float | None, int]:
    """Upload the two files as methods ``ref`` and ``flip`` of one participant; return the flip row's p and b − c."""
    phase = make_phase(labels=labels(), private=True, config={"task_type": "binary"})
    attacker = make_user()
    for method, content in (("ref", answers(set())), ("flip", answers(set(TARGETS)))):
        accept_submission(ctx, phase_id=phase.id, user=attacker, filename="p.csv", stream=io.BytesIO(content),
                          method=method)
    ctx.session.expire_all()
    rows = {r.method: r for r in ranking.leaderboard(ctx, phase_id=phase.id, query=BoardQuery()).rows}
    n_public = sum(split_of(k) == "public" for k in range(N))
    return rows["flip"].p_vs_previous, round((rows["ref"].value - rows["flip"].value) * n_public)


def test_the_boards_p_value_reads_no_split_membership_before_close(ctx, make_phase, make_user):
    p, difference = board_attack(ctx, make_phase, make_user)
    assert difference == truth()[0] - truth()[1]  # the exact figures still give b − c
    assert p is None  # a hidden private split: McNemar's p would add b + c


def test_twin_the_boards_p_value_before_close_decodes_b_and_c(ctx, make_phase, make_user, monkeypatch):
    monkeypatch.setattr(rank, "P_VALUES_WHILE_OPEN_ONLY_WHEN_SAFE", False)
    p, difference = board_attack(ctx, make_phase, make_user)
    assert p is not None
    assert decode(difference, f"{p:.4f}") == [truth()]  # how many targets are public, and both label counts
