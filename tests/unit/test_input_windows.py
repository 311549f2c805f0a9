"""Slices of realized tensors: views of their buffers, programs compiled for the part read.

A movement op of a realized tensor is a view of its memory (``graph.fold_views``),
and a program reading part of an input buffer runs on a window of it
(``graph.input_windows``, ``Target.window``), so the next slice of the same
shape runs the same program: a training loop over the batches of a realized
dataset compiles its step once, not once per batch.
"""

import numpy as np
import pytest

import mlfuse
from mlfuse import Tensor, graph
from mlfuse.targets import get_target
from mlfuse.view import View


def programs() -> int:
    return len(graph._programs)


def test_batches_of_a_dataset_share_one_program():
    rng = np.random.default_rng(0)
    data = rng.standard_normal((96, 12)).astype(np.float32)
    w = rng.standard_normal((12, 5)).astype(np.float32)
    X, W = Tensor(data).realize(), Tensor(w).realize()
    ((X[0:16] @ W).relu().sum(0)).numpy()  # compile once
    before = programs()
    for i in range(1, 6):
        got = ((X[i * 16 : (i + 1) * 16] @ W).relu().sum(0)).numpy()
        ref = np.maximum(data[i * 16 : (i + 1) * 16].astype(np.float64) @ w, 0).sum(0)
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)
    assert programs() == before


def test_unaligned_slices_read_the_right_elements():
    # rows of 7 floats: starts are rounded down to 64 bytes, so the windows'
    # offsets differ (a few programs), and every slice must read its own rows
    data = np.arange(40 * 7, dtype=np.float32).reshape(40, 7)
    X = Tensor(data).realize()
    for i in range(40):
        np.testing.assert_array_equal((X[i] * 2 + 1).numpy(), data[i] * 2 + 1)


def test_views_of_every_kind_of_a_realized_tensor():
    data = np.random.default_rng(1).standard_normal((6, 8, 10))
    X = Tensor(data).realize()
    cases = [
        (lambda t: t[2:4, 1:7:2, ::-1], lambda a: a[2:4, 1:7:2, ::-1]),
        (lambda t: t.permute(2, 0, 1)[3:], lambda a: a.transpose(2, 0, 1)[3:]),
        (lambda t: t[1, :, 4:5].expand(8, 3), lambda a: np.broadcast_to(a[1, :, 4:5], (8, 3))),
        (lambda t: t[5].reshape(4, 20), lambda a: a[5].reshape(4, 20)),
        (lambda t: t.flip(0)[1:3], lambda a: a[::-1][1:3]),
    ]
    for f, ref in cases:
        np.testing.assert_array_equal((f(X) + 0).numpy(), ref(data))
        np.testing.assert_array_equal(f(X).numpy(), ref(data))  # the view itself, no kernel


def test_a_slice_of_a_realized_tensor_is_a_view_of_its_buffer():
    X = Tensor(np.arange(12.0).reshape(3, 4)).realize()
    s = X[1:3, 1:]
    s.realize()
    assert s.node.buffer is X.node.buffer
    assert s.node.view == View.create((2, 3), (4, 1), 5)
    np.testing.assert_array_equal(s.numpy(), np.arange(12.0).reshape(3, 4)[1:3, 1:])


def test_an_assign_reaches_the_slices_of_its_target_but_not_their_copies():
    X = Tensor(np.arange(8.0)).realize()
    s = X[2:5]
    (s + 0).numpy()  # s is now a view of X's buffer
    k = X[2:5].contiguous().realize()  # a copy, realized as a window of X's buffer
    assert k.node.buffer is X.node.buffer
    X.assign(Tensor(np.zeros(8))).realize()
    np.testing.assert_array_equal(X.numpy(), np.zeros(8))
    np.testing.assert_array_equal(s.numpy(), [0.0, 0.0, 0.0])  # a view, as PyTorch's
    np.testing.assert_array_equal(k.numpy(), [2.0, 3.0, 4.0])


def test_gradients_through_slices_of_a_realized_leaf():
    data = np.random.default_rng(2).standard_normal((8, 4))
    X = Tensor(data, requires_grad=True)
    X.realize()
    loss = (X[2:6] * X[4:8]).sum()
    loss.backward()
    ref = np.zeros_like(data)
    ref[2:6] += data[4:8]
    ref[4:8] += data[2:6]
    np.testing.assert_allclose(X.grad.numpy(), ref, rtol=1e-12)


def test_jit_replays_programs_on_windows_of_new_arguments():
    @mlfuse.jit
    def f(x):
        return x[3:7] * 2 + x[0:4]

    for k in range(4):
        a = np.random.default_rng(k).standard_normal(64).astype(np.float32)
        np.testing.assert_allclose(f(Tensor(a)).numpy(), a[3:7] * 2 + a[0:4], rtol=1e-6)


