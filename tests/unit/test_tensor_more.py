"""PyTorch's tensor methods beyond the core API, against float64 numpy: creation
and conversion helpers, splitting and joining, products, elementwise math,
NaN-skipping and paired reductions, indexed writes, strided views, sorting and
searching (static shapes, built from comparisons), the data-dependent ones that
compute on the host, einsum, and PyTorch's method names for the operators; their
errors, kernel counts and gradients."""

from __future__ import annotations

import math

import numpy as np
import pytest

import mlfuse
from mlfuse import Tensor

F32, F64 = np.float32, np.float64
RNG = np.random.default_rng(7)


def r(*shape) -> np.ndarray:
    return RNG.standard_normal(shape).astype(F32)


def kernels(*ts: Tensor) -> int:
    return len(mlfuse.schedule(*ts))


def close(t: Tensor, want, rtol=1e-5, atol=1e-6):
    got = t.numpy()
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got.astype(F64), want.astype(F64), rtol=rtol, atol=atol)


def same(t: Tensor, want):
    got = t.numpy()
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(got, want)


def numeric_grad(fn, arrays, k, eps=1e-6):
    base = [a.copy() for a in arrays]
    g = np.zeros_like(base[k])
    for i in np.ndindex(base[k].shape):
        for sgn in (1, -1):
            xs = [a.copy() for a in base]
            xs[k][i] += sgn * eps
            v = fn(*[Tensor(a) for a in xs]).sum().item()
            g[i] += sgn * v / (2 * eps)
    return g


def check_grad(fn, *arrays, tol=1e-6):
    arrays = [np.asarray(a, F64) for a in arrays]
    got = mlfuse.grad(lambda *ts: fn(*ts).sum())(*[Tensor(a) for a in arrays])
    for k, g in enumerate(got):
        want = numeric_grad(fn, arrays, k)
        np.testing.assert_allclose(g.numpy(), want, rtol=tol, atol=tol, err_msg=f"input {k}")


# ---------------------------------------------------------------------------
# creation and conversion helpers
# ---------------------------------------------------------------------------


def test_new_creators_follow_dtype_and_device():
    x = Tensor([1, 2, 3], dtype=mlfuse.int16)
    for t, want in (
        (x.new_zeros(2, 3), np.zeros((2, 3))),
        (x.new_ones((2,)), np.ones(2)),
        (x.new_full((2, 2), 7), np.full((2, 2), 7)),
        (x.new_empty(3), np.zeros(3)),
        (x.new_tensor([4, 5]), np.array([4, 5])),
    ):
        assert t.dtype == mlfuse.int16 and t.device == x.device
        same(t, want.astype(np.int16))
    assert x.new_zeros(2, dtype=mlfuse.float32).dtype == mlfuse.float32
    assert x.new_ones(2, requires_grad=True, dtype=mlfuse.float32).requires_grad
    assert x.type_as(Tensor([1.0])).dtype == mlfuse.float32
    assert Tensor.zeros(2, 5).nelement() == 10


def test_clone_is_a_copy_with_gradient():
    x = Tensor([1.0, 2.0, 3.0]).realize()
    y = x.clone()
    y[0] = 9.0
    same(x, [1.0, 2.0, 3.0])
    same(y, [9.0, 2.0, 3.0])
    check_grad(lambda a: a.clone() * a, [1.0, -2.0])
    t = Tensor([1.0, 2.0])
    u = t.new_tensor(t)
    assert u.node is not t.node and not u.requires_grad


# ---------------------------------------------------------------------------
# splitting and joining
# ---------------------------------------------------------------------------


def test_unbind_tensor_split_and_friends():
    a = r(5, 6, 4)
    x = Tensor(a)
    for d in (0, 1, -1):
        parts = x.unbind(d)
        assert len(parts) == a.shape[d]
        for i, p in enumerate(parts):
            same(p, np.take(a, i, axis=d))
    for spec in (3, 4, [1, 4], [2, -1], [0, 0, 9]):
        for d in (0, 1):
            got = x.tensor_split(spec, dim=d)
            want = np.array_split(a, spec, axis=d)
            assert len(got) == len(want)
            for g, w in zip(got, want):
                same(g, w)
    for g, w in zip(x.hsplit(3), np.hsplit(a, 3)):
        same(g, w)
    for g, w in zip(x.vsplit([1, 3]), np.vsplit(a, [1, 3])):
        same(g, w)
    for g, w in zip(x.dsplit(2), np.dsplit(a, 2)):
        same(g, w)
    for g, w in zip(Tensor(a[0, 0]).hsplit(2), np.hsplit(a[0, 0], 2)):
        same(g, w)
    with pytest.raises(ValueError, match="does not split into 4 equal"):
        x.hsplit(4)
    with pytest.raises(ValueError, match="at least 3 dims"):
        Tensor(a[0]).dsplit(2)
    with pytest.raises(ValueError, match="sections must be a positive int"):
        x.tensor_split(0)


def test_hstack_vstack_dstack():
    a, b = r(3), r(3)
    same(mlfuse.hstack([Tensor(a), Tensor(b)]), np.hstack([a, b]))
    same(mlfuse.vstack([Tensor(a), Tensor(b)]), np.vstack([a, b]))
    same(mlfuse.dstack([Tensor(a), Tensor(b)]), np.dstack([a, b]))
    m, n = r(2, 3), r(2, 2)
    same(Tensor(m).hstack(Tensor(n)), np.hstack([m, n]))
    same(Tensor(m).vstack(Tensor(a)), np.vstack([m, a]))
    same(Tensor(m).dstack(Tensor(m)), np.dstack([m, m]))
    same(mlfuse.hstack([Tensor(1.0), Tensor(2.0)]), [1.0, 2.0])
    with pytest.raises(ValueError, match="hstack needs at least one tensor"):
        mlfuse.hstack([])


