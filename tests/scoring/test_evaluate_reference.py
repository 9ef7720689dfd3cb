"""evaluate() agrees with a deliberately naive reading of docs/METRICS.md on random scenarios.

The reference below shares no code with ``scoring``: it loops over items in plain
Python, straight from the raw records (docs/LONG_TAIL.md in ``long_tail_reference``). Only point
values are compared (not intervals).
"""

from __future__ import annotations

import json
import math
import random
from typing import Any

import long_tail_reference as lt
import numpy as np
import pytest

from scoring.evaluate import evaluate
from scoring.labels import load_labels
from scoring.types import Predictions

CI_METRICS = ("accuracy", "answer_rate", "selective_accuracy", "f1", "macro_f1", "macro_f1_fixed", "group_accuracy")
OPTIONS = "ABCD"  # every multiple-choice scenario's options
CATEGORIES = ["geo", "hist", "sci", "art"]


# ---------------------------------------------------------------- the reference


def ref_quantile(values: list[float], q: float) -> float:
    """numpy's default (linear) quantile, by hand."""
    xs = sorted(values)
    h = (len(xs) - 1) * q
    lo = math.floor(h)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (h - lo) * (xs[hi] - xs[lo])


def ref_bucket(pop: Any, cuts: tuple[float, float] | None, thresholds: tuple[float, float] | None) -> str | None:
    if pop is None:
        return None
    if isinstance(pop, str):
        return pop.lower()
    if thresholds is not None:
        head_min, tail_max = thresholds
        return "head" if pop >= head_min else "tail" if pop <= tail_max else "torso"
    assert cuts is not None
    return "tail" if pop <= cuts[0] else "head" if pop > cuts[1] else "torso"


def ref_metrics(rows: list[dict[str, Any]], binary: bool, with_confidence: bool) -> dict[str, Any]:
    n = len(rows)
    answered = [r for r in rows if r["answer"] is not None]
    correct = [r for r in answered if r["answer"] == r["gold"]]
    out: dict[str, Any] = {
        "accuracy": len(correct) / n,
        "answer_rate": len(answered) / n,
        "selective_accuracy": len(correct) / len(answered) if answered else None,
    }
    classes = sorted({r["gold"] for r in rows} | {r["answer"] for r in answered})
    out["macro_f1"] = sum(class_f1(rows, c) for c in classes) / len(classes)
    if not binary:  # ComparisonQA's: every option a class, one never seen counting 0
        out["macro_f1_fixed"] = sum(class_f1(rows, c) for c in range(len(OPTIONS))) / len(OPTIONS)
    if binary:
        tp = sum(1 for r in rows if r["gold"] == 1 and r["answer"] == 1)
        fp = sum(1 for r in rows if r["gold"] == 0 and r["answer"] == 1)
        fn = sum(1 for r in rows if r["gold"] == 1 and r["answer"] != 1)
        out["f1"] = 2 * tp / (2 * tp + fp + fn) if 2 * tp + fp + fn else 0.0
    else:
        out["f1"] = out["macro_f1"]
    groups: dict[str, bool] = {}
    for r in rows:
        if r["group"] is not None:
            groups[r["group"]] = groups.get(r["group"], True) and r["answer"] == r["gold"]
    if groups:
        out["group_accuracy"] = sum(groups.values()) / len(groups)
    if with_confidence:
        if not answered:
            out["ece"] = None
        else:
            total = 0.0
            for b in range(10):
                members = [r for r in answered if min(math.floor(10 * r["conf"]), 9) == b]
                if members:
                    acc = sum(r["answer"] == r["gold"] for r in members) / len(members)
                    conf = sum(r["conf"] for r in members) / len(members)
                    total += len(members) / len(answered) * abs(acc - conf)
            out["ece"] = total
        out["aurc"] = lt.aurc(rows)
    out.update(n=n, answered=len(answered), correct=len(correct))
    return out


def class_f1(rows: list[dict[str, Any]], c: int) -> float:
    """F1 of class c: 2 tp / (2 tp + fp + fn), 0 when that is 0 / 0 (an abstention is a miss)."""
    tp = sum(1 for r in rows if r["gold"] == c and r["answer"] == c)
    fp = sum(1 for r in rows if r["gold"] != c and r["answer"] == c)
    fn = sum(1 for r in rows if r["gold"] == c and r["answer"] != c)
    return 2 * tp / (2 * tp + fp + fn) if 2 * tp + fp + fn else 0.0


