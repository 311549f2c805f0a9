"""The dtypes beside float32/int64 (float16, bfloat16, int8, int16, the unsigned ones), shifts
and promotion.

float16 results are checked against numpy computing each op in float32 and
rounding to float16 (PyTorch's CPU semantics); bfloat16 against float32
references rounded to bfloat16 with numpy bit operations; integers against
numpy in the same dtype (wraparound included). Runs on the default device
(``MLFUSE_DEVICE=cuda_sim`` runs it on the GPU simulator).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import mlfuse
from mlfuse import Tensor, dtypes

RNG = np.random.default_rng(7)
F16, BF16 = dtypes.float16, dtypes.bfloat16
INTS = [dtypes.uint8, dtypes.int8, dtypes.int16, dtypes.uint16, dtypes.uint32, dtypes.uint64]


def bf16(x) -> np.ndarray:
    """float32 values rounded to bfloat16 (the reference's rounding)."""
    return dtypes.round_bf16(np.asarray(x, np.float32))


def f16_ref(op, *xs):
    """``op`` computed in float32 on float16 inputs, rounded to float16."""
    with np.errstate(all="ignore"):
        return op(*(np.asarray(x, np.float16).astype(np.float32) for x in xs)).astype(np.float16)


def bf16_ref(op, *xs):
    with np.errstate(all="ignore"):
        return bf16(op(*(np.asarray(x, np.float32) for x in xs)))


def same(got, want):
    """Equal values (NaN where NaN, signed zeros alike)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def halves(n=64):
    a = (RNG.standard_normal(n) * 4).astype(np.float32)
    b = (RNG.standard_normal(n) * 4).astype(np.float32)
    b[b == 0] = 1
    return a, b


# -- construction, storage, numpy -------------------------------------------------
@pytest.mark.parametrize(
    "np_dt,dt",
    [
        (np.float16, dtypes.float16),
        (np.uint8, dtypes.uint8),
        (np.int8, dtypes.int8),
        (np.int16, dtypes.int16),
        (np.uint16, dtypes.uint16),
        (np.uint32, dtypes.uint32),
        (np.uint64, dtypes.uint64),
    ],
)
def test_numpy_arrays_keep_their_dtype(np_dt, dt):
    a = np.array([1, 2, 100], dtype=np_dt)
    t = Tensor(a)
    assert t.dtype == dt and t.element_size() == np.dtype(np_dt).itemsize
    out = t.numpy()
    assert out.dtype == np.dtype(np_dt)
    np.testing.assert_array_equal(out, a)


@pytest.mark.parametrize("dt", [dtypes.uint16, dtypes.uint32, dtypes.uint64], ids=str)
def test_wide_unsigned_values_cross_the_host_exactly(dt):
    top = int(np.iinfo(dt.np).max)
    t = Tensor([0, 1, top], dtype=dt)
    assert t.numpy().dtype == dt.np and t.tolist() == [0, 1, top]
    assert Tensor(np.array([5, top], dt.np)).dtype == dt  # numpy arrays keep the dtype
    if dt.bits < 64:  # negative Python ints wrap, as PyTorch does
        assert Tensor([-1], dtype=dt).tolist() == [top]
    else:
        with pytest.raises(OverflowError, match="do not fit in uint64"):
            Tensor([-1], dtype=dt)
    with pytest.raises(OverflowError, match=f"do not fit in {dt.name}"):
        Tensor([top + 1], dtype=dt)
    assert (Tensor([top], dtype=dt) + 1).tolist() == [0]  # wraps
    assert (Tensor([top], dtype=dt) > 1).tolist() == [True]  # compared unsigned


def test_wide_unsigned_conversions_to_and_from_floats():
    big = [0, 1, 2**53 + 1, 2**63 - 1, 2**63, 2**63 + 2**11, 2**64 - 1]
    u = Tensor(big, dtype=dtypes.uint64)
    assert u.double().tolist() == [float(v) for v in big]  # correctly rounded
    np.testing.assert_array_equal(u.float().numpy(), np.array(big, np.uint64).astype(np.float32))
    f = np.array([0.0, 2.9, 2.0**63, 2.0**63 + 2**12, 1.5e19, -1.0, -3.0], np.float64)
    with np.errstate(invalid="ignore"):
        want = f.astype(np.uint64)
    np.testing.assert_array_equal(Tensor(f).cast(dtypes.uint64).numpy(), want)
    # past the range and NaN saturate, as the signed conversions do (x86 gives 0 and 2**63)
    edge = Tensor([2.0**64, 1e30, np.nan], dtype=dtypes.float64).cast(dtypes.uint64)
    assert edge.tolist() == [2**64 - 1, 2**64 - 1, 0]
    g = np.array([3e9, 4294967295.0, -1.0, 2.5, 5e9], np.float64)
    np.testing.assert_array_equal(
        Tensor(g).cast(dtypes.uint32).numpy(), g.astype(np.int64).astype(np.uint32)
    )
    # constants fold to the same values
    assert Tensor(3e9, dtype=dtypes.float64).cast(dtypes.uint32).item() == 3_000_000_000
    assert Tensor(-1.0).cast(dtypes.uint64).item() == 2**64 - 1
    assert Tensor(2.0**64, dtype=dtypes.float64).cast(dtypes.uint64).item() == 2**64 - 1
    assert Tensor(2**63 + 2**11, dtype=dtypes.uint64).double().item() == 2.0**63 + 2**11


def test_bfloat16_rounds_to_nearest_even_and_reads_back_as_float32():
    ties = np.array(
        [1.0, 1 + 2**-8, 1 + 3 * 2**-8, -(1 + 2**-8), 3.14159, 1e-40, np.inf, -np.inf], np.float32
    )
    t = Tensor(ties, dtype=BF16)
    assert t.dtype == BF16 and t.element_size() == 2
    out = t.numpy()
    assert out.dtype == np.float32  # numpy has no bfloat16
    same(out, [1.0, 1.0, 1 + 4 * 2**-8, -1.0, 3.140625, bf16(1e-40)[()], np.inf, -np.inf])
    assert np.isnan(Tensor([np.nan], dtype=BF16).numpy()[0])
    assert Tensor([0.1], dtype="bfloat16").item() == 0.10009765625
    assert Tensor.full((2,), 0.1, BF16).numpy().tolist() == [0.10009765625] * 2
    assert Tensor.full((), 0.1, F16).item() == float(np.float16(0.1))


def test_bfloat16_host_storage_is_bits_never_uint16_values():
    assert dtypes.bfloat16.np == dtypes.BF16_STORAGE
    assert dtypes.from_numpy(dtypes.BF16_STORAGE) == BF16
    np.testing.assert_array_equal(dtypes.bf16_bits(np.float32([1.0, -2.0])), [0x3F80, 0xC000])
    t = Tensor([1.5, -2.25], dtype=BF16, device="cpu")
    assert repr(t.realize()) == "tensor([ 1.5 , -2.25], dtype=bfloat16)"
    with pytest.raises(BufferError, match="bfloat16 tensor cannot be exported"):
        t.__dlpack__()
    with pytest.raises(ValueError, match="cannot be viewed without a copy"):
        np.asarray(t, copy=False)
    np.testing.assert_array_equal(np.asarray(t), [1.5, -2.25])


# -- float16 / bfloat16 arithmetic ---------------------------------------------------
BINARY = {
    "add": (lambda x, y: x + y, np.add),
    "sub": (lambda x, y: x - y, np.subtract),
    "mul": (lambda x, y: x * y, np.multiply),
    "div": (lambda x, y: x / y, np.divide),
    "max": (lambda x, y: x.maximum(y), np.maximum),
    "min": (lambda x, y: x.minimum(y), np.minimum),
}


@pytest.mark.parametrize("name", list(BINARY))
def test_float16_binary_ops_round_per_op(name):
    a, b = halves()
    a16, b16 = a.astype(np.float16), b.astype(np.float16)
    ours, ref = BINARY[name]
    out = ours(Tensor(a16), Tensor(b16))
    assert out.dtype == F16
    same(out.numpy(), f16_ref(ref, a16, b16))


@pytest.mark.parametrize("name", list(BINARY))
def test_bfloat16_binary_ops_round_per_op(name):
    a, b = halves()
    x, y = Tensor(a, dtype=BF16), Tensor(b, dtype=BF16)
    ours, ref = BINARY[name]
    out = ours(x, y)
    assert out.dtype == BF16
    same(out.numpy(), bf16_ref(ref, bf16(a), bf16(b)))


def test_chains_round_after_every_op():
    """(a * b + c) * 3: float16 rounds the product, the sum and the last product."""
    a, b = halves()
    c = halves()[0]
    a16, b16, c16 = (v.astype(np.float16) for v in (a, b, c))
    got = ((Tensor(a16) * Tensor(b16) + Tensor(c16)) * 3).numpy()
    step = f16_ref(np.multiply, a16, b16)
    step = f16_ref(np.add, step, c16)
    same(got, f16_ref(lambda x: x * np.float32(3), step))
    x, y, z = (Tensor(v, dtype=BF16) for v in (a, b, c))
    got = ((x * y + z) * 3).numpy()
    step = bf16_ref(np.add, bf16_ref(np.multiply, bf16(a), bf16(b)), bf16(c))
    same(got, bf16_ref(lambda v: v * np.float32(3), step))


def test_scalars_keep_the_half_dtype():
    x = Tensor(np.array([1.0, 2.5, -3.0], np.float16))
    y = x * 0.1 + 1
    assert y.dtype == F16
    want = f16_ref(lambda v: v * np.float32(np.float16(0.1)), x.numpy())
    same(y.numpy(), f16_ref(lambda v: v + 1, want))
    assert (x.bfloat16() * 2.5).dtype == BF16


@pytest.mark.parametrize("dt", [F16, BF16])
def test_unary_ops_and_math_in_float32(dt):
    a = np.abs(halves()[0]) + 0.25
    x = Tensor(a, dtype=dt)
    av = x.numpy().astype(np.float32)
    rnd = (lambda v: v.astype(np.float16)) if dt == F16 else bf16
    for ours, ref in [
        (lambda t: -t, np.negative),
        (lambda t: t.abs(), np.abs),
        (lambda t: t.sqrt(), np.sqrt),
        (lambda t: t.floor(), np.floor),
        (lambda t: t.reciprocal(), np.reciprocal),
    ]:
        out = ours(x)
        assert out.dtype == dt
        same(out.numpy(), rnd(ref(av)))
    for ours, ref in [(Tensor.exp, np.exp), (Tensor.log, np.log), (Tensor.sin, np.sin)]:
        got = ours(x).numpy().astype(np.float64)
        want = rnd(ref(av)).astype(np.float64)
        ulp = np.spacing(np.abs(want).astype(np.float16 if dt == F16 else np.float32))
        if dt == BF16:
            ulp = ulp * 2.0**16
        assert np.all(np.abs(got - want) <= ulp.astype(np.float64))  # at most one ulp


@pytest.mark.parametrize("dt", [F16, BF16])
def test_comparisons_and_where(dt):
    a, b = halves()
    b[:8] = a[:8]
    x, y = Tensor(a, dtype=dt), Tensor(b, dtype=dt)
    av, bv = x.numpy().astype(np.float32), y.numpy().astype(np.float32)
    for ours, ref in [
        (lambda p, q: p < q, np.less),
        (lambda p, q: p <= q, np.less_equal),
        (lambda p, q: p == q, np.equal),
        (lambda p, q: p != q, np.not_equal),
    ]:
        out = ours(x, y)
        assert out.dtype == dtypes.bool_
        np.testing.assert_array_equal(out.numpy(), ref(av, bv))
    w = (x > y).where(x, y)
    assert w.dtype == dt
    same(w.numpy(), np.where(av > bv, av, bv).astype(w.numpy().dtype))


@pytest.mark.parametrize("dt", [F16, BF16])
def test_half_reductions_accumulate_in_float32(dt):
    ones = Tensor.ones(4096, dtype=dt)
    assert ones.sum().dtype == dt
    assert ones.sum().item() == 4096.0  # a 16-bit accumulator would stop at 256 or 2048
    v = (RNG.integers(-64, 64, (8, 96)) / 8).astype(np.float32)  # sums exact in float32
    x = Tensor(v, dtype=dt)
    rnd = (lambda s: s.astype(np.float16)) if dt == F16 else bf16
    same(x.sum(1).numpy(), rnd(v.sum(1, dtype=np.float32)))
    same(x.max(0).numpy(), v.max(0).astype(x.numpy().dtype))
    same(x.min(1).numpy(), v.min(1).astype(x.numpy().dtype))
    same(x.mean(1).numpy(), rnd(rnd(v.sum(1, dtype=np.float32)) / np.float32(96)))
    sm = x.softmax(-1)
    assert sm.dtype == dt
    e = np.exp(v - v.max(-1, keepdims=True))
    np.testing.assert_allclose(sm.numpy(), e / e.sum(-1, keepdims=True), rtol=1e-2, atol=1e-3)


# -- integer dtypes -------------------------------------------------------------------
def ints(dt, n=48, nonzero=False):
    info = np.iinfo(dt.np)
    v = RNG.integers(info.min, info.max, n, dtype=dt.np, endpoint=True)
    v[:4] = [info.min, info.max, 0, 1]
    if nonzero:
        v[v == 0] = 3
    return v


@pytest.mark.parametrize("dt", INTS, ids=lambda d: d.name)
def test_integer_arithmetic_wraps_like_numpy(dt):
    a, b = ints(dt), ints(dt)
    x, y = Tensor(a), Tensor(b)
    assert x.dtype == dt
    with np.errstate(all="ignore"):
        for ours, ref in [
            (lambda p, q: p + q, np.add),
            (lambda p, q: p - q, np.subtract),
            (lambda p, q: p * q, np.multiply),
            (lambda p, q: p.maximum(q), np.maximum),
            (lambda p, q: p.minimum(q), np.minimum),
            (lambda p, q: p & q, np.bitwise_and),
            (lambda p, q: p | q, np.bitwise_or),
            (lambda p, q: p ^ q, np.bitwise_xor),
            (lambda p, q: p.bitwise_xor(q), np.bitwise_xor),
        ]:
            out = ours(x, y)
            assert out.dtype == dt
            np.testing.assert_array_equal(out.numpy(), ref(a, b))
        np.testing.assert_array_equal((-x).numpy(), np.negative(a))
        np.testing.assert_array_equal((~x).numpy(), np.invert(a))
        np.testing.assert_array_equal(x.bitwise_not().numpy(), np.invert(a))
        np.testing.assert_array_equal(x.abs().numpy(), np.abs(a))
        np.testing.assert_array_equal((x + 1).numpy(), a + dt.np.type(1))
        np.testing.assert_array_equal((x * 3).numpy(), a * dt.np.type(3))


@pytest.mark.parametrize("dt", INTS, ids=lambda d: d.name)
def test_integer_division_comparisons_and_reductions(dt):
    a, b = ints(dt), ints(dt, nonzero=True)
    if dt.is_signed:  # numpy's MIN // -1 is not defined
        b[b == -1] = 2
    x, y = Tensor(a), Tensor(b)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal((x // y).numpy(), np.floor_divide(a, b))
        np.testing.assert_array_equal((x % y).numpy(), np.mod(a, b))
    for ours, ref in [(lambda p, q: p < q, np.less), (lambda p, q: p >= q, np.greater_equal)]:
        np.testing.assert_array_equal(ours(x, y).numpy(), ref(a, b))
    assert x.max().item() == a.max() and x.min().item() == a.min()
    m = a.reshape(6, 8)
    np.testing.assert_array_equal(Tensor(m).max(1).numpy(), m.max(1))
    np.testing.assert_array_equal(Tensor(m).min(0).numpy(), m.min(0))
    s = x.sum()
    assert s.dtype == dtypes.int64 and s.item() == int(a.astype(np.int64).sum())  # no wrap
    assert (x // Tensor(np.zeros_like(a))).numpy().tolist() == [0] * len(a)  # as numpy


def test_uint8_is_unsigned_everywhere():
    u = Tensor(np.array([200, 3, 255, 128], np.uint8))
    np.testing.assert_array_equal((u > 100).numpy(), [True, False, True, True])
    np.testing.assert_array_equal((u // 7).numpy(), [28, 0, 36, 18])
    np.testing.assert_array_equal((u % 7).numpy(), [4, 3, 3, 2])
    assert u.max().item() == 255 and u.min().item() == 3
    assert u.cast(mlfuse.int32).numpy().tolist() == [200, 3, 255, 128]  # zero-extended
    assert u.float().numpy().tolist() == [200.0, 3.0, 255.0, 128.0]
    assert u.half().numpy().tolist() == [200.0, 3.0, 255.0, 128.0]
    assert (u >> 1).numpy().tolist() == [100, 1, 127, 64]  # logical shift
    assert (u + 100).numpy().tolist() == [44, 103, 99, 228]  # wraps
    assert Tensor([-1, 127, -128], dtype=mlfuse.int8).byte().numpy().tolist() == [255, 127, 128]


# -- casts ------------------------------------------------------------------------------
def test_float_to_small_int_casts_wrap_through_int64_and_nan_is_zero():
    v = np.array([300.7, -1.0, -129.5, 2.9, -2.9, np.nan, np.inf, -np.inf], np.float32)
    x = Tensor(v)
    assert x.byte().numpy().tolist() == [44, 255, 127, 2, 254, 0, 255, 0]
    assert x.char().numpy().tolist() == [44, -1, 127, 2, -2, 0, -1, 0]
    assert x.short().numpy().tolist() == [300, -1, -129, 2, -2, 0, -1, 0]
    i32 = x.int().numpy().tolist()
    assert i32 == [300, -1, -129, 2, -2, 0, 2**31 - 1, -(2**31)]  # saturates
    # the same values folded on constants
    assert [Tensor.full((), float(f)).byte().item() for f in v] == [44, 255, 127, 2, 254, 0, 255, 0]
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(x.byte().numpy()[:5], v[:5].astype(np.int64).astype(np.uint8))


def test_casts_between_all_dtypes_match_numpy_on_representable_values():
    v = np.array([0, 1, 2, 3, 100, 127], np.float64)
    every = [dtypes.bool_, *INTS, dtypes.int32, dtypes.int64, F16, BF16, dtypes.float32]
    every.append(dtypes.float64)
    pairs = [(src, to, Tensor(v, dtype=src).cast(to)) for src in every for to in every]
    mlfuse.realize(*(got for _, _, got in pairs))  # one program for all of them
    for src, to, got in pairs:
        assert got.dtype == to
        want = v.astype(bool) if (to.is_bool or src.is_bool) else v
        np.testing.assert_array_equal(got.numpy().astype(np.float64), want.astype(np.float64))


@pytest.mark.filterwarnings("ignore:overflow encountered in cast")
def test_float16_bfloat16_conversions_round_through_float32():
    v = np.float32([1 + 2**-9, 65504.0, 70000.0, 1e-8, -0.0])
    h = Tensor(v).half()
    same(h.numpy(), v.astype(np.float16))
    b = h.bfloat16()
    same(b.numpy(), bf16(v.astype(np.float16).astype(np.float32)))
    same(Tensor(v).bfloat16().half().numpy(), bf16(v).astype(np.float16))
    same(Tensor(v.astype(np.float64)).half().numpy(), v.astype(np.float16))


def test_cast_method_spellings():
    x = Tensor([1.5, -2.5])
    assert x.half().dtype == F16 and x.bfloat16().dtype == BF16
    assert x.double().dtype == dtypes.float64 and x.float().dtype == dtypes.float32
    assert x.long().dtype == dtypes.int64 and x.int().dtype == dtypes.int32
    assert x.short().dtype == dtypes.int16 and x.char().dtype == dtypes.int8
    assert x.byte().dtype == dtypes.uint8 and x.bool().dtype == dtypes.bool_
    assert x.type() == "float32" and x.type(mlfuse.half).dtype == F16
    assert x.type("torch.int16").dtype == dtypes.int16
    assert x.to(mlfuse.float16).dtype == F16
    assert x.to("bfloat16").dtype == BF16
    y = x.to("cpu", mlfuse.int8)
    assert (y.device, y.dtype) == ("cpu", dtypes.int8)
    z = x.to(dtype=mlfuse.uint8, device="cpu")
    assert (z.device, z.dtype) == ("cpu", dtypes.uint8)
    assert x.to(z).dtype == dtypes.uint8
    assert x.to(x.dtype) is x
    with pytest.raises(TypeError, match="dtype given twice"):
        x.to(mlfuse.half, mlfuse.int8)
    with pytest.raises(ValueError, match="unknown device 'cuda9'"):
        x.to("cuda9")
    assert [d.element_size() for d in (x.half(), x.byte(), x.short(), x.long())] == [2, 1, 2, 8]
    assert (mlfuse.half, mlfuse.long, mlfuse.short, mlfuse.double) == (
        dtypes.float16,
        dtypes.int64,
        dtypes.int16,
        dtypes.float64,
    )


# -- promotion --------------------------------------------------------------------------
ORDER = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
         "float64"]  # fmt: skip
_B, _U8, _I8, _I16, _I32, _I64, _F16, _BF, _F32, _F64 = ORDER
TORCH_TABLE = [  # torch.promote_types(row, column), torch 2.x
    [_B, _U8, _I8, _I16, _I32, _I64, _F16, _BF, _F32, _F64],
    [_U8, _U8, _I16, _I16, _I32, _I64, _F16, _BF, _F32, _F64],
    [_I8, _I16, _I8, _I16, _I32, _I64, _F16, _BF, _F32, _F64],
    [_I16, _I16, _I16, _I16, _I32, _I64, _F16, _BF, _F32, _F64],
    [_I32, _I32, _I32, _I32, _I32, _I64, _F16, _BF, _F32, _F64],
    [_I64, _I64, _I64, _I64, _I64, _I64, _F16, _BF, _F32, _F64],
    [_F16, _F16, _F16, _F16, _F16, _F16, _F16, _F32, _F32, _F64],
    [_BF, _BF, _BF, _BF, _BF, _BF, _F32, _BF, _F32, _F64],
    [_F32, _F32, _F32, _F32, _F32, _F32, _F32, _F32, _F32, _F64],
    [_F64] * 10,
]


def test_promote_types_is_pytorchs_table():
    for i, a in enumerate(ORDER):
        for j, b in enumerate(ORDER):
            assert mlfuse.promote_types(a, b).name == TORCH_TABLE[i][j], (a, b)


def test_promote_types_against_torch():
    torch = pytest.importorskip("torch")
    for a in ORDER:
        for b in ORDER:
            ta, tb = getattr(torch, a), getattr(torch, b)
            assert mlfuse.promote_types(a, b).name == str(torch.promote_types(ta, tb))[6:]


def test_wide_unsigned_promotion_follows_tinygrad_and_numpy():
    # PyTorch refuses these pairs; the smallest signed type holding both, else the default float
    p = mlfuse.promote_types
    assert p("uint16", "int8") == dtypes.int32 and p("uint16", "int16") == dtypes.int32
    assert p("uint32", "int32") == dtypes.int64 and p("uint32", "int64") == dtypes.int64
    assert p("uint16", "int64") == dtypes.int64 and p("int8", "uint32") == dtypes.int64
    assert p("uint64", "int8") == dtypes.float32 and p("int64", "uint64") == dtypes.float32
    assert p("uint8", "uint32") == dtypes.uint32 and p("uint64", "uint16") == dtypes.uint64
    assert p("uint32", "float16") == F16 and p("bool", "uint64") == dtypes.uint64
    x = Tensor([4_000_000_000], dtype=dtypes.uint32) + Tensor([-1], dtype=dtypes.int32)
    assert x.dtype == dtypes.int64 and x.tolist() == [3_999_999_999]
    tg = pytest.importorskip("tinygrad")
    from tinygrad.dtype import least_upper_dtype

    names = ["bool", "uint8", "int8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]
    for a in names:
        for b in names:
            want = least_upper_dtype(getattr(tg.dtypes, a), getattr(tg.dtypes, b))
            want = "float32" if want.fmt is None else np.dtype(want.fmt).name  # the weak float
            assert p(a, b).name == ("bool" if want == "bool" else want), (a, b)


def test_tensor_ops_promote_and_scalars_are_weak():
    u8 = Tensor(np.array([200, 1], np.uint8))
    i8 = Tensor(np.array([-1, -128], np.int8))
    s = u8 + i8
    assert s.dtype == dtypes.int16 and s.numpy().tolist() == [199, -127]
    assert (Tensor([1], dtype=mlfuse.int64) + Tensor([1.5], dtype=F16)).dtype == F16
    assert (Tensor([1.0], dtype=F16) + Tensor([1.0], dtype=BF16)).dtype == dtypes.float32
    assert (Tensor([1], dtype=mlfuse.int32) + Tensor([1.0])).dtype == dtypes.float32  # numpy: f64
    assert (u8 + 5).dtype == dtypes.uint8 and (u8 * 2.5).dtype == dtypes.float32
    assert (Tensor([1.0], dtype=F16) * 2.5).dtype == F16
    assert (Tensor([True]) + 1).dtype == dtypes.int64
    r = dtypes.result_type
    assert r(u8, 5) == dtypes.uint8 and r(dtypes.int16, 2.5) == dtypes.float32
    assert r(u8, i8) == dtypes.int16 and r(True, 2) == dtypes.int64 and r(1.0) == dtypes.float32
    assert r(F16, True) == F16


# -- shifts --------------------------------------------------------------------------
def shift_ref(a, b, bits, unsigned, left):
    """PyTorch's shifts: an amount below 0 or not below the width shifts everything out."""
    out = []
    for x, s in zip(a.tolist(), b.tolist()):
        if s < 0 or s >= bits:
            v = 0 if left or unsigned or x >= 0 else -1
        else:
            v = x << s if left else x >> s
        v &= (1 << bits) - 1  # wrap to the width, then read as the dtype
        if not unsigned and v >= 1 << (bits - 1):
            v -= 1 << bits
        out.append(v)
    return np.array(out, dtype=a.dtype)


@pytest.mark.parametrize("dt", [*INTS, dtypes.int32, dtypes.int64], ids=lambda d: d.name)
def test_shifts_are_defined_for_every_amount(dt):
    bits = dt.itemsize * 8
    a = ints(dt, 40)
    amounts = np.resize(np.arange(-3, bits + 4), len(a))
    if dt.unsigned:
        amounts = np.abs(amounts)
    b = amounts.astype(dt.np)
    x, y = Tensor(a), Tensor(b)
    left, right = x << y, x >> y
    assert left.dtype == dt and right.dtype == dt
    np.testing.assert_array_equal(left.numpy(), shift_ref(a, b, bits, dt.unsigned, True))
    np.testing.assert_array_equal(right.numpy(), shift_ref(a, b, bits, dt.unsigned, False))
    np.testing.assert_array_equal(
        x.bitwise_left_shift(3).numpy(), shift_ref(a, np.full_like(a, 3), bits, dt.unsigned, True)
    )
    np.testing.assert_array_equal(
        x.bitwise_right_shift(2).numpy(),
        shift_ref(a, np.full_like(a, 2), bits, dt.unsigned, False),
    )


def test_shift_spellings_and_errors():
    x = Tensor([1, 2, -8], dtype=mlfuse.int32)
    assert (x << 2).numpy().tolist() == [4, 8, -32]
    assert (x >> 1).numpy().tolist() == [0, 1, -4]
    assert (1 << Tensor([0, 3], dtype=mlfuse.int8)).numpy().tolist() == [1, 8]
    assert (64 >> Tensor([1, 3])).numpy().tolist() == [32, 8]
    assert x.lshift(1).tolist() == [2, 4, -16] and x.rshift(2).tolist() == [0, 0, -2]  # tinygrad
    u = Tensor([1, 1 << 31], dtype=mlfuse.uint32)
    assert u.lshift(1).tolist() == [2, 0] and u.rshift(31).tolist() == [0, 1]
    with pytest.raises(TypeError, match="<< is not defined for float32 tensors"):
        Tensor([1.0]) << 1
    with pytest.raises(RuntimeError, match="<< is not defined for float32 tensors"):  # torch's
        Tensor([1], dtype=mlfuse.uint32) << Tensor([1.0])
    with pytest.raises(TypeError, match=">> is not defined for bool tensors"):
        Tensor([True]) >> Tensor([True])


# -- mlfuse-opt ----------------------------------------------------------------------
CPU_PIPELINE = (
    "lazy-canonicalize,push-views,mark-realize,group-reduces,outline-kernels,plan-memory,"
    "legalize-float-types,expand-math,merge-sums,cpu-optimize-plan,convert-kernel-to-loops,"
    "expand-large-sincos,convert-parallel-to-cpu,convert-scf-to-cf,convert-loops-to-llvm,cpu-entry-points"
)


def opt(text: str, *args: str) -> subprocess.CompletedProcess:
    code = "import sys; from mlfuse.tools.mlfuse_opt import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        input=textwrap.dedent(text),
        capture_output=True,
        text=True,
        timeout=120,
    )


