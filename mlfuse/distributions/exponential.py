"""PyTorch's ``torch.distributions.exponential`` module, for code that imports from it:
Exponential (defined in :mod:`mlfuse.distributions.continuous`)."""

from mlfuse.distributions.continuous import Exponential

__all__ = ["Exponential"]
