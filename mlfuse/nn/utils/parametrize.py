"""``torch.nn.utils.parametrize``: a parameter (or buffer) computed from other
tensors each time it is read. ``register_parametrization(m, "weight", P())``
makes ``m.weight`` the value of ``P()(original)``::

    class Symmetric(nn.Module):
        def forward(self, x):
            return x.triu() + x.triu(1).T

    P.register_parametrization(layer, "weight", Symmetric())
    layer.weight  # symmetric, recomputed from layer.parametrizations.weight.original

As in PyTorch, the module's class is swapped for a generated subclass
(``ParametrizedLinear``) with a property under the tensor's name; the
tensors trained live in ``module.parametrizations.<name>.original`` (or
``original0``, ``original1``... when the first parametrization's
``right_inverse`` returns several), so ``state_dict()`` has PyTorch's keys
(``"parametrizations.weight.original"``). Assigning to the property goes
through the parametrizations' ``right_inverse`` in reverse order.

The same class swap carries the old-style ``nn.utils.weight_norm`` and
``nn.utils.spectral_norm`` (a property computed from ``weight_g``/``weight_v``
or ``weight_orig``, and a step run before each call of the module).
"""

from __future__ import annotations

from contextlib import contextmanager

from mlfuse.autograd import no_grad
from mlfuse.errors import ArgumentError
from mlfuse.nn.modules import Module, ModuleDict, ModuleList, Parameter
from mlfuse.tensor import Tensor

__all__ = [
    "ParametrizationList", "cached", "is_parametrized", "register_parametrization",
    "remove_parametrizations", "transfer_parametrizations_and_params",
    "type_before_parametrizations",
]  # fmt: skip

_cache_enabled = 0
_cache: dict[tuple[int, str], Tensor] = {}


@contextmanager
def cached():
    """Inside the block each parametrized tensor is computed once, on its first
    read, and that tensor is returned by the later reads (the values are
    forgotten when the outermost block ends); useful when a parametrized weight
    is read several times in one forward (an RNN's recurrent kernel, tied
    weights): ``with parametrize.cached(): out = model(x)``."""
    global _cache_enabled, _cache
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache = {}


# -- the class swap ----------------------------------------------------------------
_INJECTED = "_mlfuse_injected"  # marks the generated class (in its own __dict__)
_HOOKS = "_norm_hooks"  # name -> old-style WeightNorm / SpectralNorm, in the module's vars


def _is_injected(cls: type) -> bool:
    return bool(cls.__dict__.get(_INJECTED))


def _base_class(module: Module) -> type:
    cls = type(module)
    return cls.__bases__[0] if _is_injected(cls) else cls


def _rebuild(base: type, parametrized: tuple, hooked: tuple):
    """Unpickle (and deep-copy) a module with a generated class: a fresh class of
    its own with the same properties."""
    obj = base.__new__(base)
    _inject_class(obj)
    for name in parametrized:
        setattr(type(obj), name, _parametrized_property(name))
    for name in hooked:
        setattr(type(obj), name, _hook_property(name))
    type(obj).__name__ = type(obj).__qualname__ = (
        "Parametrized" if parametrized else ""
    ) + base.__name__
    return obj


def _inject_class(module: Module) -> None:
    """Give ``module`` a class of its own (a subclass of its class) to carry the
    properties; it also runs the old-style hooks before each call."""
    cls = type(module)
    if _is_injected(cls):
        return

    def __call__(self, *args, **kwargs):  # noqa: N807 - the call of the module
        for hook in tuple(vars(self).get(_HOOKS, {}).values()):
            hook._before_forward(self)
        return cls.__call__(self, *args, **kwargs)

    def __reduce_ex__(self, protocol):  # noqa: N807 - pickle and deepcopy
        kinds = {"parametrize": [], "hook": []}
        for k, v in type(self).__dict__.items():
            kind = getattr(getattr(v, "fget", None), "_mlfuse_kind", None)
            if isinstance(v, property) and kind in kinds:
                kinds[kind].append(k)
        args = (cls, tuple(kinds["parametrize"]), tuple(kinds["hook"]))
        return (_rebuild, args, dict(vars(self)))

    dct = {
        _INJECTED: True,
        "__call__": __call__,
        "__reduce_ex__": __reduce_ex__,
        "__module__": cls.__module__,
        "__doc__": cls.__doc__,
    }
    module.__class__ = type(cls.__name__, (cls,), dct)


