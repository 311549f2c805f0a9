"""The top-level functions with PyTorch's names: ``mlfuse.zeros(2, 3)``,
``mlfuse.exp(x)``, ``mlfuse.matmul(a, b)``, ``mlfuse.max(x, 1)``...

Most of them call the Tensor method of the same name on their first argument
(``mlfuse.exp(x)`` is ``x.exp()``); a first argument that is not a Tensor
becomes one (of the device of the other tensor arguments). They take
PyTorch's ``out=`` too: the result is written into ``out`` (same shape) and
``out`` is returned. The others are PyTorch's creation functions and the few
whose top-level meaning differs from the method's: ``mlfuse.max(x, dim)`` is
``(values, indices)`` as ``torch.max`` (the method keeps tinygrad's values),
and ``mlfuse.max(a, b)`` is the elementwise maximum.

    import mlfuse as torch_like
    x = torch_like.linspace(-1, 1, 5)
    torch_like.clamp(torch_like.exp(x), max=2.0).numpy()
"""

from __future__ import annotations

import builtins
import functools
import itertools
import math
import os
from typing import NamedTuple

import numpy as np

from mlfuse import dtypes, layouts
from mlfuse.autograd import no_grad
from mlfuse.targets import devices, get_target
from mlfuse.errors import ArgumentError, DTypeError
from mlfuse.nn import functional as F
from mlfuse.serialization import load, save  # torch.save / torch.load
from mlfuse.tensor import (
    SortResult,
    Tensor,
    _norm_axis,
    _shape_arg,
    _zero_gradient,
    broadcast_shape,
    cat,
)

# functions that are ``input.<name>(*args, **kwargs)``
_METHODS = (
    "abs", "absolute", "acos", "acosh", "add", "addbmm", "addcdiv", "addcmul", "addmm",
    "addmv", "addr", "adjoint", "all", "allclose", "amax", "amin", "aminmax", "any",
    "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctan2", "arctanh", "argmax",
    "argmin", "argsort", "argwhere", "as_strided", "asin", "asinh", "atan", "atan2",
    "atanh", "baddbmm", "bernoulli", "bincount", "bitwise_and", "bitwise_left_shift",
    "bitwise_not", "bitwise_or", "bitwise_right_shift", "bitwise_xor", "bmm",
    "broadcast_to", "bucketize", "cdist", "ceil", "celu", "cholesky",
    "cholesky_inverse", "cholesky_solve", "chunk", "clamp", "clamp_max", "clamp_min",
    "clip", "clone", "conj", "conj_physical", "copysign", "corrcoef", "cos", "cosh",
    "count_nonzero", "cov", "cross", "cummax", "cummin", "cumprod", "cumsum", "deg2rad",
    "det", "detach", "diag", "diag_embed", "diagflat", "diagonal", "diagonal_scatter",
    "diff", "digamma", "dist", "div", "divide", "dot", "dsplit", "eq", "equal", "erf",
    "erfc", "erfinv", "exp", "exp2", "expm1", "fix", "flatten", "flip", "fliplr",
    "flipud", "float_power", "floor", "floor_divide", "fmax", "fmin", "fmod", "frac",
    "frexp", "gather", "gcd", "ge", "ger", "greater", "greater_equal", "gt",
    "hardshrink", "heaviside", "histc", "hsplit", "hypot", "i0", "igamma", "igammac",
    "index_add",
    "index_copy", "index_fill", "index_put", "index_reduce", "index_select", "inner",
    "inverse", "is_complex", "is_conj", "is_neg", "is_same_size", "is_signed",
    "isclose", "isfinite", "isinf", "isnan", "isneginf", "isposinf", "isreal", "kron",
    "kthvalue", "lcm", "ldexp", "le", "lerp", "less", "less_equal", "lgamma", "log",
    "log10", "log1p", "log2", "log_softmax", "logaddexp", "logaddexp2", "logcumsumexp",
    "logdet", "logical_and", "logical_not", "logical_or", "logical_xor", "logit",
    "logsumexp", "lt", "masked_fill", "masked_scatter", "masked_select", "matmul",
    "matrix_exp", "matrix_power", "mean", "median", "mm", "mode", "moveaxis", "movedim",
    "msort", "mul", "multinomial", "multiply", "mv", "mvlgamma", "nan_to_num",
    "nanmean", "nanmedian", "nanquantile", "nansum", "narrow", "narrow_copy", "ne", "neg",
    "negative",
    "nextafter", "nonzero", "norm", "not_equal", "outer", "permute", "pinverse",
    "positive", "pow", "prod", "put", "qr", "quantile", "rad2deg", "ravel",
    "reciprocal", "relu", "remainder", "renorm", "repeat_interleave", "reshape",
    "resolve_conj", "resolve_neg", "roll", "rot90", "round", "rsqrt", "scatter",
    "scatter_add", "scatter_reduce", "searchsorted", "select", "select_scatter", "selu",
    "sgn", "sigmoid", "sign", "signbit", "sin", "sinc", "sinh", "slice_scatter",
    "slogdet", "softmax", "sort", "split", "split_with_sizes", "sqrt", "square", "squeeze",
    "std",
    "std_mean", "sub", "subtract", "sum", "svd", "swapaxes", "swapdims", "t", "take",
    "take_along_dim", "tan", "tanh", "tensor_split", "tile", "topk", "trace",
    "transpose", "tril", "triu", "true_divide", "trunc", "unbind", "unflatten",
    "unique", "unique_consecutive", "unsafe_chunk", "unsafe_split", "unsafe_split_with_sizes",
    "unsqueeze", "var", "var_mean", "vdot", "vsplit", "xlogy", "angle", "nonzero_static",
    "lu", "lu_solve", "triangular_solve",
)  # fmt: skip


def _device_of(args) -> str | None:
    for a in args:
        if isinstance(a, Tensor):
            return a.device
        if isinstance(a, (list, tuple)):
            d = _device_of(a)
            if d is not None:
                return d
    return None


def _write_out(result, out):
    """PyTorch's ``out=``: the result written into ``out`` (a tensor, or a tuple
    of tensors for functions returning several), which is returned."""
    if out is None:
        return result
    pairs = zip(out, result) if isinstance(out, (tuple, list)) else [(out, result)]
    for o, r in pairs:
        if not isinstance(o, Tensor):
            raise TypeError(f"out must be a Tensor, got {type(o).__name__}")
        if o.shape != r.shape:
            raise ArgumentError(
                f"out has shape {o.shape}, the result {r.shape} (mlfuse does not resize out)"
            )
        o.assign(r.cast(o.dtype) if r.dtype != o.dtype else r)
    return out


def _as_method_function(fn, name: str):
    """``fn`` named ``mlfuse.<name>``, documented as the Tensor method it calls."""
    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = __name__
    doc = getattr(Tensor, name).__doc__ or ""
    fn.__doc__ = f"``mlfuse.{name}(x, ...)`` is ``x.{name}(...)``.\n\n" + doc
    return fn


def _forward(name: str):
    def fn(input, *args, out=None, **kwargs):  # noqa: A002 - PyTorch's names
        if not isinstance(input, Tensor):
            input = Tensor(input, device=_device_of(args))  # noqa: A001
        return _write_out(getattr(input, name)(*args, **kwargs), out)

    return _as_method_function(fn, name)


for _name in _METHODS:
    globals()[_name] = _forward(_name)

# the in-place forms PyTorch also has at the top level: ``mlfuse.relu_(x)`` is ``x.relu_()``
_INPLACE = (
    "abs_", "acos_", "acosh_", "addmv_", "arccos_", "arccosh_", "arcsin_", "arcsinh_",
    "arctan_", "arctanh_", "as_strided_", "asin_", "asinh_", "atan_", "atanh_", "ceil_",
    "celu_", "clamp_", "clamp_max_", "clamp_min_", "clip_", "cos_", "cosh_", "deg2rad_",
    "detach_", "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fill_", "fix_", "floor_", "frac_",
    "gcd_", "i0_", "igamma_", "igammac_", "index_put_", "lcm_", "ldexp_", "log10_", "log1p_",
    "log2_", "log_",
    "logit_", "nan_to_num_", "neg_", "negative_", "rad2deg_", "reciprocal_", "relu_",
    "round_", "rsqrt_", "selu_", "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_", "square_",
    "tan_", "tanh_", "trunc_", "xlogy_", "zero_", "conj_physical_",
)  # fmt: skip


def _forward_inplace(name: str):
    def fn(input, *args, **kwargs):  # noqa: A002 - PyTorch's names
        if not isinstance(input, Tensor):
            raise TypeError(
                f"mlfuse.{name} writes into its input, which must be a Tensor, "
                f"got {type(input).__name__}"
            )
        return getattr(input, name)(*args, **kwargs)

    return _as_method_function(fn, name)


for _name in _INPLACE:
    globals()[_name] = _forward_inplace(_name)


# -- creation ------------------------------------------------------------------------
def _size(size) -> tuple[int, ...]:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    return _shape_arg(size)


def _made(t: Tensor, requires_grad: bool, out=None) -> Tensor:
    if requires_grad:
        t.requires_grad_()
    return _write_out(t, out)


def _creation(fn=None, *, formats: bool = False):
    """PyTorch's creation keywords that change no value: ``layout``
    (``mlfuse.strided``), ``pin_memory`` (host memory is not page-locked: see
    ``Tensor.pin_memory``) and, where ``formats`` (``empty`` and the ``*_like``
    functions), ``memory_format`` (a channels-last one stores the values
    channels-last, as ``Tensor.contiguous`` does)."""
    if fn is None:
        return functools.partial(_creation, formats=formats)

    @functools.wraps(fn)
    def wrapper(*args, layout=None, pin_memory: bool = False, memory_format=None, **kw):
        name = wrapper.__name__
        layouts.check_layout(layout, name)
        if memory_format is not None and not formats:
            raise TypeError(f"{name}() got an unexpected keyword argument 'memory_format'")
        out = fn(*args, **kw)
        fmt = layouts.check_memory_format(memory_format, name, out.ndim)
        if fmt is not None and fmt.rank is not None:
            stored = out.detach().contiguous(fmt)
            out = stored.requires_grad_() if out.requires_grad else stored
        return out

    return wrapper


