"""Read a participant's prediction file and validate it against a phase's items (docs/FORMATS.md, Prediction files).

The file is loaded and sniffed (``formats``), turned into string columns by the reader
of its format (``csv_reader``, ``json_reader``), and every row is classified at once
(``validate``). A CSV file is first read by pyarrow without line numbers; only when
that finds a problem is it read again by the exact reader, so that each problem
carries the line it is on. Gold labels are never looked at.
"""

from __future__ import annotations

import os
from typing import BinaryIO

import numpy as np

from scoring.labels import LabelSet
from scoring.predictions.csv_reader import read_csv_exact, read_csv_fast
from scoring.predictions.formats import load_document
from scoring.predictions.json_reader import read_json, read_jsonl
from scoring.predictions.lines import is_line_ordered, read_lines
from scoring.predictions.tokens import token_table
from scoring.predictions.validate import check_rows
from scoring.types import ABSTAIN, DEFAULT_MAX_BYTES, PredictionFileError, Predictions, Problem


def read_predictions(
    source: bytes | str | os.PathLike[str] | BinaryIO,
    labels: LabelSet,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> Predictions:
    """Read and validate a prediction file for a label set, or raise its problems.

    ``source`` is the file's content (bytes), a path (str or PathLike) or a binary
    stream; at most ``max_bytes + 1`` bytes are read and no archive is inflated past
    ``max_bytes``.
    """
    document = load_document(source, max_bytes=max_bytes)
    tokens = token_table(labels.config)
    if labels.config.prediction_format == "lines" and is_line_ordered(document):
        rows = read_lines(document.text(), labels.ids, tokens)
    elif document.kind == "csv":
        fast = read_csv_fast(document.data)
        if fast is not None:
            checked = check_rows(fast, labels, tokens)
            if checked.clean:
                return _enough_answered(checked.predictions(labels), labels)
        rows = read_csv_exact(document.text())
    elif document.kind == "jsonl":
        rows = read_jsonl(document.text())
    else:
        rows = read_json(document.text())
    checked = check_rows(rows, labels, tokens)
    if checked.clean:
        return _enough_answered(checked.predictions(labels), labels)
    raise checked.error(rows, labels, tokens)


def _enough_answered(predictions: Predictions, labels: LabelSet) -> Predictions:
    """Return predictions, or raise when they answer fewer items than the phase's min_answered.

    The count runs over every item of the file, not over the public split alone: a refusal
    that counted public items only would tell a participant how many of the items they
    answered are public (docs/PROBING.md; docs/FORMATS.md lists it among its deviations).
    """
    minimum = labels.config.min_answered
    if minimum is None:
        return predictions
    answered = int(np.count_nonzero(predictions.answer != ABSTAIN))
    if answered >= minimum:
        return predictions
    message = (f"The file answers {answered} item{'s' if answered != 1 else ''}; this phase needs at least "
               f"{minimum} answered items (abstentions and missing ids do not count).")
    raise PredictionFileError([Problem(line=None, id=None, message=message)], 1)
