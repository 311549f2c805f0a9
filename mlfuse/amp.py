"""Mixed precision, PyTorch's ``torch.amp``: :class:`autocast` regions and the
:class:`GradScaler`::

    scaler = mlfuse.amp.GradScaler()
    with mlfuse.autocast("cpu"):             # bfloat16 products on the CPU
        loss = loss_fn(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(opt)                         # skipped when a gradient overflowed
    scaler.update()

Inside an enabled region, the ops PyTorch runs in lower precision (matrix
products: ``@``, ``matmul``, ``mm``, ``bmm``, ``F.linear``; convolutions and
transposed convolutions) cast their float32 and half operands to the
region's dtype (float16 on CUDA, bfloat16 on the CPU by default), and the
ops PyTorch keeps in float32 (softmax, log_softmax, softmin, layer, group and
RMS norms, ``normalize``, the losses) cast half operands up to float32.
float64 and integer operands are left alone, as PyTorch's. Other ops run in
their operands' dtype. :func:`lower_precision` and :func:`float32_precision`
mark such functions. mlfuse computes half-precision values in float32
registers and rounds them when stored, so a region changes what is stored
between kernels, never the arithmetic inside a fused kernel.
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections.abc import Iterable
from typing import Any

from mlfuse import dtypes

__all__ = [
    "is_autocast_cpu_enabled",
    "get_autocast_cpu_dtype",
    "get_autocast_gpu_dtype",
    "set_autocast_cpu_enabled",
    "set_autocast_cpu_dtype",
    "set_autocast_gpu_dtype",
    "is_autocast_cache_enabled",
    "set_autocast_cache_enabled",
    "clear_autocast_cache",
    "active",
    "is_autocast_enabled",
    "set_autocast_enabled",
    "set_autocast_dtype",
    "autocast",
    "GradScaler",
    "custom_fwd",
    "custom_bwd",
    "is_autocast_available",
    "get_autocast_dtype",
]

_DEFAULT_DTYPES = {"cpu": dtypes.bfloat16, "cuda": dtypes.float16}
_STATE: dict[str, tuple[bool, dtypes.DType]] = {k: (False, d) for k, d in _DEFAULT_DTYPES.items()}


def _device_type(device: str) -> str:
    kind = str(device).split(":", 1)[0]
    if kind not in _STATE:
        raise ValueError(f"autocast: device_type must be 'cpu' or 'cuda', got {device!r}")
    return kind


def active() -> bool:
    """Whether an autocast region is on for some device type (a cheap test)."""
    return any(on for on, _ in _STATE.values())


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast regions exist for ``device_type`` ('cpu', 'cuda')."""
    return str(device_type).split(":", 1)[0] in _STATE


def is_enabled(device_type: str = "cuda") -> bool:
    """Whether an autocast region is on for ``device_type``."""
    return _STATE[_device_type(device_type)][0]


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """PyTorch's ``torch.is_autocast_enabled``: for ``device_type`` (CUDA when
    not given, as PyTorch's)."""
    return is_enabled(device_type or "cuda")


def get_autocast_dtype(device_type: str) -> dtypes.DType:
    """The dtype autocast regions of ``device_type`` compute products in."""
    return _STATE[_device_type(device_type)][1]


def set_autocast_dtype(device_type: str, dtype) -> None:
    """The dtype later regions of ``device_type`` use when they name none."""
    kind = _device_type(device_type)
    _STATE[kind] = (_STATE[kind][0], _lower_dtype(dtype, "set_autocast_dtype"))


def is_autocast_cpu_enabled() -> bool:
    """PyTorch's older query: :func:`is_enabled` for the CPU."""
    return is_enabled("cpu")


def get_autocast_cpu_dtype() -> dtypes.DType:
    """PyTorch's older query: :func:`get_autocast_dtype` for the CPU."""
    return get_autocast_dtype("cpu")


def get_autocast_gpu_dtype() -> dtypes.DType:
    """PyTorch's older query: :func:`get_autocast_dtype` for CUDA."""
    return get_autocast_dtype("cuda")


def set_autocast_cpu_enabled(enabled: bool) -> None:
    """PyTorch's older switch: :func:`set_autocast_enabled` for the CPU."""
    set_autocast_enabled("cpu", enabled)


def set_autocast_cpu_dtype(dtype) -> None:
    """PyTorch's older switch: :func:`set_autocast_dtype` for the CPU."""
    set_autocast_dtype("cpu", dtype)


def set_autocast_gpu_dtype(dtype) -> None:
    """PyTorch's older switch: :func:`set_autocast_dtype` for CUDA."""
    set_autocast_dtype("cuda", dtype)


_CACHE = [True]


def is_autocast_cache_enabled() -> bool:
    """Whether casts of weights are cached inside regions (remembered: mlfuse's
    casts are lazy ops the scheduler fuses, not copies to cache)."""
    return _CACHE[0]


