"""PyTorch's ``nn.Module`` API on mlfuse's modules: conversions in place (``to``,
``double``...), iteration and registration, ``state_dict``/``load_state_dict``,
forward and backward hooks, the containers, copying and pickling. The values are
checked against numpy references."""

from __future__ import annotations

import copy
import pickle
import sys
import warnings
from collections import OrderedDict

import numpy as np
import pytest

import mlfuse
from mlfuse import Tensor, nn
from mlfuse.nn import modules as nn_modules
from mlfuse.tensor import FROZEN

RNG = np.random.default_rng(7)


def r(*shape) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def mlp() -> nn.Sequential:
    return nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))


def mlp_ref(model, x: np.ndarray) -> np.ndarray:
    """The MLP's output computed in numpy from its own (float64) parameters."""
    w0, b0 = model[0].weight.numpy(), model[0].bias.numpy()
    w2, b2 = model[2].weight.numpy(), model[2].bias.numpy()
    return np.tanh(x @ w0.T + b0) @ w2.T + b2


# ---------------------------------------------------------------------------
# conversions keep the same tensors
# ---------------------------------------------------------------------------


def test_double_converts_in_place_and_matches_a_float64_reference():
    mlfuse.manual_seed(0)
    model = mlp()
    params = model.parameters()
    assert model.double() is model
    assert [id(p) for p in model.parameters()] == [id(p) for p in params]
    for p in params:
        assert p.dtype == mlfuse.float64 and p.requires_grad and p.is_leaf
    x = r(5, 3).astype(np.float64)
    out = model(Tensor(x))
    assert out.dtype == mlfuse.float64
    np.testing.assert_allclose(out.numpy(), mlp_ref(model, x), rtol=1e-12, atol=1e-12)
    for conv, dt in [("half", "float16"), ("bfloat16", "bfloat16"), ("float", "float32")]:
        assert getattr(model, conv)() is model
        assert {p.dtype.name for p in model.parameters()} == {dt}
    assert model.type(mlfuse.float64) is model and model[0].weight is params[0]
    assert model[0].weight.dtype == mlfuse.float64


def test_an_optimizer_made_before_to_keeps_training_the_model():
    mlfuse.manual_seed(1)
    lin = nn.Linear(3, 1, bias=False)
    opt = mlfuse.optim.SGD(lin.parameters(), lr=0.1)
    assert lin.to(mlfuse.float64) is lin
    x, y = r(6, 3).astype(np.float64), r(6, 1).astype(np.float64)
    for _ in range(2):
        w = lin.weight.numpy()
        opt.zero_grad()
        loss = ((lin(Tensor(x)) - Tensor(y)) ** 2).mean()
        loss.backward()
        grad = 2 / len(x) * (x @ w.T - y).T @ x
        np.testing.assert_allclose(lin.weight.grad.numpy(), grad, rtol=1e-10)
        opt.step()
        assert lin.weight.dtype == mlfuse.float64
        np.testing.assert_allclose(lin.weight.numpy(), w - 0.1 * grad, rtol=1e-10)


def test_to_casts_float_buffers_keeps_integer_ones_and_buffers_stay_buffers():
    bn = nn.BatchNorm1d(3)
    mean, count = bn.running_mean, bn.num_batches_tracked
    bn.to(dtype=mlfuse.float64)
    assert bn.running_mean is mean and mean.dtype == mlfuse.float64
    assert count.dtype == mlfuse.int64  # integers keep their dtype, as PyTorch
    assert list(bn._buffers) == ["running_mean", "running_var", "num_batches_tracked"]
    assert mean in FROZEN and not mean.requires_grad and len(bn.parameters()) == 2
    x = r(8, 3).astype(np.float64)
    bn(Tensor(x))
    np.testing.assert_allclose(mean.numpy(), 0.1 * x.mean(0), rtol=1e-12)
    assert count.item() == 1
    bn.type(mlfuse.float32)  # type() casts every tensor, integers too
    assert count.dtype == mlfuse.float32 and mean.dtype == mlfuse.float32


