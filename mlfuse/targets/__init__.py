"""Compilation targets: one protocol, one folder per implementation.

A :class:`Target` is everything mlfuse knows about a device: the passes that
take kernels from the ``kernel`` dialect down to what it compiles, how it
compiles them, and its memory (allocate, free, copy, move to and from the
host), kernel launches and synchronization. The driver, the executor and
``mlfuse-opt`` speak only this protocol; the CPU (``mlfuse/targets/cpu``) is
its first implementation and the GPU (``mlfuse/targets/cuda``) its second; a
new device is a new folder plus one line in :data:`_BUILTIN`.

Devices are named by their target's ``name`` (``"cpu"``). The default device
(where tensors are created when no ``device=`` is given) is
:func:`get_default_device`: the one set by :func:`set_default_device`, else
the environment variable ``MLFUSE_DEVICE``, else ``"cpu"``. Unknown names are
errors that list the known devices, never a silent fallback.
"""

from __future__ import annotations

import importlib
import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from pathlib import Path

    import numpy as np
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.passes import ModulePass
    from xdsl.utils.target import Target as Emitter

    from mlfuse.dtypes import DType


class Buffer:
    """A flat, contiguous array of ``size`` elements of ``dtype`` in one device's memory.

    Each target subclasses it with whatever names the memory (the CPU: a numpy
    array and its address). Buffers have no shape: a tensor's shape and its
    view of the buffer belong to the front end.
    """

    __slots__ = ("device", "size", "dtype", "base", "base_offset")

    def __init__(self, device: str, size: int, dtype: DType):
        self.device = device
        self.size = size
        self.dtype = dtype
        self.base: Buffer | None = None
        """For a window (:meth:`Target.window`): the buffer whose memory it is."""
        self.base_offset = 0
        """For a window: the element of ``base`` at which it starts."""

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.device} {self.size} x {self.dtype.name}>"


class CompiledKernel:
    """A kernel compiled by a target, ready for :meth:`Target.launch`.

    ``num_buffers`` is how many buffers a launch passes, in the kernel's
    argument order (outputs first, then inputs).
    """

    __slots__ = ("name", "num_buffers")

    def __init__(self, name: str, num_buffers: int):
        self.name = name
        self.num_buffers = num_buffers

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name} ({self.num_buffers} buffers)>"


