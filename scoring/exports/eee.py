"""A phase's board as Every Eval Ever aggregate records (schema 0.3.0 of evaleval/every_eval_ever; docs/MOVING.md).

One record per exported entry (``identity.exported_entries``): who ran what
(``model_info``, the entry's metadata), where it was scored (``source_metadata``: the
competition, phase, split and board; ``eval_library``: Tailboard's scoring library), and
one evaluation result per figure the board shows, the ranking metric first, then the
board's columns. Each result states its direction (``lower_is_better``), its range
(``min_score``/``max_score``; "-Infinity" for a relative drop's open lower end), its 95%
interval (``uncertainty.confidence_interval``, percentile bootstrap) and whether the
figure is exact: a coarse figure keeps its shown value and says so in
``score_details.details`` (``exact: "false"``, ``grid_step``, ``shown_as``) and in the
interval's ``method``. Nothing coarse is ever written as exact.

Timestamps: the schema's two (``retrieved_timestamp``, ``evaluation_timestamp``: when
the submission was made) are whole Unix seconds as text, as the schema describes them;
the same moments are also given in ISO 8601 UTC in ``source_metadata.additional_details``
(``retrieved_at``) and ``model_info.additional_details`` (``submitted_at``).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from scoring.exports import identity
from scoring.exports.identity import bound, epoch_text, iso_utc
from scoring.exports.model import ExportEntry, ExportPhase, Figure, check_aware
from scoring.exports.scales import MetricScale, check_in_range, metric_scale
from scoring.metrics.bootstrap import RESAMPLES

SCHEMA_VERSION = "0.3.0"
LIBRARY_NAME = "tailboard"
INTERVAL_METHOD = f"percentile bootstrap, {RESAMPLES} resamples"
TASK_NAMES = {"binary": "binary (yes/no)", "multiple_choice": "multiple choice"}
AVAILABILITY = {True: "open_weights", False: "closed_weights"}  # metadata open_weights; absent: "unknown"


def every_eval_ever_records(phase: ExportPhase, entries: Iterable[ExportEntry], *, retrieved_at: datetime,
                            include_baselines: bool = False) -> list[dict[str, Any]]:
    """Return one Every Eval Ever 0.3.0 record per ranked entry (and baseline, if asked), in board order."""
    check_aware(retrieved_at, what="retrieved_at")
    chosen = identity.exported_entries(phase, entries, include_baselines=include_baselines)
    return [identity.sorted_object(_record(phase, entry, retrieved_at)) for entry in chosen]


def _record(phase: ExportPhase, entry: ExportEntry, retrieved_at: datetime) -> dict[str, Any]:
    """Return the record of one entry."""
    board = phase.split or "all"
    return {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": (f"{identity.FALLBACK_PREFIX}/{phase.competition_slug}/phase-{phase.phase_id}/{board}/"
                          f"submission-{entry.submission_id}"),
        "evaluation_timestamp": epoch_text(entry.submitted_at),
        "retrieved_timestamp": epoch_text(retrieved_at),
        "source_metadata": _source_metadata(phase, entry, retrieved_at),
        "eval_library": {"name": LIBRARY_NAME, "version": phase.library_version},
        "model_info": _model_info(phase, entry),
        "evaluation_results": [_result(phase, entry, path, entry.figures[path])
                               for path in phase.paths if path in entry.figures],
    }


def _source_metadata(phase: ExportPhase, entry: ExportEntry, retrieved_at: datetime) -> dict[str, Any]:
    """Return where the figures come from: the platform, the competition's phase and the board shown."""
    return {
        "source_name": f"{phase.platform_name}: {phase.competition_title}",
        "source_type": "evaluation_run",  # Tailboard scored the predictions itself, on labels it keeps
        "source_organization_name": phase.platform_name,
        # relative to the model's developer: a built-in baseline is the platform's own
        "evaluator_relationship": "first_party" if entry.builtin else "third_party",
        "additional_details": {
            "competition": phase.competition_slug, "competition_url": phase.competition_url,
            "phase_id": str(phase.phase_id), "phase_name": phase.phase_name, "board_url": phase.phase_url,
            "split": phase.split or "all", "task_type": phase.task_type,
            "phase_status": "closed" if phase.closed else "open", "view": phase.view_name,
            "ranking_metric": phase.ranking_metric, "retrieved_at": iso_utc(retrieved_at),
        },
    }


