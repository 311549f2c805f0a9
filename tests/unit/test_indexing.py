"""Indexing with tensors through the gather primitive (``lazy.gather`` ->
``kernel.gather``): ``gather``, ``index_select``, numpy's advanced indexing
(integer tensors, lists and arrays broadcast together, bool masks), embedding
lookups, and the scatters (``__setitem__``, ``index_put``, ``scatter``) against
numpy float64 references; kernel counts; out-of-range indices (realized ones
raise at the call, lazy ones are clamped by the kernel); the IR the pipeline
makes. Runs on any device (``MLFUSE_DEVICE=cuda_sim`` included)."""

from __future__ import annotations

import numpy as np
import pytest

import mlfuse
import mlfuse.nn.functional as F
from mlfuse import Tensor, dtypes

F32, F64 = np.float32, np.float64
RNG = np.random.default_rng(7)


def r(*shape) -> np.ndarray:
    return RNG.standard_normal(shape).astype(F32)


def kernels(*ts: Tensor) -> int:
    return len(mlfuse.schedule(*ts))


def same(t: Tensor, want) -> None:
    got = t.numpy()
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(got, want)


def close(t: Tensor, want, rtol=1e-6, atol=1e-6) -> None:
    got = t.numpy()
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got.astype(F64), want.astype(F64), rtol=rtol, atol=atol)


def np_gather(a: np.ndarray, dim: int, idx: np.ndarray) -> np.ndarray:
    """torch.gather in numpy (index may be smaller than ``a`` off ``dim``)."""
    sl = tuple(slice(0, s) if k != dim else slice(None) for k, s in enumerate(idx.shape))
    return np.take_along_axis(a[sl], idx % a.shape[dim], axis=dim)


# ---------------------------------------------------------------------------
# gather / take_along_dim / index_select
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_gather_any_dim(dim):
    a = r(4, 5, 6)
    d = dim % 3
    shape = [3, 4, 5]
    shape[d] = 7
    idx = RNG.integers(-a.shape[d], a.shape[d], size=shape)
    out = Tensor(a).gather(dim, Tensor(idx))
    same(out, np_gather(a, d, idx))
    assert kernels(Tensor(a).gather(dim, Tensor(idx))) == 1


def test_gather_pytorch_spelling_and_take_along_dim():
    a = r(3, 4)
    idx = np.array([[0, 3], [1, 1], [2, 0]])
    same(Tensor(a).gather(dim=1, index=Tensor(idx)), np.take_along_axis(a, idx, 1))
    same(Tensor(a).take_along_dim(Tensor(idx), 1), np.take_along_axis(a, idx, 1))


def test_gather_non_contiguous_sources():
    a = r(6, 8)
    idx = RNG.integers(0, 6, size=(5, 6))
    x = Tensor(a)
    # a transpose, a strided slice and a flip are read in place (one kernel)
    for view, ref in (
        (x.T, a.T),
        (x[::2, 1::1], a[::2, 1:]),
        (x.flip(1), a[:, ::-1]),
    ):
        i = idx[: ref.shape[0] if ref.shape[0] < 5 else 5, : ref.shape[1] - 1] % ref.shape[0]
        out = view.gather(0, Tensor(i))
        assert kernels(out) == 1
        same(out, np_gather(ref, 0, i))
    # a padded source is stored first: one kernel more
    padded = x.pad(((1, 1), (0, 0)))
    i = idx % 8
    out = padded.gather(0, Tensor(i))
    assert kernels(out) == 2
    same(out, np_gather(np.pad(a, ((1, 1), (0, 0))), 0, i))


def test_gather_of_computed_source_and_consumers():
    a = r(5, 4)
    idx = np.array([[4, 0, 1, 2], [3, 3, 3, 3]])
    out = (Tensor(a) * 2 + 1).gather(0, Tensor(idx)).exp()
    assert kernels(out) == 2  # the source is stored, the gather fuses with exp
    close(out, np.exp(np_gather(a.astype(F64) * 2 + 1, 0, idx)), rtol=1e-5)


def test_gather_0d_and_empty():
    same(Tensor(3.5).gather(0, Tensor(np.array(0))), np.float32(3.5))
    same(Tensor(r(3, 4)).gather(1, Tensor(np.zeros((3, 0), np.int64))), np.zeros((3, 0), F32))
    same(Tensor(r(0, 4)).gather(0, Tensor(np.zeros((0, 2), np.int64))), np.zeros((0, 2), F32))


