"""group-reduces: decide which ops share a kernel.

Every materialized value (``realize``, from mark-realize) is the output of one
kernel; the kernel computes it from everything upstream that is not
materialized. The algorithm repeats these rounds until nothing changes:

1. Form one group per realized op: the op and its non-realized upstream.
2. Legality: plan every group whose members changed (kernel_plan). A plan
   names every value that must be materialized so that no reduction is
   computed twice and cheap work is not recomputed in too many loops
   ("expand of reduce", "reduce of reduce", ...); all of them are
   materialized at once, and the round ends.
3. Sharing, in one sweep from the outputs up: a value with a reduce in it that
   several groups need is computed once. The groups merge if one kernel can
   compute them all (legal and keeping the parallel extent), otherwise the
   value is materialized ("read by N kernels"). Cheap elementwise values are
   recomputed by each group instead (step 5 clones them).
   Assigns: a group reading a buffer's old contents runs before the group
   assigning it. If no order of the groups allows that (two assigns that
   read each other's old buffers), the old contents of one buffer are
   copied first ("read before its assign") and its readers read the copy.
4. Profitability, apart from legality: groups that read the same buffer merge
   when the merged kernel plans, keeps each part's parallel extent and stays
   within ``max-buffers``.
5. Each op gets ``{group = N}``; ops needed by several groups are cloned.

Every refused merge, for legality or profitability, goes through
:func:`why_not_fused`; the function records them as ``not_fused`` entries
naming both groups and the reason (outline-kernels turns them into lines about
kernels and the front-end ops they come from). Each round costs time linear in the
function (plans are memoized by group), and rounds are few: a plan reports all
of its problems at once.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    UnitAttr,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import DiagnosticException

from mlfuse.dialects import lazy
from mlfuse.dialects.syntax import i64_array
from mlfuse.loop_nest import parallel_extent as loops_extent
from mlfuse.passes.kernel_plan import Limits, Plan, PlanError, is_empty, plan_kernel
from mlfuse.passes.mark_realize import mark, realize_reason
from mlfuse.passes.utils import GROUP, REALIZE, free_outputs, lazy_funcs

NOT_FUSED = "not_fused"

BOUNDARIES = ("contiguous", "copy", "assign")
"""Realize reasons that end a kernel for the ops reading the value (the user
asked for a buffer); other outputs can be read in the kernel computing them."""

READ_BEFORE_ASSIGN = "read before its assign"
"""Why a buffer's old contents are copied: a kernel reading them cannot run
before the kernel assigning the buffer."""

MERGE_CANDIDATES = 8
"""Groups reading a buffer try to merge with at most this many earlier readers."""


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
    """Points of the kernel's parallel loop."""
    return loops_extent(plan.loops, plan.sizes)


def nbytes(v: SSAValue) -> int:
    t = v.type
    from mlfuse.dtypes import from_ir

    return math.prod(lazy.shape_of(t)) * from_ir(lazy.element_of(t)).itemsize


@dataclass(frozen=True)
class Refusal:
    """Two kernels that are not one: ``first`` and ``second`` are ops of each.
    ``stored``: a value between them is materialized (first computes it, second
    reads it); otherwise they are independent kernels that were not merged."""

    first: Operation
    second: Operation
    reason: str
    heuristic: bool = False
    stored: bool = False


HEURISTIC = " (heuristic, not needed for correctness)"


def why_not_fused(log: list[Refusal], first: Operation, second: Operation, reason: str) -> None:
    """The one place a refused merge is recorded. A reason ending in
    :data:`HEURISTIC` is a profitability refusal."""
    heuristic = reason.endswith(HEURISTIC)
    log.append(Refusal(first, second, reason.removesuffix(HEURISTIC), heuristic, False))


def why_stored(log: list[Refusal], value: Operation, reader: Operation, reason: str) -> None:
    """``value`` is materialized between its kernel and ``reader``'s, for ``reason``."""
    log.append(Refusal(value, reader, reason, False, True))