def complete_pairs(rows: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The pairs of exactly two rows, one head and one tail, head first."""
    pairs: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        if r["pair"] is not None:
            pairs.setdefault(r["pair"], []).append(r)
    return [sorted(m, key=lambda r: r["bucket"] != "head") for m in pairs.values()
            if sorted(r["bucket"] or "" for r in m) == ["head", "tail"]]


def ref_body(rows: list[dict[str, Any]], breakdowns: list[str], binary: bool, conf: bool,
             cuts: list[float] | None) -> dict[str, Any]:
    out: dict[str, Any] = {"n_items": len(rows), "overall": ref_metrics(rows, binary, conf)}
    paired = complete_pairs(rows)
    if paired and not binary:  # ComparisonQA's avg Macro F1: mean of the two sides' fixed-class macro-F1
        sides = [ref_metrics([p[i] for p in paired], binary, False)["macro_f1_fixed"] for i in (0, 1)]
        out["overall"]["avg_macro_f1"] = (sides[0] + sides[1]) / 2
    if conf:
        out["risk_coverage"] = lt.risk_coverage(rows)
        out["reliability"] = lt.reliability(rows)
    if cuts is not None and any(r["pop"] is not None for r in rows):
        out["popularity_curve"] = lt.popularity_curve(rows, cuts)
    tables: dict[str, Any] = {}
    for field in breakdowns:
        values: dict[str, list[dict[str, Any]]] = {}
        for r in rows:
            raw = r["record"].get(field)
            if raw is None:
                continue
            for v in dict.fromkeys(raw if isinstance(raw, list) else [raw]):
                values.setdefault(str(v), []).append(r)
        if values:
            tables[field] = {v: ref_metrics(values[v], binary, conf) for v in sorted(values)}
    if tables:
        out["breakdowns"] = tables
    buckets = {b: [r for r in rows if r["bucket"] == b] for b in ("head", "torso", "tail")}
    if any(buckets.values()):
        pop: dict[str, Any] = {b: ref_metrics(rs, binary, conf) for b, rs in buckets.items() if rs}
        pop["gap"], pop["relative_drop"] = {}, {}
        for m in CI_METRICS:
            h, t = pop.get("head", {}).get(m), pop.get("tail", {}).get(m)
            if h is not None and t is not None:
                pop["gap"][m] = h - t
                pop["relative_drop"][m] = (h - t) / h if h != 0 else None
        out["popularity"] = pop
    pairs: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        if r["pair"] is not None:
            pairs.setdefault(r["pair"], []).append(r)
    if pairs:
        tally = {"both_correct": 0, "head_only": 0, "tail_only": 0, "neither": 0}
        complete = 0
        for members in pairs.values():
            kinds = sorted(m["bucket"] or "" for m in members)
            if len(members) != 2 or kinds != ["head", "tail"]:
                continue
            complete += 1
            head_ok = any(m["bucket"] == "head" and m["answer"] == m["gold"] for m in members)
            tail_ok = any(m["bucket"] == "tail" and m["answer"] == m["gold"] for m in members)
            key = ("both_correct" if head_ok and tail_ok else "head_only" if head_ok
                   else "tail_only" if tail_ok else "neither")
            tally[key] += 1
        out["pairs"] = {"n_pairs": complete, **{k: v / complete if complete else None for k, v in tally.items()},
                        "incomplete_pairs": len(pairs) - complete}
    return out


def reference(records: list[dict[str, Any]], config: dict[str, Any], answers: dict[str, Any],
              confidences: dict[str, float] | None) -> dict[str, Any]:
    binary = config["task_type"] == "binary"
    options = [o.lower() for o in config.get("options", [])]
    numeric = [r["popularity"] for r in records if isinstance(r.get("popularity"), (int, float))]
    cuts = (ref_quantile(numeric, 1 / 3), ref_quantile(numeric, 2 / 3)) if numeric else None
    pop_cfg = config.get("popularity")
    thresholds = (pop_cfg["head_min"], pop_cfg["tail_max"]) if pop_cfg else None
    rows = []
    for r in records:
        gold = int(r["label"]) if binary else options.index(r["label"].lower())
        answer = answers.get(r["id"])
        rows.append({
            "record": r, "gold": gold, "answer": answer,
            "conf": confidences.get(r["id"]) if confidences else None,
            "group": r.get("group"), "pair": r.get("pair"),
            "bucket": ref_bucket(r.get("popularity"), cuts, thresholds),
            "pop": r["popularity"] if isinstance(r.get("popularity"), (int, float)) else None,
        })
    breakdowns = config.get("breakdowns", ["category"])
    curve = lt.curve_cuts(numeric)
    out = ref_body(rows, breakdowns, binary, confidences is not None, curve)
    if any("split" in r for r in records):
        out["splits"] = {}
        for split in ("public", "private"):
            chosen = [row for row in rows if row["record"].get("split", "public") == split]
            if chosen:
                out["splits"][split] = ref_body(chosen, breakdowns, binary, confidences is not None, curve)
    return out


# ---------------------------------------------------------------- random scenarios


def scenario(seed: int) -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any], dict[str, float] | None]:
    rnd = random.Random(seed)
    binary = seed % 2 == 0
    config: dict[str, Any] = ({"task_type": "binary"} if binary
                              else {"task_type": "multiple_choice", "options": list("ABCD")})
    config["breakdowns"] = rnd.choice([["category"], ["category", "domain"], []])
    if rnd.random() < 0.3:
        config["popularity"] = {"head_min": 60, "tail_max": 30}
    pop_kind = rnd.choice(["buckets", "numbers", "mixed", "none"])
    with_split = rnd.random() < 0.5
    n = rnd.randint(1, 70)
    records = []
    for i in range(n):
        r: dict[str, Any] = {"id": f"q{i}", "label": rnd.random() < 0.5 if binary else rnd.choice("ABCD")}
        roll = rnd.random()
        if roll < 0.5:
            r["category"] = rnd.choice(CATEGORIES)
        elif roll < 0.8:
            r["category"] = rnd.sample(CATEGORIES, rnd.randint(0, 3))
        if rnd.random() < 0.6:
            r["domain"] = rnd.choice(["time", "place", 7])
        if pop_kind == "buckets" or (pop_kind == "mixed" and rnd.random() < 0.3):
            r["popularity"] = rnd.choice(["head", "torso", "tail", "Head"])
        elif pop_kind in ("numbers", "mixed") and rnd.random() < 0.9:
            r["popularity"] = rnd.choice([rnd.randint(0, 100), round(rnd.uniform(0, 100), 2)])
        if rnd.random() < 0.5:
            r["group"] = f"g{rnd.randint(0, n // 3)}"
        if rnd.random() < 0.6:
            r["pair"] = f"p{rnd.randint(0, n // 2)}"
        if with_split and rnd.random() < 0.8:
            r["split"] = rnd.choice(["public", "private"])
        records.append(r)
    answers: dict[str, Any] = {}
    for r in records:
        if rnd.random() < 0.15:
            continue  # abstains (or is missing from the file)
        gold = int(r["label"]) if binary else "ABCD".index(r["label"])
        answers[r["id"]] = gold if rnd.random() < 0.6 else rnd.randrange(2 if binary else 4)
    confidences = {i: rnd.random() for i in answers} if rnd.random() < 0.5 else None
    return records, config, answers, confidences


def assert_agrees(ours: Any, ref: Any, path: str = "") -> None:
    if isinstance(ref, dict):
        assert isinstance(ours, dict), path
        assert set(ours) - {"ci", "warnings"} == set(ref), f"{path}: {sorted(ours)} vs {sorted(ref)}"
        for key, value in ref.items():
            assert_agrees(ours[key], value, f"{path}.{key}")
    elif isinstance(ref, list):
        assert isinstance(ours, list) and len(ours) == len(ref), f"{path}: {ours} vs {ref}"
        for i, (mine, theirs) in enumerate(zip(ours, ref, strict=False)):
            assert_agrees(mine, theirs, f"{path}[{i}]")
    elif ref is None or isinstance(ours, bool):
        assert ours == ref, path
    else:
        assert ours == pytest.approx(ref, abs=1e-9), path


@pytest.mark.parametrize("seed", range(120))
def test_evaluate_agrees_with_naive_reference(seed: int) -> None:
    records, config, answers, confidences = scenario(seed)
    labels = load_labels(b"".join(json.dumps(r).encode() + b"\n" for r in records), config)
    ids = labels.ids.to_pylist()
    answer = np.array([answers.get(i, -1) for i in ids], dtype=np.int8)
    conf = None if confidences is None else np.array([confidences.get(i, np.nan) for i in ids])
    ours = evaluate(labels, Predictions(answer=answer, confidence=conf, n_predictions=len(answers)))
    assert_agrees(ours, reference(records, config, answers, confidences))
