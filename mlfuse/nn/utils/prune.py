"""``torch.nn.utils.prune``: zero out entries or whole channels of a parameter
with a mask. Pruning the parameter ``name`` of a module moves it to the parameter
``name + "_orig"``, adds the buffer ``name + "_mask"`` (PyTorch's ``state_dict``
keys) and makes ``module.<name>`` the plain tensor ``orig * mask``, recomputed by
a forward pre-hook before every forward; gradients reach ``<name>_orig`` masked.
Pruning the same parameter again combines the masks (a :class:`PruningContainer`):
the new ``amount`` applies to the entries (or channels) still unpruned.
:func:`remove` makes the pruning permanent::

    prune.l1_unstructured(layer, "weight", amount=0.3)   # the 30% smallest |w|
    prune.ln_structured(layer, "weight", amount=2, n=2, dim=0)  # 2 rows more
    prune.remove(layer, "weight")  # layer.weight: a plain parameter with zeros

The masks are computed on the host (numpy). The random methods draw from
mlfuse's generator (``mlfuse.manual_seed``): their masks differ from PyTorch's,
their counts do not. The magnitude methods pick what PyTorch's CPU ``topk``
picks, ties included (an emulation of its selection; a tie at the cut is the
only case where the choice is not unique). ``LnStructured`` computes the norms
in float64, so channels whose norms differ only by float32 rounding may be
ordered otherwise than PyTorch orders them.
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable

import numpy as np

from mlfuse.autograd import no_grad
from mlfuse.errors import ArgumentError
from mlfuse.nn.modules import Module
from mlfuse.tensor import Tensor

__all__ = [
    "BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured",
    "L1Unstructured", "RandomStructured", "LnStructured", "CustomFromMask", "identity",
    "random_unstructured", "l1_unstructured", "random_structured", "ln_structured",
    "global_unstructured", "custom_from_mask", "remove", "is_pruned",
]  # fmt: skip


# ---------------------------------------------------------------------------
# host-side helpers
# ---------------------------------------------------------------------------


def _host(t) -> np.ndarray:
    """The values of ``t`` (a Tensor or anything numpy takes) as a numpy array."""
    if isinstance(t, Tensor):
        return t.detach().numpy()
    return np.asarray(t)


def _wrap(arr: np.ndarray, like) -> Tensor:
    """``arr`` as a Tensor with the dtype and device of ``like``."""
    if isinstance(like, Tensor):
        return Tensor(np.ascontiguousarray(arr), like.dtype, like.device)
    return Tensor(np.ascontiguousarray(arr))


def _shape(t) -> tuple:
    return tuple(t.shape) if hasattr(t, "shape") else np.shape(t)


def _pre_hooks(module: Module) -> dict:
    """The module's forward pre-hooks, without making the registry (reading
    ``module._forward_pre_hooks`` makes one and turns on the hooked call path)."""
    return module.__dict__.get("_forward_pre_hooks") or {}


def _rand(shape: tuple) -> np.ndarray:
    """Uniform [0, 1) values drawn from mlfuse's global generator."""
    return Tensor.rand(*shape, device="cpu").numpy().reshape(shape)


# ---------------------------------------------------------------------------
# PyTorch's CPU topk selection (which k entries it returns when values tie)
# ---------------------------------------------------------------------------
#
# ATen's CPU topk puts (value, index) pairs in a vector and runs
# std::partial_sort (k * 64 <= n) or std::nth_element on it with a comparator
# that looks at the values only (NaN above everything); the first k pairs are the
# result. When values tie at the cut, which of them come first depends on the
# moves of those algorithms, so they are replayed here on integer keys (the
# comparator is ``a < b`` on the keys: the ranks, negated for ``largest``).


def _push_heap(q: list, base: int, hole: int, top: int, value) -> None:
    parent = (hole - 1) // 2
    while hole > top and q[base + parent][0] < value[0]:
        q[base + hole] = q[base + parent]
        hole = parent
        parent = (hole - 1) // 2
    q[base + hole] = value


