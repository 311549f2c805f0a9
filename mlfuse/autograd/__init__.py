"""Reverse-mode differentiation of the lazy graph.

A node made (by :func:`mlfuse.graph.make`) from a node that needs a gradient
records its *tape*, ``(op, srcs, arg)``: how it was made, kept even after the
node is realized and forgets its sources. ``loss.backward()`` walks the tapes
from ``loss`` back to the leaves (tensors made with ``requires_grad=True``)
and applies one rule per primitive op, :data:`GRADIENTS`. The rules build
more lazy graph with the front end's own ops, so the backward pass is
scheduled and fused like any other program: realized together with the
optimizer's update, a whole training step is one schedule.

The same table serves ``mlfuse-opt -p lazy-autodiff`` (a lazy-dialect
function that also returns its gradients): that pass turns IR into graph
nodes, runs :func:`gradients`, and turns the new nodes back into IR. There is
no second copy of the rules.

Non-differentiable points follow PyTorch: ``relu``'s gradient at 0 and
``abs``'s at 0 are 0; ties of ``maximum``/``minimum`` share the gradient
evenly, as do ties of a max reduction; a running max sends it to the last
position that reached the maximum so far (``torch.cummax``'s index).

PyTorch's entry points are here under their names: :func:`grad`
(``torch.autograd.grad``; given a function, the functional ``mlfuse.grad``),
:func:`backward`, :class:`Function` (custom rules, :mod:`.function`),
:class:`detect_anomaly` and the recording switches.
"""

from __future__ import annotations

import contextlib
import functools
import math
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mlfuse import dtypes, graph
from mlfuse.graph import Node
from mlfuse.utils import postorder

if TYPE_CHECKING:
    from mlfuse.tensor import Tensor


# ---------------------------------------------------------------------------
# recording on and off
# ---------------------------------------------------------------------------


class set_grad_enabled(contextlib.ContextDecorator):
    """Turn the recording of operations for autograd on or off inside a
    ``with`` block or a decorated function: ``with mlfuse.set_grad_enabled(False): ...``."""

    def __init__(self, mode: bool) -> None:
        self.mode = bool(mode)
        self._tokens: list = []

    def __enter__(self):
        self._tokens.append(graph.grad_enabled.set(self.mode))
        return self

    def __exit__(self, *exc) -> None:
        graph.grad_enabled.reset(self._tokens.pop())


class no_grad(set_grad_enabled):
    """Operations inside record nothing for autograd (optimizer updates,
    evaluation): ``with mlfuse.no_grad(): p.assign(p - lr * p.grad)``."""

    def __init__(self) -> None:
        super().__init__(False)


class enable_grad(set_grad_enabled):
    """Record operations again inside a :class:`no_grad` block."""

    def __init__(self) -> None:
        super().__init__(True)


def is_grad_enabled() -> bool:
    """Whether operations are recorded for autograd here."""
    return graph.grad_enabled.get()


_ANOMALY = [False, True]  # enabled, check NaN


def is_anomaly_enabled() -> bool:
    """Whether :class:`detect_anomaly` is on."""
    return _ANOMALY[0]


def is_anomaly_check_nan_enabled() -> bool:
    """Whether :class:`detect_anomaly` checks gradients for NaN."""
    return _ANOMALY[0] and _ANOMALY[1]


