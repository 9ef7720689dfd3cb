"""The organizer command line: each command prints its result's id or token last; errors exit non-zero."""

from __future__ import annotations

import json

import pytest
from shared_data import released
from sqlalchemy import func, select

from leaderboard import accounts
from leaderboard.accounts import access
from leaderboard.demo import ORGANIZER_EMAIL, PASSWORD, SLUG
from leaderboard.models import ApiToken, Competition, Phase, Submission, User


def run(runner, *args: str):
    """Invoke a CLI command and return (exit code, output lines)."""
    result = runner.invoke(args=list(args))
    return result.exit_code, result.output.strip().splitlines()


def last(runner, *args: str) -> str:
    """Invoke a command that must succeed and return its last line."""
    code, lines = run(runner, *args)
    assert code == 0, lines
    return lines[-1]


def as_json(runner, *args: str) -> dict:
    """Invoke a command with --json that must succeed and return its one JSON object."""
    code, lines = run(runner, *args, "--json")
    assert code == 0 and len(lines) == 1, lines
    return json.loads(lines[0])


def test_users_create_prints_the_id_and_can_make_organizers(runner, ctx):
    user_id = int(last(runner, "users", "create", "Ada@Example.org", "--password", "long enough",
                       "--organizer", "--name", "Ada"))
    user = ctx.session.get(User, user_id)
    assert (user.email, user.display_name, user.is_organizer) == ("ada@example.org", "Ada", True)
    assert accounts.authenticate(ctx, email="ada@example.org", password="long enough").id == user_id


@pytest.mark.parametrize("args", [
    ("users", "create", "not-an-email", "--password", "long enough"),
    ("users", "create", "a@example.org", "--password", "short"),
    ("users", "create", "a@example.org"),
])
def test_users_create_errors_exit_non_zero(runner, args):
    code, lines = run(runner, *args)
    assert code != 0 and lines


def test_duplicate_user_is_a_clear_error(runner):
    last(runner, "users", "create", "a@example.org", "--password", "long enough")
    code, lines = run(runner, "users", "create", "a@example.org", "--password", "long enough")
    assert code == 1 and "already exists" in lines[-1]


def test_tokens_create_prints_a_token_that_authenticates(runner, ctx):
    last(runner, "users", "create", "a@example.org", "--password", "long enough")
    token = last(runner, "tokens", "create", "a@example.org")
    assert token.startswith("tb_")
    assert accounts.user_for_token(ctx, token).email == "a@example.org"
    assert ctx.session.scalar(select(ApiToken.token_hash)) != token
    code, lines = run(runner, "tokens", "create", "nobody@example.org")
    assert code == 1 and "nobody@example.org" in lines[-1]


def test_competitions_create_prints_the_id(runner, ctx):
    competition_id = int(last(runner, "competitions", "create", "creak", "--title", "CREAK", "--description", "d",
                              "--operator-only"))
    assert ctx.session.get(Competition, competition_id).slug == "creak"
    assert run(runner, "competitions", "create", "creak", "--title", "Again", "--operator-only")[0] == 1
    assert run(runner, "competitions", "create", "Bad Slug", "--title", "x", "--operator-only")[0] == 1


def test_competitions_create_refuses_to_guess_who_manages_it(runner, ctx):
    code, lines = run(runner, "competitions", "create", "creak", "--title", "CREAK")
    assert code == 2 and "--owner EMAIL" in "\n".join(lines) and "--operator-only" in "\n".join(lines)
    last(runner, "users", "create", "org@example.org", "--password", "long enough", "--organizer")
    code, lines = run(runner, "competitions", "create", "creak", "--title", "CREAK", "--owner", "org@example.org",
                      "--operator-only")
    assert code == 2 and "not both" in "\n".join(lines)
    assert ctx.session.scalar(select(func.count()).select_from(Competition)) == 0


