"""Movement ops through the whole compiler: lazy IR -> kernels -> LLVM -> run.

A chain of movement ops on a realized buffer followed by one elementwise op
(or one reduce) must be a single kernel reading the buffer through a view
and match numpy element for element.
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from movement import movement_chain, numpy_apply, property_settings

import mlfuse
from mlfuse import Tensor

FINAL = {
    "add": (lambda t: t + 1, lambda x: x + 1),
    "exp": (lambda t: (t * 0.01).exp(), lambda x: np.exp(x * np.float32(0.01))),
    "sum_last": (
        lambda t: t.sum(-1 if t.ndim else None),
        lambda x: x.sum(-1 if x.ndim else None),
    ),
}


def run_chain(shape, ops, final: str):
    base = np.arange(1, int(np.prod(shape)) + 1, dtype=np.float32).reshape(shape)
    t, x = Tensor(base), base
    for name, arg in ops:
        method = "_stride_view" if name == "stride" else name  # (Tensor.stride is PyTorch's)
        t = getattr(t, method)(*(arg,) if name not in ("reshape", "expand", "stride") else arg)
        x = numpy_apply(x, name, arg)
    f_t, f_x = FINAL[final]
    return f_t(t), f_x(x)


@property_settings
@given(movement_chain(), st.sampled_from(sorted(FINAL)))
def test_random_chains_compile_to_one_kernel_and_match_numpy(chain, final):
    shape, ops = chain
    out, want = run_chain(shape, ops, final)
    items = mlfuse.schedule(out)
    assert len(items) <= 1, [str(i) for i in items]
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-6, err_msg=f"{shape} {ops} {final}")


def test_movement_only_graph_reads_through_one_view():
    x = np.arange(48, dtype=np.float32).reshape(6, 8)
    t = Tensor(x).T[1:7].pad(((1, 0), (2, 2))).flip(1).reshape(7, 5, 2)[:, ::2] + 1
    want = np.pad(x.T[1:7], ((1, 0), (2, 2)))[:, ::-1].reshape(7, 5, 2)[:, ::2] + 1
    (item,) = mlfuse.schedule(t)
    # reads the realized buffer itself, no copy kernel: the window up to x[5, 6]
    # (x.T[1:7] never reads x[5, 7], the last element)
    assert item.inputs == [x.nbytes - 4]
    assert "kernel.load" in item.ir and "mask" in item.ir
    np.testing.assert_array_equal(t.numpy(), want)


def test_transpose_add_is_one_kernel():
    x, y = np.random.default_rng(0).standard_normal((2, 33, 17)).astype(np.float32)
    x = x.reshape(17, 33)
    out = Tensor(x).T + Tensor(y)
    (item,) = mlfuse.schedule(out)
    assert "strides [1, 33]" in item.ir  # x read transposed, in place
    np.testing.assert_array_equal(out.numpy(), x.T + y)


@pytest.mark.parametrize("n, ci, co, hw", [(2, 3, 4, 9), (1, 5, 2, 6)])
def test_conv3x3_from_padded_windows(n, ci, co, hw):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((n, ci, hw, hw)).astype(np.float32)
    w = rng.standard_normal((co, ci, 3, 3)).astype(np.float32)
    xp = Tensor(x).pad(((0, 0), (0, 0), (1, 1), (1, 1)))
    out = None
    for i in range(3):
        for j in range(3):
            win = xp[:, :, i : i + hw, j : j + hw].reshape(n, 1, ci, hw, hw)
            term = (win * Tensor(w)[:, :, i, j].reshape(1, co, ci, 1, 1)).sum(2)
            out = term if out is None else out + term
    items = mlfuse.schedule(out)
    assert len(items) == 1
    # the padded windows are read through masked views of x, never copied
    assert items[0].ir.count("mask") >= 8 and items[0].inputs[0] == x.nbytes
    xpn = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1))).astype(np.float64)
    want = sum(
        np.einsum("nchw,oc->nohw", xpn[:, :, i : i + hw, j : j + hw], w[:, :, i, j])
        for i in range(3)
        for j in range(3)
    )
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-5)