class set_detect_anomaly:  # noqa: N801 - PyTorch's name
    """Turn anomaly detection on or off (for good, or inside a ``with`` block):
    ``mlfuse.autograd.set_detect_anomaly(True)``. While it is on, ``backward()``
    computes the gradients it adds to ``.grad`` at once and raises
    RuntimeError naming the tensor whose gradient holds NaN values (gradients
    are lazy otherwise; the check costs a realize per backward)."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self._old = list(_ANOMALY)
        _ANOMALY[:] = [bool(mode), bool(check_nan)]

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        _ANOMALY[:] = self._old


class detect_anomaly(contextlib.ContextDecorator):  # noqa: N801 - PyTorch's name
    """Anomaly detection inside a ``with`` block or a decorated function (see
    :class:`set_detect_anomaly`): ``with mlfuse.autograd.detect_anomaly(): loss.backward()``."""

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = bool(check_nan)
        self._old: list[list[bool]] = []

    def __enter__(self):
        self._old.append(list(_ANOMALY))
        _ANOMALY[:] = [True, self.check_nan]
        return self

    def __exit__(self, *exc) -> None:
        _ANOMALY[:] = self._old.pop()


def _check_anomaly(t: Tensor, leaf: Tensor, g: Tensor) -> None:
    """Raise if gradient ``g`` of ``leaf`` (from ``t.backward()``) holds NaN."""
    import numpy as np

    if np.isnan(g.detach().float().numpy()).any():
        fn = grad_fn_of(t.node)
        source = f" of the output of {fn.name()}" if fn is not None else ""
        raise RuntimeError(
            f"detect_anomaly: backward{source} gave NaN values in the gradient of a "
            f"{leaf.dtype.name} tensor of shape {leaf.shape}"
        )


# ---------------------------------------------------------------------------
# the rules
# ---------------------------------------------------------------------------


@dataclass
class Ctx:
    """What a rule sees: the op's sources and result as tensors, its argument."""

    srcs: tuple[Tensor, ...]
    out: Tensor
    arg: Any

    @property
    def x(self) -> Tensor:
        return self.srcs[0]

    @property
    def y(self) -> Tensor:
        return self.srcs[1]


Rule = Callable[[Ctx, "Tensor"], Sequence["Tensor | None"]]
GRADIENTS: dict[str, Rule] = {}
"""op name -> rule: the gradients of the op's sources (None: no gradient)
given the gradient ``g`` of its result."""

NOT_DIFFERENTIABLE = frozenset(
    (
        "not",
        "idiv",
        "mod",
        "and",
        "or",
        "xor",
        "shl",
        "shr",
        "cmplt",
        "cmple",
        "cmpeq",
        "cmpne",
        "bitcast",
        "const",
    )
)
"""Ops whose result carries no gradient to their sources (integer, boolean and
bit-level ops; a gradient path through them is zero)."""


def rule(*ops: str):
    def register(fn: Rule) -> Rule:
        for op in ops:
            GRADIENTS[op] = fn
        return fn

    return register


def _mask(cond: Tensor, like: Tensor) -> Tensor:
    return cond.cast(like.dtype)


rule("neg")(lambda c, g: (-g,))
rule("recip")(lambda c, g: (-g * c.out * c.out,))
rule("sqrt")(lambda c, g: (g / (c.out * 2),))
rule("exp")(lambda c, g: (g * c.out,))
rule("exp2")(lambda c, g: (g * c.out * math.log(2),))
rule("log")(lambda c, g: (g / c.x,))
rule("log2")(lambda c, g: (g / (c.x * math.log(2)),))
rule("sin")(lambda c, g: (g * c.x.cos(),))
rule("cos")(lambda c, g: (-(g * c.x.sin()),))
rule("abs")(lambda c, g: (g * c.x.sign(),))  # 0 at 0, as PyTorch
rule("floor", "ceil")(lambda c, g: (g * 0,))  # zero almost everywhere
rule("add")(lambda c, g: (g, g))
rule("sub")(lambda c, g: (g, -g))
rule("mul")(lambda c, g: (g * c.y, g * c.x))
rule("div")(lambda c, g: (g / c.y, -(g * c.out) / c.y))
rule("mulacc")(lambda c, g: (g * c.srcs[1], g * c.srcs[0], g))
rule("contiguous")(lambda c, g: (g,))
rule("derivative")(lambda c, g: c.arg.rule(c, g))  # a composite function's own rule
rule("assign")(lambda c, g: (None, g))  # the new value replaces the old one


def _extremum(larger: bool) -> Rule:
    def fn(c: Ctx, g: Tensor):
        """maximum/minimum: to the operand that won; ties share it evenly."""
        a, b = c.srcs
        m = _mask(a > b if larger else a < b, g) + _mask(a == b, g) * 0.5
        return (g * m, g * (1 - m))

    return fn


rule("max")(_extremum(True))
rule("min")(_extremum(False))


@rule("pow")
def _pow(c: Ctx, g: Tensor):
    """d/da a^b = b a^(b-1) (0 where b == 0); d/db a^b = a^b log a (0 where a == 0
    and b >= 0, as PyTorch)."""
    a, b = c.srcs
    da = (b == 0).where(0.0, g * b * a ** (b - 1))
    db = ((a == 0) & (b >= 0)).where(0.0, g * c.out * a.log())
    return (da, db)


