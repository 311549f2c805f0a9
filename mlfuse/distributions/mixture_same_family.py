"""Mixtures of distributions of one family (PyTorch's
``torch.distributions.mixture_same_family``)."""

from __future__ import annotations

from mlfuse.autograd import no_grad
from mlfuse.distributions import constraints
from mlfuse.distributions.discrete import Categorical
from mlfuse.distributions.distribution import Distribution
from mlfuse.distributions.utils import _shape

__all__ = ["MixtureSameFamily"]


class MixtureSameFamily(Distribution):
    """A (batch of) mixture(s) of components of one family:
    ``mixture_distribution`` a :class:`Categorical` over ``k`` components,
    ``component_distribution`` any distribution whose rightmost batch dim (of
    size ``k``) indexes the components. A Gaussian mixture in 2-d::

        mix = Categorical(mlfuse.ones(5))
        comp = Independent(Normal(mlfuse.randn(5, 2), mlfuse.rand(5, 2)), 1)
        gmm = MixtureSameFamily(mix, comp)
    """

    arg_constraints: dict = {}
    has_rsample = False

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(
                " The Mixture distribution needs to be an instance of "
                "mlfuse.distributions.Categorical"
            )
        if not isinstance(component_distribution, Distribution):
            raise ValueError(
                "The Component distribution needs to be an instance of "
                "mlfuse.distributions.Distribution"
            )
        mdbs = mixture_distribution.batch_shape
        cdbs = component_distribution.batch_shape[:-1]
        for size1, size2 in zip(reversed(mdbs), reversed(cdbs)):
            if size1 != 1 and size2 != 1 and size1 != size2:
                raise ValueError(
                    f"`mixture_distribution.batch_shape` ({mdbs}) is not compatible with "
                    f"`component_distribution.batch_shape`({cdbs})"
                )
        km = mixture_distribution.logits.shape[-1]
        kc = component_distribution.batch_shape[-1]
        if km != kc:
            raise ValueError(
                f"`mixture_distribution component` ({km}) does not equal "
                f"`component_distribution.batch_shape[-1]` ({kc})"
            )
        self._num_component = km
        event_shape = component_distribution.event_shape
        self._event_ndims = len(event_shape)
        super().__init__(cdbs, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with its batch expanded to ``batch_shape``."""
        batch_shape = _shape(batch_shape)
        new = self._get_checked_instance(MixtureSameFamily, _instance)
        new._component_distribution = self._component_distribution.expand(
            batch_shape + (self._num_component,)
        )
        new._mixture_distribution = self._mixture_distribution.expand(batch_shape)
        new._num_component = self._num_component
        new._event_ndims = self._event_ndims
        event_shape = new._component_distribution.event_shape
        Distribution.__init__(new, batch_shape, event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property
    def support(self):
        """The components' support, required of every component."""
        return constraints.MixtureSameFamilyConstraint(self._component_distribution.support)

    @property
    def mixture_distribution(self):
        """The categorical distribution over the components."""
        return self._mixture_distribution

    @property
    def component_distribution(self):
        """The component distributions (their rightmost batch dim indexes them)."""
        return self._component_distribution

    @property
    def mean(self):
        """``sum_k p_k mean_k``."""
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        return (probs * self.component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self):
        """The law of total variance: ``sum_k p_k var_k + sum_k p_k (mean_k -
        mean)^2``."""
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        dim = -1 - self._event_ndims
        mean_cond_var = (probs * self.component_distribution.variance).sum(dim)
        var_cond_mean = (
            probs * (self.component_distribution.mean - self._pad(self.mean)).square()
        ).sum(dim)
        return mean_cond_var + var_cond_mean

    def cdf(self, x):
        """``sum_k p_k cdf_k(x)``."""
        cdf_x = self.component_distribution.cdf(self._pad(x))
        return (cdf_x * self.mixture_distribution.probs).sum(-1)

    def log_prob(self, x):
        """``logsumexp_k (log p_k + log_prob_k(x))``."""
        if self._validate_args:
            self._validate_sample(x)
        log_prob_x = self.component_distribution.log_prob(self._pad(x))
        log_mix_prob = self.mixture_distribution.logits.log_softmax(-1)
        return (log_prob_x + log_mix_prob).logsumexp(-1)

    def sample(self, sample_shape=()):
        """Samples (no gradient): a component drawn per sample, its draw kept."""
        sample_shape = _shape(sample_shape)
        with no_grad():
            gather_dim = len(sample_shape) + len(self.batch_shape)
            es = self.event_shape
            mix = self.mixture_distribution
            if tuple(mix.batch_shape) != tuple(self.batch_shape):
                mix = mix.expand(self.batch_shape)  # (broadcast batch dims)
            mix_sample = mix.sample(sample_shape)
            mix_shape = tuple(mix_sample.shape)
            comp_samples = self.component_distribution.sample(sample_shape)
            idx = mix_sample.reshape(mix_shape + (1,) * (len(es) + 1))
            idx = idx.expand(mix_shape + (1,) + tuple(es))
            samples = comp_samples.gather(gather_dim, idx)
            return samples.squeeze(gather_dim).detach()

    def _pad(self, x):
        return x.unsqueeze(-1 - self._event_ndims)

    def _pad_mixture_dimensions(self, x):
        dist_batch_ndims = len(self.batch_shape)
        cat_batch_ndims = len(self.mixture_distribution.batch_shape)
        pad_ndims = 0 if cat_batch_ndims == 1 else dist_batch_ndims - cat_batch_ndims
        xs = tuple(x.shape)
        return x.reshape(xs[:-1] + (1,) * pad_ndims + xs[-1:] + (1,) * self._event_ndims)

    def __repr__(self) -> str:
        return (
            f"MixtureSameFamily(\n  {self.mixture_distribution},\n  {self.component_distribution})"
        )
