"""Rows of a prediction file: string columns, the line each row starts on, and the problems logged.

Every reader (``csv_reader``, ``json_reader``) turns a file into ``Rows``; structural
problems (a broken line, an unknown field) are logged with their line, and the value
checks are left to the vectorized validator (``scoring.predictions.validate``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from scoring.types import MAX_LISTED_PROBLEMS, Problem

_SHOWN = 60


def shown(value: str) -> str:
    """Return a value quoted for a message: printable, and cut when long."""
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in value[: _SHOWN + 1])
    return f"'{text[:_SHOWN]}...'" if len(text) > _SHOWN else f"'{text}'"


class ProblemLog:
    """Problems in line order: counts them all, keeps the first ones that can be listed."""

    def __init__(self) -> None:
        self.count = 0
        self.kept: list[Problem] = []

    def add(self, line: int | None, id_: str | None, message: str) -> None:
        """Record one problem."""
        self.count += 1
        if len(self.kept) < MAX_LISTED_PROBLEMS:
            self.kept.append(Problem(line=line, id=id_, message=message))


@dataclass
class Rows:
    """Columns of a prediction file as strings; a null id or value was already logged."""

    ids: pa.Array
    values: pa.Array
    confidences: pa.Array | None
    lines: npt.NDArray[np.int64] | None  # None when the reader did not track lines
    log: ProblemLog = field(default_factory=ProblemLog)


def collected_rows(
    *,
    lines: list[int],
    ids: list[str | None],
    values: list[str | None],
    confidences: list[str | None] | None,
    log: ProblemLog,
) -> Rows:
    """Return the rows a line-tracking reader collected as lists, as string columns."""
    return Rows(
        ids=pa.array(ids, type=pa.string()),
        values=pa.array(values, type=pa.string()),
        confidences=None if confidences is None else pa.array(confidences, type=pa.string()),
        lines=np.array(lines, dtype=np.int64),
        log=log,
    )
