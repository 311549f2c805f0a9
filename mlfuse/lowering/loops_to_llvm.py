"""convert-loops-to-llvm: lowered kernels (func/cf/arith/math/memref) -> the ``llvm`` dialect.

xDSL has no arith/func/cf/math -> llvm conversions, and its memref -> ptr ->
llvm path addresses memory with ptrtoint/inttoptr, which stops LLVM's
vectorizer. This pass converts a kernel in one walk instead (a one-shot
dialect conversion, ~10x faster than type-converting rewrite patterns):

* ``memref<NxT>`` arguments become ``!llvm.ptr`` marked ``noalias`` (kernel
  buffers never overlap), ``index`` becomes ``i64``;
* ``memref.load/store %m[%i]`` become ``getelementptr inbounds`` + load/store;
* arith/math ops map to llvm ops or intrinsics (``llvm.maximum``,
  ``llvm.fptosi.sat``, ``llvm.smax`` ...); float arithmetic keeps its
  fast-math flags (intrinsic calls take none in xDSL's translation);
* ``cf.br/cond_br`` and ``func.return`` map to their llvm twins.

Only functions marked ``mlfuse.kernel`` are converted; the schedule stays.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, cf, func, llvm, math, memref, vector
from xdsl.dialects.builtin import (
    AnyFloat,
    ArrayAttr,
    DictionaryAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    BFloat16Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    UnitAttr,
    VectorType,
    i1,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import DiagnosticException

from mlfuse.lowering.kernel_to_loops import KERNEL_ATTR


def convert_type(t: Attribute) -> Attribute:
    """The LLVM type of a loop-level type: memrefs are pointers, ``index`` is
    ``i64``, ``bf16`` is ``i16`` (its bits: LLVM's x86 and llvmlite have no
    bfloat arithmetic, legalize-float-types leaves bf16 values only moving)."""
    if isinstance(t, MemRefType):
        return llvm.LLVMPointerType()
    if isinstance(t, IndexType):
        return i64
    if isinstance(t, BFloat16Type):
        return i16
    if isinstance(t, VectorType) and isinstance(t.element_type, BFloat16Type):
        return VectorType(i16, t.get_shape())
    return t


def _suffix(t: Attribute) -> str:
    if isinstance(t, VectorType):
        return f"v{t.get_shape()[0]}{_suffix(t.element_type)}"
    if isinstance(t, IndexType):
        return "i64"
    if isinstance(t, IntegerType):
        return f"i{t.width.data}"
    assert isinstance(t, AnyFloat)
    return f"f{t.bitwidth}"


def _fastmath(op: Operation) -> llvm.FastMathAttr | None:
    fm = op.properties.get("fastmath")
    flags = getattr(fm, "data", None)
    if not flags:
        return None
    return llvm.FastMathAttr([llvm.FastMathFlag(getattr(f, "value", f)) for f in flags])


_INT_BINARY: dict[type[Operation], Callable] = {
    arith.AddiOp: llvm.AddOp,
    arith.SubiOp: llvm.SubOp,
    arith.MuliOp: llvm.MulOp,
    arith.DivSIOp: llvm.SDivOp,
    arith.DivUIOp: llvm.UDivOp,
    arith.RemSIOp: llvm.SRemOp,
    arith.RemUIOp: llvm.URemOp,
    arith.AndIOp: llvm.AndOp,
    arith.OrIOp: llvm.OrOp,
    arith.XOrIOp: llvm.XOrOp,
    arith.ShLIOp: llvm.ShlOp,
    arith.ShRSIOp: llvm.AShrOp,
    arith.ShRUIOp: llvm.LShrOp,
}
_FLOAT_BINARY: dict[type[Operation], Callable] = {
    arith.AddfOp: llvm.FAddOp,
    arith.SubfOp: llvm.FSubOp,
    arith.MulfOp: llvm.FMulOp,
    arith.DivfOp: llvm.FDivOp,
}
_INTRINSIC_BINARY: dict[type[Operation], str] = {
    arith.MaximumfOp: "llvm.maximum",
    arith.MinimumfOp: "llvm.minimum",
    arith.MaxnumfOp: "llvm.maxnum",
    arith.MinnumfOp: "llvm.minnum",
    arith.MaxSIOp: "llvm.smax",
    arith.MinSIOp: "llvm.smin",
    arith.MaxUIOp: "llvm.umax",
    arith.MinUIOp: "llvm.umin",
}
# Called by their type-suffixed names: xDSL's translation of llvm.intr.exp & co
# declares one untyped "llvm.exp" per module, so f32 and f64 uses would clash.
_MATH_UNARY: dict[type[Operation], str] = {
    math.ExpOp: "llvm.exp",
    math.Exp2Op: "llvm.exp2",
    math.LogOp: "llvm.log",
    math.Log2Op: "llvm.log2",
    math.SqrtOp: "llvm.sqrt",
    math.SinOp: "llvm.sin",
    math.CosOp: "llvm.cos",
    math.FloorOp: "llvm.floor",
    math.CeilOp: "llvm.ceil",
    math.AbsFOp: "llvm.fabs",
}
_CASTS: dict[type[Operation], Callable] = {
    arith.ExtFOp: llvm.FPExtOp,
    arith.TruncFOp: llvm.FPTruncOp,
    arith.ExtSIOp: llvm.SExtOp,
    arith.ExtUIOp: llvm.ZExtOp,
    arith.TruncIOp: llvm.TruncOp,
    arith.SIToFPOp: llvm.SIToFPOp,
    arith.BitcastOp: llvm.BitcastOp,
}


def element_bytes(t: Attribute) -> int:
    """Bytes of one element of ``t`` (a scalar, or a vector's element). A vector
    access assumes only that alignment: a view's vector may start at any
    element of its buffer."""
    el = t.element_type if isinstance(t, VectorType) else t
    width = el.width.data if isinstance(el, IntegerType) else el.bitwidth  # type: ignore[attr-defined]
    return max(1, width // 8)


def _is_bf16(t: Attribute) -> bool:
    el = t.element_type if isinstance(t, (VectorType, MemRefType)) else t
    return isinstance(el, BFloat16Type)


_MOVES_BF16 = (
    memref.LoadOp,
    memref.StoreOp,
    vector.LoadOp,
    vector.StoreOp,
    vector.MaskedLoadOp,
    vector.BroadcastOp,
    vector.InsertOp,
    vector.ExtractOp,
    vector.ShuffleOp,
    arith.SelectOp,
    arith.BitcastOp,
    arith.ConstantOp,
    cf.BranchOp,
    cf.ConditionalBranchOp,
)
"""Ops that only move bf16 values (lowered on their i16 bits)."""


class _Converter:
    def __init__(self, f: func.FuncOp):
        self.f = f
        self.vals: dict[SSAValue, SSAValue] = {}
        self.blocks: dict[Block, Block] = {}
        self.cur: Block | None = None

    def v(self, x: SSAValue) -> SSAValue:
        return self.vals[x]

    def emit(self, op: Operation) -> SSAValue | None:
        assert self.cur is not None
        self.cur.add_op(op)
        return op.results[0] if op.results else None

    def const(self, value: int | float, t: Attribute) -> SSAValue:
        if isinstance(t, VectorType):
            return self.splat(self.const(value, t.element_type), t)
        attr = FloatAttr(float(value), t) if isinstance(t, AnyFloat) else IntegerAttr(int(value), t)  # type: ignore[arg-type]
        return self.emit(llvm.ConstantOp(attr, t))  # type: ignore[return-value]

    def intrinsic(self, name: str, args: list[SSAValue], t: Attribute) -> SSAValue:
        return self.emit(llvm.CallIntrinsicOp(name, args, [t]))  # type: ignore[return-value]

    def convert(self) -> llvm.FuncOp:
        region = self.f.body
        for b in region.blocks:
            nb = Block(arg_types=[convert_type(a.type) for a in b.args])
            for a, na in zip(b.args, nb.args):
                na.name_hint = a.name_hint
                self.vals[a] = na
            self.blocks[b] = nb
        for b in region.blocks:
            self.cur = self.blocks[b]
            for op in b.ops:
                self.op(op)
        ft = self.f.function_type
        inputs = [convert_type(t) for t in ft.inputs.data]
        arg_attrs = ArrayAttr(
            [
                DictionaryAttr({"llvm.noalias": UnitAttr()} if isinstance(t, MemRefType) else {})
                for t in ft.inputs.data
            ]
        )
        out = llvm.FuncOp(
            self.f.sym_name.data,
            llvm.LLVMFunctionType(inputs, None),
            linkage=llvm.LinkageAttr("external"),
            body=Region([self.blocks[b] for b in region.blocks]),
            other_props={"arg_attrs": arg_attrs},
        )
        for k, a in self.f.attributes.items():
            out.attributes[k] = a
        return out

    def op(self, op: Operation) -> None:
        t = type(op)
        res: SSAValue | None
        if not isinstance(op, _MOVES_BF16) and any(
            _is_bf16(v.type) for v in (*op.operands, *op.results)
        ):
            raise DiagnosticException(
                f"convert-loops-to-llvm: cannot lower '{op.name}' on bf16 values (LLVM has "
                "no bfloat arithmetic here); run legalize-float-types on the kernels first"
            )
        if t in _INT_BINARY:
            res = self.emit(_INT_BINARY[t](self.v(op.operands[0]), self.v(op.operands[1])))
        elif t in _FLOAT_BINARY:
            res = self.emit(
                _FLOAT_BINARY[t](self.v(op.operands[0]), self.v(op.operands[1]), _fastmath(op))
            )
        elif t in _INTRINSIC_BINARY:
            rt = convert_type(op.results[0].type)  # index -> i64
            res = self.intrinsic(
                f"{_INTRINSIC_BINARY[t]}.{_suffix(rt)}", [self.v(x) for x in op.operands], rt
            )
        elif t in _MATH_UNARY:
            rt = op.results[0].type
            res = self.intrinsic(f"{_MATH_UNARY[t]}.{_suffix(rt)}", [self.v(op.operands[0])], rt)
        elif t in _CASTS:
            rt = convert_type(op.results[0].type)
            x = self.v(op.operands[0])
            # bf16 <-> i16 bitcasts are no-ops on the bits
            res = x if x.type == rt else self.emit(_CASTS[t](x, rt))
        elif op.dialect_name() == "llvm":  # made by a target's pass (NVVM intrinsics)
            new = op.clone(value_mapper={o: self.v(o) for o in op.operands})
            self.emit(new)
            for r, nr in zip(op.results, new.results):
                self.vals[r] = nr
            return
        else:
            handler = getattr(self, "_" + op.name.replace(".", "_"), None)
            if handler is None:
                hint = (
                    "a GPU kernel: run convert-gpu-to-nvvm first"
                    if op.dialect_name() == "gpu"
                    else "lower it to func/cf/arith/math/memref first"
                )
                raise DiagnosticException(
                    f"convert-loops-to-llvm: cannot lower '{op.name}' ({hint})"
                )
            res = handler(op)
        if op.results:
            assert res is not None
            self.vals[op.results[0]] = res

    # -- ops that need more than a one-to-one mapping -------------------------
    def _arith_constant(self, op: arith.ConstantOp) -> SSAValue:
        t = convert_type(op.result.type)
        val = op.value
        if isinstance(val, DenseIntOrFPElementsAttr) and isinstance(t, VectorType):
            values = set(val.get_values())
            if len(values) != 1:
                raise DiagnosticException(
                    f"convert-loops-to-llvm: only splat vector constants are lowered, got {val}"
                )
            return self.const(values.pop(), t)  # a scalar, broadcast
        assert isinstance(val, (IntegerAttr, FloatAttr))
        if isinstance(op.result.type, BFloat16Type):  # its bits
            from mlfuse.dtypes import bf16_bits

            bits = int(bf16_bits(val.value.data)[()])
            return self.const(bits - (bits >> 15 << 16), t)
        return self.const(val.value.data, t)

    def _arith_negf(self, op) -> SSAValue:
        return self.emit(llvm.FNegOp(self.v(op.operands[0]), _fastmath(op)))  # type: ignore[return-value]

    def _arith_cmpi(self, op: arith.CmpiOp) -> SSAValue:
        pred = IntegerAttr(op.predicate.value.data, i64)  # same order as llvm's icmp
        return self.emit(llvm.ICmpOp(self.v(op.lhs), self.v(op.rhs), pred))  # type: ignore[return-value]

    def _arith_cmpf(self, op: arith.CmpfOp) -> SSAValue:
        name = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
        rt = op.result.type
        if name in ("false", "true"):  # constant predicates: no fcmp needed
            return self.const(1 if name == "true" else 0, rt)
        return self.emit(llvm.FCmpOp(self.v(op.lhs), self.v(op.rhs), name))  # type: ignore[return-value]

    # -- vectors (register blocks of a kernel's vector loop) ------------------
    def splat(self, x: SSAValue, t: VectorType) -> SSAValue:
        undef = self.emit(llvm.UndefOp(t))
        first = self.emit(llvm.InsertElementOp(undef, x, self.const(0, i32)))
        mask = DenseArrayBase.from_list(i32, [0] * t.get_shape()[0])
        return self.emit(llvm.ShuffleVectorOp(first, undef, mask, t))  # type: ignore[return-value]

    def _vector_broadcast(self, op: vector.BroadcastOp) -> SSAValue:
        return self.splat(self.v(op.source), convert_type(op.vector.type))  # type: ignore[arg-type]

    def _vector_insert(self, op: vector.InsertOp) -> SSAValue:
        (lane,) = op.static_position.get_values()
        return self.emit(  # type: ignore[return-value]
            llvm.InsertElementOp(self.v(op.dest), self.v(op.source), self.const(lane, i32))
        )

    def _vector_extract(self, op: vector.ExtractOp) -> SSAValue:
        (lane,) = op.static_position.get_values()
        t = convert_type(op.result.type)
        src = self.v(op.vector)
        one = self.emit(
            llvm.ShuffleVectorOp(
                src, src, DenseArrayBase.from_list(i32, [lane]), VectorType(t, [1])
            )
        )
        return self.emit(llvm.BitcastOp(one, t))  # type: ignore[return-value, arg-type]

    def _vector_shuffle(self, op: vector.ShuffleOp) -> SSAValue:
        mask = DenseArrayBase.from_list(i32, list(op.mask.get_values()))
        return self.emit(  # type: ignore[return-value]
            llvm.ShuffleVectorOp(self.v(op.v1), self.v(op.v2), mask, convert_type(op.result.type))
        )

    def _vector_create_mask(self, op: vector.CreateMaskOp) -> SSAValue:
        """Lanes below the bound: ``<0, 1, ...> < splat(n)``."""
        t = op.results[0].type
        assert isinstance(t, VectorType)
        w = t.get_shape()[0]
        lanes_t = VectorType(i64, [w])
        lanes = self.emit(
            llvm.ConstantOp(DenseIntOrFPElementsAttr.from_list(lanes_t, list(range(w))), lanes_t)
        )
        bound = self.splat(self.v(op.operands[0]), lanes_t)
        pred = IntegerAttr(arith.CMPI_COMPARISON_OPERATIONS.index("slt"), i64)
        return self.emit(llvm.ICmpOp(lanes, bound, pred))  # type: ignore[return-value, arg-type]

    def _vector_maskedload(self, op: vector.MaskedLoadOp) -> SSAValue:
        """``llvm.masked.load``: lanes off the mask are not read (the address of
        lane 0 may lie outside the buffer, so the GEP is not ``inbounds``)."""
        t = convert_type(op.result.type)
        ref = op.base.type
        assert isinstance(ref, MemRefType)
        ptr = self.emit(
            llvm.GEPOp.from_mixed_indices(
                self.v(op.base),
                [self.v(op.indices[0])],
                convert_type(ref.element_type),
                inbounds=False,
            )
        )
        align = self.const(element_bytes(t), i32)
        args = [ptr, align, self.v(op.mask), self.v(op.pass_thru)]
        return self.intrinsic(f"llvm.masked.load.{_suffix(t)}.p0", args, t)  # type: ignore[arg-type]

    def _vector_load(self, op: vector.LoadOp) -> SSAValue:
        ptr = self._address(op.base, list(op.indices))
        t = convert_type(op.result.type)
        align = op.attributes.get("alignment")  # (MLIR's vector.load has this attribute)
        n = align.value.data if isinstance(align, IntegerAttr) else element_bytes(t)
        return self.emit(llvm.LoadOp(ptr, t, alignment=n))  # type: ignore[return-value]

    def _vector_store(self, op: vector.StoreOp) -> None:
        ptr = self._address(op.base, list(op.indices))
        self.emit(llvm.StoreOp(self.v(op.vector), ptr, alignment=element_bytes(op.vector.type)))

    def _arith_index_cast(self, op: arith.IndexCastOp) -> SSAValue:
        x = self.v(op.input)
        src, dst = convert_type(op.input.type), convert_type(op.result.type)
        assert isinstance(src, IntegerType) and isinstance(dst, IntegerType)
        if src.width.data == dst.width.data:
            return x
        if src.width.data < dst.width.data:
            return self.emit(llvm.SExtOp(x, dst))  # type: ignore[return-value]
        return self.emit(llvm.TruncOp(x, dst))  # type: ignore[return-value]

    def _arith_select(self, op: arith.SelectOp) -> SSAValue:
        return self.emit(llvm.SelectOp(self.v(op.cond), self.v(op.lhs), self.v(op.rhs)))  # type: ignore[return-value]

    def _arith_uitofp(self, op: arith.UIToFPOp) -> SSAValue:
        src = op.input.type
        rt = op.result.type
        if not (isinstance(src, IntegerType) and src.width.data == 1):
            raise DiagnosticException("convert-loops-to-llvm: uitofp is only lowered from i1")
        return self.emit(llvm.SelectOp(self.v(op.input), self.const(1.0, rt), self.const(0.0, rt)))  # type: ignore[return-value]

    def _arith_fptosi(self, op: arith.FPToSIOp) -> SSAValue:
        rt = op.result.type
        name = f"llvm.fptosi.sat.{_suffix(rt)}.{_suffix(op.input.type)}"
        return self.intrinsic(name, [self.v(op.input)], rt)

    def _math_absi(self, op) -> SSAValue:
        t = op.results[0].type
        poison = self.const(0, i1)
        return self.intrinsic(f"llvm.abs.{_suffix(t)}", [self.v(op.operands[0]), poison], t)

    def _math_powf(self, op) -> SSAValue:
        # named with its type (llvm.pow.f64, llvm.pow.v4f64): xDSL's llvm.FPowOp declares
        # one untyped "llvm.pow" per module, which a second width then mismatches
        t = op.results[0].type
        args = [self.v(x) for x in op.operands]
        return self.intrinsic(f"llvm.pow.{_suffix(t)}", args, t)

    def _math_fma(self, op) -> SSAValue:
        a, b, c = (self.v(x) for x in op.operands)
        return self.emit(llvm.FMAOp(a, b, c))  # type: ignore[return-value]

    def _address(self, ref: SSAValue, indices) -> SSAValue:
        t = ref.type
        assert isinstance(t, MemRefType)
        if len(indices) != 1:
            raise DiagnosticException("convert-loops-to-llvm: only 1-D memrefs are lowered")
        gep = llvm.GEPOp.from_mixed_indices(
            self.v(ref), [self.v(indices[0])], convert_type(t.element_type), inbounds=True
        )
        return self.emit(gep)  # type: ignore[return-value]

    def _memref_load(self, op: memref.LoadOp) -> SSAValue:
        t = convert_type(op.res.type)
        ptr = self._address(op.memref, list(op.indices))
        return self.emit(llvm.LoadOp(ptr, t))  # type: ignore[return-value]

    def _memref_store(self, op: memref.StoreOp) -> None:
        ptr = self._address(op.memref, list(op.indices))
        self.emit(llvm.StoreOp(self.v(op.value), ptr))

    def _cf_br(self, op: cf.BranchOp) -> None:
        self.emit(llvm.BrOp(self.blocks[op.successor], *[self.v(a) for a in op.arguments]))

    def _cf_cond_br(self, op: cf.ConditionalBranchOp) -> None:
        self.emit(
            llvm.CondBrOp(
                self.v(op.cond),
                self.blocks[op.then_block],
                [self.v(a) for a in op.then_arguments],
                self.blocks[op.else_block],
                [self.v(a) for a in op.else_arguments],
            )
        )

    def _func_return(self, op: func.ReturnOp) -> None:
        if op.operands:
            raise DiagnosticException("convert-loops-to-llvm: kernels return nothing")
        self.emit(llvm.ReturnOp())


@dataclass(frozen=True)
class ConvertLoopsToLlvm(ModulePass):
    """Convert lowered kernels to the llvm dialect (GEP addressing, noalias buffers)."""

    name = "convert-loops-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in [o for o in op.ops if isinstance(o, func.FuncOp) and KERNEL_ATTR in o.attributes]:
            if any(o.dialect_name() == "scf" for o in f.walk()):
                raise DiagnosticException(
                    f"convert-loops-to-llvm: @{f.sym_name.data} still has scf ops; lower its "
                    "scf.parallel for a target (as the target's kernel pipeline does) and run "
                    "convert-scf-to-cf first"
                )
            Rewriter.replace_op(f, _Converter(f).convert())
