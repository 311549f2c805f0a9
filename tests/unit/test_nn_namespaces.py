"""torch.nn's submodules PyTorch code imports from: parameter, parallel, grad, common_types."""

import numpy as np
import pytest

import mlfuse
from mlfuse import nn

RNG = np.random.default_rng(5)


def _np_conv2d(x, w, stride, pad):
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
    out = np.zeros((n, o, oh, ow))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, :, i * stride : i * stride + kh, j * stride : j * stride + kw]
            out[:, :, i, j] = np.einsum("nchw,ochw->no", patch, w)
    return out


def test_conv_input_and_weight_gradients_are_the_adjoint():
    x = RNG.standard_normal((2, 3, 6, 6))
    w = RNG.standard_normal((4, 3, 3, 3))
    gy = RNG.standard_normal(_np_conv2d(x, w, 2, 1).shape)
    gx = nn.grad.conv2d_input(x.shape, mlfuse.tensor(w), mlfuse.tensor(gy), stride=2, padding=1)
    gw = nn.grad.conv2d_weight(mlfuse.tensor(x), w.shape, mlfuse.tensor(gy), stride=2, padding=1)
    # <conv(x, w), gy> = <x, gx> = <w, gw>: the defining property of the adjoints
    inner = float((_np_conv2d(x, w, 2, 1) * gy).sum())
    assert abs(float((x * gx.numpy()).sum()) - inner) < 1e-10 * abs(inner)
    assert abs(float((w * gw.numpy()).sum()) - inner) < 1e-10 * abs(inner)
    e = np.zeros_like(x)
    e[1, 2, 3, 4] = 1.0  # one entry of gx: the conv of a unit input against gy
    assert abs(gx.numpy()[1, 2, 3, 4] - (_np_conv2d(e, w, 2, 1) * gy).sum()) < 1e-12
    with pytest.raises(ValueError, match="grad_output has shape"):
        nn.grad.conv2d_input(x.shape, mlfuse.tensor(w), mlfuse.tensor(gy[:, :, :1]), padding=1)


def test_data_parallel_runs_the_module_with_prefixed_names():
    inner = nn.Linear(3, 2)
    model = nn.DataParallel(inner)
    x = mlfuse.tensor(RNG.standard_normal((4, 3)), dtype=mlfuse.float32)
    np.testing.assert_array_equal(model(x).numpy(), inner(x).numpy())
    assert list(model.state_dict()) == ["module.weight", "module.bias"]
    assert model.module is inner
    with pytest.raises(RuntimeError, match="process group has not been initialized"):
        nn.parallel.DistributedDataParallel(inner)


def test_parameter_module_and_common_types():
    from mlfuse.nn.common_types import _size_2_t  # noqa: F401
    from mlfuse.nn.parameter import Buffer, Parameter, UninitializedParameter, is_lazy

    p = Parameter(mlfuse.ones(2))
    assert isinstance(p, Parameter) and p.requires_grad
    assert isinstance(Buffer(mlfuse.ones(2)), Buffer)
    assert is_lazy(nn.LazyLinear(3).weight) and not is_lazy(p)
    assert UninitializedParameter is nn.UninitializedParameter
