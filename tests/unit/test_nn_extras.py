"""``nn.init``, ``nn.utils`` (gradient clipping, parameter vectors, padding
sequences), tinygrad's ``nn.state`` (state dicts of any object, safetensors
files) and norm classes, and the smaller modules, against numpy references."""

from __future__ import annotations

import json
import math
import struct

import numpy as np
import pytest

import mlfuse
import mlfuse.nn as nn
import mlfuse.nn.functional as F
from mlfuse import Tensor
from mlfuse.nn.state import (
    get_parameters,
    get_state_dict,
    load_state_dict,
    safe_load,
    safe_load_metadata,
    safe_save,
)
from mlfuse.nn.utils.rnn import pad_sequence, unpad_sequence

RNG = np.random.default_rng(11)


def close(t, ref, tol=1e-5):
    got = t.numpy() if isinstance(t, Tensor) else np.asarray(t)
    assert got.shape == np.shape(ref), (got.shape, np.shape(ref))
    np.testing.assert_allclose(got, ref, rtol=tol, atol=tol)


# -- nn.init ------------------------------------------------------------------------
def test_init_bounds_and_statistics():
    w = mlfuse.empty(256, 128)
    assert nn.init.kaiming_uniform_(w, a=math.sqrt(5)) is w
    bound = math.sqrt(6 / ((1 + 5) * 128))
    v = w.numpy()
    assert v.max() <= bound and v.min() >= -bound and v.max() > 0.95 * bound
    nn.init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu")
    assert abs(w.numpy().std() - math.sqrt(2 / 256)) < 0.003
    nn.init.xavier_uniform_(w, gain=2.0)
    assert abs(w.numpy()).max() <= 2 * math.sqrt(6 / 384)
    nn.init.xavier_normal_(w)
    assert abs(w.numpy().std() - math.sqrt(2 / 384)) < 0.003
    nn.init.trunc_normal_(w, std=1.0, a=-0.5, b=0.5)
    assert abs(w.numpy()).max() <= 0.5
    nn.init.orthogonal_(w, gain=3.0)
    q = w.numpy().astype(np.float64)
    np.testing.assert_allclose(q.T @ q, 9 * np.eye(128), atol=1e-4)
    nn.init.constant_(w, 0.25)
    assert (w.numpy() == 0.25).all()
    nn.init.sparse_(w, 0.75)
    assert ((w.numpy() == 0).sum(0) == 192).all()


def test_init_exact_fills():
    e = nn.init.eye_(mlfuse.empty(3, 4))
    close(e, np.eye(3, 4))
    d = nn.init.dirac_(mlfuse.empty(4, 2, 3, 3), groups=2)
    want = np.zeros((4, 2, 3, 3))
    for g in range(2):
        for c in range(2):
            want[g * 2 + c, c, 1, 1] = 1
    close(d, want)
    # the identity convolution
    x = mlfuse.randn(1, 2, 5, 5)
    close(F.conv2d(x, nn.init.dirac_(mlfuse.empty(2, 2, 3, 3)), padding=1), x.numpy())
    assert nn.init.calculate_gain("leaky_relu", 0.2) == math.sqrt(2 / 1.04)
    assert nn.init.calculate_gain("tanh") == 5 / 3
    with pytest.raises(mlfuse.ArgumentError, match="unsupported nonlinearity 'swish'"):
        nn.init.calculate_gain("swish")
    with pytest.raises(mlfuse.ArgumentError, match="fewer than 2 dims"):
        nn.init.xavier_uniform_(mlfuse.empty(3))


def test_init_leaves_parameters_leaves():
    lin = nn.Linear(4, 3)
    nn.init.zeros_(lin.bias)
    assert lin.bias.is_leaf and lin.bias.requires_grad
    (lin(mlfuse.ones(2, 4)).sum()).backward()
    close(lin.bias.grad, [2.0, 2.0, 2.0])


# -- nn.utils -----------------------------------------------------------------------
def _grads(model):
    x = Tensor(RNG.standard_normal((5, 4)).astype(np.float32))
    model.zero_grad()
    (model(x) ** 2).sum().backward()
    return [p.grad.numpy().astype(np.float64) for p in model.parameters()]


