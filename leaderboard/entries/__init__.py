"""Entries (docs/ENTRIES.md): who submits under which method, with which metadata, in which team, on whose quota.

``rules`` is the one rule for method names, metadata and the max_methods cap; ``teams``
creates and joins teams; ``quota`` counts uploads per entry owner; ``selections`` keeps
the final selections (and announces them with ``ctx.board_changed``). May import
phase_data, accounts, notify, models and platform; never the board.
"""

from __future__ import annotations

from leaderboard.entries.quota import QuotaStatus
from leaderboard.entries.rules import (
    METADATA_KEYS,
    PROMPTING,
    check_metadata,
    check_method,
    check_method_cap,
    final_selections,
    max_methods,
    metadata_from_fields,
    metadata_from_json,
    metadata_from_pairs,
    owner_filter,
    update_entry_settings,
    with_entry_settings,
)

__all__ = [
    "METADATA_KEYS", "PROMPTING", "QuotaStatus", "check_metadata", "check_method", "check_method_cap",
    "final_selections", "max_methods", "metadata_from_fields", "metadata_from_json", "metadata_from_pairs",
    "owner_filter", "update_entry_settings", "with_entry_settings"
]
