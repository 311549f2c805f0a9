"""The CUDA target: device memory, PTX from LLVM's NVPTX backend, launches through the driver."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from mlfuse import dtypes
from mlfuse.dtypes import DType
from mlfuse.targets import Buffer, CompiledKernel, Target


class CudaBuffer(Buffer):
    """``size`` elements in the GPU's global memory, at device address ``ptr``
    (None once freed).

    A buffer its target allocated (``owner``) goes back to that target when the
    last reference to it goes (into the pool of freed memory the next
    allocation of its size takes); a window (:meth:`CudaTarget.window`) owns
    nothing and keeps its base alive."""

    __slots__ = ("ptr", "owner")

    def __init__(
        self, device: str, size: int, dtype: DType, ptr: int, owner: CudaTarget | None = None
    ):
        super().__init__(device, size, dtype)
        self.ptr: int | None = ptr
        self.owner = owner

    def __del__(self) -> None:
        if self.owner is not None and self.ptr is not None:
            try:
                self.owner.free(self)
            except Exception:  # pragma: no cover - interpreter shutdown, a lost context
                pass


class CudaKernel(CompiledKernel):
    """A kernel loaded on the device: its function handle, launch shape, and the
    PTX of the module it was loaded from (kept for the disk cache)."""

    __slots__ = ("function", "grid", "block", "module", "ptx")

    def __init__(
        self, name: str, num_buffers: int, function, grid: int, block: int, module, ptx: str
    ):
        super().__init__(name, num_buffers)
        self.function, self.grid, self.block, self.module = function, grid, block, module
        self.ptx = ptx


def _pass(module: str, cls: str):
    def factory():
        import importlib

        return getattr(importlib.import_module(f"mlfuse.targets.cuda.{module}"), cls)

    return factory


def _emitter(name: str):
    def factory():
        from mlfuse.targets.cuda import emitters

        return emitters.EMITTERS[name]

    return factory


_PASSES = {
    "gpu-map-plan": _pass("map_plan", "GpuMapPlan"),
    "convert-gpu-to-nvvm": _pass("gpu_to_nvvm", "ConvertGpuToNvvm"),
}
_EMITTERS = {name: _emitter(name) for name in ("ptx", "nvptx-llvm")}


class CudaTarget(Target):
    """An NVIDIA GPU (device 0), through the CUDA driver.

    Kernels are mapped onto a grid (``gpu-map-plan``), lowered to loops whose
    block and thread indices come from NVVM's special registers, compiled by
    llvmlite's NVPTX backend to PTX for the device's compute capability, and
    loaded and launched through the driver (which compiles PTX to machine
    code). Launches are asynchronous and run in order; copies to the host wait
    for them. Nothing touches the GPU before the first allocation, compile or
    launch, so the target exists (and ``mlfuse-opt -t ptx`` works) everywhere.
    """

    name = "cuda"
    kernel_pipeline = (
        "legalize-float-types",
        "expand-math{f64-pow=true}",  # no libm on the GPU
        "merge-sums",
        "gpu-map-plan",
        "convert-kernel-to-loops{grid=true}",
        "expand-large-sincos",
        "convert-gpu-to-nvvm",
        "convert-scf-to-cf",
        "convert-loops-to-llvm",
    )

    reduce_split = {
        "outputs": 1024,
        "min-length": 1 << 15,
        "column-outputs": 1 << 16,
        "column-min-length": 1024,
        "column-min-part": 64,
    }
    """A reduce with fewer than 1024 results (a block each), each of 32K elements
    or more, runs as two, the first over about 1024 blocks: a full sum fills
    every multiprocessor instead of running on one. A column reduction gives
    each result one thread, so it splits below 65536 results of 1024 or more
    (a column sum of 4096 x 4096: 16 parts of 256 rows, 65536 threads)."""

    PAD_COPY_BYTES = 64 << 10
    """Convolutions whose zero-padded input is at least this big copy it padded
    first (:meth:`copy_padded_input`): the product then reads every window
    through one view, a contraction whose tiles are staged in shared memory
    (channels x taps x output columns), instead of one thread per output
    summing nine masked taps."""

    def copy_padded_input(self, nbytes: int) -> bool:
        return nbytes >= self.PAD_COPY_BYTES

    POOL_BYTES = 1 << 30
    """Freed buffers kept for reuse, at most this many bytes (``cuMemAlloc`` and
    ``cuMemFree`` synchronize the device and cost tens of microseconds)."""

    def __init__(self):
        self._pool: dict[int, list[int]] = {}
        self._pooled = 0
        self.allocated = 0  # bytes of the live buffers (windows excluded: their bases count)
        self.peak_allocated = 0
        self.peak_reserved = 0
        self._last: str | None = None
        self._driver = None

    def passes(self):
        return _PASSES

    def emitters(self):
        return _EMITTERS

    @property
    def driver(self):
        d = self._driver
        if d is None:  # opened on first use, then kept (a launch asks for it each time)
            from mlfuse.targets.cuda.driver import driver

            d = self._driver = driver()
        return d

    def available(self) -> bool:
        from mlfuse.targets.cuda.driver import available

        return available()

    def device_description(self) -> str:
        return self.driver.name

    def compile(self, module: ModuleOp) -> dict[str, CompiledKernel]:
        from mlfuse.targets.cuda import ptx

        text = ptx.ptx(module, self.driver.arch)
        shapes = {n: (s.num_buffers, s.grid, s.block) for n, s in ptx.launch_shapes(module).items()}
        return self._loaded(text, shapes)

    def _loaded(self, text: str, shapes: dict[str, tuple[int, int, int]]) -> dict[str, CudaKernel]:
        """The kernels ``shapes`` (name -> buffers, grid, block) of PTX ``text``, loaded."""
        drv = self.driver
        mod = drv.load(text)
        return {
            name: CudaKernel(name, n, drv.function(mod, name), grid, block, mod, text)
            for name, (n, grid, block) in shapes.items()
        }

    def toolchain(self) -> str:
        """What the PTX depends on besides the kernels' text: llvmlite and its LLVM,
        and the device's compute capability (empty, so nothing is cached, where
        there is no device)."""
        import llvmlite
        import llvmlite.binding as lb

        from mlfuse.targets.cuda import ptx
        from mlfuse.targets.cuda.driver import CudaUnavailable

        try:
            sm = self.driver.arch
        except CudaUnavailable:
            return ""
        llvm = f"llvmlite {llvmlite.__version__} llvm {lb.llvm_version_info}"
        return f"cuda {llvm} {sm} {ptx._features(sm)} min-blocks {ptx.min_blocks()}"

    def save(self, kernels) -> bytes | None:
        """Kernels of one compile: a JSON header (name -> buffers, grid, block), a
        NUL, their module's PTX (the driver compiles it again when it is loaded,
        from its own cache of machine code)."""
        import json

        ks = list(kernels.values())
        if not ks or not all(isinstance(k, CudaKernel) for k in ks):
            return None
        if any(k.ptx is not ks[0].ptx for k in ks):
            return None
        head = {k.name: [k.num_buffers, k.grid, k.block] for k in ks}
        return json.dumps(head).encode() + b"\0" + ks[0].ptx.encode()

    def load(self, data: bytes) -> dict[str, CompiledKernel]:
        import json

        head, sep, text = data.partition(b"\0")
        if not sep or not text:
            raise ValueError("cuda: not saved kernels")
        try:
            shapes = {
                str(k): (int(v[0]), int(v[1]), int(v[2])) for k, v in json.loads(head).items()
            }
        except (ValueError, TypeError, IndexError, AttributeError) as e:
            raise ValueError(f"cuda: not saved kernels ({e})") from None
        from mlfuse.targets.cuda.driver import CudaError

        try:
            return dict(self._loaded(text.decode(), shapes))
        except CudaError as e:  # PTX this driver no longer takes: compiled again
            raise ValueError(f"cuda: saved kernels do not load ({e})") from None

    def write_artifacts(self, module: ModuleOp, folder: Path) -> list[str]:
        """``nvptx.ll`` (the LLVM IR PTX is made from) and ``kernels.ptx`` for the device."""
        from mlfuse.targets.cuda import ptx

        sm = self.driver.arch
        (folder / "nvptx.ll").write_text(ptx.nvptx_ir(module, sm))
        (folder / "kernels.ptx").write_text(ptx.ptx(module, sm))
        return ["nvptx.ll", "kernels.ptx"]

    # -- memory -----------------------------------------------------------------
    def _mine(self, buf: Buffer, what: str) -> CudaBuffer:
        if not isinstance(buf, CudaBuffer) or buf.device != self.name:
            raise ValueError(f"{what}: {buf!r} is not a buffer of device '{self.name}'")
        if buf.ptr is None:
            raise ValueError(f"{what}: {buf!r} was freed")
        return buf

    def _count(self, nbytes: int) -> None:
        self.allocated += nbytes
        self.peak_allocated = max(self.peak_allocated, self.allocated)
        self.peak_reserved = max(self.peak_reserved, self.allocated + self._pooled)

    def alloc(self, size: int, dtype: DType) -> CudaBuffer:
        nbytes = max(size * dtype.itemsize, 1)
        free = self._pool.get(nbytes)
        if free:
            self._pooled -= nbytes
            self._count(nbytes)
            return CudaBuffer(self.name, size, dtype, free.pop(), self)
        from mlfuse.targets.cuda.driver import CudaError

        try:
            ptr = self.driver.alloc(nbytes)
        except CudaError:
            if not self._pooled:
                raise
            self.trim()  # the pool's buffers are of other sizes: give them back and retry
            ptr = self.driver.alloc(nbytes)
        self._count(nbytes)
        return CudaBuffer(self.name, size, dtype, ptr, self)

    def trim(self) -> None:
        """Give the pool's memory back to the driver."""
        pool, self._pool, self._pooled = self._pool, {}, 0
        for ptrs in pool.values():
            for ptr in ptrs:
                self.driver.free(ptr)

    def free(self, buf: Buffer) -> None:
        b = self._mine(buf, "free")
        ptr, b.ptr = b.ptr, None
        assert ptr is not None
        if b.base is not None:  # a window: the memory is its base's
            return
        nbytes = max(b.nbytes, 1)
        self.allocated -= nbytes
        if self._pooled + nbytes <= self.POOL_BYTES:
            self._pool.setdefault(nbytes, []).append(ptr)
            self._pooled += nbytes
        else:
            self.driver.free(ptr)

    window_alignment = 256
    """cuMemAlloc's alignment: a window starts where an allocation could."""

    def window(self, buf: Buffer, offset: int, size: int) -> CudaBuffer:
        self._window_of(buf, offset, size)
        b = self._mine(buf, "window")
        w = CudaBuffer(self.name, size, b.dtype, b.ptr + offset * b.dtype.itemsize)  # type: ignore[operator]
        w.base, w.base_offset = buf, offset
        return w

    def from_numpy(self, array: np.ndarray) -> CudaBuffer:
        host = np.ascontiguousarray(array).reshape(-1)
        buf = self.alloc(host.size, dtypes.from_numpy(host.dtype))
        if host.size:
            self.driver.to_device(buf.ptr, host.ctypes.data, host.nbytes)  # type: ignore[arg-type]
        return buf

    def to_numpy(self, buf: Buffer) -> np.ndarray:
        b = self._mine(buf, "to_numpy")
        out = np.empty(b.size, dtype=b.dtype.np)
        if b.size:
            self._checked(lambda: self.driver.to_host(out.ctypes.data, b.ptr, out.nbytes))  # type: ignore[arg-type]
        return out

    def copy(self, dst: Buffer, src: Buffer) -> None:
        d, s = self._mine(dst, "copy"), self._mine(src, "copy")
        if d.size != s.size or d.dtype != s.dtype:
            raise ValueError(f"copy: {src!r} does not fit {dst!r}")
        if d.size:
            self.driver.device_copy(d.ptr, s.ptr, d.nbytes)  # type: ignore[arg-type]

    # -- kernels ------------------------------------------------------------------
    def launch(self, kernel: CompiledKernel, buffers: Sequence[Buffer]) -> None:
        self._check_launch(kernel, CudaKernel, buffers, "the GPU")
        ptrs = []
        for b in buffers:
            if not isinstance(b, CudaBuffer) or b.device != self.name or b.ptr is None:
                self._mine(b, f"launch of {kernel.name}")  # says what is wrong with it
            ptrs.append(b.ptr)
        self.driver.launch(kernel.function, kernel.name, kernel.grid, kernel.block, ptrs)
        self._last = kernel.name

    def _checked(self, work) -> None:
        """Run ``work``; a failure there may be an earlier launch's, reported late."""
        from mlfuse.targets.cuda.driver import CudaError

        try:
            work()
        except CudaError as e:
            last = f" (the last kernel launched was {self._last})" if self._last else ""
            raise CudaError(f"{e}{last}") from None

    def synchronize(self) -> None:
        self._checked(self.driver.synchronize)
