"""Host memory standing in for a GPU's: what the ``cuda_sim`` and ``cuda_emu`` devices share.

Both run the CUDA target's kernels on the CPU, so their buffers are host
arrays and the front end must decide for them as it does for the GPU (the
same reduce splits, padded convolution copies, window alignment and passes).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from mlfuse.dtypes import DType
from mlfuse.targets import Buffer, CompiledKernel, Target
from mlfuse.targets.cuda.target import _PASSES, CudaTarget


class HostBuffer(Buffer):
    """A buffer of an emulated GPU: a flat host array (None once freed)."""

    __slots__ = ("array",)

    def __init__(self, device: str, array: np.ndarray, dtype: DType):
        super().__init__(device, array.size, dtype)
        self.array: np.ndarray | None = array


class HostMemoryTarget(Target):
    """A device whose memory is host arrays and whose kernels are the CUDA target's."""

    reduce_split = CudaTarget.reduce_split
    window_alignment = 256  # cuMemAlloc's, as the CUDA target's

    def copy_padded_input(self, nbytes: int) -> bool:
        return nbytes >= CudaTarget.PAD_COPY_BYTES

    def passes(self):
        return _PASSES

    def _mine(self, buf: Buffer, what: str) -> np.ndarray:
        if not isinstance(buf, HostBuffer) or buf.device != self.name:
            raise ValueError(f"{what}: {buf!r} is not a buffer of device '{self.name}'")
        if buf.array is None:
            raise ValueError(f"{what}: {buf!r} was freed")
        return buf.array

    def free(self, buf: Buffer) -> None:
        self._mine(buf, "free")
        buf.array = None  # type: ignore[attr-defined]

    def window(self, buf: Buffer, offset: int, size: int) -> HostBuffer:
        self._window_of(buf, offset, size)
        w = HostBuffer(self.name, self._mine(buf, "window")[offset : offset + size], buf.dtype)
        w.base, w.base_offset = buf, offset
        return w

    def to_numpy(self, buf: Buffer) -> np.ndarray:
        return self._mine(buf, "to_numpy").copy()

    def copy(self, dst: Buffer, src: Buffer) -> None:
        d, s = self._mine(dst, "copy"), self._mine(src, "copy")
        if d.size != s.size or d.dtype != s.dtype:
            raise ValueError(f"copy: {src!r} does not fit {dst!r}")
        np.copyto(d, s)

    def _launch_arrays(
        self, kernel: CompiledKernel, kind: type, buffers: Sequence[Buffer]
    ) -> list[np.ndarray]:
        """The arrays of a launch of ``kernel`` (which must be a ``kind``) on ``buffers``."""
        self._check_launch(kernel, kind, buffers, self.name)
        return [self._mine(b, f"launch of {kernel.name}") for b in buffers]

    def synchronize(self) -> None:
        """Launches return when they are done."""
