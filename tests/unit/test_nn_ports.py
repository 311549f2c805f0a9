"""The torch.nn names a PyTorch user porting a model still missed: SyncBatchNorm
(one process), RNNBase/RNNCellBase as the recurrent layers' bases, Container,
NLLLoss2d, fractional max pooling, CrossMapLRN2d, AdaptiveLogSoftmaxWithLoss,
F.multi_head_attention_forward and the uninitialized parameters of the lazy
modules, each against a float64 numpy reference of PyTorch's semantics written
here, gradients against central differences or the reference's own rule."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import mlfuse
import mlfuse.nn as nn
import mlfuse.nn.functional as F
from mlfuse import Tensor
from mlfuse.autograd import no_grad
from mlfuse.errors import ArgumentError, DTypeError, UnsupportedModeError

from gradcheck import numeric_grad

F64 = mlfuse.float64
RNG = np.random.default_rng(23)


def r(*shape) -> np.ndarray:
    return RNG.standard_normal(shape)


def close(t, ref, tol=1e-9):
    got = t.numpy() if isinstance(t, Tensor) else np.asarray(t)
    ref = np.asarray(ref)
    assert got.shape == ref.shape, (got.shape, ref.shape)
    np.testing.assert_allclose(got, ref, rtol=tol, atol=tol)


def log_softmax(z: np.ndarray, axis: int = -1) -> np.ndarray:
    m = z.max(axis, keepdims=True)
    return z - m - np.log(np.exp(z - m).sum(axis, keepdims=True))


# ---------------------------------------------------------------------------
# SyncBatchNorm
# ---------------------------------------------------------------------------


def test_sync_batchnorm_is_batch_norm_over_any_spatial_dims():
    for shape in ((6, 3), (4, 3, 5), (2, 3, 2, 2, 2, 3)):
        x = r(*shape)
        bn = nn.SyncBatchNorm(3, momentum=0.25, dtype=F64)
        assert bn.process_group is None and isinstance(bn, nn.SyncBatchNorm)
        axes = (0,) + tuple(range(2, x.ndim))
        view = (1, 3) + (1,) * (x.ndim - 2)
        mu, var = x.mean(axes), x.var(axes)
        close(bn(Tensor(x)), (x - mu.reshape(view)) / np.sqrt(var.reshape(view) + 1e-5))
        count = x.size // 3
        close(bn.running_mean, 0.25 * mu)
        close(bn.running_var, 0.75 + 0.25 * var * count / (count - 1))
        assert int(bn.num_batches_tracked.numpy()) == 1
        bn.eval()
        rm, rv = bn.running_mean.numpy(), bn.running_var.numpy()
        close(bn(Tensor(x)), (x - rm.reshape(view)) / np.sqrt(rv.reshape(view) + 1e-5))
    assert sorted(bn.state_dict()) == [
        "bias", "num_batches_tracked", "running_mean", "running_var", "weight"
    ]  # fmt: skip
    with pytest.raises(ArgumentError, match=r"expected at least 2D input \(N, C, \*\), got 1D"):
        nn.SyncBatchNorm(3)(Tensor(r(3)))


def test_convert_sync_batchnorm_keeps_parameters_buffers_and_mode():
    class Net(nn.Module):
        def __init__(self):
            self.stem = nn.Sequential(nn.Conv2d(3, 4, 1), nn.BatchNorm2d(4))
            self.heads = nn.ModuleList([nn.BatchNorm1d(4), nn.Linear(4, 2)])
            self.named = nn.ModuleDict({"deep": nn.BatchNorm3d(2, affine=False)})
            self.again = self.heads[0]  # the same module twice stays one module

    net = Net()
    bn2 = net.stem[1]
    bn2.eval()
    w, rm, nbt = bn2.weight, bn2.running_mean, bn2.num_batches_tracked
    names = [k for k, _ in net.named_parameters()]
    sd = {k: v.numpy() for k, v in net.state_dict().items()}
    out = nn.SyncBatchNorm.convert_sync_batchnorm(net, process_group="pg")
    assert out is net
    new = net.stem[1]
    assert type(new) is nn.SyncBatchNorm and new.process_group == "pg"
    assert new.weight is w and new.running_mean is rm and new.num_batches_tracked is nbt
    assert not new.training and net.heads[0].training
    assert type(net.heads[0]) is nn.SyncBatchNorm and net.again is net.heads[0]
    deep = net.named["deep"]
    assert type(deep) is nn.SyncBatchNorm and deep.weight is None and not deep.affine
    assert type(net.stem[0]) is nn.Conv2d and type(net.heads[1]) is nn.Linear
    assert [k for k, _ in net.named_parameters()] == names
    assert {k: v.numpy().tolist() for k, v in net.state_dict().items()} == {
        k: v.tolist() for k, v in sd.items()
    }
    root = nn.BatchNorm1d(5, eps=1e-3, momentum=0.5)
    conv = nn.SyncBatchNorm.convert_sync_batchnorm(root)
    assert type(conv) is nn.SyncBatchNorm and conv.eps == 1e-3 and conv.momentum == 0.5
    assert conv.bias is root.bias
    with pytest.raises(TypeError, match="convert_sync_batchnorm: module must be a Module"):
        nn.SyncBatchNorm.convert_sync_batchnorm([root])


# ---------------------------------------------------------------------------
# RNNBase, RNNCellBase, Container, NLLLoss2d
# ---------------------------------------------------------------------------


def test_rnn_bases_are_the_layers_bases():
    for m in (nn.RNN(2, 3), nn.LSTM(2, 3), nn.GRU(2, 3)):
        assert isinstance(m, nn.RNNBase)
    for m in (nn.RNNCell(2, 3), nn.LSTMCell(2, 3), nn.GRUCell(2, 3)):
        assert isinstance(m, nn.RNNCellBase)
    mlfuse.manual_seed(3)
    lstm = nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    base = nn.RNNBase("LSTM", 3, 4, num_layers=2, bidirectional=True)
    assert [(k, v.shape) for k, v in base.state_dict().items()] == [
        (k, v.shape) for k, v in lstm.state_dict().items()
    ]
    base.load_state_dict(lstm.state_dict())
    x = Tensor(r(5, 2, 3).astype(np.float32))
    (y1, (_, c1)), (y2, (_, c2)) = lstm(x), base(x)
    close(y2, y1.numpy(), 1e-6)
    close(c2, c1.numpy(), 1e-6)
    relu = nn.RNNBase("RNN_RELU", 3, 4)
    assert relu.mode == "RNN_RELU" and "nonlinearity='relu'" in repr(relu)
    w = lstm.all_weights
    assert len(w) == 4 and [t.shape for t in w[1]] == [(16, 3), (16, 4), (16,), (16,)]
    assert w[1][0] is lstm.weight_ih_l0_reverse
    before = lstm.weight_hh_l1.numpy().copy()
    lstm.reset_parameters()
    after = lstm.weight_hh_l1.numpy()
    assert not np.array_equal(before, after) and np.abs(after).max() <= 0.5
    with pytest.raises(UnsupportedModeError, match="unrecognized RNN mode 'FOO'"):
        nn.RNNBase("FOO", 3, 4)


def test_rnn_cell_base_holds_a_custom_cells_parameters():
    class MinimalCell(nn.RNNCellBase):
        def __init__(self, i, h):
            super().__init__(i, h, bias=False, num_chunks=2)

        def forward(self, x, h):
            a, b = (x @ self.weight_ih.T + h @ self.weight_hh.T).chunk(2, -1)
            return a.sigmoid() * b.tanh()

    cell = MinimalCell(3, 5)
    assert [(k, v.shape) for k, v in cell.state_dict().items()] == [
        ("weight_ih", (10, 3)), ("weight_hh", (10, 5))
    ]  # fmt: skip
    assert cell.bias_ih is None and np.abs(cell.weight_ih.numpy()).max() <= 1 / math.sqrt(5)
    x, h = r(2, 3), r(2, 5)
    wi, wh = cell.weight_ih.numpy().astype(np.float64), cell.weight_hh.numpy().astype(np.float64)
    z = x @ wi.T + h @ wh.T
    want = 1 / (1 + np.exp(-z[:, :5])) * np.tanh(z[:, 5:])
    close(cell(Tensor(x.astype(np.float32)), Tensor(h.astype(np.float32))), want, 1e-5)
    gru = nn.GRUCell(2, 3)
    gru.reset_parameters()
    assert gru.mode == "GRU" and gru.weight_ih.shape == (9, 2)
    with pytest.raises(ArgumentError, match="num_chunks must be a positive int"):
        nn.RNNCellBase(2, 3, True, 0)


def test_container_and_nllloss2d_are_deprecated_aliases():
    with pytest.warns(DeprecationWarning, match="nn.Container is deprecated"):
        c = nn.Container(enc=nn.Linear(2, 3), dec=nn.Linear(3, 2))
    assert isinstance(c, nn.Module)
    assert [k for k, _ in c.named_parameters()] == ["enc.weight", "enc.bias", "dec.weight",
                                                    "dec.bias"]  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(TypeError, match="Container: 'x' is not a Module"):
            nn.Container(x=3)
    logp = log_softmax(r(2, 4, 3, 3), 1)
    target = RNG.integers(0, 4, (2, 3, 3))
    target[0, 0, 0] = -100
    with pytest.warns(DeprecationWarning, match="NLLLoss2d has been deprecated"):
        loss_fn = nn.NLLLoss2d(reduction="sum")
    assert isinstance(loss_fn, nn.NLLLoss)
    keep = target != -100
    picked = np.take_along_axis(logp, np.where(keep, target, 0)[:, None], 1)[:, 0]
    close(loss_fn(Tensor(logp), Tensor(target)), -(picked * keep).sum())


# ---------------------------------------------------------------------------
# fractional max pooling
# ---------------------------------------------------------------------------


def frac_starts(u: float, size: int, out: int, k: int) -> list[int]:
    """PyTorch's generate_intervals."""
    if out == 1:
        return [size - k]
    alpha = (size - k) / (out - 1)
    return [int((i + u) * alpha) - int(u * alpha) for i in range(out - 1)] + [size - k]


