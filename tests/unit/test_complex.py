"""Complex tensors (pairs of real tensors) against numpy's complex128 arithmetic."""

import copy
import pickle
import warnings

import numpy as np
import pytest

import mlfuse
from mlfuse import ComplexTensor
from mlfuse.errors import ArgumentError, DTypeError

RNG = np.random.default_rng(7)
A = (RNG.standard_normal(24) + 1j * RNG.standard_normal(24)) * 2
A[:5] = [
    complex(-4, 0.0),
    complex(-4, -0.0),
    0j,
    1e-30 + 1e-30j,
    3e30 - 4e30j,
]  # branch cut, zero, tiny, huge
B = RNG.standard_normal(24) + 1j * RNG.standard_normal(24)


def close(got, want, tol=1e-13):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape
    scale = np.maximum(np.abs(want), 1e-300)
    with np.errstate(invalid="ignore"):
        err = np.abs(got - want) / scale
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert np.nanmax(err, initial=0) <= tol, np.nanmax(err)


def _mm(x, y):
    return x.reshape(4, 6) @ y.reshape(6, 4)


def _ein(lib, x, y):
    return lib.einsum("ij,kj->ik", x.reshape(4, 6), y.reshape(4, 6))


@pytest.mark.parametrize(
    "name, f, ref",
    [
        ("add", lambda x, y: x + y, lambda x, y: x + y),
        ("sub", lambda x, y: x - y, lambda x, y: x - y),
        ("mul", lambda x, y: x * y, lambda x, y: x * y),
        ("div", lambda x, y: x / y, lambda x, y: x / y),
        ("rdiv", lambda x, y: 2 / x[5:], lambda x, y: 2 / x[5:]),
        ("neg", lambda x, y: -x, lambda x, y: -x),
        ("conj", lambda x, y: x.conj(), lambda x, y: np.conj(x)),
        ("exp", lambda x, y: x[5:].exp(), lambda x, y: np.exp(x[5:])),
        ("log", lambda x, y: x[5:].log(), lambda x, y: np.log(x[5:])),
        ("sqrt", lambda x, y: x.sqrt(), lambda x, y: np.sqrt(x)),
        ("sin", lambda x, y: x[5:].sin(), lambda x, y: np.sin(x[5:])),
        ("cos", lambda x, y: x[5:].cos(), lambda x, y: np.cos(x[5:])),
        ("tan", lambda x, y: x[5:].tan(), lambda x, y: np.tan(x[5:])),
        ("sinh", lambda x, y: x[5:].sinh(), lambda x, y: np.sinh(x[5:])),
        ("cosh", lambda x, y: x[5:].cosh(), lambda x, y: np.cosh(x[5:])),
        ("tanh", lambda x, y: x[5:].tanh(), lambda x, y: np.tanh(x[5:])),
        ("reciprocal", lambda x, y: x[5:].reciprocal(), lambda x, y: 1 / x[5:]),
        ("pow3", lambda x, y: x[5:] ** 3, lambda x, y: x[5:] ** 3),
        ("pow-2", lambda x, y: x[5:] ** -2, lambda x, y: x[5:] ** -2.0),
        ("pow_half", lambda x, y: x[5:] ** 0.5, lambda x, y: x[5:] ** 0.5),
        ("pow_complex", lambda x, y: x[5:] ** (0.5 + 1j), lambda x, y: x[5:] ** (0.5 + 1j)),
        ("pow_tensor", lambda x, y: x[5:] ** y[5:], lambda x, y: x[5:] ** y[5:]),
        ("sgn", lambda x, y: x.sgn(), lambda x, y: np.where(x == 0, 0, x / np.abs(x))),
        ("abs", lambda x, y: x.abs(), lambda x, y: np.abs(x)),
        ("angle", lambda x, y: x.angle(), lambda x, y: np.angle(x)),
        ("square", lambda x, y: x[5:].square(), lambda x, y: x[5:] ** 2),
        ("prod", lambda x, y: x[5:12].prod(), lambda x, y: np.prod(x[5:12])),
        ("mean", lambda x, y: x.mean(), lambda x, y: np.mean(x)),
        ("cumsum", lambda x, y: x.cumsum(0), lambda x, y: np.cumsum(x)),
        ("vdot", lambda x, y: mlfuse.vdot(x, y), lambda x, y: np.vdot(x, y)),
        ("matmul", lambda x, y: _mm(x, y), _mm),
        ("einsum", lambda x, y: _ein(mlfuse, x, y), lambda x, y: _ein(np, x, y)),
    ],
)  # fmt: skip
def test_ops_match_numpy_complex128(name, f, ref):
    x, y = mlfuse.tensor(A), mlfuse.tensor(B)
    assert x.dtype == mlfuse.complex128
    with np.errstate(all="ignore"):
        want = ref(A, B)
    close(f(x, y).numpy(), want, 1e-12 if name.startswith("pow") else 1e-13)


