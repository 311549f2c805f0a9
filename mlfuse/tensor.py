"""``mlfuse.Tensor``: lazy tensors with tinygrad/PyTorch-like names.

Nothing is computed until ``.realize()``, ``.numpy()`` or ``.item()``: every
op records a node; realizing compiles the whole pending graph into fused
kernels. Python scalars are weakly typed (``x * 2`` keeps x's dtype), shapes
broadcast as in numpy, and reductions take ``axis`` (int, tuple or None) and
``keepdim``. Bad shapes, axes and dtypes raise ``ValueError`` / ``TypeError``
naming the problem.

A tensor lives on a device (``Tensor(x, device="cpu")``, ``.device``,
``.to(device)``); without ``device=`` it is created on
``mlfuse.get_default_device()``. An op's tensors must share a device.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import math
import operator
import os
import weakref
from typing import Any, NamedTuple

import numpy as np

from mlfuse import amp, autograd, dtypes, graph, layouts, targets
from mlfuse.dtypes import DType
from mlfuse.errors import (
    ArgumentError,
    ArgumentTypeError,
    DimError,
    DTypeError,
    IndexTypeError,
    UnsupportedModeError,
)
from mlfuse.graph import Node

Shape = tuple[int, ...]

_live: weakref.WeakSet = weakref.WeakSet()
"""Every Tensor object alive (tinygrad's backward fills ``.grad`` of those in scope)."""


def live_tensors() -> list[Tensor]:
    """The Tensor objects alive now."""
    return list(_live)


def _traced(fn):
    """Record the public method's name as the origin of the nodes it creates."""
    name = fn.__name__.strip("_")

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if graph.origin.get() is not None:
            return fn(*args, **kwargs)
        token = graph.origin.set(name)
        try:
            return fn(*args, **kwargs)
        finally:
            graph.origin.reset(token)

    return wrapper


def _half_in_float32(fn):
    """A float16/bfloat16 tensor's ``fn`` computed in float32 and rounded once, as
    PyTorch's kernels do for composite functions (sigmoid, softmax...): more
    accurate than rounding every step to 16 bits, and PyTorch's bits."""

    @functools.wraps(fn)
    def wrapper(self, *args, **kwargs):
        if self.dtype.is_half:
            return fn(self.float(), *args, **kwargs).cast(self.dtype)
        return fn(self, *args, **kwargs)

    return wrapper


def _const_node(value, dt: DType, device: str, shape: Shape = ()) -> Node:
    """``value`` as a constant of ``dt`` on ``device``, broadcast to ``shape``: the
    nodes ``Tensor.full`` makes (a scalar const, reshaped to ones, expanded),
    built directly (scalar operands of ops take this path on every call)."""
    if dt.is_bool:
        value = bool(value)
    elif dt.is_int:
        if isinstance(value, float) and value != int(value):
            raise ArgumentError(f"{value} is not an integer for dtype {dt.name}")
        value = int(value)
        info = np.iinfo(dt.np)
        if not info.min <= value <= info.max:
            raise OverflowError(f"{value} does not fit in {dt.name} (range {info.min}..{info.max})")
    else:
        value = float(value)
        if dt.is_half:  # a value of its dtype, rounded through float32 as in PyTorch
            value = float(dtypes.from_storage(dtypes.to_storage(np.float32(value), dt), dt))
    n = graph.make("const", (), value, (), dt, device)
    if not shape:
        return n
    ones = (1,) * len(shape)
    n = graph.make("reshape", (n,), ones, ones, dt)
    return n if shape == ones else graph.make("expand", (n,), shape, shape, dt)


def _tinygrad_pads(padding, nd: int, what: str):
    """tinygrad's conv padding as (before, after) per spatial dim: an int, one
    per dim, or two per dim given last dim first (left, right, top, bottom)."""
    if isinstance(padding, (int, np.integer)) and not isinstance(padding, bool):
        return tuple((int(padding), int(padding)) for _ in range(nd))
    p = tuple(padding)
    if not all(isinstance(v, (int, np.integer)) for v in p):
        raise ArgumentError(f"{what}: padding must be ints, got {padding!r}")
    if len(p) == nd:
        return tuple((int(v), int(v)) for v in p)
    if len(p) == 2 * nd:
        return tuple((int(p[2 * i]), int(p[2 * i + 1])) for i in reversed(range(nd)))
    raise ArgumentError(
        f"{what}: padding must be an int, {nd} ints or {2 * nd} ints, got {padding!r}"
    )


def _pool_dims(kernel_size, x) -> int:
    """How many trailing dims a pool given ``kernel_size`` works on (2 for an int)."""
    nd = 2 if isinstance(kernel_size, (int, np.integer)) else len(tuple(kernel_size))
    if not 1 <= nd <= 3:
        raise ArgumentError(f"pool: kernel_size {kernel_size!r} must name 1 to 3 dims")
    if x.ndim < nd + 1:
        raise ArgumentError(f"pool: a {nd}-d kernel needs at least {nd + 1} dims, got {x.shape}")
    return nd


class _WeakIdentitySet:
    """Objects by identity, held weakly (a WeakSet compares Tensors with ``==``,
    which is elementwise)."""

    def __init__(self) -> None:
        self._refs: dict[int, weakref.ref] = {}

    def add(self, obj) -> None:
        key = id(obj)
        self._refs[key] = weakref.ref(obj, lambda _, key=key: self._refs.pop(key, None))

    def discard(self, obj) -> None:
        ref = self._refs.get(id(obj))
        if ref is not None and ref() is obj:
            del self._refs[id(obj)]

    def __contains__(self, obj) -> bool:
        ref = self._refs.get(id(obj))
        return ref is not None and ref() is obj


FROZEN = _WeakIdentitySet()
"""Tensors set not to require gradients (``requires_grad_(False)``, ``requires_grad =
False``, ``nn.Parameter(t, requires_grad=False)``) and modules' buffers: optimizers
leave them alone."""


def _newton_schulz_steps(g: Tensor, steps: int, params) -> Tensor:
    """``steps`` times ``g <- sum_i params[i] * (g g^T)^i g`` (g already scaled)."""
    for _ in range(steps):
        gram = g @ g.mT
        term, out = g, g * params[0]
        for p in params[1:]:
            term = gram @ term
            out = out + term * p
        g = out
    return g


def _norm_axis(axis: int, ndim: int, what: str = "axis") -> int:
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise TypeError(f"{what} must be an int, got {type(axis).__name__}")
    if (ndim and not -ndim <= axis < ndim) or (ndim == 0 and axis not in (0, -1)):
        raise DimError(f"{what} {axis} is out of range for a tensor of {ndim} dims")
    return int(axis) % ndim if ndim else 0


def _kept(t: Tensor, axes: tuple[int, ...], keepdim: bool) -> Tensor:
    """A reduction's result ``t`` with its reduced ``axes`` kept as size-1 dims."""
    if keepdim or not axes:
        return t
    shape = list(t.shape)
    for a in axes:  # sorted: each insert lands at its final place
        shape.insert(a, 1)
    return t.reshape(tuple(shape))


def _norm_axes(axis, ndim: int) -> tuple[int, ...]:
    """Sorted, non-negative axes; a 0-d tensor has none to reduce (axis 0/-1 accepted)."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (int, np.integer)) and not isinstance(axis, bool):
        axes = (axis,)
    elif isinstance(axis, (tuple, list)):
        axes = tuple(axis)
    else:
        raise TypeError(f"axis must be an int, a tuple of ints or None, got {axis!r}")
    out = tuple(sorted({_norm_axis(a, ndim) for a in axes}))
    if ndim == 0:
        return ()
    if len(out) != len(axes):
        raise ArgumentError(f"repeated axis in {axis}")
    return out


def _row_major_strides(shape: Shape) -> tuple[int, ...]:
    """PyTorch's strides of a fresh tensor of ``shape`` (a size-0 dim counts as 1)."""
    out, step = [], 1
    for s in reversed(shape):
        out.append(step)
        step *= max(s, 1)
    return tuple(reversed(out))


def _view_strides(old: Shape, strides: tuple[int, ...], new: Shape) -> tuple[int, ...] | None:
    """The strides of ``new`` viewing the storage that ``old`` reads with
    ``strides``, or None where no strides can (PyTorch's reshape copies then):
    groups of dims that are contiguous with each other may be split and merged."""
    if not old or math.prod(old) == 0:
        return _row_major_strides(new)
    out = [0] * len(new)
    nd = len(new) - 1
    base = strides[-1]
    seen = want = 1
    for d in range(len(old) - 1, -1, -1):
        seen *= old[d]
        if d == 0 or (old[d - 1] != 1 and strides[d - 1] != seen * base):
            while nd >= 0 and (want < seen or new[nd] == 1):
                out[nd] = want * base
                want *= new[nd]
                nd -= 1
            if want != seen:
                return None
            if d > 0:
                base, seen, want = strides[d - 1], 1, 1
    return tuple(out) if nd == -1 else None


def broadcast_shape(*shapes: Shape) -> Shape:
    nd = max(len(s) for s in shapes)
    out = []
    for i in range(nd):
        dims = {s[len(s) - nd + i] for s in shapes if len(s) - nd + i >= 0} - {1}
        if len(dims) > 1:
            raise ArgumentError(f"shapes {' and '.join(str(s) for s in shapes)} do not broadcast")
        out.append(dims.pop() if dims else 1)
    return tuple(out)


def _ints(args, what: str = "shape entries") -> tuple[int, ...]:
    """Varargs or one tuple/list of ints."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    for s in args:
        if not isinstance(s, (int, np.integer)) or isinstance(s, bool):
            raise ArgumentTypeError(f"{what} must be ints, got {args}")
    return tuple(int(s) for s in args)


def _shape_arg(shape, allow_minus_one: bool = False) -> Shape:
    out = _ints(shape)
    for s in out:
        if s < 0 and not (allow_minus_one and s == -1):
            raise ArgumentError(f"negative dimension in shape {out}")
    return out


def _pairs(arg, ndim: int, what: str, form: str, keep: Shape | None = None):
    """One (a, b) pair of ints per dim; None keeps the dim ((0, 0), or (0, size))."""
    if not isinstance(arg, (tuple, list)):
        raise ArgumentError(f"{what} needs {ndim} {form} pairs, one per dim; got {arg!r}")
    if len(arg) != ndim:
        raise ArgumentError(f"{what} needs {ndim} {form} pairs, got {len(arg)}")
    out = []
    for d, p in enumerate(arg):
        if p is None:
            out.append((0, keep[d]) if keep is not None else (0, 0))
            continue
        if (
            not isinstance(p, (tuple, list))
            or len(p) != 2
            or not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in p)
        ):
            raise ArgumentError(
                f"{what}: entry {d} must be a {form} pair of ints or None, got {p!r}"
            )
        out.append((int(p[0]), int(p[1])))
    return tuple(out)


_SEED: list[int] = [int.from_bytes(os.urandom(8), "little") >> 1]
_GENERATOR: list[np.random.Generator] = [np.random.default_rng(_SEED[0])]


def _seed_int(seed, where: str) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"{where}: seed must be an int, got {type(seed).__name__}")
    return int(seed)


def manual_seed(seed: int) -> None:
    """Seed the generator behind ``randn``/``rand``/``uniform``/``randint``/
    ``dropout`` calls without their own ``seed``: ``mlfuse.manual_seed(0)``."""
    _SEED[0] = _seed_int(seed, "manual_seed")
    _GENERATOR[0] = np.random.default_rng(_SEED[0])


_STATE_BYTES = 37


def _state_bytes(gen: np.random.Generator) -> bytes:
    """A PCG64 generator's state as 37 bytes (state, increment, buffered word)."""
    st = gen.bit_generator.state
    if st.get("bit_generator") != "PCG64":
        raise RuntimeError(f"get_state: unexpected generator {st.get('bit_generator')}")
    fields = (st["state"]["state"], st["state"]["inc"])
    raw = b"".join(v.to_bytes(16, "little") for v in fields)
    return raw + bytes([st["has_uint32"]]) + int(st["uinteger"]).to_bytes(4, "little")


def _from_state(new_state, where: str) -> np.random.Generator:
    """The generator a state from :func:`_state_bytes` (as a uint8 tensor) describes."""
    if not isinstance(new_state, Tensor) or new_state.dtype != dtypes.uint8:
        raise TypeError(f"{where}: expected the uint8 tensor get_state/get_rng_state returned")
    raw = bytes(new_state.numpy().reshape(-1))
    if len(raw) != _STATE_BYTES:
        raise ArgumentError(
            f"{where}: a state holds {_STATE_BYTES} bytes, got {len(raw)} "
            "(not from get_state/get_rng_state?)"
        )
    gen = np.random.Generator(np.random.PCG64())
    gen.bit_generator.state = {
        "bit_generator": "PCG64",
        "state": {
            "state": int.from_bytes(raw[:16], "little"),
            "inc": int.from_bytes(raw[16:32], "little"),
        },
        "has_uint32": raw[32],
        "uinteger": int.from_bytes(raw[33:37], "little"),
    }
    return gen


class Generator:
    """A random number generator of its own, PyTorch's ``torch.Generator``: pass
    it as ``generator=`` to the sampling functions (``mlfuse.randn(3,
    generator=g)``, ``mlfuse.randperm(n, generator=g)``, ``x.normal_(generator=g)``,
    ``nn.init.uniform_(w, generator=g)``, ``utils.data.random_split``...) or as
    ``seed=`` to the Tensor constructors (``Tensor.rand(3, seed=g)``); draws from
    it leave the global generator alone. ``mlfuse.default_generator`` is the
    global one (``mlfuse.manual_seed`` seeds it)::

        g = mlfuse.Generator().manual_seed(0)
        a = mlfuse.rand(3, generator=g)
    """

    def __init__(self, device="cpu"):
        self.device = str(device)
        self._seed = int.from_bytes(os.urandom(8), "little") >> 1
        self._gen = np.random.default_rng(self._seed)

    @property
    def _np(self) -> np.random.Generator:
        return self._gen

    def _set(self, gen: np.random.Generator, seed: int | None) -> None:
        self._gen = gen
        if seed is not None:
            self._seed = seed

    def manual_seed(self, seed: int) -> Generator:
        """Seed it (itself, for chaining): ``g.manual_seed(42)``."""
        seed = _seed_int(seed, "Generator.manual_seed")
        self._set(np.random.default_rng(seed), seed)
        return self

    def seed(self) -> int:
        """Seed it from the operating system's entropy; the seed used."""
        seed = int.from_bytes(os.urandom(8), "little") >> 1
        self._set(np.random.default_rng(seed), seed)
        return seed

    def initial_seed(self) -> int:
        """The seed it was last seeded with."""
        return self._seed

    def get_state(self) -> Tensor:
        """Its state as a uint8 tensor, for :meth:`set_state`."""
        raw = _state_bytes(self._np)
        return Tensor(np.frombuffer(raw, np.uint8).copy(), dtypes.uint8, "cpu")

    def set_state(self, new_state) -> Generator:
        """Restore a state :meth:`get_state` returned (itself)."""
        self._set(_from_state(new_state, "Generator.set_state"), None)
        return self

    def __repr__(self) -> str:
        return f"<mlfuse.Generator {self.device} seed={self._seed}>"


class _DefaultGenerator(Generator):
    """The global generator, seen as a :class:`Generator`."""

    def __init__(self):
        self.device = "cpu"

    @property
    def _np(self) -> np.random.Generator:
        return _GENERATOR[0]

    @property
    def _seed(self) -> int:  # type: ignore[override]
        return _SEED[0]

    def _set(self, gen: np.random.Generator, seed: int | None) -> None:
        _GENERATOR[0] = gen
        if seed is not None:
            _SEED[0] = seed


default_generator: Generator = _DefaultGenerator()


def _derivative(name: str, out: Tensor, inputs: tuple[Tensor, ...], rule) -> Tensor:
    """``out``, computed from ``inputs`` by a composite formula, differentiated by
    ``rule(ctx, g)`` (``ctx.srcs``: the inputs, ``ctx.out``: the value; one
    gradient or None per input) instead of through the formula's ops: see
    :class:`mlfuse.graph.Derivative`."""
    n = out.node
    arg = graph.Derivative(name, tuple(t.node for t in inputs), rule)
    return Tensor(graph.make("derivative", (n,), arg, n.shape, n.dtype))


def _zero_gradient(t: Tensor, dtype) -> Tensor:
    """A 0-d zero of ``dtype`` whose gradient gives ``t`` zeros (PyTorch's for a
    piecewise-constant function of it, or an input a result ignores: zeros, not no
    gradient), adding nothing to a value it is added to (``0 * t`` would turn an
    inf in ``t`` into NaN)."""
    zero = Tensor.zeros((), dtype=dtype, device=t.device)
    if not t.requires_grad or not t.dtype.is_float:
        return zero

    def rule(c, g):
        return (Tensor.zeros(*t.shape, dtype=t.dtype, device=t.device),)

    return _derivative("zero_gradient", zero, (t,), rule)


def _rng(seed) -> np.random.Generator:
    """Where a draw comes from: ``seed`` None (the global generator), a
    :class:`Generator`, or an int seeding a generator for this draw."""
    if seed is None:
        return _GENERATOR[0]
    if isinstance(seed, Generator):
        return seed._np
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(
            f"a random draw's seed/generator must be an int or a mlfuse.Generator, "
            f"got {type(seed).__name__}"
        )
    return np.random.default_rng(int(seed))


def _random(draw, dtype=None, device=None, requires_grad: bool = False, seed=None) -> Tensor:
    """A tensor of ``draw(generator)`` (a numpy array), from the global generator
    unless ``seed`` is given. While ``mlfuse.jit`` captures, the draw is recorded
    so that every replay draws new values (dropout masks, noise), as tinygrad's
    TinyJit does."""
    t = Tensor(draw(_rng(seed)), dtype, device, requires_grad)
    replays = seed is None or isinstance(seed, Generator)  # a fixed int seed draws once
    if replays and graph._recording_random is not None and t.node.buffer is not None:
        dt, dev = t.dtype, t.device  # (the redraw must not keep this tensor alive)
        graph._recording_random[id(t.node.buffer)] = (
            t.node.buffer,
            lambda: Tensor(draw(_rng(seed)), dt, dev),
        )
    return t


_DIGITS = {"float64": 53, "float32": 24, "float16": 11, "bfloat16": 8}


def _round_to(v: np.ndarray, dt: DType) -> np.ndarray:
    """Float64 values rounded to float dtype ``dt`` (as float64)."""
    if dt.name == "bfloat16":
        return dtypes.round_bf16(v.astype(np.float32)).astype(np.float64)
    return v.astype(dt.host).astype(np.float64)


def _largest_below(top: np.ndarray, dt: DType) -> np.ndarray:
    """The largest value of ``dt`` below ``top`` (one of its values)."""
    if dt.name == "bfloat16":  # step the bit pattern: magnitude down above 0, up below
        bits = int(dtypes.bf16_bits(top.astype(np.float32)))
        below = bits - 1 if top > 0 else (0x8001 if top == 0 else bits + 1)
        return dtypes.bf16_values(np.uint16(below)).astype(np.float64)
    return np.nextafter(top.astype(dt.host), np.array(-np.inf, dt.host)).astype(np.float64)


def _uniform_values(g: np.random.Generator, shape: Shape, low: float, high: float, dt: DType):
    """Uniform draws in [low, high) for ``dt``: integers floored; floats rounded to
    ``dt`` with any value that reached ``high`` moved to the largest below it."""
    v = low + (high - low) * _unit_uniform(g, shape, dtypes.float64)
    if dt.is_int:
        return np.minimum(np.floor(v), math.ceil(high) - 1) if high > low else v
    if dt.is_float and high > low:
        v = _round_to(v, dt)
        top = _round_to(np.array(high), dt)
        if (v >= top).any():
            v = np.where(v >= top, _largest_below(top, dt), v)
    return v


def _unit_uniform(g: np.random.Generator, shape: Shape, dt: DType) -> np.ndarray:
    """Uniform float64 values in [0, 1) that are multiples of 2^-p, p the precision
    of ``dt``: exact in ``dt``, so none rounds up to 1 (PyTorch's generators draw
    p random bits the same way)."""
    u = g.random(shape)
    p = _DIGITS.get(dt.name, 53)
    return u if p >= 53 else np.floor(u * 2.0**p) * 2.0**-p


def _alias(n: Node) -> Node:
    """A new node for the value of realized node ``n`` (same buffer and view)."""
    a = Node("buffer", (), None, n.shape, n.dtype, n.device)
    a.become(n.buffer, n.view)  # type: ignore[arg-type]
    a.arg = n.arg
    return a


def _leaf_node(n: Node) -> Node:
    """A node of ``n``'s value that is a leaf for autograd and no other tensor's
    (nodes are shared: marking ``n`` itself could make others leaves too)."""
    if n.realized:
        a = _alias(n)
    else:
        a = graph.unique("detach", (n,), None, n.shape, n.dtype)
    a.tape = graph.LEAF
    return a


def _is_complex(data, dtype) -> bool:
    """Whether ``Tensor(data, dtype)`` makes a complex tensor."""
    if dtype is not None and dtypes.as_dtype(dtype).is_complex:
        return True
    if isinstance(data, (complex, np.complexfloating)):
        return True
    if isinstance(data, np.ndarray):
        return data.dtype.kind == "c"
    if isinstance(data, (list, tuple)) and data:
        from mlfuse import complex_tensors as _complex

        return _complex.is_complex_data(data)
    return False


def _complex_dtype(data, dtype) -> DType | None:
    """The complex dtype ``Tensor(data, dtype)`` makes: the one given, a numpy
    array's, else the default float's (complex64)."""
    if dtype is not None:
        dt = dtypes.as_dtype(dtype)
        if not dt.is_complex:
            raise DTypeError(f"complex values cannot be stored as {dt.name}; use .real or .abs()")
        return dt
    if isinstance(data, (np.ndarray, np.complexfloating)) and data.dtype.kind == "c":
        return dtypes.as_dtype(data.dtype)
    return dtypes.default_float.to_complex


def _complex_operand(other) -> bool:
    """A Python/numpy complex number or complex array on the other side of a real op."""
    return isinstance(other, (complex, np.complexfloating)) or (
        isinstance(other, np.ndarray) and other.dtype.kind == "c"
    )


def _complex_value(x) -> bool:
    """A complex tensor, number or array."""
    return (isinstance(x, Tensor) and x.dtype.kind == "c") or _complex_operand(x)


def _complex_op(op: str, t: Tensor, other) -> Tensor:
    """``t <op> other`` done by complex tensors (``op`` is a dunder name)."""
    from mlfuse import complex_tensors as _complex

    return getattr(_complex.as_complex(t), op)(other)


def _unpickle(values: np.ndarray, dtype: str, device: str, requires_grad: bool) -> Tensor:
    return Tensor(values, dtype, device, requires_grad)


class Tensor:
    """A lazy n-dimensional array on a device."""

    __slots__ = ("_node", "_base", "_views", "_grad", "_post_accumulate", "__weakref__")
    __hash__ = object.__hash__
    __array_ufunc__ = None  # ndarray <op> Tensor defers to Tensor's reflected ops

    @property
    def node(self) -> Node:
        """The graph node this tensor's value is (tensors holding it are counted);
        ``x.node.realized`` tells whether it is computed."""
        return self._node

    @node.setter
    def node(self, n: Node) -> None:
        old = getattr(self, "_node", None)
        if old is not None and old.tape is graph.LEAF and n.tape is not graph.LEAF:
            n = _leaf_node(n)  # a parameter updated in place stays a leaf
        self._set_node(n)

    def _set_node(self, n: Node) -> None:
        old = getattr(self, "_node", None)
        n.refs += 1
        if old is not None:
            old.refs -= 1
        else:
            _live.add(self)
        self._node = n

    def __del__(self) -> None:
        n = getattr(self, "_node", None)
        if n is not None:
            n.refs -= 1

    def __reduce__(self):
        # pickled as its values (realized), dtype, device and requires_grad
        return (_unpickle, (self.numpy(), self.dtype.name, self.device, self.requires_grad))

    def __new__(cls, data: Any = None, dtype=None, device=None, requires_grad: bool = False):
        # complex values make a ComplexTensor (a pair of real tensors); its
        # __init__ then sees itself made and does nothing
        if cls is Tensor and type(data) is not Node and _is_complex(data, dtype):
            from mlfuse import complex_tensors as _complex

            z = _complex.from_numpy(np.asarray(data), device, _complex_dtype(data, dtype))
            return z.requires_grad_() if requires_grad else z
        return object.__new__(cls)

    def __init__(
        self,
        data: Any,
        dtype: DType | str | type | None = None,
        device: str | None = None,
        requires_grad: bool = False,
    ):
        if requires_grad:
            self.__init__(data, dtype, device)
            self.requires_grad_()
            return
        if isinstance(data, Node):
            self.node = data
            return
        if isinstance(data, Tensor):
            t = data.cast(dtype) if dtype is not None else data
            self.node = (t.to(device) if device is not None else t).node
            return
        dev = targets.device_name(device)
        want = dtypes.as_dtype(dtype) if dtype is not None else None
        if data is None:  # tinygrad's empty tensor
            data = np.zeros(0, (want or dtypes.default_float).host)
        elif isinstance(data, (bytes, bytearray, memoryview)):  # the bytes as uint8
            data = np.frombuffer(bytes(data), np.uint8).copy()
            want = want or dtypes.uint8
        elif isinstance(data, np.generic) and data.dtype.kind in "biuf":
            data = np.asarray(data)  # a numpy scalar keeps its dtype (np.float16(2) is float16)
        if isinstance(data, np.ndarray):
            arr = data
            if want is None:
                want = dtypes.from_numpy(arr.dtype)
        else:
            try:
                arr = np.asarray(data)
            except OverflowError:
                arr = np.asarray(data, dtype=object)
            if want is not None and want.is_int and arr.dtype.kind == "f":
                # numpy makes float64 of Python ints past int64 mixed with smaller ones
                exact = np.asarray(data, dtype=object)
                if exact.size and all(isinstance(v, int) for v in exact.flat):
                    arr = exact
            if arr.dtype == object:
                if not arr.size or not all(isinstance(v, int) for v in arr.flat):
                    raise TypeError(f"cannot make a Tensor from {type(data).__name__}")
                lo, hi = min(arr.flat), max(arr.flat)
                into = want or dtypes.default_int
                if not into.is_int:  # huge ints as floats (or bools)
                    arr = arr.astype(np.float64 if into.is_float else np.bool_)
                elif dtypes.min(into) <= lo <= hi <= dtypes.max(into):
                    arr = arr.astype(into.np)
                else:
                    raise OverflowError(f"integers {lo}..{hi} do not fit in {into.name}")
            if want is None:
                kind = arr.dtype.kind
                want = {
                    "b": dtypes.bool_,
                    "i": dtypes.default_int,
                    "u": dtypes.default_int,
                    "f": dtypes.default_float,
                }.get(kind)
                if want is None:
                    raise TypeError(f"cannot make a Tensor from numpy dtype {arr.dtype}")
            if want.unsigned and want.bits < 64 and arr.dtype.kind == "i" and arr.size:
                span = 1 << want.bits  # PyTorch wraps negative Python ints into uint8..uint32
                if arr.min() < 0 and -span <= arr.min() and arr.max() < span:
                    arr = arr % span
            if (
                want.is_int
                and arr.dtype.kind in "iu"
                and arr.size
                and (arr.min() < np.iinfo(want.np).min or arr.max() > np.iinfo(want.np).max)
            ):
                raise OverflowError(
                    f"integers {arr.min()}..{arr.max()} do not fit in {want.name}; pass "
                    "a wider dtype (dtype=mlfuse.int64)"
                )
        # the target copies it; bfloat16 is rounded from float32 here
        self.node = graph.buffer(dtypes.to_storage(arr, want), dev)

    # -- creation -------------------------------------------------------------
    @staticmethod
    @_traced
    def full(shape, fill_value, dtype=None, device=None, requires_grad=False) -> Tensor:
        """A tensor of ``shape`` filled with ``fill_value`` (PyTorch's and tinygrad's
        name): ``Tensor.full((2, 3), 7.0)``.

        The dtype follows the value (bool, int64 or float32) unless given.
        """
        value = fill_value
        shape = _shape_arg((shape,) if isinstance(shape, (int, np.integer)) else tuple(shape))
        if isinstance(value, (complex, np.complexfloating)) or (
            dtype is not None and dtypes.as_dtype(dtype).is_complex
        ):
            from mlfuse import complex_tensors as _complex

            z = _complex.full(shape, value, dtype or dtypes.default_float.to_complex, device)
            return z.requires_grad_() if requires_grad else z
        if dtype is None:
            dt = (
                dtypes.bool_
                if isinstance(value, bool)
                else (dtypes.default_int if isinstance(value, int) else dtypes.default_float)
            )
        else:
            dt = dtypes.as_dtype(dtype)
        out = Tensor(_const_node(value, dt, targets.device_name(device), shape))
        return out.requires_grad_() if requires_grad else out

    @staticmethod
    def zeros(*shape, dtype=None, device=None, requires_grad=False) -> Tensor:
        """A tensor of zeros: ``Tensor.zeros(2, 3)``, ``Tensor.zeros((2, 3),
        dtype=mlfuse.int32)``."""
        dt = dtype or dtypes.default_float
        return Tensor.full(_shape_arg(shape), 0, dt, device, requires_grad)

    @staticmethod
    def ones(*shape, dtype=None, device=None, requires_grad=False) -> Tensor:
        """A tensor of ones: ``Tensor.ones(2, 3)``."""
        dt = dtype or dtypes.default_float
        return Tensor.full(_shape_arg(shape), 1, dt, device, requires_grad)

    def full_like(t: Tensor, fill_value, dtype=None, device=None) -> Tensor:
        """Like ``t`` (shape, dtype and device unless given) and filled with
        ``fill_value``: ``Tensor.full_like(x, 2)``, ``x.full_like(fill_value=2)``."""
        return Tensor.full(t.shape, fill_value, dtype or t.dtype, device or t.device)

    def zeros_like(t: Tensor, dtype=None, device=None) -> Tensor:
        """Zeros with ``t``'s shape, dtype and device: ``Tensor.zeros_like(x)``."""
        return Tensor.full(t.shape, 0, dtype or t.dtype, device or t.device)

    def ones_like(t: Tensor, dtype=None, device=None) -> Tensor:
        """Ones with ``t``'s shape, dtype and device: ``Tensor.ones_like(x)``."""
        return Tensor.full(t.shape, 1, dtype or t.dtype, device or t.device)

    def empty_like(t: Tensor, dtype=None, device=None) -> Tensor:
        """A new tensor with ``t``'s shape, dtype and device (zeros; tinygrad's and
        PyTorch's contents are unspecified): ``Tensor.empty_like(x)``."""
        return Tensor.full(t.shape, 0, dtype or t.dtype, device or t.device)

    def const_like(self, b) -> Tensor:
        """``b`` in this tensor's shape, dtype and device (tinygrad's):
        ``x.const_like(1.5)``."""
        return Tensor.full(self.shape, b, self.dtype, self.device)

    def replace(self, x: Tensor) -> Tensor:
        """Make this tensor hold ``x``'s value (same shape and dtype; tinygrad's):
        ``w.replace(w - lr * g)``."""
        if not isinstance(x, Tensor):
            raise TypeError(f"replace: expected a Tensor, got {type(x).__name__}")
        if x.shape != self.shape or x.dtype != self.dtype:
            raise ArgumentError(
                f"replace: shape {x.shape} and dtype {x.dtype.name} must match this tensor's "
                f"{self.shape} and {self.dtype.name}"
            )
        self.node = x.node
        return self

    def to_(self, device: str | None) -> Tensor:
        """Move this tensor to ``device`` in place (tinygrad's): ``x.to_("cpu")``."""
        moved = self.to(device)
        if moved is not self:
            self.node = moved.node
        return self

    @staticmethod
    def arange(start, stop=None, step=1, dtype=None, device=None) -> Tensor:
        """Evenly spaced values in ``[start, stop)``: ``Tensor.arange(5)``, ``Tensor.arange(0, 1,
        0.25)``.

        Integers give int64 (as PyTorch), any float argument the default float.
        """
        if stop is None:
            start, stop = 0, start
        if step == 0:
            raise ArgumentError("arange step must not be 0")
        is_int = all(isinstance(v, (int, np.integer)) for v in (start, stop, step))
        dt = (
            dtypes.as_dtype(dtype)
            if dtype
            else (dtypes.default_int if is_int else dtypes.default_float)
        )
        n = max(0, math.ceil((stop - start) / step))
        if n and dt.is_int and not dt.is_bool:
            last = start + (n - 1) * step
            lo, hi = dtypes.min(dt), dtypes.max(dt)
            for v in (start, last):
                if not lo <= v <= hi:
                    raise OverflowError(f"arange: {v} does not fit in {dt.name} (range {lo}..{hi})")
        return Tensor(np.arange(start, stop, step).astype(dt.host), dt, device)

    @staticmethod
    def eye(n: int, m: int | None = None, dtype=None, device=None) -> Tensor:
        """The identity matrix (``n`` x ``m``, square by default): ``Tensor.eye(3)``."""
        for v, what in ((n, "n"), (m, "m")):
            if v is not None and (not isinstance(v, (int, np.integer)) or v < 0):
                raise ArgumentError(f"eye: {what} must be a non-negative int, got {v!r}")
        return Tensor(np.eye(n, m), dtype or dtypes.default_float, device)

    @staticmethod
    def empty(*shape, dtype=None, device=None, requires_grad=False) -> Tensor:
        """A tensor whose values are not meant to be read before they are written
        (mlfuse fills it with zeros): ``Tensor.empty(2, 3)``."""
        return Tensor.zeros(*shape, dtype=dtype, device=device, requires_grad=requires_grad)

    @staticmethod
    def linspace(start, end, steps: int, dtype=None, device=None) -> Tensor:
        """``steps`` evenly spaced values from ``start`` to ``end`` inclusive:
        ``Tensor.linspace(0, 1, 5)``."""
        if not isinstance(steps, (int, np.integer)) or isinstance(steps, bool):
            raise ArgumentTypeError(f"linspace: steps must be a non-negative int, got {steps!r}")
        if steps < 0:
            raise ArgumentError(f"linspace: steps must be a non-negative int, got {steps!r}")
        dt = dtypes.as_dtype(dtype) if dtype is not None else dtypes.default_float
        if dt.is_bool:
            raise ArgumentError("linspace: bool is not supported (as in PyTorch)")
        vals = np.linspace(float(start), float(end), int(steps))
        return Tensor(vals.astype(dt.host) if not dt.is_float else vals, dt, device)

    @staticmethod
    def logspace(start, end, steps: int, base: float = 10.0, dtype=None, device=None) -> Tensor:
        """``base ** linspace(start, end, steps)``: ``Tensor.logspace(0, 3, 4)`` is
        ``[1, 10, 100, 1000]``."""
        if not isinstance(steps, (int, np.integer)) or isinstance(steps, bool):
            raise ArgumentTypeError(f"logspace: steps must be a non-negative int, got {steps!r}")
        if steps < 0:
            raise ArgumentError(f"logspace: steps must be a non-negative int, got {steps!r}")
        dt = dtypes.as_dtype(dtype) if dtype is not None else dtypes.default_float
        vals = float(base) ** np.linspace(float(start), float(end), int(steps))
        return Tensor(vals.astype(dt.host) if not dt.is_float else vals, dt, device)

    @staticmethod
    def randint(*args, low=None, high=None, size=None, dtype=None, device=None, seed=None):
        """Random integers in ``[low, high)``, spelled as PyTorch's ``torch.randint``
        (``low, high, size`` or ``high, size``: ``Tensor.randint(0, 10, (2, 3))``) or
        as tinygrad's (the shape first, ``low``/``high`` keywords defaulting to 0 and
        10: ``Tensor.randint(2, 3, high=5)``)."""
        if size is not None or any(isinstance(a, (tuple, list)) for a in args[1:]):
            if size is None:
                *args, size = args
            bounds = [*args] + [b for b in (low, high) if b is not None]
            if len(bounds) == 1:
                lo, hi = 0, bounds[0]
            elif len(bounds) == 2:
                lo, hi = bounds
            else:
                raise ArgumentTypeError(
                    f"randint: give (low, high, size) or (high, size), got {len(bounds)} bounds"
                )
            shape = _shape_arg(size if isinstance(size, (tuple, list)) else (size,))
        else:  # tinygrad's: the shape first
            shape = _shape_arg(args)
            lo, hi = (0 if low is None else low), (10 if high is None else high)
        for name, v in (("low", lo), ("high", hi)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise ArgumentTypeError(f"randint: {name} must be an int, got {v!r}")
        low, high = int(lo), int(hi)
        if high <= low:
            raise ArgumentError(f"randint: high ({high}) must be above low ({low})")
        dt = dtypes.as_dtype(dtype) if dtype is not None else dtypes.int64
        if not dt.is_int:
            return _random(lambda g: g.integers(low, high, shape), dt, device, seed=seed)
        if low < dtypes.min(dt) or high - 1 > dtypes.max(dt):
            raise ArgumentError(f"randint: [{low}, {high}) does not fit in {dt.name}")
        return _random(lambda g: g.integers(low, high, shape, dtype=dt.np), dt, device, seed=seed)

    def randn_like(t: Tensor, dtype=None, device=None) -> Tensor:
        """Standard normal values with ``t``'s shape: ``Tensor.randn_like(x)``."""
        return Tensor.randn(*t.shape, dtype=dtype or t.dtype, device=device or t.device)

    def rand_like(t: Tensor, dtype=None, device=None) -> Tensor:
        """Uniform [0, 1) values with ``t``'s shape: ``Tensor.rand_like(x)``."""
        return Tensor.rand(*t.shape, dtype=dtype or t.dtype, device=device or t.device)

    @staticmethod
    def randn(
        *shape, seed: int | Generator | None = None, dtype=None, device=None, requires_grad=False
    ) -> Tensor:
        """Standard normal random values: ``Tensor.randn(2, 3, seed=0)``; complex
        dtypes draw each part from N(0, 1/2), as PyTorch's."""
        dt = dtype or dtypes.default_float
        shape = _shape_arg(shape)
        if dtypes.as_dtype(dt).is_complex:
            from mlfuse import complex_tensors as _complex

            return _complex.randn(shape, dt, device, requires_grad, seed)
        return _random(lambda g: g.standard_normal(shape), dt, device, requires_grad, seed)

    @staticmethod
    def rand(
        *shape, seed: int | Generator | None = None, dtype=None, device=None, requires_grad=False
    ) -> Tensor:
        """Uniform random values in [0, 1): ``Tensor.rand(2, 3, seed=0)``. Values are
        multiples of 2^-p for the dtype's precision p, so that none rounds up to 1."""
        dt = dtypes.as_dtype(dtype or dtypes.default_float)
        if dt.is_complex:  # each part uniform in [0, 1), as PyTorch's
            from mlfuse import complex_tensors as _complex

            return _complex.rand(_shape_arg(shape), dt, device, requires_grad, seed)
        if not dt.is_float:
            raise ArgumentTypeError(f"rand: dtype must be floating point, got {dt.name}")
        shape = _shape_arg(shape)
        return _random(lambda g: _unit_uniform(g, shape, dt), dt, device, requires_grad, seed)

    @staticmethod
    def uniform(
        *shape,
        low=0.0,
        high=1.0,
        seed: int | Generator | None = None,
        dtype=None,
        device=None,
        requires_grad=False,
    ) -> Tensor:
        """Uniform random values in ``[low, high)``: ``Tensor.uniform(3, low=-1, high=1,
        seed=0)``; an integer dtype gives integers (``floor``), as ``randint``."""
        dt = dtypes.as_dtype(dtype or dtypes.default_float)
        low, high = float(low), float(high)
        if not low <= high:
            raise ArgumentError(f"uniform: low ({low}) must not be above high ({high})")
        shape = _shape_arg(shape)
        return _random(lambda g: _uniform_values(g, shape, low, high, dt), dt, device,
                       requires_grad, seed)  # fmt: skip

    @staticmethod
    def normal(
        *shape,
        mean=0.0,
        std=1.0,
        seed: int | Generator | None = None,
        dtype=None,
        device=None,
        requires_grad=False,
    ) -> Tensor:
        """Normal random values: ``Tensor.normal(3, 4, mean=1, std=0.5)`` (tinygrad's)."""
        dt = dtype or dtypes.default_float
        shape = _shape_arg(shape)
        return _random(lambda g: g.normal(mean, std, shape), dt, device, requires_grad, seed)

    @staticmethod
    def _fan_in(shape) -> int:
        shape = _shape_arg(shape)
        return math.prod(shape[1:]) if len(shape) > 1 else (shape[0] if shape else 1)

    @staticmethod
    def scaled_uniform(*shape, **kw) -> Tensor:
        """Uniform in ``[-1, 1) / sqrt(numel)`` (tinygrad's initializer)."""
        shape = _shape_arg(shape)
        b = math.prod(shape) ** -0.5 if math.prod(shape) else 1.0
        return Tensor.uniform(*shape, low=-b, high=b, **kw)

    @staticmethod
    def glorot_uniform(*shape, **kw) -> Tensor:
        """Xavier/Glorot uniform: bound ``sqrt(6 / (shape[0] + prod(shape[1:])))``."""
        shape = _shape_arg(shape)
        fan = (shape[0] if shape else 1) + (math.prod(shape[1:]) if len(shape) > 1 else 1)
        b = math.sqrt(6 / fan)
        return Tensor.uniform(*shape, low=-b, high=b, **kw)

    @staticmethod
    def kaiming_uniform(*shape, a: float = 0.01, **kw) -> Tensor:
        """He uniform for a leaky relu of slope ``a``: bound
        ``sqrt(3) * sqrt(2 / (1 + a^2)) / sqrt(fan_in)``, fan_in ``prod(shape[1:])``."""
        shape = _shape_arg(shape)
        b = math.sqrt(3.0) * math.sqrt(2.0 / (1 + a * a)) / math.sqrt(max(Tensor._fan_in(shape), 1))
        return Tensor.uniform(*shape, low=-b, high=b, **kw)

    @staticmethod
    def kaiming_normal(*shape, a: float = 0.01, **kw) -> Tensor:
        """He normal: std ``sqrt(2 / (1 + a^2)) / sqrt(fan_in)``."""
        shape = _shape_arg(shape)
        std = math.sqrt(2.0 / (1 + a * a)) / math.sqrt(max(Tensor._fan_in(shape), 1))
        return Tensor.normal(*shape, std=std, **kw)

    # -- properties -------------------------------------------------------------
    @property
    def shape(self) -> Shape:
        """The dims as a tuple: ``Tensor.zeros(2, 3).shape`` is ``(2, 3)``."""
        return self.node.shape

    @property
    def dtype(self) -> DType:
        """The element type: ``Tensor([1.0]).dtype`` is ``mlfuse.float32``."""
        return self.node.dtype

    @property
    def device(self) -> str:
        """The name of the device this tensor lives on (``"cpu"``)."""
        return self.node.device

    @_traced
    def to(
        self,
        *args,
        device=None,
        dtype=None,
        non_blocking: bool = False,
        copy: bool = False,
        memory_format=None,
    ) -> Tensor:
        """This tensor on a device and/or of a dtype, as PyTorch spells it:
        ``x.to("cpu")``, ``x.to(mlfuse.float16)``, ``x.to("cpu", mlfuse.float16)``,
        ``x.to(dtype=mlfuse.int8, device="cpu")``, ``x.to(other)`` (other's device
        and dtype). Itself when nothing changes, else lazy copies/casts; ``copy=True``
        always gives a tensor of its own, ``memory_format`` is :meth:`contiguous`'s
        and ``non_blocking`` is accepted (copies between devices happen when the
        values are needed)."""
        if len(args) > 2 and not (len(args) <= 4 and all(isinstance(a, bool) for a in args[2:])):
            raise TypeError(f"to() takes at most 2 positional arguments, got {len(args)}")
        if len(args) == 4:  # PyTorch's to(device, dtype, non_blocking, copy)
            copy = copy or args[3]
        if len(args) >= 3:  # PyTorch's to(device, dtype, non_blocking)
            args = args[:2]
        if len(args) == 2 and isinstance(args[1], bool) and not isinstance(args[0], str):
            args = args[:1]  # to(dtype_or_tensor, non_blocking)
        fmt = layouts.check_memory_format(memory_format, "to", self.ndim)
        for a in args:
            if isinstance(a, Tensor):
                if len(args) > 1:
                    raise TypeError("to(other): no other positional argument with a tensor")
                device, dtype = device or a.device, dtype or a.dtype
            elif isinstance(a, str) and a.removeprefix("torch.") not in dtypes.NAMES:
                if device is not None:
                    raise TypeError(f"to(): device given twice ({device!r} and {a!r})")
                device = a
            else:
                if dtype is not None:
                    raise TypeError(f"to(): dtype given twice ({dtype!r} and {a!r})")
                dtype = a
        out = self
        if dtype is not None:
            out = out.cast(dtype)
        if device is not None:
            dev = targets.device_name(device)
            if dev != out.device:
                out = Tensor(graph.make("copy", (out.node,), dev, out.shape, out.dtype, dev))
        if fmt is not None and fmt.rank is not None:
            return out.contiguous(fmt)
        return out.clone() if copy and out is self else out

    @property
    def ndim(self) -> int:
        """The number of dims: ``Tensor.zeros(2, 3).ndim`` is 2."""
        return len(self.shape)

    def numel(self) -> int:
        """The number of elements: ``Tensor.zeros(2, 3).numel()`` is 6."""
        return math.prod(self.shape)

    def size(self, dim: int | None = None):
        """The shape, or the size of one dim: ``x.size()``, ``x.size(-1)``."""
        return self.shape if dim is None else self.shape[_norm_axis(dim, self.ndim, "dim")]

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __repr__(self) -> str:
        """Values once realized (``tensor([1., 2.], dtype=float32)``), else the
        shape and dtype (``<Tensor (2, 3) float32 lazy>``): repr never computes."""
        if not self.node.realized:
            return f"<Tensor {self.shape} {self.dtype.name} lazy>"
        body = np.array2string(
            graph.host_array(self.node),
            separator=", ",
            threshold=200,
            edgeitems=3,
            prefix="tensor(",
        )
        dev = f", device={self.device!r}" if self.device != "cpu" else ""
        return f"tensor({body}, dtype={self.dtype.name}{dev})"

    def __bool__(self) -> bool:
        """The truth value of a one-element tensor (as PyTorch): ``bool(x.any())``."""
        if self.numel() != 1:
            raise TypeError(
                f"the truth value of a tensor of {self.numel()} elements is ambiguous; "
                "use .any() or .all()"
            )
        return bool(self.item())

    # -- autograd -----------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        """Whether gradients flow to this tensor (it was made with
        ``requires_grad=True``, or computed from such a tensor with recording on)."""
        return self.node.tape is not None or autograd.freed(self.node)

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        self.requires_grad_(flag)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Make this tensor a leaf whose gradient ``backward()`` adds to ``.grad``
        (float tensors only): ``w = Tensor.randn(3, 4).requires_grad_()``.
        ``requires_grad_(False)`` also marks it frozen: an optimizer given it
        leaves it alone (PyTorch's), where a tensor never asked about gradients
        is made to require them (tinygrad's)."""
        if not requires_grad:
            FROZEN.add(self)
            if self.node.tape is not None and self.node.tape is not graph.LEAF:
                raise RuntimeError(
                    "requires_grad_(False) on a tensor computed from others that need "
                    "gradients; use .detach()"
                )
            if self.node.tape is graph.LEAF:
                self._set_node(self._detached().node)
                autograd.release(self)
            return self
        if not (self.dtype.is_float):
            raise RuntimeError(
                f"only float tensors can require gradients, this one is {self.dtype.name}"
            )
        FROZEN.discard(self)
        if self.node.tape is graph.LEAF:
            return self
        if self.node.tape is not None:
            return self  # computed from leaves: it needs a gradient already
        self.node = _leaf_node(self.node)
        autograd.hold(self)
        return self

    def _as_leaf(self) -> Tensor:
        return self.requires_grad_()

    @property
    def is_leaf(self) -> bool:
        """Whether this tensor was not computed from tensors that need gradients:
        ``Tensor([1.0], requires_grad=True).is_leaf`` is True."""
        t = self.node.tape
        return t is graph.LEAF or t is None and not autograd.freed(self.node)

    @property
    def grad_fn(self) -> autograd.GradFn | None:
        """How this tensor was computed from tensors that need gradients (None
        for a leaf or a tensor that needs none), as PyTorch's:
        ``(w * 2).grad_fn.name()`` is ``"MulBackward"``."""
        return autograd.grad_fn_of(self.node)

    @property
    def grad(self) -> Tensor | None:
        """The gradient ``backward()`` accumulated for this leaf (None before the
        first backward, or after ``zero_grad``): ``w.grad``."""
        return getattr(self, "_grad", None)

    @grad.setter
    def grad(self, g: Tensor | None) -> None:
        if g is not None:
            if not isinstance(g, Tensor):
                raise TypeError(f"grad must be a Tensor or None, got {type(g).__name__}")
            if g.shape != self.shape:
                raise ArgumentError(f"grad has shape {g.shape}, the tensor {self.shape}")
        self._set_grad(g)

    def _set_grad(self, g: Tensor | None) -> None:
        self._grad = g

    def register_hook(self, hook):
        """Call ``hook(grad)`` with this tensor's gradient whenever a backward
        computes it, before it reaches ``.grad`` or flows further; a tensor it
        returns replaces the gradient: ``h.register_hook(lambda g: g.clamp(-1, 1))``.
        Returns a handle whose ``remove()`` takes the hook off."""
        if self.node.tape is None:
            raise RuntimeError(
                "register_hook: this tensor does not require grad (cannot register a hook)"
            )
        if not callable(hook):
            raise TypeError(f"register_hook: hook must be callable, got {type(hook).__name__}")
        return autograd.register_hook(self.node, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """Call ``hook(self)`` after a backward has added to this leaf's ``.grad``
        (an optimizer that steps inside the backward pass uses it). Returns a
        handle whose ``remove()`` takes the hook off."""
        if not self.is_leaf or not self.requires_grad:
            raise RuntimeError(
                "register_post_accumulate_grad_hook: only leaf tensors that require "
                "grad take post-accumulate hooks"
            )
        if not callable(hook):
            raise TypeError(
                f"register_post_accumulate_grad_hook: hook must be callable, "
                f"got {type(hook).__name__}"
            )
        return autograd.register_post_accumulate_hook(self, hook)

    @property
    def retains_grad(self) -> bool:
        """Whether :meth:`retain_grad` was called on this computed tensor (leaves keep
        their ``.grad`` anyway: False for them, as in PyTorch)."""
        return not self.is_leaf and autograd.holds(self)

    def retain_grad(self) -> Tensor:
        """Keep the gradient of this computed tensor in ``.grad`` on ``backward()``."""
        if self.node.tape is None:
            raise RuntimeError("retain_grad: this tensor does not require grad")
        autograd.hold(self)
        return self

    def backward(
        self, gradient=None, retain_graph: bool = False, create_graph: bool = False, inputs=None
    ):
        """Add the gradients of this tensor (one element, or weighted by
        ``gradient``) to ``.grad`` of the leaves it was computed from (of
        ``inputs`` only, when given); the gradients stay lazy until read or
        realized: ``loss.backward()``."""
        autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def gradient(self, *targets: Tensor, gradient=None) -> list[Tensor]:
        """The gradients of this tensor (one element, or weighted by
        ``gradient``) with respect to ``targets``, as a list, tinygrad's API:
        ``dx, dw = loss.gradient(x, w)``. Any tensor this one was computed
        from is a target, ``requires_grad`` or not; a target it does not
        depend on gets zeros. ``.grad`` is left alone and nothing is realized."""
        for i, t in enumerate(targets):
            if not isinstance(t, Tensor):
                raise TypeError(f"gradient: target {i} is {type(t).__name__}, not a Tensor")
            if not t.dtype.is_float:
                raise TypeError(
                    f"gradient: target {i} has dtype {t.dtype.name}; only float tensors "
                    "have gradients"
                )
        seed = autograd.seed_for(self, gradient, "gradient")
        got = autograd.gradients(self.node, seed, [t.node for t in targets], whole_graph=True)
        return [got[id(t.node)] if id(t.node) in got else Tensor.zeros_like(t) for t in targets]

    def detach(self) -> Tensor:
        """The same values, cut off from autograd (no gradient flows through it),
        sharing this tensor's storage as PyTorch's and tinygrad's do: a write
        through it (``x.detach()[0] = 1``) changes this tensor, and an assign to
        this tensor shows through it; ``x.detach().clone()`` is a copy:
        ``x.detach()``."""
        d = self._detached()
        d._base = (self, "detach", None)
        _add_view(self, d)
        return d

    def _detached(self) -> Tensor:
        """The value now, cut off from autograd, without sharing later writes."""
        n = self.node
        if n.tape is None:
            return Tensor(n)
        if n.realized:
            return Tensor(_alias(n))
        return Tensor(graph.make("detach", (n,), None, n.shape, n.dtype))

    def detach_(self) -> Tensor:
        """Cut this tensor off from autograd in place: ``h.detach_()``."""
        self._set_node(self._detached().node)
        autograd.release(self)
        return self

    # -- realization ------------------------------------------------------------
    def realize(self, *others: Tensor) -> Tensor:
        """Compute this tensor (and ``others``, in the same schedule)."""
        graph.realize(_nodes_of((self, *others)))
        return self

    def numpy(self, *, force: bool = False) -> np.ndarray:
        """A copy of the values as a numpy array (realizes): ``x.numpy()``. It is
        always a copy on the host, so PyTorch's ``force=True`` (detach, move to the
        CPU first) changes nothing."""
        self.realize()
        return graph.host_array(self.node)

    def item(self):
        """The value of a one-element tensor as a Python number: ``x.sum().item()``."""
        if self.numel() != 1:
            raise ArgumentError(f"item() needs exactly one element, the tensor has {self.numel()}")
        return self.numpy().reshape(()).item()

    def tolist(self):
        """The values as nested Python lists: ``x.tolist()``."""
        return self.numpy().tolist()

    # -- interop ----------------------------------------------------------------
    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        """The values as a numpy array: ``np.asarray(t)``, ``np.array(t)``.

        ``np.asarray(t, copy=False)`` aliases the tensor's CPU memory (an error
        where it cannot, as numpy asks)."""
        if copy is False:
            arr = self._shared()
            if arr is None or (dtype is not None and np.dtype(dtype) != arr.dtype):
                raise ArgumentError(
                    f"np.asarray(copy=False): a {self.device} tensor of {self.dtype.name} "
                    "cannot be viewed without a copy"
                )
            return arr
        arr = self.numpy()
        return arr if dtype is None else arr.astype(dtype, copy=False)

    def _shared(self) -> np.ndarray | None:
        """The realized values as a host array aliasing the buffer (None if impossible)."""
        self.realize()
        n = self.node
        if n.arg is not None:  # a realized constant has no buffer to share
            return None
        return graph.shared_array(n)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """Export as a DLPack capsule (``np.from_dlpack(t)``, ``torch.from_dlpack(t)``):
        zero-copy on the CPU, the consumer then shares the tensor's memory."""
        if self.dtype == dtypes.bfloat16:
            raise BufferError(
                "a bfloat16 tensor cannot be exported through numpy's DLPack (numpy has no "
                "bfloat16); export x.float() instead"
            )
        arr = self._shared() if copy is not True else None
        if arr is None:
            if copy is False:
                raise BufferError(f"a {self.device} tensor cannot be exported without a copy")
            arr = self.numpy()
        kw = {"stream": stream, "max_version": max_version, "dl_device": dl_device}
        return arr.__dlpack__(**{k: v for k, v in kw.items() if v is not None})

    def __dlpack_device__(self) -> tuple[int, int]:
        """The DLPack device of :meth:`__dlpack__`'s capsule: ``(kDLCPU, 0)``."""
        return (1, 0)

    @staticmethod
    def from_dlpack(ext, device: str | None = None) -> Tensor:
        """A tensor over the memory of a DLPack producer (a numpy array, a torch
        CPU tensor...): ``Tensor.from_dlpack(torch.arange(4))`` shares it without
        a copy when it is C-contiguous host memory on a CPU device, copies otherwise."""
        try:
            arr = np.from_dlpack(ext)
        except (TypeError, AttributeError, BufferError, RuntimeError) as e:
            raise TypeError(f"from_dlpack: cannot import {type(ext).__name__}: {e}") from None
        dtypes.from_numpy(arr.dtype)  # a clear error for dtypes mlfuse lacks
        return Tensor(graph.adopted(arr, targets.device_name(device)))

    # -- elementwise ------------------------------------------------------------
    def _operands(self, other, reverse: bool = False) -> tuple[Tensor, Tensor]:
        """Both operands as tensors of one dtype and one broadcast shape."""
        if isinstance(other, Tensor):
            dt = dtypes.promote(self.dtype, other.dtype)
            o = other
        elif isinstance(other, (bool, int, float, np.number)):
            v = other.item() if isinstance(other, np.number) else other
            dt = dtypes.scalar_dtype(v, self.dtype)
            a = self.cast(dt)
            b = Tensor(_const_node(v, dt, self.device, a.shape))
            return (b, a) if reverse else (a, b)
        elif isinstance(other, (np.ndarray, list, tuple)):
            o = Tensor(other, device=self.device)
            dt = dtypes.promote(self.dtype, o.dtype)
        else:
            raise TypeError(f"unsupported operand type for a Tensor op: {type(other).__name__}")
        a, b = self.cast(dt), o.cast(dt)
        shape = broadcast_shape(a.shape, b.shape)
        a, b = a._broadcast_to(shape), b._broadcast_to(shape)
        return (b, a) if reverse else (a, b)

    def _broadcast_to(self, shape: Shape) -> Tensor:
        if self.shape == shape:
            return self
        if len(shape) < self.ndim:
            raise ArgumentError(f"cannot broadcast {self.shape} to {shape}")
        t = (
            self.reshape((1,) * (len(shape) - self.ndim) + self.shape)
            if self.ndim < len(shape)
            else self
        )
        for s, n in zip(t.shape, shape):
            if s != n and s != 1:
                raise ArgumentError(f"cannot broadcast {self.shape} to {shape}")
        return t.expand(shape)

    def _unary(self, kind: str, allow=("f", "i")) -> Tensor:
        if self.dtype.kind not in allow:
            raise DTypeError(f"{kind} is not defined for {self.dtype.name} tensors")
        return Tensor(graph.make(kind, (self.node,), None, self.shape, self.dtype))

    def _float(self) -> Tensor:
        return self if self.dtype.is_float else self.cast(dtypes.default_float)

    def _binary(self, kind: str, other, reverse=False, result: DType | None = None) -> Tensor:
        a, b = self._operands(other, reverse)
        return Tensor(graph.make(kind, (a.node, b.node), None, a.shape, result or a.dtype))

    def _arith(self, kind: str, other, reverse=False) -> Tensor:
        """+, - and *; on two bools they are numpy's or, error and and."""
        if _complex_operand(other):
            return _complex_op(f"__{'r' if reverse else ''}{kind}__", self, other)
        a, b = self._operands(other, reverse)
        if a.dtype.is_bool:
            if kind == "sub":
                raise DTypeError("subtracting bool tensors is not supported; use ^ instead")
            kind = {"add": "or", "mul": "and"}[kind]
        return Tensor(graph.make(kind, (a.node, b.node), None, a.shape, a.dtype))

    @_traced
    def __add__(self, other):
        return self._arith("add", other)

    @_traced
    def __radd__(self, other):
        return self._arith("add", other, reverse=True)

    @_traced
    def __sub__(self, other):
        return self._arith("sub", other)

    @_traced
    def __rsub__(self, other):
        return self._arith("sub", other, reverse=True)

    @_traced
    def __mul__(self, other):
        return self._arith("mul", other)

    @_traced
    def __rmul__(self, other):
        return self._arith("mul", other, reverse=True)

    @_traced
    def __truediv__(self, other):
        if _complex_operand(other):
            return _complex_op("__truediv__", self, other)
        a, b = self._operands(other)
        return a._float()._binary("div", b._float())

    @_traced
    def __rtruediv__(self, other):
        if _complex_operand(other):
            return _complex_op("__rtruediv__", self, other)
        a, b = self._operands(other, reverse=True)
        return a._float()._binary("div", b._float())

    @_traced
    def __floordiv__(self, other):
        a, b = self._operands(other)
        if a.dtype.is_float:  # PyTorch's (and Python's): consistent with % for any quotient
            m = a.fmod(b)
            div = (a - m) / b
            div = ((m != 0) & ((b < 0) != (m < 0))).where(div - 1, div)
            fl = div.floor()
            fl = (div - fl > 0.5).where(fl + 1, fl)
            q = a / b
            out = (div != 0).where(fl, (q.signbit()).where(-0.0, 0.0).cast(a.dtype))
            return (b == 0).where(q, out)
        return a._int_op("idiv", b)

    @_traced
    def __rfloordiv__(self, other):
        a, b = self._operands(other, reverse=True)
        return a.__floordiv__(b)

    @_traced
    def __mod__(self, other):
        a, b = self._operands(other)
        if a.dtype.is_float:  # PyTorch's: fmod, moved to the divisor's sign (exact)
            m = a.fmod(b)
            return ((m != 0) & ((b < 0) != (m < 0))).where(m + b, m)
        return a._int_op("mod", b)

    @_traced
    def __rmod__(self, other):
        a, b = self._operands(other, reverse=True)
        return a.__mod__(b)

    def mod(self, other) -> Tensor:
        """Python's remainder (the sign of the divisor), as ``%``: ``x.mod(3)``."""
        return self % other

    def _int_op(self, kind: str, other: Tensor) -> Tensor:
        if self.dtype.is_bool:
            raise DTypeError(f"{kind} is not defined for bool tensors")
        return self._binary(kind, other)

    @_traced
    def __pow__(self, other):
        """``self ** other``; integers stay integers (``Tensor([3]) ** 2`` is int32 9),
        an integer to a negative integer scalar power is refused as in PyTorch."""
        if isinstance(other, (int, np.integer)) and not isinstance(other, bool):
            e = int(other)
            if not self.dtype.is_float:
                if e < 0:
                    raise ArgumentError(
                        f"pow: integers to negative integer powers are not allowed (exponent {e})"
                    )
                return self._int_pow_scalar(e)
            if 0 <= e <= 4:
                out = Tensor.ones_like(self) if e == 0 else self
                for _ in range(e - 1):
                    out = out * self
                return out
        a, b = self._operands(other)
        if not a.dtype.is_float:
            return a._int_pow(b)
        return a._float()._binary("pow", b._float())

    @_traced
    def __rpow__(self, other):
        if _complex_operand(other):
            return _complex_op("__rpow__", self, other)
        a, b = self._operands(other, reverse=True)
        if not a.dtype.is_float:
            return a._int_pow(b)
        return a._float()._binary("pow", b._float())

    def _int_pow_scalar(self, e: int) -> Tensor:
        """``self ** e`` for an integer tensor and ``e >= 0`` by repeated squaring
        (wrapping like PyTorch's integer pow)."""
        x = self.cast(dtypes.default_int) if self.dtype.is_bool else self
        out, sq = None, x
        while e:
            if e & 1:
                out = sq if out is None else out * sq
            e >>= 1
            if e:
                sq = sq * sq
        return out if out is not None else Tensor.ones_like(x)

    def _int_pow(self, e: Tensor) -> Tensor:
        """``self ** e`` elementwise for integer tensors: square-and-multiply over
        the exponent's bits (wrapping like PyTorch); a negative exponent gives
        1 for a base of 1, +-1 for -1 and 0 otherwise (integer ``1 / base**-e``)."""
        x = self.cast(dtypes.default_int) if self.dtype.is_bool else self
        e = e.cast(x.dtype)
        one = Tensor.ones_like(x)
        out, sq = one, x
        for bit in range(x.dtype.itemsize * 8 - (0 if x.dtype.unsigned else 1)):
            out = ((e & (1 << bit)) != 0).where(out * sq, out)
            sq = sq * sq
        if x.dtype.unsigned:  # no negative exponents
            return out
        odd = (e & 1) != 0
        negative = (x == 1).where(one, (x == -1).where(odd.where(-one, one), 0))
        return (e < 0).where(negative, out)

    @_traced
    def __neg__(self):
        if self.dtype.is_bool:
            return self.logical_not()
        return self._unary("neg")

    @_traced
    def __abs__(self):
        return self._unary("abs")

    def abs(self) -> Tensor:
        """Absolute value, elementwise: ``Tensor([-1.5, 2]).abs()``."""
        return self.__abs__()

    def _bitwise(self, kind: str, other, reverse=False) -> Tensor:
        dt = self.dtype
        if isinstance(other, (int, np.integer)) and not isinstance(other, bool) and dt.is_int:
            # a mask is its bits: ``x | 0xFFFFFFFF`` on int32 is ``x | -1`` (as in
            # PyTorch); values wider than the dtype stay an error
            bits = 8 * dt.itemsize
            if dt.is_signed and dtypes.max(dt) < other < 1 << bits:
                other = int(other) - (1 << bits)
            elif not dt.is_signed and -(1 << (bits - 1)) <= other < 0:
                other = int(other) + (1 << bits)
        a, b = self._operands(other, reverse)
        if a.dtype.is_float:
            raise DTypeError(f"{kind} is not defined for {a.dtype.name} tensors")
        return a._binary(kind, b)

    @_traced
    def __and__(self, other):
        return self._bitwise("and", other)

    @_traced
    def __rand__(self, other):
        return self._bitwise("and", other, True)

    @_traced
    def __or__(self, other):
        return self._bitwise("or", other)

    @_traced
    def __ror__(self, other):
        return self._bitwise("or", other, True)

    @_traced
    def __xor__(self, other):
        return self._bitwise("xor", other)

    @_traced
    def __rxor__(self, other):
        return self._bitwise("xor", other, True)

    @_traced
    def __invert__(self):
        return self._unary("not", allow=("b", "i"))

    def logical_not(self) -> Tensor:
        """Elementwise not, as bool: ``(x > 0).logical_not()``."""
        return self.cast(dtypes.bool_)._unary("not", allow=("b",))

    def _shift(self, kind: str, other, reverse=False) -> Tensor:
        a, b = self._operands(other, reverse)
        if not a.dtype.is_int:
            raise DTypeError(
                f"{'<<' if kind == 'shl' else '>>'} is not defined for {a.dtype.name} tensors"
            )
        return a._binary(kind, b)

    @_traced
    def __lshift__(self, other):
        """``x << n`` (integers; a shift by a negative amount or by the bit width or
        more gives 0, as in PyTorch): ``Tensor([1, 2]) << 3``."""
        return self._shift("shl", other)

    @_traced
    def __rlshift__(self, other):
        return self._shift("shl", other, True)

    @_traced
    def __rshift__(self, other):
        """``x >> n``: arithmetic for signed integers, logical for unsigned ones; a shift by a
        negative amount or by the bit width or more gives the sign fill (0 or -1):
        ``Tensor([-8]) >> 1`` is -4."""
        return self._shift("shr", other)

    @_traced
    def __rrshift__(self, other):
        return self._shift("shr", other, True)

    def bitwise_left_shift(self, other) -> Tensor:
        """PyTorch's name for ``x << other``: ``x.bitwise_left_shift(2)``."""
        return self.__lshift__(other)

    def bitwise_right_shift(self, other) -> Tensor:
        """PyTorch's name for ``x >> other``: ``x.bitwise_right_shift(2)``."""
        return self.__rshift__(other)

    def lshift(self, other) -> Tensor:
        """tinygrad's name for ``x << other``: ``x.lshift(2)``."""
        return self.__lshift__(other)

    def rshift(self, other) -> Tensor:
        """tinygrad's name for ``x >> other``: ``x.rshift(2)``."""
        return self.__rshift__(other)

    def bitwise_and(self, other) -> Tensor:
        """PyTorch's name for ``x & other`` (integers and bools): ``x.bitwise_and(3)``."""
        return self.__and__(other)

    def bitwise_or(self, other) -> Tensor:
        """PyTorch's name for ``x | other`` (integers and bools): ``x.bitwise_or(3)``."""
        return self.__or__(other)

    def bitwise_xor(self, other) -> Tensor:
        """PyTorch's name for ``x ^ other`` (integers and bools): ``x.bitwise_xor(3)``."""
        return self.__xor__(other)

    def bitwise_not(self) -> Tensor:
        """PyTorch's name for ``~x`` (integers and bools): ``x.bitwise_not()``."""
        return self.__invert__()

    # comparisons give bool tensors
    @_traced
    def __lt__(self, other):
        return self._binary("cmplt", other, result=dtypes.bool_)

    @_traced
    def __le__(self, other):
        return self._binary("cmple", other, result=dtypes.bool_)

    @_traced
    def __gt__(self, other):
        return self._binary("cmplt", other, reverse=True, result=dtypes.bool_)

    @_traced
    def __ge__(self, other):
        return self._binary("cmple", other, reverse=True, result=dtypes.bool_)

    @_traced
    def __eq__(self, other):  # type: ignore[override]
        return self._binary("cmpeq", other, result=dtypes.bool_)

    @_traced
    def __ne__(self, other):  # type: ignore[override]
        return self._binary("cmpne", other, result=dtypes.bool_)

    # math
    @_traced
    def exp(self):
        """e to the power x, elementwise: ``x.exp()``."""
        return self._float()._unary("exp", ("f",))

    @_traced
    def exp2(self):
        """2 to the power x, elementwise: ``x.exp2()``."""
        return self._float()._unary("exp2", ("f",))

    @_traced
    def log(self):
        """Natural logarithm, elementwise: ``x.log()``."""
        return self._float()._unary("log", ("f",))

    @_traced
    def log2(self):
        """Base-2 logarithm, elementwise: ``x.log2()``."""
        return self._float()._unary("log2", ("f",))

    @_traced
    def sqrt(self):
        """Square root, elementwise: ``x.sqrt()``."""
        return self._float()._unary("sqrt", ("f",))

    @_traced
    @_half_in_float32
    def rsqrt(self):
        """``1 / sqrt(x)``, elementwise: ``x.rsqrt()``."""
        return self.sqrt().reciprocal()

    @_traced
    def reciprocal(self):
        """``1 / x``, elementwise: ``x.reciprocal()``."""
        return self._float()._unary("recip", ("f",))

    @_traced
    def sin(self):
        """Sine, elementwise (radians): ``x.sin()``."""
        return self._float()._unary("sin", ("f",))

    @_traced
    def cos(self):
        """Cosine, elementwise (radians): ``x.cos()``."""
        return self._float()._unary("cos", ("f",))

    @_traced
    def floor(self):
        """Largest integer not above x, elementwise: ``Tensor([1.7]).floor()``."""
        return self._unary("floor", ("f",)) if self.dtype.is_float else self

    @_traced
    def ceil(self):
        """Smallest integer not below x, elementwise: ``Tensor([1.2]).ceil()``."""
        return self._unary("ceil", ("f",)) if self.dtype.is_float else self

    @_traced
    def maximum(self, other):
        """Elementwise maximum of two tensors (NaN propagates; of bools, or):
        ``a.maximum(b)``."""
        a, b = self._operands(other)
        return a._binary("or" if a.dtype.is_bool else "max", b)

    @_traced
    def minimum(self, other):
        """Elementwise minimum of two tensors (NaN propagates; of bools, and):
        ``a.minimum(b)``."""
        a, b = self._operands(other)
        return a._binary("and" if a.dtype.is_bool else "min", b)

    @_traced
    def relu(self):
        """``max(x, 0)``, elementwise (NaN stays NaN, -0.0 stays -0.0, as in PyTorch
        and numpy): ``x.relu()``. Its gradient is 0 at 0, as PyTorch's."""
        out = self.maximum(0)
        if not self.dtype.is_float:
            return out
        # the gradient flows where x > 0 only (maximum would share it at the tie)
        return _derivative("relu", out, (self,), lambda c, g: ((c.x > 0).where(g, 0.0),))

    @_traced
    @_half_in_float32
    def sigmoid(self):
        """``1 / (1 + exp(-x))``, elementwise: ``x.sigmoid()``. Computed from
        ``exp(-|x|)``, which never overflows; the gradient is ``s (1 - s)``."""
        x = self._float()
        z = (-x.abs()).exp()
        out = (x >= 0).where(1 / (1 + z), z / (1 + z))
        return _derivative("sigmoid", out, (x,), lambda c, g: (g * c.out * (1 - c.out),))

    @_traced
    @_half_in_float32
    def tanh(self):
        """Hyperbolic tangent: ``Tensor([0.5]).tanh()``. Near 0 an odd Taylor
        polynomial (exact to the last bit, signed zeros kept); elsewhere
        ``sign(x) (1 - e) / (1 + e)`` with ``e = exp(-2|x|)``, which loses no
        precision there."""
        x = self._float()
        f64 = x.dtype == dtypes.float64
        cut, terms = (0.1, _TANH_TAYLOR[:8]) if f64 else (0.5, _TANH_TAYLOR)
        x2 = x * x
        poly = Tensor.full((), terms[-1], x.dtype, x.device)
        for c in reversed(terms[:-1]):
            poly = poly * x2 + c
        small = x * (1 + x2 * poly)  # x * (...) keeps the sign of a zero
        e = (x.abs() * -2).exp()
        big = (1 - e) / (1 + e)
        out = (x.abs() < cut).where(small, (x < 0).where(-big, big))
        return _derivative("tanh", out, (x,), lambda c, g: (g * (1 - c.out * c.out),))

    @_traced
    @_half_in_float32
    def gelu(self, approximate: str = "none"):
        """Gaussian error linear unit ``x * Phi(x)``: ``x.gelu()`` (exact, through
        erf, PyTorch's default), ``x.gelu(approximate="tanh")`` (the tanh form)."""
        x = self._float()
        k = math.sqrt(2 / math.pi)
        if approximate == "tanh":
            t = (k * (x + 0.044715 * x * x * x)).tanh()

            def tanh_rule(c, g):
                x = c.x
                t = (k * (x + 0.044715 * x * x * x)).tanh()
                d = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * 0.044715 * x * x)
                return (g * d,)

            return _derivative("gelu_tanh", 0.5 * x * (1 + t), (x,), tanh_rule)
        if approximate != "none":
            raise ArgumentError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
        if x.dtype != dtypes.float64:  # erfc's argument would carry float32 rounding
            out = x.cast(dtypes.float64).gelu().cast(x.dtype)
        else:
            out = 0.5 * x * (x * (-1 / math.sqrt(2))).erfc()  # erfc: no cancellation for x < 0

        def rule(c, g):  # Phi(x) + x phi(x)
            x = c.x
            phi = (x * x * -0.5).exp() * (1 / math.sqrt(2 * math.pi))
            return (g * (0.5 * (x * (-1 / math.sqrt(2))).erfc() + x * phi),)

        return _derivative("gelu", out, (x,), rule)

    @_traced
    @_half_in_float32
    def silu(self):
        """``x * sigmoid(x)``: ``x.silu()``."""
        return self * self.sigmoid()

    @_traced
    def clip(self, min=None, max=None):  # noqa: A002 - PyTorch's names
        """Limit values to ``[min, max]`` (scalars or tensors, either may be None):
        ``x.clip(0, 1)``, ``x.clamp(min=0)``. NaN stays NaN."""
        if min is None and max is None:
            raise ArgumentError("clamp: at least one of min and max must be given")
        out = self
        if min is not None:
            out = out.maximum(min)
        if max is not None:
            out = out.minimum(max)
        if not out.dtype.is_float:
            return out
        # PyTorch's gradient: to x inside [min, max], bounds included; to a tensor
        # bound where x passes it (maximum/minimum would halve it at the ties); where
        # min > max the output is max, and so is the gradient's
        x = self._broadcast_to(out.shape)
        lo = min._broadcast_to(out.shape) if isinstance(min, Tensor) else min
        hi = max._broadcast_to(out.shape) if isinstance(max, Tensor) else max
        srcs = (x, *(b for b in (lo, hi) if isinstance(b, Tensor)))

        def rule(c, g):
            x, bounds = c.srcs[0], list(c.srcs[1:])
            lo_t = bounds.pop(0) if isinstance(lo, Tensor) else lo
            hi_t = bounds.pop(0) if isinstance(hi, Tensor) else hi
            inside = None
            for keep in (
                None if lo is None else x >= lo_t,
                None if hi is None else x <= hi_t,
            ):
                if keep is not None:
                    inside = keep if inside is None else inside & keep
            parts = []
            if isinstance(lo, Tensor):
                low = x < lo_t
                if hi is not None:
                    low = low & (hi_t > lo_t)
                parts.append(low.where(g, 0.0).cast(lo_t.dtype) if lo_t.dtype.is_float else None)
            if isinstance(hi, Tensor):
                high = x > hi_t
                if lo is not None:
                    high = high | (hi_t < lo_t)
                parts.append(high.where(g, 0.0).cast(hi_t.dtype) if hi_t.dtype.is_float else None)
            assert inside is not None
            return (inside.where(g, 0.0).cast(x.dtype) if x.dtype.is_float else None, *parts)

        return _derivative("clip", out, srcs, rule)

    def clamp(self, min=None, max=None):  # noqa: A002 - PyTorch's names
        """PyTorch's name for :meth:`clip`: ``x.clamp(-1, 1)``, ``x.clamp(max=6)``."""
        return self.clip(min, max)

    @_traced
    def where(self, a, b):
        """``self ? a : b`` elementwise (self is the condition)."""
        if _complex_value(a) or _complex_value(b):
            from mlfuse import complex_tensors as _complex

            return _complex.where(self.cast(dtypes.bool_), a, b)
        cond = self.cast(dtypes.bool_)
        if not isinstance(a, Tensor) and not isinstance(b, Tensor):
            a = Tensor.full((), a, device=self.device)
        x, y = (a, b) if isinstance(a, Tensor) else (b, a)
        xa, yb = x._operands(y)
        a_, b_ = (xa, yb) if isinstance(a, Tensor) else (yb, xa)
        shape = broadcast_shape(cond.shape, a_.shape)
        c, a_, b_ = cond._broadcast_to(shape), a_._broadcast_to(shape), b_._broadcast_to(shape)
        return Tensor(graph.make("where", (c.node, a_.node, b_.node), None, shape, a_.dtype))

    @_traced
    def fma(self, b, c):
        """``self * b + c`` with one rounding."""
        x, y = self._float()._operands(b)
        x, z = x._operands(c)
        y = y._broadcast_to(x.shape).cast(x.dtype)
        return Tensor(graph.make("mulacc", (x.node, y.node, z.node), None, x.shape, x.dtype))

    @_traced
    def cast(self, dtype) -> Tensor:
        """Convert to ``dtype`` (floats to ints truncate toward zero): ``x.cast(mlfuse.int32)``;
        a complex dtype gives a complex tensor with a zero imaginary part."""
        dt = dtypes.as_dtype(dtype)
        if dt == self.dtype:
            return self
        if dt.is_complex:
            from mlfuse import complex_tensors as _complex

            return _complex.as_complex(self.cast(dt.to_real))
        return Tensor(graph.make("cast", (self.node,), None, self.shape, dt))

    @_traced
    def bitcast(self, dtype) -> Tensor:
        """Reinterpret the bits as another dtype of the same size: ``x.bitcast(mlfuse.int32)``."""
        dt = dtypes.as_dtype(dtype)
        if dt.itemsize != self.dtype.itemsize or dt.is_bool or self.dtype.is_bool:
            raise DTypeError(f"cannot bitcast {self.dtype.name} to {dt.name}: sizes differ")
        return Tensor(graph.make("bitcast", (self.node,), None, self.shape, dt))

    def float(self) -> Tensor:
        """Cast to float32: ``x.float()``."""
        return self.cast(dtypes.float32)

    def int(self) -> Tensor:
        """Cast to int32 (floats truncate toward zero): ``x.int()``."""
        return self.cast(dtypes.int32)

    def bool(self) -> Tensor:
        """Cast to bool (non-zero is True): ``x.bool()``."""
        return self.cast(dtypes.bool_)

    def half(self) -> Tensor:
        """Cast to float16 (computed in float32, rounded per op): ``x.half()``."""
        return self.cast(dtypes.float16)

    def bfloat16(self) -> Tensor:
        """Cast to bfloat16 (rounded to nearest even): ``x.bfloat16()``."""
        return self.cast(dtypes.bfloat16)

    def double(self) -> Tensor:
        """Cast to float64: ``x.double()``."""
        return self.cast(dtypes.float64)

    def long(self) -> Tensor:
        """Cast to int64 (floats truncate toward zero): ``x.long()``."""
        return self.cast(dtypes.int64)

    def short(self) -> Tensor:
        """Cast to int16 (integers wrap): ``x.short()``."""
        return self.cast(dtypes.int16)

    def char(self) -> Tensor:
        """Cast to int8 (integers wrap): ``x.char()``."""
        return self.cast(dtypes.int8)

    def byte(self) -> Tensor:
        """Cast to uint8 (integers wrap, ``-1`` is 255): ``x.byte()``."""
        return self.cast(dtypes.uint8)

    def type(self, dtype=None, non_blocking: bool = False):
        """The dtype's name without an argument, else a cast: ``x.type()`` is
        ``'float32'``, ``x.type(mlfuse.float16)`` is ``x.half()``; PyTorch's
        tensor type names cast too (``x.type('torch.DoubleTensor')``, and
        ``'torch.cuda.FloatTensor'`` moves to the GPU)."""
        if dtype is None:
            return self.dtype.name
        if isinstance(dtype, str) and dtype.endswith("Tensor"):
            from mlfuse.namespace import _TENSOR_TYPE_DTYPES

            found = _TENSOR_TYPE_DTYPES.get(dtype.rsplit(".", 1)[-1])
            if found is None:
                raise TypeError(f"type: unknown tensor type {dtype!r}")
            out = self.cast(found)
            return out.to("cuda") if ".cuda." in dtype else out
        return self.cast(dtype)

    def element_size(self) -> int:
        """Bytes per element: ``Tensor([1.0]).half().element_size()`` is 2."""
        return self.dtype.itemsize

    # -- reductions -------------------------------------------------------------
    def _reduce(self, kind: str, axis, keepdim: bool) -> Tensor:
        axes = _norm_axes(axis, self.ndim)
        x = self
        if x.dtype.is_bool and kind == "max":  # any(): stays bool, as in numpy
            # > 0, not a cast: over an empty axis the max is the identity, INT_MIN
            return x.cast(dtypes.int32)._reduce(kind, axis, keepdim) > 0
        if kind in ("add", "mul") and not x.dtype.is_float:
            # integer sums and products accumulate in int64, as in PyTorch and numpy
            x = x.cast(dtypes.int64)
        kept = tuple(1 if d in axes else s for d, s in enumerate(x.shape))
        out = Tensor(graph.make("reduce", (x.node,), (kind, axes), kept, x.dtype)) if axes else x
        if keepdim:
            return out
        return out.reshape(tuple(s for d, s in enumerate(x.shape) if d not in axes))

    @_traced
    def sum(self, axis=None, keepdim=False, dtype=None):
        """Sum over ``axis`` (None: all; integers and bools accumulate in int64): ``x.sum()``,
        ``x.sum(1, keepdim=True)``; ``dtype`` converts the input first (PyTorch's
        ``x.sum(dtype=torch.float64)``).
        """
        x = self if dtype is None else self.cast(dtype)
        return x._reduce("add", axis, keepdim)

    @_traced
    def prod(self, axis=None, keepdim=False, dtype=None):
        """Product over ``axis`` (integers accumulate in int64): ``x.prod(1)``;
        ``dtype`` converts the input first."""
        x = self if dtype is None else self.cast(dtype)
        if x.dtype.is_half:  # accumulated in float32, rounded once (PyTorch's)
            return x.float()._reduce("mul", axis, keepdim).cast(x.dtype)
        return x._reduce("mul", axis, keepdim)

    @_traced
    def max(self, axis=None, keepdim=False):
        """Largest value over ``axis`` (None: all): ``x.max()``, ``x.max(1, keepdim=True)``.

        NaN propagates, as in numpy and PyTorch.
        """
        if isinstance(axis, Tensor):  # PyTorch's x.max(other): elementwise
            return self.maximum(axis)
        self._nonempty(axis, "max")
        return self._reduce("max", axis, keepdim)

    @_traced
    def min(self, axis=None, keepdim=False):
        """Smallest value over ``axis`` (None: all): ``x.min()``, ``x.min(1)``."""
        if isinstance(axis, Tensor):  # PyTorch's x.min(other): elementwise
            return self.minimum(axis)
        self._nonempty(axis, "min")
        if self.dtype.is_bool:
            return self.logical_not().max(axis, keepdim).logical_not()
        if not self.dtype.is_float:
            # ~x reverses the order of the integers without overflow (-x does not: -INT_MIN)
            return ~((~self)._reduce("max", axis, keepdim))
        return -((-self)._reduce("max", axis, keepdim))

    def _nonempty(self, axis, what: str) -> None:
        axes = _norm_axes(axis, self.ndim)
        if any(self.shape[a] == 0 for a in axes):
            raise DimError(f"{what} of an empty axis has no identity")

    @_traced
    def mean(self, axis=None, keepdim=False):
        """Mean over ``axis`` (integers are averaged as floats): ``x.mean(0)``."""
        axes = _norm_axes(axis, self.ndim)
        n = math.prod(self.shape[a] for a in axes)
        if self.dtype.is_half:  # PyTorch's: a float32 sum times float32(1/n), rounded once
            m = self.float().sum(axis, keepdim) * (1.0 / n if n else float("nan"))
            return m.cast(self.dtype)
        return self._float().sum(axis, keepdim) * (1.0 / n if n else float("nan"))

    @_traced
    def var(self, axis=None, keepdim=False, correction=1):
        """Variance over ``axis`` (``correction=1``: Bessel's): ``x.var(1)``."""
        if self.dtype.is_half:  # computed in float32, rounded once (as PyTorch)
            return self.float().var(axis, keepdim, correction).cast(self.dtype)
        axes = _norm_axes(axis, self.ndim)
        n = math.prod(self.shape[a] for a in axes)
        x = self._float()
        d = x - x.mean(axis, keepdim=True)
        # PyTorch divides by max(n - correction, 0): no degrees of freedom left gives
        # inf, or NaN where every deviation is 0
        return (d * d).sum(axis, keepdim) * (1.0 / (n - correction) if n > correction else math.inf)

    @_traced
    def std(self, axis=None, keepdim=False, correction=1):
        """Standard deviation over ``axis`` (``correction=1``: Bessel's): ``x.std(0)``."""
        if self.dtype.is_half:  # computed in float32, rounded once (as PyTorch)
            return self.float().std(axis, keepdim, correction).cast(self.dtype)
        x = self._float()
        axes = _norm_axes(axis, x.ndim)

        def rule(c, g):  # PyTorch's: (x - mean) / ((n - correction) std), 0 where std is 0
            n = math.prod(x.shape[a] for a in axes)
            d = c.x - c.x.mean(axes, keepdim=True)
            out, g = _kept(c.out, axes, keepdim), _kept(g, axes, keepdim)
            scale = (out == 0).where(0.0, g / (out * (n - correction)))
            return (d * scale,)

        return _derivative("std", x.var(axis, keepdim, correction).sqrt(), (x,), rule)

    @_traced
    @amp.float32_precision
    @_half_in_float32
    def softmax(self, axis=-1):
        """``exp(x) / sum(exp(x))`` along ``axis``, computed stably: ``x.softmax(-1)``."""
        if self.dtype.is_half:  # computed in float32, rounded once (as PyTorch)
            return self.float().softmax(axis).cast(self.dtype)
        x = self._float()
        if x.numel() == 0:  # an empty axis, or none: nothing to normalize
            return x.exp()
        e = (x - x.max(axis, keepdim=True)).exp()
        # PyTorch's gradient, y (g - sum(g y)): one reduction, and exact where the
        # inputs tie for the max (the subtracted max is a constant to it)
        return _derivative(
            "softmax",
            e / e.sum(axis, keepdim=True),
            (x,),
            lambda c, g: (c.out * (g - (g * c.out).sum(axis, keepdim=True)),),
        )

    @_traced
    @amp.float32_precision
    @_half_in_float32
    def log_softmax(self, axis=-1):
        """``log(softmax(x))``, computed stably: ``x.log_softmax(-1)``."""
        if self.dtype.is_half:  # computed in float32, rounded once (as PyTorch)
            return self.float().log_softmax(axis).cast(self.dtype)
        x = self._float()
        if x.numel() == 0:  # an empty axis, or none: nothing to normalize
            return x + 0.0
        m = x - x.max(axis, keepdim=True)
        return _derivative(
            "log_softmax",
            m - m.exp().sum(axis, keepdim=True).log(),
            (x,),
            lambda c, g: (g - c.out.exp() * g.sum(axis, keepdim=True),),
        )

    @_traced
    def logsumexp(self, axis=None, keepdim=False):
        """``log(sum(exp(x)))`` over ``axis``, computed stably (the max subtracted;
        an infinite max is not: +inf where one is +inf, -inf where all are -inf, as
        PyTorch; over an empty axis -inf, the log of an empty sum): ``x.logsumexp(-1)``."""
        x = self._float()
        if any(x.shape[a] == 0 for a in _norm_axes(axis, x.ndim)):
            return x.exp().sum(axis, keepdim).log()
        m = x.max(axis, keepdim=True)
        m = m.isinf().where(0.0, m)  # inf - inf would be NaN
        out = (x - m).exp().sum(axis, keepdim=True).log() + m
        return (
            out
            if keepdim
            else out.reshape(
                tuple(s for d, s in enumerate(x.shape) if d not in _norm_axes(axis, x.ndim))
            )
        )

    @_traced
    def layernorm(self, axis=-1, eps: float = 1e-5):
        """Normalize to zero mean and unit variance along ``axis``: ``x.layernorm(-1)``."""
        x = self._float()
        mu = x.mean(axis, keepdim=True)
        d = x - mu
        var = (d * d).mean(axis, keepdim=True)
        return d * (var + eps).rsqrt()

    # -- tinygrad's nn methods (the functions of mlfuse.nn.functional) ------------
    training: bool = False
    """Whether :meth:`dropout` drops (tinygrad's ``Tensor.training``); set it for a
    block with ``with Tensor.train(): ...``."""

    @staticmethod
    @contextlib.contextmanager
    def train(mode: bool = True):
        """``with Tensor.train(): ...`` sets :attr:`Tensor.training` for the block."""
        old = Tensor.training
        Tensor.training = bool(mode)
        try:
            yield
        finally:
            Tensor.training = old

    def conv2d(self, weight, bias=None, groups=1, stride=1, dilation=1, padding=0) -> Tensor:
        """Convolution over the dims after (N, C) with tinygrad's arguments: ``padding``
        an int, one per spatial dim, or two per dim, last dim first (left, right,
        top, bottom): ``x.conv2d(w, padding=1)``. Weight (out, in / groups, *kernel)."""
        from mlfuse.nn import functional as F

        nd = weight.ndim - 2
        return F._conv_nd(
            self, weight, bias, stride, _tinygrad_pads(padding, nd, "conv2d"), dilation,
            groups, nd, "conv2d",
        )  # fmt: skip

    def conv_transpose2d(
        self, weight, bias=None, groups=1, stride=1, dilation=1, padding=0, output_padding=0
    ) -> Tensor:
        """Transposed convolution with tinygrad's argument order, weight
        (in, out / groups, *kernel): ``x.conv_transpose2d(w, stride=2)``."""
        from mlfuse.nn import functional as F

        nd = weight.ndim - 2
        return F._conv_transpose_nd(
            self, weight, bias, stride, padding, output_padding, groups, dilation, nd,
            "conv_transpose2d",
        )  # fmt: skip

    def max_pool2d(
        self,
        kernel_size=(2, 2),
        stride=None,
        dilation=1,
        padding=0,
        ceil_mode=False,
        return_indices=False,
    ):
        """Max over windows of the last two dims (the last one, two or three,
        as many as ``kernel_size`` names, tinygrad's): ``x.max_pool2d()`` halves
        them. ``padding``: an int, one per dim, or tinygrad's two per dim from
        the last (left, right, top, bottom), which may differ. With
        ``return_indices``, also where each maximum is (PyTorch's flat index)."""
        from mlfuse.nn import functional as F

        nd = _pool_dims(kernel_size, self)
        fn = (F.max_pool1d, F.max_pool2d, F.max_pool3d)[nd - 1]
        pads = _tinygrad_pads(padding, nd, "max_pool2d")
        if any(b != e for b, e in pads):  # uneven: pad with the lowest value first
            if return_indices:
                raise NotImplementedError(
                    "max_pool2d: return_indices with uneven padding is not supported"
                )
            low = -math.inf if self.dtype.is_float else int(np.iinfo(self.dtype.np).min)
            x = self.pad(((0, 0),) * (self.ndim - nd) + pads, value=low)
            return fn(x, kernel_size, stride, 0, dilation, ceil_mode)
        return fn(
            self,
            kernel_size,
            stride,
            tuple(b for b, _ in pads),
            dilation,
            ceil_mode,
            return_indices,
        )

    def max_unpool2d(
        self, indices, kernel_size=(2, 2), stride=None, dilation=1, padding=0, output_size=None
    ):
        """The inverse of ``max_pool2d(..., return_indices=True)`` over the last
        one, two or three dims: ``y.max_unpool2d(idx)``."""
        from mlfuse.nn import functional as F

        nd = _pool_dims(kernel_size, self)
        if dilation not in (1, (1,) * nd):
            raise ArgumentError(f"max_unpool2d: dilation {dilation} is not supported (only 1)")
        fn = (F.max_unpool1d, F.max_unpool2d, F.max_unpool3d)[nd - 1]
        return fn(self, indices, kernel_size, stride, padding, output_size)

    def avg_pool2d(
        self, kernel_size=(2, 2), stride=None, dilation=1, padding=0, ceil_mode=False,
        count_include_pad=True,
    ) -> Tensor:  # fmt: skip
        """Mean over windows of the last two dims (one, two or three, as many as
        ``kernel_size`` names, tinygrad's): ``x.avg_pool2d()``."""
        from mlfuse.nn import functional as F

        nd = _pool_dims(kernel_size, self)
        if dilation not in (1, (1,) * nd):
            raise ArgumentError(f"avg_pool2d: dilation {dilation} is not supported (only 1)")
        fn = (F.avg_pool1d, F.avg_pool2d, F.avg_pool3d)[nd - 1]
        return fn(self, kernel_size, stride, padding, ceil_mode, count_include_pad)

    def dropout(self, p: float = 0.5) -> Tensor:
        """Zero elements with probability ``p`` and scale the rest, while
        :attr:`Tensor.training` (tinygrad's rule): ``x.dropout(0.1)``."""
        from mlfuse.nn import functional as F

        return F.dropout(self, p, Tensor.training)

    def scaled_dot_product_attention(
        self,
        key,
        value,
        attn_mask=None,
        dropout_p: float = 0.0,
        is_causal: bool = False,
        scale: float | None = None,
        enable_gqa: bool = False,
    ) -> Tensor:
        """``softmax(self key^T / sqrt(E) + mask) value`` (see
        ``F.scaled_dot_product_attention``): ``q.scaled_dot_product_attention(k, v,
        is_causal=True)``."""
        from mlfuse.nn import functional as F

        p = dropout_p if Tensor.training else 0.0
        return F.scaled_dot_product_attention(
            self, key, value, attn_mask, p, is_causal, scale, enable_gqa
        )

    def interpolate(self, size, mode: str = "linear", align_corners: bool = False) -> Tensor:
        """Resize the last ``len(size)`` dims, tinygrad's method: ``mode`` "linear"
        interpolates along each of them (bilinear, trilinear), "nearest" and
        "nearest-exact" pick; PyTorch's index rules (``F.interpolate``):
        ``x.interpolate((64, 64))``."""
        from mlfuse.nn import functional as F

        size = _ints((size,) if isinstance(size, (int, np.integer)) else size, "size entries")
        nd = len(size)
        if not 1 <= nd <= 3 or nd > self.ndim:
            raise ArgumentError(
                f"interpolate: size {size} must name 1 to 3 of the last dims of {self.shape}"
            )
        lead = self.shape[: self.ndim - nd]
        x = self.reshape(1, math.prod(lead), *self.shape[self.ndim - nd :])
        if mode == "linear":
            mode = ("linear", "bilinear", "trilinear")[nd - 1]
        ac = align_corners if mode in ("linear", "bilinear", "trilinear") else None
        out = F.interpolate(x, size=size, mode=mode, align_corners=ac)
        return out.reshape(*lead, *size)

    def softmin(self, axis=-1) -> Tensor:
        """``softmax(-x)`` along ``axis``: ``x.softmin(-1)``."""
        return (-self._float()).softmax(axis)

    def normalize(self, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
        """``x / max(norm_p(x, dim), eps)`` (PyTorch's ``F.normalize``): ``x.normalize(dim=-1)``."""
        return self._float() / self.norm(p, dim=dim, keepdim=True).maximum(eps)

    def quick_gelu(self) -> Tensor:
        """``x * sigmoid(1.702 x)``, the sigmoid approximation of gelu: ``x.quick_gelu()``."""
        x = self._float()
        return x * (x * 1.702).sigmoid()

    def meshgrid(self, *others: Tensor, indexing: str = "ij") -> tuple[Tensor, ...]:
        """Coordinate grids of 1-d (or 0-d) tensors, PyTorch's ``meshgrid``: with
        ``indexing="ij"`` output k varies along dim k, with ``"xy"`` the first two
        dims swap: ``xs, ys = x.meshgrid(y, indexing="xy")``."""
        ts = [self, *others]
        if indexing not in ("ij", "xy"):
            raise ArgumentError(f"meshgrid: indexing must be 'ij' or 'xy', got {indexing!r}")
        for i, t in enumerate(ts):
            if t.ndim > 1:
                raise ArgumentError(f"meshgrid: tensor {i} has {t.ndim} dims; 0 or 1 expected")
        flat = [t.reshape(-1) for t in ts]
        shape = [t.shape[0] for t in flat]
        if indexing == "xy" and len(ts) > 1:
            shape[0], shape[1] = shape[1], shape[0]
        out = []
        for k, t in enumerate(flat):
            d = k if indexing == "ij" or len(ts) < 2 or k > 1 else 1 - k
            view = [1] * len(ts)
            view[d] = t.shape[0]
            out.append(t.reshape(view).expand(shape))
        return tuple(out)

    def sequential(self, layers) -> Tensor:
        """Apply each callable in ``layers`` in turn: ``x.sequential([l1, Tensor.relu, l2])``."""
        out = self
        for f in layers:
            out = f(out)
        return out

    def batchnorm(self, weight, bias, mean, invstd, axis=1) -> Tensor:
        """``(x - mean) * weight * invstd + bias`` with the statistics laid along
        ``axis`` (tinygrad's form: the inverse standard deviation is given)."""
        axes = _norm_axes(axis, self.ndim)
        shape = tuple(s if d in axes else 1 for d, s in enumerate(self.shape))
        x = self._float() - mean.reshape(shape)
        if weight is not None:
            x = x * weight.reshape(shape)
        x = x * invstd.reshape(shape)
        return x + bias.reshape(shape) if bias is not None else x

    def binary_crossentropy(self, y, reduction: str = "mean") -> Tensor:
        """Binary cross entropy of probabilities ``self`` against ``y``."""
        from mlfuse.nn import functional as F

        return F.binary_cross_entropy(self, y, reduction=reduction)

    def binary_crossentropy_logits(self, y, reduction: str = "mean", pos_weight=None) -> Tensor:
        """Binary cross entropy of logits ``self`` against ``y``."""
        from mlfuse.nn import functional as F

        return F.binary_cross_entropy_with_logits(
            self, y, reduction=reduction, pos_weight=pos_weight
        )

    def sparse_categorical_crossentropy(
        self, y, ignore_index: int = -1, label_smoothing: float = 0.0, reduction: str = "mean"
    ) -> Tensor:
        """Cross entropy of logits with the classes along the last dim against
        integer labels ``y``, tinygrad's form: labels equal to ``ignore_index``
        count for nothing (the default -1 ignores none; a label outside the
        classes then adds 0 to the loss and counts in the mean)."""
        if reduction not in ("none", "mean", "sum"):
            raise ArgumentError(f"sparse_categorical_crossentropy: unknown reduction {reduction!r}")
        if not 0.0 <= label_smoothing <= 1.0:
            raise ArgumentError(f"label_smoothing must be in [0, 1], got {label_smoothing}")
        if tuple(y.shape) != self.shape[:-1]:
            raise ArgumentError(
                f"sparse_categorical_crossentropy: labels {y.shape} do not fit logits "
                f"{self.shape} (classes along the last dim)"
            )
        logp = self.log_softmax(-1)
        classes = Tensor.arange(self.shape[-1], device=self.device)
        keep = (y != ignore_index) if ignore_index != -1 else (y == y)
        hit = (y.unsqueeze(-1).cast(dtypes.int64) == classes) & keep.unsqueeze(-1)
        keepf = keep.cast(logp.dtype)
        picked = hit.where(logp, 0).sum(-1)
        loss = -((1 - label_smoothing) * picked + label_smoothing * logp.mean(-1) * keepf)
        if reduction == "mean":
            return loss.sum() / keepf.sum()
        return loss.sum() if reduction == "sum" else loss

    def cross_entropy(self, y, reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
        """Cross entropy of logits (classes along dim 1, or 0 for one sample)
        against labels or probabilities ``y``: ``logits.cross_entropy(labels)``."""
        from mlfuse.nn import functional as F

        if self.ndim == 1:
            out = F.cross_entropy(
                self.unsqueeze(0), y.unsqueeze(0), reduction=reduction,
                label_smoothing=label_smoothing,
            )  # fmt: skip
            return out.squeeze(0) if reduction == "none" else out
        return F.cross_entropy(self, y, reduction=reduction, label_smoothing=label_smoothing)

    def nll_loss(self, y, weight=None, ignore_index=None, reduction: str = "mean") -> Tensor:
        """Negative log-likelihood of labels ``y`` under log-probabilities ``self``."""
        from mlfuse.nn import functional as F

        ignore = -100 if ignore_index is None else ignore_index
        return F.nll_loss(self, y, weight, ignore, reduction)

    # -- matmul -----------------------------------------------------------------
    @_traced
    def matmul(self, other: Tensor) -> Tensor:
        """Matrix product with numpy's rules for 1-d and batched operands:
        ``a.matmul(b)``, ``a @ b``."""
        if not isinstance(other, Tensor):
            other = Tensor(other, device=self.device)
        if other.dtype.kind == "c":
            return other.__rmatmul__(self)
        if amp.active():  # an autocast region: products in its lower precision
            self, other = amp.lower(self, other)
        if self.ndim == 0 or other.ndim == 0:
            raise ArgumentError("matmul needs tensors of at least 1 dim")
        if self.dtype.is_bool and other.dtype.is_bool:
            return self.int().matmul(other.int()) > 0
        a = self.reshape((1,) + self.shape) if self.ndim == 1 else self
        b = other.reshape(other.shape + (1,)) if other.ndim == 1 else other
        if a.shape[-1] != b.shape[-2 if b.ndim > 1 else -1]:
            raise ArgumentError(f"matmul: inner dims differ: {self.shape} @ {other.shape}")
        n, k = a.shape[-2], a.shape[-1]
        m = b.shape[-1]
        batch = broadcast_shape(a.shape[:-2], b.shape[:-2])
        if b.ndim == 2 and b.dtype.is_float:
            b = b._packed_for_matmul(math.prod(batch) * n)
        a = a._broadcast_to(batch + (n, k)).reshape(batch + (n, 1, k))
        bt = b._broadcast_to(batch + (k, m)).transpose(-1, -2).reshape(batch + (1, m, k))
        out = (a * bt).sum(-1)
        want = dtypes.promote(a.dtype, b.dtype)
        if out.dtype != want:  # integer products: int64 sums, the operands' dtype out
            out = out.cast(want)
        if self.ndim == 1:
            out = out.reshape(out.shape[:-2] + out.shape[-1:])
        if other.ndim == 1:
            out = out.reshape(out.shape[:-1])
        return out

    def _packed_for_matmul(self, rows: int | None = None) -> Tensor:
        """This ``(k, n)`` right operand of a matrix product (of ``rows`` rows),
        copied into contiguous panels of the width the device asks for
        (:meth:`Target.contraction_panel`) and viewed back as ``(k, n)``: the
        product then reads each panel's rows one after the other. Itself when the
        device wants no packing."""
        from mlfuse.targets import get_target

        k, n = self.shape
        panel = get_target(self.device).contraction_panel(k, n, self.dtype.itemsize, rows)
        if panel is None:
            return self
        packed = self.reshape(k, n // panel, panel).permute(1, 0, 2).contiguous()
        return packed.permute(1, 0, 2).reshape(k, n)

    def __matmul__(self, other):
        return self.matmul(other)

    def __rmatmul__(self, other):
        return Tensor(other, device=self.device).matmul(self)

    def dot(self, other):
        """Matrix/vector product, as :meth:`matmul`: ``a.dot(b)``."""
        return self.matmul(other)

    def newton_schulz(self, steps: int, params: tuple[float, ...], eps: float = 1.0e-7) -> Tensor:
        """The Newton-Schulz iteration of the odd polynomial ``params`` (tinygrad's):
        the last two dims (batched over the others) are scaled by their Frobenius
        norm (``+ eps``), then ``steps`` times ``G <- sum_i params[i] * (G G^T)^i G``;
        a tall matrix is iterated transposed. Muon's orthogonalization:
        ``g.newton_schulz(5, (3.4445, -4.775, 2.0315))``."""
        if self.ndim < 2:
            raise ValueError(f"newton_schulz needs two or more dims, got shape {self.shape}")
        steps = operator.index(steps)
        if steps < 0:
            raise ValueError(f"newton_schulz: steps must be >= 0, got {steps}")
        if not params:
            raise ValueError("newton_schulz: params must name at least one coefficient")
        if self.shape[-2] > self.shape[-1]:
            return self.mT.newton_schulz(steps, params, eps).mT
        g = self / (self.square().sum(axis=(-2, -1), keepdim=True).sqrt() + eps)
        return _newton_schulz_steps(g, steps, params)

    @_traced
    def linear(self, weight: Tensor, bias: Tensor | None = None):
        """``self @ weight + bias`` (weight is (in, out), tinygrad's layout): ``x.linear(w, b)``."""
        out = self @ weight
        return out + bias if bias is not None else out

    # -- movement ---------------------------------------------------------------
    def _new(self) -> Tensor:
        """This result as a tensor of its own: not a view (assigning it writes only it)."""
        self._base = None
        return self

    def _movement(self, op: str, arg, shape: Shape) -> Tensor:
        out = Tensor(graph.make(op, (self.node,), arg, shape, self.dtype))
        out._base = (self, op, arg)  # a view: assigning it writes through to self
        _add_view(self, out)
        return out

    @_traced
    def reshape(self, *shape, **kw) -> Tensor:
        """The same elements in another shape (one dim may be -1; tinygrad's None
        keeps the dim at its place): ``x.reshape(2, -1)``, ``x.reshape(None, 6)``,
        ``x.reshape(shape=(2, -1))``."""
        shape = _keyword_shape(shape, kw, "shape", "reshape")
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        if any(s is None for s in shape):
            shape = tuple(
                self.shape[i] if s is None and i < self.ndim else s for i, s in enumerate(shape)
            )
        shape = list(_ints(shape))
        if any(s < -1 for s in shape):
            raise ArgumentError(
                f"cannot reshape tensor of shape {self.shape} to {tuple(shape)}: negative dimension"
            )
        if shape.count(-1) > 1:
            raise ArgumentError("reshape: only one dim can be -1")
        if -1 in shape:
            rest = math.prod(s for s in shape if s != -1)
            if rest == 0 or self.numel() % rest:
                raise ArgumentError(
                    f"cannot reshape tensor of shape {self.shape} to {tuple(shape)}"
                )
            shape[shape.index(-1)] = self.numel() // rest
        new = tuple(shape)
        if any(s < 0 for s in new) or math.prod(new) != self.numel():
            raise ArgumentError(
                f"cannot reshape tensor of shape {self.shape} ({self.numel()} elements) to {new}"
            )
        return self if new == self.shape else self._movement("reshape", new, new)

    def view(self, *shape) -> Tensor:
        """As :meth:`reshape`: ``x.view(-1)``."""
        return self.reshape(*shape)

    @_traced
    def permute(self, *order, **kw) -> Tensor:
        """Reorder the dims (a view): ``x.permute(2, 0, 1)``, ``x.permute(dims=(2, 0, 1))``."""
        order = _keyword_shape(order, kw, "dims", "permute")
        order = _ints(order, "permute order entries")
        if (
            sorted(_norm_axis(o, self.ndim) for o in order) != list(range(self.ndim))
            or len(order) != self.ndim
        ):
            raise ArgumentError(f"permute order {order} is not a permutation of {self.ndim} dims")
        order = tuple(_norm_axis(o, self.ndim) for o in order)
        if order == tuple(range(self.ndim)):
            return self
        return self._movement("permute", order, tuple(self.shape[o] for o in order))

    def transpose(self, dim0: int = -2, dim1: int = -1) -> Tensor:
        """Swap two dims (a view): ``x.transpose(0, 1)``."""
        if self.ndim < 2:
            return self
        order = list(range(self.ndim))
        a, b = _norm_axis(dim0, self.ndim), _norm_axis(dim1, self.ndim)
        order[a], order[b] = order[b], order[a]
        return self.permute(order)

    @property
    def T(self) -> Tensor:
        """The tensor with its dims reversed (a view): ``x.T`` of a (2, 3) tensor is (3, 2)."""
        return self.permute(tuple(range(self.ndim - 1, -1, -1)))

    @_traced
    def expand(self, *shape) -> Tensor:
        """Repeat size-1 dims to ``shape`` without copying (a view; -1 keeps a dim): ``Tensor([[1],
        [2]]).expand(2, 3)``.
        """
        shape = _shape_arg(shape, allow_minus_one=True)
        if len(shape) < self.ndim:
            raise ArgumentError(f"expand to {shape}: fewer dims than the tensor's {self.shape}")
        full = (1,) * (len(shape) - self.ndim) + self.shape
        new = tuple(f if s == -1 else s for s, f in zip(shape, full))
        for f, s in zip(full, new):
            if f != s and f != 1:
                raise ArgumentError(
                    f"cannot expand {self.shape} to {shape}: only size-1 dims expand"
                )
        t = self.reshape(full) if full != self.shape else self
        return t if new == full else t._movement("expand", new, new)

    def broadcast_to(self, *shape) -> Tensor:
        """Broadcast to ``shape`` as numpy does (a view): ``Tensor([1, 2]).broadcast_to(3, 2)``."""
        return self._broadcast_to(_shape_arg(shape))

    @_traced
    def pad(self, padding, value=0, mode: str = "constant") -> Tensor:
        """Pad each dim: one (before, after) pair per dim (None: none), or
        PyTorch's flat form starting at the last dim (``x.pad((1, 1, 2, 2))`` pads
        the last dim by 1 and the one before by 2). ``mode``: ``"constant"``
        (``value``), ``"reflect"``, ``"replicate"`` or ``"circular"``."""
        if (
            isinstance(padding, (tuple, list))
            and padding
            and all(isinstance(p, (int, np.integer)) and not isinstance(p, bool) for p in padding)
        ):
            if len(padding) % 2 or len(padding) // 2 > self.ndim:
                raise ArgumentError(
                    f"pad: the flat form needs an even number of amounts, at most 2 per dim "
                    f"({self.ndim} dims), got {tuple(padding)}"
                )
            k = len(padding) // 2
            flat = [(int(padding[2 * i]), int(padding[2 * i + 1])) for i in range(k)]
            padding = [None] * (self.ndim - k) + flat[::-1]
        pairs = _pairs(padding, self.ndim, "pad", "(before, after)")
        if mode != "constant":
            return self._pad_mode(pairs, mode)
        if any(b < 0 or e < 0 for b, e in pairs):  # negative amounts crop, as in PyTorch
            if any(s + min(b, 0) + min(e, 0) < 0 for (b, e), s in zip(pairs, self.shape)):
                raise ArgumentError(
                    f"pad: amounts {pairs} crop more than the dims of {self.shape} hold"
                )
            cropped = self.shrink(
                tuple((-min(b, 0), s + min(e, 0)) for (b, e), s in zip(pairs, self.shape))
            )
            return cropped.pad(tuple((max(b, 0), max(e, 0)) for b, e in pairs), value, mode)
        if all(p == (0, 0) for p in pairs):
            return self
        v = (
            bool(value)
            if self.dtype.is_bool
            else (int(value) if self.dtype.is_int else float(value))
        )
        shape = tuple(s + b + e for s, (b, e) in zip(self.shape, pairs))
        return self._movement("pad", (pairs, v), shape)._new()  # a new tensor, as in PyTorch

    def _pad_mode(self, pairs, mode: str) -> Tensor:
        if mode not in ("reflect", "replicate", "circular"):
            raise UnsupportedModeError(
                f"pad: mode must be 'constant', 'reflect', 'replicate' or 'circular', got {mode!r}"
            )
        out = self
        if any(b < 0 or e < 0 for b, e in pairs):
            # PyTorch: reflect and replicate read output i at input i - before (a
            # negative amount crops what the positive ones made); circular wraps
            # around what is left after the crop
            if any(s + b + e < 0 for (b, e), s in zip(pairs, self.shape)):
                raise ArgumentError(
                    f"pad: amounts {pairs} crop more than the dims of {self.shape} hold"
                )
            grow = tuple((max(b, 0), max(e, 0)) for b, e in pairs)
            if mode == "circular":
                if any(n + min(b, 0) + min(e, 0) < 0 for (b, e), n in zip(pairs, self.shape)):
                    raise ArgumentError(
                        f"pad: circular amounts {pairs} crop more than the dims of "
                        f"{self.shape} hold"
                    )
                crop = tuple((-min(b, 0), n + min(e, 0)) for (b, e), n in zip(pairs, self.shape))
                return self.shrink(crop)._pad_mode(grow, mode)
            grown = self._pad_mode(grow, mode)
            return grown.shrink(
                tuple((-min(b, 0), n + min(e, 0)) for (b, e), n in zip(pairs, grown.shape))
            )
        for d, (b, e) in enumerate(pairs):
            n = out.shape[d]
            if not b and not e:
                continue
            limit = n - 1 if mode == "reflect" else n
            if (b > limit or e > limit) and mode != "replicate":
                raise ArgumentError(
                    f"pad: {mode} padding ({b}, {e}) must be below the dim's size {n} (dim {d})"
                )
            if mode == "replicate":
                left = out.narrow(d, 0, 1).expand(
                    tuple(b if i == d else s for i, s in enumerate(out.shape))
                )
                right = out.narrow(d, n - 1, 1).expand(
                    tuple(e if i == d else s for i, s in enumerate(out.shape))
                )
            elif mode == "circular":
                left, right = out.narrow(d, n - b, b), out.narrow(d, 0, e)
            else:
                left = out.narrow(d, 1, b)._flip_view(d)
                right = out.narrow(d, n - 1 - e, e)._flip_view(d)
            out = cat([left, out, right], d)
        return out

    @_traced
    def shrink(self, bounds) -> Tensor:
        """``bounds``: one [begin, end) pair per dim (None: keep the dim)."""
        given = _pairs(bounds, self.ndim, "shrink", "(begin, end)", keep=self.shape)
        pairs = tuple(given)
        for (b, e), s in zip(pairs, self.shape):
            if not 0 <= b <= e <= s:
                raise ArgumentError(f"shrink range ({b}, {e}) out of bounds for a dim of size {s}")
        if all(p == (0, s) for p, s in zip(pairs, self.shape)):
            return self
        return self._movement("shrink", pairs, tuple(e - b for b, e in pairs))

    @_traced
    def flip(self, axis=None, *, dims=None) -> Tensor:
        """Reverse the order of elements along ``axis`` (an int or a tuple; PyTorch's
        ``dims=`` too): ``x.flip(0)``, ``x.flip(dims=(0, 1))``."""
        if axis is not None and dims is not None:
            raise TypeError("flip: give the dims to reverse once, as axis or dims=")
        out = self._flip_view(axis if dims is None else dims)  # None: every dim (numpy)
        return out if out is self else out._new()  # a new tensor, as in PyTorch

    def _flip_view(self, axes) -> Tensor:
        """A flip that is a view (``x[::-1]``): assigning it writes ``self``."""
        axes = tuple(a for a in _norm_axes(axes, self.ndim) if self.shape[a] > 1)
        return self._movement("flip", axes, self.shape) if axes else self

    @_traced
    def _stride_view(self, *steps) -> Tensor:
        """Every ``steps[d]``-th element along each dim (positive steps; a view):
        ``x[::2]`` is ``x._stride_view(2, ...)``."""
        steps = _ints(steps, "stride steps")
        if len(steps) != self.ndim:
            raise ArgumentError(f"stride needs {self.ndim} steps, got {len(steps)}")
        if any(k <= 0 for k in steps):
            raise ArgumentError(f"stride steps must be positive, got {steps}")
        if all(k == 1 for k in steps):
            return self
        shape = tuple(-(-s // k) for s, k in zip(self.shape, steps))
        return self._movement("stride", steps, shape)

    def squeeze(self, dim=None) -> Tensor:
        """Drop size-1 dims (all, or those of ``dim``, an int or a tuple; a listed
        dim that is not 1 stays, as in PyTorch): ``x.squeeze()``, ``x.squeeze((0, 2))``."""
        if dim is None:
            return self.reshape(tuple(s for s in self.shape if s != 1))
        if isinstance(dim, (tuple, list)):
            drop = {d for d in _norm_axes(tuple(dim), self.ndim) if self.shape[d] == 1}
        else:
            d = _norm_axis(dim, self.ndim, "dim")
            drop = {d} if self.ndim and self.shape[d] == 1 else set()
        if not drop:
            return self
        return self.reshape(tuple(s for i, s in enumerate(self.shape) if i not in drop))

    def unsqueeze(self, dim: int) -> Tensor:
        """Insert a size-1 dim at ``dim``: ``x.unsqueeze(0)``."""
        d = _norm_axis(dim, self.ndim + 1, "dim")
        return self.reshape(self.shape[:d] + (1,) + self.shape[d:])

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
        """Merge dims ``start_dim..end_dim`` into one: ``x.flatten()``, ``x.flatten(1)``."""
        if self.ndim == 0:
            return self.reshape(1)
        s, e = _norm_axis(start_dim, self.ndim, "dim"), _norm_axis(end_dim, self.ndim, "dim")
        return self.reshape(
            self.shape[:s] + (math.prod(self.shape[s : e + 1]),) + self.shape[e + 1 :]
        )

    @_traced
    def __getitem__(self, index) -> Tensor:
        """PyTorch's indexing: ints, slices (any step), None, ``...``, and advanced
        indices (integer tensors, lists, tuples and arrays, broadcast together;
        bool masks): ``x[1:, ::2]``, ``x[idx]``, ``x[:, [0, 2]]``, ``x[x > 0]``.
        The advanced indices' dims go where the first one stands when they are
        adjacent once ints have selected their dims (PyTorch's rule; numpy also
        counts the ints), else first.

        Negative indices wrap once. A realized index out of range raises
        IndexError here; a lazy (computed) one is clamped to the dim instead."""
        index = _index_items(index)
        _check_bool_scalars(index)
        if any(_is_advanced(i) for i in index):
            return self._advanced_index(index)
        return self._basic_index(index)

    def __setitem__(self, index, value) -> None:
        """Write ``value`` (broadcast, cast to this dtype) into the indexed
        elements, in place as PyTorch does: ``x[0] = 1``, ``x[1:3, ::2] = y``,
        ``x[idx] = 0`` (repeated indices: the last write wins)."""
        v = self._written_value(value)
        index = _index_items(index)
        _check_bool_scalars(index)
        if not any(_is_advanced(i) for i in index):
            target = self._basic_index(index)
            target.assign(_without_leading_ones(v, target.ndim))
            return
        pos = self._positions()[index]
        v = _without_leading_ones(v, pos.ndim)
        self.assign(self._scatter_positions(pos, v, accumulate=False))

    def _written_value(self, value) -> Tensor:
        """``value`` as a tensor of this dtype, converted as PyTorch converts a
        written value: a Python or numpy number exactly into a float tensor (not
        through float32), an integer checked against an integer dtype's range, a
        float truncated into one; lists and arrays through numpy's dtypes."""
        if isinstance(value, Tensor):
            return value.cast(self.dtype)
        if isinstance(value, (bool, int, float, np.number)):
            if self.dtype.is_float or isinstance(value, (bool, int, np.integer, np.bool_)):
                return Tensor.full((), value, self.dtype, self.device)
            return Tensor.full((), value, dtypes.float64, self.device).cast(self.dtype)
        if isinstance(value, (list, tuple)) and not _holds_tensors(value):
            value = np.asarray(value)
        return Tensor(value, device=self.device).cast(self.dtype)

    def index_put(self, indices, values, accumulate: bool = False) -> Tensor:
        """A copy with ``values`` written at the advanced ``indices`` (a tuple of
        index tensors), added when ``accumulate``: ``x.index_put((idx,), v)``."""
        pos = self._positions()[tuple(indices)]
        v = values if isinstance(values, Tensor) else Tensor(values, device=self.device)
        return self._scatter_positions(pos, v.cast(self.dtype), accumulate)

    def index_put_(self, indices, values, accumulate: bool = False) -> Tensor:
        """In place :meth:`index_put`: ``x.index_put_((idx,), v, accumulate=True)``."""
        return self.assign(self.index_put(indices, values, accumulate))

    @_traced
    def gather(self, dim: int, index) -> Tensor:
        """PyTorch's gather: ``out[i][j] = self[index[i][j]][j]`` for ``dim=0``
        (``index`` has this tensor's rank and at most its size off ``dim``):
        ``x.gather(1, idx)``. Out-of-range indices are handled as in ``x[idx]``."""
        idx = _index_tensor(index, self.device)
        d = _norm_axis(dim, self.ndim, "dim")
        if idx.numel() == 0:  # PyTorch: an empty index gathers nothing, whatever its rank
            empty = Tensor.zeros(*idx.shape, dtype=self.dtype, device=self.device)
            return empty + _zero_gradient(self, self.dtype) if self.requires_grad else empty
        if self.ndim == 0 and idx.ndim == 1:  # PyTorch: the one element, read at each index
            idx = _checked(idx, 1, 0, self.shape)
            return self.reshape(1)._gather(0, idx)
        if idx.ndim != self.ndim:
            raise ArgumentError(
                f"gather: index {idx.shape} must have the rank of the input {self.shape}"
            )
        if any(i > s for k, (i, s) in enumerate(zip(idx.shape, self.shape)) if k != d):
            raise ArgumentError(
                f"gather: index {idx.shape} is larger than the input {self.shape} off dim {d}"
            )
        if self.ndim == 0:  # a 0-d gather reads the one element (index 0 or -1)
            idx = _checked(idx, 1, 0, self.shape)
            return self.reshape(1)._gather(0, idx.reshape(1)).reshape(())
        return self._gather(d, _checked(idx, self.shape[d], d, self.shape))

    def _gather(self, d: int, idx: Tensor) -> Tensor:
        """The gather primitive: ``idx`` is int64, wrapped and checked (a lazy
        one is clamped to the dim by the kernel), of this rank and fitting off ``d``."""
        return Tensor(graph.make("gather", (self.node, idx.node), d, idx.shape, self.dtype))

    def take_along_dim(self, indices, dim: int | None = None) -> Tensor:
        """numpy's take_along_axis (PyTorch's take_along_dim): ``x.take_along_dim(i, 1)``.
        The input and the indices broadcast off ``dim``; ``dim=None`` takes from the
        flattened input."""
        idx = _index_tensor(indices, self.device)
        if dim is None:
            return self.reshape(-1).gather(0, idx.reshape(-1))
        d = _norm_axis(dim, self.ndim, "dim")
        if idx.ndim != self.ndim:
            raise ArgumentError(
                f"take_along_dim: indices {idx.shape} must have the rank of the input {self.shape}"
            )
        off = broadcast_shape(
            tuple(1 if k == d else n for k, n in enumerate(self.shape)),
            tuple(1 if k == d else n for k, n in enumerate(idx.shape)),
        )
        x = self.expand(tuple(self.shape[d] if k == d else n for k, n in enumerate(off)))
        idx = idx.expand(tuple(idx.shape[d] if k == d else n for k, n in enumerate(off)))
        return x.gather(d, idx)

    def index_select(self, dim: int, index) -> Tensor:
        """The entries ``index`` (1-d) along ``dim``: ``x.index_select(0, idx)``."""
        idx = _index_tensor(index, self.device)
        if idx.ndim > 1:
            raise ArgumentError(f"index_select: index must be 0-d or 1-d, got {idx.shape}")
        if self.ndim == 0:  # a 0-d input has one entry, along dim 0 or -1
            _norm_axis(dim, 1, "dim")
            return self.reshape(1).index_select(0, idx.reshape(-1)).reshape(())
        idx = idx.reshape(-1)
        d = _norm_axis(dim, self.ndim, "dim")
        return self[(slice(None),) * d + (idx,)]

    @_traced
    def _index_positions(self, idx: Tensor, d: int) -> Tensor:
        """The flat position in ``self`` that each element of the (checked) index
        ``idx`` writes along dim ``d`` (its own coordinates along the others), in
        ``idx``'s shape."""
        strides = [math.prod(self.shape[k + 1 :]) for k in range(self.ndim)]
        pos = None
        for k, (size, st) in enumerate(zip(idx.shape, strides)):
            coord = (
                idx
                if k == d
                else Tensor.arange(size, device=self.device).reshape(
                    tuple(size if j == k else 1 for j in range(self.ndim))
                )
            )
            term = coord * st
            pos = term if pos is None else pos + term
        assert pos is not None
        return pos._broadcast_to(idx.shape)

    def scatter(self, dim: int, index, src, reduce: str | None = None) -> Tensor:
        """PyTorch's scatter (a copy): ``out[index[i][j]][j] = src[i][j]`` for
        ``dim=0``; ``src`` may be a scalar; ``reduce="add"`` adds instead,
        ``"multiply"`` multiplies: ``x.scatter(1, idx, 1.0)``."""
        if self.ndim == 0:  # a 0-d input has one entry, along dim 0 or -1
            _norm_axis(dim, 1, "dim")
            idx = _index_tensor(index, self.device)
            v = src.reshape(-1) if isinstance(src, Tensor) and src.ndim == 0 else src
            return self.reshape(1).scatter(0, idx.reshape(-1), v, reduce).reshape(())
        if reduce == "multiply":
            if not isinstance(src, Tensor):
                idx = _index_tensor(index, self.device)
                src = Tensor.full(idx.shape, src, self.dtype, self.device)
            return self.scatter_reduce(dim, index, src, "prod")
        idx = _index_tensor(index, self.device)
        d = _norm_axis(dim, self.ndim, "dim")
        if idx.ndim != self.ndim:
            raise ArgumentError(
                f"scatter: index {idx.shape} must have the rank of the input {self.shape}"
            )
        idx = _checked(idx, self.shape[d], d, self.shape)
        pos = self._index_positions(idx, d)
        if isinstance(src, Tensor):
            _same_dtype("scatter", self, src)
            v = src.shrink(tuple((0, i) for i in idx.shape))
        else:
            v = Tensor.full(idx.shape, src, self.dtype, self.device)
        if reduce not in (None, "add"):
            raise ArgumentError(
                f"scatter: reduce must be None, 'add' or 'multiply', got {reduce!r}"
            )
        return self._scatter_positions(pos, v, accumulate=reduce == "add")

    def scatter_add(self, dim: int, index, src) -> Tensor:
        """:meth:`scatter` that adds: ``x.scatter_add(0, idx, ones)``."""
        return self.scatter(dim, index, src, reduce="add")

    def masked_fill(self, mask, value) -> Tensor:
        """``value`` where ``mask`` is true: ``x.masked_fill(x < 0, 0.0)``."""
        m = mask if isinstance(mask, Tensor) else Tensor(mask, device=self.device)
        if isinstance(value, Tensor):
            if value.ndim != 0:
                raise ArgumentError(
                    f"masked_fill: value must be a number or a 0-d tensor, got shape {value.shape}"
                )
            return m.cast(dtypes.bool_).where(value.cast(self.dtype), self)
        return m.cast(dtypes.bool_).where(Tensor.full((), value, self.dtype, self.device), self)

    def _positions(self) -> Tensor:
        """Every element's row-major position, in this tensor's shape (int64)."""
        return Tensor.arange(self.numel(), device=self.device).reshape(self.shape)

    def _scatter_positions(self, pos: Tensor, v: Tensor, accumulate: bool) -> Tensor:
        """This tensor with ``v`` (broadcast to ``pos``) written at the row-major
        positions ``pos``: the last write wins, or the writes add when
        ``accumulate``. The positions are computed and sorted on the host; then
        each element gathers its writes from ``v`` in write order (one kernel
        over the elements, O(numel x most writes to one element) work)."""
        v = v._broadcast_to(pos.shape) if v.shape != pos.shape else v
        k, n = pos.numel(), self.numel()
        if k == 0:
            return self
        flat, v1 = self.reshape(-1), v.reshape(-1)
        p = pos.numpy().reshape(-1).astype(np.int64)
        it = np.int32 if max(n, k) < 2**31 else np.int64
        order = np.argsort(p, kind="stable").astype(it)  # writes by position, in order
        count = np.bincount(p, minlength=n)
        first = (np.cumsum(count) - count).astype(it)  # each element's first write in order
        dev = self.device
        if not accumulate:
            last = order[np.minimum(first + np.maximum(count, 1) - 1, k - 1)]
            written = v1._gather(0, Tensor(last, device=dev))
            return Tensor(count > 0, device=dev).where(written, flat).reshape(self.shape)
        m = int(count.max())
        ordered = v1._gather(0, Tensor(order, device=dev))  # the writes, by position
        j = Tensor.arange(m, device=dev).reshape(1, m)
        at = (Tensor(first, device=dev).reshape(n, 1) + j).minimum(k - 1)
        vals = ordered.reshape(1, k)._broadcast_to((n, k))._gather(1, at.cast(dtypes.int64))
        zero = Tensor.full((), 0, self.dtype, dev)
        added = (j < Tensor(count.astype(it), device=dev).reshape(n, 1)).where(vals, zero).sum(1)
        return (flat + added.cast(self.dtype)).reshape(self.shape)

    def _advanced_index(self, index: tuple) -> Tensor:
        _check_masks(index, self.shape)
        # bool masks become integer index arrays (their positions, found on the host)
        items: list = []
        for i in index:
            if _is_bool_index(i):
                m = i if isinstance(i, Tensor) else Tensor(np.asarray(i), device=self.device)
                items.extend(
                    Tensor(nz, device=self.device) for nz in np.nonzero(m.numpy().reshape(m.shape))
                )
                items[-m.ndim :] = [(t, m.ndim) for t in items[-m.ndim :]]
            else:
                items.append(i)
        n_real = sum(1 for i in items if i is not None and i is not Ellipsis)
        if sum(i is Ellipsis for i in items) > 1:
            raise IndexError("an index can only have a single ellipsis")
        if n_real > self.ndim:
            raise IndexError(f"too many indices for a tensor of {self.ndim} dims")
        if any(i is Ellipsis for i in items):
            k = next(n for n, i in enumerate(items) if i is Ellipsis)
            items = items[:k] + [slice(None)] * (self.ndim - n_real) + items[k + 1 :]
        else:
            items = items + [slice(None)] * (self.ndim - n_real)
        # basic part first; an int selects its dim there, as in PyTorch (numpy would
        # count it as one more advanced index: x[1, :, idx] puts idx's dims first)
        basic, adv, dim, out_dim = [], [], 0, 0
        for i in items:
            if i is None:
                basic.append(None)
                out_dim += 1
            elif isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_)):
                basic.append(i)
                dim += 1
            elif isinstance(i, slice):
                basic.append(i)
                dim += 1
                out_dim += 1
            else:
                t = i[0] if isinstance(i, tuple) else i
                t = _index_tensor(t, self.device)
                adv.append((out_dim, _checked(t, self.shape[dim], dim, self.shape)))
                basic.append(slice(None))
                dim += 1
                out_dim += 1
        x = self._basic_index(tuple(basic))
        dims = [d for d, _ in adv]
        try:
            shape = broadcast_shape(*(t.shape for _, t in adv))
        except ValueError:
            raise IndexError(
                "shape mismatch: indexing tensors could not be broadcast together with shapes "
                + " ".join(str(t.shape) for _, t in adv)
            ) from None
        adjacent = dims == list(range(dims[0], dims[0] + len(dims)))
        # one linear index over the advanced dims, moved to the front
        lin = None
        for d, t in adv:
            if len(adv) > 1 and not t.node.realized:  # each index stays inside its own dim
                t = t.clip(0, x.shape[d] - 1)
            stride = math.prod(x.shape[e] for e in dims if e > d)
            term = t._broadcast_to(shape) * stride if stride != 1 else t._broadcast_to(shape)
            lin = term if lin is None else lin + term
        assert lin is not None
        front = x.movedim(dims, list(range(len(dims))))
        rest = front.shape[len(dims) :]
        p = math.prod(front.shape[: len(dims)])
        table = front.reshape((p,) + rest)
        nb = len(shape)
        # out[b..., r...] = table[lin[b...], r...]: one gather along the table's
        # first dim, placed after the broadcast dims (a 0-d index gets one of size 1)
        bshape = shape if nb else (1,)
        k = len(bshape)
        src = table.reshape((1,) * (k - 1) + (p,) + rest)._broadcast_to(
            bshape[: k - 1] + (p,) + rest
        )
        ind = lin.reshape(bshape + (1,) * len(rest))._broadcast_to(bshape + rest)
        out = src._gather(k - 1, ind)
        if not nb:
            out = out.reshape(rest)
        if adjacent and dims[0] != 0:
            out = out.movedim(list(range(nb)), list(range(dims[0], dims[0] + nb)))
        return out._new()

    def _basic_index(self, index: tuple) -> Tensor:
        for i in index:
            if not (
                i is None or i is Ellipsis or isinstance(i, (slice, int, np.integer, np.bool_))
            ):
                raise IndexTypeError(
                    f"unsupported index {i!r}: use ints, slices, None, ..., or integer or bool "
                    "tensors, lists and arrays"
                )
        if sum(i is Ellipsis for i in index) > 1:
            raise IndexError("an index can only have a single ellipsis")
        # a bool scalar adds a dim as None does, of size 0 when False (numpy's rule)
        n_real = sum(1 for i in index if not _new_dim_index(i) and i is not Ellipsis)
        if n_real > self.ndim:
            raise IndexError(f"too many indices for a tensor of {self.ndim} dims")
        if Ellipsis in index:
            k = index.index(Ellipsis)
            index = index[:k] + (slice(None),) * (self.ndim - n_real) + index[k + 1 :]
        else:
            index = index + (slice(None),) * (self.ndim - n_real)
        t = self
        bounds, steps, flips, out_shape = [], [], [], []
        dim = 0
        empty = []  # the dims a False adds
        for i in index:
            if _new_dim_index(i):
                if i is not None and not i:
                    empty.append(len(out_shape))
                out_shape.append(1)
                continue
            size = self.shape[dim]
            if isinstance(i, slice):
                start, stop, step = i.indices(size)
                count = len(range(start, stop, step))
                if step < 0:
                    flips.append(dim)
                    start = size - 1 - start
                    step = -step
                if count == 0:
                    bounds.append((0, 0))
                else:
                    bounds.append((start, start + (count - 1) * step + 1))
                steps.append(step)
                out_shape.append(count)
            else:
                j = int(i)
                if not -size <= j < size:
                    raise IndexError(f"index {j} is out of bounds for a dim of size {size}")
                j %= size
                bounds.append((j, j + 1))
                steps.append(1)
            dim += 1
        if flips:
            t = t._flip_view(flips)
        t = t.shrink(bounds)
        t = t._stride_view(*steps)
        t = t.reshape(tuple(out_shape))
        if empty:
            t = t.shrink([(0, 0) if d in empty else None for d in range(t.ndim)])
        return t

    # -- meta -------------------------------------------------------------------
    @_traced
    def contiguous(self, memory_format=None) -> Tensor:
        """Materialize this value in its own buffer when realized: ``x.T.contiguous()``;
        with ``memory_format=mlfuse.channels_last`` the buffer holds the values
        channels-last (NHWC) and the result is the NCHW view of it, as PyTorch's."""
        fmt = layouts.check_memory_format(memory_format, "contiguous", self.ndim)
        if fmt is not None and fmt.rank is not None:
            last = (0, *range(2, self.ndim), 1)
            back = (0, self.ndim - 1, *range(1, self.ndim - 1))
            return self.permute(last).contiguous().permute(back)
        return Tensor(graph.make("contiguous", (self.node,), None, self.shape, self.dtype))

    @_traced
    def assign(self, value) -> Tensor:
        """Write ``value`` (broadcast, same dtype) into this tensor: in place in its
        buffer when realized. On a view (``x[0]``, ``x.T``, ``x[1:3, ::2]``...) it
        writes through to the tensor the view was taken from, as PyTorch's views
        do: ``x[0].assign(Tensor([5.0, 6.0]))`` changes row 0 of ``x``."""
        if isinstance(value, Tensor):
            v = value
        elif isinstance(value, (np.ndarray, list, tuple)):  # values in the target's dtype
            v = Tensor(np.asarray(value), self.dtype, self.device)
        else:
            v = Tensor.full((), value, self.dtype, self.device)
        if v.dtype != self.dtype:
            raise TypeError(f"assign: value has dtype {v.dtype.name}, the target {self.dtype.name}")
        v = v._broadcast_to(self.shape)
        if v.node is self.node:
            return self
        # walk up the views, turning the write into a write of the whole base
        path: list[Tensor] = []
        t, val = self, v
        while getattr(t, "_base", None) is not None:
            parent, op, arg = t._base
            val = _write_through(parent, op, arg, t.shape, val)
            path.append(t)
            t = parent
        t._assign_whole(val)
        _refresh_views(t)  # every live view of it (this one too) sees the new value
        return self

    def _assign_whole(self, v: Tensor) -> None:
        if v.node is self.node:
            return
        if not self.node.realized:
            self.node = v.node
            return
        self.node = graph.unique("assign", (self.node, v.node), None, self.shape, self.dtype)

    # -- more elementwise (PyTorch's names) -------------------------------------
    def neg(self) -> Tensor:
        """``-x``: ``x.neg()``."""
        return -self

    def square(self) -> Tensor:
        """``x * x``: ``x.square()`` (of bools: int64, as PyTorch's ``x ** 2``)."""
        x = self.cast(dtypes.int64) if self.dtype.is_bool else self
        return x * x

    def pow(self, exponent) -> Tensor:
        """``x ** exponent`` (integers stay integers): ``x.pow(2)``."""
        return self**exponent

    @_traced
    def angle(self) -> Tensor:
        """The argument of each value as a complex number: pi for negatives, 0
        otherwise, NaN kept (integers give floats): ``x.angle()``."""
        x = self if self.dtype.is_float else self.cast(dtypes.default_float)
        return x.isnan().where(x, (x < 0).where(math.pi, 0.0))

    def sign(self) -> Tensor:
        """-1, 0 or 1 by the sign of x (NaN stays NaN): ``x.sign()``."""
        if self.dtype.is_bool:
            return self
        if not self.dtype.is_float:
            return (self > 0).cast(self.dtype) - (self < 0).cast(self.dtype)
        return (self > 0).where(1.0, (self < 0).where(-1.0, (self == 0).where(0.0, self)))

    @_traced
    def tan(self) -> Tensor:
        """Tangent, elementwise (radians): ``x.tan()``."""
        x = self._float()
        return _derivative("tan", x.sin() / x.cos(), (x,), lambda c, g: (g * (1 + c.out * c.out),))

    @_traced
    def trunc(self) -> Tensor:
        """Round toward zero, elementwise: ``Tensor([-1.7]).trunc()``."""
        if not self.dtype.is_float:
            return self
        return (self < 0).where(self.ceil(), self.floor())

    @_traced
    def round(self, decimals: int = 0) -> Tensor:
        """Round to ``decimals`` places, halves to even (as PyTorch and numpy):
        ``Tensor([0.5, 1.5, 2.5]).round()`` is ``[0, 2, 2]``."""
        if not self.dtype.is_float:
            return self
        x = self * (10.0**decimals) if decimals else self
        f = x.floor()
        d = x - f
        even = (f - (f * 0.5).floor() * 2) == 0
        r = (d > 0.5).where(f + 1, (d < 0.5).where(f, even.where(f, f + 1)))
        r = (r == 0).where(x * 0, r)  # a zero keeps the sign of x
        return r / (10.0**decimals) if decimals else r

    @_traced
    def expm1(self) -> Tensor:
        """``exp(x) - 1`` without cancellation near 0: ``x.expm1()``."""
        x = self._float()
        n = 17 if x.dtype == dtypes.float64 else 10
        poly = Tensor.full((), 1 / math.factorial(n), x.dtype, x.device)
        for k in range(n - 1, 0, -1):
            poly = poly * x + 1 / math.factorial(k)
        out = (x.abs() < 0.5).where(x * poly, x.exp() - 1)
        return _derivative("expm1", out, (x,), lambda c, g: (g * (c.out + 1),))

    @_traced
    def log1p(self) -> Tensor:
        """``log(1 + x)`` without cancellation near 0: ``x.log1p()``."""
        x = self._float()
        n = 13 if x.dtype == dtypes.float64 else 7
        u = x / (x + 2)
        u2 = u * u
        poly = Tensor.full((), 1 / (2 * n + 1), x.dtype, x.device)
        for k in range(n - 1, -1, -1):
            poly = poly * u2 + 1 / (2 * k + 1)
        out = (x.abs() < 0.5).where(2 * u * poly, (x + 1).log())
        return _derivative("log1p", out, (x,), lambda c, g: (g / (c.x + 1),))

    @_traced
    def erf(self) -> Tensor:
        """The error function, to float64 accuracy (float32 inputs are computed in
        float64 and rounded once): ``x.erf()``."""
        x = self._float()
        if x.dtype != dtypes.float64:
            out = x.cast(dtypes.float64).erf().cast(x.dtype)
        else:
            out = x._erf64()
        return _derivative(
            "erf", out, (x,), lambda c, g: (g * (-(c.x * c.x)).exp() * (2 / math.sqrt(math.pi)),)
        )

    def _erf64(self) -> Tensor:
        x = self
        a = x.abs()
        # |x| < 2: the Maclaurin series 2/sqrt(pi) sum (-1)^n x^(2n+1) / (n! (2n+1))
        x2 = x * x
        terms = 34
        poly = Tensor.full((), 0.0, x.dtype, x.device)
        for n in range(terms, -1, -1):
            poly = poly * x2 + (-1) ** n / (math.factorial(n) * (2 * n + 1))
        small = x * poly * (2 / math.sqrt(math.pi))
        big = 1 - a._erfc_tail()
        big = (x < 0).where(-big, big)
        return (a < 2).where(small, (a < 6).where(big, x.sign()))  # NaN stays NaN

    def _erfc_tail(self) -> Tensor:
        """erfc(a) for float64 ``a >= 2``: ``exp(-a^2)/sqrt(pi)`` over the continued
        fraction ``a + (1/2)/(a + 1/(a + (3/2)/(a + ...)))`` (60 terms: float64-exact
        from 2 up)."""
        a = self
        frac = a
        for k in range(60, 0, -1):
            frac = a + (k / 2) / frac
        return (-(a * a)).exp() / frac * (1 / math.sqrt(math.pi))

    @_traced
    def erfc(self) -> Tensor:
        """``1 - erf(x)`` without cancellation for large x: ``x.erfc()``."""
        x = self._float()
        if x.dtype != dtypes.float64:
            out = x.cast(dtypes.float64).erfc().cast(x.dtype)
        else:
            a = x.abs()
            tail = a.maximum(2)._erfc_tail()
            far = (x < 0).where(2 - tail, tail)
            out = (a < 2).where(1 - x._erf64(), (a < 27).where(far, 1 - x.sign()))  # NaN stays
        return _derivative(
            "erfc",
            out,
            (x,),
            lambda c, g: (g * (-(c.x * c.x)).exp() * (-2 / math.sqrt(math.pi)),),
        )

    @_traced
    def leaky_relu(self, negative_slope: float = 0.01) -> Tensor:
        """``x`` where positive, ``negative_slope * x`` elsewhere: ``x.leaky_relu(0.1)``."""
        x = self._float()
        return (x > 0).where(x, x * negative_slope)

    @_traced
    def elu(self, alpha: float = 1.0) -> Tensor:
        """``x`` where positive, ``alpha * (exp(x) - 1)`` elsewhere: ``x.elu()``."""
        x = self._float()
        return (x > 0).where(x, (x > 0).where(0.0, x).expm1() * alpha)  # no exp overflow

    @_traced
    def celu(self, alpha: float = 1.0) -> Tensor:
        """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``: ``x.celu()``."""
        x = self._float()
        return (x > 0).where(x, ((x > 0).where(0.0, x) * (1 / alpha)).expm1() * alpha)

    @_traced
    def selu(self) -> Tensor:
        """Scaled elu with the self-normalizing constants: ``x.selu()``."""
        return self.elu(1.6732632423543772) * 1.0507009873554805

    @_traced
    @_half_in_float32
    def softplus(self, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
        """``log(1 + exp(beta x)) / beta`` (``x`` above ``threshold / beta``):
        ``x.softplus()``."""
        x = self._float()
        bx = x * beta
        out = (bx > threshold).where(x, bx.minimum(threshold).exp().log1p() * (1 / beta))
        return _derivative(
            "softplus",
            out,
            (x,),
            lambda c, g: ((c.x * beta > threshold).where(g, g * (c.x * beta).sigmoid()),),
        )

    @_traced
    def logsigmoid(self) -> Tensor:
        """``log(sigmoid(x))``, stable for large |x|: ``x.logsigmoid()``."""
        x = self._float()
        return x.minimum(0) - (-(x.abs())).exp().log1p()

    @_traced
    @_half_in_float32
    def mish(self) -> Tensor:
        """``x * tanh(softplus(x))``: ``x.mish()``."""
        x = self._float()
        return x * x.softplus().tanh()

    @_traced
    def hardtanh(self, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
        """Clamp to ``[min_val, max_val]``: ``x.hardtanh()``. The gradient is 0 at
        the bounds, as PyTorch's."""
        x = self._float()
        return _derivative(
            "hardtanh",
            x.clip(min_val, max_val),
            (x,),
            lambda c, g: (((c.x > min_val) & (c.x < max_val)).where(g, 0.0),),
        )

    @_traced
    def relu6(self) -> Tensor:
        """``min(max(x, 0), 6)``: ``x.relu6()`` (its gradient is 0 at 0 and 6)."""
        return self.hardtanh(0.0, 6.0) if self.dtype.is_float else self.clip(0, 6)

    @_traced
    def hardsigmoid(self) -> Tensor:
        """``clamp(x / 6 + 1/2, 0, 1)``: ``x.hardsigmoid()`` (gradient 1/6 strictly
        inside (-3, 3), as PyTorch's)."""
        x = self._float()
        return _derivative(
            "hardsigmoid",
            (x * (1 / 6) + 0.5).clip(0, 1),
            (x,),
            lambda c, g: (((c.x > -3) & (c.x < 3)).where(g * (1 / 6), 0.0),),
        )

    @_traced
    def hardswish(self) -> Tensor:
        """``x * hardsigmoid(x)``: ``x.hardswish()``."""
        x = self._float()
        return x * x.hardsigmoid()

    @_traced
    def softsign(self) -> Tensor:
        """``x / (1 + |x|)``: ``x.softsign()``."""
        x = self._float()
        return x / (x.abs() + 1)

    def swish(self) -> Tensor:
        """:meth:`silu` by its other name: ``x.swish()``."""
        return self.silu()

    @_traced
    def isnan(self) -> Tensor:
        """True where x is NaN: ``x.isnan()``."""
        if not self.dtype.is_float:
            return Tensor.full(self.shape, False, dtypes.bool_, self.device)
        return self != self

    @_traced
    def isinf(self, detect_positive: bool = True, detect_negative: bool = True) -> Tensor:
        """True where x is +-inf: ``x.isinf()`` (tinygrad's ``detect_positive`` /
        ``detect_negative`` pick one sign)."""
        if not self.dtype.is_float or not (detect_positive or detect_negative):
            return Tensor.full(self.shape, False, dtypes.bool_, self.device)
        if not detect_negative:
            return self == math.inf
        if not detect_positive:
            return self == -math.inf
        return self.abs() == math.inf

    @_traced
    def isfinite(self) -> Tensor:
        """True where x is neither NaN nor +-inf: ``x.isfinite()``."""
        if not self.dtype.is_float:
            return Tensor.full(self.shape, True, dtypes.bool_, self.device)
        return (self - self) == 0

    @_traced
    def lerp(self, end, weight) -> Tensor:
        """``self + weight * (end - self)``, exact at both ends (PyTorch's formula):
        ``a.lerp(b, 0.25)``."""
        a, b = self._float()._operands(end)
        w = weight if isinstance(weight, Tensor) else Tensor.full((), weight, a.dtype, a.device)
        w = w.cast(a.dtype)
        d = b - a
        return (w.abs() < 0.5).where(a + w * d, b - d * (1 - w))

    def _logical(self, kind: str, other) -> Tensor:
        o = other if isinstance(other, Tensor) else Tensor(other, device=self.device)
        return self.cast(dtypes.bool_)._bitwise(kind, o.cast(dtypes.bool_))

    @_traced
    def logical_and(self, other) -> Tensor:
        """Elementwise and of the truth values: ``a.logical_and(b)``."""
        return self._logical("and", other)

    @_traced
    def logical_or(self, other) -> Tensor:
        """Elementwise or of the truth values: ``a.logical_or(b)``."""
        return self._logical("or", other)

    @_traced
    def logical_xor(self, other) -> Tensor:
        """Elementwise xor of the truth values: ``a.logical_xor(b)``."""
        return self._logical("xor", other)

    # hyperbolic and inverse trigonometric functions: built from exp/expm1/log/
    # log1p/sqrt so they fuse; float32 (and 16-bit) inputs are computed in float64
    # and rounded once, as erf is
    def _in_float64(self, fn, name: str | None = None, derivative=None) -> Tensor:
        """``fn`` of the float64 values, rounded back to this tensor's float
        dtype; differentiated by ``derivative(x, out)`` (d out / dx) when given."""
        x = self._float()
        if x.dtype != dtypes.float64:
            out = fn(x.cast(dtypes.float64)).cast(x.dtype)
        else:
            out = fn(x)
        if derivative is None:
            return out
        return _derivative(name, out, (x,), lambda c, g: (g * derivative(c.x, c.out),))

    @_traced
    def sinh(self) -> Tensor:
        """Hyperbolic sine, accurate near 0 and up to the overflow: ``x.sinh()``."""

        def f(x: Tensor) -> Tensor:
            a = x.abs()
            em = a.minimum(20).expm1()
            near = (em + em / (em + 1)) * 0.5  # (e^a - e^-a) / 2 without cancellation
            far = (a - 1).exp() * (math.e / 2)  # e^-a is below the last bit from 20 up
            r = (a < 20).where(near, far)
            return (x < 0).where(-r, (a == 0).where(x, r))  # keeps -0.0 and NaN

        return self._in_float64(f, "sinh", lambda x, out: x.cosh())

    @_traced
    def cosh(self) -> Tensor:
        """Hyperbolic cosine: ``x.cosh()``."""

        def f(x: Tensor) -> Tensor:
            a = x.abs()
            e = a.minimum(20).exp()
            # a - 1 is exact, a - log(2) would not be; e^a / 2 overflows early
            return (a < 20).where((e + 1 / e) * 0.5, (a - 1).exp() * (math.e / 2))

        return self._in_float64(f, "cosh", lambda x, out: x.sinh())

    @_traced
    def asinh(self) -> Tensor:
        """Inverse hyperbolic sine: ``x.asinh()``."""

        def f(x: Tensor) -> Tensor:
            a = x.abs()
            s = a.minimum(1e150)
            near = (s + s * s / ((s * s + 1).sqrt() + 1)).log1p()
            r = (a < 1e150).where(near, a.log() + math.log(2))
            return (x < 0).where(-r, (a == 0).where(x, r))

        return self._in_float64(f, "asinh", lambda x, out: 1 / x.hypot(1.0))

    @_traced
    def acosh(self) -> Tensor:
        """Inverse hyperbolic cosine (NaN below 1): ``x.acosh()``."""

        def f(x: Tensor) -> Tensor:
            t = x.minimum(1e150) - 1
            near = (t + (t * 2 + t * t).sqrt()).log1p()
            out = (x < 1e150).where(near, x.log() + math.log(2))
            return (x < 1).where(math.nan, out)  # t(t + 2) >= 0 again at x <= -1

        return self._in_float64(f, "acosh", lambda x, out: ((x - 1) * (x + 1)).rsqrt())

    @_traced
    def atanh(self) -> Tensor:
        """Inverse hyperbolic tangent (+-inf at +-1, NaN beyond): ``x.atanh()``."""

        def f(x: Tensor) -> Tensor:
            a = x.abs()
            r = (a * 2 / (1 - a)).log1p() * 0.5
            return (x < 0).where(-r, (a == 0).where(x, r))

        return self._in_float64(f, "atanh", lambda x, out: 1 / ((1 - x) * (1 + x)))

    @_traced
    def atan(self) -> Tensor:
        """Inverse tangent (radians, in [-pi/2, pi/2]): ``x.atan()``."""
        return self._in_float64(_atan64, "atan", lambda x, out: 1 / (1 + x * x))

    @_traced
    def asin(self) -> Tensor:
        """Inverse sine (radians; NaN outside [-1, 1]): ``x.asin()``."""
        return self._in_float64(
            lambda x: _atan64(x / ((1 - x) * (1 + x)).sqrt()),
            "asin",
            lambda x, out: ((1 - x) * (1 + x)).rsqrt(),
        )

    @_traced
    def acos(self) -> Tensor:
        """Inverse cosine (radians, in [0, pi]; NaN outside [-1, 1]): ``x.acos()``."""
        return self._in_float64(
            lambda x: _atan64(((1 - x) / (1 + x)).sqrt()) * 2,
            "acos",
            lambda x, out: -((1 - x) * (1 + x)).rsqrt(),
        )

    @_traced
    def atan2(self, other) -> Tensor:
        """The angle of the point (other, self), in [-pi, pi] (numpy's and PyTorch's
        quadrants and signed zeros): ``y.atan2(x)``."""
        y, x = self._operands(other)  # promoted first: int with float16 is float16
        y, x = y._float(), x._float()

        def f(y: Tensor, x: Tensor) -> Tensor:
            ay, ax = y.abs(), x.abs()
            both_inf = (ay == math.inf) & (ax == math.inf)
            # the angle in the first quadrant, from the smaller over the larger
            steep = ay > ax
            t = (both_inf.where(1.0, steep.where(ax, ay))) / (
                both_inf.where(1.0, steep.where(ay, ax))
            )
            t = ((ay == 0) & (ax == 0)).where(0.0, t)
            r = _atan64(t)
            r = steep.where(math.pi / 2 - r, r)
            neg_x = (x < 0) | ((x == 0) & (x.reciprocal() < 0))  # -0.0 counts as negative
            r = neg_x.where(math.pi - r, r)
            neg_y = (y < 0) | ((y == 0) & (y.reciprocal() < 0))
            return neg_y.where(-r, r)

        if x.dtype != dtypes.float64:
            out = f(y.cast(dtypes.float64), x.cast(dtypes.float64)).cast(x.dtype)
        else:
            out = f(y, x)

        def rule(c, g):  # d/dy = x / (x^2 + y^2), d/dx = -y / (x^2 + y^2)
            y, x = c.srcs
            r2 = x * x + y * y
            return (g * x / r2, -(g * y) / r2)

        return _derivative("atan2", out, (y, x), rule)

    # -- more reductions ----------------------------------------------------------
    def _arg_reduce(self, axis, keepdim: bool, largest: bool) -> Tensor:
        if axis is None:
            flat = self.reshape(-1)
            out = flat._arg_reduce(0, False, largest)
            return out.reshape((1,) * self.ndim) if keepdim else out
        d = _norm_axis(axis, self.ndim, "dim")
        what = "argmax" if largest else "argmin"
        if self.ndim == 0:
            return Tensor.full((), 0, dtypes.int64, self.device)
        n = self.shape[d]
        if n == 0:
            raise ArgumentError(f"{what} of an empty axis (dim {d} of {self.shape}) has no answer")
        x = self
        if x.dtype.is_bool:
            x = x.cast(dtypes.int32)
        if not largest:
            x = -x if x.dtype.is_float else ~x
        best = x.max(d, keepdim=True)
        hit = x == best
        if x.dtype.is_float:  # NaN is the largest, as in PyTorch
            hit = hit.logical_or(x.isnan())
        pos = Tensor.arange(n, device=self.device).reshape(
            tuple(n if i == d else 1 for i in range(self.ndim))
        )
        return hit.where(pos, n).min(d, keepdim)

    @_traced
    def argmax(self, axis=None, keepdim: bool = False) -> Tensor:
        """Index of the largest value along ``axis`` (None: of the flattened
        tensor); ties give the first, NaN counts as largest: ``x.argmax(-1)``."""
        return self._arg_reduce(axis, keepdim, True)

    @_traced
    def argmin(self, axis=None, keepdim: bool = False) -> Tensor:
        """Index of the smallest value along ``axis`` (None: flattened): ``x.argmin(0)``."""
        return self._arg_reduce(axis, keepdim, False)

    @_traced
    def any(self, axis=None, keepdim: bool = False) -> Tensor:
        """Whether any element is true (non-zero) along ``axis``: ``(x > 0).any()``
        (uint8 in, uint8 out, as PyTorch's)."""
        out = self.cast(dtypes.bool_)._reduce("max", axis, keepdim)
        return out.cast(dtypes.uint8) if self.dtype == dtypes.uint8 else out

    @_traced
    def all(self, axis=None, keepdim: bool = False) -> Tensor:
        """Whether every element is true (non-zero) along ``axis``: ``(x > 0).all(1)``
        (uint8 in, uint8 out, as PyTorch's)."""
        out = self.cast(dtypes.bool_).logical_not().any(axis, keepdim).logical_not()
        return out.cast(dtypes.uint8) if self.dtype == dtypes.uint8 else out

    def amax(self, axis=None, keepdim: bool = False) -> Tensor:
        """Largest value over ``axis`` (as :meth:`max`): ``x.amax(1)``."""
        return self.max(axis, keepdim)

    def amin(self, axis=None, keepdim: bool = False) -> Tensor:
        """Smallest value over ``axis`` (as :meth:`min`): ``x.amin(1)``."""
        return self.min(axis, keepdim)

    @_traced
    def count_nonzero(self, axis=None) -> Tensor:
        """How many elements are non-zero along ``axis`` (int64): ``x.count_nonzero()``."""
        return (self != 0).sum(axis)

    @_traced
    @_half_in_float32
    def norm(self, p="fro", dim=None, keepdim: bool = False) -> Tensor:
        """Vector norm over ``axis`` (None: all elements): ``p`` = 2 or ``"fro"``
        (default), 1, ``inf``, ``-inf``, 0 (count of non-zeros) or any other
        number: ``x.norm()``, ``x.norm(1, dim=-1)``."""
        x = self._float()
        if p == "nuc" or (p == "fro" and isinstance(dim, (tuple, list)) and len(dim) == 2):
            from mlfuse import linalg

            if dim is None and x.ndim != 2:
                raise ArgumentError(f"norm: p='nuc' needs a matrix or dim=(d0, d1), got {x.shape}")
            return linalg.matrix_norm(x, p, (-2, -1) if dim is None else dim, keepdim)
        if p == "fro":
            p = 2
        if not isinstance(p, (int, float)) or isinstance(p, bool):
            raise ArgumentError(f"norm: p must be a number, 'fro' or 'nuc', got {p!r}")
        a = x.abs()
        if p == math.inf:
            return a.max(dim, keepdim)
        if p == -math.inf:
            return a.min(dim, keepdim)
        if p == 0:  # a count: PyTorch's gradient is zero
            count = (a != 0).cast(x.dtype).sum(dim, keepdim)
            return _derivative("norm", count, (x,), lambda c, g: (c.x.zeros_like(),))
        if p == 1:
            return a.sum(dim, keepdim)
        axes = _norm_axes(dim, x.ndim)

        def rule(c, g):  # PyTorch's: sgn(x) |x|^(p-1) / norm^(p-1), 0 where the norm is 0
            out, g = _kept(c.out, axes, keepdim), _kept(g, axes, keepdim)
            if p == 2:
                return (c.x * (out == 0).where(0.0, g / out),)
            grad = c.x.sign() * c.x.abs() ** (p - 1) * (g / out ** (p - 1))
            return ((out == 0).where(0.0, grad),)

        out = (x * x).sum(dim, keepdim).sqrt() if p == 2 else (a**p).sum(dim, keepdim) ** (1.0 / p)
        return _derivative("norm", out, (x,), rule)

    # -- more shapes ----------------------------------------------------------------
    @_traced
    def cat(self, *others: Tensor, dim: int = 0) -> Tensor:
        """Join tensors along ``dim`` (tinygrad's spelling of ``mlfuse.cat``):
        ``a.cat(b, dim=1)``, ``Tensor.cat([a, b], dim=1)``."""
        if isinstance(self, (list, tuple)) and not others:
            return cat(self, dim)
        return cat([self, *others], dim)

    @_traced
    def stack(self, *others: Tensor, dim: int = 0) -> Tensor:
        """Stack tensors along a new ``dim``: ``a.stack(b)``, ``Tensor.stack([a, b])``
        (PyTorch's one sequence)."""
        if isinstance(self, (list, tuple)) and not others:
            return stack(self, dim)
        return stack([self, *others], dim)

    def split(self, split_size_or_sections=None, dim: int = 0, *, split_size=None):
        """Views of pieces along ``dim``: pieces of one size (the last may be
        smaller) or of the listed sizes: ``x.split(2)``, ``x.split([1, 3], dim=1)``
        (``split_size=`` is the Tensor method's PyTorch keyword)."""
        if split_size is not None:
            if split_size_or_sections is not None:
                raise TypeError("split: got both split_size_or_sections and split_size")
            split_size_or_sections = split_size
        if split_size_or_sections is None:
            raise TypeError("split: missing the piece size or sizes (split_size_or_sections)")
        d = _norm_axis(dim, self.ndim, "dim")
        n = self.shape[d]
        if isinstance(split_size_or_sections, (int, np.integer)):
            step = int(split_size_or_sections)
            if step <= 0 and not (step == 0 and n == 0):
                raise ArgumentError(f"split: split_size must be positive, got {step}")
            sizes = [min(step, n - i) for i in range(0, n, step)] if n else [0]
        else:
            sizes = list(_ints(tuple(split_size_or_sections), "split sizes"))
            if sum(sizes) != n or any(s < 0 for s in sizes):
                raise ArgumentError(
                    f"split: sizes {sizes} do not add up to dim {d} of {self.shape} ({n})"
                )
        out, start = [], 0
        for s in sizes:
            out.append(self.narrow(d, start, s))
            start += s
        return tuple(out)

    def chunk(self, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
        """``chunks`` nearly equal pieces along ``dim`` (fewer if the dim is
        short, as in PyTorch): ``x.chunk(3, dim=1)``."""
        if not isinstance(chunks, (int, np.integer)) or chunks <= 0:
            raise ArgumentError(f"chunk: chunks must be a positive int, got {chunks!r}")
        n = self.shape[_norm_axis(dim, self.ndim, "dim")]
        return self.split(max(-(-n // int(chunks)), 1), dim)

    def unsafe_split(self, split_size: int, dim: int = 0) -> tuple[Tensor, ...]:
        """:meth:`split` (PyTorch's variant without view tracking; pieces are values
        here either way): ``x.unsafe_split(2)``."""
        return self.split(split_size, dim)

    def unsafe_split_with_sizes(self, split_sizes, dim: int = 0) -> tuple[Tensor, ...]:
        """:meth:`split_with_sizes`: ``x.unsafe_split_with_sizes([1, 3])``."""
        return self.split_with_sizes(split_sizes, dim)

    def unsafe_chunk(self, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
        """:meth:`chunk`: ``x.unsafe_chunk(2)``."""
        return self.chunk(chunks, dim)

    def narrow_copy(self, dim: int, start: int, length: int) -> Tensor:
        """:meth:`narrow` as a tensor of its own (not a view): ``x.narrow_copy(1, 2, 3)``."""
        return self.narrow(dim, start, length).contiguous()

    def pin_memory(self) -> Tensor:
        """This tensor (PyTorch's page-locked copy for faster host-to-device
        transfers; mlfuse copies between host and devices from any memory):
        ``batch.pin_memory()``."""
        return self

    def is_pinned(self) -> bool:
        """False: mlfuse does not page-lock host memory (see :meth:`pin_memory`):
        ``x.is_pinned()``."""
        return False

    def narrow(self, dim: int, start: int, length: int) -> Tensor:
        """The view ``[start, start + length)`` along ``dim`` (``start`` an int or a
        0-d integer tensor): ``x.narrow(1, 2, 3)``."""
        if self.ndim == 0:
            raise DimError("narrow: a 0-d tensor has no dim to narrow")
        d = _norm_axis(dim, self.ndim, "dim")
        if isinstance(start, Tensor):
            if start.ndim != 0 or not (start.dtype.is_int or start.dtype.is_bool):
                raise ArgumentTypeError(
                    f"narrow: start must be an int or a 0-d integer tensor, got a "
                    f"{start.dtype.name} tensor of shape {start.shape}"
                )
            start = int(start.item())
        n = self.shape[d]
        if start < 0:
            start += n
        if not (0 <= start and length >= 0 and start + length <= n):
            raise DimError(
                f"narrow: [{start}, {start + length}) is out of range for dim {d} of size {n}"
            )
        return self.shrink(
            tuple((start, start + length) if i == d else None for i in range(self.ndim))
        )

    @_traced
    def repeat(self, *sizes) -> Tensor:
        """Tile the tensor ``sizes[d]`` times along each dim (PyTorch's repeat;
        extra leading sizes add dims): ``x.repeat(2, 1)``."""
        reps = _ints(sizes, "repeat sizes")
        if len(reps) < self.ndim:
            raise ArgumentError(
                f"repeat: {len(reps)} sizes for a tensor of {self.ndim} dims (need at least that)"
            )
        if any(r < 0 for r in reps):
            raise ArgumentError(f"repeat: sizes must be non-negative, got {reps}")
        x = self.reshape((1,) * (len(reps) - self.ndim) + self.shape)
        inter = tuple(v for s in x.shape for v in (1, s))
        wide = tuple(v for r, s in zip(reps, x.shape) for v in (r, s))
        out = x.reshape(inter).expand(wide).reshape(tuple(r * s for r, s in zip(reps, x.shape)))
        return out if out is self else out._new()

    @_traced
    def tile(self, reps) -> Tensor:
        """numpy's tile: repeat along each dim (fewer reps than dims apply to the
        last dims): ``x.tile((2, 1))``, ``x.tile(3)``."""
        reps = _ints(reps if isinstance(reps, (tuple, list)) else (reps,), "tile reps")
        reps = (1,) * (self.ndim - len(reps)) + reps
        return self.repeat(*reps)

    @_traced
    def repeat_interleave(self, repeats=None, dim=None, *, output_size=None) -> Tensor:
        """Repeat each element ``repeats`` times along ``dim`` (None: flattened):
        ``Tensor([1, 2]).repeat_interleave(2)`` is ``[1, 1, 2, 2]``. ``repeats`` may
        be a count per element (a tensor or list: the result's length is their sum,
        read on the host unless ``output_size`` gives it); without ``repeats``, this
        tensor holds the counts and the result repeats their indices (PyTorch's
        ``torch.repeat_interleave(counts)``)."""
        if repeats is None:
            counts = self
            return Tensor.arange(counts.numel(), device=self.device).repeat_interleave(
                counts, output_size=output_size
            )
        x = self.reshape(-1) if dim is None else self
        d = _norm_axis(0 if dim is None else dim, x.ndim, "dim")
        if isinstance(repeats, (Tensor, list, tuple, np.ndarray)):
            reps = np.asarray(repeats.numpy() if isinstance(repeats, Tensor) else repeats)
            if reps.ndim > 1 or reps.dtype.kind not in "iu":
                raise ArgumentError("repeat_interleave: repeats must be a 0-d or 1-d int tensor")
            if reps.ndim == 1 and reps.size != 1:
                if reps.size != x.shape[d]:
                    raise ArgumentError(
                        f"repeat_interleave: repeats must have the same size as input along dim "
                        f"({reps.size} repeats, {x.shape[d]} elements)"
                    )
                if (reps < 0).any():
                    raise ArgumentError("repeat_interleave: repeats can not be negative")
                index = np.repeat(np.arange(x.shape[d]), reps)
                if output_size is not None and output_size != index.size:
                    raise ArgumentError(
                        f"repeat_interleave: output_size {output_size} is not the sum of "
                        f"repeats ({index.size})"
                    )
                return x.index_select(d, Tensor(index, device=x.device))
            repeats = int(reps.reshape(-1)[0])
        if not isinstance(repeats, (int, np.integer)) or repeats < 0:
            raise ArgumentError(f"repeat_interleave: repeats must be an int >= 0, got {repeats!r}")
        s = x.shape
        out = (
            x.reshape(s[: d + 1] + (1,) + s[d + 1 :])
            .expand(s[: d + 1] + (int(repeats),) + s[d + 1 :])
            .reshape(s[:d] + (s[d] * int(repeats),) + s[d + 1 :])
        )
        return out._new() if out is not x else out

    def _tri(self, diagonal: int, lower: bool) -> Tensor:
        if self.ndim < 2:
            raise ArgumentError(
                f"{'tril' if lower else 'triu'} needs at least 2 dims, got {self.shape}"
            )
        n, m = self.shape[-2:]
        rows = Tensor.arange(n, device=self.device).reshape(n, 1)
        cols = Tensor.arange(m, device=self.device).reshape(1, m)
        keep = (cols - rows <= diagonal) if lower else (cols - rows >= diagonal)
        return keep.where(self, Tensor.full((), 0, self.dtype, self.device))

    @_traced
    def tril(self, diagonal: int = 0) -> Tensor:
        """The lower triangle (at and below ``diagonal``), zeros elsewhere: ``x.tril()``."""
        return self._tri(diagonal, True)

    @_traced
    def triu(self, diagonal: int = 0) -> Tensor:
        """The upper triangle (at and above ``diagonal``), zeros elsewhere: ``x.triu(1)``."""
        return self._tri(diagonal, False)

    @_traced
    def roll(self, shifts, dims=None) -> Tensor:
        """Rotate elements along ``dims`` by ``shifts`` (None: the flattened
        tensor): ``x.roll(1, 0)``, ``x.roll((1, -2), (0, 1))``."""
        if dims is None:
            return self.reshape(-1).roll(shifts, 0).reshape(self.shape)._new()
        sh = _ints(shifts if isinstance(shifts, (tuple, list)) else (shifts,), "roll shifts")
        ds = _ints(dims if isinstance(dims, (tuple, list)) else (dims,), "roll dims")
        if len(sh) != len(ds):
            raise ArgumentError(f"roll: {len(sh)} shifts for {len(ds)} dims")
        out = self
        for s, d in zip(sh, ds):
            d = _norm_axis(d, self.ndim, "dim")
            n = self.shape[d]
            k = s % n if n else 0
            if k:
                out = cat([out.narrow(d, n - k, k), out.narrow(d, 0, n - k)], d)
        return out if out is not self else self

    def rearrange(self, pattern: str, **sizes: int) -> Tensor:
        """einops' rearrange (tinygrad's method): name the dims, split and merge
        them with parentheses, reorder them; all views:
        ``x.rearrange("b c h w -> b (h w) c")``,
        ``x.rearrange("b (c h1 w1) h w -> b c (h h1) (w w1)", h1=2, w1=2)``.
        See :mod:`mlfuse.rearrange` for the pattern's rules."""
        from mlfuse.rearrange import rearrange

        return rearrange(self, pattern, sizes)

    def unflatten(self, dim: int, sizes) -> Tensor:
        """Split ``dim`` into ``sizes`` (one may be -1): ``x.unflatten(1, (2, 3))``."""
        d = _norm_axis(dim, self.ndim, "dim")
        sizes = list(_ints(tuple(sizes), "unflatten sizes"))
        if sizes.count(-1) == 1:
            rest = math.prod(s for s in sizes if s != -1)
            sizes[sizes.index(-1)] = self.shape[d] // rest if rest else 0
        if math.prod(sizes) != self.shape[d]:
            raise ArgumentError(
                f"unflatten: sizes {tuple(sizes)} do not multiply to {self.shape[d]}"
            )
        return self.reshape(self.shape[:d] + tuple(sizes) + self.shape[d + 1 :])

    @_traced
    def one_hot(self, num_classes: int = -1) -> Tensor:
        """int64 one-hot rows of an integer tensor (num_classes -1: max + 1, which
        realizes the tensor): ``Tensor([0, 2]).one_hot(3)``."""
        if self.dtype.is_float:
            raise DTypeError(f"one_hot needs an integer tensor, got {self.dtype.name}")
        if num_classes == -1:
            num_classes = int(self.max().item()) + 1 if self.numel() else 0
        if num_classes < 0:
            raise ArgumentError(f"one_hot: num_classes must be >= 0 or -1, got {num_classes}")
        classes = Tensor.arange(num_classes, device=self.device)
        return (self.unsqueeze(-1) == classes.cast(self.dtype)).cast(dtypes.int64)

    def movedim(self, source, destination) -> Tensor:
        """Move dims ``source`` to positions ``destination`` (a view): ``x.movedim(0, -1)``."""
        src = _ints(source if isinstance(source, (tuple, list)) else (source,), "movedim source")
        dst = _ints(
            destination if isinstance(destination, (tuple, list)) else (destination,),
            "movedim destination",
        )
        if len(src) != len(dst):
            raise ArgumentError(f"movedim: {len(src)} sources for {len(dst)} destinations")
        src = tuple(_norm_axis(s, self.ndim, "dim") for s in src)
        dst = tuple(_norm_axis(s, self.ndim, "dim") for s in dst)
        for what, dims, given in (("source", src, source), ("destination", dst, destination)):
            if len(set(dims)) != len(dims):
                raise ArgumentError(f"movedim: repeated dim in {what} {given}")
        rest = [d for d in range(self.ndim) if d not in src]
        order = [-1] * self.ndim
        for s, t in zip(src, dst):
            order[t] = s
        it = iter(rest)
        order = [o if o != -1 else next(it) for o in order]
        return self.permute(order)

    def moveaxis(self, source, destination) -> Tensor:
        """numpy's name for :meth:`movedim`: ``x.moveaxis(0, -1)``."""
        return self.movedim(source, destination)

    def swapaxes(self, axis0: int, axis1: int) -> Tensor:
        """Swap two dims (a view): ``x.swapaxes(0, 1)``."""
        return self.transpose(axis0, axis1)

    def swapdims(self, dim0: int, dim1: int) -> Tensor:
        """Swap two dims (a view): ``x.swapdims(0, 1)``."""
        return self.transpose(dim0, dim1)

    def t(self) -> Tensor:
        """Transpose a tensor of at most 2 dims: ``x.t()``."""
        if self.ndim > 2:
            raise ArgumentError(f"t() needs at most 2 dims, got {self.shape}; use transpose")
        return self.T

    @property
    def mT(self) -> Tensor:  # noqa: N802 - PyTorch's name
        """The last two dims swapped (batched transpose): ``x.mT``."""
        return self.transpose(-2, -1)

    def expand_as(self, other: Tensor) -> Tensor:
        """Expand to ``other``'s shape: ``b.expand_as(x)``."""
        return self.expand(other.shape)

    def view_as(self, other: Tensor) -> Tensor:
        """Reshape to ``other``'s shape: ``x.view_as(y)``."""
        return self.reshape(other.shape)

    def reshape_as(self, other: Tensor) -> Tensor:
        """Reshape to ``other``'s shape: ``x.reshape_as(y)``."""
        return self.reshape(other.shape)

    # -- Python conversions -----------------------------------------------------------
    def __float__(self) -> float:
        """``float(t)`` of a one-element tensor: ``float(x.sum())``."""
        return float(self.item())

    def __int__(self) -> int:
        """``int(t)`` of a one-element tensor (floats truncate): ``int(x.argmax())``."""
        return int(self.item())

    def __index__(self) -> int:
        """A one-element integer tensor as an index: ``range(Tensor(3))``."""
        if self.dtype.is_float:
            raise TypeError("only integer tensors of one element can be converted to an index")
        return int(self.item())

    # -- scans ----------------------------------------------------------------------
    def _scan(self, kind: str, axis) -> Tensor:
        """Inclusive scan along ``axis`` (kind add/mul/max/min): one ``scan``
        node, which a kernel computes in one serial pass along the axis (the
        elementwise work before and after it fuses into that kernel). A 0-d
        tensor is scanned as one element."""
        d = _norm_axis(axis, self.ndim, "dim")
        if self.ndim == 0:
            return self.reshape(1)._scan(kind, 0).reshape(())._new()
        return Tensor(graph.make("scan", (self.node,), (kind, d), self.shape, self.dtype))

    def _blocked_scan(self, kind: str, axis) -> Tensor:
        """Inclusive scan along ``axis`` for a combine that is no ``scan`` kind
        (``logaddexp``; also add/mul/max/min), built from the fusing primitives:
        blocks of ``_SCAN_BLOCK`` are scanned with a triangular mask (a reduce
        over a (b, b) window per element), block totals are scanned the same way
        one level up, and each block adds its offset. Work is O(n * b) per level
        over log_b(n) levels."""
        d = _norm_axis(axis, self.ndim, "dim")
        if self.ndim == 0:
            return self
        x = self.movedim(d, -1)
        n = x.shape[-1]
        if n <= 1:
            return self
        lead = x.shape[:-1]
        b = min(_SCAN_BLOCK, n)
        nb = -(-n // b)
        ident = {
            "add": 0,
            "mul": 1,
            "max": _lowest(x.dtype),
            "min": _highest(x.dtype),
            "logaddexp": -math.inf,
        }[kind]
        xp = x.pad(tuple([(0, 0)] * len(lead) + [(0, nb * b - n)]), ident) if nb * b != n else x
        blocks = xp.reshape(lead + (nb, b))
        tri = Tensor.ones(b, b, dtype=dtypes.bool_, device=self.device).tril()  # [j, k]: k <= j
        window = tri.where(blocks.unsqueeze(-2), Tensor.full((), ident, x.dtype, x.device))
        inner = _reduce_kind(window, kind, -1)  # (..., nb, b)
        if nb > 1:
            totals = inner[..., -1]  # (..., nb)
            before = totals._blocked_scan(kind, -1)  # made exclusive: shifted right by one
            before = before.pad(tuple([(0, 0)] * len(lead) + [(1, 0)]), ident)[..., :nb]
            inner = _combine(kind, inner, before.unsqueeze(-1))
        out = inner.reshape(lead + (nb * b,))[..., :n]
        return out.movedim(-1, d)._new()

    def _accumulate(self, kind: str, axis, dtype) -> Tensor:
        """A running sum or product (``kind`` add/mul) in PyTorch's types: cast to
        ``dtype`` when given, else integers and bools in int64; float32 runs in
        float64 and each output is rounded once (PyTorch's CPU accumulator), so
        a long scan does not drift."""
        x = self
        if dtype is not None:
            x = x.cast(dtypes.as_dtype(dtype))
        elif not x.dtype.is_float:
            x = x.cast(dtypes.int64)
        if x.dtype == dtypes.float32:
            return x.cast(dtypes.float64)._scan(kind, axis).cast(dtypes.float32)
        return x._scan(kind, axis)

    @_traced
    def cumsum(self, axis=0, dtype=None) -> Tensor:
        """Running sums along ``axis`` (PyTorch's ``dim=``; integers and bools
        accumulate in int64 unless ``dtype`` says otherwise): ``x.cumsum(1)``."""
        return self._accumulate("add", axis, dtype)

    @_traced
    def cumprod(self, axis=0, dtype=None) -> Tensor:
        """Running products along ``axis`` (integers and bools in int64 unless
        ``dtype`` says otherwise): ``x.cumprod(0)``."""
        return self._accumulate("mul", axis, dtype)

    @_traced
    def cummax(self, axis=0) -> SortResult:
        """Running maxima along ``axis`` and where each was found, as PyTorch's
        and tinygrad's ``(values, indices)`` (int64; ties and NaN take the latest
        position; NaN propagates): ``x.cummax(0).values``."""
        return self._running("max", axis)

    @_traced
    def cummin(self, axis=0) -> SortResult:
        """Running minima along ``axis`` and where each was found, ``(values,
        indices)`` as :meth:`cummax`: ``x.cummin(0).indices``."""
        return self._running("min", axis)

    def _running(self, kind: str, axis) -> SortResult:
        x = self.cast(dtypes.int32) if self.dtype.is_bool else self
        out = x._scan(kind, axis)
        d = _norm_axis(axis, self.ndim, "dim")
        if self.ndim == 0:
            idx = Tensor.full((), 0, dtypes.int64, self.device)
        else:
            shape = [1] * self.ndim
            shape[d] = self.shape[d]
            pos = Tensor.arange(self.shape[d], dtype=dtypes.int64, device=self.device)
            pos = pos.reshape(shape).expand(self.shape)
            hit = x == out
            if x.dtype.is_float:
                hit = hit | x.isnan()
            idx = hit.where(pos, -1)._scan("max", d)
        values = out.cast(dtypes.bool_) if self.dtype.is_bool else out
        return SortResult(values, idx)

    @_traced
    def logcumsumexp(self, axis=0) -> Tensor:
        """``log(cumsum(exp(x)))`` along ``axis``, scanned with a stable
        logaddexp (no overflow, no underflow): ``x.logcumsumexp(1)``."""
        return self._float()._blocked_scan("logaddexp", axis)

    # -- in-place operators (PyTorch's): the result is written into the tensor --
    def _inplace(self, result: Tensor, what: str) -> Tensor:
        if result.shape != self.shape:
            raise ArgumentError(
                f"{what}: the result's shape {result.shape} does not match the tensor's "
                f"{self.shape} (an in-place op cannot broadcast its target)"
            )
        if result.dtype != self.dtype:
            if result.dtype.is_float and not self.dtype.is_float:
                raise TypeError(
                    f"{what}: result type {result.dtype.name} can't be cast to the tensor's "
                    f"dtype {self.dtype.name}"
                )
            result = result.cast(self.dtype)
        return self.assign(result)

    def __iadd__(self, other):
        return self._inplace(self + other, "+=")

    def __isub__(self, other):
        return self._inplace(self - other, "-=")

    def __imul__(self, other):
        return self._inplace(self * other, "*=")

    def __itruediv__(self, other):
        return self._inplace(self / other, "/=")

    def __ifloordiv__(self, other):
        return self._inplace(self // other, "//=")

    def __imod__(self, other):
        return self._inplace(self % other, "%=")

    def __ipow__(self, other):
        return self._inplace(self**other, "**=")

    def __iand__(self, other):
        return self._inplace(self & other, "&=")

    def __ior__(self, other):
        return self._inplace(self | other, "|=")

    def __ixor__(self, other):
        return self._inplace(self ^ other, "^=")

    def __imatmul__(self, other):
        return self._inplace(self @ other, "@=")

    def add_(self, other, alpha=1) -> Tensor:
        """In place ``self += alpha * other``: ``x.add_(1)``."""
        return self._inplace(self + (other * alpha if alpha != 1 else other), "add_")

    def sub_(self, other, alpha=1) -> Tensor:
        """In place ``self -= alpha * other``: ``x.sub_(y)``."""
        return self._inplace(self - (other * alpha if alpha != 1 else other), "sub_")

    def mul_(self, other) -> Tensor:
        """In place ``self *= other``: ``x.mul_(2)``."""
        return self._inplace(self * other, "mul_")

    def div_(self, other) -> Tensor:
        """In place ``self /= other``: ``x.div_(2)``."""
        return self._inplace(self / other, "div_")

    def pow_(self, other) -> Tensor:
        """In place ``self **= other``: ``x.pow_(2)``."""
        return self._inplace(self**other, "pow_")

    def clamp_(self, min=None, max=None) -> Tensor:  # noqa: A002 - PyTorch's names
        """In place clamp: ``x.clamp_(0, 1)``."""
        return self._inplace(self.clip(min, max), "clamp_")

    def relu_(self) -> Tensor:
        """In place relu: ``x.relu_()``."""
        return self._inplace(self.relu(), "relu_")

    def fill_(self, value) -> Tensor:
        """In place fill with a scalar: ``x.fill_(0)``."""
        return self.assign(Tensor.full((), value, self.dtype, self.device))

    def zero_(self) -> Tensor:
        """In place fill with zeros: ``x.zero_()``."""
        return self.fill_(0)

    def copy_(self, src) -> Tensor:
        """In place copy of ``src`` (broadcast, cast to this dtype): ``x.copy_(y)``."""
        s = src if isinstance(src, Tensor) else Tensor(src, device=self.device)
        return self.assign(s.cast(self.dtype).to(self.device))

    # -- PyTorch's creation and conversion methods ------------------------------------
    @_traced
    def clone(self, *, memory_format=None) -> Tensor:
        """A copy of its own (not a view; writing it leaves this tensor alone; the
        gradient flows through): ``y = x.clone()``; ``memory_format`` as in
        :meth:`contiguous`."""
        return self.contiguous(memory_format)

    def new_full(self, size, fill_value, dtype=None, device=None, requires_grad=False) -> Tensor:
        """A tensor of ``size`` filled with ``fill_value``, of this dtype and device
        unless given: ``x.new_full((2, 3), 7)``."""
        size = (size,) if isinstance(size, (int, np.integer)) else tuple(size)
        return Tensor.full(
            size, fill_value, dtype or self.dtype, device or self.device, requires_grad
        )

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False) -> Tensor:
        """Zeros of ``size`` with this dtype and device unless given: ``x.new_zeros(2, 3)``."""
        return self.new_full(_shape_arg(size), 0, dtype, device, requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False) -> Tensor:
        """Ones of ``size`` with this dtype and device unless given: ``x.new_ones(2, 3)``."""
        return self.new_full(_shape_arg(size), 1, dtype, device, requires_grad)

    def new_empty(self, *size, dtype=None, device=None, requires_grad=False) -> Tensor:
        """As :meth:`new_zeros` (mlfuse fills "empty" tensors with zeros):
        ``x.new_empty(4)``."""
        return self.new_full(_shape_arg(size), 0, dtype, device, requires_grad)

    def new_tensor(self, data, dtype=None, device=None, requires_grad=False) -> Tensor:
        """``data`` as a new tensor of this dtype and device unless given (a tensor
        is copied and detached): ``x.new_tensor([1, 2, 3])``."""
        if isinstance(data, Tensor):
            data = data._detached()
            out = data.cast(dtype or self.dtype).to(device or self.device).clone()
            return out.requires_grad_() if requires_grad else out
        return Tensor(data, dtype or self.dtype, device or self.device, requires_grad)

    def type_as(self, other: Tensor) -> Tensor:
        """Cast to ``other``'s dtype: ``x.type_as(y)``."""
        if not isinstance(other, Tensor):
            raise TypeError(f"type_as: other must be a Tensor, got {type(other).__name__}")
        return self.cast(other.dtype)

    def nelement(self) -> int:
        """The number of elements (as :meth:`numel`): ``x.nelement()``."""
        return self.numel()

    # -- more splitting and joining -----------------------------------------------------
    def unbind(self, dim: int = 0) -> tuple[Tensor, ...]:
        """The slices along ``dim``, that dim removed (views): ``a, b = x.unbind(1)``."""
        d = _norm_axis(dim, self.ndim, "dim")
        if self.ndim == 0:
            raise DimError("unbind: a 0-d tensor has no dim to unbind")
        return tuple(self[(slice(None),) * d + (i,)] for i in range(self.shape[d]))

    def tensor_split(self, indices_or_sections, dim: int = 0) -> tuple[Tensor, ...]:
        """Views split along ``dim``: an int ``n`` gives ``n`` pieces, the first
        ``size % n`` one longer; a list gives the split indices (clamped, as numpy's
        array_split): ``x.tensor_split(3)``, ``x.tensor_split([1, 4], dim=1)``."""
        d = _norm_axis(dim, self.ndim, "dim")
        n = self.shape[d]
        if isinstance(indices_or_sections, Tensor):
            indices_or_sections = indices_or_sections.tolist()
        if isinstance(indices_or_sections, (int, np.integer)) and not isinstance(
            indices_or_sections, bool
        ):
            k = int(indices_or_sections)
            if k <= 0:
                raise ArgumentError(f"tensor_split: sections must be a positive int, got {k}")
            q, r = divmod(n, k)
            sizes = [q + 1] * r + [q] * (k - r)
        else:
            idx = _ints(tuple(indices_or_sections), "tensor_split indices")
            bounds = [0] + [min(max(i + n if i < 0 else i, 0), n) for i in idx] + [n]
            sizes = [max(b - a, 0) for a, b in zip(bounds, bounds[1:])]
            starts = [min(a, n) for a in bounds[:-1]]
            return tuple(self.narrow(d, s, z) for s, z in zip(starts, sizes))
        out, start = [], 0
        for s in sizes:
            out.append(self.narrow(d, start, s))
            start += s
        return tuple(out)

    def _dsplit_like(self, what: str, d: int, need: int, sections) -> tuple[Tensor, ...]:
        if self.ndim < need:
            raise ArgumentError(f"{what} needs a tensor of at least {need} dims, got {self.shape}")
        if isinstance(sections, (int, np.integer)) and not isinstance(sections, bool):
            if sections <= 0 or self.shape[d] % int(sections):
                raise ArgumentError(
                    f"{what}: dim {d} of size {self.shape[d]} does not split into {sections} "
                    "equal sections"
                )
        return self.tensor_split(sections, d)

    def hsplit(self, sections) -> tuple[Tensor, ...]:
        """Split along dim 1 (dim 0 of a 1-d tensor) into equal sections or at
        indices: ``x.hsplit(2)``, ``x.hsplit([1, 3])``."""
        return self._dsplit_like("hsplit", 0 if self.ndim == 1 else 1, 1, sections)

    def vsplit(self, sections) -> tuple[Tensor, ...]:
        """Split along dim 0 (at least 2 dims): ``x.vsplit(2)``."""
        return self._dsplit_like("vsplit", 0, 2, sections)

    def dsplit(self, sections) -> tuple[Tensor, ...]:
        """Split along dim 2 (at least 3 dims): ``x.dsplit([1])``."""
        return self._dsplit_like("dsplit", 2, 3, sections)

    def hstack(self, *others: Tensor) -> Tensor:
        """Join along dim 1 (dim 0 for 1-d tensors): ``a.hstack(b)``, ``mlfuse.hstack([a, b])``."""
        return hstack([self, *others])

    def vstack(self, *others: Tensor) -> Tensor:
        """Join along dim 0, 1-d tensors as rows: ``a.vstack(b)``, ``mlfuse.vstack([a, b])``."""
        return vstack([self, *others])

    def dstack(self, *others: Tensor) -> Tensor:
        """Join along dim 2 (inputs made at least 3-d): ``a.dstack(b)``."""
        return dstack([self, *others])

    @_traced
    def diff(self, n: int = 1, dim: int = -1, prepend=None, append=None) -> Tensor:
        """The ``n``-th forward difference along ``dim`` (bools: ``!=``), with
        ``prepend``/``append`` joined first: ``x.diff()``, ``x.diff(2, dim=0)``."""
        if not isinstance(n, (int, np.integer)) or n < 0:
            raise ArgumentError(f"diff: n must be a non-negative int, got {n!r}")
        if self.ndim == 0:
            raise ArgumentError("diff needs a tensor of at least 1 dim")
        d = _norm_axis(dim, self.ndim, "dim")
        parts = []
        for extra in (prepend, append):
            if extra is None:
                parts.append(None)
                continue
            e = extra if isinstance(extra, Tensor) else Tensor(extra, device=self.device)
            if e.ndim == 0:
                e = e.reshape((1,) * self.ndim)._broadcast_to(
                    tuple(1 if i == d else s for i, s in enumerate(self.shape))
                )
            parts.append(e)
        x = cat([p for p in (parts[0], self, parts[1]) if p is not None], d)
        for _ in range(int(n)):
            m = x.shape[d]
            if m == 0:
                break
            a, b = x.narrow(d, 1, m - 1), x.narrow(d, 0, m - 1)
            x = a != b if x.dtype.is_bool else a - b
        return x

    @_traced
    def rot90(self, k: int = 1, dims=(0, 1)) -> Tensor:
        """Rotate by 90 degrees ``k`` times in the plane of ``dims``, from the first
        dim toward the second (PyTorch's direction): ``x.rot90()``, ``x.rot90(2, (1, 2))``."""
        dims = tuple(dims)
        if len(dims) != 2:
            raise ArgumentError(f"rot90: dims must be two dims, got {dims}")
        if self.ndim < 2:
            raise ArgumentError(f"rot90 needs a tensor of at least 2 dims, got {self.shape}")
        a, b = (_norm_axis(x, self.ndim, "dim") for x in dims)
        if a == b:
            raise ArgumentError(f"rot90: dims must differ, got {dims}")
        k = int(k) % 4
        if k == 0:
            return self.clone()
        if k == 2:
            return self.flip((a, b))
        if k == 1:
            return self.flip(b).transpose(a, b)
        return self.flip(a).transpose(a, b)

    # -- more products ------------------------------------------------------------
    @_traced
    def outer(self, vec2) -> Tensor:
        """The outer product of two 1-d tensors: ``a.outer(b)[i, j] == a[i] * b[j]``."""
        o = vec2 if isinstance(vec2, Tensor) else Tensor(vec2, device=self.device)
        if self.ndim != 1 or o.ndim != 1:
            raise ArgumentError(f"outer needs two 1-d tensors, got {self.shape} and {o.shape}")
        return self.reshape(-1, 1) * o.reshape(1, -1)

    def ger(self, vec2) -> Tensor:
        """The old name of :meth:`outer`: ``a.ger(b)``."""
        return self.outer(vec2)

    @_traced
    def inner(self, other) -> Tensor:
        """Sums of products over the last dims (a scalar multiplies):
        ``a.inner(b)`` has shape ``a.shape[:-1] + b.shape[:-1]``."""
        o = other if isinstance(other, Tensor) else Tensor(other, device=self.device)
        if self.ndim == 0 or o.ndim == 0:
            return self * o
        if self.shape[-1] != o.shape[-1]:
            raise ArgumentError(f"inner: last dims differ: {self.shape} and {o.shape}")
        k = self.shape[-1]
        out = self.reshape(-1, k).matmul(o.reshape(-1, k).T)
        return out.reshape(self.shape[:-1] + o.shape[:-1])

    @_traced
    def mv(self, vec) -> Tensor:
        """Matrix times vector: ``m.mv(v)`` for a (n, m) matrix and a (m,) vector."""
        v = vec if isinstance(vec, Tensor) else Tensor(vec, device=self.device)
        if self.ndim != 2 or v.ndim != 1 or self.shape[1] != v.shape[0]:
            raise ArgumentError(
                f"mv needs a (n, m) matrix and a (m,) vector, got {self.shape} and {v.shape}"
            )
        return self.matmul(v)

    @_traced
    def mm(self, mat2) -> Tensor:
        """Matrix product of two 2-d tensors (no broadcasting): ``a.mm(b)``."""
        m = mat2 if isinstance(mat2, Tensor) else Tensor(mat2, device=self.device)
        if self.ndim != 2 or m.ndim != 2 or self.shape[1] != m.shape[0]:
            raise ArgumentError(
                f"mm needs (n, k) and (k, m) matrices, got {self.shape} and {m.shape}"
            )
        return self.matmul(m)

    @_traced
    def bmm(self, mat2) -> Tensor:
        """Batched matrix product of (b, n, k) and (b, k, m) tensors (no broadcasting):
        ``a.bmm(b)``."""
        m = mat2 if isinstance(mat2, Tensor) else Tensor(mat2, device=self.device)
        if (
            self.ndim != 3
            or m.ndim != 3
            or self.shape[0] != m.shape[0]
            or self.shape[2] != m.shape[1]
        ):
            raise ArgumentError(
                f"bmm needs (b, n, k) and (b, k, m) tensors, got {self.shape} and {m.shape}"
            )
        return self.matmul(m)

    def _scaled_sum(self, prod: Tensor, beta, alpha) -> Tensor:
        """``beta * self + alpha * prod`` (beta 0: self is ignored, NaN included), in
        the tensors' dtype: for integer tensors the scalars are truncated to integers
        and for bool ones taken as truths, as PyTorch."""
        dt = dtypes.promote(self.dtype, prod.dtype)
        if dt.is_bool:
            beta, alpha = bool(beta), bool(alpha)
        elif not dt.is_float:
            beta, alpha = int(beta), int(alpha)
        if dt.is_bool:
            p = prod if alpha else prod & False
        else:
            p = prod if alpha == 1 else prod * alpha
        if beta == 0:  # self is ignored, and gets a zero gradient, as PyTorch
            out = p._broadcast_to(broadcast_shape(self.shape, p.shape))
            return out + _zero_gradient(self, out.dtype) if self.requires_grad else out
        s = self if beta == 1 else self * beta
        out = s | p if dt.is_bool else s + p
        if out.shape != p.shape:
            raise ArgumentError(
                f"the input {self.shape} does not broadcast to the product {p.shape}"
            )
        return out

    @_traced
    def addmm(self, mat1, mat2, beta=1, alpha=1) -> Tensor:
        """``beta * self + alpha * (mat1 @ mat2)``: ``bias.addmm(x, w)``."""
        m1 = mat1 if isinstance(mat1, Tensor) else Tensor(mat1, device=self.device)
        return self._scaled_sum(m1.mm(mat2), beta, alpha)

    @_traced
    def addmv(self, mat, vec, beta=1, alpha=1) -> Tensor:
        """``beta * self + alpha * (mat @ vec)``: ``b.addmv(m, v)``."""
        m = mat if isinstance(mat, Tensor) else Tensor(mat, device=self.device)
        return self._scaled_sum(m.mv(vec), beta, alpha)

    @_traced
    def baddbmm(self, batch1, batch2, beta=1, alpha=1) -> Tensor:
        """``beta * self + alpha * (batch1 @ batch2)`` (batched): ``c.baddbmm(a, b)``."""
        b1 = batch1 if isinstance(batch1, Tensor) else Tensor(batch1, device=self.device)
        return self._scaled_sum(b1.bmm(batch2), beta, alpha)

    @_traced
    def addcmul(self, tensor1, tensor2, value=1) -> Tensor:
        """``self + value * tensor1 * tensor2``: ``x.addcmul(a, b, value=0.5)``."""
        t1 = tensor1 if isinstance(tensor1, Tensor) else Tensor(tensor1, device=self.device)
        return self + (t1 * tensor2) * value if value != 1 else self + t1 * tensor2

    @_traced
    def addcdiv(self, tensor1, tensor2, value=1) -> Tensor:
        """``self + value * tensor1 / tensor2`` (true division): ``x.addcdiv(a, b, value=-0.1)``."""
        t1 = tensor1 if isinstance(tensor1, Tensor) else Tensor(tensor1, device=self.device)
        q = t1 / tensor2
        if not self.dtype.is_float:
            raise TypeError(
                f"addcdiv: integer division is not supported for a {self.dtype.name} input; "
                "use a float tensor"
            )
        return self + q * value if value != 1 else self + q

    @_traced
    def vdot(self, other) -> Tensor:
        """The dot product of two 1-d tensors of one length: ``a.vdot(b)``."""
        o = other if isinstance(other, Tensor) else Tensor(other, device=self.device)
        if self.ndim != 1 or o.ndim != 1 or self.shape != o.shape:
            raise ArgumentError(
                f"vdot needs two 1-d tensors of one length, got {self.shape} and {o.shape}"
            )
        return (self * o).sum().cast(dtypes.promote(self.dtype, o.dtype))

    @_traced
    def kron(self, other) -> Tensor:
        """The Kronecker product (block ``[i, j]`` is ``self[i, j] * other``):
        ``a.kron(b)``; the operands' dims are aligned from the right."""
        o = other if isinstance(other, Tensor) else Tensor(other, device=self.device)
        nd = max(self.ndim, o.ndim)
        a = self.reshape((1,) * (nd - self.ndim) + self.shape)
        b = o.reshape((1,) * (nd - o.ndim) + o.shape)
        inter_a = tuple(v for s in a.shape for v in (s, 1))
        inter_b = tuple(v for s in b.shape for v in (1, s))
        out = a.reshape(inter_a) * b.reshape(inter_b)
        return out.reshape(tuple(s * t for s, t in zip(a.shape, b.shape)))

    @_traced
    def cross(self, other, dim=None) -> Tensor:
        """The cross product of 3-vectors along ``dim`` (None: the first dim of size 3,
        as ``torch.cross``); the operands broadcast: ``a.cross(b, dim=-1)``."""
        o = other if isinstance(other, Tensor) else Tensor(other, device=self.device)
        a, b = self._operands(o)
        if dim is None:
            d = next((i for i, s in enumerate(a.shape) if s == 3), None)
            if d is None:
                raise ArgumentError(f"cross: no dim of size 3 in {a.shape}")
        else:
            d = _norm_axis(dim, a.ndim, "dim")
        if a.shape[d] != 3:
            raise ArgumentError(f"cross: dim {d} of {a.shape} must have size 3")
        for t in (self, o):  # the vectors themselves have 3 entries: none is broadcast
            at = d - (a.ndim - t.ndim)
            if at < 0 or t.shape[at] != 3:
                raise ArgumentError(
                    f"cross: both operands need size 3 along dim {d}, got {self.shape} and "
                    f"{o.shape}"
                )
        return a.roll(-1, d) * b.roll(-2, d) - a.roll(-2, d) * b.roll(-1, d)

    @_traced
    def diag(self, diagonal: int = 0) -> Tensor:
        """A 1-d tensor as the ``diagonal``-th diagonal of a square matrix, or a 2-d
        tensor's ``diagonal``-th diagonal (a copy): ``v.diag()``, ``m.diag(1)``."""
        k = int(diagonal)
        if self.ndim == 2:
            return self.diagonal(k).clone()
        if self.ndim != 1:
            raise ArgumentError(f"diag needs a 1-d or 2-d tensor, got {self.shape}")
        n = self.shape[0] + abs(k)
        v = self.pad(((0, abs(k)),))
        rows = Tensor.arange(n, device=self.device).reshape(n, 1)
        cols = Tensor.arange(n, device=self.device).reshape(1, n)
        vals = v.reshape(n, 1) if k >= 0 else v.reshape(1, n)
        return (cols - rows == k).where(
            vals._broadcast_to((n, n)), Tensor.full((), 0, self.dtype, self.device)
        )

    def diagonal(self, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
        """The ``offset``-th diagonal of the planes of ``dim1`` and ``dim2`` as the last
        dim (a view: writing it writes this tensor): ``m.diagonal()``,
        ``x.diagonal(1, -2, -1)``."""
        if self.ndim < 2:
            raise ArgumentError(f"diagonal needs a tensor of at least 2 dims, got {self.shape}")
        a, b = _norm_axis(dim1, self.ndim, "dim1"), _norm_axis(dim2, self.ndim, "dim2")
        if a == b:
            raise ArgumentError(f"diagonal: dim1 and dim2 must differ, got {dim1} and {dim2}")
        x = self.movedim((a, b), (-2, -1))
        n, m = x.shape[-2:]
        off = int(offset)
        r0, c0 = (0, off) if off >= 0 else (-off, 0)
        length = max(0, min(n - r0, m - c0))
        if length == 0:
            r0 = c0 = 0
        lead = x.shape[:-2]
        x = x.shrink(tuple([None] * len(lead) + [(r0, r0 + length), (c0, c0 + length)]))
        if length <= 1:
            return x.reshape(lead + (length,))
        return x.reshape(lead + (length * length,))._stride_view(*([1] * len(lead)), length + 1)

    @_traced
    def trace(self) -> Tensor:
        """The sum of a matrix's main diagonal (integers sum in int64): ``m.trace()``."""
        if self.ndim != 2:
            raise ArgumentError(f"trace needs a 2-d tensor, got {self.shape}")
        return self.diagonal().sum()

    # -- more elementwise math ------------------------------------------------------
    @_traced
    def logaddexp(self, other) -> Tensor:
        """``log(exp(self) + exp(other))`` without overflow: ``a.logaddexp(b)``."""
        a, b = self._operands(other)  # promoted first: int with float16 is float16
        a, b = a._float(), b._float()
        m = a.maximum(b)
        both_inf = (a == b) & a.isinf()  # inf + inf, -inf + -inf: no NaN from inf - inf
        return both_inf.where(a, m + (-(a - b).abs()).exp().log1p())

    @_traced
    def logaddexp2(self, other) -> Tensor:
        """``log2(2**self + 2**other)`` without overflow: ``a.logaddexp2(b)``."""
        a, b = self._operands(other)  # promoted first: int with float16 is float16
        a, b = a._float(), b._float()
        m = a.maximum(b)
        both_inf = (a == b) & a.isinf()
        return both_inf.where(a, m + (-(a - b).abs()).exp2().log1p() * (1 / math.log(2)))

    @_traced
    def hypot(self, other) -> Tensor:
        """``sqrt(self**2 + other**2)`` without overflow or underflow (inf wins over
        NaN, as in C): ``a.hypot(b)``."""
        a, b = self._operands(other)  # promoted first: int with float16 is float16
        a, b = a._float().abs(), b._float().abs()
        big, small = a.maximum(b), a.minimum(b)
        safe = (big == 0).where(1.0, big)
        r = small / safe
        out = (big == 0).where(0.0, big * (r * r + 1).sqrt())
        return (a.isinf() | b.isinf()).where(math.inf, out)

    @_traced
    def deg2rad(self) -> Tensor:
        """Degrees to radians: ``x.deg2rad()``."""
        return self._float() * (math.pi / 180)

    @_traced
    def rad2deg(self) -> Tensor:
        """Radians to degrees: ``x.rad2deg()``."""
        return self._float() * (180 / math.pi)

    @_traced
    def float_power(self, exponent) -> Tensor:
        """``self ** exponent`` in float64: ``x.float_power(2)``."""
        e = exponent.double() if isinstance(exponent, Tensor) else float(exponent)
        return self.double() ** e

    @_traced
    def fmod(self, other) -> Tensor:
        """C's remainder: the sign of the dividend (``Tensor([-7]).fmod(2)`` is -1):
        ``x.fmod(3)``. Exact for floats whatever the quotient (``_fmod_exact``; 16-
        and 32-bit floats through float64); x for an infinite divisor, NaN for an
        infinite dividend or a zero divisor. Integer division by zero is undefined."""
        a, b = self._operands(other)
        if a.dtype.is_bool:
            raise DTypeError("fmod is not defined for bool tensors")
        if a.dtype.is_float:
            if a.dtype != dtypes.float64:  # exact in float64, then exactly representable
                out = _fmod_exact(a.double(), b.double(), 24).cast(a.dtype)
            else:
                out = _fmod_exact(a, b, 53)
            # PyTorch's gradient, not the long division's: 1 and -trunc(a / b)
            return _derivative("fmod", out, (a, b), lambda c, g: (g, -g * (c.x / c.y).trunc()))
        m = a._int_op("mod", b)  # the sign of the divisor: move it to the dividend's
        fix = (m != 0) & ((m < 0) != (a < 0))
        return fix.where(m - b, m)

    @_traced
    def remainder(self, other) -> Tensor:
        """Python's remainder, with the sign of the divisor (as ``%``): ``x.remainder(3)``."""
        return self % other

    @_traced
    def frac(self) -> Tensor:
        """The fractional part, ``x - trunc(x)`` (sign of x): ``x.frac()``."""
        if not self.dtype.is_float:
            raise DTypeError(f"frac is not defined for {self.dtype.name} tensors")
        return self - self.trunc()

    @_traced
    def logit(self, eps: float | None = None) -> Tensor:
        """``log(p / (1 - p))``, ``p`` clamped to ``[eps, 1 - eps]`` when eps is given:
        ``p.logit()``, ``p.logit(1e-6)``."""
        x = self._float()
        if eps is not None:
            x = x.clip(eps, 1 - eps)
        return (x / (1 - x)).log()

    @_traced
    def nan_to_num(
        self, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None
    ):
        """NaN to ``nan``, +-inf to ``posinf``/``neginf`` (default: the dtype's largest
        and lowest finite values): ``x.nan_to_num()``, ``x.nan_to_num(0.0, 1e6, -1e6)``."""
        if not self.dtype.is_float:
            return self.clone()
        big = _finite_max(self.dtype)
        hi = big if posinf is None else posinf
        lo = -big if neginf is None else neginf
        out = self.isnan().where(Tensor.full((), nan, self.dtype, self.device), self)
        out = (self == math.inf).where(Tensor.full((), hi, self.dtype, self.device), out)
        return (self == -math.inf).where(Tensor.full((), lo, self.dtype, self.device), out)

    # -- more reductions (NaN-skipping, paired) --------------------------------------
    @_traced
    def nansum(self, axis=None, keepdim=False) -> Tensor:
        """Sum over ``axis`` treating NaN as 0: ``x.nansum(1)``."""
        if not self.dtype.is_float:
            return self.sum(axis, keepdim)
        return (
            self.isnan().where(Tensor.full((), 0, self.dtype, self.device), self).sum(axis, keepdim)
        )

    @_traced
    def nanmean(self, axis=None, keepdim=False) -> Tensor:
        """Mean over ``axis`` of the values that are not NaN (all NaN: NaN):
        ``x.nanmean(0)``."""
        if not self.dtype.is_float:
            raise DTypeError(f"nanmean needs a float tensor, got {self.dtype.name}")
        count = self.isnan().logical_not().sum(axis, keepdim)
        return self.nansum(axis, keepdim) / count.cast(self.dtype)

    @_traced
    def var_mean(self, axis=None, keepdim=False, correction=1) -> tuple[Tensor, Tensor]:
        """``(var, mean)`` over ``axis`` in one call: ``v, m = x.var_mean(1)``."""
        return self.var(axis, keepdim, correction), self.mean(axis, keepdim)

    @_traced
    def std_mean(self, axis=None, keepdim=False, correction=1) -> tuple[Tensor, Tensor]:
        """``(std, mean)`` over ``axis`` in one call: ``s, m = x.std_mean(1)``."""
        return self.std(axis, keepdim, correction), self.mean(axis, keepdim)

    # -- comparisons returning bools -----------------------------------------------
    @_traced
    def isclose(self, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False):
        """Elementwise ``|self - other| <= atol + rtol * |other|`` (infinities equal
        only to themselves; NaN equal to NaN when ``equal_nan``): ``a.isclose(b)``."""
        for name, tol in (("rtol", rtol), ("atol", atol)):
            if tol < 0:
                raise ArgumentError(f"isclose: {name} must be >= 0, got {tol}")
        a, b = self._operands(other)
        if a.dtype.is_bool:
            a, b = a.cast(dtypes.int32), b.cast(dtypes.int32)
        if not a.dtype.is_float:
            a, b = a.cast(dtypes.float64), b.cast(dtypes.float64)
        close = (a - b).abs() <= (b.abs() * rtol + atol)
        out = (a == b) | (close & a.isfinite() & b.isfinite())
        if equal_nan:
            out = out | (a.isnan() & b.isnan())
        return out

    def allclose(self, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False):
        """Whether every element is :meth:`isclose` (a Python bool; computes):
        ``a.allclose(b)``."""
        return bool(self.isclose(other, rtol, atol, equal_nan).all().item())

    def equal(self, other) -> bool:
        """Whether both tensors have one shape and equal elements (a Python bool;
        computes): ``a.equal(b)``."""
        o = other if isinstance(other, Tensor) else Tensor(other, device=self.device)
        if self.shape != o.shape:
            return False
        return bool((self == o).all().item())

    # -- more indexed writes ------------------------------------------------------------
    @_traced
    def renorm(self, p, dim: int, maxnorm) -> Tensor:
        """Each slice along ``dim`` whose ``p``-norm exceeds ``maxnorm`` scaled down to
        it: ``w.renorm(2, 0, 1.0)`` (rows of norm at most 1)."""
        if not isinstance(p, (int, float)) or isinstance(p, bool) or p <= 0:
            raise ArgumentError(f"renorm: p must be a positive number, got {p!r}")
        if self.ndim == 0:
            raise ArgumentError("renorm needs a tensor of at least 1 dim")
        d = _norm_axis(dim, self.ndim, "dim")
        x = self._float()
        rest = tuple(i for i in range(self.ndim) if i != d)
        norm = x.norm(p, dim=rest, keepdim=True) if rest else x.abs()
        scale = (norm > maxnorm).where(maxnorm / (norm + 1e-7), 1.0)
        return x * scale

    def _index_along(self, what: str, dim: int, index, source: Tensor | None):
        """``dim`` normalized, the 1-d int64 ``index`` checked and expanded to the
        shape of ``source`` (or of this tensor with ``len(index)`` along ``dim``)."""
        d = _norm_axis(dim, self.ndim, "dim")
        idx = _index_tensor(index, self.device)
        if idx.ndim > 1:
            raise ArgumentError(f"{what}: index must be 0-d or 1-d, got {idx.shape}")
        idx = idx.reshape(-1)
        n = self.shape[d] if self.ndim else 1
        if source is not None:
            want = tuple(idx.shape[0] if i == d else s for i, s in enumerate(self.shape))
            if source.shape != want and not (self.ndim == 0 and source.numel() == idx.numel()):
                raise ArgumentError(
                    f"{what}: source {source.shape} must have shape {want} (the input "
                    f"{self.shape} with len(index) = {idx.shape[0]} along dim {d})"
                )
        idx = _checked(idx, n, d, self.shape)
        shape = tuple(idx.shape[0] if i == d else s for i, s in enumerate(self.shape))
        full = idx.reshape(tuple(-1 if i == d else 1 for i in range(self.ndim)))
        return d, full._broadcast_to(shape)

    @_traced
    def index_add(self, dim: int, index, source, alpha=1) -> Tensor:
        """A copy with ``alpha * source[j]`` added at ``index[j]`` along ``dim``
        (repeated indices add up): ``x.index_add(0, idx, rows)``."""
        s = source if isinstance(source, Tensor) else Tensor(source, self.dtype, self.device)
        if self.ndim == 0:
            return self.reshape(1).index_add(0, index, s.reshape(-1), alpha).reshape(())
        d, idx = self._index_along("index_add", dim, index, s)
        return self.scatter(d, idx, s * alpha if alpha != 1 else s, reduce="add")

    @_traced
    def index_copy(self, dim: int, index, source) -> Tensor:
        """A copy with ``source[j]`` written at ``index[j]`` along ``dim``:
        ``x.index_copy(0, idx, rows)``."""
        s = source if isinstance(source, Tensor) else Tensor(source, self.dtype, self.device)
        if self.ndim == 0:
            return self.reshape(1).index_copy(0, index, s.reshape(-1)).reshape(())
        d, idx = self._index_along("index_copy", dim, index, s)
        return self.scatter(d, idx, s)

    @_traced
    def index_fill(self, dim: int, index, value) -> Tensor:
        """A copy with ``value`` at positions ``index`` along ``dim`` (one fused
        select): ``x.index_fill(1, idx, 0.0)``."""
        if self.ndim == 0:
            return self.reshape(1).index_fill(0, index, value).reshape(())
        d = _norm_axis(dim, self.ndim, "dim")
        idx = _index_tensor(index, self.device)
        if idx.ndim > 1:
            raise ArgumentError(f"index_fill: index must be 0-d or 1-d, got {idx.shape}")
        idx = _checked(idx.reshape(-1), self.shape[d], d, self.shape)
        n = self.shape[d]
        pos = Tensor.arange(n, device=self.device).reshape(n, 1)
        hit = (pos == idx.reshape(1, -1)).any(1)
        hit = hit.reshape(tuple(n if i == d else 1 for i in range(self.ndim)))
        v = (
            value.cast(self.dtype)
            if isinstance(value, Tensor)
            else Tensor.full((), value, self.dtype, self.device)
        )
        return hit.where(v, self)

    @_traced
    def scatter_reduce(self, dim: int, index, src, reduce: str, include_self: bool = True):
        """PyTorch's scatter_reduce (a copy): ``src[i][j]`` is combined into
        ``out[index[i][j]][j]`` for ``dim=0`` by ``reduce`` (``"sum"``, ``"prod"``,
        ``"mean"``, ``"amax"``, ``"amin"``), with this tensor's value too when
        ``include_self``; untouched elements keep it: ``x.scatter_reduce(0, idx, v, "amax")``.

        The write positions are computed on the host; each element then reduces
        the writes it receives (O(numel x most writes to one element) work)."""
        kinds = {"sum": "add", "prod": "mul", "mean": "add", "amax": "max", "amin": "min"}
        if reduce not in kinds:
            raise ArgumentError(
                "scatter_reduce: reduce must be one of 'sum', 'prod', 'mean', 'amax' or "
                f"'amin', got {reduce!r}"
            )
        s = src if isinstance(src, Tensor) else Tensor(src, self.dtype, self.device)
        _same_dtype("scatter_reduce", self, s)
        idx = _index_tensor(index, self.device)
        d = _norm_axis(dim, self.ndim, "dim")
        if idx.ndim != self.ndim or s.ndim != self.ndim:
            raise ArgumentError(
                f"scatter_reduce: index {idx.shape} and src {s.shape} must have the rank of "
                f"the input {self.shape}"
            )
        if any(i > t for i, t in zip(idx.shape, s.shape)) or any(
            i > t for k, (i, t) in enumerate(zip(idx.shape, self.shape)) if k != d
        ):
            raise ArgumentError(
                f"scatter_reduce: index {idx.shape} is larger than src {s.shape} or than the "
                f"input {self.shape} off dim {d}"
            )
        idx = _checked(idx, self.shape[d], d, self.shape)
        pos = self._index_positions(idx, d)
        v = s.shrink(tuple((0, i) for i in idx.shape))
        return self._scatter_reduce_positions(pos, v, reduce, include_self)

    def _scatter_reduce_positions(self, pos: Tensor, v: Tensor, reduce: str, include_self: bool):
        """This tensor with the writes ``v`` at row-major positions ``pos`` combined
        by ``reduce`` (see :meth:`scatter_reduce`)."""
        kind = {"sum": "add", "prod": "mul", "mean": "add", "amax": "max", "amin": "min"}[reduce]
        k, n = pos.numel(), self.numel()
        if k == 0:
            return self
        dev, dt = self.device, self.dtype
        flat, v1 = self.reshape(-1), v.reshape(-1)
        p = pos.numpy().reshape(-1).astype(np.int64)
        it = np.int32 if max(n, k) < 2**31 else np.int64
        order = np.argsort(p, kind="stable").astype(it)
        count = np.bincount(p, minlength=n)
        first = (np.cumsum(count) - count).astype(it)
        m = int(count.max())
        ordered = v1._gather(0, Tensor(order, device=dev))
        j = Tensor.arange(m, device=dev).reshape(1, m)
        at = (Tensor(first, device=dev).reshape(n, 1) + j).minimum(k - 1)
        vals = ordered.reshape(1, k)._broadcast_to((n, k))._gather(1, at.cast(dtypes.int64))
        x = vals.cast(dtypes.int32) if dt.is_bool else vals
        ident = {"add": 0, "mul": 1, "max": _lowest(x.dtype), "min": _highest(x.dtype)}[kind]
        cnt = Tensor(count.astype(it), device=dev)
        live = j < cnt.reshape(n, 1)
        x = live.where(x, Tensor.full((), ident, x.dtype, dev))
        red = _reduce_kind(x, kind, 1)
        base = flat.cast(red.dtype) if red.dtype != dt else flat
        if include_self:
            red = _combine(kind, red, base)
        if reduce == "mean":
            c = cnt.cast(red.dtype) + (1 if include_self else 0)
            c = (c == 0).where(1, c)
            red = red / c if red.dtype.is_float else red // c
        out = (cnt > 0).where(red.cast(dt), flat)
        return out.reshape(self.shape)

    @_traced
    def put(self, index, source, accumulate: bool = False) -> Tensor:
        """A copy with ``source`` written at the flat (row-major) positions ``index``
        (added when ``accumulate``): ``x.put(Tensor([0, 5]), Tensor([1.0, 2.0]))``."""
        idx = _index_tensor(index, self.device)
        s = source if isinstance(source, Tensor) else Tensor(source, device=self.device)
        if s.numel() != idx.numel():
            raise ArgumentError(
                f"put: source has {s.numel()} elements, index {idx.numel()} (they must match)"
            )
        pos = _checked(idx.reshape(-1), self.numel(), 0, self.shape)
        return self._scatter_positions(pos, s.reshape(-1).cast(self.dtype), accumulate)

    # -- strided views ----------------------------------------------------------------
    def unfold(self, dimension: int, size: int, step: int) -> Tensor:
        """Every window of ``size`` along ``dimension``, ``step`` apart, as a new last
        dim (a view built from reshapes, pads and shrinks):
        ``Tensor.arange(7).unfold(0, 3, 2)`` is ``[[0, 1, 2], [2, 3, 4], [4, 5, 6]]``."""
        d = _norm_axis(dimension, self.ndim, "dimension")
        x = self.reshape(1) if self.ndim == 0 else self
        n = x.shape[d]
        if not isinstance(size, (int, np.integer)) or not 0 <= size <= n:
            raise ArgumentError(
                f"unfold: size must be in 0..{n} (dim {d} of {self.shape}), got {size!r}"
            )
        if not isinstance(step, (int, np.integer)) or step <= 0:
            raise ArgumentError(f"unfold: step must be a positive int, got {step!r}")
        size, step = int(size), int(step)
        o = (n - size) // step + 1
        if size == 0:  # empty windows, as PyTorch: (n // step + 1) of them
            shape = (0,) if self.ndim == 0 else self.shape[:d] + (o,) + self.shape[d + 1 :] + (0,)
            return Tensor.zeros(*shape, dtype=self.dtype, device=self.device)
        x = x.movedim(d, -1)
        lead = x.shape[:-1]
        keep = [None] * len(lead)
        if step >= size:  # windows do not overlap: pad to o * step, split, keep size of each
            x = x.pad(tuple([(0, 0)] * len(lead) + [(0, max(o * step - n, 0))]))
            x = x.shrink(tuple(keep + [(0, o * step)])).reshape(lead + (o, step))
            x = x.shrink(tuple(keep + [None, (0, size)]))
        else:  # overlapping: size copies of the row, each shifted by one (tinygrad's pool)
            e = -(-size * (n + 1) // n)
            x = x.reshape(lead + (1, n)).expand(lead + (e, n)).reshape(lead + (e * n,))
            x = x.shrink(tuple(keep + [(0, size * (n + 1))])).reshape(lead + (size, n + 1))
            x = x.shrink(tuple(keep + [None, (0, o * step)])).reshape(lead + (size, o, step))
            x = x.shrink(tuple(keep + [None, None, (0, 1)])).reshape(lead + (size, o))
            x = x.transpose(-1, -2)
        x = x.movedim(-2, d)
        return x.reshape(size) if self.ndim == 0 else x  # a 0-d tensor's one window: (size,)

    def as_strided(self, size, stride, storage_offset: int = 0) -> Tensor:
        """A view reading element ``storage_offset + sum(i[k] * stride[k])`` of this
        tensor's row-major order at index ``i``: ``x.as_strided((2, 2), (1, 2))``.

        Strides count elements of the contiguous layout (the same as PyTorch for a
        contiguous tensor). Views where each dim's stride is 0 (broadcast) or a
        multiple of the next finer stride times its size are built from movement
        ops; overlapping windows (use :meth:`unfold`) raise ValueError."""
        size = _shape_arg(tuple(size))
        stride = _ints(tuple(stride), "as_strided strides")
        off = int(storage_offset)
        if len(size) != len(stride):
            raise ArgumentError(f"as_strided: {len(size)} sizes but {len(stride)} strides")
        if off < 0 or any(s < 0 for s in stride):
            raise ArgumentError(f"as_strided: negative stride or offset ({stride}, {off})")
        n = self.numel()
        if math.prod(size) == 0:
            return Tensor.zeros(size, dtype=self.dtype, device=self.device)
        last = off + sum((z - 1) * s for z, s in zip(size, stride))
        if last >= n:
            raise ArgumentError(
                f"as_strided: size {size}, stride {stride} and offset {off} reach element "
                f"{last} of a tensor of {n} elements"
            )
        live = sorted(
            (k for k in range(len(size)) if stride[k] and size[k] > 1),
            key=lambda k: -stride[k],
        )
        for a, b in zip(live, live[1:]):  # coarse to fine: each must hold the next whole
            if stride[a] % stride[b] or stride[a] < stride[b] * size[b]:
                raise ArgumentError(
                    f"as_strided: size {size} with stride {stride} is not expressible as a "
                    "view here (overlapping or interleaved dims); use unfold or gather"
                )
        x = self.reshape(-1)
        span = stride[live[0]] * size[live[0]] if live else 1
        if off + span > n:  # the last window's tail past the end is never read
            x = x.pad(((0, off + span - n),))
        x = x.shrink(((off, off + span),))
        shape: tuple[int, ...] = ()
        for k in live:  # coarse to fine: split the innermost run into (size, stride)
            x = x.shrink(tuple([None] * len(shape) + [(0, stride[k] * size[k])]))
            x = x.reshape(shape + (size[k], stride[k]))
            shape += (size[k],)
        x = x.shrink(tuple([None] * len(shape) + [(0, 1)])).reshape(shape)
        # the live dims are in stride order; the others are size 1 or broadcast
        order = live + [k for k in range(len(size)) if k not in live]
        x = x.reshape(shape + (1,) * (len(size) - len(live)))
        x = x.permute(tuple(int(i) for i in np.argsort(order)))
        return x.expand(size) if x.shape != size else x

    @_traced
    def cdist(self, x2, p: float = 2.0, compute_mode: str | None = None) -> Tensor:
        """The ``p``-norm distance between each row of ``self`` (..., P, M) and each
        row of ``x2`` (..., R, M), shape (..., P, R); batch dims broadcast:
        ``a.cdist(b)``, ``a.cdist(b, p=1)``. Differences are always taken directly
        (PyTorch's ``compute_mode`` choices are accepted; none loses accuracy here)."""
        modes = (None, "use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                 "donot_use_mm_for_euclid_dist")  # fmt: skip
        if compute_mode not in modes:
            raise ArgumentError(f"cdist: compute_mode must be one of {modes}, got {compute_mode!r}")
        b = x2 if isinstance(x2, Tensor) else Tensor(x2, device=self.device)
        if self.ndim < 2 or b.ndim < 2 or self.shape[-1] != b.shape[-1]:
            raise ArgumentError(
                f"cdist needs (..., P, M) and (..., R, M) tensors, got {self.shape} and {b.shape}"
            )
        if not isinstance(p, (int, float)) or isinstance(p, bool) or p < 0:
            raise ArgumentError(f"cdist: p must be a non-negative number, got {p!r}")
        d = self._float().unsqueeze(-2) - b._float().unsqueeze(-3)
        return d.norm(p, dim=-1)

    # -- sorting and searching: static shapes from comparisons ---------------------------
    def _sort_key(self) -> Tensor:
        """The values compared by the sorting family (bools as int32)."""
        if self.dtype.is_bool:
            return self.cast(dtypes.int32)
        return self

    def _ranks(self, descending: bool) -> Tensor:
        """Each element's position in the stable order along the last dim (int64):
        the elements sorting before it plus the equal ones at lower indices. NaN
        sorts after every number (before, when ``descending``), as in PyTorch.
        O(n^2) comparisons per row, one fused reduction."""
        x = self._sort_key()
        n = x.shape[-1]
        xi, xj = x.unsqueeze(-1), x.unsqueeze(-2)  # [.., i, j]: element i against j
        first = xj > xi if descending else xj < xi
        tie = xj == xi
        if x.dtype.is_float:
            ni, nj = xi.isnan(), xj.isnan()
            first = first | ((nj if descending else ni) & (ni != nj))
            tie = tie | (ni & nj)
        pos = Tensor.arange(n, device=self.device)
        lower = pos.reshape(1, n) < pos.reshape(n, 1)  # j < i
        return (first | (tie & lower)).sum(-1)

    @staticmethod
    def _at_ranks(ranks: Tensor, want: Tensor) -> Tensor:
        """The index (along the last dim) of the element whose rank is each of
        ``want`` (1-d, or of the rows' shape with a last dim): a compare-and-sum."""
        n = ranks.shape[-1]
        pos = Tensor.arange(n, device=ranks.device)
        hit = ranks.unsqueeze(-2) == want.unsqueeze(-1)  # [.., r, i]
        return hit.where(pos, 0).sum(-1)

    def _sorted_part(self, dim, descending: bool, count: int | None, what: str):
        """(values, indices) of the first ``count`` (None: all) elements in sorted
        order along ``dim``."""
        d = _norm_axis(dim, self.ndim, "dim")
        x = self.reshape(1) if self.ndim == 0 else self
        x = x.movedim(d, -1)
        n = x.shape[-1]
        k = n if count is None else count
        ranks = x._ranks(descending)
        idx = Tensor._at_ranks(ranks, Tensor.arange(k, device=self.device))
        vals = x._gather(x.ndim - 1, idx)
        if self.ndim == 0:
            return vals.reshape(()), idx.reshape(())
        return vals.movedim(-1, d), idx.movedim(-1, d)

    @_traced
    def sort(self, dim: int = -1, descending: bool = False, stable: bool = False):
        """``(values, indices)`` sorted along ``dim`` (``.values``/``.indices`` too):
        ``v, i = x.sort()``, ``x.sort(0, descending=True)``.

        Always stable (equal elements keep their order; ``stable`` is accepted
        for PyTorch's signature); NaN sorts as the largest value. Built from
        comparisons so it fuses and stays lazy: each element's rank counts the
        elements before it, O(n^2) work and memory traffic per row of length n
        (fine for rows up to a few thousand)."""
        del stable
        v, i = self._sorted_part(dim, bool(descending), None, "sort")
        return SortResult(v, i)

    @_traced
    def argsort(self, dim: int = -1, descending: bool = False, stable: bool = False):
        """The indices that sort along ``dim`` (stable; O(n^2) per row, see
        :meth:`sort`): ``x.argsort(-1, descending=True)``."""
        return self.sort(dim, descending, stable).indices

    @_traced
    def msort(self) -> Tensor:
        """The values sorted along dim 0: ``x.msort()``."""
        return self.sort(0).values

    @_traced
    def topk(self, k: int, dim: int = -1, largest: bool = True, sorted: bool = True):  # noqa: A002
        """``(values, indices)`` of the ``k`` largest (smallest when ``largest`` is
        False) along ``dim``, in sorted order; ties go to the lower index, NaN
        counts as the largest: ``v, i = x.topk(3)``. O(n^2) work per row (see
        :meth:`sort`)."""
        del sorted
        d = _norm_axis(dim, self.ndim, "dim")
        n = self.shape[d] if self.ndim else 1
        if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or not 0 <= k <= n:
            raise ArgumentError(
                f"topk: k must be an int in 0..{n} (dim {d} of {self.shape}), got {k!r}"
            )
        v, i = self._sorted_part(d, bool(largest), int(k), "topk")
        return SortResult(v, i)

    @_traced
    def kthvalue(self, k: int, dim: int = -1, keepdim: bool = False):
        """``(values, indices)`` of the ``k``-th smallest element (1-based) along
        ``dim``: ``x.kthvalue(2, 0)``. O(n^2) work per row (see :meth:`sort`)."""
        d = _norm_axis(dim, self.ndim, "dim")
        n = self.shape[d] if self.ndim else 1
        if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or not 1 <= k <= n:
            raise ArgumentError(
                f"kthvalue: k must be an int in 1..{n} (dim {d} of {self.shape}), got {k!r}"
            )
        x = self.reshape(1) if self.ndim == 0 else self
        x = x.movedim(d, -1)
        ranks = x._ranks(False)
        idx = Tensor._at_ranks(ranks, Tensor.full((1,), int(k) - 1, device=self.device))
        vals = x._gather(x.ndim - 1, idx)
        return SortResult(*(self._place_reduced(t, d, keepdim) for t in (vals, idx)))

    def _place_reduced(self, t: Tensor, d: int, keepdim: bool) -> Tensor:
        """A (..., 1) result of a row-wise selection back in place of dim ``d``."""
        if self.ndim == 0:
            return t.reshape(())
        t = t.movedim(-1, d)
        return t if keepdim else t.squeeze(d)

    @_traced
    def median(self, dim=None, keepdim: bool = False):
        """The lower median (the ``(n - 1) // 2``-th smallest; NaN if the row holds
        NaN): of all elements without ``dim`` (a value), else ``(values, indices)``
        along it: ``x.median()``, ``v, i = x.median(1)``. O(n^2) work per row."""
        return self._median(dim, keepdim, skip_nan=False)

    @_traced
    def nanmedian(self, dim=None, keepdim: bool = False):
        """:meth:`median` of the values that are not NaN (NaN for a row of NaN):
        ``x.nanmedian()``, ``v, i = x.nanmedian(0)``."""
        return self._median(dim, keepdim, skip_nan=True)

    def _median(self, dim, keepdim: bool, skip_nan: bool):
        if dim is None:
            if self.numel() == 0:
                raise ArgumentError("median of an empty tensor has no value")
            return self.reshape(-1)._median(0, False, skip_nan)[0]
        d = _norm_axis(dim, self.ndim, "dim")
        x = self.reshape(1) if self.ndim == 0 else self
        x = x.movedim(d, -1)
        n = x.shape[-1]
        if n == 0:
            raise ArgumentError(f"median of an empty dim (dim {d} of {self.shape}) has no value")
        ranks = x._ranks(False)
        nan = x.isnan()
        if skip_nan:  # NaN sorts last: the median of the first count values
            count = nan.logical_not().sum(-1, keepdim=True)
            want = ((count - 1) // 2).maximum(0)
        else:
            want = Tensor.full((1,), (n - 1) // 2, device=self.device)
        idx = Tensor._at_ranks(ranks, want)
        vals = x._gather(x.ndim - 1, idx)
        if x.dtype.is_float and not skip_nan:
            has_nan = nan.any(-1, keepdim=True)
            vals = has_nan.where(math.nan, vals)
            idx = has_nan.where(nan.argmax(-1, keepdim=True), idx)
        return SortResult(*(self._place_reduced(t, d, keepdim) for t in (vals, idx)))

    @_traced
    def quantile(self, q, dim=None, keepdim: bool = False, interpolation: str = "linear"):
        """The ``q``-th quantiles (q in [0, 1]: a number, or a 1-d list/tensor whose
        values become a new first dim) of all elements or along ``dim``; between
        two values ``interpolation`` is ``"linear"``, ``"lower"``, ``"higher"``,
        ``"midpoint"`` or ``"nearest"``; NaN in a row gives NaN:
        ``x.quantile(0.5)``, ``x.quantile([0.1, 0.9], dim=1)``. O(n^2) per row."""
        return self._quantile(q, dim, keepdim, interpolation, False)

    @_traced
    def nanquantile(self, q, dim=None, keepdim: bool = False, interpolation: str = "linear"):
        """:meth:`quantile` of the values that are not NaN (NaN where a row has none):
        ``x.nanquantile(0.5, dim=1)``."""
        return self._quantile(q, dim, keepdim, interpolation, True)

    def _quantile(self, q, dim, keepdim: bool, interpolation: str, ignore_nan: bool):
        what = "nanquantile" if ignore_nan else "quantile"
        if not self.dtype.is_float:
            raise DTypeError(f"{what} needs a float tensor, got {self.dtype.name}")
        modes = ("linear", "lower", "higher", "midpoint", "nearest")
        if interpolation not in modes:
            raise ArgumentError(
                f"{what}: interpolation must be one of {', '.join(modes)}, got {interpolation!r}"
            )
        qs = np.asarray(q.numpy() if isinstance(q, Tensor) else q, dtype=np.float64)
        if qs.ndim > 1:
            raise ArgumentError(f"{what}: q must be a number or 1-d, got shape {qs.shape}")
        if qs.size and (np.isnan(qs).any() or qs.min() < 0 or qs.max() > 1):
            raise ArgumentError(f"{what}: q must be in [0, 1], got {qs.tolist()}")
        if dim is None:
            x, d = self.reshape(-1), 0
        else:
            d = _norm_axis(dim, self.ndim, "dim")
            x = self.reshape(1) if self.ndim == 0 else self
        xm = x.movedim(d, -1)
        n = xm.shape[-1]
        if n == 0:
            raise ArgumentError(f"{what} of an empty dim has no value")
        dev = self.device
        nq = qs.size
        if ignore_nan:  # each row's count of numbers sets its positions (NaN ranks last)
            count = xm.isnan().logical_not().sum(-1, keepdim=True).cast(dtypes.float64)
            pos = Tensor(qs.reshape(-1), dtype=dtypes.float64, device=dev) * (count - 1)
            lo, hi = pos.floor(), pos.ceil()
            rnd = pos.round()
        else:
            pos = qs.reshape(-1) * (n - 1)
            lo, hi, rnd = np.floor(pos), np.ceil(pos), np.round(pos)
        w = pos - lo
        if interpolation == "lower":
            hi, w = lo, w * 0
        elif interpolation == "higher":
            lo, w = hi, w * 0
        elif interpolation == "nearest":
            lo = hi = rnd
            w = w * 0
        elif interpolation == "midpoint":
            w = (hi > lo).where(0.5, 0.0) if ignore_nan else np.where(hi > lo, 0.5, 0.0)
        ranks = xm._ranks(False)
        if ignore_nan:
            both = cat([lo, hi], -1).clip(0, n - 1).cast(dtypes.int64)
            w = w.cast(xm.dtype)
        else:
            both = Tensor(np.concatenate([lo, hi]).astype(np.int64), device=dev)
            w = Tensor(w, dtype=xm.dtype, device=dev)
        vals = xm._gather(xm.ndim - 1, Tensor._at_ranks(ranks, both))
        vlo, vhi = vals[..., :nq], vals[..., nq:]
        out = vlo.lerp(vhi, w)
        if ignore_nan:
            out = (count == 0).where(math.nan, out)
        else:
            out = xm.isnan().any(-1, keepdim=True).where(math.nan, out)  # (..., nq)
        out = out.movedim(-1, 0)  # (nq, ...)
        if keepdim and self.ndim:
            out = out.reshape((nq,) + (1,) * self.ndim) if dim is None else out.unsqueeze(d + 1)
        return out.reshape(out.shape[1:]) if qs.ndim == 0 else out

    @_traced
    def searchsorted(
        self, values, out_int32: bool = False, right: bool = False, side=None, sorter=None
    ):
        """Where ``values`` would be inserted into this sorted (last dim) sequence to
        keep it sorted: the count of elements below each value (``<=`` with
        ``right=True`` or ``side="right"``); leading dims of an N-d sequence match
        those of ``values``: ``edges.searchsorted(x)``. O(len * values) compares."""
        if side is not None:
            if side not in ("left", "right"):
                raise ArgumentError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
            if right and side == "left":
                raise ArgumentError("searchsorted: right=True and side='left' contradict")
            right = side == "right"
        if self.ndim == 0:
            raise ArgumentError("searchsorted: the sorted sequence must have at least 1 dim")
        seq = self
        if sorter is not None:
            seq = seq.gather(-1, sorter)
        v = values if isinstance(values, Tensor) else Tensor(values, device=self.device)
        scalar = v.ndim == 0
        if seq.ndim > 1:
            if v.ndim != seq.ndim or v.shape[:-1] != seq.shape[:-1]:
                raise ArgumentError(
                    f"searchsorted: the leading dims of the sequence {seq.shape} and the values "
                    f"{v.shape} must match"
                )
            s = seq.unsqueeze(-2)  # (..., 1, n)
        else:
            s = seq
        a, b = s._sort_key()._operands(v._sort_key().unsqueeze(-1))  # a: sequence, b: values
        if right:  # the elements at or below each value (NaN sorts last)
            below = a <= b
            if a.dtype.is_float:
                below = below | (b.isnan() & a.isnan().logical_not()) | (a.isnan() & b.isnan())
        else:  # the elements below each value
            below = a < b
            if a.dtype.is_float:
                below = below | (b.isnan() & a.isnan().logical_not())
        out = below.sum(-1)
        out = out.cast(dtypes.int32) if out_int32 else out
        return out.reshape(()) if scalar else out

    @_traced
    def bucketize(self, boundaries, out_int32: bool = False, right: bool = False) -> Tensor:
        """The bucket of each element among the sorted 1-d ``boundaries``: ``i`` with
        ``boundaries[i-1] < x <= boundaries[i]`` (``<= x <`` when ``right``):
        ``x.bucketize(edges)``."""
        b = boundaries if isinstance(boundaries, Tensor) else Tensor(boundaries, device=self.device)
        if b.ndim != 1:
            raise ArgumentError(f"bucketize: boundaries must be 1-d, got {b.shape}")
        return b.searchsorted(self, out_int32=out_int32, right=right)

    @_traced
    def bincount(self, weights=None, minlength: int = 0) -> Tensor:
        """How often each value 0..max occurs in this 1-d non-negative integer
        tensor (summing ``weights`` instead when given), at least ``minlength``
        long: ``Tensor([0, 2, 2]).bincount()`` is ``[1, 0, 2]``. The length
        depends on the data (the tensor is computed); the counts are one fused
        compare-and-sum."""
        if self.ndim != 1 or self.dtype.is_float or self.dtype.is_bool:
            raise ArgumentError(
                f"bincount needs a 1-d integer tensor, got {self.dtype.name} {self.shape}"
            )
        if not isinstance(minlength, (int, np.integer)) or minlength < 0:
            raise ArgumentError(
                f"bincount: minlength must be a non-negative int, got {minlength!r}"
            )
        vals = self.numpy()
        if vals.size and vals.min() < 0:
            raise ArgumentError(f"bincount: values must be non-negative, got {int(vals.min())}")
        length = max(int(vals.max()) + 1 if vals.size else 0, int(minlength))
        hit = self.unsqueeze(1) == Tensor.arange(length, device=self.device).cast(self.dtype)
        if weights is None:
            return hit.sum(0)
        w = weights if isinstance(weights, Tensor) else Tensor(weights, device=self.device)
        if w.shape != self.shape:
            raise ArgumentError(
                f"bincount: weights {w.shape} must have the input's shape {self.shape}"
            )
        w = w.cast(dtypes.float32 if w.dtype == dtypes.float32 else dtypes.float64)
        return hit.where(w.unsqueeze(1), 0.0).sum(0)

    @_traced
    def histogram(self, bins=100, *, range=None, weight=None, density: bool = False):  # noqa: A002
        """``(hist, bin_edges)``: :func:`mlfuse.histogram` of this tensor:
        ``h, edges = x.histogram(10)``."""
        from mlfuse.namespace import histogram

        return histogram(self, bins, range=range, weight=weight, density=density)

    def histc(self, bins: int = 100, min=0, max=0) -> Tensor:  # noqa: A002 - PyTorch's names
        """A histogram of ``bins`` equal bins over ``[min, max]`` (both 0: the data's
        range, which computes the tensor); elements outside and NaN are left out,
        ``max`` falls in the last bin: ``x.histc(10, 0.0, 1.0)``."""
        if not self.dtype.is_float:
            raise DTypeError(f"histc needs a float tensor, got {self.dtype.name}")
        if not isinstance(bins, (int, np.integer)) or bins <= 0:
            raise ArgumentError(f"histc: bins must be a positive int, got {bins!r}")
        lo, hi = float(min), float(max)
        if lo == hi and self.numel():
            vals = self.numpy().astype(np.float64)
            lo, hi = float(vals.min()), float(vals.max())
        if lo == hi:
            lo, hi = lo - 1, hi + 1
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise ArgumentError(f"histc: range of [{lo}, {hi}] is not finite")
        if lo > hi:
            raise ArgumentError(f"histc: max ({hi}) must be larger than min ({lo})")
        x = self.double().reshape(-1)
        b = ((x - lo) * (bins / (hi - lo))).floor().minimum(bins - 1)
        inside = (x >= lo) & (x <= hi)
        b = inside.where(b, -1.0).cast(dtypes.int64)
        hit = b.unsqueeze(1) == Tensor.arange(int(bins), device=self.device)
        return hit.sum(0).cast(self.dtype)

    @_traced
    def erfinv(self) -> Tensor:
        """The inverse of :meth:`erf` on (-1, 1) (+-inf at +-1, NaN beyond): Giles'
        single-precision approximation refined by Halley steps (Newton's with the
        curvature term; two, three for float64) on erf, or on erfc near +-1, in
        float64 and rounded once (float32: within 2 ulp): ``x.erfinv()``. The
        gradient is the closed form (first derivatives only)."""

        steps = 3 if self.dtype == dtypes.float64 else 2  # the tail start is off by ~4%

        def f(xg: Tensor) -> Tensor:
            x = xg.detach()  # the steps are not differentiated: the rule below is
            a = x.abs()
            w = -((1 - a) * (1 + a)).log()
            s = w - 2.5
            p = Tensor.full((), 2.81022636e-08, x.dtype, x.device)
            for c in _ERFINV_CENTRAL:
                p = p * s + c
            t = w.maximum(5).sqrt() - 3
            pt = Tensor.full((), -0.000200214257, x.dtype, x.device)
            for c in _ERFINV_TAIL:
                pt = pt * t + c
            y = ((w < 5).where(p, pt) * a).contiguous()
            tail = a > 0.5
            for _ in range(steps):  # erf(y) - a, from erfc where 1 - a is the exact small part
                resid = tail.where((1 - a) - y.erfc(), y.erf() - a)
                slope = (-(y * y)).exp() * (2 / math.sqrt(math.pi))
                # Halley's step (erf'' = -2y erf'); each step its own kernel: inlined
                # into one, the uses of y would multiply the work step by step
                y = (y - resid / (slope + y * resid)).contiguous()
            y = (a == 1).where(math.inf, y)
            return (x < 0).where(-y, (a == 0).where(x, y))

        # d erfinv / dx = sqrt(pi) / 2 * exp(erfinv(x)^2) (differentiating the steps
        # would cost far more)
        return self._in_float64(
            f, "erfinv", lambda x, out: (out * out).exp() * (math.sqrt(math.pi) / 2)
        )

    # -- data-dependent shapes: computed on the host, as x[mask] ----------------------
    def nonzero_static(self, *, size: int, fill_value: int = -1) -> Tensor:
        """:meth:`nonzero` with exactly ``size`` rows (the first ones, then rows of
        ``fill_value``): ``mask.nonzero_static(size=4)``."""
        return self.nonzero(size=size, fill_value=fill_value)

    def nonzero(self, as_tuple: bool = False, size: int | None = None, fill_value=-1):
        """The indices of the non-zero elements, one row per element in row-major
        order (int64, shape (count, ndim)), or a tuple of one index tensor per
        dim when ``as_tuple``: ``x.nonzero()``, ``x[x.nonzero(as_tuple=True)]``.
        The count depends on the data: the tensor is computed. With ``size``
        (tinygrad's, numpy's ``nonzero_static``) there are exactly ``size`` rows:
        the first ones, then rows of ``fill_value``."""
        arr = np.asarray(self.numpy())
        if size is not None:
            if as_tuple:
                raise ArgumentError("nonzero: size= gives one (size, ndim) tensor, not a tuple")
            rows = _fixed_rows(np.argwhere(arr), size, int(fill_value), "nonzero")
            return Tensor(rows.reshape(size, arr.ndim), dtypes.int64, self.device)
        if as_tuple:
            return tuple(
                Tensor(i.astype(np.int64), dtypes.int64, self.device)
                for i in np.nonzero(np.atleast_1d(arr))
            )
        return Tensor(np.argwhere(arr).astype(np.int64), dtypes.int64, self.device)

    def argwhere(self) -> Tensor:
        """As :meth:`nonzero`: ``x.argwhere()``."""
        return self.nonzero()

    @_traced
    def masked_select(self, mask, size: int | None = None, fill_value=0) -> Tensor:
        """The elements where ``mask`` (broadcast with this tensor) is true, as a 1-d
        tensor (the mask is computed; the gradient flows to the selected
        elements): ``x.masked_select(x > 0)``. With ``size`` (tinygrad's) exactly
        ``size`` elements: the first selected ones, then ``fill_value``."""
        m = mask if isinstance(mask, Tensor) else Tensor(mask, device=self.device)
        if not m.dtype.is_bool:
            raise DTypeError(f"masked_select: mask must be a bool tensor, got {m.dtype.name}")
        shape = broadcast_shape(self.shape, m.shape)
        x, m = self._broadcast_to(shape), m._broadcast_to(shape)
        if not shape:
            x, m = x.reshape(1), m.reshape(1)
        if size is not None:
            where = np.flatnonzero(np.asarray(m.reshape(-1).numpy()))
            picks = _fixed_rows(where.reshape(-1, 1), size, -1, "masked_select").reshape(-1)
            if not where.size:
                return Tensor.full((int(size),), fill_value, self.dtype, self.device)
            got = x.reshape(-1)[Tensor(np.maximum(picks, 0), dtypes.int64, self.device)]
            filled = Tensor(picks < 0, dtypes.bool_, self.device)
            return filled.where(Tensor.full((), fill_value, self.dtype, self.device), got)
        return x.reshape(-1)[m.reshape(-1).contiguous()]

    def unique(
        self,
        sorted: bool = True,  # noqa: A002 - PyTorch's names
        return_inverse: bool = False,
        return_counts: bool = False,
        dim: int | None = None,
    ):
        """The distinct values (sorted), or the distinct slices along ``dim``, with
        the index of each element's value (``return_inverse``, the input's shape;
        along ``dim``: one per slice) and how often each occurs (``return_counts``):
        ``x.unique()``, ``vals, inv = x.unique(return_inverse=True)``. The result's
        length depends on the data: the tensor is computed on the host. NaN values
        are each distinct, as in PyTorch."""
        del sorted  # always sorted, as PyTorch on CPUs
        arr = np.asarray(self.numpy())
        axis = None if dim is None else _norm_axis(dim, self.ndim, "dim")
        if axis is None:
            vals, inv, cnt = np.unique(
                arr.reshape(-1), return_inverse=True, return_counts=True, equal_nan=False
            )
            inv = inv.reshape(self.shape)
        else:
            vals, inv, cnt = np.unique(arr, return_inverse=True, return_counts=True, axis=axis)
            inv = inv.reshape(-1)
        out = [Tensor(vals, self.dtype, self.device)]
        if return_inverse:
            out.append(Tensor(inv.astype(np.int64), dtypes.int64, self.device))
        if return_counts:
            out.append(Tensor(cnt.astype(np.int64), dtypes.int64, self.device))
        return out[0] if len(out) == 1 else tuple(out)

    def unique_consecutive(
        self, return_inverse: bool = False, return_counts: bool = False, dim: int | None = None
    ):
        """The values with each run of equal neighbours (in row-major order) kept
        once, optionally with each element's run (``return_inverse``) and the run
        lengths (``return_counts``): ``Tensor([1, 1, 2, 1]).unique_consecutive()`` is
        ``[1, 2, 1]``. With ``dim``, runs of equal slices along ``dim`` are kept
        once. Computed on the host (the length depends on the data)."""
        full = np.asarray(self.numpy())
        if dim is None:
            arr = full.reshape(-1)
            rows = arr.reshape(-1, 1)
        else:
            d = _norm_axis(dim, self.ndim, "dim")
            arr = np.moveaxis(full, d, 0)
            rows = arr.reshape(arr.shape[0], -1)
        start = np.ones(rows.shape[0], dtype=bool)
        start[1:] = (rows[1:] != rows[:-1]).any(axis=1)
        kept = arr[start] if dim is None else np.moveaxis(arr[start], 0, d)
        out = [Tensor(np.ascontiguousarray(kept), self.dtype, self.device)]
        if return_inverse:
            inv = np.cumsum(start) - 1
            inv = inv.reshape(self.shape) if dim is None else inv
            out.append(Tensor(inv.astype(np.int64), dtypes.int64, self.device))
        if return_counts:
            cnt = np.diff(np.append(np.flatnonzero(start), rows.shape[0]))
            out.append(Tensor(cnt.astype(np.int64), dtypes.int64, self.device))
        return out[0] if len(out) == 1 else tuple(out)

    @_traced
    def mode(self, dim: int = -1, keepdim: bool = False):
        """``(values, indices)``: the most frequent value along ``dim`` (the smallest
        of equally frequent ones) and the last index where it occurs, as PyTorch on
        CPUs: ``v, i = x.mode(1)``. Stays lazy: each element counts its equals,
        O(n^2) comparisons per row in one fused reduction."""
        d = _norm_axis(dim, self.ndim, "dim")
        x = self.reshape(1) if self.ndim == 0 else self
        x = x.movedim(d, -1)
        n = x.shape[-1]
        if n == 0:
            raise ArgumentError(f"mode of an empty dim (dim {d} of {self.shape}) has no value")
        k = x._sort_key()
        count = (k.unsqueeze(-1) == k.unsqueeze(-2)).sum(-1)  # [.., i]: equals of element i
        best = count == count.max(-1, keepdim=True)
        value = best.where(k, Tensor.full((), _highest(k.dtype), k.dtype, k.device))
        value = value.min(-1, keepdim=True)
        pos = Tensor.arange(n, device=self.device)
        idx = (k == value).where(pos, -1).max(-1, keepdim=True)
        vals = x._gather(x.ndim - 1, idx)
        return SortResult(*(self._place_reduced(t, d, keepdim) for t in (vals, idx)))

    @staticmethod
    def einsum(equation: str, *operands) -> Tensor:
        """:func:`mlfuse.einsum` (tinygrad's spelling): ``Tensor.einsum("ij,jk->ik", a, b)``."""
        return einsum(equation, *operands)

    # -- PyTorch's method names for the operators ------------------------------------
    def add(self, other, alpha=1) -> Tensor:
        """``self + alpha * other``: ``x.add(y)``, ``x.add(y, alpha=-0.5)``."""
        return self + (other * alpha if alpha != 1 else other)

    def sub(self, other, alpha=1) -> Tensor:
        """``self - alpha * other``: ``x.sub(y)``."""
        return self - (other * alpha if alpha != 1 else other)

    def mul(self, other) -> Tensor:
        """``self * other``: ``x.mul(2)``."""
        return self * other

    def div(self, other, rounding_mode: str | None = None) -> Tensor:
        """``self / other`` (true division), or rounded toward zero
        (``rounding_mode="trunc"``) or down (``"floor"``) in the operands' dtype:
        ``x.div(y)``, ``x.div(3, rounding_mode="floor")``."""
        if rounding_mode is None:
            return self / other
        if rounding_mode == "floor":
            return self // other
        if rounding_mode == "trunc":
            a, b = self._operands(other)
            if a.dtype.is_float:
                return (a / b).trunc()
            q = a // b
            return ((q < 0) & (q * b != a)).where(q + 1, q)
        raise ArgumentError(
            f"div: rounding_mode must be None, 'trunc' or 'floor', got {rounding_mode!r}"
        )

    def true_divide(self, other) -> Tensor:
        """``self / other`` in floats: ``x.true_divide(2)``."""
        return self / other

    def floor_divide(self, other) -> Tensor:
        """``self // other``: ``x.floor_divide(2)``."""
        return self // other

    def eq(self, other) -> Tensor:
        """``self == other`` elementwise: ``x.eq(0)``."""
        return self == other

    def ne(self, other) -> Tensor:
        """``self != other`` elementwise: ``x.ne(0)``."""
        return self != other

    def lt(self, other) -> Tensor:
        """``self < other`` elementwise: ``x.lt(y)``."""
        return self < other

    def le(self, other) -> Tensor:
        """``self <= other`` elementwise: ``x.le(y)``."""
        return self <= other

    def gt(self, other) -> Tensor:
        """``self > other`` elementwise: ``x.gt(y)``."""
        return self > other

    def ge(self, other) -> Tensor:
        """``self >= other`` elementwise: ``x.ge(y)``."""
        return self >= other

    greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne

    def absolute(self) -> Tensor:
        """``|x|``: ``x.absolute()``."""
        return self.abs()

    def clamp_min(self, min) -> Tensor:  # noqa: A002 - PyTorch's names
        """``max(x, min)``: ``x.clamp_min(0)``."""
        return self.clip(min, None)

    def clamp_max(self, max) -> Tensor:  # noqa: A002 - PyTorch's names
        """``min(x, max)``: ``x.clamp_max(6)``."""
        return self.clip(None, max)

    @_traced
    def log10(self) -> Tensor:
        """Base-10 logarithm: ``x.log10()``."""
        return self._float().log2() * (math.log(2) / math.log(10))

    @_traced
    def xlogy(self, other) -> Tensor:
        """``self * log(other)``, 0 where self is 0 (NaN other stays NaN):
        ``p.xlogy(q)``."""
        a, b = self._operands(other)  # promoted first: int with float16 is float16
        a, b = a._float(), b._float()
        return ((a == 0) & b.isnan().logical_not()).where(0.0, a * b.log())

    def igamma(self, other) -> Tensor:
        """The regularized lower incomplete gamma function P(self, other)
        (``mlfuse.special.gammainc``): ``a.igamma(x)``."""
        from mlfuse import special

        return special.gammainc(self, other)

    def igammac(self, other) -> Tensor:
        """The regularized upper incomplete gamma function Q(self, other)
        (``mlfuse.special.gammaincc``): ``a.igammac(x)``."""
        from mlfuse import special

        return special.gammaincc(self, other)

    def igamma_(self, other) -> Tensor:
        """:meth:`igamma` written into this tensor: ``a.igamma_(x)``."""
        return self.assign(self.igamma(other).cast(self.dtype))

    def igammac_(self, other) -> Tensor:
        """:meth:`igammac` written into this tensor: ``a.igammac_(x)``."""
        return self.assign(self.igammac(other).cast(self.dtype))

    @_traced
    def copysign(self, other) -> Tensor:
        """``|self|`` with the sign of ``other`` (-0.0 counts as negative):
        ``x.copysign(y)``."""
        a, b = self._operands(other)  # promoted first: int with float16 is float16
        a, b = a._float(), b._float()
        out = b.signbit().where(-a.abs(), a.abs())

        def rule(c, g):  # PyTorch's: out / a where a is not 0; none flows to the sign
            x, y = c.srcs
            return ((x == 0).where(0.0, g * (c.out / x)), y.zeros_like())

        return _derivative("copysign", out, (a, b), rule)

    @_traced
    def signbit(self) -> Tensor:
        """True where the sign bit is set (negative numbers, -0.0): ``x.signbit()``."""
        if not self.dtype.is_float:
            return self < 0 if not self.dtype.is_bool else self & False
        return (self < 0) | ((self == 0) & (self.reciprocal() < 0))

    def dim(self) -> int:
        """The number of dims: ``x.dim()``."""
        return self.ndim

    def is_floating_point(self) -> bool:
        """Whether the dtype is a float: ``x.is_floating_point()``."""
        return self.dtype.is_float

    # -- more of PyTorch's methods: flips, NaN-aware extrema, special functions ---------
    def fliplr(self) -> Tensor:
        """Reverse dim 1 (of a tensor of at least 2 dims): ``x.fliplr()``."""
        if self.ndim < 2:
            raise ArgumentError(f"fliplr needs at least 2 dims, the tensor has shape {self.shape}")
        return self.flip(1)

    def flipud(self) -> Tensor:
        """Reverse dim 0 (of a tensor of at least 1 dim): ``x.flipud()``."""
        if self.ndim < 1:
            raise ArgumentError("flipud needs at least 1 dim, the tensor is 0-d")
        return self.flip(0)

    @_traced
    def fmax(self, other) -> Tensor:
        """Elementwise maximum ignoring NaN (NaN only where both are): ``a.fmax(b)``."""
        a, b = self._operands(other)
        if not a.dtype.is_float:
            return a.maximum(b)
        return a.isnan().where(b, b.isnan().where(a, a.maximum(b)))

    @_traced
    def fmin(self, other) -> Tensor:
        """Elementwise minimum ignoring NaN (NaN only where both are): ``a.fmin(b)``."""
        a, b = self._operands(other)
        if not a.dtype.is_float:
            return a.minimum(b)
        return a.isnan().where(b, b.isnan().where(a, a.minimum(b)))

    @_traced
    def heaviside(self, values) -> Tensor:
        """The step function: 0 below zero, 1 above, ``values`` at zero:
        ``x.heaviside(Tensor(0.5))``."""
        a, v = self._operands(values)
        one = (a > 0).cast(a.dtype)
        return (a == 0).where(v, one)

    def isposinf(self) -> Tensor:
        """True at +inf: ``x.isposinf()``."""
        return self.isinf(detect_negative=False)

    def isneginf(self) -> Tensor:
        """True at -inf: ``x.isneginf()``."""
        return self.isinf(detect_positive=False)

    def isreal(self) -> Tensor:
        """True everywhere (a real tensor; complex tensors are ComplexTensor): ``x.isreal()``."""
        return Tensor.full(self.shape, True, dtypes.bool_, self.device)

    @_traced
    def sinc(self) -> Tensor:
        """The normalized sinc, ``sin(pi x) / (pi x)``, 1 at 0 (gradient 0 there):
        ``x.sinc()``."""
        x = self._float()
        zero = x == 0
        px = zero.where(1.0, x * math.pi)  # 1 at 0: neither value nor gradient is 0/0
        return zero.where(1.0, px.sin() / px)

    @_traced
    def ldexp(self, other) -> Tensor:
        """``self * 2 ** other``, in floats: ``m.ldexp(Tensor([3]))``."""
        x, e = self._float()._operands(other)
        x = x._float()
        return x * e.cast(x.dtype).exp2()

    @_traced
    def lgamma(self) -> Tensor:
        """``log|Gamma(x)|``, in float64: the Taylor series of ``lgamma(2 + z)`` (the
        coefficients from zeta) for x in [0.5, 2.5), with ``lgamma(x + 1) - log1p(x - 1)``
        below 1.5, so the zeros at 1 and 2 keep their relative accuracy; Lanczos'
        approximation (g = 7, 9 terms) from 2.5 up; the reflection
        ``log(pi / |sin(pi x)|) - lgamma(1 - x)`` below 0.5, with ``sin`` of the distance
        to the nearest integer; ``-log|x|`` for tiny x; +inf at 0 and the negative
        integers: ``x.lgamma()``. Its gradient is digamma (the closed form: the
        branches' clamps and ``where``s would split or lose it)."""
        return self._in_float64(_lgamma64, "lgamma", lambda x, out: x.digamma())

    @_traced
    def digamma(self) -> Tensor:
        """The logarithmic derivative of Gamma: the recurrence ``psi(x) = psi(x + 6)
        - sum 1/(x + k)`` then the asymptotic series; the reflection
        ``psi(1 - x) - pi / tan(pi x)`` below 0.5; -inf at +0, +inf at -0 and NaN at the
        negative integers, as PyTorch: ``x.digamma()``."""
        x = self._float()
        refl = x < 0.5
        y = refl.where(1 - x, x)
        shift = Tensor.zeros((), dtype=x.dtype, device=x.device)
        for k in range(10):
            shift = shift + 1 / (y + k)
        w = y + 10
        inv2 = 1 / (w * w)
        series = Tensor.full((), _DIGAMMA_SERIES[-1], x.dtype, x.device)
        for c in reversed(_DIGAMMA_SERIES[:-1]):  # sum B_2k / (2k w^2k), to w^-14
            series = series * inv2 + c
        psi = w.log() - 0.5 / w - series * inv2 - shift
        r = x - x.round()  # tan(pi x) has period 1: reduce to [-0.5, 0.5]
        out = refl.where(psi - math.pi / (r * math.pi).tan(), psi)
        out = (x == 0).where(x.signbit().where(math.inf, -math.inf), out)  # PyTorch's signs
        out = ((x < 0) & (x == x.floor())).where(math.nan, out)
        # the gradient is trigamma (differentiating the reflection's tan gives NaN
        # at the integers, where it is not taken)
        return _derivative("digamma", out, (x,), lambda c, g: (g * c.x.polygamma(1),))

    @_traced
    def polygamma(self, n: int) -> Tensor:
        """The ``n``-th derivative of digamma (``n = 0`` is digamma; ``n >= 1`` by the
        recurrence then the asymptotic series, for ``x > 0``):
        ``x.polygamma(1)``."""
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise ArgumentError(f"polygamma: n must be a non-negative int, got {n!r}")
        if n == 0:
            return self.digamma()
        x = self._float()
        fact = math.factorial(n)
        sign = 1.0 if n % 2 else -1.0  # (-1)^(n+1)
        shift = Tensor.zeros((), dtype=x.dtype, device=x.device)
        for k in range(10):
            shift = shift + (x + k) ** -(n + 1)
        w = x + 10
        # psi^(n)(w) ~ (-1)^(n+1) [(n-1)!/w^n + n!/(2 w^(n+1))
        #                          + sum_k B_2k (2k+n-1)!/((2k)! w^(2k+n))]
        tail = math.factorial(n - 1) / w**n + fact / (2 * w ** (n + 1))
        for k, b in enumerate(_BERNOULLI_2K, start=1):
            tail = tail + b * math.factorial(2 * k + n - 1) / math.factorial(2 * k) / w ** (
                2 * k + n
            )
        out = sign * (tail + fact * shift)
        return ((x <= 0) & (x == x.floor())).where(math.inf if n % 2 else math.nan, out)

    @_traced
    def mvlgamma(self, p: int) -> Tensor:
        """The multivariate log-gamma of dimension ``p``:
        ``p(p-1)/4 log(pi) + sum_j lgamma(x - j/2)``; ``x`` must exceed ``(p-1)/2``:
        ``x.mvlgamma(2)``."""
        if isinstance(p, bool) or not isinstance(p, (int, np.integer)) or p < 1:
            raise ArgumentError(f"mvlgamma: p must be a positive int, got {p!r}")
        x = self._float()
        if x.node.realized and x.numel() and not (x.numpy() > (p - 1) / 2).all():
            raise ArgumentError(
                f"mvlgamma: all elements must be greater than (p-1)/2 = {(p - 1) / 2}"
            )
        out = x.lgamma()
        for j in range(1, p):
            out = out + (x - j / 2).lgamma()
        return out + p * (p - 1) / 4 * math.log(math.pi)

    @_traced
    def i0(self) -> Tensor:
        """The modified Bessel function of the first kind, order 0: the power series
        ``sum ((x/2)^k / k!)^2`` up to ``|x| = 15``, the asymptotic series
        ``e^|x| / sqrt(2 pi |x|) (1 + 1/(8|x|) + 9/(128 x^2) + ...)`` above
        (relative error below 1e-7): ``x.i0()``."""
        x = self._float()
        a = x.abs()
        small = a <= 15
        q = small.where(a, 0.0) ** 2 * 0.25
        term = Tensor.ones((), dtype=x.dtype, device=x.device)
        total = term
        for k in range(1, 60):
            term = term * q / (k * k)
            total = total + term
        big = small.where(20.0, a)
        inv = 1 / big
        corr = Tensor.ones((), dtype=x.dtype, device=x.device)
        c = 1.0
        for k in range(1, 12):
            c *= (2 * k - 1) ** 2 / (8 * k)
            corr = corr + c * inv**k
        half = (big * 0.5).exp()  # e^a as two factors: inf, not inf / inf, past the overflow
        asym = half / (math.sqrt(2 * math.pi) * big.sqrt()) * half * corr
        return small.where(total, asym)

    def aminmax(self, *, dim=None, keepdim: bool = False):
        """``(min, max)`` along ``dim`` (or of all elements), as PyTorch's named tuple:
        ``lo, hi = x.aminmax()``."""
        return MinMaxResult(self.amin(dim, keepdim), self.amax(dim, keepdim))

    @_traced
    def addr(self, vec1, vec2, *, beta=1, alpha=1) -> Tensor:
        """``beta * self + alpha * outer(vec1, vec2)``: ``m.addr(u, v)``."""
        v1 = vec1 if isinstance(vec1, Tensor) else Tensor(vec1, device=self.device)
        if v1.ndim != 1 or not isinstance(vec2, Tensor) or vec2.ndim != 1:
            raise ArgumentError("addr: vec1 and vec2 must be 1-d tensors")
        return self._scaled_sum(v1.outer(vec2), beta, alpha)

    @_traced
    def addbmm(self, batch1, batch2, *, beta=1, alpha=1) -> Tensor:
        """``beta * self + alpha * sum_b(batch1[b] @ batch2[b])``: ``c.addbmm(a, b)``."""
        b1 = batch1 if isinstance(batch1, Tensor) else Tensor(batch1, device=self.device)
        prod = b1.bmm(batch2)
        return self._scaled_sum(prod.sum(0).cast(prod.dtype), beta, alpha)

    @_traced
    def diag_embed(self, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
        """Matrices whose diagonal (``offset`` from the main one) holds the last dim,
        placed at dims ``dim1`` and ``dim2`` of the result: ``v.diag_embed()``."""
        if self.ndim < 1:
            raise ArgumentError("diag_embed needs at least 1 dim, the tensor is 0-d")
        nd = self.ndim + 1
        d1, d2 = _norm_axis(dim1, nd, "dim1"), _norm_axis(dim2, nd, "dim2")
        if d1 == d2:
            raise ArgumentError(f"diag_embed: dim1 and dim2 are both dim {d1}")
        n = self.shape[-1] + abs(offset)
        k = self.shape[-1]
        rows = Tensor.arange(n, device=self.device).reshape(n, 1)
        cols = Tensor.arange(n, device=self.device).reshape(1, n)
        hit = cols - rows == offset  # (n, n)
        pos = rows if offset >= 0 else cols  # which element of the vector lands there
        v = self.unsqueeze(-1).unsqueeze(-1)  # (..., k, 1, 1)
        ks = Tensor.arange(k, device=self.device).reshape(k, 1, 1)
        picked = ((ks == pos.reshape(1, *pos.shape)) & hit.reshape(1, n, n)).where(v, 0)
        m = picked.sum(-3).cast(self.dtype)  # (..., n, n)
        # move the two new dims (last two) to dim1 and dim2
        lo, hi = (d1, d2) if d1 < d2 else (d2, d1)
        order = [i for i in range(self.ndim - 1)]
        perm: list[int] = []
        it = iter(order)
        for i in range(nd):
            if i == lo:
                perm.append(nd - 2 if d1 < d2 else nd - 1)
            elif i == hi:
                perm.append(nd - 1 if d1 < d2 else nd - 2)
            else:
                perm.append(next(it))
        return m.permute(perm)

    def diagflat(self, offset: int = 0) -> Tensor:
        """A square matrix with the flattened input on diagonal ``offset``:
        ``v.diagflat(1)``."""
        return self.reshape(-1).diag_embed(offset)

    @_traced
    def dist(self, other, p=2) -> Tensor:
        """The ``p``-norm of ``self - other`` (broadcast): ``a.dist(b)``."""
        d = self - other
        return d.reshape(-1).norm(p)

    @_traced
    def cov(self, *, correction: int = 1, fweights=None, aweights=None) -> Tensor:
        """The covariance matrix of the variables in the rows (a 1-d input is one
        variable), observations in the columns, optionally weighted by integer
        frequencies ``fweights`` and observation weights ``aweights`` (numpy's
        ``cov``): ``x.cov()``."""
        if self.ndim > 2:
            raise ArgumentError(f"cov needs a 1-d or 2-d input, got shape {self.shape}")
        x = self._float()
        x = x.reshape(1, -1) if x.ndim < 2 else x
        n = x.shape[1]
        w = None
        for name, wt in (("fweights", fweights), ("aweights", aweights)):
            if wt is None:
                continue
            wt = wt if isinstance(wt, Tensor) else Tensor(wt, device=self.device)
            if wt.ndim != 1 or wt.shape[0] != n:
                raise ArgumentError(
                    f"cov: {name} must be 1-d with one weight per observation ({n}), got "
                    f"shape {wt.shape}"
                )
            if name == "fweights" and wt.dtype.is_float:
                raise DTypeError("cov: fweights must be integers")
            if wt.node.realized and bool((wt < 0).any().item()):
                raise ArgumentError(f"cov: {name} cannot be negative")
            wt = wt.cast(x.dtype)
            w = wt if w is None else w * wt
        if w is None:
            mean = x.mean(1, keepdim=True)
            xc = x - mean
            norm = n - correction
            c = (xc @ xc.T) / norm
        else:
            wsum = w.sum()
            mean = (x * w).sum(1, keepdim=True) / wsum
            xc = x - mean
            if aweights is None or correction == 0:
                norm = wsum - correction
            else:
                aw = aweights if isinstance(aweights, Tensor) else Tensor(aweights)
                norm = wsum - correction * (w * aw.cast(x.dtype)).sum() / wsum
            c = ((xc * w) @ xc.T) / norm.maximum(0.0)
        return c.reshape(()) if x.shape[0] == 1 else c  # one variable: 0-d, as PyTorch

    @_traced
    def corrcoef(self) -> Tensor:
        """Pearson correlation coefficients of the rows (clipped to [-1, 1]):
        ``x.corrcoef()``."""
        c = self.cov()
        if c.ndim == 0:
            return c / c
        d = c.diagonal().sqrt()
        return (c / d.reshape(-1, 1) / d.reshape(1, -1)).clip(-1, 1)

    # -- more of PyTorch's indexing and scattering methods -----------------------------
    def take(self, index) -> Tensor:
        """Elements at flat (row-major) positions ``index``, in its shape:
        ``x.take(Tensor([0, 5]))``."""
        return self.reshape(-1)[_index_tensor(index, self.device)]

    def select(self, dim: int, index: int) -> Tensor:
        """The slice at ``index`` along ``dim``, that dim removed (a view):
        ``x.select(1, 0)`` is ``x[:, 0]``."""
        d = _norm_axis(dim, self.ndim, "dim")
        return self[(slice(None),) * d + (index,)]

    def _scatter_view(self, src, key, what: str) -> Tensor:
        """A copy of this tensor with ``src`` written at ``self[key]``."""
        view = self[key]
        s = src if isinstance(src, Tensor) else Tensor(src, self.dtype, self.device)
        if s.shape != view.shape:
            raise ArgumentError(f"{what}: src has shape {s.shape}, the slice {view.shape}")
        out = self.clone()
        out[key] = s.cast(self.dtype)
        return out

    def select_scatter(self, src, dim: int, index: int) -> Tensor:
        """A copy with ``src`` written at ``self.select(dim, index)``:
        ``x.select_scatter(row, 0, 2)``."""
        d = _norm_axis(dim, self.ndim, "dim")
        return self._scatter_view(src, (slice(None),) * d + (index,), "select_scatter")

    def slice_scatter(self, src, dim: int = 0, start=None, end=None, step: int = 1) -> Tensor:
        """A copy with ``src`` written at ``start:end:step`` along ``dim``:
        ``x.slice_scatter(z, 1, 0, 4, 2)``."""
        d = _norm_axis(dim, self.ndim, "dim")
        key = (slice(None),) * d + (slice(start, end, step),)
        return self._scatter_view(src, key, "slice_scatter")

    @_traced
    def diagonal_scatter(self, src, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
        """A copy with ``src`` written on the diagonal ``self.diagonal(offset, dim1,
        dim2)``: ``m.diagonal_scatter(v)``."""
        diag = self.diagonal(offset, dim1, dim2)
        s = src if isinstance(src, Tensor) else Tensor(src, self.dtype, self.device)
        if s.shape != diag.shape:
            raise ArgumentError(
                f"diagonal_scatter: src has shape {s.shape}, the diagonal {diag.shape}"
            )
        d1, d2 = _norm_axis(dim1, self.ndim, "dim1"), _norm_axis(dim2, self.ndim, "dim2")
        n1, n2, m = self.shape[d1], self.shape[d2], diag.shape[-1]
        dev = self.device
        r = Tensor.arange(n1, device=dev).reshape(n1, 1)
        c = Tensor.arange(n2, device=dev).reshape(1, n2)
        hit = c - r == offset  # (n1, n2): on the diagonal
        # element (i, j) of the diagonal is src's entry i (offset >= 0) or j (below)
        along = r.reshape(1, n1, 1) if offset >= 0 else c.reshape(1, 1, n2)
        pick = (Tensor.arange(m, device=dev).reshape(m, 1, 1) == along) & hit
        spread = pick.where(s.unsqueeze(-1).unsqueeze(-1), 0).sum(-3).cast(self.dtype)
        # spread's dims are (the other dims..., dim1, dim2): put them back in place
        order = [i for i in range(self.ndim) if i not in (d1, d2)] + [d1, d2]
        spread = spread.permute([order.index(i) for i in range(self.ndim)])
        shape = [1] * self.ndim
        shape[d1], shape[d2] = n1, n2
        mask = (hit if d1 < d2 else hit.T).reshape(shape)
        return mask.where(spread, self)

    @_traced
    def masked_scatter(self, mask, source) -> Tensor:
        """A copy with the elements of ``source`` (in row-major order) written where
        ``mask`` is true; the tensor and the mask broadcast together:
        ``x.masked_scatter(x > 0, src)``."""
        m = mask if isinstance(mask, Tensor) else Tensor(mask, device=self.device)
        if not m.dtype.is_bool:
            raise DTypeError(f"masked_scatter: mask must be bool, got {m.dtype.name}")
        shape = broadcast_shape(self.shape, m.shape)
        if shape != self.shape:
            return self._broadcast_to(shape).masked_scatter(m, source)
        s = source if isinstance(source, Tensor) else Tensor(source, self.dtype, self.device)
        mf = m._broadcast_to(shape).reshape(-1)
        if m.node.realized:
            picked = int(np.broadcast_to(m.numpy(), shape).sum())
            if s.numel() < picked:
                raise ArgumentError(
                    f"masked_scatter: the mask selects {picked} elements, source has only "
                    f"{s.numel()}"
                )
        if s.numel() == 0:
            return self
        at = (mf.cast(dtypes.int64).cumsum(0) - 1).clip(0, s.numel() - 1)
        vals = s.reshape(-1).cast(self.dtype)[at]
        return mf.where(vals, self.reshape(-1)).reshape(self.shape)

    @_traced
    def index_reduce(
        self, dim: int, index, source, reduce: str, *, include_self: bool = True
    ) -> Tensor:
        """Rows of ``source`` combined into the rows ``index`` names along ``dim`` by
        ``reduce`` (``"prod"``, ``"mean"``, ``"amax"``, ``"amin"``):
        ``x.index_reduce(0, idx, src, "amax")``."""
        if reduce not in ("prod", "mean", "amax", "amin"):
            raise ArgumentError(
                f"index_reduce: reduce must be 'prod', 'mean', 'amax' or 'amin', got {reduce!r}"
            )
        s = source if isinstance(source, Tensor) else Tensor(source, self.dtype, self.device)
        if self.ndim == 0:  # a 0-d input has one entry, along dim 0 or -1
            _norm_axis(dim, 1, "dim")
            idx = _index_tensor(index, self.device).reshape(-1)
            out = self.reshape(1).index_reduce(
                0, idx, s.reshape(-1), reduce, include_self=include_self
            )
            return out.reshape(())
        d = _norm_axis(dim, self.ndim, "dim")
        idx = _index_tensor(index, self.device)
        if idx.ndim != 1 or s.ndim != self.ndim or s.shape[d] != idx.shape[0]:
            raise ArgumentError(
                f"index_reduce: index must be 1-d with one entry per slice of source along "
                f"dim {d}; got index {idx.shape}, source {s.shape}"
            )
        if any(a != b for k, (a, b) in enumerate(zip(s.shape, self.shape)) if k != d):
            raise ArgumentError(
                f"index_reduce: source {s.shape} must match the input {self.shape} off dim {d}"
            )
        shape = [1] * self.ndim
        shape[d] = idx.shape[0]
        full = idx.reshape(shape)._broadcast_to(s.shape)
        return self.scatter_reduce(d, full, s, reduce, include_self=include_self)

    def matrix_power(self, n: int) -> Tensor:
        """The ``n``-th power of square matrices (the last two dims) by repeated
        squaring; ``n = 0`` gives identities: ``m.matrix_power(3)``."""
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
            raise TypeError(f"matrix_power: n must be an int, got {type(n).__name__}")
        if self.ndim < 2 or self.shape[-1] != self.shape[-2]:
            raise ArgumentError(f"matrix_power needs square matrices, got shape {self.shape}")
        if n < 0:
            return self.inverse().matrix_power(-n)
        k = self.shape[-1]
        result = None
        base = self
        while n:
            if n & 1:
                result = base if result is None else result @ base
            n >>= 1
            if n:
                base = base @ base
        if result is None:
            return Tensor.eye(k, dtype=self.dtype, device=self.device)._broadcast_to(self.shape)
        return result

    # -- tinygrad's shape helpers -----------------------------------------------------
    def _target_shape(self, shape, what: str) -> tuple:
        want = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        want = tuple(want)
        if len(want) != self.ndim:
            raise ArgumentError(f"{what}: {len(want)} sizes for a tensor of shape {self.shape}")
        return tuple(s if w is None else w for w, s in zip(want, self.shape))

    def shrink_to(self, *shape) -> Tensor:
        """The leading ``shape`` corner (None keeps a dim; a view): ``x.shrink_to(2, None)``."""
        want = self._target_shape(shape, "shrink_to")
        if any(w > s or w < 0 for w, s in zip(want, self.shape)):
            raise ArgumentError(f"shrink_to: {want} does not fit in {self.shape}")
        return self.shrink(tuple((0, w) for w in want))

    def pad_to(self, *shape, value=0) -> Tensor:
        """Padded at the end of each dim to ``shape`` with ``value`` (None keeps a
        dim): ``x.pad_to(4, 8)``."""
        want = self._target_shape(shape, "pad_to")
        if any(w < s for w, s in zip(want, self.shape)):
            raise ArgumentError(f"pad_to: {want} is smaller than the tensor's {self.shape}")
        if want == self.shape:
            return self
        return self.pad(tuple((0, w - s) for w, s in zip(want, self.shape)), value)

    @staticmethod
    def randperm(n: int, *, dtype=None, device=None, seed: int | Generator | None = None) -> Tensor:
        """A random permutation of ``0..n-1`` (int64): ``Tensor.randperm(5)``."""
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise ArgumentError(f"randperm: n must be a non-negative int, got {n!r}")
        return _random(lambda g: g.permutation(int(n)), dtype or dtypes.int64, device, seed=seed)

    @staticmethod
    def manual_seed(seed: int = 0) -> None:
        """tinygrad's spelling of :func:`mlfuse.manual_seed`: ``Tensor.manual_seed(0)``."""
        manual_seed(seed)

    # -- linear algebra (mlfuse.linalg: LAPACK on the host) ----------------------------
    def det(self) -> Tensor:
        """The determinants of square matrices: ``a.det()`` (see :mod:`mlfuse.linalg`)."""
        from mlfuse import linalg

        return linalg.det(self)

    def logdet(self) -> Tensor:
        """``log(det)`` (NaN for a negative determinant): ``a.logdet()``."""
        from mlfuse import linalg

        return linalg.logdet(self)

    def slogdet(self):
        """``(sign, log|det|)``: ``sign, logabs = a.slogdet()``."""
        from mlfuse import linalg

        return linalg.slogdet(self)

    def inverse(self) -> Tensor:
        """The inverses of square matrices: ``a.inverse()``."""
        from mlfuse import linalg

        return linalg.inv(self)

    def cholesky(self, upper: bool = False) -> Tensor:
        """The Cholesky factor of symmetric positive-definite matrices: ``a.cholesky()``."""
        from mlfuse import linalg

        return linalg.cholesky(self, upper=upper)

    def qr(self, some: bool = True):
        """``(Q, R)``, reduced unless ``some=False``: ``q, r = a.qr()``."""
        from mlfuse import linalg

        return linalg.qr(self, "reduced" if some else "complete")

    def svd(self, some: bool = True, compute_uv: bool = True):
        """PyTorch's ``Tensor.svd``: ``(U, S, V)`` with ``a = U diag(S) V^T`` (V, not
        Vh): ``u, s, v = a.svd()``."""
        from mlfuse import linalg

        if not compute_uv:
            s = linalg.svdvals(self)
            m, n = self.shape[-2:]
            u = Tensor.zeros(*self.shape[:-2], m, m if not some else min(m, n), dtype=self.dtype)
            v = Tensor.zeros(*self.shape[:-2], n, n if not some else min(m, n), dtype=self.dtype)
            return linalg.SVDResult(u, s, v)
        u, s, vh = linalg.svd(self, full_matrices=not some)
        return linalg.SVDResult(u, s, vh.mT)

    def pinverse(self, rcond: float = 1e-15) -> Tensor:
        """The pseudo-inverse: ``a.pinverse()``."""
        from mlfuse import linalg

        return linalg.pinv(self, rtol=rcond)

    def cholesky_solve(self, input2: Tensor, upper: bool = False) -> Tensor:
        """``X`` with ``(L L^T) X = self`` for the Cholesky factor ``input2``:
        ``b.cholesky_solve(L)``."""
        from mlfuse import linalg

        lo = input2.mT if upper else input2
        return linalg.solve(lo @ lo.mT, self)

    def cholesky_inverse(self, upper: bool = False) -> Tensor:
        """The inverse of ``L L^T`` from its Cholesky factor: ``L.cholesky_inverse()``."""
        from mlfuse import linalg

        lo = self.mT if upper else self
        return linalg.inv(lo @ lo.mT)

    def lu(self, pivot: bool = True, get_infos: bool = False):
        """The packed LU factors and 1-based pivots (``torch.lu``; a singular matrix
        is factored, not refused; ``get_infos`` adds getrf's info):
        ``LU, pivots = a.lu()``."""
        from mlfuse import linalg

        r = linalg.lu_factor_ex(self, pivot=pivot)
        return (r.LU, r.pivots, r.info) if get_infos else (r.LU, r.pivots)

    def lu_solve(self, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:  # noqa: N803 - PyTorch's
        """``X`` with ``A X = self`` from ``A``'s factors :meth:`lu` gave:
        ``b.lu_solve(*a.lu())``."""
        from mlfuse import linalg

        return linalg.lu_solve(LU_data, LU_pivots, self)

    def triangular_solve(
        self, A: Tensor, upper: bool = True, transpose: bool = False, unitriangular: bool = False
    ):  # noqa: N803 - PyTorch's name
        """``(X, A)`` with ``A X = self`` for triangular ``A`` (``torch.triangular_solve``;
        ``transpose`` solves with ``A^T``): ``x, _ = b.triangular_solve(a)``."""
        from mlfuse import linalg

        return linalg.triangular_solve(self, A, upper, transpose, unitriangular)

    def matrix_exp(self) -> Tensor:
        """The matrix exponential (see :func:`mlfuse.linalg.matrix_exp`): ``a.matrix_exp()``."""
        from mlfuse import linalg

        return linalg.matrix_exp(self)

    # -- integer and float bit-level functions ----------------------------------------
    @_traced
    def gcd(self, other) -> Tensor:
        """The greatest common divisor (non-negative; gcd(0, 0) is 0) of integers:
        Euclid's algorithm unrolled to the dtype's worst case (a fixed chain of
        selects, one kernel): ``a.gcd(b)``."""
        a, b = self._operands(other)
        if not a.dtype.is_int:
            raise DTypeError(f"gcd needs integer tensors, got {a.dtype.name}")
        a, b = a.abs(), b.abs()
        steps = {1: 13, 2: 24, 4: 47, 8: 93}[a.dtype.itemsize]  # Fibonacci bound on the steps
        for _ in range(steps):
            live = b != 0
            safe = live.where(b, 1)
            a, b = live.where(b, a), live.where(a % safe, 0)
        return a

    @_traced
    def lcm(self, other) -> Tensor:
        """The least common multiple (non-negative; 0 when either is 0): ``a.lcm(b)``."""
        a, b = self._operands(other)
        g = a.gcd(b)
        return (g == 0).where(0, (a // (g == 0).where(1, g) * b).abs())

    def frexp(self):
        """``(mantissa, exponent)`` with ``self = mantissa * 2**exponent``, the
        mantissa's magnitude in [0.5, 1) (0, inf and NaN keep themselves, exponent 0),
        from the bits: ``m, e = x.frexp()``."""
        if not self.dtype.is_float:
            raise DTypeError(f"frexp needs a float tensor, got {self.dtype.name}")
        x = self if self.dtype.itemsize >= 4 else self.cast(dtypes.float32)
        wide = x.dtype == dtypes.float64
        it = dtypes.int64 if wide else dtypes.int32
        mbits, bias, emask = (52, 1022, 0x7FF) if wide else (23, 126, 0xFF)
        tiny = x.abs() < (2.2250738585072014e-308 if wide else 1.1754943508222875e-38)
        special = (x == 0) | x.isinf() | x.isnan()
        scale = float(2 ** (mbits + 2))
        y = (tiny & ~special).where(x * scale, x)
        bits = y.bitcast(it)
        field = (bits >> mbits) & emask
        e = field - bias - (tiny & ~special).where(mbits + 2, 0)
        keep = ~(emask << mbits)
        m = ((bits & keep) | (bias << mbits)).bitcast(x.dtype)
        m = special.where(x, m).cast(self.dtype)
        e = special.where(0, e).cast(dtypes.int32)
        # PyTorch's gradient: the mantissa is x / 2**e, e held constant
        m = _derivative("frexp", m, (self,), lambda c, g: (g / e.cast(g.dtype).exp2(),))
        return FrexpResult(m, e)

    @_traced
    def nextafter(self, other) -> Tensor:
        """The next float after ``self`` toward ``other`` (``other`` where they are
        equal, NaN where either is): ``x.nextafter(Tensor(math.inf))``."""
        a, b = self._operands(other)
        if not a.dtype.is_float:
            raise DTypeError(f"nextafter needs float tensors, got {a.dtype.name}")
        it = {8: dtypes.int64, 4: dtypes.int32, 2: dtypes.int16}[a.dtype.itemsize]
        bits = a.bitcast(it)
        away = (b > a) == (a > 0)  # away from zero: the magnitude's bits grow
        step = (bits + away.where(1, -1).cast(it)).bitcast(a.dtype)
        smallest = Tensor.full((), 1, it, a.device).bitcast(a.dtype)
        at_zero = (b > 0).where(smallest, -smallest)
        out = (a == 0).where(at_zero, step)
        out = (a == b).where(b, out)
        return (a.isnan() | b.isnan()).where(math.nan, out)

    def hardshrink(self, lambd: float = 0.5) -> Tensor:
        """``x`` where ``|x| > lambd``, else 0: ``x.hardshrink()``."""
        from mlfuse.nn import functional as F

        return F.hardshrink(self, lambd)

    def prelu(self, weight: Tensor) -> Tensor:
        """``max(0, x) + weight * min(0, x)`` per channel: ``x.prelu(w)``."""
        from mlfuse.nn import functional as F

        return F.prelu(self, weight)

    # -- PyTorch's predicates and storage views ---------------------------------------
    def _layout(self) -> tuple[tuple[int, ...], int]:
        """PyTorch's strides and storage offset of this tensor, in elements of the
        storage of the tensor it is a view of: permutes, slices, expands, strided
        slices, detaches and the reshapes PyTorch makes views keep the storage;
        anything else (a computed value, a reshape PyTorch copies, a pad or a flip)
        starts a row-major storage of its own."""
        chain = []
        t = self
        while getattr(t, "_base", None) is not None:
            chain.append(t)
            t = t._base[0]
        strides, offset = _row_major_strides(t.shape), 0
        for t in reversed(chain):
            parent, op, arg = t._base
            if op == "permute":
                strides = tuple(strides[o] for o in arg)
            elif op == "shrink":
                offset += sum(b * st for (b, _), st in zip(arg, strides))
            elif op == "expand":
                strides = tuple(
                    0 if n != o else st for n, o, st in zip(t.shape, parent.shape, strides)
                )
            elif op == "stride":
                strides = tuple(st * k for st, k in zip(strides, arg))
            elif op == "reshape":
                found = _view_strides(parent.shape, strides, t.shape)
                if found is None:
                    strides, offset = _row_major_strides(t.shape), 0
                else:
                    strides = found
            elif op != "detach":  # flip and pad views: PyTorch copies
                strides, offset = _row_major_strides(t.shape), 0
        return strides, offset

    def stride(self, dim: int | None = None):
        """PyTorch's strides: the elements of storage between neighbours along
        each dim (``x.stride()``, a tuple) or along one (``x.stride(0)``):
        ``torch.zeros(2, 3).t().stride()`` is ``(1, 3)`` here too. See
        :meth:`_layout` for which tensors share a storage."""
        strides = self._layout()[0]
        if dim is None:
            return strides
        if self.ndim == 0:
            raise DimError(f"stride: dim {dim} is out of range for a tensor of 0 dims")
        return strides[_norm_axis(dim, self.ndim, "stride: dim")]

    def storage_offset(self) -> int:
        """Where this view starts in its storage, in elements (PyTorch's):
        ``x[1:].storage_offset()`` is ``x.shape[1]`` for a row-major ``x``."""
        return self._layout()[1]

    def dim_order(self) -> tuple[int, ...]:
        """The dims from the outermost in memory to the innermost (by
        :meth:`stride`, ties in dim order): ``x.T.dim_order()`` is ``(1, 0)``."""
        strides = self.stride()
        return tuple(sorted(range(self.ndim), key=lambda d: -strides[d]))

    def data_ptr(self) -> int:
        """The address of the first element in host memory (realizes; 0 for an
        empty tensor): ``x.data_ptr() == x.detach().data_ptr()``. A tensor
        without memory of its own (a constant never written, or one in device
        memory) gets a number that identifies its value's node instead, so
        equal pointers still mean shared values."""
        if self.numel() == 0:
            return 0
        arr = self._shared()
        if arr is None:
            return id(self.node)
        return arr.__array_interface__["data"][0]

    def share_memory_(self) -> Tensor:
        """This tensor (PyTorch moves the storage to shared memory for worker
        processes; mlfuse's data loading runs in one process): ``w.share_memory_()``."""
        return self

    def is_shared(self) -> bool:
        """False: no storage is in shared memory (see :meth:`share_memory_`):
        ``x.is_shared()``."""
        return False

    @property
    def output_nr(self) -> int:
        """0: which result of the op that made it this tensor is (mlfuse's ops
        have one result): ``y.output_nr``."""
        return 0

    def to_dense(self, dtype=None, *, masked_grad=None) -> Tensor:
        """This tensor (tensors are dense), cast to ``dtype`` when given."""
        return self if dtype is None else self.cast(dtype)

    def to_sparse(self, *args, **kwargs):
        """Not supported: mlfuse tensors are dense; ``x.to_sparse()`` raises a clear
        NotImplementedError rather than a missing name (``to_sparse_coo``,
        ``to_sparse_csr``... alike)."""
        raise NotImplementedError(
            "to_sparse: mlfuse has no sparse tensors; keep the tensor dense (the "
            "kernels skip no zeros, but compute the same values)"
        )

    to_sparse_coo = to_sparse_csr = to_sparse_csc = to_sparse_bsr = to_sparse_bsc = to_sparse

    def resize_(self, *sizes, memory_format=None) -> Tensor:
        """Give this tensor the shape ``sizes`` in place: its elements in order,
        cut, or followed by zeros where it grows (PyTorch leaves those
        uninitialized): ``x.resize_(2, 3)``."""
        shape = _shape_arg(sizes[0] if len(sizes) == 1 and isinstance(sizes[0], (tuple, list))
                           else sizes)  # fmt: skip
        layouts.check_memory_format(memory_format, "resize_", len(shape))
        n, want = self.numel(), math.prod(shape)
        flat = self.detach().reshape(-1)
        if want < n:
            flat = flat[:want]
        elif want > n:
            flat = flat.pad(((0, want - n),))
        self.data = flat.reshape(shape).contiguous()
        return self

    def resize_as_(self, other: Tensor, memory_format=None) -> Tensor:
        """:meth:`resize_` to ``other``'s shape."""
        return self.resize_(other.shape, memory_format=memory_format)

    def new_empty_strided(self, size, stride, dtype=None, device=None, requires_grad=False):
        """:func:`mlfuse.empty_strided` with this tensor's dtype and device unless given:
        ``x.new_empty_strided((2, 3), (3, 1))``."""
        from mlfuse.namespace import empty_strided

        return empty_strided(size, stride, dtype=dtype or self.dtype, device=device or self.device,
                             requires_grad=requires_grad)  # fmt: skip

    def as_strided_scatter(self, src: Tensor, size, stride, storage_offset: int = 0) -> Tensor:
        """This tensor with ``src`` written into the view :meth:`as_strided` gives (a new
        tensor): ``x.as_strided_scatter(y, (2,), (2,))``."""
        from mlfuse.namespace import as_strided_scatter

        return as_strided_scatter(self, src, size, stride, storage_offset)

    def const_data_ptr(self) -> int:
        """:meth:`data_ptr` (PyTorch's read-only spelling): ``x.const_data_ptr()``."""
        return self.data_ptr()

    mutable_data_ptr = const_data_ptr

    def record_stream(self, stream) -> None:
        """Accepted: mlfuse's CUDA target runs on one stream, so a buffer is never
        reused while another stream still reads it: ``x.record_stream(s)``."""

    def is_set_to(self, tensor: Tensor) -> bool:
        """Whether both tensors share their values, shape and strides (``set_``
        makes that): ``x.is_set_to(y)``."""
        return (
            isinstance(tensor, Tensor)
            and self.shape == tensor.shape
            and self.stride() == tensor.stride()
            and self.data_ptr() == tensor.data_ptr()
        )

    def as_subclass(self, cls) -> Tensor:
        """This tensor's value as an instance of the Tensor subclass ``cls`` (no
        copy): ``x.as_subclass(MyTensor)``."""
        if not (isinstance(cls, type) and issubclass(cls, Tensor)):
            raise TypeError(f"as_subclass: {cls!r} is not a subclass of Tensor")
        out = object.__new__(cls)
        out._set_node(self.node)
        return out

    def module_load(self, other, assign: bool = False) -> Tensor:
        """What ``Module.load_state_dict`` stores for this tensor given ``other``
        (PyTorch's hook): ``other`` itself, detached."""
        if not isinstance(other, Tensor):
            raise TypeError(f"module_load: expected a Tensor, got {type(other).__name__}")
        return other.detach()

    def set_(self, source=None, storage_offset: int = 0, size=None, stride=None) -> Tensor:
        """Make this tensor hold ``source``'s values (sharing them: a write to
        ``source`` shows here); with ``storage_offset``/``size``/``stride``, the
        view :meth:`as_strided` gives; with nothing, an empty tensor."""
        if source is None:
            self.data = Tensor.zeros(0, dtype=self.dtype, device=self.device)
            return self
        if not isinstance(source, Tensor):
            raise TypeError(f"set_: source must be a Tensor, got {type(source).__name__}")
        if size is not None:
            view = source.as_strided(
                size, stride or _row_major_strides(tuple(size)), storage_offset
            )
        else:
            view = source
        self.node = view.node
        if view is source:
            self._base = (source, "detach", None)
            _add_view(source, self)
        else:
            self._base = view._base
            if view._base is not None:
                _add_view(view._base[0], self)
        return self

    def new(self, *args, **kwargs) -> Tensor:
        """PyTorch's legacy constructor of a tensor of this dtype and device:
        ``x.new(2, 3)`` or ``x.new(mlfuse.Size([2, 3]))`` (zeros), ``x.new([1, 2])``
        or ``x.new((1, 2))`` (those values), ``x.new()`` (empty)."""
        if kwargs.keys() - {"device"}:
            raise TypeError(f"new: unexpected keyword arguments {sorted(kwargs)}")
        dev = kwargs.get("device", self.device)
        if not args:
            return Tensor.zeros(0, dtype=self.dtype, device=dev)
        if len(args) == 1 and not isinstance(args[0], (int, np.integer)):
            data = args[0]
            if isinstance(data, Tensor):
                return data.detach().cast(self.dtype).to(dev)
            from mlfuse.namespace import Size

            if isinstance(data, Size):  # sizes; a plain tuple or list is data, as PyTorch's
                return Tensor.zeros(*data, dtype=self.dtype, device=dev)
            return Tensor(data, self.dtype, dev)
        return Tensor.zeros(*_shape_arg(args), dtype=self.dtype, device=dev)

    def apply_(self, callable) -> Tensor:  # noqa: A002 - PyTorch's name
        """Replace each element ``v`` by ``callable(v)`` in place, on the host
        (slow: one Python call per element): ``x.apply_(lambda v: v * 2)``."""
        vals = self.detach().numpy()
        out = np.vectorize(callable, otypes=[np.float64 if self.dtype.is_float else object])(vals)
        return self._host_write(out, "apply_")

    def map_(self, tensor: Tensor, callable) -> Tensor:  # noqa: A002
        """``self[i] = callable(self[i], tensor[i])`` in place, on the host;
        ``tensor`` broadcasts to this shape: ``x.map_(y, max)``."""
        other = tensor if isinstance(tensor, Tensor) else Tensor(tensor)
        b = np.broadcast_to(other.detach().numpy(), self.shape)
        out = np.vectorize(callable, otypes=[object])(self.detach().numpy(), b)
        return self._host_write(out, "map_")

    def map2_(self, x: Tensor, y: Tensor, callable) -> Tensor:  # noqa: A002
        """``self[i] = callable(self[i], x[i], y[i])`` in place, on the host."""
        bx = np.broadcast_to(Tensor(x).detach().numpy() if not isinstance(x, Tensor)
                             else x.detach().numpy(), self.shape)  # fmt: skip
        by = np.broadcast_to(Tensor(y).detach().numpy() if not isinstance(y, Tensor)
                             else y.detach().numpy(), self.shape)  # fmt: skip
        out = np.vectorize(callable, otypes=[object])(self.detach().numpy(), bx, by)
        return self._host_write(out, "map2_")

    def _host_write(self, values: np.ndarray, what: str) -> Tensor:
        if self.device != "cpu":
            raise RuntimeError(f"{what} runs Python on each element: CPU tensors only")
        try:
            arr = np.asarray(values, dtype=np.float64 if self.dtype.is_float else None)
        except (TypeError, ValueError) as e:
            raise TypeError(f"{what}: the callable must return numbers ({e})") from None
        with autograd.no_grad():
            self.assign(Tensor(arr.astype(self.dtype.host), self.dtype, self.device))
        return self

    @property
    def layout(self) -> layouts.layout:
        """``mlfuse.strided``: tensors are dense (see :mod:`mlfuse.layouts`)."""
        return layouts.strided

    # the storage kinds and devices of PyTorch's that mlfuse tensors never are
    is_sparse = is_sparse_csr = is_quantized = is_meta = is_nested = is_mkldnn = False
    is_mps = is_xla = is_xpu = is_ipu = is_vulkan = is_maia = is_mtia = False

    def is_contiguous(self, memory_format=None) -> bool:
        """Whether this tensor's elements are laid out row-major without gaps: a
        computed value is (it is materialized that way); a view is when its chain
        of movements keeps the layout (reshapes, slices of the leading dim):
        ``x.T.is_contiguous()`` is False. With a channels-last ``memory_format``:
        whether :meth:`stride` is that order's (``x.contiguous(memory_format=
        mlfuse.channels_last)`` is)."""
        fmt = layouts.check_memory_format(memory_format, "is_contiguous")
        if fmt is not None and fmt.rank is not None:
            if self.ndim != fmt.rank:
                return False
            order = (0, *range(2, self.ndim), 1)  # outermost to innermost in memory
            want = _row_major_strides(tuple(self.shape[d] for d in order))
            strides = self.stride()
            return all(strides[d] == w or self.shape[d] == 1 for d, w in zip(order, want))
        t = self
        while getattr(t, "_base", None) is not None:
            parent, op, arg = t._base
            if op == "permute" and any(
                i != j for i, j in zip(arg, sorted(arg)) if parent.shape[i] != 1
            ):
                return False
            if op in ("expand", "flip", "stride", "pad") and t.shape != parent.shape:
                return False
            if op == "shrink":
                kept = [(b, e) != (0, s) for (b, e), s in zip(arg, parent.shape)]
                first = next((i for i, k in enumerate(kept) if k), None)
                if (
                    first is not None
                    and any(
                        parent.shape[i] != 1 and arg[i][1] - arg[i][0] != 1 for i in range(first)
                    )
                    or any(kept[i] for i in range((first or 0) + 1, len(kept)))
                ):
                    return False
            t = parent
        return True

    @property
    def is_cpu(self) -> bool:
        """Whether the tensor lives on the CPU: ``x.is_cpu``."""
        return self.device == "cpu"

    @property
    def is_cuda(self) -> bool:
        """Whether the tensor lives on an NVIDIA GPU: ``x.is_cuda``."""
        return self.device.startswith("cuda")

    def is_complex(self) -> bool:
        """False for a real tensor (complex ones are :class:`mlfuse.ComplexTensor`):
        ``x.is_complex()``."""
        return False

    def is_signed(self) -> bool:
        """Whether the dtype holds negative values: ``x.is_signed()``."""
        return self.dtype.is_float or (self.dtype.is_int and not self.dtype.unsigned)

    def is_same_size(self, other: Tensor) -> bool:
        """Whether ``other`` has this shape: ``a.is_same_size(b)``."""
        return self.shape == other.shape

    def is_nonzero(self) -> bool:
        """Whether a one-element tensor is not zero: ``t.is_nonzero()``."""
        if self.numel() != 1:
            raise ArgumentError(
                f"is_nonzero needs exactly one element, the tensor has {self.numel()}"
            )
        return bool(self.item())

    def is_inference(self) -> bool:
        """False: mlfuse has no inference tensors: ``x.is_inference()``."""
        return False

    def is_conj(self) -> bool:
        """False (no complex dtypes): ``x.is_conj()``."""
        return False

    is_neg = is_conj

    @property
    def data(self) -> Tensor:
        """The values without autograd, sharing this tensor's storage: writes
        through it (``p.data.mul_(0.5)``) change this tensor and record no
        gradient; ``p.data = t`` replaces the values (the shape may change)."""
        return self.detach()

    @data.setter
    def data(self, value) -> None:
        v = value if isinstance(value, Tensor) else Tensor(value, self.dtype, self.device)
        self.node = v._detached().node

    def cpu(self) -> Tensor:
        """This tensor on the CPU (itself when it is there): ``x.cpu()``."""
        return self.to("cpu")

    def cuda(self, device=None) -> Tensor:
        """This tensor on the NVIDIA GPU: ``x.cuda()``."""
        return self.to("cuda" if device is None else device)

    # -- sampling and in-place filling -------------------------------------------------
    def bernoulli(self, p=None, *, generator=None) -> Tensor:
        """0/1 samples in this tensor's dtype, 1 with probability ``p`` (a number or a
        tensor), or with this tensor's values as probabilities: ``probs.bernoulli()``."""
        if p is None:
            pr = self
        elif isinstance(p, Tensor):
            pr = p._broadcast_to(self.shape)
        else:
            fdt = self.dtype if self.dtype.is_float else dtypes.default_float
            pr = Tensor.full(self.shape, p, fdt, self.device)
        if not pr.dtype.is_float:
            raise DTypeError(f"bernoulli needs float probabilities, got {pr.dtype.name}")
        if pr.node.realized and pr.numel():
            v = pr.numpy()
            if np.isnan(v).any() or v.min() < 0 or v.max() > 1:
                raise ArgumentError("bernoulli: probabilities must be in [0, 1]")
        u = Tensor.rand(*self.shape, seed=generator, dtype=pr.dtype, device=self.device)
        return (u < pr).cast(self.dtype)

    def multinomial(self, num_samples: int, replacement: bool = False, *, generator=None):
        """``num_samples`` category indices per row of non-negative weights (1-d or
        2-d), drawn with or without ``replacement``: ``w.multinomial(3)``."""
        if self.ndim not in (1, 2):
            raise ArgumentError(f"multinomial needs 1-d or 2-d weights, got shape {self.shape}")
        if isinstance(num_samples, bool) or not isinstance(num_samples, (int, np.integer)):
            raise TypeError("multinomial: num_samples must be an int")
        n = self.shape[-1]
        if num_samples <= 0:
            raise ArgumentError(f"multinomial: num_samples must be positive, got {num_samples}")
        if not replacement and num_samples > n:
            raise ArgumentError(
                f"multinomial: cannot draw {num_samples} samples without replacement from "
                f"{n} categories"
            )
        w = self._float().reshape(-1, n)
        if self.node.realized and w.numel():
            v = self.numpy().reshape(-1, n)
            if np.isnan(v).any() or np.isinf(v).any() or v.min() < 0:
                raise ArgumentError("multinomial: weights must be finite and non-negative")
            if (v.sum(-1) <= 0).any():
                raise ArgumentError("multinomial: every row needs a positive total weight")
        rows = w.shape[0]
        if replacement:
            cdf = w.cumsum(-1)
            cdf = cdf / cdf[:, -1:]
            u = Tensor.rand(rows, num_samples, seed=generator, dtype=w.dtype, device=self.device)
            # the first category whose cumulative weight exceeds u
            hits = (cdf.unsqueeze(1) <= u.unsqueeze(-1)).cast(dtypes.int64).sum(-1)
            out = hits.minimum(n - 1)
        else:
            # Gumbel top-k: the k largest of log(w) + Gumbel noise are a draw without
            # replacement in proportion to the weights
            u = Tensor.rand(rows, n, seed=generator, dtype=w.dtype, device=self.device).clip(
                1e-30, 1.0
            )
            keys = (w > 0).where(w.log() - (-u.log()).log(), -math.inf)
            out = keys.topk(num_samples, -1).indices
        return out.reshape(num_samples) if self.ndim == 1 else out

    def normal_(self, mean: float = 0.0, std: float = 1.0, *, generator=None) -> Tensor:
        """Fill in place with normal samples: ``w.normal_(0, 0.02)``."""
        return self.assign(
            Tensor.normal(
                *self.shape,
                mean=mean,
                std=std,
                seed=generator,
                dtype=self.dtype,
                device=self.device,
            )
        )

    def uniform_(self, a: float = 0.0, b: float = 1.0, *, generator=None) -> Tensor:
        """Fill in place with uniform samples in ``[a, b)``: ``w.uniform_(-0.1, 0.1)``."""
        return self.assign(
            Tensor.uniform(
                *self.shape, low=a, high=b, seed=generator, dtype=self.dtype, device=self.device
            )
        )

    def random_(self, from_=0, to=None, *, generator=None) -> Tensor:
        """Fill in place with integers in ``[from, to)`` (``random_(to)`` from 0;
        no bound: up to the dtype's largest exact integer): ``x.random_(0, 10)``."""
        lo, hi = (0, from_) if to is None and from_ else (from_, to)
        if hi is None:  # the dtype's integers that are exact
            exact = {"float16": 2**11, "bfloat16": 2**8, "float32": 2**24, "float64": 2**53}
            if self.dtype.is_bool:
                hi = 2
            elif self.dtype.is_float:
                hi = exact[self.dtype.name] + 1
            else:
                hi = int(np.iinfo(np.dtype(self.dtype.np)).max) + 1
        if hi <= lo:
            raise ArgumentError(f"random_: expects from < to, got from={lo}, to={hi}")
        return self.assign(
            _random(
                lambda g: g.integers(lo, hi, self.shape), self.dtype, self.device, seed=generator
            )
        )

    def exponential_(self, lambd: float = 1.0, *, generator=None) -> Tensor:
        """Fill in place with exponential samples of rate ``lambd``: ``x.exponential_()``."""
        draw = lambda g: g.exponential(1.0 / lambd, self.shape)  # noqa: E731
        return self.assign(_random(draw, self.dtype, self.device, seed=generator))

    def log_normal_(self, mean: float = 1.0, std: float = 2.0, *, generator=None) -> Tensor:
        """Fill in place with log-normal samples: ``x.log_normal_()``."""
        draw = lambda g: g.lognormal(mean, std, self.shape)  # noqa: E731
        return self.assign(_random(draw, self.dtype, self.device, seed=generator))

    def geometric_(self, p: float, *, generator=None) -> Tensor:
        """Fill in place with geometric samples (trials to the first success):
        ``x.geometric_(0.3)``."""
        draw = lambda g: g.geometric(p, self.shape)  # noqa: E731
        return self.assign(_random(draw, self.dtype, self.device, seed=generator))

    def cauchy_(self, median: float = 0.0, sigma: float = 1.0, *, generator=None) -> Tensor:
        """Fill in place with Cauchy samples: ``x.cauchy_()``."""
        draw = lambda g: median + sigma * g.standard_cauchy(self.shape)  # noqa: E731
        return self.assign(_random(draw, self.dtype, self.device, seed=generator))

    def bernoulli_(self, p=0.5, *, generator=None) -> Tensor:
        """Fill in place with 0/1 samples, 1 with probability ``p``: ``m.bernoulli_(0.9)``."""
        return self.assign(self.bernoulli(p, generator=generator).cast(self.dtype))

    def fill_diagonal_(self, fill_value, wrap: bool = False) -> Tensor:
        """Fill the main diagonal in place (all dims of one size, or a 2-d tall matrix,
        whose diagonal restarts every ``cols + 1`` rows when ``wrap``):
        ``m.fill_diagonal_(0)``."""
        if self.ndim < 2:
            raise ArgumentError(f"fill_diagonal_ needs at least 2 dims, got shape {self.shape}")
        if self.ndim > 2 and len(set(self.shape)) != 1:
            raise ArgumentError(
                f"fill_diagonal_: all dims must have one length beyond 2-d, got {self.shape}"
            )
        dev = self.device
        if self.ndim == 2:
            rows, cols = self.shape
            r = Tensor.arange(rows, device=dev).reshape(rows, 1)
            c = Tensor.arange(cols, device=dev).reshape(1, cols)
            rr = r % (cols + 1) if wrap and rows > cols else r
            hit = rr == c
        else:
            n = self.shape[0]
            flat = Tensor.arange(self.numel(), device=dev).reshape(self.shape)
            step = sum(n**k for k in range(self.ndim))
            hit = flat % step == 0
        return self.assign(hit.where(Tensor.full((), fill_value, self.dtype, dev), self))

    # -- more of PyTorch's shape helpers ------------------------------------------------
    def split_with_sizes(self, split_sizes, dim: int = 0) -> tuple[Tensor, ...]:
        """Views of the given lengths along ``dim``: ``x.split_with_sizes([2, 3])``."""
        if isinstance(split_sizes, (int, np.integer)):
            raise TypeError("split_with_sizes: split_sizes must be a list of ints")
        return self.split(list(split_sizes), dim)

    @_traced
    def sum_to_size(self, *size) -> Tensor:
        """Sum the dims a broadcast to this shape would have expanded, down to ``size``:
        ``g.sum_to_size(1, 4)``."""
        want = _shape_arg(
            size[0] if len(size) == 1 and isinstance(size[0], (tuple, list)) else size
        )
        if broadcast_shape(want, self.shape) != self.shape:
            raise ArgumentError(f"sum_to_size: size {want} is not expandable to {self.shape}")
        lead = self.ndim - len(want)
        out = self.sum(tuple(range(lead))) if lead else self
        axes = tuple(i for i, (w, s) in enumerate(zip(want, out.shape)) if w == 1 and s != 1)
        return out.sum(axes, keepdim=True) if axes else out

    def ravel(self) -> Tensor:
        """The elements as a 1-d tensor: ``x.ravel()``."""
        return self.reshape(-1)

    def ndimension(self) -> int:
        """The number of dims: ``x.ndimension()``."""
        return self.ndim

    @property
    def itemsize(self) -> int:
        """Bytes per element: ``x.itemsize``."""
        return self.element_size()

    @property
    def nbytes(self) -> int:
        """Bytes of the elements: ``x.nbytes``."""
        return self.element_size() * self.numel()

    def get_device(self) -> int:
        """The device's index (-1 for the CPU, as PyTorch): ``x.get_device()``."""
        name = self.device
        if name.startswith("cpu"):
            return -1
        _, _, idx = name.partition(":")
        return int(idx) if idx else 0

    @property
    def H(self) -> Tensor:  # noqa: N802 - PyTorch's name
        """The conjugate transpose of a matrix (the transpose: no complex dtypes):
        ``m.H``."""
        if self.ndim != 2:
            raise ArgumentError(f"H needs a 2-d tensor, got shape {self.shape}; use mH")
        return self.T

    @property
    def mH(self) -> Tensor:  # noqa: N802 - PyTorch's name
        """The conjugate transpose of the last two dims (the transpose): ``x.mH``."""
        return self.mT

    def adjoint(self) -> Tensor:
        """The conjugate transpose of the last two dims (a view): ``x.adjoint()``."""
        return self.mT

    @property
    def real(self) -> Tensor:
        """The real part: a real tensor itself (a complex tensor's is its real part): ``x.real``."""
        return self

    @property
    def imag(self) -> Tensor:
        """The imaginary part of a complex tensor; a real tensor has none (PyTorch's
        error): ``z.imag``."""
        raise DTypeError("imag is not implemented for tensors with non-complex dtypes.")

    def stft(self, n_fft: int, hop_length=None, win_length=None, window=None, center=True,
             pad_mode="reflect", normalized=False, onesided=None, return_complex=None):  # fmt: skip
        """The short-time Fourier transform (:func:`mlfuse.stft`):
        ``x.stft(512, window=mlfuse.hann_window(512), return_complex=True)``."""
        from mlfuse.stft import stft

        return stft(self, n_fft, hop_length, win_length, window, center, pad_mode, normalized,
                    onesided, return_complex)  # fmt: skip

    def istft(self, n_fft: int, hop_length=None, win_length=None, window=None, center=True,
              normalized=False, onesided=None, length=None, return_complex=False):  # fmt: skip
        """The inverse short-time Fourier transform of a complex spectrum
        (:func:`mlfuse.istft`): ``spec.istft(512, window=w, length=n)``."""
        from mlfuse.stft import istft

        return istft(self, n_fft, hop_length, win_length, window, center, normalized, onesided,
                     length, return_complex)  # fmt: skip

    def cfloat(self) -> Tensor:
        """As complex64 (a zero imaginary part): ``x.cfloat()``."""
        return self.cast(dtypes.complex64)

    def cdouble(self) -> Tensor:
        """As complex128 (a zero imaginary part): ``x.cdouble()``."""
        return self.cast(dtypes.complex128)

    def positive(self) -> Tensor:
        """The tensor itself (``+x``): ``x.positive()``."""
        return self

    def conj(self) -> Tensor:
        """The complex conjugate: a real tensor itself: ``x.conj()``."""
        return self

    resolve_conj = resolve_neg = conj_physical = conj


def _without_leading_ones(v: Tensor, ndim: int) -> Tensor:
    """``v`` less the leading size-1 dims beyond ``ndim`` (PyTorch's written
    values may carry them: ``x[0] = t.reshape(1, -1)``)."""
    k = 0
    while v.ndim - k > ndim and v.shape[k] == 1:
        k += 1
    return v.reshape(v.shape[k:]) if k else v


def _holds_tensors(seq) -> bool:
    """Whether a (nested) list or tuple holds a Tensor anywhere (a worklist walk)."""
    todo = [seq]
    while todo:
        for x in todo.pop():
            if isinstance(x, Tensor):
                return True
            if isinstance(x, (list, tuple)):
                todo.append(x)
    return False


def _new_dim_index(i) -> bool:
    """Whether an index item adds a dim: None, or a bool scalar (numpy's rule)."""
    return i is None or isinstance(i, (bool, np.bool_))


def _check_bool_scalars(index: tuple) -> None:
    """IndexTypeError for the bool scalar indices mlfuse does not take: more
    than one, or one beside advanced indices (numpy and PyTorch merge those
    into one advanced dim)."""
    n = sum(isinstance(i, (bool, np.bool_)) for i in index)
    if n > 1 or n and any(_is_advanced(i) for i in index):
        raise IndexTypeError(
            "a bool scalar index adds a dim of size 1 (True) or 0 (False) and is supported "
            "alone, without other bool scalars or tensor, list or array indices; "
            f"got {index!r}"
        )


def _is_advanced(i) -> bool:
    return isinstance(i, (Tensor, list, np.ndarray))


def _check_masks(index: tuple, shape: Shape) -> None:
    """IndexError unless each bool mask has the shape of the dims it indexes."""

    def mask_dims(i) -> int:
        return (i.ndim if isinstance(i, Tensor) else np.asarray(i).ndim) if _is_bool_index(i) else 1

    used = sum(0 if i is None or i is Ellipsis else mask_dims(i) for i in index)
    dim = 0
    for i in index:
        if i is Ellipsis:
            dim += max(len(shape) - used, 0)
        elif i is not None:
            k = mask_dims(i)
            if _is_bool_index(i):
                m = tuple(i.shape) if isinstance(i, Tensor) else np.asarray(i).shape
                if m != tuple(shape[dim : dim + k]):
                    raise IndexError(
                        f"the shape of the mask {m} at index {dim} does not match the shape "
                        f"of the indexed tensor {shape}"
                    )
            dim += k


def _is_bool_index(i) -> bool:
    if isinstance(i, Tensor):
        return i.dtype.is_bool
    if isinstance(i, (list, np.ndarray)):
        a = np.asarray(i)
        return a.dtype == bool and a.size > 0
    return False


def _index_tensor(i, device: str) -> Tensor:
    """An index (a tensor, list or array of integers) as a tensor of its integer dtype."""
    if isinstance(i, Tensor):
        t = i
    else:
        a = np.asarray(i)
        if a.size == 0:
            a = a.astype(np.int64)
        elif a.dtype.kind not in "iu":
            raise IndexError(f"arrays used as indices must be integers, got {a.dtype}")
        t = Tensor(a, device=device)
    if t.dtype.is_float or t.dtype.is_bool:
        raise IndexError(f"tensors used as indices must be integers, got {t.dtype.name}")
    return t


def _checked(idx: Tensor, size: int, dim: int, shape: Shape) -> Tensor:
    """``idx`` (integers indexing dim ``dim`` of a tensor of ``shape``) as int64,
    negative entries wrapped once. A realized index is checked on the host:
    an entry outside ``[-size, size)`` raises IndexError at the call. A lazy one
    is not computed here; the kernel clamps it to ``[0, size)``."""
    if idx.numel() and size == 0:
        raise DimError(
            f"index of shape {idx.shape} into dim {dim} of size 0 (tensor of shape {shape})"
        )
    if idx.node.realized:
        if not idx.numel():
            return idx.cast(dtypes.int64)
        vals = idx.numpy()
        lo, hi = int(vals.min()), int(vals.max())
        if lo < -size or hi >= size:
            bad = lo if lo < -size else hi
            raise DimError(
                f"index {bad} is out of bounds for dim {dim} with size {size} "
                f"(tensor of shape {shape})"
            )
        if lo >= 0:
            return idx.cast(dtypes.int64)
    i = idx.cast(dtypes.int64)
    return (i < 0).where(i + size, i)


class SortResult(NamedTuple):
    """``(values, indices)`` of :meth:`Tensor.sort`, ``topk``, ``kthvalue``,
    ``median`` and ``mode``, as PyTorch's named tuples: ``x.sort().values``."""

    values: Tensor
    indices: Tensor


_ERFINV_CENTRAL = (
    3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
    -0.00417768164, 0.246640727, 1.50140941,
)  # fmt: skip
_ERFINV_TAIL = (
    0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
    0.00943887047, 1.00167406, 2.83297682,
)  # fmt: skip
"""Giles' single-precision erfinv: polynomials in w - 2.5 (w < 5) and sqrt(w) - 3,
w = -log(1 - x^2) (M. Giles, "Approximating the erfinv function", 2010)."""


_SCAN_BLOCK = 32
"""Block length of the front end's scans (see ``Tensor._scan``)."""


def _finite_max(dt: DType) -> float:
    """The largest finite value of float dtype ``dt``."""
    if dt == dtypes.bfloat16:
        return 3.3895313892515355e38
    return float(np.finfo(dt.np).max)


def _lowest(dt: DType):
    return -math.inf if dt.is_float else int(np.iinfo(dt.np).min)


def _highest(dt: DType):
    return math.inf if dt.is_float else int(np.iinfo(dt.np).max)


def _reduce_kind(t: Tensor, kind: str, axis: int) -> Tensor:
    if kind == "logaddexp":
        m = t.max(axis, keepdim=True)
        m = m.isfinite().where(m, 0)
        return ((t - m).exp().sum(axis, keepdim=True).log() + m).squeeze(axis)
    if kind == "add":
        return t._reduce("add", axis, False)
    if kind == "mul":
        return t._reduce("mul", axis, False)
    return t.max(axis) if kind == "max" else t.min(axis)


def _combine(kind: str, a: Tensor, b: Tensor) -> Tensor:
    if kind == "logaddexp":
        m = a.maximum(b)
        m = m.isfinite().where(m, 0)
        return ((a - m).exp() + (b - m).exp()).log() + m
    if kind == "add":
        return a + b
    if kind == "mul":
        return a * b
    return a.maximum(b) if kind == "max" else a.minimum(b)


_TANH_TAYLOR = (
    -1 / 3,
    2 / 15,
    -17 / 315,
    62 / 2835,
    -1382 / 155925,
    21844 / 6081075,
    -929569 / 638512875,
    6404582 / 10854718875,
    -443861162 / 1856156927625,
)
"""tanh(x) = x + x^3 (c0 + c1 x^2 + ...): the Taylor coefficients (from the Bernoulli numbers)."""


def _same_dtype(what: str, t: Tensor, src: Tensor) -> None:
    """PyTorch's rule for scatters: the values written have the target's dtype."""
    if src.dtype != t.dtype:
        raise ArgumentError(
            f"{what}: src has dtype {src.dtype.name}, the input {t.dtype.name}; they must be "
            f"the same (cast src with .to({t.dtype.name}))"
        )


def _add_view(parent: Tensor, view: Tensor) -> None:
    """Remember that ``view`` views ``parent`` (weakly: a view keeps its parent
    alive, not the other way), so a write to ``parent`` reaches it."""
    refs = getattr(parent, "_views", None)
    if refs is None:
        parent._views = [weakref.ref(view)]
        return
    refs.append(weakref.ref(view))
    if len(refs) >= 64 and len(refs) & (len(refs) - 1) == 0:  # at powers of two: drop dead ones
        refs[:] = [r for r in refs if r() is not None]


def _refresh_views(root: Tensor) -> None:
    """After ``root`` was assigned, re-derive every live view taken from it (and
    from those views) from its new value, parents first, as PyTorch's views
    share their base's storage: ``row = x[0]; x[0] = v`` leaves ``row`` equal to
    ``v``. Iterative: a chain of views of any length."""
    todo = [root]
    while todo:
        parent = todo.pop()
        refs = getattr(parent, "_views", None)
        if not refs:
            continue
        live = []
        for r in refs:
            view = r()
            if view is None or getattr(view, "_base", None) is None:
                continue
            base, op, arg = view._base
            if base is not parent:
                continue  # (it became another tensor's view since)
            live.append(r)
            if op == "detach":
                node = parent._detached().node
            else:
                node = graph.make(op, (parent.node,), arg, view.shape, view.dtype)
            if node is not view.node:
                view.node = node
            todo.append(view)
        refs[:] = live


def _write_through(parent: Tensor, op: str, arg, shape: Shape, val: Tensor) -> Tensor:
    """``parent``'s value after writing ``val`` into the view ``op(arg)`` of it
    (of ``shape``): the inverse movement places ``val`` and, where the view does
    not cover the parent, the parent keeps its values (one fused select)."""
    pshape = parent.shape
    if op == "reshape":
        return val.reshape(pshape)
    if op == "detach":  # .data: the same values
        return val
    if op == "permute":
        return val.permute(tuple(int(i) for i in np.argsort(arg)))
    if op == "flip":
        return val.flip(arg)
    if op == "pad":
        pairs, _ = arg
        return val.shrink(tuple((b, b + s) for (b, _e), s in zip(pairs, pshape)))
    if op == "expand":
        raise ArgumentError(
            f"cannot assign to an expanded view ({pshape} expanded to {shape}): several of "
            "its elements are one element of the tensor it views; assign a .contiguous() copy"
        )

    def place(t: Tensor, fill) -> Tensor:
        if op == "shrink":
            return t.pad(tuple((b, s - e) for (b, e), s in zip(arg, pshape)), fill)
        assert op == "stride", op
        for d, (k, s) in enumerate(zip(arg, pshape)):
            if k == 1:
                continue
            c = t.shape[d]
            lead, rest = t.shape[:d], t.shape[d + 1 :]
            t = t.reshape(lead + (c, 1) + rest)
            pads = [(0, 0)] * t.ndim
            pads[d + 1] = (0, k - 1)
            t = t.pad(tuple(pads), fill).reshape(lead + (c * k,) + rest)
            t = t.shrink(tuple([None] * d + [(0, s)] + [None] * len(rest)))
        return t

    if op == "shrink":
        return _write_box(parent, arg, val)
    covered = place(Tensor.full(shape, True, dtypes.bool_, parent.device), False)
    return covered.where(place(val, 0), parent)


def _reads_buffer(node: graph.Node, buffer, limit: int = 256) -> bool:
    """Whether lazy ``node`` reads realized ``buffer`` (True too when its graph
    has more than ``limit`` lazy nodes: a bounded walk, as the answer only
    picks the faster of two correct forms)."""
    todo, seen = [node], {id(node)}
    while todo:
        n = todo.pop()
        if n.realized:
            if n.buffer is buffer:
                return True
            continue
        if len(seen) > limit:
            return True
        for s in n.srcs:
            if id(s) not in seen:
                seen.add(id(s))
                todo.append(s)
    return False


def _write_box(parent: Tensor, box, val: Tensor) -> Tensor:
    """``parent`` with ``val`` written into its box ``box`` (a ``(begin, end)``
    per dim), padded into place: the box is a structure of the program.

    Writing into a realized tensor a value that does not read it, along a
    dim the box takes one index of (``out[i] = v``, ``cache[:, :, pos] = k``),
    ``val`` is instead broadcast along that dim and the index selected by
    comparing an iota with it, a scalar constant: writes at other indices are
    the same program up to that scalar, compiled once more at most (see
    ``graph.with_dynamic_scalars``), not once per index. Not along the
    innermost dim (``x[:, j] = v``): there the comparison would be made for
    every element, where the padded box is a store of one column. (A value
    that reads the tensor it is written into keeps the padded form:
    broadcast, it would read other elements than the one written, and the
    write could not be in place.)"""
    pshape = parent.shape
    inner = max((d for d, s in enumerate(pshape) if s > 1), default=-1)
    single = [d for d, ((b, e), s) in enumerate(zip(box, pshape)) if e - b == 1 and d < inner]
    if single and (not parent.node.realized or _reads_buffer(val.node, parent.node.buffer)):
        single = []
    pads = tuple(
        (0, 0) if d in single else (b, s - e) for d, ((b, e), s) in enumerate(zip(box, pshape))
    )
    covered = None
    if any(p != (0, 0) for p in pads):
        covered = Tensor.full(val.shape, True, dtypes.bool_, parent.device).pad(pads, False)
        val = val.pad(pads, 0)
    for d in single:
        at = Tensor.arange(pshape[d], device=parent.device) == box[d][0]
        at = at.reshape(tuple(pshape[d] if k == d else 1 for k in range(len(pshape))))
        covered = at if covered is None else covered & at
    if covered is None:  # the whole tensor
        return val
    return covered.where(val._broadcast_to(pshape), parent)


def _atan64(x: Tensor) -> Tensor:
    """atan of a float64 tensor to float64 accuracy: |x| > 1 reflects through
    pi/2 - atan(1/x), [tan(pi/12), 1] shifts by pi/6, and the Taylor series of
    the rest (|c| <= 0.268) converges past 1e-17 within 16 terms."""
    a = x.abs()
    inv = a > 1
    b = inv.where(1 / a, a)
    hi = b > 2 - math.sqrt(3)  # tan(pi/12)
    s3 = math.sqrt(3)
    c = hi.where((b * s3 - 1) / (b + s3), b)
    c2 = c * c
    poly = Tensor.full((), (-1) ** 16 / 33, x.dtype, x.device)
    for n in range(15, -1, -1):
        poly = poly * c2 + (-1) ** n / (2 * n + 1)
    r = c * poly + hi.where(Tensor.full((), math.pi / 6, x.dtype, x.device), 0.0)
    r = inv.where(math.pi / 2 - r, r)
    return (x < 0).where(-r, (a == 0).where(x, r))  # keeps -0.0 and NaN


def _keyword_shape(args: tuple, kw: dict, name: str, what: str) -> tuple:
    """The sizes of a ``*args`` method given positionally or as keyword ``name``
    (PyTorch's ``x.reshape(shape=(2, 3))``)."""
    unexpected = sorted(kw.keys() - {name})
    if unexpected:
        raise TypeError(f"{what}() got an unexpected keyword argument {unexpected[0]!r}")
    if name in kw:
        if args:
            raise TypeError(f"{what}(): sizes given both positionally and as {name}=")
        value = kw[name]
        return tuple(value) if isinstance(value, (tuple, list)) else (value,)
    return args


def _torch_spellings(fn):
    """Accept PyTorch's keyword spellings beside ours: ``dim=`` for ``axis=``,
    ``keepdims=`` for ``keepdim=``, ``unbiased=`` for ``correction=``, and
    ``dtype=`` (the input converted first) where ``fn`` has none of its own."""
    params = inspect.signature(fn).parameters
    takes_dtype = "dtype" in params
    takes_correction = "correction" in params

    @functools.wraps(fn)
    def wrapper(self, *args, **kw):
        if not takes_dtype and "dtype" in kw:
            dtype = kw.pop("dtype")
            if dtype is not None:
                self = self.cast(dtype)  # noqa: PLW0642 - the converted input
        if "dim" in kw:
            if args or "axis" in kw:
                raise TypeError(f"{fn.__name__}: got both dim and axis")
            kw["axis"] = kw.pop("dim")
        if "keepdims" in kw:
            if "keepdim" in kw or len(args) > 1:
                raise TypeError(f"{fn.__name__}: got both keepdims and keepdim")
            kw["keepdim"] = kw.pop("keepdims")
        if "unbiased" in kw:
            if "correction" in kw:
                raise TypeError(f"{fn.__name__}: got both unbiased and correction")
            kw["correction"] = 1 if kw.pop("unbiased") else 0
        if takes_correction:
            if args and isinstance(args[0], bool):  # PyTorch's x.var(unbiased)
                if "correction" in kw:
                    raise TypeError(f"{fn.__name__}: got both unbiased and correction")
                kw["correction"] = 1 if args[0] else 0
                args = args[1:]
            if kw.get("correction", 0) is None:  # PyTorch's default, spelled None
                kw["correction"] = 1
        return fn(self, *args, **kw)

    return wrapper


def _cast_method(fn):
    """A cast method that takes PyTorch's ``memory_format=`` too (a
    channels-last one stores the values channels-last, as :meth:`Tensor.contiguous`)."""

    @functools.wraps(fn)
    def wrapper(self, memory_format=None):
        out = fn(self)
        fmt = layouts.check_memory_format(memory_format, fn.__name__, self.ndim)
        return out.contiguous(fmt) if fmt is not None and fmt.rank is not None else out

    return wrapper


for _name in (
    "float", "int", "bool", "half", "bfloat16", "double", "long", "short", "char", "byte",
    "cfloat", "cdouble",
):  # fmt: skip
    setattr(Tensor, _name, _cast_method(getattr(Tensor, _name)))


for _name in (
    "sum", "prod", "max", "min", "mean", "var", "std", "softmax", "log_softmax",
    "logsumexp", "argmax", "argmin", "any", "all", "amax", "amin", "count_nonzero",
    "cumsum", "cumprod", "cummax", "cummin", "logcumsumexp", "nansum", "nanmean",
    "var_mean", "std_mean",
):  # fmt: skip
    setattr(Tensor, _name, _torch_spellings(getattr(Tensor, _name)))


def cat(tensors, dim: int = 0) -> Tensor:
    """Join tensors along an existing ``dim`` (dtypes promote; one fused kernel
    for elementwise inputs): ``mlfuse.cat([a, b], dim=1)``."""
    ts = list(tensors)
    if not ts:
        raise ArgumentError("cat needs at least one tensor")
    for t in ts:
        if not isinstance(t, Tensor):
            raise ArgumentTypeError(f"cat: expected Tensors, got {type(t).__name__}")
    if any(t.dtype.kind == "c" for t in ts):
        from mlfuse import complex_tensors as _complex

        return _complex.cat(ts, dim)
    # PyTorch skips 1-d empty tensors whatever the others' shape (they still promote)
    kept = [t for t in ts if t.shape != (0,)]
    if kept and len(kept) < len(ts):
        dt = ts[0].dtype
        for t in ts[1:]:
            dt = dtypes.promote(dt, t.dtype)
        return cat([t.cast(dt) for t in kept], dim)
    nd = ts[0].ndim
    if nd == 0:
        raise DimError("cat: zero-dimensional tensors cannot be concatenated (use stack)")
    d = _norm_axis(dim, nd, "dim")
    for t in ts:
        if t.ndim != nd or any(
            a != b for i, (a, b) in enumerate(zip(t.shape, ts[0].shape)) if i != d
        ):
            raise ArgumentError(
                f"cat: shapes {' and '.join(str(t.shape) for t in ts)} differ outside dim {d}"
            )
    dt = ts[0].dtype
    for t in ts[1:]:
        dt = dtypes.promote(dt, t.dtype)
    ts = [t.cast(dt) for t in ts]
    total = sum(t.shape[d] for t in ts)
    parts = [t for t in ts if t.shape[d]]
    if len(parts) <= 1:
        if parts:
            return parts[0]
        return Tensor.zeros(ts[0].shape, dtype=dt, device=ts[0].device)
    out, start = None, 0
    for t in ts:
        n = t.shape[d]
        if n == 0:
            continue
        pads = tuple((start, total - start - n) if i == d else (0, 0) for i in range(nd))
        placed = t.pad(pads)
        if out is None:
            out = placed
        else:
            inside = Tensor.full(t.shape, True, dtypes.bool_, t.device).pad(pads, False)
            out = inside.where(placed, out)
        start += n
    assert out is not None
    return out


def _index_items(index) -> tuple:
    """The items of an index: a tuple is several, anything else one; a tuple
    inside it is a sequence index, as a list (``x[(0, 2), :]``)."""
    items = index if isinstance(index, tuple) else (index,)
    return tuple(list(i) if isinstance(i, tuple) else i for i in items)


def _fixed_rows(rows: np.ndarray, size: int, fill: int, what: str) -> np.ndarray:
    """The first ``size`` rows of an (n, k) int array, padded with ``fill``."""
    if not isinstance(size, (int, np.integer)) or isinstance(size, bool) or size < 0:
        raise ArgumentError(f"{what}: size must be a non-negative int, got {size!r}")
    out = np.full((int(size), rows.shape[1]), fill, np.int64)
    n = min(len(rows), int(size))
    out[:n] = rows[:n]
    return out


def meshgrid(*tensors, indexing: str = "ij") -> tuple[Tensor, ...]:
    """Coordinate grids of 1-d tensors, as ``torch.meshgrid``: ``mlfuse.meshgrid(x, y)``
    (one sequence is accepted too)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if not tensors:
        raise ArgumentError("meshgrid needs at least one tensor")
    return tensors[0].meshgrid(*tensors[1:], indexing=indexing)


def stack(tensors, dim: int = 0) -> Tensor:
    """Join tensors of one shape along a new ``dim``: ``mlfuse.stack([a, b])``."""
    ts = list(tensors)
    if not ts:
        raise ArgumentError("stack needs at least one tensor")
    for t in ts:
        if not isinstance(t, Tensor):
            raise ArgumentTypeError(f"stack: expected Tensors, got {type(t).__name__}")
        if t.shape != ts[0].shape:
            raise ArgumentError(
                "stack: every tensor must have one shape, got "
                + " and ".join(str(u.shape) for u in ts)
            )
    if any(t.dtype.kind == "c" for t in ts):
        from mlfuse import complex_tensors as _complex

        return _complex.stack(ts, dim)
    d = _norm_axis(dim, ts[0].ndim + 1, "dim")
    return cat([t.unsqueeze(d) for t in ts], d)


def _atleast(t: Tensor, nd: int) -> Tensor:
    """numpy's atleast_1d/2d/3d: a 0-d tensor becomes (1,)*nd, a 1-d (n,) becomes
    (1, n) or (1, n, 1), a 2-d (m, n) becomes (m, n, 1)."""
    if t.ndim >= nd:
        return t
    if t.ndim == 0:
        return t.reshape((1,) * nd)
    if t.ndim == 1:
        return t.reshape((1, t.shape[0]) + (1,) * (nd - 2))
    return t.reshape(t.shape + (1,))


def _tensor_list(tensors, what: str) -> list[Tensor]:
    ts = list(tensors)
    if not ts:
        raise ArgumentError(f"{what} needs at least one tensor")
    for t in ts:
        if not isinstance(t, Tensor):
            raise ArgumentTypeError(f"{what}: expected Tensors, got {type(t).__name__}")
    return ts


def hstack(tensors) -> Tensor:
    """Join along dim 1, or dim 0 when the tensors are 1-d (0-d ones count as
    1-d): ``mlfuse.hstack([a, b])``."""
    ts = [_atleast(t, 1) for t in _tensor_list(tensors, "hstack")]
    return cat(ts, 0 if ts[0].ndim == 1 else 1)


def vstack(tensors) -> Tensor:
    """Join along dim 0, 1-d tensors as rows: ``mlfuse.vstack([a, b])``."""
    return cat([_atleast(t, 2) for t in _tensor_list(tensors, "vstack")], 0)


def dstack(tensors) -> Tensor:
    """Join along dim 2 (inputs made at least 3-d as numpy's atleast_3d):
    ``mlfuse.dstack([a, b])``."""
    return cat([_atleast(t, 3) for t in _tensor_list(tensors, "dstack")], 2)


def _einsum_terms(equation: str, n_ops: int):
    eq = equation.replace(" ", "")
    if eq.count("->") > 1:
        raise ArgumentError(f"einsum: more than one '->' in {equation!r}")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != n_ops:
        raise ArgumentError(
            f"einsum: the equation {equation!r} has {len(terms)} operand terms for {n_ops} operands"
        )
    for t in terms + ([rhs] if arrow else []):
        rest = t.replace("...", "", 1)
        if "." in rest or not all(c.isalpha() and c.isascii() for c in rest):
            raise ArgumentError(
                f"einsum: bad term {t!r} in {equation!r}: use letters and at most one '...'"
            )
    return terms, (rhs if arrow else None)


def einsum(equation: str, *operands) -> Tensor:
    """Einstein summation: ``mlfuse.einsum("bij,bjk->bik", a, b)``,
    ``mlfuse.einsum("ii", m)`` (trace), ``mlfuse.einsum("...ij->...ji", x)``.

    Letters name dims; a letter repeated in one operand takes that diagonal;
    letters missing from the output are summed; ``...`` stands for broadcast
    dims (summed too when the output leaves it out, as PyTorch). Without ``->``
    the output is ``...`` then the letters used once, in alphabetical order
    (numpy's and PyTorch's rule). The operands are permuted,
    reshaped and expanded against each other, multiplied and summed: one fused
    contraction, differentiable."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise ArgumentError("einsum needs at least one operand")
    for t in operands:
        if not isinstance(t, Tensor):
            raise ArgumentTypeError(f"einsum: expected Tensors, got {type(t).__name__}")
    if any(t.dtype.kind == "c" for t in operands):
        from mlfuse import complex_tensors as _complex

        return _complex.einsum(equation, *operands)
    terms, out_term = _einsum_terms(equation, len(operands))
    # the ellipsis dims, aligned from the right across operands
    n_ell = 0
    for t, x in zip(terms, operands):
        named = len(t.replace("...", ""))
        if ("..." not in t and named != x.ndim) or ("..." in t and named > x.ndim):
            raise ArgumentError(
                f"einsum: term {t!r} names {named} dims but operand has shape {x.shape}"
            )
        if "..." in t:
            n_ell = max(n_ell, x.ndim - named)
    ell = [f".{i}" for i in range(n_ell)]
    ops: list[tuple[Tensor, list[str]]] = []
    for t, x in zip(terms, operands):
        if "..." in t:
            before, _, after = t.partition("...")
            e = x.ndim - len(before) - len(after)
            labels = list(before) + ell[n_ell - e :] + list(after)
            if e < n_ell:  # missing leading ellipsis dims broadcast
                x = x.reshape(x.shape[: len(before)] + (1,) * (n_ell - e) + x.shape[len(before) :])
                labels = list(before) + ell + list(after)
        else:
            labels = list(t)
        # a label repeated in one operand: its diagonal (moved to the end)
        while len(set(labels)) != len(labels):
            lab = next(c for c in labels if labels.count(c) > 1)
            i = labels.index(lab)
            j = labels.index(lab, i + 1)
            if x.shape[i] != x.shape[j]:
                raise ArgumentError(
                    f"einsum: label {lab!r} repeated in {t!r} over dims of sizes "
                    f"{x.shape[i]} and {x.shape[j]}"
                )
            x = x.diagonal(0, i, j)
            labels = [c for k, c in enumerate(labels) if k not in (i, j)] + [lab]
        ops.append((x, labels))
    seen = [c for _, labels in ops for c in labels]
    if out_term is None:
        written = "".join(terms).replace("...", "")
        out = ell + sorted(c for c in set(written) if written.count(c) == 1)
    else:
        before, dots, after = out_term.partition("...")
        # an output without '...' sums the ellipsis dims away (PyTorch's rule)
        out = list(before) + (ell if dots else []) + list(after)
        for c in out:
            if out.count(c) > 1:
                raise ArgumentError(f"einsum: output label {c!r} repeated in {equation!r}")
            if c not in seen:
                raise ArgumentError(f"einsum: output label {c!r} is in no input of {equation!r}")
    sizes: dict[str, int] = {}
    for x, labels in ops:
        for c, s in zip(labels, x.shape):
            if sizes.get(c, 1) not in (1, s) and s != 1:
                raise ArgumentError(
                    f"einsum: label {c!r} has sizes {sizes[c]} and {s} in {equation!r}"
                )
            if s != 1 or c not in sizes:
                sizes[c] = s
    # labels summed away that only one operand has are summed before multiplying
    summed = [c for c in dict.fromkeys(seen) if c not in out]
    shared = [c for c in summed if sum(c in labels for _, labels in ops) > 1]
    order = out + shared
    placed = []
    for x, labels in ops:
        alone = [i for i, c in enumerate(labels) if c in summed and c not in shared]
        if alone:
            x = x.sum(tuple(alone))
            labels = [c for i, c in enumerate(labels) if i not in alone]
        perm = sorted(range(len(labels)), key=lambda i: order.index(labels[i]))
        x = x.permute(perm) if labels else x
        labels = [labels[i] for i in perm]
        x = x.reshape(tuple(x.shape[labels.index(c)] if c in labels else 1 for c in order))
        placed.append(x)
    prod = placed[0]
    for x in placed[1:]:
        prod = prod * x
    full = tuple(sizes[c] for c in order)
    prod = prod._broadcast_to(full) if prod.shape != full else prod
    left = tuple(range(len(out), len(order)))
    if left:
        prod = prod.sum(left)
    want = operands[0].dtype
    for t in operands[1:]:
        want = dtypes.promote(want, t.dtype)
    return prod.cast(want) if prod.dtype != want and not want.is_bool else prod


def where(condition, input=None, other=None):  # noqa: A002 - PyTorch's names
    """``input`` where ``condition`` is true, else ``other`` (scalars allowed):
    ``mlfuse.where(x > 0, x, 0.0)``; with the condition alone, the indices of its
    true elements, one tensor per dim (``condition.nonzero(as_tuple=True)``)."""
    cond = condition if isinstance(condition, Tensor) else Tensor(condition)
    if input is None and other is None:
        return cond.nonzero(as_tuple=True)
    if input is None or other is None:
        raise ArgumentError("where: give both input and other, or neither")
    return cond.where(input, other)


def maximum(a, b) -> Tensor:
    """Elementwise maximum (NaN propagates): ``mlfuse.maximum(a, b)``."""
    return (a if isinstance(a, Tensor) else Tensor(a)).maximum(b)


def minimum(a, b) -> Tensor:
    """Elementwise minimum (NaN propagates): ``mlfuse.minimum(a, b)``."""
    return (a if isinstance(a, Tensor) else Tensor(a)).minimum(b)


def _nodes_of(tensors) -> list[Node]:
    """The graph nodes of ``tensors`` (a complex tensor's: both parts')."""
    out = []
    for t in tensors:
        if t.dtype.kind == "c":
            out.extend((t.real.node, t.imag.node))
        else:
            out.append(t.node)
    return out


def realize(*tensors: Tensor) -> None:
    """Compute all ``tensors`` in one schedule."""
    graph.realize(_nodes_of(tensors))


def schedule(*tensors: Tensor):
    """The kernels realizing ``tensors`` would run, without running them.

    Each item shows the kernel's ops, its iteration space, the bytes it reads
    and writes, and why each of its outputs is a separate buffer; the list's
    ``not_fused`` says which merges were refused and why (``print`` shows both).
    ``write_dot(path)`` and ``write_html(path)`` draw it: kernels, the buffers
    between them and the reason for each boundary.
    """
    from mlfuse.driver import Schedule

    nodes = graph.to_compute([t.node for t in tensors])
    if not nodes:
        return Schedule()
    g = graph.with_dynamic_scalars(graph.collect(nodes))
    return graph.compiled_for(g).items.copy()  # type: ignore[attr-defined]


def schedule_ir(*tensors: Tensor) -> str:
    """The kernel-dialect module (kernels and schedule) realizing ``tensors``."""
    nodes = graph.to_compute([t.node for t in tensors])
    if not nodes:
        return ""
    g = graph.with_dynamic_scalars(graph.collect(nodes))
    return str(graph.compiled_for(g).module)  # type: ignore[attr-defined]


def lazy_ir(*tensors: Tensor) -> str:
    """The lazy-dialect function ``tensors`` would be compiled from."""
    nodes = graph.to_compute([t.node for t in tensors])
    return str(graph.to_module(graph.collect(nodes))) if nodes else ""


class FrexpResult(NamedTuple):
    """``(mantissa, exponent)`` of :meth:`Tensor.frexp`."""

    mantissa: Tensor
    exponent: Tensor


class MinMaxResult(NamedTuple):
    """``(min, max)`` of :meth:`Tensor.aminmax`, as PyTorch's named tuple."""

    min: Tensor
    max: Tensor


# Lanczos' approximation of Gamma, g = 7 and 9 terms (lgamma)
_LANCZOS = (
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
    -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6,
    1.5056327351493116e-7,
)  # fmt: skip
# Bernoulli numbers B_2, B_4, ..., B_14 (polygamma's asymptotic series)
_BERNOULLI_2K = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6)


def _fmod_exact(a: Tensor, b: Tensor, p: int) -> Tensor:
    """C's fmod of float64 tensors holding values of ``p`` significant bits (24 for
    float32's, 53 for float64's), exactly: long division in steps of up to 2^44.
    Each step takes t = |b|·2^s (s: the exponent gap less 44, at least 0) and
    q = r / t rounded half up (by the reciprocal of |b| scaled to [1, 2), r
    scaled alike: q < 2^46 and its three roundings stay within 3/128, so q is the
    true quotient's floor or one more). fma(-q, t, r) is then exact (r - q·t
    lies in (-t, t), a multiple of t's last bit), and a negative result adds t
    back, exactly. Enough steps close any exponent gap (8 for float32's values,
    49 for float64's)."""
    step, gap = 44, (128 + 149 if p == 24 else 1024 + 1074)
    ax, ay = a.abs(), b.abs()

    def exponent(v: Tensor) -> Tensor:  # biased, a denormal's below 1 (v*2^54 is normal)
        field = (v.bitcast(dtypes.int64) >> 52) & 0x7FF
        if p == 24:  # float32 values are normal doubles
            return field
        low = (((v * 2.0**54).bitcast(dtypes.int64) >> 52) & 0x7FF) - 54
        return (field == 0).where(low, field)

    def scale(v: Tensor, e: Tensor) -> Tensor:  # v * 2^e, |e| < 3000, in exact steps
        if p == 24:  # |e| < 400 for float32 values: one factor
            return v * ((e + 1023) << 52).bitcast(dtypes.float64)
        third = e // 3
        for part in (third, third, e - 2 * third):
            v = v * ((part + 1023) << 52).bitcast(dtypes.float64)
        return v

    ey = exponent(ay)
    inv = 1 / scale(ay, 1023 - ey)  # |b| scaled to [1, 2): its reciprocal is finite
    r = ax
    for _ in range(-(-gap // step) + 1):
        sh = (exponent(r) - ey - step).maximum(0)
        t = scale(ay, sh)
        q = (scale(r, 1023 - ey - sh) * inv + 0.5).floor()  # r / t rounded: exact or 1 over
        r = (-q).fma(t, r)
        r = (r < 0).where(r + t, r)
    r = (r >= ay).where(r - ay, r)
    r = a.signbit().where(-r, r)  # the dividend's sign, -0 included
    bad = ax.isinf() | (ay == 0) | a.isnan() | b.isnan()
    return bad.where(math.nan, ay.isinf().where(a, r))


def _zeta_minus_one(k: int) -> float:
    """zeta(k) - 1 for k >= 2: the terms 2..29 summed, the rest by Euler-Maclaurin
    (the integral, half the first term, Bernoulli corrections to B_14); from k = 13
    the terms fall fast enough to be summed directly."""
    if k >= 13:
        return math.fsum(m**-k for m in range(2, 80))
    n = 30
    total = math.fsum(m**-k for m in range(2, n))
    tail = [n ** (1 - k) / (k - 1), 0.5 * n**-k]
    rising = 1.0  # k (k+1) ... (k + 2j - 2)
    for j, b in enumerate(_BERNOULLI_2K, start=1):
        rising *= (k + 2 * j - 2) * ((k + 2 * j - 3) if j > 1 else 1)
        tail.append(b / math.factorial(2 * j) * rising * n ** (-k - 2 * j + 1))
    return total + math.fsum(tail)


_EULER_GAMMA = 0.5772156649015329
_DIGAMMA_SERIES = [b / (2 * k) for k, b in enumerate(_BERNOULLI_2K, start=1)]
_LGAMMA2 = [1 - _EULER_GAMMA] + [(-1) ** k * _zeta_minus_one(k) / k for k in range(2, 40)]
"""Taylor coefficients of lgamma(2 + z), z^1 up: |z| <= 0.5 leaves terms below 4^-k."""


def _lgamma64(x: Tensor) -> Tensor:
    """lgamma of float64 ``x`` (see :meth:`Tensor.lgamma`)."""

    def positive(y: Tensor) -> Tensor:  # y >= 0.5
        near1 = y < 1.5
        z = near1.where(y - 1, y - 2).maximum(-0.5).minimum(0.5)
        series = Tensor.full((), _LGAMMA2[-1], y.dtype, y.device)
        for c in reversed(_LGAMMA2[:-1]):
            series = series * z + c
        series = series * z  # lgamma(2 + z)
        taylor = near1.where(series - z.log1p(), series)  # lgamma(1 + z): less log(1 + z)
        zl = y.maximum(2.5) - 1
        acc = Tensor.full((), _LANCZOS[0], y.dtype, y.device)
        for k, c in enumerate(_LANCZOS[1:], start=1):
            acc = acc + c / (zl + k)
        t = zl + 7.5
        lanczos = 0.5 * math.log(2 * math.pi) + (zl + 0.5) * t.log() - t + acc.log()
        return (y < 2.5).where(taylor, lanczos)

    refl = x < 0.5
    pos = positive(refl.where(1 - x, x))
    r = x - x.round()  # |sin(pi x)| = |sin(pi r)|, r exact and small near the integers
    refl_val = (math.pi / (r * math.pi).sin().abs()).log() - pos
    out = refl.where(refl_val, pos)
    out = (x.abs() < 2.0**-52).where(-x.abs().log(), out)  # -log|x| - gamma x: gamma x is lost
    pole = (x <= 0) & (x == x.floor())
    return pole.where(math.inf, x.isinf().where(math.inf, out))


# PyTorch's other names for methods mlfuse has
_ALIASES = {
    "arccos": "acos", "arccosh": "acosh", "arcsin": "asin", "arcsinh": "asinh",
    "arctan": "atan", "arctan2": "atan2", "arctanh": "atanh", "divide": "div",
    "multiply": "mul", "subtract": "sub", "negative": "neg", "fix": "trunc", "sgn": "sign",
}  # fmt: skip


def _alias_method(name: str, target: str):
    fn = getattr(Tensor, target)

    @functools.wraps(fn)
    def alias(self, *args, **kw):
        return getattr(self, target)(*args, **kw)

    alias.__name__ = alias.__qualname__ = name
    alias.__doc__ = f"PyTorch's other name for :meth:`{target}`: ``x.{name}(...)``."
    return alias


for _name, _target in _ALIASES.items():
    setattr(Tensor, _name, _alias_method(_name, _target))


# ``x.name_(...)`` writes ``x.name(...)`` into x, for these methods (shape kept,
# result cast back to x's dtype as PyTorch's in-place ops do)
_INPLACE = (
    "abs", "absolute", "acos", "acosh", "asin", "asinh", "atan", "atanh", "atan2", "arccos",
    "arccosh", "arcsin", "arcsinh", "arctan", "arctan2", "arctanh", "ceil", "floor", "round",
    "trunc", "fix", "frac", "cos", "cosh", "sin", "sinh", "tan", "tanh", "sigmoid", "exp",
    "exp2", "expm1", "log", "log2", "log10", "log1p", "logit", "sqrt", "rsqrt", "square",
    "reciprocal", "neg", "negative", "sign", "sgn", "erf", "erfc", "erfinv", "deg2rad",
    "rad2deg", "lgamma", "digamma", "polygamma", "mvlgamma", "i0", "sinc", "heaviside",
    "nan_to_num", "hypot", "copysign", "xlogy", "ldexp", "fmod", "remainder", "float_power",
    "floor_divide", "true_divide", "divide", "multiply", "subtract", "clamp_min",
    "clamp_max", "clip", "lerp", "addcmul", "addcdiv", "addmm", "addmv", "addbmm",
    "baddbmm", "addr", "tril", "triu", "renorm", "masked_fill", "masked_scatter",
    "index_add", "index_copy", "index_fill", "index_reduce", "scatter", "scatter_add",
    "scatter_reduce", "put", "logical_and", "logical_or", "logical_xor", "logical_not",
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift",
    "bitwise_right_shift", "eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal",
    "less", "less_equal", "not_equal", "gcd", "lcm", "fmax", "fmin", "cumsum", "cumprod",
    "silu", "gelu", "elu", "celu", "selu", "leaky_relu", "hardtanh", "hardsigmoid",
    "hardswish", "relu6", "mish", "softplus", "threshold", "nextafter", "conj_physical",
)  # fmt: skip


def _inplace_method(name: str):
    fn = getattr(Tensor, name)

    @functools.wraps(fn)
    def method(self, *args, **kw):
        return self._inplace(getattr(self, name)(*args, **kw), name + "_")

    method.__name__ = method.__qualname__ = name + "_"
    method.__doc__ = f"In place :meth:`{name}`: ``x.{name}_(...)`` writes the result into x."
    return method


for _name in _INPLACE:
    if hasattr(Tensor, _name) and not hasattr(Tensor, _name + "_"):
        setattr(Tensor, _name + "_", _inplace_method(_name))


def _view_inplace(name: str):
    fn = getattr(Tensor, name)

    @functools.wraps(fn)
    def method(self, *args, **kw):
        # this tensor becomes the view of what it was; writes through it still
        # reach the tensor it was taken from
        before = Tensor(self.node)
        if getattr(self, "_base", None) is not None:
            before._base = self._base
            _add_view(self._base[0], before)
        view = getattr(before, name)(*args, **kw)
        self._set_node(view.node)
        self._base = getattr(view, "_base", None)
        if self._base is not None:
            _add_view(self._base[0], self)
        return self

    method.__name__ = method.__qualname__ = name + "_"
    method.__doc__ = f"In place :meth:`{name}`: ``x.{name}_(...)`` makes x that view of itself."
    return method


for _name in ("unsqueeze", "squeeze", "transpose", "t", "swapaxes", "swapdims", "as_strided"):
    setattr(Tensor, _name + "_", _view_inplace(_name))
