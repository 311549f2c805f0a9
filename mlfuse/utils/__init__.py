"""Small helpers shared across the package, and PyTorch's ``torch.utils.data`` and
``torch.utils.checkpoint`` as the submodules :mod:`mlfuse.utils.data` and
:mod:`mlfuse.utils.checkpoint`."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")


def postorder(roots: Iterable[T], children: Callable[[T], Iterable[T]]) -> list[T]:
    """Every node reachable from ``roots``, children before parents, each once.

    Iterative, so deep graphs do not hit Python's recursion limit; nodes are
    told apart by identity.
    """
    order: list[T] = []
    seen: set[int] = set()
    for root in roots:
        if id(root) in seen:
            continue
        seen.add(id(root))
        # a stack of (node, its children not yet looked at): depth first, in order
        stack: list[tuple[T, Iterator[T]]] = [(root, iter(children(root)))]
        while stack:
            node, rest = stack[-1]
            for c in rest:
                if id(c) not in seen:
                    seen.add(id(c))
                    stack.append((c, iter(children(c))))
                    break
            else:  # every child done: the node follows them
                stack.pop()
                order.append(node)
    return order


DEBUG_LEVELS = {
    0: "quiet",
    1: "schedules and pass times",
    2: "kernels as they run, GB/s and GFLOP/s",
    3: "kernel and LLVM IR",
    4: "IR after every pass",
}
"""The values ``MLFUSE_DEBUG`` accepts and what each prints (each level adds to the last)."""


def debug_level() -> int:
    """``MLFUSE_DEBUG`` (see :data:`DEBUG_LEVELS`; unset or empty: 0).

    Any other value is a ValueError naming the variable and the accepted
    values: a typo must not silently turn the debug output off.
    """
    raw = os.environ.get("MLFUSE_DEBUG", "").strip()
    if not raw:
        return 0
    if raw.isdigit() and int(raw) in DEBUG_LEVELS:
        return int(raw)
    accepted = ", ".join(f"{k} ({v})" for k, v in DEBUG_LEVELS.items())
    raise ValueError(
        f"MLFUSE_DEBUG={raw!r} is not a debug level; accepted values: {accepted}; "
        "each level prints what the ones below it do"
    )


_SUBMODULES = ("data", "checkpoint")
"""PyTorch's ``torch.utils.data`` and ``torch.utils.checkpoint``: ``mlfuse.utils.data``
and ``mlfuse.utils.checkpoint``, imported on first use (they need
:mod:`mlfuse.tensor`, which imports this package's helpers)."""


def __getattr__(name: str):
    if name in _SUBMODULES:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_SUBMODULES))
