"""Entries (docs/ENTRIES.md): method names, metadata rules, the max_methods cap and the entry settings of a phase."""

from __future__ import annotations

import io

import pytest
from sqlalchemy import func, select

from leaderboard.accounts import OPERATOR
from leaderboard.entries import quota, rules
from leaderboard.models import QuotaUsage, Submission
from leaderboard.platform import Conflict, InvalidInput
from leaderboard.submissions import accept_submission, acknowledge


def upload(ctx, phase, user, data, *, method=None, metadata=None):
    """Upload data to phase as user under method."""
    return accept_submission(ctx, phase_id=phase.id, user=user, filename="p.csv", stream=io.BytesIO(data),
                             method=method, metadata=metadata)


def entry_key(submission: Submission) -> tuple[str, str]:
    """Return the key the board ranks entries by: (team or user, method)."""
    return (quota.owner_key(user_id=submission.user_id, team_id=submission.team_id), submission.method)


# --- method names ---------------------------------------------------------------------------

@pytest.mark.parametrize(("given", "kept"), [(None, "default"), ("", "default"), ("  ", "default"),
                                             (" few-shot CoT ", "few-shot CoT"), ("x" * 80, "x" * 80)])
def test_a_method_name_is_trimmed_and_defaults_to_default(given, kept):
    assert rules.check_method(given) == kept


@pytest.mark.parametrize("bad", ["x" * 81, "tab\there", "new\nline"])
def test_a_method_name_over_80_characters_or_with_control_characters_is_refused_naming_method(bad):
    with pytest.raises(InvalidInput) as caught:
        rules.check_method(bad)
    assert "method" in caught.value.message and caught.value.details[0]["field"] == "method"


# --- metadata --------------------------------------------------------------------------------

def test_metadata_with_every_key_is_kept_in_the_spec_order():
    given = {"notes": "n", "url": "https://example.org/paper", "prompting": "few-shot", "uses_knowledge_graph": True,
             "uses_retrieval": False, "open_weights": True, "parameters_b": 7.5, "model_id": "meta-llama/Llama-3-8B",
             "model": " Llama-3 "}
    checked = rules.check_metadata(given)
    assert list(checked) == list(rules.METADATA_KEYS)
    assert checked["model"] == "Llama-3" and checked["parameters_b"] == 7.5


@pytest.mark.parametrize("empty", [None, {}, {"model": ""}, {"notes": None}])
def test_empty_metadata_is_none(empty):
    assert rules.check_metadata(empty) is None


def test_an_unknown_metadata_key_is_refused_naming_it():
    with pytest.raises(InvalidInput) as caught:
        rules.check_metadata({"model": "m", "gpu_hours": 3})
    assert "gpu_hours" in caught.value.message
    assert caught.value.details == [{"field": "metadata.gpu_hours", "message": caught.value.details[0]["message"]}]


@pytest.mark.parametrize(("key", "value"), [
    ("parameters_b", -1), ("parameters_b", "7"), ("parameters_b", True), ("parameters_b", float("nan")),
    ("open_weights", "yes"), ("uses_retrieval", 1), ("uses_knowledge_graph", "true"),
    ("prompting", "zero_shot"), ("url", "ftp://example.org"), ("url", "javascript:alert(1)"), ("url", "example.org"),
    ("notes", "n" * 501), ("model", 7), ("model", "m" * 201),
])
def test_a_wrong_metadata_value_is_refused_naming_its_key(key, value):
    with pytest.raises(InvalidInput) as caught:
        rules.check_metadata({key: value})
    assert key in caught.value.message and caught.value.details[0]["field"] == f"metadata.{key}"


def test_metadata_that_is_not_an_object_is_refused():
    for text in ("[1, 2]", '"model"', "{broken"):
        with pytest.raises(InvalidInput) as caught:
            rules.metadata_from_json(text)
        assert "metadata" in caught.value.message


