"""Graphs of any depth and width: no recursion limit anywhere from Tensor to LLVM IR.

Every stage walks graphs with worklists (graph building, toposort, the lazy
passes, the kernel planner, the loop-nest analysis, the lowering), so these
programs schedule, compile and match numpy. The verifier between passes is
off here to keep the suite fast; the same passes are verified by every other
test. Timings live in bench/compile_scale.py, not here.
"""

import sys

import numpy as np
import pytest

import mlfuse
from mlfuse import Tensor


@pytest.fixture(autouse=True)
def _no_verify(monkeypatch):
    monkeypatch.setenv("MLFUSE_VERIFY", "0")


def test_10000_op_elementwise_chain():
    x0 = np.random.default_rng(0).standard_normal((32, 32)).astype(np.float32)
    h, ref = Tensor(x0), x0.astype(np.float64)
    for i in range(10_000):
        h, ref = (h + 0.5, ref + 0.5) if i % 2 == 0 else (h * 0.75, ref * 0.75)
    items = mlfuse.schedule(h)
    # cut into kernels of at most group-reduces' max-ops (compile time)
    assert 4 <= len(items) <= 6
    assert {r for i in items for r in i.reasons} == {"kernel over 2048 ops", "output"}
    np.testing.assert_allclose(h.numpy(), ref, rtol=1e-4, atol=1e-4)


def test_10000_op_chain_with_a_reduce_every_100_ops():
    x0 = np.random.default_rng(1).standard_normal((32, 32)).astype(np.float32)
    h, ref = Tensor(x0), x0.astype(np.float64)
    for i in range(10_000):
        if i % 100 == 99:
            h, ref = h - h.max(-1, keepdim=True), ref - ref.max(-1, keepdims=True)
        elif i % 2 == 0:
            h, ref = h * 0.999, ref * 0.999
        else:
            h, ref = h + 0.001, ref + 0.001
    items = mlfuse.schedule(h)
    # each kernel holds at most 3 of the 100 normalizations (the recompute limit)
    assert 34 <= len(items) <= 40
    np.testing.assert_allclose(h.numpy(), ref, rtol=1e-3, atol=1e-3)


def test_exp_log_chain_deeper_than_the_recursion_limit():
    x0 = np.linspace(0.1, 1.0, 16, dtype=np.float32)
    h, ref = Tensor(x0), x0.astype(np.float64)
    # four ops a step: a third of the limit in steps is a graph deeper than the limit
    # (a kernel of 1,000 exp/log pairs would spend a minute in LLVM)
    for _ in range(sys.getrecursionlimit() // 3 + 1):
        h, ref = (h * 0.5 + 0.25).exp().log(), np.log(np.exp(ref * 0.5 + 0.25))
    np.testing.assert_allclose(h.numpy(), ref, rtol=1e-3)


def test_wide_graph_of_a_hundred_reductions():
    xs = [np.random.default_rng(i).standard_normal((4, 8)).astype(np.float32) for i in range(100)]
    total = Tensor(xs[0]).sum(1)
    for x in xs[1:]:
        total = total + Tensor(x).sum(1)
    want = sum(x.astype(np.float64).sum(1) for x in xs)
    items = mlfuse.schedule(total)
    # at most 16 reduce loops per kernel (group-reduces' max-loops, for compile time)
    assert 7 <= len(items) <= 8
    np.testing.assert_allclose(total.numpy(), want, rtol=1e-4, atol=1e-3)


def test_building_and_dropping_a_huge_graph():
    """Deallocating a 50,000-node chain does not recurse either."""
    h = Tensor(np.ones(2, np.float32))
    for _ in range(50_000):
        h = h + 1.0
    assert h.shape == (2,)
    del h


def _stencil(x, shift, add):
    """One step of a 4-point stencil: the previous step read through four shifted views."""
    p = shift(x)
    return add(p[:-2, 1:-1], p[2:, 1:-1], p[1:-1, :-2], p[1:-1, 2:]) * 0.25


def test_stencil_steps_read_through_shifted_views():
    # each step reads the last through four views; fusing all 12 steps would
    # compute the input 4**12 times. A value read through several views with
    # more than 4 reads is stored (push-views' max-reads): one kernel per two steps.
    x0 = np.random.default_rng(4).standard_normal((24, 20)).astype(np.float32)
    h, ref = Tensor(x0), x0.astype(np.float64)
    for _ in range(12):
        h = _stencil(h, lambda t: t.pad(((1, 1), (1, 1))), lambda a, b, c, d: a + b + c + d)
        ref = _stencil(ref, lambda t: np.pad(t, 1), lambda a, b, c, d: a + b + c + d)
    items = mlfuse.schedule(h)
    assert len(items) == 6
    assert {r for i in items for r in i.reasons} == {"read through 4 views", "output"}
    np.testing.assert_allclose(h.numpy(), ref, rtol=1e-5, atol=1e-6)


def test_stencil_gradient_through_shifted_views():
    x0 = np.random.default_rng(5).standard_normal((12, 10))
    x = Tensor(x0, requires_grad=True)
    h, pad = x, lambda t: t.pad(((1, 1), (1, 1)))
    for _ in range(8):
        h = _stencil(h, pad, lambda a, b, c, d: (a + b + c + d).tanh())
    (h * h).sum().backward()
    # reference: reverse mode by hand (the adjoint of pad-and-slice is slice-and-pad)
    xs, r = [], x0
    for _ in range(8):
        xs.append(r)
        r = _stencil(r, lambda t: np.pad(t, 1), lambda a, b, c, d: np.tanh(a + b + c + d))
    g = 2 * r
    for prev in reversed(xs):
        p = np.pad(prev, 1)
        s = p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:]
        gs = g * 0.25 * (1 - np.tanh(s) ** 2)
        gp = np.zeros_like(p)
        gp[:-2, 1:-1] += gs
        gp[2:, 1:-1] += gs
        gp[1:-1, :-2] += gs
        gp[1:-1, 2:] += gs
        g = gp[1:-1, 1:-1]
    np.testing.assert_allclose(x.grad.numpy(), g, rtol=1e-10, atol=1e-12)


def test_postorder_walks_deep_shared_graphs_children_first_once_each():
    from mlfuse.utils import postorder

    class N:
        __slots__ = ("kids", "i")

        def __init__(self, kids, i):
            self.kids, self.i = kids, i

    n = N((), 0)
    for i in range(1, 200_000):  # each node reads the one before twice
        n = N((n, n), i)
    order = postorder([n], lambda x: x.kids)
    assert [x.i for x in order] == list(range(200_000))
    # a diamond with two roots: shared nodes once, children before parents, in child order
    a = N((), "a")
    b, c = N((a,), "b"), N((a,), "c")
    d = N((c, b), "d")
    assert [x.i for x in postorder([d, b, N((d,), "e")], lambda x: x.kids)] == list("acbde")
