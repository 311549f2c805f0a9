"""``mlfuse.linalg``'s general eigendecomposition (``eig``, ``eigvals``), the
Householder family (``geqrf``, ``householder_product``/``orgqr``, ``ormqr``), the
Bunch-Kaufman LDL factorization (``ldl_factor[_ex]``, ``ldl_solve``) and
``LinAlgError``: values against float64 numpy references, gradients against
central differences, and the errors."""

from __future__ import annotations

import numpy as np
import pytest
from gradcheck import numeric_grad

import mlfuse
import mlfuse.linalg as LA
from mlfuse import Tensor

RNG = np.random.default_rng(11)


def close(t, ref, tol=1e-10):
    got = t.numpy() if isinstance(t, Tensor) else np.asarray(t)
    assert got.shape == np.shape(ref), (got.shape, np.shape(ref))
    np.testing.assert_allclose(got, ref, rtol=tol, atol=tol)


def same_set(got: np.ndarray, want: np.ndarray, tol: float) -> None:
    """Equal multisets of complex numbers (each batch row matched greedily)."""
    got, want = got.reshape(-1, got.shape[-1]), want.reshape(-1, want.shape[-1])
    for g, w in zip(got, want):
        left = list(w)
        for z in g:
            k = int(np.argmin([abs(z - x) for x in left]))
            assert abs(z - left[k]) < tol, (g, w)
            left.pop(k)


# -- eig, eigvals ----------------------------------------------------------------------
@pytest.mark.parametrize("dt", [mlfuse.float32, mlfuse.float64])
def test_eig_values_and_vectors(dt):
    a = RNG.standard_normal((3, 5, 5))
    w, v = LA.eig(Tensor(a, dt))
    want = mlfuse.complex64 if dt == mlfuse.float32 else mlfuse.complex128
    assert isinstance(w, mlfuse.ComplexTensor) and isinstance(v, mlfuse.ComplexTensor)
    assert w.dtype == want and v.dtype == want and w.shape == (3, 5) and v.shape == (3, 5, 5)
    wn, vn = w.numpy().astype(np.complex128), v.numpy().astype(np.complex128)
    tol = 1e-4 if dt == mlfuse.float32 else 1e-10
    np.testing.assert_allclose(a @ vn, vn * wn[..., None, :], atol=tol)  # A V = V diag(w)
    np.testing.assert_allclose(np.linalg.norm(vn, axis=-2), 1.0, atol=tol)
    same_set(wn, np.linalg.eigvals(a), tol)
    same_set(LA.eigvals(Tensor(a, dt)).numpy(), np.linalg.eigvals(a), tol)
    assert LA.eig(Tensor(a, dt)).eigenvalues.shape == (3, 5)


def test_eig_complex_input_and_edge_shapes():
    z = RNG.standard_normal((2, 4, 4)) + 1j * RNG.standard_normal((2, 4, 4))
    w, v = LA.eig(mlfuse.tensor(z))
    assert w.dtype == mlfuse.complex128
    np.testing.assert_allclose(z @ v.numpy(), v.numpy() * w.numpy()[..., None, :], atol=1e-10)
    same_set(LA.eigvals(mlfuse.tensor(z)).numpy(), np.linalg.eigvals(z), 1e-10)
    rot = Tensor(np.array([[0.0, -1.0], [1.0, 0.0]]))  # eigenvalues +-i
    same_set(LA.eigvals(rot).numpy(), np.array([1j, -1j]), 1e-12)
    assert LA.eigvals(Tensor(np.zeros((2, 0, 0)))).shape == (2, 0)
    assert LA.eig(Tensor(np.zeros((0, 0), np.float32)))[1].dtype == mlfuse.complex64


