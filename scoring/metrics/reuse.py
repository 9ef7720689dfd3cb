"""Intervals kept from an earlier scoring: scoring a file again draws the bootstrap only for tables that changed.

A slice's interval is a function of its count tables and nothing else
(scoring.metrics.bootstrap: the same counts always give the same interval, alone or
beside any other slices). So a scoring names each slice's tables by a fingerprint and
lists, beside the result object, the fingerprint found at each slice's place in it
(``Evaluation.tables``, scoring.evaluate). Scoring the same file again (labels fixed,
a breakdown added), a slice whose fingerprint was listed the first time takes the
interval found at that place of the first result instead of drawing it anew; only
slices whose tables changed are drawn. The result is the same object, number for
number, as a scoring from nothing (tests/scoring/test_interval_reuse.py).

A fingerprint names the method too (``METHOD``, the resamples and the seed): a change
to how intervals are drawn must change ``METHOD``, so that no interval of the old
method is taken. Fingerprints are digests of counts of hidden items: they stay on the
server (the scores table), never in a result object, a page, an API answer or an archive.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from scoring.metrics.bootstrap import RESAMPLES, SEED
from scoring.metrics.counts import SliceCounts

METHOD = "percentile-bootstrap-1"
"""The name of how intervals are drawn today; change it with any change to what a table's interval is."""

Path = list[str | int]
"""Where a slice sits in a result object: its keys and list indexes from the top."""
Tables = list[list[Any]]
"""A result's slices as stored: [path, fingerprint] pairs (JSON-ready)."""
Known = dict[str, dict[str, Any]]
"""Intervals found earlier: {fingerprint: the slice's ``ci`` object}."""


def fingerprint(counts: SliceCounts, *, kind: str) -> str:
    """Return the fingerprint of a slice's tables that its intervals depend on (kind: "slice" or "bin")."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(f"{METHOD}|{RESAMPLES}|{SEED}|{kind}|{counts.binary}".encode())
    outcomes = counts.pair_outcomes
    parts = (counts.cells, counts.groups, counts.pairs,
             *((outcomes.head, outcomes.tail, outcomes.count) if outcomes is not None else (None, None, None)))
    for table in parts:
        if table is None:
            digest.update(b"|-")
            continue
        array = np.ascontiguousarray(table, dtype=np.int64)
        digest.update(f"|{array.shape}".encode())
        digest.update(array.tobytes())
    return digest.hexdigest()


def slice_places(result: Mapping[str, Any], filled: Mapping[int, str]) -> Tables:
    """Return [path, fingerprint] of every filled slice object of a result (``filled``: {id(object): fingerprint})."""
    places: Tables = []
    _walk(result, [], filled, places)
    return places


def _walk(node: Mapping[str, Any] | list[Any], path: Path, filled: Mapping[int, str], places: Tables) -> None:
    """Add the filled slice objects under node to places; a slice holds no slice, lists of numbers hold none."""
    items = node.items() if isinstance(node, Mapping) else enumerate(node)
    for key, child in items:
        if isinstance(child, Mapping) or (isinstance(child, list) and child and isinstance(child[0], Mapping)):
            if id(child) in filled:
                places.append([[*path, key], filled[id(child)]])
            else:
                _walk(child, [*path, key], filled, places)


def known_intervals(result: Mapping[str, Any] | None, tables: Sequence[Sequence[Any]] | None) -> Known:
    """Return {fingerprint: ci} of an earlier result and its slice list; nothing when either is missing or odd."""
    if not isinstance(result, Mapping) or not isinstance(tables, Sequence):
        return {}
    known: Known = {}
    for entry in tables:
        if not (isinstance(entry, Sequence) and len(entry) == 2 and isinstance(entry[1], str)):
            continue
        node: Any = result
        for key in entry[0] if isinstance(entry[0], list) else [None]:
            if isinstance(node, Mapping) and isinstance(key, str):
                node = node.get(key)
            elif isinstance(node, list) and isinstance(key, int) and 0 <= key < len(node):
                node = node[key]
            else:
                node = None
                break
        if isinstance(node, Mapping) and isinstance(node.get("ci"), Mapping):
            known[entry[1]] = dict(node["ci"])
    return known
