"""Habits the suite enforces: ruff finds nothing, mypy passes on leaderboard/, the import contracts hold.

The import contracts are in pyproject.toml ([tool.importlinter]): no import cycle in
leaderboard/ (imports inside functions and under TYPE_CHECKING count), no service
imports Flask or the web layer, and the runtime (with its dispatchers) imports no service.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grimp
import pytest
from importlinter.cli import lint_imports

ROOT = Path(__file__).resolve().parents[1]
RUFF_PATHS = ["."]  # the whole repository (pyproject's [tool.ruff] leaves out .venv and generated files)
RUFF_EXCLUDE: list[str] = []


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, check=False)


def test_ruff_finds_nothing() -> None:
    excluded = [f"--extend-exclude={path}" for path in RUFF_EXCLUDE]
    result = _run("ruff", "check", "--no-cache", *excluded, *RUFF_PATHS)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow
def test_mypy_passes_on_leaderboard() -> None:
    result = _run("mypy", "--no-incremental", "leaderboard")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_import_contracts_hold(capsys: pytest.CaptureFixture[str]) -> None:
    kept = lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True)
    assert kept == 0, capsys.readouterr().out


def test_no_leaderboard_module_imports_itself_back() -> None:
    graph = grimp.build_graph("leaderboard", cache_dir=None)
    cycles = [(module, graph.find_shortest_chain(importer=imported, imported=module))
              for module in graph.modules for imported in graph.find_modules_directly_imported_by(module)
              if imported.startswith("leaderboard") and graph.chain_exists(importer=imported, imported=module)]
    assert not cycles, "\n".join(f"{module} -> {' -> '.join(chain or [])}" for module, chain in cycles)


def test_the_architecture_doc_names_every_leaderboard_module() -> None:
    doc = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    modules = sorted((ROOT / "leaderboard").rglob("*.py"))
    missing = [str(path.relative_to(ROOT)) for path in modules if path.name != "__init__.py" and path.name not in doc]
    assert not missing, f"docs/ARCHITECTURE.md does not describe: {', '.join(missing)}"
