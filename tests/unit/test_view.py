"""The view algebra (mlfuse.view): unit cases and property tests against numpy."""

import numpy as np
import pytest
from hypothesis import given
from movement import movement_chain, numpy_apply, property_settings

from mlfuse.view import View, ViewError, ViewStack, evaluate, merge_views, read


def apply(stack: ViewStack, name: str, arg) -> ViewStack:
    return getattr(stack, name)(arg)


def through_views(shape, ops):
    base = np.arange(1, int(np.prod(shape)) + 1, dtype=np.int64)
    st = ViewStack.from_shape(shape)
    for name, arg in ops:
        st = apply(st, name, arg)
    return read(base, st), st


def through_numpy(shape, ops):
    x = np.arange(1, int(np.prod(shape)) + 1, dtype=np.int64).reshape(shape)
    for name, arg in ops:
        x = numpy_apply(x, name, arg)
    return x


@property_settings
@given(movement_chain())
def test_random_movement_chains_match_numpy(chain):
    shape, ops = chain
    got, stack = through_views(shape, ops)
    want = through_numpy(shape, ops)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want, err_msg=f"{shape} {ops} -> {stack}")


# -- canonical forms ---------------------------------------------------------


def test_create_canonicalizes_size1_strides_and_full_masks():
    v = View.create((4, 1, 3), (3, 7, 1), 0, ((0, 4), (0, 1), (0, 3)))
    assert v.strides == (3, 0, 1)
    assert v.mask is None
    assert v.contiguous


def test_single_index_mask_folds_into_offset():
    # a dim whose valid range is one index reads one position
    v = View.create((5,), (2,), 0, ((3, 4),))
    assert v.strides == (0,) and v.offset == 6 and v.mask == ((3, 4),)


def test_empty_mask_is_one_all_invalid_form():
    a = View.create((3, 4), (4, 1), 5, ((1, 1), (0, 4)))
    b = View.create((3, 4), (1, 3), 0, ((0, 3), (2, 2)))
    assert a == b and a.all_invalid


def test_equal_index_maps_compare_equal():
    s = ViewStack.from_shape((4, 6))
    assert s.permute((1, 0)).permute((1, 0)) == s
    assert s.reshape((24,)).reshape((4, 6)) == s
    assert s.pad(((1, 2), (0, 3))).shrink(((1, 5), (0, 6))) == s
    assert s.flip((0, 1)).flip((1, 0)) == s


def test_transpose_then_flatten_needs_a_stack():
    s = ViewStack.from_shape((4, 6)).permute((1, 0)).reshape((24,))
    assert len(s.views) == 2
    # ... and reshaping back merges into one view again
    assert len(s.reshape((6, 4)).views) == 1


def test_reshape_of_contiguous_merges():
    s = ViewStack.from_shape((4, 6)).reshape((2, 2, 3, 2))
    assert s == ViewStack.from_shape((2, 2, 3, 2))


def test_expand_of_reshape_merges_to_stride_zero():
    s = ViewStack.from_shape((64,)).reshape((64, 1)).expand((64, 32))
    assert s.views == (View.create((64, 32), (1, 0)),)


def test_pad_mask_and_offset():
    s = ViewStack.from_shape((3,)).pad(((2, 1),))
    assert s.top == View((6,), (1,), -2, ((2, 5),))
    off, valid = evaluate(s)
    np.testing.assert_array_equal(valid, [False, False, True, True, True, False])
    np.testing.assert_array_equal(np.where(valid, off, -1), [-1, -1, 0, 1, 2, -1])


def test_flip_uses_negative_stride():
    s = ViewStack.from_shape((2, 3)).flip((1,))
    assert s.top.strides == (3, -1) and s.top.offset == 2


def test_stride_keeps_every_kth():
    s = ViewStack.from_shape((7,)).stride((3,))
    np.testing.assert_array_equal(read(np.arange(7), s), [0, 3, 6])


def test_merge_projects_bottom_mask_onto_one_dim():
    padded = View.create((6,), (1,), -1, ((1, 5),))  # pad((1, 1)) of 4 elements
    flipped = View.create((6,), (-1,), 5)
    m = merge_views(padded, flipped)
    assert m is not None
    got = read(np.arange(10, 14), ViewStack((m,)))
    np.testing.assert_array_equal(got, [0, 13, 12, 11, 10, 0])


def test_merge_refuses_masks_spanning_two_dims():
    padded = View.create((10,), (1,), -1, ((1, 9),))
    assert merge_views(padded, View.create((2, 5))) is None


def test_offset_range():
    assert View.create((3, 4), (4, 1), 2).offset_range() == (2, 13)
    assert View.create((3,), (-2,), 4).offset_range() == (0, 4)
    assert View.create((0, 4)).offset_range() is None


# -- errors -------------------------------------------------------------------


@pytest.mark.parametrize(
    "op, arg, msg",
    [
        ("reshape", (5,), "cannot reshape"),
        ("permute", (0, 0), "not a permutation"),
        ("expand", (3, 6), "only size-1 dims can expand"),
        ("pad", ((0, -1), (0, 0)), "non-negative"),
        ("shrink", ((0, 5), (0, 2)), "out of bounds"),
        ("flip", (2,), "out of range"),
        ("stride", (0, 1), "positive"),
    ],
)
def test_bad_arguments_raise_view_error(op, arg, msg):
    with pytest.raises(ViewError, match=msg):
        apply(ViewStack.from_shape((3, 2)), op, arg)


def test_compose_checks_reads_stay_inside():
    with pytest.raises(ViewError, match="reads positions"):
        ViewStack.from_shape((4,)).compose(ViewStack((View.create((3,), (2,)),)))


def test_depends_on_follows_strides_and_masks():
    v = View.create((2, 3, 4), (0, 1, 0), 0, ((0, 2), (0, 3), (1, 3)))
    assert [v.depends_on(d) for d in range(3)] == [False, True, True]
    # valid nowhere (an empty range on one dim): the same everywhere
    empty = View.create((2, 3, 4), (0, 1, 0), 0, ((1, 1), (0, 3), (1, 3)))
    assert [empty.depends_on(d) for d in range(3)] == [False, False, False]
