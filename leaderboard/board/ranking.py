"""The leaderboard of a phase as a reader asks for it (docs/RANKING.md): a view, a page, a sort, a search, filters.

The rows come from the materialized board (board/versions.py, board/read.py): the
board while the phase is open, or after it closes, chosen now from the clock and the
organizers' actions, so a phase closing by its end date shows its final ranking at once.
Filters and sorting never re-rank: every row keeps the rank of the whole view. Sorting
uses the figures shown (a hidden figure sorts last, ties in rank order), so no order
tells more than the page does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from sqlalchemy import Connection, bindparam, select
from sqlalchemy.orm import joinedload

from leaderboard.accounts import Actor, leaderboard_readable, phase_status, status_at
from leaderboard.board.cells import shown_split
from leaderboard.board.changes import changed_lately
from leaderboard.board.layout import BoardLayout, cached_layout
from leaderboard.board.read import LoadedView, ShownRow, load_view, marked
from leaderboard.board.rules import rule_sentence
from leaderboard.board.versions import fresh_version, overdue
from leaderboard.models import Board, Competition, Phase, TeamMember, User
from leaderboard.platform import Forbidden, InvalidInput, NotFound, ServiceContext
from scoring import higher_is_better
from scoring.views import View

MAX_PER_PAGE = 500
DEFAULT_PER_PAGE = 50
FIXED_SORTS = ("rank", "name", "submitted_at")
FLAG_FILTERS = ("open_weights", "uses_retrieval", "uses_knowledge_graph")
QUERY_KEYS = frozenset({"view", "page", "per_page", "sort", "order", "q", *FLAG_FILTERS, "prompting", "format"})
"""The query parameters a board read (page or API) understands; any other is ignored, and left out of cache keys."""


@dataclass(frozen=True)
class BoardQuery:
    """What a reader asks of a board: view, page, sort, search and metadata filters."""

    view: str | None = None
    page: int = 1
    per_page: int = DEFAULT_PER_PAGE
    sort: str | None = None
    order: str | None = None
    q: str = ""
    flags: dict[str, bool] = field(default_factory=dict)  # open_weights, uses_retrieval, uses_knowledge_graph
    prompting: str | None = None
    every_row: bool = False  # exports: every row of the view, not one page


@dataclass(frozen=True)
class Leaderboard:
    """One view of a phase's board as the reader asked for it."""

    phase: Phase
    board: str  # "open" | "closed"
    split: str  # "public" | "private" | "all"
    layout: BoardLayout
    view_index: int
    rule: str
    columns: tuple[str, ...]  # the view's columns that have a value in some row
    total: int  # rows after search and filters
    entries: int  # rows of the view
    page: int
    per_page: int
    sort: str
    order: str
    query: BoardQuery
    rows: list[ShownRow]
    top: tuple[int, ...]  # submission ids of the view's five best ranked entries
    version: int
    readable: bool = True  # whether the rows are shown (False: an upcoming phase, to anyone but its managers)
    printed: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)  # LoadedView.printed

    @property
    def view(self) -> View:
        """Return the view shown."""
        return self.layout.views[self.view_index]

    @property
    def higher_is_better(self) -> bool:
        """Return the direction of the view's metric."""
        return higher_is_better(self.view.metric)

    @property
    def pages(self) -> int:
        """Return how many pages the filtered rows fill (at least 1)."""
        return max(1, -(-self.total // self.per_page))

    @property
    def cache_key(self) -> tuple[Any, ...]:
        """Return what identifies this answer: the board's version, the phase as shown, and everything asked."""
        phase = self.phase
        return (phase.id, self.board, self.version, phase.name, phase.competition.title, phase_status(phase),
                phase.end_at, self.view_index, self.page, self.per_page, self.sort, self.order, self.query.q,
                tuple(sorted(self.query.flags.items())), self.query.prompting, self.query.every_row, self.readable)

    def for_everyone(self) -> Leaderboard:
        """Return this answer with no row marked as the viewer's: what any reader of the same key is shown."""
        if not any(row.mine for row in self.rows):
            return self
        return replace(self, rows=[replace(row, mine=False) if row.mine else row for row in self.rows])


ANONYMOUS_STATE = (
    select(Phase.name, Phase.start_at, Phase.end_at, Phase.state_override, Phase.leaderboard_visibility,
           Competition.title, Board.version, Board.built, Board.wanted, Board.signature, Board.refreshed_at)
    .join(Competition, Competition.id == Phase.competition_id)
    .outerjoin(Board, Board.phase_id == Phase.id).where(Phase.id == bindparam("phase_id")))


PHASE_AND_BOARD = (select(Phase, Board).outerjoin(Board, Board.phase_id == Phase.id)
                   .options(joinedload(Phase.competition)).where(Phase.id == bindparam("phase_id")))
"""A board read's phase (its competition loaded) and board row, built once: building it cost more than running it."""


def anonymous_row(connection: Connection, *, phase_id: int) -> tuple[Any, ...] | None:
    """Return the fields anonymous_key needs about a phase, from one small query (None: no such phase).

    It runs on every anonymous board read that cannot trust a remembered answer
    (web/board_cache/middleware.py), so it is one Core query on a connection: an ORM session around it
    cost about eight times the query.
    """
    found = connection.execute(ANONYMOUS_STATE, {"phase_id": phase_id}).first()
    return None if found is None else tuple(found)


def anonymous_key(phase_id: int, found: tuple[Any, ...] | None) -> tuple[Any, ...] | None:
    """Return what an anonymous reader's answer about a phase's board depends on now, given its anonymous_row.

    None when the answer must be built the long way: no such phase, a board with changes
    overdue (versions.overdue: pending while nobody refreshed it), or a board anonymous
    readers may not see (upcoming, hidden). The phase's status comes from the clock now,
    so a remembered row still closes on time.
    """
    if found is None:
        return None
    name, start_at, end_at, override, visibility, title, version, built, wanted, signature, refreshed = found
    if version is None or not signature or visibility != "public" or overdue(built, wanted, refreshed):
        return None  # overdue changes: the app's path refreshes the board (versions.fresh_version)
    status = status_at(start_at, end_at, override)
    return None if status == "upcoming" else (phase_id, version, status, name, title, end_at)


def board_state(phase: Phase) -> str:
    """Return which board a phase shows now: 'closed' once it is closed, else 'open'."""
    return "closed" if phase_status(phase) == "closed" else "open"


def leaderboard(ctx: ServiceContext, *, phase_id: int, viewer: Actor | None = None,
                query: BoardQuery | None = None) -> Leaderboard:
    """Return the phase's board as the viewer may see it, one view and page of it (Forbidden when hidden)."""
    query = query or BoardQuery()
    found = ctx.session.execute(PHASE_AND_BOARD, {"phase_id": phase_id}).first()
    if found is None:
        raise NotFound(f"No phase {phase_id}.")
    phase, stand = found
    readable = leaderboard_readable(phase, viewer)
    if not readable and phase.leaderboard_visibility == "hidden":
        raise Forbidden("The organizers keep the leaderboard of this phase hidden.")
    version = fresh_version(ctx, phase_id=phase.id, board=stand)
    layout = cached_layout(ctx, phase)
    index = _view_index(layout, query.view)
    board = board_state(phase)
    columns = layout.columns(index)
    # Only an anonymous reader that changed nothing may be shown the version before while this one loads.
    may_lag = viewer is None and not changed_lately()
    loaded = load_view(ctx, phase_id=phase.id, board=board, view=index, version=version, columns=columns,
                       may_lag=may_lag)
    sort, order = _sort_of(layout, index, query)
    entries = len(loaded.rows) if readable else 0  # upcoming: no entry, not even a baseline
    picked = _picked(loaded, query, sort=sort, order=order) if readable else []
    per_page = max(len(picked), 1) if query.every_row else query.per_page
    pages = max(1, -(-len(picked) // per_page))
    page = 1 if query.every_row else min(query.page, pages)
    window = picked[(page - 1) * per_page: page * per_page]
    user_id, teams = _viewer(ctx, viewer, phase, window)
    top = loaded.top if readable else ()
    return Leaderboard(phase=phase, board=board, split=shown_split(phase, board), layout=layout, view_index=index,
                       rule=rule_sentence(phase, layout, board=board, view_index=index),
                       columns=loaded.present if readable else (),
                       total=len(picked), entries=entries, page=page, per_page=per_page, sort=sort, order=order,
                       query=query, rows=marked(window, user_id=user_id, team_ids=teams), top=top,
                       version=loaded.version, readable=readable, printed=loaded.printed)


def _view_index(layout: BoardLayout, name: str | None) -> int:
    """Return the index of the view called name (case-insensitive), the first view when none is asked for."""
    if not name:
        return 0
    for index, view in enumerate(layout.views):
        if view.name.casefold() == name.strip().casefold():
            return index
    raise InvalidInput(f"No view {name!r}; this phase's views: {', '.join(v.name for v in layout.views)}.")


def _sort_of(layout: BoardLayout, index: int, query: BoardQuery) -> tuple[str, str]:
    """Return the checked sort column and order; a metric sorts best first unless an order is given."""
    view = layout.views[index]
    valid = (*FIXED_SORTS, view.metric, *layout.columns(index))
    sort = query.sort or "rank"
    if sort not in valid:
        raise InvalidInput(f"Cannot sort by {sort!r}; sort by one of: {', '.join(dict.fromkeys(valid))}.")
    if query.order not in (None, "asc", "desc"):
        raise InvalidInput("order is 'asc' or 'desc'.")
    if query.order:
        return sort, query.order
    if sort in FIXED_SORTS:
        return sort, "asc"
    return sort, "desc" if higher_is_better(sort) else "asc"


def _picked(loaded: LoadedView, query: BoardQuery, *, sort: str, order: str) -> list[ShownRow]:
    """Return the view's rows matching the search and filters, in the asked order.

    Sorting every row and then filtering gives what filtering and then sorting gives (the
    sort is stable and a filter keeps order), so each order is computed once per loaded
    view (``LoadedView.orders``) and a search, filter or page number only walks it.
    """
    rows, search = loaded.rows, loaded.search
    indices = loaded.orders.get((sort, order))
    if indices is None:
        indices = loaded.orders.setdefault((sort, order), _sorted(rows, sort=sort, order=order))
    needle = query.q.strip().casefold()
    if "\0" in needle:  # the texts' separator: no single text holds it
        return []
    if not query.flags and query.prompting is None:
        return [rows[i] for i in indices if needle in search[i]] if needle else [rows[i] for i in indices]
    return [rows[i] for i in indices if _matches(rows[i], search[i], needle, query)]


def _matches(row: ShownRow, texts: str, needle: str, query: BoardQuery) -> bool:
    """Return whether a row matches the search text (in its NUL-joined casefolded texts) and the metadata filters."""
    if needle and needle not in texts:
        return False
    if any(row.metadata.get(key) is not value for key, value in query.flags.items()):
        return False
    return query.prompting is None or row.metadata.get("prompting") == query.prompting


def _sorted(rows: Sequence[ShownRow], *, sort: str, order: str) -> tuple[int, ...]:
    """Return the indices of rows sorted by a shown figure or field; missing values last, ties in rank order."""
    if sort == "rank":  # rows come in rank order
        return tuple(range(len(rows) - 1, -1, -1)) if order == "desc" else tuple(range(len(rows)))
    keyed = [(_sort_value(rows[i], sort), i) for i in sorted(range(len(rows)), key=lambda i: rows[i].position)]
    present = [pair for pair in keyed if pair[0] is not None]
    ordered = sorted(present, key=lambda pair: pair[0], reverse=order == "desc")  # stable: ties keep rank order
    return tuple([i for _, i in ordered] + [i for value, i in keyed if value is None])


def _sort_value(row: ShownRow, sort: str) -> Any:
    """Return what a row sorts by: its name, time, view value or a column's shown value (None when not shown)."""
    if sort == "name":
        return row.display_name.casefold()
    if sort == "submitted_at":
        return row.submitted_at
    if sort in row.columns:
        return row.columns[sort][0]
    return row.value


def _viewer(ctx: ServiceContext, viewer: Actor | None, phase: Phase,
            shown: list[ShownRow]) -> tuple[int | None, frozenset[int]]:
    """Return the viewer's user id and their team ids in the phase's competition (for marking the shown rows).

    The teams are read only when a shown row is a team's: a page costs what it shows.
    """
    if not isinstance(viewer, User):  # anonymous, or the operator's shell: no rows of their own
        return None, frozenset()
    if not any(row.team_id is not None for row in shown):
        return viewer.id, frozenset()
    teams = ctx.session.scalars(select(TeamMember.team_id).where(
        TeamMember.user_id == viewer.id, TeamMember.competition_id == phase.competition_id)).all()
    return viewer.id, frozenset(teams)


def viewer_entries(ctx: ServiceContext, *, phase_id: int, viewer: User) -> list[ShownRow]:
    """Return the viewer's own rows in every view of the board shown now (their entries' ranks)."""
    board = ranking_rows(ctx, phase_id=phase_id, viewer=viewer)
    return [row for row in board if row.mine]


def ranking_rows(ctx: ServiceContext, *, phase_id: int, viewer: Actor | None) -> list[ShownRow]:
    """Return every row of the phase's first view, marked for the viewer."""
    return leaderboard(ctx, phase_id=phase_id, viewer=viewer, query=BoardQuery(every_row=True)).rows
