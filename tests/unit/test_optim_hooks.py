"""The optimizers' hooks, PyTorch's API: ``register_step_pre_hook`` /
``register_step_post_hook`` (run around every optimizer class's ``step``, the
pre hooks able to replace its arguments), the global
``mlfuse.optim.optimizer.register_optimizer_step_pre_hook`` / ``_post_hook``,
the ``state_dict`` and ``load_state_dict`` hooks (``prepend``, results that
replace the dict), and the handles' ``remove()``."""

from __future__ import annotations

import numpy as np
import pytest

from mlfuse import Tensor, optim
from mlfuse.optim import optimizer as optimizer_mod
from mlfuse.utils.hooks import RemovableHandle


def make(cls=optim.SGD, **kw):
    w = Tensor(np.array([1.0, 2.0]), requires_grad=True)
    kw.setdefault("lr", 0.1)
    return w, cls([w], **kw)


def set_grad(w: Tensor, value: float = 1.0) -> None:
    w.grad = Tensor(np.full(w.shape, value))


def test_step_hooks_run_in_order_and_remove():
    w, opt = make()
    calls = []
    h1 = opt.register_step_pre_hook(lambda o, args, kwargs: calls.append(("pre", o, args)))
    h2 = opt.register_step_post_hook(lambda o, args, kwargs: calls.append(("post", o, args)))
    assert isinstance(h1, RemovableHandle) and h1.id != h2.id
    set_grad(w)
    opt.step()
    assert calls == [("pre", opt, ()), ("post", opt, ())]
    np.testing.assert_allclose(w.numpy(), [0.9, 1.9])
    h1.remove()
    h1.remove()  # removing twice is harmless
    calls.clear()
    opt.step()
    assert calls == [("post", opt, ())]
    with h2:
        pass  # a handle removes its hook on leaving a with block
    calls.clear()
    opt.step()
    assert calls == []


def test_pre_hook_replaces_the_step_arguments():
    w, opt = make()
    set_grad(w)
    seen = []

    def closure():
        seen.append("closure")
        return Tensor(np.array(3.0))

    def pre(o, args, kwargs):
        return (), {"closure": closure}  # new (args, kwargs) for step

    post_args = []
    opt.register_step_pre_hook(pre)
    opt.register_step_post_hook(lambda o, args, kwargs: post_args.append((args, kwargs)))
    loss = opt.step()
    assert seen == ["closure"] and loss.item() == 3.0
    assert post_args == [((), {"closure": closure})]  # post hooks see the new arguments


def test_pre_hook_returning_something_else_is_an_error():
    w, opt = make()
    opt.register_step_pre_hook(lambda o, args, kwargs: 5)
    with pytest.raises(
        RuntimeError, match=r"must return None or a tuple of \(new_args, new_kwargs\)"
    ):
        opt.step()


def test_hooks_must_be_callable():
    _, opt = make()
    with pytest.raises(TypeError, match="the hook must be callable"):
        opt.register_step_pre_hook(3)
    with pytest.raises(TypeError, match="the hook must be callable"):
        optimizer_mod.register_optimizer_step_post_hook("x")


@pytest.mark.parametrize(
    "cls, kw",
    [
        (optim.SGD, {"momentum": 0.9}),
        (optim.Adam, {}),
        (optim.AdamW, {}),
        (optim.RMSprop, {}),
        (optim.Adagrad, {}),
        (optim.Rprop, {}),
        (optim.LAMB, {}),
        (optim.LBFGS, {}),  # its own step
    ],
)
def test_every_optimizer_runs_the_hooks_once(cls, kw):
    w, opt = make(cls, **kw)
    calls = []
    opt.register_step_pre_hook(lambda o, a, k: calls.append("pre"))
    opt.register_step_post_hook(lambda o, a, k: calls.append("post"))
    if cls is optim.LBFGS:

        def closure():
            opt.zero_grad()
            loss = (w * w).sum()
            loss.backward()
            return loss

        opt.step(closure)
    else:
        set_grad(w)
        opt.step()
    assert calls == ["pre", "post"]


def test_a_subclass_step_calling_super_runs_the_hooks_once():
    class Mine(optim.SGD):
        def step(self, closure=None):
            """Count, then SGD's step: ``opt.step()``."""
            self.count = getattr(self, "count", 0) + 1
            return super().step(closure)

    w, opt = make(Mine)
    calls = []
    opt.register_step_pre_hook(lambda o, a, k: calls.append("pre"))
    opt.register_step_post_hook(lambda o, a, k: calls.append("post"))
    set_grad(w)
    opt.step()
    assert calls == ["pre", "post"] and opt.count == 1
    assert Mine.step.__doc__.startswith("Count")
    np.testing.assert_allclose(w.numpy(), [0.9, 1.9])


