"""docs/LONG_TAIL.md as properties: popularity_curve, aurc, risk_coverage and the ece bins against a direct count.

The direct implementation below works item by item with exact fractions; it shares no
code with ``scoring`` (the decile cut points are ``numpy.quantile`` because docs/LONG_TAIL.md
defines them so). Hypothesis draws the scenarios: popularity and confidence values
from small pools so that ties are common, abstentions, items without a popularity,
splits, files that answer nothing, and label files whose popularity is one value
(a single bin).
"""

from __future__ import annotations

import json
import math
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scoring.evaluate import evaluate
from scoring.labels import LabelSet, load_labels
from scoring.types import Predictions

POPULARITY = [0, 1, 1, 2, 3, 5, 8, 40, 40, 41, 1000, 2.5, 7.25]
CONFIDENCE = [0.0, 0.05, 0.1, 0.5, 0.5, 0.55, 0.9, 0.95, 0.999, 1.0]

# ------------------------------------------------------------------ direct implementation


def direct_cuts(values: list[float]) -> list[float]:
    """Cut points: numpy's deciles of every numeric popularity in the label file, duplicates removed."""
    cuts: list[float] = []
    for c in np.quantile(values, [i / 10 for i in range(1, 10)]).tolist():
        if c not in cuts:
            cuts.append(c)
    return cuts


def direct_bin(value: float, cuts: list[float]) -> int:
    """The first bin whose cut point is >= value; past every cut point, the last bin."""
    return next((i for i, c in enumerate(cuts) if value <= c), len(cuts))


def direct_curve(items: list[dict[str, Any]], cuts: list[float]) -> list[dict[str, Any]]:
    """The curve's bins that hold items, least popular first."""
    members: dict[int, list[dict[str, Any]]] = {}
    for it in items:
        if it["pop"] is not None:
            members.setdefault(direct_bin(it["pop"], cuts), []).append(it)
    return [{"lo": min(i["pop"] for i in group), "hi": max(i["pop"] for i in group), "n": len(group),
             "accuracy": Fraction(sum(i["right"] for i in group), len(group)),
             "answer_rate": Fraction(sum(i["answer"] is not None for i in group), len(group))}
            for _, group in sorted(members.items())]


def direct_points(items: list[dict[str, Any]]) -> list[tuple[Fraction, Fraction]]:
    """Every (coverage, risk) point: confidence groups from the highest, then the abstentions."""
    levels = sorted({i["conf"] for i in items if i["answer"] is not None}, reverse=True)
    groups = [[i for i in items if i["answer"] is not None and i["conf"] == c] for c in levels]
    groups.append([i for i in items if i["answer"] is None])
    points, taken, wrong = [], 0, 0
    for group in groups:
        if not group:
            continue
        taken += len(group)
        wrong += sum(not i["right"] for i in group)
        points.append((Fraction(taken, len(items)), Fraction(wrong, taken)))
    return points


def direct_aurc(items: list[dict[str, Any]]) -> Fraction:
    """Sum of (coverage - previous coverage) x risk over the curve, from coverage 0."""
    area, before = Fraction(0), Fraction(0)
    for coverage, risk in direct_points(items):
        area += (coverage - before) * risk
        before = coverage
    return area


