"""Discrete distributions: Bernoulli, Categorical, OneHotCategorical, Poisson,
Binomial, Geometric."""

from __future__ import annotations

import math
import numbers

import numpy as np

from mlfuse import dtypes
from mlfuse.distributions import constraints
from mlfuse.distributions.distribution import Distribution
from mlfuse.distributions.exp_family import ExponentialFamily
from mlfuse.distributions.utils import (
    _lgammas,
    _float_tensor,
    _host,
    broadcast_all,
    finfo,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)
from mlfuse.tensor import Tensor, _random, broadcast_shape

__all__ = [
    "Bernoulli",
    "Binomial",
    "Categorical",
    "Geometric",
    "OneHotCategorical",
    "OneHotCategoricalStraightThrough",
    "Poisson",
]


def _one_of(probs, logits) -> None:
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


def _bce_with_logits(logits: Tensor, target) -> Tensor:
    """``-(target log(sigmoid(l)) + (1 - target) log(1 - sigmoid(l)))``, stably."""
    return logits.clamp(min=0) - logits * target + (-logits.abs()).exp().log1p()


def _rand(shape, like: Tensor) -> Tensor:
    dt = like.dtype if like.dtype.is_float else dtypes.default_float
    return Tensor.rand(*shape, dtype=dt, device=like.device)


class Bernoulli(ExponentialFamily):
    """The Bernoulli distribution of ``probs`` (or log-odds ``logits``): 1 with
    probability ``probs``. Samples are 0./1. in the parameter's dtype."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _batch_params = {"probs": 0, "logits": 0}

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        if probs is not None:
            scalar = isinstance(probs, numbers.Number)
            (self.probs,) = broadcast_all(probs)
        else:
            scalar = isinstance(logits, numbers.Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(() if scalar else self._param.shape, validate_args=validate_args)

    @property
    def param_shape(self):
        return self._param.shape

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        p = self.probs
        return (p == 0.5).where(math.nan, (p >= 0.5).cast(p.dtype))

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        p = self.probs.detach()
        return (_rand(shape, p) < p).cast(p.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -_bce_with_logits(self.logits, _float_tensor(value, self.logits))

    def entropy(self):
        return _bce_with_logits(self.logits, self.probs)

    def enumerate_support(self, expand=True):
        values = Tensor.arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand((2,) + self._batch_shape) if expand else values

    _mean_carrier_measure = 0

    @property
    def _natural_params(self):
        return (self.probs.logit(),)

    def _log_normalizer(self, x):
        return x.exp().log1p()


class Categorical(Distribution):
    """The categorical distribution over ``0 .. K-1`` of ``probs`` (non-negative,
    normalized along the last dim) or ``logits`` (unnormalized log
    probabilities): ``Categorical(logits=scores)``. Samples are int64."""

    arg_constraints = {
        "probs": constraints.simplex,
        "logits": constraints.independent(constraints.real, 1),
    }
    has_enumerate_support = True
    _batch_params = {"probs": 1, "logits": 1}

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        if probs is not None:
            probs = _float_tensor(probs)
            if probs.ndim < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            logits = _float_tensor(logits)
            if logits.ndim < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.shape[-1]
        batch = self._param.shape[:-1] if self._param.ndim > 1 else ()
        super().__init__(batch, validate_args=validate_args)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits)

    @property
    def param_shape(self):
        return self._param.shape

    @property
    def mean(self):
        return Tensor.full(self._extended_shape(), math.nan, self._param.dtype, self._param.device)

    @property
    def mode(self):
        return self.probs.argmax(-1)

    @property
    def variance(self):
        return self.mean

    def sample(self, sample_shape=()):
        """Category indices (int64) of ``sample_shape + batch_shape``, by the
        inverse CDF: the number of cumulative probabilities at or below a
        uniform draw."""
        shape = self._extended_shape(sample_shape)
        cdf = self.probs.detach().cumsum(-1)
        u = _rand(shape + (1,), cdf) * cdf[..., -1:]
        idx = (cdf <= u).cast(dtypes.int64).sum(-1)
        return idx.clamp(max=self._num_events - 1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        if not isinstance(value, Tensor):
            value = Tensor(np.asarray(value, np.int64), device=self._param.device)
        idx = value.cast(dtypes.int64).unsqueeze(-1)
        logits = self.logits
        shape = broadcast_shape(idx.shape, logits.shape[:-1] + (1,))
        idx = idx.expand(shape)
        logits = logits.expand(shape[:-1] + (self._num_events,))
        return logits.gather(-1, idx).squeeze(-1)

    def entropy(self):
        logits = self.logits.clamp(min=finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        n = self._num_events
        values = Tensor.arange(n, dtype=dtypes.int64, device=self._param.device)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand((n,) + self._batch_shape) if expand else values


class OneHotCategorical(Distribution):
    """The categorical distribution with one-hot samples (event shape ``(K,)``)."""

    arg_constraints = {
        "probs": constraints.simplex,
        "logits": constraints.independent(constraints.real, 1),
    }
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits, validate_args=False)
        batch = self._categorical.batch_shape
        event = self._categorical.param_shape[-1:]
        super().__init__(batch, event, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(OneHotCategorical, _instance)
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def _param(self):
        return self._categorical._param

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def mean(self):
        return self._categorical.probs

    @property
    def mode(self):
        probs = self._categorical.probs
        return probs.argmax(-1).one_hot(probs.shape[-1]).cast(probs.dtype)

    @property
    def variance(self):
        p = self._categorical.probs
        return p * (1 - p)

    def sample(self, sample_shape=()):
        idx = self._categorical.sample(sample_shape)
        return idx.one_hot(self._event_shape[0]).cast(self._param.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.argmax(-1))

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        n = self._event_shape[0]
        values = Tensor.eye(n, dtype=self._param.dtype, device=self._param.device)
        values = values.reshape((n,) + (1,) * len(self._batch_shape) + (n,))
        return values.expand((n,) + self._batch_shape + (n,)) if expand else values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """A :class:`OneHotCategorical` with ``rsample`` by the straight-through
    estimator (Bengio et al., 2013): one-hot samples forward, the gradient of
    the probabilities backward::

        y = OneHotCategoricalStraightThrough(logits=scores).rsample()
    """

    has_rsample = True

    def rsample(self, sample_shape=()):
        """One-hot samples plus ``probs - probs.detach()`` (zero forward; the
        identity to ``probs`` backward)."""
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())


class Poisson(ExponentialFamily):
    """The Poisson distribution of ``rate``. Samples (floats, in the rate's
    dtype) are drawn on the host from mlfuse's generators."""

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer
    _batch_params = {"rate": 0}

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        batch = () if isinstance(rate, numbers.Number) else self.rate.shape
        super().__init__(batch, validate_args=validate_args)

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        rate = np.broadcast_to(self.rate.numpy().astype(np.float64), shape)
        return _random(lambda g: g.poisson(rate), self.rate.dtype, self.rate.device)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = _float_tensor(value, self.rate)
        return value.xlogy(self.rate) - self.rate - (value + 1).lgamma()

    @property
    def _natural_params(self):
        return (self.rate.log(),)

    def _log_normalizer(self, x):
        return x.exp()