@_creation
def tensor(data, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data`` (numbers, nested lists, arrays, or a
    tensor, detached): ``mlfuse.tensor([[1, 2], [3, 4]])``."""
    if isinstance(data, Tensor) and data.dtype.is_complex:
        t = data.detach().to(device=device, dtype=dtype).clone().realize()
        return t.requires_grad_() if requires_grad else t
    if isinstance(data, Tensor):
        t = data._detached()
        t = t.cast(dtype) if dtype is not None else t
        t = (t.to(device) if device is not None else t).clone()
        return _made(t.realize(), requires_grad)
    return Tensor(data, dtype, device, requires_grad)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """``data`` as a tensor; a tensor of the same dtype and device is returned
    itself: ``mlfuse.as_tensor(np.arange(3))``."""
    if isinstance(data, Tensor):
        t = data.cast(dtype) if dtype is not None else data
        return t.to(device) if device is not None else t
    return Tensor(data, dtype, device)


asarray = as_tensor


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor with a numpy array's values and dtype: ``mlfuse.from_numpy(a)``."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy expects a numpy array, got {type(array).__name__}")
    return Tensor(array)


@_creation
def scalar_tensor(s, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A 0-d tensor (float by default): ``mlfuse.scalar_tensor(3)``."""
    return Tensor(s, dtype or dtypes.default_float, device, requires_grad)


@_creation
def zeros(*size, dtype=None, device=None, requires_grad: bool = False, out=None) -> Tensor:
    """Zeros: ``mlfuse.zeros(2, 3)``, ``mlfuse.zeros((2, 3), dtype=mlfuse.int64)``."""
    return _made(Tensor.zeros(*_size(size), dtype=dtype, device=device), requires_grad, out)


@_creation
def ones(*size, dtype=None, device=None, requires_grad: bool = False, out=None) -> Tensor:
    """Ones: ``mlfuse.ones(4)``."""
    return _made(Tensor.ones(*_size(size), dtype=dtype, device=device), requires_grad, out)


@_creation(formats=True)
def empty(*size, dtype=None, device=None, requires_grad: bool = False, out=None) -> Tensor:
    """An "uninitialised" tensor (mlfuse fills it with zeros): ``mlfuse.empty(3)``."""
    return zeros(*size, dtype=dtype, device=device, requires_grad=requires_grad, out=out)


@_creation
def full(size, fill_value, dtype=None, device=None, requires_grad: bool = False, out=None):
    """``fill_value`` everywhere (its dtype unless given): ``mlfuse.full((2, 2), 7)``."""
    size = (size,) if isinstance(size, (int, np.integer)) else tuple(size)
    return _made(Tensor.full(_shape_arg(size), fill_value, dtype, device), requires_grad, out)


@_creation
def arange(start, end=None, step=1, dtype=None, device=None, requires_grad: bool = False):
    """Values in ``[start, end)`` by ``step``: ``mlfuse.arange(5)``, ``mlfuse.arange(0, 1,
    0.25)``."""
    return _made(Tensor.arange(start, end, step, dtype=dtype, device=device), requires_grad)


@_creation
def range(start, end=None, step=1, dtype=None, device=None, requires_grad: bool = False):  # noqa: A001
    """Values from ``start`` to ``end`` inclusive by ``step``, floats by default
    (PyTorch's deprecated ``torch.range``): ``mlfuse.range(1, 4)``."""
    if end is None:
        start, end = 0, start
    n = int(math.floor((end - start) / step)) + 1
    if n < 0:
        raise ArgumentError(f"range: no values from {start} to {end} by step {step}")
    dt = dtype or dtypes.default_float
    t = Tensor.arange(n, dtype=dtypes.float64, device=device) * step + start
    return _made(t.cast(dt), requires_grad)


@_creation
def eye(n: int, m: int | None = None, dtype=None, device=None, requires_grad: bool = False):
    """The identity matrix (``n`` by ``m``): ``mlfuse.eye(3)``."""
    return _made(Tensor.eye(n, m, dtype=dtype, device=device), requires_grad)


@_creation
def linspace(start, end, steps: int, dtype=None, device=None, requires_grad: bool = False):
    """``steps`` evenly spaced values from ``start`` to ``end``: ``mlfuse.linspace(0, 1, 5)``."""
    return _made(Tensor.linspace(start, end, steps, dtype=dtype, device=device), requires_grad)


@_creation
def logspace(
    start, end, steps: int, base: float = 10.0, dtype=None, device=None, requires_grad=False
):
    """``base ** linspace(start, end, steps)``: ``mlfuse.logspace(0, 3, 4)``."""
    t = Tensor.logspace(start, end, steps, base, dtype=dtype, device=device)
    return _made(t, requires_grad)


@_creation
def rand(*size, generator=None, dtype=None, device=None, requires_grad: bool = False):
    """Uniform samples in [0, 1): ``mlfuse.rand(2, 3)``."""
    return Tensor.rand(
        *_size(size), seed=generator, dtype=dtype, device=device, requires_grad=requires_grad
    )


@_creation
def randn(*size, generator=None, dtype=None, device=None, requires_grad: bool = False):
    """Standard normal samples: ``mlfuse.randn(2, 3)``."""
    return Tensor.randn(
        *_size(size), seed=generator, dtype=dtype, device=device, requires_grad=requires_grad
    )


@_creation
def randint(low, high=None, size=None, *, generator=None, dtype=None, device=None):
    """Integers in ``[low, high)`` (``randint(high, size)`` from 0):
    ``mlfuse.randint(0, 10, (3,))``."""
    if size is None and isinstance(high, (tuple, list)):
        low, high, size = 0, low, high
    if size is None:
        raise ArgumentError("randint needs a size, e.g. mlfuse.randint(0, 10, (3,))")
    return Tensor.randint(low, high, tuple(size), dtype=dtype, device=device, seed=generator)


@_creation
def randperm(n: int, *, generator=None, dtype=None, device=None) -> Tensor:
    """A random permutation of ``0..n-1`` (int64): ``mlfuse.randperm(5)``."""
    return Tensor.randperm(n, dtype=dtype, device=device, seed=generator)


@_creation
def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, device=None):
    """Normal samples with ``mean`` and ``std`` (tensors broadcast against each
    other, or numbers with a ``size``): ``mlfuse.normal(mu, sigma)``,
    ``mlfuse.normal(0.0, 1.0, (2, 3))``."""
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        m = mean if isinstance(mean, Tensor) else None
        s = std if isinstance(std, Tensor) else None
        ref = m if m is not None else s
        shape = broadcast_shape(m.shape if m is not None else (), s.shape if s is not None else ())
        z = Tensor.randn(*shape, seed=generator, dtype=ref.dtype, device=ref.device)
        return z * std + mean
    if size is None:
        raise ArgumentError("normal: with number mean and std, give a size")
    shape = _shape_arg(tuple(size))
    return Tensor.normal(*shape, mean=mean, std=std, seed=generator, dtype=dtype, device=device)


def _like(fill):
    def fn(input, dtype=None, device=None, requires_grad: bool = False):  # noqa: A002
        return _made(fill(input, dtype or input.dtype, device or input.device), requires_grad)

    return _creation(fn, formats=True)


zeros_like = _like(lambda t, dt, dev: Tensor.full(t.shape, 0, dt, dev))
ones_like = _like(lambda t, dt, dev: Tensor.full(t.shape, 1, dt, dev))
empty_like = zeros_like
rand_like = _like(lambda t, dt, dev: Tensor.rand(*t.shape, dtype=dt, device=dev))
randn_like = _like(lambda t, dt, dev: Tensor.randn(*t.shape, dtype=dt, device=dev))
for _f, _what in ((zeros_like, "zeros"), (ones_like, "ones"), (rand_like, "uniform [0, 1)"),
                  (randn_like, "standard normal")):  # fmt: skip
    _f.__doc__ = f"Like ``input`` (shape, dtype, device unless given), filled with {_what}."
zeros_like.__name__, ones_like.__name__ = "zeros_like", "ones_like"
rand_like.__name__, randn_like.__name__ = "rand_like", "randn_like"


@_creation(formats=True)
def full_like(input, fill_value, dtype=None, device=None, requires_grad=False):  # noqa: A002
    """Like ``input``, filled with ``fill_value``: ``mlfuse.full_like(x, 7)``."""
    t = Tensor.full(input.shape, fill_value, dtype or input.dtype, device or input.device)
    return _made(t, requires_grad)


@_creation(formats=True)
def randint_like(input, low=0, high=None, *, dtype=None, device=None):  # noqa: A002
    """Random integers in ``[low, high)`` of ``input``'s shape and dtype:
    ``mlfuse.randint_like(x, 10)``."""
    if high is None:
        low, high = 0, low
    return Tensor.randint(low, high, input.shape, dtype=dtype or input.dtype,
                          device=device or input.device)  # fmt: skip


def _tri_indices(row: int, col: int, offset: int, lower: bool, dtype, device) -> Tensor:
    r, c = np.indices((row, col))
    keep = (c - r <= offset) if lower else (c - r >= offset)
    return Tensor(np.stack([r[keep], c[keep]]), dtype or dtypes.int64, device)


@_creation
def tril_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None) -> Tensor:
    """The (2, N) coordinates of the lower triangle of a ``row`` by ``col`` matrix,
    row by row: ``mlfuse.tril_indices(3, 3)``."""
    return _tri_indices(row, col, offset, True, dtype, device)


@_creation
def triu_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None) -> Tensor:
    """The (2, N) coordinates of the upper triangle, row by row:
    ``mlfuse.triu_indices(3, 3, 1)``."""
    return _tri_indices(row, col, offset, False, dtype, device)


# -- the functions whose top-level meaning differs from the method's -----------------
def _extreme(name: str, input, dim=None, keepdim=False, *, out=None, other=None):  # noqa: A002
    if isinstance(dim, Tensor) or other is not None:
        b = dim if isinstance(dim, Tensor) else other
        return _write_out(input.maximum(b) if name == "max" else input.minimum(b), out)
    if dim is None:
        return _write_out(getattr(input, name)(), out)
    values = getattr(input, name)(dim, keepdim)
    indices = getattr(input, "arg" + name)(dim, keepdim)
    return _write_out(SortResult(values, indices), out)


def max(input, dim=None, keepdim: bool = False, *, out=None):  # noqa: A001, A002
    """``torch.max``: the largest element; ``(values, indices)`` along ``dim``; the
    elementwise maximum of two tensors: ``mlfuse.max(x, 1).indices``."""
    return _extreme("max", _tensor(input), dim, keepdim, out=out)


def min(input, dim=None, keepdim: bool = False, *, out=None):  # noqa: A001, A002
    """``torch.min``: the smallest element; ``(values, indices)`` along ``dim``; the
    elementwise minimum of two tensors: ``mlfuse.min(x, 0).values``."""
    return _extreme("min", _tensor(input), dim, keepdim, out=out)


def _tensor(x) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


