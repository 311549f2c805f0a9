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
Beta, Dirichlet, StudentT's chi-squared, Poisson, Binomial, NegativeBinomial,
VonMises, and those built on Gamma or Beta draws: InverseGamma,
FisherSnedecor, Wishart, LKJCholesky) are made on the host and read the
parameters there; the Gamma family's ``rsample`` still carries gradients
(implicit reparameterization).

The submodules carry PyTorch's names (``mlfuse.distributions.normal.Normal``,
``.constraints``, ``.transforms``, ``.kl``, ``.constraint_registry``...), so
code written against ``torch.distributions`` imports unchanged.

Validation (``validate_args``, on by default as in PyTorch) reads parameters
and values back to the host: ``Distribution.set_default_validate_args(False)``
keeps a model's graph lazy through its distributions.
"""

from mlfuse.distributions import constraints, transforms
from mlfuse.distributions.constraint_registry import biject_to, transform_to
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
from mlfuse.distributions.continuous_bernoulli import ContinuousBernoulli
from mlfuse.distributions.discrete import (
    Bernoulli,
    Binomial,
    Categorical,
    Geometric,
    OneHotCategorical,
    OneHotCategoricalStraightThrough,
    Poisson,
)
from mlfuse.distributions.distribution import Distribution
from mlfuse.distributions.exp_family import ExponentialFamily
from mlfuse.distributions.fishersnedecor import FisherSnedecor
from mlfuse.distributions.generalized_pareto import GeneralizedPareto
from mlfuse.distributions.half_cauchy import HalfCauchy
from mlfuse.distributions.half_normal import HalfNormal
from mlfuse.distributions.independent import Independent
from mlfuse.distributions.inverse_gamma import InverseGamma
from mlfuse.distributions.kl import kl_divergence, register_kl
from mlfuse.distributions.kumaraswamy import Kumaraswamy
from mlfuse.distributions.lkj_cholesky import LKJCholesky
from mlfuse.distributions.logistic_normal import LogisticNormal
from mlfuse.distributions.lowrank_multivariate_normal import LowRankMultivariateNormal
from mlfuse.distributions.mixture_same_family import MixtureSameFamily
from mlfuse.distributions.multinomial import Multinomial
from mlfuse.distributions.multivariate_normal import MultivariateNormal
from mlfuse.distributions.negative_binomial import NegativeBinomial
from mlfuse.distributions.pareto import Pareto
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
    CatTransform,
    ComposeTransform,
    CorrCholeskyTransform,
    CumulativeDistributionTransform,
    ExpTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    PowerTransform,
    ReshapeTransform,
    SigmoidTransform,
    SoftmaxTransform,
    SoftplusTransform,
    StackTransform,
    StickBreakingTransform,
    TanhTransform,
    Transform,
    identity_transform,
)
from mlfuse.distributions.von_mises import VonMises
from mlfuse.distributions.weibull import Weibull
from mlfuse.distributions.wishart import Wishart

# the modules of PyTorch's names that only re-export (imported so that
# ``mlfuse.distributions.normal`` and the like resolve as attributes)
from mlfuse.distributions import (  # noqa: E402, F401  isort: skip
    bernoulli,
    beta,
    binomial,
    categorical,
    cauchy,
    chi2,
    constraint_registry,
    dirichlet,
    exponential,
    gamma,
    geometric,
    gumbel,
    kl,
    laplace,
    log_normal,
    normal,
    one_hot_categorical,
    poisson,
    relaxed_bernoulli,
    relaxed_categorical,
    studentT,
    uniform,
    utils,
)

__all__ = [
    "AbsTransform",
    "AffineTransform",
    "Bernoulli",
    "Beta",
    "Binomial",
    "CatTransform",
    "Categorical",
    "Cauchy",
    "Chi2",
    "ComposeTransform",
    "ContinuousBernoulli",
    "CorrCholeskyTransform",
    "CumulativeDistributionTransform",
    "Dirichlet",
    "Distribution",
    "ExpRelaxedCategorical",
    "ExpTransform",
    "Exponential",
    "ExponentialFamily",
    "FisherSnedecor",
    "Gamma",
    "GeneralizedPareto",
    "Geometric",
    "Gumbel",
    "HalfCauchy",
    "HalfNormal",
    "Independent",
    "IndependentTransform",
    "InverseGamma",
    "Kumaraswamy",
    "LKJCholesky",
    "Laplace",
    "LogNormal",
    "LogisticNormal",
    "LogitRelaxedBernoulli",
    "LowRankMultivariateNormal",
    "LowerCholeskyTransform",
    "MixtureSameFamily",
    "Multinomial",
    "MultivariateNormal",
    "NegativeBinomial",
    "Normal",
    "OneHotCategorical",
    "OneHotCategoricalStraightThrough",
    "Pareto",
    "Poisson",
    "PositiveDefiniteTransform",
    "PowerTransform",
    "RelaxedBernoulli",
    "RelaxedOneHotCategorical",
    "ReshapeTransform",
    "SigmoidTransform",
    "SoftmaxTransform",
    "SoftplusTransform",
    "StackTransform",
    "StickBreakingTransform",
    "StudentT",
    "TanhTransform",
    "Transform",
    "TransformedDistribution",
    "Uniform",
    "VonMises",
    "Weibull",
    "Wishart",
    "biject_to",
    "constraints",
    "identity_transform",
    "kl_divergence",
    "register_kl",
    "transform_to",
    "transforms",
]
