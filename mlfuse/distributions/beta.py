"""PyTorch's ``torch.distributions.beta`` module, for code that imports from it: Beta
(defined in :mod:`mlfuse.distributions.continuous`)."""

from mlfuse.distributions.continuous import Beta

__all__ = ["Beta"]
