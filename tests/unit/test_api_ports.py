"""Names and spellings that PyTorch and tinygrad code uses, against numpy:
methods that are functions elsewhere (x.full_like(2), x.interpolate(...)),
keyword arguments (sum(dtype=), isinf(detect_positive=), nonzero(size=)),
tinygrad's initializers, meshgrid, grouped-query attention, scatter's
multiply and negative amounts in the padding modes."""

from __future__ import annotations

import math

import numpy as np
import pytest

import mlfuse
import mlfuse.nn.functional as F
from mlfuse import Tensor, dtypes

RNG = np.random.default_rng(11)


def r(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def test_like_constructors_are_methods_too():
    x = Tensor(r(2, 3))
    np.testing.assert_array_equal(x.full_like(2).numpy(), np.full((2, 3), 2, np.float32))
    np.testing.assert_array_equal(Tensor.full_like(x, 3).numpy(), np.full((2, 3), 3))
    assert x.zeros_like().shape == (2, 3) and x.ones_like(dtype="int32").dtype == dtypes.int32
    assert x.randn_like().shape == x.rand_like().shape == (2, 3)


def test_reductions_take_a_dtype():
    x = Tensor(np.array([[1, 2], [3, 4]], np.int32))
    s = x.sum(1, dtype=mlfuse.float64)
    assert s.dtype == dtypes.float64
    np.testing.assert_array_equal(s.numpy(), [3.0, 7.0])
    assert x.prod(dtype="float32").item() == 24.0


def test_spellings_of_shapes_and_sequences():
    a, b = Tensor(r(2, 3)), Tensor(r(2, 3))
    np.testing.assert_array_equal(
        Tensor.stack([a, b], dim=1).numpy(), np.stack([a.numpy(), b.numpy()], 1)
    )
    np.testing.assert_array_equal(
        Tensor.cat((a, b)).numpy(), np.concatenate([a.numpy(), b.numpy()])
    )
    x = Tensor(r(4, 3, 6))
    assert x.reshape(None, None, 2, 3).shape == (4, 3, 2, 3)  # None keeps the dim
    assert x.reshape((None, -1)).shape == (4, 18)
    with pytest.raises(TypeError, match="must be ints"):
        x.reshape(None, None, None, None)
    np.testing.assert_array_equal(Tensor([5, -3, -7]).mod(3).numpy(), [2, 0, 2])


def test_isinf_picks_a_sign():
    x = Tensor(np.array([np.inf, -np.inf, 1.0, np.nan], np.float32))
    assert x.isinf().tolist() == [True, True, False, False]
    assert x.isinf(detect_negative=False).tolist() == [True, False, False, False]
    assert x.isinf(detect_positive=False).tolist() == [False, True, False, False]


def test_linspace_refuses_bool():
    with pytest.raises(ValueError, match="bool is not supported"):
        Tensor.linspace(0, 1, 3, dtype="bool")


def test_tinygrad_initializers():
    n = Tensor.normal(200, 300, mean=2.0, std=0.5, seed=0).numpy()
    assert abs(n.mean() - 2.0) < 0.01 and abs(n.std() - 0.5) < 0.01
    fan_in = 300
    ku = Tensor.kaiming_uniform(200, 300, a=0.0, seed=1).numpy()
    bound = math.sqrt(3) * math.sqrt(2) / math.sqrt(fan_in)
    assert ku.max() <= bound and ku.min() >= -bound and ku.max() > 0.95 * bound
    kn = Tensor.kaiming_normal(200, 300, a=0.0, seed=2).numpy()
    assert abs(kn.std() - math.sqrt(2 / fan_in)) < 0.002
    g = Tensor.glorot_uniform(200, 300, seed=3).numpy()
    assert abs(g).max() <= math.sqrt(6 / 500)
    s = Tensor.scaled_uniform(20, 30, seed=4).numpy()
    assert abs(s).max() <= 600**-0.5
    for make in (Tensor.normal, Tensor.kaiming_uniform, Tensor.glorot_uniform):
        with pytest.raises(ValueError, match="negative dimension"):
            make(-3, 2)


def test_interpolate_method_resizes_the_last_dims():
    x = Tensor(r(2, 3, 7, 5))
    for mode, fmode in (("linear", "bilinear"), ("nearest", "nearest")):
        got = x.interpolate((4, 9), mode=mode).numpy()
        want = F.interpolate(x, size=(4, 9), mode=fmode).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-6)
    # any leading dims: (6, 10) resized along its last dim
    y = Tensor(np.arange(60, dtype=np.float32).reshape(6, 10))
    got = y.interpolate((5,), align_corners=True).numpy()
    np.testing.assert_allclose(
        got,
        np.arange(60, dtype=np.float32).reshape(6, 10)[:, ::2] + (np.arange(5) * 0.25),
        rtol=1e-6,
    )
    with pytest.raises(ValueError, match="must name 1 to 3"):
        y.interpolate((1, 2, 3))


