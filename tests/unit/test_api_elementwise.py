"""The elementwise and reduction names of the tensor API against float64
numpy/math references (and PyTorch where it is installed): special values,
0-d / size-0 / non-contiguous inputs, accuracy sweeps, the torch spellings of
axes, kernel counts and the errors raised at the call."""

from __future__ import annotations

import math

import numpy as np
import pytest

import mlfuse
import mlfuse.nn.functional as F
from mlfuse import Tensor

F32, F64 = np.float32, np.float64
RNG = np.random.default_rng(7)

SPECIAL = np.array(
    [np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -0.5, 1.5, -2.5, 2.5, 3.0, -7.25, 30.0, -30.0, 1e-30],
    F32,
)
MIXED = np.concatenate([RNG.standard_normal(40).astype(F32) * 4, SPECIAL])


def kernels(*ts: Tensor) -> int:
    return len(mlfuse.schedule(*ts))


def check(got: Tensor, want, rtol=2e-6, atol=1e-6, dtype=None):
    g = got.numpy()
    w = np.asarray(want)
    assert g.shape == w.shape, (g.shape, w.shape)
    if dtype is not None:
        assert got.dtype == dtype, got.dtype
    if g.dtype.kind in "biu" and w.dtype.kind in "biu":
        np.testing.assert_array_equal(g, w)
        return
    np.testing.assert_allclose(g.astype(F64), w.astype(F64), rtol=rtol, atol=atol, equal_nan=True)


def _erf(x):
    return np.vectorize(math.erf)(x.astype(F64))


def _softplus(x, beta=1.0, threshold=20.0):
    x = x.astype(F64)
    with np.errstate(over="ignore"):
        return np.where(x * beta > threshold, x, np.log1p(np.exp(x * beta)) / beta)


def _sigmoid(x):
    x = x.astype(F64)
    with np.errstate(over="ignore"):
        return 1 / (1 + np.exp(-x))


def _elu(x, alpha=1.0):
    x = x.astype(F64)
    return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0)))


def _round_half_even(x, decimals=0):
    return np.round(x.astype(F64), decimals)


SELU_A, SELU_S = 1.6732632423543772, 1.0507009873554805

# name -> (op on a Tensor, float64 reference on a numpy array)
UNARY = {
    "neg": (lambda t: t.neg(), lambda x: -x.astype(F64)),
    "square": (lambda t: t.square(), lambda x: x.astype(F64) ** 2),
    "sign": (lambda t: t.sign(), lambda x: np.sign(x.astype(F64))),
    "trunc": (lambda t: t.trunc(), lambda x: np.trunc(x.astype(F64))),
    "round": (lambda t: t.round(), _round_half_even),
    "tan": (lambda t: t.tan(), lambda x: np.tan(x.astype(F64))),
    "erf": (lambda t: t.erf(), _erf),
    "erfc": (lambda t: t.erfc(), lambda x: np.vectorize(math.erfc)(x.astype(F64))),
    "expm1": (lambda t: t.expm1(), lambda x: np.expm1(x.astype(F64))),
    "log1p": (lambda t: t.log1p(), lambda x: np.log1p(x.astype(F64))),
    "leaky_relu": (lambda t: t.leaky_relu(0.2), lambda x: np.where(x > 0, x, 0.2 * x.astype(F64))),
    "elu": (lambda t: t.elu(0.5), lambda x: _elu(x, 0.5)),
    "celu": (
        lambda t: t.celu(2.0),
        lambda x: np.where(x > 0, x, 2.0 * np.expm1(np.minimum(x, 0) / 2.0)),
    ),
    "selu": (lambda t: t.selu(), lambda x: SELU_S * _elu(x, SELU_A)),
    "softplus": (lambda t: t.softplus(), _softplus),
    "softplus_beta": (lambda t: t.softplus(beta=2.0, threshold=5.0), lambda x: _softplus(x, 2, 5)),
    "logsigmoid": (lambda t: t.logsigmoid(), lambda x: np.log(_sigmoid(x))),
    "mish": (lambda t: t.mish(), lambda x: x * np.tanh(_softplus(x))),
    "hardtanh": (lambda t: t.hardtanh(-2.0, 1.0), lambda x: np.clip(x.astype(F64), -2, 1)),
    "relu6": (lambda t: t.relu6(), lambda x: np.clip(x.astype(F64), 0, 6)),
    "hardsigmoid": (lambda t: t.hardsigmoid(), lambda x: np.clip(x / 6.0 + 0.5, 0, 1)),
    "hardswish": (lambda t: t.hardswish(), lambda x: x * np.clip(x / 6.0 + 0.5, 0, 1)),
    "softsign": (lambda t: t.softsign(), lambda x: x / (1 + np.abs(x.astype(F64)))),
    "swish": (lambda t: t.swish(), lambda x: x * _sigmoid(x)),
    "gelu": (lambda t: t.gelu(), lambda x: x * 0.5 * (1 + _erf(x / math.sqrt(2)))),
    "gelu_tanh": (
        lambda t: t.gelu(approximate="tanh"),
        lambda x: (
            0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x.astype(F64) ** 3)))
        ),
    ),
    "sinh": (lambda t: t.sinh(), lambda x: np.sinh(x.astype(F64))),
    "cosh": (lambda t: t.cosh(), lambda x: np.cosh(x.astype(F64))),
    "asinh": (lambda t: t.asinh(), lambda x: np.arcsinh(x.astype(F64))),
    "acosh": (lambda t: t.acosh(), lambda x: np.arccosh(x.astype(F64))),
    "atanh": (lambda t: t.atanh(), lambda x: np.arctanh(x.astype(F64))),
    "atan": (lambda t: t.atan(), lambda x: np.arctan(x.astype(F64))),
    "asin": (lambda t: t.asin(), lambda x: np.arcsin(x.astype(F64))),
    "acos": (lambda t: t.acos(), lambda x: np.arccos(x.astype(F64))),
}