def test_diff_and_rot90():
    a = r(4, 6)
    x = Tensor(a)
    close(x.diff(), np.diff(a))
    close(x.diff(2, dim=0), np.diff(a, 2, axis=0))
    close(
        x.diff(dim=-1, prepend=Tensor(a[:, :1]), append=Tensor(a[:, :2])),
        np.diff(a, axis=-1, prepend=a[:, :1], append=a[:, :2]),
    )
    close(x.diff(dim=1, prepend=0.5), np.diff(a, axis=1, prepend=0.5))
    same(Tensor([True, True, False]).diff(), [False, True])
    for k in (-1, 0, 1, 2, 3, 5):
        same(x.rot90(k), np.rot90(a, k))
    b = r(2, 3, 4)
    same(Tensor(b).rot90(1, (2, 0)), np.rot90(b, 1, (2, 0)))
    with pytest.raises(ValueError, match="dims must differ"):
        x.rot90(1, (1, 1))
    with pytest.raises(ValueError, match="n must be a non-negative int"):
        x.diff(-1)


# ---------------------------------------------------------------------------
# products
# ---------------------------------------------------------------------------


def test_products_against_numpy():
    a, b = r(3), r(4)
    m, v, w = r(3, 4), r(4), r(4, 5)
    c1, c2 = r(2, 3, 4), r(2, 4, 5)
    tol = dict(rtol=1e-5, atol=1e-5)
    close(Tensor(a).outer(Tensor(b)), np.outer(a.astype(F64), b), **tol)
    mm = r(5, 4)
    close(Tensor(m).inner(Tensor(mm)), np.inner(m.astype(F64), mm), **tol)
    close(Tensor(c1).inner(Tensor(v)), np.inner(c1.astype(F64), v), **tol)
    close(Tensor(m).mv(Tensor(v)), m.astype(F64) @ v, **tol)
    close(Tensor(m).mm(Tensor(w)), m.astype(F64) @ w, **tol)
    close(Tensor(c1).bmm(Tensor(c2)), c1.astype(F64) @ c2, **tol)
    bias = r(5)
    close(
        Tensor(bias).addmm(Tensor(m), Tensor(w), beta=0.5, alpha=2.0),
        0.5 * bias + 2 * (m.astype(F64) @ w),
        **tol,
    )
    nan = Tensor(np.full((3, 5), np.nan, F32))
    close(nan.addmm(Tensor(m), Tensor(w), beta=0), m.astype(F64) @ w, **tol)
    bb = r(2, 3, 5)
    close(Tensor(bb).baddbmm(Tensor(c1), Tensor(c2), alpha=-1.0), bb - c1.astype(F64) @ c2, **tol)
    close(Tensor(a).addmv(Tensor(m), Tensor(v)), a + m.astype(F64) @ v, **tol)
    x, y, z = r(3, 4), r(3, 4), r(4)
    close(Tensor(x).addcmul(Tensor(y), Tensor(z), value=0.5), x + 0.5 * y.astype(F64) * z, **tol)
    close(
        Tensor(x).addcdiv(Tensor(y), Tensor(np.abs(z) + 1), value=-2),
        x - 2 * y.astype(F64) / (np.abs(z) + 1),
        **tol,
    )
    close(Tensor(v).vdot(Tensor(z)), np.vdot(v.astype(F64), z), **tol)
    k1, k2 = r(2, 3), r(3, 2)
    close(Tensor(k1).kron(Tensor(k2)), np.kron(k1.astype(F64), k2), **tol)
    close(Tensor(a).kron(Tensor(k2)), np.kron(a.astype(F64), k2), **tol)
    p, q = r(4, 3), r(4, 3)
    close(Tensor(p).cross(Tensor(q)), np.cross(p.astype(F64), q), **tol)
    close(Tensor(p.T).cross(Tensor(q.T), dim=0), np.cross(p.astype(F64), q).T, **tol)
    close(Tensor(p).cross(Tensor(q[0]), dim=-1), np.cross(p.astype(F64), q[0]), **tol)
    same(
        Tensor([1, 2], dtype=mlfuse.int32).outer(Tensor([3, 4], dtype=mlfuse.int32)),
        np.array([[3, 4], [6, 8]], np.int32),
    )


def test_product_errors():
    m = Tensor(r(3, 4))
    with pytest.raises(ValueError, match=r"mv needs a \(n, m\) matrix.*\(3, 4\) and \(3,\)"):
        m.mv(Tensor(r(3)))
    with pytest.raises(ValueError, match=r"bmm needs \(b, n, k\)"):
        m.bmm(m)
    with pytest.raises(ValueError, match="outer needs two 1-d tensors"):
        m.outer(Tensor(r(3)))
    with pytest.raises(ValueError, match="vdot needs two 1-d tensors of one length"):
        Tensor(r(3)).vdot(Tensor(r(4)))
    with pytest.raises(ValueError, match="cross: no dim of size 3"):
        Tensor(r(2, 4)).cross(Tensor(r(2, 4)))
    with pytest.raises(ValueError, match="cross: dim 1 of .* must have size 3"):
        Tensor(r(3, 4)).cross(Tensor(r(3, 4)), dim=1)
    with pytest.raises(ValueError, match="inner: last dims differ"):
        m.inner(Tensor(r(3)))


