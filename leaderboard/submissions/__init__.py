"""A submission's life (docs/RULES.md): accepted, acknowledged, scored, recovered.

``intake`` stores an upload and lists submissions with their visible scores;
``acknowledge`` validates it, then charges the quota and queues it in one transaction;
``claims`` is every status change as a conditional UPDATE; ``queue`` orders the queued
ones fairly between owners and tells each its place; ``scoring_runs`` scores a queued
submission (``score_in_turn`` in embedded mode, ``wake_scorer`` for a Celery task: both
take the fairest) and announces the change with ``ctx.board_changed``; ``recovery`` sweeps up
what a crash or an outage left unfinished; ``coverage`` counts what a file answers before it
is charged (the upload form asks about a file answering few items). May import disclosure, entries, phase_data,
accounts, notify, models and platform; never the board.
"""

from __future__ import annotations

from leaderboard.submissions.claims import claim
from leaderboard.submissions.intake import (
    accept_submission,
    active_score,
    list_phase_submissions,
    list_submissions,
    read_upload,
    scores_scope,
    scoring_attempts,
    store_file,
    visible_scores,
)
from leaderboard.submissions.queue import (
    Place,
    QueueStats,
    eta_seconds,
    per_second,
    place_in_line,
    queue_positions,
    queue_stats,
)
from leaderboard.submissions.scoring_runs import record_score, score_in_turn, score_submission, wake_scorer

__all__ = [
    "Place", "QueueStats", "accept_submission", "active_score", "claim", "eta_seconds", "list_phase_submissions",
    "list_submissions", "per_second", "place_in_line", "queue_positions", "queue_stats", "read_upload", "record_score",
    "score_in_turn", "score_submission", "scores_scope", "scoring_attempts", "store_file", "visible_scores",
    "wake_scorer",
]