def rsub(input, other, alpha=1) -> Tensor:  # noqa: A002 - PyTorch's names
    """``other - alpha * input``: ``mlfuse.rsub(x, 1)``."""
    x = _tensor(input)
    return (x * alpha if alpha != 1 else x).__rsub__(other)


def polygamma(n: int, input, *, out=None) -> Tensor:  # noqa: A002 - PyTorch's names
    """The ``n``-th derivative of digamma, PyTorch's argument order:
    ``mlfuse.polygamma(1, x)`` is ``x.polygamma(1)``."""
    return _write_out(_tensor(input).polygamma(n), out)


def numel(input) -> int:  # noqa: A002 - PyTorch's names
    """The number of elements: ``mlfuse.numel(x)``."""
    return _tensor(input).numel()


def is_tensor(obj) -> bool:
    """Whether ``obj`` is a mlfuse Tensor: ``mlfuse.is_tensor(x)``."""
    return isinstance(obj, Tensor)


def is_floating_point(input) -> bool:  # noqa: A002 - PyTorch's names
    """Whether the tensor's dtype is a float: ``mlfuse.is_floating_point(x)``."""
    return _tensor(input).dtype.is_float


def is_nonzero(input) -> bool:  # noqa: A002 - PyTorch's names
    """Whether a one-element tensor is not zero: ``mlfuse.is_nonzero(t)``."""
    t = _tensor(input)
    if t.numel() != 1:
        raise ArgumentError(f"is_nonzero needs exactly one element, the tensor has {t.numel()}")
    return bool(t.item())


# -- joining, broadcasting and building ----------------------------------------------
def concat(tensors, dim: int = 0) -> Tensor:
    """:func:`mlfuse.cat`'s other name: ``mlfuse.concat([a, b], 1)``."""
    return cat(tensors, dim)


concatenate = concat


def atleast_1d(*tensors):
    """Each tensor with at least 1 dim (one tensor in, one out): ``mlfuse.atleast_1d(x)``."""
    return _atleast_all(tensors, 1)


def atleast_2d(*tensors):
    """Each tensor with at least 2 dims (a vector becomes a row)."""
    return _atleast_all(tensors, 2)


def atleast_3d(*tensors):
    """Each tensor with at least 3 dims (numpy's rule: (n,) -> (1, n, 1))."""
    return _atleast_all(tensors, 3)


def _atleast_all(tensors, nd: int):
    from mlfuse.tensor import _atleast

    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    out = tuple(_atleast(_tensor(t), nd) for t in tensors)
    return out[0] if len(out) == 1 else out


def column_stack(tensors) -> Tensor:
    """Join as columns: 0-d and 1-d tensors become (n, 1) columns:
    ``mlfuse.column_stack([a, b])``."""
    ts = [_tensor(t) for t in tensors]
    return cat([t.reshape(-1, 1) if t.ndim < 2 else t for t in ts], 1)


def row_stack(tensors) -> Tensor:
    """:func:`mlfuse.vstack`'s other name."""
    from mlfuse.tensor import vstack

    return vstack(tensors)


def broadcast_shapes(*shapes) -> tuple[int, ...]:
    """The shape the given shapes broadcast to: ``mlfuse.broadcast_shapes((3, 1), (4,))``."""
    out: tuple[int, ...] = ()
    for s in shapes:
        s = (s,) if isinstance(s, (int, np.integer)) else tuple(s)
        out = broadcast_shape(out, s)
    return out


def broadcast_tensors(*tensors) -> tuple[Tensor, ...]:
    """The tensors expanded to their common shape (views):
    ``a2, b2 = mlfuse.broadcast_tensors(a, b)``."""
    ts = [_tensor(t) for t in tensors]
    shape = broadcast_shapes(*(t.shape for t in ts))
    return tuple(t.expand(shape) if t.shape != shape else t for t in ts)


def block_diag(*tensors) -> Tensor:
    """A block-diagonal matrix of the (0-, 1- or 2-d) tensors:
    ``mlfuse.block_diag(a, b)``."""
    ts = []
    for t in tensors:
        t = _tensor(t)
        if t.ndim > 2:
            raise ArgumentError(f"block_diag: tensors must have at most 2 dims, got {t.shape}")
        ts.append(t.reshape(1, -1) if t.ndim < 2 else t)
    if not ts:
        return Tensor.zeros(1, 0)
    dt = ts[0].dtype
    for t in ts[1:]:
        dt = dtypes.promote(dt, t.dtype)
    cols = builtins.sum(t.shape[1] for t in ts)
    rows, left = [], 0
    for t in ts:
        w = t.shape[1]
        rows.append(t.cast(dt).pad(((0, 0), (left, cols - left - w))))
        left += w
    return cat(rows, 0)


def cartesian_prod(*tensors) -> Tensor:
    """Every combination of the 1-d tensors' elements, as rows (one tensor: itself):
    ``mlfuse.cartesian_prod(a, b)``."""
    ts = [_tensor(t) for t in tensors]
    for t in ts:
        if t.ndim != 1:
            raise ArgumentError(f"cartesian_prod: tensors must be 1-d, got shape {t.shape}")
    if len(ts) == 1:
        return ts[0]
    grids = ts[0].meshgrid(*ts[1:], indexing="ij")
    from mlfuse.tensor import stack

    return stack([g.reshape(-1) for g in grids], 1)


def combinations(input, r: int = 2, with_replacement: bool = False) -> Tensor:  # noqa: A002
    """The length-``r`` combinations of a 1-d tensor's elements, as rows (itertools'
    order): ``mlfuse.combinations(x, 2)``."""
    t = _tensor(input)
    if t.ndim != 1:
        raise ArgumentError(f"combinations: input must be 1-d, got shape {t.shape}")
    if isinstance(r, bool) or not isinstance(r, int) or r < 0:
        raise ArgumentError(f"combinations: r must be a non-negative int, got {r!r}")
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    idx = np.array(list(pick(builtins.range(t.shape[0]), r)), dtype=np.int64)
    if r == 0:
        return t[:0]
    if idx.size == 0:  # fewer elements than r: no combination, PyTorch's (0, r)
        none = Tensor.zeros(0, r, dtype=t.dtype, device=t.device)
        return none + _zero_gradient(t, t.dtype) if t.requires_grad else none
    return t[Tensor(idx.reshape(-1, r), device=t.device)]


def chain_matmul(*matrices) -> Tensor:
    """The product of the 2-d matrices, left to right: ``mlfuse.chain_matmul(a, b, c)``."""
    if not matrices:
        raise ArgumentError("chain_matmul needs at least one matrix")
    out = _tensor(matrices[0])
    for m in matrices[1:]:
        out = out @ m
    return out


def tensordot(a, b, dims=2) -> Tensor:
    """Contract the last ``dims`` dims of ``a`` with the first of ``b`` (or the listed
    pairs ``([a dims], [b dims])``): ``mlfuse.tensordot(a, b, dims=([1], [0]))``."""
    a, b = _tensor(a), _tensor(b)
    if isinstance(dims, (int, np.integer)):
        if dims < 0:
            raise ArgumentError(f"tensordot: dims must be non-negative, got {dims}")
        da = list(builtins.range(a.ndim - dims, a.ndim))
        db = list(builtins.range(dims))
    else:
        da, db = ([d] if isinstance(d, int) else list(d) for d in dims)
        da = [_norm_axis(d, a.ndim, "dims") for d in da]
        db = [_norm_axis(d, b.ndim, "dims") for d in db]
    if len(da) != len(db):
        raise ArgumentError(f"tensordot: {len(da)} dims of a against {len(db)} of b")
    for i, j in zip(da, db):
        if a.shape[i] != b.shape[j]:
            raise ArgumentError(
                f"tensordot: dim {i} of a ({a.shape[i]}) and dim {j} of b ({b.shape[j]}) differ"
            )
    fa = [i for i in builtins.range(a.ndim) if i not in da]
    fb = [j for j in builtins.range(b.ndim) if j not in db]
    k = int(np.prod([a.shape[i] for i in da])) if da else 1
    am = a.permute(fa + da).reshape(-1, k)
    bm = b.permute(db + fb).reshape(k, -1)
    return (am @ bm).reshape(tuple(a.shape[i] for i in fa) + tuple(b.shape[j] for j in fb))


def unravel_index(indices, shape) -> tuple[Tensor, ...]:
    """The coordinates in ``shape`` of flat (row-major) ``indices``:
    ``rows, cols = mlfuse.unravel_index(i, (3, 4))``."""
    idx = _tensor(indices)
    if idx.dtype.is_float or idx.dtype.is_bool:
        raise TypeError(f"unravel_index: indices must be integers, got {idx.dtype.name}")
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    out = []
    rest = idx.cast(dtypes.int64)
    total = int(np.prod(shape))
    if idx.node.realized and idx.numel():
        v = idx.numpy()
        if v.min() < -total or v.max() >= total:
            raise ArgumentError(f"unravel_index: an index is out of bounds for shape {shape}")
    rest = (rest < 0).where(rest + total, rest)
    for s in reversed(shape):
        out.append(rest % s)
        rest = rest // s
    return tuple(reversed(out))


def vander(x, N: int | None = None, increasing: bool = False) -> Tensor:  # noqa: N803
    """The Vandermonde matrix of a 1-d tensor (powers ``N-1 .. 0``, or increasing):
    ``mlfuse.vander(x, 3)``."""
    t = _tensor(x)
    if t.ndim != 1:
        raise ArgumentError(f"vander: x must be 1-d, got shape {t.shape}")
    n = t.shape[0] if N is None else N
    powers = np.arange(n) if increasing else np.arange(n)[::-1]
    cols = [t ** int(p) if p else Tensor.ones_like(t) for p in powers]
    from mlfuse.tensor import stack

    return stack(cols, 1) if cols else Tensor.zeros(t.shape[0], 0, dtype=t.dtype)


def isin(elements, test_elements, *, assume_unique: bool = False, invert: bool = False):
    """True where an element of ``elements`` is among ``test_elements`` (shape of
    ``elements``): ``mlfuse.isin(x, Tensor([1, 3]))``."""
    e = _tensor(elements)
    t = test_elements if isinstance(test_elements, Tensor) else Tensor(test_elements)
    if t.numel() == 0:
        hit = Tensor.full(e.shape, False, dtypes.bool_, e.device)
    else:
        hit = (e.unsqueeze(-1) == t.reshape(-1)).any(-1)
    return hit.logical_not() if invert else hit


