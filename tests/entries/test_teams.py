"""Teams (docs/ENTRIES.md): create, join by invite code, leave before the first submission; one quota, one entry."""

from __future__ import annotations

import io

import pytest

from leaderboard import submissions
from leaderboard.entries import quota, teams
from leaderboard.platform import Conflict, InvalidInput, NotFound, QuotaExceeded


def upload(ctx, phase, user, data, *, method=None):
    """Upload data to phase as user."""
    return submissions.accept_submission(ctx, phase_id=phase.id, user=user, filename="p.csv",
                                         stream=io.BytesIO(data), method=method)


def test_creating_a_team_makes_the_creator_its_member_and_gives_an_invite_code(ctx, make_competition, make_user):
    comp, alice = make_competition(), make_user(display_name="Alice")
    team = teams.create_team(ctx, competition_slug=comp.slug, name="  Long   Tail Lab ", user=alice)
    assert team.name == "Long Tail Lab" and len(team.invite_code) >= 16
    page = teams.team_page(ctx, team_id=team.id, viewer=alice)
    assert [m.display_name for m in page.members] == ["Alice"] and page.is_member and page.can_leave
    assert page.invite_code == team.invite_code


def test_joining_with_the_code_adds_a_member_and_both_share_one_quota(ctx, make_phase, make_user, make_predictions):
    phase = make_phase(max_per_day=2)
    alice, bob = make_user(), make_user()
    team = teams.create_team(ctx, competition_slug=phase.competition.slug, name="Lab", user=alice)
    assert teams.join_team(ctx, invite_code=team.invite_code, user=bob).id == team.id
    first = upload(ctx, phase, alice, make_predictions())
    second = upload(ctx, phase, bob, make_predictions(wrong=1))
    assert first.team_id == second.team_id == team.id
    with pytest.raises(QuotaExceeded, match="Your team has used all 2"):
        upload(ctx, phase, alice, make_predictions())
    status = quota.quota_status(ctx, phase=phase, user=bob)
    assert (status.used_today, status.shared, status.used_up) == (2, True, True)


def test_teammates_uploads_are_one_entry_per_method(ctx, make_phase, make_user, make_predictions):
    phase = make_phase(config={"task_type": "binary", "max_methods": 1})
    alice, bob = make_user(), make_user()
    team = teams.create_team(ctx, competition_slug=phase.competition.slug, name="Lab", user=alice)
    teams.join_team(ctx, invite_code=team.invite_code, user=bob)
    upload(ctx, phase, alice, make_predictions(), method="rag")
    assert upload(ctx, phase, bob, make_predictions(wrong=2), method="rag").team_id == team.id
    with pytest.raises(Conflict, match="at most 1 method per team; you already have: rag"):
        upload(ctx, phase, bob, make_predictions(), method="other")
    listed = submissions.list_submissions(ctx, phase_id=phase.id, user=bob)
    assert {s.user_id for s in listed} == {alice.id, bob.id}


def test_one_team_per_user_per_competition(ctx, make_competition, make_user):
    comp, alice, bob = make_competition(), make_user(), make_user()
    mine = teams.create_team(ctx, competition_slug=comp.slug, name="Mine", user=alice)
    theirs = teams.create_team(ctx, competition_slug=comp.slug, name="Theirs", user=bob)
    with pytest.raises(Conflict, match="already in the team 'Mine'"):
        teams.join_team(ctx, invite_code=theirs.invite_code, user=alice)
    with pytest.raises(Conflict, match="already in the team"):
        teams.create_team(ctx, competition_slug=comp.slug, name="Third", user=alice)
    assert teams.join_team(ctx, invite_code=mine.invite_code, user=alice).id == mine.id  # joining again: no change
    other = make_competition()
    assert teams.create_team(ctx, competition_slug=other.slug, name="Mine", user=alice).competition_id == other.id


def test_a_team_name_is_unique_in_its_competition_and_2_to_80_characters(ctx, make_competition, make_user):
    comp = make_competition()
    teams.create_team(ctx, competition_slug=comp.slug, name="Lab", user=make_user())
    with pytest.raises(Conflict, match="already has a team named 'Lab'"):
        teams.create_team(ctx, competition_slug=comp.slug, name="Lab", user=make_user())
    for bad in ("", "x", "y" * 81):
        with pytest.raises(InvalidInput):
            teams.create_team(ctx, competition_slug=comp.slug, name=bad, user=make_user())


