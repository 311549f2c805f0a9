"""Writes through views, in-place operators, numpy/DLPack interop, and the
answers that once came back silently wrong (each pinned here)."""

from __future__ import annotations

import numpy as np
import pytest

import mlfuse
from mlfuse import Tensor

A = np.arange(20, dtype=np.float32).reshape(4, 5)


def realized(a=A, device=None) -> Tensor:
    t = Tensor(a, device=device).realize()
    assert t.node.realized
    return t


# ---------------------------------------------------------------------------
# answers that were silently wrong
# ---------------------------------------------------------------------------


def test_np_asarray_gives_the_values():
    t = Tensor(A) * 2
    for arr in (np.asarray(t), np.array(t)):
        assert arr.dtype == np.float32 and arr.shape == (4, 5)
        np.testing.assert_array_equal(arr, A * 2)
    np.testing.assert_array_equal(np.asarray(t, dtype=np.float64), (A * 2).astype(np.float64))


def test_assign_to_a_row_writes_the_tensor():
    x = realized()
    x[0].assign(Tensor(np.full(5, 7, np.float32)))
    ref = A.copy()
    ref[0] = 7
    np.testing.assert_array_equal(x.numpy(), ref)


@pytest.mark.parametrize("dt", [np.int32, np.int64])
def test_integer_min_at_the_type_minimum(dt):
    lo = np.iinfo(dt).min
    t = Tensor(np.array([lo, 5], dt))
    assert t.min().item() == lo
    np.testing.assert_array_equal(
        Tensor(np.array([[lo, 5], [3, np.iinfo(dt).max]], dt)).min(1).numpy(), [lo, 3]
    )


def test_integer_sums_accumulate_in_int64():
    t = Tensor(np.array([2**30, 2**30], np.int32))
    s = t.sum()
    assert s.dtype == mlfuse.int64 and s.item() == 2**31
    b = Tensor(np.ones(300, bool))
    assert b.sum().dtype == mlfuse.int64 and b.sum().item() == 300
    p = Tensor(np.array([2**20, 2**20], np.int32)).prod()
    assert p.dtype == mlfuse.int64 and p.item() == 2**40


def test_integer_powers_stay_integers():
    t = Tensor([3]) ** 20
    assert t.dtype == mlfuse.int64
    assert t.tolist() == [3**20]
    r = 2 ** Tensor([3, 4, 10])
    assert r.dtype == mlfuse.int64 and r.tolist() == [8, 16, 1024]
    assert (Tensor([2.0]) ** 3).dtype == mlfuse.float32
    assert (Tensor([2]) ** 0.5).dtype == mlfuse.float32


def test_adding_zero_keeps_ieee_signed_zeros():
    neg0 = np.array([-0.0, 0.0], np.float32)
    for fn in (
        lambda x: x + 0.0,
        lambda x: 0.0 + x,
        lambda x: x - 0.0,
        lambda x: x - (-0.0),
        lambda x: x + (-0.0),
        lambda x: x * 1.0,
    ):
        got = fn(Tensor(neg0)).numpy()
        want = fn(neg0)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def test_python_int_data_is_int64_and_overflow_is_refused():
    assert Tensor([1, 2]).dtype == mlfuse.int64
    with pytest.raises(OverflowError, match=r"do not fit in int32"):
        Tensor([2**40], dtype="int32")
    with pytest.raises(OverflowError, match=r"do not fit in int64"):
        Tensor([2**70])


# ---------------------------------------------------------------------------
# writes through views
# ---------------------------------------------------------------------------


def test_assign_through_slices_strides_and_transposes():
    x = realized()
    x[1:3, ::2].assign(-1.0)
    ref = A.copy()
    ref[1:3, ::2] = -1
    np.testing.assert_array_equal(x.numpy(), ref)
    x = realized()
    x.T[::-1][1].assign(100.0)  # column 3
    ref = A.copy()
    ref[:, 3] = 100
    np.testing.assert_array_equal(x.numpy(), ref)


def test_view_write_sees_and_keeps_program_order():
    """Values computed from x before the write keep the old x; the view itself
    and x show the new values."""
    x = realized()
    before = x * 1
    row = x[2]
    row += 5
    np.testing.assert_array_equal(before.numpy(), A)
    np.testing.assert_array_equal(row.numpy(), A[2] + 5)
    np.testing.assert_array_equal(x.numpy()[2], A[2] + 5)


def test_row_write_is_one_kernel_in_place():
    x = realized()
    buf = x.node.buffer
    x[2].assign(x[2] * 3)
    assert len(mlfuse.schedule(x)) == 1
    x.realize()
    assert x.node.buffer is buf
    np.testing.assert_array_equal(x.numpy()[2], A[2] * 3)


