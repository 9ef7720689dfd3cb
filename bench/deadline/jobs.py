"""The job rows: a rescore of every submission started through the API, and an embedded scorer killed mid-job.

The rescore is ``POST /api/v1/phases/<id>/rescore`` as the organizer; the job is polled at
``GET /api/v1/jobs/<id>`` every second while the read mix runs, for ``--rescore-max``
seconds at most. It runs twice: beside a paced read mix of ``--rescore-read-rate``
requests per second (a rush as readers make it: 1,000 people reloading every 5 s is 200
per second), where the rescore must keep 50 per second and the reads their p99; then
beside the read mix closed-loop (every client asks again as soon as it is answered, all
the CPU the machine has), where reads go first and the rescore takes what is left.

In embedded mode a gunicorn worker runs the job on its job thread: the kill row starts
another rescore, finds that worker (the one process of the server that burns CPU while
nothing else is asked of it), kills it with SIGKILL, and follows the job until it makes
progress again and ends, for ``--kill-wait`` seconds at most.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from typing import Any
from urllib.parse import urlsplit

from deadline import loadgen
from deadline.loadgen import CpuMeter
from deadline.reads import read_mix
from deadline.servers import Web, busiest, children
from deadline.site import get_json, post_json
from deadline.world import Instance


async def start_rescore(port: int, instance: Instance) -> dict[str, Any]:
    """Start a rescore of the phase as the organizer; return the answer's status, time, and the job's path."""
    reply, body = await post_json(port, f"/api/v1/phases/{instance.phase_id}/rescore", token=instance.organizer_token)
    started = {"http": reply.status, "answer_ms": round(1000 * reply.seconds, 1), "t0": time.perf_counter()}
    if reply.status == 202 and isinstance(body, dict):
        started.update(job=urlsplit(body["url"]).path, queued=body.get("queued"))
    else:
        started["error"] = reply.body[:300].decode("utf-8", "replace")
    return started


async def job_state(port: int, instance: Instance, path: str) -> dict[str, Any]:
    """Return the job as its organizer reads it ({'status': 'http N'} when the call failed)."""
    status, body = await get_json(port, path, token=instance.organizer_token)
    return body if status == 200 and isinstance(body, dict) else {"status": f"http {status}"}


async def _rescore(port: int, instance: Instance, args: Any, cookies: list[str],
                   period: float | None) -> dict[str, Any]:
    """Read while idle, then rescore while reading (paced every period s per client, or closed-loop); return both."""
    mix = read_mix(instance, args.clients, cookies)
    started = time.perf_counter()
    idle = await loadgen.closed_loop(port, mix, requests=args.requests, period=period)
    idle_summary = loadgen.summarize(idle, time.perf_counter() - started)
    job = await start_rescore(port, instance)
    if "job" not in job:
        return {"start": job, "reads_idle": idle_summary}
    stop = asyncio.Event()
    readers = asyncio.create_task(loadgen.closed_loop(port, mix, stop=stop, period=period))
    state: dict[str, Any] = {}
    while time.perf_counter() - job["t0"] < args.rescore_max:
        state = await job_state(port, instance, job["job"])
        if state.get("status") in ("done", "failed"):
            break
        await asyncio.sleep(1.0)
    elapsed = time.perf_counter() - job["t0"]
    stop.set()
    records = await readers
    reads_wall = time.perf_counter() - job["t0"]
    done = int(state.get("done") or 0)
    return {"start": {k: v for k, v in job.items() if k != "t0"}, "job": state,
            "reads": f"{len(mix) / period:g} per s, paced" if period else f"{len(mix)} clients, closed-loop",
            "seconds": round(elapsed, 1),
            "finished": state.get("status") == "done", "per_second": round(done / elapsed, 2) if elapsed else None,
            "reads_idle": idle_summary,
            "reads_during": {**loadgen.summarize(records, reads_wall), "by_kind": loadgen.by_kind(records, reads_wall)}}


def rescore_row(port: int, instance: Instance, args: Any, cookies: list[str], pids: Any,
                saturated: bool = False) -> dict[str, Any]:
    """Run a rescore row (reads paced at --rescore-read-rate, or closed-loop); return its figures and their cost."""
    period = None if saturated or not args.rescore_read_rate else args.clients / args.rescore_read_rate
    with CpuMeter(pids) as meter:
        figures = asyncio.run(_rescore(port, instance, args, cookies, period))
    figures["cpu"] = meter.result
    job = figures.get("job", {})
    print(f"  rescore     {job.get('done')}/{job.get('total')} in {figures.get('seconds')} s "
          f"({figures.get('per_second')}/s, {job.get('status')}) beside reads {figures.get('reads')}; reads p99 idle "
          f"{figures['reads_idle']['p99_ms']} ms, during {figures.get('reads_during', {}).get('p99_ms')} ms",
          flush=True)
    return figures


async def _kill_embedded(web: Web, instance: Instance, args: Any) -> dict[str, Any]:
    """Start a rescore, kill -9 the worker running it, follow the job until it ends or kill_wait passes."""
    job = await start_rescore(web.port, instance)
    if "job" not in job:
        return {"start": job}
    state: dict[str, Any] = {}
    while time.perf_counter() - job["t0"] < 60:
        state = await job_state(web.port, instance, job["job"])
        if state.get("status") != "queued":
            break
        await asyncio.sleep(0.5)
    await asyncio.sleep(2.0)  # well into its first batch
    victim, usage = None, {}
    for _ in range(5):
        victim, usage = await asyncio.to_thread(busiest, children(web.process.pid))
        if victim is not None:
            break
    before = await job_state(web.port, instance, job["job"])
    if victim is None or before.get("status") != "running":
        return {"start": {k: v for k, v in job.items() if k != "t0"}, "error": "no worker clearly ran the job",
                "cpu_pct": usage, "job": before}
    os.kill(victim, signal.SIGKILL)
    killed = time.perf_counter()
    follow = await follow_job(web.port, instance, job["job"], int(before.get("done") or 0), killed, args.kill_wait)
    return {"mode": "embedded", "victim_pid": victim, "cpu_pct": usage, "done_at_kill": before.get("done"),
            "total": before.get("total"), **follow}


async def follow_job(port: int, instance: Instance, path: str, done_at_kill: int, killed: float,
                     wait: float) -> dict[str, Any]:
    """Poll a job after its runner was killed: when it progressed again, when it ended."""
    resumed = ended = None
    state: dict[str, Any] = {}
    while time.perf_counter() - killed < wait:
        state = await job_state(port, instance, path)
        now = time.perf_counter() - killed
        if resumed is None and (int(state.get("done") or 0) > done_at_kill or state.get("status") == "done"):
            resumed = round(now, 1)
        if state.get("status") in ("done", "failed"):
            ended = round(now, 1)
            break
        await asyncio.sleep(1.0)
    return {"back_in_queue_s": resumed, "scored_s": ended, "final": state, "waited_s": wait,
            "measure": "job progress after the kill (a batch is 50 submissions)"}


def kill_embedded_row(web: Web, instance: Instance, args: Any) -> dict[str, Any]:
    """Run the embedded kill row; return its figures."""
    figures = asyncio.run(_kill_embedded(web, instance, args))
    print(f"  kill (embedded) worker {figures.get('victim_pid')} killed at {figures.get('done_at_kill')}/"
          f"{figures.get('total')}: progress again after {figures.get('back_in_queue_s')} s, ended after "
          f"{figures.get('scored_s')} s (waited up to {args.kill_wait} s) {figures.get('error', '')}", flush=True)
    return figures
