"""PyTorch's ``torch.distributions.laplace`` module, for code that imports from it:
Laplace (defined in :mod:`mlfuse.distributions.continuous`)."""

from mlfuse.distributions.continuous import Laplace

__all__ = ["Laplace"]
