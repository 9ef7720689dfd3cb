"""README.md's walkthrough, run as written: every command block from "Scoring from the command line" on.

The blocks run in order in one bash shell (``set -e -o pipefail``) from the project root,
with the project's existing ``.venv`` (the first block activates it), ``$WORK`` made by the
README's own ``mktemp -d`` under the test's directory, a free ``PORT`` and the client's
config in the test's directory. The test then checks what each block promises: the
importer's summary without per-item lines, breakdowns in the CREAK result, the LINT
figures, a ranking value for every entry and baseline of the CoLoTa phase (leaderboard
CSV from the API and from the client), scores from ``submit --wait`` without a progress
bar, and a stop by pid that leaves another process with gunicorn's command line running.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
README = ROOT / "README.md"
FIRST_SECTION = "## Scoring from the command line"
MARK = "@@block"
RANKED = "popularity.tail.accuracy"
# Settings of this shell that would change the walkthrough's instance: a newcomer's shell has none.
INSTANCE_SETTINGS = ("TAILBOARD_", "GUNICORN_", "PYTEST_", "DATABASE_URL", "VIRTUAL_ENV", "SECRET_KEY", "CELERY_",
                     "RATELIMIT_", "AWS_", "WEB_CONCURRENCY", "PORT")


def command_blocks(text: str) -> list[str]:
    """Return the README's fenced command blocks from FIRST_SECTION on (data examples left out)."""
    blocks = re.findall(r"^```[a-z]*\n(.*?)^```", text[text.index(FIRST_SECTION):], re.MULTILINE | re.DOTALL)
    return [b for b in blocks if not b.lstrip().startswith(("id,", "{"))]


def free_port() -> int:
    """Return a TCP port nobody listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def script(blocks: list[str]) -> str:
    """Return the blocks as one bash script, each preceded by a marker line (and $WORK named after the first)."""
    parts = ["set -e -o pipefail"]
    for number, block in enumerate(blocks):
        parts += [f"echo '{MARK} {number}'", block]
        if number == 0:
            parts.append('echo "@@WORK $WORK"')
    return "\n".join(parts) + "\n"


def outputs(text: str) -> dict[int, str]:
    """Return each block's output, split at the marker lines."""
    pieces = re.split(rf"^{MARK} (\d+)\n", text, flags=re.MULTILINE)
    return {int(number): out for number, out in zip(pieces[1::2], pieces[2::2], strict=True)}


def block_output(blocks: list[str], out: dict[int, str], first_line: str) -> str:
    """Return the output of the block whose text contains first_line."""
    return out[next(i for i, b in enumerate(blocks) if first_line in b)]


def first_json(text: str, key: str) -> dict:
    """Return the first line of text that is a JSON object with key."""
    for line in text.splitlines():
        if line.startswith("{") and f'"{key}"' in line:
            return json.loads(line)
    raise AssertionError(f"no JSON object with {key!r} in:\n{text}")


def ranking_rows(text: str) -> list[dict[str, str]]:
    """Return the rows of the leaderboard CSV found in text: from its header line to the first line of another shape."""
    lines = list(csv.reader(io.StringIO(text[text.index("rank,"):])))
    header = lines[0]
    rows = []
    for line in lines[1:]:
        if len(line) != len(header):
            break
        rows.append(dict(zip(header, line, strict=True)))
    return rows


