"""Issue 20 item 8: a client generated from the served OpenAPI document (openapi-python-client) works end to end.

It lists competitions, submits a file, polls the submission until it is scored and reads the
leaderboard as JSON and as CSV, each through the operation the document gives it: a client
that parsed the CSV as JSON, or a schema missing a returned figure, fails here.
"""

from __future__ import annotations

import csv
import importlib
import io
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("openapi_python_client")
httpx = pytest.importorskip("httpx")

pytestmark = [pytest.mark.backends("sqlite"), pytest.mark.slow]
PACKAGE = "tailboard_generated_client"


def _generate(document: dict[str, Any], where: Path) -> Any:
    """Generate a client package from the document under where; return its module."""
    (where / "openapi.json").write_text(json.dumps(document), encoding="utf-8")
    tool = Path(sys.executable).with_name("openapi-python-client")
    done = subprocess.run([str(tool), "generate", "--path", str(where / "openapi.json"), "--output-path",
                           str(where / PACKAGE), "--meta", "none"], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    sys.path.insert(0, str(where))
    try:
        return importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(where))


def test_a_generated_client_lists_submits_polls_and_reads_the_board(
        app: Any, tmp_path: Path, make_phase: Callable, make_user: Callable, make_token: Callable,
        make_predictions: Callable) -> None:
    phase = make_phase(config={"task_type": "binary", "min_slice_items": 1})
    token = make_token(make_user(display_name="Generated"))
    package = _generate(app.test_client().get("/api/v1/openapi.json").get_json(), tmp_path)
    api = importlib.import_module(f"{PACKAGE}.api")
    models, types = importlib.import_module(f"{PACKAGE}.models"), importlib.import_module(f"{PACKAGE}.types")
    for name in ("competitions.list_competitions", "submissions.create_submission", "submissions.get_submission",
                 "phases.get_leaderboard", "phases.get_leaderboard_csv"):
        importlib.import_module(f"{PACKAGE}.api.{name}")
    client = package.AuthenticatedClient(base_url="http://localhost", token=token,
                                         httpx_args={"transport": httpx.WSGITransport(app=app)})

    listed = api.competitions.list_competitions.sync(client=client)
    assert isinstance(listed, models.CompetitionList)
    assert phase.competition.slug in [c.slug for c in listed.competitions]

    upload = models.SubmissionUpload(file=types.File(payload=io.BytesIO(make_predictions(wrong=1)),
                                                     file_name="p.csv", mime_type="text/csv"), method="generated")
    accepted = api.submissions.create_submission.sync(phase.id, client=client, body=upload)
    assert isinstance(accepted, models.SubmissionAccepted), accepted
    seen = None
    for _ in range(50):  # scoring is inline: scored at once, or after the 202 was answered
        seen = api.submissions.get_submission.sync(accepted.id, client=client)
        if seen.status == "scored":
            break
    assert isinstance(seen, models.Submission) and seen.status == "scored"
    assert seen.scores.overall.accuracy == 0.875

    board = api.phases.get_leaderboard.sync(phase.id, client=client)
    assert isinstance(board, models.Leaderboard)
    mine = [row for row in board.rows if row.display_name == "Generated"]
    assert mine and mine[0].value == 0.875 and mine[0].method == "generated"
    text = api.phases.get_leaderboard_csv.sync(phase.id, client=client)
    assert isinstance(text, str)
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [float(r["accuracy"]) for r in rows if r["name"] == "Generated"] == [0.875]
