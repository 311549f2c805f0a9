"""``mlfuse.linalg``'s triangular solves and LU family (``solve_triangular``,
``lu_factor[_ex]``, ``lu``, ``lu_unpack``, ``lu_solve``, ``solve_ex``,
``tensorinv``, ``tensorsolve``) against float64 references written out here
(numpy has no LU with pivots), their gradients against central differences,
their errors, and PyTorch where it is installed."""

from __future__ import annotations

import numpy as np
import pytest
from gradcheck import numeric_grad

import mlfuse
import mlfuse.linalg as LA
from mlfuse import Tensor

RNG = np.random.default_rng(7)


def close(t, ref, tol=1e-10):
    got = t.numpy() if isinstance(t, Tensor) else np.asarray(t)
    assert got.shape == np.shape(ref), (got.shape, np.shape(ref))
    np.testing.assert_allclose(got, ref, rtol=tol, atol=tol)


def check_grad(fn, ref_fn, *arrays, tol=1e-6):
    ts = [Tensor(a, requires_grad=True) for a in arrays]
    out = fn(*ts)
    w = RNG.standard_normal(out.shape)
    (out * Tensor(w)).sum().backward()
    want = numeric_grad(ref_fn, [a.copy() for a in arrays], w)
    for t, g in zip(ts, want):
        np.testing.assert_allclose(t.grad.numpy(), g, rtol=tol, atol=tol)


def ref_lu(a):
    """Partial-pivoting LU of one (m, n) matrix, written the textbook way:
    (packed LU, 1-based pivots, info)."""
    a = np.array(a, np.float64)
    m, n = a.shape
    piv, info = [], 0
    for j in range(min(m, n)):
        p = j + int(np.argmax(np.abs(a[j:, j])))
        piv.append(p + 1)
        a[[j, p]] = a[[p, j]]
        if a[j, j] == 0:
            info = info or j + 1
            continue
        for i in range(j + 1, m):
            a[i, j] /= a[j, j]
            a[i, j + 1 :] -= a[i, j] * a[j, j + 1 :]
    return a, np.array(piv, np.int32), info


def ref_lu_batched(a):
    flat = a.reshape((-1,) + a.shape[-2:])
    res = [ref_lu(x) for x in flat]
    k = min(a.shape[-2:])
    return (
        np.stack([r[0] for r in res]).reshape(a.shape),
        np.stack([r[1] for r in res]).reshape(a.shape[:-2] + (k,)),
        np.array([r[2] for r in res], np.int32).reshape(a.shape[:-2]),
    )


def ref_plu(a):
    """(P, L, U) with a = P L U, from ref_lu."""
    packed, piv, _ = ref_lu(a)
    m, n = a.shape
    k = min(m, n)
    perm = list(range(m))
    for j, p in enumerate(piv - 1):
        perm[j], perm[p] = perm[p], perm[j]
    P = np.zeros((m, m))  # noqa: N806
    P[perm, range(m)] = 1
    return P, np.tril(packed[:, :k], -1) + np.eye(m, k), np.triu(packed[:k])


def tri(a, upper, unit):
    t = np.triu(a) if upper else np.tril(a)
    if unit:
        idx = np.arange(a.shape[-1])
        t[..., idx, idx] = 1.0
    return t


def well_conditioned(shape):
    a = RNG.standard_normal(shape)
    n = shape[-1]
    return a + 3 * np.eye(n) if shape[-1] == shape[-2] else a


