"""push-views: move views toward the buffers they read.

After lazy-canonicalize every movement chain is one ``lazy.view``. This pass
rewrites ``view(f(a, b))`` into ``f(view(a), view(b))`` so that views end on
block arguments (buffers), constants, or reduces they cannot cross: loads
carry the index maps and every computed value is stored contiguously.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerType, ModuleOp, StringAttr
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from mlfuse.dialects import lazy
from mlfuse.passes.lazy_canonicalize import ComposeViews, DropIdentityView, FoldViewOfConst
from mlfuse.passes.utils import REALIZE, has_mask, lazy_funcs, make_view, rewrite, with_loc
from mlfuse.view import View, ViewStack, merge_views


def _elementwise_like(op: lazy.ElementwiseOp, operands, shape) -> lazy.ElementwiseOp:
    """``op`` recomputed at another shape on new operands."""
    new = type(op).create(
        operands=list(operands),
        result_types=[lazy.tensor_type(shape, lazy.element_of(op.result))],
        properties=dict(op.properties),
        attributes=dict(op.attributes),
    )
    return with_loc(new, op)


def broadcasts(stack: ViewStack) -> bool:
    """Whether the view repeats elements (an expand: a stride-0 dim of size > 1)."""
    top = stack.top
    return any(
        s > 1 and st == 0 and (top.mask is None or top.mask[d] == (0, s))
        for d, (s, st) in enumerate(zip(top.shape, top.strides))
    )


def has_reduce(v: SSAValue) -> bool:
    """Whether computing ``v`` involves a reduce or a scan (up to materialized values)."""
    stack, seen = [v], set()
    while stack:
        x = stack.pop()
        op = x.owner
        if not isinstance(op, Operation) or op in seen:
            continue
        seen.add(op)
        if isinstance(op, (lazy.ReduceOp, lazy.ScanOp)):
            return True
        if not isinstance(op, (lazy.ContiguousOp, lazy.CopyOp, lazy.AssignOp)):
            stack.extend(op.operands)
    return False


class PushViewThroughElementwise(RewritePattern):
    """view(f(a, b)) -> f(view(a), view(b))

    A masked view (a pad) may only cross an op with f(0, ..., 0) == 0: the
    padded region must keep reading 0. Through any other op (exp, log, div,
    recip, cmpeq, ...) the computation is masked instead:
    view(f(a)) -> where(view(true), f(view(a)), 0).

    A broadcast stays on a value computed from a reduce: pushed down, it would
    make the reduce's kernel recompute the elementwise epilogue per copy; left
    here, the scheduler materializes the value or keeps it in one kernel. A
    value marked for materialization (:func:`mark_shared_values`) is read
    through its views as a buffer.
    """

    def __init__(self):
        # (value, view) -> the value pushed through: a view of a value reached
        # again along another path (x = where(c, x, y) read twice per step)
        # reuses it, instead of pushing the view through the whole graph below
        # once per path (exponential in the depth of such a chain)
        self.pushed: dict[tuple[SSAValue, ViewStack], SSAValue] = {}

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: lazy.ViewOp, rewriter: PatternRewriter, /):
        inner = op.input.owner
        if not isinstance(inner, lazy.ElementwiseOp) or REALIZE in inner.attributes:
            return
        stack = op.view.stack
        if broadcasts(stack) and has_reduce(op.input):
            return
        done = self.pushed.get((op.input, stack))
        if done is not None and _reusable(done, op):
            rewriter.replace(op, [], [done])
            return
        shape = lazy.shape_of(op.result)
        operands = [make_view(rewriter, v, stack, op) for v in inner.operands]
        new = _elementwise_like(inner, operands, shape)
        if not has_mask(stack) or inner.ZERO_PRESERVING:
            rewriter.replace(op, new)
            self.pushed[(inner.result, stack)] = new.result
            return
        rewriter.insert(new)
        true = with_loc(
            lazy.ConstOp(True, lazy.tensor_type(lazy.shape_of(inner.result), IntegerType(1))), op
        )
        zero = with_loc(lazy.ConstOp(0, op.result.type), op)  # type: ignore[arg-type]
        rewriter.insert([true, zero])
        valid = make_view(rewriter, true.result, stack, op)
        where = with_loc(lazy.WhereOp(valid, new.result, zero.result), op)
        rewriter.replace(op, where)
        self.pushed[(inner.result, stack)] = where.result


def _reusable(done: SSAValue, at: Operation) -> bool:
    """Whether the value ``done`` (a view pushed through earlier) can replace
    the result of ``at``: its op is still in ``at``'s block, and before ``at``,
    or movable there (its operands are defined before ``at``), and then moved."""
    d = done.owner
    if not isinstance(d, Operation) or d.parent is None or d.parent is not at.parent:
        return False
    if d.is_before_in_block(at):
        return True
    for v in d.operands:
        o = v.owner
        if isinstance(o, Operation) and (o.parent is not at.parent or not o.is_before_in_block(at)):
            return False
    d.detach()
    at.parent.insert_op_before(d, at)
    return True


def reduce_input_view(r: lazy.ReduceOp, stack: ViewStack) -> tuple[ViewStack, list[int]] | None:
    """A view ``W`` of the reduce's input and new axes with
    ``view(reduce(x)) == reduce(view_W(x), axes)``, or None.

    The view must be one view that never broadcasts a value of the reduce
    (broadcasting would recompute the reduction per copy); each reduced axis
    moves to a size-1 dim of the view's shape.
    """
    if len(stack.views) != 1:
        return None
    v = stack.top
    src = lazy.shape_of(r.input)
    out = lazy.shape_of(r.result)
    axes = r.reduce_axes
    for d, (s, st) in enumerate(zip(v.shape, v.strides)):
        masked = v.mask is not None and v.mask[d] != (0, s)
        if s > 1 and st == 0 and not masked:
            return None  # broadcast of a reduced value
    # the reduce output as a slice of the input buffer (reduced coordinate 0)
    rm = [1] * len(src)
    for d in range(len(src) - 2, -1, -1):
        rm[d] = rm[d + 1] * src[d + 1]
    embed = View.create(out, tuple(rm))
    w = merge_views(embed, v)
    if w is None:
        return None
    hosts = [d for d, s in enumerate(w.shape) if s == 1 and (w.mask is None or w.mask[d] == (0, 1))]
    if len(hosts) < len(axes):
        return None
    hosts = hosts[: len(axes)]
    shape, strides = list(w.shape), list(w.strides)
    mask = list(w.mask) if w.mask is not None else None
    for h, a in zip(hosts, axes):
        shape[h], strides[h] = src[a], rm[a]
        if mask is not None:
            mask[h] = (0, src[a])
    new = View.create(tuple(shape), tuple(strides), w.offset, tuple(mask) if mask else None)
    return ViewStack((new,)), hosts


class SplitMaskOffReduce(RewritePattern):
    """view_masked(r) -> where(view_masked(true), view(r), 0) for a reduce ``r``
    when the view without its mask still reads inside ``r`` (a padded broadcast
    of a reduced scalar, say): a kernel can read a reduce through an unmasked
    view, not through a masked one, so the reduce need not be materialized."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: lazy.ViewOp, rewriter: PatternRewriter, /):
        r = op.input.owner
        stack = op.view.stack
        if not isinstance(r, lazy.ReduceOp) or len(stack.views) != 1 or stack.top.mask is None:
            return
        v = stack.top
        unmasked = View.create(v.shape, v.strides, v.offset)
        rng = unmasked.offset_range()
        size = 1
        for d in lazy.shape_of(r.result):
            size *= d
        if rng is None or rng[0] < 0 or rng[1] >= size:
            return
        inner = make_view(rewriter, r.result, ViewStack((unmasked,)), op)
        true = with_loc(
            lazy.ConstOp(True, lazy.tensor_type(lazy.shape_of(r.result), IntegerType(1))), op
        )
        zero = with_loc(lazy.ConstOp(0, op.result.type), op)  # type: ignore[arg-type]
        rewriter.insert([true, zero])
        valid = make_view(rewriter, true.result, stack, op)
        rewriter.replace(op, with_loc(lazy.WhereOp(valid, inner, zero.result), op))


