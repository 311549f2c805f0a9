"""The CPU's machine code as bytes and back, and what it depends on.

Kept apart from the compiler (:mod:`mlfuse.targets.cpu.jit`, which needs the
xDSL dialects) so that loading kernels from the disk cache imports only
llvmlite.
"""

from __future__ import annotations

import threading
from functools import cache

import llvmlite.binding as lb

from mlfuse.targets.cpu.threads import CpuKernel

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


def _entries(engine, kernels: dict[str, tuple[int, int, int]], obj: bytes | None):
    out = {}
    for name, (n, extent, work) in kernels.items():
        address = engine.get_function_address(name)
        if not address:
            raise RuntimeError(f"cpu: kernel {name} is missing from the compiled module")
        k = CpuKernel(name, address, n, extent, work, engine)
        k.object_code = obj
        out[name] = k
    return out


@cache
def host_vectors() -> tuple[int, int]:
    """(bytes per vector register, number of vector registers) of the host."""
    f = lb.get_host_cpu_features()
    if f.get("avx512f"):
        return 64, 32
    if f.get("avx2") or f.get("avx"):
        return 32, 16
    return 16, 16


@cache
def toolchain() -> str:
    """What the machine code depends on besides the IR: LLVM, llvmlite, the CPU."""
    import llvmlite

    triple, layout = host()
    return (
        f"cpu llvmlite {llvmlite.__version__} llvm {lb.llvm_version_info} {triple} {layout} "
        f"{lb.get_host_cpu_name()} {lb.get_host_cpu_features().flatten()}"
    )


def save(kernels) -> bytes | None:
    """Kernels of one compile as bytes: a JSON header (name -> buffers, extent,
    work), a NUL, the object file MCJIT made."""
    import json

    ks = list(kernels.values())
    if not ks or not all(isinstance(k, CpuKernel) for k in ks):
        return None
    obj = ks[0].object_code
    if obj is None or any(k.engine is not ks[0].engine for k in ks):
        return None
    head = {k.name: [k.num_buffers, k.parallel_extent, k.work] for k in ks}
    return json.dumps(head).encode() + b"\0" + obj


def load(data: bytes) -> dict[str, CpuKernel]:
    """The kernels :func:`save` saved, linked into a new MCJIT engine."""
    import json

    head, sep, obj = data.partition(b"\0")
    if not sep or not obj:
        raise ValueError("cpu: not saved kernels")
    try:
        kernels = {str(k): (int(v[0]), int(v[1]), int(v[2])) for k, v in json.loads(head).items()}
    except (ValueError, TypeError, IndexError, AttributeError) as e:
        raise ValueError(f"cpu: not saved kernels ({e})") from None
    with _lock:
        engine = lb.create_mcjit_compiler(lb.parse_assembly(""), _target_machine())
        engine.add_object_file(lb.ObjectFileRef.from_data(obj))
        engine.finalize_object()
        return _entries(engine, kernels, obj)
