"""PyTorch's ``torch.distributions.relaxed_bernoulli`` module, for code that imports
from it: LogitRelaxedBernoulli, RelaxedBernoulli (defined in
:mod:`mlfuse.distributions.transformed_distribution`)."""

from mlfuse.distributions.transformed_distribution import LogitRelaxedBernoulli, RelaxedBernoulli

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]
