"""tailboard: log in, submit prediction files, and read statuses and rankings."""

from __future__ import annotations

import argparse
import getpass
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tqdm import tqdm

from tailboard_cli import __version__, entries, render
from tailboard_cli.client import ApiError, Client, NetworkError
from tailboard_cli.config import NotLoggedIn, Profile, load_profile, normalize_url, save_profile

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_AUTH, EXIT_INVALID = 0, 1, 2, 3, 4
EXIT_QUOTA, EXIT_NETWORK, EXIT_NOT_FOUND, EXIT_FAILED, EXIT_CONFLICT, EXIT_TIMEOUT = 5, 6, 7, 8, 9, 10
EXIT_CODES = """exit codes:
  0 success               5 over quota or rate limit (prints when it resets)
  1 server error          6 network error (server unreachable, timeout)
  2 usage error           7 not found (or not yours)
  3 not logged in / token rejected / not allowed
  4 file or input rejected (prints each problem with its line number)
  8 the submission failed while scoring      9 conflict (e.g. phase not open, one method too many)
  10 gave up waiting for scores (--timeout)"""
STATUS_EXIT = {400: EXIT_INVALID, 401: EXIT_AUTH, 403: EXIT_AUTH, 404: EXIT_NOT_FOUND, 409: EXIT_CONFLICT,
               413: EXIT_INVALID, 429: EXIT_QUOTA}


class Exit(Exception):
    """Stop with a message on stderr and an exit code."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def main(argv: list[str] | None = None) -> int:
    """Run the command line and return its exit code."""
    args = _parser().parse_args(argv)
    try:
        args.handler(args)
    except Exit as stop:
        print(f"tailboard: {stop}", file=sys.stderr)
        return stop.code
    except entries.UsageProblem as problem:
        print(f"tailboard: {problem}", file=sys.stderr)
        return EXIT_USAGE
    except ApiError as error:
        return _report_api_error(error)
    except NetworkError as error:
        print(f"tailboard: network error: {error}", file=sys.stderr)
        return EXIT_NETWORK
    except NotLoggedIn as error:
        print(f"tailboard: {error}", file=sys.stderr)
        return EXIT_AUTH
    except KeyboardInterrupt:
        print("tailboard: interrupted", file=sys.stderr)
        return 130
    return EXIT_OK


def cmd_login(args: argparse.Namespace) -> None:
    """Check a token against the server and store it."""
    url = normalize_url(args.url)
    token = args.token or getpass.getpass("API token (from your account page): ")
    if not token.strip():
        raise Exit(EXIT_USAGE, "no token given")
    Client(url, token.strip()).competitions()  # 401 if the server rejects the token
    path = save_profile(Profile(url=url, token=token.strip()))
    print(f"Logged in to {url}; token saved in {path}")


def cmd_submit(args: argparse.Namespace) -> None:
    """Upload a prediction file, then optionally wait for its scores."""
    path = Path(args.file)
    if not path.is_file():
        raise Exit(EXIT_USAGE, f"no such file: {path}")
    metadata = entries.parse_meta(args.meta)
    if args.model_id:
        metadata["model_id"] = args.model_id.strip()
    client = _client()
    with tqdm(total=None, unit="B", unit_scale=True, unit_divisor=1024, desc="upload",
              disable=not _show_progress(args), file=sys.stderr) as bar:
        accepted = client.submit(args.phase, path, description=args.description, method=args.method,
                                 metadata=metadata, progress=_progress(bar))
    print(f"Submission {accepted['id']} accepted ({accepted['status']}): {accepted['url']}")
    if args.wait:
        _show_submission(_wait(client, accepted["id"], args.timeout, args.quiet), args.json)


def cmd_status(args: argparse.Namespace) -> None:
    """Show a submission's status and scores."""
    _show_submission(_client().submission(args.submission), args.json)


def cmd_leaderboard(args: argparse.Namespace) -> None:
    """Print a phase's ranking (a table, JSON, or CSV)."""
    client = _client()
    if args.csv:
        sys.stdout.write(client.leaderboard_csv(args.phase))
        return
    board = client.leaderboard(args.phase)
    print(json.dumps(board, indent=2) if args.json else "\n".join(render.leaderboard(board)))


def cmd_phases(args: argparse.Namespace) -> None:
    """List the phases of a competition."""
    found = [c for c in _client().competitions() if c["slug"] == args.competition]
    if not found:
        raise Exit(EXIT_NOT_FOUND, f"no competition with the slug '{args.competition}'")
    print(json.dumps(found[0], indent=2) if args.json else "\n".join(render.phases(found[0])))


def _client() -> Client:
    profile = load_profile()
    return Client(profile.url, profile.token)


def _show_progress(args: argparse.Namespace) -> bool:
    """Draw the upload bar on a terminal only (or when --progress asks), never with --quiet."""
    return not args.quiet and (args.progress or sys.stderr.isatty())