@rule("where")
def _where(c: Ctx, g: Tensor):
    cond = c.srcs[0]
    return (None, cond.where(g, 0.0), cond.where(0.0, g))


@rule("cast")
def _cast(c: Ctx, g: Tensor):
    return (g.cast(c.x.dtype),) if c.x.dtype.is_float else (None,)


@rule("copy")
def _copy(c: Ctx, g: Tensor):
    return (g.to(c.x.device),)


@rule("reduce")
def _reduce(c: Ctx, g: Tensor):
    kind, axes = c.arg
    x = c.x
    ge = g.expand(x.shape)
    if kind == "add":
        return (ge,)
    if kind == "mul":  # the product of the others, exact where x holds zeros
        zero = x == 0
        nonzero = zero.where(1, x)
        p = nonzero.prod(axes, keepdim=True).expand(x.shape)  # of the non-zero values
        zeros = _mask(zero, x).sum(axes, keepdim=True).expand(x.shape)
        others = zero.where((zeros == 1).where(p, 0), (zeros == 0).where(p / nonzero, 0))
        return (ge * others,)
    # max: the positions equal to the result share the gradient evenly
    hit = _mask(x == c.out.expand(x.shape), g)
    return (ge * hit / hit.sum(axes, keepdim=True).expand(x.shape),)


def _reverse_cumsum(g: Tensor, d: int) -> Tensor:
    return g._flip_view(d)._scan("add", d)._flip_view(d)


def _one_hot_sum(g: Tensor, idx: Tensor, d: int, size: int) -> Tensor:
    """``out[.., k, ..] = sum_j g[.., j, ..] * (idx[.., j, ..] == k)`` for k < size
    (a scatter-add along ``d``, as a fused compare and sum)."""
    from mlfuse.tensor import Tensor

    ks = Tensor.arange(size, dtype=idx.dtype, device=g.device)  # the new last dim
    hit = idx.unsqueeze(-1) == ks
    total = (g.unsqueeze(-1) * _mask(hit, g)).sum(d, keepdim=True)  # (.., 1, .., size)
    return total.movedim(-1, d).squeeze(d + 1)


@rule("scan")
def _scan(c: Ctx, g: Tensor):
    kind, d = c.arg
    x, out = c.x, c.out
    if kind == "add":
        return (_reverse_cumsum(g, d),)
    if kind == "mul":
        # d out_j / d x_i = prod_{k <= j, k != i} x_k for j >= i: out_j / x_i
        # before the first zero, the product over the others at the first zero,
        # 0 after it
        zero = x == 0
        seen = _mask(zero, x)._scan("add", d)  # zeros up to and at i
        before = seen == 0
        first = zero & (seen == 1)
        at_first = _reverse_cumsum(g * first.where(1, x)._scan("mul", d), d)
        upto = _reverse_cumsum(g * out, d) / before.where(x, 1)
        return (before.where(upto, first.where(at_first, 0)),)
    # max/min: out_j came from the last i <= j where x_i equals the running value
    from mlfuse.tensor import Tensor

    n = x.shape[d]
    shape = [1] * x.ndim
    shape[d] = n
    pos = Tensor.arange(n, dtype=dtypes.int64, device=x.device).reshape(shape).expand(x.shape)
    src = (x == out).where(pos, -1)._scan("max", d)
    return (_one_hot_sum(g, src, d, n),)


@rule("gather")
def _gather(c: Ctx, g: Tensor):
    """The source's gradient: each gathered element's gradient added at the
    position it was read from."""
    src, idx = c.srcs
    d = c.arg
    n = src.shape[d]
    where = idx.cast(dtypes.int64).clip(0, n - 1)  # the kernel clamps the same way
    out = _one_hot_sum(g, where, d, n)  # the index's shape, with dim d of size n
    grow = [(0, s - o) for s, o in zip(src.shape, out.shape)]
    return (out.pad(grow) if any(b for _, b in grow) else out, None)


@rule("pad")
def _pad(c: Ctx, g: Tensor):
    pairs, _ = c.arg
    return (g.shrink(tuple((b, b + n) for (b, _), n in zip(pairs, c.x.shape))),)


@rule("shrink")
def _shrink(c: Ctx, g: Tensor):
    return (g.pad(tuple((b, n - e) for (b, e), n in zip(c.arg, c.x.shape))),)


@rule("reshape")
def _reshape(c: Ctx, g: Tensor):
    return (g.reshape(c.x.shape),)


