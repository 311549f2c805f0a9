"""Loop plans and loop nests: where each value of a kernel is computed.

A kernel's body is a dataflow program evaluated over an iteration space. Its
*loop plan* (:class:`LoopPlan`, printed on every ``kernel.func``) says which
space dims run as one parallel loop (outermost) and in which order the serial
loops nest. A plan and a body determine a tree of *scopes* (loop bodies):

* the root scope is the parallel loop's body; its context is the parallel dims;
* each group of consecutive stores gets a nest of serial loops over the dims it
  walks beyond the parallel ones;
* each reduce, wherever it is computed, gets a nest of serial loops over its
  axes, carrying the accumulator.

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
LOOP_KINDS = (PARALLEL, SERIAL)


@dataclass(frozen=True)
class Loop:
    """One loop of a plan: a space dim and how it runs."""

    dim: int
    kind: str

    def __str__(self) -> str:
        return f"{self.kind} {self.dim}"


@dataclass(frozen=True)
class LoopPlan:
    """The loops of a kernel, outermost first: ``[parallel 0, serial 1]``.

    Every space dim appears once; parallel loops come first and form one
    parallel loop nest; the serial order decides how the loops of a store nest
    or of a reduce over several axes nest.
    """

    loops: tuple[Loop, ...]

    @staticmethod
    def of(parallel: Sequence[int], serial: Sequence[int]) -> LoopPlan:
        return LoopPlan(
            tuple(Loop(d, PARALLEL) for d in parallel) + tuple(Loop(d, SERIAL) for d in serial)
        )

    @property
    def parallel(self) -> tuple[int, ...]:
        return tuple(lp.dim for lp in self.loops if lp.kind == PARALLEL)

    @property
    def order(self) -> tuple[int, ...]:
        return tuple(lp.dim for lp in self.loops)

    def ordered(self, dims) -> tuple[int, ...]:
        """``dims`` in loop order."""
        return tuple(d for d in self.order if d in dims)

    def __str__(self) -> str:
        return "[" + ", ".join(str(lp) for lp in self.loops) + "]"

    def problems(self, rank: int, reduce_dims: Sequence[Sequence[int]] = ()) -> str | None:
        """Why this plan is not a plan for a space of ``rank`` dims whose reduces
        run over ``reduce_dims`` (None if it is)."""
        dims = [lp.dim for lp in self.loops]
        for lp in self.loops:
            if lp.kind not in LOOP_KINDS:
                return f"unknown loop kind '{lp.kind}' (known: {', '.join(LOOP_KINDS)})"
            if not 0 <= lp.dim < rank:
                return f"dim {lp.dim} is out of range for a rank-{rank} space"
        if sorted(dims) != list(range(rank)):
            missing = sorted(set(range(rank)) - set(dims))
            if missing:
                return f"dims {missing} of the space have no loop"
            return f"a dim has two loops in {self}"
        kinds = [lp.kind for lp in self.loops]
        if PARALLEL in kinds and SERIAL in kinds[: len(self.parallel)]:
            return "parallel loops must come before serial ones"
        par = set(self.parallel)
        for axes in reduce_dims:
            if par & set(axes):
                return (
                    f"dim {min(par & set(axes))} is parallel but a reduce runs over it (its "
                    "partial results would race)"
                )
        return None


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
) -> LoopPlan:
    """The plan a kernel gets from outlining: parallel over the dims every
    reduce result and every store varies along (minus reduce axes), serial
    loops in :func:`domain_order`. ``reduces``: (result domain, axes) each."""
    order = domain_order(rank, [dom for dom, _ in reduces])
    doms = [dom for dom, _ in reduces] + list(store_dims)
    par = frozenset.intersection(*doms) if doms else frozenset()
    for _, axes in reduces:
        par -= set(axes)
    return LoopPlan.of([d for d in order if d in par], [d for d in order if d not in par])


def parallel_extent(plan: LoopPlan, sizes: Sequence[int]) -> int:
    return math.prod(sizes[d] for d in plan.parallel)


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


@dataclass(frozen=True)
class StoreItem:
    """A store of item ``value``, walking ``dims``."""

    value: int
    dims: frozenset[int]


@dataclass(eq=False)
class Scope:
    """A loop body: the root (the parallel loop's body) or a serial loop over ``dim``."""

    parent: Scope | None
    dim: int | None
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


def hoist(s: Scope, domain: frozenset[int]) -> Scope:
    """The outermost scope on the path from the root to ``s`` covering ``domain``."""
    while s.parent is not None and domain <= s.parent.ctx:
        s = s.parent
    return s


def open_nest(
    parent: Scope, dims: Sequence[int], reduce: int | None = None, elastic: bool = False
) -> list[Scope]:
    """Serial loops over ``dims`` (in that order) inside ``parent``."""
    out: list[Scope] = []
    s = parent
    for d in dims:
        s = Scope(s, d, s.ctx | {d}, reduce, elastic=elastic)
        out.append(s)
    return out


def store_groups(
    plan: LoopPlan, stores: Sequence[StoreItem]
) -> list[tuple[list[int], tuple[int, ...]]]:
    """Consecutive stores walking the same dims beyond the parallel ones, with those dims."""
    par = set(plan.parallel)
    groups: list[tuple[list[int], tuple[int, ...]]] = []
    for i, st in enumerate(stores):
        extra = plan.ordered(st.dims - par)
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
    kind: str  # "reduce": a reduction computed twice or redundantly; "budget"
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
    its domain (more dims would repeat the reduction along them). With a
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
        where = _distinct(hoist(s, it.domain) for s in requests[i])
        if not where:
            continue
        if it.reduce_dims is not None:
            if len(where) > 1 or any(p.ctx != it.domain and not p.elastic for p in where):
                violations.append(Violation(i, "reduce", where))
                where = [Scope(None, None, it.domain, elastic=True)]  # as if materialized
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


def _kernel_of(it: Item, plan: LoopPlan) -> Scope:
    """Where an item found to need materializing is computed in a kernel of its
    own: guessed from this kernel's plan (its parallel dims, then a store nest
    over the rest). The guess is elastic: no reduce placed in it counts as
    repeated along dims it does not vary along; only placements are counted.
    The kernel is planned for real in the next round."""
    root = Scope(None, None, it.domain & frozenset(plan.parallel), elastic=True)
    nest = open_nest(root, plan.ordered(it.domain - root.ctx), elastic=True)
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
        p = hoist(s, it.domain)
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
