"""Kernels under register-blocked plans compute what they compute under their
default plan: random vector, unroll and interchange rewrites of the plans of
kernels that cover the lowering's cases (contractions, vector reductions of
every kind, broadcast, transposed and padded views, several stores)."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.parser import Parser
from xdsl.utils.exceptions import DiagnosticException

from mlfuse import dtypes
from mlfuse.dialects import kernel
from mlfuse.driver import make_context, run_passes
from mlfuse.loop_nest import PARALLEL, UNROLL, VECTOR
from mlfuse.passes.plan_rewrite import rewrite_plans
from mlfuse.targets import get_target

EXAMPLES = int(os.environ.get("MLFUSE_PROPERTY_EXAMPLES", "40"))

# ruff: noqa: E501 (kernel IR is clearer on one line per op)
KERNELS = {
    "matmul": """
kernel.func @k outs(%o: memref<96xf32>) ins(%a: memref<192xf32>, %b: memref<128xf32>) space [12, 8, 16] {
  %0 = kernel.load %a <[12, 8, 16] strides [16, 0, 1] offset 0> : memref<192xf32>
  %1 = kernel.load %b <[12, 8, 16] strides [0, 1, 8] offset 0> : memref<128xf32>
  %2 = arith.mulf %0, %1 : f32
  %3 = kernel.reduce add %2 [2] : f32
  %4 = arith.constant 0.5 : f32
  %5 = arith.maximumf %3, %4 : f32
  kernel.store %o <[12, 8, 16] strides [8, 1, 0] offset 0>, %5 : memref<96xf32>
}""",
    "softmax": """
kernel.func @k outs(%o: memref<128xf32>) ins(%x: memref<128xf32>) space [8, 16] {
  %0 = kernel.load %x <[8, 16] strides [16, 1] offset 0> : memref<128xf32>
  %1 = kernel.reduce max %0 [1] : f32
  %2 = arith.subf %0, %1 : f32
  %3 = math.exp %2 : f32
  %4 = kernel.reduce add %3 [1] : f32
  %5 = arith.divf %3, %4 : f32
  kernel.store %o <[8, 16] strides [16, 1] offset 0>, %5 : memref<128xf32>
}""",
    "colprod": """
kernel.func @k outs(%o: memref<8xf32>) ins(%x: memref<128xf32>) space [8, 16] {
  %0 = kernel.load %x <[8, 16] strides [1, 8] offset 0> : memref<128xf32>
  %1 = kernel.reduce mul %0 [1] : f32
  kernel.store %o <[8, 16] strides [1, 0] offset 0>, %1 : memref<8xf32>
}""",
    "int_sum": """
kernel.func @k outs(%o: memref<4xi32>) ins(%x: memref<64xi32>) space [4, 16] {
  %0 = kernel.load %x <[4, 16] strides [16, 1] offset 0> : memref<64xi32>
  %1 = kernel.reduce add %0 [1] : i32
  kernel.store %o <[4, 16] strides [1, 0] offset 0>, %1 : memref<4xi32>
}""",
    "transpose_pad": """