@rule("permute")
def _permute(c: Ctx, g: Tensor):
    inverse = sorted(range(len(c.arg)), key=lambda i: c.arg[i])
    return (g.permute(inverse),)


@rule("expand")
def _expand(c: Ctx, g: Tensor):
    x = c.x
    lead = g.ndim - x.ndim
    if lead:
        g = g.sum(tuple(range(lead)))
    axes = tuple(d for d, (s, n) in enumerate(zip(x.shape, g.shape)) if s == 1 and n != 1)
    return (g.sum(axes, keepdim=True) if axes else g,)


@rule("flip")
def _flip(c: Ctx, g: Tensor):
    return (g._flip_view(c.arg),)


@rule("stride")
def _stride(c: Ctx, g: Tensor):
    """Every k-th element was read: spread the gradient back with k - 1 zeros
    after each, then cut to the source's size."""
    for d, k in enumerate(c.arg):
        if k == 1:
            continue
        m = g.shape[d]
        g = g.unsqueeze(d + 1)
        g = g.pad(tuple((0, k - 1) if i == d + 1 else (0, 0) for i in range(g.ndim)))
        g = g.reshape(g.shape[:d] + (m * k,) + g.shape[d + 2 :])
        g = g.shrink(tuple((0, c.x.shape[d]) if i == d else (0, s) for i, s in enumerate(g.shape)))
    return (g,)


# ---------------------------------------------------------------------------
# the walk
# ---------------------------------------------------------------------------


def _tracked(n: Node) -> list[Node]:
    t = n.tape
    if not t:  # None, or a leaf
        return []
    for s in t[1]:
        if s.tape is None and s in _freed:
            raise _freed_error()
    return [s for s in t[1] if s.tape is not None]


def freed(n: Node) -> bool:
    """Whether a backward without retain_graph dropped ``n``'s recipe."""
    return n in _freed


def _freed_error() -> RuntimeError:
    return RuntimeError(
        "backward: trying to backward through the graph a second time: an earlier "
        "backward() freed the graph this tensor was computed from; pass "
        "retain_graph=True to that backward() to differentiate it again"
    )


_hooks: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
"""Node -> the functions ``Tensor.register_hook`` put on it, called in order
with its gradient once that is complete."""


class HookHandle:
    """What ``register_hook`` returns: ``handle.remove()`` takes the hook off."""

    def __init__(self, node: Node, fn: Callable):
        self._node, self._fn = weakref.ref(node), fn

    def remove(self) -> None:
        n = self._node()
        hooks = _hooks.get(n) if n is not None else None
        if hooks is not None and self._fn in hooks:
            hooks.remove(self._fn)


def register_hook(node: Node, fn: Callable) -> HookHandle:
    _hooks.setdefault(node, []).append(fn)
    return HookHandle(node, fn)


class _PostAccumulateHandle:
    def __init__(self, t: Tensor, fn: Callable):
        self._t, self._fn = weakref.ref(t), fn

    def remove(self) -> None:
        t = self._t()
        hooks = getattr(t, "_post_accumulate", None) if t is not None else None
        if hooks is not None and self._fn in hooks:
            hooks.remove(self._fn)


def register_post_accumulate_hook(t: Tensor, fn: Callable) -> _PostAccumulateHandle:
    """Keep ``fn`` on leaf ``t``: ``backward`` calls it after adding to ``t.grad``."""
    hooks = getattr(t, "_post_accumulate", None)
    if hooks is None:
        hooks = t._post_accumulate = []
    hooks.append(fn)
    return _PostAccumulateHandle(t, fn)


def _run_hook(hook: Callable, g: Tensor) -> Tensor:
    """``hook(g)``: a tensor of ``g``'s shape and dtype replaces it, None keeps it."""
    from mlfuse.tensor import Tensor

    r = hook(g)
    if r is None:
        return g
    if not isinstance(r, Tensor) or r.shape != g.shape or r.dtype != g.dtype:
        got = f"{r.shape} {r.dtype.name}" if isinstance(r, Tensor) else type(r).__name__
        raise RuntimeError(
            f"a gradient hook must return None or a tensor of the gradient's shape and dtype "
            f"({g.shape} {g.dtype.name}), got {got}"
        )
    return r


