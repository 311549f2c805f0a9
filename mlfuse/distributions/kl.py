"""KL divergences between distributions: ``kl_divergence(p, q)``, and
``register_kl`` to add a rule for a pair of types (PyTorch's
``torch.distributions.kl``)."""

from __future__ import annotations

import math
from functools import total_ordering

from mlfuse.distributions.continuous import (
    Beta,
    Cauchy,
    Dirichlet,
    Exponential,
    Gamma,
    Gumbel,
    Laplace,
    Normal,
    Uniform,
)
from mlfuse.distributions.discrete import (
    Bernoulli,
    Binomial,
    Categorical,
    Geometric,
    OneHotCategorical,
    Poisson,
)
from mlfuse.distributions.continuous_bernoulli import ContinuousBernoulli
from mlfuse.distributions.distribution import Distribution
from mlfuse.distributions.exp_family import ExponentialFamily
from mlfuse.distributions.half_normal import HalfNormal
from mlfuse.distributions.independent import Independent
from mlfuse.distributions.lowrank_multivariate_normal import (
    LowRankMultivariateNormal,
    _batch_lowrank_logdet,
    _batch_lowrank_mahalanobis,
)
from mlfuse.distributions.multivariate_normal import MultivariateNormal, _batch_mahalanobis
from mlfuse.distributions.pareto import Pareto
from mlfuse.distributions.transformed_distribution import TransformedDistribution
from mlfuse.distributions.utils import (
    _digammas,
    _host,
    _lgammas,
    _sum_rightmost,
    euler_constant,
)
from mlfuse import linalg
from mlfuse.tensor import Tensor, broadcast_shape, cat

__all__ = ["kl_divergence", "register_kl"]

_KL_REGISTRY: dict = {}  # (type_p, type_q) -> rule, as registered
_KL_MEMOIZE: dict = {}  # (type_p, type_q) -> rule, as dispatched


def register_kl(type_p, type_q):
    """A decorator that registers ``fn(p, q)`` as the KL divergence of
    ``type_p`` from ``type_q`` (subclasses included; the most specific
    registered pair wins)::

        @register_kl(Normal, Normal)
        def kl_normal_normal(p, q): ...
    """
    if not (isinstance(type_p, type) and issubclass(type_p, Distribution)):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not (isinstance(type_q, type) and issubclass(type_q, Distribution)):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorator(fn):
        _KL_REGISTRY[type_p, type_q] = fn
        _KL_MEMOIZE.clear()
        return fn

    return decorator


@total_ordering
class _Match:
    """A pair of types, ordered by specificity (a subclass comes first)."""

    __slots__ = ["types"]

    def __init__(self, *types):
        self.types = types

    def __eq__(self, other):
        return self.types == other.types

    def __le__(self, other):
        for x, y in zip(self.types, other.types):
            if not issubclass(x, y):
                return False
            if x is not y:
                break
        return True


def _dispatch_kl(type_p, type_q):
    """The rule for the most specific registered pair of supertypes."""
    matches = [
        (sp, sq) for sp, sq in _KL_REGISTRY if issubclass(type_p, sp) and issubclass(type_q, sq)
    ]
    if not matches:
        return NotImplemented
    left_p, left_q = min(_Match(*m) for m in matches).types
    right_q, right_p = min(_Match(*reversed(m)) for m in matches).types
    left_fun = _KL_REGISTRY[left_p, left_q]
    right_fun = _KL_REGISTRY[right_p, right_q]
    if left_fun is not right_fun:
        import warnings

        warnings.warn(
            f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). Please register_kl("
            f"{left_p.__name__}, {right_q.__name__})",
            RuntimeWarning,
            stacklevel=3,
        )
    return left_fun


