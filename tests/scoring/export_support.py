"""Boards of each importer's phase type, scored for real, as the platform would hand them to the exports.

Each board is a small label file shaped like a benchmark Tailboard imports (CREAK,
CoLoTa, ComparisonQA, TG-CSR, LINT, and one without slices), a few simulated systems
scored by ``scoring.evaluate``, ranked by the phase's metric, and turned into
``ExportEntry`` rows: exact figures where the board shows them exact, the others on a
grid (``step``) as docs/PROBING.md's coarse figures are.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from scoring import evaluate, load_labels
from scoring.exports import ExportEntry, ExportPhase, Figure
from scoring.exports.scales import metric_scale
from scoring.labels import LabelSet
from scoring.metrics.paths import path_value
from scoring.predictions import read_predictions

RETRIEVED_AT = datetime(2026, 12, 1, 9, 30, tzinfo=UTC)
STEP = 0.05
Item = dict[str, Any]


@dataclass(frozen=True)
class Kind:
    """A phase type: how its items look, its config, what it ranks by and which columns the board shows."""

    name: str
    task_type: str
    ranking: str
    columns: tuple[str, ...]
    items: Callable[[random.Random], list[Item]]
    config: Mapping[str, Any] = field(default_factory=dict)


def _creak(rng: random.Random) -> list[Item]:
    domains = ("geography", "science", "sports")
    return [{"id": f"c{i}", "label": rng.random() < 0.5, "category": domains[i % 3],
             "popularity": "head" if i % 2 else "tail"} for i in range(120)]


def _colota(rng: random.Random) -> list[Item]:
    return [{"id": f"q{i}", "label": rng.random() < 0.5, "category": ("Q&A", "claims")[i % 2],
             "popularity": ("head", "tail", "tail")[i % 3], "split": "private" if i % 4 == 0 else "public"}
            for i in range(150)]


def _comparisonqa(rng: random.Random) -> list[Item]:
    return [{"id": f"p{i}", "label": rng.choice("ABCD"), "pair": f"pair{i // 2}",
             "popularity": "head" if i % 2 == 0 else "tail"} for i in range(120)]


def _tgcsr(rng: random.Random) -> list[Item]:
    areas = ("time", "space", "goals")
    return [{"id": f"t{i}", "label": rng.random() < 0.4, "group": f"question{i // 4}", "category": areas[i // 4 % 3]}
            for i in range(120)]


def _lint(rng: random.Random) -> list[Item]:
    return [{"id": f"s{i}", "label": rng.random() < 0.5, "group": f"statement{i // 13}",
             "popularity": "head" if i // 13 % 2 else "tail", "category": ("film", "music")[i // 26 % 2]}
            for i in range(13 * 8)]


def _plain(rng: random.Random) -> list[Item]:
    return [{"id": f"x{i}", "label": rng.random() < 0.5} for i in range(80)]


KINDS: dict[str, Kind] = {k.name: k for k in (
    Kind("creak", "binary", "accuracy",
         ("popularity.head.accuracy", "popularity.tail.accuracy", "popularity.gap.accuracy",
          "popularity.relative_drop.accuracy", "breakdowns.category.geography.accuracy",
          "breakdowns.category.science.accuracy", "breakdowns.category.sports.accuracy"), _creak),
    Kind("colota", "binary", "popularity.tail.accuracy",
         ("accuracy", "popularity.head.accuracy", "popularity.gap.accuracy", "breakdowns.category.Q&A.accuracy"),
         _colota),
    Kind("comparisonqa", "multiple_choice", "avg_macro_f1",
         ("accuracy", "popularity.head.macro_f1_fixed", "popularity.tail.macro_f1_fixed",
          "popularity.gap.macro_f1_fixed", "pairs.both_correct", "pairs.neither"), _comparisonqa,
         {"options": ["A", "B", "C", "D"]}),
    Kind("tgcsr", "binary", "f1", ("accuracy", "group_accuracy", "breakdowns.category.time.accuracy"), _tgcsr),
    Kind("lint", "binary", "group_accuracy",
         ("accuracy", "popularity.head.accuracy", "popularity.tail.accuracy", "popularity.relative_drop.accuracy"),
         _lint),
    Kind("plain", "binary", "accuracy", (), _plain),
)}

SYSTEMS: tuple[dict[str, Any], ...] = (
    # skill: chance to answer right; who; metadata as typed on the upload form
    {"skill": 0.8, "team": "KG Reasoners", "user": "ana", "method": "graph walk",
     "metadata": {"model_id": "meta-llama/Llama-3-8B", "model": "Llama 3 8B + KG", "open_weights": True,
                  "parameters_b": 8, "prompting": "chain-of-thought", "uses_knowledge_graph": True}},
    {"skill": 0.7, "team": None, "user": "bo/b", "method": "default",
     "metadata": {"prompting": "few-shot", "notes": "zero retrieval"}},
    {"skill": 0.6, "team": "Tail/Enders", "user": "cy", "method": "v2 (final)",
     "metadata": {"model_id": "openai/gpt-4o-mini", "open_weights": False}},
    {"skill": 0.5, "team": None, "user": "Majority", "method": "majority", "baseline": "builtin", "metadata": {}},
    {"skill": 0.75, "team": None, "user": "Human", "method": "Human", "baseline": "organizer",
     "metadata": {"notes": "three annotators"}},
)


def scored_board(kind_name: str, *, closed: bool = False, coarse: bool = True, ladder: bool = False,
                 hf_dataset: str | None = None) -> tuple[ExportPhase, list[ExportEntry], dict[int, dict[str, Any]]]:
    """Return a phase of this type, its board's entries in board order, and each submission's exact result.

    Open phases with a private split show the public split, closed ones the private split.
    With ``coarse``, every figure but the ranked one is put on the grid; with ``ladder``
    the ranked one too (rounded, no noise).
    """
    kind = KINDS[kind_name]
    rng = random.Random(kind_name)
    items = kind.items(rng)
    labels = _labels(kind, items)
    has_split = any("split" in item for item in items)
    split = ("private" if closed else "public") if has_split else None
    phase = ExportPhase(
        competition_slug=kind.name, competition_title=kind.name.upper(),
        competition_url=f"https://tailboard.example/competitions/{kind.name}", phase_id=len(kind.name),
        phase_name="Test phase", phase_url=f"https://tailboard.example/phases/{len(kind.name)}",
        task_type=kind.task_type, split=split, closed=closed,  # type: ignore[arg-type]
        ranking_metric=kind.ranking, columns=kind.columns, hf_dataset=hf_dataset, library_version="0.1.0",
        labels={kind.ranking: f"{kind.ranking} (ranked)"})
    results, rows = {}, []
    for number, system in enumerate(SYSTEMS, start=1):
        result = evaluate(labels, read_predictions(_predictions(items, system["skill"], rng, kind), labels))
        shown = result["splits"][split] if split else result
        results[number] = shown
        rows.append((number, system, shown))
    return phase, _ranked(phase, rows, coarse=coarse, ladder=ladder), results


def path_ci(result: Mapping[str, Any], path: str) -> tuple[float, float] | None:
    """Return a metric path's 95% interval in a result object, None where it has none."""
    parts = path.split(".")
    if len(parts) == 1:
        holder: Any = result.get("overall")
    elif parts[0] == "breakdowns":
        holder = result["breakdowns"][parts[1]][".".join(parts[2:-1])]
    else:
        holder = result.get(parts[0], {}).get(parts[1]) if parts[0] != "pairs" else result.get("pairs")
    ci = (holder or {}).get("ci", {}).get(parts[-1])
    return (float(ci[0]), float(ci[1])) if ci is not None and None not in ci else None


