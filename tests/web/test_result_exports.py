"""GET /api/v1/phases/<id>/results (docs/MOVING.md): the board as participants read it, as Every Eval Ever records
and Hugging Face eval results that pass the library's own format checks; coarse while open, exact once closed, and
no figure the board hides."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from huggingface_hub import EvalResult
from huggingface_hub.repocard_data import eval_results_to_model_index, model_index_to_eval_results
from sqlalchemy import select

from leaderboard.accounts import OPERATOR
from leaderboard.models import Phase, Submission
from leaderboard.organizing import competitions, phase_settings, phases
from leaderboard.submissions import accept_submission, active_score
from tests.scoring.eee_rules import problems

RARE = "breakdowns.category.rare.accuracy"  # 3 items: under min_slice_items, the board never shows it
COLUMNS = ["popularity.head.accuracy", "popularity.tail.accuracy", "popularity.gap.accuracy",
           "breakdowns.category.a.accuracy", RARE]


def items() -> list[dict[str, Any]]:
    """Return 83 binary items: categories a and b (and 3 rare ones), head and tail, every 5th on the private split."""
    rows = []
    for i in range(83):
        rows.append({"id": f"q{i}", "label": i % 2 == 0, "category": "rare" if i >= 80 else "ab"[i // 40],
                     "popularity": "head" if i % 3 else "tail", "split": "private" if i % 5 == 0 else "public"})
    return rows


def answers(wrong_every: int) -> bytes:
    """Return a CSV answering each item right except every n-th."""
    lines = ["id,prediction"]
    for i, item in enumerate(items()):
        lines.append(f"{item['id']},{str(item['label'] != (i % wrong_every == 1)).lower()}")
    return ("\n".join(lines) + "\n").encode()


@pytest.fixture
def phase_id(ctx, make_user, make_organizer) -> int:
    """Return an open phase with a private split, slice columns and three scored entries (one with a model id)."""
    owner = make_organizer()
    competitions.create_competition(ctx, slug="exports", title="Export bench", actor=owner)
    labels = ("\n".join(json.dumps(row) for row in items()) + "\n").encode()
    config = {"task_type": "binary", "breakdowns": ["category"], "min_slice_items": 5,
              "views": [{"name": "Overall", "metric": "accuracy", "columns": COLUMNS}]}
    phase = phases.create_phase(ctx, competition_slug="exports", name="Main", labels=labels, config=config,
                                max_per_day="unlimited", actor=owner)
    phases.open_phase(ctx, phase_id=phase.id, actor=owner)
    for wrong_every, metadata in ((3, {"model_id": "org/model-a", "model": "Model A"}), (5, {}), (7, {})):
        accept_submission(ctx, phase_id=phase.id, user=make_user(), filename="p.csv",
                          stream=io.BytesIO(answers(wrong_every)), metadata=metadata)
    return phase.id


def export(client: Any, phase_id: int, fmt: str) -> dict[str, Any]:
    response = client.get(f"/api/v1/phases/{phase_id}/results?format={fmt}")
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.get_json()


def board_rows(client: Any, phase_id: int) -> list[dict[str, Any]]:
    """Return the ranked rows of the board as an anonymous participant reads it."""
    rows = client.get(f"/api/v1/phases/{phase_id}/leaderboard?format=json").get_json()["rows"]
    return [row for row in rows if row["rank"] is not None]


def scores(record: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["evaluation_result_id"]: r["score_details"] for r in record["evaluation_results"]}


def check_hf(records: list[dict[str, Any]]) -> None:
    """Check each record as tests/scoring does: EvalResult builds it and the model index reads back the same."""
    for record in records:
        results = [EvalResult(**kwargs) for kwargs in record["eval_results"]]
        assert results
        assert eval_results_to_model_index(record["model_name"], results) == record["model-index"]
        assert model_index_to_eval_results(record["model-index"]) == (record["model_name"], results)


def test_an_open_phase_exports_its_ranked_figure_exact_and_its_slices_marked_coarse(client, phase_id) -> None:
    rows = board_rows(client, phase_id)
    coarse = {path for row in rows for path in row["errors"]}
    assert "org/model-a" in [row["metadata"].get("model_id") for row in rows]
    assert coarse and RARE not in coarse  # the slices are coarse while open; the rare one is not shown at all
    eee = export(client, phase_id, "every-eval-ever")
    assert (eee["phase_status"], eee["split"], eee["ranking_metric"]) == ("open", "public", "accuracy")
    assert len(eee["records"]) == len(rows) == 3
    for record, row in zip(eee["records"], rows, strict=True):
        assert problems(record) == []
        declared = row["metadata"].get("model_id")
        assert record["model_info"]["id"] == declared or (declared is None and record["model_info"]["id"].startswith(
            "tailboard/exports/user-"))
        shown = scores(record)
        assert shown["accuracy"]["score"] == row["value"] and shown["accuracy"]["details"]["exact"] == "true"
        for path, error in row["errors"].items():
            assert shown[path]["details"]["exact"] == "false" and float(shown[path]["details"]["grid_step"]) == error
            assert shown[path]["score"] == row["columns"][path]  # the shown value, never a finer one
    hf = export(client, phase_id, "hf-eval-results")
    check_hf(hf["records"])
    for record, row in zip(hf["records"], rows, strict=True):
        assert [r["metric_config"] for r in record["eval_results"]] == ["accuracy"]
        assert {item["metric_path"] for item in record["left_out"]} == set(row["errors"])


def test_a_closed_phase_exports_the_private_ranked_figures_exact_and_keeps_slices_coarse(ctx, client,
                                                                                        phase_id) -> None:
    phases.close_phase(ctx, phase_id=phase_id, actor=OPERATOR)
    rows = board_rows(client, phase_id)
    exact = {sub.id: round(active_score(sub).results["splits"]["private"]["overall"]["accuracy"], 4)
             for sub in ctx.session.scalars(select(Submission).where(Submission.phase_id == phase_id))}
    eee = export(client, phase_id, "every-eval-ever")
    assert (eee["phase_status"], eee["split"]) == ("closed", "private") and len(eee["records"]) == 3
    for record, row in zip(eee["records"], rows, strict=True):
        assert problems(record) == []
        shown = scores(record)
        assert shown["accuracy"]["details"]["exact"] == "true"
        assert shown["accuracy"]["score"] == row["value"] == exact[row["submission_id"]]
        # after close the slices stay as coarse as the board shows them (docs/PROBING.md: labels stay hidden)
        assert {path for path, s in shown.items() if s["details"]["exact"] == "false"} == set(row["errors"])
    hf = export(client, phase_id, "hf-eval-results")
    check_hf(hf["records"])
    for record, row in zip(hf["records"], rows, strict=True):
        assert {r["metric_config"]: r["metric_value"] for r in record["eval_results"]} == {"accuracy": row["value"]}
        assert {item["metric_path"] for item in record["left_out"]} == set(row["errors"])


def test_a_view_ranked_by_a_slice_exports_that_slice_exact(ctx, client, phase_id) -> None:
    phase = ctx.session.get(Phase, phase_id)
    views = [*phase.task_config["views"], {"name": "Tail", "metric": "popularity.tail.accuracy", "columns": []}]
    phase_settings.update_settings(ctx, phase_id=phase_id, actor=OPERATOR, views=views)
    phases.close_phase(ctx, phase_id=phase_id, actor=OPERATOR)
    rows = [row for row in client.get(f"/api/v1/phases/{phase_id}/leaderboard?format=json&view=Tail").get_json()[
        "rows"] if row["rank"] is not None]
    hf = client.get(f"/api/v1/phases/{phase_id}/results?format=hf-eval-results&view=Tail").get_json()
    assert hf["ranking_metric"] == "popularity.tail.accuracy"
    check_hf(hf["records"])
    assert [record["eval_results"][0]["metric_value"] for record in hf["records"]] == [row["value"] for row in rows]


@pytest.mark.parametrize("closed", [False, True])
def test_a_slice_the_board_hides_is_not_exported(ctx, client, phase_id, closed) -> None:
    if closed:
        phases.close_phase(ctx, phase_id=phase_id, actor=OPERATOR)
    assert all(row["columns"].get(RARE) is None for row in board_rows(client, phase_id))
    for fmt in ("every-eval-ever", "hf-eval-results"):
        text = client.get(f"/api/v1/phases/{phase_id}/results?format={fmt}").get_data(as_text=True)
        assert "category.rare" not in text and "q80" not in text


def test_an_unknown_format_is_a_400_listing_the_formats_and_the_document_describes_the_endpoint(
        client, phase_id) -> None:
    assert client.get(f"/api/v1/phases/{phase_id + 1000}/results").status_code == 404  # before the format check
    refused = client.get(f"/api/v1/phases/{phase_id}/results?format=csv")
    assert refused.status_code == 400
    body = refused.get_json()
    assert "every-eval-ever" in body["error"] and body["details"]["formats"] == ["every-eval-ever", "hf-eval-results"]
    document = client.get("/api/v1/openapi.json").get_json()
    operation = document["paths"]["/api/v1/phases/{phase_id}/results"]["get"]
    assert {p["name"] for p in operation["parameters"]} >= {"phase_id", "format", "view", "baselines"}
    assert "ResultExport" in json.dumps(operation["responses"]["200"])


def test_the_upload_form_asks_for_a_model_id_and_checks_it(ctx, client, login, csrf_token, make_user,
                                                            phase_id) -> None:
    login(client, make_user())
    path = f"/phases/{phase_id}"
    assert 'name="meta_model_id"' in client.get(path).get_data(as_text=True)

    def upload(model_id: str) -> Any:
        form = {"file": (io.BytesIO(answers(4)), "p.csv"), "meta_model_id": model_id,
                "csrf_token": csrf_token(client, path)}
        return client.post(path, data=form, content_type="multipart/form-data")

    refused = upload("not a model id")
    assert refused.status_code == 400 and "Hugging Face repo id" in refused.get_data(as_text=True)
    assert upload("org/model-b").status_code == 303
    ctx.session.expire_all()
    latest = ctx.session.scalars(select(Submission).order_by(Submission.id.desc())).first()
    assert latest.entry_metadata["model_id"] == "org/model-b"
    ids = [r["model_info"]["id"] for r in export(client, phase_id, "every-eval-ever")["records"]]
    assert "org/model-b" in ids


def test_the_ranking_page_links_both_formats_of_its_view(client, phase_id) -> None:
    page = client.get(f"/phases/{phase_id}/leaderboard").get_data(as_text=True)
    for fmt in ("every-eval-ever", "hf-eval-results"):
        link = f"/api/v1/phases/{phase_id}/results?format={fmt}&amp;view=Overall"
        assert link in page
        assert client.get(link.replace("&amp;", "&")).status_code == 200
