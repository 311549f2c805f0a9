"""The inverse gamma distribution (PyTorch's ``torch.distributions.inverse_gamma``)."""

from __future__ import annotations

import math

from mlfuse.distributions import constraints
from mlfuse.distributions.continuous import Gamma
from mlfuse.distributions.transformed_distribution import TransformedDistribution
from mlfuse.distributions.transforms import PowerTransform
from mlfuse.tensor import Tensor

__all__ = ["InverseGamma"]


class InverseGamma(TransformedDistribution):
    """The inverse gamma distribution: ``1 / X`` for ``X ~ Gamma(concentration,
    rate)``; ``rsample`` carries the Gamma sampler's implicit reparameterization
    gradients::

        InverseGamma(2.0, 3.0).rsample((4,))
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        base_dist = Gamma(concentration, rate, validate_args=validate_args)
        rate = base_dist.rate
        neg_one = Tensor(-1.0, rate.dtype, rate.device)
        super().__init__(base_dist, PowerTransform(neg_one), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with its batch expanded to ``batch_shape``."""
        new = self._get_checked_instance(InverseGamma, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def concentration(self):
        """The shape (alpha) of the underlying Gamma distribution."""
        return self.base_dist.concentration

    @property
    def rate(self):
        """The rate (beta) of the underlying Gamma distribution."""
        return self.base_dist.rate

    @property
    def mean(self):
        """``rate / (concentration - 1)`` (infinite for ``concentration <= 1``)."""
        c = self.concentration
        return (c > 1).where(self.rate / (c - 1), math.inf)

    @property
    def mode(self):
        """``rate / (concentration + 1)``."""
        return self.rate / (self.concentration + 1)

    @property
    def variance(self):
        """``rate^2 / ((c - 1)^2 (c - 2))`` (infinite for ``c <= 2``)."""
        c = self.concentration
        return (c > 2).where(self.rate.square() / ((c - 1).square() * (c - 2)), math.inf)

    def entropy(self):
        """``c + log(rate) + lgamma(c) - (1 + c) digamma(c)``."""
        c = self.concentration
        return c + self.rate.log() + c.lgamma() - (1 + c) * c.digamma()