def _adjust_heap(q: list, base: int, hole: int, length: int, value) -> None:
    top = second = hole
    while second < (length - 1) // 2:
        second = 2 * (second + 1)
        if q[base + second][0] < q[base + second - 1][0]:
            second -= 1
        q[base + hole] = q[base + second]
        hole = second
    if (length & 1) == 0 and second == (length - 2) // 2:
        second = 2 * (second + 1)
        q[base + hole] = q[base + second - 1]
        hole = second - 1
    _push_heap(q, base, hole, top, value)


def _heap_select(q: list, first: int, middle: int, last: int) -> None:
    length = middle - first
    if length >= 2:  # make_heap
        parent = (length - 2) // 2
        while True:
            _adjust_heap(q, first, parent, length, q[first + parent])
            if parent == 0:
                break
            parent -= 1
    for i in range(middle, last):
        if q[i][0] < q[first][0]:  # pop the heap's top into i, the new value in
            value = q[i]
            q[i] = q[first]
            _adjust_heap(q, first, 0, length, value)


def _insertion_sort(q: list, first: int, last: int) -> None:
    for i in range(first + 1, last):
        value = q[i]
        if value[0] < q[first][0]:
            q[first + 1 : i + 1] = q[first:i]
            q[first] = value
        else:
            j = i
            while value[0] < q[j - 1][0]:
                q[j] = q[j - 1]
                j -= 1
            q[j] = value


def _nth_element(q: list, nth: int) -> None:
    """libstdc++'s introselect."""
    first, last = 0, len(q)
    depth = 2 * (last.bit_length() - 1)
    while last - first > 3:
        if depth == 0:
            _heap_select(q, first, nth + 1, last)
            q[first], q[nth] = q[nth], q[first]
            return
        depth -= 1
        # the median of (first + 1, mid, last - 1) moved to first is the pivot
        a, b, c = first + 1, first + (last - first) // 2, last - 1
        ka, kb, kc = q[a][0], q[b][0], q[c][0]
        if ka < kb:
            m = b if kb < kc else (c if ka < kc else a)
        else:
            m = a if ka < kc else (c if kb < kc else b)
        q[first], q[m] = q[m], q[first]
        pivot = q[first][0]
        lo, hi = first + 1, last
        while True:  # the unguarded partition
            while q[lo][0] < pivot:
                lo += 1
            hi -= 1
            while pivot < q[hi][0]:
                hi -= 1
            if not lo < hi:
                break
            q[lo], q[hi] = q[hi], q[lo]
            lo += 1
        if lo <= nth:
            first = lo
        else:
            last = lo
    _insertion_sort(q, first, last)


def _topk_indices(values, k: int, largest: bool) -> np.ndarray:
    """The flat indices of the ``k`` largest (or smallest) values, NaN above all,
    the ones PyTorch's CPU ``torch.topk`` returns (as a set)."""
    v = np.asarray(values, np.float64).reshape(-1)
    n = v.size
    if k <= 0:
        return np.zeros(0, np.int64)
    if k >= n:
        return np.arange(n)
    nan = np.isnan(v)
    uniq = np.unique(v[~nan])
    rank = np.searchsorted(uniq, v)
    rank[nan] = len(uniq)
    key = -rank if largest else rank
    cut = np.partition(key, k - 1)[k - 1]
    if np.count_nonzero(key <= cut) == k:  # no tie straddles the cut: one answer
        return np.flatnonzero(key <= cut)
    q = list(zip(key.tolist(), range(n)))
    if k * 64 <= n:
        _heap_select(q, 0, k, n)  # std::partial_sort (its final sort keeps the set)
    else:
        _nth_element(q, k - 1)
    return np.array(sorted(i for _, i in q[:k]), np.int64)


# ---------------------------------------------------------------------------
# validation (PyTorch's messages)
# ---------------------------------------------------------------------------


def _validate_pruning_amount_init(amount) -> None:
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
        not isinstance(amount, numbers.Integral) and (float(amount) > 1.0 or float(amount) < 0.0)
    ):
        raise ValueError(
            f"amount={amount} should either be a float in the range [0, 1] or a "
            "non-negative integer"
        )


def _validate_pruning_amount(amount, tensor_size: int) -> None:
    if isinstance(amount, numbers.Integral) and amount > tensor_size:
        raise ValueError(
            f"amount={amount} should be smaller than the number of parameters to "
            f"prune={tensor_size}"
        )


