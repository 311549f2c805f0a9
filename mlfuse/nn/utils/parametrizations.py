"""``torch.nn.utils.parametrizations``: weight norm, spectral norm and orthogonal
weights as parametrizations (``nn.utils.parametrize``), with PyTorch's
``state_dict`` keys::

    layer = weight_norm(nn.Linear(20, 40))  # parametrizations.weight.original0 (g), original1 (v)
    layer = spectral_norm(nn.Linear(20, 40))  # parametrizations.weight.original, .0._u, .0._v
    layer = orthogonal(nn.Linear(20, 40))  # layer.weight.T @ layer.weight == I
"""

from __future__ import annotations

import numpy as np

from mlfuse import linalg
from mlfuse.autograd import no_grad
from mlfuse.errors import ArgumentError, DimError
from mlfuse.nn import functional as F
from mlfuse.nn.modules import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d, Module
from mlfuse.nn.utils import parametrize
from mlfuse.tensor import Tensor

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


# -- weight norm ----------------------------------------------------------------------
def _norm_except_dim(v: Tensor, dim: int) -> Tensor:
    """PyTorch's ``norm_except_dim(v, 2, dim)``: the 2-norm over every dim but
    ``dim``, kept as size-1 dims; ``dim=-1`` is the norm of the whole tensor (0-d)."""
    if dim == -1:
        return v.norm()
    d = dim % v.ndim
    dims = tuple(i for i in range(v.ndim) if i != d)
    return (v * v).sum(dims, keepdim=True).sqrt() if dims else v.abs()


def _weight_norm(v: Tensor, g: Tensor, dim: int) -> Tensor:
    """PyTorch's ``_weight_norm(v, g, dim)``: ``v * g / norm_except_dim(v, dim)``."""
    return v * (g / _norm_except_dim(v, dim))


def _check_weight_norm_dim(t: Tensor, dim, what: str) -> int:
    dim = -1 if dim is None else dim
    if isinstance(dim, bool) or not isinstance(dim, int):
        raise ArgumentError(f"{what}: dim must be an int or None, got {dim!r}")
    if dim != -1 and not -t.ndim <= dim < t.ndim:
        raise DimError(f"{what}: dim {dim} is out of range for a tensor of {t.ndim} dims")
    return dim


