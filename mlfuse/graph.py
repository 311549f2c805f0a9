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

import contextvars
import sys
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue

from mlfuse import dtypes
from mlfuse.dtypes import DType
from mlfuse.targets import Buffer, get_target
from mlfuse.utils import postorder

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
    "cmplt",
    "cmple",
    "cmpeq",
    "cmpne",
)
MOVEMENT = ("reshape", "permute", "expand", "pad", "shrink", "flip", "stride")

origin: contextvars.ContextVar[str | None] = contextvars.ContextVar("origin", default=None)
"""The front-end call that is creating nodes (the outermost one wins)."""


class Node:
    """One lazy value on a device: an op on source nodes, or a realized buffer."""

    __slots__ = (
        "op",
        "srcs",
        "arg",
        "shape",
        "dtype",
        "device",
        "buffer",
        "origin",
        "key",
        "__weakref__",
    )

    def __init__(
        self, op: str, srcs: tuple[Node, ...], arg: Any, shape: Shape, dtype: DType, device: str
    ):
        self.op, self.srcs, self.arg, self.shape, self.dtype = op, srcs, arg, shape, dtype
        self.device = device
        self.buffer: Buffer | None = None
        self.origin = origin.get()
        self.key: tuple | None = None

    @property
    def realized(self) -> bool:
        return self.buffer is not None

    def become(self, buffer: Buffer) -> None:
        # leave the hash-cons table: the key names sources this node no longer
        # keeps alive, whose ids may be reused
        if self.key is not None and _nodes.get(self.key) is self:
            del _nodes[self.key]
        _transfers.discard(self)
        self.op, self.srcs, self.arg, self.buffer, self.key = "buffer", (), None, buffer, None

    def __repr__(self) -> str:
        return f"<Node {self.op} {self.shape} {self.dtype.name}>"


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


def make(
    op: str, srcs: Sequence[Node], arg: Any, shape: Shape, dtype: DType, device: str | None = None
) -> Node:
    """The node for ``op(srcs, arg)``, shared with an identical live one.

    ``device`` is given for nodes without sources and for copies; other nodes
    are on their sources' device.
    """
    srcs = tuple(srcs)
    dev = _device(op, srcs, device)
    key = (op, tuple(id(s) for s in srcs), arg, shape, dtype, dev)
    n = _nodes.get(key)
    if n is None:
        n = Node(op, srcs, arg, shape, dtype, dev)
        n.key = key
        _nodes[key] = n
        if op == "copy" and srcs[0].device != dev:
            _transfers.add(n)
    return n


def buffer(array: np.ndarray, device: str) -> Node:
    """A realized node on ``device`` holding a copy of ``array``."""
    dt = dtypes.from_numpy(array.dtype)
    n = Node("buffer", (), None, tuple(int(s) for s in array.shape), dt, device)
    n.buffer = get_target(device).from_numpy(array)
    return n


def unique(op: str, srcs: Sequence[Node], arg: Any, shape: Shape, dtype: DType) -> Node:
    """A node that is never shared (assigns have an effect)."""
    srcs = tuple(srcs)
    return Node(op, srcs, arg, shape, dtype, _device(op, srcs, None))


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
    args: list[Node]  # realized inputs, in argument order
    outputs: list[Node]
    key: tuple  # the structure (equal keys: equal programs)
    device: str


def collect(outputs: Sequence[Node]) -> Graph:
    nodes = toposort(outputs)
    device = outputs[0].device
    for n in nodes:
        if n.device != device:
            raise ValueError(
                f"one schedule runs on one device, but this graph uses {device} and {n.device}"
                + (" (realize the copy between them first)" if n.op == "copy" else "")
            )
    index = {id(n): i for i, n in enumerate(nodes)}
    args = [n for n in nodes if n.realized]
    struct = tuple(
        ("arg", n.shape, n.dtype.name)
        if n.realized
        else (n.op, n.arg, n.shape, n.dtype.name, tuple(index[id(s)] for s in n.srcs))
        for n in nodes
    )
    key = (device, struct, tuple(index[id(o)] for o in outputs))
    return Graph(nodes, args, list(outputs), key, device)


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


