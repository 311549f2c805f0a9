"""Conformance: every op of the tensor API against numpy in float64 (and
against PyTorch where it is installed) over the inputs that break front ends:
0-d tensors, size-0 and size-1 dims, broadcasting, negative axes,
non-contiguous inputs (transposed, sliced, expanded), a million elements,
NaN/inf/-0.0/denormals and integer extremes.

Each table row names the op once; the layouts multiply it. Sizes stay small
(compile time dominates) except for the one large layout.
"""

from __future__ import annotations

import math
import zlib
import warnings

import numpy as np
import pytest

import mlfuse
from mlfuse import Tensor

try:  # PyTorch is optional: its columns are skipped without it
    import torch
except ImportError:  # pragma: no cover - depends on the machine
    torch = None

F32, F64 = np.float32, np.float64

SPECIAL = np.array(
    [
        np.nan,
        np.inf,
        -np.inf,
        -0.0,
        0.0,
        1e-40,
        -1e-40,
        0.5,
        -0.5,
        1.5,
        -2.5,
        3.5,
        7.0,
        -20.0,
        30.0,
    ],
    F32,
)


def _rng(key: int) -> np.random.Generator:
    return np.random.default_rng(1000 + key)


# layout name -> (base shape, how the op's input is cut from the base)
LAYOUTS = {
    "0d": ((), lambda t: t),
    "empty": ((0, 3), lambda t: t),
    "size1": ((1, 1), lambda t: t),
    "T": ((3, 5), lambda t: t.T),
    "slice": ((6, 7), lambda t: t[::2, 1:]),
    "expand": ((1, 4), lambda t: t.expand(3, 4)),
    "neg-step": ((9,), lambda t: t[::-3]),
}


def _cut_np(name, a):
    return {
        "0d": lambda x: x,
        "empty": lambda x: x,
        "size1": lambda x: x,
        "T": lambda x: x.T,
        "slice": lambda x: x[::2, 1:],
        "expand": lambda x: np.broadcast_to(x, (3, 4)),
        "neg-step": lambda x: x[::-3],
    }[name](a)


def _close(got: np.ndarray, want: np.ndarray, rtol: float, atol: float, what: str) -> None:
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    if want.dtype.kind == "f":
        np.testing.assert_allclose(
            got.astype(F64), want, rtol=rtol, atol=atol, equal_nan=True, err_msg=what
        )
        # signed zeros and infinities must agree too
        both = np.isfinite(want) & (want == 0)
        assert (np.signbit(got[both]) == np.signbit(want[both])).all() or rtol > 1e-4, what
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


# ---------------------------------------------------------------------------
# unary elementwise
# ---------------------------------------------------------------------------


def _erf(x):
    return np.vectorize(math.erf, otypes=[F64])(x)


def _gelu(x):
    return 0.5 * x * (1 + _erf(x / math.sqrt(2)))


def _np_round(x):
    return np.round(x)  # half to even, as torch.round


