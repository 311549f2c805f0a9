"""The multinomial distribution (PyTorch's ``torch.distributions.multinomial``)."""

from __future__ import annotations

import math

from mlfuse.distributions import constraints
from mlfuse.distributions.discrete import Categorical
from mlfuse.distributions.distribution import Distribution
from mlfuse.distributions.utils import _float_tensor, _lgammas, _shape
from mlfuse.tensor import Tensor, broadcast_shape, cat

__all__ = ["Multinomial"]


class Multinomial(Distribution):
    """The multinomial distribution: counts of ``total_count`` draws from a
    categorical distribution of ``probs`` (non-negative, normalized along the
    last dim) or ``logits`` (unnormalized log probabilities). ``total_count``
    (one int for the whole batch) is needed by ``sample`` and ``entropy`` only;
    ``log_prob`` reads the counts from the value::

        Multinomial(100, mlfuse.tensor([1.0, 1.0, 1.0, 1.0])).sample()
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits, validate_args=False)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with its batch expanded to ``batch_shape``."""
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = _shape(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        """``total_count * probs``."""
        return self.probs * self.total_count

    @property
    def variance(self):
        """``total_count * probs * (1 - probs)``."""
        return self.total_count * self.probs * (1 - self.probs)

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        """Count vectors summing to at most ``total_count``."""
        return constraints.multinomial(self.total_count)

    @property
    def logits(self):
        """The normalized log probabilities."""
        return self._categorical.logits

    @property
    def probs(self):
        """The normalized probabilities."""
        return self._categorical.probs

    @property
    def param_shape(self):
        """The shape of the parameter given."""
        return self._categorical.param_shape

    def sample(self, sample_shape=()):
        """Count vectors (floats, in the probabilities' dtype) of
        ``sample_shape + batch_shape + (K,)``: ``total_count`` categorical
        draws, counted."""
        sample_shape = _shape(sample_shape)
        k = self._event_shape[0]
        idx = self._categorical.sample((self.total_count,) + sample_shape)
        if self.total_count == 0:
            return Tensor.zeros(*self._extended_shape(sample_shape), dtype=self.probs.dtype)
        counts = idx.one_hot(k).cast(self.probs.dtype).sum(0)
        return counts.reshape(self._extended_shape(sample_shape)).detach()

    def entropy(self):
        """The entropy: ``n H(categorical) - lgamma(n + 1)`` plus the expected
        ``sum lgamma(x_i + 1)`` over the binomial marginals."""
        n = self.total_count
        term1 = n * self._categorical.entropy() - math.lgamma(n + 1)
        if n == 0:
            return term1
        # E[sum_i lgamma(x_i + 1)] over the binomial marginals x_i ~ Binomial(n, p_i):
        # their log masses and the weights from one lgamma expansion
        probs = self.probs
        k = Tensor.arange(1, n + 1, dtype=probs.dtype, device=probs.device)
        k = k.reshape((-1,) + (1,) * probs.ndim)
        lg_k, lg_nk = _lgammas(k + 1, n - k + 1)
        log_mass = math.lgamma(n + 1) - lg_k - lg_nk + k.xlogy(probs) + (n - k).xlogy(1 - probs)
        term2 = (log_mass.exp() * lg_k).sum(0).sum(-1)
        return term1 + term2

    def log_prob(self, value):
        """``lgamma(n + 1) - sum lgamma(x_i + 1) + sum x_i log p_i`` with ``n =
        sum x_i``."""
        if self._validate_args:
            self._validate_sample(value)
        logits = self.logits
        value = _float_tensor(value, logits)
        shape = broadcast_shape(logits.shape, value.shape)
        logits, value = logits.expand(shape), value.expand(shape)
        # one lgamma for the counts and their total
        lg = (cat([value, value.sum(-1, keepdim=True)], -1) + 1).lgamma()
        log_factorial_n = lg[..., -1]
        log_factorial_xs = lg[..., :-1].sum(-1)
        logits = ((value == 0) & (logits == -math.inf)).where(0.0, logits)
        log_powers = (logits * value).sum(-1)
        return log_factorial_n - log_factorial_xs + log_powers
