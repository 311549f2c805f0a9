"""Bad input to the Tensor API raises a clear error naming the problem.

Shape, axis and dtype errors are raised eagerly, when the op is recorded
(the tensor.py contract: ``ValueError`` / ``TypeError`` naming the problem),
so every ``pytest.raises`` below wraps only the op itself. The one error
that can only be found when scheduling, the assign hazard, is raised by
``realize`` and must point at ``.contiguous()``.
"""

from __future__ import annotations

import re

import math

import numpy as np
import pytest

import mlfuse
from mlfuse import Tensor


@pytest.fixture
def x() -> Tensor:
    return Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))


# ---------------------------------------------------------------------------
# shapes and broadcasting
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "op",
    [
        lambda a, b: a + b,
        lambda a, b: a * b,
        lambda a, b: a < b,
        lambda a, b: a.maximum(b),
    ],
    ids=["add", "mul", "lt", "maximum"],
)
def test_shapes_that_do_not_broadcast(x, op):
    with pytest.raises(ValueError, match=r"shapes \(2, 3\) and \(4,\) do not broadcast"):
        op(x, Tensor(np.zeros(4, np.float32)))


def test_numpy_operand_that_does_not_broadcast(x):
    with pytest.raises(ValueError, match="do not broadcast"):
        x + np.zeros((3, 2), np.float32)


def test_where_and_fma_shapes_that_do_not_broadcast(x):
    with pytest.raises(ValueError, match="do not broadcast"):
        Tensor([True, False]).where(Tensor([1.0, 2.0, 3.0]), 0.0)
    with pytest.raises(ValueError, match="do not broadcast"):
        x.fma(Tensor(np.zeros(4, np.float32)), 1.0)


def test_broadcast_to_fewer_dims(x):
    with pytest.raises(ValueError, match=r"cannot broadcast \(2, 3\) to \(3,\)"):
        x.broadcast_to(3)


def test_reshape_wrong_element_count(x):
    with pytest.raises(ValueError, match=r"cannot reshape .*\(2, 3\).*6 elements.*\(4, 2\)"):
        x.reshape(4, 2)
    with pytest.raises(ValueError, match=r"cannot reshape .*\(2, 3\).*\(-1, 4\)"):
        x.reshape(-1, 4)
    with pytest.raises(ValueError, match="cannot reshape"):
        x.reshape(0, -1)


def test_reshape_two_minus_ones(x):
    with pytest.raises(ValueError, match="only one dim can be -1"):
        x.reshape(-1, -1)


def test_reshape_bad_entries(x):
    with pytest.raises(ValueError, match="cannot reshape"):
        x.reshape(-2, -3)
    with pytest.raises(TypeError, match="shape entries must be ints"):
        x.reshape(2.0, 3)


@pytest.mark.parametrize("order", [(0, 0), (0,), (1, -1), (0, 1, 2)], ids=str)
def test_bad_permute(x, order):
    with pytest.raises(ValueError, match="permut|out of range"):
        x.permute(*order)


def test_bad_permute_message_names_the_order(x):
    with pytest.raises(ValueError, match=r"permute order \(0, 0\) is not a permutation of 2 dims"):
        x.permute(0, 0)


def test_expand_of_non1_dim(x):
    with pytest.raises(ValueError, match=r"cannot expand \(2, 3\) to \(4, 3\).*size-1"):
        x.expand(4, 3)
    with pytest.raises(ValueError, match="fewer dims"):
        x.expand(3)


@pytest.mark.parametrize(
    "make",
    [
        lambda: Tensor.zeros(-1),
        lambda: Tensor.full((2, -1), 0),
        lambda: Tensor.ones(3, -3),
        lambda: Tensor([1.0, 2.0]).expand(-2, 2),
    ],
    ids=["zeros(-1)", "full((2,-1))", "ones(3,-3)", "expand(-2,2)"],
)
def test_negative_dims(make):
    with pytest.raises(ValueError, match="negative|must be non-negative|shape"):
        make()


# ---------------------------------------------------------------------------
# axes
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fn",
    [
        lambda t, a: t.sum(a),
        lambda t, a: t.max(a),
        lambda t, a: t.mean(a),
        lambda t, a: t.softmax(a),
        lambda t, a: t.log_softmax(a),
        lambda t, a: t.logsumexp(a),
        lambda t, a: t.layernorm(a),
        lambda t, a: t.flip(a),
        lambda t, a: t.transpose(0, a),
    ],
    ids=[
        "sum",
        "max",
        "mean",
        "softmax",
        "log_softmax",
        "logsumexp",
        "layernorm",
        "flip",
        "transpose",
    ],
)
@pytest.mark.parametrize("axis", [2, -3, 5])
def test_axis_out_of_range(x, fn, axis):
    with pytest.raises(ValueError, match=f"axis {axis} is out of range for a tensor of 2 dims"):
        fn(x, axis)