def _clamp_by_zero(x: Tensor) -> Tensor:
    """``max(x, 0)`` with gradient 1/2 at 0 (as PyTorch's Binomial)."""
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(Distribution):
    """The binomial distribution: successes in ``total_count`` trials of
    probability ``probs`` (or log-odds ``logits``)."""

    arg_constraints = {
        "total_count": constraints.nonnegative_integer,
        "probs": constraints.unit_interval,
        "logits": constraints.real,
    }
    has_enumerate_support = True
    _batch_params = {"total_count": 0, "probs": 0, "logits": 0}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.cast(self.probs.dtype)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.cast(self.logits.dtype)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(self._param.shape, validate_args=validate_args)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.shape

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        n = np.broadcast_to(self.total_count.numpy().astype(np.int64), shape)
        p = np.broadcast_to(self.probs.numpy().astype(np.float64), shape)
        return _random(lambda g: g.binomial(n, p), self._param.dtype, self._param.device)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n, logits = self.total_count, self.logits
        k = _float_tensor(value, logits)
        log1p_exp = (-logits.abs()).exp().log1p()
        lg_n, lg_k, lg_nk = _lgammas(n + 1, k + 1, n - k + 1)
        normalize = n * _clamp_by_zero(logits) + n * log1p_exp - lg_n
        return k * logits - lg_k - lg_nk - normalize

    def _homogeneous_count(self, what: str) -> int:
        n = _host(self.total_count)
        if n is None or n.size == 0 or n.min() != n.max():
            raise NotImplementedError(f"Inhomogeneous total count not supported by `{what}`.")
        return int(n.max())

    def entropy(self):
        self._homogeneous_count("entropy")
        lp = self.log_prob(self.enumerate_support(False))
        return -(lp.exp() * lp).sum(0)

    def enumerate_support(self, expand=True):
        n = self._homogeneous_count("enumerate_support")
        values = Tensor.arange(1 + n, dtype=self._param.dtype, device=self._param.device)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand((n + 1,) + self._batch_shape) if expand else values


class Geometric(Distribution):
    """The geometric distribution: the number of failures before the first
    success in trials of probability ``probs`` (or log-odds ``logits``)."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer
    _batch_params = {"probs": 0, "logits": 0}

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        if probs is not None:
            scalar = isinstance(probs, numbers.Number)
            (self.probs,) = broadcast_all(probs)
        else:
            scalar = isinstance(logits, numbers.Number)
            (self.logits,) = broadcast_all(logits)
        param = self.probs if probs is not None else self.logits
        super().__init__(() if scalar else param.shape, validate_args=validate_args)
        if self._validate_args and probs is not None:
            host = _host(self.probs)
            if host is not None and not (host > 0).all():
                raise ValueError(
                    f"Expected parameter probs ({type(self.probs).__name__} of shape "
                    f"{tuple(self.probs.shape)}) of distribution {self!r} to be positive but "
                    f"found invalid values:\n{host[~(host > 0)]}"
                )

    @property
    def mean(self):
        return self.probs.reciprocal() - 1

    @property
    def mode(self):
        return self.probs * 0

    @property
    def variance(self):
        return (self.probs.reciprocal() - 1) / self.probs

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        p = self.probs.detach()
        u = _rand(shape, p).clamp(min=finfo(p.dtype).tiny)
        return (u.log() / (-p).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        p = self.probs
        value = _float_tensor(value, p)
        fail = ((p == 1) & (value == 0)).where(0.0, value * (-p).log1p())
        return fail + p.log()

    def entropy(self):
        return _bce_with_logits(self.logits, self.probs) / self.probs
