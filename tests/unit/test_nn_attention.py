"""mlfuse.nn's attention and transformer layers against float64 numpy
references written here, gradients against central differences, and, where
PyTorch is installed, against torch.nn with the same weights."""

from __future__ import annotations

import math

import numpy as np
import pytest

import mlfuse
import mlfuse.nn as nn
from mlfuse import Tensor
from mlfuse.autograd import no_grad

F64 = np.float64
RNG = np.random.default_rng(11)
E, HEADS, L, S, N = 8, 2, 3, 4, 2  # small sizes: compile time, not run time, is the cost


def r(*shape) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def close(t, ref, tol=2e-5):
    np.testing.assert_allclose(t.numpy(), np.asarray(ref), rtol=tol, atol=tol)


def state_np(m, prefix: str = "") -> dict:
    """The parameters under ``prefix``, by their names below it, in float64."""
    return {
        k[len(prefix) :]: v.numpy().astype(F64)
        for k, v in m.state_dict().items()
        if k.startswith(prefix)
    }


# ---------------------------------------------------------------------------
# numpy references (float64, sequence-first (L, N, E) layout)
# ---------------------------------------------------------------------------


def _softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def additive(mask):
    """A bool mask (True: not allowed) as 0 / -inf; a float one as it is."""
    mask = np.asarray(mask)
    return np.where(mask, -np.inf, 0.0) if mask.dtype == bool else mask.astype(F64)


def mha_ref(q, k, v, p, heads, mask=None):
    """``(output (L, N, E), weights (N, heads, L, S))``; ``mask`` additive,
    broadcastable to the scores (N, heads, L, S)."""
    q, k, v = (a.astype(F64) for a in (q, k, v))
    e = p["out_proj.weight"].shape[0]
    if "in_proj_weight" in p:
        wq, wk, wv = np.split(p["in_proj_weight"], 3)
    else:
        wq, wk, wv = p["q_proj_weight"], p["k_proj_weight"], p["v_proj_weight"]
    bq, bk, bv = np.split(p["in_proj_bias"], 3) if "in_proj_bias" in p else (0, 0, 0)
    hd = e // heads

    def split(x, w, b):
        return (x @ w.T + b).reshape(x.shape[0], x.shape[1], heads, hd).transpose(1, 2, 0, 3)

    qh, kh, vh = split(q, wq, bq), split(k, wk, bk), split(v, wv, bv)
    scores = qh @ kh.swapaxes(-1, -2) / math.sqrt(hd)
    if mask is not None:
        scores = scores + mask
    a = _softmax(scores)
    o = (a @ vh).transpose(2, 0, 1, 3).reshape(q.shape[0], q.shape[1], e)
    return o @ p["out_proj.weight"].T + p.get("out_proj.bias", 0), a


