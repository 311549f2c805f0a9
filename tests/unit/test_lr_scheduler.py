"""mlfuse.optim.lr_scheduler: every scheduler's learning rates over 30 steps
against its formula (and against torch.optim.lr_scheduler where installed),
step(epoch), state dicts, bad arguments, and a training loop whose schedule
compiles nothing new."""

from __future__ import annotations

import math
import warnings
from bisect import bisect_right

import numpy as np
import pytest

from mlfuse import Tensor, optim
from mlfuse.optim import lr_scheduler as lrs

try:
    import torch
except ImportError:  # pragma: no cover - depends on the machine
    torch = None

N = 30


def make_opt(mod=None, cls="SGD", lrs_=(0.1,), **kw):
    """An optimizer (mlfuse's, or torch's with ``mod=torch``) with one parameter
    group per learning rate in ``lrs_``."""
    if mod is None:
        ps = [Tensor([1.0, 2.0], requires_grad=True) for _ in lrs_]
        make = getattr(optim, cls)
    else:
        ps = [mod.tensor([1.0, 2.0], requires_grad=True) for _ in lrs_]
        make = getattr(mod.optim, cls)
    return make([{"params": [p], "lr": lr} for p, lr in zip(ps, lrs_)], lr=lrs_[0], **kw)


def trace(sched, opt, n=N, metrics=None):
    """The learning rates (of every group) after construction and each of ``n``
    steps, with the momentum or beta1 of the first group."""
    out = []
    for i in range(n + 1):
        if i:
            if metrics is None:
                sched.step()
            else:
                sched.step(metrics[i - 1])
        g = opt.param_groups[0]
        mom = g["betas"][0] if "betas" in g else g.get("momentum")
        lr = [float(x) for x in sched.get_last_lr()]
        assert lr == [float(g["lr"]) for g in opt.param_groups]
        out.append((lr, mom))
    return out


def lr_column(tr, group=0):
    return np.array([lr[group] for lr, _ in tr])


def one_cycle_ref(e, total, max_lr, pct=0.3, div=25.0, final_div=1e4, anneal="cos",
                  three_phase=False, base_m=0.85, max_m=0.95):  # fmt: skip
    """PyTorch's documented 1cycle policy at step ``e``: (lr, momentum)."""
    init = max_lr / div
    low = init / final_div

    def ann(a, b, pct):
        if anneal == "cos":
            return b + (a - b) / 2 * (math.cos(math.pi * pct) + 1)
        return (b - a) * pct + a

    if three_phase:
        phases = [(pct * total - 1, init, max_lr, max_m, base_m),
                  (2 * pct * total - 2, max_lr, init, base_m, max_m),
                  (total - 1, init, low, max_m, max_m)]  # fmt: skip
    else:
        phases = [(pct * total - 1, init, max_lr, max_m, base_m),
                  (total - 1, max_lr, low, base_m, max_m)]  # fmt: skip
    start = 0.0
    for i, (end, a, b, ma, mb) in enumerate(phases):
        if e <= end or i == len(phases) - 1:
            f = (e - start) / (end - start)
            return ann(a, b, f), ann(ma, mb, f)
        start = end


def warm_restarts_ref(e, T_0, T_mult, base, eta_min=0.0):
    T_i, T_cur = T_0, e
    while T_cur >= T_i:
        T_cur -= T_i
        T_i *= T_mult
    return eta_min + (base - eta_min) * (1 + math.cos(math.pi * T_cur / T_i)) / 2


def cyclic_ref(e, base, top, up, down, mode="triangular", gamma=1.0):
    total = up + down
    cycle = math.floor(1 + e / total)
    x = 1.0 + e / total - cycle
    ratio = up / total
    scale = x / ratio if x <= ratio else (x - 1) / (ratio - 1)
    f = {"triangular": 1.0, "triangular2": 1 / 2.0 ** (cycle - 1), "exp_range": gamma**e}[mode]
    return base + (top - base) * scale * f


