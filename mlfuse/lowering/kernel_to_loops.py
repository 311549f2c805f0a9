"""convert-kernel-to-loops: ``kernel.func`` -> ``func.func`` of scf loops over memrefs.

The kernel body is a dataflow program over the space; its plan says how the
space is looped over. This pass only reads the plan:

1. The plan's parallel dims become one ``scf.parallel`` (a one-iteration loop
   when there are none).
2. The body and the plan give the scope tree (:func:`mlfuse.loop_nest.schedule_scopes`):
   every store group gets ``scf.for`` loops over the dims it walks beyond the
   parallel ones, every reduce ``scf.for`` loops over its axes carrying the
   accumulator, a scan's running value is carried by the serial loop over its
   dim (after any reduce accumulators of that loop: the loop yields the new
   running value at every step), serial loops nest in plan order, and every value is computed
   once per scope, in the outermost loop covering its domain (loop-invariant
   work is hoisted; a reduce is computed where its result is first needed).
3. The tree is emitted in order, with a worklist: each scope's values, loops
   and stores. Loads compute the view's offset with index arithmetic; masked
   views guard the access (``select(valid, offset, 0)``) and read 0 outside
   the mask. Float accumulations carry ``fastmath<reassoc>`` so LLVM may
   vectorize them (sums and the products feeding them also ``contract``).
4. Register loops (``unroll``, ``vector``) are not loops: each value is a tile
   of SSA values, one per point of the unroll loops it varies along, each a
   vector when it varies along the vector loop. Views are read as vectors
   (unit stride), masked vectors (padded along the vector dim), transposed
   tiles (unit stride along a W-step unroll loop instead) or lane by lane;
   a reduce carries one accumulator per register point and combines them,
   and its lanes, when its loops end.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, func, gpu, memref, scf, vector
from xdsl.dialects.arith import FastMathFlagsAttr
from xdsl.dialects.builtin import (
    DenseArrayBase,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    UnitAttr,
    VectorType,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import DiagnosticException

from mlfuse.dialects import kernel
from mlfuse.dialects.lazy import is_float, signless
from mlfuse.loop_nest import (
    BLOCK,
    STAGE,
    THREAD,
    UNROLL,
    VECTOR,
    VECTOR_LANES,
    Scope,
    StageTile,
    hoist,
    schedule_scopes,
    stage_tile,
    stages_load,
)
from mlfuse.passes.scalar import REDUCE_IDENTITY, combine, constant_op
from mlfuse.view import ViewStack

KERNEL_ATTR = "mlfuse.kernel"
"""Marks a function lowered from a kernel.func (the schedule is not one)."""
REGISTER_POINTS_ATTR = "mlfuse.register_points"
"""Iterations of the plan's register loops, which each innermost loop iteration does."""
GRID_ATTR = "mlfuse.grid"
"""On a kernel lowered for a GPU grid: how many blocks a launch runs."""
BLOCK_ATTR = "mlfuse.block"
"""On a kernel lowered for a GPU grid: how many threads each block has."""
SHARED_SPACE = IntegerAttr(3, i64)
"""The memory space of a GPU block's shared memory (NVPTX's address space 3)."""
MAX_SHARED_BYTES = 48 * 1024
"""Shared memory every NVIDIA GPU gives a block statically."""
COPY_LANES = 4
"""Consecutive elements a thread copies into a shared tile at once, where aligned."""
LANES_ATTR = "mlfuse.lanes"
"""On a ``gpu.all_reduce``: it combines groups of this many consecutive threads
(a power of two up to 32, within a warp), not the whole block."""
ALL_REDUCE_KINDS = {"add": "add", "max": "max", "mul": "mul"}
"""Reduce kinds -> ``gpu.all_reduce`` operations (float max: NaN-propagating, as on the CPU)."""

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

    def min(self, a, b):
        return self._op(arith.MinSIOp(a, b))


@dataclass(eq=False)
class _Open:
    """An emitted loop: its op, its body block, the induction variable of each
    code loop (by plan position) open there. Its iteration arguments are the
    accumulators of the reduce it belongs to (``nred`` of them), then the
    running values of the scans it carries (``scans``: item -> position of the
    first of its block arguments; ``scan_out``: item -> the values it yields)."""

    op: Operation | None
    block: Block
    idx: dict[int, SSAValue]
    nred: int = 0
    scans: dict[int, int] = field(default_factory=dict)
    scan_out: dict[int, list[SSAValue]] = field(default_factory=dict)


@dataclass(eq=False)
class _Stage:
    """The tiles a stage loop copies: load -> (shared memory, tile, elements
    from one buffer to the next). ``double``: two buffers, the next step's tiles
    copied while this step's are read; ``pending``: the stores of the next
    step's tiles, emitted at the end of the body."""

    double: bool
    tiles: dict[int, tuple[SSAValue, StageTile, int]] = field(default_factory=dict)
    pending: list[_TileStore] = field(default_factory=list)


@dataclass(frozen=True)
class _TileStore:
    """A value (a vector of ``lanes`` elements when ``lanes`` > 1) a thread
    stores into a tile at ``where``, if ``guard`` (None: always)."""

    value: SSAValue
    mem: SSAValue
    where: SSAValue
    guard: SSAValue | None
    tile: StageTile
    lanes: int


@dataclass(frozen=True)
class _Shape:
    """How a value is held across the register loops: one SSA value per point of
    the ``unroll`` loops it varies along, each a vector when it varies along the
    vector loop."""

    loops: tuple[int, ...]
    vector: bool

    def points(self, trips: list[int]):
        return itertools.product(*(range(trips[p]) for p in self.loops))


@dataclass(eq=False)
class _Tile:
    shape: _Shape
    vals: dict[tuple[int, ...], SSAValue]

    def at(self, env: dict[int, int]) -> SSAValue:
        return self.vals[tuple(env[p] for p in self.shape.loops)]


