"""Hidden labels never leave the server: crawl every route as every outsider and look for them.

Every GET route of ``app.url_map`` is requested with real ids (every phase, submission,
slug and public file name) by an anonymous visitor, a participant and the organizer of
another competition (with their session and, for the API, their bearer token). No
response, including the members of a downloaded zip, may contain a label line, the
label file, or the secret explanation every label record carries. Path tricks must not
reach the hidden-label storage or the data dir.
"""

from __future__ import annotations

import io
import os
import re
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from web_world import BAD_PREDICTIONS, PASSWORD, SECRET, World, build_world, predictions

from leaderboard import accounts
from leaderboard.accounts import OPERATOR, confirmation
from leaderboard.entries import teams
from leaderboard.models import Baseline, Job, Submission, Team
from leaderboard.organizing import phases
from leaderboard.platform import ServiceContext

pytestmark = pytest.mark.backends("sqlite")

FILE_NAMES = ["questions.jsonl", "starting_kit.zip", "labels.jsonl", "labels-v1.jsonl", "..%2Flabels-v1.jsonl"]
# What an outsider may read because it is theirs: beta's organizer exports beta (alpha's export is crawled too).
OWN_DATA = {"organizer of another competition": ("/api/v1/competitions/beta/export", "/organizer/c/beta/export")}
EXTRA_QUERIES = {"public.competition": ["?phase={phase_id}"], "api.get_leaderboard": ["?format=csv"]}


@pytest.fixture
def world(ctx: ServiceContext) -> World:
    """Return the shared test world, with a finished re-scoring job (its progress page is crawled too)."""
    built = build_world(ctx)
    phases.rescore_phase(ctx, phase_id=built.open_phase.id, actor=OPERATOR)
    carol = accounts.register_user(ctx, email="carol@example.com", password=PASSWORD, display_name="Carol")
    teams.create_team(ctx, competition_slug="alpha", name="Carol's team", user=carol)  # its page is crawled too
    return built


def _entry_keys(ctx: ServiceContext) -> set[str]:
    """Return every entry key the world's submissions and baselines can have (docs/ENTRIES.md)."""
    keys = {f"baseline:{b.id}" for b in ctx.session.query(Baseline).all()}
    for s in ctx.session.query(Submission).all():
        keys.add(f"team:{s.team_id}:{s.method}" if s.team_id else f"user:{s.user_id}:{s.method}")
    return keys


def concrete_urls(app: Any, world: World, ctx: ServiceContext) -> Iterator[str]:
    """Yield every GET route of the app with every real value of its arguments."""
    values: dict[str, list[str]] = {
        "slug": ["alpha", "beta"],
        "phase_id": [str(p.id) for p in world.phases],
        "submission_id": [str(s.id) for s in ctx.session.query(Submission).all()],
        "job_id": [str(j.id) for j in ctx.session.query(Job).all()],
        "team_id": [str(t.id) for t in ctx.session.query(Team).all()],
        "name": FILE_NAMES,
        "filename": ["css/tailboard.css", "js/tailboard.js"],
        "token": [confirmation.make_token(ctx, world.alice), "not-a-token"],  # email confirmation links
        "entry": sorted(_entry_keys(ctx)),  # entry pages, keyed as the board keys its rows
    }
    for rule in app.url_map.iter_rules():
        if "GET" not in rule.methods:
            continue
        unknown = set(rule.arguments) - set(values)
        assert not unknown, f"route {rule.rule} has arguments the crawl cannot fill: {unknown}"
        urls = [rule.rule]
        for arg in rule.arguments:
            placeholder = re.search(r"<(?:[^<>]*:)?" + arg + ">", rule.rule).group(0)
            urls = [u.replace(placeholder, v) for u in urls for v in values[arg]]
        for url in urls:
            yield url
            for query in EXTRA_QUERIES.get(rule.endpoint, []):
                for phase_id in values["phase_id"]:
                    yield url + query.format(phase_id=phase_id)


def secrets_in(body: bytes, label_files: list[bytes]) -> list[str]:
    """Return what of the hidden labels a response body reveals (also inside a zip)."""
    bodies = [body]
    if body[:2] == b"PK":
        with zipfile.ZipFile(io.BytesIO(body)) as archive:
            bodies += [archive.read(name) for name in archive.namelist()]
    found = []
    for data in bodies:
        if SECRET.encode() in data:
            found.append("the secret explanation")
        for labels in label_files:
            if labels.strip() in data:
                found.append("the whole label file")
            found += [f"label line {line[:40]!r}" for line in labels.splitlines() if line.strip() and line in data]
    return found


@pytest.fixture
def outsiders(world: World, ctx: ServiceContext) -> dict[str, tuple[Any, str | None]]:
    """Return each outsider's user (None for anonymous) and API token."""
    return {
        "anonymous": (None, None),
        "participant": (world.alice, accounts.create_token(ctx, user=world.alice)[1]),
        "organizer of another competition": (world.org_b, accounts.create_token(ctx, user=world.org_b)[1]),
    }


