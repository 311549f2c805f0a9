"""PyTorch's top-level functions (``mlfuse.exp(x)``, ``mlfuse.zeros``,
``mlfuse.max(x, 1)``...), the methods added beside them (special functions,
scatters into views, sampling, in-place variants and aliases) against float64
numpy/scipy-free references, and their errors."""

from __future__ import annotations

import io
import math
import pickle

import numpy as np
import pytest

import mlfuse
from mlfuse import Tensor

RNG = np.random.default_rng(7)
F64 = np.float64


def close(t, ref, tol=1e-6):
    got = t.numpy() if isinstance(t, Tensor) else np.asarray(t)
    ref = np.asarray(ref)
    assert got.shape == ref.shape, (got.shape, ref.shape)
    np.testing.assert_allclose(got.astype(F64), ref.astype(F64), rtol=tol, atol=tol)


# -- the namespace ------------------------------------------------------------------
def test_forwarded_functions_are_the_methods():
    x = RNG.standard_normal((3, 4))
    t = mlfuse.tensor(x)
    close(mlfuse.exp(t), np.exp(x))
    close(mlfuse.clamp(t, max=0.5), np.minimum(x, 0.5))
    close(mlfuse.matmul(t, t.T), x @ x.T)
    close(mlfuse.sum(t, dim=1), x.sum(1))
    close(mlfuse.where(t > 0, t, 0.0), np.where(x > 0, x, 0))
    close(mlfuse.arctan2(t, t + 3), np.arctan2(x, x + 3))
    # a non-tensor first argument becomes one
    close(mlfuse.add([1.0, 2.0], mlfuse.tensor([3.0, 4.0])), [4.0, 6.0])
    assert mlfuse.exp.__name__ == "exp" and "x.exp()" in mlfuse.exp.__doc__


def test_inplace_functions_write_their_input():
    x = RNG.standard_normal((3, 4))
    t = mlfuse.tensor(x)
    assert mlfuse.relu_(t) is t
    close(t, np.maximum(x, 0))
    mlfuse.clamp_(t, max=0.5)
    mlfuse.exp_(t)
    close(t, np.exp(np.minimum(np.maximum(x, 0), 0.5)))
    u = mlfuse.tensor(x)
    mlfuse.threshold_(u, 0.1, -9.0)
    close(u, np.where(x > 0.1, x, -9.0))
    mlfuse.zero_(u)
    close(u, np.zeros_like(x))
    with pytest.raises(TypeError, match="mlfuse.sigmoid_ writes into its input, which must be a"):
        mlfuse.sigmoid_(np.ones(3))


def test_histogram_method_and_nextafter_inplace():
    x = RNG.standard_normal(200).astype(np.float32)
    h, edges = mlfuse.tensor(x).histogram(7, range=(-2.0, 2.0))
    ref_h, ref_e = np.histogram(x, 7, range=(-2.0, 2.0))
    close(h, ref_h.astype(np.float32))
    close(edges, ref_e.astype(np.float32))
    t = mlfuse.tensor([1.0, 2.0])
    assert t.nextafter_(mlfuse.tensor([2.0, 0.0])) is t
    np.testing.assert_array_equal(
        t.numpy(), np.nextafter(np.float32([1.0, 2.0]), np.float32([2.0, 0.0]))
    )


def test_pytorch_keyword_spellings():
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    t = mlfuse.tensor(x)
    for got, ref in (
        (t.mean(dtype=mlfuse.float64), x.astype(F64).mean()),
        (t.mean(1, True, dtype=mlfuse.float64), x.astype(F64).mean(1, keepdims=True)),
        (t.nansum(dtype=mlfuse.float64), x.astype(F64).sum()),
    ):
        assert got.dtype == mlfuse.float64
        close(got, ref, 1e-12)
    sm = t.softmax(dim=-1, dtype=mlfuse.float64)
    e = np.exp(x.astype(F64) - x.max(-1, keepdims=True))
    assert sm.dtype == mlfuse.float64
    close(sm, e / e.sum(-1, keepdims=True), 1e-12)
    close(t.reshape(shape=(6, 4)), x.reshape(6, 4))
    close(t.permute(dims=(2, 0, 1)), x.transpose(2, 0, 1))
    close(t.split(split_size=3, dim=2)[1], x[:, :, 3:])
    with pytest.raises(TypeError, match="sizes given both positionally and as shape="):
        t.reshape(2, 12, shape=(6, 4))
    with pytest.raises(TypeError, match="unexpected keyword argument 'size'"):
        t.reshape(size=(6, 4))


def test_out_argument_writes_in_place():
    x = RNG.standard_normal((2, 3))
    out = mlfuse.zeros(2, 3, dtype=mlfuse.float64)
    got = mlfuse.mul(mlfuse.tensor(x), 2, out=out)
    assert got is out
    close(out, 2 * x)
    with pytest.raises(mlfuse.ArgumentError, match="out has shape"):
        mlfuse.exp(mlfuse.tensor(x), out=mlfuse.zeros(3))


def test_max_min_follow_torch():
    x = RNG.standard_normal((3, 5))
    t = mlfuse.tensor(x)
    values, indices = mlfuse.max(t, 1)
    close(values, x.max(1))
    close(indices, x.argmax(1))
    assert mlfuse.min(t, 0, keepdim=True).indices.shape == (1, 5)
    close(mlfuse.max(t), x.max())
    close(mlfuse.max(t, t * 2), np.maximum(x, 2 * x))
    close(t.min(t * 2), np.minimum(x, 2 * x))  # the method takes a tensor too


def test_creation_functions():
    assert mlfuse.zeros(2, 3).shape == mlfuse.zeros((2, 3)).shape == (2, 3)
    assert mlfuse.ones(4, dtype=mlfuse.int64).dtype == mlfuse.int64
    assert mlfuse.empty(2, requires_grad=True).requires_grad
    close(mlfuse.full((2,), 7), [7, 7])
    close(mlfuse.arange(1, 7, 2), [1, 3, 5])
    close(mlfuse.range(1, 2, 0.25), [1, 1.25, 1.5, 1.75, 2])
    close(mlfuse.linspace(0, 1, 5), np.linspace(0, 1, 5))
    close(mlfuse.tril_indices(3, 4, 1), np.stack(np.nonzero(np.tri(3, 4, 1))))
    close(mlfuse.triu_indices(4, 3, -1), np.stack(np.nonzero(1 - np.tri(4, 3, -2))))
    p = mlfuse.randperm(10).numpy()
    assert sorted(p.tolist()) == list(range(10)) and p.dtype == np.int64
    r = mlfuse.randint(3, 5, (100,)).numpy()
    assert r.min() >= 3 and r.max() <= 4
    n = mlfuse.normal(mlfuse.zeros(2000) + 3.0, 0.5).numpy()
    assert abs(n.mean() - 3) < 0.05 and abs(n.std() - 0.5) < 0.05
    src = mlfuse.tensor([1.0, 2.0], requires_grad=True)
    copy = mlfuse.tensor(src)
    assert not copy.requires_grad and copy.node is not src.node
    assert mlfuse.as_tensor(src) is src
    assert mlfuse.zeros_like(src).shape == (2,) and mlfuse.full_like(src, 3).numpy()[0] == 3


