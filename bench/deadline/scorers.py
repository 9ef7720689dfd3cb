"""The scorer rows: fairness of the queue, whether a queued submission shows its place, a Celery scorer killed.

Fairness: participant A uploads 40 files, then participant B one; once B's is scored, the
count of A's scored before it (by each submission's ``updated_at``, stamped when it became
scored) is the row's figure. With Celery the worker is stopped while they are queued and
started with one pool process after; embedded, the server scores them as they come.
Queue visibility: B's submission read by its owner right after the upload, looking for
``queue_position`` and ``eta_seconds``; when a free scorer has already taken it (it is first
in the fair order), A's last upload, still queued behind, is read instead. Celery kill: a
few uploads are scored one at a time; the pool process is killed with SIGKILL while one is
``scoring``, and that submission is followed until it leaves ``scoring`` (back in the
queue) and until it is scored.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
from datetime import UTC, datetime
from typing import Any

import numpy as np
from deadline.servers import children
from deadline.site import submission, upload
from deadline.world import Instance, Person, prediction_file

FINAL = ("scored", "failed")
QUEUE_FIELDS = ("queue_position", "eta_seconds")


FLOOD_AT_ONCE = 10
"""Flood uploads in flight at once: a queue builds even where scoring keeps up with one upload at a time."""


async def queue_flood(port: int, instance: Instance, flooder: Person, other: Person, count: int,
                      seed: int) -> dict[str, Any]:
    """Upload count files as flooder, then one as other; return the ids and other's submission read at once."""
    rng = np.random.default_rng(seed)
    files = [prediction_file(instance.ids, instance.gold, rng) for _ in range(count + 1)]
    ids = []
    for start in range(0, count, FLOOD_AT_ONCE):  # sent FLOOD_AT_ONCE at a time: faster than scorers keep up
        replies = await asyncio.gather(*(upload(port, instance.phase_id, flooder, data)
                                         for data in files[start:min(start + FLOOD_AT_ONCE, count)]))
        for reply, submission_id in replies:
            if submission_id is None:
                raise RuntimeError(f"fairness upload refused: HTTP {reply.status} {reply.body[:300]!r}")
            ids.append(submission_id)
    reply, last = await upload(port, instance.phase_id, other, files[-1])
    acknowledged = datetime.now(UTC)
    if last is None:
        raise RuntimeError(f"fairness upload refused: HTTP {reply.status} {reply.body[:300]!r}")
    seen, whose = await submission(port, last, other), "the other owner's"
    if seen.get("status") != "queued":  # first in the fair order, a free scorer took it at once: read a queued one
        seen, whose = await submission(port, ids[-1], flooder), "the flood's last"
    visibility = {"status_when_read": seen.get("status"), "read": whose,
                  **{name: seen.get(name, "absent") for name in QUEUE_FIELDS}}
    return {"flood_ids": ids, "other_id": last, "visibility": visibility, "acknowledged": acknowledged}


async def order_after(port: int, flood: dict[str, Any], flooder: Person, other: Person,
                      wait: float) -> dict[str, Any]:
    """Wait until the other owner's submission is scored; return how many of the flood were scored before it."""
    began = time.perf_counter()
    last: dict[str, Any] = {}
    while time.perf_counter() - began < wait:
        last = await submission(port, flood["other_id"], other)
        if last.get("status") in FINAL:
            break
        await asyncio.sleep(0.5)
    if last.get("status") != "scored":
        return {"other_status": last.get("status"), "waited_s": wait, "flood_before_other": None}
    other_at = _aware(datetime.fromisoformat(last["updated_at"]))
    before = waited_for = 0
    for submission_id in flood["flood_ids"]:
        seen = await submission(port, submission_id, flooder)
        if seen.get("status") != "scored":
            continue
        at = _aware(datetime.fromisoformat(seen["updated_at"]))
        before += at < other_at
        waited_for += flood["acknowledged"] < at < other_at  # scored while the other owner's upload waited
    return {"other_status": "scored", "other_scored_after_s": round(time.perf_counter() - began, 1),
            "flood": len(flood["flood_ids"]), "flood_before_other": before, "flood_while_waiting": waited_for}


