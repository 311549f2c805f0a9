"""outline-kernels: each group becomes a ``kernel.func``; the function becomes a schedule.

For every group (``{group = N}``, from group-reduces) the kernel planner
(kernel_plan) gives the iteration space and the index map of every value;
this pass writes that plan as a kernel: loads through the composed views,
scalar ``arith``/``math`` ops, ``kernel.reduce`` and one store per output.
Each kernel records the front-end ops it came from (``origin``), its lazy ops
(``ops``) and why each of its outputs is materialized (``reasons``).

The lazy function is replaced by a schedule of the same name over memrefs:
``kernel.alloc`` for every output buffer and ``kernel.launch`` in a
topological (BFS) order of the kernels. A kernel that overwrites a buffer
(``lazy.assign``) runs after every kernel that reads the old contents; if the
order cannot exist the pass fails and names the buffer.
"""

from __future__ import annotations

import functools
import math
from collections import deque
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    MemRefType,
    ModuleOp,
    StridedLayoutAttr,
    StringAttr,
)
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import DiagnosticException

from mlfuse.dialects import kernel, lazy
from mlfuse.dialects.syntax import array_ints
from mlfuse.passes.group_reduces import HEURISTIC, NOT_FUSED, group_of
from mlfuse.passes.kernel_plan import Node, Plan, PlanError, is_empty, plan_kernel
from mlfuse.passes.mark_realize import realize_reason
from mlfuse.passes.scalar import ScalarEmitter, constant
from mlfuse.passes.utils import FreeOutput, free_outputs, lazy_funcs, origin_of
from mlfuse.view import ViewStack, contiguous_strides


class ScheduleError(DiagnosticException):
    """A schedule that cannot run correctly (e.g. an assign hazard)."""


def buffer_of_type(t) -> kernel.MemRefType:
    return _buffer_type(math.prod(lazy.shape_of(t)), lazy.element_of(t))


@functools.lru_cache(maxsize=4096)
def _buffer_type(size: int, element) -> kernel.MemRefType:
    return kernel.buffer_type(size, element)


@dataclass
class _Group:
    gid: int
    ops: list[Operation]
    roots: list[Operation]
    plan: Plan | None = None


def _groups(f: func.FuncOp, free: dict[Operation, FreeOutput]) -> list[_Group]:
    by_id: dict[int, _Group] = {}
    for op in f.body.block.ops:
        if isinstance(op, func.ReturnOp):
            continue
        gid = group_of(op)
        if gid is None:
            if op in free or isinstance(op, (lazy.MovementOp, lazy.ConstOp)):
                continue  # a view or constant no kernel reads (a free output's source)
            raise ScheduleError(
                f"outline-kernels: '{op.name}' has no group; run mark-realize and "
                "group-reduces first"
            )
        g = by_id.setdefault(gid, _Group(gid, [], []))
        g.ops.append(op)
        if realize_reason(op) is not None and op not in free:
            g.roots.append(op)
    for g in list(by_id.values()):
        if not g.roots:
            if any(realize_reason(op) is not None for op in g.ops):
                del by_id[g.gid]  # only outputs that need no kernel
                continue
            raise ScheduleError(f"outline-kernels: group {g.gid} has no realized output")
        if is_empty(g.roots):
            continue  # nothing to compute: only its (empty) buffers exist
        pos = {op: i for i, op in enumerate(g.ops)}
        ordered = sorted(g.roots, key=lambda r: (-math.prod(lazy.shape_of(r.results[0])), pos[r]))
        try:
            g.plan = plan_kernel(ordered, set(g.ops))
            if g.plan.problems:
                raise g.plan.problems[0]
        except PlanError as e:
            raise ScheduleError(
                f"outline-kernels: group {g.gid} cannot be one kernel ({e.reason}); "
                "run group-reduces to split it"
            ) from None
        g.roots = [r for r, _, _ in g.plan.roots]  # outputs in the plan's order
    return sorted(by_id.values(), key=lambda g: g.gid)