E = np.arange(N + 1)
# name, factory(lr_scheduler module, optimizer), the formula of epoch e for base lr 0.1
CASES = [
    ("LambdaLR", lambda m, o: m.LambdaLR(o, lambda e: 1 / (1 + e)),
     lambda e: 0.1 / (1 + e)),
    ("MultiplicativeLR", lambda m, o: m.MultiplicativeLR(o, lambda e: 0.95),
     lambda e: 0.1 * 0.95**e),
    ("StepLR", lambda m, o: m.StepLR(o, step_size=7, gamma=0.5),
     lambda e: 0.1 * 0.5 ** (e // 7)),
    ("MultiStepLR", lambda m, o: m.MultiStepLR(o, milestones=[3, 10, 10, 22], gamma=0.3),
     lambda e: 0.1 * 0.3 ** bisect_right([3, 10, 10, 22], e)),
    ("ConstantLR", lambda m, o: m.ConstantLR(o, factor=0.25, total_iters=6),
     lambda e: 0.1 * (0.25 if e < 6 else 1.0)),
    ("LinearLR", lambda m, o: m.LinearLR(o, start_factor=0.1, end_factor=0.8, total_iters=12),
     lambda e: 0.1 * (0.1 + 0.7 * min(e, 12) / 12)),
    ("ExponentialLR", lambda m, o: m.ExponentialLR(o, gamma=0.9),
     lambda e: 0.1 * 0.9**e),
    ("PolynomialLR", lambda m, o: m.PolynomialLR(o, total_iters=20, power=2.0),
     lambda e: 0.1 * (1 - min(e, 20) / 20) ** 2),
    ("CosineAnnealingLR", lambda m, o: m.CosineAnnealingLR(o, T_max=12, eta_min=0.01),
     lambda e: 0.01 + 0.09 * (1 + math.cos(math.pi * e / 12)) / 2),
    ("CosineAnnealingWarmRestarts",
     lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=4, T_mult=2, eta_min=0.001),
     lambda e: warm_restarts_ref(e, 4, 2, 0.1, 0.001)),
    ("CosineAnnealingWarmRestarts1", lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=7),
     lambda e: warm_restarts_ref(e, 7, 1, 0.1)),
    ("OneCycleLR", lambda m, o: m.OneCycleLR(o, max_lr=0.5, total_steps=N),
     lambda e: one_cycle_ref(e, N, 0.5)[0]),
    ("OneCycleLR-linear-3", lambda m, o: m.OneCycleLR(
        o, max_lr=0.5, epochs=3, steps_per_epoch=10, pct_start=0.25, anneal_strategy="linear",
        three_phase=True, div_factor=10.0, final_div_factor=100.0),
     lambda e: one_cycle_ref(e, N, 0.5, 0.25, 10.0, 100.0, "linear", True)[0]),
    ("CyclicLR", lambda m, o: m.CyclicLR(o, 0.01, 0.1, step_size_up=4, step_size_down=6),
     lambda e: cyclic_ref(e, 0.01, 0.1, 4, 6)),
    ("CyclicLR-triangular2", lambda m, o: m.CyclicLR(o, 0.01, 0.1, step_size_up=5,
                                                     mode="triangular2"),
     lambda e: cyclic_ref(e, 0.01, 0.1, 5, 5, "triangular2")),
    ("CyclicLR-exp_range", lambda m, o: m.CyclicLR(o, 0.01, 0.1, step_size_up=3, mode="exp_range",
                                                   gamma=0.95, cycle_momentum=False),
     lambda e: cyclic_ref(e, 0.01, 0.1, 3, 3, "exp_range", 0.95)),
    ("SequentialLR", lambda m, o: m.SequentialLR(
        o, [m.LinearLR(o, start_factor=0.1, total_iters=5), m.ExponentialLR(o, gamma=0.9)],
        milestones=[5]),
     lambda e: 0.1 * (0.1 + 0.9 * e / 5) if e < 5 else 0.1 * 0.9 ** (e - 5)),
    ("SequentialLR-3", lambda m, o: m.SequentialLR(
        o, [m.ConstantLR(o, factor=0.5, total_iters=10), m.StepLR(o, 4, 0.5),
            m.CosineAnnealingLR(o, T_max=10)], milestones=[3, 12]),
     lambda e: 0.05 if e < 3 else 0.1 * 0.5 ** ((e - 3) // 4) if e < 12
     else 0.1 * (1 + math.cos(math.pi * (e - 12) / 10)) / 2),
    ("ChainedScheduler", lambda m, o: m.ChainedScheduler(
        [m.ConstantLR(o, factor=0.5, total_iters=3), m.ExponentialLR(o, gamma=0.9)]),
     lambda e: 0.1 * 0.9**e * (0.5 if e < 3 else 1.0)),
]  # fmt: skip
IDS = [c[0] for c in CASES]


@pytest.mark.parametrize("name,make,formula", CASES, ids=IDS)
def test_against_the_formula(name, make, formula):
    opt = make_opt(momentum=0.9)
    sched = make(lrs, opt)
    got = lr_column(trace(sched, opt))
    np.testing.assert_allclose(got, [formula(e) for e in E], rtol=1e-9, atol=1e-15)
    assert isinstance(sched, lrs.ChainedScheduler) or sched.last_epoch == N


def test_one_cycle_cycles_the_momentum_and_betas():
    for cls, kw, key in (("SGD", dict(momentum=0.9), "momentum"), ("AdamW", {}, "betas")):
        opt = make_opt(cls=cls, **kw)
        sched = lrs.OneCycleLR(opt, max_lr=0.5, total_steps=N)
        moms = [m for _, m in trace(sched, opt)]
        np.testing.assert_allclose(moms, [one_cycle_ref(e, N, 0.5)[1] for e in E], rtol=1e-12)
        if key == "betas":
            assert opt.param_groups[0]["betas"][1] == 0.999


def test_parameter_groups_get_their_own_rates():
    opt = make_opt(lrs_=(0.1, 0.02))
    sched = lrs.LambdaLR(opt, [lambda e: 0.9**e, lambda e: 1 + e])
    tr = trace(sched, opt, 5)
    np.testing.assert_allclose(lr_column(tr, 0), 0.1 * 0.9 ** np.arange(6))
    np.testing.assert_allclose(lr_column(tr, 1), 0.02 * (1 + np.arange(6)))
    assert [g["initial_lr"] for g in opt.param_groups] == [0.1, 0.02]


def test_reduce_on_plateau():
    opt = make_opt(momentum=0.9)
    sched = lrs.ReduceLROnPlateau(opt, factor=0.5, patience=2, cooldown=1, min_lr=0.02)
    metrics = [1.0] + [0.9] * 7 + [0.8] * 8
    got = lr_column(trace(sched, opt, len(metrics), metrics))
    # the best is 0.9 at step 2: 3 bad epochs -> halved at step 5; the cooldown epoch
    # (6) counts none, 7 and 8 are bad, 0.8 at step 9 is better: 3 bad epochs -> halved
    # at 12; cooldown (13), 3 bad epochs -> halved at 16, floored at min_lr
    want = [0.1] * 5 + [0.05] * 7 + [0.025] * 4 + [0.02]
    np.testing.assert_allclose(got, want)
    assert sched.last_epoch == len(metrics)
    mx = lrs.ReduceLROnPlateau(
        make_opt(), mode="max", threshold=0.1, threshold_mode="abs", patience=0
    )
    mx.step(1.0)
    mx.step(1.05)  # not better by 0.1: reduced (patience 0)
    assert mx.get_last_lr() == [pytest.approx(0.01)]


def test_step_with_an_epoch_uses_the_closed_form():
    opt = make_opt()
    sched = lrs.StepLR(opt, step_size=3, gamma=0.5)
    sched.step(7)
    assert sched.last_epoch == 7 and sched.get_last_lr() == [pytest.approx(0.1 * 0.5**2)]
    cos = lrs.CosineAnnealingLR(make_opt(), T_max=10)
    cos.step(5)
    assert cos.get_last_lr() == [pytest.approx(0.05)]
    w = lrs.CosineAnnealingWarmRestarts(make_opt(), T_0=4, T_mult=2)
    w.step(4 + 2.5)  # fractional epochs: 2.5 into the second period (8 long)
    assert w.get_last_lr() == [pytest.approx(0.05 * (1 + math.cos(math.pi * 2.5 / 8)))]


def test_scheduler_state_dict_round_trip():
    opt = make_opt()
    sched = lrs.CosineAnnealingLR(opt, T_max=10)
    for _ in range(4):
        sched.step()
    sd = sched.state_dict()
    assert "optimizer" not in sd and sd["last_epoch"] == 4
    opt2 = make_opt()
    for g, g0 in zip(opt2.param_groups, opt.param_groups):
        g["initial_lr"], g["lr"] = g0["initial_lr"], g0["lr"]
    sched2 = lrs.CosineAnnealingLR(opt2, T_max=10, last_epoch=3)
    sched2.load_state_dict(sd)
    for _ in range(5):
        sched.step()
        sched2.step()
    assert sched2.get_last_lr() == pytest.approx(sched.get_last_lr(), rel=1e-12)
    assert sched2.last_epoch == 9


@pytest.mark.parametrize(
    "make,err,match",
    [
        (lambda o: lrs.StepLR(o, step_size=0), ValueError,
         "StepLR: step_size must be an integer >= 1"),
        (lambda o: lrs.StepLR(o, step_size=3, gamma="x"), TypeError,
         "StepLR: gamma must be a number"),
        (lambda o: lrs.CosineAnnealingLR(o, T_max=0), ValueError, "T_max must be an integer >= 1"),
        (lambda o: lrs.ConstantLR(o, factor=2.0), ValueError, "factor must be in \\[0, 1\\]"),
        (lambda o: lrs.LinearLR(o, start_factor=0.0), ValueError,
         "start_factor must be in \\(0, 1\\]"),
        (lambda o: lrs.OneCycleLR(o, max_lr=0.1), ValueError, "give total_steps, or epochs and"),
        (lambda o: lrs.OneCycleLR(o, 0.1, 10, pct_start=1.5), ValueError,
         "pct_start must be a float"),
        (lambda o: lrs.OneCycleLR(o, 0.1, 10, anneal_strategy="exp"), ValueError,
         "anneal_strategy"),
        (lambda o: lrs.OneCycleLR(o, [0.1, 0.2], 10), ValueError,
         "max_lr must have one value per parameter group \\(1\\), got 2"),
        (lambda o: lrs.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=0), ValueError, "T_mult"),
        (lambda o: lrs.CyclicLR(o, 0.01, 0.1, mode="sawtooth"), ValueError, "mode must be"),
        (lambda o: lrs.SequentialLR(o, [lrs.StepLR(o, 2)], milestones=[3]), ValueError,
         "1 schedulers need 0 milestones, got 1"),
        (lambda o: lrs.SequentialLR(o, [lrs.StepLR(o, 2), lrs.StepLR(make_opt(), 2)], [3]),
         ValueError, "scheduler 1 belongs to another optimizer"),
        (lambda o: lrs.ReduceLROnPlateau(o, factor=1.0), ValueError, "factor must be < 1"),
        (lambda o: lrs.ReduceLROnPlateau(o, mode="up"), ValueError,
         "mode must be 'min' or 'max'"),
        (lambda o: lrs.StepLR(object(), 3), TypeError,
         "optimizer must be an mlfuse.optim.Optimizer"),
        (lambda o: lrs.LambdaLR(o, 0.5), TypeError, "lr_lambda must be callable"),
        (lambda o: lrs.ExponentialLR(o, 0.9, last_epoch=4), KeyError, "no 'initial_lr'"),
    ],
)  # fmt: skip
def test_bad_arguments_name_the_problem(make, err, match):
    with pytest.raises(err, match=match):
        make(make_opt())


