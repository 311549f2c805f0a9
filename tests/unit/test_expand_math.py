"""expand-math numerics through the whole CPU pipeline, against wider references.

float32 results are compared with numpy in float64, float64 results with
numpy in long double; errors are in ulps of the correctly rounded result
(denormal results in ulps of the smallest denormal). Special values must
match numpy exactly (NaN positions, infinities, signed zeros).
"""

from __future__ import annotations

import numpy as np
import pytest

from mlfuse import Tensor

F32, F64 = np.float32, np.float64
WIDE = {F32: np.float64, F64: np.longdouble}


def ulps(got: np.ndarray, ref: np.ndarray, dt) -> float:
    """Max error of ``got`` in ulps of ``ref`` rounded to ``dt``, where ``ref`` is finite."""
    with np.errstate(over="ignore"):
        return _ulps(got, ref, dt)


def _ulps(got: np.ndarray, ref: np.ndarray, dt) -> float:
    fin = np.isfinite(ref.astype(dt))
    assert np.array_equal(np.isnan(got), np.isnan(ref)), "NaN positions differ"
    assert np.array_equal(got[~fin], ref[~fin].astype(dt), equal_nan=True), "infinities differ"
    g, r = got[fin].astype(ref.dtype), ref[fin]
    return float(np.max(np.abs(g - r) / np.spacing(np.abs(r.astype(dt))).astype(ref.dtype)))


def run(name: str, x: np.ndarray) -> np.ndarray:
    return getattr(Tensor(x), name)().numpy()


def check(name: str, x: np.ndarray, max_ulp: float) -> float:
    dt = x.dtype.type
    with np.errstate(all="ignore"):
        ref = getattr(np, name)(x.astype(WIDE[dt]))
    err = ulps(run(name, x), ref, dt)
    assert err <= max_ulp, f"{name} {dt.__name__}: {err:.3f} ulp > {max_ulp}"
    return err


def f32_range(lo: float, hi: float, n: int) -> np.ndarray:
    """About n float32 values evenly spaced in bit pattern over [lo, hi] (hi > 0)."""

    def bits(v):
        return int(np.array(v, F32).view(np.int32))

    parts = []
    if hi > 0:
        a, b = bits(max(lo, 0.0)), bits(hi)
        parts.append(np.arange(a, b + 1, max(1, (b - a) // n), dtype=np.int32))
    if lo < 0:
        a, b = bits(abs(min(hi, 0.0))), bits(-lo)
        parts.append(np.arange(a, b + 1, max(1, (b - a) // n), dtype=np.int32) | np.int32(-(2**31)))
    return np.concatenate(parts).view(F32)


# -- float32: dense sweeps ----------------------------------------------------------
def test_exp_f32_sweep():
    # every ~1000th float32 in [-87, 88], denormal and tiny inputs included
    check("exp", f32_range(-87.0, 88.0, 1_000_000), 1.0)


def test_exp2_f32_sweep():
    check("exp2", f32_range(-126.0, 127.0, 1_000_000), 1.0)


@pytest.mark.parametrize("name", ["log", "log2"])
def test_log_f32_sweep(name):
    # every ~1000th positive float32, denormals to the largest finite
    check(name, f32_range(0.0, float(np.finfo(F32).max), 2_000_000), 1.0)


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_sincos_f32(name):
    check(name, np.linspace(-1e4, 1e4, 2_000_001, dtype=F32), 0.51)
    big = np.random.default_rng(1).uniform(3, 35, 100_000)
    x = np.concatenate([np.exp(big), -np.exp(big)]).astype(F32)  # 20 .. 1.6e15
    check(name, x, 0.51)


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_sincos_f32_whole_range(name):
    # every ~4000th float32 of either sign up to the largest: from |x| = 2^50 the
    # reduction is Payne-Hanek's (expand-large-sincos), still correctly rounded
    fmax = float(np.finfo(F32).max)
    check(name, f32_range(-fmax, fmax, 1_000_000), 0.51)
    # around the switch, and vectors mixing both paths (and NaN/inf) in one loop
    below = np.nextafter(F32(2.0**50), F32(0))
    x = np.array([2.0**50, -(2.0**50), below, 1e20, 3.0, -0.0, np.inf, 1.5e38, np.nan, 2.5,
                  7e37, -1e30, 0.5, 1e16, -3e20, 1.0], F32)  # fmt: skip
    with np.errstate(invalid="ignore"):
        ref = getattr(np, name)(x.astype(F64)).astype(F32)
    y = run(name, x)
    assert np.array_equal(y, ref, equal_nan=True), (x, y, ref)
    assert np.array_equal(np.signbit(y[~np.isnan(y)]), np.signbit(ref[~np.isnan(ref)]))


# -- float32: special values ----------------------------------------------------------
MAXF = float(np.finfo(F32).max)
TINY = float(np.finfo(F32).smallest_subnormal)


def test_exp_f32_specials():
    x = np.array(
        [np.inf, -np.inf, np.nan, 0.0, -0.0, 88.72283, 88.72284, 89.0, 1e30,
         -87.33654, -87.33655, -100.0, -103.27893, -103.972, -103.973, -104.0, -1e30, TINY],
        F32,
    )  # fmt: skip
    y = run("exp", x)
    with np.errstate(over="ignore"):
        ref = np.exp(x.astype(F64)).astype(F32)
    assert y[0] == np.inf and y[1] == 0 and np.isnan(y[2]) and y[3] == 1 and y[4] == 1
    assert np.isfinite(y[5]) and y[6] == np.inf and y[7] == np.inf and y[8] == np.inf
    assert y[15] == 0 and y[16] == 0 and y[17] == 1
    # denormal results: within one denormal step of the correctly rounded value
    assert np.all(np.abs(y[9:15].astype(F64) - ref[9:15]) <= TINY), (y[9:15], ref[9:15])


def test_exp2_f32_specials():
    x = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 127.99999, 128.0, -149.0, -149.5, -150.0,
                  -151.0, -126.5, 3.0, -3.0], F32)  # fmt: skip
    with np.errstate(over="ignore"):
        ref = np.exp2(x.astype(F64)).astype(F32)
    assert np.array_equal(run("exp2", x), ref, equal_nan=True)


@pytest.mark.parametrize("name", ["log", "log2"])
def test_log_f32_specials(name):
    x = np.array([0.0, -0.0, -1.0, -TINY, np.inf, -np.inf, np.nan, 1.0, TINY, 2 * TINY, MAXF,
                  2.0**-126, 0.5, 2.0], F32)  # fmt: skip
    y = run(name, x)
    with np.errstate(all="ignore"):
        ref = getattr(np, name)(x.astype(F64)).astype(F32)
    assert np.array_equal(y, ref, equal_nan=True), (y, ref)


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_sincos_f32_specials(name):
    x = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, TINY, -TINY, 1e-20], F32)
    with np.errstate(invalid="ignore"):
        ref = getattr(np, name)(x.astype(F64)).astype(F32)
    y = run(name, x)
    assert np.array_equal(y, ref, equal_nan=True)
    assert np.array_equal(np.signbit(y), np.signbit(ref))  # sin(-0) = -0


# -- float32 pow --------------------------------------------------------------------
def test_pow_f32_accuracy():
    rng = np.random.default_rng(2)
    x = np.exp(rng.uniform(-20, 20, 500_000)).astype(F32)
    y = rng.uniform(-4, 4, 500_000).astype(F32)
    got = (Tensor(x) ** Tensor(y)).numpy()
    assert ulps(got, np.power(x.astype(F64), y.astype(F64)), F32) <= 0.51
    # negative bases with integer exponents, results spanning the whole range
    xn = -np.exp(rng.uniform(-5, 5, 100_000)).astype(F32)
    yn = rng.integers(-30, 30, 100_000).astype(F32)
    with np.errstate(all="ignore"):
        ref = np.power(xn.astype(F64), yn.astype(F64))
    assert ulps((Tensor(xn) ** Tensor(yn)).numpy(), ref, F32) <= 0.51


def test_pow_f32_specials_match_numpy():
    vals = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 2.5, -2.5, np.inf,
                     -np.inf, np.nan, TINY, -TINY, MAXF, 1e-30], F32)  # fmt: skip
    pow_specials_match_numpy(vals)


