"""The Fisher-Snedecor (F) distribution (PyTorch's ``torch.distributions.fishersnedecor``)."""

from __future__ import annotations

import math
import numbers

from mlfuse.distributions import constraints
from mlfuse.distributions.continuous import Gamma
from mlfuse.distributions.distribution import Distribution
from mlfuse.distributions.utils import _float_tensor, _lgammas, broadcast_all, finfo

__all__ = ["FisherSnedecor"]


class FisherSnedecor(Distribution):
    """The Fisher-Snedecor (F) distribution of ``df1`` and ``df2`` degrees of
    freedom; ``rsample`` is the ratio of two Gamma draws (implicit
    reparameterization gradients to both)::

        FisherSnedecor(1.0, 2.0).rsample((4,))
    """

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True
    _batch_params = {"df1": 0, "df2": 0}

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        scalar = isinstance(df1, numbers.Number) and isinstance(df2, numbers.Number)
        super().__init__(() if scalar else self.df1.shape, validate_args=validate_args)

    @property
    def _gamma1(self) -> Gamma:
        return Gamma(self.df1 * 0.5, self.df1, validate_args=False)

    @property
    def _gamma2(self) -> Gamma:
        return Gamma(self.df2 * 0.5, self.df2, validate_args=False)

    @property
    def mean(self):
        """``df2 / (df2 - 2)`` (NaN for ``df2 <= 2``)."""
        df2 = self.df2
        return (df2 > 2).where(df2 / (df2 - 2), math.nan)

    @property
    def mode(self):
        """``(df1 - 2) / df1 * df2 / (df2 + 2)`` (NaN for ``df1 <= 2``)."""
        d1, d2 = self.df1, self.df2
        return (d1 > 2).where((d1 - 2) / d1 * d2 / (d2 + 2), math.nan)

    @property
    def variance(self):
        """``2 df2^2 (df1 + df2 - 2) / (df1 (df2 - 2)^2 (df2 - 4))`` (NaN for ``df2 <= 4``)."""
        d1, d2 = self.df1, self.df2
        var = 2 * d2.square() * (d1 + d2 - 2) / (d1 * (d2 - 2).square() * (d2 - 4))
        return (d2 > 4).where(var, math.nan)

    def rsample(self, sample_shape=()):
        """Reparameterized samples ``X1 / X2``, ``Xi ~ Gamma(dfi / 2, dfi)``."""
        shape = self._extended_shape(sample_shape)
        x1 = self._gamma1.rsample(sample_shape).reshape(shape)
        x2 = self._gamma2.rsample(sample_shape).reshape(shape)
        tiny = finfo(x2.dtype).tiny
        return (x1 / x2.clamp(min=tiny)).clamp(min=tiny)

    def log_prob(self, value):
        """The log density at ``value``."""
        if self._validate_args:
            self._validate_sample(value)
        value = _float_tensor(value, self.df1)
        ct1 = self.df1 * 0.5
        ct2 = self.df2 * 0.5
        ct3 = self.df1 / self.df2
        lg12, lg1, lg2 = _lgammas(ct1 + ct2, ct1, ct2)
        t1 = lg12 - lg1 - lg2
        t2 = ct1 * ct3.log() + (ct1 - 1) * value.log()
        t3 = (ct1 + ct2) * (ct3 * value).log1p()
        return t1 + t2 - t3
