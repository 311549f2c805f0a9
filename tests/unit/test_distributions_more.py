"""``mlfuse.distributions`` (``torch.distributions``), the families added after
the first set: the univariate ones (ContinuousBernoulli, FisherSnedecor,
GeneralizedPareto, HalfCauchy, HalfNormal, InverseGamma, Kumaraswamy, Pareto,
VonMises, Weibull, NegativeBinomial; Gamma's cdf) against float64 closed forms
written here (numpy and ``math``); shapes, ``expand`` and validation of every
new family; the submodules of PyTorch's names.

The multivariate families, KL rules and ExponentialFamily are in
test_distributions_multivariate.py, sampling, reparameterization gradients and
the transforms in test_distributions_sampling.py (three files that run side by
side: each kernel with lgamma, digamma or the incomplete gamma function in it
costs about a second of compile, and these families have many). A few values
are PyTorch 2.13's, as literals (marked where they appear)."""

from __future__ import annotations

import importlib
import math
import warnings

import numpy as np
import pytest

import mlfuse.distributions as D
from dist_refs import (
    _cb_refs,
    bessel_i,
    Checks,
    digamma,
    erf,
    EULER,
    lbeta,
    lgamma,
    t64,
)


# -- closed forms --------------------------------------------------------------------


def _closed_forms_univariate(check):
    u = np.array([0.1, 0.5, 0.9])

    # ContinuousBernoulli, the middle one inside the Taylor region
    p = np.array([0.2, 0.4995, 0.8])
    x = np.array([0.3, 0.6, 0.95])
    cb = D.ContinuousBernoulli(t64(p))
    logp, mean, var, cdf, icdf, ent = _cb_refs(p, x, u)
    check("CB log_prob", cb.log_prob(t64(x)), logp)
    check("CB mean", cb.mean, mean)
    # (the closed form loses digits next to 1/2: its reference is good to ~1e-8 there)
    check("CB variance", cb.variance, var, atol=1e-8)
    check("CB cdf", cb.cdf(t64(x)), cdf)
    check("CB icdf", cb.icdf(t64(u)), icdf, rtol=1e-7)
    entropy = cb.entropy()
    check("CB entropy", entropy, ent, atol=1e-9)
    # PyTorch 2.13's ContinuousBernoulli([0.2, 0.4995, 0.8]).entropy()
    torch_ent = [-0.07641445280335896, -1.666667611699424e-07, -0.07641445280335879]
    check("CB entropy (torch)", entropy, torch_ent, atol=1e-14)
    cbl = D.ContinuousBernoulli(logits=t64(np.log(p / (1 - p))))
    check("CB(logits) log_prob", cbl.log_prob(t64(x)), logp)

    # FisherSnedecor
    d1, d2 = np.array([1.0, 3.0, 6.0]), np.array([2.0, 5.0, 9.0])
    x = np.array([0.3, 1.2, 2.5])
    f = D.FisherSnedecor(t64(d1), t64(d2))
    logp = (
        0.5 * d1 * np.log(d1 / d2)
        + (0.5 * d1 - 1) * np.log(x)
        - 0.5 * (d1 + d2) * np.log1p(d1 * x / d2)
        - lbeta(d1 / 2, d2 / 2)
    )
    check("F log_prob", f.log_prob(t64(x)), logp)
    check("F mean", f.mean, [math.nan, 5 / 3, 9 / 7])
    check("F mode", f.mode, [math.nan, 1 / 3 * 5 / 7, 4 / 6 * 9 / 11])
    var = 2 * d2**2 * (d1 + d2 - 2) / (d1 * np.abs(d2 - 2) ** 2 * np.abs(d2 - 4) + (d2 <= 4))
    check("F variance", f.variance, [math.nan, var[1], var[2]])

    # GeneralizedPareto: xi > 0, xi = 0 (the exponential) and xi < 0 (bounded)
    loc, scale, xi = np.array([0.1, 0.0, -1.0]), np.array([2.0, 1.0, 0.5]), np.array([0.4, 0, -0.2])
    x = np.array([0.5, 1.5, -0.5])
    gp = D.GeneralizedPareto(t64(loc), t64(scale), t64(xi))
    z = (x - loc) / scale
    safe = np.where(xi == 0, 1.0, xi)
    logsf = np.where(xi == 0, -z, -np.log1p(safe * z) / safe)
    check("GP log_prob", gp.log_prob(t64(x)), -np.log(scale) + logsf * (1 + xi))
    check("GP cdf", gp.cdf(t64(x)), -np.expm1(logsf))
    check("GP log_survival", gp.log_survival_function(t64(x)), logsf)
    q = np.where(xi == 0, -np.log1p(-u), np.expm1(-safe * np.log1p(-u)) / safe)
    check("GP icdf", gp.icdf(t64(u)), loc + scale * q)
    check("GP mean", gp.mean, loc + scale / (1 - xi))
    check("GP variance", gp.variance, [4 / (0.36 * 0.2), 1.0, 0.25 / (1.44 * 1.4)])
    check("GP entropy", gp.entropy(), np.log(scale) + xi + 1)

    # HalfNormal and HalfCauchy
    s = np.array([0.5, 1.0, 3.0])
    x = np.array([0.3, 1.2, 2.5])
    hn = D.HalfNormal(t64(s))
    check(
        "HN log_prob",
        hn.log_prob(t64(x)),
        0.5 * np.log(2 / math.pi) - np.log(s) - x**2 / (2 * s**2),
    )
    hn_free = D.HalfNormal(t64(s), validate_args=False)
    check("HN log_prob < 0", hn_free.log_prob(t64([-1.0, -0.5, -2.0])), np.full(3, -np.inf))
    check("HN cdf", hn.cdf(t64(x)), erf(x / (s * math.sqrt(2))))
    check("HN mean", hn.mean, s * math.sqrt(2 / math.pi))
    check("HN variance", hn.variance, s**2 * (1 - 2 / math.pi))
    check("HN mode", hn.mode, np.zeros(3))
    check("HN entropy", hn.entropy(), 0.5 * np.log(math.pi * math.e * s**2 / 2))
    hc = D.HalfCauchy(t64(s))
    check("HC log_prob", hc.log_prob(t64(x)), np.log(2 / (math.pi * s * (1 + (x / s) ** 2))))
    check("HC cdf", hc.cdf(t64(x)), 2 / math.pi * np.arctan(x / s))
    check("HC icdf", hc.icdf(t64(u)), s * np.tan(math.pi * u / 2))
    check("HC mean", hc.mean, np.full(3, np.inf))
    check("HC entropy", hc.entropy(), np.log(2 * math.pi * s))

    # InverseGamma (integer shapes for a closed-form cdf)
    a, b = np.array([1.0, 3.0, 4.0]), np.array([1.0, 3.0, 0.7])
    x = np.array([0.3, 1.2, 2.5])
    ig = D.InverseGamma(t64(a), t64(b))
    check(
        "IG log_prob", ig.log_prob(t64(x)), a * np.log(b) - lgamma(a) - (a + 1) * np.log(x) - b / x
    )
    # P(Y <= x) = Q(a, b / x) = exp(-b/x) sum_{k<a} (b/x)^k / k!
    check("IG mean", ig.mean, [np.inf, 1.5, 0.7 / 3])
    check("IG variance", ig.variance, [np.inf, 9 / 4, 0.49 / 18])
    check("IG mode", ig.mode, b / (a + 1))
    check("IG entropy", ig.entropy(), a + np.log(b) + lgamma(a) - (1 + a) * digamma(a))

    # Kumaraswamy
    a, b = np.array([0.5, 2.0, 5.0]), np.array([0.7, 3.0, 1.5])
    x = np.array([0.3, 0.6, 0.95])
    k = D.Kumaraswamy(t64(a), t64(b))
    check(
        "K log_prob",
        k.log_prob(t64(x)),
        np.log(a * b) + (a - 1) * np.log(x) + (b - 1) * np.log1p(-(x**a)),
        rtol=1e-8,
    )
    check("K cdf", k.cdf(t64(x)), 1 - (1 - x**a) ** b)
    check("K icdf", k.icdf(t64(u)), (1 - (1 - u) ** (1 / b)) ** (1 / a))
    m1 = b * np.exp(lbeta(1 + 1 / a, b))
    m2 = b * np.exp(lbeta(1 + 2 / a, b))
    check("K mean", k.mean, m1)
    check("K variance", k.variance, m2 - m1**2, rtol=1e-8)
    check("K mode", k.mode, [math.nan, (1 / 5) ** 0.5, (4 / 6.5) ** 0.2])
    h_b = digamma(b + 1) + EULER
    check("K entropy", k.entropy(), (1 - 1 / b) + (1 - 1 / a) * h_b - np.log(a * b))

    # Pareto
    sc, al = np.array([1.0, 2.0, 0.5]), np.array([0.5, 2.5, 3.0])
    x = np.array([1.3, 2.6, 0.9])
    pa = D.Pareto(t64(sc), t64(al))
    check(
        "Pareto log_prob", pa.log_prob(t64(x)), np.log(al) + al * np.log(sc) - (al + 1) * np.log(x)
    )
    check("Pareto cdf", pa.cdf(t64(x)), 1 - (sc / x) ** al)
    check("Pareto icdf", pa.icdf(t64(u)), sc * (1 - u) ** (-1 / al))
    check("Pareto mean", pa.mean, [np.inf, 2.5 * 2 / 1.5, 1.5 / 2])
    check("Pareto variance", pa.variance, [np.inf, 4 * 2.5 / (2.25 * 0.5), 0.75 / 4])
    check("Pareto entropy", pa.entropy(), np.log(sc / al) + 1 + 1 / al)

    # Weibull
    lam, kk = np.array([1.0, 2.0, 0.5]), np.array([0.5, 1.5, 3.0])
    x = np.array([1.3, 2.6, 0.9])
    w = D.Weibull(t64(lam), t64(kk))
    check(
        "Weibull log_prob",
        w.log_prob(t64(x)),
        np.log(kk / lam) + (kk - 1) * np.log(x / lam) - (x / lam) ** kk,
    )
    check("Weibull cdf", w.cdf(t64(x)), -np.expm1(-((x / lam) ** kk)))
    check("Weibull icdf", w.icdf(t64(u)), lam * (-np.log1p(-u)) ** (1 / kk))
    g1, g2 = np.exp(lgamma(1 + 1 / kk)), np.exp(lgamma(1 + 2 / kk))
    check("Weibull mean", w.mean, lam * g1)
    check("Weibull variance", w.variance, lam**2 * (g2 - g1**2))
    check("Weibull mode", w.mode, [0.0, 2 * (1 / 3) ** (2 / 3), 0.5 * (2 / 3) ** (1 / 3)])
    check("Weibull entropy", w.entropy(), EULER * (1 - 1 / kk) + np.log(lam / kk) + 1)

    # VonMises: I0 and I1 to double precision
    loc, kap = np.array([0.3, -2.0, 1.0]), np.array([0.5, 2.0, 30.0])
    x = np.array([1.3, -2.6, 7.9])
    vm = D.VonMises(t64(loc), t64(kap))
    i0, i1 = bessel_i(0, kap), bessel_i(1, kap)
    check(
        "VM log_prob",
        vm.log_prob(t64(x)),
        kap * np.cos(x - loc) - np.log(2 * math.pi * i0),
        rtol=1e-12,
    )
    check("VM variance", vm.variance, 1 - i1 / i0, rtol=1e-12)
    check("VM mean", vm.mean, loc)

    # NegativeBinomial
    n, pr = np.array([3.0, 0.5, 10.0]), np.array([0.2, 0.5, 0.9])
    k = np.array([0.0, 4.0, 17.0])
    nb = D.NegativeBinomial(t64(n), t64(pr))
    logp = lgamma(n + k) - lgamma(k + 1) - lgamma(n) + n * np.log1p(-pr) + k * np.log(pr)
    check("NB log_prob", nb.log_prob(t64(k)), logp)
    nbl = D.NegativeBinomial(t64(n), logits=t64(np.log(pr / (1 - pr))))
    check("NB(logits) mean", nbl.mean, n * pr / (1 - pr))
    check("NB mean", nb.mean, n * pr / (1 - pr))
    check("NB variance", nb.variance, n * pr / (1 - pr) ** 2)
    check("NB mode", nb.mode, np.maximum(np.floor((n - 1) * pr / (1 - pr)), 0))

    # Gamma's cdf (integer shape: a finite sum; shape 1/2: erf); Chi2 and InverseGamma
    # read it (each use of the incomplete gamma function costs seconds of compile: one here)
    ga = D.Gamma(t64([1.0, 3.0, 0.5]), t64([2.0, 0.5, 1.0]))
    x = np.array([0.3, 4.0, 2.0])
    check(
        "Gamma cdf",
        ga.cdf(t64(x)),
        [1 - math.exp(-0.6), 1 - math.exp(-2.0) * (1 + 2 + 2), math.erf(math.sqrt(2))],
        rtol=1e-12,
    )
    assert D.Chi2.cdf is D.Gamma.cdf


