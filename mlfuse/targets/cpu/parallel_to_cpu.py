"""convert-parallel-to-cpu: a kernel's ``scf.parallel`` becomes a chunk loop for threads.

Each lowered kernel gets two more arguments, ``%lo`` and ``%hi``, and its
top-level ``scf.parallel`` becomes ``scf.for %p = %lo to %hi``: the runtime
splits ``[0, extent)`` between threads and calls the kernel once per chunk.
With one parallel dim, ``%p`` is that dim's index; with more, ``%p`` runs over
all but the last (flattened, row-major) and the last becomes an inner
``scf.for``, so the innermost loop stays contiguous for the vectorizer. The
extent is recorded as ``mlfuse.parallel_extent``, and the iterations of the
innermost loop bodies over the whole launch, times the register points each
does (``mlfuse.register_points``), as ``mlfuse.work`` (the runtime's estimate
of a kernel's work, from which it decides how many threads to use).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import FunctionType, IndexType, IntegerAttr, ModuleOp, i64
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import DiagnosticException

from mlfuse.lowering.kernel_to_loops import KERNEL_ATTR, REGISTER_POINTS_ATTR

EXTENT_ATTR = "mlfuse.parallel_extent"
WORK_ATTR = "mlfuse.work"
index = IndexType()


def _const_value(v: SSAValue) -> int:
    op = v.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
        return op.value.value.data
    raise DiagnosticException("convert-parallel-to-cpu: parallel loop bounds must be constants")


def _trip_count(loop: scf.ForOp) -> int:
    """Iterations of a loop with constant bounds (1 when they are not constants)."""
    try:
        lb, ub, step = (_const_value(v) for v in (loop.lb, loop.ub, loop.step))
    except DiagnosticException:
        return 1
    return max(0, -(-(ub - lb) // step)) if step > 0 else 1


def body_work(body: Block) -> int:
    """Innermost loop iterations of one run of ``body``: a loop counts its trip count
    times the work of its own body; sibling loops add up."""
    inner: dict[Operation, int] = {}
    total = 0
    loops = [op for op in body.walk() if isinstance(op, scf.ForOp)]
    inside, stop = set(loops), body.parent_op()
    for loop in reversed(loops):  # pre-order reversed: inner loops before outer ones
        work = _trip_count(loop) * max(1, inner.pop(loop, 0))
        parent = loop.parent_op()
        while parent is not None and parent is not stop and parent not in inside:
            parent = parent.parent_op()
        if parent in inside:
            inner[parent] = inner.get(parent, 0) + work  # type: ignore[index]
        else:
            total += work
    return max(1, total)


def lower_parallel(f: func.FuncOp) -> None:
    entry = f.body.block
    par = next((op for op in entry.ops if isinstance(op, scf.ParallelOp)), None)
    if par is None:
        return
    if any(_const_value(v) != 0 for v in par.lowerBound) or any(
        _const_value(v) != 1 for v in par.step
    ):
        raise DiagnosticException("convert-parallel-to-cpu: expected 0-based unit-step loops")
    ubs = [_const_value(v) for v in par.upperBound]
    points = f.attributes.get(REGISTER_POINTS_ATTR)
    lanes = points.value.data if isinstance(points, IntegerAttr) else 1
    work = math.prod(ubs) * body_work(par.body.block) * lanes
    lo = entry.insert_arg(index, len(entry.args))
    hi = entry.insert_arg(index, len(entry.args))
    lo.name_hint, hi.name_hint = "lo", "hi"
    ft = f.function_type
    f.function_type = FunctionType.from_lists(
        [*ft.inputs.data, index, index], list(ft.outputs.data)
    )

    body = par.body.block
    ivs = list(body.args)
    outer_n = len(ubs) if len(ubs) == 1 else len(ubs) - 1
    extent = math.prod(ubs[:outer_n])

    chunk_body = Block(arg_types=[index])
    p = chunk_body.args[0]
    p.name_hint = "p"
    one = arith.ConstantOp(IntegerAttr(1, index))
    zero = arith.ConstantOp(IntegerAttr(0, index))
    Rewriter.insert_op([zero, one], InsertPoint.before(par))

    # delinearize %p over the outer dims
    def emit(op: Operation) -> SSAValue:
        chunk_body.add_op(op)
        return op.results[0]

    values: list[SSAValue] = []
    inner = math.prod(ubs[1:outer_n]) if outer_n > 1 else 1
    for k in range(outer_n):
        v = p
        if inner != 1:
            v = emit(arith.DivSIOp(v, emit(arith.ConstantOp(IntegerAttr(inner, index)))))
        if k > 0:
            v = emit(arith.RemSIOp(v, emit(arith.ConstantOp(IntegerAttr(ubs[k], index)))))
        values.append(v)
        if k + 1 < outer_n:
            inner //= ubs[k + 1]

    # the body of the parallel loop, without its terminator
    term = body.last_op
    assert isinstance(term, scf.ReduceOp)
    Rewriter.erase_op(term)
    if outer_n == len(ubs):
        target = chunk_body
    else:
        last = Block(arg_types=[index])
        values.append(last.args[0])
        ub = emit(arith.ConstantOp(IntegerAttr(ubs[-1], index)))
        chunk_body.add_op(scf.ForOp(zero, ub, one, [], last))
        target = last
    for iv, v in zip(ivs, values):
        iv.replace_all_uses_with(v)
    for op in list(body.ops):
        op.detach()
        target.add_op(op)
    target.add_op(scf.YieldOp())
    if target is not chunk_body:
        chunk_body.add_op(scf.YieldOp())
    Rewriter.replace_op(par, scf.ForOp(lo, hi, one, [], chunk_body))
    f.attributes[EXTENT_ATTR] = IntegerAttr(extent, i64)
    f.attributes[WORK_ATTR] = IntegerAttr(work, i64)


@dataclass(frozen=True)
class ConvertParallelToCpu(ModulePass):
    """Turn each kernel's parallel loop into a [lo, hi) chunk loop for CPU threads."""

    name = "convert-parallel-to-cpu"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in op.ops:
            if isinstance(f, func.FuncOp) and KERNEL_ATTR in f.attributes:
                lower_parallel(f)
