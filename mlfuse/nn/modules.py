"""Small ``torch.nn``-style modules holding Tensor parameters.

A module is a callable object: ``__call__`` runs ``forward``. Its parameters
are its parameter attributes (``nn.Parameter``: leaf tensors that require
grad, or were frozen with ``requires_grad_(False)``) and those of its
sub-modules, found by :meth:`Module.parameters`; a plain tensor attribute is
neither a parameter nor a buffer, as in PyTorch; ``train()``/``eval()`` switch dropout and batch
norm between their two behaviours. Initialisation follows PyTorch's defaults
(uniform in ``+-1/sqrt(fan_in)`` for linear and convolution layers), drawn
from the generator ``mlfuse.manual_seed`` seeds.

    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    y = model(x)
"""

from __future__ import annotations

import functools
import inspect
import math
import operator
import warnings
import weakref
from collections import OrderedDict
from collections.abc import Iterable, Mapping, MutableMapping
from typing import NamedTuple

import numpy as np

from mlfuse import dtypes
from mlfuse.nn import functional as F
from mlfuse.errors import ArgumentError
from mlfuse.tensor import FROZEN, Tensor, realize
from mlfuse.utils.hooks import RemovableHandle


def _positive_int(v, what: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
        raise ArgumentError(f"{what} must be a positive int, got {v!r}")
    return v


def _param(t: Tensor) -> Tensor:
    """A parameter: a buffer of its own (not a folded constant, so that updates
    keep the programs that read it), and a leaf whose gradient backward() fills."""
    return Tensor(t.numpy(), t.dtype, t.device, requires_grad=True)


# ---------------------------------------------------------------------------
# hooks: handles, the registries, the backward hooks
# ---------------------------------------------------------------------------


class _WrappedHook:
    """A hook called with its module first (held weakly), as PyTorch's."""

    def __init__(self, hook, module: Module | None = None) -> None:
        self.hook = hook
        functools.update_wrapper(self, hook)
        self.with_module = module is not None
        if module is not None:
            self.module = weakref.ref(module)

    def __call__(self, *args, **kwargs):
        if self.with_module:
            module = self.module()
            if module is None:
                raise RuntimeError("You are trying to call the hook of a dead Module!")
            return self.hook(module, *args, **kwargs)
        return self.hook(*args, **kwargs)

    def __getstate__(self) -> dict:
        out = {"hook": self.hook, "with_module": self.with_module}
        if self.with_module:
            out["module"] = self.module()
        return out

    def __setstate__(self, state: dict) -> None:
        self.hook, self.with_module = state["hook"], state["with_module"]
        if self.with_module:
            if state["module"] is None:
                raise RuntimeError("You are trying to revive the hook of a dead Module!")
            self.module = weakref.ref(state["module"])


# the hooks of every module (PyTorch's register_module_forward_hook...); any of them
# is also in _global_any, which __call__ reads once
_global_forward_pre_hooks: OrderedDict = OrderedDict()
_global_forward_hooks: OrderedDict = OrderedDict()
_global_forward_hooks_with_kwargs: OrderedDict = OrderedDict()
_global_forward_hooks_always_called: OrderedDict = OrderedDict()
_global_backward_pre_hooks: OrderedDict = OrderedDict()
_global_backward_hooks: OrderedDict = OrderedDict()
_global_any: OrderedDict = OrderedDict()


def _check_hook(hook, what: str) -> None:
    if not callable(hook):
        raise TypeError(f"{what}: hook must be callable, got {type(hook).__name__}")


def register_module_forward_pre_hook(hook) -> RemovableHandle:
    """Call ``hook(module, args)`` before the forward of every module (before the
    module's own pre-hooks; a non-None result replaces the arguments), PyTorch's
    global hook: ``h = nn.modules.register_module_forward_pre_hook(f)``."""
    _check_hook(hook, "register_module_forward_pre_hook")
    handle = RemovableHandle(_global_forward_pre_hooks, extra_dict=_global_any)
    _global_forward_pre_hooks[handle.id] = _global_any[handle.id] = hook
    return handle


def register_module_forward_hook(
    hook, *, with_kwargs: bool = False, always_call: bool = False
) -> RemovableHandle:
    """Call ``hook(module, args, output)`` (``hook(module, args, kwargs, output)``
    with ``with_kwargs``) after the forward of every module, before the module's
    own hooks; a non-None result replaces the output:
    ``h = nn.modules.register_module_forward_hook(f)``."""
    _check_hook(hook, "register_module_forward_hook")
    handle = RemovableHandle(
        _global_forward_hooks,
        extra_dict=[_global_forward_hooks_with_kwargs, _global_forward_hooks_always_called,
                    _global_any],
    )  # fmt: skip
    _global_forward_hooks[handle.id] = _global_any[handle.id] = hook
    if with_kwargs:
        _global_forward_hooks_with_kwargs[handle.id] = True
    if always_call:
        _global_forward_hooks_always_called[handle.id] = True
    return handle


def register_module_full_backward_pre_hook(hook) -> RemovableHandle:
    """Call ``hook(module, grad_output)`` when the gradients of any module's
    outputs are computed (see :meth:`Module.register_full_backward_pre_hook`):
    ``h = nn.modules.register_module_full_backward_pre_hook(f)``."""
    _check_hook(hook, "register_module_full_backward_pre_hook")
    handle = RemovableHandle(_global_backward_pre_hooks, extra_dict=_global_any)
    _global_backward_pre_hooks[handle.id] = _global_any[handle.id] = hook
    return handle


def register_module_full_backward_hook(hook) -> RemovableHandle:
    """Call ``hook(module, grad_input, grad_output)`` when the gradients of any
    module's inputs are computed (see :meth:`Module.register_full_backward_hook`):
    ``h = nn.modules.register_module_full_backward_hook(f)``."""
    _check_hook(hook, "register_module_full_backward_hook")
    handle = RemovableHandle(_global_backward_hooks, extra_dict=_global_any)
    _global_backward_hooks[handle.id] = _global_any[handle.id] = hook
    return handle


class _HookDict:
    """A per-module ``OrderedDict`` (PyTorch's ``_forward_hooks``...) made on its
    first read, so that modules without hooks carry none; the registries of the
    call's hooks also set ``_has_call_hooks``, the one flag ``__call__`` reads."""

    def __init__(self, call: bool = False) -> None:
        self.call = call

    def __set_name__(self, owner, name: str) -> None:
        self.name = name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        d = obj.__dict__
        got = d.get(self.name)
        if got is None:
            got = OrderedDict()
            self.__set__(obj, got)
        return got

    def __set__(self, obj, value) -> None:
        obj.__dict__[self.name] = value
        if self.call:
            obj.__dict__["_has_call_hooks"] = True


_HOOK_DICTS = (
    "_forward_pre_hooks", "_forward_pre_hooks_with_kwargs", "_forward_hooks",
    "_forward_hooks_with_kwargs", "_forward_hooks_always_called", "_backward_hooks",
    "_backward_pre_hooks", "_state_dict_hooks", "_state_dict_pre_hooks",
    "_load_state_dict_pre_hooks", "_load_state_dict_post_hooks",
)  # fmt: skip


def _backward_hook_function():
    """The identity autograd Function whose backward hands the gradients of its
    tensors to a callback (PyTorch's ``BackwardHookFunction``); made on first use."""
    global _BackwardHookFunction
    if _BackwardHookFunction is None:
        from mlfuse.autograd.function import Function

        class BackwardHookFunction(Function):
            @staticmethod
            def forward(ctx, callback, *tensors):
                ctx.callback = callback
                ctx.set_materialize_grads(False)
                ctx.mark_non_differentiable(*[t for t in tensors if not t.requires_grad])
                return tensors

            @staticmethod
            def backward(ctx, *grads):
                return (None, *ctx.callback(grads))

        _BackwardHookFunction = BackwardHookFunction
    return _BackwardHookFunction


_BackwardHookFunction = None


class _BackwardHook:
    """One call's backward hooks: identities around the tensors among the inputs
    and among the outputs capture their gradients (PyTorch's ``BackwardHook``)."""

    def __init__(self, module: Module, user_hooks: list, user_pre_hooks: list) -> None:
        self.module, self.user_hooks, self.user_pre_hooks = module, user_hooks, user_pre_hooks
        self.grad_outputs = None
        self.n_outputs, self.output_tensors_index = -1, None
        self.n_inputs, self.input_tensors_index = -1, None

    @staticmethod
    def _pack_with_none(indices, values, size) -> tuple:
        res = [None] * size
        for i, v in zip(indices, values):
            res[i] = v
        return tuple(res)

    @staticmethod
    def _unpack_none(indices, values) -> tuple:
        return tuple(values[i] for i in indices)

    def _apply_on_tensors(self, callback, args):
        from mlfuse.autograd import is_grad_enabled

        idx = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        tensors = [args[i] for i in idx]
        if not (any(t.requires_grad for t in tensors) and is_grad_enabled()):
            return args, None
        new = _backward_hook_function().apply(callback, *tensors)
        out = list(args)
        for i, v in zip(idx, new):
            out[i] = v
        return (tuple(out) if type(args) is tuple else type(args)(*out)), idx

    def _input_grads(self, grad_input):
        if self.grad_outputs is None:  # the gradient reached the inputs another way
            return grad_input
        res = self._pack_with_none(self.input_tensors_index, grad_input, self.n_inputs)
        for hook in self.user_hooks:
            out = hook(self.module, res, self.grad_outputs)
            if out is None:
                continue
            if len(out) != len(res):
                raise RuntimeError(
                    "Backward hook returned an invalid number of grad_input, "
                    f"got {len(out)}, but expected {len(res)}"
                )
            res = tuple(out)
        self.grad_outputs = None
        return self._unpack_none(self.input_tensors_index, res)

    def _output_grads(self, grad_output):
        self.grad_outputs = self._pack_with_none(
            self.output_tensors_index, grad_output, self.n_outputs
        )
        for pre in self.user_pre_hooks:
            got = pre(self.module, self.grad_outputs)
            if got is None:
                continue
            if len(got) != len(self.grad_outputs):
                raise RuntimeError(
                    "Backward pre hook returned an invalid number of grad_output, "
                    f"got {len(got)}, but expected {len(self.grad_outputs)}"
                )
            self.grad_outputs = tuple(got)
        local = self.grad_outputs
        if self.input_tensors_index is None:  # no input needs a gradient: fire now
            warnings.warn(
                "Full backward hook is firing when gradients are computed with respect to "
                "module outputs since no inputs require gradients.",
                stacklevel=2,
            )
            grad_inputs = self._pack_with_none([], [], self.n_inputs)
            for hook in self.user_hooks:
                res = hook(self.module, grad_inputs, self.grad_outputs)
                if res is not None and not (isinstance(res, tuple) and all(r is None for r in res)):
                    raise RuntimeError(
                        "Backward hook for Modules where no input requires gradient should "
                        "always return None or None for all gradients."
                    )
            self.grad_outputs = None
        return tuple(local[i] for i in self.output_tensors_index)

    def setup_input_hook(self, args):
        res, idx = self._apply_on_tensors(self._input_grads, args)
        self.n_inputs, self.input_tensors_index = len(args), idx
        return res

    def setup_output_hook(self, result):
        is_tuple = isinstance(result, tuple)
        args = result if is_tuple else (result,)
        res, idx = self._apply_on_tensors(self._output_grads, args)
        self.n_outputs, self.output_tensors_index = len(args), idx
        return res if is_tuple else res[0]


# ---------------------------------------------------------------------------
# the members of a module: found in its __dict__
# ---------------------------------------------------------------------------


class _IncompatibleKeys(NamedTuple):
    """What ``load_state_dict`` returns: the keys the module has that the state
    dict lacks, and the keys of the state dict the module does not have."""

    missing_keys: list
    unexpected_keys: list

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return (
            f"_IncompatibleKeys(missing_keys={self.missing_keys!r}, "
            f"unexpected_keys={self.unexpected_keys!r})"
        )

    __str__ = __repr__


def _children_of(m: Module) -> list[tuple[str, Module | None]]:
    """``(name, sub-module)`` of the direct sub-modules of ``m`` in attribute order:
    Module attributes, the Modules in list/tuple attributes (``"blocks.0"``; the
    layers of a Sequential or ModuleList by their own names) and the names
    registered with a None module."""
    d = m.__dict__
    out: list[tuple[str, Module | None]] = []
    nones = d.get("_none_members")
    for k, v in d.items():
        if isinstance(v, Module):
            out.append((k, v))
        elif isinstance(v, (list, tuple)):
            if k == "_layers":
                names = d.get("_layer_names")
                for i, s in enumerate(v):
                    if isinstance(s, Module):
                        out.append((names[i] if names and i < len(names) else str(i), s))
            else:
                out.extend((f"{k}.{i}", s) for i, s in enumerate(v) if isinstance(s, Module))
        elif v is None and nones and nones.get(k) == "module":
            out.append((k, None))
    return out


def _is_param(v) -> bool:
    """A parameter, as PyTorch tells them: a leaf that requires grad (what
    ``nn.Parameter`` makes) or one frozen with ``requires_grad_(False)``. A plain
    tensor attribute (a cache, a precomputed table, a computed value) is neither
    a parameter nor a buffer: not trained, saved or moved by ``to()``."""
    return (v.requires_grad and v.is_leaf) or v in FROZEN


def _params_of(m: Module, with_none: bool = False) -> list[tuple[str, Tensor | None]]:
    """``(name, tensor)`` of the parameters of ``m`` itself: its parameter-tensor
    attributes that are not buffers (and, ``with_none``, the names registered
    with None)."""
    d = m.__dict__
    bufs = m._buffer_names
    nones = d.get("_none_members") if with_none else None
    return [
        (k, v)
        for k, v in d.items()
        if (isinstance(v, Tensor) and k not in bufs and _is_param(v))
        or (v is None and nones and nones.get(k) == "parameter")
    ]


def _buffers_of(m: Module, with_none: bool = False) -> list[tuple[str, Tensor | None]]:
    """``(name, tensor)`` of the buffers of ``m`` itself, in registration order."""
    d = m.__dict__
    out = []
    for k in m._buffer_names:
        v = d.get(k, _MISSING)
        if isinstance(v, Tensor) or (with_none and v is None):
            out.append((k, v))
    return out


_MISSING = object()


def _walk(root: Module, prefix: str = "", remove_duplicate: bool = True, memo=None, stop=None):
    """``(dotted name, module)`` of ``root`` and its sub-modules, parents first
    (PyTorch's order), without recursion: a deep model does not exhaust the
    recursion limit. ``remove_duplicate``: each module once (else once per path,
    cycles cut); ``stop(m)``: list ``m`` but not what is inside it."""
    if memo is None:
        memo = set()
    out: list[tuple[str, Module]] = []
    on_path: set[int] = set()
    stack: list = [(prefix, root, False)]
    while stack:
        pre, m, leaving = stack.pop()
        if leaving:
            on_path.discard(id(m))
            continue
        if remove_duplicate:
            if m in memo:
                continue
            memo.add(m)
        elif id(m) in on_path:
            continue
        out.append((pre, m))
        if stop is not None and m is not root and stop(m):
            continue
        on_path.add(id(m))
        stack.append((pre, m, True))
        for k, c in reversed(_children_of(m)):
            if c is not None:
                stack.append((f"{pre}.{k}" if pre else k, c, False))
    return out


def _overrides(name: str):
    """``stop`` for :func:`_walk`: the modules whose class defines ``name`` anew."""
    base = getattr(Module, name)
    return lambda m: getattr(type(m), name, base) is not base


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


class _MembersView(MutableMapping):
    """A live dict-like view of one kind of member of a module (PyTorch code reads
    ``m._modules``, ``m._parameters``, ``m._buffers``): reads come from the
    module's attributes, writes go to them."""

    __slots__ = ("_m",)

    def __init__(self, module: Module) -> None:
        self._m = module

    def _items(self) -> list:
        raise NotImplementedError

    def __getitem__(self, key):
        for k, v in self._items():
            if k == key:
                return v
        raise KeyError(key)

    def __contains__(self, key) -> bool:
        return any(k == key for k, _ in self._items())

    def __iter__(self):
        return iter([k for k, _ in self._items()])

    def __len__(self) -> int:
        return len(self._items())

    def keys(self):
        """The names, in order: ``list(m._modules.keys())``."""
        return OrderedDict(self._items()).keys()

    def values(self):
        """The members, in order: ``list(m._parameters.values())``."""
        return OrderedDict(self._items()).values()

    def items(self):
        """``(name, member)`` in order: ``for k, v in m._modules.items()``."""
        return OrderedDict(self._items()).items()

    def copy(self) -> OrderedDict:
        """A plain ``OrderedDict`` of the members now: ``m._parameters.copy()``."""
        return OrderedDict(self._items())

    def __eq__(self, other) -> bool:
        if isinstance(other, Mapping):
            return dict(self._items()) == dict(other.items())
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"OrderedDict({self._items()!r})"


class _ModulesView(_MembersView):
    __slots__ = ()

    def _items(self) -> list:
        return _children_of(self._m)

    def __setitem__(self, key, module) -> None:
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._m._set_child(key, module)

    def __delitem__(self, key) -> None:
        if key not in self:
            raise KeyError(key)
        self._m._drop_child(key)


class _ParametersView(_MembersView):
    __slots__ = ()

    def _items(self) -> list:
        return _params_of(self._m, with_none=True)

    def __setitem__(self, key, value) -> None:
        if value is not None and not isinstance(value, Tensor):
            raise TypeError(
                f"cannot assign '{type(value).__name__}' object to parameter '{key}' "
                "(nn.Parameter or None required)"
            )
        self._m._set_param(key, value)

    def __delitem__(self, key) -> None:
        if key not in self:
            raise KeyError(key)
        self._m._drop_param(key)


class _BuffersView(_MembersView):
    __slots__ = ()

    def _items(self) -> list:
        return _buffers_of(self._m, with_none=True)

    def __setitem__(self, key, value) -> None:
        if value is not None and not isinstance(value, Tensor):
            raise TypeError(
                f"cannot assign '{type(value).__name__}' object to buffer '{key}' "
                "(Tensor or None required)"
            )
        m = self._m
        m._forget_member(key)
        m._register_buffer_name(key, key not in m._non_persistent)
        if value is not None:
            FROZEN.add(value)
        object.__setattr__(m, key, value)

    def __delitem__(self, key) -> None:
        if key not in self:
            raise KeyError(key)
        m = self._m
        m.__dict__.pop(key, None)
        m._forget_member(key)


def _addindent(s: str, n: int) -> str:
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    first = lines.pop(0)
    return first + "\n" + "\n".join((n * " ") + line if line.strip() else "" for line in lines)


def _is_dtype_like(a) -> bool:
    if isinstance(a, dtypes.DType):
        return True
    if isinstance(a, str):
        return a.removeprefix("torch.") in dtypes.NAMES
    if isinstance(a, np.dtype) or (isinstance(a, type) and issubclass(a, np.generic)):
        return True
    return a in (float, int, bool) if isinstance(a, type) else False


def _is_device_like(a) -> bool:
    from mlfuse.targets import Target

    if isinstance(a, bool):
        return False
    return isinstance(a, (str, int, Target))


def _device_arg(device):
    """A device as ``Tensor.to`` takes it (PyTorch's int index means a CUDA device)."""
    if isinstance(device, int) and not isinstance(device, bool):
        return f"cuda:{device}"
    return device


def _parse_to(args: tuple, kwargs: dict):
    """``(device, dtype, non_blocking, memory_format)`` from the arguments of
    ``Module.to`` (PyTorch's ``to(device=None, dtype=None, non_blocking=False)``,
    ``to(dtype, non_blocking=False)``, ``to(tensor, non_blocking=False)``,
    ``to(memory_format=...)``)."""
    for k in kwargs:
        if k == "copy":
            raise RuntimeError(".to() does not accept copy argument")
        if k not in ("device", "dtype", "non_blocking", "memory_format"):
            raise TypeError(f"to() got an unexpected keyword argument '{k}'")

    def invalid() -> TypeError:
        got = [type(a).__name__ for a in args]
        got += [f"{k}={type(v).__name__}" for k, v in kwargs.items()]
        return TypeError(
            f"to() received an invalid combination of arguments - got ({', '.join(got)}), but "
            "expected one of: (device=None, dtype=None, non_blocking=False, *, "
            "memory_format=None), (dtype, non_blocking=False, *, memory_format=None), "
            "(tensor, non_blocking=False, *, memory_format=None)"
        )

    device, dtype = kwargs.get("device"), kwargs.get("dtype")
    non_blocking, fmt = kwargs.get("non_blocking", False), kwargs.get("memory_format")
    rest = list(args)
    if rest:
        first = rest.pop(0)
        if isinstance(first, Tensor):
            if "device" in kwargs or "dtype" in kwargs:
                raise invalid()
            device, dtype, form = first.device, first.dtype, "tensor"
        elif _is_dtype_like(first):
            if "device" in kwargs or "dtype" in kwargs:
                raise invalid()
            dtype, form = first, "dtype"
        elif first is None or _is_device_like(first):
            if "device" in kwargs:
                raise invalid()
            device, form = first, "device"
        else:
            raise invalid()
        if form == "device" and rest and not isinstance(rest[0], bool):
            d = rest.pop(0)
            if "dtype" in kwargs or not (d is None or _is_dtype_like(d)):
                raise invalid()
            dtype = d
        if rest:
            nb = rest.pop(0)
            if not isinstance(nb, bool) or "non_blocking" in kwargs:
                raise invalid()
            non_blocking = nb
        if rest:
            raise invalid()
    if not isinstance(non_blocking, bool):
        raise invalid()
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype)
        if not (dtype.is_float or dtype.is_complex):
            raise TypeError(
                "nn.Module.to only accepts floating point or complex dtypes, but got desired "
                f"dtype={dtype.name}"
            )
        if dtype.is_complex:
            raise NotImplementedError(
                f"nn.Module.to: mlfuse keeps complex values in a ComplexTensor of its own, so "
                f"parameters cannot become {dtype.name} in place"
            )
    return _device_arg(device), dtype, non_blocking, fmt


def _same_value(a: Tensor, b: Tensor) -> bool:
    """Whether two tensors hold one value (the same graph nodes)."""
    if a.dtype.is_complex or b.dtype.is_complex:
        return a.dtype == b.dtype and a.real is b.real and a.imag is b.imag
    return a.node is b.node