def _progress(bar: tqdm) -> Callable[[int, int], None]:
    def update(done: int, total: int) -> None:
        bar.total = total
        bar.update(done - bar.n)

    return update


def _wait(client: Client, submission_id: int, timeout: float, quiet: bool) -> dict[str, Any]:
    deadline, delay, said = time.monotonic() + timeout, 0.5, ""
    while True:
        submission = client.submission(submission_id)
        if submission["status"] in ("scored", "failed"):
            return submission
        if time.monotonic() > deadline:
            raise Exit(EXIT_TIMEOUT, f"submission {submission_id} is still {submission['status']} after {timeout:g}s; "
                                     f"check later with 'tailboard status {submission_id}'")
        line = render.waiting(submission)
        if not quiet and line != said:  # "queued: 3rd in line, about 20 s", once per change
            print(f"  {line}", file=sys.stderr)
            said = line
        time.sleep(delay)
        delay = min(delay * 1.5, 5.0)


def _show_submission(submission: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print(json.dumps(submission, indent=2))
    else:
        print(f"Submission {submission['id']} (phase {submission['phase_id']}): {submission['status']}")
        print(render.entry(submission))
        if submission["status"] == "scored":
            scores, scope = submission.get("scores"), submission.get("scores_scope")
            print("\n".join(render.scores(scores, submission.get("primary_metric"), scope)))
        for line in render.problems(submission.get("errors")):
            print(line)
    if submission["status"] == "failed":
        reason = submission.get("failure") or "the file was rejected"
        raise Exit(EXIT_FAILED, f"submission {submission['id']} failed: {reason}")


def _report_api_error(error: ApiError) -> int:
    code = STATUS_EXIT.get(error.status, EXIT_ERROR)
    print(f"tailboard: {error.message} (HTTP {error.status})", file=sys.stderr)
    for line in render.problems(error.details):
        print(line, file=sys.stderr)
    if error.status == 429:
        resets = error.details.get("resets_at") if isinstance(error.details, dict) else None
        if resets:
            print(f"  quota resets at {resets}", file=sys.stderr)
        elif error.retry_after:
            print(f"  try again in {error.retry_after} s", file=sys.stderr)
    if error.status == 401:
        print("  run 'tailboard login URL' with a valid token", file=sys.stderr)
    return code


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tailboard", description=__doc__, epilog=EXIT_CODES,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"tailboard {__version__}")
    commands = parser.add_subparsers(required=True, metavar="COMMAND")
    login = commands.add_parser("login", help="store the server URL and your API token")
    login.add_argument("url", metavar="URL")
    login.add_argument("--token", help="the token (default: prompt without echo)")
    login.set_defaults(handler=cmd_login)
    submit = commands.add_parser("submit", help="upload a prediction file")
    submit.add_argument("phase", metavar="PHASE", type=int)
    submit.add_argument("file", metavar="FILE")
    submit.add_argument("--description", default="", help="a note shown with the submission")
    submit.add_argument("--method", default="", help="the entry's method name (default: 'default')")
    submit.add_argument("--meta", action="append", default=[], metavar="KEY=VALUE", help=entries.META_HELP)
    submit.add_argument("--model-id", metavar="ID",
                        help="the model's id, e.g. a Hugging Face repo id (org/name): metadata.model_id, the model "
                             "the result exports name")
    submit.add_argument("--wait", action="store_true", help="wait for the scores and print them")
    submit.add_argument("--timeout", type=float, default=900, help="seconds --wait waits (default 900)")
    submit.add_argument("--quiet", action="store_true", help="no progress output")
    submit.add_argument("--progress", action="store_true",
                        help="draw the upload bar even when stderr is not a terminal (default: only on one)")
    submit.add_argument("--json", action="store_true", help="print the scored submission as JSON")
    submit.set_defaults(handler=cmd_submit)
    status = commands.add_parser("status", help="show a submission's status and scores")
    status.add_argument("submission", metavar="SUBMISSION", type=int)
    status.add_argument("--json", action="store_true")
    status.set_defaults(handler=cmd_status)
    board = commands.add_parser("leaderboard", help="show a phase's ranking")
    board.add_argument("phase", metavar="PHASE", type=int)
    board.add_argument("--csv", action="store_true", help="print CSV")
    board.add_argument("--json", action="store_true")
    board.set_defaults(handler=cmd_leaderboard)
    phases = commands.add_parser("phases", help="list a competition's phases")
    phases.add_argument("competition", metavar="COMPETITION")
    phases.add_argument("--json", action="store_true")
    phases.set_defaults(handler=cmd_phases)
    entries.add_parsers(commands, _client)
    return parser


if __name__ == "__main__":
    sys.exit(main())
