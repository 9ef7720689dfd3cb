"""A bundle's pages as plain text, appended to the competition's description (docs/MOVING.md).

Tailboard's description is plain text (shown escaped, paragraphs split on blank lines),
so an HTML page is read with the standard library's HTML parser and only its text is
kept: headings and paragraphs become paragraphs, list items lines starting with "- ",
a link its text followed by its address (http, https or mailto only), an image its alt
text. Scripts, styles and every other tag are dropped; nothing of the page's markup
survives, so it is never rendered as HTML. Markdown and text pages are kept as written.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from scoring.bundles.plan import Page

SKIPPED = frozenset({"script", "style", "title", "template", "noscript", "iframe", "object", "svg", "math"})
"""Elements whose content is not text for a reader (a <head> is not one: left unclosed it would hide the page)."""
PARAGRAPHS = frozenset({"p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "table", "blockquote", "pre", "section",
                        "article", "header", "footer", "dl", "hr", "figure", "form", "main", "nav", "aside"})
LINES = frozenset({"br", "div", "tr", "dt", "dd", "caption", "li"})
LINK_SCHEMES = ("http://", "https://", "mailto:")
_MARKERS = {0: None, 1: None, 2: None}
"""The control characters this parser uses as markers (link start, paragraph, line), removed from the page's text."""


class _TextOf(HTMLParser):
    """Collect an HTML document's text with paragraph and line breaks (see the module's docstring)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skipping = 0
        self.pre = 0
        self.links: list[str | None] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        """Open a block, a skipped element, a list item, a link or an image."""
        if tag in SKIPPED:
            self.skipping += 1
            return
        if self.skipping:
            return
        self._break(tag)
        values = dict(attrs)
        if tag == "li":
            self.parts.append("- ")
        elif tag == "pre":
            self.pre += 1
        elif tag == "a":
            href = (values.get("href") or "").strip()
            self.links.append(href if href.lower().startswith(LINK_SCHEMES) else None)
            self.parts.append("\x00")  # where the link's text starts
        elif tag == "img" and (values.get("alt") or "").strip():
            self.parts.append(f"[{(values.get('alt') or '').strip()}]")

    def handle_endtag(self, tag: str) -> None:
        """Close a block, a skipped element or a link."""
        if tag in SKIPPED:
            self.skipping = max(self.skipping - 1, 0)
            return
        if self.skipping:
            return
        if tag == "pre":
            self.pre = max(self.pre - 1, 0)
        if tag == "a" and self.links:
            self._end_link(self.links.pop())
        self._break(tag)

    def handle_data(self, data: str) -> None:
        """Keep text outside skipped elements, its whitespace collapsed unless in a <pre>."""
        if not self.skipping:
            clean = data.translate(_MARKERS)
            self.parts.append(clean if self.pre else re.sub(r"\s+", " ", clean))

    def text(self) -> str:
        """Return the collected text: lines trimmed, at most one blank line in a row."""
        raw = re.sub(r"[\x01\x02][\x01\x02 ]*", lambda run: "\n\n" if "\x01" in run.group() else "\n",
                     "".join(self.parts).replace("\x00", ""))
        lines = [line.strip() if not line.startswith("    ") else line.rstrip() for line in raw.split("\n")]
        return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()

    def _break(self, tag: str) -> None:
        """Mark a paragraph break before/after a block tag, a line break around a line tag."""
        if tag in PARAGRAPHS:
            self.parts.append("\x01")
        elif tag in LINES:
            self.parts.append("\x02")

    def _end_link(self, href: str | None) -> None:
        """Follow a link's text with its address, unless the text is the address already."""
        start = max(i for i, part in enumerate(self.parts) if part == "\x00") if "\x00" in self.parts else None
        label = "".join(self.parts[start + 1:]).strip() if start is not None else ""
        if start is not None:
            self.parts[start] = ""
        if href and href.removeprefix("mailto:") != label:
            self.parts.append(f" ({href})" if label else href)


def html_text(html: str) -> str:
    """Return the text of an HTML page (no markup left: see the module's docstring)."""
    parser = _TextOf()
    parser.feed(html)
    parser.close()
    return parser.text()


def page_text(page: Page) -> str:
    """Return a page's content as plain text: HTML read to its text, markdown and text as written."""
    return html_text(page.content) if page.format == "html" else page.content.replace("\r\n", "\n").strip()


def described(description: str, pages: tuple[Page, ...] | list[Page]) -> str:
    """Return the competition's description followed by each non-empty page as a titled section."""
    sections = [description.strip()] if description.strip() else []
    for page in pages:
        body = page_text(page)
        if body:
            title = page.title.strip() or page.source
            sections.append(f"{title}\n{'=' * min(len(title), 60)}\n\n{body}")
    return "\n\n".join(sections)