def trapezoid(y, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """The trapezoid rule along ``dim``, spacing ``dx`` (default 1) or sample points
    ``x``: ``mlfuse.trapezoid(y, dx=0.1)``."""
    y = _tensor(y)
    d = _norm_axis(dim, y.ndim, "dim")
    n = y.shape[d]
    if n == 0:
        return y.sum(d) * 0
    lo, hi = y.narrow(d, 0, n - 1), y.narrow(d, 1, n - 1)
    if x is not None:
        return ((lo + hi) * _spacing(x, y, d)).sum(d) / 2
    return (lo + hi).sum(d) * ((1.0 if dx is None else dx) / 2)


def _spacing(x, y: Tensor, d: int) -> Tensor:
    """The steps between sample points ``x`` along dim ``d`` of ``y`` (a 1-d
    ``x`` lies along ``d``)."""
    xt = _tensor(x)
    if xt.ndim == 1:
        shape = [1] * y.ndim
        shape[d] = xt.shape[0]
        xt = xt.reshape(shape)
    return xt.diff(dim=d)


trapz = trapezoid


def cumulative_trapezoid(y, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """The running trapezoid integral along ``dim`` (one element shorter):
    ``mlfuse.cumulative_trapezoid(y)``."""
    y = _tensor(y)
    d = _norm_axis(dim, y.ndim, "dim")
    n = y.shape[d]
    m = builtins.max(n - 1, 0)
    lo, hi = y.narrow(d, 0, m), y.narrow(d, builtins.min(1, n), m)
    if x is not None:
        return ((lo + hi) * _spacing(x, y, d) / 2).cumsum(d)
    return ((lo + hi) * ((1.0 if dx is None else dx) / 2)).cumsum(d)


def _window(values: np.ndarray, dtype, device, requires_grad) -> Tensor:
    t = Tensor(values, dtype or dtypes.default_float, device)
    return _made(t, requires_grad)


def _window_points(window_length: int, periodic: bool) -> tuple[np.ndarray, int]:
    if isinstance(window_length, bool) or not isinstance(window_length, int) or window_length < 0:
        raise ArgumentError(f"window_length must be a non-negative int, got {window_length!r}")
    n = window_length + 1 if periodic else window_length
    return np.arange(window_length, dtype=np.float64), n


@_creation
def hann_window(window_length: int, periodic: bool = True, *, dtype=None, device=None,
                requires_grad: bool = False) -> Tensor:  # fmt: skip
    """The Hann window: ``mlfuse.hann_window(8)``."""
    return hamming_window(window_length, periodic, 0.5, 0.5, dtype=dtype, device=device,
                          requires_grad=requires_grad)  # fmt: skip


@_creation
def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54,
                   beta: float = 0.46, *, dtype=None, device=None,
                   requires_grad: bool = False) -> Tensor:  # fmt: skip
    """The generalized Hamming window ``alpha - beta cos(2 pi k / (N - 1))``:
    ``mlfuse.hamming_window(8)``."""
    k, n = _window_points(window_length, periodic)
    w = np.ones(window_length) if n == 1 else alpha - beta * np.cos(2 * np.pi * k / (n - 1))
    return _window(w, dtype, device, requires_grad)


@_creation
def blackman_window(window_length: int, periodic: bool = True, *, dtype=None, device=None,
                    requires_grad: bool = False) -> Tensor:  # fmt: skip
    """The Blackman window: ``mlfuse.blackman_window(8)``."""
    k, n = _window_points(window_length, periodic)
    if n == 1:
        w = np.ones(window_length)
    else:
        a = 2 * np.pi * k / (n - 1)
        w = 0.42 - 0.5 * np.cos(a) + 0.08 * np.cos(2 * a)
    return _window(w, dtype, device, requires_grad)


@_creation
def bartlett_window(window_length: int, periodic: bool = True, *, dtype=None, device=None,
                    requires_grad: bool = False) -> Tensor:  # fmt: skip
    """The Bartlett (triangular) window: ``mlfuse.bartlett_window(8)``."""
    k, n = _window_points(window_length, periodic)
    w = np.ones(window_length) if n == 1 else 1 - np.abs(2 * k / (n - 1) - 1)
    return _window(w, dtype, device, requires_grad)


@_creation
def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *,
                  dtype=None, device=None, requires_grad: bool = False) -> Tensor:  # fmt: skip
    """The Kaiser window: ``mlfuse.kaiser_window(8, beta=5.0)``."""
    k, n = _window_points(window_length, periodic)
    if n == 1:
        w = np.ones(window_length)
    else:
        r = 2 * k / (n - 1) - 1
        w = np.i0(beta * np.sqrt(np.clip(1 - r * r, 0, None))) / np.i0(beta)
    return _window(w, dtype, device, requires_grad)


# -- dtypes, devices and settings ---------------------------------------------------------
class finfo:  # noqa: N801 - PyTorch's name
    """Machine limits of a float dtype, as ``torch.finfo``: ``mlfuse.finfo(mlfuse.float32).eps``
    (``bits``, ``eps``, ``max``, ``min``, ``tiny``/``smallest_normal``, ``resolution``)."""

    _BF16 = (8, 2.0**-7, 3.3895313892515355e38, 2.0**-126, 0.01)

    def __init__(self, type=None) -> None:  # noqa: A002 - PyTorch's name
        dt = dtypes.default_float if type is None else dtypes.as_dtype(type)
        dt = dt.to_real  # a complex dtype's: its parts' (PyTorch's)
        if not dt.is_float:
            raise TypeError(f"finfo needs a float dtype, got {dt.name} (use iinfo)")
        self.dtype = dt
        if dt.name == "bfloat16":
            self.bits = 16
            _, self.eps, self.max, self.tiny, self.resolution = self._BF16
        else:
            f = np.finfo(np.dtype(dt.np))
            self.bits, self.eps, self.max = int(f.bits), float(f.eps), float(f.max)
            self.tiny, self.resolution = float(f.tiny), float(f.resolution)
        self.min = -self.max
        self.smallest_normal = self.tiny

    def __repr__(self) -> str:
        return (
            f"finfo(resolution={self.resolution}, min={self.min}, max={self.max}, "
            f"eps={self.eps}, smallest_normal={self.tiny}, tiny={self.tiny}, "
            f"dtype={self.dtype.name})"
        )


class iinfo:  # noqa: N801 - PyTorch's name
    """Limits of an integer dtype, as ``torch.iinfo``: ``mlfuse.iinfo(mlfuse.int32).max``."""

    def __init__(self, type) -> None:  # noqa: A002 - PyTorch's name
        dt = dtypes.as_dtype(type)
        if dt.is_float:
            raise TypeError(f"iinfo needs an integer dtype, got {dt.name} (use finfo)")
        self.dtype = dt
        if dt.is_bool:
            self.bits, self.min, self.max = 8, 0, 1
        else:
            i = np.iinfo(np.dtype(dt.np))
            self.bits, self.min, self.max = int(i.bits), int(i.min), int(i.max)

    def __repr__(self) -> str:
        return f"iinfo(min={self.min}, max={self.max}, bits={self.bits}, dtype={self.dtype.name})"


class device(str):  # noqa: N801 - PyTorch's name
    """A device name with PyTorch's ``torch.device`` face: ``mlfuse.device("cuda")``,
    ``mlfuse.device("cuda", 0)``, ``.type``, ``.index``; usable wherever a device
    name is (``Tensor(x, device=mlfuse.device("cpu"))``)."""

    def __new__(cls, type, index=None):  # noqa: A002 - PyTorch's name
        if isinstance(type, device):
            return type
        name = str(type)
        if index is not None:
            if ":" in name:
                raise ArgumentError(f"device: {name!r} has an index already; index={index}")
            name = f"{name}:{int(index)}"
        kind, _, idx = name.partition(":")
        if kind not in devices():
            raise ArgumentError(f"unknown device type {kind!r}; known: {', '.join(devices())}")
        if idx and not idx.isdigit():
            raise ArgumentError(f"device: bad index in {name!r}")
        return super().__new__(cls, name)

    @property
    def type(self) -> str:
        """The kind of device: ``"cpu"``, ``"cuda"``."""
        return str.__str__(self).partition(":")[0]

    @property
    def index(self) -> int | None:
        """The device's index, None when not given."""
        idx = str.__str__(self).partition(":")[2]
        return int(idx) if idx else None

    def __repr__(self) -> str:
        idx = self.index
        return f"device(type={self.type!r}" + (f", index={idx})" if idx is not None else ")")


def get_default_dtype():
    """The dtype of float tensors made from Python floats: ``mlfuse.get_default_dtype()``."""
    return dtypes.default_float


def set_default_dtype(d) -> None:
    """Make float tensors from Python floats (and ``zeros``, ``randn``...) ``d``
    (float32 or float64, as PyTorch allows): ``mlfuse.set_default_dtype(mlfuse.float64)``."""
    dt = dtypes.as_dtype(d)
    if dt.name not in ("float32", "float64", "float16", "bfloat16"):
        raise TypeError(f"set_default_dtype needs a float dtype, got {dt.name}")
    dtypes.default_float = dt


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None) -> None:  # fmt: skip
    """How realized tensors print (numpy's print options): ``mlfuse.set_printoptions(4)``."""
    opts = {"precision": precision, "threshold": threshold, "edgeitems": edgeitems,
            "linewidth": linewidth}  # fmt: skip
    if profile == "default":
        opts = {"precision": 8, "threshold": 1000, "edgeitems": 3, "linewidth": 75} | {
            k: v for k, v in opts.items() if v is not None
        }
    if sci_mode is not None:
        opts["suppress"] = not sci_mode
    np.set_printoptions(**{k: v for k, v in opts.items() if v is not None})


def get_num_threads() -> int:
    """Threads a CPU kernel launch uses: ``mlfuse.get_num_threads()``."""
    return get_target("cpu").threads()


def set_num_threads(n: int) -> None:
    """Launch CPU kernels on ``n`` threads from now on: ``mlfuse.set_num_threads(1)``."""
    get_target("cpu").set_threads(n)


_INFERENCE: list[bool] = [False]


class inference_mode(no_grad):  # noqa: N801 - PyTorch's name
    """``torch.inference_mode``: no gradients are recorded in the block (as
    :class:`mlfuse.no_grad`; ``mode=False`` records them): ``with mlfuse.inference_mode(): ...``."""

    def __init__(self, mode: bool = True) -> None:
        super().__init__()
        self.mode = not mode
        self._inference: list[bool] = []

    def __enter__(self):
        self._inference.append(_INFERENCE[0])
        _INFERENCE[0] = not self.mode
        return super().__enter__()

    def __exit__(self, *exc) -> None:
        _INFERENCE[0] = self._inference.pop()
        super().__exit__(*exc)


def is_inference_mode_enabled() -> bool:
    """Whether the code runs inside :class:`inference_mode` (on)."""
    return _INFERENCE[0]


