"""``mlfuse.special`` (``torch.special``) against float64 references: Python's
``math.erfc``/``math.lgamma``, series summed exactly with ``math.fsum``, and
numpy's polynomial classes; PyTorch where installed."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numpy.polynomial import chebyshev, hermite, hermite_e, laguerre, legendre

import mlfuse
from mlfuse import Tensor, special

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
    # PyTorch's degrees: truncated toward zero, negative ones give 0
    got = special.legendre_polynomial_p(x, mlfuse.tensor([0.5, 1.9, -2.0]))
    assert got.tolist() == [1.0, 1.5, 0.0]
    assert special.hermite_polynomial_h(x, 2.5).tolist() == [-1.0, 7.0, 23.0]
    with pytest.raises(TypeError, match="n must be a finite number or a tensor"):
        special.hermite_polynomial_h(x, "2")
    with pytest.raises(ValueError, match="degrees must be finite"):
        special.hermite_polynomial_h(x, mlfuse.tensor([1.0, float("nan"), 2.0]))


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


# -- Bessel, Airy, incomplete gamma and Hurwitz zeta against mpmath's values (50 digits),
# at arguments exact in float32 so that one table checks both dtypes. They came from
# mpmath.gammainc(a, 0, x, regularized=True) (and (a, x, inf)), besselj/bessely/besselk,
# airyai, sin(x)/x, and for zeta(x, q) direct terms up to q + N >= 60 then Euler-Maclaurin
# with 30 Bernoulli numbers (mpmath.zeta(x, q) itself loses digits for large q).
# fmt: off
GAMMAINC = [  # (a, x, P(a, x), Q(a, x)): each branch, tiny and huge results
    (0.0009765625, 0.5, 0.999453066606331, 0.000546933393669003),
    (0.0078125, 3.0, 0.999896542977451, 0.00010345702254897642),
    (0.5, 0.125, 0.3829249225480262, 0.6170750774519738),
    (1.3552527156068805e-20, 2.0, 1.0, 6.627254993166317e-22),
    (1.0, 1.1641532182693481e-10, 1.1641532182015855e-10, 0.9999999998835847),
    (0.5, 2.5, 0.9746526813225317, 0.025347318677468263),
    (5.5, 3.5, 0.20091649868455608, 0.7990835013154439),
    (11.5, 12.25, 0.623430569933059, 0.376569430066941),
    (0.5, 5.0, 0.9984345977419975, 0.0015654022580025497),
    (2.5, 10.0, 0.9987502694369687, 0.0012497305630313753),
    (11.5, 40.0, 0.9999999682482961, 3.1751703959868985e-08),
    (3.25, 3.5, 0.6255980801597727, 0.3744019198402273),
    (12.0, 12.0, 0.5384026669363818, 0.4615973330636182),
    (50.0, 45.0, 0.24680203440017026, 0.7531979655998298),
    (200.0, 230.0, 0.9796688566711638, 0.020331143328836235),
    (1000.0, 1000.0, 0.5042052441802155, 0.4957947558197845),
    (1000.0, 950.0, 0.05505468623073803, 0.9449453137692619),
    (500.5, 600.0, 0.9999865099241925, 1.349007580754396e-05),
    (1000.0, 300.0, 2.4149201482967856e-221, 1.0),
    (1000.0, 2300.0, 1.0, 1.3531643955468382e-205),
    (100.0, 20.0, 3.488878669689653e-37, 1.0),
    (30.0, 100.0, 0.9999999999999999, 5.893259698661473e-17),
    (0.5, 700.0, 1.0, 2.1010145162642176e-306),
    (2.0, 9.313225746154785e-10, 4.3368086872493727e-19, 1.0),
    (20.0, 0.75, 6.384797888313517e-22, 1.0),
    (1000.0, 1064.0, 0.9768534824643265, 0.023146517535673573),
]
BESSEL_X = [0.0, 9.5367431640625e-07, 0.25, 0.5, 1.0, 2.0, 2.5, 4.875, 5.0, 5.125, 7.5, 12.0,
            30.0, 100.0, 1000.0, 65536.5, -0.75, -5.125, -33.5]
POSITIVE_X = [9.5367431640625e-07, 0.25, 0.5, 1.0, 2.0, 2.5, 4.875, 5.0, 5.125, 7.5, 12.0, 30.0,
              100.0, 1000.0, 65536.5]
K_X = [0.0009765625, 0.25, 1.0, 1.9375, 2.0, 2.0625, 5.0, 20.0, 100.0, 700.0]
SPHERICAL_X = [0.000244140625, 0.25, 0.4990234375, 0.5, 1.0, 3.0, 10.0, -7.0, 1048576.0]
AIRY_X = [-100.0, -20.0, -5.0, -2.09375, -2.0859375, -1.0, 0.0, 0.5, 2.0859375, 2.09375, 5.0,
          8.5, 10.0, 50.0, 100.0]
BESSEL = {
    "bessel_j0": [
        1.0, 0.9999999999997726, 0.9844359292958527, 0.9384698072408129, 0.7651976865579666,
        0.22389077914123567, -0.048383776468198, -0.217559359407971, -0.1775967713143383,
        -0.1358837520737509, 0.2663396578803784, 0.047689310796833535, -0.08636798358104021,
        0.019985850304223122, 0.024786686152420176, -0.001551476965139549, 0.8642422751666486,
        -0.1358837520737509, 0.03754444002435241],
    "bessel_j1": [
        0.0, 4.768371582030708e-07, 0.12402597732272692, 0.2422684576748739, 0.4400505857449335,
        0.5767248077568734, 0.49709410246427405, -0.31095346151845216, -0.32757913759146523,
        -0.3389470236402631, 0.1352484275797055, -0.2234471044906276, -0.11875106261662294,
        -0.07714535201411216, 0.004728311907089524, 0.002703114489318359, -0.34924360217486217,
        0.3389470236402631, -0.13320936573052397],
}
BESSEL_POSITIVE = {
    "bessel_y0": [
        -8.899228301212583, -0.9315730249300587, -0.44451873350670656, 0.08825696421567696,
        0.5103756726497451, 0.4980703596152319, -0.28742088345506345, -0.30851762524903376,
        -0.3243382863394841, 0.11731328614820863, -0.22523731263436145, -0.11729573168666403,
        -0.07724431336508315, 0.0047159179776228135, 0.002703126325979254],
    "bessel_y1": [
        -667544.2144345043, -2.7041052293152825, -1.471472392670243, -0.7812128213002887,
        -0.10703243154093754, 0.1459181379667858, 0.18943865593279033, 0.14786314339122683,
        0.10512658904340123, -0.25912851048611624, -0.05709921826089652, 0.08442557066174723,
        -0.020372312002759792, -0.024784331292351778, 0.0015514975882445683],
}
BESSEL_K = {
    "modified_bessel_k0": [
        7.047405239908453, 1.5415067512483027, 0.42102443824070834, 0.12300567052555429,
        0.11389387274953344, 0.10550071349007924, 0.0036910983340425942, 5.741237815336525e-10,
        4.656628229175902e-45, 4.669776431685377e-306],
    "modified_bessel_k1": [
        1023.996314743989, 3.7470259744407115, 0.6019072301972346, 0.151894691359947,
        0.13986588181652243, 0.12888016682027845, 0.004044613445452165, 5.883057969557038e-10,
        4.6798537356369095e-45, 4.6731107967079664e-306],
    "scaled_modified_bessel_k0": [
        7.054290833146906, 1.9793338485985688, 1.144463079806895, 0.8538285872562115,
        0.8415682150707714, 0.8298273904353701, 0.547807564313519, 0.27854487665718225,
        0.12517562165912657, 0.04736236945461357],
    "scaled_modified_bessel_k1": [
        1024.996799583583, 4.811276588171025, 1.6361534862632583, 1.0543581379741223,
        1.0334768470686886, 1.0137210353691468, 0.6002738587883126, 0.28542549694072644,
        0.12579995047957854, 0.04739618765349454],
}
SPHERICAL = [0.9999999900658926, 0.9896158370180917, 0.9590096575612893, 0.958851077208406,
             0.8414709848078965, 0.04704000268662241, -0.05440211108893698, 0.09385522838839844,
             3.151828193871829e-07]
AIRY = [0.1767533932395529, -0.1764061270779847, 0.35076100902411433, 0.1675923874370789,
        0.1727079211295964, 0.5355608832923521, 0.3550280538878172, 0.23169360648083348,
        0.030612140335794177, 0.030244183356608, 0.00010834442813607442, 1.0997009755195506e-08,
        1.1047532552898686e-10, 4.5849417240748285e-104, 2.6344821520881846e-291]
ZETA = [  # (x, q, zeta(x, q), d/dq = -x zeta(x + 1, q))
    (2.0, 1.0, 1.6449340668482264, -2.4041138063191885),
    (3.0, 1.0, 1.2020569031595942, -3.2469697011334144),
    (1.5, 0.5, 4.776537947554833, -9.370665951853217),
    (1.0009765625, 0.25, 1028.232845943436, -17.23481184197519),
    (4.0, 1000.0, 3.338336666665e-10, -1.0020016666655e-12),
    (20.5, 0.125, 3.260954456333196e+18, -5.3479653083864406e+20),
    (2.0, 0.0009765625, 1048577.6425893921, -2147483650.3977838),
    (50.0, 2.0, 8.881784210930816e-16, -2.2204460515719067e-14),
    (3.0, -1000.5, 4.99001373501322e-07, -97.40909103300544),
    (2.0, -10.25, 19.646252424622652, 124.0164720214871),
    (4.0, -0.296875, 132.97627456405, 1710.9790290813867),
    (7.0, -20.875, 2097149.884493932, -117440535.16540651),
    (1.25, 100000.0, 0.224936811247388, -5.623448398368114e-07),
]
# fmt: on
NAN, INF = math.nan, math.inf


def _envelope(x):
    """The scale of J and Y at x: 1 near 0, sqrt(2 / (pi |x|)) beyond."""
    return np.minimum(1.0, np.sqrt(2 / (np.pi * np.maximum(np.abs(np.asarray(x)), 1e-300))))


@pytest.mark.parametrize("dt", [mlfuse.float64, mlfuse.float32])
def test_incomplete_gamma_against_mpmath(dt):
    g = np.array(GAMMAINC)
    # then the edges, as PyTorch (and SciPy): NaN for a < 0, x < 0, a = x = 0, a = x = inf
    ea = [-1.0, 1.0, 0.0, 0.0, 2.0, INF, INF, 2.0, NAN, 1.0]
    ex = [1.0, -1.0, 0.0, 3.0, 0.0, 5.0, INF, INF, 1.0, NAN]
    a = mlfuse.tensor(np.concatenate([g[:, 0], ea]), dtype=dt)
    x = mlfuse.tensor(np.concatenate([g[:, 1], ex]), dtype=dt)
    p, q = special.gammainc(a, x), special.gammaincc(a, x)
    assert p.dtype == q.dtype == dt
    mlfuse.realize(p, q)
    n = len(g)
    # each of P and Q to its own relative accuracy, however small (float32: its rounding)
    rtol, tiny = (1e-12, 1e-300) if dt == mlfuse.float64 else (1.5e-7, 1e-37)
    close(p[:n], g[:, 2], rtol, tiny)
    close(q[:n], g[:, 3], rtol, tiny)
    np.testing.assert_array_equal(p[n:].numpy(), [NAN, NAN, NAN, 1, 0, 0, NAN, 1, NAN, NAN])
    np.testing.assert_array_equal(q[n:].numpy(), [NAN, NAN, NAN, 0, 1, 1, NAN, 0, NAN, NAN])


def test_incomplete_gamma_promotes_as_a_binary_op():
    out = special.gammainc(mlfuse.tensor([[1], [3]]), mlfuse.tensor([1, 2, 3]))
    assert out.dtype == mlfuse.float32 and out.shape == (2, 3)  # integers: the default float
    want = [[1 - math.exp(-v) for v in (1, 2, 3)],
            [1 - math.exp(-v) * (1 + v + v * v / 2) for v in (1, 2, 3)]]  # fmt: skip
    close(out, np.array(want), 1e-6)
    assert (
        special.gammaincc(2.0, mlfuse.tensor([1.0], dtype=mlfuse.float64)).dtype == mlfuse.float64
    )
    assert special.gammainc(mlfuse.tensor([1.0]), 2).shape == (1,)


def test_incomplete_gamma_gradient_in_x_only():
    a = np.array([0.5, 1.0, 2.5, 12.0, 300.0, 1.0, 3.0])
    xv = np.array([0.25, 2.0, 3.0, 11.0, 310.0, 0.0, 0.0])
    # x^(a-1) e^-x / Gamma(a); at x = 0: 1 for a = 1, 0 above
    want = np.array([math.exp((s - 1) * math.log(v) - v - math.lgamma(s)) if v > 0
                     else float(s == 1) for s, v in zip(a, xv)])  # fmt: skip
    xs = []
    for fn, dt in ((special.gammainc, mlfuse.float64), (special.gammaincc, mlfuse.float64),
                   (special.gammainc, mlfuse.float32)):  # fmt: skip
        x = mlfuse.tensor(xv, dtype=dt, requires_grad=True)
        fn(mlfuse.tensor(a, dtype=dt), x).sum().backward()
        xs.append(x)
    mlfuse.realize(*(x.grad for x in xs))
    close(xs[0].grad, want, 1e-11)
    close(xs[1].grad, -want, 1e-11)
    assert xs[2].grad.dtype == mlfuse.float32
    close(xs[2].grad, want, 1e-6)
    x = mlfuse.tensor([[0.5, 1.0, 2.0]], dtype=mlfuse.float64, requires_grad=True)
    special.gammainc(mlfuse.tensor([[1.0], [2.0]], dtype=mlfuse.float64), x).sum().backward()
    close(x.grad, [[math.exp(-v) * (1 + v) for v in (0.5, 1.0, 2.0)]], 1e-14)  # summed over a
    # no derivative in a, as PyTorch: backward refuses, tinygrad's gradient() gives NaN
    a = mlfuse.tensor([1.5], requires_grad=True)
    with pytest.raises(NotImplementedError, match="no gradient with respect to input"):
        special.gammaincc(a, mlfuse.tensor([2.0])).sum().backward()
    a = mlfuse.tensor([1.5, 2.0])
    assert np.isnan(
        special.gammainc(a, mlfuse.tensor([0.5, 3.0])).sum().gradient(a)[0].numpy()
    ).all()


@pytest.mark.parametrize("dt", [mlfuse.float64, mlfuse.float32])
def test_bessel_and_airy_functions_against_mpmath(dt):
    tol = 3e-15 if dt == mlfuse.float64 else 1.5e-7
    edges = [0.0, -1.0, INF, -INF, NAN]

    def run(name, xs):
        """``name`` at ``xs`` and at the edges: (values, edge values)."""
        out = getattr(special, name)(mlfuse.tensor(list(xs) + edges, dtype=dt))
        assert out.dtype == dt
        v = out.numpy().astype(np.float64)
        return v[: len(xs)], v[len(xs) :]

    # J and Y: absolute error against the envelope of the oscillation (relative where
    # |f| is larger)
    for table, xs in ((BESSEL, BESSEL_X), (BESSEL_POSITIVE, POSITIVE_X)):
        for name, want in table.items():
            got, edge = run(name, xs)
            assert (np.abs(got - want) <= tol * np.maximum(np.abs(want), _envelope(xs))).all(), name
            if name.startswith("bessel_y"):  # -inf at 0, NaN below, 0 at inf
                np.testing.assert_array_equal(edge, [-INF, NAN, 0, NAN, NAN])
            else:  # even J0 and odd J1
                np.testing.assert_array_equal(edge[[0, 2, 3, 4]], [name == "bessel_j0", 0, 0, NAN])
                assert edge[1] == (1 if name == "bessel_j0" else -1) * got[BESSEL_X.index(1.0)]
    for name, want in BESSEL_K.items():
        got, edge = run(name, K_X)
        np.testing.assert_allclose(got, want, rtol=tol, atol=0 if dt == mlfuse.float64 else 1e-37)
        np.testing.assert_array_equal(edge, [INF, NAN, 0, NAN, NAN])
    got, edge = run("spherical_bessel_j0", SPHERICAL_X)
    np.testing.assert_allclose(got, SPHERICAL, rtol=tol)
    np.testing.assert_array_equal(edge[[0, 2, 3, 4]], [1, 0, 0, NAN])
    # Ai: the oscillating side against its envelope, with the rounding of the phase zeta =
    # 2/3 |x|^1.5; the decaying side relatively, e^-zeta a few digits short at x = 100
    got, edge = run("airy_ai", AIRY_X)
    xa = np.array(AIRY_X)
    scale = np.maximum(np.abs(AIRY), np.where(xa < 0, 0.5 / np.maximum(1.0, -xa) ** 0.25, 0))
    slack = np.where(xa < 0, np.maximum(1.0, np.abs(xa) ** 1.5 / 100), np.where(xa > 10, 50, 1))
    ok = np.abs(got - AIRY) <= slack * tol * scale
    if dt == mlfuse.float32:
        ok |= np.abs(AIRY) < 1e-37  # underflows
    assert ok.all(), got
    np.testing.assert_array_equal(edge[2:], [0, 0, NAN])


def test_bessel_gradients_are_the_closed_forms():
    t = mlfuse.tensor([0.25, 1.0, 2.0, 4.875, 7.5, 30.0], dtype=mlfuse.float64)
    s = mlfuse.tensor([0.0, 0.125, 0.4990234375, 0.5, 3.0], dtype=mlfuse.float64)
    a = mlfuse.tensor([-5.0, -1.0, 0.0, 1.0, 5.0], dtype=mlfuse.float64)
    names = ("bessel_j0 bessel_j1 bessel_y0 bessel_y1 modified_bessel_k0 modified_bessel_k1 "
             "scaled_modified_bessel_k0 scaled_modified_bessel_k1").split()  # fmt: skip
    f = {n: getattr(special, n)(t) for n in names}
    grads = {n: f[n].sum().gradient(t)[0] for n in names}  # (tinygrad's API: any target)
    grads["spherical_bessel_j0"] = special.spherical_bessel_j0(s).sum().gradient(s)[0]
    grads["airy_ai"] = special.airy_ai(a).sum().gradient(a)[0]
    mlfuse.realize(*grads.values(), *f.values())  # one schedule: the rules share the values
    j0, j1, y0, y1, k0, k1, k0e, k1e = (f[n] for n in names)
    for name, want in zip(names, (-j1, j0 - j1 / t, -y1, y0 - y1 / t, -k1, -k0 - k1 / t,
                                  k0e - k1e, k1e - k0e - k1e / t)):  # fmt: skip
        close(grads[name], want.numpy(), 1e-14)
    sv = s.numpy()
    want = [0.0] + [(math.cos(v) - math.sin(v) / v) / v for v in sv[1:]]
    close(grads["spherical_bessel_j0"], want, 1e-12, 1e-17)
    # Ai through its ops, on each branch: Ai'(x), mpmath's
    close(grads["airy_ai"], [0.3271928185544436, -0.010160567116645209, -0.2588194037928068,
                             -0.15914744129679328, -0.0002474138908684625], 1e-12)  # fmt: skip


def test_hurwitz_zeta_against_mpmath():
    z = np.array(ZETA)
    # the edges, as PyTorch: inf at x = 1 and q = 0, -1, ...; NaN for x < 1 and for q < 0 when x
    # is not whole; beyond PyTorch (NaN there), the limits at x = inf and q = inf
    ex = [1.0, 0.5, 2.0, 2.0, 2.5, 2.0, NAN, 2.0, INF, INF, INF]
    eq = [1.0, 1.0, 0.0, -3.0, -1.5, INF, 1.0, NAN, 2.0, 1.0, 0.5]
    for dt in (mlfuse.float64, mlfuse.float32):
        q = mlfuse.tensor(np.concatenate([z[:, 1], eq]), dtype=dt, requires_grad=True)
        out = special.zeta(mlfuse.tensor(np.concatenate([z[:, 0], ex]), dtype=dt), q)
        close(out[: len(z)], z[:, 2], 1e-14 if dt == mlfuse.float64 else 1.5e-7)
        want = [INF, NAN, INF, INF, NAN, 0, NAN, NAN, 0, 1, INF]
        np.testing.assert_array_equal(out[len(z) :].numpy(), want)
    out[: len(z)].sum().backward()  # d/dq = -x zeta(x + 1, q), in float32 here
    close(q.grad[: len(z)], z[:, 3], 1.5e-7)
    close(special.zeta(2, mlfuse.tensor([1.0, 2.0])), [math.pi**2 / 6, math.pi**2 / 6 - 1], 1e-7)
    x = mlfuse.tensor([2.0], requires_grad=True)
    with pytest.raises(NotImplementedError, match="no gradient with respect to input"):
        special.zeta(x, mlfuse.tensor([1.5])).sum().backward()


def test_new_functions_refuse_non_numbers():
    t = mlfuse.tensor([1.0, 2.0])
    unary = ("bessel_j0 bessel_j1 bessel_y0 bessel_y1 modified_bessel_k0 modified_bessel_k1 "
             "scaled_modified_bessel_k0 scaled_modified_bessel_k1 spherical_bessel_j0 "
             "airy_ai").split()  # fmt: skip
    for name in unary:
        with pytest.raises(TypeError, match=f"special.{name}: expected a tensor or a number"):
            getattr(special, name)("1.0")
        out = getattr(special, name)([1, 2])  # lists and ints: the default float
        assert out.shape == (2,) and out.dtype == mlfuse.float32
    for name in ("gammainc", "gammaincc", "zeta"):
        with pytest.raises(
            TypeError, match=f"special.{name}: expected a tensor or a number, got str"
        ):
            getattr(special, name)(t, "2")
        with pytest.raises(TypeError, match="got NoneType"):
            getattr(special, name)(None, t)
    assert set(unary) | {"gammainc", "gammaincc", "zeta"} <= set(special.__all__)


def test_igamma_spellings_and_shifted_chebyshev():
    a, x = np.array([0.5, 2.0, 10.0]), np.array([1.0, 2.0, 5.0])
    p = special.gammainc(Tensor(a), Tensor(x)).numpy()
    np.testing.assert_allclose(Tensor(a).igamma(Tensor(x)).numpy(), p, rtol=1e-15)
    np.testing.assert_allclose(mlfuse.igammac(Tensor(a), Tensor(x)).numpy(), 1 - p, rtol=1e-12)
    t = Tensor(a)
    assert mlfuse.igamma_(t, Tensor(x)) is t
    np.testing.assert_allclose(t.numpy(), p, rtol=1e-15)
    u = np.linspace(0.0, 1.0, 7)
    y = 2 * u - 1  # T*_n(u) = T_n(2u - 1), orthogonal on [0, 1]
    refs = {
        "t": 4 * y**3 - 3 * y,
        "u": 8 * y**3 - 4 * y,
        "v": 8 * y**3 - 4 * y**2 - 4 * y + 1,
        "w": 8 * y**3 + 4 * y**2 - 4 * y - 1,
    }
    for kind, want in refs.items():
        f = getattr(special, f"shifted_chebyshev_polynomial_{kind}")
        np.testing.assert_allclose(f(Tensor(u), 3).numpy(), want, atol=1e-12)


def test_lgamma_and_digamma_gradients_are_the_closed_forms():
    euler = 0.5772156649015329
    x = Tensor(np.array([1.0, 1.5, 2.0, 5.0]), requires_grad=True)
    x.lgamma().sum().backward()  # digamma: 1 - gamma at 2, finite at the integers
    want = [-euler, 2 - euler - 2 * math.log(2), 1 - euler, 25 / 12 - euler]
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-13)
    y = Tensor(np.array([1.0, 2.0, 0.5]), requires_grad=True)
    y.digamma().sum().backward()  # trigamma
    pi2 = math.pi**2
    np.testing.assert_allclose(y.grad.numpy(), [pi2 / 6, pi2 / 6 - 1, pi2 / 2], rtol=1e-8)


def test_log_ndtr_gradient_in_the_far_tail():
    v = np.array([-30.0, -12.0, -3.0, 0.0, 4.0])
    x = Tensor(v, requires_grad=True)
    special.log_ndtr(x).sum().backward()
    # pdf / cdf (at -30 from mpmath: the cdf underflows numpy)
    cdf = np.array([math.erfc(-t / math.sqrt(2)) / 2 for t in v])
    pdf = np.exp(-v * v / 2) / math.sqrt(2 * math.pi)
    want = np.where(v > -20, pdf / np.where(cdf > 0, cdf, 1), 30.033259667433677)  # mpmath
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-10)
