"""``mlfuse.distributions`` (``torch.distributions``) against float64 references
written here: closed-form densities, moments and entropies (numpy and
``math.lgamma``), KL divergences by numerical integration or exact sums,
sample moments at fixed seeds, and reparameterization gradients against their
analytic values."""

from __future__ import annotations

import math

import numpy as np
import pytest

import mlfuse
import mlfuse.distributions as D
from mlfuse import Tensor
from mlfuse.distributions import constraints, transforms

F64 = mlfuse.float64
EULER = 0.57721566490153286060
RNG = np.random.default_rng(3)


def t64(a, requires_grad=False) -> Tensor:
    return Tensor(np.asarray(a, np.float64), F64, requires_grad=requires_grad)


def close(got, want, rtol=1e-9, atol=1e-12):
    got = got.numpy() if isinstance(got, Tensor) else got
    np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=rtol, atol=atol)


class Checks:
    """(got, want) pairs realized together: one compile for all of a test's
    tensors (each kernel with lgamma or digamma in it costs a compile)."""

    def __init__(self):
        self.items = []

    def __call__(self, label, got, want, rtol=1e-9, atol=1e-12):
        self.items.append((label, got, want, rtol, atol))

    def verify(self):
        mlfuse.realize(*[g for _, g, *_ in self.items if isinstance(g, Tensor)])
        for label, got, want, rtol, atol in self.items:
            got = got.numpy() if isinstance(got, Tensor) else got
            np.testing.assert_allclose(
                np.asarray(got, np.float64), want, rtol=rtol, atol=atol, err_msg=label
            )


lgamma = np.vectorize(math.lgamma, otypes=[float])
erf = np.vectorize(math.erf, otypes=[float])


def digamma(x):
    x = np.array(x, np.float64)
    acc = np.zeros_like(x)
    while (x < 8).any():
        acc = np.where(x < 8, acc - 1 / x, acc)
        x = np.where(x < 8, x + 1, x)
    r = 1 / (x * x)
    return acc + np.log(x) - 0.5 / x - r * (1 / 12 - r * (1 / 120 - r * (1 / 252 - r / 240)))


def lbeta(a, b):
    return lgamma(a) + lgamma(b) - lgamma(a + b)


def integrate(f, lo, hi, n=400001):
    """Simpson's rule on ``n`` points."""
    x = np.linspace(lo, hi, n)
    y = f(x)
    h = (hi - lo) / (n - 1)
    return h / 3 * (y[0] + y[-1] + 4 * y[1:-1:2].sum() + 2 * y[2:-1:2].sum())


# -- closed forms: log_prob, entropy, moments -----------------------------------------
LOC = np.array([-1.0, 0.3, 2.0])
SCALE = np.array([0.5, 1.0, 2.5])
X = np.array([0.2, -0.7, 3.1])
POS = np.array([0.4, 1.0, 3.5])
PHI = np.array([0.15865525393145707, 0.5, 0.9772498680518208])  # the normal cdf at -1, 0, 2


def _normal(d):
    z = (X - LOC) / SCALE
    return dict(
        log_prob=-0.5 * z**2 - np.log(SCALE) - 0.5 * math.log(2 * math.pi),
        entropy=0.5 * np.log(2 * math.pi * math.e * SCALE**2),
        mean=LOC,
        variance=SCALE**2,
        stddev=SCALE,
        mode=LOC,
        cdf=0.5 * (1 + erf(z / math.sqrt(2))),
        icdf=(PHI, LOC + SCALE * np.array([-1.0, 0.0, 2.0])),
    )


def _uniform(d):
    lo, hi = LOC, LOC + 2 * SCALE
    inside = (X >= lo) & (X < hi)
    return dict(
        log_prob=np.where(inside, -np.log(hi - lo), -np.inf),
        entropy=np.log(hi - lo),
        mean=(lo + hi) / 2,
        variance=(hi - lo) ** 2 / 12,
        cdf=np.clip((X - lo) / (hi - lo), 0, 1),
        icdf=(PHI, lo + PHI * (hi - lo)),
    )


def _exponential(d):
    return dict(
        log_prob=np.log(POS) - POS * np.abs(X),
        entropy=1 - np.log(POS),
        mean=1 / POS,
        variance=1 / POS**2,
        mode=0 * POS,
        cdf=1 - np.exp(-POS * np.abs(X)),
        icdf=(PHI, -np.log1p(-PHI) / POS),
    )


def _laplace(d):
    return dict(
        log_prob=-np.log(2 * SCALE) - np.abs(X - LOC) / SCALE,
        entropy=1 + np.log(2 * SCALE),
        mean=LOC,
        variance=2 * SCALE**2,
        cdf=np.where(
            X < LOC, 0.5 * np.exp((X - LOC) / SCALE), 1 - 0.5 * np.exp(-(X - LOC) / SCALE)
        ),
        icdf=(PHI, LOC + SCALE * np.where(PHI < 0.5, np.log(2 * PHI), -np.log(2 - 2 * PHI))),
    )


def _cauchy(d):
    z = (X - LOC) / SCALE
    return dict(
        log_prob=-np.log(math.pi * SCALE * (1 + z**2)),
        entropy=np.log(4 * math.pi * SCALE),
        mode=LOC,
        cdf=0.5 + np.arctan(z) / math.pi,
        icdf=(PHI, LOC + SCALE * np.tan(math.pi * (PHI - 0.5))),
    )


def _gumbel(d):
    z = (X - LOC) / SCALE
    return dict(
        log_prob=-np.log(SCALE) - z - np.exp(-z),
        entropy=np.log(SCALE) + EULER + 1,
        mean=LOC + SCALE * EULER,
        variance=math.pi**2 / 6 * SCALE**2,
        cdf=np.exp(-np.exp(-z)),
        icdf=(PHI, LOC - SCALE * np.log(-np.log(PHI))),
    )


def _studentt(d):
    nu = POS + 2.5
    z = (X - LOC) / SCALE
    logp = (
        lgamma((nu + 1) / 2)
        - lgamma(nu / 2)
        - 0.5 * np.log(nu * math.pi)
        - np.log(SCALE)
        - (nu + 1) / 2 * np.log1p(z**2 / nu)
    )
    ent = (nu + 1) / 2 * (digamma((nu + 1) / 2) - digamma(nu / 2))
    ent = ent + 0.5 * np.log(nu) + lbeta(nu / 2, 0.5) + np.log(SCALE)
    return dict(log_prob=logp, entropy=ent, mean=LOC, variance=SCALE**2 * nu / (nu - 2), mode=LOC)


