"""The host's share of a call: Python per realize, lazy and under mlfuse.jit, per workload.

    python bench/host_overhead.py                 # on the CPU
    MLFUSE_CUDA_DRIVER=... python bench/host_overhead.py cuda

Each workload of WORKLOADS.md at a tiny size (8 x 8), so the kernels cost next
to nothing and what is timed is the host's work per call: building the graph
and realizing it (lazy), or replaying the captured launches (``mlfuse.jit``),
then a synchronize. On a GPU this is the time a call adds to its kernels;
without one, ``MLFUSE_CUDA_DRIVER`` may name the stand-in driver of
tests/unit/data/libcuda_standin.c (``cc -shared -fPIC -O1 ... -o
libcuda_standin.so``), whose launches do nothing, to time the CUDA path's
Python. Best of 7 loops of 100 calls.
"""

from __future__ import annotations

import functools
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run as cpu  # noqa: E402  (the workloads)

SHAPES = {
    "W1": [(8, 8)],
    "W2": [(8, 8)],
    "W3": [(8, 8)],
    "W4": [(8, 8), (8,), (8,)],
    "W5": [(8, 8), (8, 8)],
    "W9": [(8, 8), (8, 8)],
}


def best_us(f, sync, loops: int = 7, calls: int = 100) -> float:
    for _ in range(5):
        f()
        sync()
    best = float("inf")
    for _ in range(loops):
        t = time.perf_counter()
        for _ in range(calls):
            f()
            sync()
        best = min(best, (time.perf_counter() - t) / calls)
    return best * 1e6


def main(argv: list[str]) -> int:
    import mlfuse

    device = argv[0] if argv else "cpu"
    ops = cpu.MlfuseOps()
    sync = mlfuse.targets.get_target(device).synchronize
    print(f"{'workload':16} {'lazy us':>8} {'jit us':>8}   ({device})")
    for w in cpu.WORKLOADS:
        if w.wid not in SHAPES:
            continue
        xs = [ops.T(np.ones(s, np.float32), device=device).realize() for s in SHAPES[w.wid]]
        program = functools.partial(w.program, ops)
        jitted = mlfuse.jit(program)
        lazy = best_us(functools.partial(lambda p, a: p(*a).realize(), program, xs), sync)
        replay = best_us(functools.partial(jitted, *xs), sync)
        print(f"{w.wid + ' ' + w.name:16} {lazy:8.0f} {replay:8.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
