"""PyTorch's ``torch.distributions.log_normal`` module, for code that imports from it:
LogNormal (defined in :mod:`mlfuse.distributions.transformed_distribution`)."""

from mlfuse.distributions.transformed_distribution import LogNormal

__all__ = ["LogNormal"]
