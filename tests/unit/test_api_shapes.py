"""The shape, creation and conversion names of the tensor API against numpy
(and PyTorch where it is installed): cat/stack/split/chunk, repeat/tile,
triangles, roll, pads in PyTorch's flat form and its modes, the creation
functions and manual_seed, Python conversions and repr, kernel counts and the
errors raised at the call."""

from __future__ import annotations

import numpy as np
import pytest

import mlfuse
from mlfuse import Tensor

F32, F64 = np.float32, np.float64
RNG = np.random.default_rng(11)


def r(*shape) -> np.ndarray:
    return RNG.standard_normal(shape).astype(F32)


def kernels(*ts: Tensor) -> int:
    return len(mlfuse.schedule(*ts))


def same(t: Tensor, want, dtype=None):
    got = t.numpy()
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(got, want)
    if dtype is not None:
        assert t.dtype == dtype


# ---------------------------------------------------------------------------
# cat / stack / split / chunk
# ---------------------------------------------------------------------------


def test_cat_module_function_and_method():
    a, b = r(3, 4, 5), r(3, 2, 5)
    same(mlfuse.cat([Tensor(a), Tensor(b)], 1), np.concatenate([a, b], 1))
    same(mlfuse.cat((Tensor(a), Tensor(b)), dim=-2), np.concatenate([a, b], -2))
    same(Tensor(a).cat(Tensor(b), Tensor(b), dim=1), np.concatenate([a, b, b], 1))
    same(mlfuse.cat([Tensor(a)]), a)
    z = np.zeros((3, 0, 5), F32)
    same(mlfuse.cat([Tensor(z), Tensor(a), Tensor(z)], 1), a)
    same(mlfuse.cat([Tensor(z), Tensor(z)], 1), np.zeros((3, 0, 5)))
    mixed = mlfuse.cat([Tensor(np.arange(3)), Tensor(np.ones(2, F32))])
    same(mixed, [0, 1, 2, 1, 1], dtype=mlfuse.float32)  # dtypes promote


def test_cat_of_non_contiguous_inputs():
    a = r(4, 6)
    t = Tensor(a)
    same(mlfuse.cat([t.T, t[:, ::2].T], 0), np.concatenate([a.T, a[:, ::2].T], 0))
    same(
        mlfuse.cat([t[:1].expand(3, 6), t.flip(0)], 0),
        np.concatenate([np.broadcast_to(a[:1], (3, 6)), a[::-1]]),
    )


def test_cat_of_two_elementwise_results_is_one_kernel():
    a, b = Tensor(r(4, 6)).realize(), Tensor(r(4, 3)).realize()
    out = mlfuse.cat([a.exp(), b * 2 + 1], dim=1)
    assert kernels(out) == 1
    np.testing.assert_allclose(
        out.numpy(), np.concatenate([np.exp(a.numpy()), b.numpy() * 2 + 1], 1), rtol=1e-6
    )
    assert kernels(mlfuse.stack([a.sin(), a + 1, a * a], dim=-1)) == 1


def test_stack():
    a, b = r(2, 3), r(2, 3)
    for d in (0, 1, 2, -1, -3):
        same(mlfuse.stack([Tensor(a), Tensor(b)], d), np.stack([a, b], d))
    same(Tensor(a).stack(Tensor(b), dim=1), np.stack([a, b], 1))
    same(mlfuse.stack([Tensor(np.float32(1)), Tensor(np.float32(2))]), [1.0, 2.0])


@pytest.mark.parametrize(
    "args", [(2,), (2, 1), ([1, 3], 1), (3, -1), ([2, 0, 3], 2), (10, 0), (1, 0)]
)
def test_split_matches_torch_semantics(args):
    x = r(3, 4, 5)
    pieces = Tensor(x).split(*args)
    size, dim = args[0], args[1] if len(args) > 1 else 0
    n = x.shape[dim]
    bounds = np.cumsum(size)[:-1] if isinstance(size, list) else list(range(size, n, size))
    want = np.split(x, bounds, axis=dim)
    assert len(pieces) == len(want)
    for p, w in zip(pieces, want):
        same(p, w)


