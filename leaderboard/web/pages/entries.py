"""Entry pages and the comparison of two submissions (docs/RANKING.md#entry-pages): parse, call the board, render."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, render_template, request
from flask_login import current_user

from leaderboard.board.compare import compare
from leaderboard.board.entry_page import entry_page
from leaderboard.platform import NotFound
from leaderboard.web.context import ctx

bp = Blueprint("entries", __name__)


def _user() -> Any:
    """Return the logged-in User row, or None for an anonymous visitor."""
    return current_user._get_current_object() if current_user.is_authenticated else None


@bp.get("/phases/<id:phase_id>/entries/<path:entry>")
def entry(phase_id: int, entry: str) -> str:
    """Show an entry of a phase's ranking: method, metadata, the history of its bests, its charts after close."""
    page = entry_page(ctx(), phase_id=phase_id, entry=entry, viewer=_user())
    return render_template("public/entry.html", page=page, phase=page.phase, row=page.row)


@bp.get("/compare")
def compare_page() -> str:
    """Show two submissions side by side (?a=<id>&b=<id>), as far as the viewer may compare them."""
    a, b = request.args.get("a", ""), request.args.get("b", "")
    if not (a.isdigit() and b.isdigit() and len(a) <= 9 and len(b) <= 9):
        raise NotFound("Give two submission ids: /compare?a=<id>&b=<id>.")
    found = compare(ctx(), a_id=int(a), b_id=int(b), viewer=_user())
    return render_template("public/compare.html", cmp=found, phase=found.phase)
