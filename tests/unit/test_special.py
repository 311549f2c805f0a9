"""``mlfuse.special`` (``torch.special``) against float64 references: Python's
``math.erfc``/``math.lgamma``, series summed exactly with ``math.fsum``, and
numpy's polynomial classes; PyTorch where installed."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numpy.polynomial import chebyshev, hermite, hermite_e, laguerre, legendre

import mlfuse
from mlfuse import special

RNG = np.random.default_rng(11)
X = np.concatenate([RNG.standard_normal(40) * 3, [0.0, 1e-8, 5.0, 9.5, 10.5, 15.0, 16.0, 30.0,
                                                  -5.0, -9.9, -10.5, -25.0, -37.0]])  # fmt: skip


def close(got, want, rtol, atol=0.0):
    np.testing.assert_allclose(np.asarray(got.numpy(), np.float64), want, rtol=rtol, atol=atol)


def ndtr_ref(v):
    return 0.5 * math.erfc(-v / math.sqrt(2))


def bessel_i_ref(v, order):
    """I_order(v) by its power series, summed exactly."""
    term = (v / 2) ** order / math.factorial(order)
    terms = [term]
    for k in range(1, 300):
        term *= (v / 2) ** 2 / (k * (k + order))
        terms.append(term)
    return math.fsum(terms)


def test_normal_distribution_functions():
    x64 = mlfuse.tensor(X, dtype=mlfuse.float64)
    close(special.ndtr(x64), [ndtr_ref(v) for v in X], 1e-13)
    # the log stays finite and accurate where ndtr itself underflows (x = -37: 1e-300)
    want = [math.log1p(-ndtr_ref(-v)) if v > 0 else math.log(max(ndtr_ref(v), 1e-300)) for v in X]
    far = -(X[-1] ** 2) / 2 - math.log(-X[-1] * math.sqrt(2 * math.pi))
    want[-1] = far + math.log1p(-1 / X[-1] ** 2 + 3 / X[-1] ** 4)
    close(special.log_ndtr(x64), np.array(want, np.float64), 1e-9)
    x32 = mlfuse.tensor(X, dtype=mlfuse.float32)
    assert np.isfinite(special.log_ndtr(x32).numpy()).all()
    close(special.ndtr(x32), [ndtr_ref(float(np.float32(v))) for v in X], 2e-5, 1e-30)
    p = np.array([1e-7, 0.01, 0.3, 0.5, 0.9, 1 - 1e-6])
    back = special.ndtri(mlfuse.tensor(p, dtype=mlfuse.float32))  # computed in float64
    close(special.ndtr(back.double()), p, 2e-6)
    assert special.ndtri(mlfuse.tensor([0.0, 1.0])).tolist() == [-math.inf, math.inf]


def test_entr_xlog1py_erfcx():
    v = mlfuse.tensor([0.0, 0.5, 2.0, -1.0, math.nan], dtype=mlfuse.float64)
    e = special.entr(v).tolist()
    assert e[:4] == [0.0, -0.5 * math.log(0.5), -2 * math.log(2.0), -math.inf]
    assert math.isnan(e[4])
    got = special.xlog1py(mlfuse.tensor([0.0, 2.0, 0.0]), mlfuse.tensor([-1.0, 1.0, math.nan]))
    assert got.tolist()[:2] == [0.0, pytest.approx(2 * math.log(2.0))]
    assert math.isnan(got.tolist()[2])
    x = np.array([-3.0, -0.5, 0.0, 0.5, 3.0, 8.0, 12.0, 50.0, 1e4])
    want = [math.exp(v * v) * math.erfc(v) if v < 20 else None for v in x]
    for i, v in enumerate(x):  # beyond, the asymptotic series is the reference
        if want[i] is None:
            terms, term = [1.0], 1.0
            for k in range(1, 12):
                term *= -(2 * k - 1) / (2 * v * v)
                terms.append(term)
            want[i] = math.fsum(terms) / (v * math.sqrt(math.pi))
    close(special.erfcx(mlfuse.tensor(x, dtype=mlfuse.float64)), np.array(want), 1e-12)
    close(special.erfcx(mlfuse.tensor(x, dtype=mlfuse.float32)), np.array(want), 2e-6)


def test_modified_bessel_functions():
    x = np.array([-80.0, -16.0, -3.0, -0.1, 0.0, 0.1, 1.0, 3.0, 14.9, 15.1, 30.0, 80.0])
    i0 = np.array([bessel_i_ref(v, 0) for v in x])
    i1 = np.array([bessel_i_ref(v, 1) for v in x])
    t = mlfuse.tensor(x, dtype=mlfuse.float64)
    close(special.i1(t), i1, 1e-7, 1e-300)
    close(special.i0e(t), i0 * np.exp(-np.abs(x)), 1e-7)
    close(special.i1e(t), i1 * np.exp(-np.abs(x)), 1e-7, 1e-300)
    big = special.i0e(mlfuse.tensor([500.0, -500.0])).numpy()  # i0 itself overflows there
    np.testing.assert_allclose(big, 1 / np.sqrt(2 * np.pi * 500) * (1 + 1 / 4000), rtol=1e-6)
    assert special.modified_bessel_i1 is special.i1


@pytest.mark.parametrize(
    "name, family",
    [
        ("chebyshev_polynomial_t", chebyshev.Chebyshev),
        ("hermite_polynomial_h", hermite.Hermite),
        ("hermite_polynomial_he", hermite_e.HermiteE),
        ("laguerre_polynomial_l", laguerre.Laguerre),
        ("legendre_polynomial_p", legendre.Legendre),
    ],
)
def test_orthogonal_polynomials_match_numpy(name, family):
    x = np.linspace(-1.5, 1.5, 31)
    t = mlfuse.tensor(x, dtype=mlfuse.float64)
    fn = getattr(special, name)
    for n in (0, 1, 2, 5, 9):
        want = family.basis(n)(x)
        close(fn(t, n), want, 1e-10, 1e-10)
    degrees = np.arange(31) % 6  # a degree per element
    want = np.array([family.basis(int(d))(v) for d, v in zip(degrees, x)])
    close(fn(t, mlfuse.tensor(degrees)), want, 1e-10, 1e-10)
    assert fn(t, -1).tolist() == [0.0] * 31


def test_chebyshev_second_third_fourth_kinds():
    x = np.linspace(-0.99, 0.99, 21)
    th = np.arccos(x)
    t = mlfuse.tensor(x, dtype=mlfuse.float64)
    n = 4
    close(special.chebyshev_polynomial_u(t, n), np.sin((n + 1) * th) / np.sin(th), 1e-10, 1e-12)
    close(special.chebyshev_polynomial_v(t, n), np.cos((n + 0.5) * th) / np.cos(th / 2), 1e-10,
          1e-12)  # fmt: skip
    close(special.chebyshev_polynomial_w(t, n), np.sin((n + 0.5) * th) / np.sin(th / 2), 1e-10,
          1e-12)  # fmt: skip


def test_scipy_names_of_tensor_methods():
    x = mlfuse.tensor([0.5, 1.5, 2.5])
    assert special.expit(x).tolist() == x.sigmoid().tolist()
    assert special.gammaln(x).tolist() == x.lgamma().tolist()
    assert special.psi is special.digamma and special.round(x).tolist() == [0.0, 2.0, 2.0]
    assert special.multigammaln(x + 1, 2).tolist() == (x + 1).mvlgamma(2).tolist()
    assert special.softmax(x, 0, dtype=mlfuse.float64).dtype == mlfuse.float64
    with pytest.raises(mlfuse.ArgumentError, match="degrees must be whole numbers"):
        special.legendre_polynomial_p(x, mlfuse.tensor([0.5, 1.0, 2.0]))
    with pytest.raises(TypeError, match="n must be an int or a tensor"):
        special.hermite_polynomial_h(x, 2.5)


def test_against_torch():
    torch = pytest.importorskip("torch")
    tx = torch.tensor(X)
    t = mlfuse.tensor(X, dtype=mlfuse.float64)
    for name in ("log_ndtr", "i1", "i0e", "i1e", "entr", "erfcx", "expit"):
        src, tsrc = (t.abs(), tx.abs()) if name == "entr" else (t, tx)
        close(getattr(special, name)(src), getattr(torch.special, name)(tsrc).numpy(), 1e-7)


def test_lgamma_keeps_its_relative_accuracy_at_the_zeros():
    # lgamma(1 + z) ~ -gamma z and lgamma(2 + z) ~ (1 - gamma) z: Lanczos' sum cancels
    # there (1% off at 0.99999 in float32 before); mpmath's values
    x = np.array([0.99999, 1.00001, 1.99999, 2.00001, 1.0, 2.0, 0.5, 1.4616321449683622])
    ref = np.array([5.772238896093089e-06, -5.7720744027504825e-06, -4.227811104241674e-06,
                    4.22787559764836e-06, 0.0, 0.0, 0.5723649429247001,
                    -0.12148629053584961])  # fmt: skip
    got = mlfuse.Tensor(x).lgamma().numpy()
    np.testing.assert_allclose(got, ref, rtol=1e-14, atol=0)
    # float32: computed in float64, so as accurate at the float32 inputs (0.99999 is
    # 0.99998998641968 there; its lgamma 5.7800779e-06, mpmath)
    got32 = mlfuse.Tensor(np.array([0.99999], np.float32)).lgamma().numpy()
    np.testing.assert_allclose(got32, [5.780077894406154e-06], rtol=1e-7, atol=0)
    # tiny arguments (float32 denormals too): -log|x|; poles; -0.99999 near a pole
    t = mlfuse.Tensor(np.array([1e-45, -1e-45, 1e-300, 0.0, -1.0, -0.99999], np.float64))
    np.testing.assert_allclose(
        t.lgamma().numpy(),
        [103.61632918473205, 103.61632918473205, 690.7755278982137, np.inf, np.inf,
         11.512929692950378],
        rtol=1e-9,
    )  # fmt: skip


def test_digamma_lgamma_i0_acosh_edges_match_torch():
    x = np.array([-0.0, 0.0, 0.5, -0.5, 0.99999, 3.7, -2.5])
    d = mlfuse.Tensor(x).digamma().numpy()
    assert d[0] == np.inf and d[1] == -np.inf  # PyTorch's signs at -0 and +0
    np.testing.assert_allclose(
        d[2:],
        [-1.9635100260214235, 0.03648997397857652, -0.5772321143624081, 1.1671535393615113,
         1.103156640645243],
        rtol=1e-14,
    )  # fmt: skip
    # i0 past float32's overflow of e^|x| / sqrt(2 pi |x|): inf, not NaN; 89 still finite
    i = mlfuse.Tensor(np.array([3e38, -3e38, 89.0], np.float32)).i0().numpy()
    assert i[0] == np.inf and i[1] == np.inf
    np.testing.assert_allclose(i[2], 1.9012419299064899e37, rtol=1e-6)
    # acosh is NaN below 1, however far
    a = mlfuse.Tensor(np.array([-1e20, -1e10, -1.0, 0.5, 1.0, 1e20])).acosh().numpy()
    assert np.isnan(a[:4]).all() and a[4] == 0
    np.testing.assert_allclose(a[5], 46.74484904044086, rtol=1e-15)
