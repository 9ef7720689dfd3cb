"""What an instance says when it starts: competitions without an owner, and mail (with confirmation) off."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import pytest

from leaderboard import create_app
from leaderboard.models import Competition, User
from leaderboard.platform import Settings

OWNERLESS = "have no owner"


def start(settings: Settings, **overrides: Any) -> Any:
    """Build an app on settings (with overrides) and dispose of its engine."""
    app = create_app({**dataclasses.asdict(settings), **overrides})
    app.extensions["tailboard"].engine.dispose()
    return app


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    """Return the WARNING lines the start checks logged."""
    return [r.getMessage() for r in caplog.records if r.name == "leaderboard.organizing.start_checks"
            and r.levelno == logging.WARNING]


def test_start_lists_ownerless_competitions_with_the_command_that_fixes_each(
        settings: Settings, make_competition: Callable[..., Competition], make_organizer: Callable[..., User],
        caplog: pytest.LogCaptureFixture) -> None:
    make_competition("zeta")
    make_competition("alpha")
    make_competition("owned", created_by=make_organizer())
    with caplog.at_level(logging.WARNING, logger="leaderboard.organizing.start_checks"):
        start(settings)
    [line] = [w for w in warnings_of(caplog) if OWNERLESS in w]
    assert "2 competition(s)" in line and "alpha, zeta" in line and "owned" not in line
    assert "flask --app app competitions set-owner alpha EMAIL" in line
    assert "flask --app app competitions set-owner zeta EMAIL" in line


def test_no_warning_when_every_competition_has_an_owner(settings: Settings, make_competition: Callable[..., Any],
                                                        make_organizer: Callable[..., User],
                                                        caplog: pytest.LogCaptureFixture) -> None:
    make_competition(created_by=make_organizer())
    with caplog.at_level(logging.WARNING, logger="leaderboard.organizing.start_checks"):
        start(settings)
    assert not [w for w in warnings_of(caplog) if OWNERLESS in w]


def test_start_says_mail_and_confirmation_are_off_without_smtp(settings: Settings,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="leaderboard.organizing.start_checks"):
        start(settings)
    assert any("sends no mail" in w and "confirmation" in w and "off" in w for w in warnings_of(caplog))
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="leaderboard.organizing.start_checks"):
        start(settings, smtp_url="smtp://127.0.0.1:2525", mail_from="tb@example.org")
    assert not any("sends no mail" in w for w in warnings_of(caplog))


def test_an_unmigrated_database_does_not_stop_the_start(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="leaderboard.organizing.start_checks"):
        app = create_app({"data_dir": tmp_path / "data", "labels_dir": tmp_path / "labels", "testing": True})
    app.extensions["tailboard"].engine.dispose()
    assert any("could not look for competitions" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("command, warned", [("run", True), ("demo", False), ("phases", False)])
def test_start_warnings_come_with_a_server_not_with_each_organizer_command(
        settings: Settings, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch,
        command: str, warned: bool) -> None:
    monkeypatch.setattr("sys.argv", ["flask", "--app", "app", command])
    with click.Context(click.Group("flask")).scope(), \
            caplog.at_level(logging.WARNING, logger="leaderboard.organizing.start_checks"):
        start(settings)
    assert any("sends no mail" in w for w in warnings_of(caplog)) is warned