def test_diag_diagonal_trace():
    v = r(4)
    m = r(4, 6)
    for k in (-2, -1, 0, 1, 3):
        same(Tensor(v).diag(k), np.diag(v, k))
        same(Tensor(m).diag(k), np.diag(m, k))
        same(Tensor(m).diagonal(k), np.diagonal(m, k))
    same(Tensor(m).diagonal(9), np.diagonal(m, 9))
    b = r(2, 3, 4)
    for off, d1, d2 in ((0, 0, 1), (1, -1, -2), (-1, 2, 0)):
        same(Tensor(b).diagonal(off, d1, d2), np.diagonal(b, off, d1, d2))
    close(Tensor(m).trace(), np.trace(m.astype(F64)))
    t = Tensor(np.arange(9, dtype=np.int32).reshape(3, 3))
    assert t.trace().dtype == mlfuse.int64 and t.trace().item() == 12
    # a view: writing the diagonal writes the matrix
    z = Tensor.zeros(3, 3).realize()
    z.diagonal().assign(Tensor([1.0, 2.0, 3.0]))
    same(z, np.diag([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="dim1 and dim2 must differ"):
        Tensor(m).diagonal(0, 1, -1)
    with pytest.raises(ValueError, match="diag needs a 1-d or 2-d tensor"):
        Tensor(b).diag()
    with pytest.raises(ValueError, match="trace needs a 2-d tensor"):
        Tensor(v).trace()


# ---------------------------------------------------------------------------
# elementwise math
# ---------------------------------------------------------------------------


def test_elementwise_math():
    a = np.array([-3.5, -1.0, -0.25, 0.0, 0.3, 2.0, 7.25, 1e30], F32)
    b = np.array([2.0, -3.0, 0.5, 1.0, -1e-3, 2.5, -2.0, 1e30], F32)
    A, B = Tensor(a), Tensor(b)
    a64, b64 = a.astype(F64), b.astype(F64)
    close(A.logaddexp(B), np.logaddexp(a64, b64), rtol=1e-6)
    close(A.logaddexp2(B), np.logaddexp2(a64, b64), rtol=1e-6)
    close(A.hypot(B), np.hypot(a64, b64), rtol=1e-6)
    close(A.deg2rad(), np.deg2rad(a64), rtol=1e-6)
    close(A.rad2deg(), np.rad2deg(a64), rtol=1e-6)
    close(A.fmod(B), np.fmod(a64, b64), rtol=1e-6)
    close(A.remainder(B), np.remainder(a64, b64), rtol=1e-6, atol=1e-6)
    close(A.frac(), a64 - np.trunc(a64))
    fp = A.float_power(2)
    assert fp.dtype == mlfuse.float64
    close(fp, a64**2)
    # the tiny gap stays accurate (log1p), infinities and NaN as numpy
    close(Tensor([0.0]).logaddexp(Tensor([-50.0])), np.logaddexp([0.0], [-50.0]), rtol=1e-6)
    inf = np.array([np.inf, -np.inf, np.inf, np.nan], F32)
    oth = np.array([np.inf, -np.inf, 1.0, 1.0], F32)
    with np.errstate(invalid="ignore"):
        close(Tensor(inf).logaddexp(Tensor(oth)), np.logaddexp(inf, oth))
    close(
        Tensor([np.inf, 2e38, 0.0]).hypot(Tensor([np.nan, 2e38, 0.0])).double(),
        np.array([np.inf, np.hypot(F32(2e38), F32(2e38), dtype=F64), 0.0]),
        rtol=1e-6,
    )
    ia = Tensor([-7, 7, -7, 7, 6], dtype=mlfuse.int32)
    ib = Tensor([2, 2, -2, -2, 3], dtype=mlfuse.int32)
    same(ia.fmod(ib), np.fmod([-7, 7, -7, 7, 6], [2, 2, -2, -2, 3]).astype(np.int32))
    same(ia.remainder(ib), np.remainder([-7, 7, -7, 7, 6], [2, 2, -2, -2, 3]).astype(np.int32))
    p = np.array([0.0, 0.1, 0.5, 0.9, 1.0], F32)
    with np.errstate(divide="ignore"):
        close(Tensor(p).logit(), np.log(p.astype(F64) / (1 - p)), rtol=1e-6)
    e = 1e-3
    pc = np.clip(p.astype(F64), e, 1 - e)
    close(Tensor(p).logit(e), np.log(pc / (1 - pc)), rtol=1e-5)
    n = np.array([np.nan, np.inf, -np.inf, 1.5], F32)
    same(Tensor(n).nan_to_num(), np.nan_to_num(n))
    same(
        Tensor(n).nan_to_num(2.0, 10.0, -10.0), np.nan_to_num(n, nan=2.0, posinf=10.0, neginf=-10.0)
    )
    same(Tensor(n).half().nan_to_num().float(), np.array([0, 65504, -65504, 1.5], F32))
    with pytest.raises(TypeError, match="frac is not defined for int32"):
        ia.frac()
    with pytest.raises(TypeError, match="fmod is not defined for bool"):
        Tensor([True]).fmod(Tensor([True]))


def test_elementwise_fuse_and_grad():
    x, y = Tensor(r(8, 8)), Tensor(r(8, 8))
    out = x.logaddexp(y) + x.hypot(y) + x.logit(0.1) + x.frac()
    assert kernels(out) == 1
    a = np.array([[0.3, -1.2], [2.0, 0.7]])
    b = np.array([[1.1, 0.4], [-0.5, 0.2]])
    check_grad(lambda s, t: s.logaddexp(t) + s.logaddexp2(t) * 2 + s.hypot(t) * 3, a, b)
    check_grad(lambda s, t, u: s.addcmul(t, u, value=0.5).addcdiv(t, u.exp()), a, b, a + b)


# ---------------------------------------------------------------------------
# reductions
# ---------------------------------------------------------------------------


def test_nan_reductions_and_pairs():
    a = r(4, 5).astype(F64)
    a[0, 1] = a[2, 3] = a[3, :] = np.nan
    x = Tensor(a.astype(F32))
    close(x.nansum(), np.nansum(a), rtol=1e-5)
    close(x.nansum(1), np.nansum(a, 1), rtol=1e-5)
    close(x.nansum(dim=0, keepdim=True), np.nansum(a, 0, keepdims=True), rtol=1e-5)
    with np.errstate(invalid="ignore"), pytest.warns(RuntimeWarning):
        close(x.nanmean(dim=1), np.nanmean(a, 1), rtol=1e-5)
    same(Tensor([1, 2], dtype=mlfuse.int32).nansum(), 3)
    with pytest.raises(TypeError, match="nanmean needs a float tensor"):
        Tensor([1, 2]).nanmean()
    b = r(3, 6).astype(F64)
    v, m = Tensor(b).var_mean(1)
    close(v, b.var(1, ddof=1), rtol=1e-5)
    close(m, b.mean(1), rtol=1e-5, atol=1e-6)
    s, m = Tensor(b).std_mean(dim=0, correction=0, keepdim=True)
    close(s, b.std(0, keepdims=True), rtol=1e-5)
    close(m, b.mean(0, keepdims=True), rtol=1e-5, atol=1e-6)
    s, m = Tensor(b).std_mean(unbiased=False)
    close(s, b.std(), rtol=1e-5)


def test_isclose_allclose_equal():
    a = np.array([1.0, np.nan, np.inf, -np.inf, 1e-9, 100.0], F32)
    b = np.array([1.0 + 1e-6, np.nan, np.inf, np.inf, 0.0, 100.1], F32)
    same(Tensor(a).isclose(Tensor(b)), np.isclose(a, b))
    same(Tensor(a).isclose(Tensor(b), equal_nan=True), np.isclose(a, b, equal_nan=True))
    same(Tensor(a).isclose(Tensor(b), rtol=1e-2), np.isclose(a, b, rtol=1e-2))
    same(Tensor([1, 2]).isclose(Tensor([1, 3])), [True, False])
    assert Tensor([1.0, 2.0]).allclose(Tensor([1.0, 2.0 + 1e-7]))
    assert not Tensor([1.0, 2.0]).allclose(Tensor([1.0, 2.1]))
    assert not Tensor([np.nan]).allclose(Tensor([np.nan]))
    assert Tensor([np.nan]).allclose(Tensor([np.nan]), equal_nan=True)
    assert Tensor([1, 2]).equal(Tensor([1, 2]))
    assert not Tensor([1, 2]).equal(Tensor([1, 3]))
    assert not Tensor([1, 2]).equal(Tensor([[1, 2]]))


# ---------------------------------------------------------------------------
# indexed writes
# ---------------------------------------------------------------------------


def test_renorm():
    a = r(4, 3, 2).astype(F64) * 3
    for p, d, maxnorm in ((2, 0, 1.0), (1, 1, 2.0), (3, -1, 1.5)):
        want = a.copy()
        moved = np.moveaxis(want, d, 0)
        for i in range(moved.shape[0]):
            nrm = (np.abs(moved[i]) ** p).sum() ** (1 / p)
            if nrm > maxnorm:
                moved[i] *= maxnorm / (nrm + 1e-7)
        close(Tensor(a.astype(F32)).renorm(p, d, maxnorm), want, rtol=1e-5)
    with pytest.raises(ValueError, match="renorm: p must be a positive number"):
        Tensor(a).renorm(0, 0, 1.0)


def test_index_add_copy_fill():
    a = r(5, 3)
    src = r(4, 3)
    idx = np.array([0, 2, 2, -1])
    want = a.astype(F64).copy()
    np.add.at(want, idx, 2.0 * src)
    close(Tensor(a).index_add(0, Tensor(idx), Tensor(src), alpha=2.0), want)
    idx2 = np.array([4, 0, 1, 3])
    want = a.copy()
    want[idx2] = src
    same(Tensor(a).index_copy(0, Tensor(idx2), Tensor(src)), want)
    want = a.copy()
    want[:, [0, 2]] = -1.0
    same(Tensor(a).index_fill(1, Tensor([0, 2, 0]), -1.0), want)
    want = a.copy()
    want[:, 1] = 0.0
    same(Tensor(a).index_fill(-1, Tensor(1), 0.0), want)
    with pytest.raises(ValueError, match=r"index_add: source \(3, 3\) must have shape \(4, 3\)"):
        Tensor(a).index_add(0, Tensor(idx), Tensor(r(3, 3)))
    with pytest.raises(IndexError, match="index 7 is out of bounds for dim 0 with size 5"):
        Tensor(a).index_copy(0, Tensor([7]), Tensor(r(1, 3)))
    check_grad(lambda s, v: s.index_add(1, Tensor([1, 1]), v), r(2, 3), r(2, 2))


def _np_scatter_reduce(a, dim, idx, src, reduce, include_self):
    out = a.astype(F64).copy()
    groups: dict = {}
    for i in np.ndindex(idx.shape):
        tgt = list(i)
        tgt[dim] = idx[i]
        groups.setdefault(tuple(tgt), []).append(float(src[i]))
    for t, vals in groups.items():
        vals = vals + ([float(a[t])] if include_self else [])
        f = {"sum": np.sum, "prod": np.prod, "mean": np.mean, "amax": np.max, "amin": np.min}
        out[t] = f[reduce](vals)
    return out


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce(reduce, include_self):
    a = r(3, 4)
    src = r(3, 5)
    idx = np.array([[0, 1, 1, 3, 1], [2, 2, 2, 0, 0], [3, 3, 0, 0, 1]])
    got = Tensor(a).scatter_reduce(1, Tensor(idx), Tensor(src), reduce, include_self=include_self)
    close(got, _np_scatter_reduce(a, 1, idx, src, reduce, include_self), rtol=1e-5)


def test_scatter_reduce_int_mean_and_errors():
    a = np.array([10, 1, 7], np.int64)
    got = Tensor(a).scatter_reduce(0, Tensor([0, 0, 2]), Tensor([1, 2, -4]), "mean")
    same(got, [4, 1, 1])  # (10 + 1 + 2) // 3, untouched, (7 - 4) // 2
    with pytest.raises(ValueError, match="reduce must be one of 'sum'.* got 'max'"):
        Tensor(a).scatter_reduce(0, Tensor([0]), Tensor([1]), "max")
    with pytest.raises(ValueError, match="must have the rank of the input"):
        Tensor(a).scatter_reduce(0, Tensor([[0]]), Tensor([1]), "sum")
    check_grad(
        lambda s, v: s.scatter_reduce(0, Tensor([[0, 1], [0, 1]]), v, "amax"),
        np.array([[-5.0, 0.3], [0.2, 1.0]]),
        np.array([[0.5, -0.7], [0.25, 0.9]]),
    )


def test_put():
    a = r(3, 4)
    want = a.copy().reshape(-1)
    want[[0, 11, 5]] = [1.0, 2.0, 3.0]
    same(Tensor(a).put(Tensor([0, -1, 5]), Tensor([1.0, 2.0, 3.0])), want.reshape(3, 4))
    want = a.astype(F64).copy().reshape(-1)
    np.add.at(want, [1, 1, 2], [1.0, 2.0, 3.0])
    close(
        Tensor(a).put(Tensor([[1, 1, 2]]), Tensor([1.0, 2.0, 3.0]), accumulate=True),
        want.reshape(3, 4),
    )
    with pytest.raises(ValueError, match="put: source has 2 elements, index 3"):
        Tensor(a).put(Tensor([0, 1, 2]), Tensor([1.0, 2.0]))
    with pytest.raises(IndexError, match="index 12 is out of bounds"):
        Tensor(a).put(Tensor([12]), Tensor([1.0]))


# ---------------------------------------------------------------------------
# strided views and distances
# ---------------------------------------------------------------------------


def _np_unfold(a, d, size, step):
    n = a.shape[d]
    wins = [np.take(a, range(i, i + size), axis=d) for i in range(0, n - size + 1, step)]
    return np.moveaxis(np.stack(wins, axis=d), d + 1, -1)


def test_unfold():
    a = np.arange(2 * 9 * 3, dtype=F32).reshape(2, 9, 3)
    for d, size, step in (
        (1, 3, 1),
        (1, 3, 2),
        (1, 2, 4),
        (1, 9, 1),
        (1, 1, 1),
        (-1, 2, 1),
        (0, 2, 2),
        (1, 4, 3),
    ):
        same(Tensor(a).unfold(d, size, step), _np_unfold(a, d % 3, size, step))
    same(Tensor.arange(7).unfold(0, 3, 2), [[0, 1, 2], [2, 3, 4], [4, 5, 6]])
    x = Tensor(a)
    assert kernels(x.unfold(1, 3, 1).sum(-1)) == 1
    with pytest.raises(ValueError, match=r"unfold: size must be in 0..9"):
        x.unfold(1, 10, 1)
    assert x.unfold(1, 0, 4).shape == (a.shape[0], 3, *a.shape[2:], 0)  # PyTorch: empty windows
    with pytest.raises(ValueError, match="step must be a positive int"):
        x.unfold(1, 2, 0)
    check_grad(lambda s: s.unfold(0, 3, 1) * Tensor(np.arange(9.0).reshape(3, 3)), r(5))


def test_as_strided():
    a = np.arange(24, dtype=F32)
    x = Tensor(a.reshape(4, 6))
    st = np.lib.stride_tricks.as_strided
    isz = a.itemsize
    for size, stride, off in (
        ((2, 3), (6, 1), 0),
        ((2, 2), (1, 6), 1),  # transposed
        ((3, 2), (8, 2), 3),  # every other element of rows 8 apart
        ((4, 3), (0, 2), 2),  # broadcast rows
        ((2, 2, 2), (12, 3, 1), 1),
        ((5,), (4,), 3),
        ((), (), 7),
    ):
        want = st(a[off:], tuple(size), tuple(s * isz for s in stride))
        same(x.as_strided(size, stride, off), want)
    with pytest.raises(ValueError, match="not expressible as a view"):
        x.as_strided((3, 3), (1, 1))
    with pytest.raises(ValueError, match="reach element 24 of a tensor of 24"):
        x.as_strided((2, 2), (12, 1), 11)
    with pytest.raises(ValueError, match="2 sizes but 1 strides"):
        x.as_strided((2, 2), (1,))


def test_cdist():
    a, b = r(2, 5, 3), r(2, 4, 3)
    a64, b64 = a.astype(F64), b.astype(F64)
    diff = a64[:, :, None, :] - b64[:, None, :, :]
    for p in (2.0, 1.0, 3.0, 0.0, math.inf):
        if p == math.inf:
            want = np.abs(diff).max(-1)
        elif p == 0:
            want = (diff != 0).sum(-1).astype(F64)
        else:
            want = (np.abs(diff) ** p).sum(-1) ** (1 / p)
        close(Tensor(a).cdist(Tensor(b), p=p), want, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match=r"cdist needs \(..., P, M\)"):
        Tensor(a).cdist(Tensor(r(4, 2)))
    check_grad(lambda s, t: s.cdist(t), r(3, 2), r(2, 2))


# ---------------------------------------------------------------------------
# sorting and searching
# ---------------------------------------------------------------------------


def _np_sort(a, axis, descending):
    """Stable sort with NaN largest; PyTorch's descending puts NaN first and keeps
    equal elements in index order."""
    moved = np.moveaxis(a, axis, -1)
    rows = moved.reshape(-1, moved.shape[-1])

    def key(row, j):
        nan = bool(np.isnan(row[j])) if row.dtype.kind == "f" else False
        if descending:
            return (not nan, 0.0 if nan else -float(row[j]), j)
        return (nan, 0.0 if nan else float(row[j]), j)

    idx = [sorted(range(len(row)), key=lambda j, row=row: key(row, j)) for row in rows]
    i = np.moveaxis(np.array(idx, dtype=np.int64).reshape(moved.shape), -1, axis)
    return np.take_along_axis(a, i, axis), i


def test_sort_argsort_stable_nan_descending():
    a = np.array([[3, 1, 2, 1, np.nan, 0, 1], [5, 5, -1, 2, np.nan, 2, 7]], F32)
    b = RNG.integers(0, 4, (3, 5, 6)).astype(F32)  # many ties
    for arr in (a, b, r(7), RNG.integers(-3, 3, (4, 5)).astype(np.int32)):
        for dim in range(-arr.ndim, arr.ndim):
            for desc in (False, True):
                v, i = Tensor(arr).sort(dim, descending=desc)
                wv, wi = _np_sort(arr, dim, desc)
                same(i, wi)
                same(v, wv)
                same(Tensor(arr).argsort(dim=dim, descending=desc), wi)
    s = Tensor(a).sort(stable=True)
    assert s.values.shape == s.indices.shape == (2, 7) and s.indices.dtype == mlfuse.int64
    same(Tensor([True, False, True]).sort().values, [False, True, True])
    same(Tensor(b[0]).msort(), np.sort(b[0], axis=0))
    same(Tensor(5.0).sort().values, 5.0)
    assert kernels(*Tensor(r(4, 16)).sort()) <= 3  # ranks, their inverse, the gathered values
    check_grad(lambda x: x.sort(descending=True).values * Tensor([1.0, 2.0, 3.0]), [0.3, -1.0, 2.0])


def test_topk_kthvalue():
    a = np.array([[3, 1, 2, 1, np.nan, 0], [5, 5, -1, 2, 2, 7]], F32)
    n = a.shape[1]
    for k in (1, 3, n):
        for largest in (True, False):
            v, i = Tensor(a).topk(k, largest=largest)
            wv, wi = _np_sort(a, 1, largest)
            same(i, wi[:, :k])
            same(v, wv[:, :k])
    v, i = Tensor(a.T.copy()).topk(2, dim=0)
    same(i, _np_sort(a.T.copy(), 0, True)[1][:2])
    c = r(4, 7)
    for k in (1, 4, 7):
        v, i = Tensor(c).kthvalue(k, dim=1)
        same(v, np.sort(c, 1)[:, k - 1])
        same(i, np.argsort(c, 1, kind="stable")[:, k - 1])
    v, i = Tensor(c).kthvalue(2, 0, keepdim=True)
    same(v, np.sort(c, 0)[1:2])
    with pytest.raises(ValueError, match=r"topk: k must be an int in 0..6"):
        Tensor(a).topk(7)
    with pytest.raises(ValueError, match=r"kthvalue: k must be an int in 1..7"):
        Tensor(c).kthvalue(0)
    check_grad(lambda x: x.topk(2).values * Tensor([1.0, 3.0]), [[0.5, -1.0, 2.0, 0.1]])


def test_median_nanmedian():
    c = r(5, 6)
    v, i = Tensor(c).median(1)
    lower = np.sort(c, 1)[:, (6 - 1) // 2]
    same(v, lower)
    same(Tensor(c).gather(1, i.unsqueeze(1)).squeeze(1), lower)
    v, i = Tensor(c).median(dim=0, keepdim=True)
    same(v, np.sort(c, 0)[2:3])
    same(Tensor(c).median(), np.sort(c.reshape(-1))[(30 - 1) // 2])
    a = np.array([[1, np.nan, 3, 0], [4, 2, 9, 1], [np.nan, np.nan, np.nan, np.nan]], F32)
    v, i = Tensor(a).median(1)
    same(v, [np.nan, 2, np.nan])
    same(i, [1, 1, 0])
    v, i = Tensor(a).nanmedian(1)
    same(v, [1, 2, np.nan])
    same(i[:2], [0, 1])
    assert np.isnan(Tensor(a).median().item())
    same(Tensor(a[:2]).nanmedian(), 2.0)
    same(Tensor([3, 1, 2, 2], dtype=mlfuse.int32).median(), 2)


def test_quantile():
    c = r(4, 9).astype(F64)
    for q in (0.0, 0.3, 0.5, 1.0, [0.1, 0.25, 0.9]):
        for mode in ("linear", "lower", "higher", "midpoint", "nearest"):
            close(
                Tensor(c.astype(F32)).quantile(q, dim=1, interpolation=mode),
                np.quantile(c.astype(F32), q, axis=1, method=mode),
                rtol=1e-6,
            )
    close(Tensor(c).quantile(0.4), np.quantile(c, 0.4), rtol=1e-12)
    close(
        Tensor(c).quantile(Tensor([0.2, 0.8]), dim=0, keepdim=True),
        np.quantile(c, [0.2, 0.8], axis=0, keepdims=True),
        rtol=1e-12,
    )
    close(Tensor(c).quantile([0.5], keepdim=True), np.quantile(c, [0.5], keepdims=True))
    c[1, 3] = np.nan
    got = Tensor(c).quantile(0.5, dim=1).numpy()
    assert np.isnan(got[1]) and not np.isnan(got[[0, 2, 3]]).any()
    with pytest.raises(ValueError, match=r"q must be in \[0, 1\]"):
        Tensor(c).quantile(1.5)
    with pytest.raises(TypeError, match="quantile needs a float tensor"):
        Tensor([1, 2]).quantile(0.5)
    with pytest.raises(ValueError, match="interpolation must be one of"):
        Tensor(c).quantile(0.5, interpolation="cubic")


def test_searchsorted_bucketize():
    seq = np.array([1.0, 2.0, 2.0, 3.0, 5.0], F32)
    vals = np.array([[0.0, 2.0, 2.5], [5.0, 6.0, np.nan]], F32)
    for side in ("left", "right"):
        want = np.searchsorted(seq, vals, side=side)
        same(Tensor(seq).searchsorted(Tensor(vals), side=side), want)
        same(Tensor(seq).searchsorted(Tensor(vals), right=side == "right"), want)
    same(Tensor(seq).searchsorted(2.0), 1)
    same(Tensor(seq).searchsorted(Tensor([2.0]), out_int32=True), np.array([1], np.int32))
    rows = np.sort(r(3, 6), 1)
    v = r(3, 4)
    want = np.stack([np.searchsorted(rows[k], v[k]) for k in range(3)])
    same(Tensor(rows).searchsorted(Tensor(v)), want)
    unsorted = np.array([3.0, 1.0, 2.0], F32)
    order = np.argsort(unsorted)
    same(Tensor(unsorted).searchsorted(Tensor([1.5, 2.5]), sorter=Tensor(order)), [1, 2])
    x = r(10)
    edges = np.array([-1.0, 0.0, 0.5, 1.0], F32)
    same(Tensor(x).bucketize(Tensor(edges)), np.digitize(x, edges, right=True))
    same(Tensor(x).bucketize(Tensor(edges), right=True), np.digitize(x, edges, right=False))
    with pytest.raises(ValueError, match="leading dims of the sequence"):
        Tensor(rows).searchsorted(Tensor(r(2, 4)))
    with pytest.raises(ValueError, match="side must be 'left' or 'right'"):
        Tensor(seq).searchsorted(Tensor(vals), side="middle")
    with pytest.raises(ValueError, match="boundaries must be 1-d"):
        Tensor(x).bucketize(Tensor(rows))


def test_bincount_histc():
    x = np.array([0, 3, 3, 1, 7, 3])
    same(Tensor(x).bincount(), np.bincount(x))
    same(Tensor(x).bincount(minlength=10), np.bincount(x, minlength=10))
    w = r(6)
    got = Tensor(x).bincount(Tensor(w))
    assert got.dtype == mlfuse.float32
    close(got, np.bincount(x, w.astype(F64)))
    assert Tensor(x).bincount(Tensor(x)).dtype == mlfuse.float64
    same(Tensor(np.zeros(0, np.int64)).bincount(), np.zeros(0, np.int64))
    with pytest.raises(ValueError, match="values must be non-negative, got -2"):
        Tensor([1, -2]).bincount()
    with pytest.raises(ValueError, match="bincount needs a 1-d integer tensor"):
        Tensor([1.0]).bincount()
    d = np.array([0.05, 0.1, 0.35, 0.5, 0.99, 1.0, -0.2, 1.3, np.nan], F32)
    same(Tensor(d).histc(4, 0, 1), np.array([2, 1, 1, 2], F32))
    e = np.array([1.0, 2.0, 2.5, 4.0], F32)
    same(Tensor(e).histc(3), np.histogram(e, 3)[0].astype(F32))
    same(Tensor([2.0, 2.0]).histc(2), [0.0, 2.0])  # one value: the range [1, 3]
    with pytest.raises(ValueError, match="bins must be a positive int"):
        Tensor(e).histc(0)


def _erfinv_ref(x: float) -> float:
    if abs(x) == 1:
        return math.copysign(math.inf, x)
    lo, hi = -10.0, 10.0
    for _ in range(200):
        mid = (lo + hi) / 2
        below = (
            (math.erf(mid) < x)
            if abs(x) <= 0.5
            else ((1 - x) < math.erfc(mid) if x > 0 else math.erfc(-mid) < 1 + x)
        )
        lo, hi = (mid, hi) if below else (lo, mid)
    return (lo + hi) / 2


def test_erfinv():
    x = np.concatenate([np.linspace(-1, 1, 201), [1 - 1e-7, -(1 - 6e-8), 1e-30, 0.5, 0.5000001]])
    x32 = np.concatenate([x, [1.5, np.nan, -0.0]]).astype(F32)
    got = Tensor(x32).erfinv().numpy()  # one call: each builds a large graph
    want = np.array([_erfinv_ref(float(v)) for v in x32[: x.size]])
    ulp = np.spacing(np.abs(want).astype(F32))
    finite = np.isfinite(want)
    assert (np.abs(got[: x.size][finite] - want[finite]) <= 2 * ulp[finite]).all()
    same(Tensor(got[[0, x.size - 6]]), [-np.inf, np.inf])
    assert np.isnan(got[-3:-1]).all()
    assert got[-1] == 0 and np.signbit(got[-1])
    x64 = np.array([-0.9999999999, -0.3, 0.01, 0.7, 0.999999999999])
    want = np.array([_erfinv_ref(float(v)) for v in x64])
    np.testing.assert_allclose(Tensor(x64).erfinv().numpy(), want, rtol=1e-13)
    # the gradient: 1 / erf'(erfinv(x))
    (g,) = mlfuse.grad(lambda t: t.erfinv().sum())(Tensor(x64))
    np.testing.assert_allclose(g.numpy(), math.sqrt(math.pi) / 2 * np.exp(want**2), rtol=1e-12)


# ---------------------------------------------------------------------------
# data-dependent shapes (computed on the host)
# ---------------------------------------------------------------------------


def test_nonzero_argwhere_masked_select():
    a = np.array([[0, 1.5, 0], [2, 0, -1]], F32)
    same(Tensor(a).nonzero(), np.argwhere(a))
    assert Tensor(a).nonzero().dtype == mlfuse.int64
    for got, want in zip(Tensor(a).nonzero(as_tuple=True), np.nonzero(a)):
        same(got, want)
    same(Tensor(a).argwhere(), np.argwhere(a))
    same(Tensor(np.zeros((2, 3))).nonzero(), np.zeros((0, 2), np.int64))
    x = r(3, 4)
    m = x > 0
    same(Tensor(x).masked_select(Tensor(m)), x[m])
    row = np.array([True, False, True, False])
    same(Tensor(x).masked_select(Tensor(row)), x[:, row].reshape(-1))
    with pytest.raises(TypeError, match="mask must be a bool tensor, got int64"):
        Tensor(x).masked_select(Tensor([1, 0, 1, 0]))
    with pytest.raises(ValueError, match="do not broadcast"):
        Tensor(x).masked_select(Tensor([True, False]))
    g = np.zeros_like(x, dtype=F64)
    g[m] = 1.0
    (got,) = mlfuse.grad(lambda t: t.masked_select(Tensor(m)).sum())(Tensor(x.astype(F64)))
    same(got, g)


def test_unique_and_unique_consecutive():
    a = np.array([[3, 1, 2], [1, 3, 3]], np.int64)
    same(Tensor(a).unique(), np.unique(a))
    vals, inv, cnt = Tensor(a).unique(return_inverse=True, return_counts=True)
    wv, wi, wc = np.unique(a, return_inverse=True, return_counts=True)
    same(vals, wv)
    same(inv, wi.reshape(a.shape))
    same(cnt, wc)
    rows = np.array([[1, 2], [0, 5], [1, 2]], F32)
    v, i = Tensor(rows).unique(dim=0, return_inverse=True)
    same(v, [[0, 5], [1, 2]])
    same(i, [1, 0, 1])
    f = Tensor([np.nan, 1.0, np.nan]).unique()
    assert f.shape == (3,) and f.dtype == mlfuse.float32  # NaN are each distinct
    c = Tensor([1, 1, 2, 2, 3, 1, 1, 2])
    same(c.unique_consecutive(), [1, 2, 3, 1, 2])
    v, i, n = c.unique_consecutive(return_inverse=True, return_counts=True)
    same(i, [0, 0, 1, 1, 2, 3, 3, 4])
    same(n, [2, 2, 1, 2, 1])


def test_mode():
    a = np.array([[1, 2, 2, 3, 3], [5, 4, 4, 5, 9], [7, 7, 7, 7, 7]], np.int32)
    v, i = Tensor(a).mode()
    same(v, [2, 4, 7])  # the smallest of the most frequent
    same(i, [2, 2, 4])  # its last index
    v, i = Tensor(a.T.copy().astype(F32)).mode(0, keepdim=True)
    same(v, np.array([[2, 4, 7]], F32))
    same(i, [[2, 2, 4]])
    assert kernels(Tensor(a).mode().values) <= 3


# ---------------------------------------------------------------------------
# einsum
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "eq, shapes",
    [
        ("ij,jk->ik", [(3, 4), (4, 5)]),
        ("ij,jk", [(3, 4), (4, 5)]),
        ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
        ("ii", [(4, 4)]),
        ("ii->i", [(4, 4)]),
        ("ij->ji", [(3, 4)]),
        ("ij->", [(3, 4)]),
        ("i,i->", [(5,), (5,)]),
        ("i,j->ij", [(3,), (4,)]),
        ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),
        ("...ij->...ji", [(2, 3, 4)]),
        ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
        ("iij->j", [(3, 3, 2)]),
        ("ab,ab->a", [(1, 3), (4, 3)]),
        ("i...->...", [(3, 2, 2)]),
    ],
)
def test_einsum_against_numpy(eq, shapes):
    arrs = [r(*s) for s in shapes]
    want = np.einsum(eq, *[a.astype(F64) for a in arrs])
    close(mlfuse.einsum(eq, *[Tensor(a) for a in arrs]), want, rtol=1e-5, atol=1e-5)


def test_einsum_forms_errors_fusion_grad():
    a, b = r(3, 4), r(4, 5)
    close(Tensor.einsum("ij,jk->ik", [Tensor(a), Tensor(b)]), a.astype(F64) @ b, rtol=1e-5)
    i = Tensor(np.arange(6).reshape(2, 3).astype(np.int32))
    got = mlfuse.einsum("ij,kj->ik", i, i)
    assert got.dtype == mlfuse.int32
    same(got, np.einsum("ij,kj->ik", np.arange(6).reshape(2, 3), np.arange(6).reshape(2, 3)))
    assert kernels(mlfuse.einsum("bij,bjk->bik", Tensor(r(2, 3, 4)), Tensor(r(2, 4, 5)))) == 1
    with pytest.raises(ValueError, match="has 1 operand terms for 2 operands"):
        mlfuse.einsum("ij", Tensor(a), Tensor(b))
    with pytest.raises(ValueError, match=r"term 'ijk' names 3 dims but operand has shape \(3, 4\)"):
        mlfuse.einsum("ijk,jk", Tensor(a), Tensor(b))
    with pytest.raises(ValueError, match="label 'j' has sizes 4 and 5"):
        mlfuse.einsum("ij,kj", Tensor(a), Tensor(b))
    with pytest.raises(ValueError, match="output label 'z' is in no input"):
        mlfuse.einsum("ij,jk->iz", Tensor(a), Tensor(b))
    with pytest.raises(ValueError, match="bad term"):
        mlfuse.einsum("i1,jk", Tensor(a), Tensor(b))
    with pytest.raises(ValueError, match="einsum needs at least one operand"):
        mlfuse.einsum("ij")
    check_grad(lambda x, y: mlfuse.einsum("ij,jk->ki", x, y), r(2, 3), r(3, 2))
    check_grad(lambda x: mlfuse.einsum("ii->", x), r(3, 3))
    # an output without '...' sums the ellipsis dims (PyTorch's rule; numpy refuses)
    c, d = r(3, 4, 5, 2), r(3, 4, 5, 2)
    close(
        mlfuse.einsum("ij...,ij...->ij", Tensor(c), Tensor(d)),
        (c.astype(F64) * d).sum((2, 3)),
        rtol=1e-5,
    )


# ---------------------------------------------------------------------------
# PyTorch's method names for the operators
# ---------------------------------------------------------------------------


def test_operator_method_names():
    a, b = r(3, 4), r(3, 4) + 3
    x, y = Tensor(a), Tensor(b)
    a64, b64 = a.astype(F64), b.astype(F64)
    close(x.add(y, alpha=2), a64 + 2 * b64)
    close(x.sub(y), a64 - b64)
    close(x.mul(y), a64 * b64)
    close(x.div(y), a64 / b64)
    close(x.true_divide(2), a64 / 2)
    close(x.div(y, rounding_mode="floor"), np.floor(a64 / b64))
    close(x.div(y, rounding_mode="trunc"), np.trunc(a64 / b64))
    close(x.floor_divide(y), np.floor(a64 / b64))
    ia, ib = np.array([-7, 7, -7, 7, 6, -6]), np.array([2, 2, -2, -2, 3, 4])
    same(Tensor(ia).div(Tensor(ib), rounding_mode="trunc"), np.trunc(ia / ib).astype(np.int64))
    for name, op in (
        ("eq", np.equal),
        ("ne", np.not_equal),
        ("lt", np.less),
        ("le", np.less_equal),
        ("gt", np.greater),
        ("ge", np.greater_equal),
        ("greater", np.greater),
        ("less_equal", np.less_equal),
        ("not_equal", np.not_equal),
    ):
        same(getattr(x, name)(Tensor(a[:, :1])), op(a, a[:, :1]))
    same(x.absolute(), np.abs(a))
    same(x.clamp_min(0), np.maximum(a, 0))
    same(x.clamp_max(0.5), np.minimum(a, F32(0.5)))
    close(Tensor(np.abs(a) + 1e-3).log10(), np.log10(np.abs(a64) + 1e-3), rtol=1e-6)
    p = np.array([0.0, 0.0, 2.0, 1.5], F32)
    q = np.array([0.0, np.nan, 3.0, 0.5], F32)
    close(Tensor(p).xlogy(Tensor(q)), [0.0, np.nan, 2 * np.log(3.0), 1.5 * np.log(0.5)], rtol=1e-6)
    s = np.array([-0.0, 0.0, -1.0, 2.0, -np.inf], F32)
    same(Tensor(s).signbit(), np.signbit(s))
    same(Tensor(np.ones(5, F32)).copysign(Tensor(s)), np.copysign(np.ones(5, F32), s))
    same(Tensor([-1, 0, 2]).signbit(), [True, False, False])
    assert x.dim() == 2 and x.is_floating_point() and not Tensor([1]).is_floating_point()
    with pytest.raises(ValueError, match="rounding_mode must be None, 'trunc' or 'floor'"):
        x.div(y, rounding_mode="round")
