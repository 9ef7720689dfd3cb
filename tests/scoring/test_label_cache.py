"""The parsed-label cache: a cached load equals a fresh one, and stale or broken entries are never used."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_labels import VALID_FILES, _valid_record, assert_same, jsonl

import scoring.labels.loader as labels_module
from scoring.labels import LabelSet, cache_key, load_labels
from scoring.labels import cache as label_cache
from scoring.types import LabelFileError

PLAIN = jsonl(*({"id": f"q{i:07d}", "label": i % 3 == 0, "category": ["x", "y"][i % 2], "popularity": i}
                for i in range(30)))


def entries(directory: Path) -> list[Path]:
    return sorted(p for p in directory.iterdir() if not p.name.startswith("."))


def count_parses(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count how often load_labels really parses a file."""
    calls: list[int] = []
    real = labels_module.build_label_set

    def build(*args: Any) -> LabelSet:
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(labels_module, "build_label_set", build)
    return calls


def cached_twice(data: bytes | Path, config: Any) -> tuple[LabelSet, LabelSet]:
    first = load_labels(data, config, cache=True)
    return first, load_labels(data, config, cache=True)


@pytest.mark.parametrize("name", list(VALID_FILES))
def test_cached_load_equals_fresh_load(name: str, tmp_path: Path, _private_label_cache: Path) -> None:
    data, config = VALID_FILES[name]
    path = tmp_path / "labels.jsonl"
    path.write_bytes(data)
    fresh = load_labels(path, config)
    written, cached = cached_twice(path, config)
    assert len(entries(_private_label_cache)) == 1
    for labels in (written, cached):
        assert_same(fresh, labels)
        assert labels.warnings == fresh.warnings
    assert cached.id_order is not None or fresh.sort_order() is None
    ids = fresh.ids.to_pylist()
    query = pa.array(list(reversed(ids)) + ["not an id"], pa.string())
    np.testing.assert_array_equal(cached.positions(query), fresh.positions(query))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_valid_record, min_size=1, max_size=10), st.sampled_from([None, {"task_type": "binary"}]))
def test_cached_load_equals_fresh_load_on_any_valid_file(records: list[dict[str, Any]], config: Any) -> None:
    data = b"".join(json.dumps({"id": f"q{i}", **r}).encode() + b"\n" for i, r in enumerate(records))
    fresh = load_labels(data, config)
    for labels in cached_twice(data, config):
        assert_same(fresh, labels)