@pytest.mark.parametrize("chunks,dim", [(2, 0), (3, 1), (4, 2), (5, 2), (6, 1), (1, 0)])
def test_chunk_gives_torch_piece_counts(chunks, dim):
    x = r(3, 4, 5)
    n = x.shape[dim]
    step = -(-n // chunks)
    want = np.split(x, list(range(step, n, step)), axis=dim)
    got = Tensor(x).chunk(chunks, dim)
    assert [p.shape for p in got] == [w.shape for w in want]
    for p, w in zip(got, want):
        same(p, w)


def test_split_chunk_narrow_errors():
    t = Tensor(r(3, 4))
    with pytest.raises(ValueError, match=r"split: sizes \[1, 1\] do not add up to dim 1"):
        t.split([1, 1], 1)
    with pytest.raises(ValueError, match="split_size must be positive"):
        t.split(0)
    with pytest.raises(ValueError, match="chunks must be a positive int"):
        t.chunk(0)
    with pytest.raises(IndexError, match=r"narrow: \[2, 5\) is out of range for dim 1 of size 4"):
        t.narrow(1, 2, 3)
    with pytest.raises(ValueError, match="cat needs at least one tensor"):
        mlfuse.cat([])
    with pytest.raises(ValueError, match=r"cat: shapes \(3, 4\) and \(2, 4\) differ outside dim 1"):
        mlfuse.cat([t, Tensor(r(2, 4))], 1)
    with pytest.raises(ValueError, match="zero-dimensional tensors cannot be concatenated"):
        mlfuse.cat([Tensor(np.float32(1))])
    with pytest.raises(TypeError, match="cat: expected Tensors, got ndarray"):
        mlfuse.cat([t, np.ones((3, 4))])
    with pytest.raises(ValueError, match="stack: every tensor must have one shape"):
        mlfuse.stack([t, t.T])


# ---------------------------------------------------------------------------
# repeat / tile / repeat_interleave / triangles / roll
# ---------------------------------------------------------------------------


def test_repeat_tile_repeat_interleave():
    x = r(2, 3)
    t = Tensor(x)
    same(t.repeat(2, 3), np.tile(x, (2, 3)))
    same(t.repeat((1, 2)), np.tile(x, (1, 2)))
    same(t.repeat(2, 1, 1), np.tile(x, (2, 1, 1)))  # extra leading sizes add dims
    same(t.repeat(0, 1), np.zeros((0, 3)))
    same(t.tile(2), np.tile(x, 2))
    same(t.tile((3, 1, 2)), np.tile(x, (3, 1, 2)))
    same(t.T.repeat(1, 2), np.tile(x.T, (1, 2)))
    same(t.repeat_interleave(2, dim=1), np.repeat(x, 2, axis=1))
    same(t.repeat_interleave(3), np.repeat(x, 3))
    same(t.repeat_interleave(2, -2), np.repeat(x, 2, axis=0))
    with pytest.raises(ValueError, match="repeat: 1 sizes for a tensor of 2 dims"):
        t.repeat(2)
    with pytest.raises(ValueError, match="repeats must be an int >= 0"):
        t.repeat_interleave(-1)
    a = Tensor(x).realize()
    assert kernels(a.repeat(2, 2) + 1) == 1
    assert kernels(a.repeat_interleave(2, 0) * 2) == 1


@pytest.mark.parametrize("k", [0, 1, -1, 3, -4])
def test_tril_triu(k):
    x = r(2, 4, 5)
    same(Tensor(x).tril(k), np.tril(x, k))
    same(Tensor(x).triu(diagonal=k), np.triu(x, k))
    same(Tensor(x).T.tril(k), np.tril(x.T, k))


def test_tril_triu_fuse_and_refuse_1d():
    a = Tensor(r(5, 5)).realize()
    assert kernels(a.tril() + a.triu(1)) == 1
    with pytest.raises(ValueError, match=r"tril needs at least 2 dims, got \(5,\)"):
        Tensor(r(5)).tril()


def test_roll():
    x = r(3, 4, 5)
    t = Tensor(x)
    same(t.roll(1, 0), np.roll(x, 1, 0))
    same(t.roll((1, -2), (0, 2)), np.roll(x, (1, -2), (0, 2)))
    same(t.roll(7), np.roll(x, 7))
    same(t.roll(13, dims=1), np.roll(x, 13, 1))
    same(t.roll(-5, dims=-1), x)
    same(Tensor(np.zeros((0, 3), F32)).roll(2, 1), np.zeros((0, 3)))
    assert kernels(Tensor(x).realize().roll(2, 1) * 2) == 1
    with pytest.raises(ValueError, match="roll: 2 shifts for 1 dims"):
        t.roll((1, 2), 0)


# ---------------------------------------------------------------------------
# dims: unflatten / movedim / swapaxes / squeeze / flip / t / mT / *_as
# ---------------------------------------------------------------------------


def test_dim_rearrangements():
    x = r(2, 3, 4)
    t = Tensor(x)
    same(t.unflatten(2, (2, 2)), x.reshape(2, 3, 2, 2))
    same(t.unflatten(-1, (-1, 1)), x.reshape(2, 3, 4, 1))
    same(t.movedim(0, -1), np.moveaxis(x, 0, -1))
    same(t.movedim((0, 1), (2, 0)), np.moveaxis(x, (0, 1), (2, 0)))
    same(t.moveaxis(2, 0), np.moveaxis(x, 2, 0))
    same(t.swapaxes(0, 2), np.swapaxes(x, 0, 2))
    same(t.swapdims(-1, 1), np.swapaxes(x, -1, 1))
    same(t.mT, np.swapaxes(x, -1, -2))
    same(Tensor(x[0]).t(), x[0].T)
    same(Tensor(x[0, 0]).t(), x[0, 0])
    same(t.narrow(-1, -2, 2), x[..., -2:])
    same(Tensor(x[:, :1]).expand_as(t), np.broadcast_to(x[:, :1], x.shape))
    same(t.view_as(Tensor(np.zeros((6, 4)))), x.reshape(6, 4))
    same(t.reshape_as(Tensor(np.zeros((4, 6)))), x.reshape(4, 6))
    with pytest.raises(ValueError, match=r"unflatten: sizes \(3, 2\) do not multiply to 4"):
        t.unflatten(2, (3, 2))
    with pytest.raises(ValueError, match="t\\(\\) needs at most 2 dims"):
        t.t()
    with pytest.raises(ValueError, match="movedim: 2 sources for 1 destinations"):
        t.movedim((0, 1), 2)


def test_squeeze_with_a_tuple_and_flip_with_dims():
    x = r(1, 3, 1, 2)
    t = Tensor(x)
    same(t.squeeze((0, 2)), x.reshape(3, 2))
    same(t.squeeze((0, 1)), x.reshape(3, 1, 2))  # a listed dim that is not 1 stays
    same(t.squeeze(1), x)
    same(t.squeeze(-2), x.reshape(1, 3, 2))
    same(t.squeeze(), x.reshape(3, 2))
    same(Tensor(np.float32(2)).squeeze(0), np.float32(2))
    y = r(3, 4, 5)
    same(Tensor(y).flip(dims=(0, 2)), y[::-1, :, ::-1])
    same(Tensor(y).flip(1), y[:, ::-1])
    same(Tensor(y).flip((-1,)), y[..., ::-1])
    with pytest.raises(TypeError, match="flip: give the dims to reverse once"):
        Tensor(y).flip(0, dims=1)
    with pytest.raises(ValueError, match="3 is out of range for a tensor of 3 dims"):
        Tensor(y).squeeze((0, 3))


def test_one_hot():
    lab = np.array([[0, 2], [1, 4]], np.int64)
    same(Tensor(lab).one_hot(5), np.eye(5, dtype=np.int64)[lab], dtype=mlfuse.int64)
    same(Tensor(lab).one_hot(), np.eye(5, dtype=np.int64)[lab])  # -1: max + 1
    same(Tensor(np.array([1, 0], np.int32)).one_hot(3), [[0, 1, 0], [1, 0, 0]])
    assert kernels(Tensor(lab).realize().one_hot(6)) == 1
    with pytest.raises(TypeError, match="one_hot needs an integer tensor, got float32"):
        Tensor(r(3)).one_hot(3)


# ---------------------------------------------------------------------------
# pad: PyTorch's flat form, negative amounts and the modes
# ---------------------------------------------------------------------------


def test_pad_flat_form_starts_at_the_last_dim():
    x = r(2, 3, 4)
    t = Tensor(x)
    same(t.pad((1, 1, 2, 0)), np.pad(x, ((0, 0), (2, 0), (1, 1))))
    same(t.pad((1, 2), value=3.0), np.pad(x, ((0, 0), (0, 0), (1, 2)), constant_values=3.0))
    same(t.pad((0, 0, 0, 0, 1, 1)), np.pad(x, ((1, 1), (0, 0), (0, 0))))
    same(t.pad(((0, 0), (1, 1), (2, 2))), np.pad(x, ((0, 0), (1, 1), (2, 2))))  # pairs form
    same(t.pad((-1, 1)), np.pad(x[..., 1:], ((0, 0), (0, 0), (0, 1))))  # negative crops
    same(t.pad((-1, -2, 1, 0)), np.pad(x[..., 1:-2], ((0, 0), (1, 0), (0, 0))))
    same(Tensor(np.array([1, 2], np.int32)).pad((1, 0), value=7), [7, 1, 2])


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_pad_modes_match_numpy(mode):
    x = r(2, 3, 4, 5)
    np_mode = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}[mode]
    for amounts in ((2, 1), (2, 1, 1, 2), (3, 3, 2, 2)):
        pairs = [(0, 0)] * (4 - len(amounts) // 2) + [
            (amounts[2 * i], amounts[2 * i + 1]) for i in range(len(amounts) // 2)
        ][::-1]
        same(Tensor(x).pad(amounts, mode=mode), np.pad(x, pairs, mode=np_mode))
    assert kernels(Tensor(x).realize().pad((2, 2, 1, 1), mode=mode) + 1) == 1


def test_pad_against_torch():
    torch = pytest.importorskip("torch")
    x = r(2, 3, 5, 6)
    for mode in ("constant", "reflect", "replicate", "circular"):
        want = torch.nn.functional.pad(torch.tensor(x), (2, 1, 1, 3), mode=mode).numpy()
        same(Tensor(x).pad((2, 1, 1, 3), mode=mode), want)


def test_pad_errors():
    t = Tensor(r(2, 3))
    with pytest.raises(ValueError, match="the flat form needs an even number of amounts"):
        t.pad((1, 2, 3))
    with pytest.raises(
        ValueError, match="reflect padding \\(3, 0\\) must be below the dim's size 3"
    ):
        t.pad((3, 0), mode="reflect")
    with pytest.raises(ValueError, match="mode must be 'constant', 'reflect'"):
        t.pad((1, 1), mode="mirror")
    with pytest.raises(ValueError, match="crop more than the dims"):
        t.pad((-2, -2))


# ---------------------------------------------------------------------------
# creation
# ---------------------------------------------------------------------------


def test_creation_shapes_and_values():
    for make in (
        lambda: Tensor.zeros((2, 3)),
        lambda: Tensor.zeros(2, 3),
        lambda: Tensor.zeros([2, 3]),
    ):
        same(make(), np.zeros((2, 3)), dtype=mlfuse.float32)
    same(Tensor.ones(2, 3), np.ones((2, 3)))
    same(Tensor.full((2,), 7), [7, 7], dtype=mlfuse.int64)
    same(Tensor.full((2, 1), 1.5), [[1.5], [1.5]], dtype=mlfuse.float32)
    same(Tensor.full((1,), True), [True], dtype=mlfuse.bool_)
    same(Tensor.eye(3), np.eye(3))
    same(Tensor.eye(2, 4), np.eye(2, 4))
    e = Tensor.empty(2, 3)
    assert e.shape == (2, 3) and e.dtype == mlfuse.float32
    assert Tensor.empty((4,), dtype=mlfuse.int32).dtype == mlfuse.int32
    x = Tensor(r(2, 3))
    same(Tensor.full_like(x, 2), np.full((2, 3), 2.0))
    same(Tensor.zeros_like(x), np.zeros((2, 3)))
    same(Tensor.ones_like(x, dtype=mlfuse.int32), np.ones((2, 3), np.int32))


def test_linspace_logspace():
    np.testing.assert_allclose(Tensor.linspace(0, 1, 5).numpy(), np.linspace(0, 1, 5))
    np.testing.assert_allclose(Tensor.linspace(2, -3, 7).numpy(), np.linspace(2, -3, 7), rtol=1e-6)
    same(Tensor.linspace(2, 3, 1), [2.0])
    same(Tensor.linspace(2, 3, 0), np.zeros(0))
    same(Tensor.linspace(0, 10, 6, dtype=mlfuse.int64), [0, 2, 4, 6, 8, 10])
    np.testing.assert_allclose(Tensor.logspace(0, 3, 4).numpy(), [1, 10, 100, 1000])
    np.testing.assert_allclose(Tensor.logspace(0, 4, 5, base=2).numpy(), [1, 2, 4, 8, 16])
    with pytest.raises(ValueError, match="linspace: steps must be a non-negative int"):
        Tensor.linspace(0, 1, -1)


def test_manual_seed_drives_every_unseeded_random_call():
    def draw():
        return [
            Tensor.randn(3).numpy(), Tensor.rand(2).numpy(),
            Tensor.uniform(2, low=-1, high=1).numpy(), Tensor.randint(0, 10, (4,)).numpy(),
        ]  # fmt: skip

    mlfuse.manual_seed(5)
    a = draw()
    mlfuse.manual_seed(5)
    b = draw()
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)
    assert not np.array_equal(draw()[0], a[0])  # the generator moves on
    np.testing.assert_array_equal(Tensor.randn(3, seed=1).numpy(), Tensor.randn(3, seed=1).numpy())


