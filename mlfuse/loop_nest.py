"""Loop plans and loop nests: where each value of a kernel is computed.

A kernel's body is a dataflow program evaluated over an iteration space. Its
*loop plan* (:class:`LoopPlan`, printed on every ``kernel.func``) says which
space dims (or pieces of dims) run as one parallel loop (outermost), in which
order the serial loops nest, and which run as register loops (unrolled into a
register block, or the lanes of a vector) innermost. Scopes are code loops,
identified by their position in the plan; register loops are inside every
scope. A plan and a body determine a tree of *scopes* (loop bodies):

* the root scope is the parallel loop's body; its context is the parallel dims;
* each group of consecutive stores gets a nest of serial loops over the dims it
  walks beyond the parallel ones;
* each reduce, wherever it is computed, gets a nest of serial loops over its
  axes, carrying the accumulator;
* a scan gets no loop of its own: it is computed in the serial loop over its
  dim, which carries its running value (that loop must be the innermost code
  loop over the scan's domain, so the running value is one register per
  point of the register loops, and the scan is computed once per point).

A value requested from scope ``S`` is computed in the outermost scope on the
path from the root to ``S`` whose context covers the value's *domain* (the dims
it varies along): loop-invariant work is hoisted, and a reduce whose result is
needed in one loop is computed before that loop. This one placement rule serves
the kernel planner (:func:`analyze`: is any reduction computed twice, is cheap
work recomputed in too many loops?) and the lowering (:func:`schedule_scopes`:
the loops to emit, and what goes in each). Both walk the body with worklists,
never recursion, so kernels of any size are fine.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

PARALLEL = "parallel"
SERIAL = "serial"
UNROLL = "unroll"
VECTOR = "vector"
BLOCK = "block"
THREAD = "thread"
STAGE = "stage"
LOOP_KINDS = (PARALLEL, SERIAL, STAGE, UNROLL, VECTOR, BLOCK, THREAD)
REGISTER_KINDS = (UNROLL, VECTOR)
"""Register loops are not loops in the code: an ``unroll`` loop's iterations
become separate values (a register block), a ``vector`` loop's the lanes of
one vector. They come last in a plan, innermost (before any thread loops; on a
GPU grid, unroll and thread loops may come in any order: an unroll loop after
a thread loop makes each thread's register block consecutive elements)."""
GRID_KINDS = (BLOCK, THREAD)
"""Grid loops are not loops in the code either: a GPU launches one thread per
point of them. ``block`` loops (outermost) enumerate the blocks of the grid,
``thread`` loops (innermost, but for unroll loops that may follow them:
consecutive threads take consecutive indices, so warps read memory coalesced)
the threads of a block. Every thread runs the
code loops of the plan; a reduce over a dim with a thread loop combines the
partial results of the block's threads."""
SERIAL_KINDS = (SERIAL, STAGE)
"""A ``stage`` loop is a serial loop of a GPU plan that first copies, at every
step, the tile each load inside it reads along the loop's dim (the points of
the loops inside it, over the load's dims) from global into the block's shared
memory, all threads together, and reads it from there (see
:func:`stage_tile`)."""


@dataclass(frozen=True)
class Loop:
    """One loop of a plan: a space dim (or a piece of it) and how it runs.

    ``size`` is the loop's trip count when the dim is split into several loops
    (tiled): the loops over one dim multiply to its size, outer loops stepping
    by the product of the inner ones. ``None``: the loop covers the whole dim.
    """

    dim: int
    kind: str
    size: int | None = None

    @property
    def register(self) -> bool:
        return self.kind in REGISTER_KINDS

    @property
    def grid(self) -> bool:
        return self.kind in GRID_KINDS

    @property
    def code(self) -> bool:
        """A loop in the code (parallel or serial), not a register or grid loop."""
        return self.kind in (PARALLEL, *SERIAL_KINDS)

    def __str__(self) -> str:
        return f"{self.kind} {self.dim}" + ("" if self.size is None else f":{self.size}")


@dataclass(frozen=True)
class LoopPlan:
    """The loops of a kernel, outermost first: ``[parallel 0, serial 1]``.

    Every space dim has at least one loop; a dim with several loops is tiled
    (``serial 1:256, vector 1:16`` walks a dim of 4096 in 256 steps of a
    16-lane vector). Parallel loops come first and form one parallel loop
    nest, serial loops next, register loops (``unroll``, ``vector``) last; the
    serial order decides how the loops of a store nest or of a reduce over
    several axes nest.
    """

    loops: tuple[Loop, ...]

    @staticmethod
    def of(parallel: Sequence[int], serial: Sequence[int]) -> LoopPlan:
        return LoopPlan(
            tuple(Loop(d, PARALLEL) for d in parallel) + tuple(Loop(d, SERIAL) for d in serial)
        )

    @property
    def parallel(self) -> tuple[int, ...]:
        """Positions of the parallel loops."""
        return tuple(i for i, lp in enumerate(self.loops) if lp.kind == PARALLEL)

    @property
    def parallel_dims(self) -> frozenset[int]:
        return frozenset(lp.dim for lp in self.loops if lp.kind == PARALLEL)

    @property
    def order(self) -> tuple[int, ...]:
        return tuple(lp.dim for lp in self.loops)

    def ordered(self, dims) -> tuple[int, ...]:
        """Positions of the code loops (not register or grid loops) over ``dims``, in plan order."""
        return tuple(i for i, lp in enumerate(self.loops) if lp.dim in dims and lp.code)

    def need(self, dims) -> frozenset[int]:
        """The code loops a value varying along ``dims`` must be inside."""
        return frozenset(self.ordered(dims))

    def register_loops(self, dims) -> tuple[int, ...]:
        """Positions of the register loops over ``dims``."""
        return tuple(i for i, lp in enumerate(self.loops) if lp.dim in dims and lp.register)

    def grid_loops(self, kind: str) -> tuple[int, ...]:
        """Positions of the ``block`` or ``thread`` loops, outermost first."""
        return tuple(i for i, lp in enumerate(self.loops) if lp.kind == kind)

    @property
    def on_grid(self) -> bool:
        """Whether the plan runs on a GPU grid (has block or thread loops)."""
        return any(lp.grid for lp in self.loops)

    @property
    def vector(self) -> int | None:
        """Position of the vector loop, if any."""
        return next((i for i, lp in enumerate(self.loops) if lp.kind == VECTOR), None)

    def sizes(self, space: Sequence[int]) -> list[int]:
        """Trip count of each loop in a space of shape ``space``."""
        return [space[lp.dim] if lp.size is None else lp.size for lp in self.loops]

    def strides(self, space: Sequence[int]) -> list[int]:
        """How far one step of each loop moves along its dim."""
        sizes = self.sizes(space)
        out = [1] * len(self.loops)
        inner: dict[int, int] = {}
        for i in range(len(self.loops) - 1, -1, -1):
            d = self.loops[i].dim
            out[i] = inner.get(d, 1)
            inner[d] = out[i] * sizes[i]
        return out

    def __str__(self) -> str:
        return "[" + ", ".join(str(lp) for lp in self.loops) + "]"

    def overhang(self, space: Sequence[int]) -> dict[int, int]:
        """Dims whose loops run past their end (``dim -> size``): on a GPU grid the
        outermost loop over a dim may take ``ceil(size / inner)`` steps, so the
        last block (or serial step) has points past the end. Those points load
        clamped indices, count as the identity in reductions and store nothing."""
        trips = self.sizes(space)
        total: dict[int, int] = {}
        for t, lp in zip(trips, self.loops):
            total[lp.dim] = total.get(lp.dim, 1) * t
        return {d: space[d] for d, n in total.items() if n > space[d]}

    # -- rewrites (each returns a new plan; check it with problems()) ---------
    def innermost_code_loop(self, dim: int) -> int | None:
        """Position of the innermost code loop (not a register loop) over ``dim``."""
        found = [i for i in self.ordered({dim})]
        return found[-1] if found else None

    def split_off(self, dim: int, size: int, kind: str, space: Sequence[int]) -> LoopPlan:
        """Split ``size`` iterations off the innermost code loop over ``dim`` into a
        register loop of ``kind`` (an unroll loop goes after the other unroll
        loops, a vector loop last). A loop left with one iteration is kept."""
        if kind not in REGISTER_KINDS:
            raise ValueError(f"split_off: '{kind}' is not a register loop kind")
        at = self.innermost_code_loop(dim)
        if at is None:
            raise ValueError(f"dim {dim} has no code loop left to split")
        trips = self.sizes(space)[at]
        if size < 1 or trips % size:
            raise ValueError(
                f"cannot split {size} iterations off loop '{self.loops[at]}' ({trips} iterations)"
            )
        loops = list(self.loops)
        lp = loops[at]
        loops[at] = Loop(lp.dim, lp.kind, trips // size)
        new = Loop(dim, kind, size)
        # register loops go after the code loops, before any thread loops; a vector
        # loop innermost among them
        ends = [
            i
            for i, x in enumerate(loops)
            if x.kind == THREAD or (x.kind == VECTOR and kind != VECTOR)
        ]
        if kind == VECTOR and self.vector is not None:
            raise ValueError("the plan already has a vector loop")
        loops.insert(ends[0] if ends else len(loops), new)
        return LoopPlan(tuple(loops)).normalized(space)

    def interchange(self, order: Sequence[int]) -> LoopPlan:
        """The code loops reordered: ``order`` lists their current positions in the
        new order (register loops stay innermost, in place)."""
        code = [i for i, lp in enumerate(self.loops) if lp.code]
        if sorted(order) != code:
            raise ValueError(f"order {list(order)} is not a permutation of the code loops {code}")
        rest = [i for i, lp in enumerate(self.loops) if not lp.code]
        lead = [i for i in rest if self.loops[i].kind == BLOCK]
        tail = [i for i in rest if self.loops[i].kind != BLOCK]
        return LoopPlan(tuple(self.loops[i] for i in [*lead, *order, *tail]))

    def normalized(self, space: Sequence[int]) -> LoopPlan:
        """Sizes written only where a dim has several loops."""
        count: dict[int, int] = {}
        for lp in self.loops:
            count[lp.dim] = count.get(lp.dim, 0) + 1
        trips = self.sizes(space)
        return LoopPlan(
            tuple(
                Loop(lp.dim, lp.kind, trips[i] if count[lp.dim] > 1 else None)
                for i, lp in enumerate(self.loops)
            )
        )

    def problems(
        self,
        rank: int,
        reduce_dims: Sequence[Sequence[int]] = (),
        space: Sequence[int] | None = None,
        scan_dims: Sequence[int] = (),
    ) -> str | None:
        """Why this plan is not a plan for a space of ``rank`` dims (of shape
        ``space``, when given) whose reduces run over ``reduce_dims`` and whose
        scans along ``scan_dims`` (None if it is)."""
        for lp in self.loops:
            if lp.kind not in LOOP_KINDS:
                return f"unknown loop kind '{lp.kind}' (known: {', '.join(LOOP_KINDS)})"
            if not 0 <= lp.dim < rank:
                return f"dim {lp.dim} is out of range for a rank-{rank} space"
            if lp.size is not None and lp.size < 1:
                return f"loop '{lp}' has no iterations"
        dims = [lp.dim for lp in self.loops]
        missing = sorted(set(range(rank)) - set(dims))
        if missing:
            return f"dims {missing} of the space have no loop"
        for d in range(rank):
            pieces = [lp for lp in self.loops if lp.dim == d]
            if len(pieces) > 1 and any(lp.size is None for lp in pieces):
                return f"dim {d} has several loops: each needs a size ('kind {d}:size')"
            if space is not None and len(pieces) > 1:
                total = math.prod(lp.size for lp in pieces)  # type: ignore[misc]
                inner = total // pieces[0].size  # type: ignore[operator]
                overhang = (
                    total > space[d] and self.on_grid and pieces[0].size == -(-space[d] // inner)
                )
                if total != space[d] and not overhang:
                    return (
                        f"the loops over dim {d} run {total} iterations, but the dim has {space[d]}"
                        + (
                            f" (on a grid the outermost may overhang it: "
                            f"'{pieces[0].kind} {d}:{-(-space[d] // inner)}')"
                            if self.on_grid and total > space[d]
                            else ""
                        )
                    )
        # on a grid, unroll loops may also come after thread loops: a thread's
        # register block is then consecutive elements, not elements spaced apart
        rank_of = {BLOCK: 0, PARALLEL: 0, SERIAL: 1, STAGE: 1, UNROLL: 2, VECTOR: 2}
        rank_of[THREAD] = (
            2 if self.on_grid and not any(lp.kind == VECTOR for lp in self.loops) else 3
        )
        kinds = [rank_of[lp.kind] for lp in self.loops]
        if kinds != sorted(kinds):
            return (
                "loops must be block/parallel, then serial, then unroll/vector (register), "
                "then thread loops (on a grid, thread and unroll loops in any order)"
            )
        if self.on_grid and self.parallel:
            return "a plan runs either on a GPU grid (block/thread loops) or parallel loops"
        stages = [lp for lp in self.loops if lp.kind == STAGE]
        if stages and not self.grid_loops(THREAD):
            return "a stage loop copies tiles to a GPU block's shared memory: it needs thread loops"
        if len(stages) > 1:
            return "a plan has at most one stage loop"
        vec = [i for i, lp in enumerate(self.loops) if lp.kind == VECTOR]
        if len(vec) > 1:
            return "a plan has at most one vector loop"
        if vec and vec[0] != len(self.loops) - 1 - len(self.grid_loops(THREAD)):
            return "the vector loop must be the innermost register loop"
        for d in sorted(set(scan_dims)):
            pieces = [lp for lp in self.loops if lp.dim == d]
            if len(pieces) != 1 or pieces[0].kind != SERIAL:
                return (
                    f"dim {d} is scanned, so it needs exactly one serial loop (a scan carries "
                    f"its running value from one step to the next), not "
                    f"[{', '.join(str(lp) for lp in pieces)}]"
                )
        par = self.parallel_dims | {lp.dim for lp in self.loops if lp.kind == BLOCK}
        threads = {lp.dim for lp in self.loops if lp.kind == THREAD}
        for axes in reduce_dims:
            if par & set(axes):
                return (
                    f"dim {min(par & set(axes))} is parallel but a reduce runs over it (its "
                    "partial results would race)"
                )
            if threads & set(axes) and not threads <= set(axes):
                lanes = self.reduce_lanes(axes, space)
                if lanes is None:
                    return (
                        f"a reduce over dims {sorted(axes)} combines the threads of a block, so "
                        f"every thread loop must run over its dims (they run over "
                        f"{sorted(threads)}), or those over its dims must be the innermost and "
                        f"together a power of two up to {WARP_SIZE} threads (a part of a warp)"
                    )
        return None

    def reduce_lanes(self, axes, space: Sequence[int] | None = None) -> int | None:
        """How many consecutive threads a reduce over ``axes`` combines when the
        block also has threads over other dims (each group of them is one
        output's, within a warp): the thread loops over ``axes`` must be the
        innermost ones and run a power of two up to 32 threads (None if they do
        not; 0 when ``space`` is not given and the count is unknown)."""
        grid = self.grid_loops(THREAD)
        inside = [p for p in grid if self.loops[p].dim in axes]
        if not inside or grid[len(grid) - len(inside) :] != tuple(inside):
            return None
        if space is None:
            return 0
        trips = self.sizes(space)
        n = math.prod(trips[p] for p in inside)
        return n if n <= WARP_SIZE and n & (n - 1) == 0 else None


def domain_order(rank: int, reduce_domains: Sequence[frozenset[int]]) -> list[int]:
    """Dims of the smallest reduce domain first, then of the next one, ...: the
    loops of a result come outside the loops of the reduces inside it."""
    order: list[int] = []
    for dom in sorted(set(reduce_domains), key=lambda d: (len(d), sorted(d))):
        order.extend(sorted(d for d in dom if d not in order))
    order.extend(d for d in range(rank) if d not in order)
    return order


def default_plan(
    rank: int,
    reduces: Sequence[tuple[frozenset[int], Sequence[int]]],
    store_dims: Sequence[frozenset[int]],
    scans: Sequence[tuple[frozenset[int], int]] = (),
) -> LoopPlan:
    """The plan a kernel gets from outlining: parallel over the dims every
    reduce result, every scan and every store varies along (minus reduce axes
    and scanned dims), serial loops in :func:`domain_order`, each scanned dim moved inside
    the other serial loops of its scan's domain. ``reduces``: (result domain,
    axes) each; ``scans``: (domain, scanned dim) each."""
    order = domain_order(rank, [dom for dom, _ in reduces])
    doms = [dom for dom, _ in reduces] + [dom for dom, _ in scans] + list(store_dims)
    par = frozenset.intersection(*doms) if doms else frozenset()
    for _, axes in reduces:
        par -= set(axes)
    par -= {d for _, d in scans}
    serial = [d for d in order if d not in par]
    for dom, d in scans:
        if d not in serial:
            continue
        serial.remove(d)
        last = max((serial.index(o) for o in dom if o in serial), default=-1)
        serial.insert(last + 1, d)
    return LoopPlan.of([d for d in order if d in par], serial)


WARP_SIZE = 32
"""Threads of an NVIDIA warp (they exchange values with shuffles)."""
VECTOR_LANES = 4
"""Elements of the widest shared-memory read (``ld.shared.v4.f32``: 16 bytes)."""
BANKS = 32
"""Shared-memory banks of an NVIDIA GPU (one 4-byte word each, a warp's access
served in one pass when its lanes hit distinct banks)."""


@dataclass(frozen=True)
class StageTile:
    """The tile a ``stage`` loop copies for one load, in shared memory.

    ``dims`` are the load's dims with loops inside the stage loop, outermost
    first in shared memory, ``extents`` how many points those loops cover
    along each, ``strides`` where consecutive indices of each lie (in
    elements; the innermost row may be padded so a copy that writes it
    transposed does not hit one bank many times), ``copy_order`` the order the
    copy walks the dims (the last fastest: the dim the load reads
    consecutively, so consecutive threads read consecutive global memory).
    ``lanes``: how many consecutive elements of the innermost row a thread reads
    at once (4 when its innermost loop there is an unroll loop of a multiple of
    4 steps: a thread's register block of consecutive elements, read as
    vectors; rows are then padded to a multiple of 4, so the vectors align).
    """

    dims: tuple[int, ...]
    extents: tuple[int, ...]
    strides: tuple[int, ...]
    copy_order: tuple[int, ...]
    lanes: int = 1

    @property
    def points(self) -> int:
        return math.prod(self.extents)

    @property
    def size(self) -> int:
        """Elements of shared memory the tile takes (with its padding)."""
        return self.strides[0] * self.extents[0] if self.dims else 1


def stages_load(plan: LoopPlan, stage: int, dims, contiguous: int | None) -> bool:
    """Whether stage loop ``stage`` copies the tile of a load over ``dims`` that
    reads dim ``contiguous`` consecutively (None: none) to shared memory: when
    the load varies along the stage loop's dim and the tile pays, because
    threads of the block share its elements (it misses a thread dim: a
    contraction's operand) or because the copy reads it coalesced where the
    threads would not (it is consecutive along a dim other than the innermost
    thread loop's: a transpose)."""
    if plan.loops[stage].dim not in dims:
        return False
    threads = [plan.loops[p].dim for p in plan.grid_loops(THREAD)]
    if not threads:
        return False
    shared = any(d not in dims for d in threads)
    return shared or contiguous != threads[-1]


def stage_tile(
    plan: LoopPlan,
    space: Sequence[int],
    stage: int,
    dims: Sequence[int],
    fastest: int | None = None,
) -> StageTile:
    """The tile stage loop ``stage`` copies for a load over ``dims`` that reads
    dim ``fastest`` consecutively (see :class:`StageTile`). In shared memory,
    the dim whose loops inside the stage are innermost in the plan (a thread
    loop: the one a warp's threads step along) is stored innermost, so the
    warp reads consecutive words."""
    trips = plan.sizes(space)
    inner: dict[int, list[int]] = {}
    for p in range(stage + 1, len(plan.loops)):
        lp = plan.loops[p]
        if lp.dim in dims and lp.kind not in (BLOCK, PARALLEL):
            inner.setdefault(lp.dim, []).append(p)
    layout = sorted(inner, key=lambda d: max(inner[d]))
    extent = {d: math.prod(trips[p] for p in inner[d]) for d in layout}
    copy = [d for d in layout if d != fastest] + ([fastest] if fastest in extent else [])
    strides = [1] * len(layout)
    lanes = 1
    if layout:
        last = plan.loops[max(inner[layout[-1]])]
        if last.kind == UNROLL and trips[max(inner[layout[-1]])] % VECTOR_LANES == 0:
            lanes = VECTOR_LANES
        row = extent[layout[-1]]
        if len(layout) > 1 and copy[-1] != layout[-1] and row >= BANKS:
            # consecutive threads write down a column: rows a bank-friendly distance
            # apart (short rows are left alone: a warp's writes span several anyway)
            spread = max(1, BANKS // extent[copy[-1]])
            spread = -(-spread // lanes) * lanes  # (vector reads need aligned rows)
            row += (spread - row) % BANKS
        step = row
        for i in range(len(layout) - 2, -1, -1):
            strides[i] = step
            step *= extent[layout[i]]
    return StageTile(
        tuple(layout), tuple(extent[d] for d in layout), tuple(strides), tuple(copy), lanes
    )


def parallel_extent(plan: LoopPlan, sizes: Sequence[int]) -> int:
    trips = plan.sizes(sizes)
    return math.prod(trips[i] for i in plan.parallel)


# ---------------------------------------------------------------------------
# the body, abstractly
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Item:
    """One value of a kernel body. Items are numbered in a topological order
    (operands first)."""

    domain: frozenset[int]
    operands: tuple[int, ...] = ()
    reduce_dims: tuple[int, ...] | None = None  # a reduce: the dims it runs over
    computes: bool = True  # False for loads and constants (free to recompute)
    scan_dim: int | None = None  # a scan: the dim it runs along (in its domain)


@dataclass(frozen=True)
class StoreItem:
    """A store of item ``value``, walking ``dims``."""

    value: int
    dims: frozenset[int]


@dataclass(eq=False)
class Scope:
    """A loop body: the root (the parallel loop's body) or the serial loop at
    position ``loop`` of the plan. ``ctx``: the positions of the loops open here."""

    parent: Scope | None
    loop: int | None
    ctx: frozenset[int]
    reduce: int | None = None  # the reduce whose accumulator this loop carries
    contents: list[tuple] = field(default_factory=list)
    elastic: bool = False  # the root of a kernel not planned yet: its loops will fit

    def chain(self) -> list[Scope]:
        out, s = [], self
        while s is not None:
            out.append(s)
            s = s.parent
        return out[::-1]


def hoist(s: Scope, need: frozenset[int]) -> Scope:
    """The outermost scope on the path from the root to ``s`` inside the loops ``need``.
    A scope whose own loop is needed is never left: when a reduce runs over a loop
    already open outside it (its result is wanted inside that loop), its input
    varies with the reduce's own loop, not the outer one of the same position."""
    while s.parent is not None and need <= s.parent.ctx and s.loop not in need:
        s = s.parent
    return s


def open_nest(
    parent: Scope, loops: Sequence[int], reduce: int | None = None, elastic: bool = False
) -> list[Scope]:
    """The serial loops at positions ``loops`` (in that order) inside ``parent``."""
    out: list[Scope] = []
    s = parent
    for i in loops:
        s = Scope(s, i, s.ctx | {i}, reduce, elastic=elastic)
        out.append(s)
    return out


def store_groups(
    plan: LoopPlan, stores: Sequence[StoreItem]
) -> list[tuple[list[int], tuple[int, ...]]]:
    """Consecutive stores walking the same loops beyond the parallel ones, with those loops."""
    par = set(plan.parallel)
    groups: list[tuple[list[int], tuple[int, ...]]] = []
    for i, st in enumerate(stores):
        extra = tuple(i for i in plan.ordered(st.dims) if i not in par)
        if groups and groups[-1][1] == extra:
            groups[-1][0].append(i)
        else:
            groups.append(([i], extra))
    return groups


def _distinct(scopes) -> list[Scope]:
    return list({id(s): s for s in scopes}.values())


# ---------------------------------------------------------------------------
# the planner's question: is anything computed too often?
# ---------------------------------------------------------------------------


@dataclass
class Violation:
    """Item ``item`` would be computed more often than allowed."""

    item: int
    kind: str  # "reduce": a reduction computed twice or redundantly; "scan": a scan
    # not in the innermost loop of its domain over its dim, or computed twice; "budget"
    placements: list[Scope]


@dataclass
class Analysis:
    placements: list[list[Scope]]
    violations: list[Violation]


def analyze(
    items: Sequence[Item],
    stores: Sequence[StoreItem],
    plan: LoopPlan,
    budget: int | None = None,
    max_ops: int | None = None,
    max_loops: int | None = None,
) -> Analysis:
    """Place every item (users before operands) and report what is computed too often.

    A reduce must be computed exactly once, in a scope whose dims are exactly
    its domain (more dims would repeat the reduction along them). A scan
    likewise, and that scope must be the serial loop over its dim (the loop
    that carries its running value). With a
    ``budget``, a computed elementwise item may be placed in at most that many
    scopes of one kernel; with ``max_ops``, a kernel computes at most that many
    ops (counting each placement), and with ``max_loops`` it has at most that
    many reduce loop nests. An item that breaks a rule is reported and
    from then on treated as materialized: its operands are placed as in a
    kernel of its own (guessed by :func:`_kernel_of`), so the violations further
    up are about what remains after cutting, and one analysis finds the cuts of
    a long chain at every level.
    """
    root = Scope(None, None, frozenset(plan.parallel))
    requests: list[list[Scope]] = [[] for _ in items]
    for idxs, extra in store_groups(plan, stores):
        nest = open_nest(root, extra)
        inner = nest[-1] if nest else root
        for i in idxs:
            requests[stores[i].value].append(inner)
    placements: list[list[Scope]] = [[] for _ in items]
    violations: list[Violation] = []
    size: dict[int, int] = {}  # kernel root -> ops placed in it
    loops: dict[int, int] = {}  # kernel root -> reduce nests placed in it
    for i in range(len(items) - 1, -1, -1):
        it = items[i]
        need = plan.need(it.domain)
        where = _distinct(hoist(s, need) for s in requests[i])
        if not where:
            continue
        if it.scan_dim is not None:
            if len(where) > 1 or any(
                not p.elastic and not scan_fits(plan, it, p, need) for p in where
            ):
                violations.append(Violation(i, "scan", where))
                where = [Scope(None, None, need, elastic=True)]  # as if materialized
            for p in where:
                for o in it.operands:
                    requests[o].append(p)
        elif it.reduce_dims is not None:
            if len(where) > 1 or any(p.ctx != need and not p.elastic for p in where):
                violations.append(Violation(i, "reduce", where))
                where = [Scope(None, None, need, elastic=True)]  # as if materialized
            for p in where:
                k = id(p.chain()[0])
                loops[k] = loops.get(k, 0) + 1
                nest = open_nest(p, plan.ordered(it.reduce_dims), reduce=i)
                inner = nest[-1] if nest else p
                for o in it.operands:
                    requests[o].append(inner)
        else:
            if budget is not None and it.computes and _over_budget(where, budget):
                violations.append(Violation(i, "budget", where))
                where = [_kernel_of(it, plan)]
            elif max_ops is not None and it.computes and _over_size(where, size, max_ops):
                violations.append(Violation(i, "size", where))
                where = [_kernel_of(it, plan)]
            elif max_loops is not None and it.computes and _over_size(where, loops, max_loops):
                # the kernel already has its share of reduce loops: the next value
                # starts another one (cutting at a reduce would cut one at a time)
                violations.append(Violation(i, "loops", where))
                where = [_kernel_of(it, plan)]
            for p in where:
                for o in it.operands:
                    requests[o].append(p)
        if it.computes:
            for p in where:
                k = id(p.chain()[0])
                size[k] = size.get(k, 0) + 1
        placements[i] = where
    return Analysis(placements, violations)


def scan_fits(plan: LoopPlan, it: Item, p: Scope, need: frozenset[int]) -> bool:
    """Whether scope ``p`` can compute scan ``it``: its loops are exactly the
    scan's domain and it is the (one, serial) loop over the scanned dim."""
    return (
        p.ctx == need
        and p.loop is not None
        and plan.loops[p.loop].dim == it.scan_dim
        and plan.loops[p.loop].kind == SERIAL
    )


def scan_problems(items: Sequence[Item], stores: Sequence[StoreItem], plan: LoopPlan) -> str | None:
    """Why a kernel's scans cannot run with ``plan`` (None if they can): each must
    be computed once, in the serial loop over its dim, innermost in its domain."""
    if all(it.scan_dim is None for it in items):
        return None
    found = analyze(items, stores, plan)
    for v in found.violations:
        if v.kind == "scan":
            d = items[v.item].scan_dim
            return (
                f"the scan along dim {d} (value {v.item}) must be computed once, in the "
                f"serial loop over dim {d}, inside every other code loop over the dims it "
                "varies along"
            )
    return None


def _kernel_of(it: Item, plan: LoopPlan) -> Scope:
    """Where an item found to need materializing is computed in a kernel of its
    own: guessed from this kernel's plan (its parallel dims, then a store nest
    over the rest). The guess is elastic: no reduce placed in it counts as
    repeated along dims it does not vary along; only placements are counted.
    The kernel is planned for real in the next round."""
    need = plan.need(it.domain)
    root = Scope(None, None, need & frozenset(plan.parallel), elastic=True)
    nest = open_nest(root, [i for i in plan.ordered(it.domain) if i not in root.ctx], elastic=True)
    return nest[-1] if nest else root


def _over_size(where: list[Scope], size: dict[int, int], max_ops: int) -> bool:
    """Whether placing an item in ``where`` takes a kernel past ``max_ops`` ops."""
    return any(size.get(id(p.chain()[0]), 0) >= max_ops for p in where)


def _over_budget(where: list[Scope], budget: int) -> bool:
    per_kernel: dict[int, int] = {}
    for p in where:
        k = id(p.chain()[0])
        per_kernel[k] = per_kernel.get(k, 0) + 1
    return max(per_kernel.values()) > budget


# ---------------------------------------------------------------------------
# the lowering's question: which loops, and what goes in each?
# ---------------------------------------------------------------------------


def schedule_scopes(items: Sequence[Item], stores: Sequence[StoreItem], plan: LoopPlan) -> Scope:
    """The scope tree of a kernel, with each scope's contents in emission order.

    Contents are ``("value", item)``, ``("loop", child)`` and ``("store", i)``
    entries. Stores are handled in program order; each pulls in what it needs,
    operands before users, so a value computed in an outer scope comes before
    the loop that uses it. The stores of a group follow every value of the
    group: a kernel reads a buffer it also writes before writing it.
    Reduce entries are ``("loop", child)`` whose child (and its descendants)
    carry ``reduce = item``; the innermost one combines the reduce's input.
    """
    root = Scope(None, None, frozenset(plan.parallel))
    done: set[tuple[int, int]] = set()
    for idxs, extra in store_groups(plan, stores):
        nest = open_nest(root, extra)
        inner = nest[-1] if nest else root
        for i in idxs:
            _place_tree(items, plan, stores[i].value, inner, done)
        inner.contents.extend(("store", i) for i in idxs)
        _link(root, nest)
    return root


def _link(parent: Scope, nest: list[Scope]) -> None:
    """Append each loop of ``nest`` to the scope it opens in (after what is already there)."""
    outer = parent
    for s in nest:
        outer.contents.append(("loop", s))
        outer = s


def _place_tree(
    items: Sequence[Item], plan: LoopPlan, root_item: int, at: Scope, done: set
) -> None:
    """Place ``root_item`` (requested from ``at``) and everything it needs, in post-order."""
    stack: list[tuple[int, Scope, bool, list[Scope] | None]] = [(root_item, at, False, None)]
    while stack:
        i, s, post, nest = stack.pop()
        it = items[i]
        if post:
            if it.reduce_dims is not None and nest:
                _link(s, nest)
            else:
                s.contents.append(("value", i))
            continue
        p = hoist(s, plan.need(it.domain))
        if (i, id(p)) in done:
            continue
        done.add((i, id(p)))
        if it.reduce_dims is not None:
            nest = open_nest(p, plan.ordered(it.reduce_dims), reduce=i)
            inner = nest[-1] if nest else p
            stack.append((i, p, True, nest))
            stack.extend((o, inner, False, None) for o in reversed(it.operands))
        else:
            stack.append((i, p, True, None))
            stack.extend((o, p, False, None) for o in reversed(it.operands))