def test_joining_and_building():
    a, b = np.array([1.0, 2, 3]), np.array([4.0, 5])
    ta, tb = mlfuse.tensor(a), mlfuse.tensor(b)
    close(mlfuse.cartesian_prod(ta, tb), [[x, y] for x in a for y in b])
    close(mlfuse.combinations(ta, 2), [[1, 2], [1, 3], [2, 3]])
    close(mlfuse.combinations(tb, 2, with_replacement=True), [[4, 4], [4, 5], [5, 5]])
    m = RNG.standard_normal((2, 2))
    want = np.zeros((4, 5))  # each block on rows of its own
    want[:2, :2], want[2, 2:4], want[3, 4] = m, [4, 5], 9
    close(mlfuse.block_diag(mlfuse.tensor(m), tb, mlfuse.tensor(9.0)), want)
    y = RNG.standard_normal((4, 5, 2))
    x = RNG.standard_normal((3, 4))
    close(mlfuse.tensordot(mlfuse.tensor(x), mlfuse.tensor(y), dims=([1], [0])),
          np.tensordot(x, y, axes=([1], [0])))  # fmt: skip
    close(mlfuse.tensordot(mlfuse.tensor(y), mlfuse.tensor(y), dims=([0, 1], [0, 1])),
          np.tensordot(y, y, axes=([0, 1], [0, 1])))  # fmt: skip
    rows, cols = mlfuse.unravel_index(mlfuse.tensor([0, 5, 11, -1]), (3, 4))
    close(rows, [0, 1, 2, 2])
    close(cols, [0, 1, 3, 3])
    close(mlfuse.vander(ta, 4), np.vander(a, 4))
    close(mlfuse.isin(mlfuse.tensor([1, 2, 3, 4]), [2, 4]), [False, True, False, True])
    close(mlfuse.column_stack([ta[:2], mlfuse.tensor(m)]), np.column_stack([a[:2], m]))
    assert [t.shape for t in mlfuse.broadcast_tensors(ta.reshape(3, 1), tb)] == [(3, 2)] * 2
    assert mlfuse.broadcast_shapes((3, 1), (4,)) == (3, 4)
    assert mlfuse.atleast_3d(ta).shape == (1, 3, 1)
    close(mlfuse.trapezoid(mlfuse.tensor(x), dx=0.5), np.trapezoid(x, dx=0.5))
    pts = np.array([0.0, 1, 3, 4])
    close(mlfuse.trapezoid(mlfuse.tensor(x), mlfuse.tensor(pts)), np.trapezoid(x, pts))
    cum = np.cumsum((x[1:] + x[:-1]) / 2, 0)
    close(mlfuse.cumulative_trapezoid(mlfuse.tensor(x), dim=0), cum)


@pytest.mark.parametrize("periodic", [True, False])
def test_windows(periodic):
    n = 9
    m = n if periodic else n - 1  # the denominator: N - 1 of the (maybe longer) window
    k = np.arange(n)
    close(mlfuse.hann_window(n, periodic), 0.5 - 0.5 * np.cos(2 * np.pi * k / m), 1e-6)
    close(mlfuse.hamming_window(n, periodic), 0.54 - 0.46 * np.cos(2 * np.pi * k / m), 1e-6)
    a = 2 * np.pi * k / m
    black = 0.42 - 0.5 * np.cos(a) + 0.08 * np.cos(2 * a)
    close(mlfuse.blackman_window(n, periodic), black, 1e-6)
    close(mlfuse.bartlett_window(n, periodic), 1 - np.abs(2 * k / m - 1), 1e-6)
    r = 2 * k / m - 1
    close(mlfuse.kaiser_window(n, periodic, 5.0), np.i0(5 * np.sqrt(1 - r * r)) / np.i0(5), 1e-6)


def test_save_load_and_pickle(tmp_path):
    w = mlfuse.tensor(RNG.standard_normal((2, 3)), requires_grad=True)
    buf = io.BytesIO()
    mlfuse.save({"w": w, "rest": [w * 2, 3]}, buf)
    buf.seek(0)
    back = mlfuse.load(buf)
    close(back["rest"][0], w.numpy() * 2)
    assert back["rest"][1] == 3 and back["w"].requires_grad
    path = tmp_path / "t.pt"
    mlfuse.save(w, str(path))
    close(mlfuse.load(str(path), map_location="cpu"), w.numpy())
    b16 = pickle.loads(pickle.dumps(Tensor([1.5, -2.0], dtype=mlfuse.bfloat16)))
    assert b16.dtype == mlfuse.bfloat16 and b16.numpy().tolist() == [1.5, -2.0]


def test_functional_names_at_top_level():
    x = mlfuse.ones(1, 1, 4, 4)
    y = mlfuse.conv2d(x, mlfuse.ones(1, 1, 3, 3), padding=1)
    close(y[0, 0], [[4, 6, 6, 4], [6, 9, 9, 6], [6, 9, 9, 6], [4, 6, 6, 4]])


# -- special functions ----------------------------------------------------------------
def _lgamma(v):
    return np.array([math.lgamma(a) if not (a <= 0 and a == int(a)) else np.inf for a in v])


def _digamma(v):  # numerically: the derivative of lgamma by the recurrence and series
    out = []
    for a in v:
        if a <= 0 and a == int(a):
            out.append(-np.inf if a == 0 else np.nan)
            continue
        s, x = 0.0, a
        refl = 0.0
        if x < 0.5:
            refl, x = -math.pi / math.tan(math.pi * a), 1 - a
        while x < 20:
            s -= 1 / x
            x += 1
        s += math.log(x) - 1 / (2 * x) - 1 / (12 * x**2) + 1 / (120 * x**4) - 1 / (252 * x**6)
        out.append(s + refl)
    return np.array(out)


POINTS = np.array([0.001, 0.3, 0.5, 1, 1.5, 2, 2.5, 3.7, 7.25, 10, 25, 100, 171.3,
                   -0.5, -1.5, -2.3, -7.9, 0, -1, -3])  # fmt: skip


@pytest.mark.parametrize("dt", ["float64", "float32"])
def test_lgamma_digamma(dt):
    tol = 1e-9 if dt == "float64" else 3e-5
    t = Tensor(POINTS, dtype=dt)
    close(t.lgamma(), _lgamma(POINTS), tol)
    close(mlfuse.digamma(t), _digamma(POINTS), tol)


def test_polygamma_mvlgamma_i0_sinc():
    x = np.array([0.1, 0.7, 1.0, 2.5, 6.0, 30.0])
    t = Tensor(x)
    # trigamma by its series sum 1/(x+k)^2, tetragamma -2 sum 1/(x+k)^3 (+ tails)
    k = np.arange(200000)[:, None]
    tri = (1 / (x + k) ** 2).sum(0) + 1 / (x + 200000)
    close(t.polygamma(1), tri, 1e-8)
    tetra = -2 * (1 / (x + k) ** 3).sum(0) - 1 / (x + 200000) ** 2
    close(t.polygamma(2), tetra, 1e-8)
    close(t.polygamma(0), _digamma(x), 1e-9)
    y = x + 2
    want = 3 / 2 * math.log(math.pi) + sum(_lgamma(y - j / 2) for j in range(3))
    close(Tensor(y).mvlgamma(3), want)
    with pytest.raises(mlfuse.ArgumentError, match="greater than"):
        Tensor([0.4]).mvlgamma(3)
    z = np.array([-30.0, -4.2, 0, 0.5, 3.75, 14.9, 15.1, 40])
    close(Tensor(z).i0(), np.i0(z), 2e-7)
    close(Tensor(z).sinc(), np.sinc(z))
    g = mlfuse.grad(lambda v: v.sinc().sum())(Tensor([0.0, 0.5]))[0].numpy()
    assert g[0] == 0 and np.isfinite(g[1])


