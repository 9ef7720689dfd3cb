"""Who manages a competition: its owner, the operator; nobody else (one without an owner: the operator alone).

The rule lives in the services (access.py), so the web pages, the API and the
CLI cannot disagree about it.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from leaderboard import submissions
from leaderboard.accounts import OPERATOR, access, can_manage
from leaderboard.models import Submission
from leaderboard.organizing import baselines, competitions, phases
from leaderboard.organizing.phase_imports import import_phase
from leaderboard.platform import Forbidden, NotFound, ServiceContext

DEMO = Path(__file__).resolve().parents[2] / "leaderboard" / "demo"


@pytest.fixture
def people(make_user: Callable[..., Any], make_organizer: Callable[..., Any]) -> dict[str, Any]:
    """Return the creator, another organizer and a participant."""
    return {"creator": make_organizer(), "rival": make_organizer(), "alice": make_user()}


@pytest.fixture
def owned(people: dict[str, Any], make_competition: Callable[..., Any], make_phase: Callable[..., Any]) -> Any:
    """Return an open phase with a private split in a competition created by people['creator']."""
    return make_phase(make_competition(created_by=people["creator"]), private=True)


def _use_cases(ctx: ServiceContext, phase: Any, labels: bytes, predictions: bytes) -> dict[str, Callable[[Any], Any]]:
    """Return every organizer use case as a call taking only the actor."""
    slug = phase.competition.slug
    return {
        "create_phase": lambda actor: phases.create_phase(ctx, competition_slug=slug, name="Next", labels=labels,
                                                          actor=actor),
        "update_phase": lambda actor: phases.update_phase(ctx, phase_id=phase.id, max_per_day=1, actor=actor),
        "open_phase": lambda actor: phases.open_phase(ctx, phase_id=phase.id, actor=actor),
        "close_phase": lambda actor: phases.close_phase(ctx, phase_id=phase.id, actor=actor),
        "replace_labels": lambda actor: phases.replace_labels(ctx, phase_id=phase.id, labels=labels, actor=actor),
        "rescore_phase": lambda actor: phases.rescore_phase(ctx, phase_id=phase.id, actor=actor),
        "add_baseline": lambda actor: baselines.add_baseline(ctx, phase_id=phase.id, name="Human", filename="h.csv",
                                                               stream=io.BytesIO(predictions), actor=actor),
        "import_phase": lambda actor: import_phase(ctx, competition_slug=slug, fmt="creak", name="Claims",
                                                   source=(DEMO / "creak_claims.json").read_bytes(), actor=actor),
        "update_competition": lambda actor: competitions.update_competition(ctx, slug=slug, title="New", actor=actor),
        "list_phase_submissions": lambda actor: submissions.list_phase_submissions(ctx, phase_id=phase.id,
                                                                                   actor=actor),
    }


def _took_effect(ctx: ServiceContext, phase: Any, use_case: str, result: Any) -> bool:
    """Return whether a use case run by a manager did what it is for (its result, or the rows it changed)."""
    submissions_of_phase = ctx.session.scalars(select(Submission).where(Submission.phase_id == phase.id)).all()
    done: dict[str, Callable[[], bool]] = {
        "create_phase": lambda: result.competition_id == phase.competition_id and result.position == 2,
        "update_phase": lambda: result.id == phase.id and result.max_per_day == 1,
        "open_phase": lambda: result.id == phase.id and result.state_override == "open",
        "close_phase": lambda: result.id == phase.id and result.state_override == "closed",
        "replace_labels": lambda: result.phase_id == phase.id and ctx.session.get(type(phase), phase.id)
        .label_version == 2,
        "rescore_phase": lambda: result.phase_id == phase.id and ctx.session.get(
            type(result), result.id, populate_existing=True).done == len(submissions_of_phase) > 0,
        "add_baseline": lambda: result.phase_id == phase.id and result.name == "Human",
        "import_phase": lambda: result.phase is not None and result.phase.competition_id == phase.competition_id,
        "update_competition": lambda: result.slug == phase.competition.slug and result.title == "New",
        "list_phase_submissions": lambda: sorted(s.id for s in result) == sorted(s.id for s in submissions_of_phase),
    }
    return done[use_case]()


USE_CASES = ["create_phase", "update_phase", "open_phase", "close_phase", "replace_labels", "rescore_phase",
             "add_baseline", "import_phase", "update_competition", "list_phase_submissions"]


@pytest.mark.parametrize("use_case", USE_CASES)
@pytest.mark.parametrize("who", ["rival", "alice", None])
def test_only_the_competitions_managers_may_run_organizer_use_cases(ctx, people, owned, labels_file, make_predictions,
                                                                    use_case, who):
    run = _use_cases(ctx, owned, labels_file(private=True), make_predictions())[use_case]
    before = (owned.state_override, owned.max_per_day, owned.label_version, owned.competition.title)
    with pytest.raises(Forbidden):
        run(people[who] if who else None)
    ctx.session.rollback()
    ctx.session.refresh(owned)
    assert (owned.state_override, owned.max_per_day, owned.label_version, owned.competition.title) == before
    assert len(owned.competition.phases) == 1


@pytest.mark.parametrize("use_case", USE_CASES)
@pytest.mark.parametrize("who", ["creator", "operator"])
def test_the_creator_and_the_operator_may_run_every_use_case(ctx, people, owned, labels_file, make_predictions,
                                                             use_case, who):
    run = _use_cases(ctx, owned, labels_file(private=True), make_predictions())[use_case]
    result = run(OPERATOR if who == "operator" else people[who])  # no Forbidden
    assert _took_effect(ctx, owned, use_case, result)


def test_a_competition_without_an_owner_is_managed_by_the_operator_alone(ctx, people, make_phase, make_user,
                                                                         make_predictions):
    phase = make_phase()  # made by the operator without an owner: created_by_id is empty
    assert phase.competition.created_by_id is None
    for who in ("creator", "rival", "alice"):
        with pytest.raises(Forbidden):
            phases.close_phase(ctx, phase_id=phase.id, actor=people[who])
    secret = _submit(ctx, phase, make_user(), make_predictions())
    with pytest.raises(NotFound):  # no organizer may read a participant's upload (or export the labels)
        access.get_submission(ctx, submission_id=secret.id, viewer=people["rival"])
    assert phases.close_phase(ctx, phase_id=phase.id, actor=OPERATOR).state_override == "closed"


def test_the_operator_names_the_owner_and_may_hand_it_over(ctx, people):
    made = competitions.create_competition(ctx, slug="given", title="Given", actor=OPERATOR, owner=people["creator"])
    assert can_manage(made, people["creator"]) and not can_manage(made, people["rival"])
    competitions.set_owner(ctx, slug="given", owner=people["rival"], actor=OPERATOR)
    assert can_manage(made, people["rival"]) and not can_manage(made, people["creator"])
    with pytest.raises(Forbidden):  # only the operator hands a competition over
        competitions.set_owner(ctx, slug="given", owner=people["creator"], actor=people["rival"])
    with pytest.raises(Forbidden):  # an organizer creates competitions for themselves only
        competitions.create_competition(ctx, slug="x", title="X", actor=people["creator"], owner=people["rival"])


def test_only_organizers_create_competitions_and_the_creator_is_recorded(ctx, people):
    with pytest.raises(Forbidden):
        competitions.create_competition(ctx, slug="mine", title="Mine", actor=people["alice"])
    created = competitions.create_competition(ctx, slug="mine", title="Mine", actor=people["creator"])
    assert created.created_by_id == people["creator"].id
    assert competitions.create_competition(ctx, slug="ops", title="Ops", actor=OPERATOR).created_by_id is None


def test_the_dashboard_lists_only_the_competitions_an_organizer_manages(ctx, people, make_competition):
    make_competition("theirs", created_by=people["creator"])
    make_competition("operators")
    make_competition("rivals", created_by=people["rival"])
    assert {c.slug for c in competitions.list_competitions(ctx, managed_by=people["creator"])} == {"theirs"}
    assert {c.slug for c in competitions.list_competitions(ctx, managed_by=people["alice"])} == set()
    assert len(competitions.list_competitions(ctx, managed_by=OPERATOR)) == 3
    assert len(competitions.list_competitions(ctx)) == 3


def _submit(ctx: ServiceContext, phase: Any, user: Any, content: bytes) -> Submission:
    return submissions.accept_submission(ctx, phase_id=phase.id, user=user, filename="p.csv", stream=content)


def test_a_submission_is_seen_by_its_owner_and_its_competitions_managers_only(ctx, people, owned,
                                                                              make_predictions):
    submission = _submit(ctx, owned, people["alice"], make_predictions())
    for who in ("alice", "creator"):
        assert access.get_submission(ctx, submission_id=submission.id, viewer=people[who]).id == submission.id
    for viewer in (people["rival"], None):  # None is an anonymous visitor, never the operator
        with pytest.raises(NotFound):
            access.get_submission(ctx, submission_id=submission.id, viewer=viewer)


def test_visible_scores_show_the_private_split_to_managers_only_while_open(ctx, people, owned, make_predictions):
    submission = _submit(ctx, owned, people["alice"], make_predictions())
    ctx.session.refresh(submission)
    manager = submissions.visible_scores(ctx, submission=submission, viewer=people["creator"])
    owner = submissions.visible_scores(ctx, submission=submission, viewer=people["alice"])
    rival = submissions.visible_scores(ctx, submission=submission, viewer=people["rival"])
    assert manager is not None and "private" in manager["splits"]
    assert owner is not None and "splits" not in owner and owner == rival
    assert submissions.scores_scope(ctx, submission=submission, viewer=people["creator"]) == "all"
    assert submissions.scores_scope(ctx, submission=submission, viewer=people["alice"]) == "public"
    phases.close_phase(ctx, phase_id=owned.id, actor=people["creator"])
    assert "private" in submissions.visible_scores(ctx, submission=submission, viewer=people["alice"])["splits"]


def test_can_manage_refuses_a_missing_actor(owned, people):
    assert can_manage(owned.competition, OPERATOR) and can_manage(owned.competition, people["creator"])
    assert not can_manage(owned.competition, None)
    assert not can_manage(owned.competition, people["rival"])