def _finite_inf_safe(name: str, x: np.ndarray) -> np.ndarray:
    """Inputs where the reference itself is well defined in float64 (tan's
    poles and gelu's inf * 0 are left out)."""
    if name == "tan":
        return x[np.isfinite(x) & (np.abs(x) < 1.5)]
    if name in ("mish", "swish", "gelu", "gelu_tanh", "hardswish"):
        return x[~np.isinf(x)]
    return x


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_against_float64(name):
    op, ref = UNARY[name]
    x = _finite_inf_safe(name, MIXED)
    with np.errstate(all="ignore"):
        want = ref(x)
    got = op(Tensor(x))
    assert got.dtype == mlfuse.float32
    check(got, want, rtol=4e-6, atol=2e-6)


@pytest.mark.parametrize("name", ["sign", "gelu", "elu", "hardswish", "erf", "atan", "sinh"])
def test_unary_on_0d_empty_and_non_contiguous(name):
    op, ref = UNARY[name]
    base = RNG.standard_normal((5, 6)).astype(F32)
    check(op(Tensor(np.float32(-0.75))), ref(np.float32(-0.75)), rtol=4e-6)
    check(op(Tensor(np.zeros((0, 3), F32))), np.zeros((0, 3)))
    t = Tensor(base)
    for view, arr in (
        (t.T, base.T),
        (t[1:4, ::2], base[1:4, ::2]),
        (t[:1].expand(4, 6), np.broadcast_to(base[:1], (4, 6))),
    ):
        check(op(view), ref(np.ascontiguousarray(arr)), rtol=4e-6, atol=2e-6)


def test_unary_against_torch():
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    x = MIXED[np.isfinite(MIXED)]
    tx = torch.tensor(x)
    pairs = {
        "sign": torch.sign, "trunc": torch.trunc, "round": torch.round, "erf": torch.erf,
        "erfc": torch.erfc, "leaky_relu": lambda v: tf.leaky_relu(v, 0.2),
        "elu": lambda v: tf.elu(v, 0.5), "celu": lambda v: tf.celu(v, 2.0), "selu": tf.selu,
        "softplus": tf.softplus, "logsigmoid": tf.logsigmoid, "mish": tf.mish,
        "hardtanh": lambda v: tf.hardtanh(v, -2.0, 1.0), "relu6": tf.relu6,
        "hardsigmoid": tf.hardsigmoid, "hardswish": tf.hardswish, "softsign": tf.softsign,
        "swish": tf.silu, "gelu": tf.gelu, "gelu_tanh": lambda v: tf.gelu(v, approximate="tanh"),
        "atan": torch.atan, "asinh": torch.asinh, "sinh": torch.sinh, "cosh": torch.cosh,
    }  # fmt: skip
    for name, fn in pairs.items():
        got = UNARY[name][0](Tensor(x)).numpy()
        np.testing.assert_allclose(got, fn(tx).numpy(), rtol=4e-6, atol=2e-6, err_msg=name)


