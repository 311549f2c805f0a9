"""lazy-canonicalize: one view per movement chain, constants folded, identities removed.

After this pass every movement op is a ``lazy.view`` carrying the composed
index map, chains of views are one view, views that do nothing are gone,
unmasked views of constants are constants of the new shape, and nothing is
computed from zero elements: a value with no elements, a view that reads only
padding and a reduce over an empty axis are constants.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import IntegerType, ModuleOp, TensorType
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from mlfuse.dialects import lazy
from mlfuse.passes.scalar import REDUCE_IDENTITY
from mlfuse.passes.utils import const_scalar, has_mask, make_view, rewrite, with_loc
from mlfuse.view import ViewStack


_COMPUTING = (
    lazy.ElementwiseOp,
    lazy.ReduceOp,
    lazy.ScanOp,
    lazy.GatherOp,
    lazy.MovementOp,
    lazy.ContiguousOp,
    lazy.CopyOp,
)
"""Ops whose result is computed from their operands (consts and assigns are not)."""


class MovementToView(RewritePattern):
    """reshape/permute/expand/shrink/flip/stride/pad(x) -> view(x)"""

    def match_and_rewrite(self, op, rewriter: PatternRewriter, /):
        if not isinstance(op, lazy.MovementOp) or isinstance(op, lazy.ViewOp):
            return
        if isinstance(op, lazy.PadOp) and op.pad_value != 0:
            return  # PadWithValue
        stack = op.apply(ViewStack.from_shape(lazy.shape_of(op.input)))
        rewriter.replace(op, with_loc(lazy.ViewOp.build(op.input, stack), op))


class PadWithValue(RewritePattern):
    """pad(x, v) -> where(pad(true), pad(x), v) for v != 0"""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: lazy.PadOp, rewriter: PatternRewriter, /):
        if op.pad_value == 0:
            return
        stack = op.apply(ViewStack.from_shape(lazy.shape_of(op.input)))
        in_t = op.input.type
        true = with_loc(
            lazy.ConstOp(True, lazy.tensor_type(lazy.shape_of(in_t), IntegerType(1))), op
        )
        rewriter.insert(true)
        valid = make_view(rewriter, true.result, stack, op)
        inner = make_view(rewriter, op.input, stack, op)
        fill = with_loc(lazy.ConstOp(op.pad_value, op.result.type), op)  # type: ignore[arg-type]
        rewriter.insert(fill)
        rewriter.replace(op, with_loc(lazy.WhereOp(valid, inner, fill.result), op))


class ComposeViews(RewritePattern):
    """view(view(x)) -> view(x)"""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: lazy.ViewOp, rewriter: PatternRewriter, /):
        inner = op.input.owner
        if not isinstance(inner, lazy.ViewOp):
            return
        stack = inner.view.stack.compose(op.view.stack)
        rewriter.replace(op, with_loc(lazy.ViewOp.build(inner.input, stack), op))


class DropIdentityView(RewritePattern):
    """view(x) -> x when the view reads x as it is"""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: lazy.ViewOp, rewriter: PatternRewriter, /):
        if op.input.type == op.result.type and op.view.stack == ViewStack.from_shape(
            lazy.shape_of(op.input)
        ):
            rewriter.replace(op, [], [op.input])


class FoldViewOfConst(RewritePattern):
    """view(const c) -> const c (of the view's shape) when nothing is masked"""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: lazy.ViewOp, rewriter: PatternRewriter, /):
        c = op.input.owner
        if isinstance(c, lazy.ConstOp) and not has_mask(op.view.stack):
            rewriter.replace(op, with_loc(lazy.ConstOp(c.scalar, op.result.type), op))  # type: ignore[arg-type]


class FoldEmpty(RewritePattern):
    """op(...) -> const 0 when the result has no elements"""

    def match_and_rewrite(self, op, rewriter: PatternRewriter, /):
        if not (isinstance(op, _COMPUTING) and op.results):
            return
        t = op.results[0].type
        if not isinstance(t, TensorType) or 0 not in lazy.shape_of(t):
            return
        rewriter.replace(op, with_loc(lazy.ConstOp(0, t), op))


class FoldReduceOfEmpty(RewritePattern):
    """reduce(x) over an axis with no elements -> const identity"""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: lazy.ReduceOp, rewriter: PatternRewriter, /):
        shape = lazy.shape_of(op.input)
        if not any(shape[a] == 0 for a in op.reduce_axes) or 0 in lazy.shape_of(op.result):
            return
        t = op.result.type
        identity = REDUCE_IDENTITY[op.reduce_kind](lazy.element_of(t))
        rewriter.replace(op, with_loc(lazy.ConstOp(identity, t), op))  # type: ignore[arg-type]


class FoldPaddingOnly(RewritePattern):
    """view(x) -> const 0 when the view reads nothing but padding"""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: lazy.ViewOp, rewriter: PatternRewriter, /):
        if any(v.all_invalid for v in op.view.stack.views):
            rewriter.replace(op, with_loc(lazy.ConstOp(0, op.result.type), op))  # type: ignore[arg-type]


