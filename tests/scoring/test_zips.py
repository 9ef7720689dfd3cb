"""The safe zip reader: members bounded before they are held, no escaping paths, errors naming the member."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path

import pytest
from zip_support import Entry, deflated, stored, zip_bytes

from scoring.types import ScoringError
from scoring.zips import ArchiveError, Record, SafeZip


def plain_zip(files: dict[str, bytes]) -> bytes:
    """Return a zip made by the standard library, deflated."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


class OneWayStream(io.RawIOBase):
    """A stream that cannot seek, like a request body."""

    def __init__(self, data: bytes) -> None:
        self.inner = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray) -> int:  # type: ignore[override]
        data = self.inner.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


FILES = {"manifest.json": b'{"format": "tailboard"}', "dir/labels.jsonl": b'{"id": "a"}\n',
         "__MACOSX/._manifest.json": b"x", "dir/.DS_Store": b"x"}


@pytest.mark.parametrize("kind", ["path", "bytes", "stream", "one-way stream"])
def test_an_archive_opens_from_a_path_bytes_or_any_stream(kind: str, tmp_path: Path) -> None:
    data = plain_zip(FILES)
    path = tmp_path / "a.zip"
    path.write_bytes(data)
    source = {"path": path, "bytes": data, "stream": io.BytesIO(data), "one-way stream": OneWayStream(data)}[kind]
    with SafeZip(source) as archive:  # type: ignore[arg-type]
        assert archive.read("dir/labels.jsonl") == b'{"id": "a"}\n'


def test_members_lists_files_without_packaging_noise_unless_asked() -> None:
    with SafeZip(plain_zip({**FILES, "empty/": b""})) as archive:
        assert [m.name for m in archive.members()] == ["manifest.json", "dir/labels.jsonl"]
        assert len(archive.members(noise=True)) == 4
        assert archive.members()[0].size == len(FILES["manifest.json"])
        assert archive.has("./dir/labels.jsonl") and archive.has("dir\\labels.jsonl")
        assert not archive.has("empty/") and not archive.has("nothing")


def test_a_member_is_streamed_in_bounded_chunks() -> None:
    data = bytes(range(256)) * 20_000
    with SafeZip(plain_zip({"big.bin": data})) as archive:
        chunks = list(archive.stream("big.bin"))
    assert b"".join(chunks) == data
    assert max(len(c) for c in chunks) <= 1 << 20 and len(chunks) >= 5


def test_a_member_declaring_more_than_the_limit_is_refused_before_inflating() -> None:
    with SafeZip(plain_zip({"labels-v1.jsonl": b"x" * 1000})) as archive:
        with pytest.raises(ArchiveError, match=r"^labels-v1.jsonl is too large: it holds 1,000 bytes, "
                                                r"the limit is 999 bytes$"):
            archive.read("labels-v1.jsonl", limit=999)
        assert archive.spent == 0
        assert archive.read("labels-v1.jsonl", limit=1000) == b"x" * 1000


def test_a_member_that_inflates_past_its_declared_size_is_refused_at_that_size() -> None:
    entry = deflated("labels-v1.jsonl", b"y" * 100_000)
    lying = Entry(entry.name, entry.body, 10, entry.crc)
    with SafeZip(zip_bytes([lying])) as archive, pytest.raises(ArchiveError, match="labels-v1.jsonl is damaged"):
        archive.read("labels-v1.jsonl")
    assert archive.spent <= 10


def test_a_member_whose_checksum_fails_is_damaged() -> None:
    entry = stored("a.txt", b"hello")
    damaged = zip_bytes([Entry("a.txt", entry.body, 5, entry.crc ^ 1, method=0)])
    with SafeZip(damaged) as archive, pytest.raises(ArchiveError, match=r"^a.txt is damaged and cannot be read$"):
        archive.read("a.txt")


def test_sha256_is_checked_while_reading() -> None:
    with SafeZip(plain_zip({"f": b"abc"})) as archive:
        assert archive.read("f", sha256=hashlib.sha256(b"abc").hexdigest().upper()) == b"abc"
        with pytest.raises(ArchiveError, match=r"^f is damaged: its SHA-256 is not the recorded one$"):
            archive.read("f", sha256=hashlib.sha256(b"abd").hexdigest())


@pytest.mark.parametrize(("name", "reason"), [
    ("/etc/passwd", "its path is absolute"),
    ("\\\\server\\share\\x", "its path is absolute"),
    ("../outside.txt", "its path climbs out of the archive with '..'"),
    ("a/../../outside.txt", "its path climbs out of the archive with '..'"),
    ("a\\..\\..\\outside.txt", "its path climbs out of the archive with '..'"),
    ("C:/Windows/x.dll", "its path names a drive"),
    ("c:relative.txt", "its path names a drive"),
    ("a\x00b.txt", "its name holds a control character"),
    ("a\nb.txt", "its name holds a control character"),
])
def test_a_member_whose_path_escapes_refuses_the_archive(name: str, reason: str) -> None:
    data = zip_bytes([stored("fine.txt", b"ok"), stored(name, b"x")])
    with pytest.raises(ArchiveError) as caught:
        SafeZip(data)
    assert str(caught.value) == f"{name!r} is refused: {reason}"


def test_a_symbolic_link_refuses_the_archive() -> None:
    link = stored("data/labels.jsonl", b"/etc/passwd", external_attr=0o120777 << 16)
    with pytest.raises(ArchiveError, match="'data/labels.jsonl' is refused: it is a symbolic link"):
        SafeZip(zip_bytes([link]))
    regular = stored("data/labels.jsonl", b"ok", external_attr=0o100644 << 16)
    with SafeZip(zip_bytes([regular])) as archive:
        assert archive.read("data/labels.jsonl") == b"ok"


