"""What the disclosure rules cost a participant: which figures of a realistic submission are exact, coarse or hidden.

For each benchmark release it finds (../shared/datasets when it is beside the checkout,
else the small files in leaderboard/demo/), it imports the release with the project's own
importer, scores a simulated model (right on 75% of head items and 60% of the rest,
abstaining on 5%), and reads the result as a participant does
(``visibility.visible_results``) under the rules, and with OVERALL_BOUNDED off (every
overall rate exact, as before issue 17). It prints, per release, the figures a
participant reads:

- exact: shown to 4 decimals (the figures the phase ranks by, the file's own counts);
- coarse: shown ± a step, with the steps used and the largest distance between a shown
  coarse figure and its exact value (about a step, now and then two or three);
- hidden: slices below ``min_slice_items`` answered items, calibration below 100.

Usage: python bench/disclosure_cost.py [--datasets DIR]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from leaderboard.disclosure import policy, visibility, with_draw  # noqa: E402
from scoring import evaluate, load_labels, read_predictions  # noqa: E402
from scoring.importers import run_import  # noqa: E402

RATE_KEYS = ("accuracy", "answer_rate", "selective_accuracy", "f1", "macro_f1", "group_accuracy")


def releases(datasets: Path) -> Iterator[tuple[str, str, Path, dict[str, Any]]]:
    """Yield (name, importer, source, options) of each release found, the demo files when datasets are absent."""
    colota = datasets / "colota"
    if (colota / "CoLoTa_qa.json").exists():
        yield "CoLoTa QA (--originals)", "colota", colota / "CoLoTa_qa.json", {
            "originals": colota / "baselines" / "data" / "QA-original.csv"}
        yield "CREAK dev", "creak", datasets / "creak" / "dev.json", {}
        tgcsr = datasets / "tg-csr" / "jsonl" / "vacationing-abroad-mc.jsonl"
        yield "TG-CSR vacationing abroad (mc)", "tgcsr", tgcsr, {}
        return
    demo = ROOT / "leaderboard" / "demo"
    originals = {"originals": demo / "colota_qa_originals.csv"}
    yield "CoLoTa demo (--originals)", "colota", demo / "colota_qa.json", originals
    yield "TG-CSR demo", "tgcsr", demo / "tgcsr_camping.jsonl", {}


def simulated_predictions(labels_path: Path, seed: int = 11) -> bytes:
    """Return a CSV of a model right on 75% of head items and 60% of the others, abstaining on 5%."""
    rng = np.random.default_rng(seed)
    rows = ["id,prediction"]
    for line in labels_path.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        truth = str(item["label"]).lower() in ("true", "yes", "1")
        right = rng.random() < (0.75 if item.get("popularity") == "head" else 0.6)
        answer = "" if rng.random() < 0.05 else ("true" if truth == right else "false")
        rows.append(f"{item['id']},{answer}")
    return ("\n".join(rows) + "\n").encode()


def figures(shown: Any, exact: Any, path: str = "") -> Iterator[tuple[str, str, float | None, float]]:
    """Yield (path, kind, step, distance) of every rate a shown result carries: kind exact or coarse."""
    if not isinstance(shown, dict):
        return
    grid = shown.get("grid") if isinstance(shown.get("grid"), float) else None
    for key, value in shown.items():
        if key in RATE_KEYS and isinstance(value, float):
            kept = grid is None or key in (shown.get("exact") or ())
            truth = exact.get(key) if isinstance(exact, dict) else None
            distance = abs(value - truth) if isinstance(truth, float) else 0.0
            yield f"{path}{key}", "exact" if kept else "coarse", None if kept else grid, distance
        elif isinstance(value, dict) and key not in ("ci", "gap", "relative_drop", "error"):
            yield from figures(value, exact.get(key) if isinstance(exact, dict) else None, f"{path}{key}.")


def rate_count(result: Any) -> int:
    """Return how many rates a (full) result object holds in its slices."""
    if not isinstance(result, dict):
        return 0
    own = sum(1 for key, value in result.items() if key in RATE_KEYS and isinstance(value, float))
    return own + sum(rate_count(v) for k, v in result.items() if isinstance(v, dict) and k not in (
        "ci", "gap", "relative_drop"))


def measure(name: str, importer: str, source: Path, options: dict[str, Any]) -> list[str]:
    """Return the report lines of one release."""
    with tempfile.TemporaryDirectory() as out:
        run_import(importer, source, Path(out), **options)
        config = json.loads((Path(out) / "phase.json").read_text(encoding="utf-8"))
        labels = load_labels(Path(out) / "labels.jsonl", config=config)
        predictions = read_predictions(simulated_predictions(Path(out) / "labels.jsonl"), labels)
        results = with_draw(evaluate(labels, predictions), predictions)
    phase = SimpleNamespace(id=1, labels_sha256="5e" * 32, has_private_split=False, state_override="open",
                            start_at=None, end_at=None, task_config=config,
                            primary_metric=config.get("primary_metric", "accuracy"))
    lines = [f"{name}: {results['n_items']} items, ranked by {phase.primary_metric}; "
             f"{rate_count(results)} rates in the full result"]
    for label, bounded in (("overall exact", False), ("now", True)):
        policy.OVERALL_BOUNDED = bounded
        shown = list(figures(visibility.visible_results(results, phase=phase), results))
        kinds = Counter(kind for _, kind, _, _ in shown)
        steps = Counter(step for _, kind, step, _ in shown if kind == "coarse")
        worst = max((d for _, kind, _, d in shown if kind == "coarse"), default=0.0)
        overall = sorted(p for p, kind, _, _ in shown if kind == "exact" and p.startswith("overall."))
        lines.append(f"  {label:<16} exact {kinds['exact']:>3}  coarse {kinds['coarse']:>3} "
                     f"(steps {dict(sorted(steps.items()))}, largest distance {worst:.4f})  "
                     f"hidden {rate_count(results) - len(shown):>3};  exact in overall: {', '.join(overall)}")
    policy.OVERALL_BOUNDED = True
    return lines


def main() -> None:
    """Print the exact/coarse/hidden figures of a simulated submission to each release found."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=Path, default=ROOT.parent / "shared" / "datasets")
    args = parser.parse_args()
    for name, importer, source, options in releases(args.datasets):
        print("\n".join(measure(name, importer, source, options)))


if __name__ == "__main__":
    main()
