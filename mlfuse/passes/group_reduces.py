"""group-reduces: decide which ops share a kernel.

Every materialized value (``realize``, from mark-realize) is the output of
one kernel; the kernel computes it from everything upstream that is not
materialized. The algorithm, to a fixpoint:

1. Form one group per realized op: the op and its non-realized upstream.
2. A value with a reduce in it that two groups need is computed once: the
   groups merge if one kernel can compute both (legality below), otherwise
   the value is realized ("read by N kernels"). Cheap elementwise values are
   recomputed by each group instead (step 5 clones them).
3. Each group must plan as one kernel (kernel_plan): no reduction may be
   recomputed. If it cannot, the planner names the value to realize
   ("expand of reduce", "reduce of reduce", ...).
4. Profitability, apart from legality: independent groups that read the same
   buffers merge when the merged kernel plans, keeps each part's parallel
   extent and stays within ``max-buffers``. Refusals are logged on the
   function as ``not_fused`` (these are heuristics, not needed for correctness).
5. Each op gets ``{group = N}``; ops needed by several groups are cloned.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, ModuleOp, StringAttr, i64
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from mlfuse.dialects import lazy
from mlfuse.passes.kernel_plan import Plan, PlanError, is_empty, plan_kernel
from mlfuse.passes.mark_realize import mark, realize_reason
from mlfuse.passes.utils import GROUP, lazy_funcs

NOT_FUSED = "not_fused"


def upstream(root: Operation, realized: set[Operation]) -> set[Operation]:
    """``root`` and every non-realized op it depends on."""
    out = {root}
    stack = [root]
    while stack:
        op = stack.pop()
        for v in op.operands:
            p = v.owner
            if isinstance(p, Operation) and p not in out and p not in realized:
                out.add(p)
                stack.append(p)
    return out


def group_inputs(members: set[Operation]) -> set[SSAValue]:
    """Buffers a group reads: block arguments and other groups' outputs."""
    out = set()
    for op in members:
        for v in op.operands:
            if not (isinstance(v.owner, Operation) and v.owner in members):
                if not isinstance(v.owner, lazy.ConstOp):
                    out.add(v)
    return out


def parallel_extent(plan: Plan) -> int:
    """Points of the dims every reduce and output varies along (the parallel loop)."""
    doms = [n.at.domain for n in plan.reduces] + [at.domain for _, _, at in plan.roots]
    common = frozenset.intersection(*doms) if doms else frozenset()
    for r in plan.reduces:
        common -= set(r.dims)
    return math.prod(plan.sizes[d] for d in common)


def nbytes(v: SSAValue) -> int:
    t = v.type
    from mlfuse.dtypes import from_ir

    return math.prod(lazy.shape_of(t)) * from_ir(lazy.element_of(t)).itemsize


class _Groups:
    """Groups of one function, with union-find over their roots."""

    def __init__(self, f: func.FuncOp):
        self.ops = [op for op in f.body.block.ops if not isinstance(op, func.ReturnOp)]
        self.pos = {op: i for i, op in enumerate(self.ops)}
        self.realized = {op for op in self.ops if realize_reason(op) is not None}
        self.roots = [op for op in self.ops if op in self.realized]
        self.members = {r: upstream(r, self.realized) for r in self.roots}
        self.parent = {r: r for r in self.roots}
        # plans depend only on the ops and their realize marks, fixed for this object
        self._plans: dict[tuple[Operation, ...], Plan | PlanError] = {}

    def find(self, r: Operation) -> Operation:
        while self.parent[r] is not r:
            self.parent[r] = self.parent[self.parent[r]]
            r = self.parent[r]
        return r

    def union(self, a: Operation, b: Operation) -> None:
        a, b = self.find(a), self.find(b)
        if a is not b:
            if self.pos[b] < self.pos[a]:
                a, b = b, a
            self.parent[b] = a

    def groups(self) -> dict[Operation, list[Operation]]:
        out: dict[Operation, list[Operation]] = {}
        for r in self.roots:
            out.setdefault(self.find(r), []).append(r)
        return out

    def group_members(self, roots: list[Operation]) -> set[Operation]:
        return set().union(*(self.members[r] for r in roots))

    def plan(self, roots: list[Operation]) -> Plan:
        """The kernel computing ``roots`` (memoized); raises PlanError if there is none."""
        ordered = tuple(
            sorted(roots, key=lambda r: (-math.prod(lazy.shape_of(r.results[0])), self.pos[r]))
        )
        if ordered not in self._plans:
            try:
                self._plans[ordered] = plan_kernel(ordered, self.group_members(list(ordered)))
            except PlanError as e:
                self._plans[ordered] = e
        found = self._plans[ordered]
        if isinstance(found, PlanError):
            raise found
        return found

    def depends(self) -> dict[Operation, set[Operation]]:
        """Group leader -> leaders of the groups it reads from (transitively)."""
        leader_of = {r: self.find(r) for r in self.roots}
        direct: dict[Operation, set[Operation]] = {g: set() for g in set(leader_of.values())}
        for r in self.roots:
            g = leader_of[r]
            for op in self.members[r]:
                for v in op.operands:
                    p = v.owner
                    if isinstance(p, Operation) and p in self.realized and leader_of[p] is not g:
                        direct[g].add(leader_of[p])
        closure = {}
        for g in direct:
            seen, stack = set(), list(direct[g])
            while stack:
                h = stack.pop()
                if h not in seen:
                    seen.add(h)
                    stack.extend(direct[h])
            closure[g] = seen
        return closure


