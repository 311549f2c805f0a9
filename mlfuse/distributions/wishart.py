"""The Wishart distribution (PyTorch's ``torch.distributions.wishart``)."""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from mlfuse import linalg
from mlfuse.distributions import constraints
from mlfuse.distributions.continuous import Chi2
from mlfuse.distributions.exp_family import ExponentialFamily
from mlfuse.distributions.multivariate_normal import _precision_to_scale_tril
from mlfuse.distributions.utils import _float_tensor, _host, _shape, finfo, lazy_property
from mlfuse.tensor import Tensor, broadcast_shape

__all__ = ["Wishart"]

_LOG_2 = math.log(2)


def _mvdigamma(x: Tensor, p: int) -> Tensor:
    """The multivariate digamma ``sum_{j<p} digamma(x - j / 2)``."""
    half = Tensor(np.arange(p) / 2, x.dtype, x.device)
    return (x.unsqueeze(-1) - half).digamma().sum(-1)


def _mvlgamma(x: Tensor, p: int) -> Tensor:
    """The multivariate log gamma ``p (p - 1) / 4 log(pi) + sum_{j<p} lgamma(x - j / 2)``."""
    half = Tensor(np.arange(p) / 2, x.dtype, x.device)
    return (x.unsqueeze(-1) - half).lgamma().sum(-1) + p * (p - 1) / 4 * math.log(math.pi)