def test_to_argument_forms_and_errors():
    lin = nn.Linear(2, 2)
    w = lin.weight
    lin.to(Tensor(np.zeros(1, np.float64)))  # a tensor's dtype (and device)
    assert w.dtype == mlfuse.float64
    lin.to("cpu", mlfuse.float32, False)
    assert w.dtype == mlfuse.float32 and w.device == "cpu"
    lin.to(device=mlfuse.device("cpu"), dtype=mlfuse.float64, non_blocking=True)
    assert w.dtype == mlfuse.float64
    with pytest.raises(TypeError, match="only accepts floating point or complex dtypes"):
        lin.to(mlfuse.int32)
    with pytest.raises(RuntimeError, match="does not accept copy argument"):
        lin.to(mlfuse.float32, copy=True)
    with pytest.raises(TypeError, match="unexpected keyword argument 'foo'"):
        lin.to(foo=1)
    with pytest.raises(TypeError, match="invalid combination of arguments"):
        lin.to("cpu", "cpu")
    with pytest.raises(ValueError):
        lin.to("no_such_device")
    with pytest.raises(TypeError, match="dst_type"):
        lin.type(None)
    assert w.dtype == mlfuse.float64 and w.requires_grad


def test_to_another_device_moves_in_place():
    lin = nn.Linear(3, 2)
    w = lin.weight
    x = r(2, 3)
    want = x @ w.numpy().T + lin.bias.numpy()
    lin.to("cuda_sim")
    assert lin.weight is w and w.device == "cuda_sim" and w.requires_grad and w.is_leaf
    np.testing.assert_allclose(lin(Tensor(x).to("cuda_sim")).numpy(), want, rtol=1e-6)
    assert lin.cpu() is lin and w.device == "cpu"


def test_a_failed_conversion_changes_nothing():
    bn = nn.BatchNorm1d(2)
    calls = []

    def fn(t):
        calls.append(t)
        if len(calls) == 3:
            raise RuntimeError("boom")
        return t.double()

    with pytest.raises(RuntimeError, match="boom"):
        bn._apply(fn)
    assert {t.dtype.name for t in bn.parameters() + bn.buffers()} == {"float32", "int64"}
    if not mlfuse.cuda.is_available():  # the copy fails when the values are computed
        with pytest.raises(RuntimeError):
            bn.cuda()
        assert {t.device for t in bn.parameters() + bn.buffers()} == {"cpu"}
    with pytest.raises(RuntimeError, match="must be floating point"):
        bn.type(mlfuse.int32)  # a parameter that requires grad cannot become integer
    assert bn.weight.dtype == mlfuse.float32


def test_grads_to_empty_share_memory_and_requires_grad():
    lin = nn.Linear(2, 3)
    lin(Tensor(r(4, 2))).sum().backward()
    g = lin.bias.grad.numpy()
    lin.double()
    assert lin.bias.grad.dtype == mlfuse.float64
    np.testing.assert_allclose(lin.bias.grad.numpy(), g)
    lin.zero_grad(set_to_none=False)
    assert lin.bias.grad.numpy().tolist() == [0.0, 0.0, 0.0]
    lin.zero_grad()
    assert lin.bias.grad is None
    w = lin.weight
    assert lin.to_empty(device="cpu") is lin and lin.weight is w
    assert w.numpy().shape == (3, 2) and w.dtype == mlfuse.float64 and w.requires_grad
    assert lin.share_memory() is lin and lin.weight is w
    assert lin.requires_grad_(False) is lin
    assert not any(p.requires_grad for p in lin.parameters()) and w in FROZEN
    lin.requires_grad_()
    assert all(p.requires_grad and p.is_leaf for p in lin.parameters())


# ---------------------------------------------------------------------------
# iterating over members
# ---------------------------------------------------------------------------


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Linear(2, 3)
        self.blocks = nn.ModuleList([nn.Linear(3, 3), nn.ReLU()])
        self.register_buffer("scale", Tensor(np.full(3, 2.0, np.float32)))
        self.head = nn.Sequential(OrderedDict(fc=nn.Linear(3, 1)))
        self.alias = self.stem  # the same module twice

    def forward(self, x):
        x = self.stem(x)
        for b in self.blocks:
            x = b(x)
        return self.head(x * self.scale)