def set_autocast_cache_enabled(enabled: bool) -> None:
    """Remember whether casts are cached (see :func:`is_autocast_cache_enabled`)."""
    _CACHE[0] = bool(enabled)


def clear_autocast_cache() -> None:
    """Nothing cached to clear (see :func:`is_autocast_cache_enabled`)."""


def set_autocast_enabled(device_type: str, enabled: bool) -> None:
    """Turn autocast on or off for ``device_type`` outside a ``with`` block."""
    kind = _device_type(device_type)
    _STATE[kind] = (bool(enabled), _STATE[kind][1])


def _lower_dtype(dtype, where: str) -> dtypes.DType:
    dt = dtypes.as_dtype(dtype)
    if dt.name not in ("float16", "bfloat16", "float32"):
        raise ValueError(
            f"{where}: the autocast dtype must be float16, bfloat16 or float32, got {dt.name}"
        )
    return dt


class autocast(contextlib.ContextDecorator):  # noqa: N801 - PyTorch's name
    """An autocast region for ``device_type`` ('cpu' or 'cuda'), in ``dtype``
    (float16 on CUDA, bfloat16 on the CPU unless given); ``enabled=False``
    turns autocast off inside (nested regions). A ``with`` block or a
    decorator: ``with mlfuse.autocast("cuda"): y = model(x)``."""

    def __init__(self, device_type: str = "cuda", dtype=None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:  # fmt: skip
        self.device_type = _device_type(device_type)
        self.fast_dtype = (
            _lower_dtype(dtype, "autocast") if dtype is not None else _STATE[self.device_type][1]
        )
        self._enabled = bool(enabled)
        self._saved: list[tuple[bool, dtypes.DType]] = []

    def __enter__(self):
        self._saved.append(_STATE[self.device_type])
        _STATE[self.device_type] = (self._enabled, self.fast_dtype)
        return self

    def __exit__(self, *exc) -> None:
        _STATE[self.device_type] = self._saved.pop()


def _region(t) -> tuple[bool, dtypes.DType]:
    return _STATE.get(str(t.device).split(":", 1)[0], (False, dtypes.float32))


def _eligible(t) -> bool:
    from mlfuse.tensor import Tensor

    return isinstance(t, Tensor) and t.dtype.is_float and t.dtype != dtypes.float64


def lower(*tensors):
    """``tensors`` as a lower-precision op of an autocast region takes them: the
    float32/half ones cast to the region's dtype when a region is on for their
    device (else unchanged)."""
    first = next((t for t in tensors if _eligible(t)), None)
    if first is None:
        return tensors
    on, dt = _region(first)
    if not on:
        return tensors
    return tuple(t.cast(dt) if _eligible(t) and t.dtype != dt else t for t in tensors)


def widen(*tensors):
    """``tensors`` as a float32 op of an autocast region takes them: half ones
    cast to float32 when a region is on for their device."""
    first = next((t for t in tensors if _eligible(t)), None)
    if first is None or not _region(first)[0]:
        return tensors
    return tuple(t.float() if _eligible(t) and t.dtype.is_half else t for t in tensors)


def lower_precision(fn):
    """Decorate a function whose tensor arguments autocast lowers (see :func:`lower`)."""
    return _casting(fn, lower)


def float32_precision(fn):
    """Decorate a function whose half tensor arguments autocast widens (:func:`widen`)."""
    return _casting(fn, widen)


def _casting(fn, cast):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if not active():
            return fn(*args, **kwargs)
        from mlfuse.tensor import Tensor

        idx = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        keys = [k for k, v in kwargs.items() if isinstance(v, Tensor)]
        cast_args = cast(*(args[i] for i in idx), *(kwargs[k] for k in keys))
        args = list(args)
        for i, v in zip(idx, cast_args):
            args[i] = v
        for k, v in zip(keys, cast_args[len(idx) :]):
            kwargs[k] = v
        return fn(*args, **kwargs)

    return wrapper


def custom_fwd(fwd=None, *, device_type: str = "cuda", cast_inputs=None):
    """PyTorch's decorator of a custom Function's ``forward``: with
    ``cast_inputs``, the forward runs outside autocast with its float tensor
    inputs cast to that dtype (inside a region); otherwise as it is."""
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)
    kind = _device_type(device_type)

    @functools.wraps(fwd)
    def wrapper(*args, **kwargs):
        from mlfuse.tensor import Tensor

        if cast_inputs is None or not _STATE[kind][0]:
            return fwd(*args, **kwargs)
        dt = dtypes.as_dtype(cast_inputs)

        def c(v):
            return v.cast(dt) if isinstance(v, Tensor) and v.dtype.is_float else v

        with autocast(kind, enabled=False):
            return fwd(*[c(a) for a in args], **{k: c(v) for k, v in kwargs.items()})

    return wrapper


