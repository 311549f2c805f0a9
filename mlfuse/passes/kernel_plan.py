"""Planning one kernel: its iteration space, the index map of every value, its loops.

A kernel computes its *roots* (the values it stores) over an iteration space
``S``. Every value is instantiated at an affine index map ``M`` from ``S`` to
the value's row-major position, starting with each root at the identity:

1. An elementwise op at ``M`` needs its operands at ``M``; a contiguous
   reshape changes nothing (same row-major positions); any other view ``V``
   of a computed value needs the value at ``V . M`` (one view, no mask).
2. A reduce at ``M`` needs its input at ``M`` re-expressed in the input's
   layout, plus one space dim per reduced axis: a dim of the same size that
   ``M`` does not use is reused (softmax's reductions run over the dim the
   output later walks), otherwise a new dim is added.
3. A scan at ``M`` needs its input at ``M`` too (the same shape); ``M`` must
   walk the scanned axis whole, forward, in unit steps, as one space dim of
   its own (a dim spanning several axes is split first): the scan runs along
   that dim. A scan read through any other map is materialized (``view of
   scan``), and so is one read at two maps.
4. Buffers and constants end the walk: loads through ``V . M``.

The walk uses a worklist (any graph depth is fine). Then the kernel gets its
default loop plan (:func:`mlfuse.loop_nest.default_plan`) and the loop-nest
analysis places every value in the loops that need it. The plan is legal when
no reduction is computed twice or repeated along a dim it does not vary along
(a reduce may run inside another reduce's loop: ``x.sum(2).relu().sum(1)`` is
one kernel). Within :class:`Limits`, cheap elementwise work is recomputed
in a few loops at most and a kernel has a bounded number of ops. Each broken
rule names a value to materialize instead (a :class:`PlanError`); all of them
are found in one walk.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.ir import Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from mlfuse.dialects import lazy
from mlfuse.loop_nest import Item, LoopPlan, StoreItem, Violation, analyze, default_plan
from mlfuse.utils import postorder
from mlfuse.view import View, ViewStack


@dataclass(frozen=True)
class Limits:
    """Profitability limits of a kernel (legality is not negotiable; these are).

    ``recompute``: the most loops of one kernel an elementwise value may be
    computed in. ``max_ops``: the most ops one kernel computes (each loop an op
    is computed in counts), so a longer chain is cut into several kernels: LLVM's
    loop vectorizer takes time quadratic in the loop body (0.7 s at O3 for a
    2,500-op body, 12 s for 10,000), and past this size a kernel costs more to
    compile than the stores between its parts cost to run. Inductor bounds its
    fusions for the same reason (``max_fusion_size``). ``max_loops``: the most
    reduce loop nests one kernel has; the vectorizer's time is also quadratic in
    the number of loops of a function (16 loops: 0.8 s, 32: 3 s, 64: 12 s).
    ``factor_elements``: a factor of a contraction (a sum of products) that
    computes a transcendental function (exp, log, sin, ...) inside the reduction,
    and misses a dim the other factor varies along, is materialized when it has
    at least this many elements (attention's ``softmax(s) @ v``): inside the
    product it is computed again for every block of the other factor's dim (on a
    GPU, every column of threads) and one element at a time (on a CPU the vectors
    run along that dim); materialized, it is computed once, in vectors, and the
    product is a plain one. Smaller factors stay in the product: one kernel costs
    less than the round trip through memory. A factor whose value is a broadcast
    (push-views moved the expand under the exp: ``x.exp() @ v``) also stays, as
    storing it would store the broadcast.
    """

    recompute: int | None = 3
    max_ops: int | None = 2048
    max_loops: int | None = 16
    factor_elements: int | None = 1 << 15


Dim = tuple
"""A space dim's identity: ("root", i), ("reduce", id, axis), or (parent, "part", k)."""


class PlanError(Exception):
    """The kernel cannot be formed; materializing ``value`` resolves it (or, if
    that is already materialized, one of ``alternatives``)."""

    def __init__(self, value: SSAValue, reason: str, alternatives: Sequence[SSAValue] = ()):
        super().__init__(reason)
        self.value = value
        self.reason = reason
        self.alternatives = list(alternatives)


class _Restart(Exception):
    def __init__(self, dim: Dim, factors: tuple[int, ...], culprit: SSAValue):
        self.dim = dim
        self.factors = factors
        self.culprit = culprit  # the value whose view needs the split


