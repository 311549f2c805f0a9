"""mlfuse.nn's recurrent layers (RNN, LSTM, GRU and their cells) against float64
numpy references written here, gradients against central differences, and,
where PyTorch is installed, against torch.nn with the same weights."""

from __future__ import annotations

import numpy as np
import pytest

import mlfuse
import mlfuse.nn as nn
from mlfuse import Tensor
from mlfuse.autograd import no_grad

F64 = np.float64
RNG = np.random.default_rng(7)
IN, H, N, T = 3, 4, 2, 2  # small sizes: a sequence of T steps is T lazy steps
T3 = 3  # the gradient checks: the backward loop carries a state through a middle step


def r(*shape) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def close(t, ref, tol=2e-5):
    np.testing.assert_allclose(t.numpy(), np.asarray(ref), rtol=tol, atol=tol)


def run(res):
    """Realize every tensor of a layer's result in one schedule (realizing them
    one by one would compute the shared sequence once for each)."""
    mlfuse.realize(*_flat(res))
    return res


# ---------------------------------------------------------------------------
# numpy references (float64, PyTorch's equations and gate order)
# ---------------------------------------------------------------------------


def _sig(x):
    return 1 / (1 + np.exp(-x))


def cell_ref(mode, x, h, c, w_ih, w_hh, b_ih=None, b_hh=None, w_hr=None):
    """One step: the new (h, c) (c is None but for an LSTM)."""
    gi = x @ w_ih.T + (0 if b_ih is None else b_ih)
    gh = h @ w_hh.T + (0 if b_hh is None else b_hh)
    if mode == "LSTM":
        i, f, g, o = np.split(gi + gh, 4, -1)
        c = _sig(f) * c + _sig(i) * np.tanh(g)
        h = _sig(o) * np.tanh(c)
        return (h if w_hr is None else h @ w_hr.T), c
    if mode == "GRU":
        ir, iz, in_ = np.split(gi, 3, -1)
        hr, hz, hn = np.split(gh, 3, -1)
        rr, z = _sig(ir + hr), _sig(iz + hz)
        n = np.tanh(in_ + rr * hn)
        return (1 - z) * n + z * h, None
    pre = gi + gh
    return (np.tanh(pre) if mode == "RNN_TANH" else np.maximum(pre, 0)), None


