"""Phases from released files: the importer runs, its report comes back, labels stay hidden."""

from __future__ import annotations

from pathlib import Path

import pytest
from shared_data import released
from sqlalchemy import select

from leaderboard.accounts import OPERATOR
from leaderboard.models import Phase
from leaderboard.organizing.phase_imports import import_phase
from leaderboard.platform import InvalidInput, NotFound

DEMO = Path(__file__).resolve().parents[2] / "leaderboard" / "demo"


def test_import_creates_a_phase_from_a_released_file(ctx, make_competition):
    competition = make_competition()
    result = import_phase(ctx, actor=OPERATOR, competition_slug=competition.slug, fmt="creak",
                          filename="../claims.json", source=(DEMO / "creak_claims.json").read_bytes(),
                          name="Claims", max_per_day=4)
    phase = result.phase
    assert phase is not None and phase.n_items == 40 and phase.max_per_day == 4
    assert len(result.report.entries) == 40
    questions = ctx.storage.read_bytes(phase.questions_key).decode()
    assert "explanation" not in questions and '"label"' not in questions


def test_preview_reports_without_creating_a_phase(ctx, make_competition):
    competition = make_competition()
    result = import_phase(ctx, actor=OPERATOR, competition_slug=competition.slug, fmt="tgcsr", name="Camping",
                          preview=True,
                          source=released("tg-csr", "jsonl", "camping-tf.jsonl").read_bytes())
    assert result.phase is None and len(result.report.entries) == 340
    assert ctx.session.scalar(select(Phase.id)) is None


@pytest.mark.parametrize(("fmt", "source"), [
    ("creak", b"this is not json"),
    ("colota", b'[{"id": "S1"}]'),
])
def test_unreadable_sources_are_invalid_input(ctx, make_competition, fmt, source):
    with pytest.raises(InvalidInput):
        import_phase(ctx, actor=OPERATOR, competition_slug=make_competition().slug, fmt=fmt, source=source, name="x")


def test_a_file_without_labels_cannot_become_a_phase(ctx, make_competition):
    source = released("creak", "test_without_labels.json").read_bytes()
    with pytest.raises(InvalidInput) as caught:
        import_phase(ctx, actor=OPERATOR, competition_slug=make_competition().slug, fmt="creak", source=source,
                     name="Test")
    assert "no labels" in caught.value.message


def test_unknown_competition_is_not_found_before_importing(ctx):
    with pytest.raises(NotFound):
        import_phase(ctx, actor=OPERATOR, competition_slug="nope", fmt="creak", source=b"", name="x")
