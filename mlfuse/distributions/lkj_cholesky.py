"""The LKJ distribution of correlation Cholesky factors (PyTorch's
``torch.distributions.lkj_cholesky``, after NumPyro's)."""

from __future__ import annotations

import math

import numpy as np

from mlfuse.distributions import constraints
from mlfuse.distributions.continuous import Beta
from mlfuse.distributions.distribution import Distribution
from mlfuse.distributions.utils import _shape, broadcast_all, finfo
from mlfuse.tensor import Tensor, cat

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """The LKJ distribution over lower Cholesky factors ``L`` of ``dim x dim``
    correlation matrices, of ``concentration`` (eta): the correlation matrix
    ``L L^T`` has density proportional to ``det(L L^T)^(eta - 1)`` (uniform over
    correlation matrices at ``eta = 1``). Samples come from the onion method
    (Lewandowski, Kurowicka and Joe, 2009)::

        L = LKJCholesky(3, 0.5).sample()   # L @ L.mT is a correlation matrix
    """

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim: int, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(
                f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}."
            )
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        c = self.concentration
        marginal_conc = c + 0.5 * (self.dim - 2)
        offset = Tensor.arange(self.dim - 1, dtype=c.dtype, device=c.device)
        offset = cat([Tensor.zeros(1, dtype=c.dtype, device=c.device), offset])
        beta_conc1 = offset + 0.5
        beta_conc0 = marginal_conc.unsqueeze(-1) - 0.5 * offset
        self._beta = Beta(beta_conc1, beta_conc0, validate_args=False)
        super().__init__(c.shape, (dim, dim), validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with its batch expanded to ``batch_shape``."""
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = _shape(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=()):
        """Samples (no gradient) by the onion method: Beta-distributed squared
        row norms times uniform directions, the diagonal completing unit rows."""
        y = self._beta.sample(sample_shape).unsqueeze(-1)
        shape = self._extended_shape(sample_shape)
        u_normal = Tensor.randn(*shape, dtype=y.dtype, device=y.device).tril(-1)
        tiny = finfo(y.dtype).tiny
        # the first row is all zeros: the clamp keeps it zero (no 0 / 0)
        u_hypersphere = u_normal / u_normal.norm(dim=-1, keepdim=True).clamp(min=tiny)
        w = y.sqrt() * u_hypersphere
        diag_elems = (1 - w.square().sum(-1)).clamp(min=tiny).sqrt()
        return (w + diag_elems.diag_embed()).detach()

    def log_prob(self, value):
        """``sum_i (2 (eta - 1) + dim - i) log L_ii`` over rows ``i = 2..dim``,
        less the log normalizer."""
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        diag_elems = value.diagonal(0, -1, -2)[..., 1:]
        order = Tensor.arange(2, self.dim + 1, dtype=c.dtype, device=c.device)
        order = 2 * (c - 1).unsqueeze(-1) + self.dim - order
        unnormalized_log_pdf = (order * diag_elems.log()).sum(-1)
        dm1 = self.dim - 1
        alpha = c + 0.5 * dm1
        # lgamma(alpha) and the terms of the multivariate lgamma(alpha - 1/2, dim - 1),
        # in one lgamma expansion
        half = Tensor(np.arange(dm1) / 2, c.dtype, c.device)
        args = cat([alpha.unsqueeze(-1), (alpha - 0.5).unsqueeze(-1) - half], -1)
        lg = args.lgamma()
        denominator = lg[..., 0] * dm1
        numerator = lg[..., 1:].sum(-1) + dm1 * (dm1 - 1) / 4 * math.log(math.pi)
        pi_constant = 0.5 * dm1 * math.log(math.pi)
        normalize_term = pi_constant + numerator - denominator
        return unnormalized_log_pdf - normalize_term
