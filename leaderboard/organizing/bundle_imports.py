"""A competition from a CodaLab or Codabench bundle (docs/MOVING.md): preview it, then create it on confirmation.

``preview_bundle`` reads the zip with ``scoring.bundles.read_bundle`` (nothing written but
the kept upload) and returns the plan and the import report; on the web the upload is
kept under ``bundles/<who>/<token>/`` in the uploads storage so the organizer confirms
without uploading it again. The token is random (128 bits) and filed under the account
that previewed it, so nobody else can confirm it. ``import_bundle`` creates the
competition and each planned phase with its dates, limits, label file, config and
ranking metric, and the bundle's pages as text sections of its description
(scoring/bundles/page_text.py); every phase is checked before anything is created. A bundle makes a
few phases (and their built-in baselines), so the import runs within the request: no job.
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select

from leaderboard.accounts import Actor, audit, ensure_organizer
from leaderboard.models import Competition, User
from leaderboard.organizing.competitions import SLUG_RE, create_competition
from leaderboard.organizing.phases import DEFAULT_MAX_PER_DAY, create_phase
from leaderboard.phase_data import check_labels
from leaderboard.platform import InvalidInput, ServiceContext
from leaderboard.platform.db import naive_utc
from leaderboard.platform.storage.base import ObjectNotFound
from scoring.bundles import BundleError, BundlePlan, PhasePlan, read_bundle
from scoring.bundles.page_text import described, page_text

TOKEN_RE = re.compile(r"^[0-9a-f]{32}$")
DESCRIPTION_FORM_MAX = 20000
"""The longest description the organizer's competition form saves (web/organizer_forms.py); the import takes longer."""
FORMAT_NAMES = {"codalab": "CodaLab", "codabench": "Codabench"}


@dataclass(frozen=True)
class BundlePreview:
    """A read bundle: the plan, the slug it would get, the whole report, and the token of the kept upload."""

    plan: BundlePlan
    slug: str
    filename: str
    report: tuple[str, ...]
    token: str | None = None


def preview_bundle(ctx: ServiceContext, *, data: bytes, filename: str, actor: Actor, slug: str | None = None,
                   keep: bool = False) -> BundlePreview:
    """Read a bundle into what would be created (nothing is); with keep, store the upload for the confirmation."""
    ensure_organizer(actor)
    plan = _read(data)
    chosen = (slug or "").strip() or free_slug(ctx, plan.title)
    preview = BundlePreview(plan=plan, slug=chosen, filename=_name(filename), report=_report(ctx, plan, chosen))
    if not keep:
        return preview
    token = secrets.token_hex(16)
    base = _base(actor, token)
    ctx.storage.put(f"{base}/bundle.zip", data)
    ctx.storage.put(f"{base}/meta.json", json.dumps({"filename": preview.filename}).encode())
    return BundlePreview(plan=plan, slug=chosen, filename=preview.filename, report=preview.report, token=token)


def kept_bundle(ctx: ServiceContext, *, token: str | None, actor: Actor) -> tuple[bytes, str]:
    """Return the bundle (and its file name) this actor previewed under token; InvalidInput for anyone else."""
    ensure_organizer(actor)
    if not token or not TOKEN_RE.match(token):
        raise InvalidInput("Upload the bundle again: no previewed bundle was given.")
    base = _base(actor, token)
    try:
        meta = json.loads(ctx.storage.read_bytes(f"{base}/meta.json"))
        data = ctx.storage.read_bytes(f"{base}/bundle.zip")
    except ObjectNotFound:
        raise InvalidInput("This previewed bundle is not kept for you; upload it again.") from None
    return data, str(meta.get("filename") or "bundle.zip")


def import_bundle(ctx: ServiceContext, *, actor: Actor, data: bytes | None = None, token: str | None = None,
                  filename: str = "bundle.zip", slug: str | None = None, owner: User | None = None) -> Competition:
    """Create the competition of a bundle (given, or kept under the actor's preview token) with all its phases.

    Owned by the importing organizer, or by ``owner`` when the operator imports it (none:
    only the operator manages it). Every phase is checked before the competition is
    created; InvalidInput names what stops it, Conflict a taken slug.
    """
    ensure_organizer(actor)
    if data is None:
        data, filename = kept_bundle(ctx, token=token, actor=actor)
    plan = _read(data)
    slug = (slug or "").strip() or free_slug(ctx, plan.title)
    for phase in plan.phases:
        _check_phase(phase)
    competition = create_competition(ctx, slug=slug, title=plan.title[:200], description=carried_description(plan),
                                     actor=actor, owner=owner)
    for phase in plan.phases:
        create_phase(ctx, competition_slug=competition.slug, name=phase.name[:120], labels=phase.labels,
                     config=phase.config, start_at=phase.start, end_at=phase.end, actor=actor,
                     max_per_day=phase.max_per_day, max_total=phase.max_total, description=phase.description)
    audit.record(ctx, actor=actor, competition=competition, target=f"competition {competition.slug}",
                 summary=f"imported the competition from the {FORMAT_NAMES[plan.format]} bundle {_name(filename)} "
                         f"({len(plan.phases)} phase(s))")
    if token is not None:
        _forget(ctx, actor, token)
    ctx.session.refresh(competition)
    return competition


