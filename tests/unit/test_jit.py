"""mlfuse.jit: capture on the second call, replay after; the same results as
the function itself, re-capture on a new signature, and clear refusals."""

from __future__ import annotations

import numpy as np
import pytest

import mlfuse
import mlfuse.nn.functional as F
from mlfuse import Tensor, graph, nn, optim

RNG = np.random.default_rng(11)


def chain(x, w):
    """Eleven kernels: each contiguous() ends one, and the sum."""
    y = x
    for i in range(10):
        y = (y @ w * 0.5 + i).tanh().contiguous()
    return y, y.sum()


def test_replays_give_the_functions_results_over_many_calls():
    w = Tensor(RNG.standard_normal((8, 8)).astype(np.float32) * 0.5)
    jitted = mlfuse.jit(chain)
    xs = [RNG.standard_normal((4, 8)).astype(np.float32) for _ in range(5)]
    for i in range(1000):
        x = Tensor(xs[i % 5])
        y, s = jitted(x, w)
        if i % 97 == 0 or i > 995:  # the function itself, now and then (it compiles nothing new)
            want_y, want_s = chain(Tensor(xs[i % 5]), w)
            np.testing.assert_allclose(y.numpy(), want_y.numpy(), rtol=1e-6, atol=1e-6)
            np.testing.assert_allclose(s.item(), want_s.item(), rtol=1e-5)
    assert len(jitted.captures) == 1
    (cap,) = jitted.captures.values()
    assert len(cap.runs) == 1  # one program of eleven kernels, replayed
    assert len(cap.runs[0][0].launches) == 11


def test_replay_runs_no_python_of_the_function():
    calls = []

    def f(x):
        calls.append(1)
        return x * 2

    jf = mlfuse.jit(f)
    x = Tensor([1.0, 2.0])
    for _ in range(5):
        out = jf(x)
    assert len(calls) == 2  # warm-up and capture
    np.testing.assert_allclose(out.numpy(), [2.0, 4.0])


def test_a_new_signature_is_captured_anew():
    jf = mlfuse.jit(lambda x, k: x * k + 1)
    for _ in range(3):
        np.testing.assert_allclose(jf(Tensor([1.0, 2.0]), 3).numpy(), [4.0, 7.0])
    for _ in range(3):  # a new shape
        np.testing.assert_allclose(jf(Tensor([1.0, 2.0, 3.0]), 3).numpy(), [4.0, 7.0, 10.0])
    for _ in range(3):  # a new Python value
        np.testing.assert_allclose(jf(Tensor([1.0, 2.0]), 5).numpy(), [6.0, 11.0])
    for _ in range(3):  # a new dtype
        assert jf(Tensor([1, 2]), 3).numpy().tolist() == [4, 7]
    assert len(jf.captures) == 4


def test_a_training_step_replays_with_the_current_learning_rate():
    xs = RNG.standard_normal((32, 6)).astype(np.float32)
    ys = (xs @ RNG.standard_normal((6, 3))).argmax(1)

    def make():
        mlfuse.manual_seed(1)
        model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
        opt = optim.AdamW(model.parameters(), lr=0.01)

        def step(x, y):
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            mlfuse.realize(loss, *opt.schedule_step())
            return loss

        return model, opt, step

    m1, o1, plain = make()
    m2, o2, step = make()
    jitted = mlfuse.jit(step)
    for i in range(25):
        o1.lr = o2.lr = 0.01 * (1 - i / 30)
        a = plain(Tensor(xs), Tensor(ys)).item()
        b = jitted(Tensor(xs), Tensor(ys)).item()
        assert b == pytest.approx(a, rel=1e-5, abs=1e-6)
    for p, q in zip(m1.parameters(), m2.parameters()):
        np.testing.assert_allclose(q.numpy(), p.numpy(), rtol=1e-5, atol=1e-6)


