"""``mlfuse.distributions`` (``torch.distributions``): the multivariate families
added after the first set (Multinomial, LowRankMultivariateNormal,
MixtureSameFamily, LKJCholesky, Wishart, LogisticNormal,
OneHotCategoricalStraightThrough) against float64 closed forms written here,
the ExponentialFamily base (entropies and KL through autograd), and the KL
rules of the new families and of PyTorch's cross-family pairs, against
numerical integration and dense formulas. A few values are PyTorch 2.13's, as
literals (marked where they appear)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import mlfuse.distributions as D
from dist_refs import _cb_refs, Checks, digamma, erf, integrate, lbeta, lgamma, t64
from mlfuse.distributions import transforms


def mvn_logpdf(x, mu, cov):
    d = x - mu
    k = mu.shape[-1]
    _, logdet = np.linalg.slogdet(cov)
    return -0.5 * (k * math.log(2 * math.pi) + logdet + d @ np.linalg.solve(cov, d))


# -- closed forms --------------------------------------------------------------------


def _closed_forms_multivariate(check):
    # Multinomial: log_prob, moments, and the entropy as an exact sum over all counts
    p = np.array([[0.2, 0.3, 0.5], [0.0, 0.2, 0.8]])
    mn = D.Multinomial(4, t64(p))
    x = np.array([[1.0, 2.0, 1.0], [0.0, 1.0, 3.0]])
    logp = (
        lgamma(5.0)
        - lgamma(x + 1).sum(-1)
        + np.where(x > 0, x * np.log(np.maximum(p, 1e-300)), 0).sum(-1)
    )
    check("Multinomial log_prob", mn.log_prob(t64(x)), logp)
    check("Multinomial mean", mn.mean, 4 * p)
    check("Multinomial variance", mn.variance, 4 * p * (1 - p))
    counts = np.array([(i, j, 4 - i - j) for i in range(5) for j in range(5 - i)], float)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(counts[:, None] > 0, counts[:, None] * np.log(p), 0).sum(-1)
    lp = lgamma(5.0) - lgamma(counts + 1).sum(-1)[:, None] + terms
    entropy = mn.entropy()
    mass = np.exp(lp)  # (0 where a count meets a zero probability)
    check("Multinomial entropy", entropy, -(mass * np.where(mass > 0, lp, 0)).sum(0))
    # PyTorch 2.13's Multinomial(4, [0.2, 0.3, 0.5]).entropy()
    check("Multinomial entropy (torch)", entropy[0], 2.3490839816745126, atol=1e-13)

    # LowRankMultivariateNormal against the dense covariance
    W = np.array([[1.0, 0.2], [0.0, -0.5], [0.3, 0.4]])  # noqa: N806
    dg = np.array([0.5, 1.0, 2.0])
    mu = np.array([0.1, -0.2, 0.3])
    cov = W @ W.T + np.diag(dg)
    lr = D.LowRankMultivariateNormal(t64(mu), t64(W), t64(dg))
    xs = np.array([[0.3, 0.1, -1.0], [1.0, 2.0, 3.0]])
    check("LR log_prob", lr.log_prob(t64(xs)), [mvn_logpdf(v, mu, cov) for v in xs])
    ent = 0.5 * (3 * (1 + math.log(2 * math.pi)) + np.linalg.slogdet(cov)[1])
    check("LR entropy", lr.entropy(), ent)
    check("LR covariance", lr.covariance_matrix, cov)
    check("LR precision", lr.precision_matrix, np.linalg.inv(cov))
    check("LR scale_tril", lr.scale_tril, np.linalg.cholesky(cov))
    check("LR variance", lr.variance, np.diag(cov))

    # MixtureSameFamily of normals
    w, mus, sds = np.array([0.2, 0.3, 0.5]), np.array([-1.0, 0.0, 2.0]), np.array([0.5, 1.0, 0.3])
    gmm = D.MixtureSameFamily(D.Categorical(t64(w)), D.Normal(t64(mus), t64(sds)))
    x = np.array([0.3, -1.0, 2.1])
    dens = (
        w / (sds * math.sqrt(2 * math.pi)) * np.exp(-((x[:, None] - mus) ** 2) / (2 * sds**2))
    ).sum(-1)
    check("MSF log_prob", gmm.log_prob(t64(x)), np.log(dens))
    check(
        "MSF cdf",
        gmm.cdf(t64(x)),
        (w * 0.5 * (1 + erf((x[:, None] - mus) / (sds * math.sqrt(2))))).sum(-1),
    )
    mean = (w * mus).sum()
    check("MSF mean", gmm.mean, mean)
    check("MSF variance", gmm.variance, (w * (sds**2 + mus**2)).sum() - mean**2)

    # LKJCholesky (dim 3): the normalizer in closed form,
    # B(1/2, eta + 1/2) (the first row) times pi / eta (the second, over the unit disk)
    eta = np.array([0.5, 2.0])
    y = transforms.CorrCholeskyTransform()(t64([0.3, -0.8, 0.5])).numpy()
    lkj3 = D.LKJCholesky(3, t64(eta)).log_prob(t64(y))
    log_z = np.log(np.exp(lbeta(0.5, eta + 0.5)) * math.pi / eta)
    want = (2 * eta - 1) * math.log(y[1, 1]) + (2 * eta - 2) * math.log(y[2, 2]) - log_z
    check("LKJ3 log_prob", lkj3, want)
    # PyTorch 2.13's LKJCholesky(3, [0.5, 2.0]).log_prob(that factor)
    check("LKJ3 log_prob (torch)", lkj3, [-2.1201561796826196, -1.5702417824782922], atol=1e-13)

    # Wishart
    S = np.array([[2.0, 0.3, 0.1], [0.3, 1.5, -0.2], [0.1, -0.2, 1.0]])  # noqa: N806
    X = np.array([[1.0, 0.2, 0.0], [0.2, 2.0, 0.5], [0.0, 0.5, 1.5]])  # noqa: N806
    nu = np.array([3.5, 6.0])
    wi = D.Wishart(t64(nu), covariance_matrix=t64(S))

    def mvlgamma(a, p):
        return p * (p - 1) / 4 * math.log(math.pi) + sum(lgamma(a - j / 2) for j in range(p))

    def mvdigamma(a, p):
        return sum(digamma(a - j / 2) for j in range(p))

    ld_s, ld_x = np.linalg.slogdet(S)[1], np.linalg.slogdet(X)[1]
    tr = np.trace(np.linalg.solve(S, X))
    logp = (
        (nu - 4) / 2 * ld_x
        - tr / 2
        - nu * 3 / 2 * math.log(2)
        - nu / 2 * ld_s
        - mvlgamma(nu / 2, 3)
    )
    wlp = wi.log_prob(t64(X))
    check("Wishart log_prob", wlp, logp)
    ent = (
        2 * (3 * math.log(2) + ld_s)
        + mvlgamma(nu / 2, 3)
        - (nu - 4) / 2 * mvdigamma(nu / 2, 3)
        + nu * 3 / 2
    )
    check("Wishart entropy", wi.entropy(), ent)
    # PyTorch 2.13's values for the same Wishart
    check("Wishart log_prob (torch)", wlp, [-9.230708556396275, -12.838668888751068], atol=1e-12)
    check("Wishart mean", wi.mean, nu[:, None, None] * S)
    check(
        "Wishart variance",
        wi.variance,
        nu[:, None, None] * (S**2 + np.outer(np.diag(S), np.diag(S))),
    )
    check("Wishart mode", wi.mode, np.stack([np.full((3, 3), np.nan), 2 * S]))
    check(
        "Wishart(precision) mean",
        D.Wishart(t64(5.0), precision_matrix=t64(S)).mean,
        5 * np.linalg.inv(S),
    )

    # LogisticNormal: the normal density of the inverse stick breaking, over its Jacobian
    loc, sc = np.array([0.1, -0.5, 1.0]), np.array([0.5, 1.0, 2.0])
    yv = np.array([0.1, 0.2, 0.3, 0.4])
    ln = D.LogisticNormal(t64(loc), t64(sc)).log_prob(t64(yv))
    zz = yv[:-1] / (1 - np.concatenate([[0.0], np.cumsum(yv[:-2])]))
    xv = np.log(zz) - np.log1p(-zz) + np.log(np.arange(3, 0, -1))
    normal = (-0.5 * ((xv - loc) / sc) ** 2 - np.log(sc) - 0.5 * math.log(2 * math.pi)).sum()
    check("LN log_prob", ln, normal - (np.log(yv[:-1]) + np.log1p(-zz)).sum())
    # PyTorch 2.13's LogisticNormal([0.1, -0.5, 1.0], [0.5, 1.0, 2.0]).log_prob(yv)
    check("LN log_prob (torch)", ln, 0.19308544387201731, atol=1e-13)

    # OneHotCategoricalStraightThrough: OneHotCategorical's log_prob
    st = D.OneHotCategoricalStraightThrough(t64([0.2, 0.3, 0.5]))
    check("OHST log_prob", st.log_prob(t64([0.0, 1.0, 0.0])), math.log(0.3))


def test_closed_forms_multivariate():
    check = Checks()
    _closed_forms_multivariate(check)
    check.verify()


def test_exponential_family():
    """The Bregman-divergence entropy and KL of ExponentialFamily (through
    autograd) agree with the closed forms of each family."""
    check = Checks()
    from mlfuse.distributions.kl import _kl_expfamily_expfamily

    p, q = D.Normal(t64([0.0, 1.0]), t64([0.5, 2.0])), D.Normal(t64([0.3, 1.0]), t64([0.7, 1.0]))
    check(
        "Normal entropy",
        D.ExponentialFamily.entropy(p),
        0.5 * np.log(2 * math.pi * math.e * np.array([0.25, 4.0])),
    )
    check(
        "Normal KL",
        _kl_expfamily_expfamily(p, q),
        np.log([1.4, 0.5])
        + (np.array([0.25, 4.0]) + np.array([0.09, 0.0])) / (2 * np.array([0.49, 1.0]))
        - 0.5,
    )
    check(
        "Exponential entropy",
        D.ExponentialFamily.entropy(D.Exponential(t64([0.5, 3.0]))),
        1 - np.log([0.5, 3.0]),
    )
    cb = D.ContinuousBernoulli(t64([0.2, 0.7]))
    check(
        "CB entropy",
        D.ExponentialFamily.entropy(cb),
        _cb_refs(np.array([0.2, 0.7]), 0.5, 0.5)[-1],
        atol=1e-9,
    )
    check.verify()
    assert all(isinstance(d, D.ExponentialFamily) for d in (p, cb, D.Gamma(1.0, 1.0), D.Chi2(1.0)))
    # Wishart has no rule of its own: the Bregman one
    p = D.Wishart(t64(4.0), scale_tril=t64([[1.0, 0.0], [0.5, 1.2]]))
    q = D.Wishart(t64(5.0), covariance_matrix=t64([[2.0, 0.3], [0.3, 1.0]]))
    sp, sq = p.covariance_matrix.numpy(), q.covariance_matrix.numpy()

    def mvdg(a):
        return digamma(a) + digamma(a - 0.5)

    # KL of Wisharts: (nu_q / 2)(log|Sq| - log|Sp|) + (nu_p / 2)(tr(Sq^-1 Sp) - p)
    # + log Gamma_p(nu_q / 2) - log Gamma_p(nu_p / 2) + (nu_p - nu_q) / 2 psi_p(nu_p / 2)
    ratio = np.linalg.solve(sq, sp)
    want = (
        -2.5 * np.linalg.slogdet(ratio)[1]
        + 2.0 * (np.trace(ratio) - 2)
        + (math.lgamma(2.5) + math.lgamma(2.0))
        - (math.lgamma(2.0) + math.lgamma(1.5))
        - 0.5 * mvdg(2.0)
    )
    np.testing.assert_allclose(D.kl_divergence(p, q).item(), want, rtol=1e-9)
    with pytest.raises(NotImplementedError, match="different exponential families"):
        D.kl_divergence(D.Gamma(1.0, 1.0), D.Bernoulli(0.5))
    with pytest.raises(NotImplementedError, match="does not implement entropy"):
        D.Poisson(1.0).entropy()
    assert D.Chi2(1.0)._mean_carrier_measure == 0


# -- KL divergences -------------------------------------------------------------------------
def _kl_numeric(p_logpdf, q_logpdf, lo, hi, log_grid=False):
    """``E_p[log p - log q]`` by Simpson's rule (in ``log x`` where the
    integrand has a log singularity at 0)."""

    def f(x):
        return np.exp(p_logpdf(x)) * (p_logpdf(x) - q_logpdf(x))

    if log_grid:
        return integrate(lambda t: f(np.exp(t)) * np.exp(t), math.log(lo), math.log(hi))
    return integrate(f, lo, hi)


def norm_lp(m, s):
    return lambda x: -0.5 * ((x - m) / s) ** 2 - math.log(s) - 0.5 * math.log(2 * math.pi)


def test_kl_divergences():
    check = Checks()
    # by numerical integration of the densities written here
    hn = lambda s: lambda x: math.log(2) + norm_lp(0.0, s)(x)  # noqa: E731
    check(
        "HN-HN",
        D.kl_divergence(D.HalfNormal(t64(0.7)), D.HalfNormal(t64(1.6))),
        _kl_numeric(hn(0.7), hn(1.6), 0, 12),
        rtol=1e-8,
    )
    par = lambda s, a: lambda x: math.log(a) + a * math.log(s) - (a + 1) * np.log(x)  # noqa: E731
    check(
        "Pareto-Pareto",
        D.kl_divergence(D.Pareto(t64(1.5), t64(3.0)), D.Pareto(t64(1.0), t64(2.0))),
        _kl_numeric(par(1.5, 3.0), par(1.0, 2.0), 1.5, 1e7, True),
        rtol=1e-8,
    )
    check(
        "Pareto-Pareto inf",
        D.kl_divergence(D.Pareto(t64(1.0), t64(3.0)), D.Pareto(t64(1.5), t64(2.0))),
        np.inf,
    )
    p_cb, q_cb = D.ContinuousBernoulli(t64(0.3)), D.ContinuousBernoulli(t64(0.8))

    def cb_lp(p):
        lc = math.log(2 * math.atanh(1 - 2 * p) / (1 - 2 * p))
        return lambda x: x * math.log(p) + (1 - x) * math.log1p(-p) + lc

    check(
        "CB-CB", D.kl_divergence(p_cb, q_cb), _kl_numeric(cb_lp(0.3), cb_lp(0.8), 0, 1), rtol=1e-8
    )
    check(
        "CB-Normal",
        D.kl_divergence(p_cb, D.Normal(t64(0.2), t64(0.7))),
        _kl_numeric(cb_lp(0.3), norm_lp(0.2, 0.7), 0, 1),
        rtol=1e-8,
    )
    check(
        "CB-Exponential",
        D.kl_divergence(p_cb, D.Exponential(t64(2.0))),
        _kl_numeric(cb_lp(0.3), lambda x: math.log(2.0) - 2.0 * x, 0, 1),
        rtol=1e-8,
    )
    check(
        "Beta-Normal",
        D.kl_divergence(D.Beta(t64(2.0), t64(3.0)), D.Normal(t64(0.2), t64(0.7))),
        _kl_numeric(
            lambda x: np.log(x) + 2 * np.log1p(-x) + math.log(12),
            norm_lp(0.2, 0.7),
            1e-12,
            1 - 1e-12,
        ),
        rtol=1e-7,
    )
    gam = lambda a, r: lambda x: a * math.log(r) + (a - 1) * np.log(x) - r * x - math.lgamma(a)  # noqa: E731
    check(
        "Exponential-Gamma",
        D.kl_divergence(D.Exponential(t64(1.5)), D.Gamma(t64(3.0), t64(2.0))),
        _kl_numeric(lambda x: math.log(1.5) - 1.5 * x, gam(3.0, 2.0), 1e-30, 60, True),
        rtol=1e-8,
    )
    gum = lambda m, b: lambda x: -math.log(b) - (x - m) / b - np.exp(-(x - m) / b)  # noqa: E731
    check(
        "Gamma-Gumbel",
        D.kl_divergence(D.Gamma(t64(3.0), t64(2.0)), D.Gumbel(t64(1.0), t64(2.0))),
        _kl_numeric(gam(3.0, 2.0), gum(1.0, 2.0), 1e-30, 60, True),
        rtol=1e-8,
    )
    lap = lambda m, b: lambda x: -math.log(2 * b) - np.abs(x - m) / b  # noqa: E731
    check(
        "Normal-Laplace",
        D.kl_divergence(D.Normal(t64(0.3), t64(0.8)), D.Laplace(t64(-0.2), t64(1.3))),
        _kl_numeric(norm_lp(0.3, 0.8), lap(-0.2, 1.3), -12, 12),
        rtol=1e-8,
    )
    check(
        "Uniform-Beta",
        D.kl_divergence(D.Uniform(t64(0.2), t64(0.7)), D.Beta(t64(2.0), t64(3.0))),
        _kl_numeric(
            lambda x: -math.log(0.5) + 0 * x,
            lambda x: np.log(x) + 2 * np.log1p(-x) + math.log(12),
            0.2,
            0.7,
        ),
        rtol=1e-8,
    )
    check(
        "Pareto-Exponential",
        D.kl_divergence(D.Pareto(t64(1.0), t64(3.0)), D.Exponential(t64(0.5))),
        _kl_numeric(par(1.0, 3.0), lambda x: math.log(0.5) - 0.5 * x, 1.0, 1e7, True),
        rtol=1e-8,
    )
    check(
        "Gumbel-Normal",
        D.kl_divergence(D.Gumbel(t64(0.5), t64(0.7)), D.Normal(t64(0.0), t64(1.5))),
        _kl_numeric(gum(0.5, 0.7), norm_lp(0.0, 1.5), -8, 30),
        rtol=1e-8,
    )
    # infinite where the supports do not nest
    for p, q in [
        (D.Normal(t64(0.0), t64(1.0)), D.Pareto(t64(1.0), t64(1.0))),
        (D.Gamma(t64(2.0), t64(1.0)), D.Beta(t64(2.0), t64(2.0))),
        (D.Laplace(t64(0.0), t64(1.0)), D.ContinuousBernoulli(t64(0.3))),
        (D.Exponential(t64(1.0)), D.Uniform(t64(0.0), t64(5.0))),
        (D.Poisson(t64(1.0)), D.Bernoulli(t64(0.3))),
    ]:
        check(f"{type(p).__name__}-{type(q).__name__} inf", D.kl_divergence(p, q), np.inf)

    # the low-rank normal against dense formulas
    W = np.array([[1.0, 0.2], [0.0, -0.5], [0.3, 0.4]])  # noqa: N806
    dg = np.array([0.5, 1.0, 2.0])
    mu = np.array([0.1, -0.2, 0.3])
    L = np.array([[1.0, 0.0, 0.0], [0.5, 1.2, 0.0], [-0.3, 0.2, 0.7]])  # noqa: N806

    def kl_dense(m0, s0, m1, s1):
        d = m1 - m0
        return 0.5 * (
            np.trace(np.linalg.solve(s1, s0))
            + d @ np.linalg.solve(s1, d)
            - 3
            + np.linalg.slogdet(s1)[1]
            - np.linalg.slogdet(s0)[1]
        )

    s_lr, s_lr2, s_mv = W @ W.T + np.diag(dg), 2.25 * (W @ W.T) + np.diag(1.5 * dg), L @ L.T
    lr = D.LowRankMultivariateNormal(t64(mu), t64(W), t64(dg))
    lr2 = D.LowRankMultivariateNormal(t64(1.5 * mu), t64(1.5 * W), t64(1.5 * dg))
    mv = D.MultivariateNormal(t64(-mu), scale_tril=t64(L))
    check("LR-LR", D.kl_divergence(lr, lr2), kl_dense(mu, s_lr, 1.5 * mu, s_lr2))
    check("MVN-LR", D.kl_divergence(mv, lr2), kl_dense(-mu, s_mv, 1.5 * mu, s_lr2))
    check("LR-MVN", D.kl_divergence(lr, mv), kl_dense(mu, s_lr, -mu, s_mv))
    check.verify()
