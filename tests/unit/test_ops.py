"""Every Tensor op against numpy, element for element (STYLE.md item 12).

Each case realizes one graph and compares values *and* dtypes with a numpy
reference. Expected dtypes follow mlfuse's documented rules (dtypes.py):
the higher of two tensor dtypes wins, Python scalars are weakly typed, `/`
and float-only math give float32 on int/bool input, bool sums give int32.
Float32 results are compared with a few ulps of slack; ints and bools
exactly. Shapes cover 0-d, size-1 dims, broadcasting across ranks, sizes
that are not multiples of 8 and one >= 1e5-element case per op family.
"""

from __future__ import annotations

import math
import zlib

import numpy as np
import pytest

import mlfuse
from mlfuse import Tensor, dtypes, graph

F32, F64, I32, I64, B = np.float32, np.float64, np.int32, np.int64, np.bool_
BIG = 100_003  # >= 1e5 elements, not a multiple of 8


def rng(*key) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(repr(key).encode()))  # same data every run


def rand_f32(shape, lo=-3.0, hi=3.0, key=0) -> np.ndarray:
    return rng("f", shape, lo, hi, key).uniform(lo, hi, shape).astype(F32)


def rand_i32(shape, lo=-20, hi=20, key=0, nonzero=False) -> np.ndarray:
    a = rng("i", shape, lo, hi, key).integers(lo, hi, shape).astype(I32)
    if nonzero:
        a = np.where(a == 0, 3, a).astype(I32)
    return a


def rand_bool(shape, key=0) -> np.ndarray:
    return rng("b", shape, key).random(shape) < 0.5