def test_competitions_create_with_an_owner_lets_that_organizer_alone_manage_it(runner, ctx):
    owner_id = int(last(runner, "users", "create", "org@example.org", "--password", "long enough", "--organizer"))
    other_id = int(last(runner, "users", "create", "other@example.org", "--password", "long enough", "--organizer"))
    competition_id = int(last(runner, "competitions", "create", "creak", "--title", "CREAK",
                              "--owner", "Org@Example.org"))
    competition = ctx.session.get(Competition, competition_id)
    assert competition.created_by_id == owner_id
    assert access.can_manage(competition, ctx.session.get(User, owner_id))
    assert not access.can_manage(competition, ctx.session.get(User, other_id))


def test_competitions_create_refuses_an_owner_who_is_not_an_organizer(runner, ctx):
    last(runner, "users", "create", "ada@example.org", "--password", "long enough")
    code, lines = run(runner, "competitions", "create", "creak", "--title", "CREAK", "--owner", "ada@example.org")
    assert code == 1 and "not an organizer" in lines[-1]
    code, lines = run(runner, "competitions", "create", "creak", "--title", "CREAK", "--owner", "nobody@example.org")
    assert code == 1 and "nobody@example.org" in lines[-1]
    assert ctx.session.scalar(select(func.count()).select_from(Competition)) == 0


def test_an_operator_only_competition_is_managed_by_no_organizer_until_it_gets_an_owner(runner, ctx):
    org_id = int(last(runner, "users", "create", "org@example.org", "--password", "long enough", "--organizer"))
    competition_id = int(last(runner, "competitions", "create", "creak", "--title", "CREAK", "--operator-only"))
    competition, organizer = ctx.session.get(Competition, competition_id), ctx.session.get(User, org_id)
    assert competition.created_by_id is None
    assert not access.can_manage(competition, organizer) and access.can_manage(competition, access.OPERATOR)
    code, lines = run(runner, "competitions", "set-owner", "creak", "org@example.org")
    assert code == 0 and len(lines) == 1 and "is now" in lines[0] and "org@example.org" in lines[0]
    ctx.session.expire_all()
    assert access.can_manage(ctx.session.get(Competition, competition_id), organizer)
    assert run(runner, "competitions", "set-owner", "nope", "org@example.org")[0] == 1


def test_competitions_set_switches_participation_approval(runner, ctx):
    competition_id = int(last(runner, "competitions", "create", "creak", "--title", "CREAK", "--operator-only"))
    assert as_json(runner, "competitions", "set", "creak", "--requires-approval") == {
        "competition_id": competition_id, "requires_approval": True}
    ctx.session.expire_all()
    assert ctx.session.get(Competition, competition_id).requires_approval is True
    last(runner, "competitions", "set", "creak", "--no-requires-approval")
    ctx.session.expire_all()
    assert ctx.session.get(Competition, competition_id).requires_approval is False
    assert run(runner, "competitions", "set", "creak")[0] == 2


def test_phases_create_open_close_and_rescore(runner, ctx, tmp_path, labels_file, make_predictions):
    labels, config = tmp_path / "labels.jsonl", tmp_path / "phase.json"
    labels.write_bytes(labels_file(private=True))
    config.write_text(json.dumps({"task_type": "binary", "breakdowns": ["category"]}))
    last(runner, "competitions", "create", "tiny", "--title", "Tiny", "--operator-only")
    phase_id = int(last(runner, "phases", "create", "tiny", "--name", "Dev", "--labels", str(labels),
                        "--config", str(config), "--start", "2025-01-01T00:00:00Z", "--end", "2999-01-01",
                        "--max-per-day", "3", "--max-total", "10"))
    phase = ctx.session.get(Phase, phase_id)
    assert (phase.max_per_day, phase.max_total, phase.has_private_split) == (3, 10, True)
    assert access.phase_status(phase) == "open"
    assert run(runner, "phases", "close", str(phase_id)) == (0, [f"Phase {phase_id} 'Dev' is closed."])
    ctx.session.expire_all()
    assert access.phase_status(ctx.session.get(Phase, phase_id)) == "closed"
    code, lines = run(runner, "phases", "open", str(phase_id))  # its private split was shown: confirm first
    assert code == 1 and "Confirm" in lines[-1]
    assert as_json(runner, "phases", "open", str(phase_id), "--confirm-reopen") == {"phase_id": phase_id,
                                                                                     "status": "open"}
    code, lines = run(runner, "rescore", str(phase_id))
    assert code == 0 and "3 submission(s)" in lines[0]
    assert lines[-1] == f"Re-scored 3 submission(s) of phase {phase_id}."


