"""``torch.special``'s functions: ``mlfuse.special.expit(x)``, ``ndtr``, ``log_ndtr``,
``xlog1py``, ``i1``, ``erfcx``, the classical orthogonal polynomials...

Most are the Tensor methods under their SciPy names (``gammaln`` is ``lgamma``,
``expit`` is ``sigmoid``, ``psi`` is ``digamma``); the rest are lazy
compositions of them, so they fuse like any elementwise op and have
gradients through the ops they are made of::

    from mlfuse import special
    special.ndtr(x)            # the standard normal CDF
    special.log_ndtr(x)        # its log, accurate far into the lower tail
    special.xlog1py(x, y)      # x * log1p(y), 0 where x is 0

Not provided: the Bessel functions of the first and second kind (``bessel_j0``,
``bessel_y1``...), ``modified_bessel_k0/k1``, ``airy_ai``, ``gammainc``/
``gammaincc`` and ``zeta``.
"""

from __future__ import annotations

import math

from mlfuse import dtypes
from mlfuse.errors import ArgumentError, DTypeError
from mlfuse.tensor import Tensor

__all__ = [
    "digamma", "psi", "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1",
    "gammaln", "i0", "i0e", "i1", "i1e", "log1p", "log_ndtr", "log_softmax", "logit",
    "logsumexp", "multigammaln", "ndtr", "ndtri", "polygamma", "round", "sinc", "softmax",
    "xlog1py", "xlogy", "modified_bessel_i0", "modified_bessel_i1", "chebyshev_polynomial_t",
    "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
    "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l",
    "legendre_polynomial_p",
]  # fmt: skip

_SQRT2 = math.sqrt(2.0)


def _t(x, like: Tensor | None = None) -> Tensor:
    if isinstance(x, Tensor):
        return x
    return Tensor(x, device=like.device if like is not None else None)


def _float(x) -> Tensor:
    x = _t(x)
    return x if x.dtype.is_float else x.cast(dtypes.default_float)


def _const(v: float, like: Tensor) -> Tensor:
    return Tensor.full((), v, like.dtype, like.device)


# -- the Tensor methods under SciPy's names ------------------------------------------
def erf(input) -> Tensor:  # noqa: A002 - PyTorch's names
    """The error function: ``special.erf(x)``."""
    return _t(input).erf()


def erfc(input) -> Tensor:  # noqa: A002
    """``1 - erf(x)``, accurate in the upper tail: ``special.erfc(x)``."""
    return _t(input).erfc()


def erfinv(input) -> Tensor:  # noqa: A002
    """The inverse error function: ``special.erfinv(x)``."""
    return _t(input).erfinv()


def exp2(input) -> Tensor:  # noqa: A002
    """``2 ** x``: ``special.exp2(x)``."""
    return _t(input).exp2()


def expm1(input) -> Tensor:  # noqa: A002
    """``exp(x) - 1``, accurate near 0: ``special.expm1(x)``."""
    return _t(input).expm1()


def log1p(input) -> Tensor:  # noqa: A002
    """``log(1 + x)``, accurate near 0: ``special.log1p(x)``."""
    return _t(input).log1p()


def expit(input) -> Tensor:  # noqa: A002
    """The logistic sigmoid ``1 / (1 + exp(-x))``: ``special.expit(x)``."""
    return _t(input).sigmoid()


def logit(input, eps=None) -> Tensor:  # noqa: A002
    """``log(p / (1 - p))`` (``p`` clamped to ``[eps, 1 - eps]`` when given):
    ``special.logit(p)``."""
    return _t(input).logit(eps)


def gammaln(input) -> Tensor:  # noqa: A002
    """``log |Gamma(x)|``: ``special.gammaln(x)``."""
    return _t(input).lgamma()


def digamma(input) -> Tensor:  # noqa: A002
    """The logarithmic derivative of Gamma: ``special.digamma(x)``."""
    return _t(input).digamma()


psi = digamma


def polygamma(n: int, input) -> Tensor:  # noqa: A002
    """The ``n``-th derivative of digamma: ``special.polygamma(1, x)``."""
    return _t(input).polygamma(n)


