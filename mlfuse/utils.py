"""Small helpers shared across the package."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
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
        stack: list[tuple[T, bool]] = [(root, False)]
        while stack:
            n, done = stack.pop()
            if done:
                order.append(n)
                continue
            if id(n) in seen:
                continue
            seen.add(id(n))
            stack.append((n, True))
            stack.extend((c, False) for c in reversed(list(children(n))))
    return order


def debug_level() -> int:
    """``MLFUSE_DEBUG``: 0 quiet; 1 schedules; 2 kernels as they run; 3 IR; 4 IR after each pass."""
    try:
        return int(os.environ.get("MLFUSE_DEBUG", "0"))
    except ValueError:
        return 0
