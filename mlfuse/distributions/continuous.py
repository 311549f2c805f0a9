"""Univariate continuous distributions and the Gamma family: Normal, Uniform,
Exponential, Laplace, Cauchy, Gumbel, StudentT, Gamma, Chi2, Beta, Dirichlet."""

from __future__ import annotations

import math
import numbers

from mlfuse.distributions import constraints
from mlfuse.distributions.distribution import Distribution
from mlfuse.distributions.exp_family import ExponentialFamily
from mlfuse.distributions.utils import (
    _digammas,
    _lgammas,
    _draw,
    _float_tensor,
    _host,
    _standard_gamma,
    broadcast_all,
    euler_constant,
    finfo,
)
from mlfuse.tensor import Tensor, cat, stack

__all__ = [
    "Beta",
    "Cauchy",
    "Chi2",
    "Dirichlet",
    "Exponential",
    "Gamma",
    "Gumbel",
    "Laplace",
    "Normal",
    "StudentT",
    "Uniform",
]

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def _scalar_batch(*params) -> bool:
    return all(isinstance(p, numbers.Number) for p in params)


def _full(like: Tensor, shape, value: float) -> Tensor:
    return Tensor.full(tuple(shape), value, like.dtype, like.device)


class Normal(ExponentialFamily):
    """The normal distribution of mean ``loc`` and standard deviation ``scale``:
    ``Normal(0.0, 1.0)``, ``Normal(mu, sigma)``."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _batch_params = {"loc": 0, "scale": 0}

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        batch = () if _scalar_batch(loc, scale) else self.loc.shape
        super().__init__(batch, validate_args=validate_args)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.scale.square()

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = Tensor.randn(*shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (
            -((value - self.loc) ** 2) / (2 * self.scale.square())
            - self.scale.log()
            - _LOG_SQRT_2PI
        )

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + ((value - self.loc) / (self.scale * math.sqrt(2))).erf())

    def icdf(self, value):
        return self.loc + self.scale * (2 * value - 1).erfinv() * math.sqrt(2)

    def entropy(self):
        return 0.5 + _LOG_SQRT_2PI + self.scale.log()

    _mean_carrier_measure = 0

    @property
    def _natural_params(self):
        return (self.loc / self.scale.square(), -0.5 * self.scale.square().reciprocal())

    def _log_normalizer(self, x, y):
        return -0.25 * x.square() / y + 0.5 * (-math.pi / y).log()


class Uniform(Distribution):
    """The uniform distribution on ``[low, high)``: ``Uniform(0.0, 1.0)``."""

    arg_constraints = {
        "low": constraints.dependent(is_discrete=False, event_dim=0),
        "high": constraints.dependent(is_discrete=False, event_dim=0),
    }
    has_rsample = True
    _batch_params = {"low": 0, "high": 0}

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = broadcast_all(low, high)
        batch = () if _scalar_batch(low, high) else self.low.shape
        super().__init__(batch, validate_args=validate_args)
        if self._validate_args:
            lo, hi = _host(self.low), _host(self.high)
            if lo is not None and hi is not None and not (lo < hi).all():
                raise ValueError(
                    f"Uniform is not defined when low >= high: found low={lo} and high={hi}"
                )

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.interval(self.low, self.high)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return self.high * math.nan

    @property
    def stddev(self):
        return (self.high - self.low) / 12**0.5

    @property
    def variance(self):
        return (self.high - self.low).square() / 12

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = Tensor.rand(*shape, dtype=self.low.dtype, device=self.low.device)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        inside = (self.low <= value) & (value < self.high)
        width = self.high - self.low
        return inside.where(-width.log(), -math.inf)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.low) / (self.high - self.low)).clamp(0, 1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return (self.high - self.low).log()


class Exponential(ExponentialFamily):
    """The exponential distribution of rate ``rate`` (mean ``1 / rate``)."""

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _batch_params = {"rate": 0}

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        batch = () if isinstance(rate, numbers.Number) else self.rate.shape
        super().__init__(batch, validate_args=validate_args)

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return self.rate * 0

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.square().reciprocal()

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        e = _draw(lambda g, s: g.standard_exponential(s), shape, self.rate)
        return e / self.rate

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - (-self.rate * value).exp()

    def icdf(self, value):
        return -(-value).log1p() / self.rate

    def entropy(self):
        return 1.0 - self.rate.log()

    _mean_carrier_measure = 0

    @property
    def _natural_params(self):
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -(-x).log()


class Laplace(Distribution):
    """The Laplace distribution of location ``loc`` and scale ``scale``."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _batch_params = {"loc": 0, "scale": 0}

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        batch = () if _scalar_batch(loc, scale) else self.loc.shape
        super().__init__(batch, validate_args=validate_args)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return 2 * self.scale.square()

    @property
    def stddev(self):
        return math.sqrt(2) * self.scale

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        e = _draw(lambda g, s: g.laplace(0.0, 1.0, s), shape, self.loc)
        return self.loc + self.scale * e

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = value - self.loc
        return 0.5 - 0.5 * z.sign() * (-z.abs() / self.scale).expm1()

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()

    def entropy(self):
        return 1 + (2 * self.scale).log()


