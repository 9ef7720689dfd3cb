"""The readers of JSON Lines and JSON prediction files: each record to a row, with its line.

A ``\\ud800``-style escape of a lone UTF-16 surrogate parses as JSON but is no text: a
record holding one is refused on its line ("Invalid text: ...") instead of reaching
pyarrow, which cannot encode it. Only documents that contain such an escape pay for the check.
"""

from __future__ import annotations

import json
import re
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import Any

from scoring.predictions.formats import file_error
from scoring.predictions.rows import ProblemLog, Rows, collected_rows, shown
from scoring.types import PredictionFileError, Problem

FIELDS = ("id", "prediction", "confidence")
_WS = re.compile(r"[ \t\n\r]*")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")
_SURROGATE = re.compile("[\ud800-\udfff]")


_DECODER = json.JSONDecoder(parse_int=str, parse_float=str, parse_constant=str)
_SCAN = _DECODER.scan_once  # type: ignore[attr-defined]  # the C scanner, no wrapper
_FIELD_SET = frozenset(FIELDS)


def _text(value: Any) -> str:
    """Return a JSON scalar as the text a participant wrote (null is empty)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value  # numbers arrive as their text through parse_int/parse_float
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def lone_surrogate(*texts: str | None) -> str | None:
    """Return the first lone surrogate of the texts as its escape ('\\ud800'), or None when there is none."""
    for text in texts:
        found = _SURROGATE.search(text) if text else None
        if found:
            return f"\\u{ord(found.group()):04x}"
    return None


def surrogate_message(escape: str) -> str:
    """Return the sentence refusing a record that holds a lone surrogate escape."""
    return (f"Invalid text: {escape} is a lone surrogate, not a character. Write the character itself, "
            "or escape it as a surrogate pair (such as \\ud83d\\ude00).")


class _Builder:
    """Collects rows of a JSON or JSON Lines document."""

    def __init__(self, text: str) -> None:
        self.suspect = _SURROGATE_ESCAPE.search(text) is not None  # strings may hold lone surrogates
        self.lines: list[int] = []
        self.ids: list[str | None] = []
        self.values: list[str | None] = []
        self.confidences: list[str | None] = []
        self.has_confidence = False
        self.log = ProblemLog()

    def add(self, line: int, id_: str | None, value: str | None, confidence: str | None) -> None:
        """Append one row, or log the row's lone surrogate instead."""
        if self.suspect:
            escape = lone_surrogate(id_, value, confidence)
            if escape is not None:
                self.log.add(line, None, surrogate_message(escape))
                return
        self.lines.append(line)
        self.ids.append(id_)
        self.values.append(value)
        self.confidences.append(confidence)

    def add_record(self, record: Any, line: int, not_object: str) -> None:
        """Append one {"id", "prediction", "confidence"} object, logging what is wrong."""
        if type(record) is dict and record.keys() <= _FIELD_SET and "prediction" in record:
            id_ = record.get("id")
            if type(id_) is str:  # the common case, kept short for speed
                confidence = None
                if "confidence" in record:
                    self.has_confidence = True
                    confidence = _text(record["confidence"])
                self.add(line, id_, _text(record["prediction"]), confidence)
                return
        self._add_unusual(record, line, not_object)

    def _add_unusual(self, record: Any, line: int, not_object: str) -> None:
        """Append a record that lacks a field, has an unknown one, or is not an object."""
        if not isinstance(record, dict):
            self.log.add(line, None, not_object)
            return
        id_ = record.get("id")
        id_ = id_ if isinstance(id_, str) and not (self.suspect and lone_surrogate(id_)) else None
        if "id" not in record:
            self.log.add(line, None, "Missing field 'id': every prediction needs an id.")
        elif id_ is None:
            self.log.add(line, None, "Invalid id: an id must be a string or a number.")
        for key in record:
            if key not in _FIELD_SET:
                self.log.add(line, id_, f"Unknown field {shown(key)}: the fields are "
                             "id, prediction and optionally confidence.")
        value = _text(record["prediction"]) if "prediction" in record else None
        if value is None:
            self.log.add(line, id_, "Missing field 'prediction'.")
        confidence = _text(record["confidence"]) if "confidence" in record else None
        self.has_confidence = self.has_confidence or "confidence" in record
        self.add(line, id_, value, confidence)

    def rows(self) -> Rows:
        """Return the collected rows as columns."""
        confidences = self.confidences if self.has_confidence else None
        return collected_rows(lines=self.lines, ids=self.ids, values=self.values,
                              confidences=confidences, log=self.log)


