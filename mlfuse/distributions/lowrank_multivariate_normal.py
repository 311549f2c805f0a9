"""The multivariate normal distribution with a low-rank plus diagonal
covariance (PyTorch's ``torch.distributions.lowrank_multivariate_normal``)."""

from __future__ import annotations

import math

from mlfuse import linalg
from mlfuse.distributions import constraints
from mlfuse.distributions.distribution import Distribution
from mlfuse.distributions.multivariate_normal import _batch_mahalanobis, _batch_mv
from mlfuse.distributions.utils import _float_tensor, _shape, lazy_property
from mlfuse.tensor import Tensor, broadcast_shape

__all__ = ["LowRankMultivariateNormal"]


def _batch_capacitance_tril(W, D):  # noqa: N803 - PyTorch's names
    """The Cholesky factor of the capacitance ``I + W^T D^-1 W``."""
    m = W.shape[-1]
    K = (W.mT / D.unsqueeze(-2)) @ W  # noqa: N806
    return linalg.cholesky(K + Tensor.eye(m, dtype=K.dtype, device=K.device))


def _batch_lowrank_logdet(W, D, capacitance_tril):  # noqa: N803
    """``log |W W^T + D| = log |C| + log |D|`` (the matrix determinant lemma)."""
    return 2 * capacitance_tril.diagonal(0, -2, -1).log().sum(-1) + D.log().sum(-1)


def _batch_lowrank_mahalanobis(W, D, x, capacitance_tril):  # noqa: N803
    """``x^T (W W^T + D)^-1 x`` by the Woodbury identity (only the capacitance
    is factored)."""
    Wt_Dinv = W.mT / D.unsqueeze(-2)  # noqa: N806
    Wt_Dinv_x = _batch_mv(Wt_Dinv, x)  # noqa: N806
    term1 = (x.square() / D).sum(-1)
    term2 = _batch_mahalanobis(capacitance_tril, Wt_Dinv_x)
    return term1 - term2


class LowRankMultivariateNormal(Distribution):
    """The multivariate normal distribution of mean ``loc`` (batch + (n,)) and
    covariance ``cov_factor @ cov_factor.mT + diag(cov_diag)`` (``cov_factor``
    batch + (n, m), ``cov_diag`` batch + (n,)): determinants and solves go
    through the ``m x m`` capacitance matrix (Woodbury), never an ``n x n``
    factorization::

        LowRankMultivariateNormal(mlfuse.zeros(2), mlfuse.tensor([[1.0], [0.0]]), mlfuse.ones(2))
    """

    arg_constraints = {
        "loc": constraints.real_vector,
        "cov_factor": constraints.independent(constraints.real, 2),
        "cov_diag": constraints.independent(constraints.positive, 1),
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        loc = _float_tensor(loc)
        cov_factor = _float_tensor(cov_factor)
        cov_diag = _float_tensor(cov_diag)
        if loc.ndim < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = tuple(loc.shape[-1:])
        if cov_factor.ndim < 2:
            raise ValueError(
                "cov_factor must be at least two-dimensional, with optional leading batch "
                "dimensions"
            )
        if tuple(cov_factor.shape[-2:-1]) != event_shape:
            raise ValueError(
                f"cov_factor must be a batch of matrices with shape {event_shape[0]} x m"
            )
        if tuple(cov_diag.shape[-1:]) != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        try:
            shape = broadcast_shape(loc.shape + (1,), cov_factor.shape, cov_diag.shape + (1,))
        except ValueError as e:
            raise ValueError(
                f"Incompatible batch shapes: loc {tuple(loc.shape)}, cov_factor "
                f"{tuple(cov_factor.shape)}, cov_diag {tuple(cov_diag.shape)}"
            ) from e
        self.cov_factor = cov_factor.expand(shape)
        self.loc = loc.expand(shape[:-1])
        self.cov_diag = cov_diag.expand(shape[:-1])
        batch_shape = shape[:-2]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _batch_capacitance_tril(cov_factor, cov_diag)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with its batch expanded to ``batch_shape``."""
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        batch_shape = _shape(batch_shape)
        loc_shape = batch_shape + self._event_shape
        new.loc = self.loc.expand(loc_shape)
        new.cov_diag = self.cov_diag.expand(loc_shape)
        new.cov_factor = self.cov_factor.expand(loc_shape + self.cov_factor.shape[-1:])
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        """``loc``."""
        return self.loc

    @property
    def mode(self):
        """``loc``."""
        return self.loc

    @lazy_property
    def variance(self):
        """The diagonal of the covariance: ``(cov_factor^2).sum(-1) + cov_diag``."""
        return (
            self._unbroadcasted_cov_factor.square().sum(-1) + self._unbroadcasted_cov_diag
        ).expand(self._batch_shape + self._event_shape)

    @lazy_property
    def scale_tril(self):
        """The lower Cholesky factor of the covariance: ``D^1/2 chol(I + D^-1/2 W
        W^T D^-1/2)``."""
        n = self._event_shape[0]
        sqrt_d = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        dinvsqrt_w = self._unbroadcasted_cov_factor / sqrt_d
        K = dinvsqrt_w @ dinvsqrt_w.mT  # noqa: N806
        K = K + Tensor.eye(n, dtype=K.dtype, device=K.device)  # noqa: N806
        scale_tril = sqrt_d * linalg.cholesky(K)
        return scale_tril.expand(self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        """``cov_factor @ cov_factor.mT + diag(cov_diag)``."""
        w = self._unbroadcasted_cov_factor
        cov = w @ w.mT + self._unbroadcasted_cov_diag.diag_embed()
        return cov.expand(self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self):
        """The inverse covariance, by the Woodbury identity."""
        wt_dinv = self._unbroadcasted_cov_factor.mT / self._unbroadcasted_cov_diag.unsqueeze(-2)
        ct = self._capacitance_tril
        batch = broadcast_shape(ct.shape[:-2], wt_dinv.shape[:-2])
        A = linalg.solve_triangular(  # noqa: N806
            ct.expand(batch + ct.shape[-2:]),
            wt_dinv.expand(batch + wt_dinv.shape[-2:]),
            upper=False,
        )
        precision = self._unbroadcasted_cov_diag.reciprocal().diag_embed() - A.mT @ A
        return precision.expand(self._batch_shape + self._event_shape + self._event_shape)

    def rsample(self, sample_shape=()):
        """Reparameterized samples ``loc + W eps_W + sqrt(D) eps_D``."""
        shape = self._extended_shape(sample_shape)
        w_shape = shape[:-1] + self.cov_factor.shape[-1:]
        dt, dev = self.loc.dtype, self.loc.device
        eps_w = Tensor.randn(*w_shape, dtype=dt, device=dev)
        eps_d = Tensor.randn(*shape, dtype=dt, device=dev)
        return (
            self.loc
            + _batch_mv(self._unbroadcasted_cov_factor, eps_w)
            + self._unbroadcasted_cov_diag.sqrt() * eps_d
        )

    def _logdet(self):
        return _batch_lowrank_logdet(
            self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag, self._capacitance_tril
        )

    def log_prob(self, value):
        """The log density at ``value`` (Woodbury and the determinant lemma)."""
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_lowrank_mahalanobis(  # noqa: N806
            self._unbroadcasted_cov_factor,
            self._unbroadcasted_cov_diag,
            diff,
            self._capacitance_tril,
        )
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + self._logdet() + M)

    def entropy(self):
        """``(n (1 + log 2 pi) + log |Sigma|) / 2``."""
        H = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._logdet())  # noqa: N806
        return H if not self._batch_shape else H.expand(self._batch_shape)
