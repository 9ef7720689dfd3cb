"""Plain-text views of API answers: scores, validation problems, rankings, phases.

The client keeps no list of metrics: it prints the metrics a slice object carries, in the
order the server sends them (the order of scoring's registry), so a metric added there
shows up here without a release of the client.
"""

from __future__ import annotations

from typing import Any

NOT_METRICS = frozenset({"n", "answered", "correct", "ci", "grid", "exact"})
"""Keys of a slice object (docs/METRICS.md, The result object) that are counts, intervals or marks, not metrics."""


def number(value: Any) -> str:
    """Format a metric value for people (4 decimals, '-' for null)."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def shown(part: dict[str, Any], key: str) -> str:
    """Format one figure of a slice: exact to 4 decimals, or a coarse one to 2 with ± its step (docs/PROBING.md)."""
    value, grid = part.get(key), part.get("grid")
    if value is None or not isinstance(grid, float) or key in (part.get("exact") or ()):
        return number(value)
    return f"{value:.2f} ±{grid:.2f}"


def scores(results: dict[str, Any] | None, primary: str | None = None, scope: str | None = "all") -> list[str]:
    """Return the lines showing every visible split's headline metrics and slices."""
    if not results:
        return ["No scores to show."]
    views = [("public split" if scope == "public" else "all items", results)] if "overall" in results else []
    views += [(f"{name} split", split) for name, split in (results.get("splits") or {}).items()]
    lines: list[str] = []
    for title, view in views:
        overall = view.get("overall") or {}
        lines.append(f"{title} ({overall.get('n', view.get('n_items', '?'))} items)")
        lines += _metrics(overall, primary, indent="  ")
        lines += _slices(view)
    lines += [f"note: {warning}" for warning in results.get("warnings") or []]
    if scope == "public":
        lines.append("The private split's scores are shown when the phase closes.")
    return lines or ["No scores to show."]


def entry(submission: dict[str, Any]) -> str:
    """Return the line naming a submission's entry: method, team, metadata, final selection."""
    who = f"team {submission['team']}, " if submission.get("team") else ""
    meta = ", ".join(f"{key}={value}" for key, value in (submission.get("metadata") or {}).items())
    selected = "; selected for the final ranking" if submission.get("selected") else ""
    return f"  entry: {who}method {submission.get('method', 'default')!r}" + (f" ({meta})" if meta else "") + selected


def waiting(submission: dict[str, Any]) -> str:
    """Return the line --wait prints while a submission waits, e.g. "queued: 3rd in line, about 20 s"."""
    status = str(submission.get("status"))
    position = submission.get("queue_position")
    if status != "queued" or position is None:
        return f"{status}..."
    eta = submission.get("eta_seconds")
    return f"queued: {ordinal(int(position))} in line" + (f", about {eta} s" if eta is not None else "")


def ordinal(n: int) -> str:
    """Return 1st, 2nd, 3rd, 4th, 11th, 21st..."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def problems(details: Any) -> list[str]:
    """Return one line per validation problem: 'line N (id X): message'."""
    if not isinstance(details, dict) or "errors" not in details:
        return []
    lines = []
    for problem in details["errors"]:
        where = f"line {problem['line']}" if problem.get("line") is not None else "file"
        if problem.get("id") is not None:
            where += f" (id {problem['id']})"
        lines.append(f"  {where}: {problem['message']}")
    shown, total = len(details["errors"]), details.get("error_count", len(details["errors"]))
    if total > shown:
        lines.append(f"  ... and {total - shown} more problem(s)")
    return lines


def leaderboard(board: dict[str, Any]) -> list[str]:
    """Return one view of the ranking as a fixed-width table: rank, statistical rank, entry, value, interval."""
    view = board["view"]
    metric = view["metric"]
    header = f"{'rank':>4} {'stat':>4}  {'entry':<34} {metric[-12:]:>12}  {'95% interval':<17} submitted"
    lines = [f"View: {view['name']}. Split: {board['split']}. {board['rule']}", header, "-" * len(header)]
    for row in board["rows"]:
        name = row["display_name"] + (" [baseline]" if row["is_baseline"] else f" ({row['method']})")
        when = (row.get("submitted_at") or "")[:16].replace("T", " ")
        rank = "-" if row["rank"] is None else str(row["rank"])  # baselines take no rank
        stat = "-" if row.get("stat_rank") is None else str(row["stat_rank"])
        ci = row.get("ci")
        interval = f"[{number(ci[0])}, {number(ci[1])}]" if ci else ""
        lines.append(f"{rank:>4} {stat:>4}  {name[:34]:<34} {number(row['value']):>12}  {interval:<17} {when}")
    if not board["rows"]:
        lines.append("  (no entries yet)")
    elif board.get("total", 0) > len(board["rows"]):
        lines.append(f"  ... {board['total'] - len(board['rows'])} more (the CSV has every row)")
    return lines


def phases(competition: dict[str, Any]) -> list[str]:
    """Return a competition's phases with id, status and dates."""
    lines = [f"{competition['title']} ({competition['slug']})"]
    for phase in competition["phases"]:
        start = (phase.get("start_at") or "-")[:16].replace("T", " ")
        end = (phase.get("end_at") or "-")[:16].replace("T", " ")
        lines.append(f"  {phase['id']:>5}  {phase['name']:<30} {phase['status']:<9} {start} → {end}")
    if not competition["phases"]:
        lines.append("  (no phases yet)")
    return lines


def _metrics(overall: dict[str, Any], primary: str | None, *, indent: str) -> list[str]:
    ci = overall.get("ci") or {}
    lines = []
    for name, value in overall.items():
        if name in NOT_METRICS or isinstance(value, (dict, list)):
            continue
        interval = ci.get(name)
        extra = f"  [{number(interval[0])}, {number(interval[1])}]" if interval else ""
        mark = "  <- ranking metric" if name == primary else ""
        lines.append(f"{indent}{name:<20}{shown(overall, name):>11}{extra}{mark}")
    return lines


def _slices(view: dict[str, Any]) -> list[str]:
    lines = []
    for field, values in (view.get("breakdowns") or {}).items():
        cells = ", ".join(f"{value} {shown(m, 'accuracy')}" for value, m in values.items())
        # no value shown: every slice is below the phase's minimum size, or hidden
        lines.append(f"  accuracy by {field}: {cells or '(slices too small to show)'}")
    popularity = view.get("popularity") or {}
    buckets = [b for b in ("head", "torso", "tail") if b in popularity]
    if buckets:
        cells = ", ".join(f"{b} {shown(popularity[b], 'accuracy')}" for b in buckets)
        gap = (popularity.get("gap") or {}).get("accuracy")
        note = f" (head-tail gap {number(gap)})" if gap is not None else ""
        lines.append(f"  accuracy by popularity: {cells}{note}")
    return lines
