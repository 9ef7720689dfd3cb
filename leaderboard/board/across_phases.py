"""A competition's ranking across its phases (docs/METRICS.md): one row per entry, one column per phase.

Each phase contributes its first view's value for the entry as its board shows it now
(the public split while open, the private one after close; laddered where the ladder
applies), so the table shows nothing a phase's own board does not. ``mean`` is over the
phases the entry took part in; entries with a value in every closed phase are ranked by
it (the direction of the first phase's metric; ties to the entry present in more phases,
then by name), the others are listed after them, unranked. Baselines are per phase and
are left out.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select

from leaderboard.accounts import get_competition, leaderboard_readable, phase_status
from leaderboard.board.layout import path_label, phase_views
from leaderboard.board.ranking import DEFAULT_PER_PAGE, board_state
from leaderboard.board.versions import fresh_version, state
from leaderboard.models import BoardRow, Competition, Phase, TeamMember, User
from leaderboard.platform import InvalidInput, ServiceContext
from scoring import higher_is_better

FIXED = ("rank", "name", "mean", "phases")


@dataclass(frozen=True)
class AcrossQuery:
    """Paging, sorting and search of the across-phases table."""

    page: int = 1
    per_page: int = DEFAULT_PER_PAGE
    sort: str | None = None
    order: str | None = None
    q: str = ""


@dataclass(frozen=True)
class PhaseColumn:
    """A phase as a column: what its value means."""

    phase: Phase
    metric: str
    label: str
    higher_is_better: bool
    status: str
    split: str


@dataclass
class AcrossRow:
    """An entry across phases."""

    entry: str
    display_name: str
    team: str | None
    method: str
    values: dict[int, float | None] = field(default_factory=dict)
    user_id: int | None = None
    team_id: int | None = None
    rank: int | None = None
    mine: bool = False

    @property
    def present(self) -> list[float]:
        """Return the values of the phases the entry took part in (a value shown)."""
        return [v for v in self.values.values() if v is not None]

    @property
    def mean(self) -> float | None:
        """Return the mean over the phases the entry took part in (4 decimals), None if none."""
        present = self.present
        return round(sum(present) / len(present), 4) if present else None

    @property
    def phases(self) -> int:
        """Return how many phases the entry took part in."""
        return len(self.present)


@dataclass(frozen=True)
class AcrossBoard:
    """The across-phases table of a competition, one page of it."""

    competition: Competition
    columns: tuple[PhaseColumn, ...]
    rule: str
    rows: list[AcrossRow]
    total: int
    page: int
    per_page: int
    sort: str
    order: str
    query: AcrossQuery
    complete_phases: tuple[int, ...]

    @property
    def pages(self) -> int:
        """Return the number of pages (at least 1)."""
        return max(1, -(-self.total // self.per_page))

    @property
    def headers(self) -> list[tuple[str, str]]:
        """Return the table's (sort key, label) headers in order: rank, entry, each phase, mean, phases."""
        return [("rank", "Rank"), ("name", "Entry"),
                *((f"phase-{c.phase.id}", f"{c.phase.name} ({c.label})") for c in self.columns),
                ("mean", "Mean"), ("phases", "Phases")]


