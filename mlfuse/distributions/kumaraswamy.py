"""The Kumaraswamy distribution (PyTorch's ``torch.distributions.kumaraswamy``)."""

from __future__ import annotations

import math

from mlfuse.distributions import constraints
from mlfuse.distributions.continuous import Uniform
from mlfuse.distributions.transformed_distribution import TransformedDistribution
from mlfuse.distributions.transforms import AffineTransform, PowerTransform
from mlfuse.distributions.utils import _digammas, _lgammas, _shape, broadcast_all, euler_constant
from mlfuse.tensor import Tensor

__all__ = ["Kumaraswamy"]


def _moments(a, b, *ns):
    """The moments ``b B(1 + n/a, b)`` for each ``n`` of ``ns`` (one lgamma
    expansion for all their arguments)."""
    args = [1 + n / a for n in ns]
    lgs = _lgammas(b, *args, *(arg + b for arg in args))
    k = len(ns)
    return tuple(b * (lgs[0] + lgs[1 + i] - lgs[1 + k + i]).exp() for i in range(k))


class Kumaraswamy(TransformedDistribution):
    """The Kumaraswamy distribution on (0, 1) of ``concentration1`` (a) and
    ``concentration0`` (b), of density ``a b x^(a-1) (1 - x^a)^(b-1)``:
    ``(1 - U^(1/b))^(1/a)`` for uniform U::

        Kumaraswamy(2.0, 5.0).rsample((4,))
    """

    arg_constraints = {
        "concentration1": constraints.positive,
        "concentration0": constraints.positive,
    }
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        c0 = self.concentration0
        base_dist = Uniform(
            Tensor.full(c0.shape, 0.0, c0.dtype, c0.device),
            Tensor.full(c0.shape, 1.0, c0.dtype, c0.device),
            validate_args=validate_args,
        )
        transforms = [
            PowerTransform(exponent=self.concentration0.reciprocal()),
            AffineTransform(loc=1.0, scale=-1.0),
            PowerTransform(exponent=self.concentration1.reciprocal()),
        ]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with its batch expanded to ``batch_shape``."""
        new = self._get_checked_instance(Kumaraswamy, _instance)
        batch_shape = _shape(batch_shape)
        new.concentration1 = self.concentration1.expand(batch_shape)
        new.concentration0 = self.concentration0.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        """``b B(1 + 1/a, b)``."""
        (m1,) = _moments(self.concentration1, self.concentration0, 1)
        return m1

    @property
    def mode(self):
        """``((a - 1) / (a b - 1))^(1/a)`` (NaN where a or b is below 1). PyTorch
        2.13's formula has a sign slip that makes it NaN for every b > 1; this
        is the density's maximum."""
        a, b = self.concentration1, self.concentration0
        log_mode = ((a - 1).log() - (a * b - 1).log()) / a
        log_mode = ((b < 1) | (a < 1)).where(math.nan, log_mode)
        return log_mode.exp()

    @property
    def variance(self):
        """``b B(1 + 2/a, b) - mean^2``."""
        m1, m2 = _moments(self.concentration1, self.concentration0, 1, 2)
        return m2 - m1.square()

    def entropy(self):
        """``(1 - 1/b) + (1 - 1/a) H_b - log(a b)``, ``H_b`` the b-th harmonic number."""
        a, b = self.concentration1, self.concentration0
        t1 = 1 - a.reciprocal()
        t0 = 1 - b.reciprocal()
        (dg,) = _digammas(b + 1)
        h0 = dg + euler_constant
        return t0 + t1 * h0 - a.log() - b.log()
