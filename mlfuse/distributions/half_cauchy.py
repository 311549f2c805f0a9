"""The half-Cauchy distribution (PyTorch's ``torch.distributions.half_cauchy``)."""

from __future__ import annotations

import math

from mlfuse.distributions import constraints
from mlfuse.distributions.continuous import Cauchy
from mlfuse.distributions.transformed_distribution import TransformedDistribution
from mlfuse.distributions.transforms import AbsTransform
from mlfuse.distributions.utils import _float_tensor
from mlfuse.tensor import Tensor

__all__ = ["HalfCauchy"]


class HalfCauchy(TransformedDistribution):
    """The half-Cauchy distribution: ``|X|`` for ``X ~ Cauchy(0, scale)``::

    HalfCauchy(mlfuse.tensor([1.0])).rsample((4,))
    """

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args=None):
        base_dist = Cauchy(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with its batch expanded to ``batch_shape``."""
        new = self._get_checked_instance(HalfCauchy, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def scale(self):
        """The scale of the underlying Cauchy distribution."""
        return self.base_dist.scale

    @property
    def mean(self):
        """Infinite."""
        return Tensor.full(self._extended_shape(), math.inf, self.scale.dtype, self.scale.device)

    @property
    def mode(self):
        """Zero."""
        return self.scale * 0

    @property
    def variance(self):
        """Infinite (the Cauchy distribution's)."""
        return self.base_dist.variance

    def log_prob(self, value):
        """``log 2`` plus the Cauchy log density at ``value`` (``-inf`` below 0)."""
        if self._validate_args:
            self._validate_sample(value)
        value = _float_tensor(value, self.scale)
        lp = self.base_dist.log_prob(value) + math.log(2)
        return (value >= 0).where(lp, -math.inf)

    def cdf(self, value):
        """``2 F(value) - 1``, F the Cauchy cdf."""
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        """The quantile at ``prob``: the Cauchy's at ``(prob + 1) / 2``."""
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        """The Cauchy entropy less ``log 2``."""
        return self.base_dist.entropy() - math.log(2)
