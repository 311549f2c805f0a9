"""``torch.linalg``'s functions: ``mlfuse.linalg.inv(a)``, ``solve``, ``det``,
``cholesky``, ``eigh``, ``svd``, ``qr``, the norms...

The norms are lazy compositions like the rest of the tensor API. The
factorizations and solvers have no kernel form here: they realize their
inputs and run LAPACK through numpy on the host (in float64, the result
rounded once to the input's dtype), and the result comes back as a tensor
on the input's device, as ``nonzero`` does. Their gradients are the closed
forms PyTorch uses, built lazily from the saved factors (``inv``, ``det``,
``slogdet``, ``logdet``, ``solve``, ``cholesky``, ``eigh``, ``eigvalsh``,
``svdvals``, ``solve_triangular``, ``lu_factor``, ``lu``, ``lu_solve``, ``eig``,
``eigvals``, ``householder_product``, ``ormqr``); the few without one here (``qr``,
``svd``'s vectors, ``pinv``, ``lstsq``, ``geqrf``, ``ldl_factor``, ``ldl_solve``'s
``LD``) refuse at ``backward`` with a clear error. A singular or indefinite input
raises :class:`LinAlgError` (PyTorch's ``torch.linalg.LinAlgError``, a
``RuntimeError``; here also an :class:`~mlfuse.errors.ArgumentError`). numpy
has no triangular solver and no LU factorization with its pivots, so those two
are written out here in numpy: substitution row by row and getrf's partial
pivoting column by column, each step vectorized over the batch::

    x = mlfuse.linalg.solve(a, b)          # a: (..., n, n), b: (..., n, k) or (..., n)
    sign, logabsdet = mlfuse.linalg.slogdet(a)
    LU, pivots = mlfuse.linalg.lu_factor(a)
    x = mlfuse.linalg.lu_solve(LU, pivots, b)
    w, v = mlfuse.linalg.eig(a)            # complex (ComplexTensor) results
    LD, pivots = mlfuse.linalg.ldl_factor(a)

``eig`` and ``eigvals`` give complex64/complex128 :class:`~mlfuse.ComplexTensor`
results (and take complex inputs); LAPACK's ``geev`` runs through numpy.
Householder products (``householder_product``/``orgqr``, ``ormqr``, ``geqrf``) and
the Bunch-Kaufman LDL factorization (``ldl_factor``, ``ldl_solve``: LAPACK's
``sytrf``/``sytrs`` with their packed layout and pivots, which numpy lacks) are
written out here in numpy too; these take real inputs only.
"""

from __future__ import annotations

import builtins
import math
from typing import NamedTuple

import numpy as np

from mlfuse import dtypes
from mlfuse.errors import ArgumentError, DTypeError, UnsupportedModeError
from mlfuse.tensor import Tensor, _derivative, _norm_axis

__all__ = [
    "vector_norm", "matrix_norm", "norm", "det", "slogdet", "logdet", "inv", "solve",
    "cholesky", "qr", "svd", "svdvals", "eigh", "eigvalsh", "pinv", "lstsq", "matrix_rank",
    "cond", "matrix_power", "multi_dot", "vecdot", "cross", "diagonal", "matmul",
    "vander", "inv_ex", "cholesky_ex", "matrix_exp", "solve_triangular", "solve_ex",
    "lu_factor", "lu_factor_ex", "lu", "lu_solve", "tensorinv", "tensorsolve",
    "eig", "eigvals", "householder_product", "ldl_factor", "ldl_factor_ex", "ldl_solve",
    "LinAlgError", "geqrf", "orgqr", "ormqr",
]  # fmt: skip


class LinAlgError(ArgumentError):
    """A matrix the factorization or solver cannot handle: singular (``inv``,
    ``solve``, ``lu_factor``, ``ldl_factor``), not positive-definite
    (``cholesky``), or an iteration that did not converge (``eig``, ``svd``).
    PyTorch's ``torch.linalg.LinAlgError``: a ``RuntimeError`` (and, as every
    mlfuse argument error, a ``ValueError``):
    ``except mlfuse.linalg.LinAlgError: ...``."""


class SlogdetResult(NamedTuple):
    """``(sign, logabsdet)`` of :func:`slogdet`."""

    sign: Tensor
    logabsdet: Tensor


class EighResult(NamedTuple):
    """``(eigenvalues, eigenvectors)`` of :func:`eigh` (ascending values)."""

    eigenvalues: Tensor
    eigenvectors: Tensor


class QRResult(NamedTuple):
    """``(Q, R)`` of :func:`qr`."""

    Q: Tensor
    R: Tensor


class SVDResult(NamedTuple):
    """``(U, S, Vh)`` of :func:`svd`."""

    U: Tensor
    S: Tensor
    Vh: Tensor


class LstsqResult(NamedTuple):
    """``(solution, residuals, rank, singular_values)`` of :func:`lstsq`."""

    solution: Tensor
    residuals: Tensor
    rank: Tensor
    singular_values: Tensor


class InfoResult(NamedTuple):
    """``(result, info)`` of the ``_ex`` functions (info 0: success)."""

    result: Tensor
    info: Tensor


class LUFactorResult(NamedTuple):
    """``(LU, pivots)`` of :func:`lu_factor`: L below the diagonal (its unit diagonal
    not stored), U on and above it; 1-based int32 row swaps, as LAPACK's getrf."""

    LU: Tensor
    pivots: Tensor


class LUFactorExResult(NamedTuple):
    """``(LU, pivots, info)`` of :func:`lu_factor_ex` (info 0, or the 1-based index
    of the first zero pivot)."""

    LU: Tensor
    pivots: Tensor
    info: Tensor


class LUResult(NamedTuple):
    """``(P, L, U)`` of :func:`lu` and :func:`lu_unpack`: ``A = P @ L @ U``."""

    P: Tensor
    L: Tensor
    U: Tensor


class TriangularSolveResult(NamedTuple):
    """``(solution, cloned_coefficient)`` of :func:`triangular_solve`."""

    solution: Tensor
    cloned_coefficient: Tensor


# -- helpers --------------------------------------------------------------------------
def _float_input(a, what: str) -> Tensor:
    if not isinstance(a, Tensor):
        a = Tensor(a)
    if not a.dtype.is_float:
        raise TypeError(f"linalg.{what}: expected a float tensor, got {a.dtype.name}")
    return a


def _square(a, what: str) -> Tensor:
    a = _float_input(a, what)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ArgumentError(
            f"linalg.{what}: A must be a batch of square matrices, got shape {a.shape}"
        )
    return a


def _host(a: Tensor) -> np.ndarray:
    return a.detach().numpy().astype(np.float64)


def _back(values: np.ndarray, like: Tensor, dtype=None) -> Tensor:
    dt = dtype or like.dtype
    return Tensor(np.array(values, order="C"), dt, like.device)  # 0-d stays 0-d


def _no_rule(what: str):
    def rule(c, g):
        raise UnsupportedModeError(
            f"linalg.{what}: mlfuse has no gradient for it; detach its input or compute it "
            "under no_grad"
        )

    return rule


def _lapack(fn, what: str, *args):
    try:
        return fn(*args)
    except np.linalg.LinAlgError as e:
        raise LinAlgError(f"linalg.{what}: {e} (the input is singular or not definite)") from e


def _cofactors(a: np.ndarray) -> np.ndarray:
    """The cofactor matrices (d det / d A) of a batch of square matrices, from the
    SVD, so singular matrices get theirs too: C = det(U) det(V) U diag(prod_{j!=i}
    s_j) V^T."""
    u, s, vh = np.linalg.svd(a)
    n = s.shape[-1]
    others = np.stack([np.prod(np.delete(s, i, axis=-1), axis=-1) for i in builtins.range(n)], -1)
    sign = np.linalg.det(u) * np.linalg.det(vh)
    return sign[..., None, None] * (u * others[..., None, :]) @ vh


# -- norms (lazy) -----------------------------------------------------------------------
def vector_norm(x, ord=2, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:  # noqa: A002
    """The ``ord``-norm of the elements (all, or over ``dim``): ``inf``/``-inf`` the
    largest/smallest magnitude, 0 the count of non-zeros: ``vector_norm(x, 1, -1)``."""
    t = _float_input(x, "vector_norm")
    if dtype is not None:
        t = t.cast(dtype)
    if not isinstance(ord, (int, float)) or isinstance(ord, bool):
        raise ArgumentError(f"linalg.vector_norm: ord must be a number, got {ord!r}")
    return t.norm(ord, dim=dim, keepdim=keepdim)


def matrix_norm(a, ord="fro", dim=(-2, -1), keepdim: bool = False, *, dtype=None) -> Tensor:  # noqa: A002
    """A matrix norm over the two ``dim``: ``"fro"``, ``"nuc"`` (sum of singular
    values), ``inf``/``-inf`` (max/min row sum of magnitudes), 1/-1 (columns),
    2/-2 (largest/smallest singular value): ``matrix_norm(a, 1)``."""
    t = _float_input(a, "matrix_norm")
    if dtype is not None:
        t = t.cast(dtype)
    if t.ndim < 2:
        raise ArgumentError(f"linalg.matrix_norm: A must have at least 2 dims, got {t.shape}")
    d0, d1 = (_norm_axis(d, t.ndim, "dim") for d in dim)
    if d0 == d1:
        raise ArgumentError(f"linalg.matrix_norm: dim must name two different dims, got {dim}")
    if ord == "fro":
        return (t * t).sum((d0, d1), keepdim).sqrt()
    if ord in (math.inf, -math.inf, 1, -1):
        over, then = (d1, d0) if ord in (math.inf, -math.inf) else (d0, d1)
        sums = t.abs().sum(over, keepdim=True)
        best = sums.max(then, keepdim=True) if ord > 0 else sums.min(then, keepdim=True)
        return best if keepdim else best.squeeze((d0, d1))
    if ord in ("nuc", 2, -2):
        m = t.movedim((d0, d1), (-2, -1))
        s = svdvals(m)
        r = s.sum(-1) if ord == "nuc" else (s.max(-1) if ord == 2 else s.min(-1))
        if keepdim:
            r = r.unsqueeze(-1).unsqueeze(-1).movedim((-2, -1), (d0, d1))
        return r
    raise ArgumentError(f"linalg.matrix_norm: unsupported ord {ord!r}")


def norm(a, ord=None, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:  # noqa: A002
    """``vector_norm`` for a 1-d ``dim`` (or ``ord=None`` with no ``dim``: the
    2-norm of all elements), ``matrix_norm`` for two dims: ``norm(a)``, ``norm(a, "fro")``."""
    t = _float_input(a, "norm")
    if isinstance(dim, int):
        dim = (dim,)
    if dim is None:
        if ord is None:
            return vector_norm(t, 2, None, keepdim, dtype=dtype)
        if t.ndim == 1:
            return vector_norm(t, ord, None, keepdim, dtype=dtype)
        if t.ndim == 2:
            return matrix_norm(t, ord, (-2, -1), keepdim, dtype=dtype)
        raise ArgumentError(
            f"linalg.norm: with ord={ord!r} the input must be 1-d or 2-d, or give dim"
        )
    if len(dim) == 1:
        return vector_norm(t, 2 if ord is None else ord, dim, keepdim, dtype=dtype)
    if len(dim) == 2:
        return matrix_norm(t, "fro" if ord is None else ord, dim, keepdim, dtype=dtype)
    raise ArgumentError(f"linalg.norm: dim must name 1 or 2 dims, got {dim}")


# -- determinants and inverses (host) ----------------------------------------------------------
def det(a) -> Tensor:
    """The determinants of a batch of square matrices: ``det(a)``."""
    a = _square(a, "det")
    out = _back(np.linalg.det(_host(a)), a)

    def rule(c, g):
        cof = _back(_cofactors(_host(c.x)), c.x)
        return (g.unsqueeze(-1).unsqueeze(-1) * cof,)

    return _derivative("linalg.det", out, (a,), rule)


def slogdet(a) -> SlogdetResult:
    """``(sign, log|det|)`` of a batch of square matrices: ``sign, logabs = slogdet(a)``."""
    a = _square(a, "slogdet")
    sign, logabs = np.linalg.slogdet(_host(a))

    def rule(c, g):
        return (g.unsqueeze(-1).unsqueeze(-1) * inv(c.x.detach()).mT,)

    out = _derivative("linalg.slogdet", _back(logabs, a), (a,), rule)
    return SlogdetResult(_back(sign, a), out)


def logdet(a) -> Tensor:
    """``log(det(a))`` (NaN where the determinant is negative): ``logdet(a)``."""
    sign, logabs = slogdet(a)
    return (sign < 0).where(math.nan, (sign == 0).where(-math.inf, logabs))


def inv(a) -> Tensor:
    """The inverses of a batch of square matrices (an error names a singular one):
    ``inv(a)``."""
    a = _square(a, "inv")
    out = _back(_lapack(np.linalg.inv, "inv", _host(a)), a)

    def rule(c, g):
        ai = c.out.detach()
        return (-(ai.mT @ g @ ai.mT),)

    return _derivative("linalg.inv", out, (a,), rule)


def inv_ex(a, *, check_errors: bool = False) -> InfoResult:
    """``(inverse, info)``; info is 0, or the batch has a singular matrix (1)."""
    try:
        return InfoResult(inv(a), Tensor(np.zeros(a.shape[:-2], np.int32)))
    except ArgumentError:
        if check_errors:
            raise
        nan = Tensor.full(a.shape, math.nan, a.dtype, a.device)
        return InfoResult(nan, Tensor(np.ones(a.shape[:-2], np.int32)))


def _is_vector_rhs(a: Tensor, b: Tensor) -> bool:
    return b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])