def test_nan_aware_extrema_and_steps():
    a = np.array([1.0, np.nan, 3, np.nan])
    b = np.array([2.0, 5, np.nan, np.nan])
    close(Tensor(a).fmax(Tensor(b)), np.fmax(a, b))
    close(mlfuse.fmin(Tensor(a), Tensor(b)), np.fmin(a, b))
    h = np.array([-1.0, 0, 2, 0])
    close(Tensor(h).heaviside(Tensor([0.5])), np.heaviside(h, 0.5))
    close(Tensor([3.0, 1]).ldexp(Tensor([2, -1])), [12, 0.5])
    close(Tensor([-np.inf, 1, np.inf]).isposinf(), [False, False, True])
    close(mlfuse.isneginf(Tensor([-np.inf, 1, np.inf])), [True, False, False])


# -- view scatters, reductions, sampling -----------------------------------------------
def test_scatters_into_views():
    m = RNG.standard_normal((3, 4, 5))
    t = Tensor(m)
    want = m.copy()
    want[:, 2] = 1
    close(t.select_scatter(mlfuse.ones(3, 5, dtype=mlfuse.float64), 1, 2), want)
    want = m.copy()
    want[:, 0:4:2] = 2
    close(t.slice_scatter(mlfuse.full((3, 2, 5), 2.0, dtype=mlfuse.float64), 1, 0, 4, 2), want)
    for off, d1, d2 in [(0, 0, 1), (1, 1, 2), (-2, 2, 0), (0, 2, 1)]:
        diag = np.diagonal(m, off, d1, d2)
        src = RNG.standard_normal(diag.shape)
        got = t.diagonal_scatter(Tensor(src), off, d1, d2)
        assert np.array_equal(np.diagonal(got.numpy(), off, d1, d2), src)
        idx = np.indices(m.shape)
        off_diag = idx[d2] - idx[d1] != off  # everything else is the input's
        assert np.array_equal(got.numpy()[off_diag], m[off_diag])
    with pytest.raises(mlfuse.ArgumentError, match="the diagonal"):
        t.diagonal_scatter(mlfuse.ones(2), 0, 0, 1)
    mask = RNG.random((3, 4, 5)) > 0.5
    src = RNG.standard_normal(60)
    want = m.copy()
    want[mask] = src[: mask.sum()]
    close(t.masked_scatter(Tensor(mask), Tensor(src)), want)
    with pytest.raises(mlfuse.ArgumentError, match="source has only"):
        t.masked_scatter(Tensor(mask), Tensor(src[:3]))


def test_diag_embed_take_select():
    v = RNG.standard_normal((2, 3))
    want = np.zeros((2, 4, 4))
    for i in range(2):
        want[i] = np.diag(v[i], 1)
    close(Tensor(v).diag_embed(1), want)
    close(Tensor(v).diag_embed(-1, 0, 2), np.transpose([np.diag(r, -1) for r in v], (1, 0, 2)))
    close(Tensor(v).diagflat(), np.diagflat(v))
    close(Tensor(v).take(Tensor([[0, 5], [4, -1]])), v.reshape(-1)[[[0, 5], [4, -1]]])
    close(Tensor(v).select(1, -1), v[:, -1])


def test_index_reduce_cov_corrcoef_power():
    m = RNG.standard_normal((3, 5))
    idx = np.array([0, 2, 0, 1])
    s = RNG.standard_normal((4, 5))
    want = m.copy()
    for i, row in zip(idx, s):
        want[i] = np.maximum(want[i], row)
    close(Tensor(m).index_reduce(0, Tensor(idx), Tensor(s), "amax"), want)
    want = m.copy()
    cnt = np.ones(3)
    for i, row in zip(idx, s):
        want[i] += row
        cnt[i] += 1
    close(Tensor(m).index_reduce(0, Tensor(idx), Tensor(s), "mean"), want / cnt[:, None])
    close(Tensor(m).cov(), np.cov(m))
    fw, aw = np.array([1, 2, 1, 3, 1]), RNG.random(5)
    want = np.cov(m, fweights=fw, aweights=aw)
    close(Tensor(m).cov(fweights=Tensor(fw), aweights=Tensor(aw)), want)
    close(Tensor(m).corrcoef(), np.corrcoef(m))
    sq = RNG.standard_normal((2, 3, 3))
    for n in (0, 1, 3, 6):
        close(Tensor(sq).matrix_power(n), np.linalg.matrix_power(sq, n), 1e-9)
    close(Tensor(sq).matrix_power(-2), np.linalg.matrix_power(sq, -2), 1e-9)
    close(Tensor(m).dist(Tensor(m * 0), 3), (np.abs(m) ** 3).sum() ** (1 / 3))
    close(Tensor(m).sum_to_size(1, 5), m.sum(0, keepdims=True))
    lo, hi = Tensor(m).aminmax(dim=1)
    close(lo, m.min(1))
    close(hi, m.max(1))
    close(Tensor(m[:3, :3]).addr(Tensor([1.0, 2, 3]), Tensor([1.0, 0, 2]), beta=0.5, alpha=2),
          0.5 * m[:3, :3] + 2 * np.outer([1, 2, 3], [1, 0, 2]))  # fmt: skip


@pytest.mark.filterwarnings("ignore:All-NaN slice")
def test_nanquantile():
    q = np.array([[1.0, np.nan, 3, 4, 7], [2, 5, 1, 2, np.nan], [np.nan] * 5])
    for interp in ("linear", "lower", "higher", "nearest", "midpoint"):
        got = Tensor(q).nanquantile(0.4, dim=1, interpolation=interp)
        close(got, np.nanquantile(q, 0.4, axis=1, method=interp) if interp != "linear"
              else np.nanquantile(q, 0.4, axis=1))  # fmt: skip


def test_sampling():
    w = Tensor([0.0, 1.0, 3.0])
    draws = w.multinomial(4000, replacement=True).numpy()
    assert set(draws.tolist()) <= {1, 2} and abs((draws == 2).mean() - 0.75) < 0.04
    rows = Tensor(np.ones((5, 6))).multinomial(6).numpy()
    assert all(sorted(r) == list(range(6)) for r in rows.tolist())
    with pytest.raises(mlfuse.ArgumentError, match="without replacement"):
        w.multinomial(4)
    with pytest.raises(mlfuse.ArgumentError, match="non-negative"):
        Tensor([-1.0, 1.0]).multinomial(1)
    b = Tensor(np.full(4000, 0.25)).bernoulli().numpy()
    assert set(b.tolist()) <= {0, 1} and abs(b.mean() - 0.25) < 0.03
    x = mlfuse.zeros(1000)
    assert abs(x.uniform_(2, 3).numpy().mean() - 2.5) < 0.05
    assert abs(x.normal_(1, 0.1).numpy().std() - 0.1) < 0.01
    r = mlfuse.zeros(500, dtype=mlfuse.int64).random_(5, 7).numpy()
    assert set(r.tolist()) == {5, 6}
    assert (mlfuse.zeros(100).exponential_(2.0).numpy() > 0).all()


