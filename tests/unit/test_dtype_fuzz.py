"""Random mixed-dtype expressions against numpy.

Each case draws operands of random dtypes (every integer width, signed and
unsigned, bool, float16, float32, float64), combines them with a random chain
of elementwise ops, casts and reductions, and compares the realized result
with numpy computing each op in mlfuse's result dtype: the promotion of
``mlfuse.promote_types`` (PyTorch's table, tinygrad's lattice where PyTorch
has none), integers wrapping, float16 computed in float32 and rounded per op.
Values stay where every backend agrees (no float->int cast out of range, no
division by zero, shifts within the width). Seeds are fixed; the chains fuse
into few kernels, so the whole file compiles a few dozen programs.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import mlfuse
from mlfuse import Tensor, dtypes

INTS = [dtypes.uint8, dtypes.int8, dtypes.int16, dtypes.uint16, dtypes.int32, dtypes.uint32,
        dtypes.int64, dtypes.uint64]  # fmt: skip
FLOATS = [dtypes.float16, dtypes.float32, dtypes.float64]
ALL = [dtypes.bool_, *INTS, *FLOATS]
CASES = int(os.environ.get("MLFUSE_DTYPE_FUZZ_CASES", "24"))
"""Cases run (``MLFUSE_DTYPE_FUZZ_CASES=1500`` for a longer search)."""


class Val:
    """A tensor beside its numpy reference (of the numpy dtype of its mlfuse dtype)."""

    def __init__(self, t: Tensor, ref: np.ndarray):
        assert t.dtype.np == ref.dtype, (t.dtype, ref.dtype)
        self.t, self.ref = t, ref

    @property
    def dt(self):
        return self.t.dtype


def draw(rng, dt, shape) -> Val:
    if dt.is_bool:
        ref = rng.random(shape) < 0.5
    elif dt.is_float:
        ref = (rng.standard_normal(shape) * 20).astype(dt.np)
    else:
        info = np.iinfo(dt.np)
        ref = rng.integers(info.min, info.max, shape, dtype=dt.np, endpoint=True)
        ref.flat[: min(3, ref.size)] = [info.min, info.max, 0][: min(3, ref.size)]
    return Val(Tensor(ref, dtype=dt), ref)


def in_dtype(ref: np.ndarray, dt) -> np.ndarray:
    """``ref``'s values as mlfuse converts them to ``dt`` (the values converted are
    always representable: see :func:`cast_safe`)."""
    if dt.is_bool:
        return ref != 0
    with np.errstate(over="ignore", invalid="ignore"):
        if dt.is_float and ref.dtype.kind in "iu" and dt.itemsize == 2:
            return ref.astype(np.float32).astype(dt.np)  # int -> f16 rounds through f32
        return ref.astype(dt.np)


def compute(fn, dt, *refs):
    """``fn`` on ``refs`` (already of ``dt``) as mlfuse computes in ``dt``."""
    with np.errstate(all="ignore"):
        if dt == dtypes.float16:
            return fn(*(r.astype(np.float32) for r in refs)).astype(np.float16)
        return np.asarray(fn(*refs)).astype(dt.np)


def binary(rng, a: Val, b: Val) -> Val:
    r = mlfuse.promote_types(a.dt, b.dt)
    ar, br = in_dtype(a.ref, r), in_dtype(b.ref, r)
    ops = ["add", "mul", "max", "min", "lt", "eq", "where"]
    if not r.is_bool:
        ops.append("sub")
    if r.is_int or r.is_bool:
        ops += ["and", "or", "xor"]
    if r.is_int:
        ops += ["floordiv", "mod", "shl", "shr"]
    op = rng.choice(ops)
    if op in ("floordiv", "mod"):
        # a divisor without zeros and, for signed types, without -1 (MIN // -1 overflows)
        bad = br == 0
        if r.is_signed:
            bad |= br == r.np.type(-1)
        bv = np.where(bad, 3, br).astype(r.np)
        bt = Tensor(bv, dtype=r)
        if op == "floordiv":
            return Val(a.t.cast(r) // bt, compute(np.floor_divide, r, ar, bv))
        return Val(a.t.cast(r) % bt, compute(np.mod, r, ar, bv))
    if op in ("shl", "shr"):
        amount = int(rng.integers(0, 8 * r.itemsize))
        fn = np.left_shift if op == "shl" else np.right_shift
        got = (a.t.cast(r) << amount) if op == "shl" else (a.t.cast(r) >> amount)
        return Val(got, compute(lambda x: fn(x, r.np.type(amount)), r, ar))
    if op == "lt":
        return Val(a.t < b.t, np.less(ar, br))
    if op == "eq":
        return Val(a.t == b.t, np.equal(ar, br))
    if op == "where":
        c = a.ref != 0
        return Val(Tensor.where(a.t != 0, a.t, b.t), np.where(c, ar, br).astype(r.np))
    table = {
        "add": (lambda x, y: x + y, np.add if not r.is_bool else np.logical_or),
        "mul": (lambda x, y: x * y, np.multiply if not r.is_bool else np.logical_and),
        "sub": (lambda x, y: x - y, np.subtract),
        "max": (lambda x, y: x.maximum(y), np.maximum),
        "min": (lambda x, y: x.minimum(y), np.minimum),
        "and": (lambda x, y: x & y, np.bitwise_and),
        "or": (lambda x, y: x | y, np.bitwise_or),
        "xor": (lambda x, y: x ^ y, np.bitwise_xor),
    }
    ours, ref = table[op]
    return Val(ours(a.t, b.t), compute(ref, r, ar, br))


def cast_safe(rng, a: Val) -> Val:
    """A cast to a random dtype that holds a's values (floats to ints only from
    values inside the target's range, after truncation)."""
    to = ALL[rng.integers(len(ALL))]
    src = a
    if a.dt.is_float and to.is_int:
        info = np.iinfo(to.np)
        lo, hi = max(float(info.min), -1e4), min(float(info.max), 1e4)
        clipped = np.clip(np.nan_to_num(a.ref.astype(np.float64)), lo, hi)
        src = Val(Tensor(clipped.astype(a.dt.np), dtype=a.dt), clipped.astype(a.dt.np))
    if to == dtypes.float16 and src.dt.is_int:  # keep ints inside float16's range
        keep = min(1023, int(np.iinfo(src.dt.np).max))
        src = Val(src.t & keep, src.ref & src.dt.np.type(keep))
    whole = src.dt.is_float and to.is_int
    return Val(src.t.cast(to), in_dtype(np.trunc(src.ref) if whole else src.ref, to))


