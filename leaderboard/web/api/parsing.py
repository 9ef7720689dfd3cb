"""Turn a request into a validated pydantic model, or InvalidInput naming each bad field."""

from __future__ import annotations

from typing import Any, TypeVar

from flask import Response, jsonify, request
from pydantic import BaseModel, ValidationError
from werkzeug.datastructures import FileStorage

from leaderboard.board import FLAG_FILTERS, BoardQuery
from leaderboard.platform import InvalidInput

M = TypeVar("M", bound=BaseModel)
MAX_TEXT_FILE = 1024 * 1024  # a config sent as a file part is small; refuse anything bigger


def parse_json(model: type[M]) -> M:
    """Return the JSON body as model; InvalidInput when it is not a valid object."""
    data = request.get_json(silent=True)
    if not isinstance(data, dict):
        raise InvalidInput("Send a JSON object with 'Content-Type: application/json'.")
    return _validate(model, data)


def parse_query(model: type[M]) -> M:
    """Return the query string as model; InvalidInput naming each bad parameter."""
    return _validate(model, request.args.to_dict())


def board_query(wanted: Any) -> BoardQuery:
    """Return the board query of a parsed LeaderboardQuery or BoardFilters (a format, or no page, asks every row)."""
    flags = {key: getattr(wanted, key) for key in FLAG_FILTERS if getattr(wanted, key) is not None}
    every_row = getattr(wanted, "format", None) is not None or not hasattr(wanted, "page")
    return BoardQuery(view=wanted.view, page=getattr(wanted, "page", 1), per_page=getattr(wanted, "per_page", 50),
                      sort=wanted.sort, order=wanted.order, q=wanted.q, flags=flags, prompting=wanted.prompting,
                      every_row=every_row)


def parse_form(model: type[M], *, text_files: tuple[str, ...] = ()) -> tuple[M, dict[str, FileStorage]]:
    """Return the multipart form as model and its uploaded files by field name.

    File fields are checked for presence only (their content is streamed later, never
    read here); fields named in text_files may come as a file part or a text part.
    """
    data: dict[str, Any] = {}
    for name, value in request.form.items():
        field = model.model_fields.get(name)
        if value == "" and field is not None and field.default is None:
            continue  # an empty optional field means "not given"
        data[name] = value
    files = {name: f for name, f in request.files.items() if f.filename or name in text_files}
    for name, upload in files.items():
        data[name] = _read_text(name, upload) if name in text_files else b""
    return _validate(model, data), {name: f for name, f in files.items() if name not in text_files}


def respond(model: BaseModel, status: int = 200) -> tuple[Response, int]:
    """Serialize a response model as JSON with status."""
    return jsonify(model.model_dump(mode="json", exclude_unset=True)), status


def json_body(model: BaseModel) -> bytes:
    """Return a response model as the JSON bytes respond() would send."""
    return bytes(jsonify(model.model_dump(mode="json", exclude_unset=True)).get_data())


def _read_text(name: str, upload: FileStorage) -> str:
    raw = upload.stream.read(MAX_TEXT_FILE + 1)
    if len(raw) > MAX_TEXT_FILE:
        raise InvalidInput(f"The field '{name}' is larger than 1 MiB.")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InvalidInput(f"The field '{name}' is not UTF-8 text.") from None


def _validate(model: type[M], data: dict[str, Any]) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as error:
        raise InvalidInput(*_problems(error)) from None


def _problems(error: ValidationError) -> tuple[str, list[dict[str, Any]]]:
    """Return a summary and the first problem of each field."""
    by_field: dict[str | None, str] = {}
    for item in error.errors(include_url=False, include_input=False):
        if item["type"] == "none_required":
            continue  # the "left out" branch of an optional form field; its other branch says what is wrong
        by_field.setdefault(str(item["loc"][0]) if item["loc"] else None, item["msg"])
    problems = [{"field": field, "message": message} for field, message in by_field.items()]
    summary = "; ".join(f"{field}: {message}" if field else message for field, message in by_field.items())
    return f"Invalid input: {summary}.", problems