def test_closed_forms_univariate():
    check = Checks()
    _closed_forms_univariate(check)
    check.verify()


# -- shapes, expand, validation ---------------------------------------------------------------
def _families():
    """(name, distribution of batch (2,), a valid value of one event)."""
    b2 = t64([0.4, 0.7])
    b3 = t64([1.4, 2.1])
    lower = np.array([[1.0, 0.0, 0.0], [0.6, 0.8, 0.0], [0.0, 0.6, 0.8]])
    return [
        ("ContinuousBernoulli", D.ContinuousBernoulli(b2), 0.3),
        ("FisherSnedecor", D.FisherSnedecor(b3, 4.0), 0.3),
        ("GeneralizedPareto", D.GeneralizedPareto(0.0, b2, 0.2), 0.3),
        ("HalfCauchy", D.HalfCauchy(b2), 0.3),
        ("HalfNormal", D.HalfNormal(b2), 0.3),
        ("InverseGamma", D.InverseGamma(b2, 2.0), 0.3),
        ("Kumaraswamy", D.Kumaraswamy(b2, 2.0), 0.3),
        ("Pareto", D.Pareto(0.2, b2), 0.3),
        ("Weibull", D.Weibull(b2, 2.0), 0.3),
        ("VonMises", D.VonMises(b2, 2.0), 0.3),
        ("NegativeBinomial", D.NegativeBinomial(3.0, b2), 2.0),
        ("Multinomial", D.Multinomial(3, t64([[0.2, 0.8], [0.5, 0.5]])), [1.0, 2.0]),
        (
            "LowRankMultivariateNormal",
            D.LowRankMultivariateNormal(
                t64(np.zeros((2, 3))), t64(np.ones((3, 1))), t64(np.ones(3))
            ),
            [0.1, 0.2, 0.3],
        ),
        (
            "MixtureSameFamily",
            D.MixtureSameFamily(
                D.Categorical(t64([0.3, 0.7])), D.Normal(t64(np.zeros((2, 2))), 1.0)
            ),
            0.3,
        ),
        ("LKJCholesky", D.LKJCholesky(3, b3), lower),
        ("Wishart", D.Wishart(b3 + 2, covariance_matrix=t64(np.eye(2))), np.eye(2)),
        ("LogisticNormal", D.LogisticNormal(t64(np.zeros((2, 3))), 1.0), [0.1, 0.2, 0.3, 0.4]),
        (
            "OneHotCategoricalStraightThrough",
            D.OneHotCategoricalStraightThrough(t64([[0.2, 0.8], [0.5, 0.5]])),
            [0.0, 1.0],
        ),
    ]


