"""Autograd: every gradient rule against float64 central differences, the
front end's differentiable ops through them, the API (requires_grad,
backward, .grad, no_grad, detach, mlfuse.grad) and its errors, and
torch.autograd where PyTorch is installed."""

from __future__ import annotations

import numpy as np
import pytest

import mlfuse
import mlfuse.nn.functional as F
from mlfuse import Tensor, autograd, graph

F64 = np.float64
RNG = np.random.default_rng(7)

try:
    import torch
except ImportError:  # pragma: no cover - depends on the machine
    torch = None


def normal(*shape):
    return RNG.standard_normal(shape)


def positive(*shape):
    return RNG.uniform(0.5, 2.0, shape)


def distinct(*shape):
    """Values with no ties and no two closer than 0.1 (max/min/sort are smooth there)."""
    n = int(np.prod(shape))
    return (RNG.permutation(n) * 0.37 - n * 0.15).reshape(shape)


def away_from_zero(*shape):
    return RNG.uniform(0.3, 1.5, shape) * RNG.choice([-1.0, 1.0], shape)


def numeric_grad(fn, arrays, k, eps):
    """d sum(fn) / d arrays[k] by central differences, evaluated with mlfuse."""
    a = arrays[k]
    out = np.zeros_like(a)
    for idx in np.ndindex(a.shape):
        vals = []
        for sign in (1, -1):
            b = a.copy()
            b[idx] += sign * eps
            args = [Tensor(b) if j == k else Tensor(x) for j, x in enumerate(arrays)]
            vals.append(float(fn(*args).sum().item()))
        out[idx] = (vals[0] - vals[1]) / (2 * eps)
    return out


def check(fn, *arrays, eps=1e-6, tol=1e-6):
    arrays = [np.asarray(a, F64) for a in arrays]
    got = mlfuse.grad(lambda *ts: fn(*ts).sum())(*[Tensor(a) for a in arrays])
    for k, g in enumerate(got):
        want = numeric_grad(fn, arrays, k, eps)
        np.testing.assert_allclose(g.numpy(), want, rtol=tol, atol=tol, err_msg=f"input {k}")


IDX = np.array([[2, 0, 1], [1, 1, 3]])


def _setitem(x, v):
    y = x * 1.0
    y[1] = v * 3  # a write through a view: row 1 is v's, the rest x's
    y[:, 0] = 0.0
    return y


def _dropout(x):
    mlfuse.manual_seed(5)  # the same mask on every evaluation
    return F.dropout(x, 0.5)


