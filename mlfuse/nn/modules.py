"""Small ``torch.nn``-style modules holding Tensor parameters.

A module is a callable object: ``__call__`` runs ``forward``. Its parameters
are the Tensor attributes (and those of its sub-modules), found by
:meth:`Module.parameters`; ``train()``/``eval()`` switch dropout and batch
norm between their two behaviours. Initialisation follows PyTorch's defaults
(uniform in ``+-1/sqrt(fan_in)`` for linear and convolution layers), drawn
from the generator ``mlfuse.manual_seed`` seeds.

    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    y = model(x)
"""

from __future__ import annotations

import math
import warnings
from typing import NamedTuple

import numpy as np

from mlfuse import dtypes
from mlfuse.nn import functional as F
from mlfuse.errors import ArgumentError
from mlfuse.tensor import FROZEN, Tensor


def _positive_int(v, what: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
        raise ArgumentError(f"{what} must be a positive int, got {v!r}")
    return v


def _param(t: Tensor) -> Tensor:
    """A parameter: a buffer of its own (not a folded constant, so that updates
    keep the programs that read it), and a leaf whose gradient backward() fills."""
    return Tensor(t.numpy(), t.dtype, t.device, requires_grad=True)


class Module:
    """The base of the modules: sub-modules and Tensor attributes are found by
    walking ``__dict__``: ``sum(p.numel() for p in model.parameters())``."""

    training: bool = True

    def forward(self, *args, **kwargs) -> Tensor:
        """The computation; subclasses define it: ``m.forward(x)``."""
        raise NotImplementedError(f"{type(self).__name__} does not define forward")

    def __call__(self, *args, **kwargs) -> Tensor:
        return self.forward(*args, **kwargs)

    def __setattr__(self, name: str, value) -> None:
        if isinstance(value, _BufferTensor):  # nn.Buffer: registered, stored as a plain Tensor
            self._register_buffer_name(name, value.persistent)
            value = Tensor(value.node)
        if isinstance(value, Tensor) and name in getattr(self, "_buffers", ()):
            FROZEN.add(value)  # state, not trained: an optimizer given it leaves it alone
        object.__setattr__(self, name, value)

    def _register_buffer_name(self, name: str, persistent: bool) -> None:
        names = tuple(getattr(self, "_buffers", ()))
        if name not in names:
            object.__setattr__(self, "_buffers", names + (name,))
        off = set(getattr(self, "_non_persistent", ()))
        off.discard(name) if persistent else off.add(name)
        object.__setattr__(self, "_non_persistent", frozenset(off))

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Make the attribute ``name`` a buffer: state that is not trained (not in
        ``parameters()``), in ``state_dict()`` unless ``persistent=False``:
        ``self.register_buffer("mask", Tensor.ones(4, 4).tril())``."""
        if not isinstance(name, str) or not name or "." in name:
            raise KeyError(f"register_buffer: name must be a non-empty string without '.', got "
                           f"{name!r}")  # fmt: skip
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"register_buffer: {name!r} must be a Tensor or None, got {type(tensor).__name__}"
            )
        self._register_buffer_name(name, persistent)
        if tensor is not None:
            FROZEN.add(tensor)
        object.__setattr__(self, name, tensor)

    def children(self) -> list[Module]:
        """The direct sub-modules, in attribute order: ``list(m.children())``."""
        out = []
        for v in vars(self).values():
            if isinstance(v, Module):
                out.append(v)
            elif isinstance(v, (list, tuple)):
                out.extend(m for m in v if isinstance(m, Module))
        return out

    def named_modules(self, prefix: str = "") -> list[tuple[str, Module]]:
        """``(dotted prefix, module)`` of this module and every sub-module, parents
        first: ``[p for p, _ in m.named_modules()]``."""
        out: list[tuple[str, Module]] = []
        stack: list[tuple[str, Module]] = [(prefix, self)]
        while stack:  # iterative, so deep models do not exhaust the recursion limit
            pre, m = stack.pop()
            out.append((pre, m))
            subs = []
            for k, v in vars(m).items():
                if isinstance(v, Module):
                    subs.append((pre + k + ".", v))
                elif isinstance(v, (list, tuple)):
                    subs.extend(
                        (f"{pre}{i}.", s) if k == "_layers" else (f"{pre}{k}.{i}.", s)
                        for i, s in enumerate(v)
                        if isinstance(s, Module)
                    )
            stack.extend(reversed(subs))
        return out

    def named_parameters(self, prefix: str = "") -> list[tuple[str, Tensor]]:
        """``(dotted name, tensor)`` of every parameter, sub-modules included:
        ``dict(m.named_parameters())["0.weight"]``."""
        out: list[tuple[str, Tensor]] = []
        seen: set[int] = set()
        for pre, m in self.named_modules(prefix):
            for k, v in vars(m).items():
                if isinstance(v, Tensor) and k not in getattr(m, "_buffers", ()):
                    if id(v) not in seen:
                        seen.add(id(v))
                        out.append((pre + k, v))
        return out

    def parameters(self) -> list[Tensor]:
        """Every parameter tensor (shared ones once): ``model.parameters()``."""
        return [t for _, t in self.named_parameters()]

    def named_buffers(self, prefix: str = "") -> list[tuple[str, Tensor]]:
        """``(dotted name, tensor)`` of the state that is not trained (batch norm's
        running statistics): ``dict(m.named_buffers())``."""
        return [
            (pre + k, getattr(m, k))
            for pre, m in self.named_modules(prefix)
            for k in getattr(m, "_buffers", ())
            if isinstance(getattr(m, k, None), Tensor)
        ]

    def state_dict(self) -> dict[str, Tensor]:
        """Every parameter and (persistent) buffer by dotted name (the tensors
        themselves, as PyTorch):
        ``np.savez(path, **{k: v.numpy() for k, v in m.state_dict().items()})``."""
        transient = {
            pre + k for pre, m in self.named_modules() for k in getattr(m, "_non_persistent", ())
        }
        buffers = {k: v for k, v in self.named_buffers() if k not in transient}
        return dict(self.named_parameters()) | buffers

    def load_state_dict(self, state, strict: bool = True) -> None:
        """Write ``state`` (name -> Tensor or array, as :meth:`state_dict` names
        them) into the parameters and buffers in place: ``m.load_state_dict(sd)``."""
        mine = self.state_dict()
        missing = sorted(set(mine) - set(state))
        unexpected = sorted(set(state) - set(mine))
        if strict and (missing or unexpected):
            raise KeyError(
                f"load_state_dict: missing {missing or 'nothing'}, unexpected "
                f"{unexpected or 'nothing'}"
            )
        from mlfuse.autograd import no_grad

        with no_grad():
            for k, v in state.items():
                if k not in mine:
                    continue
                t = mine[k]
                v = v if isinstance(v, Tensor) else Tensor(v, dtype=t.dtype, device=t.device)
                if v.shape != t.shape:
                    raise ArgumentError(
                        f"load_state_dict: {k} has shape {v.shape}, the model {t.shape}"
                    )
                t.assign(v.cast(t.dtype).to(t.device)).realize()

    def zero_grad(self) -> None:
        """Forget the gradients of every parameter (``.grad`` becomes None)."""
        for p in self.parameters():
            p.grad = None

    def train(self, mode: bool = True) -> Module:
        """Switch this module and its sub-modules to training (or, with ``False``,
        evaluation) behaviour: ``model.train()``."""
        stack: list[Module] = [self]
        while stack:
            m = stack.pop()
            m.training = bool(mode)
            stack.extend(m.children())
        return self

    def eval(self) -> Module:
        """Evaluation behaviour (no dropout; batch norm uses its running statistics):
        ``model.eval()``."""
        return self.train(False)

    def __repr__(self) -> str:
        subs = self.children()
        if not subs:
            return f"{type(self).__name__}({self._settings()})"
        inner = "\n".join("  " + repr(s).replace("\n", "\n  ") for s in subs)
        return f"{type(self).__name__}(\n{inner}\n)"

    def _settings(self) -> str:
        """The settings ``repr`` shows between the parentheses."""
        return ""


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

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True):
        ns = (
            tuple(normalized_shape)
            if isinstance(normalized_shape, (tuple, list))
            else (normalized_shape,)
        )
        for s in ns:
            _positive_int(s, "LayerNorm: normalized_shape entries")
        self.normalized_shape, self.eps = ns, eps
        self.weight = _param(Tensor.ones(ns)) if elementwise_affine else None
        self.bias = _param(Tensor.zeros(ns)) if elementwise_affine else None

    def forward(self, x: Tensor) -> Tensor:
        """``F.layer_norm`` with the layer's parameters: ``ln.forward(x)``."""
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)

    def _settings(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}"