def compile(model=None, **kwargs):  # noqa: A001 - PyTorch's name
    """``torch.compile``'s place: mlfuse compiles every realize already (fused
    kernels, cached), so the model or function is returned as it is; used as
    ``@mlfuse.compile`` or ``@mlfuse.compile(mode=...)`` too."""
    if model is None:
        return lambda m: m
    return model


def from_dlpack(ext, device=None) -> Tensor:
    """A tensor sharing a DLPack-exporting array's memory where it can:
    ``mlfuse.from_dlpack(np_array)``."""
    return Tensor.from_dlpack(ext, device)


def seed() -> int:
    """Seed the generator with a fresh random seed, and return it."""
    from mlfuse.tensor import manual_seed

    s = int.from_bytes(os.urandom(8), "little") >> 1
    manual_seed(s)
    return s


def initial_seed() -> int:
    """The seed the generator started from (the last ``manual_seed``)."""
    from mlfuse.tensor import _SEED

    return _SEED[0]


_DETERMINISTIC = [False]


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Accepted: mlfuse's kernels are deterministic (no atomics; fixed reduction
    orders), so every algorithm already is."""
    _DETERMINISTIC[0] = bool(mode)
    _SWITCHES["deterministic_warn_only"] = bool(warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    """Whether :func:`use_deterministic_algorithms` was turned on."""
    return _DETERMINISTIC[0]


def can_cast(from_, to) -> bool:
    """Whether PyTorch's casting rules allow ``from_`` to ``to`` in place (no float to
    integer, no non-bool to bool): ``mlfuse.can_cast(mlfuse.float32, mlfuse.int32)``."""
    a, b = dtypes.as_dtype(from_), dtypes.as_dtype(to)
    if a.is_float and not b.is_float:
        return False
    return not (b.is_bool and not a.is_bool)


def histogram(input, bins=100, *, range=None, weight=None, density: bool = False):  # noqa: A002
    """``(hist, bin_edges)`` of the values (numpy's histogram, on the host): ``bins``
    a count or the edges: ``h, e = mlfuse.histogram(x, 10)``."""
    x = _tensor(input)
    if not x.dtype.is_float:
        raise DTypeError(f"histogram needs a float tensor, got {x.dtype.name}")
    b = bins.numpy() if isinstance(bins, Tensor) else bins
    w = weight.numpy().reshape(-1) if isinstance(weight, Tensor) else weight
    h, e = np.histogram(x.numpy().reshape(-1), b, range=range, weights=w, density=density)
    return HistogramResult(Tensor(h, x.dtype, x.device), Tensor(e, x.dtype, x.device))


class HistogramResult(NamedTuple):
    """``(hist, bin_edges)`` of :func:`histogram`."""

    hist: Tensor
    bin_edges: Tensor


def lu_unpack(LU_data, LU_pivots, unpack_data: bool = True, unpack_pivots: bool = True):  # noqa: N803
    """``(P, L, U)`` from the packed factors :func:`lu` gives:
    ``P, L, U = mlfuse.lu_unpack(*mlfuse.lu(a))``."""
    from mlfuse import linalg

    return linalg.lu_unpack(LU_data, LU_pivots, unpack_data, unpack_pivots)


# -- numerical derivatives ---------------------------------------------------------
def gradient(input, *, spacing=1, dim=None, edge_order: int = 1) -> tuple[Tensor, ...]:  # noqa: A002
    """The derivative of sampled values along each of ``dim`` (all dims by default),
    by central differences inside and one-sided ones of order ``edge_order`` (1 or
    2) at the ends, as ``numpy.gradient``; ``spacing`` is one step for every dim, a
    step per dim, or the sample coordinates per dim (1-d tensors):
    ``(dy,) = mlfuse.gradient(y, spacing=(x,))``."""
    f = _tensor(input)
    if not f.dtype.is_float:
        f = f.cast(dtypes.default_float)
    if dim is None:
        dims = list(builtins.range(f.ndim))
    elif isinstance(dim, (int, np.integer)):
        dims = [_norm_axis(int(dim), f.ndim, "dim")]
    else:
        dims = [_norm_axis(int(d), f.ndim, "dim") for d in dim]
    if len(set(dims)) != len(dims):
        raise ArgumentError(f"gradient: dim {dim} names a dim twice")
    if edge_order not in (1, 2):
        raise ArgumentError(f"gradient: edge_order must be 1 or 2, got {edge_order}")
    if spacing is None:
        spacing = 1
    if isinstance(spacing, (list, tuple)):
        if len(spacing) != len(dims):
            raise ArgumentError(
                f"gradient: spacing has {len(spacing)} entries for {len(dims)} dims"
            )
        steps = list(spacing)
    else:
        steps = [spacing] * len(dims)
    return tuple(_gradient_along(f, d, h, edge_order) for d, h in zip(dims, steps))


def _gradient_along(f: Tensor, d: int, h, edge_order: int) -> Tensor:
    n = f.shape[d]
    if n < edge_order + 1:
        raise ArgumentError(
            f"gradient: dim {d} has {n} samples; edge_order {edge_order} needs at least "
            f"{edge_order + 1}"
        )

    def part(lo, hi=None):
        return f[(slice(None),) * d + (slice(lo, hi),)]

    def along(v):  # a 1-d tensor of coefficients lined up with dim d
        return v.reshape(tuple(-1 if k == d else 1 for k in builtins.range(f.ndim)))

    if isinstance(h, Tensor):
        if h.ndim != 1 or h.shape[0] != n:
            raise ArgumentError(
                f"gradient: coordinates for dim {d} must be 1-d with {n} values, got {h.shape}"
            )
        dx = h.cast(f.dtype).to(f.device).diff()
    else:
        dx = None
    if dx is None:  # uniform steps
        inner = (part(2) - part(None, -2)) / (2.0 * h)
        if edge_order == 1:
            first, last = (part(1, 2) - part(0, 1)) / h, (part(-1) - part(-2, -1)) / h
        else:
            first = (-3.0 * part(0, 1) + 4.0 * part(1, 2) - part(2, 3)) / (2.0 * h)
            last = (3.0 * part(-1) - 4.0 * part(-2, -1) + part(-3, -2)) / (2.0 * h)
    else:
        d1, d2 = dx[:-1], dx[1:]  # the steps before and after each inner sample
        a, b, c = -d2 / (d1 * (d1 + d2)), (d2 - d1) / (d1 * d2), d1 / (d2 * (d1 + d2))
        inner = along(a) * part(None, -2) + along(b) * part(1, -1) + along(c) * part(2)
        if edge_order == 1:
            first = (part(1, 2) - part(0, 1)) / along(dx[:1])
            last = (part(-1) - part(-2, -1)) / along(dx[-1:])
        else:
            e1, e2 = dx[:1], dx[1:2]
            ca = -(2.0 * e1 + e2) / (e1 * (e1 + e2))
            cb, cc = (e1 + e2) / (e1 * e2), -e1 / (e2 * (e1 + e2))
            first = along(ca) * part(0, 1) + along(cb) * part(1, 2) + along(cc) * part(2, 3)
            e1, e2 = dx[-2:-1], dx[-1:]
            ca = e2 / (e1 * (e1 + e2))
            cb, cc = -(e2 + e1) / (e1 * e2), (2.0 * e2 + e1) / (e2 * (e1 + e2))
            last = along(ca) * part(-3, -2) + along(cb) * part(-2, -1) + along(cc) * part(-1)
    return cat([first, inner, last], d)


# -- batching a function -------------------------------------------------------------
def vmap(func, in_dims=0, out_dims=0, randomness: str = "error", *, chunk_size=None):
    """``func`` mapped over a dim of its tensor arguments (``in_dims``: one dim for
    all, or one per positional argument, None for arguments passed whole), its
    results stacked along ``out_dims``: ``mlfuse.vmap(mlfuse.dot)(a, b)`` is the
    row-wise dot product. Each batch element is traced on its own, so the graph
    grows with the batch size (the kernels still fuse). ``randomness``:
    ``"error"`` refuses functions that draw random numbers, ``"different"`` draws
    anew per element, ``"same"`` repeats the first element's draws."""
    if not callable(func):
        raise TypeError(f"vmap: func must be callable, got {type(func).__name__}")
    if randomness not in ("error", "different", "same"):
        raise ArgumentError(
            f"vmap: randomness must be 'error', 'different' or 'same', got {randomness!r}"
        )

    def mapped(*args, **kwargs):
        dims = in_dims if isinstance(in_dims, (tuple, list)) else (in_dims,) * len(args)
        if len(dims) != len(args):
            raise ArgumentError(
                f"vmap: in_dims has {len(dims)} entries for {len(args)} positional arguments"
            )
        size = None
        norm = []
        for k, (a, d) in enumerate(zip(args, dims)):
            if d is None:
                norm.append(None)
                continue
            leaves = _tree_leaves(a)
            if leaves is None:
                raise ArgumentError(
                    f"vmap: argument {k} is a {type(a).__name__}, not a Tensor (or a "
                    "dict/list/tuple of them); give it in_dims None to pass it whole"
                )
            for t in leaves:
                dd = _norm_axis(d, t.ndim, f"in_dims[{k}]")
                if size is not None and t.shape[dd] != size:
                    raise ArgumentError(
                        f"vmap: the mapped dims differ in size ({size} and {t.shape[dd]} for "
                        f"argument {k})"
                    )
                size = t.shape[dd]
            norm.append(d)
        if size is None:
            raise ArgumentError("vmap: no argument is mapped (every in_dims entry is None)")
        state = get_rng_state()
        outs = []
        for i in builtins.range(size):
            if randomness == "same":
                set_rng_state(state)
            picked = [a if d is None else _tree_select(a, d, i) for a, d in zip(args, norm)]
            outs.append(func(*picked, **kwargs))
            if randomness == "error" and i == 0 and not get_rng_state().equal(state):
                raise RuntimeError(
                    "vmap: func drew random numbers; pass randomness='different' or 'same'"
                )
        return _stack_results(outs, out_dims)

    mapped.__name__ = getattr(func, "__name__", "vmapped")
    return mapped


def _tree_leaves(a) -> list[Tensor] | None:
    """The tensors of ``a``: a tensor, or dicts/lists/tuples of them (None if
    something else is inside)."""
    if isinstance(a, Tensor):
        return [a]
    items = a.values() if isinstance(a, dict) else a if isinstance(a, (list, tuple)) else None
    if items is None:
        return None
    out: list[Tensor] = []
    for x in items:
        got = _tree_leaves(x)
        if got is None:
            return None
        out += got
    return out


def _tree_select(a, d: int, i: int):
    """Element ``i`` along dim ``d`` of every tensor of ``a``, in ``a``'s structure."""
    if isinstance(a, Tensor):
        return a.select(d, i)
    if isinstance(a, dict):
        return {k: _tree_select(v, d, i) for k, v in a.items()}
    return type(a)(_tree_select(v, d, i) for v in a)


def _stack_results(outs: list, out_dims):
    first = outs[0]
    if isinstance(first, Tensor):
        if out_dims is None:
            raise ArgumentError("vmap: out_dims None needs results that are not mapped")
        if not isinstance(out_dims, (int, np.integer)):
            raise ArgumentError(f"vmap: out_dims {out_dims!r} for one result must be an int")
        return Tensor.stack(*outs, dim=_norm_axis(int(out_dims), first.ndim + 1, "out_dims"))
    if isinstance(first, (tuple, list)):
        dims = out_dims if isinstance(out_dims, (tuple, list)) else (out_dims,) * len(first)
        if len(dims) != len(first):
            raise ArgumentError(f"vmap: out_dims has {len(dims)} entries for {len(first)} results")
        got = [_stack_results([o[k] for o in outs], dims[k]) for k in builtins.range(len(first))]
        return type(first)(got) if isinstance(first, list) else tuple(got)
    if isinstance(first, dict):
        return {k: _stack_results([o[k] for o in outs], out_dims) for k in first}
    raise TypeError(
        f"vmap: func must return tensors (or tuples of them), got {type(first).__name__}"
    )


# -- copies of views (PyTorch's *_copy functions) -----------------------------------
_VIEW_COPIES = (
    "as_strided", "detach", "diagonal", "expand", "permute", "select", "split",
    "split_with_sizes", "squeeze", "t", "transpose", "unbind", "unfold", "unsqueeze", "view",
)  # fmt: skip


def _view_copy(name: str):
    method = getattr(Tensor, name)

    def fn(input, *args, out=None, **kwargs):  # noqa: A002 - PyTorch's names
        got = getattr(_tensor(input), name)(*args, **kwargs)
        got = tuple(g.clone() for g in got) if isinstance(got, tuple) else got.clone()
        return _write_out(got, out)

    fn.__name__ = fn.__qualname__ = name + "_copy"
    fn.__module__ = __name__
    fn.__doc__ = (
        f"``mlfuse.{name}_copy(x, ...)`` is ``x.{name}(...)`` as a tensor of its own "
        f"(not a view).\n\n" + (method.__doc__ or "")
    )
    return fn


for _name in _VIEW_COPIES:
    globals()[_name + "_copy"] = _view_copy(_name)


def alias_copy(input, *, out=None) -> Tensor:  # noqa: A002
    """A copy of ``input``: ``mlfuse.alias_copy(x)``."""
    return _write_out(_tensor(input).clone(), out)


def slice_copy(input, dim: int = 0, start=None, end=None, step: int = 1, *, out=None):  # noqa: A002
    """``input[start:end:step]`` along ``dim``, as a tensor of its own:
    ``mlfuse.slice_copy(x, 1, 0, 4, 2)``."""
    x = _tensor(input)
    d = _norm_axis(dim, x.ndim, "dim")
    if step is None or step <= 0:
        raise ArgumentError(f"slice_copy: step must be positive, got {step}")
    return _write_out(x[(slice(None),) * d + (slice(start, end, step),)].clone(), out)


def fill(input, value) -> Tensor:  # noqa: A002
    """A tensor like ``input`` filled with ``value`` (a number or a one-element
    tensor; ``input`` is left alone): ``mlfuse.fill(x, 2.0)``."""
    x = _tensor(input)
    if isinstance(value, Tensor):
        if value.numel() != 1:
            raise ArgumentError(f"fill: value must have one element, got shape {value.shape}")
        return value.reshape(()).cast(x.dtype).to(x.device)._broadcast_to(x.shape).contiguous()
    return Tensor.full_like(x, value)


def constant_pad_nd(input, pad, value=0) -> Tensor:  # noqa: A002
    """``F.pad(input, pad, "constant", value)``: ``mlfuse.constant_pad_nd(x, (1, 1))``."""
    return F.pad(_tensor(input), pad, "constant", value)


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,  # noqa: A002
                            ceil_mode: bool = False):  # fmt: skip
    """``(values, indices)`` of :func:`max_pool1d`:
    ``v, i = mlfuse.max_pool1d_with_indices(x, 2)``."""
    return F.max_pool1d(
        input, kernel_size, stride, padding, dilation, ceil_mode=ceil_mode, return_indices=True
    )