class GradFn:
    """How a tensor that needs a gradient was computed, as autograd sees it
    (PyTorch's ``grad_fn``): ``y.grad_fn.name()`` names the graph op
    (``"MulBackward"``), ``next_functions`` pairs each source that needs a
    gradient with its own ``GradFn`` (an :class:`AccumulateGrad` for a leaf) and
    a source that does not with None, each with output index 0 (none once a
    backward freed the graph). Equal when they describe the same graph node."""

    __slots__ = ("_node",)

    def __init__(self, node: Node):
        self._node = node

    def name(self) -> str:
        op = self._node.tape[0] if self._node.tape else _freed.get(self._node, self._node.op)
        return "".join(w.capitalize() for w in str(op).split("_")) + "Backward"

    @property
    def next_functions(self) -> tuple[tuple[GradFn | None, int], ...]:
        tape = self._node.tape
        return tuple((grad_fn_of(s, leaf=True), 0) for s in (tape[1] if tape else ()))

    def register_hook(self, fn: Callable) -> HookHandle:
        """Call ``fn(grad)`` with the gradient of this node's output (the
        tensor-level :meth:`~mlfuse.Tensor.register_hook`)."""
        return register_hook(self._node, fn)

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and other._node is self._node

    def __hash__(self) -> int:
        return hash((type(self), id(self._node)))

    def __repr__(self) -> str:
        return f"<{self.name()} object>"


class AccumulateGrad(GradFn):
    """The end of a ``next_functions`` chain: the leaf whose ``.grad`` the
    gradient is added to (``variable``)."""

    __slots__ = ()

    def name(self) -> str:
        return "AccumulateGrad"

    @property
    def variable(self) -> Tensor | None:
        """The leaf tensor, while one holding this node is alive."""
        return next((t for t in list(_holders.values()) if t.node is self._node), None)


def grad_fn_of(node: Node, leaf: bool = False) -> GradFn | None:
    """The :class:`GradFn` of ``node``: None when it needs no gradient; for a
    leaf, an :class:`AccumulateGrad` where ``leaf`` (as in ``next_functions``)
    else None (as a leaf tensor's ``grad_fn``)."""
    if node.tape is None:
        return GradFn(node) if node in _freed else None
    if node.tape is graph.LEAF:
        return AccumulateGrad(node) if leaf else None
    return GradFn(node)


_kept: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
"""Node -> how it was made, for nodes a backward without ``requires_grad``
walked through (tinygrad's rule): kept, as a tape is, when the node is
realized, so that a second backward of the same result walks them again."""


def _recipe(n: Node) -> tuple | None:
    """How ``n`` was made, for a walk over the whole graph: its tape when it
    has one, else its op while it is unrealized (None: a leaf, a realized
    value, or a detached one)."""
    if n.tape:
        return n.tape
    kept = _kept.get(n)
    if kept is not None:
        return kept
    if n.buffer is not None or not n.srcs or n.op == "detach":
        return None
    if n.op == "derivative":
        return (n.op, n.arg.srcs, n.arg)
    return (n.op, n.srcs, n.arg)


def _made_from(n: Node) -> list[Node]:
    r = _recipe(n)
    return list(r[1]) if r else []


def gradients(
    root: Node,
    seed: Tensor,
    wanted: Sequence[Node],
    create_graph: bool = False,
    whole_graph: bool = False,
) -> dict[int, Tensor]:
    """The gradients of ``root`` (its gradient is ``seed``) with respect to the
    ``wanted`` nodes, by id; a wanted node ``root`` does not depend on is
    missing. The walk is iterative (any graph depth) and visits only nodes on a
    path from ``root`` to a wanted node. It follows the tapes autograd recorded
    or, with ``whole_graph``, every unrealized op as well (tinygrad's
    ``Tensor.gradient``: any tensor the result was computed from is a target)."""
    from mlfuse.tensor import Tensor

    edges = _made_from if whole_graph else _tracked
    order = postorder([root], edges)  # sources first
    want = {id(n) for n in wanted}
    needed: set[int] = set()
    for n in order:
        if id(n) in want or any(id(s) in needed for s in edges(n)):
            needed.add(id(n))
    grads: dict[int, Tensor] = {id(root): seed}
    out: dict[int, Tensor] = {}
    with set_grad_enabled(create_graph):
        for n in reversed(order):
            if id(n) not in needed:
                continue
            g = grads.pop(id(n), None)
            if g is None:
                continue
            for hook in list(_hooks.get(n, ())):
                g = _run_hook(hook, g)
            if id(n) in want:
                # a tensor of its own, not a view holding the tensor it was taken from
                # alive (that one would look like an observer of the old parameters)
                out[id(n)] = Tensor(g.node)
            tape = _recipe(n) if whole_graph else n.tape
            if not tape:
                continue
            op, srcs, arg = tape
            if not any(id(s) in needed for s in srcs):
                continue
            if op in NOT_DIFFERENTIABLE:
                continue
            fn = GRADIENTS.get(op)
            if fn is None:
                raise RuntimeError(f"no gradient rule for '{op}' ({n.origin or op})")
            token = graph.origin.set(f"{n.origin or op} backward")
            try:
                ctx = Ctx(tuple(Tensor(s) for s in srcs), Tensor(n), arg)
                parts = fn(ctx, g)
            finally:
                graph.origin.reset(token)
            for s, gs in zip(srcs, parts):
                if gs is None or id(s) not in needed:
                    continue
                if gs.shape != s.shape or gs.dtype != s.dtype:
                    raise AssertionError(
                        f"gradient rule for '{op}' gave {gs.shape} {gs.dtype.name} for a "
                        f"source of {s.shape} {s.dtype.name}"
                    )
                prev = grads.get(id(s))
                grads[id(s)] = gs if prev is None else prev + gs
    return out