def kl_divergence(p: Distribution, q: Distribution) -> Tensor:
    """``KL(p || q) = E_p[log p(x) - log q(x)]``, batched over the batch shape
    of the two (which broadcast). A pair with no registered rule raises
    NotImplementedError."""
    key = (type(p), type(q))
    fun = _KL_MEMOIZE.get(key)
    if fun is None:
        fun = _dispatch_kl(*key)
        _KL_MEMOIZE[key] = fun
    if fun is NotImplemented:
        raise NotImplementedError(
            f"No KL(p || q) is implemented for p type {type(p).__name__} and q type "
            f"{type(q).__name__}"
        )
    return fun(p, q)


def _inf_like(t: Tensor) -> Tensor:
    return Tensor.full(t.shape, math.inf, t.dtype, t.device)


# -- same-family rules ----------------------------------------------------------------
@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).square()
    t1 = ((p.loc - q.loc) / q.scale).square()
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    t1 = p.probs * ((-q.logits).softplus() - (-p.logits).softplus())
    t1 = (q.probs == 0).where(math.inf, t1)
    t1 = (p.probs == 0).where(0.0, t1)
    t2 = (1 - p.probs) * (q.logits.softplus() - p.logits.softplus())
    t2 = (q.probs == 1).where(math.inf, t2)
    t2 = (p.probs == 1).where(0.0, t2)
    return t1 + t2


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = (q.probs == 0).where(math.inf, t)
    t = (p.probs == 0).where(0.0, t)
    return t.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    p1, p0 = p.concentration1, p.concentration0
    q1, q0 = q.concentration1, q.concentration0
    sum_p, sum_q = p1 + p0, q1 + q0
    lq1, lq0, lsp, lp1, lp0, lsq = _lgammas(q1, q0, sum_p, p1, p0, sum_q)
    dp1, dp0, dsp = _digammas(p1, p0, sum_p)
    t1 = lq1 + lq0 + lsp
    t2 = lp1 + lp0 + lsq
    t3 = (p1 - q1) * dp1
    t4 = (p0 - q0) * dp0
    t5 = (sum_q - sum_p) * dsp
    return t1 - t2 + t3 + t4 + t5


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    t1 = q.concentration * (p.rate / q.rate).log()
    lq, lp = _lgammas(q.concentration, p.concentration)
    t2 = lq - lp
    t3 = (p.concentration - q.concentration) * p.concentration.digamma()
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    shape = broadcast_shape(p.concentration.shape, q.concentration.shape)
    pc, qc = p.concentration.expand(shape), q.concentration.expand(shape)
    sum_p, sum_q = pc.sum(-1, keepdim=True), qc.sum(-1, keepdim=True)
    k = shape[-1]
    # one lgamma and one digamma for all the arguments
    lg = cat([pc, qc, sum_p, sum_q], -1).lgamma()
    dg = cat([pc, sum_p], -1).digamma()
    t1 = lg[..., 2 * k] - lg[..., 2 * k + 1]
    t2 = (lg[..., :k] - lg[..., k : 2 * k]).sum(-1)
    t3 = pc - qc
    t4 = dg[..., :k] - dg[..., k:]
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    outside = (q.low > p.low) | (q.high < p.high)
    return outside.where(math.inf, result)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    rate_ratio = q.rate / p.rate
    return -rate_ratio.log() + rate_ratio - 1


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    t1 = -scale_ratio.log()
    t2 = loc_abs_diff / q.scale
    t3 = scale_ratio * (-loc_abs_diff / p.scale).exp()
    return t1 + t2 + t3 - 1


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError(
            "KL-divergence between two Multivariate Normals with different event shapes "
            "cannot be computed"
        )
    lp, lq = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_term1 = lq.diagonal(0, -2, -1).log().sum(-1) - lp.diagonal(0, -2, -1).log().sum(-1)
    n = p.event_shape[0]
    batch = broadcast_shape(lq.shape[:-2], lp.shape[:-2])
    lq_b, lp_b = lq.expand(batch + (n, n)), lp.expand(batch + (n, n))
    # tr(Sq^-1 Sp) = ||Lq^-1 Lp||_F^2
    term2 = linalg.solve_triangular(lq_b, lp_b, upper=False).square().sum((-2, -1))
    term3 = _batch_mahalanobis(lq, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    result = kl_divergence(p.base_dist, q.base_dist)
    return _sum_rightmost(result, p.reinterpreted_batch_ndims)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - (-q.probs).log1p() / p.probs - q.logits


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    # only for equal total counts, as PyTorch
    np_, nq = _host(p.total_count), _host(q.total_count)
    if np_ is None or nq is None or (np_ < nq).any():
        raise NotImplementedError(
            "KL between Binomials where q.total_count > p.total_count is not implemented"
        )
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p() - (-q.probs).log1p())
    inf_idxs = p.total_count > q.total_count
    return inf_idxs.where(math.inf, kl)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    # Chyzak and Nielsen, 2019
    t1 = ((p.scale + q.scale).square() + (p.loc - q.loc).square()).log()
    return t1 - (4 * p.scale * q.scale).log()


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    ct1 = p.scale / q.scale
    ct2 = q.loc / q.scale
    ct3 = p.loc / q.scale
    t1 = -ct1.log() - ct2 + ct3
    t2 = ct1 * euler_constant
    t3 = (ct2 + (1 + ct1).lgamma() - ct3).exp()
    return t1 + t2 + t3 - (1 + euler_constant)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    if p.transforms != q.transforms:
        raise NotImplementedError
    if p.event_shape != q.event_shape:
        raise NotImplementedError
    return kl_divergence(p.base_dist, q.base_dist)