def pow_specials_match_numpy(vals: np.ndarray) -> None:
    """x ** y for every pair of ``vals``: special values as numpy's, finite non-zero
    results within an ulp (numpy's own pow is not always correctly rounded)."""
    x, y = (a.reshape(-1) for a in np.meshgrid(vals, vals, indexing="ij"))
    with np.errstate(all="ignore"):
        ref = np.power(x, y)
    got = (Tensor(x) ** Tensor(y)).numpy()
    same = (got == ref) & (np.signbit(got) == np.signbit(ref)) | (np.isnan(got) & np.isnan(ref))
    with np.errstate(invalid="ignore", over="ignore"):
        near = np.isfinite(ref) & (ref != 0) & (np.abs(got - ref) <= np.spacing(np.abs(ref)))
    assert (same | near).all(), list(zip(x[~same], y[~same], got[~same], ref[~same]))


# -- float64 ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name,lo,hi,max_ulp",
    [("exp", -745.0, 709.7, 1.0), ("exp2", -1074.0, 1023.9, 1.0), ("sin", -1e4, 1e4, 2.0),
     ("cos", -1e4, 1e4, 2.0)],
)  # fmt: skip
def test_f64_uniform(name, lo, hi, max_ulp):
    check(name, np.random.default_rng(3).uniform(lo, hi, 300_000), max_ulp)


@pytest.mark.parametrize("name", ["log", "log2"])
def test_log_f64(name):
    rng = np.random.default_rng(4)
    x = np.concatenate([np.exp(rng.uniform(-744, 709, 300_000)), rng.uniform(0.5, 2.0, 100_000)])
    check(name, x, 1.0)


