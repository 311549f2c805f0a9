"""PyTorch's ``torch.cpu``: the CPU device's queries, and ``torch.cpu.amp``."""

from __future__ import annotations

from mlfuse.cpu import amp

__all__ = ["amp", "is_available", "device_count", "current_device", "synchronize"]


def is_available() -> bool:
    """True: mlfuse always runs on the CPU."""
    return True


def device_count() -> int:
    """1: the CPU is one device."""
    return 1


def current_device() -> str:
    """``"cpu"``."""
    return "cpu"


def synchronize(device=None) -> None:
    """Nothing to wait for: CPU kernels finish before a launch returns."""
