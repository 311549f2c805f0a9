"""PyTorch's ``torch.distributions.cauchy`` module, for code that imports from it:
Cauchy (defined in :mod:`mlfuse.distributions.continuous`)."""

from mlfuse.distributions.continuous import Cauchy

__all__ = ["Cauchy"]
