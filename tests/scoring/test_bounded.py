"""One bounded read for every upload: never more than one chunk past the limit, refused once past it."""

from __future__ import annotations

import io

import pytest

import scoring
from scoring.bounded import CHUNK, FileTooLarge, read_bounded


class EndlessStream(io.RawIOBase):
    """A stream that never ends and counts the bytes taken from it."""

    def __init__(self) -> None:
        self.taken = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray) -> int:  # type: ignore[override]
        buffer[:] = b"x" * len(buffer)
        self.taken += len(buffer)
        return len(buffer)


def test_content_at_the_limit_is_returned_whole() -> None:
    assert read_bounded(io.BytesIO(b"abcde"), limit=5) == b"abcde"
    assert read_bounded(b"abcde", limit=5) == b"abcde"
    assert read_bounded(bytearray(b"ab"), limit=5) == b"ab"


@pytest.mark.parametrize("source", [io.BytesIO(b"abcdef"), b"abcdef", memoryview(b"abcdef")])
def test_content_past_the_limit_is_refused_with_the_participant_message(source: object) -> None:
    with pytest.raises(FileTooLarge) as caught:
        read_bounded(source, limit=5)  # type: ignore[arg-type]
    assert caught.value.limit == 5
    assert caught.value.to_json() == {"errors": [{"line": None, "id": None, "message":
                                                  "The file is too large: the limit is 5 bytes uncompressed."}],
                                      "error_count": 1}


def test_an_endless_stream_is_read_at_most_one_byte_past_the_limit() -> None:
    stream = EndlessStream()
    with pytest.raises(FileTooLarge):
        read_bounded(stream, limit=3 * CHUNK + 7)  # type: ignore[arg-type]
    assert stream.taken == 3 * CHUNK + 8


def test_too_large_is_a_prediction_file_error_exported_from_scoring() -> None:
    assert issubclass(scoring.FileTooLarge, scoring.PredictionFileError)
    assert scoring.read_bounded is read_bounded
    assert "100 MiB" in FileTooLarge(100 * 1024 * 1024).problems[0].message
