"""A 3 MB zip holding 3 GiB of zeros is refused after reading a few kilobytes, in little memory.

Issue 21: such an archive (as ``labels-v1.jsonl``) once made the archive import use
6.45 GB for 137 s. Each bomb here is generated (``zip_support.zeros_bomb``), so the
test never builds the gigabytes itself.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest
from zip_support import zeros_bomb

from scoring.zips import ArchiveError, SafeZip

ROOT = Path(__file__).resolve().parents[2]
GIB = 1 << 30
MIB = 1 << 20


class CountingFile(io.FileIO):
    """A file that counts the bytes read from it."""

    taken = 0

    def read(self, size: int = -1) -> bytes:  # type: ignore[override]
        data = super().read(size)
        self.taken += len(data)
        return data


@pytest.fixture(scope="module")
def bombs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Return zip bombs of 3 GiB of zeros: one declaring its size honestly, one declaring 1 MiB."""
    folder = tmp_path_factory.mktemp("bombs")
    paths = {"honest": folder / "honest.zip", "lying": folder / "lying.zip"}
    paths["honest"].write_bytes(zeros_bomb("labels-v1.jsonl", 3 * GIB))
    paths["lying"].write_bytes(zeros_bomb("labels-v1.jsonl", 3 * GIB, declared=MIB))
    return paths


def refuse(path: Path) -> tuple[str, int, int, int]:
    """Try to read the bomb's member; return the refusal, bytes read from disk, bytes inflated, peak memory."""
    tracemalloc.start()
    try:
        with CountingFile(path) as source, SafeZip(source) as archive:
            with pytest.raises(ArchiveError) as caught:
                archive.read("labels-v1.jsonl")
            _, peak = tracemalloc.get_traced_memory()
            return str(caught.value), source.taken, archive.spent, peak
    finally:
        tracemalloc.stop()


def test_the_bomb_is_a_3_mb_file_holding_3_gib(bombs: dict[str, Path]) -> None:
    with SafeZip(bombs["honest"]) as archive:
        assert archive.members()[0].size == 3 * GIB
    assert bombs["honest"].stat().st_size < 4 * MIB


def test_an_honest_bomb_is_refused_from_its_directory_alone(bombs: dict[str, Path]) -> None:
    message, read_from_disk, inflated, peak = refuse(bombs["honest"])
    assert message == "labels-v1.jsonl is too large: it holds 3 GiB, the limit is 100 MiB"
    assert inflated == 0
    assert read_from_disk < 64 * 1024  # the end record and the directory, not the 3 MB body
    assert peak < 2 * MIB


def test_a_bomb_declaring_a_small_size_is_refused_at_that_size(bombs: dict[str, Path]) -> None:
    message, read_from_disk, inflated, peak = refuse(bombs["lying"])
    assert message == "labels-v1.jsonl is damaged and cannot be read"
    assert inflated <= MIB
    assert read_from_disk < 2 * MIB  # one compressed chunk past the first MiB, not the whole 3 MB body
    assert peak < 8 * MIB


SCRIPT = """
import resource, sys
from scoring.zips import ArchiveError, SafeZip
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    with SafeZip(sys.argv[1]) as archive:
        archive.read("labels-v1.jsonl")
except ArchiveError as error:
    print(error)
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024)
"""


@pytest.mark.parametrize("kind", ["honest", "lying"])
def test_refusing_a_bomb_barely_moves_the_peak_resident_memory_of_a_process(kind: str,
                                                                             bombs: dict[str, Path]) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, "-c", SCRIPT, str(bombs[kind])], capture_output=True, text=True,
                            env=env, cwd=ROOT, timeout=120, check=True)
    message, growth = result.stdout.splitlines()
    assert message.startswith("labels-v1.jsonl is ")
    assert int(growth) < 32 * MIB