PROGRAM = """
func.func @main(%a: tensor<4x8xT>, %b: tensor<4x8xT>) -> (tensor<4x1xT>, tensor<4x8xi1>) {
  %s = lazy.add %a, %b : tensor<4x8xT>
  %m = lazy.max %s, %b : tensor<4x8xT>
  %r = lazy.reduce max %m [1] : tensor<4x8xT> -> tensor<4x1xT>
  %c = lazy.cmplt %a, %b : tensor<4x8xT>
  func.return %r, %c : tensor<4x1xT>, tensor<4x8xi1>
}
"""


@pytest.mark.parametrize("t", ["f16", "bf16", "ui8", "i8", "i16"])
def test_mlfuse_opt_lowers_every_new_element_type_to_llvm(t):
    r = opt(PROGRAM.replace("T", t), "-p", CPU_PIPELINE, "-t", "llvm")
    assert r.returncode == 0, r.stderr
    assert 'define void @"k0"' in r.stdout and "bfloat" not in r.stdout
    if t == "ui8":
        assert "umax" in r.stdout or "xor" in r.stdout  # unsigned max, unsigned compare
        assert "icmp ult" in r.stdout
    if t == "f16":
        assert "half" in r.stdout and "fpext" in r.stdout


def test_mlfuse_opt_refuses_what_it_cannot_lower_with_a_diagnostic():
    r = opt(PROGRAM.replace("T", "i4"), "-p", CPU_PIPELINE)
    assert r.returncode == 1 and "internal error" not in r.stderr
    assert "lazy.add: lhs has element type i4; lazy tensors hold" in r.stderr
    r = opt(PROGRAM.replace("T", "f80"), "-p", "lazy-canonicalize")
    assert r.returncode == 1 and "element type f80" in r.stderr
    no_legalize = CPU_PIPELINE.replace("legalize-float-types,", "")
    r = opt(PROGRAM.replace("T", "bf16"), "-p", no_legalize)
    assert r.returncode == 1 and "internal error" not in r.stderr
    assert "on bf16 values" in r.stderr and "run legalize-float-types" in r.stderr
    r = opt(PROGRAM.replace("T", "ui8").replace("lazy.max", "lazy.pow"), "-p", CPU_PIPELINE)
    assert r.returncode == 1 and "lazy.pow needs float elements, got ui8" in r.stderr


