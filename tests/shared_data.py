"""The released benchmark files in ../shared/datasets (beside the clone, read-only, not in git).

A fresh clone does not have them: tests that read them skip, saying so (``make test``
prints skip reasons), instead of failing with FileNotFoundError.
"""

from __future__ import annotations

from pathlib import Path

import pytest

DATASETS = Path(__file__).resolve().parents[2] / "shared" / "datasets"


def released(*parts: str) -> Path:
    """Return the path of a released file under ../shared/datasets, or skip the calling test when it is absent."""
    path = DATASETS.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"needs the released dataset file ../shared/datasets/{'/'.join(parts)}, absent beside this clone")
    return path