def multigammaln(input, p: int) -> Tensor:  # noqa: A002
    """The multivariate log-gamma of dimension ``p``: ``special.multigammaln(x, 2)``."""
    return _t(input).mvlgamma(p)


def i0(input) -> Tensor:  # noqa: A002
    """The modified Bessel function of the first kind, order 0: ``special.i0(x)``."""
    return _t(input).i0()


modified_bessel_i0 = i0


def sinc(input) -> Tensor:  # noqa: A002
    """``sin(pi x) / (pi x)`` (1 at 0): ``special.sinc(x)``."""
    return _t(input).sinc()


def round(input, decimals: int = 0) -> Tensor:  # noqa: A001, A002
    """Round half to even (to ``decimals`` places): ``special.round(x)``."""
    return _t(input).round(decimals=decimals)


def xlogy(input, other) -> Tensor:  # noqa: A002
    """``x * log(y)``, 0 where ``x`` is 0: ``special.xlogy(x, y)``."""
    return _t(input).xlogy(other)


def softmax(input, dim: int, *, dtype=None) -> Tensor:  # noqa: A002
    """``exp(x) / sum(exp(x))`` along ``dim``: ``special.softmax(x, 1)``."""
    x = _t(input) if dtype is None else _t(input).cast(dtype)
    return x.softmax(dim)


def log_softmax(input, dim: int, *, dtype=None) -> Tensor:  # noqa: A002
    """``log(softmax(x))`` along ``dim``: ``special.log_softmax(x, 1)``."""
    x = _t(input) if dtype is None else _t(input).cast(dtype)
    return x.log_softmax(dim)


def logsumexp(input, dim, keepdim: bool = False) -> Tensor:  # noqa: A002
    """``log(sum(exp(x)))`` along ``dim``: ``special.logsumexp(x, 1)``."""
    return _t(input).logsumexp(dim, keepdim)


# -- compositions ---------------------------------------------------------------------
def entr(input) -> Tensor:  # noqa: A002
    """The elementwise entropy ``-x log x`` (0 at 0, -inf below 0, NaN kept):
    ``special.entr(p)``."""
    x = _float(input)
    pos = x > 0
    inner = -x * pos.where(x, 1.0).log()
    rest = (x == 0).where(0.0, x.isnan().where(x, -math.inf))
    return pos.where(inner, rest)


def ndtr(input) -> Tensor:  # noqa: A002
    """The standard normal CDF ``(1 + erf(x / sqrt 2)) / 2``, through erfc so the
    lower tail keeps its relative accuracy: ``special.ndtr(x)``."""
    x = _float(input)
    return (x * (-1 / _SQRT2)).erfc() * 0.5


def ndtri(input) -> Tensor:  # noqa: A002
    """The inverse of :func:`ndtr`, ``sqrt 2 * erfinv(2p - 1)`` computed in float64
    (``-inf`` at 0, ``inf`` at 1; below p = 1e-8 a float64 result keeps about 8
    digits):
    ``special.ndtri(p)``."""
    p = _float(input)
    wide = p if p.dtype == dtypes.float64 else p.cast(dtypes.float64)  # 2p - 1 near -1
    return ((wide * 2 - 1).erfinv() * _SQRT2).cast(p.dtype)


def log_ndtr(input) -> Tensor:  # noqa: A002
    """``log(ndtr(x))``: from erfc down to x = -10 (``log1p`` of the upper tail
    above 0), and below, the asymptotic series ``-x^2/2 - log(-x sqrt(2 pi)) +
    log(1 - 1/x^2 + 3/x^4 - ...)``, so it stays finite where ndtr underflows:
    ``special.log_ndtr(x)``."""
    x = _float(input)
    upper = (-(x * (1 / _SQRT2)).erfc() * 0.5).log1p()  # x > 0: log(1 - ndtr(-x))
    middle = ((x * (-1 / _SQRT2)).erfc() * 0.5).log()
    far = x < -10
    z = far.where(x, -20.0)
    inv2 = 1 / (z * z)
    series, term = _const(1.0, z), _const(1.0, z)
    for k in range(1, 9):
        term = term * (-(2 * k - 1)) * inv2
        series = series + term
    tail = z * z * -0.5 - (-z * math.sqrt(2 * math.pi)).log() + series.log()
    return far.where(tail, (x > 0).where(upper, middle))


