"""The lazy graph behind :class:`mlfuse.Tensor`, and its translation to lazy IR.

Nodes are hash-consed: building the same op on the same inputs twice gives
the same node, so common subexpressions are shared before any IR exists.
Realizing turns a set of nodes into one ``func.func`` of lazy ops (realized
buffers are its arguments), compiles it (schedules are cached by the graph's
structure, so a repeated computation skips the compiler) and runs it; the
nodes then hold their buffers and forget how they were computed.

Every node lives on a device (a registered target's name). Ops take the device
of their sources, which must agree; a ``copy`` node moves a value to another
device and is realized by a transfer between the two targets.
"""

from __future__ import annotations

import contextlib
import contextvars
import gc
import math
import sys
import time
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue

from mlfuse import dtypes, profiler
from mlfuse.dtypes import DType
from mlfuse.helpers import GlobalCounters
from mlfuse.targets import Buffer, get_target
from mlfuse.utils import debug_level, postorder
from mlfuse.view import View, ViewStack

Shape = tuple[int, ...]

UNARY = (
    "neg",
    "recip",
    "sqrt",
    "exp",
    "exp2",
    "log",
    "log2",
    "sin",
    "cos",
    "abs",
    "floor",
    "ceil",
    "not",
)
BINARY = (
    "add",
    "sub",
    "mul",
    "div",
    "idiv",
    "mod",
    "max",
    "min",
    "pow",
    "and",
    "or",
    "xor",
    "shl",
    "shr",
    "cmplt",
    "cmple",
    "cmpeq",
    "cmpne",
)
MOVEMENT = ("reshape", "permute", "expand", "pad", "shrink", "flip", "stride")

origin: contextvars.ContextVar[str | None] = contextvars.ContextVar("origin", default=None)
"""The front-end call that is creating nodes (the outermost one wins)."""

grad_enabled: contextvars.ContextVar[bool] = contextvars.ContextVar("grad_enabled", default=True)
"""Whether new nodes record how they were made from nodes that need gradients
(``mlfuse.no_grad()`` turns it off)."""

LEAF: tuple = ()
"""The tape of a node whose gradient is wanted and that has no sources to
differentiate further (a tensor made with ``requires_grad=True``)."""


class Node:
    """One lazy value on a device: an op on source nodes, or a realized buffer
    read through a view (as a numpy array is: ``view`` None means the whole
    buffer, row-major). A realized constant keeps its scalar in ``arg`` and is
    a constant again in the programs that read it.

    Nodes count who holds them: ``refs`` counts the :class:`~mlfuse.Tensor`
    objects whose value they are, ``readers`` the live nodes that have them as
    a source. Realizing an assign uses the counts to tell whether the old value
    of its target can still be observed (then the assign writes a new buffer
    instead of the old one: a tensor never changes its value).
    """

    __slots__ = (
        "op",
        "srcs",
        "arg",
        "shape",
        "dtype",
        "device",
        "buffer",
        "view",
        "origin",
        "key",
        "refs",
        "readers",
        "tape",
        "__weakref__",
    )

    def __init__(
        self, op: str, srcs: tuple[Node, ...], arg: Any, shape: Shape, dtype: DType, device: str
    ):
        self.op, self.srcs, self.arg, self.shape, self.dtype = op, srcs, arg, shape, dtype
        self.device = device
        self.buffer: Buffer | None = None
        self.view: View | None = None
        self.origin = origin.get()
        self.key: tuple | None = None
        self.refs = 0
        self.readers = 0
        self.tape: tuple | None = None  # autograd: see `make` and mlfuse.autograd
        for s in srcs:
            s.readers += 1

    def __del__(self) -> None:
        try:
            for s in self.srcs:
                s.readers -= 1
            if self.buffer is not None:
                _release(self.buffer)
        except Exception:  # pragma: no cover - interpreter shutdown
            pass

    @property
    def realized(self) -> bool:
        return self.buffer is not None

    def become(self, buffer: Buffer, view: View | None = None) -> None:
        """This node is now ``buffer`` read through ``view``; it forgets its sources."""
        # leave the hash-cons table: the key names sources this node no longer
        # keeps alive, whose ids may be reused
        if self.key is not None and _nodes.get(self.key) is self:
            del _nodes[self.key]
        _transfers.discard(self)
        for s in self.srcs:
            s.readers -= 1
        while buffer.base is not None:  # a window (an output viewing an input): its base
            v = view if view is not None else View.create(self.shape)
            view = View.create(v.shape, v.strides, v.offset + buffer.base_offset, v.mask)
            buffer = buffer.base
        if view is not None and view.contiguous and buffer.size == view.size:
            view = None  # the whole buffer, row-major
        self.op, self.srcs, self.arg, self.key = "buffer", (), None, None
        self.buffer, self.view = buffer, view
        _retain(buffer)

    def __repr__(self) -> str:
        return f"<Node {self.op} {self.shape} {self.dtype.name}>"


