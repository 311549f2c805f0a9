"""The base class of exponential families (PyTorch's
``torch.distributions.exp_family``)."""

from __future__ import annotations

from mlfuse.autograd import enable_grad, grad
from mlfuse.distributions.distribution import Distribution
from mlfuse.tensor import Tensor

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """A distribution of an exponential family, of density
    ``p(x; theta) = exp(<t(x), theta> - F(theta) + k(x))``: ``theta`` the natural
    parameters (``_natural_params``), ``F`` the log normalizer
    (``_log_normalizer``), ``k`` the carrier measure (its expectation
    ``_mean_carrier_measure``).

    A family that gives these three gets :meth:`entropy` and the KL divergence
    between two members (a Bregman divergence of ``F``) through autograd, as
    PyTorch's (Nielsen and Nock, *Entropies and cross-entropies of exponential
    families*)."""

    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        """The natural parameters ``theta``, a tuple of tensors."""
        raise NotImplementedError

    def _log_normalizer(self, *natural_params) -> Tensor:
        """The log normalizer ``F(theta)``."""
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> float:
        """``E[k(x)]``, the expected carrier measure."""
        raise NotImplementedError

    def entropy(self) -> Tensor:
        """The entropy ``F(theta) - <theta, grad F(theta)> - E[k(x)]``, with the
        gradient of the log normalizer from autograd (kept differentiable)."""
        try:
            result = -self._mean_carrier_measure
        except NotImplementedError:
            raise NotImplementedError(f"{self.__class__} does not implement entropy") from None
        with enable_grad():
            nparams = [p.detach().requires_grad_() for p in self._natural_params]
            lg_normal = self._log_normalizer(*nparams)
            gradients = grad(lg_normal.sum(), nparams, create_graph=True)
        result = result + lg_normal
        for p, g in zip(nparams, gradients):
            term = p * g
            result = result - term.reshape(self._batch_shape + (-1,)).sum(-1)
        return result