def _validate_structured_pruning(shape: tuple) -> None:
    if len(shape) <= 1:
        raise ValueError(
            "Structured pruning can only be applied to multidimensional tensors. Found "
            f"tensor of shape {shape} with {len(shape)} dims"
        )


def _compute_nparams_toprune(amount, tensor_size: int) -> int:
    if isinstance(amount, numbers.Integral):
        return int(amount)
    return round(amount * tensor_size)


def _validate_pruning_dim(shape: tuple, dim: int) -> None:
    if dim >= len(shape):
        raise IndexError(f"Invalid index {dim} for tensor of size {shape}")


def _compute_norm(a: np.ndarray, n, dim: int) -> np.ndarray:
    """``torch.norm(a, p=n, dim=<every dim but dim>)`` in float64."""
    dims = list(range(a.ndim))
    if dim < 0:
        dim = dims[dim]
    dims.remove(dim)
    x = a.astype(np.float64)
    if isinstance(n, str):
        if n == "fro" and len(dims) <= 2:
            return np.sqrt((x * x).sum(axis=tuple(dims)))
        if n not in ("fro", "nuc"):
            raise ArgumentError(f"linalg.matrix_norm: Order {n} not supported.")
        if len(dims) != 2:
            got = " ".join(str(d) for d in dims)
            raise ArgumentError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {got}")
        return np.linalg.norm(x, n, axis=tuple(dims))
    p = 2.0 if n is None else float(n)
    x = np.abs(x)
    axes = tuple(dims)
    if p == np.inf:
        return x.max(axis=axes)
    if p == -np.inf:
        return x.min(axis=axes)
    if p == 0:
        return np.count_nonzero(x, axis=axes).astype(np.float64)
    if p == 1:
        return x.sum(axis=axes)
    if p == 2:
        return np.sqrt((x * x).sum(axis=axes))
    with np.errstate(divide="ignore", over="ignore"):
        return (x**p).sum(axis=axes) ** (1.0 / p)


# ---------------------------------------------------------------------------
# the pruning methods
# ---------------------------------------------------------------------------


