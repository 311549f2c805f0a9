"""Edge cases of PyTorch's tensor functions that its own OpInfo samples exercise:
0-d operands of the indexing functions, empty reductions, PyTorch's argument
orders and spellings, broadcasting rules, result shapes of degenerate inputs, the
errors PyTorch raises, and gradients where a formula has a special region. Values
against float64 numpy."""

from __future__ import annotations

import math

import numpy as np
import pytest

import mlfuse
from mlfuse import Tensor
from mlfuse import linalg as LA
from mlfuse import special

from gradcheck import numeric_grad

F64 = np.float64
RNG = np.random.default_rng(11)


def r(*shape) -> np.ndarray:
    return RNG.standard_normal(shape)


def close(t: Tensor, want, rtol=1e-9, atol=1e-12):
    got = np.asarray(t.numpy())
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got.astype(F64), want.astype(F64), rtol=rtol, atol=atol)


# -- argument orders and spellings -------------------------------------------------------
def test_polygamma_takes_the_order_first():
    x = np.array([1.0, 2.0, 0.5])
    trigamma_1 = math.pi**2 / 6
    got = mlfuse.polygamma(1, Tensor(x)).numpy()
    assert got[0] == pytest.approx(trigamma_1, rel=1e-12)
    assert got[1] == pytest.approx(trigamma_1 - 1, rel=1e-12)
    close(mlfuse.polygamma(1, Tensor(x)), Tensor(x).polygamma(1).numpy(), 0, 0)


def test_var_and_std_take_unbiased_positionally_and_correction_none():
    a = r(4, 5)
    close(Tensor(a).var(False), a.var())
    close(mlfuse.var(Tensor(a), True), a.var(ddof=1))
    close(Tensor(a).std(dim=None, correction=None), a.std(ddof=1))
    v, m = Tensor(a).var_mean(True)
    close(v, a.var(ddof=1))
    close(m, a.mean())


def test_cast_methods_take_memory_format_and_to_takes_copy_positionally():
    x = Tensor(r(2, 3, 4, 5))
    y = x.float(memory_format=mlfuse.channels_last)
    assert y.dtype == mlfuse.float32 and y.stride() == (60, 1, 15, 3)
    assert x.long(memory_format=mlfuse.preserve_format).dtype == mlfuse.int64
    z = x.to("cpu", mlfuse.float64, False, True)
    assert z is not x and z.dtype == mlfuse.float64


def test_cdist_accepts_compute_mode():
    a, b = r(3, 2), r(4, 2)
    want = np.sqrt(((a[:, None] - b[None]) ** 2).sum(-1))
    close(Tensor(a).cdist(Tensor(b), 2.0, "use_mm_for_euclid_dist"), want)
    with pytest.raises(ValueError, match="cdist: compute_mode must be one of"):
        Tensor(a).cdist(Tensor(b), compute_mode="fast")


# -- 0-d and empty operands ------------------------------------------------------------------
def test_indexing_functions_on_a_0d_tensor():
    t = Tensor(3.0)
    assert t.index_select(0, Tensor([0])).shape == ()
    assert t.scatter_add(0, Tensor(0), Tensor(2.0)).item() == 5.0
    assert t.scatter(0, Tensor(0), Tensor(2.0)).item() == 2.0
    assert t.index_reduce(0, Tensor([0]), Tensor(5.0), "prod").item() == 15.0
    with pytest.raises(IndexError, match="dim"):
        t.index_select(1, Tensor([0]))


def test_normalizations_of_an_empty_axis():
    t = Tensor(np.zeros((5, 0, 0)))
    assert t.softmax(-1).shape == (5, 0, 0) and t.log_softmax(-1).shape == (5, 0, 0)


def test_unfold_of_a_0d_tensor_is_one_window():
    assert Tensor(3.0).unfold(0, 1, 1).tolist() == [3.0]
    assert Tensor(3.0).unfold(0, 0, 1).shape == (0,)


def test_cat_skips_1d_empty_tensors_but_promotes_with_them():
    a = r(2, 3)
    out = mlfuse.cat([Tensor(np.zeros(0, np.float32)), Tensor(a)], dim=1)
    close(out, a)
    mixed = mlfuse.cat([Tensor(np.zeros(0)), Tensor(a.astype(np.float32))])
    assert mixed.dtype == mlfuse.float64 and mixed.shape == (2, 3)