# -- cross-family rules ---------------------------------------------------------------
@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    width = p.high - p.low
    t1 = (math.sqrt(math.pi * 2) * q.scale / width).log()
    t2 = width.square() / 12
    t3 = ((p.high + p.low - 2 * q.loc) / 2).square()
    return t1 + 0.5 * (t2 + t3) / q.scale.square()


@register_kl(Normal, Uniform)
def _kl_normal_uniform(p, q):
    # a normal puts mass outside any interval
    return _inf_like(p.loc + q.low)


# -- the rules for the other families (PyTorch's) -------------------------------------
def _x_log_x(t):
    return t * t.log()


def _batch_trace_XXT(bmat):  # noqa: N802 - PyTorch's name
    """The trace of ``X X^T`` for a batch of matrices: the sum of their squares."""
    return bmat.square().sum((-2, -1))


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    """The Bregman divergence of the log normalizer, through autograd."""
    if type(p) is not type(q):
        raise NotImplementedError(
            f"No KL(p || q) is implemented for p type {type(p).__name__} and q type "
            f"{type(q).__name__}: the cross KL-divergence between different exponential "
            "families cannot be computed using Bregman divergences"
        )
    from mlfuse.autograd import enable_grad, grad

    with enable_grad():
        p_nparams = [n.detach().requires_grad_() for n in p._natural_params]
        lg_normal = p._log_normalizer(*p_nparams)
        gradients = grad(lg_normal.sum(), p_nparams, create_graph=True)
    q_nparams = q._natural_params
    result = q._log_normalizer(*q_nparams) - lg_normal
    for pnp, qnp, g in zip(p_nparams, q_nparams, gradients):
        result = result - _sum_rightmost((qnp - pnp) * g, len(q.event_shape))
    return result


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p, q):
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + (-p.probs).log1p()
    t3 = -q._cont_bern_log_norm() - (-q.probs).log1p()
    return t1 + t2 + t3


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


def _lowrank_a(q):
    """``A = Cq^-1 Wq^T Dq^-1`` (Cq the capacitance factor of q)."""
    qwt_qdinv = q._unbroadcasted_cov_factor.mT / q._unbroadcasted_cov_diag.unsqueeze(-2)
    ct = q._capacitance_tril
    batch = broadcast_shape(ct.shape[:-2], qwt_qdinv.shape[:-2])
    return linalg.solve_triangular(
        ct.expand(batch + ct.shape[-2:]),
        qwt_qdinv.expand(batch + qwt_qdinv.shape[-2:]),
        upper=False,
    )


