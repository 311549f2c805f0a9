"""PyTorch's older spelling ``torch.cpu.amp.autocast``: :mod:`mlfuse.amp`'s for
the 'cpu' device type."""

from __future__ import annotations

from mlfuse import amp as _amp

__all__ = ["autocast"]


class autocast(_amp.autocast):  # noqa: N801 - PyTorch's name
    """``mlfuse.amp.autocast("cpu", ...)`` (bfloat16 unless ``dtype`` is given)."""

    def __init__(self, enabled: bool = True, dtype=None, cache_enabled: bool = True) -> None:
        super().__init__("cpu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)