# -- solve_triangular --------------------------------------------------------------------
@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unit", [True, False])
def test_solve_triangular_reads_only_its_triangle(upper, left, unit):
    a = well_conditioned((2, 1, 4, 4))
    b = RNG.standard_normal((3, 4, 2) if left else (3, 2, 4))
    poisoned = a.copy()  # NaN where the solve must not look
    other = np.tril(np.ones((4, 4), bool), -1) if upper else np.triu(np.ones((4, 4), bool), 1)
    poisoned[..., other] = np.nan
    if unit:
        poisoned[..., range(4), range(4)] = np.nan
    x = LA.solve_triangular(Tensor(poisoned), Tensor(b), upper=upper, left=left, unitriangular=unit)
    t = tri(a, upper, unit)
    want = (
        np.linalg.solve(t, np.broadcast_to(b, (2, 3, 4, 2)))
        if left
        else np.swapaxes(np.linalg.solve(np.swapaxes(t, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)
    )
    close(x, want)


def test_solve_triangular_float32_and_zero_diagonal():
    a = well_conditioned((3, 3)).astype(np.float32)
    b = RNG.standard_normal((3, 2)).astype(np.float32)
    x = LA.solve_triangular(Tensor(a), Tensor(b), upper=False)
    assert x.dtype == mlfuse.float32 and x.device == Tensor(a).device
    want = np.linalg.solve(np.tril(a.astype(np.float64)), b.astype(np.float64))
    np.testing.assert_allclose(x.numpy(), want.astype(np.float32), rtol=1e-6, atol=1e-6)
    # a zero on the diagonal is no error: inf/NaN, as PyTorch's
    z = np.triu(np.ones((2, 2)))
    z[1, 1] = 0
    got = LA.solve_triangular(Tensor(z), Tensor(np.ones((2, 1))), upper=True).numpy()
    assert not np.isfinite(got).all()


@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unit", [True, False])
def test_solve_triangular_gradients(upper, left, unit):
    a = well_conditioned((2, 3, 3))
    b = RNG.standard_normal((3, 2) if left else (2, 3))  # broadcast over A's batch

    def ref(a, b):
        t = tri(a, upper, unit)
        if left:
            return np.linalg.solve(t, np.broadcast_to(b, (2, 3, 2)))
        return np.swapaxes(np.linalg.solve(np.swapaxes(t, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)

    check_grad(
        lambda a, b: LA.solve_triangular(a, b, upper=upper, left=left, unitriangular=unit),
        ref,
        a,
        b,
    )


def test_solve_triangular_errors():
    a = Tensor(np.eye(3))
    with pytest.raises(mlfuse.ArgumentError, match="B must have at least 2 dims"):
        LA.solve_triangular(a, Tensor(np.ones(3)), upper=True)
    with pytest.raises(mlfuse.ArgumentError, match=r"for A X = B .* B needs 3 rows"):
        LA.solve_triangular(a, Tensor(np.ones((2, 3))), upper=True)
    with pytest.raises(mlfuse.ArgumentError, match=r"for X A = B .* B needs 3 columns"):
        LA.solve_triangular(a, Tensor(np.ones((3, 2))), upper=True, left=False)
    with pytest.raises(mlfuse.ArgumentError, match="batch of square matrices"):
        LA.solve_triangular(Tensor(np.ones((2, 3))), Tensor(np.ones((2, 1))), upper=True)
    with pytest.raises(mlfuse.ArgumentError, match="do not broadcast"):
        LA.solve_triangular(Tensor(np.ones((2, 3, 3))), Tensor(np.ones((4, 3, 1))), upper=True)
    with pytest.raises(TypeError, match="expected a float tensor"):
        LA.solve_triangular(Tensor([[1, 0], [0, 1]]), Tensor(np.ones((2, 1))), upper=True)


# -- LU factorization ----------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 5, 5), (3, 6), (6, 3), (2, 4, 2), (1, 1)])
def test_lu_factor_matches_the_reference(shape):
    a = RNG.standard_normal(shape)
    want_lu, want_piv, _ = ref_lu_batched(a)
    lu_, piv, info = LA.lu_factor_ex(Tensor(a))
    close(lu_, want_lu)
    assert piv.dtype == mlfuse.int32 and info.dtype == mlfuse.int32
    np.testing.assert_array_equal(piv.numpy(), want_piv)
    np.testing.assert_array_equal(info.numpy(), np.zeros(shape[:-2], np.int32))
    lu2, piv2 = LA.lu_factor(Tensor(a))
    close(lu2, want_lu)
    P, L, U = LA.lu(Tensor(a))  # noqa: N806
    m, n = shape[-2:]
    k = min(m, n)
    assert P.shape == shape[:-2] + (m, m) and L.shape == shape[:-2] + (m, k)
    assert U.shape == shape[:-2] + (k, n)
    close(P @ L @ U, a)
    pn, ln, un = P.numpy(), L.numpy(), U.numpy()
    np.testing.assert_array_equal(np.sort(pn, -1)[..., -1], 1)  # a permutation
    np.testing.assert_array_equal(pn.sum(-1), 1)
    np.testing.assert_array_equal(ln, np.tril(ln))
    np.testing.assert_array_equal(np.diagonal(ln, 0, -2, -1), 1)
    np.testing.assert_array_equal(un, np.triu(un))
    assert (np.abs(ln) <= 1).all()  # partial pivoting bounds the multipliers


def test_lu_float32_rounds_once():
    a = RNG.standard_normal((3, 4, 4)).astype(np.float32)
    lu_, piv = LA.lu_factor(Tensor(a))
    assert lu_.dtype == mlfuse.float32
    want = ref_lu_batched(a.astype(np.float64))[0].astype(np.float32)
    np.testing.assert_allclose(lu_.numpy(), want, rtol=1e-6, atol=1e-6)


def test_singular_matrices():
    s = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
    with pytest.raises(mlfuse.ArgumentError, match=r"linalg.lu_factor: U\[3,3\] is zero"):
        LA.lu_factor(Tensor(s))
    batch = np.stack([np.eye(3), s, np.zeros((3, 3))])
    with pytest.raises(mlfuse.ArgumentError, match=r"U\[3,3\] is zero \(batch element \(1,\)\)"):
        LA.lu_factor(Tensor(batch))
    with pytest.raises(mlfuse.ArgumentError, match="lu_factor_ex: U"):
        LA.lu_factor_ex(Tensor(batch), check_errors=True)
    lu_, piv, info = LA.lu_factor_ex(Tensor(batch))
    np.testing.assert_array_equal(info.numpy(), [0, 3, 1])
    want_lu, want_piv, want_info = ref_lu_batched(batch)
    np.testing.assert_array_equal(info.numpy(), want_info)
    np.testing.assert_array_equal(piv.numpy(), want_piv)
    close(lu_, want_lu)
    P, L, U = LA.lu(Tensor(s))  # noqa: N806 - no error: singular matrices factor too
    close(P @ L @ U, s)
    assert LA.lu_factor_ex(Tensor(np.zeros((3, 2)))).info.item() == 1


def test_empty_and_no_pivoting():
    lu_, piv, info = LA.lu_factor_ex(Tensor(np.zeros((2, 0, 0))))
    assert lu_.shape == (2, 0, 0) and piv.shape == (2, 0) and info.numpy().tolist() == [0, 0]
    assert LA.lu_factor_ex(Tensor(np.zeros((0, 3, 3)))).info.shape == (0,)
    with pytest.raises(mlfuse.UnsupportedModeError, match="without pivoting"):
        LA.lu_factor(Tensor(np.eye(2)), pivot=False)
    with pytest.raises(mlfuse.UnsupportedModeError, match="linalg.lu: LU without pivoting"):
        LA.lu(Tensor(np.eye(2)), pivot=False)
    with pytest.raises(mlfuse.ArgumentError, match="at least 2 dims"):
        LA.lu_factor(Tensor(np.ones(3)))


def test_lu_unpack():
    a = RNG.standard_normal((2, 4, 3))
    lu_, piv = LA.lu_factor(Tensor(a))
    P, L, U = LA.lu_unpack(lu_, piv)  # noqa: N806
    for got, want in zip((P, L, U), zip(*(ref_plu(x) for x in a))):
        close(got, np.stack(want))
    p, lo, up = LA.lu_unpack(lu_, piv, unpack_data=False)
    assert lo.shape == (0,) and up.shape == (0,) and p.shape == (2, 4, 4)
    p, lo, up = LA.lu_unpack(lu_, piv, unpack_pivots=False)
    assert p.shape == (0,) and lo.shape == (2, 4, 3)
    with pytest.raises(mlfuse.ArgumentError, match="pivots must be between 1 and 4"):
        LA.lu_unpack(lu_, Tensor(np.full((2, 3), 5, np.int32)))
    with pytest.raises(mlfuse.ArgumentError, match=r"pivots must have shape \(2, 3\)"):
        LA.lu_unpack(lu_, Tensor(np.ones((2, 4), np.int32)))


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (3, 5), (5, 3)])
def test_lu_factor_gradients(shape):
    a = RNG.standard_normal(shape)
    check_grad(lambda t: LA.lu_factor(t).LU, lambda x: ref_lu_batched(x)[0], a, tol=1e-5)


@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (5, 3)])
def test_lu_gradients(shape):
    a = RNG.standard_normal(shape)

    def fn(t):
        _, lo, up = LA.lu(t)
        return Tensor.cat([lo.reshape(-1), up.reshape(-1)])

    def ref(x):
        _, lo, up = ref_plu(x)
        return np.concatenate([lo.ravel(), up.ravel()])

    check_grad(fn, ref, a, tol=1e-5)