def test_sign_of_nan_and_zeros_follows_numpy():
    got = Tensor(np.array([np.nan, -0.0, 0.0, -3.0, 2.0], F32)).sign().numpy()
    assert np.isnan(got[0])
    np.testing.assert_array_equal(got[1:], [0.0, 0.0, -1.0, 1.0])
    check(Tensor(np.array([-3, 0, 5], np.int32)).sign(), np.array([-1, 0, 1], np.int32))


def test_round_halves_to_even_with_decimals_and_signed_zero():
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, -0.2, 1e8 + 0.5], F32)
    got = Tensor(x).round().numpy()
    np.testing.assert_array_equal(got, np.round(x))
    assert np.signbit(got[[3, 7]]).all()  # -0.5 and -0.2 round to -0.0
    y = np.array([1.25, 1.35, -2.675, 123.456, 5.5e-3], F64)
    np.testing.assert_allclose(Tensor(y).round(2).numpy(), np.round(y, 2), rtol=1e-15)
    np.testing.assert_array_equal(
        Tensor(np.array([1234.5, 15.0])).round(-1).numpy(), [1230.0, 20.0]
    )
    ints = np.array([3, -7], np.int64)
    check(Tensor(ints).round(), ints)
    check(Tensor(ints).trunc(), ints)


def test_erf_accuracy_over_the_whole_line():
    """erf/erfc against math.erf over a dense sweep: float64 to ~1e-15, float32
    within half an ulp (computed in float64, rounded once)."""
    s = np.concatenate([np.linspace(-7, 7, 40001), [-30.0, 30.0, 1e-300, -1e-10]])
    e64 = Tensor(s).erf().numpy()
    ref = np.vectorize(math.erf)(s)
    assert np.max(np.abs(e64 - ref)) <= 2e-15
    c64 = Tensor(s).erfc().numpy()
    refc = np.vectorize(math.erfc)(s)
    assert np.max(np.abs(c64 - refc) / np.maximum(refc, 1e-300)) <= 1e-12  # relative, tail too
    s32 = s.astype(F32)
    e32 = Tensor(s32).erf().numpy()
    ref32 = np.vectorize(math.erf)(s32.astype(F64))
    ulp = np.spacing(np.abs(ref32).astype(F32)).astype(F64)
    assert np.max(np.abs(e32 - ref32) / np.maximum(ulp, 1e-45)) <= 1.0
    special = Tensor(np.array([np.nan, np.inf, -np.inf, -0.0], F32))
    got = special.erf().numpy()
    assert np.isnan(got[0]) and got[1] == 1 and got[2] == -1 and np.signbit(got[3])
    np.testing.assert_array_equal(special.erfc().numpy()[1:3], [0.0, 2.0])


@pytest.mark.parametrize(
    "name,lo,hi",
    [
        ("sinh", -700, 700), ("cosh", -700, 700), ("asinh", -1e6, 1e6), ("acosh", 1, 1e6),
        ("atanh", -1, 1), ("atan", -1e6, 1e6), ("asin", -1, 1), ("acos", -1, 1),
    ],
)  # fmt: skip
def test_hyperbolic_and_inverse_trig_accuracy(name, lo, hi):
    """float64 within a few ulp of math's functions over dense sweeps (near 0,
    near the domain ends, and large), float32 within one ulp."""
    dense = np.linspace(lo, hi, 20001)
    small = np.logspace(-12, 0, 400)
    near_ends = np.concatenate([lo + np.logspace(-14, -1, 200), hi - np.logspace(-14, -1, 200)])
    mid = np.linspace(max(lo, -20), min(hi, 20), 4001)
    x = np.concatenate([dense, small, -small, near_ends, mid])
    x = x[(x >= lo) & (x <= hi)]
    fn = getattr(math, name)
    want = np.array(
        [fn(v) if not (name == "atanh" and abs(v) == 1) else math.copysign(math.inf, v) for v in x]
    )
    got = getattr(Tensor(x), name)().numpy()
    fin = np.isfinite(want)
    ulps = np.abs(got[fin] - want[fin]) / np.spacing(np.abs(want[fin]))
    slack = 0.0
    if name in (
        "sinh",
        "cosh",
    ):  # large |x| goes through exp(|x| - 1): allow the target's exp error
        big = np.abs(x[np.abs(x) >= 20]) - 1
        e, ref = Tensor(big).exp().numpy(), np.exp(big)
        slack = float(np.max(np.abs(e - ref) / np.spacing(ref)))
    assert np.max(ulps) <= 8 + slack, (name, float(np.max(ulps)), x[fin][np.argmax(ulps)])
    assert (got[~fin] == want[~fin]).all()
    x32 = np.unique(x.astype(F32))
    w32 = np.array(
        [
            fn(float(v)) if abs(v) != 1 or name != "atanh" else math.copysign(math.inf, v)
            for v in x32
        ]
    )
    g32 = getattr(Tensor(x32), name)().numpy()
    ok = np.abs(w32) < np.finfo(F32).max  # where the float32 result is finite
    ulp32 = np.spacing(np.abs(w32[ok]).astype(F32)).astype(F64)
    assert np.max(np.abs(g32[ok] - w32[ok]) / ulp32) <= 1.0


