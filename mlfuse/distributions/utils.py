"""Helpers shared by the distributions (PyTorch's ``torch.distributions.utils``):
broadcasting of parameters, probabilities and logits, lazily computed
attributes, and the host side of the samplers (the implicit reparameterization
gradient of Gamma samples)."""

from __future__ import annotations

import functools
import math
import numbers

import numpy as np

from mlfuse import dtypes, graph
from mlfuse.tensor import Tensor, _derivative, _random, broadcast_shape, cat, stack

euler_constant = 0.57721566490153286060  # the Euler-Mascheroni constant

__all__ = [
    "broadcast_all",
    "clamp_probs",
    "euler_constant",
    "lazy_property",
    "logits_to_probs",
    "probs_to_logits",
    "tril_matrix_to_vec",
    "vec_to_tril_matrix",
]


def broadcast_all(*values) -> tuple[Tensor, ...]:
    """The values broadcast to one shape, as PyTorch's ``broadcast_all``: tensors
    broadcast; Python numbers become tensors of the first tensor's dtype and
    device (the default float dtype when all are numbers)."""
    for v in values:
        if not isinstance(v, Tensor) and not isinstance(v, numbers.Number):
            raise ValueError(
                "Input arguments must all be instances of Number or mlfuse.Tensor, "
                f"got {type(v).__name__}"
            )
    like = next((v for v in values if isinstance(v, Tensor)), None)
    if like is None:
        dt, dev = dtypes.default_float, None
    else:
        dt, dev = like.dtype, like.device
        if not dt.is_float:
            dt = dtypes.default_float
    ts = [v if isinstance(v, Tensor) else Tensor(float(v), dt, dev) for v in values]
    shape = broadcast_shape(*(t.shape for t in ts))
    return tuple(t if t.shape == shape else t.expand(shape) for t in ts)


def _float_tensor(v, like: Tensor | None = None) -> Tensor:
    """``v`` as a float tensor (a number takes ``like``'s dtype and device)."""
    if isinstance(v, Tensor):
        return v if v.dtype.is_float else v.cast(dtypes.default_float)
    if like is not None:
        return Tensor(float(v), like.dtype, like.device)
    return Tensor(np.asarray(v, np.float64), dtypes.default_float)


def finfo(dt):
    from mlfuse.namespace import finfo as _finfo

    return _finfo(dt)


def _stacked(fn, xs) -> tuple[Tensor, ...]:
    """``fn`` of each of ``xs`` (tensors or numbers, broadcast together) by one
    call on their stack: lgamma and digamma are long series, and one expansion
    of them in a kernel instead of one per argument compiles several times
    faster."""
    like = next(x for x in xs if isinstance(x, Tensor))
    ts = [x if isinstance(x, Tensor) else Tensor(float(x), like.dtype, like.device) for x in xs]
    shape = broadcast_shape(*(t.shape for t in ts))
    out = fn(stack([t.expand(shape) for t in ts]))
    return tuple(out[i] for i in range(len(ts)))


def _lgammas(*xs) -> tuple[Tensor, ...]:
    """``lgamma`` of each argument, in one call (see :func:`_stacked`)."""
    return _stacked(Tensor.lgamma, xs)


def _digammas(*xs) -> tuple[Tensor, ...]:
    """``digamma`` of each argument, in one call (see :func:`_stacked`)."""
    return _stacked(Tensor.digamma, xs)


def clamp_probs(probs: Tensor) -> Tensor:
    """Probabilities clamped into ``[eps, 1 - eps]`` (eps of their dtype)."""
    eps = finfo(probs.dtype).eps
    return probs.clamp(eps, 1 - eps)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """Probabilities from log-odds (``is_binary``) or from unnormalized log
    probabilities along the last dim."""
    return logits.sigmoid() if is_binary else logits.softmax(-1)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """Log-odds (``is_binary``) or log probabilities from probabilities."""
    ps = clamp_probs(probs)
    return ps.log() - (-ps).log1p() if is_binary else ps.log()


def _sum_rightmost(value, dim: int):
    """``value`` summed over its ``dim`` rightmost dims."""
    if dim == 0 or not isinstance(value, Tensor):
        return value
    return value.reshape(*value.shape[:-dim], -1).sum(-1)


class lazy_property:  # noqa: N801 - PyTorch's name
    """A property computed on first use and then kept on the instance, as
    PyTorch's ``lazy_property`` (``Bernoulli(logits=l).probs``)."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        functools.update_wrapper(self, wrapped)

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        value = self.wrapped(instance)
        instance.__dict__[self.wrapped.__name__] = value
        return value


def _tril_index(n: int, diag: int) -> np.ndarray:
    """The flat indices (row-major, into an ``n x n`` matrix) of the entries on
    or below diagonal ``diag``, in row order."""
    rows, cols = np.indices((n, n))
    return np.flatnonzero((cols < rows + (diag + 1)).reshape(-1))


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    """The entries of (a batch of) ``D x D`` matrices on or below diagonal
    ``diag``, in row order, as vectors: ``tril_matrix_to_vec(L, diag=-1)``."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    flat = mat.reshape(*mat.shape[:-2], n * n)
    return flat[..., _tril_index(n, diag).tolist()]


