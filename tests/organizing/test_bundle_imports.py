"""A CodaLab (v1) or Codabench (v2) bundle becomes a competition (docs/MOVING.md): the CLI previews it without
creating anything, then creates the competition with each phase's dates, limits, labels and ranking metric."""

from __future__ import annotations

import hashlib

import pytest
from bundle_world import BundleCase, codabench_bundle, codalab_bundle
from sqlalchemy import func, select

from leaderboard.accounts import OPERATOR
from leaderboard.models import Competition, Phase
from leaderboard.organizing import bundle_imports
from leaderboard.organizing.phases import DEFAULT_MAX_PER_DAY
from leaderboard.platform import Conflict, InvalidInput
from leaderboard.platform.db import naive_utc
from scoring.bundles import read_bundle

CASES = {"codalab": codalab_bundle, "codabench": codabench_bundle}


def count(ctx, model) -> int:
    return ctx.session.scalar(select(func.count()).select_from(model))


@pytest.fixture(params=list(CASES))
def case(request: pytest.FixtureRequest) -> BundleCase:
    return CASES[request.param]()


def test_the_preview_prints_the_plan_and_the_report_and_creates_nothing(ctx, runner, tmp_path, case) -> None:
    path = tmp_path / "bundle.zip"
    path.write_bytes(case.data)
    result = runner.invoke(args=["competitions", "import-bundle", str(path), "--preview"])
    assert result.exit_code == 0, result.output
    out = result.output
    assert case.title in out and "Preview only: nothing was created." in out
    for position, (name, start, _end, _day, _total, items) in enumerate(case.phases, start=1):
        assert f"phase {position} {name!r}: from {naive_utc(start):%Y-%m-%d %H:%M} UTC" in out
        assert f"ranked by accuracy; {items} items" in out
    assert case.not_carried in out
    assert (count(ctx, Competition), count(ctx, Phase)) == (0, 0)
    assert not list(ctx.storage.iter_keys("bundles/"))


def test_the_import_creates_each_phase_with_its_dates_limits_labels_and_metric(ctx, runner, tmp_path, case,
                                                                              make_organizer) -> None:
    owner = make_organizer("owner@example.com")
    path = tmp_path / "bundle.zip"
    path.write_bytes(case.data)
    refused = runner.invoke(args=["competitions", "import-bundle", str(path)])
    assert refused.exit_code == 2 and "--operator-only" in refused.output
    result = runner.invoke(args=["competitions", "import-bundle", str(path), "--slug", "moved",
                                 "--owner", "owner@example.com"])
    assert result.exit_code == 0, result.output
    assert case.not_carried in result.output  # reported, and it stopped nothing
    competition = ctx.session.scalar(select(Competition).where(Competition.slug == "moved"))
    assert competition is not None and result.output.strip().splitlines()[-1] == str(competition.id)
    assert (competition.title, competition.created_by_id) == (case.title, owner.id)
    plan = read_bundle(case.data)
    assert len(competition.phases) == len(case.phases) == len(plan.phases)
    for phase, planned, expected in zip(competition.phases, plan.phases, case.phases, strict=True):
        name, start, end, per_day, total, items = expected
        assert (phase.name, phase.start_at, phase.end_at) == (name, naive_utc(start), naive_utc(end))
        assert (phase.max_per_day, phase.max_total) == (DEFAULT_MAX_PER_DAY if per_day is None else per_day, total)
        assert phase.n_items == items and phase.primary_metric == "accuracy"
        assert phase.task_config["prediction_format"] == "lines"
        assert phase.labels_sha256 == hashlib.sha256(planned.labels).hexdigest()  # the converted file, as planned


def test_a_taken_slug_is_a_conflict_and_an_unreadable_bundle_names_why(ctx, case) -> None:
    bundle_imports.import_bundle(ctx, data=case.data, actor=OPERATOR, slug="first")
    with pytest.raises(Conflict):
        bundle_imports.import_bundle(ctx, data=case.data, actor=OPERATOR, slug="first")
    preview = bundle_imports.preview_bundle(ctx, data=case.data, filename="b.zip", actor=OPERATOR, slug="first")
    assert "not carried: the slug 'first' is taken; choose another before importing" in preview.report
    assert bundle_imports.free_slug(ctx, "First") == "first-2"
    with pytest.raises(InvalidInput, match="not a competition bundle"):
        bundle_imports.import_bundle(ctx, data=b"not a zip", actor=OPERATOR, slug="second")
    assert count(ctx, Competition) == 1