def _labels(kind: Kind, items: list[Item]) -> LabelSet:
    text = "\n".join(json.dumps(item) for item in items).encode()
    config = {"task_type": kind.task_type, "primary_metric": kind.ranking, **kind.config,
              "views": [{"name": "Overall", "metric": kind.ranking, "columns": list(kind.columns)}]}
    return load_labels(text, config)


def _predictions(items: list[Item], skill: float, rng: random.Random, kind: Kind) -> bytes:
    rows = ["id,prediction"]
    for item in items:
        gold = item["label"]
        if rng.random() < 0.05:
            answer = ""
        elif kind.task_type == "binary":
            answer = str(gold if rng.random() < skill else not gold).lower()
        else:
            answer = gold if rng.random() < skill else rng.choice([o for o in "ABCD" if o != gold])
        rows.append(f"{item['id']},{answer}")
    return "\n".join(rows).encode()


def _ranked(phase: ExportPhase, rows: list[tuple[int, dict[str, Any], dict[str, Any]]], *, coarse: bool,
            ladder: bool) -> list[ExportEntry]:
    """Return the rows in board order: by the ranking value (best first), baselines placed by value, unranked."""
    higher = metric_scale(phase.ranking_metric, task_type=phase.task_type).higher_is_better
    order = sorted(rows, key=lambda row: -_value(row[2], phase.ranking_metric) * (1 if higher else -1))
    entries, rank = [], 0
    for number, system, result in order:
        baseline = "baseline" in system
        rank += 0 if baseline else 1
        entries.append(ExportEntry(
            rank=None if baseline else rank, stat_rank=None if baseline else max(1, rank - 1),
            display_name=system["team"] or system["user"], team=system["team"], method=system["method"],
            metadata=system["metadata"], submitted_at=datetime(2026, 11, 20, 8, tzinfo=UTC) + timedelta(hours=number),
            submission_id=100 + number, figures=_figures(phase, result, coarse=coarse, ladder=ladder),
            is_baseline=baseline, builtin=system.get("baseline") == "builtin"))
    return entries


def _figures(phase: ExportPhase, result: dict[str, Any], *, coarse: bool, ladder: bool) -> dict[str, Figure]:
    figures = {}
    for path in phase.paths:
        value = path_value(result, path)
        if value is None:
            continue
        ranked = path == phase.ranking_metric
        if (coarse and not ranked) or (ladder and ranked):
            ci = path_ci(result, path)
            figures[path] = Figure(_grid(value), (_grid(ci[0]), _grid(ci[1])) if ci else None, step=STEP,
                                   noisy=not ranked)
        else:
            figures[path] = Figure(value, path_ci(result, path))
    return figures


def _grid(value: float) -> float:
    return round(round(value / STEP) * STEP, 10)


def _value(result: dict[str, Any], path: str) -> float:
    value = path_value(result, path)
    return -math.inf if value is None else value
