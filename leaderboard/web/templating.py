"""Jinja filters and globals for showing scores, dates and metric names to people.

Metric names, labels and directions come from scoring's registry (``scoring.METRICS``);
this module only decides how they are shown.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from flask import Flask, current_app
from markupsafe import Markup, escape

from leaderboard.accounts import phase_status
from leaderboard.board import headtail_metric, path_label
from leaderboard.platform.db import naive_utc
from leaderboard.web.charts import result_charts, value_range
from leaderboard.web.errors import size_text
from scoring import METRICS, UnknownMetricError, metric_label

CURVE_ONLY = frozenset({"aurc"})
"""Registry metrics summarised by a curve on the submission page rather than shown as a column."""
RATE_METRICS = tuple(name for name in METRICS if name not in CURVE_ONLY)
"""The metrics shown as columns, in the registry's order; counts are shown separately."""
LOWER_IS_BETTER = frozenset(name for name, metric in METRICS.items() if not metric.higher_is_better)

GLOSSARY = (
    ("accuracy", "Share of all items answered correctly. An abstention counts as wrong."),
    ("answer_rate", "Share of items the system answered instead of abstaining."),
    ("selective_accuracy", "Accuracy over the answered items only: how often the system is right when it does answer."),
    ("f1", ("For yes/no tasks, F1 of the “true” class (an abstention on a true item is a miss); "
            "for multiple choice, the same as macro-F1.")),
    ("macro_f1", ("The F1 of every answer class, averaged with equal weight, so a system cannot score well "
                  "by always giving the most common answer.")),
    ("macro_f1_fixed", ("Macro-F1 over every answer option of the phase, an option never seen counting 0: "
                        "ComparisonQA's own definition (Tailboard's macro-F1 averages over the options present).")),
    ("avg_macro_f1", ("ComparisonQA's “avg Macro F1”: the mean of the head side's and the tail side's macro-F1 "
                      "(every option) over complete head/tail pairs.")),
    ("group_accuracy", ("Share of groups (e.g. all templates of one statement, or all candidates of one question) "
                        "in which every item is answered correctly.")),
    ("ece", ("Expected calibration error: how far stated confidence is from actual accuracy, "
             "averaged over 10 confidence bins. Lower is better; only shown when confidences are given.")),
)


def query_string(args: dict[str, Any]) -> str:
    """Return "?a=1&b=2" for link arguments ("" for none), encoded exactly as url_for encodes its query.

    The ranking page builds dozens of links to itself per render; its base path comes from
    one url_for and each link's arguments from this filter, a tenth of url_for's cost.
    """
    items = [(key, value) for key, value in args.items() if value is not None]
    return "?" + urlencode(items, safe="!$'()*,/:;?@") if items else ""


def init_app(app: Flask) -> None:
    """Register Tailboard's template filters and globals on app."""
    app.jinja_env.filters.update(
        score=score,
        utc=utc,
        isoutc=isoutc,
        metric_name=metric_name,
        paragraphs=paragraphs,
        signed=signed,
        percent=percent,
        pvalue=pvalue,
        short=short,
        path_name=path_label,
        query=query_string,
    )
    app.jinja_env.globals.update(
        RATE_METRICS=RATE_METRICS,
        GLOSSARY=GLOSSARY,
        LOWER_IS_BETTER=LOWER_IS_BETTER,
        split_of=split_of,
        present_metrics=present_metrics,
        breakdown_values=breakdown_values,
        phase_status=phase_status,
        headtail_metric=headtail_metric,
        result_charts=result_charts,
        value_range=value_range,
        coarse_step=coarse_step,
    )
    app.context_processor(_upload_limit)


def coarse_step(part: Any, metric: str) -> float | None:
    """Return the step of a coarse figure of a shown slice (its grid), None when the figure is exact."""
    if not isinstance(part, dict) or not isinstance(part.get("grid"), float):
        return None
    return None if metric in (part.get("exact") or ()) else float(part["grid"])