# tensors whose .grad backward() fills: leaves made with requires_grad, and
# tensors that asked for it with retain_grad()
# (keyed by id: a set would compare tensors with ==, which is elementwise)
_holders: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


_freed: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
"""Node -> its op, for nodes whose recipe a backward() without retain_graph
dropped (PyTorch's freed graph): a later backward through them says so; they
still need a gradient and are not leaves."""


def hold(t: Tensor) -> None:
    _holders[id(t)] = t


def holds(t: Tensor) -> bool:
    """Whether ``t`` keeps its gradient (``retain_grad``)."""
    return _holders.get(id(t)) is t


def release(t: Tensor) -> None:
    if holds(t):
        del _holders[id(t)]


def seed_for(t: Tensor, gradient, what: str) -> Tensor:
    """The gradient the walk starts from: ones for a one-element ``t``, else
    ``gradient`` (of ``t``'s shape, cast to its dtype)."""
    from mlfuse.errors import ArgumentError
    from mlfuse.tensor import Tensor

    if gradient is None:
        if t.numel() != 1:
            raise ArgumentError(
                f"{what}: a gradient can be created implicitly only for one-element "
                f"outputs, this one has shape {t.shape}; pass gradient="
            )
        return Tensor.ones(*t.shape, dtype=t.dtype, device=t.device)
    seed = gradient if isinstance(gradient, Tensor) else Tensor(gradient, device=t.device)
    if seed.shape != t.shape:
        raise ArgumentError(f"{what}: gradient has shape {seed.shape}, the tensor {t.shape}")
    return seed.cast(t.dtype)


def backward(
    t, gradient=None, retain_graph: bool | None = None, create_graph=False, grad_tensors=None,
    inputs=None,
) -> None:  # fmt: skip
    """``t.backward()``: add the gradients of ``t`` to the ``.grad`` of every
    leaf it depends on. PyTorch's ``torch.autograd.backward(tensors,
    grad_tensors)`` too: a sequence of tensors, each with its gradient; with
    ``inputs``, only those tensors' ``.grad`` changes."""
    from mlfuse.tensor import Tensor

    if gradient is None:
        gradient = grad_tensors
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is not None:
        ins = [inputs] if isinstance(inputs, Tensor) else list(inputs)
        got = grad(t, ins, gradient, retain_graph, create_graph, allow_unused=True)
        for x, g in zip(ins, got):
            if g is not None:
                x._set_grad(g if x.grad is None else x.grad + g)
        return
    if not isinstance(t, Tensor):
        ts = list(t)
        gs = [None] * len(ts) if gradient is None else (
            [gradient] if isinstance(gradient, Tensor) else list(gradient)
        )  # fmt: skip
        if len(gs) != len(ts):
            raise RuntimeError(f"backward: {len(gs)} gradients for {len(ts)} tensors")
        for k, (x, g) in enumerate(zip(ts, gs)):
            last = k == len(ts) - 1
            backward(x, g, retain_graph or not last, create_graph)
        return
    if t.node.tape is None:
        _backward_in_scope(t, gradient)
        return
    seed = seed_for(t, gradient, "backward")
    holders = [h for h in list(_holders.values()) if h.node.tape is not None]
    got = gradients(t.node, seed, [h.node for h in holders], create_graph)
    for h in holders:
        g = got.get(id(h.node))
        if g is None:
            continue
        if is_anomaly_check_nan_enabled():
            _check_anomaly(t, h, g)
        h._set_grad(g if h.grad is None else h.grad + g)
        for hook in list(getattr(h, "_post_accumulate", ())):
            hook(h)
    if not (retain_graph or create_graph):  # (PyTorch: retain_graph defaults to create_graph)
        for n in postorder([t.node], _tracked):
            if n.tape:  # a leaf keeps needing its gradient
                _freed[n] = n.tape[0]  # the op, for grad_fn's name
                n.tape = None


