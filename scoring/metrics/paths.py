"""Metric paths (docs/METRICS.md, Metric paths): which number of a result object a path names, and which way is better.

A path is read relative to a result object (or the split object shown):

- ``<metric>``: the overall slice, e.g. ``accuracy``, ``ece``, ``aurc``, ``avg_macro_f1``
  (a metric of head/tail pairs, such as ``avg_macro_f1``, is only an overall path);
- ``popularity.<head|torso|tail>.<metric>``;
- ``popularity.gap.<metric>`` and ``popularity.relative_drop.<metric>``, for the
  metrics that carry an interval: lower is better (a smaller head-tail difference);
- ``breakdowns.<field>.<value>.<metric>`` (the value may itself hold dots);
- ``pairs.<both_correct|head_only|tail_only|neither>``.

Lower is better for ``ece``, ``aurc`` and every gap and relative drop; higher for the
rest (docs/METRICS.md, Metric paths: that includes ``pairs.neither``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from scoring.metrics.registry import METRICS, PAIR_SHARES, UnknownMetricError, get_metric
from scoring.types import BUCKET_NAMES

DIFFERENCES = ("gap", "relative_drop")


@dataclass(frozen=True)
class MetricPath:
    """A checked metric path: the registry metric (or pair share) it ends in, and its direction."""

    path: str
    metric: str
    higher_is_better: bool


def resolve_path(path: str) -> MetricPath:
    """Return what a metric path names, or raise UnknownMetricError listing the valid paths."""
    parts = path.split(".") if isinstance(path, str) else []
    found = _resolve(parts)
    if found is None:
        raise UnknownMetricError(f"unknown metric path {path!r}; valid paths: {valid_paths_text()}")
    metric, higher = found
    return MetricPath(path=path, metric=metric, higher_is_better=higher)


def higher_is_better(path: str) -> bool:
    """Return whether a larger value of a metric name or path is better; unknown ones raise UnknownMetricError."""
    return resolve_path(path).higher_is_better


def path_value(result: Mapping[str, Any] | None, path: str) -> float | None:
    """Return the number a metric path names in a result object (or split object); None where absent or null.

    ``accuracy`` reads ``result["overall"]["accuracy"]``; ``popularity.tail.accuracy``,
    ``popularity.gap.accuracy``, ``breakdowns.<field>.<value>.<metric>`` (the value may hold
    dots) and ``pairs.<share>`` read the object they name.
    """
    if not isinstance(result, Mapping):
        return None
    parts = path.split(".")
    if len(parts) == 1:
        holder: Any = result.get("overall")
    elif parts[0] == "breakdowns" and len(parts) >= 4:
        holder = ((result.get("breakdowns") or {}).get(parts[1]) or {}).get(".".join(parts[2:-1]))
    else:
        holder = result
        for part in parts[:-1]:
            holder = holder.get(part) if isinstance(holder, Mapping) else None
    value = holder.get(parts[-1]) if isinstance(holder, Mapping) else None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _resolve(parts: list[str]) -> tuple[str, bool] | None:
    """Return (metric, higher is better) of a split path, None when it names nothing."""
    name = parts[-1] if parts else ""
    if len(parts) == 1 and name in METRICS:
        return name, get_metric(name).higher_is_better
    if len(parts) == 2 and parts[0] == "pairs" and name in PAIR_SHARES:
        return name, True
    if name not in METRICS or METRICS[name].table == "pairs":  # pairs metrics are overall only
        return None
    metric = get_metric(name)
    if len(parts) == 3 and parts[0] == "popularity" and parts[1] in BUCKET_NAMES.values():
        return name, metric.higher_is_better
    if len(parts) == 3 and parts[0] == "popularity" and parts[1] in DIFFERENCES and metric.has_ci:
        return name, False
    if len(parts) >= 4 and parts[0] == "breakdowns" and parts[1] and ".".join(parts[2:-1]):
        return name, metric.higher_is_better
    return None


def valid_paths_text() -> str:
    """Return the valid metric paths as one line, for error messages."""
    metrics = "|".join(m.name for m in METRICS.values() if m.table != "pairs")
    with_ci = "|".join(m.name for m in METRICS.values() if m.has_ci and m.table != "pairs")
    buckets = "|".join(BUCKET_NAMES[code] for code in sorted(BUCKET_NAMES, reverse=True))
    return (f"{', '.join(METRICS)}; popularity.<{buckets}>.<{metrics}>; "
            f"popularity.<{'|'.join(DIFFERENCES)}>.<{with_ci}>; breakdowns.<field>.<value>.<{metrics}>; "
            f"pairs.<{'|'.join(PAIR_SHARES)}>")