def refusals_attr(log: list[Refusal]) -> ArrayAttr:
    """The refusals between the final groups, as ``not_fused`` entries:
    ``{groups = array<i64: a, b>, reason = "...", stored}`` (``heuristic`` for
    profitability refusals)."""
    out: list[DictionaryAttr] = []
    seen: set[tuple] = set()
    for r in log:
        ga, gb = group_of(r.first), group_of(r.second)
        key = (ga, gb, r.stored)  # the first reason found for a pair is kept
        if ga is None or gb is None or ga == gb or key in seen:
            continue
        seen.add(key)
        entry: dict[str, Attribute] = {
            "groups": i64_array([ga, gb]),
            "reason": StringAttr(r.reason),
        }
        if r.stored:
            entry["stored"] = UnitAttr()
        if r.heuristic:
            entry["heuristic"] = UnitAttr()
        out.append(DictionaryAttr(entry))
    return ArrayAttr(out)


class _Groups:
    """Groups of one function, with union-find over their roots."""

    def __init__(self, f: func.FuncOp, plans: dict, limits: Limits):
        self.ops = [op for op in f.body.block.ops if not isinstance(op, func.ReturnOp)]
        self.pos = {op: i for i, op in enumerate(self.ops)}
        # outputs that are views of buffers or constants need no kernel: they are
        # not group boundaries, their readers read through them
        free = free_outputs(f, lambda op: realize_reason(op) is not None)
        self.realized = {op for op in self.ops if realize_reason(op) is not None and op not in free}
        self.roots = [op for op in self.ops if op in self.realized]
        self.members = {r: upstream(r, self.realized) for r in self.roots}
        self._inputs: dict[Operation, set[Operation]] = {}
        self._buffers: dict[Operation, frozenset[SSAValue]] = {}  # root -> group_inputs
        self.member_of: dict[Operation, set[Operation]] = {}  # op -> roots computing it
        for r, ms in self.members.items():
            for m in ms:
                self.member_of.setdefault(m, set()).add(r)
        self.assigns = any(isinstance(r, lazy.AssignOp) for r in self.roots)
        self.parent = {r: r for r in self.roots}
        # derived from the groups, kept until they change (union, add_root)
        self._groups: dict[Operation, list[Operation]] | None = None
        self._last: dict[Operation, int] | None = None
        self._reads: dict[Operation, set[Operation]] = {}
        self._plans = plans  # shared across rounds: keyed by roots and members
        self.limits = limits

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
            self._changed()

    def add_root(self, op: Operation, owners: set[Operation]) -> None:
        """``op`` is now realized: a group of its own, no longer in ``owners``'."""
        self.realized.add(op)
        bisect.insort(self.roots, op, key=self.pos.get)
        self.parent[op] = op
        self._changed()
        for r in [op, *owners]:
            old = self.members.get(r, set())
            new = upstream(r, self.realized)
            for m in old - new:
                self.member_of[m].discard(r)
            for m in new - old:
                self.member_of.setdefault(m, set()).add(r)
            self.members[r] = new
            self._inputs.pop(r, None)
            self._buffers.pop(r, None)

    def inputs(self, r: Operation) -> set[Operation]:
        """The realized ops whose values ``r``'s members read (cached until
        ``r``'s members change)."""
        found = self._inputs.get(r)
        if found is None:
            found = {
                p
                for op in self.members[r]
                for v in op.operands
                if isinstance(p := v.owner, Operation) and p in self.realized
            }
            self._inputs[r] = found
        return found

    def buffers(self, roots: list[Operation]) -> int:
        """Buffers a kernel computing ``roots`` reads and writes: the same count
        as ``group_inputs`` of their members plus the roots, from per-root
        input sets (a root's members read other groups only through realized
        ops, so the inputs of a union are the union of the inputs, less the
        roots' own results)."""
        inputs: set[SSAValue] = set()
        for r in roots:
            found = self._buffers.get(r)
            if found is None:
                found = self._buffers[r] = frozenset(group_inputs(self.members[r]))
            inputs |= found
        inputs.difference_update(res for r in roots for res in r.results)
        return len(inputs) + len(roots)

    def _changed(self) -> None:
        self._groups = self._last = None
        self._reads = {}

    def groups(self) -> dict[Operation, list[Operation]]:
        """Leader -> the roots of its group, in block order (built once per
        change of the groups; callers read it, never change it)."""
        if self._groups is None:
            out: dict[Operation, list[Operation]] = {}
            for r in self.roots:
                out.setdefault(self.find(r), []).append(r)
            self._groups = out
        return self._groups

    def last(self) -> dict[Operation, int]:
        """Leader -> the block position of its group's last root."""
        if self._last is None:
            self._last = {h: max(self.pos[r] for r in rs) for h, rs in self.groups().items()}
        return self._last

    def group_members(self, roots: list[Operation]) -> set[Operation]:
        return set().union(*(self.members[r] for r in roots))

    def plan(self, roots: list[Operation]) -> Plan:
        """The kernel computing ``roots`` (memoized by its roots and members);
        raises PlanError when no kernel can compute them together."""
        ordered = tuple(
            sorted(roots, key=lambda r: (-math.prod(lazy.shape_of(r.results[0])), self.pos[r]))
        )
        members = self.group_members(list(ordered))
        key = (ordered, frozenset(members))
        if key not in self._plans:
            try:
                self._plans[key] = plan_kernel(ordered, members, self.limits)
            except PlanError as e:
                self._plans[key] = e
        found = self._plans[key]
        if isinstance(found, PlanError):
            raise found
        return found

    def reads(self, leader: Operation, groups: dict[Operation, list[Operation]]) -> set[Operation]:
        """Leaders of the groups that must run before ``leader``'s: those whose
        outputs it reads, and those that read the old contents of a buffer it
        assigns (cached until the groups change)."""
        out = self._reads.get(leader)
        if out is None:
            out = {self.find(p) for r in groups[leader] for p in self.inputs(r)}
            out |= self.old_readers(leader, groups).keys()
            out.discard(leader)
            self._reads[leader] = out
        return out

    def old_readers(
        self, leader: Operation, groups: dict[Operation, list[Operation]]
    ) -> dict[Operation, SSAValue]:
        """Leaders of the groups that read the old contents of a buffer
        ``leader``'s group assigns, each with that buffer."""
        out: dict[Operation, SSAValue] = {}
        for r in groups[leader]:
            if isinstance(r, lazy.AssignOp):
                for u in r.target.uses:
                    if u.operation is not r:
                        for x in self.member_of.get(u.operation, ()):
                            out.setdefault(self.find(x), r.target)
        out.pop(leader, None)
        return out

    def assign_cycle(self) -> SSAValue | None:
        """A buffer whose old contents are read by a kernel that must also run
        after the kernel assigning it (through other kernels), or None: the
        groups can run in some order."""
        if not self.assigns:
            return None
        groups = self.groups()
        preds = {h: sorted(self.reads(h, groups), key=self.pos.get) for h in groups}
        state: dict[Operation, int] = {}  # 1: on the DFS path, 2: done
        for start in groups:
            if start in state:
                continue
            path = [start]
            todo = [iter(preds[start])]
            state[start] = 1
            while todo:
                nxt = next(todo[-1], None)
                if nxt is None:
                    state[path.pop()] = 2
                    todo.pop()
                elif nxt not in state:
                    state[nxt] = 1
                    path.append(nxt)
                    todo.append(iter(preds[nxt]))
                elif state[nxt] == 1:  # a cycle: nxt ... path[-1] -> nxt
                    cycle = path[path.index(nxt) :] + [nxt]
                    for later, earlier in zip(cycle, cycle[1:]):
                        buf = self.old_readers(later, groups).get(earlier)
                        if buf is not None:
                            return buf
                    raise DiagnosticException(  # pragma: no cover - reads of outputs are acyclic
                        "group-reduces: kernels read each other's outputs in a cycle"
                    )
        return None

    def between(self, leaders: list[Operation]) -> set[Operation]:
        """The groups on a path from one of ``leaders``' groups to another's (one
        reads the output of a group that reads the other's, ...). Merging the
        leaders alone would make a cycle; merging these too would not. A direct
        read needs nothing between: in one kernel, the reader uses the value."""
        groups, last = self.groups(), self.last()
        # a group whose last root precedes every leader's roots cannot be reached
        # from a leader through reads of outputs; through an assign's readers it can
        floor = -1 if self.assigns else min(min(self.pos[r] for r in groups[b]) for b in leaders)
        lead = set(leaders)
        direct: dict[Operation, set[Operation]] = {}  # each group's reads, once per call

        def reads(h: Operation) -> set[Operation]:
            """The groups ``h`` reads that can still reach a leader (none whose
            last root precedes every leader)."""
            if h not in direct:
                direct[h] = {x for x in self.reads(h, groups) if last[x] >= floor}
            return direct[h]

        # the leaders each group of the leaders' upstream region reads from,
        # transitively: one postorder walk (no recursion), each group once
        above: dict[Operation, frozenset[Operation]] = {}
        for a in leaders:
            if a in above:
                continue
            stack, on_stack = [(a, iter(reads(a)))], {a}
            while stack:
                h, it = stack[-1]
                x = next(it, None)
                if x is None:
                    stack.pop()
                    on_stack.discard(h)
                    found = frozenset(y for r in reads(h) for y in above.get(r, ()))
                    above[h] = found | {h} if h in lead else found
                elif x not in above and x not in on_stack:
                    stack.append((x, iter(reads(x))))
                    on_stack.add(x)
        # a group between: upstream of one leader and reading from another
        out: set[Operation] = set()
        for a in leaders:
            seen, todo = {a}, [a]
            while todo:
                for x in reads(todo.pop()):
                    if x not in seen:
                        seen.add(x)
                        todo.append(x)
                        if x not in lead and above[x] - {a}:
                            out.add(x)
        return out