class _WeightNorm(Module):
    """``weight = g * v / ||v||`` (norms over every dim but ``dim``; None: the whole
    tensor): ``_WeightNorm(0)(g, v)``."""

    def __init__(self, dim: int | None = 0) -> None:
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        """The weight from its magnitude and direction: ``wn.forward(g, v)``."""
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        """``(g, v)`` of ``weight``: its norms and itself: ``wn.right_inverse(w)``."""
        return _norm_except_dim(weight, self.dim), weight

    def _settings(self) -> str:
        return f"dim={self.dim}"


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Reparametrize ``module.<name>`` as ``g * v / ||v||``, the norm taken over
    every dim but ``dim`` (None: over the whole tensor, ``g`` 0-d), as
    ``parametrizations.<name>.original0`` (g) and ``original1`` (v), PyTorch's
    ``parametrizations.weight_norm``; returns the module:
    ``layer = weight_norm(nn.Linear(20, 40))``."""
    w = parametrize._tensor_attr(module, name, "weight_norm")
    dim = _check_weight_norm_dim(w, dim, "weight_norm")
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


# -- spectral norm --------------------------------------------------------------------
class _SpectralNorm(Module):
    """``weight / sigma``, sigma the largest singular value of the weight as a
    matrix (dim ``dim`` first, the others flattened), estimated by power
    iteration with the buffers ``_u`` and ``_v``, one step (``n_power_iterations``)
    per computation in training mode, none in eval:
    ``_SpectralNorm(layer.weight)(layer.weight)``."""

    def __init__(
        self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12
    ) -> None:
        ndim = weight.ndim
        if isinstance(dim, bool) or not isinstance(dim, int) or not -ndim <= dim < ndim:
            raise DimError(
                f"spectral_norm: dim {dim!r} is out of range for a weight of {ndim} dims"
            )
        if (
            isinstance(n_power_iterations, bool)
            or not isinstance(n_power_iterations, int)
            or n_power_iterations <= 0
        ):
            raise ArgumentError(
                f"spectral_norm: n_power_iterations must be positive, got {n_power_iterations!r}"
            )
        if not weight.dtype.is_float:
            raise ArgumentError(f"spectral_norm: the weight must be float, got {weight.dtype}")
        self.dim = dim % ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            with no_grad():
                wm = self._reshape_weight_to_matrix(weight.detach())
                h, w = wm.shape
                u = Tensor.randn(h, dtype=weight.dtype, device=weight.device)
                v = Tensor.randn(w, dtype=weight.dtype, device=weight.device)
                self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
                self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
                # start from reasonable u, v: 15 steps of the power method
                self._power_method(wm, 15)

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.ndim) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat: Tensor, n_power_iterations: int) -> None:
        with no_grad():
            _power_steps(weight_mat.detach(), self._u, self._v, n_power_iterations, self.eps)

    def forward(self, weight: Tensor) -> Tensor:
        """The weight divided by its estimated spectral norm (a power-iteration
        step first, in training mode): ``sn.forward(w)``."""
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        wm = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(wm, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        sigma = u.vdot(wm.mv(v))
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        """The identity (any weight is its own preimage): ``sn.right_inverse(w)``."""
        return value

    def _settings(self) -> str:
        return f"dim={self.dim}, eps={self.eps}"


def _power_steps(wm: Tensor, u: Tensor, v: Tensor, n: int, eps: float, v_first=False) -> None:
    """``n`` power-iteration steps on the buffers ``u`` and ``v`` (``u = W v / |W v|``
    then ``v = W^T u / |W^T u|``; the other way round if ``v_first``), written in
    place once at the end: one pending write per buffer, done by the next realize,
    so the buffers' graphs do not grow from one call to the next (a write still
    pending from an earlier call, two calls without a realize between, is done
    first). Several steps run one at a time (one small program, compiled once)
    rather than as one program that grows with ``n``."""
    pending = [t for t in (u, v) if not t.node.realized]
    if pending:
        pending[0].realize(*pending[1:])
    wm = wm.contiguous()  # a chain of products with a permuted view can fail to plan
    if n > 1:
        wm.realize()
    nu, nv = u, v
    for i in range(n):
        if v_first:
            nv = F.normalize(wm.T.mv(nu), dim=0, eps=eps)
            nu = F.normalize(wm.mv(nv), dim=0, eps=eps)
        else:
            nu = F.normalize(wm.mv(nv), dim=0, eps=eps)
            nv = F.normalize(wm.T.mv(nu), dim=0, eps=eps)
        if i < n - 1:
            nu.realize(nv)
    u.assign(nu)
    v.assign(nv)


_TRANSPOSED = (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)


def spectral_norm(
    module: Module,
    name: str = "weight",
    n_power_iterations: int = 1,
    eps: float = 1e-12,
    dim: int | None = None,
) -> Module:
    """Reparametrize ``module.<name>`` as itself divided by its spectral norm (its
    largest singular value, the weight taken as a matrix with dim ``dim`` first:
    0, or 1 for transposed convolutions), estimated by power iteration: buffers
    ``parametrizations.<name>.0._u`` and ``._v``, ``n_power_iterations`` steps at
    each read in training mode, none in eval. PyTorch's
    ``parametrizations.spectral_norm``; returns the module:
    ``layer = spectral_norm(nn.Linear(20, 40))``."""
    weight = getattr(module, name, None) if isinstance(name, str) else None
    if not isinstance(module, Module) or not isinstance(weight, Tensor):
        raise ArgumentError(
            f"spectral_norm: {type(module).__name__} has no parameter or buffer named {name!r}"
        )
    if dim is None:
        dim = 1 if isinstance(module, _TRANSPOSED) else 0
    sn = _SpectralNorm(weight, n_power_iterations, dim, eps)
    parametrize.register_parametrization(module, name, sn)
    return module


# -- orthogonal -----------------------------------------------------------------------
_MAPS = ("matrix_exp", "cayley", "householder")


def _eye(n: int, like: Tensor) -> Tensor:
    return Tensor(np.eye(n), dtype=like.dtype, device=like.device)


def _make_orthogonal(a: Tensor) -> Tensor:
    """The Q of the QR decomposition of ``a`` (n >= k), its columns signed so that
    R has a positive diagonal (PyTorch's ``_make_orthogonal``)."""
    q, r = linalg.qr(a)
    return q * r.diagonal(dim1=-2, dim2=-1).sign().unsqueeze(-2)


def _is_orthogonal(q: Tensor) -> bool:
    n, k = q.shape[-2], q.shape[-1]
    qh = q.numpy().astype(np.float64)
    eps = 10.0 * n * np.finfo(q.dtype.np).eps
    return bool(np.allclose(np.swapaxes(qh, -1, -2) @ qh, np.eye(k), atol=eps, rtol=1e-5))


def _householder_product(a: Tensor, tau: Tensor) -> Tensor:
    """``H_1 H_2 ... H_k`` restricted to the first k columns, ``H_i = I - tau_i
    v_i v_i^T`` with ``v_i`` column i of ``a`` below the diagonal and 1 on it
    (LAPACK's ``orgqr``, PyTorch's ``linalg.householder_product``)."""
    n, k = a.shape[-2], a.shape[-1]
    eye = _eye(n, a)
    q = eye[:, :k].expand(*a.shape[:-2], n, k)
    for i in reversed(range(k)):
        below = a[..., :, i] * Tensor(np.arange(n) > i, dtype=a.dtype, device=a.device)
        v = below + eye[:, i]
        t = tau[..., i].unsqueeze(-1).unsqueeze(-1)
        q = q - t * v.unsqueeze(-1) * (v.unsqueeze(-2) @ q)
    return q


class _Orthogonal(Module):
    """An orthogonal (or, if not square, semi-orthogonal) matrix made from an
    unconstrained one by ``orthogonal_map``: ``_Orthogonal(w, "cayley")(x)``."""

    def __init__(self, weight: Tensor, orthogonal_map: str, *, use_trivialization=True):
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, x: Tensor) -> Tensor:
        """The orthogonal matrix of ``x``: ``orth.forward(x)``."""
        n, k = x.shape[-2], x.shape[-1]
        transposed = n < k
        if transposed:
            x = x.mT
            n, k = k, n
        if self.orthogonal_map in ("matrix_exp", "cayley"):
            x = x.tril()
            if n != k:
                zeros = Tensor.zeros(*x.shape[:-2], n, n - k, dtype=x.dtype, device=x.device)
                x = x.cat(zeros, dim=-1)
            a = x - x.mT
            if self.orthogonal_map == "matrix_exp":
                q = linalg.matrix_exp(a)
            else:
                eye = _eye(n, a)
                q = linalg.solve(eye - 0.5 * a, eye + 0.5 * a)
            if n != k:
                q = q[..., :k]
        else:
            a = x.tril(-1)
            tau = 2.0 / (1.0 + (a * a).sum(-2))
            q = _householder_product(a, tau)
            q = q * x.diagonal(dim1=-2, dim2=-1).trunc().unsqueeze(-2)
        if hasattr(self, "base") and self.base is not None:
            q = self.base @ q
        if transposed:
            q = q.mT
        return q

    def right_inverse(self, q: Tensor) -> Tensor:
        """An unconstrained matrix that this parametrization maps to ``q`` (with the
        trivialization: ``q`` or a completion of it, made orthogonal, becomes the
        ``base``, and the result is ``-I``): ``orth.right_inverse(q)``."""
        if tuple(q.shape) != tuple(self.shape):
            raise ArgumentError(
                f"orthogonal: expected a matrix or batch of matrices of shape {self.shape}, "
                f"got {q.shape}"
            )
        with no_grad():
            q_init = q
            n, k = q.shape[-2], q.shape[-1]
            transpose = n < k
            if transpose:
                q = q.mT
                n, k = k, n
            if not hasattr(self, "base"):
                if self.orthogonal_map in ("matrix_exp", "cayley"):
                    raise NotImplementedError(
                        "orthogonal: cannot assign to the matrix_exp or cayley "
                        "parametrizations when use_trivialization=False"
                    )
                a = _geqrf_signed(q)
                return a.mT if transpose else a
            if n == k:
                q = q.clone() if _is_orthogonal(q) else _make_orthogonal(q)
            else:
                extra = Tensor.randn(*q.shape[:-2], n, n - k, dtype=q.dtype, device=q.device)
                q = _make_orthogonal(q.cat(extra, dim=-1))
            self.base = q.contiguous().realize()
            n0, k0 = q_init.shape[-2], q_init.shape[-1]
            neg_eye = Tensor(-np.eye(n0, k0), dtype=q_init.dtype, device=q_init.device)
            return neg_eye.expand(*q_init.shape).contiguous()

    def _settings(self) -> str:
        return f"orthogonal_map={self.orthogonal_map!r}"