def solve(a, b, *, left: bool = True) -> Tensor:
    """``X`` with ``a @ X = b`` (``X @ a = b`` when not ``left``); ``b`` is a batch of
    matrices or of vectors: ``solve(a, b)``."""
    a = _square(a, "solve")
    b = _float_input(b, "solve")
    if not left:
        return solve(a.mT, b.mT).mT
    vec = _is_vector_rhs(a, b)
    bm = b.unsqueeze(-1) if vec else b
    if bm.shape[-2] != a.shape[-1]:
        raise ArgumentError(
            f"linalg.solve: A is {a.shape} but B has {bm.shape[-2]} rows ({b.shape})"
        )
    ah, bh = _host(a), _host(bm)
    shape = np.broadcast_shapes(ah.shape[:-2], bh.shape[:-2])
    ah = np.broadcast_to(ah, shape + ah.shape[-2:])
    bh = np.broadcast_to(bh, shape + bh.shape[-2:])
    dt = dtypes.promote(a.dtype, b.dtype)
    x = _back(_lapack(np.linalg.solve, "solve", ah, bh), a, dt)

    def rule(c, g):
        ainv_t = inv(c.srcs[0].detach()).mT
        gb = ainv_t @ g  # (..., n, k)
        ga = -(gb @ c.out.detach().mT)
        return (_sum_to(ga, c.srcs[0].shape), _sum_to(gb, c.srcs[1].shape))

    out = _derivative("linalg.solve", x, (a, bm), rule)
    return out.squeeze(-1) if vec else out


def _sum_to(g: Tensor, shape) -> Tensor:
    return g.sum_to_size(*shape) if g.shape != tuple(shape) else g


def _batch_shape(what: str, a: Tensor, b: Tensor, names=("A", "B")) -> tuple[int, ...]:
    try:
        return tuple(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]))
    except ValueError:
        raise ArgumentError(
            f"linalg.{what}: the batch dims of {names[0]} {a.shape} and {names[1]} {b.shape} "
            "do not broadcast"
        ) from None


def _matrix_rhs(what: str, a: Tensor, b: Tensor, left: bool, name: str = "A") -> None:
    """B must be a batch of matrices with A's size on the side A multiplies."""
    if b.ndim < 2:
        raise ArgumentError(
            f"linalg.{what}: B must have at least 2 dims (a batch of matrices), got shape {b.shape}"
        )
    n = a.shape[-1]
    if (b.shape[-2] if left else b.shape[-1]) != n:
        eq, side = (f"{name} X = B", "rows") if left else (f"X {name} = B", "columns")
        raise ArgumentError(
            f"linalg.{what}: for {eq} with {name} {a.shape}, B needs {n} {side}; got {b.shape}"
        )