def test_complex64_parts_are_float32_and_accurate():
    z = mlfuse.tensor(A[5:].astype(np.complex64))
    assert z.dtype == mlfuse.complex64 and z.real.dtype == mlfuse.float32
    w = (z * z.conj() + z.exp()) / (z + 3)
    a = A[5:].astype(np.complex64).astype(np.complex128)
    close(w.numpy(), (a * np.conj(a) + np.exp(a)) / (a + 3), 3e-6)
    assert w.numpy().dtype == np.complex64


def test_division_scales_large_and_small_divisors():
    x = mlfuse.tensor([1 + 1j, 1e-3 + 2e-3j], dtype=mlfuse.complex64)
    y = mlfuse.tensor([3e30 + 4e30j, 1e-30 - 2e-30j], dtype=mlfuse.complex64)
    want = np.array([1 + 1j, 1e-3 + 2e-3j]) / np.array([3e30 + 4e30j, 1e-30 - 2e-30j])
    close((x / y).numpy(), want, 1e-6)  # c*c + d*d would overflow / underflow in float32
    close(y.abs().numpy(), np.abs([3e30 + 4e30j, 1e-30 - 2e-30j]), 1e-6)


def test_sqrt_branch_cut_follows_the_sign_of_zero():
    z = mlfuse.tensor([complex(-4, 0.0), complex(-4, -0.0), complex(-1e-30, -0.0)])
    got = z.sqrt().numpy()
    assert got[0] == 2j and got[1] == -2j
    assert np.signbit(got[2].imag)


def test_creation_and_promotion():
    assert mlfuse.tensor([1, 2j]).dtype == mlfuse.complex64
    assert mlfuse.tensor(np.array([1j], np.complex128)).dtype == mlfuse.complex128
    assert mlfuse.tensor([1.0, 2.0], dtype=mlfuse.cfloat).numpy().tolist() == [1 + 0j, 2 + 0j]
    assert mlfuse.zeros(2, 3, dtype=mlfuse.complex64).numpy().dtype == np.complex64
    assert mlfuse.full((2,), 1 - 2j).numpy().tolist() == [1 - 2j, 1 - 2j]
    x = mlfuse.arange(3.0)
    assert (x * 1j).dtype == mlfuse.complex64
    assert (x.double() + 1j).dtype == mlfuse.complex128
    assert (mlfuse.arange(3) * 1j).dtype == mlfuse.complex64  # integers: the default float
    assert x.to(mlfuse.complex128).numpy().tolist() == [0j, 1 + 0j, 2 + 0j]
    assert mlfuse.promote_types(mlfuse.complex64, mlfuse.float64) == mlfuse.complex128
    assert mlfuse.result_type(x, 2j) == mlfuse.complex64
    assert (
        mlfuse.float64.to_complex == mlfuse.complex128
        and mlfuse.complex64.to_real == mlfuse.float32
    )
    assert mlfuse.Tensor([1 + 1j]).dtype == mlfuse.complex64  # tinygrad's spelling too
    assert isinstance(mlfuse.tensor([1j]), mlfuse.Tensor)


def test_random_complex_has_unit_variance():
    mlfuse.manual_seed(0)
    z = mlfuse.randn(20000, dtype=mlfuse.complex64).numpy()
    assert abs(np.var(z.real) - 0.5) < 0.03 and abs(np.var(z.imag) - 0.5) < 0.03
    u = mlfuse.rand(1000, dtype=mlfuse.complex128).numpy()
    assert 0 <= u.real.min() and u.real.max() < 1 and 0 <= u.imag.min() and u.imag.max() < 1