_users: dict[int, int] = {}
"""id(buffer) -> how many live nodes are realized as (views of) it."""


def _retain(b: Buffer) -> None:
    _users[id(b)] = _users.get(id(b), 0) + 1


def _release(b: Buffer) -> None:
    n = _users[id(b)] - 1
    if n:
        _users[id(b)] = n
    else:
        del _users[id(b)]


def buffer_users(b: Buffer) -> int:
    """How many live nodes are realized as (views of) ``b``."""
    return _users.get(id(b), 0)


_nodes: weakref.WeakValueDictionary[tuple, Node] = weakref.WeakValueDictionary()
_transfers: weakref.WeakSet[Node] = weakref.WeakSet()
"""Live, unrealized copies between devices (realize looks for them only when there are some)."""


def _device(op: str, srcs: Sequence[Node], device: str | None) -> str:
    """The device of a new node: ``device`` for sources and copies, else its sources' one."""
    if device is not None:
        return device
    dev = srcs[0].device
    for s in srcs[1:]:
        if s.device != dev:
            raise ValueError(
                f"{origin.get() or op}: expected all tensors to be on the same device, but found "
                f"{dev} and {s.device} (move one with .to())"
            )
    return dev


class Derivative:
    """The argument of a ``derivative`` node: the value of its one source, and
    for autograd the gradient rule ``rule(ctx, g)`` of a composite function
    with respect to ``srcs`` (its inputs), in place of differentiating the ops
    that compute it. Special functions are computed by branches, series and
    continued fractions whose derivatives are long and, at the points a branch
    is not taken, NaN (0 * inf); their rules are the closed forms
    (``erf'(x) = 2/sqrt(pi) exp(-x^2)``) PyTorch uses.

    Programs see the node as its source (it lowers to nothing); the keys of
    compiled programs see only ``name``, so equal programs share kernels and
    no cache holds the inputs alive (the key that shares equal nodes holds
    the inputs' ids, as every node key holds its sources')."""

    __slots__ = ("name", "srcs", "rule")

    def __init__(self, name: str, srcs: tuple[Node, ...], rule) -> None:
        self.name, self.srcs, self.rule = name, srcs, rule

    def __repr__(self) -> str:
        return f"Derivative({self.name})"


def exact_key(arg: Any) -> Any:
    """``arg`` as a dict key that tells apart what ``==`` does not: -0.0 and
    0.0 (equal, and equally hashed, but different constants: -0.0 + 0.0 is 0.0)."""
    if isinstance(arg, Derivative):
        return ("derivative", arg.name, tuple(id(s) for s in arg.srcs))
    if isinstance(arg, float):
        return (arg, math.copysign(1.0, arg))
    if isinstance(arg, tuple):
        return tuple(exact_key(a) for a in arg)
    return arg


def make(
    op: str, srcs: Sequence[Node], arg: Any, shape: Shape, dtype: DType, device: str | None = None
) -> Node:
    """The node for ``op(srcs, arg)``, shared with an identical live one.

    ``device`` is given for nodes without sources and for copies; other nodes
    are on their sources' device.
    """
    srcs = tuple(srcs)
    dev = _device(op, srcs, device)
    key = (op, tuple(map(id, srcs)), exact_key(arg), shape, dtype, dev)
    n = _nodes.get(key)
    if n is None:
        n = Node(op, srcs, arg, shape, dtype, dev)
        n.key = key
        _nodes[key] = n
        if op == "copy" and srcs[0].device != dev:
            _transfers.add(n)
    if n.tape is None:
        n.tape = _tape(op, srcs, arg)
    elif not grad_enabled.get() and n.tape is not LEAF and op != "detach":
        # built before with recording on: the same value, but nothing recorded now
        return make("detach", (n,), None, shape, dtype)
    return n


def _tape(op: str, srcs: tuple[Node, ...], arg: Any) -> tuple | None:
    """What a new node records for autograd: ``(op, srcs, arg)`` when some source
    needs a gradient and recording is on (the node may be realized later and
    forget its sources; the tape keeps them)."""
    if op == "detach" or not grad_enabled.get():
        return None
    if op == "derivative":  # differentiated with respect to the function's inputs
        srcs = arg.srcs
    for s in srcs:
        if s.tape is not None:
            return (op, srcs, arg)
    return None


def buffer(array: np.ndarray, device: str) -> Node:
    """A realized node on ``device`` holding a copy of ``array``."""
    dt = dtypes.from_numpy(array.dtype)
    n = Node("buffer", (), None, tuple(int(s) for s in array.shape), dt, device)
    n.become(get_target(device).from_numpy(array))
    return n


