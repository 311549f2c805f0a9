"""``torch.cuda``'s everyday questions, answered for mlfuse's CUDA target:

    device = "cuda" if mlfuse.cuda.is_available() else "cpu"

mlfuse drives one GPU (device 0); these never raise where no driver or GPU
exists (``is_available()`` is False and ``device_count()`` 0 there).
"""

from __future__ import annotations

from mlfuse.errors import ArgumentError
from mlfuse.targets import get_target

__all__ = [
    "is_available", "device_count", "current_device", "get_device_name", "synchronize",
    "manual_seed", "manual_seed_all", "empty_cache", "set_device",
]  # fmt: skip


def is_available() -> bool:
    """Whether a CUDA GPU and driver can be used here."""
    return get_target("cuda").available()


def device_count() -> int:
    """GPUs mlfuse can use: 1 where one is available (it drives device 0), else 0."""
    return 1 if is_available() else 0


def current_device() -> int:
    """The GPU in use: always 0."""
    return 0


def set_device(device) -> None:
    """Accepts device 0 (``0``, ``"cuda"``, ``"cuda:0"``), the one mlfuse drives."""
    if str(device) not in ("0", "cuda", "cuda:0"):
        raise ArgumentError(f"set_device: mlfuse drives CUDA device 0 only, got {device!r}")


def get_device_name(device=None) -> str:
    """The GPU's name as the driver reports it."""
    if not is_available():
        raise RuntimeError("get_device_name: no CUDA device is available")
    return get_target("cuda").device_description()


def synchronize(device=None) -> None:
    """Wait for the GPU's queued work (nothing to do where there is no GPU)."""
    if is_available():
        get_target("cuda").synchronize()


def manual_seed(seed: int) -> None:
    """Seed mlfuse's generator (one for every device, as random values are drawn
    on the host)."""
    from mlfuse.tensor import manual_seed as seed_all

    seed_all(seed)


manual_seed_all = manual_seed


def empty_cache() -> None:
    """Accepted: device buffers return to mlfuse's pool when their tensors die."""


from mlfuse.cuda import amp  # noqa: E402, F401 - torch.cuda.amp
