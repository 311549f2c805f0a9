"""convert-gpu-to-nvvm: a kernel's ``gpu`` ops -> NVVM intrinsics and shared memory.

``convert-kernel-to-loops`` writes a kernel planned for a GPU grid with three
``gpu`` ops; this pass lowers them for NVIDIA GPUs, in the loop-level IR
(before ``convert-loops-to-llvm``, which passes the ``llvm`` ops it makes
through):

* ``gpu.block_id x`` / ``gpu.thread_id x`` -> calls of
  ``llvm.nvvm.read.ptx.sreg.ctaid.x`` / ``tid.x`` (``%ctaid.x``, ``%tid.x``);
* ``gpu.all_reduce`` with ``mlfuse.lanes = G`` (groups of G consecutive
  threads, G a power of two up to 32) -> a butterfly of warp shuffles with
  offsets below G: every lane ends with its group's result;
* ``gpu.all_reduce`` (every thread of the block holds a partial result) ->
  a butterfly of warp shuffles (``shfl.sync.bfly``: afterwards every lane
  holds its warp's result), then, with more than one warp, one slot per warp
  in shared memory written by the warp's first lane, a barrier, every thread
  combining the warps' slots, and a barrier before the slots may be written
  again. Every thread runs the barriers (only the slot's store is under an
  ``scf.if``);
* ``memref.alloca`` in memory space 3 (a tile a stage loop copies, see
  :func:`mlfuse.loop_nest.stage_tile`) -> an ``llvm.mlir.global`` in shared
  memory, its ``memref.load``/``memref.store`` -> ``llvm.load``/``llvm.store``
  through a pointer into it (``ld.shared``/``st.shared``), its
  ``vector.load``/``vector.store`` -> an ``llvm.load``/``llvm.store`` of the
  vector aligned to its size (``ld.shared.v4``, ``st.shared.v4``);
* ``gpu.barrier`` -> ``llvm.nvvm.barrier0`` (``bar.sync 0``).

A block's threads must be a multiple of 32 (whole warps) or a power of two
below 32 (one partial warp, shuffling among its lanes); ``gpu-map-plan`` only
picks such blocks for reductions. Shared memory is one ``llvm.mlir.global`` in
address space 3 per kernel, addressed with ``ptrtoint``/``inttoptr`` (xDSL's
translation of a GEP would cast the pointer to address space 0).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, func, gpu, llvm, memref, scf, vector
from xdsl.dialects.builtin import (
    AnyFloat,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    VectorType,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import DiagnosticException

from mlfuse.lowering.kernel_to_loops import BLOCK_ATTR, KERNEL_ATTR, LANES_ATTR
from mlfuse.passes.scalar import combine

WARP = 32
SHARED = 3
"""NVPTX's address space of shared memory."""
SHARED_ACCESS = memref.LoadOp | memref.StoreOp | vector.LoadOp | vector.StoreOp
"""The ops that may use a tile in shared memory."""
SLOT_BYTES = 8
"""Bytes of one warp's slot in shared memory (the widest element reduced)."""
_SREG = {gpu.BlockIdOp: "ctaid", gpu.ThreadIdOp: "tid"}
_KIND = {"add": "add", "max": "max", "mul": "mul"}


def block_threads(f: func.FuncOp) -> int:
    """How many threads a block of kernel ``f`` has (its ``mlfuse.block``)."""
    a = f.attributes.get(BLOCK_ATTR)
    if not isinstance(a, IntegerAttr):
        raise DiagnosticException(
            f"convert-gpu-to-nvvm: @{f.sym_name.data} has gpu ops but no '{BLOCK_ATTR}' "
            "(lower it from a kernel planned for the grid)"
        )
    return a.value.data


def _bits(t: Attribute) -> int:
    if isinstance(t, IntegerType):
        return t.width.data
    if isinstance(t, AnyFloat):
        return t.bitwidth
    raise DiagnosticException(f"convert-gpu-to-nvvm: cannot reduce values of type {t}")


