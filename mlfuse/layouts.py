"""PyTorch's layout and memory-format objects: ``mlfuse.strided``,
``mlfuse.contiguous_format``, ``mlfuse.channels_last``, ``mlfuse.preserve_format``.

mlfuse tensors are dense ("strided"); there are no sparse layouts. A memory
format names an order of a tensor's elements in memory; the values are the same
in every format, so code that passes one (``zeros_like(p,
memory_format=mlfuse.preserve_format)``, ``x.contiguous(memory_format=
mlfuse.channels_last)``) computes what it does in PyTorch.
``contiguous``/``to``/``clone`` with ``channels_last`` store the values
channels-last (NHWC), and ``stride()`` reports that order, as PyTorch's do.
"""

from __future__ import annotations


class layout:  # noqa: N801 - PyTorch's name
    """How a tensor's elements are stored: ``mlfuse.strided`` (dense)."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"mlfuse.{self.name}"

    def __reduce__(self):
        return self.name  # pickles as the module attribute


class memory_format:  # noqa: N801 - PyTorch's name
    """An order of a dense tensor's elements in memory: ``mlfuse.channels_last``."""

    __slots__ = ("name", "rank")

    def __init__(self, name: str, rank: int | None = None):
        self.name, self.rank = name, rank

    def __repr__(self) -> str:
        return f"mlfuse.{self.name}"

    def __reduce__(self):
        return self.name


strided = layout("strided")
contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last", 4)
channels_last_3d = memory_format("channels_last_3d", 5)

__all__ = [
    "layout",
    "memory_format",
    "strided",
    "contiguous_format",
    "preserve_format",
    "channels_last",
    "channels_last_3d",
]


def check_layout(value, where: str) -> None:
    """A ``layout=`` argument: None or ``mlfuse.strided``."""
    if value is None or value is strided:
        return
    if isinstance(value, layout):
        raise ValueError(f"{where}: layout {value!r} is not supported; mlfuse tensors are strided")
    raise TypeError(f"{where}: layout must be mlfuse.strided, got {value!r}")


def check_memory_format(value, where: str, ndim: int | None = None) -> memory_format | None:
    """A ``memory_format=`` argument (None, or one of the formats); channels-last
    formats need a tensor of their rank (4 or 5 dims), as in PyTorch."""
    if value is None:
        return None
    if not isinstance(value, memory_format):
        raise TypeError(
            f"{where}: memory_format must be one of mlfuse.contiguous_format, "
            f"preserve_format, channels_last, channels_last_3d; got {value!r}"
        )
    if value.rank is not None and ndim is not None and ndim != value.rank:
        raise ValueError(f"{where}: {value!r} needs a tensor of {value.rank} dims, got {ndim} dims")
    return value
