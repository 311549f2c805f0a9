"""The CPU's compiler: llvm dialect -> LLVM IR for the host -> O3 -> MCJIT -> kernels.

Kernels arrive lowered by the CPU's kernel pipeline: each entry point is an
``llvm.func`` marked ``mlfuse.kernel`` taking ``(ptr buffers, i64 lo, i64 hi)``
and carrying its buffer count, parallel extent and work estimate as
attributes (``cpu-entry-points``, ``convert-parallel-to-cpu``).
"""

from __future__ import annotations

import sys

import llvmlite.binding as lb
from xdsl.dialects import llvm
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.utils.exceptions import DiagnosticException

from mlfuse.lowering.kernel_to_loops import KERNEL_ATTR
from mlfuse.lowering.llvm_ir import to_llvm_ir
from mlfuse.targets.cpu.entry_points import NUM_BUFFERS_ATTR
from mlfuse.targets.cpu.parallel_to_cpu import EXTENT_ATTR, WORK_ATTR
from mlfuse.targets.cpu.objects import _entries, _lock, _target_machine, host
from mlfuse.targets.cpu.threads import CpuKernel  # noqa: F401 - the kernels it makes
from mlfuse.utils import debug_level


def llvm_ir(module: ModuleOp) -> str:
    """LLVM IR of the module's ``llvm.func`` ops for the host."""
    return to_llvm_ir(module, *host())


def _parse(ir: str) -> lb.ModuleRef:
    mod = lb.parse_assembly(ir)
    mod.verify()
    return mod


def optimize(mod: lb.ModuleRef) -> None:
    """LLVM's O3 for the host CPU, loop and SLP vectorizers on."""
    tm = _target_machine()
    pto = lb.PipelineTuningOptions(speed_level=3)
    pto.loop_vectorization = True
    pto.slp_vectorization = True
    pb = lb.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(mod, pb)


def optimized_ir(ir: str) -> str:
    """The module after O3 (for inspection and FileCheck tests)."""
    mod = _parse(ir)
    optimize(mod)
    return str(mod)


def assembly(ir: str) -> str:
    """The host assembly of the module after O3."""
    mod = _parse(ir)
    optimize(mod)
    return _target_machine().emit_assembly(mod)


def artifacts(module: ModuleOp) -> tuple[str, str, str]:
    """(LLVM IR, the IR after O3, assembly) of a lowered module: what the JIT compiles."""
    ir = llvm_ir(module)
    with _lock:
        mod = _parse(ir)
        optimize(mod)
        return ir, str(mod), _target_machine().emit_assembly(mod)


def _int_attr(f: llvm.FuncOp, key: str) -> int:
    a = f.attributes.get(key)
    if not isinstance(a, IntegerAttr):
        raise DiagnosticException(
            f"cpu: kernel @{f.sym_name.data} has no '{key}'; lower it with the CPU's kernel "
            "pipeline first"
        )
    return a.value.data


def compile_ir(ir: str, kernels: dict[str, tuple[int, int, int]]) -> dict[str, CpuKernel]:
    """Compile LLVM IR holding the entry points ``kernels`` (name -> (buffers, extent, work))."""
    with _lock:
        mod = _parse(ir)
        optimize(mod)
        engine = lb.create_mcjit_compiler(mod, _target_machine())
        objects: list[bytes] = []
        engine.set_object_cache(lambda m, data: objects.append(bytes(data)))
        engine.finalize_object()
        return _entries(
            engine.get_function_address, engine, kernels, objects[0] if objects else None
        )


def compile_module(module: ModuleOp) -> dict[str, CpuKernel]:
    """The kernel entry points of a lowered module, compiled, by name."""
    kernels = {
        f.sym_name.data: (
            _int_attr(f, NUM_BUFFERS_ATTR),
            _int_attr(f, EXTENT_ATTR),
            _int_attr(f, WORK_ATTR),
        )
        for f in module.ops
        if isinstance(f, llvm.FuncOp) and KERNEL_ATTR in f.attributes
    }
    ir = llvm_ir(module)
    if debug_level() >= 3:
        print(ir, file=sys.stderr)
    return compile_ir(ir, kernels)
