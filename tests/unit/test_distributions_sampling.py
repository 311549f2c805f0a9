"""``mlfuse.distributions`` (``torch.distributions``): sampling of the families
added after the first set (moments at fixed seeds), their reparameterization
gradients (against implicit differentiation of cdfs written here), the new
transforms (against numpy maps and numerical Jacobians), the constraints and
``biject_to``/``transform_to``."""

from __future__ import annotations

import math

import numpy as np
import pytest

import mlfuse
import mlfuse.distributions as D
from dist_refs import _cb_refs, bessel_i, Checks, erf, lbeta, t64
from mlfuse.distributions import constraints, transforms


def stick_forward(x):
    """The stick-breaking map in numpy (PyTorch's convention)."""
    k = x.shape[-1]
    z = 1 / (1 + np.exp(-(x - np.log(np.arange(k, 0, -1)))))
    rest = np.concatenate([[1.0], np.cumprod(1 - z)])
    return np.concatenate([z, [1.0]]) * rest


def num_jacobian(f, x, h=1e-6):
    cols = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h
        cols.append((f(x + e) - f(x - e)) / (2 * h))
    return np.stack(cols, -1)


# -- sampling --------------------------------------------------------------------------------
N = 8000


def _moments(d, mean, var, rtol=0.12):
    x = d.sample((N,)).numpy().astype(np.float64)
    assert x.shape == (N,) + d.batch_shape + d.event_shape
    m, v = x.mean(0), x.var(0)
    err = np.abs(m - mean) <= 5 * np.sqrt(np.asarray(var) / N)
    assert np.all(err), (type(d).__name__, m, mean)
    np.testing.assert_allclose(v, var, rtol=rtol, err_msg=type(d).__name__)
    return x


def test_sample_moments():
    mlfuse.manual_seed(0)
    p = np.array([0.2, 0.7])
    _, mean, var, *_ = _cb_refs(p, p, p)
    _moments(D.ContinuousBernoulli(t64(p)), mean, var)
    _moments(
        D.FisherSnedecor(t64([3.0, 6.0]), t64([9.0, 12.0])), [9 / 7, 1.2], [2.2041, 0.96], 0.25
    )
    _moments(D.GeneralizedPareto(t64(0.1), t64(2.0), t64(-0.3)), 0.1 + 2 / 1.3, 4 / (1.69 * 1.6))
    _moments(D.HalfNormal(t64(2.0)), 2 * math.sqrt(2 / math.pi), 4 * (1 - 2 / math.pi))
    _moments(D.InverseGamma(t64(5.0), t64(2.0)), 0.5, 4 / 48, 0.25)
    _moments(D.Kumaraswamy(t64(2.0), t64(3.0)), 3 * math.exp(lbeta(1.5, 3.0)), 0.0410, 0.1)
    _moments(D.Pareto(t64(2.0), t64(5.0)), 2.5, 4 * 5 / 48, 0.3)
    _moments(
        D.Weibull(t64(2.0), t64(2.5)),
        2 * math.gamma(1.4),
        4 * (math.gamma(1.8) - math.gamma(1.4) ** 2),
    )
    _moments(D.NegativeBinomial(t64([3.0, 10.0]), t64([0.2, 0.6])), [0.75, 15.0], [0.9375, 37.5])
    p = np.array([0.2, 0.3, 0.5])
    x = _moments(D.Multinomial(7, t64(p)), 7 * p, 7 * p * (1 - p))
    assert (x.sum(-1) == 7).all() and (x == np.round(x)).all()
    _moments(
        D.MixtureSameFamily(
            D.Categorical(t64([0.2, 0.8])), D.Normal(t64([-1.0, 2.0]), t64([0.5, 0.3]))
        ),
        1.4,
        0.2 * 1.25 + 0.8 * 4.09 - 1.96,
    )
    h = D.HalfCauchy(t64(2.0)).sample((N,)).numpy()
    np.testing.assert_allclose(np.median(h), 2.0, rtol=0.06)
    x = D.LowRankMultivariateNormal(t64([0.0, 1.0]), t64([[1.0], [0.5]]), t64([0.5, 1.0])).sample(
        (N,)
    )
    np.testing.assert_allclose(np.cov(x.numpy().T), [[1.5, 0.5], [0.5, 1.25]], atol=0.08)
    # von Mises: E[cos(x - loc)] = I1 / I0, angles in [-pi, pi)
    v = D.VonMises(t64([0.5, -2.0]), t64([0.5, 4.0])).sample((N,)).numpy()
    want = bessel_i(1, [0.5, 4.0]) / bessel_i(0, [0.5, 4.0])
    np.testing.assert_allclose(np.cos(v - [0.5, -2.0]).mean(0), want, atol=0.02)
    assert v.min() >= -math.pi and v.max() < math.pi
    # LKJ: unit rows, and Var(r_21) = 1 / (2 eta + dim - 1)
    lk = D.LKJCholesky(3, t64([0.5, 2.0])).sample((N,))
    assert constraints.corr_cholesky.check(lk).numpy().all()
    c = lk.numpy() @ np.swapaxes(lk.numpy(), -1, -2)
    np.testing.assert_allclose(c[..., 1, 0].var(0), [1 / 3, 1 / 6], rtol=0.1)
    # Wishart: E[X] = df S
    s = np.array([[1.0, 0.3], [0.3, 2.0]])
    wx = D.Wishart(t64(5.0), covariance_matrix=t64(s)).sample((N,)).numpy()
    np.testing.assert_allclose(wx.mean(0), 5 * s, rtol=0.05, atol=0.1)
    y = D.LogisticNormal(t64([0.0, 1.0, -1.0]), t64([1.0, 0.5, 2.0])).sample((5,)).numpy()
    assert y.shape == (5, 4) and np.allclose(y.sum(-1), 1) and (y > 0).all()
    # seeded draws repeat (the host samplers too)
    for make in (lambda: D.VonMises(0.0, 1.0), lambda: D.NegativeBinomial(2.0, 0.5)):
        mlfuse.manual_seed(5)
        a = make().sample((4,)).numpy()
        mlfuse.manual_seed(5)
        np.testing.assert_array_equal(a, make().sample((4,)).numpy())