def _check_event(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError(
            "KL-divergence between two (Low Rank) Multivariate Normals with different event "
            "shapes cannot be computed"
        )


def _lowrank_logdet(d):
    return _batch_lowrank_logdet(
        d._unbroadcasted_cov_factor, d._unbroadcasted_cov_diag, d._capacitance_tril
    )


def _lowrank_mahalanobis(q, x):
    return _batch_lowrank_mahalanobis(
        q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag, x, q._capacitance_tril
    )


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrankmultivariatenormal_lowrankmultivariatenormal(p, q):
    _check_event(p, q)
    term1 = _lowrank_logdet(q) - _lowrank_logdet(p)
    term3 = _lowrank_mahalanobis(q, q.loc - p.loc)
    # Sq^-1 Sp = [Dq^-1 - A^T A] (Dp + Wp Wp^T)
    A = _lowrank_a(q)  # noqa: N806
    pw, pd = p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag
    qd = q._unbroadcasted_cov_diag
    term21 = (pd / qd).sum(-1)
    term22 = _batch_trace_XXT(pw * qd.rsqrt().unsqueeze(-1))
    term23 = _batch_trace_XXT(A * pd.sqrt().unsqueeze(-2))
    term24 = _batch_trace_XXT(A @ pw)
    term2 = term21 + term22 - term23 - term24
    return 0.5 * (term1 + term2 + term3 - p.event_shape[0])


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_multivariatenormal_lowrankmultivariatenormal(p, q):
    _check_event(p, q)
    lp = p._unbroadcasted_scale_tril
    term1 = _lowrank_logdet(q) - 2 * lp.diagonal(0, -2, -1).log().sum(-1)
    term3 = _lowrank_mahalanobis(q, q.loc - p.loc)
    # Sq^-1 Sp = [Dq^-1 - A^T A] Lp Lp^T
    A = _lowrank_a(q)  # noqa: N806
    term21 = _batch_trace_XXT(lp * q._unbroadcasted_cov_diag.rsqrt().unsqueeze(-1))
    term22 = _batch_trace_XXT(A @ lp)
    return 0.5 * (term1 + (term21 - term22) + term3 - p.event_shape[0])


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrankmultivariatenormal_multivariatenormal(p, q):
    _check_event(p, q)
    lq = q._unbroadcasted_scale_tril
    term1 = 2 * lq.diagonal(0, -2, -1).log().sum(-1) - _lowrank_logdet(p)
    term3 = _batch_mahalanobis(lq, q.loc - p.loc)
    # Sq^-1 Sp = (Lq Lq^T)^-1 (Wp Wp^T + Dp)
    pw = p._unbroadcasted_cov_factor
    batch = broadcast_shape(lq.shape[:-2], pw.shape[:-2])
    n = p.event_shape[0]
    lq_b = lq.expand(batch + (n, n))
    pw_b = pw.expand(batch + (n, pw.shape[-1]))
    pd_b = p._unbroadcasted_cov_diag.sqrt().diag_embed().expand(batch + (n, n))
    term21 = _batch_trace_XXT(linalg.solve_triangular(lq_b, pw_b, upper=False))
    term22 = _batch_trace_XXT(linalg.solve_triangular(lq_b, pd_b, upper=False))
    return 0.5 * (term1 + term21 + term22 + term3 - n)


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    scale_ratio = p.scale / q.scale
    alpha_ratio = q.alpha / p.alpha
    t1 = q.alpha * scale_ratio.log()
    t2 = -alpha_ratio.log()
    result = t1 + t2 + alpha_ratio - 1
    return (p.support.lower_bound < q.support.lower_bound).where(math.inf, result)


@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p, q):
    return -p.entropy() - p.mean * q.logits - (-q.probs).log1p() - q._cont_bern_log_norm()


