"""Packed sequences (``nn.utils.rnn.pack_padded_sequence`` and friends) and the
recurrent layers given them: the layout against numpy, a packed batch against
each sequence run alone through the same layer, and PyTorch where installed."""

from __future__ import annotations

import numpy as np
import pytest

import mlfuse
from mlfuse import nn
from mlfuse.nn.utils import rnn

RNG = np.random.default_rng(3)
T, B, D, H = 5, 4, 3, 2
X = RNG.standard_normal((T, B, D))
LENS = [3, 5, 1, 3]


def test_packing_layout_and_round_trip():
    p = rnn.pack_padded_sequence(mlfuse.tensor(X), LENS, enforce_sorted=False)
    order = [1, 0, 3, 2]  # by decreasing length, ties in batch order
    assert p.sorted_indices.tolist() == order and p.unsorted_indices.tolist() == [1, 0, 3, 2]
    assert p.batch_sizes.tolist() == [4, 3, 3, 1, 1]
    want = np.concatenate([X[t, [b for b in order if LENS[b] > t]] for t in range(T)])
    np.testing.assert_array_equal(p.data.numpy(), want)
    padded, lens = rnn.pad_packed_sequence(p, batch_first=True, padding_value=-1.0, total_length=6)
    assert lens.tolist() == LENS and padded.shape == (B, 6, D)
    for b, n in enumerate(LENS):
        np.testing.assert_array_equal(padded.numpy()[b, :n], X[:n, b])
        assert (padded.numpy()[b, n:] == -1.0).all()
    seqs = [mlfuse.tensor(RNG.standard_normal((n, D))) for n in (4, 2, 2)]
    back = rnn.unpack_sequence(rnn.pack_sequence(seqs))
    for s, r in zip(seqs, back):
        np.testing.assert_array_equal(r.numpy(), s.numpy())


def test_packing_errors():
    x = mlfuse.tensor(X)
    with pytest.raises(mlfuse.ArgumentError, match="sorted in decreasing order"):
        rnn.pack_padded_sequence(x, LENS)
    with pytest.raises(mlfuse.ArgumentError, match="every length must be positive"):
        rnn.pack_padded_sequence(x, [3, 0, 1, 1], enforce_sorted=False)
    with pytest.raises(mlfuse.ArgumentError, match="expected 4 lengths"):
        rnn.pack_padded_sequence(x, [3, 2])
    with pytest.raises(mlfuse.ArgumentError, match="longer than the input's 5 steps"):
        rnn.pack_padded_sequence(x, [6, 2, 1, 1])
    p = rnn.pack_padded_sequence(x, [5, 3, 3, 1])
    with pytest.raises(mlfuse.ArgumentError, match="total_length 4 is shorter"):
        rnn.pad_packed_sequence(p, total_length=4)


@pytest.mark.parametrize(
    "cls, bidirectional, layers", [(nn.LSTM, True, 1), (nn.GRU, False, 2), (nn.RNN, True, 1)]
)
def test_a_packed_batch_is_each_sequence_run_alone(cls, bidirectional, layers):
    m = cls(D, H, num_layers=layers, bidirectional=bidirectional, dtype=mlfuse.float64)
    dirs = 2 if bidirectional else 1
    h0 = RNG.standard_normal((layers * dirs, B, H))
    hx = (mlfuse.tensor(h0), mlfuse.tensor(h0 * 0.5)) if cls is nn.LSTM else mlfuse.tensor(h0)
    p = rnn.pack_padded_sequence(mlfuse.tensor(X), LENS, enforce_sorted=False)
    out, state = m(p, hx)
    assert isinstance(out, rnn.PackedSequence)
    assert out.batch_sizes.tolist() == p.batch_sizes.tolist()
    padded, _ = rnn.pad_packed_sequence(out)
    h_n = state[0] if cls is nn.LSTM else state
    mlfuse.realize(padded, h_n)  # one program
    for b, n in enumerate(LENS):
        one = (mlfuse.tensor(h0[:, b]), mlfuse.tensor(h0[:, b] * 0.5)) if cls is nn.LSTM else (
            mlfuse.tensor(h0[:, b]))  # fmt: skip
        with mlfuse.no_grad():
            o, s = m(mlfuse.tensor(X[:n, b]), one)  # unbatched: (n, D)
            mlfuse.realize(o, s[0] if cls is nn.LSTM else s)
        np.testing.assert_allclose(padded.numpy()[:n, b], o.numpy(), rtol=1e-12, atol=1e-12)
        assert (padded.numpy()[n:, b] == 0).all()
        s_h = s[0] if cls is nn.LSTM else s
        np.testing.assert_allclose(h_n.numpy()[:, b], s_h.numpy(), rtol=1e-12, atol=1e-12)


def test_packed_lstm_against_torch():
    torch = pytest.importorskip("torch")
    tr = torch.nn.utils.rnn
    tm = torch.nn.LSTM(D, H, num_layers=2, bidirectional=True, batch_first=True).double()
    m = nn.LSTM(D, H, num_layers=2, bidirectional=True, batch_first=True, dtype=mlfuse.float64)
    m.load_state_dict({k: v.detach().numpy() for k, v in tm.state_dict().items()})
    xb = X.transpose(1, 0, 2)
    out, (h, c) = m(rnn.pack_padded_sequence(mlfuse.tensor(xb), LENS, True, False))
    tout, (th, tc) = tm(tr.pack_padded_sequence(torch.tensor(xb), torch.tensor(LENS), True, False))
    np.testing.assert_allclose(out.data.numpy(), tout.data.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(h.numpy(), th.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(c.numpy(), tc.detach().numpy(), rtol=1e-10)