def test_f64_specials():
    tiny = float(np.finfo(F64).smallest_subnormal)
    x = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, tiny, -tiny, 1.0, 709.78, 709.79, -745.1,
                  -745.2, -708.4, -740.0, 1e300, -1e300])  # fmt: skip
    with np.errstate(all="ignore"):
        for name in ("exp", "exp2", "log", "log2", "sin", "cos"):
            ref = getattr(np, name)(x.astype(np.longdouble))
            y = run(name, x)
            assert np.array_equal(np.isnan(y), np.isnan(ref)), name
            fin = np.isfinite(ref.astype(F64))
            assert np.array_equal(y[~fin], ref[~fin].astype(F64), equal_nan=True), name
            err = np.abs(y[fin] - ref[fin]) / np.spacing(np.abs(ref[fin].astype(F64)))
            assert (err <= 1.0).all(), (name, x[fin][err > 1.0], y[fin][err > 1.0])


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_sincos_f64_large_arguments(name):
    # from 2^50 to the largest double, both signs, every power of two (each of
    # the eight exponent buckets of the reduction) and its neighbours
    rng = np.random.default_rng(5)
    p2 = 2.0 ** np.arange(40, 1024)
    big = np.exp(rng.uniform(30, 709.7, 200_000)) * rng.choice([-1, 1], 200_000)
    edges = [p2, np.nextafter(p2, 0), np.nextafter(p2, np.inf), [np.finfo(F64).max]]
    x = np.concatenate([big, *edges])
    check(name, x, 3.0)


def test_f64_pow_keeps_libm_semantics():
    x = np.array([-2.0, -2.0, 0.0, -0.0, 2.0, np.nan, 1.0, 10.0])
    y = np.array([3.0, 0.5, -1.0, -3.0, 1000.0, 0.0, np.nan, -0.5])
    with np.errstate(all="ignore"):
        ref = np.power(x, y)
    assert np.array_equal((Tensor(x) ** Tensor(y)).numpy(), ref, equal_nan=True)


@pytest.fixture
def f64_pow_expanded(monkeypatch):
    """The CPU pipeline with f64 pow expanded as the GPU's is (no libm there)."""
    from mlfuse.targets.cpu.target import CpuTarget

    pipeline = tuple(
        "expand-math{f64-pow=true}" if p == "expand-math" else p for p in CpuTarget.kernel_pipeline
    )
    assert pipeline != CpuTarget.kernel_pipeline
    monkeypatch.setattr(CpuTarget, "kernel_pipeline", pipeline)


def test_pow_f64_expanded_within_an_ulp(f64_pow_expanded):
    rng = np.random.default_rng(5)
    n = 60_000
    x = np.concatenate([
        rng.uniform(0, 10, n),
        np.exp(rng.uniform(-700, 700, n)),
        1 + rng.uniform(-1e-3, 1e-3, n),  # with |y| up to 5e5: y·log2 x needs its low part
        rng.uniform(1.5, 3, n),  # results near the overflow threshold
        rng.uniform(0.3, 0.6, n),  # results down to denormals
        -rng.uniform(0, 5, n),
    ])  # fmt: skip
    y = np.concatenate([
        rng.uniform(-20, 20, n),
        rng.uniform(-1, 1, n),
        rng.uniform(-5e5, 5e5, n),
        rng.uniform(600, 1000, n),
        rng.uniform(1000, 1070, n),
        rng.integers(-30, 30, n).astype(F64),
    ])  # fmt: skip
    with np.errstate(all="ignore"):
        ref = np.power(x.astype(np.longdouble), y.astype(np.longdouble))
    assert ulps((Tensor(x) ** Tensor(y)).numpy(), ref, F64) <= 1.0


def test_pow_f64_expanded_specials_match_numpy(f64_pow_expanded):
    tiny = float(np.finfo(F64).smallest_subnormal)
    vals = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 2.5, -2.5, np.inf,
                     -np.inf, np.nan, tiny, -tiny, 1e308, 1e-300, 1075.0, -1075.0])  # fmt: skip
    pow_specials_match_numpy(vals)


def test_ops_built_on_exp():
    x = np.linspace(-20, 20, 100_001, dtype=F32)
    np.testing.assert_allclose(Tensor(x).sigmoid().numpy(), 1 / (1 + np.exp(-x.astype(F64))),
                               rtol=3e-7, atol=0)  # fmt: skip
    np.testing.assert_allclose(Tensor(x).tanh().numpy(), np.tanh(x.astype(F64)), rtol=0, atol=3e-7)


def test_f32_and_f64_intrinsics_in_one_kernel():
    # expanded f32 pow/sin use f64 floor/abs next to the kernel's own f32 ones; the
    # lowering names intrinsics by type (llvm.fabs.f32, llvm.fabs.f64), so both coexist
    x = np.linspace(-3, 3, 13, dtype=F32)
    got = (Tensor(x).abs().sqrt() + Tensor(x).abs() ** 0.5 + Tensor(x).sin()).numpy()
    ref = 2 * np.sqrt(np.abs(x.astype(F64))) + np.sin(x.astype(F64))
    np.testing.assert_allclose(got, ref, rtol=1e-6)
    a, b = np.full(4, 4.0, F32), np.full(4, 9.0, F64)
    got = (Tensor(a).sqrt().cast(Tensor(b).dtype) + Tensor(b).sqrt()).numpy()
    assert np.array_equal(got, np.full(4, 5.0))
