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
from mlfuse.distributions.distribution import Distribution
from mlfuse.distributions.independent import Independent
from mlfuse.distributions.multivariate_normal import MultivariateNormal, _batch_mahalanobis
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
