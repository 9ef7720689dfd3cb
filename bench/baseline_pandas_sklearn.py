"""Score a binary prediction file with pandas + scikit-learn, as a competent organizer would.

The reference program of ``bench/score_bench.py``: it reads the same hidden label
file (JSON Lines), phase config and CSV submission as ``python -m scoring evaluate``
and prints the same numbers for the metrics it implements (docs/METRICS.md, binary task):
accuracy, answer rate, selective accuracy, F1 of the positive class, macro-F1 and
ECE, overall, per breakdown value (list-valued categories count in each) and per
popularity bucket with gap and relative drop, plus a 95% percentile bootstrap
interval (1,000 resamples, fixed seed) for overall accuracy. Choices are explained
in ``bench/README.md``.

Usage: python bench/baseline_pandas_sklearn.py --labels L --predictions P [--config C] [--timings]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

import numpy as np
import pandas as pd
from sklearn.metrics import accuracy_score, f1_score

ABSTAIN = -1
N_RESAMPLES = 1000
SEED = 0
TOKENS: dict[str, int] = {
    **dict.fromkeys(["true", "yes", "t", "y", "1"], 1),
    **dict.fromkeys(["false", "no", "f", "n", "0"], 0),
    **dict.fromkeys(["", "unknown", "idk", "abstain", "none", "n/a", "i don't know"], ABSTAIN),
}
CI_METRICS = ("accuracy", "answer_rate", "selective_accuracy", "f1", "macro_f1")


class Timer:
    """Collect wall time per named phase of the program."""

    def __init__(self) -> None:
        self.start = self.last = time.perf_counter()
        self.phases: dict[str, float] = {}

    def lap(self, name: str) -> None:
        """Record the time since the previous lap under ``name``."""
        now = time.perf_counter()
        self.phases[name] = now - self.last
        self.last = now


def fail(message: str, code: int) -> None:
    """Print an error object and exit with ``code``."""
    print(json.dumps({"error": message}))
    sys.exit(code)


def load_config(path: str | None) -> dict[str, Any]:
    """Read the phase config, defaulting to a binary task broken down by category."""
    config: dict[str, Any] = {"task_type": "binary", "breakdowns": ["category"]}
    if path:
        with open(path, encoding="utf-8") as f:
            config.update(json.load(f))
    if config["task_type"] != "binary":
        fail("this baseline scores binary tasks only", 3)
    return config


def load_labels(path: str) -> pd.DataFrame:
    """Read the JSON Lines label file and encode the gold label as 0/1."""
    labels = pd.read_json(path, lines=True, dtype={"id": str})
    labels["y"] = labels["label"].astype(str).str.strip().str.lower().map(TOKENS)
    if labels["y"].isna().any() or (labels["y"] == ABSTAIN).any():
        fail("label file has a label that is not a boolean", 3)
    if labels["id"].duplicated().any():
        fail("label file has duplicate ids", 3)
    labels["y"] = labels["y"].astype(np.int8)
    return labels


def load_predictions(path: str) -> pd.DataFrame:
    """Read the CSV submission, normalize tokens and reject an invalid file."""
    preds = pd.read_csv(path, dtype=str, keep_default_na=False)
    preds.columns = preds.columns.str.strip().str.lower()
    if not {"id", "prediction"} <= set(preds.columns):
        fail("missing column: the header must be id,prediction[,confidence]", 2)
    preds["pred"] = preds["prediction"].str.strip().str.lower().map(TOKENS)
    if preds["pred"].isna().any():
        fail(f"{int(preds['pred'].isna().sum())} invalid prediction value(s)", 2)
    if preds["id"].duplicated().any():
        fail("duplicate ids in the prediction file", 2)
    if "confidence" in preds.columns:
        conf = pd.to_numeric(preds["confidence"].str.strip().replace("", np.nan), errors="coerce")
        answered = preds["pred"] != ABSTAIN
        if (answered & ~conf.between(0, 1)).any():
            fail("confidence missing or out of [0, 1] on an answered row", 2)
        preds["conf"] = conf.where(answered)
    return preds


def align(labels: pd.DataFrame, preds: pd.DataFrame) -> pd.DataFrame:
    """Join predictions onto the labels; an id the file does not mention abstains."""
    cols = ["id", "pred"] + (["conf"] if "conf" in preds.columns else [])
    # Ids are unique on both sides (checked on load); one outer join also finds unknown ids.
    df = labels.merge(preds[cols], on="id", how="outer", indicator=True)
    if (df["_merge"] == "right_only").any():
        fail("the prediction file has unknown ids", 2)
    df["pred"] = df["pred"].fillna(ABSTAIN).astype(np.int8)
    return df


def ece(correct: np.ndarray, conf: np.ndarray) -> float:
    """Return the 10-bin expected calibration error over answered items."""
    bins = np.minimum(np.floor(conf * 10).astype(int), 9)
    table = pd.DataFrame({"bin": bins, "correct": correct, "conf": conf})
    per_bin = table.groupby("bin").agg(n=("correct", "size"), acc=("correct", "mean"), conf=("conf", "mean"))
    return float((per_bin["n"] / len(conf) * (per_bin["acc"] - per_bin["conf"]).abs()).sum())


def slice_metrics(part: pd.DataFrame) -> dict[str, Any]:
    """Return the metrics of one slice (docs/METRICS.md) with scikit-learn."""
    y, pred = part["y"].to_numpy(), part["pred"].to_numpy()
    answered = pred != ABSTAIN
    n, n_answered, n_correct = len(y), int(answered.sum()), int((pred == y).sum())
    classes = np.union1d(np.unique(y), np.unique(pred[answered]))
    out: dict[str, Any] = {
        "n": n,
        "answered": n_answered,
        "correct": n_correct,
        "accuracy": float(accuracy_score(y, pred)),
        "answer_rate": n_answered / n,
        "selective_accuracy": n_correct / n_answered if n_answered else None,
        # An abstention counts as "not true": a false negative on a positive item.
        "f1": float(f1_score(y, np.where(answered, pred, 0), pos_label=1, zero_division=0)),
        "macro_f1": float(f1_score(y, pred, labels=classes, average="macro", zero_division=0)),
    }
    if "conf" in part.columns and n_answered:
        out["ece"] = ece((pred == y)[answered], part["conf"].to_numpy()[answered])
    return out


def bootstrap_accuracy_ci(correct: np.ndarray) -> list[float]:
    """Return the 95% percentile bootstrap interval of accuracy (1,000 resamples)."""
    rng = np.random.default_rng(SEED)
    n = len(correct)
    stats = np.empty(N_RESAMPLES)
    for b in range(N_RESAMPLES):
        stats[b] = correct[rng.integers(0, n, n)].mean()
    return [float(v) for v in np.percentile(stats, [2.5, 97.5])]


def breakdown(df: pd.DataFrame, field: str) -> dict[str, Any]:
    """Return metrics per value of ``field``; an item with a list counts in each value."""
    cols = ["y", "pred"] + (["conf"] if "conf" in df.columns else [])
    exploded = df[[field, *cols]].explode(field).dropna(subset=[field])
    return {str(value): slice_metrics(part) for value, part in exploded.groupby(field, sort=True)}


def popularity(df: pd.DataFrame, thresholds: dict[str, float] | None) -> dict[str, Any]:
    """Return metrics per popularity bucket with the head-minus-tail gap and relative drop.

    A numeric popularity is bucketed by the phase's thresholds (head from head_min, tail up to tail_max).
    """
    if thresholds is not None:
        counts = pd.to_numeric(df["popularity"])
        df = df.assign(popularity=np.where(counts >= thresholds["head_min"], "head",
                                           np.where(counts <= thresholds["tail_max"], "tail", "torso")))
    out = breakdown(df, "popularity")
    if "head" in out and "tail" in out:
        head, tail = out["head"], out["tail"]
        shared = [m for m in CI_METRICS if head.get(m) is not None and tail.get(m) is not None]
        out["gap"] = {m: head[m] - tail[m] for m in shared}
        out["relative_drop"] = {m: (head[m] - tail[m]) / head[m] if head[m] else None for m in shared}
    return out


def evaluate(args: argparse.Namespace, timer: Timer) -> dict[str, Any]:
    """Read the three files and return the result object."""
    config = load_config(args.config)
    labels = load_labels(args.labels)
    timer.lap("read_labels")
    preds = load_predictions(args.predictions)
    timer.lap("read_predictions")
    df = align(labels, preds)
    timer.lap("merge")
    result: dict[str, Any] = {"n_items": len(df), "overall": slice_metrics(df)}
    result["breakdowns"] = {f: breakdown(df, f) for f in config["breakdowns"] if f in df.columns}
    if "popularity" in df.columns:
        result["popularity"] = popularity(df, config.get("popularity"))
    timer.lap("metrics")
    correct = (df["pred"] == df["y"]).to_numpy()
    result["overall"]["ci"] = {"accuracy": bootstrap_accuracy_ci(correct)}
    timer.lap("bootstrap")
    return result


def main() -> None:
    """Parse arguments, score, print the result as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", required=True)
    parser.add_argument("--predictions", required=True)
    parser.add_argument("--config")
    parser.add_argument("--timings", action="store_true", help="print phase timings to stderr")
    args = parser.parse_args()
    timer = Timer()
    result = evaluate(args, timer)
    print(json.dumps(result))
    timer.lap("print")
    if args.timings:
        print(json.dumps({"timings": timer.phases}), file=sys.stderr)


if __name__ == "__main__":
    main()