def test_combinations_of_too_few_elements_is_0_by_r():
    assert mlfuse.combinations(Tensor([1.0]), 2).shape == (0, 2)
    assert mlfuse.combinations(Tensor([1.0, 2.0]), 4).shape == (0, 4)
    assert mlfuse.combinations(Tensor([1.0, 2.0, 3.0]), 2).tolist() == [
        [1.0, 2.0], [1.0, 3.0], [2.0, 3.0]
    ]  # fmt: skip


def test_quantile_of_a_0d_tensor_keeps_0d():
    assert Tensor(2.5).quantile(0.5, dim=0, keepdim=True).shape == ()


def test_cov_of_one_variable_is_0d_and_weights_are_checked():
    a = r(1, 6)
    got = Tensor(a).cov()
    assert got.shape == () and got.item() == pytest.approx(np.cov(a), rel=1e-12)
    assert Tensor(a).corrcoef().shape == ()
    with pytest.raises(ValueError, match="fweights cannot be negative"):
        Tensor(a).cov(fweights=Tensor([1, 2, -1, 1, 1, 1]))
    with pytest.raises(TypeError, match="fweights must be integers"):
        Tensor(a).cov(fweights=Tensor(np.ones(6)))


def test_vander_of_a_0d_tensor_and_ldl_of_an_empty_matrix():
    assert LA.vander(Tensor(3.0), N=2).tolist() == [[1.0, 3.0]]
    ld, piv = LA.ldl_factor(Tensor(np.zeros((0, 0))))
    assert ld.shape == (0, 0) and piv.shape == (0,)


def test_histogram_of_a_0d_tensor_with_a_weight():
    h, edges = mlfuse.histogram(Tensor(0.5), 2, weight=Tensor(3.0))
    assert h.tolist() == [0.0, 3.0] and edges.shape == (3,)


# -- broadcasting ----------------------------------------------------------------------------
def test_take_along_dim_broadcasts_off_the_dim_and_flattens_without_one():
    a = r(5, 4)
    idx = np.array([[0, 3]])
    close(Tensor(a).take_along_dim(Tensor(idx), 1), np.take_along_axis(a, np.repeat(idx, 5, 0), 1))
    b = r(1, 4)
    idx2 = np.array([[0, 1], [2, 3], [3, 0]])
    close(
        Tensor(b).take_along_dim(Tensor(idx2), 1), np.take_along_axis(np.repeat(b, 3, 0), idx2, 1)
    )
    close(Tensor(a).take_along_dim(Tensor([3, 19])), a.reshape(-1)[[3, 19]])
    with pytest.raises(ValueError, match="take_along_dim: indices"):
        Tensor(a).take_along_dim(Tensor([0, 1]), 1)


def test_masked_scatter_broadcasts_the_tensor_with_the_mask():
    x = r(3)
    mask = np.array([[True, False, True], [False, True, False]])
    src = np.arange(6.0)
    got = Tensor(x).masked_scatter(Tensor(mask), Tensor(src))
    want = np.broadcast_to(x, (2, 3)).copy()
    want[mask] = src[: mask.sum()]
    close(got, want)


# -- more of PyTorch's options ----------------------------------------------------------
def test_narrow_takes_a_0d_tensor_start_and_names_bad_ones():
    a = r(5, 5)
    close(Tensor(a).narrow(1, Tensor(2), 2), a[:, 2:4])
    with pytest.raises(TypeError, match="narrow: start must be an int or a 0-d integer tensor"):
        Tensor(a).narrow(1, Tensor([1, 2]), 2)
    with pytest.raises(IndexError, match=r"narrow: \[0, 11\) is out of range"):
        Tensor(a).narrow(0, 0, 11)
    with pytest.raises(IndexError, match="0-d tensor has no dim to narrow"):
        Tensor(1.0).narrow(0, 0, 1)


def test_unique_consecutive_along_a_dim():
    a = np.array([[1, 1, 2], [1, 1, 2], [3, 1, 2], [1, 1, 2]])
    vals, inv, cnt = Tensor(a).unique_consecutive(True, True, dim=0)
    assert vals.tolist() == [[1, 1, 2], [3, 1, 2], [1, 1, 2]]
    assert inv.tolist() == [0, 0, 1, 2] and cnt.tolist() == [2, 1, 1]
    assert Tensor(a).unique_consecutive(dim=1).tolist() == a.tolist()  # no equal neighbours
    cols = Tensor(np.array([[1, 1, 2], [3, 3, 4]])).unique_consecutive(dim=1)
    assert cols.tolist() == [[1, 2], [3, 4]]
    assert Tensor(a).unique_consecutive().tolist() == [1, 2, 1, 2, 3, 1, 2, 1, 2]


