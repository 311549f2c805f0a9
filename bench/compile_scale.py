"""Compile-time scaling: schedule and compile time per op for graphs of 1k to 8k ops.

    python bench/compile_scale.py                       # all graphs, 1k 2k 4k 8k ops
    python bench/compile_scale.py --kinds chain,wide --sizes 1000,8000
    python bench/compile_scale.py --json scale.json

For each kind of graph and size, in one run:

* build: the front end records the ops (Tensor calls);
* schedule: the graph becomes lazy IR and goes through the lazy pipeline
  (lazy-canonicalize ... plan-memory), verified after every pass as in a
  default run;
* compile: the kernels go through the CPU target's kernel pipeline and LLVM
  (O3 + MCJIT), as a first call would.

Times are printed per graph op (the unrealized nodes of the graph). A
compiler whose cost grows linearly with the graph shows a flat "us/op"
column; the last table gives, per kind, the schedule time per op at the
largest size over the smallest (the project's bar: at most 1.3x from 1k to
8k ops). The graphs:

* chain:   h = h + 0.5, h = h * 0.75, ... on a (64, 64) tensor
* reduces: the same chain with h = h - h.max(-1) every 100 ops
* wide:    x0 + x1 + ... + xN of N distinct (16,) inputs
* mlp:     h = relu(h @ W_i + b_i) layers on (8, 32) activations
* params:  an optimizer step over many (8, 8) parameters, one output each:
           p_i - lr * (g_i + wd * p_i) with lr and wd shared (1,) buffers that
           every update reads (the horizontal merges' worst case)
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from mlfuse import Tensor, graph
from mlfuse.dialects import kernel
from mlfuse.driver import _cache, compile_kernels, run_passes
from mlfuse.passes import LAZY_PIPELINE
from mlfuse.targets import get_target

RNG = np.random.default_rng(0)


def chain(n: int) -> Tensor:
    h = Tensor(RNG.standard_normal((64, 64)).astype(np.float32))
    for i in range(n):
        h = h + 0.5 if i % 2 == 0 else h * 0.75
    return h


def reduces(n: int, every: int = 100) -> Tensor:
    h = Tensor(RNG.standard_normal((64, 64)).astype(np.float32))
    for i in range(n):
        if i % every == every - 1:
            h = h - h.max(-1, keepdim=True)
        else:
            h = h * 0.999 if i % 2 else h + 0.001
    return h


def wide(n: int) -> Tensor:
    xs = [Tensor(RNG.standard_normal(16).astype(np.float32)) for _ in range(n + 1)]
    total = xs[0]
    for x in xs[1:]:
        total = total + x
    return total


def mlp(n: int) -> Tensor:
    h = Tensor(RNG.standard_normal((8, 32)).astype(np.float32))
    one = (h @ Tensor(np.eye(32, dtype=np.float32)) + 1.0).relu()
    per_layer = sum(1 for x in graph.toposort([one.node]) if not x.realized)
    for _ in range(max(1, n // per_layer)):
        w = Tensor((RNG.standard_normal((32, 32)) / 6).astype(np.float32))
        b = Tensor(RNG.standard_normal(32).astype(np.float32) * 0.1)
        h = (h @ w + b).relu()
    return h


def params(n: int) -> list[Tensor]:
    lr = Tensor(np.array([0.01], dtype=np.float32))
    wd = Tensor(np.array([1e-4], dtype=np.float32))
    out = []
    for _ in range(max(1, n // 6)):  # six ops per update, two of them expands of views
        p = Tensor(RNG.standard_normal((8, 8)).astype(np.float32))
        g = Tensor(RNG.standard_normal((8, 8)).astype(np.float32))
        out.append(p - lr * (g + wd * p))
    return out


KINDS = {"chain": chain, "reduces": reduces, "wide": wide, "mlp": mlp, "params": params}


def measure(kind: str, n: int, compile_: bool) -> dict:
    _cache.clear()  # every size compiles its kernels itself
    t0 = time.perf_counter()
    out = KINDS[kind](n)
    t1 = time.perf_counter()
    g = graph.collect([o.node for o in (out if isinstance(out, list) else [out])])
    ops = sum(1 for x in g.nodes if not x.realized)
    with graph.gc_paused():  # as a realize compiles
        module = graph.to_module(g)
        run_passes(module, LAZY_PIPELINE)
        t2 = time.perf_counter()
        kernels = [op for op in module.ops if isinstance(op, kernel.FuncOp)]
        t3 = t2
        if compile_:
            compile_kernels(kernels, get_target("cpu"))
            t3 = time.perf_counter()
    return {
        "kind": kind,
        "n": n,
        "ops": ops,
        "kernels": len(kernels),
        "build_s": t1 - t0,
        "schedule_s": t2 - t1,
        "compile_s": t3 - t2,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kinds", default=",".join(KINDS), help="comma list of " + ", ".join(KINDS))
    ap.add_argument("--sizes", default="1000,2000,4000,8000", help="graph sizes in ops")
    ap.add_argument("--no-compile", action="store_true", help="schedule only")
    ap.add_argument("--json", help="also write the figures here")
    args = ap.parse_args(argv)
    kinds = [k for k in args.kinds.split(",") if k]
    for k in kinds:
        if k not in KINDS:
            ap.error(f"unknown kind {k!r}; known: {', '.join(KINDS)}")
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = []
    head = (
        f"{'graph':8s} {'ops':>6s} {'kernels':>7s} {'build ms':>9s} {'schedule ms':>11s} "
        f"{'us/op':>6s} {'compile ms':>10s} {'us/op':>6s}"
    )
    print(head)
    print("-" * len(head))
    for kind in kinds:
        for n in sizes:
            r = measure(kind, n, not args.no_compile)
            rows.append(r)
            print(
                f"{kind:8s} {r['ops']:6d} {r['kernels']:7d} {r['build_s'] * 1e3:9.0f} "
                f"{r['schedule_s'] * 1e3:11.0f} {r['schedule_s'] / r['ops'] * 1e6:6.0f} "
                f"{r['compile_s'] * 1e3:10.0f} {r['compile_s'] / r['ops'] * 1e6:6.0f}",
                flush=True,
            )
    print("\nschedule time per op, largest size over smallest (bar: 1.3x)")
    worst = 0.0
    for kind in kinds:
        mine = [r for r in rows if r["kind"] == kind]
        lo, hi = mine[0], mine[-1]
        ratio = (hi["schedule_s"] / hi["ops"]) / (lo["schedule_s"] / lo["ops"])
        worst = max(worst, ratio)
        print(f"  {kind:8s} {lo['ops']} -> {hi['ops']} ops: {ratio:.2f}x")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)
    return 0 if worst <= 1.3 else 1


if __name__ == "__main__":
    sys.exit(main())