def frac_ref(x: np.ndarray, k, out, samples: np.ndarray):
    """A direct loop over the windows, as PyTorch's CPU kernel: the first
    maximum in scan order (a NaN: the last NaN) and its flat index."""
    nd = len(k)
    order = (1, 0) if nd == 2 else (0, 1, 2)  # the sample of each spatial dim
    spatial = x.shape[2:]
    y = np.empty(x.shape[:2] + tuple(out))
    idx = np.empty(x.shape[:2] + tuple(out), np.int64)
    for n, c in np.ndindex(x.shape[:2]):
        st = [frac_starts(samples[n, c, order[d]], spatial[d], out[d], k[d]) for d in range(nd)]
        for o in np.ndindex(*out):
            corner = tuple(st[d][o[d]] for d in range(nd))
            best, at = -np.inf, np.ravel_multi_index(corner, spatial)
            for tap in np.ndindex(*k):
                pos = tuple(a + b for a, b in zip(corner, tap))
                v = x[(n, c) + pos]
                if v > best or np.isnan(v):
                    best, at = v, np.ravel_multi_index(pos, spatial)
            y[(n, c) + o], idx[(n, c) + o] = best, at
    return y, idx


def frac_grad_ref(shape, idx: np.ndarray, g: np.ndarray) -> np.ndarray:
    gx = np.zeros((shape[0], shape[1], math.prod(shape[2:])))
    for n, c in np.ndindex(shape[:2]):
        np.add.at(gx[n, c], idx[n, c].ravel(), g[n, c].ravel())
    return gx.reshape(shape)


