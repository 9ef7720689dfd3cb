"""S3-protocol servers on loopback for the storage tests: credentials, a boto3 client, port helpers."""

from __future__ import annotations

import boto3
from botocore.config import Config

BUCKET = "tailboard-test"
ACCESS_KEY = "tailboardtestkey"
SECRET_KEY = "tailboardtestsecret"


def s3_client(endpoint: str, *, secret: str = SECRET_KEY) -> object:
    """Return a boto3 S3 client for a test endpoint."""
    return boto3.client(
        "s3", endpoint_url=endpoint, region_name="us-east-1",
        aws_access_key_id=ACCESS_KEY, aws_secret_access_key=secret,
        config=Config(retries={"max_attempts": 2}, connect_timeout=5, read_timeout=60),
    )
