"""PyTorch's ``torch.distributions.gumbel`` module, for code that imports from it:
Gumbel (defined in :mod:`mlfuse.distributions.continuous`)."""

from mlfuse.distributions.continuous import Gumbel

__all__ = ["Gumbel"]
