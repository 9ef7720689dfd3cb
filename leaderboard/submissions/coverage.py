"""How much of a phase a prediction file answers, read before anything is stored or charged (docs/RULES.md).

A file that answers few of the phase's items (a truncated export, the wrong split) is
almost always a mistake that costs a quota unit: the upload form asks before charging
it, and the API answers the same warning with its 202. The count is the participant's
own file against the phase's public item count, so it tells nothing about labels.
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass
from typing import Any

import numpy as np

from leaderboard.accounts import get_phase
from leaderboard.phase_data import load_phase_labels
from leaderboard.platform import InvalidInput, LabelIntegrityError, ServiceContext
from leaderboard.platform.storage.base import ObjectNotFound
from scoring import ABSTAIN, PredictionFileError, read_predictions

PARTIAL_SHARE = 0.9
"""A file answering fewer than this share of the phase's items is flagged before it is charged."""
PENDING = "pending-uploads"
TOKEN_RE = re.compile(r"[0-9a-f]{32}")


@dataclass(frozen=True)
class Coverage:
    """How many of a phase's items a file answers (abstentions and missing ids count as unanswered)."""

    answered: int
    n_items: int

    @property
    def partial(self) -> bool:
        """Return whether the file answers fewer than PARTIAL_SHARE of the items."""
        return self.answered < PARTIAL_SHARE * self.n_items

    def warning(self) -> str | None:
        """Return the warning shown before charging a partial file, None for a file that answers enough."""
        if not self.partial:
            return None
        return (f"Your file answers {self.answered} of {self.n_items} items; the other "
                f"{self.n_items - self.answered} count as abstentions and lower accuracy.")


def file_coverage(ctx: ServiceContext, *, phase_id: int, data: bytes) -> Coverage | None:
    """Return how many of the phase's items a file answers; None when the file is not valid (the upload says why).

    None too while the phase's label file fails its integrity check: the upload itself is
    then refused with ScoringUnavailable (503), uncharged.
    """
    phase = get_phase(ctx, phase_id)
    try:
        predictions = read_predictions(data, load_phase_labels(ctx, phase), max_bytes=ctx.settings.max_upload_bytes)
    except (PredictionFileError, LabelIntegrityError):
        return None
    answers = np.asarray(predictions.answer)
    return Coverage(answered=int(np.count_nonzero(answers != ABSTAIN)), n_items=int(answers.size))


def keep_upload(ctx: ServiceContext, *, phase_id: int, user_id: int, data: bytes, fields: dict[str, Any]) -> str:
    """Keep a flagged file and its form fields until its uploader confirms it; return the token.

    An uploader has at most one kept file per phase: keeping another drops the previous one.
    """
    base = f"{PENDING}/{phase_id}/{user_id}"
    for key in list(ctx.storage.iter_keys(base + "/")):
        ctx.storage.delete(key)
    token = secrets.token_hex(16)
    ctx.storage.put(f"{base}/{token}/file", data)
    ctx.storage.put(f"{base}/{token}/meta.json", json.dumps(fields).encode())
    return token


def take_upload(ctx: ServiceContext, *, phase_id: int, user_id: int, token: str) -> tuple[bytes, dict[str, Any]]:
    """Return (and forget) the file and form fields kept under token for this uploader; InvalidInput when gone."""
    if not TOKEN_RE.fullmatch(token or ""):
        raise InvalidInput("Upload the file again: the one you were asked about is no longer kept.")
    base = f"{PENDING}/{phase_id}/{user_id}/{token}"
    try:
        data = ctx.storage.read_bytes(f"{base}/file")
        fields = json.loads(ctx.storage.read_bytes(f"{base}/meta.json"))
    except ObjectNotFound:
        raise InvalidInput("Upload the file again: the one you were asked about is no longer kept.") from None
    for key in (f"{base}/file", f"{base}/meta.json"):
        ctx.storage.delete(key)
    return data, fields