def is_shared(t: Attribute) -> bool:
    """Whether ``t`` is a memref in a block's shared memory (memory space 3)."""
    return (
        isinstance(t, MemRefType)
        and isinstance(t.memory_space, IntegerAttr)
        and t.memory_space.value.data == SHARED
    )


class _Lower:
    def __init__(self, module: ModuleOp, f: func.FuncOp):
        self.module, self.f = module, f
        self.threads = block_threads(f)
        self.smem: str | None = None
        self.tiles: dict[SSAValue, SSAValue] = {}  # shared memref -> its address (i64)

    def sreg(self, b: Builder, reg: str) -> SSAValue:
        """``%reg.x`` as an index."""
        v = b.insert(llvm.CallIntrinsicOp(f"llvm.nvvm.read.ptx.sreg.{reg}.x", [], [i32])).results[0]
        wide = b.insert(arith.ExtUIOp(v, i64)).result
        return b.insert(arith.IndexCastOp(wide, IndexType())).result

    def const(self, b: Builder, v: int, t: Attribute) -> SSAValue:
        return b.insert(arith.ConstantOp(IntegerAttr(v, t))).result

    def shuffle32(self, b: Builder, x: SSAValue, offset: int, mask: int) -> SSAValue:
        args = [
            self.const(b, mask - (1 << 32) if mask >= 1 << 31 else mask, i32),
            x,
            self.const(b, offset, i32),
            self.const(b, WARP - 1, i32),
        ]
        call = llvm.CallIntrinsicOp("llvm.nvvm.shfl.sync.bfly.i32", args, [i32])
        return b.insert(call).results[0]

    def shuffle(self, b: Builder, x: SSAValue, offset: int, mask: int) -> SSAValue:
        """The value of ``x`` in lane ``lane ^ offset``: its bits moved as one or
        two 32-bit words."""
        t = x.type
        bits = _bits(t)
        as_int = IntegerType(bits)
        raw = b.insert(arith.BitcastOp(x, as_int)).result if isinstance(t, AnyFloat) else x
        if bits <= 32:
            word = raw if bits == 32 else b.insert(arith.ExtUIOp(raw, i32)).result
            got = self.shuffle32(b, word, offset, mask)
            back = got if bits == 32 else b.insert(arith.TruncIOp(got, as_int)).result
        elif bits == 64:
            lo = b.insert(arith.TruncIOp(raw, i32)).result
            hi_bits = b.insert(arith.ShRUIOp(raw, self.const(b, 32, i64))).result
            hi = b.insert(arith.TruncIOp(hi_bits, i32)).result
            lo2 = b.insert(arith.ExtUIOp(self.shuffle32(b, lo, offset, mask), i64)).result
            hi2 = b.insert(arith.ExtUIOp(self.shuffle32(b, hi, offset, mask), i64)).result
            up = b.insert(arith.ShLIOp(hi2, self.const(b, 32, i64))).result
            back = b.insert(arith.OrIOp(up, lo2)).result
        else:
            raise DiagnosticException(f"convert-gpu-to-nvvm: cannot shuffle values of type {t}")
        return b.insert(arith.BitcastOp(back, t)).result if isinstance(t, AnyFloat) else back

    def slot(self, b: Builder, warp: SSAValue | int) -> SSAValue:
        """A pointer to warp ``warp``'s slot in the kernel's shared memory."""
        if self.smem is None:
            self.smem = f"{self.f.sym_name.data}__smem"
            words = max(1, self.threads // WARP)
            self.module.body.block.insert_op_before(
                llvm.GlobalOp(
                    llvm.LLVMArrayType(words * SLOT_BYTES, IntegerType(8)),
                    self.smem,
                    "internal",
                    addr_space=SHARED,
                    alignment=SLOT_BYTES,
                ),
                self.f,
            )
        ptr_t = llvm.LLVMPointerType(IntAttr(SHARED))
        base = b.insert(llvm.AddressOfOp(self.smem, ptr_t)).results[0]
        addr = b.insert(llvm.PtrToIntOp(base, i64)).results[0]
        if isinstance(warp, int):
            off = self.const(b, warp * SLOT_BYTES, i64)
        else:
            idx = b.insert(arith.MuliOp(warp, self.index(b, SLOT_BYTES))).result
            off = b.insert(arith.IndexCastOp(idx, i64)).result
        at = b.insert(llvm.AddOp(addr, off)).results[0]
        return b.insert(llvm.IntToPtrOp.create(operands=[at], result_types=[ptr_t])).results[0]

    def index(self, b: Builder, v: int) -> SSAValue:
        return b.insert(arith.ConstantOp(IntegerAttr(v, IndexType()))).result

    def barrier_op(self) -> llvm.CallIntrinsicOp:
        return llvm.CallIntrinsicOp("llvm.nvvm.barrier0", [], [])

    def barrier(self, b: Builder) -> None:
        b.insert(self.barrier_op())

    def all_reduce(self, op: gpu.AllReduceOp) -> SSAValue:
        if op.op is None:
            raise DiagnosticException(
                "convert-gpu-to-nvvm: only gpu.all_reduce with an operation attribute is lowered"
            )
        kind = _KIND.get(op.op.data.value)
        if kind is None:
            raise DiagnosticException(
                f"convert-gpu-to-nvvm: gpu.all_reduce '{op.op.data.value}' is not lowered "
                f"(known: {', '.join(_KIND)})"
            )
        n = self.threads
        lanes = op.attributes.get(LANES_ATTR)
        if isinstance(lanes, IntegerAttr):  # groups of consecutive threads, in a warp
            group = lanes.value.data
            if group > WARP or group & (group - 1) or n % group or (n > WARP and n % WARP):
                raise DiagnosticException(
                    f"convert-gpu-to-nvvm: @{self.f.sym_name.data}: cannot reduce groups of "
                    f"{group} threads in a block of {n} (groups are a power of two up to "
                    f"{WARP}, blocks whole warps or one power-of-two part of one)"
                )
            b = Builder(InsertPoint.before(op))
            v = op.operand
            mask = (1 << min(n, WARP)) - 1
            offset = group // 2
            while offset:
                v = combine(b, kind, v, self.shuffle(b, v, offset, mask))
                offset //= 2
            return v
        if not (n % WARP == 0 or (n < WARP and n & (n - 1) == 0)):
            raise DiagnosticException(
                f"convert-gpu-to-nvvm: @{self.f.sym_name.data}: a block of {n} threads cannot "
                "reduce across its threads (it needs whole warps, or a power of two below 32)"
            )
        b = Builder(InsertPoint.before(op))
        v = op.operand
        lanes = min(n, WARP)
        mask = (1 << lanes) - 1
        offset = lanes // 2
        while offset:
            v = combine(b, kind, v, self.shuffle(b, v, offset, mask))
            offset //= 2
        if n <= WARP:
            return v
        tid = self.sreg(b, "tid")
        warp = b.insert(arith.DivUIOp(tid, self.index(b, WARP))).result
        lane = b.insert(arith.RemUIOp(tid, self.index(b, WARP))).result
        first = b.insert(arith.CmpiOp(lane, self.index(b, 0), "eq")).result
        store = Builder(InsertPoint.at_end(Block()))
        store.insert(llvm.StoreOp(v, self.slot(store, warp)))
        store.insert(scf.YieldOp())
        b.insert(scf.IfOp(first, [], Region(store.insertion_point.block)))  # lane 0 stores
        self.barrier(b)
        acc = None
        for w in range(n // WARP):
            x = b.insert(llvm.LoadOp(self.slot(b, w), v.type)).results[0]
            acc = x if acc is None else combine(b, kind, acc, x)
        self.barrier(b)  # the slots are free again once everyone has read them
        assert acc is not None
        return acc

    def tile(self, op: memref.AllocaOp) -> None:
        """A shared tile: a global in shared memory; its users get its address."""
        t = op.memref.type
        assert isinstance(t, MemRefType)
        if len(t.get_shape()) != 1 or t.get_shape()[0] < 0:
            raise DiagnosticException(
                f"convert-gpu-to-nvvm: shared memory '{t}' must be one static dimension"
            )
        name = f"{self.f.sym_name.data}__{op.memref.name_hint or f'tile{len(self.tiles)}'}"
        nbytes = t.get_shape()[0] * _bits(t.element_type) // 8
        self.module.body.block.insert_op_before(
            llvm.GlobalOp(
                llvm.LLVMArrayType(max(nbytes, 1), IntegerType(8)),
                name,
                "internal",
                addr_space=SHARED,
                alignment=16,
            ),
            self.f,
        )
        b = Builder(InsertPoint.before(op))
        base = b.insert(llvm.AddressOfOp(name, llvm.LLVMPointerType(IntAttr(SHARED)))).results[0]
        self.tiles[op.memref] = b.insert(llvm.PtrToIntOp(base, i64)).results[0]
        for use in list(op.memref.uses):
            user = use.operation
            if not isinstance(user, SHARED_ACCESS):
                raise DiagnosticException(
                    f"convert-gpu-to-nvvm: shared memory is only loaded and stored, "
                    f"not used by '{user.name}'"
                )
            self.access(user, t)
        Rewriter.erase_op(op)

    def access(self, op: SHARED_ACCESS, t: MemRefType) -> None:
        b = Builder(InsertPoint.before(op))
        size = _bits(t.element_type) // 8
        idx = op.indices[0]
        if size != 1:
            idx = b.insert(arith.MuliOp(idx, self.index(b, size))).result
        off = b.insert(arith.IndexCastOp(idx, i64)).result
        mem = op.base if isinstance(op, vector.LoadOp | vector.StoreOp) else op.memref
        at = b.insert(llvm.AddOp(self.tiles[mem], off)).results[0]
        ptr_t = llvm.LLVMPointerType(IntAttr(SHARED))
        ptr = b.insert(llvm.IntToPtrOp.create(operands=[at], result_types=[ptr_t])).results[0]
        if isinstance(op, vector.LoadOp):
            # a whole vector: its index is a multiple of its lanes (see StageTile.lanes)
            vt = op.result.type
            assert isinstance(vt, VectorType)
            nbytes = size * vt.get_shape()[0]
            load = b.insert(llvm.LoadOp(ptr, vt, alignment=nbytes))
            Rewriter.replace_op(op, [], [load.results[0]])
        elif isinstance(op, vector.StoreOp):
            # a tile copy's vector: its index is a multiple of its lanes (see _emit_stores)
            vt = op.vector.type
            assert isinstance(vt, VectorType)
            b.insert(llvm.StoreOp(op.vector, ptr, alignment=size * vt.get_shape()[0]))
            Rewriter.erase_op(op)
        elif isinstance(op, memref.LoadOp):
            load = b.insert(llvm.LoadOp(ptr, t.element_type))
            Rewriter.replace_op(op, [], [load.results[0]])
        else:
            b.insert(llvm.StoreOp(op.value, ptr))
            Rewriter.erase_op(op)

    def run(self) -> None:
        for op in list(self.f.walk()):
            if isinstance(op, memref.AllocaOp) and is_shared(op.memref.type):
                self.tile(op)
        for op in list(self.f.walk()):
            if type(op) in _SREG:
                b = Builder(InsertPoint.before(op))
                Rewriter.replace_op(op, [], [self.sreg(b, _SREG[type(op)])])
            elif isinstance(op, gpu.AllReduceOp):
                Rewriter.replace_op(op, [], [self.all_reduce(op)])
            elif isinstance(op, gpu.BarrierOp):
                Rewriter.replace_op(op, [self.barrier_op()], [])
            elif op.dialect_name() == "gpu":
                raise DiagnosticException(f"convert-gpu-to-nvvm: cannot lower '{op.name}'")


@dataclass(frozen=True)
class ConvertGpuToNvvm(ModulePass):
    """Lower the gpu ops of GPU kernels to NVVM intrinsics, shuffles and shared memory."""

    name = "convert-gpu-to-nvvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in [o for o in op.ops if isinstance(o, func.FuncOp) and KERNEL_ATTR in o.attributes]:
            if any(
                o.dialect_name() == "gpu"
                or (isinstance(o, memref.AllocaOp) and is_shared(o.memref.type))
                for o in f.walk()
            ):
                _Lower(op, f).run()
