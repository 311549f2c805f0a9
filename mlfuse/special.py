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

The Bessel functions ``bessel_j0/j1/y0/y1``, ``modified_bessel_k0/k1`` (and their
``scaled_`` forms), ``spherical_bessel_j0`` and ``airy_ai`` use Cephes' rational and
Chebyshev approximations; ``gammainc``/``gammaincc`` Temme's uniform expansion, the
power series and Legendre's continued fraction, and the Hurwitz ``zeta``
Euler-Maclaurin summation, all with fixed numbers of terms. They compute in float64,
round back to the input's dtype, and are differentiated by their closed forms
(``airy_ai`` through its ops; ``gammainc``, ``gammaincc`` and ``zeta`` in their second
argument only, as PyTorch's).
"""

from __future__ import annotations

import math

import numpy as np

from mlfuse import dtypes
from mlfuse.errors import ArgumentError, DTypeError, UnsupportedModeError
from mlfuse.tensor import Tensor, _derivative

__all__ = [
    "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w",
    "digamma", "psi", "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1",
    "gammaln", "i0", "i0e", "i1", "i1e", "log1p", "log_ndtr", "log_softmax", "logit",
    "logsumexp", "multigammaln", "ndtr", "ndtri", "polygamma", "round", "sinc", "softmax",
    "xlog1py", "xlogy", "modified_bessel_i0", "modified_bessel_i1", "chebyshev_polynomial_t",
    "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
    "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l",
    "legendre_polynomial_p", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1",
    "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1", "spherical_bessel_j0", "airy_ai", "gammainc", "gammaincc",
    "zeta",
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
    out = far.where(tail, (x > 0).where(upper, middle))
    # d/dx log(ndtr(x)) = pdf / cdf = sqrt(2/pi) / erfcx(-x/sqrt(2)): finite where the
    # branches' erfc underflows (the untaken branches' NaN would reach the gradient)
    return _derivative(
        "log_ndtr",
        out,
        (x,),
        lambda c, g: (g * (math.sqrt(2 / math.pi) / erfcx(c.x * (-1 / _SQRT2))),),
    )


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
    """The polynomial of degree ``n`` (a number, or a tensor broadcast with ``x``)
    at ``x`` by its three-term recurrence ``p_{k+1} = step(k, x, p_k, p_{k-1})``;
    as PyTorch's, a fractional degree is truncated toward zero and a negative one
    gives 0."""
    x = _float(x)
    if isinstance(n, Tensor):
        if n.dtype.is_complex:
            raise DTypeError(f"special.{name}: n must be real, got {n.dtype.name}")
        if n.dtype.is_float and not bool(n.isfinite().all().item()):
            raise ArgumentError(f"special.{name}: degrees must be finite")
        degrees = n.cast(dtypes.int64)
        top = int(degrees.max().item()) if degrees.numel() else 0
    else:
        if isinstance(n, bool) or not isinstance(n, (int, float)) or not math.isfinite(n):
            raise DTypeError(f"special.{name}: n must be a finite number or a tensor, got {n!r}")
        degrees, top = None, int(n)
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


def _shifted(name: str, base):
    def fn(input, n) -> Tensor:  # noqa: A002
        return base(_float(input) * 2 - 1, n)

    fn.__name__ = fn.__qualname__ = name
    kind = name.rsplit("_", 1)[-1].upper()
    fn.__doc__ = (
        f"The shifted Chebyshev polynomial {kind}*_n(x) = {kind}_n(2x - 1), orthogonal on "
        f"[0, 1]: ``special.{name}(x, 3)``."
    )
    return fn


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


# -- Bessel functions, Airy, incomplete gamma and Hurwitz zeta ------------------------
# Each is computed in float64 (whatever the input's float dtype) and rounded back, as
# lgamma is: the approximations are float64 ones, and a float32 result is then the
# float32 rounding of an accurate value.
def _arg(name: str, v, like: Tensor | None = None) -> Tensor:
    """``v`` as a tensor, refusing what is neither a tensor nor numbers."""
    if isinstance(v, Tensor):
        return v
    if isinstance(v, (bool, int, float, np.number, np.ndarray, list, tuple)):
        return Tensor(v, device=like.device if like is not None else None)
    raise TypeError(f"special.{name}: expected a tensor or a number, got {type(v).__name__}")


def _unary64(name: str, input, fn, rule=None) -> Tensor:  # noqa: A002
    """``fn`` of ``input`` in float64, rounded back to its float dtype; ``rule(x, out)``
    (on the input's dtype) is d out / dx when given."""
    x = _float(_arg(name, input))
    out = fn(x) if x.dtype == dtypes.float64 else fn(x.cast(dtypes.float64)).cast(x.dtype)
    if rule is None:
        return out
    return _derivative(name, out, (x,), lambda c, g: (g * rule(c.x, c.out),))


def _binary64(name: str, input, other, fn) -> tuple[Tensor, Tensor, Tensor]:  # noqa: A002
    """``input`` and ``other`` promoted and broadcast to one float dtype (as a binary
    op), and ``fn`` of them in float64, rounded back: ``(a, b, fn(a, b))``."""
    if isinstance(input, Tensor) or not isinstance(other, Tensor):
        a = _arg(name, input)
        _arg(name, other, a)
        a, b = a._operands(other)
    else:
        _arg(name, input, other)
        a, b = other._operands(input, reverse=True)
    if not a.dtype.is_float:
        a, b = a.cast(dtypes.default_float), b.cast(dtypes.default_float)
    if a.dtype == dtypes.float64:
        return a, b, fn(a, b)
    return a, b, fn(a.cast(dtypes.float64), b.cast(dtypes.float64)).cast(a.dtype)


def _second_only(name: str, what: str, d):
    """The gradient rule of ``f(input, other)`` that gives ``other`` ``g * d(input,
    other)`` (``d`` evaluated in float64) and refuses ``input`` where it needs a
    gradient (PyTorch has no derivative there either): ``backward()`` raises, and
    ``gradient()`` (which differentiates with respect to any tensor) gives it NaN."""

    def rule(c, g):
        a, b = c.srcs
        if a.requires_grad:
            raise UnsupportedModeError(
                f"special.{name}: there is no gradient with respect to {what} (PyTorch "
                "has none either); detach it"
            )
        if b.dtype == dtypes.float64:
            return (g * math.nan, g * d(a, b))
        db = d(a.cast(dtypes.float64), b.cast(dtypes.float64)).cast(b.dtype)
        return (g * math.nan, g * db)

    return rule


def _polevl(z: Tensor, coefs, monic: bool = False) -> Tensor:
    """The polynomial with ``coefs`` (highest degree first) at ``z`` by Horner's rule;
    ``monic``: with a leading coefficient 1 before them (Cephes' ``p1evl``)."""
    out = z + coefs[0] if monic else _const(coefs[0], z)
    for c in coefs[1:]:
        out = out * z + c
    return out


def _chbevl(y: Tensor, coefs) -> Tensor:
    """The Chebyshev series ``coefs`` at ``y / 2`` (Cephes' ``chbevl``)."""
    b0, b1, b2 = _const(coefs[0], y), _const(0.0, y), _const(0.0, y)
    for c in coefs[1:]:
        b2, b1 = b1, b0
        b0 = y * b1 - b2 + c
    return (b0 - b2) * 0.5


# Cephes' j0.c, j1.c (Moshier): rational approximations on [0, 5], and the modulus and
# phase corrections P, Q in (5 / x)^2 of the asymptotic form above
# fmt: off
_J0_RP = (-4.79443220978201773821e9, 1.95617491946556577543e12, -2.49248344360967716204e14,
          9.70862251047306323952e15)
_J0_RQ = (4.99563147152651017219e2, 1.73785401676374683123e5, 4.84409658339962045305e7,
          1.11855537045356834862e10, 2.11277520115489217587e12, 3.10518229857422583814e14,
          3.18121955943204943306e16, 1.71086294081043136091e18)
_J0_PP = (7.96936729297347051624e-4, 8.28352392107440799803e-2, 1.23953371646414299388e0,
          5.44725003058768775090e0, 8.74716500199817011941e0, 5.30324038235394892183e0,
          9.99999999999999997821e-1)
_J0_PQ = (9.24408810558863637013e-4, 8.56288474354474431428e-2, 1.25352743901058953537e0,
          5.47097740330417105182e0, 8.76190883237069594232e0, 5.30605288235394617618e0,
          1.00000000000000000218e0)
_J0_QP = (-1.13663838898469149931e-2, -1.28252718670509318512e0, -1.95539544257735972385e1,
          -9.32060152123768231369e1, -1.77681167980488050595e2, -1.47077505154951170175e2,
          -5.14105326766599330220e1, -6.05014350600728481186e0)
_J0_QQ = (6.43178256118178023184e1, 8.56430025976980587198e2, 3.88240183605401609683e3,
          7.24046774195652478189e3, 5.93072701187316984827e3, 2.06209331660327847417e3,
          2.42005740240291393179e2)
_Y0_YP = (1.55924367855235737965e4, -1.46639295903971606143e7, 5.43526477051876500413e9,
          -9.82136065717911466409e11, 8.75906394395366999549e13, -3.46628303384729719441e15,
          4.42733268572569800351e16, -1.84950800436986690637e16)
_Y0_YQ = (1.04128353664259848412e3, 6.26107330137134956842e5, 2.68919633393814121987e8,
          8.64002487103935000337e10, 2.02979612750105546709e13, 3.17157752842975028269e15,
          2.50596256172653059228e17)
_J1_RP = (-8.99971225705559398224e8, 4.52228297998194034323e11, -7.27494245221818276015e13,
          3.68295732863852883286e15)
_J1_RQ = (6.20836478118054335476e2, 2.56987256757748830383e5, 8.35146791431949253037e7,
          2.21511595479792499675e10, 4.74914122079991414898e12, 7.84369607876235854894e14,
          8.95222336184627338078e16, 5.32278620332680085395e18)
_J1_PP = (7.62125616208173112003e-4, 7.31397056940917570436e-2, 1.12719608129684925192e0,
          5.11207951146807644818e0, 8.42404590141772420927e0, 5.21451598682361504063e0,
          1.00000000000000000254e0)
_J1_PQ = (5.71323128072548699714e-4, 6.88455908754495404082e-2, 1.10514232634061696926e0,
          5.07386386128601488557e0, 8.39985554327604159757e0, 5.20982848682361821619e0,
          9.99999999999999997461e-1)
_J1_QP = (5.10862594750176621635e-2, 4.98213872951233449420e0, 7.58238284132545283818e1,
          3.66779609360150777800e2, 7.10856304998926107277e2, 5.97489612400613639965e2,
          2.11688757100572135698e2, 2.52070205858023719784e1)
_J1_QQ = (7.42373277035675149943e1, 1.05644886038262816351e3, 4.98641058337653607651e3,
          9.56231892404756170795e3, 7.99704160447350683650e3, 2.82619278517639096600e3,
          3.36093607810698293419e2)
_Y1_YP = (1.26320474790178026440e9, -6.47355876379160291031e11, 1.14509511541823727583e14,
          -8.12770255501325109621e15, 2.02439475713594898196e17, -7.78877196265950026825e17)
_Y1_YQ = (5.94301592346128195359e2, 2.35564092943068577943e5, 7.34811944459721705660e7,
          1.87601316108706159478e10, 3.88231277496238566008e12, 6.20557727146953693363e14,
          6.87141087355300489866e16, 3.97270608116560655612e18)
# fmt: on
_J0_Z1, _J0_Z2 = 5.78318596294678452118e0, 3.04712623436620863991e1  # squares of zeros
_J1_Z1, _J1_Z2 = 1.46819706421238932572e1, 4.92184563216946036703e1
_TWO_OVER_PI = 2 / math.pi
_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)


def _bessel_jy(x: Tensor, order: int, second: bool) -> Tensor:
    """J_order(x) (Y_order(x) with ``second``), order 0 or 1, on float64 ``x``: Cephes'
    rational approximations up to |x| = 5, above the asymptotic form ``sqrt(2 / (pi
    x)) (P cos(x - phi) - (5/x) Q sin(x - phi))`` (sin and cos swapped for Y) with
    ``cos(x - pi/4) = (cos x + sin x) / sqrt 2``..., so large x keeps its phase."""
    ax = x.abs()
    small = ax <= 5
    s = small.where(ax, 1.0)
    z = s * s
    if order == 0:
        j = (z - _J0_Z1) * (z - _J0_Z2) * _polevl(z, _J0_RP) / _polevl(z, _J0_RQ, True)
        j = (s < 1e-5).where(1 - z * 0.25, j)
        near = _polevl(z, _Y0_YP) / _polevl(z, _Y0_YQ, True) + _TWO_OVER_PI * s.log() * j
    else:
        j = _polevl(z, _J1_RP) / _polevl(z, _J1_RQ, True) * s * (z - _J1_Z1) * (z - _J1_Z2)
        near = s * (_polevl(z, _Y1_YP) / _polevl(z, _Y1_YQ, True)) + _TWO_OVER_PI * (
            j * s.log() - 1 / s
        )
    if not second:
        near = j
    big = small.logical_not() & (ax != math.inf)
    b = big.where(ax, 8.0)
    w = 5 / b
    q = w * w
    pp, pq, qp, qq = (_J0_PP, _J0_PQ, _J0_QP, _J0_QQ) if order == 0 else (
        _J1_PP, _J1_PQ, _J1_QP, _J1_QQ)  # fmt: skip
    p = _polevl(q, pp) / _polevl(q, pq)
    qv = w * _polevl(q, qp) / _polevl(q, qq, True)
    c, sn = b.cos(), b.sin()
    h = math.sqrt(0.5)
    if order == 0:  # x - pi/4
        cos_ph, sin_ph = (c + sn) * h, (sn - c) * h
    else:  # x - 3 pi/4
        cos_ph, sin_ph = (sn - c) * h, -(sn + c) * h
    far = p * sin_ph + qv * cos_ph if second else p * cos_ph - qv * sin_ph
    far = far * _SQRT_2_OVER_PI / b.sqrt()
    out = small.where(near, big.where(far, x.isnan().where(x, 0.0)))  # 0 at +-inf
    if second:
        out = (x == 0).where(-math.inf, (x < 0).where(math.nan, out))
    elif order == 1:
        out = (x < 0).where(-out, out)  # J1 is odd
    return out


def bessel_j0(input) -> Tensor:  # noqa: A002
    """The Bessel function of the first kind of order 0 (Cephes' approximations; in
    float64 an absolute error below 1e-15 of its envelope ``min(1, sqrt(2 / (pi |x|)))``):
    ``special.bessel_j0(x)``."""
    return _unary64("bessel_j0", input, lambda x: _bessel_jy(x, 0, False),
                    lambda x, out: -bessel_j1(x))  # fmt: skip


def bessel_j1(input) -> Tensor:  # noqa: A002
    """The Bessel function of the first kind of order 1: ``special.bessel_j1(x)``."""

    def d(x, out):  # J1' = J0 - J1 / x, 1/2 at 0
        zero = x == 0
        return zero.where(0.5, bessel_j0(x) - out / zero.where(1.0, x))

    return _unary64("bessel_j1", input, lambda x: _bessel_jy(x, 1, False), d)


def bessel_y0(input) -> Tensor:  # noqa: A002
    """The Bessel function of the second kind of order 0 (-inf at 0, NaN below):
    ``special.bessel_y0(x)``."""
    return _unary64("bessel_y0", input, lambda x: _bessel_jy(x, 0, True),
                    lambda x, out: -bessel_y1(x))  # fmt: skip


def bessel_y1(input) -> Tensor:  # noqa: A002
    """The Bessel function of the second kind of order 1 (-inf at 0, NaN below):
    ``special.bessel_y1(x)``."""
    return _unary64("bessel_y1", input, lambda x: _bessel_jy(x, 1, True),
                    lambda x, out: bessel_y0(x) - out / x)  # fmt: skip


# Cephes' k0.c, k1.c: Chebyshev coefficients of K(x) + log(x/2) I(x) on [0, 2] (in
# x^2 - 2) and of e^x sqrt(x) K(x) above 2 (in 8/x - 2)
# fmt: off
_K0_A = (1.37446543561352307156e-16, 4.25981614279661018399e-14, 1.03496952576338420167e-11,
         1.90451637722020886025e-9, 2.53479107902614945675e-7, 2.28621210311945178607e-5,
         1.26461541144692592338e-3, 3.59799365153615016266e-2, 3.44289899924628486886e-1,
         -5.35327393233902768720e-1)
_K0_B = (5.30043377268626276149e-18, -1.64758043015242134646e-17, 5.21039150503902756861e-17,
         -1.67823109680541210385e-16, 5.51205597852431940784e-16, -1.84859337734377901440e-15,
         6.34007647740507060557e-15, -2.22751332699166985548e-14, 8.03289077536357521100e-14,
         -2.98009692317273043925e-13, 1.14034058820847496303e-12, -4.51459788337394416547e-12,
         1.85594911495471785253e-11, -7.95748924447710747776e-11, 3.57739728140030116597e-10,
         -1.69753450938905987466e-9, 8.57403401741422608519e-9, -4.66048989768794782956e-8,
         2.76681363944501510342e-7, -1.83175552271911948767e-6, 1.39498137188764993662e-5,
         -1.28495495816278026384e-4, 1.56988388573005337491e-3, -3.14481013119645005427e-2,
         2.44030308206595545468e0)
_K1_A = (-7.02386347938628759343e-18, -2.42744985051936593393e-15, -6.66690169419932900609e-13,
         -1.41148839263352776110e-10, -2.21338763073472585583e-8, -2.43340614156596823496e-6,
         -1.73028895751305206302e-4, -6.97572385963986435018e-3, -1.22611180822657148235e-1,
         -3.53155960776544875667e-1, 1.52530022733894777053e0)
_K1_B = (-5.75674448366501715755e-18, 1.79405087314755922667e-17, -5.68946255844285935196e-17,
         1.83809354436663880070e-16, -6.05704724837331885336e-16, 2.03870316562433424052e-15,
         -7.01983709041831346144e-15, 2.47715442448130437068e-14, -8.97670518232499435011e-14,
         3.34841966607842919884e-13, -1.28917396095102890680e-12, 5.13963967348173025100e-12,
         -2.12996783842756842877e-11, 9.21831518760500529508e-11, -4.19035475934189648750e-10,
         2.01504975519703286596e-9, -1.03457624656780970260e-8, 5.74108412545004946722e-8,
         -3.50196060308781257119e-7, 2.40648494783721712015e-6, -1.93619797416608296024e-5,
         1.95215518471351631108e-4, -2.85781685962277938680e-3, 1.03923736576817238437e-1,
         2.72062619048444266945e0)
# fmt: on


def _bessel_k(x: Tensor, order: int, scaled: bool) -> Tensor:
    """K_order(x) (times e^x when ``scaled``) on float64 ``x`` by Cephes' Chebyshev
    expansions: ``chb(x^2 - 2) - log(x/2) I0(x)`` (``log(x/2) I1(x) + chb(x^2 - 2) / x``
    for K1) up to 2 with I's power series, ``e^-x chb(8/x - 2) / sqrt x`` above; inf at
    0, NaN below."""
    small = x <= 2
    s = small.where(x, 1.0)
    q = s * s * 0.25
    term = _const(1.0, s) if order == 0 else s * 0.5
    i = term
    for k in range(1, 18):  # (1/4)^k / (k! (k + order)!) is below 1e-17 of the sum by then
        term = term * q / (k * (k + order))
        i = i + term
    y = s * s - 2
    if order == 0:
        near = _chbevl(y, _K0_A) - (s * 0.5).log() * i
    else:
        near = (s * 0.5).log() * i + _chbevl(y, _K1_A) / s
    if scaled:
        near = near * s.exp()
    b = (x > 2).where(x, 3.0)
    far = _chbevl(8 / b - 2, _K0_B if order == 0 else _K1_B) / b.sqrt()
    if not scaled:
        far = far * (-b).exp()
    out = small.where(near, far)
    out = (x == 0).where(math.inf, (x < 0).where(math.nan, out))
    return x.isnan().where(x, out)


def modified_bessel_k0(input) -> Tensor:  # noqa: A002
    """The modified Bessel function of the second kind of order 0 (inf at 0, NaN below):
    ``special.modified_bessel_k0(x)``."""
    return _unary64("modified_bessel_k0", input, lambda x: _bessel_k(x, 0, False),
                    lambda x, out: -modified_bessel_k1(x))  # fmt: skip


def modified_bessel_k1(input) -> Tensor:  # noqa: A002
    """The modified Bessel function of the second kind of order 1 (inf at 0, NaN below):
    ``special.modified_bessel_k1(x)``."""
    return _unary64("modified_bessel_k1", input, lambda x: _bessel_k(x, 1, False),
                    lambda x, out: -modified_bessel_k0(x) - out / x)  # fmt: skip


def scaled_modified_bessel_k0(input) -> Tensor:  # noqa: A002
    """``e^x K0(x)``, finite for large x: ``special.scaled_modified_bessel_k0(x)``."""
    return _unary64(
        "scaled_modified_bessel_k0", input, lambda x: _bessel_k(x, 0, True),
        lambda x, out: out - scaled_modified_bessel_k1(x),
    )  # fmt: skip


def scaled_modified_bessel_k1(input) -> Tensor:  # noqa: A002
    """``e^x K1(x)``, finite for large x: ``special.scaled_modified_bessel_k1(x)``."""
    return _unary64(
        "scaled_modified_bessel_k1", input, lambda x: _bessel_k(x, 1, True),
        lambda x, out: out - scaled_modified_bessel_k0(x) - out / x,
    )  # fmt: skip


def spherical_bessel_j0(input) -> Tensor:  # noqa: A002
    """The spherical Bessel function ``j0(x) = sin(x) / x``, its Taylor series below
    |x| = 0.5 (1 at 0, 0 at +-inf): ``special.spherical_bessel_j0(x)``."""

    def f(x: Tensor) -> Tensor:
        near = x.abs() < 0.5
        s = near.where(x, 0.0)
        z = s * s
        series = _const(1 / 6227020800, s)
        for n in (39916800, 362880, 5040, 120, 6):
            series = series * -z + 1 / n
        series = 1 - z * series
        b = (near | (x.abs() == math.inf)).where(1.0, x)
        return near.where(series, (x.abs() == math.inf).where(0.0, b.sin() / b))

    def d(x: Tensor, out: Tensor) -> Tensor:  # (cos x - j0(x)) / x, -x/3 + x^3/30... near 0
        near = x.abs() < 0.5
        s = near.where(x, 0.0)
        z = s * s
        series = s * (
            -1 / 3
            + z * (1 / 30 + z * (-1 / 840 + z * (1 / 45360 + z * (-1 / 3991680 + z / 518918400))))
        )
        b = near.where(1.0, x)
        return near.where(series, (b.cos() - out) / b)

    return _unary64("spherical_bessel_j0", input, f, d)


# Cephes' airy.c: Ai above 2.09 is e^-zeta sqrt(1/pi) AN(1/zeta) / (2 x^1/4 AD(1/zeta)),
# below -2.09 the modulus and phase corrections AF, AG in 1/zeta^2 (zeta = 2/3 |x|^3/2)
# fmt: off
_AI_AN = (3.46538101525629032477e-1, 1.20075952739645805542e1, 7.62796053615234516538e1,
          1.68089224934630576269e2, 1.59756391350164413639e2, 7.05360906840444183113e1,
          1.40264691163389668864e1, 9.99999999999999995305e-1)
_AI_AD = (5.67594532638770212846e-1, 1.47562562584847203173e1, 8.45138970141474626562e1,
          1.77318088145400459522e2, 1.64234692871529701831e2, 7.14778400825575695274e1,
          1.40959135607834029598e1, 1.00000000000000000470e0)
_AI_AFN = (-1.31696323418331795333e-1, -6.26456544431912369773e-1, -6.93158036036933542233e-1,
           -2.79779981545119124951e-1, -4.91900132609500318020e-2, -4.06265923594885404393e-3,
           -1.59276496239262096340e-4, -2.77649108155232920844e-6, -1.67787698489114633780e-8)
_AI_AFD = (1.33560420706553243746e1, 3.26825032795224613948e1, 2.67367040941499554804e1,
           9.18707402907259625840e0, 1.47529146771666414581e0, 1.15687173795188044134e-1,
           4.40291641615211203805e-3, 7.54720348287414296618e-5, 4.51850092970580378464e-7)
_AI_AGN = (1.97339932091685679179e-2, 3.91103029615688277255e-1, 1.06579897599595591108e0,
           9.39169229816650230044e-1, 3.51465656105547619242e-1, 6.33888919628925490927e-2,
           5.85804113048388458567e-3, 2.82851600836737019778e-4, 6.98793669997260967291e-6,
           8.11789239554389293311e-8, 3.41551784765923618484e-10)
_AI_AGD = (9.30892908077441974853e0, 1.98352928718312140417e1, 1.55646628932864612953e1,
           5.47686069422975497931e0, 9.54293611618961883998e-1, 8.64580826352392193095e-2,
           4.12656523824222607191e-3, 1.01259085116509135510e-4, 1.17166733214413521882e-6,
           4.91834570062930015649e-9)
# fmt: on
_AI_C1, _AI_C2 = 0.355028053887817239260, 0.258819403792806798405  # Ai(0), -Ai'(0)
_SQRT_1_OVER_PI = 1 / math.sqrt(math.pi)


def _airy_ai(x: Tensor) -> Tensor:
    """Ai(x) on float64 ``x``: the Maclaurin series ``c1 f(x) - c2 g(x)`` on (-2.09,
    2.09), Cephes' rational approximations of the asymptotic forms outside; each branch
    sees only its own arguments, so the gradient through them is finite."""
    neg = x < -2.09
    pos = x >= 2.09
    mid = neg.logical_not() & pos.logical_not()
    # the series (16 terms: the last is below 1e-19 of the sum at |x| = 2.09)
    s = mid.where(x, 0.0)
    z = s * s * s
    f, g = _const(1.0, s), s
    m, n = _const(1.0, s), s
    k = 1
    for _ in range(16):
        m = m * z / ((k + 1) * (k + 2))
        n = n * z / ((k + 2) * (k + 3))
        k += 3
        f, g = f + m, g + n
    series = f * _AI_C1 - g * _AI_C2
    # below -2.09: (sin(theta) (1 + zz AF) - cos(theta) z AG) / (sqrt(pi) |x|^1/4)
    t = neg.where(-x, 3.0)
    rt = t.sqrt()
    zeta = t * rt * (2 / 3)
    zi = 1 / zeta
    zz = zi * zi
    uf = 1 + zz * _polevl(zz, _AI_AFN) / _polevl(zz, _AI_AFD, True)
    ug = zi * _polevl(zz, _AI_AGN) / _polevl(zz, _AI_AGD, True)
    # sin/cos(zeta + pi/4) from sin/cos(zeta)
    c, sn = zeta.cos(), zeta.sin()
    h = math.sqrt(0.5)
    low = (((sn + c) * uf - (c - sn) * ug) * h) * _SQRT_1_OVER_PI / rt.sqrt()
    low = (x == -math.inf).where(0.0, low)
    # above 2.09: decays as e^-zeta, 0 from x = 104 on
    u = pos.where(x, 3.0).minimum(110.0)
    ru = u.sqrt()
    zp = u * ru * (2 / 3)
    zpi = 1 / zp
    high = (
        _polevl(zpi, _AI_AN)
        / _polevl(zpi, _AI_AD)
        * (-zp).exp()
        * (0.5 * _SQRT_1_OVER_PI)
        / ru.sqrt()
    )
    return mid.where(series, neg.where(low, pos.where(high, x)))


def airy_ai(input) -> Tensor:  # noqa: A002
    """The Airy function Ai (0 at +-inf; Cephes' approximations: in float64 about 1e-15
    of its envelope, less far below 0 where the phase ``2/3 |x|^1.5`` is rounded):
    ``special.airy_ai(x)``."""
    return _unary64("airy_ai", input, _airy_ai)


# -- the regularized incomplete gamma functions -----------------------------------------
# Temme's uniform expansion (DLMF 8.12.8; Cephes' and Boost's igam): the Taylor
# coefficients d[k][n] of c_k(eta) = sum_n d[k][n] eta^n, those rows and terms that reach
# 1e-17 for a >= 12 and |eta| <= 0.9
# fmt: off
_TEMME = (
    (-0.3333333333333333, 0.08333333333333333, -0.014814814814814815, 0.0011574074074074073,
     0.0003527336860670194, -0.0001787551440329218, 3.919263178522438e-05,
     -2.1854485106799924e-06, -1.85406221071516e-06, 8.296711340953087e-07,
     -1.7665952736826078e-07, 6.707853543401498e-09, 1.0261809784240309e-08,
     -4.382036018453353e-09, 9.14769958223679e-10, -2.551419399494625e-11,
     -5.830772132550426e-11, 2.4361948020667415e-11, -5.0276692801141755e-12,
     1.1004392031956135e-13, 3.3717632624009856e-13, -1.392388722418162e-13,
     2.8534893807047445e-14, -5.139111834242572e-16, -1.9752288294349442e-15),
    (-0.001851851851851852, -0.003472222222222222, 0.0026455026455026454,
     -0.0009902263374485596, 0.00020576131687242798, -4.018775720164609e-07,
     -1.8098550334489977e-05, 7.64916091608111e-06, -1.6120900894563446e-06,
     4.647127802807434e-09, 1.378633446915721e-07, -5.752545603517705e-08,
     1.1951628599778148e-08, -1.7543241719747647e-11, -1.0091543710600413e-09,
     4.162792991842583e-10, -8.56390702649298e-11, 6.067215101604758e-14,
     7.1624989648114856e-12, -2.933186643771437e-12, 5.996696365683689e-13,
     -2.1671786527323313e-16, -4.978339972369262e-14, 2.0291628823713425e-14,
     -4.13125571381061e-15),
    (0.004133597883597883, -0.0026813271604938273, 0.0007716049382716049,
     2.0093878600823047e-06, -0.00010736653226365161, 5.2923448829120125e-05,
     -1.2760635188618728e-05, 3.423578734096138e-08, 1.3721957309062932e-06,
     -6.298992138380055e-07, 1.4280614206064242e-07, -2.0477098421990866e-10,
     -1.409252991086752e-08, 6.228974084922022e-09, -1.3670488396617112e-09,
     9.428356159014678e-13, 1.2872252400089318e-10, -5.5645956134363323e-11,
     1.197593554636698e-11, -4.1689782251838634e-15, -1.0940640427884595e-12,
     4.662239946390136e-13, -9.905105763906907e-14),
    (0.0006494341563786008, 0.00022947209362139917, -0.0004691894943952557,
     0.00026772063206283885, -7.561801671883977e-05, -2.396505113867297e-07,
     1.1082654115347302e-05, -5.6749528269915965e-06, 1.4230900732435883e-06,
     -2.7861080291528143e-11, -1.6958404091930278e-07, 8.099464905388083e-08,
     -1.9111168485973655e-08, 2.3928620439808118e-12, 2.0620131815488797e-09,
     -9.460496661855133e-10, 2.1541049775774907e-10, -1.388823336813903e-14,
     -2.1894761681963938e-11, 9.790998951171684e-12, -2.178219188018096e-12,
     6.208819573407901e-17, 2.126978363279737e-13),
    (-0.0008618882909167117, 0.0007840392217200666, -0.0002990724803031902,
     -1.4638452578843418e-06, 6.641498215465122e-05, -3.968365047179435e-05,
     1.1375726970678419e-05, 2.507497226237533e-10, -1.6954149536558305e-06,
     8.907507532205309e-07, -2.292934834000805e-07, 2.956794137544049e-11,
     2.8865829742708783e-08, -1.4189739437803219e-08, 3.4463580499464896e-09,
     -2.3024517174528067e-13, -3.9409233028046403e-10, 1.86023389685045e-10,
     -4.356323005056618e-11, 1.278600101629623e-15, 4.67927502665792e-12,
     -2.149246470613483e-12),
    (-0.00033679855336635813, -6.972813758365858e-05, 0.0002772753244959392,
     -0.00019932570516188847, 6.797780477937208e-05, 1.419062920643967e-07,
     -1.3594048189768693e-05, 8.018470256334202e-06, -2.291481176508095e-06,
     -3.252473551298454e-10, 3.4652846491085265e-07, -1.8447187191171344e-07,
     4.8240967037894184e-08, -1.7989466721743514e-14, -6.306194500013523e-09,
     3.162417628774568e-09, -7.840924253697429e-10, 5.192679165254041e-15,
     9.358944242306784e-11, -4.513426216163278e-11),
    (0.0005313079364639922, -0.0005921664373536939, 0.0002708782096718045,
     7.902353232660328e-07, -8.153969367561969e-05, 5.61168275310625e-05,
     -1.8329116582843375e-05, -3.0796134506033047e-09, 3.465155368803609e-06,
     -2.0291327396058603e-06, 5.788792863149004e-07, 2.338630673826657e-13,
     -8.828600746330484e-08, 4.7435958880408125e-08, -1.2545415020710382e-08,
     8.649648858010293e-14, 1.6846058979264062e-09, -8.575492823577594e-10,
     2.1598224929232125e-10),
    (0.00034436760689237765, 5.171790908260592e-05, -0.00033493161081142234,
     0.0002812695154763237, -0.00010976582244684731, -1.2741009095484485e-07,
     2.7744451511563645e-05, -1.8263488805711332e-05, 5.7876949497350525e-06,
     4.93875893393627e-10, -1.0595367014026043e-06, 6.166714376110408e-07,
     -1.7562973359060463e-07, -1.297447328701544e-12, 2.695423606288966e-08,
     -1.4578352908731272e-08, 3.887645959386175e-09),
    (-0.0006526239185953094, 0.0008394987206720873, -0.000438297098541721,
     -6.969091458420552e-07, 0.00016644846642067547, -0.00012783517679769218,
     4.629953263691304e-05, 4.557909867922708e-09, -1.0595271125805195e-05,
     6.783342904865167e-06, -2.1075476666258803e-06, -1.7213731432817144e-11,
     3.773587741611098e-07, -2.1867506700122867e-07, 6.220228804018927e-08),
    (-0.0005967612901927463, -7.204895416020011e-05, 0.0006782308837667328,
     -0.0006401475260262758, 0.00027750107634328704, 1.819700838046515e-07,
     -8.479507117068503e-05, 6.105192082501531e-05, -2.1073920183404862e-05,
     -8.858589014125599e-10, 4.5284535953805374e-06, -2.8427815022504407e-06,
     8.708234177864641e-07),
    (0.0013324454494800656, -0.0019144384985654776, 0.0011089369134596636, 9.9324041226423e-07,
     -0.0005087450129309319, 0.00042735056665392886, -0.000168588537679108,
     -8.1301893922785e-09, 4.5284402370562144e-05, -3.127053674781734e-05,
     1.044986828530338e-05),
    (0.001579727660730835, 0.00016251626278391583, -0.0020633421035543276, 0.00213896861856891,
     -0.0010108559391263003, -3.99127055299192e-07, 0.0003623502508476469,
     -0.00028143901463712157, 0.00010449513336495887, 2.12114184918303e-09,
     -2.5779417251947842e-05),
    (-0.004072512119514016, 0.00640336283380807, -0.004041016108167662, -2.183732802866233e-06,
     0.002174044180125464, -0.001970044051841889, 0.0008359546974796246,
     1.9445447567109655e-08, -0.000257793871204217),
    (-0.0059475779383993, -0.0005401647678926045, 0.00879104135507679, -0.009857631558785612,
     0.005013469503102154, 1.2807521786221875e-06, -0.0020626019342754685),
    (0.01740202778752271, -0.029527880945699123, 0.020045875571402798),
)
# fmt: on
_IGAM_TEMME_A = 12.0  # Temme's expansion from this a on, where |eta| <= _IGAM_TEMME_ETA
_IGAM_TEMME_ETA = 0.9
_IGAM_SMALL_X = 3.0  # Q by its own series (DLMF 8.7.3) at or below this x
_IGAM_SERIES_TERMS = 44
_IGAM_QSERIES_TERMS = 34
_IGAM_CF_TERMS = 34
_EULER = 0.5772156649015329
# zeta(2) ... zeta(6)
_ZETA_INT = (math.pi**2 / 6, 1.2020569031595942, math.pi**4 / 90, 1.0369277551433699,
             math.pi**6 / 945)  # fmt: skip
# Stirling's series of lgamma(a) - ((a - 1/2) log a - a + log(2 pi) / 2), from a = 12
_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156)