class BasePruningMethod(ABC):
    """The base of the pruning methods, PyTorch's: a subclass defines
    ``PRUNING_TYPE`` ("unstructured", "structured" with a ``dim``, or "global")
    and :meth:`compute_mask`; :meth:`apply` reparametrizes a module's tensor and
    registers the method as its forward pre-hook:
    ``L1Unstructured.apply(layer, "weight", amount=0.5)``."""

    _tensor_name: str | None = None
    PRUNING_TYPE: str

    def __call__(self, module: Module, inputs) -> None:
        """The forward pre-hook: ``module.<name> = <name>_orig * <name>_mask``
        before each forward: ``method(layer, ())``."""
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """The mask (same shape as ``t``) that prunes ``t`` (the importance
        scores) on top of ``default_mask`` (the mask of the earlier pruning,
        ones if none): ``L1Unstructured(2).compute_mask(w, Tensor.ones_like(w))``."""

    def apply_mask(self, module: Module) -> Tensor:
        """``<name>_mask * <name>_orig`` of the module this method prunes:
        ``method.apply_mask(layer)``."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        if mask.dtype != orig.dtype:
            mask = mask.cast(orig.dtype)
        return mask * orig

    @classmethod
    def apply(cls, module: Module, name: str, *args, importance_scores=None, **kwargs):
        """Prune the tensor ``name`` of ``module`` with ``cls(*args, **kwargs)``
        (combined with the pruning already there, if any) and return the method
        registered as the module's forward pre-hook: ``RandomUnstructured.apply(layer,
        "weight", amount=0.2)``. ``importance_scores`` (the tensor's shape) rank the
        entries in place of the tensor's values."""
        # an earlier pruning of module.<name>: the new method joins it in a container
        hooks = _pre_hooks(module)
        found = [
            k
            for k, hook in hooks.items()
            if isinstance(hook, BasePruningMethod) and hook._tensor_name == name
        ]
        if len(found) > 1:
            raise AssertionError(
                f"Avoid adding multiple pruning hooks to the same tensor {name} of module "
                f"{module}. Use a PruningContainer."
            )
        old_method = hooks[found[0]] if found else None

        method = cls(*args, **kwargs)
        method._tensor_name = name
        if isinstance(old_method, PruningContainer):
            old_method.add_pruning_method(method)
            method = old_method
        elif old_method is not None:
            container = PruningContainer(old_method)
            container.add_pruning_method(method)
            method = container

        orig = getattr(module, name)
        if importance_scores is not None:
            if _shape(importance_scores) != _shape(orig):
                if method is old_method:
                    method._pruning_methods = method._pruning_methods[:-1]
                raise AssertionError(
                    f"importance_scores should have the same shape as parameter {name} of "
                    f"{module}, got {_shape(importance_scores)} vs {_shape(orig)}"
                )
        else:
            importance_scores = orig

        first = old_method is None
        if first:
            # module.<name> becomes the parameter <name>_orig
            if name not in module._parameters or not isinstance(orig, Tensor):
                raise KeyError(f"{name!r} is not a parameter of {type(module).__name__}")
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = Tensor.ones_like(orig)
        else:
            old_mask = getattr(module, name + "_mask")
            default_mask = old_mask.detach().clone()

        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
        except Exception:
            # leave the module as it was (PyTorch's roll-back restores the parameter
            # only; a failed re-pruning there also loses the earlier hook)
            if first:
                orig = getattr(module, name + "_orig")
                module.__dict__.pop(name, None)
                if name + "_mask" in module._buffers:
                    del module._buffers[name + "_mask"]
                module.register_parameter(name, orig)
                del module._parameters[name + "_orig"]
            else:
                module._buffers[name + "_mask"] = old_mask
                if method is old_method:
                    method._pruning_methods = method._pruning_methods[:-1]
            raise
        # the method (or the container) is the hook now, registered last
        for k in found:
            del hooks[k]
        module.register_forward_pre_hook(method)
        return method

    def prune(self, t, default_mask=None, importance_scores=None) -> Tensor:
        """``t`` times the mask :meth:`compute_mask` gives for it (from
        ``importance_scores`` if given), on top of ``default_mask``:
        ``L1Unstructured(amount=2).prune(w)``."""
        if importance_scores is not None:
            if _shape(importance_scores) != _shape(t):
                raise AssertionError(
                    "importance_scores should have the same shape as tensor t, got "
                    f"{_shape(importance_scores)} vs {_shape(t)}"
                )
        else:
            importance_scores = t
        if default_mask is None:
            default_mask = Tensor.ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module: Module) -> None:
        """Make the pruning permanent: ``<name>_orig`` (the same parameter object)
        takes the pruned values and becomes ``module.<name>`` again, ``<name>_mask``
        is dropped (the hook is left to the caller: :func:`remove` drops it):
        ``method.remove(layer)``."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned before pruning can be removed")
        name = self._tensor_name
        weight = self.apply_mask(module)
        if name in module.__dict__:
            delattr(module, name)
        orig = module._parameters[name + "_orig"]
        with no_grad():
            orig.data = weight.detach()
        orig.realize()
        del module._parameters[name + "_orig"]
        del module._buffers[name + "_mask"]
        setattr(module, name, orig)


class PruningContainer(BasePruningMethod):
    """The pruning methods applied one after the other to one tensor (what
    pruning a tensor again makes): its mask is the last method's mask computed on
    the entries (or channels) the earlier ones left, combined with theirs:
    ``PruningContainer(first_method)``. Unlike PyTorch's, building one from
    several methods takes the tensor name of the first."""

    def __init__(self, *args) -> None:
        self._pruning_methods: tuple = ()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            if args and isinstance(args[0], BasePruningMethod):
                self._tensor_name = args[0]._tensor_name
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method) -> None:
        """Append ``method`` (pruning the same tensor):
        ``container.add_pruning_method(L1Unstructured(0.2))``."""
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError(
                "Can only add pruning methods acting on the parameter named "
                f"'{self._tensor_name}' to PruningContainer {self}. Found "
                f"'{method._tensor_name}'"
            )
        self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        """The last method's mask computed on the part of ``t`` that
        ``default_mask`` leaves (the entries where it is 1 for "unstructured", the
        channels not all zero for "structured", everything for "global"), written
        into ``default_mask``: ``container.compute_mask(w, layer.weight_mask)``."""
        method = self._pruning_methods[-1]
        a = _host(t)
        mask = _host(default_mask)
        new_mask = mask.astype(np.float64)
        kind = method.PRUNING_TYPE
        if kind == "unstructured":
            slc = mask == 1
        elif kind == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError(
                    'Pruning methods of PRUNING_TYPE "structured" need to have the attribute '
                    "`dim` defined."
                )
            n_dims = a.ndim
            dim = method.dim
            if dim < 0:
                dim = n_dims + dim
            if dim < 0:
                raise IndexError(f"Index is out of bounds for tensor with dimensions {n_dims}")
            others = tuple(d for d in range(n_dims) if d != dim)
            keep_channel = mask.sum(axis=others) != 0
            slc = [slice(None)] * n_dims
            slc[dim] = keep_channel
            slc = tuple(slc)
        elif kind == "global":
            slc = (slice(None),) * a.ndim
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")
        part = method.compute_mask(_wrap(a[slc], t), default_mask=_wrap(mask[slc], default_mask))
        new_mask[slc] = _host(part)
        return _wrap(new_mask, t)


class Identity(BasePruningMethod):
    """Prunes nothing: the reparametrization with a mask of ones:
    ``Identity.apply(layer, "bias")``."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        """``default_mask`` itself: ``Identity().compute_mask(w, mask)``."""
        return default_mask

    @classmethod
    def apply(cls, module: Module, name: str):  # type: ignore[override]
        """Reparametrize ``module.<name>`` without pruning: ``Identity.apply(layer,
        "weight")``."""
        return super().apply(module, name)


class RandomUnstructured(BasePruningMethod):
    """Prunes ``amount`` of the unpruned entries (an int: a count, a float in
    [0, 1]: a fraction), chosen at random: ``RandomUnstructured(amount=0.3)``."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        """``default_mask`` with ``amount`` entries more set to 0 at random:
        ``RandomUnstructured(2).compute_mask(w, Tensor.ones_like(w))``."""
        shape = _shape(t)
        tensor_size = int(np.prod(shape, dtype=np.int64))
        nparams_toprune = _compute_nparams_toprune(self.amount, tensor_size)
        _validate_pruning_amount(nparams_toprune, tensor_size)
        mask = _host(default_mask).copy()
        if nparams_toprune != 0:
            prob = _rand(shape).reshape(-1)
            drop = np.argpartition(-prob, nparams_toprune - 1)[:nparams_toprune]
            mask.reshape(-1)[drop] = 0
        return _wrap(mask, default_mask)

    @classmethod
    def apply(cls, module: Module, name: str, amount):  # type: ignore[override]
        """Prune ``amount`` random entries of ``module.<name>``:
        ``RandomUnstructured.apply(layer, "weight", 0.3)``."""
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    """Prunes the ``amount`` unpruned entries of smallest absolute value (an int:
    a count, a float in [0, 1]: a fraction); ties are broken as PyTorch's CPU
    ``topk`` breaks them: ``L1Unstructured(amount=0.5)``."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        """``default_mask`` with the ``amount`` smallest ``|t|`` set to 0:
        ``L1Unstructured(2).compute_mask(w, Tensor.ones_like(w))``."""
        a = _host(t)
        tensor_size = a.size
        nparams_toprune = _compute_nparams_toprune(self.amount, tensor_size)
        _validate_pruning_amount(nparams_toprune, tensor_size)
        mask = _host(default_mask).copy()
        if nparams_toprune != 0:
            drop = _topk_indices(np.abs(a), nparams_toprune, largest=False)
            mask.reshape(-1)[drop] = 0
        return _wrap(mask, default_mask)

    @classmethod
    def apply(cls, module: Module, name: str, amount, importance_scores=None):  # type: ignore[override]
        """Prune the ``amount`` smallest entries of ``module.<name>`` (or of
        ``importance_scores``): ``L1Unstructured.apply(layer, "weight", 0.5)``."""
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """Prunes ``amount`` of the unpruned channels along ``dim`` (an int: a count,
    a float in [0, 1]: a fraction), chosen at random:
    ``RandomStructured(amount=1, dim=0)``."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim: int = -1) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t, default_mask):
        """``default_mask`` times a mask zeroing ``amount`` random channels along
        ``dim``: ``RandomStructured(1, dim=0).compute_mask(w, Tensor.ones_like(w))``."""
        shape = _shape(t)
        _validate_structured_pruning(shape)
        _validate_pruning_dim(shape, self.dim)
        tensor_size = shape[self.dim]
        nparams_toprune = _compute_nparams_toprune(self.amount, tensor_size)
        _validate_pruning_amount(nparams_toprune, tensor_size)
        if nparams_toprune == 0:
            return default_mask
        prob = _rand((tensor_size,))
        threshold = np.partition(prob, nparams_toprune - 1)[nparams_toprune - 1]
        slc = [slice(None)] * len(shape)
        slc[self.dim] = prob > threshold
        mask = np.zeros(shape, np.float64)
        mask[tuple(slc)] = 1
        mask *= _host(default_mask)
        return _wrap(mask, t)

    @classmethod
    def apply(cls, module: Module, name: str, amount, dim: int = -1):  # type: ignore[override]
        """Prune ``amount`` random channels of ``module.<name>`` along ``dim``:
        ``RandomStructured.apply(layer, "weight", 1, dim=0)``."""
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prunes the ``amount`` unpruned channels along ``dim`` of smallest
    ``L<n>`` norm (``n``: a number, ``inf``, ``-inf``, ``"fro"`` or ``"nuc"``, as
    ``torch.norm``'s ``p``; the norm is over every other dim):
    ``LnStructured(amount=0.5, n=2, dim=0)``."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim: int = -1) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t, default_mask):
        """``default_mask`` times a mask keeping the channels of largest norm:
        ``LnStructured(1, n=2, dim=0).compute_mask(w, Tensor.ones_like(w))``."""
        a = _host(t)
        _validate_structured_pruning(a.shape)
        _validate_pruning_dim(a.shape, self.dim)
        tensor_size = a.shape[self.dim]
        nparams_toprune = _compute_nparams_toprune(self.amount, tensor_size)
        nparams_tokeep = tensor_size - nparams_toprune
        _validate_pruning_amount(nparams_toprune, tensor_size)
        norm = _compute_norm(a, self.n, self.dim)
        keep = _topk_indices(norm, nparams_tokeep, largest=True)
        if nparams_toprune == 0:
            return default_mask
        slc = [slice(None)] * a.ndim
        slc[self.dim] = keep
        mask = np.zeros(a.shape, np.float64)
        mask[tuple(slc)] = 1
        mask *= _host(default_mask)
        return _wrap(mask, t)

    @classmethod
    def apply(cls, module: Module, name: str, amount, n, dim: int, importance_scores=None):  # type: ignore[override]
        """Prune the ``amount`` channels of ``module.<name>`` along ``dim`` of
        smallest ``L<n>`` norm: ``LnStructured.apply(layer, "weight", 1, n=2, dim=0)``."""
        return super().apply(
            module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores
        )


class CustomFromMask(BasePruningMethod):
    """Prunes with a given mask (zeros where to prune):
    ``CustomFromMask(Tensor([1.0, 0.0, 1.0]))``."""

    PRUNING_TYPE = "global"

    def __init__(self, mask) -> None:
        self.mask = mask

    def compute_mask(self, t, default_mask):
        """``default_mask * mask``: ``CustomFromMask(m).compute_mask(w, Tensor.ones_like(w))``."""
        if _shape(default_mask) != _shape(self.mask):
            raise AssertionError(
                f"default_mask shape {_shape(default_mask)} must match self.mask shape "
                f"{_shape(self.mask)}"
            )
        d = _host(default_mask)
        return _wrap(d * _host(self.mask).astype(d.dtype), default_mask)

    @classmethod
    def apply(cls, module: Module, name: str, mask):  # type: ignore[override]
        """Prune ``module.<name>`` with ``mask``: ``CustomFromMask.apply(layer,
        "bias", Tensor([1.0, 0.0, 1.0]))``."""
        return super().apply(module, name, mask=mask)


# ---------------------------------------------------------------------------
# the functions
# ---------------------------------------------------------------------------


def identity(module: Module, name: str) -> Module:
    """Reparametrize ``module.<name>`` (``<name>_orig``, a mask of ones
    ``<name>_mask``) without pruning anything; returns the module:
    ``prune.identity(nn.Linear(2, 3), "bias")``."""
    Identity.apply(module, name)
    return module


def random_unstructured(module: Module, name: str, amount) -> Module:
    """Prune ``amount`` (an int: a count, a float in [0, 1]: a fraction) of the
    unpruned entries of ``module.<name>``, chosen at random (mlfuse's generator);
    returns the module: ``prune.random_unstructured(layer, "weight", amount=0.3)``."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module: Module, name: str, amount, importance_scores=None) -> Module:
    """Prune the ``amount`` (an int: a count, a float in [0, 1]: a fraction)
    unpruned entries of ``module.<name>`` of smallest absolute value (of
    ``importance_scores`` if given); returns the module:
    ``prune.l1_unstructured(layer, "weight", amount=0.2)``."""
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module: Module, name: str, amount, dim: int) -> Module:
    """Prune ``amount`` of the unpruned channels of ``module.<name>`` along
    ``dim``, chosen at random; returns the module:
    ``prune.random_structured(layer, "weight", amount=1, dim=0)``."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module: Module, name: str, amount, n, dim: int, importance_scores=None):
    """Prune the ``amount`` unpruned channels of ``module.<name>`` along ``dim`` of
    smallest ``L<n>`` norm (of ``importance_scores`` if given); returns the module:
    ``prune.ln_structured(conv, "weight", amount=0.5, n=2, dim=0)``."""
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs) -> None:
    """Prune the ``(module, name)`` tensors of ``parameters`` together:
    ``pruning_method`` (an "unstructured" class such as :class:`L1Unstructured`,
    built with ``kwargs``) chooses among all their unpruned entries at once, then
    each tensor gets its part of the mask (:func:`custom_from_mask`);
    ``importance_scores`` maps ``(module, name)`` to scores:
    ``prune.global_unstructured([(a, "weight"), (b, "weight")], prune.L1Unstructured,
    amount=10)``."""
    from mlfuse.nn.utils import parameters_to_vector

    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    parameters = list(parameters)
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")

    scores = parameters_to_vector(
        [importance_scores.get((m, name), getattr(m, name)) for m, name in parameters]
    )
    default_mask = parameters_to_vector([_mask_or_ones(m, name) for m, name in parameters])
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError(
            'Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found method '
            f"{pruning_method} of type {method.PRUNING_TYPE}"
        )
    container.add_pruning_method(method)
    final_mask = _host(container.compute_mask(scores, default_mask)).reshape(-1)

    pointer = 0
    for m, name in parameters:
        param = getattr(m, name)
        num = param.numel()
        part = final_mask[pointer : pointer + num].reshape(_shape(param))
        custom_from_mask(m, name, mask=_wrap(part, scores))
        pointer += num


