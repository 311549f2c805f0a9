"""split-reduces: a long reduction with few results becomes two reductions.

A reduce that produces fewer than ``outputs`` values, each from at least
``min-length`` elements, runs on few threads: a full ``x.sum()`` is one GPU
block (or one CPU thread) walking the whole tensor. This pass splits one of
its axes in two, ``n -> (g, n / g)``, reduces the ``n / g`` part first
(``g`` times as many results, each computed in parallel) and then the ``g``
partial results::

    %r = lazy.reduce add %x [0] : tensor<1048576xf32> -> tensor<1xf32>

becomes (before push-views moves the reshape onto the loads)::

    %p = lazy.reshape %x [256, 4096] : ...           // g = 256 parts
    %s = lazy.reduce add %p [1] {realize = "split reduce"} : ... -> tensor<256x1xf32>
    %t = lazy.reduce add %s [0] : ... -> tensor<1x1xf32>
    %r = lazy.reshape %t [1] : ...

The partial results are materialized (``realize = "split reduce"``), so the
two reductions are two kernels: the first parallel over the ``g`` parts, the
second small. The axis split is the outermost reduce axis with a divisor ``g``
that brings the results to about ``outputs`` while leaving each part at
least ``min-part`` elements (so each part still fills a GPU block's threads or
a CPU thread's vectors). An axis without such a divisor (a prime length) is
cut into the parts wanted, each ``n // g`` long, and a remainder shorter than
one part, reduced on its own and combined with the result (``+``, ``*``,
max or min of the two; ``remainder=false``: left alone). The parts read
plain rows: padding the axis instead would read a masked view reshaped
across its mask, a stack of views indexed element by element. A column
reduction (its input's last dim is kept: ``x.sum(0)``) has its own three
limits (``column-outputs`` ...): a GPU gives each of its results one thread,
not a block, so it wants many more results. Sums,
products, maxima and minima are associative, so the result is the same up to
the order of floating-point additions (which this order makes more accurate:
partial sums of ``n / g`` elements, then of ``g``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.passes import ModulePass

from mlfuse.dialects import lazy
from mlfuse.passes.utils import REALIZE, with_loc

SPLIT = "split reduce"
"""The realize reason of a split reduce's partial results."""


def is_column(shape: tuple[int, ...], axes: tuple[int, ...]) -> bool:
    """Whether a reduce keeps the last dim of its input (of size > 1): a column
    reduction, whose results lie next to each other, so that a GPU gives each
    result a thread (not a block) and wants many more of them."""
    return len(shape) > 0 and shape[-1] > 1 and len(shape) - 1 not in axes


def split_factor(
    shape: tuple[int, ...],
    axes: tuple[int, ...],
    outputs: int,
    min_length: int,
    min_part: int,
    remainder: bool = False,
) -> tuple[int, int, int] | None:
    """(axis, parts, part length along the axis) to split a reduce over
    ``axes`` of a ``shape`` tensor, or None.

    A divisor of the axis's length near the parts wanted is used as it is.
    With ``remainder``, an axis without one (a prime length, or one whose
    divisors are all far below the parts wanted) is split into the parts
    wanted and a remainder shorter than one part: ``parts * length`` may be
    less than the axis's length."""
    out = math.prod(s for d, s in enumerate(shape) if d not in axes)
    length = math.prod(shape[d] for d in axes)
    if out >= outputs or length < min_length:
        return None
    want = -(-outputs // out)  # parts that bring the results to ``outputs``
    for a in sorted(axes):
        n = shape[a]
        rest = length // n  # elements of each part from the other axes
        best = None
        for g in range(2, min(n, 4 * want) + 1):
            if n % g == 0 and (n // g) * rest >= min_part:
                if best is None or abs(math.log(g / want)) < abs(math.log(best / want)):
                    best = g
        if best is not None and (not remainder or 4 * best >= want):
            return a, best, n // best
        if remainder:
            g = min(want, n // 2)
            while g >= 2 and (n // g) * rest < min_part:
                g //= 2
            if g >= 2 and (best is None or g > best):
                return a, g, n // g
        if best is not None:
            return a, best, n // best
    return None


_COMBINE = {"add": lazy.AddOp, "mul": lazy.MulOp, "max": lazy.MaxOp, "min": lazy.MinOp}
"""The elementwise op combining two partial results of each reduce kind."""


@dataclass
class _Split(RewritePattern):
    outputs: int
    min_length: int
    min_part: int
    column: tuple[int, int, int]
    remainder: bool

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: lazy.ReduceOp, rewriter: PatternRewriter, /):
        if REALIZE in op.attributes and op.attributes[REALIZE] == StringAttr(SPLIT):
            return
        shape = lazy.shape_of(op.input)
        axes = op.reduce_axes
        limits = (
            self.column
            if is_column(shape, axes)
            else (self.outputs, self.min_length, self.min_part)
        )
        found = split_factor(shape, axes, *limits, remainder=self.remainder)
        if found is None:
            return
        a, g, m = found
        x, new = op.input, []
        if g * m != shape[a]:  # the parts, then the rest of the axis on its own
            keep = tuple((0, g * m) if d == a else (0, s) for d, s in enumerate(shape))
            tail = tuple((g * m, s) if d == a else (0, s) for d, s in enumerate(shape))
            head = lazy.ShrinkOp.build(x, keep)
            rest = lazy.ShrinkOp.build(x, tail)
            new += [head, rest, lazy.ReduceOp(op.reduce_kind, rest.result, axes)]
            x = head.result
        parts = (*shape[:a], g, m, *shape[a + 1 :])
        inner = tuple(d + 1 if d >= a else d for d in axes)  # the n / g part and the rest
        reshaped = lazy.ReshapeOp.build(x, parts)
        first = lazy.ReduceOp(op.reduce_kind, reshaped.result, inner)
        first.attributes[REALIZE] = StringAttr(SPLIT)
        second = lazy.ReduceOp(op.reduce_kind, first.result, (a,))
        back = lazy.ReshapeOp.build(second.result, lazy.shape_of(op.result))
        new += [reshaped, first, second, back]
        if g * m != shape[a]:
            new.append(_COMBINE[op.reduce_kind](back.result, new[2].results[0]))
        new = [with_loc(o, op) for o in new]
        rewriter.replace(op, new, [new[-1].results[0]])


@dataclass(frozen=True)
class SplitReduces(ModulePass):
    """Split reduces with few results and long rows into two (see the module doc)."""

    name = "split-reduces"

    outputs: int = 256
    """Fewer results than this, and a reduce is split to produce about this many."""

    min_length: int = 1 << 16
    """Only reduces of at least this many elements per result are split."""

    min_part: int = 4096
    """Each part keeps at least this many elements."""

    column_outputs: int = 256
    """``outputs`` for column reductions (:func:`is_column`)."""

    column_min_length: int = 1 << 16
    """``min-length`` for column reductions."""

    column_min_part: int = 4096
    """``min-part`` for column reductions."""

    remainder: bool = True
    """Split an axis whose length has no suitable divisor (a prime) into the
    parts wanted and a remainder reduced on its own (see :func:`split_factor`)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        column = (self.column_outputs, self.column_min_length, self.column_min_part)
        PatternRewriteWalker(
            _Split(self.outputs, self.min_length, self.min_part, column, self.remainder),
            apply_recursively=False,
        ).rewrite_module(op)
