"""The load generator: a small asyncio HTTP/1.1 client, closed-loop clients, and what each row's load cost.

One connection per request (the deployed gunicorn keeps no idle keep-alive connections),
each client from its own loopback address so per-address limits see distinct clients.
A request that gets no answer (refused, reset, or past its timeout) counts as status 0,
an error. ``CpuMeter`` states how much of the machine the generator itself took: its own
process CPU time over the wall time, the machine's busy share from /proc/stat, and the
server processes' CPU.
"""

from __future__ import annotations

import asyncio
import os
import random
import resource
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

OK_STATUSES = (200, 304)


@dataclass(frozen=True)
class Reply:
    """One answer: status (0 when none came), seconds from connect to the last byte, headers, body."""

    status: int
    seconds: float
    headers: tuple[tuple[str, str], ...]
    body: bytes

    def header(self, name: str) -> str | None:
        """Return the first value of a header, None when absent."""
        return next((value for key, value in self.headers if key.lower() == name.lower()), None)

    def cookies(self) -> dict[str, str]:
        """Return the name=value pairs of the Set-Cookie headers."""
        pairs = (value.split(";", 1)[0] for key, value in self.headers if key.lower() == "set-cookie")
        return dict(pair.split("=", 1) for pair in pairs if "=" in pair)


async def fetch(port: int, method: str, target: str, *, source: str = "127.0.0.1",
                headers: dict[str, str] | None = None, body: bytes = b"", timeout: float = 120.0) -> Reply:
    """Send one request on a new connection from source; return its reply (status 0 on no answer).

    The reply is complete when its body is (Content-Length bytes, or the last chunk), as for
    a browser or ``requests``; the server may keep the connection open past that (embedded
    scoring runs when gunicorn closes the response, before it closes the socket).
    """
    started = time.perf_counter()
    lines = [f"{method} {target} HTTP/1.1", "Host: 127.0.0.1", "Connection: close", *(
        f"{key}: {value}" for key, value in (headers or {}).items())]
    if body or method in ("POST", "PUT"):
        lines.append(f"Content-Length: {len(body)}")
    request = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body
    try:
        status, reply_headers, reply_body = await asyncio.wait_for(_exchange(port, source, request, method), timeout)
    except (OSError, TimeoutError, ValueError, IndexError, asyncio.IncompleteReadError,
            asyncio.LimitOverrunError) as error:
        return Reply(0, time.perf_counter() - started, (), f"{type(error).__name__}: {error}".encode())
    return Reply(status, time.perf_counter() - started, reply_headers, reply_body)


async def _exchange(port: int, source: str, request: bytes,
                    method: str) -> tuple[int, tuple[tuple[str, str], ...], bytes]:
    """Write the request; read the status, headers and body as the headers delimit it."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
    try:
        writer.write(request)
        lines = (await reader.readuntil(b"\r\n\r\n"))[:-4].decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        headers = tuple((k.strip(), v.strip()) for k, _, v in (line.partition(":") for line in lines[1:]))
        fields = {k.lower(): v for k, v in headers}
        if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
            body = b""
        elif "chunked" in fields.get("transfer-encoding", "").lower():
            body = await _read_chunked(reader)
        elif "content-length" in fields:
            body = await reader.readexactly(int(fields["content-length"]))
        else:
            body = await reader.read(-1)
        return status, headers, body
    finally:
        writer.close()


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    """Return a chunked body's payload, read up to its last chunk and trailer."""
    out = []
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";")[0].strip() or b"0", 16)
        if size == 0:
            while (await reader.readuntil(b"\r\n")) != b"\r\n":
                pass
            return b"".join(out)
        out.append(await reader.readexactly(size))
        await reader.readexactly(2)


def source_address(index: int) -> str:
    """Return the loopback address of client index (127.0.0.2 to 127.0.0.251)."""
    return f"127.0.0.{2 + index % 250}"


@dataclass
class Client:
    """One closed-loop client: its address, its headers and where it goes next."""

    kind: str
    source: str
    next_target: Callable[[], str]
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Record:
    """One request a client made: its kind, when it started (bench clock), how long it took, its status."""

    kind: str
    started: float
    seconds: float
    status: int