def _mask_or_ones(module: Module, name: str) -> Tensor:
    mask = getattr(module, name + "_mask", None)
    return mask if isinstance(mask, Tensor) else Tensor.ones_like(getattr(module, name))


def custom_from_mask(module: Module, name: str, mask) -> Module:
    """Prune ``module.<name>`` with a given ``mask`` (its shape; zeros where to
    prune), on top of any earlier pruning; returns the module:
    ``prune.custom_from_mask(nn.Linear(5, 3), "bias", mask=Tensor([0, 1, 0]))``."""
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module: Module, name: str) -> Module:
    """Make the pruning of ``module.<name>`` permanent: it is a plain parameter
    again holding the pruned values (zeros where pruned); ``<name>_orig``,
    ``<name>_mask`` and the hook are gone; returns the module:
    ``prune.remove(layer, "weight")``."""
    hooks = _pre_hooks(module)
    for k, hook in list(hooks.items()):
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del hooks[k]
            return module
    raise ValueError(
        f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed"
    )


def is_pruned(module: Module) -> bool:
    """Whether ``module`` or one of its sub-modules carries a pruning hook:
    ``prune.is_pruned(model)``."""
    for _, sub in module.named_modules():
        for hook in _pre_hooks(sub).values():
            if isinstance(hook, BasePruningMethod):
                return True
    return False