class PushViewThroughReduce(RewritePattern):
    """view(reduce(x, axes)) -> reduce(view'(x), axes') when the reduce has no other
    use and the view only permutes, slices, flips, strides or pads kept dims."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: lazy.ViewOp, rewriter: PatternRewriter, /):
        r = op.input.owner
        if not isinstance(r, lazy.ReduceOp) or not r.result.has_one_use():
            return
        found = reduce_input_view(r, op.view.stack)
        if found is None:
            return
        w, axes = found
        x = make_view(rewriter, r.input, w, op)
        rewriter.replace(op, with_loc(lazy.ReduceOp(r.reduce_kind, x, axes), r))


def scan_input_view(r: lazy.ScanOp, stack: ViewStack) -> int | None:
    """The dim ``k`` with ``view(scan(x, d)) == scan(view(x), k)``, or None.

    The scan's input has its result's shape, so the same view applies to it.
    It must be one unmasked view that never broadcasts (that would recompute
    the scan per copy) and walks the scan dim exactly as the scan does: one
    view dim runs over all of it, forward, with unit steps, and no other view
    dim moves along it. Other dims may be permuted, sliced, flipped, strided,
    split or merged within themselves."""
    if len(stack.views) != 1 or stack.top.mask is not None:
        return None
    v = stack.top
    src = lazy.shape_of(r.input)
    d = r.scan_dim
    rm = [1] * len(src)
    for i in range(len(src) - 2, -1, -1):
        rm[i] = rm[i + 1] * src[i + 1]
    size = 1
    for n in src:
        size *= n
    if not 0 <= v.offset < max(size, 1):
        return None
    lo, rest = [], v.offset
    for n, r_ in zip(src, rm):
        lo.append(rest // r_ if n > 1 else 0)
        rest -= lo[-1] * r_
    hi = list(lo)
    found = None
    for k, (n, st) in enumerate(zip(v.shape, v.strides)):
        if n <= 1:
            continue
        if st == 0:
            return None  # a broadcast
        axis = next(
            (
                b
                for b in range(len(src))
                if src[b] > 1 and abs(st) % rm[b] == 0 and abs(st) // rm[b] < src[b]
            ),
            None,
        )
        if axis is None:
            return None
        step = st // rm[axis]
        if step > 0:
            hi[axis] += (n - 1) * step
        else:
            lo[axis] += (n - 1) * step
        if lo[axis] < 0 or hi[axis] >= src[axis]:
            return None  # the dim spills into the next axis
        if axis == d:
            if found is not None or step != 1 or n != src[d]:
                return None
            found = k
    if found is None or lo[d] != 0:
        return None
    return found


class PushViewThroughScan(RewritePattern):
    """view(scan(x, d)) -> scan(view(x), k) when the scan has no other use and the
    view walks the scan dim whole and forward as its dim ``k`` (see
    :func:`scan_input_view`)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: lazy.ViewOp, rewriter: PatternRewriter, /):
        r = op.input.owner
        if not isinstance(r, lazy.ScanOp) or not r.result.has_one_use():
            return
        k = scan_input_view(r, op.view.stack)
        if k is None:
            return
        x = make_view(rewriter, r.input, op.view.stack, op)
        rewriter.replace(op, with_loc(lazy.ScanOp(r.scan_kind, x, k), r))