@pytest.mark.parametrize(
    "shape,k,out",
    [
        ((2, 3, 7, 9), (2, 2), (3, 4)),
        ((1, 2, 8, 7), (3, 2), (4, 6)),
        ((2, 1, 5, 6, 7), (2, 2, 3), (3, 4, 4)),
    ],
)
def test_fractional_max_pool_with_fixed_samples(shape, k, out):
    nd = len(k)
    x = r(*shape)
    samples = RNG.random((shape[0], shape[1], nd))
    fn = F.fractional_max_pool2d if nd == 2 else F.fractional_max_pool3d
    xt = Tensor(x, requires_grad=True)
    y, idx = fn(xt, k, output_size=out, return_indices=True, _random_samples=Tensor(samples))
    want, want_idx = frac_ref(x, k, out, samples)
    close(y, want)
    assert idx.dtype == mlfuse.int64
    np.testing.assert_array_equal(idx.numpy(), want_idx)
    g = r(*want.shape)
    (y * Tensor(g)).sum().backward()
    close(xt.grad, frac_grad_ref(shape, want_idx, g))
    with_fn = (
        F.fractional_max_pool2d_with_indices if nd == 2 else F.fractional_max_pool3d_with_indices
    )
    y2, idx2 = with_fn(Tensor(x), k, out, _random_samples=Tensor(samples))
    close(y2, want)
    np.testing.assert_array_equal(idx2.numpy(), want_idx)


def test_fractional_max_pool_ratio_unbatched_ties_nan_and_float32():
    x = np.round(r(3, 9, 10))  # ties: the first in scan order wins
    x[0, 2, 3] = np.nan
    x[1, 4, 4] = x[1, 4, 5] = np.nan  # the last NaN wins
    samples = RNG.random((1, 3, 2))
    y, idx = F.fractional_max_pool2d(
        Tensor(x), 3, output_ratio=(0.5, 0.7), return_indices=True, _random_samples=Tensor(samples)
    )
    want, want_idx = frac_ref(x[None], (3, 3), (4, 7), samples)
    assert y.shape == (3, 4, 7)
    np.testing.assert_array_equal(y.numpy(), want[0])
    np.testing.assert_array_equal(idx.numpy(), want_idx[0])
    # float32 samples: the windows as PyTorch computes them, in float32 (numpy 2
    # keeps frac_starts' arithmetic in float32 for a float32 sample)
    x32, s32 = r(2, 2, 25, 17).astype(np.float32), RNG.random((2, 2, 2)).astype(np.float32)
    y32, idx32 = F.fractional_max_pool2d(
        Tensor(x32), 3, output_size=(12, 7), return_indices=True, _random_samples=Tensor(s32)
    )
    want32, want_idx32 = frac_ref(x32.astype(np.float64), (3, 3), (12, 7), s32)
    np.testing.assert_array_equal(idx32.numpy(), want_idx32)
    np.testing.assert_array_equal(y32.numpy(), want32.astype(np.float32))


