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

from mlfuse.nn import functional as F
from mlfuse.tensor import Tensor


def _positive_int(v, what: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
        raise ValueError(f"{what} must be a positive int, got {v!r}")
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
        """Every parameter and buffer by dotted name (the tensors themselves, as
        PyTorch): ``np.savez(path, **{k: v.numpy() for k, v in m.state_dict().items()})``."""
        return dict(self.named_parameters()) | dict(self.named_buffers())

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
                    raise ValueError(
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


class Conv2d(Module):
    """2-d convolution with weight (out, in / groups, kh, kw):
    ``nn.Conv2d(3, 16, 3, padding=1)(x)``."""

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
    ) -> None:
        _positive_int(in_channels, "Conv2d: in_channels")
        _positive_int(out_channels, "Conv2d: out_channels")
        _positive_int(groups, "Conv2d: groups")
        if in_channels % groups or out_channels % groups:
            raise ValueError(
                f"Conv2d: groups {groups} must divide in_channels {in_channels} and "
                f"out_channels {out_channels}"
            )
        k = F._tuple(kernel_size, 2, "Conv2d: kernel_size")
        self.in_channels, self.out_channels, self.kernel_size = in_channels, out_channels, k
        self.stride, self.padding, self.dilation, self.groups = stride, padding, dilation, groups
        fan_in = in_channels // groups * k[0] * k[1]
        bound = 1 / math.sqrt(fan_in)
        self.weight = _param(
            Tensor.uniform(out_channels, in_channels // groups, *k, low=-bound, high=bound)
        )
        self.bias = _param(Tensor.uniform(out_channels, low=-bound, high=bound)) if bias else None

    def forward(self, x: Tensor) -> Tensor:
        """``F.conv2d`` with the layer's settings: ``conv.forward(x)``."""
        return F.conv2d(
            x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups
        )

    def _settings(self) -> str:
        return (
            f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}, padding={self.padding}"
        )


class ConvTranspose2d(Module):
    """Transposed 2-d convolution with weight (in, out / groups, kh, kw):
    ``nn.ConvTranspose2d(16, 8, 4, stride=2, padding=1)(x)`` doubles H and W."""

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
    ) -> None:
        _positive_int(in_channels, "ConvTranspose2d: in_channels")
        _positive_int(out_channels, "ConvTranspose2d: out_channels")
        _positive_int(groups, "ConvTranspose2d: groups")
        if in_channels % groups or out_channels % groups:
            raise ValueError(
                f"ConvTranspose2d: groups {groups} must divide in_channels {in_channels} and "
                f"out_channels {out_channels}"
            )
        k = F._tuple(kernel_size, 2, "ConvTranspose2d: kernel_size")
        self.in_channels, self.out_channels, self.kernel_size = in_channels, out_channels, k
        self.stride, self.padding, self.output_padding = stride, padding, output_padding
        self.dilation, self.groups = dilation, groups
        # PyTorch's initialization: fan-in from the weight's dim 1 (out / groups)
        bound = 1 / math.sqrt(out_channels // groups * k[0] * k[1])
        self.weight = _param(
            Tensor.uniform(in_channels, out_channels // groups, *k, low=-bound, high=bound)
        )
        self.bias = _param(Tensor.uniform(out_channels, low=-bound, high=bound)) if bias else None

    def forward(self, x: Tensor) -> Tensor:
        """``F.conv_transpose2d`` with the layer's settings."""
        return F.conv_transpose2d(
            x, self.weight, self.bias, self.stride, self.padding, self.output_padding,
            self.groups, self.dilation,
        )  # fmt: skip

    def _settings(self) -> str:
        return (
            f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}, padding={self.padding}"
        )


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


class BatchNorm2d(Module):
    """Per-channel normalization of (N, C, H, W): batch statistics while
    training (updating the running ones), running statistics in ``eval()``:
    ``nn.BatchNorm2d(16)(x)``."""

    _buffers = ("running_mean", "running_var")

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1) -> None:
        _positive_int(num_features, "BatchNorm2d: num_features")
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.weight = _param(Tensor.ones(num_features))
        self.bias = _param(Tensor.zeros(num_features))
        self.running_mean = Tensor.zeros(num_features).realize()
        self.running_var = Tensor.ones(num_features).realize()

    def forward(self, x: Tensor) -> Tensor:
        """``F.batch_norm`` in the module's mode: ``bn.forward(x)``."""
        if x.ndim != 4:
            raise ValueError(f"BatchNorm2d: input must be (N, C, H, W), got {x.shape}")
        return F.batch_norm(
            x,
            self.running_mean,
            self.running_var,
            self.weight,
            self.bias,
            self.training,
            self.momentum,
            self.eps,
        )

    def _settings(self) -> str:
        return f"{self.num_features}, eps={self.eps}, momentum={self.momentum}"


class Embedding(Module):
    """A lookup table of ``num_embeddings`` rows of ``embedding_dim`` values
    (initialised standard normal, as PyTorch): ``nn.Embedding(100, 16)(ids)``."""

    def __init__(self, num_embeddings: int, embedding_dim: int) -> None:
        self.num_embeddings = _positive_int(num_embeddings, "Embedding: num_embeddings")
        self.embedding_dim = _positive_int(embedding_dim, "Embedding: embedding_dim")
        self.weight = _param(Tensor.randn(num_embeddings, embedding_dim))

    def forward(self, ids: Tensor) -> Tensor:
        """``F.embedding(ids, weight)``: ``emb.forward(ids)``."""
        return F.embedding(ids, self.weight)

    def _settings(self) -> str:
        return f"{self.num_embeddings}, {self.embedding_dim}"


class Dropout(Module):
    """``F.dropout`` while training, the identity in ``eval()``: ``nn.Dropout(0.1)(x)``."""

    def __init__(self, p: float = 0.5) -> None:
        if not 0 <= p <= 1:
            raise ValueError(f"Dropout: p must be in [0, 1], got {p}")
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
    """``max(x, 0)``: ``nn.ReLU()(x)``."""

    def __init__(self) -> None:
        super().__init__(F.relu, "relu")


class GELU(_Activation):
    """Gaussian error linear unit (``approximate="none"`` or ``"tanh"``): ``nn.GELU()(x)``."""

    def __init__(self, approximate: str = "none") -> None:
        if approximate not in ("none", "tanh"):
            raise ValueError(f"GELU: approximate must be 'none' or 'tanh', got {approximate!r}")
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


class MaxPool2d(Module):
    """``F.max_pool2d`` with fixed settings: ``nn.MaxPool2d(2)(x)``."""

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.dilation, self.ceil_mode = dilation, ceil_mode

    def forward(self, x: Tensor) -> Tensor:
        """The max over each window: ``pool.forward(x)``."""
        return F.max_pool2d(
            x, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode
        )


class AvgPool2d(Module):
    """``F.avg_pool2d`` with fixed settings: ``nn.AvgPool2d(2)(x)``."""

    def __init__(
        self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True
    ):
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, x: Tensor) -> Tensor:
        """The mean over each window: ``pool.forward(x)``."""
        return F.avg_pool2d(
            x, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad
        )


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


__all__ = [
    "AvgPool2d",
    "BatchNorm2d",
    "Conv2d",
    "ConvTranspose2d",
    "Dropout",
    "Embedding",
    "Flatten",
    "GELU",
    "LayerNorm",
    "Linear",
    "MaxPool2d",
    "Module",
    "ReLU",
    "Sequential",
    "SiLU",
    "Sigmoid",
    "Softmax",
    "Tanh",
]
