"""Every Eval Ever records of a phase's board follow the format's rules and say exactly what the board shows."""

from __future__ import annotations

import copy
import json
from datetime import datetime, timedelta, timezone

import pytest
from eee_rules import problems
from export_support import KINDS, RETRIEVED_AT, STEP, scored_board

from scoring.exports import ExportError, every_eval_ever_records, to_json
from scoring.metrics.paths import path_value

BOARDS = [(kind, closed) for kind in KINDS for closed in (False, True)]


def records(kind: str, *, closed: bool = False, **options: object) -> list[dict]:
    phase, entries, _ = scored_board(kind, closed=closed, coarse=not closed,
                                     **{k: v for k, v in options.items() if k in ("ladder", "hf_dataset")})
    baselines = bool(options.get("include_baselines", True))
    return every_eval_ever_records(phase, entries, retrieved_at=RETRIEVED_AT, include_baselines=baselines)


@pytest.mark.parametrize(("kind", "closed"), BOARDS)
def test_every_record_of_every_phase_type_follows_the_format_rules(kind: str, closed: bool) -> None:
    out = records(kind, closed=closed)
    assert len(out) == 5
    for record in out:
        assert problems(json.loads(to_json(record))) == []


@pytest.mark.parametrize("hf_dataset", [None, "tailboard-tests/creak"])
def test_source_data_is_the_hub_dataset_when_there_is_one_else_the_competition_page(hf_dataset: str | None) -> None:
    out = records("creak", hf_dataset=hf_dataset)
    source = out[0]["evaluation_results"][0]["source_data"]
    assert problems(out[0]) == []
    if hf_dataset:
        assert (source["source_type"], source["hf_repo"]) == ("hf_dataset", hf_dataset)
    else:
        assert (source["source_type"], source["url"]) == ("url", ["https://tailboard.example/competitions/creak"])


def test_the_rules_refuse_what_the_format_refuses() -> None:
    good = records("creak")[0]
    breaks = {
        "missing model id": lambda r: r["model_info"].pop("id"),
        "unknown relationship": lambda r: r["source_metadata"].update(evaluator_relationship="self"),
        "deployment axis missing": lambda r: r["model_info"]["additional_details"].pop("model_availability"),
        "non-string detail": lambda r: r["model_info"]["additional_details"].update(parameters_b=8),
        "unknown top-level key": lambda r: r.update(rank=1),
        "continuous without a bound": lambda r: r["evaluation_results"][0]["metric_config"].pop("max_score"),
        "score outside its bounds": lambda r: r["evaluation_results"][0]["score_details"].update(score=1.5),
        "empty url list": lambda r: r["evaluation_results"][0]["source_data"].update(url=[]),
        "confidence level above 1": lambda r: r["evaluation_results"][0]["score_details"]["uncertainty"][
            "confidence_interval"].update(confidence_level=95),
        "unknown generation argument": lambda r: r["evaluation_results"][0]["generation_config"][
            "generation_args"].update(effort="high"),
        "ISO retrieved timestamp": lambda r: r.update(retrieved_timestamp="2026-12-01T09:30:00Z"),
    }
    for name, damage in breaks.items():
        broken = copy.deepcopy(good)
        damage(broken)
        assert problems(broken), name


@pytest.mark.parametrize("kind", list(KINDS))
def test_results_are_the_ranking_metric_then_the_shown_columns_each_with_direction_and_range(kind: str) -> None:
    phase, entries, _ = scored_board(kind)
    record = every_eval_ever_records(phase, entries, retrieved_at=RETRIEVED_AT)[0]
    results = record["evaluation_results"]
    assert [r["evaluation_result_id"] for r in results] == list(phase.paths)
    assert results[0]["metric_config"]["additional_details"]["ranked_by"] == "true"
    assert results[0]["score_details"]["details"]["rank"] == "1"
    for result in results:
        config, path = result["metric_config"], result["evaluation_result_id"]
        expected = {"gap": (True, -1.0, 1.0), "relative_drop": (True, "-Infinity", 1.0)}.get(
            path.split(".")[1] if path.startswith("popularity.") else "", (False, 0.0, 1.0))
        assert (config["lower_is_better"], config["min_score"], config["max_score"]) == expected, path
        assert config["score_type"] == "continuous"
        assert config["metric_parameters"]["metric_path"] == path


