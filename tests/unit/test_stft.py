"""mlfuse.stft / mlfuse.istft against numpy framing and numpy.fft (float64)."""

import numpy as np
import pytest

import mlfuse
from mlfuse.errors import ArgumentError, DTypeError

RNG = np.random.default_rng(3)
X = RNG.standard_normal((2, 300))


def np_hann(n):
    return 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n) / n)  # periodic, as PyTorch's default


def np_stft(x, n_fft, hop, win, center=True, onesided=True, mode="reflect", normalized=False):
    if center:
        x = np.pad(x, [(0, 0)] * (x.ndim - 1) + [(n_fft // 2, n_fft // 2)], mode=mode)
    left = (n_fft - len(win)) // 2
    w = np.zeros(n_fft)
    w[left : left + len(win)] = win
    n = 1 + (x.shape[-1] - n_fft) // hop
    frames = np.stack([x[..., i * hop : i * hop + n_fft] for i in range(n)], -2) * w
    spec = np.fft.rfft(frames, axis=-1) if onesided else np.fft.fft(frames, axis=-1)
    if normalized:
        spec = spec / np.sqrt(n_fft)
    return np.swapaxes(spec, -1, -2)


@pytest.mark.parametrize(
    "n_fft, hop, win_length, center, onesided, mode, normalized",
    [
        (64, 16, 64, True, None, "reflect", False),
        (64, 10, 50, True, None, "constant", False),
        (100, 25, 100, False, None, "reflect", True),
        (32, 8, 32, True, False, "reflect", False),
    ],
)
def test_stft_matches_numpy(n_fft, hop, win_length, center, onesided, mode, normalized):
    w = np_hann(win_length)
    got = mlfuse.stft(
        mlfuse.tensor(X), n_fft, hop, win_length, mlfuse.tensor(w), center, mode, normalized,
        onesided, return_complex=True,
    ).numpy()  # fmt: skip
    want = np_stft(X, n_fft, hop, w, center, onesided is not False, mode, normalized)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, atol=1e-12 * np.abs(want).max())


def test_stft_of_one_signal_real_view_and_method():
    x = mlfuse.tensor(X[0], dtype=mlfuse.float32)
    got = x.stft(64, return_complex=False)
    want = np_stft(X[0], 64, 16, np.ones(64))
    assert got.shape == want.shape + (2,) and got.dtype == mlfuse.float32
    np.testing.assert_allclose(got.numpy()[..., 0], want.real, atol=2e-5)
    np.testing.assert_allclose(got.numpy()[..., 1], want.imag, atol=2e-5)


def test_istft_inverts_stft_and_carries_gradients():
    w = mlfuse.hann_window(64, dtype=mlfuse.float64)
    x = mlfuse.tensor(X, requires_grad=True)
    spec = mlfuse.stft(x, 64, 16, window=w, return_complex=True)
    y = mlfuse.istft(spec, 64, 16, window=w, length=300)
    np.testing.assert_allclose(y.detach().numpy(), X, atol=1e-12)
    (y * mlfuse.tensor(X)).sum().backward()  # istft(stft(x)) = x: the gradient is the weights
    np.testing.assert_allclose(x.grad.numpy(), X, atol=1e-11)
    two_sided = mlfuse.stft(x.detach(), 64, 16, window=w, onesided=False, return_complex=True)
    z = mlfuse.istft(two_sided, 64, 16, window=w, onesided=False, length=300)
    np.testing.assert_allclose(z.numpy(), X, atol=1e-12)


def test_stft_errors():
    x = mlfuse.tensor(X)
    with pytest.raises(ArgumentError, match="requires the return_complex parameter"):
        mlfuse.stft(x, 64)
    with pytest.raises(ArgumentError, match="win_length"):
        mlfuse.stft(x, 64, win_length=65, return_complex=True)
    with pytest.raises(ArgumentError, match="size equal to win_length=64"):
        mlfuse.stft(x, 64, window=mlfuse.ones(32), return_complex=True)
    with pytest.raises(ArgumentError, match="expected 0 < n_fft"):
        mlfuse.stft(x[:, :10], 64, center=False, return_complex=True)
    with pytest.raises(DTypeError, match="complex-valued input"):
        mlfuse.istft(x, 64)
    spec = mlfuse.stft(x, 64, 32, window=mlfuse.hann_window(64, dtype=mlfuse.float64),
                       center=False, return_complex=True)  # fmt: skip
    with pytest.raises(ArgumentError, match="NOLA"):
        mlfuse.istft(spec, 64, 32, window=mlfuse.hann_window(64, dtype=mlfuse.float64),
                     center=False)  # fmt: skip
    with pytest.raises(ArgumentError, match="n_fft / 2 \\+ 1"):
        mlfuse.istft(spec[:, :20], 64, 32)