# name -> (mlfuse call, numpy float64 reference, torch call or None, input range, rtol)
UNARY = {
    "neg": (lambda t: -t, np.negative, lambda t: -t, (-5, 5), 0),
    "abs": (lambda t: t.abs(), np.abs, torch and torch.abs, (-5, 5), 0),
    "exp": (lambda t: t.exp(), np.exp, torch and torch.exp, (-20, 20), 2e-7),
    "exp2": (lambda t: t.exp2(), np.exp2, torch and torch.exp2, (-20, 20), 2e-7),
    "log": (lambda t: t.log(), np.log, torch and torch.log, (0.01, 50), 2e-7),
    "log2": (lambda t: t.log2(), np.log2, torch and torch.log2, (0.01, 50), 2e-7),
    "sqrt": (lambda t: t.sqrt(), np.sqrt, torch and torch.sqrt, (0, 50), 2e-7),
    "rsqrt": (
        lambda t: t.rsqrt(),
        lambda x: 1 / np.sqrt(x),
        torch and torch.rsqrt,
        (0.1, 50),
        3e-7,
    ),
    "reciprocal": (
        lambda t: t.reciprocal(),
        lambda x: 1 / x,
        torch and torch.reciprocal,
        (0.1, 5),
        2e-7,
    ),
    "sin": (lambda t: t.sin(), np.sin, torch and torch.sin, (-10, 10), 2e-6),
    "cos": (lambda t: t.cos(), np.cos, torch and torch.cos, (-10, 10), 2e-6),
    "tan": (lambda t: t.tan(), np.tan, torch and torch.tan, (-1.5, 1.5), 2e-6),
    "floor": (lambda t: t.floor(), np.floor, torch and torch.floor, (-5, 5), 0),
    "ceil": (lambda t: t.ceil(), np.ceil, torch and torch.ceil, (-5, 5), 0),
    "round": (lambda t: t.round(), _np_round, torch and torch.round, (-5, 5), 0),
    "trunc": (lambda t: t.trunc(), np.trunc, torch and torch.trunc, (-5, 5), 0),
    "sign": (lambda t: t.sign(), np.sign, torch and torch.sign, (-5, 5), 0),
    "square": (lambda t: t.square(), np.square, torch and torch.square, (-5, 5), 2e-7),
    "relu": (
        lambda t: t.relu(),
        lambda x: np.maximum(x, 0) + 0.0,
        torch and torch.relu,
        (-5, 5),
        0,
    ),
    "sigmoid": (
        lambda t: t.sigmoid(),
        lambda x: 1 / (1 + np.exp(-x)),
        torch and torch.sigmoid,
        (-20, 20),
        2e-6,
    ),
    "tanh": (lambda t: t.tanh(), np.tanh, torch and torch.tanh, (-8, 8), 2e-6),
    "erf": (lambda t: t.erf(), _erf, torch and torch.erf, (-4, 4), 2e-6),
    "gelu": (lambda t: t.gelu(), _gelu, torch and torch.nn.functional.gelu, (-6, 6), 2e-6),
    "silu": (
        lambda t: t.silu(),
        lambda x: x / (1 + np.exp(-x)),
        torch and torch.nn.functional.silu,
        (-8, 8),
        2e-6,
    ),
    "softplus": (
        lambda t: t.softplus(),
        lambda x: np.where(x > 20, x, np.log1p(np.exp(x))),
        torch and torch.nn.functional.softplus,
        (-8, 25),
        2e-6,
    ),
    "elu": (
        lambda t: t.elu(),
        lambda x: np.where(x > 0, x, np.expm1(x)),
        torch and torch.nn.functional.elu,
        (-5, 5),
        2e-6,
    ),
    "leaky_relu": (
        lambda t: t.leaky_relu(),
        lambda x: np.where(x > 0, x, 0.01 * x),
        torch and torch.nn.functional.leaky_relu,
        (-5, 5),
        2e-7,
    ),
    "isnan": (lambda t: t.isnan(), np.isnan, torch and torch.isnan, (-5, 5), 0),
    "isinf": (lambda t: t.isinf(), np.isinf, torch and torch.isinf, (-5, 5), 0),
    "isfinite": (lambda t: t.isfinite(), np.isfinite, torch and torch.isfinite, (-5, 5), 0),
    "logical_not": (
        lambda t: t.logical_not(),
        np.logical_not,
        torch and torch.logical_not,
        (-1, 1),
        0,
    ),
}


def _unary_input(name, shape, key):
    lo, hi = UNARY[name][3]
    x = _rng(key).uniform(lo, hi, shape).astype(F32)
    if name in ("round",):  # exact halves exercise ties
        x = (np.round(x * 2) / 2).astype(F32)
    return x


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("name", list(UNARY))
def test_unary(name, layout):
    fn, ref, _, _, rtol = UNARY[name]
    shape, cut = LAYOUTS[layout]
    x = _unary_input(name, shape, zlib.crc32(name.encode()) % 97)
    got = fn(cut(Tensor(x))).numpy()
    with np.errstate(all="ignore"):
        want = np.asarray(ref(_cut_np(layout, x).astype(F64)))
    if want.dtype.kind == "f":
        want = want.astype(F32).astype(F64)  # the float32 answer, correctly rounded
    _close(got, want, max(rtol, 1e-7) if rtol else 0, 1e-30 if rtol else 0, f"{name} {layout}")


@pytest.mark.parametrize("name", list(UNARY))
def test_unary_special_values(name):
    """NaN, +-inf, -0.0, denormals: numpy's float64 answer rounded to float32."""
    fn, ref, _, _, rtol = UNARY[name]
    got = fn(Tensor(SPECIAL)).numpy()
    with np.errstate(all="ignore"):
        want = np.asarray(ref(SPECIAL.astype(F64)))
    if want.dtype.kind == "f":
        want = want.astype(F32).astype(F64)
    _close(got, want, max(rtol, 1e-6), 1e-37, f"{name} special")