class Cauchy(Distribution):
    """The Cauchy (Lorentz) distribution of median ``loc`` and half width ``scale``."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _batch_params = {"loc": 0, "scale": 0}

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        batch = () if _scalar_batch(loc, scale) else self.loc.shape
        super().__init__(batch, validate_args=validate_args)

    @property
    def mean(self):
        return _full(self.loc, self._extended_shape(), math.nan)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return _full(self.loc, self._extended_shape(), math.inf)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        e = _draw(lambda g, s: g.standard_cauchy(s), shape, self.loc)
        return self.loc + self.scale * e

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        return -math.log(math.pi) - self.scale.log() - z.square().log1p()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.loc) / self.scale).atan() / math.pi + 0.5

    def icdf(self, value):
        return (math.pi * (value - 0.5)).tan() * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()


class Gumbel(Distribution):
    """The Gumbel (type-I extreme value) distribution of location ``loc`` and
    scale ``scale``."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _batch_params = {"loc": 0, "scale": 0}

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        batch = () if _scalar_batch(loc, scale) else self.loc.shape
        super().__init__(batch, validate_args=validate_args)

    @property
    def mean(self):
        return self.loc + self.scale * euler_constant

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self):
        return self.stddev.square()

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        e = _draw(lambda g, s: g.gumbel(0.0, 1.0, s), shape, self.loc)
        return self.loc + self.scale * e

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return (y - y.exp()) - self.scale.log()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (-(-(value - self.loc) / self.scale).exp()).exp()

    def icdf(self, value):
        return self.loc - self.scale * (-value.log()).log()

    def entropy(self):
        return self.scale.log() + (1 + euler_constant)


