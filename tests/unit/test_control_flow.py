"""``mlfuse.control_flow``: PyTorch's ``cond`` and ``while_loop`` with eager
semantics: the branch or loop results and their gradients, nested operands,
and PyTorch's checks (pred, operands, callables, matching branch outputs, the
loop's carried values and its condition)."""

from __future__ import annotations

import numpy as np
import pytest

import mlfuse
from mlfuse import Tensor
from mlfuse.control_flow import cond, while_loop

X = np.array([1.0, -2.0, 3.0])


def test_cond_takes_the_branch_with_gradients():
    x = Tensor(X, requires_grad=True)
    y = cond(x.sum() > 0, lambda a: (a * a).sum(), lambda a: a.sum(), (x,))
    y.backward()
    assert y.item() == 14.0
    np.testing.assert_allclose(x.grad.numpy(), 2 * X)
    x = Tensor(X, requires_grad=True)
    y = cond(x.sum() < 0, lambda a: (a * a).sum(), lambda a: (3 * a).sum(), [x])
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0, 3.0])


def test_cond_python_pred_calls_one_branch_only():
    calls = []

    def t(a):
        calls.append("t")
        return a + 1

    def f(a):
        calls.append("f")
        return a[:2]  # a different shape: not checked for a constant pred, as PyTorch

    np.testing.assert_allclose(cond(True, t, f, (Tensor(X),)).numpy(), X + 1)
    assert calls == ["t"]
    assert cond(0, t, f, (Tensor(X),)).shape == (2,)


def test_cond_tensor_pred_nested_outputs():
    x, z = Tensor(X), Tensor(np.array([[1.0, 2.0]]))
    out = cond(
        Tensor(np.array([False])),
        lambda a, b: {"s": a.sum(), "pair": (b, 1)},
        lambda a, b: {"s": a.max(), "pair": (b * 2, 2)},
        (x, z),
    )
    assert out["s"].item() == 3.0 and out["pair"][1] == 2
    np.testing.assert_allclose(out["pair"][0].numpy(), [[2.0, 4.0]])
    nested = cond(
        Tensor(np.array(1.0)), lambda d: d["k"][0] * 2, lambda d: d["k"][0], ({"k": [x]},)
    )
    np.testing.assert_allclose(nested.numpy(), 2 * X)
    assert cond(Tensor(np.array(True)), lambda: Tensor(X) + 1, lambda: Tensor(X)).shape == (3,)


def test_cond_other_branch_does_not_touch_the_operands():
    x = Tensor(X.copy())

    def mutate(a):
        a.add_(100.0)
        return a * 1

    out = cond(Tensor(np.array(True)), lambda a: a * 2, mutate, (x,))
    np.testing.assert_allclose(out.numpy(), 2 * X)
    np.testing.assert_allclose(x.numpy(), X)


def test_cond_errors():
    x = Tensor(X, mlfuse.float32)
    p = Tensor(np.array(True))
    with pytest.raises(RuntimeError, match="single-element tensor, but got a tensor of shape"):
        cond(Tensor(np.array([True, False])), lambda a: a, lambda a: a, (x,))
    with pytest.raises(RuntimeError, match="Expected pred to be bool or tensor"):
        cond("yes", lambda a: a, lambda a: a, (x,))
    with pytest.raises(RuntimeError, match="Expect both branches to be callable"):
        cond(p, 3, lambda a: a, (x,))
    with pytest.raises(RuntimeError, match="only consists of tensor leaves"):
        cond(p, lambda a: a, lambda a: a, x)
    with pytest.raises(RuntimeError, match="only consists of tensor leaves"):
        cond(p, lambda a, b: a, lambda a, b: a, (x, 3))
    with pytest.raises(RuntimeError, match=r"pair\[0\] differ in 'shape: \(3,\) vs \(2,\)'"):
        cond(p, lambda a: a + 1, lambda a: a[:2], (x,))
    with pytest.raises(RuntimeError, match="'dtype: float32 vs float64'"):
        cond(p, lambda a: a + 1, lambda a: a.double(), (x,))
    with pytest.raises(RuntimeError, match="the same pytree structure"):
        cond(p, lambda a: (a, a), lambda a: [a, a], (x,))
    with pytest.raises(RuntimeError, match="the same pytree structure"):
        cond(p, lambda a: (a, a), lambda a: a, (x,))
    with pytest.raises(RuntimeError, match="tensors or constant ints; true_fn returned a leaf"):
        cond(p, lambda a: 2.5, lambda a: 2.5, (x,))


