"""mlfuse.nn.functional against float64 numpy references (and against
torch.nn.functional where PyTorch is installed), with kernel counts."""

from __future__ import annotations

import math

import numpy as np
import pytest

import mlfuse
import mlfuse.nn as nn
import mlfuse.nn.functional as F
from mlfuse import Tensor

F64 = np.float64
RNG = np.random.default_rng(0)

try:
    import torch
    import torch.nn.functional as TF
except ImportError:  # pragma: no cover - depends on the machine
    torch = None


def r(*shape) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def close(t: Tensor, ref, rtol=2e-5, atol=2e-5):
    np.testing.assert_allclose(t.numpy(), np.asarray(ref), rtol=rtol, atol=atol)


# ---------------------------------------------------------------------------
# numpy references
# ---------------------------------------------------------------------------


def conv2d_ref(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    x, w = x.astype(F64), w.astype(F64)
    s = (stride, stride) if isinstance(stride, int) else stride
    p = (padding, padding) if isinstance(padding, int) else padding
    d = (dilation, dilation) if isinstance(dilation, int) else dilation
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])))
    oh = (h + 2 * p[0] - d[0] * (kh - 1) - 1) // s[0] + 1
    ow = (wd + 2 * p[1] - d[1] * (kw - 1) - 1) // s[1] + 1
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for g in range(groups):
        for i in range(kh):
            for j in range(kw):
                win = xp[:, g * cg : (g + 1) * cg, i * d[0] :, j * d[1] :][
                    :, :, : (oh - 1) * s[0] + 1 : s[0], : (ow - 1) * s[1] + 1 : s[1]
                ]
                out[:, g * og : (g + 1) * og] += np.einsum(
                    "nchw,oc->nohw", win, w[g * og : (g + 1) * og, :, i, j]
                )
    return out + (b.astype(F64).reshape(1, o, 1, 1) if b is not None else 0)