def _assign_target(root: Operation) -> SSAValue | None:
    return root.target if isinstance(root, lazy.AssignOp) else None


class _KernelBuilder:
    """Writes one planned group as a kernel.func."""

    def __init__(self, name: str, g: _Group):
        self.g = g
        assert g.plan is not None
        self.plan = g.plan
        self.sizes = g.plan.sizes
        # buffers: outputs first, then inputs in first-use order
        self.out_values = [_assign_target(r) or r.results[0] for r in g.roots]
        self.in_values: list[SSAValue] = []
        self._collect_inputs()
        outs = [buffer_of_type(v.type) for v in self.out_values]
        ins = [buffer_of_type(v.type) for v in self.in_values]
        self.func = kernel.FuncOp(name, outs, ins, self.sizes, plan=g.plan.loops)
        args = self.func.body.block.args
        self.arg_of: dict[SSAValue, BlockArgument] = {}
        for i, (v, a) in enumerate(zip(self.out_values, args[: len(outs)])):
            self.arg_of[v] = a
            a.name_hint = v.name_hint if isinstance(v, BlockArgument) and v.name_hint else f"out{i}"
        for v, a in zip(self.in_values, args[len(outs) :]):
            self.arg_of[v] = a
            if isinstance(v, BlockArgument) and v.name_hint:
                a.name_hint = v.name_hint
        self.b = Builder(InsertPoint.at_end(self.func.body.block))
        self.scalar = ScalarEmitter(self.b)
        self.emitted: dict[int, SSAValue] = {}

    def _nodes(self) -> list[Node]:
        """The planned graph, operands before users."""
        return self.plan.nodes

    def _collect_inputs(self) -> None:
        seen = set(self.out_values)
        for n in self._nodes():
            if n.kind in ("load", "gather") and n.value not in seen:
                seen.add(n.value)
                self.in_values.append(n.value)

    def build(self) -> kernel.FuncOp:
        for n in self._nodes():
            self.emitted[id(n)] = self._emit(n)
        for (_, node, at), buf in zip(self.plan.roots, self.out_values):
            view = ViewStack((at.view(self.sizes),))
            self.b.insert(kernel.StoreOp(self.arg_of[buf], view, self.emitted[id(node)]))
        origins = []
        for op in self.g.ops:
            o = origin_of(op)
            if o is not None and o not in origins:
                origins.append(o)
        ops = [
            o.name.removeprefix("lazy.")
            for o in self.g.ops
            if not isinstance(o, (lazy.ViewOp, lazy.ConstOp))
        ]
        self.func.attributes["origin"] = ArrayAttr([StringAttr(o) for o in origins])
        self.func.attributes["ops"] = ArrayAttr([StringAttr(o) for o in ops])
        self.func.attributes["reasons"] = ArrayAttr(
            [StringAttr(realize_reason(r) or "") for r in self.g.roots]
        )
        return self.func

    def _emit(self, n: Node) -> SSAValue:
        args = [self.emitted[id(a)] for a in n.args]
        match n.kind:
            case "load":
                return self.b.insert(
                    kernel.LoadOp(self.arg_of[n.value], n.stack(self.sizes))
                ).result
            case "gather":
                stride, size = n.along
                return self.b.insert(
                    kernel.GatherOp(
                        self.arg_of[n.value], n.stack(self.sizes), args[0], stride, size
                    )
                ).result
            case "const":
                assert isinstance(n.op, lazy.ConstOp)
                et = lazy.element_of(n.value)
                c = constant(self.b, n.op.scalar, et)
                if n.view is None or not any(v.mask for v in n.view.views):
                    return c
                valid = self.b.insert(kernel.ValidOp(n.stack(self.sizes))).result
                zero = constant(self.b, 0, et)
                return self.b.insert(arith.SelectOp(valid, c, zero)).result
            case "reduce":
                assert isinstance(n.op, lazy.ReduceOp)
                kind = n.op.reduce_kind
                if kind == "max" and lazy.is_unsigned(lazy.element_of(n.op.input)):
                    # unsigned max as a signed one: x ^ 0x80.. maps the unsigned order
                    # onto the signed order (and back)
                    t = args[0].type
                    flip = constant(self.b, 1 << (t.width.data - 1), t)  # type: ignore[attr-defined]
                    x = self.b.insert(arith.XOrIOp(args[0], flip)).result
                    m = self.b.insert(kernel.ReduceOp(kind, x, n.dims)).result
                    return self.b.insert(arith.XOrIOp(m, flip)).result
                return self.b.insert(kernel.ReduceOp(kind, args[0], n.dims)).result
            case "scan":
                assert isinstance(n.op, lazy.ScanOp)
                kind = n.op.scan_kind
                if kind in ("max", "min") and lazy.is_unsigned(lazy.element_of(n.op.input)):
                    # unsigned order as the signed one of x ^ 0x80.. (and back)
                    t = args[0].type
                    flip = constant(self.b, 1 << (t.width.data - 1), t)  # type: ignore[attr-defined]
                    x = self.b.insert(arith.XOrIOp(args[0], flip)).result
                    m = self.b.insert(kernel.ScanOp(kind, x, n.dims[0])).result
                    return self.b.insert(arith.XOrIOp(m, flip)).result
                return self.b.insert(kernel.ScanOp(kind, args[0], n.dims[0])).result
            case _:
                op = n.op
                assert isinstance(op, lazy.ElementwiseOp)
                return self.scalar.emit(
                    op.KIND,
                    args,
                    lazy.element_of(op.results[0]),
                    lazy.element_of(op.operands[-1]),
                )


