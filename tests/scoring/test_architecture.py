"""scoring/ is a layered library: no import cycle among its modules, no web stack, absolute imports only.

Imports inside functions and under ``TYPE_CHECKING`` count: hiding an import in a
function does not break a cycle, it only delays it. The import graph comes from
grimp (the library import-linter is built on).
"""

from __future__ import annotations

import ast
from pathlib import Path

import grimp
import pytest

from scoring.labels import cache_key

ROOT = Path(__file__).resolve().parents[2]
FORBIDDEN = ("flask", "flask_login", "flask_wtf", "flask_limiter", "werkzeug", "sqlalchemy", "alembic",
             "boto3", "botocore", "celery", "redis", "leaderboard", "tailboard_cli")
PIPELINE = ("scoring.labels", "scoring.predictions", "scoring.metrics", "scoring.importers")


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    """Return the import graph of scoring, external packages squashed to their top-level name."""
    return grimp.build_graph("scoring", include_external_packages=True, cache_dir=None)


def scoring_modules(graph: grimp.ImportGraph) -> list[str]:
    return sorted(m for m in graph.modules if m == "scoring" or m.startswith("scoring."))


def test_no_import_cycle_among_scoring_modules(graph: grimp.ImportGraph) -> None:
    cycles = []
    for importer in scoring_modules(graph):
        for imported in graph.find_modules_directly_imported_by(importer):
            if imported.startswith("scoring") and graph.chain_exists(importer=imported, imported=importer):
                back = graph.find_shortest_chain(importer=imported, imported=importer) or ()
                cycles.append(" -> ".join((importer, *back)))
    assert cycles == []


def test_no_cycle_between_the_pipeline_packages(graph: grimp.ImportGraph) -> None:
    pairs = [(a, b) for a in PIPELINE for b in PIPELINE if a < b]
    both_ways = [(a, b) for a, b in pairs
                 if graph.chain_exists(importer=a, imported=b, as_packages=True)
                 and graph.chain_exists(importer=b, imported=a, as_packages=True)]
    assert both_ways == []


def test_no_scoring_module_imports_the_web_stack(graph: grimp.ImportGraph) -> None:
    offenders = {m: sorted(set(graph.find_modules_directly_imported_by(m)) & set(FORBIDDEN))
                 for m in scoring_modules(graph)}
    assert {m: found for m, found in offenders.items() if found} == {}


def test_scoring_uses_absolute_imports_only() -> None:
    relative = [f"{path.relative_to(ROOT)}:{node.lineno}"
                for path in sorted((ROOT / "scoring").rglob("*.py"))
                for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                if isinstance(node, ast.ImportFrom) and node.level > 0]
    assert relative == []  # the label cache key walks absolute imports (scoring.labels.cache_key)


def test_the_label_cache_key_covers_exactly_what_the_labels_package_imports(graph: grimp.ImportGraph) -> None:
    reached: set[str] = set()
    todo = [m for m in scoring_modules(graph) if m == "scoring.labels" or m.startswith("scoring.labels.")]
    while todo:
        module = todo.pop()
        if module not in reached:
            reached.add(module)
            todo += [m for m in graph.find_modules_directly_imported_by(module) if m.startswith("scoring.")]
    root = ROOT / "scoring"
    keyed = set()
    for path in cache_key.keyed_files(root):
        parts = path.relative_to(root).with_suffix("").parts
        keyed.add(".".join(("scoring", *(parts[:-1] if parts[-1] == "__init__" else parts))))
    assert keyed == reached