def _backward_in_scope(t: Tensor, gradient: Tensor | None) -> None:
    """``t.backward()`` where nothing ``t`` was computed from requires grad:
    tinygrad's rule, which has no ``requires_grad``. Every live float tensor
    ``t`` was computed from (through unrealized ops), ``t`` included, gets its
    gradient added to ``.grad``: ``x = Tensor([1.0, 2.0]); (x * x).sum().backward();
    x.grad``. The walk's recipes are kept (``_kept``), so calling it again
    accumulates the same gradients, realized values in between or not.
    Where PyTorch's rule applies (grad mode off, or a tensor of the graph
    requires grad: it was computed under ``no_grad``) this is PyTorch's
    error, as it is when no live float tensor is found."""
    from mlfuse.tensor import live_tensors

    error = RuntimeError(
        "backward: this tensor does not require grad (no input of it was made with "
        "requires_grad=True, or it was computed under mlfuse.no_grad())"
    )
    if not is_grad_enabled():
        raise error
    walk = postorder([t.node], _made_from)
    if any(n in _freed for n in walk):
        error = _freed_error()
    reach = {id(n) for n in walk}
    scope = [h for h in live_tensors() if id(h.node) in reach]
    if any(h.requires_grad for h in scope) or any(n in _freed for n in walk):
        raise error
    targets = [h for h in scope if h.dtype.is_float]
    if not targets:
        raise error
    seed = seed_for(t, gradient, "backward")
    got = gradients(t.node, seed, [h.node for h in targets], whole_graph=True)
    for n in walk:  # (tinygrad keeps the graph: the result may be differentiated again)
        r = _recipe(n)
        if r is not None:
            _kept[n] = r
    for h in targets:
        g = got.get(id(h.node))
        if g is not None:
            h._set_grad(g if h.grad is None else h.grad + g)


def grad(
    outputs=None,
    inputs=None,
    grad_outputs=None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
    *,
    argnums: int | Sequence[int] | None = None,
):
    """PyTorch's ``torch.autograd.grad``: the gradients of ``outputs`` (a tensor
    or a sequence, weighted by ``grad_outputs``) with respect to ``inputs``, as
    a tuple, leaving ``.grad`` alone: ``(dx,) = mlfuse.autograd.grad(loss, x,
    create_graph=True)``. An input the outputs do not depend on is an error
    unless ``allow_unused`` (its gradient is then None, or zeros with
    ``materialize_grads``).

    Given a function instead, it is the functional form ``mlfuse.grad(f)(*xs)``
    (:func:`grad_of`)."""
    from mlfuse.tensor import Tensor

    if outputs is None or (callable(outputs) and not isinstance(outputs, Tensor)):
        return grad_of(outputs, argnums if argnums is not None else inputs)
    if is_grads_batched:
        raise NotImplementedError("autograd.grad: is_grads_batched is not supported; use vmap")
    outs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    ins = [inputs] if isinstance(inputs, Tensor) else list(inputs or ())
    if not ins:
        raise RuntimeError("autograd.grad: inputs must name at least one tensor")
    for t in [*outs, *ins]:
        if not isinstance(t, Tensor):
            raise TypeError(f"autograd.grad: expected tensors, got {type(t).__name__}")
    if grad_outputs is None:
        seeds = [None] * len(outs)
    else:
        seeds = [grad_outputs] if isinstance(grad_outputs, Tensor) else list(grad_outputs)
        if len(seeds) != len(outs):
            raise RuntimeError(f"autograd.grad: {len(seeds)} grad_outputs for {len(outs)} outputs")
    for i, t in enumerate(ins):
        if not t.requires_grad:
            raise RuntimeError(f"autograd.grad: input {i} does not require grad")
    total: dict[int, Tensor] = {}
    for k, (out, seed) in enumerate(zip(outs, seeds)):
        if out.node.tape is None:
            raise RuntimeError(
                f"autograd.grad: element {k} of the outputs does not require grad and "
                "does not have a grad_fn"
            )
        got = gradients(out.node, seed_for(out, seed, "autograd.grad"), [t.node for t in ins],
                        create_graph)  # fmt: skip
        for key, g in got.items():
            total[key] = g if key not in total else total[key] + g
    res = []
    for i, t in enumerate(ins):
        g = total.get(id(t.node))
        if g is None:
            if not (allow_unused or materialize_grads):
                raise RuntimeError(
                    f"autograd.grad: input {i} was not used to compute the outputs; pass "
                    "allow_unused=True if that is intended"
                )
            g = Tensor.zeros_like(t) if materialize_grads else None
        res.append(g)
    return tuple(res)