def _update_class(module: Module) -> None:
    """Name the generated class ``Parametrized<Base>`` while a parametrization is
    registered; give the module its own class back when nothing needs it."""
    cls = type(module)
    if not _is_injected(cls):
        return
    base = cls.__bases__[0]
    if not is_parametrized(module) and not vars(module).get(_HOOKS):
        vars(module).pop(_HOOKS, None)
        module.__class__ = base
        return
    cls.__name__ = cls.__qualname__ = ("Parametrized" if is_parametrized(module) else "") + (
        base.__name__
    )


def _parametrized_property(name: str) -> property:
    def get(self) -> Tensor:
        plist = self.parametrizations[name]
        if not _cache_enabled:
            return plist()
        key = (id(self), name)
        t = _cache.get(key)
        if t is None:
            t = _cache[key] = plist()
        return t

    def put(self, value) -> None:
        self.parametrizations[name].right_inverse(value)

    get._mlfuse_kind = "parametrize"  # type: ignore[attr-defined]
    return property(get, put, doc=f"``{name}`` computed by its parametrizations.")


def _hook_property(name: str) -> property:
    def get(self) -> Tensor:
        return vars(self)[_HOOKS][name]._value(self)

    def put(self, value) -> None:
        hook = vars(self)[_HOOKS][name]
        raise ArgumentError(
            f"{type(self).__name__}.{name} is computed by {hook._what} from "
            f"{', '.join(hook._sources)}: set those, or call remove_{hook._what} first"
        )

    get._mlfuse_kind = "hook"  # type: ignore[attr-defined]
    return property(get, put, doc=f"``{name}`` computed before each call of the module.")


def _add_property(module: Module, name: str, prop: property, what: str) -> None:
    if hasattr(module, name):
        raise ArgumentError(f"{what}: {type(module).__name__} already has an attribute {name!r}")
    setattr(type(module), name, prop)


def _tensor_attr(module: Module, name: str, what: str) -> Tensor:
    """The parameter or buffer ``name`` of ``module`` (an error naming ``what``)."""
    if not isinstance(module, Module):
        raise TypeError(f"{what}: module must be an nn.Module, got {type(module).__name__}")
    t = vars(module).get(name) if isinstance(name, str) else None
    if not isinstance(t, Tensor):
        raise ArgumentError(
            f"{what}: {type(module).__name__} has no parameter or buffer named {name!r}"
        )
    return t


def _is_buffer(module: Module, name: str) -> bool:
    return name in getattr(module, "_buffer_names", ())


def _drop_buffer_name(module: Module, name: str) -> None:
    names = tuple(n for n in getattr(module, "_buffer_names", ()) if n != name)
    object.__setattr__(module, "_buffer_names", names)
    off = frozenset(getattr(module, "_non_persistent", ())) - {name}
    object.__setattr__(module, "_non_persistent", off)


def _put(module: Module, name: str, t: Tensor, buffer: bool) -> None:
    """Register ``t`` under ``name`` as a buffer or as a parameter."""
    if buffer:
        module.register_buffer(name, t)
    else:
        if _is_buffer(module, name):
            _drop_buffer_name(module, name)
        setattr(module, name, t)


def _copy(t: Tensor, requires_grad: bool) -> Tensor:
    """A tensor of its own with ``t``'s values (a leaf that requires grad, if asked)."""
    return Parameter(t.detach(), requires_grad=requires_grad and t.dtype.is_float)


def _set(dest: Tensor, src: Tensor) -> Tensor:
    """``dest`` with ``src``'s values: written in place (the same tensor, so an
    optimizer holding it keeps working) where shape, dtype and device agree, else a
    new tensor (PyTorch's ``set_`` changes them in place)."""
    if src is dest:
        return dest
    if (src.shape, src.dtype, src.device) == (dest.shape, dest.dtype, dest.device):
        with no_grad():
            dest.assign(src.detach())
        return dest
    return _copy(src, dest.requires_grad)


