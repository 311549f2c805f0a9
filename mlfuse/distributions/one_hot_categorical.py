"""PyTorch's ``torch.distributions.one_hot_categorical`` module, for code that imports
from it: OneHotCategorical, OneHotCategoricalStraightThrough (defined in
:mod:`mlfuse.distributions.discrete`)."""

from mlfuse.distributions.discrete import OneHotCategorical, OneHotCategoricalStraightThrough

__all__ = ["OneHotCategorical", "OneHotCategoricalStraightThrough"]