def _is(v, x) -> bool:
    c = const_scalar(v)
    return c is not None and not isinstance(c, bool) and c == x


def _is_neutral_zero(v, op: str) -> bool:
    """``v`` is a zero that ``x + v`` (op "add") or ``x - v`` ("sub") returns
    ``x`` unchanged for every x: for floats that is -0.0 for + and +0.0 for -
    (``-0.0 + 0.0`` is +0.0 in IEEE arithmetic)."""
    c = const_scalar(v)
    if c is None or isinstance(c, bool) or c != 0:
        return False
    if not isinstance(c, float):
        return True
    return math.copysign(1.0, c) == (-1.0 if op == "add" else 1.0)


class AlgebraicIdentities(RewritePattern):
    """x*1 -> x, 1*x -> x, x+0 -> x, 0+x -> x, x-0 -> x, x/1 -> x, neg(neg(x)) -> x,
    cast(x) -> x to the same type, reduce over size-1 axes -> x, scan along a
    size-1 dim -> x, running max/min of a constant -> the constant. For floats the
    zero must be the IEEE-neutral one (x + -0.0, x - +0.0): -0.0 + 0.0 is +0.0."""

    def match_and_rewrite(self, op, rewriter: PatternRewriter, /):
        keep = None
        match op:
            case lazy.MulOp() if _is(op.rhs, 1):
                keep = op.lhs
            case lazy.MulOp() if _is(op.lhs, 1):
                keep = op.rhs
            case lazy.AddOp() if _is_neutral_zero(op.rhs, "add"):
                keep = op.lhs
            case lazy.AddOp() if _is_neutral_zero(op.lhs, "add"):
                keep = op.rhs
            case lazy.SubOp() if _is_neutral_zero(op.rhs, "sub"):
                keep = op.lhs
            case lazy.DivOp() if _is(op.rhs, 1) and lazy.is_float(lazy.element_of(op.lhs)):
                keep = op.lhs
            case lazy.NegOp() if isinstance(op.input.owner, lazy.NegOp):
                keep = op.input.owner.input
            case lazy.CastOp() if op.input.type == op.result.type:
                keep = op.input
            case lazy.ReduceOp() if all(lazy.shape_of(op.input)[a] == 1 for a in op.reduce_axes):
                keep = op.input
            case lazy.ScanOp() if lazy.shape_of(op.input)[op.scan_dim] == 1:
                keep = op.input
            case lazy.ScanOp() if op.scan_kind in ("max", "min") and (
                const_scalar(op.input) is not None
            ):
                keep = op.input
            case _:
                return
        rewriter.replace(op, [], [keep])


_FOLDABLE = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.true_divide,
    "max": np.maximum,
    "min": np.minimum,
    "neg": np.negative,
    "abs": np.abs,
    "floor": np.floor,
    "ceil": np.ceil,
    "sqrt": np.sqrt,
    "recip": np.reciprocal,
    "and": np.bitwise_and,
    "or": np.bitwise_or,
    "xor": np.bitwise_xor,
    "cmplt": np.less,
    "cmple": np.less_equal,
    "cmpeq": np.equal,
    "cmpne": np.not_equal,
}
"""Elementwise kinds folded on constants: the IEEE operations (correctly rounded,
so a folded value is the value a kernel computes), bitwise ops and compares.
Transcendentals, integer division (guarded in kernels) and pow are not folded."""


def _np_dtype(v: SSAValue) -> np.dtype:
    """The numpy dtype constants of ``v``'s element type are folded in (bfloat16:
    float32, whose result lazy.const rounds to bfloat16, as kernels compute)."""
    from mlfuse.dtypes import from_ir

    return from_ir(lazy.element_of(v)).host


class FoldConstants(RewritePattern):
    """op(const a, const b) -> const (op a b), for the kinds of _FOLDABLE"""

    def match_and_rewrite(self, op, rewriter: PatternRewriter, /):
        if not isinstance(op, (lazy.BinaryOp, lazy.UnaryOp)) or op.KIND not in _FOLDABLE:
            return
        vals = [const_scalar(v) for v in op.operands]
        if any(v is None for v in vals):
            return
        dt = _np_dtype(op.operands[0])
        if dt.kind != "f" and op.KIND in ("div", "sqrt", "recip"):
            return  # integer division by 0 is defined by the kernels, not numpy
        if dt.kind == "b" and op.KIND == "sub":
            return
        with np.errstate(all="ignore"):
            out = _FOLDABLE[op.KIND](*[dt.type(v) for v in vals])
        value = out.item()
        rewriter.replace(op, with_loc(lazy.ConstOp(value, op.result.type), op))  # type: ignore[arg-type]


class FoldNot(RewritePattern):
    """not(const a) -> const (logical not for bools, bitwise not for ints)"""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: lazy.NotOp, rewriter: PatternRewriter, /):
        v = const_scalar(op.input)
        if v is None:
            return
        dt = _np_dtype(op.input)
        out = (not v) if dt.kind == "b" else np.invert(dt.type(v)).item()
        rewriter.replace(op, with_loc(lazy.ConstOp(out, op.result.type), op))  # type: ignore[arg-type]