def test_module_iterators_follow_pytorch():
    net = Net()
    names = ["", "stem", "blocks", "blocks.0", "blocks.1", "head", "head.fc"]
    assert [k for k, _ in net.named_modules()] == names
    assert [k for k, _ in net.named_modules(prefix="net")][:2] == ["net", "net.stem"]
    both = [k for k, _ in net.named_modules(remove_duplicate=False)]
    assert both == names + ["alias"]
    assert net.modules()[1] is net.stem and len(net.modules()) == 7
    assert [k for k, _ in net.named_children()] == ["stem", "blocks", "head"]
    assert list(net.children()) == [net.stem, net.blocks, net.head]
    params = ["stem.weight", "stem.bias", "blocks.0.weight", "blocks.0.bias", "head.fc.weight",
              "head.fc.bias"]  # fmt: skip
    assert [k for k, _ in net.named_parameters()] == params
    assert len(net.named_parameters(remove_duplicate=False)) == 8
    assert list(dict(net.named_parameters(prefix="m"))) == ["m." + p for p in params]
    assert net.parameters(recurse=False) == [] and len(list(net.parameters())) == 6
    assert [k for k, _ in net.named_buffers()] == ["scale"] and net.buffers()[0] is net.scale
    assert net.blocks.named_parameters(recurse=False) == []
    seen = []
    assert net.apply(lambda m: seen.append(type(m).__name__)) is net
    assert seen == ["Linear", "Linear", "ReLU", "ModuleList", "Linear", "Sequential", "Net"]
    assert net.eval() is net and not net.head.fc.training and not net.blocks[1].training
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        net.train("yes")


def test_repr_uses_extra_repr_like_pytorch():
    class Scale(nn.Module):
        def __init__(self):
            self.inner = nn.Linear(2, 2, bias=False)

        def extra_repr(self):
            return "factor=3"

    assert repr(Scale()) == (
        "Scale(\n  factor=3\n  (inner): Linear(in_features=2, out_features=2, bias=False)\n)"
    )
    assert repr(nn.ReLU()) == "ReLU()"
    assert repr(nn.ModuleList([nn.ReLU(), nn.ReLU(), nn.Tanh()])) == (
        "ModuleList(\n  (0-1): 2 x ReLU()\n  (2): Tanh()\n)"
    )
    assert "(fc): Linear(in_features=3, out_features=1, bias=True)" in repr(Net())


def test_deep_models_need_no_recursion():
    depth = sys.getrecursionlimit() + 200
    root = m = nn.Sequential()
    for _ in range(depth):
        m.append(nn.Sequential())
        m = m[0]
    m.append(nn.Linear(1, 1))
    assert len(root.named_modules()) == depth + 2
    key = ".".join(["0"] * (depth + 1)) + ".weight"
    assert list(root.state_dict()) == [key, key[: -len("weight")] + "bias"]
    root.double().eval()
    assert root.get_parameter(key).dtype == mlfuse.float64 and not m.training


# ---------------------------------------------------------------------------
# registration and lookup
# ---------------------------------------------------------------------------


