"""mlfuse.optim against PyTorch's (and tinygrad's) update rules, written out in
float64 numpy, and against torch.optim (and tinygrad) themselves where installed:
every optimizer over eight steps with a new learning rate each, parameter
groups, state dicts (a torch optimizer's loads), bad arguments; hyperparameters
changed every step compile nothing new; modules' parameters and state, and a
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


def sgd_ref(
    p, steps, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False,
    classic=False,
):  # fmt: skip
    lrs = lr if isinstance(lr, list) else [lr] * steps
    p, b = p.astype(np.float64).copy(), None
    for s in range(steps):
        g = quadratic_grads(p) * (-1 if maximize else 1) + weight_decay * p
        if classic:
            g = g * lrs[s]
        if momentum:
            b = g if b is None else momentum * b + (1 - dampening) * g
            g = g + momentum * b if nesterov else b
        p = p - (g if classic else lrs[s] * g)
    return p


def adam_ref(
    p, steps, lrs, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, decoupled=False,
    amsgrad=False, maximize=False, decoupled_weight_decay=False,
):  # fmt: skip
    decoupled = decoupled or decoupled_weight_decay
    p = p.astype(np.float64).copy()
    m, v, vmax = np.zeros_like(p), np.zeros_like(p), np.zeros_like(p)
    for t in range(1, steps + 1):
        lr = lrs[t - 1]
        g = quadratic_grads(p) * (-1 if maximize else 1)
        if weight_decay and not decoupled:
            g = g + weight_decay * p
        if decoupled:
            p = p * (1 - lr * weight_decay)
        m = betas[0] * m + (1 - betas[0]) * g
        v = betas[1] * v + (1 - betas[1]) * g * g
        vmax = np.maximum(vmax, v)
        mhat, vhat = m / (1 - betas[0] ** t), (vmax if amsgrad else v) / (1 - betas[1] ** t)
        p = p - lr * mhat / (np.sqrt(vhat) + eps)
    return p


# PyTorch's update rules (torch.optim's documentation and _single_tensor_* code),
# in float64 numpy: p0, the number of steps, the learning rate of each step


def rmsprop_ref(p, steps, lrs, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0,
                centered=False):  # fmt: skip
    p = p.copy()
    sq, ga, buf = np.zeros_like(p), np.zeros_like(p), np.zeros_like(p)
    for s in range(steps):
        g = quadratic_grads(p) + weight_decay * p
        sq = alpha * sq + (1 - alpha) * g * g
        if centered:
            ga = alpha * ga + (1 - alpha) * g
            avg = np.sqrt(sq - ga * ga) + eps
        else:
            avg = np.sqrt(sq) + eps
        if momentum:
            buf = momentum * buf + g / avg
            p = p - lrs[s] * buf
        else:
            p = p - lrs[s] * g / avg
    return p


def adagrad_ref(p, steps, lrs, lr_decay=0.0, weight_decay=0.0, initial_accumulator_value=0.0,
                eps=1e-10):  # fmt: skip
    p = p.copy()
    acc = np.full_like(p, initial_accumulator_value)
    for t in range(1, steps + 1):
        g = quadratic_grads(p) + weight_decay * p
        clr = lrs[t - 1] / (1 + (t - 1) * lr_decay)
        acc = acc + g * g
        p = p - clr * g / (np.sqrt(acc) + eps)
    return p


def adadelta_ref(p, steps, lrs, rho=0.9, eps=1e-6, weight_decay=0.0):
    p = p.copy()
    sq, acc = np.zeros_like(p), np.zeros_like(p)
    for s in range(steps):
        g = quadratic_grads(p) + weight_decay * p
        sq = rho * sq + (1 - rho) * g * g
        delta = np.sqrt(acc + eps) / np.sqrt(sq + eps) * g
        acc = rho * acc + (1 - rho) * delta * delta
        p = p - lrs[s] * delta
    return p


def adamax_ref(p, steps, lrs, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
    p = p.copy()
    m, u = np.zeros_like(p), np.zeros_like(p)
    for t in range(1, steps + 1):
        g = quadratic_grads(p) + weight_decay * p
        m = betas[0] * m + (1 - betas[0]) * g
        u = np.maximum(betas[1] * u, np.abs(g) + eps)
        p = p - lrs[t - 1] / (1 - betas[0] ** t) * m / u
    return p


def nadam_ref(p, steps, lrs, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
              momentum_decay=4e-3, decoupled_weight_decay=False):  # fmt: skip
    p = p.copy()
    (b1, b2), m, v, mu_product = betas, np.zeros_like(p), np.zeros_like(p), 1.0
    for t in range(1, steps + 1):
        lr, g = lrs[t - 1], quadratic_grads(p)
        if decoupled_weight_decay:
            p = p * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * p
        mu = b1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))
        mu_next = b1 * (1 - 0.5 * 0.96 ** ((t + 1) * momentum_decay))
        mu_product *= mu
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        denom = np.sqrt(v / (1 - b2**t)) + eps
        p = p - lr * (1 - mu) / (1 - mu_product) * g / denom
        p = p - lr * mu_next / (1 - mu_product * mu_next) * m / denom
    return p


def radam_ref(p, steps, lrs, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
              decoupled_weight_decay=False):  # fmt: skip
    p = p.copy()
    (b1, b2), m, v = betas, np.zeros_like(p), np.zeros_like(p)
    rho_inf = 2 / (1 - b2) - 1
    for t in range(1, steps + 1):
        lr, g = lrs[t - 1], quadratic_grads(p)
        if decoupled_weight_decay:
            p = p * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * p
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        bc1, bc2 = 1 - b1**t, 1 - b2**t
        rho_t = rho_inf - 2 * t * b2**t / bc2
        if rho_t > 5:
            rect = np.sqrt(
                (rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)
            )
            p = p - m / bc1 * lr * np.sqrt(bc2) / (np.sqrt(v) + eps) * rect
        else:
            p = p - m / bc1 * lr
    return p


# tinygrad's rules (tinygrad/nn/optim.py)


def lamb_ref(p, steps, lrs, b1=0.9, b2=0.999, eps=1e-6, weight_decay=0.0, adam=False):
    p = p.copy()
    m, v = np.zeros_like(p), np.zeros_like(p)
    for t in range(1, steps + 1):
        g = quadratic_grads(p)
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        up = m / (1 - b1**t) / (np.sqrt(v / (1 - b2**t)) + eps) + weight_decay * p
        r1, r2 = np.linalg.norm(p), np.linalg.norm(up)
        r = 1.0 if adam or r1 == 0 or r2 == 0 else r1 / r2
        p = p - lrs[t - 1] * r * up
    return p


def lars_ref(p, steps, lrs, momentum=0.9, weight_decay=1e-4, nesterov=False, classic=True,
             pre_wd=True, tcoef=1e-3):  # fmt: skip
    p = p.copy()
    b = np.zeros_like(p)
    for s in range(steps):
        lr, g = lrs[s], quadratic_grads(p)
        r1, r2 = np.linalg.norm(p), np.linalg.norm(g)
        r = tcoef * r1 / (r2 + weight_decay * r1) if tcoef and r1 > 0 and r2 > 0 else 1.0
        if pre_wd:
            g = g + weight_decay * p
        if classic:
            g = g * r * lr
        if momentum:
            b = momentum * b + g
            g = g + momentum * b if nesterov else b
        if not pre_wd:
            p = p * (1 - weight_decay * lr)
        if not classic:
            g = g * r * lr
        p = p - g
    return p


P0 = RNG.uniform(0.2, 2.0, (3, 4))
STEPS = 8


def lrs_for(name):
    base = {"Adadelta": 1.0, "Adagrad": 0.1, "LARS": 0.5}.get(name, 0.05)
    return [base * 0.9**s for s in range(STEPS)]  # a new learning rate every step


def reference(name, p0, lrs, **kw):
    kw = dict(kw)
    if name in ("SGD", "Adam", "AdamW"):
        if name == "AdamW":
            kw.setdefault("weight_decay", 0.01)
            kw["decoupled"] = True
        return (sgd_ref if name == "SGD" else adam_ref)(p0, len(lrs), lrs, **kw)
    fn = {
        "RMSprop": rmsprop_ref, "Adagrad": adagrad_ref, "Adadelta": adadelta_ref,
        "Adamax": adamax_ref, "NAdam": nadam_ref, "RAdam": radam_ref, "LAMB": lamb_ref,
        "LARS": lars_ref,
    }[name]  # fmt: skip
    return fn(p0, len(lrs), lrs, **kw)


CASES = [
    ("SGD", dict(momentum=0.9, dampening=0.1, weight_decay=0.01)),
    ("SGD", dict(momentum=0.8, nesterov=True, maximize=True)),
    ("SGD", dict(momentum=0.9, weight_decay=0.01, classic=True)),
    ("Adam", dict(amsgrad=True, weight_decay=0.05)),
    ("Adam", dict(decoupled_weight_decay=True, weight_decay=0.1, maximize=True)),
    ("AdamW", dict(amsgrad=True, betas=(0.8, 0.99))),
    ("RMSprop", dict()),
    ("RMSprop", dict(alpha=0.9, momentum=0.5, centered=True, weight_decay=0.01)),
    ("Adagrad", dict(lr_decay=0.1, weight_decay=0.01, initial_accumulator_value=0.1)),
    ("Adadelta", dict(rho=0.8, weight_decay=0.01)),
    ("Adamax", dict(betas=(0.8, 0.99), weight_decay=0.01)),
    ("NAdam", dict(weight_decay=0.01)),
    ("NAdam", dict(weight_decay=0.1, momentum_decay=0.01, decoupled_weight_decay=True)),
    # betas[1] = 0.99: the variance is rectified from step 6 on
    ("RAdam", dict(betas=(0.9, 0.99), weight_decay=0.01)),
    ("RAdam", dict(betas=(0.9, 0.99), weight_decay=0.1, decoupled_weight_decay=True)),
    ("LAMB", dict(weight_decay=0.01)),
    ("LAMB", dict(b1=0.8, adam=True)),
    ("LARS", dict()),
    ("LARS", dict(weight_decay=0.01, nesterov=True, classic=False, pre_wd=False, tcoef=0.01)),
]
TORCH_CASES = [(n, kw) for n, kw in CASES if n not in ("LAMB", "LARS") and "classic" not in kw]


def case_id(c):
    return c[0] + "-" + "-".join(f"{k}={v}" for k, v in c[1].items())


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


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_against_the_update_rule(case):
    """Eight steps, a new learning rate each, against the rule in float64 numpy."""
    name, kw = case
    lrs = lrs_for(name)
    got = run_ours(getattr(optim, name), P0, STEPS, lrs=lrs, lr=lrs[0], **kw)
    np.testing.assert_allclose(got, reference(name, P0, lrs, **kw), rtol=1e-7, atol=1e-12)


def run_torch(name, p0, lrs, **kw):
    p = torch.tensor(p0.copy(), requires_grad=True)
    opt = getattr(torch.optim, name)([p], lr=lrs[0], **kw)
    for lr in lrs:
        for g in opt.param_groups:
            g["lr"] = lr
        opt.zero_grad()
        (p**3 / 3 - p).sum().backward()
        opt.step()
    return p, opt


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


@pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
@pytest.mark.parametrize("case", TORCH_CASES, ids=case_id)
def test_against_torch_optim(case):
    """The same eight steps against torch.optim, float64 both."""
    name, kw = case
    lrs = lrs_for(name)
    got = run_ours(getattr(optim, name), P0, STEPS, lrs=lrs, lr=lrs[0], **kw)
    p, _ = run_torch(name, P0, lrs, **kw)
    np.testing.assert_allclose(got, p.detach().numpy(), rtol=1e-7, atol=1e-12)


@pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
@pytest.mark.parametrize("name", ["Adam", "NAdam", "RAdam"])
def test_float32_parameters_against_torch(name):
    """Float32 parameters: the bias corrections, computed on the device in
    float32 (from log(beta), without cancellation), stay within float32 noise
    of PyTorch's float64 ones."""
    p0 = P0.astype(np.float32)
    lrs = [0.01] * 12
    kw = dict(betas=(0.9, 0.99) if name == "RAdam" else (0.9, 0.999))
    got = run_ours(getattr(optim, name), p0, 12, lrs=lrs, lr=0.01, **kw)
    p, _ = run_torch(name, p0, lrs, **kw)
    np.testing.assert_allclose(got, p.detach().numpy(), rtol=2e-6)


@pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
@pytest.mark.parametrize(
    "name,kw",
    [
        ("SGD", dict(momentum=0.9)),
        ("Adam", dict(amsgrad=True)),
        ("RMSprop", dict(momentum=0.5, centered=True)),
        ("Adagrad", dict(lr_decay=0.1)),
        ("Adadelta", dict()),
        ("Adamax", dict()),
        ("NAdam", dict()),
        ("RAdam", dict(betas=(0.9, 0.99))),
    ],
)
def test_loads_a_torch_state_dict(name, kw):
    """Three steps in PyTorch, its state dict loaded here, three more steps in
    both: the same parameters (state names, step counts, NAdam's mu_product)."""
    lrs = lrs_for(name)
    p_t, opt_t = run_torch(name, P0, lrs[:3], **kw)
    p = Tensor(p_t.detach().numpy().copy(), requires_grad=True)
    opt = getattr(optim, name)([p], lr=lrs[0], **kw)
    opt.load_state_dict(opt_t.state_dict())
    for lr in lrs[3:6]:
        for g in opt.param_groups + opt_t.param_groups:
            g["lr"] = lr
        for q, o in ((p, opt), (p_t, opt_t)):
            o.zero_grad()
            (q**3 / 3 - q).sum().backward()
            o.step()
    np.testing.assert_allclose(p.numpy(), p_t.detach().numpy(), rtol=1e-7)
    ours = opt.state_dict()["state"][0]
    assert set(ours) <= set(opt_t.state_dict()["state"][0])


@pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
def test_parameter_groups_against_torch():
    """Two groups with their own lr and momentum, one lr set through
    param_groups each step, as a scheduler does."""
    a0, b0 = P0[:2].copy(), P0[2:].copy()

    def run(mod, T):
        a, b = T(a0.copy(), requires_grad=True), T(b0.copy(), requires_grad=True)
        opt = mod.SGD(
            [{"params": [a]}, {"params": [b], "lr": 0.01, "momentum": 0.5}],
            lr=0.05, momentum=0.9, weight_decay=0.01,
        )  # fmt: skip
        for s in range(5):
            opt.param_groups[1]["lr"] = 0.01 * (s + 1)
            opt.zero_grad()
            ((a**3 / 3 - a).sum() + (b**3 / 3 - b).sum()).backward()
            opt.step()
        return a, b

    a, b = run(optim, Tensor)
    ta, tb = run(torch.optim, torch.tensor)
    np.testing.assert_allclose(a.numpy(), ta.detach().numpy(), rtol=1e-7)
    np.testing.assert_allclose(b.numpy(), tb.detach().numpy(), rtol=1e-7)


TINYGRAD_CASES = [
    ("LAMB", dict(lr=0.02, weight_decay=0.01)),
    ("LAMB", dict(lr=0.02, b1=0.8, adam=True)),
    ("LARS", dict(lr=0.5)),
    ("SGD", dict(lr=0.05, momentum=0.9, weight_decay=0.01, classic=True)),
    ("Adam", dict(lr=0.02, b1=0.8, b2=0.99)),  # tinygrad's spelling of betas
    ("AdamW", dict(lr=0.02, b1=0.8, weight_decay=0.05)),
]


