"""The gaps of ``mlfuse.nn.functional`` and ``mlfuse.nn`` a PyTorch user hits:
sampling grids, pooling with indices, lp and 3-d adaptive pooling, embedding
bags, random activations, in-place spellings, CTC and more losses, and the
modules around them (lazy ones, parameter containers, buffers), each against
a float64 numpy reference of PyTorch's semantics."""

from __future__ import annotations

import math

import numpy as np
import pytest

import mlfuse
import mlfuse.nn as nn
import mlfuse.nn.functional as F
from mlfuse import Tensor
from mlfuse.errors import ArgumentError

F64 = np.float64
RNG = np.random.default_rng(7)


def r(*shape) -> np.ndarray:
    return RNG.standard_normal(shape)


def close(t, ref, rtol=1e-9, atol=1e-9):
    got = t.numpy() if isinstance(t, Tensor) else np.asarray(t)
    np.testing.assert_allclose(got, np.asarray(ref), rtol=rtol, atol=atol)


def numeric_grad(fn, arrays, k, eps=1e-6):
    """Central differences of ``sum(fn)`` (a numpy reference) with respect to
    ``arrays[k]``."""
    want = np.zeros_like(arrays[k])
    for idx in np.ndindex(arrays[k].shape):
        vals = []
        for sign in (1, -1):
            args = [a.copy() for a in arrays]
            args[k][idx] += sign * eps
            vals.append(float(np.sum(fn(*args))))
        want[idx] = (vals[0] - vals[1]) / (2 * eps)
    return want


# ---------------------------------------------------------------------------
# grid_sample and affine_grid
# ---------------------------------------------------------------------------


def _unnormalize(c, size, align):
    return (c + 1) / 2 * (size - 1) if align else ((c + 1) * size - 1) / 2


def _reflect(c, twice_low, twice_high):
    if twice_low == twice_high:
        return 0.0
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    c = abs(c - low)
    extra, flips = math.fmod(c, span), math.floor(c / span)
    return extra + low if flips % 2 == 0 else span - extra + low


def _pad_coord(c, size, padding, align):
    if padding == "border":
        return min(max(c, 0), size - 1)
    if padding == "reflection":
        c = _reflect(c, 0, 2 * (size - 1)) if align else _reflect(c, -1, 2 * size - 1)
        return min(max(c, 0), size - 1)
    return c


def _cubic(t, a=-0.75):
    def near(v):
        return ((a + 2) * v - (a + 3)) * v * v + 1

    def far(v):
        return ((a * v - 5 * a) * v + 8 * a) * v - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def grid_sample_ref(x, g, mode, padding, align):
    """PyTorch's grid_sample, one output position at a time (float64)."""
    nd = x.ndim - 2
    sp = x.shape[2:]
    out = np.zeros(x.shape[:2] + g.shape[1:-1])

    def at(n, idx):
        ok = all(0 <= i < s for i, s in zip(idx, sp))
        return x[(n, slice(None)) + tuple(idx)] if ok else 0.0

    for n in range(x.shape[0]):
        for pos in np.ndindex(*g.shape[1:-1]):
            raw = [_unnormalize(g[(n,) + pos][nd - 1 - d], sp[d], align) for d in range(nd)]
            if mode == "bicubic":
                base = [math.floor(c) for c in raw]
                ws = [_cubic(c - b) for c, b in zip(raw, base)]
                val = 0.0
                for a, b in np.ndindex(4, 4):
                    ty = _pad_coord(base[0] - 1 + a, sp[0], padding, align)
                    tx = _pad_coord(base[1] - 1 + b, sp[1], padding, align)
                    val = val + ws[0][a] * ws[1][b] * at(n, (int(ty), int(tx)))
            else:
                cs = [_pad_coord(c, s, padding, align) for c, s in zip(raw, sp)]
                if mode == "nearest":
                    val = at(n, [int(np.rint(c)) for c in cs])
                else:
                    base = [math.floor(c) for c in cs]
                    val = 0.0
                    for corner in np.ndindex(*(2,) * nd):
                        w = math.prod(
                            (c - b) if bit else 1 - (c - b) for c, b, bit in zip(cs, base, corner)
                        )
                        val = val + w * at(n, [b + bit for b, bit in zip(base, corner)])
            out[(n, slice(None)) + pos] = val
    return out


@pytest.mark.parametrize(
    "mode, padding, align",
    [
        ("bilinear", "zeros", False),
        ("bilinear", "reflection", False),
        ("nearest", "zeros", True),
        ("bicubic", "zeros", False),
        ("bicubic", "reflection", True),
    ],
)
def test_grid_sample_2d(mode, padding, align):
    x = r(2, 3, 4, 5)
    g = RNG.uniform(-1.8, 1.8, (2, 3, 4, 2))
    g[0, 0, :2] = [[-1.0, 1.0], [1.0, -1.0]]  # the corners exactly
    got = F.grid_sample(Tensor(x), Tensor(g), mode, padding, align)
    close(got, grid_sample_ref(x, g, mode, padding, align))


def test_grid_sample_3d():
    x = r(1, 2, 3, 4, 5)
    g = RNG.uniform(-1.3, 1.3, (1, 2, 3, 2, 3))
    close(F.grid_sample(Tensor(x), Tensor(g), "bilinear", "border", False),
          grid_sample_ref(x, g, "bilinear", "border", False))  # fmt: skip


