"""``mlfuse.signal.windows`` (PyTorch's ``torch.signal.windows``) against the
windows' formulas written out in float64 numpy: symmetric and periodic
(``sym=False``) windows, lengths 0, 1, 2 and odd/even, dtypes, arguments, and
PyTorch's errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import mlfuse
from mlfuse.signal import windows as W

LENGTHS = (0, 1, 2, 7, 16)


def general_cosine_ref(m, a, sym):
    if m <= 1:
        return np.ones(m)
    n = np.arange(m)
    big_n = m - 1 if sym else m
    return sum((-1) ** i * c * np.cos(2 * math.pi * i * n / big_n) for i, c in enumerate(a))


NUTTALL = [0.3635819, 0.4891775, 0.1365995, 0.0106411]
REFS = {
    "hann": lambda m, sym: general_cosine_ref(m, [0.5, 0.5], sym),
    "hamming": lambda m, sym: general_cosine_ref(m, [0.54, 0.46], sym),
    "blackman": lambda m, sym: general_cosine_ref(m, [0.42, 0.5, 0.08], sym),
    "nuttall": lambda m, sym: general_cosine_ref(m, NUTTALL, sym),
    "bartlett": lambda m, sym: (
        np.ones(m) if m <= 1 else 1 - np.abs(2 * np.arange(m) / (m - 1 if sym else m) - 1)
    ),
    "cosine": lambda m, sym: np.sin(
        math.pi * (np.arange(m) + 0.5) / (m if sym or m <= 1 else m + 1)
    ),
}


@pytest.mark.parametrize("name", sorted(REFS))
@pytest.mark.parametrize("sym", [True, False])
def test_windows_against_formulas(name, sym):
    for m in LENGTHS:
        w = getattr(W, name)(m, sym=sym, dtype=mlfuse.float64)
        assert w.shape == (m,) and w.dtype == mlfuse.float64
        np.testing.assert_allclose(w.numpy(), REFS[name](m, sym), atol=1e-12, err_msg=f"{m}")


def test_parametrized_windows():
    n = np.arange(9.0)
    np.testing.assert_allclose(
        W.general_hamming(9, alpha=0.6, dtype=mlfuse.float64).numpy(),
        0.6 - 0.4 * np.cos(2 * math.pi * n / 8),
        atol=1e-12,
    )
    np.testing.assert_allclose(
        W.general_cosine(9, a=(0.4, 0.3, 0.3), sym=False, dtype=mlfuse.float64).numpy(),
        0.4 - 0.3 * np.cos(2 * math.pi * n / 9) + 0.3 * np.cos(4 * math.pi * n / 9),
        atol=1e-12,
    )
    np.testing.assert_allclose(
        W.gaussian(9, std=2.0, dtype=mlfuse.float64).numpy(),
        np.exp(-0.5 * ((n - 4) / 2.0) ** 2),
        atol=1e-12,
    )
    np.testing.assert_allclose(  # periodic: centered at M / 2
        W.gaussian(8, std=1.5, sym=False, dtype=mlfuse.float64).numpy(),
        np.exp(-0.5 * ((np.arange(8.0) - 4) / 1.5) ** 2),
        atol=1e-12,
    )
    np.testing.assert_allclose(
        W.exponential(9, tau=3.0, dtype=mlfuse.float64).numpy(),
        np.exp(-np.abs(n - 4) / 3.0),
        atol=1e-12,
    )
    np.testing.assert_allclose(
        W.exponential(9, center=2.0, tau=1.5, sym=False, dtype=mlfuse.float64).numpy(),
        np.exp(-np.abs(n - 2.0) / 1.5),
        atol=1e-12,
    )
    for sym, big_n in ((True, 8), (False, 9)):
        np.testing.assert_allclose(
            W.kaiser(9, beta=5.0, sym=sym, dtype=mlfuse.float64).numpy(),
            np.i0(5.0 * np.sqrt(np.clip(1 - (2 * n / big_n - 1) ** 2, 0, None))) / np.i0(5.0),
            atol=1e-12,
        )
    assert W.kaiser(1).numpy().tolist() == [1.0] and W.kaiser(0).shape == (0,)


def test_window_options():
    w = W.hann(8)
    assert w.dtype == mlfuse.float32 and not w.requires_grad
    np.testing.assert_allclose(w.numpy(), REFS["hann"](8, True), atol=1e-7)
    assert W.blackman(5, requires_grad=True).requires_grad
    assert W.nuttall(4, dtype=mlfuse.float64, layout=mlfuse.strided, device="cpu").device == "cpu"
    old = mlfuse.get_default_dtype()
    mlfuse.set_default_dtype(mlfuse.float64)
    try:
        assert W.cosine(3).dtype == mlfuse.float64
    finally:
        mlfuse.set_default_dtype(old)


def test_window_errors():
    with pytest.raises(ValueError, match="hann requires non-negative window length, got M=-1"):
        W.hann(-1)
    with pytest.raises(ValueError, match="kaiser expects float32 or float64 dtypes, got: float16"):
        W.kaiser(4, dtype=mlfuse.float16)
    with pytest.raises(ValueError, match="expects float32 or float64 dtypes, got: int32"):
        W.bartlett(4, dtype=mlfuse.int32)
    with pytest.raises(ValueError, match="Tau must be positive, got: 0 instead"):
        W.exponential(4, tau=0)
    with pytest.raises(ValueError, match="Center must be None for symmetric windows"):
        W.exponential(4, center=1.0)
    with pytest.raises(ValueError, match="Standard deviation must be positive"):
        W.gaussian(4, std=-1.0)
    with pytest.raises(ValueError, match="beta must be non-negative"):
        W.kaiser(4, beta=-1.0)
    with pytest.raises(TypeError, match="Coefficients must be a list/tuple"):
        W.general_cosine(4, a=3)
    with pytest.raises(ValueError, match="Coefficients cannot be empty"):
        W.general_cosine(4, a=[])
    with pytest.raises(TypeError, match="window length M must be an int"):
        W.hamming(4.0)
    with pytest.raises(TypeError, match="layout must be mlfuse.strided"):
        W.hann(4, layout="sparse")