def _gamma(d):
    a, r, x = POS, SCALE, np.abs(X)
    return dict(
        log_prob=a * np.log(r) + (a - 1) * np.log(x) - r * x - lgamma(a),
        entropy=a - np.log(r) + lgamma(a) + (1 - a) * digamma(a),
        mean=a / r,
        variance=a / r**2,
        mode=np.maximum((a - 1) / r, 0),
    )


def _beta(d):
    a, b, x = POS, SCALE, np.array([0.3, 0.5, 0.9])
    return dict(
        log_prob=(a - 1) * np.log(x) + (b - 1) * np.log1p(-x) - lbeta(a, b),
        entropy=lbeta(a, b)
        - (a - 1) * digamma(a)
        - (b - 1) * digamma(b)
        + (a + b - 2) * digamma(a + b),
        mean=a / (a + b),
        variance=a * b / ((a + b) ** 2 * (a + b + 1)),
    )


def _lognormal(d):
    x = np.abs(X)
    return dict(
        log_prob=-np.log(x * SCALE * math.sqrt(2 * math.pi))
        - (np.log(x) - LOC) ** 2 / (2 * SCALE**2),
        entropy=LOC + 0.5 + 0.5 * np.log(2 * math.pi * SCALE**2),
        mean=np.exp(LOC + SCALE**2 / 2),
        variance=np.expm1(SCALE**2) * np.exp(2 * LOC + SCALE**2),
        mode=np.exp(LOC - SCALE**2),
        icdf=(PHI, np.exp(LOC + SCALE * np.array([-1.0, 0.0, 2.0]))),
    )


CONTINUOUS = [
    ("Normal", lambda: D.Normal(t64(LOC), t64(SCALE)), X, _normal),
    ("Uniform", lambda: D.Uniform(t64(LOC), t64(LOC + 2 * SCALE), False), X, _uniform),
    ("Exponential", lambda: D.Exponential(t64(POS)), np.abs(X), _exponential),
    ("Laplace", lambda: D.Laplace(t64(LOC), t64(SCALE)), X, _laplace),
    ("Cauchy", lambda: D.Cauchy(t64(LOC), t64(SCALE)), X, _cauchy),
    ("Gumbel", lambda: D.Gumbel(t64(LOC), t64(SCALE)), X, _gumbel),
    ("StudentT", lambda: D.StudentT(t64(POS + 2.5), t64(LOC), t64(SCALE)), X, _studentt),
    ("Gamma", lambda: D.Gamma(t64(POS), t64(SCALE)), np.abs(X), _gamma),
    ("Beta", lambda: D.Beta(t64(POS), t64(SCALE)), np.array([0.3, 0.5, 0.9]), _beta),
    ("LogNormal", lambda: D.LogNormal(t64(LOC), t64(SCALE)), np.abs(X), _lognormal),
]


def test_continuous_closed_forms():
    check = Checks()
    for name, make, value, ref in CONTINUOUS:
        d = make()
        want = ref(d)
        assert d.batch_shape == (3,) and d.event_shape == (), name
        check(f"{name} log_prob", d.log_prob(t64(value)), want.pop("log_prob"))
        check(f"{name} entropy", d.entropy(), want.pop("entropy"))
        if "cdf" in want:
            check(f"{name} cdf", d.cdf(t64(value)), want.pop("cdf"))
        if "icdf" in want:
            q, x = want.pop("icdf")
            check(f"{name} icdf", d.icdf(t64(q)), x)
        for prop, v in want.items():
            check(f"{name} {prop}", getattr(d, prop), v)
    # Chi2(k) is Gamma(k / 2, 1 / 2)
    chi = D.Chi2(t64(2 * POS))
    assert isinstance(chi, D.Gamma)
    check("Chi2 mean", chi.mean, 2 * POS)
    check("Chi2 variance", chi.variance, 4 * POS)
    check("Chi2 rate", chi.rate, np.full(3, 0.5))
    check.verify()


def test_mean_variance_where_undefined():
    c = D.Cauchy(0.0, 1.0)
    assert math.isnan(c.mean.item()) and math.isinf(c.variance.item())
    st = D.StudentT(t64([0.5, 1.5, 3.0]))
    m, v = st.mean.numpy(), st.variance.numpy()
    assert math.isnan(m[0]) and m[1:].tolist() == [0.0, 0.0]
    assert math.isnan(v[0]) and math.isinf(v[1]) and v[2] == pytest.approx(3.0)
    assert math.isnan(D.Uniform(0.0, 1.0).mode.item())


