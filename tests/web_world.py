"""A small but complete instance for the web tests: two organizers' competitions, phases in
every state, participants with scored and rejected submissions, an uploaded baseline.

Every label record carries a secret ``explanation`` (a field that gives the answer away,
docs/FORMATS.md#hidden-label-file), so a test can look for label data in any response by a marker that only the
hidden label file contains.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from leaderboard import accounts, submissions
from leaderboard.accounts import OPERATOR
from leaderboard.models import Competition, Phase, User
from leaderboard.organizing import baselines, competitions, phases
from leaderboard.platform import ServiceContext, SubmissionInvalid
from leaderboard.platform.db import utcnow

SECRET = "zq-hidden-explanation-7c1e"
PASSWORD = "correct horse battery"

ITEMS: list[dict[str, Any]] = [
    {"id": f"c{n:02d}", "label": label, "category": category, "popularity": pop, "split": split}
    for n, (label, category, pop, split) in enumerate(
        [
            ("true", "geography", "head", "public"), ("false", "geography", "tail", "public"),
            ("true", "biology", "head", "public"), ("false", "biology", "tail", "public"),
            ("true", "geography", "tail", "public"), ("true", "biology", "head", "public"),
            ("false", "geography", "head", "private"), ("true", "biology", "tail", "private"),
            ("false", "biology", "head", "private"), ("true", "geography", "tail", "private"),
        ],
        start=1,
    )
]


def label_bytes(*, private: bool = True) -> bytes:
    """Return the world's label file; each record has a secret explanation, and a split when private."""
    lines = []
    for item in ITEMS:
        record = dict(item, explanation=f"{SECRET}: {item['id']} is {item['label']}")
        if not private:
            record.pop("split")
        lines.append(json.dumps(record))
    return ("\n".join(lines) + "\n").encode()


def predictions(*, wrong: tuple[str, ...] = (), abstain: tuple[str, ...] = ()) -> bytes:
    """Return a CSV answering every item right, except the ids in wrong (flipped) or abstain (empty)."""
    rows = ["id,prediction"]
    for item in ITEMS:
        truth = item["label"] == "true"
        answer = "" if item["id"] in abstain else str(truth != (item["id"] in wrong)).lower()
        rows.append(f"{item['id']},{answer}")
    return ("\n".join(rows) + "\n").encode()


BAD_PREDICTIONS = b"id,prediction\nc01,maybe\nc02,true\nc02,false\nnope,true\n"


@dataclass
class World:
    """Everything a web test needs to name: users, competitions, phases, submissions, label files."""

    org_a: User
    org_b: User
    alice: User
    bob: User
    comp_a: Competition
    comp_b: Competition
    open_phase: Phase
    closed_phase: Phase
    upcoming_phase: Phase
    beta_phase: Phase
    submission_ids: dict[str, int] = field(default_factory=dict)
    label_files: list[bytes] = field(default_factory=list)

    @property
    def phases(self) -> list[Phase]:
        """Return every phase of the world."""
        return [self.open_phase, self.closed_phase, self.upcoming_phase, self.beta_phase]

    @property
    def users(self) -> list[User]:
        """Return every account of the world."""
        return [self.org_a, self.org_b, self.alice, self.bob]


def _submit(ctx: ServiceContext, phase: Phase, user: User, data: bytes, description: str = "") -> int:
    """Upload data as user and return the submission id (also for a rejected file)."""
    try:
        sub = submissions.accept_submission(ctx, phase_id=phase.id, user=user, filename="predictions.csv",
                                            stream=io.BytesIO(data), description=description)
    except SubmissionInvalid as error:
        assert error.submission_id is not None
        return error.submission_id
    return sub.id


def build_world(ctx: ServiceContext) -> World:
    """Create the world through the services, as the web would."""
    make = accounts.register_user
    org_a = make(ctx, email="alpha-org@example.com", password=PASSWORD, display_name="Alpha Org", is_organizer=True)
    org_b = make(ctx, email="beta-org@example.com", password=PASSWORD, display_name="Beta Org", is_organizer=True)
    alice = make(ctx, email="alice@example.com", password=PASSWORD, display_name="Alice Lab")
    bob = make(ctx, email="bob@example.com", password=PASSWORD, display_name="Bob Q")
    comp_a = competitions.create_competition(ctx, slug="alpha", title="Alpha benchmark",
                                             description="Claims about entities.", actor=org_a)
    comp_b = competitions.create_competition(ctx, slug="beta", title="Beta benchmark", actor=org_b)
    # min_slice_items 2: the slices of this tiny world are shown.
    config = {"task_type": "binary", "breakdowns": ["category"], "min_slice_items": 2}
    labels = label_bytes()

    def phase(slug: str, name: str, **fields: Any) -> Phase:
        return phases.create_phase(ctx, actor=OPERATOR, competition_slug=slug, name=name, labels=labels,
                                   config=config, **fields)

    open_phase = phases.open_phase(ctx, actor=OPERATOR,
                                   phase_id=phase("alpha", "Open phase", max_per_day=5, max_total=20).id)
    closed_phase = phases.open_phase(ctx, actor=OPERATOR, phase_id=phase("alpha", "Closed phase").id)
    upcoming_phase = phase("alpha", "Upcoming phase", start_at=utcnow() + timedelta(days=3),
                           end_at=utcnow() + timedelta(days=30))
    beta_phase = phases.open_phase(ctx, actor=OPERATOR, phase_id=phase("beta", "Beta phase").id)
    world = World(org_a, org_b, alice, bob, comp_a, comp_b, open_phase, closed_phase, upcoming_phase, beta_phase,
                  label_files=[labels])
    ids = world.submission_ids
    ids["alice_good"] = _submit(ctx, open_phase, alice, predictions(wrong=("c02",)), "alice run 1")
    ids["alice_bad"] = _submit(ctx, open_phase, alice, BAD_PREDICTIONS, "alice broken run")
    ids["bob_good"] = _submit(ctx, open_phase, bob, predictions(wrong=("c01", "c04"), abstain=("c05",)))
    ids["alice_closed"] = _submit(ctx, closed_phase, alice, predictions(wrong=("c07",)))
    ids["bob_beta"] = _submit(ctx, beta_phase, bob, predictions())
    human = baselines.add_baseline(ctx, phase_id=open_phase.id, name="Human", filename="human.csv",
                                     stream=io.BytesIO(predictions()), actor=org_a)
    ids["human_baseline"] = human.submission_id
    phases.close_phase(ctx, actor=OPERATOR, phase_id=closed_phase.id)
    for phase_row in world.phases:
        ctx.session.refresh(phase_row)
    return world