def test_hyperbolic_and_inverse_trig_special_values():
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.0, -2.0], F64)
    refs = {
        "sinh": np.sinh, "cosh": np.cosh, "asinh": np.arcsinh, "acosh": np.arccosh,
        "atanh": np.arctanh, "atan": np.arctan, "asin": np.arcsin, "acos": np.arccos,
    }  # fmt: skip
    with np.errstate(all="ignore"):
        for name, ref in refs.items():
            got, want = getattr(Tensor(x), name)().numpy(), ref(x)
            np.testing.assert_allclose(got, want, rtol=1e-15, equal_nan=True, err_msg=name)
            zero = want == 0
            assert (np.signbit(got[zero]) == np.signbit(want[zero])).all(), name


def test_atan2_quadrants_signed_zeros_and_infinities():
    sp = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 2.5, -3.0, 1e-300, 1e300])
    y, x = np.meshgrid(sp, sp, indexing="ij")
    got, want = Tensor(y).atan2(Tensor(x)).numpy(), np.arctan2(y, x)
    np.testing.assert_allclose(got, want, rtol=1e-15, atol=0, equal_nan=True)
    num = ~np.isnan(want)
    assert (np.signbit(got[num]) == np.signbit(want[num])).all()
    a, b = RNG.standard_normal(2000) * 10, RNG.standard_normal(2000) * 10
    assert np.max(np.abs(Tensor(a).atan2(Tensor(b)).numpy() - np.arctan2(a, b))) <= 1e-15
    a32, b32 = a.astype(F32), b.astype(F32)
    out = Tensor(a32).atan2(Tensor(b32))
    assert out.dtype == mlfuse.float32
    check(out, np.arctan2(a32.astype(F64), b32.astype(F64)), rtol=1.2e-7, atol=1e-7)
    check(Tensor([1.0, -1.0]).atan2(0.0), [math.pi / 2, -math.pi / 2])


def test_inverse_and_hyperbolic_functions_fuse():
    x = Tensor(RNG.standard_normal((6, 7)).astype(F32)).realize()
    y = x.atan() + x.sinh() + x.cosh() + x.asinh() + x.tanh().atanh() + (x * 0.1).asin()
    assert kernels(y + x.atan2(x + 1)) == 1
    assert x.half().asin().dtype == mlfuse.float16


def test_isnan_isinf_isfinite_on_floats_and_ints():
    x = Tensor(SPECIAL)
    check(x.isnan(), np.isnan(SPECIAL), dtype=mlfuse.bool_)
    check(x.isinf(), np.isinf(SPECIAL), dtype=mlfuse.bool_)
    check(x.isfinite(), np.isfinite(SPECIAL), dtype=mlfuse.bool_)
    i = Tensor(np.array([1, -2], np.int32))
    check(i.isnan(), [False, False])
    check(i.isinf(), [False, False])
    check(i.isfinite(), [True, True])