def test_names_that_only_look_odd_are_read() -> None:
    with SafeZip(zip_bytes([stored("a..b/c...txt", b"1"), stored("./d.txt", b"2")])) as archive:
        assert archive.read("a..b/c...txt") == b"1"
        assert archive.read("d.txt") == b"2"


def test_a_name_stored_twice_is_read_only_when_both_copies_agree() -> None:
    same = zip_bytes([stored("a.py", b"x = 1"), stored("a.py", b"x = 1"), stored("b", b"1"), stored("b", b"2")])
    with SafeZip(same) as archive:
        assert archive.read("a.py") == b"x = 1"
        with pytest.raises(ArchiveError, match="^b appears twice in the archive with different contents$"):
            archive.read("b")


def test_encrypted_and_unsupported_members_say_what_to_do() -> None:
    locked = stored("secret.txt", b"x", flags=0x1)
    odd = Entry("odd.bin", b"x", 1, 0, method=99)
    with SafeZip(zip_bytes([locked, odd])) as archive:
        with pytest.raises(ArchiveError, match="^secret.txt is password-protected"):
            archive.read("secret.txt")
        with pytest.raises(ArchiveError, match="^odd.bin uses a compression method that is not supported"):
            archive.read("odd.bin")


def test_what_is_no_zip_or_no_file_gets_a_sentence(tmp_path: Path) -> None:
    with pytest.raises(ArchiveError, match="^the file is not a zip archive, or it is damaged$"):
        SafeZip(b"id,prediction\n")
    with pytest.raises(ArchiveError, match="^the file cannot be read: no such file$"):
        SafeZip(tmp_path / "missing.zip")
    with SafeZip(plain_zip({"a": b""})) as archive, pytest.raises(ArchiveError, match="^the archive has no member b$"):
        archive.read("b")


def test_too_many_entries_refuse_the_archive() -> None:
    with pytest.raises(ArchiveError, match="holds 3 entries; the limit is 2"):
        SafeZip(plain_zip({"a": b"", "b": b"", "c": b""}), max_members=2)


def test_the_budget_bounds_everything_inflated_from_one_archive() -> None:
    files = {name: bytes(600_000) for name in ("a", "b", "c")}
    with SafeZip(plain_zip(files), budget=1_500_000) as archive:
        archive.read("a")
        archive.read("b")
        with pytest.raises(ArchiveError, match="inflate to more than 1,500,000 bytes in all"):
            archive.read("c")


def test_a_nested_zip_names_its_members_through_the_outer_one() -> None:
    inner = plain_zip({"truth.txt": b"\xff\xfe"})
    outer = SafeZip(plain_zip({"ref/reference_data.zip": inner}))
    with outer, outer.open_zip("ref/reference_data.zip") as zipped:
        assert zipped.members()[0].name == "truth.txt"
        with pytest.raises(ArchiveError, match=r"^ref/reference_data.zip/truth.txt line 1: not UTF-8 text "):
            zipped.read_text("truth.txt")
        with pytest.raises(ArchiveError, match="^ref/reference_data.zip has no member labels.txt$"):
            zipped.read("labels.txt")


def test_a_missing_manifest_key_names_the_member_and_key() -> None:
    manifest = {"format": "tailboard", "phases": [{"position": 1, "labels": []}, {"position": 2}]}
    with SafeZip(plain_zip({"manifest.json": json.dumps(manifest).encode()})) as archive:
        record = archive.read_json("manifest.json")
    assert isinstance(record, Record) and record == manifest and json.loads(json.dumps(record)) == manifest
    assert record.get("competition") is None
    with pytest.raises(ArchiveError, match=r"^manifest.json: missing key 'competition'$"):
        record["competition"]
    assert record["phases"][0]["labels"] == []
    with pytest.raises(ArchiveError, match=r"^manifest.json: missing key 'phases\[1\].labels'$"):
        record["phases"][1]["labels"]
    with pytest.raises(ScoringError):
        record["competition"]


def test_a_broken_json_line_names_the_member_and_line() -> None:
    lines = b'{"id": "a"}\n\n{"id": "b"}\n{"id": "c",\n'
    with SafeZip(plain_zip({"labels-v1.jsonl": lines, "l2.jsonl": b'{"a": 1}\n[1]\n'})) as archive:
        with pytest.raises(ArchiveError) as caught:
            archive.read_jsonl("labels-v1.jsonl")
        assert str(caught.value).startswith("labels-v1.jsonl line 4: not valid JSON: ")
        with pytest.raises(ArchiveError, match=r"^l2.jsonl line 2: expected a JSON object, found a list$"):
            archive.read_jsonl("l2.jsonl")


def test_a_missing_key_of_a_json_lines_record_names_its_line() -> None:
    with SafeZip(plain_zip({"audit.jsonl": b'{"at": "x"}\n\n{"actor": "y"}\n'})) as archive:
        rows = archive.read_jsonl("audit.jsonl")
    assert [row.line for row in rows] == [1, 3]
    assert rows[0]["at"] == "x"
    with pytest.raises(ArchiveError, match=r"^audit.jsonl line 3: missing key 'at'$"):
        rows[1]["at"]


def test_a_broken_json_document_names_its_line() -> None:
    archive = SafeZip(plain_zip({"manifest.json": b'{\n  "a": 1,\n  "b": \n}'}))
    with archive, pytest.raises(ArchiveError, match=r"^manifest.json line 4: not valid JSON: Expecting value"):
        archive.read_json("manifest.json")