def gone(pid: int) -> bool:
    """Return whether the process has exited (a zombie waiting for its reaper counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state == "Z"


@pytest.fixture
def decoy() -> subprocess.Popen[bytes]:
    """Start another process whose command line matches the old stop command (pkill -f 'gunicorn -c deploy/...')."""
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)",
                                "gunicorn", "-c", "deploy/gunicorn.conf.py", "app:app"])
    yield process
    process.kill()
    process.wait()


@pytest.mark.slow
@pytest.mark.skipif(not (ROOT / ".venv" / "bin" / "activate").exists(),
                    reason="the README activates .venv (make install)")
def test_the_readme_walkthrough_shows_what_it_promises(tmp_path: Path, decoy: subprocess.Popen[bytes]) -> None:
    blocks = command_blocks(README.read_text(encoding="utf-8"))
    assert blocks[0].startswith(". .venv/bin/activate") and "kill $(cat $WORK/tailboard.pid)" in blocks[-1]
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(INSTANCE_SETTINGS)}
    env.update(TMPDIR=str(tmp_path), PORT=str(port), WEB_CONCURRENCY="1", TAILBOARD_CONFIG_DIR=str(tmp_path / "config"),
               TAILBOARD_CACHE_DIR=str(tmp_path / "cache"))
    done = subprocess.run(["bash", "-c", script(blocks)], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=240, check=False)
    work = Path(re.search(r"^@@WORK (.+)$", done.stdout, re.MULTILINE).group(1))
    pid_file = work / "tailboard.pid"
    try:
        assert done.returncode == 0, done.stdout[-4000:]
        assert work.parent == tmp_path
        check_outputs(blocks, outputs(done.stdout))
        server = int(pid_file.read_text()) if pid_file.exists() else None
        deadline = time.monotonic() + 30
        while server is not None and not gone(server) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert server is None or gone(server)  # gunicorn removes its pid file when it exits
        with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=2):
            pass
        assert decoy.poll() is None  # the stop by pid left the other process running
    finally:
        if pid_file.exists():  # the walkthrough failed before its stop: stop the server it started
            os.kill(int(pid_file.read_text()), signal.SIGTERM)


def check_outputs(blocks: list[str], out: dict[int, str]) -> None:
    """Check what each block of the README promises."""
    imported = block_output(blocks, out, "python -m scoring import creak")
    assert "kept 40" in imported and "category, popularity, split added to 40 of 40 items" in imported
    assert not re.search(r"^line \d+: .* kept$", imported, re.MULTILINE)  # no per-item lines by default

    scored = block_output(blocks, out, "python -m scoring evaluate --labels $WORK/creak-claims")
    assert first_json(scored, "n_predictions") == {"ok": True, "n_predictions": 40, "warnings": []}
    creak = first_json(scored, "n_items")
    assert set(creak["breakdowns"]["category"]) == {"culture", "history", "people", "places", "science"}
    assert {"head", "tail", "gap", "relative_drop"} <= set(creak["popularity"])
    assert creak["overall"]["accuracy"] == 0.575 and creak["warnings"] == []

    lint = first_json(block_output(blocks, out, "lint_statements.jsonl"), "n_items")
    assert lint["overall"]["group_accuracy"] == 0.5625
    assert (lint["popularity"]["head"]["group_accuracy"], lint["popularity"]["tail"]["group_accuracy"]) == (0.75, 0.375)
    assert {"temporal", "locational"} <= set(lint["breakdowns"]["category"])

    instance = block_output(blocks, out, "alembic upgrade head")
    assert re.search(r"^Phase \d+ 'QA' is open\.\n(?!\d+\n)", instance, re.MULTILINE)  # no stray id line after it
    api = block_output(blocks, out, "curl -s -X POST")
    assert re.search(r'"status":\s*"(queued|scored)"', api)
    check_ranking(ranking_rows(api))

    client = block_output(blocks, out, "tailboard login")
    assert "Logged in to" in client and ": scored" in client and "accuracy" in client
    assert re.search(r"by popularity: tail \d\.\d{4}\n", client)  # the ranked figure, exact
    assert "upload:" not in client and "B/s" not in client  # no progress bar off a terminal
    check_ranking(ranking_rows(client))


def check_ranking(rows: list[dict[str, str]]) -> None:
    """Check that every entry and baseline of the CSV shows the ranked value, and the entries are ranked."""
    baselines = [r for r in rows if r["is_baseline"] == "true"]
    entries = [r for r in rows if r["is_baseline"] == "false"]
    assert {r["name"] for r in baselines} >= {"Majority class", "All yes"} and entries
    assert all(re.fullmatch(r"[01](\.\d+)?", r[RANKED]) for r in rows), rows
    assert all(r["rank"] for r in entries), entries
