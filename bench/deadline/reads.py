"""The read rows: anonymous page and API, logged-in page, token API, distinct URLs, junk query parameters.

Each row runs ``--clients`` closed-loop clients for ``--requests`` requests after an
untimed warm-up of a fifth as many (same kind of request), and reports p50/p99/max,
requests per second, errors and what the load cost (loadgen.CpuMeter). ``read_mix`` is
the load the write rows run beside: client i reads as kind i % 4 (anonymous page,
anonymous API, logged-in page, API with a token).
"""

from __future__ import annotations

import asyncio
import random
import secrets
import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlencode

from deadline import loadgen
from deadline.loadgen import Client, CpuMeter
from deadline.site import bearer, board_api, board_page, login
from deadline.world import Instance

MIX = ("anon_page", "anon_api", "login_page", "token_api")
SORTS = ("rank", "name", "submitted_at", "accuracy", "answer_rate", "popularity.head.accuracy",
         "popularity.tail.accuracy")


async def log_in_readers(port: int, instance: Instance, clients: int) -> list[str]:
    """Log in the first `clients` participants with rows, each from its own address; return their cookies."""
    readers = instance.readers[:clients]
    return list(await asyncio.gather(*(
        login(port, person, source=loadgen.source_address(n), next_path=board_page(instance.phase_id))
        for n, person in enumerate(readers))))


def fixed(path: str) -> Callable[[], str]:
    """Return a target function that always asks for path."""
    return lambda: path


def distinct_urls(instance: Instance, seed: int) -> Iterator[str]:
    """Yield board page URLs, each a query no earlier one asked: searches, page numbers with sizes, sorts."""
    rng = random.Random(seed)
    page = board_page(instance.phase_id)
    searches = ({"q": f"{n:04d}"[-width:]} for width in (4, 3, 2) for n in range(10 ** width))
    pages = ({"page": p, "per_page": size} for size in range(10, 101) for p in range(1, 21))
    sorts = ({"sort": s, "order": o, "page": p} for p in range(1, 1000) for s in SORTS for o in ("asc", "desc"))
    kinds = [searches, pages, sorts]
    seen: set[str] = set()
    while kinds:
        source = rng.choice(kinds)
        query = next(source, None)
        if query is None:
            kinds.remove(source)
            continue
        url = f"{page}?{urlencode(query)}"
        if url not in seen:
            seen.add(url)
            yield url


def junk_url(instance: Instance) -> Callable[[], str]:
    """Return a target function asking for the board page with a fresh random tracking parameter each time."""
    page = board_page(instance.phase_id)
    return lambda: f"{page}?utm={secrets.token_hex(6)}"


def clients_for(kind: str, instance: Instance, count: int, cookies: list[str], seed: int = 0) -> list[Client]:
    """Return count clients of one read kind, each from its own loopback address."""
    urls = distinct_urls(instance, seed)
    return [_client(kind, n, instance, cookies, urls) for n in range(count)]


def read_mix(instance: Instance, count: int, cookies: list[str]) -> list[Client]:
    """Return the mixed readers of the write rows: client i reads as MIX[i % 4]."""
    urls = distinct_urls(instance, 0)
    return [_client(MIX[n % len(MIX)], n, instance, cookies, urls) for n in range(count)]


def _client(kind: str, n: int, instance: Instance, cookies: list[str], urls: Iterator[str]) -> Client:
    """Return client n of a read kind, from its own loopback address."""
    source, page, api = loadgen.source_address(n), board_page(instance.phase_id), board_api(instance.phase_id)
    if kind == "anon_page":
        return Client(kind, source, fixed(page))
    if kind == "anon_api":
        return Client(kind, source, fixed(api))
    if kind == "login_page":
        return Client(kind, source, fixed(page), {"Cookie": cookies[n % len(cookies)]})
    if kind == "token_api":
        return Client(kind, source, fixed(api), bearer(instance.readers[n % len(instance.readers)].token))
    if kind == "distinct":
        return Client(kind, source, lambda: next(urls))
    if kind == "junk":
        return Client(kind, source, junk_url(instance))
    raise ValueError(f"unknown read kind {kind!r}")


def measure(port: int, clients: list[Client], requests: int, pids: Callable[[], list[int]]) -> dict[str, Any]:
    """Warm up, then run clients for requests requests; return the summary with the load's CPU figures."""
    asyncio.run(loadgen.closed_loop(port, clients, requests=max(len(clients), requests // 5)))
    with CpuMeter(pids) as meter:
        started = time.perf_counter()
        records = asyncio.run(loadgen.closed_loop(port, clients, requests=requests))
        wall = time.perf_counter() - started
    return {**loadgen.summarize(records, wall), "cpu": meter.result}


def read_rows(port: int, instance: Instance, args: Any, rows: set[str], cookies: list[str],
              pids: Callable[[], list[int]]) -> dict[str, Any]:
    """Measure each selected read row; return {row: figures}."""
    plan = [("anon", ("anon_page", "anon_api")), ("logged_in", ("login_page",)), ("token", ("token_api",)),
            ("distinct", ("distinct",)), ("junk", ("junk",))]
    out: dict[str, Any] = {}
    for row, kinds in plan:
        if row not in rows:
            continue
        for kind in kinds:
            clients = clients_for(kind, instance, args.clients, cookies, seed=args.seed)
            out[kind] = measure(port, clients, args.requests, pids)
            print(f"  {kind:<11} {_line(out[kind])}", flush=True)
    return out


def _line(figures: dict[str, Any]) -> str:
    """Return one progress line of a row's figures."""
    cpu = figures["cpu"]
    return (f"p50 {figures['p50_ms']} ms, p99 {figures['p99_ms']} ms, max {figures['max_ms']} ms, "
            f"{figures['rps']} req/s, errors {figures['errors']}; load generator {cpu['loadgen_pct_of_one_core']}% "
            f"of a core, machine busy {cpu['machine_busy_pct']}%")