def pool_ref(x, k, s, p, op):
    x = x.astype(F64)
    n, c, h, w = x.shape
    fill = -np.inf if op == "max" else 0.0
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)), constant_values=fill)
    oh, ow = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
    out = np.empty((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            win = xp[:, :, i * s : i * s + k, j * s : j * s + k]
            out[:, :, i, j] = win.max((2, 3)) if op == "max" else win.mean((2, 3))
    return out


def log_softmax_ref(x, axis):
    x = x.astype(F64)
    m = x.max(axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis, keepdims=True))


# ---------------------------------------------------------------------------
# convolutions and pooling
# ---------------------------------------------------------------------------

CONV = [
    {},
    {"padding": 1},
    {"stride": 2, "padding": 1},
    {"dilation": 2, "padding": 2},
    {"groups": 2, "padding": 1},
    {"stride": (1, 2), "padding": (1, 0)},
]


@pytest.mark.parametrize("kw", CONV, ids=[str(k) for k in CONV])
def test_conv2d(kw):
    x = r(2, 4, 9, 8)
    w = r(6, 4 // kw.get("groups", 1), 3, 3)
    b = r(6)
    close(F.conv2d(Tensor(x), Tensor(w), Tensor(b), **kw), conv2d_ref(x, w, b, **kw))


WINDOWS = [
    {"padding": 1},
    {"stride": 2, "padding": 2, "kernel": 5},
    {"dilation": 2, "padding": 2},
    {"dilation": (2, 1), "stride": (1, 2), "padding": (2, 1)},
    {"groups": 2, "padding": 1},
    {"stride": 3, "padding": 1, "kernel": 1},  # a stride longer than the window
    {"padding": 0},
]


@pytest.mark.parametrize("kw", WINDOWS, ids=[str(k) for k in WINDOWS])
def test_conv2d_large_inputs_read_their_windows_as_one_view(kw):
    """A padded input of 64 KiB or more is copied padded once, then the product
    reads its windows through one view (one reduction over channels and taps)."""
    kw = dict(kw)
    k = kw.pop("kernel", 3)
    x, w, b = r(2, 16, 23, 29), r(16, 16 // kw.get("groups", 1), k, k), r(16)
    got = F.conv2d(Tensor(x), Tensor(w), Tensor(b), **kw)
    copies = 1 if kw.get("padding") else 0
    assert len(mlfuse.schedule(got)) in (1 + copies, 2 + copies)  # (+1: weights packed)
    close(got, conv2d_ref(x, w, b, **kw), rtol=1e-4, atol=1e-4)


def test_conv_packs_weights_where_rows_are_too_short_for_vectors():
    # a 14-wide output: vectors run over the 32 output channels of packed weights
    x, w = r(3, 32, 14, 14), r(32, 32, 3, 3)
    got = F.conv2d(Tensor(x, device="cpu"), Tensor(w, device="cpu"), padding=1)
    target = mlfuse.targets.get_target("cpu")
    packs = target.pack_conv_weights(14, 32, 4)
    assert len(mlfuse.schedule(got)) == 2 + packs
    close(got, conv2d_ref(x, w, padding=1), rtol=1e-4, atol=1e-4)
    x1 = r(2, 32, 30)
    got = F.conv1d(Tensor(x1), Tensor(w[:, :, 0]), padding=1, stride=2)
    ref = conv2d_ref(x1[:, :, None], w[:, :, :1], stride=(1, 2), padding=(0, 1))[:, :, 0]
    close(got, ref, rtol=1e-4, atol=1e-4)


def test_conv2d_same_padding_and_noncontiguous_input():
    x = r(2, 8, 9, 4).transpose(0, 3, 1, 2)  # (2, 4, 8, 9), channels strided
    w = r(3, 4, 3, 3)
    got = F.conv2d(
        Tensor(np.ascontiguousarray(x.transpose(0, 2, 3, 1))).permute(0, 3, 1, 2),
        Tensor(w),
        padding="same",
    )
    close(got, conv2d_ref(x, w, padding=1))


def test_conv1d():
    x, w = r(2, 4, 10), r(3, 4, 3)
    ref = conv2d_ref(x[:, :, None], w[:, :, None], stride=(1, 2), padding=(0, 1))[:, :, 0]
    close(F.conv1d(Tensor(x), Tensor(w), stride=2, padding=1), ref)


def test_conv2d_bias_relu_is_one_kernel():
    x, w, b = Tensor(r(2, 3, 8, 8)).realize(), Tensor(r(4, 3, 3, 3)).realize(), Tensor(r(4))
    out = F.conv2d(x, w, b.realize(), padding=1).relu()
    assert len(mlfuse.schedule(out)) == 1
    close(out, np.maximum(conv2d_ref(x.numpy(), w.numpy(), b.numpy(), padding=1), 0))


def test_conv2d_errors_name_the_shapes():
    with pytest.raises(ValueError, match=r"weight \(6, 2, 3, 3\) expects 2 input channels"):
        F.conv2d(Tensor(r(1, 4, 5, 5)), Tensor(r(6, 2, 3, 3)))
    with pytest.raises(ValueError, match=r"groups=3 must divide"):
        F.conv2d(Tensor(r(1, 4, 5, 5)), Tensor(r(6, 2, 3, 3)), groups=3)
    with pytest.raises(ValueError, match=r"does not fit the padded input"):
        F.conv2d(Tensor(r(1, 4, 2, 2)), Tensor(r(6, 4, 3, 3)))
    with pytest.raises(ValueError, match=r"input must be \(N, C, H, W\)"):
        F.conv2d(Tensor(r(5, 5)), Tensor(r(6, 4, 3, 3)))


@pytest.mark.parametrize("k,s,p", [(2, 2, 0), (3, 2, 1), (3, 1, 1)])
def test_pools(k, s, p):
    x = r(2, 3, 9, 8)
    close(F.max_pool2d(Tensor(x), k, s, p), pool_ref(x, k, s, p, "max"))
    close(F.avg_pool2d(Tensor(x), k, s, p), pool_ref(x, k, s, p, "avg"))
    assert len(mlfuse.schedule(F.max_pool2d(Tensor(x), k, s, p).relu())) == 1


@pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
@pytest.mark.parametrize(
    "kw",
    [
        {"kernel_size": 3, "stride": 2, "ceil_mode": True},
        {"kernel_size": 3, "stride": 2, "padding": 1, "count_include_pad": False},
        {
            "kernel_size": 3,
            "stride": 2,
            "padding": 1,
            "ceil_mode": True,
            "count_include_pad": False,
        },
    ],
)
def test_avg_pool_modes_against_torch(kw):
    x = r(2, 3, 9, 8)
    close(F.avg_pool2d(Tensor(x), **kw), TF.avg_pool2d(torch.tensor(x), **kw).numpy())
    kw.pop("count_include_pad", None)
    close(F.max_pool2d(Tensor(x), **kw), TF.max_pool2d(torch.tensor(x), **kw).numpy())


# ---------------------------------------------------------------------------
# normalization, attention, losses
# ---------------------------------------------------------------------------


def test_batch_norm_inference_and_training():
    x = r(4, 3, 5, 5)
    m, v, w, b = r(3), np.abs(r(3)) + 0.5, r(3), r(3)
    x64 = x.astype(F64)
    ref = (x64 - m.reshape(1, 3, 1, 1)) / np.sqrt(v.reshape(1, 3, 1, 1) + 1e-5)
    ref = ref * w.reshape(1, 3, 1, 1) + b.reshape(1, 3, 1, 1)
    close(F.batch_norm(Tensor(x), Tensor(m), Tensor(v), Tensor(w), Tensor(b)), ref)
    rm, rv = Tensor(m).realize(), Tensor(v).realize()
    out = F.batch_norm(Tensor(x), rm, rv, training=True, momentum=0.1)
    mean, var = x64.mean((0, 2, 3)), x64.var((0, 2, 3))
    close(out, (x64 - mean.reshape(1, 3, 1, 1)) / np.sqrt(var.reshape(1, 3, 1, 1) + 1e-5))
    close(rm, 0.9 * m + 0.1 * mean)
    close(rv, 0.9 * v + 0.1 * x64.var((0, 2, 3), ddof=1))


def test_layer_and_group_norm():
    x = r(2, 4, 6)
    w, b = r(6), r(6)
    x64 = x.astype(F64)
    ln = (x64 - x64.mean(-1, keepdims=True)) / np.sqrt(x64.var(-1, keepdims=True) + 1e-5)
    close(F.layer_norm(Tensor(x), (6,), Tensor(w), Tensor(b)), ln * w + b)
    g = x64.reshape(2, 2, 12)
    gn = ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-5)).reshape(
        2, 4, 6
    )
    close(F.group_norm(Tensor(x), 2), gn)


def _sdpa_ref(q, k, v, mask=None):
    s = q.astype(F64) @ np.swapaxes(k.astype(F64), -1, -2) / math.sqrt(q.shape[-1])
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    e = np.exp(s - s.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)) @ v.astype(F64)