@pytest.mark.parametrize("case", TINYGRAD_CASES, ids=case_id)
def test_against_tinygrad(case):
    """LAMB, LARS, classic SGD and the b1/b2 spellings against tinygrad's
    optimizers (float32)."""
    name, kw = case
    tg = pytest.importorskip("tinygrad")
    from tinygrad.helpers import Context

    p0 = P0.astype(np.float32)
    got = run_ours(getattr(optim, name), p0, 5, **kw)
    with Context(TRAINING=1):
        p = tg.Tensor(p0.copy())
        opt = getattr(tg.nn.optim, name)([p], **kw)
        for _ in range(5):
            opt.zero_grad()
            (p * p * p / 3 - p).sum().backward()
            opt.step()
        want = p.numpy()
    np.testing.assert_allclose(got, want, rtol=2e-5)


def test_changing_hyperparameters_compiles_nothing_new(monkeypatch):
    """The learning rate, momentum/betas and weight decay set every step (as
    schedulers do): after the first two steps no optimizer compiles anything."""
    from mlfuse import driver

    monkeypatch.setenv("MLFUSE_CACHE", "0")
    count: list[int] = []
    real = driver.compile_module
    monkeypatch.setattr(driver, "compile_module", lambda *a, **k: count.append(1) or real(*a, **k))
    for name, kw in CASES:
        p = Tensor(P0.copy(), requires_grad=True)
        opt = getattr(optim, name)([p], **kw)
        g = opt.param_groups[0]
        for s in range(5):
            g["lr"] = 0.0123 + 0.001 * s
            if "betas" in g:
                g["betas"] = (0.85 + 0.01 * s, 0.98 + 0.001 * s)
            if g.get("momentum"):
                g["momentum"] = 0.5 + 0.1 * s
            if g.get("weight_decay"):
                g["weight_decay"] = 0.01 * (s + 1)
            opt.zero_grad()
            (p**3 / 3 - p).sum().backward()
            opt.step()
            if s == 1:
                compiled = len(count)
        assert len(count) == compiled, f"{name} {kw} compiled after its second step"
        assert np.isfinite(p.numpy()).all()


