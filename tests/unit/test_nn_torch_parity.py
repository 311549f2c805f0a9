"""``mlfuse.nn.functional`` where PyTorch's own OpInfo sample inputs found it
differing from PyTorch: unbatched convolutions, one-element sequences for pool
geometry, ``dtype=`` of the softmaxes, a 0-d PReLU slope, unbatched and 0-d
losses, the normalizations' shape checks, empty batch norms, and gradients
(max_unpool with repeated indices, pools with big windows), each against a
float64 numpy reference of PyTorch's semantics."""

from __future__ import annotations

import numpy as np
import pytest

import mlfuse
import mlfuse.nn.functional as F
from mlfuse import Tensor
from mlfuse.errors import ArgumentError

from gradcheck import numeric_grad as _weighted_numeric_grad
from pool_refs import pool_ref

RNG = np.random.default_rng(11)


def r(*shape) -> np.ndarray:
    return RNG.standard_normal(shape)


def numeric_grad(fn, arrays, k, eps=1e-6):
    """Central differences of ``sum(fn)`` with respect to ``arrays[k]``."""

    def only_k(a):
        return fn(*arrays[:k], a, *arrays[k + 1 :])

    return _weighted_numeric_grad(only_k, [arrays[k]], 1.0, eps)[0]


def close(t, ref, rtol=1e-9, atol=1e-9):
    got = t.numpy() if isinstance(t, Tensor) else np.asarray(t)
    ref = np.asarray(ref)
    assert got.shape == ref.shape, (got.shape, ref.shape)
    np.testing.assert_allclose(got, ref, rtol=rtol, atol=atol)


# ---------------------------------------------------------------------------
# numpy references
# ---------------------------------------------------------------------------