def test_scaled_dot_product_attention():
    q, k, v = r(2, 3, 5, 4), r(2, 3, 7, 4), r(2, 3, 7, 6)
    close(F.scaled_dot_product_attention(Tensor(q), Tensor(k), Tensor(v)), _sdpa_ref(q, k, v))
    q2 = r(2, 3, 7, 4)
    causal = np.tril(np.ones((7, 7), bool))
    close(
        F.scaled_dot_product_attention(Tensor(q2), Tensor(k), Tensor(v), is_causal=True),
        _sdpa_ref(q2, k, v, causal),
    )
    mask = RNG.random((5, 7)) < 0.6
    mask[:, 0] = True
    close(
        F.scaled_dot_product_attention(Tensor(q), Tensor(k), Tensor(v), attn_mask=Tensor(mask)),
        _sdpa_ref(q, k, v, mask),
    )
    with pytest.raises(ValueError, match="do not fit"):
        F.scaled_dot_product_attention(Tensor(q), Tensor(r(2, 3, 7, 5)), Tensor(v))


def test_cross_entropy_variants():
    logits, y = r(6, 5), RNG.integers(0, 5, 6)
    y[2] = -100
    lp = log_softmax_ref(logits, 1)
    nll = -lp[np.arange(6), np.where(y < 0, 0, y)] * (y >= 0)
    close(F.cross_entropy(Tensor(logits), Tensor(y)), nll.sum() / (y >= 0).sum())
    close(F.cross_entropy(Tensor(logits), Tensor(y), reduction="none"), nll)
    close(F.cross_entropy(Tensor(logits), Tensor(y), reduction="sum"), nll.sum())
    smooth = 0.9 * nll + 0.1 * (-lp.mean(1)) * (y >= 0)
    close(
        F.cross_entropy(Tensor(logits), Tensor(y), label_smoothing=0.1),
        smooth.sum() / (y >= 0).sum(),
    )
    probs = np.abs(r(6, 5))
    probs /= probs.sum(1, keepdims=True)
    close(F.cross_entropy(Tensor(logits), Tensor(probs)), -(lp * probs).sum(1).mean())
    with pytest.raises(ValueError, match="reduction must be"):
        F.cross_entropy(Tensor(logits), Tensor(y), reduction="avg")


@pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
def test_losses_against_torch():
    logits, y = r(6, 5), RNG.integers(0, 5, 6)
    w = np.abs(r(5)) + 0.1
    for kw in ({}, {"label_smoothing": 0.2}):
        got = F.cross_entropy(Tensor(logits), Tensor(y), weight=Tensor(w), **kw)
        want = TF.cross_entropy(torch.tensor(logits), torch.tensor(y), weight=torch.tensor(w), **kw)
        close(got, want.numpy())
    z, t = r(10) * 5, (RNG.random(10) < 0.5).astype(np.float32)
    close(
        F.binary_cross_entropy_with_logits(Tensor(z), Tensor(t)),
        TF.binary_cross_entropy_with_logits(torch.tensor(z), torch.tensor(t)).numpy(),
    )


def test_simple_losses():
    a, b = r(10), r(10)
    close(F.mse_loss(Tensor(a), Tensor(b)), ((a.astype(F64) - b) ** 2).mean())
    close(F.l1_loss(Tensor(a), Tensor(b), reduction="sum"), np.abs(a.astype(F64) - b).sum())
    p = 1 / (1 + np.exp(-a.astype(F64)))
    t = (RNG.random(10) < 0.5).astype(np.float32)
    bce = -(t * np.log(p) + (1 - t) * np.log(1 - p))
    close(F.binary_cross_entropy(Tensor(p.astype(np.float32)), Tensor(t)), bce.mean(), rtol=1e-4)
    close(F.binary_cross_entropy_with_logits(Tensor(a), Tensor(t)), bce.mean(), rtol=1e-4)


def test_linear_dropout_embedding():
    x, w, b = r(3, 4), r(5, 4), r(5)
    close(F.linear(Tensor(x), Tensor(w), Tensor(b)), x.astype(F64) @ w.T + b)
    with pytest.raises(ValueError, match="has 4 features, weight"):
        F.linear(Tensor(x), Tensor(r(5, 3)))
    mlfuse.manual_seed(3)
    d1 = F.dropout(Tensor(np.ones((50, 50), np.float32)), 0.25).numpy()
    mlfuse.manual_seed(3)
    d2 = F.dropout(Tensor(np.ones((50, 50), np.float32)), 0.25).numpy()
    np.testing.assert_array_equal(d1, d2)
    assert set(np.unique(d1)) <= {0.0, np.float32(1 / 0.75)}
    assert 0.15 < (d1 == 0).mean() < 0.35
    y = Tensor(x)
    assert F.dropout(y, 0.5, training=False) is y
    table = Tensor(r(20, 3)).realize()
    ids = np.array([[1, 19], [0, 1]])
    out = F.embedding(Tensor(ids), table)
    close(out, table.numpy()[ids])
    assert len(mlfuse.schedule(out * 2 + 1)) == 1
    with pytest.raises(TypeError, match="indices must be integers"):
        F.embedding(Tensor(ids.astype(np.float32)), table)


# ---------------------------------------------------------------------------
# more activations, similarity, adaptive pooling and losses
# ---------------------------------------------------------------------------


def test_activation_functions_match_the_tensor_methods():
    x = Tensor(r(3, 8) * 3)
    for name in ("relu6", "hardsigmoid", "hardswish", "mish", "selu", "logsigmoid", "softsign"):
        close(getattr(F, name)(x), getattr(x, name)().numpy(), rtol=0, atol=0)
    close(F.hardtanh(x, -2.0, 0.5), np.clip(x.numpy(), -2, 0.5))
    close(F.celu(x, 2.0), x.celu(2.0).numpy(), rtol=0, atol=0)
    xd = x.numpy().astype(F64)
    close(F.softmin(x, 0), np.exp(-xd) / np.exp(-xd).sum(0, keepdims=True))
    a, b = xd[:, :4], xd[:, 4:]
    close(F.glu(x), a / (1 + np.exp(-b)))
    with pytest.raises(
        ValueError, match="glu: dim 0 of \\(3, 8\\) must exist and have an even size"
    ):
        F.glu(x, 0)
    with pytest.raises(ValueError, match="hardtanh: min_val 1 is above max_val 0"):
        F.hardtanh(x, 1, 0)


