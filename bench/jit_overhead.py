"""Warm per-call overhead of ``mlfuse.jit`` against the same function run
plainly (graph building, schedule lookup, launches): a program of ``--kernels``
kernels on tiny tensors, so the time is overhead, not arithmetic. The budget
is 100 us + 10 us per kernel.

    python bench/jit_overhead.py
    python bench/jit_overhead.py --kernels 30 --calls 5000
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import mlfuse
from mlfuse import Tensor


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernels", type=int, default=10)
    ap.add_argument("--calls", type=int, default=2000)
    args = ap.parse_args(argv)
    n = args.kernels

    def program(x):
        for i in range(n):
            x = (x * 1.5 + i).contiguous()  # each contiguous() ends a kernel
        return x

    x = Tensor(np.ones((4, 4), np.float32))
    kernels = len(mlfuse.schedule(program(x)))
    jitted = mlfuse.jit(program)
    rows = []
    for name, fn in (("plain", program), ("mlfuse.jit", jitted)):
        for _ in range(3):
            fn(x).realize()
        times = []
        for _ in range(args.calls):
            t0 = time.perf_counter()
            fn(x).realize()
            times.append(time.perf_counter() - t0)
        rows.append((name, statistics.median(times), min(times)))
    budget = 100e-6 + 10e-6 * kernels
    print(f"{kernels} kernels on 4x4 float32, {args.calls} warm calls each")
    for name, med, low in rows:
        print(f"{name:12s} median {med * 1e6:8.1f} us   min {low * 1e6:8.1f} us")
    med = rows[1][1]
    verdict = "within" if med <= budget else "OVER"
    print(f"jit overhead {med * 1e6:.1f} us per call: {verdict} the budget {budget * 1e6:.0f} us")


if __name__ == "__main__":
    main()
