"""einops' ``rearrange`` patterns as one reshape, one permute and one reshape.

``Tensor.rearrange("b (c h1 w1) h w -> b c (h h1) (w w1)", h1=2, w1=2)`` reads
each side of the arrow as a list of dims; a dim is an axis name, a group of
names in parentheses (the dims merged into one), ``...`` (the dims the other
names leave), or ``1`` / ``()`` (a dim of size 1). The left side splits the
tensor's dims into elementary axes, the right side orders and merges them, so
the whole rearrangement is views: nothing is copied until a kernel reads it.

The rules are einops': every name appears once on each side, names are Python
identifiers that neither start nor end with ``_``, at most one ``...`` a side
(on the left never inside parentheses), and sizes given as keywords either
split a group (one unknown name a group at most) or check a dim.
"""

from __future__ import annotations

import math
import operator
import re
from typing import TYPE_CHECKING

from mlfuse.errors import ArgumentError, ArgumentTypeError, PatternError

if TYPE_CHECKING:
    from mlfuse.tensor import Tensor

ELLIPSIS = "..."
_TOKEN = re.compile(r"\(|\)|[^\s()]+")


def _valid_name(name: str) -> bool:
    return name.isidentifier() and not name.startswith("_") and not name.endswith("_")


def parse_side(text: str, side: str, merge_ellipsis: bool) -> list[list[str] | str]:
    """The dims of one side: each a list of names (``[]`` is a unit dim), or
    ``"..."`` for a bare ellipsis (the dims it covers, each apart). Inside
    parentheses ``...`` stands as a name (the dims it covers merged), allowed
    only where ``merge_ellipsis`` (the right side)."""
    dims: list[list[str] | str] = []
    group: list[str] | None = None
    seen: set[str] = set()
    for token in _TOKEN.findall(text):
        if token == "(":
            if group is not None:
                raise PatternError(f"rearrange: nested parentheses in the {side} side {text!r}")
            group = []
        elif token == ")":
            if group is None:
                raise PatternError(f"rearrange: unbalanced ')' in the {side} side {text!r}")
            dims.append(group)
            group = None
        else:
            if token == "1":
                name = None
            elif token == ELLIPSIS or _valid_name(token):
                name = token
            else:
                raise PatternError(
                    f"rearrange: {token!r} in the {side} side {text!r} is not an axis name "
                    "(an identifier not starting or ending with '_'), '...', '1' or '()'"
                )
            if name is not None and name in seen:
                what = "'...'" if name == ELLIPSIS else f"axis {name!r}"
                raise PatternError(f"rearrange: {what} appears twice in the {side} side {text!r}")
            if name is not None:
                seen.add(name)
            if group is not None:
                if name == ELLIPSIS and not merge_ellipsis:
                    raise PatternError(
                        f"rearrange: '...' cannot be inside parentheses on the {side} side {text!r}"
                    )
                if name is not None:
                    group.append(name)
            else:
                dims.append(name if name == ELLIPSIS else [] if name is None else [name])
    if group is not None:
        raise PatternError(f"rearrange: unbalanced '(' in the {side} side {text!r}")
    return dims


def rearrange(x: Tensor, pattern: str, sizes: dict[str, int]) -> Tensor:
    """``x`` rearranged by an einops ``pattern`` (see the module's docstring)."""
    if not isinstance(pattern, str):
        raise ArgumentTypeError(
            f"rearrange: the pattern must be a str, got {type(pattern).__name__}"
        )
    if pattern.count("->") != 1:
        raise PatternError(f"rearrange: pattern {pattern!r} needs exactly one '->'")
    left_text, right_text = pattern.split("->")
    left = parse_side(left_text, "left", merge_ellipsis=False)
    right = parse_side(right_text, "right", merge_ellipsis=True)
    left_names = {n for g in left for n in ([g] if g == ELLIPSIS else g)}
    right_names = {n for g in right for n in ([g] if g == ELLIPSIS else g)}
    if left_names != right_names:
        only_l, only_r = sorted(left_names - right_names), sorted(right_names - left_names)
        raise PatternError(
            f"rearrange: both sides must name the same axes in {pattern!r}: "
            f"only on the left {only_l}, only on the right {only_r}"
        )
    for name, size in sizes.items():
        if name not in left_names or name == ELLIPSIS:
            raise PatternError(f"rearrange: size given for {name!r}, not an axis of {pattern!r}")
        if isinstance(size, bool) or not hasattr(size, "__index__"):
            raise ArgumentTypeError(f"rearrange: size of {name!r} must be an int, got {size!r}")
        if operator.index(size) < 0:
            raise ArgumentError(f"rearrange: size of {name!r} must be non-negative, got {size!r}")
    sizes = {name: operator.index(size) for name, size in sizes.items()}

    # '...' stands for the dims the other left dims leave: name them apart
    n_fixed = sum(1 for g in left if g != ELLIPSIS)
    has_ellipsis = ELLIPSIS in left
    if (x.ndim < n_fixed) if has_ellipsis else (x.ndim != n_fixed):
        raise ArgumentError(
            f"rearrange: the left side of {pattern!r} has {n_fixed} dims"
            f"{' and ...' if has_ellipsis else ''}, the tensor {x.ndim} (shape {x.shape})"
        )
    extra = [f"...{i}" for i in range(x.ndim - n_fixed)]

    def expand(groups: list[list[str] | str]) -> list[list[str]]:
        out: list[list[str]] = []
        for g in groups:
            if g == ELLIPSIS:
                out.extend([e] for e in extra)
            else:
                out.append([e for n in g for e in (extra if n == ELLIPSIS else [n])])
        return out

    left, right = expand(left), expand(right)
    known: dict[str, int] = {}
    for dim, (group, size) in enumerate(zip(left, x.shape, strict=True)):
        unknown = [n for n in group if n not in sizes]
        if len(unknown) > 1:
            raise ArgumentError(
                f"rearrange: dim {dim} of size {size} splits into {group}: give the sizes of "
                f"all but one of {unknown} (as rearrange(..., {unknown[0]}=...))"
            )
        given = math.prod(sizes[n] for n in group if n in sizes)
        if unknown:
            if given == 0 or size % given:
                raise ArgumentError(
                    f"rearrange: dim {dim} of size {size} cannot be split into {group}: "
                    f"{given} does not divide {size}"
                )
            known[unknown[0]] = size // given
        elif given != size:
            what = (
                "a unit dim"
                if not group
                else f"axis {group[0]!r}"
                if len(group) == 1
                else f"group {group}"
            )
            raise PatternError(
                f"rearrange: {what} has size {given}, dim {dim} of the tensor has {size}"
            )
        known.update((n, sizes[n]) for n in group if n in sizes)

    axes = [n for g in left for n in g]
    out = x.reshape(tuple(known[n] for n in axes))
    order = [n for g in right for n in g]
    out = out.permute(tuple(axes.index(n) for n in order))
    return out.reshape(tuple(math.prod(known[n] for n in g) for g in right))