def test_optimizer_errors():
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD([], lr=0.1)
    w = Tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError, match="parameter 0 \\(1,\\) is not a leaf \\(it is computed"):
        optim.SGD([w * 2], lr=0.1)
    with pytest.raises(ValueError, match="lr must be >= 0"):
        optim.Adam([w], lr=-1)
    with pytest.raises(TypeError, match="lr must be a number"):
        optim.Adam([w], lr="fast")
    with pytest.raises(ValueError, match="betas must be two numbers"):
        optim.Adam([w], betas=(0.9, 1.5))
    with pytest.raises(ValueError, match="Nesterov momentum needs a momentum"):
        optim.SGD([w], lr=0.1, nesterov=True)


@pytest.mark.parametrize(
    "make,err,match",
    [
        (lambda w: optim.RMSprop([w], lr=-0.1), ValueError, "RMSprop: lr must be >= 0, got -0.1"),
        (lambda w: optim.RMSprop([w], alpha=-1), ValueError, "RMSprop: alpha must be >= 0"),
        (lambda w: optim.RMSprop([w], momentum=-0.5), ValueError, "RMSprop: momentum must be >= 0"),
        (lambda w: optim.Adagrad([w], lr_decay=-1), ValueError, "Adagrad: lr_decay must be >= 0"),
        (lambda w: optim.Adagrad([w], initial_accumulator_value=-1), ValueError,
         "initial_accumulator_value must be >= 0"),
        (lambda w: optim.Adadelta([w], rho=1.5), ValueError, "Adadelta: rho must be <= 1, got 1.5"),
        (lambda w: optim.Adamax([w], betas=(1.0, 0.9)), ValueError,
         "Adamax: betas must be two numbers in \\[0, 1\\)"),
        (lambda w: optim.NAdam([w], betas=(0.9, -0.1)), ValueError, "NAdam: betas must be two"),
        (lambda w: optim.NAdam([w], momentum_decay=-1), ValueError, "momentum_decay must be >= 0"),
        (lambda w: optim.RAdam([w], eps=-1e-8), ValueError, "RAdam: eps must be >= 0"),
        (lambda w: optim.RAdam([w], betas=0.9), ValueError, "RAdam: betas must be two numbers"),
        (lambda w: optim.AdamW([w], weight_decay=-0.01), ValueError,
         "AdamW: weight_decay must be >= 0"),
        (lambda w: optim.Adam([w], amsgrad="yes"), TypeError, "amsgrad must be True or False"),
        (lambda w: optim.LAMB([w], b1=1.0), ValueError, "LAMB: betas must be two numbers"),
        (lambda w: optim.LARS([w], tcoef=-1), ValueError, "LARS: tcoef must be >= 0"),
        (lambda w: optim.SGD([w], lr=0.1, momentun=0.9), TypeError, "momentun"),
        (lambda w: optim.SGD([{"params": [w], "momentun": 0.9}], lr=0.1), ValueError,
         "SGD: unknown hyperparameter 'momentun' in a parameter group \\(SGD's are"),
        (lambda w: optim.SGD([{"lr": 0.1}]), ValueError, "a parameter group needs its 'params'"),
        (lambda w: optim.SGD([{"params": [w]}, {"params": [w]}]), ValueError,
         "SGD: some parameters appear in more than one parameter group"),
        (lambda w: optim.Muon([w]), ValueError, "Muon only supports 2-D parameters"),
        (lambda w: optim.Muon([w.reshape(1, 1).detach()], ns_steps=100), ValueError,
         "Muon: ns_steps must be in \\[0, 100\\), got 100"),
        (lambda w: optim.Muon([w.reshape(1, 1).detach()], ns_coefficients=(1, 2)), ValueError,
         "Muon: ns_coefficients must be 3 numbers"),
        (lambda w: optim.Muon([w.reshape(1, 1).detach()], adjust_lr_fn="fast"), ValueError,
         "adjust_lr_fn must be None, 'original' or 'match_rms_adamw'"),
        (lambda w: optim.SGD(w), TypeError, "params must be an iterable of Tensors or dicts"),
        (lambda w: optim.Adam([w], differentiable=True), NotImplementedError,
         "Adam: differentiable=True"),
    ],
)  # fmt: skip
def test_bad_arguments_name_the_problem(make, err, match):
    w = Tensor([1.0], requires_grad=True)
    with pytest.raises(err, match=match):
        make(w)


