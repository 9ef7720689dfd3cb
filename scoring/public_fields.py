"""Which fields of an item the public questions file may carry: one allow list (docs/FORMATS.md, Public questions file).

A field is public when it is one of ``ALWAYS_PUBLIC``, a breakdown the phase config
names, or one the organizer marks public (config ``"public_fields"``); every other
field of a label record stays hidden, whatever its name. ``label`` and ``split`` are
never public: the answer, and which leaderboard an item counts on. The platform
derives questions with this rule and the importers check theirs against it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

from scoring.types import LabelFileError

ALWAYS_PUBLIC: tuple[str, ...] = ("id", "category", "popularity", "group", "pair")
NEVER_PUBLIC: frozenset[str] = frozenset({"label", "split"})


@dataclass(frozen=True)
class FieldReport:
    """The fields a public file carries and the fields of the source records it leaves out."""

    kept: tuple[str, ...]
    withheld: tuple[str, ...]

    def describe(self) -> str:
        """Return the report as one sentence for an organizer."""
        withheld = ", ".join(self.withheld) or "nothing"
        return f"The public questions file carries {', '.join(self.kept) or 'no field'}; withheld: {withheld}."


def check_public_fields(value: object, *, breakdowns: Iterable[str] = ()) -> tuple[str, ...]:
    """Return a config's ``public_fields`` checked; LabelFileError names a field that may never be public."""
    if value is None:
        value = []
    if not isinstance(value, list) or not all(isinstance(f, str) and f for f in value):
        raise LabelFileError("phase config: public_fields must be a list of field names")
    if len(set(value)) != len(value):
        raise LabelFileError("phase config: public_fields lists a field twice")
    for where, names in (("public_fields", value), ("breakdowns", list(breakdowns))):
        hidden = [f for f in names if f in NEVER_PUBLIC]
        if hidden:
            raise LabelFileError(f"phase config: {hidden[0]!r} cannot be in {where}: it is never public "
                                 "(the answer, or which leaderboard an item counts on)")
    return tuple(value)


def public_field_names(*, breakdowns: Iterable[str] = (), marked: Iterable[str] = ()) -> frozenset[str]:
    """Return the fields a public record keeps: the always-public ones, the breakdowns and the marked ones."""
    return frozenset((*ALWAYS_PUBLIC, *breakdowns, *marked)) - NEVER_PUBLIC


def public_record(record: Mapping[str, Any], allowed: AbstractSet[str]) -> dict[str, Any]:
    """Return record without the fields that are not allowed, in its own key order."""
    return {key: value for key, value in record.items() if key in allowed}


def field_report(sources: Iterable[Mapping[str, Any]], public: Iterable[Mapping[str, Any]]) -> FieldReport:
    """Return the fields the public records carry and the fields of the source records they leave out."""
    kept = _fields(public)
    return FieldReport(kept=kept, withheld=tuple(f for f in _fields(sources) if f not in kept))


def _fields(records: Iterable[Mapping[str, Any]]) -> tuple[str, ...]:
    """Return every key of records, in first-seen order."""
    seen: dict[str, None] = {}
    for record in records:
        seen.update(dict.fromkeys(record))
    return tuple(seen)
