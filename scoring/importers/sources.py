"""Reading a benchmark's released files: text, JSON Lines, one JSON array, CSV with line numbers.

Every failure is a ``SourceFormatError`` naming the file (CLI exit 3).
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from scoring.importers.common import SourceFormatError


def read_text(path: Path) -> str:
    """Return a source file's text (UTF-8, BOM allowed) or raise SourceFormatError."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SourceFormatError(f"cannot read {path}: {exc.strerror or exc}") from exc
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SourceFormatError(f"{path.name} is not UTF-8 text (byte {exc.start})") from exc


def read_json_lines(path: Path, what: str, *, parse_constant: Any = None) -> list[tuple[int, Any]]:
    """Return (1-based line, value) for every non-blank line of a JSON Lines file."""
    text = read_text(path)
    if text.lstrip().startswith("["):
        raise SourceFormatError(f"{path.name} is one JSON array; {what} files are JSON Lines")
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append((number, json.loads(line, parse_constant=parse_constant)))
        except json.JSONDecodeError as exc:
            raise SourceFormatError(
                f"{path.name} line {number} is not JSON ({exc.msg}); expected {what} JSON Lines"
            ) from exc
    if not out:
        raise SourceFormatError(f"{path.name} has no records")
    return out


def read_json_array(path: Path, what: str) -> list[Any]:
    """Return the elements of a file that holds one JSON array."""
    try:
        value = json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise SourceFormatError(
            f"{path.name} is not one JSON document (line {exc.lineno}: {exc.msg}); "
            f"{what} files are one JSON array"
        ) from exc
    if not isinstance(value, list):
        raise SourceFormatError(f"{path.name} holds a JSON {type(value).__name__}, "
                                f"not the JSON array of a {what} file")
    if not value:
        raise SourceFormatError(f"{path.name} has no records")
    return value


def require_keys(records: list[tuple[int, Any]], keys: tuple[str, ...], what: str, *,
                 name: str, unit: str) -> None:
    """Raise SourceFormatError unless every record is an object with ``keys``."""
    for where, record in records:
        if not isinstance(record, dict):
            raise SourceFormatError(f"{name} {unit} {where} is not a JSON object; "
                                    f"not a {what} file")
        missing = [k for k in keys if k not in record]
        if missing:
            raise SourceFormatError(f"{name} {unit} {where} has no {', '.join(missing)}; "
                                    f"not a {what} file")


def first_seen(ids: list[str]) -> dict[str, int]:
    """Map each id to the position of its first occurrence in ``ids``."""
    seen: dict[str, int] = {}
    for position, item_id in enumerate(ids):
        seen.setdefault(item_id, position)
    return seen


def read_csv_rows(path: Path) -> list[tuple[int, list[str]]]:
    """Return (1-based starting line, cells) for every CSV record."""
    reader = csv.reader(io.StringIO(read_text(path), newline=""))
    out = []
    try:
        while True:
            start = reader.line_num + 1
            out.append((start, next(reader)))
    except StopIteration:
        return out
    except csv.Error as exc:
        raise SourceFormatError(f"{path.name} is not CSV: {exc}") from exc