def _tables():
    from mlfuse.dialects import lazy

    return (
        {c.KIND: c for c in lazy.UNARY_OPS},
        {c.KIND: c for c in lazy.BINARY_OPS},
        {c.name.removeprefix("lazy."): c for c in lazy.MOVEMENT_OPS},
    )


_UNARY, _BINARY, _MOVEMENT = _tables()


def to_module(g: Graph) -> ModuleOp:
    """One ``func.func @main`` computing ``g.outputs`` from ``g.args``."""
    from mlfuse.dialects import lazy
    from mlfuse.passes.utils import name_loc

    block = Block(arg_types=[lazy.tensor_type(n.shape, n.dtype.ir()) for n in g.args])
    value: dict[int, SSAValue] = {id(n): a for n, a in zip(g.args, block.args)}
    for i, a in enumerate(block.args):
        a.name_hint = f"in{i}"
    for n in g.nodes:
        if n.realized:
            continue
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

_programs: dict[tuple, object] = {}


def compiled_for(g: Graph):
    """The compiled schedule for the graph's structure (compiling on a miss)."""
    from mlfuse.driver import compile_module

    c = _programs.get(g.key)
    if c is None:
        c = compile_module(to_module(g), g.device)
        _programs[g.key] = c
    return c


def _readers_outside(target: Node, g: Graph) -> bool:
    """Whether some live node outside this realize still reads ``target``."""
    inside = {id(n) for n in g.nodes}
    for n in list(_nodes.values()):
        if id(n) not in inside and not n.realized and any(s is target for s in n.srcs):
            return True
    return False


def _transfer_copies(outputs: Sequence[Node]) -> None:
    """Realize the copies between devices that ``outputs`` need, sources first."""
    for n in toposort(outputs):
        if n.op == "copy" and n.srcs[0].device != n.device:
            src = n.srcs[0]
            realize([src])
            host = get_target(src.device).to_numpy(src.buffer)  # type: ignore[arg-type]
            n.become(get_target(n.device).from_numpy(host))


def realize(nodes: Sequence[Node]) -> None:
    pending: list[Node] = []
    for n in nodes:
        if not n.realized and all(n is not p for p in pending):
            pending.append(n)
    if not pending:
        return
    if _transfers:
        _transfer_copies(pending)
    for device in dict.fromkeys(n.device for n in pending):
        _realize_on([n for n in pending if n.device == device and not n.realized])


def _realize_on(pending: list[Node]) -> None:
    """Compute ``pending`` (unrealized nodes of one device, no copies between devices)."""
    if not pending:
        return
    g = collect(pending)
    c = compiled_for(g)
    # value semantics for assigns: lazy readers outside this schedule keep the old data
    snapshots = []
    for n in g.nodes:
        if n.op == "assign":
            target = n.srcs[0]
            if _readers_outside(target, g):
                old = get_target(g.device).clone(target.buffer)  # type: ignore[arg-type]
                snapshots.append((target, old))
    from mlfuse.driver import debug_level

    trace = None
    if debug_level() >= 2:
        items = {it.name: it for it in c.items}  # type: ignore[attr-defined]
        trace = lambda launch, run: _trace(launch, run, items.get(launch.name))  # noqa: E731
    outs = c.program.run([n.buffer for n in g.args], trace=trace)  # type: ignore[attr-defined]
    for target, old in snapshots:
        target.buffer = old
    for n, buf in zip(pending, outs):
        n.become(buf)


def _trace(launch, run, item) -> None:
    """MLFUSE_DEBUG=2: each kernel as it runs, with what it does and why it exists."""
    import time

    t0 = time.perf_counter()
    run()
    dt = time.perf_counter() - t0
    what = str(item) if item is not None else launch.name
    print(f"mlfuse: {what} | {dt * 1e6:.0f} us", file=sys.stderr)
