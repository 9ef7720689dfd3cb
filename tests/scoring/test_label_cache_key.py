"""The label cache key covers the code that builds label sets, found by walking imports, not listed by hand."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from scoring.labels import cache_key

ROOT = Path(__file__).resolve().parents[2] / "scoring"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """Return a copy of the scoring package to change."""
    copy = tmp_path / "scoring"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def keyed(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in cache_key.keyed_files(root)}


def test_the_key_covers_the_labels_package_and_what_it_imports() -> None:
    files = keyed(ROOT)
    assert {p.relative_to(ROOT).as_posix() for p in (ROOT / "labels").rglob("*.py")} <= files
    assert {"types.py", "config.py", "arrays.py"} <= files  # imported by the package, so part of the parsed form
    assert not any(f.startswith(("importers/", "predictions/")) for f in files)
    assert "evaluate.py" not in files and "metrics/bootstrap.py" not in files
    assert cache_key.code_digest() == cache_key.source_digest(ROOT)


def test_adding_a_module_to_the_package_changes_the_key(tree: Path) -> None:
    before = cache_key.source_digest(tree)
    (tree / "labels" / "extra.py").write_text('"""A new module."""\n')
    assert cache_key.source_digest(tree) != before


def test_renaming_a_module_changes_the_key(tree: Path) -> None:
    before = cache_key.source_digest(tree)
    (tree / "labels" / "ids.py").rename(tree / "labels" / "id_keys.py")
    labelset = tree / "labels" / "labelset.py"
    labelset.write_text(labelset.read_text().replace("from scoring.labels import ids as id_match",
                                                     "from scoring.labels import id_keys as id_match"))
    assert "labels/id_keys.py" in keyed(tree)
    assert cache_key.source_digest(tree) != before


def test_a_module_moved_out_of_the_package_stays_in_the_key(tree: Path) -> None:
    before = cache_key.source_digest(tree)
    (tree / "labels" / "ids.py").rename(tree / "ids.py")
    labelset = tree / "labels" / "labelset.py"
    labelset.write_text(labelset.read_text().replace("from scoring.labels import ids as id_match",
                                                     "from scoring import ids as id_match"))
    assert "ids.py" in keyed(tree)
    assert cache_key.source_digest(tree) != before


def test_editing_an_imported_module_changes_the_key_and_an_unrelated_one_does_not(tree: Path) -> None:
    before = cache_key.source_digest(tree)
    creak = tree / "importers" / "creak.py"
    creak.write_text(creak.read_text() + "\n# an importer change\n")
    assert cache_key.source_digest(tree) == before
    types = tree / "types.py"
    types.write_text(types.read_text() + "\n# a change to the types labels are built with\n")
    assert cache_key.source_digest(tree) != before


def test_a_module_imported_inside_a_function_is_in_the_key(tree: Path) -> None:
    (tree / "late.py").write_text('"""Imported late."""\n')
    loader = tree / "labels" / "loader.py"
    loader.write_text(loader.read_text() + "\n\ndef _late() -> None:\n    from scoring import late  # noqa: F401\n")
    assert "late.py" in keyed(tree)
