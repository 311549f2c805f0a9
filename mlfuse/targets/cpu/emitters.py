"""``mlfuse-opt`` targets of the CPU: LLVM IR for the host, before and after O3, and assembly.

mlfuse-opt kernels.mlir -p '<the CPU kernel pipeline>' -t llvm      # or llvm-opt, asm
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException
from xdsl.utils.target import Target

from mlfuse.lowering.kernel_to_loops import GRID_ATTR
from mlfuse.lowering.llvm_ir import llvm_functions


def _host_ir(module: ModuleOp) -> str:
    from mlfuse.targets.cpu.jit import llvm_ir
    from mlfuse.targets.cpu.target import CpuTarget

    funcs = llvm_functions(module)
    if not funcs:
        raise DiagnosticException(
            "no llvm.func to translate; lower the kernels first (e.g. -p "
            f"'{','.join(CpuTarget.kernel_pipeline)}')"
        )
    for f in funcs:
        if GRID_ATTR in f.attributes:  # NVVM intrinsics: the host's backend cannot select them
            raise DiagnosticException(
                f"@{f.sym_name.data} was lowered for a GPU grid (the CUDA pipeline); -t ptx or "
                "-t nvptx-llvm print it, -t llvm/llvm-opt/asm take the CPU's pipeline's output"
            )
    return llvm_ir(module)


@dataclass(frozen=True)
class LLVMIRTarget(Target):
    """``-t llvm``: LLVM IR of the module's llvm.func ops, for the host."""

    name = "llvm"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        output.write(_host_ir(module))


@dataclass(frozen=True)
class OptimizedLLVMIRTarget(Target):
    """``-t llvm-opt``: the LLVM IR after LLVM's O3 for the host CPU."""

    name = "llvm-opt"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        from mlfuse.targets.cpu.jit import optimized_ir

        output.write(optimized_ir(_host_ir(module)))


@dataclass(frozen=True)
class AssemblyTarget(Target):
    """``-t asm``: the host CPU's assembly after O3."""

    name = "asm"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        from mlfuse.targets.cpu.jit import assembly

        output.write(assembly(_host_ir(module)))


EMITTERS: dict[str, type[Target]] = {
    t.name: t for t in (LLVMIRTarget, OptimizedLLVMIRTarget, AssemblyTarget)
}