def test_normalize_and_cosine_similarity():
    x, y = r(4, 6), r(1, 6)
    xd, yd = x.astype(F64), y.astype(F64)
    close(F.normalize(Tensor(x)), xd / np.linalg.norm(xd, axis=1, keepdims=True))
    close(F.normalize(Tensor(x), 1, -1), xd / np.abs(xd).sum(-1, keepdims=True))
    close(F.normalize(Tensor(np.zeros((2, 3), np.float32))), np.zeros((2, 3)))  # eps guards 0/0
    cos = (xd * yd).sum(1) / (np.linalg.norm(xd, axis=1) * np.linalg.norm(yd, axis=1))
    close(F.cosine_similarity(Tensor(x), Tensor(y)), cos)
    close(F.cosine_similarity(Tensor(x), Tensor(y), dim=-1), cos)


@pytest.mark.parametrize("out", [1, (7, 5), (3, 4), (2, None), 5])
def test_adaptive_avg_pool2d_windows(out):
    x = r(2, 3, 7, 10)
    got = F.adaptive_avg_pool2d(Tensor(x), out)
    oh, ow = (out, out) if isinstance(out, int) else (out[0], out[1] or 10)
    ref = np.empty((2, 3, oh, ow))
    for i in range(oh):
        for j in range(ow):
            h0, h1 = i * 7 // oh, -(-(i + 1) * 7 // oh)
            w0, w1 = j * 10 // ow, -(-(j + 1) * 10 // ow)
            ref[:, :, i, j] = x[:, :, h0:h1, w0:w1].astype(F64).mean((2, 3))
    assert len(mlfuse.schedule(got)) == 1
    close(got, ref)
    # float64 windows are weighted in float64 (float32 weights lost 8 digits)
    got64 = F.adaptive_avg_pool2d(Tensor(x.astype(F64)), out)
    np.testing.assert_allclose(got64.numpy(), ref, rtol=1e-14, atol=1e-15)


def test_regression_losses():
    p, t = r(3, 8) * 2, r(3, 8)
    d = np.abs(p.astype(F64) - t)
    sl1 = np.where(d < 0.5, 0.5 * d * d / 0.5, d - 0.25)
    close(F.smooth_l1_loss(Tensor(p), Tensor(t), beta=0.5), sl1.mean())
    close(F.smooth_l1_loss(Tensor(p), Tensor(t), "none", 0.0), d)
    hub = np.where(d < 2.0, 0.5 * d * d, 2.0 * (d - 1.0))
    close(F.huber_loss(Tensor(p), Tensor(t), "sum", delta=2.0), hub.sum(), rtol=1e-5)
    with pytest.raises(ValueError, match="huber_loss: delta must be > 0"):
        F.huber_loss(Tensor(p), Tensor(t), delta=0)
    logq = log_softmax_ref(p, 1)
    q = np.abs(t.astype(F64)) / np.abs(t.astype(F64)).sum(1, keepdims=True)
    q[0, 0] = 0.0  # a zero target contributes nothing
    kl = np.where(q > 0, q * (np.log(np.where(q > 0, q, 1)) - logq), 0.0)
    lq, tq = Tensor(logq.astype(np.float32)), Tensor(q.astype(np.float32))
    close(F.kl_div(lq, tq, reduction="batchmean"), kl.sum() / 3, rtol=1e-4)
    close(F.kl_div(lq, tq, reduction="sum"), kl.sum(), rtol=1e-4)
    close(F.kl_div(lq, lq, reduction="sum", log_target=True), 0.0)
    with pytest.raises(ValueError, match="reduction must be 'none', 'mean' or 'sum'"):
        F.mse_loss(Tensor(p), Tensor(t), reduction="avg")


def test_more_functional_against_torch():
    if torch is None:
        pytest.skip("PyTorch is not installed")
    x = r(3, 8) * 3
    tx = torch.tensor(x)
    for name in ("relu6", "hardsigmoid", "hardswish", "mish", "selu", "celu", "logsigmoid"):
        close(getattr(F, name)(Tensor(x)), getattr(TF, name)(tx).numpy())
    close(F.glu(Tensor(x)), TF.glu(tx).numpy())
    im = r(2, 3, 7, 10)
    close(
        F.adaptive_avg_pool2d(Tensor(im), (3, 4)),
        TF.adaptive_avg_pool2d(torch.tensor(im), (3, 4)).numpy(),
    )
    t = r(3, 8)
    close(
        F.smooth_l1_loss(Tensor(x), Tensor(t), beta=0.5),
        TF.smooth_l1_loss(tx, torch.tensor(t), beta=0.5).numpy(),
    )


