"""gpu-map-plan: every kernel's plan mapped onto a GPU grid of blocks and threads.

The plan's parallel dims become ``block`` and ``thread`` loops (one thread per
point of them, see :mod:`mlfuse.loop_nest`); what runs inside a thread stays
``serial``. Four shapes of kernel, from the body's views:

1. **Contractions** (a sum over products of two operands that each miss one
   of two output dims, ``A[i,k] * B[k,j]``): a 16 x 16 block of threads over
   the two output dims, each thread holding an up to 8 x 8 register block of
   accumulators (``unroll`` loops, spaced 16 apart so the threads of a warp
   read and write consecutive elements of B and C), the reduce serial inside.
   The reduce loop is split into a ``stage`` loop and a serial loop of up to
   16 steps: at every stage step the block's threads copy the tiles of both
   operands those steps read (e.g. 128 x 16 of A and 16 x 128 of B) from
   global into shared memory, coalesced, and the register blocks read them
   from there: each element of A and B leaves global memory once per block,
   not once per thread that uses it. A staged register block of 8 x 8 is two
   groups of 4 consecutive elements along each dim (``unroll 2, thread 16,
   unroll 4``), read from the tiles as 4-element vectors. (The lowering
   copies aligned operands 16 bytes per thread at a time and double-buffers
   the tiles of a stage loop of several steps: see
   :meth:`mlfuse.lowering.kernel_to_loops._Lowering.stage`.)
2. **Row reductions** (a reduce axis the loads read contiguously): one block
   per output, its threads splitting the row (thread ``t`` reads elements
   ``4t .. 4t + 3, 4t + 4T ...``: coalesced, 16-byte loads where the row
   length is a multiple of 4), every reduce of the kernel combining the
   threads' partial results (``gpu.all_reduce``: warp shuffles and shared
   memory). A kernel that reads its rows more than once (softmax: a max, a
   sum, then the row again for the output) holds each thread's part of the
   row in registers where it fits (an ``unroll`` loop instead of the serial
   one: up to 16 floats a thread, with 1024 threads for rows longer than
   8192: rows of up to 16384), so every element
   leaves memory once and the exponentials are computed once; longer rows
   read it again per reduce.
   Blocks are whole warps (up to 512 threads); rows of a warp or less take a
   group of threads each (a power of two), several rows to a block of up to
   256 threads, each group combined by shuffles within its warp.
3. **Transposes** (an elementwise kernel with a load read consecutively along
   another dim than the one its stores are): 32 x 32 tiles through shared
   memory, read along one dim and written along the other.
4. **Everything else** (elementwise kernels, column reductions): threads over
   the parallel dims, the most contiguous dim of the stores innermost (a warp
   writes consecutive elements), 4 consecutive elements of it per thread
   (``thread 0:256, unroll 0:4``: LLVM merges aligned ones into 16-byte loads
   and stores), up to 256 threads a block, the rest blocks; a large
   elementwise kernel (a million vectors or more) gives each thread two such
   vectors, a warp-row apart (``unroll 0:2, thread 0:256, unroll 0:4``), so two
   16-byte loads are in flight per thread before either is used; a column
   reduction's loop runs inside each thread, reading rows coalesced.

A kernel with a scan takes the last shape: its scanned dim is never
parallel (outlining keeps it serial), so each thread runs the scan's loop,
carrying the running value, at its point of the parallel dims.

Sizes are divisors of the dims where a good one exists; a dim without (a
prime, 1000 rows of a softmax) gets whole warps and a last block (or step)
that runs past its end: those threads load clamped indices, add the identity
to reductions and store nothing (:meth:`LoopPlan.overhang`). Plans already on
a grid are left alone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from mlfuse.dialects import kernel
from mlfuse.loop_nest import (
    BLOCK,
    PARALLEL,
    SERIAL,
    STAGE,
    THREAD,
    UNROLL,
    VECTOR_LANES,
    Loop,
    LoopPlan,
    stage_tile,
)
from mlfuse.passes.plan_rewrite import rewrite_plans

WARP = 32
MAX_THREADS = 256
"""Threads of a block over parallel dims."""
MAX_ROW_THREADS = 512
"""Threads of a block splitting a row."""
TILE_THREADS = 16
"""Threads along each output dim of a contraction's block."""
MAX_REGISTER_BLOCK = 8
"""Accumulators along each output dim of a contraction's thread."""
MAX_STAGE_STEP = 16
"""Steps of the reduce loop a contraction's tiles cover in shared memory."""
MIN_STAGE_STEP = 4
"""Fewer steps per tile than this (a reduce length without a good divisor) and
a contraction reads its operands from global memory (a barrier per few
steps costs more than the tiles save)."""
TRANSPOSE_TILE = 32
"""A transposing kernel's tile: 32 x 32 elements per block."""
TRANSPOSE_ROWS = 8
"""Threads along the tile's other dim (each thread does 32 / 8 = 4 rows)."""
MIN_STAGE_THREADS = 64
"""A block of fewer threads reads its operands from global memory (a tile
element is read by as many threads as share its row or column: too few to
pay for the copy and the barriers)."""
ROW_REGISTER_BYTES = 64
"""Bytes of a row each thread may hold in registers (16 floats): a kernel that
reads its rows more than once (softmax, layernorm) keeps them there when they
fit, so each element leaves memory once."""
VECTORS_PER_THREAD = 2
"""16-byte vectors each thread of a large elementwise kernel loads: more bytes in
flight per thread than one (what a copy at HBM3's bandwidth needs)."""
MIN_GRID_THREADS = 1 << 20
"""Threads an elementwise kernel keeps when its threads take several vectors
(several waves of a GPU's resident threads: 132 x 2048 on an H100)."""
MAX_RESIDENT_THREADS = 1024
"""Threads of a block whose row stays in registers (rows up to 16384 floats)."""
SHARED_BYTES = 32 * 1024
"""Shared memory a block's tiles may take (of the 48 KiB every GPU gives a
block statically; more blocks fit on a multiprocessor with less)."""