def test_fractional_max_pool_random_samples_and_modules():
    x = r(2, 3, 8, 8)
    mlfuse.manual_seed(5)
    y, idx = F.fractional_max_pool2d(Tensor(x), 2, output_size=4, return_indices=True)
    mlfuse.manual_seed(5)
    y_again = F.fractional_max_pool2d(Tensor(x), 2, output_size=4)
    np.testing.assert_array_equal(y.numpy(), y_again.numpy())
    flat = x.reshape(2, 3, -1)
    picked = np.take_along_axis(flat, idx.numpy().reshape(2, 3, -1), 2)
    np.testing.assert_array_equal(y.numpy(), picked.reshape(2, 3, 4, 4))
    rows, cols = np.divmod(idx.numpy(), 8)
    assert (np.diff(rows, axis=2) >= 0).all() and (np.diff(cols, axis=3) >= 0).all()
    samples = RNG.random((2, 3, 2))
    pool = nn.FractionalMaxPool2d(2, output_ratio=0.5, return_indices=True,
                                  _random_samples=Tensor(samples))  # fmt: skip
    assert list(pool.state_dict()) == ["_random_samples"]
    got, got_idx = pool(Tensor(x))
    want, want_idx = frac_ref(x, (2, 2), (4, 4), samples)
    close(got, want)
    np.testing.assert_array_equal(got_idx.numpy(), want_idx)
    x3, s3 = r(1, 2, 6, 6, 6), RNG.random((1, 2, 3))
    pool3 = nn.FractionalMaxPool3d((2, 3, 2), output_size=(3, 2, 4), _random_samples=Tensor(s3))
    close(pool3(Tensor(x3)), frac_ref(x3, (2, 3, 2), (3, 2, 4), s3)[0])
    assert nn.FractionalMaxPool3d(2, output_ratio=0.5)(Tensor(x3)).shape == (1, 2, 3, 3, 3)
    assert "output_ratio=(0.5, 0.5)" in repr(nn.FractionalMaxPool2d(3, output_ratio=0.5))


def test_fractional_max_pool_errors_name_the_problem():
    x = Tensor(r(1, 2, 6, 6))
    with pytest.raises(ArgumentError, match="requires specifying either an output_size or an"):
        F.fractional_max_pool2d(x, 2)
    with pytest.raises(ArgumentError, match=r"output size \(6, 5\) with kernel \(2, 2\) does not"):
        F.fractional_max_pool2d(x, 2, output_size=(6, 5))
    with pytest.raises(ArgumentError, match=r"_random_samples must be \(N, C, 2\) = \(1, 2, 2\)"):
        F.fractional_max_pool2d(x, 2, 3, _random_samples=Tensor(RNG.random((1, 2, 3))))
    with pytest.raises(DTypeError, match="input must be floating point, got int64"):
        F.fractional_max_pool2d(Tensor(np.ones((1, 2, 6, 6), np.int64)), 2, 3)
    with pytest.raises(ArgumentError, match=r"input must be \(N, C, D, H, W\) or \(C, D, H, W\)"):
        F.fractional_max_pool3d(x.reshape(2, 6, 6), 2, 3)
    with pytest.raises(ArgumentError, match="kernel_size must be greater than 0"):
        nn.FractionalMaxPool2d(0, output_size=3)
    with pytest.raises(ArgumentError, match="requires specifying either an output size, or a"):
        nn.FractionalMaxPool2d(2)
    with pytest.raises(ArgumentError, match="only one of output_size and output_ratio"):
        nn.FractionalMaxPool2d(2, output_size=3, output_ratio=0.5)
    with pytest.raises(ArgumentError, match=r"output_ratio must be between 0 and 1 \(got 1.5\)"):
        nn.FractionalMaxPool3d(2, output_ratio=1.5)


# ---------------------------------------------------------------------------
# CrossMapLRN2d
# ---------------------------------------------------------------------------


def cross_map_lrn_ref(x, size, alpha, beta, k):
    """PyTorch's legacy forward, a running sum over the channels (which never
    takes channel 0 out again)."""
    channels, sq = x.shape[1], x * x
    pre = int((size - 1) / 2 + 1)
    scale = np.zeros_like(x)
    scale[:, 0] = sq[:, : min(pre, channels)].sum(1)
    for c in range(1, channels):
        scale[:, c] = scale[:, c - 1]
        if c < channels - pre + 1:
            scale[:, c] += sq[:, c + pre - 1]
        if c > pre:
            scale[:, c] -= sq[:, c - pre]
    return x * (scale * alpha / size + k) ** -beta