def adopted(array: np.ndarray, device: str) -> Node:
    """A realized node on ``device`` over ``array``'s memory where the target can
    use it in place (zero-copy), else over a copy."""
    dt = dtypes.from_numpy(array.dtype)
    n = Node("buffer", (), None, tuple(int(s) for s in array.shape), dt, device)
    n.become(get_target(device).adopt(array))
    return n


def shared_array(n: Node) -> np.ndarray | None:
    """A realized node's values as a host array aliasing its buffer (strided
    like its view), or None where that is impossible (device memory, masks)."""
    assert n.buffer is not None
    if n.dtype == dtypes.bfloat16:
        return None  # numpy has no bfloat16: its values are only ever copied out
    flat = get_target(n.buffer.device).share(n.buffer)
    if flat is None:
        return None
    if n.view is None:
        return flat[: math.prod(n.shape)].reshape(n.shape)
    v = n.view
    if v.mask is not None:
        return None
    item = flat.dtype.itemsize
    return np.lib.stride_tricks.as_strided(
        flat[v.offset :], v.shape, tuple(st * item for st in v.strides)
    )


def host_array(n: Node) -> np.ndarray:
    """A realized node's values as a new host array of its shape (bfloat16 values
    as float32: numpy has no bfloat16)."""
    assert n.buffer is not None
    flat = dtypes.from_storage(get_target(n.buffer.device).to_numpy(n.buffer), n.dtype)
    if n.view is None:
        return flat.reshape(n.shape)
    v = n.view
    item = flat.itemsize
    strided = np.lib.stride_tricks.as_strided(
        flat[v.offset :], v.shape, tuple(st * item for st in v.strides), writeable=False
    )
    return np.array(strided)


def unique(op: str, srcs: Sequence[Node], arg: Any, shape: Shape, dtype: DType) -> Node:
    """A node that is never shared (assigns have an effect)."""
    srcs = tuple(srcs)
    n = Node(op, srcs, arg, shape, dtype, _device(op, srcs, None))
    n.tape = _tape(op, srcs, arg)
    if op == "assign":
        _write_count[0] += 1
        _writes[_write_count[0]] = n
        _write_keys[n] = _write_count[0]
    return n


_write_count = [0]
_write_keys: weakref.WeakKeyDictionary[Node, int] = weakref.WeakKeyDictionary()
_writes: weakref.WeakValueDictionary[int, Node] = weakref.WeakValueDictionary()
"""Assigns (writes into realized buffers) not done yet. A realize on their device
does them too, as PyTorch would have done them already: a buffer's pending
write is never left behind a later write that reads what it would have read
(batch norm's running statistics, updated in the forward pass, then the
optimizer's in-place step), and a write's graph does not grow step by step."""


# ---------------------------------------------------------------------------
# graph -> lazy IR
# ---------------------------------------------------------------------------


def toposort(outputs: Sequence[Node]) -> list[Node]:
    """Unrealized nodes feeding ``outputs``, sources first (iterative: deep graphs ok)."""
    return postorder(outputs, lambda n: () if n.realized else n.srcs)


@dataclass
class Graph:
    """The unrealized nodes feeding some outputs, all on one device."""

    nodes: list[Node]  # sources first
    args: list[Node]  # realized inputs
    buffers: list[Buffer]  # their distinct buffers, in argument order
    windows: list[tuple[int, int] | None]  # per buffer: the part read (start, size); None: all
    outputs: list[Node]
    key: tuple  # the structure (equal keys: equal programs)
    device: str
    copies: set[int]  # ids of the assigns that write a new buffer (see copy_on_write)
    form: tuple = ()  # the key with the values of scalar constants left out
    scalars: tuple = ()  # (position in nodes, value key) of each scalar constant