def test_eig_gradients_against_central_differences():
    a = RNG.standard_normal((4, 4))
    c = RNG.standard_normal(4)

    def ref(x):  # order-free, phase-free: sum_i Re(w_i)^3 + Im(w_i)^2 + Re(w_i) |V[0, i]|^2
        w, v = np.linalg.eig(x)
        return np.sum(w.real**3 + w.imag**2 + w.real * np.abs(v[0]) ** 2)

    t = Tensor(a, requires_grad=True)
    w, v = LA.eig(t)
    (w.real**3 + w.imag**2 + w.real * v.abs()[0] ** 2).sum().backward()
    want = numeric_grad(ref, [a.copy()], np.ones(()))[0]
    np.testing.assert_allclose(t.grad.numpy(), want, rtol=1e-5, atol=1e-6)

    t = Tensor(a, requires_grad=True)
    (LA.eigvals(t).abs() * 1.0).sum().backward()  # sum |w_i|

    def ref_abs(x):
        return np.abs(np.linalg.eigvals(x)).sum()

    want = numeric_grad(ref_abs, [a.copy()], np.ones(()))[0]
    np.testing.assert_allclose(t.grad.numpy(), want, rtol=1e-5, atol=1e-6)
    del c


def test_eig_complex_input_gradient():
    z = RNG.standard_normal((3, 3)) + 1j * RNG.standard_normal((3, 3))
    zt = mlfuse.tensor(z).requires_grad_()
    (LA.eigvals(zt).real ** 2).sum().backward()

    def part(k):  # d/d(re) and d/d(im) of sum Re(w)^2
        def f(x):
            zz = z + (x if k == 0 else 1j * x)
            return np.sum(np.linalg.eigvals(zz).real ** 2)

        return numeric_grad(f, [np.zeros((3, 3))], np.ones(()))[0]

    g = zt.grad.numpy()  # PyTorch's convention: dL/dre + i dL/dim
    np.testing.assert_allclose(g.real, part(0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g.imag, part(1), rtol=1e-5, atol=1e-6)


def test_eig_errors():
    with pytest.raises(mlfuse.ArgumentError, match="at least 2 dimensions"):
        LA.eig(Tensor(np.ones(3)))
    with pytest.raises(mlfuse.ArgumentError, match="square matrices, but they are 2 by 3"):
        LA.eigvals(Tensor(np.ones((2, 3))))
    with pytest.raises(mlfuse.ArgumentError, match="should not contain infs or NaNs"):
        LA.eig(Tensor(np.array([[1.0, np.nan], [0.0, 1.0]])))
    with pytest.raises(TypeError, match="expected a float or complex tensor, got int64"):
        LA.eig(Tensor(np.ones((2, 2), np.int64)))
    with pytest.raises(TypeError, match="not implemented for float16"):
        LA.eig(Tensor(np.ones((2, 2)), mlfuse.float16))
    t = Tensor(RNG.standard_normal((3, 3)), requires_grad=True)
    with pytest.raises(
        mlfuse.ArgumentError, match=r"specified up to multiplication by e\^\{i phi\}"
    ):
        LA.eig(t)[1].real.sum().backward()  # depends on the eigenvectors' phases


# -- LinAlgError --------------------------------------------------------------------------
def test_linalg_error_is_a_runtime_error_and_raised_for_singular_inputs():
    assert issubclass(LA.LinAlgError, RuntimeError)
    assert issubclass(LA.LinAlgError, mlfuse.ArgumentError)
    with pytest.raises(LA.LinAlgError, match="linalg.inv: Singular matrix"):
        LA.inv(Tensor(np.zeros((2, 2))))
    with pytest.raises(LA.LinAlgError, match="solve"):
        LA.solve(Tensor(np.zeros((2, 2))), Tensor(np.ones(2)))
    with pytest.raises(LA.LinAlgError, match="not positive definite"):
        LA.cholesky(Tensor(-np.eye(2)))
    with pytest.raises(LA.LinAlgError, match=r"U\[1,1\] is zero"):
        LA.lu_factor(Tensor(np.zeros((2, 2))))


# -- Householder products --------------------------------------------------------------
def test_geqrf_and_householder_product_give_qr():
    a = RNG.standard_normal((2, 6, 4))
    h, tau = LA.geqrf(Tensor(a))
    assert h.shape == (2, 6, 4) and tau.shape == (2, 4)
    r = np.triu(h.numpy())[..., :4, :]
    q = LA.householder_product(h, tau)
    assert q.shape == (2, 6, 4)
    close(q.numpy() @ r, a, 1e-10)
    close(np.swapaxes(q.numpy(), -1, -2) @ q.numpy(), np.broadcast_to(np.eye(4), (2, 4, 4)))
    close(LA.orgqr(h, tau), q.numpy(), 0)
    qn, rn = np.linalg.qr(a)  # LAPACK's signs: numpy's qr is geqrf + orgqr too
    close(q, qn, 1e-10)
    close(r, rn, 1e-10)
    wide = RNG.standard_normal((3, 5))
    hw, tw = LA.geqrf(Tensor(wide))
    assert hw.shape == (3, 5) and tw.shape == (3,)
    close(np.triu(hw.numpy()), np.linalg.qr(wide)[1], 1e-10)
    assert LA.geqrf(Tensor(wide, mlfuse.float32)).tau.dtype == mlfuse.float32


def _orgqr_ref(a, tau):
    m, n = a.shape
    q = np.eye(m)
    for i in range(tau.shape[0]):
        v = np.zeros(m)
        v[i] = 1.0
        v[i + 1 :] = a[i + 1 :, i]
        q = q @ (np.eye(m) - tau[i] * np.outer(v, v))
    return q[:, :n]


def test_householder_product_values_and_gradient():
    a = RNG.standard_normal((5, 3))
    tau = RNG.uniform(0.5, 1.5, 2)  # k = 2 < n = 3
    close(LA.householder_product(Tensor(a), Tensor(tau)), _orgqr_ref(a, tau))
    ta, tt = Tensor(a, requires_grad=True), Tensor(tau, requires_grad=True)
    out = LA.householder_product(ta, tt)
    w = RNG.standard_normal(out.shape)
    (out * Tensor(w)).sum().backward()
    ga, gt = numeric_grad(_orgqr_ref, [a.copy(), tau.copy()], w)
    np.testing.assert_allclose(ta.grad.numpy(), ga, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(tt.grad.numpy(), gt, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [True, False])
def test_ormqr_values_and_gradient(left, transpose):
    a = RNG.standard_normal((4, 3))
    tau = RNG.uniform(0.5, 1.5, 3)
    c = RNG.standard_normal((4, 2) if left else (2, 4))

    def ref(a, tau, c):
        q = _orgqr_ref(np.concatenate([a, np.zeros((4, 1))], 1), tau)  # the full 4 x 4 Q
        q = q.T if transpose else q
        return q @ c if left else c @ q

    ts = [Tensor(x, requires_grad=True) for x in (a, tau, c)]
    out = LA.ormqr(*ts, left=left, transpose=transpose)
    close(out, ref(a, tau, c))
    w = RNG.standard_normal(out.shape)
    (out * Tensor(w)).sum().backward()
    for t, g in zip(ts, numeric_grad(ref, [a.copy(), tau.copy(), c.copy()], w)):
        np.testing.assert_allclose(t.grad.numpy(), g, rtol=1e-6, atol=1e-7)


def test_householder_errors():
    a, tau = Tensor(np.ones((5, 3))), Tensor(np.ones(3))
    with pytest.raises(mlfuse.ArgumentError, match=r"input.shape\[-1\] must be greater than"):
        LA.householder_product(a, Tensor(np.ones(4)))
    with pytest.raises(mlfuse.ArgumentError, match=r"input.shape\[-2\] must be greater than"):
        LA.householder_product(a.mT, tau)
    with pytest.raises(mlfuse.ArgumentError, match="at least 2 dimensions"):
        LA.householder_product(Tensor(np.ones(3)), tau)
    with pytest.raises(mlfuse.ArgumentError, match="one dimension less than input"):
        LA.householder_product(a, Tensor(np.ones((2, 3))))
    with pytest.raises(mlfuse.ArgumentError, match=r"batch dimensions of tau .* got \[3\]"):
        LA.householder_product(a.expand(2, 5, 3), Tensor(np.ones((3, 3))))
    with pytest.raises(TypeError, match="tau dtype float32 does not match input dtype float64"):
        LA.householder_product(a, Tensor(np.ones(3), mlfuse.float32))
    with pytest.raises(TypeError, match="expected a float tensor input, got int64"):
        LA.orgqr(Tensor(np.ones((3, 3), np.int64)), tau)
    with pytest.raises(mlfuse.ArgumentError, match="geqrf: input must have at least 2"):
        LA.geqrf(Tensor(np.ones(3)))
    c = Tensor(np.ones((5, 2)))
    with pytest.raises(mlfuse.ArgumentError, match=r"other.shape\[-1\] must be equal to input"):
        LA.ormqr(a, tau, c, left=False)
    with pytest.raises(mlfuse.ArgumentError, match=r"tau.shape\[-1\] must be equal to min"):
        LA.ormqr(a, Tensor(np.ones(2)), c)
    with pytest.raises(mlfuse.ArgumentError, match="same number of dimensions"):
        LA.ormqr(a, tau, Tensor(np.ones((2, 5, 2))))
    with pytest.raises(mlfuse.ArgumentError, match="other must have at least 2"):
        LA.ormqr(a, tau, Tensor(np.ones(5)))
    with pytest.raises(TypeError, match="same dtype, but input has dtype float64"):
        LA.ormqr(a, tau, Tensor(np.ones((5, 2)), mlfuse.float32))
    x = Tensor(RNG.standard_normal((3, 3)), requires_grad=True)
    with pytest.raises(mlfuse.UnsupportedModeError, match="no gradient"):
        LA.geqrf(x)[0].sum().backward()


# -- LDL ----------------------------------------------------------------------------------
def _unpack_ldl(ld, piv):
    """``(P, L, D)`` of one matrix's packed factors, by LAPACK's definition:
    ``A = P L D L^T P^T`` (P the swaps applied in order, each L_k unit lower)."""
    n = ld.shape[0]
    big_l, d, perm = np.eye(n), np.zeros((n, n)), np.arange(n)
    k = 0
    while k < n:
        s = 1 if piv[k] > 0 else 2
        kp = abs(piv[k]) - 1
        kk = k + s - 1
        # swap kk <-> kp in the rows of the previous L columns and the permutation
        big_l[[kk, kp], :k] = big_l[[kp, kk], :k]
        perm[[kk, kp]] = perm[[kp, kk]]
        d[k : k + s, k : k + s] = np.tril(ld[k : k + s, k : k + s])
        d[k, k + s - 1] = d[k + s - 1, k]
        big_l[k + s :, k : k + s] = ld[k + s :, k : k + s]
        k += s
    p = np.eye(n)[:, perm]
    return p, big_l, d


def test_ldl_factor_reconstructs_and_solves():
    n = 6
    for trial in range(8):
        s = RNG.standard_normal((n, n))
        if trial % 2:
            s[np.diag_indices(n)] = 0.0  # forces 2 x 2 pivots
        s = s + s.T
        ld, piv = LA.ldl_factor(Tensor(s))
        assert ld.dtype == mlfuse.float64 and piv.dtype == mlfuse.int32
        ldn, pn = ld.numpy(), piv.numpy()
        assert np.all(np.triu(ldn, 1) == 0)
        if trial % 2:
            assert (pn < 0).any()
        p, lo, d = _unpack_ldl(ldn, pn)
        close(p @ lo @ d @ lo.T @ p.T, s, 1e-10)
        b = RNG.standard_normal((n, 3))
        close(LA.ldl_solve(ld, piv, Tensor(b)), np.linalg.solve(s, b), 1e-9)


def test_ldl_known_factors_and_batches():
    s = np.array([[1.0, 2, 3], [2, -1, 0.5], [3, 0.5, 0.2]])
    ld, piv = LA.ldl_factor(Tensor(s))  # LAPACK's dsytrf: a 2 x 2 pivot, then 1 x 1
    close(piv.numpy(), np.array([-3, -3, 3]), 0)
    close(ld, np.array([[1.0, 0, 0], [3, 0.2, 0], [0.125, 0.625, -1.5625]]), 1e-12)
    batch = RNG.standard_normal((3, 4, 4))
    batch = batch + np.swapaxes(batch, -1, -2)
    ld, piv, info = LA.ldl_factor_ex(Tensor(batch, mlfuse.float32))
    assert ld.shape == (3, 4, 4) and piv.shape == (3, 4) and info.shape == (3,)
    assert ld.dtype == mlfuse.float32 and info.dtype == mlfuse.int32
    assert (info.numpy() == 0).all()
    b = RNG.standard_normal((2, 1, 4, 2))  # batch dims broadcast
    x = LA.ldl_solve(ld, piv, Tensor(b, mlfuse.float32))
    assert x.shape == (2, 3, 4, 2) and x.dtype == mlfuse.float32
    np.testing.assert_allclose(batch @ x.numpy(), np.broadcast_to(b, x.shape), atol=1e-4)


def test_ldl_singular_and_gradients():
    ld, piv, info = LA.ldl_factor_ex(Tensor(np.zeros((3, 3))))
    assert info.item() == 1
    close(piv.numpy(), np.array([1, 2, 3]), 0)
    with pytest.raises(LA.LinAlgError, match=r"ldl_factor: D\[1,1\] is exactly zero"):
        LA.ldl_factor(Tensor(np.zeros((3, 3))))
    with pytest.raises(LA.LinAlgError, match=r"ldl_factor_ex: D\[1,1\] is exactly zero"):
        LA.ldl_factor_ex(Tensor(np.zeros((3, 3))), check_errors=True)
    s = np.array([[4.0, 1.0], [1.0, -3.0]])
    ld, piv = LA.ldl_factor(Tensor(s))
    b = Tensor(RNG.standard_normal((2, 2)), requires_grad=True)
    LA.ldl_solve(ld, piv, b).sum().backward()
    close(b.grad, np.linalg.solve(s.T, np.ones((2, 2))), 1e-12)
    lt = Tensor(ld.numpy(), requires_grad=True)
    with pytest.raises(mlfuse.UnsupportedModeError, match="ldl_solve"):
        LA.ldl_solve(lt, piv, Tensor(np.ones((2, 1)))).sum().backward()
    st = Tensor(s, requires_grad=True)
    with pytest.raises(mlfuse.UnsupportedModeError, match="ldl_factor"):
        LA.ldl_factor(st)[0].sum().backward()


def test_ldl_errors():
    ld, piv = LA.ldl_factor(Tensor(np.eye(3)))
    with pytest.raises(mlfuse.ArgumentError, match="square matrices, but they are 3 by 2"):
        LA.ldl_factor(Tensor(np.ones((3, 2))))
    with pytest.raises(mlfuse.ArgumentError, match="at least 2 dimensions"):
        LA.ldl_factor_ex(Tensor(np.ones(3)))
    with pytest.raises(TypeError, match="expected a float tensor A, got int32"):
        LA.ldl_factor(Tensor(np.ones((3, 3), np.int32)))
    with pytest.raises(mlfuse.ArgumentError, match="each A matrix is 3 by 3 but each b"):
        LA.ldl_solve(ld, piv, Tensor(np.ones((2, 1))))
    with pytest.raises(TypeError, match="Expected pivots to be integers"):
        LA.ldl_solve(ld, Tensor(piv.numpy().astype(np.float32)), Tensor(np.ones((3, 1))))
    with pytest.raises(mlfuse.ArgumentError, match=r"pivots with shape \[2\]"):
        LA.ldl_solve(ld, Tensor(piv.numpy()[:2]), Tensor(np.ones((3, 1))))
    with pytest.raises(mlfuse.ArgumentError, match="B must have at least 2 dimensions"):
        LA.ldl_solve(ld, piv, Tensor(np.ones(3)))
    with pytest.raises(mlfuse.ArgumentError, match="between 1 and 3"):
        LA.ldl_solve(ld, Tensor(np.array([1, 2, 7], np.int32)), Tensor(np.ones((3, 1))))
