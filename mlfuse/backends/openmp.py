"""``torch.backends.openmp``: mlfuse's CPU kernels run on its own thread pool."""

from __future__ import annotations


def is_available() -> bool:
    """False: mlfuse's CPU kernels use their own threads, not OpenMP."""
    return False