def test_while_loop_values_and_gradients():
    i, v = while_loop(
        lambda i, v: i < 3, lambda i, v: (i + 1, v * 2), (Tensor(np.array(0)), Tensor(X))
    )
    assert i.item() == 3
    np.testing.assert_allclose(v.numpy(), 8 * X)
    n, v = while_loop(lambda n, v: 2 * n < v.shape[0], lambda n, v: (n + 1, v + n), (0, Tensor(X)))
    assert n == 2
    np.testing.assert_allclose(v.numpy(), X + 1)
    w = Tensor(np.array([1.5]), requires_grad=True)
    _, out = while_loop(
        lambda i, v: i < 3, lambda i, v: (i + 1, v * w), (Tensor(np.array(0)), Tensor(np.ones(1)))
    )
    out.sum().backward()
    np.testing.assert_allclose(out.numpy(), [1.5**3])
    np.testing.assert_allclose(w.grad.numpy(), [3 * 1.5**2])


def test_while_loop_no_iterations_and_nested():
    x = Tensor(X)
    out = while_loop(lambda v: v.sum() < 0, lambda v: (v + 1,), [x])
    assert isinstance(out, tuple) and out[0] is not x
    np.testing.assert_allclose(out[0].numpy(), X)
    i, d = while_loop(
        lambda i, d: i < 2,
        lambda i, d: (i + 1, {"a": d["a"] * 3}),
        (Tensor(np.array(0)), {"a": Tensor(np.ones(2))}),
    )
    assert i.item() == 2
    np.testing.assert_allclose(d["a"].numpy(), [9.0, 9.0])
    assert while_loop(lambda i: False, lambda i: (i + 1,), (5,)) == (5,)


def test_while_loop_errors():
    zero, ones = Tensor(np.array(0)), Tensor(np.ones(2))
    with pytest.raises(RuntimeError, match="Expect cond_fn and body_fn to be callable"):
        while_loop(3, lambda i, x: (i, x), (zero, ones))
    with pytest.raises(RuntimeError, match="carried_inputs must be a tuple or list but got Tensor"):
        while_loop(lambda i: i < 3, lambda i: (i + 1,), zero)
    with pytest.raises(RuntimeError, match="only consists of tensor or int leaves"):
        while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x), (zero, 2.5))
    with pytest.raises(RuntimeError, match="cond_fn must return a boolean scalar tensor"):
        while_loop(lambda i, x: (i < 3).float(), lambda i, x: (i + 1, x), (zero, ones))
    with pytest.raises(RuntimeError, match="cond_fn must return a boolean scalar tensor"):
        while_loop(lambda i, x: (i < 3).reshape(1), lambda i, x: (i + 1, x), (zero, ones))
    with pytest.raises(RuntimeError, match=r"pair\[1\] differ in 'shape: \(1,\) vs \(2,\)'"):
        while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x[:1]), (zero, ones))
    with pytest.raises(RuntimeError, match="'dtype: float64 vs float32'"):
        while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x.double()), (zero, ones.float()))
    with pytest.raises(RuntimeError, match="same number of outputs but got lhs:1 outputs"):
        while_loop(lambda i, x: i < 3, lambda i, x: (i + 1,), (zero, ones))
    with pytest.raises(RuntimeError, match=r"pair\[1\] differ in type: int vs Tensor"):
        while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, 2), (zero, ones))
    with pytest.raises(RuntimeError, match="body_fn should return a tuple"):
        while_loop(lambda i: i < 3, lambda i: i + 1, (zero,))
    assert mlfuse.control_flow.cond is cond