def test_joining_after_having_submitted_to_the_competition_is_refused(ctx, make_phase, make_user, make_predictions):
    phase = make_phase()
    alice, bob = make_user(), make_user()
    team = teams.create_team(ctx, competition_slug=phase.competition.slug, name="Lab", user=alice)
    upload(ctx, phase, bob, make_predictions())
    with pytest.raises(Conflict, match="already submitted to this competition on your own"):
        teams.join_team(ctx, invite_code=team.invite_code, user=bob)
    with pytest.raises(Conflict, match="already submitted"):
        teams.create_team(ctx, competition_slug=phase.competition.slug, name="Bob's", user=bob)


def test_leaving_is_allowed_before_the_first_submission_and_refused_after(ctx, make_phase, make_user,
                                                                         make_predictions):
    phase = make_phase()
    alice, bob, carol = make_user(), make_user(), make_user()
    team = teams.create_team(ctx, competition_slug=phase.competition.slug, name="Lab", user=alice)
    teams.join_team(ctx, invite_code=team.invite_code, user=bob)
    teams.leave_team(ctx, team_id=team.id, user=bob)
    assert [m.user_id for m in teams.team_page(ctx, team_id=team.id, viewer=alice).team.members] == [alice.id]
    teams.join_team(ctx, invite_code=team.invite_code, user=carol)
    upload(ctx, phase, alice, make_predictions())
    with pytest.raises(Conflict, match="already submitted to this competition"):
        teams.leave_team(ctx, team_id=team.id, user=carol)
    assert not teams.team_page(ctx, team_id=team.id, viewer=carol).can_leave
    with pytest.raises(NotFound):
        teams.leave_team(ctx, team_id=team.id, user=bob)


def test_the_last_member_leaving_deletes_the_team(ctx, make_competition, make_user):
    comp, alice = make_competition(), make_user()
    team = teams.create_team(ctx, competition_slug=comp.slug, name="Lab", user=alice)
    teams.leave_team(ctx, team_id=team.id, user=alice)
    with pytest.raises(NotFound):
        teams.team_page(ctx, team_id=team.id, viewer=alice)
    assert teams.create_team(ctx, competition_slug=comp.slug, name="Lab", user=alice).name == "Lab"


def test_a_wrong_invite_code_is_not_found(ctx, make_user):
    with pytest.raises(NotFound, match="invite code"):
        teams.join_team(ctx, invite_code="nope", user=make_user())


def test_outsiders_see_the_members_but_not_the_code_or_the_entries(ctx, make_phase, make_user, make_organizer,
                                                                  make_competition, make_predictions):
    organizer = make_organizer()
    phase = make_phase(make_competition(created_by=organizer))
    alice, outsider = make_user(display_name="Alice"), make_user()
    team = teams.create_team(ctx, competition_slug=phase.competition.slug, name="Lab", user=alice)
    upload(ctx, phase, alice, make_predictions(), method="rag")
    seen = teams.team_page(ctx, team_id=team.id, viewer=outsider)
    assert [m.display_name for m in seen.members] == ["Alice"]
    assert (seen.invite_code, seen.entries, seen.is_member, seen.can_leave) == (None, None, False, False)
    assert teams.team_page(ctx, team_id=team.id, viewer=make_organizer()).invite_code is None  # not theirs
    managed = teams.team_page(ctx, team_id=team.id, viewer=organizer)
    assert managed.invite_code == team.invite_code
    assert [(e.phase_id, e.method, e.submissions) for e in managed.entries] == [(phase.id, "rag", 1)]
    with pytest.raises(NotFound):
        teams.team_page(ctx, team_id=team.id, viewer=None)


def test_invite_codes_are_letters_and_digits_so_none_reads_as_a_command_line_option() -> None:
    import string

    codes = {teams._new_invite_code() for _ in range(500)}
    assert len(codes) == 500  # random, not repeated
    assert all(len(code) == 16 and set(code) <= set(string.ascii_letters + string.digits) for code in codes)