@pytest.mark.parametrize("device", ["cpu", "cuda_sim"])
def test_a_window_aliases_its_base(device):
    t = get_target(device)
    base = t.from_numpy(np.arange(100, dtype=np.float32))
    w = t.window(base, 64, 20)
    assert (w.base, w.base_offset, w.size) == (base, 64, 20)
    np.testing.assert_array_equal(t.to_numpy(w), np.arange(64, 84, dtype=np.float32))
    with pytest.raises(ValueError, match=r"window \[90, 110\) does not fit"):
        t.window(base, 90, 20)


def test_a_node_realized_as_a_window_views_the_base():
    t = get_target("cpu")
    base = t.from_numpy(np.arange(100, dtype=np.float32))
    n = graph.Node("buffer", (), None, (4, 5), mlfuse.dtypes.float32, "cpu")
    n.become(t.window(base, 64, 20))
    assert n.buffer is base
    assert n.view == View.create((4, 5), None, 64)
    np.testing.assert_array_equal(
        graph.host_array(n), np.arange(64, 84, dtype=np.float32).reshape(4, 5)
    )


def test_an_assign_in_place_reads_views_of_its_target_first():
    a = np.arange(16.0).reshape(4, 4)
    x = Tensor(a).realize()
    buf = x.node.buffer
    x.assign(x + x.T * 10)  # x.T: a view of x's buffer, read before x is written
    x.realize()
    assert x.node.buffer is buf  # still in place
    np.testing.assert_array_equal(x.numpy(), a + a.T * 10)


def test_an_assign_keeps_a_held_copy_of_its_target():
    a = np.arange(16.0).reshape(4, 4)
    x = Tensor(a).realize()
    t = x.T
    c = x[1:3].clone()
    mlfuse.realize(t, c)
    assert t.node.buffer is x.node.buffer and c.node.buffer is x.node.buffer
    x.assign(x + 1).realize()
    np.testing.assert_array_equal(x.numpy(), a + 1)
    np.testing.assert_array_equal(t.numpy(), a.T + 1)  # the view follows
    np.testing.assert_array_equal(c.numpy(), a[1:3])  # the copy does not


def test_batches_on_the_simulated_gpu_share_one_program():
    data = np.random.default_rng(3).standard_normal((8, 64)).astype(np.float32)
    X = Tensor(data, device="cuda_sim").realize()
    (X[0:2] * 2).sum(1).numpy()
    before = programs()
    for i in range(2, 8, 2):  # 2 rows of 64 floats: starts on 512-byte boundaries
        got = (X[i : i + 2] * 2).sum(1).numpy()
        np.testing.assert_allclose(got, (data[i : i + 2] * 2).sum(1), rtol=1e-5)
    assert programs() == before


def test_steps_reading_rows_of_a_computed_tensor_share_one_kernel():
    # a recurrence over rows of a value computed in the same program: each
    # step's kernel reads row t of it; window-kernel-inputs passes the row's
    # window, so the steps are one kernel text, compiled once
    rng = np.random.default_rng(6)
    x = rng.standard_normal((6, 4, 16)).astype(np.float32)
    w = (rng.standard_normal((16, 16)) * 0.3).astype(np.float32)
    g = Tensor(x) * 2 + 1  # computed here, stored once
    h, ref = Tensor.zeros(4, 16), np.zeros((4, 16))
    for t in range(6):
        h = (g[t] + h @ Tensor(w)).tanh()
        ref = np.tanh(x[t].astype(np.float64) * 2 + 1 + ref @ w)
    c = graph.compiled_for(graph.collect(graph.to_compute([h.node])))
    launches = c.program.launches
    assert len(launches) >= 6
    assert len({id(launch.kernel) for launch in launches}) <= 3
    assert "kernel.window" in str(c.module)
    np.testing.assert_allclose(h.numpy(), ref, rtol=1e-5, atol=1e-5)


def test_writes_at_an_index_share_one_program():
    # out[i] = f(x[i]) into a realized tensor: the index is a scalar of the
    # program (compared with an iota), x[i] a window, so the rows after the
    # third compile nothing (the first writes into zeros, a constant; the
    # third makes the index an argument)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((24, 3, 32)).astype(np.float32)
    X = Tensor(x).realize()
    out = Tensor.zeros(24, 32).contiguous().realize()
    cache = Tensor.zeros(2, 24, 32).contiguous().realize()
    want, want_cache = np.zeros((24, 32)), np.zeros((2, 24, 32))
    for i in range(24):
        if i == 3:
            before = programs()
        out[i] = X[i].exp().sum(0) * 2
        cache[:, i] = X[i, 1:]  # a KV cache's write at position i
        out.realize(cache)
        want[i] = np.exp(x[i].astype(np.float64)).sum(0) * 2
        want_cache[:, i] = x[i, 1:]
    assert programs() == before
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5)
    np.testing.assert_array_equal(cache.numpy(), want_cache)
    # a value that reads the tensor it is written into stays one kernel in place
    buf = out.node.buffer
    out[5] = out[5] + 1
    assert len(mlfuse.schedule(out)) == 1
    out.realize()
    assert out.node.buffer is buf
    want[5] += 1
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5)