def _name(v: SSAValue) -> str:
    return f"%{v.name_hint}" if v.name_hint else f"buffer of type {v.type}"


def _order(groups: list[_Group], producer: dict[SSAValue, _Group]) -> list[_Group]:
    """BFS topological order, with assign anti-dependences."""
    deps: dict[int, set[int]] = {g.gid: set() for g in groups}
    readers: dict[SSAValue, set[int]] = {}
    for g in groups:
        for op in g.ops:
            for v in op.operands:
                if v in producer and producer[v] is not g:
                    deps[g.gid].add(producer[v].gid)
                if isinstance(v, BlockArgument) and not (
                    isinstance(op, lazy.AssignOp) and v is op.target
                ):
                    readers.setdefault(v, set()).add(g.gid)
    for g in groups:
        for r in g.roots:
            t = _assign_target(r)
            if t is not None:
                for k in readers.get(t, ()):
                    if k != g.gid:
                        deps[g.gid].add(k)  # read the old contents first
    indeg = {gid: len(d) for gid, d in deps.items()}
    users: dict[int, list[int]] = {gid: [] for gid in deps}
    for gid, d in deps.items():
        for p in d:
            users[p].append(gid)
    by_id = {g.gid: g for g in groups}
    queue = deque(sorted(gid for gid, n in indeg.items() if n == 0))
    out: list[_Group] = []
    while queue:
        gid = queue.popleft()
        out.append(by_id[gid])
        for u in sorted(users[gid]):
            indeg[u] -= 1
            if indeg[u] == 0:
                queue.append(u)
    if len(out) != len(groups):
        stuck = [by_id[gid] for gid, n in indeg.items() if n > 0]
        targets = [_name(t) for g in stuck for r in g.roots if (t := _assign_target(r))]
        raise ScheduleError(
            "lazy.assign: no kernel order reads "
            + (", ".join(targets) or "the assigned buffer")
            + " before it is overwritten (a kernel needs both the old and the new "
            "contents); realize the value read with .contiguous() before assigning"
        )
    return out


