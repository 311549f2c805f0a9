"""PyTorch's ``torch.distributions.binomial`` module, for code that imports from it:
Binomial (defined in :mod:`mlfuse.distributions.discrete`)."""

from mlfuse.distributions.discrete import Binomial

__all__ = ["Binomial"]
