"""cpu-optimize-plan: the CPU's cost model, as rewrites of each kernel's plan.

For every kernel it picks, from the body's views and the host's vector
registers (read from llvmlite: 64-byte vectors and 32 registers with
AVX-512, 32-byte and 16 with AVX2):

1. **a vector dim**: a dim whose size the vector width divides, along which
   every view that varies reads or writes consecutive elements (stores first:
   the contiguous output dim of an elementwise op, a matmul's N, a column
   sum's columns; otherwise a contiguous reduce axis, as a row sum's). Then
   a reduce along it keeps a vector of partial sums. Kernels whose only
   candidates would read lane by lane stay scalar.
2. **a register block for contractions**: when a sum runs over products of
   operands that each miss one of the output dims (``A[i,k] * B[k,j]``), the
   vector dim and the other output dim are unrolled into an MR x NR block of
   accumulators (6 x 4 vectors on AVX-512, 6 x 2 on AVX2: the accumulators,
   one row of B and a broadcast of A fit the registers), and the blocks of
   the vector dim become the outermost parallel loop, so each thread keeps
   its panel of B in cache while it walks A. When A's factor is computed
   inside the reduction (attention's exp), 16 registers hold one row of A
   under the widest panel that fits, so that work is repeated for fewer panels.
3. **more accumulators for vector reductions**: 4 pieces of a row (a row sum:
   one stream from memory), or 4 rows at once for kernels that walk each row
   several times (softmax, layernorm), so the adds do not wait on one another; dot products
   along the vector dim (``A B^T``) get an MR x NR block of them.
4. **tiles for transposes** (``x.T + y``): when no dim is contiguous for
   every view, W x W tiles vectorized along the stores' contiguous dim and
   unrolled along the dim the transposed view reads contiguously (the
   lowering transposes such tiles in registers).

Each step is one of the generic plan rewrites (``plan-vectorize``,
``plan-unroll``, ``plan-interchange``), so what this pass decides can be
written by hand and FileCheck-tested the same way.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerType, MemRefType, ModuleOp
from xdsl.passes import ModulePass

from mlfuse.dialects import kernel
from mlfuse.lowering.kernel_to_loops import vectorizable
from mlfuse.lowering.loops_to_llvm import element_bytes
from mlfuse.loop_nest import PARALLEL, UNROLL, VECTOR, LoopPlan
from mlfuse.passes.plan_rewrite import rewrite_plans
from mlfuse.targets.cpu.objects import host_vectors


def choose_plan(k: kernel.FuncOp, vector_bytes: int, registers: int) -> LoopPlan:
    """The plan the CPU runs ``k`` with (its current plan when nothing pays).
    A scanned dim keeps its one serial loop: no vector, unroll or parallel loop
    runs along it (a scan carries its running value from one step to the next)."""
    plan = _choose_plan(k, vector_bytes, registers)
    if plan != k.loop_plan and kernel.plan_problems(k, plan) is not None:
        return k.loop_plan  # (a rewrite that would move a scan out of its loop)
    return plan


def _choose_plan(k: kernel.FuncOp, vector_bytes: int, registers: int) -> LoopPlan:
    plan = k.loop_plan
    if any(lp.register for lp in plan.loops):
        return plan  # planned already (by hand or an earlier pass)
    space = k.space_shape
    body = list(k.body.block.ops)
    buffers = [a.type for a in k.body.block.args]
    if any(
        isinstance(t, MemRefType)
        and isinstance(t.element_type, IntegerType)
        and t.element_type.width.data == 1
        for t in buffers
    ):
        return plan  # i1 buffers: LLVM packs vectors of i1 as bits
    loads = [op for op in body if isinstance(op, kernel.LoadOp)]
    stores = [op for op in body if isinstance(op, kernel.StoreOp)]
    valids = [op for op in body if isinstance(op, kernel.ValidOp)]
    reduces = [op for op in body if isinstance(op, kernel.ReduceOp)]
    axes = {a for r in reduces for a in r.reduce_axes}
    scanned = {op.scan_dim for op in body if isinstance(op, kernel.ScanOp)}
    axes -= scanned
    if not stores:
        return plan
    elem = max(element_bytes(s.value.type) for s in stores)
    lanes = vector_bytes // elem
    if not all(vectorizable(op, lanes) for op in body):
        return plan  # an op with no vector form here (e.g. arith.fptosi in xDSL)

    def fits(d: int, strided_stores: bool = False) -> int | None:
        """The vector width for dim ``d`` (None: no vector along it); with
        ``strided_stores`` the stores may write its lanes one by one."""
        if d in scanned or any(v.view.stack.depends_on(d) for v in valids):
            return None
        for op in loads:
            st = op.view.stack
            if st.depends_on(d) and not st.unit_stride(d) and st.masked_along(d) is None:
                return None
        for st in stores:
            s = st.view.stack
            if s.depends_on(d) and not (s.unit_stride(d) and s.top.mask is None):
                if not strided_stores:
                    return None
        w = lanes
        while w >= 4 and space[d] % w:
            w //= 2
        return w if w >= 4 else None

    out_dims = [
        d
        for d in range(len(space))
        if d not in axes and d not in scanned and any(s.view.stack.depends_on(d) for s in stores)
    ]
    candidates = [(d, False) for d in reversed(out_dims) if fits(d)]
    candidates += [(d, False) for d in sorted(axes, reverse=True) if fits(d)]
    if axes and _sums_of_products(k):
        # a contraction stores each output once, after its whole reduction: lanes
        # stored one by one cost little beside it (a conv's output channels, when
        # its rows are too short for vectors and its packed weights are contiguous)
        candidates += [(d, True) for d in reversed(out_dims) if fits(d, strided_stores=True)]
    if not candidates:
        return _transposed_tiles(plan, space, loads, stores, valids, out_dims, lanes)
    vdim, strided = candidates[0]
    width = fits(vdim, strided)
    assert width is not None
    plan = plan.split_off(vdim, width, VECTOR, space)

    if vdim not in axes:
        block = _contraction_block(k, vdim, out_dims, axes, plan, registers)
        if block is not None:
            mdim, mr, ndim, nr, a_load, b_load = block
            if nr > 1:
                plan = plan.split_off(ndim, nr, UNROLL, space)
            if mr > 1:
                plan = plan.split_off(mdim, mr, UNROLL, space)
            # batch dims outermost, then B's panels (largest stride first), then
            # A's blocks: each thread walks A under panels that stay in cache
            a_view, b_view = a_load.view.stack.top, b_load.view.stack.top

            def rank(i: int) -> tuple[int, int]:
                d = plan.loops[i].dim
                in_a, in_b = a_view.depends_on(d), b_view.depends_on(d)
                group = 0 if in_a and in_b else 1 if in_b else 2
                return group, -abs(b_view.strides[d])

            par = sorted((i for i, lp in enumerate(plan.loops) if lp.kind == PARALLEL), key=rank)
            rest = [i for i, lp in enumerate(plan.loops) if not lp.register and i not in par]
            plan = plan.interchange(par + rest)
    else:
        dot = _dot_block(k, out_dims, plan, registers)
        if dot is not None:
            # dot products along the vector dim (A B^T): an MR x NR block of them,
            # each a vector of partial sums, reading MR rows of A and NR of B
            mdim, ndim, mr, nr = dot
            plan = plan.split_off(ndim, nr, UNROLL, space)
            plan = plan.split_off(mdim, mr, UNROLL, space)
            return plan
        # independent accumulators: for a kernel that walks each row more than once
        # (layernorm, softmax) 4 rows at once, so later passes find them in cache;
        # for a single pass (a row sum) 4 pieces of one row, one stream from memory
        trips = plan.sizes(space)
        passes = len(reduces) + sum(1 for st in stores if st.view.stack.depends_on(vdim))
        for d in [*reversed(out_dims), vdim] if passes > 1 else [vdim]:
            at = plan.innermost_code_loop(d)
            if at is None:
                continue
            u = next((u for u in (4, 2) if trips[at] % u == 0 and trips[at] >= 4 * u), None)
            if u is not None:
                return plan.split_off(d, u, UNROLL, space)
    return plan


def _transposed_tiles(plan, space, loads, stores, valids, out_dims, lanes):
    """A transposing kernel (``x.T + y``): W x W tiles, vectors along the dim the
    stores walk contiguously, unrolled W times along the dim the other views
    read contiguously; the lowering reads those views' tiles as rows and
    transposes them in registers, so both sides stream whole cache lines."""
    for vdim in reversed(out_dims):
        if space[vdim] % lanes or any(v.view.stack.depends_on(vdim) for v in valids):
            continue
        if not all(
            st.view.stack.unit_stride(vdim) and st.view.stack.top.mask is None for st in stores
        ):
            continue
        across = {
            d
            for op in loads
            if op.view.stack.depends_on(vdim) and not op.view.stack.unit_stride(vdim)
            for d in out_dims
            if d != vdim and op.view.stack.unit_stride(d)
        }
        strided = [
            op
            for op in loads
            if op.view.stack.depends_on(vdim) and not op.view.stack.unit_stride(vdim)
        ]
        for du in sorted(across):
            if space[du] % lanes or not all(op.view.stack.unit_stride(du) for op in strided):
                continue
            plan = plan.split_off(vdim, lanes, VECTOR, space)
            return plan.split_off(du, lanes, UNROLL, space)
    return plan


def _dot_block(k, out_dims, plan, registers):
    """(A's output dim, B's output dim, MR, NR) for a sum of products whose two
    operands each miss one output dim, or None."""
    if not _sums_of_products(k):
        return None
    loads = [op for op in k.body.block.ops if isinstance(op, kernel.LoadOp)]
    space = k.space_shape
    trips = plan.sizes(space)
    for mdim in out_dims:
        for ndim in out_dims:
            if mdim == ndim:
                continue
            a, b = _operands(loads, mdim, ndim)
            if not (a and b):
                continue
            at_m, at_n = plan.innermost_code_loop(mdim), plan.innermost_code_loop(ndim)
            if at_m is None or at_n is None:
                continue
            blocks = [
                (mr * nr, mr, nr)
                for mr in (4, 3, 2)
                for nr in (4, 3, 2)
                if trips[at_m] % mr == 0
                and trips[at_n] % nr == 0
                and mr * nr + mr + nr <= registers
            ]
            if blocks:
                _, mr, nr = max(blocks)
                return mdim, ndim, mr, nr
    return None


def _varies(load, d: int) -> bool:
    return load.view.stack.depends_on(d)


def _operands(loads, mdim: int, ndim: int):
    """The loads of a product's A (varying along ``mdim``, not ``ndim``) and of its
    B (the other way round)."""
    a = [ld for ld in loads if _varies(ld, mdim) and not _varies(ld, ndim)]
    b = [ld for ld in loads if _varies(ld, ndim) and not _varies(ld, mdim)]
    return a, b


def _sums_of_products(k) -> bool:
    """Whether a reduce of ``k`` sums products (or sums of products: merged sums)."""

    def products(v) -> bool:
        todo = [v]
        while todo:
            op = todo.pop().owner
            if isinstance(op, arith.AddfOp | arith.AddiOp):
                todo.extend(op.operands)
            elif not isinstance(op, arith.MulfOp | arith.MuliOp):
                return False
        return True

    return any(
        isinstance(op, kernel.ReduceOp) and op.reduce_kind == "add" and products(op.input)
        for op in k.body.block.ops
    )


def _contraction_block(k, vdim, out_dims, axes, plan, registers):
    """(A's output dim, MR, B's output dim, NR, a load of A, a load of B) for a
    sum of products, or None. B's dim is the vector dim when its vectors can be
    unrolled, else another dim B varies along and A does not (a conv's rows)."""
    if not _sums_of_products(k) or not axes:
        return None
    loads = [op for op in k.body.block.ops if isinstance(op, kernel.LoadOp)]
    trips = plan.sizes(k.space_shape)

    def trips_of(d: int) -> int:
        at = plan.innermost_code_loop(d)
        return trips[at] if at is not None else 1

    for mdim in reversed(out_dims):
        if mdim == vdim:
            continue
        a_loads, b_loads = _operands(loads, mdim, vdim)
        if not (a_loads and b_loads):
            continue
        b_dims = [vdim] + [
            d
            for d in reversed(out_dims)
            if d not in (vdim, mdim)
            and all(_varies(ld, d) for ld in b_loads)
            and not any(_varies(ld, d) for ld in a_loads)
        ]
        if registers < 32 and _panel_work(k, vdim, mdim, axes) >= EXPENSIVE_A:
            # A's factor is computed inside the reduction (attention's exp):
            # once per panel of B. With 16 registers one row of A under the
            # widest panel that fits (accumulators, one vector of B and the
            # broadcast), so it is computed once, or as few times as fits.
            n = trips_of(vdim)
            nr = next(w for w in range(min(n, registers - 2), 0, -1) if n % w == 0)
            if nr > 2:
                return mdim, 1, vdim, nr, a_loads[0], b_loads[0]
        # the largest block whose accumulators, a row of B and a broadcast fit the registers
        blocks = [
            (mr * nr, -i, mr, ndim, nr)
            for i, ndim in enumerate(b_dims)
            for nr in (4, 2, 1)
            for mr in (6, 4, 3, 2, 1)
            if trips_of(ndim) % nr == 0
            and trips_of(mdim) % mr == 0
            and mr * nr + nr + 1 <= registers
        ]
        if blocks:
            _, _, mr, ndim, nr = max(blocks)
            return mdim, mr, ndim, nr, a_loads[0], b_loads[0]
    return None


EXPENSIVE_A = 8
"""Ops per point of A computed inside a contraction's loop above which a
16-register host gives the product a panel as wide as fits (one row of A)."""


def _panel_work(k, vdim: int, mdim: int, axes) -> int:
    """Ops of ``k`` computed once per point of A and of the reduction (they vary
    along ``mdim`` and a reduce axis, not along ``vdim``): the work a register
    block repeats for every panel of B it walks."""
    dims: dict = {}
    count = 0
    for op in k.body.block.ops:
        if isinstance(op, kernel.LoadOp):
            d = frozenset(i for i in range(len(k.space_shape)) if _varies(op, i))
        elif isinstance(op, kernel.ReduceOp):
            d = dims.get(op.input, frozenset()) - frozenset(op.reduce_axes)
        else:
            d = frozenset().union(*(dims.get(v, frozenset()) for v in op.operands))
            if mdim in d and vdim not in d and d & axes:
                # a math function not expanded yet (a call, or a polynomial)
                expensive = op.name.startswith("math.") and op.name != "math.fma"
                count += EXPENSIVE_A if expensive else 1
        for r in op.results:
            dims[r] = d
    return count


@dataclass(frozen=True)
class CpuOptimizePlan(ModulePass):
    """Choose each kernel's vector dim, register block and loop order for the host CPU.

    ``vector-bytes`` and ``registers`` describe the vector registers (0: the host's).
    """

    name = "cpu-optimize-plan"

    vector_bytes: int = 0
    registers: int = 0

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        vb, regs = host_vectors()
        vb = self.vector_bytes or vb
        regs = self.registers or regs
        rewrite_plans(self.name, op, lambda k, plan: choose_plan(k, vb, regs))