def test_discrete_closed_forms():
    check = Checks()
    p = np.array([0.1, 0.5, 0.85])
    k = np.array([1.0, 0.0, 1.0])
    for b in (D.Bernoulli(probs=t64(p)), D.Bernoulli(logits=t64(np.log(p / (1 - p))))):
        check("Bernoulli log_prob", b.log_prob(t64(k)), np.where(k == 1, np.log(p), np.log1p(-p)))
        check("Bernoulli entropy", b.entropy(), -p * np.log(p) - (1 - p) * np.log1p(-p))
        check("Bernoulli mean", b.mean, p)
        check("Bernoulli variance", b.variance, p * (1 - p))
        check("Bernoulli probs", b.probs, p)
        check("Bernoulli logits", b.logits, np.log(p / (1 - p)))
    check("Bernoulli mode", D.Bernoulli(probs=t64([0.2, 0.5, 0.7])).mode, [0.0, math.nan, 1.0])

    kk = np.array([0.0, 3.0, 7.0])
    po = D.Poisson(t64(POS))
    check("Poisson log_prob", po.log_prob(t64(kk)), kk * np.log(POS) - POS - lgamma(kk + 1))
    check("Poisson mean", po.mean, POS)
    check("Poisson variance", po.variance, POS)

    n = 6
    bi = D.Binomial(n, probs=t64(p))
    kb = np.array([2.0, 0.0, 6.0])
    comb = np.log([math.comb(n, int(v)) for v in kb])
    want = comb + kb * np.log(p) + (n - kb) * np.log1p(-p)
    check("Binomial log_prob", bi.log_prob(t64(kb)), want)
    pmf = np.array([[math.comb(n, j) * q**j * (1 - q) ** (n - j) for j in range(n + 1)] for q in p])
    check("Binomial entropy", bi.entropy(), -(pmf * np.log(pmf)).sum(-1))
    check("Binomial mean", bi.mean, n * p)
    check("Binomial variance", bi.variance, n * p * (1 - p))
    check("Binomial mode", bi.mode, np.floor((n + 1) * p))
    check("Binomial(logits) probs", D.Binomial(n, logits=t64(np.log(p / (1 - p)))).probs, p)
    assert bi.enumerate_support().shape == (n + 1, 3)

    ge = D.Geometric(t64(p))
    check("Geometric log_prob", ge.log_prob(t64(kk)), kk * np.log1p(-p) + np.log(p))
    check("Geometric mean", ge.mean, (1 - p) / p)
    check("Geometric variance", ge.variance, (1 - p) / p**2)
    check("Geometric entropy", ge.entropy(), (-(1 - p) * np.log1p(-p) - p * np.log(p)) / p)
    check("Geometric p=1", D.Geometric(t64([1.0])).log_prob(t64([0.0])), [0.0])

    w = np.array([[1.0, 2.0, 3.0, 4.0], [5.0, 0.0, 1.0, 2.0]])
    pc = w / w.sum(-1, keepdims=True)
    idx = np.array([[3, 2], [0, 2], [2, 0]])
    want = np.log(pc[np.arange(2), idx])  # (3, 2)
    ent = -(np.where(pc > 0, pc * np.log(np.where(pc > 0, pc, 1)), 0)).sum(-1)
    for c in (D.Categorical(probs=t64(w)), D.Categorical(logits=t64(np.log(w + 1e-300)))):
        assert c.batch_shape == (2,) and c.event_shape == ()
        check("Categorical log_prob", c.log_prob(Tensor(idx)), want)
        check("Categorical entropy", c.entropy(), ent)
        check("Categorical probs", c.probs, pc)
        check("Categorical mode", c.mode, [3, 0])
        support = c.enumerate_support()
        assert support.shape == (4, 2) and c.enumerate_support(expand=False).shape == (4, 1)
        check("Categorical support", support, np.broadcast_to(np.arange(4.0)[:, None], (4, 2)))
    oh = D.OneHotCategorical(probs=t64(w))
    assert oh.batch_shape == (2,) and oh.event_shape == (4,)
    check("OneHotCategorical log_prob", oh.log_prob(t64(np.eye(4)[idx])), want)
    check("OneHotCategorical entropy", oh.entropy(), ent)
    check("OneHotCategorical mean", oh.mean, pc)
    check("OneHotCategorical variance", oh.variance, pc * (1 - pc))
    check("OneHotCategorical mode", oh.mode, np.eye(4)[[3, 0]])
    assert oh.enumerate_support().shape == (4, 2, 4)
    check.verify()


def test_multivariate_closed_forms():
    check = Checks()
    a = np.array([[0.5, 1.5, 3.0], [2.0, 2.0, 7.0]])
    x = np.array([[0.2, 0.3, 0.5], [0.1, 0.6, 0.3]])
    a0 = a.sum(-1)
    d = D.Dirichlet(t64(a))
    assert d.batch_shape == (2,) and d.event_shape == (3,)
    lb = lgamma(a).sum(-1) - lgamma(a0)
    check("Dirichlet log_prob", d.log_prob(t64(x)), ((a - 1) * np.log(x)).sum(-1) - lb)
    ent = lb + (a0 - 3) * digamma(a0) - ((a - 1) * digamma(a)).sum(-1)
    check("Dirichlet entropy", d.entropy(), ent)
    check("Dirichlet mean", d.mean, a / a0[:, None])
    var = a * (a0[:, None] - a) / (a0[:, None] ** 2 * (a0[:, None] + 1))
    check("Dirichlet variance", d.variance, var)
    check("Dirichlet mode", D.Dirichlet(t64([2.0, 3.0, 5.0])).mode, np.array([1.0, 2.0, 4.0]) / 7)

    b = RNG.standard_normal((2, 3, 3))
    cov = b @ b.transpose(0, 2, 1) + 2 * np.eye(3)
    loc = RNG.standard_normal((2, 3))
    x = RNG.standard_normal((4, 2, 3))
    diff = x - loc
    maha = np.einsum("...i,...ij,...j->...", diff, np.linalg.inv(cov), diff)
    logdet = np.linalg.slogdet(cov)[1]
    want = -0.5 * (3 * math.log(2 * math.pi) + logdet + maha)
    ent = 0.5 * (3 * (1 + math.log(2 * math.pi)) + logdet)
    for name, kw in (
        ("covariance_matrix", {"covariance_matrix": t64(cov)}),
        ("precision_matrix", {"precision_matrix": t64(np.linalg.inv(cov))}),
        ("scale_tril", {"scale_tril": t64(np.linalg.cholesky(cov))}),
    ):
        m = D.MultivariateNormal(t64(loc), **kw)
        assert m.batch_shape == (2,) and m.event_shape == (3,)
        check(f"MVN({name}) log_prob", m.log_prob(t64(x)), want)
        check(f"MVN({name}) entropy", m.entropy(), ent)
        check(f"MVN({name}) covariance", m.covariance_matrix, cov)
        check(f"MVN({name}) precision", m.precision_matrix, np.linalg.inv(cov))
        check(f"MVN({name}) scale_tril", m.scale_tril, np.linalg.cholesky(cov))
        check(f"MVN({name}) variance", m.variance, np.diagonal(cov, 0, -2, -1))
        check(f"MVN({name}) mean", m.mean, loc)
    check.verify()
    # a loc without batch dims broadcasts against a batch of covariances
    m = D.MultivariateNormal(t64(loc[0]), covariance_matrix=t64(cov))
    assert m.batch_shape == (2,) and m.loc.shape == (2, 3)


# -- KL divergences ---------------------------------------------------------------------
def _norm_logpdf(m, s):
    return lambda x: -0.5 * ((x - m) / s) ** 2 - math.log(s) - 0.5 * math.log(2 * math.pi)


def _kl_integral(logp, logq, lo, hi):
    return integrate(lambda x: np.exp(logp(x)) * (logp(x) - logq(x)), lo, hi)