def test_cross_map_lrn2d():
    for channels, size in ((1, 3), (4, 1), (6, 2), (7, 3), (9, 5), (3, 7)):
        x = r(2, channels, 3, 2)
        m = nn.CrossMapLRN2d(size, alpha=0.3, beta=0.75, k=2.0)
        close(m(Tensor(x)), cross_map_lrn_ref(x, size, 0.3, 0.75, 2.0))
    x, g = r(1, 6, 2, 1), r(1, 6, 2, 1)
    xt = Tensor(x, requires_grad=True)
    (nn.CrossMapLRN2d(3, 0.5, 0.75, 1.0)(xt) * Tensor(g)).sum().backward()
    (want,) = numeric_grad(lambda a: cross_map_lrn_ref(a, 3, 0.5, 0.75, 1.0), [x], g)
    close(xt.grad, want, 1e-7)
    assert repr(nn.CrossMapLRN2d(5)) == "CrossMapLRN2d(5, alpha=0.0001, beta=0.75, k=1)"
    with pytest.raises(ArgumentError, match=r"expected input to be 4D \(N, C, H, W\), got 3D"):
        nn.CrossMapLRN2d(3)(Tensor(r(2, 3, 4)))
    with pytest.raises(ArgumentError, match="CrossMapLRN2d: size must be a positive int"):
        nn.CrossMapLRN2d(0)


# ---------------------------------------------------------------------------
# AdaptiveLogSoftmaxWithLoss
# ---------------------------------------------------------------------------


def asm_ref(m, x: np.ndarray, y: np.ndarray):
    """The adaptive softmax of Grave et al. as PyTorch computes it: the
    per-sample log-probability of the target, the full log-probabilities and
    PyTorch's prediction."""
    p = {k: v.numpy() for k, v in m.state_dict().items()}
    head = x @ p["head.weight"].T + (p["head.bias"] if "head.bias" in p else 0)
    hl = log_softmax(head)
    short = m.shortlist_size
    full = [hl[:, :short]]
    for i in range(m.n_clusters):
        tail = (x @ p[f"tail.{i}.0.weight"].T) @ p[f"tail.{i}.1.weight"].T
        full.append(log_softmax(tail) + hl[:, short + i : short + i + 1])
    full = np.concatenate(full, 1)
    out = full[np.arange(len(y)), y]
    best = head.argmax(1)
    predict = np.where(best < short, best, full.argmax(1))
    return out, full, predict


def test_adaptive_log_softmax_with_loss():
    mlfuse.manual_seed(1)
    m = nn.AdaptiveLogSoftmaxWithLoss(8, 12, [3, 7], div_value=2.0, dtype=F64)
    assert [(k, v.shape) for k, v in m.state_dict().items()] == [
        ("head.weight", (5, 8)), ("tail.0.0.weight", (4, 8)), ("tail.0.1.weight", (4, 4)),
        ("tail.1.0.weight", (2, 8)), ("tail.1.1.weight", (5, 2)),
    ]  # fmt: skip
    assert m.cutoffs == [3, 7, 12] and m.head_size == 5 and m.n_clusters == 2
    x = r(9, 8) * 2
    y = np.array([0, 2, 3, 6, 7, 11, 1, 8, 5])
    res = m(Tensor(x), Tensor(y))
    want, full, predict = asm_ref(m, x, y)
    close(res.output, want)
    close(res.loss, -want.mean())
    assert res == (res.output, res.loss) and type(res).__name__ == "_ASMoutput"
    close(m.log_prob(Tensor(x)), full)
    close(np.exp(full).sum(1), np.ones(9))
    np.testing.assert_array_equal(m.predict(Tensor(x)).numpy(), predict)
    one = m(Tensor(x[4]), Tensor(np.array(y[4])))
    assert one.output.shape == () and one.loss.shape == ()
    close(one.output, want[4])
    close(m.log_prob(Tensor(x[2])), full[2])
    # gradients: of the input, and of a tail weight through the masked rows
    xs, ys = x[:4], y[:4]
    xt = Tensor(xs, requires_grad=True)
    m.zero_grad()
    m(xt, Tensor(ys)).loss.backward()
    (gx,) = numeric_grad(lambda a: -asm_ref(m, a, ys)[0].mean(), [xs], np.ones(()))
    close(xt.grad, gx, 1e-7)
    w = m.tail[0][1].weight
    w0, got = w.numpy().copy(), w.grad.numpy()

    def loss_of(wv):
        with no_grad():
            w.assign(Tensor(wv)).realize()
        return np.asarray(-asm_ref(m, xs, ys)[0].mean())

    (gw,) = numeric_grad(loss_of, [w0], np.ones(()))
    close(got, gw, 1e-7)
    # PyTorch keeps a hidden size that rounds to 0 (8 // 4**2): that cluster is uniform
    tiny = nn.AdaptiveLogSoftmaxWithLoss(8, 12, [3, 7], dtype=F64)
    assert tiny.tail[1][0].weight.shape == (0, 8) and tiny.tail[1][1].weight.shape == (5, 0)
    res = tiny(Tensor(x), Tensor(y))
    close(res.output, asm_ref(tiny, x, y)[0])
    res.loss.backward()
    assert tiny.tail[0][0].weight.grad.shape == (2, 8)
    biased = nn.AdaptiveLogSoftmaxWithLoss(4, 5, [2], head_bias=True, dtype=F64)
    assert biased.head.bias.shape == (3,)
    close(
        biased(Tensor(x[:3, :4]), Tensor(y[:3] % 5)).output,
        asm_ref(biased, x[:3, :4], y[:3] % 5)[0],
    )