TORCH_DIFFERS = {"sign", "relu"}
"""Where numpy and PyTorch disagree we follow numpy: sign(NaN) is NaN (PyTorch:
0); relu(-0.0) is 0.0, numpy's maximum(-0.0, 0) (PyTorch: -0.0)."""


@pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
@pytest.mark.parametrize("name", [n for n, row in UNARY.items() if row[2] is not None])
def test_unary_against_torch(name):
    fn, _, tfn, _, rtol = UNARY[name]
    x = np.concatenate([_unary_input(name, (64,), 3), SPECIAL])
    if name in TORCH_DIFFERS:
        x = x[~np.isnan(x) & ~((x == 0) & np.signbit(x))]
    got = fn(Tensor(x)).numpy()
    want = tfn(torch.from_numpy(x.astype(F64))).numpy()  # PyTorch's float64 answer
    if want.dtype.kind == "f":
        want = want.astype(F32)
    _close(got, want.astype(F64) if want.dtype.kind == "f" else want, max(rtol, 1e-6), 1e-37, name)


def test_unary_on_a_million_elements():
    x = _rng(7).uniform(-10, 10, (1000, 1001)).astype(F32)
    got = (Tensor(x).sin() * Tensor(x).sigmoid() + Tensor(x).tanh()).numpy()
    x64 = x.astype(F64)
    want = np.sin(x64) / (1 + np.exp(-x64)) + np.tanh(x64)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------
# binary elementwise, with broadcasting
# ---------------------------------------------------------------------------

