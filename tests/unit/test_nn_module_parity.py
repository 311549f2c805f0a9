"""PyTorch's module-construction and call conventions that ports rely on: the
factory keywords ``device=``/``dtype=``, ``bias=False`` on the normalization
layers, ``forward(input=...)``, and MultiheadAttention's extra key/value bias and
zero attention. Values against float64 numpy."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import mlfuse
import mlfuse.nn as nn
from mlfuse import Tensor

RNG = np.random.default_rng(5)


@pytest.mark.parametrize(
    "make",
    [
        lambda **kw: nn.Linear(3, 4, **kw),
        lambda **kw: nn.Conv2d(2, 3, 3, **kw),
        lambda **kw: nn.LayerNorm(4, **kw),
        lambda **kw: nn.BatchNorm1d(4, **kw),
        lambda **kw: nn.GroupNorm(2, 4, **kw),
        lambda **kw: nn.Embedding(5, 3, **kw),
        lambda **kw: nn.PReLU(**kw),
        lambda **kw: nn.RMSNorm(4, **kw),
    ],
)
def test_factory_keywords_cast_the_floating_point_tensors(make):
    m = make(device="cpu", dtype=mlfuse.float64)
    floats = [t for t in [*m.parameters(), *m.buffers()] if t.dtype.is_float]
    assert floats and all(t.dtype == mlfuse.float64 for t in floats)
    assert all(t.dtype == mlfuse.int64 for t in m.buffers() if not t.dtype.is_float)
    assert all(p.requires_grad and p.is_leaf for p in m.parameters())


def test_factory_keywords_show_in_the_signature_and_reach_base_classes():
    params = inspect.signature(nn.Linear.__init__).parameters
    assert params["device"].kind is inspect.Parameter.KEYWORD_ONLY and "dtype" in params

    class Wide(nn.Linear):
        def __init__(self):
            super().__init__(2, 3, dtype=mlfuse.float64)

    assert Wide().weight.dtype == mlfuse.float64


def test_normalization_layers_take_bias_false():
    for m in (
        nn.LayerNorm(4, bias=False),
        nn.BatchNorm2d(4, bias=False),
        nn.GroupNorm(2, 4, bias=False),
        nn.InstanceNorm1d(4, affine=True, bias=False),
    ):
        assert m.bias is None and m.weight is not None
        assert [n for n, _ in m.named_parameters()] == ["weight"]
    x = RNG.standard_normal((3, 4))
    got = nn.LayerNorm(4, bias=False)(Tensor(x)).numpy()
    want = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(got, want, rtol=1e-9)
    nn.BatchNorm1d(4, bias=False).reset_parameters()  # no bias to reset


def test_forward_takes_pytorch_input_keyword():
    m = nn.Linear(3, 2, dtype=mlfuse.float64)
    x = Tensor(RNG.standard_normal((4, 3)))
    np.testing.assert_allclose(m(input=x).numpy(), m(x).numpy())
    assert nn.ReLU()(input=Tensor([-1.0, 2.0])).tolist() == [0.0, 2.0]


def _mha_reference(x, w_in, b_in, bias_k, bias_v, w_out, b_out, heads, zero_attn):
    """Unbatched (L, E) self-attention as PyTorch's multi_head_attention_forward."""
    e = x.shape[-1]
    q, k, v = np.split(x @ w_in.T + b_in, 3, axis=-1)
    if bias_k is not None:
        k = np.concatenate([k, bias_k.reshape(1, e)])
        v = np.concatenate([v, bias_v.reshape(1, e)])
    d = e // heads
    qh, kh, vh = (t.reshape(t.shape[0], heads, d).transpose(1, 0, 2) for t in (q, k, v))
    if zero_attn:
        kh = np.concatenate([kh, np.zeros((heads, 1, d))], 1)
        vh = np.concatenate([vh, np.zeros((heads, 1, d))], 1)
    s = qh @ kh.transpose(0, 2, 1) / np.sqrt(d)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    o = (p @ vh).transpose(1, 0, 2).reshape(x.shape[0], e)
    return o @ w_out.T + b_out, p.mean(0)


@pytest.mark.parametrize("bias_kv,zero_attn", [(True, False), (False, True), (True, True)])
def test_multihead_attention_bias_kv_and_zero_attn(bias_kv, zero_attn):
    e, heads = 4, 2
    m = nn.MultiheadAttention(e, heads, add_bias_kv=bias_kv, add_zero_attn=zero_attn)
    m = m.to(mlfuse.float64)
    names = [n for n, _ in m.named_parameters()]
    assert ("bias_k" in names) == bias_kv and ("bias_v" in names) == bias_kv
    x = RNG.standard_normal((5, e))
    out, w = m(Tensor(x), Tensor(x), Tensor(x))
    want, want_w = _mha_reference(
        x,
        m.in_proj_weight.numpy(),
        m.in_proj_bias.numpy(),
        m.bias_k.numpy() if bias_kv else None,
        m.bias_v.numpy() if bias_kv else None,
        m.out_proj.weight.numpy(),
        m.out_proj.bias.numpy(),
        heads,
        zero_attn,
    )
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(w.numpy(), want_w, rtol=1e-9, atol=1e-12)


def _np_cross_entropy(logits, target):
    """Mean cross entropy of (N, C, ...) logits against class indices."""
    m = logits.max(1, keepdims=True)
    logp = logits - m - np.log(np.exp(logits - m).sum(1, keepdims=True))
    picked = np.take_along_axis(logp, target[:, None], 1)[:, 0]
    return -picked.mean()


def test_linear_cross_entropy_with_and_without_extra_dims():
    import mlfuse.nn.functional as F

    x, w, b = RNG.standard_normal((4, 6)), RNG.standard_normal((5, 6)), RNG.standard_normal(5)
    t = np.array([0, 3, 4, 1])
    got = F.linear_cross_entropy(Tensor(x), Tensor(w), Tensor(t), linear_bias=Tensor(b))
    assert got.item() == pytest.approx(_np_cross_entropy(x @ w.T + b, t), rel=1e-10)
    w2, t2 = RNG.standard_normal((5, 3, 6)), RNG.integers(0, 5, (4, 3))
    got2 = F.linear_cross_entropy(Tensor(x), Tensor(w2), Tensor(t2))
    assert got2.item() == pytest.approx(_np_cross_entropy(np.einsum("ni,cdi->ncd", x, w2), t2))
    loss = nn.LinearCrossEntropyLoss(6, 5, out_features=(3,), bias=True, dtype=mlfuse.float64)
    lw = loss.linear.weight.numpy().reshape(5, 3, 6)
    lb = loss.linear.bias.numpy().reshape(5, 3)
    want = _np_cross_entropy(np.einsum("ni,cdi->ncd", x, lw) + lb, t2)
    assert loss(Tensor(x), Tensor(t2)).item() == pytest.approx(want, rel=1e-10)
    with pytest.raises(ValueError, match="must share in"):
        F.linear_cross_entropy(Tensor(x), Tensor(w[:, :5]), Tensor(t))