def ln_ref(x, p, name, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * p[f"{name}.weight"] + p.get(f"{name}.bias", 0)


_erf = np.vectorize(math.erf)
ACTS = {"relu": lambda x: np.maximum(x, 0), "gelu": lambda x: 0.5 * x * (1 + _erf(x / 2**0.5))}


def ff_ref(x, p, act):
    hidden = ACTS[act](x @ p["linear1.weight"].T + p["linear1.bias"])
    return hidden @ p["linear2.weight"].T + p["linear2.bias"]


def sub(p, prefix):
    return {k[len(prefix) :]: v for k, v in p.items() if k.startswith(prefix)}


def encoder_layer_ref(x, p, mask=None, norm_first=False, act="relu"):
    def sa(y):
        return mha_ref(y, y, y, sub(p, "self_attn."), HEADS, mask)[0]

    if norm_first:
        x = x + sa(ln_ref(x, p, "norm1"))
        return x + ff_ref(ln_ref(x, p, "norm2"), p, act)
    x = ln_ref(x + sa(x), p, "norm1")
    return ln_ref(x + ff_ref(x, p, act), p, "norm2")


def decoder_layer_ref(x, mem, p, tgt_mask=None, mem_mask=None, norm_first=False, act="relu"):
    def sa(y):
        return mha_ref(y, y, y, sub(p, "self_attn."), HEADS, tgt_mask)[0]

    def ca(y):
        return mha_ref(y, mem, mem, sub(p, "multihead_attn."), HEADS, mem_mask)[0]

    if norm_first:
        x = x + sa(ln_ref(x, p, "norm1"))
        x = x + ca(ln_ref(x, p, "norm2"))
        return x + ff_ref(ln_ref(x, p, "norm3"), p, act)
    x = ln_ref(x + sa(x), p, "norm1")
    x = ln_ref(x + ca(x), p, "norm2")
    return ln_ref(x + ff_ref(x, p, act), p, "norm3")


def causal(n, m=None):
    return np.triu(np.ones((n, m or n), bool), 1)  # True above the diagonal: not allowed


# ---------------------------------------------------------------------------
# MultiheadAttention against numpy
# ---------------------------------------------------------------------------


def _qkv():
    return r(L, N, E), r(S, N, E), r(S, N, E)


def test_mha_masks():
    m = nn.MultiheadAttention(E, HEADS)
    p = state_np(m)
    q, k, v = _qkv()
    bool_mask = RNG.random((L, S)) < 0.4
    bool_mask[:, 0] = False  # every query keeps a key (a row of -inf is NaN, as PyTorch)
    float_mask = r(L, S)
    pad = np.array([[False, False, True, False], [False, True, True, False]])
    per_head = r(N * HEADS, L, S)
    cases = [
        ({"attn_mask": bool_mask}, additive(bool_mask)),
        (  # a float attn_mask and a bool padding mask: added
            {"attn_mask": float_mask, "key_padding_mask": pad},
            additive(float_mask) + additive(pad)[:, None, None],
        ),
        ({"attn_mask": per_head}, per_head.reshape(N, HEADS, L, S).astype(F64)),
    ]
    for kw, mask in cases:
        got, w = m(Tensor(q), Tensor(k), Tensor(v), average_attn_weights=False,
                   **{key: Tensor(val) for key, val in kw.items()})  # fmt: skip
        mlfuse.realize(got, w)
        want, a = mha_ref(q, k, v, p, HEADS, mask)
        close(got, want)
        close(w, a)  # (N, heads, L, S)


def test_mha_causal_self_attention_without_weights_batch_first_unbatched():
    m = nn.MultiheadAttention(E, HEADS, batch_first=True)
    p = state_np(m)
    x = r(N, L, E)
    out, w = m(Tensor(x), Tensor(x), Tensor(x), need_weights=False, is_causal=True)
    assert w is None and out.shape == (N, L, E)
    xs = x.transpose(1, 0, 2)
    want = mha_ref(xs, xs, xs, p, HEADS, additive(causal(L)))[0]
    close(out, want.transpose(1, 0, 2))
    # unbatched (L, E): batch_first does not apply; the padding mask is (S,)
    q, k, v = r(L, E), r(S, E), r(S, E)
    pad = np.array([False, True, False, False])
    out, w = m(Tensor(q), Tensor(k), Tensor(v), key_padding_mask=Tensor(pad))
    mlfuse.realize(out, w)
    assert out.shape == (L, E) and w.shape == (L, S)
    want, a = mha_ref(q[:, None], k[:, None], v[:, None], p, HEADS, additive(pad))
    close(out, want[:, 0])
    close(w, a[0].mean(0))


def test_mha_kdim_vdim_and_no_bias():
    m = nn.MultiheadAttention(E, HEADS, bias=False, kdim=5, vdim=3)
    names = [k for k, _ in m.named_parameters()]
    assert names == ["q_proj_weight", "k_proj_weight", "v_proj_weight", "out_proj.weight"]
    assert m.k_proj_weight.shape == (E, 5) and m.v_proj_weight.shape == (E, 3)
    q, k, v = r(L, N, E), r(S, N, 5), r(S, N, 3)
    with no_grad():
        out, w = m(Tensor(q), Tensor(k), Tensor(v))
        mlfuse.realize(out, w)
    want, a = mha_ref(q, k, v, state_np(m), HEADS)
    close(out, want)
    close(w, a.mean(1))


def test_mha_dropout_only_while_training():
    m = nn.MultiheadAttention(E, HEADS, dropout=1.0)  # p=1: every weight is dropped
    q, k, v = _qkv()
    out, w = m(Tensor(q), Tensor(k), Tensor(v))
    mlfuse.realize(out, w)
    np.testing.assert_array_equal(w.numpy(), 0)
    close(out, np.broadcast_to(m.out_proj.bias.numpy(), (L, N, E)))  # zeros attended
    assert not m.eval().training and m.dropout == 1.0  # eval(): the plain attention


def test_mha_parameters_and_init():
    m = nn.MultiheadAttention(E, HEADS)
    assert [k for k, _ in m.named_parameters()] == [
        "in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias",
    ]  # fmt: skip
    assert m.in_proj_weight.shape == (3 * E, E) and m.head_dim == E // HEADS
    w = m.in_proj_weight.numpy()
    assert np.abs(w).max() <= math.sqrt(6 / (E + 3 * E)) and w.std() > 0.2  # xavier uniform
    assert not m.in_proj_bias.numpy().any() and not m.out_proj.bias.numpy().any()
    assert np.abs(m.out_proj.weight.numpy()).max() <= 1 / math.sqrt(E)


def _central_difference_check(m, inputs: dict, loss_np, run):
    """``run(m, tensors)`` gives mlfuse's loss; ``loss_np(params, arrays)``
    numpy's. backward()'s gradients of every input and parameter, dotted with a
    random direction, against the central difference of numpy's loss along it."""
    names = [k for k, _ in m.named_parameters()]
    base = {k: v.numpy() for k, v in m.state_dict().items()}
    leaves = {k: Tensor(v, requires_grad=True) for k, v in inputs.items()}
    loss = run(m, leaves)
    loss.backward()
    params = dict(m.named_parameters())
    mlfuse.realize(loss, *[t.grad for t in leaves.values()], *[params[k].grad for k in names])
    np.testing.assert_allclose(loss.item(), loss_np(base, inputs), rtol=1e-12)
    grads = {("x", k): t.grad.numpy() for k, t in leaves.items()}
    grads |= {("p", k): params[k].grad.numpy() for k in names}
    eps = 1e-6
    for (kind, k), g in grads.items():
        d = RNG.standard_normal(g.shape)
        vals = []
        for sign in (1, -1):
            pp, xx = dict(base), dict(inputs)
            (pp if kind == "p" else xx)[k] = (pp if kind == "p" else xx)[k] + sign * eps * d
            vals.append(loss_np(pp, xx))
        numeric = (vals[0] - vals[1]) / (2 * eps)
        np.testing.assert_allclose((g * d).sum(), numeric, rtol=1e-6, atol=1e-8, err_msg=k)


def test_mha_gradients_central_differences():
    m = nn.MultiheadAttention(4, 2, dtype=mlfuse.float64)
    mask = RNG.standard_normal((2, 3))
    wo, ww = RNG.standard_normal((2, 1, 4)), RNG.standard_normal((1, 2, 3))
    inputs = {"q": RNG.standard_normal((2, 1, 4)), "kv": RNG.standard_normal((3, 1, 4))}

    def run(m, t):
        out, w = m(t["q"], t["kv"], t["kv"], attn_mask=Tensor(mask))
        return (out * Tensor(wo)).sum() + (w * Tensor(ww)).sum()

    def loss_np(p, a):
        out, w = mha_ref(a["q"], a["kv"], a["kv"], p, 2, mask)
        return (out * wo).sum() + (w.mean(1) * ww).sum()

    _central_difference_check(m, inputs, loss_np, run)


# ---------------------------------------------------------------------------
# transformer layers against numpy
# ---------------------------------------------------------------------------


def test_encoder_stack_norm_first_gelu_batch_first_masks():
    layer = nn.TransformerEncoderLayer(E, HEADS, 16, 0.0, "gelu", batch_first=True, norm_first=True)
    enc = nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(E))
    names = [k for k, _ in enc.named_parameters()]
    assert names[0] == "layers.0.self_attn.in_proj_weight" and names[-1] == "norm.bias"
    assert "layers.1.linear2.weight" in names and len(names) == 2 * 12 + 2
    np.testing.assert_array_equal(  # deep copies: equal at first, not shared
        enc.layers[0].linear1.weight.numpy(), enc.layers[1].linear1.weight.numpy()
    )
    assert enc.layers[0].linear1.weight is not enc.layers[1].linear1.weight
    x = r(N, L, E)
    pad = np.array([[False, False, True], [False, False, False]])
    with no_grad():
        y = enc(Tensor(x), mask=Tensor(causal(L)), src_key_padding_mask=Tensor(pad))
    p = state_np(enc)
    h = x.transpose(1, 0, 2).astype(F64)
    mask = additive(causal(L)) + additive(pad)[:, None, None]
    for i in range(2):
        h = encoder_layer_ref(h, sub(p, f"layers.{i}."), mask, True, "gelu")
    close(y, ln_ref(h, p, "norm").transpose(1, 0, 2), 1e-4)