# -- in-place variants and aliases -------------------------------------------------------
def test_inplace_variants():
    m = RNG.standard_normal((3, 4))
    t = Tensor(m.copy())
    assert t.exp_() is t
    close(t, np.exp(m))
    t = Tensor(m.copy())
    t.clamp_min_(0).mul_(2)
    close(t, 2 * np.maximum(m, 0))
    t = Tensor(m.copy())
    t[1].sigmoid_()  # through a view, into the base
    want = m.copy()
    want[1] = 1 / (1 + np.exp(-m[1]))
    close(t, want)
    t = Tensor(np.array([1.0, 2, 3]))
    t.lt_(2)
    close(t, [1, 0, 0])
    assert t.dtype == mlfuse.float64
    z = mlfuse.zeros(4, 3)
    z.fill_diagonal_(5)
    close(z, np.eye(4, 3) * 5)
    z = mlfuse.zeros(7, 3)
    z.fill_diagonal_(1, wrap=True)
    want = np.zeros((7, 3))
    for r in (0, 1, 2, 4, 5, 6):
        want[r, r % 4] = 1
    close(z, want)


def test_view_changing_inplace():
    m = RNG.standard_normal((3, 4))
    t = Tensor(m.copy())
    t.t_()
    assert t.shape == (4, 3)
    t.add_(1)
    close(t, m.T + 1)
    base = Tensor(m.copy())
    row = base[1]
    row.unsqueeze_(0)
    assert row.shape == (1, 4)
    row.mul_(0)  # still writes into base
    want = m.copy()
    want[1] = 0
    close(base, want)


@pytest.mark.cpu  # CPU semantics (see tests/conftest.py)
def test_aliases_and_small_methods():
    m = RNG.uniform(-0.9, 0.9, (2, 3))
    t = Tensor(m)
    close(t.arccos(), np.arccos(m))
    close(t.arcsinh(), np.arcsinh(m))
    close(t.multiply(2).subtract(1).divide(2), (2 * m - 1) / 2)
    close(t.negative(), -m)
    close(t.fix(), np.trunc(m))
    close(t.fliplr(), np.fliplr(m))
    close(t.flipud(), np.flipud(m))
    assert t.positive() is t and t.conj() is t and t.real is t
    assert t.ndimension() == 2 and t.nbytes == 48 and t.itemsize == 8
    assert t.get_device() == -1
    close(t.mH, m.T)
    close(t.ravel(), m.reshape(-1))
    assert [p.shape for p in t.split_with_sizes([1, 2], 1)] == [(2, 1), (2, 2)]
    with pytest.raises(mlfuse.ArgumentError, match="fliplr needs at least 2 dims"):
        Tensor([1.0]).fliplr()


# -- integer and bit-level functions, settings -------------------------------------------
def test_gcd_lcm():
    a = np.array([0, 12, -18, 7, 100, -5, 0, 2**40, 3 * 2**30, 832040], np.int64)
    b = np.array([0, 8, 24, -21, 75, 0, -3, 3 * 2**35, 5 * 2**31, 514229], np.int64)
    close(Tensor(a).gcd(Tensor(b)), np.gcd(a, b))  # 832040, 514229: Fibonacci, the worst case
    close(mlfuse.lcm(Tensor(a[:7]), Tensor(b[:7])), np.lcm(a[:7], b[:7]))
    small = np.array([12, -127, 100, 89], np.int8), np.array([18, 3, 75, 55], np.int8)
    close(Tensor(small[0]).gcd(Tensor(small[1])), np.gcd(*small))
    with pytest.raises(TypeError, match="gcd needs integer tensors"):
        Tensor([1.0]).gcd(Tensor([2.0]))


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.float16])
def test_frexp_nextafter(dt):
    tiny = {np.float32: 2.0**-149, np.float64: 5e-324, np.float16: 2.0**-24}[dt]
    x = np.array([0.0, -0.0, 1, 0.75, -3.5, tiny, 3 * tiny, np.inf, -np.inf, np.nan, 1000], dt)
    m, e = Tensor(x).frexp()
    wm, we = np.frexp(x)
    assert m.dtype.name == np.dtype(dt).name and e.dtype == mlfuse.int32
    np.testing.assert_array_equal(m.numpy(), wm)
    np.testing.assert_array_equal(e.numpy()[np.isfinite(x)], we[np.isfinite(x)])
    y = np.array([1.0, -1, 0, 0, 2, np.nan, 5, np.inf, -0.0, 1], dt)
    z = np.array([2.0, -2, 1, -1, 2, 1, np.inf, 0, 1, -np.inf], dt)
    np.testing.assert_array_equal(Tensor(y).nextafter(Tensor(z)).numpy(), np.nextafter(y, z))


def test_dtype_info_devices_and_settings():
    f = mlfuse.finfo(mlfuse.float32)
    assert f.eps == np.finfo(np.float32).eps and f.max == np.finfo(np.float32).max
    assert f.bits == 32 and mlfuse.finfo().tiny == np.finfo(np.float32).tiny
    assert mlfuse.finfo(mlfuse.bfloat16).eps == 2.0**-7
    assert mlfuse.iinfo(mlfuse.int16).min == -32768 and mlfuse.iinfo(mlfuse.uint8).max == 255
    with pytest.raises(TypeError, match="use iinfo"):
        mlfuse.finfo(mlfuse.int32)
    d = mlfuse.device("cpu")
    assert d == "cpu" and d.type == "cpu" and d.index is None
    assert Tensor([1.0], device=d).device == "cpu"
    assert Tensor([1.0], device="cpu:0").device == "cpu"
    assert mlfuse.device("cuda", 0).index == 0 and repr(mlfuse.device("cuda:0")).endswith(
        "index=0)"
    )
    with pytest.raises(ValueError, match="one device of each kind"):
        Tensor([1.0], device="cpu:1")
    with pytest.raises(mlfuse.ArgumentError, match="unknown device type 'tpu'"):
        mlfuse.device("tpu")
    assert not mlfuse.can_cast(mlfuse.float32, mlfuse.int32)
    assert mlfuse.can_cast(mlfuse.int64, mlfuse.float16)
    assert not mlfuse.can_cast(mlfuse.int8, mlfuse.bool_)
    try:
        mlfuse.set_default_dtype(mlfuse.float64)
        assert Tensor([1.5]).dtype == mlfuse.float64 and mlfuse.zeros(2).dtype == mlfuse.float64
        assert mlfuse.get_default_dtype() == mlfuse.float64
    finally:
        mlfuse.set_default_dtype(mlfuse.float32)
    mlfuse.manual_seed(1234)
    assert mlfuse.initial_seed() == 1234
    with mlfuse.inference_mode():
        y = Tensor([1.0], requires_grad=True) * 2
    assert not y.requires_grad
    fn = mlfuse.compile(lambda v: v * 2)
    close(fn(Tensor([2.0])), [4.0])
    h, edges = mlfuse.histogram(Tensor([0.0, 1, 1, 2, 3]), 3)
    close(h, [1, 2, 2])
    close(edges, [0, 1, 2, 3])


def test_set_num_threads():
    before = mlfuse.get_num_threads()
    try:
        mlfuse.set_num_threads(1)
        assert mlfuse.get_num_threads() == 1
        close(mlfuse.ones(300, 300).sum(), 90000.0)
    finally:
        mlfuse.set_num_threads(before)
    with pytest.raises(ValueError, match="positive int"):
        mlfuse.set_num_threads(0)