def test_grid_sample_float32_and_default_align():
    x, g = r(1, 2, 3, 4), RNG.uniform(-1, 1, (1, 2, 2, 2))
    got = F.grid_sample(Tensor(x.astype(np.float32)), Tensor(g.astype(np.float32)))
    assert got.dtype == mlfuse.float32
    close(got, grid_sample_ref(x, g, "bilinear", "zeros", False), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode, padding", [("bilinear", "zeros"), ("bilinear", "reflection")])
def test_grid_sample_gradients(mode, padding):
    """Gradients with respect to the input and the grid against central
    differences of the reference (the grid points keep away from pixel
    boundaries, where the sampling kinks)."""
    x = r(1, 2, 3, 3)
    g = np.array([[[[-0.55, 0.3], [0.8, -0.9]], [[1.3, 0.1], [-0.2, 1.45]]]])
    w = r(1, 2, 2, 2)
    gx, gg = mlfuse.grad(lambda a, b: (F.grid_sample(a, b, mode, padding, True) * Tensor(w)).sum())(
        Tensor(x), Tensor(g)
    )

    def ref(a, b):
        return grid_sample_ref(a, b, mode, padding, True) * w

    close(gx, numeric_grad(ref, [x, g], 0), rtol=1e-6, atol=1e-7)
    close(gg, numeric_grad(ref, [x, g], 1), rtol=1e-6, atol=1e-7)


def affine_grid_ref(theta, size, align):
    def lin(s):
        if s <= 1:
            return np.zeros(1)
        v = np.linspace(-1, 1, s)
        return v if align else v * (s - 1) / s

    nd = len(size) - 2
    axes = [lin(s) for s in size[2:]]
    mesh = np.meshgrid(*axes, indexing="ij")  # per spatial dim, in dim order
    base = np.stack([mesh[nd - 1 - k] for k in range(nd)] + [np.ones_like(mesh[0])], -1)
    return np.einsum("...k,njk->n...j", base, theta)


@pytest.mark.parametrize("align", [False, True])
def test_affine_grid(align):
    th = r(2, 2, 3)
    close(F.affine_grid(Tensor(th), (2, 3, 4, 5), align), affine_grid_ref(th, (2, 3, 4, 5), align))
    th3 = r(1, 3, 4)
    close(F.affine_grid(Tensor(th3), (1, 2, 3, 1, 4), align),
          affine_grid_ref(th3, (1, 2, 3, 1, 4), align))  # fmt: skip
    # the identity map samples the input back
    x = r(2, 3, 4, 5)
    eye = np.tile(np.eye(2, 3), (2, 1, 1))
    grid = F.affine_grid(Tensor(eye), x.shape, align)
    close(F.grid_sample(Tensor(x), grid, align_corners=align), x, atol=1e-12)
    # differentiable in theta: d sum(grid) / d theta[n, j, k] = sum of base[..., k]
    (gt,) = mlfuse.grad(lambda t: F.affine_grid(t, (2, 3, 4, 5), align).sum())(Tensor(th))
    base = affine_grid_ref(np.tile(np.eye(3), (1, 1, 1))[:, :, :], (1, 1, 4, 5), align)
    sums = np.concatenate([base.reshape(-1, 3).sum(0)])
    close(gt, np.broadcast_to(sums, (2, 2, 3)))


def test_grid_errors():
    x, g = Tensor(r(1, 2, 3, 3)), Tensor(r(1, 2, 2, 2))
    with pytest.raises(ArgumentError, match="mode must be one of"):
        F.grid_sample(x, g, mode="area")
    with pytest.raises(ArgumentError, match="padding_mode must be one of"):
        F.grid_sample(x, g, padding_mode="circular")
    with pytest.raises(ArgumentError, match="grid must be"):
        F.grid_sample(x, Tensor(r(1, 2, 2, 3)))
    with pytest.raises(ArgumentError, match="bicubic' needs a 4-d input"):
        F.grid_sample(Tensor(r(1, 1, 2, 2, 2)), Tensor(r(1, 1, 1, 1, 3)), "bicubic")
    with pytest.raises(ArgumentError, match="input must be"):
        F.grid_sample(Tensor(r(2, 3)), g)
    with pytest.raises(ArgumentError, match=r"theta must be \(1, 2, 3\)"):
        F.affine_grid(Tensor(r(1, 3, 4)), (1, 1, 2, 2))
    with pytest.raises(ArgumentError, match="size must be"):
        F.affine_grid(Tensor(r(1, 2, 3)), (1, 2, 3))


# ---------------------------------------------------------------------------
# pooling: indices, adaptive 3-d, lp, transposed 3-d convolution
# ---------------------------------------------------------------------------


def max_with_index(win: np.ndarray, flat: np.ndarray):
    """PyTorch's scan: take a value when it is larger or NaN."""
    best, at = -np.inf, flat[0]
    for v, i in zip(win, flat):
        if v > best or np.isnan(v):
            best, at = v, i
    return best, at


def adaptive_max_ref(x, out):
    nd = len(out)
    sp = x.shape[-nd:]
    vals = np.zeros(x.shape[:-nd] + tuple(out))
    idx = np.zeros(vals.shape, np.int64)
    flat = np.arange(math.prod(sp)).reshape(sp)
    for lead in np.ndindex(*x.shape[:-nd]):
        for pos in np.ndindex(*out):
            sl = tuple(slice((i * s) // o, -(-((i + 1) * s) // o)) for i, s, o in zip(pos, sp, out))
            vals[lead + pos], idx[lead + pos] = max_with_index(
                x[lead + sl].reshape(-1), flat[sl].reshape(-1)
            )
    return vals, idx


@pytest.mark.parametrize(
    "nd, shape, out",
    [(1, (2, 7), 3), (2, (1, 2, 5, 7), (2, 3)), (2, (2, 5, 6), (5, 2)),
     (3, (1, 1, 3, 4, 5), (2, 3, 2))],
)  # fmt: skip
def test_adaptive_max_pool_with_indices(nd, shape, out):
    x = np.round(r(*shape), 1)  # ties: the first one in scan order wins
    if len(shape) == 4:
        x[0, 0, 1, 1] = x[0, 0, 3, 2] = np.nan  # NaNs: the last one wins
    o = (out,) * nd if isinstance(out, int) else out
    vals, idx = adaptive_max_ref(x, o)
    fn = getattr(F, f"adaptive_max_pool{nd}d_with_indices")
    y, i = fn(Tensor(x), out)
    close(y, vals)
    assert i.dtype == mlfuse.int64
    np.testing.assert_array_equal(i.numpy(), idx)
    y2, i2 = getattr(F, f"adaptive_max_pool{nd}d")(Tensor(x), out, return_indices=True)
    np.testing.assert_array_equal(i2.numpy(), idx)


def test_max_pool_with_indices():
    x = r(1, 2, 5, 6)
    y, i = F.max_pool2d_with_indices(Tensor(x), 3, 2, 1)
    yy, ii = F.max_pool2d(Tensor(x), 3, 2, 1, return_indices=True)
    close(y, yy.numpy())
    np.testing.assert_array_equal(i.numpy(), ii.numpy())
    y1, i1 = F.max_pool1d_with_indices(Tensor(x[0]), 2)
    flat = x[0].reshape(2, 5, 3, 2)
    close(y1, flat.max(-1))
    np.testing.assert_array_equal(i1.numpy(), flat.argmax(-1) + 2 * np.arange(3))
    y3, i3 = F.max_pool3d_with_indices(Tensor(x[None][..., :2, :2]), (1, 2, 2))
    close(y3, x[0, :, :2, :2].max((-2, -1)).reshape(1, 1, 2, 1, 1))
    # flat indices into (D, H, W) = (2, 2, 2): the second D slice starts at 4
    want = x[0, :, :2, :2].reshape(2, 4).argmax(-1)
    np.testing.assert_array_equal(i3.numpy().reshape(2), want + [0, 4])


def test_adaptive_avg_pool3d():
    x = r(2, 3, 4, 5, 7)
    out = (3, 5, 2)
    want = np.zeros((2, 3) + out)
    for pos in np.ndindex(*out):
        sl = tuple(
            slice((i * s) // o, -(-((i + 1) * s) // o)) for i, s, o in zip(pos, (4, 5, 7), out)
        )
        want[(...,) + pos] = x[(...,) + sl].mean((-3, -2, -1))
    close(F.adaptive_avg_pool3d(Tensor(x), out), want)
    close(F.adaptive_avg_pool3d(Tensor(x[0]), (None, 1, 7)), x[0].mean(-2, keepdims=True))
    close(F.adaptive_avg_pool3d(Tensor(x), 1), x.mean((-3, -2, -1), keepdims=True))
    y = F.adaptive_max_pool3d(Tensor(x), (2, 1, 7))
    close(y, x.reshape(2, 3, 2, 2, 5, 7).max((3, 4)).reshape(2, 3, 2, 1, 7))


def test_conv_transpose3d():
    x, w, b = r(2, 4, 2, 3, 2), r(4, 3, 2, 2, 3), r(6)
    stride, pad, dil, groups = (2, 1, 2), (1, 0, 1), (1, 2, 1), 2
    y = F.conv_transpose3d(Tensor(x), Tensor(w), Tensor(b), stride, pad, 0, groups, dil)
    # scatter each input element's kernel into the (uncropped) output, then crop
    full = [
        (s - 1) * st + d * (k - 1) + 1 for s, st, d, k in zip((2, 3, 2), stride, dil, (2, 2, 3))
    ]
    out = np.zeros((2, 6, *full))
    for n, ci, i, j, k in np.ndindex(2, 4, 2, 3, 2):
        g = ci // 2
        for co, a, bb, c in np.ndindex(3, 2, 2, 3):
            out[n, g * 3 + co, i * 2 + a, j + bb * 2, k * 2 + c] += (
                x[n, ci, i, j, k] * w[ci, co, a, bb, c]
            )
    out = out[:, :, 1 : full[0] - 1, :, 1 : full[2] - 1] + b.reshape(1, 6, 1, 1, 1)
    close(y, out)


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_lp_pool(nd):
    shape = {1: (2, 3, 7), 2: (2, 5, 6), 3: (1, 2, 4, 3, 5)}[nd]
    x = np.abs(r(*shape))
    p = {1: 2, 2: 3.0, 3: 1.5}[nd]
    k = {1: 3, 2: (2, 3), 3: 2}[nd]
    kk = (k,) * nd if isinstance(k, int) else k
    fn = getattr(F, f"lp_pool{nd}d")
    y = fn(Tensor(x), p, k)  # stride = the kernel
    sp = shape[-nd:]
    out = tuple(s // q for s, q in zip(sp, kk))
    want = np.zeros(shape[:-nd] + out)
    for pos in np.ndindex(*out):
        sl = tuple(slice(i * q, i * q + q) for i, q in zip(pos, kk))
        want[(...,) + pos] = (x[(...,) + sl] ** p).sum(tuple(range(-nd, 0))) ** (1 / p)
    close(y, want)


def test_lp_pool_ceil_mode_and_errors():
    x = np.abs(r(1, 1, 5))
    # ceil_mode's cut window: PyTorch's mean over what it covers, times the kernel
    want = [np.sqrt((x[0, 0, :2] ** 2).sum()), np.sqrt((x[0, 0, 2:4] ** 2).sum()),
            np.sqrt(x[0, 0, 4] ** 2 * 2)]  # fmt: skip
    close(F.lp_pool1d(Tensor(x), 2, 2, ceil_mode=True), np.array(want).reshape(1, 1, 3))
    with pytest.raises(ArgumentError, match="norm_type must be positive"):
        F.lp_pool2d(Tensor(r(1, 2, 2)), 0, 2)
    with pytest.raises(ArgumentError, match="kernel_size must be"):
        F.lp_pool2d(Tensor(r(1, 2, 2)), 2, (1, 2, 3))


# ---------------------------------------------------------------------------
# embeddings and bilinear forms
# ---------------------------------------------------------------------------


def bag_ref(ids, w, starts, ends, mode, pad=None, psw=None):
    out = np.zeros((len(starts), w.shape[1]))
    for b, (s, e) in enumerate(zip(starts, ends)):
        rows = [(w[ids[i]] * (psw[i] if psw is not None else 1)) for i in range(s, e)
                if ids[i] != pad]  # fmt: skip
        if rows:
            rows = np.stack(rows)
            out[b] = {"sum": rows.sum(0), "mean": rows.mean(0), "max": rows.max(0)}[mode]
    return out


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag(mode):
    w = r(10, 3)
    ids = np.array([1, 2, 4, 5, 4, 3, 2, 9, 0, 0])
    offs = np.array([0, 2, 2, 5, 9])  # an empty bag: zeros
    starts, ends = offs, np.append(offs[1:], 10)
    got = F.embedding_bag(Tensor(ids), Tensor(w), Tensor(offs), mode=mode)
    close(got, bag_ref(ids, w, starts, ends, mode))
    got = F.embedding_bag(Tensor(ids), Tensor(w), Tensor(offs), mode=mode, padding_idx=-8)
    close(got, bag_ref(ids, w, starts, ends, mode, pad=2))
    # include_last_offset: offsets end with the input's size (CSR)
    csr = np.array([0, 3, 3, 10])
    got = F.embedding_bag(Tensor(ids), Tensor(w), Tensor(csr), mode=mode, include_last_offset=True)
    close(got, bag_ref(ids, w, csr[:-1], csr[1:], mode))
    # 2-d input: each row a bag
    got = F.embedding_bag(Tensor(ids.reshape(2, 5)), Tensor(w), mode=mode, padding_idx=4)
    close(got, bag_ref(ids, w, [0, 5], [5, 10], mode, pad=4))


def test_embedding_bag_weights_gradient_and_max_norm():
    w = r(6, 2)
    ids, offs, psw = np.array([0, 1, 1, 5, 3]), np.array([0, 3]), r(5)
    got = F.embedding_bag(Tensor(ids), Tensor(w), Tensor(offs), mode="sum",
                          per_sample_weights=Tensor(psw))  # fmt: skip
    close(got, bag_ref(ids, w, [0, 3], [3, 5], "sum", psw=psw))
    # the table's gradient: each used row gets the gradient of its bags (mean: / size)
    g = r(2, 2)
    (gw,) = mlfuse.grad(
        lambda t: (F.embedding_bag(Tensor(ids), t, Tensor(offs)) * Tensor(g)).sum()
    )(Tensor(w))
    want = np.zeros_like(w)
    for i, b in zip(ids, [0, 0, 0, 1, 1]):
        want[i] += g[b] / (3 if b == 0 else 2)
    close(gw, want)
    # max_norm renormalizes the rows used, in place
    big = w * 5
    t = Tensor(big.copy())
    F.embedding_bag(Tensor(ids), t, Tensor(offs), max_norm=1.0).realize()
    norms = np.linalg.norm(big, axis=1, keepdims=True)
    used = np.isin(np.arange(6), ids)[:, None]
    close(t, np.where(used & (norms > 1), big / (norms + 1e-7), big), rtol=1e-6)


def test_embedding_padding_idx_and_max_norm():
    w = r(5, 3)
    ids = np.array([[0, 2], [2, 4]])
    (gw,) = mlfuse.grad(lambda t: F.embedding(Tensor(ids), t, padding_idx=2).sum())(Tensor(w))
    close(gw, np.array([1, 0, 0, 0, 1])[:, None] * np.ones((5, 3)))  # row 2: no gradient
    t = Tensor(w * 4)
    out = F.embedding(Tensor(ids), t, max_norm=2.0, norm_type=1.0)
    n1 = np.abs(w * 4).sum(1, keepdims=True)
    scaled = np.where(
        np.isin(np.arange(5), ids)[:, None] & (n1 > 2), w * 4 * 2 / (n1 + 1e-7), w * 4
    )
    close(t, scaled, rtol=1e-6)
    close(out, scaled[ids], rtol=1e-6)


def test_embedding_errors():
    w = Tensor(r(4, 2))
    with pytest.raises(ArgumentError, match="mode must be one of"):
        F.embedding_bag(Tensor(np.array([[1]])), w, mode="min")
    with pytest.raises(ArgumentError, match="offsets must be None"):
        F.embedding_bag(Tensor(np.array([[1]])), w, Tensor(np.array([0])))
    with pytest.raises(ArgumentError, match="needs 1-d offsets"):
        F.embedding_bag(Tensor(np.array([1, 2])), w)
    with pytest.raises(ArgumentError, match="offsets\\[0\\] must be 0"):
        F.embedding_bag(Tensor(np.array([1, 2])), w, Tensor(np.array([1])))
    with pytest.raises(ArgumentError, match="only supported for mode='sum'"):
        F.embedding_bag(Tensor(np.array([[1]])), w, per_sample_weights=Tensor(r(1, 1)))
    with pytest.raises(ArgumentError, match="padding_idx 4 must be within"):
        F.embedding(Tensor(np.array([1])), w, padding_idx=4)
    with pytest.raises(TypeError, match="indices must be integers"):
        F.embedding_bag(Tensor(r(2, 2)), w)


def test_bilinear():
    a, b, w, bias = r(2, 3, 4), r(2, 3, 5), r(6, 4, 5), r(6)
    close(F.bilinear(Tensor(a), Tensor(b), Tensor(w), Tensor(bias)),
          np.einsum("...i,oij,...j->...o", a, w, b) + bias)  # fmt: skip
    with pytest.raises(ArgumentError, match="inputs must end in 4 and 5 features"):
        F.bilinear(Tensor(b), Tensor(b), Tensor(w))
    with pytest.raises(ArgumentError, match="same leading dims"):
        F.bilinear(Tensor(a), Tensor(b[:1]), Tensor(w))


# ---------------------------------------------------------------------------
# random activations, in-place spellings, shuffles, distances
# ---------------------------------------------------------------------------


def test_gumbel_softmax():
    mlfuse.manual_seed(3)
    logits = r(6, 5)
    soft = F.gumbel_softmax(Tensor(logits), tau=0.5).numpy()
    close(soft.sum(-1), np.ones(6), atol=1e-12)
    assert (soft > 0).all()
    hard = F.gumbel_softmax(Tensor(logits), hard=True, dim=0).numpy()
    assert set(np.unique(hard)) == {0.0, 1.0} and (hard.sum(0) == 1).all()
    # straight through: the hard sample's gradient is the soft sample's
    w = r(6, 5)
    mlfuse.manual_seed(4)
    (g_hard,) = mlfuse.grad(lambda t: (F.gumbel_softmax(t, hard=True) * Tensor(w)).sum())(
        Tensor(logits)
    )
    mlfuse.manual_seed(4)
    (g_soft,) = mlfuse.grad(lambda t: (F.gumbel_softmax(t) * Tensor(w)).sum())(Tensor(logits))
    close(g_hard, g_soft.numpy())
    with pytest.raises(ArgumentError, match="tau must be positive"):
        F.gumbel_softmax(Tensor(logits), tau=0)


def test_rrelu_and_inplace_spellings():
    x = r(4, 6)
    close(F.rrelu(Tensor(x), 0.1, 0.3), np.where(x >= 0, x, 0.2 * x))
    y = F.rrelu(Tensor(x), 0.1, 0.3, training=True).numpy()
    slopes = y[x < 0] / x[x < 0]
    assert (slopes >= 0.1).all() and (slopes <= 0.3).all() and np.ptp(slopes) > 0
    close(y[x >= 0], x[x >= 0])
    with pytest.raises(ArgumentError, match="lower 0.5 must be at most upper 0.1"):
        F.rrelu(Tensor(x), 0.5, 0.1)
    elu = np.where(x > 0, x, 0.7 * (np.exp(x) - 1))
    cases = {
        "relu_": ((), np.maximum(x, 0)),
        "elu_": ((0.7,), elu),
        "leaky_relu_": ((0.2,), np.where(x > 0, x, 0.2 * x)),
        "hardtanh_": ((-0.5, 0.8), np.clip(x, -0.5, 0.8)),
        "selu_": ((), 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(x))),
        "celu_": ((0.6,), np.maximum(x, 0) + np.minimum(0, 0.6 * np.expm1(x / 0.6))),
        "threshold_": ((0.1, -2.0), np.where(x > 0.1, x, -2.0)),
        "rrelu_": ((0.1, 0.3), np.where(x >= 0, x, 0.2 * x)),
    }
    for name, (args, want) in cases.items():
        t = Tensor(x.copy())
        out = getattr(F, name)(t, *args)
        assert out is t, name
        close(t, want, rtol=1e-12, atol=1e-12)
    t = Tensor(x.copy())
    assert F.relu(t, inplace=True) is t and (t.numpy() >= 0).all()


def test_feature_alpha_dropout():
    x = r(40, 30, 3)
    assert F.feature_alpha_dropout(Tensor(x), 0.2) is not None
    close(F.feature_alpha_dropout(Tensor(x), 0.2, training=False), x)
    mlfuse.manual_seed(1)
    p = 0.25
    y = F.feature_alpha_dropout(Tensor(x), p, training=True).numpy()
    alpha = 1.7580993408473766
    a = 1 / math.sqrt((alpha * alpha * p + 1) * (1 - p))
    kept = np.isclose(y, x * a + alpha * a * p).all(-1)
    dropped = np.isclose(y, -alpha * a + alpha * a * p).all(-1)
    assert (kept | dropped).all()  # whole channels
    assert 0.15 < dropped.mean() < 0.35
    with pytest.raises(ArgumentError, match="at least 2 dims"):
        F.feature_alpha_dropout(Tensor(r(3)), 0.5, True)


def test_channel_shuffle_and_pdist():
    x = r(2, 6, 3)
    want = x.reshape(2, 2, 3, 3).transpose(0, 2, 1, 3).reshape(2, 6, 3)
    close(F.channel_shuffle(Tensor(x), 2), want)
    close(F.native_channel_shuffle(Tensor(x), 2), want)
    with pytest.raises(ArgumentError, match="must be divisible by groups"):
        F.channel_shuffle(Tensor(x), 4)
    with pytest.raises(ArgumentError, match="more than 2 dims"):
        F.channel_shuffle(Tensor(x[0]), 2)
    pts = r(5, 4)
    pts[3] = pts[1]  # a zero distance: its gradient is 0, not NaN
    i, j = np.triu_indices(5, 1)
    for p in (2.0, 1.0, 3.0, math.inf, 0.0):
        d = np.abs(pts[i] - pts[j])
        want = {math.inf: d.max(-1), 0.0: (d != 0).sum(-1)}.get(p)
        if want is None:
            want = (d**p).sum(-1) ** (1 / p)
        close(F.pdist(Tensor(pts), p), want)
    (g,) = mlfuse.grad(lambda t: F.pdist(t).sum())(Tensor(pts))
    diff = pts[:, None] - pts[None]
    dist = np.linalg.norm(diff, axis=-1)
    want = (diff / np.where(dist == 0, 1, dist)[..., None]).sum(1)
    close(g, want)
    with pytest.raises(ArgumentError, match="p must be non-negative"):
        F.pdist(Tensor(pts), -1)


# ---------------------------------------------------------------------------
# losses
# ---------------------------------------------------------------------------


def multilabel_ref(x, t):
    out = []
    for xs, ts in zip(np.atleast_2d(x), np.atleast_2d(t)):
        ys = []
        for v in ts:
            if v < 0:
                break
            ys.append(v)
        others = [i for i in range(len(xs)) if i not in ys]
        out.append(sum(max(0, 1 - (xs[j] - xs[i])) for j in ys for i in others) / len(xs))
    return np.array(out)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_multilabel_margin_loss(reduction):
    x = r(4, 5)
    t = np.array([[3, 0, -1, 1, 2], [1, 2, 3, 4, 0], [-1, 1, 2, 0, 0], [2, 2, -1, 4, 4]])
    want = multilabel_ref(x, t)
    want = {"none": want, "mean": want.mean(), "sum": want.sum()}[reduction]
    close(F.multilabel_margin_loss(Tensor(x), Tensor(t), reduction=reduction), want)
    close(nn.MultiLabelMarginLoss(reduction=reduction)(Tensor(x), Tensor(t)), want)


def test_multilabel_margin_loss_gradient_and_errors():
    x, t = r(5), np.array([4, 1, -1, 0, 0])
    close(F.multilabel_margin_loss(Tensor(x), Tensor(t)), multilabel_ref(x, t)[0])
    (g,) = mlfuse.grad(lambda a: F.multilabel_margin_loss(a, Tensor(t)))(Tensor(x))
    close(g, numeric_grad(lambda a: multilabel_ref(a, t), [x], 0), atol=1e-7)
    with pytest.raises(ArgumentError, match=r"target values must be in \[-1, 4\]"):
        F.multilabel_margin_loss(Tensor(x), Tensor(np.array([5, 0, 0, 0, 0])))
    with pytest.raises(ArgumentError, match="target the same shape"):
        F.multilabel_margin_loss(Tensor(x), Tensor(np.array([1, 0])))


def test_triplet_margin_with_distance_loss():
    a, p, n = r(4, 3), r(4, 3), r(4, 3)

    def l1(u, v):
        return (u - v).abs().sum(-1)

    dp, dn, ds = np.abs(a - p).sum(-1), np.abs(a - n).sum(-1), np.abs(p - n).sum(-1)
    close(F.triplet_margin_with_distance_loss(Tensor(a), Tensor(p), Tensor(n),
          distance_function=l1, margin=0.5, swap=True, reduction="none"),
          np.maximum(dp - np.minimum(dn, ds) + 0.5, 0))  # fmt: skip
    d2 = lambda u, v: np.linalg.norm(u - v + 1e-6, axis=-1)  # noqa: E731
    loss = nn.TripletMarginWithDistanceLoss(reduction="sum")(Tensor(a), Tensor(p), Tensor(n))
    close(loss, np.maximum(d2(a, p) - d2(a, n) + 1, 0).sum())
    with pytest.raises(ArgumentError, match="margin must be > 0"):
        F.triplet_margin_with_distance_loss(Tensor(a), Tensor(p), Tensor(n), margin=0)
    with pytest.raises(ArgumentError, match="same number of dims"):
        F.triplet_margin_with_distance_loss(Tensor(a), Tensor(p[0]), Tensor(n))


def ctc_ref(logp, targets, in_lens, tgt_lens, blank=0):
    """The CTC forward variables in log space, float64, per sample."""
    out = []
    for b in range(logp.shape[1]):
        y = list(targets[b][: tgt_lens[b]])
        ext = [blank]
        for v in y:
            ext += [v, blank]
        n_t = in_lens[b]
        alpha = np.full(len(ext), -np.inf)
        alpha[0] = logp[0, b, ext[0]]
        if len(ext) > 1:
            alpha[1] = logp[0, b, ext[1]]
        for t in range(1, n_t):
            new = np.full(len(ext), -np.inf)
            for s in range(len(ext)):
                terms = [alpha[s]] + ([alpha[s - 1]] if s >= 1 else [])
                if s >= 2 and ext[s] != blank and ext[s] != ext[s - 2]:
                    terms.append(alpha[s - 2])
                new[s] = np.logaddexp.reduce(terms) + logp[t, b, ext[s]]
            alpha = new
        ends = [alpha[-1]] + ([alpha[-2]] if len(ext) > 1 else [])
        out.append(-np.logaddexp.reduce(ends))
    return np.array(out)


def log_softmax(z, axis):
    m = z.max(axis, keepdims=True)
    return z - m - np.log(np.exp(z - m).sum(axis, keepdims=True))


def test_ctc_loss():
    steps, n, c = 7, 3, 4
    logits = r(steps, n, c)
    lp = log_softmax(logits, 2)
    tg = np.array([[1, 2, 2], [3, 1, 0], [2, 0, 0]])
    il, tl = np.array([7, 5, 6]), np.array([3, 2, 0])
    want = ctc_ref(lp, tg, il, tl)
    close(F.ctc_loss(Tensor(lp), Tensor(tg), Tensor(il), Tensor(tl), reduction="none"), want)
    close(F.ctc_loss(Tensor(lp), Tensor(tg), il.tolist(), tl.tolist()),
          (want / np.maximum(tl, 1)).mean())  # fmt: skip
    flat = np.array([1, 2, 2, 3, 1])  # concatenated targets
    close(F.ctc_loss(Tensor(lp), Tensor(flat), Tensor(il), Tensor(tl), reduction="sum"), want.sum())
    # blank elsewhere, an impossible alignment (inf; zero_infinity makes it 0)
    tg3 = np.array([[0, 1, 1], [2, 1, 2], [0, 0, 0]])
    want3 = ctc_ref(lp, tg3, [7, 2, 6], [3, 3, 1], blank=3)
    got = F.ctc_loss(Tensor(lp), Tensor(tg3), [7, 2, 6], [3, 3, 1], blank=3, reduction="none")
    close(got, want3)
    assert np.isinf(got.numpy()[1])
    got = F.ctc_loss(Tensor(lp), Tensor(tg3), [7, 2, 6], [3, 3, 1], 3, "none", zero_infinity=True)
    close(got, np.where(np.isinf(want3), 0, want3))
    loss_fn = mlfuse.nn.CTCLoss(blank=3, reduction="sum", zero_infinity=True)  # the module
    close(
        loss_fn(Tensor(lp), Tensor(tg3), [7, 2, 6], [3, 3, 1]),
        np.where(np.isinf(want3), 0, want3).sum(),
    )
    # the gradient through log_softmax (and straight), by central differences
    (g,) = mlfuse.grad(
        lambda z: F.ctc_loss(z.log_softmax(2), Tensor(tg), Tensor(il), Tensor(tl), reduction="sum")
    )(Tensor(logits))
    want = numeric_grad(lambda z: ctc_ref(log_softmax(z, 2), tg, il, tl), [logits], 0)
    close(g, want, rtol=1e-6, atol=1e-7)


def test_ctc_loss_errors():
    lp = Tensor(log_softmax(r(4, 2, 3), 2))
    tg = Tensor(np.array([[1, 2], [1, 1]]))
    with pytest.raises(ArgumentError, match="blank must be a class index"):
        F.ctc_loss(lp, tg, [4, 4], [2, 2], blank=3)
    with pytest.raises(ArgumentError, match="input_lengths must hold 2 lengths"):
        F.ctc_loss(lp, tg, [4], [2, 2])
    with pytest.raises(ArgumentError, match="must be at most T = 4"):
        F.ctc_loss(lp, tg, [5, 4], [2, 2])
    with pytest.raises(ArgumentError, match="must be at most S = 2"):
        F.ctc_loss(lp, tg, [4, 4], [3, 2])
    with pytest.raises(ArgumentError, match="sum\\(target_lengths\\) = 4"):
        F.ctc_loss(lp, Tensor(np.array([1, 2, 1])), [4, 4], [2, 2])


# ---------------------------------------------------------------------------
# modules
# ---------------------------------------------------------------------------


def test_new_module_names_are_exported_and_sorted():
    names = nn.modules.__all__
    assert names == sorted(names)
    for name in (
        "AdaptiveAvgPool3d", "AdaptiveMaxPool3d", "ConvTranspose3d", "LPPool1d", "LPPool2d",
        "LPPool3d", "EmbeddingBag", "ChannelShuffle", "CircularPad1d", "CircularPad2d",
        "CircularPad3d", "ReflectionPad3d", "ReplicationPad3d", "ZeroPad3d", "RReLU",
        "MultiLabelMarginLoss", "MultiMarginLoss", "TripletMarginWithDistanceLoss",
        "UpsamplingNearest2d", "UpsamplingBilinear2d", "ParameterList", "ParameterDict",
        "Buffer", "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
        "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d",
        "LazyBatchNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d",
        "FeatureAlphaDropout",
    ):  # fmt: skip
        assert name in names and hasattr(nn, name), name


def test_parameter_containers_and_buffers():
    class Net(nn.Module):
        def __init__(self):
            self.lin = nn.Linear(2, 3)
            self.plist = nn.ParameterList([Tensor.ones(2), Tensor.zeros(3)])
            self.pdict = nn.ParameterDict({"a": Tensor.ones(1), "b": Tensor.zeros(2)})
            self.buf = nn.Buffer(Tensor.ones(4))
            self.tmp = nn.Buffer(Tensor.zeros(2), persistent=False)
            self.register_buffer("mask", Tensor.ones(2, 2))

    m = Net()
    params = ["lin.weight", "lin.bias", "plist.0", "plist.1", "pdict.a", "pdict.b"]
    assert [k for k, _ in m.named_parameters()] == params
    assert [k for k, _ in m.named_buffers()] == ["buf", "tmp", "mask"]
    assert list(m.state_dict()) == ["buf", "mask"] + params  # tmp is not persistent
    assert all(p.requires_grad for p in m.parameters())
    assert not m.buf.requires_grad and not isinstance(m.buf, nn.Buffer)
    m.buf = m.buf + 1  # still a buffer
    assert "buf" in dict(m.named_buffers()) and "buf" not in dict(m.named_parameters())
    m.load_state_dict({k: np.full(v.shape, 2.0) for k, v in m.state_dict().items()})
    close(m.plist[1], np.full(3, 2.0))
    close(m.buf, np.full(4, 2.0))
    m.plist.append(Tensor.ones(1))
    m.pdict["c"] = Tensor.ones(5)
    assert len(m.plist) == 3 and list(m.pdict.keys()) == ["a", "b", "c"]
    assert [k for k, _ in m.named_parameters()] == params[:4] + ["plist.2"] + params[4:] + [
        "pdict.c"
    ]
    assert m.plist[-1].shape == (1,) and len(m.plist[1:]) == 2 and "c" in m.pdict
    assert m.pdict.pop("a").shape == (1,) and "pdict.a" not in m.state_dict()
    with pytest.raises(IndexError, match="out of range"):
        m.plist[3]
    with pytest.raises(KeyError, match="must be non-empty strings"):
        m.pdict["x.y"] = Tensor.ones(1)


def test_lazy_modules():
    mlfuse.manual_seed(0)
    lin = nn.LazyLinear(4)
    assert lin.parameters() == [] and lin.in_features == 0
    x = r(3, 5)
    y = lin(Tensor(x))
    assert type(lin) is nn.Linear and lin.in_features == 5 and lin.weight.shape == (4, 5)
    close(y, x @ lin.weight.numpy().T + lin.bias.numpy())
    conv = nn.LazyConv2d(6, 3, padding=1, bias=False).eval()
    assert conv(Tensor(r(2, 3, 5, 5))).shape == (2, 6, 5, 5)
    assert type(conv) is nn.Conv2d and conv.weight.shape == (6, 3, 3, 3) and not conv.training
    assert conv.bias is None
    tconv = nn.LazyConvTranspose3d(2, 2, stride=2)
    assert tconv(Tensor(r(3, 2, 2, 2))).shape == (2, 4, 4, 4)  # unbatched: C from dim 0
    assert type(tconv) is nn.ConvTranspose3d and tconv.weight.shape == (3, 2, 2, 2, 2)
    for cls, target, x in ((nn.LazyConv1d, nn.Conv1d, r(2, 3, 6)),
                           (nn.LazyConvTranspose1d, nn.ConvTranspose1d, r(2, 3, 6))):  # fmt: skip
        m = cls(4, 3)
        assert m(Tensor(x)).shape[:2] == (2, 4) and type(m) is target
    bn = nn.LazyBatchNorm2d(momentum=0.5)
    x = r(4, 3, 2, 2).astype(np.float32)  # the parameters are float32, as PyTorch's
    y = bn(Tensor(x))
    assert type(bn) is nn.BatchNorm2d and bn.num_features == 3
    mu, var = x.mean((0, 2, 3)), x.var((0, 2, 3))
    close(y, (x - mu.reshape(1, 3, 1, 1)) / np.sqrt(var.reshape(1, 3, 1, 1) + 1e-5), atol=1e-6)
    close(bn.running_mean, 0.5 * mu, atol=1e-6)
    assert sorted(bn.state_dict()) == [
        "bias", "num_batches_tracked", "running_mean", "running_var", "weight"
    ]  # fmt: skip
    inorm = nn.LazyInstanceNorm1d()  # PyTorch's lazy defaults: affine, running statistics
    assert inorm(Tensor(r(3, 7).astype(np.float32))).shape == (3, 7)
    assert inorm.weight.shape == (3,) and inorm.running_mean.shape == (3,)
    assert type(inorm) is nn.InstanceNorm1d
    for cls in (nn.LazyBatchNorm1d, nn.LazyBatchNorm3d, nn.LazyInstanceNorm2d,
                nn.LazyInstanceNorm3d, nn.LazyConv3d, nn.LazyConvTranspose2d):  # fmt: skip
        assert issubclass(cls, nn.Module)
    with pytest.raises(ArgumentError, match="out_features must be a positive int"):
        nn.LazyLinear(0)
    with pytest.raises(ArgumentError, match=r"input must be \(N, C, L\)"):
        nn.LazyConv1d(2, 3)(Tensor(r(2, 3, 4, 5)))


def test_layer_modules():
    x = r(1, 2, 3, 4, 5)
    m = nn.ConvTranspose3d(2, 4, 2, stride=2, groups=2)
    want = F.conv_transpose3d(Tensor(x), m.weight, m.bias, 2, groups=2)
    close(m(Tensor(x)), want.numpy())
    close(nn.AdaptiveAvgPool3d(1)(Tensor(x)), x.mean((-3, -2, -1), keepdims=True))
    y, i = nn.AdaptiveMaxPool3d((1, 1, 5), return_indices=True)(Tensor(x))
    close(y, x.max((2, 3), keepdims=True))
    y, i = nn.AdaptiveMaxPool2d(1, return_indices=True)(Tensor(x[0, 0]))
    np.testing.assert_array_equal(i.numpy().reshape(3), x[0, 0].reshape(3, 20).argmax(-1))
    close(nn.LPPool2d(2, 2)(Tensor(x[0, 0])), F.lp_pool2d(Tensor(x[0, 0]), 2, 2).numpy())
    close(nn.LPPool1d(1, 5)(Tensor(x[0, 0, 0])), x[0, 0, 0].sum(-1, keepdims=True))
    close(nn.LPPool3d(2, (3, 4, 5))(Tensor(x)), np.sqrt((x**2).sum((2, 3, 4), keepdims=True)))
    close(nn.ChannelShuffle(2)(Tensor(x)), x)  # 2 channels in 2 groups: the identity
    for cls, mode, pad in ((nn.CircularPad3d, "wrap", (1, 0, 0, 2, 1, 1)),
                           (nn.ReflectionPad3d, "reflect", 1), (nn.ReplicationPad3d, "edge", 2),
                           (nn.ZeroPad3d, "constant", (0, 1, 1, 0, 2, 2))):  # fmt: skip
        nd = int(cls.__name__[-2])
        p = (pad,) * 2 * nd if isinstance(pad, int) else pad
        widths = [(0, 0)] * (x.ndim - nd) + [(p[2 * k], p[2 * k + 1]) for k in range(nd)][::-1]
        close(cls(pad)(Tensor(x)), np.pad(x, widths, mode=mode))
    x4 = r(1, 2, 2, 3)
    close(nn.UpsamplingNearest2d(scale_factor=2)(Tensor(x4)), x4.repeat(2, 2).repeat(2, 3))
    up = nn.UpsamplingBilinear2d(size=(3, 5))(Tensor(x4)).numpy()
    close(up[..., ::2, ::2], x4)  # align_corners=True: the corners stay
    close(up[..., 1, 1], (x4[..., 0, 0] + x4[..., 1, 0] + x4[..., 0, 1] + x4[..., 1, 1]) / 4)
    act = nn.RReLU(0.1, 0.3)
    z = r(3, 4)
    assert not np.allclose(act(Tensor(z)).numpy(), act.eval()(Tensor(z)).numpy())
    close(act(Tensor(z)), np.where(z >= 0, z, 0.2 * z))
    drop = nn.FeatureAlphaDropout(0.5).eval()
    close(drop(Tensor(z)), z)


def test_embedding_modules():
    mlfuse.manual_seed(2)
    bag = nn.EmbeddingBag(6, 3, mode="max", padding_idx=1)
    w = bag.weight.numpy()
    assert (w[1] == 0).all() and bag.weight.requires_grad
    ids, offs = np.array([1, 2, 3, 5, 1]), np.array([0, 1, 4])
    close(bag(Tensor(ids), Tensor(offs)), bag_ref(ids, w, offs, [1, 4, 5], "max", pad=1))
    bag2 = nn.EmbeddingBag(6, 3, mode="sum", _weight=Tensor(w))
    psw = r(5).astype(np.float32)
    close(bag2(Tensor(ids), Tensor(offs), Tensor(psw)),
          bag_ref(ids, w, offs, [1, 4, 5], "sum", psw=psw), rtol=1e-6, atol=1e-6)  # fmt: skip
    emb = nn.Embedding(5, 2, padding_idx=0)
    assert (emb.weight.numpy()[0] == 0).all()
    (g,) = mlfuse.grad(lambda t: F.embedding(Tensor(np.array([0, 1])), t, 0).sum())(emb.weight)
    close(g, np.array([[0, 0], [1, 1], [0, 0], [0, 0], [0, 0]]))
    with pytest.raises(ArgumentError, match="mode must be one of"):
        nn.EmbeddingBag(3, 2, mode="median")


def test_loss_modules():
    x, t = r(3, 4), np.array([1, 0, 3])
    w = np.array([0.5, 1.0, 2.0, 1.5])
    m = nn.MultiMarginLoss(p=2, margin=0.7, weight=Tensor(w), reduction="none")
    h = np.maximum(0.7 - x[np.arange(3), t][:, None] + x, 0) ** 2 * w[t][:, None]
    h[np.arange(3), t] = 0
    close(m(Tensor(x), Tensor(t)), h.sum(1) / 4)
    assert list(m.state_dict()) == ["weight"]
    with pytest.raises(ArgumentError, match="p must be 1 or 2"):
        nn.MultiMarginLoss(p=3)
    with pytest.raises(ArgumentError, match="margin must be > 0"):
        nn.TripletMarginWithDistanceLoss(margin=-1.0)