def _kl_univariate(check):
    """KL of univariate continuous pairs against the integral of p log(p / q)."""
    cases = [
        ("Normal", D.Normal(0.3, 0.7), D.Normal(-0.4, 1.3), _norm_logpdf(0.3, 0.7),
         _norm_logpdf(-0.4, 1.3), -12, 12),
        ("Laplace", D.Laplace(0.3, 0.7), D.Laplace(-0.4, 1.3),
         lambda x: -math.log(1.4) - np.abs(x - 0.3) / 0.7,
         lambda x: -math.log(2.6) - np.abs(x + 0.4) / 1.3, -40, 40),
        ("Exponential", D.Exponential(2.0), D.Exponential(0.5), lambda x: math.log(2.0) - 2.0 * x,
         lambda x: math.log(0.5) - 0.5 * x, 0, 40),
        ("Gamma", D.Gamma(2.5, 1.5), D.Gamma(4.0, 0.8),
         lambda x: 2.5 * math.log(1.5) + 1.5 * np.log(x) - 1.5 * x - math.lgamma(2.5),
         lambda x: 4.0 * math.log(0.8) + 3.0 * np.log(x) - 0.8 * x - math.lgamma(4.0), 1e-12, 60),
        ("Beta", D.Beta(2.5, 3.5), D.Beta(4.0, 1.5),
         lambda x: 1.5 * np.log(x) + 2.5 * np.log1p(-x) - float(lbeta(2.5, 3.5)),
         lambda x: 3.0 * np.log(x) + 0.5 * np.log1p(-x) - float(lbeta(4.0, 1.5)), 1e-12, 1 - 1e-12),
        ("Uniform-Normal", D.Uniform(0.5, 1.5), D.Normal(0.2, 0.9), lambda x: 0.0 * x,
         _norm_logpdf(0.2, 0.9), 0.5, 1.5),
        ("Uniform", D.Uniform(0.5, 1.5), D.Uniform(0.0, 4.0), lambda x: 0.0 * x,
         lambda x: -math.log(4) + 0 * x, 0.5, 1.5),
    ]  # fmt: skip
    for name, p, q, logp, logq, lo, hi in cases:
        check(f"KL {name}", D.kl_divergence(p, q), _kl_integral(logp, logq, lo, hi), rtol=2e-6)
    check("KL Uniform outside", D.kl_divergence(D.Uniform(0.0, 4.0), D.Uniform(0.5, 1.5)), math.inf)
    check("KL Normal-Uniform", D.kl_divergence(D.Normal(0.0, 1.0), D.Uniform(0.0, 1.0)), math.inf)


def _kl_discrete(check):
    """KL of discrete pairs against sums over the support."""
    p, q = np.array([0.2, 0.6, 0.9]), np.array([0.5, 0.1, 0.9])
    kl = D.kl_divergence(D.Bernoulli(t64(p)), D.Bernoulli(logits=t64(np.log(q / (1 - q)))))
    check("KL Bernoulli", kl, p * np.log(p / q) + (1 - p) * np.log((1 - p) / (1 - q)))
    edge = D.kl_divergence(D.Bernoulli(t64([0.0, 1.0, 0.3])), D.Bernoulli(t64([0.4, 0.4, 0.0])))
    check("KL Bernoulli edges", edge, [-math.log(0.6), -math.log(0.4), math.inf])

    pc = np.array([[0.2, 0.3, 0.5], [0.0, 0.5, 0.5]])
    qc = np.array([[0.4, 0.4, 0.2], [0.3, 0.3, 0.4]])
    want = (np.where(pc > 0, pc * np.log(np.where(pc > 0, pc / qc, 1)), 0)).sum(-1)
    kl = D.kl_divergence(D.Categorical(t64(pc)), D.Categorical(logits=t64(np.log(qc))))
    check("KL Categorical", kl, want)
    kl = D.kl_divergence(D.OneHotCategorical(t64(pc)), D.OneHotCategorical(t64(qc)))
    check("KL OneHotCategorical", kl, want)
    kl = D.kl_divergence(D.Categorical(t64([0.5, 0.5])), D.Categorical(t64([1.0, 0.0])))
    check("KL Categorical outside", kl, math.inf)

    k = np.arange(400.0)
    lp, lq = 3.0, 5.5
    pmf = np.exp(k * math.log(lp) - lp - lgamma(k + 1))
    want = (pmf * (k * math.log(lp / lq) - lp + lq)).sum()
    check("KL Poisson", D.kl_divergence(D.Poisson(t64(lp)), D.Poisson(t64(lq))), want)
    gp, gq = 0.3, 0.6
    pmf = gp * (1 - gp) ** k
    want = (pmf * (k * math.log((1 - gp) / (1 - gq)) + math.log(gp / gq))).sum()
    check("KL Geometric", D.kl_divergence(D.Geometric(t64(gp)), D.Geometric(t64(gq))), want)


def _kl_multivariate(check):
    a, b = RNG.standard_normal((2, 3, 3))
    sp, sq = a @ a.T + np.eye(3), b @ b.T + np.eye(3)
    mp, mq = RNG.standard_normal(3), RNG.standard_normal(3)
    iq = np.linalg.inv(sq)
    logdets = np.linalg.slogdet(sq)[1] - np.linalg.slogdet(sp)[1]
    want = 0.5 * (np.trace(iq @ sp) + (mq - mp) @ iq @ (mq - mp) - 3 + logdets)
    p = D.MultivariateNormal(t64(mp), covariance_matrix=t64(sp))
    q = D.MultivariateNormal(t64(mq), scale_tril=t64(np.linalg.cholesky(sq)))
    check("KL MultivariateNormal", D.kl_divergence(p, q), want)

    ap = np.array([[0.5, 1.5, 3.0], [2.0, 1.0, 4.0]])
    aq = np.array([[1.0, 1.0, 1.0], [3.0, 0.7, 2.0]])
    a0, b0 = ap.sum(-1), aq.sum(-1)
    want = lgamma(a0) - lgamma(ap).sum(-1) - lgamma(b0) + lgamma(aq).sum(-1)
    want = want + ((ap - aq) * (digamma(ap) - digamma(a0)[:, None])).sum(-1)
    check("KL Dirichlet", D.kl_divergence(D.Dirichlet(t64(ap)), D.Dirichlet(t64(aq))), want)

    # Independent sums the base KL over the reinterpreted dims; LogNormal's is Normal's
    mu1, mu2 = RNG.standard_normal((2, 2, 4))
    s1, s2 = RNG.uniform(0.5, 2, (2, 2, 4))
    z = (mu1 - mu2) / s2
    base = 0.5 * ((s1 / s2) ** 2 + z**2 - 1 - 2 * np.log(s1 / s2))
    n1, n2 = D.Normal(t64(mu1), t64(s1)), D.Normal(t64(mu2), t64(s2))
    check("KL Normal batch", D.kl_divergence(n1, n2), base)
    kl = D.kl_divergence(D.Independent(n1, 1), D.Independent(n2, 1))
    check("KL Independent", kl, base.sum(-1))
    kl = D.kl_divergence(D.LogNormal(t64(mu1), t64(s1)), D.LogNormal(t64(mu2), t64(s2)))
    check("KL LogNormal", kl, base)


def test_kl_divergences():
    check = Checks()
    _kl_univariate(check)
    _kl_discrete(check)
    _kl_multivariate(check)
    check.verify()


