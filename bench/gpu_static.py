"""What the GPU workloads compile to, without a GPU: launch shapes, ptxas's resources, SASS mix.

    python bench/gpu_static.py              # all workloads of WORKLOADS.md, GPU sizes
    python bench/gpu_static.py W5 --sm sm_80

For each kernel of each workload (bench/gpu.py's programs and sizes): the grid
and block, and, where the CUDA toolkit's ``ptxas`` is installed, the registers
per thread, spills, shared memory per block and the blocks a multiprocessor
can hold (registers, shared memory and threads against sm_90's limits: 64K
registers, 228 KiB of shared memory, 2048 threads, 32 blocks). Where
``nvdisasm`` is found too (on the PATH or as ``NVDISASM``), the machine code's
instruction mix: FFMA per shared-memory load in a product, 128-bit global
accesses, local-memory traffic. These are the static half of the picture;
bench/gpu.py measures the other half on a GPU.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gpu  # noqa: E402  (the GPU sizes)
import run as cpu  # noqa: E402  (the workloads and the ops vocabulary)

SHOWN = ("FFMA", "LDS.128", "LDS", "STS.128", "STS", "LDG.128", "LDG", "STG.128", "STG", "SHFL")
SHOWN += ("BAR", "LDL", "STL")  # local memory: spills
SM90 = {"registers": 65536, "shared": 228 * 1024, "threads": 2048, "blocks": 32}


class Ops(cpu.MlfuseOps):
    """The benchmark's mlfuse ops, building graphs only (no start-up run)."""

    def __init__(self):
        import mlfuse

        self.mlfuse, self.T = mlfuse, mlfuse.Tensor


def blocks_per_sm(regs: int, shared: int, block: int) -> int:
    """Resident blocks of one kernel on an sm_90 multiprocessor."""
    per_warp = -(-regs * 32 // 256) * 256  # registers are allocated per warp, 256 at a time
    by_regs = SM90["registers"] // (per_warp * -(-block // 32))
    by_shared = SM90["shared"] // (shared + 1024) if shared else SM90["blocks"]
    return min(by_regs, by_shared, SM90["threads"] // block, SM90["blocks"])


def sass_mix(cubin: str) -> Counter | None:
    exe = os.environ.get("NVDISASM") or shutil.which("nvdisasm")
    if exe is None:
        return None
    text = subprocess.run([exe, cubin], capture_output=True, text=True, check=True).stdout
    ops = re.findall(
        r"^\s+/\*[0-9a-f]+\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9]*(?:\.[A-Z0-9]+)*)", text, re.M
    )
    mix = Counter()
    for op in ops:
        base = op.split(".")[0]
        wide = ".128" in op
        if base in ("FFMA", "LDS", "STS", "LDG", "STG", "LDL", "STL", "SHFL", "BAR", "DFMA"):
            mix[base + (".128" if wide else "")] += 1
        mix["all"] += 1
    return mix


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("workloads", nargs="*", help="W1..W9 or names (default: all)")
    p.add_argument("--sm", default="sm_90", help="compute capability (default sm_90)")
    args = p.parse_args(argv)
    from mlfuse import graph
    from mlfuse.driver import run_passes
    from mlfuse.targets import get_target
    from mlfuse.targets.cuda import ptx

    have_ptxas = ptx.ptxas_path() is not None
    ops = Ops()
    print(f"{'workload':16} {'kernel':4} {'grid':>7} {'block':>5} {'regs':>4} {'spill':>5} "
          f"{'smem':>6} {'blk/SM':>6}  SASS mix")  # fmt: skip
    for w in cpu.WORKLOADS:
        if args.workloads and w.wid not in args.workloads and w.name not in args.workloads:
            continue
        xs = [
            ops.T(np.zeros(s, np.float32), device="cuda_sim")
            for s in gpu.GPU_SHAPES[w.wid].values()
        ]
        out = w.program(ops, *xs)
        mod = graph.compiled_for(graph.collect([out.node])).module.clone()
        run_passes(mod, get_target("cuda").kernel_pipeline)
        text = ptx.ptx(mod, args.sm)
        shapes = ptx.launch_shapes(mod)
        res, mix = {}, None
        if have_ptxas:
            res = ptx.assemble(text, args.sm)
            with tempfile.TemporaryDirectory() as tmp:
                src, cubin = Path(tmp) / "k.ptx", Path(tmp) / "k.cubin"
                src.write_text(text)
                exe = ptx.ptxas_path()
                subprocess.run([exe, f"-arch={args.sm}", str(src), "-o", str(cubin)], check=True)
                mix = sass_mix(str(cubin))
        for name in sorted(shapes):
            s, r = shapes[name], res.get(name)
            cols = f"{w.wid + ' ' + w.name:16} {name:4} {s.grid:7} {s.block:5}"
            if r is not None:
                spill = r.spill_stores + r.spill_loads
                fit = blocks_per_sm(r.registers, r.shared, s.block)
                cols += f" {r.registers:4} {spill:5} {r.shared:6} {fit:6}"
            print(cols)
        if mix:
            keys = [k for k in SHOWN if mix[k]]
            print(
                f"{'':16} (module) {mix['all']} instructions: "
                + ", ".join(f"{k} {mix[k]}" for k in keys)
            )
    if not have_ptxas:
        print("(no ptxas here: registers, shared memory and machine code need the CUDA toolkit)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