def _igamma_pq(a: Tensor, x: Tensor) -> tuple[Tensor, Tensor]:
    """P(a, x) and Q(a, x), each to its own relative accuracy, on float64 tensors of
    one shape, for ``a > 0`` and ``x > 0`` finite (the edges are the caller's):

    - Temme's uniform expansion for ``a >= 12`` and ``|eta| <= 0.9`` (x / a in about
      [0.35, 2.17]), ``eta^2 / 2 = x/a - 1 - log(x/a)``;
    - elsewhere P by its power series (DLMF 8.11.4) where ``x < a + 1`` or ``x <= 3``,
      else ``1 - Q``; Q by its own series (DLMF 8.7.3) for ``x <= 3`` where P is near 1
      (Cephes' choice), by Legendre's continued fraction (DLMF 8.9.2, modified Lentz)
      where ``x >= a + 1``, else ``1 - P``.

    Every branch converges within its fixed number of terms (44 of P's series: x / (a
    + n) <= 0.35 for large a, x < 13 below; 34 of Q's: x <= 3; 34 of the fraction: x >
    3), and the factor ``x^a e^-x / Gamma(a)`` is ``exp(a (log(x/a) - (x-a)/a)) sqrt(a /
    2 pi) / e^(Stirling series)`` from a = 12, so its error is the rounding of log(x/a)
    times a: about 2e-13 relative at a = 1e3."""
    big_a = a >= _IGAM_TEMME_A
    ab = big_a.where(a, _IGAM_TEMME_A)
    sig = (x - ab) / ab
    # a (log(x/a) - sigma) = -a eta^2 / 2, from log1p where x is near a
    lr = (sig.abs() < 0.25).where(sig.log1p(), (x / ab).log())
    dev = (sig - lr).maximum(0.0)  # eta^2 / 2
    inv = 1 / ab
    inv2 = inv * inv
    stirling = _const(_STIRLING[-1], ab)
    for c in reversed(_STIRLING[:-1]):
        stirling = stirling * inv2 + c
    stirling = stirling * inv
    big_pref = (-ab * dev - stirling).exp() * (ab * (1 / (2 * math.pi))).sqrt()
    # below a = 12: x^a e^-x / Gamma(a + 1) from lgamma
    a_s = big_a.where(1.0, a)
    u = a_s + 1
    # lgamma(1 + a) for a < 1: lgamma of the rounded u = 1 + a, plus the rounding error
    # (TwoSum's) times digamma(1 + a) (its Taylor series to a^5); without it Q(1e-3, 3)
    # would lose 4 digits and Q(1e-20, 2) all
    small_a = a_s < 1
    err = small_a.where(a_s - (u - 1), 0.0)
    psi = _const(_ZETA_INT[-1], u)
    for z in reversed(_ZETA_INT[:-1]):
        psi = psi * -a_s + z
    lg1 = u.lgamma() + err * (psi * a_s - _EULER)
    alx = a_s * x.log()
    small_pref_p = (alx - x - lg1).exp()  # x^a e^-x / Gamma(a + 1)
    pref_p = big_a.where(big_pref / ab, small_pref_p)  # the P series' factor
    pref_q = big_a.where(big_pref, small_pref_p * a_s)  # the fraction's
    # P: the power series sum_n x^n / ((a + 1) ... (a + n))
    term, total = _const(1.0, x), _const(1.0, x)
    for n in range(1, _IGAM_SERIES_TERMS + 1):
        term = term * x / (a + n)
        total = total + term
    p_series = pref_p * total
    # Q: Legendre's continued fraction by the modified Lentz method
    b = x + 1 - a
    c = _const(1e300, x)
    d = 1 / b
    h = d
    for i in range(1, _IGAM_CF_TERMS + 1):
        an = (a - i) * i
        b = b + 2
        d = 1 / (an * d + b)
        c = b + an / c
        h = h * (d * c)
    q_cf = pref_q * h
    # Q for small x: -expm1(a log x - lgamma(a + 1)) - x^a / Gamma(a) sum_n (-x)^n / (n! (a + n))
    f, s = _const(1.0, x), _const(0.0, x)
    for n in range(1, _IGAM_QSERIES_TERMS + 1):
        f = f * x * (-1 / n)
        s = s + f / (a_s + n)
    t = alx - lg1
    q_small = -t.expm1() - a_s * t.exp() * s
    # Temme: Q = erfc(eta sqrt(a/2)) / 2 + e^(-a eta^2/2) / sqrt(2 pi a) sum_k c_k(eta) / a^k
    eta = (2 * dev).sqrt()
    eta = (sig < 0).where(-eta, eta)
    ck_sum = None
    for row in reversed(_TEMME):
        ck = _polevl(eta, row[::-1])
        ck_sum = ck if ck_sum is None else ck_sum * inv + ck
    r = (-ab * dev).exp() * (ab * (2 * math.pi)).rsqrt() * ck_sum
    e = (eta.abs() * (ab * 0.5).sqrt()).erfc() * 0.5  # the smaller of the two halves
    q_temme = r + (eta >= 0).where(e, 1 - e)
    p_temme = (eta >= 0).where(1 - e, e) - r
    temme = big_a & (eta.abs() <= _IGAM_TEMME_ETA)
    small_x = x <= _IGAM_SMALL_X
    p_ok = (x < a + 1) | small_x
    q_series_ok = small_x & (a <= (x <= 0.5).where(-0.4 / x.minimum(0.5).log(), 1.1 * x))
    p = temme.where(p_temme, p_ok.where(p_series, 1 - q_cf))
    q = temme.where(
        q_temme,
        q_series_ok.where(q_small, (p_ok.logical_not()).where(q_cf, 1 - p_series)),
    )
    return p, q