class _Lowering:
    def __init__(self, k: kernel.FuncOp, grid: bool = False):
        self.k = k
        self.grid = grid or k.loop_plan.on_grid
        self.sizes = k.space_shape
        self.plan = plan = k.loop_plan
        self.trips = plan.sizes(self.sizes)
        self.steps = plan.strides(self.sizes)
        self.vec = plan.vector
        self.width = self.trips[self.vec] if self.vec is not None else 1
        self.ops, self.items, self.stores, self.store_items = kernel.body_items(k)
        types = [_signless_buffer(t) for t in k.function_type.inputs.data]
        self.func = func.FuncOp(k.sym_name.data, (types, []))
        self.func.attributes[KERNEL_ATTR] = UnitAttr()
        points = math.prod(t for t, lp in zip(self.trips, plan.loops) if lp.register)
        if points > 1:
            self.func.attributes[REGISTER_POINTS_ATTR] = IntegerAttr(points, i64)
        self.entry = self.func.body.block
        for a, na in zip(k.body.block.args, self.entry.args):
            na.name_hint = a.name_hint
        self.args = dict(zip(k.body.block.args, self.entry.args))
        self.consts: dict[tuple, SSAValue] = {}
        self.open: dict[int, _Open] = {}  # scope id -> its loop
        self.val: dict[tuple[int, int], _Tile] = {}  # (item, scope id) -> value
        self.splats: dict[tuple[int, int], SSAValue] = {}  # (value id, block id) -> vector
        self.contract = self._feeding_sums()
        self.over = plan.overhang(self.sizes)  # dims the grid runs past the end of
        self.tid: SSAValue | None = None  # a GPU thread's index in its block
        # load -> its tile memory, tile, stage loop, offset of this step's buffer (None: 0)
        self.staged: dict[int, tuple[SSAValue, StageTile, int, SSAValue | None]] = {}
        self.stages: dict[int, _Stage] = {}  # stage loop scope id -> its tiles

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

    # -- register loops -------------------------------------------------------
    def shape_of(self, dims: frozenset[int]) -> _Shape:
        loops = tuple(
            p for p in self.plan.register_loops(dims) if self.plan.loops[p].kind == UNROLL
        )
        vector = self.vec is not None and self.plan.loops[self.vec].dim in dims
        return _Shape(loops, vector)

    def vtype(self, t: Attribute) -> VectorType:
        return VectorType(t, [self.width])

    def splat(self, v: SSAValue, block: Block) -> SSAValue:
        """``v`` broadcast to a vector (once per block)."""
        if isinstance(v.type, VectorType):
            return v
        key = (id(v), id(block))
        if key not in self.splats:
            op = vector.BroadcastOp(v, self.vtype(v.type))
            block.add_op(op)
            self.splats[key] = op.vector
        return self.splats[key]

    def _feeding_sums(self) -> dict[int, list[str]]:
        """Float products and sums of them that only feed a sum reduce, with the
        fast-math flags they may carry: the products may contract with the adds
        into FMAs, and the adds reassociate into the accumulation (a merged
        sum of nine products becomes nine FMAs into the accumulator)."""
        out: dict[int, list[str]] = {}
        index = {op.results[0]: i for i, op in enumerate(self.ops) if op.results}
        todo = [
            op.input
            for op in self.ops
            if isinstance(op, kernel.ReduceOp) and op.reduce_kind == "add"
        ]
        while todo:
            v = todo.pop()
            op = v.owner
            if not v.has_one_use() or v not in index:
                continue
            if isinstance(op, arith.MulfOp):
                out[index[v]] = ["contract"]
            elif isinstance(op, arith.AddfOp):
                out[index[v]] = ["reassoc", "contract"]
                todo.extend(op.operands)
        return out

    # -- the function -------------------------------------------------------
    def build(self) -> func.FuncOp:
        root = schedule_scopes(self.items, self.store_items, self.plan)
        if self.grid:
            self.open[id(root)] = _Open(None, self.entry, self.grid_indices())
            self.emit(root)
            self.entry.add_op(func.ReturnOp())
            return self.func
        par = list(self.plan.parallel)
        n = max(len(par), 1)
        body = Block(arg_types=[index] * n)
        ubs = [self.index_const(self.trips[p]) for p in par] or [self.index_const(1)]
        loop = scf.ParallelOp(
            [self.index_const(0)] * n, ubs, [self.index_const(1)] * n, Region(body)
        )
        self.entry.add_op(loop)
        self.entry.add_op(func.ReturnOp())
        self.open[id(root)] = _Open(loop, body, dict(zip(par, body.args)))
        self.emit(root)
        body.add_op(scf.ReduceOp())
        return self.func

    def grid_indices(self) -> dict[int, SSAValue]:
        """The index of every grid loop, from the block and thread ids: the block
        loops share ``gpu.block_id x`` and the thread loops ``gpu.thread_id x``,
        the innermost loop of each taking the fastest-varying part."""
        out: dict[int, SSAValue] = {}
        for kind, attr, make in (
            (BLOCK, GRID_ATTR, gpu.BlockIdOp),
            (THREAD, BLOCK_ATTR, gpu.ThreadIdOp),
        ):
            loops = self.plan.grid_loops(kind)
            count = math.prod(self.trips[p] for p in loops)
            self.func.attributes[attr] = IntegerAttr(count, i64)
            if not loops:
                continue
            ident = make(gpu.DimensionAttr(gpu.DimensionEnum.X))
            self.entry.add_op(ident)
            rest = ident.result
            rest.name_hint = "bid" if kind == BLOCK else "tid"
            if kind == THREAD:
                self.tid = rest
            for n, p in enumerate(reversed(loops)):
                if n == len(loops) - 1:
                    out[p] = rest
                    break
                size = self.index_const(self.trips[p])
                rem = arith.RemUIOp(rest, size)
                quo = arith.DivUIOp(rest, size)
                self.entry.add_ops([rem, quo])
                out[p], rest = rem.result, quo.result
        return out

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

    def acc_shape(self, r: int) -> _Shape:
        """A reduce's accumulators: one per register point of its input and of
        its axes. An input that does not vary along an axis the plan vectorizes
        or unrolls still counts once per lane and point (a sum of a broadcast
        value is that many copies of it)."""
        op = self.ops[r]
        assert isinstance(op, kernel.ReduceOp)
        dims = self.items[self.items[r].operands[0]].domain | frozenset(op.reduce_axes)
        return self.shape_of(dims)

    def open_loop(self, parent: Scope, s: Scope) -> None:
        assert s.loop is not None
        outer = self.open[id(parent)]
        iter_args: list[SSAValue] = []
        if s.reduce is not None:
            if parent.reduce == s.reduce:  # the next loop of the same reduce
                iter_args = list(outer.block.args[1 : 1 + outer.nred])
            else:
                r = self.ops[s.reduce]
                t = r.results[0].type
                init = self.scalar_const(REDUCE_IDENTITY[r.reduce_kind](t), t)  # type: ignore[attr-defined]
                shape = self.acc_shape(s.reduce)
                if shape.vector:
                    init = self.splat(init, outer.block)
                iter_args = [init] * len(list(shape.points(self.trips)))
        nred = len(iter_args)
        scans: dict[int, int] = {}
        for kind, i in s.contents:
            if kind != "value" or self.items[i].scan_dim is None:
                continue
            op = self.ops[i]
            assert isinstance(op, kernel.ScanOp)
            if self.plan.loops[s.loop].dim != op.scan_dim:
                raise DiagnosticException(
                    f"convert-kernel-to-loops: @{self.k.sym_name.data}: the scan along dim "
                    f"{op.scan_dim} would be computed in the loop '{self.plan.loops[s.loop]}' "
                    f"(plan {self.plan}): it must be in the serial loop over its dim"
                )
            t = op.result.type
            init = self.scalar_const(REDUCE_IDENTITY[op.scan_kind](t), t)
            shape = self.shape_of(self.items[i].domain)
            if shape.vector:
                init = self.splat(init, outer.block)
            scans[i] = 1 + len(iter_args)
            iter_args += [init] * len(list(shape.points(self.trips)))
        body = Block(arg_types=[index, *(v.type for v in iter_args)])
        loop = scf.ForOp(
            self.index_const(0),
            self.index_const(self.trips[s.loop]),
            self.index_const(1),
            iter_args,
            body,
        )
        if self.plan.loops[s.loop].kind == STAGE:
            self.open_stage(parent, s)
        outer.block.add_op(loop)
        self.open[id(s)] = _Open(loop, body, {**outer.idx, s.loop: body.args[0]}, nred, scans)
        if self.plan.loops[s.loop].kind == STAGE:
            self.stage(s)

    def close_loop(self, s: Scope) -> None:
        here = self.open[id(s)]
        if s.loop is not None and self.plan.loops[s.loop].kind == STAGE:
            self.close_stage(s)
        running = [v for i in here.scans for v in here.scan_out[i]]
        if s.reduce is None:
            here.block.add_op(scf.YieldOp(*running))
            return
        r = self.ops[s.reduce]
        assert isinstance(r, kernel.ReduceOp)
        shape = self.acc_shape(s.reduce)
        inner = next((c for kind, c in s.contents if kind == "loop" and c.reduce == s.reduce), None)
        if inner is not None:  # an outer loop of the reduce yields its inner loop's results
            opened = self.open[id(inner)]
            results = list(opened.op.results)[: opened.nred]  # type: ignore[union-attr]
        else:  # the innermost loop combines the input
            x = self.masked(s.reduce, self.value(self.items[s.reduce].operands[0], s), s)
            b = Builder(InsertPoint.at_end(here.block))
            results = []
            for acc, point in zip(here.block.args[1 : 1 + here.nred], shape.points(self.trips)):
                v = x.at(dict(zip(shape.loops, point)))
                if shape.vector:
                    v = self.splat(v, here.block)
                results.append(self.combine(b, r.reduce_kind, acc, v))
        here.block.add_op(scf.YieldOp(*results, *running))
        parent = s.parent
        assert parent is not None
        if parent.reduce != s.reduce:  # the outermost loop: the reduce's value here
            accs = list(here.op.results)[: here.nred]  # type: ignore[union-attr]
            acc = _Tile(shape, dict(zip(shape.points(self.trips), accs)))
            block = self.open[id(parent)].block
            self.val[(s.reduce, id(parent))] = self.finish(s.reduce, acc, block)

    def combine(self, b: Builder, kind: str, acc: SSAValue, v: SSAValue) -> SSAValue:
        result = combine(b, kind, acc, v)
        if is_float(_element(acc.type)) and kind == "add":
            # let LLVM reassociate (and so vectorize) the sum, and fuse it with a product
            result.owner.properties["fastmath"] = FastMathFlagsAttr(["reassoc", "contract"])  # type: ignore[union-attr]
        elif is_float(_element(acc.type)):
            result.owner.properties["fastmath"] = FastMathFlagsAttr(["reassoc"])  # type: ignore[union-attr]
        return result

    def finish(self, r: int, acc: _Tile, block: Block) -> _Tile:
        """A reduce's result from its accumulators: combine those of the register
        points along its axes (a tree), then the lanes of a vector when the vector
        loop runs along an axis (halving shuffles)."""
        op = self.ops[r]
        assert isinstance(op, kernel.ReduceOp)
        kind = op.reduce_kind
        shape = self.shape_of(self.items[r].domain)
        b = Builder(InsertPoint.at_end(block))
        groups: dict[tuple[int, ...], list[SSAValue]] = {}
        for point, v in acc.vals.items():
            env = dict(zip(acc.shape.loops, point))
            groups.setdefault(tuple(env[p] for p in shape.loops), []).append(v)
        out: dict[tuple[int, ...], SSAValue] = {}
        for key, vals in groups.items():
            while len(vals) > 1:
                pairs = [self.combine(b, kind, x, y) for x, y in zip(vals[::2], vals[1::2])]
                vals = pairs + ([vals[-1]] if len(vals) % 2 else [])
            v = vals[0]
            if acc.shape.vector and not shape.vector:
                v = self.horizontal(b, kind, v)
            if self.across_threads(op):
                # every thread of the block (or of its group) holds a partial result
                red = gpu.AllReduceOp.from_op(
                    gpu.AllReduceOpAttr(gpu.AllReduceOpEnum(ALL_REDUCE_KINDS[kind])),
                    v,
                    UnitAttr(),
                )
                lanes = self.reduce_lanes(op)
                if lanes is not None:
                    red.attributes[LANES_ATTR] = IntegerAttr(lanes, i64)
                v = b.insert(red).result
            out[key] = v
        return _Tile(shape, out)

    def across_threads(self, op: kernel.ReduceOp) -> bool:
        """Whether a reduce runs over dims with thread loops (all of them, or the
        innermost ones: :meth:`reduce_lanes`; the plan's verifier sees to that)."""
        axes = set(op.reduce_axes)
        return any(self.plan.loops[p].dim in axes for p in self.plan.grid_loops(THREAD))

    def reduce_lanes(self, op: kernel.ReduceOp) -> int | None:
        """How many consecutive threads a reduce combines when that is not the
        whole block (None: the whole block)."""
        axes = set(op.reduce_axes)
        if all(self.plan.loops[p].dim in axes for p in self.plan.grid_loops(THREAD)):
            return None
        return self.plan.reduce_lanes(axes, self.sizes)

    def horizontal(self, b: Builder, kind: str, v: SSAValue) -> SSAValue:
        """The lanes of ``v`` combined into one scalar."""
        t = v.type
        assert isinstance(t, VectorType)
        n = t.get_shape()[0]
        while n % 2 == 0:
            h = n // 2
            ht = VectorType(t.element_type, [h])
            hi = b.insert(
                vector.ShuffleOp(
                    v, v, DenseArrayBase.from_list(i64, list(range(h, n))), result_type=ht
                )
            ).result
            lo = b.insert(
                vector.ShuffleOp(
                    v, v, DenseArrayBase.from_list(i64, list(range(h))), result_type=ht
                )
            ).result
            v, n = self.combine(b, kind, lo, hi), h
        lanes = [b.insert(vector.ExtractOp(v, [lane], t.element_type)).result for lane in range(n)]
        out = lanes[0]
        for x in lanes[1:]:
            out = self.combine(b, kind, out, x)
        return out

    # -- values ---------------------------------------------------------------
    def value(self, i: int, at: Scope) -> _Tile:
        """Item ``i`` as needed in scope ``at`` (computed where the tree placed it)."""
        p = hoist(at, self.plan.need(self.items[i].domain))
        found = self.val.get((i, id(p)))
        if found is None:
            raise DiagnosticException(
                f"convert-kernel-to-loops: @{self.k.sym_name.data}: "
                f"'{self.ops[i].name}' is used where it is not computed"
            )
        return found

    def dim_index(
        self,
        ops: _IndexOps,
        d: int,
        s: Scope,
        env: dict[int, int],
        lane: int,
        loops: range | None = None,
    ):
        """The index along dim ``d`` at register point ``env`` and vector lane
        ``lane`` (its part from the loops at positions ``loops``, when given)."""
        here = self.open[id(s)]
        fixed, terms = 0, []
        for p, lp in enumerate(self.plan.loops):
            if lp.dim != d or (loops is not None and p not in loops):
                continue
            step = self.steps[p]
            if lp.kind == VECTOR:
                fixed += lane * step
            elif lp.kind == UNROLL:
                fixed += env.get(p, 0) * step
            elif p in here.idx:
                iv = here.idx[p]
                terms.append(iv if step == 1 else ops.mul(iv, ops.const(step)))
        out = None
        for t in terms:
            out = t if out is None else ops.add(out, t)
        if out is None:
            return ops.const(fixed)
        return out if fixed == 0 else ops.add(out, ops.const(fixed))

    def offset(self, stack: ViewStack, s: Scope, env, lane: int = 0):
        ops = _IndexOps(self, self.open[id(s)].block)
        idxs = [
            self.clamp(ops, d, self.dim_index(ops, d, s, env, lane))
            if stack.depends_on(d)
            else ops.const(0)
            for d in range(len(self.sizes))
        ]
        return stack.emit(ops, idxs)

    def clamp(self, ops: _IndexOps, d: int, idx: SSAValue, lanes: int = 1) -> SSAValue:
        """An index along dim ``d`` kept inside it: points of a grid that runs past
        the end of ``d`` read its last element (and never store or count); the
        start of a group of ``lanes`` consecutive indices, its last group."""
        return ops.min(idx, ops.const(self.over[d] - lanes)) if d in self.over else idx

    def in_range(self, ops: _IndexOps, dims, s: Scope, env) -> SSAValue | None:
        """Whether the point ``env`` of scope ``s`` lies inside the dims of ``dims``
        the grid runs past (None: it always does)."""
        cond = None
        for d in sorted(set(dims) & set(self.over)):
            c = ops.lt(self.dim_index(ops, d, s, env, 0), ops.const(self.over[d]))
            cond = c if cond is None else ops.and_(cond, c)
        return cond

    def masked(self, r: int, x: _Tile, s: Scope) -> _Tile:
        """Reduce ``r``'s input with the points past the end of its axes replaced
        by the reduce's identity."""
        op = self.ops[r]
        assert isinstance(op, kernel.ReduceOp)
        if not set(op.reduce_axes) & set(self.over):
            return x
        ops = _IndexOps(self, self.open[id(s)].block)
        t = op.result.type
        ident = self.scalar_const(REDUCE_IDENTITY[op.reduce_kind](t), t)  # type: ignore[attr-defined]
        vals = {}
        for point, v in x.vals.items():
            cond = self.in_range(ops, op.reduce_axes, s, dict(zip(x.shape.loops, point)))
            vals[point] = ops._op(arith.SelectOp(cond, v, ident))
        return _Tile(x.shape, vals)

    def lanes_along(self, stack: ViewStack) -> str:
        """How a view is read across the vector loop: "vector" (consecutive
        elements, validity the same for all lanes), "masked" (consecutive
        elements, some lanes outside the view's valid range: a padded dim) or
        "lanes" (one by one)."""
        d = self.plan.loops[self.vec].dim  # type: ignore[index]
        if stack.unit_stride(d):
            return "vector"
        return "masked" if stack.masked_along(d) is not None else "lanes"

    def transposed_loop(self, stack: ViewStack, shape: _Shape) -> int | None:
        """An unroll loop of ``shape`` (one step per element, as many steps as
        lanes) along whose dim ``stack`` reads consecutive elements while it does
        not along the vector dim: the tile is read as rows and transposed."""
        if self.lanes_along(stack) != "lanes" or self.width & (self.width - 1):
            return None  # (the shuffle rounds halve a power of two)
        for p in shape.loops:
            lp = self.plan.loops[p]
            if self.trips[p] == self.width and self.steps[p] == 1 and stack.unit_stride(lp.dim):
                return p
        return None

    def transposed_load(self, op: kernel.LoadOp, s: Scope, shape: _Shape, across: int) -> _Tile:
        """A W x W tile read as W vectors along the unroll loop ``across`` (one per
        lane) and transposed in registers (log2 W rounds of W two-input shuffles)."""
        block = self.open[id(s)].block
        w = self.width
        vt = self.vtype(op.result.type)
        out: dict[tuple[int, ...], SSAValue] = {}
        others = [p for p in shape.loops if p != across]
        for rest in itertools.product(*(range(self.trips[p]) for p in others)):
            env = {**dict(zip(others, rest)), across: 0}
            rows = []
            for lane in range(w):
                off, valid = self.offset(op.view.stack, s, env, lane)
                buf = self.args[op.buffer]
                if valid is None:
                    load = vector.LoadOp(buf, [off], vt)
                    block.add_op(load)
                    rows.append(load.result)
                else:
                    safe = arith.SelectOp(valid, off, self.index_const(0))
                    load = vector.LoadOp(buf, [safe.result], vt)
                    zero = self.splat(self.scalar_const(0, op.result.type), block)
                    sel = arith.SelectOp(valid, load.result, zero)
                    block.add_ops([safe, load, sel])
                    rows.append(sel.result)
            b = w // 2
            while b >= 1:
                new = list(rows)
                for r in range(w):
                    if (r // b) % 2:
                        continue
                    lo = [k if (k // b) % 2 == 0 else w + k - b for k in range(w)]
                    hi = [k + b if (k // b) % 2 == 0 else w + k for k in range(w)]
                    for dst, mask in ((r, lo), (r + b, hi)):
                        sh = vector.ShuffleOp(
                            rows[r],
                            rows[r + b],
                            DenseArrayBase.from_list(i64, mask),
                            result_type=vt,
                        )
                        block.add_op(sh)
                        new[dst] = sh.result
                rows = new
                b //= 2
            for u in range(w):
                point = {**env, across: u}
                out[tuple(point[p] for p in shape.loops)] = rows[u]
        return _Tile(shape, out)

    def masked_load(self, op: kernel.LoadOp, s: Scope, env) -> SSAValue:
        """A vector load of a padded view: lanes outside the valid range along the
        vector dim (and every lane where another dim is out of range) read 0."""
        d = self.plan.loops[self.vec].dim  # type: ignore[index]
        block = self.open[id(s)].block
        ops = _IndexOps(self, block)
        opened = op.view.stack.masked_along(d)
        assert opened is not None and op.view.stack.top.mask is not None
        lo, hi = op.view.stack.top.mask[d]
        off, valid = self.offset(ViewStack((opened,)), s, env)
        at = self.dim_index(ops, d, s, env, 0)
        mt = VectorType(IntegerType(1), [self.width])

        def first(bound: int) -> SSAValue:  # lanes whose index along d is below bound
            n = arith.SubiOp(self.index_const(bound), at)
            m = vector.CreateMaskOp([n.result], mt)
            block.add_ops([n, m])
            return m.results[0]

        below_lo = first(lo)
        all_lanes = self.splat(self.scalar_const(True, IntegerType(1)), block)
        ops_ = [arith.XOrIOp(below_lo, all_lanes)]
        ops_.append(arith.AndIOp(first(hi), ops_[0].result))
        block.add_ops(ops_)
        mask = ops_[-1].result
        if valid is not None:
            both = arith.AndIOp(mask, self.splat(valid, block))
            block.add_op(both)
            mask = both.result
        zero = self.splat(self.scalar_const(0, op.result.type), block)
        load = vector.MaskedLoadOp(self.args[op.buffer], [off], mask, zero)
        block.add_op(load)
        return load.result

    # -- tiles staged in shared memory (GPU) ---------------------------------
    def stage_tiles(self, s: Scope) -> dict[int, StageTile]:
        """The tiles stage loop ``s`` copies: one for every load computed inside
        it that :func:`stages_load` picks."""
        at = s.loop
        assert at is not None
        if self.tid is None or self.vec is not None:
            raise DiagnosticException(
                f"convert-kernel-to-loops: @{self.k.sym_name.data}: the stage loop of plan "
                f"{self.plan} needs thread loops and no vector loop"
            )
        tiles: dict[int, StageTile] = {}
        todo = [s]
        while todo:
            scope = todo.pop()
            for kind, what in scope.contents:
                if kind == "loop":
                    todo.append(what)
                elif kind == "value" and isinstance(self.ops[what], kernel.LoadOp):
                    stack = self.ops[what].view.stack  # type: ignore[attr-defined]
                    dims = [d for d in range(len(self.sizes)) if stack.depends_on(d)]
                    fastest = next((d for d in dims if stack.unit_stride(d)), None)
                    if stages_load(self.plan, at, dims, fastest):
                        tiles[what] = stage_tile(self.plan, self.sizes, at, dims, fastest)
        return tiles

    def open_stage(self, parent: Scope, s: Scope) -> None:
        """Before stage loop ``s`` opens: shared memory for its tiles. A loop of
        several steps double-buffers them when two copies fit (``_Stage``): the
        first step's tiles are copied here, then a barrier."""
        at = s.loop
        assert at is not None
        tiles = self.stage_tiles(s)
        nbytes = {i: max(1, _bits(self.ops[i].results[0].type) // 8) for i in tiles}
        # each buffer a multiple of 16 bytes and of 4 elements, so the second stays
        # aligned for the copy's vectors and the tile's (4 lanes of any width)
        unit = {i: max(VECTOR_LANES, COPY_LANES, 16 // nbytes[i]) for i in tiles}
        stride = {i: -(-tile.size // unit[i]) * unit[i] for i, tile in tiles.items()}
        total = sum(stride[i] * nbytes[i] for i in tiles)
        double = self.trips[at] > 1 and 2 * total <= MAX_SHARED_BYTES
        if total > MAX_SHARED_BYTES:
            raise DiagnosticException(
                f"convert-kernel-to-loops: @{self.k.sym_name.data}: the tiles of plan "
                f"{self.plan} take {total} bytes of shared memory; a block has "
                f"{MAX_SHARED_BYTES} (stage fewer steps)"
            )
        stage = _Stage(double=double)
        for i, tile in sorted(tiles.items()):
            t = self.ops[i].results[0].type
            size = 2 * stride[i] if double else tile.size
            alloca = memref.AllocaOp.get(t, 16, [size], memory_space=SHARED_SPACE)
            self.entry.insert_op_before(alloca, self.entry.first_op)  # type: ignore[arg-type]
            alloca.memref.name_hint = f"tile{len(self.staged) + len(stage.tiles)}"
            stage.tiles[i] = (alloca.memref, tile, stride[i])
        self.stages[id(s)] = stage
        if double and tiles:
            block = self.open[id(parent)].block
            ops = _IndexOps(self, block)
            for i, (mem, tile, _) in stage.tiles.items():
                origin = self._tile_origin(ops, i, parent, range(at))
                self._emit_stores(block, self._copy_tile(ops, i, tile, mem, origin, None))
            block.add_op(gpu.BarrierOp())

    def stage(self, s: Scope) -> None:
        """At the top of stage loop ``s``'s body: copy the tiles of this step to
        shared memory (all threads of the block, consecutive threads taking
        consecutive elements, or groups of them, of the copy order), then a
        barrier; the loads inside read the tiles from there. Double-buffered,
        the body instead reads the next step's tiles into registers (the last
        step reads its own again), computes from the buffer this step's tiles
        lie in, and stores the registers to the other buffer at its end
        (:meth:`close_stage`): one barrier a step, and the global reads overlap
        the step's arithmetic."""
        at = s.loop
        assert at is not None
        stage = self.stages[id(s)]
        here = self.open[id(s)]
        ops = _IndexOps(self, here.block)
        iv = here.idx[at]
        read = write = None
        if stage.double:
            nxt = ops.add(iv, ops.const(1))
            step = ops.min(nxt, ops.const(self.trips[at] - 1))
            read, write = ops.mod(iv, ops.const(2)), ops.mod(nxt, ops.const(2))
        d_at = self.plan.loops[at].dim
        for i, (mem, tile, stride) in stage.tiles.items():
            if not stage.double:
                origin = self._tile_origin(ops, i, s, range(at + 1))
                self._emit_stores(here.block, self._copy_tile(ops, i, tile, mem, origin, None))
                self.staged[i] = (mem, tile, at, None)
                continue
            origin = self._tile_origin(ops, i, s, range(at))
            if d_at in origin:
                shift = ops.mul(step, ops.const(self.steps[at]))
                origin[d_at] = ops.add(origin[d_at], shift)
            base = ops.mul(write, ops.const(stride))
            stage.pending += self._copy_tile(ops, i, tile, mem, origin, base)
            self.staged[i] = (mem, tile, at, ops.mul(read, ops.const(stride)))
        if stage.tiles and not stage.double:
            here.block.add_op(gpu.BarrierOp())

    def close_stage(self, s: Scope) -> None:
        """At the end of stage loop ``s``'s body: a double-buffered loop stores
        the next step's tiles, then every thread is done with this step's tiles
        (and has written the next ones) before the next step begins."""
        stage = self.stages[id(s)]
        here = self.open[id(s)]
        self._emit_stores(here.block, stage.pending)
        stage.pending = []
        if stage.tiles and self.trips[s.loop] > 1:  # type: ignore[index]
            here.block.add_op(gpu.BarrierOp())

    def _tile_origin(self, ops: _IndexOps, i: int, s: Scope, loops: range) -> dict[int, SSAValue]:
        """Where load ``i``'s tile starts along each dim it reads: the part of the
        index that the loops at positions ``loops`` (open in scope ``s``) give."""
        stack = self.ops[i].view.stack  # type: ignore[attr-defined]
        return {
            d: self.dim_index(ops, d, s, {}, 0, loops)
            for d in range(len(self.sizes))
            if stack.depends_on(d)
        }

    def _copy_tile(
        self, ops: _IndexOps, i: int, tile: StageTile, mem: SSAValue, origin, base
    ) -> list[_TileStore]:
        """Read the part of load ``i``'s tile starting at ``origin`` (an index
        per dim the load reads) that each thread copies, into registers; the stores that
        put it in tile memory ``mem`` at offset ``base`` (None: 0), still to
        emit. A last round that not every thread takes part in reads a clamped
        position and stores under a guard."""
        op = self.ops[i]
        assert isinstance(op, kernel.LoadOp)
        stack = op.view.stack
        dims = [d for d in range(len(self.sizes)) if stack.depends_on(d)]
        t = op.result.type
        threads = self.func.attributes[BLOCK_ATTR].value.data  # type: ignore[attr-defined]
        fast = tile.copy_order[-1] if tile.copy_order else None
        lanes = self._copy_lanes(stack, tile, fast, t)
        groups = tile.points // lanes
        buf = self.args[op.buffer]
        stores: list[_TileStore] = []
        for j in range(-(-groups // threads)):
            e = self.tid if j == 0 else ops.add(self.tid, ops.const(j * threads))
            assert e is not None
            guard = None
            if (j + 1) * threads > groups:
                guard = ops.lt(e, ops.const(groups))
                e = ops.min(e, ops.const(groups - 1))
            local: dict[int, SSAValue] = {}
            rest = e
            for n, d in enumerate(reversed(tile.copy_order)):
                ext = tile.extents[tile.dims.index(d)] // (lanes if n == 0 else 1)
                last = n == len(tile.copy_order) - 1
                local[d] = rest if last else ops.mod(rest, ops.const(ext))
                if not last:
                    rest = ops.div(rest, ops.const(ext))
                if n == 0 and lanes > 1:
                    local[d] = ops.mul(local[d], ops.const(lanes))
            idxs = []
            for d in range(len(self.sizes)):
                if d not in dims:
                    idxs.append(ops.const(0))
                elif d in local:
                    at_d = ops.add(origin[d], local[d])
                    idxs.append(self.clamp(ops, d, at_d, lanes if d == fast else 1))
                else:
                    idxs.append(self.clamp(ops, d, origin[d]))
            off, valid = stack.emit(ops, idxs)
            where = self._tile_offset(ops, tile, local)
            if base is not None:
                where = ops.add(where, base)
            if lanes > 1:
                vt = VectorType(t, [lanes])
                load = vector.LoadOp(buf, [off], vt)
                load.attributes["alignment"] = IntegerAttr(lanes * _bits(t) // 8, i64)
                x = ops._op(load)
            elif valid is None:
                x = ops._op(memref.LoadOp.get(buf, [off]))
            else:
                safe = ops._op(arith.SelectOp(valid, off, self.index_const(0)))
                y = ops._op(memref.LoadOp.get(buf, [safe]))
                x = ops._op(arith.SelectOp(valid, y, self.scalar_const(0, t)))
            stores.append(_TileStore(x, mem, where, guard, tile, lanes))
        return stores

    def _emit_stores(self, block: Block, stores: list[_TileStore]) -> None:
        """Append tile stores to ``block``: a vector whose lanes lie consecutive
        and aligned in the tile as one ``vector.store``, else lane by lane."""
        for st in stores:
            into, guard = block, None
            if st.guard is not None:
                into = Block()
                guard = scf.IfOp(st.guard, [], Region(into))
            ops = _IndexOps(self, into)
            tile = st.tile
            if st.lanes == 1:
                into.add_op(memref.StoreOp.get(st.value, st.mem, [st.where]))
            else:
                k = tile.dims.index(tile.copy_order[-1])
                whole = k == len(tile.dims) - 1
                if whole and all(x % st.lanes == 0 for x in tile.strides[:-1]):
                    into.add_op(vector.StoreOp(st.value, st.mem, [st.where]))
                else:
                    t = st.value.type.element_type  # type: ignore[attr-defined]
                    for lane in range(st.lanes):
                        at = st.where
                        if lane:
                            at = ops.add(st.where, ops.const(lane * tile.strides[k]))
                        x = ops._op(vector.ExtractOp(st.value, [lane], t))
                        into.add_op(memref.StoreOp.get(x, st.mem, [at]))
            if guard is not None:
                into.add_op(scf.YieldOp())
                block.add_op(guard)

    def _copy_lanes(self, stack: ViewStack, tile: StageTile, fast: int | None, t) -> int:
        """How many consecutive elements along the copy's fastest dim ``fast``
        each thread copies at once: ``COPY_LANES`` (one 16-byte global load for
        float32) when every group of them is provably aligned in its buffer (one
        unmasked view, unit stride along ``fast`` and strides and offset that are
        multiples of the lanes elsewhere, a tile extent and an overhanging size
        that are multiples of them: the tile's origin along ``fast`` is then a
        multiple too), else 1."""
        if fast is None or _bits(t) < 8 or len(stack.views) != 1:
            return 1
        lanes = min(COPY_LANES, max(1, 16 // (_bits(t) // 8)))
        if lanes == 1:
            return 1
        v = stack.top
        if v.mask is not None or v.strides[fast] != 1 or v.offset % lanes:
            return 1
        if any(st % lanes for d, st in enumerate(v.strides) if d != fast):
            return 1
        if tile.extents[tile.dims.index(fast)] % lanes:
            return 1
        if fast in self.over and self.over[fast] % lanes:
            return 1
        return lanes

    def _tile_offset(self, ops: _IndexOps, tile: StageTile, local: dict[int, SSAValue]):
        out = None
        for d, stride in zip(tile.dims, tile.strides):
            term = local[d] if stride == 1 else ops.mul(local[d], ops.const(stride))
            out = term if out is None else ops.add(out, term)
        return out if out is not None else ops.const(0)

    def shared_loads(self, i: int, s: Scope, shape: _Shape) -> _Tile:
        """Load ``i`` at every register point, from the tile its stage loop
        copied: ``tile.lanes`` consecutive points of the innermost row's unroll
        loop at a time (one ``vector.load``, aligned as the tile's rows are)."""
        tile_mem, tile, at, base = self.staged[i]
        ops = _IndexOps(self, self.open[id(s)].block)
        inside = range(at + 1, len(self.plan.loops))
        across = None
        if tile.lanes > 1:
            row = [p for p in inside if self.plan.loops[p].dim == tile.dims[-1]]
            across = row[-1] if row and row[-1] in shape.loops else None
        out: dict[tuple[int, ...], SSAValue] = {}
        for point in shape.points(self.trips):
            env = dict(zip(shape.loops, point))
            if across is not None and env[across] % tile.lanes:
                continue  # read with the first lane of its vector
            local = {d: self.dim_index(ops, d, s, env, 0, inside) for d in tile.dims}
            at_ = self._tile_offset(ops, tile, local)
            if base is not None:
                at_ = ops.add(at_, base)
            if across is None:
                out[point] = ops._op(memref.LoadOp.get(tile_mem, [at_]))
                continue
            t = self.ops[i].results[0].type
            vec = ops._op(vector.LoadOp(tile_mem, [at_], VectorType(t, [tile.lanes])))
            for lane in range(tile.lanes):
                lane_env = {**env, across: env[across] + lane}
                key = tuple(lane_env[p] for p in shape.loops)
                out[key] = ops._op(vector.ExtractOp(vec, [lane], t))
        return _Tile(shape, out)

    def gather(self, block: Block, scalars: list[SSAValue]) -> SSAValue:
        """A vector of the given lane values."""
        out = self.splat(scalars[0], block) if len(set(scalars)) == 1 else None
        if out is not None:
            return out
        vec = vector.BroadcastOp(scalars[0], self.vtype(scalars[0].type))
        block.add_op(vec)
        out = vec.vector
        for lane, x in enumerate(scalars[1:], 1):
            ins = vector.InsertOp(x, out, [lane])
            block.add_op(ins)
            out = ins.result
        return out

    def load(self, op: kernel.LoadOp, s: Scope, env, lane: int = 0) -> SSAValue:
        off, valid = self.offset(op.view.stack, s, env, lane)
        buf = self.args[op.buffer]
        block = self.open[id(s)].block
        if valid is None:
            load = memref.LoadOp.get(buf, [off])
            block.add_op(load)
            return load.results[0]
        safe = arith.SelectOp(valid, off, self.index_const(0))
        load = memref.LoadOp.get(buf, [safe.result])
        zero = self.scalar_const(0, load.results[0].type)
        sel = arith.SelectOp(valid, load.results[0], zero)
        block.add_ops([safe, load, sel])
        return sel.result

    def gather_load(
        self, op: kernel.GatherOp, s: Scope, env, lane: int, idx: SSAValue, vt=None
    ) -> SSAValue:
        """One element of a gather (a vector of ``vt`` from there, when the index
        is the same for every lane and the view reads consecutive elements): the
        view's offset plus the index, clamped to ``[0, size)``, times the stride."""
        block = self.open[id(s)].block
        off, valid = self.offset(op.view.stack, s, env, lane)
        assert valid is None  # the verifier refuses masked gather views
        if isinstance(idx.type, VectorType):
            x = vector.ExtractOp(idx, [lane], idx.type.element_type)
            block.add_op(x)
            idx = x.result
        ops = [arith.IndexCastOp(idx, index)]
        ops.append(arith.MaxSIOp(ops[-1].result, self.index_const(0)))
        ops.append(arith.MinSIOp(ops[-1].result, self.index_const(op.gather_size - 1)))
        if op.gather_stride != 1:
            ops.append(arith.MuliOp(ops[-1].result, self.index_const(op.gather_stride)))
        ops.append(arith.AddiOp(off, ops[-1].result))
        block.add_ops(ops)
        at = [ops[-1].results[0]]
        load = (
            memref.LoadOp.get(self.args[op.buffer], at)
            if vt is None
            else vector.LoadOp(self.args[op.buffer], at, vt)
        )
        block.add_op(load)
        return load.results[0]

    def emit_value(self, i: int, s: Scope) -> None:
        op = self.ops[i]
        block = self.open[id(s)].block
        shape = self.shape_of(self.items[i].domain)
        out: dict[tuple[int, ...], SSAValue] = {}
        if isinstance(op, kernel.ReduceOp):  # over register loops (or no dims) only
            x = self.masked(i, self.value(self.items[i].operands[0], s), s)
            self.val[(i, id(s))] = self.finish(i, x, block)
            return
        if isinstance(op, kernel.ScanOp):  # one step: the running value combined with x
            here = self.open[id(s)]
            if i not in here.scans:
                raise DiagnosticException(
                    f"convert-kernel-to-loops: @{self.k.sym_name.data}: the scan along dim "
                    f"{op.scan_dim} is not in the serial loop over its dim (plan {self.plan})"
                )
            x = self.value(self.items[i].operands[0], s)
            b = Builder(InsertPoint.at_end(block))
            for n, point in enumerate(shape.points(self.trips)):
                v = x.at(dict(zip(shape.loops, point)))
                if shape.vector:
                    v = self.splat(v, block)
                out[point] = combine(b, op.scan_kind, block.args[here.scans[i] + n], v)
            here.scan_out[i] = list(out.values())
            self.val[(i, id(s))] = _Tile(shape, out)
            return
        if isinstance(op, kernel.GatherOp):  # a scalar load per lane, or a row as a vector
            idx = self.value(self.items[i].operands[0], s)
            rows = shape.vector and not idx.shape.vector
            rows = rows and self.lanes_along(op.view.stack) == "vector"
            for point in shape.points(self.trips):
                env = dict(zip(shape.loops, point))
                if rows:
                    vt = self.vtype(op.result.type)
                    out[point] = self.gather_load(op, s, env, 0, idx.at(env), vt)
                    continue
                lanes = [
                    self.gather_load(op, s, env, lane, idx.at(env))
                    for lane in range(self.width if shape.vector else 1)
                ]
                out[point] = self.gather(block, lanes) if shape.vector else lanes[0]
            self.val[(i, id(s))] = _Tile(shape, out)
            return
        if i in self.staged:
            self.val[(i, id(s))] = self.shared_loads(i, s, shape)
            return
        if isinstance(op, kernel.LoadOp) and shape.vector:
            across = self.transposed_loop(op.view.stack, shape)
            if across is not None:
                self.val[(i, id(s))] = self.transposed_load(op, s, shape, across)
                return
        how = (
            self.lanes_along(op.view.stack)
            if isinstance(op, kernel.LoadOp) and shape.vector
            else None
        )
        for point in shape.points(self.trips):
            env = dict(zip(shape.loops, point))
            match op:
                case kernel.LoadOp() if how == "vector":
                    off, valid = self.offset(op.view.stack, s, env)
                    buf = self.args[op.buffer]
                    vt = self.vtype(op.result.type)
                    if valid is None:
                        vl = vector.LoadOp(buf, [off], vt)
                        block.add_op(vl)
                        out[point] = vl.result
                    else:
                        safe = arith.SelectOp(valid, off, self.index_const(0))
                        vl = vector.LoadOp(buf, [safe.result], vt)
                        block.add_ops([safe, vl])
                        zero = self.splat(self.scalar_const(0, op.result.type), block)
                        sel = arith.SelectOp(valid, vl.result, zero)
                        block.add_op(sel)
                        out[point] = sel.result
                case kernel.LoadOp() if how == "masked":
                    out[point] = self.masked_load(op, s, env)
                case kernel.LoadOp():
                    if shape.vector:
                        lanes = [self.load(op, s, env, lane) for lane in range(self.width)]
                        out[point] = self.gather(block, lanes)
                    else:
                        out[point] = self.load(op, s, env)
                case kernel.ValidOp():
                    lanes = self.width if shape.vector else 1
                    valid = [self.valid_at(op, s, env, ln) for ln in range(lanes)]
                    out[point] = self.gather(block, valid) if shape.vector else valid[0]
                case arith.ConstantOp():
                    out[point] = self._entry_const(("c", op.value), lambda: op.clone())
                case _:
                    args = [
                        self.value(self.items[i].operands[self._operand_pos(i, o)], s).at(env)
                        for o in op.operands
                    ]
                    props = dict(op.properties)
                    if i in self.contract:
                        props["fastmath"] = FastMathFlagsAttr(self.contract[i])
                    if not shape.vector:
                        out[point] = self.rebuild(op, args, props, block, None)
                    elif vectorizable(op, self.width):
                        vargs = [self.splat(v, block) for v in args]
                        out[point] = self.rebuild(op, vargs, props, block, self.width)
                    else:  # no vector form in xDSL (arith.cmpf): lane by lane
                        lanes = []
                        for lane in range(self.width):
                            scalars = []
                            for v in args:
                                if isinstance(v.type, VectorType):
                                    x = vector.ExtractOp(v, [lane], v.type.element_type)
                                    block.add_op(x)
                                    v = x.result
                                scalars.append(v)
                            lanes.append(self.rebuild(op, scalars, props, block, None))
                        out[point] = self.gather(block, lanes)
        self.val[(i, id(s))] = _Tile(shape, out)

    def rebuild(self, op: Operation, args, props, block: Block, width: int | None) -> SSAValue:
        """``op`` on ``args``, on scalars or on vectors of ``width`` lanes."""
        new = type(op).create(
            operands=args,
            result_types=[r.type if width is None else self.vtype(r.type) for r in op.results],
            properties=props,
            attributes=dict(op.attributes),
        )
        block.add_op(new)
        return new.results[0]

    def valid_at(self, op: kernel.ValidOp, s: Scope, env, lane: int) -> SSAValue:
        v = self.offset(op.view.stack, s, env, lane)[1]
        return v if v is not None else self.scalar_const(True, op.result.type)

    def _operand_pos(self, i: int, o: SSAValue) -> int:
        """Which of item ``i``'s operands ``o`` is."""
        defining = [self.ops[j].results[0] for j in self.items[i].operands]
        return defining.index(o)

    def emit_store(self, i: int, s: Scope) -> None:
        st = self.stores[i]
        item = self.store_items[i]
        shape = self.shape_of(item.dims)
        block = self.open[id(s)].block
        value = self.value(item.value, s)
        buf = self.args[st.buffer]
        into, guard = self.store_guard(item.dims, s)
        for point in shape.points(self.trips):
            env = dict(zip(shape.loops, point))
            v = value.at(env)
            if not shape.vector:
                off = self.offset(st.view.stack, s, env)[0]
                inside = self.in_range(_IndexOps(self, block), item.dims, s, env)
                if inside is None:
                    into.add_op(memref.StoreOp.get(v, buf, [off]))
                    continue
                then = Block([memref.StoreOp.get(v, buf, [off]), scf.YieldOp()])
                into.add_op(scf.IfOp(inside, [], Region(then)))
                continue
            v = self.splat(v, block)
            if self.lanes_along(st.view.stack) == "vector" and st.view.stack.top.mask is None:
                off = self.offset(st.view.stack, s, env)[0]
                into.add_op(vector.StoreOp(v, buf, [off]))
                continue
            for lane in range(self.width):
                x = vector.ExtractOp(v, [lane], _element(v.type))
                block.add_op(x)
                off = self.offset(st.view.stack, s, env, lane)[0]
                into.add_op(memref.StoreOp.get(x.result, buf, [off]))
        if guard is not None:
            into.add_op(scf.YieldOp())
            block.add_op(guard)

    def store_guard(self, dims: frozenset[int], s: Scope) -> tuple[Block, scf.IfOp | None]:
        """Where a store's ops go: the scope's block, or, when thread loops run along
        dims the store does not walk (every thread holds the same value), the body
        of an ``scf.if`` that lets the first thread along them store alone."""
        here = self.open[id(s)]
        others = [p for p in self.plan.grid_loops(THREAD) if self.plan.loops[p].dim not in dims]
        if not others:
            return here.block, None
        ops = _IndexOps(self, here.block)
        cond = None
        for p in others:
            first = ops._op(arith.CmpiOp(here.idx[p], self.index_const(0), "eq"))
            cond = first if cond is None else ops.and_(cond, first)
        then = Block()
        return then, scf.IfOp(cond, [], Region(then))


_VECTOR_FORM: dict[tuple, bool] = {}


def vectorizable(op: Operation, lanes: int) -> bool:
    """Whether an arith/math op of a kernel body verifies on vectors of ``lanes``
    (xDSL 0.74's compares, for one, only produce i1)."""
    if isinstance(
        op,
        (
            kernel.LoadOp,
            kernel.GatherOp,
            kernel.StoreOp,
            kernel.ReduceOp,
            kernel.ScanOp,
            kernel.ValidOp,
        ),
    ):
        return True
    if isinstance(op, arith.ConstantOp):
        return True
    key = (
        op.name,
        tuple(o.type for o in op.operands),
        tuple(r.type for r in op.results),
        lanes,
    )
    if key not in _VECTOR_FORM:
        block = Block(arg_types=[VectorType(o.type, [lanes]) for o in op.operands])
        try:
            trial = type(op).create(
                operands=list(block.args),
                result_types=[VectorType(r.type, [lanes]) for r in op.results],
                properties=dict(op.properties),
                attributes=dict(op.attributes),
            )
            trial.verify_()
            _VECTOR_FORM[key] = True
        except Exception:  # noqa: BLE001 - any verifier complaint means no
            _VECTOR_FORM[key] = False
    return _VECTOR_FORM[key]


def _signless_buffer(t: Attribute) -> Attribute:
    """A ``ui8`` buffer is an ``i8`` one below the kernel dialect (memref.load
    gives what kernel.load gave: the signless value)."""
    if isinstance(t, MemRefType) and signless(t.element_type) != t.element_type:
        return MemRefType(signless(t.element_type), t.get_shape())
    return t


def _bits(t: Attribute) -> int:
    width = getattr(t, "bitwidth", None)
    return width if width is not None else t.width.data  # type: ignore[attr-defined]


def _element(t: Attribute) -> Attribute:
    return t.element_type if isinstance(t, VectorType) else t


def lower_kernel(k: kernel.FuncOp, grid: bool = False) -> func.FuncOp:
    return _Lowering(k, grid).build()


@dataclass(frozen=True)
class ConvertKernelToLoops(ModulePass):
    """Lower every kernel.func to a func.func of scf loops over memrefs, as its plan says.

    ``grid=true``: every kernel runs on a GPU grid, also one whose plan has no
    block or thread loops (a rank-0 space: one block of one thread)."""

    name = "convert-kernel-to-loops"
    grid: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for k in [o for o in op.ops if isinstance(o, kernel.FuncOp)]:
            if self.grid and k.loop_plan.parallel:
                raise DiagnosticException(
                    f"convert-kernel-to-loops: @{k.sym_name.data}: plan {k.loop_plan} has "
                    "parallel loops; map them onto the grid first (gpu-map-plan)"
                )
            Rewriter.replace_op(k, lower_kernel(k, self.grid))