@pytest.mark.cpu  # CPU semantics (see tests/conftest.py)
def test_data_and_predicates():
    p = Tensor([1.0, 2.0], requires_grad=True)
    p.data.mul_(3)  # writes through, records nothing
    close(p, [3.0, 6.0])
    assert p.is_leaf and p.requires_grad
    (p * p).sum().backward()
    close(p.grad, [6.0, 12.0])
    p.data = Tensor([5.0, 6.0, 7.0])
    assert p.shape == (3,) and p.requires_grad
    x = Tensor(np.arange(12.0).reshape(3, 4))
    assert x.is_contiguous() and x[1:].is_contiguous() and x[1].is_contiguous()
    assert not x.T.is_contiguous() and not x[:, 1:].is_contiguous()
    assert not x.unsqueeze(0).expand(2, 3, 4).is_contiguous()
    assert x.is_cpu and not x.is_cuda and not x.is_complex() and x.is_signed()
    assert not Tensor(np.array([1], np.uint8)).is_signed()
    assert x.is_same_size(x * 2) and Tensor([2.0]).is_nonzero()
    assert x.cpu() is x or x.cpu().device == "cpu"


STRIDED_VIEWS = {  # view -> PyTorch's (strides, storage offset) for a (2, 3, 4, 5) tensor
    "whole": (lambda x: x, ((60, 20, 5, 1), 0)),
    "permute": (lambda x: x.permute(2, 0, 3, 1), ((5, 60, 1, 20), 0)),
    "slices": (lambda x: x[1:, ::2, 1:3], ((60, 40, 5, 1), 65)),
    "transposed reshape": (lambda x: x.transpose(0, 1).reshape(3, 2, 20), ((20, 60, 1), 0)),
    "select unsqueeze": (lambda x: x[:, 1].unsqueeze(1), ((60, 20, 5, 1), 20)),
    "expand": (lambda x: x[0, 0, 0].expand(3, 5), ((0, 1), 0)),
    "copied reshape": (lambda x: x.permute(1, 0, 2, 3).reshape(6, 20), ((20, 1), 0)),
    "merged slice": (lambda x: x[:, :, 1:, :].reshape(2, 3, 15), ((60, 20, 1), 5)),
    "reshape permute reshape": (
        lambda x: x.reshape(6, 4, 5)[2:].permute(2, 1, 0).reshape(5, 4, 2, 2),
        ((1, 5, 40, 20), 40),
    ),
    "expanded select": (lambda x: x.unsqueeze(0).expand(3, 2, 3, 4, 5)[1], ((60, 20, 5, 1), 0)),
    "narrow squeeze": (lambda x: x.narrow(3, 1, 3).squeeze(), ((60, 20, 5, 1), 1)),
    "scalar": (lambda x: x[1, 2, 3, 4], ((), 119)),
    "detach": (lambda x: x.detach()[1], ((20, 5, 1), 60)),
    "flat steps": (lambda x: x.view(-1)[3:50:7], ((7,), 3)),
    "movedim": (lambda x: x.movedim(0, -1), ((20, 5, 1, 60), 0)),
}


@pytest.mark.parametrize("name", STRIDED_VIEWS)
def test_stride_and_storage_offset(name):
    view, (strides, offset) = STRIDED_VIEWS[name]
    a = np.arange(120.0).reshape(2, 3, 4, 5)
    t = view(Tensor(a))
    assert t.stride() == strides and t.storage_offset() == offset
    assert tuple(t.stride(d) for d in range(-t.ndim, 0)) == strides[-t.ndim :] if t.ndim else True
    if name == "copied reshape":
        return  # PyTorch copies: the strides are those of a storage of its own
    # the layout reads the view's values from the base's storage
    got = np.lib.stride_tricks.as_strided(
        a.reshape(-1)[offset:], t.shape, tuple(8 * s for s in strides)
    )
    np.testing.assert_array_equal(got, t.numpy())


def test_stride_of_new_tensors_and_errors():
    x = Tensor(np.zeros((3, 0, 2)))
    assert x.stride() == (2, 2, 1)
    assert (Tensor.ones(2, 3) + 1).T.stride() == (1, 3)
    assert Tensor.ones(4, 4).flip(0).stride() == (4, 1)  # a flip is a new tensor
    with pytest.raises(IndexError, match="stride: dim 2 is out of range for a tensor of 2 dims"):
        Tensor.ones(2, 3).stride(2)
    with pytest.raises(IndexError, match="out of range for a tensor of 0 dims"):
        Tensor(1.0).stride(0)
    with pytest.raises(TypeError, match="stride: dim must be an int, got str"):
        Tensor.ones(2).stride("0")


def test_matrix_exp_and_cholesky_helpers():
    a = RNG.standard_normal((2, 3, 3))
    want = np.zeros_like(a)
    for i in range(2):  # the series, summed far enough in float64
        term = np.eye(3)
        for k in range(1, 60):
            want[i] += term
            term = term @ a[i] / k
    close(Tensor(a).matrix_exp(), want, 1e-10)
    s = a @ a.transpose(0, 2, 1) + 3 * np.eye(3)
    lo = np.linalg.cholesky(s)
    b = RNG.standard_normal((2, 3, 2))
    close(Tensor(b).cholesky_solve(Tensor(lo)), np.linalg.solve(s, b), 1e-10)
    close(Tensor(lo).cholesky_inverse(), np.linalg.inv(s), 1e-10)


def test_cuda_questions_and_where_alone():
    import mlfuse.targets.cuda.driver as drv

    assert mlfuse.cuda.is_available() == drv.available()
    assert mlfuse.cuda.device_count() == (1 if drv.available() else 0)
    mlfuse.cuda.synchronize()  # nothing to wait for, and no error, without a GPU
    mlfuse.cuda.set_device("cuda:0")
    with pytest.raises(mlfuse.ArgumentError, match="device 0 only"):
        mlfuse.cuda.set_device(1)
    rows, cols = mlfuse.where(Tensor([[0, 1], [1, 1]]) > 0)
    close(rows, [0, 1, 1])
    close(cols, [1, 0, 1])
    with pytest.raises(mlfuse.ArgumentError, match="both input and other, or neither"):
        mlfuse.where(Tensor([True]), 1.0)


def test_tinygrad_spellings_and_inputs():
    close(Tensor([[1, 2]]).pad_to(2, 3, value=-1), [[1, 2, -1], [-1, -1, -1]])
    close(Tensor([[1, 2]]).pad_to(None, 3), [[1, 2, 0]])
    with pytest.raises(mlfuse.ArgumentError, match="smaller than"):
        Tensor([1, 2]).pad_to(1)
    t = Tensor(np.arange(32).reshape(4, 8))
    close(t.shrink_to(2, None), np.arange(16).reshape(2, 8))
    close(t.shrink_to(None, 2), np.arange(32).reshape(4, 8)[:, :2])
    Tensor.manual_seed(3)
    assert sorted(Tensor.randperm(10).numpy().tolist()) == list(range(10))
    b = Tensor(b"abc")
    assert b.dtype == mlfuse.uint8 and b.numpy().tolist() == [97, 98, 99]
    assert Tensor(None).shape == (0,)
    close(Tensor([-1, 0, 255], dtype=mlfuse.uint8), [255, 0, 255])  # PyTorch wraps negatives
    with pytest.raises(OverflowError):
        Tensor([256], dtype=mlfuse.uint8)
    assert Tensor([1.0]).to("CPU").device == "cpu"  # tinygrad's device names
    # a mixed or non-int shape is both PyTorch's TypeError and tinygrad's ValueError
    for bad in [((2, 2), 2, 2), ((128, 128), 0.0, 0.01)]:
        with pytest.raises(TypeError):
            mlfuse.zeros(*bad)
        with pytest.raises(ValueError):
            Tensor.ones(*bad)


