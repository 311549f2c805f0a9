"""PyTorch's ``torch.distributions.studentT`` module, for code that imports from it:
StudentT (defined in :mod:`mlfuse.distributions.continuous`)."""

from mlfuse.distributions.continuous import StudentT

__all__ = ["StudentT"]
