"""The rules of an Every Eval Ever 0.3.0 aggregate record, as read from evaleval/every_eval_ever, written anew.

Two layers, as the format has them: the JSON schema (required fields, types,
enumerations, closed objects) and the datastore's checks on top of it (scores finite
and inside their declared bounds, bounds ordered, uncertainty finite, both model
deployment axes present). The schema part below is this project's own encoding of the
rules it relies on, not the published file; ``problems(record)`` returns every broken
rule as "where: what" lines.
"""

from __future__ import annotations

import math
from typing import Any

from jsonschema import Draft7Validator

STRING_MAP = {"type": "object", "additionalProperties": {"type": "string"}}
BOUND = {"anyOf": [{"type": "number"}, {"enum": ["Infinity", "-Infinity"]}, {"type": "null"}]}

MODEL_INFO = {
    "type": "object",
    "required": ["name", "id", "additional_details"],
    "properties": {
        "name": {"type": "string"}, "id": {"type": "string"}, "developer": {"type": "string"},
        "inference_platform": {"type": "string"},
        "inference_engine": {"type": "object", "properties": {"name": {"type": "string"},
                                                              "version": {"type": "string"}}},
        "additional_details": {
            "type": "object",
            "required": ["deployment_type", "model_availability"],
            "properties": {"deployment_type": {"enum": ["self_deployed", "externally_managed", "unknown"]},
                           "model_availability": {"enum": ["open_weights", "closed_weights", "unknown"]}},
            "additionalProperties": {"type": "string"},
        },
    },
}

SOURCE_DATA = {
    "type": "object",
    "required": ["dataset_name", "source_type"],
    "properties": {"dataset_name": {"type": "string"}, "additional_details": STRING_MAP},
    "oneOf": [
        {"required": ["url"], "properties": {"source_type": {"const": "url"},
                                             "url": {"type": "array", "minItems": 1, "items": {"type": "string"}}}},
        {"properties": {"source_type": {"const": "hf_dataset"}, "hf_repo": {"type": "string"},
                        "hf_split": {"type": "string"}, "samples_number": {"type": "integer"},
                        "sample_ids": {"type": "array", "items": {"type": "string"}}}},
        {"properties": {"source_type": {"const": "other"}}},
    ],
}

METRIC_CONFIG = {
    "type": "object",
    "required": ["lower_is_better"],
    "properties": {
        **{key: {"type": "string"} for key in ("evaluation_description", "metric_id", "metric_name", "metric_kind",
                                              "metric_unit")},
        "metric_parameters": {"type": "object",
                              "additionalProperties": {"type": ["string", "number", "boolean", "null"]}},
        "lower_is_better": {"type": "boolean"},
        "score_type": {"enum": ["binary", "continuous", "levels"]},
        "level_names": {"type": "array", "items": {"type": "string"}},
        "has_unknown_level": {"type": "boolean"},
        "min_score": BOUND, "max_score": BOUND,
        "additional_details": STRING_MAP,
    },
    # "levels" needs its level names, "continuous" both bounds
    "allOf": [
        {"if": {"required": ["score_type"], "properties": {"score_type": {"const": "levels"}}},
         "then": {"required": ["level_names", "has_unknown_level"]}},
        {"if": {"required": ["score_type"], "properties": {"score_type": {"const": "continuous"}}},
         "then": {"required": ["min_score", "max_score"]}},
    ],
}

SCORE_DETAILS = {
    "type": "object",
    "required": ["score"],
    "properties": {
        "score": {"type": "number"},
        "details": STRING_MAP,
        "uncertainty": {"type": "object", "properties": {
            "standard_error": {"type": "object", "required": ["value"],
                               "properties": {"value": {"type": "number"}, "method": {"type": "string"}}},
            "confidence_interval": {"type": "object", "required": ["lower", "upper"], "properties": {
                "lower": {"type": "number"}, "upper": {"type": "number"},
                "confidence_level": {"type": "number", "minimum": 0, "maximum": 1}, "method": {"type": "string"}}},
            "standard_deviation": {"type": "number"},
            "num_samples": {"type": "integer"},
            "num_bootstrap_samples": {"type": "integer"},
        }},
    },
}

GENERATION_CONFIG = {"type": "object", "properties": {
    "generation_args": {"type": "object", "additionalProperties": False, "properties": {
        "temperature": {"type": ["null", "number"]}, "top_p": {"type": ["null", "number"]},
        "top_k": {"type": ["null", "number"]}, "max_tokens": {"type": "integer", "minimum": 1},
        "execution_command": {"type": "string"}, "reasoning": {"type": "boolean"},
        "prompt_template": {"type": "string"}, "agentic_eval_config": {"type": "object"},
        "eval_plan": {"type": "object"}, "eval_limits": {"type": "object"}, "sandbox": {"type": "object"},
        "max_attempts": {"type": "integer"}, "incorrect_attempt_feedback": {"type": "string"}}},
    "additional_details": STRING_MAP,
}}

