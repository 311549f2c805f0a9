"""mark-realize: decide which values must be materialized, and record why.

Each such op gets ``{realize = "<reason>"}``:

* ``output``: returned by the function (a graph output);
* ``contiguous``, ``copy``, ``assign``: the meta ops that exist to materialize;
* ``expand of reduce``: a computed reduce is broadcast to a larger shape than
  its own input (doing it in-kernel would recompute the reduction per copy);
* ``view of reduce``: a computed reduce is read through a view (permute,
  slice, pad, ...) that the kernel reducing it cannot express.

Two more boundaries are decided later, where kernels are known:
``group-reduces`` realizes values read by more than one kernel and reduces that
feed a reduce over another space. A pad over an op with f(0) != 0 needs no
realize here: push-views has masked that computation.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from mlfuse.dialects import lazy
from mlfuse.passes.space import view_of_reduce_problem
from mlfuse.passes.utils import REALIZE, lazy_funcs


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
            for o in f.body.walk():
                match o:
                    case func.ReturnOp():
                        for v in o.operands:
                            if isinstance(v.owner, Operation):
                                mark(v.owner, "output")
                    case lazy.ContiguousOp():
                        mark(o, "contiguous")
                    case lazy.CopyOp():
                        mark(o, "copy")
                    case lazy.AssignOp():
                        mark(o, "assign")
                    case lazy.ReduceOp():
                        for use in o.result.uses:
                            user = use.operation
                            if isinstance(user, lazy.ViewOp):
                                why = view_of_reduce_problem(o, user.view.stack)
                                if why is not None:
                                    mark(o, why)
                    case _:
                        pass
