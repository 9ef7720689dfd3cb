"""The organizer command line (SPEC §6): ``flask --app app users|tokens|phases|rescore|requeue|demo``.

``competitions`` commands are in competitions_cli.py, ``baselines`` in baselines_cli.py.

Every command prints what it did, then its result's id (or token) as its last line,
and exits non-zero with the service's message when a domain error stops it. The CLI
is the trusted operator shell: it calls the services with ``actor=OPERATOR``.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import click
from flask import Flask, current_app
from flask.cli import AppGroup, with_appcontext

from leaderboard.db import naive_utc
from leaderboard.models import Phase
from leaderboard.runtime import Runtime, ServiceContext
from leaderboard.services import accounts, demo_data, jobs, phases, recovery, rescoring
from leaderboard.services.access import OPERATOR, phase_status
from leaderboard.services.entries import with_entry_settings
from leaderboard.services.errors import DomainError
from leaderboard.services.job_runner import run_job
from leaderboard.services.phase_files import phase_questions_report
from leaderboard.services.phase_imports import ImportedFiles, read_import_dir
from leaderboard.services.phase_settings import update_settings
from leaderboard.services.phases import DEFAULT_MAX_PER_DAY, LIMIT_MIN, UNLIMITED
from leaderboard.services.probing import with_probing

users_cli = AppGroup("users", help="Manage accounts.")
tokens_cli = AppGroup("tokens", help="Manage API tokens.")
phases_cli = AppGroup("phases", help="Manage phases.")


def init_app(app: Flask) -> None:
    """Register the organizer commands on app."""
    for group in (users_cli, tokens_cli, phases_cli):
        app.cli.add_command(group)
    for command in (rescore_command, requeue_command, demo_command):
        app.cli.add_command(command)


@contextmanager
def service_context() -> Iterator[ServiceContext]:
    """Yield a service context on a fresh session of the current app's runtime."""
    runtime: Runtime = current_app.extensions["tailboard"]
    with runtime.sessions() as session:
        yield runtime.context(session)