def test_shapes_and_expand():
    """Batch, event and sample shapes, ``expand`` and ``log_prob`` broadcasting
    (the shapes of the lazy results: nothing here compiles a kernel but the
    host samplers' draws and one numeric check of an expansion)."""
    for name, d, value in _families():
        assert d.batch_shape == (2,), (name, d.batch_shape)
        ev = d.event_shape
        assert d.sample().shape == (2,) + ev, name
        assert d.sample((3, 1)).shape == (3, 1, 2) + ev, name
        if d.has_rsample:
            assert d.rsample((2,)).shape == (2, 2) + ev, name
        v = t64(value)
        assert d.log_prob(v).shape == (2,), name
        assert d.log_prob(t64(np.broadcast_to(value, (5, 1) + np.shape(value)))).shape == (5, 2)
        e = d.expand((4, 2))
        assert type(e) is type(d) and e.batch_shape == (4, 2) and e.event_shape == ev, name
        assert e.sample((3,)).shape == (3, 4, 2) + ev, name
        assert e.log_prob(v).shape == (4, 2), name
        assert repr(d).startswith(type(d).__name__), name
    d = D.Kumaraswamy(t64([0.4, 0.7]), 2.0)
    np.testing.assert_allclose(
        d.expand((3, 2)).log_prob(t64(0.3)).numpy(),
        np.broadcast_to(d.log_prob(t64(0.3)).numpy(), (3, 2)),
    )
    # scalar parameters: an empty batch
    assert D.HalfNormal(1.0).batch_shape == () and D.Pareto(1.0, 2.0).sample((5,)).shape == (5,)
    assert D.LogisticNormal(0.0, 1.0).event_shape == (2,)
    assert D.Wishart(3.0, scale_tril=t64(np.eye(2))).batch_shape == ()
    gmm = D.MixtureSameFamily(
        D.Categorical(t64([0.5, 0.5])),
        D.Independent(D.Normal(t64(np.zeros((3, 2, 4))), 1.0), 1),
    )
    assert gmm.batch_shape == (3,) and gmm.event_shape == (4,)
    assert gmm.sample((5,)).shape == (5, 3, 4) and gmm.log_prob(t64(np.zeros(4))).shape == (3,)
    assert gmm.mixture_distribution.probs.shape == (2,) and gmm.component_distribution is not None
    # Multinomial of zero trials, and its support
    assert D.Multinomial(0, t64([0.5, 0.5])).sample((2,)).numpy().tolist() == [[0.0, 0.0]] * 2
    assert D.Multinomial(3, t64([0.5, 0.5])).support.check(
        t64([[1.0, 2.0], [3.0, 1.0]])
    ).tolist() == [True, False]