def test_movement_reductions_and_joins():
    a = A.reshape(4, 6)
    z = mlfuse.tensor(a)
    close(z.T.numpy(), a.T)
    close(z.mH.numpy(), a.conj().T)
    close(z[1:, ::2].flip(0).numpy(), a[1:, ::2][::-1])
    close(z.reshape(2, 12).sum(1).numpy(), a.reshape(2, 12).sum(1))
    close(z.unsqueeze(0).expand(2, 4, 6).numpy(), np.broadcast_to(a, (2, 4, 6)))
    close(z.roll(1, 1).numpy(), np.roll(a, 1, 1))
    close(mlfuse.cat([z, mlfuse.ones(1, 6)]).numpy(), np.concatenate([a, np.ones((1, 6))]))
    close(mlfuse.stack([z, z.conj()], -1).numpy(), np.stack([a, a.conj()], -1))
    halves = z.chunk(2, 1)
    assert len(halves) == 2 and all(isinstance(h, ComplexTensor) for h in halves)
    close(halves[1].numpy(), a[:, 3:])
    mask = mlfuse.tensor(a.real > 0)
    close(mlfuse.where(mask, z, 0).numpy(), np.where(a.real > 0, a, 0))
    close(z.prod(1, keepdim=True).numpy(), a.prod(1, keepdims=True))
    assert [w.shape for w in z] == [(6,)] * 4


def test_view_as_real_and_complex_round_trip():
    x = mlfuse.tensor(RNG.standard_normal((3, 4, 2)))
    z = mlfuse.view_as_complex(x)
    assert z.shape == (3, 4) and z.dtype == mlfuse.complex128
    close(z.numpy(), x.numpy()[..., 0] + 1j * x.numpy()[..., 1])
    np.testing.assert_array_equal(mlfuse.view_as_real(z).numpy(), x.numpy())
    r = mlfuse.polar(mlfuse.tensor([2.0, 1.0]), mlfuse.tensor([0.5, -3.0]))
    close(r.numpy(), np.array([2.0, 1.0]) * np.exp(1j * np.array([0.5, -3.0])), 1e-6)


def test_rotary_embedding_forward_and_gradients():
    """LLaMA's rotary embedding: a rotation of each pair by a fixed angle."""
    xq = RNG.standard_normal((2, 5, 3, 8))
    angles = np.outer(np.arange(5), 1.0 / 10000 ** (np.arange(0, 8, 2) / 8))
    x = mlfuse.tensor(xq, requires_grad=True)
    freqs = mlfuse.polar(mlfuse.ones(5, 4, dtype=mlfuse.float64), mlfuse.tensor(angles))
    xc = mlfuse.view_as_complex(x.reshape(2, 5, 3, 4, 2))
    out = mlfuse.view_as_real(xc * freqs.view(1, 5, 1, 4)).flatten(3)
    (out * mlfuse.tensor(xq[..., ::-1].copy())).sum().backward()
    pairs = xq[..., 0::2] + 1j * xq[..., 1::2]
    rot = pairs * np.exp(1j * angles)[None, :, None, :]
    want = np.stack([rot.real, rot.imag], -1).reshape(xq.shape)
    close(out.detach().numpy(), want)
    # d/dx of sum(out * w) is the inverse rotation of w's pairs
    w = xq[..., ::-1]
    wp = w[..., 0::2] + 1j * w[..., 1::2]
    g = wp * np.exp(-1j * angles)[None, :, None, :]
    close(x.grad.numpy(), np.stack([g.real, g.imag], -1).reshape(xq.shape), 1e-12)


def test_gradients_follow_pytorchs_convention():
    """For a real loss the gradient of a complex leaf is dL/dre + 1j dL/dim."""
    z = mlfuse.tensor(A[5:10], requires_grad=True)
    assert z.requires_grad and z.is_leaf
    (z.abs() ** 2).sum().backward()
    close(z.grad.numpy(), 2 * A[5:10])
    # a holomorphic f: grad = upstream * conj(f'(z)), also on sqrt's branch cut
    w = mlfuse.tensor(np.array([-4 + 0j, 1 + 1j]), requires_grad=True)
    r = w.sqrt()
    (r.real * 0.7 - r.imag * 1.3).sum().backward()
    want = (0.7 - 1.3j) * np.conj(1 / (2 * np.sqrt(np.array([-4 + 0j, 1 + 1j]))))
    close(w.grad.numpy(), want)
    v = mlfuse.tensor(np.array([1 + 2j]), requires_grad=True)
    v.exp().backward(gradient=mlfuse.tensor([1 + 0j]))
    close(v.grad.numpy(), np.conj(np.exp([1 + 2j])))


