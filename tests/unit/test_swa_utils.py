"""mlfuse.optim.swa_utils: AveragedModel (SWA, EMA), SWALR and update_bn against
numpy and the closed forms of PyTorch's ``torch.optim.swa_utils``."""

from __future__ import annotations

import math

import numpy as np
import pytest

import mlfuse
from mlfuse import Tensor, nn
from mlfuse.optim.swa_utils import (
    SWALR,
    AveragedModel,
    get_ema_avg_fn,
    get_ema_multi_avg_fn,
    get_swa_avg_fn,
    get_swa_multi_avg_fn,
    update_bn,
    __all__ as swa_all,
)


def _model() -> nn.Module:
    return nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))


def _randomize(model: nn.Module, rng: np.random.Generator, buffers: bool = False) -> dict:
    """New random values for the model's parameters (and float buffers), in
    place; returns them by state-dict name, in float64."""
    sd = model.state_dict()
    new = {}
    for k, v in sd.items():
        if not v.dtype.is_float:
            continue
        if not buffers and ("running" in k):
            continue
        a = rng.standard_normal(v.shape)
        if "running_var" in k:
            a = np.abs(a) + 0.1
        new[k] = a
    with mlfuse.no_grad():
        for k, a in new.items():
            sd[k].assign(Tensor(a.astype(np.float32)))
    mlfuse.realize(*(sd[k] for k in new))
    return new


def _averaged(avg: AveragedModel) -> dict:
    return {k.removeprefix("module."): v.numpy() for k, v in avg.state_dict().items()}


def test_public_names_have_docstrings():
    import mlfuse.optim.swa_utils as swa

    assert mlfuse.optim.swa_utils is swa
    for name in swa_all:
        assert getattr(swa, name).__doc__, name
    for meth in ("forward", "update_parameters"):
        assert getattr(AveragedModel, meth).__doc__
    for meth in ("get_lr", "state_dict", "load_state_dict"):
        assert getattr(SWALR, meth).__doc__


def test_swa_running_mean_matches_numpy():
    rng = np.random.default_rng(0)
    model = _model()
    avg = AveragedModel(model)
    assert avg.n_averaged.dtype == mlfuse.int64 and avg.n_averaged.item() == 0
    params = list(avg.parameters())
    snaps = []
    for i in range(5):
        snaps.append(_randomize(model, rng, buffers=True))
        avg.update_parameters(model)
        assert avg.n_averaged.item() == i + 1
        got = _averaged(avg)
        for k in snaps[0]:
            if "running" in k:  # buffers are copied from the model, not averaged
                np.testing.assert_allclose(got[k], snaps[-1][k], rtol=1e-6, atol=1e-6)
            else:
                want = np.mean([s[k] for s in snaps], axis=0)
                np.testing.assert_allclose(got[k], want, rtol=1e-5, atol=1e-6)
    # updated in place: the same tensor objects, still parameters
    assert all(a is b for a, b in zip(params, avg.parameters()))
    assert "n_averaged" in avg.state_dict() and "module.0.weight" in avg.state_dict()
    # forward calls the averaged copy
    x = rng.standard_normal((5, 3)).astype(np.float32)
    avg.eval()
    np.testing.assert_allclose(avg(Tensor(x)).numpy(), avg.module(Tensor(x)).numpy())


def test_use_buffers_averages_buffers():
    rng = np.random.default_rng(1)
    model = _model()
    avg = AveragedModel(model, use_buffers=True)
    snaps = [_randomize(model, rng, buffers=True) for _ in range(1)]
    avg.update_parameters(model)
    for _ in range(3):
        snaps.append(_randomize(model, rng, buffers=True))
        avg.update_parameters(model)
    got = _averaged(avg)
    for k in ("1.running_mean", "1.running_var", "0.weight", "2.bias"):
        want = np.mean([s[k] for s in snaps], axis=0)
        np.testing.assert_allclose(got[k], want, rtol=1e-5, atol=1e-6)
    assert avg.n_averaged.item() == 4