CASES = {
    # elementwise primitives and their decompositions
    "neg": (lambda x: -x, [normal(3, 4)]),
    "recip": (lambda x: 1 / x, [positive(3, 4)]),
    "sqrt": (lambda x: x.sqrt(), [positive(3, 4)]),
    "rsqrt": (lambda x: x.rsqrt(), [positive(3, 4)]),
    "exp": (lambda x: x.exp(), [normal(3, 4)]),
    "exp2": (lambda x: x.exp2(), [normal(3, 4)]),
    "expm1": (lambda x: x.expm1(), [normal(3, 4)]),
    "log": (lambda x: x.log(), [positive(3, 4)]),
    "log2": (lambda x: x.log2(), [positive(3, 4)]),
    "log1p": (lambda x: x.log1p(), [positive(3, 4)]),
    "sin": (lambda x: x.sin(), [normal(3, 4)]),
    "cos": (lambda x: x.cos(), [normal(3, 4)]),
    "tan": (lambda x: x.tan(), [normal(3, 4) * 0.5]),
    "asin acos atan": (lambda x: x.asin() + x.acos() * 2 + x.atan(), [normal(3, 4) * 0.3]),
    "sinh cosh tanh": (lambda x: x.sinh() + x.cosh() * 2 + x.tanh(), [normal(3, 4)]),
    "asinh atanh": (lambda x: x.asinh() + x.atanh(), [normal(3, 4) * 0.3]),
    "acosh": (lambda x: x.acosh(), [positive(3, 4) + 1]),
    "abs": (lambda x: x.abs(), [away_from_zero(3, 4)]),
    "sign floor ceil round trunc": (
        lambda x: x * x.sign() + x.floor() + x.ceil() + x.round() + x.trunc(),
        [away_from_zero(3, 4) + 0.25],
    ),
    "square": (lambda x: x.square(), [normal(3, 4)]),
    "add broadcast": (lambda a, b: a + b, [normal(3, 4), normal(4)]),
    "sub broadcast": (lambda a, b: a - b, [normal(3, 1), normal(1, 4)]),
    "mul broadcast": (lambda a, b: a * b, [normal(2, 3, 4), normal(3, 1)]),
    "div": (lambda a, b: a / b, [normal(3, 4), positive(3, 4)]),
    "scalars": (lambda x: 3.0 * x - 2.0 / (x + 4.0) + 1.5, [positive(3, 4)]),
    "maximum minimum": (
        lambda a, b: a.maximum(b) + a.minimum(b) * 3,
        [distinct(3, 4), distinct(3, 4) + 0.05],
    ),
    "pow tensor": (lambda a, b: a**b, [positive(3, 4), normal(3, 4)]),
    "pow scalar": (lambda x: x**3 + x**0.5 + 2.0**x, [positive(3, 4)]),
    "atan2": (lambda a, b: a.atan2(b), [normal(3, 4), positive(3, 4)]),
    "where": (lambda a, b: (a > 0).where(a, b * 2), [away_from_zero(3, 4), normal(3, 4)]),
    "fma": (lambda a, b, c: a.fma(b, c), [normal(3, 4), normal(3, 4), normal(4)]),
    "clamp": (lambda x: x.clamp(-0.5, 0.5), [distinct(3, 4) * 0.3 + 0.01]),
    "lerp": (lambda a, b, w: a.lerp(b, w), [normal(3, 4), normal(3, 4), positive(3, 4)]),
    "activations": (
        lambda x: (
            x.relu()
            + x.sigmoid()
            + x.gelu()
            + x.gelu("tanh")
            + x.silu()
            + x.elu()
            + x.leaky_relu(0.1)
            + x.softplus()
            + x.erf()
            + F.mish(x)
            + F.selu(x)
            + F.logsigmoid(x)
            + F.softsign(x)
        ),
        [away_from_zero(3, 4)],
    ),
    "cast": (lambda x: (x > 0).double() * x + x.float().double() * 0, [away_from_zero(3, 4)]),
    # reductions
    "sum axes": (lambda x: x.sum(1) * Tensor([1.0, 2.0, 3.0]), [normal(3, 4)]),
    "sum keepdim": (lambda x: x.sum((0, 2), keepdim=True) ** 2, [normal(2, 3, 4)]),
    "prod": (lambda x: x.prod(1), [positive(3, 4)]),
    "max min": (lambda x: x.max(1) * 2 + x.min(0).sum() + x.amax(), [distinct(3, 4)]),
    "mean var std": (lambda x: x.mean(0) + x.var(1).sum() + x.std(), [normal(3, 4)]),
    "norm": (lambda x: x.norm(dim=1), [normal(3, 4)]),
    "logsumexp": (lambda x: x.logsumexp(1), [normal(3, 4)]),
    "softmax": (lambda x: x.softmax(1) * Tensor(np.arange(4.0)), [normal(3, 4)]),
    "log_softmax": (lambda x: x.log_softmax(0) * Tensor(np.arange(4.0)), [normal(3, 4)]),
    # scans
    "cumsum": (lambda x: x.cumsum(1) ** 2, [normal(3, 5)]),
    "cumprod": (lambda x: x.cumprod(0), [positive(4, 3)]),
    "cummax cummin": (lambda x: x.cummax(1).values * 2 + x.cummin(0).values ** 2, [distinct(3, 5)]),
    "logcumsumexp": (lambda x: x.logcumsumexp(1), [normal(2, 5)]),
    # movement
    "reshape permute": (
        lambda x: x.reshape(4, 3).T * Tensor(np.arange(12.0).reshape(3, 4)),
        [normal(3, 4)],
    ),
    "expand": (lambda x: x.expand(3, 4) * Tensor(np.arange(12.0).reshape(3, 4)), [normal(3, 1)]),
    "pad shrink": (
        lambda x: x.pad(((1, 2), (0, 1))) * Tensor(np.arange(30.0).reshape(6, 5)) + x[1:, :3].sum(),
        [normal(3, 4)],
    ),
    "pad modes": (
        lambda x: (
            x.pad(((1, 1), (2, 1)), mode="reflect").square()
            + x.pad(((1, 0), (0, 2)), mode="replicate").square().sum()
            + x.pad(((0, 1), (1, 1)), mode="circular").square().sum()
        ),
        [normal(3, 4)],
    ),
    "flip": (lambda x: x.flip(1) * Tensor(np.arange(12.0).reshape(3, 4)), [normal(3, 4)]),
    "stride": (lambda x: x[::2, 1::3] ** 2, [normal(5, 7)]),
    "negative step": (lambda x: x[::-2] ** 2, [normal(5, 3)]),
    "cat stack": (
        lambda a, b: mlfuse.cat([a, b * 2], 1).square() + mlfuse.stack([a, b]).sum(0).sum(),
        [normal(3, 2), normal(3, 2)],
    ),
    "split chunk": (lambda x: x.split(2, 1)[1] ** 2 + x.chunk(2, 0)[0].sum(), [normal(4, 5)]),
    "repeat tile roll": (
        lambda x: x.repeat(2, 1).square().sum() + x.tile((1, 2)).square().sum() + x.roll(1, 0) ** 3,
        [normal(3, 4)],
    ),
    "tril triu": (lambda x: x.tril() ** 2 + x.triu(1) * 3, [normal(4, 4)]),
    "squeeze unsqueeze movedim": (
        lambda x: x.unsqueeze(0).movedim(2, 0).squeeze(1) ** 2,
        [normal(3, 4)],
    ),
    "contiguous": (lambda x: x.T.contiguous() ** 2, [normal(3, 4)]),
    # indexing
    "index with tensor": (lambda x: x[Tensor(IDX)] ** 2, [normal(4, 3)]),
    "gather": (lambda x: x.gather(1, Tensor(IDX)) ** 2, [normal(2, 4)]),
    "index_select take": (
        lambda x: (
            x.index_select(1, Tensor([3, 0, 3])) ** 2
            + x.take_along_dim(Tensor([[0], [2]]), 1).sum()
        ),
        [normal(2, 4)],
    ),
    "embedding": (lambda w: F.embedding(Tensor(IDX), w) ** 2, [normal(5, 3)]),
    "boolean mask": (lambda x: x[Tensor(np.array([True, False, True]))] ** 2, [normal(3, 2)]),
    "setitem": (lambda x, v: _setitem(x, v) ** 2, [normal(3, 4), normal(4)]),
    "scatter index_put masked_fill": (
        lambda x, s: (
            x.scatter(1, Tensor([[2, 0], [1, 3]]), s) ** 2
            + x.scatter_add(1, Tensor([[2, 2], [0, 3]]), s).sum()
            + x.index_put((Tensor([1, 0]),), s.sum(1, keepdim=True).expand(2, 4)).square().sum()
            + x.masked_fill(Tensor(np.array([[True, False, False, True]] * 2)), 0.0).square().sum()
        ),
        [normal(2, 4), normal(2, 2)],
    ),
    "narrow unflatten repeat_interleave amin": (
        lambda x: (
            x.narrow(1, 1, 2).unflatten(0, (1, 3)).square().sum()
            + x.repeat_interleave(2, 0).square().sum()
            + x.amin(1).sum() * 2
        ),
        [distinct(3, 4)],
    ),
    "hard activations glu softmin": (
        lambda x: (
            F.hardtanh(x)
            + F.relu6(x * 4)
            + F.hardsigmoid(x * 2)
            + F.hardswish(x * 2)
            + F.celu(x)
            + F.glu(x.repeat(1, 2), 1)
            + F.softmin(x, 1)
        ),
        [away_from_zero(3, 4) * 0.9],
    ),
    "adaptive pool dropout": (
        lambda x: F.adaptive_avg_pool2d(x, (2, 3)).square().sum() + _dropout(x).square(),
        [normal(1, 2, 4, 5)],
    ),
    # contractions and nn
    "matmul": (lambda a, b: a @ b, [normal(3, 4), normal(4, 2)]),
    "batched matmul": (lambda a, b: a @ b, [normal(2, 3, 4), normal(4, 2)]),
    "linear": (lambda x, w, b: F.linear(x, w, b).relu(), [normal(3, 4), normal(2, 4), normal(2)]),
    "conv2d": (
        lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1),
        [normal(1, 2, 5, 5), normal(3, 2, 3, 3), normal(3)],
    ),
    "conv2d groups dilation": (
        lambda x, w: F.conv2d(x, w, groups=2, dilation=2, padding=2),
        [normal(1, 4, 4, 4), normal(2, 2, 3, 3)],
    ),
    "conv1d": (lambda x, w: F.conv1d(x, w, padding=1), [normal(2, 2, 6), normal(3, 2, 3)]),
    "pools": (
        lambda x: F.max_pool2d(x, 2) * 2 + F.avg_pool2d(x, 3, stride=1, padding=1).sum(),
        [distinct(1, 2, 4, 4)],
    ),
    "batch_norm": (
        lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
        [normal(4, 3, 2, 2), positive(3), normal(3)],
    ),
    "layer_norm group_norm": (
        lambda x, w, b: (
            F.layer_norm(x, (4,), w, b) + F.group_norm(x.reshape(3, 4, 1), 2).reshape(3, 4) * 0.5
        ),
        [normal(3, 4), positive(4), normal(4)],
    ),
    "attention": (
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
        [normal(1, 3, 4), normal(1, 3, 4), normal(1, 3, 4)],
    ),
    "cross_entropy": (lambda x: F.cross_entropy(x, Tensor([1, 0, 3])), [normal(3, 4)]),
    "losses": (
        lambda a, b: (
            F.mse_loss(a, b)
            + F.l1_loss(a, b)
            + F.smooth_l1_loss(a, b)
            + F.huber_loss(a, b)
            + F.binary_cross_entropy_with_logits(a, b.sigmoid())
            + F.kl_div(a.log_softmax(1), b.softmax(1), reduction="batchmean")
        ),
        [normal(3, 4), normal(3, 4) + 0.6],
    ),
    "normalize cosine": (
        lambda a, b: F.normalize(a, dim=1) + F.cosine_similarity(a, b).sum(),
        [normal(3, 4), normal(3, 4)],
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_gradient_matches_central_differences(name):
    fn, arrays = CASES[name]
    check(fn, *arrays)


def test_conv_windows_view_gradients(monkeypatch):
    # the path large convolutions take (a padded copy, one view of windows, packed
    # weights), forced here on small inputs
    from mlfuse.targets.cpu.target import CpuTarget

    monkeypatch.setattr(CpuTarget, "PAD_COPY_BYTES", 0)
    monkeypatch.setattr(CpuTarget, "pack_conv_weights", lambda self, *a: True)
    check(
        lambda x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=1, dilation=(1, 2), groups=2),
        normal(1, 4, 5, 6),
        normal(4, 2, 3, 2),
        normal(4),
    )
    check(lambda x, w: F.conv1d(x, w, padding=2, stride=3), normal(2, 2, 7), normal(3, 2, 1))


