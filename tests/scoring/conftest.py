"""Scoring tests never touch the user's label cache: each test gets its own directory."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _private_label_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point TAILBOARD_CACHE_DIR (also seen by child processes) at a fresh directory."""
    directory = tmp_path_factory.mktemp("label-cache")
    monkeypatch.setenv("TAILBOARD_CACHE_DIR", str(directory))
    monkeypatch.delenv("TAILBOARD_LABEL_CACHE", raising=False)
    return directory