def seq_ref(mode, sd, x, h0, c0, num_layers, bidirectional, drop_between=False):
    """``(output, h_n, c_n)`` of x (T, N, IN) through the layers whose weights
    ``sd`` holds (PyTorch's names); ``drop_between``: the input of every layer
    after the first is zeros (dropout with p=1 while training)."""
    sd = {k: v.astype(F64) for k, v in sd.items()}
    dirs = 2 if bidirectional else 1
    inp = x.astype(F64)
    hn, cn = [], []
    for layer in range(num_layers):
        outs = []
        for d in range(dirs):
            sfx = f"_l{layer}" + ("_reverse" if d else "")
            w = [sd.get(f"{k}{sfx}") for k in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
            w.append(sd.get(f"weight_hr{sfx}"))
            k = layer * dirs + d
            h, c = h0[k].astype(F64), (c0[k].astype(F64) if c0 is not None else None)
            ys = [None] * inp.shape[0]
            order = range(inp.shape[0])
            for t in reversed(order) if d else order:
                h, c = cell_ref(mode, inp[t], h, c, *w)
                ys[t] = h
            hn.append(h)
            cn.append(c)
            outs.append(np.stack(ys))
        inp = np.concatenate(outs, -1)
        if drop_between and layer < num_layers - 1:
            inp = inp * 0
    return inp, np.stack(hn), (np.stack(cn) if mode == "LSTM" else None)


def state_np(m) -> dict:
    return {k: v.numpy() for k, v in m.state_dict().items()}


# ---------------------------------------------------------------------------
# forward against numpy (inference; the gradient checks below compare the
# training forward, which also keeps the gate values, with the same references)
# ---------------------------------------------------------------------------


@no_grad()
def test_lstm_bidirectional_batch_first_with_state():
    m = nn.LSTM(IN, H, bidirectional=True, batch_first=True)
    x, h0, c0 = r(N, T, IN), r(2, N, H), r(2, N, H)
    out, (hn, cn) = run(m(Tensor(x), (Tensor(h0), Tensor(c0))))
    assert out.shape == (N, T, 2 * H) and hn.shape == (2, N, H) and cn.shape == (2, N, H)
    want, wh, wc = seq_ref("LSTM", state_np(m), x.transpose(1, 0, 2), h0, c0, 1, True)
    close(out, want.transpose(1, 0, 2))
    close(hn, wh)
    close(cn, wc)


@no_grad()
def test_gru_bidirectional_unbatched_without_state():
    m = nn.GRU(IN, H, bidirectional=True, batch_first=True)  # batch_first: no effect unbatched
    x = r(T, IN)
    out, hn = run(m(Tensor(x)))
    assert out.shape == (T, 2 * H) and hn.shape == (2, H)
    zeros = np.zeros((2, 1, H), np.float32)
    want, wh, _ = seq_ref("GRU", state_np(m), x[:, None], zeros, None, 1, True)
    close(out, want[:, 0])
    close(hn, wh[:, 0])


@no_grad()
def test_rnn_relu_two_layers_bidirectional_dropout_only_while_training():
    m = nn.RNN(IN, H, 2, "relu", bias=False, dropout=1.0, bidirectional=True)
    assert "bias_ih_l0" not in m.state_dict()
    assert m.weight_ih_l1_reverse.shape == (H, 2 * H)
    x, h0 = r(T, N, IN), r(4, N, H)
    out, hn = run(m(Tensor(x), Tensor(h0)))  # p=1 while training: the second layer sees zeros
    want, wh, _ = seq_ref("RNN_RELU", state_np(m), x, h0, None, 2, True, drop_between=True)
    close(out, want)
    close(hn, wh)
    m.eval()
    out, hn = run(m(Tensor(x), Tensor(h0)))
    want, wh, _ = seq_ref("RNN_RELU", state_np(m), x, h0, None, 2, True)
    close(out, want)
    close(hn, wh)


@no_grad()
def test_cells_batched_unbatched_and_tinygrad_call():
    x, h, c = r(N, IN), r(N, H), r(N, H)
    lstm = nn.LSTMCell(IN, H)
    sd = state_np(lstm)
    w = [sd["weight_ih"], sd["weight_hh"], sd["bias_ih"], sd["bias_hh"]]
    h1, c1 = run(lstm(Tensor(x), (Tensor(h), Tensor(c))))  # PyTorch's and tinygrad's call
    wh1, wc1 = cell_ref("LSTM", x.astype(F64), h, c, *w)
    close(h1, wh1)
    close(c1, wc1)
    h2, c2 = run(lstm(Tensor(x), (h1, c1)))  # chained steps
    wh2, wc2 = cell_ref("LSTM", x.astype(F64), wh1, wc1, *w)
    close(h2, wh2)
    close(c2, wc2)
    h0, c0 = run(lstm(Tensor(x[0]), None))  # unbatched, starting from zeros (tinygrad's hc=None)
    assert h0.shape == (H,) and c0.shape == (H,)
    z = np.zeros(H)
    close(h0, cell_ref("LSTM", x[0].astype(F64), z, z, *w)[0])
    gru, rnn = nn.GRUCell(IN, H), nn.RNNCell(IN, H, nonlinearity="relu")
    sd = state_np(gru)
    w = [sd["weight_ih"], sd["weight_hh"], sd["bias_ih"], sd["bias_hh"]]
    close(gru(Tensor(x), Tensor(h)), cell_ref("GRU", x.astype(F64), h, None, *w)[0])
    sd = state_np(rnn)
    w = [sd["weight_ih"], sd["weight_hh"], sd["bias_ih"], sd["bias_hh"]]
    close(rnn(Tensor(x[1])), cell_ref("RNN_RELU", x[1].astype(F64), z, None, *w)[0])


# ---------------------------------------------------------------------------
# parameters, state dicts, initialisation
# ---------------------------------------------------------------------------


def test_parameter_names_shapes_and_init():
    m = nn.LSTM(IN, H, num_layers=2, bidirectional=True, proj_size=2)
    names = [k for k, _ in m.named_parameters()]
    want = []
    for layer in range(2):
        for sfx in ("", "_reverse"):
            s = f"_l{layer}{sfx}"
            want += [
                f"weight_ih{s}",
                f"weight_hh{s}",
                f"bias_ih{s}",
                f"bias_hh{s}",
                f"weight_hr{s}",
            ]
    assert names == want
    sd = m.state_dict()
    assert sd["weight_ih_l0"].shape == (4 * H, IN)
    assert sd["weight_ih_l1_reverse"].shape == (4 * H, 2 * 2)  # two directions of proj_size
    assert sd["weight_hh_l1"].shape == (4 * H, 2)
    assert sd["weight_hr_l0_reverse"].shape == (2, H)
    values = np.concatenate([v.numpy().ravel() for v in sd.values()])
    assert np.abs(values).max() <= 1 / np.sqrt(H) and values.std() > 0.2  # uniform +-1/sqrt(H)
    gru = nn.GRU(IN, H)
    assert {k: v.shape for k, v in gru.state_dict().items()} == {
        "weight_ih_l0": (3 * H, IN), "weight_hh_l0": (3 * H, H),
        "bias_ih_l0": (3 * H,), "bias_hh_l0": (3 * H,),
    }  # fmt: skip
    cell = nn.LSTMCell(IN, H, bias=False)
    assert [k for k, _ in cell.named_parameters()] == ["weight_ih", "weight_hh"]
    assert nn.RNNCell(IN, H).weight_hh.shape == (H, H)
    assert sum(p.numel() for p in nn.RNN(IN, H).parameters()) == H * IN + H * H + 2 * H
    m.flatten_parameters()  # PyTorch's cuDNN call: nothing to do
    assert "proj_size=2" in repr(m) and "bidirectional=True" in repr(m)
    with no_grad():
        m2 = nn.LSTM(IN, H, num_layers=2, bidirectional=True, proj_size=2)
        m2.load_state_dict(state_np(m))
    np.testing.assert_array_equal(m2.weight_hr_l1.numpy(), m.weight_hr_l1.numpy())


# ---------------------------------------------------------------------------
# gradients against central differences (float64)
# ---------------------------------------------------------------------------


def _check_directional_grads(m, mode: str, x, state, batch_first=False):
    """backward() of a weighted sum of every result, against the float64 numpy
    reference: the loss itself, and for each input and parameter the gradient
    dotted with a random direction against the reference's central difference
    along it."""
    names = [k for k, _ in m.named_parameters()]
    base = {k: v.numpy() for k, v in m.state_dict().items()}
    xs = {"x": x, **{f"state{i}": s for i, s in enumerate(state)}}
    ws = None

    def ref_parts(vals):
        if vals["x"].ndim == 2:  # unbatched: a batch of one in the middle
            parts = ref_parts({k: v[:, None] if k[0] in "xs" else v for k, v in vals.items()})
            return [p[:, 0] for p in parts]
        xt = vals["x"].transpose(1, 0, 2) if batch_first else vals["x"]
        c0 = vals.get("state1")
        out, hn, cn = seq_ref(mode, vals, xt, vals["state0"], c0, 1, False)
        out = out.transpose(1, 0, 2) if batch_first else out
        return [out, hn] + ([cn] if c0 is not None else [])

    def ref_loss(vals) -> float:
        return sum((p * w).sum() for p, w in zip(ref_parts(vals), ws))

    ws = [RNG.standard_normal(p.shape) for p in ref_parts({**xs, **base})]
    leaves = {k: Tensor(v, requires_grad=True) for k, v in xs.items()}
    st = [leaves[f"state{i}"] for i in range(len(state))]
    res = _flat(m(leaves["x"], st[0] if len(st) == 1 else tuple(st)))
    loss = sum((p * Tensor(w)).sum() for p, w in zip(res, ws))
    loss.backward()
    params = dict(m.named_parameters())
    mlfuse.realize(loss, *[t.grad for t in leaves.values()], *[params[k].grad for k in names])
    np.testing.assert_allclose(loss.item(), ref_loss({**xs, **base}), rtol=1e-12)
    grads = {k: t.grad.numpy() for k, t in leaves.items()}
    grads |= {k: params[k].grad.numpy() for k in names}
    eps = 1e-6
    for k, g in grads.items():
        d = RNG.standard_normal(g.shape)
        up, down = {**xs, **base}, {**xs, **base}
        up[k], down[k] = up[k] + eps * d, down[k] - eps * d
        numeric = (ref_loss(up) - ref_loss(down)) / (2 * eps)
        np.testing.assert_allclose((g * d).sum(), numeric, rtol=1e-6, atol=1e-8, err_msg=k)


def test_lstm_gradients_central_differences():
    # with a projection (its gradient and the gates'), unbatched, from a given state
    m = nn.LSTM(2, 3, proj_size=2, dtype=mlfuse.float64)
    assert m.weight_hr_l0.shape == (2, 3) and m.weight_hh_l0.shape == (12, 2)
    x, h0, c0 = (RNG.standard_normal(s) for s in ((T3, 2), (1, 2), (1, 3)))
    _check_directional_grads(m, "LSTM", x, (h0, c0))


def test_gru_gradients_central_differences():
    m = nn.GRU(2, 3, batch_first=True, dtype=mlfuse.float64)
    x, h0 = RNG.standard_normal((2, T, 2)), RNG.standard_normal((1, 2, 3))
    _check_directional_grads(m, "GRU", x, (h0,), batch_first=True)


def test_rnn_gradients_central_differences():
    m = nn.RNN(2, 3, dtype=mlfuse.float64)
    x, h0 = RNG.standard_normal((T3, 2, 2)), RNG.standard_normal((1, 2, 3))
    _check_directional_grads(m, "RNN_TANH", x, (h0,))


# ---------------------------------------------------------------------------
# bad arguments
# ---------------------------------------------------------------------------


def test_bad_arguments_name_the_problem():
    m = nn.LSTM(IN, H, num_layers=2)
    with pytest.raises(mlfuse.ArgumentError, match="input has 5 features.*input_size is 3"):
        m(Tensor(r(T, N, 5)))
    with pytest.raises(
        mlfuse.ArgumentError, match=r"h_0 must have shape \(2, 2, 4\), got \(1, 2, 4\)"
    ):
        m(Tensor(r(T, N, IN)), (Tensor(r(1, N, H)), Tensor(r(2, N, H))))
    with pytest.raises(mlfuse.ArgumentError, match="c_0 must have shape"):
        m(Tensor(r(T, N, IN)), (Tensor(r(2, N, H)), Tensor(r(2, N, 3))))
    with pytest.raises(mlfuse.ArgumentError, match="unbatched input h_0 must be 2-d"):
        m(Tensor(r(T, IN)), (Tensor(r(2, N, H)), Tensor(r(2, N, H))))
    with pytest.raises(mlfuse.ArgumentError, match=r"hx must be a tuple \(h_0, c_0\)"):
        m(Tensor(r(T, N, IN)), Tensor(r(2, N, H)))
    with pytest.raises(mlfuse.ArgumentError, match="3-d .batched. or 2-d"):
        m(Tensor(r(1, T, N, IN)))
    with pytest.raises(mlfuse.ArgumentError, match="hx must have shape"):
        nn.GRU(IN, H)(Tensor(r(T, N, IN)), Tensor(r(1, 3, H)))
    with pytest.raises(mlfuse.ArgumentError, match="nonlinearity must be 'tanh' or 'relu'"):
        nn.RNN(IN, H, nonlinearity="sigmoid")
    with pytest.raises(mlfuse.ArgumentError, match="proj_size 4 has to be smaller"):
        nn.LSTM(IN, H, proj_size=4)
    with pytest.raises(mlfuse.ArgumentError, match="dropout must be a number in"):
        nn.LSTM(IN, H, dropout=1.5)
    with pytest.raises(mlfuse.ArgumentError, match="hidden_size must be a positive int"):
        nn.GRU(IN, 0)
    with pytest.raises(mlfuse.ArgumentError, match="input must be a float tensor"):
        nn.RNN(IN, H)(Tensor(np.zeros((T, N, IN), np.int64)))
    cell = nn.LSTMCell(IN, H)
    with pytest.raises(mlfuse.ArgumentError, match="input has 2 features.*input_size is 3"):
        cell(Tensor(r(N, 2)))
    with pytest.raises(mlfuse.ArgumentError, match=r"h must have shape \(2, 4\), got \(2, 5\)"):
        cell(Tensor(r(N, IN)), (Tensor(r(N, 5)), Tensor(r(N, H))))
    with pytest.raises(mlfuse.ArgumentError, match="expected input to be 1-d or 2-d"):
        nn.GRUCell(IN, H)(Tensor(r(1, N, IN)))


# ---------------------------------------------------------------------------
# against PyTorch (skipped where it is not installed)
# ---------------------------------------------------------------------------


def _torch_pair(name: str, *args, **kwargs):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    theirs = getattr(torch.nn, name)(*args, **kwargs)
    ours = getattr(nn, name)(*args, **kwargs)
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    return torch, theirs, ours


def _flat(res) -> list:
    if isinstance(res, (tuple, list)):
        return [t for part in res for t in _flat(part)]
    return [res]


def _compare_with_torch(torch, theirs, ours, x, state=None, tol=1e-4):
    """Outputs and every gradient (parameters, input, initial state) of a
    weighted sum of the outputs."""
    xt, xm = torch.tensor(x, requires_grad=True), Tensor(x, requires_grad=True)
    st = [torch.tensor(s, requires_grad=True) for s in state or ()]
    sm = [Tensor(s, requires_grad=True) for s in state or ()]
    wrap = lambda s: () if not s else (s[0],) if len(s) == 1 else (tuple(s),)  # noqa: E731
    rt, rm = _flat(theirs(xt, *wrap(st))), _flat(run(ours(xm, *wrap(sm))))
    assert len(rt) == len(rm)
    ws = [r(*a.shape) for a in rt]
    for a, b in zip(rt, rm):
        assert tuple(a.shape) == b.shape
        close(b, a.detach().numpy(), tol)
    sum((a * torch.tensor(w)).sum() for a, w in zip(rt, ws)).backward()
    sum((b * Tensor(w)).sum() for b, w in zip(rm, ws)).backward()
    mine = dict(ours.named_parameters())
    mlfuse.realize(*[p.grad for p in mine.values()], xm.grad, *[t.grad for t in sm])
    for k, p in theirs.named_parameters():
        close(mine[k].grad, p.grad.numpy(), tol)
    for a, b in zip([xt, *st], [xm, *sm]):
        close(b.grad, a.grad.numpy(), tol)


def test_lstm_against_torch_with_gradients():
    torch, theirs, ours = _torch_pair("LSTM", IN, H, bidirectional=True, batch_first=True)
    _compare_with_torch(torch, theirs, ours, r(N, T, IN), [r(2, N, H), r(2, N, H)])


def test_stacked_bidirectional_lstm_against_torch():
    torch, theirs, ours = _torch_pair("LSTM", IN, H, num_layers=2, bidirectional=True)
    x, h0, c0 = r(T, N, IN), r(4, N, H), r(4, N, H)
    want = _flat(theirs(torch.tensor(x), (torch.tensor(h0), torch.tensor(c0))))
    with no_grad():
        got = _flat(run(ours(Tensor(x), (Tensor(h0), Tensor(c0)))))
    for a, b in zip(want, got):
        close(b, a.detach().numpy(), 1e-4)


@pytest.mark.parametrize(
    "name,kwargs,x,state",
    [
        ("GRU", {"batch_first": True}, (N, T, IN), [(1, N, H)]),
        ("RNN", {"nonlinearity": "relu", "num_layers": 2}, (T, N, IN), []),
        ("LSTM", {"proj_size": 2}, (T, IN), [(1, 2), (1, H)]),
        ("GRUCell", {}, (N, IN), [(N, H)]),
        ("LSTMCell", {}, (IN,), [(H,), (H,)]),
        ("RNNCell", {"nonlinearity": "tanh"}, (N, IN), []),
    ],
)
def test_layers_against_torch(name, kwargs, x, state):
    torch, theirs, ours = _torch_pair(name, IN, H, **kwargs)
    _compare_with_torch(torch, theirs, ours, r(*x), [r(*s) for s in state])
