"""Neural-network functions with ``torch.nn.functional``'s names and arguments.

Each one decomposes into the lazy primitives, so it fuses with what is around
it: a convolution is a sum over its kernel window of shifted, strided views of
the padded input times weight slices (merge-sums makes the taps one
reduction), so ``conv2d(x, w, b).relu()`` is one kernel; pooling is an
elementwise max or sum of the window's views.

    import mlfuse.nn.functional as F
    y = F.conv2d(x, w, b, padding=1).relu()
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from mlfuse import amp, dtypes
from mlfuse.autograd import no_grad
from mlfuse.errors import ArgumentError, DTypeError, UnsupportedModeError
from mlfuse.tensor import Tensor, _derivative, _random, _zero_gradient

# ---------------------------------------------------------------------------
# activations (the Tensor methods, as functions)
# ---------------------------------------------------------------------------


def _maybe_inplace(x: Tensor, result: Tensor, inplace: bool, name: str) -> Tensor:
    """``result``, or (``inplace``) ``x`` with ``result`` written into it."""
    return x._inplace(result, name + "_") if inplace else result


def relu(x: Tensor, inplace: bool = False) -> Tensor:
    """``max(x, 0)``: ``F.relu(x)``; ``inplace=True`` writes it into ``x``."""
    return _maybe_inplace(x, x.relu(), inplace, "relu")


def gelu(x: Tensor, approximate: str = "none") -> Tensor:
    """Gaussian error linear unit: ``F.gelu(x)``, ``F.gelu(x, approximate="tanh")``."""
    return x.gelu(approximate)


def silu(x: Tensor, inplace: bool = False) -> Tensor:
    """``x * sigmoid(x)``: ``F.silu(x)``."""
    return _maybe_inplace(x, x.silu(), inplace, "silu")


def sigmoid(x: Tensor) -> Tensor:
    """``1 / (1 + exp(-x))``: ``F.sigmoid(x)``."""
    return x.sigmoid()


def tanh(x: Tensor) -> Tensor:
    """Hyperbolic tangent: ``F.tanh(x)``."""
    return x.tanh()


def leaky_relu(x: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``x`` or ``negative_slope * x``: ``F.leaky_relu(x, 0.2)``."""
    return _maybe_inplace(x, x.leaky_relu(negative_slope), inplace, "leaky_relu")


