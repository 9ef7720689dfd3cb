"""Storage backends behind one interface; ``make_storages`` picks one from settings.

``TAILBOARD_STORAGE`` names the backend: ``local`` (files under the data dir, hidden
labels under the labels dir) or ``s3://bucket/prefix`` (``prefix/files`` and
``prefix/hidden_labels`` in one bucket). Uploads and hidden labels are always two
separate storages, so a key in one can never name an object of the other.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from urllib.parse import urlsplit

from leaderboard.platform.config import Settings
from leaderboard.platform.storage.base import Storage
from leaderboard.platform.storage.local import LocalStorage


def make_storages(settings: Settings) -> tuple[Storage, Storage]:
    """Return (uploads and public files, hidden labels) for settings.storage_url."""
    scheme = urlsplit(settings.storage_url).scheme or settings.storage_url
    try:
        factory = BACKENDS[scheme]
    except KeyError:
        raise ValueError(
            f"TAILBOARD_STORAGE must be 'local' or 's3://bucket/prefix', not {settings.storage_url!r}"
        ) from None
    return factory(settings)


def _local_storages(settings: Settings) -> tuple[Storage, Storage]:
    return LocalStorage(settings.data_dir / "files"), LocalStorage(settings.labels_dir)


def _s3_storages(settings: Settings) -> tuple[Storage, Storage]:
    # Imported here, not at the top: only an S3 instance pays for importing boto3 and botocore.
    import boto3

    from leaderboard.platform.storage.s3 import S3Storage, client_config

    url = urlsplit(settings.storage_url)
    if not url.netloc:
        raise ValueError(f"TAILBOARD_STORAGE {settings.storage_url!r} names no bucket (s3://bucket/prefix)")
    prefix = url.path.strip("/")
    client = boto3.client("s3", endpoint_url=os.environ.get("AWS_ENDPOINT_URL") or None,
                          config=client_config(settings.storage_timeout_seconds))
    return (
        S3Storage(client, url.netloc, _join(prefix, "files")),
        S3Storage(client, url.netloc, _join(prefix, "hidden_labels")),
    )


def _join(prefix: str, name: str) -> str:
    return f"{prefix}/{name}" if prefix else name


BACKENDS: dict[str, Callable[[Settings], tuple[Storage, Storage]]] = {
    "local": _local_storages,
    "s3": _s3_storages,
}
