"""Everything the deadline bench takes from the ``leaderboard`` package, and nothing else does.

The bench drives the platform through its real interfaces (HTTP, ``flask --app app``,
``alembic``, ``celery -A``); only bulk-building thousands of scored submissions goes through
the services here, as bench/platform_bench.py does. When modules move, update LOCATIONS:
each name lists its module in the feature-package layout first, then in the layout before
the move (``--source REV`` can run a revision from before it). Nothing else in bench/deadline
imports ``leaderboard``.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
from pathlib import Path
from typing import Any

LOCATIONS: dict[str, tuple[str, ...]] = {
    "Settings": ("leaderboard.platform.config", "leaderboard.config"),
    "build_runtime": ("leaderboard.platform.runtime", "leaderboard.runtime"),
    "utcnow": ("leaderboard.platform.db", "leaderboard.db"),
    "User": ("leaderboard.models",),
    "Submission": ("leaderboard.models",),
    "Score": ("leaderboard.models",),
    "register_user": ("leaderboard.accounts.users", "leaderboard.services.accounts"),
    "create_token": ("leaderboard.accounts.users", "leaderboard.services.accounts"),
    "get_phase": ("leaderboard.accounts.access", "leaderboard.services.access"),
    "load_phase_labels": ("leaderboard.phase_data.labelsets", "leaderboard.services.labelsets"),
    "store_file": ("leaderboard.submissions.intake", "leaderboard.services.submissions"),
    "primary_values": ("leaderboard.submissions.scoring_runs", "leaderboard.services.scoring_runs"),
    "score_submission": ("leaderboard.submissions.scoring_runs", "leaderboard.services.scoring_runs"),
    "with_draw": ("leaderboard.disclosure.precision", "leaderboard.services.precision"),
    "run_job": ("leaderboard.operations.job_runner", "leaderboard.services.job_runner"),
    "board_changed": ("leaderboard.board.changes", "leaderboard.services.board_events"),
}
"""Where each name the bench uses lives: new layout first, then the layout before the move."""

CELERY_APP_MODULES = ("leaderboard.workers.celery_app", "leaderboard.tasks")
"""The module ``celery -A`` takes (the Celery app of the scale-out setup), new layout first."""


def _tree() -> Path:
    """Return the folder of the ``leaderboard`` package this process runs (the chosen source tree's)."""
    return Path(str(importlib.import_module("leaderboard").__file__)).resolve().parent


def _in_tree(module_name: str) -> bool:
    """Return whether module_name and its packages exist in the running tree, importing none that do not.

    The editable install's finder would otherwise serve a module the tree lacks from the
    checkout, mixing two layouts in one process.
    """
    parts = module_name.split(".")
    for end in range(2, len(parts) + 1):
        try:
            spec = importlib.util.find_spec(".".join(parts[:end]))
        except ModuleNotFoundError:
            return False
        if spec is None or spec.origin is None or not Path(spec.origin).resolve().is_relative_to(_tree()):
            return False
    return True


def _find(name: str) -> Any:
    """Return the named object from the first module of LOCATIONS that the running tree has and defines it."""
    for module_name in LOCATIONS[name]:
        if _in_tree(module_name):
            module = importlib.import_module(module_name)
            if hasattr(module, name):
                return getattr(module, name)
    raise ImportError(f"{name} not found in {', '.join(LOCATIONS[name])} of {_tree()}: update "
                      f"bench/deadline/platform_api.py LOCATIONS")


def celery_app_module() -> str:
    """Return the importable module name of the platform's Celery app (what ``celery -A`` takes)."""
    for module_name in CELERY_APP_MODULES:
        if _in_tree(module_name):
            return module_name
    raise ImportError(f"no Celery app module among {CELERY_APP_MODULES} in {_tree()}: update "
                      f"bench/deadline/platform_api.py")


def runtime(*, data_dir: str, database_url: str) -> Any:
    """Return a runtime on the instance (inline dispatch, no sweep), as the app factory wires one."""
    settings = _find("Settings").from_env({}, data_dir=data_dir, database_url=database_url, secret_key="bench",
                                         sweep_seconds=0)
    build = _find("build_runtime")
    wiring: dict[str, Any] = {"score": _find("score_submission"), "run_job": _find("run_job")}
    if "board_changed" in inspect.signature(build).parameters:  # the feature-package layout injects it
        wiring["board_changed"] = _find("board_changed")
    return build(settings, **wiring)


def models() -> tuple[Any, Any, Any]:
    """Return the User, Submission and Score model classes."""
    return _find("User"), _find("Submission"), _find("Score")


def utcnow() -> Any:
    """Return the platform's idea of now (naive UTC)."""
    return _find("utcnow")()


def register_user(ctx: Any, *, email: str, password: str) -> Any:
    """Create one participant account through the accounts service; return the User."""
    return _find("register_user")(ctx, email=email, password=password)


def create_token(ctx: Any, *, user: Any) -> str:
    """Create an API token for user; return its plaintext."""
    return str(_find("create_token")(ctx, user=user)[1])


def phase_labels(ctx: Any, phase_id: int) -> Any:
    """Return the phase row and its parsed label set (scoring.LabelSet)."""
    phase = _find("get_phase")(ctx, phase_id)
    return phase, _find("load_phase_labels")(ctx, phase)


def store_file(ctx: Any, *, phase_id: int, data: bytes) -> Any:
    """Store a prediction file as an upload would; return the stored object (key, sha256, size)."""
    return _find("store_file")(ctx, phase_id=phase_id, data=data)


def evaluated(labels: Any, predictions: Any) -> tuple[dict[str, Any], Any]:
    """Return a file's result object and its slice list (scoring.metrics.reuse), None in a tree that keeps none."""
    evaluate = importlib.import_module("scoring.evaluate")
    if hasattr(evaluate, "evaluation"):
        found = evaluate.evaluation(labels, predictions)
        return found.results, found.tables
    return evaluate.evaluate(labels, predictions), None


def stored_results(results: dict[str, Any], predictions: Any, primary_metric: str) -> tuple[dict[str, Any], Any]:
    """Return a result object as a scoring run stores it (with its draw) and its (public, private) primary values."""
    return _find("with_draw")(results, predictions), _find("primary_values")(results, primary_metric)


def announce_board(ctx: Any, phase_id: int) -> None:
    """Announce bulk-written scores to the board (they bypass the writers' door) and refresh it."""
    _find("board_changed")(ctx, phase_id=phase_id)