@pytest.mark.parametrize("how", ["multi_avg_fn", "avg_fn"])
def test_ema_recurrence(how):
    decay = 0.8
    rng = np.random.default_rng(2)
    model = _model()
    fn = get_ema_multi_avg_fn(decay) if how == "multi_avg_fn" else get_ema_avg_fn(decay)
    avg = AveragedModel(model, **{how: fn})
    ema = None
    for _ in range(4):
        snap = _randomize(model, rng)
        avg.update_parameters(model)
        if ema is None:  # the first update copies
            ema = dict(snap)
        else:
            ema = {k: decay * ema[k] + (1 - decay) * snap[k] for k in snap}
    got = _averaged(avg)
    for k in ema:
        np.testing.assert_allclose(got[k], ema[k], rtol=1e-5, atol=1e-6)
    assert avg.n_averaged.item() == 4


def test_swa_fns_directly():
    a = Tensor(np.array([1.0, 2.0], np.float32))
    b = Tensor(np.array([4.0, -1.0], np.float32))
    n = Tensor(np.array(2, np.int64))
    np.testing.assert_allclose(get_swa_avg_fn()(a, b, 2).numpy(), [2.0, 1.0])
    np.testing.assert_allclose(get_swa_avg_fn()(a, b, n).numpy(), [2.0, 1.0])
    np.testing.assert_allclose(get_ema_avg_fn(0.5)(a, b, n).numpy(), [2.5, 0.5])
    x = Tensor(np.array([1.0, 2.0], np.float32))
    get_swa_multi_avg_fn()([x], [b], n)
    np.testing.assert_allclose(x.numpy(), [2.0, 1.0], rtol=1e-6)
    get_ema_multi_avg_fn(0.5)([x], [b], n)
    np.testing.assert_allclose(x.numpy(), [3.0, 0.0], rtol=1e-6)


def test_averaged_model_errors():
    with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn"):
        AveragedModel(_model(), avg_fn=get_swa_avg_fn(), multi_avg_fn=get_swa_multi_avg_fn())
    for make in (get_ema_avg_fn, get_ema_multi_avg_fn):
        with pytest.raises(ValueError, match=r"Invalid decay value 1.5 provided"):
            make(1.5)
        with pytest.raises(ValueError, match=r"\[0,1\] range"):
            make(-0.1)


def _opt(lrs=(0.1, 0.3)):
    ps = [Tensor(np.zeros(2, np.float32), requires_grad=True) for _ in lrs]
    return mlfuse.optim.SGD([{"params": [p], "lr": lr} for p, lr in zip(ps, lrs)])


@pytest.mark.parametrize("strategy", ["cos", "linear"])
@pytest.mark.parametrize("epochs", [0, 1, 4])
def test_swalr_closed_form(strategy, epochs):
    lrs, swa_lrs = (0.1, 0.3), [0.01, 0.05]
    opt = _opt(lrs)
    sched = SWALR(opt, swa_lrs, anneal_epochs=epochs, anneal_strategy=strategy)
    assert [g["swa_lr"] for g in opt.param_groups] == swa_lrs

    def alpha(t):
        return (1 - math.cos(math.pi * t)) / 2 if strategy == "cos" else t

    for step in range(8):
        t = 1.0 if epochs == 0 else min(1.0, step / epochs)
        want = [s * alpha(t) + lr * (1 - alpha(t)) for lr, s in zip(lrs, swa_lrs)]
        np.testing.assert_allclose(sched.get_last_lr(), want, rtol=1e-12)
        np.testing.assert_allclose([g["lr"] for g in opt.param_groups], want, rtol=1e-12)
        sched.step()
    np.testing.assert_allclose(sched.get_last_lr(), swa_lrs, rtol=1e-12)
    sd = sched.state_dict()
    assert "optimizer" not in sd and "anneal_func" not in sd
    assert sd["_anneal_strategy"] == strategy


def test_swalr_state_dict_round_trip():
    opt = _opt()
    a = SWALR(opt, 0.02, anneal_epochs=5, anneal_strategy="linear")
    a.step()
    b = SWALR(_opt(), 0.5, anneal_epochs=2, anneal_strategy="cos")
    b.load_state_dict(a.state_dict())
    assert b.anneal_epochs == 5 and b.anneal_func(0.25) == 0.25