class Target(ABC):
    """A compilation target: its lowering, compiler, memory and launches.

    Constructing a target must be cheap and must not touch its device (``mlfuse-opt``
    builds every registered target to list their passes and emitters); device
    work starts at the first compile, allocation or launch.

    Work is issued in order: an allocation, copy, launch or free sees the
    effects of everything issued before it on the same target. ``to_numpy``
    waits for them; :meth:`synchronize` waits for everything.
    """

    name: ClassVar[str]
    """The device name (``"cpu"``), used in ``Tensor(..., device=name)``."""

    kernel_pipeline: ClassVar[tuple[str, ...]]
    """Pass names from the ``kernel`` dialect down to what :meth:`compile` takes."""

    reduce_split: ClassVar[Mapping[str, int] | None] = None
    """The options of ``split-reduces`` (``{"outputs": 64, "min-length": 1 << 22}``):
    a reduce with fewer results than ``outputs``, each from at least
    ``min-length`` elements, becomes two (the first over about ``outputs``
    parts, in parallel); None: reduces are never split."""

    def passes(self) -> Mapping[str, Callable[[], type[ModulePass]]]:
        """Target-specific passes for the pass table (name -> factory of the pass class)."""
        return {}

    def lazy_pipeline(self) -> tuple[str, ...]:
        """The lazy pipeline for this target: its reduce split in ``split-reduces``,
        its window alignment in ``window-kernel-inputs``."""
        from mlfuse.passes import LAZY_PIPELINE

        specs: dict[str, str | None] = {}
        if self.reduce_split is None:
            specs["split-reduces"] = None
        else:
            options = " ".join(f"{k}={v}" for k, v in self.reduce_split.items())
            specs["split-reduces"] = f"split-reduces{{{options}}}"
        if self.window_alignment is None:
            specs["window-kernel-inputs"] = None
        else:
            specs["window-kernel-inputs"] = (
                f"window-kernel-inputs{{alignment={self.window_alignment}}}"
            )
        out = (specs.get(p, p) for p in LAZY_PIPELINE)
        return tuple(p for p in out if p is not None)

    def emitters(self) -> Mapping[str, Callable[[], type[Emitter]]]:
        """``mlfuse-opt -t`` targets this target contributes (name -> factory of the class)."""
        return {}

    @abstractmethod
    def compile(self, module: ModuleOp) -> dict[str, CompiledKernel]:
        """Compile the kernels of ``module`` (lowered by :attr:`kernel_pipeline`), by name."""

    def toolchain(self) -> str:
        """Everything compiled code depends on besides the kernel's text (compiler
        versions, the machine); the disk cache keys entries by it. Empty: this
        target's code is never cached on disk."""
        return ""

    def save(self, kernels: Mapping[str, CompiledKernel]) -> bytes | None:
        """``kernels`` (compiled together by one :meth:`compile`) as bytes that
        :meth:`load` turns back into them, in another process too; None if they
        cannot be saved."""
        return None

    def load(self, data: bytes) -> dict[str, CompiledKernel]:
        """The kernels :meth:`save` saved, by name (ValueError if ``data`` is not such)."""
        raise ValueError(f"target '{self.name}' does not load saved kernels")

    @abstractmethod
    def alloc(self, size: int, dtype: DType) -> Buffer:
        """A new, uninitialized buffer of ``size`` elements."""

    @abstractmethod
    def free(self, buf: Buffer) -> None:
        """Release ``buf``; using it afterwards is an error."""

    @abstractmethod
    def from_numpy(self, array: np.ndarray) -> Buffer:
        """A new buffer holding a copy of ``array``'s elements (flattened in C order)."""

    @abstractmethod
    def to_numpy(self, buf: Buffer) -> np.ndarray:
        """A new, flat host array with ``buf``'s elements (never aliases ``buf``)."""

    @abstractmethod
    def copy(self, dst: Buffer, src: Buffer) -> None:
        """Copy ``src`` into ``dst`` (same size and dtype, both on this target)."""

    @abstractmethod
    def launch(self, kernel: CompiledKernel, buffers: Sequence[Buffer]) -> None:
        """Run ``kernel`` over its whole iteration space on ``buffers``."""

    @abstractmethod
    def synchronize(self) -> None:
        """Wait until all work issued to this target has finished."""

    def available(self) -> bool:
        """Whether this target's device can be used on this machine (a GPU and its
        driver); cheap after the first call, never raises."""
        return True

    def device_description(self) -> str:
        """What the device is, in the vendor's words (``"NVIDIA H100 80GB HBM3"``)."""
        return self.name

    def threads(self) -> int | None:
        """Host threads a launch uses (None: not a host-threaded target)."""
        return None

    def set_threads(self, n: int) -> None:
        """Use ``n`` host threads per launch from now on."""
        raise ValueError(f"the {self.name} target has no host thread count to set")

    def write_artifacts(self, module: ModuleOp, folder: Path) -> list[str]:
        """Write this target's own forms of ``module`` (kernels lowered by
        :attr:`kernel_pipeline`) into ``folder`` for ``MLFUSE_DEBUG_DIR`` (the
        CPU: LLVM IR before and after O3 and the assembly) and return the file
        names written. The default writes nothing."""
        return []

    def contraction_panel(
        self, k: int, n: int, itemsize: int, rows: int | None = None
    ) -> int | None:
        """The width of the panels a ``(k, n)`` right operand of a matrix product
        should be packed into before the product reads it (``None``: read it as
        it is); ``rows``: how many rows of the left operand (batches included)
        the product multiplies with it, when known. Packing costs a copy (a
        kernel); it pays where the operand's rows lie so far apart that a panel
        of them does not stay in cache, and the product reads it often enough."""
        return None

    def copy_padded_input(self, nbytes: int) -> bool:
        """Whether a convolution copies its zero-padded input (``nbytes`` bytes
        once padded) into a buffer of its own before reading its windows, rather
        than reading them through the padded view (which checks each read against
        the input's bounds). The copy is a kernel; it pays where the product reads
        every input element many times."""
        return False

    def pack_conv_weights(self, out_width: int, out_channels: int, itemsize: int) -> bool:
        """Whether a convolution copies its weights with the output channels
        innermost before the product, for an output ``out_width`` wide along its
        last dim with ``out_channels`` channels per group: where the rows are too
        short for the target's vectors, the product vectorizes over the channels
        instead, which needs them contiguous."""
        return False

    window_alignment: ClassVar[int | None] = None
    """Bytes to which :meth:`window` rounds a window's start down (the alignment
    of the target's allocations, so code sees the alignment it would see in the
    whole buffer); None: the target has no windows."""

    def window(self, buf: Buffer, offset: int, size: int) -> Buffer:
        """A buffer of ``size`` elements aliasing ``buf`` from element ``offset``
        on (its ``base`` is ``buf``). A program reading only part of an input is
        compiled for that part, so the same program runs on every part of the
        same shape (a batch of a dataset, a step of a sequence). A window lives
        while the program that reads it runs; it is never freed."""
        raise NotImplementedError(f"target '{self.name}' has no buffer windows")

    def _check_launch(
        self, kernel: CompiledKernel, kind: type, buffers: Sequence[Buffer], compiled_for: str
    ) -> None:
        """A launch's kernel must be a ``kind`` (compiled by this target, for
        ``compiled_for``) and get as many buffers as it takes."""
        if not isinstance(kernel, kind):
            raise TypeError(f"launch: {kernel!r} was not compiled for {compiled_for}")
        if len(buffers) != kernel.num_buffers:
            raise ValueError(
                f"launch of {kernel.name}: it takes {kernel.num_buffers} buffers, got "
                f"{len(buffers)}"
            )

    def _window_of(self, buf: Buffer, offset: int, size: int) -> None:
        if offset < 0 or size < 0 or offset + size > buf.size:
            raise ValueError(
                f"window [{offset}, {offset + size}) does not fit in {buf!r} ({buf.size} elements)"
            )

    def share(self, buf: Buffer) -> np.ndarray | None:
        """``buf``'s memory as a flat host array that aliases it, for zero-copy
        export (DLPack, ``__array__``), or None where the memory is not host
        memory. The buffer's memory then lives as long as the array does."""
        return None

    def adopt(self, array: np.ndarray) -> Buffer:
        """A buffer over ``array``'s own memory when this target can use it
        directly (a flat, C-contiguous host array), else a copy of it."""
        return self.from_numpy(array)

    def clone(self, buf: Buffer) -> Buffer:
        """A new buffer with the contents of ``buf``."""
        out = self.alloc(buf.size, buf.dtype)
        self.copy(out, buf)
        return out

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