def read_jsonl(text: str) -> Rows:
    """Read JSON Lines: one object per line, blank lines ignored."""
    builder = _Builder(text)
    not_object = ("Broken JSON line: each line must be one JSON object such as "
                  '{"id": "q1", "prediction": "true"}.')
    for number, line in enumerate(text.split("\n"), start=1):
        stripped = line.strip(" \t\r")
        if not stripped:
            continue
        try:
            record, end = _SCAN(stripped, 0)
        except (StopIteration, json.JSONDecodeError, RecursionError):
            end = -1
        if end == len(stripped):
            builder.add_record(record, number, not_object)
        else:
            builder.log.add(number, None, _broken_line(line.rstrip("\r")))
    return builder.rows()


def _broken_line(line: str) -> str:
    """Return the sentence saying why one line is not JSON."""
    try:
        _DECODER.decode(line)
    except json.JSONDecodeError as exc:
        return f"Broken JSON line: {exc.msg} at column {exc.colno}."
    except RecursionError:
        return "Broken JSON line: it is nested too deeply."
    return "Broken JSON line."  # not reached: the caller saw it fail


def read_json(text: str) -> Rows:
    """Read one JSON document: a list of objects, or one object mapping id to prediction."""
    builder = _Builder(text)
    try:
        start = _skip(text, 0)
        if text.startswith("[", start):
            end = _scan_list(text, start, builder)
        else:
            value, end = _DECODER.raw_decode(text, start)
            if not isinstance(value, dict):
                raise file_error("A JSON prediction file must hold a list of objects "
                                 "or one object mapping ids to predictions.")
            _read_object(text, start, value, builder)
        if _skip(text, end) != len(text):
            raise json.JSONDecodeError("Extra data", text, _skip(text, end))
    except json.JSONDecodeError as exc:
        message = f"The file is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}."
        raise PredictionFileError([Problem(line=exc.lineno, id=None, message=message)], 1) from None
    except RecursionError:
        raise file_error("The file is not valid JSON: it is nested too deeply.") from None
    if not builder.lines and not builder.log.count:
        raise file_error("The file is empty: it holds no predictions.")
    return builder.rows()


def _skip(text: str, pos: int) -> int:
    """Return the offset of the first non-whitespace character at or after pos."""
    match = _WS.match(text, pos)
    return match.end() if match else pos


class _Lines:
    """Line numbers of increasing offsets in a text, counted incrementally."""

    def __init__(self, text: str) -> None:
        self.text, self.offset, self.line = text, 0, 1

    def at(self, offset: int) -> int:
        """Return the 1-based line of an offset not before the previous one."""
        self.line += self.text.count("\n", self.offset, offset)
        self.offset = offset
        return self.line


def _scan_list(text: str, start: int, builder: _Builder) -> int:
    """Read a JSON list entry by entry, noting the line each entry starts on."""
    lines = _Lines(text)
    not_object = ('Each entry of the list must be an object such as '
                  '{"id": "q1", "prediction": "true"}.')
    pos = _skip(text, start + 1)
    if text.startswith("]", pos):
        return pos + 1
    while True:
        line = lines.at(pos)
        value, pos = _DECODER.raw_decode(text, pos)
        builder.add_record(value, line, not_object)
        pos = _skip(text, pos)
        if text.startswith("]", pos):
            return pos + 1
        if not text.startswith(",", pos):
            raise json.JSONDecodeError("Expecting ',' delimiter", text, pos)
        pos = _skip(text, pos + 1)


def _read_object(text: str, start: int, value: dict[str, Any], builder: _Builder) -> None:
    """Read a top-level object: one record when it has id and prediction, else a mapping."""
    scalar = (str, bool, type(None))
    if "id" in value and "prediction" in value and all(
        isinstance(value[key], scalar) for key in ("id", "prediction")
    ):
        builder.add_record(value, _Lines(text).at(start), "")
        return
    _scan_mapping(text, start, builder)


def _scan_mapping(text: str, start: int, builder: _Builder) -> None:
    """Read an id -> prediction object already known to be valid JSON, key by key."""
    lines = _Lines(text)
    pos = _skip(text, start + 1)
    while not text.startswith("}", pos):
        line = lines.at(pos)
        key, pos = scanstring(text, pos + 1)
        pos = _skip(text, pos) + 1  # past ':'
        value, pos = _DECODER.raw_decode(text, _skip(text, pos))
        builder.add(line, key, _text(value), None)
        pos = _skip(text, pos)
        if text.startswith(",", pos):
            pos = _skip(text, pos + 1)