def test_swalr_errors():
    with pytest.raises(
        ValueError, match="swa_lr must have the same length as optimizer.param_groups"
    ):
        SWALR(_opt(), [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="anneal_strategy must be one of 'cos' or 'linear'"):
        SWALR(_opt(), 0.1, anneal_strategy="exp")
    with pytest.raises(ValueError, match="anneal_epochs must be equal or greater than 0, got -1"):
        SWALR(_opt(), 0.1, anneal_epochs=-1)
    with pytest.raises(ValueError, match="anneal_epochs must be equal or greater than 0"):
        SWALR(_opt(), 0.1, anneal_epochs=2.5)


def test_update_bn_cumulative_statistics():
    rng = np.random.default_rng(3)
    model = nn.Sequential(nn.BatchNorm1d(3), nn.Linear(3, 2), nn.BatchNorm1d(2))
    lin = model[1]
    w, b = lin.weight.numpy().astype(np.float64), lin.bias.numpy().astype(np.float64)
    model.eval()
    batches = [(rng.standard_normal((8, 3)) * 2 + 1).astype(np.float32) for _ in range(4)]
    update_bn([(Tensor(x), Tensor(np.zeros(8, np.float32))) for x in batches], model)
    assert not model.training
    assert model[0].momentum == 0.1 and model[2].momentum == 0.1
    bn = model[0]
    data = np.concatenate(batches).astype(np.float64)
    # the cumulative average: the mean over all data (equal batches), the
    # variance the mean of the batches' unbiased variances
    np.testing.assert_allclose(bn.running_mean.numpy(), data.mean(0), rtol=1e-5, atol=1e-6)
    want_var = np.mean([x.astype(np.float64).var(0, ddof=1) for x in batches], axis=0)
    np.testing.assert_allclose(bn.running_var.numpy(), want_var, rtol=1e-5)
    assert bn.num_batches_tracked.item() == 4
    # the second batch norm sees the (training-mode) output of the first
    hidden = []
    for x in batches:
        x = x.astype(np.float64)
        h = (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5)
        hidden.append(h @ w.T + b)
    np.testing.assert_allclose(
        model[2].running_mean.numpy(), np.concatenate(hidden).mean(0), rtol=1e-4, atol=1e-5
    )


def test_update_bn_one_batch_is_the_unbiased_variance():
    rng = np.random.default_rng(4)
    model = nn.Sequential(nn.BatchNorm1d(5))
    model.train()
    x = rng.standard_normal((16, 5)).astype(np.float32)
    update_bn([Tensor(x)], model)
    assert model.training
    bn = model[0]
    np.testing.assert_allclose(bn.running_mean.numpy(), x.mean(0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(bn.running_var.numpy(), x.var(0, ddof=1), rtol=1e-5)
    assert bn.num_batches_tracked.item() == 1
    # a model without batch norm: nothing to do
    update_bn([Tensor(x)], nn.Sequential(nn.Linear(5, 2)))


def test_update_bn_on_averaged_model():
    rng = np.random.default_rng(5)
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    avg = AveragedModel(model)
    avg.update_parameters(model)
    x = rng.standard_normal((10, 3)).astype(np.float32)
    update_bn([Tensor(x)], avg)
    w = avg.module[0].weight.numpy().astype(np.float64)
    h = x.astype(np.float64) @ w.T + avg.module[0].bias.numpy()
    np.testing.assert_allclose(avg.module[1].running_mean.numpy(), h.mean(0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(avg.module[1].running_var.numpy(), h.var(0, ddof=1), rtol=1e-4)


def test_batch_norm_momentum_none_is_a_cumulative_average():
    rng = np.random.default_rng(4)
    xs = [rng.standard_normal((6, 2, 3)) for _ in range(3)]
    bn = nn.BatchNorm1d(2, momentum=None).double()
    for x in xs:
        bn(mlfuse.tensor(x))
    means = [x.mean((0, 2)) for x in xs]
    vars_ = [x.var((0, 2), ddof=1) for x in xs]
    np.testing.assert_allclose(bn.running_mean.numpy(), np.mean(means, 0), rtol=1e-12)
    np.testing.assert_allclose(bn.running_var.numpy(), np.mean(vars_, 0), rtol=1e-12)
    assert bn.num_batches_tracked.item() == 3
    bn.reset_running_stats()
    assert bn.running_mean.tolist() == [0.0, 0.0] and bn.num_batches_tracked.item() == 0
