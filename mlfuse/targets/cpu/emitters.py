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

from mlfuse.lowering.llvm_ir import llvm_functions


def _host_ir(module: ModuleOp) -> str:
    from mlfuse.targets.cpu.jit import llvm_ir
    from mlfuse.targets.cpu.target import CpuTarget

    if not llvm_functions(module):
        raise DiagnosticException(
            "no llvm.func to translate; lower the kernels first (e.g. -p "
            f"'{','.join(CpuTarget.kernel_pipeline)}')"
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