def test_global_hooks_wrap_every_optimizers_own():
    w, opt = make()
    _, other = make(optim.Adam)
    calls = []
    g_pre = optimizer_mod.register_optimizer_step_pre_hook(
        lambda o, a, k: calls.append(("global pre", type(o).__name__))
    )
    g_post = optimizer_mod.register_optimizer_step_post_hook(
        lambda o, a, k: calls.append(("global post", type(o).__name__))
    )
    try:
        opt.register_step_pre_hook(lambda o, a, k: calls.append(("pre", "SGD")))
        opt.register_step_post_hook(lambda o, a, k: calls.append(("post", "SGD")))
        set_grad(w)
        opt.step()
        other.step()
    finally:
        g_pre.remove()
        g_post.remove()
    assert calls == [
        ("global pre", "SGD"),
        ("pre", "SGD"),
        ("post", "SGD"),
        ("global post", "SGD"),
        ("global pre", "Adam"),
        ("global post", "Adam"),
    ]
    calls.clear()
    other.step()
    assert calls == []
    assert optimizer_mod.Optimizer is optim.Optimizer


def test_schedule_step_runs_no_hooks():
    w, opt = make()
    calls = []
    opt.register_step_pre_hook(lambda o, a, k: calls.append("pre"))
    set_grad(w)
    Tensor.realize(*opt.schedule_step())
    assert calls == []


def test_state_dict_hooks():
    w, opt = make(momentum=0.9)
    set_grad(w)
    opt.step()
    calls = []
    opt.register_state_dict_pre_hook(lambda o: calls.append("pre a"))
    opt.register_state_dict_pre_hook(lambda o: calls.append("pre b"), prepend=True)

    def post_edit(o, sd):
        calls.append("post edit")
        sd["extra"] = 1  # in place

    def post_replace(o, sd):
        calls.append("post replace")
        return {**sd, "replaced": True}

    opt.register_state_dict_post_hook(post_edit)
    h = opt.register_state_dict_post_hook(post_replace, prepend=True)
    sd = opt.state_dict()
    assert calls == ["pre b", "pre a", "post replace", "post edit"]
    assert sd["extra"] == 1 and sd["replaced"] is True
    h.remove()
    sd = opt.state_dict()
    assert "replaced" not in sd and "momentum_buffer" in sd["state"][0]


def test_load_state_dict_hooks():
    w, opt = make(momentum=0.9)
    set_grad(w)
    opt.step()
    saved = opt.state_dict()
    _, fresh = make(momentum=0.9)
    calls = []

    def strip(o, sd):  # edits the shallow copy; the caller's dict keeps its keys
        calls.append("pre strip")
        sd["param_groups"] = [dict(g, lr=0.5) for g in sd["param_groups"]]

    def replace(o, sd):
        calls.append("pre replace")
        return {"state": sd["state"], "param_groups": sd["param_groups"]}

    fresh.register_load_state_dict_pre_hook(replace)
    fresh.register_load_state_dict_pre_hook(strip, prepend=True)
    fresh.register_load_state_dict_post_hook(lambda o: calls.append("post"))
    saved["junk"] = 1  # not a valid state dict: the replacing hook drops the key
    fresh.load_state_dict(saved)
    assert calls == ["pre strip", "pre replace", "post"]
    assert saved["param_groups"][0]["lr"] == 0.1  # the caller's dict is untouched
    assert fresh.param_groups[0]["lr"] == 0.5
    np.testing.assert_allclose(
        fresh.state[fresh.param_groups[0]["params"][0]]["momentum_buffer"].numpy(), [1.0, 1.0]
    )


def test_optimizer_group_hooks():
    w1, o1 = make()
    w2, o2 = make(optim.Adam)
    group = optim.OptimizerGroup(o1, o2)
    calls = []
    group.register_step_pre_hook(lambda o, a, k: calls.append("pre"))
    group.register_state_dict_post_hook(lambda o, sd: calls.append("sd"))
    set_grad(w1)
    set_grad(w2)
    group.step()
    group.state_dict()
    assert calls == ["pre", "sd"]