def test_phases_create_reports_bad_labels_and_unknown_competitions(runner, tmp_path):
    bad = tmp_path / "labels.jsonl"
    bad.write_text('{"id": "a", "label": true}\n{"id": "a", "label": false}\n')
    last(runner, "competitions", "create", "tiny", "--title", "Tiny", "--operator-only")
    code, lines = run(runner, "phases", "create", "tiny", "--name", "x", "--labels", str(bad))
    assert code == 1 and "line 2" in lines[-1]
    code, lines = run(runner, "phases", "create", "nope", "--name", "x", "--labels", str(bad))
    assert code == 1 and "nope" in lines[-1]
    code, _ = run(runner, "phases", "create", "tiny", "--name", "x", "--labels", str(bad), "--start", "soon")
    assert code == 2
    assert run(runner, "phases", "create", "tiny", "--name", "x")[0] == 2
    assert run(runner, "phases", "open", "999")[0] == 1


def test_phases_create_from_an_importers_outdir(runner, ctx, tmp_path):
    from scoring.importers import run_import

    outdir = tmp_path / "out"
    run_import("tgcsr", released("tg-csr", "jsonl", "camping-tf.jsonl"), outdir)
    last(runner, "competitions", "create", "tg-csr", "--title", "TG-CSR", "--operator-only")
    phase_id = int(last(runner, "phases", "create", "tg-csr", "--name", "Camping", "--from-import", str(outdir)))
    phase = ctx.session.get(Phase, phase_id)
    assert phase.n_items == 340 and phase.task_config["breakdowns"] == ["category"]
    assert ctx.storage.read_bytes(phase.questions_key) == (outdir / "questions.jsonl").read_bytes()
    code, lines = run(runner, "phases", "create", "tg-csr", "--name", "x", "--from-import", str(tmp_path))
    assert code == 1 and "labels.jsonl" in lines[-1]


def test_requeue_dispatches_unfinished_submissions(runner, ctx, make_phase, make_user, make_predictions):
    from leaderboard.submissions import store_file

    phase, user = make_phase(), make_user()
    stored = store_file(ctx, phase_id=phase.id, data=make_predictions())
    row = Submission(phase_id=phase.id, user_id=user.id, filename="p.csv", file_key=stored.key,
                     file_sha256=stored.sha256, file_size=stored.size, status="queued")
    ctx.session.add(row)
    ctx.session.commit()
    assert as_json(runner, "requeue") == {"dispatched": [row.id]}
    ctx.session.expire_all()
    assert ctx.session.get(Submission, row.id).status == "scored"
    assert run(runner, "requeue") == (0, ["Dispatched 0 unfinished submission(s)."])


@pytest.mark.slow
def test_demo_installs_once_and_twice_is_harmless(runner, ctx):
    code, lines = run(runner, "demo")
    assert code == 0 and len(lines) == 1 and lines[0].startswith("Created demo competition")  # no stray id line
    competition_id = as_json(runner, "demo")["competition_id"]
    code, lines = run(runner, "demo")
    assert code == 0 and lines == [f"demo already present: competition '{SLUG}'."]
    competition = ctx.session.get(Competition, competition_id)
    assert competition.slug == SLUG
    statuses = [access.phase_status(p) for p in competition.phases]
    assert statuses == ["closed", "open", "upcoming"]
    assert [p.has_private_split for p in competition.phases] == [True, True, False]
    scored = ctx.session.scalar(select(func.count()).select_from(Submission).where(
        Submission.status == "scored", Submission.is_baseline.is_(False)))
    assert scored == 2 * 4 * 3
    assert ctx.session.scalar(select(func.count()).select_from(Submission).where(
        Submission.status != "scored")) == 0
    assert accounts.authenticate(ctx, email=ORGANIZER_EMAIL, password=PASSWORD).is_organizer