@register_kl(Beta, Pareto)
def _kl_beta_infinity(p, q):
    return _inf_like(p.concentration1)


@register_kl(Beta, Exponential)
def _kl_beta_exponential(p, q):
    c1, c0 = p.concentration1, p.concentration0
    return -p.entropy() - q.rate.log() + q.rate * (c1 / (c1 + c0))


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p, q):
    c1, c0 = p.concentration1, p.concentration0
    t1 = -p.entropy()
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    dg1, dg10 = _digammas(c1, c1 + c0)
    t3 = (q.concentration - 1) * (dg1 - dg10)
    t4 = q.rate * c1 / (c1 + c0)
    return t1 + t2 - t3 + t4


@register_kl(Beta, Normal)
def _kl_beta_normal(p, q):
    c1, c0 = p.concentration1, p.concentration0
    e_beta = c1 / (c1 + c0)
    var_normal = q.scale.square()
    t1 = -p.entropy()
    t2 = 0.5 * (var_normal * 2 * math.pi).log()
    t3 = (e_beta * (1 - e_beta) / (c1 + c0 + 1) + e_beta.square()) * 0.5
    t4 = q.loc * e_beta
    t5 = q.loc.square() * 0.5
    return t1 + t2 + (t3 - t4 + t5) / var_normal


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    outside = (q.low > p.support.lower_bound) | (q.high < p.support.upper_bound)
    return outside.where(math.inf, result)


@register_kl(ContinuousBernoulli, Pareto)
def _kl_continuous_bernoulli_infinity(p, q):
    return _inf_like(p.probs)


@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p, q):
    t1 = -p.entropy()
    t2 = 0.5 * (math.log(2.0 * math.pi) + (q.loc / q.scale).square()) + q.scale.log()
    t3 = (p.variance + p.mean.square() - 2.0 * q.loc * p.mean) / (2.0 * q.scale.square())
    return t1 + t2 + t3


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    # as PyTorch's: infinite unless q's interval strictly contains [0, 1]
    outside = (q.low >= p.support.lower_bound) | (q.high <= p.support.upper_bound)
    return outside.where(math.inf, result)


@register_kl(Exponential, Beta)
@register_kl(Exponential, ContinuousBernoulli)
@register_kl(Exponential, Pareto)
@register_kl(Exponential, Uniform)
def _kl_exponential_infinity(p, q):
    return _inf_like(p.rate)


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    ratio = q.rate / p.rate
    t1 = -q.concentration * ratio.log()
    return (
        t1
        + ratio
        + q.concentration.lgamma()
        + q.concentration * euler_constant
        - (1 + euler_constant)
    )


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p, q):
    scale_rate_prod = p.rate * q.scale
    loc_scale_ratio = q.loc / q.scale
    t1 = scale_rate_prod.log() - 1
    t2 = loc_scale_ratio.exp() * scale_rate_prod / (scale_rate_prod + 1)
    t3 = scale_rate_prod.reciprocal()
    return t1 - loc_scale_ratio + t2 + t3


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p, q):
    var_normal = q.scale.square()
    rate_sqr = p.rate.square()
    t1 = 0.5 * (rate_sqr * var_normal * 2 * math.pi).log()
    t2 = rate_sqr.reciprocal()
    t3 = q.loc / p.rate
    t4 = q.loc.square() * 0.5
    return t1 - 1 + (t2 - t3 + t4) / var_normal