def mark_shared_values(f: func.FuncOp, max_reads: int) -> None:
    """Mark elementwise values that pushing views would compute too many times.

    Pushing views through a value read through ``k`` different views (an
    unviewed use is one of them) computes it ``k`` times, each copy reading
    its leaves (buffers, reduces, materialized values) again. Counted as a
    tree, a value's reads multiply along such sharing: a stencil step that
    reads the previous step through four shifted views reads the input
    ``4**n`` times after ``n`` steps. A value with several views and more than
    ``max_reads`` reads of its own is materialized instead (PyTorch Inductor
    realizes a pointwise node with several users past 4 reads); its readers
    then count it as one read, so every kernel stays within a bounded
    recomputation whatever the depth.
    """
    reads: dict[SSAValue, int] = {}

    def count(v: SSAValue) -> int:
        while isinstance(v.owner, lazy.ViewOp):
            v = v.owner.input
        if isinstance(v.owner, lazy.ConstOp):
            return 0
        return reads.get(v, 1)

    for o in f.body.walk():
        if not isinstance(o, lazy.ElementwiseOp) or REALIZE in o.attributes:
            continue
        n = min(sum(count(v) for v in o.operands), max_reads + 1)
        users = [u.operation for u in o.result.uses]
        views = {u.view.stack for u in users if isinstance(u, lazy.ViewOp)}
        direct = any(not isinstance(u, lazy.ViewOp) for u in users)
        seen = len(views) + direct
        if seen > 1 and n > max_reads:
            o.attributes[REALIZE] = StringAttr(f"read through {seen} views")
            n = 1
        reads[o.result] = n


@dataclass(frozen=True)
class PushViews(ModulePass):
    """Move views through elementwise ops, reduces and scans toward the loads."""

    name = "push-views"

    max_reads: int = 4
    """A value read through several views is materialized past this many reads
    of its own (see :func:`mark_shared_values`; 0: never)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.max_reads > 0:
            for f in lazy_funcs(op):
                mark_shared_values(f, self.max_reads)
        rewrite(
            op,
            [
                PushViewThroughElementwise(),
                PushViewThroughReduce(),
                PushViewThroughScan(),
                SplitMaskOffReduce(),
                ComposeViews(),
                DropIdentityView(),
                FoldViewOfConst(),
            ],
        )
