"""A phase's data: its hidden label file, its public files, the private split, an import's kept sources.

``labelsets`` stores and loads label files (content-addressed, checked against their
SHA-256 on every read); ``phase_files`` derives and serves the public questions; ``public_extras`` lets managers
replace them and add or remove other public files;
``private_split`` draws a private split; ``import_uploads`` keeps an import preview's
files. May import accounts, notify, models and platform.
"""

from __future__ import annotations

from leaderboard.phase_data.import_uploads import ImportSources
from leaderboard.phase_data.labelsets import (
    check_labels,
    config_to_json,
    ensure_intact,
    has_private_split,
    label_fields,
    load_phase_labels,
    read_phase_label_bytes,
    store_labels,
)
from leaderboard.phase_data.phase_files import (
    checked_questions,
    derive_questions,
    phase_questions_report,
    prediction_csv,
    public_fields_json,
    public_file,
    questions_report,
    store_questions,
)
from leaderboard.phase_data.private_split import SplitReport, assign_private_split
from leaderboard.phase_data.public_extras import public_file_names, put_public_file, remove_public_file

__all__ = [
    "ImportSources", "SplitReport", "assign_private_split", "check_labels", "checked_questions", "config_to_json",
    "derive_questions", "ensure_intact", "has_private_split", "label_fields", "load_phase_labels",
    "read_phase_label_bytes", "phase_questions_report",
    "prediction_csv", "public_fields_json", "public_file", "public_file_names", "put_public_file",
    "remove_public_file", "questions_report", "store_labels", "store_questions"
]
