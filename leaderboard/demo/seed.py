"""The demo competition: three phases imported from small files in the released formats.

``leaderboard/demo/`` holds hand-written data in each benchmark's own format: CREAK
claims about popular and obscure entities (with a side file adding category, head/tail
popularity and the private split), one TG-CSR-style context of annotator votes, and
CoLoTa-style long-tail questions with their popular originals. Each goes through
``scoring.importers.run_import`` exactly as an organizer's release would, then
becomes a phase: TG-CSR closed (its private leaderboard revealed), CREAK open, CoLoTa
upcoming. A few participants with several scored entries each, the built-in baselines
and one organizer baseline fill the ranking pages.
"""

from __future__ import annotations

import json
import tempfile
import zlib
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import delete, func, select, update

from leaderboard import accounts
from leaderboard.accounts import OPERATOR, get_competition, phase_status
from leaderboard.entries import quota
from leaderboard.models import Competition, Phase, QuotaUsage, Submission, User
from leaderboard.organizing import add_baseline, competitions, phases, run_importer
from leaderboard.platform import NotFound, ServiceContext
from leaderboard.platform.db import utcnow
from leaderboard.submissions import accept_submission

DEMO_DIR = Path(__file__).resolve().parent
SLUG = "longtail-demo"
PASSWORD = "demo-password"
ORGANIZER_EMAIL = "organizer@demo.example.org"
ENTRIES = 3


@dataclass(frozen=True)
class Profile:
    """A demo participant: how often it is right on head and tail items, abstains, gives confidence."""

    name: str
    head: float
    tail: float
    abstain: float = 0.0
    confidence: bool = False

    @property
    def email(self) -> str:
        """Return the demo account's email."""
        return f"{self.name.lower().replace(' ', '-')}@demo.example.org"


PROFILES = (
    Profile("Atlas-7B", head=0.93, tail=0.58, confidence=True),
    Profile("RetrievalRAG", head=0.88, tail=0.81, abstain=0.05),
    Profile("TailWhisperer", head=0.79, tail=0.77, abstain=0.15, confidence=True),
    Profile("BaselineBert", head=0.71, tail=0.56),
)
PARTICIPANT_EMAILS = tuple(p.email for p in PROFILES)


def install_demo(ctx: ServiceContext) -> tuple[Competition, bool]:
    """Create the demo competition unless it exists; return it and whether it was created now."""
    existing = ctx.session.scalar(select(Competition).where(Competition.slug == SLUG))
    if existing is not None:
        return existing, False
    organizer = _account(ctx, ORGANIZER_EMAIL, "Demo organizer", organizer=True)
    users = [_account(ctx, p.email, p.name) for p in PROFILES]
    competitions.create_competition(
        ctx, slug=SLUG, title="Long-tail reasoning (demo)", actor=organizer,
        description=("Do systems know as much about obscure entities as about famous ones? Three phases "
                     "in the formats of TG-CSR, CREAK and CoLoTa, with per-category and head/tail results."))
    now = utcnow()
    with tempfile.TemporaryDirectory() as tmp:
        camping = _camping_phase(ctx, Path(tmp), start=now - timedelta(days=21))
        claims = _claims_phase(ctx, Path(tmp), start=now - timedelta(days=7), end=now + timedelta(days=30))
        _questions_phase(ctx, Path(tmp), start=now + timedelta(days=14), end=now + timedelta(days=60))
    for phase in (camping, claims):
        _enter_participants(ctx, phase, users)
    add_baseline(ctx, phase_id=claims.id, name="Human (annotators)", filename="human.csv",
                 stream=_human_predictions(ctx, claims), actor=organizer)
    phases.close_phase(ctx, phase_id=camping.id, actor=OPERATOR)
    ctx.session.expire_all()
    return get_competition(ctx, SLUG), True


def _account(ctx: ServiceContext, email: str, name: str, *, organizer: bool = False) -> User:
    """Return the demo account with this email, creating it when missing."""
    try:
        return accounts.get_user_by_email(ctx, email)
    except NotFound:
        return accounts.register_user(ctx, email=email, password=PASSWORD, display_name=name, is_organizer=organizer,
                                      confirmed=True)


def _import(fmt: str, source: str, outdir: Path, **options: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]],
                                                                          dict[str, Any]]:
    """Run a scoring importer on a demo file; return its label records, question records and config."""
    _, files = run_importer(fmt, DEMO_DIR / source, outdir / fmt, **options)
    # The demo's phases have 40-odd items: the default min_slice_items (25) would hide every breakdown row.
    config = {**(files.config or {}), "min_slice_items": 5}
    return _records(files.labels), _records(files.questions or b""), config


def _camping_phase(ctx: ServiceContext, tmp: Path, *, start: Any) -> Phase:
    """Create the TG-CSR-style phase; the last four questions are private."""
    labels, questions, config = _import("tgcsr", "tgcsr_camping.jsonl", tmp)
    for record in labels:
        record["split"] = "private" if int(record["group"].removeprefix("CV")) >= 6 else "public"
    config["breakdowns"] = ["category", "agreement"]
    return phases.create_phase(
        ctx, actor=OPERATOR, competition_slug=SLUG, name="Camping (TG-CSR format)", labels=_jsonl(labels),
        questions=_jsonl(questions), config=config, start_at=start, max_per_day=5,
        description="Is this candidate a sensible answer to the camping question? Votes of six annotators, "
                    "majority label; all candidates of a question right counts for group accuracy.")


