"""Helpers of the zip tests: zip bytes written by hand (any declared size, any entry), and zip bombs."""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

DEFLATED, STORED = 8, 0
_POLY = 0xEDB88320


@dataclass(frozen=True)
class Entry:
    """One entry as it will be written: its name, its stored bytes and what its headers declare."""

    name: str
    body: bytes  # compressed (or stored) bytes
    size: int  # declared uncompressed size
    crc: int
    method: int = DEFLATED
    external_attr: int = 0
    create_system: int = 3  # Unix
    flags: int = 0


def stored(name: str, data: bytes, **kwargs: int) -> Entry:
    """Return an entry holding data uncompressed (kwargs: other Entry fields, such as flags or external_attr)."""
    return Entry(name, data, len(data), zlib.crc32(data), **{"method": STORED, **kwargs})


def deflated(name: str, data: bytes) -> Entry:
    """Return an entry holding data deflated."""
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    return Entry(name, packer.compress(data) + packer.flush(), len(data), zlib.crc32(data))


def zip_bytes(entries: list[Entry]) -> bytes:
    """Return a zip archive of the entries, headers saying exactly what each entry declares."""
    out, directory = bytearray(), bytearray()
    for entry in entries:
        name = entry.name.encode()
        offset = len(out)
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, entry.flags, entry.method, 0, 0x21, entry.crc,
                           len(entry.body), entry.size, len(name), 0) + name + entry.body
        directory += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, (entry.create_system << 8) | 20, 20, entry.flags,
                                 entry.method, 0, 0x21, entry.crc, len(entry.body), entry.size, len(name), 0, 0,
                                 0, 0, entry.external_attr, offset) + name
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(entries), len(entries), len(directory), len(out), 0)
    return bytes(out + directory + end)


def zeros_bomb(name: str, size: int, *, declared: int | None = None) -> bytes:
    """Return a zip whose one member inflates to size zero bytes (a few MB per GiB), declaring declared bytes."""
    return zip_bytes([zeros_entry(name, size, declared=declared)])


def zeros_entry(name: str, size: int, *, declared: int | None = None) -> Entry:
    """Return an entry that inflates to size zero bytes, declaring declared bytes (its true size by default).

    Every MiB of zeros deflates to the same bytes once the compressor's history is
    flushed, so the body is one compressed MiB repeated: no GiB is ever built here.
    """
    mib = 1 << 20
    assert size % mib == 0
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    piece = packer.compress(bytes(mib)) + packer.flush(zlib.Z_FULL_FLUSH)
    body = piece * (size // mib) + packer.flush(zlib.Z_FINISH)
    return Entry(name, body, size if declared is None else declared, crc32_of_zeros(size))


def crc32_of_zeros(n: int) -> int:
    """Return zlib.crc32(bytes(n)) without building the bytes (the CRC register is linear over GF(2))."""
    # operator of one zero bit, then squared up to one byte, then applied per bit of n (as zlib's crc32_combine)
    bit = [_POLY] + [1 << i for i in range(31)]
    op = _square(_square(_square(bit)))  # eight zero bits: one byte
    crc = 0xFFFFFFFF
    while n:
        if n & 1:
            crc = _times(op, crc)
        op = _square(op)
        n >>= 1
    return crc ^ 0xFFFFFFFF


def _times(matrix: list[int], vector: int) -> int:
    """Return matrix · vector over GF(2); column i of the matrix is matrix[i]."""
    total, i = 0, 0
    while vector:
        if vector & 1:
            total ^= matrix[i]
        vector >>= 1
        i += 1
    return total


def _square(matrix: list[int]) -> list[int]:
    """Return matrix · matrix over GF(2)."""
    return [_times(matrix, column) for column in matrix]
