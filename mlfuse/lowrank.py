"""PyTorch's randomized low-rank decompositions, ``torch.svd_lowrank`` and
``torch.pca_lowrank`` (Halko, Martinsson and Tropp 2009, algorithms 4.4 and
5.1): a random range finder with ``niter`` subspace (power) iterations, then the
SVD of the small projected matrix::

    U, S, V = mlfuse.lowrank.svd_lowrank(a, q=6)   # a ~ U @ diag(S) @ V.mT
    U, S, V = mlfuse.lowrank.pca_lowrank(x, q=3)   # principal directions in V

The matrix products are lazy tensor ops; the QR decompositions and the final
SVD run through :mod:`mlfuse.linalg` (LAPACK on the host). The random start
draws from mlfuse's global generator (``mlfuse.manual_seed``). As
``linalg.qr`` has no gradient, neither do these (``backward`` refuses).
PyTorch's ``torch.lobpcg`` is not provided.
"""

from __future__ import annotations

import builtins

from mlfuse import linalg
from mlfuse.errors import ArgumentError
from mlfuse.tensor import Tensor

__all__ = ["svd_lowrank", "pca_lowrank", "get_approximate_basis"]


def _matrix(a, what: str, name: str = "A") -> Tensor:
    if not isinstance(a, Tensor):
        a = Tensor(a)
    if not a.dtype.is_float:
        raise TypeError(f"{what}: expected a float tensor {name}, got {a.dtype.name}")
    if a.ndim < 2:
        raise ArgumentError(f"{what}: {name} must have at least 2 dimensions, got shape {a.shape}")
    return a


def _count(v, what: str, name: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise ValueError(f"{what}: {name}(={v}) must be non-negative integer")
    return v


def get_approximate_basis(A, q: int, niter: int | None = 2, M=None) -> Tensor:  # noqa: N803
    """A matrix ``Q`` with at most ``q`` orthonormal columns whose span
    approximates the range of ``A - M`` (Halko et al.'s algorithm 4.4): a random
    ``n x q`` start, ``niter`` subspace iterations, each re-orthonormalized by QR:
    ``Q = get_approximate_basis(a, 6)``."""
    a = _matrix(A, "get_approximate_basis")
    niter = 2 if niter is None else _count(niter, "get_approximate_basis", "niter")
    q = _count(q, "get_approximate_basis", "q")
    r = Tensor.randn(a.shape[-1], q, dtype=a.dtype, device=a.device)
    x = a @ r if M is None else a @ r - M @ r
    basis = linalg.qr(x).Q
    for _ in builtins.range(niter):
        x = a.mT @ basis if M is None else a.mT @ basis - M.mT @ basis
        basis = linalg.qr(x).Q
        x = a @ basis if M is None else a @ basis - M @ basis
        basis = linalg.qr(x).Q
    return basis


def svd_lowrank(A, q: int | None = 6, niter: int | None = 2, M=None):  # noqa: N803
    """``(U, S, V)``, an approximate rank-``q`` SVD of ``A - M`` (``M`` broadcast
    to ``A``'s shape; ``A`` is a batch of m x n matrices): ``A - M ~ U diag(S)
    V^T``, ``U`` (m, q), ``S`` (q,), ``V`` (n, q). More ``niter`` (subspace
    iterations) is more accurate where the singular values decay slowly; choose
    ``q`` a little above the rank wanted. Random: seed with
    ``mlfuse.manual_seed``: ``U, S, V = svd_lowrank(a, q=4)``."""
    a = _matrix(A, "svd_lowrank")
    q = 6 if q is None else _count(q, "svd_lowrank", "q")
    niter = 2 if niter is None else _count(niter, "svd_lowrank", "niter")
    m, n = a.shape[-2:]
    if M is not None:
        M = _matrix(M, "svd_lowrank", "M")  # noqa: N806
        try:
            M = M.broadcast_to(a.shape)  # noqa: N806
        except ValueError:
            raise ArgumentError(
                f"svd_lowrank: M of shape {M.shape} does not broadcast to A's {a.shape}"
            ) from None
    if m < n:  # work on the tall one
        a = a.mT
        M = M.mT if M is not None else None  # noqa: N806
    basis = get_approximate_basis(a, q, niter=niter, M=M)
    b = basis.mT @ a if M is None else basis.mT @ a - basis.mT @ M
    u, s, vh = linalg.svd(b, full_matrices=False)
    v = vh.mT
    u = basis @ u
    if m < n:
        u, v = v, u
    return u, s, v


def pca_lowrank(A, q: int | None = None, center: bool = True, niter: int = 2):  # noqa: N803
    """``(U, S, V)`` of :func:`svd_lowrank` of ``A`` less its column means (not
    centered when ``center`` is False): the principal directions are ``V``'s
    columns, the projections ``A @ V[:, :k]``, the explained variances
    ``S**2 / (m - 1)``; ``q`` defaults to ``min(6, m, n)``:
    ``U, S, V = pca_lowrank(x, q=3)``."""
    a = _matrix(A, "pca_lowrank")
    m, n = a.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif isinstance(q, bool) or not isinstance(q, int) or not (0 <= q <= min(m, n)):
        raise ValueError(
            f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}"
        )
    if isinstance(niter, bool) or not isinstance(niter, int) or niter < 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return svd_lowrank(a, q, niter=niter)
    return svd_lowrank(a - a.mean(-2, keepdim=True), q, niter=niter)
