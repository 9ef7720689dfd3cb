"""A phase's board as Hugging Face model-card eval results (``huggingface_hub``'s ``EvalResult``; docs/MOVING.md).

One record per exported entry: ``eval_results``, a list of plain dicts whose keys are
``EvalResult``'s keyword arguments (``EvalResult(**d)`` builds one), and
``model-index``, the same results as the YAML a model card's header carries
(``huggingface_hub.repocard_data.eval_results_to_model_index`` gives the same
structure). The library never imports ``huggingface_hub``; the tests check the records
with it.

**Exact figures only.** ``EvalResult`` has no field for an interval's exactness or a
grid, and every reader of a model index (the Hub's widgets, paper tables) takes a
``value`` as the figure itself. So a coarse figure (docs/PROBING.md) is left out, never
exported under another name; the record lists it in ``left_out`` with its step. In a
phase whose ranked figure is laddered, entries may have no result at all (empty lists).

Per result: ``task_type`` is ``text-classification`` (yes/no) or ``multiple-choice``;
``dataset_type`` the benchmark's Hub dataset id, else ``tailboard/<competition>`` (not a
Hub id); ``dataset_config`` the phase's name; ``dataset_split`` the split shown (``test``
when the phase has no private split); ``metric_type`` the same id as in Every Eval Ever
(``scales.metric_scale``); ``metric_config`` the metric path (it tells the slices
apart); ``metric_args`` the direction, range and 95% interval: ``lower_is_better``,
``min_score``, ``max_score`` (``"-Infinity"`` for a relative drop) and ``ci95``
(``[lo, hi]``, absent without an interval); ``source_name``/``source_url`` the board.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from scoring.exports import identity
from scoring.exports.identity import bound, iso_utc
from scoring.exports.model import ExportEntry, ExportPhase, Figure
from scoring.exports.scales import check_in_range, metric_scale

HF_TASKS = {"binary": ("text-classification", "Yes/no classification"),
            "multiple_choice": ("multiple-choice", "Multiple choice")}


def hf_eval_results(phase: ExportPhase, entries: Iterable[ExportEntry], *,
                    include_baselines: bool = False) -> list[dict[str, Any]]:
    """Return one model-card eval-results record per ranked entry (and baseline, if asked), in board order."""
    chosen = identity.exported_entries(phase, entries, include_baselines=include_baselines)
    return [identity.sorted_object(_record(phase, entry)) for entry in chosen]


def _record(phase: ExportPhase, entry: ExportEntry) -> dict[str, Any]:
    """Return the record of one entry: who it is, its exact results, their model index, what was left out."""
    model_id, fallback = identity.model_id(phase, entry)
    name = identity.model_name(phase, entry)
    shown = [(path, entry.figures[path]) for path in phase.paths if path in entry.figures]
    results = [_eval_result(phase, entry, path, figure) for path, figure in shown if figure.exact]
    return {
        "model_id": None if fallback else model_id,  # the Hub repo whose card these results belong in
        "model_name": name,
        "tailboard_id": model_id,
        "entry": {"rank": entry.rank, "stat_rank": entry.stat_rank, "display_name": entry.display_name,
                  "team": entry.team, "method": entry.method, "is_baseline": entry.is_baseline,
                  "submission_id": entry.submission_id, "submitted_at": iso_utc(entry.submitted_at)},
        "eval_results": results,
        "model-index": _model_index(name, results) if results else [],
        "left_out": [{"metric_path": path, "reason": "coarse", "step": figure.step}
                     for path, figure in shown if not figure.exact],
    }


def _eval_result(phase: ExportPhase, entry: ExportEntry, path: str, figure: Figure) -> dict[str, Any]:
    """Return one exact figure as ``EvalResult`` keyword arguments."""
    scale = metric_scale(path, task_type=phase.task_type)
    check_in_range(scale, figure.value, where=f"submission {entry.submission_id}")
    task_type, task_name = HF_TASKS[phase.task_type]
    args: dict[str, Any] = {"lower_is_better": scale.lower_is_better,
                            "min_score": bound(scale.min_score), "max_score": bound(scale.max_score)}
    if figure.ci is not None:
        args["ci95"] = [figure.ci[0], figure.ci[1]]
    return {
        "task_type": task_type,
        "task_name": task_name,
        "dataset_type": phase.hf_dataset or f"{identity.FALLBACK_PREFIX}/{phase.competition_slug}",
        "dataset_name": phase.competition_title,
        "dataset_config": phase.phase_name,
        "dataset_split": phase.split or "test",
        "metric_type": scale.metric_id,
        "metric_name": phase.label(path),
        "metric_config": path,
        "metric_value": figure.value,
        "metric_args": args,
        "source_name": f"{phase.platform_name}: {phase.competition_title}",
        "source_url": phase.phase_url,
    }


def _model_index(name: str, results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return the results as a model card's ``model-index``: one entry (they share task, dataset, config, split)."""
    first = results[0]
    return [{"name": name, "results": [{
        "task": {"type": first["task_type"], "name": first["task_name"]},
        "dataset": {"name": first["dataset_name"], "type": first["dataset_type"],
                    "config": first["dataset_config"], "split": first["dataset_split"]},
        "metrics": [{"type": r["metric_type"], "value": r["metric_value"], "name": r["metric_name"],
                     "config": r["metric_config"], "args": r["metric_args"]} for r in results],
        "source": {"name": first["source_name"], "url": first["source_url"]},
    }]}]
