"""The scoring library stays pure: no module of it imports the web stack."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WEB_STACK = ("flask", "flask_login", "flask_wtf", "flask_limiter", "werkzeug", "sqlalchemy", "alembic",
             "boto3", "botocore", "celery", "leaderboard")


def _imported_roots(path: Path) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


def test_no_scoring_source_file_imports_the_web_stack() -> None:
    files = sorted((ROOT / "scoring").rglob("*.py"))
    assert len(files) > 10
    offenders = {str(f.relative_to(ROOT)): sorted(_imported_roots(f) & set(WEB_STACK)) for f in files}
    assert {name: mods for name, mods in offenders.items() if mods} == {}


def test_importing_every_scoring_module_loads_no_web_module() -> None:
    code = (
        "import importlib, pkgutil, sys, scoring\n"
        "for info in pkgutil.walk_packages(scoring.__path__, 'scoring.'):\n"
        "    if not info.name.endswith('__main__'):\n"
        "        importlib.import_module(info.name)\n"
        f"print(sorted(m for m in {WEB_STACK!r} if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
