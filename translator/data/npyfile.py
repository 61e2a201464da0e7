"""Standard `.npy` files written in pieces, for arrays too big to hold at once.

numpy pads a 1-D array's header so that its shape can grow in place: the file is
opened with a header for length 0, the data is appended piece by piece, and the
header is rewritten with the final length (the same number of bytes) on close.
"""

from __future__ import annotations

import io
import mmap
import os
from pathlib import Path

import numpy as np


def _header(dtype: np.dtype, n: int) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False, "shape": (n,)}
    )
    return buf.getvalue()


class Writer:
    def __init__(self, path: Path, dtype):
        self.path, self.dtype, self.n = Path(path), np.dtype(dtype), 0
        self._file = open(self.path, "wb")
        self._file.write(_header(self.dtype, 0))

    def append(self, values: np.ndarray) -> None:
        values = np.ascontiguousarray(values, dtype=self.dtype)
        self._file.write(values.data)
        self.n += len(values)

    def close(self) -> None:
        header = _header(self.dtype, self.n)
        assert len(header) == len(_header(self.dtype, 0)), "npy header grew"
        self._file.seek(0)
        self._file.write(header)
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()

    def __enter__(self) -> Writer:
        return self

    def __exit__(self, *exc) -> None:
        if exc[0] is None:
            self.close()
        else:
            self._file.close()


class Mapped:
    """A 1-D `.npy` file mapped read-only, for random access: the kernel reads no pages
    ahead of the one asked for, and `release()` drops the pages this process has touched
    from its resident set (they stay in the page cache, shared with other processes)."""

    def __init__(self, path: Path):
        with open(path, "rb") as f:
            if np.lib.format.read_magic(f) != (1, 0):
                raise ValueError(f"{path.name}: not a version 1.0 .npy file")
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
            offset = f.tell()
            self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        if len(shape) != 1 or offset + shape[0] * dtype.itemsize > len(self._map):
            raise ValueError(f"{path.name}: shorter than its header says")
        if hasattr(mmap, "MADV_RANDOM"):
            self._map.madvise(mmap.MADV_RANDOM)
        self.array = np.frombuffer(self._map, dtype=dtype, count=shape[0], offset=offset)

    def release(self) -> None:
        if hasattr(mmap, "MADV_DONTNEED"):
            self._map.madvise(mmap.MADV_DONTNEED)