def test_randint_and_like_functions():
    v = Tensor.randint(-3, 4, (2000,))
    assert v.dtype == mlfuse.int64
    got = v.numpy()
    assert got.min() == -3 and got.max() == 3
    w = Tensor.randint(5, size=(3, 2)).numpy()
    assert w.shape == (3, 2) and (0 <= w).all() and (w < 5).all()
    x = Tensor.zeros(4, 5, dtype=mlfuse.float64)
    assert Tensor.randn_like(x).shape == (4, 5) and Tensor.randn_like(x).dtype == mlfuse.float64
    u = Tensor.rand_like(x).numpy()
    assert ((0 <= u) & (u < 1)).all()
    with pytest.raises(ValueError, match=r"randint: high \(2\) must be above low \(2\)"):
        Tensor.randint(2, 2, (3,))
    # tinygrad's spelling: the shape first, low/high keywords (0 and 10 by default)
    t = Tensor.randint(40, 50).numpy()
    assert t.shape == (40, 50) and t.min() == 0 and t.max() == 9
    t = Tensor.randint((300,), low=-2, high=0).numpy()
    assert t.shape == (300,) and set(t.tolist()) == {-2, -1}
    for bad in [(-3, 2), ((2, -3),), ((2, -3, 0),)]:
        with pytest.raises(ValueError, match="negative dimension"):
            Tensor.randint(*bad)
    with pytest.raises(TypeError, match="randint: high must be an int, got 1.5"):
        Tensor.randint(1.5, size=(2,))


