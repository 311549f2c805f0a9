"""expand-large-sincos: ``kernel.sincos_large`` -> Payne-Hanek reduction behind a branch.

``expand-math`` reduces sin/cos arguments inline by π/2 in three parts, exact
while \\|x\\| < 2^50, and selects the value of a ``kernel.sincos_large`` for
larger (or non-finite) arguments. That reduction multiplies x by 2/π to
about 260 bits and is several times longer than the common path, so this pass
expands it only after the loops exist (on scalars or on the vectors of a
vectorized loop) and puts it behind an ``scf.if`` on whether any lane needs it:

    %large = <all ones where (2^50 − 1) − |x| < 0, on x's bits>   (i64, or a vector)
    %any = <%large, or the OR of its lanes, != 0>
    %y = scf.if %any -> (f64) {
      <Payne-Hanek reduction and the sin/cos kernels>
      scf.yield %sin_or_cos
    } else {
      scf.yield %x                                           (unused: not selected)
    }

A loop over ordinary arguments then pays a few integer ops and a branch that
is never taken. The reduction itself (``expand_math.sincos_large``) has no
compares, so it is built directly on vectors.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, scf, vector
from xdsl.dialects.builtin import ModuleOp, VectorType, i64
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from mlfuse.dialects import kernel
from mlfuse.passes.expand_math import _Emitter, large_mask, sincos_large


class ExpandSinCosLarge(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: kernel.SinCosLargeOp, rewriter: PatternRewriter, /) -> None:
        x = op.x
        t = x.type
        e = _Emitter(t)
        large = large_mask(e, x)
        if isinstance(t, VectorType):
            lanes = [
                e._op(vector.ExtractOp(large, [lane], i64)) for lane in range(t.get_shape()[0])
            ]
            large = lanes[0]
            for v in lanes[1:]:
                large = e._op(arith.OrIOp(large, v))
        any_ = e._op(arith.CmpiOp(large, e._const(0, i64), "ne"))
        slow = _Emitter(t)
        y = sincos_large(slow, x, cos=op.kind.data == "cos", narrow=op.narrow is not None)
        branch = scf.IfOp(
            any_,
            [t],
            [*slow.ops, scf.YieldOp(y)],
            [scf.YieldOp(x)],
        )
        rewriter.replace(op, [*e.ops, branch], [branch.results[0]])


@dataclass(frozen=True)
class ExpandLargeSinCos(ModulePass):
    """Expand ``kernel.sincos_large`` behind a branch taken only for lanes that need it."""

    name = "expand-large-sincos"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(ExpandSinCosLarge(), apply_recursively=False).rewrite_module(op)