# ---------------------------------------------------------------------------
# modules
# ---------------------------------------------------------------------------


def test_sequential_model_parameters_and_modes():
    mlfuse.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, 4, 3, padding=1),
        nn.BatchNorm2d(4),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(4 * 3 * 5, 5),
        nn.GELU(),
        nn.Dropout(0.5),
        nn.LayerNorm(5),
    )
    names = [n for n, _ in model.named_parameters()]
    assert names == [
        "0.weight",
        "0.bias",
        "1.weight",
        "1.bias",
        "5.weight",
        "5.bias",
        "8.weight",
        "8.bias",
    ]
    assert sum(p.numel() for p in model.parameters()) == 4 * 27 + 4 + 8 + 60 * 5 + 5 + 10
    w = model[0].weight.numpy()
    assert np.abs(w).max() <= 1 / math.sqrt(27) and w.std() > 0.05  # PyTorch's default bound
    x = r(2, 3, 7, 10)
    model.eval()
    assert not model[7].training
    y = model(Tensor(x))
    assert y.shape == (2, 5)
    # eval: batch norm uses the running statistics (0 and 1), dropout is off
    h = conv2d_ref(x, w, model[0].bias.numpy(), padding=1) / math.sqrt(1 + 1e-5)
    h = np.maximum(h, 0)[:, :, :6, :10].reshape(2, 4, 3, 2, 5, 2).max((3, 5)).reshape(2, -1)
    h = h @ model[5].weight.numpy().astype(F64).T + model[5].bias.numpy()
    h = h * 0.5 * (1 + np.vectorize(math.erf)(h / math.sqrt(2)))
    h = (h - h.mean(1, keepdims=True)) / np.sqrt(h.var(1, keepdims=True) + 1e-5)
    close(y, h, rtol=1e-4, atol=1e-4)
    model.train()
    assert model[7].training and model[1].training
    model(Tensor(x)).realize()
    assert np.abs(model[1].running_mean.numpy()).max() > 0  # training updated the statistics
    assert "Linear(in_features=60, out_features=5, bias=True)" in repr(model)


def test_modules_against_torch():
    if torch is None:
        pytest.skip("PyTorch is not installed")
    mlfuse.manual_seed(1)
    ours = nn.Sequential(nn.Conv2d(3, 4, 3, stride=2, groups=1), nn.BatchNorm2d(4), nn.SiLU())
    theirs = torch.nn.Sequential(
        torch.nn.Conv2d(3, 4, 3, stride=2), torch.nn.BatchNorm2d(4), torch.nn.SiLU()
    )
    params = dict(ours.named_parameters())
    with torch.no_grad():
        for name, p in theirs.named_parameters():
            p.copy_(torch.tensor(params[name].numpy()))
    x = r(2, 3, 9, 9)
    close(ours(Tensor(x)), theirs(torch.tensor(x)).detach().numpy(), rtol=1e-4, atol=1e-5)
    close(ours[1].running_var, theirs[1].running_var.numpy(), rtol=1e-5)
    ours.eval(), theirs.eval()
    close(ours(Tensor(x)), theirs(torch.tensor(x)).detach().numpy(), rtol=1e-4, atol=1e-5)


