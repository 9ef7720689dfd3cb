"""Arrow arrays to numpy straight from their buffers.

pyarrow's own ``to_numpy``, ``fill_null(python_value)`` and ``pa.array(list)`` import
pandas when it is installed (about a quarter of a second and 40 MB, more than scoring
a million items); the scoring command line never needs pandas, so its hot path reads
the buffers directly.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

import numpy as np
import numpy.typing as npt
import pyarrow as pa

T = TypeVar("T", bound=np.generic)

_DTYPES: dict[pa.DataType, type[np.generic]] = {
    pa.int8(): np.int8,
    pa.int32(): np.int32,
    pa.int64(): np.int64,
    pa.float64(): np.float64,
}


def _bits(buffer: pa.Buffer, offset: int, length: int) -> npt.NDArray[np.bool_]:
    """Return the bits of an Arrow bitmap as booleans."""
    raw = np.frombuffer(buffer, dtype=np.uint8)
    return np.unpackbits(raw, count=offset + length, bitorder="little")[offset:].astype(bool)


def valid(array: pa.Array) -> npt.NDArray[np.bool_]:
    """Return which entries are not null."""
    bitmap = array.buffers()[0]
    if bitmap is None or array.null_count == 0:
        return np.ones(len(array), dtype=bool)
    return _bits(bitmap, array.offset, len(array))


def values(array: pa.Array, dtype: type[T], fill: float = 0) -> npt.NDArray[T]:
    """Return a boolean or numeric array as a new numpy array of ``dtype``, nulls as ``fill``."""
    if pa.types.is_boolean(array.type):
        out: npt.NDArray[T] = _bits(array.buffers()[1], array.offset, len(array)).astype(dtype)
    else:
        arrow_type = next((t for t, d in _DTYPES.items() if d is dtype), None)
        if arrow_type is None:
            raise TypeError(f"no Arrow type for {dtype}")
        if array.type != arrow_type:
            array = array.cast(arrow_type)
        size = np.dtype(dtype).itemsize
        out = np.frombuffer(array.buffers()[1], dtype=dtype, count=len(array), offset=array.offset * size).copy()
    if array.null_count:
        out[~valid(array)] = fill
    return out


def strings(items: Sequence[str]) -> pa.Array:
    """Return Python strings as an Arrow string array, built from buffers (no pandas shim)."""
    encoded = [item.encode("utf-8") for item in items]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int32)
    np.cumsum([len(chunk) for chunk in encoded], out=offsets[1:])
    return pa.StringArray.from_buffers(len(encoded), pa.py_buffer(offsets.tobytes()), pa.py_buffer(b"".join(encoded)))