def _geqrf_signed(q: Tensor) -> Tensor:
    """LAPACK's ``geqrf`` of ``q`` (its Householder reflectors below the diagonal)
    with the diagonal replaced by the signs that make ``householder`` map it back
    to ``q`` (PyTorch's ``right_inverse`` without trivialization)."""
    h = q.numpy()
    out = np.empty_like(h)
    for idx in np.ndindex(*h.shape[:-2]):
        raw, tau = np.linalg.qr(h[idx], mode="raw")
        a = raw.T.copy()
        d = np.sign(np.diagonal(a)).copy()
        d[tau == 0.0] *= -1
        np.fill_diagonal(a, d)
        out[idx] = a
    return Tensor(out, dtype=q.dtype, device=q.device)


def orthogonal(
    module: Module,
    name: str = "weight",
    orthogonal_map: str | None = None,
    *,
    use_trivialization: bool = True,
) -> Module:
    """Reparametrize the matrix (or batch of matrices) ``module.<name>`` to stay
    orthogonal (semi-orthogonal if not square: orthonormal columns, or rows if
    wider than tall) through ``orthogonal_map``: ``"matrix_exp"`` (the default for
    square matrices), ``"cayley"`` or ``"householder"`` (the default otherwise).
    With ``use_trivialization`` (default) the matrix is ``base @ map(original)``, a
    buffer ``base`` set at registration and by assignment. PyTorch's
    ``parametrizations.orthogonal``; returns the module:
    ``layer = orthogonal(nn.Linear(20, 40))``."""
    weight = getattr(module, name, None) if isinstance(name, str) else None
    if not isinstance(module, Module) or not isinstance(weight, Tensor):
        raise ArgumentError(
            f"orthogonal: {type(module).__name__} has no parameter or buffer named {name!r}"
        )
    if weight.ndim < 2:
        raise ArgumentError(
            f"orthogonal: expected a matrix or batch of matrices, got a tensor of "
            f"{weight.ndim} dims"
        )
    if not weight.dtype.is_float:
        raise ArgumentError(f"orthogonal: the weight must be float, got {weight.dtype}")
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.shape[-2] == weight.shape[-1] else "householder"
    if orthogonal_map not in _MAPS:
        raise ArgumentError(
            f"orthogonal: orthogonal_map must be one of {_MAPS}, got {orthogonal_map!r}"
        )
    orth = _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
