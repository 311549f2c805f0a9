"""merge-sums: a sum of reductions over the same axes becomes one reduction of the sum.

In a ``kernel.func``, ``reduce add X [axes] + reduce add Y [axes]`` (each
reduce used only by that add) becomes ``reduce add (X + Y) [axes]``: one loop
nest and one set of accumulators instead of two, and for a convolution built
as shifted windows (nine sums over input channels, added) one reduction over
the channels whose body holds all nine taps, so a register block of
accumulators serves the whole window. Chains merge into one reduce. Sums
are reassociated (as vectorized reductions already are).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from mlfuse.dialects import kernel


def _sum_of(v) -> kernel.ReduceOp | None:
    op = v.owner
    if isinstance(op, kernel.ReduceOp) and op.reduce_kind == "add" and op.result.has_one_use():
        return op
    return None


def merge_sums(k: kernel.FuncOp) -> int:
    """Merge the sums of ``k`` in place; the number of adds merged."""
    merged = 0
    for op in list(k.body.block.ops):
        if not isinstance(op, arith.AddfOp | arith.AddiOp):
            continue
        a, b = _sum_of(op.lhs), _sum_of(op.rhs)
        if a is None or b is None or a is b or a.reduce_axes != b.reduce_axes:
            continue
        add: Operation = type(op)(a.input, b.input)
        red = kernel.ReduceOp("add", add.results[0], a.reduce_axes)
        Rewriter.insert_op([add, red], InsertPoint.before(op))
        op.results[0].replace_all_uses_with(red.result)
        for dead in (op, a, b):
            Rewriter.erase_op(dead)
        merged += 1
    return merged


@dataclass(frozen=True)
class MergeSums(ModulePass):
    """Turn sums of reductions over the same axes into reductions of sums."""

    name = "merge-sums"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for k in [o for o in op.ops if isinstance(o, kernel.FuncOp)]:
            merge_sums(k)
