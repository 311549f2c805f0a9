"""Helpers shared by the lazy-level passes."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerType, ModuleOp, NameLoc, StringAttr, TensorType
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.transforms.dead_code_elimination import region_dce
from xdsl.utils.exceptions import DiagnosticException

from mlfuse.dialects import lazy
from mlfuse.view import View, ViewStack, contiguous_strides

REALIZE = "realize"
"""Attribute naming why a value is materialized (set by mark-realize / group-reduces)."""
GROUP = "group"
"""Attribute naming the kernel group an op belongs to (set by group-reduces)."""


@dataclass(frozen=True)
class FreeOutput:
    """A materialized value that needs no kernel: ``source`` (a buffer argument)
    read through ``view``, or, when ``source`` is None, the scalar ``value``
    broadcast by ``view`` (whose strides are all 0)."""

    source: SSAValue | None
    view: View
    value: float | int | bool | None = None


def assign_targets(f: func.FuncOp) -> set[SSAValue]:
    """Buffers some ``lazy.assign`` of ``f`` overwrites."""
    return {op.target for op in f.body.block.ops if isinstance(op, lazy.AssignOp)}


def free_output(
    op: Operation, assigned: set[SSAValue], materialized=lambda op: False
) -> FreeOutput | None:
    """Whether realizing ``op`` (an output, or a ``contiguous``) costs no kernel.

    A realized tensor is a buffer plus a view, as a numpy array is: an output
    that is an unmasked view of a buffer argument (not one the function
    overwrites) or of a value some kernel materializes anyway
    (``materialized(op)``) is that buffer; a ``contiguous`` of one is too when
    the view is already row-major; a constant is a one-element buffer, broadcast,
    unless ``contiguous`` asks for it (then it is filled: a buffer of its own that
    later writes can update in place, PyTorch's and tinygrad's ``zeros(n).contiguous()``).
    """
    reason = op.attributes.get(REALIZE)
    if not isinstance(reason, StringAttr) or reason.data not in ("output", "contiguous"):
        return None
    v = op.input if isinstance(op, lazy.ContiguousOp) else op.results[0]  # type: ignore[attr-defined]
    stack = ViewStack.from_shape(lazy.shape_of(v))
    while isinstance(v.owner, lazy.MovementOp) and (v.owner is op or not materialized(v.owner)):
        m = v.owner
        if isinstance(m, lazy.PadOp) and m.pad_value != 0:
            return None
        inner = (
            m.view.stack
            if isinstance(m, lazy.ViewOp)
            else m.apply(ViewStack.from_shape(lazy.shape_of(m.input)))
        )
        stack = inner.compose(stack)
        v = m.input
    if len(stack.views) != 1 or stack.top.mask is not None:
        return None
    view = stack.top
    if isinstance(v.owner, lazy.ConstOp):
        if isinstance(op, lazy.ContiguousOp):
            return None
        shape = lazy.shape_of(op.results[0])
        return FreeOutput(None, View.create(shape, (0,) * len(shape)), v.owner.scalar)
    if v is op.results[0]:
        return None  # the op itself computes something
    if isinstance(v, BlockArgument):
        if v in assigned:
            return None
    elif not materialized(v.owner):
        return None
    if isinstance(op, lazy.ContiguousOp) and view.strides != contiguous_strides(view.shape):
        return None  # the user asked for a row-major buffer: a copy
    return FreeOutput(v, view)


def free_outputs(f: func.FuncOp, realized) -> dict[Operation, FreeOutput]:
    """The realized ops of ``f`` that need no kernel (see :func:`free_output`);
    ``realized(op)`` tells whether ``op`` is marked for materializing."""
    assigned = assign_targets(f)
    free: dict[Operation, FreeOutput] = {}

    def materialized(o: Operation) -> bool:
        return realized(o) and o not in free

    for op in f.body.block.ops:  # sources come first: their status is known
        if realized(op):
            fo = free_output(op, assigned, materialized)
            if fo is not None:
                free[op] = fo
    return free


def lazy_funcs(module: ModuleOp) -> Iterator[func.FuncOp]:
    """The functions of ``module`` over tensors (schedules over memrefs are
    skipped), each checked to be what the lazy passes assume."""
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.body.blocks:
            ft = op.function_type
            types = [*ft.inputs.data, *ft.outputs.data]
            if any(isinstance(t, TensorType) for t in types) or any(
                o.dialect_name() == "lazy" for o in op.body.block.ops
            ):
                check_lazy_function(op)
                yield op


def check_lazy_function(f: func.FuncOp) -> None:
    """A lazy function is one block of lazy ops ending in ``func.return``, each
    op using values defined before it; anything else is a diagnostic naming
    the op (the lazy passes rely on all three)."""
    name = f.sym_name.data
    if len(f.body.blocks) != 1:
        raise DiagnosticException(f"@{name}: a lazy function must have one block")
    defined: set[SSAValue] = set(f.body.block.args)
    for o in f.body.block.ops:
        if o.dialect_name() != "lazy" and not isinstance(o, func.ReturnOp):
            raise DiagnosticException(
                f"@{name}: '{o.name}' is not a lazy op; a function over tensors may only "
                "hold lazy.* ops and func.return"
            )
        for v in o.operands:
            if v not in defined:
                raise DiagnosticException(
                    f"@{name}: '{o.name}' uses a value defined after it or outside the function"
                )
        defined.update(o.results)


def const_scalar(v: SSAValue) -> float | int | bool | None:
    """The scalar of a ``lazy.const`` (through unmasked views), else None."""
    op = v.owner
    while isinstance(op, lazy.ViewOp) and not has_mask(op.view.stack):
        op = op.input.owner
    if isinstance(op, lazy.ConstOp):
        return op.scalar
    return None


def has_mask(stack: ViewStack) -> bool:
    return any(v.mask is not None for v in stack.views)


def origin_of(op: Operation) -> str | None:
    loc = op.location
    if isinstance(loc, NameLoc):
        return loc.desc.data
    return None


def with_loc(new: Operation, like: Operation) -> Operation:
    """Give ``new`` the front-end origin of ``like`` (rewrites keep provenance)."""
    new.location = like.location
    return new


def name_loc(origin: str) -> NameLoc:
    from xdsl.dialects.builtin import NoneAttr

    return NameLoc(StringAttr(origin), NoneAttr())


def is_bool_tensor(v: SSAValue) -> bool:
    et = lazy.element_of(v)
    return isinstance(et, IntegerType) and et.width.data == 1


def make_view(
    rewriter: PatternRewriter, x: SSAValue, stack: ViewStack, like: Operation
) -> SSAValue:
    """``lazy.view x`` through ``stack`` (``x`` itself if ``stack`` is its identity).

    Views are shared: a view of ``x`` is placed right after ``x``'s definition,
    where it dominates every use of ``x``, and an existing view of ``x`` through
    the same stack is reused (moved there if it sits later). Without this, a
    view pushed through a graph that reaches one value along many paths would
    copy that value once per path: exponential on a chain of ``x = x + x``.
    """
    if stack == ViewStack.from_shape(lazy.shape_of(x)):
        return x
    # the views of x sit together right after its definition, in creation order
    run: list[Operation] = []
    nxt = x.owner.next_op if isinstance(x.owner, Operation) else x.owner.first_op  # type: ignore[union-attr]
    while (
        isinstance(nxt, lazy.ViewOp)
        and nxt is not like  # the op being rewritten: the new view goes before it
        and (nxt.input is x or isinstance(x, BlockArgument))
    ):
        run.append(nxt)
        nxt = nxt.next_op
    if run:
        point = InsertPoint.after(run[-1])
    elif isinstance(x.owner, Operation):
        point = InsertPoint.after(x.owner)
    else:
        point = InsertPoint.at_start(x.owner)  # type: ignore[arg-type]
    for use in list(x.uses):
        other = use.operation
        if (
            isinstance(other, lazy.ViewOp)
            and other.view.stack == stack
            and other.parent is not None
        ):
            if other not in run:
                other.detach()
                rewriter.insert(other, point)
            return other.result
    op = with_loc(lazy.ViewOp.build(x, stack), like)
    rewriter.insert(op, point)
    return op.result


def rewrite(module: ModuleOp, patterns: list[RewritePattern]) -> None:
    """Apply ``patterns`` to a fixpoint, then drop dead ops."""
    PatternRewriteWalker(
        GreedyRewritePatternApplier(patterns), apply_recursively=True
    ).rewrite_module(module)
    for f in lazy_funcs(module):
        region_dce(f.body)