def custom_bwd(bwd=None, *, device_type: str = "cuda"):
    """PyTorch's decorator of a custom Function's ``backward`` (runs it as it is)."""
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)
    return bwd


class GradScaler:
    """Loss scaling for half-precision gradients, PyTorch's ``GradScaler``:
    :meth:`scale` multiplies the loss by the scale, :meth:`step` divides the
    gradients by it (:meth:`unscale_`) and skips the optimizer's step when one
    of them is inf or NaN, :meth:`update` halves the scale after such a step
    and doubles it after ``growth_interval`` good ones. Disabled
    (``enabled=False``), every method passes through."""

    def __init__(self, device: str = "cuda", init_scale: float = 2.0**16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:  # fmt: skip
        self.device = str(device)
        if growth_factor <= 1.0:
            raise ValueError(f"GradScaler: growth_factor must be above 1, got {growth_factor}")
        if not 0.0 < backoff_factor < 1.0:
            raise ValueError(f"GradScaler: backoff_factor must be in (0, 1), got {backoff_factor}")
        if (
            isinstance(growth_interval, bool)
            or not isinstance(growth_interval, int)
            or (growth_interval <= 0)
        ):
            raise ValueError(f"GradScaler: growth_interval must be a positive int, got "
                             f"{growth_interval!r}")  # fmt: skip
        self._enabled = bool(enabled)
        self._scale = float(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = growth_interval
        self._growth_tracker = 0
        self._per_optimizer: dict[int, dict[str, Any]] = {}

    def is_enabled(self) -> bool:
        return self._enabled

    def get_scale(self) -> float:
        """The current scale (1.0 when disabled)."""
        return self._scale if self._enabled else 1.0

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = int(new_interval)

    def scale(self, outputs):
        """``outputs`` (a tensor, or tensors in lists/tuples) times the scale."""
        from mlfuse.tensor import Tensor

        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            return outputs * self._scale
        if isinstance(outputs, Iterable):
            kind = type(outputs)
            scaled = [self.scale(o) for o in outputs]
            return kind(scaled) if kind in (list, tuple) else scaled
        raise ValueError(f"GradScaler.scale: expected tensors, got {type(outputs).__name__}")

    def _state(self, optimizer) -> dict[str, Any]:
        return self._per_optimizer.setdefault(id(optimizer), {"unscaled": False, "inf": False})

    def unscale_(self, optimizer) -> None:
        """Divide the gradients of ``optimizer``'s parameters by the scale (once
        per step) and note whether any of them is inf or NaN."""
        from mlfuse.tensor import Tensor, realize, stack

        if not self._enabled:
            return
        state = self._state(optimizer)
        if state["unscaled"]:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last update()."
            )
        inv = 1.0 / self._scale
        bad: list[Tensor] = []
        grads: list[Tensor] = []
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                g = p.grad * inv
                p.grad = g
                grads.append(g)
                bad.append(g.isinf().logical_or(g.isnan()).any())
        if bad:
            found = stack(bad).any()
            realize(*grads, found)
            state["inf"] = bool(found.item())
        state["unscaled"] = True

    def step(self, optimizer, *args, **kwargs):
        """``optimizer.step()`` unless a gradient overflowed (then None)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        state = self._state(optimizer)
        if state.get("stepped"):
            raise RuntimeError("step() has already been called since the last update().")
        if not state["unscaled"]:
            self.unscale_(optimizer)
        state["stepped"] = True
        if state["inf"]:
            return None
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale=None) -> None:
        """Adjust the scale after a step (or set it to ``new_scale``)."""
        if not self._enabled:
            return
        if new_scale is not None:
            value = float(new_scale.item() if hasattr(new_scale, "item") else new_scale)
            if not math.isfinite(value) or value <= 0:
                raise ValueError(f"GradScaler.update: new_scale must be positive, got {value}")
            self._scale = value
        elif any(s["inf"] for s in self._per_optimizer.values()):
            self._scale *= self._backoff_factor
            self._growth_tracker = 0
        elif self._per_optimizer:
            self._growth_tracker += 1
            if self._growth_tracker == self._growth_interval:
                self._scale *= self._growth_factor
                self._growth_tracker = 0
        self._per_optimizer = {}

    def state_dict(self) -> dict[str, Any]:
        """The scale and its growth settings (empty when disabled), as PyTorch's."""
        if not self._enabled:
            return {}
        return {
            "scale": self._scale,
            "growth_factor": self._growth_factor,
            "backoff_factor": self._backoff_factor,
            "growth_interval": self._growth_interval,
            "_growth_tracker": self._growth_tracker,
        }

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        if not self._enabled:
            return
        if not state_dict:
            raise RuntimeError("GradScaler.load_state_dict: the state dict is empty")
        self._scale = float(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])