def test_small_functions_as_methods():
    x = r(3, 4)
    e = np.exp(-x - (-x).max(1, keepdims=True))
    np.testing.assert_allclose(Tensor(x).softmin(1).numpy(), e / e.sum(1, keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(
        Tensor(x).normalize(dim=1).numpy(), x / np.linalg.norm(x, axis=1, keepdims=True), rtol=1e-5
    )
    np.testing.assert_allclose(
        Tensor(x).quick_gelu().numpy(), x / (1 + np.exp(-1.702 * x)), rtol=1e-5
    )


@pytest.mark.parametrize("indexing", ["ij", "xy"])
def test_meshgrid(indexing):
    a, b, c = np.arange(3.0), np.arange(4.0) * 10, np.arange(2.0) * 100
    got = mlfuse.meshgrid(Tensor(a), Tensor(b), Tensor(c), indexing=indexing)
    want = np.meshgrid(a, b, c, indexing=indexing)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.numpy(), w)
    got2 = Tensor(a).meshgrid(Tensor(b), indexing=indexing)
    for g, w in zip(got2, np.meshgrid(a, b, indexing=indexing)):
        np.testing.assert_array_equal(g.numpy(), w)
    with pytest.raises(ValueError, match="indexing must be"):
        Tensor(a).meshgrid(indexing="bad")


def test_attention_with_grouped_key_value_heads():
    q, k, v = r(2, 6, 5, 8), r(2, 3, 7, 8), r(2, 3, 7, 4)
    got = Tensor(q).scaled_dot_product_attention(Tensor(k), Tensor(v), enable_gqa=True)
    kk, vv = np.repeat(k, 2, axis=1), np.repeat(v, 2, axis=1)
    s = q @ kk.swapaxes(-1, -2) / math.sqrt(8)
    p = np.exp(s - s.max(-1, keepdims=True))
    np.testing.assert_allclose(
        got.numpy(), (p / p.sum(-1, keepdims=True)) @ vv, rtol=1e-4, atol=1e-5
    )
    with pytest.raises(ValueError, match="cannot be grouped"):
        F.scaled_dot_product_attention(
            Tensor(r(1, 5, 2, 4)), Tensor(r(1, 2, 2, 4)), Tensor(r(1, 2, 2, 4)), enable_gqa=True
        )


def test_scatter_multiply():
    x = np.full((3, 4), 2.0, np.float32)
    idx = np.array([[0, 1, 2, 0], [0, 2, 2, 1]])
    src = r(2, 4)
    want = x.copy()
    for i in range(2):
        for j in range(4):
            want[idx[i, j], j] *= src[i, j]
    got = Tensor(x).scatter(0, Tensor(idx), Tensor(src), reduce="multiply")
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
    with pytest.raises(ValueError, match="'add' or 'multiply'"):
        Tensor(x).scatter(0, Tensor(idx), 1.0, reduce="max")


def test_nonzero_and_masked_select_with_a_fixed_size():
    t = Tensor(np.arange(9))
    mask = Tensor(np.array([1, 0, 1, 0, 1, 0, 0, 0, 1], bool))
    assert t.masked_select(mask, size=4).tolist() == [0, 2, 4, 8]
    assert t.masked_select(mask, size=6, fill_value=-1).tolist() == [0, 2, 4, 8, -1, -1]
    assert t.masked_select(mask, size=2).tolist() == [0, 2]
    assert Tensor([1.0, 2.0]).masked_select(Tensor([True, False]), size=3).dtype == dtypes.float32
    assert Tensor([1, 0, 2, 0, 3]).nonzero(size=5, fill_value=-1).tolist() == [
        [0],
        [2],
        [4],
        [-1],
        [-1],
    ]
    assert Tensor([[1, 0], [0, 2]]).nonzero(size=1).tolist() == [[0, 0]]
    assert Tensor(5).nonzero(size=4).shape == (4, 0)
    with pytest.raises(ValueError, match="size must be a non-negative int"):
        t.nonzero(size=-1)


def _np_pad_mode(x, pads, mode):
    """PyTorch's rule per dim: reflect/replicate read output i at input
    i - before (negative amounts crop), circular crops first and wraps."""
    np_mode = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}[mode]
    for d, (b, e) in enumerate(pads):
        if mode == "circular":
            n = x.shape[d]
            x = np.take(x, range(-min(b, 0), n + min(e, 0)), axis=d)
            x = np.pad(
                x, [(0, 0)] * d + [(max(b, 0), max(e, 0))] + [(0, 0)] * (x.ndim - d - 1), np_mode
            )
        else:
            x = np.pad(
                x, [(0, 0)] * d + [(max(b, 0), max(e, 0))] + [(0, 0)] * (x.ndim - d - 1), np_mode
            )
            n = x.shape[d]
            x = np.take(x, range(-min(b, 0), n + min(e, 0)), axis=d)
    return x


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("flat", [(2, -1, -1, 2), (-1, 2, 2, -1), (1, -2, 0, -3), (0, 0, -2, 1)])
def test_padding_modes_crop_with_negative_amounts(mode, flat):
    x = r(2, 5, 6)
    pads = [(0, 0), (flat[2], flat[3]), (flat[0], flat[1])]
    got = Tensor(x).pad(flat, mode=mode).numpy()
    np.testing.assert_array_equal(got, _np_pad_mode(x, pads, mode))