def largest_divisor(n: int, limit: int, ok=lambda d: True) -> int:
    """The largest divisor of ``n`` that is at most ``limit`` and ``ok`` (1 if none)."""
    for d in range(min(n, limit), 1, -1):
        if n % d == 0 and ok(d):
            return d
    return 1


def row_threads(n: int) -> int:
    """Threads of a block that reduces a row of ``n`` elements: whole warps, or a
    power of two below 32 (what a block-wide reduction can combine). A row with
    no such divisor worth having (1000 = 8 x 125) gets whole warps anyway, the
    last of its steps running past the row's end (see :meth:`LoopPlan.overhang`)."""
    t = largest_divisor(n, MAX_ROW_THREADS, lambda d: d % WARP == 0)
    if t > 1:
        return t
    t = largest_divisor(n, WARP - 1, lambda d: d & (d - 1) == 0)
    if n > WARP // 2 and 2 * t < min(n, MAX_ROW_THREADS):
        return min(MAX_ROW_THREADS, -(-n // WARP) * WARP)
    return t


def row_fits(n: int, threads: int, lanes: int, width: int) -> bool:
    """Whether ``threads`` threads of ``lanes``-element vectors hold a row of ``n``
    elements of ``width`` bytes in registers (no overhang, at most
    ROW_REGISTER_BYTES a thread)."""
    steps = -(-n // (threads * lanes))
    return n % (threads * lanes) == 0 and steps * lanes * width <= ROW_REGISTER_BYTES


def grid_threads(n: int, limit: int) -> int:
    """Threads along a dim of ``n`` with at most ``limit`` of them: its largest
    divisor, or, when that would use less than half of what the dim could have
    (a prime), whole warps, the last block running past the end."""
    t = largest_divisor(n, limit)
    if 2 * t < min(n, limit) and limit >= WARP:
        return min(limit, -(-n // WARP) * WARP)
    return t


@dataclass
class _Kernel:
    k: kernel.FuncOp
    plan: LoopPlan

    def __post_init__(self):
        self.space = self.k.space_shape
        body = list(self.k.body.block.ops)
        self.loads = [op for op in body if isinstance(op, kernel.LoadOp)]
        self.stores = [op for op in body if isinstance(op, kernel.StoreOp)]
        self.reduces = [op for op in body if isinstance(op, kernel.ReduceOp)]
        self.axes = {a for r in self.reduces for a in r.reduce_axes}
        self.par = [lp.dim for lp in self.plan.loops if lp.kind == PARALLEL]
        self.serial = [lp for lp in self.plan.loops if lp.kind == SERIAL]

    def contiguity(self, d: int) -> int:
        """How far apart the stores (else the loads) put consecutive indices of
        dim ``d`` (smaller: more contiguous; dims they do not walk last)."""
        views = [s.view.stack.top for s in self.stores] or [x.view.stack.top for x in self.loads]
        strides = [abs(v.strides[d]) for v in views if v.strides[d] != 0]
        return min(strides) if strides else 1 << 62

    # -- the three shapes ---------------------------------------------------
    def contraction(self) -> LoopPlan | None:
        if len(self.reduces) != 1 or self.reduces[0].reduce_kind != "add":
            return None
        r = self.reduces[0]
        prod = r.input.owner
        if not isinstance(prod, arith.MulfOp | arith.MuliOp):
            return None
        ops = [o.owner for o in prod.operands]
        if not all(isinstance(o, kernel.LoadOp) for o in ops):
            return None
        a, b = (o.view.stack for o in ops)  # type: ignore[union-attr]
        out = [d for d in self.par if self.space[d] > 1]
        if len(out) < 2:
            return None
        n = min(out, key=self.contiguity)
        m = next(
            (
                d
                for d in sorted(out, key=self.contiguity)
                if d != n
                and (
                    (
                        a.depends_on(d)
                        and not b.depends_on(d)
                        and b.depends_on(n)
                        and not a.depends_on(n)
                    )
                    or (
                        b.depends_on(d)
                        and not a.depends_on(d)
                        and a.depends_on(n)
                        and not b.depends_on(n)
                    )
                )
            ),
            None,
        )
        if m is None:
            return None
        tile = {}
        for d in (m, n):
            size = self.space[d]
            t = largest_divisor(size, TILE_THREADS)
            if 2 * t < min(size, TILE_THREADS):  # no good divisor: overhang the last block
                t = TILE_THREADS if size > TILE_THREADS else 1 << (size - 1).bit_length()
                reg = 1
                while reg < MAX_REGISTER_BLOCK and 2 * reg * t <= size:
                    reg *= 2
            else:
                reg = largest_divisor(size // t, MAX_REGISTER_BLOCK, lambda x: x & (x - 1) == 0)
            tile[d] = (t, reg)
        blocks = [Loop(d, BLOCK, self.space[d]) for d in self.par if d not in (m, n)]
        for d in (m, n):
            t, reg = tile[d]
            blocks.append(Loop(d, BLOCK, -(-self.space[d] // (t * reg))))
        unroll = [Loop(d, UNROLL, tile[d][1]) for d in (m, n)]
        threads = [Loop(d, THREAD, tile[d][0]) for d in (m, n)]
        plan = LoopPlan((*blocks, *self.serial, *unroll, *threads)).normalized(self.space)
        if all(tile[d][1] % VECTOR_LANES == 0 for d in (m, n)):
            # from shared memory a thread reads its register block as vectors: 4
            # consecutive elements, the groups of 4 spaced a warp-row apart (so a
            # quarter warp's vectors are consecutive: no bank conflicts)
            outer = [Loop(d, UNROLL, tile[d][1] // VECTOR_LANES) for d in (m, n)]
            inner = [Loop(d, UNROLL, VECTOR_LANES) for d in (m, n)]
            vectors = LoopPlan((*blocks, *self.serial, *outer, *threads, *inner))
            staged = self.staged(vectors.normalized(self.space), ops)  # type: ignore[arg-type]
            if staged is not None:
                return staged
        return self.staged(plan, ops) or plan  # type: ignore[arg-type]

    def staged(self, plan: LoopPlan, loads: list[kernel.LoadOp]) -> LoopPlan | None:
        """``plan`` with its outermost reduce loop that both operands read along
        split into a ``stage`` loop and a serial loop of the steps one tile
        covers: the most steps (up to 16) whose tiles fit the shared memory."""
        at = next(
            (
                p
                for p, lp in enumerate(plan.loops)
                if lp.kind == SERIAL
                and lp.dim in self.axes
                and all(x.view.stack.depends_on(lp.dim) for x in loads)
            ),
            None,
        )
        threads = 1
        for p in plan.grid_loops(THREAD):
            threads *= plan.sizes(self.space)[p]
        if at is None or threads < MIN_STAGE_THREADS:
            return None
        d = plan.loops[at].dim
        trips = plan.sizes(self.space)[at]
        for step in range(min(trips, MAX_STAGE_STEP), 0, -1):
            if trips % step or step < min(MIN_STAGE_STEP, trips):
                continue
            loops = list(plan.loops)
            loops[at : at + 1] = [Loop(d, STAGE, trips // step), Loop(d, SERIAL, step)]
            new = LoopPlan(tuple(loops))
            used = 0
            for x in loads:
                stack = x.view.stack
                dims = [e for e in range(len(self.space)) if stack.depends_on(e)]
                fastest = next((e for e in dims if stack.unit_stride(e)), None)
                tile = stage_tile(new, self.space, at, dims, fastest)
                used += tile.size * _bytes(x.result.type)
            if used <= SHARED_BYTES:
                return LoopPlan(
                    tuple(Loop(lp.dim, lp.kind, lp.size or self.space[lp.dim]) for lp in new.loops)
                ).normalized(self.space)
        return None

    def row_reduction(self) -> LoopPlan | None:
        if not self.reduces:
            return None
        contiguous = [
            d
            for d in sorted(self.axes)
            if any(x.view.stack.depends_on(d) and x.view.stack.unit_stride(d) for x in self.loads)
        ]
        for d in sorted(contiguous, key=lambda d: -self.space[d]):
            n = self.space[d]
            # rows of whole vectors: each thread reads 4 consecutive elements at a time
            lanes = VECTOR_LANES if n % VECTOR_LANES == 0 and n >= VECTOR_LANES * WARP else 1
            t = row_threads(n // lanes)
            if t == 1:
                continue
            steps = -(-n // (t * lanes))
            width = max(_bytes(x.result.type) for x in self.loads if x.view.stack.depends_on(d))
            resident = steps > 1 and self.rereads(d) and row_fits(n, t, lanes, width)
            if steps > 1 and self.rereads(d) and not resident and t % WARP == 0:
                # a longer row: up to 1024 threads, if that makes it fit
                wide = largest_divisor(n // lanes, MAX_RESIDENT_THREADS, lambda x: x % WARP == 0)
                if wide > t and row_fits(n, wide, lanes, width):
                    t, steps = wide, -(-n // (wide * lanes))
                    resident = steps > 1
            serial, row = [], []
            for lp in self.serial:
                if lp.dim != d:
                    serial.append(lp)
                elif resident:  # the thread's part of the row: a register block
                    row.append(Loop(d, UNROLL, steps))  # (inside every serial loop)
                elif steps > 1 or n % (t * lanes):  # (an overhanging row keeps its loop)
                    serial.append(Loop(d, SERIAL, steps))
            serial += row  # (outside the thread loops: a warp's vectors stay consecutive)
            vector = [Loop(d, UNROLL, lanes)] if lanes > 1 else []
            if t <= WARP and self.par:
                # short rows: several per block, each a group of t threads in a warp
                p = max(self.par, key=lambda q: (self.space[q], -self.contiguity(q)))
                rows = min(MAX_THREADS // t, 1 << (self.space[p] - 1).bit_length())
                if rows > 1:
                    blocks = [Loop(q, BLOCK) for q in self.par if q != p]
                    blocks.append(Loop(p, BLOCK, -(-self.space[p] // rows)))
                    threads = (Loop(p, THREAD, rows), Loop(d, THREAD, t))
                    plan = LoopPlan((*blocks, *serial, *threads, *vector))
                    return plan.normalized(self.space)
            blocks = [Loop(p, BLOCK) for p in self.par]
            plan = LoopPlan((*blocks, *serial, Loop(d, THREAD, t), *vector))
            return plan.normalized(self.space)
        return None

    def rereads(self, d: int) -> bool:
        """Whether the kernel reads its rows along ``d`` more than once: two
        reduces over ``d`` (softmax's max and sum), or one and stores along
        ``d`` (the row again, with the reduce's result: ``x - x.max(1)``)."""
        over = sum(d in r.reduce_axes for r in self.reduces)
        return over > 1 or any(s.view.stack.depends_on(d) for s in self.stores)

    def transpose(self) -> LoopPlan | None:
        """An elementwise kernel with a load that reads consecutively along a dim
        ``a`` other than the stores' most contiguous dim ``b`` (``x.T + y``): 32 x
        32 tiles of ``(a, b)`` per block of 8 x 32 threads (4 rows each), the
        tile of such loads staged in shared memory (a ``stage`` loop of one
        step), so both the copy's reads and the threads' stores are coalesced."""
        if self.reduces or self.serial or not self.stores or len(self.par) < 2:
            return None
        b = min(self.par, key=self.contiguity)
        a = None
        for x in self.loads:
            stack = x.view.stack
            unit = [d for d in self.par if d != b and stack.unit_stride(d)]
            if unit and stack.depends_on(b) and not stack.unit_stride(b):
                a = unit[0]
                break
        if a is None or self.space[a] < TRANSPOSE_TILE or self.space[b] < TRANSPOSE_TILE:
            return None
        rows = TRANSPOSE_TILE // TRANSPOSE_ROWS
        blocks = [Loop(d, BLOCK) for d in self.par if d not in (a, b)]
        blocks += [Loop(d, BLOCK, -(-self.space[d] // TRANSPOSE_TILE)) for d in (a, b)]
        plan = LoopPlan(
            (
                *blocks,
                Loop(a, STAGE, 1),
                Loop(a, UNROLL, rows),
                Loop(a, THREAD, TRANSPOSE_ROWS),
                Loop(b, THREAD, TRANSPOSE_TILE),
            )
        )
        return plan.normalized(self.space)

    def parallel(self) -> LoopPlan:
        budget = MAX_THREADS
        threads: dict[int, int] = {}
        order = sorted(self.par, key=self.contiguity)
        # 4 consecutive elements of the stores' contiguous dim per thread: LLVM
        # makes their loads and stores 16-byte ones (ld.global.v4) where aligned
        lanes = {}
        if order and self.contiguity(order[0]) == 1:
            d = order[0]
            if self.space[d] % VECTOR_LANES == 0 and self.space[d] >= VECTOR_LANES * WARP:
                lanes[d] = VECTOR_LANES
        for d in order:
            t = grid_threads(self.space[d] // lanes.get(d, 1), budget)
            if t > 1:
                threads[d] = t
                budget //= t
            if budget < 2:
                break
        per_block = {d: threads.get(d, 1) * lanes.get(d, 1) for d in self.par}
        # a large elementwise kernel: two vectors a thread, both loads in flight
        # before either is used (a warp's vectors still consecutive, T*4 apart)
        group = []
        d = order[0] if order else None
        if d in lanes and d in threads and not self.serial:
            vectors = math.prod(self.space[e] for e in self.par) // lanes[d]
            if (
                self.space[d] % (per_block[d] * VECTORS_PER_THREAD) == 0
                and vectors // VECTORS_PER_THREAD >= MIN_GRID_THREADS
            ):
                per_block[d] *= VECTORS_PER_THREAD
                group = [Loop(d, UNROLL, VECTORS_PER_THREAD)]
        blocks = [
            Loop(d, BLOCK, -(-self.space[d] // per_block[d]))
            for d in self.par
            if self.space[d] // per_block[d] > 1
            or per_block[d] == 1
            or self.space[d] % per_block[d]  # an overhanging dim keeps its block loop
        ]
        inner = sorted(threads, key=self.contiguity, reverse=True)
        plan = LoopPlan(
            (
                *blocks,
                *self.serial,
                *group,
                *(Loop(d, THREAD, threads[d]) for d in inner),
                *(Loop(d, UNROLL, n) for d, n in lanes.items()),
            )
        )
        return plan.normalized(self.space)


def _bytes(t) -> int:
    width = getattr(t, "bitwidth", None) or t.width.data
    return max(1, width // 8)


def map_plan(k: kernel.FuncOp, plan: LoopPlan) -> LoopPlan:
    """The grid plan ``k`` runs with on a GPU."""
    if plan.on_grid:
        return plan
    if any(lp.register for lp in plan.loops):
        raise ValueError(
            f"plan {plan} has register loops; gpu-map-plan maps plans of parallel and serial loops"
        )
    if any(lp.size is not None for lp in plan.loops):
        raise ValueError(f"plan {plan} splits dims; gpu-map-plan maps whole-dim loops")
    shape = _Kernel(k, plan)
    if any(isinstance(op, kernel.ScanOp) for op in k.body.block.ops):
        # a scan runs serially inside each thread, along its dim (never parallel)
        return shape.parallel()
    return shape.contraction() or shape.row_reduction() or shape.transpose() or shape.parallel()


@dataclass(frozen=True)
class GpuMapPlan(ModulePass):
    """Map every kernel's parallel loops onto GPU blocks and threads (see the module doc)."""

    name = "gpu-map-plan"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_plans(self.name, op, map_plan)
