"""The CPU's machine code as bytes and back, and what it depends on.

Kept apart from the compiler (:mod:`mlfuse.targets.cpu.jit`, which needs the
xDSL dialects) so that loading kernels from the disk cache imports neither
xDSL nor, on x86-64 Linux, ``llvmlite.binding``: objects are linked by
:mod:`elf_loader`, and the toolchain description the cache keys need (LLVM
version, CPU name and features, which only LLVM can tell) is kept in the disk
cache under a fingerprint of the machine that is cheap to compute.
"""

from __future__ import annotations

import os
import platform
import sys
import threading
from functools import cache

from mlfuse.targets.cpu.threads import CpuKernel

_lock = threading.Lock()


def _lb():
    import llvmlite.binding as lb

    return lb


@cache
def host() -> tuple[str, str]:
    """(triple, data layout) of the machine running mlfuse."""
    lb = _lb()
    lb.initialize_native_target()
    lb.initialize_native_asmprinter()
    triple = lb.get_process_triple()
    tm = lb.Target.from_triple(triple).create_target_machine()
    return triple, str(tm.target_data)


def _target_machine():
    """A fresh host TargetMachine (MCJIT takes ownership of the one it gets)."""
    lb = _lb()
    triple, _ = host()
    return lb.Target.from_triple(triple).create_target_machine(
        cpu=lb.get_host_cpu_name(),
        features=lb.get_host_cpu_features().flatten(),
        opt=3,
        codemodel="jitdefault",
    )


def _entries(address, owner, kernels: dict[str, tuple[int, int, int]], obj: bytes | None):
    """The kernels ``kernels`` (name -> (buffers, extent, work)) at ``address(name)``
    in code that ``owner`` (an MCJIT engine, a loaded object) keeps alive."""
    out = {}
    for name, (n, extent, work) in kernels.items():
        at = address(name)
        if not at:
            raise RuntimeError(f"cpu: kernel {name} is missing from the compiled module")
        k = CpuKernel(name, at, n, extent, work, owner)
        k.object_code = obj
        out[name] = k
    return out


@cache
def host_vectors() -> tuple[int, int]:
    """(bytes per vector register, number of vector registers) of the host."""
    f = _features()
    if f.get("avx512f"):
        return 64, 32
    if f.get("avx2") or f.get("avx"):
        return 32, 16
    return 16, 16


def _features() -> dict[str, bool]:
    """The host CPU's features as LLVM names them (``avx2``: True)."""
    flat = toolchain().rpartition(" ")[2]
    return {f[1:]: f[0] == "+" for f in flat.split(",") if f[:1] in "+-" and len(f) > 1}


def _machine() -> str | None:
    """A cheap fingerprint of what the toolchain description depends on: the
    llvmlite installation and the CPU as the kernel reports it (None where
    there is no /proc/cpuinfo: the description is then asked of LLVM)."""
    try:
        with open("/proc/cpuinfo", "rb") as f:
            info = f.read(1 << 16).split(b"\n\n", 1)[0]
    except OSError:
        return None
    keep = (b"vendor_id", b"cpu family", b"model", b"model name", b"stepping", b"flags")
    cpu = b"\n".join(ln for ln in info.splitlines() if ln.split(b":")[0].strip() in keep)
    try:
        import llvmlite

        st = os.stat(os.path.join(os.path.dirname(llvmlite.__file__), "binding"))
        lib = f"{llvmlite.__version__} {llvmlite.__file__} {st.st_mtime_ns}"
    except (ImportError, OSError):
        return None
    return f"{sys.platform} {platform.machine()} llvmlite {lib}\n{cpu.decode(errors='replace')}"


@cache
def toolchain() -> str:
    """What the machine code depends on besides the IR: LLVM, llvmlite, the CPU.
    Ends with LLVM's comma-separated feature list of the host CPU."""
    from mlfuse.runtime import disk_cache

    machine = _machine() if disk_cache.enabled() else None
    if machine is not None:  # (and the code that wrote the description)
        machine = f"{disk_cache.code_version()}\n{machine}"
    if machine is not None:
        known = disk_cache.get("toolchain", machine)
        if known is not None:
            return known.decode()
    import llvmlite

    lb = _lb()
    triple, layout = host()
    chain = (
        f"cpu llvmlite {llvmlite.__version__} llvm {lb.llvm_version_info} {triple} {layout} "
        f"{lb.get_host_cpu_name()} {lb.get_host_cpu_features().flatten()}"
    )
    if machine is not None:
        disk_cache.put("toolchain", machine, chain.encode())
    return chain


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
    """The kernels :func:`save` saved, linked into this process: by
    :mod:`elf_loader` where it can (no LLVM needed), else by a new MCJIT engine."""
    import json

    from mlfuse.targets.cpu import elf_loader

    head, sep, obj = data.partition(b"\0")
    if not sep or not obj:
        raise ValueError("cpu: not saved kernels")
    try:
        kernels = {str(k): (int(v[0]), int(v[1]), int(v[2])) for k, v in json.loads(head).items()}
    except (ValueError, TypeError, IndexError, AttributeError) as e:
        raise ValueError(f"cpu: not saved kernels ({e})") from None
    if elf_loader.supported_host():
        try:
            linked = elf_loader.LoadedObject(obj)
        except elf_loader.UnsupportedObject:
            pass
        else:
            return _entries(linked.address, linked, kernels, obj)
    lb = _lb()
    with _lock:
        engine = lb.create_mcjit_compiler(lb.parse_assembly(""), _target_machine())
        engine.add_object_file(lb.ObjectFileRef.from_data(obj))
        engine.finalize_object()
        return _entries(engine.get_function_address, engine, kernels, obj)
