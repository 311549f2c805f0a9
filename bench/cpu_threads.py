"""Warm realize time of small and large CPU kernels on one thread, always split
over every thread, and with the measured choice (a kernel times one launch on
one thread and one split, and keeps the faster: see ``targets/cpu/threads.py``).
Each row is the best of 5 loops; the check compares the three results.

    python bench/cpu_threads.py
    python bench/cpu_threads.py --loops 50
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import mlfuse
from mlfuse import Tensor
from mlfuse.targets.cpu import threads


def cases():
    rng = np.random.default_rng(0)
    for n in (1 << 16, 1 << 18, 1 << 20, 1 << 22):
        x = Tensor(rng.standard_normal(n).astype(np.float32)).realize()
        yield f"x * 2 + 1, {n >> 10}K", lambda x=x: (x * 2 + 1).realize()
    for n in (64, 128, 256, 512):
        a = Tensor(rng.standard_normal((n, n)).astype(np.float32)).realize()
        yield f"matmul {n}^3", lambda a=a: (a @ a).realize()
    for r in (256, 2048):
        s = Tensor(rng.standard_normal((r, 1024)).astype(np.float32)).realize()
        yield f"softmax {r}x1024", lambda s=s: s.softmax(1).realize()
        yield f"row sum {r}x1024", lambda s=s: s.sum(1).realize()


def timed(fn, loops: int) -> tuple[float, np.ndarray]:
    for _ in range(4):  # compile, and let every kernel make its choice
        out = fn()
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(loops):
            out = fn()
        best = min(best, (time.perf_counter() - t0) / loops)
    return best * 1e6, out.numpy()


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--loops", type=int, default=20)
    args = ap.parse_args(argv)
    n = threads.num_threads()
    print(f"{n} threads; us per realize, best of 5 loops of {args.loops}")
    print("| case | 1 thread | always split | measured choice | check |\n|---|---|---|---|---|")
    gain = threads.SPLIT_GAIN
    for label, make in cases():
        row, outs = [], []
        for mode in ("one", "split", "choice"):
            mlfuse.set_num_threads(1 if mode == "one" else n)
            threads.SPLIT_GAIN = float("inf") if mode == "split" else gain
            fn = make  # a fresh graph each call; the compiled kernels are shared
            if mode != "one":  # forget earlier choices: this mode decides anew
                for k in _kernels_of(fn):
                    k._split.clear()
                    k._trials.clear()
            us, out = timed(fn, args.loops)
            row.append(us)
            outs.append(out)
        threads.SPLIT_GAIN = gain
        ok = "ok" if all(np.array_equal(o, outs[0]) for o in outs[1:]) else "DIFF"
        print(f"| {label} | {row[0]:.0f} | {row[1]:.0f} | {row[2]:.0f} | {ok} |")
    mlfuse.set_num_threads(n)


def _kernels_of(fn) -> list:
    """The CPU kernels ``fn``'s realize launches (run once, recording them)."""
    seen: list = []
    call = threads.CpuKernel.__call__

    def spy(self, pointers):
        if all(self is not k for k in seen):
            seen.append(self)
        return call(self, pointers)

    threads.CpuKernel.__call__ = spy
    try:
        fn()
    finally:
        threads.CpuKernel.__call__ = call
    return seen


if __name__ == "__main__":
    main()
