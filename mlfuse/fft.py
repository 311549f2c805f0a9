"""``torch.fft``'s discrete Fourier transforms: ``mlfuse.fft.fft(x)``, ``ifft``,
``rfft``, ``irfft``, ``hfft``, ``ihfft``, their 2-d and n-d forms, ``fftfreq``,
``rfftfreq``, ``fftshift`` and ``ifftshift``, with PyTorch's signatures,
defaults and normalizations (``norm``: ``None``/``"backward"``, ``"ortho"``,
``"forward"``)::

    X = mlfuse.fft.rfft(signal)                  # (..., n // 2 + 1), complex64
    y = mlfuse.fft.irfft(X * filt, n=signal.shape[-1])
    F = mlfuse.fft.fft2(img, norm="ortho")

The method. A complex tensor here is a pair of real lazy tensors
(:mod:`mlfuse.complex_tensors`), so a transform is written with real tensor
ops on the parts: they fuse into kernels, run on every target, and carry
autograd with no gradient formula of their own (the gradient of a transform
is the transform the graph of products and sums gives). Nothing is computed
on the host but constants.

* A 1-d transform of length ``n <= 128`` (or a prime up to 1024) along the last
  dim is a product with the DFT matrix ``exp(-+2 pi i j k / n) = C -+ i S``,
  held as real matrices of the parts' dtype (computed in float64 with ``j k``
  reduced mod ``n`` exactly, rounded once). Both parts go through one kernel,
  ``re @ [C, S] + im @ [-S, C]`` (output blocks padded to a multiple of 8
  columns, the product's fast case); a real input skips the imaginary half,
  only the bins asked for are computed (``rfft``'s ``n // 2 + 1``; the real
  part alone for ``irfft``), a zero-padded input (``n`` above its size) uses
  only the matrix rows of its points, and the norm's scale is in the matrix.
  Along another dim, the product is from the left (``C @ x`` over the dims
  after it) where that needs no transposed copy.
* A longer composite length ``n = n1 * n2`` (``n1`` the largest divisor not
  above ``sqrt(n)``) takes Cooley-Tukey's four steps: view the signal as
  ``(n1, n2)``, transform the ``n1`` columns (a product from the left),
  multiply by the twiddles ``W_n ** (j2 k1)`` (which carry the scale), transform
  the ``n2`` rows (from the left again, reading the twiddled values
  transposed) and read the ``(n2, n1)`` result
  flat: three kernels, ``O(n (n1 + n2))`` work rather than ``O(n ** 2)``,
  recursive where a factor is itself long. float32 keeps pocketfft's
  accuracy: a relative error near 3e-7 at n = 4096 (1e-15 in float64).
* A length with a prime factor over 1024 uses Bluestein's chirp-z algorithm:
  the transform as a convolution with the chirp ``exp(-+i pi j**2 / n)``, done
  by transforms of a power-of-two length ``>= 2n - 1`` (the chirp's spectrum
  is a float64 constant).
* ``irfft`` of a matrix length sums ``w_k Re(X_k e^{2 pi i k t / n})`` with
  weights 1 for the DC and Nyquist bins and 2 for the others; a longer one
  completes the Hermitian spectrum (``X[n - k] = conj(X[k])``) and keeps the
  real part of the inverse. Either way the imaginary parts of the DC and
  Nyquist bins are ignored, as in PyTorch and numpy. ``hfft(x, n)`` is
  ``irfft(conj(x), n)`` and ``ihfft(x)`` is ``conj(rfft(x))``, each with the
  opposite normalization, as in PyTorch.
* n-d transforms apply the 1-d ones dim after dim (``rfftn``: the real one on
  the last of ``dim`` first; ``irfftn``/``hfftn``: the complex ones first, the
  real output last), the last one carrying the scale of the product of the
  signal sizes.

Real inputs of float32, integer and bool dtypes give complex64, float64 gives
complex128 (float16 and bfloat16 compute in float32); autocast regions do not
lower the transforms' products. The constant matrices and twiddles are
cached per length, dtype and device (64 MiB at most).
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections import OrderedDict

import numpy as np

from mlfuse import amp, dtypes
from mlfuse.complex_tensors import ComplexTensor
from mlfuse.complex_tensors import parts as _parts
from mlfuse.errors import ArgumentError, ArgumentTypeError, DimError, DTypeError
from mlfuse.tensor import Tensor

__all__ = [
    "fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2",
    "hfft2", "ihfft2", "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn", "fftfreq",
    "rfftfreq", "fftshift", "ifftshift",
]  # fmt: skip

_DIRECT_MAX = 128  # lengths up to this multiply by their DFT matrix
_PRIME_MAX = 1024  # a factor up to this (with no split) too; longer: Bluestein
_NORMS = (None, "backward", "ortho", "forward")


# -- arguments ---------------------------------------------------------------------
def _signal(fname: str, input, real_only: bool = False) -> tuple[Tensor, Tensor | None]:
    """The parts of ``input`` in the float dtype the transform computes in."""
    if not isinstance(input, Tensor):
        raise ArgumentTypeError(f"{fname}: input must be a tensor, got {type(input).__name__}")
    re, im = _parts(input)
    if real_only and im is not None:
        raise DTypeError(f"{fname} expects a real input tensor, but got {input.dtype.name}")
    if not re.dtype.is_float or re.dtype.is_half:
        re = re.cast(dtypes.float32)
        im = im.cast(dtypes.float32) if im is not None else None
    return re, im


def _check_norm(fname: str, norm) -> None:
    if norm not in _NORMS:
        raise ArgumentError(
            f"{fname}: invalid norm {norm!r}; expected None, 'backward', 'ortho' or 'forward'"
        )


def _scale(norm, n: int, forward: bool) -> float:
    """The factor a transform of ``n`` points is multiplied by under ``norm``."""
    if norm == "ortho":
        return 1.0 / math.sqrt(n)
    if (norm == "forward") == forward:
        return 1.0 / n
    return 1.0


def _check_n(fname: str, n, what: str = "n") -> int | None:
    if n is None:
        return None
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise ArgumentTypeError(f"{fname}: {what} must be an int or None, got {type(n).__name__}")
    if n < 1:
        raise ArgumentError(f"{fname}: invalid number of data points {what}={n}; it must be >= 1")
    return int(n)


def _check_dim(fname: str, dim, ndim: int) -> int:
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
        raise ArgumentTypeError(f"{fname}: dim must be an int, got {type(dim).__name__}")
    if not -ndim <= dim < ndim:
        raise DimError(
            f"{fname}: dim {dim} is out of range for a tensor of {ndim} dims"
            + (" (a 0-d tensor has no dim to transform)" if ndim == 0 else "")
        )
    return int(dim) % ndim


def _dims_and_sizes(fname: str, shape: tuple, s, dim, default_dim=None):
    """PyTorch's rules for ``s`` and ``dim`` of the n-d transforms: the dims to
    transform and their signal sizes (None where the input's size is kept)."""
    ndim = len(shape)
    if dim is None and default_dim is not None:
        dim = default_dim
    if s is not None:
        if isinstance(s, (int, np.integer)):
            s = (s,)
        s = list(s)
        for v in s:
            if not isinstance(v, (int, np.integer)) or isinstance(v, bool):
                raise ArgumentTypeError(f"{fname}: s must be a sequence of ints, got {s}")
    if dim is None:
        if s is None:
            dims = list(range(ndim))
        else:
            if len(s) > ndim:
                raise ArgumentError(
                    f"{fname}: s has {len(s)} sizes but the input has only {ndim} dims"
                )
            dims = list(range(ndim - len(s), ndim))
    else:
        dims = [dim] if isinstance(dim, (int, np.integer)) else list(dim)
        dims = [_check_dim(fname, d, ndim) for d in dims]
        if len(set(dims)) != len(dims):
            raise ArgumentError(f"{fname}: dims must be unique, got {tuple(dim)}")
        if s is not None and len(s) != len(dims):
            raise ArgumentError(
                f"{fname}: s and dim must have the same length, got {len(s)} sizes for "
                f"{len(dims)} dims"
            )
    sizes = [None] * len(dims)
    if s is not None:
        for i, v in enumerate(s):
            if v == -1:
                continue
            if v < 1:
                raise ArgumentError(
                    f"{fname}: invalid number of data points s[{i}]={v}; it must be >= 1 "
                    "(or -1 for the input's size)"
                )
            sizes[i] = int(v)
    return dims, sizes


def _finish(z: ComplexTensor | Tensor, out):
    if out is None:
        return z
    out.copy_(z)
    return out


# -- constants ---------------------------------------------------------------------
_TENSORS: OrderedDict = OrderedDict()  # (key, dtype, device) -> (tensor, bytes)
_CACHE_LIMIT = 64 << 20  # bytes of constants kept, least recently used dropped first
_cached = [0]


def _const(key: tuple, dt, device: str, build) -> Tensor:
    """The tensor of the numpy constant ``build()`` (computed in float64, rounded
    once to ``dt``), cached per key, dtype and device."""
    k = (key, dt.name, device)
    hit = _TENSORS.get(k)
    if hit is not None:
        _TENSORS.move_to_end(k)
        return hit[0]
    arr = np.ascontiguousarray(build().astype(dt.np))
    t = Tensor(arr, device=device)
    _TENSORS[k] = (t, arr.nbytes)
    _cached[0] += arr.nbytes
    while _cached[0] > _CACHE_LIMIT and len(_TENSORS) > 1:
        _cached[0] -= _TENSORS.popitem(last=False)[1][1]
    return t


@functools.lru_cache(maxsize=8)
def _angles(n: int, rows: int, cols: int) -> np.ndarray:
    """``2 pi (j * k mod n) / n`` for ``j < rows``, ``k < cols``, in float64 (the
    product reduced exactly, so long transforms keep their accuracy)."""
    j = np.arange(rows, dtype=np.int64)[:, None]
    k = np.arange(cols, dtype=np.int64)[None, :]
    return (2 * np.pi / n) * ((j * k) % n)


def _width(m: int) -> int:
    """``m`` rounded up to a multiple of 8: matrix products whose right operand's
    width is one run several times faster on the CPU (the extra columns are 0)."""
    return -(-m // 8) * 8


def _padded(a: np.ndarray) -> np.ndarray:
    return np.pad(a, ((0, 0), (0, _width(a.shape[1]) - a.shape[1])))


def _cos_sin(n: int, rows: int, cols: int, sign: int) -> tuple[np.ndarray, np.ndarray]:
    a = _angles(n, rows, cols)
    return np.cos(a), sign * np.sin(a)


def _matrices(x: Tensor, n: int, m: int, sign: int, real_out: bool, scale: float, rows: int):
    """The constant matrices ``(A, B)`` of the first ``m`` bins of the length-``n``
    DFT ``X[k] = sum_j x[j] exp(sign 2 pi i j k / n) = (re C - im S) + i (im C +
    re S)``, times ``scale``, for a signal of its first ``rows <= n`` points (the
    others zero): ``re @ A + im @ B`` gives ``[Re X, Im X]`` side by side, each
    block :func:`_width` wide; ``Re X`` alone for ``real_out``."""

    def build():
        c, s = _cos_sin(n, rows, m, sign)  # [j, k]
        c, s = _padded(c * scale), _padded(s * scale)
        a, b = ([c], [-s]) if real_out else ([c, s], [-s, c])
        return np.stack([np.concatenate(a, 1), np.concatenate(b, 1)])

    ab = _const(("right", n, m, sign, real_out, scale, rows), x.dtype, x.device, build)
    return ab[0], ab[1]


def _left_matrices(x: Tensor, n: int, m: int, sign: int, real_out, rows: int, cols: int, scale):
    """:func:`_matrices` transposed, for ``A @ re + B @ im``: ``Re X`` and ``Im X``
    along a new leading dim (each part then a buffer of its own), each
    ``rows >= m`` rows (the extra ones 0), over ``cols`` columns: the signal's
    first points (the others zero), or ``n`` and zero columns for zero padding."""

    def build():
        c, s = _cos_sin(n, m, min(n, cols), sign)  # [k, j]
        c = np.pad(c * scale, ((0, rows - m), (0, max(cols - n, 0))))
        s = np.pad(s * scale, ((0, rows - m), (0, max(cols - n, 0))))
        a, b = ([c], [-s]) if real_out else ([c, s], [-s, c])
        return np.stack([np.stack(a), np.stack(b)])

    key = ("left", n, m, sign, real_out, rows, cols, scale)
    ab = _const(key, x.dtype, x.device, build)
    return ab[0], ab[1]


def _split(n: int) -> int | None:
    """The largest divisor of ``n`` in ``[2, sqrt(n)]`` (None for a prime)."""
    for d in range(math.isqrt(n), 1, -1):
        if n % d == 0:
            return d
    return None


def _is_leaf(n: int) -> bool:
    """Whether a transform of length ``n`` multiplies by its DFT matrix."""
    return n <= _DIRECT_MAX or (n <= _PRIME_MAX and _split(n) is None)


# -- the 1-d transform along the last dim -----------------------------------------
_VIEWS = ("reshape", "shrink", "expand")


def _operand(t: Tensor) -> Tensor:
    """``t`` as an operand of a matrix product: itself where it reads a buffer
    through a view the product can index (a reshape, a slice), else a buffer of
    its own (``contiguous``): a product fused with the elementwise ops that make
    its operand (twiddles, padding, a window) would recompute them for every
    output and run many times slower."""
    n = t.node
    while n.op in _VIEWS and not n.realized:
        n = n.srcs[0]
    return t if n.realized or n.op == "contiguous" else t.contiguous()


def _dft(re: Tensor, im, n: int, sign: int, m: int | None = None, real_out=False, scale=1.0):
    """The first ``m`` bins of the length-``n`` DFT along the last dim of the
    signal ``re + i im`` (``im`` None: real), times ``scale``: ``(Re X, Im X)``,
    ``Im X`` None with ``real_out``."""
    m = n if m is None else m
    have = re.shape[-1]
    if have == 0:  # all padding
        zeros = Tensor.full(re.shape[:-1] + (m,), 0.0, re.dtype, re.device)
        return zeros, (None if real_out else zeros)
    if have > n:  # cropped: a view
        re, im = re[..., :n], (None if im is None else im[..., :n])
    if _is_leaf(n):  # zero padded: the product skips the zeros
        a, b = _matrices(re, n, m, sign, real_out, scale, min(have, n))
        y = _operand(re) @ a
        if im is not None:
            y = y + _operand(im) @ b
        y = y.contiguous()
        w = _width(m)
        if real_out:
            return (y if w == m else y[..., :m]), None
        return y[..., :m], y[..., w : w + m]
    re, im = _resized(re, n), _resized(im, n)
    n1 = _split(n)
    if n1 is None:
        return _bluestein(re, im, n, sign, m, real_out, scale)
    return _four_step(re, im, n, n1, sign, m, real_out, scale)


def _four_step(re: Tensor, im, n: int, n1: int, sign: int, m: int, real_out: bool, scale):
    """:func:`_dft` of ``n = n1 * n2`` points by Cooley-Tukey's four steps: with
    ``j = n2 j1 + j2`` and ``k = k1 + n1 k2``, the ``n1``-point transforms of the
    columns of ``x`` viewed as ``(n1, n2)`` (``[k1, j2]``), the twiddles
    ``W_n ** (j2 k1)``, the ``n2``-point transforms of its rows, and the result
    ``[k2, k1]`` read flat. Both transforms multiply from the left (no
    transposed copies: the second reads the twiddled values transposed), the
    dims they leave alone padded to :func:`_width` (zeros) for the product's
    speed."""
    n2, m2 = n // n1, -(-m // n1)  # only k2 < m2 are asked for
    n1p, n2p = _width(n1), _width(n2)
    lead = re.shape[:-1]

    def grid(t):  # (..., n) -> (..., n1, n2p)
        if t is None:
            return None
        t = t.reshape(lead + (n1, n2))
        return t if n2p == n2 else t.pad((0, n2p - n2))

    xr, xi = grid(re), grid(im)
    if _is_leaf(n1):
        yr, yi = _dft_left(xr, xi, n1, sign, n1, False, n1p)  # [k1, j2]: (..., n1p, n2p)
    else:
        yr, yi = _dft(xr.mT, None if xi is None else xi.mT, n1, sign)
        yr, yi = yr.mT, yi.mT
        if n1p != n1:
            yr, yi = yr.pad((0, 0, 0, n1p - n1)), yi.pad((0, 0, 0, n1p - n1))

    def twiddles():  # the scale rides on them; 0 in the padding
        c, s = _cos_sin(n, n1, n2, sign)
        pad = ((0, n1p - n1), (0, n2p - n2))
        return np.stack([np.pad(c, pad), np.pad(s, pad)]) * scale

    tw = _const(("twiddles", n, n1, sign, scale), re.dtype, re.device, twiddles)
    c, s = tw[0], tw[1]
    yr, yi = (yr * c - yi * s).contiguous(), (yr * s + yi * c).contiguous()
    if _is_leaf(n2):  # reads [k1, j2] transposed: its contraction runs along memory
        zr, zi = _dft_left(yr.mT, yi.mT, n2, sign, m2, real_out, m2, ready=True)  # [k2, k1]
    else:
        if n2p != n2:
            yr, yi = yr[..., :n2], yi[..., :n2]
        zr, zi = _dft(yr, yi, n2, sign, m2, real_out)  # [k1, k2]
        zr, zi = zr.mT, (None if zi is None else zi.mT)

    def flat(t):
        if t is None:
            return None
        if t.shape[-1] != n1:
            t = t[..., :n1]
        t = t.reshape(lead + (m2 * n1,))
        return t if m2 * n1 == m else t[..., :m]

    return flat(zr), flat(zi)


def _dft_left(
    re: Tensor, im, n: int, sign: int, m: int, real_out, rows: int, scale=1.0, ready=False
):
    """:func:`_dft` along the second-last dim (of ``re.shape[-2] >= n`` points,
    the ones past ``n`` zero), by multiplying from the left: each part
    ``(..., rows, c)``, the rows past ``m`` zero. ``ready``: the parts are
    views of buffers the product reads as they are."""
    a, b = _left_matrices(re, n, m, sign, real_out, rows, re.shape[-2], scale)
    grid = (a.shape[0],) + (1,) * (re.ndim - 2) + a.shape[1:]
    use = (lambda t: t) if ready else _operand
    y = a.reshape(grid) @ use(re)
    if im is not None:
        y = y + b.reshape(grid) @ use(im)
    y = y.contiguous()
    return (y[0], None) if real_out else (y[0], y[1])


def _bluestein(re: Tensor, im, n: int, sign: int, m: int, real_out: bool, scale: float):
    """Bluestein's chirp-z: ``X[k] = c[k] sum_j (x[j] c[j]) conj(c[k - j])`` with
    ``c[j] = exp(sign i pi j**2 / n)``, the convolution done by transforms of a
    power-of-two length ``L >= 2n - 1``."""
    big = 1 << (2 * n - 2).bit_length()
    dt, dev = re.dtype, re.device
    j = np.arange(n, dtype=np.int64)
    chirp = (np.pi / n) * ((j * j) % (2 * n))  # exact mod 2n: exp(i pi j^2 / n) has period 2n

    def kernel():  # conj(c) placed circularly over L, transformed, with the 1/L of the inverse
        b = np.zeros(big, np.complex128)
        b[:n] = np.exp(-sign * 1j * chirp)
        b[big - n + 1 :] = b[1:n][::-1]
        f = np.fft.fft(b) * (scale / big)
        return np.stack([f.real, f.imag])

    c = _const(("chirp", n, sign), dt, dev, lambda: np.stack([np.cos(chirp), sign * np.sin(chirp)]))
    cr, ci = c[0], c[1]
    if im is None:
        ar, ai = re * cr, re * ci
    else:
        ar, ai = re * cr - im * ci, re * ci + im * cr
    pad = (0, big - n)
    fr, fi = _dft(ar.pad(pad), ai.pad(pad), big, -1)
    k = _const(("bluestein", n, sign, scale), dt, dev, kernel)
    kr, ki = k[0], k[1]
    gr, gi = fr * kr - fi * ki, fr * ki + fi * kr
    hr, hi = _dft(gr, gi, big, 1, m)
    cr, ci = cr[:m], ci[:m]
    xr = hr * cr - hi * ci
    if real_out:
        return xr, None
    return xr, hr * ci + hi * cr


# -- along a dim --------------------------------------------------------------------
def _resized(t, size: int):
    """``t`` cropped or zero-padded to ``size`` along its last dim."""
    if t is None:
        return None
    have = t.shape[-1]
    if have > size:
        return t[..., :size]
    if have < size:
        return t.pad((0, size - have))
    return t


def _along(re, im, d: int, n: int, sign: int, m: int, scale: float):
    """The first ``m`` bins along dim ``d`` by multiplying from the left, where
    that needs no copy (``n`` a matrix length, ``d`` not last, the dims after
    it a multiple of 8 elements: the product's fast case); None elsewhere."""
    shape = re.shape
    inner = math.prod(shape[d + 1 :])
    if d == re.ndim - 1 or n == 1 or not _is_leaf(n) or inner % 8:
        return None
    have = min(shape[d], n)  # zero padding: the product skips the zeros
    if have == 0:
        return None  # all padding: _dft's zeros
    grid = shape[:d] + (have, inner)
    xr = re.narrow(d, 0, have).reshape(grid)
    xi = None if im is None else im.narrow(d, 0, have).reshape(grid)
    yr, yi = _dft_left(xr, xi, n, sign, m, False, m, scale)
    out = shape[:d] + (m,) + shape[d + 1 :]
    return yr.reshape(out), yi.reshape(out)


def _last(t, d: int):
    return None if t is None else t.movedim(d, -1)


def _back(t, d: int):
    return None if t is None else t.movedim(-1, d)


def _c2c(re, im, d: int, n: int, sign: int, scale: float):
    """The complex transform of length ``n`` along dim ``d``, times ``scale``."""
    done = _along(re, im, d, n, sign, n, scale)
    if done is not None:
        return done
    yr, yi = _dft(_last(re, d), _last(im, d), n, sign, scale=scale)
    return _back(yr, d), _back(yi, d)


def _r2c(re, d: int, n: int, sign: int, scale: float):
    """The first ``n // 2 + 1`` bins of a real signal's transform, times ``scale``."""
    done = _along(re, None, d, n, sign, n // 2 + 1, scale)
    if done is not None:
        return done
    yr, yi = _dft(_last(re, d), None, n, sign, n // 2 + 1, scale=scale)
    return _back(yr, d), _back(yi, d)


def _c2r(re, im, d: int, n: int, scale: float):
    """The real inverse of length ``n`` of a one-sided spectrum along ``d``, times
    ``scale``."""
    h = n // 2 + 1
    xr, xi = _last(re, d), _last(im, d)
    if xi is None:
        xi = xr.zeros_like()
    if xr.shape[-1] == 0:  # all padding
        return _back(Tensor.full(xr.shape[:-1] + (n,), 0.0, xr.dtype, xr.device), d)
    if not _is_leaf(n):
        from mlfuse.tensor import cat

        xr, xi = _resized(xr, h), _resized(xi, h)
        tail = n - h  # X[n - k] = conj(X[k]) for k = 1 .. n - h
        if tail:
            xr = cat([xr, xr[..., 1 : tail + 1].flip(-1)], -1)
            xi = cat([xi, -xi[..., 1 : tail + 1].flip(-1)], -1)
        y, _ = _dft(xr, xi, n, 1, real_out=True, scale=scale)
        return _back(y, d)

    if xr.shape[-1] > h:  # cropped: a view
        xr, xi = xr[..., :h], xi[..., :h]
    rows = xr.shape[-1]  # zero padded: the product skips the zeros

    def build():  # Re sum_k w_k X_k e^{2 pi i k t / n}: DC (and Nyquist) once, others twice
        c, s = _cos_sin(n, h, n, 1)
        w = np.full((h, 1), 2.0 * scale)
        w[0] = scale
        if n % 2 == 0:
            w[-1] = scale
        return np.stack([_padded(w * c)[:rows], _padded(-w * s)[:rows]])

    ab = _const(("c2r", n, scale, rows), xr.dtype, xr.device, build)
    y = (_operand(xr) @ ab[0] + _operand(xi) @ ab[1]).contiguous()
    return _back(y if _width(n) == n else y[..., :n], d)


def _scaled(re, im, f: float):
    if f == 1.0:
        return re, im
    return re * f, (im * f if im is not None else None)


def _complex(re, im) -> ComplexTensor:
    return ComplexTensor(re, im if im is not None else re.zeros_like())


# -- the drivers -------------------------------------------------------------------
def _full_precision(fn):
    """Run ``fn`` outside autocast regions: its products multiply by DFT matrices
    and twiddles, which half precision would ruin (PyTorch's autocast runs the
    transforms in float32 too)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if not amp.active():
            return fn(*args, **kwargs)
        with contextlib.ExitStack() as stack:
            for device_type in ("cpu", "cuda"):
                stack.enter_context(amp.autocast(device_type, enabled=False))
            return fn(*args, **kwargs)

    return wrapper


def _resolve(fname: str, shape: tuple, s, dim, one_d: bool, default_dim=None):
    """The dims to transform and their sizes (None: the input's), from a 1-d
    transform's ``n`` and ``dim`` or an n-d one's ``s`` and ``dim``."""
    if one_d:
        return [_check_dim(fname, dim, len(shape))], [_check_n(fname, s)]
    return _dims_and_sizes(fname, shape, s, dim, default_dim)


def _size(fname: str, shape: tuple, d: int, n, one_d: bool) -> int:
    n = shape[d] if n is None else n
    if n < 1:
        raise ArgumentError(
            f"{fname}: invalid number of data points (0): dim {d} of the input {shape} is "
            f"empty; pass {'n' if one_d else 's'} >= 1"
        )
    return n


@_full_precision
def _c2c_api(fname, input, s, dim, norm, forward, out, one_d=False, default_dim=None):
    _check_norm(fname, norm)
    re, im = _signal(fname, input)
    dims, sizes = _resolve(fname, re.shape, s, dim, one_d, default_dim)
    sizes = [_size(fname, re.shape, d, n, one_d) for d, n in zip(dims, sizes)]
    scale = _scale(norm, math.prod(sizes), forward)
    for i, (d, n) in enumerate(zip(dims, sizes)):
        last = i == len(dims) - 1
        re, im = _c2c(re, im, d, n, -1 if forward else 1, scale if last else 1.0)
    return _finish(_complex(re, im), out)


@_full_precision
def _r2c_api(fname, input, s, dim, norm, conj, out, one_d=False, default_dim=None):
    """``rfft``'s family (``conj``: ``ihfft``'s, the conjugate with the inverse's
    normalization): the one-sided transform along the last of the dims, then
    the complex ones along the others."""
    _check_norm(fname, norm)
    re, _ = _signal(fname, input, real_only=True)
    dims, sizes = _resolve(fname, re.shape, s, dim, one_d, default_dim)
    if not dims:
        raise ArgumentError(f"{fname} must transform at least one dim")
    sizes = [_size(fname, re.shape, d, n, one_d) for d, n in zip(dims, sizes)]
    scale = _scale(norm, math.prod(sizes), not conj)
    sign = 1 if conj else -1  # conj(transform) is the transform with the other sign
    re, im = _r2c(re, dims[-1], sizes[-1], sign, scale if len(dims) == 1 else 1.0)
    for i, (d, n) in enumerate(zip(dims[:-1], sizes[:-1])):
        re, im = _c2c(re, im, d, n, sign, scale if i == len(dims) - 2 else 1.0)
    return _finish(_complex(re, im), out)


@_full_precision
def _c2r_api(fname, input, s, dim, norm, conj, out, one_d=False, default_dim=None):
    """``irfft``'s family (``conj``: ``hfft``'s, of the conjugate with the forward
    normalization): the complex inverses along all but the last of the dims,
    then the real one along it."""
    _check_norm(fname, norm)
    re, im = _signal(fname, input)
    dims, sizes = _resolve(fname, re.shape, s, dim, one_d, default_dim)
    if not dims:
        raise ArgumentError(f"{fname} must transform at least one dim")
    sizes[:-1] = [_size(fname, re.shape, d, n, one_d) for d, n in zip(dims[:-1], sizes[:-1])]
    if sizes[-1] is None:
        d = dims[-1]
        sizes[-1] = 2 * (re.shape[d] - 1)
        if sizes[-1] < 1:
            raise ArgumentError(
                f"{fname}: invalid number of data points ({sizes[-1]}): the default output "
                f"length 2 * (m - 1) needs m >= 2 points along dim {d}, the input {re.shape} "
                f"has {re.shape[d]}; pass {'n' if one_d else 's'}"
            )
    if conj and im is not None:
        im = -im
    for d, n in zip(dims[:-1], sizes[:-1]):
        re, im = _c2c(re, im, d, n, 1, 1.0)
    scale = _scale(norm, math.prod(sizes), conj)
    return _finish(_c2r(re, im, dims[-1], sizes[-1], scale), out)


# -- 1-d ------------------------------------------------------------------------
def fft(input, n=None, dim=-1, norm=None, *, out=None) -> ComplexTensor:  # noqa: A002
    """The 1-d discrete Fourier transform ``X[k] = sum_j x[j] exp(-2 pi i j k / n)``
    along ``dim``, the input cropped or zero-padded to ``n`` points:
    ``mlfuse.fft.fft(x)``, ``fft(x, n=256, dim=0, norm="ortho")``."""
    return _c2c_api("fft", input, n, dim, norm, True, out, one_d=True)


def ifft(input, n=None, dim=-1, norm=None, *, out=None) -> ComplexTensor:  # noqa: A002
    """The 1-d inverse transform ``x[j] = (1/n) sum_k X[k] exp(2 pi i j k / n)``
    along ``dim`` (``norm`` moves the ``1/n``): ``mlfuse.fft.ifft(X)``."""
    return _c2c_api("ifft", input, n, dim, norm, False, out, one_d=True)


def rfft(input, n=None, dim=-1, norm=None, *, out=None) -> ComplexTensor:  # noqa: A002
    """The transform of a real signal, its ``n // 2 + 1`` non-negative frequency
    bins (the rest are their conjugates): ``mlfuse.fft.rfft(x)``."""
    return _r2c_api("rfft", input, n, dim, norm, False, out, one_d=True)


def irfft(input, n=None, dim=-1, norm=None, *, out=None) -> Tensor:  # noqa: A002
    """The inverse of :func:`rfft`: the real signal of ``n`` points (default
    ``2 * (m - 1)`` for ``m`` input bins) whose one-sided spectrum is the input
    (cropped or zero-padded to ``n // 2 + 1`` bins; the imaginary parts of the
    DC and Nyquist bins are ignored): ``mlfuse.fft.irfft(X, n=x.shape[-1])``."""
    return _c2r_api("irfft", input, n, dim, norm, False, out, one_d=True)


def hfft(input, n=None, dim=-1, norm=None, *, out=None) -> Tensor:  # noqa: A002
    """The transform of a Hermitian-symmetric signal given by its first half, a
    real tensor of ``n`` points (default ``2 * (m - 1)``): ``irfft(conj(x), n)``
    with the forward normalization: ``mlfuse.fft.hfft(x)``."""
    return _c2r_api("hfft", input, n, dim, norm, True, out, one_d=True)


def ihfft(input, n=None, dim=-1, norm=None, *, out=None) -> ComplexTensor:  # noqa: A002
    """The inverse of :func:`hfft`: ``conj(rfft(x, n)) / n`` of a real signal,
    the ``n // 2 + 1`` bins of the one-sided Hermitian spectrum:
    ``mlfuse.fft.ihfft(x)``."""
    return _r2c_api("ihfft", input, n, dim, norm, True, out, one_d=True)


# -- n-d ------------------------------------------------------------------------
def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None) -> ComplexTensor:  # noqa: A002
    """The 2-d transform over ``dim`` (the last two by default), each cropped or
    zero-padded to ``s``: ``mlfuse.fft.fft2(img)``."""
    return _c2c_api("fft2", input, s, dim, norm, True, out, default_dim=(-2, -1))


def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None) -> ComplexTensor:  # noqa: A002
    """The inverse of :func:`fft2`: ``mlfuse.fft.ifft2(F)``."""
    return _c2c_api("ifft2", input, s, dim, norm, False, out, default_dim=(-2, -1))


def fftn(input, s=None, dim=None, norm=None, *, out=None) -> ComplexTensor:  # noqa: A002
    """The n-d transform over ``dim`` (all dims, or the last ``len(s)``, by
    default), each cropped or zero-padded to ``s``: ``mlfuse.fft.fftn(x, dim=(1, 2))``."""
    return _c2c_api("fftn", input, s, dim, norm, True, out)


def ifftn(input, s=None, dim=None, norm=None, *, out=None) -> ComplexTensor:  # noqa: A002
    """The inverse of :func:`fftn`: ``mlfuse.fft.ifftn(X)``."""
    return _c2c_api("ifftn", input, s, dim, norm, False, out)


def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None) -> ComplexTensor:  # noqa: A002
    """The 2-d transform of a real signal, one-sided along the last of ``dim``:
    ``mlfuse.fft.rfft2(img)``."""
    return _r2c_api("rfft2", input, s, dim, norm, False, out, default_dim=(-2, -1))


def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None) -> Tensor:  # noqa: A002
    """The inverse of :func:`rfft2`, a real tensor: ``mlfuse.fft.irfft2(F, s=img.shape)``."""
    return _c2r_api("irfft2", input, s, dim, norm, False, out, default_dim=(-2, -1))


def rfftn(input, s=None, dim=None, norm=None, *, out=None) -> ComplexTensor:  # noqa: A002
    """The n-d transform of a real signal, one-sided (``s[-1] // 2 + 1`` bins)
    along the last of ``dim``: ``mlfuse.fft.rfftn(vol)``."""
    return _r2c_api("rfftn", input, s, dim, norm, False, out)


def irfftn(input, s=None, dim=None, norm=None, *, out=None) -> Tensor:  # noqa: A002
    """The inverse of :func:`rfftn`, a real tensor (the last of ``dim`` gets
    ``s[-1]`` points, default ``2 * (m - 1)``): ``mlfuse.fft.irfftn(V, s=vol.shape)``."""
    return _c2r_api("irfftn", input, s, dim, norm, False, out)


def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None) -> Tensor:  # noqa: A002
    """The 2-d transform of a Hermitian-symmetric signal given by its half along the
    last of ``dim`` (a real tensor): ``mlfuse.fft.hfft2(x)``."""
    return _c2r_api("hfft2", input, s, dim, norm, True, out, default_dim=(-2, -1))


def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None) -> ComplexTensor:  # noqa: A002
    """The inverse of :func:`hfft2` of a real signal: ``mlfuse.fft.ihfft2(x)``."""
    return _r2c_api("ihfft2", input, s, dim, norm, True, out, default_dim=(-2, -1))


def hfftn(input, s=None, dim=None, norm=None, *, out=None) -> Tensor:  # noqa: A002
    """The n-d transform of a Hermitian-symmetric signal given by its half along the
    last of ``dim``: ``irfftn(conj(x), s)`` with the forward normalization, a real
    tensor: ``mlfuse.fft.hfftn(x)``."""
    return _c2r_api("hfftn", input, s, dim, norm, True, out)


def ihfftn(input, s=None, dim=None, norm=None, *, out=None) -> ComplexTensor:  # noqa: A002
    """The inverse of :func:`hfftn`: ``conj(rfftn(x, s))`` with the backward
    normalization: ``mlfuse.fft.ihfftn(x)``."""
    return _r2c_api("ihfftn", input, s, dim, norm, True, out)


# -- helpers -------------------------------------------------------------------------
def _freqs(fname: str, ints: np.ndarray, n, d, dtype, device, requires_grad) -> Tensor:
    dt = dtypes.default_float if dtype is None else dtypes.as_dtype(dtype)
    if not (dt.is_float or dt.is_complex):
        raise DTypeError(f"{fname} needs a float or complex dtype, got {dt.name}")
    part = dt.to_real if dt.is_complex else dt
    np_dt = np.float32 if part.is_half else np.dtype(part.np).type
    vals = ints.astype(np_dt) * np_dt(1.0 / (n * d) if n else math.nan)  # n = 0: PyTorch's NaN
    t = Tensor(vals, device=device).cast(part)
    if dt.is_complex:
        t = _complex(t, None)
    return t.requires_grad_() if requires_grad else t


def _check_freq_args(fname: str, n, d) -> int:
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise ArgumentTypeError(f"{fname}: n must be an int, got {type(n).__name__}")
    if n < 0:
        raise ArgumentError(f"{fname}: n must be non-negative, got {n}")
    if isinstance(d, Tensor):
        d = d.item()
    if d == 0:
        raise ArgumentError(f"{fname}: the sample spacing d must not be 0")
    return int(n)


def fftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False) -> Tensor:
    """The sample frequencies of :func:`fft`'s bins for ``n`` points spaced ``d``
    apart: ``[0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d * n)``:
    ``mlfuse.fft.fftfreq(8, d=0.1)``."""
    n = _check_freq_args("fftfreq", n, d)
    ints = np.concatenate([np.arange((n + 1) // 2), np.arange(-(n // 2), 0)]).astype(np.int64)
    d = d.item() if isinstance(d, Tensor) else d
    return _freqs("fftfreq", ints, n, d, dtype, device, requires_grad)


def rfftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False) -> Tensor:
    """The sample frequencies of :func:`rfft`'s bins for ``n`` points spaced ``d``
    apart: ``[0, 1, ..., n // 2] / (d * n)``: ``mlfuse.fft.rfftfreq(8)``."""
    n = _check_freq_args("rfftfreq", n, d)
    d = d.item() if isinstance(d, Tensor) else d
    return _freqs("rfftfreq", np.arange(n // 2 + 1), n, d, dtype, device, requires_grad)


def _shift(fname: str, input, dim, sign: int):
    if not isinstance(input, Tensor):
        raise ArgumentTypeError(f"{fname}: input must be a tensor, got {type(input).__name__}")
    ndim = input.ndim
    if dim is None:
        dims = list(range(ndim))
    else:
        dims = [dim] if isinstance(dim, (int, np.integer)) else list(dim)
        dims = [_check_dim(fname, d, ndim) for d in dims]
    if not dims:
        return input
    shifts = [sign * (input.shape[d] // 2) for d in dims]
    return input.roll(shifts, dims)


def fftshift(input, dim=None) -> Tensor:  # noqa: A002
    """Move the zero-frequency bin to the centre (roll each of ``dim``, all dims
    by default, by half its size): ``mlfuse.fft.fftshift(mlfuse.fft.fftfreq(8))``."""
    return _shift("fftshift", input, dim, 1)


def ifftshift(input, dim=None) -> Tensor:  # noqa: A002
    """The inverse of :func:`fftshift` (they differ for odd sizes):
    ``mlfuse.fft.ifftshift(x)``."""
    return _shift("ifftshift", input, dim, -1)