def test_registration_lookup_and_removal():
    net = Net()
    net.add_module("extra", nn.Tanh())
    net.register_module("gone", None)
    net.register_parameter("gain", nn.Parameter(Tensor(np.ones(3, np.float32))))
    net.register_parameter("unused", None)
    assert net.extra is net._modules["extra"] and "gone" in net._modules
    assert net._modules["gone"] is None and "gone" not in dict(net.named_children())
    assert net._parameters["unused"] is None and "unused" not in net.state_dict()
    assert list(net._parameters) == ["gain", "unused"]
    assert net.get_submodule("blocks.0") is net.blocks[0]
    assert net.get_submodule("head.fc") is net.head.fc and net.get_submodule("") is net
    assert net.get_parameter("head.fc.bias") is net.head.fc.bias
    assert net.get_parameter("gain") is net.gain and net.get_buffer("scale") is net.scale
    new = nn.Linear(3, 1)
    net.set_submodule("head.fc", new)
    assert net.head.fc is new and net.head[0] is new
    net.set_submodule("blocks.1", nn.Sigmoid())
    assert isinstance(net.blocks[1], nn.Sigmoid)
    with pytest.raises(AttributeError, match="Net has no attribute `nope`"):
        net.get_submodule("nope.x")
    with pytest.raises(AttributeError, match="`weight` is not an nn.Module"):
        net.get_submodule("stem.weight.x")
    with pytest.raises(AttributeError, match="`scale` is not an nn.Parameter"):
        net.get_parameter("scale")
    with pytest.raises(AttributeError, match="`weight` is not a buffer"):
        net.get_buffer("stem.weight")
    with pytest.raises(AttributeError, match="Linear has no attribute `foo`"):
        net.get_parameter("stem.foo")
    with pytest.raises(KeyError, match="attribute 'stem' already exists"):
        net.register_parameter("stem", None)
    with pytest.raises(KeyError, match=r'contain "\.", got: a\.b'):
        net.add_module("a.b", nn.ReLU())
    with pytest.raises(TypeError, match="int is not a Module subclass"):
        net.add_module("x", 3)
    with pytest.raises(TypeError, match=r"cannot assign 'int' object to parameter 'p'"):
        net.register_parameter("p", 3)
    with pytest.raises(ValueError, match="Cannot assign non-leaf Tensor to parameter 'q'"):
        net.register_parameter("q", net.gain * 2)
    with pytest.raises(ValueError, match="Cannot set the submodule without a target name"):
        net.set_submodule("", nn.ReLU())
    with pytest.raises(AttributeError, match="`weight` is not an nn.Module"):
        net.set_submodule("stem.weight", nn.ReLU())
    with pytest.raises(AttributeError, match="has no attribute `zz`"):
        net.set_submodule("zz", nn.ReLU(), strict=True)
    del net.scale  # a buffer: its name goes too
    assert "scale" not in net._buffers and net.named_buffers() == []
    net.scale = Tensor(np.ones(3, np.float32))  # a plain tensor: neither, as PyTorch's
    assert "scale" not in dict(net.named_parameters()) and "scale" not in net.state_dict()
    del net.gain
    assert "gain" not in net._parameters


def test_member_views_read_and_write_through():
    net = Net()
    assert list(net._modules) == ["stem", "blocks", "head", "alias"]
    assert [k for k, _ in net.blocks._modules.items()] == ["0", "1"]
    new = nn.Linear(3, 3)
    for name, child in list(net.blocks._modules.items()):
        if isinstance(child, nn.ReLU):
            net.blocks._modules[name] = nn.Tanh()
    net.blocks._modules["0"] = new
    assert net.blocks[0] is new and isinstance(net.blocks[1], nn.Tanh)
    lin = net.stem
    assert lin._parameters["weight"] is lin.weight and list(lin._parameters) == ["weight", "bias"]
    t = Tensor(np.zeros(3, np.float32))
    lin._parameters["bias"] = t
    assert lin.bias is t
    lin._buffers["counter"] = Tensor(np.zeros((), np.int64))
    assert "counter" in lin.state_dict() and "counter" not in dict(lin.named_parameters())
    del lin._parameters["bias"]
    assert not hasattr(lin, "bias") and list(lin._parameters) == ["weight"]
    del net._modules["alias"]
    assert not hasattr(net, "alias")

    class Holder(nn.Module):  # Modules in a plain list attribute are sub-modules too
        def __init__(self):
            self.layers = [nn.ReLU(), nn.Tanh()]

    h = Holder()
    assert list(h._modules) == ["layers.0", "layers.1"]
    h._modules["layers.1"] = nn.Sigmoid()
    assert isinstance(h.layers[1], nn.Sigmoid) and isinstance(h.get_submodule("layers.1"),
                                                              nn.Sigmoid)  # fmt: skip


# ---------------------------------------------------------------------------
# state dicts
# ---------------------------------------------------------------------------


