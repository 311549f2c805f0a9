"""convert-kernel-to-loops: ``kernel.func`` -> ``func.func`` of scf loops over memrefs.

The kernel body is a dataflow program over the space; this pass gives it
loops. The algorithm:

1. Domains: the dims each value varies along (a load's view, the union of
   an op's operands, a reduce's input minus its axes; a store walks its value's
   and its view's dims).
2. Loop order: the reduce domains nest (the planner guarantees it); dims of
   the smallest come first. The parallel dims are those every reduce and store
   varies along, outside every reduce: one ``scf.parallel`` over them.
3. Stores run in program order, inside ``scf.for`` loops over the dims they
   walk beyond the parallel ones (one loop per dim, consecutive stores with the
   same dims share the nest).
4. Every value is emitted once per scope, in the outermost loop whose dims
   cover its domain: loop-invariant work is hoisted, and a reduce is computed
   once where its result is first needed, as ``scf.for`` loops carrying the
   accumulator over its axes.
5. Loads compute the view's offset with index arithmetic; masked views guard
   the access (``select(valid, offset, 0)``) and read 0 outside the mask.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.arith import FastMathFlagsAttr
from xdsl.dialects.builtin import (
    IndexType,
    IntegerAttr,
    ModuleOp,
    UnitAttr,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from mlfuse.dialects import kernel
from mlfuse.dialects.lazy import is_float
from mlfuse.passes.kernel_plan import domain_order
from mlfuse.passes.scalar import REDUCE_IDENTITY, combine, constant_op
from mlfuse.view import ViewStack

KERNEL_ATTR = "mlfuse.kernel"
"""Marks a function lowered from a kernel.func (the schedule is not one)."""

index = IndexType()


@dataclass(eq=False)
class _Scope:
    """A loop body being filled: the dims bound there and the values computed."""

    parent: _Scope | None
    ctx: frozenset[int]
    idx: dict[int, SSAValue]
    block: Block
    memo: dict[SSAValue, SSAValue] = field(default_factory=dict)
    anchor: Operation | None = None  # an open child loop: hoisted ops go before it
    restore: Operation | None = None  # the parent's anchor before this loop opened

    def insert(self, op: Operation) -> Operation:
        if self.anchor is not None:
            self.block.insert_op_before(op, self.anchor)
        else:
            self.block.add_op(op)
        return op

    def chain(self) -> list[_Scope]:
        out, s = [], self
        while s is not None:
            out.append(s)
            s = s.parent
        return out[::-1]


class _IndexOps:
    """Index arithmetic for view offsets, emitted into one scope."""

    def __init__(self, low: _Lowering, scope: _Scope):
        self.low, self.s = low, scope

    def _op(self, o: Operation) -> SSAValue:
        return self.s.insert(o).results[0]

    def const(self, v: int) -> SSAValue:
        return self.low.index_const(v)

    def add(self, a, b):
        return self._op(arith.AddiOp(a, b))

    def mul(self, a, b):
        return self._op(arith.MuliOp(a, b))

    def div(self, a, b):
        return self._op(arith.DivSIOp(a, b))

    def mod(self, a, b):
        return self._op(arith.RemSIOp(a, b))

    def lt(self, a, b):
        return self._op(arith.CmpiOp(a, b, "slt"))

    def ge(self, a, b):
        return self._op(arith.CmpiOp(a, b, "sge"))

    def and_(self, a, b):
        return self._op(arith.AndIOp(a, b))


def kernel_domains(k: kernel.FuncOp) -> dict[SSAValue, frozenset[int]]:
    """Step 1: the dims each value of the kernel body varies along."""
    dom: dict[SSAValue, frozenset[int]] = {}
    n = len(k.space_shape)
    for op in k.body.block.ops:
        match op:
            case kernel.LoadOp() | kernel.ValidOp():
                top = op.view.stack.top
                dom[op.results[0]] = frozenset(d for d in range(n) if top.depends_on(d))
            case kernel.ReduceOp():
                dom[op.result] = dom[op.input] - set(op.reduce_axes)
            case kernel.StoreOp():
                pass
            case _:
                d: frozenset[int] = frozenset()
                for v in op.operands:
                    d |= dom.get(v, frozenset())
                for r in op.results:
                    dom[r] = d
    return dom


class _Lowering:
    def __init__(self, k: kernel.FuncOp):
        self.k = k
        self.sizes = k.space_shape
        self.dom = kernel_domains(k)
        ops = list(k.body.block.ops)
        self.reduces = [op for op in ops if isinstance(op, kernel.ReduceOp)]
        self.stores = [op for op in ops if isinstance(op, kernel.StoreOp)]
        self.order = domain_order(self.sizes, [self.dom[r.result] for r in self.reduces])
        doms = [self.dom[r.result] for r in self.reduces] + [
            self.store_dims(s) for s in self.stores
        ]
        par = frozenset.intersection(*doms) if doms else frozenset()
        for r in self.reduces:
            par -= set(r.reduce_axes)
        self.parallel = [d for d in self.order if d in par]
        types = list(k.function_type.inputs.data)
        self.func = func.FuncOp(k.sym_name.data, (types, []))
        self.func.attributes[KERNEL_ATTR] = UnitAttr()
        self.entry = self.func.body.block
        for a, na in zip(k.body.block.args, self.entry.args):
            na.name_hint = a.name_hint
        self.args = dict(zip(k.body.block.args, self.entry.args))
        self.consts: dict[tuple, SSAValue] = {}

    def store_dims(self, s: kernel.StoreOp) -> frozenset[int]:
        top = s.view.stack.top
        return self.dom[s.value] | {d for d in range(len(self.sizes)) if top.depends_on(d)}

    # -- constants are emitted once, at the top of the function -------------
    def _entry_const(self, key, make) -> SSAValue:
        if key not in self.consts:
            op = make()
            if self.entry.first_op is not None:
                self.entry.insert_op_before(op, self.entry.first_op)
            else:
                self.entry.add_op(op)
            self.consts[key] = op.results[0]
        return self.consts[key]

    def index_const(self, v: int) -> SSAValue:
        return self._entry_const(("index", v), lambda: arith.ConstantOp(IntegerAttr(v, index)))

    # -- the function -------------------------------------------------------
    def build(self) -> func.FuncOp:
        dims = self.parallel or []
        n = max(len(dims), 1)
        body = Block(arg_types=[index] * n)
        ubs = [self.index_const(self.sizes[d]) for d in dims] or [self.index_const(1)]
        par = scf.ParallelOp(
            [self.index_const(0)] * n, ubs, [self.index_const(1)] * n, Region(body)
        )
        self.entry.add_op(par)
        self.entry.add_op(func.ReturnOp())
        root = _Scope(None, frozenset(dims), dict(zip(dims, body.args)), body)
        self.emit_stores(root)
        body.add_op(scf.ReduceOp())
        return self.func

    def open_loop(self, s: _Scope, d: int, iter_args: list[SSAValue]) -> tuple[scf.ForOp, _Scope]:
        types = [v.type for v in iter_args]
        body = Block(arg_types=[index, *types])
        loop = scf.ForOp(
            self.index_const(0),
            self.index_const(self.sizes[d]),
            self.index_const(1),
            iter_args,
            body,
        )
        s.insert(loop)
        child = _Scope(s, s.ctx | {d}, {**s.idx, d: body.args[0]}, body, restore=s.anchor)
        s.anchor = loop
        return loop, child

    @staticmethod
    def close_loop(child: _Scope, *yielded: SSAValue) -> None:
        child.block.add_op(scf.YieldOp(*yielded))
        assert child.parent is not None
        child.parent.anchor = child.restore

    def emit_stores(self, root: _Scope) -> None:
        i = 0
        while i < len(self.stores):
            extra = [d for d in self.order if d in self.store_dims(self.stores[i]) - root.ctx]
            j = i
            while (
                j < len(self.stores)
                and [d for d in self.order if d in self.store_dims(self.stores[j]) - root.ctx]
                == extra
            ):
                j += 1
            scope, opened = root, []
            for d in extra:
                loop, scope = self.open_loop(scope, d, [])
                opened.append(scope)
            for st in self.stores[i:j]:
                v = self.value(st.value, scope)
                off = self.offset(st.view.stack, scope)[0]
                scope.insert(memref.StoreOp.get(v, self.args[st.buffer], [off]))
            for sc in reversed(opened):
                self.close_loop(sc)
            i = j

    # -- values ---------------------------------------------------------------
    def value(self, v: SSAValue, at: _Scope) -> SSAValue:
        d = self.dom.get(v, frozenset())
        target = next(s for s in at.chain() if d <= s.ctx)
        if v not in target.memo:
            target.memo[v] = self.compute(v, target)
        return target.memo[v]

    def offset(self, stack: ViewStack, s: _Scope) -> tuple[SSAValue, SSAValue | None]:
        idxs = [s.idx.get(d) or self.index_const(0) for d in range(len(self.sizes))]
        return stack.emit(_IndexOps(self, s), idxs)

    def compute(self, v: SSAValue, s: _Scope) -> SSAValue:
        op = v.owner
        assert isinstance(op, Operation)
        match op:
            case kernel.LoadOp():
                off, valid = self.offset(op.view.stack, s)
                buf = self.args[op.buffer]
                if valid is None:
                    return s.insert(memref.LoadOp.get(buf, [off])).results[0]
                safe = s.insert(arith.SelectOp(valid, off, self.index_const(0))).results[0]
                x = s.insert(memref.LoadOp.get(buf, [safe])).results[0]
                zero = self.scalar_const(0, x.type)
                return s.insert(arith.SelectOp(valid, x, zero)).results[0]
            case kernel.ValidOp():
                valid = self.offset(op.view.stack, s)[1]
                return valid if valid is not None else self.scalar_const(True, op.result.type)
            case kernel.ReduceOp():
                return self.reduce(op, s)
            case arith.ConstantOp():
                return self._entry_const(("c", op.value), lambda: op.clone())
            case _:
                mapping = {o: self.value(o, s) for o in op.operands}
                new = op.clone(value_mapper=mapping)
                s.insert(new)
                return new.results[op.results.index(v)]

    def scalar_const(self, value, t) -> SSAValue:
        return self._entry_const(("s", value, t), lambda: constant_op(value, t))

    def reduce(self, r: kernel.ReduceOp, s: _Scope) -> SSAValue:
        t = r.result.type
        init = self.scalar_const(REDUCE_IDENTITY[r.reduce_kind](t), t)
        axes = [d for d in self.order if d in r.reduce_axes]
        if not axes:
            return self.value(r.input, s)
        loops: list[tuple[scf.ForOp, _Scope]] = []
        scope, acc = s, init
        for d in axes:
            loop, scope = self.open_loop(scope, d, [acc])
            loops.append((loop, scope))
            acc = scope.block.args[1]
        x = self.value(r.input, scope)
        new = combine(_ScopeBuilder(scope), r.reduce_kind, acc, x)
        if is_float(t):
            # let LLVM reassociate (and so vectorize) the accumulation
            new.owner.properties["fastmath"] = FastMathFlagsAttr(["reassoc"])  # type: ignore[union-attr]
        for loop, body in reversed(loops):  # inner to outer, each yields its accumulator
            self.close_loop(body, new)
            new = loop.results[0]
        return new


class _ScopeBuilder:
    """The small Builder surface ``combine`` needs, inserting into a scope."""

    def __init__(self, s: _Scope):
        self.s = s

    def insert(self, op: Operation) -> Operation:
        return self.s.insert(op)


def lower_kernel(k: kernel.FuncOp) -> func.FuncOp:
    return _Lowering(k).build()


@dataclass(frozen=True)
class ConvertKernelToLoops(ModulePass):
    """Lower every kernel.func to a func.func of scf loops over memrefs."""

    name = "convert-kernel-to-loops"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for k in [o for o in op.ops if isinstance(o, kernel.FuncOp)]:
            Rewriter.replace_op(k, lower_kernel(k))