def test_clip_grad_norm():
    lin = nn.Linear(4, 3)
    g = _grads(lin)
    norm = math.sqrt(sum((a**2).sum() for a in g))
    total = nn.utils.clip_grad_norm_(lin.parameters(), 0.5)
    close(total, np.float32(norm), 1e-4)
    scale = 0.5 / (norm + 1e-6)
    for p, a in zip(lin.parameters(), g):
        close(p.grad, (a * scale).astype(np.float32), 1e-5)
    g = _grads(lin)
    top = max(abs(a).max() for a in g)
    close(nn.utils.clip_grad_norm_(lin.parameters(), 1e9, norm_type="inf"), np.float32(top))
    for p, a in zip(lin.parameters(), g):  # under the limit: unchanged
        close(p.grad, a.astype(np.float32))
    with pytest.raises(mlfuse.ArgumentError, match="max_norm must be non-negative"):
        nn.utils.clip_grad_norm_(lin.parameters(), -1)


def test_clip_grad_value_and_vectors():
    lin = nn.Linear(4, 3)
    g = _grads(lin)
    nn.utils.clip_grad_value_(lin.parameters(), 0.1)
    for p, a in zip(lin.parameters(), g):
        close(p.grad, np.clip(a, -0.1, 0.1).astype(np.float32))
    v = nn.utils.parameters_to_vector(lin.parameters())
    want = np.concatenate([p.numpy().reshape(-1) for p in lin.parameters()])
    close(v, want)
    nn.utils.vector_to_parameters(v * 2, lin.parameters())
    close(nn.utils.parameters_to_vector(lin.parameters()), 2 * want)
    with pytest.raises(mlfuse.ArgumentError, match="vec has 3 elements, the parameters 15"):
        nn.utils.vector_to_parameters(mlfuse.zeros(3), lin.parameters())


def test_pad_sequence():
    seqs = [Tensor([[1.0], [2], [3]]), Tensor([[4.0]]), Tensor([[5.0], [6]])]
    got = pad_sequence(seqs, batch_first=True)
    close(got[..., 0], [[1, 2, 3], [4, 0, 0], [5, 6, 0]])
    got = pad_sequence(seqs, padding_value=-1, padding_side="left")
    assert got.shape == (3, 3, 1)
    close(got[..., 0].T, [[1, 2, 3], [-1, -1, 4], [-1, 5, 6]])
    back = unpad_sequence(pad_sequence(seqs), [3, 1, 2])
    assert [b.shape for b in back] == [(3, 1), (1, 1), (2, 1)]
    with pytest.raises(mlfuse.ArgumentError, match="trailing dims differ"):
        pad_sequence([mlfuse.zeros(2, 3), mlfuse.zeros(2, 4)])


# -- nn.state -----------------------------------------------------------------------
class _Holder:
    def __init__(self):
        self.layers = [nn.Linear(2, 3)]
        self.table = {"scale": Tensor([1.0, 2.0])}
        self.half = Tensor([1.5, -2.25, 3.0], dtype=mlfuse.bfloat16)
        self.ids = Tensor([1, 2, 3])
        self.flags = Tensor([True, False])


def test_state_dict_of_any_object():
    seq = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.BatchNorm1d(8))
    assert sorted(get_state_dict(seq)) == sorted(seq.state_dict())
    h = _Holder()
    names = sorted(get_state_dict(h))
    assert names == ["flags", "half", "ids", "layers.0.bias", "layers.0.weight", "table.scale"]
    assert len(get_parameters(h)) == 6