@dataclass(frozen=True)
class GroupReduces(ModulePass):
    """Group ops into kernels: reduces with their producers and consumers."""

    name = "group-reduces"

    max_buffers: int = 32
    """Horizontal merges keep a kernel at no more than this many buffers."""

    horizontal: bool = True
    """Merge independent kernels that read the same buffers."""

    recompute: int = 3
    """An elementwise value is computed in at most this many loops of a kernel."""

    max_ops: int = 2048
    """A kernel computes at most this many ops (longer chains are cut)."""

    max_loops: int = 16
    """A kernel has at most this many reduce loop nests."""

    factor_elements: int = 1 << 15
    """A contraction's factor that computes exp, log, sin ... inside the reduction
    is materialized from this many elements on (0: never; see ``Limits``)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in lazy_funcs(op):
            self.group_function(f)

    def group_function(self, f: func.FuncOp) -> None:
        log: list[Refusal] = []
        plans: dict = {}
        limits = Limits(self.recompute, self.max_ops, self.max_loops, self.factor_elements or None)
        while True:
            g = _Groups(f, plans, limits)
            if self._cut(g, log) or self._share(g, log) or self._snapshot(g, log):
                continue
            break
        if self.horizontal:
            self._merge_horizontally(g, log)
        _assign(g)
        _recount_readers(g)
        refused = refusals_attr(log)
        if refused.data:
            f.attributes[NOT_FUSED] = refused

    # -- step 2 ---------------------------------------------------------------
    def _cut(self, g: _Groups, log: list[Refusal]) -> bool:
        """Plan every group alone; materialize every value a plan names. True if any."""
        changed = False
        for roots in g.groups().values():
            if is_empty(roots):
                continue
            plan = g.plan(roots)  # one root per group here: a plan always exists
            for e in plan.problems:
                changed |= self._realize(g, e, log)
        if not changed and any(
            not is_empty(rs) and g.plan(rs).problems for rs in g.groups().values()
        ):  # pragma: no cover - every problem names a value that is not materialized
            raise DiagnosticException("group-reduces: a kernel cannot be formed")
        return changed

    def _realize(self, g: _Groups, e: PlanError, log: list[Refusal]) -> bool:
        """Materialize the planner's culprit, or its first alternative not yet materialized."""
        for v in [e.value, *e.alternatives]:
            op = v.owner
            if isinstance(op, Operation) and op not in g.realized and op in g.pos:
                if realize_reason(op) is not None:
                    # an output that needed no kernel (a view of an argument or a
                    # constant) that a kernel needs materialized after all
                    op.attributes[REALIZE] = StringAttr(e.reason)
                mark(op, e.reason)
                g.realized.add(op)
                for u in op.results[0].uses:
                    why_stored(log, op, u.operation, e.reason)
                return True
        return False

    def _snapshot(self, g: _Groups, log: list[Refusal]) -> bool:
        """If no kernel order reads every assigned buffer before its assign (a
        kernel reads the old contents of a buffer and, through other kernels,
        something computed after the buffer is assigned), copy one such buffer
        first and give its old contents' readers the copy. True if one was copied."""
        buf = g.assign_cycle()
        if buf is None:
            return False
        copy = lazy.ContiguousOp(buf)
        where = (
            InsertPoint.after(buf.owner)
            if isinstance(buf.owner, Operation)
            else InsertPoint.at_start(buf.owner)  # type: ignore[arg-type]
        )
        Rewriter.insert_op(copy, where)
        for u in list(buf.uses):
            if u.operation is not copy and not (
                isinstance(u.operation, lazy.AssignOp) and u.index == 0
            ):
                u.operation.operands[u.index] = copy.result
                why_stored(log, copy, u.operation, READ_BEFORE_ASSIGN)
        mark(copy, READ_BEFORE_ASSIGN)
        return True

    # -- step 3 ---------------------------------------------------------------
    def _share(self, g: _Groups, log: list[Refusal]) -> bool:
        """Merge or materialize expensive values several groups need, in one sweep
        from the outputs up (users before operands, so each op knows every group
        that needs it). True if a value was materialized."""
        expensive = _expensive(g.ops, g.realized)
        owners: dict[Operation, set[Operation]] = {}
        changed = False
        for op in reversed(g.ops):
            if op in g.realized:
                owners[op] = {op}
                continue
            own: set[Operation] = set()
            for r in op.results:
                for u in r.uses:
                    own |= owners.get(u.operation, set())
            owners[op] = own
            if op not in expensive:
                continue
            leaders = sorted({g.find(r) for r in own}, key=g.pos.get)
            if len(leaders) < 2:
                continue
            why: list[str] = []
            merge = self._can_merge(g, leaders, why)
            if merge is not None:
                for other in merge[1:]:
                    g.union(merge[0], other)
                continue
            why_not_fused(log, leaders[0], leaders[1], why[0])
            reason = f"read by {len(leaders)} kernels"
            for lead in leaders:
                why_stored(log, op, lead, reason)
            mark(op, reason)
            g.add_root(op, own)
            owners[op] = {op}
            changed = True
        return changed

    def _can_merge(
        self, g: _Groups, leaders: list[Operation], why: list[str]
    ) -> list[Operation] | None:
        """The groups to merge so that ``leaders`` are one kernel (the leaders and
        any groups between them), or None (with the reason in ``why``)."""
        groups = g.groups()
        # the groups between only add buffers: a pair already over the limit is
        # refused without walking the region between them
        mine = [r for lead in leaders for r in groups[lead]]
        if not is_empty(mine) and g.buffers(mine) > self.max_buffers:
            why.append(f"more than max-buffers={self.max_buffers} buffers")
            return None
        leaders = leaders + sorted(g.between(leaders), key=g.pos.get)
        roots = sorted((r for lead in leaders for r in groups[lead]), key=g.pos.get)
        if is_empty(roots):
            return leaders
        for r in roots:
            reason = realize_reason(r)
            if reason in BOUNDARIES and any(
                u.operation in g.group_members(roots) for u in r.results[0].uses
            ):
                why.append(f"one reads the other's {reason}() result")
                return None
        if g.buffers(roots) > self.max_buffers:
            why.append(f"more than max-buffers={self.max_buffers} buffers")
            return None
        try:
            merged = g.plan(roots)
        except PlanError as e:
            why.append(f"not one kernel ({e.reason})")
            return None
        if merged.problems:
            why.append(f"not one kernel ({merged.problems[0].reason})")
            return None
        parts = [rs for lead, rs in g.groups().items() if lead in leaders and not is_empty(rs)]
        most = max((parallel_extent(g.plan(rs)) for rs in parts), default=1)
        if parallel_extent(merged) < most:
            why.append(
                f"parallel extent would drop from {most} to {parallel_extent(merged)}{HEURISTIC}"
            )
            return None
        return leaders

    # -- step 4 ---------------------------------------------------------------
    def _merge_horizontally(self, g: _Groups, log: list[Refusal]) -> None:
        readers: dict[SSAValue, list[Operation]] = {}
        for r in g.roots:
            for v in sorted(group_inputs(g.members[r]), key=_value_order(g)):
                readers.setdefault(v, []).append(r)
        for rs in readers.values():
            for i, b in enumerate(rs):
                tried = 0
                for a in rs[:i]:
                    la, lb = g.find(a), g.find(b)
                    if la is lb:
                        break
                    if tried == MERGE_CANDIDATES:
                        break
                    tried += 1
                    if self._try_horizontal(g, la, lb, log):
                        break

    def _try_horizontal(self, g: _Groups, a: Operation, b: Operation, log: list[Refusal]) -> bool:
        if g.pos[b] < g.pos[a]:
            a, b = b, a
        groups = g.groups()
        if is_empty(groups[a]) or is_empty(groups[b]):
            return False  # nothing to share: an empty kernel is not launched
        why: list[str] = []
        merge = self._can_merge(g, [a, b], why)
        if merge is None:
            why_not_fused(log, a, b, why[0])
            return False
        for other in merge[1:]:
            g.union(merge[0], other)
        return True