class _BatchNorm(Module):
    _buffers = ("running_mean", "running_var", "num_batches_tracked")
    _ndims: tuple[int, ...] = (4,)
    _layout = "(N, C, H, W)"

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
    ) -> None:
        name = type(self).__name__
        _positive_int(num_features, f"{name}: num_features")
        if momentum is None or not 0 <= momentum <= 1:
            raise ArgumentError(f"{name}: momentum must be in [0, 1], got {momentum!r}")
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self.weight = _param(Tensor.ones(num_features)) if affine else None
        self.bias = _param(Tensor.zeros(num_features)) if affine else None
        self.running_mean = Tensor.zeros(num_features).realize() if track_running_stats else None
        self.running_var = Tensor.ones(num_features).realize() if track_running_stats else None
        self.num_batches_tracked = Tensor(np.zeros((), np.int64)) if track_running_stats else None

    def _check_input(self, x: Tensor) -> None:
        if x.ndim not in self._ndims:
            raise ArgumentError(
                f"{type(self).__name__}: input must be {self._layout}, got {x.shape}"
            )

    def forward(self, x: Tensor) -> Tensor:
        """``F.batch_norm`` in the module's mode: ``bn.forward(x)``."""
        self._check_input(x)
        if self.training and self.num_batches_tracked is not None:
            self.num_batches_tracked.assign(self.num_batches_tracked + 1)
        return F.batch_norm(
            x,
            self.running_mean,
            self.running_var,
            self.weight,
            self.bias,
            self.training or self.running_mean is None,
            self.momentum,
            self.eps,
        )

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
    """``x * sigmoid(x)``: ``nn.SiLU()(x)``."""

    def __init__(self) -> None:
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