@register_kl(Gamma, Beta)
@register_kl(Gamma, ContinuousBernoulli)
@register_kl(Gamma, Pareto)
@register_kl(Gamma, Uniform)
def _kl_gamma_infinity(p, q):
    return _inf_like(p.concentration)


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.concentration / p.rate


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p, q):
    c = p.concentration
    beta_scale_prod = p.rate * q.scale
    loc_scale_ratio = q.loc / q.scale
    t1 = (c - 1) * c.digamma() - c.lgamma() - c
    t2 = beta_scale_prod.log() + c / beta_scale_prod
    t3 = loc_scale_ratio.exp() * (1 + beta_scale_prod.reciprocal()).pow(-c) - loc_scale_ratio
    return t1 + t2 + t3


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p, q):
    c = p.concentration
    var_normal = q.scale.square()
    beta_sqr = p.rate.square()
    t1 = 0.5 * (beta_sqr * var_normal * 2 * math.pi).log() - c - c.lgamma()
    t2 = 0.5 * (c.square() + c) / beta_sqr
    t3 = q.loc * c / p.rate
    t4 = 0.5 * q.loc.square()
    return t1 + (c - 1) * c.digamma() + (t2 - t3 + t4) / var_normal


@register_kl(Gumbel, Beta)
@register_kl(Gumbel, ContinuousBernoulli)
@register_kl(Gumbel, Exponential)
@register_kl(Gumbel, Gamma)
@register_kl(Gumbel, Pareto)
@register_kl(Gumbel, Uniform)
def _kl_gumbel_infinity(p, q):
    return _inf_like(p.loc + 0 * p.scale)


@register_kl(Gumbel, Normal)
def _kl_gumbel_normal(p, q):
    param_ratio = p.scale / q.scale
    t1 = (param_ratio / math.sqrt(2 * math.pi)).log()
    t2 = (math.pi * param_ratio * 0.5).square() / 3
    t3 = ((p.loc + p.scale * euler_constant - q.loc) / q.scale).square() * 0.5
    return -t1 + t2 + t3 - (euler_constant + 1)


@register_kl(Laplace, Beta)
@register_kl(Laplace, ContinuousBernoulli)
@register_kl(Laplace, Exponential)
@register_kl(Laplace, Gamma)
@register_kl(Laplace, Pareto)
@register_kl(Laplace, Uniform)
def _kl_laplace_infinity(p, q):
    return _inf_like(p.loc + 0 * p.scale)


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p, q):
    var_normal = q.scale.square()
    scale_sqr_var_ratio = p.scale.square() / var_normal
    t1 = 0.5 * (2 * scale_sqr_var_ratio / math.pi).log()
    t2 = 0.5 * p.loc.square()
    t3 = p.loc * q.loc
    t4 = 0.5 * q.loc.square()
    return -t1 + scale_sqr_var_ratio + (t2 - t3 + t4) / var_normal - 1


@register_kl(Normal, Beta)
@register_kl(Normal, ContinuousBernoulli)
@register_kl(Normal, Exponential)
@register_kl(Normal, Gamma)
@register_kl(Normal, Pareto)
def _kl_normal_infinity(p, q):
    return _inf_like(p.loc + 0 * p.scale)


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p, q):
    mean_scale_ratio = p.loc / q.scale
    var_scale_sqr_ratio = (p.scale / q.scale).square()
    loc_scale_ratio = q.loc / q.scale
    t1 = var_scale_sqr_ratio.log() * 0.5
    t2 = mean_scale_ratio - loc_scale_ratio
    t3 = (-mean_scale_ratio + 0.5 * var_scale_sqr_ratio + loc_scale_ratio).exp()
    return -t1 + t2 + t3 - (0.5 * (1 + math.log(2 * math.pi)))


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    loc_diff = p.loc - q.loc
    scale_ratio = p.scale / q.scale
    loc_diff_scale_ratio = loc_diff / p.scale
    t1 = scale_ratio.log()
    t2 = math.sqrt(2 / math.pi) * p.scale * (-0.5 * loc_diff_scale_ratio.square()).exp()
    t3 = loc_diff * (math.sqrt(0.5) * loc_diff_scale_ratio).erf()
    return -t1 + (t2 + t3) / q.scale - (0.5 * (1 + math.log(0.5 * math.pi)))


