"""The half-normal distribution (PyTorch's ``torch.distributions.half_normal``)."""

from __future__ import annotations

import math

from mlfuse.distributions.continuous import Normal
from mlfuse.distributions._half import HalfDistribution

__all__ = ["HalfNormal"]


class HalfNormal(HalfDistribution):
    """The half-normal distribution: ``|X|`` for ``X ~ Normal(0, scale)``::

    HalfNormal(mlfuse.tensor([1.0])).rsample((4,))
    """

    _base = Normal

    @property
    def mean(self):
        """``scale * sqrt(2 / pi)``."""
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self):
        """``scale^2 (1 - 2 / pi)``."""
        return self.scale.square() * (1 - 2 / math.pi)
