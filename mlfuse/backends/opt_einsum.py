"""``torch.backends.opt_einsum``: ``mlfuse.einsum`` orders its contractions
itself; ``enabled`` and ``strategy`` are remembered."""

from __future__ import annotations

enabled = True
strategy = "auto"


def is_available() -> bool:
    """True: einsum's contraction order is optimized (by mlfuse, not opt_einsum)."""
    return True


def get_opt_einsum():
    """None: the opt_einsum package is not used."""
    return None