def test_setting_a_bad_hyperparameter_between_steps_is_refused():
    w = Tensor([1.0], requires_grad=True)
    opt = optim.Adam([w], lr=0.1)
    with pytest.raises(ValueError, match="Adam: betas must be two numbers"):
        opt.param_groups[0]["betas"] = (0.9, 1.0)
    with pytest.raises(TypeError, match="Adam: lr must be a number, got str"):
        opt.lr = "0.1"
    with pytest.raises(ValueError, match="Adam: weight_decay must be >= 0"):
        opt.param_groups[0].update(weight_decay=-1)
    assert opt.lr == 0.1 and opt.param_groups[0]["betas"] == (0.9, 0.999)
    # a learning rate below zero later is PyTorch's too (OneCycleLR's last linear step)
    opt.param_groups[0]["lr"] = -1e-4
    assert opt.lr == -1e-4


def test_parameters_without_gradients_are_left_alone():
    a = Tensor([1.0, 2.0], requires_grad=True)
    b = Tensor([3.0], requires_grad=True)
    opt = optim.SGD([a, b], lr=0.5)
    (a * a).sum().backward()
    opt.step()
    np.testing.assert_allclose(a.numpy(), [0.0, 0.0])
    np.testing.assert_allclose(b.numpy(), [3.0])


def test_parameter_groups_lr_and_named_parameters():
    a = Tensor([1.0, 2.0], requires_grad=True)
    b = Tensor([3.0], requires_grad=True)
    opt = optim.SGD([{"params": [("a", a)]}, {"params": [("b", b)], "lr": 0.25}], lr=0.5)
    assert opt.param_groups[0]["param_names"] == ["a"] and opt.param_groups[1]["lr"] == 0.25
    assert opt.defaults["lr"] == 0.5 and opt.lr == 0.5
    ((a * a).sum() + (b * b).sum()).backward()
    opt.step()
    np.testing.assert_allclose(a.numpy(), [0.0, 0.0])  # a - 0.5 * 2a
    np.testing.assert_allclose(b.numpy(), [1.5])  # b - 0.25 * 2b
    opt.lr = 0.1  # every group's
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.1]
    c = Tensor([1.0], requires_grad=True)
    opt.add_param_group({"params": c, "lr": 1.0})
    assert opt.param_groups[2]["params"] == [c] and opt.param_groups[2]["momentum"] == 0.0
    assert len(opt.params) == 3


def test_zero_grad_to_zeros_and_step_with_a_closure():
    w = Tensor([1.0, 2.0], requires_grad=True)
    opt = optim.SGD([w], lr=0.1)
    (w * w).sum().backward()
    opt.zero_grad(set_to_none=False)
    np.testing.assert_array_equal(w.grad.numpy(), [0.0, 0.0])
    (w * 3).sum().backward()  # added to the zeros
    np.testing.assert_array_equal(w.grad.numpy(), [3.0, 3.0])

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    with mlfuse.no_grad():
        loss = opt.step(closure)  # the closure runs with gradients enabled
    assert loss.item() == 5.0
    np.testing.assert_allclose(w.numpy(), [0.8, 1.6])


def test_state_and_its_round_trip():
    """opt.state under PyTorch's names; a state dict loaded into a new optimizer
    continues exactly as the original."""
    kw = dict(lr=0.05, betas=(0.8, 0.99), amsgrad=True)
    p = Tensor(P0.copy(), requires_grad=True)
    opt = optim.NAdam([p], **{k: v for k, v in kw.items() if k != "amsgrad"})
    q = Tensor(P0.copy(), requires_grad=True)
    opt_q = optim.Adam([q], **kw)
    for o, x in ((opt, p), (opt_q, q)):
        for _ in range(3):
            o.zero_grad()
            (x**3 / 3 - x).sum().backward()
            o.step()
    assert set(opt.state[p]) == {"exp_avg", "exp_avg_sq"}
    assert set(opt_q.state[q]) == {"exp_avg", "exp_avg_sq", "max_exp_avg_sq"}
    sd = opt.state_dict()
    assert set(sd["state"][0]) == {"exp_avg", "exp_avg_sq", "step", "mu_product"}
    assert sd["state"][0]["step"].item() == 3 and sd["param_groups"][0]["params"] == [0]
    saved = {k: v.numpy() for k, v in sd["state"][0].items()}
    p2 = Tensor(p.numpy().copy(), requires_grad=True)
    opt2 = optim.NAdam([p2], lr=0.5)
    opt2.load_state_dict({"state": {0: saved}, "param_groups": sd["param_groups"]})
    assert opt2.lr == 0.05 and opt2.param_groups[0]["betas"] == (0.8, 0.99)
    for o, x in ((opt, p), (opt2, p2)):
        for _ in range(3):
            o.zero_grad()
            (x**3 / 3 - x).sum().backward()
            o.step()
    np.testing.assert_array_equal(p2.numpy(), p.numpy())
    with pytest.raises(ValueError, match="unknown state 'exp_avg' for parameter 0"):
        optim.SGD([p2], lr=0.1, momentum=0.9).load_state_dict(sd)
    with pytest.raises(ValueError, match="1 parameter groups, the optimizer 2"):
        optim.NAdam([{"params": [p2]}, {"params": [q]}]).load_state_dict(sd)
    bad = {"state": {0: {**saved, "exp_avg": np.zeros(3)}}, "param_groups": sd["param_groups"]}
    with pytest.raises(ValueError, match="'exp_avg' of parameter 0 has shape \\(3,\\)"):
        opt2.load_state_dict(bad)


