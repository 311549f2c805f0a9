"""PyTorch's ``torch.signal.windows`` (SciPy's window functions, with PyTorch's
arguments): ``bartlett``, ``blackman``, ``cosine``, ``exponential``,
``gaussian``, ``general_cosine``, ``general_hamming``, ``hamming``, ``hann``,
``kaiser`` and ``nuttall``::

    w = mlfuse.signal.windows.hann(512, sym=False)      # periodic, for spectra
    w = mlfuse.signal.windows.kaiser(64, beta=8.0, dtype=mlfuse.float64)

Each takes the length ``M`` and the keywords ``sym`` (True: symmetric, for
filter design; False: periodic, the first ``M`` points of the ``M + 1``-point
window, except where PyTorch's formulas differ from that), ``dtype`` (float32
or float64; the default float dtype when None), ``layout`` (strided),
``device`` and ``requires_grad``. The values are computed in float64 on the host
with PyTorch's formulas (its ``linspace`` points included) and rounded once to
``dtype``; the window comes back as a tensor on ``device``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from mlfuse import dtypes, layouts
from mlfuse.errors import ArgumentError
from mlfuse.tensor import Tensor

__all__ = [
    "bartlett",
    "blackman",
    "cosine",
    "exponential",
    "gaussian",
    "general_cosine",
    "general_hamming",
    "hamming",
    "hann",
    "kaiser",
    "nuttall",
]


def _checks(name: str, M, dtype, layout):  # noqa: N803 - PyTorch's name
    """PyTorch's ``_window_function_checks``; returns the dtype to use."""
    if isinstance(M, bool) or not isinstance(M, (int, np.integer)):
        raise TypeError(f"{name}: the window length M must be an int, got {type(M).__name__}")
    if M < 0:
        raise ArgumentError(f"{name} requires non-negative window length, got M={M}")
    if layout is not None and layout is not layouts.strided:
        if isinstance(layout, layouts.layout):
            raise ArgumentError(f"{name} is implemented for strided tensors only, got: {layout}")
        layouts.check_layout(layout, name)
    dt = dtypes.default_float if dtype is None else dtypes.as_dtype(dtype)
    if dt not in (dtypes.float32, dtypes.float64):
        raise ArgumentError(f"{name} expects float32 or float64 dtypes, got: {dt.name}")
    return dt


