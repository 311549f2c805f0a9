"""Mixed precision: autocast regions (which ops lower, which stay, nesting,
the older torch.cuda.amp / torch.cpu.amp spellings) and the GradScaler's
scaling, unscaling, skipped steps and scale updates, against float64 numpy."""

from __future__ import annotations

import numpy as np
import pytest

import mlfuse
from mlfuse import Tensor
from mlfuse.amp import GradScaler, autocast

RNG = np.random.default_rng(11)


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def test_products_lower_inside_a_region():
    a, b = f32(4, 8), f32(8, 3)
    ta, tb = Tensor(a), Tensor(b)
    with autocast("cpu"):
        assert mlfuse.is_autocast_enabled("cpu") and not mlfuse.is_autocast_enabled("cuda")
        c = ta @ tb
        assert c.dtype == mlfuse.bfloat16
        assert (ta + tb[0, 0]).dtype == mlfuse.float32  # elementwise ops keep their dtype
        assert (Tensor(a.astype(np.float64)) @ Tensor(b.astype(np.float64))).dtype == mlfuse.float64
        with autocast("cpu", enabled=False):
            assert (ta @ tb).dtype == mlfuse.float32
        assert ta.mm(tb).dtype == mlfuse.bfloat16
    assert not mlfuse.is_autocast_enabled("cpu")
    assert (ta @ tb).dtype == mlfuse.float32
    # bfloat16 operands, float32 accumulation: within bfloat16 rounding of the inputs
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c.float().numpy(), ref, atol=0.05 * np.abs(ref).max())
    with autocast("cpu", dtype=mlfuse.float16):
        assert (ta @ tb).dtype == mlfuse.float16
    with pytest.raises(ValueError, match="autocast dtype must be float16, bfloat16 or float32"):
        autocast("cpu", dtype=mlfuse.int8)
    with pytest.raises(ValueError, match="device_type must be 'cpu' or 'cuda'"):
        autocast("tpu")


def test_region_as_decorator_and_old_spellings():
    @autocast("cpu")
    def product(x, y):
        return x @ y

    assert product(Tensor(f32(2, 2)), Tensor(f32(2, 2))).dtype == mlfuse.bfloat16
    with mlfuse.cpu.amp.autocast():
        assert mlfuse.is_autocast_enabled("cpu")
    with mlfuse.cuda.amp.autocast():
        assert mlfuse.is_autocast_enabled("cuda") and mlfuse.is_autocast_enabled()
        assert mlfuse.get_autocast_dtype("cuda") == mlfuse.float16
    assert isinstance(mlfuse.cuda.amp.GradScaler(), GradScaler)


def _train(scaler, steps, inf_at=None):
    w = Tensor(np.array([[0.5, -0.25]], np.float32), requires_grad=True)
    opt = mlfuse.optim.SGD([w], lr=0.1)
    x = Tensor(np.array([[1.0, 2.0], [3.0, -1.0]], np.float32))
    y = Tensor(np.array([[1.0], [0.0]], np.float32))
    history = []
    for step in range(steps):
        opt.zero_grad()
        loss = ((x @ w.T - y) ** 2).mean()
        scaler.scale(loss).backward()
        if step == inf_at:
            w.grad = w.grad * float("inf")
        before = w.numpy().copy()
        scaler.step(opt)
        scaler.update()
        history.append((before, w.numpy().copy(), scaler.get_scale()))
    return history


def test_grad_scaler_matches_unscaled_training():
    plain = _train(GradScaler("cpu", enabled=False), 3)
    scaled = _train(GradScaler("cpu", init_scale=256.0, growth_interval=2), 3)
    for (_, a, _), (_, b, _) in zip(plain, scaled):
        np.testing.assert_allclose(a, b, rtol=1e-6)  # powers of two: exact unscaling
    assert [s for *_, s in scaled] == [256.0, 512.0, 512.0]  # grows after 2 good steps


def test_grad_scaler_skips_overflowed_steps():
    hist = _train(GradScaler("cpu", init_scale=1024.0), 3, inf_at=1)
    before, after, scale = hist[1]
    np.testing.assert_array_equal(before, after)  # the step was skipped
    assert scale == 512.0 and hist[2][2] == 512.0


def test_grad_scaler_api():
    s = GradScaler("cpu", init_scale=8.0)
    np.testing.assert_allclose(s.scale(Tensor([1.0, 2.0])).numpy(), [8.0, 16.0])
    scaled = s.scale([Tensor([1.0]), (Tensor([2.0]),)])
    assert isinstance(scaled, list) and isinstance(scaled[1], tuple)
    p = Tensor([1.0], requires_grad=True)
    opt = mlfuse.optim.SGD([p], lr=1.0)
    p.grad = Tensor([16.0])
    s.unscale_(opt)
    np.testing.assert_allclose(p.grad.numpy(), [2.0])
    with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called"):
        s.unscale_(opt)
    s.step(opt)
    np.testing.assert_allclose(p.numpy(), [-1.0])
    s.update()
    state = s.state_dict()
    t = GradScaler("cpu")
    t.load_state_dict(state)
    assert t.get_scale() == s.get_scale() and t.state_dict() == state
    assert GradScaler("cpu", enabled=False).get_scale() == 1.0
    assert GradScaler("cpu", enabled=False).state_dict() == {}
    with pytest.raises(ValueError, match="growth_factor must be above 1"):
        GradScaler("cpu", growth_factor=1.0)
    with pytest.raises(ValueError, match="backoff_factor must be in"):
        GradScaler("cpu", backoff_factor=2.0)


def test_layers_lower_and_float32_ops_widen():
    import mlfuse.nn as nn
    import mlfuse.nn.functional as F

    x = Tensor(f32(4, 8))
    lin, conv = nn.Linear(8, 3), nn.Conv2d(3, 4, 3)
    img = Tensor(f32(2, 3, 8, 8))
    with autocast("cpu"):
        y = lin(x)
        assert y.dtype == mlfuse.bfloat16  # weight, bias and input lowered together
        assert conv(img).dtype == mlfuse.bfloat16
        assert y.softmax(-1).dtype == mlfuse.float32 and F.log_softmax(y, 1).dtype == mlfuse.float32
        assert F.layer_norm(y, (3,)).dtype == mlfuse.float32
        loss = F.cross_entropy(y, Tensor([0, 1, 2, 0]))
        assert loss.dtype == mlfuse.float32
    loss.backward()
    assert lin.weight.grad.dtype == mlfuse.float32  # the parameters keep their dtype
    # the region's product is the float32 one within bfloat16 rounding
    ref = x.numpy().astype(np.float64) @ lin.weight.numpy().T.astype(np.float64)
    ref += lin.bias.numpy()
    np.testing.assert_allclose(y.float().numpy(), ref, atol=0.05 * np.abs(ref).max())
    assert lin(x).dtype == mlfuse.float32 and x.softmax(-1).dtype == mlfuse.float32