# -- lu_solve ------------------------------------------------------------------------------
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [True, False])
def test_lu_solve_values(left, adjoint):
    a = well_conditioned((2, 1, 4, 4))
    b = RNG.standard_normal((3, 4, 2) if left else (3, 2, 4))
    lu_, piv = LA.lu_factor(Tensor(a))
    x = LA.lu_solve(lu_, piv, Tensor(b), left=left, adjoint=adjoint)
    op = np.swapaxes(a, -1, -2) if adjoint else a
    bb = np.broadcast_to(b, (2, 3) + b.shape[-2:])
    want = (
        np.linalg.solve(op, bb)
        if left
        else np.swapaxes(np.linalg.solve(np.swapaxes(op, -1, -2), np.swapaxes(bb, -1, -2)), -1, -2)
    )
    close(x, want)


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [True, False])
def test_lu_solve_gradients(left, adjoint):
    a = well_conditioned((2, 3, 3))
    packed, piv, _ = ref_lu_batched(a)
    pivots = Tensor(piv)
    perms = np.stack([ref_plu(x)[0] for x in a])
    b = RNG.standard_normal((3, 2) if left else (2, 3))

    def ref(lu_, b):
        m = perms @ (np.tril(lu_, -1) + np.eye(3)) @ np.triu(lu_)  # the pivots held fixed
        op = np.swapaxes(m, -1, -2) if adjoint else m
        if left:
            return np.linalg.solve(op, np.broadcast_to(b, (2, 3, 2)))
        return np.swapaxes(np.linalg.solve(np.swapaxes(op, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)

    check_grad(
        lambda lu_, b: LA.lu_solve(lu_, pivots, b, left=left, adjoint=adjoint), ref, packed, b
    )


def test_lu_solve_through_lu_factor_is_solve():
    a = well_conditioned((2, 3, 3))
    b = RNG.standard_normal((2, 3, 2))
    check_grad(lambda a, b: LA.lu_solve(*LA.lu_factor(a), b), np.linalg.solve, a, b)


def test_lu_solve_errors():
    lu_, piv = LA.lu_factor(Tensor(well_conditioned((3, 3))))
    with pytest.raises(mlfuse.ArgumentError, match="B must have at least 2 dims"):
        LA.lu_solve(lu_, piv, Tensor(np.ones(3)))
    with pytest.raises(mlfuse.ArgumentError, match="B needs 3 rows"):
        LA.lu_solve(lu_, piv, Tensor(np.ones((2, 1))))
    with pytest.raises(mlfuse.ArgumentError, match=r"pivots must be integers of shape \(3,\)"):
        LA.lu_solve(lu_, piv[:2], Tensor(np.ones((3, 1))))
    with pytest.raises(mlfuse.ArgumentError, match="pivots must be between 1 and 3"):
        LA.lu_solve(lu_, Tensor(np.zeros(3, np.int32)), Tensor(np.ones((3, 1))))
    with pytest.raises(mlfuse.ArgumentError, match="LU must be a batch of square matrices"):
        LA.lu_solve(Tensor(np.ones((2, 3))), piv, Tensor(np.ones((2, 1))))


# -- solve_ex, tensorinv, tensorsolve, triangular_solve ------------------------------------
def test_solve_ex():
    a = well_conditioned((2, 3, 3))
    b = RNG.standard_normal((2, 3, 2))
    x, info = LA.solve_ex(Tensor(a), Tensor(b))
    close(x, np.linalg.solve(a, b))
    assert info.dtype == mlfuse.int32 and info.numpy().tolist() == [0, 0]
    x, info = LA.solve_ex(Tensor(a), Tensor(b[:, :, 0]))  # a batch of vectors
    close(x, np.linalg.solve(a, b[..., :1])[..., 0])
    x, _ = LA.solve_ex(Tensor(a), Tensor(np.swapaxes(b, -1, -2)), left=False)
    close(x, np.swapaxes(np.linalg.solve(np.swapaxes(a, -1, -2), b), -1, -2))
    s = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
    batch = np.stack([a[0], s])
    x, info = LA.solve_ex(Tensor(batch), Tensor(b))
    assert info.numpy().tolist() == [0, 3]
    close(x[0], np.linalg.solve(a[0], b[0]))  # the others still solved
    assert not np.isfinite(x[1].numpy()).all()  # inf/NaN where the pivot is zero
    x, info = LA.solve_ex(Tensor(batch), Tensor(b[:, :, 0]))
    assert x.shape == (2, 3) and info.numpy().tolist() == [0, 3]
    with pytest.raises(mlfuse.ArgumentError, match=r"solve_ex: U\[3,3\] is zero"):
        LA.solve_ex(Tensor(batch), Tensor(b), check_errors=True)
    check_grad(lambda a, b: LA.solve_ex(a, b).result, np.linalg.solve, a, b)


def test_tensorinv_and_tensorsolve():
    a = RNG.standard_normal((4, 6, 8, 3))
    close(LA.tensorinv(Tensor(a), ind=2), np.linalg.tensorinv(a, ind=2))
    a1 = RNG.standard_normal((6, 2, 3))
    close(LA.tensorinv(Tensor(a1), ind=1), np.linalg.tensorinv(a1, ind=1))
    with pytest.raises(mlfuse.ArgumentError, match="ind must be a positive int"):
        LA.tensorinv(Tensor(a), ind=0)
    with pytest.raises(mlfuse.ArgumentError, match=r"\(24 != 12\)"):
        LA.tensorinv(Tensor(RNG.standard_normal((4, 6, 4, 3))), ind=2)
    a2 = RNG.standard_normal((2, 3, 6))
    b2 = RNG.standard_normal((2, 3))
    close(LA.tensorsolve(Tensor(a2), Tensor(b2)), np.linalg.tensorsolve(a2, b2))
    a3 = RNG.standard_normal((6, 2, 3))
    close(
        LA.tensorsolve(Tensor(a3), Tensor(b2), dims=(0,)),
        np.linalg.tensorsolve(a3, b2, axes=(0,)),
    )
    a4 = RNG.standard_normal((2, 3, 2, 3))
    close(
        LA.tensorsolve(Tensor(a4), Tensor(b2), dims=(0, 1)),
        np.linalg.tensorsolve(a4, b2, axes=(0, 1)),
    )
    with pytest.raises(mlfuse.ArgumentError, match="tensorsolve: A"):
        LA.tensorsolve(Tensor(a2), Tensor(RNG.standard_normal(5)))
    a5 = RNG.standard_normal((2, 2, 4)) + np.eye(4).reshape(2, 2, 4) * 3
    check_grad(lambda t: LA.tensorinv(t, ind=2), lambda x: np.linalg.tensorinv(x, ind=2), a5)
    check_grad(LA.tensorsolve, np.linalg.tensorsolve, a5, RNG.standard_normal((2, 2)))


def test_triangular_solve_legacy_form():
    a = well_conditioned((3, 3))
    b = RNG.standard_normal((2, 3, 2))
    x, coef = LA.triangular_solve(Tensor(b), Tensor(a))
    close(x, np.linalg.solve(np.triu(a), b))
    close(coef, np.broadcast_to(a, (2, 3, 3)))
    x, _ = LA.triangular_solve(Tensor(b), Tensor(a), upper=False, transpose=True)
    close(x, np.linalg.solve(np.tril(a).T, b))
    x, _ = LA.triangular_solve(Tensor(b), Tensor(a), transpose=True, unitriangular=True)
    close(x, np.linalg.solve(tri(a, True, True).T, b))


# -- PyTorch ---------------------------------------------------------------------------------
def test_against_torch():
    torch = pytest.importorskip("torch")
    a = RNG.standard_normal((2, 4, 4))
    b = RNG.standard_normal((2, 4, 3))
    ta, tb = torch.tensor(a), torch.tensor(b)
    for shape in [(2, 4, 4), (3, 5), (5, 3)]:
        m = RNG.standard_normal(shape)
        lu_, piv = LA.lu_factor(Tensor(m))
        tlu, tpiv = torch.linalg.lu_factor(torch.tensor(m))
        np.testing.assert_array_equal(piv.numpy(), tpiv.numpy())
        close(lu_, tlu.numpy())
        for got, want in zip(LA.lu(Tensor(m)), torch.linalg.lu(torch.tensor(m))):
            close(got, want.numpy())
    lu_, piv = LA.lu_factor(Tensor(a))
    tlu, tpiv = torch.linalg.lu_factor(ta)
    for left, adjoint in [(True, False), (True, True), (False, False), (False, True)]:
        rhs = b if left else np.swapaxes(b, -1, -2)
        got = LA.lu_solve(lu_, piv, Tensor(rhs), left=left, adjoint=adjoint)
        want = torch.linalg.lu_solve(tlu, tpiv, torch.tensor(rhs), left=left, adjoint=adjoint)
        close(got, want.numpy())
    for upper in (True, False):
        got = LA.solve_triangular(Tensor(a), Tensor(b), upper=upper, unitriangular=True)
        want = torch.linalg.solve_triangular(ta, tb, upper=upper, unitriangular=True)
        close(got, want.numpy())
    s = torch.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]], dtype=torch.float64)
    sb = torch.stack([ta[0, :3, :3], s, torch.zeros(3, 3, dtype=torch.float64)])
    np.testing.assert_array_equal(
        LA.lu_factor_ex(Tensor(sb.numpy())).info.numpy(), torch.linalg.lu_factor_ex(sb).info
    )
    np.testing.assert_array_equal(
        LA.solve_ex(Tensor(sb.numpy()), Tensor(b[0, :3])).info.numpy(),
        torch.linalg.solve_ex(sb, tb[0, :3]).info,
    )
    # gradients of the factorization, through L and U, against torch's autograd
    for shape in [(4, 4), (3, 5), (5, 3)]:
        m = RNG.standard_normal(shape)
        w_l = RNG.standard_normal(shape[:1] + (min(shape),))
        w_u = RNG.standard_normal((min(shape),) + shape[1:])
        tm = torch.tensor(m, requires_grad=True)
        _, tl, tu = torch.linalg.lu(tm)
        ((tl * torch.tensor(w_l)).sum() + (tu * torch.tensor(w_u)).sum()).backward()
        xm = Tensor(m, requires_grad=True)
        _, xl, xu = LA.lu(xm)
        ((xl * Tensor(w_l)).sum() + (xu * Tensor(w_u)).sum()).backward()
        close(xm.grad, tm.grad.numpy(), tol=1e-8)


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [True, False])
def test_lu_solve_gradients_against_torch(left, adjoint):
    torch = pytest.importorskip("torch")
    a = RNG.standard_normal((2, 4, 4))
    rhs = RNG.standard_normal((2, 4, 3) if left else (2, 3, 4))
    w = RNG.standard_normal(rhs.shape)
    tlu, tpiv = torch.linalg.lu_factor(torch.tensor(a))
    tlu = tlu.detach().requires_grad_()
    tb = torch.tensor(rhs, requires_grad=True)
    tx = torch.linalg.lu_solve(tlu, tpiv, tb, left=left, adjoint=adjoint)
    (tx * torch.tensor(w)).sum().backward()
    lu_, piv = LA.lu_factor(Tensor(a))
    xlu, xb = Tensor(lu_.numpy(), requires_grad=True), Tensor(rhs, requires_grad=True)
    x = LA.lu_solve(xlu, piv, xb, left=left, adjoint=adjoint)
    (x * Tensor(w)).sum().backward()
    close(x, tx.detach().numpy())
    close(xlu.grad, tlu.grad.numpy(), tol=1e-9)
    close(xb.grad, tb.grad.numpy(), tol=1e-9)
    col = rhs if left else np.swapaxes(rhs, -1, -2)  # triangular_solve is left-sided
    got = LA.triangular_solve(Tensor(col), Tensor(a), transpose=adjoint)
    want = torch.triangular_solve(torch.tensor(col), torch.tensor(a), transpose=adjoint)
    close(got.solution, want.solution.numpy())
    close(got.cloned_coefficient, want.cloned_coefficient.numpy())


def test_torch_top_level_and_method_spellings():
    a = RNG.standard_normal((3, 3)) + 3 * np.eye(3)
    b = RNG.standard_normal((3, 2))
    ta, tb = Tensor(a), Tensor(b)
    LU, piv = ta.lu()  # noqa: N806
    P, L, U = mlfuse.lu_unpack(LU, piv)  # noqa: N806
    np.testing.assert_allclose((P @ L @ U).numpy(), a, atol=1e-5)
    np.testing.assert_allclose(tb.lu_solve(LU, piv).numpy(), np.linalg.solve(a, b), atol=1e-5)
    np.testing.assert_allclose(
        mlfuse.lu_solve(tb, LU, piv).numpy(), np.linalg.solve(a, b), atol=1e-5
    )
    x, _ = mlfuse.triangular_solve(tb, ta, upper=False)
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(np.tril(a), b), atol=1e-5)
    x, _ = tb.triangular_solve(ta, transpose=True)
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(np.triu(a).T, b), atol=1e-5)
    info = mlfuse.lu(mlfuse.zeros(2, 2), get_infos=True)[2]  # factored, not refused
    assert info.tolist() == 1
