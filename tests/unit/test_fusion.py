"""Kernel counts and boundaries of the scheduler (spec/fusion_cases.md and more)."""

import numpy as np
import pytest

import mlfuse
from mlfuse import Tensor
from mlfuse.examples import FUSION_CASES

REASONS = {
    "output",
    "contiguous",
    "copy",
    "assign",
    "view of reduce",
    "expand of reduce",
    "reduce of reduce",
    "reduces over incompatible dims",
    "reduce read at two index maps",
}


def check_explained(items, inputs_bytes=None):
    """Every output of every kernel says why it is materialized."""
    for it in items:
        assert it.reasons and len(it.reasons) == len(it.outputs)
        for r in it.reasons:
            assert r in REASONS or r.startswith("read by "), r


@pytest.mark.parametrize("case", FUSION_CASES, ids=lambda c: c.name)
def test_fusion_case(case):
    outs, refs = case.build(np.random.default_rng(0))
    items = mlfuse.schedule(*outs)
    assert len(items) <= case.target, [str(i) for i in items]
    assert len(items) <= case.tinygrad  # never more kernels than tinygrad 0.14
    check_explained(items)
    mlfuse.realize(*outs)
    for o, r in zip(outs, refs):
        np.testing.assert_allclose(o.numpy(), r, rtol=2e-5, atol=2e-5)


def test_bytes_moved_are_reported():
    case = next(c for c in FUSION_CASES if c.name == "softmax")
    (out,), _ = case.build(np.random.default_rng(0))
    (item,) = mlfuse.schedule(out)
    assert (item.bytes_read, item.bytes_written) == (64 * 64 * 4, 64 * 64 * 4)
    case = next(c for c in FUSION_CASES if c.name == "reduce_then_ew")
    (out,), _ = case.build(np.random.default_rng(0))
    (item,) = mlfuse.schedule(out)
    assert (item.bytes_read, item.bytes_written) == (64 * 64 * 4 + 64 * 4, 64 * 4)


def test_mlp2_boundary_is_the_expanded_hidden_layer():
    case = next(c for c in FUSION_CASES if c.name == "mlp2")
    (out,), _ = case.build(np.random.default_rng(0))
    first, second = mlfuse.schedule(out)
    assert first.reasons == ["expand of reduce"]
    # bias and relu are in the first kernel's epilogue, not recomputed in the second
    assert "max" in first.ops and "max" not in second.ops
    assert first.bytes_written == 64 * 48 * 4
    assert second.reasons == ["output"]


def test_attention_is_two_kernels_with_softmax_fused_into_the_second():
    case = next(c for c in FUSION_CASES if c.name == "attention")
    (out,), _ = case.build(np.random.default_rng(0))
    scores, rest = mlfuse.schedule(out)
    assert rest.ops.count("reduce") == 3  # max, sum and the @v reduction
    assert "exp" in rest.ops and "exp" not in scores.ops


def test_layernorm_and_softmax_reduces_share_one_row_loop_each():
    x = Tensor(np.random.default_rng(0).standard_normal((8, 16)).astype(np.float32))
    (item,) = mlfuse.schedule(x.layernorm())
    assert item.space == (8, 16)  # the reductions reuse the row dim of the output


# -- more programs of the same kinds ------------------------------------------------


