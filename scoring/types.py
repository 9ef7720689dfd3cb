"""Shared value types of the scoring library: phase config, problems, errors, predictions, buckets.

The label set lives in ``scoring.labels`` (it owns the arrow/numpy layout of items);
everything here is small and dependency-free apart from numpy.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

TaskType = Literal["binary", "multiple_choice"]
MissingIds = Literal["abstain", "error"]
PublicFeedback = Literal["exact", "ladder"]
PredictionFormat = Literal["ids", "lines"]

BINARY_OPTIONS: tuple[str, ...] = ("false", "true")
"""Class codes of a binary task: 0 is false, 1 is true (the positive class)."""

ABSTAIN: int = -1
"""Answer code of an abstention, and of an id the file does not mention."""

MAX_LISTED_PROBLEMS = 50
DEFAULT_MAX_BYTES = 100 * 1024 * 1024
DEFAULT_MIN_SLICE_ITEMS = 25
"""docs/PROBING.md: answered items a slice of a hidden split needs before a participant sees it."""

NO_BUCKET, TAIL, TORSO, HEAD = -1, 0, 1, 2
BUCKET_NAMES: dict[int, str] = {HEAD: "head", TORSO: "torso", TAIL: "tail"}
"""Popularity bucket codes and names (docs/LONG_TAIL.md, Popularity buckets), in the order results list them."""

SPLIT_NAMES: tuple[str, ...] = ("public", "private")
"""The leaderboards an item can count on (docs/FORMATS.md, ``split``); an item's split code is its index here."""


@dataclass(frozen=True)
class PhaseConfig:
    """The task config of one phase (docs/FORMATS.md, Phase config), already checked."""

    task_type: TaskType
    options: tuple[str, ...] = BINARY_OPTIONS
    primary_metric: str = "accuracy"
    breakdowns: tuple[str, ...] = ("category",)
    head_min: float | None = None
    tail_max: float | None = None
    missing_ids: MissingIds = "abstain"
    # Probing defences (docs/PROBING.md); the platform applies them, scoring only checks min_answered.
    min_slice_items: int = DEFAULT_MIN_SLICE_ITEMS
    public_feedback: PublicFeedback = "exact"
    ladder_step: float | None = None  # None: max(0.001, 1/sqrt(public items))
    min_answered: int | None = None
    public_fields: tuple[str, ...] = ()  # fields the organizer marks public beyond the allow list (public_fields.py)
    views: tuple[Any, ...] = ()  # scoring.views.View objects (docs/FORMATS.md, Leaderboard views); empty: "Overall"
    # Entries (docs/ENTRIES.md): methods per team or user, and final selections (None: no selection).
    max_methods: int = 3
    final_selections: int | None = None
    # "lines": a file of one value per line, in item order, is also read (scoring/predictions/lines.py)
    prediction_format: PredictionFormat = "ids"


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a prediction file, safe to show the participant."""

    line: int | None
    id: str | None
    message: str

    def to_json(self) -> dict[str, Any]:
        """Return the problem as listed in docs/FORMATS.md, Validation problems."""
        return {"line": self.line, "id": self.id, "message": self.message}


class ScoringError(Exception):
    """Base class of every error the scoring library raises on purpose."""


class PredictionFileError(ScoringError):
    """The participant's file is invalid; ``problems`` lists at most 50 of ``error_count``."""

    def __init__(self, problems: list[Problem], error_count: int) -> None:
        super().__init__(f"the prediction file has {error_count} problem(s)")
        self.problems = problems
        self.error_count = error_count

    def to_json(self) -> dict[str, Any]:
        """Return the validation-failure object of docs/FORMATS.md, Validation problems."""
        return {"errors": [p.to_json() for p in self.problems], "error_count": self.error_count}


class LabelFileError(ScoringError):
    """The organizer's label file or phase config is invalid (CLI exit 3).

    The message names the line and may quote label data: it is for organizers only.
    """


@dataclass(frozen=True)
class Predictions:
    """A validated prediction file, aligned with the items of a label set.

    ``answer[i]`` is the class code predicted for item ``i`` of the label set
    (index into ``PhaseConfig.options``), or ``ABSTAIN`` for an abstention or an
    id the file does not mention. ``confidence[i]`` is NaN where no confidence
    applies; ``confidence`` is None when the file has no confidence column.
    """

    answer: npt.NDArray[np.int8]
    confidence: npt.NDArray[np.float64] | None
    n_predictions: int
    warnings: list[str] = field(default_factory=list)