@pytest.mark.parametrize("who", ["anonymous", "participant", "organizer of another competition"])
def test_no_route_reveals_hidden_labels(who: str, world: World, app: Any, client: Any, ctx: ServiceContext,
                                        login: Callable, outsiders: dict[str, Any]) -> None:
    user, token = outsiders[who]
    if user is not None:
        login(client, user)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    seen = 0
    for url in concrete_urls(app, world, ctx):
        response = client.get(url, headers=headers if url.startswith("/api/") else {})
        assert response.status_code < 500, (url, response.status_code)
        if url in OWN_DATA.get(who, ()):  # their own competition's archive holds its labels, by design
            assert response.status_code == 200, url
            continue
        leaks = secrets_in(response.data, world.label_files)
        assert not leaks, f"{who} GET {url} revealed {leaks}"
        seen += response.status_code == 200
    assert seen >= 30  # the crawl really reached pages, not only errors


@pytest.mark.parametrize("who", ["participant", "organizer of another competition"])
def test_rejected_uploads_reveal_no_labels(who: str, world: World, client: Any, login: Callable,
                                           csrf_token: Callable, outsiders: dict[str, Any]) -> None:
    user, token = outsiders[who]
    login(client, user)
    path = f"/phases/{world.open_phase.id}"
    wrong_everything = predictions(wrong=tuple(f"c{n:02d}" for n in range(1, 11)))
    for data in (BAD_PREDICTIONS, wrong_everything.replace(b"true", b"yes please")):
        page = client.post(path, data={"file": (io.BytesIO(data), "p.csv"), "csrf_token": csrf_token(client, path)},
                           content_type="multipart/form-data")
        assert page.status_code == 400 and not secrets_in(page.data, world.label_files)
        api = client.post(f"/api/v1/phases/{world.open_phase.id}/submissions",
                          data={"file": (io.BytesIO(data), "p.csv")}, headers={"Authorization": f"Bearer {token}"},
                          content_type="multipart/form-data")
        assert api.status_code == 400 and not secrets_in(api.data, world.label_files)


def test_private_split_scores_stay_hidden_while_the_phase_is_open(world: World, client: Any,
                                                                  login: Callable) -> None:
    login(client, world.alice)
    for path in (f"/phases/{world.open_phase.id}/leaderboard", f"/submissions/{world.submission_ids['alice_good']}"):
        page = client.get(path).get_data(as_text=True)
        assert "Private split" not in page and "on the private split" not in page, path


def trick_paths(app: Any, world: World, ctx: ServiceContext) -> list[str]:
    """Return URLs that try to climb out of the static folder to labels and the data dir."""
    settings = ctx.settings
    static = Path(app.static_folder)
    targets = [settings.labels_dir / p.labels_key for p in world.phases]
    assert all(t.exists() for t in targets), "the label files are not where the local storage keeps them"
    project_file = Path(__file__).resolve().parents[2] / "README.md"  # a file of the checkout outside static/
    targets += [project_file, settings.data_dir / "secret_key", Path(settings.database_url.split("///", 1)[-1])]
    paths = []
    for target in targets:
        relative = os.path.relpath(target, static)
        paths += [
            "/static/" + relative,
            "/static/" + relative.replace("..", "%2e%2e"),
            "/static/" + relative.replace("/", "%2f"),
            "/static/" + quote(quote(relative, safe=""), safe=""),
            "/static/" + relative.replace("/", "\\"),
            "/static/" + str(target),
            "/static//" + str(target).lstrip("/"),
        ]
    paths += ["/hidden_labels/README.md", "/static/../hidden_labels/README.md", "/static/%2e%2e/hidden_labels/",
              "/instance/secret_key", f"/phases/{world.open_phase.id}/files/..%2F..%2Flabels-v1.jsonl",
              f"/phases/{world.open_phase.id}/files/{quote(world.open_phase.labels_key, safe='')}"]
    return paths


def test_path_tricks_do_not_reach_labels_or_the_data_dir(world: World, app: Any, client: Any,
                                                         ctx: ServiceContext) -> None:
    private = [SECRET.encode(), (ctx.settings.data_dir / "secret_key").read_bytes().strip()
               if (ctx.settings.data_dir / "secret_key").exists() else ctx.settings.secret_key.encode()]
    for path in trick_paths(app, world, ctx):
        response = client.get(path, follow_redirects=True)  # merged slashes redirect first
        assert response.status_code in (400, 404, 405), (path, response.status_code)
        assert not secrets_in(response.data, world.label_files), path
        assert not any(p and p in response.data for p in private), path
        assert b"SQLite format" not in response.data, path


def test_the_leak_detector_finds_label_data_also_inside_a_zip(world: World) -> None:
    labels = world.label_files[0]
    line = labels.splitlines()[3]
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as zipped:
        zipped.writestr("inner.jsonl", b"prefix " + line + b" suffix")
    assert secrets_in(archive.getvalue(), world.label_files)
    assert secrets_in(b"<p>" + line + b"</p>", world.label_files)
    assert secrets_in(b"why: " + SECRET.encode(), world.label_files)
    assert not secrets_in(b'{"id": "c01", "category": "geography"}', world.label_files)