RECORD = {
    "type": "object",
    "additionalProperties": False,
    "required": ["schema_version", "evaluation_id", "retrieved_timestamp", "source_metadata", "model_info",
                 "eval_library", "evaluation_results"],
    "properties": {
        "schema_version": {"type": "string"},
        "evaluation_id": {"type": "string"},
        "evaluation_timestamp": {"type": "string"},
        "retrieved_timestamp": {"type": "string"},
        "source_metadata": {
            "type": "object",
            "required": ["source_type", "source_organization_name", "evaluator_relationship"],
            "properties": {
                "source_name": {"type": "string"},
                "source_type": {"enum": ["documentation", "evaluation_run"]},
                "source_organization_name": {"type": "string"},
                "source_organization_url": {"type": "string"},
                "source_organization_logo_url": {"type": "string"},
                "evaluator_relationship": {"enum": ["first_party", "third_party", "collaborative", "other"]},
                "additional_details": STRING_MAP,
            },
        },
        "eval_library": {"type": "object", "required": ["name", "version"],
                         "properties": {"name": {"type": "string"}, "version": {"type": "string"},
                                        "additional_details": STRING_MAP}},
        "model_info": MODEL_INFO,
        "evaluation_results": {"type": "array", "items": {
            "type": "object",
            "required": ["evaluation_name", "source_data", "metric_config", "score_details"],
            "properties": {
                "evaluation_result_id": {"type": "string"},
                "evaluation_name": {"type": "string"},
                "evaluation_timestamp": {"type": "string"},
                "source_data": SOURCE_DATA,
                "metric_config": METRIC_CONFIG,
                "score_details": SCORE_DETAILS,
                "generation_config": GENERATION_CONFIG,
            },
        }},
        "detailed_evaluation_results": {"type": "object", "required": ["format", "file_path"]},
    },
}

_VALIDATOR = Draft7Validator(RECORD)


def problems(record: Any) -> list[str]:
    """Return every rule a record breaks, schema rules first, then the datastore's checks."""
    found = [f"{'.'.join(map(str, error.absolute_path)) or '(record)'}: {error.message}"
             for error in sorted(_VALIDATOR.iter_errors(record), key=lambda e: list(map(str, e.absolute_path)))]
    if not found:
        found += _datastore_problems(record)
    return found


def _datastore_problems(record: dict[str, Any]) -> list[str]:
    """Return what the datastore's checks refuse in a schema-valid record."""
    found = []
    if record["schema_version"] != "0.3.0":
        found.append(f"schema_version: {record['schema_version']!r} is not 0.3.0")
    for key in ("retrieved_timestamp", "evaluation_timestamp"):
        if key in record and not record[key].isdigit():
            found.append(f"{key}: {record[key]!r} is not Unix seconds")
    ids = [r.get("evaluation_result_id") for r in record["evaluation_results"] if "evaluation_result_id" in r]
    if len(ids) != len(set(ids)):
        found.append("evaluation_results: evaluation_result_id repeats")
    for index, result in enumerate(record["evaluation_results"]):
        found += [f"evaluation_results.{index}.{p}" for p in _score_problems(result)]
    return found


def _score_problems(result: dict[str, Any]) -> list[str]:
    """Return a result's broken score rules: finite score and uncertainty, ordered bounds holding the score."""
    metric, details = result["metric_config"], result["score_details"]
    score = details["score"]
    if not _finite(score):
        return [f"score_details.score: {score!r} is not a finite number"]
    found = []
    interval = details.get("uncertainty", {}).get("confidence_interval", {})
    found += [f"uncertainty.confidence_interval.{k}: not finite" for k, v in interval.items()
              if k != "method" and not _finite(v)]
    low, high = _bound(metric.get("min_score")), _bound(metric.get("max_score"))
    if metric.get("score_type") == "continuous" and (low is None or high is None):
        found.append("metric_config: a continuous metric needs both bounds (null is not unbounded)")
    if low is not None and high is not None and low > high:
        found.append("metric_config: min_score is greater than max_score")
    elif (low is not None and score < low) or (high is not None and score > high):
        found.append(f"score_details.score: {score} lies outside [{metric.get('min_score')}, "
                     f"{metric.get('max_score')}]")
    return found


def _bound(value: Any) -> float | None:
    if value in ("Infinity", "-Infinity"):
        return math.inf if value == "Infinity" else -math.inf
    return float(value) if _finite(value) else None


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