BINARY = {
    "add": (lambda a, b: a + b, np.add),
    "sub": (lambda a, b: a - b, np.subtract),
    "mul": (lambda a, b: a * b, np.multiply),
    "div": (lambda a, b: a / b, np.true_divide),
    "floordiv": (lambda a, b: a // b, np.floor_divide),
    "mod": (lambda a, b: a % b, np.mod),
    "pow": (lambda a, b: a.abs() ** b, lambda a, b: np.abs(a) ** b),
    "maximum": (lambda a, b: a.maximum(b), np.maximum),
    "minimum": (lambda a, b: a.minimum(b), np.minimum),
    "lt": (lambda a, b: a < b, np.less),
    "le": (lambda a, b: a <= b, np.less_equal),
    "eq": (lambda a, b: a == b, np.equal),
    "ne": (lambda a, b: a != b, np.not_equal),
    "lerp": (lambda a, b: a.lerp(b, 0.25), lambda a, b: a + 0.25 * (b - a)),
    "logical_and": (lambda a, b: a.logical_and(b), np.logical_and),
    "logical_or": (lambda a, b: a.logical_or(b), np.logical_or),
    "logical_xor": (lambda a, b: a.logical_xor(b), np.logical_xor),
}

BROADCASTS = {
    "same": ((3, 4), (3, 4)),
    "row-col": ((3, 1), (1, 4)),
    "scalar-0d": ((), (5,)),
    "empty": ((0, 3), (1, 3)),
    "rank": ((2, 3, 4), (4,)),
}


@pytest.mark.parametrize("bcast", list(BROADCASTS))
@pytest.mark.parametrize("name", list(BINARY))
def test_binary_float(name, bcast):
    fn, ref = BINARY[name]
    sa, sb = BROADCASTS[bcast]
    a = _rng(1).uniform(-4, 4, sa).astype(F32)
    b = _rng(2).uniform(0.5, 3, sb).astype(F32) * np.where(_rng(3).random(sb) < 0.5, -1, 1).astype(
        F32
    )
    got = fn(Tensor(a), Tensor(b)).numpy()
    with np.errstate(all="ignore"):
        want = np.asarray(ref(a.astype(F64), b.astype(F64)))
    if want.dtype.kind == "f":
        want = want.astype(F32).astype(F64)
    _close(got, want, 3e-6, 1e-6, f"{name} {bcast}")


@pytest.mark.parametrize(
    "name", ["add", "sub", "mul", "floordiv", "mod", "maximum", "minimum", "lt", "eq"]
)
@pytest.mark.parametrize("dt", [np.int32, np.int64])
def test_binary_integer_extremes(name, dt):
    """Integer arithmetic wraps like numpy (and PyTorch); // and % round toward -inf."""
    info = np.iinfo(dt)
    a = np.array([info.min, info.max, -7, 7, -1, 0, 5, info.min], dt)
    b = np.array([1, 1, 2, -2, 3, 4, -5, -1], dt)
    if name in ("floordiv", "mod"):
        a, b = a[:-1], b[:-1]  # INT_MIN // -1 overflows (numpy warns, torch traps)
    fn, ref = BINARY[name]
    with np.errstate(all="ignore"):
        want = ref(a, b)
    got = fn(Tensor(a), Tensor(b)).numpy()
    np.testing.assert_array_equal(got, want, err_msg=f"{name} {dt.__name__}")


def test_binary_non_contiguous_operands():
    a = _rng(4).standard_normal((5, 6)).astype(F32)
    b = _rng(5).standard_normal((6, 5)).astype(F32)
    got = (
        Tensor(a)[::-1, 1::2] * Tensor(b).T[::-1, 1::2] + Tensor(a[:1]).expand(5, 6)[:, ::2]
    ).numpy()
    want = a[::-1, 1::2] * b.T[::-1, 1::2] + np.broadcast_to(a[:1], (5, 6))[:, ::2]
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_where_module_function_and_scalars():
    c = _rng(6).random((3, 4)) < 0.5
    x = _rng(7).standard_normal((3, 4)).astype(F32)
    np.testing.assert_array_equal(
        mlfuse.where(Tensor(c), Tensor(x), 0.0).numpy(), np.where(c, x, 0)
    )
    np.testing.assert_array_equal(
        mlfuse.where(Tensor(c), 1.0, Tensor(x)).numpy(), np.where(c, 1, x)
    )


# ---------------------------------------------------------------------------
# reductions over any axes
# ---------------------------------------------------------------------------

REDUCE = {
    "sum": (lambda t, ax, kd: t.sum(ax, kd), lambda x, ax, kd: x.sum(ax, keepdims=kd)),
    "prod": (lambda t, ax, kd: t.prod(ax, kd), lambda x, ax, kd: x.prod(ax, keepdims=kd)),
    "max": (lambda t, ax, kd: t.max(ax, kd), lambda x, ax, kd: x.max(ax, keepdims=kd)),
    "min": (lambda t, ax, kd: t.min(ax, kd), lambda x, ax, kd: x.min(ax, keepdims=kd)),
    "mean": (lambda t, ax, kd: t.mean(ax, kd), lambda x, ax, kd: x.mean(ax, keepdims=kd)),
    "var": (lambda t, ax, kd: t.var(ax, kd), lambda x, ax, kd: x.var(ax, keepdims=kd, ddof=1)),
    "std": (lambda t, ax, kd: t.std(ax, kd), lambda x, ax, kd: x.std(ax, keepdims=kd, ddof=1)),
    "logsumexp": (
        lambda t, ax, kd: t.logsumexp(ax, kd),
        lambda x, ax, kd: np.log(np.exp(x).sum(ax, keepdims=kd)),
    ),
    "any": (
        lambda t, ax, kd: (t > 0.5).any(ax, kd),
        lambda x, ax, kd: (x > 0.5).any(ax, keepdims=kd),
    ),
    "all": (
        lambda t, ax, kd: (t > -0.9).all(ax, kd),
        lambda x, ax, kd: (x > -0.9).all(ax, keepdims=kd),
    ),
    "norm": (
        lambda t, ax, kd: t.norm(dim=ax, keepdim=kd),
        lambda x, ax, kd: np.sqrt((x * x).sum(ax, keepdims=kd)),
    ),
}

AXES = [None, 0, -1, (0, 2), (-1, 0)]


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("name", list(REDUCE))
def test_reduce(name, axis, keepdim):
    fn, ref = REDUCE[name]
    x = _rng(8).uniform(-1, 1, (3, 4, 5)).astype(F32)
    base = Tensor(np.ascontiguousarray(x.transpose(2, 1, 0))).permute(2, 1, 0)  # non-contiguous
    got = fn(base, axis, keepdim).numpy()
    want = np.asarray(ref(x.astype(F64), axis, keepdim))
    _close(got, want, 2e-6, 2e-6, f"{name} {axis} {keepdim}")


@pytest.mark.parametrize("name", ["sum", "prod", "mean", "any", "all"])
def test_reduce_empty_axis(name):
    fn, ref = REDUCE[name]
    x = np.zeros((0, 3), F32)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = np.asarray(ref(x.astype(F64), 0, False))
    _close(fn(Tensor(x), 0, False).numpy(), want, 0, 0, name)


@pytest.mark.parametrize("name", ["max", "min", "argmax", "argmin"])
def test_reduce_empty_axis_without_identity_is_refused(name):
    t = Tensor(np.zeros((0, 3), F32))
    with pytest.raises((ValueError, IndexError), match="empty"):
        getattr(t, name)(0)


def test_reductions_propagate_nan_like_numpy():
    x = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, -np.inf]], F32)
    t = Tensor(x)
    for name in ("sum", "max", "min", "mean"):
        np.testing.assert_array_equal(
            getattr(t, name)(1).numpy(), getattr(np, name)(x.astype(F64), 1).astype(F32)
        )
    assert t.argmax(1).tolist() == [1, 1]  # NaN is the maximum, as in PyTorch
    assert t.argmin(1).tolist() == [1, 2]