class FoldCast(RewritePattern):
    """cast(const a) -> const a converted as kernels convert (floats to int32/int64
    saturate, to the other integers go through int64 and wrap; 16-bit floats
    round through float32)"""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: lazy.CastOp, rewriter: PatternRewriter, /):
        v = const_scalar(op.input)
        if v is None:
            return
        to = _np_dtype(op.result)
        if to.kind == "b":
            out: float | int | bool = bool(v)
        elif to.kind == "f":
            out = to.type(np.float32(v) if to.itemsize == 2 else v).item()
        elif isinstance(v, float):
            out = _float_to_int(v, to)
        else:
            out = np.array(int(v)).astype(to).item()  # integers wrap
        rewriter.replace(op, with_loc(lazy.ConstOp(out, op.result.type), op))  # type: ignore[arg-type]


def _float_to_int(v: float, to: np.dtype) -> int:
    """A float converted to the integer type ``to`` as kernels convert: int32 and
    int64 saturate; other types saturate to int64 and wrap (``-1.0`` -> uint32 is
    2**32 - 1); uint64 from 2**63 up saturates to its own maximum."""
    if v != v:
        return 0
    t = float(np.trunc(v))
    if to == np.uint64 and t >= 2.0**63:
        return (1 << 64) - 1 if t >= 2.0**64 else int(t)
    info = np.iinfo(to if to.kind == "i" and to.itemsize >= 4 else np.int64)
    lo, hi = int(info.min), int(info.max)
    out = lo if t <= lo else hi if t >= hi else int(t)
    return np.array(out, dtype=np.int64).astype(to).item()


class WhereOfConst(RewritePattern):
    """where(const c, a, b) -> a if c else b"""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: lazy.WhereOp, rewriter: PatternRewriter, /):
        c = const_scalar(op.operands[0])
        if c is None:
            return
        rewriter.replace(op, [], [op.operands[1] if c else op.operands[2]])


class FoldReduceOfConst(RewritePattern):
    """reduce(const c) over n elements -> const c*n (add), c**n (mul), c (max)"""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: lazy.ReduceOp, rewriter: PatternRewriter, /):
        c = const_scalar(op.input)
        if c is None:
            return
        shape = lazy.shape_of(op.input)
        n = 1
        for a in op.reduce_axes:
            n *= shape[a]
        dt = _np_dtype(op.input)
        if dt.kind == "f" and dt.itemsize < 4:
            dt = np.dtype(np.float32)  # 16-bit floats accumulate in float32
        with np.errstate(all="ignore"):
            if op.reduce_kind == "max":
                out = dt.type(c)
            elif op.reduce_kind == "add":
                out = (
                    np.multiply(dt.type(c), dt.type(n))
                    if dt.kind == "f"
                    else dt.type(np.array(int(c) * n).astype(dt))
                )
            else:
                out = (
                    np.power(dt.type(c), n)
                    if dt.kind == "f"
                    else dt.type(np.array(pow(int(c), n, 1 << 64)).astype(np.uint64).astype(dt))
                )
        rewriter.replace(op, with_loc(lazy.ConstOp(out.item(), op.result.type), op))  # type: ignore[arg-type]


class FoldGatherOfConst(RewritePattern):
    """gather(const c, i) -> const c (of the index's shape): every position holds c"""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: lazy.GatherOp, rewriter: PatternRewriter, /):
        c = op.source.owner
        if isinstance(c, lazy.ConstOp):
            rewriter.replace(op, with_loc(lazy.ConstOp(c.scalar, op.result.type), op))  # type: ignore[arg-type]


class ContiguousOfContiguous(RewritePattern):
    """contiguous(contiguous(x)) -> contiguous(x)"""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: lazy.ContiguousOp, rewriter: PatternRewriter, /):
        if isinstance(op.input.owner, lazy.ContiguousOp):
            rewriter.replace(op, [], [op.input])


class AssignOfItself(RewritePattern):
    """assign(t, t) -> t: writing a buffer's own values changes nothing"""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: lazy.AssignOp, rewriter: PatternRewriter, /):
        if op.value is op.target:
            rewriter.replace(op, [], [op.target])


PATTERNS = (
    FoldEmpty,
    FoldReduceOfEmpty,
    FoldPaddingOnly,
    MovementToView,
    PadWithValue,
    ComposeViews,
    DropIdentityView,
    FoldViewOfConst,
    AlgebraicIdentities,
    FoldConstants,
    FoldNot,
    FoldCast,
    WhereOfConst,
    FoldReduceOfConst,
    FoldGatherOfConst,
    ContiguousOfContiguous,
    AssignOfItself,
)


@dataclass(frozen=True)
class LazyCanonicalize(ModulePass):
    """Fold movement chains into views, fold constants, drop identities."""

    name = "lazy-canonicalize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite(op, [p() for p in PATTERNS])
