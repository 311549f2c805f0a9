"""The base of the half distributions: ``|X|`` for a distribution of ``X``
symmetric about 0 (HalfNormal, HalfCauchy)."""

from __future__ import annotations

import math

from mlfuse.distributions import constraints
from mlfuse.distributions.transformed_distribution import TransformedDistribution
from mlfuse.distributions.transforms import AbsTransform
from mlfuse.distributions.utils import _float_tensor


class HalfDistribution(TransformedDistribution):
    """``|X|`` for ``X ~ base(0, scale)``, ``base`` a location-scale family
    symmetric about 0 (the subclass's ``_base``): the density doubles on
    ``[0, inf)``, the cdf is ``2 F - 1``, the entropy loses ``log 2``."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _base: type

    def __init__(self, scale, validate_args=None):
        base_dist = self._base(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with its batch expanded to ``batch_shape``."""
        new = self._get_checked_instance(type(self), _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def scale(self):
        """The scale of the underlying symmetric distribution."""
        return self.base_dist.scale

    @property
    def mode(self):
        """Zero."""
        return self.scale * 0

    def log_prob(self, value):
        """``log 2`` plus the base log density at ``value`` (``-inf`` below 0)."""
        if self._validate_args:
            self._validate_sample(value)
        value = _float_tensor(value, self.scale)
        lp = self.base_dist.log_prob(value) + math.log(2)
        return (value >= 0).where(lp, -math.inf)

    def cdf(self, value):
        """``2 F(value) - 1``, F the base cdf."""
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        """The quantile at ``prob``: the base's at ``(prob + 1) / 2``."""
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        """The base entropy less ``log 2``."""
        return self.base_dist.entropy() - math.log(2)
