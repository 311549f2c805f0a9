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

import numpy as np

from mlfuse import dtypes
from mlfuse.autograd import no_grad
from mlfuse.errors import ArgumentError, UnsupportedModeError
from mlfuse.tensor import Tensor, _derivative, _rng

# ---------------------------------------------------------------------------
# activations (the Tensor methods, as functions)
# ---------------------------------------------------------------------------


def relu(x: Tensor) -> Tensor:
    """``max(x, 0)``: ``F.relu(x)``."""
    return x.relu()


def gelu(x: Tensor, approximate: str = "none") -> Tensor:
    """Gaussian error linear unit: ``F.gelu(x)``, ``F.gelu(x, approximate="tanh")``."""
    return x.gelu(approximate)


def silu(x: Tensor) -> Tensor:
    """``x * sigmoid(x)``: ``F.silu(x)``."""
    return x.silu()


def sigmoid(x: Tensor) -> Tensor:
    """``1 / (1 + exp(-x))``: ``F.sigmoid(x)``."""
    return x.sigmoid()


def tanh(x: Tensor) -> Tensor:
    """Hyperbolic tangent: ``F.tanh(x)``."""
    return x.tanh()


def leaky_relu(x: Tensor, negative_slope: float = 0.01) -> Tensor:
    """``x`` or ``negative_slope * x``: ``F.leaky_relu(x, 0.2)``."""
    return x.leaky_relu(negative_slope)


def elu(x: Tensor, alpha: float = 1.0) -> Tensor:
    """``x`` or ``alpha * (exp(x) - 1)``: ``F.elu(x)``."""
    return x.elu(alpha)


def softplus(x: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta x)) / beta``: ``F.softplus(x)``."""
    return x.softplus(beta, threshold)


def softmax(x: Tensor, dim: int = -1) -> Tensor:
    """Softmax along ``dim``: ``F.softmax(x, dim=-1)``."""
    return x.softmax(dim)


def log_softmax(x: Tensor, dim: int = -1) -> Tensor:
    """Log-softmax along ``dim``: ``F.log_softmax(x, dim=1)``."""
    return x.log_softmax(dim)


def pad(x: Tensor, pad, mode: str = "constant", value: float = 0.0) -> Tensor:
    """PyTorch's flat padding (last dim first): ``F.pad(x, (1, 1, 2, 2))``."""
    return x.pad(tuple(pad), value, mode)


def one_hot(x: Tensor, num_classes: int = -1) -> Tensor:
    """int64 one-hot rows: ``F.one_hot(labels, 10)``."""
    return x.one_hot(num_classes)


# ---------------------------------------------------------------------------
# linear layers and convolutions
# ---------------------------------------------------------------------------


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


def _tuple(v, n: int, what: str) -> tuple[int, ...]:
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return (int(v),) * n
    if (
        isinstance(v, (tuple, list))
        and len(v) == n
        and all(isinstance(i, (int, np.integer)) for i in v)
    ):
        return tuple(int(i) for i in v)
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
            win = win.stride(1, 1, *stride)
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
                t = t.stride(*((1,) * len(before) + (st,) + (1,) * len(after)))
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


def _conv_nd(x, weight, bias, stride, padding, dilation, groups, nd: int, name: str) -> Tensor:
    if x.ndim != nd + 2:
        raise ArgumentError(f"{name}: input must be (N, C, {_SPATIAL[nd]}), got {x.shape}")
    if weight.ndim != nd + 2:
        raise ArgumentError(f"{name}: weight must have {nd + 2} dims, got {weight.shape}")
    n, c = x.shape[:2]
    o, cg = weight.shape[:2]
    kernel = weight.shape[2:]
    if not isinstance(groups, (int, np.integer)) or groups <= 0 or c % groups or o % groups:
        raise ArgumentError(
            f"{name}: groups={groups!r} must divide the input channels ({c}) and the output "
            f"channels ({o})"
        )
    if cg != c // groups:
        raise ArgumentError(
            f"{name}: weight {weight.shape} expects {cg * groups} input channels in {groups} "
            f"groups, the input {x.shape} has {c}"
        )
    stride = _tuple(stride, nd, f"{name}: stride")
    dilation = _tuple(dilation, nd, f"{name}: dilation")
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
        pads = tuple((p, p) for p in _tuple(padding, nd, f"{name}: padding"))
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
        out = out + bias.cast(dt).reshape((1, o) + (1,) * nd)
    return out


