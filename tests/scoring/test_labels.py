"""Label files (docs/FORMATS.md): what is accepted, what each error says, and fast == careful reader."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import scoring.labels.loader as labels_module
from scoring.labels import HEAD, TAIL, TORSO, LabelSet, Membership, load_labels
from scoring.types import LabelFileError, PhaseConfig

BINARY = {"task_type": "binary"}
MC = {"task_type": "multiple_choice", "options": ["A", "B", "C", "D"]}


def jsonl(*records: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


def careful(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make load_labels skip the pyarrow pass, so the line-by-line reader does everything."""
    monkeypatch.setattr(labels_module, "parse_fast", lambda *args: None)


def fast_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make load_labels fail if it falls back to the line-by-line reader."""

    def refuse(*args: Any) -> None:
        raise AssertionError("the fast reader fell back to the line-by-line reader")

    monkeypatch.setattr(labels_module, "parse_careful", refuse)


def assert_same(a: LabelSet, b: LabelSet) -> None:
    assert a.config == b.config
    assert a.ids.equals(b.ids)
    for name in ("gold", "popularity", "popularity_value", "groups", "pairs", "split"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert a.has_split == b.has_split
    assert a.popularity_cuts == b.popularity_cuts
    assert a.memberships.keys() == b.memberships.keys()
    for field, m in a.memberships.items():
        other = b.memberships[field]
        assert m.values == other.values
        assert rows(m) == rows(other)


def rows(membership: Membership) -> list[tuple[int, str]]:
    """Return the (item, value) rows of a membership table, sorted."""
    return sorted(zip(membership.items.tolist(), [membership.values[c] for c in membership.codes], strict=False))


VALID_FILES: dict[str, tuple[bytes, dict[str, Any] | None]] = {
    "booleans": (jsonl({"id": "a", "label": True}, {"id": "b", "label": False}), None),
    "yes-no strings": (
        jsonl({"id": "a", "label": " Yes"}, {"id": "b", "label": "FALSE"}, {"id": "c", "label": "1"}), None),
    "numbers 1/0": (jsonl({"id": "a", "label": 1}, {"id": "b", "label": 0}), BINARY),
    "letters": (jsonl({"id": "a", "label": "A"}, {"id": "b", "label": "d"}), None),
    "mc config": (jsonl({"id": "a", "label": "B", "category": "x"}, {"id": "b", "label": "C"}), MC),
    "list categories": (
        jsonl({"id": "a", "label": True, "category": ["x", "y", "x"]}, {"id": "b", "label": False, "category": ["y"]},
              {"id": "c", "label": False}),
        None,
    ),
    "mixed string and list categories": (
        jsonl({"id": "a", "label": True, "category": "x"}, {"id": "b", "label": False, "category": ["y", "z"]},
              {"id": "c", "label": True, "category": "z"}, {"id": "d", "label": True, "category": []}),
        None,
    ),
    "string and only empty list categories": (
        jsonl({"id": "a", "label": True, "category": "x"}, {"id": "b", "label": False, "category": []}),
        None,
    ),
    "string popularity": (
        jsonl({"id": "a", "label": True, "popularity": "head"}, {"id": "b", "label": True, "popularity": "TAIL"},
              {"id": "c", "label": True}),
        None,
    ),
    "numeric popularity": (
        jsonl(*({"id": f"q{i}", "label": i % 2 == 0, "popularity": p}
                for i, p in enumerate([3, 1, 4, 1, 5, 9, 2.5, 6]))),
        None,
    ),
    "groups pairs splits": (
        jsonl({"id": "a", "label": True, "group": "g", "pair": "p", "split": "private"},
              {"id": "b", "label": True, "group": "g", "pair": "p"}, {"id": "c", "label": False, "group": "h"}),
        None,
    ),
    "other breakdown field": (
        jsonl({"id": "a", "label": True, "domain": "time", "year": 1999},
              {"id": "b", "label": True, "domain": "place"}),
        {"task_type": "binary", "breakdowns": ["domain", "category"]},
    ),
    "blank lines and CRLF": (b'{"id": "a", "label": true}\r\n\r\n{"id": "b", "label": false}\r\n\r\n', None),
    "BOM": (b'\xef\xbb\xbf{"id": "a", "label": true}\n', None),
    "number ids": (jsonl({"id": 1, "label": True}, {"id": 22, "label": False}), None),
    "number ids and groups": (
        jsonl({"id": -1, "label": True, "group": 7, "pair": 8}, {"id": 22, "label": False}), None),
    "null categories among lists": (
        jsonl({"id": "a", "label": True, "category": "x"}, {"id": "b", "label": True, "category": None},
              {"id": "c", "label": True, "category": ["x", "y"]}),
        None,
    ),
    "unicode": (jsonl({"id": "é", "label": True, "category": "naïve"}), None),
    "NaN and Infinity inside strings": (
        jsonl({"id": "NaN", "label": True, "category": "Infinity War", "note": "NaN bread"}), None),
}


@pytest.mark.parametrize("name", list(VALID_FILES))
def test_fast_and_careful_readers_build_the_same_label_set(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    data, config = VALID_FILES[name]
    fast = load_labels(data, config)
    careful(monkeypatch)
    assert_same(fast, load_labels(data, config))


CAREFUL_ONLY = {"blank lines and CRLF"}


@pytest.mark.parametrize("name", sorted(set(VALID_FILES) - CAREFUL_ONLY))
def test_plain_files_take_the_fast_path(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fast_only(monkeypatch)
    data, config = VALID_FILES[name]
    assert load_labels(data, config).n > 0


def test_plain_file_with_mixed_string_and_list_categories_takes_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    fast_only(monkeypatch)
    labels = load_labels(VALID_FILES["mixed string and list categories"][0])
    membership = labels.memberships["category"]
    assert membership.values == ("x", "y", "z")
    assert rows(membership) == [(0, "x"), (1, "y"), (1, "z"), (2, "z")]


def test_list_category_counts_once_per_value_and_items_without_field_are_left_out() -> None:
    labels = load_labels(VALID_FILES["list categories"][0])
    assert rows(labels.memberships["category"]) == [(0, "x"), (0, "y"), (1, "y")]


def test_binary_labels_accept_every_spelling_case_insensitively() -> None:
    data = jsonl(*({"id": str(i), "label": v} for i, v in enumerate(
        [True, False, "true", "FALSE", " yes ", "No", 1, 0, "1", "0", 1.0])))
    labels = load_labels(data, BINARY)
    assert labels.gold.tolist() == [1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1]


def test_multiple_choice_labels_match_options_case_insensitively() -> None:
    labels = load_labels(jsonl({"id": "a", "label": "b"}, {"id": "b", "label": " D"}), MC)
    assert labels.gold.tolist() == [1, 3]


def test_inference_binary_and_multiple_choice_up_to_highest_letter() -> None:
    assert load_labels(VALID_FILES["booleans"][0]).config == PhaseConfig(task_type="binary")
    inferred = load_labels(jsonl({"id": "a", "label": "A"}, {"id": "b", "label": "c"})).config
    assert inferred.task_type == "multiple_choice"
    assert inferred.options == ("A", "B", "C")
    assert inferred.breakdowns == ("category",)


def test_number_id_becomes_decimal_text() -> None:
    assert load_labels(VALID_FILES["number ids"][0]).ids.to_pylist() == ["1", "22"]


def test_other_breakdown_values_become_strings() -> None:
    data = jsonl({"id": "a", "label": True, "year": 1999}, {"id": "b", "label": True, "year": [2000, "x"]})
    labels = load_labels(data, {"task_type": "binary", "breakdowns": ["year"]})
    assert labels.memberships["year"].values == ("1999", "2000", "x")


def test_numeric_popularity_uses_file_tertiles() -> None:
    values = [3, 1, 4, 1, 5, 9, 2.5, 6]
    labels = load_labels(VALID_FILES["numeric popularity"][0])
    q1, q2 = np.quantile(values, [1 / 3, 2 / 3])
    expected = [TAIL if v <= q1 else HEAD if v > q2 else TORSO for v in values]
    assert labels.popularity.tolist() == expected
    assert labels.popularity_cuts == (q1, q2)


def test_numeric_popularity_uses_config_thresholds() -> None:
    data = jsonl(*({"id": str(v), "label": True, "popularity": v} for v in [100, 107, 108, 184, 185, 300]))
    config = {"task_type": "binary", "popularity": {"head_min": 185, "tail_max": 107}}
    assert load_labels(data, config).popularity.tolist() == [TAIL, TAIL, TORSO, TORSO, HEAD, HEAD]


def test_bucket_names_and_counts_mix() -> None:
    data = jsonl({"id": "a", "label": True, "popularity": "head"}, {"id": "b", "label": True, "popularity": 1},
                 {"id": "c", "label": True, "popularity": 2}, {"id": "d", "label": True, "popularity": 3},
                 {"id": "e", "label": True})
    assert load_labels(data).popularity.tolist() == [HEAD, TAIL, TORSO, HEAD, -1]


def test_groups_pairs_and_splits_are_coded() -> None:
    labels = load_labels(VALID_FILES["groups pairs splits"][0])
    assert labels.groups.tolist() == [0, 0, 1]
    assert labels.pairs.tolist() == [0, 0, -1]
    assert labels.split.tolist() == [1, 0, 0]
    assert labels.has_split


def test_file_without_split_field_has_no_splits() -> None:
    assert not load_labels(VALID_FILES["booleans"][0]).has_split


def test_reads_a_path(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_bytes(VALID_FILES["booleans"][0])
    assert load_labels(path).n == 2
    assert load_labels(str(path)).n == 2


@pytest.mark.parametrize(
    ("data", "config", "message"),
    [
        (b'{"id": "a", "label": true}\n{"id": "b", "label": tru}\n', None, "line 2: not valid JSON"),
        (b'{"id": "a", "label": true}\n[1, 2]\n', None, "line 2: expected a JSON object"),
        (b'{"id": "a", "label": true}\n\n{"label": true}\n', None, "line 3: missing id"),
        (b'{"id": "a", "label": true}\n{"id": "a", "label": false}\n', None,
         "line 2: duplicate id 'a' (first on line 1)"),
        (b'{"id": "1", "label": true}\n{"id": 1, "label": false}\n', None, "line 2: duplicate id '1'"),
        (b'{"id": true, "label": true}\n', None, "line 1: id must be a non-empty string"),
        (b'{"id": ["a"], "label": true}\n', None, "line 1: id must be a non-empty string"),
        (b'{"id": "", "label": true}\n', None, "line 1: id must be a non-empty string"),
        (b'{"id": "a", "label": true}\n{"id": "b"}\n', None, "line 2: missing label"),
        (b'{"id": "a", "label": true}\n{"id": "b", "label": null}\n', None, "line 2: missing label"),
        (b'{"id": "a", "label": true}\n{"id": "b", "label": "maybe"}\n', BINARY, "line 2: label 'maybe' is not"),
        (b'{"id": "a", "label": true}\n{"id": "b", "label": 2}\n', BINARY, "line 2: label 2 is not"),
        (b'{"id": "a", "label": "A"}\n{"id": "b", "label": "E"}\n', MC, "line 2: label 'E' is not one of the options"),
        (b'{"id": "a", "label": true}\n{"id": "b", "label": "maybe"}\n', None, "line 2: label 'maybe' is neither"),
        (b'{"id": "a", "label": true}\n{"id": "b", "label": "B"}\n', None, "line 1 has a yes/no label and line 2"),
        (b'{"id": "a", "label": true, "split": "test"}\n', None, 'line 1: split must be "public" or "private"'),
        (b'{"id": "a", "label": true, "popularity": "famous"}\n', None, "line 1: popularity must be"),
        (b'{"id": "a", "label": true, "popularity": "12"}\n', None, "line 1: popularity must be"),
        (b'{"id": "a", "label": true, "popularity": true}\n', None, "line 1: popularity must be"),
        (b'{"id": "a", "label": true, "popularity": NaN}\n', None, "line 1: not valid JSON (NaN"),
        (b'{"id": "a", "label": true, "extra": Infinity}\n', None, "line 1: not valid JSON (Infinity"),
        (b'{"id": "a", "label": true, "extra": [1, -Infinity]}\n', None, "line 1: not valid JSON (-Infinity"),
        (b'{"id": "NaN", "label": true, "extra":NaN}\n', None, "line 1: not valid JSON (NaN"),
        (b'{"id": "a", "label": true}{"id": "b", "label": true}\n', None, "line 1: not valid JSON"),
        (b'{"id": "a", "label": true, "label": false}\n', None, "line 1: not valid JSON (key 'label' appears twice)"),
        (b'{"id": "a", "label": true, "category": {"x": 1}}\n', None, "line 1: category must be a string"),
        (b'{"id": "a", "label": true, "category": ["x", null]}\n', None, "line 1: category must be a string"),
        (b'{"id": "a", "label": true, "group": ["g"]}\n', None, "line 1: group must be a string"),
        (b'{"id": "a", "label": true, "note": "\xff"}\n', None, "line 1: not UTF-8"),
        (b'{"id": "a", "label": [true]}\n', None, "line 1: label must be a string"),
        (b"", None, "the label file is empty"),
        (b"\n  \n", None, "the label file is empty"),
    ],
)
def test_label_file_errors_name_the_line(data: bytes, config: dict[str, Any] | None, message: str) -> None:
    with pytest.raises(LabelFileError) as caught:
        load_labels(data, config)
    assert message in str(caught.value)


def test_missing_label_file_is_a_label_file_error(tmp_path: Path) -> None:
    with pytest.raises(LabelFileError, match="cannot read the label file"):
        load_labels(tmp_path / "nope.jsonl")


def test_ranking_by_group_accuracy_needs_groups() -> None:
    with pytest.raises(LabelFileError, match="group_accuracy"):
        load_labels(VALID_FILES["booleans"][0], {"task_type": "binary", "primary_metric": "group_accuracy"})


def test_breakdown_field_no_item_has_gives_a_warning() -> None:
    labels = load_labels(VALID_FILES["booleans"][0])
    assert labels.memberships == {}
    assert labels.warnings == ("no item has the breakdown field 'category' named in the phase config",)


def test_hand_built_label_set_fills_metadata_with_no_value() -> None:
    labels = LabelSet(config=PhaseConfig(task_type="binary"), ids=pa.array(["a", "b"]), gold=np.array([1, 0], np.int8))
    assert labels.popularity.tolist() == [-1, -1]
    assert labels.groups.tolist() == [-1, -1]
    assert labels.split.tolist() == [0, 0]
    assert not labels.has_split


def test_positions_finds_ids_in_any_order() -> None:
    labels = load_labels(jsonl({"id": "a", "label": True}, {"id": "b", "label": False}, {"id": "c", "label": True}))
    assert labels.positions(["c", "x", "a"]).tolist() == [2, -1, 0]
    assert labels.positions(pa.chunked_array([["a", "b"], ["c"]])).tolist() == [0, 1, 2]


def test_lone_surrogate_escape_is_refused() -> None:
    with pytest.raises(LabelFileError, match="line 1: a \\\\u escape is not valid Unicode"):
        load_labels(b'{"id": "a\\ud800", "label": true}\n')


# Property: whatever the file, both readers agree (same label set, or both refuse).

_text = st.text(alphabet="abcXY é\"\\", min_size=0, max_size=4)
_scalar = st.one_of(st.none(), _text, st.integers(-3, 300), st.booleans(), st.floats(-1e3, 1e3, allow_nan=False))
_record = st.fixed_dictionaries(
    {"id": st.one_of(_text, st.integers(0, 50))},
    optional={
        "label": st.one_of(st.booleans(), st.sampled_from(["yes", "No", "A", "b", "maybe", "1"]), st.integers(0, 2)),
        "category": st.one_of(_scalar, st.lists(st.one_of(_text, st.integers(0, 3)), max_size=3)),
        "popularity": st.one_of(st.sampled_from(["head", "Torso", "tail", "big"]), st.integers(0, 500),
                                st.floats(0, 500), st.none()),
        "group": st.one_of(_text, st.none(), st.integers(0, 3)),
        "pair": st.one_of(_text, st.none()),
        "split": st.one_of(st.sampled_from(["public", "private", "PRIVATE", "dev"]), st.none()),
        "note": _scalar,
    },
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_record, min_size=0, max_size=8), st.sampled_from([None, BINARY, MC]))
def test_fast_and_careful_readers_agree_on_any_file(records: list[dict[str, Any]],
                                                    config: dict[str, Any] | None) -> None:
    data = b"".join(
        json.dumps(r, ensure_ascii=bool(len(r) % 2), separators=(", ", ": ") if i % 3 else (",", ":")).encode() + b"\n"
        for i, r in enumerate(records)
    )
    outcomes = []
    for read_fast in (labels_module.parse_fast, lambda *args: None):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(labels_module, "parse_fast", read_fast)
            try:
                outcomes.append(load_labels(data, config))
            except LabelFileError as error:
                outcomes.append(str(error))
    fast, slow = outcomes
    if isinstance(fast, str) or isinstance(slow, str):
        assert fast == slow
    else:
        assert_same(fast, slow)


def test_loading_and_scoring_a_plain_file_never_imports_pandas(tmp_path: Path) -> None:
    """pyarrow imports pandas on to_numpy(); the scoring hot path reads buffers instead."""
    path = tmp_path / "labels.jsonl"
    path.write_bytes(VALID_FILES["mixed string and list categories"][0] + jsonl(item_with_everything()))
    code = (
        "import sys, numpy as np\n"
        "from scoring.labels import load_labels\n"
        "from scoring.evaluate import evaluate\n"
        "from scoring.types import Predictions\n"
        f"labels = load_labels({str(path)!r})\n"
        "evaluate(labels, Predictions(answer=np.zeros(labels.n, np.int8), confidence=np.full(labels.n, 0.5),\n"
        "                             n_predictions=1))\n"
        "print('pandas' in sys.modules)\n"
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root,
                          env={**os.environ, "PYTHONPATH": str(root)}, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def item_with_everything() -> dict[str, Any]:
    return {"id": "z", "label": False, "category": "x", "popularity": 12, "group": "g", "pair": "p", "split": "private"}


_value = st.text(alphabet="abc é", min_size=1, max_size=3)
_valid_record = st.fixed_dictionaries(
    {"label": st.booleans()},
    optional={
        "category": st.one_of(_value, st.lists(_value, max_size=3), st.none()),
        "popularity": st.one_of(st.sampled_from(["head", "Torso", "tail"]), st.integers(0, 500), st.none()),
        "group": _value,
        "pair": _value,
        "split": st.sampled_from(["public", "private"]),
        "note": st.one_of(_value, st.integers(), st.lists(st.integers(), max_size=2)),
    },
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_valid_record, min_size=1, max_size=10), st.booleans(), st.booleans())
def test_fast_and_careful_readers_agree_on_valid_files(
    records: list[dict[str, Any]], compact: bool, yes_no: bool
) -> None:
    separators = (",", ":") if compact else (", ", ": ")
    lines = []
    for i, r in enumerate(records):
        label = ("yes" if r["label"] else "No") if yes_no else r["label"]
        lines.append(json.dumps({"id": f"q{i}", **r, "label": label}, separators=separators).encode() + b"\n")
    data = b"".join(lines)
    fast = load_labels(data)
    with pytest.MonkeyPatch.context() as patch:
        careful(patch)
        assert_same(fast, load_labels(data))
