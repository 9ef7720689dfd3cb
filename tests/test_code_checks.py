"""Habits the suite enforces: ruff finds nothing, mypy passes on leaderboard/, the import contracts hold.

The import contracts are in pyproject.toml ([tool.importlinter]): the packages of
leaderboard/ sit on layers (each imports only the layers below it), no import cycle
(imports inside functions and under TYPE_CHECKING count), no Flask outside web/ and the
entry points, the runtime (platform) imports no domain package, and only the entry points
import the board. Folders stay small (at most 20 modules each), docs/ARCHITECTURE.md maps
every package, and every path the docs, bench/README.md and pyproject.toml name exists.
"""

from __future__ import annotations

import re
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


def test_the_architecture_doc_names_every_package() -> None:
    doc = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    root = ROOT / "leaderboard"
    packages = sorted(path.parent.relative_to(root) for path in root.rglob("__init__.py") if path.parent != root)
    missing = [f"{package}/" for package in packages if f"{package.as_posix()}/" not in doc]
    assert not missing, f"docs/ARCHITECTURE.md does not describe the packages: {', '.join(missing)}"


MAX_MODULES_PER_FOLDER = 20


def test_no_folder_of_leaderboard_holds_more_than_20_modules() -> None:
    folders = {path.parent for path in (ROOT / "leaderboard").rglob("*.py")}
    crowded = {folder.relative_to(ROOT).as_posix(): count for folder in folders
               if (count := len(list(folder.glob("*.py")))) > MAX_MODULES_PER_FOLDER}
    assert not crowded, f"split these folders into subpackages: {crowded}"


PATH_ROOTS = ("leaderboard/", "scoring/", "tests/", "bench/", "deploy/", "docs/", "migrations/", "tailboard_cli/",
              ".ci/", "app.py", "Makefile", "pyproject.toml", "README.md", "CONTRIBUTING.md", "alembic.ini")
PATH_TOKEN = re.compile(r"(?<![\w/.<-])((?:" + "|".join(re.escape(root) for root in PATH_ROOTS) + r")[\w./-]*)")
"""A path named in prose or code spans: from a top-level entry of the repository, up to the first other character."""
DOCUMENTS = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "bench" / "README.md", ROOT / "pyproject.toml",
             ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "deploy" / "README.md"]
GENERATED = ("bench/out",)
"""Paths a run writes (git-ignored), named where they will appear."""


def named_paths(text: str) -> set[str]:
    """Return the repository paths a document names: URLs, globs and placeholders (<...>, {...}) are not paths."""
    found = set()
    for line in text.splitlines():
        for match in PATH_TOKEN.finditer(re.sub(r"\w+://\S+", " ", line)):
            path = match.group(1).rstrip(".,:;)")
            tail = line[match.end(1):match.end(1) + 1]
            if tail in ("<", "{", "*") or path.endswith("..."):
                continue
            found.add(path)
    return found


def exists(path: str) -> bool:
    """Return whether a named path exists; ``scoring/evaluate.evaluate`` names a module's function, so it counts."""
    module = path.rsplit(".", 1)[0] + ".py" if "." in path.rsplit("/", 1)[-1] else path
    return (ROOT / path).exists() or (ROOT / module).exists() or path.startswith(GENERATED)


def test_every_path_the_docs_name_exists() -> None:
    missing = {}
    for document in DOCUMENTS:
        gone = sorted(path for path in named_paths(document.read_text(encoding="utf-8")) if not exists(path))
        if gone:
            missing[document.relative_to(ROOT).as_posix()] = gone
    assert not missing, f"paths named in documents that do not exist: {missing}"
