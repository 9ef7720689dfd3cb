"""Issue 20: a phase's public files on the web: its managers list them, add, replace and remove uploaded ones,
and replace the questions; anything that looks like the hidden labels is refused; each change is audited."""

from __future__ import annotations

import io
import json
import zipfile
from typing import Any

import pytest
from sqlalchemy import select

from leaderboard.models import AuditEntry, Phase
from tests.conftest import tiny_labels


@pytest.fixture
def managed(ctx: Any, client: Any, login: Any, make_organizer: Any, make_competition: Any,
            make_phase: Any) -> tuple[Any, Phase]:
    """Return (organizer logged in on client, an open phase of theirs)."""
    organizer = make_organizer()
    phase = make_phase(make_competition(created_by=organizer))
    login(client, organizer)
    return organizer, phase


def _upload(client: Any, csrf_token: Any, phase: Phase, data: bytes, filename: str, name: str = "") -> Any:
    """Post a file to the phase's public files page."""
    path = f"/organizer/phases/{phase.id}/files"
    return client.post(path, content_type="multipart/form-data", data={
        "csrf_token": csrf_token(client, path), "file": (io.BytesIO(data), filename), "name": name})


def _summaries(ctx: Any, phase: Phase) -> list[str]:
    """Return the audit summaries of the phase's competition."""
    return list(ctx.session.scalars(select(AuditEntry.summary).where(
        AuditEntry.competition_id == phase.competition_id)))


def test_a_manager_adds_replaces_and_removes_a_public_file(ctx: Any, client: Any, csrf_token: Any,
                                                           managed: tuple[Any, Phase]) -> None:
    _, phase = managed
    page = client.get(f"/organizer/phases/{phase.id}/files").get_data(as_text=True)
    assert "questions.jsonl" in page and "starting_kit.zip" in page
    added = _upload(client, csrf_token, phase, b"# Read me\n", "README.md")
    assert added.status_code == 303
    listed = client.get(f"/organizer/phases/{phase.id}/files").get_data(as_text=True)
    assert f'href="/phases/{phase.id}/files/README.md"' in listed and "Remove README.md" in listed
    anonymous = client.application.test_client()
    assert anonymous.get(f"/phases/{phase.id}/files/README.md").get_data() == b"# Read me\n"
    assert f"/phases/{phase.id}/files/README.md" in anonymous.get(f"/phases/{phase.id}").get_data(as_text=True)
    assert _upload(client, csrf_token, phase, b"# Read me, v2\n", "x.txt", name="README.md").status_code == 303
    assert anonymous.get(f"/phases/{phase.id}/files/README.md").get_data() == b"# Read me, v2\n"
    token = csrf_token(client, f"/organizer/phases/{phase.id}/files")
    removed = client.post(f"/organizer/phases/{phase.id}/files/README.md/remove", data={"csrf_token": token})
    assert removed.status_code == 303
    assert anonymous.get(f"/phases/{phase.id}/files/README.md").status_code == 404
    kept = client.post(f"/organizer/phases/{phase.id}/files/questions.jsonl/remove", data={"csrf_token": token})
    assert kept.status_code == 303 and anonymous.get(f"/phases/{phase.id}/files/questions.jsonl").status_code == 200
    summaries = _summaries(ctx, phase)
    for said in ("added the public file README.md", "replaced the public file README.md",
                 "removed the public file README.md"):
        assert said in summaries


def test_the_questions_are_replaced_after_the_answer_field_check(ctx: Any, client: Any, csrf_token: Any,
                                                                 managed: tuple[Any, Phase]) -> None:
    _, phase = managed
    records = [json.loads(line) for line in tiny_labels().decode().splitlines()]
    leaking = "".join(json.dumps({"id": r["id"], "label": r["label"]}) + "\n" for r in records).encode()
    refused = _upload(client, csrf_token, phase, leaking, "questions.jsonl")
    assert refused.status_code == 400 and "must not contain label" in refused.get_data(as_text=True)
    fresh = "".join(json.dumps({"id": r["id"], "text": f"Is {r['id']} true?"}) + "\n" for r in records).encode()
    assert _upload(client, csrf_token, phase, fresh, "questions.jsonl").status_code == 303
    assert client.get(f"/phases/{phase.id}/files/questions.jsonl").get_data() == fresh
    with zipfile.ZipFile(io.BytesIO(client.get(f"/phases/{phase.id}/files/starting_kit.zip").get_data())) as kit:
        assert kit.read("questions.jsonl") == fresh
    assert any(s.startswith("replaced the public questions.jsonl") for s in _summaries(ctx, phase))


@pytest.mark.parametrize(("filename", "data", "said"), [
    ("labels.jsonl", b'{"id": "q1"}\n', "looks like hidden labels"),
    ("dev.jsonl", b'{"id": "q1", "split": "public"}\n', "answer field split"),
    ("dev.csv", b"id,label\nq1,true\n", "answer column label"),
    ("copy.txt", None, "line 1 is a line of the hidden label file"),
    ("kit.zip", "zip", "looks like hidden labels"),
    ("../x.txt", b"x", "File name"),
    ("starting_kit.zip", b"PK", "cannot be uploaded"),
])
def test_label_like_files_are_refused(ctx: Any, client: Any, csrf_token: Any, managed: tuple[Any, Phase],
                                      filename: str, data: Any, said: str) -> None:
    _, phase = managed
    if data is None:
        data = tiny_labels().splitlines(keepends=True)[0]
    elif data == "zip":
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            archive.writestr("data/answers.jsonl", '{"id": "q1"}\n')
        data = buffer.getvalue()
    before = len(_summaries(ctx, phase))
    refused = _upload(client, csrf_token, phase, data, "upload.bin", name=filename)
    assert refused.status_code == 400
    assert said in refused.get_data(as_text=True).replace("&#39;", "'")
    assert len(_summaries(ctx, phase)) == before


def test_the_label_file_itself_and_oversized_files_are_refused(ctx: Any, client: Any, csrf_token: Any,
                                                               managed: tuple[Any, Phase],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from leaderboard.phase_data import public_extras

    _, phase = managed
    whole = _upload(client, csrf_token, phase, tiny_labels(), "dev.jsonl")
    assert whole.status_code == 400 and "hidden label file" in whole.get_data(as_text=True)
    monkeypatch.setattr(public_extras, "MAX_PUBLIC_FILE", 10)
    big = _upload(client, csrf_token, phase, b"x" * 11, "notes.txt")
    assert big.status_code == 400 and "at most" in big.get_data(as_text=True)


def test_only_managers_change_public_files(client: Any, ctx: Any, login: Any, csrf_token: Any, make_organizer: Any,
                                           make_phase: Any, make_competition: Any) -> None:
    phase = make_phase(make_competition(created_by=make_organizer()))
    login(client, make_organizer())
    assert client.get(f"/organizer/phases/{phase.id}/files").status_code == 403
    refused = _upload_as_outsider(client, csrf_token, phase)
    assert refused.status_code == 403
    assert client.get(f"/phases/{phase.id}/files/notes.txt").status_code == 404


def _upload_as_outsider(client: Any, csrf_token: Any, phase: Phase) -> Any:
    """Post a file to another competition's phase with a token from the outsider's own dashboard."""
    return client.post(f"/organizer/phases/{phase.id}/files", content_type="multipart/form-data", data={
        "csrf_token": csrf_token(client, "/organizer/"), "file": (io.BytesIO(b"x"), "notes.txt")})