def vec_to_tril_matrix(vec: Tensor, diag: int = 0) -> Tensor:
    """(A batch of) vectors laid out as the entries on or below diagonal ``diag``
    of ``D x D`` lower-triangular matrices, in row order (the inverse of
    :func:`tril_matrix_to_vec`): ``vec_to_tril_matrix(v, diag=-1)``."""
    size = vec.shape[-1]
    # the positive root of D^2 + (1 + 2 diag) D - |diag| (diag + 1) - 2 size = 0
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * size + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if abs(round(n) - n) > 1e-9:
        raise ValueError(
            f"The size of last dimension is {size} which cannot be expressed as "
            "the lower triangular part of a square D x D matrix."
        )
    n = round(n)
    idx = _tril_index(n, diag)
    # each matrix entry reads its vector entry, or an appended zero
    source = np.full(n * n, size)
    source[idx] = np.arange(size)
    zero = Tensor.zeros(*vec.shape[:-1], 1, dtype=vec.dtype, device=vec.device)
    padded = cat([vec, zero], -1)
    return padded[..., source.tolist()].reshape(*vec.shape[:-1], n, n)


def _shape(sample_shape) -> tuple[int, ...]:
    """A sample shape (a tuple, list, or one int) as a tuple."""
    if isinstance(sample_shape, (int, np.integer)) and not isinstance(sample_shape, bool):
        return (int(sample_shape),)
    return tuple(int(s) for s in sample_shape)


def _host(t) -> np.ndarray | None:
    """The values of ``t`` on the host for a check, or None to skip the check
    (an unrealized tensor while ``mlfuse.jit`` captures: its values change on
    every replay)."""
    if not isinstance(t, Tensor):
        return np.asarray(t)
    if not t.node.realized and graph._recording is not None:
        return None
    return t.numpy()  # realizes t itself: what uses it later reads the buffer


def _draw(draw, shape, like: Tensor, seed=None) -> Tensor:
    """``draw(generator, shape)`` (a numpy sampler) from mlfuse's generators, in
    ``like``'s float dtype and device."""
    shape = tuple(shape)
    return _random(lambda g: draw(g, shape), like.dtype, like.device, seed=seed)


# -- the Gamma sampler and its implicit reparameterization gradient -------------------
def _np_digamma(x: np.ndarray) -> np.ndarray:
    """digamma of positive float64 values: the recurrence up to 6, then the
    asymptotic series (absolute error ~1e-15)."""
    x = np.array(x, np.float64)
    acc = np.zeros_like(x)
    for _ in range(6):
        small = x < 6
        if not small.any():
            break
        acc = np.where(small, acc - 1 / np.where(small, x, 1.0), acc)
        x = np.where(small, x + 1, x)
    r = 1 / (x * x)
    series = r * (
        1 / 12 - r * (1 / 120 - r * (1 / 252 - r * (1 / 240 - r * (1 / 132 - r * 691 / 32760))))
    )
    return acc + np.log(x) - 0.5 / x - series


def _dlog_gamma_dalpha(alpha: np.ndarray, logx: np.ndarray) -> np.ndarray:
    """``d log(x) / d alpha`` of a standard Gamma(alpha) sample ``x = exp(logx)``
    held at a fixed quantile (the implicit reparameterization gradient of
    Figurnov et al. 2018: ``dx/dalpha = -(dF/dalpha)(x; alpha) / f(x; alpha)``,
    F the regularized incomplete gamma function, f the density).

    F is evaluated by its power series where ``x < alpha + 1`` and by the
    continued fraction of its complement elsewhere, each differentiated exactly
    in alpha alongside (forward mode); the e^-x x^alpha / Gamma(alpha) factors
    that F and f share cancel, so the result is finite for samples that underflow.
    """
    a = np.asarray(alpha, np.float64)
    lx = np.asarray(logx, np.float64)
    a, lx = np.broadcast_arrays(a, lx)
    shape = a.shape
    a, lx = a.reshape(-1), lx.reshape(-1)
    out = np.zeros(a.shape)
    series = np.exp(lx) < a + 1
    idx = np.flatnonzero(series)
    out[idx] = _gamma_series_slope(a[idx], lx[idx])
    idx = np.flatnonzero(~series)
    out[idx] = _gamma_cf_slope(a[idx], lx[idx])
    return out.reshape(shape)


