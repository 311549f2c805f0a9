"""PyTorch's ``torch.distributions.categorical`` module, for code that imports from it:
Categorical (defined in :mod:`mlfuse.distributions.discrete`)."""

from mlfuse.distributions.discrete import Categorical

__all__ = ["Categorical"]
