"""Hugging Face eval results of a phase's board are what huggingface_hub builds, reads back and puts in a card."""

from __future__ import annotations

import json

import pytest
import yaml
from export_support import KINDS, RETRIEVED_AT, STEP, scored_board
from huggingface_hub import EvalResult, ModelCard, ModelCardData
from huggingface_hub.repocard_data import eval_results_to_model_index, model_index_to_eval_results

from scoring.exports import export_results, hf_eval_results, to_json
from scoring.metrics.paths import path_value

BOARDS = [(kind, closed) for kind in KINDS for closed in (False, True)]


def hf_records(kind: str, *, closed: bool = False, ladder: bool = False, baselines: bool = True) -> list[dict]:
    phase, entries, _ = scored_board(kind, closed=closed, coarse=not closed, ladder=ladder)
    # through JSON, as the endpoint serves them
    return json.loads(to_json(hf_eval_results(phase, entries, include_baselines=baselines)))


@pytest.mark.parametrize(("kind", "closed"), BOARDS)
def test_every_record_builds_eval_results_and_round_trips_through_the_model_index(kind: str, closed: bool) -> None:
    for record in hf_records(kind, closed=closed):
        results = [EvalResult(**kwargs) for kwargs in record["eval_results"]]
        assert results
        assert eval_results_to_model_index(record["model_name"], results) == record["model-index"]
        name, read_back = model_index_to_eval_results(record["model-index"])
        assert (name, read_back) == (record["model_name"], results)


@pytest.mark.parametrize(("kind", "closed"), BOARDS)
def test_every_record_makes_a_model_card_whose_header_reads_back(kind: str, closed: bool) -> None:
    for record in hf_records(kind, closed=closed):
        results = [EvalResult(**kwargs) for kwargs in record["eval_results"]]
        data = ModelCardData(model_name=record["model_name"], eval_results=results, license="mit")
        assert data.to_dict()["model-index"] == record["model-index"]
        header = yaml.safe_dump({"license": "mit", "model-index": record["model-index"]}, sort_keys=True)
        card = ModelCard(f"---\n{header}---\n\n# {record['model_name']}\n")
        assert card.data.model_name == record["model_name"]
        assert card.data.eval_results == results


@pytest.mark.parametrize("kind", list(KINDS))
def test_results_carry_types_direction_range_and_interval(kind: str) -> None:
    phase, entries, _ = scored_board(kind, closed=True, coarse=False)
    record = hf_eval_results(phase, entries)[0]
    assert [r["metric_config"] for r in record["eval_results"]] == list(phase.paths)
    for result in record["eval_results"]:
        for key in ("task_type", "dataset_type", "dataset_name", "metric_type"):
            assert isinstance(result[key], str) and result[key]
        assert isinstance(result["metric_value"], float)
        args, path = result["metric_args"], result["metric_config"]
        difference = path.split(".")[1] if path.startswith("popularity.") else ""
        assert args["lower_is_better"] is (difference in ("gap", "relative_drop"))
        assert (args["min_score"], args["max_score"]) == {"gap": (-1.0, 1.0), "relative_drop": ("-Infinity", 1.0)}.get(
            difference, (0.0, 1.0))
        if "ci95" in args:
            low, high = args["ci95"]
            assert low <= high
        assert result["task_type"] == ("multiple-choice" if phase.task_type == "multiple_choice"
                                       else "text-classification")


def test_exact_values_are_the_scorers_and_a_closed_phase_exports_every_shown_path() -> None:
    phase, entries, results = scored_board("colota", closed=True, coarse=False)
    for record, entry in zip(hf_eval_results(phase, entries, include_baselines=True), entries, strict=True):
        assert record["left_out"] == []
        result = results[entry.submission_id - 100]
        assert {r["metric_config"]: r["metric_value"] for r in record["eval_results"]} == {
            path: path_value(result, path) for path in phase.paths}
        assert {r["dataset_split"] for r in record["eval_results"]} == {"private"}


def test_coarse_figures_are_left_out_and_listed_never_exported_as_values() -> None:
    phase, entries, _ = scored_board("creak")
    for record in hf_records("creak"):
        assert [r["metric_config"] for r in record["eval_results"]] == ["accuracy"]
        assert [item["metric_path"] for item in record["left_out"]] == list(phase.columns)
        assert {(item["reason"], item["step"]) for item in record["left_out"]} == {("coarse", STEP)}


def test_a_laddered_board_exports_no_value_but_keeps_its_rows() -> None:
    for record in hf_records("plain", ladder=True):
        assert (record["eval_results"], record["model-index"]) == ([], [])
        assert record["left_out"] == [{"metric_path": "accuracy", "reason": "coarse", "step": STEP}]
        assert ModelCardData(model_name=record["model_name"], eval_results=[]).model_name == record["model_name"]


def test_the_card_to_write_to_is_the_declared_model_id_and_a_fallback_is_no_hub_repo() -> None:
    by_name = {r["entry"]["display_name"]: r for r in hf_records("tgcsr")}
    assert by_name["KG Reasoners"]["model_id"] == "meta-llama/Llama-3-8B"
    assert by_name["KG Reasoners"]["model_name"] == "Llama 3 8B + KG"
    assert by_name["Tail/Enders"]["model_id"] == "openai/gpt-4o-mini"
    assert by_name["bo/b"]["model_id"] is None
    assert by_name["bo/b"]["tailboard_id"] == by_name["bo/b"]["model_name"] == "tailboard/tgcsr/user-bo%2Fb/default"
    assert by_name["Tail/Enders"]["eval_results"][0]["dataset_type"] == "tailboard/tgcsr"
    assert by_name["Majority"]["entry"]["is_baseline"] is True and by_name["Majority"]["entry"]["rank"] is None


def test_the_benchmarks_hub_dataset_is_the_dataset_type_when_known() -> None:
    phase, entries, _ = scored_board("creak", hf_dataset="tailboard-tests/creak")
    result = hf_eval_results(phase, entries)[0]["eval_results"][0]
    assert (result["dataset_type"], result["dataset_name"], result["dataset_config"], result["dataset_split"]) == (
        "tailboard-tests/creak", "CREAK", "Test phase", "test")
    assert (result["source_name"], result["source_url"]) == ("Tailboard: CREAK", phase.phase_url)


def test_the_endpoint_document_names_its_format_and_board() -> None:
    phase, entries, _ = scored_board("colota")
    document = export_results("hf-eval-results", phase, entries, retrieved_at=RETRIEVED_AT)
    assert {k: v for k, v in document.items() if k != "records"} == {
        "format": "hf-eval-results", "phase_id": phase.phase_id, "split": "public", "phase_status": "open",
        "ranking_metric": "popularity.tail.accuracy", "retrieved_at": "2026-12-01T09:30:00Z"}
    assert len(document["records"]) == 3
    assert to_json(document) == to_json(export_results("hf-eval-results", phase, entries, retrieved_at=RETRIEVED_AT))