def test_assign_through_a_view_of_a_lazy_tensor():
    x = Tensor(A) + 1
    x[0, 0].assign(99.0)
    ref = A + 1
    ref[0, 0] = 99
    np.testing.assert_array_equal(x.numpy(), ref)


def test_nested_views_write_the_root():
    x = realized()
    y = x.reshape(2, 10)
    y[1][::3].assign(0.0)
    ref = A.copy().reshape(2, 10)
    ref[1][::3] = 0
    np.testing.assert_array_equal(x.numpy(), ref.reshape(4, 5))


def test_assign_to_an_expanded_view_is_refused_at_the_call():
    x = realized()
    with pytest.raises(ValueError, match=r"cannot assign to an expanded view"):
        x[:1].expand(3, 5).assign(1.0)


def test_results_that_are_new_tensors_do_not_write_back():
    """flip and pad make new tensors (as in PyTorch); writing them leaves x alone."""
    x = realized()
    f = x.flip(0)
    f.assign(0.0)
    np.testing.assert_array_equal(x.numpy(), A)
    z = Tensor.zeros(3)
    z[1].assign(2.0)
    np.testing.assert_array_equal(z.numpy(), [0, 2, 0])


# ---------------------------------------------------------------------------
# in-place operators
# ---------------------------------------------------------------------------


def test_inplace_operators_write_the_buffer():
    x = realized()
    buf = x.node.buffer
    x += 1
    x *= 2
    x -= Tensor(np.ones(5, np.float32))
    x /= 4
    np.testing.assert_allclose(x.numpy(), ((A + 1) * 2 - 1) / 4)
    x = realized()
    buf = x.node.buffer
    for _ in range(3):  # a training-loop update: each step realized in place
        x -= x * 0.5
        x.realize()
        assert x.node.buffer is buf
    np.testing.assert_allclose(x.numpy(), A / 8)


def test_inplace_methods():
    x = realized()
    x.add_(1).mul_(3).sub_(Tensor(A), alpha=2).clamp_(0, 10)
    np.testing.assert_allclose(x.numpy(), np.clip((A + 1) * 3 - 2 * A, 0, 10))
    x.zero_()
    assert not x.numpy().any()
    x.fill_(2.5).copy_(np.arange(5))
    np.testing.assert_array_equal(x.numpy(), np.broadcast_to(np.arange(5.0), (4, 5)))


def test_inplace_integer_ops_and_refused_promotion():
    x = Tensor(np.arange(6, dtype=np.int32)).realize()
    x += 2
    x //= 2
    assert x.dtype == mlfuse.int32
    np.testing.assert_array_equal(x.numpy(), (np.arange(6) + 2) // 2)
    with pytest.raises(
        TypeError, match=r"result type float32 can't be cast to the tensor's dtype int32"
    ):
        x += 0.5
    with pytest.raises(ValueError, match=r"does not match the tensor's \(6,\)"):
        x += Tensor(np.zeros((2, 6), np.int32))


# ---------------------------------------------------------------------------
# numpy and DLPack interop
# ---------------------------------------------------------------------------


def test_asarray_without_copy_aliases_the_buffer():
    x = realized(device="cpu")
    a = np.asarray(x, copy=False)
    b = np.asarray(x, copy=False)
    assert a.ctypes.data == b.ctypes.data
    np.testing.assert_array_equal(a, A)


def test_dlpack_export_is_zero_copy():
    x = realized(device="cpu")
    a = np.from_dlpack(x)
    np.testing.assert_array_equal(a, A)
    assert x.__dlpack_device__() == (1, 0)
    assert a.ctypes.data == np.from_dlpack(x).ctypes.data
    np.testing.assert_array_equal(np.from_dlpack(x.T), A.T)  # a strided view exports as is
    np.testing.assert_array_equal(np.from_dlpack(x * 2), A * 2)  # lazy: realized first


def test_dlpack_import_shares_memory():
    src = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = Tensor.from_dlpack(src, device="cpu")
    src[0, 0] = 100
    assert t.numpy()[0, 0] == 100
    np.testing.assert_array_equal((t * 2).numpy(), src * 2)
    strided = Tensor.from_dlpack(src[:, ::2])  # not contiguous: copied
    np.testing.assert_array_equal(strided.numpy(), src[:, ::2])
    with pytest.raises(TypeError, match="from_dlpack: cannot import"):
        Tensor.from_dlpack([1, 2, 3])


def test_dlpack_round_trip_with_torch():
    torch = pytest.importorskip("torch")
    t = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    x = Tensor.from_dlpack(t, device="cpu")
    t[0, 0] = 42
    assert x.numpy()[0, 0] == 42
    back = torch.from_dlpack(x * 2)
    assert back.tolist() == [[84.0, 2.0, 4.0], [6.0, 8.0, 10.0]]
