"""CodaLab's competition.yaml (no ``version``, or 1 / 1.5): phases keyed by number, pages under ``html``.

CodaLab phases have a start and no end: one runs until a later phase starts, the last
until the competition's ``end_date`` (none: it never ends). Each phase carries its own
reference data, scoring program and ingestion program. The leaderboard's columns are
keyed by the name the scoring program writes to ``scores.txt``, ordered by ``rank``.
A parent phase of parallel phases (CodaLab 1.8) is left out, as Codabench does.
"""

from __future__ import annotations

from typing import Any

from scoring.bundles.draft import Column, Draft, PhaseDraft, Task, date_of, not_carried, text, whole
from scoring.bundles.plan import BundleError, ReportLine

COMPETITION_LEFT = {
    "image": "the competition image is not imported",
    "competition_docker_image": "Tailboard runs no program, so no Docker image",
}
PHASE_LEFT = {
    "public_data": "not imported; upload it as a public file of the phase",
    "starting_kit": "not imported; upload it as a public file of the phase",
    "input_data": "the data an ingestion program feeds to code submissions is not imported",
    "execution_time_limit": "Tailboard runs no program, so no time limit",
}


def read_codalab(data: dict[Any, Any]) -> Draft:
    """Return the draft of a CodaLab (v1) competition.yaml."""
    notes: list[ReportLine] = []
    not_carried(notes, data, COMPETITION_LEFT, "")
    phases = data.get("phases") or {}
    if not isinstance(phases, dict) or not all(isinstance(p, dict) for p in phases.values()):
        raise BundleError("competition.yaml: phases must map phase numbers to phase settings.")
    ordered = sorted(phases.values(), key=lambda phase: _number(phase.get("phasenumber")))
    for parent in [p for p in ordered if p.get("is_parallel_parent")]:
        notes.append(ReportLine("not carried", f"phase {text(parent.get('label'))!r}: the parent of parallel "
                                               "phases is not a phase of its own"))
    ordered = [p for p in ordered if not p.get("is_parallel_parent")]
    drafts = [_phase(phase) for phase in ordered]
    end = date_of(data.get("end_date"), "end_date", notes)
    for position, draft in enumerate(drafts):
        later = [p.start for p in drafts[position + 1:] if p.start and draft.start and p.start > draft.start]
        draft.end = min(later, default=end)  # parallel phases (same start) all run until the next later one
    html = data.get("html") or {}
    pages = [(text(title), text(path)) for title, path in html.items()] if isinstance(html, dict) else []
    return Draft(format="codalab", title=text(data.get("title")), description=text(data.get("description")),
                 pages=pages, phases=drafts, columns=_columns(data.get("leaderboard")), notes=notes)


def _number(value: object) -> float:
    """Return a phase number for ordering (a phase without one goes last)."""
    try:
        return float(str(value))
    except ValueError:
        return float("inf")


def _phase(phase: dict[Any, Any]) -> PhaseDraft:
    """Return the draft of one phase: its one task built from its own keys."""
    name = text(phase.get("label")) or f"Phase {text(phase.get('phasenumber'))}"
    notes: list[ReportLine] = []
    where = f"phase {name!r}: "
    not_carried(notes, phase, PHASE_LEFT, where)
    task = Task(name=name, reference=text(phase.get("reference_data")) or None,
                scoring=text(phase.get("scoring_program")) or None,
                ingestion=text(phase.get("ingestion_program")) or None)
    return PhaseDraft(name=name, description=text(phase.get("description")),
                      start=date_of(phase.get("start_date"), f"{where}start_date", notes), end=None,
                      max_per_day=whole(phase.get("max_submissions_per_day")),
                      max_total=whole(phase.get("max_submissions")), tasks=[task], notes=notes)


def _columns(board: object) -> list[Column]:
    """Return the leaderboard's columns by rank (key: the name written to scores.txt)."""
    columns = board.get("columns") if isinstance(board, dict) else None
    if not isinstance(columns, dict):
        return []
    ranked = sorted(((key, value if isinstance(value, dict) else {}) for key, value in columns.items()),
                    key=lambda pair: _number(pair[1].get("rank", 1)))
    result = []
    for key, column in ranked:
        computed = column.get("computed")
        how = None
        if isinstance(computed, dict):
            fields = computed.get("fields") or []
            named = ", ".join(text(field) for field in fields) if isinstance(fields, list) else text(fields)
            how = f"{text(computed.get('operation')).lower() or 'a computation'} of {named}"
        result.append(Column(key=text(key), title=text(column.get("label")) or text(key),
                             sorting=text(column.get("sort")).lower() or "desc", computed=how))
    return result