def _linspace(start: float, end: float, steps: int) -> np.ndarray:
    """``torch.linspace``'s points (the first half counted from ``start``, the
    second from ``end``), in float64."""
    if steps == 1:
        return np.array([start], np.float64)
    step = (end - start) / (steps - 1)
    i = np.arange(steps, dtype=np.float64)
    return np.where(i < steps // 2, start + i * step, end - (steps - 1 - i) * step)


def _out(values: np.ndarray, dt, device, requires_grad: bool) -> Tensor:
    t = Tensor(np.asarray(values, np.float64).reshape(-1), dt, device)
    return t.requires_grad_() if requires_grad else t


def _empty_or_one(M: int, dt, device, requires_grad: bool, one: bool = True):  # noqa: N803
    if M == 0:
        return _out(np.zeros(0), dt, device, requires_grad)
    if M == 1 and one:
        return _out(np.ones(1), dt, device, requires_grad)
    return None


def exponential(
    M: int,  # noqa: N803 - PyTorch's name
    *,
    center: float | None = None,
    tau: float = 1.0,
    sym: bool = True,
    dtype=None,
    layout=None,
    device=None,
    requires_grad: bool = False,
) -> Tensor:
    """The exponential (Poisson) window ``exp(-|n - c| / tau)``, ``c`` the
    ``center`` (``(M - 1) / 2`` when ``sym``, else ``M / 2``; only a periodic
    window takes one): ``exponential(8, tau=2.0)``."""
    dt = _checks("exponential", M, dtype, layout)
    if tau <= 0:
        raise ArgumentError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ArgumentError("Center must be None for symmetric windows")
    if M == 0:
        return _out(np.zeros(0), dt, device, requires_grad)
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    c = 1 / tau
    k = _linspace(-center * c, (-center + (M - 1)) * c, M)
    return _out(np.exp(-np.abs(k)), dt, device, requires_grad)


def cosine(
    M: int,  # noqa: N803 - PyTorch's name
    *,
    sym: bool = True,
    dtype=None,
    layout=None,
    device=None,
    requires_grad: bool = False,
) -> Tensor:
    """The cosine (sine) window ``sin(pi (n + 1/2) / M)`` (``M + 1`` in place of
    ``M`` when periodic): ``cosine(8)``."""
    dt = _checks("cosine", M, dtype, layout)
    if M == 0:
        return _out(np.zeros(0), dt, device, requires_grad)
    c = math.pi / (M + 1 if not sym and M > 1 else M)
    k = _linspace(0.5 * c, (0.5 + (M - 1)) * c, M)
    return _out(np.sin(k), dt, device, requires_grad)


def gaussian(
    M: int,  # noqa: N803 - PyTorch's name
    *,
    std: float = 1.0,
    sym: bool = True,
    dtype=None,
    layout=None,
    device=None,
    requires_grad: bool = False,
) -> Tensor:
    """The Gaussian window ``exp(-((n - (M - 1)/2) / std)^2 / 2)`` (``M`` in place
    of ``M - 1`` when periodic): ``gaussian(8, std=2.0)``."""
    dt = _checks("gaussian", M, dtype, layout)
    if std <= 0:
        raise ArgumentError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return _out(np.zeros(0), dt, device, requires_grad)
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    c = 1 / (std * math.sqrt(2))
    k = _linspace(start * c, (start + (M - 1)) * c, M)
    return _out(np.exp(-(k**2)), dt, device, requires_grad)


def kaiser(
    M: int,  # noqa: N803 - PyTorch's name
    *,
    beta: float = 12.0,
    sym: bool = True,
    dtype=None,
    layout=None,
    device=None,
    requires_grad: bool = False,
) -> Tensor:
    """The Kaiser window ``I0(beta sqrt(1 - (2n/N - 1)^2)) / I0(beta)``, ``N = M - 1``
    (``M`` when periodic), I0 the modified Bessel function: ``kaiser(8, beta=5.0)``."""
    dt = _checks("kaiser", M, dtype, layout)
    if beta < 0:
        raise ArgumentError(f"beta must be non-negative, got: {beta} instead.")
    done = _empty_or_one(M, dt, device, requires_grad)
    if done is not None:
        return done
    beta = float(beta)
    c = 2.0 * beta / (M if not sym else M - 1)
    k = _linspace(-beta, min(beta, -beta + (M - 1) * c), M)
    w = np.i0(np.sqrt(np.clip(beta * beta - k**2, 0.0, None))) / np.i0(beta)
    return _out(w, dt, device, requires_grad)


def general_cosine(
    M: int,  # noqa: N803 - PyTorch's name
    *,
    a: Iterable,
    sym: bool = True,
    dtype=None,
    layout=None,
    device=None,
    requires_grad: bool = False,
) -> Tensor:
    """The generalized cosine window ``sum_i (-1)^i a_i cos(2 pi i n / N)``,
    ``N = M - 1`` (``M`` when periodic), ``a`` a list or tuple of coefficients:
    ``general_cosine(8, a=[0.46, 0.23, 0.31])``."""
    dt = _checks("general_cosine", M, dtype, layout)
    done = _empty_or_one(M, dt, device, requires_grad)
    if done is not None:
        return done
    if not isinstance(a, Iterable) or isinstance(a, (str, bytes)):
        raise TypeError("Coefficients must be a list/tuple")
    coef = [float(x) for x in a]
    if not coef:
        raise ArgumentError("Coefficients cannot be empty")
    c = 2 * math.pi / (M if not sym else M - 1)
    k = _linspace(0.0, (M - 1) * c, M)
    w = sum((-1) ** i * ai * np.cos(i * k) for i, ai in enumerate(coef))
    return _out(w, dt, device, requires_grad)


def general_hamming(
    M: int,  # noqa: N803 - PyTorch's name
    *,
    alpha: float = 0.54,
    sym: bool = True,
    dtype=None,
    layout=None,
    device=None,
    requires_grad: bool = False,
) -> Tensor:
    """The generalized Hamming window ``alpha - (1 - alpha) cos(2 pi n / N)``,
    ``N = M - 1`` (``M`` when periodic): ``general_hamming(8, alpha=0.6)``."""
    return _named_cosine(
        "general_hamming", M, [alpha, 1.0 - alpha], sym, dtype, layout, device, requires_grad
    )


def _named_cosine(name, M, a, sym, dtype, layout, device, requires_grad) -> Tensor:  # noqa: N803
    _checks(name, M, dtype, layout)  # errors name the window asked for
    return general_cosine(
        M, a=a, sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad
    )


def hamming(
    M: int,  # noqa: N803 - PyTorch's name
    *,
    sym: bool = True,
    dtype=None,
    layout=None,
    device=None,
    requires_grad: bool = False,
) -> Tensor:
    """The Hamming window ``0.54 - 0.46 cos(2 pi n / N)``, ``N = M - 1`` (``M``
    when periodic): ``hamming(8)``."""
    return _named_cosine("hamming", M, [0.54, 0.46], sym, dtype, layout, device, requires_grad)


def hann(
    M: int,  # noqa: N803 - PyTorch's name
    *,
    sym: bool = True,
    dtype=None,
    layout=None,
    device=None,
    requires_grad: bool = False,
) -> Tensor:
    """The Hann window ``0.5 - 0.5 cos(2 pi n / N) = sin^2(pi n / N)``, ``N = M - 1``
    (``M`` when periodic): ``hann(8, sym=False)``."""
    return _named_cosine("hann", M, [0.5, 0.5], sym, dtype, layout, device, requires_grad)


def blackman(
    M: int,  # noqa: N803 - PyTorch's name
    *,
    sym: bool = True,
    dtype=None,
    layout=None,
    device=None,
    requires_grad: bool = False,
) -> Tensor:
    """The Blackman window ``0.42 - 0.5 cos(2 pi n / N) + 0.08 cos(4 pi n / N)``,
    ``N = M - 1`` (``M`` when periodic): ``blackman(8)``."""
    return _named_cosine(
        "blackman", M, [0.42, 0.5, 0.08], sym, dtype, layout, device, requires_grad
    )


def nuttall(
    M: int,  # noqa: N803 - PyTorch's name
    *,
    sym: bool = True,
    dtype=None,
    layout=None,
    device=None,
    requires_grad: bool = False,
) -> Tensor:
    """Nuttall's minimum 4-term Blackman-Harris window (coefficients 0.3635819,
    0.4891775, 0.1365995, 0.0106411), ``N = M - 1`` (``M`` when periodic):
    ``nuttall(8)``."""
    a = [0.3635819, 0.4891775, 0.1365995, 0.0106411]
    return _named_cosine("nuttall", M, a, sym, dtype, layout, device, requires_grad)


def bartlett(
    M: int,  # noqa: N803 - PyTorch's name
    *,
    sym: bool = True,
    dtype=None,
    layout=None,
    device=None,
    requires_grad: bool = False,
) -> Tensor:
    """The Bartlett (triangular) window ``1 - |2n/N - 1|``, ``N = M - 1`` (``M``
    when periodic): ``bartlett(8)``."""
    dt = _checks("bartlett", M, dtype, layout)
    done = _empty_or_one(M, dt, device, requires_grad)
    if done is not None:
        return done
    c = 2 / (M if not sym else M - 1)
    k = _linspace(-1.0, -1.0 + (M - 1) * c, M)
    return _out(1 - np.abs(k), dt, device, requires_grad)