def _swap_value(t: Tensor, new: Tensor) -> None:
    """Give ``t`` the value of ``new`` in place: the same Python object (an
    optimizer holding it keeps updating it), still a leaf that requires grad if it
    was one (the node setter keeps leaves leaves), no longer a view."""
    if t.dtype.is_complex:  # a complex buffer: a pair of real tensors, swapped together
        t._become(new)
        return
    n = new._detached().node
    if getattr(t, "_base", None) is not None:
        t._base = None
    t.node = n


# ---------------------------------------------------------------------------
# Module
# ---------------------------------------------------------------------------


def _take_factory_kwargs(cls) -> None:
    """Give ``cls.__init__`` PyTorch's factory keywords ``device=`` and ``dtype=``
    (where it has none of its own): the module is built, then its tensors are
    moved and its floating-point ones cast, as :meth:`Module.to`."""
    init = cls.__dict__.get("__init__")
    if init is None or getattr(init, "_takes_factory_kwargs", False):
        return
    sig = inspect.signature(init)
    params = sig.parameters
    if "device" in params or "dtype" in params:
        return
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return

    @functools.wraps(init)
    def wrapper(self, *args, device=None, dtype=None, **kw):
        init(self, *args, **kw)
        if device is not None or dtype is not None:
            self.to(device=device, dtype=dtype)

    extra = [
        inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=None)
        for n in ("device", "dtype")
    ]
    wrapper.__signature__ = sig.replace(parameters=[*params.values(), *extra])
    wrapper._takes_factory_kwargs = True
    cls.__init__ = wrapper


def _take_input_keyword(cls) -> None:
    """Let ``cls.forward`` take its first argument as PyTorch names it,
    ``input=`` (``linear(input=x)``), whatever its own name for it."""
    fwd = cls.__dict__.get("forward")
    if fwd is None or getattr(fwd, "_takes_input_keyword", False):
        return
    params = list(inspect.signature(fwd).parameters.values())[1:]
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if not params or params[0].kind not in positional or any(p.name == "input" for p in params):
        return

    @functools.wraps(fwd)
    def forward(self, *args, **kw):
        if "input" in kw:
            args = (kw.pop("input"), *args)
        return fwd(self, *args, **kw)

    forward._takes_input_keyword = True
    cls.forward = forward


class Module:
    """The base of the modules, PyTorch's ``nn.Module``: sub-modules and Tensor
    attributes are found by walking ``__dict__`` (a parameter tensor that is not
    a registered buffer is a parameter, a plain tensor neither; Modules in list
    or tuple attributes are sub-modules too): ``sum(p.numel() for p in model.parameters())``,
    ``model.to(mlfuse.float64)``, ``model.register_forward_hook(f)``."""

    training: bool = True
    _version: int = 1
    _buffer_names: tuple = ()
    _non_persistent: frozenset = frozenset()

    # the hook registries, PyTorch's names, made on first use
    _has_call_hooks: bool = False
    _forward_pre_hooks = _HookDict(call=True)
    _forward_pre_hooks_with_kwargs = _HookDict()
    _forward_hooks = _HookDict(call=True)
    _forward_hooks_with_kwargs = _HookDict()
    _forward_hooks_always_called = _HookDict()
    _backward_hooks = _HookDict(call=True)
    _backward_pre_hooks = _HookDict(call=True)
    _state_dict_hooks = _HookDict()
    _state_dict_pre_hooks = _HookDict()
    _load_state_dict_pre_hooks = _HookDict()
    _load_state_dict_post_hooks = _HookDict()

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if cls.__module__.startswith("mlfuse."):
            _take_factory_kwargs(cls)
            _take_input_keyword(cls)

    def forward(self, *args, **kwargs) -> Tensor:
        """The computation; subclasses define it: ``m.forward(x)``."""
        raise NotImplementedError(f"{type(self).__name__} does not define forward")

    def __call__(self, *args, **kwargs) -> Tensor:
        if _global_any or self._has_call_hooks:  # one check when no hooks are registered
            return self._call_impl(args, kwargs)
        return self.forward(*args, **kwargs)

    def _call_impl(self, args: tuple, kwargs: dict):
        """``forward`` with the forward pre-hooks, forward hooks and backward hooks
        (global ones first), as PyTorch's ``_call_impl``."""
        d = self.__dict__
        empty: dict = {}
        pre_hooks = [
            *_global_forward_pre_hooks.items(),
            *d.get("_forward_pre_hooks", empty).items(),
        ]
        hooks = [*_global_forward_hooks.items(), *d.get("_forward_hooks", empty).items()]
        bw_pre = [
            *_global_backward_pre_hooks.values(),
            *d.get("_backward_pre_hooks", empty).values(),
        ]
        bw = [*_global_backward_hooks.values(), *d.get("_backward_hooks", empty).values()]
        pre_kw = d.get("_forward_pre_hooks_with_kwargs", empty)
        hook_kw = d.get("_forward_hooks_with_kwargs", empty)
        always = d.get("_forward_hooks_always_called", empty)
        result = None
        called: set[int] = set()
        try:
            for hid, hook in pre_hooks:
                if hid in pre_kw:
                    got = hook(self, args, kwargs)
                    if got is not None:
                        if isinstance(got, tuple) and len(got) == 2:
                            args, kwargs = got
                        else:
                            raise RuntimeError(
                                "forward pre-hook must return None or a tuple of (new_args, "
                                f"new_kwargs), but got {got}."
                            )
                else:
                    got = hook(self, args)
                    if got is not None:
                        args = got if isinstance(got, tuple) else (got,)
            bw_hook = None
            if bw or bw_pre:
                bw_hook = _BackwardHook(self, bw, bw_pre)
                args = bw_hook.setup_input_hook(args)
            result = self.forward(*args, **kwargs)
            for hid, hook in hooks:
                if hid in always or hid in _global_forward_hooks_always_called:
                    called.add(hid)
                if hid in hook_kw or hid in _global_forward_hooks_with_kwargs:
                    got = hook(self, args, kwargs, result)
                else:
                    got = hook(self, args, result)
                if got is not None:
                    result = got
            if bw_hook is not None:
                if not isinstance(result, (Tensor, tuple)):
                    warnings.warn(
                        "For backward hooks to be called, module output should be a Tensor or "
                        f"a tuple of Tensors but received {type(result)}",
                        stacklevel=2,
                    )
                result = bw_hook.setup_output_hook(result)
            return result
        except Exception:
            for hid, hook in hooks:
                if hid in called or not (
                    hid in always or hid in _global_forward_hooks_always_called
                ):
                    continue
                try:
                    if hid in hook_kw or hid in _global_forward_hooks_with_kwargs:
                        got = hook(self, args, kwargs, result)
                    else:
                        got = hook(self, args, result)
                    if got is not None:
                        result = got
                except Exception as e:
                    warnings.warn(
                        "module forward hook with ``always_call=True`` raised an exception "
                        f"that was silenced as another error was raised in forward: {e}",
                        stacklevel=2,
                    )
            raise

    # -- attributes --------------------------------------------------------------
    def __setattr__(self, name: str, value) -> None:
        if isinstance(value, _BufferTensor):  # nn.Buffer: registered, stored as a plain Tensor
            self._register_buffer_name(name, value.persistent)
            value = Tensor(value.node)
        if isinstance(value, Tensor) and name in self._buffer_names:
            FROZEN.add(value)  # state, not trained: an optimizer given it leaves it alone
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if name in self._buffer_names or name in self.__dict__.get("_none_members", ()):
            self.__dict__.pop(name, None)
            self._forget_member(name)
            return
        object.__delattr__(self, name)

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        frozen = tuple(k for k, v in state.items() if isinstance(v, Tensor) and v in FROZEN)
        if frozen:  # which tensors optimizers leave alone (buffers, requires_grad_(False))
            state["_frozen_attrs"] = frozen
        return state

    def __setstate__(self, state: dict) -> None:
        state = dict(state)
        frozen = state.pop("_frozen_attrs", ())
        self.__dict__.update(state)
        for k in (*frozen, *self._buffer_names):
            t = self.__dict__.get(k)
            if isinstance(t, Tensor):
                FROZEN.add(t)

    def _register_buffer_name(self, name: str, persistent: bool) -> None:
        names = tuple(self._buffer_names)
        if name not in names:
            object.__setattr__(self, "_buffer_names", names + (name,))
        off = set(self._non_persistent)
        off.discard(name) if persistent else off.add(name)
        object.__setattr__(self, "_non_persistent", frozenset(off))

    def _forget_member(self, name: str) -> None:
        """Drop ``name`` from the buffer names and the None registrations."""
        if name in self._buffer_names:
            object.__setattr__(
                self, "_buffer_names", tuple(n for n in self._buffer_names if n != name)
            )
        if name in self._non_persistent:
            object.__setattr__(self, "_non_persistent", self._non_persistent - {name})
        nones = self.__dict__.get("_none_members")
        if nones and name in nones:
            del nones[name]

    def _mark_none(self, name: str, kind: str) -> None:
        nones = self.__dict__.get("_none_members")
        if nones is None:
            nones = {}
            object.__setattr__(self, "_none_members", nones)
        nones[name] = kind

    def _has_attr(self, name: str) -> bool:
        return (
            name in self.__dict__
            or hasattr(type(self), name)
            or (self._layer_index(name) is not None)
        )

    def _layer_index(self, name) -> int | None:
        """The position of the layer named ``name`` (Sequential, ModuleList)."""
        return None

    def _set_child(self, key: str, module: Module | None) -> None:
        """Put ``module`` under the child name ``key`` (what ``m._modules[key] =
        module`` does): an attribute, or an entry of a list/tuple attribute."""
        attr, dot, idx = key.partition(".")
        if dot:
            seq = self.__dict__.get(attr)
            if isinstance(seq, (list, tuple)) and idx.isdigit() and int(idx) < len(seq):
                i = int(idx)
                if isinstance(seq, list):
                    seq[i] = module
                else:
                    object.__setattr__(self, attr, tuple(seq[:i]) + (module,) + tuple(seq[i + 1 :]))
                return
            raise KeyError(f'module name can\'t contain ".", got: {key}')
        self._forget_member(key)
        if module is None:
            self._mark_none(key, "module")
        object.__setattr__(self, key, module)

    def _drop_child(self, key: str) -> None:
        attr, dot, idx = key.partition(".")
        seq = self.__dict__.get(attr) if dot else None
        if isinstance(seq, (list, tuple)) and idx.isdigit() and int(idx) < len(seq):
            i = int(idx)
            if isinstance(seq, list):
                del seq[i]
            else:
                object.__setattr__(self, attr, tuple(seq[:i]) + tuple(seq[i + 1 :]))
            return
        self.__dict__.pop(key, None)
        self._forget_member(key)

    def _set_param(self, name: str, value: Tensor | None) -> None:
        """Make ``value`` the parameter ``name`` (what ``m._parameters[name] = p`` does);
        a tensor that does not require grad is a frozen parameter."""
        self._forget_member(name)
        if value is None:
            self._mark_none(name, "parameter")
        elif not _is_param(value):
            FROZEN.add(value)
        object.__setattr__(self, name, value)

    def _drop_param(self, name: str) -> None:
        self.__dict__.pop(name, None)
        self._forget_member(name)

    @property
    def _modules(self) -> _ModulesView:
        """The direct sub-modules by name, a live dict-like view (PyTorch's
        ``_modules``): ``m._modules["fc"] = nn.Linear(4, 2)``."""
        return _ModulesView(self)

    @_modules.setter
    def _modules(self, value) -> None:
        view = _ModulesView(self)
        new = list(value.items())
        for k in list(view.keys())[::-1]:
            self._drop_child(k)
        for k, m in new:
            view[k] = m

    @property
    def _parameters(self) -> _ParametersView:
        """The parameters of this module itself by name, a live dict-like view
        (PyTorch's ``_parameters``): ``m._parameters["weight"]``."""
        return _ParametersView(self)

    @_parameters.setter
    def _parameters(self, value) -> None:
        for k in list(_ParametersView(self).keys()):
            self._drop_param(k)
        for k, v in value.items():
            _ParametersView(self)[k] = v

    @property
    def _buffers(self) -> _BuffersView:
        """The buffers of this module itself by name, a live dict-like view
        (PyTorch's ``_buffers``): ``m._buffers["running_mean"]``."""
        return _BuffersView(self)

    @_buffers.setter
    def _buffers(self, value) -> None:
        view = _BuffersView(self)
        for k in list(view.keys()):
            del view[k]
        for k, v in value.items():
            view[k] = v

    # -- registration ----------------------------------------------------------------
    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Make the attribute ``name`` a buffer: state that is not trained (not in
        ``parameters()``), in ``state_dict()`` unless ``persistent=False``:
        ``self.register_buffer("mask", Tensor.ones(4, 4).tril())``."""
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if self._has_attr(name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' (Tensor or "
                "None required)"
            )
        self._register_buffer_name(name, persistent)
        if tensor is not None:
            FROZEN.add(tensor)
        object.__setattr__(self, name, tensor)

    def register_parameter(self, name: str, param: Tensor | None) -> None:
        """Add the parameter ``name`` (a leaf tensor, or None: a parameter slot
        that ``state_dict`` and the conversions skip), PyTorch's checks:
        ``self.register_parameter("scale", nn.Parameter(Tensor.ones(3)))``."""
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if self._has_attr(name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is not None:
            if not isinstance(param, Tensor):
                raise TypeError(
                    f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                    "(nn.Parameter or None required)"
                )
            if not param.is_leaf:
                raise ValueError(
                    f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters "
                    f"must be created explicitly. To express '{name}' as a function of another "
                    "Tensor, compute the value in the forward() method."
                )
        self._set_param(name, param)

    def add_module(self, name: str, module: Module | None) -> None:
        """Add the sub-module ``module`` (or None) as the attribute ``name``:
        ``self.add_module("fc", nn.Linear(4, 2))``."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {type(name).__name__}")
        if self._has_attr(name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._set_child(name, module)

    def register_module(self, name: str, module: Module | None) -> None:
        """:meth:`add_module` under PyTorch's other name:
        ``self.register_module("fc", nn.Linear(4, 2))``."""
        self.add_module(name, module)

    def _get_name(self) -> str:
        return type(self).__name__

    @staticmethod
    def _child(mod: Module, atoms: list[str], i: int) -> tuple[Module | None, int]:
        """The sub-module of ``mod`` named by ``atoms[i]`` (or ``atoms[i].atoms[i+1]``
        for an entry of a list attribute), and how many atoms it took."""
        if i + 1 < len(atoms):
            seq = mod.__dict__.get(atoms[i])
            if isinstance(seq, (list, tuple)) and atoms[i + 1].isdigit():
                j = int(atoms[i + 1])
                return (seq[j] if j < len(seq) else None), 2
        return dict(_children_of(mod)).get(atoms[i], _MISSING), 1

    def get_submodule(self, target: str) -> Module:
        """The sub-module at the dotted path ``target`` (``""`` is this module),
        AttributeError naming the first step that fails:
        ``model.get_submodule("encoder.layers.0")``."""
        if target == "":
            return self
        atoms = target.split(".")
        mod: Module = self
        i = 0
        while i < len(atoms):
            item = atoms[i]
            child, took = self._child(mod, atoms, i)
            if child is _MISSING or child is None:
                if not hasattr(mod, item):
                    raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
                child, took = getattr(mod, item), 1
            if not isinstance(child, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
            mod, i = child, i + took
        return mod

    def set_submodule(self, target: str, module: Module, strict: bool = False) -> None:
        """Put ``module`` at the dotted path ``target`` (replacing the sub-module
        there, or adding it to an existing parent unless ``strict``):
        ``model.set_submodule("head", nn.Linear(8, 3))``."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        if not isinstance(module, Module):
            raise ValueError("`" + "module" + f"` is not an nn.Module, found {type(module)}")
        atoms = target.split(".")
        parent, key = None, atoms[-1]
        if len(atoms) >= 2 and atoms[-1].isdigit():  # an entry of a list attribute?
            owner = self.get_submodule(".".join(atoms[:-2]))
            if isinstance(owner.__dict__.get(atoms[-2]), (list, tuple)):
                parent, key = owner, f"{atoms[-2]}.{atoms[-1]}"
        if parent is None:
            parent = self.get_submodule(".".join(atoms[:-1]))
        kids = dict(_children_of(parent))
        exists = key in kids or ("." not in key and hasattr(parent, key))
        if strict and not exists:
            raise AttributeError(parent._get_name() + " has no attribute `" + atoms[-1] + "`")
        if exists:
            old = kids[key] if key in kids else getattr(parent, key)
            if old is not None and not isinstance(old, Module):
                raise AttributeError("`" + atoms[-1] + "` is not an nn.Module")
        parent._set_child(key, module)

    def get_parameter(self, target: str) -> Tensor:
        """The parameter at the dotted path ``target``:
        ``model.get_parameter("0.weight")``."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        if name not in mod._parameters or mod.__dict__.get(name) is None:
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return getattr(mod, name)

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at the dotted path ``target``:
        ``model.get_buffer("bn.running_mean")``."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        if name not in mod._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return getattr(mod, name)

    def get_extra_state(self):
        """What a subclass adds to its ``state_dict`` under ``"_extra_state"``
        (override it with :meth:`set_extra_state`): ``m.get_extra_state()``."""
        raise RuntimeError(
            "Reached a code path in Module.get_extra_state() that should never be called."
        )

    def set_extra_state(self, state) -> None:
        """Restore what :meth:`get_extra_state` returned (a subclass defines both):
        ``m.set_extra_state(state)``."""
        raise RuntimeError(
            "Reached a code path in Module.set_extra_state() that should never be called."
        )

    # -- iterating over members -------------------------------------------------------
    def named_children(self) -> list[tuple[str, Module]]:
        """``(name, sub-module)`` of the direct sub-modules, each once:
        ``dict(m.named_children())["fc"]``."""
        memo: set[int] = set()
        out = []
        for k, c in _children_of(self):
            if c is not None and id(c) not in memo:
                memo.add(id(c))
                out.append((k, c))
        return out

    def children(self) -> list[Module]:
        """The direct sub-modules, in attribute order: ``list(m.children())``."""
        return [c for _, c in self.named_children()]

    def named_modules(
        self, memo: set | None = None, prefix: str = "", remove_duplicate: bool = True
    ) -> list[tuple[str, Module]]:
        """``(dotted name, module)`` of this module (name ``prefix``) and every
        sub-module, parents first, each once unless ``remove_duplicate=False``:
        ``[name for name, _ in m.named_modules()]`` is ``["", "0", "1"]`` for a
        Sequential of two layers."""
        if isinstance(memo, str):  # named_modules(prefix), the older signature
            memo, prefix = None, memo
        return _walk(self, prefix, remove_duplicate, memo)

    def modules(self) -> list[Module]:
        """This module and every sub-module, parents first:
        ``[type(m).__name__ for m in model.modules()]``."""
        return [m for _, m in self.named_modules()]

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> list[tuple[str, Tensor]]:
        """``(dotted name, tensor)`` of every parameter (of this module only when
        ``recurse=False``; a shared one once unless ``remove_duplicate=False``):
        ``dict(m.named_parameters())["0.weight"]``."""
        mods = self.named_modules(None, prefix, remove_duplicate) if recurse else [(prefix, self)]
        memo: set[int] = set()
        out = []
        for pre, m in mods:
            for k, v in _params_of(m):
                if id(v) in memo:
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                out.append((_join(pre, k), v))
        return out

    def parameters(self, recurse: bool = True) -> list[Tensor]:
        """Every parameter tensor (shared ones once; this module's own only when
        ``recurse=False``): ``optim.SGD(model.parameters(), lr=0.1)``."""
        return [t for _, t in self.named_parameters(recurse=recurse)]

    def named_buffers(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> list[tuple[str, Tensor]]:
        """``(dotted name, tensor)`` of the state that is not trained (batch norm's
        running statistics): ``dict(m.named_buffers())``."""
        mods = self.named_modules(None, prefix, remove_duplicate) if recurse else [(prefix, self)]
        memo: set[int] = set()
        out = []
        for pre, m in mods:
            for k, v in _buffers_of(m):
                if id(v) in memo:
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                out.append((_join(pre, k), v))
        return out

    def buffers(self, recurse: bool = True) -> list[Tensor]:
        """Every buffer tensor: ``[b.shape for b in bn.buffers()]``."""
        return [t for _, t in self.named_buffers(recurse=recurse)]

    def apply(self, fn) -> Module:
        """Call ``fn(m)`` on every sub-module, then on this module (children first,
        as PyTorch); returns ``self``: ``model.apply(init_weights)``."""
        stack: list = [(self, False)]
        on_path: set[int] = set()
        while stack:  # post-order without recursion
            m, done = stack.pop()
            if done:
                on_path.discard(id(m))
                fn(m)
                continue
            on_path.add(id(m))
            stack.append((m, True))
            stack.extend((c, False) for c in reversed(m.children()) if id(c) not in on_path)
        return self

    # -- state dict ------------------------------------------------------------------
    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        """Put this module's own parameters and persistent buffers (not its
        sub-modules') into ``destination`` under ``prefix``."""
        for name, p in _params_of(self):
            destination[prefix + name] = p if keep_vars else p.detach()
        off = self._non_persistent
        for name, b in _buffers_of(self):
            if name not in off:
                destination[prefix + name] = b if keep_vars else b.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + "_extra_state"] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix: str = "", keep_vars: bool = False):
        """Every parameter and persistent buffer by dotted name, an ``OrderedDict``
        (each module's own first, then its sub-modules', as PyTorch; detached
        tensors sharing the values unless ``keep_vars``):
        ``np.savez(path, **{k: v.numpy() for k, v in m.state_dict().items()})``."""
        if args:
            warnings.warn(
                "Positional args are being deprecated, use kwargs instead.",
                FutureWarning,
                stacklevel=2,
            )
            if destination is None:
                destination = args[0]
            if len(args) > 1 and prefix == "":
                prefix = args[1]
            if len(args) > 2 and keep_vars is False:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()  # type: ignore[attr-defined]
        stop = _overrides("state_dict")
        visited = _walk(self, "", remove_duplicate=False, stop=stop)
        posts = []
        for name, m in visited:
            pre = prefix + name + "." if name else prefix
            if m is not self and stop(m):
                m.state_dict(destination=destination, prefix=pre, keep_vars=keep_vars)
                continue
            meta = {"version": m._version}
            if hasattr(destination, "_metadata"):
                destination._metadata[pre[:-1]] = meta
            for hook in m.__dict__.get("_state_dict_pre_hooks", {}).values():
                hook(m, pre, keep_vars)
            m._save_to_state_dict(destination, pre, keep_vars)
            if m.__dict__.get("_state_dict_hooks"):
                posts.append((m, pre, meta))
        for m, pre, meta in reversed(posts):  # sub-modules' before their parents'
            for hook in m._state_dict_hooks.values():
                got = hook(m, destination, pre, meta)
                if getattr(hook, "_from_public_api", False):
                    if got is not None:
                        raise RuntimeError("state_dict post-hook must return None")
                elif got is not None and m is self:
                    destination = got
        return destination

    def _load_from_state_dict(
        self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
    ) -> None:
        """Copy this module's own parameters and persistent buffers from
        ``state_dict`` (PyTorch's signature; the sub-modules are loaded by their
        own calls), noting missing and unexpected keys and errors."""
        from mlfuse.autograd import no_grad

        for hook in self.__dict__.get("_load_state_dict_pre_hooks", {}).values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                 error_msgs)  # fmt: skip
        off = self._non_persistent
        local = {k: v for k, v in _params_of(self)}
        params = set(local)
        local.update((k, v) for k, v in _buffers_of(self) if k not in off)
        assign = local_metadata.get("assign_to_params_buffers", False)
        written = []
        for name, param in local.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor) and hasattr(value, "__array__"):
                try:  # mlfuse takes arrays too (numpy's, or PyTorch tensors)
                    arr = np.asarray(value.detach() if hasattr(value, "detach") else value)
                    value = Tensor(arr, None if assign else param.dtype, param.device)
                except (TypeError, ValueError, RuntimeError):
                    pass
            if not isinstance(value, Tensor):
                error_msgs.append(
                    f'While copying the parameter named "{key}", expected Tensor or Tensor-like '
                    f"object from checkpoint but received {type(value)}"
                )
                continue
            if param.ndim == 0 and value.shape == (1,):
                value = value.reshape(())
            if value.shape != param.shape:
                error_msgs.append(
                    f"size mismatch for {key}: copying a param with shape {value.shape} from "
                    f"checkpoint, the shape in current model is {param.shape}."
                )
                continue
            try:
                with no_grad():
                    if assign:
                        if name in params:
                            new = value._detached()
                            if param.requires_grad:
                                new.requires_grad_()
                            elif param in FROZEN:
                                new.requires_grad_(False)
                            object.__setattr__(self, name, new)
                        else:
                            setattr(self, name, value)
                    else:
                        param.assign(value.cast(param.dtype).to(param.device))
                        written.append(param)
            except Exception as ex:
                error_msgs.append(
                    f'While copying the parameter named "{key}", whose dimensions in the model '
                    f"are {param.shape} and whose dimensions in the checkpoint are "
                    f"{value.shape}, an exception occurred : {ex.args}."
                )
        if written:
            written[0].realize(*written[1:])
        extra_key = prefix + "_extra_state"
        if type(self).set_extra_state is not Module.set_extra_state:
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            children = {k for k, c in _children_of(self) if c is not None}
            for key in state_dict:
                if not key.startswith(prefix) or key == extra_key:
                    continue
                parts = key[len(prefix) :].split(".")
                if len(parts) == 1:
                    if parts[0] not in local:
                        unexpected_keys.append(key)
                elif parts[0] not in children and (
                    len(parts) < 3 or f"{parts[0]}.{parts[1]}" not in children
                ):
                    unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        """Copy ``state_dict`` (name -> Tensor, or numpy array) into the parameters
        and buffers in place (``assign=True``: make its tensors the module's,
        keeping each parameter's ``requires_grad``). Returns ``(missing_keys,
        unexpected_keys)``; with ``strict`` either raises a RuntimeError, as do
        shape mismatches: ``missing, unexpected = m.load_state_dict(sd, strict=False)``."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing: list[str] = []
        unexpected: list[str] = []
        errors: list[str] = []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata  # type: ignore[attr-defined]
        stack: list = [("", self, state_dict, False)]
        on_path: set[int] = set()
        posts: list[Module] = []
        while stack:  # parents first, without recursion
            prefix, m, local, leaving = stack.pop()
            if leaving:
                on_path.discard(id(m))
                if m.__dict__.get("_load_state_dict_post_hooks"):
                    posts.append(m)
                continue
            if id(m) in on_path:
                continue
            meta = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
            if assign:
                meta["assign_to_params_buffers"] = assign
            m._load_from_state_dict(local, prefix, meta, True, missing, unexpected, errors)
            on_path.add(id(m))
            stack.append((prefix, m, local, True))
            for name, child in reversed(_children_of(m)):
                if child is not None:
                    cp = prefix + name + "."
                    sub = {k: v for k, v in local.items() if k.startswith(cp)}
                    stack.append((cp, child, sub, False))
        keys = _IncompatibleKeys(missing, unexpected)
        for m in posts:  # each after its sub-modules
            for hook in m._load_state_dict_post_hooks.values():
                if hook(m, keys) is not None:
                    raise AssertionError(
                        "Hooks registered with ``register_load_state_dict_post_hook`` are not "
                        "expected to return new values, if incompatible_keys need to be "
                        "modified, it should be done inplace."
                    )
        if strict:
            if unexpected:
                errors.insert(
                    0,
                    "Unexpected key(s) in state_dict: {}. ".format(
                        ", ".join(f'"{k}"' for k in unexpected)
                    ),
                )
            if missing:
                errors.insert(
                    0,
                    "Missing key(s) in state_dict: {}. ".format(
                        ", ".join(f'"{k}"' for k in missing)
                    ),
                )
        if errors:
            raise RuntimeError(
                "Error(s) in loading state_dict for {}:\n\t{}".format(
                    type(self).__name__, "\n\t".join(errors)
                )
            )
        return keys

    # -- hooks -----------------------------------------------------------------------
    def register_forward_pre_hook(
        self, hook, *, prepend: bool = False, with_kwargs: bool = False
    ) -> RemovableHandle:
        """Call ``hook(module, args)`` before each forward (``hook(module, args,
        kwargs)`` with ``with_kwargs``, returning None or ``(args, kwargs)``); a
        non-None result replaces the arguments (a single value is made a 1-tuple):
        ``m.register_forward_pre_hook(lambda m, args: (args[0] * 2,))``."""
        _check_hook(hook, "register_forward_pre_hook")
        handle = RemovableHandle(
            self._forward_pre_hooks, extra_dict=self._forward_pre_hooks_with_kwargs
        )
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(
        self, hook, *, prepend: bool = False, with_kwargs: bool = False, always_call: bool = False
    ) -> RemovableHandle:
        """Call ``hook(module, args, output)`` after each forward (``hook(module,
        args, kwargs, output)`` with ``with_kwargs``); a non-None result replaces the
        output; ``always_call``: also when forward raises:
        ``m.register_forward_hook(lambda m, args, out: out.relu())``."""
        _check_hook(hook, "register_forward_hook")
        handle = RemovableHandle(
            self._forward_hooks,
            extra_dict=[self._forward_hooks_with_kwargs, self._forward_hooks_always_called],
        )
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_pre_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """Call ``hook(module, grad_output)`` when the gradients of the module's
        outputs are computed (a tuple, None for outputs that are not tensors); a
        non-None result replaces them:
        ``m.register_full_backward_pre_hook(lambda m, g: (g[0] * 0.5,))``."""
        _check_hook(hook, "register_full_backward_pre_hook")
        handle = RemovableHandle(self._backward_pre_hooks)
        self._backward_pre_hooks[handle.id] = hook
        if prepend:
            self._backward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """Call ``hook(module, grad_input, grad_output)`` when the gradients of the
        module's positional tensor inputs are computed (tuples, None where there is
        no tensor); a non-None result replaces ``grad_input``. If no input needs a
        gradient it fires with the output gradients (and all-None ``grad_input``):
        ``m.register_full_backward_hook(lambda m, gi, go: print(go[0].shape))``."""
        _check_hook(hook, "register_full_backward_hook")
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        if prepend:
            self._backward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_backward_hook(self, hook) -> RemovableHandle:
        """PyTorch's deprecated non-full backward hook: not supported, use
        :meth:`register_full_backward_hook`: ``m.register_full_backward_hook(h)``."""
        raise NotImplementedError(
            "register_backward_hook (the deprecated non-full hook) is not supported: use "
            "register_full_backward_hook"
        )

    def register_state_dict_pre_hook(self, hook) -> RemovableHandle:
        """Call ``hook(module, prefix, keep_vars)`` before ``state_dict`` saves this
        module: ``m.register_state_dict_pre_hook(lambda m, prefix, kv: None)``."""
        _check_hook(hook, "register_state_dict_pre_hook")
        handle = RemovableHandle(self._state_dict_pre_hooks)
        self._state_dict_pre_hooks[handle.id] = hook
        return handle

    def register_state_dict_post_hook(self, hook) -> RemovableHandle:
        """Call ``hook(module, state_dict, prefix, local_metadata)`` after
        ``state_dict`` saved this module (edit ``state_dict`` in place; it must
        return None): ``m.register_state_dict_post_hook(drop_keys)``."""
        _check_hook(hook, "register_state_dict_post_hook")
        hook._from_public_api = True
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def _register_state_dict_hook(self, hook) -> RemovableHandle:
        """PyTorch's older post-hook: a dict it returns replaces the root's result."""
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError(
                "Cannot register the same function as the state dict post hook that was "
                "previously registered via register_state_dict_post_hook"
            )
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def _register_load_state_dict_pre_hook(self, hook, with_module: bool = False):
        handle = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[handle.id] = _WrappedHook(
            hook, self if with_module else None
        )
        return handle

    def register_load_state_dict_pre_hook(self, hook) -> RemovableHandle:
        """Call ``hook(module, state_dict, prefix, local_metadata, strict,
        missing_keys, unexpected_keys, error_msgs)`` before this module loads:
        ``m.register_load_state_dict_pre_hook(rename_keys)``."""
        _check_hook(hook, "register_load_state_dict_pre_hook")
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def register_load_state_dict_post_hook(self, hook) -> RemovableHandle:
        """Call ``hook(module, incompatible_keys)`` after ``load_state_dict``
        (editing ``incompatible_keys.missing_keys``/``unexpected_keys`` in place
        changes what ``strict`` sees): ``m.register_load_state_dict_post_hook(f)``."""
        _check_hook(hook, "register_load_state_dict_post_hook")
        handle = RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[handle.id] = hook
        return handle

    # -- conversions -----------------------------------------------------------------
    def _apply(self, fn, recurse: bool = True) -> Module:
        """Replace the value of every parameter, gradient and buffer ``t`` (of the
        sub-modules too, with ``recurse``) by ``fn(t)`` in place: the tensors stay
        the same objects (an optimizer made before keeps training them), leaves stay
        leaves, buffers stay buffers. The new values are computed first, so an
        error leaves the module as it was: ``m._apply(lambda t: t.double())``."""
        from mlfuse.autograd import no_grad

        mods = []
        if recurse:
            stop = _overrides("_apply")
            for _, m in _walk(self, stop=stop):
                if m is not self and stop(m):
                    m._apply(fn)
                else:
                    mods.append(m)
        else:
            mods = [self]
        jobs: list[tuple[Tensor, Tensor, bool]] = []
        seen: set[int] = set()
        with no_grad():
            for m in mods:
                for k, v in list(m.__dict__.items()):
                    if not isinstance(v, Tensor) or id(v) in seen:
                        continue
                    seen.add(id(v))
                    new = fn(v)
                    if not isinstance(new, Tensor):
                        raise TypeError(
                            f"_apply: fn must return a Tensor, got {type(new).__name__} for "
                            f"{type(m).__name__}.{k}"
                        )
                    if new is not v and not _same_value(new, v):
                        if type(new) is not type(v):
                            raise TypeError(
                                f"_apply: {type(m).__name__}.{k} would become a "
                                f"{type(new).__name__}, which cannot replace a "
                                f"{type(v).__name__} in place"
                            )
                        if v.requires_grad and v.is_leaf and not new.dtype.is_float:
                            raise RuntimeError(
                                "data set to a tensor that requires gradients must be floating "
                                "point or complex dtype"
                            )
                        jobs.append((v, new, False))
                    g = v.grad
                    if g is not None:
                        ng = fn(g)
                        if isinstance(ng, Tensor) and ng is not g:
                            jobs.append((v, ng, True))
        if not jobs:
            return self
        news = [n for _, n, _ in jobs]
        realize(*news)  # every new value, before anything changes
        for t, new, is_grad in jobs:
            if is_grad:
                t._set_grad(Tensor(new._detached().node))
            else:
                _swap_value(t, new)
        return self

    def to(self, *args, **kwargs) -> Module:
        """Move and/or cast the parameters and buffers in place, PyTorch's
        ``to(device=None, dtype=None, non_blocking=False)``, ``to(dtype)``,
        ``to(tensor)``, ``to(memory_format=...)``: floating-point tensors take the
        dtype (only float dtypes are accepted), integer ones keep theirs; returns
        ``self``: ``model.to(mlfuse.float64)``, ``model.to("cuda")``. A
        ``memory_format`` is checked and the 4-d/5-d values go through it, but the
        parameters stay row-major leaves (mlfuse's kernels choose their layouts)."""
        device, dtype, _, fmt = _parse_to(args, kwargs)

        def convert(t: Tensor) -> Tensor:
            want = dtype if dtype is not None and t.dtype.is_float else None
            if fmt is not None and t.ndim in (4, 5):
                return t.to(device=device, dtype=want, memory_format=fmt)
            return t.to(device=device, dtype=want)

        return self._apply(convert)

    def cuda(self, device=None) -> Module:
        """Move the parameters and buffers to the NVIDIA GPU in place:
        ``model.cuda()``."""
        dev = "cuda" if device is None else _device_arg(device)
        return self._apply(lambda t: t.to(dev))

    def cpu(self) -> Module:
        """Move the parameters and buffers to the CPU in place: ``model.cpu()``."""
        return self._apply(lambda t: t.cpu())

    def type(self, dst_type) -> Module:
        """Cast every parameter and buffer (integer ones too) to ``dst_type`` in
        place: ``model.type(mlfuse.float64)``."""
        if dst_type is None:
            raise TypeError("type(): dst_type must be a dtype, got None")
        return self._apply(lambda t: t.type(dst_type))

    def float(self) -> Module:
        """Cast the floating-point parameters and buffers to float32 in place:
        ``model.float()``."""
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self) -> Module:
        """Cast the floating-point parameters and buffers to float64 in place:
        ``model.double()``."""
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self) -> Module:
        """Cast the floating-point parameters and buffers to float16 in place:
        ``model.half()``."""
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self) -> Module:
        """Cast the floating-point parameters and buffers to bfloat16 in place:
        ``model.bfloat16()``."""
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    def to_empty(self, *, device, recurse: bool = True) -> Module:
        """Give every parameter and buffer a new tensor of its shape and dtype on
        ``device``, values not copied (mlfuse's empty tensors are zeros):
        ``model.to_empty(device="cpu")``."""
        dev = _device_arg(device)
        return self._apply(
            lambda t: Tensor.zeros(t.shape, dtype=t.dtype, device=dev).realize(), recurse=recurse
        )

    def share_memory(self) -> Module:
        """``share_memory_()`` of every parameter and buffer (mlfuse's data loading
        runs in one process, so nothing moves): ``model.share_memory()``."""
        return self._apply(lambda t: t.share_memory_())

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Set ``requires_grad`` of every (floating-point) parameter in place, to
        freeze or unfreeze it: ``model.encoder.requires_grad_(False)``."""
        for p in self.parameters():
            if requires_grad and not p.dtype.is_float:
                continue
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the gradients of every parameter (``.grad`` becomes None; zeros
        in place with ``set_to_none=False``): ``model.zero_grad()``."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:  # zeros in place: the same gradient tensor
                g = p.grad
                if g.requires_grad:
                    g.detach_()
                g.assign(Tensor.zeros_like(g))

    def train(self, mode: bool = True) -> Module:
        """Switch this module and its sub-modules to training (or, with ``False``,
        evaluation) behaviour: ``model.train()``."""
        if not isinstance(mode, (bool, np.bool_)):
            raise ValueError("training mode is expected to be boolean")
        stop = _overrides("train")
        for _, m in _walk(self, stop=stop):
            if m is not self and stop(m):
                m.train(bool(mode))
            else:
                m.training = bool(mode)
        return self

    def eval(self) -> Module:
        """Evaluation behaviour (no dropout; batch norm uses its running statistics):
        ``model.eval()``."""
        return self.train(False)

    # -- printing --------------------------------------------------------------------
    def extra_repr(self) -> str:
        """The settings ``repr`` shows between the parentheses (override it to show
        your own): ``nn.Linear(4, 2).extra_repr()``."""
        return self._settings()

    def _settings(self) -> str:
        """The settings ``repr`` shows between the parentheses."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [
            "(" + k + "): " + _addindent(repr(c), 2) for k, c in _children_of(self) if c is not None
        ]
        lines = extra_lines + child_lines
        out = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                out += extra_lines[0]
            else:
                out += "\n  " + "\n  ".join(lines) + "\n"
        return out + ")"