@pytest.mark.parametrize(
    "fn",
    [
        lambda t: t.squeeze(4),
        lambda t: t.unsqueeze(4),
        lambda t: t.flatten(3),
        lambda t: t.size(3),
    ],
    ids=["squeeze", "unsqueeze", "flatten", "size"],
)
def test_dim_out_of_range(x, fn):
    with pytest.raises(ValueError, match=r"dim \d is out of range"):
        fn(x)


@pytest.mark.parametrize("axis", [(0, 0), (1, -1), [0, 1, 0]], ids=str)
def test_repeated_axis(x, axis):
    with pytest.raises(ValueError, match="repeated axis"):
        x.sum(axis)


def test_axis_of_wrong_type(x):
    with pytest.raises(TypeError, match="axis must be an int"):
        x.sum(1.0)
    with pytest.raises(TypeError, match="axis must be an int"):
        x.softmax(0.0)


# ---------------------------------------------------------------------------
# matmul
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sa,sb",
    [((2, 3), (2, 3)), ((3,), (4,)), ((5, 3), (4,)), ((4,), (3, 2))],
    ids=["2d", "1d", "2d-1d", "1d-2d"],
)
def test_matmul_inner_dim_mismatch(sa, sb):
    a, b = Tensor(np.zeros(sa, np.float32)), Tensor(np.zeros(sb, np.float32))
    with pytest.raises(ValueError, match=r"matmul: inner dims differ"):
        a @ b


def test_matmul_batch_mismatch_and_0d():
    a, b = Tensor(np.zeros((2, 3, 4))), Tensor(np.zeros((3, 4, 5)))
    with pytest.raises(ValueError, match="do not broadcast"):
        a @ b
    with pytest.raises(ValueError, match="at least 1 dim"):
        Tensor(1.0) @ b


# ---------------------------------------------------------------------------
# pad, shrink, stride
# ---------------------------------------------------------------------------


def test_pad_wrong_number_of_pairs(x):
    with pytest.raises(ValueError, match=r"pad needs 2 \(before, after\) pairs, got 1"):
        x.pad(((1, 1),))
    with pytest.raises(ValueError, match=r"pad needs 2 .*got 3"):
        x.pad(((1, 1), (1, 1), (1, 1)))


@pytest.mark.parametrize(
    "padding",
    [((1,), (1, 1)), ((1, 1, 1), (1, 1))],
    ids=["short-pair", "long-pair"],
)
def test_pad_malformed_pairs(x, padding):
    """Each entry must be a (before, after) pair (or the whole is PyTorch's flat form)."""
    with pytest.raises((ValueError, TypeError), match="pair"):
        x.pad(padding)


def test_pad_flat_form_with_an_odd_count(x):
    with pytest.raises(ValueError, match="even number of amounts"):
        x.pad((1, 1, 1))


def test_pad_negative_amounts(x):
    """Negative amounts crop (PyTorch), also beside positive ones; not beyond the dim."""
    assert x.pad(((0, 0), (-1, -1))).shape == (x.shape[0], x.shape[1] - 2)
    assert x.pad(((1, 1), (-1, 0))).shape == (x.shape[0] + 2, x.shape[1] - 1)
    with pytest.raises(ValueError, match="crop more than"):
        x.pad(((0, 0), (-10, 0)))


@pytest.mark.parametrize(
    "bounds", [((0, 3), None), ((2, 1), None), ((-1, 1), None), (None, (1, 4))], ids=str
)
def test_shrink_out_of_bounds(x, bounds):
    with pytest.raises(ValueError, match=r"shrink range \(-?\d, \d\) out of bounds"):
        x.shrink(bounds)


def test_shrink_wrong_number_of_pairs(x):
    with pytest.raises(ValueError, match=r"shrink needs 2 \(begin, end\) pairs, got 1"):
        x.shrink(((0, 1),))


@pytest.mark.parametrize("steps", [(0, 1), (1, 0), (-1, 1)], ids=str)
def test_stride_not_positive(x, steps):
    with pytest.raises(ValueError, match="stride steps must be positive"):
        x._stride_view(*steps)