def test_validation_errors():
    bad = [
        (lambda: D.HalfNormal(t64([1.0, -1.0])), "scale"),
        (lambda: D.HalfCauchy(t64(0.0)), "scale"),
        (lambda: D.Pareto(1.0, t64(-2.0)), "Expected parameter"),  # (the base's rate, as PyTorch)
        (lambda: D.Weibull(t64(-1.0), 1.0), "scale"),
        (lambda: D.InverseGamma(t64(-1.0), 1.0), "concentration"),
        (lambda: D.Kumaraswamy(1.0, t64(0.0)), "concentration0"),
        (lambda: D.FisherSnedecor(t64(-1.0), 1.0), "df1"),
        (lambda: D.GeneralizedPareto(0.0, t64(-1.0), 0.1), "scale"),
        (lambda: D.VonMises(0.0, t64(-1.0)), "concentration"),
        (lambda: D.NegativeBinomial(t64(-1.0), 0.5), "total_count"),
        (lambda: D.NegativeBinomial(2.0, t64(1.0)), "probs"),
        (lambda: D.ContinuousBernoulli(t64(1.5), validate_args=True), "probs"),
        (lambda: D.LKJCholesky(3, t64(-1.0)), "concentration"),
        (lambda: D.LKJCholesky(1), "dim"),
        (lambda: D.Multinomial(2, t64([-0.5, 1.5])), "probs"),
        (lambda: D.Wishart(t64(0.5), covariance_matrix=t64(np.eye(2))), "df"),
        (lambda: D.Wishart(t64(3.0)), "Exactly one"),
        (
            lambda: D.Wishart(t64(3.0), covariance_matrix=t64([[1.0, 2.0], [2.0, 1.0]])),
            "PositiveDefinite",
        ),
        (
            lambda: D.LowRankMultivariateNormal(
                t64([0.0, 0.0]), t64([[1.0], [1.0]]), t64([1.0, -1.0])
            ),
            "cov_diag",
        ),
        (
            lambda: D.LowRankMultivariateNormal(t64([0.0, 0.0]), t64([1.0, 1.0]), t64([1.0, 1.0])),
            "two-dimensional",
        ),
        (
            lambda: D.LowRankMultivariateNormal(
                t64([0.0, 0.0]), t64(np.ones((3, 1))), t64([1.0, 1.0])
            ),
            "cov_factor",
        ),
        (
            lambda: D.MixtureSameFamily(D.Normal(0.0, 1.0), D.Normal(t64([0.0]), 1.0)),
            "Categorical",
        ),
        (
            lambda: D.MixtureSameFamily(
                D.Categorical(t64([0.5, 0.5])), D.Normal(t64([0.0] * 3), 1.0)
            ),
            "does not equal",
        ),
        (lambda: D.Multinomial(2.5, t64([0.5, 0.5])), "inhomogeneous"),
    ]
    for make, match in bad:
        with pytest.raises((ValueError, NotImplementedError), match=match):
            make()
    # values outside the support
    outside = [
        (D.HalfNormal(1.0), -1.0),
        (D.Pareto(t64(2.0), 1.0), 1.5),
        (D.Kumaraswamy(2.0, 2.0), 1.5),
        (D.ContinuousBernoulli(t64(0.3)), -0.1),
        (D.NegativeBinomial(2.0, t64(0.5)), 1.5),
        (D.GeneralizedPareto(t64(0.0), 1.0, -0.5), 2.5),  # beyond loc - scale / xi
        (D.Weibull(1.0, 1.0), 0.0),
        (D.Multinomial(2, t64([0.5, 0.5])), [2.0, 1.0]),
        (D.LKJCholesky(2), [[1.0, 0.0], [0.5, 0.5]]),
    ]
    for d, value in outside:
        with pytest.raises(ValueError, match="support"):
            d.log_prob(t64(value))
    # ContinuousBernoulli clamps probs without an explicit validate_args, as PyTorch's
    assert D.ContinuousBernoulli(t64(1.5)).probs.item() == pytest.approx(1.0)
    # with validation off the same calls compute
    assert D.HalfNormal(t64(-1.0), validate_args=False).mean.item() < 0
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        D.Wishart(t64(1.5), covariance_matrix=t64(np.eye(2)))
    assert any("Low df" in str(x.message) for x in w)