def test_clamp_and_clip_spellings():
    x = MIXED[np.isfinite(MIXED)]
    t = Tensor(x)
    check(t.clamp(min=-1.0, max=2.0), np.clip(x, -1, 2))
    check(t.clamp(min=-1.0), np.maximum(x, -1))
    check(t.clamp(max=0.5), np.minimum(x, 0.5))
    check(t.clip(-1.0, 2.0), np.clip(x, -1, 2))  # positional, tinygrad/numpy style
    lo = RNG.standard_normal(x.shape).astype(F32)
    check(t.clamp(min=Tensor(lo), max=Tensor(lo) + 1), np.clip(x, lo, lo + 1))
    check(t.clamp(Tensor(np.float32(0.0))), np.maximum(x, 0))  # a 0-d tensor bound broadcasts
    check(Tensor(np.array([-5, 3, 9], np.int32)).clamp(0, 4), np.array([0, 3, 4], np.int32))
    with np.errstate(invalid="ignore"):
        got = Tensor(np.array([np.nan], F32)).clamp(0.0, 1.0).numpy()
    assert np.isnan(got).all()  # NaN propagates, as in PyTorch


def test_lerp_scalar_and_tensor_weights_exact_at_the_ends():
    a, b = RNG.standard_normal(30).astype(F32), RNG.standard_normal(30).astype(F32)
    w = RNG.random(30).astype(F32)
    check(Tensor(a).lerp(Tensor(b), 0.3), a + 0.3 * (b.astype(F64) - a))
    check(Tensor(a).lerp(Tensor(b), Tensor(w)), a + w * (b.astype(F64) - a), rtol=1e-5)
    np.testing.assert_array_equal(Tensor(a).lerp(Tensor(b), 1.0).numpy(), b)
    np.testing.assert_array_equal(Tensor(a).lerp(Tensor(b), 0.0).numpy(), a)
    check(Tensor(a[:1]).lerp(Tensor(b.reshape(30, 1)), 0.5), (a[:1] + b.reshape(30, 1)) / 2.0)


def test_pow_method_and_logical_ops():
    x = RNG.standard_normal(10).astype(F32)
    check(Tensor(x).pow(2), x.astype(F64) ** 2)
    check(Tensor(np.abs(x)).pow(0.5), np.sqrt(np.abs(x)))
    check(Tensor(np.array([2, 3], np.int64)).pow(3), np.array([8, 27]), dtype=mlfuse.int64)
    a = np.array([0.0, 1.0, -2.0, np.nan], F32)
    b = np.array([0, 0, 3, 1], np.int32)
    for name in ("logical_and", "logical_or", "logical_xor"):
        got = getattr(Tensor(a), name)(Tensor(b))
        check(got, getattr(np, name)(a, b), dtype=mlfuse.bool_)
    check(Tensor(a).logical_and(True), a != 0)
    check(Tensor(b).logical_not(), b == 0, dtype=mlfuse.bool_)


def test_module_level_where_maximum_minimum():
    x = MIXED
    t = Tensor(x)
    check(mlfuse.where(t > 0, t, 0.0), np.where(x > 0, x, 0.0))
    check(mlfuse.where(t > 0, 1.0, -1.0), np.where(x > 0, 1.0, -1.0))
    check(mlfuse.where(np.array([True, False]), Tensor([1.0, 2.0]), 5), [1.0, 5.0])
    y = RNG.standard_normal(x.shape).astype(F32)
    check(mlfuse.maximum(t, Tensor(y)), np.maximum(x, y))
    check(mlfuse.minimum(t, Tensor(y)), np.minimum(x, y))
    check(mlfuse.maximum(2.0, Tensor([1.0, 3.0])), [2.0, 3.0])


def test_gelu_default_is_exact_and_tanh_form_stays_available():
    x = np.linspace(-6, 6, 101).astype(F32)
    exact = x * 0.5 * np.vectorize(math.erfc)(-x.astype(F64) / math.sqrt(2))
    check(Tensor(x).gelu(), exact, rtol=2e-6, atol=1e-7)
    tanh_form = UNARY["gelu_tanh"][1](x)
    check(Tensor(x).gelu(approximate="tanh"), tanh_form, rtol=4e-6, atol=1e-6)
    assert np.max(np.abs(exact - tanh_form)) > 1e-4  # the two forms differ
    with pytest.raises(ValueError, match="approximate must be 'none' or 'tanh'"):
        Tensor(x).gelu("fast")