def test_every_differentiable_primitive_has_a_rule():
    ops = {*graph.UNARY, *graph.BINARY, *graph.MOVEMENT}
    ops |= {"where", "mulacc", "cast", "bitcast", "reduce", "scan", "gather", "contiguous"}
    ops |= {"copy", "assign", "const"}
    missing = ops - set(autograd.GRADIENTS) - autograd.NOT_DIFFERENTIABLE
    assert not missing


@pytest.mark.skipif("cuda_sim" not in mlfuse.devices(), reason="no cuda_sim device")
def test_gradients_cross_devices():
    x = np.linspace(-1, 1, 6)
    t = Tensor(x, device="cpu", requires_grad=True)
    (t.to("cuda_sim").exp() * 2).to("cpu").sum().backward()
    assert t.grad.device == "cpu"
    np.testing.assert_allclose(t.grad.numpy(), 2 * np.exp(x))


def test_float32_gradients():
    x = np.float32(normal(3, 4))
    t = Tensor(x, requires_grad=True)
    (t.exp() * t).sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), np.exp(x) * (1 + x), rtol=1e-5)
    assert t.grad.dtype == mlfuse.float32


# ---------------------------------------------------------------------------
# PyTorch's non-differentiable points
# ---------------------------------------------------------------------------


def grad_of(fn, x):
    t = Tensor(np.asarray(x, F64), requires_grad=True)
    fn(t).sum().backward()
    return t.grad.numpy()