def _igamma(a: Tensor, x: Tensor, upper: bool) -> Tensor:
    """P(a, x) (Q with ``upper``) on float64 tensors of one shape, with PyTorch's (and
    SciPy's) values at the edges: NaN for a < 0 or x < 0 (and a = x = 0, a = x = inf);
    at a = 0 (x > 0) P = 1; at x = 0 P = 0; at a = inf P = 0; at x = inf P = 1."""
    ok = (a > 0) & (x > 0) & (a != math.inf) & (x != math.inf)
    p, q = _igamma_pq(ok.where(a, 1.0), ok.where(x, 1.0))
    out = q if upper else p
    one, zero = (0.0, 1.0) if upper else (1.0, 0.0)  # the values of "P = 1", "P = 0"
    out = (x == math.inf).where(one, out)
    out = (a == math.inf).where(zero, out)
    out = (x == 0).where(zero, out)
    out = ((a == 0) & (x > 0)).where(one, out)
    bad = (a < 0) | (x < 0) | a.isnan() | x.isnan()
    bad = bad | ((a == 0) & (x == 0)) | ((a == math.inf) & (x == math.inf))
    return bad.where(math.nan, out)


def _igamma_density(a: Tensor, x: Tensor) -> Tensor:
    """d P(a, x) / dx = x^(a-1) e^-x / Gamma(a) (0 at x = 0 for a > 1, 1 for a = 1)."""
    pos = x > 0
    xs = pos.where(x, 1.0)
    dens = ((a - 1) * xs.log() - xs - a.lgamma()).exp()
    at0 = (a < 1).where(math.inf, (a == 1).where(1.0, 0.0 * a))
    return pos.where(dens, (x == 0).where(at0, math.nan * a))


