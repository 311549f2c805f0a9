"""The benchmark of bench/WORKLOADS.md on the CPU: mlfuse beside numpy, torch and torch.compile.

    python bench/run.py                     # all workloads, CPU sizes (several minutes)
    python bench/run.py --size small W1 W3  # a quick look at some of them
    python bench/run.py --json results.json --markdown table.md
    python bench/run.py --backends mlfuse,numpy W5

Every backend computes the same float32 program from the same seeded inputs,
realized before timing: mlfuse (lazy, realized per call), mlfuse.jit (the
program captured once, then replayed), numpy (eager), torch eager, torch.compile
(inductor, compiled once per workload with fullgraph=True; its one-time
start-up is paid on a tiny function first and printed apart) and tinygrad.
A backend that is not installed or does not work here (torch.compile without
a C++ compiler) is listed as "skipped: <reason>"; one that fails on a workload
has its error in that row.

Per workload and backend: the first call (a cold compilation: mlfuse's disk
cache starts empty, tinygrad's and inductor's are off; each compiler's
one-time start-up is paid on a tiny program first and printed apart); then one
warm-up call, whose time sets the number of timed calls (about --budget
seconds, between --min-reps and --max-reps), and their median and minimum;
mlfuse's kernel count; the ratio of the minimum to the fastest correct backend
of this run. Memory-bound workloads report GB/s (minimum bytes: inputs read
once, output written once, over the minimum time) and its fraction of a numpy
copy bandwidth measured in the same run; matmul-like ones (matmul, mlp,
attention, conv3x3) report GFLOP/s and its fraction of numpy's 1024³ sgemm
rate; both limits are measured at the start and before each workload, the
best kept (other work on the machine lowers them; the load average at the
start and the end is printed). A reduction, which only reads, can pass 100%
of a copy.
Each result is checked against numpy in float64: max |result - reference| /
max |reference| above --tol is flagged MISMATCH (and such a backend is never
"the fastest"). Progress goes to stderr, one line per workload; the table to
stdout; --json writes the same figures, --markdown the table.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import os
import platform
import statistics
import sys
import tempfile
import textwrap
import time
import warnings
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


def first_line(e: Exception) -> str:
    text = str(e).strip()
    return text.splitlines()[0][:120] if text else ""


class Skipped(Exception):
    """A backend that cannot run on this machine; the message says why."""


class NumpyOps:
    name = "numpy"

    def prepare(self, arrays):
        return arrays

    def function(self, w: Workload) -> Callable:
        """What a measurement calls: builds ``w``'s program and computes its result."""
        return lambda *xs: self.run(w.program(self, *xs))

    def run(self, out):
        return out

    def result(self, out) -> np.ndarray:
        return np.asarray(out)

    def kernels(self, w: Workload, inputs) -> int | None:
        return None

    add = staticmethod(np.add)
    sub = staticmethod(np.subtract)
    mul = staticmethod(np.multiply)
    div = staticmethod(np.divide)
    matmul = staticmethod(np.matmul)

    def scale(self, x, c):
        return x * x.dtype.type(c)

    def add_scalar(self, x, c):
        return x + x.dtype.type(c)

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
        n, _, h, wd = x.shape
        xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
        out = np.zeros((n, w.shape[0], h, wd), x.dtype)
        for i in range(3):
            for j in range(3):
                tap = xp[:, :, i : i + h, j : j + wd]
                out += np.einsum("nchw,oc->nohw", tap, w[:, :, i, j], optimize=True)
        return out


class MlfuseOps(NumpyOps):
    name = "mlfuse"

    def __init__(self):
        import mlfuse

        self.mlfuse = mlfuse
        self.T = mlfuse.Tensor
        self.startup_s = self._startup()

    def _startup(self) -> float:
        """The one-time start-up (the compiler's modules, LLVM's set-up), paid on
        a tiny program and reported apart, as torch.compile's is."""
        import numpy as np

        t = time.perf_counter()
        (self.T(np.ones(8, np.float32)) * 2 + 1).sum().numpy()
        return time.perf_counter() - t

    def prepare(self, arrays):
        return [self.T(a).realize() for a in arrays]

    def run(self, out):
        return out.realize()

    def result(self, out):
        return out.numpy()

    def kernels(self, w, inputs):
        return len(self.mlfuse.schedule(w.program(self, *inputs)))

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

    def mean(self, x):
        return x.mean(-1, keepdim=True)

    def softmax(self, x):
        return x.softmax(-1)

    def transpose(self, x):
        return x.transpose(-1, -2)

    def conv3x3(self, x, w):
        import mlfuse.nn.functional as F

        return F.conv2d(x, w, padding=1)