# -- random samples of other distributions ------------------------------------------
def poisson(input, generator=None) -> Tensor:  # noqa: A002
    """Poisson samples, one per rate in ``input`` (non-negative floats), in its
    dtype: ``mlfuse.poisson(rates)``. Drawn on the host from the global generator."""
    from mlfuse.tensor import _rng

    x = _tensor(input)
    if not x.dtype.is_float:
        raise DTypeError(f"poisson needs float rates, got {x.dtype.name}")
    lam = x.detach().numpy().astype(np.float64)
    if (lam < 0).any() or np.isnan(lam).any():
        raise ArgumentError("poisson: rates must be non-negative numbers")
    return Tensor(_rng(generator).poisson(lam), x.dtype, x.device)


def binomial(count, prob, generator=None) -> Tensor:
    """Binomial samples: successes in ``count`` trials of probability ``prob``
    (float tensors that broadcast), in their dtype: ``mlfuse.binomial(n, p)``.
    Drawn on the host from the global generator."""
    from mlfuse.tensor import _rng

    n, p = _tensor(count), _tensor(prob)
    if not n.dtype.is_float or not p.dtype.is_float:
        raise DTypeError(f"binomial needs float tensors, got {n.dtype.name} and {p.dtype.name}")
    nh, ph = n.detach().numpy().astype(np.float64), p.detach().numpy().astype(np.float64)
    if (nh < 0).any() or (nh != np.floor(nh)).any():
        raise ArgumentError("binomial: count must hold non-negative whole numbers")
    if ((ph < 0) | (ph > 1) | np.isnan(ph)).any():
        raise ArgumentError("binomial: prob must lie in [0, 1]")
    dt = dtypes.promote(n.dtype, p.dtype)
    draws = _rng(generator).binomial(nh.astype(np.int64), ph).astype(np.float64)
    return Tensor(draws, dt, n.device)


# -- the random generator's state ----------------------------------------------------
def get_rng_state() -> Tensor:
    """The global generator's state as a uint8 tensor, for :func:`set_rng_state`:
    ``s = mlfuse.get_rng_state(); a = mlfuse.rand(3); mlfuse.set_rng_state(s)``."""
    from mlfuse.tensor import default_generator

    return default_generator.get_state()


def set_rng_state(new_state) -> None:
    """Restore the global generator to a state :func:`get_rng_state` returned."""
    from mlfuse.tensor import _GENERATOR, _from_state

    _GENERATOR[0] = _from_state(new_state, "set_rng_state")


_MATMUL_PRECISION = ["highest"]


def set_float32_matmul_precision(precision: str) -> None:
    """PyTorch's setting for float32 products (``"highest"``, ``"high"``,
    ``"medium"``): accepted and remembered; mlfuse computes float32 products with
    float32 FMAs at every setting (never TF32 or bfloat16), which meets them all."""
    if precision not in ("highest", "high", "medium"):
        raise ArgumentError(
            f"set_float32_matmul_precision: expected 'highest', 'high' or 'medium', "
            f"got {precision!r}"
        )
    _MATMUL_PRECISION[0] = precision


def get_float32_matmul_precision() -> str:
    """The last :func:`set_float32_matmul_precision` (``"highest"`` at first)."""
    return _MATMUL_PRECISION[0]


class Size(tuple):
    """PyTorch's ``torch.Size``: a tuple of dims with :meth:`numel`:
    ``mlfuse.Size([2, 3])``. ``Tensor.shape`` and ``size()`` are plain tuples,
    which compare equal to Sizes and are accepted wherever a Size is."""

    def __new__(cls, sizes=()):
        dims = tuple(sizes)
        for d in dims:
            if isinstance(d, bool) or not isinstance(d, (int, np.integer)):
                raise TypeError(f"Size: dims must be ints, got {type(d).__name__}")
        return super().__new__(cls, (int(d) for d in dims))

    def numel(self) -> int:
        """The number of elements of a tensor of this shape."""
        return math.prod(self)

    def __getitem__(self, i):
        got = super().__getitem__(i)
        return Size(got) if isinstance(i, slice) else got

    def __add__(self, other):
        return Size(tuple(self) + tuple(other))

    def __repr__(self) -> str:
        return f"mlfuse.Size({list(self)})"

    def __reduce__(self):
        return (Size, (tuple(self),))


# -- PyTorch's remaining switches and queries ------------------------------------------
def is_storage(obj) -> bool:
    """False: mlfuse has no storage objects (tensors own their buffers)."""
    return False


_TENSOR_TYPES = {
    "float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
    "bfloat16": "BFloat16Tensor", "int64": "LongTensor", "int32": "IntTensor",
    "int16": "ShortTensor", "int8": "CharTensor", "uint8": "ByteTensor", "bool": "BoolTensor",
    "uint16": "UInt16Tensor", "uint32": "UInt32Tensor", "uint64": "UInt64Tensor",
}  # fmt: skip
_TENSOR_TYPE_DTYPES = {v: k for k, v in _TENSOR_TYPES.items()}  # "FloatTensor" -> "float32"


class _TensorTypeMeta(type):
    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Tensor) and obj.dtype.name == cls._dtype and obj.device == "cpu"


def _tensor_type(name: str, dtype_name: str):
    def __new__(cls, *args, device=None):
        dt = dtypes.as_dtype(dtype_name)
        if len(args) == 1 and not isinstance(args[0], (int, np.integer)):
            data = args[0]
            if isinstance(data, Tensor):
                return data.detach().cast(dt)
            return Tensor(data, dt, device)
        return Tensor.zeros(*_shape_arg(args), dtype=dt, device=device)

    doc = (
        f"PyTorch's legacy ``torch.{name}``: ``mlfuse.{name}(2, 3)`` (zeros: PyTorch's are "
        f"uninitialized), ``mlfuse.{name}([1, 2])`` (those values), both {dtype_name}; "
        f"``isinstance(x, mlfuse.{name})`` holds for a CPU {dtype_name} tensor."
    )
    return _TensorTypeMeta(name, (), {"__new__": __new__, "_dtype": dtype_name, "__doc__": doc})


