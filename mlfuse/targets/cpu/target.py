"""The CPU target: host memory, llvmlite's MCJIT at O3, a thread pool for launches."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from mlfuse import dtypes
from mlfuse.dtypes import DType
from mlfuse.targets import Buffer, CompiledKernel, Target
from mlfuse.targets.cpu.buffer import ALIGN, CpuBuffer
from mlfuse.targets.cpu.threads import CpuKernel


def _parallel_to_cpu():
    from mlfuse.targets.cpu.parallel_to_cpu import ConvertParallelToCpu

    return ConvertParallelToCpu


def _entry_points():
    from mlfuse.targets.cpu.entry_points import CpuEntryPoints

    return CpuEntryPoints


def _emitter(name: str):
    def factory():
        from mlfuse.targets.cpu import emitters

        return emitters.EMITTERS[name]

    return factory


def _optimize_plan():
    from mlfuse.targets.cpu.optimize_plan import CpuOptimizePlan

    return CpuOptimizePlan


_PASSES = {
    "cpu-optimize-plan": _optimize_plan,
    "convert-parallel-to-cpu": _parallel_to_cpu,
    "cpu-entry-points": _entry_points,
}
_EMITTERS = {name: _emitter(name) for name in ("llvm", "llvm-opt", "asm")}


class CpuTarget(Target):
    """The machine running mlfuse.

    Kernels are lowered to loops whose parallel loop is split into ``[lo, hi)``
    chunks, compiled for the host CPU's features at O3, and called through an
    array of buffer pointers (``void k(ptr buffers, i64 lo, i64 hi)``) from a
    thread pool. Buffers are numpy arrays; launches are synchronous.
    """

    name = "cpu"
    kernel_pipeline = (
        "legalize-float-types",
        "expand-math",
        "merge-sums",
        "cpu-optimize-plan",
        "convert-kernel-to-loops",
        "expand-large-sincos",
        "convert-parallel-to-cpu",
        "convert-scf-to-cf",
        "convert-loops-to-llvm",
        "cpu-entry-points",
    )

    def passes(self):
        return _PASSES

    def emitters(self):
        return _EMITTERS

    def compile(self, module: ModuleOp) -> dict[str, CompiledKernel]:
        from mlfuse.targets.cpu.jit import compile_module

        return dict(compile_module(module))

    def toolchain(self) -> str:
        from mlfuse.targets.cpu.objects import toolchain

        return toolchain()

    def save(self, kernels) -> bytes | None:
        from mlfuse.targets.cpu.objects import save

        return save(kernels)

    def load(self, data: bytes) -> dict[str, CompiledKernel]:
        from mlfuse.targets.cpu.objects import load

        return dict(load(data))

    def write_artifacts(self, module: ModuleOp, folder: Path) -> list[str]:
        """``llvm.ll`` (LLVM IR for the host), ``llvm-O3.ll`` (after O3) and ``kernels.s``."""
        from mlfuse.targets.cpu.jit import artifacts

        files = dict(zip(("llvm.ll", "llvm-O3.ll", "kernels.s"), artifacts(module)))
        for name, text in files.items():
            (folder / name).write_text(text)
        return list(files)

    PACK_BYTES = 8 << 20
    """With 32 vector registers (AVX-512), right operands of matrix products at
    least this big are packed into panels. Below it a panel's rows stay in cache
    as they are; above it rows 16 KiB apart fall into the same cache sets
    (measured on a Zen 4 with 256x1024x4096, 256x4096x1024 and 1024^3 float32
    products: +50% for the 16 MiB operands, nothing for the 4 MiB one)."""

    PACK_BYTES_16_REGISTERS = 1 << 20
    """The same threshold with 16 vector registers (AVX2): the register block is
    16 floats wide, so a panel row is one cache line and an unpacked panel of a
    1024-wide operand is 1024 lines 4 KiB apart, all in one L1 set and 16 of L2's,
    read from L3 for every block of A (measured on a Zen 3: 1024^3 float32 30 ->
    13 ms, 1024x256x1024 7.4 -> 4.1, 512^3 2.9 -> 2.5; 256^3, 256 KiB, is faster
    unpacked: the copy costs more than the misses)."""

    reduce_split = {
        "outputs": 64,
        "min-length": 1 << 22,
        "column-outputs": 64,
        "column-min-length": 1 << 22,
    }
    """Reduces of 4M elements or more per result, with fewer than 64 results, run
    as two, the first parallel over the cores (on a 2-core Zen 3, a float32 sum
    of 16M elements 3.3 -> 2.0 ms, of 8M 1.7 -> 1.1, of 4M the same); shorter
    ones are faster as one kernel."""

    PAD_COPY_BYTES = 64 << 10
    """Convolutions whose zero-padded input is at least this big copy it padded
    first (:meth:`copy_padded_input`) and read their windows through one view with
    plain vector loads; smaller ones read nine (k x k) masked windows of the padded
    view and stay one kernel. On a Zen 3, float32 3x3 convs: 8x64x56x56 with 64
    outputs 16 -> 12 ms, 1x64x56x56 4.6 -> 2.5 ms, 1x256x14x14 with 256 outputs
    33 -> 4.9 ms (the copies included; that one also packs its weights)."""

    def copy_padded_input(self, nbytes: int) -> bool:
        return nbytes >= self.PAD_COPY_BYTES

    def pack_conv_weights(self, out_width: int, out_channels: int, itemsize: int) -> bool:
        from mlfuse.targets.cpu.objects import host_vectors

        lanes = host_vectors()[0] // itemsize
        return out_width % lanes != 0 and out_channels % lanes == 0

    PACK_ROWS_16_REGISTERS = 64
    """With 16 vector registers, a product of fewer rows than this reads its
    right operand as it is: each panel is read rows/MR times, too few to repay
    the copy (a matrix-vector product would read the operand three times
    instead of once)."""

    def contraction_panel(
        self, k: int, n: int, itemsize: int, rows: int | None = None
    ) -> int | None:
        """The register block's width (NR vectors, as cpu-optimize-plan picks it)."""
        from mlfuse.targets.cpu.objects import host_vectors

        return self.panel_for(k, n, itemsize, *host_vectors(), rows=rows)

    @classmethod
    def panel_for(
        cls,
        k: int,
        n: int,
        itemsize: int,
        vector_bytes: int,
        registers: int,
        rows: int | None = None,
    ) -> int | None:
        """:meth:`contraction_panel` for a host with ``registers`` vector registers
        of ``vector_bytes`` bytes."""
        lanes = max(1, vector_bytes // itemsize)
        panel = lanes * (4 if registers >= 32 else 2)
        if registers >= 32:
            threshold = cls.PACK_BYTES
        else:
            threshold = cls.PACK_BYTES_16_REGISTERS
            if rows is not None and rows < cls.PACK_ROWS_16_REGISTERS:
                return None
        if k * n * itemsize < threshold or n % panel or n == panel:
            return None
        return panel

    # -- memory -----------------------------------------------------------------
    def _mine(self, buf: Buffer, what: str) -> CpuBuffer:
        if not isinstance(buf, CpuBuffer) or buf.device != self.name:
            raise ValueError(f"{what}: {buf!r} is not a buffer of device '{self.name}'")
        return buf

    def alloc(self, size: int, dtype: DType) -> CpuBuffer:
        return CpuBuffer.empty(size, dtype, self.name)

    def free(self, buf: Buffer) -> None:
        self._mine(buf, "free").release()

    def from_numpy(self, array: np.ndarray) -> CpuBuffer:
        dt = dtypes.from_numpy(array.dtype)
        buf = CpuBuffer.empty(array.size, dt, self.name)
        np.copyto(buf.host(), np.asarray(array).reshape(-1))
        return buf

    window_alignment = ALIGN

    def window(self, buf: Buffer, offset: int, size: int) -> CpuBuffer:
        self._window_of(buf, offset, size)
        w = CpuBuffer(self._mine(buf, "window").host()[offset : offset + size], self.name)
        w.base, w.base_offset = buf, offset
        return w

    def share(self, buf: Buffer) -> np.ndarray:
        cb = self._mine(buf, "share")
        arr = cb.host()
        cb.raw = None  # shared memory never goes back to the pool: the array keeps it
        return arr

    def adopt(self, array: np.ndarray) -> CpuBuffer:
        flat = array.reshape(-1) if array.flags.c_contiguous else None
        if flat is None or array.dtype.itemsize and array.ctypes.data % array.dtype.itemsize:
            return self.from_numpy(array)
        return CpuBuffer(flat, self.name)

    def to_numpy(self, buf: Buffer) -> np.ndarray:
        return self._mine(buf, "to_numpy").host().copy()

    def copy(self, dst: Buffer, src: Buffer) -> None:
        d, s = self._mine(dst, "copy"), self._mine(src, "copy")
        if d.size != s.size or d.dtype != s.dtype:
            raise ValueError(f"copy: {src!r} does not fit {dst!r}")
        np.copyto(d.host(), s.host())

    # -- kernels ------------------------------------------------------------------
    def launch(self, kernel: CompiledKernel, buffers: Sequence[Buffer]) -> None:
        self._check_launch(kernel, CpuKernel, buffers, "the CPU")
        try:
            pointers = [b.ptr for b in buffers]  # type: ignore[attr-defined]
        except AttributeError:
            raise ValueError(f"launch of {kernel.name}: buffers must be CPU buffers") from None
        if None in pointers:
            raise ValueError(f"launch of {kernel.name}: buffer {pointers.index(None)} was freed")
        kernel(kernel.array_type(*pointers))

    def synchronize(self) -> None:
        """Nothing to wait for: CPU launches return when they are done."""

    def capability(self) -> str:
        """PyTorch's name of the widest vector unit LLVM targets on this CPU
        (``"AVX512"``, ``"AVX2"`` or ``"DEFAULT"``)."""
        import llvmlite.binding as lb

        features = lb.get_host_cpu_features()
        if features.get("avx512f"):
            return "AVX512"
        return "AVX2" if features.get("avx2") else "DEFAULT"

    def threads(self) -> int:
        from mlfuse.targets.cpu.threads import num_threads

        return num_threads()

    def set_threads(self, n: int) -> None:
        from mlfuse.targets.cpu.threads import set_num_threads

        set_num_threads(n)
