"""The operator's command line: ``flask --app app <group> <command>``, one module per group (docs/CLI.md).

``accounts`` (users, tokens), ``phases`` (phases, rescore, requeue), ``competitions`` (with
``bundles``: ``competitions import-bundle``),
``baselines``, ``boards`` and ``demo``; ``common`` holds what they share (the service
context, domain errors as exit status 1, option types). An entry point: it may import any
domain package below it, never ``web`` or ``workers``. Front door: ``init_app(app)``.
"""

from __future__ import annotations

from flask import Flask

from leaderboard.cli import bundles  # noqa: F401  (adds ``competitions import-bundle`` to competitions_cli)
from leaderboard.cli.accounts import tokens_cli, users_cli
from leaderboard.cli.baselines import baselines_cli
from leaderboard.cli.boards import boards_cli
from leaderboard.cli.competitions import competitions_cli
from leaderboard.cli.demo import demo_command
from leaderboard.cli.phases import phases_cli, requeue_command, rescore_command

COMMANDS = (users_cli, tokens_cli, phases_cli, rescore_command, requeue_command, demo_command, competitions_cli,
            baselines_cli, boards_cli)


def init_app(app: Flask) -> None:
    """Register every operator command on app."""
    for command in COMMANDS:
        app.cli.add_command(command)