def test_gather_errors_at_the_call():
    x = Tensor(r(3, 4))
    with pytest.raises(ValueError, match=r"gather: index \(3,\) must have the rank"):
        x.gather(1, Tensor(np.array([0, 1, 2])))
    with pytest.raises(ValueError, match=r"larger than the input \(3, 4\) off dim 1"):
        x.gather(1, Tensor(np.zeros((4, 2), np.int64)))
    with pytest.raises(IndexError, match=r"index 4 is out of bounds for dim 1 with size 4"):
        x.gather(1, Tensor(np.array([[0, 4]])))
    with pytest.raises(IndexError, match=r"index -5 is out of bounds .*shape \(3, 4\)"):
        x.gather(1, Tensor(np.array([[-5]])))
    with pytest.raises(IndexError, match="must be integers, got float32"):
        x.gather(1, Tensor(np.zeros((1, 1), F32)))
    with pytest.raises(ValueError, match="dim 2 is out of range"):
        x.gather(2, Tensor(np.zeros((1, 1), np.int64)))


@pytest.mark.parametrize("dim", [0, 1])
def test_index_select(dim):
    a = r(4, 6)
    idx = np.array([3, -1, 0, 3])
    same(Tensor(a).index_select(dim, Tensor(idx)), np.take(a, idx, axis=dim))
    with pytest.raises(ValueError, match=r"index must be 0-d or 1-d, got \(2, 2\)"):
        Tensor(a).index_select(dim, Tensor(idx.reshape(2, 2)))


@pytest.mark.parametrize(
    "dt", [np.float16, np.float64, np.int8, np.uint8, np.int16, np.int32, np.int64, np.bool_]
)
@pytest.mark.parametrize("it", [np.int8, np.uint8, np.int16, np.int32, np.int64])
def test_gather_dtypes(dt, it):
    a = (RNG.standard_normal((5, 3)) * 40).astype(dt)
    idx = np.array([4, 0, 2, 2], dtype=it)
    same(Tensor(a)[Tensor(idx)], a[idx])


def test_gather_bfloat16():
    a = r(5, 3)
    x = Tensor(a).cast(dtypes.bfloat16)
    idx = np.array([1, 4, 0])
    got = x[Tensor(idx)]
    assert got.dtype == dtypes.bfloat16
    same(got, x.numpy()[idx])


# ---------------------------------------------------------------------------
# advanced indexing
# ---------------------------------------------------------------------------

CASES = [
    lambda i: (i,),
    lambda i: (slice(None), i),
    lambda i: (i, slice(1, None)),
    lambda i: (slice(None), slice(None), i),
    lambda i: (Ellipsis, i),
    lambda i: (None, i),
    lambda i: (1, slice(None), i),  # an int selects first (PyTorch; numpy counts it too)
    lambda i: (slice(None), i, 2),
]


@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("kind", ["tensor", "list", "array"])
def test_one_index_array(case, kind):
    a = r(4, 5, 6)
    raw = np.array([[3, 0], [-1, 2]])
    ix = {"tensor": Tensor(raw), "list": raw.tolist(), "array": raw}[kind]
    # PyTorch applies the int first: a[1][:, raw] (numpy's a[1, :, raw] is (2, 2, 5))
    want = a[1][:, raw] if case == 6 else a[CASES[case](raw)]
    same(Tensor(a)[CASES[case](ix)], want)


def test_ints_select_before_the_advanced_indices_are_placed():
    """PyTorch's rule: x[1, :, idx] is x[1][:, idx], the index's dims where it
    stands; numpy would count the 1 as a second advanced index, non-adjacent,
    and put the index's dims first. A tuple inside the index is a sequence."""
    a = r(2, 5, 6, 4)
    i = np.array([[0, 3], [5, 1]])
    same(Tensor(a)[1, :, Tensor(i)], a[1][:, i])
    same(Tensor(a)[Tensor(i[:, :1] % 2), 2, Tensor(i % 4)], a[:, 2][i[:, :1] % 2, i % 4])
    same(Tensor(a)[(1, 0), :, 2], a[[1, 0], :, 2])
    same(Tensor(a)[((0,),)], a[[0]])


def test_several_index_arrays_broadcast():
    a = r(4, 5, 6)
    i = np.array([[0], [3], [-1]])
    j = np.array([1, 4])
    k = np.array([5, 0])
    x = Tensor(a)
    same(x[Tensor(i), Tensor(j)], a[i, j])  # adjacent: in place
    same(x[:, Tensor(j), Tensor(k)], a[:, j, k])
    same(x[Tensor(i), :, Tensor(j)], a[i, :, j])  # non-adjacent: broadcast dims first
    same(x[Tensor(i), Tensor(j), Tensor(k)], a[i, j, k])
    same(x[[0, 2], 1:3, [5, 4]], a[[0, 2], 1:3, [5, 4]])
    with pytest.raises(IndexError, match="could not be broadcast together"):
        x[Tensor(np.array([0, 1])), Tensor(np.array([0, 1, 2]))]