@pytest.mark.parametrize("dt", [mlfuse.float16, mlfuse.bfloat16, mlfuse.float32])
def test_rand_and_uniform_stay_below_their_upper_bound(dt):
    # a float64 draw within half an ulp of 1 rounds to 1 in a narrow dtype (one in
    # 4096 for float16): draws are multiples of the dtype's precision instead
    x = Tensor.rand(2, 128, 128, dtype=dt, seed=0).float().numpy()
    assert x.max() < 1 and (x == 0).any() == (dt != mlfuse.float32)
    spacing = {mlfuse.float16: 2.0**-11, mlfuse.bfloat16: 2.0**-8, mlfuse.float32: 2.0**-24}[dt]
    assert np.all(np.mod(x.astype(np.float64), spacing) == 0)
    assert abs(x.mean() - 0.5) < 0.01
    u = Tensor.uniform(4, 8192, low=-1.0, high=1.0, dtype=dt, seed=1).float().numpy()
    assert u.min() >= -1 and u.max() < 1 and abs(u.mean()) < 0.02
    # a range narrower than the dtype's spacing at high: still below high
    v = Tensor.uniform(1000, low=1000.0, high=1000.5, dtype=mlfuse.float16).numpy()
    assert (v < 1000.5).all() and (v >= 1000.0).all()