def elu(x: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` or ``alpha * (exp(x) - 1)``: ``F.elu(x)``."""
    return _maybe_inplace(x, x.elu(alpha), inplace, "elu")


def softplus(x: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta x)) / beta``: ``F.softplus(x)``."""
    return x.softplus(beta, threshold)


def _softmax_dim(x: Tensor, dim, name: str) -> int:
    """``dim``, or for None PyTorch's deprecated implicit choice (0 for 0-, 1- and
    3-d inputs, else 1)."""
    if dim is not None:
        return dim
    warnings.warn(
        f"{name}: implicit dimension choice is deprecated, pass dim", UserWarning, stacklevel=3
    )
    return 0 if x.ndim in (0, 1, 3) else 1


def _cast_to(x: Tensor, dtype) -> Tensor:
    """``x`` cast to ``dtype`` first (PyTorch's ``dtype=`` of the softmaxes), if given."""
    return x if dtype is None else x.cast(dtypes.as_dtype(dtype))


def softmax(x: Tensor, dim: int | None = -1, _stacklevel: int = 3, dtype=None) -> Tensor:
    """Softmax along ``dim``, ``x`` first cast to ``dtype`` when given (PyTorch's
    arguments): ``F.softmax(x, dim=-1)``, ``F.softmax(x, 1, dtype=mlfuse.float64)``."""
    return _cast_to(x, dtype).softmax(_softmax_dim(x, dim, "softmax"))


def log_softmax(x: Tensor, dim: int | None = -1, _stacklevel: int = 3, dtype=None) -> Tensor:
    """Log-softmax along ``dim``, ``x`` first cast to ``dtype`` when given:
    ``F.log_softmax(x, dim=1)``."""
    return _cast_to(x, dtype).log_softmax(_softmax_dim(x, dim, "log_softmax"))


def pad(x: Tensor, pad, mode: str = "constant", value: float = 0.0) -> Tensor:
    """PyTorch's flat padding (last dim first): ``F.pad(x, (1, 1, 2, 2))``."""
    return x.pad(tuple(pad), value, mode)


def one_hot(x: Tensor, num_classes: int = -1) -> Tensor:
    """int64 one-hot rows: ``F.one_hot(labels, 10)``."""
    return x.one_hot(num_classes)


# ---------------------------------------------------------------------------
# linear layers and convolutions
# ---------------------------------------------------------------------------


@amp.lower_precision
def linear(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``x @ weight.T + bias`` with PyTorch's ``(out, in)`` weight: ``F.linear(x, w, b)``."""
    if weight.ndim != 2:
        raise ArgumentError(f"linear: weight must be 2-d (out, in), got {weight.shape}")
    if x.shape[-1:] != weight.shape[1:]:
        raise ArgumentError(
            f"linear: input {x.shape} has {x.shape[-1] if x.ndim else 0} features, "
            f"weight {weight.shape} expects {weight.shape[1]}"
        )
    out = x @ weight.T
    return out + bias if bias is not None else out


_SPATIAL = {1: "L", 2: "H, W", 3: "D, H, W"}  # the spatial dims' names in messages


def _tuple(v, n: int, what: str, expand_one: bool = False) -> tuple[int, ...]:
    """``v`` (an int, or ``n`` ints) as ``n`` ints; ``expand_one``: one int in a
    sequence (``[2]``) is repeated for every dim too, as PyTorch's convolutions
    and pools take it."""
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return (int(v),) * n
    if (
        isinstance(v, (tuple, list))
        and (len(v) == n or (expand_one and len(v) == 1))
        and all(isinstance(i, (int, np.integer)) for i in v)
    ):
        return tuple(int(i) for i in v) * (n if len(v) != n else 1)
    raise ArgumentError(f"{what} must be an int or {n} ints, got {v!r}")


def _windows(xp: Tensor, kernel, stride, dilation, out_size):
    """For each kernel tap, the strided view of ``xp`` (N, C, *spatial) it reads:
    ``xp[..., i*d : i*d + (o-1)*s + 1 : s]`` in every spatial dim."""
    for tap in np.ndindex(*kernel):
        bounds = [None, None]
        for i, d, s, o in zip(tap, dilation, stride, out_size):
            lo = i * d
            bounds.append((lo, lo + (o - 1) * s + 1) if o else (lo, lo))
        win = xp.shrink(tuple(bounds))
        if any(s > 1 for s in stride) and all(out_size):
            win = win._stride_view(1, 1, *stride)
        yield tap, win


def _window_view(xp: Tensor, kernel, stride, dilation, out_size) -> Tensor:
    """The windows of ``xp`` (N, C, *spatial) as one view (N, C, *kernel, *out):
    ``win[n, c, a.., b..] = xp[n, c, a*dilation + b*stride ..]``, built from
    movement ops only (no copy). Per spatial dim of size s: the dim repeated
    (an expand) and cut into k rows of length L = m*s + d (m >= 1, L >= o*stride),
    so row a starts at a*d (mod s); row a's elements 0, stride, 2*stride ... are
    the window's taps."""
    nd = len(kernel)
    for i, (k, st, d, o) in enumerate(zip(kernel, stride, dilation, out_size)):
        at = 2 + 2 * i  # this dim's position; the ones before it are (k, o) pairs
        shape = xp.shape
        s = shape[at]
        before, after = shape[:at], shape[at + 1 :]
        full = tuple((0, v) for v in before)
        rest = tuple((0, v) for v in after)
        if k == 1:  # one tap: every stride-th element
            t = xp.shrink(full + ((0, (o - 1) * st + 1),) + rest)
            if st > 1:
                t = t._stride_view(*((1,) * len(before) + (st,) + (1,) * len(after)))
            xp = t.reshape(before + (1, o) + after)
            continue
        m = max(1, -(-(o * st - d) // s))
        row = m * s + d
        reps = -(-k * row // s)
        t = xp.reshape(before + (1, s) + after).expand(before + (reps, s) + after)
        t = t.reshape(before + (reps * s,) + after)
        t = t.shrink(full + ((0, k * row),) + rest).reshape(before + (k, row) + after)
        t = t.shrink(full + ((0, k), (0, o * st)) + rest)
        t = t.reshape(before + (k, o, st) + after)
        t = t.shrink(full + ((0, k), (0, o), (0, 1)) + rest)
        xp = t.reshape(before + (k, o) + after)
    # (N, C, k1, o1, k2, o2 ..) -> (N, C, k1, k2 .., o1, o2 ..)
    order = (0, 1) + tuple(2 + 2 * i for i in range(nd)) + tuple(3 + 2 * i for i in range(nd))
    return xp.permute(order)


def _conv_channels(x: Tensor, weight: Tensor, groups, nd: int, name: str) -> None:
    """PyTorch's checks of a convolution's ranks, groups and channels, the input
    (N, C, *spatial) or unbatched (C, *spatial)."""
    layouts = f"(N, C, {_SPATIAL[nd]}) or (C, {_SPATIAL[nd]})"
    if x.ndim not in (nd + 1, nd + 2):
        raise ArgumentError(f"{name}: input must be {layouts}, got {x.shape}")
    if weight.ndim != nd + 2:
        raise ArgumentError(f"{name}: weight must have {nd + 2} dims, got {weight.shape}")
    c = x.shape[x.ndim - nd - 1]
    o, cg = weight.shape[:2]
    if not isinstance(groups, (int, np.integer)) or groups <= 0 or c % groups or o % groups:
        raise ArgumentError(
            f"{name}: groups={groups!r} must divide the input channels ({c}) and the output "
            f"channels ({o})"
        )
    if cg != c // groups:
        which = "input" if x.ndim == nd + 2 else f"unbatched input (the input must be {layouts})"
        raise ArgumentError(
            f"{name}: weight {weight.shape} expects {cg * groups} input channels in {groups} "
            f"groups, the {which} {x.shape} has {c}"
        )


def _conv_nd(x, weight, bias, stride, padding, dilation, groups, nd: int, name: str) -> Tensor:
    _conv_channels(x, weight, groups, nd, name)
    if x.ndim == nd + 1:  # unbatched (C, *spatial), as PyTorch: a batch of one
        out = _conv_nd(x.unsqueeze(0), weight, bias, stride, padding, dilation, groups, nd, name)
        return out.squeeze(0)
    n, c = x.shape[:2]
    o, cg = weight.shape[:2]
    kernel = weight.shape[2:]
    stride = _tuple(stride, nd, f"{name}: stride", True)
    dilation = _tuple(dilation, nd, f"{name}: dilation", True)
    if any(s <= 0 for s in stride) or any(d <= 0 for d in dilation):
        raise ArgumentError(f"{name}: stride {stride} and dilation {dilation} must be positive")
    spatial = x.shape[2:]
    if padding == "valid":
        pads = tuple((0, 0) for _ in range(nd))
    elif padding == "same":
        if any(s != 1 for s in stride):
            raise ArgumentError(f"{name}: padding='same' needs stride 1, got {stride}")
        total = [d * (k - 1) for d, k in zip(dilation, kernel)]
        pads = tuple((t // 2, t - t // 2) for t in total)
    elif (
        isinstance(padding, (tuple, list))
        and len(padding) == nd
        and all(isinstance(p, (tuple, list)) and len(p) == 2 for p in padding)
    ):  # (before, after) per spatial dim; negative amounts crop
        pads = tuple((int(a), int(b)) for a, b in padding)
    else:
        pads = tuple((p, p) for p in _tuple(padding, nd, f"{name}: padding", True))
        if any(a < 0 for a, _ in pads):  # PyTorch's: ints must not be negative
            raise ArgumentError(f"{name}: negative padding {padding!r} is not supported")
    if any(a < 0 or b < 0 for a, b in pads):
        crop = tuple((max(-a, 0), s - max(-b, 0)) for (a, b), s in zip(pads, spatial))
        if any(lo >= hi for lo, hi in crop):
            raise ArgumentError(f"{name}: padding {pads} crops the whole input {x.shape}")
        x = x.shrink(((0, x.shape[0]), (0, x.shape[1])) + crop)
        spatial = x.shape[2:]
        pads = tuple((max(a, 0), max(b, 0)) for a, b in pads)
    out_size = tuple(
        (s + a + b - d * (k - 1) - 1) // st + 1
        for s, (a, b), d, k, st in zip(spatial, pads, dilation, kernel, stride)
    )
    if any(v <= 0 for v in out_size):
        raise ArgumentError(
            f"{name}: the kernel {kernel} (dilation {dilation}) does not fit the padded input "
            f"{tuple(s + a + b for s, (a, b) in zip(spatial, pads))}"
        )
    dt = dtypes.promote(x.dtype, weight.dtype)
    if bias is not None and bias.dtype.is_float and not dt.is_float:
        dt = dtypes.promote(dt, bias.dtype)  # not the bias cast to integers (PyTorch: an error)
    x, weight = x.cast(dt), weight.cast(dt)
    xp = x.pad(((0, 0), (0, 0), *pads))
    from mlfuse.targets import get_target

    target = get_target(x.device)
    g, og = groups, o // groups
    w = weight.reshape((g, og, cg) + kernel)
    padded = any(p for pair in pads for p in pair)
    if padded and not target.copy_padded_input(xp.numel() * dt.itemsize):
        # small inputs: one reduction per kernel tap over the padded view, each
        # window a box of it (its bounds checks are per row and vector), summed:
        # merge-sums makes them one reduction with every tap in its body
        acc = None
        for tap, win in _windows(xp, kernel, stride, dilation, out_size):
            win = win.reshape((n, g, 1, cg) + out_size)
            wt = w[(slice(None),) * 3 + tap].reshape((1, g, og, cg) + (1,) * nd)
            term = (win * wt).sum(3)
            acc = term if acc is None else acc + term
        assert acc is not None
    else:
        if padded:  # copied once, so the windows are read with plain loads
            xp = xp.contiguous()
        # one reduction over (channels, kernel window): the windows as one view of
        # the input, times the weights, channels outermost so each step of the
        # reduction reads neighbouring elements
        win = _window_view(xp, kernel, stride, dilation, out_size)
        win = win.reshape((n, g, 1, cg) + kernel + out_size)
        if target.pack_conv_weights(out_size[-1], og, dt.itemsize):
            # output channels innermost in memory, so the product can read them as vectors
            order = (0,) + tuple(range(2, 3 + nd)) + (1,)
            w = w.permute(order).contiguous().permute(tuple(int(i) for i in np.argsort(order)))
        wt = w.reshape((1, g, og, cg) + kernel + (1,) * nd)
        acc = (win * wt).sum(tuple(range(3, 4 + nd)))
    out = acc.reshape((n, o) + out_size)
    if bias is not None:
        if bias.shape != (o,):
            raise ArgumentError(f"{name}: bias must be ({o},), got {bias.shape}")
        if bias.dtype.is_complex and not dt.is_complex:  # (the cast would drop its imaginary part)
            raise DTypeError(
                f"{name}: a {bias.dtype.name} bias for a {dt.name} convolution (PyTorch: the "
                "types must be the same)"
            )
        out = out + bias.cast(dt).reshape((1, o) + (1,) * nd)
    return out


@amp.lower_precision
def conv2d(
    x: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride=1,
    padding=0,
    dilation=1,
    groups: int = 1,
) -> Tensor:
    """2-d convolution (cross-correlation, as PyTorch): input (N, C, H, W) or
    unbatched (C, H, W), weight (O, C/groups, KH, KW); padding an int, a pair,
    ``"same"`` or ``"valid"``: ``F.conv2d(x, w, b, stride=2, padding=1)``."""
    return _conv_nd(x, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def _conv_transpose_nd(
    x, weight, bias, stride, padding, output_padding, groups, dilation, nd: int, name: str
) -> Tensor:
    if x.ndim not in (nd + 1, nd + 2) or weight.ndim != nd + 2:
        raise ArgumentError(
            f"{name}: input must have {nd + 2} dims ({nd + 1} unbatched) and weight (in, "
            f"out / groups, *kernel) {nd + 2}, got {x.shape} and {weight.shape}"
        )
    c = x.shape[x.ndim - nd - 1]
    if not isinstance(groups, (int, np.integer)) or groups <= 0 or c % groups:
        raise ArgumentError(f"{name}: groups={groups!r} must divide the input channels ({c})")
    if weight.shape[0] != c:
        raise ArgumentError(
            f"{name}: weight {weight.shape} expects {weight.shape[0]} input channels, "
            f"the input {x.shape} has {c}"
        )
    if x.ndim == nd + 1:  # unbatched (C, *spatial), as PyTorch: a batch of one
        return _conv_transpose_nd(
            x.unsqueeze(0), weight, bias, stride, padding, output_padding, groups, dilation, nd,
            name,
        ).squeeze(0)  # fmt: skip
    n = x.shape[0]
    kernel = weight.shape[2:]
    stride = _tuple(stride, nd, f"{name}: stride", True)
    dilation = _tuple(dilation, nd, f"{name}: dilation", True)
    pad = _tuple(padding, nd, f"{name}: padding", True)
    extra = _tuple(output_padding, nd, f"{name}: output_padding", True)
    if any(v <= 0 for v in stride + dilation) or any(v < 0 for v in pad + extra):
        raise ArgumentError(f"{name}: stride and dilation must be positive, padding and "
                         f"output_padding not negative")  # fmt: skip
    if any(e >= max(s, d) for e, s, d in zip(extra, stride, dilation)):
        raise ArgumentError(
            f"{name}: output_padding {extra} must be smaller than stride {stride} or dilation "
            f"{dilation}"
        )
    # the gradient of a convolution: the input spread out by the stride (zeros
    # between its elements), padded by the window's reach less ``padding``, then
    # convolved with the kernel flipped and its channel dims swapped
    if any(st > 1 for st in stride):
        spread = x.reshape((n, c) + tuple(v for s in x.shape[2:] for v in (s, 1)))
        gaps = tuple(p for st in stride for p in ((0, 0), (0, st - 1)))
        spread = spread.pad(((0, 0), (0, 0)) + gaps)
        spread = spread.reshape((n, c) + tuple(s * st for s, st in zip(x.shape[2:], stride)))
        bounds = tuple((0, (s - 1) * st + 1) for s, st in zip(x.shape[2:], stride))
        x = spread.shrink(((0, n), (0, c)) + bounds)
    cg = c // groups
    og = weight.shape[1]
    w = weight.reshape((groups, cg, og) + kernel).transpose(1, 2)
    w = w.flip(dims=tuple(range(3, 3 + nd))).reshape((groups * og, cg) + kernel)
    pads = tuple(
        ((k - 1) * d - p, (k - 1) * d - p + e) for k, d, p, e in zip(kernel, dilation, pad, extra)
    )
    return _conv_nd(x, w, bias, 1, pads, dilation, groups, nd, name)


@amp.lower_precision
def conv_transpose2d(
    x: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride=1,
    padding=0,
    output_padding=0,
    groups: int = 1,
    dilation=1,
) -> Tensor:
    """Transposed 2-d convolution (the gradient of ``conv2d`` with respect to its
    input), input (N, C, H, W) or unbatched (C, H, W), weight
    (in, out / groups, kh, kw), as PyTorch:
    ``F.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1)``."""
    return _conv_transpose_nd(
        x, weight, bias, stride, padding, output_padding, groups, dilation, 2, "conv_transpose2d"
    )


@amp.lower_precision
def conv_transpose1d(
    x: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride=1,
    padding=0,
    output_padding=0,
    groups: int = 1,
    dilation=1,
) -> Tensor:
    """Transposed 1-d convolution of (N, C, L) or unbatched (C, L), weight
    (in, out / groups, k): ``F.conv_transpose1d(x, w, stride=2)``."""
    return _conv_transpose_nd(
        x, weight, bias, stride, padding, output_padding, groups, dilation, 1, "conv_transpose1d"
    )


@amp.lower_precision
def conv1d(
    x: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride=1,
    padding=0,
    dilation=1,
    groups: int = 1,
) -> Tensor:
    """1-d convolution: input (N, C, L) or unbatched (C, L), weight
    (O, C/groups, K): ``F.conv1d(x, w, padding=1)``."""
    return _conv_nd(x, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


@amp.lower_precision
def conv3d(
    x: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride=1,
    padding=0,
    dilation=1,
    groups: int = 1,
) -> Tensor:
    """3-d convolution: input (N, C, D, H, W) or unbatched (C, D, H, W), weight
    (O, C/groups, KD, KH, KW): ``F.conv3d(x, w, padding=1)``."""
    return _conv_nd(x, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


def _pool_stride(stride, kernel: tuple[int, ...], nd: int, name: str) -> tuple[int, ...]:
    """A pool's stride: the kernel when None or empty (``[]``, as PyTorch), else
    an int or ``nd`` ints (one in a sequence repeated)."""
    if stride is None or (isinstance(stride, (tuple, list)) and not len(stride)):
        return kernel
    return _tuple(stride, nd, f"{name}: stride", True)


def _pool_geometry(x: Tensor, kernel_size, stride, padding, dilation, ceil_mode, name, nd=2):
    if x.ndim not in (nd + 1, nd + 2):
        raise ArgumentError(
            f"{name}: input must be (N, C, {_SPATIAL[nd]}) or (C, {_SPATIAL[nd]}), got {x.shape}"
        )
    if 0 in x.shape[x.ndim - nd - 1 :]:  # PyTorch's: only the batch may be empty
        raise ArgumentError(f"{name}: the input's non-batch dims must not be empty, got {x.shape}")
    kernel = _tuple(kernel_size, nd, f"{name}: kernel_size", True)
    stride = _pool_stride(stride, kernel, nd, name)
    pad = _tuple(padding, nd, f"{name}: padding", True)
    dilation = _tuple(dilation, nd, f"{name}: dilation", True)
    if any(v <= 0 for v in kernel + stride + dilation) or any(p < 0 for p in pad):
        raise ArgumentError(
            f"{name}: kernel {kernel}, stride {stride} and dilation {dilation} must be positive "
            f"and padding {pad} not negative"
        )
    if any(2 * p > k for p, k in zip(pad, kernel)):
        raise ArgumentError(f"{name}: padding {pad} must be at most half the kernel {kernel}")
    spatial = x.shape[-nd:]
    out = []
    for s, k, st, p, d in zip(spatial, kernel, stride, pad, dilation):
        span = s + 2 * p - d * (k - 1) - 1
        o = (-(-span // st) if ceil_mode else span // st) + 1
        if ceil_mode and (o - 1) * st >= s + p:  # the last window must start inside
            o -= 1
        if o <= 0:
            raise ArgumentError(f"{name}: kernel {kernel} does not fit the input {x.shape}")
        out.append(o)
    # right padding that ceil_mode's last window may read
    extra = [
        max((o - 1) * st + d * (k - 1) + 1 - (s + 2 * p), 0)
        for o, st, d, k, s, p in zip(out, stride, dilation, kernel, spatial, pad)
    ]
    return kernel, stride, pad, dilation, tuple(out), extra


def _max_pool(x, kernel_size, stride, padding, dilation, ceil_mode, nd, name, return_indices=False):
    batched = x.ndim == nd + 2
    kernel, stride, pad, dilation, out, extra = _pool_geometry(
        x, kernel_size, stride, padding, dilation, ceil_mode, name, nd
    )
    xb = x if batched else x.unsqueeze(0)
    low = -math.inf if x.dtype.is_float else int(np.iinfo(x.dtype.np).min)
    xp = xb.pad(((0, 0), (0, 0)) + tuple((p, p + e) for p, e in zip(pad, extra)), low)
    if return_indices:
        acc, idx = _max_pool_indices(xp, xb.shape[2:], kernel, stride, pad, dilation, out)
        if xb.dtype.is_float and all(out):
            pads = tuple((p, p + e) for p, e in zip(pad, extra))
            rule = _max_pool_index_rule(idx, kernel, stride, pad, dilation, out, pads)
            acc = _derivative("max_pool", acc, (xb,), rule)
        return (acc, idx) if batched else (acc.squeeze(0), idx.squeeze(0))
    acc = None
    for _, win in _windows(xp, kernel, stride, dilation, out):
        acc = win if acc is None else acc.maximum(win)
    assert acc is not None
    if xb.dtype.is_float and all(out):
        pads = tuple((p, p + e) for p, e in zip(pad, extra))
        rule = _max_pool_rule(kernel, stride, dilation, out, pads)
        acc = _derivative("max_pool", acc, (xb,), rule)
    return acc if batched else acc.squeeze(0)


def _max_pool_rule(kernel, stride, dilation, out, pads):
    """The gradient of a max pool, as PyTorch's: each window's gradient goes to
    the tap holding its maximum, the first one in scan order (for a NaN, the
    last NaN). Which tap that is gets computed once at the output positions (a
    running minimum over the taps, stored), then each tap's share of the
    gradient is placed where the tap reads (spread by the stride, offset by the
    tap): one pass over the input, rather than a chain of maximum gradients
    that every tap's placement would copy (compile time quadratic in the taps)."""

    def rule(c, g):
        xb = c.x
        xp = xb.pad(((0, 0), (0, 0)) + pads, -math.inf)
        y = c.out.detach()
        taps = list(_windows(xp, kernel, stride, dilation, out))
        none = len(taps)
        first = last_nan = None
        for i, (_, win) in enumerate(taps):
            hit = (win == y).where(i, none)
            nan = win.isnan().where(i, -1)
            first = hit if first is None else first.minimum(hit)
            last_nan = nan if last_nan is None else last_nan.maximum(nan)
        which = y.isnan().where(last_nan, first).contiguous()
        total = None
        for i, (tap, _) in enumerate(taps):
            share = (which == i).where(g, 0.0)
            placed = _tap_backward(share, xp.shape, tap, stride, dilation, out)
            total = placed if total is None else total + placed
        keep = ((0, xb.shape[0]), (0, xb.shape[1])) + tuple(
            (lo, lo + n) for (lo, _), n in zip(pads, xb.shape[2:])
        )
        return (total.shrink(keep),)

    return rule


def _tap_backward(piece: Tensor, padded_shape, tap, stride, dilation, out) -> Tensor:
    """``piece`` (N, C, *out) placed where tap ``tap``'s strided view of a tensor
    of ``padded_shape`` reads it, zeros elsewhere."""
    t = piece
    lead = t.shape[:2]
    keep = ((0, lead[0]), (0, lead[1]))
    if any(s > 1 for s in stride):
        t = t.reshape(lead + tuple(v for o in out for v in (o, 1)))
        t = t.pad(((0, 0), (0, 0)) + tuple(p for s in stride for p in ((0, 0), (0, s - 1))))
        t = t.reshape(lead + tuple(o * s for o, s in zip(out, stride)))
        t = t.shrink(keep + tuple((0, (o - 1) * s + 1) for o, s in zip(out, stride)))
    offsets = tuple(
        (i * d, n - i * d - length)
        for i, d, n, length in zip(tap, dilation, padded_shape[2:], t.shape[2:])
    )
    return t.pad(((0, 0), (0, 0)) + offsets)


def _tap_positions(tap, spatial, stride, pad, dilation, out):
    """Where tap ``tap`` of each window reads the input (spatial dims
    ``spatial``, padded by ``pad``): whether inside it (bool, ``out``) and the
    flat index into its spatial dims (int64, ``out``)."""
    grids = np.meshgrid(*(np.arange(o) for o in out), indexing="ij")
    inner = [math.prod(spatial[d + 1 :]) for d in range(len(spatial))]
    pos = [g * st + t * dl - p for g, st, t, dl, p in zip(grids, stride, tap, dilation, pad)]
    inside = np.ones(out, bool)
    flat = np.zeros(out, np.int64)
    for q, n, m in zip(pos, spatial, inner):
        inside &= (q >= 0) & (q < n)
        flat += q * m
    return inside, flat


def _max_pool_index_rule(idx: Tensor, kernel, stride, pad, dilation, out, pads):
    """The gradient of a max pool with its indices, as PyTorch's: each window's
    gradient goes to the input element at its index. Per tap, the windows whose
    index is where the tap reads pass theirs on, placed as the tap reads (one
    pass over the input, rather than the gradient of the chain of selects that
    found the maxima, whose compile time grows with the square of the taps)."""

    def rule(c, g):
        xb = c.x
        spatial = xb.shape[2:]
        padded = xb.shape[:2] + tuple(n + a + b for n, (a, b) in zip(spatial, pads))
        at = idx.detach().contiguous()  # computed once, not in every tap's test
        total = None
        for tap in np.ndindex(*kernel):
            inside, flat = _tap_positions(tap, spatial, stride, pad, dilation, out)
            if not inside.any():
                continue
            here = Tensor(np.where(inside, flat, -1), device=xb.device)
            placed = _tap_backward((at == here).where(g, 0.0), padded, tap, stride, dilation, out)
            total = placed if total is None else total + placed
        keep = ((0, xb.shape[0]), (0, xb.shape[1])) + tuple(
            (lo, lo + n) for (lo, _), n in zip(pads, spatial)
        )
        if total is None:
            return (xb.detach() * 0,)
        return (total.shrink(keep),)

    return rule


def _max_pool_indices(xp: Tensor, spatial, kernel, stride, pad, dilation, out):
    """The maxima and where they are, as PyTorch: the flat index into the
    input's spatial dims (int64) of the first maximum of each window in scan
    order (a NaN wins, the last one); taps in the padding never count. The
    taps' positions and validity are constants per output position."""
    acc = idx = have = None
    for tap, win in _windows(xp, kernel, stride, dilation, out):
        inside, flat = _tap_positions(tap, spatial, stride, pad, dilation, out)
        ok = Tensor(inside, device=xp.device)
        at = Tensor(flat, device=xp.device)
        if acc is None:
            acc, idx, have = win, at._broadcast_to(win.shape), ok
            continue
        better = (win > acc) | win.isnan() if win.dtype.is_float else win > acc
        take = ok & (better | ~have)
        acc = take.where(win, acc)
        idx = take.where(at, idx)
        have = have | ok
    return acc, idx


def _max_unpool(x: Tensor, indices: Tensor, kernel_size, stride, padding, output_size, nd, name):
    """Each value of ``x`` written at its flat index (``indices``, from
    ``max_pool{nd}d(..., return_indices=True)``) into zeros of the unpooled
    spatial shape: ``(in - 1) * stride - 2 * padding + kernel`` or ``output_size``."""
    batched = x.ndim == nd + 2
    if x.ndim not in (nd + 1, nd + 2):
        raise ArgumentError(
            f"{name}: input must be (N, C, {_SPATIAL[nd]}) or (C, {_SPATIAL[nd]}), got {x.shape}"
        )
    if indices.shape != x.shape:
        raise ArgumentError(
            f"{name}: indices {indices.shape} must have the input's shape {x.shape}"
        )
    kernel = _tuple(kernel_size, nd, f"{name}: kernel_size", True)
    stride = _pool_stride(stride, kernel, nd, name)
    pad = _tuple(padding, nd, f"{name}: padding", True)
    spatial = tuple(
        (i - 1) * s - 2 * p + k for i, s, p, k in zip(x.shape[-nd:], stride, pad, kernel)
    )
    if output_size is not None:
        size = tuple(int(v) for v in output_size)[-nd:]
        if len(size) != nd:
            raise ArgumentError(f"{name}: output_size {output_size} needs {nd} spatial sizes")
        spatial = size
    xb = x if batched else x.unsqueeze(0)
    ib = indices if batched else indices.unsqueeze(0)
    lead = xb.shape[:2]
    flat = Tensor.zeros(*lead, math.prod(spatial), dtype=x.dtype, device=x.device)
    at = ib.reshape(*lead, -1)
    out = flat.scatter(2, at, xb.reshape(*lead, -1))
    if x.dtype.is_float:  # PyTorch's gradient: every input reads its index (repeats too)
        shape = xb.shape
        out = _derivative("max_unpool", out, (xb,), lambda c, g: (g.gather(2, at).reshape(shape),))
    out = out.reshape(*lead, *spatial)
    return out if batched else out.squeeze(0)


def max_unpool1d(x, indices, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    """The inverse of ``max_pool1d(..., return_indices=True)``: ``F.max_unpool1d(y, i, 2)``."""
    return _max_unpool(x, indices, kernel_size, stride, padding, output_size, 1, "max_unpool1d")


def max_unpool2d(x, indices, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    """The inverse of ``max_pool2d(..., return_indices=True)``: zeros but the maxima,
    put back where they were: ``F.max_unpool2d(*F.max_pool2d(x, 2, return_indices=True), 2)``."""
    return _max_unpool(x, indices, kernel_size, stride, padding, output_size, 2, "max_unpool2d")


def max_unpool3d(x, indices, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    """The inverse of ``max_pool3d(..., return_indices=True)``."""
    return _max_unpool(x, indices, kernel_size, stride, padding, output_size, 3, "max_unpool3d")


def _avg_pool(
    x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, nd, name
) -> Tensor:
    batched = x.ndim == nd + 2
    kernel, stride, pad, dilation, out, extra = _pool_geometry(
        x, kernel_size, stride, padding, 1, ceil_mode, name, nd
    )
    xb = (x if batched else x.unsqueeze(0))._float()
    xp = xb.pad(((0, 0), (0, 0)) + tuple((p, p + e) for p, e in zip(pad, extra)))
    total = None
    for _, win in _windows(xp, kernel, stride, dilation, out):
        total = win if total is None else total + win
    assert total is not None
    if divisor_override is not None:
        if isinstance(divisor_override, bool) or divisor_override == 0:
            raise ArgumentError(f"{name}: divisor_override must be a non-zero number")
        scale = 1.0 / divisor_override
        res = total * scale
    elif count_include_pad and not any(extra):
        scale = 1.0 / math.prod(kernel)
        res = total * scale
    else:
        # count what each window covers: the input (and the zero padding when it
        # counts, but not the right padding ceil_mode adds); a constant of the
        # geometry, per dim [lo, hi) of the padded input, its product over the dims
        count = np.ones((1, 1), np.float64)
        for s, k, st, p, o in zip(xb.shape[2:], kernel, stride, pad, out):
            lo, hi = (0, s + 2 * p) if count_include_pad else (p, p + s)
            start = np.arange(o) * st
            per = np.clip(np.minimum(start + k, hi) - np.maximum(start, lo), 0, None)
            count = count[..., None] * per
        count_t = Tensor(count.astype(np.float32), device=xb.device).cast(xb.dtype)
        scale = 1.0 / count_t
        res = total / count_t
    if xb.dtype.is_float and all(out):
        pads = tuple((p, p + e) for p, e in zip(pad, extra))
        res = _derivative("avg_pool", res, (xb,), _avg_pool_rule(kernel, stride, out, pads, scale))
    return res if batched else res.squeeze(0)


def _avg_pool_rule(kernel, stride, out, pads, scale):
    """The gradient of an average pool: each window's gradient times its scale
    (1 / the divisor) placed at every tap the window reads, summed, one pass
    over the input, rather than the chain of each tap's strided-view gradient
    (whose compile time grows with the square of the taps: minutes for a
    5 x 5 x 5 window)."""

    def rule(c, g):
        xb = c.x
        share = (g * scale).contiguous()  # read once per tap, computed once
        padded = xb.shape[:2] + tuple(n + a + b for n, (a, b) in zip(xb.shape[2:], pads))
        ones = (1,) * len(kernel)
        total = None
        for tap in np.ndindex(*kernel):
            placed = _tap_backward(share, padded, tap, stride, ones, out)
            total = placed if total is None else total + placed
        assert total is not None
        keep = ((0, xb.shape[0]), (0, xb.shape[1])) + tuple(
            (lo, lo + n) for (lo, _), n in zip(pads, xb.shape[2:])
        )
        return (total.shrink(keep),)

    return rule


def _no_indices(return_indices: bool, name: str) -> None:
    if return_indices:
        raise NotImplementedError(f"{name}: return_indices=True is not supported")


def max_pool1d(
    x: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Tensor:
    """Max over each window of (N, C, L) or (C, L): ``F.max_pool1d(x, 3, stride=2)``."""
    return _max_pool(
        x, kernel_size, stride, padding, dilation, ceil_mode, 1, "max_pool1d", return_indices
    )


def max_pool2d(
    x: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Tensor:
    """Max over each window (padding reads -inf): ``F.max_pool2d(x, 2)``."""
    return _max_pool(
        x, kernel_size, stride, padding, dilation, ceil_mode, 2, "max_pool2d", return_indices
    )


def max_pool3d(
    x: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Tensor:
    """Max over each window of (N, C, D, H, W) or (C, D, H, W): ``F.max_pool3d(x, 2)``."""
    return _max_pool(
        x, kernel_size, stride, padding, dilation, ceil_mode, 3, "max_pool3d", return_indices
    )


def avg_pool1d(
    x: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Tensor:
    """Mean over each window of (N, C, L) or (C, L): ``F.avg_pool1d(x, 3, stride=2)``."""
    return _avg_pool(
        x, kernel_size, stride, padding, ceil_mode, count_include_pad, None, 1, "avg_pool1d"
    )


def avg_pool2d(
    x: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """Mean over each window: ``F.avg_pool2d(x, 2)``; ``count_include_pad=False``
    divides by the number of input elements in the window."""
    return _avg_pool(
        x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 2,
        "avg_pool2d",
    )  # fmt: skip


def avg_pool3d(
    x: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """Mean over each window of (N, C, D, H, W) or (C, D, H, W): ``F.avg_pool3d(x, 2)``."""
    return _avg_pool(
        x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 3,
        "avg_pool3d",
    )  # fmt: skip


# ---------------------------------------------------------------------------
# normalization
# ---------------------------------------------------------------------------


def batch_norm(
    x: Tensor,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalize each channel (dim 1): with the running statistics
    (inference), or with the batch's when ``training`` (the running ones are
    then updated in place): ``F.batch_norm(x, mean, var, w, b)``. An empty
    input comes back as it is (its statistics untouched), as PyTorch."""
    if x.ndim < 2 and not (x.numel() == 0 and x.ndim == 1):
        raise ArgumentError(f"batch_norm: input must be (N, C, ...), got {x.shape}")
    c = x.shape[1] if x.ndim >= 2 else 0
    shape = (1, c) + (1,) * (x.ndim - 2)
    for t, what in ((running_mean, "running_mean"), (running_var, "running_var"),
                    (weight, "weight"), (bias, "bias")):  # fmt: skip
        if t is not None and t.shape != (c,):
            raise ArgumentError(f"batch_norm: {what} must be ({c},), got {t.shape}")
    xf = x._float()
    if x.numel() == 0:  # nothing to normalize, no statistics to update (PyTorch's)
        out = xf + 0.0
        if x.ndim >= 2:
            out = out * weight.reshape(shape) if weight is not None else out
            out = out + bias.reshape(shape) if bias is not None else out
        return out
    if training:
        axes = (0,) + tuple(range(2, x.ndim))
        mean = xf.mean(axes)
        var = xf.var(axes, correction=0)
        n = x.numel() // c
        with no_grad():  # running statistics are state, not part of the gradient
            if running_mean is not None:
                running_mean.assign(running_mean * (1 - momentum) + mean.detach() * momentum)
            if running_var is not None:
                unbiased = var.detach() * (n / max(n - 1, 1))
                running_var.assign(running_var * (1 - momentum) + unbiased * momentum)
    else:
        if running_mean is None or running_var is None:
            raise ArgumentError("batch_norm: inference needs running_mean and running_var")
        mean, var = running_mean, running_var
    out = (xf - mean.reshape(shape)) * (var.reshape(shape) + eps).rsqrt()
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def _normalized_shape(x: Tensor, normalized_shape, name: str) -> tuple[int, ...]:
    """``normalized_shape`` (an int or ints) as a tuple: non-empty, and the
    input's last dims (PyTorch's checks of ``layer_norm`` and ``rms_norm``)."""
    if isinstance(normalized_shape, (int, np.integer)) and not isinstance(normalized_shape, bool):
        ns: tuple = (int(normalized_shape),)
    elif isinstance(normalized_shape, (tuple, list)) and all(
        isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in normalized_shape
    ):
        ns = tuple(int(v) for v in normalized_shape)
    else:
        raise ArgumentError(
            f"{name}: normalized_shape must be an int or ints, got {normalized_shape!r}"
        )
    if not ns:
        raise ArgumentError(
            f"{name}: normalized_shape must have at least one dim, got {ns} for the input {x.shape}"
        )
    if len(ns) > x.ndim or x.shape[x.ndim - len(ns) :] != ns:
        raise ArgumentError(
            f"{name}: normalized_shape {ns} is not the end of the input {x.shape} "
            f"(expected (*, {', '.join(map(str, ns))}))"
        )
    return ns


@amp.float32_precision
def layer_norm(
    x: Tensor,
    normalized_shape,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalize over the last dims ``normalized_shape`` (``weight`` and ``bias``
    of that shape): ``F.layer_norm(x, (64,), w, b)``."""
    ns = _normalized_shape(x, normalized_shape, "layer_norm")
    for t, what in ((weight, "weight"), (bias, "bias")):
        if t is not None and t.shape != ns:
            raise ArgumentError(
                f"layer_norm: {what} must have the normalized shape {ns}, got {t.shape}"
            )
    axes = tuple(range(x.ndim - len(ns), x.ndim))
    half = x.dtype.is_half  # 16-bit inputs: computed in float32, rounded once (PyTorch's)
    xf = x.float() if half else x._float()
    mu = xf.mean(axes, keepdim=True)
    d = xf - mu
    out = d * ((d * d).mean(axes, keepdim=True) + eps).rsqrt()
    if weight is not None:
        out = out * (weight.float() if half and weight.dtype.is_half else weight)
    if bias is not None:
        out = out + (bias.float() if half and bias.dtype.is_half else bias)
    return out.cast(x.dtype) if half else out


@amp.float32_precision
def group_norm(
    x: Tensor, num_groups: int, weight: Tensor | None = None, bias: Tensor | None = None, eps=1e-5
) -> Tensor:
    """Normalize groups of channels of (N, C, *): ``F.group_norm(x, 4, w, b)``."""
    if x.ndim < 2:
        raise ArgumentError(f"group_norm: input must be (N, C, ...), at least 2-d, got {x.shape}")
    n, c = x.shape[:2]
    if (
        isinstance(num_groups, bool)
        or not isinstance(num_groups, (int, np.integer))
        or num_groups <= 0
    ):
        raise ArgumentError(f"group_norm: num_groups must be a positive int, got {num_groups!r}")
    if c % num_groups:
        raise ArgumentError(
            f"group_norm: {num_groups} groups do not divide {c} channels (input {x.shape})"
        )
    for t, what in ((weight, "weight"), (bias, "bias")):
        if t is not None and t.shape != (c,):
            raise ArgumentError(
                f"group_norm: {what} must be ({c},), one per channel of the input {x.shape}, "
                f"got {t.shape}"
            )
    g = x._float().reshape(n, num_groups, c // num_groups * math.prod(x.shape[2:]))
    out = layer_norm(g, g.shape[-1:], eps=eps).reshape(x.shape)
    shape = (1, c) + (1,) * (x.ndim - 2)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


# ---------------------------------------------------------------------------
# attention, dropout, embedding
# ---------------------------------------------------------------------------


def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Tensor:
    """``softmax(q k^T * scale + mask) v`` over the last two dims (batch dims
    broadcast); ``is_causal`` masks the upper triangle; a bool ``attn_mask``
    keeps where true, a float one is added; ``enable_gqa`` lets key and value
    have fewer heads (dim -3) than the query, each shared by a group of query
    heads: ``F.scaled_dot_product_attention(q, k, v, is_causal=True)``."""
    if enable_gqa and query.ndim >= 3 and key.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        hq, hk = query.shape[-3], key.shape[-3]
        if hk == 0 or hq % hk or value.shape[-3] != hk:
            raise ArgumentError(
                f"scaled_dot_product_attention: {hq} query heads cannot be grouped over "
                f"{hk} key and {value.shape[-3]} value heads (enable_gqa needs a divisor)"
            )
        key = key.repeat_interleave(hq // hk, -3)
        value = value.repeat_interleave(hq // hk, -3)
    if query.shape[-1] != key.shape[-1] or key.shape[-2] != value.shape[-2]:
        raise ArgumentError(
            f"scaled_dot_product_attention: shapes q {query.shape}, k {key.shape}, "
            f"v {value.shape} do not fit (q[..., E], k[..., S, E], v[..., S, Ev])"
        )
    s = scale if scale is not None else 1 / math.sqrt(query.shape[-1])
    scores = (query @ key.transpose(-2, -1)) * s
    lq, sk = scores.shape[-2:]
    if is_causal:
        if attn_mask is not None:
            raise ArgumentError(
                "scaled_dot_product_attention: give attn_mask or is_causal, not both"
            )
        keep = Tensor.ones(lq, sk, dtype=dtypes.bool_, device=query.device).tril()
        scores = keep.where(scores, -math.inf)
    elif attn_mask is not None:
        if attn_mask.dtype.is_bool:
            scores = attn_mask.where(scores, -math.inf)
        else:
            scores = scores + attn_mask
    attn = scores.softmax(-1)
    if dropout_p:
        attn = dropout(attn, dropout_p)
    return attn @ value


def _additive_mask(mask, what: str, name: str, dtype) -> Tensor:
    """A bool mask (True: not allowed) as 0 / -inf, a float one as it is."""
    if not isinstance(mask, Tensor):
        raise TypeError(f"{name}: {what} must be a Tensor, got {type(mask).__name__}")
    if mask.dtype.is_bool:
        return mask.where(-math.inf, 0.0).cast(dtype)
    if not mask.dtype.is_float:
        raise ArgumentError(f"{name}: {what} must be bool or float, got {mask.dtype.name}")
    return mask.cast(dtype)


def multi_head_attention_forward(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    embed_dim_to_check: int,
    num_heads: int,
    in_proj_weight: Tensor | None,
    in_proj_bias: Tensor | None,
    bias_k: Tensor | None,
    bias_v: Tensor | None,
    add_zero_attn: bool,
    dropout_p: float,
    out_proj_weight: Tensor,
    out_proj_bias: Tensor | None,
    training: bool = True,
    key_padding_mask: Tensor | None = None,
    need_weights: bool = True,
    attn_mask: Tensor | None = None,
    use_separate_proj_weight: bool = False,
    q_proj_weight: Tensor | None = None,
    k_proj_weight: Tensor | None = None,
    v_proj_weight: Tensor | None = None,
    static_k: Tensor | None = None,
    static_v: Tensor | None = None,
    average_attn_weights: bool = True,
    is_causal: bool = False,
):
    """PyTorch's multi-head attention with explicit weights (what
    ``nn.MultiheadAttention`` runs): query (L, N, E), key (S, N, kdim) and value
    (S, N, vdim), or unbatched (L, E)...; projected by ``in_proj_weight`` (3E,
    E) or, with ``use_separate_proj_weight``, ``q/k/v_proj_weight``; ``bias_k``/
    ``bias_v`` (1, 1, E) appended to the keys and values, ``add_zero_attn`` a
    zero one; ``static_k``/``static_v`` (N * num_heads, S, E / num_heads) used
    in place of the projected ones. A bool mask is True where attention is not
    allowed, a float one is added; ``is_causal`` with no ``attn_mask`` masks the
    upper triangle (PyTorch asks for the mask too). Returns ``(attn_output (L,
    N, E), weights (N, L, S) averaged over the heads, (N, num_heads, L, S)
    otherwise, or None without need_weights)``:
    ``out, w = F.multi_head_attention_forward(q, k, v, 8, 2, w_in, b_in, None,
    None, False, 0.0, w_out, b_out)``."""
    return _multi_head_attention(
        query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias, bias_k,
        bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias, training,
        key_padding_mask, need_weights, attn_mask, use_separate_proj_weight, q_proj_weight,
        k_proj_weight, v_proj_weight, static_k, static_v, average_attn_weights, is_causal,
        "multi_head_attention_forward",
    )  # fmt: skip


def _multi_head_attention(
    query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias, bias_k,
    bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias, training,
    key_padding_mask, need_weights, attn_mask, use_separate_proj_weight, q_proj_weight,
    k_proj_weight, v_proj_weight, static_k, static_v, average_attn_weights, is_causal,
    name: str,
):  # fmt: skip
    """:func:`multi_head_attention_forward`, its errors naming ``name`` (the
    module's, when ``nn.MultiheadAttention`` calls it)."""
    for what, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}: {what} must be a Tensor, got {type(t).__name__}")
    if query.ndim not in (2, 3) or key.ndim != query.ndim or value.ndim != query.ndim:
        raise ArgumentError(
            f"{name}: query, key and value must all be 3-d (batched) or 2-d (unbatched), "
            f"got {query.shape}, {key.shape}, {value.shape}"
        )
    batched = query.ndim == 3
    q, k, v = (query, key, value) if batched else (t.unsqueeze(1) for t in (query, key, value))
    tgt, n, e = q.shape
    src = k.shape[0]
    if e != embed_dim_to_check:
        raise ArgumentError(f"{name}: query has {e} features, embed_dim is {embed_dim_to_check}")
    h = num_heads
    if isinstance(h, bool) or not isinstance(h, (int, np.integer)) or h <= 0 or e % h:
        raise ArgumentError(
            f"{name}: embed_dim {e} must be divisible by num_heads {num_heads} (a positive int)"
        )
    hd = e // h
    if use_separate_proj_weight:
        ws = (q_proj_weight, k_proj_weight, v_proj_weight)
        if any(w is None for w in ws):
            raise ArgumentError(
                f"{name}: use_separate_proj_weight needs q_proj_weight, k_proj_weight and "
                f"v_proj_weight"
            )
        if ws[0].shape != (e, e) or ws[1].ndim != 2 or ws[2].ndim != 2:
            raise ArgumentError(
                f"{name}: q_proj_weight must be (E, E) = {(e, e)} and k_proj_weight, "
                f"v_proj_weight (E, kdim), (E, vdim), got {ws[0].shape}, {ws[1].shape}, "
                f"{ws[2].shape}"
            )
    else:
        if in_proj_weight is None or in_proj_weight.shape != (3 * e, e):
            got = None if in_proj_weight is None else in_proj_weight.shape
            raise ArgumentError(f"{name}: in_proj_weight must be (3E, E) = {(3 * e, e)}, got {got}")
        ws = (in_proj_weight[:e], in_proj_weight[e : 2 * e], in_proj_weight[2 * e :])
    if in_proj_bias is not None and in_proj_bias.shape != (3 * e,):
        raise ArgumentError(
            f"{name}: in_proj_bias must be (3E,) = {(3 * e,)}, got {in_proj_bias.shape}"
        )
    wq, wk, wv = ws
    if k.shape[-1] != wk.shape[1] or v.shape[-1] != wv.shape[1]:
        raise ArgumentError(
            f"{name}: key and value must have kdim={wk.shape[1]} and vdim={wv.shape[1]} "
            f"features, got {k.shape[-1]} and {v.shape[-1]}"
        )
    if k.shape[:2] != v.shape[:2] or k.shape[1] != n:
        raise ArgumentError(
            f"{name}: key {key.shape} and value {value.shape} must have one length and the "
            f"query's batch"
        )
    b = in_proj_bias
    bq, bk, bv = (b[:e], b[e : 2 * e], b[2 * e :]) if b is not None else (None, None, None)
    dt = dtypes.promote(q.dtype, out_proj_weight.dtype)

    # the additive mask, (N, heads or 1, L, S) before the extra keys
    mask = None
    if attn_mask is not None:
        m = _additive_mask(attn_mask, "attn_mask", name, dt)
        if m.ndim == 2:
            if m.shape != (tgt, src):
                raise ArgumentError(
                    f"{name}: a 2-d attn_mask must be (L, S) = {(tgt, src)}, got {m.shape}"
                )
            m = m.reshape(1, 1, tgt, src)
        elif m.ndim == 3:
            want = (n * h, tgt, src)
            if m.shape != want:
                raise ArgumentError(
                    f"{name}: a 3-d attn_mask must be (N * num_heads, L, S) = {want}, got {m.shape}"
                )
            m = m.reshape(n, h, tgt, src)
        else:
            raise ArgumentError(f"{name}: attn_mask must be 2-d or 3-d, got {m.shape}")
        mask = m
    elif is_causal:
        keep = Tensor.ones(tgt, src, dtype=dtypes.bool_, device=q.device).tril()
        mask = keep.where(0.0, -math.inf).cast(dt).reshape(1, 1, tgt, src)
    pad = None
    if key_padding_mask is not None:
        pad = _additive_mask(key_padding_mask, "key_padding_mask", name, dt)
        want = (n, src) if batched else (src,)
        if pad.shape != want:
            raise ArgumentError(
                f"{name}: key_padding_mask must be {'(N, S)' if batched else '(S,)'} = {want}, "
                f"got {pad.shape}"
            )
        pad = pad.reshape(n, 1, 1, src)

    def extra_key(mask_, pad_):  # one more key: a zero column in the masks
        col = ((0, 0), (0, 0), (0, 0), (0, 1))
        return (None if mask_ is None else mask_.pad(col)), (
            None if pad_ is None else pad_.pad(col)
        )

    def heads(x: Tensor) -> Tensor:  # (len, N, E) -> (N, heads, len, hd)
        return x.reshape(x.shape[0], n, h, hd).permute(1, 2, 0, 3)

    qh = heads(linear(q, wq, bq))
    kp, vp = linear(k, wk, bk), linear(v, wv, bv)
    if bias_k is not None or bias_v is not None:
        if bias_k is None or bias_v is None:
            raise ArgumentError(f"{name}: bias_k and bias_v must be given together")
        if static_k is not None or static_v is not None:
            raise ArgumentError(f"{name}: bias_k and bias_v cannot be added to static_k/static_v")
        for what, t in (("bias_k", bias_k), ("bias_v", bias_v)):
            if t.numel() != e:
                raise ArgumentError(
                    f"{name}: {what} must be (1, 1, E) = {(1, 1, e)}, got {t.shape}"
                )
        kp = kp.cat(bias_k.reshape(1, 1, e).expand(1, n, e), dim=0)
        vp = vp.cat(bias_v.reshape(1, 1, e).expand(1, n, e), dim=0)
        mask, pad = extra_key(mask, pad)
    kh, vh = heads(kp), heads(vp)
    for what, static in (("static_k", static_k), ("static_v", static_v)):
        if static is None:
            continue
        if static.ndim != 3 or static.shape[0] != n * h or static.shape[2] != hd:
            raise ArgumentError(
                f"{name}: {what} must be (N * num_heads, S, head_dim) = ({n * h}, S, {hd}), got "
                f"{static.shape}"
            )
        s4 = static.reshape(n, h, static.shape[1], hd)
        kh, vh = (s4, vh) if what == "static_k" else (kh, s4)
    if add_zero_attn:
        zeros = Tensor.zeros(n, h, 1, hd, dtype=kh.dtype, device=kh.device)
        kh, vh = kh.cat(zeros, dim=2), vh.cat(zeros.cast(vh.dtype), dim=2)
        mask, pad = extra_key(mask, pad)
    length = kh.shape[2]
    if vh.shape[2] != length:
        raise ArgumentError(f"{name}: static_k and static_v give {length} and {vh.shape[2]} keys")
    for what, m in (("attn_mask", mask), ("key_padding_mask", pad)):
        if m is not None and m.shape[-1] != length:
            raise ArgumentError(
                f"{name}: {what} covers {m.shape[-1]} keys, the attention has {length} "
                f"(static_k/static_v change S)"
            )
    if pad is not None:
        mask = pad if mask is None else mask + pad
    p = dropout_p if training else 0.0
    weights = None
    if need_weights:
        scores = (qh @ kh.transpose(-2, -1)) * (1 / math.sqrt(hd))
        if mask is not None:
            scores = scores + mask
        attn = scores.softmax(-1)
        attn = dropout(attn, p) if p else attn
        out = attn @ vh
        weights = attn.mean(1) if average_attn_weights else attn
        weights = weights if batched else weights.squeeze(0)
    else:
        out = scaled_dot_product_attention(qh, kh, vh, attn_mask=mask, dropout_p=p)
    out = linear(out.permute(2, 0, 1, 3).reshape(tgt, n, e), out_proj_weight, out_proj_bias)
    return (out if batched else out.squeeze(1)), weights


def dropout(x: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by
    ``1 / (1 - p)`` (the mask comes from ``mlfuse.manual_seed``'s generator);
    the identity when not ``training``: ``F.dropout(x, 0.1)``."""
    if not 0 <= p <= 1:
        raise ArgumentError(f"dropout: p must be in [0, 1], got {p}")
    if not training or p == 0:
        return x
    if p == 1:
        return _maybe_inplace(x, x * 0, inplace, "dropout")
    keep = _random(lambda g: g.random(x.shape) >= p, device=x.device)
    return _maybe_inplace(x, keep.where(x * (1 / (1 - p)), 0), inplace, "dropout")


# ---------------------------------------------------------------------------
# losses
# ---------------------------------------------------------------------------


def _reduce(loss: Tensor, reduction: str, what: str, count: Tensor | None = None) -> Tensor:
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.sum() / count if count is not None else loss.mean()
    raise ArgumentError(f"{what}: reduction must be 'none', 'mean' or 'sum', got {reduction!r}")


@amp.float32_precision
def nll_loss(
    input: Tensor,  # noqa: A002 - PyTorch's names
    target: Tensor,
    weight: Tensor | None = None,
    ignore_index: int = -100,
    reduction: str = "mean",
) -> Tensor:
    """Negative log-likelihood of class indices under log-probabilities
    (N, C, ...), or unbatched (C,) with a 0-d target: ``F.nll_loss(logp, labels)``."""
    if input.ndim == 1 and target.ndim == 0:  # unbatched, as PyTorch: a batch of one
        loss = nll_loss(input.unsqueeze(0), target.unsqueeze(0), weight, ignore_index, reduction)
        return loss.squeeze(0) if reduction == "none" else loss
    if input.ndim < 1 or target.shape != input.shape[:1] + input.shape[2:]:
        raise ArgumentError(
            f"nll_loss: target {target.shape} must be input {input.shape} without dim 1"
        )
    if target.dtype.is_float:
        raise TypeError(f"nll_loss: target must hold class indices, got {target.dtype.name}")
    c = input.shape[1] if input.ndim > 1 else input.shape[0]
    if weight is not None and weight.shape != (c,):
        raise ArgumentError(f"nll_loss: weight must be ({c},) (one per class), got {weight.shape}")
    classes = Tensor.arange(c, device=input.device).reshape((1, c) + (1,) * (input.ndim - 2))
    hit = target.unsqueeze(1).cast(dtypes.int64) == classes
    picked = hit.where(input, 0).sum(1)
    valid = (target != ignore_index).cast(input.dtype)
    w = valid
    if weight is not None:
        w = hit.where(weight.reshape((1, c) + (1,) * (input.ndim - 2)), 0).sum(1) * valid
    loss = (target != ignore_index).where(-picked * w, 0.0)  # ignored: 0, not -0 (PyTorch's)
    return _reduce(loss, reduction, "nll_loss", w.sum() if reduction == "mean" else None)


@amp.float32_precision
def linear_cross_entropy(
    input: Tensor,  # noqa: A002 - PyTorch's names
    linear_weight: Tensor,
    target: Tensor,
    *,
    linear_bias: Tensor | None = None,
    weight: Tensor | None = None,
    reduction: str = "mean",
    ignore_index: int | None = None,
    label_smoothing: float = 0.0,
    options=None,
) -> Tensor:
    """:func:`cross_entropy` of the logits ``input @ linear_weight^T (+ linear_bias)``;
    ``linear_weight`` is (C, in) or (C, d1, .., dK, in) for a K-dimensional loss
    (logits (N, C, d1, .., dK)); ``ignore_index`` None is -100. The logits and
    the loss fuse into the product's consumers (``options``, PyTorch's chunking
    choices, changes nothing): ``F.linear_cross_entropy(h, w_out, labels)``."""
    if linear_weight.ndim < 2 or input.ndim < 1 or input.shape[-1] != linear_weight.shape[-1]:
        raise ArgumentError(
            f"linear_cross_entropy: input (..., in) and linear_weight (C, ..., in) must share "
            f"in, got {input.shape} and {linear_weight.shape}"
        )
    classes = linear_weight.shape[:-1]
    logits = input.matmul(linear_weight.reshape(-1, linear_weight.shape[-1]).transpose(0, 1))
    logits = logits.reshape(input.shape[:-1] + classes)
    if linear_bias is not None:
        if linear_bias.shape != classes:
            raise ArgumentError(
                f"linear_cross_entropy: linear_bias must be {classes}, got {linear_bias.shape}"
            )
        logits = logits + linear_bias
    return cross_entropy(
        logits, target, weight, -100 if ignore_index is None else ignore_index, reduction,
        label_smoothing,
    )  # fmt: skip


def cross_entropy(
    input: Tensor,  # noqa: A002 - PyTorch's names
    target: Tensor,
    weight: Tensor | None = None,
    ignore_index: int = -100,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """Cross entropy of logits (N, C, ...) against class indices (N, ...) or
    class probabilities (N, C, ...), or unbatched logits (C,) against a 0-d index
    or (C,) probabilities: ``F.cross_entropy(logits, labels)``."""
    if input.ndim == 1 and target.ndim in (0, 1):  # unbatched, as PyTorch: a batch of one
        loss = cross_entropy(
            input.unsqueeze(0), target.unsqueeze(0), weight, ignore_index, reduction,
            label_smoothing,
        )  # fmt: skip
        return loss.squeeze(0) if reduction == "none" else loss
    if input.ndim < 2:
        raise ArgumentError(f"cross_entropy: input must be (N, C, ...) or (C,), got {input.shape}")
    logp = input.log_softmax(1)
    c = input.shape[1]
    if target.dtype.is_float:  # probabilities
        if target.shape != input.shape:
            raise ArgumentError(
                f"cross_entropy: probability targets must have the input's shape {input.shape}, "
                f"got {target.shape}"
            )
        t = target * (1 - label_smoothing) + label_smoothing / c if label_smoothing else target
        w = weight.reshape((1, c) + (1,) * (input.ndim - 2)) if weight is not None else 1
        return _reduce(-(logp * t * w).sum(1), reduction, "cross_entropy")
    loss = nll_loss(logp, target, weight, ignore_index, "none")
    if label_smoothing:
        valid = (target != ignore_index).cast(logp.dtype)
        w = weight.reshape((1, c) + (1,) * (input.ndim - 2)) if weight is not None else 1
        smooth = -(logp * w).sum(1) * (1 / c) * valid
        loss = loss * (1 - label_smoothing) + smooth * label_smoothing
    if reduction == "mean":
        valid = (target != ignore_index).cast(logp.dtype)
        if weight is not None:
            classes = Tensor.arange(c, device=input.device).reshape(
                (1, c) + (1,) * (input.ndim - 2)
            )
            hit = target.unsqueeze(1).cast(dtypes.int64) == classes
            denom = (
                hit.where(weight.reshape((1, c) + (1,) * (input.ndim - 2)), 0).sum(1) * valid
            ).sum()
        else:
            denom = valid.sum()
        return loss.sum() / denom
    return _reduce(loss, reduction, "cross_entropy")


@amp.float32_precision
def mse_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:  # noqa: A002
    """Mean squared error: ``F.mse_loss(pred, y)``."""
    d = input - target
    return _reduce(d * d, reduction, "mse_loss")


@amp.float32_precision
def l1_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:  # noqa: A002
    """Mean absolute error: ``F.l1_loss(pred, y)``."""
    return _reduce((input - target).abs(), reduction, "l1_loss")


def binary_cross_entropy(
    input: Tensor,  # noqa: A002 - PyTorch's names
    target: Tensor,
    weight: Tensor | None = None,
    reduction: str = "mean",
) -> Tensor:
    """BCE of probabilities (logs clamped at -100, as PyTorch):
    ``F.binary_cross_entropy(p, y)``."""
    p = input._float()
    loss = -(target * p.log().maximum(-100) + (1 - target) * (1 - p).log().maximum(-100))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction, "binary_cross_entropy")


@amp.float32_precision
def binary_cross_entropy_with_logits(
    input: Tensor,  # noqa: A002 - PyTorch's names
    target: Tensor,
    weight: Tensor | None = None,
    reduction: str = "mean",
    pos_weight: Tensor | None = None,
) -> Tensor:
    """BCE of logits, computed stably: ``F.binary_cross_entropy_with_logits(z, y)``."""
    x = input._float()
    log_sig = x.logsigmoid()
    log_one_minus = (-x).logsigmoid()
    pos = target * log_sig
    if pos_weight is not None:
        pos = pos * pos_weight
    loss = -(pos + (1 - target) * log_one_minus)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction, "binary_cross_entropy_with_logits")


# ---------------------------------------------------------------------------
# more activations, similarity, adaptive pooling and losses
# ---------------------------------------------------------------------------


def relu6(x: Tensor, inplace: bool = False) -> Tensor:
    """``min(max(x, 0), 6)``: ``F.relu6(x)``."""
    return _maybe_inplace(x, x.relu6(), inplace, "relu6")


def hardtanh(
    x: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False
) -> Tensor:
    """Clamp to ``[min_val, max_val]``: ``F.hardtanh(x)``."""
    if min_val > max_val:
        raise ArgumentError(f"hardtanh: min_val {min_val} is above max_val {max_val}")
    return _maybe_inplace(x, x.hardtanh(min_val, max_val), inplace, "hardtanh")


def hardsigmoid(x: Tensor, inplace: bool = False) -> Tensor:
    """``clamp(x / 6 + 1/2, 0, 1)``: ``F.hardsigmoid(x)``."""
    return _maybe_inplace(x, x.hardsigmoid(), inplace, "hardsigmoid")


def hardswish(x: Tensor, inplace: bool = False) -> Tensor:
    """``x * hardsigmoid(x)``: ``F.hardswish(x)``."""
    return _maybe_inplace(x, x.hardswish(), inplace, "hardswish")


def mish(x: Tensor, inplace: bool = False) -> Tensor:
    """``x * tanh(softplus(x))``: ``F.mish(x)``."""
    return _maybe_inplace(x, x.mish(), inplace, "mish")


def selu(x: Tensor, inplace: bool = False) -> Tensor:
    """Scaled elu with the self-normalizing constants: ``F.selu(x)``."""
    return _maybe_inplace(x, x.selu(), inplace, "selu")


def celu(x: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``: ``F.celu(x)``."""
    if alpha == 0:
        raise ArgumentError("celu: alpha must not be 0")
    return _maybe_inplace(x, x.celu(alpha), inplace, "celu")


def logsigmoid(x: Tensor) -> Tensor:
    """``log(sigmoid(x))``, stable for large |x|: ``F.logsigmoid(x)``."""
    return x.logsigmoid()


def softsign(x: Tensor) -> Tensor:
    """``x / (1 + |x|)``: ``F.softsign(x)``."""
    return x.softsign()


@amp.float32_precision
def softmin(x: Tensor, dim: int | None = -1, _stacklevel: int = 3, dtype=None) -> Tensor:
    """``softmax(-x)`` along ``dim``, ``-x`` cast to ``dtype`` when given (as
    PyTorch): ``F.softmin(x, dim=1)``, ``F.softmin(x, 0, dtype=mlfuse.float64)``."""
    d = _softmax_dim(x, dim, "softmin")
    if dtype is None:
        return (-x._float()).softmax(d)
    return _cast_to(-x, dtype).softmax(d)


def glu(x: Tensor, dim: int = -1) -> Tensor:
    """Gated linear unit: the first half of ``dim`` times the sigmoid of the
    second: ``F.glu(x)``."""
    d = dim % x.ndim if x.ndim and -x.ndim <= dim < x.ndim else None
    if d is None or x.shape[d] % 2:
        raise ArgumentError(f"glu: dim {dim} of {x.shape} must exist and have an even size")
    a, b = x.chunk(2, d)
    return a * b.sigmoid()


@amp.float32_precision
def normalize(x: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
    """``x / max(norm_p(x, dim), eps)``: ``F.normalize(x, dim=-1)``."""
    return x._float() / x.norm(p, dim=dim, keepdim=True).maximum(eps)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """``x1 . x2 / max(|x1| |x2|, eps)`` along ``dim`` (inputs broadcast):
    ``F.cosine_similarity(a, b, dim=-1)``."""
    a, b = x1._float()._operands(x2)
    dot = (a * b).sum(dim)
    # clamped before the root (PyTorch's order): a zero vector gets a zero gradient
    n = ((a * a).sum(dim) * (b * b).sum(dim)).maximum(eps * eps).sqrt()
    return dot / n


def _adaptive_bins(size: int, out: int, like: Tensor) -> Tensor:
    """(out, size) weights in ``like``'s float dtype and device: row i averages
    PyTorch's window ``[floor(i * size / out), ceil((i + 1) * size / out))``
    (1/n rounded once, in that dtype)."""
    m = np.zeros((out, size), np.float64)
    for i in range(out):
        lo, hi = (i * size) // out, -(-((i + 1) * size) // out)
        m[i, lo:hi] = 1.0 / (hi - lo)
    return Tensor(m, device=like.device).cast(like.dtype)


def adaptive_avg_pool2d(x: Tensor, output_size) -> Tensor:
    """Average over PyTorch's adaptive windows (overlapping where the sizes do
    not divide): ``F.adaptive_avg_pool2d(x, 1)`` is the global average pool."""
    if x.ndim not in (3, 4):
        raise ArgumentError(
            f"adaptive_avg_pool2d: input must be (N, C, H, W) or (C, H, W), got {x.shape}"
        )
    h, w = x.shape[-2:]
    if isinstance(output_size, (tuple, list)) and len(output_size) == 2:
        oh, ow = (
            (h if output_size[0] is None else output_size[0]),
            (w if output_size[1] is None else output_size[1]),
        )
    else:
        oh, ow = _tuple(output_size, 2, "adaptive_avg_pool2d: output_size")
    if not all(isinstance(v, (int, np.integer)) and v > 0 for v in (oh, ow)):
        raise ArgumentError(
            f"adaptive_avg_pool2d: output_size must be positive, got {output_size!r}"
        )
    xf = x._float()
    if h % oh == 0 and w % ow == 0:  # equal windows: a plain mean over a reshape
        lead = x.shape[:-2]
        return xf.reshape(lead + (oh, h // oh, ow, w // ow)).mean((-3, -1))
    ph = _adaptive_bins(h, oh, xf).reshape(oh, 1, h, 1)
    pw = _adaptive_bins(w, ow, xf).reshape(1, ow, 1, w)
    return (xf.unsqueeze(-3).unsqueeze(-3) * (ph * pw)).sum((-2, -1))


@amp.float32_precision
def smooth_l1_loss(
    input: Tensor,  # noqa: A002 - PyTorch's names
    target: Tensor,
    reduction: str = "mean",
    beta: float = 1.0,
) -> Tensor:
    """``0.5 d^2 / beta`` below ``beta``, ``|d| - beta / 2`` above:
    ``F.smooth_l1_loss(pred, y)``."""
    if beta < 0:
        raise ArgumentError(f"smooth_l1_loss: beta must be >= 0, got {beta}")
    d = (input - target)._float().abs()
    if beta == 0:
        return _reduce(d, reduction, "smooth_l1_loss")
    return _reduce(
        (d < beta).where(d * d * (0.5 / beta), d - 0.5 * beta), reduction, "smooth_l1_loss"
    )


@amp.float32_precision
def huber_loss(
    input: Tensor,  # noqa: A002 - PyTorch's names
    target: Tensor,
    reduction: str = "mean",
    delta: float = 1.0,
) -> Tensor:
    """``0.5 d^2`` below ``delta``, ``delta (|d| - delta / 2)`` above:
    ``F.huber_loss(pred, y)``."""
    if delta <= 0:
        raise ArgumentError(f"huber_loss: delta must be > 0, got {delta}")
    d = (input - target)._float().abs()
    return _reduce(
        (d < delta).where(d * d * 0.5, (d - 0.5 * delta) * delta), reduction, "huber_loss"
    )


@amp.float32_precision
def kl_div(
    input: Tensor,  # noqa: A002 - PyTorch's names
    target: Tensor,
    reduction: str = "mean",
    log_target: bool = False,
) -> Tensor:
    """KL divergence of ``target`` from log-probabilities ``input``
    (``reduction="batchmean"`` divides by the batch size, as the math wants):
    ``F.kl_div(logq, p, reduction="batchmean")``."""
    if log_target:
        loss = target.exp() * (target - input)
    else:
        t = target._float()
        # PyTorch's xlogy(t, t) - t * input: 0 where t is 0, NaN where it is negative
        tiny = 1e-38 if t.dtype != dtypes.float64 else 1e-300
        xlogx = (t > 0).where(t * t.maximum(tiny).log(), (t == 0).where(0.0, math.nan))
        loss = xlogx - t * input
    if reduction == "batchmean":
        return loss.sum() / (input.shape[0] if input.ndim else 1)
    return _reduce(loss, reduction, "kl_div")


# ---------------------------------------------------------------------------
# more pooling, resampling and rearranging
# ---------------------------------------------------------------------------


def adaptive_avg_pool1d(x: Tensor, output_size) -> Tensor:
    """Average over PyTorch's adaptive windows of (N, C, L) or (C, L):
    ``F.adaptive_avg_pool1d(x, 4)``."""
    if x.ndim not in (2, 3):
        raise ArgumentError(
            f"adaptive_avg_pool1d: input must be (N, C, L) or (C, L), got {x.shape}"
        )
    (o,) = _tuple(output_size, 1, "adaptive_avg_pool1d: output_size")
    if o <= 0:
        raise ArgumentError(
            f"adaptive_avg_pool1d: output_size must be positive, got {output_size!r}"
        )
    return adaptive_avg_pool2d(x.unsqueeze(-2), (1, o)).squeeze(-2)


def _adaptive_sizes(x: Tensor, output_size, nd: int, name: str) -> tuple[int, ...]:
    if x.ndim not in (nd + 1, nd + 2):
        raise ArgumentError(
            f"{name}: input must be (N, C, {_SPATIAL[nd]}) or (C, {_SPATIAL[nd]}), got {x.shape}"
        )
    spatial = x.shape[-nd:]
    if isinstance(output_size, (tuple, list)) and len(output_size) == nd:
        out = tuple(s if o is None else o for o, s in zip(output_size, spatial))
    else:
        out = _tuple(output_size, nd, f"{name}: output_size")
    if not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v > 0 for v in out):
        raise ArgumentError(f"{name}: output_size must be positive ints, got {output_size!r}")
    return tuple(int(v) for v in out)


def _adaptive_max_last(x: Tensor, out: int) -> Tensor:
    """PyTorch's adaptive max windows along the last dim of ``x``."""
    size = x.shape[-1]
    if size % out == 0:
        return x.reshape(x.shape[:-1] + (out, size // out)).max(-1)
    m = np.zeros((out, size), bool)
    for i in range(out):
        m[i, (i * size) // out : -(-((i + 1) * size) // out)] = True
    low = -math.inf if x.dtype.is_float else int(np.iinfo(x.dtype.np).min)
    return Tensor(m, device=x.device).where(x.unsqueeze(-2), low).max(-1)


def _adaptive_max_last_indices(x: Tensor, out: int) -> tuple[Tensor, Tensor]:
    """PyTorch's adaptive max windows along the last dim of ``x``, and where
    each maximum is along it (int64): the first one, or the last NaN (PyTorch's
    scan takes ``val > max or isnan(val)``)."""
    size = x.shape[-1]
    low = -math.inf if x.dtype.is_float else int(np.iinfo(x.dtype.np).min)
    if size % out == 0:  # equal windows: a reshape
        k = size // out
        win = x.reshape(x.shape[:-1] + (out, k))
        pos = Tensor(np.arange(size).reshape(out, k), device=x.device)
        inside = None
    else:
        m = np.zeros((out, size), bool)
        for i in range(out):
            m[i, (i * size) // out : -(-((i + 1) * size) // out)] = True
        inside = Tensor(m, device=x.device)
        win = inside.where(x.unsqueeze(-2), low)
        pos = Tensor(np.broadcast_to(np.arange(size), (out, size)).copy(), device=x.device)
    vals = win.max(-1)
    hit = win == vals.unsqueeze(-1)
    if inside is not None:
        hit = hit & inside
    idx = hit.where(pos, size).min(-1)
    if x.dtype.is_float:
        last_nan = win.isnan().where(pos, -1).max(-1)
        idx = (last_nan >= 0).where(last_nan, idx)
    return vals, idx


def _adaptive_max_nd(x: Tensor, output_size, nd: int, name: str, return_indices: bool):
    """Adaptive max pooling over the last ``nd`` dims, one dim at a time (the
    max of a box is the max of its rows' maxima); with ``return_indices`` the
    flat index into the input's spatial dims of PyTorch's choice of maximum."""
    out = _adaptive_sizes(x, output_size, nd, name)
    spatial = x.shape[-nd:]
    vals, flat = x, None
    for d in reversed(range(nd)):  # the last dim first: row-major scan order
        axis = x.ndim - nd + d
        v = vals.movedim(axis, -1)
        if not return_indices:
            vals = _adaptive_max_last(v, out[d]).movedim(-1, axis)
            continue
        v, i = _adaptive_max_last_indices(v, out[d])
        step = math.prod(spatial[d + 1 :])
        f = i * step if flat is None else flat.movedim(axis, -1).gather(-1, i) + i * step
        vals, flat = v.movedim(-1, axis), f.movedim(-1, axis)
    if return_indices:
        return vals, flat
    return vals


def adaptive_max_pool1d(x: Tensor, output_size, return_indices: bool = False):
    """Max over PyTorch's adaptive windows of (N, C, L) or (C, L), and with
    ``return_indices`` where each maximum is: ``F.adaptive_max_pool1d(x, 4)``."""
    return _adaptive_max_nd(x, output_size, 1, "adaptive_max_pool1d", return_indices)


def adaptive_max_pool2d(x: Tensor, output_size, return_indices: bool = False):
    """Max over PyTorch's adaptive windows (overlapping where the sizes do not
    divide), and with ``return_indices`` the flat index (h * W + w) of each
    maximum: ``F.adaptive_max_pool2d(x, (3, 3))``."""
    return _adaptive_max_nd(x, output_size, 2, "adaptive_max_pool2d", return_indices)


def adaptive_max_pool3d(x: Tensor, output_size, return_indices: bool = False):
    """Max over PyTorch's adaptive windows of (N, C, D, H, W) or (C, D, H, W),
    and with ``return_indices`` the flat index of each maximum:
    ``F.adaptive_max_pool3d(x, (2, 3, 3))``."""
    return _adaptive_max_nd(x, output_size, 3, "adaptive_max_pool3d", return_indices)


def adaptive_max_pool1d_with_indices(x: Tensor, output_size, return_indices: bool = False):
    """``adaptive_max_pool1d(..., return_indices=True)``:
    ``y, idx = F.adaptive_max_pool1d_with_indices(x, 4)``."""
    return _adaptive_max_nd(x, output_size, 1, "adaptive_max_pool1d_with_indices", True)


def adaptive_max_pool2d_with_indices(x: Tensor, output_size, return_indices: bool = False):
    """``adaptive_max_pool2d(..., return_indices=True)``:
    ``y, idx = F.adaptive_max_pool2d_with_indices(x, (3, 3))``."""
    return _adaptive_max_nd(x, output_size, 2, "adaptive_max_pool2d_with_indices", True)


def adaptive_max_pool3d_with_indices(x: Tensor, output_size, return_indices: bool = False):
    """``adaptive_max_pool3d(..., return_indices=True)``:
    ``y, idx = F.adaptive_max_pool3d_with_indices(x, 2)``."""
    return _adaptive_max_nd(x, output_size, 3, "adaptive_max_pool3d_with_indices", True)


def adaptive_avg_pool3d(x: Tensor, output_size) -> Tensor:
    """Average over PyTorch's adaptive windows of (N, C, D, H, W) or (C, D, H, W),
    one dim at a time (a box's mean is the mean of its rows' means):
    ``F.adaptive_avg_pool3d(x, 1)`` is the global average pool."""
    out = _adaptive_sizes(x, output_size, 3, "adaptive_avg_pool3d")
    y = x._float()
    for d in range(3):
        axis = x.ndim - 3 + d
        size, o = x.shape[axis], out[d]
        if size == o:
            continue
        v = y.movedim(axis, -1)
        if size % o == 0:  # equal windows: a plain mean over a reshape
            v = v.reshape(v.shape[:-1] + (o, size // o)).mean(-1)
        else:
            bins = _adaptive_bins(size, o, y)
            v = (v.unsqueeze(-2) * bins).sum(-1)
        y = v.movedim(-1, axis)
    return y


_INTERP_DIMS = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}

CUBIC_A = -0.75
"""The cubic convolution kernel's parameter PyTorch's bicubic mode uses (Keys' a)."""


def _cubic_taps(real: np.ndarray, i: int, ft):
    """PyTorch's bicubic sampling along one dim: for source positions ``real``
    (one per output), the 4 input indices each reads (clamped to ``[0, i)``)
    and their weights, from the cubic convolution kernel with ``CUBIC_A``."""
    a = ft(CUBIC_A)
    i0 = np.floor(real)
    t = (real - i0).astype(ft)

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    weights = np.stack([far(t + 1), near(t), near(1 - t), far(2 - t)], axis=1).astype(ft)
    taps = i0.astype(np.int64)[:, None] + np.arange(-1, 3)
    return np.clip(taps, 0, i - 1), weights


def _source_scale(i: int, o: int, scale, align_corners: bool, ft):
    """PyTorch's source-index step (``area_pixel_compute_scale``) in ``ft``."""
    if align_corners:
        return ft(i - 1) / ft(o - 1) if o > 1 else ft(0)
    return ft(1.0 / scale) if scale is not None and scale > 0 else ft(i) / ft(o)


def _fixed_point_taps(i: int, o: int, scale, align_corners: bool):
    """The two taps of each of ``o`` outputs along a dim of ``i`` inputs and their
    weights as integers of ``bits`` fraction bits, PyTorch's resampling of uint8
    images (Pillow's): float weights of the tent filter, normalized, scaled by
    the most bits that keep the largest one within int16, rounded."""
    step = float(_source_scale(i, o, scale, align_corners, np.float64))
    half = 0.5 if align_corners else 0.0
    first = np.zeros(o, np.int64)
    weights = np.zeros((o, 2), np.float64)
    for k in range(o):
        center = step * (k + 0.5 - half) + half
        lo = max(int(center - 0.5), 0)
        hi = min(int(center + 1.5), i)
        w = [max(0.0, 1.0 - abs(j - center + 0.5)) for j in range(lo, hi)]
        total = sum(w)
        first[k] = lo
        weights[k, : len(w)] = [v / total for v in w] if total else w
    bits = 0
    while bits < 22 and int(0.5 + weights.max() * (1 << (bits + 1))) < (1 << 15):
        bits += 1
    scaled = weights * (1 << bits)
    fixed = np.where(scaled < 0, np.trunc(scaled - 0.5), np.trunc(scaled + 0.5)).astype(np.int32)
    return first, fixed, bits


def _bilinear_uint8(x: Tensor, out: tuple, scales: tuple, align_corners: bool) -> Tensor:
    """Bilinear resizing of a uint8 image as PyTorch does it: one pass along the
    width, then one along the height, each a sum of two taps with fixed-point
    weights, rounded and clamped back to uint8 between the passes (so the
    result matches PyTorch's exactly, not a float resize rounded once)."""
    for axis in (3, 2):
        i, o = x.shape[axis], out[axis - 2]
        if i == o and scales[axis - 2] is None:
            continue
        first, fixed, bits = _fixed_point_taps(i, o, scales[axis - 2], align_corners)
        shape = (o,) + (1,) * (3 - axis)
        acc = Tensor.full((), 1 << (bits - 1), dtype=dtypes.int32, device=x.device)
        for t in range(2):
            at = Tensor(np.minimum(first + t, i - 1), device=x.device)
            w = Tensor(fixed[:, t].reshape(shape), dtype=dtypes.int32, device=x.device)
            acc = acc + x.index_select(axis, at).cast(dtypes.int32) * w
        x = (acc >> bits).clip(0, 255).cast(dtypes.uint8)
    return x


def interpolate(
    input: Tensor,  # noqa: A002 - PyTorch's names
    size=None,
    scale_factor=None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Tensor:
    """Resize the spatial dims of (N, C, *spatial) to ``size`` or by
    ``scale_factor`` with PyTorch's index rules; ``mode`` ``"nearest"``,
    ``"nearest-exact"``, ``"linear"`` (3-d), ``"bilinear"`` or ``"bicubic"``
    (4-d), ``"trilinear"`` (5-d) or ``"area"``:
    ``F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)``."""
    x = input
    modes = ("nearest", "nearest-exact", "linear", "bilinear", "bicubic", "trilinear", "area")
    if mode not in modes:
        raise UnsupportedModeError(f"interpolate: mode must be one of {modes}, got {mode!r}")
    nd = x.ndim - 2
    if not 1 <= nd <= 3:
        raise ArgumentError(
            f"interpolate: input must be (N, C, *spatial) with 1 to 3 spatial dims, got {x.shape}"
        )
    if mode in _INTERP_DIMS and _INTERP_DIMS[mode] != nd:
        raise ArgumentError(
            f"interpolate: mode {mode!r} needs a {_INTERP_DIMS[mode] + 2}-d input, got {x.shape}"
        )
    if align_corners is not None and mode not in _INTERP_DIMS:
        raise ArgumentError(
            "interpolate: align_corners can only be set with the modes 'linear', 'bilinear', "
            f"'bicubic' and 'trilinear', not {mode!r}"
        )
    if antialias:
        raise NotImplementedError("interpolate: antialias=True is not supported")
    if (size is None) == (scale_factor is None):
        raise ArgumentError("interpolate: give exactly one of size and scale_factor")
    spatial = x.shape[2:]
    if size is not None:
        out = _tuple(size, nd, "interpolate: size")
        scales: tuple = (None,) * nd
    else:
        sf = scale_factor if isinstance(scale_factor, (tuple, list)) else (scale_factor,) * nd
        if len(sf) != nd or not all(
            isinstance(f, (int, float)) and not isinstance(f, bool) and f > 0 for f in sf
        ):
            raise ArgumentError(
                f"interpolate: scale_factor must be a positive number or {nd} of them, "
                f"got {scale_factor!r}"
            )
        out = tuple(math.floor(float(s) * f) for s, f in zip(spatial, sf))
        scales = (None,) * nd if recompute_scale_factor else tuple(float(f) for f in sf)
    if any(o <= 0 for o in out):
        raise ArgumentError(f"interpolate: the output size {out} of {x.shape} must be positive")
    if mode == "area":
        if nd == 1:
            return adaptive_avg_pool1d(x, out)
        if nd == 2:
            return adaptive_avg_pool2d(x, out)
        raise ArgumentError(f"interpolate: mode 'area' needs a 3-d or 4-d input, got {x.shape}")
    if mode == "bilinear" and x.dtype == dtypes.uint8:
        return _bilinear_uint8(x, out, scales, bool(align_corners))
    if mode not in ("nearest", "nearest-exact"):
        x = x._float()
    # PyTorch computes the source positions in float (double for double inputs)
    ft = np.float64 if x.dtype == dtypes.float64 else np.float32
    for d, (i, o, sc) in enumerate(zip(spatial, out, scales)):
        axis = 2 + d
        dst = np.arange(o, dtype=ft)
        if mode == "nearest":
            if o == i:
                continue
            src = (
                np.arange(o) // 2
                if o == 2 * i
                else np.floor(dst * _source_scale(i, o, sc, False, ft))
            )
            idx = np.minimum(src.astype(np.int64), i - 1)
            x = x.index_select(axis, Tensor(idx, device=x.device))
            continue
        if mode == "nearest-exact":
            src = np.floor((dst + ft(0.5)) * _source_scale(i, o, sc, False, ft))
            idx = np.minimum(src.astype(np.int64), i - 1)
            if o != i or (idx != np.arange(o)).any():
                x = x.index_select(axis, Tensor(idx, device=x.device))
            continue
        scale = _source_scale(i, o, sc, bool(align_corners), ft)
        if mode == "bicubic":  # (no clamp of the source position at 0, as PyTorch)
            real = dst * scale if align_corners else scale * (dst + ft(0.5)) - ft(0.5)
            taps, weights = _cubic_taps(real.astype(ft), i, ft)
            shape = (o,) + (1,) * (nd - d - 1)
            terms = [
                x.index_select(axis, Tensor(taps[:, k], device=x.device))
                * Tensor(weights[:, k].reshape(shape), dtype=x.dtype, device=x.device)
                for k in range(4)
            ]
            x = terms[0] + terms[1] + terms[2] + terms[3]
            continue
        if align_corners:
            real = dst * scale
        else:
            real = np.maximum(scale * (dst + ft(0.5)) - ft(0.5), ft(0))
        i0 = real.astype(np.int64)
        i1 = i0 + (i0 < i - 1)
        lam1 = np.clip(real - i0.astype(ft), 0, 1).astype(ft)
        if o == i and (i0 == np.arange(o)).all() and not lam1.any():
            continue
        shape = (o,) + (1,) * (nd - d - 1)
        l1 = Tensor(lam1.reshape(shape), dtype=x.dtype, device=x.device)
        l0 = Tensor((1 - lam1).reshape(shape), dtype=x.dtype, device=x.device)
        a = x.index_select(axis, Tensor(i0, device=x.device))
        b = x.index_select(axis, Tensor(i1, device=x.device))
        x = a * l0 + b * l1
    if x.dtype != input.dtype and input.dtype.is_int:
        # integer images stay integers: rounded to nearest, clamped to the dtype
        # (uint8 bilinear took PyTorch's fixed-point path above)
        lo, hi = dtypes.min(input.dtype), dtypes.max(input.dtype)
        x = x.round().clip(lo, hi).cast(input.dtype)
    return x


def upsample(
    input: Tensor,  # noqa: A002 - PyTorch's names
    size=None,
    scale_factor=None,
    mode: str = "nearest",
    align_corners: bool | None = None,
) -> Tensor:
    """``interpolate`` under its older name: ``F.upsample(x, scale_factor=2)``."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size=None, scale_factor=None) -> Tensor:  # noqa: A002
    """``interpolate(mode="nearest")``: ``F.upsample_nearest(x, scale_factor=2)``."""
    return interpolate(input, size, scale_factor, "nearest")


def upsample_bilinear(input: Tensor, size=None, scale_factor=None) -> Tensor:  # noqa: A002
    """``interpolate(mode="bilinear", align_corners=True)``, as PyTorch:
    ``F.upsample_bilinear(x, scale_factor=2)``."""
    return interpolate(input, size, scale_factor, "bilinear", align_corners=True)


def pixel_shuffle(x: Tensor, upscale_factor: int) -> Tensor:
    """(*, C r^2, H, W) -> (*, C, H r, W r): ``F.pixel_shuffle(x, 2)``."""
    r = upscale_factor
    if isinstance(r, bool) or not isinstance(r, (int, np.integer)) or r <= 0:
        raise ArgumentError(f"pixel_shuffle: upscale_factor must be a positive int, got {r!r}")
    if x.ndim < 3 or x.shape[-3] % (r * r):
        raise ArgumentError(
            f"pixel_shuffle: input must be (*, C * {r * r}, H, W) (channels divisible by "
            f"upscale_factor**2), got {x.shape}"
        )
    *lead, c, h, w = x.shape
    lead, k = tuple(lead), len(lead)
    y = x.reshape(lead + (c // (r * r), r, r, h, w))
    y = y.permute(tuple(range(k)) + (k, k + 3, k + 1, k + 4, k + 2))
    return y.reshape(lead + (c // (r * r), h * r, w * r))


def pixel_unshuffle(x: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H r, W r) -> (*, C r^2, H, W), the inverse of ``pixel_shuffle``:
    ``F.pixel_unshuffle(x, 2)``."""
    r = downscale_factor
    if isinstance(r, bool) or not isinstance(r, (int, np.integer)) or r <= 0:
        raise ArgumentError(f"pixel_unshuffle: downscale_factor must be a positive int, got {r!r}")
    if x.ndim < 3 or x.shape[-2] % r or x.shape[-1] % r:
        raise ArgumentError(
            f"pixel_unshuffle: input must be (*, C, H, W) with H and W divisible by {r}, "
            f"got {x.shape}"
        )
    *lead, c, h, w = x.shape
    lead, k = tuple(lead), len(lead)
    y = x.reshape(lead + (c, h // r, r, w // r, r))
    y = y.permute(tuple(range(k)) + (k, k + 2, k + 4, k + 1, k + 3))
    return y.reshape(lead + (c * r * r, h // r, w // r))


def _unfold_geometry(x, kernel_size, dilation, padding, stride, name):
    kernel = _tuple(kernel_size, 2, f"{name}: kernel_size")
    dilation = _tuple(dilation, 2, f"{name}: dilation")
    pad = _tuple(padding, 2, f"{name}: padding")
    stride = _tuple(stride, 2, f"{name}: stride")
    if any(v <= 0 for v in kernel + dilation + stride) or any(p < 0 for p in pad):
        raise ArgumentError(
            f"{name}: kernel_size {kernel}, dilation {dilation} and stride {stride} must be "
            f"positive and padding {pad} not negative"
        )
    return kernel, dilation, pad, stride


def unfold(x: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """The sliding windows of (N, C, H, W) as columns (N, C kh kw, L) (im2col):
    ``F.unfold(x, 3, padding=1)``."""
    if x.ndim not in (3, 4):
        raise ArgumentError(f"unfold: input must be (N, C, H, W) or (C, H, W), got {x.shape}")
    kernel, dilation, pad, stride = _unfold_geometry(
        x, kernel_size, dilation, padding, stride, "unfold"
    )
    xb = x if x.ndim == 4 else x.unsqueeze(0)
    n, c, h, w = xb.shape
    out = tuple(
        (s + 2 * p - d * (k - 1) - 1) // st + 1
        for s, p, d, k, st in zip((h, w), pad, dilation, kernel, stride)
    )
    if any(o <= 0 for o in out):
        raise ArgumentError(
            f"unfold: the kernel {kernel} (dilation {dilation}) does not fit the padded input "
            f"{(h + 2 * pad[0], w + 2 * pad[1])}"
        )
    xp = xb.pad(((0, 0), (0, 0), (pad[0], pad[0]), (pad[1], pad[1])))
    cols = _window_view(xp, kernel, stride, dilation, out)
    cols = cols.reshape(n, c * kernel[0] * kernel[1], out[0] * out[1])
    return cols if x.ndim == 4 else cols.squeeze(0)


def fold(x: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Sum columns (N, C kh kw, L) back into (N, C, H, W), the adjoint of
    ``unfold`` (col2im): ``F.fold(cols, (4, 5), 2)``."""
    if x.ndim not in (2, 3):
        raise ArgumentError(
            f"fold: input must be (N, C * kh * kw, L) or (C * kh * kw, L), got {x.shape}"
        )
    kernel, dilation, pad, stride = _unfold_geometry(
        x, kernel_size, dilation, padding, stride, "fold"
    )
    size = _tuple(output_size, 2, "fold: output_size")
    xb = x if x.ndim == 3 else x.unsqueeze(0)
    n, ck, ln = xb.shape
    kk = kernel[0] * kernel[1]
    out = tuple(
        (s + 2 * p - d * (k - 1) - 1) // st + 1
        for s, p, d, k, st in zip(size, pad, dilation, kernel, stride)
    )
    if ck % kk or any(o <= 0 for o in out) or out[0] * out[1] != ln:
        raise ArgumentError(
            f"fold: input {x.shape} must have C * {kk} rows and {max(out[0], 0) * max(out[1], 0)} "
            f"blocks for output_size {size}, kernel {kernel}, dilation {dilation}, padding "
            f"{pad} and stride {stride}"
        )
    c = ck // kk
    blocks = xb.reshape(n, c, kernel[0], kernel[1], out[0], out[1])
    full = (size[0] + 2 * pad[0], size[1] + 2 * pad[1])
    acc = None
    for i, j in np.ndindex(*kernel):
        t = blocks[:, :, i, j]
        if any(st > 1 for st in stride):  # stride: zeros between the block's elements
            t = t.reshape(n, c, out[0], 1, out[1], 1)
            t = t.pad(((0, 0), (0, 0), (0, 0), (0, stride[0] - 1), (0, 0), (0, stride[1] - 1)))
            t = t.reshape(n, c, out[0] * stride[0], out[1] * stride[1])
            t = t.shrink(((0, n), (0, c), (0, (out[0] - 1) * stride[0] + 1),
                          (0, (out[1] - 1) * stride[1] + 1)))  # fmt: skip
        lo = (i * dilation[0], j * dilation[1])
        t = t.pad(
            ((0, 0), (0, 0)) + tuple((a, f - a - s) for a, f, s in zip(lo, full, t.shape[2:]))
        )
        acc = t if acc is None else acc + t
    assert acc is not None
    res = acc.shrink(((0, n), (0, c), (pad[0], pad[0] + size[0]), (pad[1], pad[1] + size[1])))
    return res if x.ndim == 3 else res.squeeze(0)


# ---------------------------------------------------------------------------
# more normalization
# ---------------------------------------------------------------------------


def instance_norm(
    x: Tensor,
    running_mean: Tensor | None = None,
    running_var: Tensor | None = None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    use_input_stats: bool = True,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalize each channel of each sample over its spatial dims (the running
    statistics, when given, are updated with the batch mean of the per-sample
    ones): ``F.instance_norm(x, weight=w, bias=b)``."""
    if x.ndim < 3:
        raise ArgumentError(f"instance_norm: input must be (N, C, *spatial), got {x.shape}")
    c = x.shape[1]
    shape = (1, c) + (1,) * (x.ndim - 2)
    for t, what in ((running_mean, "running_mean"), (running_var, "running_var"),
                    (weight, "weight"), (bias, "bias")):  # fmt: skip
        if t is not None and t.shape != (c,):
            raise ArgumentError(f"instance_norm: {what} must be ({c},), got {t.shape}")
    xf = x._float()
    axes = tuple(range(2, x.ndim))
    if use_input_stats:
        mean = xf.mean(axes, keepdim=True)
        var = xf.var(axes, keepdim=True, correction=0)
        n = math.prod(x.shape[2:])
        with no_grad():  # running statistics are state, not part of the gradient
            if running_mean is not None:
                m = mean.detach().reshape(x.shape[:2]).mean(0)
                running_mean.assign(running_mean * (1 - momentum) + m * momentum)
            if running_var is not None:
                v = var.detach().reshape(x.shape[:2]).mean(0) * (n / max(n - 1, 1))
                running_var.assign(running_var * (1 - momentum) + v * momentum)
    else:
        if running_mean is None or running_var is None:
            raise ArgumentError(
                "instance_norm: use_input_stats=False needs running_mean and running_var"
            )
        mean, var = running_mean.reshape(shape), running_var.reshape(shape)
    out = (xf - mean) * (var + eps).rsqrt()
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


@amp.float32_precision
def rms_norm(
    x: Tensor, normalized_shape, weight: Tensor | None = None, eps: float | None = None
) -> Tensor:
    """``x / sqrt(mean(x^2) + eps)`` over the last dims ``normalized_shape``
    (``eps`` None: the dtype's machine epsilon, as PyTorch):
    ``F.rms_norm(x, (64,), w)``."""
    ns = _normalized_shape(x, normalized_shape, "rms_norm")
    if weight is not None and weight.shape != ns:
        raise ArgumentError(f"rms_norm: weight must be {ns}, got {weight.shape}")
    xf = x._float()
    if eps is None:
        eps = float(np.finfo(np.float64 if xf.dtype == dtypes.float64 else np.float32).eps)
    axes = tuple(range(x.ndim - len(ns), x.ndim))
    out = xf * ((xf * xf).mean(axes, keepdim=True) + eps).rsqrt()
    return out * weight if weight is not None else out


def local_response_norm(
    x: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0
) -> Tensor:
    """Divide by ``(k + alpha * mean of x^2 over size neighbouring channels)^beta``:
    ``F.local_response_norm(x, 5)``."""
    if x.ndim < 3:
        raise ArgumentError(f"local_response_norm: input must be (N, C, *spatial), got {x.shape}")
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size <= 0:
        raise ArgumentError(f"local_response_norm: size must be a positive int, got {size!r}")
    xf = x._float()
    c = x.shape[1]
    sq = (xf * xf).pad(((0, 0), (size // 2, (size - 1) // 2)) + ((0, 0),) * (x.ndim - 2))
    full = tuple((0, s) for s in x.shape)
    total = None
    for i in range(size):
        win = sq.shrink(full[:1] + ((i, i + c),) + full[2:])
        total = win if total is None else total + win
    assert total is not None
    return xf / (total * (alpha / size) + k) ** beta


# ---------------------------------------------------------------------------
# more activations and dropout
# ---------------------------------------------------------------------------


def threshold(x: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``x`` where ``x > threshold``, else ``value``: ``F.threshold(x, 0.1, 0.0)``."""
    return _maybe_inplace(x, (x > threshold).where(x, value), inplace, "threshold")


def prelu(x: Tensor, weight: Tensor) -> Tensor:
    """``max(0, x) + weight * min(0, x)``, ``weight`` one slope (0-d or one
    element) or one per channel (dim 1): ``F.prelu(x, a)``."""
    if weight.ndim > 1:
        raise ArgumentError(f"prelu: weight must be 0-d or 1-d, got {weight.shape}")
    if weight.ndim == 0:
        return (x > 0).where(x, x * weight)
    c = x.shape[1] if x.ndim >= 2 else (x.shape[0] if x.ndim else 1)
    if weight.shape[0] not in (1, c):
        raise ArgumentError(
            f"prelu: weight {weight.shape} must have 1 or {c} (the input {x.shape}'s channels) "
            "entries"
        )
    if weight.shape[0] > 1 and x.ndim >= 2:
        weight = weight.reshape((1, c) + (1,) * (x.ndim - 2))
    elif weight.shape[0] == 1:
        weight = weight.reshape(())
    return (x > 0).where(x, x * weight)


def hardshrink(x: Tensor, lambd: float = 0.5) -> Tensor:
    """``x`` where ``|x| > lambd``, else 0: ``F.hardshrink(x)``."""
    return (x.abs() > lambd).where(x, 0)


def softshrink(x: Tensor, lambd: float = 0.5) -> Tensor:
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0:
    ``F.softshrink(x)``."""
    if lambd < 0:
        raise ArgumentError(f"softshrink: lambd must be >= 0, got {lambd}")
    return (x > lambd).where(x - lambd, (x < -lambd).where(x + lambd, 0))


def tanhshrink(x: Tensor) -> Tensor:
    """``x - tanh(x)``: ``F.tanhshrink(x)``."""
    return x - x.tanh()


def _channel_dropout(
    x: Tensor, p: float, training: bool, nd: int, name: str, inplace: bool = False
) -> Tensor:
    if not 0 <= p <= 1:
        raise ArgumentError(f"{name}: p must be in [0, 1], got {p}")
    if x.ndim not in (nd + 1, nd + 2):
        raise ArgumentError(
            f"{name}: input must be (N, C, {_SPATIAL[nd]}) or (C, {_SPATIAL[nd]}), got {x.shape}"
        )
    if not training or p == 0:
        return x
    if p == 1:
        return _maybe_inplace(x, x * 0, inplace, name)
    lead = x.ndim - nd  # the batch and channel dims: one draw per channel
    shape = x.shape[:lead] + (1,) * nd
    keep = _random(lambda g: g.random(shape) >= p, device=x.device)
    return _maybe_inplace(x, keep.where(x * (1 / (1 - p)), 0), inplace, name)


def dropout1d(x: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, L) or (C, L) with probability ``p``, scale
    the rest by ``1 / (1 - p)``: ``F.dropout1d(x, 0.2)``."""
    return _channel_dropout(x, p, training, 1, "dropout1d", inplace)


def dropout2d(x: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, H, W) or (C, H, W) with probability ``p``,
    scale the rest by ``1 / (1 - p)``: ``F.dropout2d(x, 0.2)``."""
    return _channel_dropout(x, p, training, 2, "dropout2d", inplace)


def dropout3d(x: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W): ``F.dropout3d(x, 0.2)``."""
    return _channel_dropout(x, p, training, 3, "dropout3d", inplace)


def alpha_dropout(x: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False):
    """Dropout that keeps SELU's zero mean and unit variance: dropped elements
    become SELU's negative saturation, then all are scaled and shifted (the
    identity unless ``training``, PyTorch's default False):
    ``F.alpha_dropout(x, 0.1, training=True)``."""
    if not 0 <= p <= 1:
        raise ArgumentError(f"alpha_dropout: p must be in [0, 1], got {p}")
    return _alpha_dropout(x, p, training, inplace, x.shape, "alpha_dropout")


def _alpha_dropout(x: Tensor, p: float, training: bool, inplace: bool, shape, name: str):
    """Alpha dropout with one draw per element of ``shape`` (broadcast to ``x``)."""
    if not training or p == 0:
        return x
    if p == 1:
        return _maybe_inplace(x, x * 0, inplace, name)
    alpha = 1.7580993408473766  # -selu's scale * alpha
    a = 1 / math.sqrt((alpha * alpha * p + 1) * (1 - p))
    keep = _random(lambda g: g.random(shape) >= p, device=x.device)
    return _maybe_inplace(x, keep.where(x * a, -alpha * a) + alpha * a * p, inplace, name)


# ---------------------------------------------------------------------------
# distances and more losses
# ---------------------------------------------------------------------------


def pairwise_distance(
    x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False
) -> Tensor:
    """``||x1 - x2 + eps||_p`` along the last dim (inputs broadcast):
    ``F.pairwise_distance(a, b)``."""
    a, b = x1._float()._operands(x2)
    if a.ndim == 0:
        raise ArgumentError("pairwise_distance: inputs must have at least 1 dim")
    return (a - b + eps).norm(p, dim=-1, keepdim=keepdim)


def _same_shape(name: str, **ts: Tensor) -> None:
    shapes = {k: t.shape for k, t in ts.items()}
    if len(set(shapes.values())) > 1:
        raise ArgumentError(
            f"{name}: " + ", ".join(f"{k} {s}" for k, s in shapes.items()) + " must match"
        )


def margin_ranking_loss(
    input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0, reduction: str = "mean"
) -> Tensor:
    """``max(0, -target (input1 - input2) + margin)``, target in {1, -1}:
    ``F.margin_ranking_loss(a, b, y, margin=0.5)``."""
    _same_shape("margin_ranking_loss", input1=input1, input2=input2, target=target)
    loss = (-target * (input1 - input2) + margin)._float().relu()
    return _reduce(loss, reduction, "margin_ranking_loss")


def hinge_embedding_loss(
    input: Tensor,  # noqa: A002 - PyTorch's names
    target: Tensor,
    margin: float = 1.0,
    reduction: str = "mean",
) -> Tensor:
    """``x`` where target is 1, ``max(0, margin - x)`` where it is -1:
    ``F.hinge_embedding_loss(d, y)``."""
    x = input._float()
    zero = x * 0
    loss = (target != 1).where((margin - x).relu(), zero) + (target != -1).where(x, zero)
    return _reduce(loss, reduction, "hinge_embedding_loss")


def _deprecated_reduction(name: str, size_average, reduce) -> None:
    if size_average is not None or reduce is not None:
        raise ArgumentError(f"{name}: size_average and reduce are deprecated, use reduction=")


def poisson_nll_loss(
    input: Tensor,  # noqa: A002 - PyTorch's names
    target: Tensor,
    log_input: bool = True,
    full: bool = False,
    size_average=None,
    eps: float = 1e-8,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """Poisson negative log-likelihood: ``exp(input) - target * input`` for log
    rates, ``input - target * log(input + eps)`` for rates; ``full`` adds
    Stirling's term where target > 1: ``F.poisson_nll_loss(log_rate, counts)``."""
    _deprecated_reduction("poisson_nll_loss", size_average, reduce)
    x, t = input._float(), target._float()
    loss = x.exp() - t * x if log_input else x - t * (x + eps).log()
    if full:
        ts = t.maximum(1)  # the term is 0 where target <= 1; keep log's input positive
        stirling = ts * ts.log() - ts + 0.5 * (2 * math.pi * ts).log()
        loss = loss + (t > 1).where(stirling, 0)
    return _reduce(loss, reduction, "poisson_nll_loss")


def gaussian_nll_loss(
    input: Tensor,  # noqa: A002 - PyTorch's names
    target: Tensor,
    var: Tensor,
    full: bool = False,
    eps: float = 1e-6,
    reduction: str = "mean",
) -> Tensor:
    """Gaussian negative log-likelihood ``0.5 (log var + (input - target)^2 / var)``
    (var clamped at ``eps``, the clamp passing gradients through, as PyTorch;
    ``var`` may omit the last dim, or have size 1 in one dim, as PyTorch):
    ``F.gaussian_nll_loss(mu, y, var)``."""
    if isinstance(var, (int, float)):
        var = Tensor.full(input.shape, float(var), input._float().dtype, input.device)
    if var.shape != input.shape:
        if input.shape[:-1] == var.shape:
            var = var.unsqueeze(-1)
        elif not (
            var.ndim == input.ndim and sum(v for i, v in zip(input.shape, var.shape) if i != v) == 1
        ):
            raise ArgumentError(
                f"gaussian_nll_loss: var {var.shape} must be the input's shape {input.shape}, "
                "it without the last dim, or it with size 1 in one dim"
            )
    if var.node.realized and bool((var < 0).any().item()):
        raise ArgumentError("gaussian_nll_loss: var has negative entries")
    if eps < 0:
        raise ArgumentError(f"gaussian_nll_loss: eps must be >= 0, got {eps}")
    v = var._float()
    v = v + (v.maximum(eps) - v).detach()  # clamped value, identity gradient
    d = input._float() - target
    loss = 0.5 * (v.log() + d * d / v)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction, "gaussian_nll_loss")


@amp.float32_precision
def cosine_embedding_loss(
    input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0, reduction: str = "mean"
) -> Tensor:
    """``1 - cos(x1, x2)`` where target is 1, ``max(0, cos - margin)`` where it
    is -1 (cosine along dim 1, or dim 0 of 1-d inputs):
    ``F.cosine_embedding_loss(a, b, y)``."""
    if input1.shape != input2.shape or input1.ndim not in (1, 2):
        raise ArgumentError(
            f"cosine_embedding_loss: inputs must be (N, D) or (D,) of one shape, got "
            f"{input1.shape} and {input2.shape}"
        )
    if target.shape != input1.shape[:-1]:
        raise ArgumentError(
            f"cosine_embedding_loss: target must be {input1.shape[:-1]}, got {target.shape}"
        )
    a, b = input1._float(), input2._float()
    eps = 1e-12  # PyTorch's: added to each squared magnitude
    cos = (a * b).sum(-1) / (((a * a).sum(-1) + eps) * ((b * b).sum(-1) + eps)).sqrt()
    zero = cos * 0
    loss = (target == 1).where(1 - cos, zero) + (target == -1).where((cos - margin).relu(), zero)
    return _reduce(loss, reduction, "cosine_embedding_loss")


def soft_margin_loss(
    input: Tensor,  # noqa: A002 - PyTorch's names
    target: Tensor,
    reduction: str = "mean",
) -> Tensor:
    """``log(1 + exp(-target * input))``, target in {1, -1}:
    ``F.soft_margin_loss(x, y)``."""
    _same_shape("soft_margin_loss", input=input, target=target)
    return _reduce(-(target * input._float()).logsigmoid(), reduction, "soft_margin_loss")


def multilabel_soft_margin_loss(
    input: Tensor,  # noqa: A002 - PyTorch's names
    target: Tensor,
    weight: Tensor | None = None,
    reduction: str = "mean",
) -> Tensor:
    """Per-class binary cross entropy of logits, averaged over the classes
    (the last dim): ``F.multilabel_soft_margin_loss(logits, multi_hot)``."""
    _same_shape("multilabel_soft_margin_loss", input=input, target=target)
    x = input._float()
    loss = -(target * x.logsigmoid() + (1 - target) * (-x).logsigmoid())
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(-1) * (1 / x.shape[-1])
    return _reduce(loss, reduction, "multilabel_soft_margin_loss")


def triplet_margin_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    margin: float = 1.0,
    p: float = 2,
    eps: float = 1e-6,
    swap: bool = False,
    reduction: str = "mean",
) -> Tensor:
    """``max(d(a, p) - d(a, n) + margin, 0)`` with ``pairwise_distance``;
    ``swap`` uses the smaller of d(a, n) and d(p, n):
    ``F.triplet_margin_loss(a, pos, neg)``."""
    if not anchor.ndim == positive.ndim == negative.ndim or anchor.ndim not in (1, 2):
        raise ArgumentError(
            f"triplet_margin_loss: anchor {anchor.shape}, positive {positive.shape} and "
            f"negative {negative.shape} must all be (N, D) or (D,)"
        )
    if margin <= 0:
        raise ArgumentError(f"triplet_margin_loss: margin must be > 0, got {margin}")
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = d_neg.minimum(pairwise_distance(positive, negative, p, eps))
    return _reduce((d_pos - d_neg + margin).relu(), reduction, "triplet_margin_loss")


def _check_reduction(reduction, name: str) -> None:
    """PyTorch checks ``reduction`` before the inputs: one of its three names."""
    if reduction not in ("none", "mean", "sum"):
        raise ArgumentError(f"{name}: reduction must be 'none', 'mean' or 'sum', got {reduction!r}")


def _margin_frames(input: Tensor, name: str) -> tuple[int, int]:  # noqa: A002
    """(samples, classes) of a margin loss's scores (N, C), (C,) or a 0-d score
    (one class), non-empty but for the batch (PyTorch's)."""
    if input.ndim > 2 or (input.ndim and input.shape[-1] == 0):
        raise ArgumentError(
            f"{name}: input must be a non-empty (C,) or (N, C) (or a 0-d score), got {input.shape}"
        )
    return (input.shape[0] if input.ndim == 2 else 1), (input.shape[-1] if input.ndim else 1)


def multi_margin_loss(
    input: Tensor,  # noqa: A002 - PyTorch's names
    target: Tensor,
    p: int = 1,
    margin: float = 1.0,
    weight: Tensor | None = None,
    reduction: str = "mean",
) -> Tensor:
    """Multi-class hinge loss: ``sum_{i != y} max(0, margin - x[y] + x[i])^p / C``
    for scores (N, C), (C,) or one 0-d score and class indices ``y`` ((N,), or
    one: () or (1,)): ``F.multi_margin_loss(scores, labels)``."""
    name = "multi_margin_loss"
    if p not in (1, 2):
        raise ArgumentError(f"{name}: p must be 1 or 2, got {p!r}")
    if weight is not None and weight.ndim != 1:
        raise ArgumentError(f"{name}: weight must be one-dimensional, got {weight.shape}")
    _check_reduction(reduction, name)
    n, c = _margin_frames(input, name)
    if target.ndim > 1 or target.numel() != n:
        raise ArgumentError(
            f"{name}: input must be (N, C) or (C,) and target (N,) or (), got {input.shape} "
            f"and {target.shape}: the target must hold {n} class index(es)"
        )
    if weight is not None and weight.shape != (c,):
        raise ArgumentError(f"{name}: weight must be ({c},), got {weight.shape}")
    if target.dtype.is_float or target.dtype.is_bool:
        raise DTypeError(f"{name}: target must hold class indices, got {target.dtype.name}")
    x = input._float().reshape(n, c)
    hit = target.reshape(n, 1).cast(dtypes.int64) == Tensor.arange(c, device=x.device)
    xy = hit.where(x, 0).sum(-1, keepdim=True)
    h = (margin - xy + x).relu()
    if p == 2:
        h = h * h
    if weight is not None:
        h = h * hit.where(weight, 0).sum(-1, keepdim=True)
    loss = hit.where(0, h).sum(-1) * (1 / c)
    if reduction == "none" and target.ndim == 0:  # PyTorch's: the target's shape
        loss = loss.reshape(())
    return _reduce(loss, reduction, name)


# ---------------------------------------------------------------------------
# sampling grids
# ---------------------------------------------------------------------------


def _grid_unnormalize(c: Tensor, size: int, align_corners: bool) -> Tensor:
    """A grid coordinate in [-1, 1] as a pixel position (PyTorch's rule)."""
    if align_corners:
        return (c + 1) * ((size - 1) / 2)
    return ((c + 1) * size - 1) * 0.5


def _grid_reflect(v: Tensor, twice_low: int, twice_high: int) -> tuple[Tensor, Tensor]:
    """``v`` reflected off the bounds ``twice_low / 2`` and ``twice_high / 2``
    until it lies between them (PyTorch's ``reflect_coordinates``), and the
    gradient of that: +-1 by the parity of the reflections (+1 at the bound)."""
    if twice_low == twice_high:
        return v * 0, v * 0
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    d = v - low
    below = d < 0
    d = d.abs()
    # d mod span by one division: grid positions are a few spans from the input at
    # most, so the quotient is small and exact (an exact fmod is a long expansion,
    # and grid_sample reads it per tap); the clip keeps a rounding inside [0, span]
    flips = (d / span).floor()
    extra = (d - flips * span).clip(0, span)
    odd = (flips - 2 * (flips * 0.5).floor()) != 0
    value = odd.where(span - extra + low, extra + low)
    return value, below.where(-1.0, 1.0) * odd.where(-1.0, 1.0)


def _grid_pad(c: Tensor, size: int, padding_mode: str, align_corners: bool) -> Tensor:
    """Pixel positions moved inside the input by ``padding_mode`` (``"zeros"``
    leaves them: the reads outside give 0), with PyTorch's gradient (0 at and
    beyond the borders, +-1 through reflections). The positions are computed
    once (a small buffer) from the detached ones; the gradient is put back by
    ``(c - c.detach()) * multiplier``."""
    if padding_mode == "zeros":
        return c
    v = c.detach()
    mult = v * 0 + 1
    if padding_mode == "reflection":
        if align_corners:
            v, mult = _grid_reflect(v, 0, 2 * (size - 1))
        else:
            v, mult = _grid_reflect(v, -1, 2 * size - 1)
    inside = (v > 0) & (v < size - 1)  # the borders count as outside
    v = v.clip(0, size - 1).contiguous()
    mult = inside.where(mult, 0).contiguous()
    return (mult != 0).where(v + (c - c.detach()) * mult, v)


_GRID_MODES = ("bilinear", "nearest", "bicubic")
_GRID_PADDING = ("zeros", "border", "reflection")


def grid_sample(
    input: Tensor,  # noqa: A002 - PyTorch's names
    grid: Tensor,
    mode: str = "bilinear",
    padding_mode: str = "zeros",
    align_corners: bool | None = None,
) -> Tensor:
    """Sample (N, C, H, W) at the positions ``grid`` (N, Ho, Wo, 2) holds, as
    (x, y) in [-1, 1] ((N, C, D, H, W) with grid (N, Do, Ho, Wo, 3) as (x, y, z));
    ``mode`` ``"bilinear"``, ``"nearest"`` or ``"bicubic"`` (4-d), ``padding_mode``
    ``"zeros"``, ``"border"`` or ``"reflection"``; differentiable in the input and
    (but for nearest) the grid. Each tap is a gather at computed indices:
    ``F.grid_sample(img, F.affine_grid(theta, img.shape), align_corners=False)``."""
    x = input
    nd = x.ndim - 2
    if nd not in (2, 3):
        raise ArgumentError(
            f"grid_sample: input must be (N, C, H, W) or (N, C, D, H, W), got {x.shape}"
        )
    if grid.ndim != nd + 2 or grid.shape[0] != x.shape[0] or grid.shape[-1] != nd:
        raise ArgumentError(
            f"grid_sample: grid must be (N, {_SPATIAL[nd].replace(', ', 'o, ')}o, {nd}) with "
            f"the input {x.shape}'s N = {x.shape[0]}, got {grid.shape}"
        )
    if mode not in _GRID_MODES:
        raise ArgumentError(f"grid_sample: mode must be one of {_GRID_MODES}, got {mode!r}")
    if mode == "bicubic" and nd != 2:
        raise ArgumentError(f"grid_sample: mode 'bicubic' needs a 4-d input, got {x.shape}")
    if padding_mode not in _GRID_PADDING:
        raise ArgumentError(
            f"grid_sample: padding_mode must be one of {_GRID_PADDING}, got {padding_mode!r}"
        )
    if not x.dtype.is_float or not grid.dtype.is_float:
        raise TypeError(
            f"grid_sample: input and grid must be floating point, got {x.dtype.name} and "
            f"{grid.dtype.name}"
        )
    align = bool(align_corners)
    dt = dtypes.promote(x.dtype, grid.dtype)
    n, c = x.shape[:2]
    spatial, out = x.shape[2:], grid.shape[1:-1]
    npos = math.prod(out)
    g = grid.cast(dt).reshape(n, npos, nd)
    flat_in = x.cast(dt).reshape(n, c, math.prod(spatial))
    strides = [math.prod(spatial[d + 1 :]) for d in range(nd)]
    # pixel positions per spatial dim (the grid's last entry is x, the last dim)
    pos = [_grid_unnormalize(g[:, :, nd - 1 - d], spatial[d], align) for d in range(nd)]

    def sample(taps: list[Tensor], weights: list[Tensor] | None) -> Tensor:
        """The sum over the taps, per dim ``d`` the integer-valued float positions
        ``taps[d]`` (n, P, K_d) it reads (0 outside the input) and their weights
        (n, P, K_d), the taps of the dims combined by broadcasting: one gather
        reads every tap."""
        ks = [t.shape[-1] for t in taps]
        flat = inside = None
        for d, (q, size, step) in enumerate(zip(taps, spatial, strides)):
            q = q.reshape((n, npos) + tuple(ks[d] if j == d else 1 for j in range(nd)))
            ok = (q >= 0) & (q <= size - 1)
            i = q.clip(0, size - 1).cast(dtypes.int64) * step
            flat = i if flat is None else flat + i
            inside = ok if inside is None else inside & ok
        assert flat is not None and inside is not None
        k = math.prod(ks)
        full = (n, npos) + tuple(ks)
        # the taps' positions and validity: computed once, small buffers
        index = flat._broadcast_to(full).reshape(n, 1, npos * k).contiguous()
        ok = inside._broadcast_to(full).reshape(n, 1, npos, k).contiguous()
        vals = flat_in.gather(2, index.expand(n, c, npos * k)).reshape(n, c, npos, k)
        vals = ok.where(vals, 0)
        if weights is None:
            return vals.sum(-1)
        w = None
        for d, wd in enumerate(weights):
            wd = wd.reshape((n, npos) + tuple(ks[d] if j == d else 1 for j in range(nd)))
            w = wd if w is None else w * wd
        assert w is not None
        return (vals * w._broadcast_to(full).reshape(n, 1, npos, k)).sum(-1)

    def steps(*v: float) -> Tensor:
        return Tensor(np.array(v, dt.np), device=x.device)

    if mode == "nearest":
        coords = [_grid_pad(p, s, padding_mode, align).detach() for p, s in zip(pos, spatial)]
        res = sample([q.round().unsqueeze(-1) for q in coords], None)
        res = res + _zero_gradient(grid, dt)  # the grid's gradient: zeros, as PyTorch's
    elif mode == "bilinear":
        coords = [_grid_pad(p, s, padding_mode, align) for p, s in zip(pos, spatial)]
        base = [q.detach().floor() for q in coords]
        taps = [b.unsqueeze(-1) + steps(0, 1) for b in base]
        # the corners' weights along each dim: 1 - frac and frac
        weights = [(q - b).unsqueeze(-1) * steps(-1, 1) + steps(1, 0) for q, b in zip(coords, base)]
        res = sample(taps, weights)
    else:  # bicubic: 4 x 4 taps, each tap moved inside by padding_mode
        base = [q.detach().floor() for q in pos]
        taps = []
        for b, size in zip(base, spatial):
            t = _grid_pad(b.unsqueeze(-1) + steps(-1, 0, 1, 2), size, padding_mode, align)
            taps.append(t.detach().floor())
        weights = [_cubic_coefficients((q - b).unsqueeze(-1) - steps(-1, 0, 1, 2))
                   for q, b in zip(pos, base)]  # fmt: skip
        res = sample(taps, weights)
    return res.reshape((n, c) + out)


def _cubic_coefficients(d: Tensor) -> Tensor:
    """Keys' cubic convolution weights (A = -0.75, PyTorch's) of taps at signed
    distances ``d`` (within 2) from the sampled position."""
    a = -0.75
    v = d.abs()
    near = ((a + 2) * v - (a + 3)) * v * v + 1  # |distance| <= 1
    far = ((a * v - 5 * a) * v + 8 * a) * v - 4 * a  # 1 < |distance| < 2
    return (v <= 1).where(near, far)


def affine_grid(theta: Tensor, size, align_corners: bool | None = None) -> Tensor:
    """The sampling grid of the affine maps ``theta`` (N, 2, 3) for an output of
    ``size`` (N, C, H, W) (or (N, 3, 4) and (N, C, D, H, W)): (N, H, W, 2) of
    ``theta @ (x, y, 1)`` over the output's normalized positions, differentiable
    in ``theta``: ``F.grid_sample(x, F.affine_grid(theta, x.shape))``."""
    size = tuple(int(s) for s in size)
    if len(size) not in (4, 5):
        raise ArgumentError(
            f"affine_grid: size must be (N, C, H, W) or (N, C, D, H, W), got {size}"
        )
    nd = len(size) - 2
    if any(s <= 0 for s in size):
        raise ArgumentError(f"affine_grid: size must be positive, got {size}")
    if theta.shape != (size[0], nd, nd + 1):
        raise ArgumentError(
            f"affine_grid: theta must be ({size[0]}, {nd}, {nd + 1}) for size {size}, got "
            f"{theta.shape}"
        )
    if not theta.dtype.is_float:
        raise TypeError(f"affine_grid: theta must be floating point, got {theta.dtype.name}")
    ft = np.float64 if theta.dtype == dtypes.float64 else np.float32

    def steps(s: int) -> np.ndarray:
        if s <= 1:
            return np.zeros(1, ft)
        v = np.linspace(-1, 1, s, dtype=ft)
        return v if align_corners else v * ft(s - 1) / ft(s)  # PyTorch's two roundings

    axes = [steps(s) for s in reversed(size[2:])]  # x (the last dim) first
    mesh = list(np.meshgrid(*axes[::-1], indexing="ij"))[::-1]
    base = np.stack(mesh + [np.ones_like(mesh[0])], -1).reshape(1, -1, nd + 1)
    b = Tensor(base, dtype=theta.dtype, device=theta.device)
    grid = (b.unsqueeze(-1) * theta.transpose(1, 2).unsqueeze(1)).sum(2)
    return grid.reshape((size[0],) + size[2:] + (nd,))


# ---------------------------------------------------------------------------
# more pooling
# ---------------------------------------------------------------------------


def max_pool1d_with_indices(
    x: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> tuple[Tensor, Tensor]:
    """``max_pool1d(..., return_indices=True)``: ``y, idx = F.max_pool1d_with_indices(x, 2)``."""
    return _max_pool(
        x, kernel_size, stride, padding, dilation, ceil_mode, 1, "max_pool1d_with_indices", True
    )


def max_pool2d_with_indices(
    x: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> tuple[Tensor, Tensor]:
    """``max_pool2d(..., return_indices=True)``: the maxima and their flat
    indices (h * W + w): ``y, idx = F.max_pool2d_with_indices(x, 2)``."""
    return _max_pool(
        x, kernel_size, stride, padding, dilation, ceil_mode, 2, "max_pool2d_with_indices", True
    )


def max_pool3d_with_indices(
    x: Tensor,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> tuple[Tensor, Tensor]:
    """``max_pool3d(..., return_indices=True)``: ``y, idx = F.max_pool3d_with_indices(x, 2)``."""
    return _max_pool(
        x, kernel_size, stride, padding, dilation, ceil_mode, 3, "max_pool3d_with_indices", True
    )


def _fractional_starts(u: Tensor, size: int, out: int, k: int) -> Tensor:
    """PyTorch's pseudo-random pooling regions along one dim: for the samples
    ``u`` (N, C) in [0, 1), the (N, C, out) int64 window starts
    ``floor((i + u) * alpha) - floor(u * alpha)`` with ``alpha = (size - k) /
    (out - 1)``, the last one ``size - k``, computed in the samples' float
    dtype as PyTorch does."""
    last = Tensor.full(u.shape + (1,), size - k, dtype=dtypes.int64, device=u.device)
    if out == 1:
        return last
    dt = u.dtype
    alpha = float(np.asarray(size - k, dt.host) / np.asarray(out - 1, dt.host))  # in dt
    steps = Tensor.arange(out - 1, device=u.device).cast(dt)
    ends = ((steps + u.unsqueeze(-1)) * alpha).floor()
    first = (u * alpha).floor().unsqueeze(-1)
    return (ends - first).cast(dtypes.int64).cat(last, dim=-1)


def _fractional_max_pool(
    x, kernel_size, output_size, output_ratio, return_indices, samples, nd: int, name: str
):
    """Max over PyTorch's fractional windows (Graham's fractional max pooling)
    of (N, C, *spatial) or (C, *spatial): the window of output i along a dim
    starts at :func:`_fractional_starts` of that dim's sample (2-d: sample 0
    is W's, 1 is H's; 3-d: 0, 1, 2 are T's, H's, W's, as PyTorch). Where each
    maximum is (the first in scan order, a NaN the last) is found one dim at a
    time (the last first: the maximum of a box is the maximum of its rows'
    maxima) from the detached input; the result gathers the input there, so
    the gradient goes to those places."""
    sp = _SPATIAL[nd]
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}: input must be a Tensor, got {type(x).__name__}")
    if x.ndim not in (nd + 1, nd + 2):
        raise ArgumentError(f"{name}: input must be (N, C, {sp}) or (C, {sp}), got {x.shape}")
    if not x.dtype.is_float:
        raise DTypeError(f"{name}: input must be floating point, got {x.dtype.name}")
    kernel = _tuple(kernel_size, nd, f"{name}: kernel_size")
    if any(k <= 0 for k in kernel):
        raise ArgumentError(f"{name}: kernel_size must be positive, got {kernel_size!r}")
    spatial = x.shape[-nd:]
    if output_size is not None:
        out = _tuple(output_size, nd, f"{name}: output_size")
    elif output_ratio is not None:
        ratio = tuple(output_ratio) if isinstance(output_ratio, (tuple, list)) else (output_ratio,)
        ratio = ratio * nd if len(ratio) == 1 else ratio
        if len(ratio) != nd or not all(
            isinstance(v, (int, float, np.number)) and not isinstance(v, bool) for v in ratio
        ):
            raise ArgumentError(f"{name}: output_ratio must be {nd} numbers, got {output_ratio!r}")
        out = tuple(int(s * float(v)) for s, v in zip(spatial, ratio))
    else:
        raise ArgumentError(f"{name} requires specifying either an output_size or an output_ratio")
    for s, k, o in zip(spatial, kernel, out):
        if o <= 0 or o + k - 1 > s:
            raise ArgumentError(
                f"{name}: output size {out} with kernel {kernel} does not fit the input's "
                f"spatial size {tuple(spatial)} (each output must be positive and "
                f"output + kernel - 1 at most the input)"
            )
    batched = x.ndim == nd + 2
    xb = x if batched else x.unsqueeze(0)
    n, c = xb.shape[:2]
    if samples is None:
        samples = Tensor.rand(n, c, nd, dtype=x.dtype, device=x.device)
    elif not isinstance(samples, Tensor):
        raise TypeError(f"{name}: _random_samples must be a Tensor, got {type(samples).__name__}")
    elif samples.shape != (n, c, nd):
        raise ArgumentError(
            f"{name}: _random_samples must be (N, C, {nd}) = {(n, c, nd)} for the input "
            f"{x.shape}, got {samples.shape}"
        )
    elif not samples.dtype.is_float:
        raise DTypeError(f"{name}: _random_samples must be floating point, got {samples.dtype}")
    u = samples.detach().cast(x.dtype)
    which = (1, 0) if nd == 2 else (0, 1, 2)  # the sample of each spatial dim
    with no_grad():
        vals, flat = xb.detach(), None
        for d in reversed(range(nd)):  # the last dim first: row-major scan order
            axis = 2 + d
            starts = _fractional_starts(u[..., which[d]], spatial[d], out[d], kernel[d])
            v = vals.movedim(axis, -1)
            lead = (n, c) + (1,) * (nd - 1)
            best = at = None
            for j in range(kernel[d]):
                pos = (starts + j).reshape(lead + (out[d],)).expand(*v.shape[:-1], out[d])
                w = v.gather(-1, pos)
                if best is None:
                    best, at = w, pos
                    continue
                take = (w > best) | w.isnan()
                best, at = take.where(w, best), take.where(pos, at)
            step = math.prod(spatial[d + 1 :])
            f = at * step if flat is None else flat.movedim(axis, -1).gather(-1, at) + at * step
            vals, flat = best.movedim(-1, axis), f.movedim(-1, axis)
        flat = flat.contiguous()
    res = xb.reshape(n, c, -1).gather(-1, flat.reshape(n, c, -1)).reshape(flat.shape)
    if not batched:
        res, flat = res.squeeze(0), flat.squeeze(0)
    return (res, flat) if return_indices else res


def fractional_max_pool2d(
    input: Tensor,  # noqa: A002 - PyTorch's names
    kernel_size,
    output_size=None,
    output_ratio=None,
    return_indices: bool = False,
    _random_samples: Tensor | None = None,
):
    """Fractional max pooling of (N, C, H, W) or (C, H, W): the max over
    ``kernel_size`` windows at PyTorch's pseudo-random starts, from
    ``_random_samples`` (N, C, 2) in [0, 1) (drawn from ``mlfuse.manual_seed``'s
    generator when not given), to ``output_size`` or ``output_ratio`` times the
    input's size; with ``return_indices`` also the flat index (h * W + w) of
    each maximum: ``F.fractional_max_pool2d(x, 3, output_ratio=0.5)``."""
    return _fractional_max_pool(
        input, kernel_size, output_size, output_ratio, return_indices, _random_samples, 2,
        "fractional_max_pool2d",
    )  # fmt: skip


def fractional_max_pool3d(
    input: Tensor,  # noqa: A002 - PyTorch's names
    kernel_size,
    output_size=None,
    output_ratio=None,
    return_indices: bool = False,
    _random_samples: Tensor | None = None,
):
    """Fractional max pooling of (N, C, T, H, W) or (C, T, H, W), with
    ``_random_samples`` (N, C, 3): ``F.fractional_max_pool3d(x, 2, output_size=(4, 5, 6))``."""
    return _fractional_max_pool(
        input, kernel_size, output_size, output_ratio, return_indices, _random_samples, 3,
        "fractional_max_pool3d",
    )  # fmt: skip


def fractional_max_pool2d_with_indices(
    input: Tensor,  # noqa: A002 - PyTorch's names
    kernel_size,
    output_size=None,
    output_ratio=None,
    return_indices: bool = False,
    _random_samples: Tensor | None = None,
) -> tuple[Tensor, Tensor]:
    """``fractional_max_pool2d(..., return_indices=True)``:
    ``y, idx = F.fractional_max_pool2d_with_indices(x, 2, output_size=5)``."""
    return _fractional_max_pool(
        input, kernel_size, output_size, output_ratio, True, _random_samples, 2,
        "fractional_max_pool2d_with_indices",
    )  # fmt: skip


def fractional_max_pool3d_with_indices(
    input: Tensor,  # noqa: A002 - PyTorch's names
    kernel_size,
    output_size=None,
    output_ratio=None,
    return_indices: bool = False,
    _random_samples: Tensor | None = None,
) -> tuple[Tensor, Tensor]:
    """``fractional_max_pool3d(..., return_indices=True)``:
    ``y, idx = F.fractional_max_pool3d_with_indices(x, 2, output_ratio=0.5)``."""
    return _fractional_max_pool(
        input, kernel_size, output_size, output_ratio, True, _random_samples, 3,
        "fractional_max_pool3d_with_indices",
    )  # fmt: skip


def _lp_pool(x: Tensor, norm_type, kernel_size, stride, ceil_mode, nd: int, name: str) -> Tensor:
    if isinstance(norm_type, bool) or not isinstance(norm_type, (int, float, np.number)):
        raise ArgumentError(f"{name}: norm_type must be a number, got {norm_type!r}")
    if not 0 < norm_type < math.inf:
        raise ArgumentError(f"{name}: norm_type must be positive and finite, got {norm_type}")
    kernel = _tuple(kernel_size, nd, f"{name}: kernel_size", True)
    xf = x._float()
    powered = xf * xf if norm_type == 2 else xf**norm_type
    mean = _avg_pool(powered, kernel, stride, 0, ceil_mode, True, None, nd, name)
    # PyTorch's: the window mean times the kernel's size (the sum, but for the
    # windows that ceil_mode cuts), negative sums (odd p) kept signed
    total = (mean.sign() * mean.abs().relu()) * math.prod(kernel)
    return total ** (1.0 / norm_type)


def lp_pool1d(x: Tensor, norm_type: float, kernel_size, stride=None, ceil_mode=False) -> Tensor:
    """The p-norm of each window of (N, C, L) or (C, L):
    ``(sum x^p)^(1/p)``: ``F.lp_pool1d(x, 2, 3, stride=2)``."""
    return _lp_pool(x, norm_type, kernel_size, stride, ceil_mode, 1, "lp_pool1d")


def lp_pool2d(x: Tensor, norm_type: float, kernel_size, stride=None, ceil_mode=False) -> Tensor:
    """The p-norm of each window of (N, C, H, W) or (C, H, W):
    ``F.lp_pool2d(x, 2, 2)``."""
    return _lp_pool(x, norm_type, kernel_size, stride, ceil_mode, 2, "lp_pool2d")


def lp_pool3d(x: Tensor, norm_type: float, kernel_size, stride=None, ceil_mode=False) -> Tensor:
    """The p-norm of each window of (N, C, D, H, W) or (C, D, H, W):
    ``F.lp_pool3d(x, 2, 2)``."""
    return _lp_pool(x, norm_type, kernel_size, stride, ceil_mode, 3, "lp_pool3d")


@amp.lower_precision
def conv_transpose3d(
    x: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride=1,
    padding=0,
    output_padding=0,
    groups: int = 1,
    dilation=1,
) -> Tensor:
    """Transposed 3-d convolution of (N, C, D, H, W) or unbatched (C, D, H, W),
    weight (in, out / groups, kd, kh, kw): ``F.conv_transpose3d(x, w, stride=2)``."""
    return _conv_transpose_nd(
        x, weight, bias, stride, padding, output_padding, groups, dilation, 3, "conv_transpose3d"
    )


# ---------------------------------------------------------------------------
# embeddings and bilinear forms
# ---------------------------------------------------------------------------


def _renorm_rows(ids: Tensor, weight: Tensor, max_norm: float, norm_type: float) -> None:
    """PyTorch's ``embedding_renorm_``: the rows of ``weight`` that ``ids`` uses
    and whose ``norm_type``-norm is above ``max_norm`` scaled (in place) to
    ``max_norm`` (its ``+ 1e-7`` included)."""
    v = weight.shape[0]
    used = (ids.reshape(-1, 1) == Tensor.arange(v, device=weight.device)).any(0)
    with no_grad():
        w = weight.detach()
        norm = w._float().norm(norm_type, dim=1, keepdim=True)
        scale = max_norm / (norm + 1e-7)
        big = used.reshape(v, 1) & (norm > max_norm)
        weight.assign(big.where(w * scale, w).cast(weight.dtype))


def _embedding_checks(ids: Tensor, weight: Tensor, padding_idx, name: str) -> int | None:
    if weight.ndim != 2:
        raise ArgumentError(f"{name}: weight must be (num_embeddings, dim), got {weight.shape}")
    if ids.dtype.is_float or ids.dtype.is_bool:
        raise TypeError(f"{name}: indices must be integers, got {ids.dtype.name}")
    if padding_idx is None:
        return None
    v = weight.shape[0]
    if isinstance(padding_idx, bool) or not isinstance(padding_idx, (int, np.integer)):
        raise ArgumentError(f"{name}: padding_idx must be an int, got {padding_idx!r}")
    if not -v <= padding_idx < v:
        raise ArgumentError(
            f"{name}: padding_idx {padding_idx} must be within num_embeddings ({v})"
        )
    return int(padding_idx) % v


def embedding(
    input: Tensor,  # noqa: A002 - PyTorch's names
    weight: Tensor,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """Rows of ``weight`` at the integer ``input``: ``F.embedding(ids, table)``.
    The row ``padding_idx`` gets no gradient; with ``max_norm`` the rows used
    are first renormalized in place (as PyTorch)."""
    pad = _embedding_checks(input, weight, padding_idx, "embedding")
    if scale_grad_by_freq or sparse:
        raise NotImplementedError("embedding: scale_grad_by_freq and sparse are not supported")
    if max_norm is not None:
        _renorm_rows(input, weight, max_norm, norm_type)
    rows = weight[input]
    if pad is not None and weight.requires_grad:
        rows = (input == pad).unsqueeze(-1).where(rows.detach(), rows)
    return rows


_BAG_MODES = ("sum", "mean", "max")


def embedding_bag(
    input: Tensor,  # noqa: A002 - PyTorch's names
    weight: Tensor,
    offsets: Tensor | None = None,
    max_norm: float | None = None,
    norm_type: float = 2,
    scale_grad_by_freq: bool = False,
    mode: str = "mean",
    sparse: bool = False,
    per_sample_weights: Tensor | None = None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
) -> Tensor:
    """The sum, mean or max of bags of embedding rows, without the (N, L, dim)
    lookup: ``input`` (B, L) holds B bags of L indices, or ``input`` (L,) is cut
    into bags at ``offsets`` (B,) (B + 1 with ``include_last_offset``, the last
    one the end). Entries equal to ``padding_idx`` are left out, empty bags
    give zeros, ``per_sample_weights`` (``input``'s shape) scale the rows in
    ``"sum"`` mode: ``F.embedding_bag(ids, table, offsets, mode="sum")``."""
    name = "embedding_bag"
    pad = _embedding_checks(input, weight, padding_idx, name)
    if mode not in _BAG_MODES:
        raise ArgumentError(f"{name}: mode must be one of {_BAG_MODES}, got {mode!r}")
    if scale_grad_by_freq or sparse:
        raise NotImplementedError(f"{name}: scale_grad_by_freq and sparse are not supported")
    if per_sample_weights is not None:
        if mode != "sum":
            raise ArgumentError(
                f"{name}: per_sample_weights are only supported for mode='sum', got {mode!r}"
            )
        if per_sample_weights.shape != input.shape:
            raise ArgumentError(
                f"{name}: per_sample_weights {per_sample_weights.shape} must have the input's "
                f"shape {input.shape}"
            )
    if input.ndim == 2:
        if offsets is not None:
            raise ArgumentError(f"{name}: offsets must be None for a 2-d input {input.shape}")
    elif input.ndim == 1:
        if offsets is None or offsets.ndim != 1:
            raise ArgumentError(
                f"{name}: a 1-d input needs 1-d offsets (where each bag starts), got "
                f"{None if offsets is None else offsets.shape}"
            )
        if offsets.dtype.is_float or offsets.dtype.is_bool:
            raise TypeError(f"{name}: offsets must be integers, got {offsets.dtype.name}")
        if include_last_offset and offsets.shape[0] < 1:
            raise ArgumentError(f"{name}: include_last_offset needs at least one offset")
        if offsets.node.realized and offsets.shape[0] and int(offsets.numpy()[0]) != 0:
            raise ArgumentError(
                f"{name}: offsets[0] must be 0 (the first bag starts at the first index), got "
                f"{int(offsets.numpy()[0])}"
            )
    else:
        raise ArgumentError(f"{name}: input must be (B, L) or (L,) with offsets, got {input.shape}")
    if max_norm is not None:
        _renorm_rows(input, weight, max_norm, norm_type)
    dt = weight.dtype
    ids = input.cast(dtypes.int64)
    rows = weight[ids]  # (B, L, dim) or (L, dim)
    if input.ndim == 2:  # each row a bag: member[b, l] for its own L entries
        member = Tensor.ones(*input.shape, dtype=dtypes.bool_, device=weight.device)
    else:  # member[b, l]: entry l lies in bag b
        total = input.shape[0]
        off = offsets.cast(dtypes.int64)
        nb = off.shape[0] - 1 if include_last_offset else off.shape[0]
        starts = off[:nb]
        if include_last_offset:
            ends = off[1 : nb + 1]
        else:
            end = Tensor.full((1,), total, dtypes.int64, weight.device)
            ends = off[1:].cat(end) if nb > 1 else end[:nb]
        at = Tensor.arange(total, device=weight.device)
        member = (starts.unsqueeze(1) <= at) & (at < ends.unsqueeze(1))
    if pad is not None:
        member = member & (ids != pad)
    count = member.cast(dt).sum(-1, keepdim=True)
    if mode == "max":
        low = -math.inf if dt.is_float else int(np.iinfo(dt.np).min)
        if input.ndim == 2:
            picked = member.unsqueeze(-1).where(rows, low)
        else:
            picked = member.unsqueeze(-1).where(rows.unsqueeze(0), low)
        return (count > 0).where(picked.max(1), 0)
    w = member.cast(dt)
    if per_sample_weights is not None:
        w = w * per_sample_weights.cast(dt)
    if input.ndim == 2:
        res = (rows * w.unsqueeze(-1)).sum(1)
    else:
        res = w @ rows
    if mode == "mean":
        res = res / count.maximum(1)
    return res


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``y[..., o] = input1 @ weight[o] @ input2 + bias[o]`` for inputs (..., in1)
    and (..., in2), weight (out, in1, in2): ``F.bilinear(a, b, w, bias)``."""
    if weight.ndim != 3:
        raise ArgumentError(f"bilinear: weight must be (out, in1, in2), got {weight.shape}")
    o, i1, i2 = weight.shape
    if input1.shape[-1:] != (i1,) or input2.shape[-1:] != (i2,):
        raise ArgumentError(
            f"bilinear: inputs must end in {i1} and {i2} features (weight {weight.shape}), got "
            f"{input1.shape} and {input2.shape}"
        )
    if input1.shape[:-1] != input2.shape[:-1]:
        raise ArgumentError(
            f"bilinear: inputs {input1.shape} and {input2.shape} must have the same leading dims"
        )
    if bias is not None and bias.shape != (o,):
        raise ArgumentError(f"bilinear: bias must be ({o},), got {bias.shape}")
    from mlfuse.tensor import einsum

    y = einsum("...i,oij,...j->...o", input1, weight, input2)
    return y + bias if bias is not None else y


# ---------------------------------------------------------------------------
# random activations, shuffles and distances
# ---------------------------------------------------------------------------


def gumbel_softmax(
    logits: Tensor, tau: float = 1.0, hard: bool = False, eps: float = 1e-10, dim: int = -1
) -> Tensor:
    """Softmax of ``(logits + Gumbel noise) / tau`` along ``dim`` (the noise from
    ``mlfuse.manual_seed``'s generator); ``hard`` gives the one-hot of its argmax
    with the soft sample's gradient (straight through):
    ``F.gumbel_softmax(logits, tau=0.5, hard=True)``."""
    if tau <= 0:
        raise ArgumentError(f"gumbel_softmax: tau must be positive, got {tau}")
    if not logits.dtype.is_float:
        raise TypeError(f"gumbel_softmax: logits must be floating point, got {logits.dtype.name}")
    d = dim % logits.ndim if logits.ndim and -logits.ndim <= dim < logits.ndim else None
    if d is None:
        raise ArgumentError(f"gumbel_softmax: dim {dim} is out of range for {logits.shape}")
    noise = _random(
        lambda g: -np.log(g.exponential(size=logits.shape)), logits.dtype, logits.device
    )
    soft = ((logits + noise) / tau).softmax(d)
    if not hard:
        return soft
    k = logits.shape[d]
    at = Tensor.arange(k, device=logits.device).reshape(
        tuple(k if i == d else 1 for i in range(logits.ndim))
    )
    one_hot = (at == soft.argmax(d, keepdim=True)).cast(soft.dtype)
    return one_hot - soft.detach() + soft


def rrelu(
    input: Tensor,  # noqa: A002 - PyTorch's names
    lower: float = 1.0 / 8,
    upper: float = 1.0 / 3,
    training: bool = False,
    inplace: bool = False,
) -> Tensor:
    """Randomized leaky relu: negative inputs times a slope drawn uniformly in
    ``[lower, upper]`` per element while ``training``, times their mean
    otherwise: ``F.rrelu(x, training=True)``."""
    if lower > upper:
        raise ArgumentError(f"rrelu: lower {lower} must be at most upper {upper}")
    x = input
    if training:
        slope = _random(lambda g: g.uniform(lower, upper, x.shape), device=x.device)
        xf = x._float()
        res = (xf > 0).where(xf, xf * slope.cast(xf.dtype))
    else:
        res = x.leaky_relu((lower + upper) / 2)
    return _maybe_inplace(x, res, inplace, "rrelu")


def relu_(input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's names
    """In-place ``relu``: ``F.relu_(x)`` writes ``max(x, 0)`` into ``x``."""
    return relu(input, inplace=True)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:  # noqa: A002
    """In-place ``elu``: ``F.elu_(x)``."""
    return elu(input, alpha, inplace=True)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:  # noqa: A002
    """In-place ``leaky_relu``: ``F.leaky_relu_(x, 0.2)``."""
    return leaky_relu(input, negative_slope, inplace=True)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:  # noqa: A002
    """In-place ``hardtanh``: ``F.hardtanh_(x, -2, 2)``."""
    return hardtanh(input, min_val, max_val, inplace=True)


def selu_(input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's names
    """In-place ``selu``: ``F.selu_(x)``."""
    return selu(input, inplace=True)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:  # noqa: A002
    """In-place ``celu``: ``F.celu_(x, 0.5)``."""
    return celu(input, alpha, inplace=True)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:  # noqa: A002
    """In-place ``threshold``: ``F.threshold_(x, 0.1, 0.0)``."""
    return _maybe_inplace(input, (input > threshold).where(input, value), True, "threshold")


def rrelu_(
    input: Tensor,  # noqa: A002 - PyTorch's names
    lower: float = 1.0 / 8,
    upper: float = 1.0 / 3,
    training: bool = False,
) -> Tensor:
    """In-place ``rrelu``: ``F.rrelu_(x, training=True)``."""
    return rrelu(input, lower, upper, training, inplace=True)


def feature_alpha_dropout(
    input: Tensor,  # noqa: A002 - PyTorch's names
    p: float = 0.5,
    training: bool = False,
    inplace: bool = False,
) -> Tensor:
    """``alpha_dropout`` of whole channels (one draw per (N, C) of (N, C, ...)):
    ``F.feature_alpha_dropout(x, 0.2, training=True)``."""
    if not 0 <= p <= 1:
        raise ArgumentError(f"feature_alpha_dropout: p must be in [0, 1], got {p}")
    if input.ndim < 2:
        raise ArgumentError(
            f"feature_alpha_dropout: input must have at least 2 dims (N, C, ...), got {input.shape}"
        )
    shape = input.shape[:2] + (1,) * (input.ndim - 2)
    return _alpha_dropout(input, p, training, inplace, shape, "feature_alpha_dropout")


def channel_shuffle(input: Tensor, groups: int) -> Tensor:  # noqa: A002 - PyTorch's names
    """Interleave the channels (dim 1) of (N, C, *) from ``groups`` groups:
    channel ``g * C/groups + i`` goes to ``i * groups + g``:
    ``F.channel_shuffle(x, 2)``."""
    x = input
    if isinstance(groups, bool) or not isinstance(groups, (int, np.integer)) or groups <= 0:
        raise ArgumentError(f"channel_shuffle: groups must be a positive int, got {groups!r}")
    if x.ndim < 3:
        raise ArgumentError(
            f"channel_shuffle: input must be (N, C, *) with more than 2 dims, got {x.shape}"
        )
    n, c = x.shape[:2]
    if c % groups:
        raise ArgumentError(
            f"channel_shuffle: the channels ({c}) must be divisible by groups ({groups})"
        )
    rest = x.shape[2:]
    y = x.reshape((n, groups, c // groups) + rest).transpose(1, 2)
    return y.reshape(x.shape)


def native_channel_shuffle(input: Tensor, groups: int) -> Tensor:  # noqa: A002
    """``channel_shuffle`` under its other name: ``F.native_channel_shuffle(x, 2)``."""
    return channel_shuffle(input, groups)


def _p_distance(d: Tensor, p: float, dim: int = -1) -> Tensor:
    """``||d||_p`` along ``dim`` with PyTorch's distance gradient: zero where the
    distance is zero (no NaN from the root)."""
    a = d.abs()
    if p == 0:  # a count: a zero gradient, as PyTorch's
        return (a != 0).cast(d.dtype).sum(dim) + _zero_gradient(d, d.dtype)
    if p == math.inf:
        return a.max(dim)
    if p == 1:
        return a.sum(dim)
    s = a * a if p == 2 else a**p
    total = s.sum(dim)
    pos = total > 0
    safe = pos.where(total, 1)
    root = safe.sqrt() if p == 2 else safe ** (1.0 / p)
    return pos.where(root, 0)


def pdist(input: Tensor, p: float = 2.0) -> Tensor:  # noqa: A002 - PyTorch's names
    """The p-norm distances between the rows of (N, M), for each pair i < j in
    row-major order (N (N - 1) / 2 of them): ``F.pdist(points)``."""
    if input.ndim != 2:
        raise ArgumentError(f"pdist: input must be (N, M), got {input.shape}")
    if p < 0:
        raise ArgumentError(f"pdist: p must be non-negative, got {p}")
    n = input.shape[0]
    i, j = np.triu_indices(n, 1)
    x = input._float()
    if not len(i):  # no pairs: no distances (and a zero gradient, as PyTorch's)
        return Tensor.zeros(0, dtype=x.dtype, device=x.device) + _zero_gradient(x, x.dtype)
    a = x[Tensor(i, device=x.device)]
    b = x[Tensor(j, device=x.device)]
    return _p_distance(a - b, p)


# ---------------------------------------------------------------------------
# more losses
# ---------------------------------------------------------------------------


def multilabel_margin_loss(
    input: Tensor,  # noqa: A002 - PyTorch's names
    target: Tensor,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """Multi-label hinge loss: for scores (N, C), (C,) or one 0-d score and
    ``target`` of the same shape (a 0-d score: () or (1,)) holding class indices
    up to the first -1, ``sum_{j in target, i not in target} max(0, 1 - (x[j] - x[i])) / C``
    (unbatched: a 0-d loss): ``F.multilabel_margin_loss(scores, labels)``."""
    name = "multilabel_margin_loss"
    _deprecated_reduction(name, size_average, reduce)
    _check_reduction(reduction, name)
    n, c = _margin_frames(input, name)
    fits = (
        target.shape == input.shape if input.ndim == 2 else target.ndim <= 1 and target.numel() == c
    )
    if not fits:
        raise ArgumentError(
            f"{name}: input must be (N, C) or (C,) and target the same shape, got {input.shape} "
            f"and {target.shape}"
        )
    if target.dtype.is_float or target.dtype.is_bool:
        raise DTypeError(f"{name}: target must hold class indices, got {target.dtype.name}")
    x = input._float().reshape(n, c)
    if target.node.realized and target.numel():
        t = target.numpy()
        if t.min() < -1 or t.max() >= c:
            raise ArgumentError(
                f"{name}: target values must be in [-1, {c - 1}], got "
                f"{int(t.min())}..{int(t.max())}"
            )
    t = target.reshape(n, c).cast(dtypes.int64)
    valid = (t < 0).cast(dtypes.int32).cumsum(-1) == 0  # the entries before the first -1
    classes = Tensor.arange(c, device=x.device)
    is_target = ((t.unsqueeze(-1) == classes) & valid.unsqueeze(-1)).any(-2)  # (N, C)
    xj = x.gather(-1, valid.where(t, 0))  # the targets' scores (N, K)
    h = (1 - xj.unsqueeze(-1) + x.unsqueeze(-2)).relu()  # (N, K, C)
    keep = valid.unsqueeze(-1) & ~is_target.unsqueeze(-2)
    loss = keep.where(h, 0).sum((-2, -1)) * (1 / c)
    if input.ndim < 2:  # unbatched: one 0-d loss (PyTorch's)
        loss = loss.reshape(())
    return _reduce(loss, reduction, name)


def triplet_margin_with_distance_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    *,
    distance_function=None,
    margin: float = 1.0,
    swap: bool = False,
    reduction: str = "mean",
) -> Tensor:
    """``max(d(a, p) - d(a, n) + margin, 0)`` with any ``distance_function``
    (default ``pairwise_distance``); ``swap`` uses the smaller of d(a, n) and
    d(p, n): ``F.triplet_margin_with_distance_loss(a, p, n, distance_function=f)``."""
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise ArgumentError(
            f"triplet_margin_with_distance_loss: anchor {anchor.shape}, positive "
            f"{positive.shape} and negative {negative.shape} must have the same number of dims"
        )
    if margin <= 0:
        raise ArgumentError(f"triplet_margin_with_distance_loss: margin must be > 0, got {margin}")
    dist = distance_function if distance_function is not None else pairwise_distance
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = d_neg.minimum(dist(positive, negative))
    loss = (margin + d_pos - d_neg).relu()
    return _reduce(loss, reduction, "triplet_margin_with_distance_loss")


def _lengths(v, n: int, what: str, device: str) -> Tensor:
    """``input_lengths``/``target_lengths`` (a tensor, or ints) as int64 (n,)."""
    t = v if isinstance(v, Tensor) else Tensor(np.asarray(v, np.int64), device=device)
    if t.dtype.is_float or t.dtype.is_bool:
        raise TypeError(f"ctc_loss: {what} must be integers, got {t.dtype.name}")
    if t.numel() != n or t.ndim > 1:
        raise ArgumentError(f"ctc_loss: {what} must hold {n} lengths, got shape {t.shape}")
    return t.reshape(n).cast(dtypes.int64)


def _logsumexp_safe(*ts: Tensor) -> Tensor:
    """``log(sum(exp(t)))`` of same-shape tensors, -inf where all are -inf
    (with zero, not NaN, gradients there)."""
    m = ts[0]
    for t in ts[1:]:
        m = m.maximum(t)
    m = m.detach()
    finite = m > -math.inf
    m0 = finite.where(m, 0)
    total = None
    for t in ts:
        e = (t - m0).exp()
        total = e if total is None else total + e
    assert total is not None
    pos = total > 0
    return pos.where(m0 + pos.where(total, 1).log(), -math.inf)


def _ctc_forward_backward(lp: Tensor, ext: Tensor, in_len: Tensor, tl: Tensor, blank: int):
    """CTC's forward and backward variables in log space for log-probabilities
    ``lp`` (T, N, C) and the blank-interleaved targets ``ext`` (N, 2S + 1): the
    negative log-likelihoods (N,) and their gradient with respect to ``lp``
    (T, N, C), ``-sum over the states s labelled c of alpha_t(s) beta_t(s) /
    (y_t(c) P)``. A loop over T: each step is realized (run, nothing read back),
    its step number a one-element buffer, so every step runs the kernels the
    first one compiled."""
    steps, n, c = lp.shape
    ext_len = ext.shape[1]
    dev = lp.device
    ninf = -math.inf
    # the emission of each extended label at each step (T, N, 2S + 1)
    # (the loop's inputs are realized first, so that its kernels read plain buffers
    # and are the same for any targets of these sizes)
    emit = lp.gather(2, ext.unsqueeze(0).expand(steps, n, ext_len)).realize()
    in_len, tl = in_len.realize(), tl.realize()
    # a label may follow the one two back when it is not blank and differs from it
    prev2 = ext.pad(((0, 0), (2, 0)), blank).shrink(((0, n), (0, ext_len)))
    skip = ((ext != blank) & (ext != prev2)).realize()
    at = Tensor.arange(ext_len, device=dev)

    def shift(v: Tensor, k: int) -> Tensor:  # v[s - k] (k > 0) or v[s + |k|], -inf outside
        if k > 0:
            return v.pad(((0, 0), (k, 0)), ninf).shrink(((0, n), (0, ext_len)))
        return v.pad(((0, 0), (0, -k)), ninf).shrink(((0, n), (-k, ext_len - k)))

    # the step t is data (a one-element buffer), so every step runs the same kernels
    def step_of(t: int) -> Tensor:
        return Tensor(np.array([t], np.int64), device=dev)

    def emit_at(tt: Tensor) -> Tensor:
        return emit.gather(0, tt.reshape(1, 1, 1).expand(1, n, ext_len)).reshape(n, ext_len)

    alphas = []
    alpha = (at < 2).where(emit[0], ninf).contiguous()
    alphas.append(alpha)
    for t in range(1, steps):
        tt = step_of(t)
        terms = [alpha, shift(alpha, 1), skip.where(shift(alpha, 2), ninf)]
        nxt = _logsumexp_safe(*terms) + emit_at(tt)
        alpha = (in_len > tt).unsqueeze(1).where(nxt, alpha).realize()
        alphas.append(alpha)
    last = (2 * tl).unsqueeze(1)
    end = alpha.gather(1, last.clip(0, ext_len - 1))
    before = (last > 0).where(alpha.gather(1, (last - 1).clip(0, ext_len - 1)), ninf)
    nll = -_logsumexp_safe(end, before).reshape(n)
    # backward variables (emission at t included): from the end states at the last
    # step of each sample, the transitions reversed
    nll = nll.realize()
    ends = (at == last) | (at == last - 1)
    skip_next = skip.pad(((0, 0), (0, 2)), False).shrink(((0, n), (2, ext_len + 2)))  # s -> s + 2
    hits = (ext.unsqueeze(-1) == Tensor.arange(c, device=dev)).cast(lp.dtype)  # (N, 2S + 1, C)
    possible = (nll < math.inf).unsqueeze(1)
    nll_col = nll.unsqueeze(1)
    times = Tensor.arange(steps, device=dev).reshape(steps, 1, 1)
    grad = Tensor.zeros(steps, n, c, dtype=lp.dtype, device=dev)
    beta = Tensor.full((n, ext_len), ninf, lp.dtype, dev)
    for t in reversed(range(steps)):
        tt = step_of(t)
        e = emit_at(tt)
        terms = [beta, shift(beta, -1), skip_next.where(shift(beta, -2), ninf)]
        stepped = _logsumexp_safe(*terms) + e
        start = ends.where(e, ninf)
        at_end = (in_len == tt + 1).unsqueeze(1)
        beta = at_end.where(start, (in_len > tt + 1).unsqueeze(1).where(stepped, ninf))
        beta = beta.realize()
        occ = (alphas[t] + beta - e + nll_col).exp()  # (N, 2S + 1)
        occ = (possible & (occ == occ)).where(occ, 0)  # impossible targets: no gradient
        g_t = -(occ.unsqueeze(-1) * hits).sum(1)  # (N, C)
        grad = (times == tt.reshape(1, 1, 1)).where(g_t.unsqueeze(0), grad).realize()
    return nll, grad


def ctc_loss(
    log_probs: Tensor,
    targets: Tensor,
    input_lengths,
    target_lengths,
    blank: int = 0,
    reduction: str = "mean",
    zero_infinity: bool = False,
) -> Tensor:
    """Connectionist temporal classification loss: ``-log`` of the total
    probability of the alignments of each target with its input, for
    ``log_probs`` (T, N, C) (log-softmaxed; or (T, C)) and ``targets`` (N, S)
    padded or 1-d concatenated (``target_lengths`` long each); ``"mean"`` divides
    each loss by its target length, then averages. The forward variables are a
    loop of lazy steps over T: ``F.ctc_loss(logp, y, in_lens, y_lens)``. The
    gradient is PyTorch's: ``exp(log_probs) - occupancy`` (the gradient of the
    logits of a ``log_softmax``; through one, the true gradient)."""
    if log_probs.ndim not in (2, 3):
        raise ArgumentError(
            f"ctc_loss: log_probs must be (T, N, C) or (T, C), got {log_probs.shape}"
        )
    if targets.dtype.is_float or targets.dtype.is_bool:
        raise TypeError(f"ctc_loss: targets must hold class indices, got {targets.dtype.name}")
    unbatched = log_probs.ndim == 2
    lp = log_probs._float()
    if unbatched:
        lp = lp.unsqueeze(1)
        if targets.ndim == 1:
            targets = targets.unsqueeze(0)
    steps, n, c = lp.shape
    if isinstance(blank, bool) or not isinstance(blank, (int, np.integer)) or not 0 <= blank < c:
        raise ArgumentError(f"ctc_loss: blank must be a class index in [0, {c}), got {blank!r}")
    dev = lp.device
    in_len = _lengths(input_lengths, n, "input_lengths", dev)
    tl = _lengths(target_lengths, n, "target_lengths", dev)
    if in_len.node.realized and n and int(in_len.numpy().max()) > steps:
        raise ArgumentError(
            f"ctc_loss: input_lengths {in_len.numpy().tolist()} must be at most T = {steps}"
        )
    if targets.ndim == 2 and targets.shape[0] == n:
        s = targets.shape[1]
        tgt = targets.cast(dtypes.int64)
        if tl.node.realized and n and int(tl.numpy().max()) > s:
            raise ArgumentError(
                f"ctc_loss: target_lengths {tl.numpy().tolist()} must be at most S = {s}"
            )
    elif targets.ndim == 1 and not unbatched:
        # concatenated targets: the layout (the longest target) needs the lengths
        lens = tl.numpy()
        if int(lens.sum()) != targets.shape[0]:
            raise ArgumentError(
                f"ctc_loss: 1-d targets must hold sum(target_lengths) = {int(lens.sum())} "
                f"labels, got {targets.shape[0]}"
            )
        s = int(lens.max()) if n else 0
        start = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int64)
        at = np.minimum(start[:, None] + np.arange(s), max(targets.shape[0] - 1, 0))
        tgt = targets.cast(dtypes.int64)[Tensor(at, device=dev)] if s else None
    else:
        raise ArgumentError(
            f"ctc_loss: targets must be (N, S) or 1-d concatenated with N = {n}, got "
            f"{targets.shape}"
        )
    blanks = Tensor.full((n, 1), blank, dtypes.int64, dev)
    if s:
        assert tgt is not None
        pairs = blanks.expand(n, s).unsqueeze(-1).cat(tgt.unsqueeze(-1), dim=-1)
        ext = pairs.reshape(n, 2 * s).cat(blanks, dim=1)  # blank, y1, blank, y2, ..., blank
    else:
        ext = blanks
    ext = ext.clip(0, c - 1).realize()
    lp_const = lp.detach()
    with no_grad():
        nll, occupancy = _ctc_forward_backward(lp_const, ext, in_len, tl, blank)
    # the loss with PyTorch's gradient (d nll / d log_probs = -occupancy, from the
    # forward and backward variables): value + (lp - lp.detach()) . gradient
    loss = nll + (occupancy != 0).where((lp - lp_const) * occupancy, 0).sum((0, 2))
    # PyTorch's gradient also has exp(log_probs) (at the steps inside each input,
    # for a finite loss): softmax - occupancy, the logits' gradient under a
    # log_softmax (which the log_softmax's own gradient then leaves unchanged)
    p = lp_const.exp()
    steps_in = Tensor.arange(steps, device=dev).reshape(steps, 1, 1) < in_len.reshape(1, n, 1)
    counted = steps_in & (nll < math.inf).reshape(1, n, 1) & (p != 0)
    loss = loss + counted.where((lp - lp_const) * p, 0).sum((0, 2))
    loss = (in_len == 0).where((tl == 0).where(0.0, math.inf), loss)
    if zero_infinity:
        loss = (loss == math.inf).where(0.0, loss)
    if reduction == "mean":
        return (loss / tl.maximum(1).cast(loss.dtype)).mean()
    if unbatched and reduction == "none":
        return loss.reshape(())
    return _reduce(loss, reduction, "ctc_loss")
