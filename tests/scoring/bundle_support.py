"""Helpers of the bundle tests: zips built from a dict of files, and the bundles' own scoring rules."""

from __future__ import annotations

import io
import random
import zipfile


def zip_of(files: dict[str, str | bytes]) -> bytes:
    """Return a zip of the files (text is written as UTF-8); a name ending in '/' is a folder entry."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in files.items():
            archive.writestr(name, content.encode() if isinstance(content, str) else content)
    return buffer.getvalue()


def lines_of(values: list[str]) -> str:
    """Return values one per line."""
    return "".join(f"{value}\n" for value in values)


def draws(seed: int, n: int, classes: list[str]) -> list[str]:
    """Return n values drawn from classes, the same for the same seed."""
    chooser = random.Random(seed)
    return [chooser.choice(classes) for _ in range(n)]


def share_right(truth: list[str], guess: list[str]) -> float:
    """Return correct / total over lines, comparing values as numbers when both are (as numpy.genfromtxt does)."""
    assert len(truth) == len(guess)
    correct = sum(1 for t, g in zip(truth, guess, strict=True) if _same(t, g))
    return correct / len(truth)


def f1_of_yes(truth: list[str], guess: list[str]) -> float:
    """Return the F1 of the class 'yes' (scikit-learn's binary default), from counts."""
    pairs = list(zip(truth, guess, strict=True))
    tp = sum(1 for t, g in pairs if t == "yes" and g == "yes")
    fp = sum(1 for t, g in pairs if t != "yes" and g == "yes")
    fn = sum(1 for t, g in pairs if t == "yes" and g != "yes")
    return 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0


def _same(truth: str, guess: str) -> bool:
    """Return whether two values are equal, as numbers when both are numbers."""
    try:
        return float(truth) == float(guess)
    except ValueError:
        return truth.strip() == guess.strip()