def conv_ref(x, w, b, stride, padding, dilation, groups):
    """PyTorch's convolution (cross-correlation) of x (N, C, *spatial)."""
    nd = x.ndim - 2
    xp = np.pad(x, ((0, 0), (0, 0)) + tuple((p, p) for p in padding))
    k = w.shape[2:]
    out_sz = [(xp.shape[2 + i] - dilation[i] * (k[i] - 1) - 1) // stride[i] + 1 for i in range(nd)]
    n, c = x.shape[:2]
    o = w.shape[0]
    cg, og = c // groups, o // groups
    out = np.zeros((n, o, *out_sz))
    for tap in np.ndindex(*k):
        sl = tuple(
            slice(t * d, t * d + (m - 1) * s + 1, s)
            for t, d, m, s in zip(tap, dilation, out_sz, stride)
        )
        win = xp[(slice(None), slice(None)) + sl]
        for g in range(groups):
            wt = w[(slice(g * og, (g + 1) * og), slice(None)) + tap]
            out[:, g * og : (g + 1) * og] += np.einsum(
                "nc...,oc->no...", win[:, g * cg : (g + 1) * cg], wt
            )
    if b is not None:
        out += b.reshape((1, o) + (1,) * nd)
    return out


def conv_t_ref(x, w, b, stride, padding, output_padding, groups, dilation):
    """PyTorch's transposed convolution of x (N, C, *spatial), weight (C, O / groups, *k)."""
    n, c = x.shape[:2]
    sp, k = x.shape[2:], w.shape[2:]
    og = w.shape[1]
    cg, o = c // groups, og * groups
    full = [
        (m - 1) * s + d * (kk - 1) + 1 + e
        for m, s, d, kk, e in zip(sp, stride, dilation, k, output_padding)
    ]
    buf = np.zeros((n, o, *full))
    for tap in np.ndindex(*k):
        sl = tuple(
            slice(t * d, t * d + (m - 1) * s + 1, s)
            for t, d, m, s in zip(tap, dilation, sp, stride)
        )
        for g in range(groups):
            wt = w[(slice(g * cg, (g + 1) * cg), slice(None)) + tap]
            part = np.einsum("nc...,co->no...", x[:, g * cg : (g + 1) * cg], wt)
            buf[(slice(None), slice(g * og, (g + 1) * og)) + sl] += part
    out = buf[(slice(None), slice(None)) + tuple(slice(p, f - p) for p, f in zip(padding, full))]
    if b is not None:
        out = out + b.reshape((1, o) + (1,) * len(sp))
    return out


def tup(v, n):
    """PyTorch's reading of a conv/pool geometry argument: an int, n ints, or one in a list."""
    if isinstance(v, int):
        return (v,) * n
    return tuple(v) * (n if len(v) == 1 else 1)


def softmax_ref(x, axis):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


# ---------------------------------------------------------------------------
# convolutions of unbatched inputs
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "nd, kw",
    [
        (1, dict(stride=[2], padding=2, groups=1)),
        (1, dict(stride=3, padding=1, groups=2, dilation=[2])),
        (2, dict(stride=[3, 2], padding=[2, 1], groups=2, dilation=[2, 1])),
        (2, dict(stride=[2], padding=[1], dilation=[2])),  # one element: every dim
        (3, dict(stride=[2, 1, 1], padding=1)),
    ],
)
def test_conv_of_an_unbatched_input(nd, kw):
    groups = kw.get("groups", 1)
    x, w, b = r(4, *(6,) * nd), r(2, 4 // groups, *(3,) * nd), r(2)
    full = {
        "stride": tup(kw.get("stride", 1), nd),
        "padding": tup(kw.get("padding", 0), nd),
        "dilation": tup(kw.get("dilation", 1), nd),
    }
    want = conv_ref(x[None], w, b, groups=groups, **full)[0]
    conv = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[nd]
    close(conv(Tensor(x), Tensor(w), Tensor(b), **kw), want)


def test_conv_unbatched_gradients_and_same_padding():
    x, w, b, g = r(2, 5), r(3, 2, 3), r(3), r(3, 5)
    xt, wt, bt = (Tensor(a, requires_grad=True) for a in (x, w, b))
    y = F.conv1d(xt, wt, bt, padding="same")
    close(y, conv_ref(x[None], w, b, (1,), (1,), (1,), 1)[0])
    (y * Tensor(g)).sum().backward()

    def ref(x_, w_, b_):
        return conv_ref(x_[None], w_, b_, (1,), (1,), (1,), 1)[0] * g

    close(xt.grad, numeric_grad(ref, [x, w, b], 0), atol=1e-7)
    close(wt.grad, numeric_grad(ref, [x, w, b], 1), atol=1e-7)
    close(bt.grad, g.sum(1), atol=1e-7)


@pytest.mark.parametrize(
    "nd, kw",
    [
        (1, dict(stride=[2], padding=2, output_padding=[1])),
        (2, dict(stride=[3, 2], padding=[1, 2], output_padding=[2, 1], groups=2, dilation=[2, 2])),
        (3, dict(stride=2, padding=1, output_padding=1, dilation=[1])),
    ],
)
def test_conv_transpose_of_an_unbatched_input(nd, kw):
    groups = kw.get("groups", 1)
    x, w, b = r(2, *(4,) * nd), r(2, 3, *(3,) * nd), r(3 * groups)
    geo = {
        k: tup(kw.get(k, dflt), nd)
        for k, dflt in (("stride", 1), ("padding", 0), ("output_padding", 0), ("dilation", 1))
    }
    want = conv_t_ref(x[None], w, b, groups=groups, **geo)[0]
    conv = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}[nd]
    close(conv(Tensor(x), Tensor(w), Tensor(b), **kw), want)


def test_conv_transpose_unbatched_gradient():
    x, w, g = r(2, 3), r(2, 1, 3), r(1, 6)
    xt = Tensor(x, requires_grad=True)
    y = F.conv_transpose1d(xt, Tensor(w), stride=2, padding=1, output_padding=1)
    (y * Tensor(g)).sum().backward()

    def ref(x_):
        return conv_t_ref(x_[None], w, None, (2,), (1,), (1,), 1, (1,))[0] * g

    close(xt.grad, numeric_grad(ref, [x], 0), atol=1e-7)


def test_integer_conv_with_a_float_bias_is_not_truncated():
    x, w = np.arange(8).reshape(1, 2, 4), np.array([[[1, -1], [2, 0]]])
    y = F.conv1d(Tensor(x), Tensor(w), Tensor(np.array([0.5])))
    assert y.dtype == mlfuse.float64
    close(
        y,
        conv_ref(x.astype(np.float64), w.astype(np.float64), np.array([0.5]), (1,), (0,), (1,), 1),
    )


