"""A new process running a program: time to import mlfuse, then time to the
first result, with an empty disk cache (compiles), with the cache the first
process filled (loads), and with ``MLFUSE_CACHE=0`` (compiles again).

    python bench/cold_start.py            # softmax of 256x256 float32, then a small MLP
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import textwrap

PROGRAM = textwrap.dedent(
    """
    import time
    t0 = time.perf_counter()
    import numpy as np
    import mlfuse
    from mlfuse import Tensor
    t1 = time.perf_counter()
    x = Tensor(np.ones((256, 256), np.float32))
    w = Tensor(np.full((256, 64), 0.01, np.float32))
    y = ((x @ w).relu().softmax(-1) * 2).numpy()
    t2 = time.perf_counter()
    print(f"{(t1 - t0) * 1e3:.1f} {(t2 - t1) * 1e3:.1f}")
    """
)


def run(cache: str, **env) -> tuple[float, float]:
    e = dict(os.environ, MLFUSE_CACHE_DIR=cache, **env)
    out = subprocess.run(
        [sys.executable, "-c", PROGRAM], capture_output=True, text=True, env=e, check=True
    )
    a, b = out.stdout.split()
    return float(a), float(b)


def main() -> None:
    with tempfile.TemporaryDirectory() as cache:
        rows = [
            ("empty cache (compiles)", run(cache)),
            ("second process (disk cache)", run(cache)),
            ("third process (disk cache)", run(cache)),
            ("MLFUSE_CACHE=0 (compiles)", run(cache, MLFUSE_CACHE="0")),
        ]
    print("(x @ w).relu().softmax(-1) * 2, 256x256 @ 256x64 float32, each in a new process")
    for name, (imp, first) in rows:
        print(f"{name:30s} import {imp:7.1f} ms   first result {first:8.1f} ms after import")
    verdict = "within" if rows[1][1][1] <= 50 else "OVER"
    print(f"second process: {rows[1][1][1]:.1f} ms to the first result, {verdict} 50 ms")


if __name__ == "__main__":
    main()