def collect(outputs: Sequence[Node], nodes: list[Node] | None = None) -> Graph:
    """The graph computing ``outputs`` (``nodes``: their ``toposort``, if known)."""
    nodes = toposort(outputs) if nodes is None else nodes
    device = outputs[0].device
    for n in nodes:
        if n.device != device:
            raise ValueError(
                f"one schedule runs on one device, but this graph uses {device} and {n.device}"
                + (" (realize the copy between them first)" if n.op == "copy" else "")
            )
    index = {id(n): i for i, n in enumerate(nodes)}
    args = [n for n in nodes if n.realized and n.arg is None]
    slot: dict[int, int] = {}
    buffers: list[Buffer] = []
    for n in args:
        if id(n.buffer) not in slot:
            slot[id(n.buffer)] = len(buffers)
            buffers.append(n.buffer)  # type: ignore[arg-type]
    copies = copy_on_write(nodes, outputs)
    windows = input_windows(nodes, args, buffers, slot, device)
    struct = tuple(
        ("realized const", exact_key(n.arg), n.shape, n.dtype.name)
        if n.realized and n.arg is not None
        else (
            "arg",
            slot[id(n.buffer)],
            _window_size(n.buffer, windows[slot[id(n.buffer)]]),  # type: ignore[arg-type]
            n.shape,
            n.dtype.name,
            arg_view(n, windows[slot[id(n.buffer)]]),
        )
        if n.realized
        else (
            "assign-copy" if id(n) in copies else n.op,
            n.arg.name if n.op == "derivative" else exact_key(n.arg),
            n.shape,
            n.dtype.name,
            tuple(index[id(s)] for s in n.srcs),
        )
        for n in nodes
    )
    key = (device, struct, tuple(index[id(o)] for o in outputs))
    scalars = tuple(
        (i, struct[i][1])
        for i, n in enumerate(nodes)
        if (n.op == "const" or n.realized and n.arg is not None) and math.prod(n.shape) == 1
    )
    if scalars:
        form_struct = list(struct)
        for i, _ in scalars:
            form_struct[i] = (struct[i][0], None, *struct[i][2:])
        form = (device, tuple(form_struct), key[2])
    else:
        form = key
    return Graph(nodes, args, buffers, windows, list(outputs), key, device, copies, form, scalars)