def test_capture_refuses_what_a_replay_could_not_repeat():
    w = Tensor([1.0, 2.0]).realize()
    old = []

    def keeps_old_value(x):
        old.append(Tensor(w.node))  # the old value stays observable: the assign copies
        w.assign(w + x)
        w.realize()
        return w

    jf = mlfuse.jit(keeps_old_value)
    jf(Tensor([1.0, 1.0]))
    with pytest.raises(RuntimeError, match="an assign in the jitted function wrote a new buffer"):
        jf(Tensor([1.0, 1.0]))
    with pytest.raises(TypeError, match="must return a Tensor, a tuple, list or dict of Tensors"):
        bad = mlfuse.jit(lambda x: x.sum().item())
        bad(Tensor([1.0]))
        bad(Tensor([1.0]))
    with pytest.raises(TypeError, match="argument 1\\[0\\] \\(set\\) is not hashable"):
        mlfuse.jit(lambda x, k: x)(Tensor([1.0]), [{1, 2}])


def test_containers_methods_and_random_draws():
    # tensors inside lists and dicts, a dict returned, a jitted method (per instance)
    @mlfuse.jit
    def f(xs, d):
        return {"sum": (xs[0] + xs[1] * d["scale"]).realize()}

    for i in range(4):
        a, b, s = (Tensor(np.full(3, v, np.float32)) for v in (i, 2 * i, 3.0))
        np.testing.assert_allclose(f([a, b], {"scale": s})["sum"].numpy(), [7.0 * i] * 3)

    class Model:
        def __init__(self, k):
            self.w = Tensor(np.full(2, k, np.float32))

        @mlfuse.jit
        def __call__(self, x):
            return (x * self.w).realize()

    m2, m3 = Model(2.0), Model(3.0)
    for i in range(4):
        x = Tensor(np.full(2, i, np.float32))
        np.testing.assert_allclose(m2(x).numpy(), [2.0 * i] * 2)
        np.testing.assert_allclose(m3(x).numpy(), [3.0 * i] * 2)

    # every replay draws its random tensors again: a new dropout mask, new noise
    @mlfuse.jit
    def noisy(x):
        return (F.dropout(x, 0.5, training=True) + Tensor.rand(64) * 0).realize()

    masks = {tuple(noisy(Tensor.ones(64)).numpy().tolist()) for _ in range(5)}
    assert len(masks) == 5


def test_reset_and_nesting():
    inner = mlfuse.jit(lambda x: x + 1)
    outer = mlfuse.jit(lambda x: inner(x) * 2)
    for _ in range(4):
        np.testing.assert_allclose(outer(Tensor([1.0])).numpy(), [4.0])
    outer.reset()
    assert not outer.captures
    np.testing.assert_allclose(outer(Tensor([2.0])).numpy(), [6.0])
    assert graph._recording is None


# ---------------------------------------------------------------------------
# scalars that change do not recompile
# ---------------------------------------------------------------------------


def compiles(monkeypatch) -> list[int]:
    """Count the schedules compiled from here on (none is loaded from disk)."""
    from mlfuse import driver

    monkeypatch.setenv("MLFUSE_CACHE", "0")
    count: list[int] = []
    real = driver.compile_module

    def counting(*args, **kwargs):
        count.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(driver, "compile_module", counting)
    return count


def test_a_changing_python_scalar_compiles_once_more_not_every_time(monkeypatch):
    count = compiles(monkeypatch)
    w = Tensor(np.full(8, 1.25, np.float32)).realize()
    x = Tensor(np.arange(8, dtype=np.float32))
    ref = np.full(8, 1.25)
    for step in range(100):
        lr = 0.1 / (1 + step)  # a new Python float every step
        w.assign(w - lr * (w * x - 1.0))
        w.realize()
        ref = ref - lr * (ref * np.arange(8) - 1)
    # the first value is compiled in; the first change makes it an argument (a
    # form met before, in another test, may be dynamic from the start)
    assert 1 <= len(count) <= 2
    np.testing.assert_allclose(w.numpy(), ref, rtol=1e-5)


