"""``torch.backends.mps``: Apple's Metal is not an mlfuse target."""

from __future__ import annotations


def is_available() -> bool:
    """False: mlfuse has no Metal target."""
    return False


def is_built() -> bool:
    """False: mlfuse has no Metal target."""
    return False