def across_phases(ctx: ServiceContext, *, slug: str, viewer: User | None = None,
                  query: AcrossQuery | None = None) -> AcrossBoard:
    """Return the competition's entries across the phases whose boards the viewer may read."""
    query = query or AcrossQuery()
    competition = get_competition(ctx, slug)
    columns = tuple(_column(p) for p in competition.phases if leaderboard_readable(p, viewer))
    higher = columns[0].higher_is_better if columns else True
    rows = _rows(ctx, columns)
    closed = tuple(c.phase.id for c in columns if c.status == "closed")
    ranked = sorted((r for r in rows if all(r.values.get(pid) is not None for pid in closed) and r.present),
                    key=lambda r: (-(r.mean or 0.0) if higher else (r.mean or 0.0), -r.phases, r.display_name))
    for index, row in enumerate(ranked, start=1):
        row.rank = index
    rest = sorted((r for r in rows if r.rank is None), key=lambda r: (-r.phases, r.display_name.casefold()))
    ordered = _mark(ctx, [*ranked, *rest], viewer, competition.id)
    sort, order = _sort_of(query, columns, higher)
    needle = query.q.strip().casefold()
    picked = [r for r in ordered if not needle or any(needle in (t or "").casefold()
                                                      for t in (r.display_name, r.team, r.method))]
    picked = _sorted(picked, sort, order, position={r.entry: i for i, r in enumerate(ordered)})
    pages = max(1, -(-len(picked) // query.per_page))
    page = min(query.page, pages)
    window = picked[(page - 1) * query.per_page: page * query.per_page]
    return AcrossBoard(competition=competition, columns=columns, rule=_rule(columns, higher), rows=window,
                       total=len(picked), page=page, per_page=query.per_page, sort=sort, order=order, query=query,
                       complete_phases=closed)


def _column(phase: Phase) -> PhaseColumn:
    """Return the column of a phase: its first view's metric on the split its board shows now."""
    metric = phase_views(phase)[0].metric
    board = board_state(phase)
    split = "all" if not phase.has_private_split else ("private" if board == "closed" else "public")
    return PhaseColumn(phase=phase, metric=metric, label=path_label(metric), higher_is_better=higher_is_better(metric),
                       status=phase_status(phase), split=split)


def _rows(ctx: ServiceContext, columns: Iterable[PhaseColumn]) -> list[AcrossRow]:
    """Return every entry with its value in each phase's first view, from the boards as they stand now."""
    rows: dict[str, AcrossRow] = {}
    for column in columns:
        phase = column.phase
        fresh_version(ctx, phase_id=phase.id, board=state(ctx, phase_id=phase.id))
        found = ctx.session.execute(select(BoardRow).where(
            BoardRow.phase_id == phase.id, BoardRow.board == board_state(phase), BoardRow.view == 0,
            BoardRow.is_baseline.is_(False)).order_by(BoardRow.position)).scalars()
        for r in found:
            row = rows.setdefault(r.entry, AcrossRow(entry=r.entry, display_name=r.display_name, team=r.team,
                                                     method=r.method, user_id=r.user_id, team_id=r.team_id))
            row.display_name = r.display_name  # the latest phase's name
            row.values[phase.id] = None if r.value is None else round(r.value, 4)
    return list(rows.values())


def _mark(ctx: ServiceContext, rows: list[AcrossRow], viewer: User | None, competition_id: int) -> list[AcrossRow]:
    """Mark the viewer's own entries (theirs, or their team's)."""
    if viewer is None:
        return rows
    teams = set(ctx.session.scalars(select(TeamMember.team_id).where(
        TeamMember.user_id == viewer.id, TeamMember.competition_id == competition_id)))
    for row in rows:
        row.mine = row.user_id == viewer.id or (row.team_id is not None and row.team_id in teams)
    return rows


def _sort_of(query: AcrossQuery, columns: tuple[PhaseColumn, ...], higher: bool) -> tuple[str, str]:
    """Return the checked sort key and order."""
    valid = (*FIXED, *(f"phase-{c.phase.id}" for c in columns))
    sort = query.sort or "rank"
    if sort not in valid:
        raise InvalidInput(f"Cannot sort by {sort!r}; sort by one of: {', '.join(valid)}.")
    if query.order not in (None, "asc", "desc"):
        raise InvalidInput("order is 'asc' or 'desc'.")
    if query.order:
        return sort, query.order
    if sort == "mean" or sort.startswith("phase-"):
        phase_higher = next((c.higher_is_better for c in columns if f"phase-{c.phase.id}" == sort), higher)
        return sort, "desc" if phase_higher else "asc"
    return sort, "desc" if sort == "phases" else "asc"


def _sorted(rows: list[AcrossRow], sort: str, order: str, *, position: dict[str, int]) -> list[AcrossRow]:
    """Return rows sorted by a key; missing values last; ties in rank order."""
    if sort == "rank":
        return sorted(rows, key=lambda r: position[r.entry], reverse=order == "desc")

    def key(row: AcrossRow) -> Any:
        if sort == "name":
            return row.display_name.casefold()
        if sort == "mean":
            return row.mean
        if sort == "phases":
            return row.phases
        return row.values.get(int(sort.removeprefix("phase-")))

    base = sorted(rows, key=lambda r: position[r.entry])
    present = [r for r in base if key(r) is not None]
    return sorted(present, key=key, reverse=order == "desc") + [r for r in base if key(r) is None]


def _rule(columns: tuple[PhaseColumn, ...], higher: bool) -> str:
    """Return the across-phases rule as the page and the API state it."""
    return ("Each phase's column is its first view's value for the entry as that phase's board shows it now; "
            "blank where the entry did not take part. Entries with a value in every closed phase are ranked by "
            f"their mean over the phases they took part in ({'higher' if higher else 'lower'} is better; ties go "
            "to the entry in more phases, then by name); the others are listed after them without a rank.")
