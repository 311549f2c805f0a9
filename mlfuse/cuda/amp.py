"""PyTorch's older spellings ``torch.cuda.amp.autocast`` and
``torch.cuda.amp.GradScaler``: :mod:`mlfuse.amp`'s, for the 'cuda' device type."""

from __future__ import annotations

from mlfuse import amp as _amp
from mlfuse.amp import custom_bwd, custom_fwd  # noqa: F401 - torch.cuda.amp's names

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd"]


class autocast(_amp.autocast):  # noqa: N801 - PyTorch's name
    """``mlfuse.amp.autocast("cuda", ...)``."""

    def __init__(self, enabled: bool = True, dtype=None, cache_enabled: bool = True) -> None:
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_amp.GradScaler):
    """``mlfuse.amp.GradScaler("cuda", ...)``."""

    def __init__(self, init_scale: float = 2.0**16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000,
                 enabled: bool = True) -> None:  # fmt: skip
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval,
                         enabled)  # fmt: skip
