"""PyTorch's ``torch.distributions.normal`` module, for code that imports from it:
Normal (defined in :mod:`mlfuse.distributions.continuous`)."""

from mlfuse.distributions.continuous import Normal

__all__ = ["Normal"]