# -- reparameterization gradients -------------------------------------------------------------
def _implicit_grads(cdf, pdf, x, params):
    """``dx/dtheta = -(dF/dtheta) / f`` of samples ``x`` held at their quantile,
    by central differences of the cdf written here."""
    out = []
    for i in range(len(params)):

        def shifted(h, i=i):
            ps = [p + (h if j == i else 0.0) for j, p in enumerate(params)]
            return cdf(x, *ps)

        h = 1e-6
        out.append(-(shifted(h) - shifted(-h)) / (2 * h) / pdf(x, *params))
    return out


def _check_rsample_grads(make, params, cdf, pdf, n=6, rtol=1e-5):
    ts = [t64(v, requires_grad=True) for v in params]
    x = make(*ts).rsample((n,))
    x.sum().backward()
    xv = x.detach().numpy()
    want = _implicit_grads(cdf, pdf, xv, [np.float64(v) for v in params])
    for t, w in zip(ts, want):
        np.testing.assert_allclose(t.grad.numpy(), w.sum(0), rtol=rtol, atol=1e-9)


def test_rsample_gradients():
    mlfuse.manual_seed(2)

    def cb_cdf(x, p):
        return (p**x * (1 - p) ** (1 - x) + p - 1) / (2 * p - 1)

    def cb_pdf(x, p):
        return 2 * np.arctanh(1 - 2 * p) / (1 - 2 * p) * p**x * (1 - p) ** (1 - x)

    _check_rsample_grads(lambda p: D.ContinuousBernoulli(p), [0.3], cb_cdf, cb_pdf)

    def gp_cdf(x, loc, scale, xi):
        return 1 - (1 + xi * (x - loc) / scale) ** (-1 / xi)

    def gp_pdf(x, loc, scale, xi):
        return (1 + xi * (x - loc) / scale) ** (-1 / xi - 1) / scale

    _check_rsample_grads(D.GeneralizedPareto, [0.1, 2.0, 0.3], gp_cdf, gp_pdf)
    _check_rsample_grads(
        D.Pareto,
        [1.5, 3.0],
        lambda x, s, a: 1 - (s / x) ** a,
        lambda x, s, a: a * s**a / x ** (a + 1),
    )
    _check_rsample_grads(
        D.Weibull,
        [2.0, 1.5],
        lambda x, lam, k: 1 - np.exp(-((x / lam) ** k)),
        lambda x, lam, k: k / lam * (x / lam) ** (k - 1) * np.exp(-((x / lam) ** k)),
    )
    _check_rsample_grads(
        D.Kumaraswamy,
        [2.0, 3.0],
        lambda x, a, b: 1 - (1 - x**a) ** b,
        lambda x, a, b: a * b * x ** (a - 1) * (1 - x**a) ** (b - 1),
    )
    _check_rsample_grads(
        D.HalfNormal,
        [1.5],
        lambda x, s: erf(x / (s * math.sqrt(2))),
        lambda x, s: math.sqrt(2 / math.pi) / s * np.exp(-(x**2) / (2 * s**2)),
    )
    _check_rsample_grads(
        D.HalfCauchy,
        [1.5],
        lambda x, s: 2 / math.pi * np.arctan(x / s),
        lambda x, s: 2 / (math.pi * s * (1 + (x / s) ** 2)),
    )
    # the inverse gamma (shape 2: cdf (1 + r/x) e^(-r/x)), through the Gamma sampler's
    # implicit gradients
    _check_rsample_grads(
        D.InverseGamma,
        [2.0, 1.5],
        lambda x, a, r: upper_gamma_q(a, r / x),
        lambda x, a, r: r**2 / x**3 * np.exp(-r / x),
        rtol=1e-4,
    )
    # the straight-through estimator: one-hot forward, the identity to probs backward
    probs = t64([0.2, 0.3, 0.5], requires_grad=True)
    y = D.OneHotCategoricalStraightThrough(probs).rsample((3,))
    assert sorted(y.detach().numpy().sum(-1).tolist()) == [1.0, 1.0, 1.0]
    (y * t64([1.0, 2.0, 3.0])).sum().backward()
    # (through the normalization of probs, as PyTorch's: w - <w, p> per sample)
    np.testing.assert_allclose(probs.grad.numpy(), 3 * (np.array([1.0, 2.0, 3.0]) - 2.3))
    # low rank: E[x_i^2] = loc_i^2 + (W W^T)_ii + D_i, so its gradient to D is 1
    mlfuse.manual_seed(3)
    loc, w, dg = t64([0.5, -1.0], True), t64([[1.0], [0.5]], True), t64([0.5, 1.0], True)
    x = D.LowRankMultivariateNormal(loc, w, dg).rsample((N,))
    (x.square().sum(0) / N).sum().backward()
    np.testing.assert_allclose(loc.grad.numpy(), [1.0, -2.0], atol=0.08)
    np.testing.assert_allclose(dg.grad.numpy(), [1.0, 1.0], atol=0.1)
    np.testing.assert_allclose(w.grad.numpy(), [[2.0], [1.0]], atol=0.1)
    # Wishart: E[tr X] = df tr(L L^T): gradients 2 df L and tr(L L^T) (through Chi2)
    df, lt = t64(4.0, True), t64([[1.0, 0.0], [0.5, 1.2]], True)
    x = D.Wishart(df, scale_tril=lt).rsample((N,))
    (x.diagonal(0, -2, -1).sum() / N).backward()
    np.testing.assert_allclose(df.grad.item(), 1 + 0.25 + 1.44, rtol=0.05)
    np.testing.assert_allclose(np.tril(lt.grad.numpy()), [[8.0, 0.0], [4.0, 9.6]], rtol=0.06)
    # F: finite gradients to both degrees of freedom
    d1, d2 = t64(3.0, True), t64(7.0, True)
    D.FisherSnedecor(d1, d2).rsample((4,)).sum().backward()
    assert np.isfinite(d1.grad.item()) and np.isfinite(d2.grad.item()) and d2.grad.item() != 0
    loc, sc = t64([0.0, 1.0], True), t64([1.0, 0.5], True)
    D.LogisticNormal(loc, sc).rsample((3,))[..., 0].sum().backward()
    assert np.isfinite(sc.grad.numpy()).all() and loc.grad.numpy()[0] != 0
    for d in (
        D.VonMises(0.0, 1.0),
        D.NegativeBinomial(2.0, 0.5),
        D.MixtureSameFamily(D.Categorical(t64([0.5, 0.5])), D.Normal(t64([0.0, 1.0]), 1.0)),
    ):
        assert not d.has_rsample
        with pytest.raises(NotImplementedError):
            d.rsample()


