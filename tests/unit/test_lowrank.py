"""``mlfuse.lowrank``: PyTorch's randomized ``svd_lowrank`` and ``pca_lowrank``
against numpy's float64 SVD: exact on matrices of rank <= q, the leading
singular values of noisy low-rank ones, wide and batched inputs, ``M``,
centering, seeding, and the errors."""

from __future__ import annotations

import numpy as np
import pytest

import mlfuse
from mlfuse import Tensor
from mlfuse.lowrank import get_approximate_basis, pca_lowrank, svd_lowrank

RNG = np.random.default_rng(5)


def low_rank(m, n, r, batch=()):
    return RNG.standard_normal(batch + (m, r)) @ RNG.standard_normal(batch + (r, n))


def rebuild(u, s, v):
    return u.numpy() @ (s.numpy()[..., None] * np.swapaxes(v.numpy(), -1, -2))


@pytest.mark.parametrize("shape", [(30, 12), (12, 30)])
def test_svd_lowrank_is_exact_for_low_rank(shape):
    a = low_rank(*shape, 4)
    u, s, v = svd_lowrank(Tensor(a), q=6)
    m, n = shape
    assert u.shape == (m, 6) and s.shape == (6,) and v.shape == (n, 6)
    np.testing.assert_allclose(rebuild(u, s, v), a, atol=1e-10)
    np.testing.assert_allclose(s.numpy()[:4], np.linalg.svd(a, compute_uv=False)[:4], rtol=1e-10)
    np.testing.assert_allclose(s.numpy()[4:], 0.0, atol=1e-10)
    np.testing.assert_allclose(u.numpy().T @ u.numpy(), np.eye(6), atol=1e-10)
    np.testing.assert_allclose(v.numpy().T @ v.numpy(), np.eye(6), atol=1e-10)


def test_svd_lowrank_batched_float32_and_noisy():
    a = low_rank(20, 10, 3, (2,)) * np.array([1.0, 10.0])[:, None, None]
    u, s, v = svd_lowrank(Tensor(a, mlfuse.float32), q=5, niter=3)
    assert u.dtype == s.dtype == v.dtype == mlfuse.float32
    assert u.shape == (2, 20, 5) and s.shape == (2, 5) and v.shape == (2, 10, 5)
    np.testing.assert_allclose(rebuild(u, s, v), a, rtol=1e-4, atol=1e-3)
    noisy = low_rank(40, 25, 3) * 10 + 1e-3 * RNG.standard_normal((40, 25))
    s = svd_lowrank(Tensor(noisy), q=5, niter=2)[1].numpy()
    np.testing.assert_allclose(s[:3], np.linalg.svd(noisy, compute_uv=False)[:3], rtol=1e-6)


def test_svd_lowrank_with_m_and_seed():
    a = low_rank(15, 9, 3)
    m = RNG.standard_normal((1, 9))  # broadcast to a's shape: each row less m
    u, s, v = svd_lowrank(Tensor(a), q=5, M=Tensor(m))
    want = np.linalg.svd(a - m, compute_uv=False)
    np.testing.assert_allclose(s.numpy()[:4], want[:4], rtol=1e-8)
    mlfuse.manual_seed(3)
    q1 = get_approximate_basis(Tensor(a), 4).numpy()
    mlfuse.manual_seed(3)
    q2 = get_approximate_basis(Tensor(a), 4).numpy()
    np.testing.assert_array_equal(q1, q2)
    assert q1.shape == (15, 4)


def test_pca_lowrank_centers():
    x = RNG.standard_normal((60, 4)) @ np.diag([5.0, 3.0, 1.0, 0.1]) + 7.0
    u, s, v = pca_lowrank(Tensor(x), q=4)
    xc = x - x.mean(0)
    np.testing.assert_allclose(s.numpy(), np.linalg.svd(xc, compute_uv=False), rtol=1e-8)
    np.testing.assert_allclose(rebuild(u, s, v), xc, atol=1e-9)
    assert pca_lowrank(Tensor(x))[1].shape == (4,)  # q = min(6, m, n)
    s_raw = pca_lowrank(Tensor(x), q=4, center=False)[1].numpy()
    np.testing.assert_allclose(s_raw, np.linalg.svd(x, compute_uv=False), rtol=1e-8)


def test_lowrank_errors():
    a = Tensor(np.ones((5, 3)))
    with pytest.raises(ValueError, match=r"q\(=4\) must be non-negative integer and not greater"):
        pca_lowrank(a, q=4)
    with pytest.raises(ValueError, match=r"niter\(=-1\) must be non-negative integer"):
        pca_lowrank(a, niter=-1)
    with pytest.raises(ValueError, match=r"q\(=-2\) must be non-negative integer"):
        svd_lowrank(a, q=-2)
    with pytest.raises(TypeError, match="expected a float tensor A, got int64"):
        svd_lowrank(Tensor(np.ones((3, 3), np.int64)))
    with pytest.raises(mlfuse.ArgumentError, match="at least 2 dimensions"):
        svd_lowrank(Tensor(np.ones(3)))
    with pytest.raises(mlfuse.ArgumentError, match="does not broadcast"):
        svd_lowrank(a, M=Tensor(np.ones((2, 3))))
