"""``torch.nn.utils.weight_norm`` (the old style, before parametrizations): the
parameter ``weight`` is replaced by ``weight_g`` (its norms) and ``weight_v``
(its direction), PyTorch's ``state_dict`` keys; ``module.weight`` is
``g * v / ||v||``, computed from them when read::

    layer = weight_norm(nn.Linear(20, 40))  # layer.weight_g (40, 1), layer.weight_v (40, 20)
    remove_weight_norm(layer)  # a plain parameter again
"""

from __future__ import annotations

from mlfuse.autograd import no_grad
from mlfuse.errors import ArgumentError
from mlfuse.nn.modules import Module, Parameter
from mlfuse.nn.utils import parametrize as P
from mlfuse.nn.utils.parametrizations import _check_weight_norm_dim, _norm_except_dim
from mlfuse.nn.utils.parametrizations import _weight_norm
from mlfuse.tensor import Tensor

__all__ = ["WeightNorm", "remove_weight_norm", "weight_norm"]


class WeightNorm:
    """What :func:`weight_norm` attaches to a module for the tensor ``name``:
    ``compute_weight`` gives ``g * v / ||v||`` from ``<name>_g`` and ``<name>_v``
    (norms over every dim but ``dim``; -1 or None: the whole tensor):
    ``WeightNorm("weight", 0).compute_weight(layer)``."""

    _what = "weight_norm"

    def __init__(self, name: str, dim: int | None) -> None:
        self.name = name
        self.dim = -1 if dim is None else dim
        self._sources = (f"{name}_g", f"{name}_v")

    def compute_weight(self, module: Module) -> Tensor:
        """The weight from the module's ``<name>_g`` and ``<name>_v``:
        ``fn.compute_weight(layer)``."""
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm(v, g, self.dim)

    def _value(self, module: Module) -> Tensor:  # what reading module.<name> gives
        return self.compute_weight(module)

    def _before_forward(self, module: Module) -> None:
        pass  # computed at each read: always up to date

    @staticmethod
    def apply(module: Module, name: str, dim: int | None) -> WeightNorm:
        """Replace the parameter ``name`` of ``module`` by ``<name>_g`` and
        ``<name>_v``: ``WeightNorm.apply(layer, "weight", 0)``."""
        what = "weight_norm"
        P._check_no_hook(module, name, what)
        w = P._tensor_attr(module, name, what)
        if P._is_buffer(module, name):
            raise ArgumentError(f"{what}: {name!r} of {type(module).__name__} is a buffer")
        dim = _check_weight_norm_dim(w, dim, what)
        fn = WeightNorm(name, dim)
        with no_grad():
            g = Parameter(_norm_except_dim(w.detach(), dim))
            v = Parameter(w.detach())
        P._drop_tensor(module, name)
        setattr(module, name + "_g", g)
        setattr(module, name + "_v", v)
        P._add_hook(module, name, fn, what)
        return fn

    def remove(self, module: Module) -> None:
        """Make ``name`` a plain parameter holding the current weight again:
        ``fn.remove(layer)``."""
        with no_grad():
            weight = Parameter(self.compute_weight(module).detach())
        P._drop_hook(module, self.name)
        P._drop_tensor(module, self.name + "_g")
        P._drop_tensor(module, self.name + "_v")
        setattr(module, self.name, weight)


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Split the parameter ``name`` into a magnitude ``<name>_g`` (norms over every
    dim but ``dim``; None: one norm for the whole tensor) and a direction
    ``<name>_v``; ``module.<name>`` is ``g * v / ||v||``, computed when read (so
    before each forward). PyTorch's old-style ``weight_norm``, its ``state_dict``
    keys; returns the module: ``layer = weight_norm(nn.Linear(20, 40), name="weight")``."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    """Undo :func:`weight_norm`: ``name`` becomes a plain parameter holding the
    current weight; returns the module: ``remove_weight_norm(layer)``."""
    P._find_hook(module, name, WeightNorm, "remove_weight_norm").remove(module)
    return module