def test_kinks_follow_pytorch():
    np.testing.assert_array_equal(grad_of(lambda x: x.relu(), [-1.0, 0.0, 2.0]), [0, 0, 1])
    np.testing.assert_array_equal(grad_of(lambda x: x.abs(), [-1.0, 0.0, 2.0]), [-1, 0, 1])
    # ties of maximum share the gradient; ties of a max reduction share it evenly
    np.testing.assert_array_equal(
        grad_of(lambda x: x.maximum(Tensor([1.0, 1.0])), [1.0, 2.0]), [0.5, 1]
    )
    np.testing.assert_allclose(grad_of(lambda x: x.max(), [3.0, 1.0, 3.0]), [0.5, 0, 0.5])
    # a running max sends the gradient to the last position that reached it
    np.testing.assert_array_equal(
        grad_of(lambda x: x.cummax(0).values, [1.0, 3.0, 2.0, 3.0]), [1, 2, 0, 1]
    )
    # pow: d/dx x^0 is 0 at 0, d/dy 0^y is 0
    np.testing.assert_array_equal(grad_of(lambda x: x ** Tensor([0.0, 2.0]), [0.0, 0.0]), [0, 0])


def test_kinks_of_clamps_follow_pytorch():
    x = [-3.0, -1.0, 0.0, 1.0, 6.0, 7.0]
    # clamp passes the gradient at its bounds, hardtanh/relu6/hardsigmoid do not
    np.testing.assert_array_equal(grad_of(lambda t: t.clip(-1, 1), x), [0, 1, 1, 1, 0, 0])
    np.testing.assert_array_equal(grad_of(lambda t: t.hardtanh(), x), [0, 0, 1, 0, 0, 0])
    np.testing.assert_array_equal(grad_of(lambda t: t.relu6(), x), [0, 0, 0, 1, 0, 0])
    np.testing.assert_allclose(
        grad_of(lambda t: t.hardsigmoid(), x), [0, 1 / 6, 1 / 6, 1 / 6, 0, 0]
    )
    np.testing.assert_allclose(grad_of(lambda t: t.hardswish(), x), [0, 1 / 6, 0.5, 5 / 6, 1, 1])
    # elu's branch for x <= 0 owns the kink: alpha * exp(0)
    np.testing.assert_allclose(grad_of(lambda t: t.elu(2.0), [0.0]), [2.0])
    # tensor bounds get the gradient where x passes them
    t = Tensor(np.array([-2.0, 0.0, 2.0]), requires_grad=True)
    lo = Tensor(np.array([-1.0]), requires_grad=True)
    hi = Tensor(np.array([1.0, 1.0, 1.0]), requires_grad=True)
    t.clip(lo, hi).sum().backward()
    np.testing.assert_array_equal(t.grad.numpy(), [0, 1, 0])
    np.testing.assert_array_equal(lo.grad.numpy(), [1])
    np.testing.assert_array_equal(hi.grad.numpy(), [0, 0, 1])


EXTREMES = [-300.0, -90.0, -20.0, -1.0, -0.0, 0.0, 1e-3, 1.0, 20.0, 90.0, 300.0]


def _sigmoid(x):
    return 0.5 * (1 + np.tanh(0.5 * x))


