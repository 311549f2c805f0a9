"""The benchmark of bench/WORKLOADS.md on an NVIDIA GPU: mlfuse beside torch and torch.compile.

    python bench/gpu.py                      # all workloads, GPU sizes
    python bench/gpu.py W2 W3 --json gpu.json

Same workloads, inputs and float64 checks as bench/run.py (whose programs and
report this reuses), at the GPU sizes of WORKLOADS.md, on the device: mlfuse
with ``device="cuda"`` (lazy: each call builds and realizes the graph), mlfuse.jit
(the programs captured once, then replayed), torch eager on CUDA tensors,
torch.compile (inductor) when it works. Every timed call ends with a device synchronize. Limits
measured in the same run: the device-to-device copy bandwidth (torch's
``copy_`` of a 256 MiB float32 tensor) and cuBLAS's sgemm rate (``torch.mm``
of 4096^3 float32 with TF32 off). Memory-bound workloads report GB/s as a
fraction of the copy, matmul-like ones GFLOP/s as a fraction of sgemm.
Without a GPU (or without torch) it says so and exits 0.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run as cpu  # noqa: E402  (the workloads, the ops vocabulary, the report)

GPU_SHAPES = {
    "W1": {"x": (8192, 8192)},
    "W2": {"x": (8192, 8192)},
    "W3": {"x": (8192, 8192)},
    "W4": {"x": (8192, 8192), "w": (8192,), "b": (8192,)},
    "W5": {"a": (4096, 4096), "b": (4096, 4096)},
    "W6": {"x": (4096, 1024), "w1": (1024, 4096), "b1": (4096,), "w2": (4096, 1024), "b2": (1024,)},
    "W7": {"q": (64, 1024, 64), "k": (64, 1024, 64), "v": (64, 1024, 64)},
    "W8": {"x": (32, 64, 56, 56), "w": (64, 64, 3, 3)},
    "W9": {"x": (8192, 8192), "y": (8192, 8192)},
}


class MlfuseCuda(cpu.MlfuseOps):
    name = "mlfuse"

    def prepare(self, arrays):
        return [self.T(a, device="cuda").realize() for a in arrays]

    def run(self, out):
        out = out.realize()
        self.mlfuse.targets.get_target("cuda").synchronize()
        return out


class MlfuseJitCuda(cpu.MlfuseJitOps, MlfuseCuda):
    """The program captured by ``mlfuse.jit`` and replayed: the launches without
    the Python that builds and schedules the graph (tens of microseconds, not
    hundreds: at these sizes a memory-bound kernel runs 100-300 us)."""


class TorchCuda(cpu.TorchOps):
    name = "torch"

    def prepare(self, arrays):
        self.torch.backends.cuda.matmul.allow_tf32 = False
        self.torch.backends.cudnn.allow_tf32 = False
        return [self.torch.from_numpy(a).cuda() for a in arrays]

    def run(self, out):
        self.torch.cuda.synchronize()
        return out

    def result(self, out):
        return out.cpu().numpy()

    def function(self, w):
        return lambda *xs: self.run(w.program(self, *xs))


class TorchCompileCuda(cpu.TorchCompileOps, TorchCuda):
    name = "torch.compile"

    def function(self, w):
        f = cpu.TorchCompileOps.function(self, w)
        return lambda *xs: self.run(f(*xs))


def limits(torch) -> tuple[float, float]:
    """(copy bytes/s, sgemm FLOP/s) of this device, measured now."""

    def best(fn, reps=20):
        fn()
        torch.cuda.synchronize()
        times = []
        for _ in range(reps):
            t = time.perf_counter()
            fn()
            torch.cuda.synchronize()
            times.append(time.perf_counter() - t)
        return min(times)

    src = torch.empty(1 << 26, dtype=torch.float32, device="cuda")
    dst = torch.empty_like(src)
    bw = 2 * src.numel() * 4 / best(lambda: dst.copy_(src))
    torch.backends.cuda.matmul.allow_tf32 = False
    a = torch.randn(4096, 4096, device="cuda")
    b = torch.randn(4096, 4096, device="cuda")
    peak = 2 * 4096**3 / best(lambda: torch.mm(a, b), reps=10)
    return bw, peak


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("workloads", nargs="*", help="W1..W9 or names (default: all)")
    p.add_argument("--json", help="write the results here")
    p.add_argument("--budget", type=float, default=1.0, help="seconds of timed calls per run")
    p.add_argument("--min-reps", type=int, default=5)
    p.add_argument("--max-reps", type=int, default=200)
    p.add_argument("--tol", type=float, default=1e-4)
    args = p.parse_args(argv)
    try:
        import torch
    except ImportError:
        print("bench/gpu.py: torch is not installed; nothing to compare with", file=sys.stderr)
        return 0
    from mlfuse.targets.cuda.driver import available

    if not torch.cuda.is_available() or not available():
        print("bench/gpu.py: no CUDA GPU here", file=sys.stderr)
        return 0
    backends, skipped = [], {}
    for cls in (MlfuseCuda, MlfuseJitCuda, TorchCuda, TorchCompileCuda):
        try:
            backends.append(cls())
        except cpu.Skipped as e:
            skipped[cls.name] = str(e)
    bw, peak = limits(torch)
    print(
        f"{torch.cuda.get_device_name()}: copy {bw / 1e9:.0f} GB/s, "
        f"sgemm (cuBLAS, no TF32) {peak / 1e12:.1f} TFLOP/s",
        file=sys.stderr,
    )
    info = {
        "device": torch.cuda.get_device_name(),
        "copy_gb_per_s": bw / 1e9,
        "sgemm_gflop_per_s": peak / 1e9,
        "median_note": "min and median of synchronized calls",
    }
    chosen = [
        w
        for w in cpu.WORKLOADS
        if not args.workloads or w.wid in args.workloads or w.name in args.workloads
    ]
    results = []
    for w in chosen:
        shapes = GPU_SHAPES[w.wid]
        arrays = cpu.inputs_of(shapes)
        ref = np.asarray(w.program(cpu.NumpyOps(), *(a.astype(np.float64) for a in arrays)))
        row = {
            "id": w.wid,
            "name": w.name,
            "shapes": {k: list(v) for k, v in shapes.items()},
            "min_bytes": sum(a.nbytes for a in arrays) + ref.size * 4,
            "backends": {},
        }
        for ops in backends:
            print(f"{w.wid} {w.name}: {ops.name}", file=sys.stderr)
            try:
                row["backends"][ops.name] = cpu.measure(ops, w, arrays, ref, args)
            except Exception as e:  # noqa: BLE001 - a failing backend is a row, not a crash
                row["backends"][ops.name] = {"error": f"{type(e).__name__}: {cpu.first_line(e)}"}
        cpu.rates(row, w, shapes, bw, peak)
        results.append(row)
        # each workload's figures as soon as it is done: a run cut short keeps them
        for name, r in row["backends"].items():
            if "min_s" in r:
                rate = (
                    f"{r['copy_fraction']:.0%} of copy"
                    if "copy_fraction" in r
                    else f"{r['sgemm_fraction']:.0%} of sgemm"
                )
                print(f"  {name}: {r['min_s'] * 1e3:.3f} ms, {rate}", file=sys.stderr)
        if args.json:
            Path(args.json).write_text(json.dumps({"machine": info, "results": results}, indent=1))
    cpu.print_text(cpu.table_rows(results, skipped))
    return 0


if __name__ == "__main__":
    sys.exit(main())