def test_zero_d_and_empty_indices():
    a = r(4, 5)
    x = Tensor(a)
    same(x[Tensor(np.array(2))], a[np.array(2)])
    same(x[Tensor(np.array(2)), Tensor(np.array(-1))], a[np.array(2), np.array(-1)])
    same(x[[]], a[np.array([], np.int64)])
    same(x[:, []], a[:, np.array([], np.int64)])
    with pytest.raises(IndexError, match="dim 0 of size 0"):
        Tensor(np.zeros((0, 3), F32))[Tensor(np.array([0]))]


def test_bool_masks():
    a = r(4, 5)
    x = Tensor(a)
    m = a > 0
    same(x[x > 0], a[m])
    same(x[m], a[m])
    same(x[m[:, 0]], a[m[:, 0]])
    same(x[:, m[0].tolist()], a[:, m[0]])
    same((x * 2)[(x * 2) < 0.5], (a * 2)[(a * 2) < 0.5])


def test_bad_indices_raise_at_the_call():
    x = Tensor(r(4, 5))
    with pytest.raises(IndexError, match=r"index 4 is out of bounds for dim 0 with size 4"):
        x[Tensor(np.array([0, 4]))]
    with pytest.raises(IndexError, match=r"index -6 is out of bounds for dim 1 with size 5"):
        x[:, [-6]]
    with pytest.raises(IndexError, match="must be integers"):
        x[np.array([0.5])]
    with pytest.raises(IndexError, match="too many indices"):
        x[[0], [0], [0]]
    with pytest.raises(TypeError, match="unsupported index"):
        x["a"]


@pytest.mark.parametrize(
    "index",
    [True, False, (0, True), (Ellipsis, False), (None, True, ..., 0), (slice(1, None), False, 2)],
    ids=["true", "false", "int-true", "ellipsis-false", "none-true-ellipsis", "slice-false-int"],
)
def test_bool_scalar_index_adds_a_dim_as_numpy(index):
    a = r(4, 5)
    out = Tensor(a)[index]
    expected = a[index]
    assert out.shape == expected.shape
    np.testing.assert_array_equal(out.numpy(), expected)


def test_bool_scalar_index_writes_through():
    a = r(4, 5)
    x = Tensor(a.copy())
    x[True] = 5.0
    x[False] = 7.0  # selects nothing
    x[1, True, 2] = -1.0
    expected = np.full_like(a, 5.0)
    expected[1, 2] = -1.0
    np.testing.assert_array_equal(x.numpy(), expected)


def test_lazy_indices_wrap_once_then_clamp():
    a = r(6, 3)
    raw = np.array([1, -1, -6, 7, -9, 100])
    lazy = Tensor(raw) + 0  # computed: not checked on the host
    assert not lazy.node.realized
    want = a[np.clip(np.where(raw < 0, raw + 6, raw), 0, 5)]
    same(Tensor(a)[lazy], want)
    assert kernels(Tensor(a)[lazy]) == 1


def test_fusion_one_kernel():
    a = r(10, 8)
    x = Tensor(a)
    idx = Tensor(np.array([3, 1, 9, 9]))
    y = x[idx] * 2 + 1
    assert kernels(y) == 1
    close(y, a[[3, 1, 9, 9]].astype(F64) * 2 + 1)
    # the index computation fuses too
    z = x[(idx + 1) % 10]
    assert kernels(z) == 1
    same(z, a[[4, 2, 0, 0]])
    # and a reduction of the gathered rows
    s = x[idx].sum(1)
    assert kernels(s) == 1
    close(s, a[[3, 1, 9, 9]].astype(F64).sum(1), rtol=1e-5)


def test_embedding_is_one_kernel():
    w = r(50, 16)
    ids = RNG.integers(0, 50, size=(3, 7))
    out = F.embedding(Tensor(ids), Tensor(w))
    same(out, w[ids])
    y = (F.embedding(Tensor(ids), Tensor(w)) * 0.5).relu()
    assert kernels(y) == 1
    close(y, np.maximum(w[ids].astype(F64) * 0.5, 0))


def test_large_gather_is_not_quadratic():
    # one-hot selection would be 1e5 x 1e5 compares; the gather reads 1e5 elements
    n = 100_000
    a = RNG.standard_normal(n).astype(F32)
    idx = RNG.integers(0, n, size=n)
    same(Tensor(a)[Tensor(idx)], a[idx])


# ---------------------------------------------------------------------------
# setitem / index_put / scatter
# ---------------------------------------------------------------------------