def test_kl_dispatch_and_missing_pairs():
    with pytest.raises(NotImplementedError, match="No KL"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Bernoulli(0.5))
    with pytest.raises(NotImplementedError):
        D.kl_divergence(
            D.Independent(D.Normal(t64([[0.0]]), 1.0), 1),
            D.Independent(D.Normal(t64([[0.0]]), 1.0), 2),
        )

    class MyNormal(D.Normal):
        pass

    # a subclass uses its parent's rule until it has its own
    assert D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(1.0, 1.0)).item() == pytest.approx(0.5)

    @D.register_kl(MyNormal, D.Normal)
    def _mine(p, q):
        return p.loc * 0 + 42.0

    assert D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(1.0, 1.0)).item() == 42.0
    assert D.kl_divergence(D.Normal(0.0, 1.0), D.Normal(1.0, 1.0)).item() == pytest.approx(0.5)
    with pytest.raises(TypeError):
        D.register_kl(int, D.Normal)


# -- sampling ---------------------------------------------------------------------------
N = 20000


def _moments(d, mean, var):
    x = d.sample((N,)).numpy().astype(np.float64)
    assert x.shape == (N,) + d.batch_shape + d.event_shape
    m, v = x.mean(0), x.var(0)
    assert np.all(np.abs(m - mean) <= 5 * np.sqrt(np.asarray(var) / N)), (type(d).__name__, m, mean)
    np.testing.assert_allclose(v, var, rtol=0.1, err_msg=type(d).__name__)


def test_sample_moments():
    mlfuse.manual_seed(0)
    _moments(D.Normal(t64([0.0, 3.0]), t64([1.0, 0.5])), [0.0, 3.0], [1.0, 0.25])
    _moments(D.Uniform(-1.0, 3.0), 1.0, 16 / 12)
    _moments(D.Exponential(2.0), 0.5, 0.25)
    _moments(D.Laplace(1.0, 0.5), 1.0, 0.5)
    _moments(D.Gumbel(1.0, 2.0), 1 + 2 * EULER, math.pi**2 / 6 * 4)
    _moments(D.Gamma(t64([0.3, 4.0]), 2.0), [0.15, 2.0], [0.075, 1.0])
    _moments(D.Beta(2.0, 3.0), 0.4, 6 / (25 * 6))
    _moments(D.StudentT(6.0, 1.0, 2.0), 1.0, 4 * 6 / 4)
    _moments(D.LogNormal(0.0, 0.5), math.exp(0.125), math.expm1(0.25) * math.exp(0.25))
    _moments(D.Bernoulli(0.3), 0.3, 0.21)
    _moments(D.Poisson(t64([0.5, 7.0])), [0.5, 7.0], [0.5, 7.0])
    _moments(D.Binomial(10, 0.3), 3.0, 2.1)
    _moments(D.Geometric(0.25), 3.0, 12.0)
    p = np.array([0.1, 0.2, 0.0, 0.7])
    _moments(D.OneHotCategorical(t64(p)), p, p * (1 - p))
    _moments(
        D.Dirichlet(t64([1.0, 2.0, 5.0])), np.array([1, 2, 5]) / 8, np.array([7, 12, 15]) / (64 * 9)
    )
    cov = np.array([[2.0, 0.6], [0.6, 1.0]])
    x = D.MultivariateNormal(t64([1.0, -1.0]), covariance_matrix=t64(cov)).sample((N,)).numpy()
    np.testing.assert_allclose(np.cov(x.T), cov, atol=0.06)
    np.testing.assert_allclose(x.mean(0), [1.0, -1.0], atol=0.05)
    # the Cauchy has no moments: its quartiles
    c = D.Cauchy(1.0, 2.0).sample((N,)).numpy()
    np.testing.assert_allclose(np.quantile(c, [0.25, 0.5, 0.75]), [-1.0, 1.0, 3.0], atol=0.1)
    # categories are drawn in proportion, never one of probability 0
    s = D.Categorical(t64(p)).sample((N,)).numpy()
    assert s.dtype == np.int64
    np.testing.assert_allclose(np.bincount(s, minlength=4) / N, p, atol=0.01)
    assert not (s == 2).any()


def test_seeded_sampling_repeats():
    for make in (lambda: D.Normal(0.0, 1.0), lambda: D.Gamma(0.7, 1.0), lambda: D.Poisson(3.0)):
        mlfuse.manual_seed(123)
        a = make().sample((5,)).numpy()
        mlfuse.manual_seed(123)
        b = make().sample((5,)).numpy()
        np.testing.assert_array_equal(a, b)


# -- reparameterization gradients --------------------------------------------------------
def test_rsample_gradients():
    """Reparameterized samples carry the analytic gradients to the parameters:
    the location-scale families (z = loc + scale eps), Uniform, Exponential,
    LogNormal and MultivariateNormal (z = loc + L eps)."""
    mlfuse.manual_seed(1)
    runs = []
    for cls in (D.Normal, D.Laplace, D.Cauchy, D.Gumbel):
        loc, scale = t64([0.5, -1.0], True), t64([2.0, 0.3], True)
        z = cls(loc, scale).rsample((7,))
        (z * z).sum().backward()
        runs.append((cls.__name__, z, loc, scale))
    low, high = t64([0.0, 1.0], True), t64([2.0, 4.0], True)
    zu = D.Uniform(low, high).rsample((5,))
    zu.sum().backward()
    rate = t64([0.5, 3.0], True)
    ze = D.Exponential(rate).rsample((6,))
    ze.sum().backward()
    lloc, lscale = t64([0.2], True), t64([0.4], True)
    zl = D.LogNormal(lloc, lscale).rsample((6,))
    zl.sum().backward()
    mloc = t64([1.0, 2.0, 3.0], True)
    lt = np.array([[1.0, 0.0, 0.0], [0.5, 2.0, 0.0], [-0.3, 0.2, 0.7]])
    L = t64(lt, True)  # noqa: N806
    zm = D.MultivariateNormal(mloc, scale_tril=L).rsample((5,))
    (zm * t64([1.0, -2.0, 0.5])).sum().backward()
    cov = t64(lt @ lt.T, True)
    D.MultivariateNormal(mloc.detach(), covariance_matrix=cov).rsample(
        (3,)
    ).square().sum().backward()
    grads = [t.grad for r in runs for t in r[2:]]
    mlfuse.realize(*[r[1] for r in runs], *grads, zu, low.grad, high.grad, ze, rate.grad, zl,
                   lloc.grad, lscale.grad, zm, mloc.grad, L.grad, cov.grad)  # fmt: skip

    for _name, z, loc, scale in runs:
        zv = z.numpy()
        eps = (zv - loc.detach().numpy()) / scale.detach().numpy()
        close(loc.grad, (2 * zv).sum(0), rtol=1e-12)
        close(scale.grad, (2 * zv * eps).sum(0))
    u = (zu.numpy() - [0.0, 1.0]) / [2.0, 3.0]
    close(low.grad, (1 - u).sum(0))
    close(high.grad, u.sum(0))
    close(rate.grad, -(ze.numpy() / [0.5, 3.0]).sum(0))
    zv = zl.numpy()
    close(lloc.grad, zv.sum(0))
    close(lscale.grad, (zv * (np.log(zv) - 0.2) / 0.4).sum(0))
    eps = np.linalg.solve(lt, (zm.numpy() - [1.0, 2.0, 3.0]).T).T  # (5, 3)
    close(mloc.grad, 5 * np.array([1.0, -2.0, 0.5]))
    close(np.tril(L.grad.numpy()), np.tril(np.outer([1.0, -2.0, 0.5], eps.sum(0))), rtol=1e-8)
    # through the Cholesky factor of a covariance matrix: gradients reach it
    assert np.isfinite(cov.grad.numpy()).all() and np.abs(cov.grad.numpy()).sum() > 0


