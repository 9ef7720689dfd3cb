"""Issue 20 item 1: a phase ranked by a slice (CoLoTa's ``popularity.tail.accuracy``) shows that value everywhere.

The built-in baselines carry their slices like any upload (disclosure/visibility.py, the same rules as a
participant's file): the board, its CSV and the API's default view show their tail accuracy, and the
participant's and the organizer's submission lists show each submission's ranking value as the board does.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from shared_data import released

from leaderboard import submissions
from leaderboard.accounts import OPERATOR
from leaderboard.models import Phase, User
from leaderboard.organizing import competitions, phase_settings, phases
from leaderboard.organizing.phase_imports import import_phase
from leaderboard.platform import ServiceContext

pytestmark = pytest.mark.backends("sqlite")
DEMO = Path(__file__).resolve().parents[2] / "leaderboard" / "demo"
METRIC = "popularity.tail.accuracy"


def _phase(ctx: ServiceContext, organizer: User, source: bytes, originals: bytes, **config: Any) -> Phase:
    """Import a CoLoTa file with its originals into a new competition of the organizer, and open it."""
    competitions.create_competition(ctx, slug="colota", title="CoLoTa", description="", actor=organizer)
    phase = import_phase(ctx, competition_slug="colota", fmt="colota", source=source, filename="qa.json",
                         originals=originals, name="QA", actor=organizer).phase
    assert phase is not None and phase.primary_metric == METRIC
    if config:
        phase_settings.update_settings(ctx, phase_id=phase.id, actor=organizer, **config)
    return phases.open_phase(ctx, actor=OPERATOR, phase_id=phase.id)


def _answers(ctx: ServiceContext, phase: Phase, *, every: int = 3) -> bytes:
    """Return a prediction file: right on all but every n-th item."""
    import json

    records = [json.loads(line) for line in ctx.labels.read_bytes(phase.labels_key).splitlines()]
    rows = [f"{r['id']},{str(r['label']).lower() if i % every else str(not r['label']).lower()}"
            for i, r in enumerate(records)]
    return ("id,prediction\n" + "\n".join(rows) + "\n").encode()


def _check_everywhere(client: Any, ctx: ServiceContext, phase: Phase, login: Callable, participant: User,
                      organizer: User) -> None:
    """Assert the baselines and the participant's upload show a tail accuracy on the board, CSV, API and lists."""
    api = client.get(f"/api/v1/phases/{phase.id}/leaderboard").get_json()
    assert api["view"]["metric"] == METRIC
    values = {row["display_name"]: row["value"] for row in api["rows"]}
    assert set(values) == {"Majority class", "Random (seed 0)", "All yes", "Alice"}
    assert all(isinstance(value, float) for value in values.values()), values
    table = list(csv.DictReader(io.StringIO(client.get(
        f"/api/v1/phases/{phase.id}/leaderboard?format=csv").get_data(as_text=True))))
    assert {row["name"]: float(row[METRIC]) for row in table} == values
    split = client.get(f"/api/v1/phases/{phase.id}/leaderboard.csv")
    assert split.mimetype == "text/csv" and list(csv.DictReader(io.StringIO(split.get_data(as_text=True)))) == table
    board = client.get(f"/phases/{phase.id}/leaderboard").get_data(as_text=True)
    for name, value in values.items():
        assert re.search(rf"{re.escape(name)}.*?{value:.4f}", board, re.S), name
    login(client, participant)
    own = client.get(f"/phases/{phase.id}").get_data(as_text=True)
    history = own[own.index('id="history"'):]
    assert f"{values['Alice']:.4f}" in history and "–</td>" not in history
    login(client, organizer)
    listed = client.get(f"/organizer/phases/{phase.id}/submissions").get_data(as_text=True)
    for value in values.values():
        assert f"{value:.4f}" in listed
    assert "–</td>" not in listed


@pytest.mark.parametrize("source", ["demo", "released"])
def test_baselines_show_their_tail_accuracy_on_the_board_the_csv_and_every_list(
        source: str, ctx: ServiceContext, client: Any, login: Callable, make_user: Callable,
        make_organizer: Callable) -> None:
    organizer, participant = make_organizer(), make_user(display_name="Alice")
    if source == "demo":
        phase = _phase(ctx, organizer, (DEMO / "colota_qa.json").read_bytes(),
                       (DEMO / "colota_qa_originals.csv").read_bytes(), min_slice_items=1)
    else:
        phase = _phase(ctx, organizer, released("colota", "CoLoTa_qa.json").read_bytes(),
                       released("colota", "baselines", "data", "QA-original.csv").read_bytes())
    submissions.accept_submission(ctx, phase_id=phase.id, user=participant, filename="p.csv",
                                  stream=io.BytesIO(_answers(ctx, phase)))
    _check_everywhere(client, ctx, phase, login, participant, organizer)


def test_head_tail_and_category_rows_name_the_method(ctx: ServiceContext, client: Any, make_phase: Callable,
                                                   make_user: Callable, make_predictions: Callable) -> None:
    phase = make_phase(config={"task_type": "binary", "min_slice_items": 1, "breakdowns": ["category"]})
    alice = make_user(display_name="Alice Lab")
    for method, wrong in (("zero-shot", 1), ("retrieval", 2)):
        submissions.accept_submission(ctx, phase_id=phase.id, user=alice, filename="p.csv", method=method,
                                      stream=io.BytesIO(make_predictions(wrong=wrong)))
    board = client.get(f"/phases/{phase.id}/leaderboard").get_data(as_text=True)
    for section in (board[board.index('id="headtail-title"'):], board[board.index('id="breakdown-0"'):]):
        assert "Alice Lab <span class=\"entry-method\">— zero-shot</span>" in section
        assert "Alice Lab <span class=\"entry-method\">— retrieval</span>" in section
