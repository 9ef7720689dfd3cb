"""The `tailboard` client's entries (docs/ENTRIES.md) end to end against a live server: --method and --meta on submit,
teams, final selection and baselines."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from api_helpers import create_phase, predictions

from leaderboard.accounts import OPERATOR
from leaderboard.entries import rules
from tailboard_cli import main as cli
from tailboard_cli.entries import UsageProblem, parse_meta


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """Return an environment whose client config lives in a fresh directory."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("TAILBOARD_")}
    return {**clean, "TAILBOARD_CONFIG_DIR": str(tmp_path / "config"), "PYTHONUNBUFFERED": "1"}


def tailboard(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """Run the client as a separate process, as a user would."""
    return subprocess.run([sys.executable, "-m", "tailboard_cli", *args], env=env, capture_output=True, text=True,
                          timeout=300, cwd=Path(__file__).resolve().parents[2])


def as_user(base_env: dict[str, str], tmp_path: Path, url: str, token: str, name: str) -> dict[str, str]:
    """Return an environment where the client is logged in with token (its own config directory)."""
    env = {**base_env, "TAILBOARD_CONFIG_DIR": str(tmp_path / f"config-{name}")}
    assert tailboard(env, "login", url, "--token", token).returncode == 0
    return env


@pytest.fixture
def world(app, client, users, live_server, env, tmp_path):
    """Return (server url, phase id, alice's env, bob's env, organizer's env) with an open phase."""
    phase_id = create_phase(client, users["organizer"], max_per_day=5)
    url = live_server.url
    return (url, phase_id, as_user(env, tmp_path, url, users["alice"].token, "alice"),
            as_user(env, tmp_path, url, users["bob"].token, "bob"),
            as_user(env, tmp_path, url, users["organizer"].token, "org"))


def set_entry_settings(app, phase_id: int, **changes: int) -> None:
    """Change a phase's entry settings as the operator."""
    runtime = app.extensions["tailboard"]
    with runtime.sessions() as session:
        rules.update_entry_settings(runtime.context(session), phase_id=phase_id, actor=OPERATOR, **changes)


def preds(tmp_path: Path, wrong: int = 0) -> str:
    """Write a valid prediction file and return its path."""
    path = tmp_path / f"p{wrong}.csv"
    path.write_bytes(predictions(wrong=wrong))
    return str(path)


def test_meta_values_are_typed_numbers_and_booleans_else_text():
    assert parse_meta(["parameters_b=7.5", "open_weights=true", "uses_retrieval=false", "model=Llama 3",
                       'notes="42"', "prompting=few-shot", "url=https://x.org/a=b"]) == {
        "parameters_b": 7.5, "open_weights": True, "uses_retrieval": False, "model": "Llama 3", "notes": "42",
        "prompting": "few-shot", "url": "https://x.org/a=b"}
    with pytest.raises(UsageProblem):
        parse_meta(["open_weights"])


def test_submit_with_method_and_meta_stores_them(world, tmp_path):
    _, phase_id, alice, _, _ = world
    result = tailboard(alice, "submit", str(phase_id), preds(tmp_path), "--method", "CoT + KG", "--meta",
                       "model=Llama-3-8B", "--meta", "parameters_b=8", "--meta", "uses_knowledge_graph=true",
                       "--wait", "--quiet", "--json")
    assert result.returncode == 0, result.stderr
    shown = json.loads(result.stdout[result.stdout.index("{"):])
    assert shown["method"] == "CoT + KG"
    assert shown["metadata"] == {"model": "Llama-3-8B", "parameters_b": 8, "uses_knowledge_graph": True}
    status = tailboard(alice, "status", str(shown["id"]))
    assert "entry: method 'CoT + KG' (model=Llama-3-8B, parameters_b=8, uses_knowledge_graph=True)" in status.stdout


def test_an_unknown_meta_key_exits_4_naming_it(world, tmp_path):
    _, phase_id, alice, _, _ = world
    result = tailboard(alice, "submit", str(phase_id), preds(tmp_path), "--meta", "gpu_hours=3", "--quiet")
    assert result.returncode == cli.EXIT_INVALID
    assert "gpu_hours" in result.stderr and "HTTP 400" in result.stderr
    bad = tailboard(alice, "submit", str(phase_id), preds(tmp_path), "--meta", "model", "--quiet")
    assert bad.returncode == cli.EXIT_USAGE and "not key=value" in bad.stderr


def test_a_third_method_past_max_methods_2_exits_9_with_the_message(world, tmp_path, app):
    _, phase_id, alice, _, _ = world
    set_entry_settings(app, phase_id, max_methods=2)
    for method in ("a", "b"):
        assert tailboard(alice, "submit", str(phase_id), preds(tmp_path), "--method", method,
                         "--quiet").returncode == 0
    result = tailboard(alice, "submit", str(phase_id), preds(tmp_path), "--method", "c", "--quiet")
    assert result.returncode == cli.EXIT_CONFLICT
    assert "This phase allows at most 2 methods per participant; you already have: a, b." in result.stderr


def test_teams_from_the_client_share_the_quota_and_select_for_each_other(world, tmp_path, app, users):
    url, phase_id, alice, bob, _ = world
    created = tailboard(alice, "team", "create", "demo", "Tail Lab", "--json")
    assert created.returncode == 0, created.stderr
    team = json.loads(created.stdout)
    joined = tailboard(bob, "team", "join", team["invite_code"])
    assert joined.returncode == 0 and "Alice, Bob" in joined.stdout
    submitted = tailboard(bob, "submit", str(phase_id), preds(tmp_path), "--method", "rag", "--quiet")
    assert submitted.returncode == 0, submitted.stderr
    submission_id = submitted.stdout.split()[1]
    shown = tailboard(alice, "team", "show", str(team["id"]))
    assert "phase" in shown.stdout and "'rag': 1 submission(s)" in shown.stdout
    left = tailboard(bob, "team", "leave", str(team["id"]))
    assert left.returncode == cli.EXIT_CONFLICT and "already submitted" in left.stderr
    refused = tailboard(alice, "select", submission_id)
    assert refused.returncode == cli.EXIT_CONFLICT and "no final selection" in refused.stderr


def test_select_and_unselect_with_final_selections_1(world, tmp_path, app):
    _, phase_id, alice, _, _ = world
    set_entry_settings(app, phase_id, final_selections=1)
    ids = [tailboard(alice, "submit", str(phase_id), preds(tmp_path, n), "--quiet").stdout.split()[1]
           for n in (0, 3)]
    chosen = tailboard(alice, "select", ids[1])
    assert chosen.returncode == 0 and f"selected now: #{ids[1]} (at most 1)" in chosen.stdout
    refused = tailboard(alice, "select", ids[0])
    assert refused.returncode == cli.EXIT_CONFLICT and "allows 1 final selection" in refused.stderr
    assert "selected now: none" in tailboard(alice, "unselect", ids[1]).stdout
    assert tailboard(alice, "select", ids[0]).returncode == 0


def test_baseline_from_the_client_is_for_organizers(world, tmp_path):
    _, phase_id, alice, _, org = world
    added = tailboard(org, "baseline", str(phase_id), preds(tmp_path, 2), "--name", "GPT-4o", "--meta",
                      "model=GPT-4o", "--meta", "open_weights=false")
    assert added.returncode == 0, added.stderr
    assert "Baseline 'GPT-4o' added" in added.stdout
    refused = tailboard(alice, "baseline", str(phase_id), preds(tmp_path), "--name", "Mine")
    assert refused.returncode == cli.EXIT_AUTH