def test_values_repr_pickle_and_module_buffers():
    z = mlfuse.tensor([[1 + 2j, 3 - 1j]])
    assert z[0, 1].item() == 3 - 1j
    assert z.tolist() == [[1 + 2j, 3 - 1j]]
    assert repr(z.realize()) == "tensor([[1.+2.j, 3.-1.j]], dtype=complex64)"
    back = pickle.loads(pickle.dumps(z))
    assert back.dtype == mlfuse.complex64 and back.tolist() == z.tolist()
    assert copy.deepcopy(z).tolist() == z.tolist()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert z.float().tolist() == [[1.0, 3.0]]
    assert "discards the imaginary part" in str(caught[0].message)
    w = z.clone()
    w += 1
    w[0, 0] = 5j
    assert w.tolist() == [[5j, 4 - 1j]] and z.tolist() == [[1 + 2j, 3 - 1j]]
    mlfuse.testing.assert_close(z * 1, z)


def test_unsupported_ops_name_themselves():
    z = mlfuse.tensor([1 + 1j, 2])
    with pytest.raises(DTypeError, match="relu is not supported for complex tensors"):
        z.relu()
    with pytest.raises(DTypeError, match="maximum is not supported for complex tensors"):
        mlfuse.maximum(z, z)
    with pytest.raises(DTypeError, match="__lt__ is not supported"):
        z < 1  # noqa: B015
    with pytest.raises(DTypeError, match="softmax"):
        mlfuse.softmax(z, 0)
    with pytest.raises(RuntimeError, match="only for real scalar outputs"):
        mlfuse.tensor([1j], requires_grad=True).sum().backward()
    with pytest.raises(ArgumentError, match="last dim must have size 2"):
        mlfuse.view_as_complex(mlfuse.ones(3, 3))
    with pytest.raises(DTypeError, match="float32 and float64"):
        mlfuse.view_as_complex(mlfuse.ones(3, 2, dtype=mlfuse.int32))
    with pytest.raises(DTypeError, match="same dtype"):
        mlfuse.complex(mlfuse.ones(2), mlfuse.ones(2).double())
    with pytest.raises(DTypeError, match="only supported for complex tensors"):
        mlfuse.view_as_real(mlfuse.ones(2))
    with pytest.raises(DTypeError, match="non-complex"):
        mlfuse.imag(mlfuse.ones(2))
    with pytest.raises(DTypeError, match="cannot be stored as float32"):
        mlfuse.tensor([1j], dtype=mlfuse.float32)


def test_complex_buffers_move_save_and_load_with_their_module():
    class Rotary(mlfuse.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = mlfuse.nn.Linear(2, 2)
            self.register_buffer("freqs", mlfuse.polar(mlfuse.ones(3), mlfuse.arange(3.0)))
            self.cache = mlfuse.zeros(2, dtype=mlfuse.complex64)  # plain: not saved

    m, other = Rotary(), Rotary()
    other.freqs.mul_(2)
    m.to("cpu").double()
    assert m.freqs.dtype == mlfuse.complex64 and m.lin.weight.dtype == mlfuse.float64
    assert list(m.state_dict()) == ["freqs", "lin.weight", "lin.bias"]  # own entries first
    m.load_state_dict(other.state_dict())
    close(m.freqs.numpy(), 2 * np.exp(1j * np.arange(3.0)), 1e-6)
    assert m.freqs.numpy(force=True).dtype == np.complex64


def test_parts_are_writable_views_of_the_value():
    z = mlfuse.tensor(np.array([1 + 2j, 3 - 1j]))
    re = z.real
    z.real = mlfuse.tensor([5.0, 6.0])
    assert z.tolist() == [5 + 2j, 6 - 1j] and re.tolist() == [5.0, 6.0]
    z.imag.zero_()
    z.real.mul_(2)
    assert z.tolist() == [10 + 0j, 12 + 0j]
    z.imag = 0.5
    assert z.tolist() == [10 + 0.5j, 12 + 0.5j]
    assert mlfuse.finfo(mlfuse.complex64).eps == mlfuse.finfo(mlfuse.float32).eps
    with pytest.raises(DTypeError, match="takes real values"):
        z.real = z
