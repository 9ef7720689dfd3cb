"""The ranking page's repeated rows, printed in Python: the table, head/tail, breakdown and pair rows.

A page of 50 entries prints about 1,500 figures; as Jinja macro calls they were most of
the cost of rendering a page nobody had asked for yet (a search, a sort, a page number:
docs/RANKING.md#reads-under-a-rush). The same markup is printed here with the template
filters' formatting (web/templating.py), every text of an entry escaped. The viewer's
marks go where ``mark`` says (board_cache/shared.py), never a mark itself.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from functools import lru_cache, partial
from typing import Any
from urllib.parse import quote

from flask import url_for
from markupsafe import Markup, escape

from leaderboard.board.cells import Cell
from leaderboard.board.entry_page import entry_key
from leaderboard.board.page import BoardPage, PageRow
from leaderboard.board.read import kept
from leaderboard.web.templating import pvalue, score, short, signed

COARSE = ("coarse: shown on a step of {step} with random noise; the exact figure is within two steps 93 times in "
          "100")
BLANK = '<span class="blank" title="not shown">–</span>'
PRINTED = 1 << 16  # figures whose printed cell each process keeps (the same figures recur on every page)


def pm(step: float | None) -> str:
    """Return the mark of a coarse figure's step (docs/PROBING.md), or nothing for an exact one."""
    if step is None:
        return ""
    text = score(step, 2)
    return f' <span class="pm" title="{COARSE.format(step=text)}">±{text}</span>'


@lru_cache(maxsize=PRINTED)
def cell(c: Cell, extra: str = "") -> str:
    """Return a table cell of a figure with its interval and step (two decimals when coarse, else four)."""
    digits = 2 if c[3] is not None else 4
    css = f"num {extra}" if extra else "num"
    if c[0] is None:
        return f'<td class="{css}">{BLANK}</td>'
    interval = f'<span class="ci">[{score(c[1], digits)}, {score(c[2], digits)}]</span>' if c[1] is not None else ""
    return f'<td class="{css}"><span class="val">{score(c[0], digits)}{pm(c[3])}</span>{interval}</td>'


@lru_cache(maxsize=PRINTED)
def detail(c: Cell) -> str:
    """Return a compact cell of a section below the ranking (head/tail, breakdowns)."""
    if c[0] is None:
        return "<td>–</td>"
    step = pm(c[3])
    span = f"<small>{short(c[1])}–{short(c[2])}</small>" if c[1] is not None else ""
    return f"<td>{short(c[0])}{step or (' ' if span else '')}{span}</td>"


