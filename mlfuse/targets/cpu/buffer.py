"""CPU buffers: flat, C-contiguous numpy arrays in host memory, 64-byte aligned,
recycled through a pool of freed memory."""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

from mlfuse import dtypes
from mlfuse.dtypes import DType
from mlfuse.targets import Buffer

ALIGN = 64
"""Buffers start on a cache line (and a 64-byte vector): no vector access of a
kernel's aligned rows straddles two lines."""


class MemoryPool:
    """Freed buffer memory, kept for the next allocation of the same size.

    A program that runs again allocates the same sizes again; fresh memory from
    the OS costs a page fault per page on first touch (a 64 MiB output: ~4 ms,
    as much as the kernel writing it). At most ``limit`` bytes are kept, the
    least recently freed given back first.
    """

    def __init__(self, limit: int = 1 << 30):
        self.limit = limit
        self.held = 0
        self._free: OrderedDict[int, list[np.ndarray]] = OrderedDict()
        self._lock = threading.Lock()

    def take(self, nbytes: int) -> np.ndarray | None:
        with self._lock:
            arrays = self._free.get(nbytes)
            if not arrays:
                return None
            raw = arrays.pop()
            if not arrays:
                del self._free[nbytes]
            self.held -= nbytes
            return raw

    def give(self, raw: np.ndarray) -> None:
        nbytes = raw.nbytes
        if nbytes == 0 or nbytes > self.limit:
            return
        with self._lock:
            self._free.setdefault(nbytes, []).append(raw)
            self._free.move_to_end(nbytes)
            self.held += nbytes
            while self.held > self.limit:
                size, arrays = next(iter(self._free.items()))
                arrays.pop(0)
                self.held -= size
                if not arrays:
                    del self._free[size]

    def clear(self) -> None:
        with self._lock:
            self._free.clear()
            self.held = 0


POOL = MemoryPool()


def raw_memory(nbytes: int) -> np.ndarray:
    """``nbytes`` of 64-byte-aligned host memory (uint8), recycled when possible."""
    raw = POOL.take(nbytes)
    if raw is not None:
        return raw
    block = np.empty(nbytes + ALIGN, np.uint8)
    start = -block.ctypes.data % ALIGN
    return block[start : start + nbytes]


class CpuBuffer(Buffer):
    """A buffer in host memory: a flat, C-contiguous numpy array and its address.

    ``array`` and ``ptr`` are None once the buffer is freed; its memory then goes
    back to the pool (it was never handed out: reads copy).
    """

    __slots__ = ("array", "ptr", "raw")

    def __init__(self, array: np.ndarray, device: str = "cpu", dtype: DType | None = None):
        if array.ndim != 1 or not array.flags.c_contiguous:
            raise ValueError("a CPU buffer is a flat, C-contiguous array")
        super().__init__(device, array.size, dtype or dtypes.from_numpy(array.dtype))
        self.array: np.ndarray | None = array
        self.ptr: int | None = array.ctypes.data
        self.raw: np.ndarray | None = None  # pool memory backing ``array``, if any

    @staticmethod
    def empty(size: int, dtype: DType, device: str = "cpu") -> CpuBuffer:
        """A new buffer of ``size`` elements (contents undefined), from the pool."""
        raw = raw_memory(size * dtype.np.itemsize)
        buf = CpuBuffer(raw.view(dtype.np), device, dtype)
        buf.raw = raw
        return buf

    def host(self) -> np.ndarray:
        """The array itself (no copy); an error once the buffer is freed."""
        if self.array is None:
            raise ValueError(f"{self!r} was freed")
        return self.array

    def release(self) -> None:
        raw = self.raw
        self.array = self.ptr = self.raw = None
        if raw is not None:
            POOL.give(raw)

    def __del__(self) -> None:
        try:
            self.release()
        except Exception:  # pragma: no cover - interpreter shutdown
            pass