async def closed_loop(port: int, clients: Iterable[Client], *, requests: int | None = None,
                      stop: asyncio.Event | None = None, timeout: float = 120.0,
                      period: float | None = None) -> list[Record]:
    """Run clients closed-loop (next request when the last is answered) until requests are made or stop is set.

    With ``period``, a client starts a request at most every ``period`` seconds (at once
    when the last one took longer), from a random offset: a paced load of
    ``len(clients) / period`` requests per second while the server keeps up.
    """
    records: list[Record] = []
    remaining = [requests if requests is not None else -1]

    async def run(client: Client) -> None:
        due = time.perf_counter() + (random.uniform(0, period) if period else 0.0)
        while True:
            if period:
                await asyncio.sleep(max(0.0, due - time.perf_counter()))
                due = max(due + period, time.perf_counter())
            if remaining[0] == 0 or (stop is not None and stop.is_set()):  # checked after any wait
                return
            remaining[0] -= 1
            started = time.perf_counter()
            reply = await fetch(port, "GET", client.next_target(), source=client.source, headers=client.headers,
                                timeout=timeout)
            records.append(Record(client.kind, started, reply.seconds, reply.status))

    await asyncio.gather(*(run(client) for client in clients))
    return records


def quantile(values: Iterable[float], q: float) -> float | None:
    """Return the q-quantile (numpy's linear interpolation), None for no values."""
    array = np.asarray(list(values), dtype=float)
    return float(np.quantile(array, q)) if array.size else None


def summarize(records: list[Record], wall: float) -> dict[str, Any]:
    """Return latency percentiles (ms) over answered requests, throughput, and errors by status."""
    ok = [r.seconds for r in records if r.status in OK_STATUSES]
    errors = Counter(str(r.status) for r in records if r.status not in OK_STATUSES)
    ms = lambda value: None if value is None else round(1000 * value, 1)  # noqa: E731
    return {"n": len(records), "p50_ms": ms(quantile(ok, 0.5)), "p99_ms": ms(quantile(ok, 0.99)),
            "max_ms": ms(max(ok) if ok else None), "rps": round(len(records) / wall, 1) if wall > 0 else None,
            "errors": sum(errors.values()), "error_statuses": dict(errors), "wall_s": round(wall, 2)}


def by_kind(records: list[Record], wall: float) -> dict[str, dict[str, Any]]:
    """Return summarize() for each kind of request in records."""
    kinds = sorted({r.kind for r in records})
    return {kind: summarize([r for r in records if r.kind == kind], wall) for kind in kinds}


def process_cpu_seconds(pid: int) -> float | None:
    """Return a process's user + system CPU seconds from /proc, None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _machine_ticks() -> tuple[int, int]:
    """Return (busy, total) jiffies of all CPUs from /proc/stat."""
    with open("/proc/stat") as handle:
        values = [int(v) for v in handle.readline().split()[1:]]
    idle = values[3] + (values[4] if len(values) > 4 else 0)
    return sum(values) - idle, sum(values)


class CpuMeter:
    """Measure, over a stretch of load, the generator's CPU, the server processes' CPU and the machine's."""

    def __init__(self, server_pids: Callable[[], list[int]]) -> None:
        self.server_pids = server_pids

    def __enter__(self) -> CpuMeter:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        self.own, self.wall = usage.ru_utime + usage.ru_stime, time.perf_counter()
        self.machine = _machine_ticks()
        self.servers = {pid: process_cpu_seconds(pid) for pid in self.server_pids()}
        return self

    def __exit__(self, *exc: object) -> None:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        wall = time.perf_counter() - self.wall
        busy, total = (now - then for now, then in zip(_machine_ticks(), self.machine, strict=True))
        server = 0.0
        for pid in self.server_pids():
            now, then = process_cpu_seconds(pid), self.servers.get(pid)
            server += max(0.0, (now or 0.0) - (then or 0.0))
        own = usage.ru_utime + usage.ru_stime - self.own
        cores = os.cpu_count() or 1
        self.result = {"wall_s": round(wall, 2), "cores": cores,
                       "loadgen_cpu_s": round(own, 2), "loadgen_pct_of_one_core": round(100 * own / wall, 1),
                       "loadgen_pct_of_machine": round(100 * own / (wall * cores), 1),
                       "machine_busy_pct": round(100 * busy / total, 1) if total else None,
                       "server_pct_of_one_core": round(100 * server / wall, 1)}