def _aware(moment: datetime) -> datetime:
    """Return a timestamp as aware UTC (the API's are UTC)."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


async def _kill_celery(port: int, instance: Instance, worker: subprocess.Popen[bytes], person: Person,
                       args: Any) -> dict[str, Any]:
    """Kill the Celery pool process while it scores one of a few uploads; follow that submission."""
    rng = np.random.default_rng(args.seed + 7)
    for attempt in range(1, 4):
        ids = [(await upload(port, instance.phase_id, person, prediction_file(instance.ids, instance.gold, rng)))[1]
               for _ in range(6)]
        victim, killed, pool = await _catch_scoring(port, [i for i in ids if i is not None], person, worker)
        if victim is None:
            continue
        await asyncio.sleep(0.5)
        if (await submission(port, victim, person)).get("status") == "scoring":
            follow = await _follow(port, victim, person, killed, args.kill_wait)
            return {"mode": "celery", "attempt": attempt, "submission_id": victim, "victim_pid": pool, **follow}
    return {"mode": "celery", "error": "no kill landed while a submission was being scored (3 attempts)"}


async def _catch_scoring(port: int, ids: list[int], person: Person,
                         worker: subprocess.Popen[bytes]) -> tuple[int | None, float, int | None]:
    """Poll the uploads in order; kill the pool process as soon as one reads 'scoring'."""
    deadline, index = time.perf_counter() + 120, 0
    while index < len(ids) and time.perf_counter() < deadline:
        status = (await submission(port, ids[index], person)).get("status")
        if status == "scoring":
            pool = children(worker.pid)
            if pool:
                os.kill(pool[0], signal.SIGKILL)
                return ids[index], time.perf_counter(), pool[0]
        elif status in FINAL:
            index += 1
    return None, 0.0, None


async def _follow(port: int, victim: int, person: Person, killed: float, wait: float) -> dict[str, Any]:
    """Poll a submission whose scorer was killed: when it leaves 'scoring', when it is scored."""
    back = scored = None
    seen: dict[str, Any] = {}
    while time.perf_counter() - killed < wait:
        seen = await submission(port, victim, person)
        now = round(time.perf_counter() - killed, 1)
        if back is None and seen.get("status") != "scoring":
            back = now
        if seen.get("status") in FINAL:
            scored = now if seen["status"] == "scored" else None
            break
        await asyncio.sleep(1.0)
    return {"back_in_queue_s": back, "scored_s": scored, "final": {k: seen.get(k) for k in ("status", "attempts")},
            "waited_s": wait, "measure": "the submission's status after the kill (polled every second)"}


def fairness_row(port: int, instance: Instance, flooder: Person, other: Person, args: Any, *,
                 before_scoring: Any = None) -> dict[str, Any]:
    """Queue the flood and the other owner's upload, start scoring (before_scoring()), return the order figures."""
    flood = asyncio.run(queue_flood(port, instance, flooder, other, args.flood, args.seed + 3))
    if before_scoring is not None:
        before_scoring()
    order = asyncio.run(order_after(port, flood, flooder, other, args.fair_wait))
    print(f"  fairness    {order.get('flood_before_other')} of {args.flood} scored before the other owner's, "
          f"{order.get('flood_while_waiting')} of them after its 202; queue fields {flood['visibility']}", flush=True)
    return {**order, "visibility": flood["visibility"]}


def kill_celery_row(port: int, instance: Instance, worker: subprocess.Popen[bytes], person: Person,
                    args: Any) -> dict[str, Any]:
    """Run the Celery kill row; return its figures."""
    figures = asyncio.run(_kill_celery(port, instance, worker, person, args))
    print(f"  kill (celery) submission {figures.get('submission_id')}: back in the queue after "
          f"{figures.get('back_in_queue_s')} s, scored after {figures.get('scored_s')} s (waited up to "
          f"{args.kill_wait} s) {figures.get('error', '')}", flush=True)
    return figures