def test_uniform_of_integers_and_bad_ranges():
    # an integer dtype floors (randint's distribution: no doubled 0 from truncation)
    u = Tensor.uniform(200_000, low=-100, high=100, dtype=mlfuse.int32, seed=2).numpy()
    assert u.min() == -100 and u.max() == 99
    counts = np.bincount(u + 100)
    assert counts.min() > 0.8 * 1000 and counts.max() < 1.2 * 1000
    np.testing.assert_array_equal(Tensor.uniform(3, low=2.0, high=2.0).numpy(), [2.0] * 3)
    with pytest.raises(ValueError, match=r"uniform: low \(3.0\) must not be above high \(2.0\)"):
        Tensor.uniform(3, low=3.0, high=2.0)
    with pytest.raises(TypeError, match="rand: dtype must be floating point, got int32"):
        Tensor.rand(3, dtype=mlfuse.int32)


# ---------------------------------------------------------------------------
# Python conversions and repr
# ---------------------------------------------------------------------------


def test_python_conversions_of_one_element():
    assert float(Tensor([2.5])) == 2.5
    assert int(Tensor([[3.9]])) == 3
    assert int(Tensor(np.float32(-3.9))) == -3  # truncates, as Python
    assert bool(Tensor([0.0])) is False and bool(Tensor(np.int32(2))) is True
    assert list(range(10))[Tensor(np.int64(3))] == 3
    assert range(Tensor(np.int32(4))) == range(4)
    with pytest.raises(ValueError, match="needs exactly one element, the tensor has 2"):
        float(Tensor([1.0, 2.0]))
    with pytest.raises(ValueError, match="needs exactly one element"):
        int(Tensor(np.zeros(0, np.int32)))
    with pytest.raises(TypeError, match="ambiguous"):
        bool(Tensor([1.0, 2.0]))
    with pytest.raises(TypeError, match="only integer tensors of one element"):
        list(range(10))[Tensor(3.0)]


def test_repr_shows_values_once_realized_and_never_computes_lazy_ones():
    x = Tensor(np.array([[1.0, 2.5]], F32))
    lazy = x + 1
    text = repr(lazy)
    assert text.startswith("<Tensor (1, 2) float32") and "lazy" in text
    assert not lazy.node.realized  # repr did not compute it
    lazy.realize()
    shown = repr(lazy)
    assert shown.startswith("tensor(") and "2." in shown and "3.5" in shown
    assert "dtype=float32" in shown
    big = repr(Tensor(np.arange(5000, dtype=F32)).realize())
    assert "..." in big and len(big) < 400
    assert "dtype=int64" in repr(Tensor(np.array([1, 2])).realize())