def test_scalars_that_never_change_stay_folded():
    x = Tensor(RNG.standard_normal(16).astype(np.float32))
    for k in (2.0, 3.0, 5.0):
        y = x * k + 1.0
        np.testing.assert_allclose(y.numpy(), x.numpy() * k + 1.0, rtol=1e-6)
    ir = mlfuse.schedule_ir(x * 7.0 + 1.0)
    # the multiplier varied: it is read from a buffer; the + 1.0 never did
    assert "1.000000e+00" in ir
    assert "7.000000e+00" not in ir


def test_a_step_with_batch_norm_replays():
    """Batch norm updates its running statistics in the forward pass: the
    realize of the step does that write too (it is pending), so the
    parameters are still updated in place and the step can be captured."""
    xs = RNG.standard_normal((8, 1, 4, 4)).astype(np.float32)
    ys = RNG.integers(0, 2, 8)

    def make():
        mlfuse.manual_seed(2)
        model = nn.Sequential(
            nn.Conv2d(1, 2, 3, padding=1), nn.BatchNorm2d(2), nn.ReLU(), nn.Flatten(),
            nn.Linear(32, 2),
        )  # fmt: skip
        opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

        def step(x, y):
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            mlfuse.realize(loss, *opt.schedule_step())
            return loss

        return model, step

    m1, plain = make()
    m2, step = make()
    jitted = mlfuse.jit(step)
    for _ in range(5):
        a = plain(Tensor(xs), Tensor(ys)).item()
        b = jitted(Tensor(xs), Tensor(ys)).item()
        assert b == pytest.approx(a, rel=1e-5, abs=1e-6)
    assert jitted.captures  # captured, not refused
    for k, v in m1.state_dict().items():
        np.testing.assert_allclose(m2.state_dict()[k].numpy(), v.numpy(), rtol=1e-5, atol=1e-6)
    assert m1._layers[1].running_mean.node.realized  # done with each step, not left to grow


def test_writes_pending_before_a_capture_are_not_replayed():
    jf = mlfuse.jit(lambda x: x * 2)
    jf(Tensor([1.0]))  # warm-up
    w = Tensor([1.0]).realize()
    w.assign(w + 1)  # pending when the capture starts: done once, not captured
    for _ in range(4):
        np.testing.assert_allclose(jf(Tensor([3.0])).numpy(), [6.0])
    np.testing.assert_allclose(w.numpy(), [2.0])


def test_prune_runs_what_does_not_depend_on_the_call_once():
    w = Tensor(np.arange(4, dtype=np.float32)).realize()
    count = Tensor(np.zeros((), np.float32)).realize()

    def f(x):
        doubled = (w * 2).contiguous().realize()  # depends on no argument: pruned
        count.assign(count + 1).realize()  # writes a buffer it reads: kept
        return (doubled + x).realize()

    plain, pruned = mlfuse.jit(f), mlfuse.jit(prune=True)(f)
    for i in range(4):
        x = Tensor(np.full(4, i, np.float32))
        np.testing.assert_allclose(plain(x).numpy(), np.arange(4) * 2 + i)
        np.testing.assert_allclose(pruned(x).numpy(), np.arange(4) * 2 + i)
    (cap_plain,) = plain.captures.values()
    (cap_pruned,) = pruned.captures.values()
    assert len(cap_pruned.runs) == len(cap_plain.runs) - 1
    assert float(count.numpy()) == 8  # every call of both counted


def test_setitem_into_an_argument_made_by_zeros_contiguous():
    # tinygrad's idiom for a cache: Tensor.zeros(...).contiguous().realize() is a buffer
    # of its own (not a broadcast constant), so a jitted write into it is in place
    @mlfuse.jit
    def f(t, a):
        t[2:4, 3:5] = a
        return t

    for i in range(1, 6):
        t = Tensor.zeros(6, 6).contiguous().realize()
        assert t.node.arg is None and t.node.buffer.size == 36
        f(t, Tensor.full((2, 2), fill_value=float(i)).contiguous())
        want = np.zeros((6, 6), np.float32)
        want[2:4, 3:5] = i
        np.testing.assert_array_equal(t.numpy(), want)
