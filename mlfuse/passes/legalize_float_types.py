"""legalize-float-types: float16/bfloat16 arithmetic of kernels computed in float32.

Kernels load and store 16-bit floats, but every op on them runs in float32
and is rounded back to its 16-bit type after each op, as PyTorch computes
them on CPUs (so per-op results equal PyTorch's):

* an arith/math op with an ``f16``/``bf16`` operand or result takes its
  operands widened to ``f32`` and, where its result was 16-bit, is followed
  by a rounding back (``arith.truncf``);
* a ``kernel.reduce`` over 16-bit values accumulates in ``f32`` and rounds
  its result once;
* ``bf16`` conversions are integer operations, as no CPU target of LLVM has
  them everywhere (and llvmlite has no ``bfloat`` type): widening is a 16-bit
  shift of the bits, narrowing rounds to nearest even (a NaN stays a quiet
  NaN of the same sign) with integer adds, shifts and masks only, so the
  kernel still vectorizes; ``bf16`` constants become ``i16`` bits.

Afterwards ``bf16`` values only move (loads, stores, ``arith.select``,
``arith.bitcast`` to and from ``i16``), which ``convert-loops-to-llvm``
lowers as ``i16``. ``f16`` keeps ``arith.extf``/``arith.truncf``, which LLVM
lowers natively (x86 F16C, NVPTX ``cvt``). ``f64 -> f16`` rounds through
``f32``, as PyTorch converts doubles to half.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    VectorType,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from mlfuse.dialects import kernel

f32 = Float32Type()
_PASS_THROUGH = (
    kernel.LoadOp,
    kernel.GatherOp,
    kernel.StoreOp,
    kernel.ValidOp,
    arith.SelectOp,
    arith.BitcastOp,
)


def _element(t: Attribute) -> Attribute:
    return t.element_type if isinstance(t, VectorType) else t


def _like(t: Attribute, element: Attribute) -> Attribute:
    """``element``, or a vector of it shaped like ``t``."""
    return VectorType(element, t.get_shape()) if isinstance(t, VectorType) else element


def is_half(t: Attribute) -> bool:
    """A 16-bit float type (or a vector of one)."""
    return isinstance(_element(t), (Float16Type, BFloat16Type))


def _bf16(t: Attribute) -> bool:
    return isinstance(_element(t), BFloat16Type)


class _Legalizer:
    """Rewrites one kernel body; new ops go right before the op being rewritten."""

    def __init__(self, block: Block):
        self.block = block
        self.at: Operation | None = None
        self.wide: dict[SSAValue, SSAValue] = {}
        self.consts: dict[tuple, SSAValue] = {}

    def add(self, op: Operation) -> SSAValue:
        assert self.at is not None
        self.block.insert_op_before(op, self.at)
        return op.results[0]

    def const(self, v: int, t: Attribute) -> SSAValue:
        """An integer constant, made once per kernel at the top of the body."""
        el = _element(t)
        assert isinstance(el, IntegerType)
        key = (v, el)
        if key not in self.consts:
            op = arith.ConstantOp(IntegerAttr(v, el))
            first = self.block.first_op
            assert first is not None
            self.block.insert_op_before(op, first)
            self.consts[key] = op.result
        c = self.consts[key]
        if isinstance(t, VectorType):
            from xdsl.dialects import vector

            c = self.add(vector.BroadcastOp(c, t))
        return c

    # -- conversions --------------------------------------------------------
    def widen(self, v: SSAValue) -> SSAValue:
        """``v`` (16-bit float) as f32, once per value."""
        if v not in self.wide:
            t = v.type
            if _bf16(t):
                i16, i32 = _like(t, IntegerType(16)), _like(t, IntegerType(32))
                bits = self.add(arith.BitcastOp(v, i16))
                w = self.add(arith.ExtUIOp(bits, i32))  # type: ignore[arg-type]
                sh = self.add(arith.ShLIOp(w, self.const(16, i32)))
                self.wide[v] = self.add(arith.BitcastOp(sh, _like(t, f32)))
            else:
                self.wide[v] = self.add(arith.ExtFOp(v, _like(t, f32)))  # type: ignore[arg-type]
        return self.wide[v]

    def narrow(self, v: SSAValue, to: Attribute) -> SSAValue:
        """``v`` (f32 or f64) rounded to the 16-bit type ``to`` (nearest even)."""
        if not isinstance(_element(v.type), Float32Type):
            v = self.add(arith.TruncFOp(v, _like(v.type, f32)))  # type: ignore[arg-type]
        if not _bf16(to):
            return self.add(arith.TruncFOp(v, to))  # type: ignore[arg-type]
        i16, i32 = _like(v.type, IntegerType(16)), _like(v.type, IntegerType(32))
        u = self.add(arith.BitcastOp(v, i32))
        c16 = self.const(16, i32)
        high = self.add(arith.ShRUIOp(u, c16))
        lsb = self.add(arith.AndIOp(high, self.const(1, i32)))
        bias = self.add(arith.AddiOp(lsb, self.const(0x7FFF, i32)))
        rounded = self.add(arith.ShRUIOp(self.add(arith.AddiOp(u, bias)), c16))
        # NaN: |u| > 0x7f800000; the mask is all ones there (no compare: it vectorizes)
        mag = self.add(arith.AndIOp(u, self.const(0x7FFFFFFF, i32)))
        diff = self.add(arith.SubiOp(self.const(0x7F800000, i32), mag))
        nan = self.add(arith.ShRSIOp(diff, self.const(31, i32)))
        quiet = self.add(arith.OrIOp(high, self.const(0x40, i32)))
        keep = self.add(arith.XOrIOp(nan, self.const(-1, i32)))
        bits = self.add(
            arith.OrIOp(self.add(arith.AndIOp(rounded, keep)), self.add(arith.AndIOp(quiet, nan)))
        )
        t16 = self.add(arith.TruncIOp(bits, i16))  # type: ignore[arg-type]
        return self.add(arith.BitcastOp(t16, to))

    # -- ops ------------------------------------------------------------------
    def op(self, op: Operation) -> None:
        self.at = op
        if isinstance(op, _PASS_THROUGH):
            return
        if isinstance(op, arith.ConstantOp):
            if _bf16(op.result.type) and not isinstance(op.result.type, VectorType):
                from mlfuse.dtypes import bf16_bits

                bits = int(bf16_bits(op.value.value.data)[()])  # type: ignore[attr-defined]
                c = self.add(arith.ConstantOp(IntegerAttr(bits - (bits >> 15 << 16), 16)))
                self.replace(op, self.add(arith.BitcastOp(c, op.result.type)))
            return
        if isinstance(op, arith.ExtFOp):
            if _bf16(op.input.type):
                w = self.widen(op.input)
                if not isinstance(_element(op.result.type), Float32Type):
                    w = self.add(arith.ExtFOp(w, op.result.type))  # type: ignore[arg-type]
                self.replace(op, w)
            return
        if isinstance(op, arith.TruncFOp):
            if is_half(op.result.type) and (
                _bf16(op.result.type) or not isinstance(_element(op.input.type), Float32Type)
            ):
                self.replace(op, self.narrow(op.input, op.result.type))
            return
        if isinstance(op, kernel.ReduceOp):
            if is_half(op.input.type):
                r = self.add(kernel.ReduceOp(op.reduce_kind, self.widen(op.input), op.reduce_axes))
                self.replace(op, self.narrow(r, op.result.type))
            return
        if isinstance(op, kernel.ScanOp):
            if is_half(op.input.type):  # the running value in float32, each output rounded
                r = self.add(kernel.ScanOp(op.scan_kind, self.widen(op.input), op.scan_dim))
                self.replace(op, self.narrow(r, op.result.type))
            return
        if not any(is_half(v.type) for v in (*op.operands, *op.results)):
            return
        operands = [self.widen(v) if is_half(v.type) else v for v in op.operands]
        new = type(op).create(
            operands=operands,
            result_types=[_like(r.type, f32) if is_half(r.type) else r.type for r in op.results],
            properties=dict(op.properties),
            attributes=dict(op.attributes),
        )
        self.add(new)
        outs = [
            self.narrow(nr, r.type) if is_half(r.type) else nr
            for r, nr in zip(op.results, new.results)
        ]
        for r, v in zip(op.results, outs):
            r.replace_all_uses_with(v)
        Rewriter.erase_op(op)

    def replace(self, op: Operation, v: SSAValue) -> None:
        op.results[0].replace_all_uses_with(v)
        Rewriter.erase_op(op)


def legalize_kernel(k: kernel.FuncOp) -> None:
    """Widen the 16-bit float arithmetic of one kernel.func in place."""
    block = k.body.block
    leg = _Legalizer(block)
    for op in list(block.ops):
        leg.op(op)


@dataclass(frozen=True)
class LegalizeFloatTypes(ModulePass):
    """float16/bfloat16 ops of kernel.func bodies -> float32 ops, rounded per op."""

    name = "legalize-float-types"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for k in [o for o in op.walk() if isinstance(o, kernel.FuncOp)]:
            legalize_kernel(k)