def test_transformer():
    model = nn.Transformer(E, HEADS, 1, 1, 16, dropout=0.0)
    names = {k for k, _ in model.named_parameters()}
    assert {"encoder.norm.weight", "decoder.norm.bias", "decoder.layers.0.norm3.weight",
            "decoder.layers.0.multihead_attn.in_proj_weight"} <= names  # fmt: skip
    w = model.encoder.layers[0].linear1.weight.numpy()  # xavier uniform, as PyTorch's
    assert np.abs(w).max() <= math.sqrt(6 / (E + 16))
    src, tgt = r(S, N, E), r(L, N, E)
    pad = np.array([[False, False, False, True], [False, True, False, False]])
    tgt_mask = nn.Transformer.generate_square_subsequent_mask(L)
    with no_grad():
        out = model(Tensor(src), Tensor(tgt), tgt_mask=tgt_mask, src_key_padding_mask=Tensor(pad),
                    memory_key_padding_mask=Tensor(pad))  # fmt: skip
    p = state_np(model)
    pad_mask = additive(pad)[:, None, None]
    memory = encoder_layer_ref(src.astype(F64), sub(p, "encoder.layers.0."), pad_mask)
    memory = ln_ref(memory, p, "encoder.norm")
    dec = sub(p, "decoder.layers.0.")
    dec = decoder_layer_ref(tgt.astype(F64), memory, dec, additive(causal(L)), pad_mask)
    close(out, ln_ref(dec, p, "decoder.norm"), 1e-4)


