"""The `tailboard` client end to end against a live server started by the test."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from api_helpers import LiveServer, create_phase, predictions

from tailboard_cli import main as cli


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """Return an environment whose client config lives in a fresh directory."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("TAILBOARD_")}
    return {**clean, "TAILBOARD_CONFIG_DIR": str(tmp_path / "config"), "PYTHONUNBUFFERED": "1"}


def tailboard(env: dict[str, str], *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run the client as a separate process, as a user would."""
    return subprocess.run([sys.executable, "-m", "tailboard_cli", *args], env=env, input=stdin, capture_output=True,
                          text=True, timeout=300, cwd=Path(__file__).resolve().parents[2])


@pytest.fixture
def server(app, client, users, live_server: LiveServer):
    """Return the live server with an open phase (max_per_day=5) and alice's token."""
    phase_id = create_phase(client, users["organizer"])
    return live_server, phase_id, users["alice"].token


@pytest.fixture
def logged_in(env, server) -> dict[str, str]:
    """Return an environment where alice is logged in."""
    live, _, token = server
    assert tailboard(env, "login", live.url, "--token", token).returncode == 0
    return env


def test_login_checks_the_token_and_stores_it_readable_only_by_the_owner(env, server):
    live, _, token = server
    result = tailboard(env, "login", live.url + "/api/v1/", "--token", token)
    assert result.returncode == 0, result.stderr
    config = Path(env["TAILBOARD_CONFIG_DIR"]) / "config.json"
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    assert token in config.read_text() and f'"{live.url}"' in config.read_text()


def test_login_reads_the_token_from_the_prompt(env, server):
    live, _, token = server
    result = tailboard(env, "login", live.url, stdin=token + "\n")
    assert result.returncode == 0, result.stderr


def test_login_with_a_bad_token_exits_3_and_stores_nothing(env, server):
    live, _, _ = server
    result = tailboard(env, "login", live.url, "--token", "tb_wrong")
    assert result.returncode == cli.EXIT_AUTH
    assert "invalid" in result.stderr and "HTTP 401" in result.stderr
    assert not (Path(env["TAILBOARD_CONFIG_DIR"]) / "config.json").exists()


def test_login_to_an_unreachable_server_exits_6(env):
    result = tailboard(env, "login", "http://127.0.0.1:9", "--token", "tb_x")
    assert result.returncode == cli.EXIT_NETWORK
    assert "network error" in result.stderr


def test_commands_before_login_exit_3(env):
    result = tailboard(env, "status", "1")
    assert result.returncode == cli.EXIT_AUTH and "tailboard login" in result.stderr


def test_submit_wait_prints_the_scores_with_a_progress_bar(logged_in, server, tmp_path):
    _, phase_id, _ = server
    path = tmp_path / "preds.csv"
    path.write_bytes(predictions(wrong=5))
    result = tailboard(logged_in, "submit", str(phase_id), str(path), "--description", "cli run", "--wait",
                       "--progress")
    assert result.returncode == 0, result.stderr
    assert "accepted" in result.stdout and ": scored" in result.stdout
    assert "accuracy" in result.stdout and "0.7500" in result.stdout
    assert "upload" in result.stderr and "100%" in result.stderr
    submission_id = result.stdout.split("Submission ")[1].split()[0]
    status = tailboard(logged_in, "status", submission_id)
    assert status.returncode == 0 and "0.7500" in status.stdout


def test_submit_draws_no_progress_bar_when_stderr_is_not_a_terminal(logged_in, server, tmp_path):
    _, phase_id, _ = server
    path = tmp_path / "preds.csv"
    path.write_bytes(predictions(wrong=1))
    result = tailboard(logged_in, "submit", str(phase_id), str(path))
    assert result.returncode == 0, result.stderr
    assert "accepted" in result.stdout
    assert "upload" not in result.stderr and "B/s" not in result.stderr


def test_leaderboard_phases_and_csv(logged_in, server, tmp_path):
    _, phase_id, _ = server
    path = tmp_path / "preds.csv"
    path.write_bytes(predictions(wrong=2))
    assert tailboard(logged_in, "submit", str(phase_id), str(path), "--wait", "--quiet").returncode == 0
    board = tailboard(logged_in, "leaderboard", str(phase_id))
    assert board.returncode == 0 and "Alice" in board.stdout and "0.9000" in board.stdout and "tie" in board.stdout
    csv_board = tailboard(logged_in, "leaderboard", str(phase_id), "--csv")
    assert csv_board.stdout.startswith("rank,stat_rank,p_vs_previous,name,") and "Alice" in csv_board.stdout
    phases = tailboard(logged_in, "phases", "demo")
    assert phases.returncode == 0 and f"{phase_id:>5}" in phases.stdout and "open" in phases.stdout
    assert tailboard(logged_in, "phases", "nope").returncode == cli.EXIT_NOT_FOUND


def test_validation_errors_exit_4_with_line_numbers(logged_in, server, tmp_path):
    _, phase_id, _ = server
    path = tmp_path / "bad.csv"
    path.write_text("id,prediction\nq0,yes\nq1,maybe\nghost,no\n")
    result = tailboard(logged_in, "submit", str(phase_id), str(path), "--quiet")
    assert result.returncode == cli.EXIT_INVALID
    assert "line 3 (id q1)" in result.stderr and "line 4 (id ghost)" in result.stderr
    assert "Nothing was charged" in result.stderr


def test_over_quota_exits_5_saying_when_it_resets(logged_in, server, tmp_path):
    _, phase_id, _ = server
    path = tmp_path / "preds.csv"
    path.write_bytes(predictions())
    for _ in range(5):
        assert tailboard(logged_in, "submit", str(phase_id), str(path), "--quiet").returncode == 0
    result = tailboard(logged_in, "submit", str(phase_id), str(path), "--quiet")
    assert result.returncode == cli.EXIT_QUOTA
    assert "quota resets at" in result.stderr and "T00:00:00Z" in result.stderr


def test_someone_elses_submission_exits_7(logged_in, server, client, users, tmp_path):
    _, phase_id, _ = server
    from api_helpers import upload

    bobs = upload(client, users["bob"], phase_id, predictions()).get_json()["id"]
    result = tailboard(logged_in, "status", str(bobs))
    assert result.returncode == cli.EXIT_NOT_FOUND


def test_missing_file_is_a_usage_error(logged_in, server):
    _, phase_id, _ = server
    assert tailboard(logged_in, "submit", str(phase_id), "/no/such/file.csv").returncode == cli.EXIT_USAGE


def test_server_gone_exits_6(logged_in, server, tmp_path):
    live, phase_id, _ = server
    live.__exit__()
    path = tmp_path / "preds.csv"
    path.write_bytes(predictions())
    result = tailboard(logged_in, "submit", str(phase_id), str(path), "--quiet")
    assert result.returncode == cli.EXIT_NETWORK


def test_a_retried_upload_whose_answer_was_lost_is_charged_once(server, monkeypatch, tmp_path, client, users):
    live, phase_id, token = server
    from tailboard_cli.client import Client, NetworkError

    api = Client(live.url, token)
    real, calls = api._request, []

    def lose_first_answer(method, path, **kwargs):
        response = real(method, path, **kwargs)
        calls.append(kwargs["headers"]["Idempotency-Key"])
        if len(calls) == 1:
            raise NetworkError("connection reset")  # the server got it; the client never saw the answer
        return response

    monkeypatch.setattr(api, "_request", lose_first_answer)
    monkeypatch.setattr("tailboard_cli.client.time.sleep", lambda s: None)
    path = tmp_path / "preds.csv"
    path.write_bytes(predictions())
    accepted = api.submit(phase_id, path)
    assert len(calls) == 2 and calls[0] == calls[1]
    quota = client.get(f"/api/v1/phases/{phase_id}", headers=users["alice"].headers).get_json()["quota"]
    assert quota["used_today"] == 1
    assert client.get(f"/api/v1/submissions/{accepted['id']}", headers=users["alice"].headers).status_code == 200


@pytest.mark.parametrize("toolbelt", [True, False])
def test_both_multipart_encoders_send_the_same_upload(server, monkeypatch, tmp_path, toolbelt):
    live, phase_id, token = server
    from tailboard_cli import upload as encoder
    from tailboard_cli.client import Client

    if not toolbelt:
        monkeypatch.setattr(encoder, "MultipartEncoder", None)
    elif encoder.MultipartEncoder is None:
        pytest.skip("requests-toolbelt is not installed")
    seen: list[tuple[int, int]] = []
    path = tmp_path / "preds.csv"
    path.write_bytes(predictions(wrong=1))
    accepted = Client(live.url, token).submit(phase_id, path, progress=lambda done, total: seen.append((done, total)))
    assert accepted["status"] in ("queued", "scored")
    assert seen and seen[-1][0] == seen[-1][1] > path.stat().st_size


@pytest.mark.slow
def test_a_50_mb_upload_streams_with_progress(logged_in, server, tmp_path):
    _, phase_id, _ = server
    path = tmp_path / "big.jsonl"
    padding = " " * (50 * 1024 * 1024 // 20)
    with path.open("w") as handle:  # valid JSON Lines: 20 predictions, each line padded with spaces
        for i in range(20):
            handle.write(f'{{"id": "q{i}", "prediction": "{"yes" if i % 2 == 0 else "no"}"}}{padding}\n')
    assert path.stat().st_size > 50 * 1024 * 1024
    result = tailboard(logged_in, "submit", str(phase_id), str(path), "--wait", "--progress")
    assert result.returncode == 0, result.stderr
    assert "50.0M/50.0M" in result.stderr or "100%" in result.stderr
    assert "1.0000" in result.stdout


def test_the_tailboard_command_is_the_clients_main(capsys):
    import tomllib

    pyproject = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
    assert pyproject["project"]["scripts"]["tailboard"] == "tailboard_cli.main:main"
    with pytest.raises(SystemExit) as stop:
        cli.main(["--help"])
    assert stop.value.code == 0
    usage = capsys.readouterr().out
    assert all(word in usage for word in ("login", "submit", "status", "leaderboard", "phases", "exit codes"))
