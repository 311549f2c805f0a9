"""``torch.nn.init``'s initialisers: each fills a tensor in place (without
recording a gradient) and returns it, drawing from the generator
``mlfuse.manual_seed`` seeds, or from ``generator=`` (a ``mlfuse.Generator``)::

    w = mlfuse.empty(256, 128)
    nn.init.kaiming_uniform_(w, a=math.sqrt(5))
    nn.init.zeros_(layer.bias)
"""

from __future__ import annotations

import math

import numpy as np

from mlfuse.autograd import no_grad
from mlfuse.errors import ArgumentError
from mlfuse.tensor import Tensor, _rng

__all__ = [
    "calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_",
    "eye_", "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
    "kaiming_normal_", "orthogonal_", "sparse_",
]  # fmt: skip


def _fill(t: Tensor, values: np.ndarray) -> Tensor:
    if not isinstance(t, Tensor):
        raise TypeError(f"nn.init: expected a Tensor, got {type(t).__name__}")
    with no_grad():
        t.assign(Tensor(np.asarray(values).reshape(t.shape), t.dtype, t.device))
    return t


def calculate_gain(nonlinearity: str, param=None) -> float:
    """The recommended gain for a nonlinearity (PyTorch's table):
    ``calculate_gain("relu")`` is sqrt(2)."""
    linear = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
              "conv_transpose3d", "sigmoid")  # fmt: skip
    if nonlinearity in linear:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        if isinstance(slope, bool) or not isinstance(slope, (int, float)):
            raise ArgumentError(f"calculate_gain: negative_slope {param!r} is not a number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ArgumentError(f"calculate_gain: unsupported nonlinearity {nonlinearity!r}")


def _fans(t: Tensor) -> tuple[int, int]:
    if t.ndim < 2:
        raise ArgumentError(
            f"fan in and fan out cannot be computed for a tensor with fewer than 2 dims "
            f"(shape {t.shape})"
        )
    field = int(np.prod(t.shape[2:])) if t.ndim > 2 else 1
    return t.shape[1] * field, t.shape[0] * field


def _calculate_fan_in_and_fan_out(t: Tensor) -> tuple[int, int]:
    return _fans(t)


def _fan(t: Tensor, mode: str) -> int:
    if mode not in ("fan_in", "fan_out"):
        raise ArgumentError(f"mode must be 'fan_in' or 'fan_out', got {mode!r}")
    fan_in, fan_out = _fans(t)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    """Uniform values in ``[a, b)``: ``uniform_(w, -0.1, 0.1)``."""
    return _fill(tensor, _rng(generator).uniform(a, b, tensor.shape))


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    """Normal values: ``normal_(w, 0, 0.02)``."""
    return _fill(tensor, _rng(generator).normal(mean, std, tensor.shape))


def trunc_normal_(
    tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0,
    generator=None,
) -> Tensor:  # fmt: skip
    """Normal values redrawn until they fall in ``[a, b]``: ``trunc_normal_(w, std=0.02)``."""
    if not a < b:
        raise ArgumentError(f"trunc_normal_: a ({a}) must be below b ({b})")
    rng = _rng(generator)
    out = rng.normal(mean, std, tensor.shape)
    bad = (out < a) | (out > b)
    while bad.any():
        out[bad] = rng.normal(mean, std, int(bad.sum()))
        bad = (out < a) | (out > b)
    return _fill(tensor, out)


def constant_(tensor: Tensor, val: float) -> Tensor:
    """``val`` everywhere: ``constant_(b, 0.1)``."""
    return _fill(tensor, np.full(tensor.shape, val))


def ones_(tensor: Tensor) -> Tensor:
    """Ones: ``ones_(norm.weight)``."""
    return constant_(tensor, 1)


def zeros_(tensor: Tensor) -> Tensor:
    """Zeros: ``zeros_(linear.bias)``."""
    return constant_(tensor, 0)


def eye_(tensor: Tensor) -> Tensor:
    """The identity (a 2-d tensor): ``eye_(w)``."""
    if tensor.ndim != 2:
        raise ArgumentError(f"eye_ needs a 2-d tensor, got shape {tensor.shape}")
    return _fill(tensor, np.eye(*tensor.shape))


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """The Dirac delta of a 3-5 d convolution weight (the identity convolution),
    per group: ``dirac_(conv.weight)``."""
    if tensor.ndim not in (3, 4, 5):
        raise ArgumentError(f"dirac_ needs a 3, 4 or 5-d tensor, got shape {tensor.shape}")
    out_ch = tensor.shape[0]
    if out_ch % groups:
        raise ArgumentError(f"dirac_: {out_ch} output channels are not divisible by {groups}")
    per = out_ch // groups
    vals = np.zeros(tensor.shape)
    centre = tuple(s // 2 for s in tensor.shape[2:])
    for g in range(groups):
        for d in range(min(per, tensor.shape[1])):
            vals[(g * per + d, d) + centre] = 1
    return _fill(tensor, vals)


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """Glorot's uniform: ``+-gain sqrt(6 / (fan_in + fan_out))``: ``xavier_uniform_(w)``."""
    fan_in, fan_out = _fans(tensor)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """Glorot's normal, std ``gain sqrt(2 / (fan_in + fan_out))``: ``xavier_normal_(w)``."""
    fan_in, fan_out = _fans(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)), generator)


def kaiming_uniform_(
    tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
    generator=None,
) -> Tensor:  # fmt: skip
    """He's uniform, bound ``gain sqrt(3 / fan)``: ``kaiming_uniform_(w, a=math.sqrt(5))``."""
    bound = calculate_gain(nonlinearity, a) * math.sqrt(3.0 / _fan(tensor, mode))
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(
    tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
    generator=None,
) -> Tensor:  # fmt: skip
    """He's normal, std ``gain / sqrt(fan)``: ``kaiming_normal_(w, nonlinearity="relu")``."""
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """A (semi-)orthogonal matrix of the tensor flattened to (rows, rest), times
    ``gain``, from the QR decomposition of a normal one: ``orthogonal_(w)``."""
    if tensor.ndim < 2:
        raise ArgumentError(f"orthogonal_ needs at least 2 dims, got shape {tensor.shape}")
    rows = tensor.shape[0]
    cols = tensor.numel() // rows if rows else 0
    flat = _rng(generator).standard_normal((rows, cols))
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q *= np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return _fill(tensor, gain * q)


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator=None) -> Tensor:
    """A 2-d normal matrix with the fraction ``sparsity`` of each column zero:
    ``sparse_(w, 0.9)``."""
    if tensor.ndim != 2:
        raise ArgumentError(f"sparse_ needs a 2-d tensor, got shape {tensor.shape}")
    rows, cols = tensor.shape
    rng = _rng(generator)
    vals = rng.normal(0, std, (rows, cols))
    zeros = int(math.ceil(sparsity * rows))
    for c in range(cols):
        vals[rng.permutation(rows)[:zeros], c] = 0
    return _fill(tensor, vals)


def _deprecated(new):
    """PyTorch's old spelling of ``new`` (without the trailing underscore): warns
    as PyTorch's does and calls it."""
    import functools
    import warnings

    old = new.__name__.rstrip("_")

    @functools.wraps(new)
    def fn(*args, **kwargs):
        warnings.warn(
            f"nn.init.{old} is now deprecated in favor of nn.init.{new.__name__}.",
            FutureWarning,
            stacklevel=2,
        )
        return new(*args, **kwargs)

    fn.__name__ = fn.__qualname__ = old
    return fn


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
