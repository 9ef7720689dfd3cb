"""The ranking page's repeated rows, printed in Python: the table, head/tail, breakdown and pair rows.

A page of 50 entries prints about 1,500 figures; as Jinja macro calls they were most of
the cost of rendering a page nobody had asked for yet (a search, a sort, a page number:
docs/RANKING.md#reads-under-a-rush). The same markup is printed here with the template
filters' formatting (web/templating.py), every text of an entry escaped. The viewer's
marks go where ``mark`` says (board_cache/shared.py), never a mark itself.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any
from urllib.parse import quote

from flask import url_for
from markupsafe import Markup, escape

from leaderboard.board.cells import Cell
from leaderboard.board.entry_page import entry_key
from leaderboard.board.page import BoardPage, PageRow
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
    """Print the rows of one page model; ``mark(kind, row)`` returns where the viewer's mark of a row goes."""

    def __init__(self, page: BoardPage, mark: Callable[[str, int], Any]) -> None:
        self.page, self.mark = page, mark
        self.entry_base = url_for("entries.entry", phase_id=page.board.phase.id, entry="_")[:-1]  # + a row's key

    def table(self, r: PageRow, index: int) -> Markup:
        """Return a row of the ranking table."""
        row, page = r.row, self.page
        css = ("baseline-row" if row.is_baseline else "") + str(self.mark("row", index)) + (
            f" tie-{r.tie_band}" if r.tie_band >= 0 else "")
        parts = [f'<tr class="{css}">\n<td class="num rank">{"–" if row.rank is None else row.rank}</td>']
        if page.has_ties:
            parts.append(f'<td class="num col-extra col-stat">{"–" if row.stat_rank is None else row.stat_rank}</td>')
        parts.append(self._entry(r, index))
        if row.value is None:
            parts.append(f'<td class="num primary-col col-value">{BLANK}</td>')
        else:
            interval = f'<span class="ci">[{score(row.ci[0])}, {score(row.ci[1])}]</span>' if row.ci else ""
            parts.append(f'<td class="num primary-col col-value"><span class="val">{score(row.value)}</span>'
                         f'{interval}</td>')
        parts.extend(cell(c, "col-extra") for c in r.cells)
        parts.append(f'<td class="num col-extra col-p">{pvalue(row.p_vs_previous)}</td>\n</tr>')
        return Markup("".join(parts))

    def _entry(self, r: PageRow, index: int) -> str:
        """Return the entry cell: name, baseline tag, the viewer's mark, method, badges and link."""
        row = r.row
        out = [f'<th scope="row" class="entry">\n<span class="entry-name">{escape(row.display_name)}</span>']
        if row.is_baseline:
            out.append(' <span class="tag tag-baseline">baseline</span>')
        out.append(str(self.mark("tag", index)))
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

    def headtail(self, r: PageRow) -> Markup:
        """Return a row of the head versus tail section (the last cell is the gap when the page shows one)."""
        cells = []
        for position, c in enumerate(r.headtail):
            if position == len(r.headtail) - 1 and self.page.headtail_gap:
                gap = "–" if c[0] is None else (f'<span class="gap {"gap-bad" if c[0] > 0 else "gap-good"}">'
                                                f"{signed(c[0])}</span>")
                cells.append(f"<td>{gap}</td>")
            else:
                cells.append(detail(c))
        return Markup(f'<tr class="{self._baseline(r)}"><th scope="row">{self._label(r)}</th>'
                      f'{"".join(cells)}</tr>')

    def breakdown(self, r: PageRow, field_index: int) -> Markup:
        """Return a row of one breakdown field's section."""
        cells = "".join(detail(c) for c in r.breakdowns[field_index])
        return Markup(f'<tr class="{self._baseline(r)}"><th scope="row">{self._label(r)}</th>{cells}</tr>')

    def pairs(self, r: PageRow) -> Markup:
        """Return a row of the head–tail pairs section."""
        cells = "".join(f"<td>{short(c[0])}</td>" for c in r.pairs)
        return Markup(f'<tr class="{self._baseline(r)}"><th scope="row">{self._label(r)}</th>{cells}</tr>')

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