@dataclass(frozen=True)
class Affine:
    """``offset + sum(stride * s[dim])``: a sparse index map over the space."""

    offset: int
    strides: tuple[tuple[int, int], ...]  # (dim, stride), sorted by dim, stride != 0

    @staticmethod
    def of(offset: int, strides: dict[int, int]) -> Affine:
        return Affine(offset, tuple(sorted((d, s) for d, s in strides.items() if s != 0)))

    @property
    def domain(self) -> frozenset[int]:
        return frozenset(d for d, _ in self.strides)

    def view(self, sizes: Sequence[int]) -> View:
        dense = [0] * len(sizes)
        for d, s in self.strides:
            dense[d] = s
        return View.create(tuple(sizes), tuple(dense), self.offset)

    @staticmethod
    def from_view(v: View) -> Affine:
        return Affine.of(v.offset, dict(enumerate(v.strides)))

    def compact(self, sizes: Sequence[int]) -> tuple[View, tuple[int, ...]]:
        """This map as a view over only the dims it uses, and those dims: work
        on it costs the map's size, not the space's rank (which grows with the
        graph while a big group is planned)."""
        dims = tuple(d for d, _ in self.strides)
        view = View.create(
            tuple(sizes[d] for d in dims), tuple(s for _, s in self.strides), self.offset
        )
        return view, dims


def _axis_of(stride: int, shape: Sequence[int], rm: Sequence[int]) -> int | None:
    """The axis of ``shape`` whose index one step of ``stride`` advances (None: none)."""
    for b, (n, r) in enumerate(zip(shape, rm)):
        if n > 1 and stride % r == 0 and stride // r < n:
            return b
    return None


def row_major(shape: Sequence[int]) -> list[int]:
    rm = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        rm[d] = rm[d + 1] * shape[d + 1]
    return rm


# ---------------------------------------------------------------------------
# the planned dataflow graph
# ---------------------------------------------------------------------------


@dataclass(eq=False)
class Node:
    """One kernel value: a load, a constant, an op on other nodes, a reduce, or
    a gather (a load of ``value`` at positions its one argument, the index,
    gives along one dim; ``view`` places the other dims) (or ``cut``: a value the
    walk found must be materialized, read as if it were)."""

    kind: str  # "load" | "const" | "op" | "reduce" | "scan" | "gather" | "cut"
    value: SSAValue  # the lazy value this node computes (for loads and gathers: the buffer)
    at: Affine
    args: list[Node] = field(default_factory=list)
    view: ViewStack | None = None  # load: buffer-side view under ``at``; const: its mask view
    op: Operation | None = None  # "op": the lazy elementwise op; "reduce"/"scan": the lazy op
    dims: tuple[int, ...] = ()  # "reduce": the space dims reduced over; "scan": its one dim
    along: tuple[int, int] = (0, 1)  # "gather": (stride, size) of the gathered dim

    def stack(self, sizes: Sequence[int]) -> ViewStack:
        """The full index map for a load / masked constant, over the final space."""
        top = ViewStack((self.at.view(sizes),))
        return top if self.view is None else self.view.compose(top)


@dataclass
class Plan:
    """A planned kernel: its space, its values, its loop plan, and what is wrong with it."""

    sizes: tuple[int, ...]
    roots: list[tuple[Operation, Node, Affine]]  # realized op, node computing it, its own map
    reduces: list[Node]
    nodes: list[Node]  # every node, operands first
    loops: LoopPlan
    problems: list[PlanError]  # values to materialize; empty when the kernel is legal

    @property
    def ok(self) -> bool:
        return not self.problems


# ---------------------------------------------------------------------------
# planning
# ---------------------------------------------------------------------------


def movement_stack(op: lazy.MovementOp) -> ViewStack:
    """The view a movement op reads its operand through."""
    if isinstance(op, lazy.PadOp) and op.pad_value != 0:
        raise DiagnosticException(
            "lazy.pad with a non-zero value is not a view; run lazy-canonicalize first"
        )
    if isinstance(op, lazy.ViewOp):
        return op.view.stack
    return op.apply(ViewStack.from_shape(lazy.shape_of(op.input)))


def computed_value(op: Operation) -> SSAValue:
    """The value a realized op stores (contiguous/copy/assign store their operand)."""
    match op:
        case lazy.ContiguousOp() | lazy.CopyOp():
            return op.input
        case lazy.AssignOp():
            return op.value
        case _:
            return op.results[0]


