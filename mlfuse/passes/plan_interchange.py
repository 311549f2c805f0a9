"""plan-interchange: reorder the loops of every kernel.

``plan-interchange{order=1,0,2}`` lists the current positions of the code
loops (parallel and serial) in their new order; register loops stay
innermost. ``[parallel 0:170, parallel 1:16, serial 2, unroll 0:6]`` with
``order=1,0,2`` becomes ``[parallel 1:16, parallel 0:170, serial 2, unroll 0:6]``:
the same work, with the blocks of dim 1 outermost (split between threads)
and those of dim 0 inside them. Parallel loops must stay before serial ones.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from mlfuse.passes.plan_rewrite import rewrite_plans


@dataclass(frozen=True)
class PlanInterchange(ModulePass):
    """Reorder the code loops of every kernel's plan."""

    name = "plan-interchange"

    order: tuple[int, ...] = ()

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_plans(self.name, op, lambda k, plan: plan.interchange(self.order))