def test_safetensors_round_trip(tmp_path):
    h = _Holder()
    fn = str(tmp_path / "h.safetensors")
    safe_save(get_state_dict(h), fn, metadata={"format": "pt"})
    raw = open(fn, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    assert (8 + n) % 8 == 0
    assert header["half"]["dtype"] == "BF16" and header["half"]["shape"] == [3]
    lo, hi = header["half"]["data_offsets"]
    assert hi - lo == 6
    assert header["__metadata__"] == {"format": "pt"}
    lo, hi = header["layers.0.weight"]["data_offsets"]
    w = np.frombuffer(raw[8 + n + lo : 8 + n + hi], "<f4").reshape(3, 2)
    close(w, h.layers[0].weight.numpy())
    back = safe_load(fn)
    assert back["half"].dtype == mlfuse.bfloat16 and back["half"].numpy().tolist() == [
        1.5,
        -2.25,
        3,
    ]
    assert back["ids"].dtype == mlfuse.int64 and back["flags"].numpy().tolist() == [True, False]
    assert safe_load_metadata(fn)["ids"]["dtype"] == "I64"
    h2 = _Holder()
    load_state_dict(h2, back)
    close(h2.layers[0].weight, h.layers[0].weight.numpy())
    with pytest.raises(KeyError, match="is not in the state dict"):
        load_state_dict(h2, {"ids": back["ids"]})
    assert len(load_state_dict(h2, {"ids": back["ids"]}, strict=False)) == 1
    with pytest.raises(mlfuse.ArgumentError, match=r"Shape mismatch in layer `ids`: Expected "
                       r"shape \(3,\), but found \(2,\)"):  # fmt: skip
        load_state_dict(h2, {"ids": Tensor([1, 2])}, strict=False)
    bn = nn.BatchNorm(2)  # () and (1,) load into each other (num_batches_tracked)
    load_state_dict(bn, {**get_state_dict(bn), "num_batches_tracked": Tensor([7])})
    assert bn.num_batches_tracked.shape == () and bn.num_batches_tracked.item() == 7
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(struct.pack("<Q", 5) + b"nope!")
    with pytest.raises(mlfuse.ArgumentError, match="bad JSON header"):
        safe_load(str(bad))


# -- tinygrad's norm classes ----------------------------------------------------------
def _bn_ref(x, axes):
    mean = x.mean(axes, keepdims=True)
    var = x.var(axes, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-5), x.mean(axes), x.var(axes, ddof=1)


def test_tinygrad_batchnorm_follows_tensor_training():
    x = RNG.standard_normal((2, 3, 4, 5, 6)).astype(np.float32)
    bn = nn.BatchNorm(3)
    close(bn(Tensor(x)), x / np.sqrt(1 + 1e-5))  # eval: running stats (0, 1)
    with Tensor.train():
        y = bn(Tensor(x))
        ref, mean, var = _bn_ref(x.astype(np.float64), (0, 2, 3, 4))
        close(y, ref, 1e-4)
    close(bn.running_mean, 0.1 * mean, 1e-5)
    close(bn.running_var, 0.9 + 0.1 * var, 1e-5)
    bn.train()  # an explicit mode wins over Tensor.training
    assert bn.training and not Tensor.training
    bn2 = nn.BatchNorm(3, 1e-3, False, False)  # tinygrad's positional order
    assert bn2.eps == 1e-3 and bn2.weight is None and bn2.running_mean is None


def test_layernorm2d_and_instancenorm():
    x = RNG.standard_normal((2, 3, 4, 5)).astype(np.float64)
    ln = nn.LayerNorm2d(3)
    m, v = x.mean(1, keepdims=True), x.var(1, keepdims=True)
    close(ln(Tensor(x)), (x - m) / np.sqrt(v + 1e-5))
    inn = nn.InstanceNorm(3)
    inn.weight = Tensor([1.0, 2.0, 3.0])
    m, v = x.mean((2, 3), keepdims=True), x.var((2, 3), keepdims=True)
    want = (x - m) / np.sqrt(v + 1e-5) * np.array([1, 2, 3]).reshape(1, 3, 1, 1)
    close(inn(Tensor(x)), want)
    with pytest.raises(mlfuse.ArgumentError, match=r"InstanceNorm: input must be \(N, 3, \.\.\.\)"):
        inn(mlfuse.zeros(2, 4, 5))


# -- smaller modules ------------------------------------------------------------------
def test_loss_modules_match_functional():
    a, b = Tensor(RNG.standard_normal((4, 5))), Tensor(RNG.standard_normal((4, 5)))
    y = Tensor(np.array([1.0, -1, 1, -1]))
    close(nn.CosineEmbeddingLoss(0.1)(a, b, y), F.cosine_embedding_loss(a, b, y, 0.1).numpy())
    close(nn.MarginRankingLoss(0.2, reduction="sum")(a[:, 0], b[:, 0], y),
          F.margin_ranking_loss(a[:, 0], b[:, 0], y, 0.2, "sum").numpy())  # fmt: skip
    close(nn.HingeEmbeddingLoss()(a[:, 0], y), F.hinge_embedding_loss(a[:, 0], y).numpy())
    close(nn.SoftMarginLoss()(a[:, 0], y), np.log1p(np.exp(-y.numpy() * a[:, 0].numpy())).mean())
    t01 = Tensor((RNG.random((4, 5)) > 0.5).astype(np.float64))
    close(nn.MultiLabelSoftMarginLoss()(a, t01), F.multilabel_soft_margin_loss(a, t01).numpy())
    rate = Tensor(RNG.random((4, 5)))
    close(nn.PoissonNLLLoss()(a, rate), F.poisson_nll_loss(a, rate).numpy())
    var = Tensor(RNG.random((4, 5)) + 0.1)
    close(nn.GaussianNLLLoss()(a, b, var), F.gaussian_nll_loss(a, b, var).numpy())
    close(nn.TripletMarginLoss()(a, b, a * 2), F.triplet_margin_loss(a, b, a * 2).numpy())
    with pytest.raises(mlfuse.ArgumentError, match="reduction must be one of"):
        nn.TripletMarginLoss(reduction="avg")


def test_fold_unfold_softmax2d_bilinear():
    x = RNG.standard_normal((1, 2, 4, 5))
    cols = nn.Unfold(kernel_size=2)(Tensor(x))
    close(cols, F.unfold(Tensor(x), 2).numpy())
    close(nn.Fold((4, 5), 2)(cols), F.fold(cols, (4, 5), 2).numpy())
    e = np.exp(x - x.max(1, keepdims=True))
    close(nn.Softmax2d()(Tensor(x)), e / e.sum(1, keepdims=True))
    bl = nn.Bilinear(4, 5, 3)
    a1, a2 = RNG.standard_normal((2, 4)), RNG.standard_normal((2, 5))
    w, bias = bl.weight.numpy().astype(np.float64), bl.bias.numpy()
    want = np.einsum("bi,oij,bj->bo", a1, w, a2) + bias
    close(bl(Tensor(a1, dtype=mlfuse.float32), Tensor(a2, dtype=mlfuse.float32)), want, 1e-4)
    assert np.abs(w).max() <= 1 / math.sqrt(4)
    with pytest.raises(mlfuse.ArgumentError, match="Bilinear: inputs must end in 4 and 5"):
        bl(mlfuse.zeros(2, 5), mlfuse.zeros(2, 5))


def test_conv_padding_strings_checked_at_construction():
    with pytest.raises(mlfuse.ArgumentError, match="padding='same' is not supported for strided"):
        nn.Conv2d(4, 8, 3, stride=2, padding="same")
    with pytest.raises(mlfuse.ArgumentError, match="padding must be 'same' or 'valid'"):
        nn.Conv1d(4, 8, 3, padding="full")
    assert nn.Conv2d(4, 8, 3, padding="valid")(mlfuse.zeros(1, 4, 5, 5)).shape == (1, 8, 3, 3)


def test_max_pool_gradient_goes_to_the_first_maximum():
    # ties: the first tap in scan order gets the window's gradient, as PyTorch's
    x = np.array([[[[1.0, 1.0, 0.0], [1.0, 0.0, 2.0], [0.0, 2.0, 2.0]]]])
    t = Tensor(x, requires_grad=True)
    y = F.max_pool2d(t, 2, stride=1)
    w = np.array([[[[1.0, 10.0], [100.0, 1000.0]]]])
    (y * Tensor(w)).sum().backward()
    want = np.zeros_like(x)
    for i in range(2):
        for j in range(2):
            win = x[0, 0, i : i + 2, j : j + 2]
            a, b = np.unravel_index(np.argmax(win), (2, 2))  # numpy's argmax: the first
            want[0, 0, i + a, j + b] += w[0, 0, i, j]
    close(t.grad, want)
    # a NaN is the maximum; its last occurrence takes the gradient (PyTorch's CPU kernel)
    t = Tensor(np.array([[[[1.0, np.nan], [3.0, np.nan]]]]), requires_grad=True)
    F.max_pool2d(t, 2).sum().backward()
    close(t.grad, [[[[0.0, 0.0], [0.0, 1.0]]]])


def test_max_pool_gradient_is_one_pass_over_the_input():
    x = Tensor(RNG.standard_normal((2, 3, 17, 14)).astype(np.float32), requires_grad=True)
    y = F.max_pool2d(x, (5, 5), stride=(2, 3), padding=1)
    (y * y).sum().backward()
    # the winning tap per window, stored; then every tap's share placed in one kernel
    assert len(mlfuse.schedule(x.grad)) <= 3
    xs = x.numpy().astype(np.float64)
    pad = np.pad(xs, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
    yv = y.numpy().astype(np.float64)
    want = np.zeros_like(pad)
    for i in range(yv.shape[2]):
        for j in range(yv.shape[3]):
            win = pad[:, :, 2 * i : 2 * i + 5, 3 * j : 3 * j + 5].reshape(2, 3, -1)
            k = win.argmax(-1)
            for n in range(2):
                for ch in range(3):
                    a, b = divmod(k[n, ch], 5)
                    want[n, ch, 2 * i + a, 3 * j + b] += 2 * yv[n, ch, i, j]
    close(x.grad, want[:, :, 1:-1, 1:-1], 1e-4)