def test_metadata_from_text_fields_is_read_by_each_keys_type():
    fields = {"model": "Mistral 7B", "parameters_b": "7", "open_weights": "yes", "uses_retrieval": "no",
              "uses_knowledge_graph": "", "prompting": "zero-shot", "url": "", "notes": ""}
    assert rules.metadata_from_fields(fields) == {"model": "Mistral 7B", "parameters_b": 7, "open_weights": True,
                                                    "uses_retrieval": False, "prompting": "zero-shot"}


def test_metadata_from_pairs_names_a_bad_pair_and_an_unknown_key():
    assert rules.metadata_from_pairs(["parameters_b=0.5", "open_weights=false"]) == {
        "parameters_b": 0.5, "open_weights": False}
    with pytest.raises(InvalidInput, match="flops"):
        rules.metadata_from_pairs(["flops=3"])
    with pytest.raises(InvalidInput, match="not key=value"):
        rules.metadata_from_pairs(["open_weights"])
    with pytest.raises(InvalidInput, match="parameters_b"):
        rules.metadata_from_pairs(["parameters_b=seven"])


# --- uploads and the cap --------------------------------------------------------------------------

def test_an_upload_stores_its_method_and_metadata(ctx, make_phase, make_user, make_predictions):
    phase, alice = make_phase(), make_user()
    sub = upload(ctx, phase, alice, make_predictions(), method="CoT", metadata={"model": "m", "open_weights": True})
    ctx.session.refresh(sub)
    assert (sub.method, sub.entry_metadata, sub.team_id) == ("CoT", {"model": "m", "open_weights": True}, None)
    assert upload(ctx, phase, alice, make_predictions()).method == "default"


def test_two_methods_of_one_participant_are_two_entries(ctx, make_phase, make_user, make_predictions):
    phase, alice = make_phase(), make_user()
    subs = [upload(ctx, phase, alice, make_predictions(wrong=n), method=m)
            for n, m in enumerate(["zero-shot", "few-shot", "zero-shot"])]
    assert len({entry_key(s) for s in subs}) == 2
    assert rules.entry_methods(ctx, phase_id=phase.id, user_id=alice.id, team_id=None) == ["zero-shot", "few-shot"]


def test_a_new_method_past_max_methods_is_refused_before_anything_is_stored_or_charged(
        ctx, make_phase, make_user, make_predictions):
    phase, alice = make_phase(config={"task_type": "binary", "max_methods": 2}), make_user()
    upload(ctx, phase, alice, make_predictions(), method="a")
    upload(ctx, phase, alice, make_predictions(), method="b")
    before = quota.quota_status(ctx, phase=phase, user=alice).used_today
    with pytest.raises(Conflict) as caught:
        upload(ctx, phase, alice, make_predictions(), method="c")
    assert caught.value.message.startswith("This phase allows at most 2 methods per participant; "
                                           "you already have: a, b.")
    assert quota.quota_status(ctx, phase=phase, user=alice).used_today == before
    assert ctx.session.scalar(select(func.count()).select_from(Submission).where(Submission.user_id == alice.id)) == 2
    assert upload(ctx, phase, alice, make_predictions(wrong=1), method="b").status == "scored"  # old ones still work


def test_a_rejected_file_does_not_use_up_a_method(ctx, make_phase, make_user, make_predictions):
    from leaderboard.platform import SubmissionInvalid

    phase, alice = make_phase(config={"task_type": "binary", "max_methods": 1}), make_user()
    with pytest.raises(SubmissionInvalid):
        upload(ctx, phase, alice, b"id,prediction\nq1,maybe\n", method="broken")
    assert upload(ctx, phase, alice, make_predictions(), method="works").method == "works"


