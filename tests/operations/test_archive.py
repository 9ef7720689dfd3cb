"""The archive (docs/ORGANIZING.md): an export imported on a fresh PostgreSQL instance shows the same boards
and, re-scored, gives the same numbers; a damaged or foreign archive is refused; the export is for managers only."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, func, select
from sqlalchemy.pool import NullPool

from leaderboard import accounts, create_app
from leaderboard.accounts import OPERATOR
from leaderboard.models import AuditEntry, Competition, LabelVersion, Phase, Score, Submission
from leaderboard.operations import import_archive, moderation
from leaderboard.organizing import baselines, competitions, phases
from leaderboard.platform import Conflict, InvalidInput
from leaderboard.platform.db import Base
from leaderboard.submissions import accept_submission, active_score

pytestmark = pytest.mark.backends("sqlite")  # the source instance; the target is PostgreSQL


@pytest.fixture
def source(ctx, make_phase, make_competition, make_user, make_predictions, labels_file) -> Competition:
    """Build a competition with history: two phases, label v2, retired scores, moderation, a baseline, a failure."""
    competition = make_competition("archived", title="Archived benchmark")
    first = make_phase(competition, private=True, name="Dev", max_per_day="unlimited")
    second = make_phase(competition, name="Test", max_per_day="unlimited")
    alice, bob, carol = (make_user(display_name=n) for n in ("Alice", "Bob", "Carol"))
    for user, wrong in ((alice, 1), (bob, 3), (carol, 5)):
        for phase in (first, second):
            accept_submission(ctx, phase_id=phase.id, user=user, filename="p.csv",
                              stream=io.BytesIO(make_predictions(labels_file(private=phase is first), wrong=wrong)))
    late = accept_submission(ctx, phase_id=first.id, user=alice, filename="late.csv",
                             stream=io.BytesIO(make_predictions(wrong=0)))
    moderation.moderate(ctx, submission_id=late.id, state="disqualified", reason="Used the test labels.",
                        actor=OPERATOR)
    baselines.add_baseline(ctx, phase_id=second.id, name="Human", filename="h.csv",
                           stream=io.BytesIO(make_predictions(wrong=2)), actor=OPERATOR)
    fixed = labels_file(private=True).replace(b'"id": "q2", "label": "false"', b'"id": "q2", "label": "true"')
    phases.replace_labels(ctx, phase_id=first.id, labels=fixed, actor=OPERATOR)
    phases.close_phase(ctx, phase_id=first.id, actor=OPERATOR)
    return competition


@pytest.fixture
def target(tmp_path: Path, settings: Any, throwaway_postgres_url: str) -> Iterator[Any]:
    """Return a second instance on a fresh PostgreSQL database with its own storage."""
    engine = create_engine(throwaway_postgres_url, poolclass=NullPool)
    Base.metadata.create_all(engine)
    engine.dispose()
    (tmp_path / "other-data").mkdir()
    values = dataclasses.asdict(settings) | {"database_url": throwaway_postgres_url,
                                             "data_dir": tmp_path / "other-data", "labels_dir": tmp_path / "other-l"}
    application = create_app(values)
    yield application
    application.extensions["tailboard"].engine.dispose()


def board(client: Any, phase_id: int) -> list[dict[str, str]]:
    """Return a phase's board as an anonymous visitor reads its CSV, without the instance's submission ids."""
    text = client.get(f"/api/v1/phases/{phase_id}/leaderboard?format=csv").get_data(as_text=True)
    return [{k: v for k, v in row.items() if k != "submission_id"} for row in csv.DictReader(io.StringIO(text))]


def active_results(session: Any, competition_slug: str) -> list[tuple[int, str, Any]]:
    """Return (phase position, file name, active results) of every submission of a competition, in upload order."""
    rows = session.scalars(select(Submission).join(Phase).join(Competition)
                           .where(Competition.slug == competition_slug).order_by(Phase.position, Submission.id))
    return [(s.phase.position, s.filename, (active_score(s).results if active_score(s) else None)) for s in rows]


def export_bytes(app: Any, ctx: Any, slug: str) -> bytes:
    """Export a competition through the API as its owner (the operator names one; the streamed zip, read to the end)."""
    organizer = accounts.register_user(ctx, email=f"exporter-{slug}@example.com", password="correct horse battery",
                                       is_organizer=True)
    competitions.set_owner(ctx, slug=slug, owner=organizer, actor=OPERATOR)
    _, token = accounts.create_token(ctx, user=organizer)
    response = app.test_client().get(f"/api/v1/competitions/{slug}/export",
                                     headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200 and response.mimetype == "application/zip"
    assert response.is_streamed
    return response.get_data()


def test_an_exported_competition_imported_on_postgresql_shows_the_same_boards_and_rescores_the_same(
        app, ctx, source, target) -> None:
    data = export_bytes(app, ctx, "archived")
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        manifest = json.loads(archive.read("manifest.json"))
        names = set(archive.namelist())
    assert manifest["tailboard_version"] and {"phases/1/labels-v1.jsonl", "phases/1/labels-v2.jsonl",
                                              "phases/1/scores.jsonl", "audit.jsonl"} <= names
    assert "@" not in json.dumps(manifest["users"])  # people by display name, never by email
    runtime = target.extensions["tailboard"]
    with runtime.sessions() as session:
        imported = import_archive(runtime.context(session), source=io.BytesIO(data), actor=OPERATOR)
        new_phases = [p.id for p in imported.phases]
    old_phases = [p.id for p in source.phases]
    for old, new in zip(old_phases, new_phases, strict=True):
        assert board(app.test_client(), old) == board(target.test_client(), new) != []
    with runtime.sessions() as session:
        assert session.scalar(select(func.count()).select_from(Score)) == ctx.session.scalar(
            select(func.count()).select_from(Score))  # active and retired
        assert session.scalar(select(func.count()).select_from(LabelVersion)) == 3
        assert session.scalar(select(func.count()).select_from(AuditEntry)) == ctx.session.scalar(
            select(func.count()).select_from(AuditEntry)) + 1  # and the import itself
        before = active_results(ctx.session, "archived")
        for phase_id in new_phases:
            phases.rescore_phase(runtime.context(session), phase_id=phase_id, actor=OPERATOR)
        session.expire_all()
        assert active_results(session, "archived") == before
    for old, new in zip(old_phases, new_phases, strict=True):
        assert board(app.test_client(), old) == board(target.test_client(), new)


def test_the_export_is_for_the_competition_managers_only(app, ctx, source, make_user, make_organizer,
                                                         make_token) -> None:
    client = app.test_client()
    assert client.get("/api/v1/competitions/archived/export").status_code == 401
    owned = accounts.register_user(ctx, email="owner@example.com", password="correct horse battery",
                                   is_organizer=True)
    ctx.session.get(Competition, source.id).created_by_id = owned.id
    ctx.session.commit()
    for stranger in (make_user(), make_organizer()):
        headers = {"Authorization": f"Bearer {make_token(stranger)}"}
        assert client.get("/api/v1/competitions/archived/export", headers=headers).status_code == 403


def test_a_damaged_or_foreign_archive_is_refused_and_a_taken_slug_is_a_conflict(app, ctx, source) -> None:
    data = export_bytes(app, ctx, "archived")
    with pytest.raises(Conflict):
        import_archive(ctx, source=io.BytesIO(data), actor=OPERATOR)
    with pytest.raises(InvalidInput, match="not a zip"):
        import_archive(ctx, source=io.BytesIO(b"hello"), actor=OPERATOR)
    damaged = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as archive, zipfile.ZipFile(damaged, "w") as out:
        for name in archive.namelist():
            body = archive.read(name)
            out.writestr(name, body.replace(b"true", b"fals") if name.endswith("labels-v2.jsonl") else body)
    ctx.session.rollback()
    with pytest.raises(InvalidInput, match="damaged"):
        import_archive(ctx, source=io.BytesIO(damaged.getvalue()), actor=OPERATOR, slug="copy")


def test_import_archive_on_the_command_line_rebuilds_under_another_slug(app, ctx, source, runner,
                                                                       tmp_path) -> None:
    path = tmp_path / "archived.zip"
    path.write_bytes(export_bytes(app, ctx, "archived"))
    refused = runner.invoke(args=["competitions", "import-archive", str(path), "--slug", "archived-copy"])
    assert refused.exit_code == 2 and "--operator-only" in refused.output  # who manages the copy is not guessed
    result = runner.invoke(args=["competitions", "import-archive", str(path), "--slug", "archived-copy",
                                 "--owner", "exporter-archived@example.com"])
    assert result.exit_code == 0, result.output
    copy = ctx.session.scalar(select(Competition).where(Competition.slug == "archived-copy"))
    assert copy is not None and result.output.strip().splitlines()[-1] == str(copy.id)
    assert copy.created_by_id == ctx.session.scalar(select(Competition.created_by_id)
                                                    .where(Competition.slug == "archived"))
    assert [p.name for p in copy.phases] == ["Dev", "Test"] and copy.phases[0].label_version == 2
