"""PyTorch's ``torch.distributions.gamma`` module, for code that imports from it: Gamma
(defined in :mod:`mlfuse.distributions.continuous`)."""

from mlfuse.distributions.continuous import Gamma

__all__ = ["Gamma"]
