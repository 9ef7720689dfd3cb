"""URL converters: the ``id`` of a row in a path (``/phases/<id:phase_id>``)."""

from __future__ import annotations

from flask import Flask
from werkzeug.routing import IntegerConverter, Map

# Row ids are INTEGER columns (32-bit on PostgreSQL): no row can have a larger id.
MAX_ID = 2**31 - 1


def decimal_range_regex(limit: int) -> str:
    """Return a regex that matches exactly the decimal numbers 1..limit (no sign, no leading zero)."""
    text = str(limit)
    parts = [rf"[1-9]\d{{0,{len(text) - 2}}}"] if len(text) > 1 else []  # every shorter number
    for position, digit in enumerate(text):  # same length: equal up to position, then a smaller digit
        lowest = 1 if position == 0 else 0
        if int(digit) > lowest:
            parts.append(rf"{text[:position]}[{lowest}-{int(digit) - 1}]\d{{{len(text) - position - 1}}}")
    parts.append(text)
    return "(?:" + "|".join(parts) + ")"


class IdConverter(IntegerConverter):
    """A row id: 1 to MAX_ID, so 0, -1 or 2**64 is a 404 page rather than a database OverflowError.

    The range is in the regex, not only in to_python: werkzeug decides 405 (another
    method's rule matched the path) before converting, so a range checked only after
    matching would turn POST /phases/0 into a 405 instead of a 404.
    """

    regex = decimal_range_regex(MAX_ID)

    def __init__(self, url_map: Map) -> None:
        super().__init__(url_map, min=1, max=MAX_ID)


def init_app(app: Flask) -> None:
    """Register ``id`` in the app's URL map (before any blueprint's routes are added)."""
    app.url_map.converters["id"] = IdConverter
