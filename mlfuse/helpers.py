"""tinygrad's ``helpers`` names that user code and tests reach for:
``GlobalCounters`` (what the realized programs did), ``getenv`` and ``Device``.

``GlobalCounters`` is updated by every realize (not by ``mlfuse.jit``
replays, which run captured programs without scheduling)::

    GlobalCounters.reset()
    (a @ b).relu().realize()
    GlobalCounters.kernel_count      # 1: the product and its relu fused
    GlobalCounters.global_ops        # flops of contractions in the kernels run
    GlobalCounters.global_mem        # bytes the kernels read and wrote
"""

from __future__ import annotations

import os

from mlfuse import targets

__all__ = ["GlobalCounters", "getenv", "Device"]


class GlobalCounters:
    """Totals over the programs realized since the last :meth:`reset`:
    ``kernel_count`` (kernels launched), ``global_ops`` (the flops of their
    contractions), ``global_mem`` (bytes read and written) and ``time_sum_s``
    (seconds spent running them, as tinygrad's)."""

    kernel_count: int = 0
    global_ops: int = 0
    global_mem: int = 0
    time_sum_s: float = 0.0

    @classmethod
    def reset(cls) -> None:
        """Zero every counter: ``GlobalCounters.reset()``."""
        cls.kernel_count = cls.global_ops = cls.global_mem = 0
        cls.time_sum_s = 0.0

    @classmethod
    def ran(cls, items, seconds: float) -> None:
        """Count one realized program's schedule items (called by the executor)."""
        for it in items:
            cls.kernel_count += 1
            cls.global_ops += int(getattr(it, "flops", 0) or 0)
            cls.global_mem += int(getattr(it, "bytes_read", 0) + getattr(it, "bytes_written", 0))
        cls.time_sum_s += seconds


def getenv(key: str, default=0):
    """An environment variable converted to ``default``'s type (tinygrad's):
    ``getenv("BS", 32)`` is an int, ``getenv("NAME", "")`` a string."""
    value = os.environ.get(key)
    if value is None:
        return default
    return type(default)(value)


class _DeviceMeta(type):
    @property
    def DEFAULT(cls) -> str:  # noqa: N802 - tinygrad's name
        """The device tensors are created on (settable): ``Device.DEFAULT = "cuda"``."""
        return targets.get_default_device()

    @DEFAULT.setter
    def DEFAULT(cls, device: str) -> None:  # noqa: N802 - tinygrad's name
        targets.set_default_device(device)

    def __getitem__(cls, device: str):
        return targets.get_target(targets.device_name(device))


class Device(metaclass=_DeviceMeta):
    """tinygrad's device registry: ``Device.DEFAULT`` (get and set the default
    device), ``Device["cpu"]`` (its target), ``Device.canonicalize("CUDA")``."""

    @staticmethod
    def canonicalize(device: str | None) -> str:
        """The registered name a device spelling means: ``Device.canonicalize("CPU")``."""
        return targets.device_name(None if device is None else str(device).lower())
