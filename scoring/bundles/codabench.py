"""Codabench's competition.yaml (``version: 2``): phases as a list, tasks by index, leaderboards with columns.

A phase names its tasks by index; Tailboard scores one label set per phase, so the
first task with reference data is carried and any other is reported. Codabench's own
defaults (5 submissions a day, 100 in all) apply on Codabench only when the yaml is
silent; the plan leaves such a limit unset (``None``) and says so, so the platform's
own default applies.
"""

from __future__ import annotations

from typing import Any

from scoring.bundles.draft import Column, Draft, PhaseDraft, Task, date_of, not_carried, text, whole
from scoring.bundles.plan import BundleError, ReportLine

COMPETITION_LEFT = {
    "image": "the competition image is not imported",
    "fact_sheet": "submission fact sheets are not imported",
    "docker_image": "Tailboard runs no program, so no Docker image",
    "queue": "Tailboard runs no program, so no compute queue",
}
PHASE_LEFT = {
    "public_data": "not imported; upload it as a public file of the phase",
    "starting_kit": "not imported; upload it as a public file of the phase",
    "execution_time_limit": "Tailboard runs no program, so no time limit",
}


def read_codabench(data: dict[Any, Any]) -> Draft:
    """Return the draft of a Codabench (v2) competition.yaml."""
    notes: list[ReportLine] = []
    not_carried(notes, data, COMPETITION_LEFT, "")
    if data.get("solutions"):
        notes.append(ReportLine("not carried", f"{len(data['solutions'])} solution(s): example submissions are "
                                               "not imported"))
    tasks = _tasks(data.get("tasks"))
    phases = _listed(data.get("phases"), "phases")
    ordered = sorted(enumerate(phases), key=lambda pair: (_index(pair[1], pair[0]), pair[0]))
    return Draft(format="codabench", title=text(data.get("title")), description=text(data.get("description")),
                 pages=_pages(data), phases=[_phase(phase, tasks) for _, phase in ordered],
                 columns=_columns(data.get("leaderboards", data.get("leaderboard"))), notes=notes)


def _listed(value: object, key: str) -> list[dict[Any, Any]]:
    """Return a yaml list of mappings, or raise BundleError naming the key."""
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise BundleError(f"competition.yaml: {key} must be a list of mappings.")
    return value


def _index(item: dict[Any, Any], default: int) -> int:
    """Return an item's index (its position when it has none)."""
    index = item.get("index", default)
    return index if isinstance(index, int) and not isinstance(index, bool) else default


def _pages(data: dict[Any, Any]) -> list[tuple[str, str]]:
    """Return (title, file) of each page, the terms last."""
    pages = [(text(page.get("title")) or text(page.get("file")), text(page.get("file")))
             for page in _listed(data.get("pages"), "pages") if page.get("file")]
    if data.get("terms"):
        pages.append(("Terms", text(data["terms"])))
    return pages


def _tasks(value: object) -> dict[int, Task]:
    """Return the tasks by index."""
    tasks = {}
    for position, task in enumerate(_listed(value, "tasks")):
        index = _index(task, position)
        name = text(task.get("name")) or f"task {index}"
        tasks[index] = Task(name=name, reference=text(task.get("reference_data")) or None,
                            scoring=text(task.get("scoring_program")) or None,
                            ingestion=text(task.get("ingestion_program")) or None,
                            server_key=text(task.get("key")) or None)
    return tasks


def _phase(phase: dict[Any, Any], tasks: dict[int, Task]) -> PhaseDraft:
    """Return the draft of one phase."""
    name = text(phase.get("name")) or "Unnamed phase"
    notes: list[ReportLine] = []
    where = f"phase {name!r}: "
    not_carried(notes, phase, PHASE_LEFT, where)
    chosen = []
    for index in phase.get("tasks") or []:
        if index in tasks:
            chosen.append(tasks[index])
        else:
            notes.append(ReportLine("not carried", f"{where}task {index!r} is not among the tasks of the yaml"))
    return PhaseDraft(
        name=name, description=text(phase.get("description")),
        start=date_of(phase.get("start"), f"{where}start", notes),
        end=date_of(phase.get("end"), f"{where}end", notes),
        max_per_day=whole(phase.get("max_submissions_per_day")), max_total=whole(phase.get("max_submissions")),
        tasks=chosen, notes=notes)


def _columns(value: object) -> list[Column]:
    """Return the columns of every leaderboard, board by board, each board's columns by index."""
    boards = [value] if isinstance(value, dict) else _listed(value, "leaderboards")
    columns = []
    for board in boards:
        listed = _listed(board.get("columns"), "leaderboards columns")
        for _, column in sorted(enumerate(listed), key=lambda pair: (_index(pair[1], pair[0]), pair[0])):
            key = text(column.get("key"))
            if not key:
                continue
            columns.append(Column(key=key, title=text(column.get("title")) or key,
                                  sorting=text(column.get("sorting")).lower() or "desc", computed=_computed(column)))
    return columns


def _computed(column: dict[Any, Any]) -> str | None:
    """Return how a computed column derives from others ('avg of columns 0, 1'), None for a plain column."""
    computation = text(column.get("computation"))
    if not computation:
        return None
    indexes = column.get("computation_indexes") or []
    named = ", ".join(text(i) for i in indexes) if isinstance(indexes, list) else text(indexes)
    return f"{computation} of columns {named}"