class Linear(Module):
    """``x @ weight.T + bias`` with weight (out, in): ``nn.Linear(4, 8)(x)``."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True) -> None:
        self.in_features = _positive_int(in_features, "Linear: in_features")
        self.out_features = _positive_int(out_features, "Linear: out_features")
        bound = 1 / math.sqrt(in_features)
        self.weight = _param(Tensor.uniform(out_features, in_features, low=-bound, high=bound))
        self.bias = _param(Tensor.uniform(out_features, low=-bound, high=bound)) if bias else None

    def forward(self, x: Tensor) -> Tensor:
        """``F.linear(x, weight, bias)``: ``layer.forward(x)``."""
        return F.linear(x, self.weight, self.bias)

    def _settings(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


_PAD_MODES = ("zeros", "reflect", "replicate", "circular")


class _ConvNd(Module):
    _nd = 2
    _transposed = False

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        output_padding=0,
    ) -> None:
        name = type(self).__name__
        _positive_int(in_channels, f"{name}: in_channels")
        _positive_int(out_channels, f"{name}: out_channels")
        _positive_int(groups, f"{name}: groups")
        if in_channels % groups or out_channels % groups:
            raise ArgumentError(
                f"{name}: groups {groups} must divide in_channels {in_channels} and "
                f"out_channels {out_channels}"
            )
        if padding_mode not in _PAD_MODES:
            raise ArgumentError(
                f"{name}: padding_mode must be one of {_PAD_MODES}, got {padding_mode!r}"
            )
        if padding_mode != "zeros" and (self._transposed or isinstance(padding, str)):
            raise ArgumentError(f"{name}: padding_mode {padding_mode!r} needs int padding")
        if isinstance(padding, str):
            if self._transposed or padding not in ("same", "valid"):
                allowed = "int padding" if self._transposed else "'same' or 'valid'"
                raise ArgumentError(f"{name}: padding must be {allowed}, got {padding!r}")
            strides = F._tuple(stride, self._nd, f"{name}: stride")
            if padding == "same" and any(s != 1 for s in strides):
                raise ArgumentError(
                    f"{name}: padding='same' is not supported for strided convolutions "
                    f"(stride {stride})"
                )
        k = F._tuple(kernel_size, self._nd, f"{name}: kernel_size")
        self.in_channels, self.out_channels, self.kernel_size = in_channels, out_channels, k
        self.stride, self.padding, self.dilation, self.groups = stride, padding, dilation, groups
        self.padding_mode = padding_mode
        if self._transposed:
            self.output_padding = output_padding
            # PyTorch's initialization: fan-in from the weight's dim 1 (out / groups)
            shape = (in_channels, out_channels // groups) + k
        else:
            shape = (out_channels, in_channels // groups) + k
        bound = 1 / math.sqrt(shape[1] * math.prod(k))
        self.weight = _param(Tensor.uniform(*shape, low=-bound, high=bound))
        self.bias = _param(Tensor.uniform(out_channels, low=-bound, high=bound)) if bias else None

    def _settings(self) -> str:
        return (
            f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}, padding={self.padding}"
        )


class _Conv(_ConvNd):
    def forward(self, x: Tensor) -> Tensor:
        """The convolution with the layer's settings (an unbatched (C, *spatial)
        input too, as PyTorch): ``conv.forward(x)``."""
        if x.ndim == self._nd + 1:
            return self.forward(x.unsqueeze(0)).squeeze(0)
        padding = self.padding
        if self.padding_mode != "zeros":
            p = F._tuple(padding, self._nd, f"{type(self).__name__}: padding")
            x = x.pad(tuple(v for q in reversed(p) for v in (q, q)), mode=self.padding_mode)
            padding = 0
        fn = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[self._nd]
        return fn(x, self.weight, self.bias, self.stride, padding, self.dilation, self.groups)


class Conv1d(_Conv):
    """1-d convolution with weight (out, in / groups, k): ``nn.Conv1d(16, 32, 3, padding=1)(x)``."""

    _nd = 1


class Conv2d(_Conv):
    """2-d convolution with weight (out, in / groups, kh, kw):
    ``nn.Conv2d(3, 16, 3, padding=1)(x)``."""

    _nd = 2


class Conv3d(_Conv):
    """3-d convolution with weight (out, in / groups, kd, kh, kw):
    ``nn.Conv3d(3, 8, 3, padding=1)(x)``."""

    _nd = 3


class _ConvTranspose(_ConvNd):
    _transposed = True

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        output_padding=0,
        groups: int = 1,
        bias: bool = True,
        dilation=1,
        padding_mode: str = "zeros",
    ) -> None:
        super().__init__(
            in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
            padding_mode, output_padding,
        )  # fmt: skip

    def forward(self, x: Tensor) -> Tensor:
        """The transposed convolution with the layer's settings (an unbatched
        (C, *spatial) input too, as PyTorch): ``deconv.forward(x)``."""
        if x.ndim == self._nd + 1:
            return self.forward(x.unsqueeze(0)).squeeze(0)
        fn = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}[self._nd]
        return fn(
            x, self.weight, self.bias, self.stride, self.padding, self.output_padding,
            self.groups, self.dilation,
        )  # fmt: skip


class ConvTranspose1d(_ConvTranspose):
    """Transposed 1-d convolution with weight (in, out / groups, k):
    ``nn.ConvTranspose1d(16, 8, 4, stride=2, padding=1)(x)`` doubles L."""

    _nd = 1


class ConvTranspose2d(_ConvTranspose):
    """Transposed 2-d convolution with weight (in, out / groups, kh, kw):
    ``nn.ConvTranspose2d(16, 8, 4, stride=2, padding=1)(x)`` doubles H and W."""

    _nd = 2


class ConvTranspose3d(_ConvTranspose):
    """Transposed 3-d convolution with weight (in, out / groups, kd, kh, kw):
    ``nn.ConvTranspose3d(8, 4, 2, stride=2)(x)`` doubles D, H and W."""

    _nd = 3


class LayerNorm(Module):
    """Normalize over the last dims, with a learnable scale and shift:
    ``nn.LayerNorm(64)(x)``."""

    def __init__(
        self,
        normalized_shape,
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
    ):
        ns = (
            tuple(normalized_shape)
            if isinstance(normalized_shape, (tuple, list))
            else (normalized_shape,)
        )
        for s in ns:
            _positive_int(s, "LayerNorm: normalized_shape entries")
        self.normalized_shape, self.eps = ns, eps
        self.weight = _param(Tensor.ones(ns)) if elementwise_affine else None
        self.bias = _param(Tensor.zeros(ns)) if elementwise_affine and bias else None

    def forward(self, x: Tensor) -> Tensor:
        """``F.layer_norm`` with the layer's parameters: ``ln.forward(x)``."""
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)

    def _settings(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}"