def _gamma_series_slope(a: np.ndarray, lx: np.ndarray) -> np.ndarray:
    """``d log(x)/da`` where ``x < a + 1``: ``P = x^a e^-x / Gamma(a + 1) * S``, ``S
    = sum_n prod_{k<=n} x / (a + k)``, so ``dx/da = -(x / a)(S (log x - psi(a + 1)) +
    dS/da)``; each entry iterates until its terms stop counting."""
    out = np.empty(a.shape)
    x = np.exp(lx)
    live = np.arange(a.size)
    term, s, ds, r = (np.ones(a.size), np.ones(a.size), np.zeros(a.size), np.zeros(a.size))
    k = 0
    while live.size:
        k += 1
        al, xl = a[live], x[live]
        r = r + 1 / (al + k)  # d log(term) / da = -r
        term = term * xl / (al + k)
        s, ds = s + term, ds - term * r
        done = (term <= 1e-17 * s) & (term * r <= 1e-17 * np.abs(ds) + 1e-300)
        if k > 100000:
            done[:] = True
        if done.any():
            i = live[done]
            out[i] = -(s[done] * (lx[i] - _np_digamma(a[i] + 1)) + ds[done]) / a[i]
            keep = ~done
            live, term, s, ds, r = live[keep], term[keep], s[keep], ds[keep], r[keep]
    return out


def _gamma_cf_slope(a: np.ndarray, lx: np.ndarray) -> np.ndarray:
    """``d log(x)/da`` where ``x >= a + 1``: ``Q = 1 - P = e^-x x^a / Gamma(a) * h``, h
    the continued fraction of the upper incomplete gamma function (modified
    Lentz), differentiated in a alongside, so ``dx/da = x h (log x - psi(a) +
    d log(h)/da)``."""
    out = np.empty(a.shape)
    x = np.exp(lx)
    tiny = 1e-300
    live = np.arange(a.size)
    b = x + 1 - a
    db = -np.ones(a.size)
    c, dc = np.full(a.size, 1 / tiny), np.zeros(a.size)
    d = 1 / b
    dd = -db * d * d
    h, dlogh = d.copy(), dd / d
    i = 0
    while live.size:
        i += 1
        al = a[live]
        an, dan = -i * (i - al), float(i)
        b = b + 2
        den = an * d + b
        dden = dan * d + an * dd + db
        den = np.where(np.abs(den) < tiny, tiny, den)
        d, dd = 1 / den, -dden / (den * den)
        cn = b + an / c
        dcn = db + (dan - an * dc / c) / c
        c, dc = np.where(np.abs(cn) < tiny, tiny, cn), dcn
        delta = d * c
        h = h * delta
        step = dd / d + dc / c
        dlogh = dlogh + step
        done = (np.abs(delta - 1) <= 1e-16) & (np.abs(step) <= 1e-16 * (1 + np.abs(dlogh)))
        if i > 100000:
            done[:] = True
        if done.any():
            j = live[done]
            out[j] = h[done] * (lx[j] - _np_digamma(a[j]) + dlogh[done])
            keep = ~done
            live = live[keep]
            b, db, c, dc, d, dd = b[keep], db[keep], c[keep], dc[keep], d[keep], dd[keep]
            h, dlogh = h[keep], dlogh[keep]
    return out


def _log_standard_gamma(gen: np.random.Generator, alpha: np.ndarray) -> np.ndarray:
    """log of standard Gamma(alpha) samples (one per entry of alpha), drawn in
    log space: for alpha < 1 as Gamma(alpha + 1) * U^(1/alpha), whose log does
    not underflow for small alpha."""
    alpha = np.asarray(alpha, np.float64)
    small = alpha < 1
    g = gen.standard_gamma(np.where(small, alpha + 1, alpha))
    out = np.log(g)
    if small.any():
        u = 1.0 - gen.random(alpha.shape)  # (0, 1]
        out = np.where(small, out + np.log(u) / np.where(small, alpha, 1.0), out)
    return out


def _standard_gamma(alpha: Tensor, shape, log: bool = False, seed=None) -> Tensor:
    """Standard Gamma(alpha) samples of ``shape`` (alpha broadcasts to it), or
    their logs with ``log``, drawn on the host from mlfuse's generators; the
    gradient to alpha is the implicit reparameterization gradient."""
    from mlfuse.tensor import _rng

    shape = tuple(shape)
    a = alpha.numpy().astype(np.float64)
    a = np.broadcast_to(a, shape)
    lx = _log_standard_gamma(_rng(seed), a)
    if log:
        value = Tensor(lx, alpha.dtype, alpha.device)
    else:
        tiny = finfo(alpha.dtype).tiny
        value = Tensor(np.maximum(np.exp(lx), tiny), alpha.dtype, alpha.device)
    if not alpha.requires_grad:
        return value
    from mlfuse.autograd import is_grad_enabled

    if not is_grad_enabled():
        return value
    dlog = _dlog_gamma_dalpha(a, lx)
    slope = Tensor(dlog if log else dlog * np.exp(lx), alpha.dtype, alpha.device)

    def rule(c, g):
        return (g * slope,)

    return _derivative("standard_gamma", value, (alpha.expand(shape),), rule)


def _infinite_like(t: Tensor) -> Tensor:
    return Tensor.full(t.shape, math.inf, t.dtype, t.device)
