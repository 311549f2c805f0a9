"""The ``llvm`` dialect as LLVM IR text (via xDSL's llvmlite translation).

Only ``llvm.func`` ops are translated (a module may also hold the schedule).
The module gets the host's triple and data layout. Exposed to ``mlfuse-opt``
as the target ``-t llvm``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import IO

from xdsl.backend.llvm.convert import convert_module
from xdsl.context import Context
from xdsl.dialects import llvm
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException
from xdsl.utils.target import Target


@cache
def host() -> tuple[str, str]:
    """(triple, data layout) of the machine running mlfuse."""
    import llvmlite.binding as lb

    lb.initialize_native_target()
    lb.initialize_native_asmprinter()
    triple = lb.get_process_triple()
    tm = lb.Target.from_triple(triple).create_target_machine()
    return triple, str(tm.target_data)


def llvm_functions(module: ModuleOp) -> list[llvm.FuncOp]:
    return [op for op in module.ops if isinstance(op, llvm.FuncOp)]


def to_llvm_ir(module: ModuleOp) -> str:
    """LLVM IR for the module's ``llvm.func`` ops."""
    funcs = llvm_functions(module)
    if not funcs:
        raise DiagnosticException(
            "no llvm.func to translate; lower the kernels first (e.g. -p "
            "'convert-kernel-to-loops,convert-parallel-to-cpu,convert-scf-to-cf,"
            "convert-loops-to-llvm')"
        )
    only = ModuleOp([f.clone() for f in funcs])
    triple, layout = host()
    return str(convert_module(only, fallback_target_triple=triple, data_layout=layout))


@dataclass(frozen=True)
class LLVMIRTarget(Target):
    """``-t llvm``: print the LLVM IR of the module's llvm.func ops."""

    name = "llvm"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        output.write(to_llvm_ir(module))
