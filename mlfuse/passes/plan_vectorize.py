"""plan-vectorize: run a dim of every kernel as a vector loop.

``plan-vectorize{dim=1 width=16}`` splits ``width`` iterations off the
innermost loop over ``dim`` into the plan's vector loop:
``[parallel 0, serial 1]`` -> ``[parallel 0, serial 1:256, vector 1:16]``
on a 4096-wide dim. The lowering then computes every value that varies
along ``dim`` as a vector of ``width`` lanes: views with unit stride along it
are read and written as vectors, other views lane by lane, and a reduce over
``dim`` keeps a vector of partial results, combined across lanes at the end.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from mlfuse.loop_nest import VECTOR
from mlfuse.passes.plan_rewrite import rewrite_plans


@dataclass(frozen=True)
class PlanVectorize(ModulePass):
    """Split ``width`` iterations of ``dim`` into a vector loop."""

    name = "plan-vectorize"

    dim: int = 0
    width: int = 8

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_plans(
            self.name,
            op,
            lambda k, plan: plan.split_off(self.dim, self.width, VECTOR, k.space_shape),
        )