def test_non_tensor_in_a_sequence_is_both_type_and_value_error():
    for bad in (lambda: mlfuse.stack([Tensor([1.0]), (1, 2)]),
                lambda: mlfuse.cat([Tensor([1.0]), [2.0]]),
                lambda: mlfuse.einsum("i,i", Tensor([1.0]), [1.0])):  # fmt: skip
        with pytest.raises(TypeError, match="expected Tensors"):
            bad()
        with pytest.raises(ValueError, match="expected Tensors"):
            bad()


def test_assign_takes_arrays_in_the_target_dtype():
    w = mlfuse.zeros(2, 2)
    w.assign(np.arange(4.0).reshape(2, 2))  # float64 values into float32, as tinygrad
    assert w.dtype == mlfuse.float32
    close(w, np.arange(4.0).reshape(2, 2))
    w.assign([[1, 2], [3, 4]])
    close(w, [[1, 2], [3, 4]])
    with pytest.raises(TypeError, match="assign: value has dtype float64"):
        w.assign(Tensor(np.zeros((2, 2))))


def test_narrow_copy_and_pinned_memory():
    x = Tensor(np.arange(12.0).reshape(3, 4))
    got = mlfuse.narrow_copy(x, 1, 1, 2)
    np.testing.assert_array_equal(got.numpy(), np.arange(12.0).reshape(3, 4)[:, 1:3])
    np.testing.assert_array_equal(x.narrow_copy(0, 2, 1).numpy(), [[8.0, 9.0, 10.0, 11.0]])
    assert x.pin_memory() is x and not x.is_pinned()  # host memory copies as it is


# -- view copies, splits, fills -----------------------------------------------------
def test_view_copy_functions_are_tensors_of_their_own():
    x = RNG.standard_normal((2, 3, 4))
    t = mlfuse.tensor(x)
    close(mlfuse.transpose_copy(t, 0, 2), x.transpose(2, 1, 0))
    close(mlfuse.permute_copy(t, (1, 2, 0)), x.transpose(1, 2, 0))
    close(mlfuse.diagonal_copy(t, 0, 1, 2), np.diagonal(x, 0, 1, 2))
    close(mlfuse.expand_copy(t[:, :1], (2, 5, 4)), np.broadcast_to(x[:, :1], (2, 5, 4)))
    close(mlfuse.select_copy(t, 1, 2), x[:, 2])
    close(mlfuse.slice_copy(t, -1, 1, None, 2), x[..., 1::2])
    close(mlfuse.unsqueeze_copy(t, 1), x[:, None])
    close(mlfuse.view_copy(t, (6, 4)), x.reshape(6, 4))
    close(mlfuse.alias_copy(t), x)
    parts = mlfuse.split_with_sizes_copy(t, [1, 3], 2)
    assert [p.shape for p in parts] == [(2, 3, 1), (2, 3, 3)]
    close(parts[1], x[..., 1:])
    assert [u.shape for u in mlfuse.unbind_copy(t, 1)] == [(2, 4)] * 3
    c = mlfuse.t_copy(t[0])
    c[0, 0] = 100.0  # a copy: t stays
    assert t[0, 0, 0].item() == x[0, 0, 0]
    out = mlfuse.zeros(4, 3)
    assert mlfuse.t_copy(t[0], out=out) is out
    close(out, x[0].T)
    with pytest.raises(mlfuse.ArgumentError, match="step must be positive"):
        mlfuse.slice_copy(t, 0, 0, 2, 0)


def test_split_with_sizes_and_the_unsafe_spellings():
    t = mlfuse.arange(10)
    assert [p.tolist() for p in t.split_with_sizes([3, 7])] == [[0, 1, 2], list(range(3, 10))]
    assert [p.tolist() for p in mlfuse.unsafe_split(t, 4)] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert [len(p) for p in t.unsafe_chunk(3)] == [4, 4, 2]
    assert [len(p) for p in mlfuse.unsafe_split_with_sizes(t, [5, 5])] == [5, 5]
    with pytest.raises(mlfuse.ArgumentError, match="do not add up"):
        t.split_with_sizes([3, 3])
    with pytest.raises(TypeError, match="must be a list of ints"):
        t.split_with_sizes(3)


def test_fill_constant_pad_and_pool_indices():
    x = mlfuse.tensor([[1, 2], [3, 4]])
    f = mlfuse.fill(x, 7)
    assert f.dtype == mlfuse.int64 and f.tolist() == [[7, 7], [7, 7]] and x.tolist()[0] == [1, 2]
    assert mlfuse.fill(x, mlfuse.tensor(2.9)).tolist() == [[2, 2], [2, 2]]
    with pytest.raises(mlfuse.ArgumentError, match="one element"):
        mlfuse.fill(x, mlfuse.tensor([1, 2]))
    assert mlfuse.constant_pad_nd(x, (1, 0), -1).tolist() == [[-1, 1, 2], [-1, 3, 4]]
    v, i = mlfuse.max_pool1d_with_indices(mlfuse.tensor([[[1.0, 3.0, 2.0, 5.0, 4.0]]]), 2)
    assert v.tolist() == [[[3.0, 5.0]]] and i.tolist() == [[[1, 3]]]


def test_nonzero_static_angle_and_retains_grad():
    m = mlfuse.tensor([[0, 1], [1, 1]])
    assert m.nonzero_static(size=4, fill_value=-5).tolist() == [[0, 1], [1, 0], [1, 1], [-5, -5]]
    assert mlfuse.nonzero_static(m, size=1).tolist() == [[0, 1]]
    a = mlfuse.tensor([-2.0, 0.0, 3.0, math.nan, -0.0]).angle().tolist()
    assert a[:3] == [pytest.approx(math.pi), 0.0, 0.0] and math.isnan(a[3]) and a[4] == 0.0
    assert mlfuse.angle(mlfuse.tensor([-3, 4])).dtype == mlfuse.float32
    w = mlfuse.tensor([1.0, -2.0, 3.0], requires_grad=True)
    h, k = w * 2, w * 3
    h.retain_grad()
    assert (h.retains_grad, k.retains_grad, w.retains_grad) == (True, False, False)
    (h.sum() + k.angle().sum()).backward()
    assert h.grad.tolist() == [1.0, 1.0, 1.0] and w.grad.tolist() == [2.0, 2.0, 2.0]
    h.detach_()  # a tensor of several elements leaves the holders (once compared with ==)
    w.requires_grad_(False)
    assert not h.retains_grad and not w.requires_grad


# -- numerical derivatives and batching ---------------------------------------------
def _np_gradient(f, *spacing, axis=None, edge_order=1):
    return np.gradient(f, *spacing, axis=axis, edge_order=edge_order)


@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient_matches_numpy(edge_order):
    f = RNG.standard_normal((5, 7))
    x0, x1 = np.sort(RNG.uniform(0, 5, 5)), np.sort(RNG.uniform(0, 3, 7))
    t = mlfuse.tensor(f)
    got = mlfuse.gradient(t, edge_order=edge_order)
    for g, w in zip(got, _np_gradient(f, edge_order=edge_order)):
        close(g, w, 1e-12)
    got = mlfuse.gradient(t, spacing=(0.5, 3.0), edge_order=edge_order)
    for g, w in zip(got, _np_gradient(f, 0.5, 3.0, edge_order=edge_order)):
        close(g, w, 1e-12)
    got = mlfuse.gradient(t, spacing=(mlfuse.tensor(x0), mlfuse.tensor(x1)), edge_order=edge_order)
    for g, w in zip(got, _np_gradient(f, x0, x1, edge_order=edge_order)):
        close(g, w, 1e-10)
    (g1,) = mlfuse.gradient(t, spacing=2.0, dim=-1, edge_order=edge_order)
    close(g1, _np_gradient(f, 2.0, axis=1, edge_order=edge_order), 1e-12)
    (gi,) = mlfuse.gradient(mlfuse.tensor([1, 4, 9, 16, 25]))
    assert gi.dtype == mlfuse.float32 and gi.tolist() == [3.0, 4.0, 6.0, 8.0, 9.0]