kernel.func @k outs(%o: memref<64xf32>, %p: memref<64xf32>) ins(%x: memref<64xf32>, %y: memref<48xf32>) space [8, 8] {
  %0 = kernel.load %x <[8, 8] strides [1, 8] offset 0> : memref<64xf32>
  %1 = kernel.load %y <[8, 8] strides [8, 1] offset -8 mask [[1, 7], [0, 8]]> : memref<48xf32>
  %2 = arith.addf %0, %1 : f32
  kernel.store %o <[8, 8] strides [8, 1] offset 0>, %2 : memref<64xf32>
  kernel.store %p <[8, 8] strides [1, 8] offset 0>, %0 : memref<64xf32>
}""",
}


def _run(text: str, plan_rewrites=None) -> list[np.ndarray]:
    ctx = make_context()
    mod = Parser(ctx, text).parse_module()
    if plan_rewrites is not None:
        rewrite_plans("test", mod, plan_rewrites)
    k = next(op for op in mod.ops if isinstance(op, kernel.FuncOp))
    nout = k.num_outputs.data
    target = get_target("cpu")
    types = [a.type for a in k.body.block.args]
    run_passes(mod, target.kernel_pipeline, ctx)
    (compiled,) = target.compile(mod).values()
    rng = np.random.default_rng(7)
    bufs = []
    for i, t in enumerate(types):
        dt = dtypes.from_numpy(np.dtype("int32" if "i32" in str(t) else "float32"))
        n = t.get_shape()[0]
        data = (
            rng.integers(-5, 5, n).astype(np.int32)
            if dt.np == np.int32
            else rng.uniform(0.5, 1.5, n).astype(np.float32)
        )
        bufs.append(target.alloc(n, dt) if i < nout else target.from_numpy(data))
    target.launch(compiled, bufs)
    return [target.to_numpy(b) for b in bufs[:nout]]


@st.composite
def rewrites(draw, space: tuple[int, ...]):
    """A random sequence of vectorize, unroll and interchange steps."""
    steps = []
    dims = list(range(len(space)))
    if draw(st.booleans()):
        steps.append((VECTOR, draw(st.sampled_from(dims)), draw(st.sampled_from([2, 4, 8]))))
    for _ in range(draw(st.integers(0, 2))):
        steps.append((UNROLL, draw(st.sampled_from(dims)), draw(st.sampled_from([2, 3, 4]))))
    steps.append(("interchange", draw(st.randoms(use_true_random=False)), 0))
    return steps


def _apply(steps, k, plan):
    space = k.space_shape
    for kind, dim, size in steps:
        if kind == "interchange":
            par = [i for i, lp in enumerate(plan.loops) if lp.kind == PARALLEL]
            ser = [i for i, lp in enumerate(plan.loops) if not lp.register and i not in par]
            dim.shuffle(par)
            dim.shuffle(ser)
            plan = plan.interchange(par + ser)
        else:
            try:
                plan = plan.split_off(dim, size, kind, space)
            except ValueError:
                continue  # does not divide, or a second vector loop: skip the step
    return plan


@pytest.mark.parametrize("name", list(KERNELS))
def test_register_plans_compute_what_the_default_plan_computes(name):
    text = KERNELS[name]
    expected = _run(text)
    space = tuple(int(s) for s in text.split("space [")[1].split("]")[0].split(", "))

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
        derandomize=os.environ.get("MLFUSE_PROPERTY_RANDOM") is None,
    )
    @given(rewrites(space))
    def check(steps):
        try:
            got = _run(text, lambda k, plan: _apply(steps, k, plan))
        except DiagnosticException as e:
            assert "a reduce runs over it" in str(e)  # a reduce dim made parallel
            return
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e, rtol=2e-6, atol=1e-6)

    check()


def test_cpu_plans_of_the_workloads_vectorize():
    """What cpu-optimize-plan gives a matrix product and softmax on this host:
    vectors along the contiguous dim (one vector covers the product's 8
    columns); the product's rows unrolled (a register block), softmax's rows
    too (independent accumulators)."""
    from mlfuse.targets.cpu.optimize_plan import choose_plan, host_vectors

    vb, regs = host_vectors()
    for name, vector_dim, unrolled in (("matmul", 1, {0}), ("softmax", 1, {0})):
        mod = Parser(make_context(), KERNELS[name]).parse_module()
        k = next(iter(mod.ops))
        plan = choose_plan(k, vb, regs)
        assert [lp.dim for lp in plan.loops if lp.kind == VECTOR] == [vector_dim], plan
        assert unrolled <= {lp.dim for lp in plan.loops if lp.kind == UNROLL}, plan


@pytest.mark.parametrize(
    "name, plan",
    [
        ("transpose_pad", "[parallel 0:2, parallel 1:2, unroll 0:4, vector 1:4]"),
        ("transpose_pad", "[parallel 1:1, parallel 0:1, unroll 0:8, vector 1:8]"),
        ("matmul", "[parallel 1:1, parallel 0:2, serial 2, unroll 1:2, unroll 0:6, vector 1:4]"),
        ("softmax", "[parallel 0:2, serial 1:2, unroll 0:4, unroll 1:2, vector 1:4]"),
        ("colprod", "[parallel 0:1, serial 1:4, unroll 1:4, vector 0:8]"),
    ],
)
def test_hand_written_register_plans(name, plan):
    """Transposed tiles, a matmul block with a one-step parallel loop, vector
    reductions under an unrolled output dim."""
    attr = Parser(make_context(), f"#kernel.plan<{plan}>").parse_attribute()
    assert str(attr.data) == plan  # type: ignore[attr-defined]
    got = _run(KERNELS[name], lambda k, _: attr.data)  # type: ignore[attr-defined]
    for g, e in zip(got, _run(KERNELS[name])):
        np.testing.assert_allclose(g, e, rtol=2e-6, atol=1e-6)


def test_packed_operand_is_read_through_one_view():
    """A right operand packed into panels and viewed back (as Tensor.matmul packs
    large ones) is read through one affine view: the planner splits the space
    dim the view reshapes, so the product can load the panels as vectors."""
    import mlfuse
    from mlfuse import Tensor

    rng = np.random.default_rng(0)
    a = rng.standard_normal((24, 64)).astype(np.float32)
    b = rng.standard_normal((64, 128)).astype(np.float32)
    B = Tensor(b).realize()
    packed = B.reshape(64, 4, 32).permute(1, 0, 2).contiguous().realize()
    out = Tensor(a) @ packed.permute(1, 0, 2).reshape(64, 128)
    (item,) = mlfuse.schedule(out)
    loads = [line for line in item.ir.splitlines() if "kernel.load" in line]
    assert loads and all(line.count("strides") == 1 for line in loads), loads
    assert "space [24, 32, 4, 64]" in item.ir or "space [24, 4, 32, 64]" in item.ir, item.ir
    np.testing.assert_allclose(out.numpy(), a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
