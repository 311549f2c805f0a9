"""PyTorch's ``torch.distributions.dirichlet`` module, for code that imports from it:
Dirichlet (defined in :mod:`mlfuse.distributions.continuous`)."""

from mlfuse.distributions.continuous import Dirichlet

__all__ = ["Dirichlet"]
