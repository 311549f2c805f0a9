"""The Weibull distribution (PyTorch's ``torch.distributions.weibull``)."""

from __future__ import annotations

from mlfuse.distributions import constraints
from mlfuse.distributions.continuous import Exponential
from mlfuse.distributions.transformed_distribution import TransformedDistribution
from mlfuse.distributions.transforms import AffineTransform, PowerTransform
from mlfuse.distributions.utils import _lgammas, _shape, broadcast_all, euler_constant
from mlfuse.tensor import Tensor

__all__ = ["Weibull"]


class Weibull(TransformedDistribution):
    """The two-parameter Weibull distribution of ``scale`` (lambda) and
    ``concentration`` (k): ``scale * E^(1/k)`` for ``E ~ Exponential(1)``::

        Weibull(1.0, 1.5).rsample((4,))
    """

    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        ones = Tensor.full(self.scale.shape, 1.0, self.scale.dtype, self.scale.device)
        base_dist = Exponential(ones, validate_args=validate_args)
        transforms = [
            PowerTransform(exponent=self.concentration_reciprocal),
            AffineTransform(loc=0, scale=self.scale),
        ]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with its batch expanded to ``batch_shape``."""
        new = self._get_checked_instance(Weibull, _instance)
        batch_shape = _shape(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.concentration_reciprocal = new.concentration.reciprocal()
        base_dist = self.base_dist.expand(batch_shape)
        transforms = [
            PowerTransform(exponent=new.concentration_reciprocal),
            AffineTransform(loc=0, scale=new.scale),
        ]
        TransformedDistribution.__init__(new, base_dist, transforms, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        """``scale * Gamma(1 + 1/k)``."""
        return self.scale * (1 + self.concentration_reciprocal).lgamma().exp()

    @property
    def mode(self):
        """``scale ((k - 1) / k)^(1/k)`` for ``k > 1``; 0 for ``k <= 1``, where the
        density is largest at 0 (PyTorch 2.13 applies the formula there too,
        which gives meaningless values)."""
        k = self.concentration
        return (k > 1).where(self.scale * ((k - 1) / k).clamp(min=0) ** k.reciprocal(), 0.0)

    @property
    def variance(self):
        """``scale^2 (Gamma(1 + 2/k) - Gamma(1 + 1/k)^2)``."""
        r = self.concentration_reciprocal
        lg2, lg1 = _lgammas(1 + 2 * r, 1 + r)
        return self.scale.square() * (lg2.exp() - (2 * lg1).exp())

    def entropy(self):
        """``gamma (1 - 1/k) + log(scale / k) + 1``, gamma Euler's constant."""
        r = self.concentration_reciprocal
        return euler_constant * (1 - r) + (self.scale * r).log() + 1