def test_norm_nuclear_and_matrix_frobenius():
    a = r(3, 4, 5)
    want = np.linalg.norm(np.moveaxis(a, (0, 2), (-2, -1)), "nuc", axis=(-2, -1))
    assert want.shape == (4,)
    close(Tensor(a).norm("nuc", dim=(0, 2)), want)
    close(Tensor(a[0]).norm("nuc"), np.linalg.norm(a[0], "nuc"))
    close(Tensor(a).norm("fro", dim=(0, 2)), np.sqrt((a * a).sum((0, 2))))
    with pytest.raises(ValueError, match="p='nuc' needs a matrix"):
        Tensor(a).norm("nuc")


def test_pinv_tolerances_as_tensors_and_hermitian_reads_the_lower_triangle():
    a = r(2, 5, 5)
    low = np.tril(a) + np.swapaxes(np.tril(a, -1), -1, -2)
    close(LA.pinv(Tensor(a), hermitian=True), np.linalg.pinv(low, hermitian=True), 1e-8, 1e-10)
    s = np.linalg.svd(a, compute_uv=False)
    cut = np.array([0.1, 0.5])[:, None] * s[:, :1]
    got = LA.pinv(Tensor(a), rtol=Tensor([0.1, 0.5])).numpy()
    for i in range(2):
        u, sv, vt = np.linalg.svd(a[i])
        keep = sv > cut[i, 0]
        want = (vt[keep].T / sv[keep]) @ u[:, keep].T
        np.testing.assert_allclose(got[i], want, rtol=1e-8, atol=1e-10)


def test_lstsq_reports_what_each_driver_computes():
    a, b = r(2, 4, 3), r(2, 4, 2)
    want = np.stack([np.linalg.lstsq(a[i], b[i], rcond=None)[0] for i in range(2)])
    shapes = {
        "gels": ((2, 2), (0,), (0,)),
        "gelsy": ((0,), (2,), (0,)),
        "gelsd": ((2, 2), (2,), (2, 3)),
        "gelss": ((2, 2), (2,), (2, 3)),
    }
    for driver, (res, rank, sv) in shapes.items():
        out = LA.lstsq(Tensor(a), Tensor(b), driver=driver)
        close(out.solution, want, 1e-8, 1e-10)
        assert (out.residuals.shape, out.rank.shape, out.singular_values.shape) == (res, rank, sv)
    got = LA.lstsq(Tensor(a), Tensor(b), driver="gelsd")
    resid = ((b - a @ want) ** 2).sum(-2)
    close(got.residuals, resid, 1e-8, 1e-10)
    assert got.rank.tolist() == [3, 3]
    with pytest.raises(ValueError, match="driver must be one of"):
        LA.lstsq(Tensor(a), Tensor(b), driver="lapack")


def test_special_polynomials_truncate_fractional_degrees():
    x = Tensor([0.3, 0.3, 0.3, 0.3])
    t = special.chebyshev_polynomial_t(x, Tensor([2.7, -1.5, 2.0, 3.0])).numpy()
    np.testing.assert_allclose(t, [2 * 0.09 - 1, 0.0, 2 * 0.09 - 1, 4 * 0.027 - 3 * 0.3], 1e-6)


def test_gradient_spacing_none_is_unit_steps():
    y = np.array([1.0, 4.0, 9.0, 16.0])
    (got,) = mlfuse.gradient(Tensor(y), spacing=None, dim=None)
    close(got, np.gradient(y))