def _gamma_slope_by_quadrature(a, x):
    """dx/da at a fixed quantile: -(dF/da) / f, dF/da = int_0^x f(t) (log t - psi(a)) dt."""
    t = np.linspace(0, x, 400001)
    with np.errstate(divide="ignore", invalid="ignore"):
        g = np.exp((a - 1) * np.log(t) - t - math.lgamma(a)) * (np.log(t) - float(digamma(a)))
    g[0] = 0.0  # a > 1: the integrand vanishes at 0
    h = x / (t.size - 1)
    dfda = h / 3 * (g[0] + g[-1] + 4 * g[1:-1:2].sum() + 2 * g[2:-1:2].sum())
    return -dfda / math.exp((a - 1) * math.log(x) - x - math.lgamma(a))


def test_rsample_gradient_gamma_family():
    """Gamma, Beta, Dirichlet and StudentT samples carry the implicit
    reparameterization gradient: exact per sample, unbiased on average."""
    mlfuse.manual_seed(2)
    alpha1 = t64(np.full(4, 2.5), True)
    z1 = D.Gamma(alpha1, 1.0).rsample()
    z1.sum().backward()
    # E[dz/da] = d E[z]/da = 1/rate, E[dz/drate] = -a/rate^2
    alpha, rate = t64([0.2, 1.0, 6.0], True), t64([2.0, 2.0, 2.0], True)
    D.Gamma(alpha, rate).rsample((N,)).sum().backward()
    # Beta: d E[x]/da = b / (a + b)^2; Dirichlet: d E[x_0]/d a_j = (a0 [j = 0] - a_0) / a0^2
    a, b = t64([2.0], True), t64([3.0], True)
    D.Beta(a, b).rsample((N,)).sum().backward()
    c = t64([1.0, 2.0, 5.0], True)
    D.Dirichlet(c).rsample((N,))[:, 0].sum().backward()
    df, loc, sc = t64(5.0, True), t64(0.0, True), t64(1.0, True)
    D.StudentT(df, loc, sc).rsample((8,)).sum().backward()
    mlfuse.realize(z1, alpha1.grad, alpha.grad, rate.grad, a.grad, b.grad, c.grad, df.grad,
                   loc.grad, sc.grad)  # fmt: skip

    want = [_gamma_slope_by_quadrature(2.5, float(v)) for v in z1.detach().numpy()]
    close(alpha1.grad, want, rtol=1e-6)
    np.testing.assert_allclose(alpha.grad.numpy() / N, 0.5, rtol=0.05)
    np.testing.assert_allclose(rate.grad.numpy() / N, -np.array([0.2, 1.0, 6.0]) / 4, rtol=0.05)
    np.testing.assert_allclose(a.grad.numpy() / N, 3 / 25, rtol=0.05)
    np.testing.assert_allclose(b.grad.numpy() / N, -2 / 25, rtol=0.05)
    np.testing.assert_allclose(c.grad.numpy() / N, [7 / 64, -1 / 64, -1 / 64], rtol=0.08)
    assert loc.grad.item() == 8.0 and np.isfinite([df.grad.item(), sc.grad.item()]).all()
    # tiny concentrations: drawn in log space, no NaN, samples on the simplex
    tiny = D.Dirichlet(t64([0.01, 0.02, 0.01])).sample((50,)).numpy()
    assert np.isfinite(tiny).all() and np.allclose(tiny.sum(-1), 1)


def test_relaxed_distributions():
    mlfuse.manual_seed(4)
    logits = t64([0.3, -1.0, 2.0], True)
    rb = D.RelaxedBernoulli(t64(0.5), logits=logits, validate_args=False)
    z = rb.rsample((6,))
    rb.log_prob(z.detach()).sum().backward()
    g1 = logits.grad
    logits.grad = None
    ro = D.RelaxedOneHotCategorical(0.7, logits=logits, validate_args=False)
    s = ro.rsample((5,))
    s[:, 0].sum().backward()
    lp = ro.log_prob(s.detach())
    # the RelaxedBernoulli density: a change of variables of the logistic
    t, lg, y = 0.5, np.array([0.3, -1.0, 2.0]), np.array([0.2, 0.5, 0.9])
    x = np.log(y / (1 - y))
    want = math.log(t) + lg - t * x - 2 * np.log1p(np.exp(lg - t * x)) - np.log(y * (1 - y))
    got = D.RelaxedBernoulli(t64(t), logits=t64(lg)).log_prob(t64(y))
    mlfuse.realize(z, g1, s, logits.grad, lp, got)
    close(got, want)
    assert z.shape == (6, 3) and ((z.numpy() > 0) & (z.numpy() < 1)).all()
    assert s.shape == (5, 3) and np.allclose(s.numpy().sum(-1), 1)
    assert np.isfinite(g1.numpy()).all() and np.isfinite(logits.grad.numpy()).all()
    assert lp.shape == (5,) and np.isfinite(lp.numpy()).all()


