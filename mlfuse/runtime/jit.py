"""``mlfuse.jit``: capture the programs a function runs, then replay them.

The first call of a jitted function with a new signature (its tensor
arguments' shapes, dtypes, devices and views; its other arguments' values)
runs it as usual, compiling what it needs. The second captures: it runs the
function again and records every program its realizes run, with where each
input buffer came from (an argument, an earlier program's output, or a
buffer that lives on: parameters, optimizer state). Later calls replay the
recorded programs on the new arguments' buffers, without running the
function's Python, building graphs or looking up schedules::

    @mlfuse.jit
    def step(x, y):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        mlfuse.realize(loss, *opt.schedule_step())
        return loss

What a replay reproduces is the programs and their buffers; like tinygrad's
TinyJit, anything else the function does in Python (reading values on the
host, branching on them, setting ``.grad``) happened at capture and is not
repeated. Random tensors drawn from the global generator (``Tensor.rand``,
``randn``, dropout's masks...) are the exception: the capture records each
draw and every replay draws it again, so a jitted training step gets a new
dropout mask each call, as under tinygrad's TinyJit. Writes into buffers that live
on (in-place assigns, ``opt.lr = ...``) are seen by every replay. A function
whose capture assigns a tensor by writing a new buffer (its old value was
still observed) cannot be replayed and raises at capture, naming the reason.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mlfuse import graph
from mlfuse.graph import Node


def _flatten(out) -> tuple[list, Callable[[list], Any]]:
    """The tensors of a function result (a tensor, a tuple/list of them, None)
    and how to rebuild the result from new ones."""
    from mlfuse.tensor import Tensor

    if out is None:
        return [], lambda ts: None
    if isinstance(out, Tensor):
        return [out], lambda ts: ts[0]
    if isinstance(out, (tuple, list)) and all(isinstance(t, Tensor) for t in out):
        kind = type(out)
        return list(out), lambda ts: kind(ts)
    if isinstance(out, dict) and all(isinstance(t, Tensor) for t in out.values()):
        keys = list(out)
        return list(out.values()), lambda ts: dict(zip(keys, ts))
    raise TypeError(
        "mlfuse.jit: a jitted function must return a Tensor, a tuple, list or dict of "
        f"Tensors, or None; got {type(out).__name__}"
    )


def _leaves(args: tuple, kwargs: dict) -> list[tuple[tuple, Any]]:
    """The arguments as (path, leaf), lists, tuples and dicts opened (depth
    first, in order; a dict by its keys' order): tensors and plain values."""
    out: list[tuple[tuple, Any]] = []
    stack: list[tuple[tuple, Any]] = [((k,), a) for k, a in sorted(kwargs.items())][::-1]
    stack += [((i,), a) for i, a in enumerate(args)][::-1]
    while stack:  # iterative: deep nests do not exhaust the recursion limit
        path, a = stack.pop()
        if isinstance(a, (list, tuple)):
            out.append((path, (type(a).__name__, len(a))))
            stack += [((*path, i), x) for i, x in enumerate(a)][::-1]
        elif isinstance(a, dict):
            out.append((path, ("dict", tuple(a))))
            stack += [((*path, k), x) for k, x in a.items()][::-1]
        else:
            out.append((path, a))
    return out


def _signature(leaves: list[tuple[tuple, Any]]) -> tuple:
    """What must match for a capture to serve a call: each tensor's shape,
    dtype, device, view and constant, which tensors share a buffer, the shape of
    the containers holding them, and every other argument's value."""
    from mlfuse.tensor import Tensor

    sig: list = []
    first: dict[int, int] = {}
    for i, (path, a) in enumerate(leaves):
        if isinstance(a, Tensor):
            n = a.node
            same = first.setdefault(id(n.buffer), i) if n.realized else i
            sig.append(("tensor", path, n.shape, n.dtype, n.device, n.view, n.arg, same))
        else:
            try:
                hash(a)
            except TypeError:
                where = "".join(f"[{k!r}]" for k in path[1:])
                raise TypeError(
                    f"mlfuse.jit: argument {path[0]!r}{where} ({type(a).__name__}) is not "
                    "hashable; pass tensors, plain values, and lists, tuples or dicts of them"
                ) from None
            sig.append(("value", path, a))
    return tuple(sig)


@dataclass
class _Capture:
    """The recorded programs of one signature, ready to replay."""

    runs: list[tuple[Any, list[tuple]]]  # (program, input sources)
    returns: list[tuple]  # (source, view, constant, shape, dtype, device) per result
    rebuild: Callable[[list], Any]
    draws: list[Callable[[], Any]]  # ("random", i): a new Tensor of draw i per replay


class Jit:
    """A jitted function (see the module docstring): ``mlfuse.jit(fn)``."""

    def __init__(self, fn: Callable, prune: bool = False) -> None:
        self.fn = fn
        self.prune = bool(prune)
        """tinygrad's ``prune``: programs whose inputs do not depend on the call
        (no argument, no random draw, nothing computed from them) and that write
        no buffer they read run once, at capture; replays reuse their results."""
        self.calls: dict[tuple, int] = {}
        self.captures: dict[tuple, _Capture] = {}
        functools.update_wrapper(self, fn)

    def __get__(self, obj, objtype=None):
        """A jitted method: bound to its instance (whose identity is part of the
        signature, so each instance keeps its own captures)."""
        if obj is None:
            return self
        return functools.partial(self.__call__, obj)

    def reset(self) -> None:
        """Forget every capture (the next call runs the function again)."""
        self.calls.clear()
        self.captures.clear()

    def __call__(self, *args, **kwargs):
        from mlfuse.tensor import Tensor

        if graph._recording is not None:  # inside another capture: just run
            return self.fn(*args, **kwargs)
        leaves = _leaves(args, kwargs)
        tensors = [a for _, a in leaves if isinstance(a, Tensor)]
        graph.realize([t.node for t in tensors])
        sig = _signature(leaves)
        cap = self.captures.get(sig)
        if cap is not None:
            return self._replay(cap, tensors)
        seen = self.calls.get(sig, 0)
        self.calls[sig] = seen + 1
        if seen == 0:  # warm-up: compile everything once
            return self.fn(*args, **kwargs)
        return self._capture(sig, tensors, args, kwargs)

    def _capture(self, sig: tuple, tensors: list, args: tuple, kwargs: dict):
        arg_of: dict[int, int] = {}
        for i, t in enumerate(tensors):
            if t.node.buffer is not None and t.node.arg is None:
                arg_of.setdefault(id(t.node.buffer), i)
        graph.flush_writes()  # writes made before the call are not the function's to replay
        runs: list[graph.Run] = []
        randoms: dict[int, tuple] = {}
        graph._recording, graph._recording_random = runs, randoms
        try:
            out = self.fn(*args, **kwargs)
            outs, rebuild = _flatten(out)
            graph.realize([t.node for t in outs])
        finally:
            graph._recording = graph._recording_random = None
        made: dict[int, tuple] = {}
        draws: list[Callable[[], Any]] = []
        drawn: dict[int, tuple] = {}

        def source(buf) -> tuple:
            if id(buf) in arg_of:
                return ("arg", arg_of[id(buf)])
            if id(buf) in made:
                return made[id(buf)]
            if id(buf) in randoms and randoms[id(buf)][0] is buf:
                if id(buf) not in drawn:
                    drawn[id(buf)] = ("random", len(draws))
                    draws.append(randoms[id(buf)][1])
                return drawn[id(buf)]
            return ("fixed", buf)

        recorded = []
        for run in runs:
            if run.copied_assigns:
                raise RuntimeError(
                    "mlfuse.jit: an assign in the jitted function wrote a new buffer because "
                    "the old value of its tensor is still observed (held by another tensor or "
                    "read later); a replay would not update that tensor. Let go of the old "
                    "value (or use the function without jit)"
                )
            sources = [source(b) for b in run.inputs]
            if self.prune and all(src[0] == "fixed" for src in sources):
                ins = {id(b) for b in run.inputs}
                if not any(id(r.buffer) in ins for r in run.outputs):  # no in-place writes
                    for r in run.outputs:
                        made.setdefault(id(r.buffer), ("fixed", r.buffer))
                    continue
            j = len(recorded)
            recorded.append((run.program, sources, run.windows))
            for k, r in enumerate(run.outputs):
                made.setdefault(id(r.buffer), ("out", j, k))
        returns = []
        for t in outs:
            n = t.node
            returns.append((source(n.buffer), n.view, n.arg, n.shape, n.dtype, n.device))
        cap = _Capture(recorded, returns, rebuild, draws)
        self.captures[sig] = cap
        return out

    def _replay(self, cap: _Capture, tensors: list):
        from mlfuse.tensor import Tensor

        arg_bufs = [t.node.buffer for t in tensors]
        produced: list[list] = []
        fresh = [draw() for draw in cap.draws]  # new random values, held for the replay

        def buffer(src: tuple):
            kind = src[0]
            if kind == "arg":
                return arg_bufs[src[1]]
            if kind == "out":
                return produced[src[1]][src[2]].buffer
            if kind == "random":
                return fresh[src[1]].node.buffer
            return src[1]

        for program, sources, windows in cap.runs:
            produced.append(program.run([buffer(s) for s in sources], windows=windows))
        out = []
        for src, view, const, shape, dtype, device in cap.returns:
            if src[0] == "out":
                r = produced[src[1]][src[2]]
                view, const = r.view, r.constant
            n = Node("buffer", (), None, shape, dtype, device)
            n.become(buffer(src), view)
            n.arg = const
            out.append(Tensor(n))
        return cap.rebuild(out)


def jit(fn: Callable | None = None, *, prune: bool = False):
    """Capture the programs ``fn`` runs on its second call with a signature and
    replay them on later calls (see :mod:`mlfuse.runtime.jit`): ``step = mlfuse.jit(step)``,
    ``@mlfuse.jit(prune=True)`` (see :class:`Jit`)."""
    if fn is None:
        return functools.partial(Jit, prune=prune)
    return Jit(fn, prune)


# -- PyTorch's ``torch.jit`` spellings, as attributes of :func:`jit` ---------------------
# Model code written for TorchScript runs as it is: mlfuse compiles the eager
# program itself (lazily, fused and cached), so scripting and tracing return
# the function or module they are given, and the guards answer "not scripting".


def _script(obj=None, optimize=None, _frames_up: int = 0, _rcb=None, example_inputs=None):
    """``torch.jit.script(model)``: the model itself (mlfuse compiles eager code)."""
    return obj


def _trace(func, example_inputs=None, *args, **kwargs):
    """``torch.jit.trace(fn, example)``: the function itself."""
    return func


def _ignore(drop=False, **kwargs):
    """``@torch.jit.ignore`` (with or without arguments): the function itself."""
    if callable(drop):
        return drop
    return lambda fn: fn


def _same(fn):
    """A TorchScript marker: the function or class itself."""
    return fn


def _annotate(the_type, the_value):
    """``torch.jit.annotate(T, v)``: ``v``."""
    return the_value


def _false() -> bool:
    """False: code never runs under TorchScript here."""
    return False


jit.script = _script  # type: ignore[attr-defined]
jit.trace = _trace  # type: ignore[attr-defined]
jit.trace_module = _trace  # type: ignore[attr-defined]
jit.ignore = _ignore  # type: ignore[attr-defined]
jit.unused = _same  # type: ignore[attr-defined]
jit.export = _same  # type: ignore[attr-defined]
jit.interface = _same  # type: ignore[attr-defined]
jit.annotate = _annotate  # type: ignore[attr-defined]
jit.is_scripting = _false  # type: ignore[attr-defined]
jit.is_tracing = _false  # type: ignore[attr-defined]
jit.Final = __import__("typing").Final  # type: ignore[attr-defined]
