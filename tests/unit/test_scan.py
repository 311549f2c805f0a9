"""Scans (cumsum, cumprod, cummax, cummin, logcumsumexp) against numpy in float64."""

from __future__ import annotations

import numpy as np
import pytest

import mlfuse
from mlfuse import Tensor

RNG = np.random.default_rng(5)
F64 = np.float64
ON_SIM = mlfuse.get_default_device() == "cuda_sim"
"""cuda_sim interprets a scan's serial loop step by step: 1-D scans stay short there."""


@pytest.mark.parametrize(
    "shape,axis", [((7,), 0), ((4, 33), 1), ((4, 33), 0), ((3, 5, 70), -1), ((2, 1025), 1)]
)
def test_scans_match_numpy(shape, axis):
    x = RNG.uniform(0.9, 1.1, shape).astype(np.float32)
    t = Tensor(x)
    np.testing.assert_allclose(t.cumsum(axis).numpy(), np.cumsum(x.astype(F64), axis), rtol=2e-6)
    np.testing.assert_allclose(t.cumprod(axis).numpy(), np.cumprod(x.astype(F64), axis), rtol=2e-5)
    np.testing.assert_array_equal(t.cummax(axis).values.numpy(), np.maximum.accumulate(x, axis))
    np.testing.assert_array_equal(t.cummin(axis).values.numpy(), np.minimum.accumulate(x, axis))


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
    np.testing.assert_array_equal(Tensor(x).cummax(1).values.numpy(), np.maximum.accumulate(x, 1))


def test_long_scan():
    x = RNG.uniform(0, 1, 20_000 if ON_SIM else 1_000_000).astype(np.float32)
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
    np.testing.assert_array_equal(x.cummax(0).values.numpy(), [1.0, np.nan, np.nan])
    with pytest.raises(ValueError, match="out of range"):
        Tensor(np.zeros((2, 3), np.float32)).cumsum(2)


def test_short_scan_fuses_with_its_neighbours():
    x = Tensor(RNG.standard_normal((4, 16)).astype(np.float32)).realize()
    assert len(mlfuse.schedule((x * 2).cumsum(1) + 1)) == 1


# -- the scan primitive: one serial pass along the axis, fused with its neighbours --


def _np_scan(kind, x, axis):
    f = {"cumsum": np.cumsum, "cumprod": np.cumprod}
    if kind in f:
        return f[kind](x.astype(F64), axis)
    return (np.maximum if kind == "cummax" else np.minimum).accumulate(x, axis)


@pytest.mark.parametrize("kind", ["cumsum", "cumprod", "cummax", "cummin"])
@pytest.mark.parametrize("shape", [(5,), (3, 17), (2, 3, 40), (40, 3, 2)])
def test_every_axis_including_negative(kind, shape):
    x = RNG.uniform(0.5, 1.5, shape).astype(np.float32)

    def values(r):  # cummax/cummin give (values, indices)
        return (r.values if isinstance(r, tuple) else r).numpy()

    for axis in range(-len(shape), len(shape)):
        got = values(getattr(Tensor(x), kind)(axis))
        np.testing.assert_allclose(got, _np_scan(kind, x, axis), rtol=2e-6, err_msg=f"{axis}")
        got = values(getattr(Tensor(x), kind)(dim=axis))  # PyTorch's spelling
        np.testing.assert_allclose(got, _np_scan(kind, x, axis), rtol=2e-6)


def _running_indices(x, axis, better):
    """Where each running extremum was found: the latest position that reached
    it (ties and NaN included), as PyTorch's cummax/cummin."""
    x = np.moveaxis(x, axis, -1)
    out = np.zeros(x.shape, np.int64)
    for idx in np.ndindex(x.shape[:-1]):
        best, at = None, 0
        for i, v in enumerate(x[idx]):
            if best is None or np.isnan(v) or (not np.isnan(best) and not better(best, v)):
                best, at = v, i
            out[idx + (i,)] = at
    return np.moveaxis(out, -1, axis)


@pytest.mark.parametrize("kind", ["cummax", "cummin"])
def test_running_extrema_return_values_and_indices(kind):
    x = RNG.integers(0, 4, (3, 9)).astype(np.float32)  # many ties
    x[1, 4] = np.nan
    x[2, 2] = x[2, 6] = np.nan
    better = (lambda b, v: b > v) if kind == "cummax" else (lambda b, v: b < v)
    for axis in (0, 1, -1):
        r = getattr(Tensor(x), kind)(axis)
        values, indices = r  # a named tuple, as PyTorch's
        assert indices.dtype == mlfuse.int64 and r.indices is indices
        np.testing.assert_array_equal(values.numpy(), _np_scan(kind, x, axis))
        np.testing.assert_array_equal(indices.numpy(), _running_indices(x, axis, better))
    r = Tensor(np.float32(2.5)).cummax(0)  # 0-d
    assert r.values.item() == 2.5 and r.indices.item() == 0


