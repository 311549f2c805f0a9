"""Scans (cumsum, cumprod, cummax, cummin, logcumsumexp) against numpy in float64."""

from __future__ import annotations

import numpy as np
import pytest

import mlfuse
from mlfuse import Tensor

RNG = np.random.default_rng(5)
F64 = np.float64


@pytest.mark.parametrize(
    "shape,axis", [((7,), 0), ((4, 33), 1), ((4, 33), 0), ((3, 5, 70), -1), ((2, 1025), 1)]
)
def test_scans_match_numpy(shape, axis):
    x = RNG.uniform(0.9, 1.1, shape).astype(np.float32)
    t = Tensor(x)
    np.testing.assert_allclose(t.cumsum(axis).numpy(), np.cumsum(x.astype(F64), axis), rtol=2e-6)
    np.testing.assert_allclose(t.cumprod(axis).numpy(), np.cumprod(x.astype(F64), axis), rtol=2e-5)
    np.testing.assert_array_equal(t.cummax(axis).numpy(), np.maximum.accumulate(x, axis))
    np.testing.assert_array_equal(t.cummin(axis).numpy(), np.minimum.accumulate(x, axis))


def test_scans_of_views_and_expressions():
    x = RNG.standard_normal((6, 40)).astype(np.float32)
    t = Tensor(x)
    np.testing.assert_allclose(
        (t.T[::-1] * 2).cumsum(dim=0).numpy(),
        np.cumsum(x.T[::-1].astype(F64) * 2, 0),
        rtol=1e-5,
        atol=1e-5,
    )


def test_integer_scans_accumulate_in_int64():
    x = np.array([[2**30, 2**30, 5], [-1, 2, -3]], np.int32)
    s = Tensor(x).cumsum(1)
    assert s.dtype == mlfuse.int64
    np.testing.assert_array_equal(s.numpy(), np.cumsum(x, 1, dtype=np.int64))
    b = Tensor(np.array([True, False, True]))
    assert b.cumsum(0).tolist() == [1, 1, 2]
    np.testing.assert_array_equal(Tensor(x).cummax(1).numpy(), np.maximum.accumulate(x, 1))


def test_long_scan():
    x = RNG.uniform(0, 1, 1_000_000).astype(np.float32)
    got = Tensor(x).cumsum(0).numpy()
    want = np.cumsum(x.astype(F64))
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_logcumsumexp_is_stable():
    x = (RNG.standard_normal((3, 100)) * 40).astype(np.float32)
    x[0, :4] = -np.inf
    np.testing.assert_allclose(
        Tensor(x).logcumsumexp(1).numpy(), np.logaddexp.accumulate(x.astype(F64), 1), rtol=1e-5
    )


def test_scan_edges_and_errors():
    assert Tensor(np.zeros((0, 3), np.float32)).cumsum(0).shape == (0, 3)
    assert Tensor(np.array(3.0, np.float32)).cumsum(0).item() == 3.0
    x = Tensor(np.array([1.0, np.nan, 2.0], np.float32))
    np.testing.assert_array_equal(x.cummax(0).numpy(), [1.0, np.nan, np.nan])
    with pytest.raises(ValueError, match="out of range"):
        Tensor(np.zeros((2, 3), np.float32)).cumsum(2)


def test_short_scan_fuses_with_its_neighbours():
    x = Tensor(RNG.standard_normal((4, 16)).astype(np.float32)).realize()
    assert len(mlfuse.schedule((x * 2).cumsum(1) + 1)) == 1