# -- errors PyTorch raises -------------------------------------------------------------------
def test_errors_pytorch_raises():
    a = Tensor(r(5, 3))
    with pytest.raises(ValueError, match="isclose: rtol must be >= 0"):
        a.isclose(a, rtol=-0.4)
    with pytest.raises(ValueError, match="isclose: atol must be >= 0"):
        a.isclose(a, atol=-0.4)
    with pytest.raises(ValueError, match=r"movedim: repeated dim in source \[1, 0, -2\]"):
        Tensor(r(2, 3, 4)).movedim([1, 0, -2], [0, 1, 2])
    with pytest.raises(ValueError, match="masked_fill: value must be a number or a 0-d tensor"):
        a.masked_fill(a > 0, Tensor([1.0]))
    with pytest.raises(ValueError, match=r"cross: both operands need size 3 along dim 1"):
        LA.cross(a, Tensor(r(5, 1)))
    with pytest.raises(ValueError, match="linalg.cross: the operands need the same number"):
        LA.cross(a, Tensor(r(2, 5, 3)))
    with pytest.raises(ValueError, match=r"native_layer_norm: normalized_shape \[\]"):
        mlfuse.native_layer_norm(Tensor(r(1, 2, 3)), [], None, None, 1e-5)
    with pytest.raises(ValueError, match=r"normalized_shape \[2, 2\] must be non-empty and end"):
        mlfuse.native_layer_norm(Tensor(r(2, 2, 3)), [2, 2], None, None, 1e-5)
    with pytest.raises(TypeError, match="linspace: steps must be a non-negative int"):
        mlfuse.linspace(0, 1, 1.0)
    # an index out of range is PyTorch's RuntimeError and Python's IndexError at once
    with pytest.raises(RuntimeError, match="index 7 is out of bounds for dim 1 with size 3"):
        a.gather(1, Tensor([[7]]))
    with pytest.raises(IndexError, match="index 7 is out of bounds"):
        a.gather(1, Tensor([[7]]))
    with pytest.raises(RuntimeError, match="max of an empty axis"):
        Tensor(np.zeros((2, 0))).amax(1)


# -- gradients -------------------------------------------------------------------------------
def test_clamp_gradient_where_the_bounds_cross():
    x, lo, hi = r(50), r(50), r(50)
    xt, lt, ht = (Tensor(v).requires_grad_() for v in (x, lo, hi))
    w = r(50)
    (xt.clamp(lt, ht) * Tensor(w)).sum().backward()
    # PyTorch's: min(max(x, lo), hi); where lo > hi the output and its gradient are hi's
    inside = (x >= lo) & (x <= hi)
    to_lo = (x < lo) & (lo < hi)
    to_hi = (x > hi) | (hi < lo)
    close(xt.grad, np.where(inside, w, 0.0))
    close(lt.grad, np.where(to_lo, w, 0.0))
    close(ht.grad, np.where(to_hi, w, 0.0))
    close(xt.clamp(lt, ht).detach(), np.minimum(np.maximum(x, lo), hi))


def test_frexp_and_copysign_gradients():
    x = np.array([3.0, 0.3, -5.0, 1024.5])
    t = Tensor(x).requires_grad_()
    m, e = t.frexp()
    m.sum().backward()
    close(t.grad, 2.0 ** -np.frexp(x)[1])
    a, b = Tensor(x).requires_grad_(), Tensor(np.array([-1.0, 2.0, -0.0, 3.0])).requires_grad_()
    a.copysign(b).sum().backward()
    close(a.grad, np.sign(np.copysign(x, [-1.0, 2.0, -0.0, 3.0])) * np.sign(x))
    close(b.grad, np.zeros(4))


def test_masked_fill_with_a_tensor_value_passes_its_gradient():
    x = r(3, 4)
    v = Tensor(2.0).requires_grad_()
    Tensor(x).masked_fill(Tensor(x > 0), v).sum().backward()
    assert v.grad.item() == (x > 0).sum()


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigvalsh_gradient_reads_its_triangle(uplo):
    a = r(4, 4)
    t = Tensor(a).requires_grad_()
    LA.eigvalsh(t, UPLO=uplo).pow(3).sum().backward()
    w, v = np.linalg.eigh(a, UPLO=uplo)
    close(t.grad, (v * (3 * w**2)) @ v.T, 1e-8, 1e-10)


