"""The upload row: reads while ``--upload-rate`` uploads a second arrive for ``--duration`` seconds.

Uploads are open-loop (sent on schedule whether or not earlier ones were answered), each a
real multipart API upload by a fresh participant with their token and an Idempotency-Key.
Beside them the read mix runs closed-loop (reads.read_mix). A poller reads the whole board
(``?format=json``, anonymous) every ``--board-poll`` seconds and notes when each accepted
submission first appears; it stops ``--board-wait`` seconds after the last upload was sent.
Submissions still missing then are looked up as their owner sees them.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from typing import Any

import numpy as np
from deadline import loadgen
from deadline.loadgen import CpuMeter
from deadline.reads import read_mix
from deadline.site import board_api, submission, upload
from deadline.world import Instance, prediction_file

POLLER_ADDRESS = "127.0.0.253"


async def poll_board(port: int, phase_id: int, seen: dict[int, float], stop: asyncio.Event,
                     every: float) -> int:
    """Read every row of the board until stop is set; note when each submission id first shows; return polls."""
    polls = 0
    while not stop.is_set():
        started = time.perf_counter()
        reply = await loadgen.fetch(port, "GET", f"{board_api(phase_id)}?format=json", source=POLLER_ADDRESS)
        polls += 1
        if reply.status == 200:
            for row in json.loads(reply.body).get("rows", []):
                seen.setdefault(int(row["submission_id"]), time.perf_counter())
        await asyncio.sleep(max(0.0, every - (time.perf_counter() - started)))
    return polls


async def _run(port: int, instance: Instance, args: Any, cookies: list[str]) -> dict[str, Any]:
    """Send the uploads on schedule beside the read mix; follow them onto the board."""
    count = int(round(args.upload_rate * args.duration))
    if count > len(instance.uploaders):
        raise RuntimeError(f"{count} uploads need {count} fresh participants; the instance has "
                           f"{len(instance.uploaders)} (raise --uploaders)")
    rng = np.random.default_rng(args.seed + 1)
    files = [prediction_file(instance.ids, instance.gold, rng) for _ in range(count)]
    sent: list[dict[str, Any]] = [{} for _ in range(count)]
    seen: dict[int, float] = {}
    stop_reads, stop_poll = asyncio.Event(), asyncio.Event()
    readers = asyncio.create_task(loadgen.closed_loop(port, read_mix(instance, args.clients, cookies),
                                                      stop=stop_reads))
    poller = asyncio.create_task(poll_board(port, instance.phase_id, seen, stop_poll, args.board_poll))

    async def one(k: int) -> None:
        started = time.perf_counter()
        reply, submission_id = await upload(port, instance.phase_id, instance.uploaders[k], files[k],
                                            source=loadgen.source_address(200 + k % 50), timeout=args.upload_timeout)
        sent[k] = {"sent": started, "answered": started + reply.seconds, "status": reply.status,
                   "seconds": reply.seconds, "id": submission_id,
                   "body": reply.body[:300].decode("utf-8", "replace") if reply.status >= 500 or reply.status == 0
                   else None}

    began = time.perf_counter()
    tasks = []
    for k in range(count):
        await asyncio.sleep(max(0.0, began + k / args.upload_rate - time.perf_counter()))
        tasks.append(asyncio.create_task(one(k)))
    await asyncio.gather(*tasks)
    stop_reads.set()
    records = await readers
    reads_wall = time.perf_counter() - began
    last_sent = max(s["sent"] for s in sent)
    accepted = {s["id"] for s in sent if s["id"] is not None}
    while accepted - set(seen) and time.perf_counter() < last_sent + args.board_wait:
        await asyncio.sleep(0.25)
    stop_poll.set()
    polls = await poller
    missing = sorted(accepted - set(seen))
    owners = {s["id"]: instance.uploaders[k] for k, s in enumerate(sent) if s["id"] is not None}
    states = [await submission(port, sid, owners[sid]) for sid in missing]
    return {"reads": {**loadgen.summarize(records, reads_wall), "by_kind": loadgen.by_kind(records, reads_wall)},
            "uploads": _upload_figures(sent, seen, missing, states, polls, args)}


def _upload_figures(sent: list[dict[str, Any]], seen: dict[int, float], missing: list[int],
                    states: list[dict[str, Any]], polls: int, args: Any) -> dict[str, Any]:
    """Return the uploads' status codes, 500 bodies, time to 202, time to the board, and what is missing."""
    statuses = Counter(str(s["status"]) for s in sent)
    to_202 = [s["seconds"] for s in sent if s["status"] == 202]
    since_sent = [seen[s["id"]] - s["sent"] for s in sent if s["id"] in seen]
    since_202 = [seen[s["id"]] - s["answered"] for s in sent if s["id"] in seen]
    ms = lambda v: None if v is None else round(1000 * v, 1)  # noqa: E731
    s_ = lambda v: None if v is None else round(v, 2)  # noqa: E731
    bodies = Counter(s["body"] for s in sent if s["body"])
    return {"sent": len(sent), "rate_per_s": args.upload_rate, "duration_s": args.duration,
            "statuses": dict(statuses), "errors_500": sum(n for code, n in statuses.items() if code.startswith("5")),
            "no_answer": statuses.get("0", 0),
            "error_bodies": [{"count": n, "body": b} for b, n in bodies.most_common(5)],
            "to_202_p50_ms": ms(loadgen.quantile(to_202, 0.5)), "to_202_p99_ms": ms(loadgen.quantile(to_202, 0.99)),
            "to_202_max_ms": ms(max(to_202) if to_202 else None),
            "on_board": len(since_sent), "on_board_since_202_p50_s": s_(loadgen.quantile(since_202, 0.5)),
            "on_board_since_202_p99_s": s_(loadgen.quantile(since_202, 0.99)),
            "on_board_since_202_max_s": s_(max(since_202) if since_202 else None),
            "on_board_since_sent_p50_s": s_(loadgen.quantile(since_sent, 0.5)),
            "on_board_since_sent_p99_s": s_(loadgen.quantile(since_sent, 0.99)),
            "missing": len(missing), "missing_statuses": dict(Counter(str(s.get("status")) for s in states)),
            "board_polls": polls, "board_poll_s": args.board_poll, "board_wait_s": args.board_wait}


def uploads_row(port: int, instance: Instance, args: Any, cookies: list[str], pids: Any) -> dict[str, Any]:
    """Run the upload row; return its reads, its uploads and what the load cost."""
    with CpuMeter(pids) as meter:
        figures = asyncio.run(_run(port, instance, args, cookies))
    figures["cpu"] = meter.result
    up, reads = figures["uploads"], figures["reads"]
    print(f"  uploads     {up['sent']} sent: {up['statuses']}; 202 p50 {up['to_202_p50_ms']} ms p99 "
          f"{up['to_202_p99_ms']} ms; on the board p50 {up['on_board_since_202_p50_s']} s p99 "
          f"{up['on_board_since_202_p99_s']} s after the 202; missing {up['missing']}; reads p99 {reads['p99_ms']} ms",
          flush=True)
    return figures