def grad_of(fn: Callable | None = None, argnums: int | Sequence[int] | None = None):
    """``mlfuse.grad(f)(*xs)``: the gradients of ``f``'s one-element result with
    respect to its tensor arguments (those of ``argnums``, when given), as a
    tuple (one tensor when one is asked for); ``.grad`` of the arguments is
    left alone: ``dx, dw = mlfuse.grad(loss_fn)(x, w)``."""
    if fn is None:
        return functools.partial(grad_of, argnums=argnums)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        from mlfuse.tensor import Tensor

        picks = (
            [i for i, a in enumerate(args) if isinstance(a, Tensor)]
            if argnums is None
            else [argnums]
            if isinstance(argnums, int)
            else list(argnums)
        )
        args = list(args)
        for i in picks:
            if not isinstance(args[i], Tensor):
                raise TypeError(f"grad: argument {i} is not a Tensor")
            if not args[i].dtype.is_float:
                raise TypeError(
                    f"grad: argument {i} has dtype {args[i].dtype.name}; only float "
                    "tensors have gradients"
                )
            args[i] = args[i]._detached()._as_leaf()
        with enable_grad():
            out = fn(*args, **kwargs)
        if not isinstance(out, Tensor):
            raise TypeError(f"grad: the function returned {type(out).__name__}, not a Tensor")
        if out.numel() != 1:
            raise RuntimeError(
                f"grad: the function's result must have one element, got {out.shape}"
            )
        if out.node.tape is None:
            raise RuntimeError("grad: the function's result does not depend on its arguments")
        seed = Tensor.ones(*out.shape, dtype=out.dtype, device=out.device)
        got = gradients(out.node, seed, [args[i].node for i in picks])
        res = tuple(
            got[id(args[i].node)] if id(args[i].node) in got else Tensor.zeros_like(args[i])
            for i in picks
        )
        return res[0] if isinstance(argnums, int) else res

    return wrapper


from mlfuse.autograd import function  # noqa: E402, F401 - needs the recording switches above
from mlfuse.autograd.function import (  # noqa: E402, F401 - torch.autograd's names
    Function,
    FunctionCtx,
    once_differentiable,
)
from mlfuse.autograd import functional  # noqa: E402, F401 - torch.autograd.functional
from mlfuse.autograd.gradcheck import (  # noqa: E402, F401 - torch.autograd's names
    GradcheckError,
    gradcheck,
    gradgradcheck,
)


class _VariableMeta(type):
    def __instancecheck__(cls, obj) -> bool:
        from mlfuse.tensor import Tensor

        return isinstance(obj, Tensor)


class Variable(metaclass=_VariableMeta):
    """PyTorch's legacy ``Variable(tensor, requires_grad=False)``: the tensor
    itself (every tensor is a Variable: ``isinstance(t, Variable)``)."""

    def __new__(cls, data=None, requires_grad: bool = False, volatile: bool = False):
        from mlfuse.tensor import Tensor

        t = data if isinstance(data, Tensor) else Tensor(data if data is not None else [])
        if requires_grad:
            t.requires_grad_()
        return t


def inference_mode(mode: bool = True):
    """``torch.autograd.inference_mode``: :class:`mlfuse.inference_mode`."""
    from mlfuse.namespace import inference_mode as mode_

    return mode_(mode)