class MlfuseJitOps(MlfuseOps):
    """``mlfuse.jit`` of each workload's program: its second call captures the
    programs the realize runs, later calls replay them on the inputs' buffers
    (no Python per op, no graph, no schedule lookup), as torch.compile's
    compiled function skips torch's per-op dispatch."""

    name = "mlfuse.jit"

    def function(self, w):
        jitted = self.mlfuse.jit(functools.partial(w.program, self))
        return lambda *xs: self.run(jitted(*xs))


class TorchOps(MlfuseOps):
    name = "torch"

    def __init__(self):
        import torch

        self.torch = torch

    def prepare(self, arrays):
        return [self.torch.from_numpy(a) for a in arrays]

    def run(self, out):
        return out

    def kernels(self, w, inputs):
        return None

    def sigmoid(self, x):
        return self.torch.sigmoid(x)

    def relu(self, x):
        return self.torch.relu(x)

    def sqrt(self, x):
        return self.torch.sqrt(x)

    def softmax(self, x):
        return self.torch.softmax(x, -1)

    def conv3x3(self, x, w):
        return self.torch.nn.functional.conv2d(x, w, padding=1)


class TorchCompileOps(TorchOps):
    """torch.compile (inductor, default mode and thread count) of each workload's program.

    Inductor's on-disk caches are disabled so that a first call is a cold
    compilation whatever ran before. The one-time start-up of inductor (its
    imports, the C++ compiler check) is paid here, on a tiny function, and
    reported as ``startup_s``; a workload's first call then includes the
    compilation of that workload only.
    """

    name = "torch.compile"

    def __init__(self):
        super().__init__()
        # cold compilations, as mlfuse's first calls: no inductor caches from earlier runs
        self.torch._inductor.config.force_disable_caches = True
        warnings.filterwarnings("ignore", "dynamo_pgo force disabled")
        t = time.perf_counter()
        try:
            self.torch.compile(lambda x: self.torch.sigmoid(x) * 2)(self.torch.ones(8))
        except Exception as e:  # typically no working C++ compiler
            raise Skipped(f"torch.compile fails here ({type(e).__name__}: {first_line(e)})") from e
        self.startup_s = time.perf_counter() - t

    def function(self, w):
        self.torch._dynamo.reset()  # a fresh compilation per workload, no recompile limit hit
        return self.torch.compile(functools.partial(w.program, self), fullgraph=True)


class TinygradOps(MlfuseOps):
    name = "tinygrad"

    def __init__(self):
        from tinygrad import Tensor

        self.T = Tensor
        self.startup_s = self._startup()

    def kernels(self, w, inputs):
        return None

    def conv3x3(self, x, w):
        return x.conv2d(w, padding=1)


BACKENDS = (MlfuseOps, MlfuseJitOps, NumpyOps, TorchOps, TorchCompileOps, TinygradOps)


def make_backends(names: list[str]) -> tuple[list[NumpyOps], dict[str, str]]:
    """The backends that work here, and for the others the reason they are skipped."""
    out, skipped = [], {}
    for cls in BACKENDS:
        if names and cls.name not in names:
            continue
        try:
            out.append(cls())
        except ImportError as e:
            skipped[cls.name] = f"not installed ({e.name or e})"
        except Skipped as e:
            skipped[cls.name] = str(e)
    return out, skipped


# ---------------------------------------------------------------------------
# measurement
# ---------------------------------------------------------------------------


def copy_bandwidth() -> float:
    """Bytes/s of a large numpy copy (read + write), the memory limit of this run."""
    a = np.ones(1 << 25, np.float32)  # 128 MiB
    b = np.empty_like(a)
    best = math.inf
    for _ in range(7):
        t = time.perf_counter()
        np.copyto(b, a)
        best = min(best, time.perf_counter() - t)
    return 2 * a.nbytes / best


def sgemm_rate(n: int = 1024) -> float:
    """FLOP/s of numpy's float32 matmul at n³, the practical compute peak of this run."""
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((n, n)).astype(np.float32) for _ in range(2))
    a @ b  # warm-up
    best = math.inf
    for _ in range(3):
        t = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - t)
    return 2 * n**3 / best


