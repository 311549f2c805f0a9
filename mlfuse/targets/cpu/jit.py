"""The CPU's compiler: llvm dialect -> LLVM IR for the host -> O3 -> MCJIT -> kernels.

Kernels arrive lowered by the CPU's kernel pipeline: each entry point is an
``llvm.func`` marked ``mlfuse.kernel`` taking ``(ptr buffers, i64 lo, i64 hi)``
and carrying its buffer count, parallel extent and work estimate as
attributes (``cpu-entry-points``, ``convert-parallel-to-cpu``).
"""

from __future__ import annotations

import sys
import threading
from functools import cache

import llvmlite.binding as lb
from xdsl.dialects import llvm
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.utils.exceptions import DiagnosticException

from mlfuse.lowering.kernel_to_loops import KERNEL_ATTR
from mlfuse.lowering.llvm_ir import to_llvm_ir
from mlfuse.targets.cpu.entry_points import NUM_BUFFERS_ATTR
from mlfuse.targets.cpu.parallel_to_cpu import EXTENT_ATTR, WORK_ATTR
from mlfuse.targets.cpu.threads import CpuKernel
from mlfuse.utils import debug_level

_lock = threading.Lock()


@cache
def host() -> tuple[str, str]:
    """(triple, data layout) of the machine running mlfuse."""
    lb.initialize_native_target()
    lb.initialize_native_asmprinter()
    triple = lb.get_process_triple()
    tm = lb.Target.from_triple(triple).create_target_machine()
    return triple, str(tm.target_data)


def _target_machine() -> lb.TargetMachine:
    """A fresh host TargetMachine (MCJIT takes ownership of the one it gets)."""
    triple, _ = host()
    return lb.Target.from_triple(triple).create_target_machine(
        cpu=lb.get_host_cpu_name(),
        features=lb.get_host_cpu_features().flatten(),
        opt=3,
        codemodel="jitdefault",
    )


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
        engine.finalize_object()
        out = {}
        for name, (n, extent, work) in kernels.items():
            address = engine.get_function_address(name)
            if not address:
                raise RuntimeError(f"cpu: kernel {name} is missing from the compiled module")
            out[name] = CpuKernel(name, address, n, extent, work, engine)
        return out


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