def test_adaptive_log_softmax_errors_name_the_problem():
    for cutoffs in ([], [3, 3], [5, 2], [0, 4], [4, 12], [2.5]):
        with pytest.raises(ArgumentError, match="cutoffs should be a sequence"):
            nn.AdaptiveLogSoftmaxWithLoss(8, 12, cutoffs)
    with pytest.raises(ArgumentError, match="div_value must be a positive number, got 0"):
        nn.AdaptiveLogSoftmaxWithLoss(8, 12, [3, 7], div_value=0)
    m = nn.AdaptiveLogSoftmaxWithLoss(8, 12, [3, 7])
    x = Tensor(r(4, 8).astype(np.float32))
    with pytest.raises(ArgumentError, match=r"Target values should be in \[0, 11\], but values in"):
        m(x, Tensor(np.array([0, 1, 12, 3])))
    with pytest.raises(ArgumentError, match="should have the same size in the batch dimension"):
        m(x, Tensor(np.array([0, 1, 2])))
    with pytest.raises(ArgumentError, match="multi-target not supported"):
        m(x, Tensor(np.zeros((4, 2), np.int64)))
    with pytest.raises(ArgumentError, match=r"input must be \(N, in_features\) with in_features=8"):
        m(Tensor(r(4, 5).astype(np.float32)), Tensor(np.zeros(4, np.int64)))
    with pytest.raises(TypeError, match="target must hold class indices, got float32"):
        m(x, Tensor(np.zeros(4, np.float32)))


# ---------------------------------------------------------------------------
# F.multi_head_attention_forward
# ---------------------------------------------------------------------------

E, HEADS, L, S, N = 8, 2, 3, 4, 2


def mha_ref(q, k, v, w_in, b_in, bias_k, bias_v, zero_attn, w_out, b_out, pad=None, mask=None,
            static=None, average=True):  # fmt: skip
    """PyTorch's multi-head attention in float64, (L, N, E) layout; ``mask``
    additive (L, S) or (N * heads, L, S), ``pad`` bool (N, S), ``static`` the
    (static_k, static_v) pair."""
    hd = E // HEADS
    wq, wk, wv = np.split(w_in, 3)
    bq, bk, bv = np.split(b_in, 3)
    qp, kp, vp = q @ wq.T + bq, k @ wk.T + bk, v @ wv.T + bv
    tgt, n = q.shape[:2]
    am = None
    if mask is not None:
        m4 = mask.reshape(-1, HEADS, tgt, mask.shape[-1]) if mask.ndim == 3 else mask
        am = np.broadcast_to(m4, (n, HEADS, tgt, mask.shape[-1])).copy()
    kpm = None if pad is None else np.where(pad, -np.inf, 0.0)[:, None, None, :]
    if bias_k is not None:
        kp = np.concatenate([kp, np.broadcast_to(bias_k, (1, n, E))])
        vp = np.concatenate([vp, np.broadcast_to(bias_v, (1, n, E))])
        am = None if am is None else np.pad(am, ((0, 0),) * 3 + ((0, 1),))
        kpm = None if kpm is None else np.pad(kpm, ((0, 0),) * 3 + ((0, 1),))

    def heads(t):
        return t.reshape(t.shape[0], n, HEADS, hd).transpose(1, 2, 0, 3)

    qh, kh, vh = heads(qp), heads(kp), heads(vp)
    if static is not None:
        kh, vh = (t.reshape(n, HEADS, -1, hd) for t in static)
    if zero_attn:
        kh = np.concatenate([kh, np.zeros((n, HEADS, 1, hd))], 2)
        vh = np.concatenate([vh, np.zeros((n, HEADS, 1, hd))], 2)
        am = None if am is None else np.pad(am, ((0, 0),) * 3 + ((0, 1),))
        kpm = None if kpm is None else np.pad(kpm, ((0, 0),) * 3 + ((0, 1),))
    scores = qh @ kh.transpose(0, 1, 3, 2) / math.sqrt(hd)
    scores = scores + (0 if am is None else am) + (0 if kpm is None else kpm)
    attn = np.exp(log_softmax(scores))
    out = (attn @ vh).transpose(2, 0, 1, 3).reshape(tgt, n, E) @ w_out.T + b_out
    return out, (attn.mean(1) if average else attn)


