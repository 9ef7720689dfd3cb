"""Embeds and badges (docs/MOVING.md#embeds-and-badges): a board's top entries for another site's iframe, and
an entry's rank as an SVG badge.

Both read the board exactly as an anonymous visitor does (board.ranking, the same rows,
the same coarse or exact figures), whoever asks: no viewer's mark, no organizer's view.
The embed is the one page any origin may frame (web/security.py's FRAMABLE_ENDPOINTS);
both are kept by ETag like the ranking page (board_cache.pages).
"""

from __future__ import annotations

from xml.sax.saxutils import escape

from flask import Blueprint, Response, render_template, request

from leaderboard.board import BoardQuery, ranking
from leaderboard.board.read import ShownRow
from leaderboard.platform import Forbidden
from leaderboard.web.board_cache.pages import cached_response
from leaderboard.web.context import ctx
from leaderboard.web.templating import score

bp = Blueprint("embeds", __name__)

DEFAULT_ROWS = 10
MAX_ROWS = 50
GREY, BLUE, LABEL = "#9f9f9f", "#007ec6", "#555"


def _rows_wanted() -> int:
    """Return the n of the query string, within 1..MAX_ROWS (DEFAULT_ROWS when absent or not a number)."""
    wanted = request.args.get("n", type=int)
    return DEFAULT_ROWS if wanted is None else max(1, min(MAX_ROWS, wanted))


@bp.get("/phases/<id:phase_id>/embed")
def embed(phase_id: int) -> Response:
    """Show the top n entries of one view of the phase's public board, with a link to the whole board."""
    view = request.args.get("view") or None
    board = ranking.leaderboard(ctx(), phase_id=phase_id, viewer=None,
                                query=BoardQuery(view=view, per_page=_rows_wanted()))
    return cached_response(("embed", board.cache_key), lambda: render_template(
        "public/embed.html", board=board, phase=board.phase, rows=board.rows), personal=False,
        mimetype="text/html")


@bp.get("/phases/<id:phase_id>/badge.svg")
def badge(phase_id: int) -> Response:
    """Return an SVG badge with the entry's rank and ranking value as the board shows them ("not ranked" if absent)."""
    entry = request.args.get("entry", type=int)
    try:
        board = ranking.leaderboard(ctx(), phase_id=phase_id, viewer=None,
                                    query=BoardQuery(view=request.args.get("view") or None, every_row=True))
    except Forbidden:  # the organizers keep this board hidden: a badge says no more than the board
        return _svg(("hidden", entry), "leaderboard", "not shown", GREY)
    row = next((r for r in board.rows if r.submission_id == entry), None) if board.readable else None
    return _svg(("badge", board.cache_key, entry), board.phase.name, _message(row), BLUE if row else GREY)


def _message(row: ShownRow | None) -> str:
    """Return a badge's message: rank and the ranking value as shown, or "not ranked"."""
    if row is None or row.rank is None:
        return "not ranked"
    return f"#{row.rank} · {score(row.value)}"


def _svg(key: object, label: str, message: str, color: str) -> Response:
    """Return a flat shields-like SVG of label and message, kept by ETag like the board."""
    return cached_response(key, lambda: svg_badge(label, message, color), personal=False, mimetype="image/svg+xml")


def _width(text: str) -> int:
    """Return the approximate width in pixels of text in 11px Verdana (a badge needs no exact metrics)."""
    return int(sum(7.5 if ch.isupper() or ch in "#mw@" else 6.2 for ch in text)) + 10


def svg_badge(label: str, message: str, color: str) -> str:
    """Return the SVG markup of a two-part badge (the texts escaped, so the document is valid XML)."""
    label = label if len(label) <= 40 else label[:39] + "…"
    left, right = _width(label), _width(message)
    total = left + right
    title = escape(f"{label}: {message}")
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{total}" height="20" role="img" '
            f'aria-label="{escape(f"{label}: {message}", {chr(34): "&quot;"})}"><title>{title}</title>'
            f'<rect width="{left}" height="20" fill="{LABEL}"/><rect x="{left}" width="{right}" height="20" '
            f'fill="{color}"/><g fill="#fff" text-anchor="middle" font-family="Verdana,DejaVu Sans,sans-serif" '
            f'font-size="11"><text x="{left / 2:.1f}" y="14">{escape(label)}</text>'
            f'<text x="{left + right / 2:.1f}" y="14">{escape(message)}</text></g></svg>')