@pytest.mark.parametrize("dt", [np.int32, np.int64])
def test_integer_reductions_at_the_extremes(dt):
    info = np.iinfo(dt)
    x = np.array([[info.min, 3, info.max], [0, -1, 1]], dt)
    t = Tensor(x)
    np.testing.assert_array_equal(t.max(1).numpy(), x.max(1))
    np.testing.assert_array_equal(t.min(1).numpy(), x.min(1))
    np.testing.assert_array_equal(t.min(0).numpy(), x.min(0))
    s = t.sum(1)
    assert s.dtype == mlfuse.int64
    np.testing.assert_array_equal(s.numpy(), x.astype(np.int64).sum(1))
    np.testing.assert_array_equal(t.argmax(1).numpy(), x.argmax(1))
    np.testing.assert_array_equal(t.argmin(1).numpy(), x.argmin(1))


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_arg_reductions(axis):
    x = _rng(9).integers(-3, 3, (6, 7)).astype(F32)  # many ties: the first index wins
    for name in ("argmax", "argmin"):
        got = getattr(Tensor(x), name)(axis).numpy()
        np.testing.assert_array_equal(got, getattr(np, name)(x, axis), err_msg=f"{name} {axis}")
    got = Tensor(x).argmax(dim=1, keepdim=True).numpy()
    np.testing.assert_array_equal(got, x.argmax(1)[:, None])


def test_reductions_on_a_million_elements():
    x = _rng(10).uniform(-1, 1, (1024, 1024)).astype(F32)
    x64 = x.astype(F64)
    t = Tensor(x)
    np.testing.assert_allclose(t.sum().item(), x64.sum(), rtol=1e-5, atol=1e-2)
    np.testing.assert_allclose(t.sum(0).numpy(), x64.sum(0), rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(t.T.max(1).numpy(), x64.max(0))
    np.testing.assert_array_equal(t.argmax(1).numpy(), x.argmax(1))


def test_torch_spellings_of_axes():
    x = _rng(11).standard_normal((3, 4, 5)).astype(F32)
    t = Tensor(x)
    np.testing.assert_allclose(
        t.sum(dim=1, keepdims=True).numpy(), x.sum(1, keepdims=True), rtol=1e-6
    )
    np.testing.assert_allclose(t.mean(dim=(0, -1)).numpy(), x.astype(F64).mean((0, 2)), rtol=1e-6)
    np.testing.assert_allclose(t.softmax(dim=-1).numpy().sum(-1), np.ones((3, 4)), rtol=1e-6)
    np.testing.assert_allclose(t.max(dim=2).numpy(), x.max(2))
    with pytest.raises(TypeError, match="dim"):
        t.sum(1, dim=1)


@pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "mean", "var", "std", "logsumexp"])
def test_reduce_against_torch(name):
    x = _rng(12).uniform(-1, 1, (3, 4, 5)).astype(F32)
    got = getattr(Tensor(x), name)(1).numpy()
    tx = torch.from_numpy(x)
    want = getattr(torch, name)(tx, 1)
    want = (want[0] if isinstance(want, tuple) else want).numpy()
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6)


# ---------------------------------------------------------------------------
# shapes
# ---------------------------------------------------------------------------


