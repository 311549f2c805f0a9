"""window-kernel-inputs: launch each kernel on the part of its inputs it reads.

outline-kernels passes every kernel whole buffers, so a kernel that reads one
part of a buffer carries where that part starts in its loads: step ``t`` of a
recurrent layer reads ``gates[t]`` at offset ``t * n``, and every step is a
different kernel text, compiled on its own. This pass moves the start out of
the kernel: the launch passes ``kernel.window %buf [start]`` (the elements the
kernel reads, from ``start`` rounded down to ``alignment`` bytes, so vector
accesses keep the alignment they have in the whole buffer) and the kernel's
loads read the window from its start. Kernels equal up to those starts then
have one text, and the driver compiles them once::

    kernel.launch @k2 outs(%2 : memref<32xf32>) ins(%0 : memref<128xf32>)
    // @k2 loads %in0 <[2, 16] strides [16, 1] offset 64>

becomes::

    %w = kernel.window %0 [64] : memref<128xf32> -> memref<32xf32>
    kernel.launch @k2 outs(%2 : memref<32xf32>) ins(%w : memref<32xf32>)
    // @k2 loads %in0 <[2, 16] strides [16, 1] offset 0>

An input read by anything but loads (a gather reads data-dependent
positions), an input the launch also writes, and the inputs of a kernel
launched more than once keep their whole buffers.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, MemRefType, ModuleOp
from xdsl.ir import BlockArgument
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from mlfuse.dialects import kernel
from mlfuse.dtypes import from_ir
from mlfuse.dialects.lazy import ViewAttr
from mlfuse.view import View, ViewStack


def read_range(arg: BlockArgument) -> tuple[int, int] | None:
    """The smallest and largest element the kernel's loads of ``arg`` may read
    (the bottom view of each load, which indexes the buffer), or None when
    something other than a load uses it or nothing is read."""
    lo = hi = None
    for use in arg.uses:
        load = use.operation
        if not isinstance(load, kernel.LoadOp):
            return None
        r = load.view.stack.views[0].offset_range()
        if r is not None:
            lo = r[0] if lo is None else min(lo, r[0])
            hi = r[1] if hi is None else max(hi, r[1])
    return None if lo is None or hi is None else (lo, hi)


def shift_input(k: kernel.FuncOp, arg: BlockArgument, start: int, size: int) -> None:
    """Make input ``arg`` of ``k`` a buffer of ``size`` elements holding
    elements ``start...`` of the old one."""
    t = arg.type
    assert isinstance(t, MemRefType)
    block = k.body.block
    new = block.insert_arg(MemRefType(t.element_type, [size]), arg.index)
    new.name_hint = arg.name_hint
    for use in list(arg.uses):
        load = use.operation
        assert isinstance(load, kernel.LoadOp)
        views = load.view.stack.views
        v = views[0]
        bottom = View.create(v.shape, v.strides, v.offset - start, v.mask)
        load.properties["view"] = ViewAttr(ViewStack((bottom, *views[1:])))
    arg.replace_all_uses_with(new)
    block.erase_arg(arg)
    k.properties["function_type"] = FunctionType.from_lists([a.type for a in block.args], [])


@dataclass(frozen=True)
class WindowKernelInputs(ModulePass):
    """Pass each kernel the window of each input buffer it reads."""

    name = "window-kernel-inputs"

    alignment: int = 64
    """Bytes to which a window's start is rounded down."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernels = {k.sym_name.data: k for k in op.ops if isinstance(k, kernel.FuncOp)}
        launches = [
            o
            for f in op.ops
            if isinstance(f, func.FuncOp)
            for o in f.body.block.ops
            if isinstance(o, kernel.LaunchOp)
        ]
        count = Counter(o.callee.string_value() for o in launches)
        for launch in launches:
            name = launch.callee.string_value()
            k = kernels.get(name)
            if k is None or count[name] != 1:
                continue
            n_out = launch.num_outputs.data
            written = set(launch.outs)
            for j, (v, arg) in enumerate(zip(launch.ins, k.inputs)):
                t = v.type
                if v in written or not isinstance(t, MemRefType):
                    continue
                r = read_range(arg)
                if r is None:
                    continue
                step = max(self.alignment // from_ir(t.element_type).itemsize, 1)
                start = r[0] // step * step
                size = r[1] + 1 - start
                if start == 0 and size == t.get_shape()[0]:
                    continue
                shift_input(k, arg, start, size)
                window = kernel.WindowOp(v, start, size)
                Rewriter.insert_op(window, InsertPoint.before(launch))
                launch.operands[n_out + j] = window.result