def test_multi_head_attention_forward():
    q, k, v = r(L, N, E), r(S, N, E), r(S, N, E)
    w_in, b_in, w_out, b_out = r(3 * E, E) * 0.4, r(3 * E) * 0.1, r(E, E) * 0.4, r(E) * 0.1
    bias_k, bias_v = r(1, 1, E), r(1, 1, E)
    pad = np.zeros((N, S), bool)
    pad[1, 0] = True
    mask = r(L, S)
    cases = [
        dict(),
        dict(pad=pad, mask=mask),
        dict(bias=True, pad=pad, mask=mask),
        dict(zero=True, mask=r(N * HEADS, L, S), average=False),
        dict(bias=True, zero=True, pad=pad),
        dict(static=(r(N * HEADS, S + 1, E // HEADS), r(N * HEADS, S + 1, E // HEADS))),
    ]
    for case in cases:
        bk, bv = (bias_k, bias_v) if case.get("bias") else (None, None)
        zero = case.get("zero", False)
        static = case.get("static", (None, None))
        want, want_w = mha_ref(
            q, k, v, w_in, b_in, bk, bv, zero, w_out, b_out, case.get("pad"), case.get("mask"),
            case.get("static"), case.get("average", True),
        )  # fmt: skip
        T = lambda a: None if a is None else Tensor(a)  # noqa: E731
        out, weights = F.multi_head_attention_forward(
            Tensor(q), Tensor(k), Tensor(v), E, HEADS, Tensor(w_in), Tensor(b_in), T(bk), T(bv),
            zero, 0.0, Tensor(w_out), Tensor(b_out), key_padding_mask=T(case.get("pad")),
            attn_mask=T(case.get("mask")), static_k=T(static[0]), static_v=T(static[1]),
            average_attn_weights=case.get("average", True),
        )  # fmt: skip
        close(out, want)
        close(weights, want_w)
        out2, none = F.multi_head_attention_forward(
            Tensor(q), Tensor(k), Tensor(v), E, HEADS, Tensor(w_in), Tensor(b_in), T(bk), T(bv),
            zero, 0.0, Tensor(w_out), Tensor(b_out), key_padding_mask=T(case.get("pad")),
            attn_mask=T(case.get("mask")), static_k=T(static[0]), static_v=T(static[1]),
            need_weights=False,
        )  # fmt: skip
        assert none is None
        close(out2, want)
    # unbatched, separate projection weights (kdim 5), bool masks
    k5, v5 = r(S, 5), r(S, 3)
    wq, wk, wv = r(E, E) * 0.4, r(E, 5) * 0.4, r(E, 3) * 0.4
    causal = np.triu(np.ones((L, S), bool), 1)
    out, weights = F.multi_head_attention_forward(
        Tensor(q[:, 0]), Tensor(k5), Tensor(v5), E, HEADS, None, None, None, None, False, 0.0,
        Tensor(w_out), None, attn_mask=Tensor(causal), use_separate_proj_weight=True,
        q_proj_weight=Tensor(wq), k_proj_weight=Tensor(wk), v_proj_weight=Tensor(wv),
    )  # fmt: skip
    qh = (q[:, 0] @ wq.T).reshape(L, HEADS, -1).transpose(1, 0, 2)
    kh = (k5 @ wk.T).reshape(S, HEADS, -1).transpose(1, 0, 2)
    vh = (v5 @ wv.T).reshape(S, HEADS, -1).transpose(1, 0, 2)
    attn = np.exp(log_softmax(qh @ kh.transpose(0, 2, 1) / 2 + np.where(causal, -np.inf, 0)))
    close(weights, attn.mean(0))
    close(out, (attn @ vh).transpose(1, 0, 2).reshape(L, E) @ w_out.T)


def test_multihead_attention_module_runs_the_function():
    mlfuse.manual_seed(2)
    m = nn.MultiheadAttention(E, HEADS, batch_first=True, dtype=F64)
    x, pad = r(N, L, E), np.array([[False, False, True], [False, False, False]])
    xt = Tensor(x, requires_grad=True)
    out, weights = m(xt, xt, xt, key_padding_mask=Tensor(pad))
    p = {k: t.numpy() for k, t in m.state_dict().items()}
    xs = x.transpose(1, 0, 2)
    want, want_w = mha_ref(xs, xs, xs, p["in_proj_weight"], p["in_proj_bias"], None, None, False,
                           p["out_proj.weight"], p["out_proj.bias"], pad)  # fmt: skip
    close(out, want.transpose(1, 0, 2))
    close(weights, want_w)
    g = r(N, L, E)
    (out * Tensor(g)).sum().backward()

    def f(a):
        a = a.transpose(1, 0, 2)
        out = mha_ref(a, a, a, p["in_proj_weight"], p["in_proj_bias"], None, None, False,
                      p["out_proj.weight"], p["out_proj.bias"], pad)[0]  # fmt: skip
        return out.transpose(1, 0, 2)

    (want_g,) = numeric_grad(f, [x], g)
    close(xt.grad, want_g, 1e-7)


def test_multi_head_attention_forward_errors_name_the_problem():
    q, k = Tensor(r(L, N, E)), Tensor(r(S, N, E))
    w_in, w_out = Tensor(r(3 * E, E)), Tensor(r(E, E))
    args = (None, None, False, 0.0, w_out, None)
    with pytest.raises(ArgumentError, match=r"in_proj_weight must be \(3E, E\) = \(24, 8\)"):
        F.multi_head_attention_forward(q, k, k, E, HEADS, Tensor(r(E, E)), None, *args)
    with pytest.raises(ArgumentError, match="query has 8 features, embed_dim is 6"):
        F.multi_head_attention_forward(q, k, k, 6, HEADS, w_in, None, *args)
    with pytest.raises(ArgumentError, match="embed_dim 8 must be divisible by num_heads 3"):
        F.multi_head_attention_forward(q, k, k, E, 3, w_in, None, *args)
    with pytest.raises(ArgumentError, match="bias_k and bias_v must be given together"):
        F.multi_head_attention_forward(q, k, k, E, HEADS, w_in, None, Tensor(r(1, 1, E)), None,
                                       False, 0.0, w_out, None)  # fmt: skip
    with pytest.raises(ArgumentError, match=r"static_k must be \(N \* num_heads, S, head_dim\)"):
        F.multi_head_attention_forward(q, k, k, E, HEADS, w_in, None, *args,
                                       static_k=Tensor(r(N, S, E)))  # fmt: skip
    with pytest.raises(ArgumentError, match="use_separate_proj_weight needs q_proj_weight"):
        F.multi_head_attention_forward(q, k, k, E, HEADS, None, None, *args,
                                       use_separate_proj_weight=True)  # fmt: skip
    with pytest.raises(ArgumentError, match=r"a 2-d attn_mask must be \(L, S\) = \(3, 4\)"):
        F.multi_head_attention_forward(q, k, k, E, HEADS, w_in, None, *args,
                                       attn_mask=Tensor(r(3, 3)))  # fmt: skip
    with pytest.raises(ArgumentError, match="MultiheadAttention: query has 6 features"):
        nn.MultiheadAttention(E, HEADS)(Tensor(r(L, N, 6)), k, k)


# ---------------------------------------------------------------------------
# uninitialized parameters of the lazy modules
# ---------------------------------------------------------------------------


def test_lazy_modules_hold_uninitialized_parameters():
    lin = nn.LazyLinear(4)
    assert isinstance(lin.weight, nn.UninitializedParameter)
    assert isinstance(lin.bias, nn.UninitializedParameter) and isinstance(lin.bias, nn.Parameter)
    assert lin.parameters() == [] and lin.state_dict() == {}
    assert nn.LazyConv2d(3, 2, bias=False).bias is None
    bn = nn.LazyBatchNorm2d()
    assert isinstance(bn.running_mean, nn.UninitializedBuffer)
    assert isinstance(bn.weight, nn.UninitializedParameter)
    assert not isinstance(bn.running_mean, nn.UninitializedParameter)
    inorm = nn.LazyInstanceNorm1d(affine=False, track_running_stats=False)
    assert inorm.weight is None and inorm.running_var is None
    with pytest.raises(ArgumentError, match="can't access 'shape' of an uninitialized parameter"):
        _ = lin.weight.shape
    with pytest.raises(AttributeError):
        _ = lin.weight.no_such_attribute
    y = lin(Tensor(r(2, 3).astype(np.float32)))
    assert y.shape == (2, 4) and lin.weight.shape == (4, 3)
    assert not isinstance(lin.weight, nn.UninitializedParameter)
    bn(Tensor(r(2, 3, 2, 2).astype(np.float32)))
    assert bn.running_mean.shape == (3,) and not isinstance(bn.running_mean, nn.UninitializedBuffer)
    p = nn.UninitializedParameter(dtype=F64).materialize((2, 3))
    assert p.shape == (2, 3) and p.dtype == F64 and p.requires_grad and isinstance(p, nn.Parameter)
    b = nn.UninitializedBuffer().materialize(4)
    assert b.shape == (4,) and not b.requires_grad