def test_the_cap_counts_again_when_the_quota_is_charged(ctx, runtime, make_phase, make_user, make_predictions):
    # Another upload with a second method was acknowledged between the early check and the charge.

    phase, alice = make_phase(config={"task_type": "binary", "max_methods": 1}), make_user()
    upload(ctx, phase, alice, make_predictions(), method="first")
    late = Submission(phase_id=phase.id, user_id=alice.id, filename="p.csv", file_key="k", file_sha256="0" * 64,
                      file_size=1, status="received", method="second")
    ctx.session.add(late)
    ctx.session.commit()
    with pytest.raises(Conflict, match="at most 1 method per participant"):
        acknowledge.acknowledge_upload(ctx, submission=late, phase=phase, data=make_predictions(), fresh=True)
    ctx.session.expire_all()
    assert ctx.session.get(Submission, late.id) is None
    assert ctx.session.scalar(select(func.sum(QuotaUsage.used)).where(QuotaUsage.day == "total")) == 1


# --- settings --------------------------------------------------------------------------------------

def test_max_methods_and_final_selections_default_to_3_and_none(ctx, make_phase):
    phase = make_phase()
    assert (rules.max_methods(phase), rules.final_selections(phase)) == (3, None)


def test_entry_settings_are_edited_like_the_probing_settings(ctx, make_phase):
    phase = make_phase()
    phase = rules.update_entry_settings(ctx, phase_id=phase.id, actor=OPERATOR, max_methods=2, final_selections=1)
    assert (rules.max_methods(phase), rules.final_selections(phase)) == (2, 1)
    phase = rules.update_entry_settings(ctx, phase_id=phase.id, actor=OPERATOR, final_selections=None)
    assert (rules.max_methods(phase), rules.final_selections(phase)) == (2, None)
    for bad in ({"max_methods": 0}, {"final_selections": 0}, {"max_methods": 1.5}, {"views": []}):
        with pytest.raises(InvalidInput):
            rules.update_entry_settings(ctx, phase_id=phase.id, actor=OPERATOR, **bad)


def test_participants_cannot_edit_entry_settings(ctx, make_phase, make_user):
    from leaderboard.platform import Forbidden

    phase = make_phase()
    with pytest.raises(Forbidden):
        rules.update_entry_settings(ctx, phase_id=phase.id, actor=make_user(), max_methods=9)


def test_a_change_of_entry_settings_is_audited_and_an_unchanged_save_is_not(ctx, make_phase):
    from leaderboard.models import AuditEntry

    phase = make_phase()
    before = ctx.session.scalar(select(func.count()).select_from(AuditEntry))
    rules.update_entry_settings(ctx, phase_id=phase.id, actor=OPERATOR, max_methods=3)
    assert ctx.session.scalar(select(func.count()).select_from(AuditEntry)) == before
    rules.update_entry_settings(ctx, phase_id=phase.id, actor=OPERATOR, final_selections=2)
    summaries = ctx.session.scalars(select(AuditEntry.summary).order_by(AuditEntry.id.desc())).all()
    assert summaries[0] == "entry settings: max_methods 3, final_selections 2"


# --- on the board (the Ranking service ranks entries by this key) ----------------------------------------

def test_two_methods_are_two_rows_and_a_teams_members_one_team(ctx, make_phase, make_user, make_predictions):
    from leaderboard.board import ranking
    from leaderboard.entries import teams

    phase = make_phase()
    alice, bob, carol = make_user(display_name="Alice"), make_user(display_name="Bob"), make_user(display_name="Cy")
    team = teams.create_team(ctx, competition_slug=phase.competition.slug, name="Tail Lab", user=bob)
    teams.join_team(ctx, invite_code=team.invite_code, user=carol)
    upload(ctx, phase, alice, make_predictions(wrong=1), method="zero-shot")
    upload(ctx, phase, alice, make_predictions(wrong=2), method="few-shot")
    upload(ctx, phase, bob, make_predictions(wrong=3), method="rag")
    upload(ctx, phase, carol, make_predictions(wrong=0), method="rag")
    board = ranking.leaderboard(ctx, phase_id=phase.id, viewer=None)
    rows = sorted((row.display_name, row.team, row.method, row.submissions) for row in board.rows
                  if not row.is_baseline)
    assert rows == [("Alice", None, "few-shot", 1), ("Alice", None, "zero-shot", 1), ("Tail Lab", "Tail Lab", "rag", 2)]
