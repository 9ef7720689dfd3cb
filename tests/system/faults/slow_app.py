"""Tailboard's WSGI app with every scoring run slowed down, so a test can kill a web worker mid-scoring.

``gunicorn slow_app:app`` (with tests/system/faults on PYTHONPATH). FAULT_SCORING_DELAY
seconds (default 3) are spent before each evaluation; everything else is app.py's app.
"""

from __future__ import annotations

import slow_tasks  # noqa: F401  (patches scoring_runs.evaluation)

from app import app

__all__ = ["app"]