def test_cycling_momentum_needs_a_momentum():
    with pytest.raises(ValueError, match="cycle_momentum needs an optimizer with a momentum"):
        lrs.OneCycleLR(make_opt(cls="Adagrad"), max_lr=0.1, total_steps=10)
    lrs.OneCycleLR(make_opt(cls="Adagrad"), max_lr=0.1, total_steps=10, cycle_momentum=False)


def test_one_cycle_refuses_steps_past_its_end():
    sched = lrs.OneCycleLR(make_opt(momentum=0.9), max_lr=0.1, total_steps=3)
    for _ in range(3):
        sched.step()
    with pytest.raises(ValueError, match="stepped 4 times, more than total_steps=3"):
        sched.step()


def test_a_schedule_compiles_nothing_new(monkeypatch):
    """Training with OneCycleLR (learning rate and momentum every step) and with
    warm restarts on AdamW (learning rate and beta1 through param_groups): after
    the first two steps nothing compiles."""
    from mlfuse import driver

    monkeypatch.setenv("MLFUSE_CACHE", "0")
    count: list[int] = []
    real = driver.compile_module
    monkeypatch.setattr(driver, "compile_module", lambda *a, **k: count.append(1) or real(*a, **k))
    rng = np.random.default_rng(0)
    for cls, kw, make in (
        (optim.SGD, dict(lr=0.1, momentum=0.9, nesterov=True),
         lambda o: lrs.OneCycleLR(o, max_lr=0.3, total_steps=12)),
        (optim.AdamW, dict(lr=0.05),
         lambda o: lrs.CyclicLR(o, 0.01, 0.05, step_size_up=3)),
        (optim.RAdam, dict(lr=0.05),
         lambda o: lrs.SequentialLR(o, [lrs.LinearLR(o, 0.2, total_iters=4),
                                        lrs.CosineAnnealingWarmRestarts(o, T_0=3)], [4])),
    ):  # fmt: skip
        w = Tensor(rng.uniform(0.5, 1.5, (4, 3)), requires_grad=True)
        opt = cls([w], **kw)
        sched = make(opt)
        seen = []
        for s in range(12):
            opt.zero_grad()
            (w**3 / 3 - w).sum().backward()
            opt.step()
            sched.step()
            seen.append(opt.lr)
            if s == 1:
                compiled = len(count)
        assert len(count) == compiled, f"{cls.__name__} compiled after its second step"
        assert len(set(seen)) > 5 and np.isfinite(w.numpy()).all()


