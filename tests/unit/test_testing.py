"""``mlfuse.testing``: assert_close's tolerances by dtype, its messages and the
structures it walks, and make_tensor's ranges, dtypes and layouts."""

from __future__ import annotations

import numpy as np
import pytest

import mlfuse
from mlfuse import Tensor
from mlfuse.testing import assert_allclose, assert_close, make_tensor


def test_close_values_pass_with_dtype_tolerances():
    assert_close(Tensor([1.0, 2.0]), Tensor([1.0, 2.0 + 1e-6]))  # float32: rtol 1.3e-6
    assert_close(Tensor([1.0], dtype=mlfuse.float16), Tensor([1.0005], dtype=mlfuse.float16))
    assert_close(np.array([1.0, np.nan]), np.array([1.0, np.nan]), equal_nan=True)
    assert_close(np.array([np.inf]), np.array([np.inf]))
    assert_close(1.0, 1.0 + 1e-9)
    assert_close({"w": Tensor([1.0]), "n": [1, 2]}, {"w": Tensor([1.0]), "n": [1, 2]})
    assert_close(Tensor([1.0]), Tensor([1.5]), rtol=0.0, atol=0.5)
    assert_allclose(Tensor([1.0]), Tensor([1.0], dtype=mlfuse.float64))  # no dtype check


@pytest.mark.parametrize(
    "actual, expected, message",
    [
        (
            Tensor([1.0, 2.0, 3.0]),
            Tensor([1.0, 2.5, 3.0]),
            "Tensor-likes are not close!\n\nMismatched elements: 1 / 3 (33.3%)\n"
            "Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)\n"
            "Greatest relative difference: 0.2 at index (1,) (up to 1.3e-06 allowed)",
        ),
        (Tensor([1, 2]), Tensor([1, 3]), "up to 0.0 allowed"),  # integers: exact
        (Tensor(1.0), Tensor(2.0), "Scalars are not close!"),
        (Tensor([1.0]), Tensor([1.0], dtype=mlfuse.float64), "attribute 'dtype' do not match"),
        (Tensor([1.0]), Tensor([1.0, 2.0]), "attribute 'shape' do not match: (1,) != (2,)"),
        ({"a": Tensor([1.0])}, {"a": Tensor([2.0])}, "not close, item ['a']"),
        ([Tensor([1.0]), 2.0], [Tensor([1.0]), 2.5], "Scalars are not close, item [1]"),
        ([1, 2], [1, 2, 3], "The length of the sequences mismatch: 2 != 3"),
        (np.array([np.nan]), np.array([np.nan]), "Greatest absolute difference: nan"),
    ],
)
def test_mismatches_say_where(actual, expected, message):
    with pytest.raises(AssertionError) as err:
        assert_close(actual, expected)
    assert message in str(err.value)


def test_assert_close_arguments():
    with pytest.raises(ValueError, match="both 'rtol' and 'atol' must be given"):
        assert_close(Tensor([1.0]), Tensor([1.0]), rtol=1e-3)
    with pytest.raises(AssertionError, match="custom"):
        assert_close(Tensor([1.0]), Tensor([2.0]), msg="custom")
    with pytest.raises(AssertionError, match="^prefix: Tensor-likes"):
        assert_close(Tensor([1.0]), Tensor([2.0]), msg=lambda m: "prefix: " + m)


def test_make_tensor():
    x = make_tensor(200, dtype=mlfuse.float32, low=-1, high=1)
    v = x.numpy()
    assert x.dtype == mlfuse.float32 and v.min() >= -1 and v.max() < 1 and v.std() > 0.3
    y = make_tensor((4, 50), dtype=mlfuse.int64, device="cpu", exclude_zero=True)
    assert y.shape == (4, 50) and (y.numpy() != 0).all()
    assert -9 <= y.numpy().min() and y.numpy().max() < 10
    u = make_tensor(100, dtype=mlfuse.uint8)
    assert 0 <= u.numpy().min() and u.numpy().max() < 10
    b = make_tensor(3, 3, dtype=mlfuse.bool_)
    assert b.dtype == mlfuse.bool_
    nc = make_tensor(3, 4, dtype=mlfuse.float64, noncontiguous=True, requires_grad=True)
    assert not nc.is_contiguous() and nc.requires_grad and nc.is_leaf
    cl = make_tensor(2, 3, 4, 5, dtype=mlfuse.float32, memory_format=mlfuse.channels_last)
    assert cl.stride() == (60, 1, 15, 3)
    with pytest.raises(ValueError, match="low \\(2\\) must not be above high \\(1\\)"):
        make_tensor(3, dtype=mlfuse.float32, low=2, high=1)
