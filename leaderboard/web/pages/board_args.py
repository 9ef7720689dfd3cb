"""Read a ranking page's query string (view, page, sort, search, filters) leniently, as a browser sends it."""

from __future__ import annotations

from werkzeug.datastructures import MultiDict

from leaderboard.board import DEFAULT_PER_PAGE, FLAG_FILTERS, MAX_PER_PAGE, AcrossQuery, BoardQuery

TRUE, FALSE = ("true", "1", "yes", "on"), ("false", "0", "no", "off")


def page_query(args: MultiDict[str, str]) -> BoardQuery:
    """Return the board query of a page's arguments: a bad number falls back to its default, empty means unset."""
    flags = {}
    for key in FLAG_FILTERS:
        value = (args.get(key) or "").strip().lower()
        if value in TRUE or value in FALSE:
            flags[key] = value in TRUE
    return BoardQuery(view=args.get("view") or None, page=_number(args.get("page"), 1, 1_000_000),
                      per_page=_number(args.get("per_page"), DEFAULT_PER_PAGE, MAX_PER_PAGE),
                      sort=args.get("sort") or None, order=args.get("order") or None, q=(args.get("q") or "")[:200],
                      flags=flags, prompting=args.get("prompting") or None)


def across_query(args: MultiDict[str, str]) -> AcrossQuery:
    """Return the across-phases query of a competition page's arguments (leniently, like page_query)."""
    return AcrossQuery(page=_number(args.get("page"), 1, 1_000_000),
                       per_page=_number(args.get("per_page"), DEFAULT_PER_PAGE, MAX_PER_PAGE),
                       sort=args.get("sort") or None, order=args.get("order") or None, q=(args.get("q") or "")[:200])


def _number(text: str | None, default: int, high: int) -> int:
    """Return a whole number between 1 and high, or the default when text is not one."""
    try:
        value = int(text or "")
    except ValueError:
        return default
    return min(max(value, 1), high)
