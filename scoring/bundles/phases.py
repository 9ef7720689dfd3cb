"""One phase of a bundle read into a ``PhasePlan``: its label file, its config, and the report lines saying how.

The first task of the phase with reference data is carried (a Tailboard phase scores
one label set); its reference data becomes the label file, its scoring program is read
for the metrics behind the leaderboard's columns, and its ingestion program (code
submissions) is reported as not carried: participants upload the predictions their
code makes instead. The first column that maps to a Tailboard metric is the phase's
ranking metric.
"""

from __future__ import annotations

import json

from scoring.bundles.dates import shown
from scoring.bundles.draft import Column, PhaseDraft, Task
from scoring.bundles.files import TEXT_LIMIT, Bundle
from scoring.bundles.plan import PhasePlan, ReportLine
from scoring.bundles.programs import Finding, Program
from scoring.bundles.reference import Reference, ReferenceProblem, read_reference
from scoring.config import binary_code, infer_config
from scoring.labels import load_labels
from scoring.metrics import higher_is_better
from scoring.types import LabelFileError
from scoring.zips import ArchiveError

MAX_OPTIONS = 100
MAX_SOURCES = 50


class PhaseReader:
    """Reads the phases of one bundle, appending to its report (each shared program reported once)."""

    def __init__(self, bundle: Bundle, columns: list[Column], report: list[ReportLine]) -> None:
        self.bundle, self.columns, self.report = bundle, columns, report
        self.position = 0
        self.programs: dict[str, Program] = {}

    def note(self, text: str, *, carried: bool = False) -> None:
        """Add a line to the report (once)."""
        line = ReportLine("carried" if carried else "not carried", text)
        if line not in self.report:
            self.report.append(line)

    def read(self, draft: PhaseDraft) -> PhasePlan | None:
        """Return the plan of one phase, or None (reported) when it has nothing Tailboard can score."""
        self.report.extend(draft.notes)
        where = f"phase {draft.name!r}"
        task = self._task(draft, where)
        if task is None or task.reference is None:
            return None
        program = self._program(task, where)
        try:
            files = self.bundle.files(task.reference)
            if files is None:
                raise ReferenceProblem(f"the reference data {task.reference!r} is not in the bundle")
            reference = read_reference(files, "\n".join(program.lines))
            task_type, options = _task_type(reference)
        except (ReferenceProblem, ArchiveError) as problem:
            self.note(f"{where}: {problem}; the phase is not imported")
            return None
        return self._plan(draft, reference, task_type, options, program)

    def _task(self, draft: PhaseDraft, where: str) -> Task | None:
        """Return the task the phase is scored by, reporting the others and what is missing."""
        with_data = [task for task in draft.tasks if task.reference]
        for task in draft.tasks:
            if task.server_key and not task.reference:
                self.note(f"{where}: task {task.name!r} is kept on a Codabench server (key {task.server_key}); "
                          "its files are not in the bundle")
        for task in with_data[1:]:
            self.note(f"{where}: task {task.name!r} is not imported: a Tailboard phase scores one label set")
        if not with_data:
            self.note(f"{where}: no reference data, so nothing to score against; the phase is not imported")
            return None
        task = with_data[0]
        if task.ingestion:
            self.note(f"ingestion program {task.ingestion!r} ({where}): code submissions are not taken; "
                      "participants upload the predictions their code makes")
        return task

    def _program(self, task: Task, where: str) -> Program:
        """Return the scoring program's source (empty when missing), reported as not run."""
        if task.scoring is None:
            self.note(f"{where}: no scoring program, so no leaderboard column can be matched to a metric")
            return Program([])
        if task.scoring not in self.programs:
            self.programs[task.scoring] = self._sources(task.scoring)
            self.note(f"scoring program {task.scoring!r}: Tailboard runs no program; it scores with its own "
                      "metrics (the columns it matches are listed per phase)")
        return self.programs[task.scoring]

    def _sources(self, path: str) -> Program:
        """Return the Python sources of a scoring program (a folder, a zip, or one file)."""
        files = self.bundle.files(path)
        if files is None:
            self.note(f"scoring program {path!r} is not in the bundle")
            return Program([])
        sources = []
        for name in [n for n in files.names() if n.endswith(".py")][:MAX_SOURCES]:
            try:
                sources.append(files.text(name, limit=TEXT_LIMIT))
            except ArchiveError as error:
                self.note(f"scoring program {path!r}: {error}; that file is not read")
        return Program(sources)

    def _plan(self, draft: PhaseDraft, reference: Reference, task_type: str, options: tuple[str, ...],
              program: Program) -> PhasePlan | None:
        """Return the plan of a phase whose labels were read; report what became what."""
        self.position += 1
        where = f"phase {self.position} {draft.name!r}"
        ranking, columns = self._ranking(program, task_type, where)
        config: dict[str, object] = {"task_type": task_type, "primary_metric": ranking, "breakdowns": []}
        if task_type == "multiple_choice":
            config["options"] = list(options)
        if reference.line_ordered:
            config["prediction_format"] = "lines"
        labels = _label_file(reference, task_type)
        try:
            load_labels(labels, config)
        except LabelFileError as error:  # not expected: the labels were built for this config
            self.position -= 1
            self.note(f"phase {draft.name!r}: its labels do not check ({error}); the phase is not imported")
            return None
        self.note(f"phase {draft.name!r} → {where}: from {shown(draft.start)} to {shown(draft.end)}; "
                  f"{_limits(draft)}", carried=True)
        count = len(reference.ids)
        self.note(f"reference {reference.source} → the label file of {where}: {count:,} item{'s' * (count != 1)} "
                  f"({reference.layout}{'; ids 1, 2, ... by line' if reference.line_ordered else ''}), "
                  f"{_task_text(task_type, options)}"
                  f"{'; predictions may be one value per line, in this order' if reference.line_ordered else ''}",
                  carried=True)
        for line in columns:
            self.note(line.text, carried=line.status == "carried")
        return PhasePlan(position=self.position, name=draft.name, description=draft.description, start=draft.start,
                         end=draft.end, max_per_day=draft.max_per_day, max_total=draft.max_total, labels=labels,
                         n_items=len(reference.ids), config=config, source=reference.source)

    def _ranking(self, program: Program, task_type: str, where: str) -> tuple[str, list[ReportLine]]:
        """Return the phase's ranking metric (the first column matched) and a report line per column."""
        ranking = None
        lines = []
        keys = [column.key for column in self.columns]
        for column in self.columns:
            finding = _fitting(column, program.finding(column.key, others=keys), task_type)
            name = f"column {column.title!r} ({column.key})"
            if finding.metric is None:
                lines.append(ReportLine("not carried", f"{where}: {name}: {finding.reason}"))
                continue
            first = ranking is None
            ranking = ranking or finding.metric
            lines.append(ReportLine("carried", f"{where}: {name} → metric path {finding.metric} ({finding.reason})"
                                               f"{'; the phase ranks by it' if first else ''}"))
        if ranking is None:
            lines.append(ReportLine("not carried", f"{where}: no leaderboard column is a metric Tailboard "
                                                   "computes; the phase ranks by accuracy"))
        return ranking or "accuracy", lines