@pytest.mark.parametrize(
    "name, fn, deriv",
    [
        ("sigmoid", lambda t: t.sigmoid(), lambda x: _sigmoid(x) * _sigmoid(-x)),
        ("tanh", lambda t: t.tanh(), lambda x: 1 / np.cosh(np.clip(x, -300, 300)) ** 2),
        ("softplus", lambda t: t.softplus(), _sigmoid),
        ("silu", lambda t: t.silu(), lambda x: _sigmoid(x) * (1 + x * _sigmoid(-x))),
        ("elu", lambda t: t.elu(), lambda x: np.where(x > 0, 1, np.exp(np.minimum(x, 0)))),
        ("erf", lambda t: t.erf(), lambda x: 2 / np.sqrt(np.pi) * np.exp(-x * x)),
        ("erfc", lambda t: t.erfc(), lambda x: -2 / np.sqrt(np.pi) * np.exp(-x * x)),
        ("atan", lambda t: t.atan(), lambda x: 1 / (1 + x * x)),
        ("asinh", lambda t: t.asinh(), lambda x: 1 / np.hypot(x, 1)),
        (
            "gelu",
            lambda t: t.gelu(),
            lambda x: (
                0.5 * (1 + np.vectorize(__import__("math").erf)(x / np.sqrt(2)))
                + x * np.exp(-x * x / 2) / np.sqrt(2 * np.pi)
            ),
        ),
    ],
)
def test_gradients_stay_finite_at_extremes_and_zero(name, fn, deriv):
    """Composite functions are differentiated by their closed-form derivative,
    never through a branch that was not taken (0 * inf would be NaN)."""
    x = np.array(EXTREMES)
    with np.errstate(over="ignore"):
        want = deriv(x)
    for dtype in (np.float64, np.float32):
        got = grad_of(lambda t, dt=dtype: fn(t.cast(dt)), x)
        assert np.isfinite(got).all(), f"{name} ({dtype.__name__}): {got}"
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=name)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_softmax_gradients_are_the_closed_forms(axis):
    """y (g - sum(g y)) and g - y' sum(g), computed in float32 to about an ulp of
    the result: the gradient of sum(softmax) is 0 up to rounding."""
    x = RNG.uniform(-2, 2, (9, 13)).astype(np.float32)
    w = RNG.uniform(0, 1, (9, 13))
    e = np.exp(x - x.max(axis, keepdims=True).astype(np.float64))
    y = e / e.sum(axis, keepdims=True)
    want = y * (w - (w * y).sum(axis, keepdims=True))
    t = Tensor(x)
    (got,) = (t.softmax(axis) * Tensor(w.astype(np.float32))).sum().gradient(t)
    np.testing.assert_allclose(got.numpy(), want, atol=1e-7)
    (got,) = (t.log_softmax(axis) * Tensor(w.astype(np.float32))).sum().gradient(t)
    np.testing.assert_allclose(got.numpy(), w - y * w.sum(axis, keepdims=True), atol=2e-6)
    (flat,) = t.softmax(axis).sum().gradient(t)
    assert np.abs(flat.numpy()).max() < 1e-7


def test_products_with_zeros_have_exact_gradients():
    a = np.array([[2.0, 0.0, 3.0, 4.0], [0.0, 5.0, 0.0, 1.0], [1.5, -2.0, 0.5, 3.0]])

    def others(row):  # the product of the other entries, position by position
        return np.array([np.prod(np.delete(row, i)) for i in range(len(row))])

    np.testing.assert_allclose(
        grad_of(lambda t: t.prod(1), a), np.stack([others(r) for r in a]), rtol=1e-12
    )
    np.testing.assert_allclose(grad_of(lambda t: t.prod(), a), others(a.ravel()).reshape(a.shape))

    def cumprod_grad(row):  # d sum_j cumprod_j / d x_i
        out = np.zeros_like(row)
        for i in range(len(row)):
            out[i] = sum(np.prod(np.delete(row[: j + 1], i)) for j in range(i, len(row)))
        return out

    np.testing.assert_allclose(
        grad_of(lambda t: t.cumprod(1), a), np.stack([cumprod_grad(r) for r in a]), rtol=1e-12
    )


def test_composite_derivatives_compile_nothing_new(monkeypatch):
    """A derivative node is its source to the compiler: equal programs on new
    inputs reuse the compiled kernels, and the forward stays one kernel."""
    from mlfuse import driver

    monkeypatch.setenv("MLFUSE_CACHE", "0")
    calls: list[int] = []
    real = driver.compile_module
    monkeypatch.setattr(driver, "compile_module", lambda *a, **k: calls.append(1) or real(*a, **k))
    for _ in range(3):
        x = Tensor(RNG.standard_normal(64).astype(np.float32))
        (x.sigmoid() * x.tanh() + x.erf().clip(-0.5, 0.5)).relu().numpy()
    assert len(calls) == 1


# ---------------------------------------------------------------------------
# the API
# ---------------------------------------------------------------------------


def test_gradient_takes_any_tensor_of_the_graph():
    """tinygrad's ``Tensor.gradient``: targets need no requires_grad, unused
    ones get zeros, .grad is left alone."""
    x = Tensor(np.array([1.0, 2.0, 3.0]))
    w = Tensor(np.array([[1.0, -2.0], [3.0, 4.0], [5.0, 6.0]]))
    h = x @ w
    unused = Tensor(np.array([7.0]))
    dx, dw, dh, du = (h.relu().sum()).gradient(x, w, h, unused)
    np.testing.assert_array_equal(dx.numpy(), [-1, 7, 11])  # h = [22, 24]: both positive
    np.testing.assert_array_equal(dw.numpy(), np.repeat([[1.0], [2.0], [3.0]], 2, axis=1))
    np.testing.assert_array_equal(dh.numpy(), [1, 1])
    np.testing.assert_array_equal(du.numpy(), [0])
    assert x.grad is None and w.grad is None
    # a weighted output, and an intermediate value as the target
    y = x * x
    (dy,) = (y * 3).gradient(y, gradient=Tensor(np.array([1.0, 0.0, 2.0])))
    np.testing.assert_array_equal(dy.numpy(), [3, 0, 6])
    (dx2,) = (x * x).sum().gradient(x)
    np.testing.assert_array_equal(dx2.numpy(), [2, 4, 6])
    with pytest.raises(ValueError, match="one-element outputs"):
        y.gradient(x)
    with pytest.raises(TypeError, match="only float tensors"):
        y.sum().gradient(Tensor([1, 2]))
    with pytest.raises(ValueError, match=r"gradient: gradient has shape \(2,\)"):
        y.gradient(x, gradient=Tensor([1.0, 2.0]))