def test_elementwise_chains_fuse_into_one_kernel():
    x = Tensor(RNG.standard_normal((8, 8)).astype(F32)).realize()
    y = Tensor(RNG.standard_normal((8, 8)).astype(F32)).realize()
    chain = (
        x.elu() + x.selu() + x.mish() + x.hardswish() + x.softplus() + x.logsigmoid()
        + x.round() + x.trunc() + x.sign() + x.erf() + x.gelu() + x.lerp(y, 0.3)
        + x.clamp(min=y, max=y + 1) + x.tan()
    )  # fmt: skip
    assert kernels(chain) == 1
    assert kernels(x.isnan() | x.isinf() | x.isfinite().logical_not()) == 1


# ---------------------------------------------------------------------------
# reductions
# ---------------------------------------------------------------------------


def test_argmax_argmin_first_index_on_ties_and_nan_is_largest():
    x = RNG.standard_normal((3, 4, 5)).astype(F32)
    x[1, 2, :] = 1.0  # ties
    x[0, 1, 3] = np.nan
    x[2, 0, 1] = np.nan
    x[2, 0, 4] = np.nan
    t = Tensor(x)

    def ref_arg(a, axis, largest):
        """numpy's argmax/argmin already pick the first NaN and the first tie."""
        return np.argmax(a, axis) if largest else np.argmin(a, axis)

    for largest, name in ((True, "argmax"), (False, "argmin")):
        for axis in (0, 1, 2, -1):
            got = getattr(t, name)(axis)
            check(got, ref_arg(x, axis, largest), dtype=mlfuse.int64)
            check(
                getattr(t, name)(dim=axis, keepdim=True),
                np.expand_dims(ref_arg(x, axis, largest), axis),
            )
        check(getattr(t, name)(), ref_arg(x, None, largest))
        assert getattr(t, name)(keepdim=True).shape == (1, 1, 1)
    ints = np.array([[3, 7, 7, 1], [-2, -2, 0, -5]], np.int32)
    check(Tensor(ints).argmax(1), [1, 2])
    check(Tensor(ints).argmin(1), [3, 3])
    check(Tensor(ints == 0).argmax(1), [0, 2])
    check(Tensor(np.float32(4.0)).argmax(), 0)
    with pytest.raises(ValueError, match="argmax of an empty axis"):
        Tensor(np.zeros((2, 0), F32)).argmax(1)


def test_arg_reductions_against_torch():
    torch = pytest.importorskip("torch")
    x = RNG.integers(-2, 3, (4, 6)).astype(F32)
    x[0, 2] = np.nan
    for name in ("argmax", "argmin"):
        for dim in (0, 1):
            np.testing.assert_array_equal(
                getattr(Tensor(x), name)(dim=dim).numpy(),
                getattr(torch.tensor(x), name)(dim=dim).numpy(),
            )


def test_any_all_are_bool_and_handle_empty_axes():
    x = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 0.0]], F32)
    t = Tensor(x)
    check(t.any(), True, dtype=mlfuse.bool_)
    check(t.all(), False, dtype=mlfuse.bool_)
    check(t.any(1), [True, False])
    check(t.all(dim=0, keepdim=True), [[False, False, False]])
    check(Tensor(np.array([np.nan], F32)).all(), True)  # NaN is non-zero
    empty = Tensor(np.zeros((0, 3), F32))
    check(empty.any(0), [False] * 3)
    check(empty.all(0), [True] * 3)
    check(Tensor(np.array([-1, 0], np.int8)).any(), True)


@pytest.mark.parametrize("p", [2, 1, math.inf, -math.inf, "fro", 3, 0, 0.5])
def test_norm(
    p,
):
    x = RNG.standard_normal((3, 4, 5)).astype(F32)
    a = np.abs(x.astype(F64))

    def ref(axis, keep=False):
        if p in (2, "fro"):
            return np.sqrt((a * a).sum(axis, keepdims=keep))
        if p == math.inf:
            return a.max(axis, keepdims=keep)
        if p == -math.inf:
            return a.min(axis, keepdims=keep)
        if p == 0:
            return (a != 0).sum(axis, keepdims=keep).astype(F64)
        return (a**p).sum(axis, keepdims=keep) ** (1 / p)

    check(Tensor(x).norm(p), ref(None), rtol=1e-5)
    check(Tensor(x).norm(p, dim=1, keepdim=True), ref(1, True), rtol=1e-5)
    check(Tensor(x).norm(p, dim=(0, 2)), ref((0, 2)), rtol=1e-5)
    check(Tensor(x).T.norm(p, dim=-1), ref(0).T, rtol=1e-5)