def test_conv_errors():
    x, w = Tensor(r(1, 2, 5, 5)), Tensor(r(1, 2, 3, 3))
    with pytest.raises(ArgumentError, match=r"conv2d: input must be \(N, C, H, W\) or \(C, H, W\)"):
        F.conv2d(Tensor(r(5, 5)), w)
    with pytest.raises(ArgumentError, match=r"the unbatched input .* \(3, 5, 5\) has 3"):
        F.conv2d(Tensor(r(3, 5, 5)), w)
    with pytest.raises(ArgumentError, match=r"expects 2 input channels, the input \(3, 4\) has 3"):
        F.conv_transpose1d(Tensor(r(3, 4)), Tensor(r(2, 1, 3)))
    with pytest.raises(ArgumentError, match="conv2d: negative padding -1 is not supported"):
        F.conv2d(x, w, padding=-1)
    with pytest.raises(ArgumentError, match=r"conv2d: stride must be an int or 2 ints"):
        F.conv2d(x, w, stride=[1, 1, 1])


# ---------------------------------------------------------------------------
# pools: one-element sequences, an empty stride, empty non-batch dims
# ---------------------------------------------------------------------------


def test_avg_pool_one_element_sequences():
    x = r(2, 3, 7, 7)
    got = F.avg_pool2d(Tensor(x), [3, 3], [1, 1], [1], True, False, 2)
    close(got, pool_ref(x, (3, 3), (1, 1), (1, 1), (1, 1), True, "avg", False, 2))
    got = F.avg_pool2d(Tensor(x[0]), [2, 2], [], [0], False, True, -2)  # []: stride = kernel
    close(got, pool_ref(x[0], (2, 2), (2, 2), (0, 0), (1, 1), False, "avg", True, -2))
    got = F.avg_pool2d(Tensor(x), [4, 4], [2, 2], [2], True, True)
    close(got, pool_ref(x, (4, 4), (2, 2), (2, 2), (1, 1), True, "avg", True))
    got = F.avg_pool1d(Tensor(x[0, 0]), [3], [2], [1], count_include_pad=False)
    close(got, pool_ref(x[0, 0], (3,), (2,), (1,), (1,), False, "avg", False))


def test_max_and_lp_pool_one_element_sequences():
    x = r(1, 2, 6, 5)
    got = F.max_pool2d(Tensor(x), [3], [], [1], [2])
    close(got, pool_ref(x, (3, 3), (3, 3), (1, 1), (2, 2), False, "max"))
    y, idx = F.max_pool3d(Tensor(x), [2], [1], return_indices=True)
    close(y, pool_ref(x, (2,) * 3, (1,) * 3, (0,) * 3, (1,) * 3, False, "max"))
    assert idx.shape == y.shape
    got = F.lp_pool2d(Tensor(x), 2, [2], [1])
    want = np.sqrt(pool_ref(x * x, (2, 2), (1, 1), (0, 0), (1, 1), False, "avg") * 4)
    close(got, want)


def test_pools_refuse_empty_non_batch_dims():
    with pytest.raises(ArgumentError, match=r"max_pool1d: the input's non-batch dims .* \(0, 10\)"):
        F.max_pool1d(Tensor(np.zeros((0, 10))), 1)
    with pytest.raises(ArgumentError, match=r"avg_pool2d: the input's non-batch dims"):
        F.avg_pool2d(Tensor(np.zeros((2, 0, 4, 4))), 2)
    assert F.max_pool2d(Tensor(np.zeros((0, 2, 4, 4))), 2).shape == (0, 2, 2, 2)


def test_big_window_pool_gradients():
    # a 4 x 5 x 6 window: the gradient is one pass over the input per tap
    x, k, s = r(1, 1, 6, 5, 6), (4, 5, 6), (2, 3, 2)
    y = F.avg_pool3d(xt := Tensor(x, requires_grad=True), k, s, 2, ceil_mode=True)
    want = pool_ref(x, k, s, (2, 2, 2), (1, 1, 1), True, "avg")
    close(y, want)
    g = r(*want.shape)
    (y * Tensor(g)).sum().backward()
    ref = numeric_grad(lambda a: pool_ref(a, k, s, (2,) * 3, (1,) * 3, True, "avg") * g, [x], 0)
    close(xt.grad, ref, atol=1e-7)