def xlog1py(input, other) -> Tensor:  # noqa: A002
    """``x * log1p(y)``, 0 where ``x`` is 0 (unless ``y`` is NaN):
    ``special.xlog1py(x, y)``."""
    x = _t(input)
    y = _t(other, x)
    if not x.dtype.is_float and not y.dtype.is_float:
        x = x.cast(dtypes.default_float)
    prod = x * y.log1p()
    return ((x == 0) & y.isnan().logical_not()).where(0.0, prod)


def erfcx(input) -> Tensor:  # noqa: A002
    """The scaled complementary error function ``exp(x^2) erfc(x)``: directly up to
    x = 10 (5 below float64), then its asymptotic series ``1 / (x sqrt(pi)) (1 -
    1/(2x^2) + 3/(4x^4) - ...)``, so large arguments do not overflow:
    ``special.erfcx(x)``."""
    x = _float(input)
    far = x > (10 if x.dtype == dtypes.float64 else 5)
    near = far.where(0.0, x)
    direct = (near * near).exp() * near.erfc()
    z = far.where(x, 20.0)
    inv = 1 / (2 * z * z)
    series, term = _const(1.0, z), _const(1.0, z)
    for k in range(1, 9):
        term = term * (-(2 * k - 1)) * inv
        series = series + term
    asym = series / (z * math.sqrt(math.pi))
    return far.where(asym, direct)


def _bessel_i(x: Tensor, order: int, scaled: bool) -> Tensor:
    """I_order(x) for order 0 or 1 (times ``exp(-|x|)`` when ``scaled``): the power
    series up to |x| = 15, the asymptotic series ``e^|x| / sqrt(2 pi |x|) sum_k
    (-1)^k a_k / |x|^k`` above."""
    a = x.abs()
    small = a <= 15
    s = small.where(a, 0.0)
    q = s * s * 0.25
    term = _const(1.0, x) if order == 0 else s * 0.5
    total = term
    for k in range(1, 60):
        term = term * q / (k * (k + order))
        total = total + term
    if scaled:
        total = total * (-s).exp()
    big = small.where(20.0, a)
    inv = 1 / big
    corr, c = _const(1.0, x), 1.0
    mu = 4 * order * order
    for k in range(1, 12):
        c *= -(mu - (2 * k - 1) ** 2) / (8 * k)
        corr = corr + c * inv**k
    lead = 1 / (2 * math.pi * big).sqrt()
    asym = lead * corr if scaled else big.exp() * lead * corr
    out = small.where(total, asym)
    return out if order == 0 else (x < 0).where(-out, out)  # I1 is odd


def i0e(input) -> Tensor:  # noqa: A002
    """``i0(x) * exp(-|x|)``, finite for large |x|: ``special.i0e(x)``."""
    return _bessel_i(_float(input), 0, True)


def i1(input) -> Tensor:  # noqa: A002
    """The modified Bessel function of the first kind, order 1 (relative error
    below 1e-7): ``special.i1(x)``."""
    return _bessel_i(_float(input), 1, False)


modified_bessel_i1 = i1


def i1e(input) -> Tensor:  # noqa: A002
    """``i1(x) * exp(-|x|)``: ``special.i1e(x)``."""
    return _bessel_i(_float(input), 1, True)