def test_a_negative_gap_and_a_relative_drop_below_minus_one_stay_valid() -> None:
    phase, entries, _ = scored_board("creak", coarse=False)
    entry = entries[0]
    figures = dict(entry.figures)
    figures["popularity.gap.accuracy"] = type(figures["accuracy"])(-0.4)
    figures["popularity.relative_drop.accuracy"] = type(figures["accuracy"])(-4.0)
    changed = type(entry)(**{**entry.__dict__, "figures": figures})
    record = every_eval_ever_records(phase, [changed], retrieved_at=RETRIEVED_AT)[0]
    assert problems(json.loads(to_json(record))) == []
    by_path = {r["evaluation_result_id"]: r for r in record["evaluation_results"]}
    assert by_path["popularity.relative_drop.accuracy"]["score_details"]["score"] == -4.0
    assert by_path["popularity.relative_drop.accuracy"]["metric_config"]["metric_unit"] == "ratio"


def test_a_figure_outside_its_range_is_refused_naming_the_path() -> None:
    phase, entries, _ = scored_board("creak", coarse=False)
    entry = entries[0]
    figures = {**entry.figures, "popularity.gap.accuracy": type(entry.figures["accuracy"])(1.5)}
    with pytest.raises(ExportError, match=r"popularity\.gap\.accuracy = 1\.5 lies outside \[-1\.0, 1\.0\]"):
        every_eval_ever_records(phase, [type(entry)(**{**entry.__dict__, "figures": figures})],
                                retrieved_at=RETRIEVED_AT)


def test_exact_figures_are_the_scorers_values_with_their_intervals() -> None:
    phase, entries, results = scored_board("comparisonqa", closed=True, coarse=False)
    record = every_eval_ever_records(phase, entries, retrieved_at=RETRIEVED_AT)[0]
    result = results[entries[0].submission_id - 100]
    for item in record["evaluation_results"]:
        path = item["evaluation_result_id"]
        assert item["score_details"]["score"] == path_value(result, path)
        assert item["score_details"]["details"]["exact"] == "true"
        assert "grid_step" not in item["score_details"]["details"]


def test_coarse_figures_keep_their_shown_value_and_say_they_are_coarse() -> None:
    record = records("colota")[0]
    ranked, *others = record["evaluation_results"]
    assert ranked["score_details"]["details"]["exact"] == "true"
    assert others
    for item in others:
        details = item["score_details"]["details"]
        assert (details["exact"], details["grid_step"]) == ("false", repr(STEP))
        assert "noise" in details["shown_as"]
        assert round(item["score_details"]["score"] / STEP, 6).is_integer()
        interval = item["score_details"].get("uncertainty", {}).get("confidence_interval")
        if interval:
            assert "grid" in interval["method"]


def test_a_closed_phase_shows_the_private_split_all_exact() -> None:
    out = records("colota", closed=True)
    for record in out:
        assert record["source_metadata"]["additional_details"]["split"] == "private"
        assert record["source_metadata"]["additional_details"]["phase_status"] == "closed"
        assert record["evaluation_id"].endswith(f"/private/submission-{record['evaluation_id'].rsplit('-', 1)[1]}")
        assert {r["score_details"]["details"]["exact"] for r in record["evaluation_results"]} == {"true"}


def test_a_laddered_ranking_figure_is_marked_rounded_not_noisy() -> None:
    item = records("creak", ladder=True)[0]["evaluation_results"][0]
    assert item["score_details"]["details"]["exact"] == "false"
    assert "ladder" in item["score_details"]["details"]["shown_as"]


def test_a_phase_without_slices_exports_its_ranking_metric_alone() -> None:
    for record in records("plain"):
        assert [r["evaluation_result_id"] for r in record["evaluation_results"]] == ["accuracy"]
        assert record["evaluation_results"][0]["evaluation_name"] == "tailboard.plain.phase-5"


def test_model_ids_are_declared_ones_or_a_fallback_that_names_competition_owner_and_method() -> None:
    by_name = {r["model_info"]["additional_details"]["display_name"]: r["model_info"] for r in records("creak")}
    assert by_name["KG Reasoners"]["id"] == "meta-llama/Llama-3-8B"
    assert by_name["KG Reasoners"]["name"] == "Llama 3 8B + KG"
    assert by_name["KG Reasoners"]["developer"] == "meta-llama"
    assert by_name["KG Reasoners"]["additional_details"]["model_id_source"] == "metadata.model_id"
    assert by_name["bo/b"]["id"] == "tailboard/creak/user-bo%2Fb/default"
    assert by_name["bo/b"]["additional_details"]["model_id_source"] == "tailboard_fallback"
    assert by_name["Tail/Enders"]["id"] == "openai/gpt-4o-mini"
    assert by_name["Majority"]["id"] == "tailboard/creak/baseline/Majority"
    assert "developer" not in by_name["Majority"]


