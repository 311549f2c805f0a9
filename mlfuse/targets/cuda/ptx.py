"""The GPU's compiler: llvm dialect -> LLVM IR for NVPTX -> O3 -> PTX text.

Kernels arrive lowered by the CUDA kernel pipeline: each is an ``llvm.func``
marked ``mlfuse.kernel`` taking one pointer per buffer (outputs first) and
carrying its launch shape (``mlfuse.grid`` blocks of ``mlfuse.block``
threads). Here they get LLVM's ``ptx_kernel`` calling convention (they become
``.entry`` points), their block size as ``nvvm.maxntid`` (so register
allocation may count on it), and LLVM's NVPTX backend makes the PTX for one
compute capability (``sm_90`` for the H100 and H200 unless told otherwise).
No GPU is needed for any of this: PTX is made and FileCheck-tested everywhere.
"""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass
from functools import cache

import llvmlite.binding as lb
from xdsl.dialects.builtin import IntegerAttr, ModuleOp

from mlfuse.lowering.kernel_to_loops import BLOCK_ATTR, GRID_ATTR, KERNEL_ATTR
from mlfuse.lowering.llvm_ir import llvm_functions, to_llvm_module

TRIPLE = "nvptx64-nvidia-cuda"
DEFAULT_ARCH = "sm_90"
PTX_FEATURES = {90: "+ptx80", 89: "+ptx78", 86: "+ptx71", 80: "+ptx70", 75: "+ptx63", 70: "+ptx60"}
"""The lowest PTX version each compute capability needs (a driver too old for
the newer versions rejects them)."""

BUFFER_ALIGN = 16
"""The alignment kernels may assume of their buffers (the driver gives 256)."""

_lock = threading.Lock()


def arch() -> str:
    """The compute capability PTX is made for: ``MLFUSE_CUDA_ARCH`` (``sm_80``...),
    else ``sm_90``. The CUDA target sets it from the device it runs on."""
    return os.environ.get("MLFUSE_CUDA_ARCH", DEFAULT_ARCH)


def _features(sm: str) -> str:
    try:
        cc = int(sm.removeprefix("sm_").rstrip("a"))
    except ValueError:
        raise ValueError(f"'{sm}' is not a compute capability such as sm_90") from None
    fit = [v for v in PTX_FEATURES if v <= cc]
    if not fit:
        raise ValueError(f"compute capability {sm} is older than mlfuse supports (sm_70)")
    return PTX_FEATURES[max(fit)]


@cache
def _init() -> None:
    lb.initialize_all_targets()
    lb.initialize_all_asmprinters()


def target_machine(sm: str) -> lb.TargetMachine:
    _init()
    return lb.Target.from_triple(TRIPLE).create_target_machine(
        cpu=sm, features=_features(sm), opt=3
    )


@cache
def data_layout(sm: str) -> str:
    return str(target_machine(sm).target_data)


@dataclass(frozen=True)
class LaunchShape:
    """How a kernel is launched: ``grid`` blocks of ``block`` threads, ``num_buffers`` pointers."""

    grid: int
    block: int
    num_buffers: int


def launch_shapes(module: ModuleOp) -> dict[str, LaunchShape]:
    """The launch shape of every kernel of a lowered module, by name."""
    out: dict[str, LaunchShape] = {}
    for f in llvm_functions(module):
        if KERNEL_ATTR not in f.attributes:
            continue
        grid, block = f.attributes.get(GRID_ATTR), f.attributes.get(BLOCK_ATTR)
        if not isinstance(grid, IntegerAttr) or not isinstance(block, IntegerAttr):
            raise ValueError(
                f"@{f.sym_name.data} was not lowered for a GPU grid (no '{GRID_ATTR}'/"
                f"'{BLOCK_ATTR}'): lower it with the CUDA target's kernel pipeline"
            )
        out[f.sym_name.data] = LaunchShape(
            grid.value.data, block.value.data, len(f.function_type.inputs.data)
        )
    return out


def nvptx_ir(module: ModuleOp, sm: str | None = None) -> str:
    """LLVM IR for NVPTX of a lowered module (kernels as ``ptx_kernel`` functions)."""
    sm = sm or arch()
    shapes = launch_shapes(module)
    mod = to_llvm_module(module, TRIPLE, data_layout(sm))
    for f in llvm_functions(module):
        if f.sym_name.data in shapes:
            fn = mod.get_global(f.sym_name.data)
            fn.calling_convention = "ptx_kernel"
            fn.attributes.add("nounwind")
            for arg in fn.args:
                # every buffer is a whole cuMemAlloc allocation (256-byte aligned), so
                # LLVM may merge a thread's 4 consecutive accesses into one 16-byte one
                arg.attributes.align = BUFFER_ALIGN
    return _with_maxntid(str(mod), shapes)


def min_blocks() -> int | None:
    """``MLFUSE_CUDA_MIN_BLOCKS``: blocks of each kernel a multiprocessor must be
    able to hold at once (``.minnctapersm``; ptxas then caps registers per
    thread to fit, spilling if it must), or None for ptxas's own choice. A
    4096^3 product's 163 registers per thread hold one 256-thread block per
    multiprocessor; with 2, ptxas fits it in 128 registers (56 bytes spilled,
    none in the inner loop): an experiment for a GPU to decide."""
    v = os.environ.get("MLFUSE_CUDA_MIN_BLOCKS", "")
    if not v:
        return None
    if not v.isdigit() or int(v) < 1:
        raise ValueError(f"MLFUSE_CUDA_MIN_BLOCKS must be a positive integer, got {v!r}")
    return int(v)