def test_module_names_and_exports():
    """The submodules and names PyTorch's code imports resolve (PyTorch 2.13's
    ``torch.distributions`` names, listed here)."""
    modules = {
        "bernoulli": ["Bernoulli"],
        "beta": ["Beta"],
        "binomial": ["Binomial"],
        "categorical": ["Categorical"],
        "cauchy": ["Cauchy"],
        "chi2": ["Chi2"],
        "constraint_registry": ["ConstraintRegistry", "biject_to", "transform_to"],
        "constraints": ["Constraint", "cat", "stack", "corr_cholesky", "multinomial"],
        "continuous_bernoulli": ["ContinuousBernoulli"],
        "dirichlet": ["Dirichlet"],
        "distribution": ["Distribution"],
        "exp_family": ["ExponentialFamily"],
        "exponential": ["Exponential"],
        "fishersnedecor": ["FisherSnedecor"],
        "gamma": ["Gamma"],
        "generalized_pareto": ["GeneralizedPareto"],
        "geometric": ["Geometric"],
        "gumbel": ["Gumbel"],
        "half_cauchy": ["HalfCauchy"],
        "half_normal": ["HalfNormal"],
        "independent": ["Independent"],
        "inverse_gamma": ["InverseGamma"],
        "kl": ["kl_divergence", "register_kl"],
        "kumaraswamy": ["Kumaraswamy"],
        "laplace": ["Laplace"],
        "lkj_cholesky": ["LKJCholesky"],
        "log_normal": ["LogNormal"],
        "logistic_normal": ["LogisticNormal"],
        "lowrank_multivariate_normal": ["LowRankMultivariateNormal"],
        "mixture_same_family": ["MixtureSameFamily"],
        "multinomial": ["Multinomial"],
        "multivariate_normal": ["MultivariateNormal"],
        "negative_binomial": ["NegativeBinomial"],
        "normal": ["Normal"],
        "one_hot_categorical": ["OneHotCategorical", "OneHotCategoricalStraightThrough"],
        "pareto": ["Pareto"],
        "poisson": ["Poisson"],
        "relaxed_bernoulli": ["LogitRelaxedBernoulli", "RelaxedBernoulli"],
        "relaxed_categorical": ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"],
        "studentT": ["StudentT"],
        "transformed_distribution": ["TransformedDistribution"],
        "transforms": [
            "CatTransform",
            "StackTransform",
            "CorrCholeskyTransform",
            "CumulativeDistributionTransform",
            "LowerCholeskyTransform",
            "PositiveDefiniteTransform",
            "ReshapeTransform",
            "StickBreakingTransform",
        ],
        "uniform": ["Uniform"],
        "utils": [
            "broadcast_all",
            "lazy_property",
            "logits_to_probs",
            "probs_to_logits",
            "tril_matrix_to_vec",
            "vec_to_tril_matrix",
        ],
        "von_mises": ["VonMises"],
        "weibull": ["Weibull"],
        "wishart": ["Wishart"],
    }
    for mod, names in modules.items():
        m = importlib.import_module(f"mlfuse.distributions.{mod}")
        assert getattr(D, mod) is m, mod
        for n in names:
            obj = getattr(m, n)
            if n in D.__all__:
                assert getattr(D, n) is obj, (mod, n)
    for n in D.__all__:
        assert hasattr(D, n), n
    assert issubclass(D.OneHotCategoricalStraightThrough, D.OneHotCategorical)
    for fam in (
        "Normal",
        "Exponential",
        "Gamma",
        "Beta",
        "Dirichlet",
        "Bernoulli",
        "Poisson",
        "ContinuousBernoulli",
        "Wishart",
        "Chi2",
    ):
        assert issubclass(getattr(D, fam), D.ExponentialFamily), fam
    with pytest.raises(NotImplementedError):
        D.Beta(2.0, 3.0).cdf(t64(0.5))  # as PyTorch's
    from mlfuse.distributions.utils import tril_matrix_to_vec, vec_to_tril_matrix

    v = t64(np.arange(1.0, 7.0))
    mat = vec_to_tril_matrix(v)
    assert mat.numpy().tolist() == [[1, 0, 0], [2, 3, 0], [4, 5, 6]]
    assert tril_matrix_to_vec(mat).numpy().tolist() == list(range(1, 7))
    assert vec_to_tril_matrix(v, -1).shape == (4, 4)


