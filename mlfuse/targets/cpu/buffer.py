"""CPU buffers: flat, C-contiguous numpy arrays in host memory."""

from __future__ import annotations

import numpy as np

from mlfuse import dtypes
from mlfuse.dtypes import DType
from mlfuse.targets import Buffer


class CpuBuffer(Buffer):
    """A buffer in host memory: a flat, C-contiguous numpy array and its address.

    ``array`` and ``ptr`` are None once the buffer is freed.
    """

    __slots__ = ("array", "ptr")

    def __init__(self, array: np.ndarray, device: str = "cpu", dtype: DType | None = None):
        if array.ndim != 1 or not array.flags.c_contiguous:
            raise ValueError("a CPU buffer is a flat, C-contiguous array")
        super().__init__(device, array.size, dtype or dtypes.from_numpy(array.dtype))
        self.array: np.ndarray | None = array
        self.ptr: int | None = array.ctypes.data

    def host(self) -> np.ndarray:
        """The array itself (no copy); an error once the buffer is freed."""
        if self.array is None:
            raise ValueError(f"{self!r} was freed")
        return self.array

    def release(self) -> None:
        self.array = self.ptr = None
