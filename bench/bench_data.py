"""Inputs of the scoring benchmark: a long-tailed label file, a phase config and a CSV submission.

Written once per (rows, seed) into the output folder with a fixed seed, so every run of
``score_bench.py`` scores the same files.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

GENERATOR_VERSION = 2
HEAD_MIN = 1000
"""Popularity counts (page views, say) from this up are head items; below, tail (docs/LONG_TAIL.md: buckets)."""
CATEGORIES = (
    "geography", "history", "science", "sports", "music", "film", "literature",
    "politics", "religion", "food", "biology", "chemistry", "physics", "art",
    "business", "technology", "mythology", "medicine", "law", "astronomy",
)  # fmt: skip
TRUE_SPELLINGS = ("true", "True", "yes", "Y", "1", " TRUE ")
FALSE_SPELLINGS = ("false", "False", "no", "n", "0", " FALSE ")
SPELLING_WEIGHTS = (0.80, 0.06, 0.05, 0.03, 0.04, 0.02)
ABSTAIN_SPELLINGS = ("", "unknown", "IDK", "n/a", "abstain", "none", "I don't know")


@dataclass
class Dataset:
    """Paths of one generated benchmark input."""

    labels: Path
    config: Path
    predictions: Path


def zipf_weights(k: int, exponent: float = 1.1) -> np.ndarray:
    """Return normalized Zipf weights for ranks 1..k."""
    weights = 1.0 / np.arange(1, k + 1) ** exponent
    return weights / weights.sum()


def category_json(first: np.ndarray, second: np.ndarray) -> list[str]:
    """Return each item's JSON category: a string, or a list where ``second`` >= 0."""
    names = [json.dumps(c) for c in CATEGORIES]
    pairs = zip(first.tolist(), second.tolist(), strict=True)
    return [names[a] if b < 0 else f"[{names[a]}, {names[b]}]" for a, b in pairs]


def write_labels(path: Path, rng: np.random.Generator, rows: int) -> dict[str, np.ndarray]:
    """Write the label file and return the item arrays the submission is drawn from."""
    first = rng.choice(len(CATEGORIES), size=rows, p=zipf_weights(len(CATEGORIES)))
    offset = rng.integers(1, len(CATEGORIES), size=rows)
    second = np.where(rng.random(rows) < 0.05, (first + offset) % len(CATEGORIES), -1)
    head = rng.random(rows) < 0.30
    label = rng.random(rows) < 0.45
    cats = category_json(first, second)
    # a numeric popularity (so the popularity curve is computed): log-uniform counts, 30% at HEAD_MIN or more
    exponent = np.where(head, rng.uniform(0, 3, rows), rng.uniform(-3, 0, rows))
    counts = np.minimum(np.floor(HEAD_MIN * 10.0 ** exponent), np.where(head, np.inf, HEAD_MIN - 1)).astype(np.int64)
    with path.open("w", encoding="utf-8") as f:
        for i, (lab, cat, count) in enumerate(zip(label.tolist(), cats, counts.tolist(), strict=True)):
            f.write(f'{{"id": "q{i:07d}", "label": {"true" if lab else "false"}, '
                    f'"category": {cat}, "popularity": {count}}}\n')
    return {"label": label, "head": head, "first": first}


def spell(answer: np.ndarray, abstain: np.ndarray, rng: np.random.Generator) -> list[str]:
    """Return the prediction tokens, in a realistic mix of spellings."""
    n = len(answer)
    variant = rng.choice(len(SPELLING_WEIGHTS), size=n, p=SPELLING_WEIGHTS).tolist()
    abstain_variant = rng.integers(0, len(ABSTAIN_SPELLINGS), size=n).tolist()
    return [
        ABSTAIN_SPELLINGS[av] if ab else (TRUE_SPELLINGS[v] if a else FALSE_SPELLINGS[v])
        for a, ab, v, av in zip(answer.tolist(), abstain.tolist(), variant, abstain_variant, strict=True)
    ]


def write_submission(path: Path, rng: np.random.Generator, items: dict[str, np.ndarray]) -> None:
    """Write a CSV submission: ~88% head / ~70% tail accuracy, abstentions, 0.5% ids missing."""
    label, head, first = items["label"], items["head"], items["first"]
    n = len(label)
    p_correct = np.where(head, 0.88, 0.70) - 0.008 * first  # rarer categories are harder
    correct = rng.random(n) < p_correct
    abstain = rng.random(n) < np.where(head, 0.03, 0.10)
    answer = np.where(correct, label, ~label)
    confidence = np.clip(np.where(correct, 0.75, 0.6) + rng.normal(0, 0.15, n), 0.0, 1.0)
    tokens = spell(answer, abstain, rng)
    present = rng.random(n) >= 0.005
    with path.open("w", encoding="utf-8", newline="") as f:
        f.write("id,prediction,confidence\n")
        for i in np.flatnonzero(present).tolist():
            conf = "" if abstain[i] else f"{confidence[i]:.4f}"
            f.write(f"q{i:07d},{tokens[i]},{conf}\n")


def generate(out: Path, rows: int, seed: int, force: bool) -> Dataset:
    """Write the benchmark inputs into ``out`` unless an identical set is already there."""
    out.mkdir(parents=True, exist_ok=True)
    data = Dataset(out / "labels.jsonl", out / "phase.json", out / "submission.csv")
    stamp = out / "stamp.json"
    wanted = {"rows": rows, "seed": seed, "version": GENERATOR_VERSION}
    if not force and stamp.exists() and json.loads(stamp.read_text()) == wanted:
        return data
    stamp.unlink(missing_ok=True)
    started = time.perf_counter()
    rng = np.random.default_rng(seed)
    items = write_labels(data.labels, rng, rows)
    data.config.write_text(json.dumps(
        {"task_type": "binary", "primary_metric": "accuracy", "breakdowns": ["category"], "missing_ids": "abstain",
         "popularity": {"head_min": HEAD_MIN, "tail_max": HEAD_MIN - 1}}
    ))
    write_submission(data.predictions, rng, items)
    stamp.write_text(json.dumps(wanted))
    print(f"generated {rows:,} rows into {out} in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return data
