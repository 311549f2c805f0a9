"""``nn.utils`` beyond clipping: ``parametrize`` (class swap, originals,
chains, right_inverse, caching, removal), ``parametrizations.weight_norm`` /
``spectral_norm`` / ``orthogonal``, the old-style ``weight_norm`` and
``spectral_norm``, batch-norm fusion, ``clip_grads_with_norm_`` and
``skip_init``, against float64 numpy references of the same formulas, with
PyTorch's ``state_dict`` keys hard-coded (and checked against PyTorch where it
is installed)."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import mlfuse
import mlfuse.nn as nn
from mlfuse import Tensor
from mlfuse.errors import ArgumentError
from mlfuse.nn.utils import parametrizations as PZ
from mlfuse.nn.utils import parametrize as P

RNG = np.random.default_rng(5)


def r(*shape) -> np.ndarray:
    return RNG.standard_normal(shape)


def close(t, ref, tol=1e-9):
    got = t.numpy() if isinstance(t, Tensor) else np.asarray(t)
    assert got.shape == np.shape(ref), (got.shape, np.shape(ref))
    np.testing.assert_allclose(got, ref, rtol=tol, atol=tol)


def p64(a: np.ndarray) -> Tensor:
    return Tensor(np.asarray(a, np.float64), requires_grad=True)


def linear64(n_in: int, n_out: int, bias: bool = True) -> nn.Linear:
    lin = nn.Linear(n_in, n_out, bias=bias)
    lin.weight = p64(r(n_out, n_in))
    if bias:
        lin.bias = p64(r(n_out))
    return lin


def conv64(cls, c_in: int, c_out: int, k: int, bias: bool = True):
    conv = cls(c_in, c_out, k, bias=bias)
    conv.weight = p64(r(*conv.weight.shape))
    if bias:
        conv.bias = p64(r(c_out))
    return conv


def np_conv2d(x, w, b):
    """Stride 1, no padding: (N, C, H, W) with (O, C, kh, kw)."""
    _, _, h, wd = x.shape
    _, _, kh, kw = w.shape
    oh, ow = h - kh + 1, wd - kw + 1
    out = sum(
        np.einsum("nchw,oc->nohw", x[:, :, i : i + oh, j : j + ow], w[:, :, i, j])
        for i in range(kh)
        for j in range(kw)
    )
    return out + (0 if b is None else b[None, :, None, None])


class Symmetric(nn.Module):
    def forward(self, x):
        return x.triu() + x.triu(1).T

    def right_inverse(self, a):
        return a.triu()


class Scale(nn.Module):
    def __init__(self, k: float) -> None:
        self.k = k

    def forward(self, x):
        return x * self.k

    def right_inverse(self, a):
        return a / self.k


def sym(a):
    return np.triu(a) + np.triu(a, 1).T


# -- parametrize ----------------------------------------------------------------------
def test_register_parametrization_output_grads_and_keys():
    lin = linear64(3, 3)
    w0, b0 = lin.weight.numpy(), lin.bias.numpy()
    orig = lin.weight
    assert P.register_parametrization(lin, "weight", Symmetric()) is lin
    assert type(lin).__name__ == "ParametrizedLinear" and isinstance(lin, nn.Linear)
    assert P.type_before_parametrizations(lin) is nn.Linear
    assert P.is_parametrized(lin) and P.is_parametrized(lin, "weight")
    assert not P.is_parametrized(lin, "bias") and not P.is_parametrized(nn.Linear(2, 2))
    assert list(lin.state_dict()) == ["bias", "parametrizations.weight.original"]
    # no right_inverse-changed copy: the original is the very tensor (an optimizer keeps it)
    assert lin.parametrizations.weight.original is orig
    assert [n for n, _ in lin.named_parameters()] == ["bias", "parametrizations.weight.original"]
    close(orig, np.triu(w0))
    close(lin.weight, sym(w0))
    x = r(4, 3)
    y = lin(Tensor(x))
    close(y, x @ sym(w0).T + b0)
    gy = r(4, 3)
    (y * Tensor(gy)).sum().backward()
    g = gy.T @ x  # dL/dweight; weight = triu(o) + triu(o, 1).T
    close(orig.grad, np.triu(g) + np.triu(g.T, 1))
    close(lin.bias.grad, gy.sum(0))
    # a second parametrization chains; assigning goes through both right_inverses
    P.register_parametrization(lin, "weight", Scale(2.0))
    close(lin.weight, 2 * sym(w0))
    assert list(lin.state_dict()) == ["bias", "parametrizations.weight.original"]
    a = sym(r(3, 3))
    lin.weight = Tensor(a)
    close(lin.weight, a)
    close(orig, np.triu(a) / 2)
    assert lin.parametrizations.weight.original is orig and orig.requires_grad


def test_parametrization_state_dict_round_trip_and_copies():
    lin = linear64(3, 3)
    P.register_parametrization(lin, "weight", Symmetric())
    other = linear64(3, 3)
    P.register_parametrization(other, "weight", Symmetric())
    other.load_state_dict(lin.state_dict())
    x = Tensor(r(2, 3))
    close(other(x), lin(x).numpy())
    seq = nn.Sequential(lin, nn.ReLU(), PZ.spectral_norm(nn.Linear(3, 2)))
    assert list(seq.state_dict()) == [
        "0.bias", "0.parametrizations.weight.original", "2.bias",
        "2.parametrizations.weight.original", "2.parametrizations.weight.0._u",
        "2.parametrizations.weight.0._v",
    ]  # fmt: skip
    for twin in (copy.deepcopy(lin), pickle.loads(pickle.dumps(lin))):
        assert type(twin).__name__ == "ParametrizedLinear" and type(twin) is not type(lin)
        close(twin(x), lin(x).numpy())
        P.remove_parametrizations(twin, "weight")  # leaves the original alone
        assert type(twin) is nn.Linear and type(lin).__name__ == "ParametrizedLinear"
    close(lin.weight, sym(lin.parametrizations.weight.original.numpy()))


def test_remove_parametrizations():
    lin = linear64(3, 3)
    orig = lin.weight
    P.register_parametrization(lin, "weight", Symmetric())
    P.register_parametrization(lin, "weight", Scale(3.0))
    want = lin.weight.numpy()
    P.remove_parametrizations(lin, "weight")
    assert type(lin) is nn.Linear and "parametrizations" not in vars(lin)
    assert lin.weight is orig and lin.weight.requires_grad and lin.weight.is_leaf
    close(lin.weight, want)
    assert list(lin.state_dict()) == ["weight", "bias"] or set(lin.state_dict()) == {
        "weight",
        "bias",
    }
    # leave_parametrized=False: the original's value
    P.register_parametrization(lin, "weight", Scale(2.0))
    o = lin.parametrizations.weight.original.numpy()
    P.remove_parametrizations(lin, "weight", leave_parametrized=False)
    close(lin.weight, o)
    # several tensors: only leave_parametrized=True
    PZ.weight_norm(lin)
    with pytest.raises(ArgumentError, match="leave_parametrized=False needs a tensor parametr"):
        P.remove_parametrizations(lin, "weight", leave_parametrized=False)
    with pytest.raises(ArgumentError, match="Linear has no parametrization on 'bias'"):
        P.remove_parametrizations(lin, "bias")
    P.remove_parametrizations(lin, "weight")
    close(lin.weight, o)
    assert lin.weight.requires_grad and type(lin) is nn.Linear


class Holder(nn.Module):
    def __init__(self) -> None:
        self.w = p64(r(2, 2))
        self.register_buffer("scale", Tensor(np.array([1.0, 2.0])))

    def forward(self, x):
        return x @ self.w * self.scale


def test_parametrize_a_buffer_and_transfer():
    m = Holder()
    s0 = m.scale.numpy()
    P.register_parametrization(m, "scale", Scale(10.0))
    assert [n for n, _ in m.named_parameters()] == ["w"]
    assert [n for n, _ in m.named_buffers()] == ["parametrizations.scale.original"]
    assert list(m.state_dict()) == ["w", "parametrizations.scale.original"]
    close(m.parametrizations.scale.original, s0 / 10)  # through right_inverse
    close(m.scale, s0)
    x = r(3, 2)
    close(m(Tensor(x)), x @ m.w.numpy() * s0)
    P.remove_parametrizations(m, "scale")
    assert [n for n, _ in m.named_buffers()] == ["scale"] and type(m) is Holder
    close(m.scale, s0)
    # transfer: shares the parametrizations and the originals
    a, b = linear64(3, 3), linear64(3, 3)
    P.register_parametrization(a, "weight", Symmetric())
    P.transfer_parametrizations_and_params(a, b)
    assert b.parametrizations.weight.original is a.parametrizations.weight.original
    close(b.weight, a.weight.numpy())


class Counting(nn.Module):
    calls = 0

    def forward(self, x):
        Counting.calls += 1
        return x * 1.0


def test_cached_computes_each_tensor_once():
    lin = linear64(2, 2)
    P.register_parametrization(lin, "weight", Counting())
    Counting.calls = 0
    lin.weight, lin.weight  # noqa: B018 - reads
    assert Counting.calls == 2
    with P.cached():
        a = lin.weight
        with P.cached():  # nested: the same cache
            assert lin.weight is a
        assert lin.weight is a
    assert Counting.calls == 3
    assert lin.weight is not a and Counting.calls == 4


def test_parametrize_errors():
    lin = linear64(3, 2)
    with pytest.raises(ArgumentError, match="Linear has no parameter or buffer named 'nope'"):
        P.register_parametrization(lin, "nope", Scale(2.0))
    with pytest.raises(TypeError, match="parametrization must be an nn.Module"):
        P.register_parametrization(lin, "weight", lambda x: x)

    class Flat(nn.Module):
        def forward(self, x):
            return x.reshape(-1)

    with pytest.raises(ArgumentError, match=r"may not change the shape \(\(2, 3\) -> \(6,\)\)"):
        P.register_parametrization(lin, "weight", Flat())
    assert type(lin) is nn.Linear and isinstance(vars(lin)["weight"], Tensor)  # untouched
    P.register_parametrization(lin, "weight", Flat(), unsafe=True)
    assert lin.weight.shape == (6,)
    with pytest.raises(ArgumentError, match="does not implement right_inverse"):
        lin.weight = Tensor(np.zeros(6))
    with pytest.raises(ArgumentError, match="has no parametrization on 'weight'"):
        P.remove_parametrizations(nn.Linear(2, 2), "weight")


# -- parametrizations.weight_norm -------------------------------------------------------
def _wn(v, g, dim):
    if dim is None:
        return g * v / np.linalg.norm(v)
    axes = tuple(i for i in range(v.ndim) if i != dim % v.ndim)
    return g * v / np.sqrt((v * v).sum(axes, keepdims=True))


def test_weight_norm_linear_values_grads_and_keys():
    lin = linear64(4, 3)
    w0 = lin.weight.numpy()
    PZ.weight_norm(lin)
    assert list(lin.state_dict()) == [
        "bias", "parametrizations.weight.original0", "parametrizations.weight.original1",
    ]  # fmt: skip
    g, v = lin.parametrizations.weight.original0, lin.parametrizations.weight.original1
    assert g.shape == (3, 1) and v.shape == (3, 4) and g.requires_grad and v.is_leaf
    close(g, np.linalg.norm(w0, axis=1, keepdims=True))
    close(v, w0)
    close(lin.weight, w0)
    x, gy = r(5, 4), r(5, 3)
    (lin(Tensor(x)) * Tensor(gy)).sum().backward()
    gw = gy.T @ x
    n = np.linalg.norm(w0, axis=1, keepdims=True)
    vhat = w0 / n
    close(g.grad, (gw * vhat).sum(1, keepdims=True))
    gn = g.numpy()
    close(v.grad, gn / n * (gw - (gw * vhat).sum(1, keepdims=True) * vhat))
    # new values through the parametrization, and a state_dict round trip
    with mlfuse.no_grad():
        g.assign(Tensor(np.array([[1.0], [2.0], [3.0]])))
    close(lin.weight, _wn(w0, np.array([[1.0], [2.0], [3.0]]), 0))
    other = PZ.weight_norm(linear64(4, 3))
    other.load_state_dict(lin.state_dict())
    close(other.weight, lin.weight.numpy())


@pytest.mark.parametrize("dim", [0, 1, None, -2])
def test_weight_norm_conv2d_dims(dim):
    conv = conv64(nn.Conv2d, 2, 3, 2)
    w0 = conv.weight.numpy()
    PZ.weight_norm(conv, dim=dim)
    g = conv.parametrizations.weight.original0
    want_g = {0: (3, 1, 1, 1), 1: (1, 2, 1, 1), None: (), -2: (1, 1, 2, 1)}[dim]
    assert g.shape == want_g
    new_g = np.asarray(np.abs(r(*want_g)) + 0.5)
    with mlfuse.no_grad():
        g.assign(Tensor(new_g))
    w = _wn(w0, new_g, dim)
    x = r(2, 2, 4, 4)
    close(conv(Tensor(x)), np_conv2d(x, w, conv.bias.numpy()))


def test_weight_norm_errors():
    with pytest.raises(ArgumentError, match="weight_norm: dim 2 is out of range"):
        PZ.weight_norm(nn.Linear(2, 2), dim=2)
    with pytest.raises(ArgumentError, match="Linear has no parameter or buffer named 'w'"):
        PZ.weight_norm(nn.Linear(2, 2), name="w")


# -- parametrizations.spectral_norm ------------------------------------------------------
def _sigma(w):
    return np.linalg.svd(w.reshape(w.shape[0], -1), compute_uv=False)[0]


def test_spectral_norm_linear_power_iteration_and_keys():
    lin = linear64(5, 4)
    w0 = lin.weight.numpy()
    PZ.spectral_norm(lin)
    assert list(lin.state_dict()) == [
        "bias", "parametrizations.weight.original",
        "parametrizations.weight.0._u", "parametrizations.weight.0._v",
    ]  # fmt: skip
    sn = lin.parametrizations.weight[0]
    assert sn._u.shape == (4,) and sn._v.shape == (5,)
    x = Tensor(r(2, 5))
    for _ in range(3):
        v0 = sn._v.numpy()
        y = lin(x)  # training: one step, then weight / (u . W v)
        u = w0 @ v0
        u /= np.linalg.norm(u)
        v = w0.T @ u
        v /= np.linalg.norm(v)
        close(y, x.numpy() @ (w0 / (u @ w0 @ v)).T + lin.bias.numpy())
        close(sn._u, u)
        close(sn._v, v)
    for _ in range(20):
        lin.weight.realize()
    close(_sigma(lin.weight.numpy()), 1.0, 1e-7)
    # eval: no step; the gradient treats u, v as constants
    lin.eval()
    u, v = sn._u.numpy(), sn._v.numpy()
    w = lin.weight
    close(sn._u, u)
    close(sn._v, v)
    gr = r(4, 5)
    (w * Tensor(gr)).sum().backward()
    s = u @ w0 @ v
    orig = lin.parametrizations.weight.original
    close(orig.grad, gr / s - (gr * w0).sum() / s**2 * np.outer(u, v))
    other = PZ.spectral_norm(linear64(5, 4)).eval()
    other.load_state_dict(lin.state_dict())
    close(other(x), lin(x).numpy())


def test_spectral_norm_conv_dims():
    conv = conv64(nn.Conv2d, 2, 3, 2)
    w0 = conv.weight.numpy()
    PZ.spectral_norm(conv, n_power_iterations=40)
    sn = conv.parametrizations.weight[0]
    assert sn._u.shape == (3,) and sn._v.shape == (8,)
    close(_sigma(conv.weight.numpy()), 1.0, 1e-7)
    x = r(1, 2, 3, 3)
    conv.eval()
    close(conv(Tensor(x)), np_conv2d(x, w0 / _sigma(w0), conv.bias.numpy()), 1e-7)
    deconv = conv64(nn.ConvTranspose2d, 2, 3, 2)  # weight (2, 3, 2, 2): dim 1 by default
    PZ.spectral_norm(deconv, n_power_iterations=40)
    sn = deconv.parametrizations.weight[0]
    assert sn.dim == 1 and sn._u.shape == (3,) and sn._v.shape == (8,)
    wm = deconv.weight.numpy().transpose(1, 0, 2, 3)
    close(_sigma(wm), 1.0, 1e-7)
    with pytest.raises(ArgumentError, match="n_power_iterations must be positive, got 0"):
        PZ.spectral_norm(nn.Linear(2, 2), n_power_iterations=0)
    with pytest.raises(IndexError, match="dim 3 is out of range for a weight of 2 dims"):
        PZ.spectral_norm(nn.Linear(2, 2), dim=3)


# -- parametrizations.orthogonal --------------------------------------------------------
@pytest.mark.parametrize(
    "shape,kind", [((3, 3), None), ((3, 3), "cayley"), ((4, 3), None), ((3, 4), "householder")]
)
def test_orthogonal(shape, kind):
    lin = linear64(shape[1], shape[0])
    w0 = lin.weight.numpy()
    PZ.orthogonal(lin, orthogonal_map=kind)
    keys = ["bias", "parametrizations.weight.original", "parametrizations.weight.0.base"]
    assert list(lin.state_dict()) == keys
    w = lin.weight.numpy()
    small = min(shape)
    gram = w.T @ w if shape[0] >= shape[1] else w @ w.T
    close(gram, np.eye(small), 1e-9)
    if shape[0] == shape[1]:  # the orthogonal factor of the weight itself
        q, rr = np.linalg.qr(w0)
        close(w, q * np.sign(np.diag(rr)), 1e-9)
    # moving the original keeps the weight orthogonal, and the gradient reaches it
    orig = lin.parametrizations.weight.original
    step = 0.3 * r(*shape)
    np.fill_diagonal(step, 0)  # householder reads the signs of the diagonal (no gradient)
    with mlfuse.no_grad():
        orig.assign(orig + Tensor(step))
    w = lin.weight
    wn = w.numpy()
    close(wn.T @ wn if shape[0] >= shape[1] else wn @ wn.T, np.eye(small), 1e-9)
    (w * Tensor(r(*shape))).sum().backward()
    assert orig.grad is not None and np.abs(orig.grad.numpy()).sum() > 0
    # assigning an orthogonal matrix makes it the weight
    q = np.linalg.qr(r(max(shape), small))[0]
    q = q if shape[0] >= shape[1] else q.T
    lin.weight = Tensor(q)
    close(lin.weight, q, 1e-9)


def test_orthogonal_errors():
    with pytest.raises(ArgumentError, match="expected a matrix or batch of matrices"):
        PZ.orthogonal(nn.LayerNorm(3))
    with pytest.raises(ArgumentError, match="orthogonal_map must be one of"):
        PZ.orthogonal(nn.Linear(2, 2), orthogonal_map="qr")


# -- the old-style weight_norm and spectral_norm ----------------------------------------------
def test_old_weight_norm():
    lin = linear64(4, 3)
    w0 = lin.weight.numpy()
    assert nn.utils.weight_norm(lin) is lin
    assert type(lin).__name__ == "Linear" and isinstance(lin, nn.Linear)
    assert list(lin.state_dict()) == ["bias", "weight_g", "weight_v"]
    assert lin.weight_g.shape == (3, 1) and lin.weight_v.shape == (3, 4)
    close(lin.weight, w0)
    g = np.array([[0.5], [1.0], [2.0]])
    with mlfuse.no_grad():
        lin.weight_g.assign(Tensor(g))
    x = r(2, 4)
    close(lin(Tensor(x)), x @ _wn(w0, g, 0).T + lin.bias.numpy())
    lin(Tensor(x)).sum().backward()
    assert lin.weight_g.grad is not None and lin.weight_v.grad is not None
    with pytest.raises(ArgumentError, match="computed by weight_norm from weight_g, weight_v"):
        lin.weight = Tensor(w0)
    with pytest.raises(ArgumentError, match="'weight' of Linear already has a weight_norm"):
        nn.utils.weight_norm(lin)
    other = nn.utils.weight_norm(linear64(4, 3))
    other.load_state_dict(lin.state_dict())
    close(other(Tensor(x)), lin(Tensor(x)).numpy())
    nn.utils.remove_weight_norm(lin)
    assert type(lin) is nn.Linear and list(lin.state_dict()) == ["bias", "weight"]
    assert lin.weight.requires_grad and lin.weight.is_leaf
    close(lin.weight, _wn(w0, g, 0))
    with pytest.raises(ArgumentError, match="no weight_norm of 'weight' in Linear"):
        nn.utils.remove_weight_norm(lin)
    whole = nn.utils.weight_norm(linear64(2, 2), dim=None)
    assert whole.weight_g.shape == ()


def test_old_spectral_norm():
    lin = linear64(5, 4)
    w0 = lin.weight.numpy()
    nn.utils.spectral_norm(lin)
    assert type(lin).__name__ == "Linear"
    assert list(lin.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
    assert [n for n, _ in lin.named_buffers()] == ["weight_u", "weight_v"]
    x = Tensor(r(2, 5))
    u0 = lin.weight_u.numpy()
    y = lin(x)  # v first, then u (the old order)
    v = w0.T @ u0
    v /= np.linalg.norm(v)
    u = w0 @ v
    u /= np.linalg.norm(u)
    close(y, x.numpy() @ (w0 / (u @ w0 @ v)).T + lin.bias.numpy())
    close(lin.weight, w0 / (u @ w0 @ v))  # the weight of the last call
    for _ in range(30):
        lin(x).realize()
    close(_sigma(lin.weight.numpy()), 1.0, 1e-7)
    lin.eval()
    u = lin.weight_u.numpy()
    lin(x).realize()
    close(lin.weight_u, u)
    nn.utils.remove_spectral_norm(lin)
    assert type(lin) is nn.Linear and list(lin.state_dict()) == ["bias", "weight"]
    close(_sigma(lin.weight.numpy()), 1.0, 1e-7)
    with pytest.raises(ArgumentError, match="no spectral_norm of 'weight' in Linear"):
        nn.utils.remove_spectral_norm(lin)


# -- fusion -------------------------------------------------------------------------------
def bn64(cls, n: int):
    bn = cls(n)
    bn.weight, bn.bias = p64(r(n)), p64(r(n))
    bn.running_mean = Tensor(r(n))
    bn.running_var = Tensor(np.abs(r(n)) + 0.5)
    return bn.eval()


@pytest.mark.parametrize("bias", [True, False])
def test_fuse_conv_bn_eval(bias):
    conv = conv64(nn.Conv2d, 2, 3, 2, bias=bias).eval()
    bn = bn64(nn.BatchNorm2d, 3)
    fused = nn.utils.fuse_conv_bn_eval(conv, bn)
    assert type(fused) is nn.Conv2d and fused is not conv
    assert fused.weight.requires_grad and fused.bias.requires_grad == bias
    x = Tensor(r(2, 2, 4, 4))
    close(fused(x), bn(conv(x)).numpy())
    w, rm, rv = conv.weight.numpy(), bn.running_mean.numpy(), bn.running_var.numpy()
    scale = bn.weight.numpy() / np.sqrt(rv + bn.eps)
    close(fused.weight, w * scale[:, None, None, None])
    b = conv.bias.numpy() if bias else 0
    close(fused.bias, (b - rm) * scale + bn.bias.numpy())


def test_fuse_conv_transpose_and_linear_bn_eval():
    deconv = conv64(nn.ConvTranspose2d, 2, 3, 2).eval()
    bn = bn64(nn.BatchNorm2d, 3)
    fused = nn.utils.fuse_conv_bn_eval(deconv, bn, transpose=True)
    x = Tensor(r(1, 2, 3, 3))
    close(fused(x), bn(deconv(x)).numpy())
    lin = linear64(4, 3).eval()
    bn1 = bn64(nn.BatchNorm1d, 3)
    fused = nn.utils.fuse_linear_bn_eval(lin, bn1)
    x = Tensor(r(5, 4))
    close(fused(x), bn1(lin(x)).numpy())
    w, b = nn.utils.fuse_linear_bn_weights(
        lin.weight, None, bn1.running_mean, bn1.running_var, bn1.eps, bn1.weight, bn1.bias
    )
    assert w.requires_grad and not b.requires_grad
    with pytest.raises(ArgumentError, match="fuse_conv_bn_eval: fusion is for eval mode only"):
        nn.utils.fuse_conv_bn_eval(nn.Conv2d(2, 3, 2), bn)
    with pytest.raises(ArgumentError, match="out_features == bn.num_features"):
        nn.utils.fuse_linear_bn_eval(lin, bn64(nn.BatchNorm1d, 2))


# -- clip_grads_with_norm_, skip_init -------------------------------------------------------
def test_clip_grads_with_norm_and_skip_init():
    a, b = p64(r(3)), p64(r(2, 2))
    ga, gb = r(3), r(2, 2)
    a.grad, b.grad = Tensor(ga), Tensor(gb)
    total = nn.utils.get_total_norm([a.grad, b.grad])
    norm = np.sqrt((ga**2).sum() + (gb**2).sum())
    nn.utils.clip_grads_with_norm_([a, b], 0.5, total)
    k = 0.5 / (norm + 1e-6)
    close(a.grad, ga * k, 1e-6)
    close(b.grad, gb * k, 1e-6)
    nn.utils.clip_grads_with_norm_(a, 100.0, 1.0)  # a coefficient over 1 is clamped
    close(a.grad, ga * k, 1e-6)
    with pytest.raises(ArgumentError, match="clip_grads_with_norm_: max_norm must be non-neg"):
        nn.utils.clip_grads_with_norm_([a], -1.0, total)
    m = nn.utils.skip_init(nn.Linear, 5, 1)
    assert type(m) is nn.Linear and m.weight.shape == (1, 5)
    with pytest.raises(TypeError, match="skip_init: expected a Module class"):
        nn.utils.skip_init(int)


# -- against PyTorch ------------------------------------------------------------------------
def _load_from_torch(m, tm):
    m.load_state_dict({k: v.detach().numpy() for k, v in tm.state_dict().items()})


def test_keys_and_values_match_torch():
    torch = pytest.importorskip("torch")
    tnn, tu = torch.nn, torch.nn.utils
    cases = [
        (lambda M: M.Conv2d(2, 3, 2), tu.parametrizations.weight_norm, (1, 2, 4, 4)),
        (lambda M: M.Linear(5, 4), tu.parametrizations.spectral_norm, (2, 5)),
        (lambda M: M.Linear(3, 3), tu.parametrizations.orthogonal, (2, 3)),
        (lambda M: M.Linear(5, 4), tu.weight_norm, (2, 5)),
        (lambda M: M.Conv2d(2, 3, 2), tu.spectral_norm, (1, 2, 4, 4)),
    ]
    ours = {
        tu.parametrizations.weight_norm: PZ.weight_norm,
        tu.parametrizations.spectral_norm: PZ.spectral_norm,
        tu.parametrizations.orthogonal: PZ.orthogonal,
        tu.weight_norm: nn.utils.weight_norm,
        tu.spectral_norm: nn.utils.spectral_norm,
    }
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the old-style functions are deprecated in PyTorch
        for make, fn, shape in cases:
            m, tm = ours[fn](make(nn)), fn(make(tnn))
            assert list(m.state_dict()) == list(tm.state_dict())
            assert [t.shape for t in m.state_dict().values()] == [
                tuple(t.shape) for t in tm.state_dict().values()
            ]
            _load_from_torch(m, tm)
            x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
            for _ in range(2):  # training: the power iterations step alike
                close(m(Tensor(x)), tm(torch.tensor(x)).detach().numpy(), 2e-5)
            m.eval(), tm.eval()
            close(m(Tensor(x)), tm(torch.tensor(x)).detach().numpy(), 2e-5)
            for k, v in tm.state_dict().items():
                close(m.state_dict()[k], v.numpy(), 2e-5)


def test_orthogonal_maps_and_fusion_match_torch():
    torch = pytest.importorskip("torch")
    tnn = torch.nn
    w = np.random.default_rng(1).standard_normal((3, 3)).astype(np.float32)
    o = 0.3 * np.random.default_rng(2).standard_normal((3, 3)).astype(np.float32)
    for kind in ("matrix_exp", "cayley", "householder"):
        tm = tnn.Linear(3, 3)
        with torch.no_grad():
            tm.weight.copy_(torch.tensor(w))
        tnn.utils.parametrizations.orthogonal(tm, orthogonal_map=kind)
        m = nn.Linear(3, 3)
        m.weight = Tensor(w, requires_grad=True)
        PZ.orthogonal(m, orthogonal_map=kind)
        close(m.weight, tm.weight.detach().numpy(), 2e-5)
        with torch.no_grad():
            tm.parametrizations.weight.original.copy_(torch.tensor(o))
        with mlfuse.no_grad():
            m.parametrizations.weight.original.assign(Tensor(o))
        close(m.weight, tm.weight.detach().numpy(), 2e-5)
    # without the trivialization: the original is LAPACK's reflectors
    tm = tnn.Linear(3, 4)
    m = nn.Linear(3, 4)
    m.weight = Tensor(tm.weight.detach().numpy(), requires_grad=True)
    tnn.utils.parametrizations.orthogonal(
        tm, orthogonal_map="householder", use_trivialization=False
    )
    PZ.orthogonal(m, orthogonal_map="householder", use_trivialization=False)
    close(m.parametrizations.weight.original, tm.parametrizations.weight.original.detach(), 2e-5)
    close(m.weight, tm.weight.detach().numpy(), 2e-5)
    # fusion
    conv, tconv = nn.Conv2d(2, 3, 2), tnn.Conv2d(2, 3, 2)
    bn, tbn = nn.BatchNorm2d(3), tnn.BatchNorm2d(3)
    with torch.no_grad():
        tbn.running_mean.copy_(torch.randn(3))
        tbn.running_var.copy_(torch.rand(3) + 0.5)
        tbn.weight.copy_(torch.randn(3))
    _load_from_torch(conv, tconv)
    _load_from_torch(bn, tbn)
    fused = nn.utils.fuse_conv_bn_eval(conv.eval(), bn.eval())
    tfused = tnn.utils.fuse_conv_bn_eval(tconv.eval(), tbn.eval())
    close(fused.weight, tfused.weight.detach().numpy(), 1e-6)
    close(fused.bias, tfused.bias.detach().numpy(), 1e-6)


def test_sgd_steps_through_parametrizations_match_torch():
    torch = pytest.importorskip("torch")
    import warnings

    tu = torch.nn.utils
    cases = [
        (PZ.weight_norm, tu.parametrizations.weight_norm),
        (PZ.spectral_norm, tu.parametrizations.spectral_norm),
        (PZ.orthogonal, tu.parametrizations.orthogonal),
        (nn.utils.weight_norm, tu.weight_norm),
        (nn.utils.spectral_norm, tu.spectral_norm),
    ]
    x = np.random.default_rng(3).standard_normal((8, 4)).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for ours, theirs in cases:
            tm = torch.nn.Sequential(theirs(torch.nn.Linear(4, 4)), torch.nn.Tanh())
            m = nn.Sequential(ours(nn.Linear(4, 4)), nn.Tanh())
            # the same names (mlfuse lists a module's parameters before its buffers)
            assert sorted(m.state_dict()) == sorted(tm.state_dict())
            _load_from_torch(m, tm)
            opt = mlfuse.optim.SGD(m.parameters(), lr=0.1)
            topt = torch.optim.SGD(tm.parameters(), lr=0.1)
            for _ in range(2):
                opt.zero_grad(), topt.zero_grad()
                loss, tloss = (m(Tensor(x)) ** 2).mean(), (tm(torch.tensor(x)) ** 2).mean()
                loss.backward(), tloss.backward()
                opt.step(), topt.step()
                close(loss, tloss.detach().numpy(), 2e-6)
            for k, v in tm.state_dict().items():
                close(m.state_dict()[k], v.numpy(), 2e-5)