def test_state_dict_order_detaching_and_keep_vars():
    net = Net()
    sd = net.state_dict()
    assert isinstance(sd, OrderedDict)
    assert list(sd) == ["scale", "stem.weight", "stem.bias", "blocks.0.weight", "blocks.0.bias",
                        "head.fc.weight", "head.fc.bias", "alias.weight", "alias.bias"]  # fmt: skip
    w = net.stem.weight
    assert sd["stem.weight"] is not w and not sd["stem.weight"].requires_grad
    np.testing.assert_array_equal(sd["stem.weight"].numpy(), w.numpy())
    with mlfuse.no_grad():
        w.assign(w * 0 + 1)  # the state dict shares the values, as PyTorch's
    assert sd["stem.weight"].numpy().tolist() == [[1.0, 1.0]] * 3
    kv = net.state_dict(keep_vars=True, prefix="net.")
    assert kv["net.stem.weight"] is w and "net.scale" in kv
    assert list(nn.BatchNorm1d(2).state_dict()) == [
        "weight",
        "bias",
        "running_mean",
        "running_var",
        "num_batches_tracked",
    ]


def test_load_state_dict_returns_the_keys_and_raises_like_pytorch():
    src, dst = nn.Linear(3, 2), nn.Linear(3, 2)
    w = dst.weight
    keys = dst.load_state_dict(src.state_dict())
    assert keys.missing_keys == [] and keys.unexpected_keys == []
    assert repr(keys) == "<All keys matched successfully>"
    assert dst.weight is w and w.requires_grad
    np.testing.assert_array_equal(w.numpy(), src.weight.numpy())
    with pytest.raises(RuntimeError) as err:
        dst.load_state_dict({"weight": Tensor(r(2, 3)), "extra": Tensor(r(1))})
    assert str(err.value) == (
        "Error(s) in loading state_dict for Linear:\n\tMissing key(s) in state_dict: "
        '"bias". \n\tUnexpected key(s) in state_dict: "extra". '
    )
    missing, unexpected = dst.load_state_dict({"weight": np.full((2, 3), 3.0)}, strict=False)
    assert (missing, unexpected) == (["bias"], []) and w.numpy().tolist() == [[3.0] * 3] * 2
    with pytest.raises(RuntimeError, match=r"size mismatch for weight: copying a param with "
                       r"shape \(3, 3\) from checkpoint"):  # fmt: skip
        dst.load_state_dict({"weight": Tensor(r(3, 3)), "bias": Tensor(r(2))})
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        dst.load_state_dict([1, 2])
    with pytest.raises(RuntimeError, match='copying the parameter named "bias", expected Tensor'):
        dst.load_state_dict({"weight": Tensor(r(2, 3)), "bias": 3})
    net = Net()
    keys = net.load_state_dict({**Net().state_dict(), "blocks.5.weight": Tensor(r(1))},
                               strict=False)  # fmt: skip
    assert keys.unexpected_keys == ["blocks.5.weight"] and keys.missing_keys == []
    new = Tensor(r(2, 3).astype(np.float64))
    dst.load_state_dict({"weight": new, "bias": Tensor(r(2))}, assign=True)
    assert dst.weight.dtype == mlfuse.float64 and dst.weight.requires_grad  # the checkpoint's
    np.testing.assert_array_equal(dst.weight.numpy(), new.numpy())


def test_state_dict_hooks():
    lin = nn.Linear(2, 2)
    seen = []
    lin.register_state_dict_pre_hook(lambda m, prefix, keep_vars: seen.append(prefix))
    lin.register_state_dict_post_hook(lambda m, sd, prefix, meta: sd.pop(prefix + "bias"))
    with pytest.raises(RuntimeError, match="state_dict post-hook must return None"):
        lin.state_dict()
    lin = nn.Linear(2, 2)

    def drop_bias(m, sd, prefix, meta):
        del sd[prefix + "bias"]

    lin.register_state_dict_post_hook(drop_bias)
    seq = nn.Sequential(lin)
    assert list(seq.state_dict()) == ["0.weight"]
    got = []
    h = lin.register_load_state_dict_post_hook(lambda m, keys: got.append(list(keys.missing_keys)))
    keys = seq.load_state_dict({"0.weight": Tensor(r(2, 2))}, strict=False)
    assert got == [["0.bias"]] and keys.missing_keys == ["0.bias"]
    h.remove()
    lin.register_load_state_dict_post_hook(lambda m, keys: keys.missing_keys.clear())
    seq.load_state_dict({"0.weight": Tensor(r(2, 2))})  # the hook cleared what strict sees


