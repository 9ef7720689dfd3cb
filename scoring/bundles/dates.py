"""Dates of a competition.yaml as UTC datetimes.

YAML gives dates (``2019-01-01``), datetimes with or without an offset
(``2019-09-24 17:00:00+00:00``) or strings. Strings are read as ISO 8601 first, then
as the month-first forms Codabench's own examples use (``8-7-2019``, ``1/31/2026 14:30``),
which its date parser reads month first. A date or datetime without an offset is UTC,
as on CodaLab and Codabench.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime

_MONTH_FIRST = re.compile(r"^(\d{1,2})[-/](\d{1,2})[-/](\d{4})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2}))?)?$")
_NONE = ("", "null", "none", "~")


def to_utc(value: object) -> datetime | None:
    """Return a YAML date value as an aware UTC datetime, None when absent; ValueError when unreadable."""
    if value is None or (isinstance(value, str) and value.strip().lower() in _NONE):
        return None
    if isinstance(value, datetime):
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    if not isinstance(value, str):
        raise ValueError(f"{value!r} is not a date")
    text = value.strip()
    try:
        return to_utc(datetime.fromisoformat(text))
    except ValueError:
        pass
    match = _MONTH_FIRST.match(text)
    if match is None:
        raise ValueError(f"{text!r} is not a date Tailboard reads (use YYYY-MM-DD HH:MM:SS)")
    month, day, year, hour, minute, second = (int(part) if part else 0 for part in match.groups())
    try:
        return datetime(year, month, day, hour, minute, second, tzinfo=UTC)
    except ValueError:
        raise ValueError(f"{text!r} is not a date (read month first: month-day-year)") from None


def shown(moment: datetime | None) -> str:
    """Return a UTC datetime as the report shows it ('2019-08-07 00:00 UTC'), or 'none'."""
    return "none" if moment is None else moment.strftime("%Y-%m-%d %H:%M UTC")
