"""Rules for turning an upload into text of a known format: archives, size, UTF-8, sniffing."""

from __future__ import annotations

import gzip
import io
import tracemalloc
import zipfile
import zlib
from pathlib import Path

import pytest

from scoring.bounded import FileTooLarge
from scoring.predictions import formats
from scoring.predictions.formats import Document, load_document, sniff
from scoring.types import PredictionFileError

CSV = b"id,prediction\nq1,true\n"


def whole_file_problem(data: bytes, max_bytes: int = 1 << 20) -> str:
    """Return the message of the one whole-file problem the upload has."""
    with pytest.raises(PredictionFileError) as info:
        load_document(data, max_bytes=max_bytes)
    assert info.value.error_count == 1
    (problem,) = info.value.problems
    assert problem.line is None and problem.id is None
    return problem.message


def zipped(*members: tuple[str, bytes]) -> bytes:
    """Return a zip archive of the given (name, content) members."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in members:
            archive.writestr(name, content)
    return buffer.getvalue()


# --- sniffing ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "kind"),
    [
        (b"id,prediction\nq1,true\n", "csv"),
        (b'"id","prediction"\n"q1","true"\n', "csv"),
        (b'[{"id": "q1", "prediction": true}]', "json"),
        (b'[\n  {"id": "q1",\n   "prediction": true}\n]\n', "json"),
        (b'{"q1": true, "q2": false}', "json"),
        (b'{\n  "q1": true\n}', "json"),
        (b'{"id": "q1", "prediction": true}\n', "json"),  # one value: JSON (a one-record file)
        (b'{"id": "q1", "prediction": true}\n{"id": "q2", "prediction": false}\n', "jsonl"),
        (b'\n\n{"id": "q1", "prediction": true}\nnot json\n', "jsonl"),
        (b'[{"id": "q1", "prediction": true},\n', "json"),  # broken JSON stays JSON
        (b"42", "json"),
        (b"q1\n42\n", "csv"),
    ],
)
def test_format_is_found_from_the_content(content: bytes, kind: str) -> None:
    assert sniff(content) == kind


@pytest.mark.parametrize("content", [b"", b" ", b"\n\r\n\t \n"])
def test_whitespace_only_content_has_no_format(content: bytes) -> None:
    assert sniff(content) is None


@pytest.mark.parametrize("content", [b"", b"   \n\n", formats.UTF8_BOM, formats.UTF8_BOM + b"\r\n"])
def test_empty_or_blank_file_is_refused_as_empty(content: bytes) -> None:
    assert whole_file_problem(content).startswith("The file is empty")


def test_byte_order_mark_is_removed() -> None:
    document = load_document(formats.UTF8_BOM + CSV, max_bytes=1000)
    assert document == Document(kind="csv", data=CSV)


# --- UTF-8 -------------------------------------------------------------------------


def test_latin1_file_is_refused_naming_line_and_offset() -> None:
    message = whole_file_problem("id,prediction\nq1,true\ncafé,false\n".encode("latin-1"))
    assert "not UTF-8" in message
    assert "line 3" in message and "byte offset 25" in message


def test_utf16_file_is_refused_as_not_utf8() -> None:
    message = whole_file_problem("id,prediction\n".encode("utf-16"))
    assert "not UTF-8" in message and "UTF-16" in message and "byte offset 0" in message


def test_utf8_check_never_splits_a_character_between_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(formats, "CHUNK", 4)
    text = "id,prediction\nçé€😀,true\n".encode()
    formats.check_utf8(text)  # valid: no error whatever the chunk size
    bad = text + b"x\xe2\x82"  # a truncated euro sign at the very end
    message = whole_file_problem(bad, max_bytes=1000)
    assert f"byte offset {len(text) + 1}" in message and "line 3" in message


# --- size --------------------------------------------------------------------------


class CountingStream(io.RawIOBase):
    """An endless stream of bytes that counts how much was read from it."""

    def __init__(self) -> None:
        self.read_bytes = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray) -> int:  # type: ignore[override]
        n = min(len(buffer), 1000)
        buffer[:n] = b"a" * n
        self.read_bytes += n
        return n


def test_upload_over_the_limit_is_too_large() -> None:
    message = whole_file_problem(b"x" * 101, max_bytes=100)
    assert message == "The file is too large: the limit is 100 bytes uncompressed."


def test_upload_at_the_limit_is_accepted() -> None:
    assert load_document(CSV, max_bytes=len(CSV)).data == CSV


def test_stream_is_read_only_one_byte_past_the_limit() -> None:
    stream = CountingStream()
    with pytest.raises(PredictionFileError) as info:
        load_document(stream, max_bytes=12_345)  # type: ignore[arg-type]
    assert "too large" in info.value.problems[0].message
    assert stream.read_bytes <= 12_346 + 1000


def test_limit_is_shown_in_mebibytes() -> None:
    assert "100 MiB" in FileTooLarge(100 * 1024 * 1024).problems[0].message


def test_path_and_pathlike_sources_are_read(tmp_path: Path) -> None:
    path = tmp_path / "predictions.txt"
    path.write_bytes(CSV)
    assert load_document(str(path), max_bytes=1000).data == CSV
    assert load_document(path, max_bytes=1000).data == CSV
    with path.open("rb") as stream:
        assert load_document(stream, max_bytes=1000).data == CSV
    assert load_document(bytearray(CSV), max_bytes=1000).data == CSV  # type: ignore[arg-type]


# --- zip ---------------------------------------------------------------------------


def test_zip_with_one_file_gives_that_file() -> None:
    assert load_document(zipped(("preds.csv", CSV)), max_bytes=1000).data == CSV


def test_zip_ignores_folders_macos_resources_and_dot_files() -> None:
    archive = zipped(
        ("out/", b""),
        ("__MACOSX/out/._preds.csv", b"\x00\x05\x16\x07junk"),
        (".DS_Store", b"junk"),
        ("out/.hidden", b"junk"),
        ("out/preds.csv", CSV),
    )
    assert load_document(archive, max_bytes=1000).data == CSV


def test_zip_with_two_files_is_refused_naming_them() -> None:
    message = whole_file_problem(zipped(("a.csv", CSV), ("b.csv", CSV)))
    assert message == (
        "The zip archive holds 2 files (a.csv, b.csv); it must hold exactly one prediction file."
    )


@pytest.mark.parametrize("archive", [zipped(), zipped(("folder/", b""), (".DS_Store", b"x"))])
def test_zip_without_a_file_is_empty(archive: bytes) -> None:
    assert whole_file_problem(archive) == "The file is empty: the zip archive holds no file."


@pytest.mark.parametrize(
    "inner", [zipped(("preds.csv", CSV)), gzip.compress(CSV)], ids=["zip", "gzip"]
)
def test_archive_inside_a_zip_is_refused(inner: bytes) -> None:
    message = whole_file_problem(zipped(("preds.csv", inner)))  # the name does not matter
    assert "archive inside an archive" in message


def test_archive_inside_a_gzip_is_refused() -> None:
    assert "archive inside an archive" in whole_file_problem(gzip.compress(gzip.compress(CSV)))


def test_damaged_zip_is_refused() -> None:
    archive = zipped(("preds.csv", CSV * 50))
    assert "damaged" in whole_file_problem(archive[: len(archive) // 2])


def test_zip_with_a_corrupted_member_is_refused() -> None:
    archive = bytearray(zipped(("preds.csv", CSV * 50)))
    start = archive.index(b"preds.csv") + len("preds.csv")
    archive[start + 5 : start + 15] = b"\xff" * 10
    assert "damaged" in whole_file_problem(bytes(archive))


def test_password_protected_zip_is_refused() -> None:
    archive = bytearray(zipped(("preds.csv", CSV)))
    flags = archive.index(b"PK\x01\x02") + 8  # general purpose flags in the central directory
    archive[flags] |= 0x1  # "encrypted"
    assert "password-protected" in whole_file_problem(bytes(archive))


# --- gzip --------------------------------------------------------------------------


def test_gzip_gives_its_content() -> None:
    assert load_document(gzip.compress(CSV), max_bytes=1000).data == CSV


def test_gzip_with_two_members_is_refused() -> None:
    message = whole_file_problem(gzip.compress(CSV) + gzip.compress(CSV))
    assert "more than one member" in message


def test_truncated_gzip_is_refused() -> None:
    data = gzip.compress(CSV * 100)
    assert "damaged or truncated" in whole_file_problem(data[: len(data) - 12])


# --- bombs -------------------------------------------------------------------------

BOMB_SIZE = 200 * 1024 * 1024


def zeros_zip(size: int) -> bytes:
    """Return a zip holding one file of `size` zero bytes, written in chunks."""
    buffer = io.BytesIO()
    with (
        zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive,
        archive.open("preds.csv", "w") as member,
    ):
        chunk = bytes(1 << 20)
        for _ in range(size // len(chunk)):
            member.write(chunk)
    return buffer.getvalue()


def zeros_gzip(size: int) -> bytes:
    """Return a gzip of `size` zero bytes, compressed in chunks."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    chunk = bytes(1 << 20)
    parts = [compressor.compress(chunk) for _ in range(size // len(chunk))]
    return b"".join(parts) + compressor.flush()


def peak_memory_of_refusal(data: bytes, max_bytes: int) -> tuple[str, int]:
    """Return the problem of refusing data, and the peak memory traced meanwhile."""
    tracemalloc.start()
    try:
        message = whole_file_problem(data, max_bytes=max_bytes)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return message, peak


@pytest.fixture(scope="module")
def zip_bomb() -> bytes:
    return zeros_zip(BOMB_SIZE)


@pytest.fixture(scope="module")
def gzip_bomb() -> bytes:
    return zeros_gzip(BOMB_SIZE)


def test_zip_bomb_is_refused_without_inflating_it(zip_bomb: bytes) -> None:
    assert len(zip_bomb) < 1_000_000
    message, peak = peak_memory_of_refusal(zip_bomb, max_bytes=1 << 20)
    assert "too large" in message
    assert peak < 16 * 1024 * 1024


def test_zip_bomb_lying_about_its_size_is_refused_within_the_limit(zip_bomb: bytes) -> None:
    lie = bytearray(zip_bomb)
    for signature, offset in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        field = lie.index(signature) + offset  # the uncompressed size in each header
        lie[field : field + 4] = (1000).to_bytes(4, "little")
    message, peak = peak_memory_of_refusal(bytes(lie), max_bytes=1 << 20)
    assert message == "The zip archive is damaged and cannot be opened."  # its CRC fails
    assert peak < 16 * 1024 * 1024


def test_gzip_bomb_is_refused_after_inflating_only_the_limit(gzip_bomb: bytes) -> None:
    assert len(gzip_bomb) < 1_000_000
    message, peak = peak_memory_of_refusal(gzip_bomb, max_bytes=1 << 20)
    assert "too large" in message
    assert peak < 16 * 1024 * 1024


def test_gzip_inflating_to_exactly_the_limit_is_accepted() -> None:
    data = b"id,prediction\n" + b"q1,true\n" * 1000
    assert load_document(gzip.compress(data), max_bytes=len(data)).data == data
    assert "too large" in whole_file_problem(gzip.compress(data), max_bytes=len(data) - 1)