def _model_info(phase: ExportPhase, entry: ExportEntry) -> dict[str, Any]:
    """Return the model: its id (declared, or Tailboard's fallback), name, developer and the entry's metadata."""
    model_id, fallback = identity.model_id(phase, entry)
    open_weights = entry.metadata.get("open_weights")
    details = identity.entry_details(entry)
    details.update({
        "deployment_type": "unknown",  # participants run their systems themselves; Tailboard is not told how
        "model_availability": AVAILABILITY[open_weights] if isinstance(open_weights, bool) else "unknown",
        "model_id_source": "tailboard_fallback" if fallback else "metadata.model_id",
    })
    info: dict[str, Any] = {"name": identity.model_name(phase, entry), "id": model_id, "additional_details": details}
    maker = identity.developer(entry)
    if maker is not None:
        info["developer"] = maker
    return info


def _result(phase: ExportPhase, entry: ExportEntry, path: str, figure: Figure) -> dict[str, Any]:
    """Return one evaluation result: the figure with its metric's direction, range, interval and exactness."""
    scale = metric_scale(path, task_type=phase.task_type)
    check_in_range(scale, figure.value, where=f"submission {entry.submission_id}")
    result: dict[str, Any] = {
        "evaluation_result_id": path,
        "evaluation_name": _evaluation_name(phase, scale),
        "evaluation_timestamp": epoch_text(entry.submitted_at),
        "source_data": _source_data(phase),
        "metric_config": _metric_config(phase, scale),
        "score_details": _score_details(entry, figure, ranked=path == phase.ranking_metric),
    }
    prompting = entry.metadata.get("prompting")
    if isinstance(prompting, str) and prompting.strip():
        generation: dict[str, Any] = {"additional_details": {"prompting": prompting}}
        if prompting == "chain-of-thought":
            generation["generation_args"] = {"reasoning": True}
        result["generation_config"] = generation
    return result


def _evaluation_name(phase: ExportPhase, scale: MetricScale) -> str:
    """Return the evaluation's dotted name: competition and phase, then the slice (nothing for overall)."""
    name = f"{identity.FALLBACK_PREFIX}.{phase.competition_slug}.phase-{phase.phase_id}"
    return name if scale.slice == "overall" else f"{name}.{scale.slice}"


def _source_data(phase: ExportPhase) -> dict[str, Any]:
    """Return the benchmark's data: its Hub dataset if it has one, else the competition's page."""
    details = {"phase_name": phase.phase_name, "split": phase.split or "all", "labels": "hidden"}
    if phase.hf_dataset:
        return {"dataset_name": phase.competition_title, "source_type": "hf_dataset", "hf_repo": phase.hf_dataset,
                "additional_details": details}
    return {"dataset_name": phase.competition_title, "source_type": "url", "url": [phase.competition_url],
            "additional_details": details}


def _metric_config(phase: ExportPhase, scale: MetricScale) -> dict[str, Any]:
    """Return the metric: ids, name, direction, continuous range (unbounded ends as "Infinity" strings)."""
    label = phase.label(scale.path)
    split = f"{phase.split} split" if phase.split else "all items"
    return {
        "evaluation_description": (f"{label} on {phase.competition_title}, {phase.phase_name} ({split}, "
                                   f"{TASK_NAMES[phase.task_type]}), scored by {phase.platform_name} "
                                   "on hidden labels"),
        "metric_id": scale.metric_id,
        "metric_name": label,
        "metric_kind": scale.kind,
        "metric_unit": scale.unit,
        "metric_parameters": {"metric_path": scale.path, "slice": scale.slice},
        "lower_is_better": scale.lower_is_better,
        "score_type": "continuous",
        "min_score": bound(scale.min_score),
        "max_score": bound(scale.max_score),
        "additional_details": {"ranked_by": "true" if scale.path == phase.ranking_metric else "false"},
    }


def _score_details(entry: ExportEntry, figure: Figure, *, ranked: bool) -> dict[str, Any]:
    """Return the score as shown, whether it is exact, and its 95% interval (marked when shown on a grid)."""
    details = {"exact": "true" if figure.exact else "false"}
    if not figure.exact:
        details["grid_step"] = repr(figure.step)
        details["shown_as"] = (f"coarse: rounded to a multiple of {figure.step} with noise drawn from the "
                               "submission's answers, so it may lie a few steps from the exact value"
                               if figure.noisy else
                               f"rounded to a multiple of {figure.step} (the phase's ladder)")
    if ranked:
        details.update({key: str(value) for key, value in (("rank", entry.rank), ("stat_rank", entry.stat_rank))
                        if value is not None})
    out: dict[str, Any] = {"score": figure.value, "details": details}
    if figure.ci is not None:
        method = INTERVAL_METHOD if figure.exact else f"{INTERVAL_METHOD}; bounds shown on the {figure.step} grid"
        out["uncertainty"] = {
            "confidence_interval": {"lower": figure.ci[0], "upper": figure.ci[1],
                                    "confidence_level": identity.CI_LEVEL, "method": method},
            "num_bootstrap_samples": RESAMPLES,
        }
    return out
