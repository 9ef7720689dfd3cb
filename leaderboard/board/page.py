"""The leaderboard page's view model: everything the template shows, built here so the template only prints.

Sections follow the rows of the page shown (never the whole board): the ranking table
of the view, CoLoTa's Table 5 layout (accuracy and answer rate on head and tail items,
side by side, and the gap), the head/tail metric per breakdown value, and the pair
shares. Their cells are read for the page's rows only, and kept per board version
(read.section_cells).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

from leaderboard.board.cells import NO_CELL, Cell
from leaderboard.board.layout import PAIR_KEYS, path_label
from leaderboard.board.ranking import DEFAULT_PER_PAGE, FLAG_FILTERS, Leaderboard
from leaderboard.board.read import ShownRow, kept, section_cells
from leaderboard.board.rules import SPLIT_WORDS, STAT_RANK_NOTE
from leaderboard.entries import PROMPTING
from leaderboard.platform import ServiceContext
from scoring import higher_is_better

BADGE_FLAGS = {"open_weights": "open weights", "uses_retrieval": "retrieval", "uses_knowledge_graph": "knowledge graph"}
FILTER_LABELS = {"open_weights": "Open weights", "uses_retrieval": "Uses retrieval",
                 "uses_knowledge_graph": "Uses a knowledge graph"}


@dataclass(frozen=True)
class Column:
    """A column of a table: its path, its label, and whether lower values are better."""

    path: str
    label: str
    lower_is_better: bool


@dataclass(frozen=True)
class PageRow:
    """One row of the ranking table as printed."""

    row: ShownRow
    badges: tuple[tuple[str, str], ...]  # (text, kind) of the metadata badge line
    url: str | None  # the entry's link (its metadata url), if any
    cells: tuple[Cell, ...]  # the view's columns, in order
    tie_band: int  # 0/1: alternating statistical tie groups (in rank order), -1 when not banded
    headtail: tuple[Cell, ...]
    breakdowns: tuple[tuple[Cell, ...], ...]  # per field, per value
    pairs: tuple[Cell, ...]


@dataclass(frozen=True)
class BoardPage:
    """The leaderboard page of one view, one page of rows."""

    board: Leaderboard
    split_words: str
    metric_label: str
    columns: tuple[Column, ...]
    rows: tuple[PageRow, ...]
    headtail: tuple[Column, ...]  # the head/tail columns with a value in some row of the page
    headtail_groups: tuple[tuple[str, int], ...]  # (bucket, how many of its columns are shown)
    headtail_gap: bool  # whether the last head/tail column is the head − tail gap
    breakdowns: tuple[tuple[str, tuple[str, ...]], ...]
    pairs: tuple[Column, ...]
    stat_note: str
    has_ties: bool
    sort_choices: tuple[tuple[str, str], ...]
    filters: tuple[tuple[str, str, bool | None], ...]  # (key, label, current value)
    prompting: tuple[str, ...]
    first: int  # 1-based number of the page's first row

    def args(self, **changes: Any) -> dict[str, Any]:
        """Return the query arguments of this page with some changed (None drops one): for links."""
        query, board = self.board.query, self.board
        current: dict[str, Any] = {
            "view": board.view.name if board.view_index else None, "q": query.q or None,
            "sort": None if board.sort == "rank" and board.order == "asc" else board.sort,
            "order": None if board.sort == "rank" and board.order == "asc" else board.order,
            "per_page": None if board.per_page == DEFAULT_PER_PAGE else board.per_page,
            "page": None if board.page == 1 else board.page, "prompting": query.prompting,
            **{key: str(value).lower() for key, value in query.flags.items()},
        }
        current.update(changes)
        return {key: value for key, value in current.items() if value is not None}

    def sort_args(self, path: str) -> dict[str, Any]:
        """Return the arguments of a column header's link: sort by it, or flip the order when it is the sort."""
        board = self.board
        if board.sort == path:
            return self.args(sort=path, order="asc" if board.order == "desc" else "desc", page=None)
        return self.args(sort=path, order=None, page=None)

    def aria_sort(self, path: str) -> str | None:
        """Return the aria-sort value of a column header."""
        if self.board.sort != path:
            return None
        return "ascending" if self.board.order == "asc" else "descending"