def typename(obj) -> str:
    """PyTorch's type name: ``mlfuse.FloatTensor`` for a float32 tensor, else the
    object's module and class: ``mlfuse.typename(x)``."""
    if isinstance(obj, Tensor):
        return "mlfuse." + _TENSOR_TYPES[obj.dtype.name]
    module = getattr(obj, "__module__", None) or type(obj).__module__
    name = getattr(obj, "__qualname__", None) or type(obj).__qualname__
    return name if module in (None, "builtins") else f"{module}.{name}"


FloatTensor = _tensor_type("FloatTensor", "float32")
DoubleTensor = _tensor_type("DoubleTensor", "float64")
HalfTensor = _tensor_type("HalfTensor", "float16")
BFloat16Tensor = _tensor_type("BFloat16Tensor", "bfloat16")
LongTensor = _tensor_type("LongTensor", "int64")
IntTensor = _tensor_type("IntTensor", "int32")
ShortTensor = _tensor_type("ShortTensor", "int16")
CharTensor = _tensor_type("CharTensor", "int8")
ByteTensor = _tensor_type("ByteTensor", "uint8")
BoolTensor = _tensor_type("BoolTensor", "bool")


def set_default_tensor_type(t) -> None:
    """PyTorch's legacy spelling of :func:`set_default_dtype`:
    ``mlfuse.set_default_tensor_type("torch.DoubleTensor")``."""
    name = t if isinstance(t, str) else getattr(t, "__name__", repr(t))
    kind = name.rsplit(".", 1)[-1]
    found = _TENSOR_TYPE_DTYPES.get(kind)
    if found not in ("float32", "float64", "float16", "bfloat16"):
        raise TypeError(
            f"set_default_tensor_type: expected a floating point tensor type "
            f"('torch.FloatTensor', 'torch.DoubleTensor'...), got {t!r}"
        )
    set_default_dtype(dtypes.as_dtype(found))


_SWITCHES = {"warn_always": False, "interop_threads": 1, "deterministic_warn_only": False}


def set_warn_always(b: bool) -> None:
    """Remember PyTorch's switch to repeat once-only warnings (mlfuse's warnings
    follow Python's ``warnings`` filters)."""
    _SWITCHES["warn_always"] = bool(b)


def is_warn_always_enabled() -> bool:
    """The last :func:`set_warn_always`."""
    return _SWITCHES["warn_always"]


def get_num_interop_threads() -> int:
    """Threads for running independent kernels at once: mlfuse launches kernels
    one after another (each on :func:`get_num_threads` threads), so 1 unless set."""
    return _SWITCHES["interop_threads"]


def set_num_interop_threads(n: int) -> None:
    """Remember the inter-op thread count (see :func:`get_num_interop_threads`)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ArgumentError(f"set_num_interop_threads: expected a positive int, got {n!r}")
    _SWITCHES["interop_threads"] = n


def set_flush_denormal(mode: bool) -> bool:
    """False: mlfuse's kernels keep subnormal floats (the switch is not supported,
    as PyTorch answers where it cannot set it)."""
    return False


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """Whether :func:`use_deterministic_algorithms` was given ``warn_only=True``."""
    return _SWITCHES["deterministic_warn_only"]


def get_deterministic_debug_mode() -> int:
    """0, 1 or 2: off, warn, error, from :func:`use_deterministic_algorithms`."""
    if not are_deterministic_algorithms_enabled():
        return 0
    return 1 if is_deterministic_algorithms_warn_only_enabled() else 2


def set_deterministic_debug_mode(debug_mode) -> None:
    """``"default"``/0, ``"warn"``/1 or ``"error"``/2, as PyTorch's."""
    modes = {"default": 0, "warn": 1, "error": 2}
    mode = modes.get(debug_mode, debug_mode)
    if mode not in (0, 1, 2) or isinstance(mode, bool):
        raise ArgumentError(
            f"set_deterministic_debug_mode: expected 'default', 'warn', 'error' or 0-2, "
            f"got {debug_mode!r}"
        )
    use_deterministic_algorithms(mode > 0, warn_only=mode == 1)


def is_anomaly_enabled() -> bool:
    """Whether autograd's anomaly detection is on (``mlfuse.autograd.detect_anomaly``)."""
    from mlfuse import autograd

    return autograd.is_anomaly_enabled()


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly detection checks gradients for NaN."""
    from mlfuse import autograd

    return autograd.is_anomaly_check_nan_enabled()


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Turn autograd's anomaly detection on or off."""
    from mlfuse import autograd

    autograd.set_detect_anomaly(enabled, check_nan)


@_creation
def empty_strided(size, stride, *, dtype=None, device=None, requires_grad: bool = False):
    """A new tensor of ``size`` (zeros; PyTorch's contents are unspecified). Its
    elements are stored as mlfuse lays them out: ``stride`` is checked, not kept."""
    size, stride = _shape_arg(tuple(size)), tuple(stride)
    if len(size) != len(stride):
        raise ArgumentError(f"empty_strided: {len(size)} sizes but {len(stride)} strides")
    return zeros(size, dtype=dtype, device=device, requires_grad=requires_grad)


@_creation
def empty_permuted(size, physical_layout, *, dtype=None, device=None,
                   requires_grad: bool = False):  # fmt: skip
    """A new tensor of ``size`` (zeros) whose dims are stored in the order
    ``physical_layout`` (outermost first), as PyTorch's: ``stride()`` reports it."""
    size = _shape_arg(tuple(size))
    order = tuple(physical_layout)
    if sorted(order) != list(builtins.range(len(size))):
        raise ArgumentError(
            f"empty_permuted: physical_layout {order} is not a permutation of {len(size)} dims"
        )
    stored = Tensor.zeros(*(size[d] for d in order), dtype=dtype, device=device)
    back = tuple(order.index(d) for d in builtins.range(len(size)))
    out = stored.contiguous().permute(back).detach()
    return out.requires_grad_() if requires_grad else out


def frombuffer(buffer, *, dtype, count: int = -1, offset: int = 0,
               requires_grad: bool = False) -> Tensor:  # fmt: skip
    """A 1-d tensor of the elements in an object exposing the buffer protocol
    (``bytes``, ``bytearray``, ``array.array``, memoryview): ``count`` elements
    (-1: all) from byte ``offset``. The values are copied."""
    dt = dtypes.as_dtype(dtype)
    if dt.name == "bfloat16":
        raise DTypeError("frombuffer: bfloat16 buffers are not supported; read uint16 and view")
    try:
        arr = np.frombuffer(buffer, dtype=dt.np, count=count, offset=offset)
    except (TypeError, ValueError) as e:
        raise ArgumentError(f"frombuffer: {e}") from None
    return _made(Tensor(arr.copy(), dt), requires_grad)


def convolution(input, weight, bias, stride, padding, dilation, transposed: bool,  # noqa: A002
                output_padding, groups: int) -> Tensor:  # fmt: skip
    """PyTorch's generic convolution: ``conv{1,2,3}d`` or ``conv_transpose{1,2,3}d``
    by the weight's dims and ``transposed``."""
    nd = weight.ndim - 2
    if nd not in (1, 2, 3):
        raise ArgumentError(f"convolution: weight must have 3 to 5 dims, got {weight.shape}")
    if transposed:
        fn = getattr(F, f"conv_transpose{nd}d")
        return fn(input, weight, bias, stride, padding, output_padding, groups, dilation)
    return getattr(F, f"conv{nd}d")(input, weight, bias, stride, padding, dilation, groups)


def frobenius_norm(input, dim=(-2, -1), keepdim: bool = False) -> Tensor:  # noqa: A002
    """``sqrt(sum(x ** 2))`` over ``dim``: ``mlfuse.frobenius_norm(m)``."""
    return _tensor(input).square().sum(dim, keepdim=keepdim).sqrt()


def nuclear_norm(input, dim=(-2, -1), keepdim: bool = False) -> Tensor:  # noqa: A002
    """The sum of singular values of the matrices over ``dim``: ``mlfuse.nuclear_norm(m)``."""
    from mlfuse import linalg

    return linalg.matrix_norm(_tensor(input), "nuc", dim, keepdim)


def get_device(input) -> int:  # noqa: A002
    """``input.get_device()``: -1 on the CPU, the GPU's index on one."""
    return _tensor(input).get_device()


def is_inference(input) -> bool:  # noqa: A002
    """False: mlfuse has no inference tensors."""
    return False


def matrix_rank(input, tol=None, symmetric: bool = False) -> Tensor:  # noqa: A002
    """PyTorch's deprecated spelling of ``mlfuse.linalg.matrix_rank``."""
    from mlfuse import linalg

    return linalg.matrix_rank(_tensor(input), atol=tol, hermitian=symmetric)


def native_layer_norm(input, normalized_shape, weight, bias, eps: float):  # noqa: A002
    """``(layer_norm(input), mean, rstd)``, the statistics over the normalized
    dims kept as size-1 dims (PyTorch's ``aten`` op)."""
    x = _tensor(input)
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if not shape or x.shape[x.ndim - len(shape) :] != shape or len(shape) > x.ndim:
        raise ArgumentError(
            f"native_layer_norm: normalized_shape {list(shape)} must be non-empty and end "
            f"the input's shape {x.shape}"
        )
    dims = tuple(builtins.range(x.ndim - len(shape), x.ndim))
    mean = x.mean(dims, keepdim=True)
    rstd = (x.var(dims, keepdim=True, correction=0) + eps).rsqrt()
    out = (x - mean) * rstd
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out, mean, rstd


def native_batch_norm(input, weight, bias, running_mean, running_var, training: bool,  # noqa: A002
                      momentum: float, eps: float):  # fmt: skip
    """``(output, save_mean, save_invstd)`` of batch norm over every dim but 1
    (PyTorch's ``aten`` op); training updates the running statistics in place and
    saves the batch's, evaluation saves empty tensors."""
    x = _tensor(input)
    out = F.batch_norm(x, running_mean, running_var, weight, bias, training, momentum, eps)
    if not training:
        empty = zeros(0, dtype=x.dtype, device=x.device)
        return out, empty, empty
    dims = (0,) + tuple(builtins.range(2, x.ndim))
    mean = x.mean(dims)
    invstd = (x.var(dims, correction=0) + eps).rsqrt()
    return out, mean, invstd


def native_group_norm(input, weight, bias, N: int, C: int, HxW: int, group: int,  # noqa: A002, N803
                      eps: float):  # fmt: skip
    """``(output, mean, rstd)`` of group norm, the statistics per sample and group
    as ``(N, group)`` (PyTorch's ``aten`` op)."""
    x = _tensor(input)
    if x.shape[0] != N or x.shape[1] != C or x.numel() != N * C * HxW:
        raise ArgumentError(
            f"native_group_norm: input of shape {x.shape} is not (N={N}, C={C}, HxW={HxW})"
        )
    out = F.group_norm(x, group, weight, bias, eps)
    g = x.reshape(N, group, -1)
    mean = g.mean(-1)
    rstd = (g.var(-1, correction=0) + eps).rsqrt()
    return out, mean, rstd


