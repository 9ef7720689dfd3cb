"""Describe handlers with ``@operation`` and generate the OpenAPI 3.1 document from them.

Paths and path parameters come from the Flask URL map, schemas from the pydantic models
in ``schemas``: nothing in the document is written by hand, so it cannot drift.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from flask import Flask
from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from leaderboard.web.api import schemas
from leaderboard.web.converters import MAX_ID

F = TypeVar("F", bound=Callable[..., Any])
Auth = Literal["none", "optional", "participant", "organizer"]
Mode = Literal["validation", "serialization"]
Refs = dict[tuple[type[BaseModel], Mode], Any]

ERROR_TEXT = {
    400: "Invalid input; for a prediction file, `details` is the errors object of docs/FORMATS.md#validation-problems.",
    401: "No token, or the token is invalid or revoked.",
    403: "The token's user may not do this: organizers only, and only on a competition they own; or, for an "
         "upload, an account that must still confirm its email or be approved to take part (nothing was stored).",
    404: "Not found, or not visible to the caller.",
    409: "The request clashes with the current state (e.g. phase not open, slug taken).",
    413: "The upload is larger than the instance accepts; `details` gives the limit (`limit_bytes`, `limit`).",
    429: "Over the submission quota (`details.resets_at`) or the rate limit; see `Retry-After`.",
    503: "A part of the platform is away; nothing was charged; see `Retry-After`. `details.unavailable` says which: "
         "`storage` (the object store) or `database` (away, or locked past its busy timeout); or scoring is "
         "unavailable (the phase's label file failed its integrity check).",
}
TAGS = [
    {"name": "phases", "description": "Phase details, quotas and leaderboards."},
    {"name": "submissions", "description": "Upload prediction files and read their scores."},
    {"name": "competitions", "description": "Browse competitions."},
    {"name": "teams",
     "description": "Teams of a competition: create, join with an invite code, leave (docs/ENTRIES.md)."},
    {"name": "participation", "description": "Ask to take part in a competition that requires approval; its "
     "organizers approve or refuse each account."},
    {"name": "organizers", "description": "Create competitions and phases; open, close and rescore."},
    {"name": "meta", "description": "This document."},
]
BEARER = {"type": "http", "scheme": "bearer", "description": "Personal API token (tb_...)."}
AUTH_TEXT = {
    "none": "",
    "optional": "Anyone; a token adds caller-specific data.",
    "participant": "Needs a token.",
    "organizer": "Needs an organizer's token.",
}
_PATH_ARG = re.compile(r"<(?:(\w+)(?:\([^)]*\))?:)?(\w+)>")


@dataclass(frozen=True)
class Operation:
    """What the document says about one handler."""

    summary: str
    response: type[BaseModel] | None
    status: int = 200
    auth: Auth = "none"
    body: type[BaseModel] | None = None
    form: type[BaseModel] | None = None
    query: type[BaseModel] | None = None
    headers: tuple[tuple[str, str], ...] = ()
    errors: tuple[int, ...] = ()
    media: tuple[tuple[str, str], ...] = ()
    tag: str = "api"
    access: str = ""  # who may call it, when the auth level's sentence is not the whole story


def operation(summary: str, response: type[BaseModel] | None, **options: Any) -> Callable[[F], F]:
    """Attach an OpenAPI description to a handler."""

    def decorate(view: F) -> F:
        view.openapi = Operation(summary=summary, response=response, **options)  # type: ignore[attr-defined]
        return view

    return decorate


def build_document(app: Flask, *, version: str) -> dict[str, Any]:
    """Return the OpenAPI 3.1 document of every described API handler of app."""
    operations = []
    for rule in app.url_map.iter_rules():
        spec = getattr(app.view_functions.get(rule.endpoint), "openapi", None)
        if rule.endpoint.startswith("api.") and spec is not None:
            for method in sorted((rule.methods or set()) - {"HEAD", "OPTIONS"}):
                operations.append((rule.rule, method.lower(), rule.endpoint, spec))
    refs, components = _component_schemas([op for *_, op in operations])
    paths: dict[str, dict[str, Any]] = {}
    for path, method, endpoint, spec in sorted(operations, key=lambda item: item[0]):
        openapi_path, parameters = _path_and_parameters(path)
        paths.setdefault(openapi_path, {})[method] = _operation(spec, endpoint, parameters, refs)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Tailboard API",
            "version": version,
            "description": "Submit prediction files, read scores and rankings, manage phases.",
        },
        "tags": TAGS,
        "paths": paths,
        "components": {
            "schemas": components,
            "securitySchemes": {"bearerAuth": BEARER},
        },
    }


def _component_schemas(specs: list[Operation]) -> tuple[Refs, dict[str, Any]]:
    wanted: set[tuple[type[BaseModel], Mode]] = {(schemas.Error, "serialization")}
    for spec in specs:
        if spec.response is not None:
            wanted.add((spec.response, "serialization"))
        for model in (spec.body, spec.form):
            if model is not None:
                wanted.add((model, "validation"))
    ordered = sorted(wanted, key=lambda item: (item[0].__name__, item[1]))
    refs, document = models_json_schema(ordered, ref_template="#/components/schemas/{model}")
    return refs, document.get("$defs", {})  # type: ignore[return-value]  # only BaseModels were passed


def _path_and_parameters(rule: str) -> tuple[str, list[dict[str, Any]]]:
    parameters = []
    for converter, name in _PATH_ARG.findall(rule):
        if converter == "id":
            schema: dict[str, Any] = {"type": "integer", "minimum": 1, "maximum": MAX_ID}
        else:
            schema = {"type": {"int": "integer", "float": "number"}.get(converter, "string")}
        parameters.append({"name": name, "in": "path", "required": True, "schema": schema})
    return _PATH_ARG.sub(lambda m: "{" + m.group(2) + "}", rule), parameters


def _operation(spec: Operation, endpoint: str, parameters: list[dict[str, Any]], refs: Refs) -> dict[str, Any]:
    result: dict[str, Any] = {
        "operationId": endpoint.removeprefix("api."),
        "summary": spec.summary,
        "description": spec.access or AUTH_TEXT[spec.auth],
        "tags": [spec.tag],
        "parameters": parameters + _query_parameters(spec.query) + _header_parameters(spec.headers),
        "responses": _responses(spec, refs),
    }
    if spec.auth in ("participant", "organizer"):
        result["security"] = [{"bearerAuth": []}]
    elif spec.auth == "optional":
        result["security"] = [{}, {"bearerAuth": []}]
    if spec.body is not None:
        schema = refs[(spec.body, "validation")]
        result["requestBody"] = {"required": True, "content": {"application/json": {"schema": schema}}}
    if spec.form is not None:
        schema = refs[(spec.form, "validation")]
        result["requestBody"] = {"required": True, "content": {"multipart/form-data": {"schema": schema}}}
    return result


def _query_parameters(model: type[BaseModel] | None) -> list[dict[str, Any]]:
    if model is None:
        return []
    schema = model.model_json_schema()
    required = set(schema.get("required", []))
    return [
        {"name": name, "in": "query", "required": name in required, "schema": prop,
         "description": prop.get("description", "")}
        for name, prop in schema["properties"].items()
    ]


def _header_parameters(headers: tuple[tuple[str, str], ...]) -> list[dict[str, Any]]:
    return [
        {"name": name, "in": "header", "required": False, "description": text,
         "schema": {"type": "string", "maxLength": 200}}
        for name, text in headers
    ]


def _responses(spec: Operation, refs: Refs) -> dict[str, Any]:
    ok: dict[str, Any] = {"description": spec.summary}
    content: dict[str, Any] = {}
    if spec.response is not None:
        content["application/json"] = {"schema": refs[(spec.response, "serialization")]}
    for media, description in spec.media:  # one operation per body type: a client parses one kind of answer
        content[media] = {"schema": {"type": "string", "description": description}}
    if content:
        ok["content"] = content
    error_ref = {"application/json": {"schema": refs[(schemas.Error, "serialization")]}}
    codes = set(spec.errors) | {401, 429}
    if spec.auth in ("participant", "organizer"):
        codes.add(401)
    if spec.auth == "organizer":
        codes.add(403)
    responses: dict[str, Any] = {str(spec.status): ok}
    for code in sorted(codes):
        entry: dict[str, Any] = {"description": ERROR_TEXT[code], "content": error_ref}
        if code in (429, 503):
            entry["headers"] = {"Retry-After": {"description": "Seconds to wait.", "schema": {"type": "integer"}}}
        responses[str(code)] = entry
    return responses