def test_public_names_have_docstrings():
    import inspect

    new = [
        "ContinuousBernoulli",
        "ExponentialFamily",
        "FisherSnedecor",
        "GeneralizedPareto",
        "HalfCauchy",
        "HalfNormal",
        "InverseGamma",
        "Kumaraswamy",
        "LKJCholesky",
        "LogisticNormal",
        "LowRankMultivariateNormal",
        "MixtureSameFamily",
        "Multinomial",
        "NegativeBinomial",
        "OneHotCategoricalStraightThrough",
        "Pareto",
        "VonMises",
        "Weibull",
        "Wishart",
        "CatTransform",
        "CorrCholeskyTransform",
        "CumulativeDistributionTransform",
        "LowerCholeskyTransform",
        "PositiveDefiniteTransform",
        "ReshapeTransform",
        "StackTransform",
        "StickBreakingTransform",
    ]
    missing = []
    for n in new:
        cls = getattr(D, n)
        if not cls.__doc__:
            missing.append(n)
        for attr, v in vars(cls).items():
            if attr.startswith("_"):
                continue
            f = v.fget if isinstance(v, property) else getattr(v, "__func__", v)
            if callable(f) and not inspect.getdoc(getattr(cls, attr, None)) and not f.__doc__:
                missing.append(f"{n}.{attr}")
    for f in (D.biject_to, D.transform_to, D.constraint_registry.ConstraintRegistry.register):
        if not f.__doc__:
            missing.append(repr(f))
    assert not missing, missing
