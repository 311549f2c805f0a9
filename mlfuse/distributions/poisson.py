"""PyTorch's ``torch.distributions.poisson`` module, for code that imports from it:
Poisson (defined in :mod:`mlfuse.distributions.discrete`)."""

from mlfuse.distributions.discrete import Poisson

__all__ = ["Poisson"]