def test_generate_square_subsequent_mask():
    m = nn.Transformer.generate_square_subsequent_mask(4)
    assert m.dtype == mlfuse.float32
    np.testing.assert_array_equal(m.numpy(), np.where(causal(4), -np.inf, 0.0))


def test_layer_without_bias_and_dropout_while_training():
    layer = nn.TransformerEncoderLayer(E, HEADS, 16, dropout=1.0, bias=False)
    names = [k for k, _ in layer.named_parameters()]
    assert "linear1.bias" not in names and "norm1.bias" not in names and "norm1.weight" in names
    x = r(L, N, E)
    y = layer(Tensor(x))  # p=1: the attention and feed-forward blocks add nothing
    p = state_np(layer)
    close(y, ln_ref(ln_ref(x.astype(F64), p, "norm1"), p, "norm2"), 1e-4)


# ---------------------------------------------------------------------------
# bad arguments
# ---------------------------------------------------------------------------


def test_bad_arguments_name_the_problem():
    with pytest.raises(mlfuse.ArgumentError, match="embed_dim 10 must be divisible by num_heads 4"):
        nn.MultiheadAttention(10, 4)
    m = nn.MultiheadAttention(E, HEADS)
    q, k, v = _qkv()
    with pytest.raises(mlfuse.ArgumentError, match="query has 6 features, embed_dim is 8"):
        m(Tensor(r(L, N, 6)), Tensor(k), Tensor(v))
    with pytest.raises(mlfuse.ArgumentError, match=r"2-d attn_mask must be \(L, S\) = \(3, 4\)"):
        m(Tensor(q), Tensor(k), Tensor(v), attn_mask=Tensor(r(3, 3)))
    with pytest.raises(mlfuse.ArgumentError, match=r"3-d attn_mask must be \(N \* num_heads"):
        m(Tensor(q), Tensor(k), Tensor(v), attn_mask=Tensor(r(2, 3, 4)))
    with pytest.raises(mlfuse.ArgumentError, match=r"key_padding_mask must be \(N, S\)"):
        m(Tensor(q), Tensor(k), Tensor(v), key_padding_mask=Tensor(np.zeros((N, 3), bool)))
    with pytest.raises(mlfuse.ArgumentError, match="attn_mask must be bool or float"):
        m(Tensor(q), Tensor(k), Tensor(v), attn_mask=Tensor(np.zeros((L, S), np.int64)))
    with pytest.raises(mlfuse.ArgumentError, match="all be 3-d .batched. or 2-d"):
        m(Tensor(q), Tensor(k[0]), Tensor(v))
    with pytest.raises(mlfuse.ArgumentError, match="key and value must have kdim=8"):
        m(Tensor(q), Tensor(r(S, N, 5)), Tensor(v))
    with pytest.raises(mlfuse.ArgumentError, match="activation should be relu/gelu, not 'tanh'"):
        nn.TransformerEncoderLayer(E, HEADS, activation="tanh")
    with pytest.raises(mlfuse.ArgumentError, match="dropout must be a number in"):
        nn.TransformerDecoderLayer(E, HEADS, dropout=2.0)
    model = nn.Transformer(E, HEADS, 1, 1, 16)
    with pytest.raises(mlfuse.ArgumentError, match="batch number of src and tgt must be equal"):
        model(Tensor(r(S, 2, E)), Tensor(r(L, 3, E)))
    with pytest.raises(mlfuse.ArgumentError, match="feature number of src and tgt must be equal"):
        model(Tensor(r(S, 2, E)), Tensor(r(L, 2, 4)))