def outline_function(module: ModuleOp, f: func.FuncOp, names: _Names) -> None:
    free = free_outputs(f, lambda op: realize_reason(op) is not None)
    groups = _groups(f, free)
    producer: dict[SSAValue, _Group] = {}
    for g in groups:
        for r in g.roots:
            producer[r.results[0]] = g
    order = _order(groups, producer)

    # the schedule: same name and arguments, memrefs instead of tensors
    block = f.body.block
    sched_block = Block(arg_types=[buffer_of_type(a.type) for a in block.args])
    for a, na in zip(block.args, sched_block.args):
        na.name_hint = a.name_hint
    buffer: dict[SSAValue, SSAValue] = dict(zip(block.args, sched_block.args))
    sb = Builder(InsertPoint.at_end(sched_block))
    kernels: list[kernel.FuncOp] = []
    kernel_of: dict[int, kernel.FuncOp] = {}
    for g in order:
        outs: list[SSAValue] = []
        for r in g.roots:
            t = _assign_target(r)
            if t is not None:
                buf = buffer[t]
            else:
                buf = sb.insert(kernel.AllocOp(buffer_of_type(r.results[0].type))).result
            buffer[r.results[0]] = buf
            outs.append(buf)
        if g.plan is None:
            continue  # an empty kernel: its outputs have no elements
        kb = _KernelBuilder(names.fresh("k"), g)
        k = kb.build()
        kernels.append(k)
        kernel_of[g.gid] = k
        ins = []
        for v in kb.in_values:
            if v not in buffer:
                raise ScheduleError(
                    f"outline-kernels: group {g.gid} reads {_name(v)}, which no group "
                    "materializes; run group-reduces"
                )
            ins.append(buffer[v])
        sb.insert(kernel.LaunchOp(k.sym_name.data, outs, ins))
    for op, fo in free.items():
        buffer[op.results[0]] = _free_buffer(sb, fo, op.results[0], buffer)
    ret = block.last_op
    assert isinstance(ret, func.ReturnOp)
    results = [buffer[v] for v in ret.operands]
    sb.insert(func.ReturnOp(*results))
    sched = func.FuncOp(
        f.sym_name.data,
        ([a.type for a in sched_block.args], [r.type for r in results]),
        Region(sched_block),
    )
    refused = not_fused_lines(f.attributes.get(NOT_FUSED), kernel_of)
    if refused:
        sched.attributes[NOT_FUSED] = ArrayAttr([StringAttr(s) for s in refused])
    for k in kernels:
        Rewriter.insert_op(k, InsertPoint.before(f))
    Rewriter.replace_op(f, sched)


def _free_buffer(sb: Builder, fo: FreeOutput, v: SSAValue, buffer: dict) -> SSAValue:
    """A result that needs no kernel: its source buffer (or a one-element
    constant buffer) read through its view, as ``memref.reinterpret_cast``."""
    et = lazy.element_of(v)
    shape = lazy.shape_of(v)
    if fo.source is None:
        src = sb.insert(kernel.ConstantOp(fo.value, kernel.buffer_type(1, et))).result  # type: ignore[arg-type]
    else:
        src = buffer[fo.source]  # an argument, or a buffer a kernel of this schedule wrote
    size = src.type.get_shape()[0]  # type: ignore[attr-defined]
    view = fo.view
    if view.offset == 0 and view.strides == contiguous_strides(shape) and math.prod(shape) == size:
        return src  # the whole buffer, as it is
    t = MemRefType(et, list(shape), StridedLayoutAttr(list(view.strides), view.offset))
    cast = memref.ReinterpretCastOp(
        src, [], [], [], [view.offset], list(shape), list(view.strides), t
    )
    return sb.insert(cast).result


