"""Assigns take effect in program order; no tensor changes its value after creation.

A lazy expression has the value its inputs had when it was built; an assign
gives its tensor a new value from then on. The numpy model of a program is
therefore eager: every expression is computed where it is written, and an
assign replaces one variable. Reads of the old value (other tensors sharing
the buffer, lazy expressions built before the assign, another assign's value)
must see it however the realizes are grouped.
"""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from movement import property_settings

import mlfuse
from mlfuse import Tensor

A0 = np.arange(4, dtype=np.float32)
B0 = np.arange(4, dtype=np.float32) + 10


def test_swap_through_a_lazy_read():
    """t = a*2 reads a before a is assigned; b gets 2*a0, not 4*b0."""
    a, b = Tensor(A0), Tensor(B0)
    t = a * 2
    a.assign(b * 2)
    b.assign(t)
    mlfuse.realize(a, b)
    np.testing.assert_array_equal(a.numpy(), B0 * 2)
    np.testing.assert_array_equal(b.numpy(), A0 * 2)
    np.testing.assert_array_equal(t.numpy(), A0 * 2)


def test_assign_then_read_old_value_in_a_later_realize():
    a, b = Tensor(A0), Tensor(B0)
    b.assign(a)
    a.assign(a * 2)
    a.realize()
    b.realize()
    np.testing.assert_array_equal(b.numpy(), A0)
    np.testing.assert_array_equal(a.numpy(), A0 * 2)


def test_a_copy_of_a_tensor_keeps_its_value():
    a = Tensor(A0)
    a2 = Tensor(a)
    a.assign(a * 3)
    a.realize()
    np.testing.assert_array_equal(a2.numpy(), A0)
    np.testing.assert_array_equal(a.numpy(), A0 * 3)


def test_two_assigns_to_one_buffer_in_one_realize():
    """a and a2 share a buffer; each assign gives its own tensor its own value."""
    a = Tensor(A0)
    a2 = Tensor(a)
    a.assign(a + 1)
    a2.assign(a2 * 10)
    mlfuse.realize(a, a2)
    np.testing.assert_array_equal(a.numpy(), A0 + 1)
    np.testing.assert_array_equal(a2.numpy(), A0 * 10)


def test_successive_assigns_keep_the_last_value():
    a = Tensor(A0)
    a.assign(a + 1)
    mid = a * 1
    a.assign(a * 10)
    a.realize()
    np.testing.assert_array_equal(a.numpy(), (A0 + 1) * 10)
    np.testing.assert_array_equal(mid.numpy(), A0 + 1)


def test_views_follow_an_assign_and_copies_keep_their_values():
    """``a.T`` is a view (PyTorch's: it shares a's storage), so it sees a's new
    value; ``a.T.contiguous()`` is a copy, realized as a view of a's buffer
    without a kernel, and must keep the old values when a is written in place."""
    a = Tensor(A0.reshape(2, 2)).realize()
    t = a.T.realize()  # a view of a's buffer, no copy
    c = a.T.contiguous().realize()
    assert mlfuse.schedule(a.T) == []
    a.assign(a + 100)
    a.realize()
    np.testing.assert_array_equal(t.numpy(), A0.reshape(2, 2).T + 100)
    np.testing.assert_array_equal(c.numpy(), A0.reshape(2, 2).T)
    np.testing.assert_array_equal(a.numpy(), A0.reshape(2, 2) + 100)


def test_an_argument_returned_as_is_keeps_its_old_value():
    """b = a * 1 is a itself; realized with a's assign, it still holds a's old value."""
    a = Tensor(A0).realize()
    b = a * 1
    a.assign(Tensor.zeros(4))
    mlfuse.realize(a, b)
    np.testing.assert_array_equal(b.numpy(), A0)
    np.testing.assert_array_equal(a.numpy(), np.zeros(4, np.float32))


def test_a_reader_of_the_old_value_runs_before_the_assign_in_one_schedule():
    """u reads a's old value and c's assign; a's assign runs after u's kernel,
    so it must not share a kernel with what c's assign reads."""
    a, c = Tensor(A0), Tensor(B0)
    s = a + a
    c.assign(a + a)
    u = a + c  # c's assign is read only through u
    del c
    a.assign(a + a)
    mlfuse.realize(a, s, u)
    np.testing.assert_array_equal(a.numpy(), A0 * 2)
    np.testing.assert_array_equal(s.numpy(), A0 * 2)
    np.testing.assert_array_equal(u.numpy(), A0 * 3)


def test_assigns_that_read_each_others_old_buffers():
    """c's new value reads b's old one, b's new value reads c's old one (through
    a view, so not in b's kernel's own loop): no order of the two assign
    kernels works, so one old buffer is copied first."""
    a0, b0, c0 = (np.arange(6, dtype=np.float32).reshape(2, 3) + k for k in (0, 10, 20))
    a, b, c = Tensor(a0), Tensor(b0), Tensor(c0)
    t = a + a + c
    c.assign(t + b)
    b.assign(t.flip(0) + t)
    mlfuse.realize(t, b, c)
    t0 = a0 + a0 + c0
    np.testing.assert_array_equal(t.numpy(), t0)
    np.testing.assert_array_equal(c.numpy(), t0 + b0)
    np.testing.assert_array_equal(b.numpy(), np.flip(t0, 0) + t0)


