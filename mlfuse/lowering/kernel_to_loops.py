"""convert-kernel-to-loops: ``kernel.func`` -> ``func.func`` of scf loops over memrefs.

The kernel body is a dataflow program over the space; its plan says how the
space is looped over. This pass only reads the plan:

1. The plan's parallel dims become one ``scf.parallel`` (a one-iteration loop
   when there are none).
2. The body and the plan give the scope tree (:func:`mlfuse.loop_nest.schedule_scopes`):
   every store group gets ``scf.for`` loops over the dims it walks beyond the
   parallel ones, every reduce ``scf.for`` loops over its axes carrying the
   accumulator, serial loops nest in plan order, and every value is computed
   once per scope, in the outermost loop covering its domain (loop-invariant
   work is hoisted; a reduce is computed where its result is first needed).
3. The tree is emitted in order, with a worklist: each scope's values, loops
   and stores. Loads compute the view's offset with index arithmetic; masked
   views guard the access (``select(valid, offset, 0)``) and read 0 outside
   the mask. Float accumulations carry ``fastmath<reassoc>`` so LLVM may
   vectorize them.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.arith import FastMathFlagsAttr
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp, UnitAttr
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import DiagnosticException

from mlfuse.dialects import kernel
from mlfuse.dialects.lazy import is_float
from mlfuse.loop_nest import Scope, hoist, schedule_scopes
from mlfuse.passes.scalar import REDUCE_IDENTITY, combine, constant_op
from mlfuse.view import ViewStack

KERNEL_ATTR = "mlfuse.kernel"
"""Marks a function lowered from a kernel.func (the schedule is not one)."""

index = IndexType()


class _IndexOps:
    """Index arithmetic for view offsets, appended to one block."""

    def __init__(self, low: _Lowering, block: Block):
        self.low, self.block = low, block

    def _op(self, o: Operation) -> SSAValue:
        self.block.add_op(o)
        return o.results[0]

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


@dataclass(eq=False)
class _Open:
    """An emitted loop: its op, its body block, the index of each dim there."""

    op: Operation | None
    block: Block
    idx: dict[int, SSAValue]


class _Lowering:
    def __init__(self, k: kernel.FuncOp):
        self.k = k
        self.sizes = k.space_shape
        self.plan = k.loop_plan
        self.ops, self.items, self.stores, self.store_items = kernel.body_items(k)
        types = list(k.function_type.inputs.data)
        self.func = func.FuncOp(k.sym_name.data, (types, []))
        self.func.attributes[KERNEL_ATTR] = UnitAttr()
        self.entry = self.func.body.block
        for a, na in zip(k.body.block.args, self.entry.args):
            na.name_hint = a.name_hint
        self.args = dict(zip(k.body.block.args, self.entry.args))
        self.consts: dict[tuple, SSAValue] = {}
        self.open: dict[int, _Open] = {}  # scope id -> its loop
        self.val: dict[tuple[int, int], SSAValue] = {}  # (item, scope id) -> value

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

    def scalar_const(self, value, t) -> SSAValue:
        return self._entry_const(("s", value, t), lambda: constant_op(value, t))

    # -- the function -------------------------------------------------------
    def build(self) -> func.FuncOp:
        dims = list(self.plan.parallel)
        n = max(len(dims), 1)
        body = Block(arg_types=[index] * n)
        ubs = [self.index_const(self.sizes[d]) for d in dims] or [self.index_const(1)]
        par = scf.ParallelOp(
            [self.index_const(0)] * n, ubs, [self.index_const(1)] * n, Region(body)
        )
        self.entry.add_op(par)
        self.entry.add_op(func.ReturnOp())
        root = schedule_scopes(self.items, self.store_items, self.plan)
        self.open[id(root)] = _Open(par, body, dict(zip(dims, body.args)))
        self.emit(root)
        body.add_op(scf.ReduceOp())
        return self.func

    def emit(self, root: Scope) -> None:
        """Emit the scope tree depth-first, with a worklist."""
        stack: list[tuple[Scope, int]] = [(root, 0)]
        while stack:
            scope, pos = stack.pop()
            if pos == len(scope.contents):
                if scope is not root:
                    self.close_loop(scope)
                continue
            stack.append((scope, pos + 1))
            kind, what = scope.contents[pos]
            if kind == "value":
                self.emit_value(what, scope)
            elif kind == "store":
                self.emit_store(what, scope)
            else:
                self.open_loop(scope, what)
                stack.append((what, 0))

    def open_loop(self, parent: Scope, s: Scope) -> None:
        assert s.dim is not None
        outer = self.open[id(parent)]
        iter_args: list[SSAValue] = []
        if s.reduce is not None:
            t = self.ops[s.reduce].results[0].type
            if parent.reduce == s.reduce:  # the next loop of the same reduce
                iter_args = [outer.block.args[1]]
            else:
                kind = self.ops[s.reduce].reduce_kind  # type: ignore[attr-defined]
                iter_args = [self.scalar_const(REDUCE_IDENTITY[kind](t), t)]
        body = Block(arg_types=[index, *(v.type for v in iter_args)])
        loop = scf.ForOp(
            self.index_const(0),
            self.index_const(self.sizes[s.dim]),
            self.index_const(1),
            iter_args,
            body,
        )
        outer.block.add_op(loop)
        self.open[id(s)] = _Open(loop, body, {**outer.idx, s.dim: body.args[0]})

    def close_loop(self, s: Scope) -> None:
        here = self.open[id(s)]
        if s.reduce is None:
            here.block.add_op(scf.YieldOp())
            return
        r = self.ops[s.reduce]
        assert isinstance(r, kernel.ReduceOp)
        inner = next((c for kind, c in s.contents if kind == "loop" and c.reduce == s.reduce), None)
        if inner is not None:  # an outer loop of the reduce yields its inner loop's result
            result = self.open[id(inner)].op.results[0]  # type: ignore[union-attr]
        else:  # the innermost loop combines the input
            x = self.value(self.items[s.reduce].operands[0], s)
            acc = here.block.args[1]
            result = combine(Builder(InsertPoint.at_end(here.block)), r.reduce_kind, acc, x)
            if is_float(acc.type):
                # let LLVM reassociate (and so vectorize) the accumulation
                result.owner.properties["fastmath"] = FastMathFlagsAttr(["reassoc"])  # type: ignore[union-attr]
        here.block.add_op(scf.YieldOp(result))
        parent = s.parent
        assert parent is not None
        if parent.reduce != s.reduce:  # the outermost loop: the reduce's value here
            self.val[(s.reduce, id(parent))] = here.op.results[0]  # type: ignore[union-attr]

    # -- values ---------------------------------------------------------------
    def value(self, i: int, at: Scope) -> SSAValue:
        """Item ``i`` as needed in scope ``at`` (computed where the tree placed it)."""
        p = hoist(at, self.items[i].domain)
        found = self.val.get((i, id(p)))
        if found is None:
            raise DiagnosticException(
                f"convert-kernel-to-loops: @{self.k.sym_name.data}: "
                f"'{self.ops[i].name}' is used where it is not computed"
            )
        return found

    def offset(self, stack: ViewStack, s: Scope) -> tuple[SSAValue, SSAValue | None]:
        here = self.open[id(s)]
        idxs = [here.idx.get(d) or self.index_const(0) for d in range(len(self.sizes))]
        return stack.emit(_IndexOps(self, here.block), idxs)

    def emit_value(self, i: int, s: Scope) -> None:
        op = self.ops[i]
        block = self.open[id(s)].block
        match op:
            case kernel.LoadOp():
                off, valid = self.offset(op.view.stack, s)
                buf = self.args[op.buffer]
                if valid is None:
                    load = memref.LoadOp.get(buf, [off])
                    block.add_op(load)
                    out = load.results[0]
                else:
                    safe = arith.SelectOp(valid, off, self.index_const(0))
                    load = memref.LoadOp.get(buf, [safe.result])
                    zero = self.scalar_const(0, load.results[0].type)
                    sel = arith.SelectOp(valid, load.results[0], zero)
                    block.add_ops([safe, load, sel])
                    out = sel.result
            case kernel.ValidOp():
                valid = self.offset(op.view.stack, s)[1]
                out = valid if valid is not None else self.scalar_const(True, op.result.type)
            case kernel.ReduceOp():  # over no dims: the input itself
                out = self.value(self.items[i].operands[0], s)
            case arith.ConstantOp():
                out = self._entry_const(("c", op.value), lambda: op.clone())
            case _:
                mapping = {o: self.value(j, s) for o, j in zip(op.operands, self.items[i].operands)}
                new = op.clone(value_mapper=mapping)
                block.add_op(new)
                out = new.results[0]
        self.val[(i, id(s))] = out

    def emit_store(self, i: int, s: Scope) -> None:
        st = self.stores[i]
        v = self.value(self.store_items[i].value, s)
        off = self.offset(st.view.stack, s)[0]
        self.open[id(s)].block.add_op(memref.StoreOp.get(v, self.args[st.buffer], [off]))


def lower_kernel(k: kernel.FuncOp) -> func.FuncOp:
    return _Lowering(k).build()


@dataclass(frozen=True)
class ConvertKernelToLoops(ModulePass):
    """Lower every kernel.func to a func.func of scf loops over memrefs, as its plan says."""

    name = "convert-kernel-to-loops"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for k in [o for o in op.ops if isinstance(o, kernel.FuncOp)]:
            Rewriter.replace_op(k, lower_kernel(k))