def domain_errors(command: Callable[..., Any]) -> Callable[..., Any]:
    """Turn a DomainError into a click error: its message on stderr, exit status 1."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        """Run the command, reporting a domain error as a click error."""
        try:
            return command(*args, **kwargs)
        except DomainError as error:
            raise click.ClickException(error.message) from None

    return wrapper


DEFAULT = "default"


class OrDefault(click.ParamType):
    """A number of a given kind, or the word 'default' (restore the default)."""

    def __init__(self, kind: type, *, low: float, high: float | None = None, strict_low: bool = False) -> None:
        self.kind, self.low, self.high, self.strict_low = kind, low, high, strict_low
        self.name = "NUMBER|default"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        """Return value as the number kind, or DEFAULT."""
        if isinstance(value, str) and value.strip().lower() in (DEFAULT, "none"):
            return DEFAULT
        try:
            number = self.kind(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a {self.kind.__name__} or 'default'", param, ctx)
        too_low = number <= self.low if self.strict_low else number < self.low
        if too_low or (self.high is not None and number > self.high):
            bounds = f"{'above' if self.strict_low else 'at least'} {self.low}" + (
                f" and at most {self.high}" if self.high is not None else "")
            self.fail(f"{value!r} must be {bounds}", param, ctx)
        return number


def probing_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add the SPEC §12 settings as options (docs/PROBING.md says what each protects and costs)."""
    options = [
        click.option("--min-slice-items", type=OrDefault(int, low=1),
                     help="Answered items a slice needs before participants see it (default 25)."),
        click.option("--public-feedback", type=click.Choice(["exact", "ladder"]),
                     help="exact (default) or ladder (Blum & Hardt)."),
        click.option("--ladder-step", type=OrDefault(float, low=0, high=1, strict_low=True),
                     help="The ladder step (default max(0.001, 1/sqrt(public items)))."),
        click.option("--min-answered", type=OrDefault(int, low=1),
                     help="Refuse files answering fewer items ('default': no minimum)."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def entry_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add the SPEC §9 entry settings as options."""
    options = [
        click.option("--max-methods", type=OrDefault(int, low=1),
                     help="Methods (entries) per team or user (default 3)."),
        click.option("--final-selections", type=OrDefault(int, low=1),
                     help="Submissions a team selects for the private ranking ('default': no selection)."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


class DailyLimit(click.ParamType):
    """A daily submission limit: a whole number from LIMIT_MIN, or 'unlimited' (the organizer's explicit choice)."""

    name = f"N|{UNLIMITED}"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int | str:
        """Return value as an int, or UNLIMITED."""
        if isinstance(value, str) and value.strip().lower() == UNLIMITED:
            return UNLIMITED
        try:
            number = int(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a whole number or '{UNLIMITED}'", param, ctx)
        if number < LIMIT_MIN:
            self.fail(f"{value!r} must be at least {LIMIT_MIN}", param, ctx)
        return number


class IsoDateTime(click.ParamType):
    """An ISO 8601 date or datetime; a time zone is converted to UTC, none means UTC."""

    name = "ISO"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> datetime:
        """Return value as a naive UTC datetime."""
        if isinstance(value, datetime):
            return value
        try:
            parsed = datetime.fromisoformat(str(value).strip())
        except ValueError:
            self.fail(f"{value!r} is not an ISO 8601 date/time such as 2025-03-01T12:00:00Z", param, ctx)
        return naive_utc(parsed)


@users_cli.command("create")
@click.argument("email")
@click.option("--password", required=True, help="At least 8 characters.")
@click.option("--organizer", is_flag=True, help="Let this account manage competitions.")
@click.option("--name", "display_name", help="Public display name (default: from the email).")
@domain_errors
def users_create(email: str, password: str, organizer: bool, display_name: str | None) -> None:
    """Create an account (its email counts as confirmed); prints its id last."""
    with service_context() as ctx:
        user = accounts.register_user(ctx, email=email, password=password, display_name=display_name,
                                      is_organizer=organizer, confirmed=True)
        click.echo(f"Created {'organizer' if organizer else 'user'} {user.display_name} <{user.email}>.")
        click.echo(user.id)


@tokens_cli.command("create")
@click.argument("email")
@click.option("--name", default="cli", show_default=True, help="A label to recognise the token by.")
@domain_errors
def tokens_create(email: str, name: str) -> None:
    """Create an API token for an account; prints the token (shown only once) last."""
    with service_context() as ctx:
        user = accounts.get_user_by_email(ctx, email)
        _, plaintext = accounts.create_token(ctx, user=user, name=name)
        click.echo(f"Created token {name!r} for {user.email}; it is shown only this once.")
        click.echo(plaintext)


@phases_cli.command("create")
@click.argument("slug")
@click.option("--name", required=True, help="Phase name, e.g. 'Camping'.")
@click.option("--labels", "labels_path", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Hidden label file (JSON Lines).")
@click.option("--questions", "questions_path", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Public questions file (default: the labels without answers).")
@click.option("--config", "config_path", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Phase config (JSON, SPEC §2.2; default: inferred from the labels).")
@click.option("--from-import", "import_dir", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="An importer's OUTDIR: labels.jsonl, questions.jsonl and phase.json from there.")
@click.option("--start", "start_at", type=IsoDateTime(), help="Opening time (UTC unless a zone is given).")
@click.option("--end", "end_at", type=IsoDateTime(), help="Closing time.")
@click.option("--max-per-day", type=DailyLimit(),
              help=f"Submissions per participant (or team) per UTC day; default {DEFAULT_MAX_PER_DAY}; "
                   f"'{UNLIMITED}' for no daily limit.")
@click.option("--max-total", type=click.IntRange(min=LIMIT_MIN), help="Submissions per participant in total.")
@click.option("--description", default="")
@click.option("--visibility", type=click.Choice(["public", "hidden"]), default="public", show_default=True,
              help="Who sees the leaderboard.")
@probing_options
@entry_options
@domain_errors
def phases_create(slug: str, name: str, labels_path: Path | None, questions_path: Path | None,
                  config_path: Path | None, import_dir: Path | None, start_at: datetime | None,
                  end_at: datetime | None, max_per_day: int | str | None, max_total: int | None, description: str,
                  visibility: str, **settings: Any) -> None:
    """Create the next phase of competition SLUG; prints its id last."""
    files = _phase_files(labels_path, questions_path, config_path, import_dir)
    given = {key: value for key, value in settings.items() if value != DEFAULT}
    entry = {key: given.pop(key, None) for key in ("max_methods", "final_selections")}
    config = with_entry_settings(with_probing(files.config, given), entry)
    with service_context() as ctx:
        phase = phases.create_phase(
            ctx, competition_slug=slug, name=name, labels=files.labels, questions=files.questions,
            config=config, start_at=start_at, end_at=end_at, max_per_day=max_per_day, max_total=max_total,
            description=description, leaderboard_visibility=visibility, actor=OPERATOR,
        )
        click.echo(f"Created phase {phase.position} {phase.name!r} of {slug!r}: {phase.n_items} items, "
                   f"{'with' if phase.has_private_split else 'without'} a private split, "
                   f"status {phase_status(phase)}, "
                   + (f"{phase.max_per_day} submissions a day." if phase.max_per_day is not None
                      else "NO daily limit (unlimited, as asked)."))
        click.echo(phase_questions_report(ctx, phase).describe())
        click.echo(phase.id)


@phases_cli.command("set")
@click.argument("phase_id", type=int)
@probing_options
@entry_options
@domain_errors
def phases_set(phase_id: int, **settings: Any) -> None:
    """Change a phase's probing defences (SPEC §12) or entry settings (§9; no rescoring needed); prints its id last.

    'default' restores a setting's default (ladder step from the public items; no minimum).
    """
    changes = {key: None if value == DEFAULT else value for key, value in settings.items() if value is not None}
    if not changes:
        raise click.UsageError("Give at least one of --min-slice-items, --public-feedback, --ladder-step, "
                               "--min-answered, --max-methods, --final-selections.")
    with service_context() as ctx:
        phase = update_settings(ctx, phase_id=phase_id, actor=OPERATOR, **changes)
        config = phase.task_config
        click.echo(f"Phase {phase.id} {phase.name!r}: min_slice_items {config.get('min_slice_items')}, "
                   f"public_feedback {config.get('public_feedback')}, ladder_step "
                   f"{config.get('ladder_step', 'default')}, min_answered {config.get('min_answered', 'none')}, "
                   f"max_methods {config.get('max_methods', 3)}, final_selections "
                   f"{config.get('final_selections', 'none')}.")
        click.echo(phase.id)


@phases_cli.command("open")
@click.argument("phase_id", type=int)
@click.option("--confirm-reopen", is_flag=True,
              help="Reopen a closed phase although its private split has been shown.")
@domain_errors
def phases_open(phase_id: int, confirm_reopen: bool) -> None:
    """Open a phase for submissions now; prints its id last."""
    _change_phase(functools.partial(phases.open_phase, confirm=confirm_reopen), phase_id, "open")


@phases_cli.command("close")
@click.argument("phase_id", type=int)
@domain_errors
def phases_close(phase_id: int) -> None:
    """Close a phase now (reveals its private leaderboard); prints its id last."""
    _change_phase(phases.close_phase, phase_id, "closed")


def _change_phase(action: Callable[..., Phase], phase_id: int, state: str) -> None:
    """Run a phase action as the operator and print the new state, then the phase id."""
    with service_context() as ctx:
        phase = action(ctx, phase_id=phase_id, actor=OPERATOR)
        click.echo(f"Phase {phase.id} {phase.name!r} is {state}.")
        click.echo(phase.id)


@click.command("rescore")
@with_appcontext
@click.argument("phase_id", type=int)
@domain_errors
def rescore_command(phase_id: int) -> None:
    """Score a phase's submissions again in the foreground (the web's job runner); prints the phase id last."""
    with service_context() as ctx:
        job = phases.rescore_phase(ctx, phase_id=phase_id, actor=OPERATOR, run=False)
        total = rescoring.count_eligible(ctx, phase_id=phase_id)
        click.echo(f"Re-scoring {total} submission(s) of phase {phase_id} (job {job.id})...")
        run_job(ctx, job_id=job.id)
        view = jobs.get_job(ctx, job_id=job.id, actor=OPERATOR)
        if view.status != "done":
            raise click.ClickException(f"job {job.id} {view.status}: {view.error or 'stopped'}")
        click.echo(f"Re-scored {view.done} submission(s) of phase {phase_id}.")
        click.echo(phase_id)


@click.command("requeue")
@with_appcontext
@domain_errors
def requeue_command() -> None:
    """Dispatch every unfinished submission now (queued, stale scoring, old platform failures); prints how many last."""
    with service_context() as ctx:
        ids = recovery.requeue_unfinished(ctx)
        click.echo(f"Dispatched {len(ids)} unfinished submission(s){': ' if ids else '.'}"
                   + ", ".join(str(i) for i in ids))
        click.echo(len(ids))


@click.command("demo")
@with_appcontext
@domain_errors
def demo_command() -> None:
    """Install a demo competition with phases, participants and scored entries; prints its id last."""
    with service_context() as ctx:
        competition, created = demo_data.install_demo(ctx)
        if created:
            click.echo(f"Created demo competition {competition.slug!r} with {len(competition.phases)} phases; "
                       f"participants log in as {demo_data.PARTICIPANT_EMAILS[0]} (and others) with password "
                       f"{demo_data.PASSWORD!r}.")
        else:
            click.echo(f"demo already present: competition {competition.slug!r}.")
        click.echo(competition.id)


def _phase_files(labels: Path | None, questions: Path | None, config: Path | None,
                 import_dir: Path | None) -> ImportedFiles:
    """Return the phase files: explicit options win over those of an importer's OUTDIR."""
    if import_dir is None and labels is None:
        raise click.UsageError("Give --labels FILE or --from-import DIR.")
    imported = read_import_dir(import_dir) if import_dir is not None else ImportedFiles(b"", None, None)
    return ImportedFiles(
        labels=labels.read_bytes() if labels else imported.labels,
        questions=questions.read_bytes() if questions else imported.questions,
        config=_read_config(config) if config else imported.config,
    )


def _read_config(path: Path) -> dict[str, Any]:
    """Return the JSON object of a phase config file, or stop with a message."""
    try:
        config = json.loads(path.read_text(encoding="utf-8-sig"))
    except (ValueError, OSError) as error:
        raise click.ClickException(f"{path} is not a JSON phase config: {error}") from None
    if not isinstance(config, dict):
        raise click.ClickException(f"{path} must hold one JSON object.")
    return config