@pytest.mark.parametrize("count_include_pad", [True, False])
def test_avg_pool_gradient_with_counts(count_include_pad):
    x = r(2, 5, 5)
    xt = Tensor(x, requires_grad=True)
    y = F.avg_pool2d(xt, 3, 2, 1, ceil_mode=True, count_include_pad=count_include_pad)
    geo = ((3, 3), (2, 2), (1, 1), (1, 1), True, "avg", count_include_pad)
    close(y, pool_ref(x, *geo))
    g = r(*y.shape)
    (y * Tensor(g)).sum().backward()
    close(xt.grad, numeric_grad(lambda a: pool_ref(a, *geo) * g, [x], 0), atol=1e-7)


def test_max_pool_with_indices_gradient_goes_to_the_index():
    x = r(1, 2, 3, 6, 5)
    x[0, 1, 1, 2:4] = 7.0  # ties: the first in scan order wins
    x[0, 0, 1, 2, 2] = np.nan  # a NaN wins its windows
    xt = Tensor(x, requires_grad=True)
    y, idx = F.max_pool3d(xt, 3, 2, padding=1, dilation=[1, 2, 1], ceil_mode=True,
                          return_indices=True)  # fmt: skip
    g = r(*y.shape)
    (y * Tensor(g)).sum().backward()
    want = np.zeros((2, 3 * 6 * 5))
    ids = idx.numpy().reshape(2, -1)
    for c in range(2):
        np.add.at(want[c], ids[c], g[0, c].reshape(-1))
        # each index holds its window's maximum (NaN where a NaN is in the window)
        np.testing.assert_array_equal(
            np.isnan(x[0, c].reshape(-1)[ids[c]]), np.isnan(y.numpy()[0, c].reshape(-1))
        )
    close(xt.grad, want.reshape(x.shape))


def test_max_unpool_gradient_reads_every_index():
    xt = Tensor(np.array([[[1.0, 2.0, 3.0]]]), requires_grad=True)
    y = F.max_unpool1d(xt, Tensor(np.array([[[1, 1, 2]]])), 2, output_size=[6])
    close(y, [[[0.0, 2.0, 3.0, 0.0, 0.0, 0.0]]])
    (y * Tensor(np.arange(6.0).reshape(1, 1, 6) * 10)).sum().backward()
    close(xt.grad, [[[10.0, 10.0, 20.0]]])


# ---------------------------------------------------------------------------
# softmaxes with dtype=, a 0-d PReLU slope
# ---------------------------------------------------------------------------


def test_softmin_softmax_log_softmax_dtype():
    x = r(3, 4).astype(np.float32)
    x64 = x.astype(np.float64)
    y = F.softmin(Tensor(x), 0, dtype=mlfuse.float64)
    assert y.dtype == mlfuse.float64
    close(y, softmax_ref(-x64, 0), rtol=1e-12)
    y = F.softmax(Tensor(x), 1, dtype=mlfuse.float64)
    assert y.dtype == mlfuse.float64
    close(y, softmax_ref(x64, 1), rtol=1e-12)
    y = F.log_softmax(Tensor(x), -1, dtype=mlfuse.float64)
    close(y, np.log(softmax_ref(x64, -1)), rtol=1e-12)
    close(F.softmin(Tensor(np.array(2.0)), 0, dtype=mlfuse.float64), 1.0)
    assert F.softmin(Tensor(np.zeros((5, 0, 0))), -1, dtype=mlfuse.float64).shape == (5, 0, 0)
    with pytest.warns(UserWarning, match="implicit dimension"):
        close(F.softmin(Tensor(x64), None), softmax_ref(-x64, 1))  # 2-d: dim 1


def test_prelu_with_a_0d_weight():
    x, a, g = r(2, 3, 4), np.array(0.25), r(2, 3, 4)
    xt, at = Tensor(x, requires_grad=True), Tensor(a, requires_grad=True)
    y = F.prelu(xt, at)
    close(y, np.where(x > 0, x, 0.25 * x))
    (y * Tensor(g)).sum().backward()
    close(at.grad, np.sum(np.where(x > 0, 0, x * g)))
    close(xt.grad, np.where(x > 0, g, 0.25 * g))
    close(F.prelu(Tensor(np.array(-2.0)), Tensor(a)), -0.5)
    with pytest.raises(ArgumentError, match=r"prelu: weight must be 0-d or 1-d, got \(1, 1\)"):
        F.prelu(Tensor(x), Tensor(np.ones((1, 1))))