class Wishart(ExponentialFamily):
    """The Wishart distribution over ``p x p`` positive-definite matrices, of
    ``df`` degrees of freedom (more than ``p - 1``) and one of
    ``covariance_matrix``, ``precision_matrix`` or ``scale_tril`` (the scale
    matrix's lower Cholesky factor; the others are factored once)::

        Wishart(mlfuse.tensor(4.0), covariance_matrix=mlfuse.eye(2)).rsample()

    ``rsample`` uses the Bartlett decomposition (chi-squared diagonal through
    the Gamma sampler's implicit reparameterization, normal below it); a
    sample that is not positive definite (possible for ``p - 1 < df < p``) is
    drawn again, up to ``max_try_correction`` times."""

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        """The parameters' constraints (``df`` greater than ``p - 1``)."""
        return {
            "covariance_matrix": constraints.positive_definite,
            "precision_matrix": constraints.positive_definite,
            "scale_tril": constraints.lower_cholesky,
            "df": constraints.greater_than(self.event_shape[-1] - 1),
        }

    def __init__(
        self,
        df,
        covariance_matrix=None,
        precision_matrix=None,
        scale_tril=None,
        validate_args=None,
    ):
        given = [m is not None for m in (covariance_matrix, precision_matrix, scale_tril)]
        if sum(given) != 1:
            raise ValueError(
                "Exactly one of covariance_matrix or precision_matrix or scale_tril may be "
                "specified."
            )
        param = next(p for p in (covariance_matrix, precision_matrix, scale_tril) if p is not None)
        param = _float_tensor(param)
        if param.ndim < 2:
            raise ValueError(
                "scale_tril must be at least two-dimensional, with optional leading batch "
                "dimensions"
            )
        if isinstance(df, numbers.Number):
            batch_shape = tuple(param.shape[:-2])
            self.df = Tensor(float(df), param.dtype, param.device)
        else:
            df = _float_tensor(df)
            batch_shape = broadcast_shape(param.shape[:-2], df.shape)
            self.df = df.expand(batch_shape)
        event_shape = tuple(param.shape[-2:])
        p = event_shape[-1]
        host_df = _host(self.df)
        if host_df is not None:
            if np.any(host_df <= p - 1):
                raise ValueError(
                    f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}."
                )
            if np.any(host_df < p):
                warnings.warn(
                    "Low df values detected. Singular samples are highly likely to occur for "
                    "ndim - 1 < df < ndim.",
                    stacklevel=2,
                )
        full = batch_shape + event_shape
        if scale_tril is not None:
            self.scale_tril = param.expand(full)
        elif covariance_matrix is not None:
            self.covariance_matrix = param.expand(full)
        else:
            self.precision_matrix = param.expand(full)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = param
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = linalg.cholesky(param)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(param)
        self._dist_chi2 = self._chi2(self.df, batch_shape)

    def _chi2(self, df: Tensor, batch_shape) -> Chi2:
        p = self._event_shape[-1]
        lt = self._unbroadcasted_scale_tril
        steps = Tensor.arange(p, dtype=lt.dtype, device=lt.device)
        return Chi2(df.unsqueeze(-1) - steps.expand(tuple(batch_shape) + (p,)), validate_args=False)

    def expand(self, batch_shape, _instance=None):
        """The distribution with its batch expanded to ``batch_shape``."""
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = _shape(batch_shape)
        cov_shape = batch_shape + self._event_shape
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(batch_shape)
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                new.__dict__[name] = self.__dict__[name].expand(cov_shape)
        ExponentialFamily.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._dist_chi2 = new._chi2(new.df, batch_shape)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self):
        """The lower Cholesky factor of the scale matrix."""
        return self._unbroadcasted_scale_tril.expand(self._batch_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        """The scale matrix ``L L^T``."""
        lt = self._unbroadcasted_scale_tril
        return (lt @ lt.mT).expand(self._batch_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self):
        """The inverse of the scale matrix."""
        lt = self._unbroadcasted_scale_tril
        eye = Tensor.eye(self._event_shape[-1], dtype=lt.dtype, device=lt.device)
        return eye.expand(lt.shape).cholesky_solve(lt).expand(self._batch_shape + self._event_shape)

    def _df_matrix(self) -> Tensor:
        return self.df.reshape(self._batch_shape + (1, 1))

    @property
    def mean(self):
        """``df * covariance_matrix``."""
        return self._df_matrix() * self.covariance_matrix

    @property
    def mode(self):
        """``(df - p - 1) * covariance_matrix`` (NaN where ``df <= p + 1``)."""
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = (factor <= 0).where(math.nan, factor)
        return factor.reshape(self._batch_shape + (1, 1)) * self.covariance_matrix

    @property
    def variance(self):
        """``df (V_ij^2 + V_ii V_jj)``, V the covariance matrix."""
        v = self.covariance_matrix
        diag_v = v.diagonal(0, -2, -1)
        return self._df_matrix() * (v.square() + diag_v.unsqueeze(-1) * diag_v.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape=()):
        p = self._event_shape[-1]
        eps = finfo(self.df.dtype).eps
        chi = self._dist_chi2.rsample(sample_shape).sqrt().clamp(min=eps)
        shape = _shape(sample_shape) + self._batch_shape + (p, p)
        lower = Tensor.randn(*shape, dtype=chi.dtype, device=chi.device).tril(-1)
        noise = chi.diag_embed() + lower
        chol = self._unbroadcasted_scale_tril @ noise
        return chol @ chol.mT

    def rsample(self, sample_shape=(), max_try_correction=None):
        """Reparameterized samples (Bartlett decomposition). A sample that is
        not positive definite is redrawn up to ``max_try_correction`` (10)
        times, with a warning; one still singular gives ``-inf`` in
        ``log_prob``."""
        if max_try_correction is None:
            max_try_correction = 10
        sample_shape = _shape(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        is_singular = ~np.asarray(self.support._check(sample.detach().numpy()), bool)
        if is_singular.any():
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(max_try_correction):
                sample_new = self._bartlett_sampling(sample_shape)
                mask = Tensor(is_singular[..., None, None], device=sample.device)
                sample = mask.where(sample_new, sample)
                is_singular &= ~np.asarray(self.support._check(sample_new.detach().numpy()), bool)
                if not is_singular.any():
                    break
        return sample

    def _log_det_scale(self) -> Tensor:
        p = self._event_shape[-1]
        return p * _LOG_2 / 2 + self._unbroadcasted_scale_tril.diagonal(0, -2, -1).log().sum(-1)

    def log_prob(self, value):
        """The log density at ``value`` (positive-definite matrices)."""
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        lt = self._unbroadcasted_scale_tril
        batch = broadcast_shape(value.shape[:-2], lt.shape[:-2])
        solved = value.expand(batch + (p, p)).cholesky_solve(lt.expand(batch + (p, p)))
        return (
            -nu * self._log_det_scale()
            - _mvlgamma(nu / 2, p)
            + (nu - p - 1) / 2 * linalg.slogdet(value).logabsdet
            - solved.diagonal(0, -2, -1).sum(-1) / 2
        )

    def entropy(self):
        """The entropy, in closed form."""
        nu = self.df
        p = self._event_shape[-1]
        return (
            (p + 1) * self._log_det_scale()
            + _mvlgamma(nu / 2, p)
            - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p)
            + nu * p / 2
        )

    @property
    def _natural_params(self):
        nu = self.df
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (nu - p - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        return (y + (p + 1) / 2) * (-linalg.slogdet(-2 * x).logabsdet + _LOG_2 * p) + _mvlgamma(
            y + (p + 1) / 2, p
        )
