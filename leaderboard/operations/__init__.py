"""Organizer operations (docs/ORGANIZING.md): background jobs, rescoring, moderation, the archive.

``jobs`` is the jobs table (claimed, resumed, superseded); ``job_runner.run_job`` is the
one runner every entry point calls; ``rescoring`` re-scores a phase in batches;
``moderation`` hides or disqualifies a submission; ``archive_export`` and
``archive_import`` move a competition out and in; ``archive_jobs`` builds the
export as a job whose zip is stored for download. May import submissions, disclosure,
entries, phase_data, accounts, notify, models and platform; never the board.
"""

from __future__ import annotations

from leaderboard.operations.archive_export import export_competition
from leaderboard.operations.archive_import import import_archive
from leaderboard.operations.job_runner import run_job
from leaderboard.operations.jobs import JobView, resumable_ids
from leaderboard.operations.moderation import moderation_state
from leaderboard.operations.rescoring import count_eligible

__all__ = [
    "JobView", "count_eligible", "export_competition", "import_archive", "moderation_state", "resumable_ids", "run_job"
]
