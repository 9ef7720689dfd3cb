"""Zip archives read safely: bounded members, no escaping paths, JSON errors naming member and line.

``SafeZip(source)`` serves the competition bundles (``scoring.bundles``) and the
platform's archive import; ``Record`` is what its JSON readers return.
"""

from __future__ import annotations

from scoring.zips.errors import ArchiveError
from scoring.zips.reader import MEMBER_LIMIT, Member, SafeZip
from scoring.zips.records import Record

__all__ = ["MEMBER_LIMIT", "ArchiveError", "Member", "Record", "SafeZip"]