def gammainc(input, other) -> Tensor:  # noqa: A002
    """The regularized lower incomplete gamma function ``P(a, x) = gamma(a, x) /
    Gamma(a)`` of ``a = input`` and ``x = other`` (broadcast and promoted as a binary
    op; NaN for a < 0 or x < 0): Temme's uniform expansion where a is large and x near
    it, the power series or Legendre's continued fraction elsewhere, in float64
    (relative error about 1e-13 for a and x up to 1e3). Differentiable in x only, as
    PyTorch's: ``special.gammainc(a, x)``."""
    a, x, out = _binary64("gammainc", input, other, lambda a, x: _igamma(a, x, False))
    rule = _second_only("gammainc", "input (a)", _igamma_density)
    return _derivative("gammainc", out, (a, x), rule)


def gammaincc(input, other) -> Tensor:  # noqa: A002
    """The regularized upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)``, to
    its own relative accuracy where it is small (see :func:`gammainc`):
    ``special.gammaincc(a, x)``."""
    a, x, out = _binary64("gammaincc", input, other, lambda a, x: _igamma(a, x, True))
    rule = _second_only("gammaincc", "input (a)", lambda a, x: -_igamma_density(a, x))
    return _derivative("gammaincc", out, (a, x), rule)


# -- the Hurwitz zeta function ----------------------------------------------------------
# (2k)! / B_2k, Cephes' zeta.c
# fmt: off
_ZETA_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
           7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
           -4.5979787224074726105e15, 1.8152105401943546773e17, -7.1661652561756670113e18)
