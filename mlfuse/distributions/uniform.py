"""PyTorch's ``torch.distributions.uniform`` module, for code that imports from it:
Uniform (defined in :mod:`mlfuse.distributions.continuous`)."""

from mlfuse.distributions.continuous import Uniform

__all__ = ["Uniform"]
