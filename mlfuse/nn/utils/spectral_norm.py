"""``torch.nn.utils.spectral_norm`` (the old style, before parametrizations): the
parameter ``weight`` becomes ``weight_orig``, with buffers ``weight_u`` and
``weight_v`` for the power iteration, PyTorch's ``state_dict`` keys. Before each
call of the module, ``module.weight`` is computed as ``weight_orig / sigma`` (a
power-iteration step first in training mode)::

    layer = spectral_norm(nn.Linear(20, 40))
    y = layer(x)  # layer.weight: largest singular value ~1
    remove_spectral_norm(layer)
"""

from __future__ import annotations

from mlfuse.autograd import no_grad
from mlfuse.errors import ArgumentError, DimError
from mlfuse.nn import functional as F
from mlfuse.nn.modules import Module, Parameter
from mlfuse.nn.utils import parametrize as P
from mlfuse.nn.utils.parametrizations import _TRANSPOSED, _power_steps
from mlfuse.tensor import Tensor

__all__ = ["SpectralNorm", "remove_spectral_norm", "spectral_norm"]


class SpectralNorm:
    """What :func:`spectral_norm` attaches to a module for the tensor ``name``:
    ``compute_weight`` gives ``<name>_orig / sigma``, sigma estimated from the
    buffers ``<name>_u`` and ``<name>_v``:
    ``SpectralNorm("weight").compute_weight(layer, False)``."""

    _what = "spectral_norm"

    def __init__(
        self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12
    ) -> None:
        if (
            isinstance(n_power_iterations, bool)
            or not isinstance(n_power_iterations, int)
            or n_power_iterations <= 0
        ):
            raise ArgumentError(
                f"spectral_norm: n_power_iterations must be positive, got {n_power_iterations!r}"
            )
        self.name, self.dim, self.eps = name, dim, eps
        self.n_power_iterations = n_power_iterations
        self._sources = (f"{name}_orig",)
        self._last: Tensor | None = None  # the weight the last call computed

    def __getstate__(self):
        return {k: v for k, v in vars(self).items() if k != "_last"} | {"_last": None}

    def reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        """The weight as a matrix: dim ``dim`` first, the others flattened:
        ``fn.reshape_weight_to_matrix(w)``."""
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.ndim) if d != self.dim))
        return weight.reshape(weight.shape[0], -1)

    def compute_weight(self, module: Module, do_power_iteration: bool) -> Tensor:
        """``<name>_orig / sigma``, after ``n_power_iterations`` power-iteration steps
        on the buffers if ``do_power_iteration``: ``fn.compute_weight(layer, True)``."""
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        wm = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():
                _power_steps(wm.detach(), u, v, self.n_power_iterations, self.eps, v_first=True)
        sigma = u.clone().vdot(wm.mv(v.clone()))
        return weight / sigma

    def _value(self, module: Module) -> Tensor:
        if self._last is None:  # not called yet: no power-iteration step
            return self.compute_weight(module, False)
        return self._last

    def _before_forward(self, module: Module) -> None:
        self._last = self.compute_weight(module, module.training)

    def remove(self, module: Module) -> None:
        """Make ``name`` a plain parameter holding the current weight (no
        power-iteration step): ``fn.remove(layer)``."""
        with no_grad():
            weight = Parameter(self.compute_weight(module, False).detach())
        P._drop_hook(module, self.name)
        for suffix in ("_orig", "_u", "_v"):
            P._drop_tensor(module, self.name + suffix)
        setattr(module, self.name, weight)

    @staticmethod
    def apply(
        module: Module, name: str, n_power_iterations: int, dim: int, eps: float
    ) -> SpectralNorm:
        """Replace the parameter ``name`` by ``<name>_orig`` and the buffers
        ``<name>_u``, ``<name>_v``: ``SpectralNorm.apply(layer, "weight", 1, 0, 1e-12)``."""
        what = "spectral_norm"
        P._check_no_hook(module, name, what)
        weight = P._tensor_attr(module, name, what)
        if P._is_buffer(module, name):
            raise ArgumentError(f"{what}: {name!r} of {type(module).__name__} is a buffer")
        if not weight.dtype.is_float or weight.ndim == 0:
            raise ArgumentError(
                f"{what}: the weight must be a float tensor of 1 or more dims, got "
                f"{weight.dtype.name} {weight.shape}"
            )
        if (
            isinstance(dim, bool)
            or not isinstance(dim, int)
            or not -weight.ndim <= dim < weight.ndim
        ):
            raise DimError(
                f"{what}: dim {dim!r} is out of range for a weight of {weight.ndim} dims"
            )
        fn = SpectralNorm(name, n_power_iterations, dim % weight.ndim, eps)
        with no_grad():
            h, w = fn.reshape_weight_to_matrix(weight.detach()).shape
            opts = {"dtype": weight.dtype, "device": weight.device}
            u = F.normalize(Tensor.randn(h, **opts), dim=0, eps=eps).realize()
            v = F.normalize(Tensor.randn(w, **opts), dim=0, eps=eps).realize()
        P._drop_tensor(module, name)
        setattr(module, name + "_orig", weight)
        module.register_buffer(name + "_u", u)
        module.register_buffer(name + "_v", v)
        P._add_hook(module, name, fn, what)
        return fn


def spectral_norm(
    module: Module,
    name: str = "weight",
    n_power_iterations: int = 1,
    eps: float = 1e-12,
    dim: int | None = None,
) -> Module:
    """Divide the parameter ``name`` by its spectral norm (largest singular value,
    the weight taken as a matrix with dim ``dim`` first: 0, or 1 for transposed
    convolutions) before each call of the module, estimated by power iteration
    (``n_power_iterations`` steps per call in training mode, none in eval) on the
    buffers ``<name>_u`` and ``<name>_v``; the trained parameter is
    ``<name>_orig``. PyTorch's old-style ``spectral_norm``, its ``state_dict`` keys
    (before the first call ``module.<name>`` is computed without a step, where
    PyTorch gives the raw weight); returns the module:
    ``layer = spectral_norm(nn.Linear(20, 40))``."""
    if dim is None:
        dim = 1 if isinstance(module, _TRANSPOSED) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module: Module, name: str = "weight") -> Module:
    """Undo :func:`spectral_norm`: ``name`` becomes a plain parameter holding the
    current normalized weight; returns the module: ``remove_spectral_norm(layer)``."""
    P._find_hook(module, name, SpectralNorm, "remove_spectral_norm").remove(module)
    return module