def upper_gamma_q(a, y):
    """The regularized upper incomplete gamma function ``Q(a, y)`` by the power
    series of ``P`` (moderate y)."""
    y = np.asarray(y, np.float64)
    s = sum(y**k / math.prod(a + j for j in range(k + 1)) for k in range(120))
    return 1 - np.exp(a * np.log(y) - y - math.lgamma(a)) * s


# -- transforms, constraints and the registry --------------------------------------------------
def test_transforms():
    check = Checks()
    x = np.array([[0.3, -1.2, 0.5], [2.0, 0.1, -0.4]])
    sb = transforms.StickBreakingTransform()
    y = sb(t64(x))
    check("stick fwd", y, np.stack([stick_forward(v) for v in x]))
    check("stick inv", sb.inv(y), x, rtol=1e-8)
    jac = [np.linalg.slogdet(num_jacobian(lambda v: stick_forward(v)[:-1], v))[1] for v in x]
    check("stick ladj", sb.log_abs_det_jacobian(t64(x), y), jac, rtol=1e-7)
    assert sb.forward_shape((2, 3)) == (2, 4) and sb.inverse_shape((2, 4)) == (2, 3)
    assert sb.bijective and sb.codomain is constraints.simplex

    cc = transforms.CorrCholeskyTransform()
    lcc = cc(t64(x))
    assert lcc.shape == (2, 3, 3) and constraints.corr_cholesky.check(lcc).numpy().all()
    check("corr inv", cc.inv(lcc), x, rtol=1e-9)
    rows = np.tril_indices(3, -1)

    def corr_np(v):
        """The map in numpy: tanh into the strict lower triangle, then each row
        scaled onto the unit sphere by signed stick breaking."""
        r = np.zeros((3, 3))
        r[rows] = np.tanh(v)
        y = np.eye(3)
        for i in range(1, 3):
            left = 1.0
            for j in range(i):
                y[i, j] = r[i, j] * math.sqrt(left)
                left -= y[i, j] ** 2
            y[i, i] = math.sqrt(left)
        return y

    check("corr fwd", lcc, np.stack([corr_np(v) for v in x]))
    jac = [np.linalg.slogdet(num_jacobian(lambda w: corr_np(w)[rows], v))[1] for v in x]
    check("corr ladj", cc.log_abs_det_jacobian(t64(x), lcc), jac, rtol=1e-7)
    assert cc.forward_shape((6,)) == (4, 4) and cc.inverse_shape((4, 4)) == (6,)
    with pytest.raises(ValueError, match="lower-diagonal"):
        cc.forward_shape((4,))

    a = np.array([[[0.3, -1.2], [0.5, 0.2]], [[1.0, 0.0], [-2.0, 0.4]]])
    lc = transforms.LowerCholeskyTransform()
    low = np.tril(a, -1) + np.stack([np.diag(np.exp(np.diag(m))) for m in a])
    check("lower cholesky", lc(t64(a)), low)
    check("lower cholesky inv", lc.inv(lc(t64(a))), np.tril(a))
    pd = transforms.PositiveDefiniteTransform()
    check("positive definite", pd(t64(a)), low @ np.swapaxes(low, -1, -2))
    check("positive definite inv", pd.inv(pd(t64(a))), np.tril(a), rtol=1e-9, atol=1e-12)

    rs = transforms.ReshapeTransform((2, 3), (3, 2))
    check("reshape", rs(t64(x)), x.reshape(3, 2))
    check("reshape ladj", rs.log_abs_det_jacobian(t64(x), rs(t64(x))), 0.0)
    assert rs.forward_shape((5, 2, 3)) == (5, 3, 2) and rs.inverse_shape((3, 2)) == (2, 3)
    with pytest.raises(ValueError):
        transforms.ReshapeTransform((2, 3), (4,))

    xc = np.array([[0.3, -1.2, 0.5, 0.7], [2.0, 0.1, -0.4, 0.2]])
    ct = transforms.CatTransform(
        [transforms.ExpTransform(), transforms.AffineTransform(1.0, 2.0)], dim=1, lengths=[1, 3]
    )
    yc = ct(t64(xc))
    check("cat", yc, np.concatenate([np.exp(xc[:, :1]), 1 + 2 * xc[:, 1:]], 1))
    check("cat inv", ct.inv(yc), xc)
    check(
        "cat ladj",
        ct.log_abs_det_jacobian(t64(xc), yc),
        np.concatenate([xc[:, :1], np.full((2, 3), math.log(2))], 1),
    )
    ct2 = transforms.CatTransform(
        [transforms.ExpTransform(), transforms.SigmoidTransform()], dim=-1, lengths=[2, 2]
    )
    sig = 1 / (1 + np.exp(-xc[:, 2:]))
    check(
        "cat(-1) ladj",
        ct2.log_abs_det_jacobian(t64(xc), ct2(t64(xc))),
        np.concatenate([xc[:, :2], np.log(sig * (1 - sig))], 1),
    )
    assert ct.length == 4 and ct.event_dim == 0 and ct.bijective
    st = transforms.StackTransform(
        [transforms.ExpTransform(), transforms.identity_transform, transforms.AbsTransform()], dim=1
    )
    check("stack", st(t64(x)), np.stack([np.exp(x[:, 0]), x[:, 1], np.abs(x[:, 2])], 1))
    check(
        "stack inv",
        st.inv(t64(np.abs(x))),
        np.stack([np.log(np.abs(x[:, 0])), np.abs(x[:, 1]), np.abs(x[:, 2])], 1),
    )
    assert not st.bijective
    assert st.domain.check(t64(x)).shape == (2, 3)
    with pytest.raises(ValueError, match="must equal"):
        st(t64(np.zeros((2, 4))))

    cdt = transforms.CumulativeDistributionTransform(D.Normal(t64(0.0), t64(1.0)))
    check("cdf transform", cdt(t64(x)), 0.5 * (1 + erf(x / math.sqrt(2))))
    check("cdf transform inv", cdt.inv(cdt(t64(x))), x, rtol=1e-8)
    check(
        "cdf transform ladj",
        cdt.log_abs_det_jacobian(t64(x), cdt(t64(x))),
        -0.5 * x**2 - 0.5 * math.log(2 * math.pi),
    )
    assert cdt.domain is constraints.real and cdt.codomain is constraints.unit_interval
    # a Gaussian copula: MVN through the normal cdf, uniform marginals on [0, 1]
    cop = D.TransformedDistribution(
        D.MultivariateNormal(t64([0.0, 0.0]), covariance_matrix=t64([[1.0, 0.5], [0.5, 1.0]])),
        [cdt],
    )
    check("copula log_prob at the center", cop.log_prob(t64([0.5, 0.5])), -0.5 * math.log(0.75))
    check.verify()
    for t in (sb, cc, lc, pd, rs, ct, st, cdt):
        assert t.with_cache(1)._cache_size == 1 and type(t.with_cache(1)) is type(t)