def _check_momentum(momentum, name: str) -> None:
    """A batch norm's momentum: in [0, 1], or None (cumulative averages)."""
    if momentum is not None and (isinstance(momentum, bool) or not 0 <= momentum <= 1):
        raise ArgumentError(f"{name}: momentum must be in [0, 1] or None, got {momentum!r}")


def _no_grad():
    from mlfuse.autograd import no_grad

    return no_grad()


class _BatchNorm(Module):
    _buffer_names = ("running_mean", "running_var", "num_batches_tracked")
    _ndims: tuple[int, ...] = (4,)
    _layout = "(N, C, H, W)"

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        *,
        bias: bool = True,
    ) -> None:
        name = type(self).__name__
        _positive_int(num_features, f"{name}: num_features")
        _check_momentum(momentum, name)
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self.weight = _param(Tensor.ones(num_features)) if affine else None
        self.bias = _param(Tensor.zeros(num_features)) if affine and bias else None
        self.running_mean = Tensor.zeros(num_features).realize() if track_running_stats else None
        self.running_var = Tensor.ones(num_features).realize() if track_running_stats else None
        self.num_batches_tracked = Tensor(np.zeros((), np.int64)) if track_running_stats else None

    def _check_input(self, x: Tensor) -> None:
        if x.ndim not in self._ndims:
            raise ArgumentError(
                f"{type(self).__name__}: input must be {self._layout}, got {x.shape}"
            )

    def forward(self, x: Tensor) -> Tensor:
        """``F.batch_norm`` in the module's mode: ``bn.forward(x)``; with
        ``momentum=None`` the running statistics are cumulative averages (each
        batch weighs ``1 / num_batches_tracked``, a lazy scalar: nothing syncs)."""
        self._check_input(x)
        momentum = self.momentum
        if self.training and self.num_batches_tracked is not None:
            self.num_batches_tracked.assign(self.num_batches_tracked + 1)
            if momentum is None:
                momentum = 1.0 / self.num_batches_tracked.cast(self.running_mean.dtype)
        return F.batch_norm(
            x,
            self.running_mean,
            self.running_var,
            self.weight,
            self.bias,
            self.training or self.running_mean is None,
            0.0 if momentum is None else momentum,
            self.eps,
        )

    def reset_running_stats(self) -> None:
        """Running mean 0, variance 1 and no batch tracked, in place:
        ``bn.reset_running_stats()``."""
        if self.track_running_stats and self.running_mean is not None:
            with _no_grad():
                self.running_mean.assign(self.running_mean.zeros_like()).realize()
                self.running_var.assign(self.running_var.ones_like()).realize()
                self.num_batches_tracked.assign(self.num_batches_tracked.zeros_like()).realize()

    def reset_parameters(self) -> None:
        """:meth:`reset_running_stats`, weight 1 and bias 0: ``bn.reset_parameters()``."""
        self.reset_running_stats()
        if self.affine and self.weight is not None:
            with _no_grad():
                self.weight.assign(self.weight.ones_like()).realize()
                if self.bias is not None:
                    self.bias.assign(self.bias.zeros_like()).realize()

    def _settings(self) -> str:
        return f"{self.num_features}, eps={self.eps}, momentum={self.momentum}"


class BatchNorm1d(_BatchNorm):
    """Per-feature normalization of (N, C) or (N, C, L): batch statistics while
    training (updating the running ones), running statistics in ``eval()``:
    ``nn.BatchNorm1d(16)(x)``."""

    _ndims = (2, 3)
    _layout = "(N, C) or (N, C, L)"


class BatchNorm2d(_BatchNorm):
    """Per-channel normalization of (N, C, H, W): batch statistics while
    training (updating the running ones), running statistics in ``eval()``:
    ``nn.BatchNorm2d(16)(x)``."""


class BatchNorm3d(_BatchNorm):
    """Per-channel normalization of (N, C, D, H, W): ``nn.BatchNorm3d(8)(x)``."""

    _ndims = (5,)
    _layout = "(N, C, D, H, W)"


class BatchNorm(_BatchNorm):
    """tinygrad's ``nn.BatchNorm`` (also its ``BatchNorm2d``/``BatchNorm3d``): per-channel
    normalization of any (N, C, ...) input, with tinygrad's argument order. It trains
    (batch statistics, running ones updated) while ``Tensor.training`` is set, unless
    ``train()``/``eval()`` chose a mode for it: ``with Tensor.train(): y = bn(x)``."""

    _ndims = tuple(range(2, 10))
    _layout = "(N, C, ...)"

    def __init__(
        self,
        sz: int,
        eps: float = 1e-5,
        affine: bool = True,
        track_running_stats: bool = True,
        momentum: float = 0.1,
    ) -> None:
        super().__init__(sz, eps, momentum, affine, track_running_stats)

    @property
    def training(self) -> bool:  # type: ignore[override]
        return self.__dict__.get("training", Tensor.training)

    @training.setter
    def training(self, mode: bool) -> None:
        self.__dict__["training"] = bool(mode)


class SyncBatchNorm(_BatchNorm):
    """PyTorch's ``nn.SyncBatchNorm`` in one process: batch norm of (N, C, *)
    with any number of spatial dims (the statistics are the batch's own; with
    no process group to synchronize over, ``process_group`` is kept but not
    used, as PyTorch does outside ``torch.distributed``):
    ``nn.SyncBatchNorm(16)(x)``, ``nn.SyncBatchNorm.convert_sync_batchnorm(model)``."""

    _layout = "(N, C, *)"

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        process_group=None,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats)
        self.process_group = process_group
        if dtype is not None or device is not None:
            for k in ("weight", "bias", "running_mean", "running_var"):
                t = getattr(self, k)
                if t is not None:
                    t = t.cast(dtype or t.dtype).to(device or t.device)
                    setattr(self, k, _param(t) if k in ("weight", "bias") else t.realize())

    def _check_input(self, x: Tensor) -> None:
        if x.ndim < 2:
            raise ArgumentError(
                f"SyncBatchNorm: expected at least 2D input (N, C, *), got {x.ndim}D {x.shape}"
            )
        if x.shape[1] == 0:
            raise ArgumentError("SyncBatchNorm: the number of input channels should be non-zero")

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group=None) -> Module:
        """``module`` with every batch norm in it (``BatchNorm1d/2d/3d``, itself
        included) replaced by a ``SyncBatchNorm`` holding the same parameters,
        running statistics and training mode (sub-modules are replaced in place;
        the result is ``module`` unless it is itself a batch norm):
        ``model = nn.SyncBatchNorm.convert_sync_batchnorm(model)``."""
        if not isinstance(module, Module):
            raise TypeError(
                f"convert_sync_batchnorm: module must be a Module, got {type(module).__name__}"
            )
        done: dict[int, Module] = {}

        def convert(m: Module) -> Module:
            if id(m) in done:  # a module used twice stays one module
                return done[id(m)]
            out = m
            if isinstance(m, _BatchNorm):
                out = cls(m.num_features, m.eps, m.momentum, m.affine, m.track_running_stats,
                          process_group)  # fmt: skip
                for k in ("weight", "bias", "running_mean", "running_var", "num_batches_tracked"):
                    setattr(out, k, getattr(m, k))
                out.training = m.training
            done[id(m)] = out
            for k, v in list(vars(out).items()):
                if isinstance(v, Module):
                    setattr(out, k, convert(v))
                elif isinstance(v, list):
                    v[:] = [convert(s) if isinstance(s, Module) else s for s in v]
                elif isinstance(v, tuple) and any(isinstance(s, Module) for s in v):
                    setattr(out, k, tuple(convert(s) if isinstance(s, Module) else s for s in v))
            return out

        return convert(module)

    def _settings(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}"
        )


class LayerNorm2d(LayerNorm):
    """tinygrad's ``nn.LayerNorm2d``: layer norm over the channels of (N, C, H, W)
    at each position: ``nn.LayerNorm2d(16)(x)``."""

    def forward(self, x: Tensor) -> Tensor:
        """The channels-last layer norm of ``x``: ``ln.forward(x)``."""
        if x.ndim != 4:
            raise ArgumentError(f"LayerNorm2d: input must be (N, C, H, W), got {x.shape}")
        return super().forward(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


def _padding_idx(padding_idx, num_embeddings: int, name: str) -> int | None:
    if padding_idx is None:
        return None
    if isinstance(padding_idx, bool) or not isinstance(padding_idx, int):
        raise ArgumentError(f"{name}: padding_idx must be an int, got {padding_idx!r}")
    if not -num_embeddings <= padding_idx < num_embeddings:
        raise ArgumentError(
            f"{name}: padding_idx {padding_idx} must be within num_embeddings ({num_embeddings})"
        )
    return padding_idx % num_embeddings


def _embedding_weight(num, dim, padding_idx, weight, freeze, name) -> Tensor:
    """PyTorch's embedding table: standard normal with the ``padding_idx`` row
    zero, or a copy of ``weight``."""
    if weight is not None:
        if weight.shape != (num, dim):
            raise ArgumentError(f"{name}: _weight must be ({num}, {dim}), got {weight.shape}")
        return Tensor(weight.numpy(), weight.dtype, weight.device, requires_grad=not freeze)
    w = np.asarray(Tensor.randn(num, dim).numpy())
    if padding_idx is not None:
        w = w.copy()
        w[padding_idx] = 0
    return Tensor(w, requires_grad=not freeze)


class Embedding(Module):
    """A lookup table of ``num_embeddings`` rows of ``embedding_dim`` values
    (initialised standard normal, as PyTorch): ``nn.Embedding(100, 16)(ids)``."""

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        padding_idx: int | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
        _weight: Tensor | None = None,
        _freeze: bool = False,
    ) -> None:
        name = type(self).__name__
        self.num_embeddings = _positive_int(num_embeddings, f"{name}: num_embeddings")
        self.embedding_dim = _positive_int(embedding_dim, f"{name}: embedding_dim")
        self.padding_idx = _padding_idx(padding_idx, num_embeddings, name)
        if scale_grad_by_freq or sparse:
            raise NotImplementedError(f"{name}: scale_grad_by_freq and sparse are not supported")
        self.max_norm, self.norm_type = max_norm, norm_type
        self.weight = _embedding_weight(
            num_embeddings, embedding_dim, self.padding_idx, _weight, _freeze, name
        )

    def forward(self, ids: Tensor) -> Tensor:
        """``F.embedding(ids, weight)``: ``emb.forward(ids)``."""
        return F.embedding(ids, self.weight, self.padding_idx, self.max_norm, self.norm_type)

    def _settings(self) -> str:
        return f"{self.num_embeddings}, {self.embedding_dim}"


class Dropout(Module):
    """``F.dropout`` while training, the identity in ``eval()``: ``nn.Dropout(0.1)(x)``."""

    def __init__(self, p: float = 0.5) -> None:
        if not 0 <= p <= 1:
            raise ArgumentError(f"Dropout: p must be in [0, 1], got {p}")
        self.p = p

    def forward(self, x: Tensor) -> Tensor:
        """Drop with probability ``p`` when training: ``drop.forward(x)``."""
        return F.dropout(x, self.p, self.training)

    def _settings(self) -> str:
        return f"p={self.p}"


class _Activation(Module):
    def __init__(self, fn, name: str, **kwargs) -> None:
        self._fn, self._name, self._kwargs = fn, name, kwargs

    def forward(self, x: Tensor) -> Tensor:
        """The activation, elementwise: ``act.forward(x)``."""
        return self._fn(x, **self._kwargs)

    def _settings(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self._kwargs.items())


class ReLU(_Activation):
    """``max(x, 0)`` (``inplace`` is accepted and makes no difference):
    ``nn.ReLU()(x)``."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(F.relu, "relu")


class GELU(_Activation):
    """Gaussian error linear unit (``approximate="none"`` or ``"tanh"``): ``nn.GELU()(x)``."""

    def __init__(self, approximate: str = "none") -> None:
        if approximate not in ("none", "tanh"):
            raise ArgumentError(f"GELU: approximate must be 'none' or 'tanh', got {approximate!r}")
        super().__init__(F.gelu, "gelu", approximate=approximate)


class SiLU(_Activation):
    """``x * sigmoid(x)`` (``inplace`` is accepted and makes no difference):
    ``nn.SiLU()(x)``."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(F.silu, "silu")


class Sigmoid(_Activation):
    """``1 / (1 + exp(-x))``: ``nn.Sigmoid()(x)``."""

    def __init__(self) -> None:
        super().__init__(F.sigmoid, "sigmoid")


class Tanh(_Activation):
    """Hyperbolic tangent: ``nn.Tanh()(x)``."""

    def __init__(self) -> None:
        super().__init__(F.tanh, "tanh")


class Softmax(_Activation):
    """Softmax along ``dim``: ``nn.Softmax(dim=-1)(x)``."""

    def __init__(self, dim: int = -1) -> None:
        super().__init__(F.softmax, "softmax", dim=dim)


class Flatten(Module):
    """Merge dims ``start_dim..end_dim`` (default: all but the batch dim):
    ``nn.Flatten()(x)``."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x: Tensor) -> Tensor:
        """``x.flatten(start_dim, end_dim)``: ``flat.forward(x)``."""
        return x.flatten(self.start_dim, self.end_dim)


class _MaxPool(Module):
    _fn = staticmethod(F.max_pool2d)

    def __init__(
        self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False
    ):
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.dilation, self.ceil_mode = dilation, ceil_mode
        self.return_indices = return_indices

    def forward(self, x: Tensor):
        """The max over each window (and where it is, with ``return_indices``):
        ``pool.forward(x)``."""
        return self._fn(
            x,
            self.kernel_size,
            self.stride,
            self.padding,
            self.dilation,
            self.ceil_mode,
            self.return_indices,
        )

    def _settings(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxPool1d(_MaxPool):
    """``F.max_pool1d`` with fixed settings: ``nn.MaxPool1d(3, stride=2)(x)``."""

    _fn = staticmethod(F.max_pool1d)


class MaxPool2d(_MaxPool):
    """``F.max_pool2d`` with fixed settings: ``nn.MaxPool2d(2)(x)``."""


class MaxPool3d(_MaxPool):
    """``F.max_pool3d`` with fixed settings: ``nn.MaxPool3d(2)(x)``."""

    _fn = staticmethod(F.max_pool3d)


class _MaxUnpool(Module):
    _fn = staticmethod(F.max_unpool2d)

    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding

    def forward(self, x: Tensor, indices: Tensor, output_size=None) -> Tensor:
        """The maxima put back at ``indices``, zeros elsewhere: ``unpool(y, idx)``."""
        return self._fn(x, indices, self.kernel_size, self.stride, self.padding, output_size)

    def _settings(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpool):
    """``F.max_unpool1d`` with fixed settings: ``nn.MaxUnpool1d(2)(y, idx)``."""

    _fn = staticmethod(F.max_unpool1d)


class MaxUnpool2d(_MaxUnpool):
    """``F.max_unpool2d`` with fixed settings: ``nn.MaxUnpool2d(2)(y, idx)``."""


class MaxUnpool3d(_MaxUnpool):
    """``F.max_unpool3d`` with fixed settings: ``nn.MaxUnpool3d(2)(y, idx)``."""

    _fn = staticmethod(F.max_unpool3d)


class _FractionalMaxPool(Module):
    _nd = 2

    def __init__(
        self,
        kernel_size,
        output_size=None,
        output_ratio=None,
        return_indices: bool = False,
        _random_samples: Tensor | None = None,
    ) -> None:
        name, nd = type(self).__name__, self._nd
        kernel = F._tuple(kernel_size, nd, f"{name}: kernel_size")
        if any(k <= 0 for k in kernel):
            raise ArgumentError(f"{name}: kernel_size must be greater than 0, got {kernel_size}")
        if output_size is None and output_ratio is None:
            raise ArgumentError(
                f"{name} requires specifying either an output size, or a pooling ratio"
            )
        if output_size is not None and output_ratio is not None:
            raise ArgumentError(
                f"{name}: only one of output_size and output_ratio may be specified"
            )
        self.kernel_size, self.return_indices = kernel, bool(return_indices)
        self.output_size = None if output_size is None else F._tuple(
            output_size, nd, f"{name}: output_size"
        )  # fmt: skip
        self.output_ratio = None
        if output_ratio is not None:
            ratio = (
                output_ratio if isinstance(output_ratio, (tuple, list)) else (output_ratio,) * nd
            )
            if len(ratio) != nd or not all(
                isinstance(v, (int, float, np.number)) and not isinstance(v, bool) and 0 < v < 1
                for v in ratio
            ):
                raise ArgumentError(
                    f"{name}: output_ratio must be between 0 and 1 (got {output_ratio})"
                )
            self.output_ratio = tuple(float(v) for v in ratio)
        self.register_buffer("_random_samples", _random_samples)

    def forward(self, x: Tensor):
        """The max over the pseudo-random windows (and where each maximum is,
        with ``return_indices``): ``pool.forward(x)``."""
        fn = F.fractional_max_pool2d if self._nd == 2 else F.fractional_max_pool3d
        return fn(
            x, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
            _random_samples=self._random_samples,
        )  # fmt: skip

    def _settings(self) -> str:
        out = f"output_size={self.output_size}" if self.output_size else (
            f"output_ratio={self.output_ratio}"
        )  # fmt: skip
        return f"kernel_size={self.kernel_size}, {out}"


class FractionalMaxPool2d(_FractionalMaxPool):
    """``F.fractional_max_pool2d`` with fixed settings (fresh windows each call
    unless ``_random_samples`` (N, C, 2) fixes them):
    ``nn.FractionalMaxPool2d(3, output_ratio=0.5)(x)``."""


class FractionalMaxPool3d(_FractionalMaxPool):
    """``F.fractional_max_pool3d`` with fixed settings:
    ``nn.FractionalMaxPool3d(2, output_size=(4, 4, 4))(x)``."""

    _nd = 3


class _AvgPool(Module):
    _nd = 2

    def __init__(
        self,
        kernel_size,
        stride=None,
        padding=0,
        ceil_mode=False,
        count_include_pad=True,
        divisor_override=None,
    ):
        if self._nd == 1 and divisor_override is not None:
            raise TypeError("AvgPool1d: divisor_override is not an argument of the 1-d pool")
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad
        self.divisor_override = divisor_override

    def forward(self, x: Tensor) -> Tensor:
        """The mean over each window: ``pool.forward(x)``."""
        return F._avg_pool(
            x, self.kernel_size, self.stride, self.padding, self.ceil_mode,
            self.count_include_pad, self.divisor_override, self._nd, f"avg_pool{self._nd}d",
        )  # fmt: skip

    def _settings(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPool):
    """``F.avg_pool1d`` with fixed settings: ``nn.AvgPool1d(3, stride=2)(x)``."""

    _nd = 1


class AvgPool2d(_AvgPool):
    """``F.avg_pool2d`` with fixed settings: ``nn.AvgPool2d(2)(x)``."""


class AvgPool3d(_AvgPool):
    """``F.avg_pool3d`` with fixed settings: ``nn.AvgPool3d(2)(x)``."""

    _nd = 3


def _abs_index(idx, n: int) -> int:
    """``idx`` (an int, negative from the end) as a position in ``range(n)``."""
    idx = operator.index(idx)
    if not -n <= idx < n:
        raise IndexError(f"index {idx} is out of range")
    return idx % n


def _check_child_name(module: Module, name) -> None:
    """PyTorch's checks on a new sub-module name (``add_module``'s)."""
    if not isinstance(name, str):
        raise TypeError(f"module name should be a string. Got {type(name).__name__}")
    if "." in name:
        raise KeyError(f'module name can\'t contain ".", got: {name}')
    if name == "":
        raise KeyError('module name can\'t be empty string ""')
    if name in module.__dict__ or hasattr(type(module), name):
        raise KeyError(f"attribute '{name}' already exists")


class _LayerList(Module):
    """Sequential and ModuleList: the layers in the list ``self._layers``, named by
    position, or by ``self._layer_names`` when it is set (a Sequential made from
    an OrderedDict); ``seq.<name>`` reads a layer."""

    _what = "layer"

    def _names(self) -> list[str]:
        names = list(self.__dict__.get("_layer_names") or ())
        return names[: len(self._layers)] + [str(i) for i in range(len(names), len(self._layers))]

    def _set_names(self, names: list[str] | None) -> None:
        if names is not None and names == [str(i) for i in range(len(names))]:
            names = None  # positional: nothing to keep
        object.__setattr__(self, "_layer_names", names)

    def _layer_index(self, name) -> int | None:
        d = self.__dict__
        layers = d.get("_layers")
        if layers is None or not isinstance(name, str):
            return None
        if d.get("_layer_names") is not None:
            names = self._names()
            return names.index(name) if name in names else None
        if name.isdigit() and str(int(name)) == name and int(name) < len(layers):
            return int(name)
        return None

    def _check_layer(self, m, where):
        raise NotImplementedError

    def __getattr__(self, name: str):
        i = self._layer_index(name)
        if i is not None:
            return self.__dict__["_layers"][i]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value) -> None:
        if name not in self.__dict__:
            i = self._layer_index(name)
            if i is not None:
                self._layers[i] = self._check_layer(value, name)
                return
        super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        i = self._layer_index(name) if name not in self.__dict__ else None
        if i is None:
            super().__delattr__(name)
            return
        names = self._names()
        del self._layers[i], names[i]
        self._set_names(names)

    def _append_named(self, name: str, module) -> None:
        names = self._names()
        self._layers.append(module)
        names.append(name)
        self._set_names(names)

    def _next_name(self) -> str:
        names, n = set(self._names()), len(self._layers)
        while str(n) in names:
            n += 1
        return str(n)

    def _set_child(self, key: str, module) -> None:
        i = self._layer_index(key)
        if i is not None:
            self._layers[i] = self._check_layer(module, key)
        elif "." not in key and key not in self.__dict__ and not hasattr(type(self), key):
            self._append_named(key, self._check_layer(module, key))
        else:
            super()._set_child(key, module)

    def _drop_child(self, key: str) -> None:
        if self._layer_index(key) is not None:
            self.__delattr__(key)
        else:
            super()._drop_child(key)

    def _renumber(self) -> None:
        object.__setattr__(self, "_layer_names", None)

    def __len__(self) -> int:
        return len(self._layers)

    def __iter__(self):
        return iter(list(self._layers))

    def __delitem__(self, idx) -> None:
        if isinstance(idx, slice):
            del self._layers[idx]
        else:
            del self._layers[_abs_index(idx, len(self._layers))]
        self._renumber()  # PyTorch numbers the layers again from 0

    def pop(self, key):
        """Remove and return the layer at ``key`` (an int or a slice):
        ``last = layers.pop(-1)``."""
        v = self[key]
        del self[key]
        return v


class Sequential(_LayerList):
    """Modules (or callables) applied in order: ``nn.Sequential(nn.Linear(4, 2),
    nn.ReLU())(x)``; ``seq[0]``, ``seq[1:]`` and ``len(seq)`` index the layers. An
    ``OrderedDict`` names them (``nn.Sequential(OrderedDict(fc=nn.Linear(4, 2)))``,
    then ``seq.fc`` and ``"fc.weight"``), as PyTorch."""

    def __init__(self, *args) -> None:
        self._layers: list = []
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, m in args[0].items():
                _check_child_name(self, key)
                self._append_named(key, self._check_layer(m, key))
            return
        for i, m in enumerate(args):
            self._layers.append(self._check_layer(m, i))

    @staticmethod
    def _check_layer(m, where):
        if not callable(m):
            raise TypeError(f"Sequential: layer {where} is not callable: {m!r}")
        return m

    def forward(self, x: Tensor) -> Tensor:
        """Each layer on the previous one's output: ``seq.forward(x)``."""
        for m in self._layers:
            x = m(x)
        return x

    def __getitem__(self, idx):
        if isinstance(idx, slice):  # the layers keep their names, as PyTorch's
            return self.__class__(OrderedDict(zip(self._names()[idx], self._layers[idx])))
        return self._layers[_abs_index(idx, len(self._layers))]

    def __setitem__(self, idx: int, module) -> None:
        i = _abs_index(idx, len(self._layers))
        self._layers[i] = self._check_layer(module, i)

    def append(self, module) -> Sequential:
        """Add ``module`` at the end: ``seq.append(nn.ReLU())``."""
        self._append_named(self._next_name(), self._check_layer(module, len(self._layers)))
        return self

    def extend(self, sequential) -> Sequential:
        """Add each layer of ``sequential`` (any iterable) at the end:
        ``seq.extend(other)``."""
        for m in sequential:
            self.append(m)
        return self

    def insert(self, index: int, module) -> Sequential:
        """Put ``module`` before position ``index`` (the layers are numbered again
        from 0): ``seq.insert(0, nn.Flatten())``."""
        n = len(self._layers)
        index = operator.index(index)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        self._layers.insert(index + n if index < 0 else index, self._check_layer(module, index))
        self._renumber()
        return self

    def __add__(self, other) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError(
                "add operator supports only objects of Sequential class, but "
                f"{str(type(other))} is given."
            )
        return Sequential(*self._layers, *other._layers)

    def __iadd__(self, other) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError(
                "add operator supports only objects of Sequential class, but "
                f"{str(type(other))} is given."
            )
        return self.extend(list(other))

    def __mul__(self, other: int) -> Sequential:
        if isinstance(other, bool) or not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(other)}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")
        return Sequential(*(self._layers * other))

    def __rmul__(self, other: int) -> Sequential:
        return self.__mul__(other)

    def __imul__(self, other: int) -> Sequential:
        if isinstance(other, bool) or not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(other)}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")
        return self.extend(list(self._layers) * (other - 1))


