"""cpu-entry-points: every CPU kernel is called as ``void k(ptr buffers, i64 lo, i64 hi)``.

A call with one argument per buffer has a limit (ctypes refuses more than
1,024 arguments), so a kernel reading 2,000 buffers could not be called. An
array of buffer pointers has none. For each lowered kernel
``llvm.func @k(ptr noalias %b0, ..., ptr noalias %bN, i64 %lo, i64 %hi)``:

1. the kernel is renamed ``@k.body``, with internal linkage and ``noinline``;
   it keeps its ``noalias`` pointer arguments;
2. a new ``llvm.func @k(%buffers: !llvm.ptr, %lo: i64, %hi: i64)`` loads
   pointer ``i`` from ``%buffers[i]`` for each buffer and calls the body;
3. the entry point takes over the kernel's attributes (``mlfuse.kernel``, the
   parallel extent and work) and records ``mlfuse.num_buffers``.

The body compiles to the code a direct call would run (its loops vectorize
without runtime alias checks, thanks to ``noalias``); the entry point adds a
few loads and one call per chunk. The body is not inlined on purpose: LLVM
would turn each ``noalias`` argument into an alias scope listed on every
memory access, O(buffers²) metadata (O3 took 5 s instead of 0.8 s for a
kernel of 2,000 buffers) for the same loops. Functions already taking a
pointer array (with ``mlfuse.num_buffers``) are left alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, llvm
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr, UnitAttr, i64
from xdsl.ir import Block, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import DiagnosticException

from mlfuse.lowering.kernel_to_loops import KERNEL_ATTR

NUM_BUFFERS_ATTR = "mlfuse.num_buffers"
BODY_SUFFIX = ".body"
ptr = llvm.LLVMPointerType()


def _buffer_count(f: llvm.FuncOp) -> int:
    """How many buffer pointers precede ``lo, hi`` in the kernel's arguments."""
    ins = list(f.function_type.inputs.data)
    n = len(ins) - 2
    if n < 0 or ins[n:] != [i64, i64] or any(t != ptr for t in ins[:n]):
        raise DiagnosticException(
            f"cpu-entry-points: kernel @{f.sym_name.data} must take buffer pointers, then i64 "
            "lo and hi (run convert-parallel-to-cpu and convert-loops-to-llvm first)"
        )
    return n


def add_entry_point(f: llvm.FuncOp, taken: set[str]) -> llvm.FuncOp:
    """Add ``@k(buffers, lo, hi)`` after kernel ``f``, which becomes ``@k.body``.

    ``taken`` holds the symbol names in use (the body's name is added to it).
    """
    n = _buffer_count(f)
    name = f.sym_name.data
    body_name = name + BODY_SUFFIX
    if body_name in taken:
        raise DiagnosticException(f"cpu-entry-points: @{body_name} already exists")
    taken.add(body_name)

    block = Block(arg_types=[ptr, i64, i64])
    buffers, lo, hi = block.args
    buffers.name_hint, lo.name_hint, hi.name_hint = "buffers", "lo", "hi"
    pointers: list[SSAValue] = []
    for i in range(n):
        slot = llvm.GEPOp.from_mixed_indices(buffers, [i], ptr, inbounds=True)
        load = llvm.LoadOp(slot, ptr)
        block.add_ops([slot, load])
        pointers.append(load.dereferenced_value)
    block.add_ops([llvm.CallOp(body_name, *pointers, lo, hi), llvm.ReturnOp()])
    entry = llvm.FuncOp(
        name,
        llvm.LLVMFunctionType([ptr, i64, i64], None),
        linkage=llvm.LinkageAttr("external"),
        body=Region(block),
    )
    entry.attributes.update(f.attributes)
    entry.attributes[NUM_BUFFERS_ATTR] = IntegerAttr(n, i64)

    f.attributes.clear()
    f.sym_name = StringAttr(body_name)
    f.linkage = llvm.LinkageAttr("internal")
    f.no_inline = UnitAttr()
    Rewriter.insert_op(entry, InsertPoint.after(f))
    return entry


@dataclass(frozen=True)
class CpuEntryPoints(ModulePass):
    """Call every lowered kernel through an array of buffer pointers."""

    name = "cpu-entry-points"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        names = (o.properties.get("sym_name") for o in op.ops)
        taken = {s.data for s in names if isinstance(s, StringAttr)}
        for f in list(op.ops):
            if KERNEL_ATTR not in f.attributes:
                continue
            if isinstance(f, func.FuncOp):
                raise DiagnosticException(
                    f"cpu-entry-points: kernel @{f.sym_name.data} is not in the llvm dialect yet "
                    "(run convert-loops-to-llvm first)"
                )
            if isinstance(f, llvm.FuncOp) and NUM_BUFFERS_ATTR not in f.attributes:
                add_entry_point(f, taken)