def test_constraint_registry_and_constraints():
    x = t64([[0.3, -1.2, 0.5], [2.0, 0.1, -0.4]])
    cases = [
        (constraints.real, transforms.ComposeTransform),
        (constraints.positive, transforms.ComposeTransform),
        (constraints.greater_than(2.0), transforms.ComposeTransform),
        (constraints.less_than(-1.0), transforms.ComposeTransform),
        (constraints.unit_interval, transforms.SigmoidTransform),
        (constraints.interval(-1.0, 3.0), transforms.ComposeTransform),
        (constraints.half_open_interval(-1.0, 3.0), transforms.ComposeTransform),
        (constraints.simplex, transforms.StickBreakingTransform),
        (constraints.real_vector, transforms.IndependentTransform),
        (constraints.independent(constraints.positive, 1), transforms.IndependentTransform),
        (constraints.corr_cholesky, transforms.CorrCholeskyTransform),
    ]
    for c, kind in cases:
        t = D.biject_to(c)
        assert isinstance(t, kind), (c, t)
        y = t(x)
        assert c.check(y).numpy().all(), c
        np.testing.assert_allclose(t.inv(y).numpy(), x.numpy(), rtol=1e-6, atol=1e-9)
    assert isinstance(D.transform_to(constraints.simplex), transforms.SoftmaxTransform)
    assert D.transform_to(constraints.simplex)(x).numpy().sum(-1) == pytest.approx([1.0, 1.0])
    m = t64([[[0.3, -1.2], [0.5, 0.2]]])
    assert constraints.lower_cholesky.check(D.transform_to(constraints.lower_cholesky)(m)).item()
    for c in (constraints.positive_definite, constraints.positive_semidefinite):
        assert constraints.positive_definite.check(D.transform_to(c)(m)).item()
    cat = constraints.cat([constraints.positive, constraints.real], dim=-1, lengths=[1, 2])
    ycat = D.biject_to(cat)(x)
    assert cat.check(ycat).numpy().all() and (ycat.numpy()[:, 0] > 0).all()
    assert D.transform_to(cat)(x).shape == (2, 3)
    stk = constraints.stack([constraints.positive, constraints.unit_interval, constraints.real], 1)
    assert stk.check(D.biject_to(stk)(x)).numpy().all()
    assert D.transform_to(stk)(x).shape == (2, 3)
    with pytest.raises(NotImplementedError, match="Cannot transform"):
        D.biject_to(constraints.lower_cholesky)
    with pytest.raises(NotImplementedError, match="Cannot transform"):
        D.transform_to(constraints.boolean)

    # a registry of one's own
    reg = D.constraint_registry.ConstraintRegistry()

    @reg.register(constraints.greater_than)
    def _shifted(c):
        return transforms.AffineTransform(c.lower_bound, 1.0)

    assert reg(constraints.greater_than(3.0))(t64(1.0)).item() == 4.0
    with pytest.raises(TypeError):
        reg.register(int, _shifted)

    # the new constraints
    assert constraints.corr_cholesky.check(t64(np.eye(3))).item()
    assert not constraints.corr_cholesky.check(t64([[1.0, 0.0], [0.5, 0.5]])).item()
    assert constraints.multinomial(3).check(
        t64([[1.0, 2.0], [2.0, 2.0], [-1.0, 1.0]])
    ).tolist() == [True, False, False]
    psd = constraints.positive_semidefinite
    assert psd.check(t64([[[1.0, 1.0], [1.0, 1.0]], [[1.0, 2.0], [2.0, 1.0]]])).tolist() == [
        True,
        False,
    ]
    assert not constraints.positive_definite.check(t64([[1.0, 1.0], [1.0, 1.0]])).item()
    assert cat.event_dim == 0 and not cat.is_discrete
    assert cat.check(t64([[-1.0, 1.0, 1.0]])).tolist() == [[False, True, True]]
    msf = constraints.MixtureSameFamilyConstraint(constraints.interval(t64([0.0, 1.0]), 3.0))
    assert msf.check(t64([0.5, 1.5, 3.5])).tolist() == [False, True, False]
    assert repr(msf).startswith("MixtureSameFamilyConstraint(")
