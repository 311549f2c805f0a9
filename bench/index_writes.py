"""Writes at an index in a loop: the cost of filling a realized tensor piece by piece.

    python bench/index_writes.py             # 64 writes per pattern
    python bench/index_writes.py --steps 256 --json writes.json

Each pattern writes one piece per step into a realized float32 tensor and
realizes it (as code that reads the tensor back each step would), for every
index in turn:

* rows:    ``out[i] = x[i].exp() * 2``              out (steps, 1024)
* kv:      ``cache[:, :, i] = k[:, :, i] * 0.5``    cache (8, 16, steps, 64)
* columns: ``out[:, i] = x[:, i] + 1``              out (1024, steps)

Per pattern and backend, in one run: the whole loop's time from cold (mlfuse:
with its compiles, the disk cache off) and the steady time per write (a second
loop over the same indices, min over writes). numpy (and torch, when
importable) run the same loops eagerly. mlfuse compiles a row or KV-cache write
once or twice for all indices (the index is a scalar the program takes), a
column write once per column (the innermost dim keeps its static box).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

os.environ.setdefault("MLFUSE_CACHE", "0")  # cold compiles: the figure this measures

from mlfuse import Tensor  # noqa: E402


def patterns(steps: int) -> dict[str, tuple[tuple[int, ...], tuple[int, ...]]]:
    """name -> (shape of out, shape of x)"""
    return {
        "rows": ((steps, 1024), (steps, 1024)),
        "kv": ((8, 16, steps, 64), (8, 16, steps, 64)),
        "columns": ((1024, steps), (1024, steps)),
    }


def step_numpy(name, out, x, i):
    if name == "rows":
        out[i] = np.exp(x[i]) * 2
    elif name == "kv":
        out[:, :, i] = x[:, :, i] * 0.5
    else:
        out[:, i] = x[:, i] + 1


def step_tensor(name, out, x, i):
    """One write with tensor methods (torch, mlfuse)."""
    if name == "rows":
        out[i] = x[i].exp() * 2
    elif name == "kv":
        out[:, :, i] = x[:, :, i] * 0.5
    else:
        out[:, i] = x[:, i] + 1


def step_mlfuse(name, out: Tensor, x: Tensor, i: int) -> None:
    step_tensor(name, out, x, i)
    out.realize()


def run_loop(step, out, x, name: str, steps: int) -> tuple[float, float]:
    """(whole first loop in s, min time of one write in the second loop in s)"""
    t0 = time.perf_counter()
    for i in range(steps):
        step(name, out, x, i)
    first = time.perf_counter() - t0
    best = float("inf")
    for i in range(steps):
        t0 = time.perf_counter()
        step(name, out, x, i)
        best = min(best, time.perf_counter() - t0)
    return first, best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=64, help="writes per pattern")
    ap.add_argument("--json", help="also write the figures here")
    args = ap.parse_args(argv)
    try:
        import torch
    except ImportError:
        torch = None
        print("torch is not importable: numpy only beside mlfuse", file=sys.stderr)
    rng = np.random.default_rng(0)
    rows = []
    for name, (oshape, xshape) in patterns(args.steps).items():
        print(f"{name} ...", file=sys.stderr, flush=True)
        x = rng.standard_normal(xshape).astype(np.float32)
        want = np.zeros(oshape, np.float32)
        for i in range(args.steps):
            step_numpy(name, want, x, i)
        backends = {"mlfuse": None, "numpy": None}
        out = Tensor(np.zeros(oshape, np.float32)).contiguous().realize()
        backends["mlfuse"] = run_loop(step_mlfuse, out, Tensor(x).realize(), name, args.steps)
        err = float(np.abs(out.numpy() - want).max())
        backends["numpy"] = run_loop(step_numpy, np.zeros(oshape, np.float32), x, name, args.steps)
        if torch is not None:
            t_out = torch.zeros(oshape)
            backends["torch"] = run_loop(step_tensor, t_out, torch.from_numpy(x), name, args.steps)
        for backend, (first, best) in backends.items():
            rows.append(
                {
                    "pattern": name,
                    "backend": backend,
                    "first_loop_s": first,
                    "steady_ms_per_write": best * 1e3,
                    "max_abs_error": err if backend == "mlfuse" else 0.0,
                }
            )
    print(f"\n{args.steps} writes per pattern, float32, each realized\n")
    print("| pattern | backend | first loop (s) | steady ms/write | check |")
    print("|---|---|---|---|---|")
    for r in rows:
        check = "ok" if r["max_abs_error"] <= 1e-5 else f"MISMATCH {r['max_abs_error']:.2e}"
        print(
            f"| {r['pattern']} | {r['backend']} | {r['first_loop_s']:.3f} | "
            f"{r['steady_ms_per_write']:.3f} | {check} |"
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"steps": args.steps, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