def test_aliases_and_helpers_of_pytorch_and_tinygrad():
    from mlfuse import dtypes

    assert dtypes.half is mlfuse.float16 and dtypes.float is mlfuse.float32
    assert dtypes.double is mlfuse.float64 and dtypes.long is mlfuse.int64
    assert dtypes.int is mlfuse.int32 and dtypes.short is mlfuse.int16
    assert dtypes.char is mlfuse.int8 and dtypes.uchar is mlfuse.uint8
    assert dtypes.bool is mlfuse.bool_ and dtypes.byte is mlfuse.uint8
    from mlfuse.dtypes import half  # a module attribute, importable

    assert half is mlfuse.float16
    assert dtypes.is_float(dtypes.half) and not dtypes.is_float("int32")
    assert dtypes.is_int(dtypes.uint8) and not dtypes.is_int(dtypes.bool)
    assert dtypes.is_unsigned(dtypes.uchar) and dtypes.is_bool(dtypes.bool)
    assert (dtypes.min(dtypes.int8), dtypes.max(dtypes.int8)) == (-128, 127)
    assert dtypes.max("uint8") == 255 and dtypes.min(dtypes.float32) == -np.inf
    assert dtypes.floats[-1] is mlfuse.float64 and mlfuse.int64 in dtypes.ints
    # the builtins keep their meaning inside the module
    assert dtypes.result_type(3, 2.5) is mlfuse.float32
    wide = (mlfuse.uint16, mlfuse.uint32, mlfuse.uint64)
    assert (dtypes.ushort, dtypes.uint, dtypes.ulong) == wide
    assert dtypes.max(dtypes.uint64) == 2**64 - 1 and dtypes.is_unsigned("uint32")
    with pytest.raises(AttributeError, match="no attribute 'uint128'"):
        dtypes.uint128  # noqa: B018


