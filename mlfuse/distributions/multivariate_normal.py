"""The multivariate normal distribution."""

from __future__ import annotations

import math

from mlfuse import linalg
from mlfuse.distributions import constraints
from mlfuse.distributions.distribution import Distribution
from mlfuse.distributions.utils import _float_tensor, lazy_property
from mlfuse.tensor import Tensor, broadcast_shape

__all__ = ["MultivariateNormal"]


def _batch_mv(bmat: Tensor, bvec: Tensor) -> Tensor:
    """Matrix-vector products over broadcast batch dims."""
    return (bmat @ bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL: Tensor, bx: Tensor) -> Tensor:  # noqa: N803 - PyTorch's name
    """``x^T (L L^T)^-1 x`` for a lower Cholesky factor ``L`` (batch dims broadcast)."""
    y = linalg.solve_triangular(bL, bx.unsqueeze(-1), upper=False).squeeze(-1)
    return y.square().sum(-1)


def _precision_to_scale_tril(P: Tensor) -> Tensor:  # noqa: N803 - PyTorch's name
    """The lower Cholesky factor of ``P^-1`` without inverting P: the Cholesky
    factor of P with rows and columns reversed, reversed back, is an upper ``U``
    with ``P = U U^T``; so ``P^-1 = U^-T U^-1`` and ``L = (U^T)^-1`` is lower."""
    lf = linalg.cholesky(P.flip((-2, -1)))
    l_inv = lf.flip((-2, -1)).mT
    eye = Tensor.eye(P.shape[-1], dtype=P.dtype, device=P.device)
    return linalg.solve_triangular(l_inv, eye.expand(l_inv.shape), upper=False)


class MultivariateNormal(Distribution):
    """The multivariate normal distribution of mean ``loc`` (batch + (k,)) and one
    of ``covariance_matrix``, ``precision_matrix`` or ``scale_tril`` (the lower
    Cholesky factor of the covariance), each batch + (k, k)::

        MultivariateNormal(mu, scale_tril=L).rsample((16,))

    Everything goes through the Cholesky factor ``L``: ``rsample`` is ``loc + L
    eps``, log_prob solves with L; gradients reach every parameter (through
    ``mlfuse.linalg.cholesky`` for a covariance or precision matrix)."""

    arg_constraints = {
        "loc": constraints.real_vector,
        "covariance_matrix": constraints.positive_definite,
        "precision_matrix": constraints.positive_definite,
        "scale_tril": constraints.lower_cholesky,
    }
    support = constraints.real_vector
    has_rsample = True
    _batch_params = {"loc": 1, "covariance_matrix": 2, "precision_matrix": 2, "scale_tril": 2}

    def __init__(
        self,
        loc,
        covariance_matrix=None,
        precision_matrix=None,
        scale_tril=None,
        validate_args=None,
    ):
        loc = _float_tensor(loc)
        if loc.ndim < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [m is not None for m in (covariance_matrix, precision_matrix, scale_tril)]
        if sum(given) != 1:
            raise ValueError(
                "Exactly one of covariance_matrix or precision_matrix or scale_tril may be "
                "specified."
            )
        name, m = next(
            (n, v)
            for n, v in (
                ("scale_tril", scale_tril),
                ("covariance_matrix", covariance_matrix),
                ("precision_matrix", precision_matrix),
            )
            if v is not None
        )
        m = _float_tensor(m, None)
        if m.ndim < 2:
            raise ValueError(
                f"{name} matrix must be at least two-dimensional, with optional leading "
                "batch dimensions"
            )
        batch = broadcast_shape(m.shape[:-2], loc.shape[:-1])
        setattr(self, name, m.expand(batch + m.shape[-2:]))
        self.loc = loc.expand(batch + loc.shape[-1:])
        super().__init__(batch, self.loc.shape[-1:], validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = m
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = linalg.cholesky(m)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(m)

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(
            self._batch_shape + self._event_shape + self._event_shape
        )

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril  # noqa: N806
        return (L @ L.mT).expand(self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self):
        return self._unbroadcasted_scale_tril.cholesky_inverse().expand(
            self._batch_shape + self._event_shape + self._event_shape
        )

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return (
            self._unbroadcasted_scale_tril.square()
            .sum(-1)
            .expand(self._batch_shape + self._event_shape)
        )

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = Tensor.randn(*shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def _half_log_det(self) -> Tensor:
        return self._unbroadcasted_scale_tril.diagonal(0, -2, -1).log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        m = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        k = self._event_shape[0]
        return -0.5 * (k * math.log(2 * math.pi) + m) - self._half_log_det()

    def entropy(self):
        k = self._event_shape[0]
        h = 0.5 * k * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return h if not self._batch_shape else h.expand(self._batch_shape)