def direct_reliability(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ten ece bins (min(floor(10 conf), 9)) that hold answered items."""
    bins: dict[int, list[dict[str, Any]]] = {}
    for it in items:
        if it["answer"] is not None:
            bins.setdefault(min(math.floor(10 * it["conf"]), 9), []).append(it)
    return [{"n": len(group), "accuracy": Fraction(sum(i["right"] for i in group), len(group)),
             "confidence": sum(i["conf"] for i in group) / len(group), "lo": b / 10}
            for b, group in sorted(bins.items())]


# ------------------------------------------------------------------ scenarios


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Return label records and the matching items (popularity, answer, confidence, rightness)."""
    n = draw(st.integers(1, 40))
    one_value = draw(st.booleans()) and draw(st.booleans())
    nobody_answers = draw(st.integers(0, 5)) == 0
    with_split = draw(st.booleans())
    single = draw(st.sampled_from(POPULARITY))
    records, items = [], []
    for i in range(n):
        label = draw(st.booleans())
        pop = single if one_value else draw(st.one_of(st.none(), st.sampled_from(POPULARITY)))
        answer = None if nobody_answers or draw(st.integers(0, 4)) == 0 else draw(st.booleans())
        conf = draw(st.one_of(st.sampled_from(CONFIDENCE), st.floats(0, 1))) if answer is not None else None
        record: dict[str, Any] = {"id": f"i{i}", "label": label}
        if pop is not None:
            record["popularity"] = pop
        if with_split:
            record["split"] = draw(st.sampled_from(["public", "private"]))
        records.append(record)
        items.append({"id": f"i{i}", "pop": pop, "answer": answer, "conf": conf, "right": answer == label,
                      "split": record.get("split", "public")})
    return records, items


def score(records: list[dict[str, Any]], items: list[dict[str, Any]],
          config: dict[str, Any] | None = None) -> tuple[LabelSet, dict[str, Any]]:
    """Score the items' answers and confidences with the platform."""
    labels = load_labels(b"".join(json.dumps(r).encode() + b"\n" for r in records),
                         config or {"task_type": "binary", "breakdowns": []})
    by_id = {i["id"]: i for i in items}
    ids = labels.ids.to_pylist()
    answer = np.array([-1 if by_id[i]["answer"] is None else int(by_id[i]["answer"]) for i in ids], dtype=np.int8)
    conf = np.array([np.nan if by_id[i]["conf"] is None else by_id[i]["conf"] for i in ids])
    return labels, evaluate(labels, Predictions(answer=answer, confidence=conf, n_predictions=len(ids)))


def bodies(result: dict[str, Any], items: list[dict[str, Any]]) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """Return (result body, its items): the whole file, then each split present."""
    out = [(result, items)]
    for name, body in result.get("splits", {}).items():
        out.append((body, [i for i in items if i["split"] == name]))
    return out


# ------------------------------------------------------------------ properties


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_popularity_curve_bins_are_the_direct_deciles_in_every_split(drawn: Any) -> None:
    records, items = drawn
    _, result = score(records, items)
    numeric = [i["pop"] for i in items if i["pop"] is not None]
    for body, members in bodies(result, items):
        if not numeric or all(i["pop"] is None for i in members):
            assert "popularity_curve" not in body
            continue
        expected = direct_curve(members, direct_cuts(numeric))
        got = body["popularity_curve"]
        assert [(b["lo"], b["hi"], b["n"]) for b in got] == [(b["lo"], b["hi"], b["n"]) for b in expected]
        for mine, theirs in zip(got, expected, strict=True):
            assert mine["accuracy"] == pytest.approx(float(theirs["accuracy"]), abs=1e-12)
            assert mine["answer_rate"] == pytest.approx(float(theirs["answer_rate"]), abs=1e-12)
            assert list(mine) == ["lo", "hi", "n", "accuracy", "answer_rate", "ci"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_aurc_and_risk_coverage_follow_the_confidence_groups_then_the_abstentions(drawn: Any) -> None:
    records, items = drawn
    _, result = score(records, items)
    for body, members in bodies(result, items):
        points = direct_points(members)
        assert body["overall"]["aurc"] == pytest.approx(float(direct_aurc(members)), abs=1e-12)
        curve = body["risk_coverage"]
        assert 1 <= len(curve) <= 101
        exact = [(float(c), float(r)) for c, r in points]
        for coverage, risk in curve:  # each listed point is a point of the curve
            assert any(coverage == pytest.approx(c, abs=1e-12) and risk == pytest.approx(r, abs=1e-12)
                       for c, r in exact)
        assert [c for c, _ in curve] == sorted({c for c, _ in curve})  # coverage strictly increases
        assert curve[0] == pytest.approx(list(exact[0]), abs=1e-12)
        accuracy = Fraction(sum(i["right"] for i in members), len(members))
        assert curve[-1] == pytest.approx([1.0, float(1 - accuracy)], abs=1e-12)
        for j in range(1, 101):  # the first point reaching each percent is listed
            first = next(c for c, _ in points if 100 * c >= j)
            assert any(c == pytest.approx(float(first), abs=1e-12) for c, _ in curve)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_reliability_bins_are_the_ece_bins_and_sum_to_ece(drawn: Any) -> None:
    records, items = drawn
    _, result = score(records, items)
    for body, members in bodies(result, items):
        expected = direct_reliability(members)
        got = body["reliability"]
        assert [(b["lo"], b["n"]) for b in got] == [(b["lo"], b["n"]) for b in expected]
        for mine, theirs in zip(got, expected, strict=True):
            assert mine["hi"] == pytest.approx(mine["lo"] + 0.1)
            assert mine["accuracy"] == pytest.approx(float(theirs["accuracy"]), abs=1e-12)
            assert mine["confidence"] == pytest.approx(theirs["confidence"], abs=1e-12)
        answered = sum(b["n"] for b in got)
        ece = sum(b["n"] / answered * abs(b["accuracy"] - b["confidence"]) for b in got) if answered else None
        assert body["overall"]["ece"] == (None if ece is None else pytest.approx(ece, abs=1e-12))


def test_a_file_that_answers_nothing_has_risk_one_everywhere_and_no_reliability_bins() -> None:
    records = [{"id": f"i{k}", "label": k % 2 == 0, "popularity": k} for k in range(30)]
    items = [{"id": r["id"], "pop": r["popularity"], "answer": None, "conf": None, "right": False,
              "split": "public"} for r in records]
    _, result = score(records, items)
    assert result["risk_coverage"] == [[1.0, 1.0]]
    assert result["overall"]["aurc"] == 1.0
    assert result["reliability"] == []
    assert all(b["accuracy"] == 0.0 and b["answer_rate"] == 0.0 for b in result["popularity_curve"])


def test_one_popularity_value_makes_one_bin_spanning_it() -> None:
    records = [{"id": f"i{k}", "label": True, "popularity": 7} for k in range(12)]
    items = [{"id": r["id"], "pop": 7, "answer": k < 9, "conf": 0.8, "right": k < 9, "split": "public"}
             for k, r in enumerate(records)]
    _, result = score(records, items)
    (only,) = result["popularity_curve"]
    assert (only["lo"], only["hi"], only["n"], only["accuracy"]) == (7, 7, 12, 0.75)


def _binomial_quantile(n: int, p: float, tail: float) -> tuple[int, int]:
    """Return k_lo, k_hi with P[X < k_lo] < tail and P[X > k_hi] < tail for X ~ Binomial(n, p)."""
    pmf = [math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)]
    below, k_lo = 0.0, 0
    while below + pmf[k_lo] < tail:
        below += pmf[k_lo]
        k_lo += 1
    above, k_hi = 0.0, n
    while above + pmf[k_hi] < tail:
        above += pmf[k_hi]
        k_hi -= 1
    return k_lo, k_hi


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, 9), st.integers(0, 2)), min_size=10, max_size=120))
def test_each_bin_interval_is_the_bootstrap_of_its_items_as_a_slice_of_them_gets(cells: list[tuple[int, int]]) -> None:
    """A curve bin's accuracy interval equals the one a breakdown slice of the same items gets.

    Items carry popularity = their bin's value and category = the same value, so every
    bin is also a category: the bin is scored from count tables like every slice. The
    interval also lies inside the central 1 - 2e-6 of Binomial(n, accuracy) / n, the
    distribution a bootstrap of n items resamples.
    """
    records, items = [], []
    for k, (pop, kind) in enumerate(cells):  # kind 0: right, 1: wrong, 2: abstains
        records.append({"id": f"i{k}", "label": True, "popularity": pop, "category": str(pop)})
        items.append({"id": f"i{k}", "pop": pop, "answer": None if kind == 2 else kind == 0, "conf": 0.5,
                      "right": kind == 0, "split": "public"})
    _, result = score(records, items, {"task_type": "binary", "breakdowns": ["category"]})
    categories = result["breakdowns"]["category"]
    cuts = direct_cuts([float(p) for p, _ in cells])
    for b in result["popularity_curve"]:
        same_bin = {str(p) for p, _ in cells if direct_bin(p, cuts) == direct_bin(b["lo"], cuts)}
        lo, hi = b["ci"]["accuracy"]
        assert 0.0 <= lo <= b["accuracy"] + 1e-12 or b["n"] < 5
        assert lo <= hi <= 1.0
        k_lo, k_hi = _binomial_quantile(b["n"], b["accuracy"], 1e-6)
        assert k_lo / b["n"] - 1e-12 <= lo and hi <= k_hi / b["n"] + 1e-12
        if len(same_bin) == 1:
            (value,) = same_bin
            assert b["ci"]["accuracy"] == categories[value]["ci"]["accuracy"]
