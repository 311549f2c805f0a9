"""emulate-nvvm: GPU kernels lowered for NVVM -> kernels the host can run on its threads.

The last step of the ``cuda_emu`` device's pipeline (after
``convert-loops-to-llvm``, on the ``llvm`` dialect). What the NVPTX backend
would turn into PTX is kept op for op; only the four NVVM intrinsics the CUDA
lowering emits become calls of the emulator's thread runtime
(:mod:`mlfuse.targets.cuda.emulate`), and every access to memory is checked:

* ``llvm.nvvm.read.ptx.sreg.tid.x`` / ``ctaid.x`` -> ``@mlfuse_emu_tid()`` /
  ``@mlfuse_emu_ctaid()`` (the calling host thread's GPU thread and block);
* ``llvm.nvvm.shfl.sync.bfly.i32`` -> ``@mlfuse_emu_shfl_bfly`` (same
  operands: the lanes of a warp exchange values through memory, meeting at a
  barrier of the warp's threads);
* ``llvm.nvvm.barrier0`` -> ``@mlfuse_emu_barrier(site)`` (a barrier of the
  block's threads that also checks every thread reached the same one: ``site``
  numbers the barriers of the module);
* every ``llvm.load`` and ``llvm.store`` of a kernel goes through
  ``@mlfuse_emu_check(address, bytes, alignment, site, is_store)``: the
  address must be aligned as the access claims (its ``alignment``, else the
  natural alignment of its type, which is what the GPU requires), the bytes
  must lie in a buffer of the launch or in the kernel's shared memory, and in
  shared memory they must not race another thread's access since the last
  barrier. The access then uses the address the check returns (the same, or
  a scratch buffer once the check failed, so a failing kernel cannot write
  over the host's memory). ``site`` numbers the checked accesses of the
  module in order, so a failure names the access.

Shared memory stays in address space 3 (the host treats it as ordinary
memory); the emulator runs one block at a time, so each shared global is one
block's. Any other NVVM intrinsic is an error naming it.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    AnyFloat,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    VectorType,
    i32,
    i64,
)
from xdsl.ir import Attribute, Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import DiagnosticException

from mlfuse.lowering.kernel_to_loops import KERNEL_ATTR

TID, CTAID = "mlfuse_emu_tid", "mlfuse_emu_ctaid"
SHUFFLE, BARRIER, CHECK = "mlfuse_emu_shfl_bfly", "mlfuse_emu_barrier", "mlfuse_emu_check"
RUNTIME: dict[str, tuple[tuple[Attribute, ...], Attribute | None]] = {
    TID: ((), i32),
    CTAID: ((), i32),
    SHUFFLE: ((i32, i32, i32, i32), i32),
    BARRIER: ((i64,), None),
    CHECK: ((i64, i64, i64, i64, i64), i64),
}
"""The runtime's functions: name -> (argument types, result type or None)."""

_INTRINSICS = {
    "llvm.nvvm.read.ptx.sreg.tid.x": TID,
    "llvm.nvvm.read.ptx.sreg.ctaid.x": CTAID,
    "llvm.nvvm.shfl.sync.bfly.i32": SHUFFLE,
    "llvm.nvvm.barrier0": BARRIER,
}