class RowPrinter:
    """Print the rows of one page model; ``mark(kind, row)`` returns where the viewer's mark of a row goes.

    Each section prints all its rows in one call. A row's printed text depends only on the
    row as loaded (its board version and view) and the page's choice of sections, so it is
    kept in the loaded view's ``printed`` store (``Leaderboard.printed``): a search, sort or
    page number that shows a row printed before joins its kept text. The viewer's marks are
    never in a kept text: a table row is kept as the three texts around its two marks.
    """

    ROW_END = "\n    "  # what the template put after each row

    def __init__(self, page: BoardPage, mark: Callable[[str, int], Any]) -> None:
        self.page, self.mark = page, mark
        self.entry_base = url_for("entries.entry", phase_id=page.board.phase.id, entry="_")[:-1]  # + a row's key

    def _keep(self, key: Hashable, make: Callable[[], Any]) -> Any:
        """Return the kept text of key in the loaded view's store, printing it first if needed."""
        return kept(self.page.board.printed, key, make)

    def tables(self) -> Markup:
        """Return every row of the ranking table."""
        has_ties, out = self.page.has_ties, []
        for index, r in enumerate(self.page.rows):
            key = ("table", r.row.position, r.tie_band, has_ties)
            before, between, after = self._keep(key, partial(self._table, r))
            out += [before, str(self.mark("row", index)), between, str(self.mark("tag", index)), after, self.ROW_END]
        return Markup("".join(out))

    def _table(self, r: PageRow) -> tuple[str, str, str]:
        """Return a row of the ranking table as the texts before its row mark, between its marks, after its tag mark."""
        row, page = r.row, self.page
        before = '<tr class="' + ("baseline-row" if row.is_baseline else "")
        parts = [f' tie-{r.tie_band}' if r.tie_band >= 0 else "",
                 f'">\n<td class="num rank">{"–" if row.rank is None else row.rank}</td>']
        if page.has_ties:
            parts.append(f'<td class="num col-extra col-stat">{"–" if row.stat_rank is None else row.stat_rank}</td>')
        parts.append(f'<th scope="row" class="entry">\n<span class="entry-name">{escape(row.display_name)}</span>')
        if row.is_baseline:
            parts.append(' <span class="tag tag-baseline">baseline</span>')
        between = "".join(parts)
        rest = [self._entry_tail(r)]
        if row.value is None:
            rest.append(f'<td class="num primary-col col-value">{BLANK}</td>')
        else:
            interval = f'<span class="ci">[{score(row.ci[0])}, {score(row.ci[1])}]</span>' if row.ci else ""
            rest.append(f'<td class="num primary-col col-value"><span class="val">{score(row.value)}</span>'
                        f'{interval}</td>')
        rest.extend(cell(c, "col-extra") for c in r.cells)
        rest.append(f'<td class="num col-extra col-p">{pvalue(row.p_vs_previous)}</td>\n</tr>')
        return before, between, "".join(rest)

    def _entry_tail(self, r: PageRow) -> str:
        """Return the entry cell after the viewer's mark: method, badges and link."""
        row, out = r.row, []
        if not row.is_baseline:
            best = f" · best of {row.submissions}" if row.submissions > 1 else ""
            out.append(f'\n<span class="entry-meta">{escape(row.method)}{best}</span>')
        if r.badges or r.url:
            badges = "".join(f'<span class="badge-meta badge-{escape(kind)}">{escape(text)}</span>'
                             for text, kind in r.badges)
            link = (f'<a class="badge-meta badge-link" href="{escape(r.url)}" rel="nofollow noopener">link</a>'
                    if r.url else "")
            out.append(f'\n<span class="badges">{badges}{link}</span>')
        href = escape(self.entry_base + quote(entry_key(row), safe=":"))
        out.append(f'\n<a class="entry-page" href="{href}">details<span class="sr-only"> of '
                   f'{escape(row.display_name)}</span></a>\n</th>')
        return "".join(out)

    def headtails(self) -> Markup:
        """Return every row of the head versus tail section (the last cell is the gap when the page shows one)."""
        shape = ("headtail", tuple(c.path for c in self.page.headtail), self.page.headtail_gap)
        return self._section(shape, self._headtail)

    def _headtail(self, r: PageRow) -> str:
        """Return a row of the head versus tail section."""
        cells = []
        for position, c in enumerate(r.headtail):
            if position == len(r.headtail) - 1 and self.page.headtail_gap:
                gap = "–" if c[0] is None else (f'<span class="gap {"gap-bad" if c[0] > 0 else "gap-good"}">'
                                                f"{signed(c[0])}</span>")
                cells.append(f"<td>{gap}</td>")
            else:
                cells.append(detail(c))
        return f'<tr class="{self._baseline(r)}"><th scope="row">{self._label(r)}</th>{"".join(cells)}</tr>'

    def breakdowns(self, field_index: int) -> Markup:
        """Return every row of one breakdown field's section."""
        field, values = self.page.breakdowns[field_index]
        return self._section(("breakdown", field_index, field, tuple(values)),
                             lambda r: self._breakdown(r, field_index))

    def _breakdown(self, r: PageRow, field_index: int) -> str:
        """Return a row of one breakdown field's section."""
        cells = "".join(detail(c) for c in r.breakdowns[field_index])
        return f'<tr class="{self._baseline(r)}"><th scope="row">{self._label(r)}</th>{cells}</tr>'

    def pair_rows(self) -> Markup:
        """Return every row of the head–tail pairs section."""
        return self._section(("pairs", tuple(c.path for c in self.page.pairs)), self._pairs)

    def _pairs(self, r: PageRow) -> str:
        """Return a row of the head–tail pairs section."""
        cells = "".join(f"<td>{short(c[0])}</td>" for c in r.pairs)
        return f'<tr class="{self._baseline(r)}"><th scope="row">{self._label(r)}</th>{cells}</tr>'

    def _section(self, shape: tuple[Any, ...], make: Callable[[PageRow], str]) -> Markup:
        """Return every row of a section of a shape (which columns it shows), each kept by its row and the shape."""
        out = []
        for r in self.page.rows:
            out += [self._keep((shape, r.row.position), partial(make, r)), self.ROW_END]
        return Markup("".join(out))

    @staticmethod
    def _label(r: PageRow) -> str:
        """Return a section row's entry as "team — method" (a baseline, or the default method, by its name alone)."""
        row = r.row
        if row.is_baseline or not row.method or row.method == "default":
            return str(escape(row.display_name))
        return f'{escape(row.display_name)} <span class="entry-method">— {escape(row.method)}</span>'

    @staticmethod
    def _baseline(r: PageRow) -> str:
        """Return a section row's class: baseline-row for a baseline."""
        return "baseline-row" if r.row.is_baseline else ""
