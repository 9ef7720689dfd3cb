"""The one error of the zip reader: an archive or a member that cannot be read safely."""

from __future__ import annotations

from scoring.types import ScoringError


class ArchiveError(ScoringError):
    """A zip archive or one of its members is refused; the message names the member and says why.

    The message quotes member names and at most a JSON parser's complaint, never member
    content, so it is safe to show the person who uploaded the archive.
    """
