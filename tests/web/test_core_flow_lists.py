"""Issue 20 items 2 and 6: a participant's own list shows scored submissions first with their ranking value and
status, failed uploads folded away; the organizer's list shows the same value."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable
from typing import Any

import pytest

from leaderboard import submissions
from leaderboard.platform import ServiceContext, SubmissionInvalid

pytestmark = pytest.mark.backends("sqlite")


def _upload(ctx: ServiceContext, phase: Any, user: Any, data: bytes) -> None:
    """Upload a file as user; an invalid one is stored failed."""
    with contextlib.suppress(SubmissionInvalid):
        submissions.accept_submission(ctx, phase_id=phase.id, user=user, filename="p.csv", stream=io.BytesIO(data))


def test_own_list_puts_scored_first_and_folds_failed_uploads(
        ctx: ServiceContext, client: Any, login: Callable, make_phase: Callable, make_user: Callable,
        make_predictions: Callable) -> None:
    phase = make_phase(config={"task_type": "binary", "min_slice_items": 1})
    alice = make_user(display_name="Alice")
    _upload(ctx, phase, alice, make_predictions(wrong=2))
    _upload(ctx, phase, alice, b"id,prediction\nnot-an-id,true\n")
    _upload(ctx, phase, alice, b"id,prediction\nq1,maybe\n")
    _upload(ctx, phase, alice, make_predictions(wrong=1))
    login(client, alice)
    page = client.get(f"/phases/{phase.id}").get_data(as_text=True)
    history = page[page.index('id="history"'):]
    main, folded = history.split('<details class="failed-uploads">', 1)
    assert "0.7500" in main and "0.8750" in main and main.count("badge-sub-scored") == 2
    assert "badge-sub-failed" not in main
    assert "2 failed uploads" in folded and folded.count("badge-sub-failed") == 2
    assert "badge-sub-scored" not in folded


def test_a_list_without_failures_has_no_fold(ctx: ServiceContext, client: Any, login: Callable,
                                             make_phase: Callable, make_user: Callable,
                                             make_predictions: Callable) -> None:
    phase = make_phase()
    alice = make_user()
    _upload(ctx, phase, alice, make_predictions())
    login(client, alice)
    page = client.get(f"/phases/{phase.id}").get_data(as_text=True)
    assert "failed-uploads" not in page and "badge-sub-scored" in page
