"""The logistic-normal distribution (PyTorch's ``torch.distributions.logistic_normal``)."""

from __future__ import annotations

from mlfuse.distributions import constraints
from mlfuse.distributions.continuous import Normal
from mlfuse.distributions.transformed_distribution import TransformedDistribution
from mlfuse.distributions.transforms import StickBreakingTransform

__all__ = ["LogisticNormal"]


class LogisticNormal(TransformedDistribution):
    """The logistic-normal distribution on the simplex: a ``Normal(loc, scale)``
    vector of ``K - 1`` entries pushed through the
    :class:`~mlfuse.distributions.transforms.StickBreakingTransform` onto ``K``
    probabilities::

        LogisticNormal(mlfuse.zeros(3), mlfuse.ones(3)).rsample()   # 4 entries
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base_dist = Normal(loc, scale, validate_args=validate_args)
        if not base_dist.batch_shape:
            base_dist = base_dist.expand([1])
        super().__init__(base_dist, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with its batch expanded to ``batch_shape``."""
        new = self._get_checked_instance(LogisticNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self):
        """The mean of the underlying normal."""
        return self.base_dist.base_dist.loc

    @property
    def scale(self):
        """The standard deviation of the underlying normal."""
        return self.base_dist.base_dist.scale