def test_cat_stack_split_chunk_on_views():
    a = _rng(13).standard_normal((4, 6)).astype(F32)
    ta = Tensor(a)
    parts = [ta.T[:, :2], ta.T[:, 2:3], ta.T[::-1, 3:]]
    np.testing.assert_array_equal(
        mlfuse.cat(parts, dim=1).numpy(),
        np.concatenate([a.T[:, :2], a.T[:, 2:3], a.T[::-1, 3:]], 1),
    )
    np.testing.assert_array_equal(
        mlfuse.stack([ta[0], ta[1] * 2], dim=-1).numpy(), np.stack([a[0], a[1] * 2], -1)
    )
    for got, want in zip(ta.split(4, dim=1), np.split(a, [4], 1)):
        np.testing.assert_array_equal(got.numpy(), want)
    for got, want in zip(ta.chunk(3, 1), np.split(a, 3, 1)):
        np.testing.assert_array_equal(got.numpy(), want)


def test_shape_ops_match_numpy():
    a = _rng(14).standard_normal((3, 4)).astype(F32)
    t = Tensor(a)
    np.testing.assert_array_equal(t.tril().numpy(), np.tril(a))
    np.testing.assert_array_equal(t.triu(1).numpy(), np.triu(a, 1))
    np.testing.assert_array_equal(t.roll(1, 0).numpy(), np.roll(a, 1, 0))
    np.testing.assert_array_equal(t.roll((1, -2), (0, 1)).numpy(), np.roll(a, (1, -2), (0, 1)))
    np.testing.assert_array_equal(t.repeat(2, 1).numpy(), np.tile(a, (2, 1)))
    np.testing.assert_array_equal(t.tile(2).numpy(), np.tile(a, 2))
    np.testing.assert_array_equal(t.unflatten(1, (2, 2)).numpy(), a.reshape(3, 2, 2))
    np.testing.assert_array_equal(t.pad((1, 2)).numpy(), np.pad(a, ((0, 0), (1, 2))))
    np.testing.assert_array_equal(
        Tensor([0, 2, 1]).one_hot(3).numpy(), np.eye(3, dtype=np.int64)[[0, 2, 1]]
    )
    np.testing.assert_array_equal(t.flip(-1).numpy(), a[:, ::-1])


def test_indexing_with_tensors_and_lists():
    a = _rng(15).standard_normal((5, 6)).astype(F32)
    t = Tensor(a)
    idx = np.array([4, 0, -1, 2])
    np.testing.assert_array_equal(t[Tensor(idx)].numpy(), a[idx])
    np.testing.assert_array_equal(t[:, [1, 1, 5]].numpy(), a[:, [1, 1, 5]])
    np.testing.assert_array_equal(t[[0, 2], [1, 3]].numpy(), a[[0, 2], [1, 3]])
    np.testing.assert_array_equal(t.T[Tensor(idx[:2])].numpy(), a.T[idx[:2]])
    mask = a > 0
    np.testing.assert_array_equal(t[Tensor(mask)].numpy(), a[mask])
    np.testing.assert_array_equal(
        t.gather(1, Tensor(np.array([[0], [5], [2], [1], [3]]))).numpy(),
        np.take_along_axis(a, np.array([[0], [5], [2], [1], [3]]), 1),
    )


def test_setitem_basic_and_advanced():
    a = np.arange(20, dtype=F32).reshape(4, 5)
    t = Tensor(a).realize()
    t[1:3, ::2] = 0.0
    t[Tensor(np.array([3]))] = -1.0
    ref = a.copy()
    ref[1:3, ::2] = 0
    ref[[3]] = -1
    np.testing.assert_array_equal(t.numpy(), ref)


# ---------------------------------------------------------------------------
# scans
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_scans(axis):
    x = _rng(16).uniform(0.5, 1.5, (4, 7)).astype(F32)
    t = Tensor(x).T.T  # through a view
    np.testing.assert_allclose(t.cumsum(axis).numpy(), np.cumsum(x.astype(F64), axis), rtol=1e-6)
    np.testing.assert_allclose(t.cumprod(axis).numpy(), np.cumprod(x.astype(F64), axis), rtol=1e-5)
    xi = _rng(17).integers(-5, 5, (4, 7)).astype(np.int32)
    s = Tensor(xi).cumsum(axis)
    assert s.dtype == mlfuse.int64
    np.testing.assert_array_equal(s.numpy(), np.cumsum(xi, axis, dtype=np.int64))


