"""``mlfuse.func`` (``torch.func``) against closed-form derivatives in float64,
and against PyTorch's transforms where installed."""

from __future__ import annotations

import numpy as np
import pytest

import mlfuse
from mlfuse import Tensor, func

RNG = np.random.default_rng(5)
X = RNG.standard_normal(4)
W = RNG.standard_normal((3, 4))


def close(got, want, tol=1e-10):
    np.testing.assert_allclose(np.asarray(got.numpy()), want, rtol=tol, atol=tol)


def f(x):
    return (x.sin() * x).sum()


def v(x):  # R^4 -> R^3
    return (x * 2).exp()[:3] * x[1]


def v_jacobian(x):
    j = np.zeros((3, 4))
    e = np.exp(2 * x[:3])
    j[np.arange(3), np.arange(3)] = 2 * e * x[1]
    j[:, 1] += e
    return j


def test_grad_and_its_options():
    x = mlfuse.tensor(X)
    close(func.grad(f)(x), np.sin(X) + X * np.cos(X))

    def g(w, x):
        return ((w @ x).tanh() ** 2).sum()

    t = np.tanh(W @ X)
    dy = 2 * t * (1 - t**2)
    w = mlfuse.tensor(W)
    close(func.grad(g, argnums=1)(w, x), W.T @ dy)
    gw, gx = func.grad(g, argnums=(0, -1))(w, x)
    close(gw, np.outer(dy, X))
    close(gx, W.T @ dy)
    dx, aux = func.grad(lambda x: (f(x), x * 2), has_aux=True)(x)
    close(aux, 2 * X)
    g1, value = func.grad_and_value(f)(x)
    assert value.item() == pytest.approx(float((np.sin(X) * X).sum()))
    close(func.grad(lambda x: (x * 0).sum() + 3.0)(x), np.zeros(4))
    assert x.grad is None and not x.requires_grad  # the argument is left alone


def test_jacobians_hessians_vjp_jvp():
    x = mlfuse.tensor(X)
    close(func.jacrev(v)(x), v_jacobian(X))
    close(func.jacfwd(v)(x), v_jacobian(X))
    h = func.hessian(f)(x)
    close(h, np.diag(2 * np.cos(X) - X * np.sin(X)))
    assert h.shape == (4, 4)
    h2 = func.hessian(lambda x: (x**3).sum() + x[0] * x[1])(x)
    want = np.diag(6 * X)
    want[0, 1] = want[1, 0] = 1.0
    close(h2, want)
    ct = RNG.standard_normal(3)
    out, pull = func.vjp(v, x)
    close(out, np.exp(2 * X[:3]) * X[1])
    (gx,) = pull(mlfuse.tensor(ct))
    close(gx, v_jacobian(X).T @ ct)
    tan = RNG.standard_normal(4)
    out, jv = func.jvp(v, (x,), (mlfuse.tensor(tan),))
    close(jv, v_jacobian(X) @ tan)
    jm = func.jacrev(lambda m: (m @ m).sum(0))(mlfuse.tensor(W[:, :3]))
    assert jm.shape == (3, 3, 3)


def test_functional_call_swaps_and_restores():
    lin = mlfuse.nn.Linear(4, 3)
    before = lin.weight.numpy().copy()
    w = mlfuse.tensor(W)
    out = func.functional_call(lin, {"weight": w}, (mlfuse.tensor(X),))
    close(out, W @ X + lin.bias.numpy(), 1e-6)
    np.testing.assert_array_equal(lin.weight.numpy(), before)  # its own weight is back
    gw = func.grad(lambda p: func.functional_call(lin, {"weight": p}, mlfuse.tensor(X)).sum())(w)
    close(gw, np.tile(X, (3, 1)))
    seq = mlfuse.nn.Sequential(mlfuse.nn.Linear(4, 3), mlfuse.nn.ReLU())
    zero = {"0.weight": mlfuse.zeros(3, 4), "0.bias": mlfuse.ones(3)}
    assert func.functional_call(seq, zero, (mlfuse.tensor(X),)).tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(mlfuse.ArgumentError, match=r"has no tensors named \['nope'\]"):
        func.functional_call(lin, {"nope": w}, (mlfuse.tensor(X),))
    with pytest.raises(mlfuse.ArgumentError, match="strict: missing"):
        func.functional_call(lin, {"weight": w}, (mlfuse.tensor(X),), strict=True)
    with pytest.raises(mlfuse.ArgumentError, match="given more than once"):
        func.functional_call(lin, ({"weight": w}, {"weight": w}), (mlfuse.tensor(X),))


def test_errors_name_the_transform_and_the_argument():
    x = mlfuse.tensor(X)
    with pytest.raises(mlfuse.ArgumentError, match="result must have one element"):
        func.grad(lambda x: x * 2)(x)
    with pytest.raises(TypeError, match="argument 0 has dtype int64"):
        func.grad(lambda x: x.sum())(mlfuse.tensor([1, 2]))
    with pytest.raises(mlfuse.ArgumentError, match="argnums 3 is out of range"):
        func.grad(f, argnums=3)(x)
    with pytest.raises(mlfuse.ArgumentError, match="must return \\(output, aux\\)"):
        func.grad(f, has_aux=True)(x)
    with pytest.raises(mlfuse.ArgumentError, match="cotangent must have the output's shape"):
        func.vjp(v, x)[1](mlfuse.ones(4))
    with pytest.raises(mlfuse.ArgumentError, match="1 primals but 2 tangents"):
        func.jvp(v, (x,), (x, x))


def test_against_torch():
    torch = pytest.importorskip("torch")
    tf = torch.func
    x, tx = mlfuse.tensor(X), torch.tensor(X)

    def k(x):
        return (x.exp() * x.sin()).sum() + (x[0] * x[2]) ** 2

    close(func.hessian(k)(x), tf.hessian(k)(tx).numpy())
    close(func.jacrev(v)(x), tf.jacrev(v)(tx).numpy())
    out, jv = func.jvp(v, (x,), (x * 0 + 1,))
    close(jv, tf.jvp(v, (tx,), (torch.ones(4, dtype=torch.float64),))[1].numpy())


def test_vmap_over_stacked_module_states():
    import mlfuse.nn as nn

    models = [nn.Linear(3, 2) for _ in range(4)]
    params, buffers = mlfuse.func.stack_module_state(models)
    assert params["weight"].shape == (4, 2, 3) and params["bias"].shape == (4, 2)
    assert params["weight"].is_leaf and params["weight"].requires_grad and buffers == {}
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)

    def one(p, b, inp):
        return mlfuse.func.functional_call(models[0], (p, b), (inp,))

    out = mlfuse.vmap(one, in_dims=(0, 0, None))(params, buffers, Tensor(x))
    for k, m in enumerate(models):
        w, bias = m.weight.numpy().astype(np.float64), m.bias.numpy().astype(np.float64)
        np.testing.assert_allclose(out.numpy()[k], x @ w.T + bias, rtol=1e-5, atol=1e-6)
    # dicts and lists of tensors map leaf by leaf
    got = mlfuse.vmap(lambda d: d["a"] + d["b"][0])(
        {"a": Tensor([1.0, 2.0]), "b": [Tensor([3.0, 4.0])]}
    )
    np.testing.assert_allclose(got.numpy(), [4.0, 6.0])
    with pytest.raises(ValueError, match="argument 0 is a str, not a Tensor"):
        mlfuse.vmap(lambda s: s)("ab")
    with pytest.raises(ValueError, match="the models must have the same parameters"):
        mlfuse.func.stack_module_state([nn.Linear(3, 2), nn.Linear(3, 2, bias=False)])
