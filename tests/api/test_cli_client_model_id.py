"""``tailboard submit --model-id ID`` (docs/CLI.md): the entry's metadata.model_id, the model the result exports
name (docs/MOVING.md); a malformed id is refused by the server, naming the key."""

from __future__ import annotations

import json
from pathlib import Path

from test_cli_client_entries import env, preds, tailboard, world  # noqa: F401 (fixtures)

from tailboard_cli import main as cli


def test_submit_with_a_model_id_stores_it_and_the_export_names_it(world, tmp_path, client):  # noqa: F811
    _, phase_id, alice, _, _ = world
    result = tailboard(alice, "submit", str(phase_id), preds(tmp_path), "--model-id", "meta-llama/Llama-3-8B",
                       "--meta", "model=Llama 3 8B", "--wait", "--quiet", "--json")
    assert result.returncode == 0, result.stderr
    shown = json.loads(result.stdout[result.stdout.index("{"):])
    assert shown["metadata"] == {"model": "Llama 3 8B", "model_id": "meta-llama/Llama-3-8B"}
    exported = client.get(f"/api/v1/phases/{phase_id}/results?format=hf-eval-results").get_json()
    assert [record["model_id"] for record in exported["records"]] == ["meta-llama/Llama-3-8B"]


def test_a_malformed_model_id_exits_4_naming_the_key(world, tmp_path: Path):  # noqa: F811
    _, phase_id, alice, _, _ = world
    result = tailboard(alice, "submit", str(phase_id), preds(tmp_path), "--model-id", "not an id", "--quiet")
    assert result.returncode == cli.EXIT_INVALID
    assert "model_id" in result.stderr and "HTTP 400" in result.stderr
