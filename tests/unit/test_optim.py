"""mlfuse.optim against PyTorch's update rules (written out in numpy, and
torch.optim itself where installed), modules' parameters and state, and a
training loop that learns without recompiling as its learning rate changes."""

from __future__ import annotations

import numpy as np
import pytest

import mlfuse
import mlfuse.nn.functional as F
from mlfuse import Tensor, nn, optim

try:
    import torch
except ImportError:  # pragma: no cover - depends on the machine
    torch = None

RNG = np.random.default_rng(3)


def quadratic_grads(p: np.ndarray) -> np.ndarray:
    """The gradient of sum(p**3 / 3 - p) (what the tests minimize)."""
    return p * p - 1.0


def run_ours(opt_cls, p0, steps, lrs=None, **kw):
    p = Tensor(p0.copy(), requires_grad=True)
    opt = opt_cls([p], **kw)
    for s in range(steps):
        if lrs is not None:
            opt.lr = lrs[s]
        opt.zero_grad()
        (p**3 / 3 - p).sum().backward()
        opt.step()
    return p.numpy().astype(np.float64)


def sgd_ref(p, steps, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
    p, b = p.astype(np.float64).copy(), None
    for _ in range(steps):
        g = quadratic_grads(p) + weight_decay * p
        if momentum:
            b = g if b is None else momentum * b + (1 - dampening) * g
            g = g + momentum * b if nesterov else b
        p = p - lr * g
    return p


def adam_ref(p, steps, lrs, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, decoupled=False):
    p = p.astype(np.float64).copy()
    m, v = np.zeros_like(p), np.zeros_like(p)
    for t in range(1, steps + 1):
        lr = lrs[t - 1]
        g = quadratic_grads(p)
        if weight_decay and not decoupled:
            g = g + weight_decay * p
        if decoupled:
            p = p * (1 - lr * weight_decay)
        m = betas[0] * m + (1 - betas[0]) * g
        v = betas[1] * v + (1 - betas[1]) * g * g
        mhat, vhat = m / (1 - betas[0] ** t), v / (1 - betas[1] ** t)
        p = p - lr * mhat / (np.sqrt(vhat) + eps)
    return p


P0 = RNG.uniform(0.2, 2.0, (3, 4))


@pytest.mark.parametrize(
    "kw",
    [
        dict(lr=0.1),
        dict(lr=0.05, momentum=0.9),
        dict(lr=0.05, momentum=0.9, dampening=0.1, weight_decay=0.01),
        dict(lr=0.05, momentum=0.8, nesterov=True),
    ],
)
def test_sgd(kw):
    np.testing.assert_allclose(run_ours(optim.SGD, P0, 7, **kw), sgd_ref(P0, 7, **kw), rtol=1e-5)


@pytest.mark.parametrize("cls", [optim.Adam, optim.AdamW])
def test_adam_with_a_changing_learning_rate(cls):
    lrs = [0.1 * 0.8**s for s in range(8)]
    kw = dict(weight_decay=0.05, betas=(0.8, 0.99))
    got = run_ours(cls, P0, 8, lrs=lrs, **kw)
    want = adam_ref(P0, 8, lrs, decoupled=cls is optim.AdamW, **kw)
    np.testing.assert_allclose(got, want, rtol=1e-5)


@pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
@pytest.mark.parametrize(
    "name,kw",
    [
        ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01)),
        ("Adam", dict(lr=0.05, weight_decay=0.01)),
        ("AdamW", dict(lr=0.05)),
    ],
)
def test_matches_torch_optim(name, kw):
    got = run_ours(getattr(optim, name), P0, 6, **kw)
    p = torch.tensor(P0.copy(), requires_grad=True)
    opt = getattr(torch.optim, name)([p], **kw)
    for _ in range(6):
        opt.zero_grad()
        (p**3 / 3 - p).sum().backward()
        opt.step()
    np.testing.assert_allclose(got, p.detach().numpy(), rtol=1e-5)