def test_gradient_errors():
    t = mlfuse.tensor([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(mlfuse.ArgumentError, match="needs at least 3"):
        mlfuse.gradient(t, edge_order=2)
    with pytest.raises(mlfuse.ArgumentError, match="spacing has 1 entries for 2 dims"):
        mlfuse.gradient(t, spacing=(1.0,))
    with pytest.raises(mlfuse.ArgumentError, match="coordinates for dim 0 must be 1-d with 2"):
        mlfuse.gradient(t, spacing=(mlfuse.tensor([0.0, 1.0, 2.0]),), dim=0)
    with pytest.raises(mlfuse.ArgumentError, match="edge_order must be 1 or 2"):
        mlfuse.gradient(t, edge_order=3)


def test_vmap_maps_dims_and_stacks_results():
    a, b = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 3))
    m = RNG.standard_normal((3, 2))
    ta, tb = mlfuse.tensor(a), mlfuse.tensor(b)
    close(mlfuse.vmap(mlfuse.dot)(ta, tb), (a * b).sum(1))
    close(mlfuse.vmap(lambda x, w: x @ w, in_dims=(0, None))(ta, mlfuse.tensor(m)), a @ m)
    s = mlfuse.vmap(lambda x: x.softmax(-1), in_dims=1, out_dims=1)(ta)
    e = np.exp(a.T - a.T.max(-1, keepdims=True))
    close(s, (e / e.sum(-1, keepdims=True)).T)
    p, q = mlfuse.vmap(lambda x, y: (x + y, x.sum()), out_dims=(1, 0))(ta, tb)
    close(p, (a + b).T)
    close(q, a.sum(1))
    close(mlfuse.vmap(mlfuse.vmap(lambda x, y: x * y))(ta, tb), a * b)
    d = mlfuse.vmap(lambda x, scale=1.0: {"y": x * scale})(ta, scale=2.0)
    close(d["y"], 2 * a)


def test_vmap_errors_and_randomness():
    t = mlfuse.ones(4, 3)
    with pytest.raises(mlfuse.ArgumentError, match="mapped dims differ in size"):
        mlfuse.vmap(lambda x, y: x + y)(t, mlfuse.ones(5, 3))
    with pytest.raises(mlfuse.ArgumentError, match="no argument is mapped"):
        mlfuse.vmap(lambda x: x, in_dims=None)(t)
    with pytest.raises(mlfuse.ArgumentError, match="in_dims None to pass it whole"):
        mlfuse.vmap(lambda x, k: x * k)(t, 2.0)
    with pytest.raises(RuntimeError, match="drew random numbers"):
        mlfuse.vmap(lambda x: x + mlfuse.rand(3))(t)
    with pytest.raises(TypeError, match="must return tensors"):
        mlfuse.vmap(lambda x: 3)(t)
    same = mlfuse.vmap(lambda x: x * mlfuse.rand(3), randomness="same")(t).numpy()
    assert np.array_equal(same[0], same[3])
    other = mlfuse.vmap(lambda x: x * mlfuse.rand(3), randomness="different")(t).numpy()
    assert not np.array_equal(other[0], other[3])


def test_vmap_against_torch():
    torch = pytest.importorskip("torch")
    a, m = RNG.standard_normal((5, 3)), RNG.standard_normal((3, 3))

    def fn(x, w):
        return (x @ w).tanh() * x.sum()

    want = torch.vmap(fn, in_dims=(0, None))(torch.tensor(a), torch.tensor(m)).numpy()
    close(mlfuse.vmap(fn, in_dims=(0, None))(mlfuse.tensor(a), mlfuse.tensor(m)), want, 1e-12)


# -- sampling, the generator state, settings ------------------------------------------
def test_poisson_binomial_and_rng_state():
    mlfuse.manual_seed(3)
    s = mlfuse.get_rng_state()
    assert s.dtype == mlfuse.uint8 and s.shape == (37,)
    first = mlfuse.rand(5).tolist()
    mlfuse.set_rng_state(s)
    assert mlfuse.rand(5).tolist() == first
    lam = mlfuse.full((20000,), 4.0)
    p = mlfuse.poisson(lam).numpy()
    assert p.dtype == np.float32 and abs(p.mean() - 4.0) < 0.1 and abs(p.var() - 4.0) < 0.25
    assert (p == np.round(p)).all()
    b = mlfuse.binomial(mlfuse.full((20000,), 10.0), mlfuse.tensor(0.3)).numpy()
    assert abs(b.mean() - 3.0) < 0.1 and b.max() <= 10 and b.min() >= 0
    assert mlfuse.binomial(mlfuse.tensor([5.0]), mlfuse.tensor([1.0])).tolist() == [5.0]
    with pytest.raises(mlfuse.ArgumentError, match="rates must be non-negative"):
        mlfuse.poisson(mlfuse.tensor([-1.0]))
    with pytest.raises(mlfuse.ArgumentError, match=r"prob must lie in \[0, 1\]"):
        mlfuse.binomial(mlfuse.tensor([2.0]), mlfuse.tensor([1.5]))
    with pytest.raises(mlfuse.ArgumentError, match="a state holds 37 bytes"):
        mlfuse.set_rng_state(mlfuse.zeros(5, dtype=mlfuse.uint8))
    with pytest.raises(TypeError, match="expected the uint8 tensor"):
        mlfuse.set_rng_state(mlfuse.zeros(37))


def test_matmul_precision_setting_and_functional_names():
    before = mlfuse.get_float32_matmul_precision()
    try:
        mlfuse.set_float32_matmul_precision("high")
        assert mlfuse.get_float32_matmul_precision() == "high"
        with pytest.raises(mlfuse.ArgumentError, match="expected 'highest', 'high' or 'medium'"):
            mlfuse.set_float32_matmul_precision("low")
    finally:
        mlfuse.set_float32_matmul_precision(before)
    x = mlfuse.arange(8.0).reshape(1, 4, 2)
    assert mlfuse.channel_shuffle(x, 2)[0, :, 0].tolist() == [0.0, 4.0, 2.0, 6.0]
    assert mlfuse.pdist(mlfuse.tensor([[0.0, 0.0], [3.0, 4.0]])).tolist() == [5.0]


