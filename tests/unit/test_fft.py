"""``mlfuse.fft`` against ``numpy.fft`` in float64: every transform for float32
and float64 inputs, real and complex, over lengths that take each route (the
DFT matrix, primes, the four-step split, Bluestein's chirp), ``n``/``s``
padding and cropping, dims and norms; the frequencies and shifts; gradients
against central differences of numpy's transforms; and the errors.

Every distinct shape compiles kernels, so the shapes are few and reused (a
transform and its inverse, and every norm, share their kernels).
"""

from __future__ import annotations

import numpy as np
import pytest
from gradcheck import numeric_grad

import mlfuse
import mlfuse.fft as fft
from mlfuse import Tensor
from mlfuse.errors import ArgumentError, DimError, DTypeError

RNG = np.random.default_rng(11)
NORMS = (None, "backward", "ortho", "forward")
TOL = {np.float32: 1e-6, np.float64: 1e-12}  # relative (Frobenius) error vs float64
CTYPE = {np.float32: np.complex64, np.float64: np.complex128}


def _signal(shape, dt, complex_=True):
    x = RNG.standard_normal(shape)
    if complex_:
        x = x + 1j * RNG.standard_normal(shape)
        return x.astype(CTYPE[dt])
    return x.astype(dt)


def _tensor(x: np.ndarray) -> Tensor:
    return mlfuse.tensor(x)  # a ComplexTensor for complex arrays


def close(got, want, dt=np.float64, tol=None):
    """``got`` (a tensor) equals ``want`` (numpy, float64) in shape and dtype
    family, within the dtype's relative error."""
    g = got.numpy()
    want = np.asarray(want)
    assert g.shape == want.shape, (g.shape, want.shape)
    assert (g.dtype.kind == "c") == (want.dtype.kind == "c"), (g.dtype, want.dtype)
    assert g.dtype.itemsize == np.dtype(dt).itemsize * (2 if g.dtype.kind == "c" else 1)
    scale = max(np.linalg.norm(want.ravel()), 1e-30)
    err = np.linalg.norm((g.astype(want.dtype) - want).ravel()) / scale
    assert err <= (tol or TOL[dt]), f"relative error {err:.2e}"


def _f64(x: np.ndarray) -> np.ndarray:
    return x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)


# -- 1-d transforms over many lengths ------------------------------------------------
LENGTHS = [1, 2, 3, 5, 7, 8, 12, 64, 100, 127, 256, 1000, 1024, 4096]
C2C_CASES = [(n, np.float32) for n in LENGTHS + [1031]] + [(n, np.float64) for n in (5, 127, 4096)]


@pytest.mark.parametrize("n,dt", C2C_CASES, ids=lambda v: getattr(v, "__name__", str(v)))
def test_fft_ifft_lengths(n, dt):
    x = _signal((2, n), dt)
    ref = _f64(x)
    t = _tensor(x)
    close(fft.fft(t), np.fft.fft(ref), dt)
    close(fft.ifft(t), np.fft.ifft(ref), dt)
    norm = NORMS[n % 4]  # every norm somewhere; the kernels are shared
    close(fft.fft(t, norm=norm), np.fft.fft(ref, norm=norm), dt)
    close(fft.ifft(t, norm=norm), np.fft.ifft(ref, norm=norm), dt)


R2C_CASES = [(n, np.float32) for n in (1, 2, 3, 7, 8, 12, 100, 127, 256, 1000, 4096)] + [
    (n, np.float64) for n in (5, 64)
]


@pytest.mark.parametrize("n,dt", R2C_CASES, ids=lambda v: getattr(v, "__name__", str(v)))
def test_rfft_ihfft_lengths(n, dt):
    x = _signal((3, n), dt, complex_=False)
    ref = _f64(x)
    t = Tensor(x)
    close(fft.rfft(t), np.fft.rfft(ref), dt)
    close(fft.ihfft(t), np.fft.ihfft(ref), dt)
    norm = NORMS[n % 4]
    close(fft.rfft(t, norm=norm), np.fft.rfft(ref, norm=norm), dt)


