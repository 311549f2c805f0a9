"""The Pareto (type I) distribution (PyTorch's ``torch.distributions.pareto``)."""

from __future__ import annotations

from mlfuse.distributions import constraints
from mlfuse.distributions.continuous import Exponential
from mlfuse.distributions.transformed_distribution import TransformedDistribution
from mlfuse.distributions.transforms import AffineTransform, ExpTransform
from mlfuse.distributions.utils import _shape, broadcast_all

__all__ = ["Pareto"]


class Pareto(TransformedDistribution):
    """The Pareto type I distribution of minimum ``scale`` and tail index
    ``alpha``: ``scale * exp(E)`` for ``E ~ Exponential(alpha)``::

        Pareto(1.0, 3.0).rsample((4,))
    """

    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}

    def __init__(self, scale, alpha, validate_args=None):
        self.scale, self.alpha = broadcast_all(scale, alpha)
        base_dist = Exponential(self.alpha, validate_args=validate_args)
        transforms = [ExpTransform(), AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with its batch expanded to ``batch_shape``."""
        new = self._get_checked_instance(Pareto, _instance)
        batch_shape = _shape(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new.alpha = self.alpha.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        """``alpha * scale / (alpha - 1)`` (infinite for ``alpha <= 1``)."""
        a = self.alpha.clamp(min=1)
        return a * self.scale / (a - 1)

    @property
    def mode(self):
        """``scale``."""
        return self.scale

    @property
    def variance(self):
        """``scale^2 alpha / ((alpha - 1)^2 (alpha - 2))`` (infinite for ``alpha <= 2``)."""
        a = self.alpha.clamp(min=2)
        return self.scale.square() * a / ((a - 1).square() * (a - 2))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        """``[scale, inf)``."""
        return constraints.greater_than_eq(self.scale)

    def entropy(self):
        """``log(scale / alpha) + 1 + 1 / alpha``."""
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())
