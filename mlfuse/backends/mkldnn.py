"""``torch.backends.mkldnn``: mlfuse's CPU kernels are its own (no oneDNN);
``enabled`` is remembered."""

from __future__ import annotations

from mlfuse.backends._flags import check_bool, module_flags

enabled = True
deterministic = False


def is_available() -> bool:
    """False: mlfuse does not use oneDNN."""
    return False


def flags(enabled=False, deterministic=False):
    """Set the switches inside a ``with`` block."""
    check_bool("mkldnn.flags: enabled", enabled)
    check_bool("mkldnn.flags: deterministic", deterministic)
    return module_flags(__name__, enabled=enabled, deterministic=deterministic)
