"""Random chains of movement ops, applied alike to numpy arrays, views and tensors.

Shared by the view-algebra and pipeline property tests. The number of
examples is bounded for CI; set MLFUSE_PROPERTY_EXAMPLES (e.g. 5000) for a
thorough run.
"""

from __future__ import annotations

import math
import os

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

EXAMPLES = int(os.environ.get("MLFUSE_PROPERTY_EXAMPLES", "150"))

property_settings = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=os.environ.get("MLFUSE_PROPERTY_RANDOM") is None,
)

MAX_ELEMENTS = 2048


def _factors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


@st.composite
def reshape_target(draw, shape: tuple[int, ...]) -> tuple[int, ...]:
    """Another shape with the same number of elements (rank 1 to 5)."""
    n = math.prod(shape)
    if n == 0:
        return shape
    dims: list[int] = []
    rest = n
    if n == 1 and draw(st.booleans()):
        return ()  # a 0-d tensor
    rank = draw(st.integers(1, 5))
    for _ in range(rank - 1):
        d = draw(st.sampled_from(_factors(rest)))
        dims.append(d)
        rest //= d
    dims.append(rest)
    return tuple(draw(st.permutations(dims)))


@st.composite
def movement_op(draw, shape: tuple[int, ...]):
    """One movement op valid for ``shape``, as (name, argument)."""
    nd = len(shape)
    choices = ["reshape", "permute", "pad", "shrink", "flip", "stride"] if nd else ["reshape"]
    if 1 in shape:
        choices.append("expand")
    name = draw(st.sampled_from(choices))
    if name == "reshape":
        return name, draw(reshape_target(shape))
    if name == "permute":
        return name, tuple(draw(st.permutations(range(nd))))
    if name == "expand":
        return name, tuple(draw(st.integers(1, 4)) if s == 1 else s for s in shape)
    if name == "pad":
        return name, tuple((draw(st.integers(0, 2)), draw(st.integers(0, 2))) for _ in shape)
    if name == "shrink":
        out = []
        for s in shape:
            b = draw(st.integers(0, s))
            out.append((b, draw(st.integers(b, s))))
        return name, tuple(out)
    if name == "flip":
        return name, tuple(d for d in range(nd) if draw(st.booleans()))
    return name, tuple(draw(st.integers(1, 3)) for _ in shape)


def numpy_apply(x: np.ndarray, name: str, arg) -> np.ndarray:
    if name == "reshape":
        return x.reshape(arg)
    if name == "permute":
        return x.transpose(arg)
    if name == "expand":
        return np.broadcast_to(x, arg)
    if name == "pad":
        return np.pad(x, arg)
    if name == "shrink":
        return x[tuple(slice(b, e) for b, e in arg)]
    if name == "flip":
        return np.flip(x, arg) if arg else x
    if name == "stride":
        return x[tuple(slice(None, None, k) for k in arg)]
    raise ValueError(name)


def _size(shape, name, arg) -> int:
    if name in ("reshape", "expand"):
        return math.prod(arg)
    if name == "pad":
        return math.prod(s + b + e for s, (b, e) in zip(shape, arg))
    return math.prod(shape)


@st.composite
def movement_chain(draw, max_ops: int = 8):
    """(start shape, [(op, arg), ...]) with 1..max_ops ops; sizes stay small."""
    rank = draw(st.integers(1, 5))
    shape = tuple(draw(st.integers(1, 5)) for _ in range(rank))
    ops = []
    cur = shape
    for _ in range(draw(st.integers(1, max_ops))):
        name, arg = draw(movement_op(cur))
        if _size(cur, name, arg) > MAX_ELEMENTS:
            continue
        ops.append((name, arg))
        cur = numpy_apply(np.empty(cur, dtype=np.int8), name, arg).shape
    return shape, ops