def machine() -> dict:
    """What the figures were measured on."""
    info = {
        "cpu": platform.processor() or platform.machine(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "load_average": os.getloadavg()[0],  # other work on the machine skews the figures
    }
    try:
        import llvmlite.binding as llvm

        feats = llvm.get_host_cpu_features()
        info["cpu"] = llvm.get_host_cpu_name()
        info.update({f: bool(feats.get(f)) for f in ("avx2", "avx512f")})
    except ImportError:
        pass
    try:
        import torch

        info["torch"] = torch.__version__
        info["torch_threads"] = torch.get_num_threads()
    except ImportError:
        pass
    return info


def inputs_of(shapes: dict[str, tuple[int, ...]]) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [rng.standard_normal(s).astype(np.float32) for s in shapes.values()]


def max_error(got, ref: np.ndarray) -> float:
    """max |got - ref| / max |ref|: the error relative to the result's scale."""
    got = np.asarray(got)
    if got.shape != ref.shape:
        return math.inf
    err = float(np.abs(got.astype(np.float64) - ref).max(initial=0.0))
    return err / max(float(np.abs(ref).max(initial=0.0)), 1e-30)


def measure(ops, w: Workload, arrays, ref, args) -> dict:
    """First call, then a warm-up call whose time sets the number of timed repetitions."""
    inputs = ops.prepare(arrays)
    fn = ops.function(w)
    t = time.perf_counter()
    out = fn(*inputs)
    first = time.perf_counter() - t
    err = max_error(ops.result(out), ref)
    t = time.perf_counter()
    fn(*inputs)
    warm = time.perf_counter() - t
    reps = max(args.min_reps, min(args.max_reps, int(args.budget / max(warm, 1e-9))))
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn(*inputs)
        times.append(time.perf_counter() - t)
    return {
        "first_s": first,
        "median_s": statistics.median(times),
        "min_s": min(times),
        "reps": reps,
        "max_error": err,
        "ok": err <= args.tol,
        "kernels": ops.kernels(w, inputs),
    }


def rates(row: dict, w: Workload, shapes, bw: float, peak: float) -> None:
    """Ratio to the fastest correct backend, and GB/s or GFLOP/s against this run's limits."""
    done = [r for r in row["backends"].values() if "min_s" in r]
    best = min((r["min_s"] for r in done if r["ok"]), default=None)
    for r in done:
        r["ratio_to_fastest"] = r["min_s"] / best if best else None
        if w.flops is None:
            r["gb_per_s"] = row["min_bytes"] / r["min_s"] / 1e9
            r["copy_fraction"] = row["min_bytes"] / r["min_s"] / bw
        else:
            r["gflop_per_s"] = w.flops(shapes) / r["min_s"] / 1e9
            r["sgemm_fraction"] = w.flops(shapes) / r["min_s"] / peak


# ---------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------

COLUMNS = (
    "workload",
    "backend",
    "median ms",
    "min ms",
    "first ms",
    "kernels",
    "x fastest",
    "rate",
    "of limit",
    "check",
)


def table_rows(results: list[dict], skipped: dict[str, str]) -> list[list[str]]:
    """One row per workload and backend; a skipped backend or an error has a note instead."""
    rows = [["all", name, f"skipped: {why}"] for name, why in skipped.items()]
    for row in results:
        label = f"{row['id']} {row['workload']}"
        for name, r in row["backends"].items():
            cells = [label, name]
            label = ""
            if "min_s" not in r:
                rows.append(cells + [f"error: {r['error']}"[:100]])
                continue
            ratio = r["ratio_to_fastest"]
            if "gb_per_s" in r:
                rate = f"{r['gb_per_s']:.1f} GB/s"
                limit = f"{r['copy_fraction']:.0%} copy"
            else:
                rate = f"{r['gflop_per_s']:.1f} GFLOP/s"
                limit = f"{r['sgemm_fraction']:.0%} sgemm"
            cells += [
                f"{r['median_s'] * 1e3:.2f}",
                f"{r['min_s'] * 1e3:.2f}",
                f"{r['first_s'] * 1e3:.1f}",
                "" if r["kernels"] is None else str(r["kernels"]),
                "-" if ratio is None else f"{ratio:.2f}",
                rate,
                limit,
                "ok" if r["ok"] else f"MISMATCH {r['max_error']:.1e}",
            ]
            rows.append(cells)
    return rows


def print_text(rows: list[list[str]], out=sys.stdout) -> None:
    cells = [r if len(r) == len(COLUMNS) else r[:2] for r in rows]  # not the notes
    widths = [max(len(c), *(len(r[i]) for r in cells if i < len(r))) for i, c in enumerate(COLUMNS)]
    left = {0, 1, 9}

    def line(cells):
        padded = (
            c.ljust(w) if i in left else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))
        )
        return "  ".join(padded).rstrip()

    print(line(COLUMNS), file=out)
    for r in rows:  # an error or a skipped backend: its note in place of the figures
        print(line(r) if len(r) == len(COLUMNS) else line(r[:2]) + "  " + r[2], file=out)


