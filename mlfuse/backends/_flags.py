"""Settings objects for the backends' switches."""

from __future__ import annotations

import contextlib
import sys


def check_bool(name: str, value) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
    return value


@contextlib.contextmanager
def module_flags(module_name: str, **values):
    """Set a backend module's switches inside a ``with`` block, then restore them
    (``None`` leaves one unchanged)."""
    mod = sys.modules[module_name]
    old = {k: getattr(mod, k) for k in values}
    try:
        for k, v in values.items():
            if v is not None:
                setattr(mod, k, v)
        yield
    finally:
        for k, v in old.items():
            setattr(mod, k, v)
