"""``torch.nn.utils``: gradient clipping and flattening parameters to one vector;
``mlfuse.nn.utils.rnn`` pads sequences of different lengths; ``parametrize``
computes a parameter from others at each read (``parametrizations.weight_norm``,
``spectral_norm``, ``orthogonal``), as do the old-style ``weight_norm`` and
``spectral_norm``; ``fuse_conv_bn_eval`` folds a batch norm into a layer::

    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    opt.step()
"""

from __future__ import annotations

import importlib
import math

from mlfuse import dtypes
from mlfuse.autograd import no_grad
from mlfuse.errors import ArgumentError
from mlfuse.nn.modules import Module
from mlfuse.nn.utils import fusion, parametrizations, parametrize, rnn, stateless
from mlfuse.nn.utils.fusion import (
    fuse_conv_bn_eval,
    fuse_conv_bn_weights,
    fuse_linear_bn_eval,
    fuse_linear_bn_weights,
)
from mlfuse.nn.utils.spectral_norm import remove_spectral_norm, spectral_norm
from mlfuse.nn.utils.weight_norm import remove_weight_norm, weight_norm
from mlfuse.tensor import Tensor, cat

__all__ = [
    "clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_",
    "convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format",
    "fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights",
    "fusion", "get_total_norm", "parameters_to_vector", "parametrizations", "parametrize",
    "remove_spectral_norm", "remove_weight_norm", "rnn", "skip_init", "spectral_norm",
    "stateless", "vector_to_parameters", "weight_norm",
]  # fmt: skip


def _params(parameters) -> list[Tensor]:
    if isinstance(parameters, Tensor):
        return [parameters]
    return list(parameters)


def get_total_norm(tensors, norm_type: float = 2.0, error_if_nonfinite: bool = False):
    """The ``norm_type``-norm of all the tensors together (a 0-d tensor; ``inf`` gives
    the largest absolute value): ``get_total_norm([p.grad for p in params])``."""
    ts = [t for t in _params(tensors) if t is not None]
    if not ts:
        return Tensor(0.0)
    p = float(norm_type)
    if p == math.inf:
        total = Tensor.stack(*[t.abs().max().cast(dtypes.float32) for t in ts]).max()
    else:
        parts = [t.cast(dtypes.float32).abs().pow(p).sum() for t in ts]
        total = Tensor.stack(*parts).sum() ** (1.0 / p)
    if error_if_nonfinite:
        v = float(total.item())
        if math.isnan(v) or math.isinf(v):
            raise RuntimeError(
                f"the total norm of order {norm_type} of the gradients is non-finite ({v}); "
                "pass error_if_nonfinite=False to clip anyway"
            )
    return total


def clip_grad_norm_(
    parameters, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False,
    foreach=None,
) -> Tensor:  # fmt: skip
    """Scale the gradients in place so that their total ``norm_type``-norm is at most
    ``max_norm``; returns the norm before clipping (lazy, no host sync unless
    ``error_if_nonfinite``): ``clip_grad_norm_(model.parameters(), 1.0)``."""
    _check_max_norm(max_norm, "clip_grad_norm_")
    params = _params(parameters)
    grads = [p.grad for p in params if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite)
    clip_grads_with_norm_(params, max_norm, total, foreach)
    return total


def clip_grad_norm(
    parameters, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False,
    foreach=None,
) -> Tensor:  # fmt: skip
    """PyTorch's older name of :func:`clip_grad_norm_` (the same function):
    ``clip_grad_norm(model.parameters(), 1.0)``."""
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def _check_max_norm(max_norm, what: str) -> None:
    if max_norm is None or isinstance(max_norm, bool) or float(max_norm) < 0:
        raise ArgumentError(f"{what}: max_norm must be non-negative, got {max_norm!r}")