class Gamma(ExponentialFamily):
    """The Gamma distribution of shape ``concentration`` and ``rate`` (mean
    ``concentration / rate``). ``rsample`` draws on the host and carries the
    implicit reparameterization gradient (Figurnov et al., 2018) to
    ``concentration``, computed exactly from the incomplete gamma function, and
    the ordinary one to ``rate``."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _batch_params = {"concentration": 0, "rate": 0}

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        batch = () if _scalar_batch(concentration, rate) else self.rate.shape
        super().__init__(batch, validate_args=validate_args)

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.square()

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        g = _standard_gamma(self.concentration, shape)
        return (g / self.rate).clamp(min=finfo(g.dtype).tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = _float_tensor(value, self.rate)
        c, r = self.concentration, self.rate
        return c.xlogy(r) + (c - 1).xlogy(value) - r * value - c.lgamma()

    def cdf(self, value):
        """The regularized lower incomplete gamma function ``P(concentration,
        rate * value)`` (differentiable in ``value`` and ``rate``, not in
        ``concentration``, as PyTorch's)."""
        if self._validate_args:
            self._validate_sample(value)
        from mlfuse.special import gammainc

        return gammainc(self.concentration, self.rate * value)

    def entropy(self):
        c = self.concentration
        return c - self.rate.log() + c.lgamma() + (1.0 - c) * c.digamma()

    _mean_carrier_measure = 0

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return (x + 1).lgamma() + (x + 1) * (-y.reciprocal()).log()


class Chi2(Gamma):
    """The chi-squared distribution of ``df`` degrees of freedom
    (``Gamma(df / 2, 1 / 2)``)."""

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    @property
    def df(self):
        return self.concentration * 2


class StudentT(Distribution):
    """Student's t distribution of ``df`` degrees of freedom, location ``loc`` and
    scale ``scale``; ``rsample`` is reparameterized in all three (through a
    Chi2 draw for ``df``)."""

    arg_constraints = {
        "df": constraints.positive,
        "loc": constraints.real,
        "scale": constraints.positive,
    }
    support = constraints.real
    has_rsample = True
    _batch_params = {"df": 0, "loc": 0, "scale": 0}

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        batch = () if _scalar_batch(df, loc, scale) else self.df.shape
        super().__init__(batch, validate_args=validate_args)

    @property
    def mean(self):
        return (self.df > 1).where(self.loc, math.nan)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        df = self.df
        finite = self.scale.square() * df / (df - 2)
        return (df > 2).where(finite, (df > 1).where(math.inf, math.nan))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        x = Tensor.randn(*shape, dtype=self.df.dtype, device=self.df.device)
        z = 2 * _standard_gamma(0.5 * self.df, shape)  # Chi2(df)
        return self.loc + self.scale * x * (z / self.df).rsqrt()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        df = self.df
        y = (value - self.loc) / self.scale
        lg_half, lg_half1 = _lgammas(0.5 * df, 0.5 * (df + 1.0))
        z = self.scale.log() + 0.5 * df.log() + 0.5 * math.log(math.pi) + lg_half - lg_half1
        return -0.5 * (df + 1.0) * (y.square() / df).log1p() - z

    def entropy(self):
        df = self.df
        lg_half, lg_half1 = _lgammas(0.5 * df, 0.5 * (df + 1))
        dg_half, dg_half1 = _digammas(0.5 * df, 0.5 * (df + 1))
        lbeta = lg_half + math.lgamma(0.5) - lg_half1
        return self.scale.log() + 0.5 * (df + 1) * (dg_half1 - dg_half) + 0.5 * df.log() + lbeta


def _with_total(c: Tensor) -> Tensor:
    """``c`` with its sum along the last dim appended (k + 1 entries)."""
    return cat([c, c.sum(-1, keepdim=True)], -1)


class Dirichlet(ExponentialFamily):
    """The Dirichlet distribution over the simplex of the last dim, of
    ``concentration`` (batch_shape + (k,)). ``rsample`` normalizes Gamma draws
    made on the host in log space (no underflow for small concentrations), with
    their implicit reparameterization gradients."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True
    _batch_params = {"concentration": 1}

    def __init__(self, concentration, validate_args=None):
        concentration = _float_tensor(concentration)
        if concentration.ndim < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:], validate_args)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        logg = _standard_gamma(self.concentration, shape, log=True)
        fi = finfo(logg.dtype)
        return logg.softmax(-1).clamp(fi.tiny, 1 - fi.eps)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        lg = _with_total(c).lgamma()  # one lgamma for the entries and their total
        return (c - 1.0).xlogy(value).sum(-1) + lg[..., -1] - lg[..., :-1].sum(-1)

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self):
        c = self.concentration
        cm1 = (c - 1).clamp(min=0.0)
        mode = cm1 / cm1.sum(-1, keepdim=True)
        # where every concentration is below 1 the density is unbounded at every
        # vertex: the first one, as PyTorch's
        low = (c < 1).all(-1, keepdim=True)
        first = Tensor.arange(c.shape[-1], device=c.device) == 0
        return low.where(first.cast(c.dtype), mode)

    @property
    def variance(self):
        c = self.concentration
        c0 = c.sum(-1, keepdim=True)
        return c * (c0 - c) / (c0.square() * (c0 + 1))

    def entropy(self):
        c = self.concentration
        k = c.shape[-1]
        a0 = c.sum(-1)
        ca0 = _with_total(c)
        lg, dg = ca0.lgamma(), ca0.digamma()
        return (
            lg[..., :-1].sum(-1)
            - lg[..., -1]
            - (k - a0) * dg[..., -1]
            - ((c - 1.0) * dg[..., :-1]).sum(-1)
        )

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - x.sum(-1).lgamma()


class Beta(ExponentialFamily):
    """The Beta distribution on [0, 1] of ``concentration1`` (alpha) and
    ``concentration0`` (beta); ``rsample`` through a two-category Dirichlet."""

    arg_constraints = {
        "concentration1": constraints.positive,
        "concentration0": constraints.positive,
    }
    support = constraints.unit_interval
    has_rsample = True
    _batch_params = {"concentration1": 0, "concentration0": 0}

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        batch = () if _scalar_batch(concentration1, concentration0) else self.concentration1.shape
        super().__init__(batch, validate_args=validate_args)

    @property
    def mean(self):
        a, b = self.concentration1, self.concentration0
        return a / (a + b)

    def _dirichlet(self) -> Dirichlet:
        c = stack([self.concentration1, self.concentration0], -1)
        return Dirichlet(c, validate_args=False)

    @property
    def mode(self):
        return self._dirichlet().mode[..., 0]

    @property
    def variance(self):
        a, b = self.concentration1, self.concentration0
        total = a + b
        return a * b / (total.square() * (total + 1))

    def rsample(self, sample_shape=()):
        return self._dirichlet().rsample(sample_shape)[..., 0]

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        a, b = self.concentration1, self.concentration0
        value = _float_tensor(value, a)
        lg_total, lg_a, lg_b = _lgammas(a + b, a, b)
        return (a - 1).xlogy(value) + (b - 1).xlogy(1 - value) + lg_total - lg_a - lg_b

    def entropy(self):
        a, b = self.concentration1, self.concentration0
        total = a + b
        lg_a, lg_b, lg_total = _lgammas(a, b, total)
        dg_a, dg_b, dg_total = _digammas(a, b, total)
        lbeta = lg_a + lg_b - lg_total
        return lbeta - (a - 1) * dg_a - (b - 1) * dg_b + (total - 2) * dg_total

    @property
    def _natural_params(self):
        return (self.concentration1, self.concentration0)

    def _log_normalizer(self, x, y):
        return x.lgamma() + y.lgamma() - (x + y).lgamma()