# ---------------------------------------------------------------------------
# dtypes
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("dt", ["float16", "bfloat16", "int8", "uint8", "int16", "int32", "int64"])
def test_small_dtypes_round_trip_and_add(dt):
    d = getattr(mlfuse, dt)
    vals = np.array([0, 1, 2, 3, 100, 127], F32)
    t = Tensor(vals).to(d)
    assert t.dtype == d
    got = (t + t).float().numpy()
    want = vals + vals
    if dt == "int8":
        want = ((want + 128) % 256) - 128  # wraps
    if dt == "uint8":
        want = want % 256
    np.testing.assert_array_equal(got, want)


# ---------------------------------------------------------------------------
# every public name documents itself, with an example
# ---------------------------------------------------------------------------


def _public(owner):
    import inspect

    for name in sorted(dir(owner)):
        if name.startswith("_"):
            continue
        attr = inspect.getattr_static(owner, name)
        if isinstance(attr, property):
            attr = attr.fget
        attr = getattr(attr, "__func__", attr)
        if callable(attr) or inspect.isfunction(attr):
            if inspect.isclass(attr) or inspect.ismodule(attr):
                continue
            yield name, attr


def test_every_public_tensor_method_has_a_docstring_with_an_example():
    missing = [n for n, f in _public(Tensor) if not f.__doc__ or "``" not in f.__doc__]
    assert not missing, f"Tensor methods without a docstring example: {missing}"


def test_every_public_function_has_a_docstring():
    import importlib

    mods = [mlfuse] + [
        importlib.import_module(f"mlfuse.{m}")
        for m in ("nn.functional", "linalg", "special", "func")
    ]
    missing = [
        f"{m.__name__}.{n}"
        for m in mods
        for n, f in _public(m)
        if getattr(f, "__module__", "").startswith("mlfuse") and not f.__doc__
    ]
    assert not missing, f"functions without a docstring: {missing}"


# ---------------------------------------------------------------------------
# bad arguments are refused at the call, naming the argument and the shapes
# ---------------------------------------------------------------------------

_T = np.zeros((3, 4), F32)

BAD = [
    (lambda t: t.argmax(2), ValueError, r"dim 2 is out of range for a tensor of 2 dims"),
    (
        lambda t: t.split([1, 2], 1),
        ValueError,
        r"sizes \[1, 2\] do not add up to dim 1 of \(3, 4\)",
    ),
    (
        lambda t: mlfuse.cat([t, t.T], 0),
        ValueError,
        r"shapes \(3, 4\) and \(4, 3\) differ outside dim 0",
    ),
    (lambda t: mlfuse.stack([t, t.T]), ValueError, r"one shape, got \(3, 4\) and \(4, 3\)"),
    (lambda t: t.repeat(2), ValueError, r"1 sizes for a tensor of 2 dims"),
    (lambda t: t.unflatten(1, (3, 2)), ValueError, r"\(3, 2\) do not multiply to 4"),
    (lambda t: t.one_hot(3), TypeError, r"one_hot needs an integer tensor, got float32"),
    (
        lambda t: t.gather(1, Tensor(np.zeros(3, np.int64))),
        ValueError,
        r"index \(3,\) must have the rank",
    ),
    (lambda t: t[Tensor(np.array([5]))], IndexError, r"index 5 is out of bounds"),
    (lambda t: t[:, [0, -5]], IndexError, r"index -5 is out of bounds"),
    (lambda t: t.narrow(1, 3, 2), IndexError, r"\[3, 5\) is out of range for dim 1 of size 4"),
    (lambda t: t.pad((1, 2, 3)), ValueError, r"even number of amounts"),
    (lambda t: t.cumsum(3), ValueError, r"dim 3 is out of range"),
    (lambda t: t.clamp(), ValueError, r"at least one of min and max"),
    (lambda t: t.gelu("fast"), ValueError, r"approximate must be 'none' or 'tanh'"),
    (lambda t: bool(t), TypeError, r"tensor of 12 elements is ambiguous"),
    (lambda t: t.sum(0, dim=1), TypeError, r"both dim and axis"),
]


@pytest.mark.parametrize("i", range(len(BAD)))
def test_bad_arguments_are_refused_at_the_call(i):
    fn, exc, msg = BAD[i]
    with pytest.raises(exc, match=msg):
        fn(Tensor(_T))