# ---------------------------------------------------------------------------
# unbatched and 0-d losses
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_nll_and_cross_entropy_unbatched(reduction):
    x, w = r(4), np.abs(r(4)) + 0.1
    t = Tensor(np.array(2))
    want = {"none": -w[2] * x[2], "sum": -w[2] * x[2], "mean": -x[2]}[reduction]
    close(F.nll_loss(Tensor(x), t, Tensor(w), reduction=reduction), want)
    ignored = F.nll_loss(Tensor(x), t, ignore_index=2, reduction=reduction).numpy()
    assert ignored.shape == () and (np.isnan(ignored) if reduction == "mean" else ignored == 0)
    logp = x - np.log(np.exp(x).sum())
    got = F.cross_entropy(Tensor(x), t, Tensor(w), reduction=reduction)
    close(got, {"none": -w[2] * logp[2], "sum": -w[2] * logp[2], "mean": -logp[2]}[reduction])
    p = np.abs(r(4))
    p /= p.sum()
    close(F.cross_entropy(Tensor(x), Tensor(p), reduction=reduction), -(logp * p).sum())


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_margin_losses_of_0d_and_unbatched_inputs(reduction):
    # one 0-d score is one class: nothing but the target, a zero loss
    zero = F.multi_margin_loss(Tensor(np.array(0.7)), Tensor(np.array(0)), reduction=reduction)
    close(zero, 0.0)
    zero = F.multilabel_margin_loss(Tensor(np.array(0.7)), Tensor(np.array(0)), reduction=reduction)
    close(zero, 0.0)
    x = r(5)
    h = np.maximum(0, 1 - x[2] + x) ** 2
    h[2] = 0
    want = h.sum() / 5
    got = F.multi_margin_loss(Tensor(x), Tensor(np.array([2])), p=2, reduction=reduction)
    close(got, np.array([want]) if reduction == "none" else want)  # (1,) target: (1,)
    got = F.multi_margin_loss(Tensor(x[None]), Tensor(np.array(2)), p=2, reduction=reduction)
    close(got, want)  # () target: ()
    t = np.array([3, 0, -1, 1, 2])
    hinge = [max(0, 1 - (x[j] - x[i])) for j in (3, 0) for i in (1, 2, 4)]
    close(F.multilabel_margin_loss(Tensor(x), Tensor(t), reduction=reduction), sum(hinge) / 5)


def test_margin_loss_errors():
    x = Tensor(r(5, 4))
    with pytest.raises(ArgumentError, match="multi_margin_loss: reduction must be"):
        F.multi_margin_loss(x, Tensor(r(5)), reduction="abc")
    with pytest.raises(ArgumentError, match=r"multi_margin_loss: input must be a non-empty"):
        F.multi_margin_loss(Tensor(np.zeros((5, 0))), Tensor(np.zeros(5, np.int64)))
    with pytest.raises(ArgumentError, match="multi_margin_loss: weight must be one-dimensional"):
        F.multi_margin_loss(x, Tensor(np.zeros(5, np.int64)), weight=Tensor(np.array(2.0)))
    with pytest.raises(ArgumentError, match=r"the target must hold 5 class index"):
        F.multi_margin_loss(x, Tensor(np.zeros(4, np.int64)))
    with pytest.raises(RuntimeError, match="target must hold class indices"):
        F.multi_margin_loss(x, Tensor(r(5)))
    with pytest.raises(ArgumentError, match=r"multilabel_margin_loss: .* got \(5, 4\) and \(\)"):
        F.multilabel_margin_loss(x, Tensor(np.array(1)))


# ---------------------------------------------------------------------------
# normalizations: shape checks, an empty batch
# ---------------------------------------------------------------------------