def test_integer_images_interpolate_to_integers():
    x = RNG.integers(0, 256, (1, 2, 5, 7)).astype(np.uint8)
    want = F.interpolate(Tensor(x.astype(np.float32)), size=(8, 9), mode="bilinear").numpy()
    # int16: the float resize, rounded once and clamped
    got16 = F.interpolate(Tensor(x.astype(np.int16)), size=(8, 9), mode="bilinear")
    assert got16.dtype == dtypes.int16
    np.testing.assert_array_equal(got16.numpy(), np.round(want).astype(np.int16))
    # uint8: PyTorch's fixed-point passes (rounded between them): within 1 of that
    got = F.interpolate(Tensor(x), size=(8, 9), mode="bilinear")
    assert got.dtype == dtypes.uint8
    assert np.abs(got.numpy().astype(np.int32) - np.round(want)).max() <= 1
    near = F.interpolate(Tensor(x), size=(10, 14), mode="nearest")
    np.testing.assert_array_equal(near.numpy(), x.repeat(2, 2).repeat(2, 3))


def test_nn_optim_is_tinygrads_spelling_of_mlfuse_optim():
    from mlfuse import nn, optim

    assert nn.optim is optim and nn.optim.SGD is optim.SGD
    with pytest.raises(AttributeError, match="module 'mlfuse.nn' has no attribute 'optimm'"):
        nn.optimm  # noqa: B018


def test_full_takes_fill_value_by_keyword():
    # PyTorch's and tinygrad's keyword: Tensor.full((2, 2), fill_value=3)
    np.testing.assert_array_equal(Tensor.full((2, 2), fill_value=3.0).numpy(), np.full((2, 2), 3.0))
    x = Tensor.zeros(3, dtype=mlfuse.int32)
    np.testing.assert_array_equal(Tensor.full_like(x, fill_value=7).numpy(), [7, 7, 7])
    assert Tensor.full_like(x, fill_value=7).dtype == mlfuse.int32


def test_detach_shares_storage_as_pytorchs():
    t = Tensor.zeros(3, 3).contiguous().realize()
    t.detach()[1, 2] = 5  # a write through the detached tensor reaches t
    assert t[1, 2].item() == 5.0
    w = Tensor([1.0, 2.0], requires_grad=True)
    d = w.detach()
    snapshot = w.detach().clone()
    with mlfuse.no_grad():
        w.assign(w * 3)  # and an assign to w shows through d, not through a clone
    np.testing.assert_array_equal(d.numpy(), [3.0, 6.0])
    np.testing.assert_array_equal(snapshot.numpy(), [1.0, 2.0])
    assert not d.requires_grad and w.requires_grad


def test_numpy_scalars_keep_their_dtype():
    # as torch.tensor(np.float16(2)) is float16; as operands they stay weak scalars
    assert Tensor(np.float16(2.0)).dtype == mlfuse.float16 and Tensor(np.float16(2.0)).shape == ()
    assert (
        Tensor(np.int32(3)).dtype == mlfuse.int32
        and mlfuse.tensor(np.uint8(3)).dtype == mlfuse.uint8
    )
    assert (Tensor.ones(3) + np.float64(2.0)).dtype == mlfuse.float32
