"""mark-realize: decide which values must be materialized, and record why.

Each such op gets ``{realize = "<reason>"}``:

* ``output``: returned by the function (a graph output); an argument the
  function also assigns is returned through a ``lazy.contiguous`` of it, so
  the output is its value before the assign, copied by a kernel that runs
  before the assign's;
* ``contiguous``, ``copy``, ``assign``: the meta ops that exist to materialize;
* ``view of reduce``: a computed reduce is read through a view no kernel can
  express on a computed value (a pad's mask, or a reshape that needs a stack
  of views); push-views already moved every other view it could.
* ``view of scan``: the same for a computed ``lazy.scan``.
* ``gather source``: a ``lazy.gather`` reads its source at data-dependent
  positions, so the source must be a buffer seen through one unmasked view:
  a computed source (or a view of a buffer that is not one view) is stored
  first.

Two passes before this one mark values too: split-reduces (``split reduce``:
the partial results of a long reduce) and push-views (``read through N
views``: an elementwise value that pushing views would compute once per view,
past a bound on its reads). Their reasons are kept.

The boundaries that depend on how kernels are formed are decided by
group-reduces, with the kernel planner: values read by several kernels
(``read by N kernels``), and reduces that a kernel would otherwise recompute
(``expand of reduce``, ``reduce of reduce``). A pad over an op with
f(0) != 0 needs no realize: push-views has masked that computation.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.passes import ModulePass

from mlfuse.dialects import lazy
from mlfuse.passes.utils import REALIZE, assign_targets, lazy_funcs
from mlfuse.view import ViewStack


def _inexpressible(v: lazy.ViewOp) -> bool:
    """A view of a computed reduce or scan that is masked or a stack of views."""
    if not isinstance(v.input.owner, (lazy.ReduceOp, lazy.ScanOp)):
        return False
    stack = v.view.stack
    return len(stack.views) > 1 or stack.top.mask is not None


def _readable_source(v: SSAValue) -> bool:
    """Whether a kernel can read a gather's source ``v`` at data-dependent
    positions where it is: a buffer (an argument or a materialized value) seen
    through one unmasked view."""
    stack = None
    while isinstance(v.owner, lazy.MovementOp) and realize_reason(v.owner) is None:
        m = v.owner
        inner = (
            m.view.stack
            if isinstance(m, lazy.ViewOp)
            else m.apply(ViewStack.from_shape(lazy.shape_of(m.input)))
        )
        stack = inner if stack is None else inner.compose(stack)
        v = m.input
    if stack is not None and (len(stack.views) != 1 or stack.top.mask is not None):
        return False
    return isinstance(v, BlockArgument) or realize_reason(v.owner) is not None  # type: ignore[arg-type]


def mark(op: Operation, reason: str) -> None:
    """Record ``reason`` (the first reason found wins)."""
    if REALIZE not in op.attributes:
        op.attributes[REALIZE] = StringAttr(reason)


def realize_reason(op: Operation) -> str | None:
    a = op.attributes.get(REALIZE)
    return a.data if isinstance(a, StringAttr) else None


@dataclass(frozen=True)
class MarkRealize(ModulePass):
    """Mark materialized values with the reason they are materialized."""

    name = "mark-realize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in lazy_funcs(op):
            ret = f.body.block.last_op
            if isinstance(ret, func.ReturnOp):  # outputs first: their reason wins
                _copy_assigned_arguments(f, ret)
                for v in ret.operands:
                    if isinstance(v.owner, Operation):
                        mark(v.owner, "output")
            for o in f.body.walk():
                match o:
                    case lazy.ContiguousOp():
                        mark(o, "contiguous")
                    case lazy.CopyOp():
                        mark(o, "copy")
                    case lazy.AssignOp():
                        mark(o, "assign")
                    case lazy.ViewOp() if _inexpressible(o):
                        what = "scan" if isinstance(o.input.owner, lazy.ScanOp) else "reduce"
                        mark(o.input.owner, f"view of {what}")  # type: ignore[arg-type]
                    case lazy.GatherOp() if not _readable_source(o.source):
                        mark(o.source.owner, "gather source")  # type: ignore[arg-type]
                    case _:
                        pass


def _copy_assigned_arguments(f: func.FuncOp, ret: func.ReturnOp) -> None:
    """Return ``contiguous(%arg)`` instead of ``%arg`` when the function also
    assigns ``%arg``: the output is the argument's old value, and returning the
    argument's buffer would show the assigned one."""
    assigned = assign_targets(f)
    copies: dict[BlockArgument, lazy.ContiguousOp] = {}
    for i, v in enumerate(ret.operands):
        if isinstance(v, BlockArgument) and v in assigned:
            if v not in copies:
                copies[v] = lazy.ContiguousOp(v)
                mark(copies[v], "output")
                Rewriter.insert_op(copies[v], InsertPoint.before(ret))
            ret.operands[i] = copies[v].result
