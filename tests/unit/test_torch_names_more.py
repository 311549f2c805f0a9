"""PyTorch's remaining top-level and Tensor names, against numpy references."""

import math

import numpy as np
import pytest

import mlfuse
from mlfuse.errors import ArgumentError

RNG = np.random.default_rng(11)


def test_constants_and_aliases():
    assert (mlfuse.pi, mlfuse.e, mlfuse.inf) == (math.pi, math.e, math.inf)
    assert math.isnan(mlfuse.nan) and mlfuse.newaxis is None
    assert mlfuse.bool is mlfuse.bool_
    assert mlfuse.ones(2).to(mlfuse.bool).dtype == mlfuse.bool_
    assert mlfuse.GradScaler is mlfuse.amp.GradScaler
    assert issubclass(mlfuse.OutOfMemoryError, RuntimeError)
    assert mlfuse.float16.is_floating_point and not mlfuse.int8.is_floating_point


def test_as_strided_scatter_writes_the_strided_view():
    x = np.arange(12.0).reshape(3, 4)
    y = np.array([[100.0, 200.0], [300.0, 400.0]])
    got = mlfuse.as_strided_scatter(mlfuse.tensor(x), mlfuse.tensor(y), (2, 2), (1, 2), 1)
    want = x.reshape(-1).copy()
    for i in range(2):
        for j in range(2):
            want[1 + i * 1 + j * 2] = y[i, j]
    np.testing.assert_array_equal(got.numpy(), want.reshape(3, 4))
    assert mlfuse.tensor(x).as_strided_scatter(mlfuse.zeros(3), (3,), (4,)).numpy()[
        :, 0
    ].tolist() == [0, 0, 0]
    with pytest.raises(ArgumentError, match="src must have the view's shape"):
        mlfuse.as_strided_scatter(mlfuse.tensor(x), mlfuse.ones(3), (2, 2), (1, 2))


def test_histogramdd_matches_numpy():
    pts = RNG.random((60, 2))
    h, edges = mlfuse.histogramdd(mlfuse.tensor(pts), bins=[3, 4])
    wh, wedges = np.histogramdd(pts, [3, 4])
    np.testing.assert_allclose(h.numpy(), wh)
    for e, we in zip(edges, wedges):
        np.testing.assert_allclose(e.numpy(), we)
    h, _ = mlfuse.histogramdd(mlfuse.tensor(pts), bins=2, range=[0.0, 1.0, 0.0, 0.5], density=True)
    np.testing.assert_allclose(
        h.numpy(), np.histogramdd(pts, 2, range=[(0, 1), (0, 0.5)], density=True)[0]
    )


def test_native_norms_return_their_statistics():
    x = RNG.standard_normal((2, 6, 3, 3))
    out, mean, rstd = mlfuse.native_group_norm(mlfuse.tensor(x), None, None, 2, 6, 9, 3, 1e-5)
    g = x.reshape(2, 3, -1)
    np.testing.assert_allclose(mean.numpy(), g.mean(-1), atol=1e-14)
    np.testing.assert_allclose(rstd.numpy(), 1 / np.sqrt(g.var(-1) + 1e-5), rtol=1e-13)
    want = (g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(out.numpy(), want.reshape(x.shape), atol=1e-13)
    rm, rv = mlfuse.zeros(6, dtype=mlfuse.float64), mlfuse.ones(6, dtype=mlfuse.float64)
    out, bmean, invstd = mlfuse.native_batch_norm(mlfuse.tensor(x), None, None, rm, rv, True,
                                                  0.1, 1e-5)  # fmt: skip
    np.testing.assert_allclose(bmean.numpy(), x.mean((0, 2, 3)), atol=1e-14)
    np.testing.assert_allclose(rm.numpy(), 0.1 * x.mean((0, 2, 3)), atol=1e-14)
    np.testing.assert_allclose(invstd.numpy(), 1 / np.sqrt(x.var((0, 2, 3)) + 1e-5), rtol=1e-13)
    with pytest.raises(ArgumentError, match="is not"):
        mlfuse.native_group_norm(mlfuse.tensor(x), None, None, 2, 5, 9, 3, 1e-5)


def test_tensor_odds_and_ends():
    x = mlfuse.arange(6.0)
    assert x.new_empty_strided((2, 3), (3, 1)).shape == (2, 3)
    assert x.const_data_ptr() == x.data_ptr()
    y = mlfuse.zeros(6)
    y.set_(x)
    assert y.is_set_to(x) and not x.is_set_to(mlfuse.arange(6.0))

    class Marked(mlfuse.Tensor):
        pass

    m = x.as_subclass(Marked)
    assert type(m) is Marked and m.numpy().tolist() == x.numpy().tolist()
    with pytest.raises(TypeError, match="not a subclass of Tensor"):
        x.as_subclass(int)
    assert x.module_load(mlfuse.ones(6)).numpy().tolist() == [1.0] * 6
    assert not mlfuse.is_distributed(x)
    x.record_stream(None)


def test_repeat_interleave_with_counts():
    x = np.arange(6).reshape(2, 3)
    got = mlfuse.tensor(x).repeat_interleave(mlfuse.tensor([1, 0, 2]), dim=1)
    np.testing.assert_array_equal(got.numpy(), np.repeat(x, [1, 0, 2], axis=1))
    assert mlfuse.repeat_interleave(mlfuse.tensor([2, 0, 1])).tolist() == [0, 0, 2]
    np.testing.assert_array_equal(
        mlfuse.tensor(x).repeat_interleave(mlfuse.tensor([2]), dim=0).numpy(), np.repeat(x, 2, 0)
    )
    with pytest.raises(ArgumentError, match="same size as input"):
        mlfuse.tensor(x).repeat_interleave(mlfuse.tensor([1, 2]), dim=1)
    with pytest.raises(ArgumentError, match="can not be negative"):
        mlfuse.tensor(x).repeat_interleave([1, -1, 2], dim=1)
    assert mlfuse.nn.SiLU(inplace=True)(mlfuse.zeros(2)).tolist() == [0.0, 0.0]