def test_non_contiguous_inputs():
    x = RNG.standard_normal((12, 10, 6)).astype(np.float32)
    t = Tensor(x)
    views = {
        "transposed": (t.permute(2, 0, 1), x.transpose(2, 0, 1)),
        "sliced": (t[1:11:3, ::-1, 2:], x[1:11:3, ::-1, 2:]),
        "expanded": (t[:, :1, :].expand(12, 5, 6), np.broadcast_to(x[:, :1, :], (12, 5, 6))),
        "padded": (t.pad(((0, 0), (2, 1), (0, 0))), np.pad(x, ((0, 0), (2, 1), (0, 0)))),
    }
    for name, (tv, xv) in views.items():
        for axis in range(3):
            np.testing.assert_allclose(
                tv.cumsum(axis).numpy(),
                np.cumsum(xv.astype(F64), axis),
                rtol=1e-5,
                atol=1e-5,
                err_msg=f"{name} {axis}",
            )
            np.testing.assert_array_equal(
                tv.cummax(axis).values.numpy(), np.maximum.accumulate(xv, axis), err_msg=name
            )


def test_long_axes_a_million_elements():
    n = 20_000 if ON_SIM else 1_000_000
    x = RNG.uniform(-1, 1, n).astype(np.float32)
    np.testing.assert_allclose(
        Tensor(x).cumsum(0).numpy(), np.cumsum(x.astype(F64)), rtol=1e-6, atol=1e-6
    )
    y = RNG.uniform(0, 1, (1000, 1000)).astype(np.float32)
    for axis in (0, 1):
        np.testing.assert_allclose(
            Tensor(y).cumsum(axis).numpy(), np.cumsum(y.astype(F64), axis), rtol=1e-6
        )
        np.testing.assert_array_equal(
            Tensor(y).cummin(axis).values.numpy(), np.minimum.accumulate(y, axis)
        )


def test_dtypes():
    x = RNG.integers(-50, 50, (4, 9))
    for dt in (np.int8, np.int16, np.int32, np.int64):
        s = Tensor(x.astype(dt)).cumsum(1)
        assert s.dtype == mlfuse.int64
        np.testing.assert_array_equal(s.numpy(), np.cumsum(x.astype(dt), 1, dtype=np.int64))
        m = Tensor(x.astype(dt)).cummin(0).values
        assert m.dtype == mlfuse.dtypes.from_numpy(np.dtype(dt))
        np.testing.assert_array_equal(m.numpy(), np.minimum.accumulate(x.astype(dt), 0))
    u = RNG.integers(0, 256, (3, 20)).astype(np.uint8)  # unsigned order, not signed
    np.testing.assert_array_equal(Tensor(u).cummax(1).values.numpy(), np.maximum.accumulate(u, 1))
    np.testing.assert_array_equal(Tensor(u).cummin(1).values.numpy(), np.minimum.accumulate(u, 1))
    assert Tensor(u).cumsum(1).dtype == mlfuse.int64
    p = Tensor(np.array([[2, 3, -4, 5]], np.int32)).cumprod(1)
    assert p.dtype == mlfuse.int64 and p.tolist() == [[2, 6, -24, -120]]
    b = np.array([[True, False, True], [False, False, True]])
    assert Tensor(b).cumsum(1).tolist() == [[1, 1, 2], [0, 0, 1]]
    assert Tensor(b).cummax(1).values.tolist() == [[True, True, True], [False, False, True]]
    h = RNG.uniform(0, 1, (2, 50)).astype(np.float16)
    got = Tensor(h).cumsum(1)
    assert got.dtype == mlfuse.float16
    np.testing.assert_allclose(got.numpy(), np.cumsum(h.astype(F64), 1), rtol=2e-3)
    d = RNG.standard_normal((3, 7))
    np.testing.assert_allclose(Tensor(d).cumprod(0).numpy(), np.cumprod(d, 0), rtol=1e-12)
    assert Tensor(x.astype(np.int32)).cumsum(1, dtype=mlfuse.float32).dtype == mlfuse.float32


def test_nan_inf_and_edges():
    x = np.array([[1.0, np.nan, 2.0], [np.inf, -np.inf, 0.0]], np.float32)
    np.testing.assert_array_equal(Tensor(x).cummin(1).values.numpy(), np.minimum.accumulate(x, 1))
    with np.errstate(invalid="ignore"):  # inf + -inf
        want = np.cumsum(x, 1)
    np.testing.assert_array_equal(Tensor(x).cumsum(1).numpy(), want)
    s = Tensor(np.array(2.5, np.float32))
    assert s.cumprod(0).shape == () and s.cumprod(-1).item() == 2.5
    assert Tensor(np.zeros((3, 0), np.float32)).cumsum(1).shape == (3, 0)
    assert Tensor(np.zeros((0, 4), np.int32)).cummax(1).values.shape == (0, 4)
    one = Tensor(np.array([[7.0], [8.0]], np.float32)).cumsum(1)
    assert one.tolist() == [[7.0], [8.0]]