# -- triangular systems and LU (host, numpy) ---------------------------------------------
def _trsm(a: np.ndarray, b: np.ndarray, upper: bool, unit: bool) -> np.ndarray:
    """``X`` with ``T @ X = b``, ``T`` the upper or lower triangle of ``a`` (its
    diagonal taken as ones when ``unit``; the other triangle never read), by
    substitution: one row of X per step, vectorized over the batch (broadcast)
    and the columns of ``b``. A zero on the diagonal gives inf/NaN, as BLAS's trsm."""
    shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = np.broadcast_to(a, shape + a.shape[-2:])
    b = np.broadcast_to(b, shape + b.shape[-2:])
    n = a.shape[-1]
    x = np.zeros(b.shape, np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for i in builtins.range(n - 1, -1, -1) if upper else builtins.range(n):
            done = slice(i + 1, n) if upper else slice(0, i)  # the rows of X known
            r = b[..., i, :] - (a[..., i : i + 1, done] @ x[..., done, :])[..., 0, :]
            x[..., i, :] = r if unit else r / a[..., i, i, None]
    return x


def solve_triangular(
    A,  # noqa: N803 - PyTorch's name
    B,  # noqa: N803 - PyTorch's name
    *,
    upper: bool,
    left: bool = True,
    unitriangular: bool = False,
) -> Tensor:
    """``X`` with ``T @ X = B`` (``X @ T = B`` when not ``left``), ``T`` the upper or
    lower triangle of ``A`` (the other one is not read; with ``unitriangular`` the
    diagonal is not read either, and taken as ones). ``B`` is a batch of matrices;
    batch dims broadcast. A zero on the diagonal gives inf/NaN rather than an error,
    as PyTorch's: ``solve_triangular(a, b, upper=True)``."""
    a = _square(A, "solve_triangular")
    b = _float_input(B, "solve_triangular")
    _matrix_rhs("solve_triangular", a, b, left)
    _batch_shape("solve_triangular", a, b)
    if not left:  # X T = B  <=>  T^T X^T = B^T, and T^T has the other triangle
        x = solve_triangular(a.mT, b.mT, upper=not upper, unitriangular=unitriangular)
        return x.mT
    dt = dtypes.promote(a.dtype, b.dtype)
    x = _back(_trsm(_host(a), _host(b), upper, unitriangular), a, dt)

    def rule(c, g):
        at, xt = c.srcs[0].detach(), c.out.detach()
        gb = solve_triangular(at.mT, g, upper=not upper, unitriangular=unitriangular)
        ga = -(gb @ xt.mT)  # restricted to the entries read
        ga = ga.triu(1 if unitriangular else 0) if upper else ga.tril(-1 if unitriangular else 0)
        return (_sum_to(ga, c.srcs[0].shape), _sum_to(gb, c.srcs[1].shape))

    return _derivative("linalg.solve_triangular", x, (a, b), rule)


def _getrf(a: np.ndarray):
    """LAPACK's getrf on a batch of float64 (..., m, n) matrices: partial pivoting
    (the row of largest magnitude in the column, the first of equals, and a leading
    NaN kept as BLAS's idamax does), one column per step over the whole batch.
    Returns the packed factors, 1-based int32 pivots (..., min(m, n)) and info
    (0, or the 1-based index of the first zero pivot; elimination goes on past it)."""
    batch, (m, n) = a.shape[:-2], a.shape[-2:]
    k = min(m, n)
    lu = np.array(a, np.float64).reshape((math.prod(batch), m, n))
    nb = lu.shape[0]
    piv = np.zeros((nb, k), np.int32)
    info = np.zeros(nb, np.int32)
    rows = np.arange(nb)
    with np.errstate(invalid="ignore", over="ignore"):
        for j in builtins.range(k):
            col = np.abs(lu[:, j:, j])
            p = np.where(np.isnan(col[:, 0]), 0, np.argmax(np.where(np.isnan(col), -1, col), 1))
            p = p + j
            piv[:, j] = p + 1
            top = lu[rows, p].copy()
            lu[rows, p] = lu[:, j]
            lu[:, j] = top
            d = lu[:, j, j]
            zero = d == 0
            info[(info == 0) & zero] = j + 1
            lu[:, j + 1 :, j] /= np.where(zero, 1.0, d)[:, None]  # a zero pivot's column is 0
            lu[:, j + 1 :, j + 1 :] -= lu[:, j + 1 :, j, None] * lu[:, j, None, j + 1 :]
    return lu.reshape(a.shape), piv.reshape(batch + (k,)), info.reshape(batch)


def _perm(piv: np.ndarray, m: int) -> np.ndarray:
    """The row order ``perm`` the pivots' swaps make of ``range(m)``: row ``i`` of
    ``L @ U`` is row ``perm[i]`` of ``A`` (so ``P[perm[i], i] = 1``)."""
    flat = piv.reshape((math.prod(piv.shape[:-1]), piv.shape[-1])).astype(np.int64) - 1
    perm = np.broadcast_to(np.arange(m), (flat.shape[0], m)).copy()
    rows = np.arange(flat.shape[0])
    for j in builtins.range(flat.shape[1]):
        p = flat[:, j]
        top = perm[rows, p].copy()
        perm[rows, p] = perm[:, j]
        perm[:, j] = top
    return perm.reshape(piv.shape[:-1] + (m,))


def _zero_pivot_message(what: str, info: np.ndarray) -> str:
    bad = np.argwhere(info > 0)[0]
    i = int(info[tuple(bad)])
    where = f" (batch element {tuple(int(v) for v in bad)})" if info.ndim else ""
    return (
        f"linalg.{what}: U[{i},{i}] is zero{where}, so solving with these factors would divide "
        "by zero (the input is singular); linalg.lu or linalg.lu_factor_ex factor it anyway"
    )


def _lu_input(a, what: str) -> Tensor:
    a = _float_input(a, what)
    if a.ndim < 2:
        raise ArgumentError(f"linalg.{what}: A must have at least 2 dims, got shape {a.shape}")
    return a


def _lu_backward(P, L, U, gL, gU) -> Tensor:  # noqa: N803 - the factors' names
    """The gradient w.r.t. ``A = P L U`` (m x n) from those w.r.t. the strictly lower
    part of ``L`` (m x k) and the upper part of ``U`` (k x n): PyTorch's
    ``linalg_lu_backward``, with its square, wide and tall cases."""
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    if m == n:  # P L^-T [(L^T gL) o 1_L + (gU U^T) o 1_U] U^-T
        inner = (L.mT @ gL).tril(-1) + (gU @ U.mT).triu()
        ga = solve_triangular(U.mT, inner, upper=False, left=False)
        ga = solve_triangular(L.mT, ga, upper=True, unitriangular=True)
    elif m < n:  # wide: U = [U1 U2]
        u1 = U[..., :, :k]
        inner = (L.mT @ gL - gU @ U.mT).tril(-1)
        ga = solve_triangular(u1.mT, inner, upper=False, left=False)
        ga = Tensor.cat([ga + gU[..., :, :k], gU[..., :, k:]], dim=-1)
        ga = solve_triangular(L.mT, ga, upper=True, unitriangular=True)
    else:  # tall: L = [L1; L2]
        l1 = L[..., :k, :]
        inner = (gU @ U.mT - L.mT @ gL).triu()
        ga = solve_triangular(l1.mT, inner, upper=True, unitriangular=True)
        ga = Tensor.cat([ga + gL[..., :k, :], gL[..., k:, :]], dim=-2)
        ga = solve_triangular(U.mT, ga, upper=False, left=False)
    return P @ ga


def lu_factor_ex(
    A,  # noqa: N803 - PyTorch's name
    *,
    pivot: bool = True,
    check_errors: bool = False,
) -> LUFactorExResult:
    """The LU factorization with partial pivoting of a batch of m x n matrices, as
    LAPACK's getrf: ``(LU, pivots, info)``, info 0 or the 1-based index of the first
    zero pivot (the factors are still computed; ``check_errors`` raises instead).
    No ``pivot=False`` (PyTorch's CPU refuses it too):
    ``LU, pivots, info = lu_factor_ex(a)``."""
    return _lu_factor(A, pivot, check_errors, "lu_factor_ex")


def _lu_factor(a, pivot: bool, check_errors: bool, what: str) -> LUFactorExResult:
    a = _lu_input(a, what)
    if not pivot:
        raise UnsupportedModeError(
            f"linalg.{what}: LU without pivoting is not supported (PyTorch's CPU refuses it "
            "too); use pivot=True"
        )
    lu_h, piv, info = _getrf(_host(a))
    if check_errors and (info > 0).any():
        raise LinAlgError(_zero_pivot_message(what, info))
    pivots = Tensor(piv, dtypes.int32, a.device)

    def rule(c, g):
        p, lo, up = lu_unpack(c.out.detach(), pivots)
        k = min(a.shape[-2:])
        return (_lu_backward(p, lo, up, g[..., :, :k].tril(-1), g[..., :k, :].triu()),)

    out = _derivative("linalg.lu_factor", _back(lu_h, a), (a,), rule)
    return LUFactorExResult(out, pivots, Tensor(info, dtypes.int32, a.device))


def lu_factor(A, *, pivot: bool = True) -> LUFactorResult:  # noqa: N803 - PyTorch's name
    """``(LU, pivots)`` of :func:`lu_factor_ex`; a singular matrix (a zero pivot) is
    an error naming it, as PyTorch's: ``LU, pivots = lu_factor(a)``."""
    lu_, piv, _ = _lu_factor(A, pivot, True, "lu_factor")
    return LUFactorResult(lu_, piv)


def lu(A, *, pivot: bool = True) -> LUResult:  # noqa: N803 - PyTorch's name
    """``(P, L, U)`` with ``A = P @ L @ U`` for a batch of m x n matrices: P a
    permutation (m x m), L unit lower (m x k), U upper (k x n), k = min(m, n).
    Singular matrices are factored too: ``P, L, U = lu(a)``."""
    lu_, piv, _ = _lu_factor(A, pivot, False, "lu")
    return lu_unpack(lu_, piv)


def lu_unpack(
    LU,  # noqa: N803 - PyTorch's name
    pivots,
    unpack_data: bool = True,
    unpack_pivots: bool = True,
) -> LUResult:
    """``(P, L, U)`` from :func:`lu_factor`'s packed factors (``torch.lu_unpack``;
    L and U are lazy views of LU, so gradients flow; what is not unpacked is an
    empty tensor): ``P, L, U = lu_unpack(LU, pivots)``."""
    t = _lu_input(LU, "lu_unpack")
    m, n = t.shape[-2:]
    k = min(m, n)
    empty = Tensor.zeros(0, dtype=t.dtype, device=t.device)
    lo = up = p = empty
    if unpack_data:
        eye = Tensor.eye(m, k, dtype=t.dtype, device=t.device)
        lo = t[..., :, :k].tril(-1) + eye
        up = t[..., :k, :].triu()
    if unpack_pivots:
        piv = (pivots if isinstance(pivots, Tensor) else Tensor(pivots)).numpy()
        if piv.shape != t.shape[:-2] + (k,):
            raise ArgumentError(
                f"linalg.lu_unpack: pivots must have shape {t.shape[:-2] + (k,)} for LU "
                f"{t.shape}, got {piv.shape}"
            )
        if piv.size and (piv.min() < 1 or piv.max() > m):
            raise ArgumentError(
                f"linalg.lu_unpack: pivots must be between 1 and {m} (1-based rows, as "
                "lu_factor gives them)"
            )
        perm = _perm(piv, m)
        ph = np.zeros(perm.shape + (m,))
        np.put_along_axis(ph, perm[..., None], 1.0, -1)  # ph[.., i, perm[i]] = 1: P^T
        p = _back(np.swapaxes(ph, -1, -2), t)
    return LUResult(p, lo, up)


def _getrs(lu_h: np.ndarray, piv: np.ndarray, b: np.ndarray, adjoint: bool) -> np.ndarray:
    """LAPACK's getrs: ``X`` with ``A X = b`` (``A^T X = b`` when ``adjoint``) from
    A's packed factors ``P L U``; batch dims broadcast."""
    n = lu_h.shape[-1]
    perm = _perm(piv, n)  # (P^T v)[i] = v[perm[i]]
    shape = np.broadcast_shapes(lu_h.shape[:-2], b.shape[:-2])
    perm = np.broadcast_to(perm[..., None], shape + (n, b.shape[-1]))
    b = np.broadcast_to(b, shape + b.shape[-2:])
    if not adjoint:  # U X = L^-1 P^T b
        y = _trsm(lu_h, np.take_along_axis(b, perm, -2), upper=False, unit=True)
        return _trsm(lu_h, y, upper=True, unit=False)
    lu_t = np.swapaxes(lu_h, -1, -2)  # A^T = U^T L^T P^T
    y = _trsm(lu_t, b, upper=False, unit=False)
    w = _trsm(lu_t, y, upper=True, unit=True)
    x = np.empty_like(w)
    np.put_along_axis(x, perm, w, -2)
    return x


def lu_solve(
    LU,  # noqa: N803 - PyTorch's name
    pivots,
    B,  # noqa: N803 - PyTorch's name
    *,
    left: bool = True,
    adjoint: bool = False,
) -> Tensor:
    """``X`` with ``A X = B`` from :func:`lu_factor`'s ``(LU, pivots)`` of ``A``
    (``A^T X = B`` when ``adjoint``; ``X A = B`` when not ``left``). ``B`` is a batch
    of matrices; batch dims broadcast. Gradients reach ``B`` and ``LU`` (and through
    it ``A``): ``x = lu_solve(LU, pivots, b)``."""
    t = _float_input(LU, "lu_solve")
    if t.ndim < 2 or t.shape[-1] != t.shape[-2]:
        raise ArgumentError(
            f"linalg.lu_solve: LU must be a batch of square matrices, got shape {t.shape}"
        )
    b = _float_input(B, "lu_solve")
    piv = pivots if isinstance(pivots, Tensor) else Tensor(pivots)
    if piv.dtype.is_float or piv.shape != t.shape[:-1]:
        raise ArgumentError(
            f"linalg.lu_solve: pivots must be integers of shape {t.shape[:-1]} for LU "
            f"{t.shape}, got {piv.dtype.name} {piv.shape}"
        )
    _matrix_rhs("lu_solve", t, b, left, "LU")
    _batch_shape("lu_solve", t, b, ("LU", "B"))
    if not left:  # X A = B  <=>  A^T X^T = B^T
        return lu_solve(t, piv, b.mT, adjoint=not adjoint).mT
    ph = piv.numpy()
    if ph.size and (ph.min() < 1 or ph.max() > t.shape[-1]):
        raise ArgumentError(
            f"linalg.lu_solve: pivots must be between 1 and {t.shape[-1]} (1-based rows, as "
            "lu_factor gives them)"
        )
    dt = dtypes.promote(t.dtype, b.dtype)
    x = _back(_getrs(_host(t), ph, _host(b), adjoint), t, dt)

    def rule(c, g):
        lu_d, xt = c.srcs[0].detach(), c.out.detach()
        gb = lu_solve(lu_d, piv, g, adjoint=not adjoint)
        ga = -(xt @ gb.mT) if adjoint else -(gb @ xt.mT)  # w.r.t. A = P L U
        p, lo, up = lu_unpack(lu_d, piv)
        pga = p.mT @ ga
        glu = (pga @ up.mT).tril(-1) + (lo.mT @ pga).triu()
        return (_sum_to(glu, c.srcs[0].shape), _sum_to(gb, c.srcs[1].shape))

    return _derivative("linalg.lu_solve", x, (t, b), rule)


def solve_ex(
    A,  # noqa: N803 - PyTorch's name
    B,  # noqa: N803 - PyTorch's name
    *,
    left: bool = True,
    check_errors: bool = False,
) -> InfoResult:
    """``(X, info)`` of :func:`solve`: info 0, or (per matrix) the 1-based index of
    the first zero pivot of A's LU factorization, as PyTorch's; ``check_errors``
    raises instead. When no matrix is singular X is :func:`solve`'s; otherwise X
    comes from ``lu_solve`` of those factors, inf/NaN where a pivot is zero (not
    promised to match PyTorch's values there): ``x, info = solve_ex(a, b)``."""
    a = _square(A, "solve_ex")
    b = _float_input(B, "solve_ex")
    lu_, piv, info = _lu_factor(a, True, False, "solve_ex")
    bad = info.numpy()
    if not (bad > 0).any():
        return InfoResult(solve(a, b, left=left), info)
    if check_errors:
        raise LinAlgError(_zero_pivot_message("solve_ex", bad))
    if not left:
        return InfoResult(lu_solve(lu_, piv, b, left=False), info)
    vec = _is_vector_rhs(a, b)
    x = lu_solve(lu_, piv, b.unsqueeze(-1) if vec else b)
    return InfoResult(x.squeeze(-1) if vec else x, info)


def tensorinv(A, ind: int = 2) -> Tensor:  # noqa: N803 - PyTorch's name
    """The inverse of ``A`` for :func:`mlfuse.tensordot` over ``ind`` dims: the
    inverse of A reshaped to a ``prod(shape[:ind])`` square matrix, shaped
    ``shape[ind:] + shape[:ind]``: ``tensorinv(a.reshape(4, 6, 8, 3), ind=2)``."""
    a = _float_input(A, "tensorinv")
    if not isinstance(ind, (int, np.integer)) or isinstance(ind, bool) or ind <= 0:
        raise ArgumentError(f"linalg.tensorinv: ind must be a positive int, got {ind!r}")
    front, back = a.shape[:ind], a.shape[ind:]
    rows, cols = math.prod(front), math.prod(back)
    if rows != cols:
        raise ArgumentError(
            f"linalg.tensorinv: the product of A's first {ind} dims {front} must equal that of "
            f"the others {back} ({rows} != {cols})"
        )
    return inv(a.reshape(rows, cols)).reshape(*back, *front)


def tensorsolve(A, B, dims=None) -> Tensor:  # noqa: N803 - PyTorch's name
    """``X`` with ``tensordot(A, X, X.ndim) = B``: A (with ``dims`` moved to the end)
    reshaped to a square matrix, X shaped ``A.shape[B.ndim:]``:
    ``tensorsolve(a, b)``."""
    a = _float_input(A, "tensorsolve")
    b = _float_input(B, "tensorsolve")
    if dims is not None:
        dims = [_norm_axis(d, a.ndim, "dims") for d in ((dims,) if isinstance(dims, int) else dims)]
        a = a.permute(*[d for d in builtins.range(a.ndim) if d not in dims], *dims)
    rest = a.shape[b.ndim :]
    n = math.prod(rest)
    if math.prod(a.shape[: b.ndim]) != n or b.numel() != n:
        raise ArgumentError(
            f"linalg.tensorsolve: A {a.shape} must split into B's shape {b.shape} and the "
            f"solution's {rest}, of equal sizes"
        )
    return solve(a.reshape(n, n), b.reshape(n)).reshape(*rest)


def triangular_solve(
    b,
    A,  # noqa: N803 - PyTorch's name
    upper: bool = True,
    transpose: bool = False,
    unitriangular: bool = False,
) -> TriangularSolveResult:
    """``torch.triangular_solve`` (deprecated in PyTorch, arguments reversed):
    ``(X, A)`` with ``op(T) X = b``, op the transpose when ``transpose``, T ``A``'s
    ``upper`` triangle; the coefficient is A broadcast to the batch:
    ``x, _ = triangular_solve(b, a)``."""
    a = _square(A, "triangular_solve")
    t = a.mT if transpose else a
    x = solve_triangular(t, b, upper=upper != transpose, unitriangular=unitriangular)
    batch = x.shape[:-2]
    return TriangularSolveResult(x, a.expand(*batch, *a.shape[-2:]).contiguous())


# -- factorizations (host) -------------------------------------------------------------
def cholesky(a, *, upper: bool = False) -> Tensor:
    """The Cholesky factor ``L`` (lower, ``a = L L^T``; ``U = L^T`` when ``upper``) of
    symmetric positive-definite matrices (their lower triangles are read):
    ``cholesky(a)``."""
    a = _square(a, "cholesky")
    h = _host(a)
    h = np.tril(h) + np.swapaxes(np.tril(h, -1), -1, -2)  # the lower triangle, as LAPACK
    L = _back(_lapack(np.linalg.cholesky, "cholesky", h), a)  # noqa: N806

    def rule(c, g):
        lo = c.out.detach()
        linv = inv(lo)
        p = lo.mT @ g
        phi = p.tril(-1) + p.diagonal(0, -2, -1).diag_embed() * 0.5
        s = linv.mT @ phi @ linv
        return ((s + s.mT) * 0.5,)

    out = _derivative("linalg.cholesky", L, (a,), rule)
    return out.mT if upper else out


def cholesky_ex(a, *, upper: bool = False, check_errors: bool = False) -> InfoResult:
    """``(L, info)``; info is 0, or 1 when a matrix is not positive-definite."""
    try:
        return InfoResult(cholesky(a, upper=upper), Tensor(np.zeros(a.shape[:-2], np.int32)))
    except ArgumentError:
        if check_errors:
            raise
        nan = Tensor.full(a.shape, math.nan, a.dtype, a.device)
        return InfoResult(nan, Tensor(np.ones(a.shape[:-2], np.int32)))


def _mT(x: np.ndarray) -> np.ndarray:
    return np.swapaxes(x, -1, -2)


def _copyltu(m: np.ndarray) -> np.ndarray:
    """The symmetric matrix with ``m``'s lower triangle (diagonal included)."""
    low = np.tril(m, -1)
    return low + _mT(low) + np.tril(np.triu(m))


def _right_solve_t(x: np.ndarray, r: np.ndarray) -> np.ndarray:
    """``x @ inv(r).T`` for upper triangular ``r``."""
    return _mT(np.linalg.solve(r, _mT(x)))


def _qr_rule(which: str, mode: str):
    """The gradient of Q or R (``which``) of ``A = QR``: for ``m >= n`` (Q with n
    columns) ``gA = (gQ + Q copyltu(R gR^T - gQ^T Q)) R^{-T}``; for ``m < n``, with
    ``A = [X | Y]`` and ``R = [U | V]``, the same for ``X = QU`` with ``gQ + Y gV^T``
    and ``gY = Q gV``. Each output's part taken with the other's gradient zero."""

    def rule(c, g):
        a = _host(c.x)
        m, n = a.shape[-2:]
        if mode == "complete" and m > n:
            raise UnsupportedModeError(
                "linalg.qr: with mode='complete' and more rows than columns Q is not a "
                "differentiable function of A (as in PyTorch); use mode='reduced'"
            )
        q, r = np.linalg.qr(a)
        gh = _host(g)
        k = min(m, n)
        gq = gh if which == "Q" else np.zeros_like(q)
        gr = gh if which == "R" else np.zeros_like(r)
        u, gu = r[..., :, :k], gr[..., :, :k]
        if m < n:
            gq = gq + a[..., :, m:] @ _mT(gr[..., :, m:])
        gx = _right_solve_t(gq + q @ _copyltu(u @ _mT(gu) - _mT(gq) @ q), u)
        if m < n:
            gx = np.concatenate([gx, q @ gr[..., :, m:]], axis=-1)
        return (_back(gx, c.x),)

    return rule


def qr(a, mode: str = "reduced") -> QRResult:
    """The QR decomposition (``mode`` ``"reduced"``, ``"complete"`` or ``"r"``, whose
    Q is empty): ``q, r = qr(a)``. Differentiable as PyTorch's (not with ``"r"``,
    nor ``"complete"`` for tall matrices; R's diagonal must be non-zero)."""
    a = _float_input(a, "qr")
    if a.ndim < 2:
        raise ArgumentError(f"linalg.qr: A must have at least 2 dims, got {a.shape}")
    if mode not in ("reduced", "complete", "r"):
        raise ArgumentError(f"linalg.qr: mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    if mode == "r":
        r = np.linalg.qr(_host(a), mode="r")
        q = Tensor.zeros(0, dtype=a.dtype, device=a.device)
    else:
        qh, r = np.linalg.qr(_host(a), mode=mode)
        q = _derivative("linalg.qr", _back(qh, a), (a,), _qr_rule("Q", mode))
    r_rule = _no_rule("qr (mode='r' computes no Q)") if mode == "r" else _qr_rule("R", mode)
    return QRResult(q, _derivative("linalg.qr", _back(r, a), (a,), r_rule))


def _svd_rule(which: str):
    """The gradient of U or Vh (``which``) of ``A = U S V^T`` (the reduced parts: the
    columns past ``min(m, n)`` of a full decomposition are ignored, as PyTorch):
    ``U (J S + S K) V^T`` with ``J = F o (U^T gU - gU^T U)``, ``K = F o (V^T gV -
    gV^T V)``, ``F_ij = 1 / (s_j^2 - s_i^2)``, plus ``(I - U U^T) gU S^{-1} V^T`` for
    tall and ``U S^{-1} gV^T (I - V V^T)`` for wide ``A``. Singular values must be
    distinct and non-zero for it to be finite."""

    def rule(c, g):
        a = _host(c.x)
        m, n = a.shape[-2:]
        k = min(m, n)
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        v = _mT(vh)
        gh = _host(g)
        s2 = s * s
        with np.errstate(divide="ignore"):
            f = 1.0 / (s2[..., None, :] - s2[..., :, None])
        f[..., np.arange(k), np.arange(k)] = 0.0
        if which == "U":
            gu = gh[..., :, :k]
            utg = _mT(u) @ gu
            inner = (f * (utg - _mT(utg))) * s[..., None, :]
            ga = u @ inner @ vh
            if m > k:
                ga = ga + ((gu - u @ utg) / s[..., None, :]) @ vh
        else:
            gv = _mT(gh[..., :k, :])
            vtg = _mT(v) @ gv
            inner = s[..., :, None] * (f * (vtg - _mT(vtg)))
            ga = u @ inner @ vh
            if n > k:
                ga = ga + u @ (_mT(gv - v @ vtg) / s[..., :, None])
        return (_back(ga, c.x),)

    return rule


def svd(a, full_matrices: bool = True) -> SVDResult:
    """``(U, S, Vh)`` with ``a = U diag(S) Vh``, S descending: ``u, s, vh = svd(a)``.
    Differentiable as PyTorch's: losses that depend on the singular vectors need
    distinct, non-zero singular values."""
    a = _float_input(a, "svd")
    if a.ndim < 2:
        raise ArgumentError(f"linalg.svd: A must have at least 2 dims, got {a.shape}")
    u, s, vh = _lapack(np.linalg.svd, "svd", _host(a), full_matrices)
    return SVDResult(
        _derivative("linalg.svd", _back(u, a), (a,), _svd_rule("U")),
        svdvals(a) if a.requires_grad else _back(s, a),
        _derivative("linalg.svd", _back(vh, a), (a,), _svd_rule("Vh")),
    )


def svdvals(a) -> Tensor:
    """The singular values, descending: ``svdvals(a)``."""
    a = _float_input(a, "svdvals")
    if a.ndim < 2:
        raise ArgumentError(f"linalg.svdvals: A must have at least 2 dims, got {a.shape}")
    s = _lapack(np.linalg.svd, "svdvals", _host(a), False, False)

    def rule(c, g):
        u, _, vh = np.linalg.svd(_host(c.x), full_matrices=False)
        return ((_back(u, c.x) * g.unsqueeze(-2)) @ _back(vh, c.x),)

    return _derivative("linalg.svdvals", _back(s, a), (a,), rule)


def _eigh_host(a: Tensor, uplo: str, what: str):
    if uplo not in ("L", "U"):
        raise ArgumentError(f"linalg.{what}: UPLO must be 'L' or 'U', got {uplo!r}")
    return _lapack(np.linalg.eigh, what, _host(a), uplo)


def eigh(a, UPLO: str = "L") -> EighResult:  # noqa: N803 - PyTorch's name
    """Eigenvalues (ascending) and eigenvectors (columns) of symmetric matrices, from
    the ``UPLO`` triangle: ``w, v = eigh(a)``."""
    a = _square(a, "eigh")
    w, v = _eigh_host(a, UPLO, "eigh")
    vals = _derivative("linalg.eigh", _back(w, a), (a,), _eigvals_rule(UPLO))

    def rule(c, g):
        wh, vh = np.linalg.eigh(_host(c.x), UPLO)
        diff = wh[..., None, :] - wh[..., :, None]  # [i, j] = w_j - w_i
        n = wh.shape[-1]
        with np.errstate(divide="ignore"):
            f = np.where(np.eye(n, dtype=bool), 0.0, 1.0 / diff)
        vt = _back(vh, c.x)
        inner = vt.mT @ g
        ga = vt @ (_back(f, c.x) * inner) @ vt.mT
        return ((ga + ga.mT) * 0.5,)  # the gradient for a symmetric input

    vecs = _derivative("linalg.eigh", _back(v, a), (a,), rule)
    return EighResult(vals, vecs)


def _eigvals_rule(uplo: str):
    """The eigenvalues' gradient, ``V diag(g) V^T``, V from the ``uplo`` triangle."""

    def rule(c, g):
        v = _back(np.linalg.eigh(_host(c.x), uplo)[1], c.x)
        return ((v * g.unsqueeze(-2)) @ v.mT,)

    return rule


def eigvalsh(a, UPLO: str = "L") -> Tensor:  # noqa: N803 - PyTorch's name
    """The eigenvalues (ascending) of symmetric matrices, from the ``UPLO``
    triangle: ``eigvalsh(a)``."""
    a = _square(a, "eigvalsh")
    if UPLO not in ("L", "U"):
        raise ArgumentError(f"linalg.eigvalsh: UPLO must be 'L' or 'U', got {UPLO!r}")
    w = _lapack(np.linalg.eigvalsh, "eigvalsh", _host(a), UPLO)
    return _derivative("linalg.eigvalsh", _back(w, a), (a,), _eigvals_rule(UPLO))


def _tolerance(t, name: str):
    """A tolerance given as a number or a tensor (broadcast over the batch)."""
    if t is None or isinstance(t, (int, float)):
        return t
    if isinstance(t, Tensor):
        return _host(t)[..., None]
    raise ArgumentError(f"linalg: {name} must be a number or a tensor, got {type(t).__name__}")


def _pinv_backward(x: np.ndarray, p: np.ndarray, gp: np.ndarray) -> np.ndarray:
    """The gradient of ``P = pinv(X)`` for a constant rank (Golub and Pereyra):
    ``-P^T gP P^T + (I - X P) gP^T P P^T + P^T P gP^T (I - P X)``."""
    pt, xp, px = _mT(p), x @ p, p @ x
    eye_m, eye_n = np.eye(x.shape[-2]), np.eye(x.shape[-1])
    return -pt @ gp @ pt + (eye_m - xp) @ _mT(gp) @ p @ pt + pt @ p @ _mT(gp) @ (eye_n - px)


def pinv(a, *, atol=None, rtol=None, hermitian: bool = False) -> Tensor:
    """The Moore-Penrose pseudo-inverse (singular values below
    ``max(atol, rtol * largest)`` dropped; ``atol``/``rtol`` numbers or tensors
    broadcast over the batch): ``pinv(a)``. With ``hermitian`` the matrix's lower
    triangle is read (its eigendecomposition, as PyTorch). Differentiable where the
    rank does not change."""
    a = _float_input(a, "pinv")
    h = _host(a)
    atol, rtol = _tolerance(atol, "atol"), _tolerance(rtol, "rtol")
    if hermitian:
        low = np.tril(h)
        w, v = np.linalg.eigh(low + np.swapaxes(np.tril(h, -1), -1, -2))
        s = np.abs(w)
    else:
        u, s, vt = np.linalg.svd(h, full_matrices=False)
    top = s.max(-1, keepdims=True) if s.size else np.zeros(h.shape[:-2] + (1,))
    eps = np.finfo(np.dtype(a.dtype.np) if a.dtype.name != "bfloat16" else np.float32).eps
    no_atol = atol is None or (np.ndim(atol) == 0 and atol == 0)
    r = rtol if rtol is not None else (0.0 if not no_atol else max(h.shape[-2:]) * eps)
    cut = np.maximum(0.0 if atol is None else atol, r * top)
    with np.errstate(divide="ignore", invalid="ignore"):
        if hermitian:
            inv_w = np.where(s > cut, 1.0 / np.where(w == 0, 1.0, w), 0.0)
            out = (v * inv_w[..., None, :]) @ np.swapaxes(v, -1, -2)
        else:
            inv_s = np.where(s > cut, 1.0 / np.where(s == 0, 1.0, s), 0.0)
            out = (np.swapaxes(vt, -1, -2) * inv_s[..., None, :]) @ np.swapaxes(u, -1, -2)

    def rule(c, g):
        x = _host(c.x)
        if hermitian:  # the symmetric matrix its lower triangle stands for
            x = np.tril(x) + _mT(np.tril(x, -1))
        return (_back(_pinv_backward(x, out, _host(g)), c.x),)

    return _derivative("linalg.pinv", _back(out, a), (a,), rule)


def lstsq(a, b, rcond=None, *, driver=None) -> LstsqResult:
    """The least-squares solution of ``a @ X = b`` for a batch of (m, n) matrices
    ``a`` and right-hand sides (m, k) (or (m,) for a 2-d ``a``), batch dims
    broadcast: ``lstsq(a, b).solution``. As PyTorch's CPU drivers report them:
    the squared residuals for tall full-rank ``a`` except with ``"gelsy"`` (the
    default), the rank except with ``"gels"``, the singular values only with
    ``"gelsd"``/``"gelss"``; empty tensors otherwise. Solved on the host; the
    solution differentiates as ``pinv(a) @ b`` (for a rank that does not change)."""
    a, b = _float_input(a, "lstsq"), _float_input(b, "lstsq")
    drivers = ("gels", "gelsy", "gelsd", "gelss")
    driver = "gelsy" if driver is None else driver
    if driver not in drivers:
        raise ArgumentError(f"linalg.lstsq: driver must be one of {drivers}, got {driver!r}")
    vector = a.ndim == 2 and b.ndim == 1
    if a.ndim < 2 or (b.ndim < 2 and not vector) or b.shape[-2 if not vector else 0] != a.shape[-2]:
        raise ArgumentError(
            f"linalg.lstsq: A must be (*, m, n) and B (*, m, k) (or (m,) for a 2-d A); got "
            f"{a.shape} and {b.shape}"
        )
    m, n = a.shape[-2:]
    ah, bh = _host(a), _host(b)
    if vector:
        bh = bh[:, None]
    batch = np.broadcast_shapes(ah.shape[:-2], bh.shape[:-2])
    nb, k = math.prod(batch), bh.shape[-1]
    af = np.broadcast_to(ah, batch + (m, n)).reshape((nb, m, n))
    bf = np.broadcast_to(bh, batch + (m, k)).reshape((nb, m, k))
    if rcond is None:
        rcond = np.finfo(np.dtype(a.dtype.np) if a.dtype.name != "bfloat16" else np.float32).eps
        rcond *= max(m, n)
    xs, ranks, svs = np.zeros((nb, n, k)), np.zeros(nb, np.int64), np.zeros((nb, min(m, n)))
    for i in builtins.range(nb):
        xs[i], _, ranks[i], svs[i] = np.linalg.lstsq(af[i], bf[i], rcond=rcond)
    x = xs.reshape(batch + (n, k))
    x = x[..., 0] if vector else x
    if m > n and driver != "gelsy" and (ranks == n).all():
        r = bf - af @ xs
        res = (r * r).sum(-2).reshape(batch + (k,))
    else:
        res = np.zeros((0,))
    rank = np.zeros((0,), np.int64) if driver == "gels" else ranks.reshape(batch)
    sv = svs.reshape(batch + (min(m, n),)) if driver in ("gelsd", "gelss") else np.zeros((0,))

    def rule(c, g):  # X = pinv(A) B for the rank the solve found
        ah, bh, gx = _host(c.srcs[0]), _host(c.srcs[1]), _host(g)
        if vector:
            bh, gx = bh[:, None], gx[:, None]
        p = np.linalg.pinv(ah, rcond=rcond)
        gb = _mT(p) @ gx
        ga = _pinv_backward(ah, p, gx @ _mT(bh))
        gb = gb[..., 0] if vector else gb
        return (
            _sum_to(_back(ga, c.srcs[0]), c.srcs[0].shape),
            _sum_to(_back(gb, c.srcs[1]), c.srcs[1].shape),
        )

    sol = _derivative("linalg.lstsq", _back(x, a), (a, b), rule)
    return LstsqResult(sol, _back(res, a), Tensor(rank, dtypes.int64, a.device), _back(sv, a))


def matrix_rank(a, *, atol=None, rtol=None, hermitian: bool = False) -> Tensor:
    """The number of singular values above the tolerance (int64): ``matrix_rank(a)``."""
    a = _float_input(a, "matrix_rank")
    h = _host(a)
    s = np.linalg.svd(h, compute_uv=False)
    top = s.max(-1, keepdims=True) if s.size else np.zeros(h.shape[:-2] + (1,))
    eps = np.finfo(np.float32 if a.dtype.name != "float64" else np.float64).eps
    r = rtol if rtol is not None else (0.0 if atol else max(h.shape[-2:]) * eps)
    cut = np.maximum(atol or 0.0, r * top)
    return Tensor((s > cut).sum(-1).astype(np.int64), device=a.device)


def cond(a, p=None) -> Tensor:
    """The condition number in the ``p`` norm (2 by default: largest / smallest
    singular value): ``cond(a)``."""
    a = _float_input(a, "cond")
    if p in (None, 2, -2):
        s = np.linalg.svd(_host(a), compute_uv=False)
        with np.errstate(divide="ignore"):
            r = s[..., 0] / s[..., -1] if p != -2 else s[..., -1] / s[..., 0]
        return _back(r, a)
    return matrix_norm(a, p) * matrix_norm(inv(a), p)


def _expm(a: np.ndarray) -> np.ndarray:
    """exp of a batch of float64 matrices: scaling and squaring of an 18-term Taylor
    series (the scaled matrix has 1-norm below 1/2: truncation below 1e-18)."""
    norm = np.abs(a).sum(-2).max(-1) if a.size else np.zeros(a.shape[:-2])
    s = int(max(0, math.ceil(math.log2(float(np.max(norm)) + 1e-300)) + 1)) if a.size else 0
    x = a / 2.0**s
    eye = np.broadcast_to(np.eye(a.shape[-1]), a.shape)
    out, term = eye.copy(), eye.copy()
    for k in builtins.range(1, 19):
        term = term @ x / k
        out = out + term
    for _ in builtins.range(s):
        out = out @ out
    return out


def matrix_exp(a) -> Tensor:
    """The matrix exponential of a batch of square matrices (scaling and squaring on
    the host; the gradient is the corner block of the exponential of
    ``[[A^T, G], [0, A^T]]``): ``matrix_exp(a)``."""
    a = _square(a, "matrix_exp")
    out = _back(_expm(_host(a)), a)

    def rule(c, g):
        at = _host(c.x).swapaxes(-1, -2)
        n = at.shape[-1]
        big = np.zeros(at.shape[:-2] + (2 * n, 2 * n))
        big[..., :n, :n] = at
        big[..., n:, n:] = at
        big[..., :n, n:] = _host(g)
        return (_back(_expm(big)[..., :n, n:], c.x),)

    return _derivative("linalg.matrix_exp", out, (a,), rule)


# -- the rest, as the tensor methods ----------------------------------------------------
def matrix_power(a, n: int) -> Tensor:
    """``a`` to the ``n``-th power (negative: of the inverse): ``matrix_power(a, 3)``."""
    a = a if isinstance(a, Tensor) else Tensor(a)
    if isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n < 0:
        return inv(a).matrix_power(-n)
    return a.matrix_power(n)


def multi_dot(tensors) -> Tensor:
    """The product of a chain of matrices (the first and last may be vectors):
    ``multi_dot([a, b, c])``."""
    ts = list(tensors)
    if len(ts) < 2:
        raise ArgumentError("linalg.multi_dot needs at least two tensors")
    out = ts[0]
    for t in ts[1:]:
        out = out @ t
    return out


def vecdot(x, y, *, dim: int = -1) -> Tensor:
    """The dot products along ``dim`` (broadcast): ``vecdot(a, b)``."""
    return (x * y).sum(dim)


def cross(x, y, *, dim: int = -1) -> Tensor:
    """The cross product along ``dim`` (of length 3; the operands have one number
    of dims and broadcast): ``cross(a, b)``."""
    x = x if isinstance(x, Tensor) else Tensor(x)
    y = y if isinstance(y, Tensor) else Tensor(y, device=x.device)
    if x.ndim != y.ndim:
        raise ArgumentError(
            f"linalg.cross: the operands need the same number of dims, got {x.shape} and {y.shape}"
        )
    return x.cross(y, dim=dim)


def diagonal(a, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """The diagonals of a batch of matrices: ``diagonal(a)``."""
    return a.diagonal(offset, dim1, dim2)


def matmul(a, b) -> Tensor:
    """``a @ b``: ``matmul(a, b)``."""
    return a @ b


def vander(x, *, N: int | None = None) -> Tensor:  # noqa: N803 - PyTorch's name
    """The Vandermonde matrix with increasing powers (``linalg.vander``): ``vander(x)``."""
    t = x if isinstance(x, Tensor) else Tensor(x)
    t = t.reshape(1) if t.ndim == 0 else t  # PyTorch: a 0-d input is one point
    n = t.shape[-1] if N is None else N
    cols = [t**p if p else Tensor.ones_like(t) for p in builtins.range(n)]
    return Tensor.stack(*cols, dim=-1) if cols else t.unsqueeze(-1)[..., :0]


# -- eigenvalues of general matrices (host) ------------------------------------------------
class EigResult(NamedTuple):
    """``(eigenvalues, eigenvectors)`` of :func:`eig` (complex tensors)."""

    eigenvalues: Tensor
    eigenvectors: Tensor


def _eig_input(a, what: str) -> Tensor:
    """A float32/float64 or complex batch of square matrices, as ``geev`` takes."""
    if not isinstance(a, Tensor):
        a = Tensor(a)
    if not (a.dtype.is_float or a.dtype.is_complex):
        raise TypeError(f"linalg.{what}: expected a float or complex tensor, got {a.dtype.name}")
    if a.dtype.is_half:
        raise DTypeError(
            f"linalg.{what}: not implemented for {a.dtype.name} (as PyTorch's); cast the input "
            "to float32 first"
        )
    if a.ndim < 2:
        raise ArgumentError(f"linalg.{what}: The input tensor A must have at least 2 dimensions.")
    if a.shape[-1] != a.shape[-2]:
        raise ArgumentError(
            f"linalg.{what}: A must be batches of square matrices, but they are "
            f"{a.shape[-2]} by {a.shape[-1]} matrices"
        )
    return a


def _host_any(a: Tensor) -> np.ndarray:
    """``a``'s values in float64, or complex128 for a complex tensor."""
    h = a.detach().numpy()
    return h.astype(np.complex128 if a.dtype.is_complex else np.float64)


def _geev(h: np.ndarray, what: str, vectors: bool):
    if not np.isfinite(h).all():
        raise ArgumentError(f"linalg.{what}: input tensor should not contain infs or NaNs.")
    if vectors:
        w, v = _lapack(np.linalg.eig, what, h)
        return w.astype(np.complex128), v.astype(np.complex128)
    return _lapack(np.linalg.eigvals, what, h).astype(np.complex128), None


def _complex_out(z: np.ndarray, like: Tensor):
    """``z`` (complex128) as a complex tensor of ``like``'s precision and device."""
    from mlfuse.complex_tensors import ComplexTensor

    part = like.real.dtype if like.dtype.is_complex else like.dtype
    return ComplexTensor(_back(z.real, like, part), _back(z.imag, like, part))


def _mh(x: np.ndarray) -> np.ndarray:
    return np.conj(np.swapaxes(x, -1, -2))


def _eig_backward(gl: np.ndarray, gv: np.ndarray | None, w: np.ndarray, v: np.ndarray):
    """PyTorch's ``linalg_eig_backward`` (the non-Hermitian case) in complex128:
    ``gA = V^-H (diag(gL) + (V^H gV - V^H V Re(diag(V^H gV))) / conj(E)) V^H``,
    ``E[i, j] = w_j - w_i`` (1 on the diagonal)."""
    vh = _mh(v)
    n = w.shape[-1]
    inner = gl[..., None, :] * np.eye(n)
    if gv is not None:
        vhgv = vh @ gv
        d = np.diagonal(vhgv, 0, -2, -1)
        if not np.allclose(d.imag, 0.0, rtol=1e-2, atol=1e-2):
            raise ArgumentError(
                "linalg_eig_backward: The eigenvectors in the complex case are specified up to "
                "multiplication by e^{i phi}. The specified loss function depends on this "
                "quantity, so it is ill-defined."
            )
        vhgv = vhgv - vh @ (v * d.real[..., None, :])
        wc = np.conj(w)
        e = wc[..., None, :] - wc[..., :, None]
        idx = np.arange(n)
        e[..., idx, idx] = 1.0
        with np.errstate(divide="ignore", invalid="ignore"):
            inner = inner + vhgv / e
    return np.linalg.solve(vh, inner @ vh)


def _eig_grad(ctx, grads) -> tuple:
    """The input gradients (real part, and imaginary for a complex input) from the
    results' gradients ``grads`` (real/imaginary pairs, eigenvalues first)."""
    Tensor.realize(*grads)  # one schedule for all of them
    gl = _host(grads[0]) + 1j * _host(grads[1])
    gv = _host(grads[2]) + 1j * _host(grads[3]) if len(grads) > 2 else None
    ga = _eig_backward(gl, gv, ctx.w, ctx.v)
    re = _back(ga.real, ctx.like_part)
    return (re, _back(ga.imag, ctx.like_part)) if ctx.complex_input else (re,)


def _eig_apply(a: Tensor, what: str, vectors: bool):
    """``(w, v)`` of ``a`` (v None unless ``vectors``) as complex tensors, tied to
    ``a`` by PyTorch's gradient when ``a`` requires one."""
    from mlfuse.autograd import is_grad_enabled
    from mlfuse.autograd.function import Function

    h = _host_any(a)
    needs = a.requires_grad and is_grad_enabled()
    w, v = _geev(h, what, vectors or needs)
    if not needs:
        return _complex_out(w, a), (_complex_out(v, a) if vectors else None)
    parts = (a.real, a.imag) if a.dtype.is_complex else (a,)
    like = parts[0]

    class _Eig(Function):
        @staticmethod
        def forward(ctx, *inputs):
            ctx.w, ctx.v, ctx.like_part = w, v, like
            ctx.complex_input = len(inputs) == 2
            outs = [_back(w.real, like), _back(w.imag, like)]
            if vectors:
                outs += [_back(v.real, like), _back(v.imag, like)]
            return tuple(outs)

        @staticmethod
        def backward(ctx, *grads):
            return _eig_grad(ctx, grads)

    _Eig.__name__ = "LinalgEig" if vectors else "LinalgEigvals"
    outs = _Eig.apply(*parts)
    from mlfuse.complex_tensors import ComplexTensor

    wt = ComplexTensor(outs[0], outs[1])
    return wt, (ComplexTensor(outs[2], outs[3]) if vectors else None)


def eig(A) -> EigResult:  # noqa: N803 - PyTorch's name
    """Eigenvalues and eigenvectors (the columns, each of norm 1) of a batch of
    square real or complex matrices, as complex tensors (complex64 for float32,
    complex128 for float64): ``A @ V == V @ diag(w)``. Differentiable with
    PyTorch's formula; a loss that depends on the eigenvectors' arbitrary phases
    is refused at ``backward``: ``w, V = eig(a)``."""
    a = _eig_input(A, "eig")
    w, v = _eig_apply(a, "eig", True)
    return EigResult(w, v)


def eigvals(A) -> Tensor:  # noqa: N803 - PyTorch's name
    """The eigenvalues of a batch of square real or complex matrices, as a complex
    tensor (in LAPACK's order, as :func:`eig`'s): ``w = eigvals(a)``."""
    a = _eig_input(A, "eigvals")
    return _eig_apply(a, "eigvals", False)[0]


# -- Householder reflectors (host) -----------------------------------------------------------
def _real_input(a, what: str, name: str, prefix: str = "torch.linalg.") -> Tensor:
    if not isinstance(a, Tensor):
        a = Tensor(a)
    if a.dtype.is_complex:
        raise DTypeError(f"{prefix}{what}: complex {name} is not supported by mlfuse")
    if not a.dtype.is_float:
        raise TypeError(f"{prefix}{what}: expected a float tensor {name}, got {a.dtype.name}")
    return a


def _reflectors(a: np.ndarray, k: int) -> np.ndarray:
    """The first ``k`` Householder vectors packed below ``a``'s diagonal (geqrf's
    layout), unpacked: unit diagonal, zeros above, (..., m, k)."""
    v = np.tril(a[..., :, :k], -1)
    idx = np.arange(k)
    v[..., idx, idx] = 1.0
    return v


def _orgqr(a: np.ndarray, tau: np.ndarray) -> list[np.ndarray]:
    """``[Q_1, ..., Q_k+1]`` with ``Q_i = H_i ... H_k I[:, :n]`` and
    ``H_i = I - tau_i v_i v_i^T``: Q_1 is LAPACK's orgqr of ``(a, tau)``."""
    m, n = a.shape[-2:]
    k = tau.shape[-1]
    v = _reflectors(a, k)
    q = np.broadcast_to(np.eye(m, n), a.shape).copy()
    out = [q]
    for i in builtins.range(k - 1, -1, -1):
        vi = v[..., :, i : i + 1]
        q = q - tau[..., i, None, None] * (vi @ (np.swapaxes(vi, -1, -2) @ q))
        out.append(q)
    return out[::-1]


def _orgqr_grad(a: np.ndarray, tau: np.ndarray, g: np.ndarray):
    """The gradients w.r.t. ``a`` (below its diagonal) and ``tau`` of
    ``<g, orgqr(a, tau)>``, back through ``Q_i = Q_i+1 - tau_i v_i (v_i^T Q_i+1)``."""
    k = tau.shape[-1]
    v = _reflectors(a, k)
    qs = _orgqr(a, tau)
    ga = np.zeros_like(a)
    gt = np.zeros_like(tau)
    for i in builtins.range(k):
        vi, nxt = v[..., :, i : i + 1], qs[i + 1]
        t = tau[..., i, None, None]
        w = np.swapaxes(nxt, -1, -2) @ vi  # (..., n, 1): Q_i+1^T v
        gt[..., i] = -(np.swapaxes(vi, -1, -2) @ g @ w)[..., 0, 0]
        gv = -t * (g @ w + nxt @ (np.swapaxes(g, -1, -2) @ vi))
        ga[..., i + 1 :, i] = gv[..., i + 1 :, 0]
        g = g - t * (vi @ (np.swapaxes(vi, -1, -2) @ g))  # H_i^T g
    return ga, gt


def _householder_checks(a: Tensor, tau: Tensor, what: str) -> None:
    if a.ndim < 2:
        raise ArgumentError(f"torch.linalg.{what}: input must have at least 2 dimensions.")
    if a.shape[-2] < a.shape[-1]:
        raise ArgumentError(
            f"torch.linalg.{what}: input.shape[-2] must be greater than or equal to input.shape[-1]"
        )
    if tau.ndim == 0 or a.shape[-1] < tau.shape[-1]:
        raise ArgumentError(
            f"torch.linalg.{what}: input.shape[-1] must be greater than or equal to tau.shape[-1]"
        )
    if a.ndim - tau.ndim != 1:
        raise ArgumentError(
            f"torch.linalg.{what}: Expected tau to have one dimension less than input, but got "
            f"tau.ndim equal to {tau.ndim} and input.ndim is equal to {a.ndim}"
        )
    if tau.shape[:-1] != a.shape[:-2]:
        raise ArgumentError(
            f"torch.linalg.{what}: Expected batch dimensions of tau to be equal to "
            f"input.shape[:-2], but got {list(tau.shape[:-1])}"
        )
    if tau.dtype != a.dtype:
        raise DTypeError(
            f"torch.linalg.{what}: tau dtype {tau.dtype.name} does not match input dtype "
            f"{a.dtype.name}"
        )


def householder_product(A, tau) -> Tensor:  # noqa: N803 - PyTorch's name
    """The first ``n`` columns of the product ``H_1 ... H_k`` of Householder
    reflectors ``H_i = I - tau_i v_i v_i^T``, ``v_i`` stored below the diagonal
    of column ``i`` of ``A`` (m x n, m >= n >= k; a unit diagonal implied), as
    LAPACK's orgqr: with :func:`geqrf`'s output it is the Q of the QR
    decomposition. Real inputs; gradients reach ``A`` and ``tau``:
    ``Q = householder_product(*geqrf(a))``."""
    a = _real_input(A, "householder_product", "input")
    t = _real_input(tau, "householder_product", "tau")
    _householder_checks(a, t, "householder_product")
    q = _back(_orgqr(_host(a), _host(t))[0], a)

    def rule(c, g):
        ga, gt = _orgqr_grad(_host(c.srcs[0]), _host(c.srcs[1]), _host(g))
        return (_back(ga, c.srcs[0]), _back(gt, c.srcs[1]))

    return _derivative("linalg.householder_product", q, (a, t), rule)


def orgqr(input, tau) -> Tensor:  # noqa: A002 - PyTorch's name
    """``torch.orgqr`` (PyTorch's older name of :func:`householder_product`):
    ``Q = orgqr(*geqrf(a))``."""
    return householder_product(input, tau)


class GeqrfResult(NamedTuple):
    """``(a, tau)`` of :func:`geqrf`: R on and above the diagonal of ``a``, the
    Householder vectors below it, their scales in ``tau``."""

    a: Tensor
    tau: Tensor


def geqrf(input) -> GeqrfResult:  # noqa: A002 - PyTorch's name
    """LAPACK's geqrf (``torch.geqrf``): the QR decomposition of a batch of m x n
    matrices in its packed form, R on and above the diagonal, the Householder
    vectors below it and their scales ``tau`` (k = min(m, n)); Q is
    ``householder_product(a, tau)``. No gradient (as PyTorch's):
    ``a, tau = geqrf(x)``."""
    x = _real_input(input, "geqrf", "input", "torch.")
    if x.ndim < 2:
        raise ArgumentError("torch.geqrf: input must have at least 2 dimensions.")
    h, tau = np.linalg.qr(_host(x), mode="raw")  # h is the packed form, transposed
    rule = _no_rule("geqrf")
    return GeqrfResult(
        _derivative("geqrf", _back(np.swapaxes(h, -1, -2), x), (x,), rule),
        _derivative("geqrf", _back(tau, x), (x,), rule),
    )


def ormqr(input, tau, other, left: bool = True, transpose: bool = False) -> Tensor:  # noqa: A002
    """``op(Q) @ other`` (``other @ op(Q)`` when not ``left``), Q the m x m product
    of the Householder reflectors in ``(input, tau)`` (:func:`geqrf`'s output)
    and op the transpose when ``transpose``, as LAPACK's ormqr
    (``torch.ormqr``). Real inputs; gradients reach all three:
    ``y = ormqr(a, tau, c)``."""
    a = _real_input(input, "ormqr", "input", "torch.")
    t = _real_input(tau, "ormqr", "tau", "torch.")
    c = _real_input(other, "ormqr", "other", "torch.")
    if a.ndim < 2:
        raise ArgumentError("torch.ormqr: input must have at least 2 dimensions.")
    if c.ndim < 2:
        raise ArgumentError("torch.ormqr: other must have at least 2 dimensions.")
    side = -2 if left else -1
    m = a.shape[-2]
    if c.shape[side] != m:
        raise ArgumentError(f"torch.ormqr: other.shape[{side}] must be equal to input.shape[-2]")
    k = min(c.shape[side], a.shape[-1])
    if t.ndim == 0 or t.shape[-1] != k:
        raise ArgumentError(
            f"torch.ormqr: tau.shape[-1] must be equal to min(other.shape[{side}], input.shape[-1])"
        )
    if a.ndim - t.ndim != 1:
        raise ArgumentError(
            "torch.ormqr: Expected tau to have one dimension less than input, but got tau.ndim "
            f"equal to {t.ndim} and input.ndim is equal to {a.ndim}"
        )
    if a.ndim != c.ndim:
        raise ArgumentError(
            "torch.ormqr: Expected other to have the same number of dimensions as input, but got "
            f"other.ndim equal to {c.ndim} and input.ndim is equal to {a.ndim}"
        )
    for what, got in (("tau", t.shape[:-1]), ("other", c.shape[:-2])):
        if got != a.shape[:-2]:
            raise ArgumentError(
                f"torch.ormqr: Expected batch dimensions of {what} to be equal to "
                f"input.shape[:-2], but got {list(got)}"
            )
    for what, x in (("tau", t), ("other", c)):
        if x.dtype != a.dtype:
            raise DTypeError(
                f"torch.ormqr: Expected input and {what} to have the same dtype, but input has "
                f"dtype {a.dtype.name} and {what} has dtype {x.dtype.name}"
            )
    v = a[..., :, :k]
    if k < m:  # the full m x m Q: columns past k hold no reflector
        pad = Tensor.zeros(*a.shape[:-2], m, m - k, dtype=a.dtype, device=a.device)
        v = Tensor.cat([v, pad], dim=-1)
    q = householder_product(v, t)
    q = q.mT if transpose else q
    return q @ c if left else c @ q


# -- LDL (Bunch-Kaufman) factorization (host) -------------------------------------------
_BK_ALPHA = (1.0 + math.sqrt(17.0)) / 8.0


def _sytf2(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """LAPACK's dsytf2 (``uplo='L'``) on one float64 matrix, of which the lower
    triangle is read: Bunch-Kaufman diagonal pivoting, ``A = P L D L^T P^T`` with
    1x1 and 2x2 blocks in D. Returns the packed factors (the upper triangle
    zero, as PyTorch's), the 1-based pivots (both negative for a 2x2 block) and
    info (0, or the 1-based index of the first zero block)."""
    a = np.tril(a).astype(np.float64)
    n = a.shape[0]
    piv = np.zeros(n, np.int32)
    info = 0
    k = 0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        while k < n:
            kstep = 1
            absakk = abs(a[k, k])
            imax, colmax = k, 0.0
            if k < n - 1:
                col = np.abs(a[k + 1 :, k])
                imax = k + 1 + int(np.argmax(col))
                colmax = float(col[imax - k - 1])
            if max(absakk, colmax) == 0.0 or math.isnan(absakk):
                info = info or k + 1
                kp = k
            else:
                if absakk >= _BK_ALPHA * colmax:
                    kp = k
                else:
                    row = np.abs(a[imax, k:imax])
                    rowmax = float(row.max())
                    if imax < n - 1:
                        rowmax = max(rowmax, float(np.abs(a[imax + 1 :, imax]).max()))
                    if absakk >= _BK_ALPHA * colmax * (colmax / rowmax):
                        kp = k
                    elif abs(a[imax, imax]) >= _BK_ALPHA * rowmax:
                        kp = imax
                    else:
                        kp, kstep = imax, 2
                kk = k + kstep - 1
                if kp != kk:  # swap rows and columns kk and kp of the trailing block
                    if kp < n - 1:
                        a[kp + 1 :, [kk, kp]] = a[kp + 1 :, [kp, kk]]
                    t = a[kk + 1 : kp, kk].copy()
                    a[kk + 1 : kp, kk] = a[kp, kk + 1 : kp]
                    a[kp, kk + 1 : kp] = t
                    a[kk, kk], a[kp, kp] = a[kp, kp], a[kk, kk]
                    if kstep == 2:
                        a[k + 1, k], a[kp, k] = a[kp, k], a[k + 1, k]
                if kstep == 1:
                    if k < n - 1:
                        d11 = 1.0 / a[k, k]
                        x = a[k + 1 :, k].copy()
                        a[k + 1 :, k + 1 :] -= d11 * np.outer(x, x)
                        a[k + 1 :, k] = x * d11
                elif k < n - 2:
                    d21 = a[k + 1, k]
                    d11 = a[k + 1, k + 1] / d21
                    d22 = a[k, k] / d21
                    d21 = (1.0 / (d11 * d22 - 1.0)) / d21
                    c0, c1 = a[k + 2 :, k].copy(), a[k + 2 :, k + 1].copy()
                    wk = d21 * (d11 * c0 - c1)
                    wkp1 = d21 * (d22 * c1 - c0)
                    a[k + 2 :, k + 2 :] -= np.outer(c0, wk) + np.outer(c1, wkp1)
                    a[k + 2 :, k] = wk
                    a[k + 2 :, k + 1] = wkp1
            if kstep == 1:
                piv[k] = kp + 1
            else:
                piv[k] = piv[k + 1] = -(kp + 1)
            k += kstep
    return np.tril(a), piv, info


def _sytrs(ld: np.ndarray, piv: np.ndarray, b: np.ndarray) -> np.ndarray:
    """LAPACK's dsytrs (``uplo='L'``): ``X`` with ``A X = b`` from one matrix's
    packed :func:`_sytf2` factors."""
    n = ld.shape[0]
    b = np.array(b, np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        k = 0
        while k < n:  # L D Y = P^T b
            if piv[k] > 0:
                kp = piv[k] - 1
                b[[k, kp]] = b[[kp, k]]
                b[k + 1 :] -= np.outer(ld[k + 1 :, k], b[k])
                b[k] /= ld[k, k]
                k += 1
            else:
                kp = -piv[k] - 1
                b[[k + 1, kp]] = b[[kp, k + 1]]
                b[k + 2 :] -= np.outer(ld[k + 2 :, k], b[k]) + np.outer(
                    ld[k + 2 :, k + 1], b[k + 1]
                )
                akm1k = ld[k + 1, k]
                akm1 = ld[k, k] / akm1k
                ak = ld[k + 1, k + 1] / akm1k
                denom = akm1 * ak - 1.0
                bkm1, bk = b[k] / akm1k, b[k + 1] / akm1k
                b[k] = (ak * bkm1 - bk) / denom
                b[k + 1] = (akm1 * bk - bkm1) / denom
                k += 2
        k = n - 1
        while k >= 0:  # L^T P^T X = Y
            if piv[k] > 0:
                b[k] -= ld[k + 1 :, k] @ b[k + 1 :]
                kp = piv[k] - 1
                b[[k, kp]] = b[[kp, k]]
                k -= 1
            else:
                b[k] -= ld[k + 1 :, k] @ b[k + 1 :]
                b[k - 1] -= ld[k + 1 :, k - 1] @ b[k + 1 :]
                kp = -piv[k] - 1
                b[[k, kp]] = b[[kp, k]]
                k -= 2
    return b


class LDLFactorResult(NamedTuple):
    """``(LD, pivots)`` of :func:`ldl_factor`."""

    LD: Tensor
    pivots: Tensor


class LDLFactorExResult(NamedTuple):
    """``(LD, pivots, info)`` of :func:`ldl_factor_ex`."""

    LD: Tensor
    pivots: Tensor
    info: Tensor


def _ldl_input(a, what: str) -> Tensor:
    a = _real_input(a, what, "A")
    if a.ndim < 2:
        raise ArgumentError(
            f"torch.linalg.{what}: The input tensor A must have at least 2 dimensions."
        )
    if a.shape[-1] != a.shape[-2]:
        raise ArgumentError(
            f"torch.linalg.{what}: A must be batches of square matrices, but they are "
            f"{a.shape[-2]} by {a.shape[-1]} matrices"
        )
    return a


def _ldl_error(what: str, info: np.ndarray) -> str:
    bad = np.argwhere(info > 0)[0]
    i = int(info[tuple(bad)])
    where = f" (batch element {tuple(int(v) for v in bad)})" if info.ndim else ""
    return (
        f"torch.linalg.{what}: D[{i},{i}] is exactly zero{where}: the input is singular, so "
        "solving with these factors would divide by zero; ldl_factor_ex factors it anyway"
    )


def ldl_factor_ex(
    A,  # noqa: N803 - PyTorch's name
    *,
    hermitian: bool = False,
    check_errors: bool = False,
) -> LDLFactorExResult:
    """The LDL factorization of a batch of symmetric matrices (their lower
    triangles are read) with Bunch-Kaufman pivoting, as LAPACK's sytrf:
    ``(LD, pivots, info)``, L below the diagonal of LD (unit diagonal implied), the
    1x1 and 2x2 blocks of D on and just below it; 1-based int32 pivots, both
    negative for a 2x2 block; info 0 or the 1-based index of a zero block of D
    (``check_errors`` raises :class:`LinAlgError` instead). Real inputs
    (``hermitian`` changes nothing for them); no gradient:
    ``LD, pivots, info = ldl_factor_ex(a)``."""
    a = _ldl_input(A, "ldl_factor_ex")
    h = _host(a)
    n = h.shape[-1]
    flat = h.reshape((math.prod(h.shape[:-2]), n, n))
    ld = np.zeros_like(flat)
    piv = np.zeros(flat.shape[:-1], np.int32)
    info = np.zeros(flat.shape[0], np.int32)
    for i in builtins.range(flat.shape[0]):
        ld[i], piv[i], info[i] = _sytf2(flat[i])
    info = info.reshape(h.shape[:-2])
    if check_errors and (info > 0).any():
        raise LinAlgError(_ldl_error("ldl_factor_ex", info))
    out = _derivative(
        "linalg.ldl_factor", _back(ld.reshape(h.shape), a), (a,), _no_rule("ldl_factor")
    )
    return LDLFactorExResult(
        out,
        Tensor(piv.reshape(h.shape[:-1]), dtypes.int32, a.device),
        Tensor(info, dtypes.int32, a.device),
    )


def ldl_factor(A, *, hermitian: bool = False) -> LDLFactorResult:  # noqa: N803 - PyTorch's name
    """``(LD, pivots)`` of :func:`ldl_factor_ex`; a singular matrix (a zero block
    of D) raises :class:`LinAlgError`: ``LD, pivots = ldl_factor(a)``."""
    LD, piv, info = ldl_factor_ex(A, hermitian=hermitian)  # noqa: N806
    bad = info.numpy()
    if (bad > 0).any():
        raise LinAlgError(_ldl_error("ldl_factor", bad))
    return LDLFactorResult(LD, piv)


def ldl_solve(
    LD,  # noqa: N803 - PyTorch's name
    pivots,
    B,  # noqa: N803 - PyTorch's name
    *,
    hermitian: bool = False,
) -> Tensor:
    """``X`` with ``A X = B`` from :func:`ldl_factor`'s ``(LD, pivots)`` of the
    symmetric ``A``, as LAPACK's sytrs; ``B`` is a batch of matrices and batch
    dims broadcast. The gradient reaches ``B`` (``A`` is symmetric: it is
    ``ldl_solve`` of the incoming gradient), not ``LD``:
    ``x = ldl_solve(LD, pivots, b)``."""
    t = _real_input(LD, "ldl_solve", "LD")
    b = _real_input(B, "ldl_solve", "B")
    if t.ndim < 2 or t.shape[-1] != t.shape[-2]:
        raise ArgumentError(
            f"torch.linalg.ldl_solve: LD must be a batch of square matrices, got shape {t.shape}"
        )
    if b.ndim < 2:
        raise ArgumentError(
            f"torch.linalg.ldl_solve: B must have at least 2 dimensions, got shape {b.shape}"
        )
    piv = pivots if isinstance(pivots, Tensor) else Tensor(pivots)
    if piv.dtype.is_float or piv.dtype.is_complex or piv.dtype.name == "bool":
        raise TypeError(
            f"torch.linalg.ldl_solve: Expected pivots to be integers. Got {piv.dtype.name}"
        )
    if piv.shape != t.shape[:-1]:
        raise ArgumentError(
            "torch.linalg.ldl_solve: Expected LD.shape[:-1] and pivots.shape to be the same, "
            f"but got pivots with shape {list(piv.shape)} instead"
        )
    n = t.shape[-1]
    if b.shape[-2] != n:
        raise ArgumentError(
            "Incompatible matrix sizes for torch.linalg.ldl_solve: each A matrix is "
            f"{n} by {n} but each b matrix is {b.shape[-2]} by {b.shape[-1]}"
        )
    batch = _batch_shape("ldl_solve", t, b, ("LD", "B"))
    ph = piv.numpy().astype(np.int64)
    if ph.size and (np.abs(ph).min() < 1 or np.abs(ph).max() > n):
        raise ArgumentError(
            f"torch.linalg.ldl_solve: pivots must be between 1 and {n} in magnitude (1-based "
            "rows, as ldl_factor gives them)"
        )
    dt = dtypes.promote(t.dtype, b.dtype)
    nb = math.prod(batch)
    ld_h = np.broadcast_to(_host(t), batch + (n, n)).reshape((nb, n, n))
    piv_h = np.broadcast_to(ph, batch + (n,)).reshape((nb, n))
    lds, ld_grad = t.detach(), t.requires_grad

    def solve_host(bh: np.ndarray) -> np.ndarray:
        rhs = np.broadcast_to(bh, batch + bh.shape[-2:]).reshape((nb,) + bh.shape[-2:])
        x = [_sytrs(ld_h[i], piv_h[i], rhs[i]) for i in builtins.range(nb)]
        return (np.stack(x) if x else np.zeros(rhs.shape)).reshape(batch + bh.shape[-2:])

    x = _back(solve_host(_host(b)), t, dt)

    def rule(c, g):
        if ld_grad:
            _no_rule("ldl_solve (w.r.t. LD)")(c, g)
        return (None, _sum_to(_back(solve_host(_host(g)), lds, dt), c.srcs[1].shape))

    return _derivative("linalg.ldl_solve", x, (t, b), rule)