def phase_facts(phase: PhasePlan) -> dict[str, str]:
    """Return what a planned phase will be, in words: its dates, limits, ranking metric, items and file format."""
    return {
        "start": _when(phase.start, "not set (opened by hand)"),
        "end": _when(phase.end, "not set"),
        "per_day": f"{phase.max_per_day} a day" if phase.max_per_day is not None
        else f"{DEFAULT_MAX_PER_DAY} a day (Tailboard's default: the bundle sets none)",
        "total": f"{phase.max_total} in all" if phase.max_total is not None else "no total limit",
        "metric": str(phase.config.get("primary_metric", "accuracy")),
        "items": str(phase.n_items),
        "predictions": "one value per line, in the reference order (or id,prediction files)"
        if phase.config.get("prediction_format") == "lines" else "files with ids",
    }


def carried_description(plan: BundlePlan) -> str:
    """Return the competition's description: the bundle's, then each page as a titled section of plain text."""
    return described(plan.description, plan.pages)


def carried_pages(plan: BundlePlan) -> list[dict[str, str]]:
    """Return each page that will be carried (title, source file, format, the text it becomes), for the previews."""
    return [{"title": page.title, "source": page.source, "format": page.format, "text": page_text(page)}
            for page in plan.pages]


def describe_phase(phase: PhasePlan) -> str:
    """Return a planned phase on one line (the command line's preview)."""
    facts = phase_facts(phase)
    return (f"from {facts['start']} to {facts['end']}; {facts['per_day']}, {facts['total']}; ranked by "
            f"{facts['metric']}; {facts['items']} items; predictions: {facts['predictions']}")


def free_slug(ctx: ServiceContext, title: str) -> str:
    """Return a slug made from a title that no competition has yet ('yes-or-no', 'yes-or-no-2', ...)."""
    base = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:56].strip("-") or "competition"
    candidate, n = base, 1
    while ctx.session.scalar(select(Competition.id).where(Competition.slug == candidate)) is not None:
        n += 1
        candidate = f"{base}-{n}"
    return candidate


def _when(moment: datetime | None, missing: str) -> str:
    """Return a planned date in UTC as the pages write it, or what a missing one means."""
    return missing if moment is None else f"{naive_utc(moment):%Y-%m-%d %H:%M} UTC"


def _read(data: bytes) -> BundlePlan:
    """Return a bundle's plan, or InvalidInput with the reader's message and report."""
    try:
        return read_bundle(data)
    except BundleError as error:
        raise InvalidInput(str(error), {"report": [str(line) for line in error.report]}) from None


def _report(ctx: ServiceContext, plan: BundlePlan, slug: str) -> tuple[str, ...]:
    """Return the reader's report and what this instance adds: a slug not valid or already taken."""
    lines = plan.report_lines()
    length = len(carried_description(plan))
    if length > DESCRIPTION_FORM_MAX:
        lines.append(f"carried: the description with its pages is {length} characters, more than the "
                     f"{DESCRIPTION_FORM_MAX} the competition's form saves: shorten it when you next edit it")
    if not SLUG_RE.match(slug):
        lines.append(f"not carried: the slug {slug!r} is not valid; choose another before importing")
    elif ctx.session.scalar(select(Competition.id).where(Competition.slug == slug)) is not None:
        lines.append(f"not carried: the slug {slug!r} is taken; choose another before importing")
    return tuple(lines)


def _check_phase(phase: PhasePlan) -> None:
    """Raise InvalidInput unless a planned phase's labels, config and dates are ones create_phase accepts."""
    check_labels(phase.labels, phase.config)
    if phase.start is not None and phase.end is not None and phase.end <= phase.start:
        raise InvalidInput(f"Phase {phase.position} {phase.name!r} of the bundle ends before it starts.")
    if not phase.name.strip():
        raise InvalidInput(f"Phase {phase.position} of the bundle has no name.")


def _base(actor: Actor, token: str) -> str:
    """Return where an actor's previewed bundle is kept: under the account, so only it can confirm."""
    who = str(actor.id) if isinstance(actor, User) else "operator"
    return f"bundles/{who}/{token}"


def _forget(ctx: ServiceContext, actor: Actor, token: str) -> None:
    """Delete a confirmed preview's kept files (they are not needed any more)."""
    for name in ("bundle.zip", "meta.json"):
        ctx.storage.delete(f"{_base(actor, token)}/{name}")


def _name(filename: str) -> str:
    """Return a harmless base name for an uploaded bundle, for the report and the audit log."""
    name = re.sub(r"[^\w.\-]", "_", re.split(r"[\\/]", filename or "")[-1]).strip("._")
    return name[:120] or "bundle.zip"