class Sequential(Module):
    """Modules (or callables) applied in order: ``nn.Sequential(nn.Linear(4, 2),
    nn.ReLU())(x)``; ``seq[0]`` and ``len(seq)`` index the layers."""

    def __init__(self, *layers) -> None:
        for i, m in enumerate(layers):
            if not callable(m):
                raise TypeError(f"Sequential: layer {i} is not callable: {m!r}")
        self._layers = list(layers)

    def forward(self, x: Tensor) -> Tensor:
        """Each layer on the previous one's output: ``seq.forward(x)``."""
        for m in self._layers:
            x = m(x)
        return x

    def __getitem__(self, i: int):
        return self._layers[i]

    def __len__(self) -> int:
        return len(self._layers)


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
        for v in values:
            self.append(v)
        return self

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

    def _settings(self) -> str:
        return f"{self._size} entries"


class ParameterDict(Module):
    """Parameters by name, registered (named by their keys) so that
    ``parameters()`` and ``state_dict()`` see them; a Tensor that is not a
    parameter is made one, as PyTorch:
    ``self.bias = nn.ParameterDict({"a": Tensor.zeros(4)})``."""

    def __init__(self, parameters=None) -> None:
        self._keys: list[str] = []
        if parameters is not None:
            self.update(parameters)

    def __setitem__(self, key: str, value) -> None:
        if not isinstance(key, str) or not key or "." in key or key.startswith("_"):
            raise KeyError(
                f"ParameterDict: keys must be non-empty strings without '.' that do not start "
                f"with '_', got {key!r}"
            )
        if hasattr(type(self), key) or key in ("training",):
            raise KeyError(f"ParameterDict: key {key!r} is the name of a ParameterDict attribute")
        if key not in self._keys:
            self._keys.append(key)
        vars(self)[key] = ParameterList._convert(value)

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

    def get(self, key: str, default=None):
        """The parameter under ``key``, or ``default``: ``params.get("a")``."""
        return vars(self)[key] if key in self._keys else default

    def update(self, parameters) -> None:
        """Add (or replace) the entries of a mapping or of ``(key, value)`` pairs."""
        items = parameters.items() if hasattr(parameters, "items") else parameters
        for k, v in items:
            self[k] = v

    def keys(self) -> list[str]:
        """The keys in insertion order: ``list(params.keys())``."""
        return list(self._keys)

    def values(self) -> list:
        """The parameters in insertion order."""
        return [vars(self)[k] for k in self._keys]

    def items(self) -> list[tuple[str, Tensor]]:
        """``(key, parameter)`` in insertion order: ``for name, p in params.items()``."""
        return [(k, vars(self)[k]) for k in self._keys]

    def __contains__(self, key) -> bool:
        return key in self._keys

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self):
        return iter(list(self._keys))

    def forward(self, *args, **kwargs) -> Tensor:
        raise NotImplementedError("ParameterDict has no forward: index it by key")