def test_module_building_blocks_and_errors():
    emb = nn.Embedding(10, 3)
    ids = np.array([[1, 2], [9, 0]])
    close(emb(Tensor(ids)), emb.weight.numpy()[ids])
    lin = nn.Linear(4, 2, bias=False)
    assert lin.bias is None and len(lin.parameters()) == 1
    x = r(5, 4)
    close(lin(Tensor(x)), x.astype(F64) @ lin.weight.numpy().T)
    close(nn.Softmax(dim=0)(Tensor(x)), np.exp(x) / np.exp(x).sum(0), rtol=1e-5)
    close(nn.AvgPool2d(2)(Tensor(r(1, 2, 4, 4))).reshape(-1).sum() * 0, 0.0)
    assert nn.Tanh()(Tensor(x)).shape == nn.Sigmoid()(Tensor(x)).shape == (5, 4)
    drop = nn.Dropout(0.3).eval()
    y = Tensor(x)
    assert drop(y) is y
    shared = nn.Linear(3, 3)
    assert len(nn.Sequential(shared, shared).parameters()) == 2  # shared parameters count once
    with pytest.raises(ValueError, match="Linear: in_features must be a positive int, got 0"):
        nn.Linear(0, 2)
    with pytest.raises(ValueError, match="Conv2d: groups 2 must divide in_channels 3"):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="Dropout: p must be in"):
        nn.Dropout(1.5)
    with pytest.raises(ValueError, match="BatchNorm2d: input must be \\(N, C, H, W\\)"):
        nn.BatchNorm2d(3)(Tensor(r(2, 3)))
    with pytest.raises(TypeError, match="Sequential: layer 1 is not callable"):
        nn.Sequential(nn.ReLU(), 3)
    with pytest.raises(ValueError, match="GELU: approximate must be 'none' or 'tanh'"):
        nn.GELU("erf")


# ---------------------------------------------------------------------------
# transposed convolutions, and tinygrad's names for the nn functions
# ---------------------------------------------------------------------------