# ---------------------------------------------------------------------------
# the registry
# ---------------------------------------------------------------------------

_BUILTIN: dict[str, str] = {
    "cpu": "mlfuse.targets.cpu:CpuTarget",
    "cuda": "mlfuse.targets.cuda:CudaTarget",
    "cuda_sim": "mlfuse.targets.cuda.simulate:CudaSimTarget",
    "cuda_emu": "mlfuse.targets.cuda.emulate:CudaEmuTarget",
}
"""Targets shipped with mlfuse: device name -> ``module:class`` (imported on first use)."""

_factories: dict[str, Callable[[], Target]] = {}
_instances: dict[str, Target] = {}
_default: list[str | None] = [None]


def _import(spec: str) -> Callable[[], Target]:
    def factory() -> Target:
        module, cls = spec.split(":")
        return getattr(importlib.import_module(module), cls)()

    return factory


for _name, _spec in _BUILTIN.items():
    _factories[_name] = _import(_spec)


def register_target(name: str, factory: Callable[[], Target]) -> None:
    """Make ``factory()`` the target of device ``name`` (built on first use)."""
    if not isinstance(name, str) or not name or not name.replace("_", "").isalnum():
        raise ValueError(f"device names are non-empty alphanumeric strings, got {name!r}")
    if name in _factories:
        raise ValueError(f"device '{name}' is already registered")
    _factories[name] = factory


def unregister_target(name: str) -> None:
    """Forget device ``name`` (its buffers stay usable through their own target object)."""
    if name not in _factories:
        raise ValueError(_unknown(name))
    del _factories[name]
    _instances.pop(name, None)
    if _default[0] == name:
        _default[0] = None


def devices() -> tuple[str, ...]:
    """The names of the registered devices."""
    return tuple(_factories)


def _unknown(name: object) -> str:
    return f"unknown device {name!r}; known devices: {', '.join(devices())}"


_TINYGRAD_NAMES = {"CLANG": "cpu", "LLVM": "cpu", "NV": "cuda", "PTX": "cuda"}


def device_name(device: str | Target | None) -> str:
    """The registered device name ``device`` means (None: the default device)."""
    if device is None:
        return get_default_device()
    if isinstance(device, Target):
        device = device.name
    if not isinstance(device, str):
        raise TypeError(f"a device is a name such as 'cpu', got {type(device).__name__}")
    given = device
    if device not in _factories:
        device = _TINYGRAD_NAMES.get(device, device.lower())  # tinygrad's "CPU", "NV"...
    if device not in _factories:
        name, colon, index = device.partition(":")
        if colon and name in _factories and index == "0":  # PyTorch's "cuda:0"
            return name
        if colon and name in _factories:
            raise ValueError(
                f"device {device!r}: mlfuse drives one device of each kind, index 0 "
                f"(known devices: {', '.join(devices())})"
            )
        raise ValueError(_unknown(given))
    return str(device)


def get_target(device: str | Target | None = None) -> Target:
    """The target of ``device`` (None: the default device), built once."""
    name = device_name(device)
    t = _instances.get(name)
    if t is None:
        t = _factories[name]()
        if t.name != name:
            raise ValueError(f"the target registered as '{name}' calls itself '{t.name}'")
        _instances[name] = t
    return t


def targets() -> list[Target]:
    """Every registered target (built if needed)."""
    return [get_target(name) for name in devices()]


def set_default_device(device: str | None) -> None:
    """Create tensors on ``device`` from now on (None: back to ``MLFUSE_DEVICE`` or cpu)."""
    _default[0] = None if device is None else device_name(device)


def get_default_device() -> str:
    """The device tensors are created on when no ``device=`` is given."""
    if _default[0] is not None:
        return _default[0]
    env = os.environ.get("MLFUSE_DEVICE")
    if env:
        if env not in _factories:
            known = ", ".join(devices())
            raise ValueError(f"MLFUSE_DEVICE={env!r} is not a known device (known: {known})")
        return env
    return "cpu"