class Identity(Module):
    """Returns its input (any constructor arguments are ignored, as PyTorch):
    ``nn.Identity()(x)``."""

    def __init__(self, *args, **kwargs) -> None:
        pass

    def forward(self, x: Tensor) -> Tensor:
        """``x`` itself: ``ident.forward(x)``."""
        return x


class ModuleList(Module):
    """A list of sub-modules, registered (named ``0``, ``1``...) so that
    ``parameters()`` and ``state_dict()`` see them:
    ``self.blocks = nn.ModuleList(nn.Linear(8, 8) for _ in range(4))``."""

    def __init__(self, modules=None) -> None:
        self._layers: list[Module] = []
        if modules is not None:
            self.extend(modules)

    def _check(self, m, where) -> Module:
        if not isinstance(m, Module):
            raise TypeError(f"ModuleList: entry {where} is not a Module: {m!r}")
        return m

    def append(self, module: Module) -> ModuleList:
        """Add ``module`` at the end: ``layers.append(nn.ReLU())``."""
        self._layers.append(self._check(module, len(self._layers)))
        return self

    def extend(self, modules) -> ModuleList:
        """Add each of ``modules`` at the end: ``layers.extend([a, b])``."""
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> None:
        """Put ``module`` before position ``index``: ``layers.insert(0, m)``."""
        self._layers.insert(index, self._check(module, index))

    def __getitem__(self, i):
        if isinstance(i, slice):
            return ModuleList(self._layers[i])
        return self._layers[i]

    def __setitem__(self, i: int, module: Module) -> None:
        self._layers[i] = self._check(module, i)

    def __delitem__(self, i) -> None:
        del self._layers[i]

    def __len__(self) -> int:
        return len(self._layers)

    def __iter__(self):
        return iter(self._layers)

    def __iadd__(self, modules) -> ModuleList:
        return self.extend(modules)

    def forward(self, *args, **kwargs) -> Tensor:
        raise NotImplementedError("ModuleList has no forward: iterate over its modules")


class ModuleDict(Module):
    """Sub-modules by name, registered (named by their keys) so that
    ``parameters()`` and ``state_dict()`` see them:
    ``self.heads = nn.ModuleDict({"cls": nn.Linear(8, 3)})``."""

    def __init__(self, modules=None) -> None:
        self._keys: list[str] = []
        if modules is not None:
            self.update(modules)

    def __setitem__(self, key: str, module: Module) -> None:
        if not isinstance(key, str) or not key or "." in key or key.startswith("_"):
            raise KeyError(
                f"ModuleDict: keys must be non-empty strings without '.' that do not start with "
                f"'_', got {key!r}"
            )
        if hasattr(type(self), key) or key in ("training",):
            raise KeyError(f"ModuleDict: key {key!r} is the name of a ModuleDict attribute")
        if not isinstance(module, Module):
            raise TypeError(f"ModuleDict: {key!r} is not a Module: {module!r}")
        if key not in self._keys:
            self._keys.append(key)
        vars(self)[key] = module

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

    def update(self, modules) -> None:
        """Add (or replace) the modules of a mapping or of ``(key, module)`` pairs."""
        items = modules.items() if hasattr(modules, "items") else modules
        for k, m in items:
            self[k] = m

    def keys(self) -> list[str]:
        """The keys in insertion order: ``list(heads.keys())``."""
        return list(self._keys)

    def values(self) -> list[Module]:
        """The modules in insertion order."""
        return [vars(self)[k] for k in self._keys]

    def items(self) -> list[tuple[str, Module]]:
        """``(key, module)`` in insertion order: ``for name, m in heads.items()``."""
        return [(k, vars(self)[k]) for k in self._keys]

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

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True):
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
        self.bias = _param(Tensor.zeros(num_channels)) if affine else None

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
    _buffers = ("running_mean", "running_var", "num_batches_tracked")
    _nd = 2

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float = 0.1,
        affine: bool = False,
        track_running_stats: bool = False,
    ) -> None:
        _positive_int(num_features, f"{type(self).__name__}: num_features")
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self.weight = _param(Tensor.ones(num_features)) if affine else None
        self.bias = _param(Tensor.zeros(num_features)) if affine else None
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
    _buffers = ("weight", "pos_weight")
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
        vars(self).clear()
        vars(self).update(vars(fresh))
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
        if momentum is None or not 0 <= momentum <= 1:
            raise ArgumentError(
                f"{type(self).__name__}: momentum must be in [0, 1], got {momentum!r}"
            )
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
