"""The CPU back end: LLVM IR -> O3 -> MCJIT -> callable kernels.

Kernels have the signature ``void k(T* buf0, ..., i64 lo, i64 hi)``: the
runtime splits ``[0, parallel_extent)`` into chunks and calls the kernel once
per chunk, in a thread pool (ctypes releases the GIL during the call).
"""

from __future__ import annotations

import ctypes
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cache

import llvmlite.binding as lb

from mlfuse.lowering.llvm_ir import host

MIN_POINTS_PER_THREAD = 1 << 15
"""Below this many iteration points per thread a kernel runs on one thread."""


@dataclass
class CompiledKernel:
    name: str
    fn: ctypes._CFuncPtr  # type: ignore[name-defined]
    num_buffers: int
    parallel_extent: int
    points: int  # iteration points of the whole space (work estimate)
    engine: object = field(repr=False)

    def __call__(self, pointers: list[int]) -> None:
        extent = self.parallel_extent
        threads = num_threads()
        chunks = min(threads, extent, max(1, self.points // MIN_POINTS_PER_THREAD))
        if chunks <= 1:
            self.fn(*pointers, 0, extent)
            return
        step = -(-extent // chunks)
        futures = [
            _pool().submit(self.fn, *pointers, lo, min(lo + step, extent))
            for lo in range(0, extent, step)
        ]
        for f in futures:
            f.result()


@cache
def num_threads() -> int:
    env = os.environ.get("MLFUSE_THREADS")
    if env:
        return max(1, int(env))
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


@cache
def _pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=num_threads(), thread_name_prefix="mlfuse")


_lock = threading.Lock()


def _target_machine() -> lb.TargetMachine:
    """A fresh host TargetMachine (MCJIT takes ownership of the one it gets)."""
    triple, _ = host()
    return lb.Target.from_triple(triple).create_target_machine(
        cpu=lb.get_host_cpu_name(),
        features=lb.get_host_cpu_features().flatten(),
        opt=3,
        codemodel="jitdefault",
    )


def optimize(mod: lb.ModuleRef) -> None:
    tm = _target_machine()
    pto = lb.PipelineTuningOptions(speed_level=3)
    pto.loop_vectorization = True
    pto.slp_vectorization = True
    pb = lb.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(mod, pb)


def compile_ir(ir: str, kernels: dict[str, tuple[int, int, int]]) -> dict[str, CompiledKernel]:
    """Compile LLVM IR holding ``kernels`` (name -> (buffers, extent, points))."""
    with _lock:
        mod = lb.parse_assembly(ir)
        mod.verify()
        optimize(mod)
        engine = lb.create_mcjit_compiler(mod, _target_machine())
        engine.finalize_object()
        out = {}
        for name, (nbuf, extent, points) in kernels.items():
            addr = engine.get_function_address(name)
            proto = ctypes.CFUNCTYPE(
                None, *([ctypes.c_void_p] * nbuf), ctypes.c_int64, ctypes.c_int64
            )
            out[name] = CompiledKernel(name, proto(addr), nbuf, extent, points, engine)
        return out


def optimized_ir(ir: str) -> str:
    """The module after O3 (for inspection and FileCheck tests)."""
    mod = lb.parse_assembly(ir)
    mod.verify()
    optimize(mod)
    return str(mod)
