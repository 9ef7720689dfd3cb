"""Public questions by an allow list (docs/FORMATS.md): a field of the label file is published only when allowed.

Measured before (issue 7): a ``rationale`` field that encoded the label appeared in
``questions.jsonl`` and ``starting_kit.zip`` for anonymous visitors, because the derivation
dropped six known names and published the rest.
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest

from leaderboard.accounts import OPERATOR
from leaderboard.organizing import phases, run_importer
from leaderboard.organizing.phase_imports import import_phase
from leaderboard.phase_data import derive_questions, phase_files
from leaderboard.phase_data.phase_files import public_fields
from leaderboard.platform import InvalidInput
from scoring.config import load_config
from scoring.importers.common import question_fields
from scoring.public_fields import ALWAYS_PUBLIC

FIXTURES = Path(__file__).resolve().parents[1] / "scoring" / "fixtures" / "importers"
RATIONALE = "because the answer is yes"


def labels_with(**extra: object) -> bytes:
    """Return a binary label file whose records carry extra fields (a rationale giving the label away)."""
    rows = [{"id": f"i{n}", "label": n % 2 == 0, "category": "c", "popularity": "tail", "agreement": "tie",
             "rationale": f"{RATIONALE} {n}", "answer": "yes", **extra} for n in range(1, 7)]
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def published(ctx, phase) -> list[bytes]:
    """Return what an anonymous visitor downloads: questions.jsonl and every member of the starting kit."""
    _, questions = phase_files.public_file(ctx, phase_id=phase.id, name="questions.jsonl", viewer=None)
    _, kit = phase_files.public_file(ctx, phase_id=phase.id, name="starting_kit.zip", viewer=None)
    with zipfile.ZipFile(io.BytesIO(kit)) as archive:
        return [questions] + [archive.read(name) for name in archive.namelist()]


def test_an_unknown_label_field_is_published_nowhere(ctx, make_phase):
    phase = make_phase(labels=labels_with())
    for data in published(ctx, phase):
        assert b"rationale" not in data and RATIONALE.encode() not in data and b"agreement" not in data
    first = json.loads(published(ctx, phase)[0].splitlines()[0])
    assert first == {"id": "i1", "category": "c", "popularity": "tail"}
    report = phase_files.phase_questions_report(ctx, phase)
    assert report.kept == ("id", "category", "popularity")
    assert set(report.withheld) == {"label", "agreement", "rationale", "answer"}


def test_a_field_the_organizer_marks_public_is_published(ctx, make_phase):
    phase = make_phase(labels=labels_with(), config={"task_type": "binary", "public_fields": ["rationale"]})
    questions = published(ctx, phase)[0]
    assert RATIONALE.encode() in questions and b'"answer"' not in questions and b'"label"' not in questions
    assert phase.task_config["public_fields"] == ["rationale"]
    assert "rationale" in phase_files.phase_questions_report(ctx, phase).kept


def test_a_breakdown_named_by_the_config_is_published(ctx, make_phase):
    phase = make_phase(labels=labels_with(), config={"task_type": "binary", "breakdowns": ["category", "agreement"]})
    assert b'"agreement": "tie"' in published(ctx, phase)[0]


@pytest.mark.parametrize("config", [
    {"task_type": "binary", "public_fields": ["label"]},
    {"task_type": "binary", "public_fields": ["split"]},
    {"task_type": "binary", "breakdowns": ["split"]},
    {"task_type": "binary", "public_fields": "rationale"},
])
def test_the_label_and_the_split_can_never_be_made_public(ctx, make_competition, config):
    with pytest.raises(InvalidInput) as refused:
        phases.create_phase(ctx, actor=OPERATOR, competition_slug=make_competition().slug, name="P",
                            labels=labels_with(split="public"), config=config)
    assert "public_fields" in refused.value.message or "breakdowns" in refused.value.message


def test_an_uploaded_questions_file_with_the_split_is_refused(ctx, make_competition):
    questions = b'{"id": "i1", "split": "private"}\n'
    with pytest.raises(InvalidInput, match="split"):
        phases.create_phase(ctx, actor=OPERATOR, competition_slug=make_competition().slug, name="P",
                            labels=labels_with(), questions=questions)


IMPORTS = [("creak", "creak_dev.json", {}), ("creak", "creak_contrast.json", {}),
           ("colota", "colota_cv.json", {"originals": "colota_cv_original.csv", "modified": "colota_cv_modified.csv"}),
           ("tgcsr", "tgcsr_ctx-tf.jsonl", {}), ("comparisonqa", "comparisonqa_small.json", {})]


@pytest.mark.parametrize(("fmt", "source", "options"), IMPORTS, ids=[f"{f}-{s}" for f, s, _ in IMPORTS])
def test_the_importers_and_derive_questions_follow_one_allow_list(tmp_path, fmt, source, options):
    _, files = run_importer(fmt, FIXTURES / source, tmp_path / "out",
                            **{k: FIXTURES / v for k, v in options.items()})
    config = load_config(files.config)
    allowed = public_fields(config)
    assert allowed == question_fields(files.config)  # one rule, whichever side asks
    labels = [json.loads(line) for line in files.labels.splitlines()]
    imported = [json.loads(line) for line in (files.questions or b"").splitlines()]
    derived = [json.loads(line) for line in derive_questions(files.labels, config).splitlines()]
    assert all(set(q) <= allowed for q in imported + derived)
    for label, question, derived_one in zip(labels, imported, derived, strict=True):
        # Of the fields the label file has, both publish exactly the same ones with the same values.
        assert derived_one == {k: v for k, v in question.items() if k in label}
    assert set(config.public_fields).isdisjoint(ALWAYS_PUBLIC)


def test_the_import_report_names_the_public_and_the_withheld_fields(ctx, make_competition):
    result = import_phase(ctx, actor=OPERATOR, competition_slug=make_competition().slug, fmt="tgcsr", name="Ctx",
                          preview=True, source=(FIXTURES / "tgcsr_ctx-tf.jsonl").read_bytes(),
                          filename="ctx-tf.jsonl")
    assert result.phase is None
    assert set(result.fields.kept) == {"id", "questionID", "answerID", "category", "group"}
    assert set(result.fields.withheld) == {"label", "agreement"}


def test_the_cli_prints_the_public_and_the_withheld_fields(runner, tmp_path, make_competition):
    labels = tmp_path / "labels.jsonl"
    labels.write_bytes(labels_with())
    slug = make_competition().slug
    result = runner.invoke(args=["phases", "create", slug, "--name", "Dev", "--labels", str(labels)])
    assert result.exit_code == 0, result.output
    line = next(x for x in result.output.splitlines() if "public questions file" in x)
    assert "carries id, category, popularity;" in line and "rationale" in line.split("withheld:")[1]


def test_the_api_answers_the_public_and_the_withheld_fields(client, make_organizer, make_token, make_competition):
    organizer = make_organizer()
    slug = make_competition(created_by=organizer).slug
    response = client.post(f"/api/v1/competitions/{slug}/phases", data={
        "name": "Dev", "labels": (io.BytesIO(labels_with()), "labels.jsonl"),
    }, headers={"Authorization": f"Bearer {make_token(organizer)}"}, content_type="multipart/form-data")
    assert response.status_code == 201, response.get_json()
    body = response.get_json()
    assert body["public_fields"] == ["id", "category", "popularity"]
    assert set(body["withheld_fields"]) == {"label", "agreement", "rationale", "answer"}


def test_the_web_form_and_the_import_preview_show_the_fields(client, login, csrf_token, make_organizer,
                                                              make_competition):
    organizer = make_organizer()
    slug = make_competition(created_by=organizer).slug
    login(client, organizer)
    path = f"/organizer/c/{slug}/phases/new"
    client.post(path, data={"name": "Dev", "labels": (io.BytesIO(labels_with()), "l.jsonl"),
                            "leaderboard_visibility": "public", "csrf_token": csrf_token(client, path)},
                content_type="multipart/form-data")
    page = client.get(f"/organizer/c/{slug}").get_data(as_text=True)
    assert "carries id, category, popularity; withheld:" in page and "rationale" in page
    path = f"/organizer/c/{slug}/phases/import"
    preview = client.post(path, data={"format": "tgcsr", "name": "Ctx", "preview": "y",
                                      "source": (io.BytesIO((FIXTURES / "tgcsr_ctx-tf.jsonl").read_bytes()), "x.jsonl"),
                                      "leaderboard_visibility": "public", "csrf_token": csrf_token(client, path)},
                          content_type="multipart/form-data").get_data(as_text=True)
    assert "Public questions file" in preview and "<code>questionID</code>" in preview
    assert "<code>agreement</code>" in preview.split("Withheld")[1]


def test_a_stored_phase_config_keeps_the_fields_marked_public() -> None:
    from leaderboard.phase_data import config_to_json

    config = load_config({"task_type": "binary", "public_fields": ["rationale"]})
    stored = config_to_json(config)
    assert stored["public_fields"] == ["rationale"]
    assert load_config(stored).public_fields == ("rationale",)