def test_layer_and_rms_norm_shape_errors():
    x = Tensor(r(2, 2, 3))
    for fn, name in ((F.layer_norm, "layer_norm"), (F.rms_norm, "rms_norm")):
        with pytest.raises(
            ArgumentError, match=rf"{name}: normalized_shape must have at least one dim, got \(\)"
        ):
            fn(x, [])
        with pytest.raises(
            ArgumentError,
            match=rf"{name}: normalized_shape \(2, 2\) is not the end of the input \(2, 2, 3\)",
        ):
            fn(x, [2, 2])
        with pytest.raises(ArgumentError, match=rf"{name}: normalized_shape \(4, 2, 2, 3\)"):
            fn(x, (4, 2, 2, 3))
    with pytest.raises(ArgumentError, match=r"layer_norm: weight must have .* \(3,\), got \(1,\)"):
        F.layer_norm(x, [3], Tensor(np.ones(1)))
    with pytest.raises(ArgumentError, match=r"layer_norm: bias must have .* \(3,\), got \(2,\)"):
        F.layer_norm(x, [3], None, Tensor(np.ones(2)))


def test_layer_and_rms_norm_values():
    x = r(2, 3)
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    close(F.layer_norm(Tensor(x), 3), (x - mu) / np.sqrt(var + 1e-5))
    close(F.rms_norm(Tensor(x), [3], eps=1e-6), x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6))


def test_group_norm_shapes_and_errors():
    x = r(2, 4)
    g = x.reshape(2, 2, 2)
    want = (g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-5)
    close(F.group_norm(Tensor(x), 2), want.reshape(2, 4))
    assert F.group_norm(Tensor(np.zeros((0, 4, 3))), 2).shape == (0, 4, 3)
    with pytest.raises(ArgumentError, match=r"group_norm: input must be \(N, C, \.\.\.\).*\(4,\)"):
        F.group_norm(Tensor(r(4)), 2)
    with pytest.raises(ArgumentError, match="group_norm: 3 groups do not divide 4 channels"):
        F.group_norm(Tensor(x), 3)
    with pytest.raises(ArgumentError, match="group_norm: num_groups must be a positive int"):
        F.group_norm(Tensor(x), 0)
    with pytest.raises(ArgumentError, match=r"group_norm: weight must be \(4,\).*got \(3,\)"):
        F.group_norm(Tensor(x), 2, Tensor(np.ones(3)))


def test_batch_norm_of_an_empty_input():
    mean, var = Tensor(np.zeros(3)), Tensor(np.ones(3))
    y = F.batch_norm(Tensor(np.zeros((0, 3))), mean, var, Tensor(np.ones(3)), training=True)
    assert y.shape == (0, 3)
    close(mean, np.zeros(3))  # no statistics from no samples
    close(var, np.ones(3))
    empty = Tensor(np.zeros(0))
    assert F.batch_norm(empty, empty, empty, training=False).shape == (0,)
    with pytest.raises(ArgumentError, match=r"batch_norm: input must be \(N, C, \.\.\.\)"):
        F.batch_norm(Tensor(r(3)), None, None, training=True)


# ---------------------------------------------------------------------------
# ctc_loss: PyTorch's gradient with respect to the log-probabilities
# ---------------------------------------------------------------------------


def ctc_ref(lp, targets, il, tl, blank=0):
    """-log of the total probability of the alignments (the forward variables)."""
    out = []
    for n in range(lp.shape[1]):
        ext = [blank]
        for c in targets[n, : tl[n]]:
            ext += [int(c), blank]
        a = np.full(len(ext), -np.inf)
        a[0], a[1] = lp[0, n, blank], lp[0, n, ext[1]]
        for t in range(1, il[n]):
            prev = a.copy()
            for s in range(len(ext)):
                terms = [prev[s]] + ([prev[s - 1]] if s else [])
                if s >= 2 and ext[s] != blank and ext[s] != ext[s - 2]:
                    terms.append(prev[s - 2])
                a[s] = np.logaddexp.reduce(terms) + lp[t, n, ext[s]]
        out.append(-np.logaddexp(a[-1], a[-2]))
    return np.array(out)