# ---------------------------------------------------------------------------
# parameters and containers
# ---------------------------------------------------------------------------


class _ParameterMeta(type):
    def __instancecheck__(cls, obj) -> bool:
        if isinstance(obj, UninitializedParameter):  # a parameter to be (as PyTorch's)
            return True
        return isinstance(obj, Tensor) and obj.requires_grad and obj.is_leaf


class Parameter(metaclass=_ParameterMeta):
    """A copy of ``data`` as a leaf tensor that requires grad (a module attribute
    holding one is a parameter); ``isinstance(t, nn.Parameter)`` tells leaves that
    require grad: ``self.scale = nn.Parameter(Tensor.ones(8))``."""

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> Tensor:  # type: ignore[misc]
        if data is None:
            data = Tensor.zeros(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter: data must be a Tensor, got {type(data).__name__}")
        t = Tensor(data.numpy(), data.dtype, data.device, requires_grad=requires_grad)
        return t if requires_grad else t.requires_grad_(False)  # frozen for optimizers


class _BufferTensor(Tensor):
    """What ``nn.Buffer`` makes: a Tensor that a module attribute registers as a buffer."""

    __slots__ = ("persistent",)


class _BufferMeta(type):
    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, _BufferTensor)


class Buffer(metaclass=_BufferMeta):
    """A copy of ``data`` that, set as a module attribute, is a buffer: state that
    is not trained (not in ``parameters()``) but is in ``named_buffers()`` and, if
    ``persistent``, ``state_dict()``; the attribute then holds a plain Tensor (and
    later Tensors set under that name stay buffers):
    ``self.running = nn.Buffer(Tensor.zeros(8))``."""

    def __new__(cls, data: Tensor, *, persistent: bool = True) -> Tensor:  # type: ignore[misc]
        if not isinstance(data, Tensor):
            raise TypeError(f"Buffer: data must be a Tensor, got {type(data).__name__}")
        t = _BufferTensor(data.numpy(), data.dtype, data.device)
        t.persistent = bool(persistent)
        return t


class _Uninitialized:
    """A tensor whose shape is not known yet: what a lazy module's attribute
    holds until the first call builds the real one. It is not a Tensor (not in
    ``parameters()`` or ``state_dict()``); a Tensor attribute of it raises."""

    __slots__ = ("requires_grad", "dtype", "device")
    _what = "parameter"

    def __init__(self, requires_grad: bool = True, device=None, dtype=None) -> None:
        self.requires_grad = bool(requires_grad)
        self.dtype = None if dtype is None else dtypes.as_dtype(dtype)
        self.device = device

    def materialize(self, shape, device=None, dtype=None) -> Tensor:
        """A tensor of ``shape`` (zeros) with this one's dtype, device and
        ``requires_grad``; mlfuse's tensors cannot change class in place, so
        store the result: ``self.weight = self.weight.materialize((8, 4))``."""
        shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
        t = Tensor.zeros(
            shape, dtype=dtype or self.dtype or dtypes.default_float, device=device or self.device
        ).realize()
        return _param(t) if self.requires_grad else t

    def __getattr__(self, name: str):
        if not name.startswith("__") and hasattr(Tensor, name):
            raise ArgumentError(
                f"{type(self).__name__}: can't access {name!r} of an uninitialized {self._what}: "
                f"call the lazy module once (or materialize(shape)) first"
            )
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


class UninitializedParameter(_Uninitialized):
    """A parameter whose shape the first call of its lazy module decides (what
    ``nn.LazyLinear(8).weight`` holds until then, as PyTorch):
    ``isinstance(lazy.weight, nn.UninitializedParameter)``."""

    __slots__ = ()


class UninitializedBuffer(_Uninitialized):
    """A buffer whose shape the first call of its lazy module decides (what
    ``nn.LazyBatchNorm2d().running_mean`` holds until then, as PyTorch):
    ``isinstance(bn.running_mean, nn.UninitializedBuffer)``."""

    __slots__ = ()
    _what = "buffer"

    def __init__(self, requires_grad: bool = False, device=None, dtype=None) -> None:
        super().__init__(requires_grad, device, dtype)


def _param_line(k, p) -> str:
    """One line of a ParameterList/ParameterDict repr, as PyTorch's."""
    if isinstance(p, Tensor):
        size = "x".join(str(s) for s in p.shape)
        dev = f" ({p.device})" if p.device != "cpu" else ""
        kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
        return f"  ({k}): {kind} containing: [{p.dtype.name} of size {size}{dev}]"
    return f"  ({k}): Object of type: {type(p).__name__}"


class ParameterList(Module):
    """A list of parameters, registered (named ``0``, ``1``...) so that
    ``parameters()`` and ``state_dict()`` see them; a Tensor that is not a
    parameter is made one (a leaf copy that requires grad), as PyTorch:
    ``self.scales = nn.ParameterList(Tensor.ones(4) for _ in range(3))``."""

    def __init__(self, values=None) -> None:
        self._size = 0
        if values is not None:
            self.extend(values)

    @staticmethod
    def _convert(v):
        return v if not isinstance(v, Tensor) or isinstance(v, Parameter) else Parameter(v)

    def _key(self, i) -> str:
        if isinstance(i, bool) or not isinstance(i, int):
            raise TypeError(f"ParameterList: indices must be ints or slices, got {i!r}")
        if not -self._size <= i < self._size:
            raise IndexError(f"ParameterList: index {i} is out of range for {self._size} entries")
        return str(i % self._size)

    def append(self, value) -> ParameterList:
        """Add ``value`` at the end: ``params.append(Tensor.zeros(3))``."""
        vars(self)[str(self._size)] = self._convert(value)
        self._size += 1
        return self

    def extend(self, values) -> ParameterList:
        """Add each of ``values`` at the end: ``params.extend([a, b])``."""
        if not isinstance(values, Iterable) or isinstance(values, Tensor):
            raise TypeError(
                "ParameterList.extend should be called with an iterable, but got "
                + type(values).__name__
            )
        for v in values:
            self.append(v)
        return self

    def _set_param(self, name: str, value) -> None:
        if name.isdigit() and int(name) < self._size:
            self[int(name)] = value
        elif name == str(self._size):
            self.append(value)
        else:
            super()._set_param(name, value)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return ParameterList(vars(self)[str(k)] for k in range(self._size)[i])
        return vars(self)[self._key(i)]

    def __setitem__(self, i: int, value) -> None:
        vars(self)[self._key(i)] = self._convert(value)

    def __len__(self) -> int:
        return self._size

    def __iter__(self):
        return iter([vars(self)[str(k)] for k in range(self._size)])

    def __iadd__(self, values) -> ParameterList:
        return self.extend(values)

    def forward(self, *args, **kwargs) -> Tensor:
        raise NotImplementedError("ParameterList has no forward: iterate over its parameters")

    def extra_repr(self) -> str:
        """One line per entry, as PyTorch's: ``(0): Parameter containing: [float32 of
        size 2x3]``: ``print(params)``."""
        return "\n".join(_param_line(k, p) for k, p in enumerate(self))


class ParameterDict(Module):
    """Parameters by name, registered (named by their keys) so that
    ``parameters()`` and ``state_dict()`` see them; a Tensor that is not a
    parameter is made one, as PyTorch (a plain dict's keys are taken sorted, an
    OrderedDict's in order):
    ``self.bias = nn.ParameterDict({"a": Tensor.zeros(4)})``."""

    def __init__(self, parameters=None) -> None:
        self._keys: list[str] = []
        if parameters is not None:
            self.update(parameters)

    def __setitem__(self, key: str, value) -> None:
        _check_key(self, key, "ParameterDict")
        if key not in self._keys:
            self._keys.append(key)
        vars(self)[key] = ParameterList._convert(value)

    def __setattr__(self, name: str, value) -> None:
        if name in self.__dict__.get("_keys", ()):
            self[name] = value
            return
        super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        if name in self.__dict__.get("_keys", ()):
            self.pop(name)
            return
        super().__delattr__(name)

    def _set_param(self, name: str, value) -> None:
        self[name] = value

    def _drop_param(self, name: str) -> None:
        self.pop(name)

    def __getitem__(self, key: str):
        if key not in self._keys:
            raise KeyError(key)
        return vars(self)[key]

    def __delitem__(self, key: str) -> None:
        self.pop(key)

    def pop(self, key: str):
        """Remove and return the parameter under ``key``: ``params.pop("a")``."""
        v = self[key]
        self._keys.remove(key)
        del vars(self)[key]
        return v

    def popitem(self) -> tuple:
        """Remove and return the last ``(key, parameter)`` added:
        ``k, p = params.popitem()``."""
        if not self._keys:
            raise KeyError("popitem(): dictionary is empty")
        k = self._keys[-1]
        return k, self.pop(k)

    def get(self, key: str, default=None):
        """The parameter under ``key``, or ``default``: ``params.get("a")``."""
        return vars(self)[key] if key in self._keys else default

    def setdefault(self, key: str, default=None):
        """The parameter under ``key``, first set to ``default`` if missing:
        ``params.setdefault("a", Tensor.zeros(2))``."""
        if key not in self._keys:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        """Remove every entry: ``params.clear()``."""
        for k in list(self._keys):
            self.pop(k)

    def copy(self) -> ParameterDict:
        """A new ParameterDict holding the same parameters: ``params.copy()``."""
        return ParameterDict(OrderedDict((k, vars(self)[k]) for k in self._keys))

    def fromkeys(self, keys, default=None) -> ParameterDict:
        """A new ParameterDict of ``keys``, each holding ``default``:
        ``params.fromkeys(["a", "b"], Tensor.zeros(2))``."""
        return ParameterDict((k, default) for k in keys)

    def update(self, parameters) -> None:
        """Add (or replace) the entries of a mapping (a plain dict's keys sorted,
        as PyTorch) or of ``(key, value)`` pairs: ``params.update({"c": t})``."""
        pairs = _pairs(parameters, "ParameterDict")
        if isinstance(parameters, Mapping) and not isinstance(
            parameters, (OrderedDict, ParameterDict)
        ):
            pairs = sorted(pairs, key=lambda kv: kv[0])
        for k, v in pairs:
            self[k] = v

    def _snapshot(self) -> OrderedDict:
        return OrderedDict((k, vars(self)[k]) for k in self._keys)

    def keys(self):
        """The keys in insertion order: ``list(params.keys())``."""
        return self._snapshot().keys()

    def values(self):
        """The parameters in insertion order: ``list(params.values())``."""
        return self._snapshot().values()

    def items(self):
        """``(key, parameter)`` in insertion order: ``for name, p in params.items()``."""
        return self._snapshot().items()

    def __contains__(self, key) -> bool:
        return key in self._keys

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self):
        return iter(list(self._keys))

    def __reversed__(self):
        return iter(list(reversed(self._keys)))

    def __or__(self, other) -> ParameterDict:
        out = self.copy()
        out.update(other)
        return out

    def __ror__(self, other) -> ParameterDict:
        out = other.copy() if isinstance(other, ParameterDict) else ParameterDict(other)
        out.update(self)
        return out

    def __ior__(self, other) -> ParameterDict:
        self.update(other)
        return self

    def forward(self, *args, **kwargs) -> Tensor:
        raise NotImplementedError("ParameterDict has no forward: index it by key")

    def extra_repr(self) -> str:
        """One line per entry, as PyTorch's: ``print(params)``."""
        return "\n".join(_param_line(k, p) for k, p in self.items())


class Identity(Module):
    """Returns its input (any constructor arguments are ignored, as PyTorch):
    ``nn.Identity()(x)``."""

    def __init__(self, *args, **kwargs) -> None:
        pass

    def forward(self, x: Tensor) -> Tensor:
        """``x`` itself: ``ident.forward(x)``."""
        return x


class ModuleList(_LayerList):
    """A list of sub-modules, registered (named ``0``, ``1``...) so that
    ``parameters()`` and ``state_dict()`` see them:
    ``self.blocks = nn.ModuleList(nn.Linear(8, 8) for _ in range(4))``."""

    def __init__(self, modules=None) -> None:
        self._layers: list[Module] = []
        if modules is not None:
            self.extend(modules)

    @staticmethod
    def _check_layer(m, where) -> Module:
        if not isinstance(m, Module):
            raise TypeError(
                f"ModuleList: entry {where} is not a Module: {m!r} ({type(m).__name__} is not a "
                "Module subclass)"
            )
        return m

    _check = _check_layer

    def append(self, module: Module) -> ModuleList:
        """Add ``module`` at the end: ``layers.append(nn.ReLU())``."""
        self._append_named(self._next_name(), self._check_layer(module, len(self._layers)))
        return self

    def extend(self, modules) -> ModuleList:
        """Add each of ``modules`` at the end: ``layers.extend([a, b])``."""
        if not isinstance(modules, Iterable):
            raise TypeError(
                "ModuleList.extend should be called with an iterable, but got "
                + type(modules).__name__
            )
        for m in list(modules):
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> None:
        """Put ``module`` before position ``index``: ``layers.insert(0, m)``."""
        self._layers.insert(operator.index(index), self._check_layer(module, index))
        self._renumber()

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(self._layers[idx])
        return self._layers[_abs_index(idx, len(self._layers))]

    def __setitem__(self, idx: int, module: Module) -> None:
        i = _abs_index(idx, len(self._layers))
        self._layers[i] = self._check_layer(module, i)

    def __iadd__(self, modules) -> ModuleList:
        return self.extend(modules)

    def __add__(self, other) -> ModuleList:
        return ModuleList([*self._layers, *other])

    def forward(self, *args, **kwargs) -> Tensor:
        raise NotImplementedError("ModuleList has no forward: iterate over its modules")

    def __repr__(self) -> str:
        """Runs of equal entries shown once, as PyTorch's: ``(0-2): 3 x Linear(...)``."""
        reprs = [repr(m) for m in self._layers]
        if not reprs:
            return self._get_name() + "()"
        runs: list[list] = []
        for i, r in enumerate(reprs):
            if runs and runs[-1][2] == r:
                runs[-1][1] = i
            else:
                runs.append([i, i, r])
        names = self._names()
        lines = []
        for start, end, r in runs:
            if start == end:
                lines.append(_addindent(f"({names[start]}): {r}", 2))
            else:
                lines.append(_addindent(f"({start}-{end}): {end - start + 1} x {r}", 2))
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"


def _check_key(owner: Module, key, what: str) -> None:
    if not isinstance(key, str) or not key or "." in key or key.startswith("_"):
        raise KeyError(
            f"{what}: keys must be non-empty strings without '.' that do not start with "
            f"'_', got {key!r}"
        )
    if hasattr(type(owner), key) or key in ("training",):
        raise KeyError(f"{what}: key {key!r} is the name of a {what} attribute")


def _pairs(items, what: str) -> list:
    """``(key, value)`` pairs of a mapping or of an iterable of pairs, with
    PyTorch's errors."""
    if isinstance(items, (Mapping, ModuleDict, ParameterDict)):
        return list(items.items())
    if not isinstance(items, Iterable):
        raise TypeError(
            f"{what}.update should be called with an iterable of key/value pairs, but got "
            + type(items).__name__
        )
    out = []
    for j, p in enumerate(items):
        if not isinstance(p, Iterable):
            raise TypeError(
                f"{what} update sequence element #{j} should be Iterable; is {type(p).__name__}"
            )
        p = tuple(p)
        if len(p) != 2:
            raise ValueError(
                f"{what} update sequence element #{j} has length {len(p)}; 2 is required"
            )
        out.append(p)
    return out


class ModuleDict(Module):
    """Sub-modules by name, registered (named by their keys) so that
    ``parameters()`` and ``state_dict()`` see them:
    ``self.heads = nn.ModuleDict({"cls": nn.Linear(8, 3)})``."""

    def __init__(self, modules=None) -> None:
        self._keys: list[str] = []
        if modules is not None:
            self.update(modules)

    def __setitem__(self, key: str, module: Module) -> None:
        _check_key(self, key, "ModuleDict")
        if not isinstance(module, Module):
            raise TypeError(f"ModuleDict: {key!r} is not a Module: {module!r}")
        if key not in self._keys:
            self._keys.append(key)
        vars(self)[key] = module

    def __setattr__(self, name: str, value) -> None:
        if isinstance(value, Module) and name in self.__dict__.get("_keys", ()):
            self[name] = value
            return
        super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        if name in self.__dict__.get("_keys", ()):
            self.pop(name)
            return
        super().__delattr__(name)

    def _set_child(self, key: str, module) -> None:
        self[key] = module

    def _drop_child(self, key: str) -> None:
        self.pop(key)

    def __getitem__(self, key: str) -> Module:
        if key not in self._keys:
            raise KeyError(key)
        return vars(self)[key]

    def __delitem__(self, key: str) -> None:
        self.pop(key)

    def pop(self, key: str) -> Module:
        """Remove and return the module under ``key``: ``heads.pop("cls")``."""
        m = self[key]
        self._keys.remove(key)
        del vars(self)[key]
        return m

    def clear(self) -> None:
        """Remove every module: ``heads.clear()``."""
        for k in list(self._keys):
            self.pop(k)

    def update(self, modules) -> None:
        """Add (or replace) the modules of a mapping or of ``(key, module)`` pairs:
        ``heads.update({"box": nn.Linear(8, 4)})``."""
        for k, m in _pairs(modules, "ModuleDict"):
            self[k] = m

    def _snapshot(self) -> OrderedDict:
        return OrderedDict((k, vars(self)[k]) for k in self._keys)

    def keys(self):
        """The keys in insertion order: ``list(heads.keys())``."""
        return self._snapshot().keys()

    def values(self):
        """The modules in insertion order: ``list(heads.values())``."""
        return self._snapshot().values()

    def items(self):
        """``(key, module)`` in insertion order: ``for name, m in heads.items()``."""
        return self._snapshot().items()

    def __contains__(self, key) -> bool:
        return key in self._keys

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self):
        return iter(list(self._keys))

    def forward(self, *args, **kwargs) -> Tensor:
        raise NotImplementedError("ModuleDict has no forward: index it by key")


