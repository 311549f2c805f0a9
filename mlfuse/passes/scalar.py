"""Elementwise lazy ops as scalar ``arith``/``math`` ops (the body of a kernel).

Semantics follow numpy where numpy defines them: max/min propagate NaN,
``x != nan`` is true, float -> bool is ``x != 0``. Integer division by zero
gives 0 (numpy warns and gives 0) instead of trapping, and ``idiv``/``mod``
round toward -inf like Python's ``//`` and ``%``.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.builder import Builder
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import AnyFloat, FloatAttr, IntegerAttr, IntegerType, VectorType
from xdsl.ir import Attribute, Operation, SSAValue

from mlfuse.dialects.lazy import is_bool, is_float

REDUCE_IDENTITY = {
    "add": lambda t: 0.0 if is_float(t) else 0,
    "mul": lambda t: 1.0 if is_float(t) else 1,
    "max": lambda t: float("-inf") if is_float(t) else -(1 << (t.width.data - 1)),
}


def constant_op(value: float | int | bool, t: Attribute) -> arith.ConstantOp:
    if isinstance(t, IntegerType):
        v = int(value)
        if t.width.data == 1:
            v = -1 if v else 0  # i1 true is all-ones (signless printing: -1 == true)
        return arith.ConstantOp(IntegerAttr(v, t))
    return arith.ConstantOp(FloatAttr(float(value), t))  # type: ignore[arg-type]


def constant(b: Builder, value: float | int | bool, t: Attribute) -> SSAValue:
    return b.insert(constant_op(value, t)).result


class ScalarEmitter:
    """Appends the scalar ops of one elementwise lazy op to a block."""

    def __init__(self, builder: Builder):
        self.b = builder

    def op(self, o: Operation) -> SSAValue:
        return self.b.insert(o).results[0]

    def c(self, value, t: Attribute) -> SSAValue:
        return constant(self.b, value, t)

    # -- integer division, guarded -------------------------------------------
    def _div_parts(self, a: SSAValue, d: SSAValue, floor: bool):
        t = a.type
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
    def cast(self, x: SSAValue, to: Attribute) -> SSAValue:
        fr = x.type
        if fr == to:
            return x
        if is_bool(to):
            if is_float(fr):
                return self.op(arith.CmpfOp(x, self.c(0.0, fr), "une"))
            return self.op(arith.CmpiOp(x, self.c(0, fr), "ne"))
        if is_float(to):
            if is_float(fr):
                assert isinstance(fr, AnyFloat) and isinstance(to, AnyFloat)
                wider = to.bitwidth > fr.bitwidth
                return self.op(arith.ExtFOp(x, to) if wider else arith.TruncFOp(x, to))
            if is_bool(fr):
                return self.op(arith.UIToFPOp(x, to))  # type: ignore[arg-type]
            return self.op(arith.SIToFPOp(x, to))  # type: ignore[arg-type]
        assert isinstance(to, IntegerType)
        if is_float(fr):
            return self.op(arith.FPToSIOp(x, to))
        assert isinstance(fr, IntegerType)
        if fr.width.data == 1:
            return self.op(arith.ExtUIOp(x, to))
        if to.width.data > fr.width.data:
            return self.op(arith.ExtSIOp(x, to))
        return self.op(arith.TruncIOp(x, to))

    # -- the elementwise kinds -------------------------------------------------
    def emit(self, kind: str, args: list[SSAValue], out: Attribute) -> SSAValue:
        t = args[0].type
        f = is_float(t)
        if kind in ("cast",):
            return self.cast(args[0], out)
        if kind == "bitcast":
            return self.op(arith.BitcastOp(args[0], out))
        handler = _KINDS.get(kind)
        if handler is None:
            raise NotImplementedError(f"no scalar lowering for elementwise kind '{kind}'")
        return handler(self, args, t, f)


def _cmp(fpred: str, ipred: str, bpred: str):
    def go(e: ScalarEmitter, a, t, f):
        if f:
            return e.op(arith.CmpfOp(a[0], a[1], fpred))
        return e.op(arith.CmpiOp(a[0], a[1], bpred if is_bool(t) else ipred))

    return go


def _fi(fop, iop, bop=None):
    def go(e: ScalarEmitter, a, t, f):
        if f:
            return e.op(fop(*a))
        if bop is not None and is_bool(t):
            return e.op(bop(*a))
        return e.op(iop(*a))

    return go


def _unary_math(mop):
    return lambda e, a, t, f: e.op(mop(a[0]))


def _neg(e: ScalarEmitter, a, t, f):
    return e.op(arith.NegfOp(a[0])) if f else e.op(arith.SubiOp(e.c(0, t), a[0]))


def _abs(e: ScalarEmitter, a, t, f):
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
    "max": _fi(arith.MaximumfOp, arith.MaxSIOp, arith.OrIOp),
    "min": _fi(arith.MinimumfOp, arith.MinSIOp, arith.AndIOp),
    "pow": lambda e, a, t, f: e.op(math.PowFOp(a[0], a[1])),
    "and": lambda e, a, t, f: e.op(arith.AndIOp(a[0], a[1])),
    "or": lambda e, a, t, f: e.op(arith.OrIOp(a[0], a[1])),
    "xor": lambda e, a, t, f: e.op(arith.XOrIOp(a[0], a[1])),
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
    }[kind]
    return b.insert(ops[0](acc, v) if f else ops[1](acc, v)).results[0]