def test_metadata_becomes_strings_and_model_availability() -> None:
    info = {r["model_info"]["additional_details"]["display_name"]: r["model_info"]["additional_details"]
            for r in records("creak")}
    assert info["KG Reasoners"]["model_availability"] == "open_weights"
    assert info["KG Reasoners"]["parameters_b"] == "8"
    assert info["KG Reasoners"]["uses_knowledge_graph"] == "true"
    assert info["Tail/Enders"]["model_availability"] == "closed_weights"
    assert info["bo/b"]["model_availability"] == "unknown"
    assert {d["deployment_type"] for d in info.values()} == {"unknown"}


def test_chain_of_thought_is_stated_as_reasoning_and_other_prompting_as_a_detail() -> None:
    configs = {r["model_info"]["additional_details"]["display_name"]: r["evaluation_results"][0].get(
        "generation_config") for r in records("creak")}
    assert configs["KG Reasoners"] == {"additional_details": {"prompting": "chain-of-thought"},
                                       "generation_args": {"reasoning": True}}
    assert configs["bo/b"] == {"additional_details": {"prompting": "few-shot"}}
    assert configs["Tail/Enders"] is None


def test_baselines_are_left_out_unless_asked_and_flagged_when_in() -> None:
    ranked = records("creak", include_baselines=False)
    assert [r["model_info"]["additional_details"]["is_baseline"] for r in ranked] == ["false"] * 3
    everyone = records("creak")
    flags = {r["model_info"]["additional_details"]["display_name"]: (
        r["model_info"]["additional_details"]["is_baseline"], r["source_metadata"]["evaluator_relationship"])
        for r in everyone}
    assert flags["Majority"] == ("true", "first_party")
    assert flags["Human"] == ("true", "third_party")
    assert "rank" not in everyone[1]["evaluation_results"][0]["score_details"]["details"]


def test_records_follow_the_board_order() -> None:
    phase, entries, _ = scored_board("lint")
    out = every_eval_ever_records(phase, entries, retrieved_at=RETRIEVED_AT, include_baselines=True)
    assert [r["evaluation_id"].rsplit("-", 1)[1] for r in out] == [str(e.submission_id) for e in entries]


def test_output_is_deterministic_with_sorted_keys_and_utc_times() -> None:
    first, second = records("comparisonqa"), records("comparisonqa")
    assert to_json(first) == to_json(second)

    def keys_sorted(value: object) -> bool:
        if isinstance(value, dict):
            return list(value) == sorted(value) and all(map(keys_sorted, value.values()))
        return all(map(keys_sorted, value)) if isinstance(value, list) else True

    assert keys_sorted(first)
    record = first[0]
    assert record["retrieved_timestamp"] == str(int(RETRIEVED_AT.timestamp()))
    assert record["source_metadata"]["additional_details"]["retrieved_at"] == "2026-12-01T09:30:00Z"
    assert record["model_info"]["additional_details"]["submitted_at"].endswith("Z")


def test_times_in_another_zone_are_written_in_utc_and_naive_times_are_refused() -> None:
    phase, entries, _ = scored_board("plain")
    later = RETRIEVED_AT.astimezone(timezone(timedelta(hours=-5)))
    record = every_eval_ever_records(phase, entries[:1], retrieved_at=later)[0]
    assert record["source_metadata"]["additional_details"]["retrieved_at"] == "2026-12-01T09:30:00Z"
    with pytest.raises(ExportError, match="retrieved_at must carry a time zone"):
        every_eval_ever_records(phase, entries, retrieved_at=datetime(2026, 12, 1))


def test_an_entry_whose_ranking_figure_is_not_shown_is_left_out() -> None:
    phase, entries, _ = scored_board("creak")
    withheld = type(entries[0])(**{**entries[0].__dict__, "figures": {}})
    out = every_eval_ever_records(phase, [withheld, *entries[1:]], retrieved_at=RETRIEVED_AT)
    shown = [e.display_name for e in entries[1:] if not e.is_baseline]
    assert [r["model_info"]["additional_details"]["display_name"] for r in out] == shown
    assert len(shown) == 2