class Container(Module):
    """PyTorch's deprecated ``nn.Container``: a Module whose keyword arguments
    are its sub-modules (subclass ``nn.Module`` instead); it warns, as PyTorch's:
    ``nn.Container(enc=nn.Linear(4, 8), dec=nn.Linear(8, 4))``."""

    def __init__(self, **kwargs) -> None:
        warnings.warn(
            "nn.Container is deprecated. All of its functionality is now implemented in "
            "nn.Module. Subclass that instead.",
            DeprecationWarning,
            stacklevel=2,
        )
        for key, value in kwargs.items():
            if value is not None and not isinstance(value, Module):
                raise TypeError(f"Container: {key!r} is not a Module: {type(value).__name__}")
            setattr(self, key, value)


# ---------------------------------------------------------------------------
# normalization, resampling and reshaping layers
# ---------------------------------------------------------------------------


class GroupNorm(Module):
    """Normalize groups of channels, with a per-channel scale and shift:
    ``nn.GroupNorm(4, 32)(x)``."""

    def __init__(
        self,
        num_groups: int,
        num_channels: int,
        eps: float = 1e-5,
        affine: bool = True,
        *,
        bias: bool = True,
    ):
        _positive_int(num_groups, "GroupNorm: num_groups")
        _positive_int(num_channels, "GroupNorm: num_channels")
        if num_channels % num_groups:
            raise ArgumentError(
                f"GroupNorm: num_groups {num_groups} must divide num_channels {num_channels}"
            )
        self.num_groups, self.num_channels, self.eps, self.affine = (
            num_groups, num_channels, eps, affine,
        )  # fmt: skip
        self.weight = _param(Tensor.ones(num_channels)) if affine else None
        self.bias = _param(Tensor.zeros(num_channels)) if affine and bias else None

    def forward(self, x: Tensor) -> Tensor:
        """``F.group_norm`` with the layer's parameters: ``gn.forward(x)``."""
        if x.ndim < 2 or x.shape[1] != self.num_channels:
            raise ArgumentError(
                f"GroupNorm: input must be (N, {self.num_channels}, ...), got {x.shape}"
            )
        return F.group_norm(x, self.num_groups, self.weight, self.bias, self.eps)

    def _settings(self) -> str:
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}"


class _InstanceNorm(Module):
    _buffer_names = ("running_mean", "running_var", "num_batches_tracked")
    _nd = 2

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float = 0.1,
        affine: bool = False,
        track_running_stats: bool = False,
        *,
        bias: bool = True,
    ) -> None:
        _positive_int(num_features, f"{type(self).__name__}: num_features")
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self.weight = _param(Tensor.ones(num_features)) if affine else None
        self.bias = _param(Tensor.zeros(num_features)) if affine and bias else None
        self.running_mean = Tensor.zeros(num_features).realize() if track_running_stats else None
        self.running_var = Tensor.ones(num_features).realize() if track_running_stats else None
        self.num_batches_tracked = Tensor(np.zeros((), np.int64)) if track_running_stats else None

    def forward(self, x: Tensor) -> Tensor:
        """``F.instance_norm`` in the module's mode: ``norm.forward(x)``."""
        nd, name = self._nd, type(self).__name__
        if x.ndim not in (nd + 1, nd + 2):
            sp = F._SPATIAL[nd]
            raise ArgumentError(f"{name}: input must be (N, C, {sp}) or (C, {sp}), got {x.shape}")
        batched = x.ndim == nd + 2
        xb = x if batched else x.unsqueeze(0)
        use_input_stats = self.training or not self.track_running_stats
        if self.training and self.num_batches_tracked is not None:
            self.num_batches_tracked.assign(self.num_batches_tracked + 1)
        out = F.instance_norm(
            xb, self.running_mean, self.running_var, self.weight, self.bias, use_input_stats,
            self.momentum, self.eps,
        )  # fmt: skip
        return out if batched else out.squeeze(0)

    def _settings(self) -> str:
        return f"{self.num_features}, eps={self.eps}, affine={self.affine}"


class InstanceNorm1d(_InstanceNorm):
    """Normalize each channel of each sample of (N, C, L) over L:
    ``nn.InstanceNorm1d(16)(x)``."""

    _nd = 1


class InstanceNorm2d(_InstanceNorm):
    """Normalize each channel of each sample of (N, C, H, W) over H and W:
    ``nn.InstanceNorm2d(16, affine=True)(x)``."""


class InstanceNorm3d(_InstanceNorm):
    """Normalize each channel of each sample of (N, C, D, H, W):
    ``nn.InstanceNorm3d(8)(x)``."""

    _nd = 3


class InstanceNorm(Module):
    """tinygrad's ``nn.InstanceNorm``: each channel of each sample of any (N, C, ...)
    input normalized over the rest, with a learnable scale and shift by default:
    ``nn.InstanceNorm(16)(x)``."""

    def __init__(self, num_features: int, eps: float = 1e-5, affine: bool = True) -> None:
        _positive_int(num_features, "InstanceNorm: num_features")
        self.num_features, self.eps = num_features, eps
        self.weight = _param(Tensor.ones(num_features)) if affine else None
        self.bias = _param(Tensor.zeros(num_features)) if affine else None

    def forward(self, x: Tensor) -> Tensor:
        """``x`` normalized per (sample, channel): ``norm.forward(x)``."""
        if x.ndim < 3 or x.shape[1] != self.num_features:
            raise ArgumentError(
                f"InstanceNorm: input must be (N, {self.num_features}, ...), got {x.shape}"
            )
        flat = x.reshape(x.shape[0], self.num_features, -1)
        y = F.layer_norm(flat, (flat.shape[-1],), eps=self.eps).reshape(x.shape)
        if self.weight is None or self.bias is None:
            return y
        shape = (1, -1) + (1,) * (x.ndim - 2)
        return y * self.weight.reshape(shape) + self.bias.reshape(shape)

    def _settings(self) -> str:
        return f"{self.num_features}, eps={self.eps}"


class RMSNorm(Module):
    """``x / sqrt(mean(x^2) + eps)`` over the last dims, times a learnable scale:
    ``nn.RMSNorm(64)(x)``."""

    def __init__(self, normalized_shape, eps: float | None = None, elementwise_affine=True):
        ns = (
            tuple(normalized_shape)
            if isinstance(normalized_shape, (tuple, list))
            else (normalized_shape,)
        )
        for s in ns:
            _positive_int(s, "RMSNorm: normalized_shape entries")
        self.normalized_shape, self.eps = ns, eps
        self.weight = _param(Tensor.ones(ns)) if elementwise_affine else None

    def forward(self, x: Tensor) -> Tensor:
        """``F.rms_norm`` with the layer's scale: ``norm.forward(x)``."""
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def _settings(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}"


class LocalResponseNorm(Module):
    """``F.local_response_norm`` with fixed settings: ``nn.LocalResponseNorm(5)(x)``."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0):
        self.size = _positive_int(size, "LocalResponseNorm: size")
        self.alpha, self.beta, self.k = alpha, beta, k

    def forward(self, x: Tensor) -> Tensor:
        """Divide by the neighbouring channels' energy: ``lrn.forward(x)``."""
        return F.local_response_norm(x, self.size, self.alpha, self.beta, self.k)


