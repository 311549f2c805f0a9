"""Running a CPU kernel: ``[0, extent)`` split into ``[lo, hi)`` chunks over a thread pool.

ctypes releases the GIL during a foreign call, so the chunks of one launch run
in parallel. A launch passes one array of buffer pointers, built once and shared
by all its chunks (see ``cpu-entry-points``).

Handing chunks to other threads costs a wake-up and a wait: about 10-30 us on a
quiet machine, 100-200 us on a small virtual one. The work estimate (innermost
iterations) cannot tell whether a kernel runs long enough to repay that: an
iteration is one FMA of a register-blocked product, or an exp. So a kernel
big enough to split times itself: its second launch runs on one thread, its
third split, and later launches keep the faster way (split only when it saves a
tenth). The first launch is not timed: it touches fresh output pages.
"""

from __future__ import annotations

import ctypes
import os
import time
from concurrent.futures import ThreadPoolExecutor
from functools import cache

from mlfuse.targets import CompiledKernel

MIN_WORK_PER_THREAD = 1 << 15
"""Below this many innermost loop iterations per thread a kernel runs on one thread
(without timing itself)."""

SPLIT_GAIN = 0.9
"""A split launch is kept when it took under this fraction of a one-thread launch."""

ENTRY_TYPE = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int64, ctypes.c_int64)
"""``void k(void **buffers, int64_t lo, int64_t hi)``: every CPU kernel's entry point."""


@cache
def num_threads() -> int:
    """Threads a launch may use: ``MLFUSE_THREADS``, else the CPUs this process may run on."""
    env = os.environ.get("MLFUSE_THREADS")
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            raise ValueError(f"MLFUSE_THREADS must be an integer, got {env!r}") from None
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


@cache
def _pool() -> ThreadPoolExecutor:
    pool = ThreadPoolExecutor(max_workers=num_threads(), thread_name_prefix="mlfuse")
    # start the workers now: a launch timing itself must not pay for their creation
    for f in [pool.submit(time.sleep, 0.001) for _ in range(num_threads())]:
        f.result()
    return pool


def set_num_threads(n: int) -> None:
    """Launch CPU kernels on ``n`` threads from now on (as ``MLFUSE_THREADS=n``)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"the number of threads must be a positive int, got {n!r}")
    os.environ["MLFUSE_THREADS"] = str(n)
    if _pool.cache_info().currsize:
        _pool().shutdown(wait=True)
    num_threads.cache_clear()
    _pool.cache_clear()


class CpuKernel(CompiledKernel):
    """A JIT-compiled CPU kernel: its entry point, parallel extent and work estimate.

    ``engine`` is the MCJIT engine that owns the machine code; the kernel keeps
    it alive.
    """

    __slots__ = (
        "fn", "parallel_extent", "work", "array_type", "engine", "object_code", "_trials",
        "_split",
    )  # fmt: skip

    def __init__(
        self, name: str, address: int, num_buffers: int, parallel_extent: int, work: int, engine
    ):
        super().__init__(name, num_buffers)
        self.fn = ENTRY_TYPE(address)
        self.parallel_extent = parallel_extent
        self.work = work
        self.array_type = ctypes.c_void_p * num_buffers
        self.engine = engine
        self.object_code: bytes | None = None  # the object file it came from (disk cache)
        self._trials: list[float] = []  # launch times so far: untimed, one thread, split
        self._split: dict[int, bool] = {}  # chunk count -> whether splitting paid

    def __call__(self, pointers) -> None:
        """Run the whole space on ``pointers`` (an ``array_type`` of buffer addresses)."""
        extent = self.parallel_extent
        chunks = min(num_threads(), extent, max(1, self.work // MIN_WORK_PER_THREAD))
        if chunks <= 1 or self._split.get(chunks) is False:
            self.fn(pointers, 0, extent)
            return
        if chunks in self._split:
            self._run_split(pointers, chunks)
            return
        # still measuring (see the module docstring)
        trial = len(self._trials)
        _pool()  # started before the clock does
        t0 = time.perf_counter()
        if trial < 2:
            self.fn(pointers, 0, extent)
        else:
            self._run_split(pointers, chunks)
        self._trials.append(time.perf_counter() - t0)
        if trial == 2:
            self._split[chunks] = self._trials[2] < SPLIT_GAIN * self._trials[1]
            self._trials.clear()

    def split_decision(self) -> dict[int, bool]:
        """Whether launches split into ``n`` chunks run split (measured so far)."""
        return dict(self._split)

    def _run_split(self, pointers, chunks: int) -> None:
        extent = self.parallel_extent
        step = -(-extent // chunks)
        pool = _pool()
        # the calling thread runs the first chunk itself: one thread fewer to wake
        futures = [
            pool.submit(self.fn, pointers, lo, min(lo + step, extent))
            for lo in range(step, extent, step)
        ]
        try:
            self.fn(pointers, 0, min(step, extent))
        finally:
            for f in futures:
                f.result()
