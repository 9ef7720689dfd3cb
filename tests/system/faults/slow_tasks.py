"""Tailboard's Celery app with every scoring run slowed down, so a test can kill a worker mid-task.

``celery -A slow_tasks worker`` (with tests/system/faults on PYTHONPATH). FAULT_SCORING_DELAY
seconds (default 3) are spent before each evaluation; everything else is leaderboard.workers.celery_app.
"""

from __future__ import annotations

import os
import time
from typing import Any

from leaderboard.submissions import scoring_runs
from leaderboard.workers import celery_app

_evaluation = scoring_runs.evaluation


def _slow_evaluation(labels: Any, predictions: Any, **options: Any) -> Any:
    """Wait FAULT_SCORING_DELAY seconds, then evaluate."""
    time.sleep(float(os.environ.get("FAULT_SCORING_DELAY", "3")))
    return _evaluation(labels, predictions, **options)


scoring_runs.evaluation = _slow_evaluation  # type: ignore[assignment]
app = celery_app.app
