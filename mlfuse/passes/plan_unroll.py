"""plan-unroll: unroll-and-jam a dim of every kernel into a register block.

``plan-unroll{dim=0 factor=6}`` splits ``factor`` iterations off the
innermost code loop over ``dim`` into an ``unroll`` loop:
``[parallel 0, parallel 1:64, serial 2, vector 1:16]`` ->
``[parallel 0:170, parallel 1:64, serial 2, unroll 0:6, vector 1:16]``.
The lowering computes each value that varies along ``dim`` as ``factor``
separate values, so a reduce inside keeps ``factor`` accumulators in
registers across its loop (for a contraction, an MR x NR block of
outer-product FMAs) and operands that do not vary along ``dim`` are read
once for all of them.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from mlfuse.loop_nest import UNROLL
from mlfuse.passes.plan_rewrite import rewrite_plans


@dataclass(frozen=True)
class PlanUnroll(ModulePass):
    """Split ``factor`` iterations of ``dim`` into an unroll loop."""

    name = "plan-unroll"

    dim: int = 0
    factor: int = 2

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_plans(
            self.name,
            op,
            lambda k, plan: plan.split_off(self.dim, self.factor, UNROLL, k.space_shape),
        )
