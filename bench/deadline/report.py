"""Issue 19's table: each row's measured figures, what people need, and PASS or FAIL.

A row without figures (not selected, or it could not run) prints "not measured" and
neither passes nor fails. Read targets are p99 over answered requests; an error (any
status but 200/304, or no answer) fails a read row too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Figures = dict[str, Any]


@dataclass(frozen=True)
class Row:
    """One line of the table: where its figures are, what it needs, how it is judged and shown."""

    key: str
    title: str
    target: str
    judge: Callable[[Figures], bool]
    show: Callable[[Figures], str]


def _reads(f: Figures) -> str:
    return f"p50 {f['p50_ms']} / p99 {f['p99_ms']} / max {f['max_ms']} ms, {f['rps']} req/s, {f['errors']} errors"


def _read_ok(limit_ms: float) -> Callable[[Figures], bool]:
    return lambda f: f["errors"] == 0 and f["p99_ms"] is not None and f["p99_ms"] <= limit_ms


def _uploads(f: Figures) -> str:
    u = f["uploads"]
    bodies = "; ".join(f"{b['count']}x {b['body'][:80]!r}" for b in u["error_bodies"][:2])
    return (f"{u['sent']} sent, status {u['statuses']}{' (' + bodies + ')' if bodies else ''}; 202 p50 "
            f"{u['to_202_p50_ms']} / p99 {u['to_202_p99_ms']} ms; on the board p50 {u['on_board_since_202_p50_s']} / "
            f"p99 {u['on_board_since_202_p99_s']} s after the 202; {u['missing']} missing after "
            f"{u['board_wait_s']:g} s {u['missing_statuses'] or ''}")


def _uploads_ok(f: Figures) -> bool:
    u = f["uploads"]
    return (u["statuses"].get("202", 0) == u["sent"] and (u["to_202_p99_ms"] or 1e9) <= 1000
            and u["missing"] == 0 and (u["on_board_since_202_p99_s"] or 1e9) <= 5)


def _rescore(f: Figures) -> str:
    job = f.get("job", {})
    if "reads_during" not in f:
        return f"could not start: {f.get('start')}"
    return (f"{job.get('done')}/{job.get('total')} in {f['seconds']} s = {f['per_second']}/s ({job.get('status')}"
            f"{'' if f['finished'] else ', stopped following at --rescore-max'}); read p99 idle "
            f"{f['reads_idle']['p99_ms']} ms, during {f['reads_during']['p99_ms']} ms, errors "
            f"{f['reads_during']['errors']}")


def _rescore_ok(f: Figures) -> bool:
    during = f.get("reads_during")
    return (during is not None and (f["per_second"] or 0) >= 50 and during["errors"] == 0
            and (during["p99_ms"] or 1e9) <= 200)


def _saturated_ok(f: Figures) -> bool:
    during = f.get("reads_during")
    return during is not None and f.get("finished", False) and during["errors"] == 0 and (
        during["p99_ms"] or 1e9) <= 200


def _kill(f: Figures) -> str:
    if "error" in f:
        return f"not measured: {f['error']}"
    back = f["back_in_queue_s"]
    return (f"back in the queue after {'>' + format(f['waited_s'], 'g') if back is None else back} s, scored after "
            f"{'>' + format(f['waited_s'], 'g') if f['scored_s'] is None else f['scored_s']} s (final "
            f"{f['final'].get('status')})")


def _kill_ok(f: Figures) -> bool:
    return "error" not in f and f["back_in_queue_s"] is not None and f["back_in_queue_s"] <= 60 \
        and f["scored_s"] is not None


def _fair(f: Figures) -> str:
    if f.get("flood_before_other") is None:
        return f"the other owner's upload not scored within {f.get('waited_s')} s ({f.get('other_status')})"
    waiting = f.get("flood_while_waiting")
    slots = f" ({f['slots']} scoring slots)" if "slots" in f else ""
    return (f"{f['flood_before_other']} of {f['flood']} scored before the other owner's, {waiting} of them while "
            f"it waited after its 202{slots}")


def _queue(f: Figures) -> str:
    v = f["visibility"]
    return (f"queue_position {v['queue_position']}, eta_seconds {v['eta_seconds']} "
            f"({v.get('read', 'the')} upload, read while {v['status_when_read']})")


def _queue_ok(f: Figures) -> bool:
    v = f["visibility"]
    return v["queue_position"] not in ("absent", None) and v["eta_seconds"] not in ("absent", None)


ROWS = (
    Row("anon_page", "anonymous page, {clients} clients", "fine (judged: p99 <= 200 ms, 0 errors)", _read_ok(200),
        _reads),
    Row("anon_api", "anonymous API, {clients} clients", "fine (judged: p99 <= 200 ms, 0 errors)", _read_ok(200),
        _reads),
    Row("login_page", "logged-in page, {clients} clients (own sessions)", "p99 <= 100 ms", _read_ok(100), _reads),
    Row("token_api", "API with a participant's token, {clients} clients", "p99 <= 100 ms", _read_ok(100), _reads),
    Row("distinct", "distinct search / page-number / sort URLs", "p99 <= 200 ms", _read_ok(200), _reads),
    Row("junk", "junk query parameters (?utm=<random>)", "p99 <= 200 ms (the cache holds)", _read_ok(200), _reads),
    Row("uploads.reads", "reads while {upload_rate:g} uploads/s arrive for {duration:g} s", "p99 <= 200 ms",
        _read_ok(200), _reads),
    Row("uploads", "those uploads", "0 errors, 202 <= 1 s, on the board <= 5 s", _uploads_ok, _uploads),
    Row("rescore", "rescore of all submissions, beside {rescore_read_rate:g} reads/s",
        ">= 50 per s, reads unaffected (p99 <= 200 ms)", _rescore_ok, _rescore),
    Row("rescore_saturated", "the same beside {clients} closed-loop readers (all the CPU)",
        "reads first (p99 <= 200 ms); the rate is what is left", _saturated_ok, _rescore),
    Row("kill_embedded", "scorer killed -9 mid-run, embedded (worker holding the job)", "back in the queue within 60 s",
        _kill_ok, _kill),
    Row("kill_celery", "scorer killed -9 mid-run, Celery (pool process)", "back in the queue within 60 s", _kill_ok,
        _kill),
    Row("fairness_celery", "{flood} queued from one owner, then one from another (Celery, 1 slot)",
        "waits for at most one",
        lambda f: f.get("flood_before_other") is not None and f["flood_before_other"] <= 1, _fair),
    Row("fairness_embedded", "the same, embedded ({flood} sent ten at a time)", "waits for at most one per slot",
        lambda f: f.get("flood_while_waiting") is not None and f["flood_while_waiting"] <= f["slots"], _fair),
    Row("fairness_celery", "queued submission: place and estimate (API, Celery)", "\"3rd in line, about 20 s\"",
        _queue_ok, _queue),
    Row("fairness_embedded", "the same, embedded (read right after the 202)", "\"3rd in line, about 20 s\"",
        _queue_ok, _queue),
)


def figures_at(results: Figures, key: str) -> Figures | None:
    """Return the figures under a dotted key, None when absent."""
    node: Any = results
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def cpu_note(figures: Figures) -> str:
    """Return the load generator's and the machine's CPU over the row, in words."""
    cpu = figures.get("cpu")
    if not cpu:
        return ""
    return (f"load gen {cpu['loadgen_pct_of_one_core']}% of a core ({cpu['loadgen_pct_of_machine']}% of "
            f"{cpu['cores']} cores), machine {cpu['machine_busy_pct']}% busy, server {cpu['server_pct_of_one_core']}%")


def verdicts(results: Figures) -> list[dict[str, Any]]:
    """Return every row of the table with its measured text, target and verdict (None: not measured)."""
    out = []
    for row in ROWS:
        title = row.title.format(**results.get("sizes", {"clients": "?", "upload_rate": 0, "duration": 0,
                                                          "rescore_read_rate": 0, "flood": "?"}))
        figures = figures_at(results, row.key)
        if figures is None:
            out.append({"row": title, "measured": "not measured", "target": row.target, "verdict": None})
            continue
        parent = figures_at(results, row.key.split(".")[0]) or {}
        out.append({"row": title, "measured": row.show(figures), "target": row.target,
                    "verdict": row.judge(figures), "cpu": cpu_note(figures) or cpu_note(parent)})
    return out


def print_table(backend: str, results: Figures) -> list[dict[str, Any]]:
    """Print the table of one backend; return its rows."""
    rows = verdicts(results)
    server = results.get("server", {})
    print(f"\n== {backend}: gunicorn {server.get('workers')} workers x {server.get('threads')} threads "
          f"(deploy/gunicorn.conf.py), {results.get('size', '')}")
    for item in rows:
        verdict = {True: "PASS", False: "FAIL", None: "----"}[item["verdict"]]
        print(f"[{verdict}] {item['row']}\n         measured: {item['measured']}\n         needed:   {item['target']}"
              + (f"\n         cpu:      {item['cpu']}" if item.get("cpu") else ""))
    return rows


def print_summary(tables: dict[str, list[dict[str, Any]]]) -> None:
    """Print one line per row with its verdict on each backend."""
    backends = list(tables)
    if not backends:
        return
    print("\n" + f"{'row':<72}" + "".join(f"{b:>10}" for b in backends))
    for n, item in enumerate(tables[backends[0]]):
        marks = ({True: "PASS", False: "FAIL", None: "-"}[tables[b][n]["verdict"]] for b in backends)
        print(f"{item['row'][:71]:<72}" + "".join(f"{m:>10}" for m in marks))