def test_backward_accumulates_and_zero_grad():
    w = Tensor([1.0, 2.0], requires_grad=True)
    assert w.requires_grad and w.is_leaf and w.grad is None
    (w * 3).sum().backward()
    (w * w).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [5.0, 7.0])
    w.grad = None
    (w * 2).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [2.0, 2.0])


def test_non_scalar_backward_takes_a_gradient():
    x = Tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * x
    assert not y.is_leaf and y.requires_grad
    with pytest.raises(RuntimeError, match="one-element outputs, this one has shape \\(3,\\)"):
        y.backward()
    y.backward(Tensor([1.0, 0.0, 2.0]))
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 0.0, 12.0])
    with pytest.raises(ValueError, match="gradient has shape \\(2,\\), the tensor \\(3,\\)"):
        (x * 2).backward(Tensor([1.0, 2.0]))


def test_backward_after_the_forward_was_realized():
    x = Tensor(np.linspace(-1, 1, 6).reshape(2, 3), requires_grad=True)
    h = (x * 2).exp()
    loss = h.sum()
    assert loss.item() > 0  # realized: the nodes forget their sources, the tape does not
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(2 * np.linspace(-1, 1, 6)).reshape(2, 3))


def test_no_grad_detach_and_errors():
    x = Tensor([1.0, 2.0], requires_grad=True)
    with mlfuse.no_grad():
        y = x * 2
        assert not mlfuse.is_grad_enabled()
    assert mlfuse.is_grad_enabled()
    assert not y.requires_grad
    with pytest.raises(RuntimeError, match="does not require grad"):
        y.sum().backward()
    z = (x.detach() * x).sum()
    z.backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 2.0])  # the detached factor is a constant
    with pytest.raises(RuntimeError, match="only float tensors can require gradients"):
        Tensor([1, 2]).requires_grad_()

    @mlfuse.no_grad()
    def f(t):
        return t * 3

    assert not f(x).requires_grad


def test_backward_without_requires_grad_follows_tinygrad():
    # tinygrad has no requires_grad: backward fills .grad of every live float
    # tensor the result was computed from
    a = np.array([[1.0, 2.0], [3.0, -1.0]])
    w = np.array([[0.5, -1.0], [2.0, 1.0]])
    x, W = Tensor(a), Tensor(w)
    h = x @ W
    out = h.relu().sum()
    out.backward()
    mask = (a @ w > 0).astype(float)
    np.testing.assert_allclose(x.grad.numpy(), mask @ w.T)
    np.testing.assert_allclose(W.grad.numpy(), a.T @ mask)
    np.testing.assert_allclose(h.grad.numpy(), mask)  # an intermediate held by a name
    (x @ W).relu().sum().backward()  # accumulates, as tinygrad's does
    np.testing.assert_allclose(x.grad.numpy(), 2 * mask @ w.T)
    out.backward()  # the same result again, its graph realized in part since
    np.testing.assert_allclose(x.grad.numpy(), 3 * mask @ w.T)
    np.testing.assert_allclose(W.grad.numpy(), 3 * a.T @ mask)
    # integers have no gradient; a graph of them alone is PyTorch's error
    with pytest.raises(RuntimeError, match="does not require grad"):
        (Tensor([1, 2]) * 2).sum().backward()
    # PyTorch's rule wherever a tensor of the graph requires grad (computed
    # under no_grad) or grad mode is off
    p = Tensor([1.0, 2.0], requires_grad=True)
    with mlfuse.no_grad():
        y = (p * Tensor([3.0, 4.0])).sum()
    with pytest.raises(RuntimeError, match="does not require grad"):
        y.backward()
    assert p.grad is None
    with mlfuse.no_grad(), pytest.raises(RuntimeError, match="does not require grad"):
        (Tensor([1.0]) * 2).sum().backward()


def test_gradient_hooks_see_and_replace_gradients():
    x = Tensor([1.0, -2.0, 3.0], requires_grad=True)
    h = x * 2
    seen = []
    on_h = h.register_hook(lambda g: seen.append(g.numpy()) or g * 10)
    on_x = x.register_hook(lambda g: g + 1)  # a leaf's hook runs before .grad
    (h * h).sum().backward()
    np.testing.assert_allclose(seen[0], [4.0, -8.0, 12.0])  # dL/dh = 2h
    np.testing.assert_allclose(x.grad.numpy(), [81.0, -159.0, 241.0])  # 2 * 10 * 2h + 1
    on_h.remove()
    on_x.remove()
    x.grad = None
    (x * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0, 3.0])
    with pytest.raises(RuntimeError, match="does not require grad"):
        Tensor([1.0]).register_hook(lambda g: g)
    x.register_hook(lambda g: g.sum())
    with pytest.raises(RuntimeError, match="must return None or a tensor of the gradient's shape"):
        (x * 1).sum().backward()


def test_a_value_built_again_under_no_grad_records_nothing():
    w = Tensor([1.0, 2.0], requires_grad=True)
    z = Tensor([3.0, 4.0], requires_grad=True)
    tracked = w * 2  # recorded
    with mlfuse.no_grad():
        y = w * 2  # the same node in the graph, built again: not recorded now
    assert tracked.requires_grad and not y.requires_grad
    (y * z).sum().backward()
    assert w.grad is None  # no gradient reaches w through y
    np.testing.assert_allclose(z.grad.numpy(), [2.0, 4.0])


