"""docs/METRICS.md on the board agrees with an independent computation: order, stat_rank and exact McNemar p-values.

Random scenarios (labels, skills, abstentions) are scored through the platform; the test
recomputes each view's value from the predictions and the labels, the statistical rank
from the intervals shown, and the McNemar p-value by exact binomial sums with integers.
"""

from __future__ import annotations

import io
import json
import random
from fractions import Fraction
from math import comb

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from leaderboard.board import BoardQuery, ranking
from leaderboard.board.stats import mcnemar_p, stat_ranks
from leaderboard.submissions import accept_submission


def exact_p(b: int, c: int) -> float:
    """Return the exact two-sided McNemar p-value from integer binomial coefficients."""
    n = b + c
    if n == 0:
        return 1.0
    tail = Fraction(sum(comb(n, i) for i in range(min(b, c) + 1)), 2 ** n)
    return float(min(Fraction(1), 2 * tail))


def brute_stat_ranks(intervals, higher):
    """Return 1 + the number of other intervals entirely better, by comparing every pair."""
    out = []
    for i, mine in enumerate(intervals):
        if mine is None:
            out.append(None)
            continue
        better = sum(1 for j, other in enumerate(intervals) if j != i and other is not None
                     and (other[0] > mine[1] if higher else other[1] < mine[0]))
        out.append(1 + better)
    return out


@given(st.integers(0, 60), st.integers(0, 60))
def test_mcnemar_matches_exact_binomial_sums(b, c):
    assert mcnemar_p(b, c) == pytest.approx(exact_p(b, c), rel=1e-9, abs=1e-12)


@settings(max_examples=200)
@given(st.lists(st.one_of(st.none(), st.tuples(st.integers(0, 20), st.integers(0, 20))), max_size=12),
       st.booleans())
def test_stat_ranks_match_pairwise_comparison(raw, higher):
    intervals = [None if r is None else (min(r) / 20, max(r) / 20) for r in raw]
    assert stat_ranks(intervals, higher=higher) == brute_stat_ranks(intervals, higher)


def scenario(seed: int, n: int = 64):
    """Return label records and a few participants' answers (True/False/None) drawn at random."""
    rng = random.Random(seed)
    items = [{"id": f"i{k:03d}", "label": rng.choice(["true", "false"]), "category": rng.choice("ab"),
              "popularity": "tail" if rng.random() < 0.6 else "head"} for k in range(n)]
    answers = []
    for _ in range(rng.randint(4, 7)):
        skill, abstain = rng.uniform(0.3, 0.95), rng.uniform(0.0, 0.2)
        row = {}
        for item in items:
            truth = item["label"] == "true"
            row[item["id"]] = None if rng.random() < abstain else (truth if rng.random() < skill else not truth)
        answers.append(row)
    return items, answers


def csv_of(answers: dict[str, bool | None]) -> bytes:
    """Return a prediction file of one participant's answers."""
    lines = ["id,prediction", *(f"{i},{'' if a is None else str(a).lower()}" for i, a in answers.items())]
    return ("\n".join(lines) + "\n").encode()


def in_slice(item, path):
    """Return whether an item is in the slice a path names."""
    parts = path.split(".")
    if parts[0] == "popularity":
        return item["popularity"] == parts[1]
    if parts[0] == "breakdowns":
        return item["category"] == parts[2]
    return True


@pytest.mark.parametrize("seed", [11, 23, 37])
@pytest.mark.parametrize("metric", ["popularity.tail.accuracy", "accuracy", "breakdowns.category.b.accuracy"])
def test_order_stat_rank_and_p_agree_with_an_independent_computation(ctx, make_phase, make_user, seed, metric):
    items, answers = scenario(seed)
    labels = ("\n".join(json.dumps(i) for i in items) + "\n").encode()
    phase = make_phase(labels=labels, config={"task_type": "binary", "min_slice_items": 1, "primary_metric": metric})
    truth = {i["id"]: i["label"] == "true" for i in items}
    units = [i["id"] for i in items if in_slice(i, metric)]
    expected = {}
    for k, row in enumerate(answers):
        user = make_user(display_name=f"system-{k}")
        sub = accept_submission(ctx, phase_id=phase.id, user=user, filename="p.csv", stream=io.BytesIO(csv_of(row)))
        right = {i: row[i] is not None and row[i] == truth[i] for i in units}
        expected[sub.id] = (sum(right.values()) / len(units), right)
    board = ranking.leaderboard(ctx, phase_id=phase.id, query=BoardQuery(every_row=True))
    ranked = [r for r in board.rows if not r.is_baseline]
    assert board.view.metric == metric and metric in board.rule
    # order: the value (computed here from the answers), then the earlier submission, then the lower id
    order = sorted(expected, key=lambda sid: (-round(expected[sid][0], 4), sid))
    assert [r.submission_id for r in ranked] == order
    assert [r.value for r in ranked] == [round(expected[sid][0], 4) for sid in order]
    assert [r.rank for r in ranked] == list(range(1, len(ranked) + 1))
    assert [r.stat_rank for r in ranked] == brute_stat_ranks([r.ci for r in ranked], True)
    assert ranked[0].p_vs_previous is None
    for above, row in zip(ranked, ranked[1:], strict=False):
        first, second = expected[above.submission_id][1], expected[row.submission_id][1]
        b = sum(1 for i in units if first[i] and not second[i])
        c = sum(1 for i in units if second[i] and not first[i])
        assert row.p_vs_previous == pytest.approx(round(exact_p(b, c), 4), abs=1e-9)