def test_second_load_does_not_parse(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_bytes(PLAIN)
    calls = count_parses(monkeypatch)
    cached_twice(path, None)
    assert len(calls) == 1


def test_changed_file_or_config_misses(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                       _private_label_cache: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_bytes(PLAIN)
    calls = count_parses(monkeypatch)
    load_labels(path, None, cache=True)
    path.write_bytes(PLAIN.replace(b'"label": true', b'"label": false', 1))
    changed = load_labels(path, None, cache=True)
    assert changed.gold[0] == 0
    load_labels(path, {"task_type": "binary", "breakdowns": []}, cache=True)
    assert len(calls) == 3
    assert len(entries(_private_label_cache)) == 3


@pytest.mark.parametrize("damage", ["truncate", "garbage", "out of range", "missing membership"])
def test_corrupt_entry_is_ignored_and_rewritten(damage: str, tmp_path: Path, _private_label_cache: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_bytes(PLAIN)
    fresh = load_labels(path)
    load_labels(path, cache=True)
    (entry,) = entries(_private_label_cache)
    items = entry / "items.arrow"
    if damage == "truncate":
        items.write_bytes(items.read_bytes()[:200])
    elif damage == "garbage":
        items.write_bytes(b"\x00" * items.stat().st_size)
    elif damage == "out of range":
        table = pa.ipc.open_file(pa.memory_map(str(items))).read_all()
        gold = pa.array(np.full(table.num_rows, 7, np.int8))
        label_cache._write_table(items, table.set_column(1, "gold", gold))
    else:
        (entry / "m0.arrow").unlink()
    assert_same(fresh, load_labels(path, cache=True))
    assert label_cache.read_entry(entry) is not None  # rewritten, and good again


def test_wrong_sort_order_is_never_trusted(tmp_path: Path) -> None:
    fresh = load_labels(PLAIN)
    swapped = np.arange(fresh.n)[::-1].copy()
    bad = LabelSet(config=fresh.config, ids=fresh.ids, gold=fresh.gold, id_order=swapped)
    query = pa.array(["q0000003", "q0000029", "nope"], pa.string())
    np.testing.assert_array_equal(bad.positions(query), [3, 29, -1])


def test_env_turns_the_cache_off(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, _private_label_cache: Path) -> None:
    monkeypatch.setenv("TAILBOARD_LABEL_CACHE", "0")
    load_labels(PLAIN, cache=True)
    assert entries(_private_label_cache) == []


def test_cache_directory_is_private(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    directory = tmp_path / "tailboard" / "labels"
    monkeypatch.setenv("TAILBOARD_CACHE_DIR", str(directory))
    load_labels(PLAIN, cache=True)
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert len(entries(directory)) == 1


def test_unwritable_cache_still_loads(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("TAILBOARD_CACHE_DIR", str(blocker / "labels"))
    assert_same(load_labels(PLAIN), load_labels(PLAIN, cache=True))


def test_bad_label_file_is_still_an_error_and_not_cached(tmp_path: Path, _private_label_cache: Path) -> None:
    for _ in range(2):
        with pytest.raises(LabelFileError, match="line 2"):
            load_labels(jsonl({"id": "a", "label": True}, {"id": "a", "label": False}), cache=True)
    with pytest.raises(LabelFileError, match="cannot read the label file"):
        load_labels(tmp_path / "missing.jsonl", cache=True)
    assert entries(_private_label_cache) == []


def test_default_directory_is_the_user_cache_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TAILBOARD_CACHE_DIR")
    directory = label_cache.cache_dir()
    assert directory.parts[-2:] == ("tailboard", "labels")
    assert os.path.isabs(directory)


def test_cli_caches_unless_told_not_to(tmp_path: Path, _private_label_cache: Path) -> None:
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    labels, predictions = tmp_path / "labels.jsonl", tmp_path / "pred.csv"
    labels.write_bytes(PLAIN)
    predictions.write_text("id,prediction\nq0000001,true\nq0000000,no\n")
    command = [sys.executable, "-m", "scoring", "evaluate", "--labels", str(labels), "--predictions", str(predictions)]
    env = {**os.environ, "PYTHONPATH": str(root)}
    outputs = []
    for extra in (["--no-cache"], [], []):
        done = subprocess.run(command + extra, capture_output=True, text=True, cwd=root, env=env, timeout=120,
                              check=False)
        assert done.returncode == 0, done.stderr
        outputs.append(json.loads(done.stdout))
        assert len(entries(_private_label_cache)) == (0 if extra else 1)
    assert outputs[0] == outputs[1] == outputs[2]


def test_changed_label_code_misses(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_bytes(PLAIN)
    before = label_cache.entry_key(path, None)
    monkeypatch.setattr(cache_key, "code_digest", lambda: "other code")
    assert label_cache.entry_key(path, None) not in (None, before)


def test_second_writer_keeps_the_good_entry_and_leaves_no_temporary_files(_private_label_cache: Path) -> None:
    labels = load_labels(PLAIN)
    entry = _private_label_cache / "v1-some-key"
    label_cache.write_entry(entry, labels)
    first = (entry / "items.arrow").stat().st_ino
    label_cache.write_entry(entry, labels)
    assert (entry / "items.arrow").stat().st_ino == first
    assert [p.name for p in _private_label_cache.iterdir()] == [entry.name]
    cached = label_cache.read_entry(entry)
    assert cached is not None
    assert_same(labels, cached)


def test_file_changed_during_the_parse_is_not_cached(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                     _private_label_cache: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_bytes(PLAIN)
    real = labels_module.build_label_set

    def build_then_change(*args: Any) -> LabelSet:
        path.write_bytes(PLAIN + jsonl({"id": "new", "label": True}))
        return real(*args)

    monkeypatch.setattr(labels_module, "build_label_set", build_then_change)
    load_labels(path, cache=True)
    assert entries(_private_label_cache) == []