class CrossMapLRN2d(Module):
    """PyTorch's legacy ``nn.CrossMapLRN2d`` (Lua Torch's SpatialCrossMapLRN) on
    (N, C, H, W): ``x * (k + alpha / size * s)^-beta``, ``s`` the sum of the
    squares of channels ``c - p + 1 .. c + p - 1`` (``p = (size - 1) // 2 + 1``),
    as PyTorch computes it: its running sum never drops channel 0, so for the
    channels ``c >= p`` ``s`` also holds channel 0's square (the output is
    PyTorch's; the gradient is that of this output, not PyTorch's hand-written
    backward): ``nn.CrossMapLRN2d(5, 1e-4, 0.75, 2)(x)``."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1) -> None:
        self.size = _positive_int(size, "CrossMapLRN2d: size")
        self.alpha, self.beta, self.k = alpha, beta, k

    def forward(self, x: Tensor) -> Tensor:
        """Divide by the neighbouring channels' energy: ``lrn.forward(x)``."""
        if not isinstance(x, Tensor):
            raise TypeError(f"CrossMapLRN2d: input must be a Tensor, got {type(x).__name__}")
        if x.ndim != 4:
            raise ArgumentError(
                f"CrossMapLRN2d: expected input to be 4D (N, C, H, W), got {x.ndim}D {x.shape}"
            )
        xf = x._float()
        c, p = x.shape[1], (self.size - 1) // 2 + 1
        sq = xf * xf
        padded = sq.pad(((0, 0), (p - 1, p - 1), (0, 0), (0, 0)))
        full = tuple((0, s) for s in x.shape)
        total = None
        for i in range(2 * p - 1):
            win = padded.shrink(full[:1] + ((i, i + c),) + full[2:])
            total = win if total is None else total + win
        assert total is not None
        if c > p:  # PyTorch's running sum keeps channel 0 from channel p on
            late = Tensor(np.arange(c) >= p, device=x.device).reshape(1, c, 1, 1)
            total = total + late.where(sq[:, :1], 0.0)
        return xf * (total * (self.alpha / self.size) + self.k) ** -self.beta

    def _settings(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class Upsample(Module):
    """``F.interpolate`` with fixed settings:
    ``nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)(x)``."""

    def __init__(
        self,
        size=None,
        scale_factor=None,
        mode: str = "nearest",
        align_corners: bool | None = None,
        recompute_scale_factor: bool | None = None,
    ) -> None:
        self.size, self.scale_factor, self.mode = size, scale_factor, mode
        self.align_corners, self.recompute_scale_factor = align_corners, recompute_scale_factor

    def forward(self, x: Tensor) -> Tensor:
        """The resized input: ``up.forward(x)``."""
        return F.interpolate(
            x, self.size, self.scale_factor, self.mode, self.align_corners,
            self.recompute_scale_factor,
        )  # fmt: skip

    def _settings(self) -> str:
        what = f"size={self.size}" if self.size is not None else f"scale_factor={self.scale_factor}"
        return f"{what}, mode={self.mode!r}"


class PixelShuffle(Module):
    """(*, C r^2, H, W) -> (*, C, H r, W r): ``nn.PixelShuffle(2)(x)``."""

    def __init__(self, upscale_factor: int) -> None:
        self.upscale_factor = _positive_int(upscale_factor, "PixelShuffle: upscale_factor")

    def forward(self, x: Tensor) -> Tensor:
        """``F.pixel_shuffle``: ``shuffle.forward(x)``."""
        return F.pixel_shuffle(x, self.upscale_factor)

    def _settings(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """(*, C, H r, W r) -> (*, C r^2, H, W): ``nn.PixelUnshuffle(2)(x)``."""

    def __init__(self, downscale_factor: int) -> None:
        self.downscale_factor = _positive_int(downscale_factor, "PixelUnshuffle: downscale_factor")

    def forward(self, x: Tensor) -> Tensor:
        """``F.pixel_unshuffle``: ``unshuffle.forward(x)``."""
        return F.pixel_unshuffle(x, self.downscale_factor)

    def _settings(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


class _Adaptive(Module):
    _fn = staticmethod(F.adaptive_avg_pool2d)

    def __init__(self, output_size, return_indices: bool = False) -> None:
        self.output_size = output_size
        self.return_indices = return_indices

    def forward(self, x: Tensor):
        """The pool over PyTorch's adaptive windows (and, max pools with
        ``return_indices``, where the maxima are): ``pool.forward(x)``."""
        if self.return_indices:
            return self._fn(x, self.output_size, True)
        return self._fn(x, self.output_size)

    def _settings(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_Adaptive):
    """``F.adaptive_avg_pool1d``: ``nn.AdaptiveAvgPool1d(4)(x)``."""

    _fn = staticmethod(F.adaptive_avg_pool1d)

    def __init__(self, output_size) -> None:
        super().__init__(output_size)


class AdaptiveAvgPool2d(_Adaptive):
    """``F.adaptive_avg_pool2d``: ``nn.AdaptiveAvgPool2d(1)(x)`` is the global average pool."""

    def __init__(self, output_size) -> None:
        super().__init__(output_size)


class AdaptiveMaxPool1d(_Adaptive):
    """``F.adaptive_max_pool1d``: ``nn.AdaptiveMaxPool1d(4)(x)``."""

    _fn = staticmethod(F.adaptive_max_pool1d)


class AdaptiveMaxPool2d(_Adaptive):
    """``F.adaptive_max_pool2d``: ``nn.AdaptiveMaxPool2d((7, 7))(x)``."""

    _fn = staticmethod(F.adaptive_max_pool2d)


class AdaptiveAvgPool3d(_Adaptive):
    """``F.adaptive_avg_pool3d``: ``nn.AdaptiveAvgPool3d(1)(x)`` is the global average pool."""

    _fn = staticmethod(F.adaptive_avg_pool3d)

    def __init__(self, output_size) -> None:
        super().__init__(output_size)


class AdaptiveMaxPool3d(_Adaptive):
    """``F.adaptive_max_pool3d``: ``nn.AdaptiveMaxPool3d((2, 4, 4))(x)``."""

    _fn = staticmethod(F.adaptive_max_pool3d)


class _ChannelDropout(Module):
    _fn = staticmethod(F.dropout2d)

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        if not 0 <= p <= 1:
            raise ArgumentError(f"{type(self).__name__}: p must be in [0, 1], got {p}")
        self.p = p

    def forward(self, x: Tensor) -> Tensor:
        """Drop with probability ``p`` when training: ``drop.forward(x)``."""
        return self._fn(x, self.p, self.training)

    def _settings(self) -> str:
        return f"p={self.p}"


class Dropout1d(_ChannelDropout):
    """``F.dropout1d`` while training (whole channels), the identity in ``eval()``:
    ``nn.Dropout1d(0.1)(x)``."""

    _fn = staticmethod(F.dropout1d)


class Dropout2d(_ChannelDropout):
    """``F.dropout2d`` while training (whole channels), the identity in ``eval()``:
    ``nn.Dropout2d(0.1)(x)``."""


class Dropout3d(_ChannelDropout):
    """``F.dropout3d`` while training (whole channels), the identity in ``eval()``:
    ``nn.Dropout3d(0.1)(x)``."""

    _fn = staticmethod(F.dropout3d)


class AlphaDropout(_ChannelDropout):
    """``F.alpha_dropout`` while training, the identity in ``eval()``:
    ``nn.AlphaDropout(0.1)(x)``."""

    _fn = staticmethod(F.alpha_dropout)


class FeatureAlphaDropout(_ChannelDropout):
    """``F.feature_alpha_dropout`` (whole channels) while training, the identity in
    ``eval()``: ``nn.FeatureAlphaDropout(0.1)(x)``."""

    _fn = staticmethod(F.feature_alpha_dropout)


class Unflatten(Module):
    """Split dim ``dim`` into ``unflattened_size``: ``nn.Unflatten(1, (4, 8))(x)``."""

    def __init__(self, dim: int, unflattened_size) -> None:
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, x: Tensor) -> Tensor:
        """``x.unflatten(dim, sizes)``: ``unflat.forward(x)``."""
        return x.unflatten(self.dim, self.unflattened_size)

    def _settings(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class _Pad(Module):
    _nd = 2
    _mode = "constant"

    def __init__(self, padding) -> None:
        n = 2 * self._nd
        if isinstance(padding, (int,)) and not isinstance(padding, bool):
            padding = (padding,) * n
        self.padding = F._tuple(padding, n, f"{type(self).__name__}: padding")
        self.value = 0.0

    def forward(self, x: Tensor) -> Tensor:
        """``F.pad`` with the layer's amounts (last dim first): ``pad.forward(x)``."""
        if x.ndim < self._nd + 1:
            raise ArgumentError(
                f"{type(self).__name__}: input needs at least {self._nd + 1} dims, got {x.shape}"
            )
        return F.pad(x, self.padding, self._mode, self.value)

    def _settings(self) -> str:
        return f"{self.padding}" + (f", value={self.value}" if self._mode == "constant" else "")


class ZeroPad1d(_Pad):
    """Pad the last dim with zeros: ``nn.ZeroPad1d((1, 2))(x)``."""

    _nd = 1


class ZeroPad2d(_Pad):
    """Pad the last two dims with zeros (left, right, top, bottom):
    ``nn.ZeroPad2d(1)(x)``."""


class _ConstantPad(_Pad):
    def __init__(self, padding, value: float = 0.0) -> None:
        super().__init__(padding)
        self.value = value


class ConstantPad1d(_ConstantPad):
    """Pad the last dim with ``value``: ``nn.ConstantPad1d(2, 3.5)(x)``."""

    _nd = 1


class ConstantPad2d(_ConstantPad):
    """Pad the last two dims with ``value``: ``nn.ConstantPad2d((1, 1, 2, 0), -1.0)(x)``."""


class ConstantPad3d(_ConstantPad):
    """Pad the last three dims with ``value``: ``nn.ConstantPad3d(1, 0.0)(x)``."""

    _nd = 3


class ReflectionPad1d(_Pad):
    """Pad the last dim with its reflection: ``nn.ReflectionPad1d(2)(x)``."""

    _nd, _mode = 1, "reflect"


class ReflectionPad2d(_Pad):
    """Pad the last two dims with their reflection: ``nn.ReflectionPad2d(1)(x)``."""

    _mode = "reflect"


class ReplicationPad1d(_Pad):
    """Pad the last dim with copies of its edge: ``nn.ReplicationPad1d(2)(x)``."""

    _nd, _mode = 1, "replicate"


class ReplicationPad2d(_Pad):
    """Pad the last two dims with copies of their edges: ``nn.ReplicationPad2d(1)(x)``."""

    _mode = "replicate"


class ZeroPad3d(_Pad):
    """Pad the last three dims with zeros: ``nn.ZeroPad3d((1, 1, 2, 2, 0, 1))(x)``."""

    _nd = 3


class ReflectionPad3d(_Pad):
    """Pad the last three dims with their reflection: ``nn.ReflectionPad3d(1)(x)``."""

    _nd, _mode = 3, "reflect"


class ReplicationPad3d(_Pad):
    """Pad the last three dims with copies of their edges: ``nn.ReplicationPad3d(1)(x)``."""

    _nd, _mode = 3, "replicate"


class CircularPad1d(_Pad):
    """Pad the last dim by wrapping around (the other end's values):
    ``nn.CircularPad1d((2, 1))(x)``."""

    _nd, _mode = 1, "circular"


class CircularPad2d(_Pad):
    """Pad the last two dims by wrapping around: ``nn.CircularPad2d(1)(x)``."""

    _mode = "circular"


class CircularPad3d(_Pad):
    """Pad the last three dims by wrapping around: ``nn.CircularPad3d(1)(x)``."""

    _nd, _mode = 3, "circular"


class CosineSimilarity(Module):
    """``F.cosine_similarity`` along ``dim``: ``nn.CosineSimilarity(dim=1)(a, b)``."""

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        self.dim, self.eps = dim, eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        """The cosine of the angle between ``x1`` and ``x2``: ``cos.forward(a, b)``."""
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """``F.pairwise_distance``: ``nn.PairwiseDistance(p=1)(a, b)``."""

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        """``||x1 - x2 + eps||_p`` along the last dim: ``dist.forward(a, b)``."""
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


# ---------------------------------------------------------------------------
# more activations
# ---------------------------------------------------------------------------


class LeakyReLU(_Activation):
    """``x`` or ``negative_slope * x``: ``nn.LeakyReLU(0.2)(x)``."""

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__(F.leaky_relu, "leaky_relu", negative_slope=negative_slope)


class ELU(_Activation):
    """``x`` or ``alpha * (exp(x) - 1)``: ``nn.ELU()(x)``."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__(F.elu, "elu", alpha=alpha)


class SELU(_Activation):
    """Scaled elu with the self-normalizing constants: ``nn.SELU()(x)``."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(F.selu, "selu")


class CELU(_Activation):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``: ``nn.CELU(0.5)(x)``."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        if alpha == 0:
            raise ArgumentError("CELU: alpha must not be 0")
        super().__init__(F.celu, "celu", alpha=alpha)


class Hardswish(_Activation):
    """``x * hardsigmoid(x)``: ``nn.Hardswish()(x)``."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(F.hardswish, "hardswish")


class Hardsigmoid(_Activation):
    """``clamp(x / 6 + 1/2, 0, 1)``: ``nn.Hardsigmoid()(x)``."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(F.hardsigmoid, "hardsigmoid")


class Hardtanh(_Activation):
    """Clamp to ``[min_val, max_val]``: ``nn.Hardtanh(-2, 2)(x)``."""

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False):
        if min_val > max_val:
            raise ArgumentError(f"Hardtanh: min_val {min_val} is above max_val {max_val}")
        super().__init__(F.hardtanh, "hardtanh", min_val=min_val, max_val=max_val)


class ReLU6(_Activation):
    """``min(max(x, 0), 6)``: ``nn.ReLU6()(x)``."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(F.relu6, "relu6")


class Mish(_Activation):
    """``x * tanh(softplus(x))``: ``nn.Mish()(x)``."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(F.mish, "mish")


class Softplus(_Activation):
    """``log(1 + exp(beta x)) / beta`` (linear above ``threshold``): ``nn.Softplus()(x)``."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__(F.softplus, "softplus", beta=beta, threshold=threshold)


class Softsign(_Activation):
    """``x / (1 + |x|)``: ``nn.Softsign()(x)``."""

    def __init__(self) -> None:
        super().__init__(F.softsign, "softsign")


class LogSigmoid(_Activation):
    """``log(sigmoid(x))``: ``nn.LogSigmoid()(x)``."""

    def __init__(self) -> None:
        super().__init__(F.logsigmoid, "logsigmoid")


class Tanhshrink(_Activation):
    """``x - tanh(x)``: ``nn.Tanhshrink()(x)``."""

    def __init__(self) -> None:
        super().__init__(F.tanhshrink, "tanhshrink")


class Hardshrink(_Activation):
    """``x`` where ``|x| > lambd``, else 0: ``nn.Hardshrink(0.5)(x)``."""

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__(F.hardshrink, "hardshrink", lambd=lambd)


class Softshrink(_Activation):
    """Shrink towards 0 by ``lambd``: ``nn.Softshrink(0.5)(x)``."""

    def __init__(self, lambd: float = 0.5) -> None:
        if lambd < 0:
            raise ArgumentError(f"Softshrink: lambd must be >= 0, got {lambd}")
        super().__init__(F.softshrink, "softshrink", lambd=lambd)


class Threshold(_Activation):
    """``x`` where ``x > threshold``, else ``value``: ``nn.Threshold(0.1, 0.0)(x)``."""

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__(F.threshold, "threshold", threshold=threshold, value=value)


class LogSoftmax(_Activation):
    """Log-softmax along ``dim``: ``nn.LogSoftmax(dim=1)(x)``."""

    def __init__(self, dim: int = -1) -> None:
        super().__init__(F.log_softmax, "log_softmax", dim=dim)


class Softmin(_Activation):
    """``softmax(-x)`` along ``dim``: ``nn.Softmin(dim=1)(x)``."""

    def __init__(self, dim: int = -1) -> None:
        super().__init__(F.softmin, "softmin", dim=dim)


class GLU(_Activation):
    """Gated linear unit along ``dim``: ``nn.GLU()(x)``."""

    def __init__(self, dim: int = -1) -> None:
        super().__init__(F.glu, "glu", dim=dim)


class PReLU(Module):
    """``max(0, x) + weight * min(0, x)`` with a learnable slope (one, or one per
    channel), initialised to ``init``: ``nn.PReLU(16)(x)``."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25) -> None:
        self.num_parameters = _positive_int(num_parameters, "PReLU: num_parameters")
        self.weight = _param(Tensor.full((num_parameters,), init))

    def forward(self, x: Tensor) -> Tensor:
        """``F.prelu(x, weight)``: ``act.forward(x)``."""
        return F.prelu(x, self.weight)

    def _settings(self) -> str:
        return f"num_parameters={self.num_parameters}"


# ---------------------------------------------------------------------------
# losses
# ---------------------------------------------------------------------------


class _Loss(Module):
    _buffer_names = ("weight", "pos_weight")
    _reductions = ("none", "mean", "sum")

    def __init__(self, reduction: str = "mean", size_average=None, reduce=None) -> None:
        name = type(self).__name__
        if size_average is not None or reduce is not None:
            raise ArgumentError(f"{name}: size_average and reduce are deprecated, use reduction=")
        if reduction not in self._reductions:
            raise ArgumentError(
                f"{name}: reduction must be one of {self._reductions}, got {reduction!r}"
            )
        self.reduction = reduction

    def _settings(self) -> str:
        return f"reduction={self.reduction!r}"


class CrossEntropyLoss(_Loss):
    """``F.cross_entropy`` of logits against class indices or probabilities:
    ``nn.CrossEntropyLoss(label_smoothing=0.1)(logits, labels)``."""

    def __init__(
        self,
        weight: Tensor | None = None,
        size_average=None,
        ignore_index: int = -100,
        reduce=None,
        reduction: str = "mean",
        label_smoothing: float = 0.0,
    ) -> None:
        super().__init__(reduction, size_average, reduce)
        if not 0 <= label_smoothing <= 1:
            raise ArgumentError(
                f"CrossEntropyLoss: label_smoothing must be in [0, 1], got {label_smoothing}"
            )
        self.weight, self.ignore_index, self.label_smoothing = weight, ignore_index, label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        """The loss: ``loss_fn.forward(logits, labels)``."""
        return F.cross_entropy(
            input, target, self.weight, self.ignore_index, self.reduction, self.label_smoothing
        )


class LinearCrossEntropyLoss(_Loss):
    """A linear layer (in_features to num_classes x out_features logits, no bias by
    default) and :class:`CrossEntropyLoss` in one, PyTorch's:
    ``nn.LinearCrossEntropyLoss(512, vocab)(hidden, labels)``."""

    def __init__(
        self,
        in_features: int,
        num_classes: int,
        *,
        out_features: tuple = (),
        bias: bool = False,
        reduction: str = "mean",
        weight: Tensor | None = None,
        ignore_index: int | None = None,
        label_smoothing: float = 0.0,
        options=None,
    ) -> None:
        super().__init__(reduction, None, None)
        if weight is not None and weight.shape != (num_classes,):
            raise ArgumentError(
                f"LinearCrossEntropyLoss: weight must be ({num_classes},), got {weight.shape}"
            )
        if not 0 <= label_smoothing <= 1:
            raise ArgumentError(
                f"LinearCrossEntropyLoss: label_smoothing must be in [0, 1], got {label_smoothing}"
            )
        self.num_classes, self.out_features = num_classes, tuple(out_features)
        self.weight, self.ignore_index, self.label_smoothing = weight, ignore_index, label_smoothing
        self.options = options
        self.linear = Linear(in_features, math.prod(self.out_features) * num_classes, bias=bias)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        """The loss of the logits of ``input``: ``loss_fn.forward(hidden, labels)``."""
        lin = self.linear
        w = lin.weight.reshape((self.num_classes, *self.out_features, lin.in_features))
        b = None if lin.bias is None else lin.bias.reshape((self.num_classes, *self.out_features))
        return F.linear_cross_entropy(
            input, w, target, linear_bias=b, weight=self.weight, reduction=self.reduction,
            ignore_index=self.ignore_index, label_smoothing=self.label_smoothing,
        )  # fmt: skip


class NLLLoss(_Loss):
    """``F.nll_loss`` of log-probabilities against class indices:
    ``nn.NLLLoss()(logp, labels)``."""

    def __init__(
        self,
        weight: Tensor | None = None,
        size_average=None,
        ignore_index: int = -100,
        reduce=None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(reduction, size_average, reduce)
        self.weight, self.ignore_index = weight, ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        """The loss: ``loss_fn.forward(logp, labels)``."""
        return F.nll_loss(input, target, self.weight, self.ignore_index, self.reduction)


class NLLLoss2d(NLLLoss):
    """PyTorch's deprecated alias of :class:`NLLLoss` (which takes (N, C, H, W)
    log-probabilities too); it warns, as PyTorch's: ``nn.NLLLoss2d()(logp, labels)``."""

    def __init__(
        self,
        weight: Tensor | None = None,
        size_average=None,
        ignore_index: int = -100,
        reduce=None,
        reduction: str = "mean",
    ) -> None:
        warnings.warn(
            "NLLLoss2d has been deprecated. Please use NLLLoss instead as a drop-in replacement",
            DeprecationWarning,
            stacklevel=2,
        )
        super().__init__(weight, size_average, ignore_index, reduce, reduction)


class CTCLoss(_Loss):
    """``F.ctc_loss``, connectionist temporal classification, of log-probabilities
    (T, N, C) against targets: ``nn.CTCLoss(blank=0)(logp, targets, in_lens, tgt_lens)``."""

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False):
        super().__init__(reduction)
        self.blank, self.zero_infinity = blank, zero_infinity

    def _settings(self) -> str:
        return f"blank={self.blank}, reduction={self.reduction!r}"

    def forward(self, log_probs: Tensor, targets: Tensor, input_lengths, target_lengths) -> Tensor:
        """The loss: ``loss_fn.forward(logp, targets, input_lengths, target_lengths)``."""
        return F.ctc_loss(
            log_probs,
            targets,
            input_lengths,
            target_lengths,
            self.blank,
            self.reduction,
            self.zero_infinity,
        )


class MSELoss(_Loss):
    """Mean squared error: ``nn.MSELoss()(pred, y)``."""

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(reduction, size_average, reduce)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        """The loss: ``loss_fn.forward(pred, y)``."""
        return F.mse_loss(input, target, self.reduction)


class L1Loss(_Loss):
    """Mean absolute error: ``nn.L1Loss()(pred, y)``."""

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(reduction, size_average, reduce)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        """The loss: ``loss_fn.forward(pred, y)``."""
        return F.l1_loss(input, target, self.reduction)


class BCELoss(_Loss):
    """Binary cross entropy of probabilities: ``nn.BCELoss()(p, y)``."""

    def __init__(
        self, weight: Tensor | None = None, size_average=None, reduce=None, reduction="mean"
    ) -> None:
        super().__init__(reduction, size_average, reduce)
        self.weight = weight

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        """The loss: ``loss_fn.forward(p, y)``."""
        return F.binary_cross_entropy(input, target, self.weight, self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross entropy of logits, computed stably:
    ``nn.BCEWithLogitsLoss(pos_weight=w)(z, y)``."""

    def __init__(
        self,
        weight: Tensor | None = None,
        size_average=None,
        reduce=None,
        reduction: str = "mean",
        pos_weight: Tensor | None = None,
    ) -> None:
        super().__init__(reduction, size_average, reduce)
        self.weight, self.pos_weight = weight, pos_weight

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        """The loss: ``loss_fn.forward(z, y)``."""
        return F.binary_cross_entropy_with_logits(
            input, target, self.weight, self.reduction, self.pos_weight
        )


class SmoothL1Loss(_Loss):
    """``F.smooth_l1_loss``: ``nn.SmoothL1Loss(beta=0.5)(pred, y)``."""

    def __init__(self, size_average=None, reduce=None, reduction="mean", beta: float = 1.0):
        super().__init__(reduction, size_average, reduce)
        if beta < 0:
            raise ArgumentError(f"SmoothL1Loss: beta must be >= 0, got {beta}")
        self.beta = beta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        """The loss: ``loss_fn.forward(pred, y)``."""
        return F.smooth_l1_loss(input, target, self.reduction, self.beta)


class HuberLoss(_Loss):
    """``F.huber_loss``: ``nn.HuberLoss(delta=2.0)(pred, y)``."""

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction)
        if delta <= 0:
            raise ArgumentError(f"HuberLoss: delta must be > 0, got {delta}")
        self.delta = delta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        """The loss: ``loss_fn.forward(pred, y)``."""
        return F.huber_loss(input, target, self.reduction, self.delta)


class KLDivLoss(_Loss):
    """``F.kl_div`` of log-probabilities ``input`` against ``target``:
    ``nn.KLDivLoss(reduction="batchmean")(logq, p)``."""

    _reductions = ("none", "mean", "sum", "batchmean")

    def __init__(
        self, size_average=None, reduce=None, reduction: str = "mean", log_target: bool = False
    ) -> None:
        super().__init__(reduction, size_average, reduce)
        self.log_target = log_target

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        """The loss: ``loss_fn.forward(logq, p)``."""
        return F.kl_div(input, target, self.reduction, self.log_target)


class MarginRankingLoss(_Loss):
    """``max(0, -y (x1 - x2) + margin)``: ``nn.MarginRankingLoss(0.5)(x1, x2, y)``."""

    def __init__(self, margin: float = 0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(reduction, size_average, reduce)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        """The loss: ``loss_fn.forward(x1, x2, y)``."""
        return F.margin_ranking_loss(input1, input2, target, self.margin, self.reduction)


class HingeEmbeddingLoss(_Loss):
    """``x`` where y is 1, ``max(0, margin - x)`` where y is -1:
    ``nn.HingeEmbeddingLoss()(d, y)``."""

    def __init__(self, margin: float = 1.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(reduction, size_average, reduce)
        self.margin = margin

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        """The loss: ``loss_fn.forward(d, y)``."""
        return F.hinge_embedding_loss(input, target, self.margin, self.reduction)


class CosineEmbeddingLoss(_Loss):
    """``1 - cos(x1, x2)`` where y is 1, ``max(0, cos - margin)`` where y is -1:
    ``nn.CosineEmbeddingLoss()(a, b, y)``."""

    def __init__(self, margin: float = 0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(reduction, size_average, reduce)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        """The loss: ``loss_fn.forward(a, b, y)``."""
        return F.cosine_embedding_loss(input1, input2, target, self.margin, self.reduction)


class SoftMarginLoss(_Loss):
    """``log(1 + exp(-y x))``: ``nn.SoftMarginLoss()(x, y)``."""

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(reduction, size_average, reduce)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        """The loss: ``loss_fn.forward(x, y)``."""
        return F.soft_margin_loss(input, target, self.reduction)


class MultiLabelSoftMarginLoss(_Loss):
    """The mean over classes of the binary logistic losses:
    ``nn.MultiLabelSoftMarginLoss()(logits, y)``."""

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean") -> None:
        super().__init__(reduction, size_average, reduce)
        self.weight = weight

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        """The loss: ``loss_fn.forward(logits, y)``."""
        return F.multilabel_soft_margin_loss(input, target, self.weight, self.reduction)


class PoissonNLLLoss(_Loss):
    """The negative log likelihood of a Poisson target:
    ``nn.PoissonNLLLoss()(log_rate, counts)``."""

    def __init__(self, log_input: bool = True, full: bool = False, size_average=None,
                 eps: float = 1e-8, reduce=None, reduction: str = "mean") -> None:  # fmt: skip
        super().__init__(reduction, size_average, reduce)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input: Tensor, target: Tensor) -> Tensor:
        """The loss: ``loss_fn.forward(log_rate, counts)``."""
        return F.poisson_nll_loss(
            log_input, target, self.log_input, self.full, eps=self.eps, reduction=self.reduction
        )


class GaussianNLLLoss(_Loss):
    """The negative log likelihood of a Gaussian target with predicted variances:
    ``nn.GaussianNLLLoss()(mean, y, var)``."""

    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean"):
        super().__init__(reduction)
        self.full, self.eps = full, eps

    def forward(self, input: Tensor, target: Tensor, var: Tensor) -> Tensor:  # noqa: A002
        """The loss: ``loss_fn.forward(mean, y, var)``."""
        return F.gaussian_nll_loss(input, target, var, self.full, self.eps, self.reduction)


class TripletMarginLoss(_Loss):
    """``max(d(a, p) - d(a, n) + margin, 0)``: ``nn.TripletMarginLoss()(a, pos, neg)``."""

    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6,
                 swap: bool = False, size_average=None, reduce=None,
                 reduction: str = "mean") -> None:  # fmt: skip
        super().__init__(reduction, size_average, reduce)
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        """The loss: ``loss_fn.forward(a, pos, neg)``."""
        return F.triplet_margin_loss(
            anchor, positive, negative, self.margin, self.p, self.eps, self.swap, self.reduction
        )


class Unfold(Module):
    """Sliding blocks of (N, C, H, W) as columns (``F.unfold``):
    ``nn.Unfold(kernel_size=3, padding=1)(x)``."""

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1) -> None:
        self.kernel_size, self.dilation, self.padding, self.stride = (
            kernel_size, dilation, padding, stride,
        )  # fmt: skip

    def forward(self, x: Tensor) -> Tensor:
        """``F.unfold`` with the module's geometry: ``unfold.forward(x)``."""
        return F.unfold(x, self.kernel_size, self.dilation, self.padding, self.stride)


class Fold(Module):
    """Columns of sliding blocks summed back into (N, C, H, W) (``F.fold``):
    ``nn.Fold((4, 5), 2)(cols)``."""

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1) -> None:
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, x: Tensor) -> Tensor:
        """``F.fold`` with the module's geometry: ``fold.forward(cols)``."""
        return F.fold(
            x, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride
        )


class Softmax2d(Module):
    """Softmax over the channels of (N, C, H, W) or (C, H, W): ``nn.Softmax2d()(x)``."""

    def forward(self, x: Tensor) -> Tensor:
        """The softmax over dim -3: ``sm.forward(x)``."""
        if x.ndim not in (3, 4):
            raise ArgumentError(
                f"Softmax2d: input must be (N, C, H, W) or (C, H, W), got {x.shape}"
            )
        return x.softmax(-3)


class Bilinear(Module):
    """``y = x1^T A x2 + b`` for each output feature: weight (out, in1, in2), both
    initialised uniform in ``+-1/sqrt(in1)`` as PyTorch: ``nn.Bilinear(4, 5, 3)(a, b)``."""

    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias=True):
        for v, what in ((in1_features, "in1_features"), (in2_features, "in2_features"),
                        (out_features, "out_features")):  # fmt: skip
            _positive_int(v, f"Bilinear: {what}")
        self.in1_features, self.in2_features = in1_features, in2_features
        self.out_features = out_features
        bound = 1 / math.sqrt(in1_features)
        shape = (out_features, in1_features, in2_features)
        self.weight = _param(Tensor.uniform(*shape, low=-bound, high=bound))
        self.bias = _param(Tensor.uniform(out_features, low=-bound, high=bound)) if bias else None

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        """The bilinear form of the last dims: ``bl.forward(a, b)``."""
        if input1.shape[-1:] != (self.in1_features,) or input2.shape[-1:] != (self.in2_features,):
            raise ArgumentError(
                f"Bilinear: inputs must end in {self.in1_features} and {self.in2_features} "
                f"features, got {input1.shape} and {input2.shape}"
            )
        return F.bilinear(input1, input2, self.weight, self.bias)

    def _settings(self) -> str:
        return f"{self.in1_features}, {self.in2_features}, {self.out_features}"


# ---------------------------------------------------------------------------
# more pooling, embedding bags, shuffles and losses
# ---------------------------------------------------------------------------


class _LPPool(Module):
    _nd = 2

    def __init__(self, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False):
        self.norm_type, self.kernel_size = norm_type, kernel_size
        self.stride, self.ceil_mode = stride, ceil_mode

    def forward(self, x: Tensor) -> Tensor:
        """The p-norm of each window: ``pool.forward(x)``."""
        return F._lp_pool(
            x, self.norm_type, self.kernel_size, self.stride, self.ceil_mode, self._nd,
            f"lp_pool{self._nd}d",
        )  # fmt: skip

    def _settings(self) -> str:
        return f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}"


class LPPool1d(_LPPool):
    """``F.lp_pool1d`` with fixed settings: ``nn.LPPool1d(2, 3, stride=2)(x)``."""

    _nd = 1


class LPPool2d(_LPPool):
    """``F.lp_pool2d`` with fixed settings: ``nn.LPPool2d(2, 2)(x)``."""


class LPPool3d(_LPPool):
    """``F.lp_pool3d`` with fixed settings: ``nn.LPPool3d(2, 2)(x)``."""

    _nd = 3


class EmbeddingBag(Module):
    """Sums, means or maxima of bags of embedding rows (``F.embedding_bag``), the
    table initialised standard normal (the ``padding_idx`` row zero):
    ``nn.EmbeddingBag(1000, 16, mode="sum")(ids, offsets)``."""

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        mode: str = "mean",
        sparse: bool = False,
        _weight: Tensor | None = None,
        include_last_offset: bool = False,
        padding_idx: int | None = None,
    ) -> None:
        name = "EmbeddingBag"
        self.num_embeddings = _positive_int(num_embeddings, f"{name}: num_embeddings")
        self.embedding_dim = _positive_int(embedding_dim, f"{name}: embedding_dim")
        if mode not in F._BAG_MODES:
            raise ArgumentError(f"{name}: mode must be one of {F._BAG_MODES}, got {mode!r}")
        if scale_grad_by_freq or sparse:
            raise NotImplementedError(f"{name}: scale_grad_by_freq and sparse are not supported")
        self.padding_idx = _padding_idx(padding_idx, num_embeddings, name)
        self.max_norm, self.norm_type, self.mode = max_norm, norm_type, mode
        self.include_last_offset = include_last_offset
        self.weight = _embedding_weight(
            num_embeddings, embedding_dim, self.padding_idx, _weight, False, name
        )

    def forward(
        self,
        input: Tensor,  # noqa: A002 - PyTorch's names
        offsets: Tensor | None = None,
        per_sample_weights: Tensor | None = None,
    ) -> Tensor:
        """The bags' reductions: ``bag.forward(ids, offsets)``."""
        return F.embedding_bag(
            input, self.weight, offsets, self.max_norm, self.norm_type, False, self.mode, False,
            per_sample_weights, self.include_last_offset, self.padding_idx,
        )  # fmt: skip

    def _settings(self) -> str:
        return f"{self.num_embeddings}, {self.embedding_dim}, mode={self.mode!r}"


class ChannelShuffle(Module):
    """``F.channel_shuffle``: ``nn.ChannelShuffle(2)(x)``."""

    def __init__(self, groups: int) -> None:
        self.groups = _positive_int(groups, "ChannelShuffle: groups")

    def forward(self, x: Tensor) -> Tensor:
        """The channels interleaved from the groups: ``shuffle.forward(x)``."""
        return F.channel_shuffle(x, self.groups)

    def _settings(self) -> str:
        return f"groups={self.groups}"


class RReLU(Module):
    """Randomized leaky relu: slopes drawn in ``[lower, upper]`` while training,
    their mean in ``eval()``: ``nn.RReLU(0.1, 0.3)(x)``."""

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False):
        if lower > upper:
            raise ArgumentError(f"RReLU: lower {lower} must be at most upper {upper}")
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, x: Tensor) -> Tensor:
        """``F.rrelu`` in the module's mode: ``act.forward(x)``."""
        return F.rrelu(x, self.lower, self.upper, self.training, self.inplace)

    def _settings(self) -> str:
        return f"lower={self.lower}, upper={self.upper}"


class UpsamplingNearest2d(Upsample):
    """Nearest-neighbour upsampling of (N, C, H, W):
    ``nn.UpsamplingNearest2d(scale_factor=2)(x)``."""

    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, "nearest")


class UpsamplingBilinear2d(Upsample):
    """Bilinear upsampling of (N, C, H, W) with ``align_corners=True``, as PyTorch:
    ``nn.UpsamplingBilinear2d(scale_factor=2)(x)``."""

    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, "bilinear", align_corners=True)