def rnd(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def test_reduce_feeding_reduce_is_one_kernel():
    # the row sums are computed inside the loop of the total, each once
    x = rnd(16, 32)
    out = Tensor(x).sum(1).sum(0)
    (item,) = mlfuse.schedule(out)
    assert item.ops == ["reduce", "reduce"] and item.inputs == [x.nbytes]
    np.testing.assert_allclose(out.numpy(), x.sum(), rtol=1e-5)


def test_reduce_over_permuted_input_reads_it_in_place():
    x = rnd(8, 12, 5)
    out = Tensor(x).permute(2, 0, 1).sum(2)
    (item,) = mlfuse.schedule(out)
    assert item.inputs == [x.nbytes]
    np.testing.assert_allclose(out.numpy(), x.transpose(2, 0, 1).sum(2), rtol=1e-5)


def test_reduce_over_padded_input():
    x = rnd(6, 7)
    out = Tensor(x).pad(((1, 2), (3, 0))).exp().sum(1)  # padded elements give exp(0) = 1
    (item,) = mlfuse.schedule(out)
    np.testing.assert_allclose(out.numpy(), np.exp(np.pad(x, ((1, 2), (3, 0)))).sum(1), rtol=1e-5)


def test_permute_of_a_reduce_is_pushed_into_it():
    x = rnd(8, 10, 12)
    out = Tensor(x).sum(1, keepdim=True).permute(2, 1, 0) + 1
    assert len(mlfuse.schedule(out)) == 1
    np.testing.assert_allclose(
        out.numpy(), x.sum(1, keepdims=True).transpose(2, 1, 0) + 1, rtol=1e-5
    )


def test_contiguous_splits_the_kernel():
    x = rnd(16, 16)
    out = ((Tensor(x) * 2).contiguous() + 1).sum(0)
    items = mlfuse.schedule(out)
    assert [i.reasons for i in items] == [["contiguous"], ["output"]]
    np.testing.assert_allclose(out.numpy(), (x * 2 + 1).sum(0), rtol=1e-5)


def test_realized_intermediate_is_read_not_recomputed():
    x = rnd(16, 16)
    y = (Tensor(x) * 3).realize()
    out = y.sum(1)
    (item,) = mlfuse.schedule(out)
    assert item.ops == ["reduce"]  # reads y's buffer
    np.testing.assert_allclose(out.numpy(), (x * 3).sum(1), rtol=1e-5)


def test_shared_reduce_with_two_outputs_is_one_kernel():
    x = rnd(32, 24)
    s = Tensor(x).sum(1)
    a, b = s + 1, s * 2
    items = mlfuse.schedule(a, b)
    assert len(items) == 1 and len(items[0].outputs) == 2
    mlfuse.realize(a, b)
    ref = x.astype(np.float64).sum(1)  # sums of +-1 values cancel: compare absolutely
    np.testing.assert_allclose(a.numpy(), ref + 1, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(b.numpy(), ref * 2, rtol=1e-5, atol=1e-5)


def test_reduces_over_the_same_rows_as_two_outputs_merge():
    x = rnd(32, 24)
    X = Tensor(x)
    a, b = X.sum(1), X.max(1)
    (item,) = mlfuse.schedule(a, b)
    assert item.inputs == [x.nbytes]  # x read once for both
    mlfuse.realize(a, b)
    np.testing.assert_allclose(a.numpy(), x.sum(1), rtol=1e-5)
    np.testing.assert_array_equal(b.numpy(), x.max(1))


def test_reduces_over_different_axes_stay_apart():
    x = rnd(16, 20)
    X = Tensor(x)
    a, b = X.sum(0), X.sum(1)
    assert len(mlfuse.schedule(a, b)) == 2
    mlfuse.realize(a, b)
    np.testing.assert_allclose(a.numpy(), x.sum(0), rtol=1e-5)
    np.testing.assert_allclose(b.numpy(), x.sum(1), rtol=1e-5)


def test_value_read_by_two_kernels_is_realized_once():
    x = rnd(16, 32)
    X = Tensor(x)
    m = X.max(1, keepdim=True)  # needed by a row-wise and by a column-wise kernel
    a = (X - m).sum(1)
    b = (X - m).sum(0)
    items = mlfuse.schedule(a, b)
    # the row-wise kernel computes the max (once) and stores it for the
    # column-wise kernel, which reads it
    rows, cols = items
    assert rows.ops.count("reduce") == 2 and sorted(rows.outputs) == [16 * 4, 16 * 4]
    assert cols.ops.count("reduce") == 1 and 16 * 4 in cols.inputs
    mlfuse.realize(a, b)
    np.testing.assert_allclose(
        a.numpy(), (x - x.max(1, keepdims=True)).sum(1), rtol=1e-4, atol=1e-5
    )
    np.testing.assert_allclose(
        b.numpy(), (x - x.max(1, keepdims=True)).sum(0), rtol=1e-4, atol=1e-5
    )


def test_zero_size_outputs_need_no_kernel():
    x = np.zeros((0, 5), np.float32)
    out = Tensor(x) + 1
    assert mlfuse.schedule(out) == []
    assert out.numpy().shape == (0, 5)


def test_sum_over_an_empty_axis_is_the_identity():
    out = Tensor(np.zeros((7, 0), np.float32)).sum(1)
    np.testing.assert_array_equal(out.numpy(), np.zeros(7, np.float32))


def test_zero_dim_tensors():
    a, b = Tensor(np.float32(3.0)), Tensor(np.float32(4.0))
    out = (a * b + 1).exp() / 1e5
    (item,) = mlfuse.schedule(out)
    assert item.space == ()
    np.testing.assert_allclose(out.numpy(), np.exp(np.float32(13.0)) / 1e5, rtol=1e-6)


def test_not_fused_log_explains_refused_merges():
    x = rnd(64, 64)
    y = Tensor(x) * 2
    a, b = y + 1, y.sum(0)
    module = mlfuse.schedule_ir(a, b)
    assert "not_fused" in module and "parallel extent would drop from 4096 to 64" in module


def test_elementwise_chain_and_reduce_of_product_are_one_kernel_each():
    rng = np.random.default_rng(3)
    a, b, c = (rng.standard_normal((37, 53)).astype(np.float32) for _ in range(3))
    A, B, C = Tensor(a), Tensor(b), Tensor(c)
    fused = A * B + C
    assert len(mlfuse.schedule(fused)) == 1
    np.testing.assert_allclose(fused.numpy(), a * b + c, rtol=1e-6)
    rows = (A * B).sum(axis=1)
    assert len(mlfuse.schedule(rows)) == 1
    want = (a.astype(np.float64) * b).sum(axis=1)
    np.testing.assert_allclose(rows.numpy(), want, rtol=1e-5, atol=1e-5)


# -- multi-stage reductions: one kernel when no reduction is recomputed ---------------


@pytest.mark.parametrize(
    "build, ref",
    [
        (lambda t: t.sum(2).relu().sum(1), lambda x: np.maximum(x.sum(2), 0).sum(1)),
        (lambda t: t.max(2).exp().sum(1), lambda x: np.exp(x.max(2)).sum(1)),
        (lambda t: (t.sum(2) * 2).max(1), lambda x: (x.sum(2) * 2).max(1)),
        (lambda t: t.sum(2).sum(1).sum(0), lambda x: x.sum()),
        (lambda t: t.permute(2, 0, 1).sum(0).sum(1), lambda x: x.sum(2).sum(1)),
    ],
    ids=["sum-relu-sum", "max-exp-sum", "sum-max", "three-levels", "permuted"],
)
def test_reduce_inside_a_reduce_is_one_kernel(build, ref):
    x = rnd(6, 5, 7)
    out = build(Tensor(x))
    (item,) = mlfuse.schedule(out)
    assert item.inputs == [x.nbytes]
    np.testing.assert_allclose(out.numpy(), ref(x.astype(np.float64)), rtol=1e-5, atol=1e-5)


# -- results that are views, constants or empty: no kernel ---------------------------


@pytest.mark.parametrize(
    "build, ref",
    [
        (lambda t: t.expand(3, 4, 5), lambda x: np.broadcast_to(x, (3, 4, 5))),
        (lambda t: t.T, lambda x: x.T),
        (lambda t: t.contiguous(), lambda x: x),
        (lambda t: t.reshape(20).contiguous(), lambda x: x.reshape(20)),
        (lambda t: t.permute(1, 0).reshape(5, 2, 2), lambda x: x.T.reshape(5, 2, 2)),
        (lambda t: t[1:3, ::2], lambda x: x[1:3, ::2]),
        (lambda t: t[None, 2], lambda x: x[None, 2]),
        (lambda t: t.flip(1), lambda x: x[:, ::-1]),
    ],
    ids=[
        "expand",
        "T",
        "contiguous",
        "reshape-contiguous",
        "permute-reshape",
        "slice",
        "index",
        "flip",
    ],
)
def test_view_of_a_realized_buffer_is_no_kernel(build, ref):
    x = rnd(4, 5)
    out = build(Tensor(x))
    assert mlfuse.schedule(out) == []
    np.testing.assert_array_equal(out.numpy(), ref(x))
    # and so is a view of a computed, realized tensor
    y = (Tensor(x) * 2).realize()
    assert mlfuse.schedule(build(y)) == []
    np.testing.assert_array_equal(build(y).numpy(), ref(x * 2))


def test_view_of_a_value_a_kernel_stores_anyway_is_no_extra_kernel():
    x = rnd(4, 5)
    s = Tensor(x).sum(1)
    items = mlfuse.schedule(s, s.reshape(2, 2), s.expand(3, 4))
    assert len(items) == 1
    out = s.expand(3, 4)
    mlfuse.realize(s, out)
    np.testing.assert_allclose(out.numpy(), np.broadcast_to(x.sum(1), (3, 4)), rtol=1e-6)


def test_constants_and_their_views_are_no_kernel():
    out = Tensor.full((64, 64), 2.5)
    assert mlfuse.schedule(out) == []
    np.testing.assert_array_equal(out.numpy(), np.full((64, 64), 2.5, np.float32))
    again = out.realize().reshape(16, 256) * 2  # a realized constant stays a constant
    assert mlfuse.schedule(again) == []
    np.testing.assert_array_equal(again.numpy(), np.full((16, 256), 5.0, np.float32))


@pytest.mark.parametrize(
    "build, shape",
    [
        (lambda: Tensor.zeros((0, 4)).sum(0), (4,)),
        (lambda: Tensor(np.ones((3, 0), np.float32)).sum(1) * 2, (3,)),
        (lambda: (Tensor(np.ones((0, 3), np.float32)).exp() + 1).T, (3, 0)),
        (lambda: Tensor(rnd(4, 4))[4:, :], (0, 4)),
        (lambda: Tensor(rnd(4, 4)).pad(((1, 1), (0, 0)))[:1] * 3, (1, 4)),
    ],
    ids=["sum-of-empty", "empty-axis", "empty-ew", "empty-slice", "reads-only-padding"],
)
def test_zero_size_work_is_no_kernel(build, shape, monkeypatch):
    # a scalar that another test's program of the same form used with another
    # value is a kernel argument (graph.with_dynamic_scalars), and 0 * argument
    # is work: start from a process that has seen no program
    from collections import OrderedDict

    from mlfuse import graph

    monkeypatch.setattr(graph, "_first_scalars", OrderedDict())
    monkeypatch.setattr(graph, "_dynamic", {})
    out = build()
    assert mlfuse.schedule(out) == []
    np.testing.assert_array_equal(out.numpy(), np.zeros(shape, np.float32), strict=True)


def test_zero_size_children_leave_one_kernel():
    x = rnd(4, 4)
    full = Tensor(x) * 2
    empty = full[:, 4:] + 1
    assert len(mlfuse.schedule(full, empty)) == 1
    mlfuse.realize(full, empty)
    np.testing.assert_array_equal(full.numpy(), x * 2)
    assert empty.numpy().shape == (4, 0)


# -- values that reach outputs along several paths are computed once ------------------
# (the programs of tinygrad's test_schedule multiple-paths cases; tinygrad 0.14's counts)


def _paths(name, a, A):
    s = A.astype(np.float64).sum()
    if name == "multiple_paths":
        out0 = a.sum().exp2()
        out1 = a.sum() + out0
        return [out0, out1], [2**s, s + 2**s]
    if name == "multireduce_multiple_paths":
        out0 = a.sum().exp2()
        out1 = a.sum() + out0
        b = a + out0 + out1
        out2 = b.sum().exp2()
        out3 = b.sum() + out2
        s2 = (A + 2**s + s + 2**s).sum()
        return [out0, out1, out2, out3], [2**s, s + 2**s, 2**s2, s2 + 2**s2]
    if name == "midreduce":
        r = a.sum()
        o0 = r.exp2()
        o1 = (a - o0).max()
        m = (A - 2**s).max()
        return [r, o0, o1, r + o1], [s, 2**s, m, s + m]
    rs = A.astype(np.float64).sum(1)
    r = a.sum(axis=1)
    o0 = r.exp2()
    return [r, o0, o0[0] + o0], [rs, 2**rs, 2 ** rs[0] + 2**rs]


@pytest.mark.parametrize(
    "name, kernels",
    [("multiple_paths", 1), ("multireduce_multiple_paths", 1), ("midreduce", 1), ("midshrink", 3)],
)
def test_value_reaching_outputs_along_several_paths_is_computed_once(name, kernels):
    A = rnd(4, 4)
    outs, refs = _paths(name, Tensor(A), A)
    items = mlfuse.schedule(*outs)
    assert len(items) == kernels, [str(i) for i in items]
    mlfuse.realize(*outs)
    for o, r in zip(outs, refs):
        np.testing.assert_allclose(o.numpy(), r, rtol=1e-4, atol=1e-4)


def test_a_long_chain_of_products_of_one_reshaped_view_plans():
    # power iteration on a permuted, flattened weight: each product of the view
    # splits one more space dim, so the planner restarts once per product (it
    # stopped after 16 restarts, which raised "view of reduce" at 16 products)
    rng = np.random.default_rng(0)
    w, u0 = rng.standard_normal((2, 3, 2, 2)), rng.standard_normal(3)
    m = mlfuse.tensor(w).permute(1, 0, 2, 3).flatten(1)
    u, ref = mlfuse.tensor(u0), u0
    mr = w.transpose(1, 0, 2, 3).reshape(3, 8)
    for _ in range(20):
        v = m.T.mv(u)
        v = v / (v * v).sum().sqrt()
        u = m.mv(v)
        u = u / (u * u).sum().sqrt()
        rv = mr.T @ ref
        rv = rv / np.linalg.norm(rv)
        ref = mr @ rv
        ref = ref / np.linalg.norm(ref)
    np.testing.assert_allclose(u.numpy(), ref, rtol=1e-5, atol=1e-6)
