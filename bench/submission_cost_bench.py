"""Per-submission in-process scoring cost: ``scoring.evaluate`` on a 2,000-item phase with ~67 slices.

The platform parses a phase's labels once (its label cache) and a submission's file
once; what it pays per submission on top is ``evaluate``: count tables, the metrics of
every slice, bootstrap intervals of every slice and curve bin, the long-tail curves.
This bench builds such a phase in memory (2,000 binary items, 20 categories with
Zipf weights, numeric popularity cut into head/torso/tail and ten curve bins, a
private split, confidences on every answered row), loads the labels and reads the
prediction file once, then times ``evaluate`` alone over many runs. With
``--popularity buckets`` the items carry head/torso/tail words instead of counts:
the same 72 slices without the popularity curve (the Ranking issue's setting).

It prints the number of slices and curve bins, the median and spread of the
per-call wall and CPU time, the target (<= 20 ms), and whether two calls print
byte-identical JSON (a fixed seed must give the same intervals every time).

Usage: python bench/submission_cost_bench.py [--items 2000] [--runs 200] [--seed 7]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scoring import evaluate, load_labels, read_predictions  # noqa: E402
from scoring.labels import LabelSet  # noqa: E402
from scoring.types import Predictions  # noqa: E402

TARGET_MS = 20.0
CATEGORIES = 20


def phase_files(items: int, seed: int, *, buckets: bool = False) -> tuple[bytes, dict[str, Any], bytes]:
    """Return a label file, its phase config and a prediction CSV with confidences (popularity words if buckets)."""
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, CATEGORIES + 1) ** 1.1
    category = rng.choice(CATEGORIES, size=items, p=weights / weights.sum())
    popularity = np.round(np.exp(rng.normal(5.0, 2.0, items))).astype(int)
    label = rng.random(items) < 0.5
    private = rng.random(items) < 0.5
    cuts = np.quantile(popularity, [1 / 3, 2 / 3])
    words = np.where(popularity <= cuts[0], "tail", np.where(popularity > cuts[1], "head", "torso"))
    lines = [json.dumps({"id": f"q{i:05d}", "label": bool(label[i]), "category": f"cat{category[i]:02d}",
                         "popularity": str(words[i]) if buckets else int(popularity[i]),
                         "split": "private" if private[i] else "public"})
             for i in range(items)]
    p_right = 0.55 + 0.3 * (np.log1p(popularity) / np.log1p(popularity.max()))
    right = rng.random(items) < p_right
    abstain = rng.random(items) < 0.08
    confidence = np.clip(np.where(right, 0.75, 0.6) + rng.normal(0, 0.15, items), 0, 1)
    rows = ["id,prediction,confidence"]
    for i in range(items):
        answer = label[i] if right[i] else not label[i]
        rows.append(f"q{i:05d},," if abstain[i] else f"q{i:05d},{str(bool(answer)).lower()},{confidence[i]:.3f}")
    config = {"task_type": "binary", "breakdowns": ["category"]}
    return "\n".join(lines).encode() + b"\n", config, "\n".join(rows).encode() + b"\n"


def count_slices(result: dict[str, Any]) -> tuple[int, int]:
    """Return how many slice objects (with intervals) and curve bins a result object holds."""
    bodies = [result, *result.get("splits", {}).values()]
    slices = bins = 0
    for body in bodies:
        slices += 1 + sum(len(values) for values in body.get("breakdowns", {}).values())
        slices += sum(1 for key in ("head", "torso", "tail") if key in body.get("popularity", {}))
        bins += len(body.get("popularity_curve", []))
    return slices, bins


def timed(labels: LabelSet, predictions: Predictions, runs: int) -> tuple[list[float], list[float]]:
    """Return per-call wall and CPU milliseconds of ``evaluate`` over ``runs`` calls."""
    wall, cpu = [], []
    for _ in range(runs):
        started, started_cpu = time.perf_counter(), time.process_time()
        evaluate(labels, predictions)
        cpu.append(1000 * (time.process_time() - started_cpu))
        wall.append(1000 * (time.perf_counter() - started))
    return wall, cpu


def main() -> None:
    """Build the phase, time evaluate, print a summary and one JSON line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--popularity", choices=("counts", "buckets"), default="counts",
                        help="numeric counts (with the popularity curve) or head/torso/tail words")
    args = parser.parse_args()
    label_bytes, config, prediction_bytes = phase_files(args.items, args.seed, buckets=args.popularity == "buckets")
    labels = load_labels(label_bytes, config)  # once, as the platform's label cache does
    predictions = read_predictions(prediction_bytes, labels)
    first = json.dumps(evaluate(labels, predictions), sort_keys=True)
    timed(labels, predictions, args.warmup)
    wall, cpu = timed(labels, predictions, args.runs)
    again = json.dumps(evaluate(labels, predictions), sort_keys=True)
    slices, bins = count_slices(json.loads(first))
    median = statistics.median(wall)
    summary = {
        "items": args.items, "popularity": args.popularity, "slices": slices, "curve_bins": bins, "runs": args.runs,
        "median_ms": median, "p10_ms": float(np.percentile(wall, 10)), "p90_ms": float(np.percentile(wall, 90)),
        "median_cpu_ms": statistics.median(cpu), "target_ms": TARGET_MS, "target_met": median <= TARGET_MS,
        "identical_results": first == again, "result_sha256": hashlib.sha256(first.encode()).hexdigest()[:16],
    }
    print(f"{args.items:,} items, {slices} slices + {bins} popularity-curve bins, {args.runs} timed calls")
    print(f"evaluate(): median {median:.2f} ms (p10 {summary['p10_ms']:.2f}, p90 {summary['p90_ms']:.2f}), "
          f"CPU median {summary['median_cpu_ms']:.2f} ms; target <= {TARGET_MS:g} ms: "
          f"{'MET' if summary['target_met'] else 'MISSED'}")
    print(f"two calls give byte-identical JSON: {'yes' if summary['identical_results'] else 'NO'} "
          f"(sha256 {summary['result_sha256']})")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
