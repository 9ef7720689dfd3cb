"""Phases: status from overrides and the clock, creation from organizer files, public files, baselines."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import select

import scoring
from leaderboard.accounts import OPERATOR, access
from leaderboard.models import Baseline, Phase, Submission
from leaderboard.organizing import phases
from leaderboard.phase_data import load_phase_labels, phase_files
from leaderboard.platform import Conflict, InvalidInput, NotFound
from leaderboard.platform.db import utcnow
from leaderboard.submissions import active_score

NOW = datetime(2025, 3, 1, 12, 0)


def bare(**fields) -> Phase:
    """Return an unsaved phase with only the fields status derivation reads."""
    return Phase(**{"start_at": None, "end_at": None, "state_override": None, **fields})


@pytest.mark.parametrize(("fields", "expected"), [
    ({}, "upcoming"),
    ({"start_at": NOW + timedelta(seconds=1)}, "upcoming"),
    ({"start_at": NOW}, "open"),
    ({"start_at": NOW - timedelta(days=1), "end_at": NOW + timedelta(days=1)}, "open"),
    ({"start_at": NOW - timedelta(days=2), "end_at": NOW}, "closed"),
    ({"start_at": None, "state_override": "open"}, "open"),
    ({"start_at": NOW - timedelta(days=1), "state_override": "closed"}, "closed"),
    ({"start_at": NOW - timedelta(days=2), "end_at": NOW - timedelta(days=1), "state_override": "open"}, "open"),
])
def test_phase_status_override_wins_else_the_clock(fields, expected):
    assert access.phase_status(bare(**fields), NOW) == expected


def test_create_phase_stores_labels_hidden_and_questions_public(ctx, make_competition, labels_file):
    competition = make_competition()
    phase = phases.create_phase(ctx, actor=OPERATOR, competition_slug=competition.slug, name="Dev",
                                labels=labels_file(private=True))
    assert phase.labels_key == f"labels/sha256/{hashlib.sha256(labels_file(private=True)).hexdigest()}.jsonl"
    assert ctx.labels.read_bytes(phase.labels_key) == labels_file(private=True)
    assert not ctx.storage.exists(phase.labels_key)
    questions = ctx.storage.read_bytes(f"public/phases/{phase.id}/questions.jsonl").decode()
    assert "label" not in questions and "split" not in questions and '"q8"' in questions
    assert (phase.n_items, phase.has_private_split, phase.position) == (8, True, 1)
    assert phase.task_config["task_type"] == "binary" and phase.task_config["breakdowns"] == ["category"]
    assert len(phase.labels_sha256) == 64 and access.phase_status(phase) == "upcoming"


def test_phases_are_positioned_in_creation_order(ctx, make_competition, make_phase):
    competition = make_competition()
    first, second = make_phase(competition), make_phase(competition, name="Test")
    assert (first.position, second.position) == (1, 2)
    assert [p.id for p in ctx.session.get(type(competition), competition.id).phases] == [first.id, second.id]


@pytest.mark.parametrize(("labels", "config", "fragment"), [
    (b'{"id": "a", "label": true}\n{"id": "a", "label": false}\n', None, "line 2"),
    (b'{"id": "a", "label": true, "split": "secret"}\n', None, "split"),
    (b'{"id": "a", "label": "maybe"}\n', None, "maybe"),
    (b'{"id": "a", "label": true}\n', {"task_type": "binary", "primary_metric": "fame"}, "primary_metric"),
    (b"", None, "empty"),
])
def test_bad_label_file_or_config_is_invalid_input_with_scorings_message(ctx, make_competition, labels, config,
                                                                        fragment):
    competition = make_competition()
    with pytest.raises(InvalidInput) as caught:
        phases.create_phase(ctx, actor=OPERATOR, competition_slug=competition.slug, name="x", labels=labels,
                            config=config)
    assert fragment in caught.value.message
    assert ctx.session.scalar(select(Phase.id)) is None


def test_questions_with_labels_are_refused(ctx, make_competition, labels_file):
    with pytest.raises(InvalidInput):
        phases.create_phase(ctx, actor=OPERATOR, competition_slug=make_competition().slug, name="x",
                            labels=labels_file(), questions=labels_file())


@pytest.mark.parametrize("fields", [
    {"start_at": NOW, "end_at": NOW - timedelta(hours=1)},
    {"max_per_day": -1},
    {"max_total": "5"},
    {"leaderboard_visibility": "secret"},
    {"name": "  "},
])
def test_bad_phase_fields_are_refused(ctx, make_competition, labels_file, fields):
    arguments = {"name": "Dev", **fields}
    with pytest.raises(InvalidInput):
        phases.create_phase(ctx, actor=OPERATOR, competition_slug=make_competition().slug, labels=labels_file(),
                            **arguments)


def test_unknown_competition_is_not_found(ctx, labels_file):
    with pytest.raises(NotFound):
        phases.create_phase(ctx, actor=OPERATOR, competition_slug="nope", name="x", labels=labels_file())


def test_aware_dates_are_stored_as_naive_utc(ctx, make_competition, labels_file):
    start = datetime(2025, 1, 1, 12, 0, tzinfo=timezone(timedelta(hours=2)))
    phase = phases.create_phase(ctx, actor=OPERATOR, competition_slug=make_competition().slug, name="x",
                                labels=labels_file(), start_at=start)
    assert phase.start_at == datetime(2025, 1, 1, 10, 0)


def test_builtin_baselines_are_scored_and_flagged(ctx, make_phase):
    phase = make_phase()
    baselines = {b.name: b for b in ctx.session.scalars(select(Baseline).where(Baseline.phase_id == phase.id))}
    assert set(baselines) == {"Majority class", "Random (seed 0)", "All yes"}
    for baseline in baselines.values():
        assert baseline.kind == "builtin" and baseline.submission.is_baseline
        assert baseline.submission.status == "scored"
        assert baseline.submission.user.email == "system@tailboard.invalid"
    # tiny labels: 5 of 8 true -> majority says true everywhere, like all-yes
    assert active_score(baselines["Majority class"].submission).public_primary == pytest.approx(5 / 8)
    assert active_score(baselines["All yes"].submission).public_primary == pytest.approx(5 / 8)


def test_random_baseline_is_reproducible(ctx, make_phase, make_competition):
    first, second = make_phase(), make_phase(make_competition())
    files = []
    for phase in (first, second):
        submission = ctx.session.scalar(select(Submission).join(Baseline, Baseline.submission_id == Submission.id)
                                        .where(Baseline.phase_id == phase.id, Baseline.name == "Random (seed 0)"))
        files.append(ctx.storage.read_bytes(submission.file_key))
    assert files[0] == files[1] and b"true" in files[0] and b"false" in files[0]


def test_multiple_choice_phase_has_no_all_yes_baseline(ctx, make_competition):
    labels = b"".join(json.dumps({"id": f"m{i}", "label": "ABCA"[i % 4]}).encode() + b"\n" for i in range(8))
    phase = phases.create_phase(ctx, actor=OPERATOR, competition_slug=make_competition().slug, name="MC", labels=labels)
    names = set(ctx.session.scalars(select(Baseline.name).where(Baseline.phase_id == phase.id)))
    assert names == {"Majority class", "Random (seed 0)"}
    assert phase.task_config["options"] == ["A", "B", "C"]


def test_open_and_close_override_the_clock(ctx, make_phase):
    phase = make_phase(status="upcoming", start_at=utcnow() + timedelta(days=5))
    assert access.phase_status(phases.open_phase(ctx, actor=OPERATOR, phase_id=phase.id)) == "open"
    closed = phases.close_phase(ctx, actor=OPERATOR, phase_id=phase.id)
    assert access.phase_status(closed) == "closed" and closed.end_at <= utcnow()


def test_update_phase_changes_limits_and_refuses_unknown_fields(ctx, make_phase):
    phase = make_phase()
    updated = phases.update_phase(ctx, actor=OPERATOR, phase_id=phase.id, max_per_day=9,
                                  leaderboard_visibility="hidden")
    assert (updated.max_per_day, updated.leaderboard_visibility) == (9, "hidden")
    with pytest.raises(InvalidInput):
        phases.update_phase(ctx, actor=OPERATOR, phase_id=phase.id, labels_key="phases/other")
    with pytest.raises(InvalidInput):
        phases.update_phase(ctx, actor=OPERATOR, phase_id=phase.id, state_override="paused")


def test_starting_kit_has_questions_a_valid_sample_and_a_readme(ctx, make_phase):
    phase = make_phase(private=True)
    name, data = phase_files.public_file(ctx, phase_id=phase.id, name="starting_kit.zip")
    assert name.endswith("starting_kit.zip")
    archive = zipfile.ZipFile(io.BytesIO(data))
    assert sorted(archive.namelist()) == ["README.txt", "questions.jsonl", "sample_submission.csv"]
    sample = archive.read("sample_submission.csv").decode().splitlines()
    assert sample[0] == "id,prediction" and len(sample) == 9
    assert "label" not in archive.read("questions.jsonl").decode()
    scoring.read_predictions(archive.read("sample_submission.csv"), load_phase_labels(ctx, phase), max_bytes=10**6)


def test_public_files_wait_for_the_phase_to_open_except_for_organizers(ctx, make_phase, make_competition,
                                                                      make_organizer, make_user):
    organizer = make_organizer()
    phase = make_phase(make_competition(created_by=organizer), status="upcoming")
    with pytest.raises(NotFound):
        phase_files.public_file(ctx, phase_id=phase.id, name="questions.jsonl", viewer=make_user())
    name, data = phase_files.public_file(ctx, phase_id=phase.id, name="questions.jsonl", viewer=organizer)
    assert name.endswith("questions.jsonl") and data.count(b"\n") == 8
    with pytest.raises(NotFound):
        phase_files.public_file(ctx, phase_id=phase.id, name="labels.jsonl", viewer=organizer)


def test_upcoming_data_is_refused_to_another_competitions_organizer(ctx, make_competition, make_phase,
                                                                     make_organizer):
    owner, other = make_organizer(), make_organizer()
    phase = make_phase(make_competition(created_by=owner), status="upcoming")
    with pytest.raises(NotFound):
        phase_files.public_file(ctx, phase_id=phase.id, name="questions.jsonl", viewer=other)
    assert phase_files.public_file(ctx, phase_id=phase.id, name="questions.jsonl", viewer=owner)[1]


def test_label_sets_are_cached_per_label_version(ctx, make_phase, labels_file):
    phase = make_phase()
    assert load_phase_labels(ctx, phase) is load_phase_labels(ctx, phase)
    first = load_phase_labels(ctx, phase)
    phases.replace_labels(ctx, actor=OPERATOR, phase_id=phase.id, labels=labels_file(private=True))
    assert phase.label_version == 2 and load_phase_labels(ctx, phase) is not first


def test_create_phase_position_conflict_is_reported(ctx, make_competition, labels_file, monkeypatch):
    competition = make_competition()
    phases.create_phase(ctx, actor=OPERATOR, competition_slug=competition.slug, name="a", labels=labels_file())
    monkeypatch.setattr(phases, "func", _MaxIsZero())
    with pytest.raises(Conflict):
        phases.create_phase(ctx, actor=OPERATOR, competition_slug=competition.slug, name="b", labels=labels_file())


class _MaxIsZero:
    """Stands in for sqlalchemy.func so the next position computed is 1 again (a lost race)."""

    def max(self, column):
        from sqlalchemy import literal

        return literal(0) + (column * 0)
