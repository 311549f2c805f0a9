"""The ``llvm`` dialect as LLVM IR text (via xDSL's llvmlite translation), for any target.

Only ``llvm.func`` and ``llvm.mlir.global`` ops are translated (a module may
also hold the schedule).
The caller gives the target triple and data layout: the CPU its host's, a GPU
an NVPTX triple.
"""

from __future__ import annotations

from xdsl.backend.llvm.convert import convert_module
from xdsl.dialects import llvm
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException


def llvm_functions(module: ModuleOp) -> list[llvm.FuncOp]:
    return [op for op in module.ops if isinstance(op, llvm.FuncOp)]


def to_llvm_module(module: ModuleOp, triple: str, data_layout: str):
    """The module's ``llvm.func`` and ``llvm.mlir.global`` ops as an llvmlite ``ir.Module``."""
    funcs = llvm_functions(module)
    if not funcs:
        raise DiagnosticException(
            "no llvm.func to translate; lower the kernels to the llvm dialect first (with a "
            "target's kernel pipeline)"
        )
    globs = [op.clone() for op in module.ops if isinstance(op, llvm.GlobalOp)]
    only = ModuleOp([*globs, *(f.clone() for f in funcs)])
    ir = convert_module(only, fallback_target_triple=triple, data_layout=data_layout)
    for g in globs:  # xDSL's translation drops a global's alignment
        if g.alignment is not None:
            ir.get_global(g.sym_name.data).align = g.alignment.value.data
    for f in funcs:  # xDSL's translation ignores linkage and inlining hints
        fn = ir.get_global(f.sym_name.data)
        linkage = f.linkage.linkage.data
        if linkage != "external":
            fn.linkage = linkage
        # printed in the attribute dictionary, xDSL parses no_inline back as an attribute
        if f.no_inline is not None or "no_inline" in f.attributes:
            fn.attributes.add("noinline")
    return ir


def to_llvm_ir(module: ModuleOp, triple: str, data_layout: str) -> str:
    """LLVM IR text for the module's ``llvm.func`` ops, for ``triple`` and ``data_layout``."""
    return str(to_llvm_module(module, triple, data_layout))