def _with_maxntid(text: str, shapes: dict[str, LaunchShape]) -> str:
    """Each kernel's block size as its ``"nvvm.maxntid"`` function attribute
    (and :func:`min_blocks` as ``"nvvm.minctasm"``; llvmlite's IR builder has
    no string attributes, so they are written into the text)."""
    lines = text.splitlines()
    groups: list[str] = []
    blocks = min_blocks()
    extra = f' "nvvm.minctasm"="{blocks}"' if blocks else ""
    for i, line in enumerate(lines):
        if not line.startswith("define ptx_kernel"):
            continue
        name = line.split("@", 1)[1].split("(", 1)[0].strip('"')
        if name not in shapes:
            continue
        g = f"#{1000 + len(groups)}"  # numbered groups; llvmlite writes none
        groups.append(f'attributes {g} = {{ "nvvm.maxntid"="{shapes[name].block}"{extra} }}')
        head, brace = line.rsplit("{", 1) if line.rstrip().endswith("{") else (line, None)
        lines[i] = f"{head.rstrip()} {g} {{" if brace is not None else f"{line} {g}"
    return "\n".join(lines + groups) + "\n"


def optimized(ir: str, sm: str | None = None) -> lb.ModuleRef:
    """The NVPTX module after LLVM's O3."""
    sm = sm or arch()
    with _lock:
        mod = lb.parse_assembly(ir)
        mod.verify()
        tm = target_machine(sm)
        pb = lb.create_pass_builder(tm, lb.PipelineTuningOptions(speed_level=3))
        pb.getModulePassManager().run(mod, pb)
        return mod


_NO_LOWERING = re.compile(
    r"llvm\.(pow|powi|exp|exp10|log|log2|log10|sin|cos|tan|asin|acos|atan|atan2|sinh|cosh|"
    r"tanh|frexp|ldexp)\.|llvm\.exp2\.(f64|v\d+f64)$"
)
"""Intrinsics LLVM's NVPTX backend has no instructions for: it aborts the
process ("Cannot select") when asked to make PTX of a call to one."""


def _check_lowerable(mod: lb.ModuleRef) -> None:
    """Refuse, with an error, calls the NVPTX backend would abort on (math
    intrinsics it has no instructions for, functions no module defines)."""
    bad = sorted(
        f.name
        for f in mod.functions
        if f.is_declaration and (not f.name.startswith("llvm.") or _NO_LOWERING.match(f.name))
    )
    if bad:
        raise ValueError(
            f"no PTX for these kernels: they call {', '.join(bad)}, which the GPU has no "
            "instructions or library for (expand-math expands the math ops the CUDA "
            "pipeline makes)"
        )


def ptx(module: ModuleOp, sm: str | None = None) -> str:
    """PTX text for the kernels of a lowered module."""
    sm = sm or arch()
    mod = optimized(nvptx_ir(module, sm), sm)
    _check_lowerable(mod)
    with _lock:
        return target_machine(sm).emit_assembly(mod)


# -- ptxas: PTX checked and measured without a GPU ---------------------------------


class PtxasError(RuntimeError):
    """``ptxas`` rejected PTX mlfuse made."""


@dataclass(frozen=True)
class KernelResources:
    """What ``ptxas -v`` says one kernel uses of a multiprocessor."""

    registers: int
    """Registers per thread."""
    shared: int
    """Bytes of static shared memory per block."""
    stack: int
    """Bytes of stack frame per thread (local memory)."""
    spill_stores: int
    spill_loads: int


def ptxas_path() -> str | None:
    """NVIDIA's PTX assembler (``MLFUSE_PTXAS``, else ``ptxas`` on the PATH), or None."""
    import shutil

    return os.environ.get("MLFUSE_PTXAS") or shutil.which("ptxas")


def assemble(text: str, sm: str | None = None) -> dict[str, KernelResources]:
    """Assemble PTX with ``ptxas`` for ``sm`` (what a GPU's driver would do to
    load it) and return each kernel's resources; :class:`PtxasError` with
    ptxas's message if it rejects the PTX. Needs ``ptxas`` (CUDA toolkit), not a GPU."""
    import subprocess
    import tempfile

    sm = sm or arch()
    exe = ptxas_path()
    if exe is None:
        raise FileNotFoundError("ptxas (the CUDA toolkit's PTX assembler) is not on the PATH")
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "kernels.ptx")
        with open(src, "w") as f:
            f.write(text)
        done = subprocess.run(
            [exe, f"-arch={sm}", "-v", src, "-o", os.path.join(tmp, "kernels.cubin")],
            capture_output=True,
            text=True,
        )
    log = done.stdout + done.stderr
    if done.returncode != 0:
        raise PtxasError(f"ptxas -arch={sm} rejected the PTX:\n{log.strip()}")
    out: dict[str, KernelResources] = {}
    name, frame = None, (0, 0, 0)
    for line in log.splitlines():
        if m := re.search(r"Compiling entry function '([^']+)'", line):
            name, frame = m.group(1), (0, 0, 0)
        elif m := re.search(
            r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line
        ):
            frame = (int(m.group(1)), int(m.group(2)), int(m.group(3)))
        elif (m := re.search(r"Used (\d+) registers", line)) and name is not None:
            smem = re.search(r"(\d+) bytes smem", line)
            out[name] = KernelResources(
                registers=int(m.group(1)),
                shared=int(smem.group(1)) if smem else 0,
                stack=frame[0],
                spill_stores=frame[1],
                spill_loads=frame[2],
            )
    return out
