"""The benchmark of bench/WORKLOADS.md, on the CPU: mlfuse beside numpy, torch and tinygrad.

    python bench/run.py                     # all workloads, CPU sizes
    python bench/run.py --size small W1 W3  # a quick look at some of them
    python bench/run.py --json results.json

Every backend computes the same float32 program from the same seeded inputs,
realized before timing. Reported per workload and backend: the first call
(compilation included), the median and minimum of the steady state after a
warm-up, mlfuse's kernel count, and the ratio to the fastest backend of this
run. Each workload also reports the minimum bytes it must move (inputs read
once, outputs written once) against a copy bandwidth measured in the same run,
and matmul-like workloads their FLOP rate against numpy's sgemm.
Competitors that are not installed are skipped, and the table says so.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np


@dataclass
class Workload:
    wid: str
    name: str
    shapes: dict[str, dict[str, tuple[int, ...]]]  # size -> input name -> shape
    flops: Callable[[dict[str, tuple[int, ...]]], float] | None = None
    # program written once against a tiny "ops" interface every backend provides
    program: Callable = field(default=lambda ops, **x: None)


def _ew_chain(o, x):
    return o.add(o.mul(x, o.sigmoid(o.scale(x, 1.702))), o.scale(o.mul(x, x), 0.1))


def _row_sum(o, x):
    return o.sum(x, 1)


def _softmax(o, x):
    return o.softmax(x)


def _layernorm(o, x, w, b):
    mu = o.mean(x)
    d = o.sub(x, mu)
    var = o.mean(o.mul(d, d))
    return o.add(o.mul(o.div(d, o.sqrt(o.add_scalar(var, 1e-5))), w), b)


def _matmul(o, a, b):
    return o.matmul(a, b)


def _mlp(o, x, w1, b1, w2, b2):
    return o.add(o.matmul(o.relu(o.add(o.matmul(x, w1), b1)), w2), b2)


def _attention(o, q, k, v):
    s = o.scale(o.matmul(q, o.transpose(k)), 1 / 8)
    return o.matmul(o.softmax(s), v)


def _conv3x3(o, x, w):
    return o.conv3x3(x, w)


def _transpose_add(o, x, y):
    return o.add(o.transpose(x), y)


WORKLOADS = [
    Workload(
        "W1",
        "ew_chain",
        {"cpu": {"x": (4096, 4096)}, "small": {"x": (512, 512)}},
        program=_ew_chain,
    ),
    Workload(
        "W2", "row_sum", {"cpu": {"x": (4096, 4096)}, "small": {"x": (512, 512)}}, program=_row_sum
    ),
    Workload(
        "W3", "softmax", {"cpu": {"x": (4096, 4096)}, "small": {"x": (512, 512)}}, program=_softmax
    ),
    Workload(
        "W4",
        "layernorm",
        {
            "cpu": {"x": (4096, 4096), "w": (4096,), "b": (4096,)},
            "small": {"x": (512, 512), "w": (512,), "b": (512,)},
        },
        program=_layernorm,
    ),
    Workload(
        "W5",
        "matmul",
        {
            "cpu": {"a": (1024, 1024), "b": (1024, 1024)},
            "small": {"a": (128, 128), "b": (128, 128)},
        },
        flops=lambda s: 2 * s["a"][0] * s["a"][1] * s["b"][1],
        program=_matmul,
    ),
    Workload(
        "W6",
        "mlp",
        {
            "cpu": {
                "x": (256, 1024),
                "w1": (1024, 4096),
                "b1": (4096,),
                "w2": (4096, 1024),
                "b2": (1024,),
            },
            "small": {
                "x": (32, 128),
                "w1": (128, 256),
                "b1": (256,),
                "w2": (256, 128),
                "b2": (128,),
            },
        },
        flops=lambda s: (
            2 * s["x"][0] * s["w1"][0] * s["w1"][1] + 2 * s["x"][0] * s["w2"][0] * s["w2"][1]
        ),
        program=_mlp,
    ),
    Workload(
        "W7",
        "attention",
        {
            "cpu": {"q": (32, 512, 64), "k": (32, 512, 64), "v": (32, 512, 64)},
            "small": {"q": (4, 64, 64), "k": (4, 64, 64), "v": (4, 64, 64)},
        },
        flops=lambda s: 4 * s["q"][0] * s["q"][1] * s["k"][1] * s["q"][2],
        program=_attention,
    ),
    Workload(
        "W8",
        "conv3x3",
        {
            "cpu": {"x": (8, 64, 56, 56), "w": (64, 64, 3, 3)},
            "small": {"x": (1, 16, 14, 14), "w": (16, 16, 3, 3)},
        },
        flops=lambda s: 2 * math.prod(s["x"]) * s["w"][0] * 9,
        program=_conv3x3,
    ),
    Workload(
        "W9",
        "transpose_add",
        {
            "cpu": {"x": (4096, 4096), "y": (4096, 4096)},
            "small": {"x": (512, 512), "y": (512, 512)},
        },
        program=_transpose_add,
    ),
]


# ---------------------------------------------------------------------------
# backends: the same small op vocabulary on each library
# ---------------------------------------------------------------------------


class NumpyOps:
    name = "numpy"

    def prepare(self, arrays):
        return arrays

    def run(self, out):
        return out

    def result(self, out):
        return np.asarray(out)

    add = staticmethod(np.add)
    sub = staticmethod(np.subtract)
    mul = staticmethod(np.multiply)
    div = staticmethod(np.divide)
    matmul = staticmethod(np.matmul)

    def scale(self, x, c):
        return x * np.float32(c)

    def add_scalar(self, x, c):
        return x + np.float32(c)

    def sigmoid(self, x):
        return 1 / (1 + np.exp(-x))

    def relu(self, x):
        return np.maximum(x, 0)

    def sqrt(self, x):
        return np.sqrt(x)

    def sum(self, x, axis):
        return x.sum(axis)

    def mean(self, x):
        return x.mean(-1, keepdims=True)

    def softmax(self, x):
        e = np.exp(x - x.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)

    def transpose(self, x):
        return np.swapaxes(x, -1, -2)

    def conv3x3(self, x, w):
        n, c, h, wd = x.shape
        xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
        out = np.zeros((n, w.shape[0], h, wd), np.float32)
        for i in range(3):
            for j in range(3):
                out += np.einsum("nchw,oc->nohw", xp[:, :, i : i + h, j : j + wd], w[:, :, i, j])
        return out


class MlfuseOps(NumpyOps):
    name = "mlfuse"

    def __init__(self):
        import mlfuse

        self.mlfuse = mlfuse
        self.T = mlfuse.Tensor

    def prepare(self, arrays):
        return [self.T(a).realize() for a in arrays]

    def run(self, out):
        return out.realize()

    def result(self, out):
        return out.numpy()

    def kernels(self, out) -> int:
        return len(self.mlfuse.schedule(out))

    add = staticmethod(lambda a, b: a + b)
    sub = staticmethod(lambda a, b: a - b)
    mul = staticmethod(lambda a, b: a * b)
    div = staticmethod(lambda a, b: a / b)
    matmul = staticmethod(lambda a, b: a @ b)

    def scale(self, x, c):
        return x * c

    def add_scalar(self, x, c):
        return x + c

    def sigmoid(self, x):
        return x.sigmoid()

    def relu(self, x):
        return x.relu()

    def sqrt(self, x):
        return x.sqrt()

    def sum(self, x, axis):
        return x.sum(axis)

    def mean(self, x):
        return x.mean(-1, keepdim=True)

    def softmax(self, x):
        return x.softmax(-1)

    def transpose(self, x):
        return x.transpose(-1, -2)

    def conv3x3(self, x, w):
        from mlfuse.examples import conv3x3

        return conv3x3(x, w)


class TorchOps(MlfuseOps):
    name = "torch"

    def __init__(self):
        import torch

        self.torch = torch

    def prepare(self, arrays):
        return [self.torch.from_numpy(a) for a in arrays]

    def run(self, out):
        return out

    def result(self, out):
        return out.numpy()

    def sigmoid(self, x):
        return self.torch.sigmoid(x)

    def relu(self, x):
        return self.torch.relu(x)

    def sqrt(self, x):
        return self.torch.sqrt(x)

    def mean(self, x):
        return x.mean(-1, keepdim=True)

    def softmax(self, x):
        return self.torch.softmax(x, -1)

    def conv3x3(self, x, w):
        return self.torch.nn.functional.conv2d(x, w, padding=1)


class TinygradOps(MlfuseOps):
    name = "tinygrad"

    def __init__(self):
        from tinygrad import Tensor

        self.T = Tensor

    def prepare(self, arrays):
        return [self.T(a).realize() for a in arrays]

    def kernels(self, out) -> int:  # pragma: no cover - informational
        return -1

    def conv3x3(self, x, w):
        return x.conv2d(w, padding=1)


def _backends(names: list[str]):
    out, missing = [], []
    for cls in (MlfuseOps, NumpyOps, TorchOps, TinygradOps):
        if names and cls.name not in names:
            continue
        try:
            out.append(cls())
        except ImportError:
            missing.append(cls.name)
    return out, missing


# ---------------------------------------------------------------------------
# measurement
# ---------------------------------------------------------------------------


def copy_bandwidth() -> float:
    """Bytes/s of a large numpy copy (read + write), the memory limit of this run."""
    a = np.ones(1 << 25, np.float32)  # 128 MiB
    b = np.empty_like(a)
    best = math.inf
    for _ in range(5):
        t = time.perf_counter()
        np.copyto(b, a)
        best = min(best, time.perf_counter() - t)
    return 2 * a.nbytes / best


def sgemm_rate() -> float:
    a = np.ones((1024, 1024), np.float32)
    best = math.inf
    for _ in range(3):
        t = time.perf_counter()
        a @ a
        best = min(best, time.perf_counter() - t)
    return 2 * 1024**3 / best


def measure(ops, w: Workload, shapes, reps: int, ref):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes.values()]
    inputs = ops.prepare(arrays)
    t = time.perf_counter()
    out = ops.run(w.program(ops, *inputs))
    first = time.perf_counter() - t
    got = ops.result(out)
    err = float(np.abs(got - ref).max() / max(1.0, float(np.abs(ref).max())))
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        ops.run(w.program(ops, *inputs))
        times.append(time.perf_counter() - t)
    kernels = ops.kernels(w.program(ops, *inputs)) if ops.name == "mlfuse" else None
    return {
        "first_s": first,
        "median_s": statistics.median(times),
        "min_s": min(times),
        "rel_error": err,
        "kernels": kernels,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workloads", nargs="*", help="ids (W1 ...) or names; all by default")
    ap.add_argument("--size", choices=["cpu", "small"], default="cpu")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--backends", default="", help="comma list: mlfuse,numpy,torch,tinygrad")
    ap.add_argument("--json", help="write the figures here as JSON")
    args = ap.parse_args(argv)
    chosen = [w for w in WORKLOADS if not args.workloads or {w.wid, w.name} & set(args.workloads)]
    backends, missing = _backends([b for b in args.backends.split(",") if b])
    bw, peak = copy_bandwidth(), sgemm_rate()
    print(
        f"copy bandwidth {bw / 1e9:.1f} GB/s, numpy sgemm {peak / 1e9:.1f} GFLOP/s"
        + (f"; not installed: {', '.join(missing)}" if missing else ""),
        flush=True,
    )
    results = []
    for w in chosen:
        shapes = w.shapes[args.size]
        rng = np.random.default_rng(0)
        arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes.values()]
        ref = np.asarray(w.program(NumpyOps(), *[a.astype(np.float64) for a in arrays]))
        row = {"id": w.wid, "workload": w.name, "shapes": {k: list(v) for k, v in shapes.items()}}
        out_bytes = ref.size * 4
        row["min_bytes"] = sum(a.nbytes for a in arrays) + out_bytes
        row["backends"] = {}
        for ops in backends:
            print(f"  {w.wid} {w.name} on {ops.name} ...", end="", flush=True)
            try:
                r = measure(ops, w, shapes, args.reps, ref)
            except Exception as e:  # a competitor lacking an op is skipped, not fatal
                r = {"error": f"{type(e).__name__}: {e}"}
            row["backends"][ops.name] = r
            print(
                f" {r.get('min_s', float('nan')) * 1e3:.1f} ms"
                if "min_s" in r
                else f" {r['error']}"
            )
        best = min((r["min_s"] for r in row["backends"].values() if "min_s" in r), default=None)
        for r in row["backends"].values():
            if "min_s" in r and best:
                r["ratio_to_fastest"] = r["min_s"] / best
                r["bandwidth_fraction"] = row["min_bytes"] / r["min_s"] / bw
                if w.flops:
                    r["gflops"] = w.flops(shapes) / r["min_s"] / 1e9
        results.append(row)

    names = [b.name for b in backends]
    print(
        "\n" + f"{'workload':16s}" + "".join(f"{n:>24s}" for n in names) + "   min bytes / copy bw"
    )
    for row in results:
        cells = []
        for n in names:
            r = row["backends"][n]
            if "min_s" not in r:
                cells.append(f"{'error':>24s}")
                continue
            extra = f" k={r['kernels']}" if r.get("kernels") is not None else ""
            cells.append(f"{r['min_s'] * 1e3:9.2f}ms x{r['ratio_to_fastest']:5.2f}{extra:>6s}")
        floor = row["min_bytes"] / bw * 1e3
        print(
            f"{row['id'] + ' ' + row['workload']:16s}"
            + "".join(f"{c:>24s}" for c in cells)
            + f"   {floor:8.2f} ms"
        )
    print(
        "\nms = min over repetitions; xN = ratio to the fastest backend of this run; "
        "k = mlfuse kernels; the last column is the time a copy of the minimum bytes takes"
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "copy_bandwidth": bw,
                    "sgemm_flops": peak,
                    "missing": missing,
                    "size": args.size,
                    "results": results,
                },
                f,
                indent=2,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
