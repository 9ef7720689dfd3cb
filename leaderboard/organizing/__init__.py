"""Running a competition (docs/ORGANIZING.md): competitions, phases, their settings, imports, baselines.

``competitions`` and ``phases`` create and change them (a phase opened, closed or
relabelled); ``phase_settings`` edits live settings; ``phase_imports`` builds a phase from
a benchmark's released file; ``bundle_imports`` a competition from a CodaLab or Codabench
bundle (preview, then import); ``baselines`` adds the built-in and organizers' baselines;
``start_checks`` says at start what the operator should know. May import operations,
submissions, disclosure, entries, phase_data, accounts, notify, models and platform;
never the board.
"""

from __future__ import annotations

from leaderboard.organizing.baselines import add_baseline
from leaderboard.organizing.competitions import SLUG_RE, SLUG_RULE
from leaderboard.organizing.phase_imports import ImportedFiles, read_import_dir, run_importer
from leaderboard.organizing.phase_settings import update_settings
from leaderboard.organizing.phases import DEFAULT_MAX_PER_DAY, LIMIT_MIN, UNLIMITED

__all__ = [
    "DEFAULT_MAX_PER_DAY", "ImportedFiles", "LIMIT_MIN", "SLUG_RE", "SLUG_RULE", "UNLIMITED", "add_baseline",
    "read_import_dir", "run_importer", "update_settings"
]