# ---------------------------------------------------------------------------
# hooks
# ---------------------------------------------------------------------------


def test_forward_hooks_see_and_replace_values():
    lin = nn.Linear(2, 2)
    w, b = lin.weight.numpy(), lin.bias.numpy()
    x = r(3, 2)
    order = []
    h1 = lin.register_forward_pre_hook(lambda m, args: order.append("pre") or args[0] * 2)
    h2 = lin.register_forward_pre_hook(lambda m, args: order.append("first"), prepend=True)
    h3 = lin.register_forward_hook(lambda m, args, out: out + 1)
    got = {}

    def seen(m, args, kwargs, out):
        got.update(args=args, kwargs=kwargs, out=out.numpy())

    h4 = lin.register_forward_hook(seen, with_kwargs=True)
    out = lin(Tensor(x)).numpy()
    want = (2 * x) @ w.T + b + 1
    np.testing.assert_allclose(out, want, rtol=1e-6)
    np.testing.assert_allclose(got["args"][0].numpy(), 2 * x, rtol=1e-6)
    assert order == ["first", "pre"] and got["kwargs"] == {}
    for h in (h1, h2, h3, h4):
        h.remove()
    np.testing.assert_allclose(lin(Tensor(x)).numpy(), x @ w.T + b, rtol=1e-6)

    def swap_kwargs(m, args, kwargs):
        return (args[0] * 0,), kwargs

    with lin.register_forward_pre_hook(swap_kwargs, with_kwargs=True):
        np.testing.assert_allclose(lin(Tensor(x)).numpy(), np.broadcast_to(b, (3, 2)), rtol=1e-6)
    np.testing.assert_allclose(lin(Tensor(x)).numpy(), x @ w.T + b, rtol=1e-6)
    lin.register_forward_pre_hook(lambda m, args, kwargs: 5, with_kwargs=True)
    with pytest.raises(RuntimeError, match="forward pre-hook must return None or a tuple"):
        lin(Tensor(x))
    with pytest.raises(TypeError, match="hook must be callable"):
        lin.register_forward_hook(3)


def test_always_called_and_global_forward_hooks():
    class Boom(nn.Module):
        def forward(self, x):
            raise ValueError("bad input")

    calls = []
    m = Boom()
    m.register_forward_hook(lambda mod, args, out: calls.append("always"), always_call=True)
    m.register_forward_hook(lambda mod, args, out: calls.append("normal"))
    with pytest.raises(ValueError, match="bad input"):
        m(Tensor([1.0]))
    assert calls == ["always"]
    lin = nn.Linear(1, 1)
    h = nn_modules.register_module_forward_hook(lambda mod, args, out: out * 0)
    try:
        assert lin(Tensor([[2.0]])).numpy().tolist() == [[0.0]]
    finally:
        h.remove()
    assert lin(Tensor([[2.0]])).numpy().tolist() != [[0.0]]


def test_full_backward_hooks_get_the_gradients():
    lin = nn.Linear(3, 2)
    w, b = lin.weight.numpy(), lin.bias.numpy()
    x = r(4, 3)
    got = {}

    def pre(m, grad_output):
        got["pre"] = grad_output[0].numpy()
        return (grad_output[0] * 3,)

    def hook(m, grad_input, grad_output):
        got["gi"], got["go"] = grad_input[0].numpy(), grad_output[0].numpy()
        return (grad_input[0] * 2,)

    lin.register_full_backward_pre_hook(pre)
    lin.register_full_backward_hook(hook)
    xt = Tensor(x, requires_grad=True)
    y = lin(xt)
    (y**2).sum().backward()
    go = 2 * (x @ w.T + b)  # d sum(y^2) / dy
    np.testing.assert_allclose(got["pre"], go, rtol=1e-5)
    np.testing.assert_allclose(got["go"], 3 * go, rtol=1e-5)  # the pre-hook's replacement
    np.testing.assert_allclose(got["gi"], 3 * go @ w, rtol=1e-5)
    np.testing.assert_allclose(xt.grad.numpy(), 6 * go @ w, rtol=1e-5)  # the hook's
    np.testing.assert_allclose(lin.weight.grad.numpy(), 3 * go.T @ x, rtol=1e-5)


