"""Elementwise lazy ops as scalar ``arith``/``math`` ops (the body of a kernel).

Semantics follow numpy where numpy defines them: max/min propagate NaN,
``x != nan`` is true, float -> bool is ``x != 0``. Integer division by zero
gives 0 (numpy warns and gives 0) instead of trapping, and ``idiv``/``mod``
round toward -inf like Python's ``//`` and ``%``.

Kernel bodies compute on signless integers: an unsigned lazy element type
(``ui8``) becomes ``i8`` here, and its ops are arith's unsigned ones (divui,
remui, maxui, cmpi ult, shrui, extui). Shifts by a negative amount or by the
bit width or more are defined as in PyTorch: ``<<`` gives 0, ``>>`` the sign
fill. Float -> integer conversions saturate (NaN -> 0) for 32- and 64-bit
results; 8- and 16-bit results are converted through int64 and wrap, as
PyTorch converts to uint8 (``-1.0`` -> 255; numpy and PyTorch on x86 agree
for every value inside int32).
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.builder import Builder
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import (
    AnyFloat,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    VectorType,
)
from xdsl.ir import Attribute, Operation, SSAValue

from mlfuse.dialects.lazy import is_bool, is_float, is_unsigned, signless

REDUCE_IDENTITY = {
    "add": lambda t: 0.0 if is_float(t) else 0,
    "mul": lambda t: 1.0 if is_float(t) else 1,
    "max": lambda t: (
        float("-inf") if is_float(t) else 0 if is_unsigned(t) else -(1 << (t.width.data - 1))
    ),
    "min": lambda t: (
        float("inf")
        if is_float(t)
        else (1 << t.width.data) - 1
        if is_unsigned(t)
        else (1 << (t.width.data - 1)) - 1
    ),
}


def constant_op(value: float | int | bool, t: Attribute) -> arith.ConstantOp:
    """``arith.constant``; an unsigned type's value becomes its signless twin's
    (``200 : ui8`` -> ``-56 : i8``, the same bits)."""
    if isinstance(t, IntegerType):
        v = int(value)
        w = t.width.data
        if w == 1:
            v = -1 if v else 0  # i1 true is all-ones (signless printing: -1 == true)
        else:
            v = ((v + (1 << (w - 1))) % (1 << w)) - (1 << (w - 1))
        return arith.ConstantOp(IntegerAttr(v, signless(t)))
    return arith.ConstantOp(FloatAttr(float(value), t))  # type: ignore[arg-type]


def constant(b: Builder, value: float | int | bool, t: Attribute) -> SSAValue:
    return b.insert(constant_op(value, t)).result


class ScalarEmitter:
    """Appends the scalar ops of one elementwise lazy op to a block."""

    def __init__(self, builder: Builder):
        self.b = builder
        self.unsigned = False  # the operands of the op being emitted are unsigned

    def op(self, o: Operation) -> SSAValue:
        return self.b.insert(o).results[0]

    def c(self, value, t: Attribute) -> SSAValue:
        return constant(self.b, value, t)

    # -- integer division, guarded -------------------------------------------
    def _div_parts(self, a: SSAValue, d: SSAValue, floor: bool):
        t = a.type
        if self.unsigned:  # floor == truncation; only d == 0 needs a guard
            one, zero = self.c(1, t), self.c(0, t)
            is0 = self.op(arith.CmpiOp(d, zero, "eq"))
            safe = self.op(arith.SelectOp(is0, one, d))
            q = self.op(arith.DivUIOp(a, safe))
            r = self.op(arith.RemUIOp(a, safe))
            return self.op(arith.SelectOp(is0, zero, q)), self.op(arith.SelectOp(is0, zero, r))
        one, zero, m1 = self.c(1, t), self.c(0, t), self.c(-1, t)
        is0 = self.op(arith.CmpiOp(d, zero, "eq"))
        ism1 = self.op(arith.CmpiOp(d, m1, "eq"))
        bad = self.op(arith.OrIOp(is0, ism1))
        safe = self.op(arith.SelectOp(bad, one, d))
        q = self.op(arith.DivSIOp(a, safe))
        r = self.op(arith.RemSIOp(a, safe))
        if floor:
            # r != 0 and sign(r) != sign(d): q -= 1, r += d
            rnz = self.op(arith.CmpiOp(r, zero, "ne"))
            rneg = self.op(arith.CmpiOp(r, zero, "slt"))
            dneg = self.op(arith.CmpiOp(d, zero, "slt"))
            diff = self.op(arith.XOrIOp(rneg, dneg))
            fix = self.op(arith.AndIOp(rnz, diff))
            q = self.op(arith.SelectOp(fix, self.op(arith.SubiOp(q, one)), q))
            r = self.op(arith.SelectOp(fix, self.op(arith.AddiOp(r, d)), r))
        # d == -1: q = -a (wrapping), r = 0; d == 0: both 0
        q = self.op(arith.SelectOp(ism1, self.op(arith.SubiOp(zero, a)), q))
        r = self.op(arith.SelectOp(ism1, zero, r))
        return self.op(arith.SelectOp(is0, zero, q)), self.op(arith.SelectOp(is0, zero, r))

    # -- conversions --------------------------------------------------------
    def cast(self, x: SSAValue, to: Attribute, from_unsigned: bool = False) -> SSAValue:
        """``x`` (of a signless body type) converted to ``to`` (a lazy element type;
        the result has its signless twin); ``from_unsigned``: x holds unsigned values."""
        fr = x.type
        to_unsigned = is_unsigned(to)
        to = signless(to)
        if fr == to:
            return x
        if is_bool(to):
            if is_float(fr):
                return self.op(arith.CmpfOp(x, self.c(0.0, fr), "une"))
            return self.op(arith.CmpiOp(x, self.c(0, fr), "ne"))
        if is_float(to):
            assert isinstance(to, AnyFloat)
            if is_float(fr):
                assert isinstance(fr, AnyFloat)
                if fr.bitwidth == to.bitwidth:  # float16 <-> bfloat16: through float32
                    x = self.op(arith.ExtFOp(x, Float32Type()))
                    return self.op(arith.TruncFOp(x, to))
                wider = to.bitwidth > fr.bitwidth
                return self.op(arith.ExtFOp(x, to) if wider else arith.TruncFOp(x, to))
            if is_bool(fr):
                return self.op(arith.UIToFPOp(x, to))  # type: ignore[arg-type]
            assert isinstance(fr, IntegerType)
            if from_unsigned and fr.width.data == 64:
                return self._u64_to_float(x, to)
            if from_unsigned:  # zero-extend: the value is then non-negative as signed
                x = self.op(arith.ExtUIOp(x, IntegerType(max(32, 2 * fr.width.data))))
            return self.op(arith.SIToFPOp(x, to))  # type: ignore[arg-type]
        assert isinstance(to, IntegerType)
        if is_float(fr):
            if to_unsigned and to.width.data == 64:
                return self._float_to_u64(x)
            if to.width.data == 64 or (to.width.data == 32 and not to_unsigned):
                return self.op(arith.FPToSIOp(x, to))  # lowered saturating
            wide = self.op(arith.FPToSIOp(x, IntegerType(64)))
            return self.op(arith.TruncIOp(wide, to))  # wraps, as on x86
        assert isinstance(fr, IntegerType)
        if fr.width.data == 1:
            return self.op(arith.ExtUIOp(x, to))
        if to.width.data > fr.width.data:
            return self.op(arith.ExtUIOp(x, to) if from_unsigned else arith.ExtSIOp(x, to))
        if to.width.data == fr.width.data:
            return x  # int8 <-> uint8: the same bits
        return self.op(arith.TruncIOp(x, to))

    def _u64_to_float(self, x: SSAValue, to: AnyFloat) -> SSAValue:
        """uint64 bits -> the nearest float: below 2**63 the signed conversion; above,
        half the value with its lowest bit kept sticky (so it still rounds to
        nearest even), converted and doubled."""
        i64 = IntegerType(64)
        one = self.c(1, i64)
        half = self.op(arith.OrIOp(self.op(arith.ShRUIOp(x, one)), self.op(arith.AndIOp(x, one))))
        small = self.op(arith.SIToFPOp(x, to))  # type: ignore[arg-type]
        big = self.op(arith.SIToFPOp(half, to))  # type: ignore[arg-type]
        big = self.op(arith.AddfOp(big, big))
        neg = self.op(arith.CmpiOp(x, self.c(0, i64), "slt"))
        return self.op(arith.SelectOp(neg, big, small))

    def _float_to_u64(self, x: SSAValue) -> SSAValue:
        """A float -> uint64 bits, as x86 code converts: values from 2**63 up through
        the signed conversion of ``x - 2**63`` with the top bit set again; below,
        the signed conversion (a negative value wraps: ``-1.0`` is ``2**64 - 1``);
        NaN is 0 and values past the range saturate."""
        i64 = IntegerType(64)
        if x.type.bitwidth < 32:  # type: ignore[attr-defined]  # 2**63 is past float16
            x = self.op(arith.ExtFOp(x, Float32Type()))
        t = x.type
        top = self.c(float(2**63), t)
        big = self.op(arith.CmpfOp(x, top, "oge"))
        shifted = self.op(arith.SelectOp(big, self.op(arith.SubfOp(x, top)), x))
        r = self.op(arith.FPToSIOp(shifted, i64))
        flipped = self.op(arith.XOrIOp(r, self.c(-(1 << 63), i64)))
        return self.op(arith.SelectOp(big, flipped, r))

    # -- the elementwise kinds -------------------------------------------------
    def emit(
        self, kind: str, args: list[SSAValue], out: Attribute, src: Attribute | None = None
    ) -> SSAValue:
        """The scalar ops of elementwise ``kind`` on ``args`` (signless body values);
        ``out`` is the lazy result element type, ``src`` the lazy element type of
        the (last) operand, which says whether integers are unsigned."""
        t = args[0].type
        f = is_float(t)
        self.unsigned = src is not None and is_unsigned(src)
        if kind in ("cast",):
            return self.cast(args[0], out, self.unsigned)
        if kind == "bitcast":
            if signless(out) == t:
                return args[0]  # int8 <-> uint8
            return self.op(arith.BitcastOp(args[0], signless(out)))
        handler = _KINDS.get(kind)
        if handler is None:
            raise NotImplementedError(f"no scalar lowering for elementwise kind '{kind}'")
        return handler(self, args, t, f)


def _cmp(fpred: str, ipred: str, bpred: str):
    def go(e: ScalarEmitter, a, t, f):
        if f:
            return e.op(arith.CmpfOp(a[0], a[1], fpred))
        unsigned = is_bool(t) or e.unsigned
        return e.op(arith.CmpiOp(a[0], a[1], bpred if unsigned else ipred))

    return go


def _fi(fop, iop, bop=None, uop=None):
    def go(e: ScalarEmitter, a, t, f):
        if f:
            return e.op(fop(*a))
        if bop is not None and is_bool(t):
            return e.op(bop(*a))
        if uop is not None and e.unsigned:
            return e.op(uop(*a))
        return e.op(iop(*a))

    return go


def _shift_guard(e: ScalarEmitter, a):
    """(amount, out of range): the amount, or 0 where it is negative or not below
    the bit width (unsigned compare: a negative amount is a huge one)."""
    t = a[1].type
    assert isinstance(t, IntegerType)
    bad = e.op(arith.CmpiOp(a[1], e.c(t.width.data, t), "uge"))
    return e.op(arith.SelectOp(bad, e.c(0, t), a[1])), bad


def _shl(e: ScalarEmitter, a, t, f):
    amount, bad = _shift_guard(e, a)
    return e.op(arith.SelectOp(bad, e.c(0, t), e.op(arith.ShLIOp(a[0], amount))))


def _shr(e: ScalarEmitter, a, t, f):
    amount, bad = _shift_guard(e, a)
    if e.unsigned:
        return e.op(arith.SelectOp(bad, e.c(0, t), e.op(arith.ShRUIOp(a[0], amount))))
    fill = e.op(arith.SelectOp(bad, e.c(t.width.data - 1, t), amount))  # type: ignore[attr-defined]
    return e.op(arith.ShRSIOp(a[0], fill))


def _unary_math(mop):
    return lambda e, a, t, f: e.op(mop(a[0]))


def _neg(e: ScalarEmitter, a, t, f):
    return e.op(arith.NegfOp(a[0])) if f else e.op(arith.SubiOp(e.c(0, t), a[0]))


def _abs(e: ScalarEmitter, a, t, f):
    if e.unsigned:
        return a[0]
    return e.op(math.AbsFOp(a[0])) if f else e.op(math.AbsIOp(a[0]))


def _not(e: ScalarEmitter, a, t, f):
    return e.op(arith.XOrIOp(a[0], e.c(-1 if not is_bool(t) else True, t)))


def _div(e: ScalarEmitter, a, t, f):
    if f:
        return e.op(arith.DivfOp(a[0], a[1]))
    return e._div_parts(a[0], a[1], floor=False)[0]


_KINDS: dict[str, Callable[[ScalarEmitter, list[SSAValue], Attribute, bool], SSAValue]] = {
    "neg": _neg,
    "recip": lambda e, a, t, f: e.op(arith.DivfOp(e.c(1.0, t), a[0])),
    "sqrt": _unary_math(math.SqrtOp),
    "exp": _unary_math(math.ExpOp),
    "exp2": _unary_math(math.Exp2Op),
    "log": _unary_math(math.LogOp),
    "log2": _unary_math(math.Log2Op),
    "sin": _unary_math(math.SinOp),
    "cos": _unary_math(math.CosOp),
    "floor": _unary_math(math.FloorOp),
    "ceil": _unary_math(math.CeilOp),
    "abs": _abs,
    "not": _not,
    "add": _fi(arith.AddfOp, arith.AddiOp, arith.OrIOp),
    "sub": _fi(arith.SubfOp, arith.SubiOp, arith.XOrIOp),
    "mul": _fi(arith.MulfOp, arith.MuliOp, arith.AndIOp),
    "div": _div,
    "idiv": lambda e, a, t, f: e._div_parts(a[0], a[1], floor=True)[0],
    "mod": lambda e, a, t, f: e._div_parts(a[0], a[1], floor=True)[1],
    "max": _fi(arith.MaximumfOp, arith.MaxSIOp, arith.OrIOp, arith.MaxUIOp),
    "min": _fi(arith.MinimumfOp, arith.MinSIOp, arith.AndIOp, arith.MinUIOp),
    "pow": lambda e, a, t, f: e.op(math.PowFOp(a[0], a[1])),
    "and": lambda e, a, t, f: e.op(arith.AndIOp(a[0], a[1])),
    "or": lambda e, a, t, f: e.op(arith.OrIOp(a[0], a[1])),
    "xor": lambda e, a, t, f: e.op(arith.XOrIOp(a[0], a[1])),
    "shl": _shl,
    "shr": _shr,
    "cmplt": _cmp("olt", "slt", "ult"),
    "cmple": _cmp("ole", "sle", "ule"),
    "cmpeq": _cmp("oeq", "eq", "eq"),
    "cmpne": _cmp("une", "ne", "ne"),
    "where": lambda e, a, t, f: e.op(arith.SelectOp(a[0], a[1], a[2])),
    "mulacc": lambda e, a, t, f: e.op(math.FmaOp(a[0], a[1], a[2])),
}


def combine(b: Builder, kind: str, acc: SSAValue, v: SSAValue) -> SSAValue:
    """One step of a reduction: ``acc (kind) v`` (scalars or vectors)."""
    t = acc.type
    f = is_float(t.element_type if isinstance(t, VectorType) else t)
    ops = {
        "add": (arith.AddfOp, arith.AddiOp),
        "mul": (arith.MulfOp, arith.MuliOp),
        "max": (arith.MaximumfOp, arith.MaxSIOp),
        "min": (arith.MinimumfOp, arith.MinSIOp),
    }[kind]
    return b.insert(ops[0](acc, v) if f else ops[1](acc, v)).results[0]
