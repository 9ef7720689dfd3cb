"""What every organizer command shares: a service context, domain errors as exit status 1, option types.

A command that creates something prints what it did, then the new id (or token) as
its last line; the others print what they did, or with ``--json`` one JSON object of
their result instead. Every command exits non-zero with the service's message when a
domain error stops it. The CLI
is the trusted operator shell: it calls the services with ``actor=OPERATOR``.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import click
from flask import current_app

from leaderboard.organizing import LIMIT_MIN, UNLIMITED
from leaderboard.platform import DomainError, Runtime, ServiceContext
from leaderboard.platform.db import naive_utc


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


def json_option(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add ``--json``: print the result as one JSON object instead of the message."""
    return click.option("--json", "as_json", is_flag=True,
                        help="Print the result as one JSON object instead of the message.")(command)


def report(message: str, result: dict[str, Any], *, as_json: bool) -> None:
    """Print the message, or with --json only the result object."""
    click.echo(json.dumps(result) if as_json else message)


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
    """Add the probing settings as options (docs/PROBING.md says what each protects and costs)."""
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
    """Add the entry settings (docs/ENTRIES.md) as options."""
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