def test_graph_is_freed_unless_retained():
    x = Tensor([1.0, 2.0], requires_grad=True)
    loss = (x * x).sum()
    loss.backward(retain_graph=True)
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 8.0])
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        loss.backward()
    # a tensor computed from the freed graph before or after it was freed (PyTorch's error;
    # the gradient would silently miss the freed part)
    w = Tensor([1.0, 2.0], requires_grad=True)
    y = (w * w).sum()
    before = y * 2
    y.backward()
    for t in (before, y * 0.5):
        with pytest.raises(RuntimeError, match="pass retain_graph=True to that backward"):
            t.backward()
    np.testing.assert_allclose(w.grad.numpy(), [2.0, 4.0])


def test_grad_fn_names_how_a_tensor_was_computed():
    w = Tensor([1.0, 2.0], requires_grad=True)
    x = Tensor([3.0, 4.0])
    y = (w * x).exp()
    assert w.grad_fn is None and x.grad_fn is None
    assert y.grad_fn.name() == "ExpBackward" and repr(y.grad_fn) == "<ExpBackward object>"
    ((mul, _),) = y.grad_fn.next_functions
    assert mul.name() == "MulBackward" and mul == y.grad_fn.next_functions[0][0]
    (acc, i), (none, j) = mul.next_functions
    assert acc.name() == "AccumulateGrad" and acc.variable is w and none is None and i == j == 0
    with mlfuse.no_grad():
        assert (w * 2).grad_fn is None
    # a freed graph keeps its outputs' grad_fn and requires_grad, as PyTorch's
    loss = y.sum()
    loss.backward()
    assert loss.grad_fn is not None and loss.grad_fn.next_functions == ()
    assert loss.requires_grad and not loss.is_leaf and w.is_leaf


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_fmod_and_remainder_gradients_are_pytorchs(dt):
    # d/da = 1; d/db = -trunc(a/b) for fmod, -floor(a/b) for %: closed forms, not
    # derivatives of the exact long division that computes the value
    a = np.array([5.5, -7.25, 3.0, 1e6 + 0.5], dt)
    b = np.array([2.0, 2.0, -1.5, -3.0], dt)
    for fn, ref in (
        (lambda x, y: x.fmod(y), np.trunc),
        (lambda x, y: x % y, np.floor),
    ):
        x, y = Tensor(a, requires_grad=True), Tensor(b, requires_grad=True)
        fn(x, y).sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), np.ones_like(a))
        np.testing.assert_array_equal(y.grad.numpy(), -ref(a.astype(F64) / b))


ZERO_NORM_CASES = {
    "std": lambda x: x.std(),
    "std-dim": lambda x: x.reshape(3, 1).expand(3, 2).std(1).sum(),
    "norm": lambda x: (x * 0).norm(),
    "norm-p3": lambda x: (x * 0).norm(3, dim=0),
    "norm-p0.5": lambda x: (x * 0).norm(0.5),
    "dist": lambda x: x.dist(x),
    "cdist": lambda x: x.reshape(3, 1).cdist(x.reshape(3, 1)).sum(),
    "normalize": lambda x: F.normalize(x * 0, dim=0).sum(),
    "cosine": lambda x: F.cosine_similarity(x * 0, x, dim=0),
    "vector_norm": lambda x: mlfuse.linalg.vector_norm(x - x),
}


@pytest.mark.parametrize("name", ZERO_NORM_CASES)
def test_norms_at_zero_have_zero_gradients(name):
    # PyTorch's subgradient: a norm (or std) that is 0 passes no gradient, where
    # differentiating sqrt at 0 would give 0 * inf = NaN
    x = Tensor([1.5, 1.5, 1.5], requires_grad=True)
    ZERO_NORM_CASES[name](x).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0, 0.0])


@pytest.mark.parametrize("p", [2, 3, 1.5, 0.7])
@pytest.mark.parametrize("dim, keepdim", [(None, False), (1, False), ((0, 2), True), (-1, True)])
def test_norm_and_std_gradients(p, dim, keepdim):
    a = RNG.standard_normal((3, 4, 5))
    out_shape = np.linalg.norm(a.reshape(3, 4, 5), axis=dim, keepdims=keepdim).shape
    w = RNG.standard_normal(out_shape)
    x = Tensor(a, requires_grad=True)
    (x.norm(p, dim=dim, keepdim=keepdim) * Tensor(w)).sum().backward()
    axes = tuple(range(3)) if dim is None else (dim,) if isinstance(dim, int) else dim
    n = (np.abs(a) ** p).sum(axes, keepdims=True) ** (1 / p)
    wk = w.reshape(np.shape(n))
    expected = np.sign(a) * np.abs(a) ** (p - 1) / n ** (p - 1) * wk
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-10)
    if p == 2:
        x = Tensor(a, requires_grad=True)
        (x.std(dim, keepdim=keepdim) * Tensor(w)).sum().backward()
        m = a.size // n.size
        sd = a.std(axes, ddof=1, keepdims=True)
        expected = (a - a.mean(axes, keepdims=True)) / ((m - 1) * sd) * wk
        np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-10)