def _expensive(ops: list[Operation], realized: set[Operation]) -> set[Operation]:
    """Non-realized ops with a reduce among themselves or their non-realized upstream."""
    out: set[Operation] = set()
    for op in ops:
        if op in realized:
            continue
        if isinstance(op, lazy.ReduceOp) or any(
            isinstance(v.owner, Operation) and v.owner in out for v in op.operands
        ):
            out.add(op)
    return out


@dataclass(frozen=True)
class GroupReduces(ModulePass):
    """Group ops into kernels: reduces with their producers and consumers."""

    name = "group-reduces"

    max_buffers: int = 32
    """Horizontal merges keep a kernel at no more than this many buffers."""

    horizontal: bool = True
    """Merge independent kernels that read the same buffers."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in lazy_funcs(op):
            self.group_function(f)

    def group_function(self, f: func.FuncOp) -> None:
        log: list[str] = []
        for _ in range(len(f.body.block.ops) + 1):
            g = _Groups(f)
            if not self._resolve(g, log):
                break
        if self.horizontal:
            self._merge_horizontally(g, log)
        _assign(g)
        if log:
            f.attributes[NOT_FUSED] = ArrayAttr([StringAttr(s) for s in log])

    def _realize(self, g: _Groups, e: PlanError) -> None:
        """Materialize the planner's culprit, or its first alternative not yet materialized."""
        for v in [e.value, *e.alternatives]:
            op = v.owner
            if isinstance(op, Operation) and op not in g.realized:
                mark(op, e.reason)
                return
        raise RuntimeError(  # pragma: no cover - the planner names unrealized values
            f"group-reduces: no value left to materialize for '{e.reason}'"
        )

    def _resolve(self, g: _Groups, log: list[str]) -> bool:
        """One round of steps 2 and 3; True if a value was newly realized."""
        expensive = _expensive(g.ops, g.realized)
        owners: dict[Operation, list[Operation]] = {}
        for r in g.roots:
            for m in g.members[r]:
                owners.setdefault(m, []).append(r)
        for op in g.ops:
            rs = owners.get(op, [])
            if op not in expensive or len({g.find(r) for r in rs}) < 2:
                continue
            leaders = sorted({g.find(r) for r in rs}, key=g.pos.get)
            if self._can_merge(g, leaders):
                for other in leaders[1:]:
                    g.union(leaders[0], other)
            else:
                mark(op, f"read by {len(leaders)} kernels")
                return True
        for roots in g.groups().values():
            if is_empty(roots):
                continue
            try:
                g.plan(roots)
            except PlanError as e:
                self._realize(g, e)
                return True
        return False

    def _can_merge(self, g: _Groups, leaders: list[Operation], why: list[str] | None = None):
        deps = g.depends()
        for a in leaders:
            for b in leaders:
                if a is not b and b in deps[a]:
                    if why is not None:
                        why.append("one reads the other's output")
                    return False
        roots = [r for r in g.roots if g.find(r) in leaders]
        if is_empty(roots):
            return True
        if len(group_inputs(g.group_members(roots))) + len(roots) > self.max_buffers:
            if why is not None:
                why.append(f"more than max-buffers={self.max_buffers} buffers")
            return False
        try:
            g.plan(roots)
        except PlanError as e:
            if why is not None:
                why.append(f"not one kernel ({e.reason})")
            return False
        return True

    def _merge_horizontally(self, g: _Groups, log: list[str]) -> None:
        changed = True
        while changed:
            changed = False
            groups = g.groups()
            leaders = sorted(groups, key=g.pos.get)
            for i, a in enumerate(leaders):
                for b in leaders[i + 1 :]:
                    ins_a = group_inputs(g.group_members(groups[a]))
                    ins_b = group_inputs(g.group_members(groups[b]))
                    shared = ins_a & ins_b
                    if not shared:
                        continue
                    name = f"{_describe(groups[a])} + {_describe(groups[b])}"
                    why: list[str] = []
                    if not self._can_merge(g, [a, b], why):
                        log.append(f"{name}: {why[0]}")
                        continue
                    if is_empty(groups[a]) or is_empty(groups[b]):
                        continue  # nothing to share: an empty kernel is not launched
                    pa, pb = parallel_extent(g.plan(groups[a])), parallel_extent(g.plan(groups[b]))
                    pm = parallel_extent(g.plan(groups[a] + groups[b]))
                    if pm < max(pa, pb):
                        log.append(
                            f"{name}: parallel extent would drop from {max(pa, pb)} to {pm} "
                            "(heuristic, not needed for correctness)"
                        )
                        continue
                    g.union(a, b)
                    changed = True
                    break
                if changed:
                    break


def _describe(roots: list[Operation]) -> str:
    return "/".join(r.name.removeprefix("lazy.") for r in roots)


def _assign(g: _Groups) -> None:
    """Step 5: number the groups in program order; clone ops several groups need."""
    groups = sorted(g.groups().values(), key=lambda rs: min(g.pos[r] for r in rs))
    claimed: dict[Operation, int] = {}
    for gid, roots in enumerate(groups):
        members = sorted(g.group_members(roots), key=g.pos.get)
        mapping: dict[SSAValue, SSAValue] = {}
        for op in members:
            if op in claimed:
                new = op.clone(value_mapper=dict(mapping))
                Rewriter.insert_op(new, InsertPoint.after(op))
                for old, nv in zip(op.results, new.results):
                    mapping[old] = nv
                new.attributes[GROUP] = IntegerAttr(gid, i64)
                continue
            claimed[op] = gid
            for i, v in enumerate(op.operands):
                if v in mapping:
                    op.operands[i] = mapping[v]
            op.attributes[GROUP] = IntegerAttr(gid, i64)


def group_of(op: Operation) -> int | None:
    a = op.attributes.get(GROUP)
    return a.value.data if isinstance(a, IntegerAttr) else None
