"""The main job: compile and run a real tensor program, and show what happened.

    python -m mlfuse.demo

A two-layer MLP forward with a softmax, ``softmax(relu(x@W1+b1)@W2+b2)``, is
built lazily, scheduled into fused kernels (printed with their ops, bytes and
the reason each boundary exists), compiled to native code through xDSL and
LLVM, run, and checked against numpy. Then the same program runs again on new
data, hitting the compile cache.
"""

from __future__ import annotations

import sys
import time

import numpy as np

import mlfuse
from mlfuse import Tensor


def mlp_softmax(x, w1, b1, w2, b2):
    return ((x @ w1 + b1).relu() @ w2 + b2).softmax(-1)


def reference(x, w1, b1, w2, b2):
    h = np.maximum(x.astype(np.float64) @ w1 + b1, 0)
    z = h @ w2 + b2
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def main(batch: int = 256, d_in: int = 512, hidden: int = 1024, classes: int = 10) -> int:
    rng = np.random.default_rng(0)
    arrays = [
        rng.standard_normal((batch, d_in)).astype(np.float32),
        (rng.standard_normal((d_in, hidden)) / np.sqrt(d_in)).astype(np.float32),
        rng.standard_normal(hidden).astype(np.float32) * 0.1,
        (rng.standard_normal((hidden, classes)) / np.sqrt(hidden)).astype(np.float32),
        rng.standard_normal(classes).astype(np.float32) * 0.1,
    ]
    print(f"mlfuse {mlfuse.__version__}: softmax(relu(x@W1+b1)@W2+b2)")
    print(f"  x {arrays[0].shape}, W1 {arrays[1].shape}, W2 {arrays[3].shape}\n")

    out = mlp_softmax(*(Tensor(a) for a in arrays))
    t0 = time.perf_counter()
    items = mlfuse.schedule(out)
    t_compile = time.perf_counter() - t0
    print(f"scheduled and compiled {len(items)} kernels in {t_compile * 1e3:.0f} ms:")
    for it in items:
        print(f"  {it}")
    print()

    t0 = time.perf_counter()
    got = out.numpy()
    t_run = time.perf_counter() - t0
    want = reference(*arrays)
    err = float(np.abs(got - want).max())
    ok = err < 1e-5 and np.allclose(got.sum(-1), 1, atol=1e-5)
    verdict = "OK" if ok else "MISMATCH"
    print(f"ran in {t_run * 1e3:.1f} ms; max |mlfuse - numpy| = {err:.2e} -> {verdict}")

    # the same program on new data: the schedule and the kernels are cached
    arrays[0] = rng.standard_normal((batch, d_in)).astype(np.float32)
    again = mlp_softmax(*(Tensor(a) for a in arrays))
    t0 = time.perf_counter()
    got2 = again.numpy()
    t_again = time.perf_counter() - t0
    err2 = float(np.abs(got2 - reference(*arrays)).max())
    ok &= err2 < 1e-5
    print(f"again on new data: {t_again * 1e3:.1f} ms (cached), max error {err2:.2e}")

    # the first layer's product (a packing copy of its weights may run before it)
    first = next((it for it in items if "reduce" in it.ops), items[0])
    print(f"\nthe kernel dialect for the first layer's kernel ({first.name}):\n")
    print(first.ir)
    print(f"\nits loops as the {out.device} target plans them: {target_plan(first.ir, out.device)}")
    return 0 if ok else 1


def target_plan(kernel_ir: str, device: str) -> str:
    """The plan ``device``'s kernel pipeline gives a kernel (up to its loop planning)."""
    from xdsl.parser import Parser

    from mlfuse.dialects import kernel
    from mlfuse.driver import make_context, run_passes
    from mlfuse.targets import get_target

    ctx = make_context()
    module = Parser(ctx, kernel_ir).parse_module()
    pipeline = get_target(device).kernel_pipeline
    lowering = "convert-kernel-to-loops"
    planning = pipeline[: pipeline.index(lowering)] if lowering in pipeline else ()
    run_passes(module, planning, ctx)
    (k,) = [op for op in module.ops if isinstance(op, kernel.FuncOp)]
    return str(k.loop_plan)


if __name__ == "__main__":
    sys.exit(main())
