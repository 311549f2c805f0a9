"""One training step of a 2-layer MLP (softmax cross-entropy, Adam or SGD):
mlfuse beside PyTorch eager, same model, same batch, CPU, one run.

For mlfuse it prints the kernel count of the whole step (forward, backward
and update, realized as one schedule), the bytes those kernels move against
the minimum (read the batch, the labels, the parameters and the optimizer
state once, write the parameters, the state and the loss once), the time per
steady-state step (median and min of ``--steps`` steps, graph building
included), the part of it spent building the graph in Python, and the time
per step of the same step under ``mlfuse.jit`` (replayed: no graph building).

    python bench/train_step.py                  # the digits example's model
    python bench/train_step.py --size mnist     # 784-256-10, batch 256
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import mlfuse
import mlfuse.nn.functional as F
from mlfuse import Tensor, nn, optim

SIZES = {"digits": (64, 64, 128, 10), "mnist": (256, 784, 256, 10)}  # batch, in, hidden, out


def minimum_bytes(batch, d_in, hidden, d_out, opt: str) -> int:
    params = d_in * hidden + hidden + hidden * d_out + d_out
    state = {"adam": 2, "sgd": 0}[opt] * params
    reads = batch * d_in * 4 + batch * 8 + (params + state) * 4
    writes = (params + state) * 4 + 4
    return reads + writes


def run_mlfuse(batch, d_in, hidden, d_out, opt_name, steps, data, use_jit=False):
    x_np, y_np = data
    mlfuse.manual_seed(0)
    model = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, d_out))
    opt = (
        optim.Adam(model.parameters(), lr=1e-3)
        if opt_name == "adam"
        else optim.SGD(model.parameters(), lr=0.05)
    )
    x, y = Tensor(x_np), Tensor(y_np)

    def build():
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        return loss, opt.schedule_step()

    if use_jit:

        @mlfuse.jit
        def step(x, y):
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            mlfuse.realize(loss, *opt.schedule_step())
            return loss

        for _ in range(3):
            step(x, y)
        times = []
        for _ in range(steps):
            t0 = time.perf_counter()
            step(x, y)
            times.append(time.perf_counter() - t0)
        return dict(median=statistics.median(times), min=min(times))

    t0 = time.perf_counter()
    loss, todo = build()
    mlfuse.realize(loss, *todo)
    first = time.perf_counter() - t0
    for _ in range(2):
        loss, todo = build()
        mlfuse.realize(loss, *todo)
    loss, todo = build()
    sched = mlfuse.schedule(loss, *todo)
    moved = sum(it.bytes_read + it.bytes_written for it in sched)
    mlfuse.realize(loss, *todo)
    times, builds = [], []
    for _ in range(steps):
        t0 = time.perf_counter()
        loss, todo = build()
        t1 = time.perf_counter()
        mlfuse.realize(loss, *todo)
        t2 = time.perf_counter()
        times.append(t2 - t0)
        builds.append(t1 - t0)
    return dict(
        kernels=len(sched),
        moved=moved,
        first=first,
        median=statistics.median(times),
        min=min(times),
        build=statistics.median(builds),
        loss=loss.item(),
    )


def run_torch(batch, d_in, hidden, d_out, opt_name, steps, data):
    import torch

    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(d_in, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, d_out)
    )
    opt = (
        torch.optim.Adam(model.parameters(), lr=1e-3)
        if opt_name == "adam"
        else torch.optim.SGD(model.parameters(), lr=0.05)
    )
    x, y = torch.from_numpy(data[0]), torch.from_numpy(data[1])

    def step():
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    t0 = time.perf_counter()
    step()
    first = time.perf_counter() - t0
    for _ in range(2):
        step()
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        loss = step()
        loss.item()
        times.append(time.perf_counter() - t0)
    return dict(first=first, median=statistics.median(times), min=min(times))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", choices=sorted(SIZES), default="digits")
    ap.add_argument("--opt", choices=["adam", "sgd"], default="adam")
    ap.add_argument("--steps", type=int, default=50)
    args = ap.parse_args(argv)
    batch, d_in, hidden, d_out = SIZES[args.size]
    rng = np.random.default_rng(0)
    data = (
        rng.standard_normal((batch, d_in)).astype(np.float32),
        rng.integers(0, d_out, batch).astype(np.int64),
    )
    print(
        f"MLP {d_in}-{hidden}-{d_out}, batch {batch}, {args.opt}, cross-entropy; "
        f"median/min of {args.steps} steady-state steps"
    )
    m = run_mlfuse(batch, d_in, hidden, d_out, args.opt, args.steps, data)
    least = minimum_bytes(batch, d_in, hidden, d_out, args.opt)
    print(
        f"mlfuse: {m['kernels']} kernels in one schedule (forward + backward + update); "
        f"they move {m['moved'] / 1e6:.2f} MB, {m['moved'] / least:.1f}x the minimum "
        f"{least / 1e6:.2f} MB"
    )
    print(
        f"mlfuse:        {m['median'] * 1e3:8.2f} ms/step (min {m['min'] * 1e3:.2f}; "
        f"graph building {m['build'] * 1e3:.2f}); first step {m['first'] * 1e3:.0f} ms"
    )
    j = run_mlfuse(batch, d_in, hidden, d_out, args.opt, args.steps, data, use_jit=True)
    print(f"mlfuse.jit:    {j['median'] * 1e3:8.2f} ms/step (min {j['min'] * 1e3:.2f}; replayed)")
    try:
        t = run_torch(batch, d_in, hidden, d_out, args.opt, args.steps, data)
    except ImportError:
        print("torch eager:   skipped (torch is not installed)")
        return
    print(
        f"torch eager:   {t['median'] * 1e3:8.2f} ms/step (min {t['min'] * 1e3:.2f}); "
        f"first step {t['first'] * 1e3:.0f} ms"
    )
    print(
        f"mlfuse / torch eager (median): {m['median'] / t['median']:.2f}x; "
        f"mlfuse.jit / torch eager: {j['median'] / t['median']:.2f}x"
    )


if __name__ == "__main__":
    main()