def test_gradient_of_a_scalar_used_in_a_product_and_a_concatenation():
    # the backward kernel sums over a dim that the store loops also walk: the
    # column sum must read each row, not the store loop's row twice
    a = RNG.standard_normal((2, 3))
    w = RNG.standard_normal(3)

    def loss(b, a, w, cat, prod):
        v = prod(b * a, -1) * (abs(b) + 0.5)
        return (cat([v, v[-1:]]) * w).sum()

    b = Tensor(-0.7, requires_grad=True)
    loss(b, Tensor(a), Tensor(w), mlfuse.cat, lambda x, d: x.prod(d)).backward()
    h = 1e-6
    f = lambda x: loss(x, a, w, np.concatenate, lambda y, d: y.prod(d))  # noqa: E731
    np.testing.assert_allclose(b.grad.item(), (f(-0.7 + h) - f(-0.7 - h)) / (2 * h), rtol=1e-7)


def test_shared_constants_are_separate_leaves():
    a = Tensor.zeros(3, requires_grad=True)
    b = Tensor.zeros(3)
    (b * 2 + a * 3).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [3.0, 3.0, 3.0])
    assert not b.requires_grad and b.grad is None


def test_a_leaf_updated_in_place_stays_a_leaf():
    w = Tensor([1.0, 2.0], requires_grad=True).realize()
    (w * w).sum().backward()
    with mlfuse.no_grad():
        w.assign(w - w.grad * 0.25)
    w.grad = None
    assert w.is_leaf and w.requires_grad
    np.testing.assert_allclose(w.numpy(), [0.5, 1.0])
    (w * w).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [1.0, 2.0])


def test_functional_grad():
    f = mlfuse.grad(lambda x, y: (x * y.exp()).sum())
    x, y = Tensor([1.0, 2.0]), Tensor([0.0, 1.0])
    dx, dy = f(x, y)
    np.testing.assert_allclose(dx.numpy(), np.exp([0.0, 1.0]))
    np.testing.assert_allclose(dy.numpy(), [1.0, 2 * np.e])
    assert x.grad is None and not x.requires_grad
    dy_only = mlfuse.grad(lambda x, y: (x * y).sum(), argnums=1)(x, y)
    np.testing.assert_allclose(dy_only.numpy(), [1.0, 2.0])
    with pytest.raises(RuntimeError, match="one element"):
        mlfuse.grad(lambda x: x * 2)(x)
    with pytest.raises(TypeError, match="only float tensors have gradients"):
        mlfuse.grad(lambda x: x.sum())(Tensor([1, 2]))


def test_second_derivative_with_create_graph():
    x = Tensor([0.5, 1.5], requires_grad=True)
    y = (x**3).sum()
    y.backward(create_graph=True)
    gx = x.grad
    x.grad = None
    gx.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 9.0])  # d/dx 3x^2 = 6x


def test_backward_is_one_fused_schedule():
    x = Tensor(np.float32(normal(8, 16)))
    w = Tensor(np.float32(normal(16, 4)), requires_grad=True)
    loss = (x @ w).relu().square().mean()
    loss.backward()
    # the gradient is one contraction whose epilogue-side operand (the relu mask
    # times 2h) is computed inside it: forward product + backward product
    assert len(mlfuse.schedule(loss, w.grad)) <= 3


def test_deep_graphs_do_not_recurse():
    x = Tensor([0.5], requires_grad=True)
    y = x
    for _ in range(3000):
        y = y * 1.0001 + 0.0
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0001**3000], rtol=1e-3)


TORCH_CASES = {
    # programs spelled the same in mlfuse and PyTorch: F is either nn.functional
    "mlp": (
        lambda F, x, w1, w2: F.cross_entropy(F.gelu(x @ w1) @ w2, targets(F, x)),
        [normal(4, 5), normal(5, 6), normal(6, 3)],
    ),
    "conv pool norm": (
        lambda F, x, w: F.layer_norm(F.max_pool2d(F.conv2d(x, w, padding=1).relu(), 2), (2,)),
        [normal(1, 2, 4, 4), normal(3, 2, 3, 3)],
    ),
    "attention": (
        lambda F, q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True).tanh(),
        [normal(2, 3, 4), normal(2, 3, 4), normal(2, 3, 4)],
    ),
    "scans and reductions": (
        lambda F, x: x.cumsum(1).softmax(-1).log().sum(0) * x.logsumexp(0),
        [normal(3, 4)],
    ),
}


def targets(F, x):
    labels = [0, 2, 1, 1]
    return (
        torch.tensor(labels) if F is not None and F.__name__.startswith("torch") else Tensor(labels)
    )


@pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
@pytest.mark.parametrize("name", list(TORCH_CASES))
def test_matches_torch_autograd(name):
    import torch.nn.functional as TF

    fn, arrays = TORCH_CASES[name]
    arrays = [np.asarray(a, F64) for a in arrays]
    ours = mlfuse.grad(lambda *ts: fn(F, *ts).sum())(*[Tensor(a) for a in arrays])
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    fn(TF, *ts).sum().backward()
    for k, (g, t) in enumerate(zip(ours, ts)):
        np.testing.assert_allclose(
            g.numpy(), t.grad.numpy(), rtol=1e-9, atol=1e-9, err_msg=f"input {k}"
        )


def test_conv_transpose_gradients():
    check(
        lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1),
        normal(1, 2, 3, 3),
        normal(2, 3, 3, 2),
        normal(3),
    )