# fmt: on


def _hurwitz(x: Tensor, q: Tensor) -> Tensor:
    """sum_k (q + k)^-x for q > 0 and x > 1 (float64): ten terms, then Euler-Maclaurin's
    tail from w = q + 9 with twelve Bernoulli terms, as Cephes' zeta."""
    s = q.pow(-x)
    for i in range(1, 10):
        s = s + (q + i).pow(-x)
    w = q + 9
    b = w.pow(-x)
    s = s + w * b / (x - 1) - 0.5 * b
    fac = _const(1.0, x)
    for i, k in enumerate(range(0, 24, 2)):
        fac = fac * (x + k)
        b = b / w
        s = s + fac * b / _ZETA_A[i]
        fac = fac * (x + k + 1)
        b = b / w
    return s


def _zeta(x: Tensor, q: Tensor) -> Tensor:
    """The Hurwitz zeta function on float64 tensors of one shape, with PyTorch's edges:
    inf at x = 1 and at q = 0, -1, ...; NaN for x < 1, and for q < 0 where x is not a
    whole number. For q < 0 (x whole), with q = -m + r (0 < r < 1), the terms below 0
    are ``(-1)^x sum_{j=1..m} (j - r)^-x``, so
    ``zeta(x, q) = zeta(x, r) + (-1)^x (zeta(x, 1 - r) - zeta(x, m + 1 - r))``."""
    ok = x > 1
    xs = ok.where(x, 2.0)
    neg = q < 0
    fl = q.floor()
    r = neg.where(q - fl, 1.0)
    r = (r > 0).where(r, 0.5)
    first = neg.where(r, (q > 0).where(q, 1.0))
    out = _hurwitz(xs, first)
    sign = ((xs - (xs * 0.5).floor() * 2) == 1).where(-1.0, _const(1.0, xs))  # (-1)^x
    m = neg.where(-fl, 0.0)
    # zeta(x, r) - zeta(x, 1 - r) first: for odd x they cancel where r is near 1/2
    shifted = (out + sign * _hurwitz(xs, 1 - r)) - sign * _hurwitz(xs, m + 1 - r)
    out = neg.where(shifted, out)
    out = (q == math.inf).where(0.0, out)
    out = (x == math.inf).where((q > 1).where(0.0, (q == 1).where(1.0, math.inf)), out)
    whole_q = (q <= 0) & (q == fl)
    out = whole_q.where(math.inf, ((q < 0) & (x != x.floor())).where(math.nan, out))
    out = (x == 1).where(math.inf, (x < 1).where(math.nan, out))
    return (x.isnan() | q.isnan()).where(math.nan, out)


def zeta(input, other) -> Tensor:  # noqa: A002
    """The Hurwitz zeta function ``sum_k (q + k)^-x`` of ``x = input`` and ``q = other``
    (Euler-Maclaurin summation as Cephes'; ``zeta(x, 1)`` is Riemann's): inf at x = 1,
    NaN below; differentiable in q (``-x zeta(x + 1, q)``) only, as PyTorch's:
    ``special.zeta(x, q)``."""
    x, q, out = _binary64("zeta", input, other, _zeta)
    rule = _second_only("zeta", "input (x)", lambda x, q: -x * zeta(x + 1, q))
    return _derivative("zeta", out, (x, q), rule)


shifted_chebyshev_polynomial_t = _shifted("shifted_chebyshev_polynomial_t", chebyshev_polynomial_t)
shifted_chebyshev_polynomial_u = _shifted("shifted_chebyshev_polynomial_u", chebyshev_polynomial_u)
shifted_chebyshev_polynomial_v = _shifted("shifted_chebyshev_polynomial_v", chebyshev_polynomial_v)
shifted_chebyshev_polynomial_w = _shifted("shifted_chebyshev_polynomial_w", chebyshev_polynomial_w)
