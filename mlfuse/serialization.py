"""``torch.save``/``torch.load`` and ``torch.serialization``'s allowlist.

Files are pickles in which tensors are stored as their values (a numpy array,
the dtype's name, the device and ``requires_grad``). ``load`` with
``weights_only=True`` (the default, as PyTorch's since 2.6) unpickles only
containers, numbers, strings, numpy arrays and tensors: a file that names any
other global (a class, a function) is refused with an error naming it, since
unpickling can run code. Trusted files load with ``weights_only=False``; a
class the file needs can be allowed with :func:`add_safe_globals` or, for one
load, inside ``with safe_globals([...]):``::

    mlfuse.save({"model": model.state_dict(), "step": 100}, "ckpt.pt")
    ckpt = mlfuse.load("ckpt.pt", map_location="cpu")
"""

from __future__ import annotations

import contextlib
import importlib
import io
import pickle
import pickletools

__all__ = [
    "save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals",
    "safe_globals", "get_unsafe_globals_in_checkpoint",
]  # fmt: skip

# what a checkpoint of tensors, state dicts and optimizer states pickles
_ALLOWED = frozenset(
    {
        "collections.OrderedDict", "collections.defaultdict", "builtins.set",
        "builtins.frozenset", "builtins.complex", "builtins.slice", "builtins.range",
        "builtins.bytearray", "builtins.int", "builtins.float", "builtins.bool",
        "builtins.str", "builtins.tuple", "builtins.list", "builtins.dict",
        "numpy.ndarray", "numpy.dtype", "numpy._core.multiarray._reconstruct",
        "numpy.core.multiarray._reconstruct", "numpy._core.multiarray.scalar",
        "numpy.core.multiarray.scalar", "mlfuse.tensor._unpickle",
        "mlfuse.complex_tensors._unpickle", "mlfuse.dtypes.DType",
    }
)  # fmt: skip
_safe: list = []


def _name(obj) -> str:
    return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', repr(obj))}"


def add_safe_globals(safe_globals: list) -> None:
    """Allow these classes or functions in ``weights_only`` loads (each an object,
    or an ``(object, "module.name")`` pair for one saved under another name):
    ``mlfuse.serialization.add_safe_globals([MyConfig])``."""
    if not isinstance(safe_globals, (list, tuple)):
        raise TypeError(f"add_safe_globals expects a list, got {type(safe_globals).__name__}")
    for g in safe_globals:
        if isinstance(g, tuple) and (len(g) != 2 or not isinstance(g[1], str)):
            raise TypeError(f"add_safe_globals: expected (object, 'module.name'), got {g!r}")
        _safe.append(g)


def get_safe_globals() -> list:
    """The objects :func:`add_safe_globals` allowed."""
    return list(_safe)


def clear_safe_globals() -> None:
    """Forget every object :func:`add_safe_globals` allowed."""
    _safe.clear()


@contextlib.contextmanager
def safe_globals(safe_globals: list):
    """Allow these objects for the loads inside the block only:
    ``with mlfuse.serialization.safe_globals([MyConfig]): mlfuse.load(f)``."""
    before = list(_safe)
    add_safe_globals(safe_globals)
    try:
        yield
    finally:
        _safe[:] = before


def _allowed(module: str, name: str):
    """The object ``module.name`` when a weights-only load may build it, else None."""
    key = f"{module}.{name}"
    for g in _safe:
        obj, saved = g if isinstance(g, tuple) else (g, _name(g))
        if saved == key:
            return obj
    if key in _ALLOWED:
        obj = importlib.import_module(module)
        for part in name.split("."):
            obj = getattr(obj, part)
        return obj
    return None


class _Unpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str):
        obj = _allowed(module, name)
        if obj is None:
            raise pickle.UnpicklingError(
                f"Weights only load failed: the file needs {module}.{name}, which is not "
                "allowed in a weights_only load (unpickling it could run code). If you "
                "trust the file, load it with weights_only=False, or allow it with "
                f"mlfuse.serialization.add_safe_globals([{name}])"
            )
        return obj


def get_unsafe_globals_in_checkpoint(f) -> list[str]:
    """The globals a file names that a ``weights_only`` load would refuse, without
    loading it: ``get_unsafe_globals_in_checkpoint("ckpt.pt")``."""
    data = _read(f)
    found, strings = [], []
    for op, arg, _ in pickletools.genops(data):
        if op.name in ("SHORT_BINUNICODE", "BINUNICODE", "UNICODE", "BINUNICODE8"):
            strings.append(arg)
        elif op.name == "GLOBAL":
            found.append(arg.replace(" ", "."))
        elif op.name == "STACK_GLOBAL" and len(strings) >= 2:
            found.append(f"{strings[-2]}.{strings[-1]}")
    return sorted({g for g in found if _allowed(*g.rsplit(".", 1)) is None})


def _read(f) -> bytes:
    if hasattr(f, "read"):
        return f.read()
    with open(f, "rb") as fh:
        return fh.read()


def save(obj, f) -> None:
    """Pickle ``obj`` (tensors, state dicts, lists of them...) to a path or an open
    binary file; tensors are stored as their values: ``mlfuse.save(model.state_dict(),
    "model.pt")``."""
    if hasattr(f, "write"):
        pickle.dump(obj, f)
        return
    with open(f, "wb") as fh:
        pickle.dump(obj, fh)


def load(f, map_location=None, weights_only: bool = True, **kwargs):
    """Read what :func:`save` wrote (tensors come back on ``map_location``, a device
    name, when given); ``weights_only`` (the default) refuses files that name
    other globals than tensors and containers (see the module's documentation):
    ``model.load_state_dict(mlfuse.load("model.pt"))``."""
    data = _read(f)
    if weights_only:
        obj = _Unpickler(io.BytesIO(data)).load()
    else:
        obj = pickle.loads(data)  # noqa: S301 - the caller trusts the file
    if map_location is not None:
        obj = _moved(obj, str(map_location))
    return obj


def _moved(obj, device: str):
    from mlfuse.tensor import Tensor

    if isinstance(obj, Tensor):
        return obj.to(device)
    if isinstance(obj, dict):
        return type(obj)((k, _moved(v, device)) for k, v in obj.items())
    if isinstance(obj, (list, tuple)):
        return type(obj)(_moved(v, device) for v in obj)
    return obj
