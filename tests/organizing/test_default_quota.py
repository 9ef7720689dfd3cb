"""Default quota: a phase created by any path without quota options takes 5 uploads a day; unlimited is explicit.

One test per creation path: the service, the CLI, the import flow, the demo, and an
archive (which keeps what it says). The web form and the API have theirs in
tests/web/test_default_quota_pages.py and tests/api/test_api_participation.py.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from leaderboard import submissions
from leaderboard.accounts import OPERATOR
from leaderboard.demo import DEMO_DIR, install_demo
from leaderboard.models import Competition, Phase
from leaderboard.operations import export_competition, import_archive
from leaderboard.organizing import phase_imports, phases
from leaderboard.platform import InvalidInput, QuotaExceeded, ServiceContext


def cli(runner: Any, *args: str) -> tuple[int, list[str]]:
    """Invoke a CLI command; return its exit code and output lines."""
    result = runner.invoke(args=list(args))
    return result.exit_code, result.output.strip().splitlines()


def test_a_phase_created_without_limits_takes_five_a_day(ctx: ServiceContext, make_competition: Callable[..., Any],
                                                         labels_file: Callable[..., bytes]) -> None:
    competition = make_competition()
    phase = phases.create_phase(ctx, competition_slug=competition.slug, name="P", labels=labels_file(),
                                actor=OPERATOR)
    assert (phase.max_per_day, phase.max_total) == (phases.DEFAULT_MAX_PER_DAY, None) == (5, None)


def test_the_default_limit_holds_for_the_sixth_upload(ctx: ServiceContext, make_phase: Callable[..., Phase],
                                                      make_user: Callable[..., Any],
                                                      make_predictions: Callable[..., bytes]) -> None:
    phase, user = make_phase(), make_user()
    for _ in range(5):
        submissions.accept_submission(ctx, phase_id=phase.id, user=user, filename="p.csv", stream=make_predictions())
    with pytest.raises(QuotaExceeded, match="all 5 submissions of today"):
        submissions.accept_submission(ctx, phase_id=phase.id, user=user, filename="p.csv", stream=make_predictions())


def test_unlimited_is_an_explicit_choice_and_numbers_are_kept(ctx: ServiceContext,
                                                              make_phase: Callable[..., Phase]) -> None:
    assert make_phase(max_per_day=phases.UNLIMITED).max_per_day is None
    assert make_phase(name="Strict", max_per_day=0).max_per_day == 0
    with pytest.raises(InvalidInput, match="'unlimited'"):
        make_phase(name="Odd", max_per_day="lots")


def test_editing_keeps_or_removes_the_limit_explicitly(ctx: ServiceContext, make_phase: Callable[..., Phase]) -> None:
    phase = make_phase()
    assert phases.update_phase(ctx, phase_id=phase.id, actor=OPERATOR, name="Renamed").max_per_day == 5
    assert phases.update_phase(ctx, phase_id=phase.id, actor=OPERATOR, max_per_day="unlimited").max_per_day is None
    assert phases.update_phase(ctx, phase_id=phase.id, actor=OPERATOR, max_per_day=2).max_per_day == 2


def test_cli_phases_create_defaults_to_five_a_day_and_says_unlimited_out_loud(runner: Any, ctx: ServiceContext,
                                                                              tmp_path: Path,
                                                                              labels_file: Callable[..., bytes]
                                                                              ) -> None:
    labels = tmp_path / "labels.jsonl"
    labels.write_bytes(labels_file())
    assert cli(runner, "competitions", "create", "tiny", "--title", "Tiny", "--operator-only")[0] == 0
    code, lines = cli(runner, "phases", "create", "tiny", "--name", "Default", "--labels", str(labels))
    assert code == 0 and "5 submissions a day" in lines[0]
    assert ctx.session.get(Phase, int(lines[-1])).max_per_day == 5
    code, lines = cli(runner, "phases", "create", "tiny", "--name", "Open bar", "--labels", str(labels),
                      "--max-per-day", "unlimited")
    assert code == 0 and "NO daily limit" in lines[0]
    assert ctx.session.get(Phase, int(lines[-1])).max_per_day is None
    code, lines = cli(runner, "phases", "create", "tiny", "--name", "Two", "--labels", str(labels),
                      "--max-per-day", "2")
    assert code == 0 and ctx.session.get(Phase, int(lines[-1])).max_per_day == 2
    assert cli(runner, "phases", "create", "tiny", "--name", "Bad", "--labels", str(labels),
               "--max-per-day", "-1")[0] == 2
    assert cli(runner, "phases", "create", "tiny", "--name", "Bad", "--labels", str(labels),
               "--max-per-day", "many")[0] == 2


def test_the_import_flow_defaults_to_five_a_day(ctx: ServiceContext, make_competition: Callable[..., Any]) -> None:
    competition = make_competition()
    source = (DEMO_DIR / "creak_claims.json").read_bytes()
    outcome = phase_imports.import_phase(ctx, competition_slug=competition.slug, fmt="creak", source=source,
                                         filename="creak_claims.json", name="Dev", actor=OPERATOR)
    assert outcome.phase is not None and outcome.phase.max_per_day == 5
    chosen = phase_imports.import_phase(ctx, competition_slug=competition.slug, fmt="creak", source=source,
                                        filename="creak_claims.json", name="Dev, open", actor=OPERATOR,
                                        max_per_day="unlimited")
    assert chosen.phase is not None and chosen.phase.max_per_day is None


def test_the_demo_phases_all_have_a_daily_limit_and_an_owner(ctx: ServiceContext) -> None:
    competition, created = install_demo(ctx)
    assert created and competition.phases
    assert all(p.max_per_day is not None and p.max_per_day > 0 for p in competition.phases)
    assert competition.created_by_id is not None


def test_an_archive_keeps_the_limits_it_was_exported_with(ctx: ServiceContext, make_competition: Callable[..., Any],
                                                          make_phase: Callable[..., Phase]) -> None:
    competition = make_competition("limits")
    make_phase(competition, name="Unlimited", max_per_day="unlimited")
    make_phase(competition, name="Three", max_per_day=3, max_total=9)
    _, chunks = export_competition(ctx, slug="limits", actor=OPERATOR)
    data = b"".join(chunks)
    with io.BytesIO(data) as archive:
        copy = import_archive(ctx, source=archive, actor=OPERATOR, slug="limits-copy")
    limits = [(p.name, p.max_per_day, p.max_total) for p in copy.phases]
    assert limits == [("Unlimited", None, None), ("Three", 3, 9)]
    manifest = json.loads(zipfile.ZipFile(io.BytesIO(data)).read("manifest.json"))
    assert manifest["phases"][0]["max_per_day"] is None
    assert ctx.session.scalar(select(Competition.created_by_id).where(Competition.slug == "limits-copy")) is None