def test_amax_amin_count_nonzero():
    x = RNG.integers(-3, 3, (4, 5)).astype(np.int32)
    t = Tensor(x)
    check(t.amax(dim=(0, 1)), x.max())
    check(t.amin(1, keepdims=True), x.min(1, keepdims=True))
    check(t.count_nonzero(), np.count_nonzero(x), dtype=mlfuse.int64)
    check(t.count_nonzero(dim=0), np.count_nonzero(x, axis=0))
    f = Tensor(np.array([[1.0, np.nan], [-1.0, 2.0]], F32))
    check(f.amax(1), [np.nan, 2.0])
    check(f.amin(0), [-1.0, np.nan])


def test_torch_spellings_of_axes_and_corrections():
    x = RNG.standard_normal((3, 4, 5)).astype(F32)
    t, d = Tensor(x), x.astype(F64)
    check(t.sum(dim=1, keepdims=True), d.sum(1, keepdims=True), rtol=1e-5)
    check(t.max(dim=-1), d.max(-1))  # values, tinygrad style
    check(t.min(dim=0, keepdim=True), d.min(0, keepdims=True))
    check(t.prod(dim=2), d.prod(2), rtol=1e-5)
    check(t.mean(dim=(0, 2)), d.mean((0, 2)), rtol=1e-5)
    check(t.var(dim=1, unbiased=False), d.var(1), rtol=1e-5)
    check(t.std(dim=1, unbiased=True), d.std(1, ddof=1), rtol=1e-5)
    check(t.std(1, correction=0), d.std(1), rtol=1e-5)
    check(t.softmax(dim=0), np.exp(d) / np.exp(d).sum(0), rtol=1e-5)
    check(t.log_softmax(dim=1), d - np.log(np.exp(d).sum(1, keepdims=True)), rtol=1e-5, atol=1e-5)
    check(t.logsumexp(dim=2, keepdims=True), np.log(np.exp(d).sum(2, keepdims=True)), rtol=1e-5)
    check(t.argmax(dim=1, keepdims=True), np.argmax(x, 1)[:, None])
    with pytest.raises(TypeError, match="got both dim and axis"):
        t.sum(1, dim=1)
    with pytest.raises(TypeError, match="got both keepdims and keepdim"):
        t.sum(dim=1, keepdim=True, keepdims=True)
    with pytest.raises(TypeError, match="got both unbiased and correction"):
        t.var(dim=1, unbiased=True, correction=1)


def test_reductions_fuse_with_their_elementwise_neighbours():
    x = Tensor(RNG.standard_normal((8, 16)).astype(F32)).realize()
    assert kernels(x.argmax(1)) == 1
    assert kernels(x.norm(dim=1) + x.amax(1) + x.amin(1)) == 1
    assert kernels((x > 0).any(1)) == 1
    assert kernels(x.count_nonzero(0)) == 1


def test_errors_name_the_argument():
    x = Tensor(np.ones((2, 3), F32))
    with pytest.raises(ValueError, match="dim 2 is out of range for a tensor of 2 dims"):
        x.argmax(2)
    with pytest.raises(TypeError, match="dim must be an int"):
        x.argmax(1.5)
    with pytest.raises(ValueError, match="norm: p must be a number, 'fro' or 'nuc'"):
        x.norm("max")
    with pytest.raises(TypeError, match="not defined for float32"):
        x.bitwise_and(1) if hasattr(x, "bitwise_and") else x & 1
    with pytest.raises(ValueError, match="do not broadcast"):
        x.lerp(Tensor(np.ones((4,), F32)), 0.5)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_float_remainders_are_exact_for_any_quotient(dt):
    # x - trunc(x / y) * y loses the remainder once the quotient passes the
    # mantissa (fmod(3e38, 7.5) came out 0); numpy's fmod/remainder/floor_divide are
    # exact: every element must equal them
    rng = np.random.default_rng(3)
    n = 20_000
    a = (rng.standard_normal(n) * 10.0 ** rng.integers(-40, 40, n)).astype(dt)
    b = (rng.standard_normal(n) * 10.0 ** rng.integers(-40, 40, n)).astype(dt)
    tiny, big = np.finfo(dt).smallest_subnormal, np.finfo(dt).max
    a[:500], b[:500] = big * rng.uniform(0.5, 1, 500), tiny * rng.integers(1, 100, 500)
    a[500:1000], b[500:1000] = tiny * rng.integers(1, 1000, 500), tiny * rng.integers(1, 99, 500)
    a[1000:1500], b[1000:1500] = rng.integers(-(2**40), 2**40, 500), rng.integers(1, 999, 500)
    with np.errstate(all="ignore"):
        for op, ref in (("fmod", np.fmod), ("__mod__", np.remainder),
                        ("__floordiv__", np.floor_divide)):  # fmt: skip
            got = getattr(Tensor(a), op)(Tensor(b)).numpy()
            want = ref(a, b)
            same = (got == want) | (np.isnan(got) & np.isnan(want))
            assert same.all(), (op, a[~same][:3], b[~same][:3], got[~same][:3], want[~same][:3])