def test_full_backward_hook_without_input_gradients_fires_on_the_outputs():
    lin = nn.Linear(3, 2)
    got = {}
    lin.register_full_backward_hook(lambda m, gi, go: got.update(gi=gi, go=go[0].numpy()))
    with pytest.warns(UserWarning, match="no inputs require gradients"):
        lin(Tensor(r(4, 3))).sum().backward()
    assert got["gi"] == (None,) and got["go"].tolist() == [[1.0, 1.0]] * 4
    bad = nn.Linear(3, 2)
    bad.register_full_backward_hook(lambda m, gi, go: (Tensor.ones(4, 3), Tensor.ones(4, 3)))
    x = Tensor(r(4, 3), requires_grad=True)
    with pytest.raises(RuntimeError, match="invalid number of grad_input, got 2, but expected 1"):
        bad(x).sum().backward()


# ---------------------------------------------------------------------------
# containers
# ---------------------------------------------------------------------------


def test_sequential_list_api():
    a, b, c = nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1)
    seq = nn.Sequential(OrderedDict([("fc1", a), ("act", b), ("fc2", c)]))
    assert seq.fc1 is a and seq[-1] is c and list(seq) == [a, b, c] and len(seq) == 3
    assert [k for k, _ in seq.named_parameters()] == ["fc1.weight", "fc1.bias", "fc2.weight",
                                                      "fc2.bias"]  # fmt: skip
    head = seq[1:]
    assert isinstance(head, nn.Sequential) and list(head._modules) == ["act", "fc2"]
    x = r(3, 2)
    want = np.maximum(x @ a.weight.numpy().T + a.bias.numpy(), 0) @ c.weight.numpy().T
    np.testing.assert_allclose(seq(Tensor(x)).numpy(), want + c.bias.numpy(), rtol=1e-6)
    seq.append(nn.Sigmoid())
    assert list(seq._modules) == ["fc1", "act", "fc2", "3"]
    seq.act = nn.Tanh()
    assert isinstance(seq[1], nn.Tanh)
    assert isinstance(seq.pop(1), nn.Tanh) and list(seq._modules) == ["0", "1", "2"]
    seq.insert(0, nn.Identity())
    seq[1] = a
    del seq[-1]
    assert [type(m).__name__ for m in seq] == ["Identity", "Linear", "Linear"]
    assert len(seq + nn.Sequential(nn.ReLU())) == 4 and len(seq * 2) == 6
    seq += nn.Sequential(nn.ReLU())
    seq.extend([nn.ReLU()])
    assert len(seq) == 5 and seq._modules["4"] is seq[4]
    with pytest.raises(IndexError, match="index 9 is out of range"):
        seq[9]
    with pytest.raises(ValueError, match="add operator supports only objects of Sequential"):
        seq + 3
    with pytest.raises(TypeError, match="is not callable"):
        seq.append(3)
    with pytest.raises(KeyError, match="attribute 'forward' already exists"):
        nn.Sequential(OrderedDict(forward=nn.ReLU()))


def test_module_list_and_dict_api():
    ml = nn.ModuleList([nn.ReLU(), nn.Tanh()])
    ml.insert(1, nn.Sigmoid())
    ml.extend([nn.Identity()])
    assert [type(m).__name__ for m in ml] == ["ReLU", "Sigmoid", "Tanh", "Identity"]
    assert isinstance(ml[1:3], nn.ModuleList) and len(ml[1:3]) == 2
    del ml[0:2]
    assert [type(m).__name__ for m in ml] == ["Tanh", "Identity"] and list(ml._modules) == [
        "0",
        "1",
    ]
    assert isinstance(ml.pop(0), nn.Tanh) and len(ml + [nn.ReLU()]) == 2
    ml[0] = nn.ReLU()
    assert isinstance(ml[0], nn.ReLU) and isinstance(getattr(ml, "0"), nn.ReLU)
    with pytest.raises(IndexError, match="index 5 is out of range"):
        ml[5]
    with pytest.raises(TypeError, match="ModuleList.extend should be called with an iterable"):
        ml.extend(3)
    md = nn.ModuleDict([("a", nn.ReLU()), ("b", nn.Tanh())])
    md.update({"c": nn.Sigmoid()})
    assert list(md.keys()) == ["a", "b", "c"] and list(md) == ["a", "b", "c"] and "b" in md
    assert [type(v).__name__ for v in md.values()] == ["ReLU", "Tanh", "Sigmoid"]
    assert isinstance(md.pop("a"), nn.ReLU) and len(md) == 2
    del md["b"]
    md.clear()
    assert len(md) == 0 and md.named_modules() == [("", md)]
    with pytest.raises(ValueError, match="has length 3; 2 is required"):
        md.update([("a", nn.ReLU(), 1)])