class _Planner:
    def __init__(
        self,
        roots: Sequence[Operation],
        members: set[Operation],
        splits,
        split_by: dict | None = None,
    ):
        self.roots = list(roots)
        self.members = members
        self.splits: dict[Dim, tuple[int, ...]] = splits
        self.split_by: dict[Dim, SSAValue] = split_by if split_by is not None else {}
        self.dims: list[Dim] = []
        self.sizes: list[int] = []
        self.nodes: dict[tuple, Node] = {}
        self.reduce_nodes: dict[Operation, Node] = {}
        self.scan_nodes: dict[Operation, Node] = {}
        self.busy: set[int] = set()  # dims some reduce's result varies along
        self.problems: list[PlanError] = []
        # requests still to resolve: (parent node, arg slot, value, map, buffer-side view)
        self.todo: list[tuple[Node, int, SSAValue, Affine, ViewStack | None]] = []

    # -- space dims ---------------------------------------------------------
    def new_dim(self, ident: Dim, size: int, stride: int) -> dict[int, int]:
        """Add a dim of ``size`` walked with ``stride``; returns its strides (split
        parts, and parts of parts: a part may be split again)."""
        out: dict[int, int] = {}
        self._add_dim(ident, size, stride, out)
        return out

    def _add_dim(self, ident: Dim, size: int, stride: int, out: dict[int, int]) -> None:
        factors = self.splits.get(ident)
        if factors is None or len(factors) < 2:
            self.dims.append(ident)
            self.sizes.append(size)
            out[len(self.dims) - 1] = stride
            return
        inner = 1
        for k in range(len(factors) - 1, -1, -1):
            self._add_dim((ident, "part", k), factors[k], stride * inner, out)
            inner *= factors[k]

    def dense(self, a: Affine) -> View:
        return a.view(self.sizes)

    # -- requests -----------------------------------------------------------
    def is_member(self, v: SSAValue) -> bool:
        return isinstance(v.owner, Operation) and v.owner in self.members

    def walk(self) -> None:
        """Resolve the queued requests depth first, with a worklist: the operands
        of a node in order, each one's whole subgraph before the next."""
        while self.todo:
            parent, slot, v, at, via = self.todo.pop()
            parent.args[slot] = self.resolve(v, at, via)

    def resolve(self, v: SSAValue, at: Affine, via: ViewStack | None) -> Node:
        """The node computing ``v`` at ``at`` (``via``: a view still to apply on the
        buffer side, for loads and constants); a new node's operands are queued."""
        keys = []
        while True:  # movement and meta ops pass the request on
            key = (v, at) if via is None else (v, at, via)
            if key in self.nodes:
                node = self.nodes[key]
                break
            keys.append(key)
            op = v.owner
            if not self.is_member(v):
                node = Node("load", v, at, view=via)
                if via is not None and len(via.views) > 1:
                    self.fit_load(node)
                break
            assert isinstance(op, Operation)
            if isinstance(op, lazy.ConstOp):
                node = Node("const", v, at, view=via, op=op)
                break
            if isinstance(op, lazy.MovementOp):
                stack = movement_stack(op) if via is None else movement_stack(op).compose(via)
                inner = op.input
                if not self.is_member(inner) or isinstance(inner.owner, lazy.ConstOp):
                    v, via = inner, stack
                    continue
                try:
                    at = self.relabel(inner, stack, at)
                except PlanError as e:
                    self.problems.append(e)
                    node = Node("cut", inner, at)
                    break
                v = inner
                continue
            if isinstance(op, (lazy.ContiguousOp, lazy.CopyOp, lazy.AssignOp)):
                v = computed_value(op)  # only roots are computed here: their operand
                continue
            if isinstance(op, lazy.ReduceOp):
                node = self.reduce(op, at)
                break
            if isinstance(op, lazy.ScanOp):
                if lazy.shape_of(op.input)[op.scan_dim] == 1:
                    v = op.input  # a scan of one element is its input
                    continue
                node = self.scan(op, at)
                break
            if isinstance(op, lazy.GatherOp):
                node = self.gather(op, at)
                break
            if not isinstance(op, lazy.ElementwiseOp):
                raise DiagnosticException(
                    f"kernel planner: '{op.name}' is not a lazy op a kernel can compute"
                )
            node = Node("op", v, at, args=[None] * len(op.operands), op=op)  # type: ignore[list-item]
            self.todo.extend(
                (node, i, a, at, None) for i, a in reversed(list(enumerate(op.operands)))
            )
            break
        for key in keys:
            self.nodes[key] = node
        return node

    def gather(self, op: lazy.GatherOp, at: Affine) -> Node:
        """A gather at ``at``: its index at ``at`` (an elementwise operand), its
        source read from a buffer through one unmasked view. A source computed in
        this kernel, or seen through a view that is not one (a pad, a reshape of
        a permute), is materialized first (``gather source``)."""
        v, via = op.source, None
        while self.is_member(v) and isinstance(v.owner, lazy.MovementOp):
            m = v.owner
            stack = movement_stack(m)
            via = stack if via is None else stack.compose(via)
            v = m.input
        if self.is_member(v) or (
            via is not None and (len(via.views) != 1 or via.top.mask is not None)
        ):
            self.problems.append(PlanError(op.source, "gather source"))
            return Node("cut", op.result, at)
        src = via.top if via is not None else View.create(lazy.shape_of(op.source))
        d = op.gather_dim
        shape = lazy.shape_of(op.index)
        strides = tuple(0 if k == d else st for k, st in enumerate(src.strides))
        base = View.create(shape, strides, src.offset)
        node = Node(
            "gather",
            v,
            at,
            args=[None],  # type: ignore[list-item]
            view=ViewStack((base,)),
            op=op,
            along=(src.strides[d], src.shape[d]),
        )
        self.todo.append((node, 0, op.index, at, None))
        return node

    def relabel(self, u: SSAValue, stack: ViewStack, at: Affine) -> Affine:
        """The map of ``u`` when ``stack`` (over u's buffer) is read at ``at``."""
        if stack.contiguous:
            return at  # a reshape keeps row-major positions
        what = "view of scan" if isinstance(u.owner, lazy.ScanOp) else "view of reduce"
        if len(stack.views) != 1 or stack.top.mask is not None:
            raise PlanError(u, what)
        compact, dims = at.compact(self.sizes)
        merged = ViewStack((stack.top,)).compose(ViewStack((compact,)))
        if len(merged.views) != 1 or merged.top.mask is not None:
            raise PlanError(u, what)
        top = merged.top
        return Affine.of(top.offset, {dims[k]: st for k, st in enumerate(top.strides)})

    def reduce(self, r: lazy.ReduceOp, at: Affine) -> Node:
        if r in self.reduce_nodes:
            node = self.reduce_nodes[r]
            if node.at != at:
                looped = {d for o in self.reduce_nodes.values() for d in o.dims}
                # needed inside another reduction's loop: that reduction reduces it again
                why = (
                    "reduce of reduce"
                    if (at.domain - node.at.domain) & looped
                    else "reduce read at two index maps"
                )
                self.problems.append(PlanError(r.result, why))
                return Node("cut", r.result, at)
            return node
        t_out = lazy.shape_of(r.result)
        t_in = lazy.shape_of(r.input)
        try:
            in_map = self.to_input_layout(r, at, t_out, t_in)
        except PlanError as e:
            self.problems.append(e)
            return Node("cut", r.result, at)
        rm_in = row_major(t_in)
        dims: list[int] = []
        busy = self.busy
        for a in r.reduce_axes:
            n = t_in[a]
            if n == 1:
                continue
            reuse = [
                d
                for d in range(len(self.sizes))
                if self.sizes[d] == n
                and d not in at.domain
                and d not in dims
                and d not in in_map
                and d not in busy  # another reduce's result varies along it
            ]
            if reuse:
                dims.append(reuse[-1])
                in_map[reuse[-1]] = rm_in[a]
            else:
                part = self.new_dim(("reduce", id(r), a), n, rm_in[a])
                dims.extend(part)
                in_map.update(part)
        offset = in_map.pop("offset")
        node = Node("reduce", r.result, at, args=[None], op=r, dims=tuple(sorted(dims)))  # type: ignore[list-item]
        self.reduce_nodes[r] = node
        self.busy |= at.domain
        self.todo.append((node, 0, r.input, Affine.of(offset, in_map), None))
        return node

    def scan(self, r: lazy.ScanOp, at: Affine) -> Node:
        """A scan at ``at``: its input at ``at``, run along the one space dim that
        walks the scanned axis (whole, forward, unit steps). Dims of ``at`` that
        span several axes are split first (a flattened scan result)."""
        if r in self.scan_nodes:
            node = self.scan_nodes[r]
            if node.at != at:
                self.problems.append(PlanError(r.result, "scan read at two index maps"))
                return Node("cut", r.result, at)
            return node
        shape = lazy.shape_of(r.result)
        rm = row_major(shape)
        a = r.scan_dim
        size = 1
        for n in shape:
            size *= n
        try:
            if at.offset < 0 or at.offset >= max(size, 1):
                raise PlanError(r.result, "view of scan")
            lo, rest = [], at.offset
            for n, st in zip(shape, rm):
                lo.append(rest // st if n > 1 else 0)
                rest -= lo[-1] * st
            hi = list(lo)
            along = []
            for d, st in at.strides:
                n = self.sizes[d]
                axis = _axis_of(abs(st), shape, rm)
                if axis is None:
                    raise PlanError(r.result, "view of scan")
                k = st // rm[axis]
                if st > 0 and hi[axis] + (n - 1) * k >= shape[axis]:
                    self.split(d, st, shape, rm, r.result)
                if st < 0 and lo[axis] + (n - 1) * k < 0:
                    raise PlanError(r.result, "view of scan")
                if st > 0:
                    hi[axis] += (n - 1) * k
                else:
                    lo[axis] += (n - 1) * k
                if axis == a:
                    along.append((d, k, n))
            if len(along) != 1 or along[0][1:] != (1, shape[a]) or lo[a] != 0:
                # the scanned axis is not one whole space dim: a view of the result
                # walks it so (the result is the cut), or a view of a value the scan
                # reads split the dim (that value, or else the scan's input, is)
                by = [
                    self.split_by.get(self.dims[d][0])
                    for d, _, _ in along
                    if _is_part(self.dims[d])
                ]
                first = [v for v in by if v is not None and v is not r.result][:1]
                if first:
                    raise PlanError(first[0], "view into scan", alternatives=[r.input, r.result])
                raise PlanError(r.result, "view of scan", alternatives=[r.input])
        except PlanError as e:
            self.problems.append(e)
            return Node("cut", r.result, at)
        node = Node("scan", r.result, at, args=[None], op=r, dims=(along[0][0],))  # type: ignore[list-item]
        self.scan_nodes[r] = node
        self.todo.append((node, 0, r.input, at, None))
        return node

    def to_input_layout(self, r, at: Affine, t_out, t_in) -> dict:
        """Re-express ``at`` (positions in the reduce's output) in the input's layout."""
        rm_out, rm_in = row_major(t_out), row_major(t_in)
        size = 1
        for s in t_out:
            size *= s
        if at.offset < 0 or at.offset >= max(size, 1):
            raise PlanError(r.result, "view of reduce")
        coord = []
        rest = at.offset
        for s, rm in zip(t_out, rm_out):
            coord.append(rest // rm if s > 1 else 0)
            rest -= coord[-1] * rm
        out: dict = {"offset": sum(c * rm for c, rm in zip(coord, rm_in))}
        reach = list(coord)
        for d, st in at.strides:
            n = self.sizes[d]
            if st < 0:
                raise PlanError(r.result, "view of reduce")
            axis = _axis_of(st, t_out, rm_out)
            if axis is None:
                raise PlanError(r.result, "view of reduce")
            k = st // rm_out[axis]
            if reach[axis] + (n - 1) * k >= t_out[axis]:
                self.split(d, st, t_out, rm_out, r.result)
            reach[axis] += (n - 1) * k
            out[d] = k * rm_in[axis]
        return out

    def split(self, d: int, st: int, t_out, rm_out, culprit: SSAValue) -> None:
        """Dim ``d`` spans several axes of ``t_out`` (a reduce's output, or the
        shape a load's view reshapes): split it into per-axis parts and plan again."""
        factors: list[int] = []
        s, remaining = st, self.sizes[d]
        while remaining > 1:
            b = _axis_of(s, t_out, rm_out)
            if b is None:
                raise PlanError(culprit, "view of reduce")
            k = s // rm_out[b]
            if (remaining - 1) * k < t_out[b]:
                factors.append(remaining)
                remaining = 1
                break
            if t_out[b] % k or remaining % (t_out[b] // k):
                raise PlanError(culprit, "view of reduce")
            m = t_out[b] // k
            factors.append(m)
            remaining //= m
            s = rm_out[b] * t_out[b]
        if len(factors) < 2:
            # the dim fits one axis: it is the offset that spills over
            raise PlanError(culprit, "view of reduce")
        raise _Restart(self.dims[d], tuple(reversed(factors)), culprit)

    def fit_load(self, node: Node) -> None:
        """Split the space dims a load's view reshapes across several axes of the
        view below it (a reshape of a permuted buffer, as a packed operand), so
        that the load becomes one affine view: vector loads need one."""
        assert node.view is not None
        compact, dims = node.at.compact(self.sizes)
        full = node.view.compose(ViewStack((compact,)))
        if len(full.views) < 2 or full.top.mask is not None:
            return
        below, top = full.views[-2], full.top
        if top.offset < 0 or top.offset >= max(below.size, 1):
            return
        t, rm = below.shape, row_major(below.shape)
        reach, rest = [], top.offset
        for n, r in zip(t, rm):
            reach.append(rest // r if n > 1 else 0)
            rest -= reach[-1] * r
        for k, (n, st) in enumerate(zip(top.shape, top.strides)):
            if n <= 1 or st == 0:
                continue
            axis = _axis_of(st, t, rm) if st > 0 else None
            if axis is None:
                return
            step = st // rm[axis]
            if reach[axis] + (n - 1) * step >= t[axis]:
                try:
                    self.split(dims[k], st, t, rm, node.value)
                except PlanError:
                    return

    # -- roots ----------------------------------------------------------------
    def root_map(self, shape: tuple[int, ...], first: bool) -> Affine:
        rm = row_major(shape)
        if first:
            strides: dict[int, int] = {}
            for i, (s, st) in enumerate(zip(shape, rm)):
                if s > 1:
                    strides.update(self.new_dim(("root", i), s, st))
            return Affine.of(0, strides)
        # another output of the same kernel: align its dims with the space's,
        # from the right (numpy broadcasting order)
        strides = {}
        d = len(self.sizes) - 1
        for i in range(len(shape) - 1, -1, -1):
            if shape[i] == 1:
                continue
            while d >= 0 and self.sizes[d] != shape[i]:
                d -= 1
            if d < 0:
                raise PlanError(self.roots[0].results[0], "outputs of different shapes")
            strides[d] = rm[i]
            d -= 1
        return Affine.of(0, strides)

    def run(self) -> tuple[list[tuple[Operation, Node, Affine]], list[Node]]:
        """Walk the kernel from its roots: the roots with their nodes, and every
        node (operands first)."""
        # every output's map first (their dims lead the space), then what they need
        maps = [
            self.root_map(lazy.shape_of(computed_value(r)), first=(i == 0))
            for i, r in enumerate(self.roots)
        ]
        roots = []
        for r, at in zip(self.roots, maps):
            node = self.resolve(computed_value(r), at, None)
            self.walk()
            roots.append((r, node, at))
        return roots, postorder([n for _, n, _ in roots], lambda n: n.args)


def domains(nodes: Sequence[Node], sizes: Sequence[int]) -> dict[int, frozenset[int]]:
    """The dims each node varies along, as the kernel built from it will say
    (:func:`mlfuse.dialects.kernel.body_items`): a load or masked constant along
    its view's dims, a gather along its view's and its index's, a reduce along
    its input's minus its axes, any other op along the union of its operands'."""
    dom: dict[int, frozenset[int]] = {}
    for n in nodes:
        if n.kind == "gather":
            assert n.view is not None
            compact, dims = n.at.compact(sizes)
            top = n.view.compose(ViewStack((compact,))).top
            read = frozenset(dims[k] for k in range(len(dims)) if top.depends_on(k))
            dom[id(n)] = read | dom[id(n.args[0])]
        elif n.kind in ("load", "cut") or (
            n.kind == "const" and n.view is not None and any(v.mask for v in n.view.views)
        ):
            if n.view is None:
                dom[id(n)] = n.at.domain
                continue
            # the dims the load's view depends on, among those its map uses
            compact, dims = n.at.compact(sizes)
            top = n.view.compose(ViewStack((compact,))).top
            dom[id(n)] = frozenset(dims[k] for k in range(len(dims)) if top.depends_on(k))
        elif n.kind == "reduce":
            dom[id(n)] = dom[id(n.args[0])] - set(n.dims)
        elif n.kind == "scan":
            dom[id(n)] = dom[id(n.args[0])] | set(n.dims)
        else:
            d: frozenset[int] = frozenset()
            for a in n.args:
                d |= dom[id(a)]
            dom[id(n)] = d
    return dom


def _is_part(dim: Dim) -> bool:
    """Whether ``dim`` is one part of a split space dim (see ``_Planner.new_dim``)."""
    return isinstance(dim, tuple) and len(dim) == 3 and dim[1] == "part"


def is_empty(roots: Sequence[Operation]) -> bool:
    """A kernel whose outputs have no elements computes nothing."""
    return all(0 in lazy.shape_of(computed_value(r)) for r in roots)


def plan_kernel(
    roots: Sequence[Operation], members: set[Operation], limits: Limits | None = None
) -> Plan:
    """Plan the kernel computing ``roots`` from ``members``. The plan's
    ``problems`` name the values to materialize where it would compute a
    reduction twice (or, with ``limits``, go past them); a kernel that cannot
    exist at all (outputs of different shapes) raises PlanError."""
    splits: dict[Dim, tuple[int, ...]] = {}
    split_by: dict[Dim, SSAValue] = {}
    # every restart splits a dim further, and each member can bring dims to split
    # (a chain of products of one reshaped view brings one per product)
    for _ in range(16 + 4 * len(members)):
        planner = _Planner(roots, members, splits, split_by)
        try:
            root_nodes, nodes = planner.run()
            break
        except _Restart as e:
            splits[e.dim] = e.factors
            split_by[e.dim] = e.culprit
    else:  # pragma: no cover - every restart splits a dim further
        raise PlanError(roots[0].results[0], "view of reduce")
    sizes = tuple(planner.sizes)
    dom = domains(nodes, sizes)
    index = {id(n): i for i, n in enumerate(nodes)}
    items = [
        Item(
            dom[id(n)],
            tuple(index[id(a)] for a in n.args),
            n.dims if n.kind == "reduce" else None,
            computes=n.kind in ("op", "scan"),
            scan_dim=n.dims[0] if n.kind == "scan" else None,
        )
        for n in nodes
    ]
    stores = [StoreItem(index[id(n)], dom[id(n)] | at.domain) for _, n, at in root_nodes]
    reduces = [n for n in nodes if n.kind == "reduce"]
    scans = [(dom[id(n)], n.dims[0]) for n in nodes if n.kind == "scan"]
    loops = default_plan(
        len(sizes), [(dom[id(n)], n.dims) for n in reduces], [st.dims for st in stores], scans
    )
    problems = list(planner.problems) + _assign_hazards(root_nodes, nodes, sizes)
    known = {e.value for e in problems}  # the walk already cut these reduces
    limits = limits or Limits(None, None, None, None)
    found = analyze(items, stores, loops, limits.recompute, limits.max_ops, limits.max_loops)
    for v in found.violations:
        if nodes[v.item].value not in known:
            problems.append(_violation(nodes[v.item], v, members, limits))
    if limits.factor_elements is not None:
        known |= {e.value for e in problems}
        for e in _costly_factors(nodes, dom, sizes, limits.factor_elements):
            if e.value not in known:
                problems.append(e)
    return Plan(sizes, root_nodes, reduces, nodes, loops, problems)


COSTLY = (lazy.ExpOp, lazy.Exp2Op, lazy.LogOp, lazy.Log2Op, lazy.SinOp, lazy.CosOp, lazy.PowOp)
"""Elementwise ops that cost tens of instructions each (range reduction and a
polynomial; pow is a log and an exp)."""


def _costly_factors(
    nodes: Sequence[Node], dom: dict[int, frozenset[int]], sizes: Sequence[int], limit: int
) -> list[PlanError]:
    """Factors of contractions to materialize (see :attr:`Limits.factor_elements`)."""
    out: list[PlanError] = []
    for r in nodes:
        if r.kind != "reduce" or not isinstance(r.op, lazy.ReduceOp):
            continue
        prod = r.args[0]
        if r.op.reduce_kind != "add" or prod.kind != "op" or not isinstance(prod.op, lazy.MulOp):
            continue
        for f, other in ((prod.args[0], prod.args[1]), (prod.args[1], prod.args[0])):
            fd, od = dom[id(f)], dom[id(other)]
            if f.kind != "op" or not (od - fd) or not (fd & set(r.dims)):
                continue
            elements = math.prod(sizes[d] for d in fd)
            if elements < limit or not _computes_costly(f):
                continue
            if math.prod(lazy.shape_of(f.value)) != elements:
                continue  # a broadcast value (views pushed above it): stored, it would be larger
            out.append(PlanError(f.value, "costly factor of a contraction"))
    return out


def _computes_costly(n: Node) -> bool:
    """Whether ``n`` or the elementwise ops it is computed from in the kernel
    include a :data:`COSTLY` one (loads, reduces and scans end the search)."""
    todo, seen = [n], set()
    while todo:
        m = todo.pop()
        if id(m) in seen or m.kind != "op":
            continue
        seen.add(id(m))
        if isinstance(m.op, COSTLY):
            return True
        todo.extend(m.args)
    return False


def _assign_hazards(
    roots: list[tuple[Operation, Node, Affine]], nodes: list[Node], sizes: tuple[int, ...]
) -> list[PlanError]:
    """A kernel that assigns a buffer may read it only where it writes it (each
    point reads the old value, then stores the new one). A read through another
    view would see elements the kernel already overwrote: the value computed
    from it is materialized first, by a kernel that runs before this one."""
    out: list[PlanError] = []
    for r, _, at in roots:
        if not isinstance(r, lazy.AssignOp):
            continue
        store = ViewStack((at.view(sizes),))
        bad = {
            id(n)
            for n in nodes
            if n.kind == "load"
            and n.value is r.target
            and not _reads_where_stored(n.stack(sizes), store)
        }
        for n in nodes:  # a gather may read any element: always materialized first
            if n.kind == "gather" and n.value is r.target and n.op is not None:
                if all(e.value is not n.op.results[0] for e in out):
                    out.append(PlanError(n.op.results[0], "reads the buffer it assigns"))
        if not bad:
            continue
        users = [
            n
            for n in nodes
            if n.kind in ("op", "reduce", "scan") and any(id(a) in bad for a in n.args)
        ]
        value = users[0].value if users else r.value
        if all(e.value is not value for e in out):
            out.append(PlanError(value, "reads the buffer it assigns"))
    return out


def _reads_where_stored(load: ViewStack, store: ViewStack) -> bool:
    """Every element ``load`` reads is the one ``store`` writes at the same
    point (a masked load reads nothing outside its mask): one view, and on its
    valid box the same affine offset as the store's."""
    if load == store:
        return True
    if len(load.views) != 1 or len(store.views) != 1:
        return False
    lv, sv = load.views[0], store.views[0]
    if lv.shape != sv.shape or sv.mask is not None:
        return False
    box = lv.mask or tuple((0, s) for s in lv.shape)
    if any(lo >= hi for lo, hi in box):
        return True  # reads nothing
    for (lo, hi), a, b in zip(box, lv.strides, sv.strides):
        if hi - lo > 1 and a != b:
            return False
    corner_l = lv.offset + sum(lo * st for (lo, _), st in zip(box, lv.strides))
    corner_s = sv.offset + sum(lo * st for (lo, _), st in zip(box, sv.strides))
    return corner_l == corner_s


def _violation(node: Node, v: Violation, members: set[Operation], limits: Limits) -> PlanError:
    """The value to materialize for a loop-nest violation at ``node``."""
    if v.kind == "budget":
        return PlanError(node.value, f"recomputed in {len(v.placements)} loops")
    if v.kind == "size":
        return PlanError(node.value, f"kernel over {limits.max_ops} ops")
    if v.kind == "loops":
        return PlanError(node.value, f"kernel over {limits.max_loops} loops")
    if v.kind == "scan":
        # computed twice, or needed inside a loop nested in the one that carries it:
        # stored (or the single chain of elementwise ops after it, a cast back, say)
        return _culprit(node, members, "scan outside its loop", [node.value])
    # a reduce computed twice, or repeated along dims it does not vary along
    in_reduce = any(s.reduce is not None for p in v.placements for s in p.chain())
    why = "reduce of reduce" if in_reduce else "reduce read at two index maps"
    return _culprit(node, members, why, [node.value])


def _culprit(
    r: Node, members: set[Operation], reason: str, alternatives: Sequence[SSAValue]
) -> PlanError:
    """The value to materialize so that reduce (or scan) ``r`` is computed once: follow its
    single consumer chain through elementwise ops and reshapes; stop before a
    broadcast (that value is then 'expand of reduce')."""
    v = r.value
    while True:
        users = [u.operation for u in v.uses if u.operation in members]
        if len(users) != 1:
            return PlanError(v, reason, alternatives)
        u = users[0]
        if isinstance(u, lazy.MovementOp):
            stack = movement_stack(u)
            if not stack.contiguous:
                top = stack.top
                expands = any(s > 1 and st == 0 for s, st in zip(top.shape, top.strides))
                noun = "scan" if r.kind == "scan" else "reduce"
                why = f"expand of {noun}" if expands else f"view of {noun}"
                return PlanError(v, why, alternatives)
        elif not isinstance(u, lazy.ElementwiseOp):
            return PlanError(v, reason, alternatives)
        v = u.results[0]