def test_stride_wrong_count(x):
    with pytest.raises(ValueError, match="stride needs 2 steps, got 1"):
        x._stride_view(1)


# ---------------------------------------------------------------------------
# indexing
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "index,msg",
    [
        (2, r"index 2 is out of bounds for a dim of size 2"),
        (-3, r"index -3 is out of bounds for a dim of size 2"),
        ((0, 3), r"index 3 is out of bounds for a dim of size 3"),
        ((0, -4), r"index -4 is out of bounds for a dim of size 3"),
    ],
    ids=["2", "-3", "(0,3)", "(0,-4)"],
)
def test_index_out_of_range(x, index, msg):
    with pytest.raises(IndexError, match=msg):
        x[index]


def test_too_many_indices(x):
    with pytest.raises(IndexError, match="too many indices for a tensor of 2 dims"):
        x[0, 0, 0]
    with pytest.raises(IndexError, match="too many indices for a tensor of 0 dims"):
        Tensor(1.0)[0]
    with pytest.raises(IndexError, match="single ellipsis"):
        x[..., ...]


@pytest.mark.parametrize(
    "index",
    [1.0, "a", (0, 1.5), 1j],
    ids=["float", "str", "tuple-with-float", "complex"],
)
def test_unsupported_index(x, index):
    # an IndexError as PyTorch's and numpy's, a TypeError by Python's convention
    for error in (IndexError, TypeError):
        with pytest.raises(error, match="unsupported index .*integer or bool tensors"):
            x[index]
    with pytest.raises(IndexError, match="unsupported index"):
        x[index] = 1.0


@pytest.mark.parametrize(
    "index", [(True, False), (True, [0, 1]), ([0], np.False_)], ids=["two", "list", "np-bool"]
)
def test_bool_scalar_beside_other_advanced_indices(x, index):
    with pytest.raises(IndexError, match="a bool scalar index .* is supported alone"):
        x[index]


def test_float_tensor_index_is_refused(x):
    with pytest.raises(IndexError, match="tensors used as indices must be integers, got float32"):
        x[Tensor([0.0])]


def test_slice_step_zero(x):
    with pytest.raises(ValueError, match="step cannot be zero"):
        x[::0]


# ---------------------------------------------------------------------------
# dtypes
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "op",
    [lambda t: ~t, lambda t: t & t, lambda t: t | 1, lambda t: 1 ^ t],
    ids=["invert", "and", "or", "rxor"],
)
def test_bitwise_on_float(x, op):
    with pytest.raises(TypeError, match="is not defined for float32 tensors"):
        op(x)


def test_bitwise_int_with_float_scalar():
    with pytest.raises(TypeError, match="xor is not defined for float32 tensors"):
        Tensor([1, 2]) ^ 1.5


def test_int_only_ops_on_bool():
    b = Tensor([True, False])
    with pytest.raises(TypeError, match="mod is not defined for bool tensors"):
        b % b
    with pytest.raises(TypeError, match="idiv is not defined for bool tensors"):
        b // b
    with pytest.raises(TypeError, match="abs is not defined for bool tensors"):
        b.abs()


def test_bool_minus_bool():
    """numpy refuses bool - bool; mlfuse should say so when the op is recorded."""
    b = Tensor([True, False])
    with pytest.raises(TypeError, match="bool"):
        b - b


@pytest.mark.parametrize(
    "src,to", [("float32", "float64"), ("int32", "bool"), ("bool", "int32"), ("int64", "float32")]
)
def test_bitcast_to_another_size(src, to):
    with pytest.raises(TypeError, match=f"cannot bitcast {src} to {to}"):
        Tensor(np.zeros(3, src)).bitcast(to)


@pytest.mark.parametrize("dt", ["datetime64[s]", "timedelta64[s]"])
def test_unsupported_numpy_dtype(dt):
    name = np.dtype(dt).name
    with pytest.raises(
        TypeError, match=rf"numpy dtype {re.escape(name)} is not supported; mlfuse has"
    ):
        Tensor(np.zeros(3, dt))


def test_unsupported_dtype_names(x):
    with pytest.raises(TypeError, match="unknown dtype 'float8'"):
        Tensor([1.0], dtype="float8")
    with pytest.raises(TypeError, match="unknown dtype 'float8'"):
        x.cast("float8")
    with pytest.raises(TypeError, match="unknown dtype 'foo'"):
        x.cast("foo")
    with pytest.raises(TypeError, match="numpy dtype datetime64 is not supported"):
        x.cast(np.datetime64)
    assert x.cast(np.complex64).dtype == mlfuse.complex64