# -- the list of parametrizations on one tensor -----------------------------------
class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, in registration order, and the tensor(s)
    they are computed from: ``original`` (or ``original0``, ``original1``... when
    the first one's ``right_inverse`` returns several). ``register_parametrization``
    makes it, as ``module.parametrizations[name]``; calling it computes the
    tensor: ``m.parametrizations.weight.original``, ``m.parametrizations.weight()``."""

    def __init__(self, modules, original: Tensor, unsafe: bool = False, *, buffer=None) -> None:
        modules = list(modules)
        if not modules:
            raise ArgumentError("ParametrizationList needs one or more modules")
        if not isinstance(original, Tensor):
            raise TypeError(
                f"ParametrizationList: original must be a Tensor, got {type(original).__name__}"
            )
        super().__init__(modules)
        self.unsafe = bool(unsafe)
        if buffer is None:  # PyTorch's rule: a tensor that is not a Parameter is a buffer
            buffer = not isinstance(original, Parameter)
        shape, dtype = original.shape, original.dtype
        with no_grad():
            new = original
            for m in reversed(self._layers):
                inverse = getattr(m, "right_inverse", None)
                if inverse is not None:
                    try:
                        new = inverse(new)
                    except NotImplementedError:
                        pass  # taken as the identity, as PyTorch
        if not isinstance(new, (Tensor, list, tuple)):
            raise ArgumentError(
                "ParametrizationList: right_inverse must return a Tensor or a sequence of "
                f"Tensors, got {type(new).__name__}"
            )
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if new.dtype != dtype:
                raise ArgumentError(
                    "ParametrizationList: a right_inverse that returns one tensor may not "
                    f"change the dtype: {dtype.name} -> {new.dtype.name}"
                )
            _put(self, "original", _set(original, new), buffer)
        else:
            for i, t in enumerate(new):
                if not isinstance(t, Tensor):
                    raise ArgumentError(
                        "ParametrizationList: right_inverse must return a Tensor or a "
                        f"sequence of Tensors, got {type(t).__name__} at position {i}"
                    )
                _put(self, f"original{i}", _copy(t, original.requires_grad), buffer)
        if not self.unsafe:
            z = self()
            _check_same("ParametrizationList", "the parametrization", z, shape, dtype)

    def _originals(self) -> list[Tensor]:
        if self.is_tensor:
            return [self.original]
        return [getattr(self, f"original{i}") for i in range(self.ntensors)]

    def right_inverse(self, value) -> None:
        """Set the original tensor(s) so that the parametrized tensor is ``value``:
        the ``right_inverse`` of each parametrization, last registered first (what
        assigning ``module.weight = value`` does): ``plist.right_inverse(w)``."""
        with no_grad():
            for m in reversed(self._layers):
                inverse = getattr(m, "right_inverse", None)
                if inverse is None:
                    raise ArgumentError(
                        f"ParametrizationList.right_inverse: parametrization "
                        f"{type(m).__name__} does not implement right_inverse"
                    )
                value = inverse(value)
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ArgumentError(
                        "ParametrizationList.right_inverse: right_inverse should return a "
                        f"Tensor, got {type(value).__name__}"
                    )
                values = [value]
            else:
                if not isinstance(value, (list, tuple)):
                    raise ArgumentError(
                        "ParametrizationList.right_inverse: right_inverse must return a "
                        f"sequence of tensors, got {type(value).__name__}"
                    )
                if len(value) != self.ntensors:
                    raise ArgumentError(
                        "ParametrizationList.right_inverse: right_inverse must return "
                        f"{self.ntensors} tensors, got {len(value)}"
                    )
                values = list(value)
            names = ["original"] if self.is_tensor else [f"original{i}" for i in range(len(values))]
            for name, v in zip(names, values):
                old = getattr(self, name)
                if not isinstance(v, Tensor) or v.dtype != old.dtype:
                    got = v.dtype.name if isinstance(v, Tensor) else type(v).__name__
                    raise ArgumentError(
                        f"ParametrizationList.right_inverse: {name} has dtype "
                        f"{old.dtype.name}, right_inverse returned {got}"
                    )
                new = _set(old, v)
                if new is not old:
                    _put(self, name, new, _is_buffer(self, name))

    def forward(self) -> Tensor:
        """The parametrized tensor: the first parametrization of the original(s),
        then each later one of the result: ``plist()``."""
        x = self._layers[0](*self._originals())
        for m in self._layers[1:]:
            x = m(x)
        return x


def _check_same(what: str, name: str, t, shape, dtype) -> None:
    if not isinstance(t, Tensor):
        raise ArgumentError(f"{what}: {name} must return a Tensor, got {type(t).__name__}")
    if t.dtype != dtype:
        raise ArgumentError(
            f"{what}: {name} may not change the dtype ({dtype.name} -> {t.dtype.name}) "
            "unless unsafe=True"
        )
    if t.shape != shape:
        raise ArgumentError(
            f"{what}: {name} may not change the shape ({shape} -> {t.shape}) unless unsafe=True"
        )


# -- the public functions -----------------------------------------------------------
def register_parametrization(
    module: Module, tensor_name: str, parametrization: Module, *, unsafe: bool = False
) -> Module:
    """Make ``module.<tensor_name>`` the value of ``parametrization`` (an nn.Module)
    applied to the original tensor, recomputed at each read; registered again on
    the same name, the parametrizations chain (each applied to the previous one's
    result). The original moves to ``module.parametrizations[tensor_name].original``
    (through ``parametrization.right_inverse`` where it has one; a tuple gives
    ``original0``, ``original1``...). Unless ``unsafe``, the parametrization may
    not change the shape or dtype. Returns ``module``:
    ``register_parametrization(layer, "weight", Symmetric())``."""
    what = "register_parametrization"
    if not isinstance(module, Module):
        raise TypeError(f"{what}: module must be an nn.Module, got {type(module).__name__}")
    if not isinstance(parametrization, Module):
        raise TypeError(
            f"{what}: parametrization must be an nn.Module, got {type(parametrization).__name__}"
        )
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            y = getattr(module, tensor_name)
            x = parametrization(y)
            _check_same(what, "the parametrization", x, y.shape, y.dtype)
            inverse = getattr(parametrization, "right_inverse", None)
            if inverse is not None:
                try:
                    z = inverse(x)
                except NotImplementedError:
                    pass
                else:
                    _check_same(what, "right_inverse", z, y.shape, y.dtype)
        plist = module.parametrizations[tensor_name]
        plist.append(parametrization)
        plist.unsafe |= bool(unsafe)
        return module
    original = _tensor_attr(module, tensor_name, what)
    if "." in tensor_name or tensor_name.startswith("_") or hasattr(ModuleDict, tensor_name):
        raise ArgumentError(
            f"{what}: cannot parametrize {tensor_name!r} (module.parametrizations holds the "
            "parametrizations by tensor name: it may not start with '_' or name a "
            "ModuleDict method)"
        )
    if tensor_name in dir(_base_class(module)) or tensor_name in dir(type(module)):
        raise ArgumentError(
            f"{what}: {type(module).__name__} has a class attribute {tensor_name!r} too"
        )
    buffer = _is_buffer(module, tensor_name)
    plist = ParametrizationList([parametrization], original, unsafe=unsafe, buffer=buffer)
    del vars(module)[tensor_name]
    if buffer:
        _drop_buffer_name(module, tensor_name)
    _inject_class(module)
    if not is_parametrized(module):
        module.parametrizations = ModuleDict()
    _add_property(module, tensor_name, _parametrized_property(tensor_name), what)
    module.parametrizations[tensor_name] = plist
    _update_class(module)
    return module


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` has a parametrization on ``tensor_name`` (on any tensor
    if None): ``is_parametrized(layer, "weight")``."""
    p = getattr(module, "parametrizations", None)
    if not isinstance(p, ModuleDict):
        return False
    return len(p) > 0 if tensor_name is None else tensor_name in p


def remove_parametrizations(
    module: Module, tensor_name: str, leave_parametrized: bool = True
) -> Module:
    """Take the parametrizations off ``module.<tensor_name>``, which becomes a plain
    parameter (or buffer) again: holding the current parametrized value if
    ``leave_parametrized``, else the original (a single original only). Returns
    ``module``: ``remove_parametrizations(layer, "weight")``."""
    what = "remove_parametrizations"
    if not is_parametrized(module, tensor_name):
        raise ArgumentError(
            f"{what}: {type(module).__name__} has no parametrization on {tensor_name!r}"
        )
    plist = module.parametrizations[tensor_name]
    if plist.is_tensor:
        buffer = _is_buffer(plist, "original")
        original = plist.original
        if leave_parametrized:
            with no_grad():
                original = _set(original, getattr(module, tensor_name))
    else:
        if not leave_parametrized:
            raise ArgumentError(
                f"{what}: leave_parametrized=False needs a tensor parametrized by one "
                f"original; {tensor_name!r} has {plist.ntensors} (original0, original1...)"
            )
        t = getattr(module, tensor_name)
        buffer = not t.requires_grad  # PyTorch's rule
        original = _copy(t, t.requires_grad)
    delattr(type(module), tensor_name)
    del module.parametrizations[tensor_name]
    _put(module, tensor_name, original, buffer)
    if not is_parametrized(module):
        del vars(module)["parametrizations"]
    _update_class(module)
    return module


def type_before_parametrizations(module: Module) -> type:
    """The class of ``module`` before a parametrization (or an old-style weight or
    spectral norm) swapped it: ``type_before_parametrizations(layer) is nn.Linear``."""
    return _base_class(module)


def transfer_parametrizations_and_params(
    from_module: Module, to_module: Module, tensor_name: str | None = None
) -> Module:
    """Register ``from_module``'s parametrizations (of ``tensor_name``, or all) on
    ``to_module`` too, sharing the parametrization modules and the original
    tensors (a missing parameter is made first). Returns ``to_module``:
    ``transfer_parametrizations_and_params(a, b, "weight")``."""
    if not is_parametrized(from_module):
        return to_module
    names = list(from_module.parametrizations.keys()) if tensor_name is None else [tensor_name]
    for name in names:
        if not is_parametrized(from_module, name):
            raise ArgumentError(
                f"transfer_parametrizations_and_params: {type(from_module).__name__} has no "
                f"parametrization on {name!r}"
            )
        src = from_module.parametrizations[name]
        if not hasattr(to_module, name):
            setattr(to_module, name, _copy(getattr(from_module, name), True))
        for p in src:
            register_parametrization(to_module, name, p)
        dst = to_module.parametrizations[name]
        if src.is_tensor:
            dst.original = src.original
        else:
            for i in range(src.ntensors):
                setattr(dst, f"original{i}", getattr(src, f"original{i}"))
    return to_module


# -- old-style weight_norm / spectral_norm: a property and a step before each call ---
def _add_hook(module: Module, name: str, hook, what: str) -> None:
    """Put the old-style ``hook`` (it has ``_what``, ``_sources``, ``_value(module)``
    and ``_before_forward(module)``) in charge of ``module.<name>``, whose tensor
    the caller has taken out of the module's attributes."""
    _inject_class(module)
    vars(module).setdefault(_HOOKS, {})[name] = hook
    _add_property(module, name, _hook_property(name), what)
    _update_class(module)


def _check_no_hook(module: Module, name: str, what: str) -> None:
    hook = (getattr(module, "__dict__", {}).get(_HOOKS) or {}).get(name)
    if hook is not None:
        raise ArgumentError(
            f"{what}: {name!r} of {type(module).__name__} already has a {hook._what}"
        )


def _find_hook(module: Module, name: str, kind: type, what: str):
    hook = (vars(module).get(_HOOKS) or {}).get(name) if isinstance(module, Module) else None
    if not isinstance(hook, kind):
        raise ArgumentError(f"{what}: no {kind._what} of {name!r} in {type(module).__name__}")
    return hook


def _drop_hook(module: Module, name: str) -> None:
    delattr(type(module), name)
    del vars(module)[_HOOKS][name]
    _update_class(module)


def _drop_tensor(module: Module, name: str) -> None:
    del vars(module)[name]
    if _is_buffer(module, name):
        _drop_buffer_name(module, name)
