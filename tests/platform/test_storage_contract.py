"""One contract for every storage backend: local files, S3 on moto, S3 on rclone.

moto (server mode, on loopback) checks the S3 protocol; ``rclone serve s3`` is a second,
independent S3 implementation that also verifies SigV4 request signatures.
"""

from __future__ import annotations

import hashlib
import io
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from ports import free_port
from s3_servers import ACCESS_KEY, BUCKET, SECRET_KEY, s3_client

from leaderboard.platform import Settings
from leaderboard.platform.storage import make_storages
from leaderboard.platform.storage.base import ObjectNotFound, Storage, StorageError
from leaderboard.platform.storage.keys import InvalidKey
from leaderboard.platform.storage.local import LocalStorage
from leaderboard.platform.storage.s3 import S3Storage

BACKENDS = ["local", "moto", "rclone"]
MiB = 1024 * 1024

MakeStorage = Callable[[str], Storage]


def _endpoint(request: pytest.FixtureRequest, backend: str) -> str:
    return request.getfixturevalue(f"{backend}_endpoint")


# ---------------------------------------------------------------- storages


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """Name each backend the contract runs against."""
    return request.param


@pytest.fixture
def make_storage(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> MakeStorage:
    """Return a factory of empty storages of this backend, one per namespace name."""
    if backend == "local":
        return lambda name: LocalStorage(tmp_path / name)
    client = s3_client(_endpoint(request, backend))
    run = uuid.uuid4().hex
    return lambda name: S3Storage(client, BUCKET, f"{run}/{name}")


@pytest.fixture
def storage(make_storage: MakeStorage) -> Storage:
    """Return an empty storage of this backend."""
    return make_storage("files")


class ChunkedStream:
    """A non-seekable stream of pseudo-random bytes that remembers their SHA-256."""

    def __init__(self, size: int, *, fail_after: int | None = None) -> None:
        self.remaining = size
        self.fail_after = fail_after
        self.sent = 0
        self.digest = hashlib.sha256()
        self.block = hashlib.sha256(b"tailboard").digest() * 2048  # 64 KiB, not all zeros

    def read(self, size: int = -1) -> bytes:
        """Return up to size bytes (a 64 KiB block at most) and hash them."""
        if self.fail_after is not None and self.sent >= self.fail_after:
            raise OSError("client went away mid-upload")
        size = len(self.block) if size is None or size < 0 else min(size, len(self.block))
        chunk = self.block[: min(size, self.remaining)]
        chunk = bytes([self.sent % 251]) + chunk[1:] if chunk else chunk  # vary the blocks
        self.remaining -= len(chunk)
        self.sent += len(chunk)
        self.digest.update(chunk)
        return chunk


def read_all_hashing(stream: io.RawIOBase) -> tuple[int, str]:
    """Read a stream to its end in chunks; return its size and SHA-256."""
    digest, size = hashlib.sha256(), 0
    with stream:
        while chunk := stream.read(MiB):
            digest.update(chunk)
            size += len(chunk)
    return size, digest.hexdigest()


# ---------------------------------------------------------------- the contract


def test_put_bytes_returns_key_size_and_sha256(storage: Storage) -> None:
    stored = storage.put("phases/1/questions.jsonl", b'{"id": "q1"}\n')
    assert stored.key == "phases/1/questions.jsonl"
    assert stored.size == 13
    assert stored.sha256 == hashlib.sha256(b'{"id": "q1"}\n').hexdigest()


def test_put_stream_hashes_what_it_streamed(storage: Storage) -> None:
    stream = ChunkedStream(300_000)
    stored = storage.put("submissions/1/preds.jsonl", stream)
    assert (stored.size, stored.sha256) == (300_000, stream.digest.hexdigest())
    assert hashlib.sha256(storage.read_bytes("submissions/1/preds.jsonl")).hexdigest() == stored.sha256


@pytest.mark.parametrize("key", ["a.bin", "deep/er/key.bin", "unicodé/ключ.bin", "dots/v1.2..x/a b+c.bin"])
def test_every_byte_value_round_trips(storage: Storage, key: str) -> None:
    payload = bytes(range(256)) * 10
    storage.put(key, payload)
    assert storage.read_bytes(key) == payload
    with storage.open(key) as handle:
        assert handle.read() == payload
    assert list(storage.iter_keys()) == [key]


def test_empty_object_round_trips(storage: Storage) -> None:
    stored = storage.put("empty.txt", io.BytesIO(b""))
    assert (stored.size, stored.sha256) == (0, hashlib.sha256(b"").hexdigest())
    assert storage.exists("empty.txt")
    assert storage.read_bytes("empty.txt") == b""


def test_overwrite_replaces_content(storage: Storage) -> None:
    storage.put("k.txt", b"first version, longer")
    stored = storage.put("k.txt", io.BytesIO(b"second"))
    assert storage.read_bytes("k.txt") == b"second"
    assert stored.size == 6
    assert list(storage.iter_keys()) == ["k.txt"]


def test_exists_and_delete(storage: Storage) -> None:
    assert not storage.exists("x/y.txt")
    storage.put("x/y.txt", b"1")
    storage.put("x/z.txt", b"2")
    assert storage.exists("x/y.txt")
    assert not storage.exists("x")  # a prefix of keys is not an object
    storage.delete("x/y.txt")
    assert not storage.exists("x/y.txt")
    assert storage.read_bytes("x/z.txt") == b"2"


def test_delete_of_missing_key_is_not_an_error(storage: Storage) -> None:
    storage.delete("never/stored.txt")
    storage.put("a/b.txt", b"1")
    storage.delete("a")  # only a prefix
    assert storage.exists("a/b.txt")


def test_iter_keys_filters_by_prefix_in_sorted_order(storage: Storage) -> None:
    for key in ["b/1", "a/2", "ab/c", "a-b", "a/1", "a/sub/3"]:
        storage.put(key, key.encode())
    assert list(storage.iter_keys()) == ["a-b", "a/1", "a/2", "a/sub/3", "ab/c", "b/1"]
    assert list(storage.iter_keys("a/")) == ["a/1", "a/2", "a/sub/3"]
    assert list(storage.iter_keys("a")) == ["a-b", "a/1", "a/2", "a/sub/3", "ab/c"]
    assert list(storage.iter_keys("a/s")) == ["a/sub/3"]
    assert list(storage.iter_keys("c")) == []


def test_iter_keys_of_an_empty_storage_is_empty(storage: Storage) -> None:
    assert list(storage.iter_keys()) == []
    assert list(storage.iter_keys("phases/")) == []


@pytest.mark.parametrize("method", ["open", "read_bytes"])
def test_missing_key_raises_object_not_found(storage: Storage, method: str) -> None:
    storage.put("present.txt", b"1")
    with pytest.raises(ObjectNotFound):
        getattr(storage, method)("absent.txt")
    with pytest.raises(ObjectNotFound):
        getattr(storage, method)("present.txt/below")


BAD_KEYS = [
    "", "/etc/passwd", "../escape.txt", "a/../../escape.txt", "a/..", "./a", "a/./b",
    "a//b", "a/", "a\\b", "..\\escape.txt", "a\x00b", "line\nbreak", "x" * 600,
    ".tb-partial-abc", None, b"bytes-key",
]


@pytest.mark.parametrize("key", BAD_KEYS, ids=repr)
@pytest.mark.parametrize("method", ["put", "open", "read_bytes", "exists", "delete"])
def test_bad_keys_are_rejected_before_touching_the_backend(storage: Storage, method: str, key: object) -> None:
    args = (key, b"payload") if method == "put" else (key,)
    with pytest.raises(InvalidKey) as caught:
        getattr(storage, method)(*args)
    assert isinstance(caught.value, StorageError) and isinstance(caught.value, ValueError)
    assert not isinstance(caught.value, ObjectNotFound)
    assert list(storage.iter_keys()) == []


@pytest.mark.parametrize("prefix", ["/", "../", "a//", "a\\", "a/../b"])
def test_bad_prefixes_are_rejected(storage: Storage, prefix: str) -> None:
    with pytest.raises(InvalidKey):
        list(storage.iter_keys(prefix))


def test_twenty_megabyte_stream_round_trips(storage: Storage) -> None:
    stream = ChunkedStream(20 * MiB + 123)
    stored = storage.put("submissions/big/preds.jsonl", stream)
    assert (stored.size, stored.sha256) == (20 * MiB + 123, stream.digest.hexdigest())
    assert read_all_hashing(storage.open("submissions/big/preds.jsonl")) == (stored.size, stored.sha256)


@pytest.mark.parametrize("size, fail_after", [(100_000, 50_000), (12 * MiB, 10 * MiB)], ids=["small", "multipart"])
def test_a_failed_stream_leaves_the_previous_object(storage: Storage, size: int, fail_after: int) -> None:
    storage.put("k.bin", b"previous")
    with pytest.raises(OSError, match="client went away"):
        storage.put("k.bin", ChunkedStream(size, fail_after=fail_after))
    assert storage.read_bytes("k.bin") == b"previous"
    with pytest.raises(OSError):
        storage.put("new.bin", ChunkedStream(size, fail_after=fail_after))
    assert not storage.exists("new.bin")
    assert list(storage.iter_keys()) == ["k.bin"]


def test_storages_of_one_backend_do_not_share_keys(make_storage: MakeStorage) -> None:
    first, second = make_storage("one"), make_storage("two")
    first.put("same/key.txt", b"first")
    assert not second.exists("same/key.txt")
    assert list(second.iter_keys()) == []
    with pytest.raises(ObjectNotFound):
        second.read_bytes("same/key.txt")


# ---------------------------------------------------------------- failing backends


@pytest.fixture
def broken_storage(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> Storage:
    """Return a storage whose backend refuses to work (not merely a missing key)."""
    if backend == "local":
        (tmp_path / "a-file").write_bytes(b"")
        return LocalStorage(tmp_path / "a-file" / "root")
    endpoint = _endpoint(request, backend)
    if backend == "rclone":  # rclone checks signatures: sign with the wrong secret
        return S3Storage(s3_client(endpoint, secret="not-the-secret"), BUCKET, "files")
    return S3Storage(s3_client(endpoint), "no-such-bucket", "files")


def test_a_refusing_backend_raises_storage_error_not_object_not_found(broken_storage: Storage) -> None:
    with pytest.raises(StorageError) as caught:
        broken_storage.put("k.txt", b"1")
    assert not isinstance(caught.value, (ObjectNotFound, InvalidKey))
    with pytest.raises(StorageError) as caught:
        broken_storage.put("k.txt", ChunkedStream(1000))
    assert not isinstance(caught.value, (ObjectNotFound, InvalidKey))


def test_an_unreachable_s3_endpoint_raises_storage_error() -> None:
    storage = S3Storage(s3_client(f"http://127.0.0.1:{free_port()}"), BUCKET, "files")
    for call in (lambda: storage.put("k", b"1"), lambda: storage.read_bytes("k"), lambda: list(storage.iter_keys())):
        with pytest.raises(StorageError) as caught:
            call()
        assert not isinstance(caught.value, ObjectNotFound)


# ---------------------------------------------------------------- make_storages


@pytest.fixture
def instance_storages(backend: str, request: pytest.FixtureRequest, tmp_path: Path,
                      monkeypatch: pytest.MonkeyPatch) -> tuple[Storage, Storage]:
    """Return make_storages' (uploads, hidden labels) for this backend."""
    env = {"TAILBOARD_STORAGE": "local", "SECRET_KEY": "test"}
    if backend != "local":
        for name, value in {"AWS_ENDPOINT_URL": _endpoint(request, backend), "AWS_ACCESS_KEY_ID": ACCESS_KEY,
                            "AWS_SECRET_ACCESS_KEY": SECRET_KEY, "AWS_DEFAULT_REGION": "us-east-1"}.items():
            monkeypatch.setenv(name, value)
        env["TAILBOARD_STORAGE"] = f"s3://{BUCKET}/{uuid.uuid4().hex}/instance"
    settings = Settings.from_env(env, data_dir=tmp_path / "data", labels_dir=tmp_path / "labels")
    return make_storages(settings)


def test_hidden_labels_and_uploads_are_separate_namespaces(instance_storages: tuple[Storage, Storage]) -> None:
    uploads, labels = instance_storages
    labels.put("phases/1/labels-v1.jsonl", b"hidden")
    uploads.put("phases/1/questions.jsonl", b"public")
    assert not uploads.exists("phases/1/labels-v1.jsonl")
    assert list(uploads.iter_keys()) == ["phases/1/questions.jsonl"]
    assert list(labels.iter_keys()) == ["phases/1/labels-v1.jsonl"]
    with pytest.raises(ObjectNotFound):
        uploads.read_bytes("phases/1/labels-v1.jsonl")
    uploads.put("phases/1/labels-v1.jsonl", b"participant upload")
    uploads.delete("phases/1/labels-v1.jsonl")
    assert labels.read_bytes("phases/1/labels-v1.jsonl") == b"hidden"


def test_local_layout_puts_labels_outside_the_data_dir(tmp_path: Path) -> None:
    settings = Settings.from_env({"SECRET_KEY": "test"}, data_dir=tmp_path / "data", labels_dir=tmp_path / "labels")
    uploads, labels = make_storages(settings)
    labels.put("phases/7/labels-v2.jsonl", b"hidden")
    uploads.put("submissions/3/preds.jsonl", b"preds")
    assert (tmp_path / "labels/phases/7/labels-v2.jsonl").read_bytes() == b"hidden"
    assert (tmp_path / "data/files/submissions/3/preds.jsonl").read_bytes() == b"preds"
    assert not any(path.name.startswith(".tb-partial-") for path in tmp_path.rglob("*"))


def test_s3_layout_uses_files_and_hidden_labels_prefixes(moto_endpoint: str, monkeypatch: pytest.MonkeyPatch,
                                                         tmp_path: Path) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_endpoint)
    for name, value in {"AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
                        "AWS_DEFAULT_REGION": "us-east-1"}.items():
        monkeypatch.setenv(name, value)
    run = uuid.uuid4().hex
    settings = Settings.from_env({"TAILBOARD_STORAGE": f"s3://{BUCKET}/{run}/", "SECRET_KEY": "t"}, data_dir=tmp_path)
    uploads, labels = make_storages(settings)
    uploads.put("a.txt", b"1")
    labels.put("b.txt", b"2")
    listed = s3_client(moto_endpoint).list_objects_v2(Bucket=BUCKET, Prefix=f"{run}/")
    assert sorted(item["Key"] for item in listed["Contents"]) == [f"{run}/files/a.txt", f"{run}/hidden_labels/b.txt"]


@pytest.mark.parametrize("url", ["ftp://host/x", "LOCAL", "s3:/", "s3://", "file:///tmp"])
def test_unknown_storage_urls_are_refused_with_the_valid_choices(url: str, tmp_path: Path) -> None:
    settings = Settings.from_env({"TAILBOARD_STORAGE": url, "SECRET_KEY": "t"}, data_dir=tmp_path)
    with pytest.raises(ValueError, match="s3://bucket"):
        make_storages(settings)