def _value_order(g: _Groups):
    def key(v: SSAValue):
        op = v.owner
        return g.pos.get(op, -1) if isinstance(op, Operation) else -1 - v.index  # type: ignore[attr-defined]

    return key


def _expensive(ops: list[Operation], realized: set[Operation]) -> set[Operation]:
    """Non-realized ops with a reduce or scan among themselves or their non-realized upstream."""
    out: set[Operation] = set()
    for op in ops:
        if op in realized:
            continue
        if isinstance(op, (lazy.ReduceOp, lazy.ScanOp)) or any(
            isinstance(v.owner, Operation) and v.owner in out for v in op.operands
        ):
            out.add(op)
    return out


def _assign(g: _Groups) -> None:
    """Step 5: number the groups in program order; clone ops several groups need.

    The first group that needs an op gets it; every other one gets a clone
    wired to its own copies of the op's operands (looked up by the operands
    the op had before any group rewired it)."""
    groups = sorted(g.groups().values(), key=lambda rs: min(g.pos[r] for r in rs))
    claimed: dict[Operation, int] = {}
    original: dict[Operation, tuple[SSAValue, ...]] = {}
    for gid, roots in enumerate(groups):
        attr = IntegerAttr(gid, i64)
        members = sorted(g.group_members(roots), key=g.pos.get)
        mapping: dict[SSAValue, SSAValue] = {}
        for op in members:
            operands = original.setdefault(op, tuple(op.operands))
            if op in claimed:
                new = op.clone(
                    value_mapper={cur: mapping.get(v, v) for cur, v in zip(op.operands, operands)}
                )
                Rewriter.insert_op(new, InsertPoint.after(op))
                for old, nv in zip(op.results, new.results):
                    mapping[old] = nv
                new.attributes[GROUP] = attr
                continue
            claimed[op] = gid
            for i, v in enumerate(operands):
                if v in mapping:
                    op.operands[i] = mapping[v]
            op.attributes[GROUP] = attr


def _recount_readers(g: _Groups) -> None:
    """A value materialized as "read by N kernels" may end up read by fewer
    (readers merged, or outputs that became views of it): say how many read it,
    or that it is stored as an output seen through views."""
    for op in g.realized:
        reason = realize_reason(op)
        if reason is None or not reason.startswith("read by "):
            continue
        readers = {
            group_of(u.operation)
            for u in op.results[0].uses
            if group_of(u.operation) not in (None, group_of(op))
        }
        if len(readers) >= 2:
            op.attributes[REALIZE] = StringAttr(f"read by {len(readers)} kernels")
        elif not readers:
            op.attributes[REALIZE] = StringAttr("output")


def group_of(op: Operation) -> int | None:
    a = op.attributes.get(GROUP)
    return a.value.data if isinstance(a, IntegerAttr) else None