def histogramdd(input, bins=10, *, range=None, weight=None, density: bool = False):  # noqa: A002
    """``(hist, bin_edges)`` of the rows of ``input`` (``(..., D)``: points in D
    dims), numpy's ``histogramdd`` on the host; ``bins`` an int, one per dim, or
    the edges per dim: ``h, edges = mlfuse.histogramdd(pts, bins=[4, 5])``."""
    x = _tensor(input)
    if not x.dtype.is_float:
        raise DTypeError(f"histogramdd needs a float tensor, got {x.dtype.name}")
    if x.ndim < 1:
        raise ArgumentError("histogramdd: input must have at least 1 dim (the coordinates)")
    pts = x.numpy().reshape(-1, x.shape[-1]).astype(np.float64)
    b = [t.numpy() if isinstance(t, Tensor) else t for t in bins] if isinstance(
        bins, (list, tuple)) else bins  # fmt: skip
    rng = None if range is None else list(zip(range[0::2], range[1::2]))
    w = weight.numpy().reshape(-1) if isinstance(weight, Tensor) else weight
    h, edges = np.histogramdd(pts, b, range=rng, weights=w, density=density)
    return HistogramddResult(
        Tensor(h, x.dtype, x.device), [Tensor(e, x.dtype, x.device) for e in edges]
    )


class HistogramddResult(NamedTuple):
    """``(hist, bin_edges)`` of :func:`histogramdd` (edges: one tensor per dim)."""

    hist: Tensor
    bin_edges: list


def as_strided_scatter(input, src, size, stride, storage_offset: int = 0) -> Tensor:  # noqa: A002
    """``input`` with ``src`` written into the view ``input.as_strided(size, stride,
    storage_offset)`` (a new tensor; strides count elements of the row-major
    order): ``mlfuse.as_strided_scatter(x, y, (2, 2), (1, 2))``."""
    x = _tensor(input)
    view = x.as_strided(size, stride, storage_offset)  # the same checks
    if not isinstance(src, Tensor) or src.shape != view.shape:
        raise ArgumentError(
            f"as_strided_scatter: src must have the view's shape {view.shape}, got "
            f"{getattr(src, 'shape', type(src).__name__)}"
        )
    idx = np.full(tuple(view.shape), storage_offset, np.int64)
    for d, (n, st) in enumerate(zip(view.shape, stride)):
        shape = [1] * len(view.shape)
        shape[d] = n
        idx = idx + (np.arange(n, dtype=np.int64) * st).reshape(shape)
    flat = x.reshape(-1).scatter(0, Tensor(idx.reshape(-1), device=x.device),
                                 src.reshape(-1).cast(x.dtype))  # fmt: skip
    return flat.reshape(x.shape)


def resize_as_(input, the_template, *, memory_format=None) -> Tensor:  # noqa: A002
    """``input.resize_as_(the_template)``: ``input`` takes the template's shape in place."""
    return input.resize_as_(the_template, memory_format=memory_format)


def view_as_real_copy(input, *, out=None) -> Tensor:  # noqa: A002
    """:func:`mlfuse.view_as_real` (already a new tensor here)."""
    from mlfuse.complex_tensors import view_as_real

    return _write_out(view_as_real(input), out)


def view_as_complex_copy(input, *, out=None) -> Tensor:  # noqa: A002
    """:func:`mlfuse.view_as_complex` (already a new tensor here)."""
    from mlfuse.complex_tensors import view_as_complex

    return _write_out(view_as_complex(input), out)


def is_distributed(input) -> bool:  # noqa: A002
    """False: tensors live in this process."""
    return False


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank: int = 0,
             reduction: int | str = "mean", zero_infinity: bool = False) -> Tensor:  # fmt: skip
    """:func:`mlfuse.nn.functional.ctc_loss` (the ``aten`` spelling also takes
    ``reduction`` as 0/1/2 for none/mean/sum)."""
    if isinstance(reduction, int):
        reduction = ("none", "mean", "sum")[reduction]
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, reduction,
                      zero_infinity)  # fmt: skip


def native_dropout(input, p: float, train: bool | None):  # noqa: A002
    """``(output, mask)``: dropout and the bool mask of the kept elements
    (PyTorch's ``aten`` op; outside training the mask is all True)."""
    from mlfuse.tensor import _random

    x = _tensor(input)
    if not train or p == 0:
        return x, Tensor.ones(*x.shape, dtype=dtypes.bool_, device=x.device)
    if not 0 <= p <= 1:
        raise ArgumentError(f"native_dropout: p must be in [0, 1], got {p}")
    keep = _random(lambda g: g.random(x.shape) >= p, device=x.device)
    scale = 0.0 if p == 1 else 1.0 / (1.0 - p)
    return x * keep.cast(x.dtype) * scale, keep.cast(dtypes.bool_)


def _dropout_(name: str, fn):
    def inplace(input, p: float = 0.5, train: bool = True) -> Tensor:  # noqa: A002
        if not isinstance(input, Tensor):
            raise TypeError(f"mlfuse.{name} writes into a Tensor, got {type(input).__name__}")
        return input.assign(fn(input, p, train)) if train else input

    inplace.__name__ = inplace.__qualname__ = name
    inplace.__doc__ = f"``{name.rstrip('_')}`` written into ``input`` (when ``train``)."
    return inplace


def feature_dropout(input, p: float = 0.5, train: bool = True) -> Tensor:  # noqa: A002
    """Dropout of whole channels (dim 1): ``mlfuse.feature_dropout(x, 0.2, True)``."""
    x = _tensor(input)
    if x.ndim < 2:
        raise ArgumentError(f"feature_dropout needs (N, C, ...) input, got shape {x.shape}")
    if not 0 <= p <= 1:
        raise ArgumentError(f"feature_dropout: p must be in [0, 1], got {p}")
    if not train or p == 0:
        return x
    if p == 1:
        return x * 0
    from mlfuse.tensor import _random

    shape = x.shape[:2] + (1,) * (x.ndim - 2)
    keep = _random(lambda g: g.random(shape) >= p, device=x.device)
    return x * keep.cast(x.dtype) * (1.0 / (1.0 - p))


dropout_ = _dropout_("dropout_", lambda x, p, t: F.dropout(x, p, t))
alpha_dropout_ = _dropout_("alpha_dropout_", lambda x, p, t: F.alpha_dropout(x, p, t))
feature_dropout_ = _dropout_("feature_dropout_", feature_dropout)
feature_alpha_dropout_ = _dropout_(
    "feature_alpha_dropout_", lambda x, p, t: F.feature_alpha_dropout(x, p, t)
)


# -- nn.functional's functions that PyTorch also has at the top level ---------------
_FUNCTIONAL = (
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "max_pool1d",
    "max_pool2d", "max_pool3d", "avg_pool1d", "adaptive_avg_pool1d", "adaptive_max_pool1d",
    "batch_norm", "layer_norm", "group_norm", "instance_norm", "rms_norm", "embedding",
    "dropout", "alpha_dropout", "pixel_shuffle", "pixel_unshuffle", "cosine_similarity",
    "pairwise_distance", "prelu", "hardshrink", "threshold", "kl_div",
    "binary_cross_entropy_with_logits", "margin_ranking_loss", "hinge_embedding_loss",
    "poisson_nll_loss", "cosine_embedding_loss", "triplet_margin_loss", "rrelu", "bilinear",
    "conv_transpose3d", "pdist", "channel_shuffle", "native_channel_shuffle",
    "feature_alpha_dropout", "threshold_", "rrelu_",
)  # fmt: skip
for _name in _FUNCTIONAL:
    globals()[_name] = getattr(F, _name)


__all__ = [
    *_METHODS, *_INPLACE, *_FUNCTIONAL, "tensor", "as_tensor", "asarray", "from_numpy",
    "scalar_tensor",
    "zeros", "ones", "empty", "full", "arange", "range", "eye", "linspace", "logspace",
    "rand", "randn", "randint", "randperm", "normal", "zeros_like", "ones_like",
    "empty_like", "full_like", "rand_like", "randn_like", "randint_like", "tril_indices",
    "triu_indices", "max", "min", "rsub", "polygamma", "numel", "is_tensor", "is_floating_point",
    "is_nonzero", "concat", "concatenate", "atleast_1d", "atleast_2d", "atleast_3d",
    "column_stack", "row_stack", "broadcast_shapes", "broadcast_tensors", "block_diag",
    "cartesian_prod", "combinations", "chain_matmul", "tensordot", "unravel_index",
    "vander", "isin", "trapezoid", "trapz", "cumulative_trapezoid", "hann_window",
    "hamming_window", "blackman_window", "bartlett_window", "kaiser_window", "save", "load",
    "finfo", "iinfo", "device", "get_default_dtype", "set_default_dtype", "set_printoptions",
    "get_num_threads", "set_num_threads", "inference_mode", "compile", "from_dlpack", "seed",
    "initial_seed", "use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
    "can_cast", "histogram", *(n + "_copy" for n in _VIEW_COPIES), "alias_copy",
    "slice_copy", "fill", "constant_pad_nd", "max_pool1d_with_indices", "poisson", "binomial",
    "get_rng_state", "set_rng_state", "set_float32_matmul_precision",
    "get_float32_matmul_precision", "gradient", "vmap", "lu_unpack",
    "Size", "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor",
    "IntTensor", "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor",
    "is_inference_mode_enabled", "is_storage", "typename", "set_default_tensor_type",
    "set_warn_always", "is_warn_always_enabled", "get_num_interop_threads",
    "set_num_interop_threads", "set_flush_denormal",
    "is_deterministic_algorithms_warn_only_enabled", "get_deterministic_debug_mode",
    "set_deterministic_debug_mode", "is_anomaly_enabled", "is_anomaly_check_nan_enabled",
    "set_anomaly_enabled", "empty_strided", "empty_permuted", "frombuffer", "convolution",
    "frobenius_norm", "nuclear_norm", "feature_dropout", "dropout_", "alpha_dropout_",
    "feature_dropout_", "feature_alpha_dropout_", "get_device", "is_inference",
    "matrix_rank", "native_layer_norm", "native_dropout", "native_batch_norm",
    "native_group_norm", "histogramdd", "as_strided_scatter", "resize_as_", "view_as_real_copy",
    "view_as_complex_copy", "is_distributed", "ctc_loss",
]  # fmt: skip