def input_windows(
    nodes: Sequence[Node],
    args: Sequence[Node],
    buffers: Sequence[Buffer],
    slot: dict[int, int],
    device: str,
) -> list[tuple[int, int] | None]:
    """The part of each input buffer a graph reads, as ``(start, size)``, or
    None to pass the whole buffer.

    A graph reading a slice of a realized tensor (``x[i]``, a batch
    ``X[i * b:(i + 1) * b]``, step ``t`` of a sequence) is compiled for the
    elements it reads, seen through views relative to the slice's start, and
    runs on a window of the buffer there (:meth:`Target.window`): the next
    slice of the same shape is the same program, not a new compile. The start
    is rounded down to the target's ``window_alignment``, so vector accesses
    keep the alignment they have in the whole buffer. Buffers the graph
    assigns are passed whole."""
    target = get_target(device)
    align = target.window_alignment
    out: list[tuple[int, int] | None] = [None] * len(buffers)
    if align is None:
        return out
    ranges: dict[int, tuple[int, int]] = {}
    whole: set[int] = set()
    for n in nodes:
        t = n.srcs[0] if n.op == "assign" else None
        if t is not None and t.realized and t.arg is None:
            whole.add(slot[id(t.buffer)])
    for n in args:
        i = slot[id(n.buffer)]
        r = (0, n.buffer.size - 1) if n.view is None else n.view.offset_range()  # type: ignore[union-attr]
        if r is not None:
            lo, hi = ranges.get(i, r)
            ranges[i] = (min(lo, r[0]), max(hi, r[1]))
    for i, (lo, hi) in ranges.items():
        b = buffers[i]
        step = max(align // b.dtype.itemsize, 1)
        lo = lo // step * step
        if i not in whole and (lo > 0 or hi + 1 < b.size):
            out[i] = (lo, hi + 1 - lo)
    return out


def _window_size(b: Buffer, w: tuple[int, int] | None) -> int:
    return b.size if w is None else w[1]


def arg_view(n: Node, w: tuple[int, int] | None) -> View | None:
    """The view through which realized node ``n`` reads its buffer's window
    ``w`` (None: the whole window, row-major)."""
    if w is None:
        return n.view
    v = n.view if n.view is not None else View.create(n.shape)
    v = View.create(v.shape, v.strides, v.offset - w[0], v.mask)
    return None if v.contiguous and v.size == w[1] else v


def copy_on_write(nodes: Sequence[Node], outputs: Sequence[Node]) -> set[int]:
    """The assigns of a realize that must write a new buffer instead of their
    target's (ids). An assign writes in place only when nothing can observe its
    target's old value afterwards: no tensor holds the old value, no node
    outside this realize reads it, no other node shares its buffer or assigns
    it here, its view is the whole buffer, no node of this realize that stays
    lazy and is still reachable from outside depends on it, and no node needs
    both the old value and the new one (no kernel order could serve it)."""
    assigns = [n for n in nodes if n.op == "assign"]
    if not assigns:
        return set()
    inside: dict[int, int] = {}  # readers from this realize's unrealized nodes
    for n in nodes:
        for s in n.srcs:
            inside[id(s)] = inside.get(id(s), 0) + 1
    pending = {id(o) for o in outputs}
    per_buffer: dict[int, int] = {}
    for a in assigns:
        t = a.srcs[0]
        if t.realized:
            per_buffer[id(t.buffer)] = per_buffer.get(id(t.buffer), 0) + 1
    # other realized nodes of this realize on a target's buffer (views of it,
    # see fold_views): they read the target's old value as a lazy view would
    targets: dict[int, frozenset[int]] = {}  # id(buffer) -> ids of the targets on it
    for a in assigns:
        t = a.srcs[0]
        if t.realized:
            targets[id(t.buffer)] = targets.get(id(t.buffer), frozenset()) | {id(t)}
    sharers: dict[int, list[Node]] = {}
    for n in nodes:
        if n.realized and n.arg is None and id(n.buffer) in targets:
            sharers.setdefault(id(n.buffer), []).append(n)
    # which targets' old values each node reads (transitively, not through their
    # assigns), and which assigns it reads the new values of
    assigning = {id(a) for a in assigns}
    reads: dict[int, frozenset[int]] = {}
    after: dict[int, frozenset[int]] = {}
    observed: set[int] = set()
    both: set[int] = set()  # targets some node needs before and after their assign
    for n in nodes:
        r = targets.get(id(n.buffer), frozenset()) if n.realized else frozenset()
        w: frozenset[int] = frozenset()  # assigns whose results n reads
        for s in n.srcs:
            if id(s) not in assigning:
                r |= reads.get(id(s), frozenset())
            w |= after.get(id(s), frozenset())
        reads[id(n)] = r
        after[id(n)] = w | {id(n)} if id(n) in assigning else w
        if r and w:
            both |= {id(a.srcs[0]) for a in assigns if id(a) in w} & r
        outside = n.refs > 0 or n.readers > inside.get(id(n), 0)
        if not n.realized and id(n) not in pending and outside:
            observed |= r
    copies = set()
    for a in assigns:
        t = a.srcs[0]
        views = sharers.get(id(t.buffer), []) if t.realized else []
        in_place = (
            t.realized
            and t.arg is None  # a realized constant is not an argument
            and t.view is None
            and all(v.refs == 0 and v.readers == inside.get(id(v), 0) for v in views)
            and buffer_users(t.buffer) == len(views)  # type: ignore[arg-type]
            and per_buffer[id(t.buffer)] == 1
            and id(t) not in observed
            and id(t) not in both  # one kernel cannot run both before and after it
        )
        if not in_place:
            copies.add(id(a))
    return copies


def _op(n: Node, v: list[SSAValue]) -> Operation:
    from mlfuse.dialects import lazy

    t = lazy.tensor_type(n.shape, n.dtype.ir())
    match n.op:
        case "const":
            return lazy.ConstOp(n.arg, t)
        case op if op in UNARY:
            return _UNARY[op](v[0])
        case op if op in BINARY:
            return _BINARY[op](v[0], v[1])
        case "where":
            return lazy.WhereOp(v[0], v[1], v[2])
        case "mulacc":
            return lazy.MulaccOp(v[0], v[1], v[2])
        case "cast":
            return lazy.CastOp(v[0], t)
        case "bitcast":
            return lazy.BitcastOp(v[0], t)
        case "reduce":
            kind, axes = n.arg
            return lazy.ReduceOp(kind, v[0], axes)
        case "scan":  # arg: (kind, dim)
            kind, d = n.arg
            return lazy.ScanOp(kind, v[0], d)
        case "gather":  # srcs: (source, index); arg: the gathered dim
            return lazy.GatherOp(v[0], v[1], n.arg)
        case "pad":
            pairs, value = n.arg
            return lazy.PadOp.build(v[0], pairs, value=value)
        case op if op in MOVEMENT:  # each movement op's argument is the node's
            return _MOVEMENT[op].build(v[0], n.arg)
        case "contiguous":
            return lazy.ContiguousOp(v[0])
        case "copy":
            return lazy.CopyOp(v[0], n.arg)
        case "assign":
            return lazy.AssignOp(v[0], v[1])
    raise ValueError(f"unknown lazy op '{n.op}'")


def node_form(op: Operation) -> tuple[str, Any]:
    """The graph op name and argument of lazy op ``op`` (the inverse of
    :func:`_op`); ValueError for an op no graph node makes (``lazy.view``)."""
    from mlfuse.dialects import lazy

    match op:
        case lazy.ConstOp():
            return "const", op.scalar
        case lazy.UnaryOp() | lazy.BinaryOp():
            return op.KIND, None
        case lazy.WhereOp():
            return "where", None
        case lazy.MulaccOp():
            return "mulacc", None
        case lazy.CastOp():
            return "cast", None
        case lazy.BitcastOp():
            return "bitcast", None
        case lazy.ReduceOp():
            return "reduce", (op.reduce_kind, tuple(op.reduce_axes))
        case lazy.ScanOp():
            return "scan", (op.scan_kind, op.scan_dim)
        case lazy.GatherOp():
            return "gather", op.gather_dim
        case lazy.PadOp():
            return "pad", (op.arg, op.pad_value)
        case lazy.ViewOp():
            raise ValueError(
                f"'{op.name}' (a composed view) has no graph form: run this before "
                "lazy-canonicalize, on the movement ops"
            )
        case lazy.MovementOp():
            return op.name.removeprefix("lazy."), op.arg
        case lazy.ContiguousOp():
            return "contiguous", None
        case lazy.CopyOp():
            return "copy", op.device.data
        case lazy.AssignOp():
            return "assign", None
    raise ValueError(f"'{op.name}' is not a lazy op")


def _tables():
    from mlfuse.dialects import lazy

    return (
        {c.KIND: c for c in lazy.UNARY_OPS},
        {c.KIND: c for c in lazy.BINARY_OPS},
        {c.name.removeprefix("lazy."): c for c in lazy.MOVEMENT_OPS},
    )


_UNARY, _BINARY, _MOVEMENT = _tables()


def to_module(g: Graph) -> ModuleOp:
    """One ``func.func @main`` computing ``g.outputs``; its arguments are
    ``g.buffers`` (their windows, ``g.windows``). A buffer read by one node as
    a whole is an argument of that node's shape; otherwise the argument is flat
    and each node reads it through its view (a ``lazy.view``)."""
    from mlfuse.dialects import lazy
    from mlfuse.passes.utils import name_loc
    from mlfuse.view import ViewStack

    slot = {id(b): i for i, b in enumerate(g.buffers)}
    readers: dict[int, list[Node]] = {}
    for n in g.args:
        readers.setdefault(slot[id(n.buffer)], []).append(n)
    views = {id(n): arg_view(n, g.windows[slot[id(n.buffer)]]) for n in g.args}
    # an assign in place writes its target's argument itself; other nodes on
    # that buffer (views of it) read the argument through their views
    in_place = {id(n.srcs[0]) for n in g.nodes if n.op == "assign" and id(n) not in g.copies}
    whole: dict[int, Node] = {}
    for i, ns in readers.items():
        target = next((n for n in ns if id(n) in in_place), None)
        if target is not None:
            whole[i] = target
        elif len(ns) == 1 and views[id(ns[0])] is None:
            whole[i] = ns[0]
    types = [
        lazy.tensor_type(
            whole[i].shape if i in whole else (_window_size(b, g.windows[i]),), b.dtype.ir()
        )
        for i, b in enumerate(g.buffers)
    ]
    block = Block(arg_types=types)
    for i, a in enumerate(block.args):
        a.name_hint = f"in{i}"
    value: dict[int, SSAValue] = {}
    for n in g.nodes:
        if n.realized and n.arg is not None:  # a realized constant: still a constant
            op = lazy.ConstOp(n.arg, lazy.tensor_type(n.shape, n.dtype.ir()))
        elif n.realized:
            i = slot[id(n.buffer)]
            if whole.get(i) is n:
                value[id(n)] = block.args[i]
                continue
            view = views[id(n)] or View.create(n.shape)
            op = lazy.ViewOp.build(block.args[i], ViewStack((view,)))
        elif n.op in ("detach", "derivative"):  # the same value: no op
            value[id(n)] = value[id(n.srcs[0])]
            continue
        elif id(n) in g.copies:  # the assign writes a new buffer: its value, materialized
            op = lazy.ContiguousOp(value[id(n.srcs[1])])
        else:
            op = _op(n, [value[id(s)] for s in n.srcs])
        if n.origin:
            op.location = name_loc(n.origin)
        block.add_op(op)
        value[id(n)] = op.results[0]
    outs = [value[id(o)] for o in g.outputs]
    block.add_op(func.ReturnOp(*outs))
    f = func.FuncOp("main", ([a.type for a in block.args], [v.type for v in outs]), Region(block))
    return ModuleOp([f])


# ---------------------------------------------------------------------------
# realize
# ---------------------------------------------------------------------------

PROGRAM_CACHE_SIZE = 1024
"""Compiled schedules kept in memory (least recently used ones are dropped)."""

_programs: OrderedDict[tuple, object] = OrderedDict()
_first_scalars: OrderedDict[tuple, dict[int, Any]] = OrderedDict()
"""A program's form -> the scalar constants it was first compiled with (as many
forms as programs are kept)."""
_dynamic: dict[tuple, frozenset[int]] = {}
"""A program's form -> the positions of the scalar constants that have changed
since (they are kernel arguments in its programs from then on)."""


def with_dynamic_scalars(g: Graph) -> Graph:
    """``g``, or ``g`` collected again with some scalar constants made arguments.

    The first program of a form (a structure up to its scalar constants) is
    compiled with its constants; when the same form comes back with other
    values, the scalars that differ become one-element buffers (arguments) in
    every later program of that form, so a value that changes each call (a
    learning rate, a step count) costs one more compile, not one per value, as
    Inductor's recompilation with dynamic sizes does. Constant folding is kept
    for the scalars that never change."""
    if not g.scalars or g.key in _programs:
        return g
    first = _first_scalars.get(g.form)
    if first is None:
        _first_scalars[g.form] = dict(g.scalars)
        if len(_first_scalars) > PROGRAM_CACHE_SIZE:
            old, _ = _first_scalars.popitem(last=False)
            _dynamic.pop(old, None)
        return g
    dyn = _dynamic.get(g.form, frozenset()) | {i for i, v in g.scalars if first[i] != v}
    if not dyn:
        return g
    _dynamic[g.form] = dyn
    target = get_target(g.device)
    for i in dyn:
        n = g.nodes[i]
        if n.realized:
            n.arg = None  # a realized constant's buffer holds its value: an argument now
        else:
            host = dtypes.to_storage(np.full(n.shape, n.arg), n.dtype)
            n.become(target.from_numpy(host))
    return collect(g.outputs)


def compiled_for(g: Graph):
    """The compiled schedule for the graph's structure: from memory, from the
    disk cache, or compiled (and saved there)."""

    c = _programs.get(g.key)
    if c is None:
        from mlfuse.runtime.compile_cache import load_schedule

        name = repr(g.key)  # names the program on disk: its structure, as printed
        c = load_schedule(name, g.device)
        if c is not None and debug_level() >= 1:
            print(f"mlfuse: loaded a schedule for {g.device} from the disk cache", file=sys.stderr)
        if c is None:
            from mlfuse.driver import compile_module

            t0 = time.perf_counter()
            with gc_paused():
                c = compile_module(to_module(g), g.device, cache_key=name)
            if profiler.active():
                profiler.compiled(time.perf_counter() - t0, t0, len(c.items))
        _programs[g.key] = c
        if len(_programs) > PROGRAM_CACHE_SIZE:
            _programs.popitem(last=False)
    else:
        _programs.move_to_end(g.key)
    return c


@contextlib.contextmanager
def gc_paused():
    """Pause Python's cyclic garbage collector while compiling.

    Compiling allocates many IR objects; each full collection walks the whole
    heap, so with the collector on, compile time per op grows with the graph
    (1.45x per op from 1k to 8k ops in bench/compile_scale.py; flat without).
    The cycles compiling leaves are collected once the collector runs again.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


@dataclass
class Run:
    """One program run by a realize: what ``mlfuse.jit`` captures and replays."""

    program: Any  # runtime.executor.Program
    inputs: list[Buffer]
    outputs: list  # runtime.executor.Result
    copied_assigns: bool  # an assign wrote a new buffer instead of its target's
    windows: list[tuple[int, int] | None]  # the part of each input read (see input_windows)


_recording: list[Run] | None = None
"""While ``mlfuse.jit`` captures a call: every program run, in order."""
_recording_random: dict[int, tuple] | None = None
"""While ``mlfuse.jit`` captures: the buffers of tensors drawn from the global random
generator, by id, with how to draw them again (``runtime/jit.py``)."""


def _transfer_copies(outputs: Sequence[Node]) -> None:
    """Realize the copies between devices that ``outputs`` need, sources first."""
    for n in toposort(outputs):
        if n.op == "copy" and n.srcs[0].device != n.device:
            if _recording is not None:
                raise RuntimeError(
                    "mlfuse.jit: a jitted function moved a tensor between devices "
                    f"({n.srcs[0].device} -> {n.device}); transfers are not captured"
                )
            src = n.srcs[0]
            realize([src])
            # the values src shows (its view of its buffer), in a buffer of their own
            host = dtypes.to_storage(np.ascontiguousarray(host_array(src)), src.dtype)
            n.become(get_target(n.device).from_numpy(host))
            n.arg = src.arg  # a realized constant stays one


def flush_writes() -> None:
    """Do every write still pending (on every device)."""
    todo = [w for _, w in sorted(_writes.items()) if not w.realized]
    if todo:
        realize(todo)


def realize(nodes: Sequence[Node]) -> None:
    """Compute ``nodes`` and the writes still pending on their devices (see ``_writes``)."""
    pending: list[Node] = []
    for n in nodes:
        if not n.realized and all(n is not p for p in pending):
            pending.append(n)
    if not pending:
        return
    if _writes:
        devices = {n.device for n in pending}
        for _, w in sorted(_writes.items()):  # in program order: schedules stay the same
            if not w.realized and w.device in devices and all(w is not p for p in pending):
                pending.append(w)
    if _transfers:
        _transfer_copies(pending)
    for device in dict.fromkeys(n.device for n in pending):
        _realize_on([n for n in pending if n.device == device and not n.realized])


def fold_views(pending: Sequence[Node]) -> list[Node] | None:
    """Realize each movement op of a realized tensor as a view of its buffer.

    ``x[i]``, ``x.T`` or ``x.reshape(...)`` of a realized ``x`` is what numpy
    and PyTorch make it: the same memory, another view (when one view without
    a mask expresses it; a pad or a reshape that needs a stack stays lazy).
    The programs that read it then see a realized input read through a view,
    and :func:`input_windows` can compile them for the part they read. An
    assign's target stays as it is (a write through a view is the front end's
    business). Returns ``toposort(pending)`` when nothing was folded (the
    walk :func:`collect` would repeat), else None."""
    nodes = toposort(pending)
    targets = {id(n.srcs[0]) for n in nodes if n.op == "assign"}
    folded = False
    for n in nodes:
        if n.op not in MOVEMENT or n.op == "pad" or id(n) in targets:
            continue
        s = n.srcs[0]
        if not s.realized or s.arg is not None:
            continue
        stack = _MOVEMENT[n.op].transform(
            ViewStack((s.view if s.view is not None else View.create(s.shape),)), n.arg
        )
        if len(stack.views) == 1 and stack.top.mask is None:
            n.become(s.buffer, stack.top)  # type: ignore[arg-type]
            folded = True
    return None if folded else nodes


def to_compute(nodes: Sequence[Node]) -> list[Node]:
    """The nodes of ``nodes`` a program must compute once views are folded."""
    fold_views([n for n in nodes if not n.realized])
    return [n for n in nodes if not n.realized]


def _realize_on(pending: list[Node]) -> None:
    """Compute ``pending`` (unrealized nodes of one device, no copies between devices)."""
    todo = [n for n in pending if not n.realized]
    nodes = fold_views(todo)
    pending = [n for n in todo if not n.realized]
    if not pending:
        return
    g = with_dynamic_scalars(collect(pending, nodes))
    c = compiled_for(g)

    trace = None
    printing = debug_level() >= 2
    if printing or profiler.active():  # each launch timed (and waited for)
        items = {it.name: it for it in c.items}  # type: ignore[attr-defined]
        trace = lambda launch, run: _trace(launch, run, items.get(launch.name), g.device, printing)  # noqa: E731
    t0 = time.perf_counter()
    outs = c.program.run(g.buffers, trace=trace, windows=g.windows)  # type: ignore[attr-defined]
    GlobalCounters.ran(c.items, time.perf_counter() - t0)  # type: ignore[attr-defined]
    if _recording is not None:  # mlfuse.jit is capturing
        _recording.append(Run(c.program, list(g.buffers), outs, bool(g.copies), g.windows))  # type: ignore[attr-defined]
    if printing:
        for line in c.items.not_fused:  # type: ignore[attr-defined]
            print(f"mlfuse: not fused: {line}", file=sys.stderr)
    for n, r in zip(pending, outs):
        n.become(r.buffer, r.view)
        n.arg = r.constant  # a known constant stays one in later programs
    for n in g.nodes:
        if n.op != "assign":
            continue
        _writes.pop(_write_keys.pop(n, 0), None)  # done: in place, or into what reads it
        # an assign done in place has happened: it is its target's buffer now
        # (left lazy, a later program would apply it a second time)
        if id(n) not in g.copies:
            n.become(n.srcs[0].buffer)  # type: ignore[arg-type]


def _trace(launch, run, item, device: str, printing: bool) -> None:
    """A timed launch, handed to an active :mod:`mlfuse.profiler`; with
    MLFUSE_DEBUG=2 also printed as it runs, with what it does, why it exists,
    its time and what it achieved: GB/s (bytes read + written over the time)
    and, for a contraction, GFLOP/s (``ScheduleItem.flops`` over the time)."""
    t0 = time.perf_counter()
    run()
    dt = time.perf_counter() - t0
    if profiler.active():
        profiler.kernel_ran(launch.name, t0, dt, device, item)
    if not printing:
        return
    if item is None:
        print(f"mlfuse: {launch.name} | {dt * 1e6:.0f} us", file=sys.stderr)
        return
    rate = f"{(item.bytes_read + item.bytes_written) / max(dt, 1e-9) / 1e9:.2f} GB/s"
    if item.flops:
        rate += f", {item.flops / max(dt, 1e-9) / 1e9:.2f} GFLOP/s"
    print(f"mlfuse: {item} | {dt * 1e6:.0f} us, {rate}", file=sys.stderr)