def clip_grads_with_norm_(parameters, max_norm: float, total_norm, foreach=None) -> None:
    """Scale the gradients in place by ``min(max_norm / (total_norm + 1e-6), 1)``,
    ``total_norm`` computed beforehand (a Tensor or a number; :func:`get_total_norm`
    gives it): the second half of :func:`clip_grad_norm_`:
    ``clip_grads_with_norm_(params, 1.0, get_total_norm([p.grad for p in params]))``."""
    _check_max_norm(max_norm, "clip_grads_with_norm_")
    grads = [p.grad for p in _params(parameters) if p.grad is not None]
    if not grads:
        return
    total = total_norm if isinstance(total_norm, Tensor) else Tensor(float(total_norm))
    with no_grad():
        coef = (float(max_norm) / (total + 1e-6)).clip(None, 1.0)
        for g in grads:
            g.assign((g * coef.cast(g.dtype).to(g.device)).cast(g.dtype))


def clip_grad_value_(parameters, clip_value: float, foreach=None) -> None:
    """Clamp every gradient to ``[-clip_value, clip_value]`` in place:
    ``clip_grad_value_(model.parameters(), 0.5)``."""
    v = float(clip_value)
    if v < 0:
        raise ArgumentError(f"clip_grad_value_: clip_value must be non-negative, got {v}")
    with no_grad():
        for p in _params(parameters):
            if p.grad is not None:
                p.grad.assign(p.grad.clip(-v, v))


def parameters_to_vector(parameters) -> Tensor:
    """The parameters flattened and joined into one vector:
    ``parameters_to_vector(model.parameters())``."""
    ps = _params(parameters)
    if not ps:
        raise ArgumentError("parameters_to_vector needs at least one parameter")
    return cat([p.reshape(-1) for p in ps])


def vector_to_parameters(vec: Tensor, parameters) -> None:
    """Write consecutive slices of ``vec`` into the parameters, in place:
    ``vector_to_parameters(v, model.parameters())``."""
    if not isinstance(vec, Tensor) or vec.ndim != 1:
        raise ArgumentError("vector_to_parameters: vec must be a 1-d Tensor")
    ps = _params(parameters)
    total = sum(p.numel() for p in ps)
    if vec.shape[0] != total:
        raise ArgumentError(
            f"vector_to_parameters: vec has {vec.shape[0]} elements, the parameters {total}"
        )
    at = 0
    with no_grad():
        for p in ps:
            n = p.numel()
            p.assign(vec[at : at + n].reshape(p.shape).cast(p.dtype))
            at += n


def skip_init(module_cls, *args, **kwargs) -> Module:
    """``module_cls(*args, **kwargs)``, PyTorch's way to build a module without
    initializing its parameters. mlfuse has no meta device to defer them to, so
    the parameters ARE initialized (as the constructor does; only the name and the
    checks are PyTorch's): overwrite them afterwards as you would in PyTorch:
    ``m = skip_init(nn.Linear, 5, 1)``."""
    if not isinstance(module_cls, type) or not issubclass(module_cls, Module):
        raise TypeError(f"skip_init: expected a Module class, got {module_cls!r}")
    return module_cls(*args, **kwargs)


def convert_conv2d_weight_memory_format(module: Module, memory_format=None) -> Module:
    """PyTorch's conversion of the 4-d convolution weights to a memory format; mlfuse's
    compiler chooses the layouts itself, so nothing changes: the module is returned
    as it is: ``convert_conv2d_weight_memory_format(model, None)``."""
    return module


def convert_conv3d_weight_memory_format(module: Module, memory_format=None) -> Module:
    """The 5-d counterpart of :func:`convert_conv2d_weight_memory_format` (nothing
    changes either): ``convert_conv3d_weight_memory_format(model, None)``."""
    return module


# the submodules PyTorch code imports these functions from (importing one makes it
# an attribute of this package)
for _sub in ("clip_grad", "convert_parameters", "init", "memory_format", "prune"):
    importlib.import_module(f"{__name__}.{_sub}")
