"""Planning one kernel: its iteration space and the index map of every value.

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
3. Buffers and constants end the walk: loads through ``V . M``.

A value may be instantiated at several maps (cheap elementwise work is
recomputed, as tinygrad and Inductor do); a reduce may not. The plan is legal
when no reduction is recomputed: a reduce must not run over a dim that another
reduce's result depends on, and the domains of the reduces (the dims each
result varies along) must nest, so that one loop order computes each of them
once. A plan that breaks a rule names the value to materialize instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.ir import Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from mlfuse.dialects import lazy
from mlfuse.view import View, ViewStack

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
    def __init__(self, dim: Dim, factors: tuple[int, ...]):
        self.dim = dim
        self.factors = factors


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
    """One kernel value: a load, a constant, an op on other nodes, or a reduce."""

    kind: str  # "load" | "const" | "op" | "reduce"
    value: SSAValue  # the lazy value this node computes (for loads: the buffer)
    at: Affine
    args: list[Node] = field(default_factory=list)
    view: ViewStack | None = None  # load: buffer-side view under ``at``; const: its mask view
    op: Operation | None = None  # "op": the lazy elementwise op; "reduce": the lazy reduce
    dims: tuple[int, ...] = ()  # "reduce": the space dims reduced over

    def stack(self, sizes: Sequence[int]) -> ViewStack:
        """The full index map for a load / masked constant, over the final space."""
        top = ViewStack((self.at.view(sizes),))
        return top if self.view is None else self.view.compose(top)


@dataclass
class Plan:
    sizes: tuple[int, ...]
    roots: list[tuple[Operation, Node, Affine]]  # realized op, node computing it, its own map
    reduces: list[Node]


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
    def __init__(self, roots: Sequence[Operation], members: set[Operation], splits):
        self.roots = list(roots)
        self.members = members
        self.splits: dict[Dim, tuple[int, ...]] = splits
        self.dims: list[Dim] = []
        self.sizes: list[int] = []
        self.nodes: dict[tuple[SSAValue, Affine], Node] = {}
        self.reduce_nodes: dict[Operation, Node] = {}

    # -- space dims ---------------------------------------------------------
    def new_dim(self, ident: Dim, size: int, stride: int) -> dict[int, int]:
        """Add a dim of ``size`` walked with ``stride``; returns its strides (split parts)."""
        factors = self.splits.get(ident, (size,))
        out: dict[int, int] = {}
        inner = 1
        for k in range(len(factors) - 1, -1, -1):
            self.dims.append((ident, "part", k) if len(factors) > 1 else ident)
            self.sizes.append(factors[k])
            out[len(self.dims) - 1] = stride * inner
            inner *= factors[k]
        return out

    def dense(self, a: Affine) -> View:
        return a.view(self.sizes)

    # -- requests -----------------------------------------------------------
    def is_member(self, v: SSAValue) -> bool:
        return isinstance(v.owner, Operation) and v.owner in self.members

    def request(self, v: SSAValue, at: Affine, via: ViewStack | None = None) -> Node:
        """The node computing ``v`` at ``at`` (``via``: a view still to apply
        on the buffer side, for loads and constants)."""
        key = (v, at) if via is None else (v, at, via)
        if key in self.nodes:
            return self.nodes[key]
        node = self._build(v, at, via)
        self.nodes[key] = node
        return node

    def _build(self, v: SSAValue, at: Affine, via: ViewStack | None) -> Node:
        op = v.owner
        if not self.is_member(v):
            return Node("load", v, at, view=via)
        assert isinstance(op, Operation)
        if isinstance(op, lazy.ConstOp):
            return Node("const", v, at, view=via, op=op)
        if isinstance(op, lazy.MovementOp):
            stack = movement_stack(op) if via is None else movement_stack(op).compose(via)
            inner = op.input
            if not self.is_member(inner) or isinstance(inner.owner, lazy.ConstOp):
                return self.request(inner, at, stack)
            return self.request(inner, self.relabel(inner, stack, at))
        if isinstance(op, lazy.ReduceOp):
            return self.reduce(op, at)
        if isinstance(op, (lazy.ContiguousOp, lazy.CopyOp, lazy.AssignOp)):
            # only roots are computed here; their value is the operand's
            return self.request(computed_value(op), at)
        assert isinstance(op, lazy.ElementwiseOp), op.name
        args = [self.request(a, at) for a in op.operands]
        return Node("op", v, at, args=args, op=op)

    def relabel(self, u: SSAValue, stack: ViewStack, at: Affine) -> Affine:
        """The map of ``u`` when ``stack`` (over u's buffer) is read at ``at``."""
        if stack.contiguous:
            return at  # a reshape keeps row-major positions
        if len(stack.views) != 1 or stack.top.mask is not None:
            raise PlanError(u, "view of reduce")
        merged = ViewStack((stack.top,)).compose(ViewStack((self.dense(at),)))
        if len(merged.views) != 1 or merged.top.mask is not None:
            raise PlanError(u, "view of reduce")
        return Affine.from_view(merged.top)

    def reduce(self, r: lazy.ReduceOp, at: Affine) -> Node:
        if r in self.reduce_nodes:
            node = self.reduce_nodes[r]
            if node.at != at:
                looped = {d for o in self.reduce_nodes.values() for d in o.dims}
                # needed inside another reduction's loop: that reduction reduces it again
                why = (
                    "reduce of reduce"
                    if (at.domain - node.at.domain) & looped
                    else ("reduce read at two index maps")
                )
                raise PlanError(r.result, why)
            return node
        t_out = lazy.shape_of(r.result)
        t_in = lazy.shape_of(r.input)
        in_map = self.to_input_layout(r, at, t_out, t_in)
        rm_in = row_major(t_in)
        dims: list[int] = []
        for a in r.reduce_axes:
            n = t_in[a]
            if n == 1:
                continue
            busy = set().union(*(o.at.domain for o in self.reduce_nodes.values()))
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
        node = Node("reduce", r.result, at, op=r, dims=tuple(sorted(dims)))
        self.reduce_nodes[r] = node
        node.args = [self.request(r.input, Affine.of(offset, in_map))]
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
                self.split(d, st, t_out, rm_out, r)
            reach[axis] += (n - 1) * k
            out[d] = k * rm_in[axis]
        return out

    def split(self, d: int, st: int, t_out, rm_out, r) -> None:
        """Dim ``d`` spans several axes of the reduce's output: split it into
        per-axis parts and plan again."""
        factors: list[int] = []
        s, remaining = st, self.sizes[d]
        while remaining > 1:
            b = _axis_of(s, t_out, rm_out)
            if b is None:
                raise PlanError(r.result, "view of reduce")
            k = s // rm_out[b]
            if (remaining - 1) * k < t_out[b]:
                factors.append(remaining)
                remaining = 1
                break
            if t_out[b] % k or remaining % (t_out[b] // k):
                raise PlanError(r.result, "view of reduce")
            m = t_out[b] // k
            factors.append(m)
            remaining //= m
            s = rm_out[b] * t_out[b]
        if len(factors) < 2:
            # the dim fits one axis: it is the offset that spills over
            raise PlanError(r.result, "view of reduce")
        raise _Restart(self.dims[d], tuple(reversed(factors)))

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

    def run(self) -> Plan:
        # every output's map first (their dims lead the space), then what they need
        maps = [
            self.root_map(lazy.shape_of(computed_value(r)), first=(i == 0))
            for i, r in enumerate(self.roots)
        ]
        roots = [(r, self.request(computed_value(r), at), at) for r, at in zip(self.roots, maps)]
        return Plan(tuple(self.sizes), roots, list(self.reduce_nodes.values()))


def is_empty(roots: Sequence[Operation]) -> bool:
    """A kernel whose outputs have no elements computes nothing."""
    return all(0 in lazy.shape_of(computed_value(r)) for r in roots)


def plan_kernel(roots: Sequence[Operation], members: set[Operation]) -> Plan:
    """Plan the kernel computing ``roots`` from ``members``; raise PlanError if it
    would recompute a reduction (the error names the value to materialize)."""
    splits: dict[Dim, tuple[int, ...]] = {}
    for _ in range(16):
        try:
            plan = _Planner(roots, members, splits).run()
            break
        except _Restart as e:
            splits[e.dim] = e.factors
    else:  # pragma: no cover - every restart splits a dim further
        raise PlanError(roots[0].results[0], "view of reduce")
    check_no_recompute(plan, members)
    return plan


def check_no_recompute(plan: Plan, members: set[Operation]) -> None:
    for r1 in plan.reduces:
        for r2 in plan.reduces:
            if r1 is not r2 and set(r2.dims) & r1.at.domain:
                # r1 varies along a dim r2 loops over: r1 would be recomputed
                raise _culprit(r1, members, "reduce of reduce", [r1.value, r2.value])
    doms = sorted({r.at.domain for r in plan.reduces}, key=len)
    for a, b in zip(doms, doms[1:]):
        if not a <= b:
            small = next(r for r in plan.reduces if r.at.domain == a)
            big = next(r for r in plan.reduces if r.at.domain == b)
            raise _culprit(big, members, "reduces over incompatible dims", [big.value, small.value])


def _culprit(
    r: Node, members: set[Operation], reason: str, alternatives: Sequence[SSAValue]
) -> PlanError:
    """The value to materialize so that reduce ``r`` is computed once: follow its
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
                why = "expand of reduce" if expands else "view of reduce"
                return PlanError(v, why, alternatives)
        elif not isinstance(u, lazy.ElementwiseOp):
            return PlanError(v, reason, alternatives)
        v = u.results[0]


def domain_order(plan_sizes: Sequence[int], reduce_domains: Sequence[frozenset[int]]) -> list[int]:
    """Loop order: dims of the smallest reduce domain first, then the next, ..."""
    order: list[int] = []
    for dom in sorted(set(reduce_domains), key=len):
        order.extend(sorted(d for d in dom if d not in order))
    order.extend(d for d in range(len(plan_sizes)) if d not in order)
    return order