def _claims_phase(ctx: ServiceContext, tmp: Path, *, start: Any, end: Any) -> Phase:
    """Create the CREAK-style phase with hand-added category, popularity and private split."""
    labels, questions, config = _import("creak", "creak_claims.json", tmp)
    extra = json.loads((DEMO_DIR / "creak_metadata.json").read_text(encoding="utf-8"))
    for record in labels:
        record.update(extra[record["id"]])
    for record in questions:
        record.update({k: v for k, v in extra[record["id"]].items() if k != "split"})
    config["breakdowns"] = ["category"]
    return phases.create_phase(
        ctx, actor=OPERATOR, competition_slug=SLUG, name="Entity claims (CREAK format)", labels=_jsonl(labels),
        questions=_jsonl(questions), config=config, start_at=start, end_at=end, max_per_day=5, max_total=50,
        description="True or false? Forty claims about famous and obscure entities; a third of them "
                    "count only on the private leaderboard, revealed when the phase closes.")


def _questions_phase(ctx: ServiceContext, tmp: Path, *, start: Any, end: Any) -> Phase:
    """Create the upcoming CoLoTa-style phase: long-tail questions plus their popular originals."""
    labels, questions, config = _import("colota", "colota_qa.json", tmp,
                                        originals=DEMO_DIR / "colota_qa_originals.csv")
    return phases.create_phase(
        ctx, actor=OPERATOR, competition_slug=SLUG, name="Long-tail questions (CoLoTa format)", labels=_jsonl(labels),
        questions=_jsonl(questions), config=config, start_at=start, end_at=end, max_per_day=3,
        description="Yes/no questions that need facts about obscure entities, beside popular originals.")


def _enter_participants(ctx: ServiceContext, phase: Phase, users: list[User]) -> None:
    """Upload ENTRIES prediction files per demo participant, spread over the hours after the phase opened."""
    if phase_status(phase) != "open":
        phases.open_phase(ctx, phase_id=phase.id, actor=OPERATOR)
    labels = _records_of(ctx, phase)
    opened = phase.start_at or utcnow()
    for index, (profile, user) in enumerate(zip(PROFILES, users, strict=True)):
        for entry in range(ENTRIES):
            content = _predictions(profile, labels, seed=f"{profile.name}/{phase.id}/{entry}",
                                   bonus=0.04 * entry - 0.06)
            submission = accept_submission(ctx, phase_id=phase.id, user=user, filename=f"run{entry + 1}.csv",
                                           stream=content, description=f"run {entry + 1}")
            when = opened + timedelta(hours=5 * entry + index + 1)
            ctx.session.execute(update(Submission).where(Submission.id == submission.id)
                                .values(created_at=when, quota_day=quota.utc_day(when)))
            ctx.session.commit()
    _count_quota_on_their_days(ctx, phase)


def _count_quota_on_their_days(ctx: ServiceContext, phase: Phase) -> None:
    """Recount the phase's daily quota rows from its submissions' (back-dated) days, so today shows none used."""
    owner_day = (Submission.user_id, Submission.team_id, Submission.quota_day)
    counts = ctx.session.execute(
        select(*owner_day, func.count()).where(Submission.phase_id == phase.id, Submission.quota_day.is_not(None))
        .group_by(*owner_day)).all()
    ctx.session.execute(delete(QuotaUsage).where(QuotaUsage.phase_id == phase.id, QuotaUsage.day != quota.TOTAL))
    ctx.session.add_all(QuotaUsage(phase_id=phase.id, owner=quota.owner_key(user_id=user_id, team_id=team_id),
                                   day=day, used=used) for user_id, team_id, day, used in counts)
    ctx.session.commit()


def _predictions(profile: Profile, labels: list[dict[str, Any]], *, seed: str, bonus: float) -> bytes:
    """Return a CSV of a participant's answers: right with its head/tail skill, some abstentions."""
    rng = np.random.default_rng(zlib.crc32(seed.encode()))
    header = "id,prediction,confidence" if profile.confidence else "id,prediction"
    lines = [header]
    for record in labels:
        skill = {"head": profile.head, "tail": profile.tail}.get(str(record.get("popularity")),
                                                                 (profile.head + profile.tail) / 2)
        right = rng.random() < min(0.99, skill + bonus)
        answer = "" if rng.random() < profile.abstain else str(bool(record["label"]) == right).lower()
        confidence = rng.uniform(0.6, 0.97) if right else rng.uniform(0.45, 0.85)
        extra = ("," + (f"{confidence:.2f}" if answer else "")) if profile.confidence else ""
        lines.append(f"{record['id']},{answer}{extra}")
    return ("\n".join(lines) + "\n").encode("utf-8")


def _human_predictions(ctx: ServiceContext, phase: Phase) -> bytes:
    """Return the organizer's 'Human' baseline: right on all but two items."""
    labels = _records_of(ctx, phase)
    wrong = {labels[5]["id"], labels[27]["id"]}
    lines = ["id,prediction"] + [f"{r['id']},{str(bool(r['label']) != (r['id'] in wrong)).lower()}" for r in labels]
    return ("\n".join(lines) + "\n").encode("utf-8")


def _records_of(ctx: ServiceContext, phase: Phase) -> list[dict[str, Any]]:
    """Return the label records of a demo phase (read back from the hidden-label storage)."""
    return _records(ctx.labels.read_bytes(phase.labels_key))


def _records(data: bytes) -> list[dict[str, Any]]:
    """Return the records of JSON Lines bytes."""
    return [json.loads(line) for line in data.decode("utf-8").splitlines() if line.strip()]


def _jsonl(records: list[dict[str, Any]]) -> bytes:
    """Return records as JSON Lines bytes."""
    return ("\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n").encode("utf-8")