def test_ctc_loss_gradient_of_the_log_probs_is_pytorchs():
    z = r(5, 2, 3)
    lp = z - np.log(np.exp(z).sum(2, keepdims=True))
    tg, il, tl = np.array([[1, 2], [2, 2]]), np.array([5, 4]), np.array([2, 2])
    lpt = Tensor(lp, requires_grad=True)
    loss = F.ctc_loss(lpt, Tensor(tg), Tensor(il), Tensor(tl), reduction="sum")
    close(loss, ctc_ref(lp, tg, il, tl).sum())
    loss.backward()
    # the true gradient plus exp(log_probs) at the steps inside each input: the
    # logits' gradient of a log_softmax, as PyTorch returns it
    inside = (np.arange(5)[:, None] < il[None, :])[:, :, None]
    want = numeric_grad(lambda a: ctc_ref(a, tg, il, tl), [lp], 0) + np.exp(lp) * inside
    close(lpt.grad, want, atol=1e-7)


# ---------------------------------------------------------------------------
# piecewise-constant results: a zero gradient, not none
# ---------------------------------------------------------------------------


def test_zero_gradients_of_piecewise_constant_results():
    one = Tensor(r(1, 5), requires_grad=True)
    y = F.pdist(one)  # one row: no pairs
    assert y.shape == (0,)
    y.sum().backward()
    close(one.grad, np.zeros((1, 5)))
    x = r(4, 3)
    x[1] = x[0]
    xt = Tensor(x, requires_grad=True)
    y = F.pdist(xt, 0.0)  # the count of differing coordinates
    i, j = np.triu_indices(4, 1)
    close(y, (x[i] != x[j]).sum(1).astype(np.float64))
    y.sum().backward()
    close(xt.grad, np.zeros((4, 3)))
    img = r(1, 2, 4, 4)
    grid = Tensor(RNG.uniform(-1, 1, (1, 3, 3, 2)), requires_grad=True)
    imgt = Tensor(img, requires_grad=True)
    out = F.grid_sample(imgt, grid, mode="nearest", align_corners=True)
    g = grid.numpy()
    col, row = (
        np.rint((g[..., 0] + 1) * 1.5).astype(int),
        np.rint((g[..., 1] + 1) * 1.5).astype(int),
    )
    close(out, img[0][:, row[0], col[0]][None])
    out.sum().backward()
    close(grid.grad, np.zeros((1, 3, 3, 2)))
    want = np.zeros((4, 4))
    np.add.at(want, (row[0], col[0]), 1.0)
    close(imgt.grad, np.broadcast_to(want, (1, 2, 4, 4)))


def test_gaussian_nll_loss_var_with_one_broadcast_dim_and_kl_div_of_negative_targets():
    x, y = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 3))
    var = RNG.random((1, 3)) + 0.5
    got = F.gaussian_nll_loss(Tensor(x), Tensor(y), Tensor(var)).item()
    want = (0.5 * (np.log(var) + (x - y) ** 2 / var)).mean()
    assert got == pytest.approx(want, rel=1e-9)
    with pytest.raises(ValueError, match="var .* must be the input's shape"):
        F.gaussian_nll_loss(Tensor(x), Tensor(y), Tensor(np.ones((1, 1))))
    with pytest.raises(ValueError, match="var has negative entries"):
        F.gaussian_nll_loss(Tensor(x), Tensor(y), Tensor(-np.ones((4, 3))))
    # PyTorch's xlogy(t, t) - t * input: NaN for a negative target, 0 for a zero one
    out = F.kl_div(Tensor([0.2, 0.1, 0.3]), Tensor([-0.1, 0.0, 0.5]), reduction="none").numpy()
    assert np.isnan(out[0]) and out[1] == 0.0
    assert out[2] == pytest.approx(0.5 * (np.log(0.5) - 0.3), rel=1e-6)


def test_zero_norm_has_a_zero_gradient():
    x = Tensor(np.array([1.0, 0.0, 2.0])).requires_grad_()
    x.norm(0).backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]


def test_kl_div_input_gradient_is_minus_the_target_everywhere():
    # PyTorch's xlogy(t, t) - t * input: d/d input is -t, also where t <= 0
    t = np.array([0.5, 0.0, 0.2, 0.3])
    x = Tensor(RNG.standard_normal(4)).requires_grad_()
    F.kl_div(x, Tensor(t), reduction="sum").backward()
    assert x.grad.tolist() == (-t).tolist()
