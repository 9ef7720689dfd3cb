"""Issue 20 item 7: the phase edit form's picker lists every path a label set can produce, spelled out."""

from __future__ import annotations

import json

from scoring import load_labels
from scoring.producible import Producible, check_paths

ITEMS = [
    {"id": f"q{i}", "label": i % 2 == 0, "category": "science" if i < 4 else "history",
     "popularity": "head" if i % 3 else "tail"} for i in range(8)
]


def _labels() -> object:
    """Return a small binary label set with categories and head/tail popularity."""
    return load_labels(("\n".join(json.dumps(r) for r in ITEMS) + "\n").encode(), {"task_type": "binary"})


def test_every_listed_path_is_valid_and_covers_each_family() -> None:
    labels = _labels()
    paths = Producible(labels).paths()
    check_paths(labels, paths)  # raises when one cannot be produced
    assert "accuracy" in paths and "popularity.tail.accuracy" in paths and "popularity.gap.accuracy" in paths
    assert "breakdowns.category.history.accuracy" in paths and "breakdowns.category.science.answer_rate" in paths
    assert not any(p.startswith("popularity.torso.") or p.startswith("pairs.") for p in paths)
    assert len(paths) == len(set(paths))
