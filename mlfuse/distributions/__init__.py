"""Probability distributions, PyTorch's ``torch.distributions``: sampling
(``sample``/``rsample``), ``log_prob``, ``entropy``, moments, ``cdf``/``icdf``,
``kl_divergence``, transforms::

    from mlfuse.distributions import Normal, kl_divergence
    q = Normal(mu, sigma)
    z = q.rsample((8,))               # reparameterized: gradients reach mu and sigma
    loss = -q.log_prob(z).mean() + kl_divergence(q, Normal(0.0, 1.0)).sum()

Everything computes through mlfuse Tensor ops (lazy and differentiable).
Random draws come from mlfuse's generators, so ``mlfuse.manual_seed`` makes
sampling reproducible. Draws of the families with no lazy sampler (Gamma,
Beta, Dirichlet, StudentT's chi-squared, Poisson, Binomial) are made on the
host and read the parameters there; the Gamma family's ``rsample`` still
carries gradients (implicit reparameterization).

Validation (``validate_args``, on by default as in PyTorch) reads parameters
and values back to the host: ``Distribution.set_default_validate_args(False)``
keeps a model's graph lazy through its distributions.
"""

from mlfuse.distributions import constraints, transforms
from mlfuse.distributions.continuous import (
    Beta,
    Cauchy,
    Chi2,
    Dirichlet,
    Exponential,
    Gamma,
    Gumbel,
    Laplace,
    Normal,
    StudentT,
    Uniform,
)
from mlfuse.distributions.discrete import (
    Bernoulli,
    Binomial,
    Categorical,
    Geometric,
    OneHotCategorical,
    Poisson,
)
from mlfuse.distributions.distribution import Distribution
from mlfuse.distributions.independent import Independent
from mlfuse.distributions.kl import kl_divergence, register_kl
from mlfuse.distributions.multivariate_normal import MultivariateNormal
from mlfuse.distributions.transformed_distribution import (
    ExpRelaxedCategorical,
    LogitRelaxedBernoulli,
    LogNormal,
    RelaxedBernoulli,
    RelaxedOneHotCategorical,
    TransformedDistribution,
)
from mlfuse.distributions.transforms import (
    AbsTransform,
    AffineTransform,
    ComposeTransform,
    ExpTransform,
    IndependentTransform,
    PowerTransform,
    SigmoidTransform,
    SoftmaxTransform,
    SoftplusTransform,
    TanhTransform,
    Transform,
    identity_transform,
)

__all__ = [
    "AbsTransform",
    "AffineTransform",
    "Bernoulli",
    "Beta",
    "Binomial",
    "Categorical",
    "Cauchy",
    "Chi2",
    "ComposeTransform",
    "Dirichlet",
    "Distribution",
    "ExpRelaxedCategorical",
    "ExpTransform",
    "Exponential",
    "Gamma",
    "Geometric",
    "Gumbel",
    "Independent",
    "IndependentTransform",
    "Laplace",
    "LogNormal",
    "LogitRelaxedBernoulli",
    "MultivariateNormal",
    "Normal",
    "OneHotCategorical",
    "Poisson",
    "PowerTransform",
    "RelaxedBernoulli",
    "RelaxedOneHotCategorical",
    "SigmoidTransform",
    "SoftmaxTransform",
    "SoftplusTransform",
    "StudentT",
    "TanhTransform",
    "Transform",
    "TransformedDistribution",
    "Uniform",
    "constraints",
    "identity_transform",
    "kl_divergence",
    "register_kl",
    "transforms",
]
