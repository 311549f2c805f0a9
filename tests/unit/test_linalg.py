"""``mlfuse.linalg`` against numpy's LAPACK results, its gradients against float64
central differences, and its errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from gradcheck import numeric_grad

import mlfuse
import mlfuse.linalg as LA
from mlfuse import Tensor

RNG = np.random.default_rng(3)
A = RNG.standard_normal((2, 4, 4))
SPD = A @ A.transpose(0, 2, 1) + 4 * np.eye(4)
B = RNG.standard_normal((2, 4, 3))


def close(t, ref, tol=1e-9):
    got = t.numpy() if isinstance(t, Tensor) else np.asarray(t)
    assert got.shape == np.shape(ref), (got.shape, np.shape(ref))
    np.testing.assert_allclose(got, ref, rtol=tol, atol=tol)


def check_grad(fn, ref_fn, *arrays, tol=1e-6, sym=False):
    ts = [Tensor(a, requires_grad=True) for a in arrays]
    out = fn(*ts)
    w = RNG.standard_normal(out.shape)
    (out * Tensor(w)).sum().backward()
    want = numeric_grad(ref_fn, [a.copy() for a in arrays], w)
    for t, g in zip(ts, want):
        got = t.grad.numpy()
        if sym:  # the gradient for a symmetric input: compare symmetric parts
            g = (g + np.swapaxes(g, -1, -2)) / 2
        np.testing.assert_allclose(got, g, rtol=tol, atol=tol)


def test_values_against_numpy():
    close(LA.det(Tensor(A)), np.linalg.det(A))
    close(LA.inv(Tensor(A)), np.linalg.inv(A))
    sign, logabs = LA.slogdet(Tensor(A))
    close(sign, np.linalg.slogdet(A)[0])
    close(logabs, np.linalg.slogdet(A)[1])
    close(LA.logdet(Tensor(SPD)), np.linalg.slogdet(SPD)[1])
    assert math.isnan(LA.logdet(Tensor(-np.eye(3))).item())
    close(LA.solve(Tensor(A), Tensor(B)), np.linalg.solve(A, B))
    close(LA.solve(Tensor(A), Tensor(B[:, :, 0])), np.linalg.solve(A, B[..., :1])[..., 0])
    close(LA.cholesky(Tensor(SPD)), np.linalg.cholesky(SPD))
    close(LA.cholesky(Tensor(SPD), upper=True), np.swapaxes(np.linalg.cholesky(SPD), -1, -2))
    w, v = LA.eigh(Tensor(SPD))
    close(w, np.linalg.eigvalsh(SPD))
    close(v @ (w.unsqueeze(-1) * v.mT), SPD)
    close(LA.svdvals(Tensor(B)), np.linalg.svd(B, compute_uv=False))
    u, s, vh = LA.svd(Tensor(B), full_matrices=False)
    close((u * s.unsqueeze(-2)) @ vh, B)
    q, r = LA.qr(Tensor(B))
    close(q @ r, B)
    close(LA.pinv(Tensor(B)), np.linalg.pinv(B))
    assert LA.matrix_rank(Tensor(np.ones((3, 3)))).item() == 1
    close(LA.cond(Tensor(A)), np.linalg.cond(A))
    close(LA.lstsq(Tensor(B[0]), Tensor(A[0, :, 0])).solution,
          np.linalg.lstsq(B[0], A[0, :, 0], rcond=None)[0])  # fmt: skip
    close(Tensor(A).matrix_power(-2), np.linalg.matrix_power(A, -2))
    close(mlfuse.inverse(Tensor(A)), np.linalg.inv(A))
    assert LA.det(Tensor(A[0])).shape == ()


def test_float32_rounds_once():
    a32 = A.astype(np.float32)
    got = LA.inv(Tensor(a32))
    assert got.dtype == mlfuse.float32
    np.testing.assert_array_equal(
        got.numpy(), np.linalg.inv(a32.astype(np.float64)).astype(np.float32)
    )


@pytest.mark.parametrize("ord", ["fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf])
def test_matrix_norms(ord):
    close(LA.matrix_norm(Tensor(A), ord), np.linalg.norm(A, ord, axis=(-2, -1)))
    got = LA.matrix_norm(Tensor(A), ord, dim=(0, 2), keepdim=True)
    close(got, np.linalg.norm(A, ord, axis=(0, 2), keepdims=True))


@pytest.mark.parametrize("ord", [2, 1, 0, 3.5, math.inf, -math.inf])
def test_vector_norms(ord):
    close(LA.vector_norm(Tensor(A), ord, dim=1), np.linalg.norm(A, ord, axis=1))
    close(LA.norm(Tensor(A[0, 0]), ord), np.linalg.norm(A[0, 0], ord))


def test_gradients_against_differences():
    check_grad(LA.det, np.linalg.det, A.copy())
    check_grad(LA.inv, np.linalg.inv, A.copy())
    check_grad(lambda a: LA.slogdet(a).logabsdet, lambda a: np.linalg.slogdet(a)[1], A.copy())
    check_grad(LA.solve, np.linalg.solve, A.copy(), B.copy())
    check_grad(LA.svdvals, lambda b: np.linalg.svd(b, compute_uv=False), B.copy())
    check_grad(LA.eigvalsh, np.linalg.eigvalsh, SPD.copy(), sym=True)
    check_grad(LA.cholesky, lambda a: np.linalg.cholesky((a + np.swapaxes(a, -1, -2)) / 2),
               SPD.copy(), sym=True)  # fmt: skip
    # eigenvectors up to sign: their absolute values
    check_grad(lambda a: LA.eigh(a).eigenvectors.abs(), lambda a: np.abs(np.linalg.eigh(a)[1]),
               SPD.copy(), sym=True, tol=1e-5)  # fmt: skip
    # det of a singular matrix still has its cofactor gradient
    g = mlfuse.grad(lambda a: LA.det(a))(Tensor(np.ones((3, 3))))[0]
    close(g, np.zeros((3, 3)))
    g = mlfuse.grad(lambda a: LA.det(a))(Tensor(np.diag([2.0, 3.0, 0.0])))[0]
    close(g, np.diag([0.0, 0.0, 6.0]))


def test_errors():
    with pytest.raises(mlfuse.ArgumentError, match="linalg.inv: Singular matrix"):
        LA.inv(Tensor(np.zeros((2, 2))))
    with pytest.raises(mlfuse.ArgumentError, match="not positive definite"):
        LA.cholesky(Tensor(-np.eye(2)))
    with pytest.raises(mlfuse.ArgumentError, match=r"batch of square matrices, got shape \(2, 3\)"):
        LA.det(Tensor(np.zeros((2, 3))))
    with pytest.raises(TypeError, match="expected a float tensor, got int64"):
        LA.inv(Tensor([[1, 2], [3, 4]]))
    with pytest.raises(mlfuse.ArgumentError, match="B has 3 rows"):
        LA.solve(Tensor(A), Tensor(np.zeros((2, 3, 1))))
    x = Tensor(A[0], requires_grad=True)
    q, r = LA.qr(x, mode="r")
    with pytest.raises(mlfuse.UnsupportedModeError, match="mode='r' computes no Q"):
        r.sum().backward()
    y = Tensor(np.ones((4, 2)), requires_grad=True)
    with pytest.raises(mlfuse.UnsupportedModeError, match="mode='complete' and more rows"):
        LA.qr(y, mode="complete").Q.sum().backward()
    res = LA.inv_ex(Tensor(np.zeros((2, 2))))
    assert res.info.item() == 1 and np.isnan(res.result.numpy()).all()