def test_optimizer_group():
    a = Tensor([1.0, 2.0], requires_grad=True)
    b = Tensor([3.0], requires_grad=True)
    opt = optim.OptimizerGroup(optim.SGD([a], lr=0.5), optim.Adam([b], lr=0.1))
    assert opt[1].lr == 0.1 and len(opt.param_groups) == 2
    ((a * a).sum() + (b * b).sum()).backward()
    opt.step()
    np.testing.assert_allclose(a.numpy(), [0.0, 0.0])
    np.testing.assert_allclose(b.numpy(), [2.9], rtol=1e-6)
    opt.lr = 0.01
    assert opt[0].lr == opt[1].lr == 0.01
    opt.zero_grad()
    assert a.grad is None and b.grad is None


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
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "2.bias"'):
        copy.load_state_dict({k: v for k, v in sd.items() if k != "2.bias"})
    with pytest.raises(RuntimeError, match="size mismatch for 0.bias: copying a param with"):
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


# -- Muon ---------------------------------------------------------------------------
def _ns_reference(x: np.ndarray, steps: int, coefs, eps: float, clamp: bool) -> np.ndarray:
    """Newton-Schulz in float64: scale by the norm (clamped at eps, PyTorch's, or
    plus eps, tinygrad's), then X <- aX + (bA + cA^2)X with A = X X^T."""
    tall = x.shape[-2] > x.shape[-1]
    x = np.swapaxes(x, -1, -2) if tall else x
    norm = np.sqrt((x * x).sum(axis=(-2, -1), keepdims=True))
    x = x / (np.maximum(norm, eps) if clamp else norm + eps)
    for _ in range(steps):
        gram = x @ np.swapaxes(x, -1, -2)
        term, out = x, coefs[0] * x
        for c in coefs[1:]:
            term = gram @ term
            out = out + c * term
        x = out
    return np.swapaxes(x, -1, -2) if tall else x


@pytest.mark.parametrize("shape", [(4, 4), (3, 7), (7, 3), (2, 5, 3)])
def test_newton_schulz_matches_the_iteration(shape):
    g = np.random.default_rng(0).standard_normal(shape)
    coefs = (3.4445, -4.775, 2.0315)
    got = Tensor(g, mlfuse.float32).newton_schulz(5, coefs).numpy()
    np.testing.assert_allclose(got, _ns_reference(g, 5, coefs, 1e-7, False), atol=2e-5)
    # the cubic (1.5, -0.5) converges to the orthogonal factor U V^T
    square = np.eye(3) + 0.3 * g.reshape(-1)[:9].reshape(3, 3)
    u, _, vt = np.linalg.svd(square)
    got = Tensor(square, mlfuse.float64).newton_schulz(40, (1.5, -0.5)).numpy()
    np.testing.assert_allclose(got, u @ vt, atol=1e-6)
    with pytest.raises(
        ValueError, match="newton_schulz needs two or more dims, got shape \\(3,\\)"
    ):
        Tensor([1.0, 2.0, 3.0]).newton_schulz(5, coefs)


