"""``mlfuse-opt`` targets of the GPU: PTX and the LLVM IR it is made from.

mlfuse-opt kernels.mlir -p '<the CUDA kernel pipeline>' -t ptx       # or nvptx-llvm

PTX is made for ``MLFUSE_CUDA_ARCH`` (default ``sm_90``); no GPU is needed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException
from xdsl.utils.target import Target

from mlfuse.lowering.llvm_ir import llvm_functions


def _lowered(module: ModuleOp) -> ModuleOp:
    from mlfuse.targets.cuda.target import CudaTarget

    if not llvm_functions(module):
        raise DiagnosticException(
            "no llvm.func to translate; lower the kernels first (e.g. -p "
            f"'{','.join(CudaTarget.kernel_pipeline)}')"
        )
    return module


def _checked(make):
    try:
        return make()
    except ValueError as e:
        raise DiagnosticException(str(e)) from None


@dataclass(frozen=True)
class PtxTarget(Target):
    """``-t ptx``: PTX for the module's GPU kernels."""

    name = "ptx"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        from mlfuse.targets.cuda.ptx import ptx

        output.write(_checked(lambda: ptx(_lowered(module))))


@dataclass(frozen=True)
class NvptxIRTarget(Target):
    """``-t nvptx-llvm``: the LLVM IR for NVPTX (before O3) PTX is made from."""

    name = "nvptx-llvm"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        from mlfuse.targets.cuda.ptx import nvptx_ir

        output.write(_checked(lambda: nvptx_ir(_lowered(module))))


EMITTERS: dict[str, type[Target]] = {t.name: t for t in (PtxTarget, NvptxIRTarget)}
