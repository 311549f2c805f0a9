"""PyTorch's ``torch.random``: the global generator's functions, and
:func:`fork_rng`, which restores the generator's state after a block::

    with mlfuse.random.fork_rng():
        noise = mlfuse.randn(3)           # draws here do not move the outer stream
"""

from __future__ import annotations

import contextlib

from mlfuse.tensor import Generator, default_generator, manual_seed

__all__ = [
    "Generator", "default_generator", "manual_seed", "seed", "initial_seed",
    "get_rng_state", "set_rng_state", "fork_rng",
]  # fmt: skip


def seed() -> int:
    """Seed the global generator from the operating system; the seed used."""
    return default_generator.seed()


def initial_seed() -> int:
    """The seed the global generator was last seeded with."""
    return default_generator.initial_seed()


def get_rng_state():
    """The global generator's state (a uint8 tensor)."""
    return default_generator.get_state()


def set_rng_state(new_state) -> None:
    """Restore a state :func:`get_rng_state` returned."""
    default_generator.set_state(new_state)


@contextlib.contextmanager
def fork_rng(devices=None, enabled: bool = True, _caller: str = "fork_rng",
             _devices_kw: str = "devices", device_type: str = "cuda"):  # fmt: skip
    """Run the block with the global generator's state saved and restored after
    it (one generator serves every device: draws are made on the host)."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