def board_page(ctx: ServiceContext, board: Leaderboard) -> BoardPage:
    """Return the page model of a board answer: its rows with badges, tie bands and section cells."""
    layout, view = board.layout, board.view
    headtail = layout.headtail_paths()
    fields = tuple((field, values) for field, values in layout.breakdowns if values)
    pair_paths = tuple(f"pairs.{key}" for key in PAIR_KEYS) if layout.pairs else ()
    wanted = [*headtail, *(p for f, _ in fields for p in layout.breakdown_paths(f)), *pair_paths]
    shown_cells_of = section_cells(ctx, phase_id=board.phase.id, board=board.board, version=board.version,
                                   rows=board.rows, paths=wanted)
    bands = _tie_bands(board)
    present = {path for cells in shown_cells_of.values() for path, cell in cells.items() if cell[0] is not None}
    headtail = tuple(p for p in headtail if p in present)
    fields_shown = [(f, values, paths) for f, values in fields for paths in [layout.breakdown_paths(f)]
                    if any(p in present for p in paths)]
    fields = tuple((f, values) for f, values, _ in fields_shown)
    field_paths = tuple(paths for _, _, paths in fields_shown)
    shape = (headtail, field_paths, pair_paths)
    rows = tuple(kept(board.printed, ("page-row", r.position, bands.get(r.position, -1), shape), partial(
        _page_row, r, board, shown_cells_of[r.score_id], headtail, field_paths, pair_paths, bands)) for r in board.rows)
    gap = bool(headtail) and headtail[-1].startswith("popularity.gap.")
    groups = tuple((b, n) for b in layout.buckets if (n := sum(p.startswith(f"popularity.{b}.") for p in headtail)))
    sorts = [("rank", "Rank"), (view.metric, path_label(view.metric)), *((c, path_label(c)) for c in board.columns),
             ("name", "Name"), ("submitted_at", "Submitted")]
    return BoardPage(
        board=board, split_words=SPLIT_WORDS[board.split], metric_label=path_label(view.metric),
        columns=tuple(_column(c) for c in board.columns), rows=rows,
        headtail=tuple(_column(p) for p in headtail), headtail_groups=groups, headtail_gap=gap,
        breakdowns=fields, pairs=tuple(_column(p) for p in pair_paths)
        if _any(rows, "pairs") else (), stat_note=STAT_RANK_NOTE,
        has_ties=any(r.stat_rank is not None for r in board.rows), sort_choices=tuple(dict(sorts).items()),
        filters=tuple((k, FILTER_LABELS[k], board.query.flags.get(k)) for k in FLAG_FILTERS), prompting=PROMPTING,
        first=(board.page - 1) * board.per_page + 1)


def _column(path: str) -> Column:
    """Return a column of a path."""
    return Column(path=path, label=path_label(path), lower_is_better=not higher_is_better(path))


def _page_row(row: ShownRow, board: Leaderboard, cells: dict[str, Cell], headtail: tuple[str, ...],
              field_paths: tuple[tuple[str, ...], ...], pairs: tuple[str, ...], bands: dict[int, int]) -> PageRow:
    """Return one printed row with its section cells (already rounded, laddered, blank when withheld)."""
    shown, empty = cells, NO_CELL
    url = row.metadata.get("url")
    return PageRow(
        row=row, badges=badges(row.metadata), url=url if isinstance(url, str) else None,
        cells=tuple(row.columns.get(c, empty) for c in board.columns), tie_band=bands.get(row.position, -1),
        headtail=tuple(shown.get(p, empty) for p in headtail),
        breakdowns=tuple(tuple(shown.get(p, empty) for p in paths) for paths in field_paths),
        pairs=tuple(shown.get(p, empty) for p in pairs))


def badges(metadata: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """Return an entry's metadata as a compact badge line: model, size, flags, prompting."""
    out: list[tuple[str, str]] = []
    if isinstance(metadata.get("model"), str):
        out.append((metadata["model"], "model"))
    size = metadata.get("parameters_b")
    if isinstance(size, (int, float)) and not isinstance(size, bool):
        out.append((f"{size:g}B", "size"))
    out.extend((text, "flag") for key, text in BADGE_FLAGS.items() if metadata.get(key) is True)
    if isinstance(metadata.get("prompting"), str):
        out.append((metadata["prompting"], "prompting"))
    return tuple(out)


def _tie_bands(board: Leaderboard) -> dict[int, int]:
    """Return alternating bands (0, 1) of statistical tie groups by row position, when rows are in rank order."""
    if board.sort != "rank" or board.order != "asc":
        return {}
    bands, band, last = {}, 1, None
    for row in board.rows:
        if row.stat_rank is None:
            continue
        if row.stat_rank != last:
            band, last = 1 - band, row.stat_rank
        bands[row.position] = band
    return bands


def _any(rows: tuple[PageRow, ...], section: str) -> bool:
    """Return whether any row has a value in a section (a section with none is left out)."""
    for row in rows:
        values = getattr(row, section)
        flat = [c for group in values for c in group] if section == "breakdowns" else list(values)
        if any(cell[0] is not None for cell in flat):
            return True
    return False