def conv2d(
    x: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride=1,
    padding=0,
    dilation=1,
    groups: int = 1,
) -> Tensor:
    """2-d convolution (cross-correlation, as PyTorch): input (N, C, H, W),
    weight (O, C/groups, KH, KW); padding an int, a pair, ``"same"`` or
    ``"valid"``: ``F.conv2d(x, w, b, stride=2, padding=1)``."""
    return _conv_nd(x, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def _conv_transpose_nd(
    x, weight, bias, stride, padding, output_padding, groups, dilation, nd: int, name: str
) -> Tensor:
    if x.ndim != nd + 2 or weight.ndim != nd + 2:
        raise ArgumentError(
            f"{name}: input must have {nd + 2} dims and weight (in, out / groups, *kernel) "
            f"{nd + 2}, got {x.shape} and {weight.shape}"
        )
    n, c = x.shape[:2]
    if not isinstance(groups, (int, np.integer)) or groups <= 0 or c % groups:
        raise ArgumentError(f"{name}: groups={groups!r} must divide the input channels ({c})")
    if weight.shape[0] != c:
        raise ArgumentError(
            f"{name}: weight {weight.shape} expects {weight.shape[0]} input channels, "
            f"the input {x.shape} has {c}"
        )
    kernel = weight.shape[2:]
    stride = _tuple(stride, nd, f"{name}: stride")
    dilation = _tuple(dilation, nd, f"{name}: dilation")
    pad = _tuple(padding, nd, f"{name}: padding")
    extra = _tuple(output_padding, nd, f"{name}: output_padding")
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
    input), weight (in, out / groups, kh, kw), as PyTorch:
    ``F.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1)``."""
    return _conv_transpose_nd(
        x, weight, bias, stride, padding, output_padding, groups, dilation, 2, "conv_transpose2d"
    )


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
    """Transposed 1-d convolution, weight (in, out / groups, k):
    ``F.conv_transpose1d(x, w, stride=2)``."""
    return _conv_transpose_nd(
        x, weight, bias, stride, padding, output_padding, groups, dilation, 1, "conv_transpose1d"
    )


def conv1d(
    x: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride=1,
    padding=0,
    dilation=1,
    groups: int = 1,
) -> Tensor:
    """1-d convolution: input (N, C, L), weight (O, C/groups, K):
    ``F.conv1d(x, w, padding=1)``."""
    return _conv_nd(x, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv3d(
    x: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride=1,
    padding=0,
    dilation=1,
    groups: int = 1,
) -> Tensor:
    """3-d convolution: input (N, C, D, H, W), weight (O, C/groups, KD, KH, KW):
    ``F.conv3d(x, w, padding=1)``."""
    return _conv_nd(x, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


def _pool_geometry(x: Tensor, kernel_size, stride, padding, dilation, ceil_mode, name, nd=2):
    if x.ndim not in (nd + 1, nd + 2):
        raise ArgumentError(
            f"{name}: input must be (N, C, {_SPATIAL[nd]}) or (C, {_SPATIAL[nd]}), got {x.shape}"
        )
    kernel = _tuple(kernel_size, nd, f"{name}: kernel_size")
    stride = kernel if stride is None else _tuple(stride, nd, f"{name}: stride")
    pad = _tuple(padding, nd, f"{name}: padding")
    dilation = _tuple(dilation, nd, f"{name}: dilation")
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


def _max_pool_indices(xp: Tensor, spatial, kernel, stride, pad, dilation, out):
    """The maxima and where they are, as PyTorch: the flat index into the
    input's spatial dims (int64) of the first maximum of each window in scan
    order (a NaN wins, the last one); taps in the padding never count. The
    taps' positions and validity are constants per output position."""
    grids = np.meshgrid(*(np.arange(o) for o in out), indexing="ij")
    inner = [math.prod(spatial[d + 1 :]) for d in range(len(spatial))]
    acc = idx = have = None
    for tap, win in _windows(xp, kernel, stride, dilation, out):
        pos = [g * st + t * dl - p for g, st, t, dl, p in zip(grids, stride, tap, dilation, pad)]
        inside = np.ones(out, bool)
        flat = np.zeros(out, np.int64)
        for q, n, m in zip(pos, spatial, inner):
            inside &= (q >= 0) & (q < n)
            flat += q * m
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
    kernel = _tuple(kernel_size, nd, f"{name}: kernel_size")
    stride = kernel if stride is None else _tuple(stride, nd, f"{name}: stride")
    pad = _tuple(padding, nd, f"{name}: padding")
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
    out = flat.scatter(2, ib.reshape(*lead, -1), xb.reshape(*lead, -1))
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
        res = total * (1.0 / divisor_override)
    elif count_include_pad and not any(extra):
        res = total * (1.0 / math.prod(kernel))
    else:
        # count what each window covers: the input (and the zero padding when it counts)
        ones = Tensor.ones(*xb.shape[2:], dtype=xb.dtype, device=xb.device)
        if count_include_pad:
            ones = ones.pad(tuple((p, p) for p in pad), 1.0)
            cnt_src = ones.pad(tuple((0, e) for e in extra))
        else:
            cnt_src = ones.pad(tuple((p, p + e) for p, e in zip(pad, extra)))
        cnt_src = cnt_src.reshape((1, 1) + cnt_src.shape)
        count = None
        for _, win in _windows(cnt_src, kernel, stride, dilation, out):
            count = win if count is None else count + win
        res = total / count
    return res if batched else res.squeeze(0)


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
    then updated in place): ``F.batch_norm(x, mean, var, w, b)``."""
    if x.ndim < 2:
        raise ArgumentError(f"batch_norm: input must be (N, C, ...), got {x.shape}")
    c = x.shape[1]
    shape = (1, c) + (1,) * (x.ndim - 2)
    for t, what in ((running_mean, "running_mean"), (running_var, "running_var"),
                    (weight, "weight"), (bias, "bias")):  # fmt: skip
        if t is not None and t.shape != (c,):
            raise ArgumentError(f"batch_norm: {what} must be ({c},), got {t.shape}")
    xf = x._float()
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


def layer_norm(
    x: Tensor,
    normalized_shape,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalize over the last dims ``normalized_shape``:
    ``F.layer_norm(x, (64,), w, b)``."""
    ns = (
        tuple(normalized_shape)
        if isinstance(normalized_shape, (tuple, list))
        else (normalized_shape,)
    )
    if x.shape[x.ndim - len(ns) :] != ns:
        raise ArgumentError(
            f"layer_norm: normalized_shape {ns} is not the end of the input {x.shape}"
        )
    axes = tuple(range(x.ndim - len(ns), x.ndim))
    xf = x._float()
    mu = xf.mean(axes, keepdim=True)
    d = xf - mu
    out = d * ((d * d).mean(axes, keepdim=True) + eps).rsqrt()
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