def conv_transpose2d_ref(x, w, b=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Each input element scatters its weighted kernel into the output."""
    x, w = x.astype(F64), w.astype(F64)
    pair = lambda v: (v, v) if isinstance(v, int) else tuple(v)  # noqa: E731
    settings = (stride, padding, output_padding, dilation)
    (sh, sw), (ph, pw), (oh_, ow_), (dh, dw) = map(pair, settings)
    n, c, h, wd = x.shape
    _, og, kh, kw = w.shape
    cg = c // groups
    full = np.zeros((n, og * groups, (h - 1) * sh + dh * (kh - 1) + 1 + oh_,
                     (wd - 1) * sw + dw * (kw - 1) + 1 + ow_))  # fmt: skip
    for g in range(groups):
        xs = x[:, g * cg : (g + 1) * cg]
        for a in range(kh):
            for bb in range(kw):
                contrib = np.einsum("nchw,co->nohw", xs, w[g * cg : (g + 1) * cg, :, a, bb])
                full[:, g * og : (g + 1) * og, a * dh : a * dh + (h - 1) * sh + 1 : sh,
                     bb * dw : bb * dw + (wd - 1) * sw + 1 : sw] += contrib  # fmt: skip
    hout = (h - 1) * sh - 2 * ph + dh * (kh - 1) + oh_ + 1
    wout = (wd - 1) * sw - 2 * pw + dw * (kw - 1) + ow_ + 1
    out = full[:, :, ph : ph + hout, pw : pw + wout]
    return out + (b.astype(F64).reshape(1, -1, 1, 1) if b is not None else 0)


CONV_T = [
    {},
    {"stride": 2, "padding": 1, "output_padding": 1},
    {"stride": (2, 3), "padding": (1, 0), "dilation": (1, 2), "groups": 2},
    {"stride": 3, "padding": 2, "output_padding": (2, 0)},
]


@pytest.mark.parametrize("kw", CONV_T, ids=[str(k) for k in CONV_T])
def test_conv_transpose2d(kw):
    x, w, b = r(2, 4, 5, 6), r(4, 3, 3, 3), r(3 * kw.get("groups", 1))
    got = F.conv_transpose2d(Tensor(x), Tensor(w), Tensor(b), **kw)
    close(got, conv_transpose2d_ref(x, w, b, **kw), rtol=1e-4, atol=1e-4)


def test_conv_transpose_module_1d_and_errors():
    layer = nn.ConvTranspose2d(4, 6, 4, stride=2, padding=1)
    assert layer.weight.shape == (4, 6, 4, 4) and layer.weight.requires_grad
    x = r(1, 4, 7, 7)
    got = layer(Tensor(x))
    assert got.shape == (1, 6, 14, 14)  # doubles H and W
    ref = conv_transpose2d_ref(x, layer.weight.numpy(), layer.bias.numpy(), stride=2, padding=1)
    close(got, ref, rtol=1e-4, atol=1e-4)
    x1, w1 = r(2, 3, 10), r(3, 5, 3)
    ref1 = conv_transpose2d_ref(x1[:, :, None], w1[:, :, None], stride=(1, 3), padding=(0, 1))
    close(F.conv_transpose1d(Tensor(x1), Tensor(w1), stride=3, padding=1), ref1[:, :, 0])
    with pytest.raises(ValueError, match="output_padding"):
        F.conv_transpose2d(Tensor(x), Tensor(r(4, 2, 3, 3)), stride=2, output_padding=2)
    with pytest.raises(ValueError, match="input channels"):
        F.conv_transpose2d(Tensor(x), Tensor(r(5, 2, 3, 3)))


@pytest.mark.parametrize("padding", [1, (2, 0), (1, 2, 0, 1), (0, -1, 1, 0)])
def test_tinygrad_conv2d_method_paddings(padding):
    x, w, b = r(2, 4, 9, 8), r(6, 2, 3, 3), r(6)
    got = Tensor(x).conv2d(Tensor(w), Tensor(b), groups=2, stride=(1, 2), padding=padding)
    if isinstance(padding, int):
        pads = ((padding,) * 2,) * 2
    elif len(padding) == 2:
        pads = tuple((p, p) for p in padding)
    else:  # left, right, top, bottom
        pads = ((padding[2], padding[3]), (padding[0], padding[1]))
    xp = np.pad(x, ((0, 0), (0, 0)) + tuple((max(a, 0), max(c, 0)) for a, c in pads))
    crop = tuple(slice(max(-a, 0), xp.shape[2 + i] - max(-c, 0)) for i, (a, c) in enumerate(pads))
    ref = conv2d_ref(xp[:, :, crop[0], crop[1]], w, b, stride=(1, 2), groups=2)
    close(got, ref, rtol=1e-4, atol=1e-4)


def test_tinygrad_nn_method_names():
    x = r(2, 3, 8, 6)
    close(Tensor(x).max_pool2d(), pool_ref(x, 2, 2, 0, "max"))
    close(Tensor(x).avg_pool2d((3, 3), stride=1, padding=1), pool_ref(x, 3, 1, 1, "mean"))
    mean, inv, wt, bs = r(3), np.abs(r(3)) + 0.5, r(3), r(3)
    shape = (1, 3, 1, 1)
    ref = (x - mean.reshape(shape)) * wt.reshape(shape) * inv.reshape(shape) + bs.reshape(shape)
    close(Tensor(x).batchnorm(Tensor(wt), Tensor(bs), Tensor(mean), Tensor(inv)), ref)
    close(Tensor(x).sequential([Tensor.relu, lambda t: t * 2]), np.maximum(x, 0) * 2)
    logits, labels = r(5, 7), np.array([1, 3, -1, 6, 0], np.int32)
    logp = log_softmax_ref(logits, -1)
    picked = np.array([logp[i, c] if c >= 0 else 0.0 for i, c in enumerate(labels)])
    # tinygrad's default ignore_index=-1 ignores nothing: -1 adds 0 and counts
    close(Tensor(logits).sparse_categorical_crossentropy(Tensor(labels)), -picked.mean())
    keep = labels != 3
    smooth = 0.9 * picked + 0.1 * logp.mean(-1)
    close(
        Tensor(logits).sparse_categorical_crossentropy(
            Tensor(labels), ignore_index=3, label_smoothing=0.1
        ),
        -(smooth * keep).sum() / keep.sum(),
    )
    ok = np.array([1, 3, 2, 6, 0], np.int32)
    close(Tensor(logits[0]).cross_entropy(Tensor(ok[:1])[0]), -logp[0, 1])
    close(Tensor(logits).log_softmax().nll_loss(Tensor(ok)), -logp[np.arange(5), ok].mean())
    with pytest.raises(ValueError, match="do not fit"):
        Tensor(logits).sparse_categorical_crossentropy(Tensor(ok[:4]))


def test_tinygrad_dropout_follows_tensor_training():
    x = Tensor(np.ones(4000, np.float32))
    assert Tensor.training is False
    close(x.dropout(0.5), np.ones(4000))  # the identity outside training
    with Tensor.train():
        assert Tensor.training is True
        d = x.dropout(0.25).numpy()
    assert Tensor.training is False
    np.testing.assert_allclose(np.unique(d), [0.0, 1 / 0.75], rtol=1e-6)
    assert 0.2 < (d == 0).mean() < 0.3
