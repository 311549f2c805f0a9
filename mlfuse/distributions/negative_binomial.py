"""The negative binomial distribution (PyTorch's ``torch.distributions.negative_binomial``)."""

from __future__ import annotations

import numpy as np

from mlfuse.distributions import constraints
from mlfuse.distributions.continuous import Gamma
from mlfuse.distributions.discrete import _one_of
from mlfuse.distributions.distribution import Distribution
from mlfuse.distributions.utils import (
    _float_tensor,
    _lgammas,
    broadcast_all,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)
from mlfuse.tensor import _random

__all__ = ["NegativeBinomial"]


class NegativeBinomial(Distribution):
    """The negative binomial distribution: the number of successes in Bernoulli
    trials of probability ``probs`` (or log-odds ``logits``) before
    ``total_count`` failures (a real, non-negative count is allowed). Samples
    (floats) are Poisson draws of Gamma-distributed rates, made on the host
    from mlfuse's generators::

        NegativeBinomial(5.0, probs=0.3).sample((4,))
    """

    arg_constraints = {
        "total_count": constraints.greater_than_eq(0),
        "probs": constraints.half_open_interval(0.0, 1.0),
        "logits": constraints.real,
    }
    support = constraints.nonnegative_integer
    _batch_params = {"total_count": 0, "probs": 0, "logits": 0}

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.cast(self.probs.dtype)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.cast(self.logits.dtype)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(self._param.shape, validate_args=validate_args)

    @property
    def mean(self):
        """``total_count * probs / (1 - probs)``."""
        return self.total_count * self.logits.exp()

    @property
    def mode(self):
        """``floor((total_count - 1) probs / (1 - probs))``, at least 0."""
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        """``mean / (1 - probs)``."""
        return self.mean / (-self.logits).sigmoid()

    @lazy_property
    def logits(self):
        """The log-odds of success."""
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        """The probability of success."""
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        """The shape of the parameter given."""
        return self._param.shape

    @lazy_property
    def _gamma(self) -> Gamma:
        return Gamma(self.total_count, (-self.logits).exp(), validate_args=False)

    def sample(self, sample_shape=()):
        """Samples (floats): ``Poisson(G)`` for ``G ~ Gamma(total_count, (1 - p) / p)``."""
        shape = self._extended_shape(sample_shape)
        count = np.broadcast_to(self.total_count.numpy().astype(np.float64), shape)
        scale = np.broadcast_to(np.exp(self.logits.numpy().astype(np.float64)), shape)

        def draw(g):
            rate = np.where(count > 0, g.standard_gamma(np.where(count > 0, count, 1.0)), 0.0)
            return g.poisson(rate * scale).astype(np.float64)

        return _random(draw, self._param.dtype, self._param.device)

    def log_prob(self, value):
        """``lgamma(n + k) - lgamma(k + 1) - lgamma(n) + n log(1 - p) + k log p``."""
        if self._validate_args:
            self._validate_sample(value)
        n, logits = self.total_count, self.logits
        k = _float_tensor(value, logits)
        log_unnormalized = n * (-logits).logsigmoid() + k * logits.logsigmoid()
        lg_nk, lg_k, lg_n = _lgammas(n + k, 1.0 + k, n)
        log_normalization = -lg_nk + lg_k + lg_n
        log_normalization = ((n + k) == 0.0).where(0.0, log_normalization)
        return log_unnormalized - log_normalization
