"""``torch.backends.cpu``: the vector instructions mlfuse's CPU kernels use."""

from __future__ import annotations


def get_cpu_capability() -> str:
    """PyTorch's name of the widest vector unit mlfuse's CPU kernels use on this
    machine (``"AVX512"``, ``"AVX2"`` or ``"DEFAULT"``)."""
    from mlfuse.targets import get_target

    return get_target("cpu").capability()