def test_float_remainder_edges_follow_pytorch():
    inf, nan = np.inf, np.nan
    a = np.array([0.5, -0.5, 0.5, -0.5, -0.0, -3.0, inf, 2.0, nan])
    b = np.array([inf, inf, -inf, -inf, 2.0, 3.0, 2.0, 0.0, 1.0])
    f = Tensor(a).fmod(Tensor(b)).numpy()  # C's: x for an infinite divisor, the dividend's sign
    np.testing.assert_array_equal(f, [0.5, -0.5, 0.5, -0.5, -0.0, -0.0, nan, nan, nan])
    assert np.signbit(f[4]) and np.signbit(f[5])
    m = (Tensor(a) % Tensor(b)).numpy()  # the divisor's sign: past an infinity, that infinity
    np.testing.assert_array_equal(m, [0.5, inf, -inf, -0.5, -0.0, -0.0, nan, nan, nan])
    d = (Tensor(a) // Tensor(b)).numpy()  # Python's: 0.5 // -inf is -1
    np.testing.assert_array_equal(d, [0.0, -1.0, -1.0, 0.0, -0.0, -1.0, nan, inf, nan])


def test_logsumexp_with_infinities():
    inf, nan = np.inf, np.nan
    x = np.array([[1.0, inf, 2.0], [-inf, -inf, -inf], [nan, 1.0, 2.0], [3.0, 1e308, -1e308]])
    got = Tensor(x).logsumexp(1).numpy()
    np.testing.assert_array_equal(got[:3], [inf, -inf, nan])
    np.testing.assert_allclose(got[3], 1e308 + 0.0)
    np.testing.assert_array_equal(Tensor(x.astype(np.float32)).logsumexp(0).numpy()[0], nan)
    assert Tensor(np.float32([-inf, -inf])).logsumexp(0).numpy() == -inf


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_half_mean_is_pytorchs(name):
    # a float32 sum times float32(1/n), rounded once: no overflow of the 16-bit sum
    # (the mean of 100000 ones was NaN), and PyTorch's bits (values from torch 2.13)
    ones = Tensor.ones(100_000, dtype=name)
    assert ones.mean().float().item() == 1.0
    x = Tensor(np.array([[1.5, 2.25, 3.0], [0.1, 0.2, 0.7]], np.float32)).cast(name)
    got = x.mean(1).float().numpy()
    want = {"float16": [2.25, 0.33349609375], "bfloat16": [2.25, 0.333984375]}[name]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_half_composites_round_once(name):
    # sigmoid, tanh, silu, rsqrt, norm, layer_norm and prod of 16-bit tensors run in
    # float32 and round once: each equals the float32 result rounded to the dtype
    # (rounding every step to 16 bits was off by an ulp in a third of the elements)
    rng = np.random.default_rng(4)
    x32 = (rng.standard_normal((8, 64)) * 2).astype(np.float32)
    x = Tensor(x32).cast(name)
    xf = x.float()  # the 16-bit values, exactly
    cases = [
        (x.sigmoid(), xf.sigmoid()), (x.tanh(), xf.tanh()), (F.silu(x), F.silu(xf)),
        (x.abs().rsqrt(), xf.abs().rsqrt()), (x.norm(dim=1), xf.norm(dim=1)),
        (F.layer_norm(x, (64,)), F.layer_norm(xf, (64,))), (x.softmax(1), xf.softmax(1)),
        ((x * 0.1 + 1).prod(1), (x * 0.1 + 1).float().prod(1)),
    ]  # fmt: skip
    for got, ref in cases:
        assert got.dtype.name == name
        np.testing.assert_array_equal(got.float().numpy(), ref.cast(name).float().numpy())
