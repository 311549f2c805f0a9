"""PyTorch's ``torch.distributions.chi2`` module, for code that imports from it: Chi2
(defined in :mod:`mlfuse.distributions.continuous`)."""

from mlfuse.distributions.continuous import Chi2

__all__ = ["Chi2"]