def not_fused_lines(entries, kernel_of: dict[int, kernel.FuncOp]) -> list[str]:
    """group-reduces' refusals as lines about kernels: ``k0 (max) -> k1 (sub, sum):
    expand of reduce`` when k0 stores a value k1 reads, ``k1 (...) + k2 (...):
    reason`` for two kernels that were not merged."""
    if not isinstance(entries, ArrayAttr):
        return []
    out: list[str] = []
    for e in entries.data:
        if not isinstance(e, DictionaryAttr):
            continue
        d = e.data
        groups, reason = d.get("groups"), d.get("reason")
        if not isinstance(groups, DenseArrayBase) or not isinstance(reason, StringAttr):
            continue
        ks = [kernel_of.get(gid) for gid in array_ints(groups)]
        if len(ks) != 2 or ks[0] is None or ks[1] is None:
            continue  # an empty kernel is never launched
        sep = " -> " if "stored" in d else " + "
        tail = HEURISTIC if "heuristic" in d else ""
        why = _explain(reason.data, ks[0].sym_name.data, ks[1].sym_name.data)
        line = f"{_describe(ks[0])}{sep}{_describe(ks[1])}: {reason.data}{tail}{why}"
        if line not in out:
            out.append(line)
    return out


_WHY = {
    "expand of reduce": "{b} reads {a}'s reduction broadcast along a loop of its own; one "
    "kernel would redo the reduction for every copy",
    "reduce of reduce": "{b} needs {a}'s reduction in more than one place of its loops; "
    "one kernel would compute it more than once",
    "reduce read at two index maps": "{b} reads {a}'s reduction at two index maps; one "
    "kernel would compute it twice",
    "view of reduce": "{b} reads {a}'s reduction through a view no index map of one "
    "kernel expresses",
    "expand of scan": "{b} reads {a}'s scan broadcast along a loop of its own; one kernel "
    "would redo the scan for every copy",
    "view of scan": "{b} reads {a}'s scan through a view that does not walk the scanned "
    "dim forward in one loop",
    "view into scan": "{b} scans {a}'s values, read through a view that splits the "
    "scanned dim across loops",
    "scan read at two index maps": "{b} reads {a}'s scan at two index maps; one kernel "
    "would compute it twice",
    "scan outside its loop": "{b} needs {a}'s scan in more than one loop, or inside a loop "
    "nested in the one that carries its running value",
    "reads the buffer it assigns": "{b} overwrites a buffer {a} reads through another view; "
    "{a} runs first",
    "read before its assign": "{a} copies a buffer's old contents for {b}, which runs after "
    "the buffer is assigned",
}


def _explain(reason: str, a: str, b: str) -> str:
    """The reason in words about the two kernels, when there is more to say."""
    if reason in _WHY:
        return " (" + _WHY[reason].format(a=a, b=b) + ")"
    if reason.startswith("read by "):
        return f" (they cannot be one kernel: {a} computes the value once for all of them)"
    if reason.startswith("recomputed in "):
        return f" ({b} would compute {a}'s value again in each of its loops)"
    if reason.startswith("kernel over "):
        return " (a bound on kernel size, for compile time; see group-reduces' options)"
    return ""


def _describe(k: kernel.FuncOp) -> str:
    """A kernel in user terms: its name and the front-end ops it comes from."""
    for key in ("origin", "ops"):
        a = k.attributes.get(key)
        if isinstance(a, ArrayAttr) and a.data:
            return f"{k.sym_name.data} ({', '.join(s.data for s in a.data)})"  # type: ignore[attr-defined]
    return k.sym_name.data


class _Names:
    """Fresh kernel names k0, k1, ... that no symbol of the module uses."""

    def __init__(self, taken: set[str]):
        self.taken = taken
        self.next = 0

    def fresh(self, prefix: str) -> str:
        while f"{prefix}{self.next}" in self.taken:
            self.next += 1
        name = f"{prefix}{self.next}"
        self.taken.add(name)
        return name


@dataclass(frozen=True)
class OutlineKernels(ModulePass):
    """Outline each group into a kernel.func and turn the function into a schedule."""

    name = "outline-kernels"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        names = _Names({o.sym_name.data for o in op.ops if hasattr(o, "sym_name")})
        for f in list(lazy_funcs(op)):
            if any(isinstance(o, kernel.LaunchOp) for o in f.body.walk()):
                continue  # already a schedule
            outline_function(op, f, names)