def test_result_is_a_tensor_of_its_own():
    x = Tensor(np.array([1.0, 2.0, 3.0], np.float32)).realize()
    y = Tensor(np.array([[5.0]], np.float32)).realize()
    c = x.cumsum(0)
    c += 1
    z = y.cumsum(1)
    z += 1
    assert x.tolist() == [1.0, 2.0, 3.0] and c.tolist() == [2.0, 4.0, 7.0]
    assert y.tolist() == [[5.0]] and z.tolist() == [[6.0]]


def test_kernel_counts():
    x = Tensor(RNG.standard_normal((64, 128)).astype(np.float32)).realize()
    assert len(mlfuse.schedule((x * 2).cumsum(1) + 1)) == 1
    assert len(mlfuse.schedule((x.exp() * 2).cumsum(0).sqrt())) == 1
    assert len(mlfuse.schedule(x.cumsum(1).sum(1))) == 1  # the sum's loop carries the scan
    assert len(mlfuse.schedule(x.cumsum(1) / x.sum(1, keepdim=True))) == 1
    assert len(mlfuse.schedule(x.softmax(1).cumsum(1))) == 1
    assert len(mlfuse.schedule(x.cummax(1).values - x)) == 1
    assert len(mlfuse.schedule(x.cumsum(1).T + 1)) == 1
    assert len(mlfuse.schedule(x.cumsum(1).reshape(-1) * 2)) == 1
    # a scan along each dim: the first is stored, the second reads it
    assert len(mlfuse.schedule(x.cumsum(1).cumsum(0))) == 2
    # reading a scan backwards (a flip along its dim) reads the stored scan
    assert len(mlfuse.schedule(x.cumsum(1).flip(1).exp())) == 2
    sched = str(mlfuse.schedule(x.cumsum(1).flip(1).exp()))
    assert "view of scan" in sched


def test_fused_results_match_numpy():
    # its own generator: the data must not depend on which tests ran before in the process
    x = np.random.default_rng(11).standard_normal((16, 48)).astype(np.float32)
    t, x64 = Tensor(x), x.astype(F64)
    a64 = np.abs(x64).sum(1, keepdims=True)  # (a row's plain sum can be near 0: ill-conditioned)
    cases = [
        ((t * 2).cumsum(1) + 1, np.cumsum(x64 * 2, 1) + 1),
        (t.cumsum(1).sum(1), np.cumsum(x64, 1).sum(1)),
        (t.cumsum(1) / t.abs().sum(1, keepdim=True), np.cumsum(x64, 1) / a64),
        (t.cumsum(1).cumsum(0), np.cumsum(np.cumsum(x64, 1), 0)),
        (t.cumsum(0).flip(0) * 3, np.flip(np.cumsum(x64, 0), 0) * 3),
        (
            t.cummax(0).values + t.cummin(1).values,
            np.maximum.accumulate(x64, 0) + np.minimum.accumulate(x64, 1),
        ),
    ]
    for got, want in cases:
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-4)


def test_errors_name_the_argument():
    x = Tensor(np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match="dim -3 is out of range for a tensor of 2 dims"):
        x.cumsum(-3)
    with pytest.raises(ValueError, match="dim 2 is out of range"):
        x.cummax(dim=2)
    with pytest.raises(TypeError, match="dim must be an int, got float"):
        x.cumprod(1.0)
    with pytest.raises(TypeError, match="got both dim and axis"):
        x.cumsum(0, dim=1)
    with pytest.raises(ValueError, match="dim 1 is out of range for a tensor of 0 dims"):
        Tensor(np.float32(1)).cummin(1)


def test_scan_over_a_dim_its_input_view_splits():
    """A broadcast copy reshaped into the scanned dim: the input is stored
    contiguous first (two kernels), never an error."""
    a = RNG.standard_normal((4, 3)).astype(np.float32)
    b = np.broadcast_to(a, (2, 4, 3)).reshape(8, 3)
    t = Tensor(a).expand(2, 4, 3).reshape(8, 3)
    np.testing.assert_allclose(t.cumsum(0).numpy(), np.cumsum(b.astype(F64), 0), rtol=1e-6)
    np.testing.assert_array_equal(t.cummax(0).values.numpy(), np.maximum.accumulate(b, 0))
    assert len(mlfuse.schedule(t.exp().cumsum(0))) == 2
