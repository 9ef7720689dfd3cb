"""The upload form's check before charging (docs/RULES.md): a file that answers few items waits for a yes.

The form reads the file first; one that answers fewer than ``PARTIAL_SHARE`` of the
phase's items is kept (submissions/coverage.py) and the phase page asks "submit
anyway?"; only the confirmation stores, charges and queues it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from leaderboard.entries import rules
from leaderboard.models import Submission, User
from leaderboard.platform import ServiceContext
from leaderboard.submissions import accept_submission
from leaderboard.submissions.coverage import Coverage, file_coverage, keep_upload, take_upload


@dataclass(frozen=True)
class Partial:
    """A file the form asks about before charging it: what it answers, and the token it is kept under."""

    coverage: Coverage
    token: str


def form_fields(form: Any) -> dict[str, Any]:
    """Return the upload form's fields (file name, description, method, checked metadata) as plain data."""
    return {"filename": form.file.data.filename or "predictions", "description": form.description.data or "",
            "method": form.method.data, "metadata": rules.metadata_from_fields(form.metadata_fields())}


def flag_partial(ctx: ServiceContext, *, phase_id: int, user: User, data: bytes,
                 fields: dict[str, Any]) -> Partial | None:
    """Keep a file that answers few of the phase's items and return what to ask; None to go ahead."""
    coverage = file_coverage(ctx, phase_id=phase_id, data=data)
    if coverage is None or not coverage.partial:
        return None
    return Partial(coverage, keep_upload(ctx, phase_id=phase_id, user_id=user.id, data=data, fields=fields))


def accept(ctx: ServiceContext, *, phase_id: int, user: User, data: bytes, fields: dict[str, Any]) -> Submission:
    """Store, validate, charge and queue the file with the form's fields."""
    return accept_submission(ctx, phase_id=phase_id, user=user, filename=fields["filename"], stream=data,
                             description=fields["description"], method=fields["method"],
                             metadata=fields["metadata"])


def confirm(ctx: ServiceContext, *, phase_id: int, user: User, token: str) -> Submission:
    """Accept the kept file its uploader confirmed."""
    data, fields = take_upload(ctx, phase_id=phase_id, user_id=user.id, token=token)
    return accept(ctx, phase_id=phase_id, user=user, data=data, fields=fields)