def test_cast_to_none_is_an_error(x):
    with pytest.raises(TypeError, match="dtype"):
        x.cast(None)


def test_unsupported_data():
    with pytest.raises(TypeError, match="cannot make a Tensor from"):
        Tensor("abc")
    with pytest.raises(TypeError, match="cannot make a Tensor from"):
        Tensor({"a": 1})


def test_int_list_that_does_not_fit():
    """Python ints become int64: a value that does not fit must not wrap silently to 0."""
    with pytest.raises((ValueError, OverflowError), match="do not fit in int32"):
        Tensor([2**40], dtype="int32").numpy()
    with pytest.raises((ValueError, OverflowError, TypeError), match="int64"):
        Tensor([2**70]).numpy()


def test_int_constant_that_does_not_fit():
    """Refused at the call (as PyTorch does), not when the constant is lowered."""
    with pytest.raises(OverflowError, match="1099511627776 does not fit in int32"):
        Tensor.full((2,), 2**40, dtype="int32")
    t = Tensor([1, 2], dtype="int32")
    with pytest.raises(OverflowError, match="does not fit in int32"):
        t + 2**40
    with pytest.raises(OverflowError, match="does not fit in int64"):
        Tensor([1, 2]) * 2**64
    with pytest.raises(ValueError, match="not an integer for dtype int32"):
        Tensor.full((2,), 2.5, dtype="int32")


@pytest.mark.parametrize("other", ["a", None, object()], ids=["str", "None", "object"])
def test_unsupported_operand(x, other):
    with pytest.raises(TypeError, match="unsupported operand type for a Tensor op"):
        x + other


def test_shape_of_wrong_type():
    with pytest.raises(TypeError, match="shape entries must be ints"):
        Tensor.zeros(2.5)
    with pytest.raises(ValueError, match="arange step must not be 0"):
        Tensor.arange(0, 5, 0)


# ---------------------------------------------------------------------------
# Python protocol
# ---------------------------------------------------------------------------


def test_bool_of_tensor():
    """One element has a truth value (PyTorch); more are ambiguous."""
    assert bool(Tensor([1.0])) and not bool(Tensor([0]))
    t = Tensor([1.0, 0.0])
    with pytest.raises(TypeError, match="truth value of a tensor of 2 elements is ambiguous"):
        bool(t)
    with pytest.raises(TypeError, match="truth value of a tensor of 2 elements is ambiguous"):
        if t:
            pass
    assert bool(Tensor(1.0) == 1.0)


def test_item_of_multi_element_tensor(x):
    with pytest.raises(ValueError, match=r"item\(\) needs exactly one element, the tensor has 6"):
        x.item()
    with pytest.raises(ValueError, match=r"item\(\) needs exactly one element, the tensor has 0"):
        Tensor(np.zeros(0, np.float32)).item()


def test_len_of_0d():
    with pytest.raises(TypeError, match=r"len\(\) of a 0-d tensor"):
        len(Tensor(1.0))


# ---------------------------------------------------------------------------
# reductions over empty axes
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fn",
    [
        lambda t: t.max(1),
        lambda t: t.min(1),
        lambda t: t.max(),
        lambda t: t.max((0, 1)),
    ],
    ids=["max(1)", "min(1)", "max()", "max((0,1))"],
)
def test_max_of_empty_axis(fn):
    t = Tensor(np.zeros((3, 0), np.float32))
    with pytest.raises(IndexError, match="(max|min) of an empty axis has no identity"):
        fn(t)


def test_normalizing_over_an_empty_axis_is_empty_or_the_empty_sum():
    # PyTorch's: softmax of nothing is nothing; logsumexp of nothing is log(0)
    t = Tensor(np.zeros((3, 0), np.float32))
    assert t.softmax(1).shape == (3, 0) and t.log_softmax(1).shape == (3, 0)
    assert t.logsumexp(1).tolist() == [-math.inf] * 3


def test_max_of_nonempty_axis_of_empty_tensor_is_fine():
    t = Tensor(np.zeros((0, 3), np.float32))
    assert t.max(1).shape == (0,)


# ---------------------------------------------------------------------------
# assign
# ---------------------------------------------------------------------------


def _square() -> Tensor:
    t = Tensor(np.arange(9, dtype=np.float32).reshape(3, 3))
    assert t.node.realized
    return t