def type_bytes(t: Attribute) -> int:
    """Bytes an access of type ``t`` reads or writes."""
    if isinstance(t, IntegerType):
        return max(1, (t.width.data + 7) // 8)
    if isinstance(t, AnyFloat):
        return t.bitwidth // 8
    if isinstance(t, llvm.LLVMPointerType):
        return 8
    if isinstance(t, VectorType):
        return t.get_shape()[0] * type_bytes(t.get_element_type())
    raise DiagnosticException(f"emulate-nvvm: cannot check an access of type {t}")


def natural_alignment(t: Attribute) -> int:
    """The alignment NVPTX requires of an access of ``t`` that states none: its
    size, rounded up to a power of two."""
    n = type_bytes(t)
    return 1 << (n - 1).bit_length()


def access_alignment(op: llvm.LoadOp | llvm.StoreOp) -> int:
    t = op.dereferenced_value.type if isinstance(op, llvm.LoadOp) else op.value.type
    if op.alignment is not None:
        return op.alignment.value.data
    return natural_alignment(t)


def checked_accesses(module: ModuleOp) -> list[Operation]:
    """The accesses the checks of an emulated module guard, by site number."""
    out: list[Operation] = []
    for op in module.walk():
        if isinstance(op, llvm.CallOp) and op.callee.string_value() == CHECK:
            (cast,) = [u.operation for u in op.results[0].uses]
            (access,) = [u.operation for u in cast.results[0].uses]
            out.append(access)
    return out


class _Emulate:
    def __init__(self, module: ModuleOp):
        self.module = module
        self.sites = 0
        self.barriers = 0
        self.used: set[str] = set()

    def declare(self) -> None:
        have = {op.sym_name.data for op in self.module.ops if isinstance(op, llvm.FuncOp)}
        for name, (args, res) in RUNTIME.items():
            if name in have or name not in self.used:
                continue
            ft = llvm.LLVMFunctionType(list(args), res)
            self.module.body.block.add_op(
                llvm.FuncOp(name, ft, linkage=llvm.LinkageAttr("external"))
            )

    def call(self, name: str, args, at: Operation) -> llvm.CallOp:
        self.used.add(name)
        res = RUNTIME[name][1]
        call = llvm.CallOp(name, *args, return_type=res)
        Rewriter.insert_op(call, InsertPoint.before(at))
        return call

    def const(self, v: int, at: Operation):
        c = llvm.ConstantOp(IntegerAttr(v, i64), i64)
        Rewriter.insert_op(c, InsertPoint.before(at))
        return c.result

    def intrinsic(self, op: llvm.CallIntrinsicOp) -> None:
        name = op.intrin.data
        if name.startswith("llvm.masked."):
            raise DiagnosticException(
                f"emulate-nvvm: '{name}' is not emulated (the CUDA lowering emits no masked "
                "accesses)"
            )
        if not name.startswith("llvm.nvvm."):
            return
        runtime = _INTRINSICS.get(name)
        if runtime is None:
            raise DiagnosticException(f"emulate-nvvm: the emulator has no '{name}'")
        args = list(op.args)
        if runtime == BARRIER:
            args = [self.const(self.barriers, op)]
            self.barriers += 1
        call = self.call(runtime, args, op)
        Rewriter.replace_op(op, [], list(call.results) if op.ress is not None else [])

    def access(self, op: llvm.LoadOp | llvm.StoreOp) -> None:
        t = op.dereferenced_value.type if isinstance(op, llvm.LoadOp) else op.value.type
        addr = llvm.PtrToIntOp(op.ptr, i64)
        Rewriter.insert_op(addr, InsertPoint.before(op))
        args = [
            addr.results[0],
            self.const(type_bytes(t), op),
            self.const(access_alignment(op), op),
            self.const(self.sites, op),
            self.const(int(isinstance(op, llvm.StoreOp)), op),
        ]
        self.sites += 1
        checked = self.call(CHECK, args, op).results[0]
        ptr = llvm.IntToPtrOp.create(operands=[checked], result_types=[op.ptr.type])
        Rewriter.insert_op(ptr, InsertPoint.before(op))
        op.operands[0 if isinstance(op, llvm.LoadOp) else 1] = ptr.results[0]

    def run(self) -> None:
        kernels = [
            f for f in self.module.ops if isinstance(f, llvm.FuncOp) and KERNEL_ATTR in f.attributes
        ]
        if not kernels:
            raise DiagnosticException(
                "emulate-nvvm: no kernel in the llvm dialect; lower the kernels with the CUDA "
                "target's kernel pipeline first"
            )
        for f in kernels:
            for op in list(f.walk()):
                if isinstance(op, llvm.CallIntrinsicOp):
                    self.intrinsic(op)
                elif isinstance(op, llvm.LoadOp | llvm.StoreOp):
                    self.access(op)
                elif isinstance(op, llvm.MaskedStoreOp):
                    raise DiagnosticException(
                        "emulate-nvvm: masked stores are not emulated (the CUDA lowering "
                        "emits none)"
                    )
        self.declare()


@dataclass(frozen=True)
class EmulateNvvm(ModulePass):
    """Make NVVM-lowered kernels runnable on host threads, every memory access checked."""

    name = "emulate-nvvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        _Emulate(op).run()
