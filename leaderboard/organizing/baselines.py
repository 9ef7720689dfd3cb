"""Baselines: the platform's own entries (majority, random, all-yes) and organizers' uploads.

Built-in predictions are computed here from the hidden labels and stored like any
upload, owned by the system account, so they are never served to anyone; they are
scored by the same path as participants' files.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, BinaryIO

import numpy as np
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from leaderboard.accounts import Actor, audit, managed_phase, system_user
from leaderboard.entries import check_metadata
from leaderboard.models import Baseline, Phase, Submission, User
from leaderboard.phase_data import load_phase_labels, prediction_csv
from leaderboard.platform import Conflict, InvalidInput, ServiceContext, SubmissionInvalid
from leaderboard.platform.storage.base import StoredObject
from leaderboard.submissions import read_upload, store_file
from scoring import LabelSet, PredictionFileError, read_predictions

MAJORITY = "Majority class"
RANDOM = "Random (seed 0)"
ALL_YES = "All yes"
RANDOM_SEED = 0


def builtin_predictions(labels: LabelSet) -> dict[str, bytes]:
    """Return the CSV file of each built-in baseline for a label set (all-yes for binary tasks only)."""
    options = labels.config.options
    ids = [str(i) for i in labels.ids.to_pylist()]
    gold = np.asarray(labels.gold)
    counts = np.bincount(gold[gold >= 0], minlength=len(options))
    majority = options[int(np.argmax(counts))]  # ties go to the first option
    drawn = np.random.default_rng(RANDOM_SEED).integers(0, len(options), size=len(ids))
    files = {
        MAJORITY: prediction_csv(ids, [majority] * len(ids)),
        RANDOM: prediction_csv(ids, [options[int(k)] for k in drawn]),
    }
    if labels.config.task_type == "binary":
        files[ALL_YES] = prediction_csv(ids, ["true"] * len(ids))
    return files


def ensure_builtin_baselines(ctx: ServiceContext, *, phase: Phase) -> list[Baseline]:
    """Create the phase's missing built-in baselines and refresh the files of existing ones.

    New baselines are dispatched for scoring; refreshed ones are rescored by the caller
    (replace_labels rescores the whole phase).
    """
    owner = system_user(ctx)
    existing = {b.name: b for b in ctx.session.scalars(
        select(Baseline).where(Baseline.phase_id == phase.id, Baseline.kind == "builtin"))}
    created: list[Baseline] = []
    for name, data in builtin_predictions(load_phase_labels(ctx, phase)).items():
        stored = store_file(ctx, phase_id=phase.id, data=data)
        if name in existing:
            submission = existing[name].submission
            submission.file_key, submission.file_sha256, submission.file_size = stored.key, stored.sha256, stored.size
            continue
        baseline = _new_baseline(ctx, phase=phase, owner=owner, name=name, kind="builtin",
                                 filename=_filename(name), stored=stored)
        created.append(baseline)
    ctx.session.commit()
    ctx.dispatch([b.submission_id for b in created])
    return created


def add_baseline(
    ctx: ServiceContext, *, phase_id: int, name: str, filename: str, stream: BinaryIO | bytes, actor: Actor,
    metadata: Mapping[str, Any] | None = None,
) -> Baseline:
    """Enter an organizer's named baseline (e.g. 'Human', 'GPT-4o'); it is validated and scored like a submission.

    Forbidden unless actor manages the competition; the operator's baselines belong to the system account.
    ``metadata`` follows the entries' rule (docs/ENTRIES.md) and shows on the board like a participant's.
    """
    phase = managed_phase(ctx, phase_id=phase_id, actor=actor)
    owner = actor if isinstance(actor, User) else system_user(ctx)
    name = " ".join(name.split())
    if not name or len(name) > 120:
        raise InvalidInput("A baseline name has 1 to 120 characters.")
    checked = check_metadata(metadata)
    if ctx.session.scalar(select(Baseline.id).where(Baseline.phase_id == phase.id, Baseline.name == name)):
        raise Conflict(f"This phase already has a baseline named {name!r}.")
    data = read_upload(stream, limit=ctx.settings.max_upload_bytes)
    try:
        read_predictions(data, load_phase_labels(ctx, phase), max_bytes=ctx.settings.max_upload_bytes)
    except PredictionFileError as error:
        raise SubmissionInvalid(f"The baseline file was not accepted: {error.error_count} problem(s).",
                                error.to_json()) from None
    stored = store_file(ctx, phase_id=phase.id, data=data)
    baseline = _new_baseline(ctx, phase=phase, owner=owner, name=name, kind="uploaded",
                             filename=(filename or _filename(name))[:255], stored=stored)
    baseline.submission.entry_metadata = checked
    try:
        ctx.session.commit()
    except IntegrityError:
        ctx.session.rollback()
        raise Conflict(f"This phase already has a baseline named {name!r}.") from None
    audit.record(ctx, actor=actor, competition=phase.competition, target=audit.phase_target(phase.id, phase.name),
                 summary=f"baseline “{name}” added (submission {baseline.submission_id})")
    ctx.dispatch([baseline.submission_id])
    ctx.session.refresh(baseline)
    return baseline


def _new_baseline(ctx: ServiceContext, *, phase: Phase, owner: User, name: str, kind: str, filename: str,
                  stored: StoredObject) -> Baseline:
    """Add a queued baseline submission of a stored predictions file, and its Baseline row, to the session."""
    submission = Submission(
        phase_id=phase.id, user_id=owner.id, description=name, filename=filename, file_key=stored.key,
        file_sha256=stored.sha256, file_size=stored.size, status="queued", is_baseline=True,
    )
    baseline = Baseline(phase_id=phase.id, name=name, kind=kind, submission=submission)
    ctx.session.add_all([submission, baseline])
    return baseline


def _filename(name: str) -> str:
    """Return a file name for a baseline's predictions."""
    return "".join(c if c.isalnum() else "-" for c in name.lower()).strip("-") + ".csv"