def test_setitem_basic_writes_through():
    a = r(4, 5)
    x = Tensor(a.copy())
    x[1] = 7.0
    x[2:, ::2] = Tensor(np.ones((2, 3), F32))
    want = a.copy()
    want[1] = 7.0
    want[2:, ::2] = 1.0
    same(x, want)


def test_setitem_advanced_last_write_wins():
    a = r(5, 3)
    x = Tensor(a.copy())
    vals = r(4, 3)
    x[[0, 2, 0, -1]] = Tensor(vals)
    want = a.copy()
    for k, i in enumerate([0, 2, 0, -1]):
        want[i] = vals[k]
    same(x, want)
    y = Tensor(a.copy())
    y[Tensor(np.array([1, 3])), Tensor(np.array([2, 0]))] = 5.0
    want = a.copy()
    want[[1, 3], [2, 0]] = 5.0
    same(y, want)
    z = Tensor(a.copy())
    z[z > 0] = 0.0
    same(z, np.where(a > 0, 0, a).astype(F32))


def test_index_put_accumulate():
    a = r(6, 2)
    idx = np.array([1, 4, 1, 1, 0])
    vals = r(5, 2)
    out = Tensor(a).index_put((Tensor(idx),), Tensor(vals), accumulate=True)
    want = a.astype(F64)
    np.add.at(want, idx, vals.astype(F64))
    close(out, want, rtol=1e-5)
    out = Tensor(a).index_put((Tensor(idx),), Tensor(vals))
    want = a.copy()
    want[idx] = vals  # numpy: the last write wins here too
    same(out, want)
    x = Tensor(a.copy())
    x.index_put_((Tensor(idx),), Tensor(vals), accumulate=True)
    want = a.astype(F64)
    np.add.at(want, idx, vals.astype(F64))
    close(x, want, rtol=1e-5)


def test_scatter_and_scatter_add():
    a = r(3, 5)
    idx = np.array([[0, 4, 4], [1, 1, 2]])
    src = r(2, 3)
    want = a.copy()
    for i in range(2):
        for j in range(3):
            want[i, idx[i, j]] = src[i, j]
    same(Tensor(a).scatter(1, Tensor(idx), Tensor(src)), want)
    want = a.astype(F64)
    for i in range(2):
        for j in range(3):
            want[i, idx[i, j]] += src[i, j]
    close(Tensor(a).scatter_add(1, Tensor(idx), Tensor(src)), want, rtol=1e-5)
    counts = Tensor(np.zeros(4, F32)).scatter_add(0, Tensor(np.array([3, 3, 0, 3])), 1.0)
    same(counts, np.array([1, 0, 0, 3], F32))
    with pytest.raises(IndexError, match="index 5 is out of bounds for dim 1 with size 5"):
        Tensor(a).scatter(1, Tensor(np.array([[5]])), 1.0)


def test_a_mask_must_have_the_shape_of_the_dims_it_indexes():
    x = Tensor(r(2, 3, 4))
    with pytest.raises(IndexError, match=r"the shape of the mask \(3,\) at index 0"):
        x[[True, False, True]]
    with pytest.raises(IndexError, match=r"mask \(2,\) at index 2 does not match"):
        x[..., Tensor([True, False])]
    same(x[:, Tensor([True, False, True])], x.numpy()[:, [True, False, True]])


def test_written_numbers_keep_their_precision_and_dtype_rules():
    # a Python float goes into float64 exactly, not through float32
    x = mlfuse.zeros(4, dtype=mlfuse.float64)
    x[0] = 0.1
    x[1:3] = [0.2, 0.3]
    x[Tensor([3])] = 0.7
    assert x.numpy().tolist() == [0.1, 0.2, 0.3, 0.7]
    # a float into an integer tensor truncates, an integer out of range is refused
    y = mlfuse.zeros(3, dtype=mlfuse.int32)
    y[0], y[1], y[2] = -1.7, 5, np.float32(2.9)
    assert y.numpy().tolist() == [-1, 5, 2]
    with pytest.raises(OverflowError, match="300 does not fit in uint8"):
        mlfuse.zeros(2, dtype=mlfuse.uint8)[0] = 300
    # past float16's range: inf, as PyTorch
    h = mlfuse.zeros(2, dtype=mlfuse.float16)
    h[0] = 70000.0
    assert h.numpy()[0] == np.inf


def test_written_values_may_carry_leading_unit_dims():
    y = mlfuse.zeros(2, 3)
    y[0] = mlfuse.ones(1, 1, 3)
    y[Tensor([1])] = mlfuse.ones(1, 1, 3) * 2
    np.testing.assert_array_equal(y.numpy(), [[1, 1, 1], [2, 2, 2]])
    with pytest.raises(ValueError, match=r"cannot broadcast \(2, 3\) to \(3,\)"):
        y[0] = mlfuse.ones(2, 3)