@register_kl(Pareto, Beta)
@register_kl(Pareto, ContinuousBernoulli)
@register_kl(Pareto, Uniform)
def _kl_pareto_infinity(p, q):
    return _inf_like(p.scale)


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p, q):
    scale_rate_prod = p.scale * q.rate
    t1 = (p.alpha / scale_rate_prod).log()
    t2 = p.alpha.reciprocal()
    t3 = p.alpha * scale_rate_prod / (p.alpha - 1)
    result = t1 - t2 + t3 - 1
    return (p.alpha <= 1).where(math.inf, result)


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    common_term = p.scale.log() + p.alpha.reciprocal()
    t1 = p.alpha.log() - common_term
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * common_term
    t4 = q.rate * p.alpha * p.scale / (p.alpha - 1)
    result = t1 + t2 + t3 + t4 - 1
    return (p.alpha <= 1).where(math.inf, result)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p, q):
    var_normal = 2 * q.scale.square()
    common_term = p.scale / (p.alpha - 1)
    t1 = (math.sqrt(2 * math.pi) * q.scale * p.alpha / p.scale).log()
    t2 = p.alpha.reciprocal()
    t3 = p.alpha * common_term.square() / (p.alpha - 2)
    t4 = (p.alpha * common_term - q.loc).square()
    result = t1 - t2 + (t3 + t4) / var_normal - 1
    return (p.alpha <= 2).where(math.inf, result)


@register_kl(Poisson, Bernoulli)
@register_kl(Poisson, Binomial)
def _kl_poisson_infinity(p, q):
    return _inf_like(p.rate)


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    common_term = p.high - p.low
    t1 = common_term.log()
    t2 = (q.concentration1 - 1) * (_x_log_x(p.high) - _x_log_x(p.low) - common_term) / common_term
    t3 = (
        (q.concentration0 - 1)
        * (_x_log_x(1 - p.high) - _x_log_x(1 - p.low) + common_term)
        / common_term
    )
    lg1, lg0, lg10 = _lgammas(
        q.concentration1, q.concentration0, q.concentration1 + q.concentration0
    )
    t4 = lg1 + lg0 - lg10
    result = t3 + t4 - t1 - t2
    outside = (p.high > q.support.upper_bound) | (p.low < q.support.lower_bound)
    return outside.where(math.inf, result)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p, q):
    result = -p.entropy() - p.mean * q.logits - (-q.probs).log1p() - q._cont_bern_log_norm()
    # as PyTorch's: infinite unless p's interval lies strictly inside (0, 1)
    outside = (p.high >= q.support.upper_bound) | (p.low <= q.support.lower_bound)
    return outside.where(math.inf, result)


@register_kl(Uniform, Exponential)
def _kl_uniform_exponetial(p, q):
    result = q.rate * (p.high + p.low) / 2 - ((p.high - p.low) * q.rate).log()
    return (p.low < q.support.lower_bound).where(math.inf, result)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    common_term = p.high - p.low
    t1 = common_term.log()
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * (_x_log_x(p.high) - _x_log_x(p.low) - common_term) / common_term
    t4 = q.rate * (p.high + p.low) / 2
    result = -t1 + t2 + t3 + t4
    return (p.low < q.support.lower_bound).where(math.inf, result)


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p, q):
    common_term = q.scale / (p.high - p.low)
    high_loc_diff = (p.high - q.loc) / q.scale
    low_loc_diff = (p.low - q.loc) / q.scale
    t1 = common_term.log() + 0.5 * (high_loc_diff + low_loc_diff)
    t2 = common_term * ((-high_loc_diff).exp() - (-low_loc_diff).exp())
    return t1 - t2


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    support_uniform = p.high - p.low
    t1 = (q.alpha * q.scale.pow(q.alpha) * support_uniform).log()
    t2 = (_x_log_x(p.high) - _x_log_x(p.low) - support_uniform) / support_uniform
    result = t2 * (q.alpha + 1) - t1
    return (p.low < q.support.lower_bound).where(math.inf, result)
