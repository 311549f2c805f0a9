"""The base class of the distributions (PyTorch's ``torch.distributions.Distribution``)."""

from __future__ import annotations

import warnings

import numpy as np

from mlfuse.autograd import no_grad
from mlfuse.distributions import constraints
from mlfuse.distributions.utils import _host, _shape, lazy_property
from mlfuse.tensor import Tensor

__all__ = ["Distribution"]


def _show(value) -> str:
    """A tensor's values for an error message."""
    try:
        host = _host(value)
    except Exception:  # noqa: BLE001 - only for the message
        host = None
    if host is None:
        return repr(value)
    return f"tensor({np.array2string(np.asarray(host), separator=', ', threshold=50)})"


class Distribution:
    """A batch of probability distributions: ``batch_shape`` independent ones,
    each over events of ``event_shape``.

    Subclasses give ``arg_constraints`` (parameter name -> constraint),
    ``support``, and the methods they can compute (``sample``/``rsample``,
    ``log_prob``, ``entropy``, ``cdf``/``icdf``, ``mean``/``mode``/``variance``,
    ``enumerate_support``). Everything computes through mlfuse Tensor ops, so
    it is lazy and differentiable; ``rsample`` (where ``has_rsample``) carries
    gradients to the parameters.

    Validation (on by default, as PyTorch's under ``__debug__``; per instance
    with ``validate_args=``, for all with
    :meth:`Distribution.set_default_validate_args`) checks parameters at
    construction and values given to ``log_prob``/``cdf``/``icdf``, raising
    ValueError. It reads the values on the host, so it realizes lazy tensors:
    turn it off to keep a model's graph lazy through the distribution.
    """

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__
    _batch_params: dict[str, int] | None = None  # for expand: param -> its event ndims

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn validation on or off for distributions built without
        ``validate_args``: ``Distribution.set_default_validate_args(False)``."""
        if value not in (True, False):
            raise ValueError(f"set_default_validate_args expects a bool, got {value!r}")
        Distribution._validate_args = bool(value)

    def __init__(self, batch_shape=(), event_shape=(), validate_args: bool | None = None):
        self._batch_shape = _shape(batch_shape)
        self._event_shape = _shape(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(
                    f"{self.__class__} does not define `arg_constraints`. Please set "
                    "`arg_constraints = {}` or initialize the distribution with "
                    "`validate_args=False` to turn off validation.",
                    stacklevel=2,
                )
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue  # no check of its own
                if param not in self.__dict__ and isinstance(
                    getattr(type(self), param, None), lazy_property
                ):
                    continue  # not built: it derives from a checked one
                value = getattr(self, param)
                host = _host(value)
                if host is None:
                    continue  # a lazy value while mlfuse.jit captures
                if not np.all(constraint._check(host)):
                    raise ValueError(
                        f"Expected parameter {param} "
                        f"({type(value).__name__} of shape {tuple(value.shape)}) "
                        f"of distribution {self!r} "
                        f"to satisfy the constraint {constraint!r}, "
                        f"but found invalid values:\n{_show(value)}"
                    )

    # -- shapes ------------------------------------------------------------------------
    @property
    def batch_shape(self) -> tuple[int, ...]:
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self) -> tuple[int, ...]:
        """The shape of a single sample (without batching)."""
        return self._event_shape

    def _extended_shape(self, sample_shape=()) -> tuple[int, ...]:
        """``sample_shape + batch_shape + event_shape``."""
        return _shape(sample_shape) + self._batch_shape + self._event_shape

    def expand(self, batch_shape, _instance=None):
        """A new distribution with the batch dims expanded to ``batch_shape``
        (the parameters expanded, not copied; arguments are not checked again)."""
        params = type(self)._batch_params
        if params is None:
            raise NotImplementedError(f"{type(self).__name__} does not implement expand")
        new = self._get_checked_instance(type(self), _instance)
        batch_shape = _shape(batch_shape)
        lazy = {
            k
            for klass in type(self).__mro__
            for k, v in vars(klass).items()
            if isinstance(v, lazy_property)
        }
        expanded = {}  # id of a parameter -> its expansion
        for k, v in self.__dict__.items():
            if k in params:
                nev = params[k]
                new.__dict__[k] = v.expand(batch_shape + tuple(v.shape[v.ndim - nev :]))
                expanded[id(v)] = new.__dict__[k]
        for k, v in self.__dict__.items():
            if k not in params and k not in lazy:
                # another name for a parameter (Bernoulli's _param) follows it
                new.__dict__[k] = expanded.get(id(v), v)
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                "__init__ method must also define a custom .expand() method."
            )
        return self.__new__(type(self)) if _instance is None else _instance

    # -- what subclasses define --------------------------------------------------------
    @property
    def arg_constraints(self) -> dict[str, constraints.Constraint]:
        """Parameter name -> the constraint it must satisfy."""
        raise NotImplementedError

    @property
    def support(self):
        """The constraint the samples satisfy."""
        raise NotImplementedError

    @property
    def mean(self) -> Tensor:
        """The mean of the distribution."""
        raise NotImplementedError(f"{self.__class__} does not implement mean")

    @property
    def mode(self) -> Tensor:
        """The mode of the distribution."""
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self) -> Tensor:
        """The variance of the distribution."""
        raise NotImplementedError(f"{self.__class__} does not implement variance")

    @property
    def stddev(self) -> Tensor:
        """The standard deviation: ``variance.sqrt()``."""
        return self.variance.sqrt()

    def sample(self, sample_shape=()) -> Tensor:
        """Samples of ``sample_shape + batch_shape + event_shape``, with no
        gradient; from mlfuse's generators (``mlfuse.manual_seed`` repeats them)."""
        if self.has_rsample:
            with no_grad():
                return self.rsample(sample_shape).detach()
        raise NotImplementedError(f"{self.__class__} does not implement sample")

    def rsample(self, sample_shape=()) -> Tensor:
        """Reparameterized samples: gradients flow to the parameters."""
        raise NotImplementedError(f"{self.__class__} does not implement rsample")

    def sample_n(self, n: int) -> Tensor:
        """``n`` samples (``sample((n,))``)."""
        warnings.warn("sample_n will be deprecated. Use .sample((n,)) instead", stacklevel=2)
        return self.sample((n,))

    def log_prob(self, value) -> Tensor:
        """The log of the density (or mass) at ``value``."""
        raise NotImplementedError(f"{self.__class__} does not implement log_prob")

    def cdf(self, value) -> Tensor:
        """The cumulative distribution function at ``value``."""
        raise NotImplementedError(f"{self.__class__} does not implement cdf")

    def icdf(self, value) -> Tensor:
        """The inverse cumulative distribution function at ``value``."""
        raise NotImplementedError(f"{self.__class__} does not implement icdf")

    def enumerate_support(self, expand: bool = True) -> Tensor:
        """All values of a discrete distribution, along a new leading dim (of
        size the number of values; ``expand`` broadcasts them over the batch)."""
        raise NotImplementedError(f"{self.__class__} does not implement enumerate_support")

    def entropy(self) -> Tensor:
        """The entropy, one per batch entry."""
        raise NotImplementedError(f"{self.__class__} does not implement entropy")

    def perplexity(self) -> Tensor:
        """``exp(entropy())``."""
        return self.entropy().exp()

    # -- validation --------------------------------------------------------------------
    def _validate_sample(self, value) -> None:
        """Check that ``value`` has the event shape, broadcasts with the batch
        shape and lies in the support (a ValueError otherwise)."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        shape = tuple(value.shape)
        start = len(shape) - len(self._event_shape)
        if shape[start:] != self._event_shape:
            raise ValueError(
                f"The right-most size of value must match event_shape: {shape} vs "
                f"{self._event_shape}."
            )
        expected = self._batch_shape + self._event_shape
        for i, j in zip(reversed(shape), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(
                    f"Value is not broadcastable with batch_shape+event_shape: {shape} vs "
                    f"{expected}."
                )
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(
                f"{self.__class__} does not define `support` to enable sample validation. "
                "Please initialize the distribution with `validate_args=False` to turn off "
                "validation.",
                stacklevel=2,
            )
            return
        host = _host(value)
        if host is None:
            return
        if not np.all(support._check(host)):
            raise ValueError(
                "Expected value argument "
                f"({type(value).__name__} of shape {shape}) "
                f"to be within the support ({support!r}) "
                f"of the distribution {self!r}, "
                f"but found invalid values:\n{_show(value)}"
            )

    def __repr__(self) -> str:
        try:
            names = [k for k in self.arg_constraints if k in self.__dict__]
        except NotImplementedError:
            names = []
        parts = []
        for p in names:
            v = self.__dict__[p]
            if isinstance(v, Tensor) and v.numel() == 1:
                h = _host(v)
                parts.append(f"{p}: {h.reshape(()).item() if h is not None else v!r}")
            else:
                parts.append(f"{p}: {tuple(getattr(v, 'shape', ()))}")
        return f"{self.__class__.__name__}({', '.join(parts)})"
