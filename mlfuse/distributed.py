"""PyTorch's ``torch.distributed``, as far as one process goes: mlfuse runs in
one process on one device, so there is no process group; the guards scripts
use (``dist.is_available() and dist.is_initialized()``) answer False, and the
calls that need a group raise PyTorch's error."""

from __future__ import annotations

__all__ = [
    "is_available", "is_initialized", "is_torchelastic_launched", "init_process_group",
    "get_rank", "get_world_size", "barrier", "all_reduce", "broadcast", "destroy_process_group",
    "ReduceOp",
]  # fmt: skip


class ReduceOp:
    """The reductions' names (for code that refers to them)."""

    SUM, PRODUCT, MIN, MAX, AVG = "sum", "product", "min", "max", "avg"


def is_available() -> bool:
    """False: mlfuse has no multi-process backend."""
    return False


def is_initialized() -> bool:
    """False: no process group exists."""
    return False


def is_torchelastic_launched() -> bool:
    """False: not started by torchrun."""
    return False


def _no_group(what: str):
    raise RuntimeError(
        f"distributed.{what}: Default process group has not been initialized (mlfuse runs "
        "in one process; guard with mlfuse.distributed.is_initialized())"
    )


def init_process_group(*args, **kwargs) -> None:
    """Not supported: one process, one device."""
    raise RuntimeError(
        "distributed.init_process_group: mlfuse has no multi-process backend (one process, "
        "one device)"
    )


def get_rank(group=None) -> int:
    """Raises: there is no process group (see the module\'s documentation)."""
    _no_group("get_rank")


def get_world_size(group=None) -> int:
    """Raises: there is no process group (see the module\'s documentation)."""
    _no_group("get_world_size")


def barrier(group=None, async_op: bool = False, device_ids=None):
    """Raises: there is no process group (see the module\'s documentation)."""
    _no_group("barrier")


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """Raises: there is no process group (see the module\'s documentation)."""
    _no_group("all_reduce")


def broadcast(tensor, src: int = 0, group=None, async_op: bool = False):
    """Raises: there is no process group (see the module\'s documentation)."""
    _no_group("broadcast")


def destroy_process_group(group=None) -> None:
    """Raises: there is no process group (see the module\'s documentation)."""
    _no_group("destroy_process_group")
