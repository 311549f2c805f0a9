"""The continuous Bernoulli distribution (PyTorch's
``torch.distributions.continuous_bernoulli``)."""

from __future__ import annotations

import math
import numbers

import numpy as np

from mlfuse.distributions import constraints
from mlfuse.distributions.discrete import _bce_with_logits
from mlfuse.distributions.exp_family import ExponentialFamily
from mlfuse.distributions.utils import (
    _float_tensor,
    _host,
    broadcast_all,
    clamp_probs,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)
from mlfuse.tensor import Tensor

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(ExponentialFamily):
    """The continuous Bernoulli distribution on [0, 1] (Loaiza-Ganem and
    Cunningham, 2019) of ``probs`` in (0, 1) or real ``logits``: density
    ``C(p) p^x (1 - p)^(1 - x)``. ``probs`` is not a probability nor ``logits``
    log-odds, but they play the same roles as Bernoulli's. Near ``probs = 1/2``
    (inside ``lims``) the normalizer and moments use Taylor expansions.
    ``rsample`` is the inverse cdf of uniform draws::

        ContinuousBernoulli(mlfuse.tensor([0.3])).rsample((4,))
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True
    _batch_params = {"probs": 0, "logits": 0}

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            scalar = isinstance(probs, numbers.Number)
            (self.probs,) = broadcast_all(probs)
            if validate_args:  # before the clamp (PyTorch checks here as well)
                host = _host(self.probs)
                if host is not None and not np.all(self.arg_constraints["probs"]._check(host)):
                    raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
        else:
            scalar = isinstance(logits, numbers.Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        self._lims = lims
        super().__init__(() if scalar else self._param.shape, validate_args=validate_args)

    @lazy_property
    def logits(self):
        """``log(probs / (1 - probs))``."""
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        """``sigmoid(logits)``, clamped into ``(0, 1)``."""
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self):
        """The shape of the parameter given."""
        return self._param.shape

    def _outside_unstable_region(self) -> Tensor:
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self) -> Tensor:
        return self._outside_unstable_region().where(self.probs, self._lims[0])

    def _cont_bern_log_norm(self) -> Tensor:
        """The log normalizing constant ``log C(probs)``."""
        cut = self._cut_probs()
        below = (cut <= 0.5).where(cut, 0.0)
        above = (cut >= 0.5).where(cut, 1.0)
        log_norm = ((-cut).log1p() - cut.log()).abs().log() - (cut <= 0.5).where(
            (-2.0 * below).log1p(), (2.0 * above - 1.0).log()
        )
        x = (self.probs - 0.5).square()
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return self._outside_unstable_region().where(log_norm, taylor)

    @property
    def mean(self):
        """``p / (2p - 1) + 1 / (log(1 - p) - log p)``."""
        cut = self._cut_probs()
        mus = cut / (2.0 * cut - 1.0) + 1.0 / ((-cut).log1p() - cut.log())
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.square()) * x
        return self._outside_unstable_region().where(mus, taylor)

    @property
    def stddev(self):
        """``sqrt(variance)``."""
        return self.variance.sqrt()

    @property
    def variance(self):
        """``p (p - 1) / (1 - 2p)^2 + 1 / (log(1 - p) - log p)^2``."""
        cut = self._cut_probs()
        var = (
            cut * (cut - 1.0) / (1.0 - 2.0 * cut).square()
            + 1.0 / ((-cut).log1p() - cut.log()).square()
        )
        x = (self.probs - 0.5).square()
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return self._outside_unstable_region().where(var, taylor)

    def sample(self, sample_shape=()):
        """Samples (no gradient): the inverse cdf of uniform draws."""
        shape = self._extended_shape(sample_shape)
        probs = self.probs.detach()
        u = Tensor.rand(*shape, dtype=probs.dtype, device=probs.device)
        return self._icdf(u, probs).detach()

    def rsample(self, sample_shape=()):
        """Reparameterized samples: the inverse cdf of uniform draws."""
        shape = self._extended_shape(sample_shape)
        u = Tensor.rand(*shape, dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value):
        """``x log p + (1 - x) log(1 - p) + log C(p)``."""
        if self._validate_args:
            self._validate_sample(value)
        value = _float_tensor(value, self.logits)
        return -_bce_with_logits(self.logits, value) + self._cont_bern_log_norm()

    def cdf(self, value):
        """``(p^x (1 - p)^(1 - x) + p - 1) / (2p - 1)`` on [0, 1]; near ``p = 1/2``
        its exact equivalent ``expm1(eta x) / expm1(eta)``, ``eta = logit(p)``
        (PyTorch 2.13 returns ``x`` there, off by up to 2.5e-4)."""
        if self._validate_args:
            self._validate_sample(value)
        value = _float_tensor(value, self.probs)
        cut = self._cut_probs()
        cdfs = (cut.pow(value) * (1.0 - cut).pow(1.0 - value) + cut - 1.0) / (2.0 * cut - 1.0)
        eta_zero, safe = self._near_half()
        near = eta_zero.where(value, (safe * value).expm1() / safe.expm1())
        unbounded = self._outside_unstable_region().where(cdfs, near)
        return (value <= 0.0).where(0.0, (value >= 1.0).where(1.0, unbounded))

    def _near_half(self):
        """Where ``logit(probs)`` is 0, and the logit with 1 there."""
        eta = self.probs.log() - (-self.probs).log1p()
        eta_zero = eta == 0
        return eta_zero, eta_zero.where(1.0, eta)

    def _icdf(self, value, probs):
        outside = (probs <= self._lims[0]) | (probs > self._lims[1])
        cut = outside.where(probs, self._lims[0])
        inv = ((-cut + value * (2.0 * cut - 1.0)).log1p() - (-cut).log1p()) / (
            cut.log() - (-cut).log1p()
        )
        eta = probs.log() - (-probs).log1p()
        eta_zero = eta == 0
        safe = eta_zero.where(1.0, eta)
        near = eta_zero.where(value, (value * safe.expm1()).log1p() / safe)
        return outside.where(inv, near)

    def icdf(self, value):
        """The quantile at ``value``: ``log1p((2p - 1) u - p) - log1p(-p)`` over
        ``log p - log1p(-p)``; near ``p = 1/2`` its exact equivalent
        ``log1p(u expm1(eta)) / eta`` (PyTorch 2.13 returns ``u`` there)."""
        value = _float_tensor(value, self.probs)
        return self._icdf(value, self.probs)

    def entropy(self):
        """``mean (log(1 - p) - log p) - log C(p) - log(1 - p)``."""
        log_probs0 = (-self.probs).log1p()
        log_probs1 = self.probs.log()
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        """The log normalizer as a function of the natural parameter ``x``."""
        out = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut = out.where(x, self._lims[0] - 0.5)
        log_norm = cut.expm1().abs().log() - cut.abs().log()
        taylor = 0.5 * x + x.square() / 24.0 - x.pow(4) / 2880.0
        return out.where(log_norm, taylor)