def check(t: Tensor, ref, dtype=None, rtol=1e-6, atol=1e-6) -> None:
    """``t`` realized equals ``ref`` (cast to ``dtype``) in dtype, shape and values."""
    ref = np.asarray(ref)
    want = np.dtype(dtype) if dtype is not None else ref.dtype
    assert t.dtype == dtypes.from_numpy(want), f"dtype {t.dtype} != {want}"
    out = t.numpy()
    assert isinstance(out, np.ndarray)
    assert out.dtype == want, f"numpy dtype {out.dtype} != {want}"
    assert out.shape == ref.shape, f"shape {out.shape} != {ref.shape}"
    if want.kind == "f":
        np.testing.assert_allclose(out, ref.astype(F64), rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(out, ref.astype(want))


# ---------------------------------------------------------------------------
# elementwise binary
# ---------------------------------------------------------------------------

BROADCAST_SHAPES = [
    pytest.param((), (), id="0d-0d"),
    pytest.param((), (7,), id="0d-7"),
    pytest.param((1,), (13,), id="1-13"),
    pytest.param((3, 1), (1, 33), id="3x1-1x33"),
    pytest.param((5, 1, 7), (3, 1), id="5x1x7-3x1"),
    pytest.param((2, 3, 13), (13,), id="2x3x13-13"),
    pytest.param((BIG,), (BIG,), id="big"),
    pytest.param((317, 331), (331,), id="big-bcast"),
]

# name -> (mlfuse op, numpy op, lhs range, rhs range)
FLOAT_BINARY = {
    "add": (lambda a, b: a + b, np.add, (-3, 3), (-3, 3)),
    "sub": (lambda a, b: a - b, np.subtract, (-3, 3), (-3, 3)),
    "mul": (lambda a, b: a * b, np.multiply, (-3, 3), (-3, 3)),
    "div": (lambda a, b: a / b, np.divide, (-3, 3), (0.5, 3)),
    "pow": (lambda a, b: a**b, np.power, (0.1, 3), (-2, 2)),
    "maximum": (lambda a, b: a.maximum(b), np.maximum, (-3, 3), (-3, 3)),
    "minimum": (lambda a, b: a.minimum(b), np.minimum, (-3, 3), (-3, 3)),
}


@pytest.mark.parametrize("sa,sb", BROADCAST_SHAPES)
@pytest.mark.parametrize("name", list(FLOAT_BINARY))
def test_binary_float(name, sa, sb):
    op, ref, ra, rb = FLOAT_BINARY[name]
    a, b = rand_f32(sa, *ra, key=1), rand_f32(sb, *rb, key=2)
    rtol = 3e-6 if name == "pow" else 1e-6
    check(op(Tensor(a), Tensor(b)), ref(a.astype(F64), b.astype(F64)), F32, rtol=rtol)


def _quarter_grid(shape, key):
    """Multiples of 0.25 in [-10, 10]: a / b is never within an ulp of an integer."""
    return (rng("q", shape, key).integers(-40, 41, shape) / 4).astype(F32)


def _divisors(shape, key):
    return rng("d", shape, key).choice(np.array([-2.5, -1.5, -0.75, 0.75, 1.5, 2.5], F32), shape)


@pytest.mark.parametrize(
    "sa,sb",
    [((), ()), ((13,), ()), ((3, 1), (1, 33)), ((BIG,), (BIG,))],
    ids=["0d", "13-0d", "bcast", "big"],
)
@pytest.mark.parametrize("name", ["floordiv", "mod"])
def test_floordiv_mod_float(name, sa, sb):
    a, b = _quarter_grid(sa, 1), _divisors(sb, 2)
    op = (lambda x, y: x // y) if name == "floordiv" else (lambda x, y: x % y)
    ref = np.floor_divide if name == "floordiv" else np.mod
    check(op(Tensor(a), Tensor(b)), ref(a, b), F32, atol=1e-6)


INT_BINARY = {
    "add": (lambda a, b: a + b, np.add),
    "sub": (lambda a, b: a - b, np.subtract),
    "mul": (lambda a, b: a * b, np.multiply),
    "floordiv": (lambda a, b: a // b, np.floor_divide),
    "mod": (lambda a, b: a % b, np.mod),
    "maximum": (lambda a, b: a.maximum(b), np.maximum),
    "minimum": (lambda a, b: a.minimum(b), np.minimum),
}


@pytest.mark.parametrize(
    "sa,sb",
    [((), ()), ((7,), ()), ((3, 1), (1, 33)), ((BIG,), (BIG,))],
    ids=["0d", "7-0d", "bcast", "big"],
)
@pytest.mark.parametrize("name", list(INT_BINARY))
def test_binary_int(name, sa, sb):
    """Negative operands too: // and % round toward -inf like numpy."""
    op, ref = INT_BINARY[name]
    a, b = rand_i32(sa, key=1), rand_i32(sb, -7, 8, key=2, nonzero=True)
    check(op(Tensor(a), Tensor(b)), ref(a, b), I32)


def test_int_division_by_zero_gives_zero_like_numpy():
    a = np.array([7, -7, 0, 5], I32)
    b = np.array([0, 0, 0, -1], I32)
    with np.errstate(divide="ignore"):
        check(Tensor(a) // Tensor(b), np.floor_divide(a, b), I32)
        check(Tensor(a) % Tensor(b), np.mod(a, b), I32)


def test_int_truediv_gives_float32():
    a, b = rand_i32((13,), key=1), rand_i32((13,), key=2, nonzero=True)
    check(Tensor(a) / Tensor(b), a / b, F32)


def test_int_pow_stays_integer():
    """numpy and PyTorch keep integer powers integer (wrapping on overflow)."""
    a, b = rand_i32((13,), -5, 5, key=1), rand_i32((13,), 0, 12, key=2)
    check(Tensor(a) ** Tensor(b), np.power(a, b), I32)
    check(Tensor(a) ** 7, a**7, I32)
    check(Tensor([3]) ** 20, np.array([3**20]), np.int64)
    check(2 ** Tensor(b), np.power(2, b), I32)
    big = np.array([-3, 3, 7, 2, -1, 0], np.int64)
    check(Tensor(big) ** 41, big**41, np.int64)  # wraps like numpy's int64


def test_int_pow_negative_exponents():
    a = np.array([1, -1, -1, 2, -3, 0], np.int64)
    e = np.array([-3, -3, -2, -1, -2, 5], np.int64)
    check(Tensor(a) ** Tensor(e), np.array([1, -1, 1, 0, 0, 0]), np.int64)
    with pytest.raises(ValueError, match="negative integer powers"):
        Tensor(a) ** -2


def test_negative_base_integral_float_exponent():
    a = np.array([-2.0, -3.0, -0.5, 2.0], F32)
    b = np.array([3.0, 2.0, -1.0, 0.5], F32)
    check(Tensor(a) ** Tensor(b), np.power(a.astype(F64), b), F32)


@pytest.mark.parametrize(
    "da,db,want",
    [
        (I32, F32, F32),
        (I32, I64, I64),
        (F32, F64, F64),
        (B, I32, I32),
        (B, F32, F32),
        (I64, F32, F32),
    ],
)
def test_mixed_dtype_promotion(da, db, want):
    a = rand_i32((3, 7), 0, 5, key=1).astype(da)
    b = rand_i32((7,), 1, 5, key=2).astype(db)
    check(Tensor(a) * Tensor(b), a.astype(F64) * b.astype(F64), want)
    check(Tensor(a) + Tensor(b), a.astype(F64) + b.astype(F64), want)


def test_bool_add_is_or():
    a, b = rand_bool((33,), 1), rand_bool((33,), 2)
    check(Tensor(a) + Tensor(b), a | b, B)
    check(Tensor(a) + True, a | True, B)


def test_bool_mul_is_and():
    a, b = rand_bool((33,), 1), rand_bool((33,), 2)
    check(Tensor(a) * Tensor(b), a * b, B)


def test_bool_matmul():
    a, b = rand_bool((3, 7), 1), rand_bool((7, 5), 2)
    check(Tensor(a) @ Tensor(b), a @ b, B)


@pytest.mark.parametrize(
    "other,want",
    [(1, I64), (2.5, F32), (np.array([1, 2], I32), I32)],
    ids=["int", "float", "ndarray"],
)
def test_bool_plus_number_adds(other, want):
    """bool + 1 is arithmetic (numpy: [True, False] + 1 == [2, 1]), like 1 + bool."""
    x = np.array([True, False])
    ref = x.astype(F64) + other
    check(Tensor(x) + other, ref, want)
    check(
        other + Tensor(x) if not isinstance(other, np.ndarray) else Tensor(x) + Tensor(other),
        ref,
        want,
    )


# tensor-scalar and scalar-tensor: (mlfuse op, numpy op on float64/int values)
SCALAR_FLOAT = {
    "x+2": (lambda x: x + 2, lambda x: x + 2),
    "2+x": (lambda x: 2 + x, lambda x: 2 + x),
    "x-1.5": (lambda x: x - 1.5, lambda x: x - 1.5),
    "1.5-x": (lambda x: 1.5 - x, lambda x: 1.5 - x),
    "x*3": (lambda x: x * 3, lambda x: x * 3),
    "0.5*x": (lambda x: 0.5 * x, lambda x: 0.5 * x),
    "x/4": (lambda x: x / 4, lambda x: x / 4),
    "2/x": (lambda x: 2 / x, lambda x: 2 / x),
    "x**0": (lambda x: x**0, lambda x: x**0),
    "x**2": (lambda x: x**2, lambda x: x**2),
    "x**3": (lambda x: x**3, lambda x: x**3),
    "x**0.5": (lambda x: x.abs() ** 0.5, lambda x: np.abs(x) ** 0.5),
    "x**-1.5": (lambda x: x.abs() ** -1.5, lambda x: np.abs(x) ** -1.5),
    "2**x": (lambda x: 2**x, lambda x: 2.0**x),
    "x//0.75": (lambda x: x // 0.75, lambda x: np.floor_divide(x, 0.75)),
    "x%0.75": (lambda x: x % 0.75, lambda x: np.mod(x, 0.75)),
    "2.5//x": (lambda x: 2.5 // x, lambda x: np.floor_divide(2.5, x)),
    "2.5%x": (lambda x: 2.5 % x, lambda x: np.mod(2.5, x)),
    "x.max(1)": (lambda x: x.maximum(1), lambda x: np.maximum(x, 1)),
    "x.min(-1)": (lambda x: x.minimum(-1), lambda x: np.minimum(x, -1)),
}


@pytest.mark.parametrize("shape", [(), (13,), (3, 1, 7)], ids=str)
@pytest.mark.parametrize("name", list(SCALAR_FLOAT))
def test_scalar_float(name, shape):
    op, ref = SCALAR_FLOAT[name]
    x = _quarter_grid(shape, 3)
    x = np.where(x == 0, F32(0.25), x).astype(F32)  # keep 2/x and 2.5//x finite
    check(op(Tensor(x)), ref(x.astype(F64)), F32, rtol=2e-6)


SCALAR_INT = {
    "x+2": (lambda x: x + 2, lambda x: x + 2, I32),
    "2-x": (lambda x: 2 - x, lambda x: 2 - x, I32),
    "x*3": (lambda x: x * 3, lambda x: x * 3, I32),
    "x//3": (lambda x: x // 3, lambda x: x // 3, I32),
    "x//-3": (lambda x: x // -3, lambda x: x // -3, I32),
    "7//x": (lambda x: 7 // x, lambda x: 7 // x, I32),
    "x%3": (lambda x: x % 3, lambda x: x % 3, I32),
    "x%-3": (lambda x: x % -3, lambda x: x % -3, I32),
    "7%x": (lambda x: 7 % x, lambda x: 7 % x, I32),
    "x**2": (lambda x: x**2, lambda x: x**2, I32),
    "x/2": (lambda x: x / 2, lambda x: x / 2, F32),
    "x+0.5": (lambda x: x + 0.5, lambda x: x + 0.5, F32),
    "x*True": (lambda x: x * True, lambda x: x * 1, I32),
}


@pytest.mark.parametrize("shape", [(), (33,)], ids=str)
@pytest.mark.parametrize("name", list(SCALAR_INT))
def test_scalar_int(name, shape):
    op, ref, want = SCALAR_INT[name]
    x = rand_i32(shape, key=4, nonzero=True)
    check(op(Tensor(x)), ref(x.astype(F64) if want == F32 else x), want)


def test_scalar_on_int64_keeps_int64():
    x = np.array([1, -2, 3 * 10**10], I64)
    check(Tensor(x) * 2 + 1, x * 2 + 1, I64)


def test_int_scalar_on_bool_gives_int64():
    x = rand_bool((7,), 1)
    check(Tensor(x) * 3, x.astype(I64) * 3, I64)


def test_numpy_scalar_operand():
    x = rand_f32((7,), key=5)
    check(Tensor(x) * np.float32(2.5), x * F32(2.5), F32)


# ---------------------------------------------------------------------------
# comparisons and bitwise
# ---------------------------------------------------------------------------

CMP = {
    "<": (lambda a, b: a < b, np.less),
    "<=": (lambda a, b: a <= b, np.less_equal),
    ">": (lambda a, b: a > b, np.greater),
    ">=": (lambda a, b: a >= b, np.greater_equal),
    "==": (lambda a, b: a == b, np.equal),
    "!=": (lambda a, b: a != b, np.not_equal),
}


@pytest.mark.parametrize("kind", ["float", "int"])
@pytest.mark.parametrize(
    "sa,sb", [((), ()), ((3, 1), (1, 13)), ((BIG,), (BIG,))], ids=["0d", "bcast", "big"]
)
@pytest.mark.parametrize("name", list(CMP))
def test_compare(name, sa, sb, kind):
    op, ref = CMP[name]
    # few distinct values, so equality is common
    a, b = rand_i32(sa, -3, 4, key=1), rand_i32(sb, -3, 4, key=2)
    if kind == "float":
        a, b = (a / 2).astype(F32), (b / 2).astype(F32)
    check(op(Tensor(a), Tensor(b)), ref(a, b), B)


@pytest.mark.parametrize("name", list(CMP))
def test_compare_scalar_both_sides(name):
    op, ref = CMP[name]
    x = (rand_i32((13,), -3, 4, key=3) / 2).astype(F32)
    check(op(Tensor(x), 0.5), ref(x, F32(0.5)), B)
    check(op(0.5, Tensor(x)), ref(F32(0.5), x), B)


def test_compare_bool_tensors():
    a, b = rand_bool((13,), 1), rand_bool((13,), 2)
    check(Tensor(a) == Tensor(b), a == b, B)
    check(Tensor(a) < Tensor(b), a < b, B)


def test_compare_nan():
    a = np.array([np.nan, 1.0, np.nan], F32)
    b = np.array([1.0, np.nan, np.nan], F32)
    ta, tb = Tensor(a), Tensor(b)
    out = [ta < tb, ta <= tb, ta == tb, ta != tb]
    mlfuse.realize(*out)
    for t, r in zip(out, [a < b, a <= b, a == b, a != b]):
        check(t, r, B)


BITWISE = {
    "&": (lambda a, b: a & b, np.bitwise_and),
    "|": (lambda a, b: a | b, np.bitwise_or),
    "^": (lambda a, b: a ^ b, np.bitwise_xor),
}


@pytest.mark.parametrize("kind", ["bool", "int32", "int64"])
@pytest.mark.parametrize(
    "sa,sb", [((), ()), ((3, 1), (1, 13)), ((BIG,), (BIG,))], ids=["0d", "bcast", "big"]
)
@pytest.mark.parametrize("name", list(BITWISE))
def test_bitwise(name, sa, sb, kind):
    op, ref = BITWISE[name]
    if kind == "bool":
        a, b = rand_bool(sa, 1), rand_bool(sb, 2)
    else:
        a = rand_i32(sa, -(2**31), 2**31 - 1, key=1).astype(kind)
        b = rand_i32(sb, -(2**31), 2**31 - 1, key=2).astype(kind)
    check(op(Tensor(a), Tensor(b)), ref(a, b), a.dtype)


@pytest.mark.parametrize("name", list(BITWISE))
def test_bitwise_scalar(name):
    op, ref = BITWISE[name]
    x = rand_i32((13,), -100, 100, key=6)
    check(op(Tensor(x), 6), ref(x, 6), I32)
    check(op(6, Tensor(x)), ref(6, x), I32)
    xb = rand_bool((13,), 7)
    check(op(Tensor(xb), True), ref(xb, True), B)


@pytest.mark.parametrize("name", list(BITWISE))
def test_bitwise_mask_scalars_are_their_bits(name):
    """A Python int mask of the dtype's width is read as its bit pattern (PyTorch):
    ``x | 0xFFFFFFFF`` on int32 is ``x | -1``; ``x & -2`` on uint8 is ``x & 0xFE``."""
    op, ref = BITWISE[name]
    x = rand_i32((13,), -(2**31), 2**31 - 1, key=8)
    for mask in (0xFFFFFFFF, 0x80000000, 0xDEADBEEF):
        bits = np.array(mask, np.uint32).view(np.int32)
        check(op(Tensor(x), mask), ref(x, bits), I32)
        check(op(mask, Tensor(x)), ref(bits, x), I32)
    u = np.arange(0, 256, 17, dtype=np.uint8)
    check(op(Tensor(u), -2), ref(u, np.uint8(0xFE)), np.uint8)
    with pytest.raises(OverflowError, match="does not fit in int32"):
        op(Tensor(x), 1 << 32)


@pytest.mark.parametrize("shape", [(), (13,), (BIG,)], ids=str)
@pytest.mark.parametrize("kind", ["bool", "int32", "int64"])
def test_invert(kind, shape):
    x = rand_bool(shape, 1) if kind == "bool" else rand_i32(shape, -1000, 1000, key=1).astype(kind)
    check(~Tensor(x), ~x, x.dtype)


def test_logical_not():
    x = np.array([0.0, -0.0, 1.5, -2.0], F32)
    check(Tensor(x).logical_not(), np.logical_not(x), B)


# ---------------------------------------------------------------------------
# elementwise unary
# ---------------------------------------------------------------------------


def _sig(x):
    return 1 / (1 + np.exp(-x))


def _gelu(x):  # the tanh form (PyTorch's approximate="tanh")
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


# name -> (mlfuse op, float64 reference, input range, rtol, atol)
UNARY = {
    "neg": (lambda x: -x, np.negative, (-5, 5), 0, 0),
    "abs": (lambda x: x.abs(), np.abs, (-5, 5), 0, 0),
    "abs()": (lambda x: abs(x), np.abs, (-5, 5), 0, 0),
    "exp": (lambda x: x.exp(), np.exp, (-10, 10), 2e-6, 0),
    "exp2": (lambda x: x.exp2(), np.exp2, (-10, 10), 2e-6, 0),
    "log": (lambda x: x.log(), np.log, (1e-3, 100), 2e-6, 1e-6),
    "log2": (lambda x: x.log2(), np.log2, (1e-3, 100), 2e-6, 1e-6),
    "sqrt": (lambda x: x.sqrt(), np.sqrt, (0, 100), 1e-6, 0),
    "rsqrt": (lambda x: x.rsqrt(), lambda x: 1 / np.sqrt(x), (1e-2, 100), 2e-6, 0),
    "reciprocal": (lambda x: x.reciprocal(), np.reciprocal, (0.1, 10), 1e-6, 0),
    "sin": (lambda x: x.sin(), np.sin, (-10, 10), 2e-6, 2e-6),
    "cos": (lambda x: x.cos(), np.cos, (-10, 10), 2e-6, 2e-6),
    "floor": (lambda x: x.floor(), np.floor, (-5, 5), 0, 0),
    "ceil": (lambda x: x.ceil(), np.ceil, (-5, 5), 0, 0),
    "relu": (lambda x: x.relu(), lambda x: np.maximum(x, 0), (-5, 5), 0, 0),
    "sigmoid": (lambda x: x.sigmoid(), _sig, (-20, 20), 2e-6, 1e-7),
    "tanh": (lambda x: x.tanh(), np.tanh, (-10, 10), 2e-6, 1e-6),
    "gelu": (lambda x: x.gelu(approximate="tanh"), _gelu, (-6, 6), 4e-6, 1e-6),
    "silu": (lambda x: x.silu(), lambda x: x * _sig(x), (-10, 10), 4e-6, 1e-6),
    "clip": (lambda x: x.clip(-0.5, 1.25), lambda x: np.clip(x, -0.5, 1.25), (-3, 3), 0, 0),
    "clip-min": (lambda x: x.clip(-0.5), lambda x: np.maximum(x, -0.5), (-3, 3), 0, 0),
    "clip-max": (lambda x: x.clip(None, 0.5), lambda x: np.minimum(x, 0.5), (-3, 3), 0, 0),
}


@pytest.mark.parametrize("shape", [(), (1,), (13,), (3, 1, 33), (BIG,)], ids=str)
@pytest.mark.parametrize("name", list(UNARY))
def test_unary_float(name, shape):
    op, ref, (lo, hi), rtol, atol = UNARY[name]
    x = rand_f32(shape, lo, hi, key=7)
    check(op(Tensor(x)), ref(x.astype(F64)), F32, rtol=rtol, atol=atol)


def test_unary_float64():
    x = rand_f32((33,), 0.1, 5, key=8).astype(F64)
    t = Tensor(x)
    out = [t.exp(), t.log(), t.sqrt(), t.sin(), -t, t.sigmoid()]
    mlfuse.realize(*out)
    refs = [np.exp(x), np.log(x), np.sqrt(x), np.sin(x), -x, _sig(x)]
    for o, r in zip(out, refs):
        check(o, r, F64, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "sin", "sigmoid", "reciprocal"])
def test_float_math_on_int_gives_float32(name):
    op, ref, _, _, _ = UNARY[name]
    x = rand_i32((13,), 1, 10, key=9)
    check(op(Tensor(x)), ref(x.astype(F64)), F32, rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize("name", ["neg", "abs", "floor", "ceil", "relu", "clip"])
def test_int_unary_keeps_int(name):
    op, ref, _, _, _ = UNARY[name]
    x = rand_i32((33,), key=10)
    if name == "clip":  # clip(-0.5, 1.25) on ints: float scalars promote to float32
        check(op(Tensor(x)), np.clip(x.astype(F64), -0.5, 1.25), F32)
    else:
        check(op(Tensor(x)), ref(x), I32)


def test_neg_bool_is_logical_not():
    x = rand_bool((13,), 2)
    check(-Tensor(x), ~x, B)


def test_special_float_values():
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e30], F32)
    t = Tensor(x)
    with np.errstate(all="ignore"):
        cases = [
            (t.abs(), np.abs(x)),
            (t.exp(), np.exp(x.astype(F64))),
            (t.sqrt(), np.sqrt(x.astype(F64))),
            (t.relu(), np.maximum(x, 0)),
            (t.maximum(1.0), np.maximum(x, 1)),
            (t.sigmoid(), _sig(x.astype(F64))),
            (t.floor(), np.floor(x)),
            (t.log(), np.log(x.astype(F64))),
        ]
        mlfuse.realize(*(c[0] for c in cases))
        for o, r in cases:
            check(o, r, F32, rtol=2e-6, atol=0)


# ---------------------------------------------------------------------------
# where, fma
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sc,sa,sb",
    [
        ((), (), ()),
        ((13,), (13,), (13,)),
        ((3, 1), (1, 7), ()),
        ((2, 1, 33), (33,), (3, 1)),
        ((BIG,), (BIG,), (BIG,)),
    ],
    ids=["0d", "13", "bcast", "bcast3", "big"],
)
def test_where(sc, sa, sb):
    c, a, b = rand_bool(sc, 1), rand_f32(sa, key=2), rand_f32(sb, key=3)
    check(Tensor(c).where(Tensor(a), Tensor(b)), np.where(c, a, b), F32, rtol=0, atol=0)


def test_where_scalar_branches():
    c, x = rand_bool((3, 7), 1), rand_f32((3, 7), key=2)
    tc, tx = Tensor(c), Tensor(x)
    check(tc.where(tx, 0.5), np.where(c, x, F32(0.5)), F32, rtol=0, atol=0)
    check(tc.where(-1.5, tx), np.where(c, F32(-1.5), x), F32, rtol=0, atol=0)
    check(tc.where(1.0, 2.0), np.where(c, 1.0, 2.0), F32, rtol=0, atol=0)
    check(tc.where(1, 2), np.where(c, 1, 2), I64)
    check(tc.where(True, False), c, B)


def test_where_int_branch_with_float_scalar_promotes():
    c, x = rand_bool((13,), 1), rand_i32((13,), key=2)
    check(Tensor(c).where(Tensor(x), 0.5), np.where(c, x.astype(F64), 0.5), F32)


def test_where_nonbool_condition():
    c = np.array([0.0, 2.0, -0.0, np.nan, -1.0], F32)
    a, b = np.arange(5, dtype=I32), -np.arange(5, dtype=I32)
    check(Tensor(c).where(Tensor(a), Tensor(b)), np.where(c.astype(bool), a, b), I32)


def test_where_mixed_dtype_branches():
    c, a, b = rand_bool((7,), 1), rand_i32((7,), key=2), rand_f32((7,), key=3)
    check(Tensor(c).where(Tensor(a), Tensor(b)), np.where(c, a.astype(F64), b), F32)


@pytest.mark.parametrize(
    "sx,sy,sz",
    [((), (), ()), ((13,), (13,), ()), ((3, 1), (1, 7), (7,)), ((BIG,), (BIG,), (BIG,))],
    ids=["0d", "13", "bcast", "big"],
)
def test_fma(sx, sy, sz):
    x, y, z = rand_f32(sx, key=1), rand_f32(sy, key=2), rand_f32(sz, key=3)
    ref = x.astype(F64) * y.astype(F64) + z.astype(F64)
    check(Tensor(x).fma(Tensor(y), Tensor(z)), ref, F32, rtol=1e-6, atol=1e-6)


def test_fma_scalars_and_int():
    x = rand_i32((13,), key=4)
    check(Tensor(x).fma(0.5, 2.0), x.astype(F64) * 0.5 + 2, F32)


# ---------------------------------------------------------------------------
# cast, bitcast
# ---------------------------------------------------------------------------

CAST_SRC = {
    "float32": np.array(
        [0.0, -0.0, 1.0, -1.0, 2.7, -2.7, 0.5, -0.5, 1e5 + 0.75, -3e6, 123.999], F32
    ),
    "float64": np.array([0.0, -0.0, 1.0, -1.0, 2.7, -2.7, 0.5, -0.5, 1e9 + 0.75, -3e9, 1 / 3], F64),
    "int32": np.array([0, 1, -1, 7, -7, 2**31 - 1, -(2**31), 16777217, 100], I32),
    "int64": np.array([0, 1, -1, 7, -7, 2**40 + 3, -(2**40), 2**53 + 1, 100], I64),
    "bool": np.array([True, False, True, True, False], B),
}


@pytest.mark.parametrize("to", list(CAST_SRC))
@pytest.mark.parametrize("src", list(CAST_SRC))
def test_cast(src, to):
    """float -> int truncates toward zero; int -> narrower int wraps; x -> bool is x != 0."""
    x = CAST_SRC[src]
    if src == "float64" and to == "int32":  # out of range is undefined: keep the data in range
        x = x[np.abs(x) < 2**31]
    with np.errstate(all="ignore"):
        ref = x.astype(to)
    check(Tensor(x).cast(to), ref, to, rtol=0, atol=0)


def test_cast_aliases():
    x = CAST_SRC["float32"]
    t = Tensor(x)
    check(t.int(), x.astype(I32), I32)
    check(t.float(), x, F32, rtol=0, atol=0)
    check(t.bool(), x.astype(B), B)
    check(t.cast(dtypes.float64), x.astype(F64), F64, rtol=0, atol=0)
    check(t.cast(np.int64), x.astype(I64), I64)
    check(Tensor(x, dtype="int32"), x.astype(I32), I32)


def test_cast_nan_to_bool():
    x = np.array([np.nan, 0.0], F32)
    check(Tensor(x).cast("bool"), x.astype(B), B)


def test_cast_large_and_after_ops():
    x = rand_f32((BIG,), -1000, 1000, key=5)
    check((Tensor(x) * 3).cast("int32"), (x * 3).astype(I32), I32)


@pytest.mark.parametrize(
    "src,to",
    [("float32", "int32"), ("int32", "float32"), ("float64", "int64"), ("int64", "float64")],
)
def test_bitcast(src, to):
    x = CAST_SRC[src]
    with np.errstate(all="ignore"):
        ref = x.view(to)
    out = Tensor(x).bitcast(to)
    assert out.dtype == dtypes.as_dtype(to)
    got = out.numpy()
    assert got.dtype == np.dtype(to)
    np.testing.assert_array_equal(got.view(src), x)  # bit-exact, NaN payloads included
    np.testing.assert_array_equal(got.view(np.uint8), ref.view(np.uint8))


def test_bitcast_after_op():
    x = np.array([1.0, -2.0, 0.5], F32)
    check((Tensor(x) + 1).bitcast("int32"), (x + 1).view(I32), I32)


# ---------------------------------------------------------------------------
# reductions
# ---------------------------------------------------------------------------

AXES = [
    pytest.param(None, False, id="all"),
    pytest.param(None, True, id="all-keep"),
    pytest.param(1, False, id="ax1"),
    pytest.param(-1, True, id="ax-1-keep"),
    pytest.param((0, 2), False, id="ax02"),
    pytest.param((-3, -1), True, id="ax-3-1-keep"),
]

RSHAPE = (3, 5, 7)


def _reduce_input(kind: str, name: str) -> np.ndarray:
    if kind == "float":
        x = rand_f32(RSHAPE, -2, 2, key=11)
        if name == "prod":
            x = rand_f32(RSHAPE, 0.6, 1.5, key=11) * np.where(rand_bool(RSHAPE, 12), 1, -1)
        return x.astype(F32)
    if kind == "int":
        if name == "prod":
            x = np.where(rand_bool(RSHAPE, 13), 1, -1).astype(I32)
            x.flat[[3, 17, 40, 77]] = [2, -2, 3, 2]
            return x
        return rand_i32(RSHAPE, -50, 50, key=14)
    return rand_bool(RSHAPE, 15)


REDUCE = {
    # integer and bool sums and products accumulate in int64 (PyTorch, numpy)
    "sum": (np.sum, lambda k: {"bool": I64, "int": I64, "float": F32}[k]),
    "prod": (np.prod, lambda k: {"bool": I64, "int": I64, "float": F32}[k]),
    "max": (np.max, lambda k: {"bool": B, "int": I32, "float": F32}[k]),
    "min": (np.min, lambda k: {"bool": B, "int": I32, "float": F32}[k]),
    "mean": (np.mean, lambda k: F32),
    "var": (lambda x, axis, keepdims: np.var(x, axis, keepdims=keepdims, ddof=1), lambda k: F32),
    "std": (lambda x, axis, keepdims: np.std(x, axis, keepdims=keepdims, ddof=1), lambda k: F32),
}


@pytest.mark.parametrize("axis,keepdim", AXES)
@pytest.mark.parametrize("kind", ["float", "int", "bool"])
@pytest.mark.parametrize("name", list(REDUCE))
def test_reduce(name, kind, axis, keepdim):
    ref_fn, want = REDUCE[name]
    x = _reduce_input(kind, name)
    ref = ref_fn(x.astype(F64) if kind != "bool" else x.astype(F64), axis=axis, keepdims=keepdim)
    if want(kind) == B:
        ref = ref.astype(B)
    out = getattr(Tensor(x), name)(axis, keepdim)
    check(out, ref, want(kind), rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("name", ["sum", "max", "min", "prod", "mean"])
def test_reduce_size1_and_0d(name):
    x = rand_f32((1, 7, 1), 0.5, 1.5, key=16)
    ref_fn = REDUCE[name][0]
    check(getattr(Tensor(x), name)((0, 2)), ref_fn(x.astype(F64), axis=(0, 2)), F32)
    check(getattr(Tensor(x), name)(0, True), ref_fn(x.astype(F64), axis=0, keepdims=True), F32)
    s = np.array(2.5, F32)
    check(getattr(Tensor(s), name)(), s, F32)


def test_reduce_0d_with_axis0():
    """A 0-d tensor accepts axis 0 / -1 (as in torch): the value is unchanged."""
    check(Tensor(np.array(2.5, F32)).sum(0), np.array(2.5, F32), F32)
    check(Tensor(np.array(4, I32)).max(-1), np.array(4, I32), I32)


def test_var_std_correction():
    x = rand_f32((5, 13), key=17)
    x64 = x.astype(F64)
    check(Tensor(x).var(1, correction=0), np.var(x64, 1), F32, rtol=2e-6)
    check(Tensor(x).std(0, correction=0), np.std(x64, 0), F32, rtol=2e-6)
    check(Tensor(x).std(), np.std(x64, ddof=1), F32, rtol=2e-6)


BIG2 = (317, 331)


@pytest.mark.parametrize("axis", [None, 0, 1], ids=str)
@pytest.mark.parametrize("name", ["sum", "max", "min", "mean", "std"])
def test_reduce_big_float(name, axis):
    x = rand_f32(BIG2, -1, 1, key=18)
    ref = REDUCE[name][0](x.astype(F64), axis=axis, keepdims=False)
    check(getattr(Tensor(x), name)(axis), ref, F32, rtol=1e-4, atol=1e-5)


def test_reduce_big_1d_sum():
    x = rand_f32((BIG,), 0, 1, key=19)
    check(Tensor(x).sum(), x.astype(F64).sum(), F32, rtol=1e-4)


@pytest.mark.parametrize("axis", [None, 0, 1], ids=str)
def test_reduce_big_int_and_bool(axis):
    x = rand_i32(BIG2, -1000, 1000, key=20)
    check(Tensor(x).sum(axis), x.sum(axis), I64)
    check(Tensor(x).max(axis), x.max(axis), I32)
    b = rand_bool(BIG2, 21)
    check(Tensor(b).sum(axis), b.sum(axis), I64)


def test_reduce_of_expression_and_view():
    x = rand_f32((13, 7), key=22)
    x64 = x.astype(F64)
    check((Tensor(x) * 2 + 1).T.sum(1), (x64 * 2 + 1).T.sum(1), F32, rtol=2e-6)
    check(
        (Tensor(x).exp()).max(0) - Tensor(x).min(0), np.exp(x64).max(0) - x64.min(0), F32, rtol=2e-6
    )


def test_reduce_empty_sum_prod_mean():
    x = np.zeros((3, 0), F32)
    check(Tensor(x).sum(1), x.sum(1), F32)
    check(Tensor(x).prod(1), x.prod(1), F32)
    with np.errstate(all="ignore"):
        check(Tensor(x).mean(1), np.full(3, np.nan, F32), F32)


def test_max_nan_propagates():
    x = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, 6.0]], F32)
    check(Tensor(x).max(1), x.max(1), F32)
    check(Tensor(x).min(1), x.min(1), F32)


# ---------------------------------------------------------------------------
# softmax family, layernorm
# ---------------------------------------------------------------------------


def _softmax(x, axis):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def _logsumexp(x, axis, keepdims):
    m = x.max(axis, keepdims=True)
    out = np.log(np.exp(x - m).sum(axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis) if axis is not None else out.reshape(())


def _layernorm(x, axis, eps=1e-5):
    mu = x.mean(axis, keepdims=True)
    return (x - mu) / np.sqrt(((x - mu) ** 2).mean(axis, keepdims=True) + eps)


SM_CASES = [
    pytest.param((7,), -1, id="7"),
    pytest.param((3, 13), -1, id="3x13"),
    pytest.param((3, 13), 0, id="3x13-ax0"),
    pytest.param((2, 3, 33), 1, id="2x3x33-ax1"),
    pytest.param((1, 1), -1, id="1x1"),
    pytest.param((4, 25001), -1, id="big"),
]


@pytest.mark.parametrize("shape,axis", SM_CASES)
@pytest.mark.parametrize("name", ["softmax", "log_softmax", "layernorm"])
def test_softmax_family(name, shape, axis):
    x = rand_f32(shape, -5, 5, key=23)
    x64 = x.astype(F64)
    ref = {
        "softmax": lambda: _softmax(x64, axis),
        "log_softmax": lambda: np.log(_softmax(x64, axis)),
        "layernorm": lambda: _layernorm(x64, axis),
    }[name]()
    tol = 1e-4 if shape == (4, 25001) else 1e-5
    check(getattr(Tensor(x), name)(axis), ref, F32, rtol=tol, atol=tol)


@pytest.mark.parametrize(
    "axis,keepdim",
    [(None, False), (-1, False), (0, True), ((0, 2), False), ((0, 2), True)],
    ids=str,
)
def test_logsumexp(axis, keepdim):
    x = rand_f32((3, 5, 7), -5, 5, key=24)
    x64 = x.astype(F64)
    if isinstance(axis, tuple):
        m = x64.max(axis, keepdims=True)
        ref = np.log(np.exp(x64 - m).sum(axis, keepdims=True)) + m
        ref = ref if keepdim else ref.reshape([s for d, s in enumerate(ref.shape) if d not in axis])
    else:
        ref = _logsumexp(x64, axis, keepdim)
    check(Tensor(x).logsumexp(axis, keepdim), ref, F32, rtol=1e-5, atol=1e-5)


def test_softmax_int_input_and_large_values():
    x = np.array([[1000, 1001, 1002], [-5, 0, 5]], I32)
    check(Tensor(x).softmax(), _softmax(x.astype(F64), -1), F32, rtol=1e-5, atol=1e-7)
    check(Tensor(x).logsumexp(1), _logsumexp(x.astype(F64), 1, False), F32, rtol=1e-6)


def test_layernorm_eps():
    x = rand_f32((4, 13), key=25)
    check(
        Tensor(x).layernorm(eps=0.5), _layernorm(x.astype(F64), -1, 0.5), F32, rtol=1e-5, atol=1e-6
    )


# ---------------------------------------------------------------------------
# matmul
# ---------------------------------------------------------------------------

MATMUL = [
    pytest.param((7,), (7,), id="1d-1d"),
    pytest.param((7,), (7, 5), id="1d-2d"),
    pytest.param((5, 7), (7,), id="2d-1d"),
    pytest.param((5, 7), (7, 3), id="2d-2d"),
    pytest.param((1, 1), (1, 1), id="1x1"),
    pytest.param((2, 5, 7), (7, 3), id="batched-2d"),
    pytest.param((13,), (2, 13, 3), id="1d-batched"),
    pytest.param((2, 1, 5, 7), (3, 7, 4), id="batched-bcast"),
    pytest.param((33, 130), (130, 65), id="big"),
]


@pytest.mark.parametrize("sa,sb", MATMUL)
def test_matmul(sa, sb):
    a, b = rand_f32(sa, key=26), rand_f32(sb, key=27)
    check(Tensor(a) @ Tensor(b), a.astype(F64) @ b.astype(F64), F32, rtol=1e-5, atol=1e-5)


def test_matmul_int_and_mixed():
    a, b = rand_i32((5, 7), key=28), rand_i32((7, 3), key=29)
    check(Tensor(a).matmul(Tensor(b)), a @ b, I32)
    bf = rand_f32((7, 3), key=30)
    check(Tensor(a) @ Tensor(bf), a.astype(F64) @ bf.astype(F64), F32, rtol=1e-5, atol=1e-5)


def test_matmul_numpy_and_list_operands():
    a, b = rand_f32((4, 7), key=31), rand_f32((7, 3), key=32)
    check(Tensor(a) @ b, a.astype(F64) @ b, F32, rtol=1e-5, atol=1e-5)
    check(a.tolist() @ Tensor(b), a.astype(F64) @ b, F32, rtol=1e-5, atol=1e-5)


def test_numpy_array_on_the_left_gives_a_tensor():
    """``ndarray op Tensor`` must reach Tensor's reflected ops, not make an object array."""
    a, b = rand_f32((4, 7), key=31), rand_f32((7, 3), key=32)
    out = a @ Tensor(b)
    assert isinstance(out, Tensor), f"got {type(out).__name__} of dtype {out.dtype}"
    check(out, a.astype(F64) @ b, F32, rtol=1e-5, atol=1e-5)
    out = a + Tensor(a)
    assert isinstance(out, Tensor), f"got {type(out).__name__} of dtype {out.dtype}"
    check(out, a * 2, F32)


def test_dot():
    a, b = rand_f32((13,), key=33), rand_f32((13,), key=34)
    check(Tensor(a).dot(Tensor(b)), np.dot(a.astype(F64), b), F32, rtol=1e-5, atol=1e-6)
    m = rand_f32((13, 4), key=35)
    check(Tensor(a).dot(Tensor(m)), a.astype(F64) @ m, F32, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("bias", [False, True])
def test_linear(bias):
    x, w, b = rand_f32((3, 13), key=36), rand_f32((13, 7), key=37), rand_f32((7,), key=38)
    ref = x.astype(F64) @ w + (b if bias else 0)
    out = Tensor(x).linear(Tensor(w), Tensor(b) if bias else None)
    check(out, ref, F32, rtol=1e-5, atol=1e-5)


def test_matmul_of_views_and_chain():
    a, b, c = rand_f32((7, 5), key=39), rand_f32((3, 7), key=40), rand_f32((3, 4), key=41)
    ref = (a.astype(F64).T @ b.T) @ c
    check((Tensor(a).T @ Tensor(b).T) @ Tensor(c), ref, F32, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------------
# creation
# ---------------------------------------------------------------------------


def test_zeros_ones_full():
    check(Tensor.zeros(3, 4), np.zeros((3, 4)), F32)
    check(Tensor.zeros((2, 7)), np.zeros((2, 7)), F32)
    check(Tensor.zeros(()), np.zeros(()), F32)
    check(Tensor.ones(5, dtype="int32"), np.ones(5), I32)
    check(Tensor.ones(1, 13, dtype=dtypes.float64), np.ones((1, 13)), F64)
    check(Tensor.full((2, 3), 7), np.full((2, 3), 7), I64)
    check(Tensor.full((2, 3), 2.5), np.full((2, 3), 2.5), F32)
    check(Tensor.full(4, True), np.full(4, True), B)
    check(Tensor.full((), -3.25), np.array(-3.25), F32)
    check(Tensor.full((3,), 2, dtype="float64"), np.full(3, 2.0), F64)
    check(Tensor.full((3,), 2.0, dtype="int64"), np.full(3, 2), I64)
    check(Tensor.full((BIG,), 1.5), np.full(BIG, 1.5), F32)


def test_like_functions():
    x = Tensor(rand_i32((3, 7), key=42))
    check(Tensor.zeros_like(x), np.zeros((3, 7)), I32)
    check(Tensor.ones_like(x), np.ones((3, 7)), I32)
    check(Tensor.full_like(x, 4), np.full((3, 7), 4), I32)
    check(Tensor.full_like(x, 0.5, dtype="float32"), np.full((3, 7), 0.5), F32)
    check(Tensor.zeros_like(x, dtype="bool"), np.zeros((3, 7), bool), B)


@pytest.mark.parametrize(
    "args,kw,ref",
    [
        ((5,), {}, np.arange(5, dtype=I64)),
        ((2, 11, 3), {}, np.arange(2, 11, 3, dtype=I64)),
        ((10, 0, -3), {}, np.arange(10, 0, -3, dtype=I64)),
        ((0.0, 1.0, 0.25), {}, np.arange(0, 1, 0.25, dtype=F32)),
        ((7,), {"dtype": "float32"}, np.arange(7, dtype=F32)),
        ((33,), {"dtype": "int64"}, np.arange(33, dtype=I64)),
    ],
    ids=["n", "start-stop-step", "neg-step", "float", "dtype-f32", "dtype-i64"],
)
def test_arange(args, kw, ref):
    check(Tensor.arange(*args, **kw), ref, ref.dtype, rtol=0, atol=0)


def test_arange_in_expression():
    check(Tensor.arange(13) * 2 - 3, np.arange(13) * 2 - 3, I64)


def test_arange_values_outside_the_dtype_are_an_error_before_any_allocation():
    with pytest.raises(OverflowError, match="8589934591 does not fit in int32"):
        Tensor.arange(2**33, dtype="int32")  # (64 GiB as int64: never allocated)
    with pytest.raises(OverflowError, match="299 does not fit in uint8"):
        Tensor.arange(0, 300, dtype="uint8")
    check(Tensor.arange(255, -1, -1, dtype="uint8"), np.arange(255, -1, -1), np.uint8)


def test_eye():
    check(Tensor.eye(4), np.eye(4), F32)
    check(Tensor.eye(1, dtype="int32"), np.eye(1), I32)
    check(Tensor.eye(7) @ Tensor(rand_f32((7, 3), key=43)), rand_f32((7, 3), key=43), F32)


@pytest.mark.parametrize("fn", ["rand", "randn", "uniform"])
def test_random_is_deterministic_with_seed(fn):
    make = getattr(Tensor, fn)
    a, b, c = make(3, 13, seed=1), make(3, 13, seed=1), make(3, 13, seed=2)
    assert a.shape == (3, 13) and a.dtype == dtypes.float32
    na, nb, nc = a.numpy(), b.numpy(), c.numpy()
    assert na.dtype == F32
    np.testing.assert_array_equal(na, nb)
    assert not np.array_equal(na, nc)
    if fn in ("rand", "uniform"):
        assert na.min() >= 0 and na.max() < 1
    else:
        assert abs(na.mean()) < 1 and 0.3 < na.std() < 3
    # the values feed computations like any other tensor
    check(make(3, 13, seed=1) * 2, na.astype(F64) * 2, F32)


def test_random_dtype_and_uniform_range():
    x = Tensor.uniform(1000, low=-2.0, high=5.0, seed=3).numpy()
    assert x.min() >= -2 and x.max() < 5 and x.min() < 0 < x.max()
    assert Tensor.randn(4, seed=0, dtype="float64").numpy().dtype == F64


def test_tensor_constructor_dtypes():
    check(Tensor([1, 2, 3]), np.array([1, 2, 3]), I64)
    check(Tensor([1.5, 2.0]), np.array([1.5, 2.0]), F32)
    check(Tensor([True, False]), np.array([True, False]), B)
    check(Tensor(3.5), np.array(3.5), F32)
    check(Tensor(np.arange(4, dtype=I64)), np.arange(4), I64)
    check(Tensor(np.arange(4, dtype=F64)), np.arange(4.0), F64)
    src = np.arange(4, dtype=F32)
    t = Tensor(src)
    src[0] = 100  # the tensor holds a copy
    check(t, np.arange(4), F32)


# ---------------------------------------------------------------------------
# movement
# ---------------------------------------------------------------------------

X3 = rand_f32((2, 3, 4), key=44)

# name -> (mlfuse op, numpy op); a bare view realizes into a buffer of its own
MOVES = {
    "reshape": (lambda t: t.reshape(4, 6), lambda a: a.reshape(4, 6)),
    "reshape-tuple": (lambda t: t.reshape((6, 4)), lambda a: a.reshape(6, 4)),
    "reshape-neg1": (lambda t: t.reshape(-1, 4), lambda a: a.reshape(-1, 4)),
    "reshape-neg1-mid": (lambda t: t.reshape(2, -1, 3), lambda a: a.reshape(2, -1, 3)),
    "reshape-0d": (lambda t: t[0, 0, 0].reshape(1, 1), lambda a: a[0, 0, 0].reshape(1, 1)),
    "view": (lambda t: t.view(24), lambda a: a.reshape(24)),
    "permute": (lambda t: t.permute(2, 0, 1), lambda a: a.transpose(2, 0, 1)),
    "permute-tuple-neg": (lambda t: t.permute((-1, 1, 0)), lambda a: a.transpose(2, 1, 0)),
    "transpose": (lambda t: t.transpose(0, 2), lambda a: a.swapaxes(0, 2)),
    "transpose-default": (lambda t: t.transpose(), lambda a: a.swapaxes(-2, -1)),
    "T": (lambda t: t.T, lambda a: a.T),
    "expand": (lambda t: t[:, :1].expand(2, 5, 4), lambda a: np.broadcast_to(a[:, :1], (2, 5, 4))),
    "expand-neg1": (lambda t: t[:1].expand(3, -1, -1), lambda a: np.broadcast_to(a[:1], (3, 3, 4))),
    "expand-newdims": (
        lambda t: t[0, 0].expand(2, 3, 4),
        lambda a: np.broadcast_to(a[0, 0], (2, 3, 4)),
    ),
    "broadcast_to": (
        lambda t: t[0, :, :1].broadcast_to(5, 3, 7),
        lambda a: np.broadcast_to(a[0, :, :1], (5, 3, 7)),
    ),
    "squeeze": (lambda t: t[:1, :, 2:3].squeeze(), lambda a: a[:1, :, 2:3].squeeze()),
    "squeeze-dim": (lambda t: t[:1, :, 2:3].squeeze(-1), lambda a: a[:1, :, 2:3].squeeze(-1)),
    "squeeze-non1": (lambda t: t.squeeze(1), lambda a: a),
    "unsqueeze": (lambda t: t.unsqueeze(1), lambda a: np.expand_dims(a, 1)),
    "unsqueeze-neg": (lambda t: t.unsqueeze(-1), lambda a: np.expand_dims(a, -1)),
    "flatten": (lambda t: t.flatten(), lambda a: a.reshape(-1)),
    "flatten-1": (lambda t: t.flatten(1), lambda a: a.reshape(2, 12)),
    "flatten-0-1": (lambda t: t.flatten(0, 1), lambda a: a.reshape(6, 4)),
    "pad": (
        lambda t: t.pad(((1, 0), (0, 2), (3, 1))),
        lambda a: np.pad(a, ((1, 0), (0, 2), (3, 1))),
    ),
    "pad-value": (
        lambda t: t.pad((None, (2, 2), None), value=-1.5),
        lambda a: np.pad(a, ((0, 0), (2, 2), (0, 0)), constant_values=-1.5),
    ),
    "shrink": (lambda t: t.shrink(((1, 2), None, (1, 3))), lambda a: a[1:2, :, 1:3]),
    "shrink-partial": (lambda t: t.shrink(((0, 2), (1, 3), (0, 4))), lambda a: a[:, 1:3]),
    "flip": (lambda t: t.flip(1), lambda a: np.flip(a, 1)),
    "flip-tuple": (lambda t: t.flip((0, -1)), lambda a: np.flip(a, (0, 2))),
    "flip-all": (lambda t: t.flip(None), lambda a: np.flip(a)),
    "stride": (lambda t: t._stride_view(1, 2, 3), lambda a: a[:, ::2, ::3]),
    "stride-big-step": (lambda t: t._stride_view(5, 1, 1), lambda a: a[::5]),
    "contiguous": (lambda t: t.contiguous(), lambda a: a),
    "contiguous-T": (lambda t: t.T.contiguous(), lambda a: a.T),
    "chain": (
        lambda t: (
            t.permute(2, 0, 1)
            .pad(((1, 1), None, (0, 2)))
            .flip(0)
            ._stride_view(2, 1, 2)
            .reshape(3, -1)
        ),
        lambda a: np.flip(np.pad(a.transpose(2, 0, 1), ((1, 1), (0, 0), (0, 2))), 0)[
            ::2, :, ::2
        ].reshape(3, -1),
    ),
    "chain-elementwise": (
        lambda t: (t.T * 2 + t.permute(2, 1, 0).flip(0)).sum(1),
        lambda a: (a.T * 2 + np.flip(a.transpose(2, 1, 0), 0)).sum(1),
    ),
    "T-of-reduce": (lambda t: t.sum(0).T + 1, lambda a: a.sum(0).T + 1),
    "pad-then-reduce": (
        lambda t: t.pad(((0, 0), (1, 1), (2, 0)), value=1.0).max(1),
        lambda a: np.pad(a, ((0, 0), (1, 1), (2, 0)), constant_values=1.0).max(1),
    ),
}


@pytest.mark.parametrize("name", list(MOVES))
def test_movement(name):
    op, ref = MOVES[name]
    check(op(Tensor(X3)), ref(X3.astype(F64)), F32, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("kind", ["int", "bool"])
def test_pad_value_int_bool(kind):
    x = rand_i32((3, 7), key=45) if kind == "int" else rand_bool((3, 7), 46)
    v = 9 if kind == "int" else True
    check(
        Tensor(x).pad(((1, 2), (0, 1)), value=v),
        np.pad(x, ((1, 2), (0, 1)), constant_values=v),
        x.dtype,
    )


def test_movement_big():
    x = rand_f32(BIG2, key=47)
    check(Tensor(x).T.flip(0)[::3] * 2, np.flip(x.T, 0)[::3].astype(F64) * 2, F32)


def test_movement_0d_and_size1():
    s = np.array(1.5, F32)
    check(Tensor(s).reshape(1, 1, 1), s.reshape(1, 1, 1), F32)
    check(Tensor(s).unsqueeze(0), s.reshape(1), F32)
    check(Tensor(s).flatten(), s.reshape(1), F32)
    check(Tensor(s).expand(3, 2), np.broadcast_to(s, (3, 2)), F32)
    check(Tensor(s).T, s, F32)
    x = rand_f32((1, 13, 1), key=48)
    check(Tensor(x).permute(2, 1, 0).squeeze(), x.transpose(2, 1, 0).squeeze(), F32)
    check(Tensor(x).expand(4, 13, 3), np.broadcast_to(x, (4, 13, 3)), F32)


def test_movement_metadata():
    t = Tensor(X3)
    assert t.shape == (2, 3, 4) and t.ndim == 3 and t.numel() == 24 and len(t) == 2
    assert t.size() == (2, 3, 4) and t.size(-1) == 4
    assert t.reshape(-1, 2).shape == (12, 2)
    assert t.T.shape == (4, 3, 2)
    assert t[None, ..., None].shape == (1, 2, 3, 4, 1)
    assert Tensor(1.0).T.shape == ()


# ---------------------------------------------------------------------------
# __getitem__
# ---------------------------------------------------------------------------

X4 = rand_f32((4, 5, 6), key=49)

INDEXES = [
    pytest.param(lambda a: a[1], id="int"),
    pytest.param(lambda a: a[-1], id="neg-int"),
    pytest.param(lambda a: a[np.int64(2)], id="np-int"),
    pytest.param(lambda a: a[1:3], id="slice"),
    pytest.param(lambda a: a[-3:-1], id="neg-slice"),
    pytest.param(lambda a: a[::2], id="step"),
    pytest.param(lambda a: a[1::3, ::4], id="step-offset"),
    pytest.param(lambda a: a[::-1], id="neg-step"),
    pytest.param(lambda a: a[::-2, 3:0:-1], id="neg-step2"),
    pytest.param(lambda a: a[-2::-2, :, ::-5], id="neg-step-start"),
    pytest.param(lambda a: a[1, ::-2, 3], id="mixed"),
    pytest.param(lambda a: a[2, -1, -3], id="scalar"),
    pytest.param(lambda a: a[None], id="none"),
    pytest.param(lambda a: a[:, None, 1:4], id="none-mid"),
    pytest.param(lambda a: a[..., 2], id="ellipsis-int"),
    pytest.param(lambda a: a[None, ..., None], id="none-ellipsis-none"),
    pytest.param(lambda a: a[1, ..., ::-1], id="int-ellipsis-negstep"),
    pytest.param(lambda a: a[...], id="ellipsis"),
    pytest.param(lambda a: a[:, 10:], id="past-end"),
    pytest.param(lambda a: a[-100:100, 1:2], id="clamped"),
    pytest.param(lambda a: a[3:1], id="empty"),
]


@pytest.mark.parametrize("index", INDEXES)
def test_getitem(index):
    check(index(Tensor(X4)), index(X4), F32, rtol=0, atol=0)


def test_getitem_then_compute_and_0d():
    x = np.arange(7, dtype=I32)
    check(Tensor(x)[::-2] * 10 + Tensor(x)[1::2].sum(), x[::-2] * 10 + x[1::2].sum(), I64)
    s = Tensor(np.array(5.0, F32))
    check(s[None], np.array([5.0], F32), F32)
    check(s[...], np.array(5.0, F32), F32)


# ---------------------------------------------------------------------------
# item / tolist / numpy
# ---------------------------------------------------------------------------


def test_item():
    v = Tensor(np.array([[2.5]], F32)).item()
    assert v == 2.5 and type(v) is float
    v = (Tensor([3, 4]).sum()).item()
    assert v == 7 and type(v) is int
    v = (Tensor([1.0, 2.0]) < 1.5)[0].item()
    assert v is True
    assert Tensor(np.array(-1, I64)).item() == -1


def test_tolist():
    x = np.arange(6, dtype=I32).reshape(2, 3)
    out = (Tensor(x) * 2).tolist()
    assert out == [[0, 2, 4], [6, 8, 10]] and type(out[0][0]) is int
    assert (Tensor([1.5, 2.0]) * 2).tolist() == [3.0, 4.0]
    assert Tensor(2.0).tolist() == 2.0
    assert (Tensor([True, False]) ^ True).tolist() == [False, True]


def test_numpy_returns_a_fresh_copy():
    t = Tensor(np.arange(4, dtype=F32)) + 1
    a = t.numpy()
    a[0] = 100
    check(t, np.arange(4) + 1, F32)
    assert t.numpy().flags["C_CONTIGUOUS"]


# ---------------------------------------------------------------------------
# realize, schedule cache
# ---------------------------------------------------------------------------


def test_realize_several_at_once():
    x = rand_f32((3, 13), key=50)
    t = Tensor(x)
    a, b, c = t + 1, (t * 2).sum(1), t.exp().max()
    mlfuse.realize(a, b, c)
    assert a.node.realized and b.node.realized and c.node.realized
    check(a, x.astype(F64) + 1, F32)
    check(b, (x.astype(F64) * 2).sum(1), F32, rtol=2e-6)
    check(c, np.exp(x.astype(F64)).max(), F32, rtol=2e-6)


def test_tensor_realize_with_others_and_duplicates():
    x = rand_i32((7,), key=51)
    t = Tensor(x)
    a, b = t * 3, t - 1
    assert a.realize(b, a) is a
    assert a.node.realized and b.node.realized
    check(a, x * 3, I32)
    check(b, x - 1, I32)
    mlfuse.realize(a, b)  # already realized: no-op
    check(a, x * 3, I32)


def test_realize_shared_subexpression():
    x = rand_f32((13,), key=52)
    t = Tensor(x)
    common = (t * 2).exp()
    a, b = common + 1, common.sum()
    mlfuse.realize(a, b)
    e = np.exp(x.astype(F64) * 2)
    check(a, e + 1, F32, rtol=2e-6)
    check(b, e.sum(), F32, rtol=2e-6)
    check(common, e, F32, rtol=2e-6)  # still lazy: computed on its own


def test_schedule_cache_reruns_on_new_data():
    def f(t):
        return (t * 2 + 1).sum(0).sqrt()

    x1, x2 = rand_f32((5, 13), 0, 1, key=53), rand_f32((5, 13), 0, 1, key=54)
    check(f(Tensor(x1)), np.sqrt((x1.astype(F64) * 2 + 1).sum(0)), F32, rtol=2e-6)
    n_programs = len(graph._programs)
    out2 = f(Tensor(x2))
    check(out2, np.sqrt((x2.astype(F64) * 2 + 1).sum(0)), F32, rtol=2e-6)
    assert len(graph._programs) == n_programs, "the second run should hit the schedule cache"
    assert not np.allclose(f(Tensor(x1)).numpy(), out2.numpy())


# ---------------------------------------------------------------------------
# assign
# ---------------------------------------------------------------------------


def _realized(x: np.ndarray) -> Tensor:
    t = Tensor(x)
    assert t.node.realized
    return t


def test_assign_in_place():
    x = np.arange(13, dtype=F32)
    t = _realized(x)
    buf = t.node.buffer
    assert t.assign(t * 2 + 1) is t
    check(t, x * 2 + 1, F32)
    assert t.node.buffer is buf, "assign should write the target's buffer"


def test_assign_self_plus_one_repeatedly():
    x = rand_i32((3, 7), key=55)
    t = _realized(x)
    for _ in range(3):
        t.assign(t + 1).realize()
    check(t, x + 3, I32)


def test_assign_old_lazy_readers_keep_old_values_and_views_follow():
    x = rand_f32((13,), key=56)
    t = _realized(x)
    reader = t * 10
    copy = t.flip(0)
    view = t[::-1]
    t.assign(t + 1)
    t.realize()
    check(t, x.astype(F64) + 1, F32)
    check(reader, x.astype(F64) * 10, F32)
    check(copy, x[::-1], F32)
    check(view, x[::-1].astype(F64) + 1, F32)  # a view shares t's values
    check(t * 10, (x.astype(F64) + 1) * 10, F32)  # new readers see the new values


def test_assign_realized_together_with_reader():
    x = rand_f32((7,), key=57)
    t = _realized(x)
    reader = t.sum()
    t.assign(t * 3)
    mlfuse.realize(t, reader)
    check(t, x.astype(F64) * 3, F32)
    check(reader, x.astype(F64).sum(), F32, rtol=2e-6)


def test_assign_scalar_and_broadcast():
    x = rand_f32((3, 7), key=58)
    t = _realized(x)
    t.assign(0.5)
    check(t, np.full((3, 7), 0.5), F32)
    row = rand_f32((7,), key=59)
    t.assign(Tensor(row))
    check(t, np.broadcast_to(row, (3, 7)), F32)


def test_assign_other_tensor_and_lazy_target():
    x, y = rand_f32((5,), key=60), rand_f32((5,), key=61)
    t = _realized(x)
    t.assign(Tensor(y).exp())
    check(t, np.exp(y.astype(F64)), F32, rtol=2e-6)
    lazy = Tensor(x) + 1  # not realized: assign just replaces the value
    lazy.assign(Tensor(y))
    check(lazy, y, F32)


def test_assign_transposed_contiguous():
    x = np.arange(9, dtype=F32).reshape(3, 3)
    t = _realized(x)
    t.assign(t.T.contiguous())
    check(t, x.T, F32)


def test_assign_reads_same_view():
    x = rand_f32((4, 5), key=62)
    t = _realized(x)
    t.assign(t.exp() * t)
    check(t, np.exp(x.astype(F64)) * x, F32, rtol=2e-6)
