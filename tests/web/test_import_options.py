"""The import form offers each importer's options (docs/ORGANIZING.md, web parity with the CLI): CoLoTa's originals, a
private split, and a preview whose file is kept so the organizer uploads it once."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from shared_data import released
from web_world import World, build_world

from leaderboard import submissions
from leaderboard.accounts import OPERATOR
from leaderboard.models import Phase
from leaderboard.organizing import phases
from leaderboard.phase_data import assign_private_split
from leaderboard.platform import ServiceContext

pytestmark = pytest.mark.backends("sqlite")
IMPORT = "/organizer/c/alpha/phases/import"


@pytest.fixture
def world(ctx: ServiceContext) -> World:
    """Return the shared test world."""
    return build_world(ctx)


@pytest.fixture
def organizer(world: World, client: Any, login: Callable) -> Any:
    """Return the test client logged in as the organizer of competition alpha."""
    login(client, world.org_a)
    return client


def post(client: Any, path: str, token_page: str, fields: dict[str, Any], csrf_token: Callable) -> Any:
    """Post a multipart form with the CSRF token of the page it lives on."""
    return client.post(path, data={**fields, "csrf_token": csrf_token(client, token_page)},
                       content_type="multipart/form-data")


def test_colota_qa_with_originals_and_a_30_percent_private_split_entirely_from_the_web(
        organizer: Any, csrf_token: Callable, ctx: ServiceContext, world: World) -> None:
    qa = released("colota", "CoLoTa_qa.json").read_bytes()
    originals = released("colota", "baselines", "data", "QA-original.csv").read_bytes()
    preview = post(organizer, IMPORT, IMPORT, {
        "format": "colota", "source": (io.BytesIO(qa), "CoLoTa_qa.json"),
        "originals": (io.BytesIO(originals), "QA-original.csv"), "private_percent": "30", "preview": "y",
        "name": "CoLoTa QA", "leaderboard_visibility": "public"}, csrf_token)
    page = preview.get_data(as_text=True)
    assert preview.status_code == 200 and "Preview only" in page and "are private" in page
    token = re.search(r'name="kept" type="hidden" value="([0-9a-f]{32})"', page) or re.search(
        r'id="kept" name="kept" type="hidden" value="([0-9a-f]{32})"', page)
    assert token, "the preview does not keep the uploaded files"
    assert ctx.session.query(Phase).filter_by(name="CoLoTa QA").count() == 0
    created = post(organizer, IMPORT, IMPORT, {  # no file this time: the kept one is used
        "format": "colota", "kept": token.group(1), "private_percent": "30", "name": "CoLoTa QA",
        "leaderboard_visibility": "public"}, csrf_token)
    assert created.status_code == 200 and "was created with" in created.get_data(as_text=True)
    phase = ctx.session.query(Phase).filter_by(name="CoLoTa QA").one()
    records = [json.loads(line) for line in ctx.labels.read_bytes(phase.labels_key).splitlines()]
    head = [r for r in records if r.get("popularity") == "head"]
    private = [r for r in records if r["split"] == "private"]
    assert phase.has_private_split and len(head) > 100 and len(records) - len(head) > 1000
    assert abs(len(private) / len(records) - 0.30) < 0.02
    phases.open_phase(ctx, phase_id=phase.id, actor=OPERATOR)
    answers = "\n".join(f"{r['id']},{str(r['label']).lower() if i % 3 else 'false'}" for i, r in enumerate(records))
    submissions.accept_submission(ctx, phase_id=phase.id, user=world.alice, filename="p.csv",
                                  stream=io.BytesIO(f"id,prediction\n{answers}\n".encode()))
    board = organizer.get(f"/phases/{phase.id}/leaderboard").get_data(as_text=True)
    section = board[board.index('id="headtail-title"'):]
    assert "bucket-head" in section and "bucket-tail" in section and "Alice Lab" in section


def test_a_kept_preview_belongs_to_its_competition(organizer: Any, csrf_token: Callable, world: World,
                                                   client: Any, login: Callable, ctx: ServiceContext) -> None:
    source = released("creak", "contrast_set.json").read_bytes()
    page = post(organizer, IMPORT, IMPORT, {"format": "creak", "source": (io.BytesIO(source), "contrast_set.json"),
                                            "preview": "y", "name": "C", "leaderboard_visibility": "public"},
                csrf_token).get_data(as_text=True)
    token = re.search(r'value="([0-9a-f]{32})"', page).group(1)
    login(client, world.org_b)
    other = "/organizer/c/beta/phases/import"
    response = post(client, other, other, {"format": "creak", "kept": token, "name": "Stolen",
                                           "leaderboard_visibility": "public"}, csrf_token)
    assert response.status_code == 400 and "upload it again" in response.get_data(as_text=True)
    assert ctx.session.query(Phase).filter_by(name="Stolen").count() == 0


def test_the_private_split_is_stratified_reproducible_and_keeps_groups_together() -> None:
    records = [{"id": f"q{i}", "label": i % 2 == 0, "category": ["a", "b", "c"][i % 3],
                "popularity": "head" if i < 60 else "tail", "group": f"g{i // 2}"} for i in range(300)]
    labels = ("\n".join(json.dumps(r) for r in records) + "\n").encode()
    first, report = assign_private_split(labels, percent=30)
    again, _ = assign_private_split(labels, percent=30)
    assert first == again and report.private_items + report.public_items == 300
    split = {r["id"]: r["split"] for r in map(json.loads, first.splitlines())}
    assert all(split[f"q{2 * g}"] == split[f"q{2 * g + 1}"] for g in range(150))  # groups stay together
    head_private = sum(1 for i in range(60) if split[f"q{i}"] == "private")
    assert abs(head_private / 60 - 0.3) < 0.1 and abs(report.private_items / 300 - 0.3) < 0.03
