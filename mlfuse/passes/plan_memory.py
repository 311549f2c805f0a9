"""plan-memory: buffer lifetimes, frees and reuse in a kernel schedule.

1. The lifetime of an allocated buffer runs from its ``kernel.alloc`` to its
   last use; buffers the schedule returns (itself or through a view) live to
   the end, arguments belong to the caller and are never freed.
2. Linear scan in schedule order: an allocation takes over a dead buffer of
   the same type when that buffer's last use comes strictly before the first
   launch of the new one (a kernel never writes a buffer it still reads).
3. A ``kernel.free`` follows the last use of every buffer not returned.
4. The peak of live allocated bytes is recorded on the schedule as
   ``peak_bytes`` (and the number of reused allocations as ``reused``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import IntegerAttr, MemRefType, ModuleOp, i64
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from mlfuse.dialects import kernel


def nbytes(t: MemRefType) -> int:
    from mlfuse.dtypes import from_ir

    return math.prod(t.get_shape()) * from_ir(t.element_type).itemsize


def schedules(module: ModuleOp):
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.body.blocks:
            if any(isinstance(o, (kernel.LaunchOp, kernel.AllocOp)) for o in op.body.block.ops):
                yield op


def plan_schedule(f: func.FuncOp, reuse: bool) -> None:
    block = f.body.block
    for op in list(block.ops):
        if isinstance(op, kernel.FreeOp):
            Rewriter.erase_op(op)
    ops = list(block.ops)
    pos = {op: i for i, op in enumerate(ops)}
    returned = set(block.last_op.operands) if isinstance(block.last_op, func.ReturnOp) else set()
    # a result read through a view keeps its source buffer alive
    returned |= {v.owner.source for v in returned if isinstance(v.owner, memref.ReinterpretCastOp)}

    def last_use(v: SSAValue) -> int:
        return max((pos[u.operation] for u in v.uses), default=pos[v.owner])  # type: ignore

    def first_use(v: SSAValue) -> int:
        return min((pos[u.operation] for u in v.uses), default=pos[v.owner])  # type: ignore

    # 2. linear scan: map each allocation to a physical buffer
    phys: dict[SSAValue, SSAValue] = {}
    end: dict[SSAValue, int] = {}  # physical buffer -> last use (inf if returned)
    inf = len(ops) + 1
    reused = 0
    for op in ops:
        if not isinstance(op, kernel.AllocOp):
            continue
        v = op.result
        v_end = inf if v in returned else last_use(v)
        choice = None
        if reuse and v not in returned:
            for p, p_end in end.items():
                if p.type == v.type and p_end < first_use(v):
                    if choice is None or end[p] > end[choice]:
                        choice = p  # the most recently freed: warmest in cache
        if choice is None:
            phys[v] = v
            end[v] = v_end
        else:
            phys[v] = choice
            end[choice] = v_end
            reused += 1
    for v, p in phys.items():
        if p is not v:
            v.replace_all_uses_with(p)
            Rewriter.erase_op(v.owner)  # type: ignore[arg-type]

    # 3. frees after last use
    for p, p_end in end.items():
        if p_end >= inf or not p.uses:
            continue
        last = max((u.operation for u in p.uses), key=lambda o: pos.get(o, -1))
        Rewriter.insert_op(kernel.FreeOp(p), InsertPoint.after(last))

    # 4. peak memory
    live = peak = 0
    for op in block.ops:
        if isinstance(op, kernel.AllocOp):
            live += nbytes(op.result.type)  # type: ignore[arg-type]
            peak = max(peak, live)
        elif isinstance(op, kernel.FreeOp):
            live -= nbytes(op.buffer.type)  # type: ignore[arg-type]
    f.attributes["peak_bytes"] = IntegerAttr(peak, i64)
    f.attributes["reused"] = IntegerAttr(reused, i64)


@dataclass(frozen=True)
class PlanMemory(ModulePass):
    """Free buffers after their last use and reuse dead ones; report peak memory."""

    name = "plan-memory"

    reuse: bool = True
    """Let a new allocation take over a dead buffer of the same type."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in schedules(op):
            plan_schedule(f, self.reuse)