def test_an_unobserved_assign_writes_in_place():
    a = Tensor(A0)
    buf = a.node.buffer
    a.assign(a + 1)
    a.realize()
    assert a.node.buffer is buf
    np.testing.assert_array_equal(a.numpy(), A0 + 1)


def test_an_observed_assign_writes_a_new_buffer():
    a = Tensor(A0)
    buf = a.node.buffer
    keep = a * 1  # lazy: reads the old a later
    a.assign(a + 1)
    a.realize()
    assert a.node.buffer is not buf
    np.testing.assert_array_equal(keep.numpy(), A0)


# -- random programs against numpy ------------------------------------------------

N = 3  # variables


@st.composite
def programs(draw):
    """Statements over variables v0..v2 (each a (2, 3) tensor):
    ("new", i, seed) | ("expr", i, j, k, op) | ("assign", i, j, k, op)
    | ("alias", i, j) | ("realize", [i...]) | ("read", i)."""
    n = draw(st.integers(4, 14))
    out = []
    for _ in range(n):
        kind = draw(st.sampled_from(["expr", "assign", "assign", "alias", "realize", "read"]))
        i, j, k = (draw(st.integers(0, N - 1)) for _ in range(3))
        op = draw(st.sampled_from(["add", "mul", "sub", "T2", "sum", "same", "view", "const"]))
        if kind in ("expr", "assign"):
            out.append((kind, i, j, k, op))
        elif kind == "alias":
            out.append((kind, i, j))
        elif kind == "realize":
            out.append((kind, sorted(set(draw(st.lists(st.integers(0, N - 1), max_size=3))))))
        else:
            out.append((kind, i))
    return out


def _apply(op, x, y, lib):
    if op == "add":
        return x + y
    if op == "mul":
        return x * y * 0.5
    if op == "sub":
        return x - y
    if op == "T2":  # through other views of the operands
        return x.flip(0) + y if lib is Tensor else np.flip(x, 0) + y
    if op == "same":  # folds to x itself: the result is x's buffer
        return x * 1
    if op == "view":  # a view of x: no kernel, x's buffer read through it
        return x.flip(1) if lib is Tensor else np.flip(x, 1)
    if op == "const":  # a constant: no kernel, no buffer of x
        return Tensor.full((2, 3), 1.5) if lib is Tensor else np.full((2, 3), 1.5)
    # a reduce broadcast back
    return x - (x.sum(1, keepdim=True) if lib is Tensor else x.sum(1, keepdims=True))


@property_settings
@given(programs())
def test_random_assign_programs_follow_program_order(program):
    rng = np.random.default_rng(0)
    init = [rng.standard_normal((2, 3)).astype(np.float32) for _ in range(N)]
    ts = [Tensor(x) for x in init]
    xs = [x.astype(np.float64) for x in init]
    for stmt in program:
        kind = stmt[0]
        if kind == "expr":
            _, i, j, k, op = stmt
            ts[i] = _apply(op, ts[j], ts[k], Tensor)
            xs[i] = _apply(op, xs[j], xs[k], np)
        elif kind == "assign":
            _, i, j, k, op = stmt
            ts[i].assign(_apply(op, ts[j], ts[k], Tensor))
            xs[i] = _apply(op, xs[j], xs[k], np)
        elif kind == "alias":
            _, i, j = stmt
            ts[i] = Tensor(ts[j])
            xs[i] = xs[j].copy()
        elif kind == "realize":
            mlfuse.realize(*(ts[i] for i in stmt[1]))
        else:
            i = stmt[1]
            np.testing.assert_allclose(
                ts[i].numpy(), xs[i], rtol=1e-4, atol=1e-4, err_msg=str(program)
            )
    mlfuse.realize(*ts)  # what is still pending, in one schedule
    for t, x in zip(ts, xs):
        np.testing.assert_allclose(t.numpy(), x, rtol=1e-4, atol=1e-4, err_msg=str(program))


def test_views_of_views_follow_writes_through_any_of_them():
    """PyTorch's (and tinygrad's) rows swap: ``tmp = t[0]`` is a view, so after
    ``t[0] = t[1]`` it holds row 1, and ``t[2] = tmp`` copies row 1 again."""
    t = Tensor(np.arange(6.0, dtype=np.float32).reshape(3, 2)).realize()
    tmp = t[0]
    t[0] = t[1]
    t[2] = tmp
    np.testing.assert_array_equal(t.numpy(), [[2, 3], [2, 3], [2, 3]])
    x = Tensor(np.zeros((3, 4), np.float32)).realize()
    flat = x.reshape(12)
    part = flat[3:6]  # a view of a view
    col = x[:, 2]
    x[1] = Tensor(np.full(4, 9.0, np.float32))
    np.testing.assert_array_equal(part.numpy(), [0, 9, 9])
    part[0] = -1.0  # writes reach x, and x's other views
    np.testing.assert_array_equal(x.numpy()[0], [0, 0, 0, -1])
    np.testing.assert_array_equal(col.numpy(), [0, 9, 0])
    np.testing.assert_array_equal(flat.numpy()[:4], [0, 0, 0, -1])