def test_assign_different_dtype():
    t = _square()
    with pytest.raises(TypeError, match="assign: value has dtype int32, the target float32"):
        t.assign(Tensor(np.zeros((3, 3), np.int32)))
    ti = Tensor(np.zeros(3, np.int32))
    with pytest.raises(ValueError, match="not an integer for dtype int32"):
        ti.assign(1.5)


def test_assign_shape_that_does_not_broadcast():
    t = _square()
    with pytest.raises(ValueError, match=r"cannot broadcast \(2, 3\) to \(3, 3\)"):
        t.assign(Tensor(np.zeros((2, 3), np.float32)))


_A = np.arange(9, dtype=np.float64).reshape(3, 3)

# name -> (value read through another view of the target, numpy reference)
HAZARDS = {
    "T": (lambda t: t.T, _A.T),
    "flip": (lambda t: t.flip(0), np.flip(_A, 0)),
    "T+1": (lambda t: t.T + 1, _A.T + 1),
    "x+x.T": (lambda t: t + t.T, _A + _A.T),
    "shifted": (lambda t: t.pad(((1, 0), None))[:3], np.concatenate([np.zeros((1, 3)), _A[:2]])),
}


@pytest.mark.parametrize("name", list(HAZARDS))
def test_assign_reading_the_target_through_another_view(name):
    """x.assign(f(x through another view)) reads the old x: the value read through
    the other view is materialized by a kernel that runs before the assign's."""
    fn, ref = HAZARDS[name]
    t = _square()
    t.assign(fn(t))
    items = mlfuse.schedule(t)
    assert len(items) == 2 and items[0].reasons == ["reads the buffer it assigns"]
    np.testing.assert_array_equal(t.numpy(), ref)


def test_assign_hazard_through_mlfuse_realize():
    t = _square()
    other = t.sum()
    t.assign(t.T)
    mlfuse.realize(t, other)
    np.testing.assert_array_equal(t.numpy(), _A.T)
    assert other.item() == _A.sum()


@pytest.mark.parametrize("name", list(HAZARDS))
def test_assign_contiguous_avoids_hazard(name):
    """The fix the message suggests works: x.assign(x.T.contiguous())."""
    fn, ref = HAZARDS[name]
    t = _square()
    t.assign(fn(t).contiguous())
    out = t.numpy()
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, ref)


# ---------------------------------------------------------------------------
# the exception classes: Python's ValueError and PyTorch's class at once
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, torch_class, message",
    [
        (lambda x: x.sum(5), IndexError, "axis 5 is out of range for a tensor of 2 dims"),
        (lambda x: x.cumsum(-3), IndexError, "out of range"),
        (lambda x: x @ x, RuntimeError, "matmul"),
        (lambda x: x.reshape(4, 2), RuntimeError, r"cannot reshape tensor of shape \(2, 3\)"),
        (lambda x: x.permute(0, 0), RuntimeError, "not a permutation"),
        (lambda x: x + Tensor.ones(4), RuntimeError, "do not broadcast"),
        (lambda x: x.flip((1, 1)), RuntimeError, "repeated axis"),
        (lambda x: x.pad(((0, 0), (1, 1)), mode="typo"), NotImplementedError, "mode must be"),
        (lambda x: x.sum().cat(x.sum()), IndexError, "zero-dimensional tensors cannot be"),
        (
            lambda x: x.scatter(0, Tensor([[0, 1, 0]]), Tensor([[1.0, 2.0, 3.0]], "float64")),
            RuntimeError,
            r"scatter: src has dtype float64, the input float32",
        ),
        (
            lambda x: x.half().scatter_reduce(0, Tensor([[1]]), x, "sum"),
            RuntimeError,
            r"scatter_reduce: src has dtype float32, the input float16",
        ),
    ],
    ids=[
        "sum-axis",
        "cumsum-axis",
        "matmul",
        "reshape",
        "permute",
        "broadcast",
        "flip",
        "pad",
        "cat-0d",
        "scatter-dtype",
        "scatter-reduce-dtype",
    ],
)
def test_errors_are_value_errors_and_what_pytorch_raises(x, call, torch_class, message):
    """Code written against either convention catches them: ``except
    ValueError`` and PyTorch's ``except RuntimeError`` / ``IndexError``."""
    with pytest.raises(ValueError, match=message) as info:
        call(x)
    assert isinstance(info.value, torch_class)
    assert isinstance(info.value, mlfuse.ArgumentError)
