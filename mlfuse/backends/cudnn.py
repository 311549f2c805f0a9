"""``torch.backends.cudnn``: mlfuse has no cuDNN (its GPU kernels are its own), so
``is_available()`` is False; ``enabled``, ``benchmark``, ``deterministic`` and
``allow_tf32`` are remembered for code that sets and reads them. mlfuse's kernels
are deterministic whatever ``deterministic`` says, and never use TF32."""

from __future__ import annotations

from mlfuse.backends._flags import check_bool, module_flags

enabled = True
benchmark = False
benchmark_limit = 10
deterministic = False
allow_tf32 = True


def is_available() -> bool:
    """False: mlfuse does not use cuDNN."""
    return False


def version() -> None:
    """None: no cuDNN is loaded."""
    return None


def is_acceptable(tensor) -> bool:
    """False: no tensor goes to cuDNN."""
    return False


def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False,
          allow_tf32=True):  # fmt: skip
    """Set the switches inside a ``with`` block: ``with cudnn.flags(enabled=False):``."""
    for name, v in (("enabled", enabled), ("benchmark", benchmark),
                    ("deterministic", deterministic), ("allow_tf32", allow_tf32)):  # fmt: skip
        check_bool(f"cudnn.flags: {name}", v)
    return module_flags(
        __name__,
        enabled=enabled,
        benchmark=benchmark,
        benchmark_limit=benchmark_limit,
        deterministic=deterministic,
        allow_tf32=allow_tf32,
    )