def reduce(rng, a: Val) -> Val:
    kind = rng.choice(["sum", "max", "min"])
    axis = int(rng.integers(a.ref.ndim))
    if kind == "sum":
        if a.dt.is_float:
            want = compute(lambda x: x.sum(axis), a.dt, a.ref.astype(np.float64))
            return Val(a.t.sum(axis), want)
        wide = a.ref.astype(np.int64) if a.dt.is_bool else a.ref.astype(np.uint64).view(np.int64)
        with np.errstate(over="ignore"):
            return Val(a.t.sum(axis), wide.sum(axis))  # integer sums wrap in int64
    fn = np.max if kind == "max" else np.min
    return Val(getattr(a.t, kind)(axis), fn(a.ref, axis))


def check(got: Val, what: str, scale: float = 1.0) -> None:
    """``scale``: the largest magnitude that went into a sum (its rounding errors
    are relative to the terms, not to the result)."""
    out = got.t.numpy()
    want = got.ref
    assert out.dtype == want.dtype, (what, out.dtype, want.dtype)
    if got.dt.is_float:
        tol = {2: 2e-3, 4: 2e-5, 8: 1e-12}[got.dt.itemsize]
        np.testing.assert_allclose(out, want, rtol=tol, atol=tol * scale, err_msg=what)
    else:
        np.testing.assert_array_equal(out, want, err_msg=what)


@pytest.mark.parametrize("seed", range(CASES))
def test_random_mixed_dtype_chains(seed):
    rng = np.random.default_rng(1000 + seed)
    shape = tuple(int(s) for s in rng.integers(1, 6, size=int(rng.integers(1, 3))))
    vals = [draw(rng, ALL[rng.integers(len(ALL))], shape) for _ in range(3)]
    log = [f"inputs {[v.dt.name for v in vals]} {shape}"]
    for _ in range(4):
        step = rng.choice(["binary", "binary", "cast"])
        if step == "binary":
            i, j = rng.choice(len(vals), 2)
            vals.append(binary(rng, vals[i], vals[j]))
        else:
            vals.append(cast_safe(rng, vals[int(rng.integers(len(vals)))]))
        log.append(f"{step} -> {vals[-1].dt.name}")  # (of any earlier value)
        if vals[-1].dt == dtypes.float16:  # float16 chains drift apart by rounding: stop here
            break
    out = vals[-1]
    scale = 1.0
    if rng.random() < 0.5 and out.dt != dtypes.float16:
        if out.dt.is_float:
            scale = max(1.0, float(np.nan_to_num(np.abs(out.ref), posinf=0).max()) * 8)
        out = reduce(rng, out)
        log.append(f"reduce -> {out.dt.name}")
    check(out, "; ".join(log), scale)