IRFFT_CASES = [(n, np.float32) for n in (1, 2, 3, 8, 12, 100, 127, 1000, 4096)] + [
    (n, np.float64) for n in (5, 64)
]


@pytest.mark.parametrize("n,dt", IRFFT_CASES, ids=lambda v: getattr(v, "__name__", str(v)))
def test_irfft_lengths(n, dt):
    x = _signal((2, n // 2 + 1), dt)
    ref = _f64(x)
    t = _tensor(x)
    close(fft.irfft(t, n=n), np.fft.irfft(ref, n=n), dt)
    norm = NORMS[n % 4]
    close(fft.irfft(t, n=n, norm=norm), np.fft.irfft(ref, n=n, norm=norm), dt)


def test_hfft_matches_numpy():
    x = _signal((2, 9), np.float64)
    t = _tensor(x)
    for n in (None, 5):
        for norm in NORMS:
            close(fft.hfft(t, n=n, norm=norm), np.fft.hfft(x, n=n, norm=norm))


def test_real_input_to_complex_transforms_and_dtypes():
    x = _signal((3, 10), np.float32, complex_=False)
    close(fft.fft(Tensor(x)), np.fft.fft(_f64(x)), np.float32)  # real in: complex64 out
    close(fft.irfft(Tensor(x)), np.fft.irfft(_f64(x)), np.float32)  # real spectrum
    x64 = _f64(x)
    close(fft.fft(Tensor(x64)), np.fft.fft(x64))  # float64: complex128
    ints = (x * 4).astype(np.int64)
    close(fft.rfft(Tensor(ints)), np.fft.rfft(ints.astype(np.float64)), np.float32)
    bools = x > 0
    close(fft.fft(Tensor(bools)), np.fft.fft(bools.astype(np.float64)), np.float32)
    half = Tensor(x).half()
    assert fft.fft(half).dtype == mlfuse.complex64


# -- n, dim, padding, cropping ------------------------------------------------------
def test_n_pads_and_crops_along_dims():
    x = _signal((6, 8), np.float64)
    t = _tensor(x)
    close(fft.fft(t, n=3), np.fft.fft(x, n=3))  # crop
    close(fft.ifft(t, n=13, norm="ortho"), np.fft.ifft(x, n=13, norm="ortho"))  # pad
    close(fft.fft(t, n=8, dim=0), np.fft.fft(x, n=8, axis=0))  # pad along dim 0
    xr = x.real.copy()
    close(fft.rfft(Tensor(xr), n=5, dim=0), np.fft.rfft(xr, n=5, axis=0))
    close(fft.ihfft(Tensor(xr), n=5, dim=-2), np.fft.ihfft(xr, n=5, axis=-2))
    for n in (7, 15):  # crops and pads the one-sided input to n // 2 + 1
        close(fft.irfft(t, n=n), np.fft.irfft(x, n=n))
    close(fft.irfft(t, n=9, dim=0, norm="forward"), np.fft.irfft(x, n=9, axis=0, norm="forward"))


def test_middle_dims_and_strided_inputs():
    x = _signal((3, 5, 8, 2), np.float32)  # 8 * 2 after dim 1: the product from the left
    ref = _f64(x)
    t = _tensor(x)
    close(fft.fft(t, dim=1), np.fft.fft(ref, axis=1), np.float32)
    close(fft.fft(t, dim=2), np.fft.fft(ref, axis=2), np.float32)  # 2 after it: moved last
    y = _signal((300, 3), np.float32)  # the four-step route along dim 0
    close(fft.fft(_tensor(y), dim=0), np.fft.fft(_f64(y), axis=0), np.float32)
    close(fft.fft(_tensor(y).T, n=100), np.fft.fft(_f64(y).T, n=100), np.float32)


def test_round_trips():
    x = mlfuse.randn(4, 96)
    back = fft.ifft(fft.fft(x)).real
    assert np.abs((back - x).numpy()).max() < 1e-5
    assert np.abs((fft.irfft(fft.rfft(x), n=96) - x).numpy()).max() < 1e-5


# -- n-d ----------------------------------------------------------------------------
ND_ARGS = [
    {},
    {"s": (5, 4)},
    {"s": (3, -1), "dim": (0, 2)},
    {"s": (4, 5, 9)},
]
HERMITIAN_ND = ({}, {"s": (3, -1), "dim": (0, 2)})


def _np_s(x, kw, real_out=False):
    """numpy's ``s`` and ``axes`` for PyTorch's ``s`` and ``dim`` (numpy takes no -1
    and wants ``axes`` with ``s``)."""
    if "s" not in kw:
        return {"axes": kw["dim"]} if "dim" in kw else {}
    s = kw["s"]
    axes = list(kw.get("dim", range(x.ndim - len(s), x.ndim)))
    s = [x.shape[a] if v == -1 else v for v, a in zip(s, axes)]
    if real_out and kw["s"][-1] == -1:  # the default output length of the last dim
        s[-1] = 2 * (x.shape[axes[-1]] - 1)
    return {"s": s, "axes": axes}


@pytest.mark.parametrize("kw", ND_ARGS, ids=str)
def test_nd_transforms(kw):
    x = _signal((3, 4, 8), np.float64)
    xr = x.real.copy()
    t, tr = _tensor(x), Tensor(xr)
    for norm in (None, "ortho"):
        close(fft.fftn(t, norm=norm, **kw), np.fft.fftn(x, norm=norm, **_np_s(x, kw)))
        close(fft.ifftn(t, norm=norm, **kw), np.fft.ifftn(x, norm=norm, **_np_s(x, kw)))
        close(fft.rfftn(tr, norm=norm, **kw), np.fft.rfftn(xr, norm=norm, **_np_s(x, kw)))
        close(fft.irfftn(t, norm=norm, **kw), np.fft.irfftn(x, norm=norm, **_np_s(x, kw, True)))
    if kw not in HERMITIAN_ND:
        return
    swap = {"backward": "forward", "forward": "backward"}
    for norm in ("backward", "forward"):
        # numpy has no hfftn/ihfftn: they are irfftn(conj) and conj(rfftn), norms swapped
        np_kw = _np_s(x, kw, True)
        want = np.fft.irfftn(np.conj(x), norm=swap[norm], **np_kw)
        close(fft.hfftn(t, norm=norm, **kw), want)
        want = np.conj(np.fft.rfftn(xr, norm=swap[norm], **_np_s(x, kw)))
        close(fft.ihfftn(tr, norm=norm, **kw), want)


def test_2d_transforms():
    x = _signal((2, 5, 8), np.float32)
    ref = _f64(x)
    xr = x.real.copy()
    t, tr = _tensor(x), Tensor(xr)
    f32 = np.float32
    close(fft.fft2(t), np.fft.fft2(ref), f32)
    close(fft.ifft2(t, norm="forward"), np.fft.ifft2(ref, norm="forward"), f32)
    close(fft.rfft2(tr, dim=(0, 2)), np.fft.rfft2(_f64(xr), axes=(0, 2)), f32)
    want = np.conj(np.fft.rfft2(_f64(xr), axes=(0, 2), norm="forward"))
    close(fft.ihfft2(tr, dim=(0, 2)), want, f32)
    close(fft.irfft2(t, s=(5, 9)), np.fft.irfft2(ref, s=(5, 9)), f32)
    close(fft.hfft2(t), np.fft.irfft2(np.conj(ref), norm="forward"), f32)


def test_nd_edge_cases():
    z = fft.fftn(mlfuse.tensor(2.0))  # no dims: the input as complex
    assert z.dtype == mlfuse.complex64 and z.item() == 2
    out = fft.fft(mlfuse.zeros(0, 8))
    assert out.shape == (0, 8) and out.numpy().shape == (0, 8)
    assert fft.rfft(mlfuse.zeros(2, 0, 8)).numpy().shape == (2, 0, 5)
    x = _signal((2, 6), np.float64)
    target = mlfuse.tensor(np.zeros((2, 6), np.complex128))
    res = fft.fft(_tensor(x), out=target)
    assert res is target
    close(target, np.fft.fft(x))


# -- frequencies and shifts ------------------------------------------------------------
@pytest.mark.parametrize("n", [1, 4, 7, 10])
def test_freqs(n):
    for d in (1.0, 0.25, 3):
        np.testing.assert_array_equal(
            fft.fftfreq(n, d=d, dtype=mlfuse.float64).numpy(), np.fft.fftfreq(n, d)
        )
        np.testing.assert_array_equal(
            fft.rfftfreq(n, d=d, dtype=mlfuse.float64).numpy(), np.fft.rfftfreq(n, d)
        )
    f = fft.fftfreq(n, 0.1)
    assert f.dtype == mlfuse.float32
    np.testing.assert_allclose(f.numpy(), np.fft.fftfreq(n, 0.1), rtol=1e-6)
    np.testing.assert_allclose(fft.rfftfreq(n, 0.1).numpy(), np.fft.rfftfreq(n, 0.1), rtol=1e-6)


def test_shifts():
    x = RNG.standard_normal((4, 5))
    t = Tensor(x)
    for dim in (None, -1, [0]):
        axes = tuple(dim) if isinstance(dim, list) else dim
        np.testing.assert_array_equal(fft.fftshift(t, dim=dim).numpy(), np.fft.fftshift(x, axes))
        np.testing.assert_array_equal(fft.ifftshift(t, dim=dim).numpy(), np.fft.ifftshift(x, axes))
    z = x + 1j * x[::-1]
    np.testing.assert_array_equal(fft.fftshift(_tensor(z)).numpy(), np.fft.fftshift(z))
    f = fft.fftshift(fft.fftfreq(5))
    np.testing.assert_allclose(f.numpy(), np.fft.fftshift(np.fft.fftfreq(5)), rtol=1e-6)


# -- gradients -----------------------------------------------------------------------
def test_rfft_abs_gradient_is_analytic():
    x = RNG.standard_normal(16)
    t = Tensor(x, requires_grad=True)
    fft.rfft(t).abs().sum().backward()
    spec = np.fft.rfft(x)
    # d sum_k |X_k| / dx_j = sum_k Re(conj(X_k) / |X_k| * exp(-2 pi i j k / n))
    j, k = np.arange(16)[:, None], np.arange(9)[None, :]
    want = (np.conj(spec) / np.abs(spec) * np.exp(-2j * np.pi * j * k / 16)).real.sum(1)
    np.testing.assert_allclose(t.grad.numpy(), want, rtol=1e-10, atol=1e-12)


def test_complex_fft_gradient_is_analytic():
    z = _signal((24,), np.float64)
    t = _tensor(z).requires_grad_()
    fft.fft(t, norm="ortho").abs().sum().backward()
    spec = np.fft.fft(z, norm="ortho")
    # PyTorch's convention, dL/dre + i dL/dim: F^H (X / |X|) for the unitary F
    want = np.fft.ifft(spec / np.abs(spec), norm="ortho")
    np.testing.assert_allclose(t.grad.numpy(), want, rtol=1e-9, atol=1e-12)


def test_inverse_gradients_by_central_differences():
    w = RNG.standard_normal(10)
    x = _signal((6,), np.float64)
    re, im = Tensor(x.real.copy(), requires_grad=True), Tensor(x.imag.copy(), requires_grad=True)
    (fft.irfft(mlfuse.complex(re, im), n=10) ** 2 * Tensor(w)).sum().backward()
    want = numeric_grad(lambda a, b: np.fft.irfft(a + 1j * b, n=10) ** 2, [x.real, x.imag], w)
    np.testing.assert_allclose(re.grad.numpy(), want[0], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(im.grad.numpy(), want[1], rtol=1e-6, atol=1e-8)
    y = RNG.standard_normal((3, 4))
    ty = Tensor(y, requires_grad=True)
    wy = RNG.standard_normal((3, 3))
    (fft.ihfft2(ty, norm="ortho").imag * Tensor(wy)).sum().backward()
    want = numeric_grad(lambda a: np.conj(np.fft.rfft2(a, norm="ortho")).imag, [y], wy)
    np.testing.assert_allclose(ty.grad.numpy(), want[0], rtol=1e-6, atol=1e-8)


# -- errors -----------------------------------------------------------------------------
X = mlfuse.zeros(3, 4)
Z = mlfuse.tensor(np.zeros((3, 4), np.complex64))

ERRORS = [
    (lambda: fft.fft(X, norm="bad"), ValueError, r"fft: invalid norm 'bad'"),
    (lambda: fft.ifft2(X, norm="Ortho"), ArgumentError, r"ifft2: invalid norm 'Ortho'"),
    (lambda: fft.fft(X, n=0), ArgumentError, r"fft: invalid number of data points n=0"),
    (lambda: fft.rfft(X, n=-3), ArgumentError, r"rfft: invalid number of data points n=-3"),
    (lambda: fft.fft(X, n=2.5), TypeError, r"fft: n must be an int"),
    (lambda: fft.fft(X, dim=2), DimError, r"fft: dim 2 is out of range for a tensor of 2 dims"),
    (lambda: fft.ifft(X, dim=-3), IndexError, r"ifft: dim -3 is out of range"),
    (lambda: fft.fft(mlfuse.tensor(1.0)), DimError, r"0-d tensor has no dim"),
    (lambda: fft.rfft(Z), DTypeError, r"rfft expects a real input tensor, but got complex64"),
    (lambda: fft.ihfft2(Z), DTypeError, r"ihfft2 expects a real input tensor"),
    (lambda: fft.irfft(mlfuse.zeros(3, 1)), ArgumentError, r"irfft: .*2 \* \(m - 1\).*pass n"),
    (lambda: fft.irfftn(mlfuse.zeros(3, 1)), ArgumentError, r"irfftn: .*pass s"),
    (lambda: fft.fft(mlfuse.zeros(0, 3), dim=0), ArgumentError, r"fft: .*dim 0 .* is empty"),
    (lambda: fft.fftn(X, dim=(0, 0)), ArgumentError, r"fftn: dims must be unique"),
    (lambda: fft.fftn(X, s=(2,), dim=(0, 1)), ArgumentError, r"s and dim must have the same"),
    (lambda: fft.fftn(X, s=(2, 2, 2)), ArgumentError, r"s has 3 sizes but the input has only 2"),
    (lambda: fft.fft2(X, s=(0, 2)), ArgumentError, r"fft2: invalid number of data points s\[0\]"),
    (lambda: fft.rfftn(X, dim=()), ArgumentError, r"rfftn must transform at least one dim"),
    (lambda: fft.fft2(mlfuse.zeros(3)), DimError, r"fft2: dim -2 is out of range"),
    (lambda: fft.fft(np.ones(4)), TypeError, r"fft: input must be a tensor, got ndarray"),
    (lambda: fft.fftshift(X, dim=5), DimError, r"fftshift: dim 5 is out of range"),
    (lambda: fft.fftfreq(-1), ArgumentError, r"fftfreq: n must be non-negative"),
    (lambda: fft.rfftfreq(4, d=0), ArgumentError, r"rfftfreq: the sample spacing d"),
    (lambda: fft.fftfreq(4, dtype=mlfuse.int32), DTypeError, r"fftfreq needs a float"),
]


@pytest.mark.parametrize("call,exc,match", ERRORS, ids=[m for _, _, m in ERRORS])
def test_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_public_functions_have_docstrings():
    assert fft.__doc__ and "Cooley-Tukey" in fft.__doc__
    for name in fft.__all__:
        f = getattr(fft, name)
        assert f.__doc__ and "``" in f.__doc__, name
