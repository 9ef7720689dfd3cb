"""Read a CodaLab or Codabench competition bundle into a plan (docs/MOVING.md): ``read_bundle``.

The bundle is opened with the safe zip reader; competition.yaml is read into a draft
by the reader of its format; then each phase's files are read: its reference data
becomes a label file (``scoring.bundles.reference``), its scoring program's source
says which leaderboard columns are metrics Tailboard computes
(``scoring.bundles.programs``), and the phase config follows (``scoring.bundles.phases``).
Anything that cannot be carried over is a line of the report and stops nothing else;
only a bundle with no phase left raises ``BundleError``.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any

from scoring.bundles.codabench import read_codabench
from scoring.bundles.codalab import read_codalab
from scoring.bundles.draft import Draft
from scoring.bundles.files import BUNDLE_BUDGET, Bundle
from scoring.bundles.phases import PhaseReader
from scoring.bundles.plan import BundleError, BundlePlan, Page, PageFormat, ReportLine
from scoring.zips import ArchiveError, SafeZip
from scoring.zips.reader import Source

FORMAT_NAMES = {"codalab": "CodaLab", "codabench": "Codabench"}


def read_bundle(source: Source) -> BundlePlan:
    """Return what Tailboard would create from a bundle zip (a path, bytes or a stream) and the import report.

    Nothing is written. Raises BundleError when the file is no bundle, its
    competition.yaml cannot be read, or no phase can be carried over (the error's
    ``report`` then says why, phase by phase).
    """
    try:
        archive = SafeZip(source, budget=BUNDLE_BUDGET)
    except ArchiveError as error:
        raise BundleError(f"This is not a competition bundle: {error}.") from None
    with archive:
        try:
            bundle = Bundle(archive)
            return _plan(bundle, _draft(bundle.yaml))
        except ArchiveError as error:  # the whole bundle past its budget, or damaged where it is shared
            raise BundleError(f"The bundle cannot be read: {error}.") from None


def _draft(data: dict[Any, Any]) -> Draft:
    """Return the draft of competition.yaml by the reader of its version."""
    version = data.get("version")
    if version is None or str(version).strip() in ("1", "1.0", "1.5"):
        return read_codalab(data)
    if str(version).strip() in ("2", "2.0"):
        return read_codabench(data)
    raise BundleError(f"competition.yaml says version {version!r}; Tailboard reads CodaLab bundles (no version, "
                      "1 or 1.5) and Codabench bundles (version 2).")


def _plan(bundle: Bundle, draft: Draft) -> BundlePlan:
    """Return the plan of a draft: the competition, its pages, and every phase that can be carried over."""
    title = draft.title or "Untitled competition"
    report = [ReportLine("carried", f"{FORMAT_NAMES[draft.format]} competition {title!r}: its title and "
                                    f"description become the competition's")]
    if not draft.title:
        report.append(ReportLine("not carried", "competition.yaml has no title: the competition is named "
                                                "'Untitled competition' until you rename it"))
    pages = _pages(bundle, draft.pages, report)
    report += draft.notes
    reader = PhaseReader(bundle, draft.columns, report)
    phases = tuple(plan for plan in (reader.read(phase) for phase in draft.phases) if plan is not None)
    if not phases:
        reason = "it has no phase" if not draft.phases else "no phase has reference data Tailboard can read"
        raise BundleError(f"Nothing in this bundle can be imported: {reason}.", tuple(report))
    return BundlePlan(format=draft.format, title=title, description=draft.description, pages=tuple(pages),
                      phases=phases, report=tuple(report))


def _pages(bundle: Bundle, listed: list[tuple[str, str]], report: list[ReportLine]) -> list[Page]:
    """Return the pages the yaml names that the bundle holds as text; report each."""
    pages = []
    for title, path in listed:
        try:
            content = bundle.text(path)
        except ArchiveError as error:
            report.append(ReportLine("not carried", f"page {title!r}: {error}"))
            continue
        pages.append(Page(title=title, content=content, format=_page_format(path), source=path))
        kept = "its text (the HTML itself is not kept)" if pages[-1].format == "html" else "as written"
        report.append(ReportLine("carried", f"page {title!r} ({path}) → a section of the competition's "
                                            f"description, {kept}"))
    return pages


def _page_format(path: str) -> PageFormat:
    """Return how a page is written, from its file name."""
    suffix = PurePosixPath(path).suffix.lower()
    return "markdown" if suffix in (".md", ".markdown") else "html" if suffix in (".html", ".htm") else "text"