# -- orthogonal polynomials -----------------------------------------------------------
def _polynomial(name: str, x, n, p0, p1, step) -> Tensor:
    """The polynomial of degree ``n`` (an int, or an integer tensor broadcast with
    ``x``) at ``x`` by its three-term recurrence ``p_{k+1} = step(k, x, p_k,
    p_{k-1})``; a negative degree gives 0, as PyTorch's."""
    x = _float(x)
    if isinstance(n, Tensor):
        if n.dtype.is_float and not bool((n == n.trunc()).all().item()):
            raise ArgumentError(f"special.{name}: degrees must be whole numbers")
        degrees = n.cast(dtypes.int64)
        top = int(degrees.max().item()) if degrees.numel() else 0
    else:
        if isinstance(n, bool) or not isinstance(n, int):
            raise DTypeError(f"special.{name}: n must be an int or a tensor, got {n!r}")
        degrees, top = None, n
    if top < 0:
        return x * 0
    prev, cur = p0(x), p1(x)
    values = [prev, cur]
    for k in range(1, top):
        prev, cur = cur, step(k, x, cur, prev)
        values.append(cur)
    if degrees is None:
        return values[top]
    out = x * 0
    for k in range(top + 1):
        out = (degrees == k).where(values[k], out)
    return out


def chebyshev_polynomial_t(input, n) -> Tensor:  # noqa: A002
    """Chebyshev T_n(x): ``special.chebyshev_polynomial_t(x, 3)``."""
    return _polynomial("chebyshev_polynomial_t", input, n, lambda x: x * 0 + 1,
                       lambda x: x, lambda k, x, c, p: 2 * x * c - p)  # fmt: skip


def chebyshev_polynomial_u(input, n) -> Tensor:  # noqa: A002
    """Chebyshev U_n(x): ``special.chebyshev_polynomial_u(x, 3)``."""
    return _polynomial("chebyshev_polynomial_u", input, n, lambda x: x * 0 + 1,
                       lambda x: 2 * x, lambda k, x, c, p: 2 * x * c - p)  # fmt: skip


def chebyshev_polynomial_v(input, n) -> Tensor:  # noqa: A002
    """Chebyshev V_n(x) (third kind): ``special.chebyshev_polynomial_v(x, 3)``."""
    return _polynomial("chebyshev_polynomial_v", input, n, lambda x: x * 0 + 1,
                       lambda x: 2 * x - 1, lambda k, x, c, p: 2 * x * c - p)  # fmt: skip


def chebyshev_polynomial_w(input, n) -> Tensor:  # noqa: A002
    """Chebyshev W_n(x) (fourth kind): ``special.chebyshev_polynomial_w(x, 3)``."""
    return _polynomial("chebyshev_polynomial_w", input, n, lambda x: x * 0 + 1,
                       lambda x: 2 * x + 1, lambda k, x, c, p: 2 * x * c - p)  # fmt: skip


def hermite_polynomial_h(input, n) -> Tensor:  # noqa: A002
    """The physicists' Hermite H_n(x): ``special.hermite_polynomial_h(x, 3)``."""
    return _polynomial("hermite_polynomial_h", input, n, lambda x: x * 0 + 1,
                       lambda x: 2 * x, lambda k, x, c, p: 2 * x * c - 2 * k * p)  # fmt: skip


def hermite_polynomial_he(input, n) -> Tensor:  # noqa: A002
    """The probabilists' Hermite He_n(x): ``special.hermite_polynomial_he(x, 3)``."""
    return _polynomial("hermite_polynomial_he", input, n, lambda x: x * 0 + 1,
                       lambda x: x, lambda k, x, c, p: x * c - k * p)  # fmt: skip


def laguerre_polynomial_l(input, n) -> Tensor:  # noqa: A002
    """Laguerre L_n(x): ``special.laguerre_polynomial_l(x, 3)``."""
    return _polynomial(
        "laguerre_polynomial_l", input, n, lambda x: x * 0 + 1, lambda x: 1 - x,
        lambda k, x, c, p: ((2 * k + 1 - x) * c - k * p) / (k + 1),
    )  # fmt: skip


def legendre_polynomial_p(input, n) -> Tensor:  # noqa: A002
    """Legendre P_n(x): ``special.legendre_polynomial_p(x, 3)``."""
    return _polynomial(
        "legendre_polynomial_p", input, n, lambda x: x * 0 + 1, lambda x: x,
        lambda k, x, c, p: ((2 * k + 1) * x * c - k * p) / (k + 1),
    )  # fmt: skip
