"""Kernel spaces: which values can live in one kernel, and at which index map.

A kernel iterates over a *space* ``S`` (the input shape of its reduces, or the
output shape when it has none) and reduces over axes ``R``. A value in the
kernel lives at one of two levels:

* full: shape ``S``; at space point ``s`` it is element ``s``;
* reduced: ``prod(S_R)`` elements, ``S_R`` being ``S`` with 1 on the axes
  ``R``; at point ``s`` it is the element whose row-major position is that
  of ``s`` with the reduced coordinates dropped.

:func:`level_view` is that index map, as a view over the value's contiguous
buffer: loads of an input and stores of an output compose it with their own
views. A reduce result reaches the full level only through a broadcast back
over its own reduced axes (``x - x.max(1, keepdim=True)``); any other view of
a computed reduce makes it a kernel boundary.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlfuse.dialects import lazy
from mlfuse.view import View, ViewStack, contiguous_strides


@dataclass(frozen=True)
class Space:
    shape: tuple[int, ...]
    axes: tuple[int, ...] = ()

    @property
    def reduced_shape(self) -> tuple[int, ...]:
        return tuple(1 if d in self.axes else s for d, s in enumerate(self.shape))

    def level_view(self, shape: tuple[int, ...]) -> ViewStack | None:
        """Index map from the space to a value of ``shape`` (None: not in this space)."""
        if tuple(shape) == self.shape:
            return ViewStack.from_shape(self.shape)
        if math.prod(shape) == math.prod(self.reduced_shape):
            strides = contiguous_strides(self.reduced_shape)
            return ViewStack((View.create(self.shape, strides),))
        return None

    def is_full(self, shape: tuple[int, ...]) -> bool:
        return tuple(shape) == self.shape

    def __str__(self) -> str:
        return f"{list(self.shape)} reduce {list(self.axes)}"


def reduce_space(r: lazy.ReduceOp) -> Space:
    return Space(lazy.shape_of(r.input), r.reduce_axes)


def is_broadcast_back(r: lazy.ReduceOp, stack: ViewStack) -> bool:
    """The view expands the reduce's result over its own reduced axes, exactly."""
    sp = reduce_space(r)
    return stack == ViewStack.from_shape(sp.reduced_shape).expand(sp.shape)


def is_contiguous_reshape(stack: ViewStack) -> bool:
    return stack == ViewStack.from_shape(stack.shape)


def view_of_reduce_problem(r: lazy.ReduceOp, stack: ViewStack) -> str | None:
    """Why a reduce read through ``stack`` cannot stay in its kernel (None: it can)."""
    if is_broadcast_back(r, stack) or is_contiguous_reshape(stack):
        return None
    top = stack.top
    expands = any(
        s > 1 and st == 0 and (top.mask is None or top.mask[d] == (0, s))
        for d, (s, st) in enumerate(zip(top.shape, top.strides))
    )
    return "expand of reduce" if expands else "view of reduce"
