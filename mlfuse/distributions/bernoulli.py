"""PyTorch's ``torch.distributions.bernoulli`` module, for code that imports from it:
Bernoulli (defined in :mod:`mlfuse.distributions.discrete`)."""

from mlfuse.distributions.discrete import Bernoulli

__all__ = ["Bernoulli"]
