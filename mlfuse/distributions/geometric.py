"""PyTorch's ``torch.distributions.geometric`` module, for code that imports from it:
Geometric (defined in :mod:`mlfuse.distributions.discrete`)."""

from mlfuse.distributions.discrete import Geometric

__all__ = ["Geometric"]
