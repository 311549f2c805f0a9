"""``torch.nn.utils``: gradient clipping and flattening parameters to one vector;
``mlfuse.nn.utils.rnn`` pads sequences of different lengths::

    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    opt.step()
"""

from __future__ import annotations

import math

from mlfuse import dtypes
from mlfuse.autograd import no_grad
from mlfuse.errors import ArgumentError
from mlfuse.nn.utils import rnn
from mlfuse.tensor import Tensor, cat

__all__ = [
    "clip_grad_norm_", "clip_grad_value_", "get_total_norm", "parameters_to_vector",
    "vector_to_parameters", "rnn",
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
    if max_norm is None or float(max_norm) < 0:
        raise ArgumentError(f"clip_grad_norm_: max_norm must be non-negative, got {max_norm!r}")
    grads = [p.grad for p in _params(parameters) if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite)
    if not grads:
        return total
    with no_grad():
        coef = (float(max_norm) / (total + 1e-6)).clip(None, 1.0)
        for g in grads:
            g.assign((g * coef.cast(g.dtype)).cast(g.dtype))
    return total


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