def group_norm(
    x: Tensor, num_groups: int, weight: Tensor | None = None, bias: Tensor | None = None, eps=1e-5
) -> Tensor:
    """Normalize groups of channels: ``F.group_norm(x, 4, w, b)``."""
    n, c = x.shape[:2]
    if c % num_groups:
        raise ArgumentError(f"group_norm: {num_groups} groups do not divide {c} channels")
    g = x._float().reshape(n, num_groups, -1)
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


def dropout(x: Tensor, p: float = 0.5, training: bool = True) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by
    ``1 / (1 - p)`` (the mask comes from ``mlfuse.manual_seed``'s generator);
    the identity when not ``training``: ``F.dropout(x, 0.1)``."""
    if not 0 <= p <= 1:
        raise ArgumentError(f"dropout: p must be in [0, 1], got {p}")
    if not training or p == 0:
        return x
    if p == 1:
        return x * 0
    keep = Tensor(_rng(None).random(x.shape) >= p, device=x.device)
    return keep.where(x * (1 / (1 - p)), 0)


def embedding(input: Tensor, weight: Tensor) -> Tensor:  # noqa: A002 - PyTorch's names
    """Rows of ``weight`` at the integer ``input``: ``F.embedding(ids, table)``."""
    if weight.ndim != 2:
        raise ArgumentError(f"embedding: weight must be (num_embeddings, dim), got {weight.shape}")
    if input.dtype.is_float or input.dtype.is_bool:
        raise TypeError(f"embedding: indices must be integers, got {input.dtype.name}")
    return weight[input]


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


def nll_loss(
    input: Tensor,  # noqa: A002 - PyTorch's names
    target: Tensor,
    weight: Tensor | None = None,
    ignore_index: int = -100,
    reduction: str = "mean",
) -> Tensor:
    """Negative log-likelihood of class indices under log-probabilities
    (N, C, ...): ``F.nll_loss(logp, labels)``."""
    if input.ndim < 1 or target.shape != input.shape[:1] + input.shape[2:]:
        raise ArgumentError(
            f"nll_loss: target {target.shape} must be input {input.shape} without dim 1"
        )
    if target.dtype.is_float:
        raise TypeError(f"nll_loss: target must hold class indices, got {target.dtype.name}")
    c = input.shape[1] if input.ndim > 1 else input.shape[0]
    classes = Tensor.arange(c, device=input.device).reshape((1, c) + (1,) * (input.ndim - 2))
    hit = target.unsqueeze(1).cast(dtypes.int64) == classes
    picked = hit.where(input, 0).sum(1)
    valid = (target != ignore_index).cast(input.dtype)
    w = valid
    if weight is not None:
        w = hit.where(weight.reshape((1, c) + (1,) * (input.ndim - 2)), 0).sum(1) * valid
    loss = -picked * w
    return _reduce(loss, reduction, "nll_loss", w.sum() if reduction == "mean" else None)


def cross_entropy(
    input: Tensor,  # noqa: A002 - PyTorch's names
    target: Tensor,
    weight: Tensor | None = None,
    ignore_index: int = -100,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """Cross entropy of logits (N, C, ...) against class indices (N, ...) or
    class probabilities (N, C, ...): ``F.cross_entropy(logits, labels)``."""
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


def mse_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:  # noqa: A002
    """Mean squared error: ``F.mse_loss(pred, y)``."""
    d = input - target
    return _reduce(d * d, reduction, "mse_loss")


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


def relu6(x: Tensor) -> Tensor:
    """``min(max(x, 0), 6)``: ``F.relu6(x)``."""
    return x.relu6()


def hardtanh(x: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """Clamp to ``[min_val, max_val]``: ``F.hardtanh(x)``."""
    if min_val > max_val:
        raise ArgumentError(f"hardtanh: min_val {min_val} is above max_val {max_val}")
    return x.hardtanh(min_val, max_val)


def hardsigmoid(x: Tensor) -> Tensor:
    """``clamp(x / 6 + 1/2, 0, 1)``: ``F.hardsigmoid(x)``."""
    return x.hardsigmoid()


def hardswish(x: Tensor) -> Tensor:
    """``x * hardsigmoid(x)``: ``F.hardswish(x)``."""
    return x.hardswish()


def mish(x: Tensor) -> Tensor:
    """``x * tanh(softplus(x))``: ``F.mish(x)``."""
    return x.mish()


def selu(x: Tensor) -> Tensor:
    """Scaled elu with the self-normalizing constants: ``F.selu(x)``."""
    return x.selu()


def celu(x: Tensor, alpha: float = 1.0) -> Tensor:
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``: ``F.celu(x)``."""
    if alpha == 0:
        raise ArgumentError("celu: alpha must not be 0")
    return x.celu(alpha)


def logsigmoid(x: Tensor) -> Tensor:
    """``log(sigmoid(x))``, stable for large |x|: ``F.logsigmoid(x)``."""
    return x.logsigmoid()


def softsign(x: Tensor) -> Tensor:
    """``x / (1 + |x|)``: ``F.softsign(x)``."""
    return x.softsign()


def softmin(x: Tensor, dim: int = -1) -> Tensor:
    """``softmax(-x)`` along ``dim``: ``F.softmin(x, dim=1)``."""
    return (-x._float()).softmax(dim)


def glu(x: Tensor, dim: int = -1) -> Tensor:
    """Gated linear unit: the first half of ``dim`` times the sigmoid of the
    second: ``F.glu(x)``."""
    d = dim % x.ndim if x.ndim and -x.ndim <= dim < x.ndim else None
    if d is None or x.shape[d] % 2:
        raise ArgumentError(f"glu: dim {dim} of {x.shape} must exist and have an even size")
    a, b = x.chunk(2, d)
    return a * b.sigmoid()


def normalize(x: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
    """``x / max(norm_p(x, dim), eps)``: ``F.normalize(x, dim=-1)``."""
    return x._float() / x.norm(p, dim=dim, keepdim=True).maximum(eps)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """``x1 . x2 / max(|x1| |x2|, eps)`` along ``dim`` (inputs broadcast):
    ``F.cosine_similarity(a, b, dim=-1)``."""
    a, b = x1._float()._operands(x2)
    dot = (a * b).sum(dim)
    n = ((a * a).sum(dim) * (b * b).sum(dim)).sqrt()
    return dot / n.maximum(eps)


def _adaptive_bins(size: int, out: int, device: str) -> Tensor:
    """(out, size) float32 weights: row i averages PyTorch's window
    ``[floor(i * size / out), ceil((i + 1) * size / out))``."""
    m = np.zeros((out, size), np.float32)
    for i in range(out):
        lo, hi = (i * size) // out, -(-((i + 1) * size) // out)
        m[i, lo:hi] = 1.0 / (hi - lo)
    return Tensor(m, device=device)


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
    ph = _adaptive_bins(h, oh, x.device).cast(xf.dtype).reshape(oh, 1, h, 1)
    pw = _adaptive_bins(w, ow, x.device).cast(xf.dtype).reshape(1, ow, 1, w)
    return (xf.unsqueeze(-3).unsqueeze(-3) * (ph * pw)).sum((-2, -1))


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
        loss = (t > 0).where(
            t * (t.maximum(1e-38 if t.dtype != dtypes.float64 else 1e-300).log() - input), 0.0
        )
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


def adaptive_max_pool1d(x: Tensor, output_size, return_indices: bool = False) -> Tensor:
    """Max over PyTorch's adaptive windows of (N, C, L) or (C, L):
    ``F.adaptive_max_pool1d(x, 4)``."""
    _no_indices(return_indices, "adaptive_max_pool1d")
    (o,) = _adaptive_sizes(x, output_size, 1, "adaptive_max_pool1d")
    return _adaptive_max_last(x, o)


def adaptive_max_pool2d(x: Tensor, output_size, return_indices: bool = False) -> Tensor:
    """Max over PyTorch's adaptive windows (overlapping where the sizes do not
    divide): ``F.adaptive_max_pool2d(x, (3, 3))``."""
    _no_indices(return_indices, "adaptive_max_pool2d")
    oh, ow = _adaptive_sizes(x, output_size, 2, "adaptive_max_pool2d")
    y = _adaptive_max_last(x, ow)
    return _adaptive_max_last(y.transpose(-1, -2), oh).transpose(-1, -2)


_INTERP_DIMS = {"linear": 1, "bilinear": 2, "trilinear": 3}


def _source_scale(i: int, o: int, scale, align_corners: bool, ft):
    """PyTorch's source-index step (``area_pixel_compute_scale``) in ``ft``."""
    if align_corners:
        return ft(i - 1) / ft(o - 1) if o > 1 else ft(0)
    return ft(1.0 / scale) if scale is not None and scale > 0 else ft(i) / ft(o)


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
    ``"nearest-exact"``, ``"linear"`` (3-d), ``"bilinear"`` (4-d),
    ``"trilinear"`` (5-d) or ``"area"``:
    ``F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)``."""
    x = input
    modes = ("nearest", "nearest-exact", "linear", "bilinear", "trilinear", "area")
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
            "interpolate: align_corners can only be set with the modes 'linear', 'bilinear' "
            f"and 'trilinear', not {mode!r}"
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
        # (PyTorch's uint8 path uses fixed-point weights and can differ by 1)
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


def rms_norm(
    x: Tensor, normalized_shape, weight: Tensor | None = None, eps: float | None = None
) -> Tensor:
    """``x / sqrt(mean(x^2) + eps)`` over the last dims ``normalized_shape``
    (``eps`` None: the dtype's machine epsilon, as PyTorch):
    ``F.rms_norm(x, (64,), w)``."""
    ns = (
        tuple(normalized_shape)
        if isinstance(normalized_shape, (tuple, list))
        else (normalized_shape,)
    )
    if x.shape[x.ndim - len(ns) :] != ns:
        raise ArgumentError(
            f"rms_norm: normalized_shape {ns} is not the end of the input {x.shape}"
        )
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
    return (x > threshold).where(x, value)


def prelu(x: Tensor, weight: Tensor) -> Tensor:
    """``max(0, x) + weight * min(0, x)``, ``weight`` one slope or one per
    channel (dim 1): ``F.prelu(x, a)``."""
    if weight.ndim != 1:
        raise ArgumentError(f"prelu: weight must be 1-d, got {weight.shape}")
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


def _channel_dropout(x: Tensor, p: float, training: bool, nd: int, name: str) -> Tensor:
    if not 0 <= p <= 1:
        raise ArgumentError(f"{name}: p must be in [0, 1], got {p}")
    if x.ndim not in (nd + 1, nd + 2):
        raise ArgumentError(
            f"{name}: input must be (N, C, {_SPATIAL[nd]}) or (C, {_SPATIAL[nd]}), got {x.shape}"
        )
    if not training or p == 0:
        return x
    if p == 1:
        return x * 0
    lead = x.ndim - nd  # the batch and channel dims: one draw per channel
    shape = x.shape[:lead] + (1,) * nd
    keep = Tensor(_rng(None).random(shape) >= p, device=x.device)
    return keep.where(x * (1 / (1 - p)), 0)


def dropout1d(x: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, L) or (C, L) with probability ``p``, scale
    the rest by ``1 / (1 - p)``: ``F.dropout1d(x, 0.2)``."""
    return _channel_dropout(x, p, training, 1, "dropout1d")


def dropout2d(x: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, H, W) or (C, H, W) with probability ``p``,
    scale the rest by ``1 / (1 - p)``: ``F.dropout2d(x, 0.2)``."""
    return _channel_dropout(x, p, training, 2, "dropout2d")


def dropout3d(x: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W): ``F.dropout3d(x, 0.2)``."""
    return _channel_dropout(x, p, training, 3, "dropout3d")


def alpha_dropout(x: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False):
    """Dropout that keeps SELU's zero mean and unit variance: dropped elements
    become SELU's negative saturation, then all are scaled and shifted (the
    identity unless ``training``, PyTorch's default False):
    ``F.alpha_dropout(x, 0.1, training=True)``."""
    if not 0 <= p <= 1:
        raise ArgumentError(f"alpha_dropout: p must be in [0, 1], got {p}")
    if not training or p == 0:
        return x
    if p == 1:
        return x * 0
    alpha = 1.7580993408473766  # -selu's scale * alpha
    a = 1 / math.sqrt((alpha * alpha * p + 1) * (1 - p))
    keep = Tensor(_rng(None).random(x.shape) >= p, device=x.device)
    return keep.where(x * a, -alpha * a) + alpha * a * p


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
    ``var`` may omit or have size 1 in the last dim): ``F.gaussian_nll_loss(mu, y, var)``."""
    if var.shape != input.shape:
        if input.shape[:-1] == var.shape:
            var = var.unsqueeze(-1)
        elif not (input.shape[:-1] == var.shape[:-1] and var.shape[-1:] == (1,)):
            raise ArgumentError(
                f"gaussian_nll_loss: var {var.shape} must be the input's shape {input.shape}, "
                "or it without (or with size 1 in) the last dim"
            )
    if eps < 0:
        raise ArgumentError(f"gaussian_nll_loss: eps must be >= 0, got {eps}")
    v = var._float()
    v = v + (v.maximum(eps) - v).detach()  # clamped value, identity gradient
    d = input._float() - target
    loss = 0.5 * (v.log() + d * d / v)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction, "gaussian_nll_loss")


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


def multi_margin_loss(
    input: Tensor,  # noqa: A002 - PyTorch's names
    target: Tensor,
    p: int = 1,
    margin: float = 1.0,
    weight: Tensor | None = None,
    reduction: str = "mean",
) -> Tensor:
    """Multi-class hinge loss: ``sum_{i != y} max(0, margin - x[y] + x[i])^p / C``
    for scores (N, C) or (C,) and class indices ``y``:
    ``F.multi_margin_loss(scores, labels)``."""
    if p not in (1, 2):
        raise ArgumentError(f"multi_margin_loss: p must be 1 or 2, got {p!r}")
    if input.ndim not in (1, 2) or target.shape != input.shape[:-1]:
        raise ArgumentError(
            f"multi_margin_loss: input must be (N, C) or (C,) and target (N,) or (), got "
            f"{input.shape} and {target.shape}"
        )
    if target.dtype.is_float:
        raise TypeError(
            f"multi_margin_loss: target must hold class indices, got {target.dtype.name}"
        )
    x = input._float()
    c = x.shape[-1]
    hit = target.unsqueeze(-1).cast(dtypes.int64) == Tensor.arange(c, device=x.device)
    xy = hit.where(x, 0).sum(-1, keepdim=True)
    h = (margin - xy + x).relu()
    if p == 2:
        h = h * h
    if weight is not None:
        if weight.shape != (c,):
            raise ArgumentError(f"multi_margin_loss: weight must be ({c},), got {weight.shape}")
        h = h * hit.where(weight, 0).sum(-1, keepdim=True)
    loss = hit.where(0, h).sum(-1) * (1 / c)
    return _reduce(loss, reduction, "multi_margin_loss")