def _muon_reference(x0, grads, lr, wd, mu, nesterov, coefs, eps, steps, adjust):
    """PyTorch's Muon step in float64 (torch.optim._muon, the NS in full precision)."""
    x, b = x0.astype(np.float64), np.zeros_like(x0, np.float64)
    rows, cols = x.shape
    ratio = (
        0.2 * np.sqrt(max(rows, cols))
        if adjust == "match_rms_adamw"
        else np.sqrt(max(1.0, rows / cols))
    )
    for g in grads:
        b = b + (g - b) * (1 - mu)
        up = g + (b - g) * mu if nesterov else b
        up = _ns_reference(up, steps, coefs, eps, True)
        x = x * (1 - lr * wd) - lr * ratio * up
    return x


@pytest.mark.parametrize(
    "shape,kw",
    [
        ((4, 4), {}),
        ((6, 3), {"lr": 0.02, "weight_decay": 0.0}),
        ((3, 6), {"momentum": 0.9, "nesterov": False, "ns_steps": 3}),
        ((5, 2), {"ns_coefficients": (2.0, -1.5, 0.5), "adjust_lr_fn": "match_rms_adamw"}),
    ],
)
def test_muon_matches_pytorchs_update(shape, kw):
    rng = np.random.default_rng(1)
    x0 = rng.standard_normal(shape).astype(np.float32)
    grads = [rng.standard_normal(shape) for _ in range(4)]
    w = Tensor(x0, requires_grad=True)
    opt = optim.Muon([w], **kw)
    for g in grads:
        opt.zero_grad()
        (w * Tensor(g.astype(np.float32))).sum().backward()  # gradient g
        opt.step()
    full = dict(lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                ns_coefficients=(3.4445, -4.775, 2.0315), eps=1e-7, ns_steps=5,
                adjust_lr_fn=None)  # fmt: skip
    full.update(kw)
    want = _muon_reference(x0, grads, *[full[k] for k in (
        "lr", "weight_decay", "momentum", "nesterov", "ns_coefficients", "eps", "ns_steps",
        "adjust_lr_fn")])  # fmt: skip
    np.testing.assert_allclose(w.numpy(), want, atol=2e-5)
    torch = pytest.importorskip("torch")
    tw = torch.tensor(x0, requires_grad=True)
    topt = torch.optim.Muon([tw], **kw)
    for g in grads:
        topt.zero_grad()
        (tw * torch.tensor(g.astype(np.float32))).sum().backward()
        topt.step()
    # PyTorch iterates in bfloat16
    np.testing.assert_allclose(w.numpy(), tw.detach().numpy(), atol=3e-3)


def test_parameters_an_optimizer_adopts_and_leaves_alone():
    # a float tensor never asked about gradients is made to require them (tinygrad's);
    # one set not to (requires_grad_(False), a frozen nn.Parameter) stays as it is
    w = Tensor([1.0, 2.0])
    frozen = Tensor([5.0]).requires_grad_(False)
    param = nn.Parameter(Tensor([7.0]), requires_grad=False)
    opt = optim.SGD([w, frozen, param], lr=0.5)
    assert w.requires_grad and not frozen.requires_grad and not param.requires_grad
    opt.zero_grad()
    (w.sum() * 2).backward()
    opt.step()
    np.testing.assert_array_equal(w.numpy(), [0.0, 1.0])
    assert frozen.numpy()[0] == 5.0 and param.numpy()[0] == 7.0
    # tinygrad's get_parameters(model) lists buffers too: running statistics (and the
    # int64 batch count) are not trained, and still update in training mode
    bn = nn.BatchNorm1d(3)
    params = nn.state.get_parameters(bn)
    assert len(params) == 5
    opt = optim.SGD(params, lr=0.1)
    assert bn.weight.requires_grad and not bn.running_mean.requires_grad
    assert not bn.num_batches_tracked.requires_grad
    x = Tensor(np.arange(12.0, dtype=np.float32).reshape(4, 3))
    opt.zero_grad()
    bn(x).sum().backward()
    opt.step()
    np.testing.assert_allclose(bn.running_mean.numpy(), [0.45, 0.55, 0.65], rtol=1e-6)
    assert int(bn.num_batches_tracked.numpy()) == 1
    # listed twice in one group: stepped once, with PyTorch's warning
    v = Tensor([1.0], requires_grad=True)
    with pytest.warns(UserWarning, match="lists a parameter more than once; it is stepped once"):
        opt = optim.SGD([v, v], lr=0.5)
    assert len(opt.param_groups[0]["params"]) == 1
    opt.zero_grad()
    v.sum().backward()
    opt.step()
    assert v.numpy()[0] == 0.5