def test_parameter_list_and_dict_api():
    pl = nn.ParameterList([Tensor(np.ones(2, np.float32))])
    pl.append(Tensor(np.zeros((2, 3), np.float32)))
    pl += [Tensor(np.ones(1, np.float32))]
    assert len(pl) == 3 and all(p.requires_grad for p in pl)
    assert pl.extra_repr().split("\n")[1] == "  (1): Parameter containing: [float32 of size 2x3]"
    with pytest.raises(TypeError, match="ParameterList.extend should be called with an iterable"):
        pl.extend(Tensor(np.ones(2, np.float32)))
    pd = nn.ParameterDict(
        {"b": Tensor(np.ones(1, np.float32)), "a": Tensor(np.ones(2, np.float32))}
    )
    assert list(pd) == ["a", "b"]  # a plain dict's keys sorted, as PyTorch
    pd.update(OrderedDict(d=Tensor(np.ones(3, np.float32)), c=Tensor(np.ones(3, np.float32))))
    assert list(pd.keys()) == ["a", "b", "d", "c"]
    assert pd.setdefault("e", Tensor(np.zeros(1, np.float32))).shape == (1,)
    k, v = pd.popitem()
    assert k == "e" and "e" not in pd
    merged = pd | nn.ParameterDict({"z": Tensor(np.ones(1, np.float32))})
    assert list(merged) == ["a", "b", "d", "c", "z"] and merged["a"] is pd["a"]
    assert list(reversed(pd)) == ["c", "d", "b", "a"]
    pd._parameters["f"] = Tensor(np.ones(2, np.float32))  # through the view: a key too
    assert "f" in pd and [k for k, _ in pd.named_parameters()] == ["a", "b", "d", "c", "f"]
    pd.clear()
    assert len(pd) == 0 and pd.parameters() == []


# ---------------------------------------------------------------------------
# copying and pickling
# ---------------------------------------------------------------------------


def test_deepcopy_and_pickle():
    net = Net()
    net.stem.bias.requires_grad_(False)  # frozen for optimizers
    twin = copy.deepcopy(net)
    assert twin.alias is twin.stem and twin.stem is not net.stem  # shared stays shared
    assert twin.stem.weight is not net.stem.weight
    x = r(2, 2)
    np.testing.assert_array_equal(twin(Tensor(x)).numpy(), net(Tensor(x)).numpy())
    with mlfuse.no_grad():
        twin.stem.weight.assign(twin.stem.weight * 0)
    assert np.abs(net.stem.weight.numpy()).sum() > 0  # independent parameters
    assert twin.scale in FROZEN and twin.stem.bias in FROZEN and not twin.stem.bias.requires_grad
    assert twin.stem.weight.requires_grad and twin.stem.weight.is_leaf
    back = pickle.loads(pickle.dumps(net))
    np.testing.assert_array_equal(back(Tensor(x)).numpy(), net(Tensor(x)).numpy())
    assert [k for k, _ in back.named_buffers()] == ["scale"] and back.scale in FROZEN
    handle = net.stem.register_forward_hook(lambda m, a, o: o * 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        hooked = copy.deepcopy(net)
    handle.remove()  # the copy keeps its own registration
    assert hooked.stem(Tensor(x)).numpy().tolist() == [[0.0] * 3] * 2
    assert net.stem(Tensor(x)).numpy().tolist() != [[0.0] * 3] * 2
