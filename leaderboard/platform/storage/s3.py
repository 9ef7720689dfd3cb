"""Storage in an S3 bucket (AWS or any S3-compatible server) under one key prefix."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, BinaryIO

from boto3.exceptions import Boto3Error
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from leaderboard.platform.storage.base import ObjectNotFound, StorageError, StoredObject
from leaderboard.platform.storage.keys import check_key, check_prefix

NOT_FOUND_CODES = frozenset({"404", "NoSuchKey", "NotFound"})


def client_config(timeout: float) -> Config:
    """Return boto3 client settings that fail a stalled server within seconds instead of hanging.

    botocore's defaults (60 s to connect, 60 s per read, legacy retries) keep a request or a
    scoring run waiting minutes on a frozen server. Here each try waits at most ``timeout``
    (TAILBOARD_STORAGE_TIMEOUT) and botocore's standard mode retries a few times
    (AWS_MAX_ATTEMPTS changes how many); beyond that a StorageError reaches the caller,
    and scoring retries it later (submissions/recovery.py).
    """
    return Config(connect_timeout=min(timeout, 10.0), read_timeout=timeout, retries={"mode": "standard"})


class S3Storage:
    """Objects live in ``bucket`` under ``prefix/``; the client is injected (boto3 S3 client)."""

    def __init__(self, client: Any, bucket: str, prefix: str = "") -> None:
        self.client = client
        self.bucket = bucket
        self.prefix = prefix.strip("/")

    def __repr__(self) -> str:
        return f"S3Storage(bucket={self.bucket!r}, prefix={self.prefix!r})"

    def put(self, key: str, data: bytes | BinaryIO) -> StoredObject:
        """Upload data (streamed in parts when it is a stream) and return what was stored."""
        name = self._name(key)
        if isinstance(data, (bytes, bytearray, memoryview)):
            body = bytes(data)
            with _translate("put", key):
                self.client.put_object(Bucket=self.bucket, Key=name, Body=body)
            return StoredObject(key=key, size=len(body), sha256=hashlib.sha256(body).hexdigest())
        reader = _HashingReader(data)
        with _translate("put", key):
            self.client.upload_fileobj(reader, self.bucket, name)
        return StoredObject(key=key, size=reader.size, sha256=reader.digest.hexdigest())

    def open(self, key: str) -> BinaryIO:
        """Return the object's streaming body (close it when done)."""
        name = self._name(key)
        with _translate("get", key):
            response = self.client.get_object(Bucket=self.bucket, Key=name)
        return response["Body"]

    def read_bytes(self, key: str) -> bytes:
        """Return the whole object."""
        body = self.open(key)
        with _translate("get", key):
            try:
                return body.read()
            finally:
                body.close()

    def exists(self, key: str) -> bool:
        """Return whether an object is stored under key."""
        name = self._name(key)
        try:
            with _translate("head", key):
                self.client.head_object(Bucket=self.bucket, Key=name)
        except ObjectNotFound:
            return False
        return True

    def delete(self, key: str) -> None:
        """Remove the object; S3 treats an absent key as already deleted."""
        name = self._name(key)
        try:
            with _translate("delete", key):
                self.client.delete_object(Bucket=self.bucket, Key=name)
        except StorageError:
            # Some S3-compatible servers (rclone) refuse to delete a key that is only
            # a prefix of other keys; the object is absent all the same.
            if self.exists(key):
                raise

    def iter_keys(self, prefix: str = "") -> Iterator[str]:
        """Yield the stored keys that start with prefix, in sorted order."""
        check_prefix(prefix)
        base = f"{self.prefix}/" if self.prefix else ""
        keys: list[str] = []
        with _translate("list", prefix):
            for page in self.client.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=base + prefix
            ):
                keys.extend(item["Key"][len(base):] for item in page.get("Contents", ()))
        # S3 promises byte order but not every compatible server does; sort to be sure,
        # and skip folder markers some tools create.
        yield from sorted(key for key in keys if not key.endswith("/"))

    def _name(self, key: str) -> str:
        check_key(key)
        return f"{self.prefix}/{key}" if self.prefix else key


class _HashingReader:
    """A read-only, non-seekable view of a stream that hashes and counts what passes."""

    def __init__(self, source: BinaryIO) -> None:
        self.source = source
        self.digest = hashlib.sha256()
        self.size = 0

    def readable(self) -> bool:
        """Return True: this is a readable stream (s3transfer asks)."""
        return True

    def read(self, size: int = -1) -> bytes:
        """Read size bytes (fewer only at the end), hashing them on their way through."""
        # s3transfer takes a short read for the end of the stream, but sockets and
        # WSGI inputs may return less than asked mid-stream: keep reading until full.
        if size is None or size < 0:
            chunks = list(iter(self.source.read, b""))
        else:
            chunks = []
            wanted = size
            while wanted > 0 and (chunk := self.source.read(wanted)):
                chunks.append(chunk)
                wanted -= len(chunk)
        data = b"".join(chunks)
        self.digest.update(data)
        self.size += len(data)
        return data


@contextmanager
def _translate(action: str, key: str) -> Iterator[None]:
    """Turn botocore/boto3 failures into ObjectNotFound or StorageError."""
    try:
        yield
    except ClientError as error:
        code = str(error.response.get("Error", {}).get("Code", ""))
        if code in NOT_FOUND_CODES:
            raise ObjectNotFound(f"no S3 object for key {key!r}") from None
        raise StorageError(f"S3 {action} of {key!r} failed: {code or error}") from error
    except (BotoCoreError, Boto3Error) as error:
        raise StorageError(f"S3 {action} of {key!r} failed: {error}") from error