def score(value: Any, digits: int = 4) -> str:
    """Format a metric value to a fixed number of decimals; None shows as an en dash."""
    if value is None or isinstance(value, bool):
        return "–"
    if isinstance(value, int):
        return str(value)
    try:
        return f"{float(value):.{digits}f}"
    except (TypeError, ValueError):
        return "–"


def signed(value: Any, digits: int = 4) -> str:
    """Format a difference with an explicit sign (+0.1234, −0.0500)."""
    if value is None:
        return "–"
    number = float(value)
    text = f"{abs(number):.{digits}f}"
    return ("+" if number > 0 else "−" if number < 0 else "±") + text


def short(value: Any) -> str:
    """Format a figure compactly: at most 4 decimals, at least 2 (0.7 → 0.70, 0.7333 → 0.7333); None as a dash."""
    if value is None or isinstance(value, bool):
        return "–"
    if isinstance(value, int):
        return str(value)
    text = f"{float(value):.4f}".rstrip("0")
    return text + "0" * max(0, 2 - len(text.split(".")[1]))


def pvalue(value: Any) -> str:
    """Format a p-value to 4 decimals; below 0.0001 as '< 0.0001'; None as an en dash."""
    if value is None:
        return "–"
    return "< 0.0001" if float(value) < 0.0001 else f"{float(value):.4f}"


def percent(value: Any, digits: int = 1) -> str:
    """Format a share as a percentage (0.1234 → 12.3%)."""
    if value is None:
        return "–"
    return f"{float(value) * 100:.{digits}f}%"


def utc(value: datetime | None, with_time: bool = True) -> str:
    """Format a naive-UTC timestamp as '2025-03-01 14:00 UTC'."""
    if value is None:
        return "—"
    return naive_utc(value).strftime("%Y-%m-%d %H:%M UTC" if with_time else "%Y-%m-%d")


def isoutc(value: datetime | None) -> str:
    """Format a naive-UTC timestamp as ISO 8601 with a Z, for <time datetime=...>."""
    if value is None:
        return ""
    return naive_utc(value).strftime("%Y-%m-%dT%H:%M:%SZ")


def metric_name(key: str) -> str:
    """Return the human name of a metric or count (the registry's label), of a metric path as the board names it."""
    if "." in key:
        return path_label(key)
    try:
        return metric_label(key)
    except UnknownMetricError:
        return key.replace("_", " ").capitalize()


def paragraphs(text: str | None) -> Markup:
    """Render plain text as escaped HTML paragraphs split on blank lines."""
    if not text:
        return Markup("")
    blocks = [block.strip() for block in str(text).replace("\r\n", "\n").split("\n\n") if block.strip()]
    return Markup("\n").join(Markup("<p>{}</p>").format(Markup("<br>").join(escape(b).split("\n"))) for b in blocks)


def split_of(results: Mapping[str, Any] | None, split: str | None) -> Mapping[str, Any]:
    """Return the result object of one split ('public'/'private'), or the whole object for 'all'."""
    if not results:
        return {}
    splits = results.get("splits") or {}
    if split in ("public", "private"):
        return splits.get(split) or ({} if splits else results)
    return results if "overall" in results else splits.get("public") or {}


def present_metrics(slices: list[Mapping[str, Any]], task_type: str | None = None) -> list[str]:
    """Return the rate metrics that have a value in at least one slice (F1 = macro-F1 for multiple choice)."""
    skip = {"f1"} if task_type == "multiple_choice" else set()
    return [m for m in RATE_METRICS if m not in skip and any((s or {}).get(m) is not None for s in slices)]


def breakdown_values(rows: list[Mapping[str, Any]], field: str) -> list[str]:
    """Return the sorted union of a breakdown field's values over several result objects."""
    values: set[str] = set()
    for result in rows:
        values.update(((result or {}).get("breakdowns") or {}).get(field, {}).keys())
    return sorted(values)


def _upload_limit() -> dict[str, int | str]:
    """Expose the instance's upload size limit (in MiB, and in words: "100 MiB", "4 KiB") to every template."""
    limit = current_app.extensions["tailboard"].settings.max_upload_bytes
    return {"max_upload_mb": limit // (1024 * 1024), "max_upload": size_text(limit)}

