"""JSON and JSON Lines members as records whose missing keys are reported by member, line and key.

``Record`` is a ``dict``: ``json.dumps`` and database JSON columns take it as one. Only
``record[key]`` differs: a missing key raises ``ArchiveError`` ("manifest.json: missing
key 'phases[0].labels'", "audit.jsonl line 3: missing key 'at'") instead of a bare
``KeyError``. ``record.get`` keeps its usual meaning for optional keys.
"""

from __future__ import annotations

import json
from typing import Any

from scoring.zips.errors import ArchiveError


class Record(dict[str, Any]):
    """A JSON object read from an archive member; ``record[key]`` names member, line and key when absent."""

    def __init__(self, pairs: list[tuple[str, Any]], *, member: str, line: int | None) -> None:
        super().__init__(pairs)
        self.member = member
        self.line = line
        self.path = ""

    def __getitem__(self, key: str) -> Any:
        """Return the value of key (nested records learn their path), or raise ArchiveError naming it."""
        value = super().__getitem__(key)
        _name_children(value, self.child(key))
        return value

    def __missing__(self, key: str) -> Any:
        """Refuse a missing key with a message naming the member, the line and the key's path."""
        raise ArchiveError(f"{self.where()}: missing key {self.child(key)!r}")

    def child(self, key: str) -> str:
        """Return the path of a key of this record ('phases[0].labels')."""
        return f"{self.path}.{key}" if self.path else key

    def where(self) -> str:
        """Return the member (and line) this record was read from, as messages name it."""
        return self.member if self.line is None else f"{self.member} line {self.line}"


def _name_children(value: Any, path: str) -> None:
    """Give a nested record (or the records of a list) their path, for its messages."""
    if isinstance(value, Record):
        value.path = path
    elif isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, Record):
                item.path = f"{path}[{index}]"


def decoder(member: str, line: int | None) -> json.JSONDecoder:
    """Return a JSON decoder that builds Records of this member and line."""
    return json.JSONDecoder(object_pairs_hook=lambda pairs: Record(pairs, member=member, line=line))


def parse_json(text: str, *, member: str) -> Any:
    """Return the JSON value of a whole member, or raise ArchiveError naming the line of the error."""
    try:
        return decoder(member, None).decode(text)
    except json.JSONDecodeError as error:
        raise ArchiveError(f"{member} line {error.lineno}: not valid JSON: {error.msg} "
                           f"(column {error.colno})") from None
    except RecursionError:
        raise ArchiveError(f"{member}: not valid JSON: it is nested too deeply") from None


def parse_jsonl(text: str, *, member: str) -> list[Record]:
    """Return the objects of a JSON Lines member (blank lines skipped), or raise naming the first bad line."""
    records: list[Record] = []
    number = 0
    lines = json.JSONDecoder(object_pairs_hook=lambda pairs: Record(pairs, member=member, line=number))
    for number, line in enumerate(text.split("\n"), start=1):  # the hook reads number
        if not line.strip():
            continue
        try:
            value = lines.decode(line)
        except json.JSONDecodeError as error:
            raise ArchiveError(f"{member} line {number}: not valid JSON: {error.msg} "
                               f"(column {error.colno})") from None
        except RecursionError:
            raise ArchiveError(f"{member} line {number}: not valid JSON: it is nested too deeply") from None
        if not isinstance(value, Record):
            raise ArchiveError(f"{member} line {number}: expected a JSON object, found {_kind(value)}")
        records.append(value)
    return records


def _kind(value: Any) -> str:
    """Return the JSON name of a value's type, for messages."""
    names = {list: "a list", str: "a string", bool: "a boolean", int: "a number", float: "a number"}
    return "null" if value is None else names.get(type(value), type(value).__name__)
