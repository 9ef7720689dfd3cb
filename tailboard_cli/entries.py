"""Entries from the command line (docs/ENTRIES.md): --meta values, teams, final selection, organizers' baselines."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from tailboard_cli.client import Client

ClientFactory = Callable[[], Client]


class UsageProblem(Exception):
    """A command line the client cannot send (exit 2)."""


def parse_meta(pairs: Iterable[str]) -> dict[str, Any]:
    """Return --meta key=value pairs as a metadata object: numbers and true/false typed, anything else text.

    A value is read as JSON when it is a number, true, false or a "quoted string"
    (quote a number to send it as text); otherwise it is the text as given.
    """
    metadata: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key.strip():
            raise UsageProblem(f"--meta {pair!r} is not key=value")
        metadata[key.strip()] = _typed(text.strip())
    return metadata


def _typed(text: str) -> Any:
    """Return text as a JSON number, boolean or quoted string when it is one, else as it is."""
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return value if isinstance(value, bool | int | float | str) else text


def add_parsers(commands: Any, client: ClientFactory) -> None:
    """Add the team, select, unselect and baseline commands to the client's subcommands."""
    team = commands.add_parser("team", help="create, join, show or leave a team")
    actions = team.add_subparsers(required=True, metavar="ACTION")
    create = actions.add_parser("create", help="create a team in a competition (you join it)")
    create.add_argument("competition", metavar="COMPETITION")
    create.add_argument("name", metavar="NAME")
    create.set_defaults(handler=lambda args: _show_team(client().create_team(args.competition, args.name), args))
    join = actions.add_parser("join", help="join a team with its invite code")
    join.add_argument("invite_code", metavar="CODE")
    join.set_defaults(handler=lambda args: _show_team(client().join_team(args.invite_code), args))
    show = actions.add_parser("show", help="show a team's members (and, for members, code and entries)")
    show.add_argument("team_id", metavar="TEAM", type=int)
    show.set_defaults(handler=lambda args: _show_team(client().team(args.team_id), args))
    leave = actions.add_parser("leave", help="leave a team (only before its first submission)")
    leave.add_argument("team_id", metavar="TEAM", type=int)
    leave.set_defaults(handler=lambda args: print(f"You left team {client().leave_team(args.team_id)['id']}."))
    for name, selected in (("select", True), ("unselect", False)):
        command = commands.add_parser(name, help=f"{name} a submission for the final (private) ranking")
        command.add_argument("submission", metavar="SUBMISSION", type=int)
        command.set_defaults(handler=_selection(client, selected))
    for sub in (create, join, show):
        sub.add_argument("--json", action="store_true")
    baseline = commands.add_parser("baseline", help="organizers: add a named baseline to a phase")
    baseline.add_argument("phase", metavar="PHASE", type=int)
    baseline.add_argument("file", metavar="FILE")
    baseline.add_argument("--name", required=True, help="e.g. 'Human' or 'GPT-4o zero-shot'")
    baseline.add_argument("--meta", action="append", default=[], metavar="KEY=VALUE", help=META_HELP)
    baseline.set_defaults(handler=lambda args: _add_baseline(client(), args))


META_HELP = ("metadata, repeatable: model, model_id, parameters_b (number), open_weights, uses_retrieval, "
             "uses_knowledge_graph (true/false), prompting, url, notes")


def _selection(client: ClientFactory, selected: bool) -> Callable[[argparse.Namespace], None]:
    def run(args: argparse.Namespace) -> None:
        answer = client().select(args.submission, selected=selected)
        chosen = ", ".join(f"#{i}" for i in answer["selected_ids"]) or "none"
        limit = answer.get("final_selections")
        print(f"Submission {answer['id']} is {'selected' if answer['selected'] else 'not selected'}; "
              f"selected now: {chosen}" + (f" (at most {limit})." if limit else "."))

    return run


def _show_team(team: dict[str, Any], args: argparse.Namespace) -> None:
    if getattr(args, "json", False):
        print(json.dumps(team, indent=2))
        return
    print(f"Team {team['id']} {team['name']!r} in {team['competition']}: "
          + ", ".join(m["display_name"] for m in team["members"]))
    if team.get("invite_code"):
        print(f"  invite code: {team['invite_code']}")
    for entry in team.get("entries") or []:
        print(f"  phase {entry['phase_id']} {entry['method']!r}: {entry['submissions']} submission(s), "
              f"{entry['selected']} selected")
    print(f"  {team['url']}")


def _add_baseline(client: Client, args: argparse.Namespace) -> None:
    path = Path(args.file)
    if not path.is_file():
        raise UsageProblem(f"no such file: {path}")
    answer = client.add_baseline(args.phase, path, name=args.name, metadata=parse_meta(args.meta))
    print(f"Baseline {answer['name']!r} added: submission {answer['submission_id']} ({answer['url']})")
