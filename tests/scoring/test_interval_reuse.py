"""Intervals kept from an earlier scoring (scoring.metrics.reuse): the same result as from nothing, fewer draws."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from scoring import evaluate, load_labels, read_predictions
from scoring.evaluate import evaluation
from scoring.metrics import batch as batch_module
from scoring.metrics.counts import SliceCounts
from scoring.metrics.reuse import fingerprint, known_intervals

KINDS = {
    "choice": {"options": ["A", "B", "C", "D"], "popularity": "number"},
    "binary": {"options": ["yes", "no"], "popularity": "bucket"},
}


def label_rows(kind: str, n: int, seed: int) -> list[dict[str, Any]]:
    """Return label rows with categories, popularity, a private split, groups and head/tail pairs."""
    rng = np.random.default_rng(seed)
    options = KINDS[kind]["options"]
    rows = []
    for i in range(n):
        row: dict[str, Any] = {"id": f"q{i}", "label": options[int(rng.integers(0, len(options)))],
                               "category": f"c{i % 7}", "split": "private" if rng.random() < 0.3 else "public",
                               "group": f"g{i // 3}"}
        if KINDS[kind]["popularity"] == "number":
            row["popularity"] = int(rng.integers(1, 5000))
            row["pair"] = f"p{i // 2}"
        else:
            row["popularity"] = ("head", "torso", "tail")[i % 3]
        rows.append(row)
    return rows


def label_file(rows: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def prediction_file(kind: str, rows: list[dict[str, Any]], seed: int) -> bytes:
    """Return a prediction CSV with confidences: right on a random share, some abstentions."""
    rng = np.random.default_rng(seed)
    options = KINDS[kind]["options"]
    lines = ["id,prediction,confidence"]
    for row in rows:
        answer = row["label"] if rng.random() < 0.7 else options[int(rng.integers(0, len(options)))]
        lines.append(f"{row['id']},," if rng.random() < 0.05 else f"{row['id']},{answer},{rng.random():.3f}")
    return ("\n".join(lines) + "\n").encode()


def fixed(kind: str, rows: list[dict[str, Any]], items: list[int]) -> list[dict[str, Any]]:
    """Return the rows with the labels of some items changed (a label fix)."""
    options = KINDS[kind]["options"]
    out = [dict(r) for r in rows]
    for i in items:
        out[i]["label"] = options[(options.index(out[i]["label"]) + 1) % len(options)]
    return out


def score(rows: list[dict[str, Any]], data: bytes, known: dict[str, Any] | None = None) -> Any:
    labels = load_labels(label_file(rows))
    return evaluation(labels, read_predictions(data, labels), known=known)


def stored(found: Any) -> tuple[dict[str, Any], Any]:
    """Return a result and its slice list as the database gives them back (through JSON)."""
    return json.loads(json.dumps(found.results)), json.loads(json.dumps(found.tables))


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("fix", [[], [5], [0, 1, 2, 50, 51, 120], list(range(0, 240, 3))])
def test_a_rescore_reusing_intervals_gives_the_result_of_a_scoring_from_nothing(kind: str, fix: list[int]) -> None:
    rows = label_rows(kind, 240, seed=1)
    data = prediction_file(kind, rows, seed=2)
    earlier = stored(score(rows, data))
    new_rows = fixed(kind, rows, fix)
    again = score(new_rows, data, known=known_intervals(*earlier))
    fresh = evaluate(load_labels(label_file(new_rows)), read_predictions(data, load_labels(label_file(new_rows))))
    assert json.dumps(again.results) == json.dumps(fresh)  # same numbers, same keys in the same order
    assert again.tables == score(new_rows, data).tables


def test_every_slice_and_bin_is_listed_at_its_place() -> None:
    rows = label_rows("choice", 240, seed=3)
    found = score(rows, prediction_file("choice", rows, seed=4))
    places = [tuple(path) for path, _ in found.tables]
    assert ("overall",) in places and ("splits", "private", "overall") in places
    assert ("breakdowns", "category", "c3") in places and ("popularity_curve", 0) in places
    assert ("popularity", "head") in places
    for path, _ in found.tables:
        node: Any = found.results
        for key in path:
            node = node[key]
        assert "ci" in node and "n" in node


def test_only_tables_that_changed_are_drawn_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """The twin: a kept interval shows where the tables are unchanged, and only there (so reuse is real)."""
    rows = label_rows("binary", 240, seed=5)
    data = prediction_file("binary", rows, seed=6)
    results, tables = stored(score(rows, data))
    marked = {key: {metric: [-1.0, -1.0] for metric in ci} for key, ci in known_intervals(results, tables).items()}
    drawn: list[int] = []
    original = batch_module._slice_bounds
    monkeypatch.setattr(batch_module, "_slice_bounds", lambda counts: drawn.append(len(counts)) or original(counts))
    new_rows = fixed("binary", rows, [9])  # item 9: category c2, popularity "head", one split
    again = score(new_rows, data, known=marked).results
    assert again["breakdowns"]["category"]["c4"]["ci"]["accuracy"] == [-1.0, -1.0]  # unchanged: taken
    assert again["popularity"]["tail"]["ci"]["accuracy"] == [-1.0, -1.0]
    assert again["breakdowns"]["category"]["c2"]["ci"]["accuracy"] != [-1.0, -1.0]  # changed: drawn
    assert again["overall"]["ci"]["accuracy"] != [-1.0, -1.0]
    assert again["popularity"]["head"]["ci"]["accuracy"] != [-1.0, -1.0]
    split = "private" if rows[9]["split"] == "private" else "public"
    other = "public" if split == "private" else "private"
    assert again["splits"][split]["overall"]["ci"]["accuracy"] != [-1.0, -1.0]
    assert again["splits"][other]["overall"]["ci"]["accuracy"] == [-1.0, -1.0]
    assert drawn == [6]  # overall, c2 and head; in the whole file and in the item's split


def test_a_fingerprint_names_every_table_an_interval_reads() -> None:
    cells = np.array([[3, 4, 5], [1, 6, 2]])
    base = fingerprint(SliceCounts(cells=cells, binary=True), kind="slice")
    assert fingerprint(SliceCounts(cells=cells.copy(), binary=True), kind="slice") == base
    assert fingerprint(SliceCounts(cells=cells, binary=True), kind="bin") != base
    assert fingerprint(SliceCounts(cells=cells, binary=False), kind="slice") != base
    assert fingerprint(SliceCounts(cells=cells + np.eye(2, 3, 1, dtype=int), binary=True), kind="slice") != base
    assert fingerprint(SliceCounts(cells=cells, binary=True, groups=np.array([2, 3])), kind="slice") != base


def test_odd_or_missing_earlier_data_is_ignored() -> None:
    assert known_intervals(None, None) == {}
    assert known_intervals({"overall": {"ci": {"accuracy": [0.1, 0.2]}}}, [[["overall"], "k"], ["x"], [["nope"], "j"],
                                                                         [[0], "z"], "junk"]) == {
        "k": {"accuracy": [0.1, 0.2]}}