# -- shapes ------------------------------------------------------------------------------
def test_shapes_expand_and_broadcasting():
    n = D.Normal(0.0, t64([[1.0, 2.0, 3.0]]))
    assert n.batch_shape == (1, 3) and n.loc.shape == (1, 3) and n.loc.dtype == F64
    assert n.sample().shape == (1, 3) and n.sample(4).shape == (4, 1, 3)
    assert n.rsample((2, 5)).shape == (2, 5, 1, 3)
    assert n.log_prob(t64([[[0.0]], [[1.0]]])).shape == (2, 1, 3)
    e = n.expand((4, 3))
    assert e.batch_shape == (4, 3) and e.sample((2,)).shape == (2, 4, 3)
    close(e.log_prob(t64(0.0)), np.broadcast_to(n.log_prob(t64(0.0)).numpy(), (4, 3)))
    s = D.Normal(0.0, 1.0)
    assert s.batch_shape == () and s.loc.dtype == mlfuse.float32 and s.sample((3,)).shape == (3,)
    c = D.Categorical(logits=Tensor.zeros(2, 5)).expand((3, 2))
    assert c.batch_shape == (3, 2) and c.sample((4,)).shape == (4, 3, 2)
    assert c.logits.shape == (3, 2, 5)
    b = D.Bernoulli(logits=t64([0.0, 1.0])).expand((3, 2))
    assert b.probs.shape == (3, 2) and b.param_shape == (3, 2)
    ind = D.Independent(D.Normal(t64(np.zeros((2, 3, 4))), 1.0), 2)
    assert ind.batch_shape == (2,) and ind.event_shape == (3, 4)
    assert ind.log_prob(t64(np.zeros((5, 2, 3, 4)))).shape == (5, 2)
    assert ind.expand((6, 2)).sample().shape == (6, 2, 3, 4)
    assert ind.entropy().shape == (2,)
    m = D.MultivariateNormal(t64(np.zeros(3)), scale_tril=t64(np.eye(3))).expand((2,))
    assert m.batch_shape == (2,) and m.rsample((4,)).shape == (4, 2, 3)
    assert D.Dirichlet(t64(np.ones((2, 4)))).expand((3, 2)).sample().shape == (3, 2, 4)
    oh = D.OneHotCategorical(logits=t64(np.zeros(3))).expand((2,))
    assert oh.sample((5,)).shape == (5, 2, 3)
    assert D.Bernoulli(0.3).enumerate_support().tolist() == [0.0, 1.0]
    with pytest.raises(ValueError, match="reinterpreted_batch_ndims"):
        D.Independent(D.Normal(t64([0.0]), 1.0), 2)


def test_lazy_without_validation():
    mu = t64([0.0, 1.0]) * 2  # lazy
    d = D.Normal(mu, 1.0, validate_args=False)
    lp = d.log_prob(d.rsample())
    assert not mu.node.realized and not lp.node.realized
    assert lp.numpy().shape == (2,)
    # validation reads the parameters: it realizes them (once)
    sigma = t64([1.0, 2.0]) * 2
    D.Normal(0.0, sigma)
    assert sigma.node.realized
    # sample() carries no gradient, rsample() does
    a = t64([1.5], True)
    assert not D.Gamma(a, 1.0).sample().requires_grad
    assert D.Gamma(a, 1.0).rsample().requires_grad