def test_optimizer_errors():
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD([], lr=0.1)
    w = Tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError, match="parameter 0 \\(1,\\) is not a leaf that requires grad"):
        optim.SGD([w * 2], lr=0.1)
    with pytest.raises(ValueError, match="lr must be >= 0"):
        optim.Adam([w], lr=-1)
    with pytest.raises(TypeError, match="lr must be a number"):
        optim.Adam([w], lr="fast")
    with pytest.raises(ValueError, match="betas must be two numbers"):
        optim.Adam([w], betas=(0.9, 1.5))
    with pytest.raises(ValueError, match="Nesterov momentum needs a momentum"):
        optim.SGD([w], lr=0.1, nesterov=True)


def test_parameters_without_gradients_are_left_alone():
    a = Tensor([1.0, 2.0], requires_grad=True)
    b = Tensor([3.0], requires_grad=True)
    opt = optim.SGD([a, b], lr=0.5)
    (a * a).sum().backward()
    opt.step()
    np.testing.assert_allclose(a.numpy(), [0.0, 0.0])
    np.testing.assert_allclose(b.numpy(), [3.0])


# ---------------------------------------------------------------------------
# modules and a training loop
# ---------------------------------------------------------------------------


def test_module_parameters_and_state_dict():
    mlfuse.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm2d(3), nn.LayerNorm(3))
    assert all(p.requires_grad and p.is_leaf for p in model.parameters())
    sd = model.state_dict()
    assert set(sd) == {
        "0.weight", "0.bias", "1.weight", "1.bias", "1.running_mean", "1.running_var",
        "1.num_batches_tracked", "2.weight", "2.bias",
    }  # fmt: skip
    assert not sd["1.running_mean"].requires_grad
    copy = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm2d(3), nn.LayerNorm(3))
    copy.load_state_dict({k: v.numpy() for k, v in sd.items()})
    for k, v in copy.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), sd[k].numpy())
    assert all(p.requires_grad and p.is_leaf for p in copy.parameters())
    with pytest.raises(KeyError, match="missing \\['2.bias'\\]"):
        copy.load_state_dict({k: v for k, v in sd.items() if k != "2.bias"})
    with pytest.raises(ValueError, match="0.bias has shape \\(4,\\), the model \\(3,\\)"):
        copy.load_state_dict({**sd, "0.bias": np.zeros(4, np.float32)})


def test_batch_norm_running_stats_are_not_differentiated():
    bn = nn.BatchNorm2d(2)
    x = Tensor(RNG.standard_normal((4, 2, 3, 3)).astype(np.float32), requires_grad=True)
    bn(x).square().sum().backward()
    assert not bn.running_mean.requires_grad and bn.running_mean.grad is None
    assert bn.weight.grad is not None and x.grad is not None
    np.testing.assert_allclose(
        bn.running_mean.numpy(), 0.1 * x.numpy().mean((0, 2, 3)), rtol=1e-5, atol=1e-7
    )


def test_training_learns_in_one_schedule_per_step_without_recompiling(monkeypatch):
    from mlfuse import driver

    monkeypatch.setenv("MLFUSE_CACHE", "0")
    count: list[int] = []
    real = driver.compile_module
    monkeypatch.setattr(driver, "compile_module", lambda *a, **k: count.append(1) or real(*a, **k))
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((128, 6)).astype(np.float32)
    ys = (xs @ rng.standard_normal((6, 3))).argmax(1)
    mlfuse.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
    opt = optim.Adam(model.parameters(), lr=0.05)
    x, y = Tensor(xs), Tensor(ys)
    first = None
    for step in range(40):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.lr = 0.05 * (1 - step / 40)  # a new learning rate every step
        mlfuse.realize(loss, *opt.schedule_step())
        if step == 0:
            first = loss.item()
        if step == 2:
            compiled = len(count)
    assert compiled > 0 and len(count) == compiled  # steps 3..39 reused the compiled step
    assert loss.item() < 0.3 * first
    with mlfuse.no_grad():
        acc = (model(x).argmax(1).numpy() == ys).mean()
    assert acc > 0.9


def test_the_digits_example_trains():
    pytest.importorskip("sklearn")
    import importlib.util
    from pathlib import Path

    path = Path(__file__).parents[2] / "examples" / "train_digits.py"
    spec = importlib.util.spec_from_file_location("train_digits", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.main(["--epochs", "6"]) > 0.93
