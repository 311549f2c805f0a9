"""The half-Cauchy distribution (PyTorch's ``torch.distributions.half_cauchy``)."""

from __future__ import annotations

import math

from mlfuse.distributions.continuous import Cauchy
from mlfuse.distributions._half import HalfDistribution
from mlfuse.tensor import Tensor

__all__ = ["HalfCauchy"]


class HalfCauchy(HalfDistribution):
    """The half-Cauchy distribution: ``|X|`` for ``X ~ Cauchy(0, scale)``::

    HalfCauchy(mlfuse.tensor([1.0])).rsample((4,))
    """

    _base = Cauchy

    @property
    def mean(self):
        """Infinite."""
        return Tensor.full(self._extended_shape(), math.inf, self.scale.dtype, self.scale.device)

    @property
    def variance(self):
        """Infinite (the Cauchy distribution's)."""
        return self.base_dist.variance