# ---------------------------------------------------------------------------
# against torch.optim.lr_scheduler
# ---------------------------------------------------------------------------


@pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
@pytest.mark.parametrize("name,make,formula", CASES, ids=IDS)
@pytest.mark.parametrize("cls", ["SGD", "Adam"])
def test_against_torch(name, make, formula, cls):
    """The same 30 steps: learning rates of two groups, and the momentum (or
    beta1) that CyclicLR and OneCycleLR cycle."""
    kw = dict(momentum=0.9) if cls == "SGD" else {}
    opt = make_opt(cls=cls, lrs_=(0.1, 0.03), **kw)
    got = trace(make(lrs, opt), opt)
    topt = make_opt(torch, cls=cls, lrs_=(0.1, 0.03), **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # lr_scheduler.step() before optimizer.step()
        want = trace(make(torch.optim.lr_scheduler, topt), topt)
    np.testing.assert_allclose([lr for lr, _ in got], [lr for lr, _ in want], rtol=1e-12)
    np.testing.assert_allclose([m for _, m in got], [m for _, m in want], rtol=1e-12)


@pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
def test_reduce_on_plateau_against_torch():
    metrics = list(np.random.default_rng(1).uniform(0.5, 1.0, N))
    metrics = [m * 0.995**i for i, m in enumerate(metrics)]
    for kw in (dict(patience=2, cooldown=1, factor=0.5, min_lr=[1e-3, 0.02]),
               dict(mode="max", threshold_mode="abs", threshold=0.05, patience=1)):  # fmt: skip
        opt, topt = make_opt(lrs_=(0.1, 0.03)), make_opt(torch, lrs_=(0.1, 0.03))
        got = trace(lrs.ReduceLROnPlateau(opt, **kw), opt, N, metrics)
        want = trace(torch.optim.lr_scheduler.ReduceLROnPlateau(topt, **kw), topt, N, metrics)
        assert [lr for lr, _ in got] == [lr for lr, _ in want]


@pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
def test_step_with_epochs_against_torch():
    epochs = [3, 7, 7, 2, 15, 0, 9.5]
    for make in (
        lambda m, o: m.StepLR(o, 4, 0.5),
        lambda m, o: m.MultiStepLR(o, [2, 5, 5, 9], 0.5),
        lambda m, o: m.LinearLR(o, 0.2, 0.9, 6),
        lambda m, o: m.ExponentialLR(o, 0.8),
        lambda m, o: m.PolynomialLR(o, 10, 1.5),
        lambda m, o: m.CosineAnnealingLR(o, 8, 0.01),
        lambda m, o: m.CosineAnnealingWarmRestarts(o, 3, 2),
        lambda m, o: m.ConstantLR(o, 0.5, 4),
    ):
        opt, topt = make_opt(), make_opt(torch)
        s, ts = make(lrs, opt), make(torch.optim.lr_scheduler, topt)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the epoch argument is deprecated in PyTorch
            for e in epochs:
                e = e if isinstance(s, lrs.CosineAnnealingWarmRestarts) else int(e)
                s.step(e)
                ts.step(e)
                assert s.get_last_lr() == pytest.approx(ts.get_last_lr(), rel=1e-12)
                s.step()
                ts.step()
                assert s.get_last_lr() == pytest.approx(ts.get_last_lr(), rel=1e-12)
                assert s.last_epoch == ts.last_epoch
