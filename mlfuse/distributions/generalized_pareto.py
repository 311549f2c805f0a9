"""The generalized Pareto distribution (PyTorch's
``torch.distributions.generalized_pareto``)."""

from __future__ import annotations

import math
import numbers

from mlfuse.distributions import constraints
from mlfuse.distributions.distribution import Distribution
from mlfuse.distributions.utils import _float_tensor, broadcast_all
from mlfuse.tensor import Tensor

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """The generalized Pareto distribution of ``loc``, ``scale`` and
    ``concentration`` (xi): survival function ``(1 + xi z)^(-1/xi)`` of ``z =
    (x - loc) / scale`` (``exp(-z)`` at ``xi = 0``). Exponential (``loc = 0, xi
    = 0``), Pareto (``xi > 0, loc = scale / xi``) and Uniform (``xi = -1``) are
    special cases. ``rsample`` is the inverse cdf of uniform draws::

        GeneralizedPareto(0.1, 2.0, 0.4).rsample((4,))
    """

    arg_constraints = {
        "loc": constraints.real,
        "scale": constraints.positive,
        "concentration": constraints.real,
    }
    has_rsample = True
    _batch_params = {"loc": 0, "scale": 0, "concentration": 0}

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        scalar = all(isinstance(v, numbers.Number) for v in (loc, scale, concentration))
        super().__init__(() if scalar else self.loc.shape, validate_args=validate_args)

    def _zero_and_safe(self):
        """Where the concentration is zero (``isclose(c, 0)``, PyTorch's test),
        and the concentration with 1 there."""
        c = self.concentration
        eq_zero = c.abs() <= 1e-8
        return eq_zero, eq_zero.where(1.0, c)

    def rsample(self, sample_shape=()):
        """Reparameterized samples: the inverse cdf of uniform draws."""
        shape = self._extended_shape(sample_shape)
        u = Tensor.rand(*shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.icdf(u)

    def _z(self, x):
        return (x - self.loc) / self.scale

    def log_prob(self, value):
        """``-log(scale) - (1 + 1/xi) log1p(xi z)`` (``-log(scale) - z`` at ``xi = 0``)."""
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(_float_tensor(value, self.loc))
        eq_zero, safe = self._zero_and_safe()
        y = 1 / safe + 1
        where_nonzero = (y == 0).where(y, y * (safe * z).log1p())
        return -self.scale.log() - eq_zero.where(z, where_nonzero)

    def log_survival_function(self, value):
        """``log(1 - cdf(value)) = -log1p(xi z) / xi`` (``-z`` at ``xi = 0``)."""
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(_float_tensor(value, self.loc))
        eq_zero, safe = self._zero_and_safe()
        return eq_zero.where(-z, -(safe * z).log1p() / safe)

    def log_cdf(self, value):
        """``log(cdf(value))``."""
        return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value):
        """``1 - (1 + xi z)^(-1/xi)``."""
        return self.log_cdf(value).exp()

    def icdf(self, value):
        """The quantile at ``value``: ``loc + scale / xi * expm1(-xi log1p(-u))``."""
        value = _float_tensor(value, self.loc)
        eq_zero, safe = self._zero_and_safe()
        logu = (-value).log1p()
        where_nonzero = self.loc + self.scale / safe * (-safe * logu).expm1()
        where_zero = self.loc - self.scale * logu
        return eq_zero.where(where_zero, where_nonzero)

    @property
    def mean(self):
        """``loc + scale / (1 - xi)`` (NaN for ``xi >= 1``)."""
        c = self.concentration
        valid = c < 1
        safe = valid.where(c, 0.5)
        return valid.where(self.loc + self.scale / (1 - safe), math.nan)

    @property
    def variance(self):
        """``scale^2 / ((1 - xi)^2 (1 - 2 xi))`` (NaN for ``xi >= 1/2``)."""
        c = self.concentration
        valid = c < 0.5
        safe = valid.where(c, 0.25)
        return valid.where(self.scale.square() / ((1 - safe).square() * (1 - 2 * safe)), math.nan)

    def entropy(self):
        """``log(scale) + xi + 1``."""
        ans = self.scale.log() + self.concentration + 1
        return ans.expand(self._batch_shape)

    @property
    def mode(self):
        """``loc``."""
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        """``[loc, loc - scale / xi]`` for ``xi < 0``, ``[loc, inf]`` otherwise."""
        lower = self.loc
        upper = (self.concentration < 0).where(lower - self.scale / self.concentration, math.inf)
        return constraints.interval(lower, upper)
