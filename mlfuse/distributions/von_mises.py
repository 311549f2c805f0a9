"""The von Mises distribution (PyTorch's ``torch.distributions.von_mises``)."""

from __future__ import annotations

import math

import numpy as np

from mlfuse.distributions import constraints
from mlfuse.distributions.distribution import Distribution
from mlfuse.distributions.utils import _float_tensor, broadcast_all, lazy_property
from mlfuse.tensor import _random

__all__ = ["VonMises"]


def _log_i0(x):
    """``log I0(x)`` for ``x >= 0`` (through the exponentially scaled ``i0e``,
    no overflow)."""
    from mlfuse.special import i0e

    return i0e(x).log() + x


def _i1_over_i0(x):
    """``I1(x) / I0(x)`` for ``x >= 0``."""
    from mlfuse.special import i0e, i1e

    return i1e(x) / i0e(x)


def _rejection_sample(loc, kappa, gen, shape):
    """Best and Fisher's (1979) rejection sampler on the host, in float64: the
    angles of ``shape`` (loc and kappa broadcast to it), wrapped into [-pi, pi)."""
    loc = np.broadcast_to(np.asarray(loc, np.float64), shape)
    kappa = np.broadcast_to(np.asarray(kappa, np.float64), shape)
    tau = 1 + np.sqrt(1 + 4 * kappa**2)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = (tau - np.sqrt(2 * tau)) / (2 * kappa)
        r = np.where(kappa < 1e-5, 1 / kappa + kappa, (1 + rho**2) / (2 * rho))
    x = np.zeros(shape)
    todo = np.ones(shape, bool)
    while todo.any():
        u1, u2, u3 = gen.random((3,) + tuple(shape))
        z = np.cos(math.pi * u1)
        with np.errstate(divide="ignore", invalid="ignore"):
            f = (1 + r * z) / (r + z)
            c = kappa * (r - f)
            accept = ((c * (2 - c) - u2) > 0) | (np.log(c / u2) + 1 - c >= 0)
        accept &= todo
        x = np.where(accept, np.sign(u3 - 0.5) * np.arccos(np.clip(f, -1, 1)), x)
        todo &= ~accept
    return np.mod(x + math.pi + loc, 2 * math.pi) - math.pi


class VonMises(Distribution):
    """The circular von Mises distribution of angle ``loc`` and
    ``concentration`` (kappa): density ``exp(kappa cos(x - loc)) / (2 pi
    I0(kappa))``. ``loc`` and values may be any reals, read as angles modulo 2
    pi. Samples (no rsample, as PyTorch's) come from Best and Fisher's
    rejection sampler, on the host in float64 from mlfuse's generators::

        VonMises(mlfuse.tensor([1.0]), mlfuse.tensor([4.0])).sample((4,))

    ``I0`` and ``I1`` are computed to double precision (PyTorch uses
    polynomial approximations of about 1e-7 relative accuracy)."""

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False
    _batch_params = {"loc": 0, "concentration": 0}

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, (), validate_args=validate_args)

    def log_prob(self, value):
        """``kappa cos(value - loc) - log(2 pi I0(kappa))``."""
        if self._validate_args:
            self._validate_sample(value)
        value = _float_tensor(value, self.loc)
        return (
            self.concentration * (value - self.loc).cos()
            - math.log(2 * math.pi)
            - _log_i0(self.concentration)
        )

    def sample(self, sample_shape=()):
        """Samples in ``[-pi, pi)``, drawn on the host (no gradient)."""
        shape = self._extended_shape(sample_shape)
        loc = self.loc.numpy().astype(np.float64)
        kappa = self.concentration.numpy().astype(np.float64)
        return _random(
            lambda g: _rejection_sample(loc, kappa, g, shape), self.loc.dtype, self.loc.device
        )

    @property
    def mean(self):
        """The circular mean, ``loc``."""
        return self.loc

    @property
    def mode(self):
        """``loc``."""
        return self.loc

    @lazy_property
    def variance(self):
        """The circular variance ``1 - I1(kappa) / I0(kappa)``."""
        return 1 - _i1_over_i0(self.concentration)
