"""The demo competition: ``seed.install_demo`` and the demo data files beside it (``flask --app app demo``).

May import organizing and every package below it; never the board.
"""

from __future__ import annotations

from leaderboard.demo.seed import DEMO_DIR, ORGANIZER_EMAIL, PARTICIPANT_EMAILS, PASSWORD, SLUG, install_demo

__all__ = [
    "DEMO_DIR", "ORGANIZER_EMAIL", "PARTICIPANT_EMAILS", "PASSWORD", "SLUG", "install_demo"
]