# -- generators, layouts and memory formats ------------------------------------------
def test_generator_streams_are_their_own():
    g = mlfuse.Generator().manual_seed(3)
    mlfuse.manual_seed(5)
    a = mlfuse.rand(4, generator=g).numpy()
    b = mlfuse.randn(2, 3, generator=g).numpy()
    p = mlfuse.randperm(6, generator=g).numpy()
    untouched = mlfuse.rand(3).numpy()
    mlfuse.manual_seed(5)
    close(mlfuse.rand(3), untouched)  # the global stream did not move
    assert g.manual_seed(3) is g and g.initial_seed() == 3
    close(mlfuse.rand(4, generator=g), a)
    close(mlfuse.randn(2, 3, generator=g), b)
    np.testing.assert_array_equal(mlfuse.randperm(6, generator=g).numpy(), p)
    assert sorted(p) == list(range(6))
    state = g.get_state()
    w = Tensor.zeros(50)
    w.normal_(generator=g)
    x = mlfuse.randint(0, 9, (5,), generator=g).numpy()
    g.set_state(state)
    v = Tensor.zeros(50)
    v.normal_(generator=g)
    close(v, w.numpy())
    np.testing.assert_array_equal(mlfuse.randint(0, 9, (5,), generator=g).numpy(), x)
    # nn.init draws from it too
    k1 = mlfuse.nn.init.kaiming_uniform_(Tensor.zeros(4, 3), generator=g.manual_seed(1))
    k2 = mlfuse.nn.init.kaiming_uniform_(Tensor.zeros(4, 3), generator=g.manual_seed(1))
    close(k1, k2.numpy())
    assert np.abs(k1.numpy()).max() <= math.sqrt(2.0) * math.sqrt(3.0 / 3)  # relu gain, fan_in 3


def test_default_generator_is_the_global_stream():
    mlfuse.default_generator.manual_seed(11)
    a = mlfuse.rand(3).numpy()
    mlfuse.manual_seed(11)
    close(mlfuse.rand(3), a)
    assert mlfuse.default_generator.initial_seed() == 11
    s = mlfuse.get_rng_state()
    b = mlfuse.rand(2).numpy()
    mlfuse.default_generator.set_state(s)
    close(mlfuse.rand(2), b)
    with pytest.raises(TypeError, match="seed/generator must be an int or a mlfuse.Generator"):
        mlfuse.rand(2, generator="g")
    with pytest.raises(TypeError, match="Generator.manual_seed: seed must be an int"):
        mlfuse.Generator().manual_seed(1.5)
    with pytest.raises(ValueError, match="a state holds 37 bytes, got 3"):
        mlfuse.Generator().set_state(Tensor(np.zeros(3, np.uint8)))


def test_memory_formats_keep_values():
    a = RNG.standard_normal((2, 3, 4, 5))
    x = Tensor(a)
    y = x.contiguous(memory_format=mlfuse.channels_last)
    close(y, a)
    assert y.stride() == (60, 1, 15, 3)  # PyTorch's channels-last strides
    assert y.is_contiguous(memory_format=mlfuse.channels_last) and not y.is_contiguous()
    assert x.is_contiguous(memory_format=mlfuse.contiguous_format)
    assert not x.is_contiguous(memory_format=mlfuse.channels_last)
    close(x.to(memory_format=mlfuse.channels_last) * 2, 2 * a)
    assert x.clone(memory_format=mlfuse.channels_last).stride() == (60, 1, 15, 3)
    z = mlfuse.zeros_like(x, memory_format=mlfuse.preserve_format)
    assert z.shape == x.shape and not z.numpy().any()
    e = mlfuse.empty(2, 3, 4, 5, memory_format=mlfuse.channels_last, requires_grad=True)
    assert e.stride() == (60, 1, 15, 3) and e.is_leaf and e.requires_grad
    assert mlfuse.ones(2, layout=mlfuse.strided, pin_memory=False).layout is mlfuse.strided
    assert x.to("cpu", non_blocking=True) is x and x.to(copy=True) is not x
    assert pickle.loads(pickle.dumps(mlfuse.channels_last)) is mlfuse.channels_last
    assert not (x.is_sparse or x.is_quantized or x.is_meta or x.is_nested or x.is_mps)
    with pytest.raises(
        ValueError, match="contiguous: mlfuse.channels_last needs a tensor of 4 dims"
    ):
        Tensor.ones(2, 3).contiguous(memory_format=mlfuse.channels_last)
    with pytest.raises(TypeError, match="memory_format must be one of"):
        x.contiguous(memory_format="nhwc")
    with pytest.raises(TypeError, match="zeros\\(\\) got an unexpected keyword argument"):
        mlfuse.zeros(2, memory_format=mlfuse.contiguous_format)
    with pytest.raises(TypeError, match="ones: layout must be mlfuse.strided"):
        mlfuse.ones(2, layout="coo")


def test_storage_methods():
    y = Tensor(np.arange(6.0).reshape(2, 3))
    assert y.T.dim_order() == (1, 0) and y.dim_order() == (0, 1)
    assert y.data_ptr() == y.detach().data_ptr() != 0
    assert y[1:].data_ptr() - y.data_ptr() == 3 * 8  # a view starts inside its base
    assert Tensor.zeros(0).data_ptr() == 0
    assert y.share_memory_() is y and not y.is_shared() and y.output_nr == 0
    assert y.to_dense() is y and y.to_dense(mlfuse.float32).dtype == mlfuse.float32
    with pytest.raises(NotImplementedError, match="mlfuse has no sparse tensors"):
        y.to_sparse_csr()
    z = Tensor([1.0, 2.0, 3.0])
    assert z.resize_(2, 2) is z
    close(z, [[1.0, 2.0], [3.0, 0.0]])
    close(z.resize_((3,)), [1.0, 2.0, 3.0])
    close(Tensor([1.0]).resize_as_(Tensor.ones(2, 1)), [[1.0], [0.0]])
    a, b = Tensor([1.0, 2.0]), Tensor([5.0, 6.0, 7.0])
    a.set_(b)
    b.add_(1)
    close(a, [6.0, 7.0, 8.0])  # shares b's values
    a.mul_(2)
    close(b, [12.0, 14.0, 16.0])
    c, src = Tensor([0.0]), Tensor(np.arange(6.0))
    c.set_(src, 1, (2, 2), (2, 1))
    close(c, [[1.0, 2.0], [3.0, 4.0]])
    assert Tensor([1.0]).set_().shape == (0,)
    n = Tensor([1], dtype=mlfuse.int16)
    assert n.new(2, 3).shape == (2, 3) and n.new(2, 3).dtype == mlfuse.int16
    assert n.new([4, 5]).numpy().tolist() == [4, 5] and n.new().shape == (0,)
    assert n.new((4, 5)).numpy().tolist() == [4, 5]  # a tuple is data, a Size is sizes
    assert n.new(mlfuse.Size([4, 5])).shape == (4, 5)


def test_host_callbacks_and_post_accumulate_hooks():
    w = Tensor([1.0, 2.0])
    assert w.apply_(lambda v: v * 10) is w
    close(w, [10.0, 20.0])
    close(w.map_(Tensor([1.0, 3.0]), lambda u, v: u + v), [11.0, 23.0])
    close(w.map2_(Tensor([1.0, 1.0]), 2.0, lambda u, v, t: u * v * t), [22.0, 46.0])
    i = Tensor([1, 2])
    i.apply_(lambda v: v + 1)
    assert i.numpy().tolist() == [2, 3] and i.dtype == mlfuse.int64
    x = Tensor([1.0, 2.0], requires_grad=True)
    seen = []
    h = x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.numpy().copy()))
    (x * x).sum().backward()
    (x * 3).sum().backward()
    np.testing.assert_allclose(seen[0], [2.0, 4.0])
    np.testing.assert_allclose(seen[1], [5.0, 7.0])  # after accumulating
    h.remove()
    (x * x).sum().backward()
    assert len(seen) == 2
    with pytest.raises(RuntimeError, match="only leaf tensors that require grad"):
        (x * 2).register_post_accumulate_grad_hook(print)