# ---------------------------------------------------------------------------
# against PyTorch (skipped where it is not installed)
# ---------------------------------------------------------------------------


def _torch_pair(cls_name: str, *args, **kwargs):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    theirs = getattr(torch.nn, cls_name)(*args, **kwargs)
    ours = getattr(nn, cls_name)(*args, **kwargs)
    assert {k for k, _ in ours.named_parameters()} == {k for k, _ in theirs.named_parameters()}
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    return torch, theirs, ours


def test_mha_against_torch_with_gradients():
    torch, theirs, ours = _torch_pair("MultiheadAttention", E, HEADS, batch_first=True)
    x = r(N, L, E)
    pad = np.array([[False, False, True], [False, False, False]])
    mask = r(L, L)
    xt, xm = torch.tensor(x, requires_grad=True), Tensor(x, requires_grad=True)
    ot, wt = theirs(xt, xt, xt, key_padding_mask=torch.tensor(pad), attn_mask=torch.tensor(mask),
                    average_attn_weights=False)  # fmt: skip
    om, wm = ours(xm, xm, xm, key_padding_mask=Tensor(pad), attn_mask=Tensor(mask),
                  average_attn_weights=False)  # fmt: skip
    mlfuse.realize(om, wm)
    close(om, ot.detach().numpy(), 1e-4)
    close(wm, wt.detach().numpy(), 1e-4)
    g1, g2 = r(*ot.shape), r(*wt.shape)
    ((ot * torch.tensor(g1)).sum() + (wt * torch.tensor(g2)).sum()).backward()
    ((om * Tensor(g1)).sum() + (wm * Tensor(g2)).sum()).backward()
    mine = dict(ours.named_parameters())
    mlfuse.realize(xm.grad, *[p.grad for p in mine.values()])
    for k, p in theirs.named_parameters():
        close(mine[k].grad, p.grad.numpy(), 1e-4)
    close(xm.grad, xt.grad.numpy(), 1e-4)


def test_mha_variants_against_torch():
    torch, theirs, ours = _torch_pair("MultiheadAttention", E, HEADS, kdim=5, vdim=3)
    q, k, v = r(L, N, E), r(S, N, 5), r(S, N, 3)
    causal_mask = torch.tensor(causal(L, S))
    for kw_t, kw_m in (
        ({}, {}),
        ({"attn_mask": causal_mask, "is_causal": True, "need_weights": False},
         {"attn_mask": Tensor(causal(L, S)), "is_causal": True, "need_weights": False}),
    ):  # fmt: skip
        ot, wt = theirs(torch.tensor(q), torch.tensor(k), torch.tensor(v), **kw_t)
        with no_grad():
            om, wm = ours(Tensor(q), Tensor(k), Tensor(v), **kw_m)
        close(om, ot.detach().numpy(), 1e-4)
        assert (wt is None) == (wm is None)
        if wt is not None:
            close(wm, wt.detach().numpy(), 1e-4)


@pytest.mark.parametrize("norm_first,act", [(False, "relu"), (True, "gelu")])
def test_transformer_against_torch(norm_first, act):
    torch, theirs, ours = _torch_pair(
        "Transformer", E, HEADS, 1, 1, 16, 0.0, act, norm_first=norm_first, batch_first=True
    )
    src, tgt = r(N, S, E), r(N, L, E)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(L)
    pad = np.array([[False, False, False, True], [False, True, False, False]])
    want = theirs(torch.tensor(src), torch.tensor(tgt), tgt_mask=mask,
                  src_key_padding_mask=torch.tensor(pad),
                  memory_key_padding_mask=torch.tensor(pad))  # fmt: skip
    mask_m = nn.Transformer.generate_square_subsequent_mask(L)
    with no_grad():
        got = ours(Tensor(src), Tensor(tgt), tgt_mask=mask_m, src_key_padding_mask=Tensor(pad),
                   memory_key_padding_mask=Tensor(pad))  # fmt: skip
    close(got, want.detach().numpy(), 1e-4)