def markdown(rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for r in rows:
        r = r + [""] * (len(COLUMNS) - len(r))
        lines.append("| " + " | ".join(c.replace("|", "/") for c in r) + " |")
    return "\n".join(lines) + "\n"


LEGEND = (
    "min/median ms: steady state after a warm-up call; first ms: the first call, compilation "
    "included (mlfuse.jit's kernels are those the mlfuse row compiled: its first call is "
    "the graph's Python and the launches); x fastest: min time over the fastest correct "
    "backend's, this run; rate: minimum "
    "bytes moved (inputs read once, output written once) per min time for memory-bound "
    "workloads, against the best copy bandwidth of this run; FLOPs per min time for "
    "matmul-like ones, against the best numpy sgemm of this run; check: max |result - float64 "
    "numpy| / max |reference| within the tolerance"
)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workloads", nargs="*", help="ids (W1 ...) or names; all by default")
    ap.add_argument("--size", choices=["cpu", "small"], default="cpu")
    ap.add_argument(
        "--backends",
        default="",
        help="comma list of " + ",".join(b.name for b in BACKENDS) + "; all by default",
    )
    ap.add_argument("--budget", type=float, default=3.0, help="seconds of timed calls per cell")
    ap.add_argument("--min-reps", type=int, default=3)
    ap.add_argument("--max-reps", type=int, default=50)
    ap.add_argument("--tol", type=float, default=1e-4, help="largest accepted error (see check)")
    ap.add_argument("--json", help="write the figures here as JSON")
    ap.add_argument("--markdown", help="write the table here as Markdown")
    args = ap.parse_args(argv)
    chosen = [w for w in WORKLOADS if not args.workloads or {w.wid, w.name} & set(args.workloads)]
    start = time.perf_counter()
    # first calls are cold compilations for every backend: mlfuse's disk cache starts
    # empty (a folder of this run's own) and tinygrad's is off, as inductor's is
    cold = tempfile.mkdtemp(prefix="mlfuse-bench-cache-")
    os.environ["MLFUSE_CACHE_DIR"] = cold
    os.environ["CACHELEVEL"] = "0"
    backends, skipped = make_backends([b for b in args.backends.split(",") if b])
    host = machine()
    bw, peak = copy_bandwidth(), sgemm_rate()  # again before each workload; the best is kept
    startup = {b.name: b.startup_s for b in backends if hasattr(b, "startup_s")}
    print(
        f"{host['cpu']} ({', '.join(f for f in ('avx2', 'avx512f') if host.get(f))}), "
        f"{host['cores']} cores (load average {host['load_average']:.2f}); "
        f"numpy {host['numpy']}, torch {host.get('torch', '-')}",
        f"at the start: copy bandwidth {bw / 1e9:.1f} GB/s, numpy sgemm {peak / 1e9:.1f} GFLOP/s"
        + "".join(f"; {n} start-up {s:.1f} s" for n, s in startup.items()),
        sep="\n",
        flush=True,
    )
    results = []
    for i, w in enumerate(chosen, 1):
        bw, peak = max(bw, copy_bandwidth()), max(peak, sgemm_rate())
        shapes = w.shapes[args.size]
        arrays = inputs_of(shapes)
        ref = np.asarray(w.program(NumpyOps(), *[a.astype(np.float64) for a in arrays]))
        row = {
            "id": w.wid,
            "workload": w.name,
            "shapes": {k: list(v) for k, v in shapes.items()},
            "min_bytes": sum(a.nbytes for a in arrays) + ref.size * 4,
            "flops": w.flops(shapes) if w.flops else None,
            "backends": {},
        }
        for ops in backends:
            try:
                r = measure(ops, w, arrays, ref, args)
            except Exception as e:  # a backend lacking an op is reported, not fatal
                r = {"error": f"{type(e).__name__}: {first_line(e)}"}
            row["backends"][ops.name] = r
        results.append(row)
        summary = ", ".join(
            f"{n} {r['min_s'] * 1e3:.1f} ms" + ("" if r["ok"] else " MISMATCH")
            if "min_s" in r
            else f"{n} error"
            for n, r in row["backends"].items()
        )
        print(
            f"[{i}/{len(chosen)} {time.perf_counter() - start:5.0f} s] {w.wid} {w.name}: {summary}",
            file=sys.stderr,
            flush=True,
        )

    host["load_average_end"] = os.getloadavg()[0]
    for row, w in zip(results, chosen):
        rates(row, w, w.shapes[args.size], bw, peak)
    print(f"done in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    rows = table_rows(results, skipped)
    print(
        f"\nload average at the end {host['load_average_end']:.2f}; best of the run: "
        f"copy bandwidth {bw / 1e9:.1f} GB/s, numpy sgemm {peak / 1e9:.1f} GFLOP/s\n"
    )
    print_text(rows)
    print("\n" + textwrap.fill(LEGEND + f" ({args.tol:g}).", 100))
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(markdown(rows))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "command": " ".join(["python", "bench/run.py", *(argv or sys.argv[1:])]),
                    "machine": host,
                    "size": args.size,
                    "copy_bandwidth": bw,
                    "sgemm_flops": peak,
                    "tolerance": args.tol,
                    "startup_s": startup,
                    "skipped": skipped,
                    "results": results,
                },
                f,
                indent=2,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