def test_maximum_and_minimum_of_bools_are_or_and_and():
    # lazy.max/min take numbers only: the front end must not emit them for i1
    a = Tensor([1, 2, 3, 4], dtype=mlfuse.int8) < Tensor([0, 3, 5, 1], dtype=mlfuse.int8)
    b = Tensor([True, True, False, False])
    assert a.maximum(b).tolist() == [True, True, True, False]
    assert a.minimum(b).tolist() == [False, True, False, False]
    assert a.minimum(a).min(0).item() is False and mlfuse.maximum(a, a).dtype == dtypes.bool_
    assert "lazy.min" not in mlfuse.lazy_ir(a.minimum(b))
    assert "lazy.or" in mlfuse.lazy_ir(a.maximum(b))


def test_any_all_of_uint8_and_square_of_bool_follow_pytorch():
    u = mlfuse.tensor([[0, 3], [0, 0]], dtype=mlfuse.uint8)
    assert u.any().dtype == mlfuse.uint8 and u.any().item() == 1
    assert u.all(1).dtype == mlfuse.uint8 and u.all(1).tolist() == [0, 0]
    assert (u > 0).any(1).dtype == mlfuse.bool_
    b = mlfuse.tensor([True, False])
    assert b.square().dtype == mlfuse.int64 and b.square().tolist() == [1, 0]


@pytest.mark.parametrize("op", ["atan2", "copysign", "hypot", "xlogy", "logaddexp", "logaddexp2"])
@pytest.mark.parametrize("half", [mlfuse.float16, mlfuse.bfloat16])
def test_float_binary_ops_promote_before_going_to_float(op, half):
    # int with a 16-bit float is that float (PyTorch's), not float32
    i = mlfuse.tensor([1, 2, 3], dtype=mlfuse.int32)
    h = mlfuse.tensor([2.0, 1.0, 3.0], dtype=half)
    assert getattr(i, op)(h).dtype == half
    assert getattr(h, op)(i).dtype == half
    assert getattr(i, op)(i).dtype == mlfuse.float32