# -- decompositions' gradients, against central differences ----------------------------------
def _numeric(f, a, w):
    """Central differences of ``sum(w * f(a))`` with respect to ``a``."""
    return numeric_grad(f, [a], w)[0]


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 3)])
@pytest.mark.parametrize("part", [0, 1])
def test_qr_gradient(shape, part):
    a = r(*shape)
    w = r(*np.linalg.qr(a)[part].shape)
    t = Tensor(a).requires_grad_()
    (LA.qr(t)[part] * Tensor(w)).sum().backward()
    close(t.grad, _numeric(lambda x: np.linalg.qr(x)[part], a, w), 1e-6, 1e-7)


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 3)])
def test_svd_vectors_gradient(shape):
    a = r(*shape)

    def f(x):  # invariant to the singular vectors' signs: the rank-1 parts
        u, s, vh = np.linalg.svd(x, full_matrices=False)
        return u[..., :, :2, None] * vh[..., None, :2, :]  # (.., m, 2, n)

    w = r(*f(a).shape)
    t = Tensor(a).requires_grad_()
    u, s, vh = LA.svd(t, full_matrices=True)
    k = min(shape[-2:])
    parts = u[..., :, :2].unsqueeze(-1) * vh[..., :2, :].unsqueeze(-3)
    assert u.shape[-1] == shape[-2] and vh.shape[-2] == shape[-1] and k <= shape[-1]
    (parts * Tensor(w)).sum().backward()
    close(t.grad, _numeric(f, a, w), 1e-6, 1e-7)


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
def test_pinv_gradient(shape):
    a = r(*shape)
    w = r(*shape[::-1])
    t = Tensor(a).requires_grad_()
    (LA.pinv(t) * Tensor(w)).sum().backward()
    close(t.grad, _numeric(np.linalg.pinv, a, w), 1e-6, 1e-7)
    s = a[:3, :3] + a[:3, :3].T
    ts = Tensor(s).requires_grad_()
    (LA.pinv(ts, hermitian=True) * Tensor(w[:3, :3])).sum().backward()
    close(ts.grad, _numeric(np.linalg.pinv, s, w[:3, :3]), 1e-6, 1e-7)


def test_products_with_scalars_keep_integer_and_bool_dtypes():
    a, b = np.arange(6).reshape(2, 3), np.arange(3)
    # PyTorch truncates the scalars for integer tensors: 0.2 and 0.6 are 0
    assert Tensor([5, 7]).addmv(Tensor(a), Tensor(b), beta=0.2, alpha=0.6).tolist() == [0, 0]
    assert Tensor([5, 7]).addmv(Tensor(a), Tensor(b), beta=2, alpha=3).tolist() == [25, 56]
    ones = np.ones((2, 2, 3), np.int32)
    summed = Tensor(np.zeros((2, 2), np.int32)).addbmm(Tensor(ones), Tensor(ones.swapaxes(1, 2)))
    assert summed.dtype == mlfuse.int32 and summed.tolist() == [[6, 6], [6, 6]]
    wraps = Tensor(np.full((2, 2), 250, np.uint8)).addbmm(
        Tensor(ones.astype(np.uint8)), Tensor(ones.swapaxes(1, 2).astype(np.uint8))
    )
    assert wraps.dtype == mlfuse.uint8 and wraps.tolist() == [[0, 0], [0, 0]]
    got = Tensor([[True, False]]).addr(Tensor([True]), Tensor([False, True]), beta=3, alpha=2)
    assert got.dtype == mlfuse.bool and got.tolist() == [[True, True]]


def test_gather_from_a_0d_tensor_and_with_an_empty_index():
    assert Tensor(3).gather(0, Tensor([0, 0, -1])).tolist() == [3, 3, 3]
    assert Tensor([1, 2, 3]).gather(0, Tensor(np.zeros((2, 0), np.int64))).shape == (2, 0)


@pytest.mark.parametrize("sa,sb", [((5, 3), (5, 2)), ((5, 3), (5,)), ((2, 5, 3), (5, 2))])
def test_lstsq_gradient(sa, sb):
    a, b = r(*sa), r(*sb)

    def solve(x, y):  # the least-squares solution of a full-rank tall system
        return np.linalg.pinv(x) @ y

    w = r(*solve(a, b).shape)
    ta, tb = Tensor(a).requires_grad_(), Tensor(b).requires_grad_()
    (LA.lstsq(ta, tb).solution * Tensor(w)).sum().backward()
    close(ta.grad, _numeric(lambda x: solve(x, b), a, w), 1e-6, 1e-7)
    close(tb.grad, _numeric(lambda y: solve(a, y), b, w), 1e-6, 1e-7)


def test_ignored_inputs_get_zero_gradients_not_none():
    x = Tensor(r(2, 2)).requires_grad_()
    x.addmm(Tensor(r(2, 2)), Tensor(r(2, 2)), beta=0).sum().backward()
    assert x.grad.tolist() == [[0.0, 0.0], [0.0, 0.0]]
    y = Tensor(r(3)).requires_grad_()
    y.gather(0, Tensor(np.zeros(0, np.int64))).sum().backward()
    assert y.grad.tolist() == [0.0, 0.0, 0.0]
    z = Tensor([1.0]).requires_grad_()
    mlfuse.combinations(z, 2).sum().backward()
    assert z.grad.tolist() == [0.0]
