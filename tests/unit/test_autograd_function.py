"""PyTorch's autograd entry points: custom ``autograd.Function``s (one or several
results, ``setup_context``, non-differentiable results, double backward),
``autograd.grad`` and ``autograd.backward`` with their options, against the
closed-form derivatives in float64."""

from __future__ import annotations

import numpy as np
import pytest

import mlfuse
from mlfuse import Tensor
from mlfuse.autograd import Function, FunctionCtx, once_differentiable

RNG = np.random.default_rng(5)


def leaf(a):
    return Tensor(np.asarray(a, dtype=np.float64), requires_grad=True)


class Clip(Function):
    """A straight-through clip: the gradient passes where the input was kept."""

    @staticmethod
    def forward(ctx, x, lo):
        ctx.save_for_backward(x)
        ctx.lo = lo
        return x.clamp(min=lo)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * (x >= ctx.lo), None


class ProdSum(Function):
    """Three results, one of them a mask (not differentiable)."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        mask = a > 0
        ctx.mark_non_differentiable(mask)
        return a * b, a + b, mask

    @staticmethod
    def backward(ctx, g_prod, g_sum, g_mask):
        a, b = ctx.saved_tensors
        assert g_mask is not None and not g_mask.numpy().any()  # zeros: materialized
        return g_prod * b + g_sum, g_prod * a + g_sum


class Cube(Function):
    """forward without ctx, with setup_context; differentiable twice."""

    @staticmethod
    def forward(x):
        return x * x * x

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * x * x * g


class Frozen(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.exp()

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x.exp()


def test_function_one_result():
    a = np.array([-1.0, 0.5, 2.0])
    x = leaf(a)
    y = Clip.apply(x, 0.0)
    np.testing.assert_array_equal(y.numpy(), np.maximum(a, 0))
    assert y.requires_grad and y.grad_fn is not None
    (y * y).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.where(a >= 0, 2 * np.maximum(a, 0), 0))
    # nothing requires grad: forward only, a plain tensor
    z = Clip.apply(Tensor(a), 0.0)
    assert not z.requires_grad


def test_function_several_results_share_one_backward():
    a, b = RNG.standard_normal((2, 3)), RNG.standard_normal((2, 3))
    ta, tb = leaf(a), leaf(b)
    p, s, m = ProdSum.apply(ta, tb)
    assert m.dtype == mlfuse.bool_ and not m.requires_grad
    np.testing.assert_allclose(p.numpy(), a * b)
    (2 * p.sum() + (s * s).sum()).backward()
    np.testing.assert_allclose(ta.grad.numpy(), 2 * b + 2 * (a + b), rtol=1e-12)
    np.testing.assert_allclose(tb.grad.numpy(), 2 * a + 2 * (a + b), rtol=1e-12)


def test_function_setup_context_and_double_backward():
    a = np.array([1.5, -2.0])
    x = leaf(a)
    (g,) = mlfuse.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    np.testing.assert_allclose(g.numpy(), 3 * a * a)
    (h,) = mlfuse.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), 6 * a)
    f = leaf(a)
    (gf,) = mlfuse.autograd.grad(Frozen.apply(f).sum(), f, create_graph=True)
    np.testing.assert_allclose(gf.numpy(), np.exp(a))
    assert not gf.requires_grad  # once_differentiable: no graph through backward


def test_function_errors():
    with pytest.raises(RuntimeError, match="Clip.apply"):
        Clip()

    class Short(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return g

    x, y = leaf([1.0]), leaf([2.0])
    with pytest.raises(RuntimeError, match="Short.backward returned 1 gradients, forward took 2"):
        Short.apply(x, y).sum().backward()

    class NotTensor(Function):
        @staticmethod
        def forward(ctx, x):
            return 3

    with pytest.raises(TypeError, match="NotTensor.forward must return a Tensor"):
        NotTensor.apply(leaf([1.0]))
    with pytest.raises(TypeError, match="save_for_backward: argument 0 is int"):
        FunctionCtx().save_for_backward(3)


def test_autograd_grad_options():
    a = np.array([1.0, 2.0])
    x = leaf(a)
    (g,) = mlfuse.autograd.grad((x**3).sum(), x, create_graph=True)
    np.testing.assert_allclose(g.numpy(), 3 * a**2)
    assert x.grad is None  # .grad untouched
    (h,) = mlfuse.autograd.grad(g.sum(), [x])
    np.testing.assert_allclose(h.numpy(), 6 * a)
    # several outputs with their weights
    o1, o2 = x * 3, x * x
    (w,) = mlfuse.autograd.grad([o1, o2], x, grad_outputs=[Tensor([1.0, 1.0]), Tensor([2.0, 0.5])])
    np.testing.assert_allclose(w.numpy(), 3 + np.array([2.0, 0.5]) * 2 * a)
    z = leaf([1.0])
    with pytest.raises(RuntimeError, match="input 1 was not used to compute the outputs"):
        mlfuse.autograd.grad((x * 2).sum(), [x, z])
    assert mlfuse.autograd.grad((x * 2).sum(), [x, z], allow_unused=True)[1] is None
    zero = mlfuse.autograd.grad((x * 2).sum(), [x, z], materialize_grads=True)[1]
    np.testing.assert_array_equal(zero.numpy(), [0.0])
    with pytest.raises(RuntimeError, match="element 0 of the outputs does not require grad"):
        mlfuse.autograd.grad(Tensor([1.0]).sum(), x)
    with pytest.raises(RuntimeError, match="input 0 does not require grad"):
        mlfuse.autograd.grad((x * 2).sum(), Tensor([1.0]))
    # the functional form is still reachable
    (d,) = mlfuse.autograd.grad(lambda t: (t * t).sum())(Tensor([3.0]))
    np.testing.assert_allclose(d.numpy(), [6.0])


def test_autograd_backward_sequences_and_inputs():
    b = leaf([1.0, 2.0])
    mlfuse.autograd.backward([(b * 2).sum(), (b * b).sum()])
    np.testing.assert_allclose(b.grad.numpy(), [4.0, 6.0])
    c, d = leaf([1.0]), leaf([2.0])
    (c * d).sum().backward(inputs=[c])
    np.testing.assert_allclose(c.grad.numpy(), [2.0])
    assert d.grad is None
    e = leaf([1.0, 2.0])
    mlfuse.autograd.backward([e * 1, e * e], grad_tensors=[Tensor([1.0, 1.0]), Tensor([1.0, 2.0])])
    np.testing.assert_allclose(e.grad.numpy(), [3.0, 9.0])


def test_autograd_functional_against_closed_forms():
    from mlfuse.autograd import functional as AF

    x, y, v = RNG.standard_normal(3), RNG.standard_normal(3), RNG.standard_normal(3)
    tx, ty, tv = Tensor(x), Tensor(y), Tensor(v)
    jx, jy = AF.jacobian(lambda a, b: (a * a * b).sin(), (tx, ty))
    c = np.cos(x * x * y)
    np.testing.assert_allclose(jx.numpy(), np.diag(c * 2 * x * y), atol=1e-12)
    np.testing.assert_allclose(jy.numpy(), np.diag(c * x * x), atol=1e-12)
    j2 = AF.jacobian(lambda a: (a * 2, a.sum()), tx)
    assert j2[0].shape == (3, 3) and j2[1].shape == (3,)
    np.testing.assert_allclose(j2[1].numpy(), np.ones(3))

    def g(a):
        return (a**3).sum() + a[0] * a[1]

    h_ref = np.diag(6 * x)
    h_ref[0, 1] = h_ref[1, 0] = 1.0
    np.testing.assert_allclose(AF.hessian(g, tx).numpy(), h_ref, atol=1e-12)
    hh = AF.hessian(lambda a, b: (a * a * b).sum(), (tx, ty))
    np.testing.assert_allclose(hh[0][0].numpy(), np.diag(2 * y), atol=1e-12)
    np.testing.assert_allclose(hh[0][1].numpy(), np.diag(2 * x), atol=1e-12)
    np.testing.assert_allclose(hh[1][1].numpy(), np.zeros((3, 3)), atol=1e-12)
    out, vj = AF.vjp(lambda a: a.exp(), tx, tv)
    np.testing.assert_allclose(vj.numpy(), v * np.exp(x), rtol=1e-12)
    out, jv = AF.jvp(lambda a: a.exp() * a, tx, tv)
    np.testing.assert_allclose(jv.numpy(), v * np.exp(x) * (1 + x), rtol=1e-12)
    value, hv = AF.hvp(g, tx, tv)
    np.testing.assert_allclose(hv.numpy(), h_ref @ v, atol=1e-12)
    np.testing.assert_allclose(value.item(), (x**3).sum() + x[0] * x[1])
    assert not hv.requires_grad
    with pytest.raises(ValueError, match="v can be left out only for a one-element output"):
        AF.vjp(lambda a: a * 2, tx)
    with pytest.raises(ValueError, match="v must match the function's outputs"):
        AF.vjp(lambda a: a * 2, tx, Tensor([1.0]))
    with pytest.raises(TypeError, match="jacobian: inputs must be a Tensor or a tuple"):
        AF.jacobian(lambda a: a, 3.0)


def test_gradcheck_finds_a_wrong_rule():
    x = leaf(RNG.standard_normal(3))
    assert mlfuse.autograd.gradcheck(lambda a: (a * a).sin(), (x,))
    assert mlfuse.autograd.gradgradcheck(lambda a: (a * a).sin(), (x,))

    class Half(Function):  # the derivative of a*a is 2a, not a
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return g * a

    with pytest.raises(mlfuse.autograd.GradcheckError, match="Jacobian mismatch for output 0"):
        mlfuse.autograd.gradcheck(Half.apply, (x,))
    assert mlfuse.autograd.gradcheck(Half.apply, (x,), raise_exception=False) is False
    assert mlfuse.autograd.gradcheck(Cube.apply, (x,))
    with pytest.raises(ValueError, match="at least one input tensor that requires grad"):
        mlfuse.autograd.gradcheck(lambda a: a, (Tensor([1.0]),))


def test_variable_and_inference_mode_spellings():
    v = mlfuse.autograd.Variable(Tensor([1.0]), requires_grad=True)
    assert v.requires_grad and isinstance(v, mlfuse.autograd.Variable)
    assert not isinstance(3.0, mlfuse.autograd.Variable)
    with mlfuse.autograd.inference_mode():
        assert mlfuse.is_inference_mode_enabled()