# -- validation --------------------------------------------------------------------------
def test_validation_errors():
    with pytest.raises(ValueError, match=r"Expected parameter scale .* constraint GreaterThan"):
        D.Normal(0.0, t64([1.0, -1.0]))
    with pytest.raises(ValueError, match="probs"):
        D.Bernoulli(1.5)
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        D.Categorical(probs=t64([0.5, 0.5]), logits=t64([0.0, 0.0]))
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        D.Bernoulli()
    with pytest.raises(ValueError, match="at least one-dimensional"):
        D.Categorical(t64(1.0))
    with pytest.raises(ValueError, match="Exactly one of"):
        D.MultivariateNormal(t64([0.0, 0.0]))
    with pytest.raises(ValueError, match="PositiveDefinite"):
        D.MultivariateNormal(t64([0.0, 0.0]), covariance_matrix=t64([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(ValueError, match="low >= high"):
        D.Uniform(1.0, 0.0)
    with pytest.raises(ValueError, match="to be positive"):
        D.Geometric(0.0)
    d = D.Exponential(t64([1.0, 2.0]))
    with pytest.raises(ValueError, match=r"within the support \(GreaterThanEq"):
        d.log_prob(t64([1.0, -1.0]))
    with pytest.raises(ValueError, match="must be a Tensor"):
        d.log_prob(1.0)
    with pytest.raises(ValueError, match="not broadcastable"):
        d.log_prob(t64([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="right-most size of value must match event_shape"):
        D.Dirichlet(t64([1.0, 1.0, 1.0])).log_prob(t64([0.5, 0.5]))
    with pytest.raises(ValueError, match="support"):
        D.Categorical(t64([0.5, 0.5])).log_prob(Tensor([2]))
    with pytest.raises(ValueError, match="support"):
        D.Beta(2.0, 2.0).log_prob(t64(1.5))
    # without validation the same calls compute
    assert math.isnan(D.Normal(0.0, -1.0, validate_args=False).log_prob(t64(0.0)).item())
    assert D.Exponential(1.0, validate_args=False).log_prob(t64(-1.0)).item() == pytest.approx(1.0)


def test_default_validate_args_switch():
    with pytest.raises(ValueError):
        D.Distribution.set_default_validate_args("yes")
    D.Distribution.set_default_validate_args(False)
    try:
        assert math.isnan(D.Normal(0.0, -1.0).log_prob(t64(0.0)).item())
        with pytest.raises(ValueError):
            D.Normal(0.0, -1.0, validate_args=True)
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Normal(0.0, -1.0)


def test_constraints():
    assert constraints.positive.check(t64([1.0, 0.0, -1.0])).tolist() == [True, False, False]
    assert constraints.simplex.check(t64([[0.5, 0.5], [0.7, 0.7]])).tolist() == [True, False]
    assert constraints.integer_interval(0, 3).check(t64([0.0, 3.0, 1.5, 4.0])).tolist() == [
        True,
        True,
        False,
        False,
    ]
    assert constraints.lower_cholesky.check(t64(np.eye(2))).item()
    assert constraints.independent(constraints.real, 1).check(t64([[0.0, math.nan]])).tolist() == [
        False
    ]
    assert repr(constraints.interval(0.0, 1.0)) == "Interval(lower_bound=0.0, upper_bound=1.0)"
    assert constraints.is_dependent(D.Uniform.support)
    assert D.Uniform(0.0, 2.0).support.check(t64([1.0, 2.5])).tolist() == [True, False]
    assert D.Categorical(t64([0.2, 0.8])).support.upper_bound == 1
    with pytest.raises(NotImplementedError, match="does not implement"):
        D.Poisson(1.0).entropy()
    with pytest.raises(NotImplementedError, match="Inhomogeneous total count"):
        D.Binomial(t64([2.0, 3.0]), 0.5).entropy()


# -- transforms and TransformedDistribution ---------------------------------------------
def _num_log_det(f, x, h=1e-6):
    return np.log(np.abs((f(x + h) - f(x - h)) / (2 * h)))


def test_transforms():
    check = Checks()
    x = np.array([-1.5, -0.2, 0.4, 2.0])
    cases = [
        (transforms.ExpTransform(), np.exp),
        (transforms.AffineTransform(1.0, -3.0), lambda v: 1 - 3 * v),
        (transforms.SigmoidTransform(), lambda v: 1 / (1 + np.exp(-v))),
        (transforms.TanhTransform(), np.tanh),
        (transforms.SoftplusTransform(), lambda v: np.log1p(np.exp(v))),
        (
            transforms.ComposeTransform(
                [transforms.AffineTransform(0.5, 2.0), transforms.ExpTransform()]
            ),
            lambda v: np.exp(0.5 + 2 * v),
        ),
    ]
    for t, f in cases:
        name = type(t).__name__
        y = t(t64(x))
        check(f"{name} forward", y, f(x))
        check(f"{name} inverse", t.inv(y), x, rtol=1e-8)
        ldj = _num_log_det(f, x)
        check(f"{name} ldj", t.log_abs_det_jacobian(t64(x), y), ldj, rtol=1e-6, atol=1e-8)
        check(f"{name} inv ldj", t.inv.log_abs_det_jacobian(y, t64(x)), -ldj, rtol=1e-6, atol=1e-8)
        assert t.inv.inv is t and t == t and t.inv == t.inv
        assert t.domain.event_dim == 0 and t.codomain.event_dim == 0
    aff = transforms.AffineTransform(t64([0.0, 1.0]), t64([2.0, 3.0]), event_dim=1)
    check("Affine event_dim ldj", aff.log_abs_det_jacobian(t64(np.zeros((5, 2))), None),
          np.full(5, math.log(6.0)))  # fmt: skip
    check.verify()
    assert aff.forward_shape((4, 1)) == (4, 2)
    assert transforms.ExpTransform() == transforms.ExpTransform()
    assert transforms.AffineTransform(0.0, 2.0) != transforms.AffineTransform(0.0, 3.0)
    assert transforms.ExpTransform() != transforms.SigmoidTransform()
    assert transforms.ExpTransform().sign == 1 and transforms.AffineTransform(0.0, -2.0).sign == -1
    cached = transforms.TanhTransform(cache_size=1)
    xt = t64(x)
    assert cached.inv(cached(xt)) is xt


def _normal_logpdf(x, m, s):
    return -0.5 * ((x - m) / s) ** 2 - np.log(s) - 0.5 * math.log(2 * math.pi)


def test_transformed_distribution_log_prob():
    check = Checks()
    mu, s = np.array([0.1, -0.5]), np.array([0.6, 1.2])
    base = D.Normal(t64(mu), t64(s))
    # exp(a + b x): log-normal of loc a + b mu, scale b s
    td = D.TransformedDistribution(
        base, [transforms.AffineTransform(0.5, 2.0), transforms.ExpTransform()]
    )
    assert td.batch_shape == (2,) and td.event_shape == () and td.has_rsample
    assert td.support is constraints.positive
    y = np.array([0.7, 3.0])
    m2, s2 = 0.5 + 2 * mu, 2 * s
    want = -np.log(y * s2 * math.sqrt(2 * math.pi)) - (np.log(y) - m2) ** 2 / (2 * s2**2)
    check("exp-affine log_prob", td.log_prob(t64(y)), want)
    check("exp-affine cdf", td.cdf(t64(y)), 0.5 * (1 + erf((np.log(y) - m2) / (s2 * math.sqrt(2)))))
    q = np.array([0.3, 0.8])
    check("exp-affine icdf", td.cdf(td.icdf(t64(q))), q)
    # Independent over a transformed base sums the log-probs
    check("Independent(transformed)", D.Independent(td, 1).log_prob(t64(y)), want.sum())
    # tanh-squashed normal (as in SAC): log N(atanh y) - log(1 - y^2)
    sq = D.TransformedDistribution(base, transforms.TanhTransform(cache_size=1))
    y = np.array([-0.3, 0.95])
    want = _normal_logpdf(np.arctanh(y), mu, s) - np.log1p(-(y**2))
    check("tanh log_prob", sq.log_prob(t64(y)), want)
    z = sq.rsample((3,))
    lpz = sq.log_prob(z)  # the cached pre-image, no atanh round trip
    # a decreasing transform flips the cdf
    neg = D.TransformedDistribution(base, transforms.AffineTransform(0.0, -1.0))
    check(
        "decreasing cdf", neg.cdf(t64([0.2, 0.2])), 1 - 0.5 * (1 + erf((-0.2 - mu) / (s * 2**0.5)))
    )
    # an event-dim transform makes the base Independent
    ev = D.TransformedDistribution(
        base, transforms.AffineTransform(t64([1.0, 2.0]), 3.0, event_dim=1)
    )
    assert ev.batch_shape == () and ev.event_shape == (2,)
    yv = np.array([0.4, 1.1])
    want = (_normal_logpdf((yv - [1.0, 2.0]) / 3, mu, s) - math.log(3)).sum()
    check("event-dim affine log_prob", ev.log_prob(t64(yv)), want)
    check.verify()
    assert lpz.shape == (3, 2) and np.isfinite(lpz.numpy()).all()
    assert ev.sample((4,)).shape == (4, 2) and ev.expand((3,)).batch_shape == (3,)


def test_log_prob_gradients():
    loc, scale = t64([0.3, -1.0], True), t64([0.8, 2.0], True)
    x = np.array([1.0, 0.5])
    D.Normal(loc, scale).log_prob(t64(x)).sum().backward()
    logits = t64([[0.5, -0.2, 1.0]], True)
    D.Categorical(logits=logits).log_prob(Tensor([2])).sum().backward()
    # at integer concentrations too (lgamma's own gradient is NaN there)
    a = t64([2.0, 0.7], True)
    D.Gamma(a, 1.0).log_prob(t64([1.5, 1.5])).sum().backward()
    check = Checks()
    check("Normal d/dloc", loc.grad, (x - [0.3, -1.0]) / np.array([0.8, 2.0]) ** 2)
    z2 = (x - [0.3, -1.0]) ** 2
    check("Normal d/dscale", scale.grad, z2 / np.array([0.8, 2.0]) ** 3 - 1 / np.array([0.8, 2.0]))
    p = np.exp([0.5, -0.2, 1.0]) / np.exp([0.5, -0.2, 1.0]).sum()
    check("Categorical d/dlogits", logits.grad, [np.eye(3)[2] - p])
    check("Gamma d/dconcentration", a.grad, math.log(1.5) - digamma([2.0, 0.7]))
    check.verify()