class MultiLabelMarginLoss(_Loss):
    """``F.multilabel_margin_loss``: ``nn.MultiLabelMarginLoss()(scores, labels)``."""

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(reduction, size_average, reduce)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        """The loss: ``loss_fn.forward(scores, labels)``."""
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class MultiMarginLoss(_Loss):
    """``F.multi_margin_loss``: ``nn.MultiMarginLoss(p=2, margin=0.5)(scores, labels)``."""

    def __init__(
        self,
        p: int = 1,
        margin: float = 1.0,
        weight: Tensor | None = None,
        size_average=None,
        reduce=None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(reduction, size_average, reduce)
        if p not in (1, 2):
            raise ArgumentError(f"MultiMarginLoss: p must be 1 or 2, got {p!r}")
        if weight is not None and weight.ndim != 1:
            raise ArgumentError(f"MultiMarginLoss: weight must be 1-d, got {weight.shape}")
        self.p, self.margin, self.weight = p, margin, weight

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        """The loss: ``loss_fn.forward(scores, labels)``."""
        return F.multi_margin_loss(input, target, self.p, self.margin, self.weight, self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """``F.triplet_margin_with_distance_loss``:
    ``nn.TripletMarginWithDistanceLoss(distance_function=nn.PairwiseDistance(p=1))(a, p, n)``."""

    def __init__(
        self,
        *,
        distance_function=None,
        margin: float = 1.0,
        swap: bool = False,
        reduction: str = "mean",
    ) -> None:
        super().__init__(reduction)
        if margin <= 0:
            raise ArgumentError(f"TripletMarginWithDistanceLoss: margin must be > 0, got {margin}")
        self.distance_function, self.margin, self.swap = distance_function, margin, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        """The loss: ``loss_fn.forward(a, pos, neg)``."""
        return F.triplet_margin_with_distance_loss(
            anchor, positive, negative, distance_function=self.distance_function,
            margin=self.margin, swap=self.swap, reduction=self.reduction,
        )  # fmt: skip


# ---------------------------------------------------------------------------
# adaptive softmax
# ---------------------------------------------------------------------------


def _projection(in_features: int, out_features: int) -> Linear:
    """``Linear(in_features, out_features, bias=False)``, either size possibly 0."""
    lin = Linear.__new__(Linear)
    lin.in_features, lin.out_features = in_features, out_features
    bound = 1 / math.sqrt(in_features) if in_features else 0.0
    lin.weight = _param(Tensor.uniform(out_features, in_features, low=-bound, high=bound))
    lin.bias = None
    return lin


class _ASMoutput(NamedTuple):
    """``(output, loss)`` of :class:`AdaptiveLogSoftmaxWithLoss`: the target's
    log-probability per sample and their negated mean: ``res.loss.backward()``."""

    output: Tensor
    loss: Tensor


class AdaptiveLogSoftmaxWithLoss(Module):
    """Efficient softmax approximation (Grave et al.): the ``cutoffs[0]`` most
    frequent classes and one entry per cluster in a ``head`` Linear, each
    cluster of the others (split at ``cutoffs``) in a ``tail`` of two Linears
    whose hidden size shrinks by ``div_value`` a cluster, with PyTorch's
    parameter names and shapes (``head.weight``, ``tail.0.0.weight``...):
    ``out, loss = nn.AdaptiveLogSoftmaxWithLoss(64, 1000, [100, 500])(x, labels)``.
    Every cluster's tail is computed for the whole batch (lazily, no
    data-dependent row selection), masked to the rows whose target is in it."""

    def __init__(
        self,
        in_features: int,
        n_classes: int,
        cutoffs,
        div_value: float = 4.0,
        head_bias: bool = False,
        device=None,
        dtype=None,
    ) -> None:
        name = "AdaptiveLogSoftmaxWithLoss"
        _positive_int(in_features, f"{name}: in_features")
        _positive_int(n_classes, f"{name}: n_classes")
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ArgumentError(f"{name}: cutoffs should be a sequence of length larger than 0")
        if (
            not all(isinstance(c, (int, np.integer)) and not isinstance(c, bool) for c in cutoffs)
            or cutoffs != sorted(cutoffs)
            or min(cutoffs) <= 0
            or max(cutoffs) > n_classes - 1
            or len(set(cutoffs)) != len(cutoffs)
        ):
            raise ArgumentError(
                f"{name}: cutoffs should be a sequence of unique, positive integers sorted in an "
                f"increasing order, where each value is between 1 and n_classes-1, got {cutoffs}"
            )
        self.in_features, self.n_classes = in_features, n_classes
        self.cutoffs = [int(c) for c in cutoffs] + [n_classes]
        self.div_value, self.head_bias = div_value, bool(head_bias)
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=self.head_bias)
        if isinstance(div_value, bool) or not isinstance(div_value, (int, float)) or div_value <= 0:
            raise ArgumentError(f"{name}: div_value must be a positive number, got {div_value!r}")
        tails = []
        for i in range(self.n_clusters):
            # (PyTorch's sizes: a hidden size that rounds to 0 is kept, the cluster then uniform)
            hsz = int(in_features // (div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            tails.append(Sequential(_projection(in_features, hsz), _projection(hsz, osz)))
        self.tail = ModuleList(tails)
        if dtype is not None or device is not None:
            for _, m in self.named_modules():
                for k, v in list(vars(m).items()):
                    if isinstance(v, Tensor):
                        setattr(m, k, _param(v.cast(dtype or v.dtype).to(device or v.device)))

    def reset_parameters(self) -> None:
        """Draw every weight again (PyTorch's Linear initialisation)."""
        from mlfuse.nn import init

        for p in self.parameters():
            fan_in = p.shape[-1] if p.ndim > 1 else self.in_features
            if p.numel():
                init.uniform_(p, -1 / math.sqrt(fan_in), 1 / math.sqrt(fan_in))

    def _input(self, x, what: str, ndims=(1, 2)) -> Tensor:
        name = "AdaptiveLogSoftmaxWithLoss"
        if not isinstance(x, Tensor):
            raise TypeError(f"{name}: {what} must be a Tensor, got {type(x).__name__}")
        if x.ndim not in ndims or x.shape[-1] != self.in_features:
            want = " or ".join(("(in_features,)", "(N, in_features)")[d - 1] for d in ndims)
            raise ArgumentError(
                f"{name}: {what} must be {want} with in_features={self.in_features}, got {x.shape}"
            )
        return x

    def forward(self, input: Tensor, target: Tensor) -> _ASMoutput:  # noqa: A002
        """``(output, loss)``: each sample's log-probability of its target (N,)
        (or () unbatched) and the mean negative log-likelihood:
        ``res = asm.forward(x, labels); res.loss.backward()``."""
        name = "AdaptiveLogSoftmaxWithLoss"
        if not isinstance(target, Tensor):
            raise TypeError(f"{name}: target must be a Tensor, got {type(target).__name__}")
        if target.ndim == 1:
            self._input(input, "a 1-d target's input", (2,))
            if input.shape[0] != target.shape[0]:
                raise ArgumentError(
                    f"{name}: input {input.shape} and target {target.shape} should have the same "
                    f"size in the batch dimension"
                )
        elif target.ndim == 0:
            self._input(input, "a 0-d target's input", (1,))
        else:
            raise ArgumentError(
                f"{name}: 0D or 1D target tensor expected, multi-target not supported, got "
                f"{target.shape}"
            )
        if target.dtype.is_float or target.dtype.is_bool:
            raise TypeError(f"{name}: target must hold class indices, got {target.dtype.name}")
        batched = target.ndim > 0
        x = input if batched else input.unsqueeze(0)
        t = (target if batched else target.unsqueeze(0)).cast(dtypes.int64)
        if t.node.realized and t.numel():  # a realized target is checked (a lazy one is not)
            vals = t.numpy()
            if vals.min() < 0 or vals.max() >= self.n_classes:
                raise ArgumentError(
                    f"{name}: Target values should be in [0, {self.n_classes - 1}], but values "
                    f"in range [{vals.min()}, {vals.max()}] were found."
                )
        head_index, output = t, None
        for i in range(self.n_clusters):
            low, high = self.cutoffs[i], self.cutoffs[i + 1]
            inside = (t >= low) & (t < high)
            head_index = inside.where(self.shortlist_size + i, head_index)
            logp = self.tail[i](x).log_softmax(1)
            local = logp.gather(1, inside.where(t - low, 0).unsqueeze(1)).squeeze(1)
            local = inside.where(local, 0.0)
            output = local if output is None else output + local
        head_logp = self.head(x).log_softmax(1)
        picked = head_logp.gather(1, head_index.unsqueeze(1)).squeeze(1)
        output = picked if output is None else output + picked
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _full_log_prob(self, x: Tensor, head_output: Tensor) -> Tensor:
        head_logp = head_output.log_softmax(1)
        parts = [head_logp[:, : self.shortlist_size]]
        for i in range(self.n_clusters):
            at = self.shortlist_size + i
            parts.append(self.tail[i](x).log_softmax(1) + head_logp[:, at : at + 1])
        return parts[0].cat(*parts[1:], dim=1)

    def log_prob(self, input: Tensor) -> Tensor:  # noqa: A002
        """The log-probability of every class, (N, n_classes) (or (n_classes,)
        unbatched): ``asm.log_prob(x).exp().sum(1)`` is ones."""
        x = self._input(input, "input")
        xb = x if x.ndim == 2 else x.unsqueeze(0)
        out = self._full_log_prob(xb, self.head(xb))
        return out if x.ndim == 2 else out.squeeze(0)

    def predict(self, input: Tensor) -> Tensor:  # noqa: A002
        """The most likely class of each sample, as PyTorch picks it: the head's
        argmax when it is a shortlist class, else the argmax of the full
        log-probabilities: ``asm.predict(x)``."""
        x = self._input(input, "input")
        xb = x if x.ndim == 2 else x.unsqueeze(0)
        head_output = self.head(xb)
        best = head_output.argmax(1)
        full = self._full_log_prob(xb, head_output).argmax(1)
        out = (best >= self.shortlist_size).where(full, best)
        return out if x.ndim == 2 else out.squeeze(0)

    def _settings(self) -> str:
        return f"{self.in_features}, {self.n_classes}, cutoffs={self.cutoffs[:-1]}"


# ---------------------------------------------------------------------------
# lazy modules: the input size inferred at the first call
# ---------------------------------------------------------------------------


class _LazyModule(Module):
    """Holds the settings of the module it becomes (``cls_to_become``) at the
    first call, which builds that module's parameters (PyTorch's initialization,
    drawn then) for the input's size; the object is then that module. It has no
    parameters before: make the optimizer after a first call."""

    cls_to_become: type[Module] = Module
    _size_name = "in_features"

    def __init__(self, *args) -> None:
        self._lazy_args = args
        setattr(self, self._size_name, 0)

    def _infer(self, x: Tensor) -> int:
        raise NotImplementedError

    def has_uninitialized_params(self) -> bool:
        """True until the first call has built the parameters."""
        return True

    def _placeholders(self, params, buffers=()) -> None:
        """The attributes the first call builds, held meanwhile as
        :class:`UninitializedParameter` / :class:`UninitializedBuffer` (as PyTorch)."""
        for k in params:
            setattr(self, k, UninitializedParameter())
        for k in buffers:
            setattr(self, k, UninitializedBuffer())

    def initialize_parameters(self, x: Tensor) -> None:
        """Build the parameters for the input ``x`` and become the regular module."""
        if not isinstance(x, Tensor):
            raise TypeError(f"{type(self).__name__}: input must be a Tensor, got {type(x)}")
        size = self._infer(x)
        target = self.cls_to_become
        fresh = target.__new__(target)
        target.__init__(fresh, size, *self._lazy_args)  # type: ignore[misc]
        training = self.training
        hooks = {  # kept, as PyTorch
            k: v for k, v in vars(self).items() if k in _HOOK_DICTS or k == "_has_call_hooks"
        }
        vars(self).clear()
        vars(self).update(vars(fresh))
        vars(self).update(hooks)
        self.__class__ = target
        self.training = training

    def forward(self, x: Tensor, *args, **kwargs):
        """The first call: infer the size, build the parameters, run the module."""
        self.initialize_parameters(x)
        return self.forward(x, *args, **kwargs)

    def _settings(self) -> str:
        return f"{self._size_name}=0 (inferred at the first call)"


class LazyLinear(_LazyModule):
    """``nn.Linear`` with ``in_features`` taken from the first input's last dim:
    ``nn.LazyLinear(8)(x)``."""

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True) -> None:
        _positive_int(out_features, "LazyLinear: out_features")
        super().__init__(out_features, bias)
        self.out_features = out_features
        self._placeholders(("weight", "bias") if bias else ("weight",))
        if not bias:
            self.bias = None

    def _infer(self, x: Tensor) -> int:
        if x.ndim < 1:
            raise ArgumentError(f"LazyLinear: input must have a feature dim, got {x.shape}")
        return x.shape[-1]


class _LazyConv(_LazyModule):
    _size_name = "in_channels"
    _nd = 2

    def __init__(
        self,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
    ) -> None:
        name = type(self).__name__
        _positive_int(out_channels, f"{name}: out_channels")
        _positive_int(groups, f"{name}: groups")
        F._tuple(kernel_size, self._nd, f"{name}: kernel_size")
        if padding_mode not in _PAD_MODES:
            raise ArgumentError(
                f"{name}: padding_mode must be one of {_PAD_MODES}, got {padding_mode!r}"
            )
        super().__init__(out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode)  # fmt: skip
        self.out_channels = out_channels
        self._placeholders(("weight", "bias") if bias else ("weight",))
        if not bias:
            self.bias = None

    def _infer(self, x: Tensor) -> int:
        nd = self._nd
        if x.ndim not in (nd + 1, nd + 2):
            sp = F._SPATIAL[nd]
            raise ArgumentError(
                f"{type(self).__name__}: input must be (N, C, {sp}) or (C, {sp}), got {x.shape}"
            )
        return x.shape[0] if x.ndim == nd + 1 else x.shape[1]


class _LazyConvTranspose(_LazyConv):
    def __init__(
        self,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        output_padding=0,
        groups: int = 1,
        bias: bool = True,
        dilation=1,
        padding_mode: str = "zeros",
    ) -> None:
        super().__init__(out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode)  # fmt: skip
        # ConvTranspose's argument order
        self._lazy_args = (
            out_channels, kernel_size, stride, padding, output_padding, groups, bias, dilation,
            padding_mode,
        )  # fmt: skip


class LazyConv1d(_LazyConv):
    """``nn.Conv1d`` with ``in_channels`` taken from the first input:
    ``nn.LazyConv1d(16, 3)(x)``."""

    cls_to_become = Conv1d
    _nd = 1


class LazyConv2d(_LazyConv):
    """``nn.Conv2d`` with ``in_channels`` taken from the first input:
    ``nn.LazyConv2d(16, 3, padding=1)(x)``."""

    cls_to_become = Conv2d


class LazyConv3d(_LazyConv):
    """``nn.Conv3d`` with ``in_channels`` taken from the first input:
    ``nn.LazyConv3d(8, 3)(x)``."""

    cls_to_become = Conv3d
    _nd = 3


class LazyConvTranspose1d(_LazyConvTranspose):
    """``nn.ConvTranspose1d`` with ``in_channels`` taken from the first input:
    ``nn.LazyConvTranspose1d(8, 4, stride=2)(x)``."""

    cls_to_become = ConvTranspose1d
    _nd = 1


class LazyConvTranspose2d(_LazyConvTranspose):
    """``nn.ConvTranspose2d`` with ``in_channels`` taken from the first input:
    ``nn.LazyConvTranspose2d(8, 4, stride=2, padding=1)(x)``."""

    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTranspose):
    """``nn.ConvTranspose3d`` with ``in_channels`` taken from the first input:
    ``nn.LazyConvTranspose3d(4, 2, stride=2)(x)``."""

    cls_to_become = ConvTranspose3d
    _nd = 3


class _LazyNorm(_LazyModule):
    _size_name = "num_features"
    _nd = 1

    def _norm_placeholders(self, affine: bool, track_running_stats: bool) -> None:
        self._placeholders(
            ("weight", "bias") if affine else (),
            ("running_mean", "running_var") if track_running_stats else (),
        )
        for k in (() if affine else ("weight", "bias")) + (
            () if track_running_stats else ("running_mean", "running_var")
        ):
            setattr(self, k, None)

    def _infer(self, x: Tensor) -> int:
        if x.ndim < 2:
            raise ArgumentError(f"{type(self).__name__}: input must be (N, C, ...), got {x.shape}")
        return x.shape[1]


class _LazyBatchNorm(_LazyNorm):
    def __init__(
        self,
        eps: float = 1e-5,
        momentum: float = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
    ) -> None:
        _check_momentum(momentum, type(self).__name__)
        super().__init__(eps, momentum, affine, track_running_stats)
        self._norm_placeholders(affine, track_running_stats)


class LazyBatchNorm1d(_LazyBatchNorm):
    """``nn.BatchNorm1d`` with ``num_features`` taken from the first input's dim 1:
    ``nn.LazyBatchNorm1d()(x)``."""

    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyBatchNorm):
    """``nn.BatchNorm2d`` with ``num_features`` taken from the first input's dim 1:
    ``nn.LazyBatchNorm2d()(x)``."""

    cls_to_become = BatchNorm2d


class LazyBatchNorm3d(_LazyBatchNorm):
    """``nn.BatchNorm3d`` with ``num_features`` taken from the first input's dim 1:
    ``nn.LazyBatchNorm3d()(x)``."""

    cls_to_become = BatchNorm3d


class _LazyInstanceNorm(_LazyNorm):
    def __init__(
        self,
        eps: float = 1e-5,
        momentum: float = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
    ) -> None:  # PyTorch's lazy defaults: affine, with running statistics
        super().__init__(eps, momentum, affine, track_running_stats)
        self._norm_placeholders(affine, track_running_stats)

    def _infer(self, x: Tensor) -> int:
        nd = self._nd
        if x.ndim not in (nd + 1, nd + 2):
            sp = F._SPATIAL[nd]
            raise ArgumentError(
                f"{type(self).__name__}: input must be (N, C, {sp}) or (C, {sp}), got {x.shape}"
            )
        return x.shape[0] if x.ndim == nd + 1 else x.shape[1]  # the channels


class LazyInstanceNorm1d(_LazyInstanceNorm):
    """``nn.InstanceNorm1d`` with ``num_features`` taken from the first input's
    channels: ``nn.LazyInstanceNorm1d(affine=True)(x)``."""

    cls_to_become = InstanceNorm1d


class LazyInstanceNorm2d(_LazyInstanceNorm):
    """``nn.InstanceNorm2d`` with ``num_features`` taken from the first input's
    channels: ``nn.LazyInstanceNorm2d(affine=True)(x)``."""

    cls_to_become = InstanceNorm2d
    _nd = 2


class LazyInstanceNorm3d(_LazyInstanceNorm):
    """``nn.InstanceNorm3d`` with ``num_features`` taken from the first input's
    channels: ``nn.LazyInstanceNorm3d()(x)``."""

    cls_to_become = InstanceNorm3d
    _nd = 3


__all__ = [
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "AdaptiveAvgPool3d",
    "AdaptiveLogSoftmaxWithLoss",
    "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d",
    "AdaptiveMaxPool3d",
    "AlphaDropout",
    "AvgPool1d",
    "AvgPool2d",
    "AvgPool3d",
    "BCELoss",
    "BCEWithLogitsLoss",
    "BatchNorm",
    "BatchNorm1d",
    "BatchNorm2d",
    "BatchNorm3d",
    "Bilinear",
    "Buffer",
    "CELU",
    "CTCLoss",
    "ChannelShuffle",
    "CircularPad1d",
    "CircularPad2d",
    "CircularPad3d",
    "ConstantPad1d",
    "ConstantPad2d",
    "ConstantPad3d",
    "Container",
    "Conv1d",
    "Conv2d",
    "Conv3d",
    "ConvTranspose1d",
    "ConvTranspose2d",
    "ConvTranspose3d",
    "CosineEmbeddingLoss",
    "CosineSimilarity",
    "CrossEntropyLoss",
    "CrossMapLRN2d",
    "Dropout",
    "Dropout1d",
    "Dropout2d",
    "Dropout3d",
    "ELU",
    "Embedding",
    "EmbeddingBag",
    "FeatureAlphaDropout",
    "Flatten",
    "Fold",
    "FractionalMaxPool2d",
    "FractionalMaxPool3d",
    "GELU",
    "GLU",
    "GaussianNLLLoss",
    "GroupNorm",
    "Hardshrink",
    "Hardsigmoid",
    "Hardswish",
    "Hardtanh",
    "HingeEmbeddingLoss",
    "HuberLoss",
    "Identity",
    "InstanceNorm",
    "InstanceNorm1d",
    "InstanceNorm2d",
    "InstanceNorm3d",
    "KLDivLoss",
    "L1Loss",
    "LPPool1d",
    "LPPool2d",
    "LPPool3d",
    "LayerNorm",
    "LayerNorm2d",
    "LazyBatchNorm1d",
    "LazyBatchNorm2d",
    "LazyBatchNorm3d",
    "LazyConv1d",
    "LazyConv2d",
    "LazyConv3d",
    "LazyConvTranspose1d",
    "LazyConvTranspose2d",
    "LazyConvTranspose3d",
    "LazyInstanceNorm1d",
    "LazyInstanceNorm2d",
    "LazyInstanceNorm3d",
    "LazyLinear",
    "LeakyReLU",
    "Linear",
    "LinearCrossEntropyLoss",
    "LocalResponseNorm",
    "LogSigmoid",
    "LogSoftmax",
    "MSELoss",
    "MarginRankingLoss",
    "MaxPool1d",
    "MaxPool2d",
    "MaxPool3d",
    "MaxUnpool1d",
    "MaxUnpool2d",
    "MaxUnpool3d",
    "Mish",
    "Module",
    "ModuleDict",
    "ModuleList",
    "MultiLabelMarginLoss",
    "MultiLabelSoftMarginLoss",
    "MultiMarginLoss",
    "NLLLoss",
    "NLLLoss2d",
    "PReLU",
    "PairwiseDistance",
    "Parameter",
    "ParameterDict",
    "ParameterList",
    "PixelShuffle",
    "PixelUnshuffle",
    "PoissonNLLLoss",
    "RMSNorm",
    "RReLU",
    "ReLU",
    "ReLU6",
    "ReflectionPad1d",
    "ReflectionPad2d",
    "ReflectionPad3d",
    "ReplicationPad1d",
    "ReplicationPad2d",
    "ReplicationPad3d",
    "SELU",
    "Sequential",
    "SiLU",
    "Sigmoid",
    "SmoothL1Loss",
    "SoftMarginLoss",
    "Softmax",
    "Softmax2d",
    "Softmin",
    "Softplus",
    "Softshrink",
    "Softsign",
    "SyncBatchNorm",
    "Tanh",
    "Tanhshrink",
    "Threshold",
    "TripletMarginLoss",
    "TripletMarginWithDistanceLoss",
    "Unflatten",
    "Unfold",
    "UninitializedBuffer",
    "UninitializedParameter",
    "Upsample",
    "UpsamplingBilinear2d",
    "UpsamplingNearest2d",
    "ZeroPad1d",
    "ZeroPad2d",
    "ZeroPad3d",
]