def _fitting(column: Column, finding: Finding, task_type: str) -> Finding:
    """Return the finding, or why its metric does not fit this column or task."""
    if column.computed:
        return Finding(None, f"it is computed from other columns ({column.computed})")
    metric = finding.metric
    if metric is None:
        return finding
    if metric == "f1" and task_type != "binary":
        return Finding(None, "the scoring program computes a binary F1, but the labels have more than two classes")
    if (column.sorting == "asc") == higher_is_better(metric):
        order = "ascending (lower is better)" if column.sorting == "asc" else "descending"
        return Finding(None, f"it is sorted {order}, which {metric} is not")
    return finding


def _task_type(reference: Reference) -> tuple[str, tuple[str, ...]]:
    """Return the task type and options the labels imply: as the scoring CLI infers, else one class per value."""
    try:
        inferred = infer_config(reference.labels)
        return inferred.task_type, inferred.options
    except LabelFileError:
        pass
    classes = sorted(set(reference.labels), key=lambda v: (0, int(v), "") if _is_int(v) else (1, 0, v))
    if len(classes) > MAX_OPTIONS:
        raise ReferenceProblem(f"{reference.source} has {len(classes):,} different labels; Tailboard scores "
                               f"classification with at most {MAX_OPTIONS} classes")
    folded = {c.lower() for c in classes}
    if len(folded) != len(classes):
        raise ReferenceProblem(f"{reference.source} has labels that differ only by case; Tailboard compares "
                               "answers ignoring case")
    return "multiple_choice", tuple(classes)


def _is_int(value: str) -> bool:
    """Return whether a label is a whole number written plainly."""
    return value.lstrip("-").isdigit()


def _label_file(reference: Reference, task_type: str) -> bytes:
    """Return the labels as a Tailboard label file (JSON Lines of id and label; binary labels as booleans)."""
    lines = []
    for id_, label in zip(reference.ids, reference.labels, strict=True):
        value: object = bool(binary_code(label)) if task_type == "binary" else label
        lines.append(json.dumps({"id": id_, "label": value}, ensure_ascii=False))
    return ("\n".join(lines) + "\n").encode("utf-8")


def _task_text(task_type: str, options: tuple[str, ...]) -> str:
    """Return the task as the report states it."""
    if task_type == "binary":
        return "a binary task"
    return f"multiple choice with options {', '.join(options)}"


def _limits(draft: PhaseDraft) -> str:
    """Return the phase's submission limits as the report states them."""
    day = (f"{draft.max_per_day} submissions a day" if draft.max_per_day
           else "no daily limit in the bundle (Tailboard's default applies)")
    total = f"at most {draft.max_total} in all" if draft.max_total else "no total limit"
    return f"{day}, {total}"
