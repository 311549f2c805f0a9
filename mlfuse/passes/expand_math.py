"""expand-math: transcendental ``math`` ops -> range reduction + polynomials.

LLVM's x86 backend turns ``llvm.exp``/``log``/``sin``/... on vectors back
into scalar libm calls (``expf``), which stops the loop vectorizer: a
16M-element ``exp`` ran 4x slower than numpy. This pass rewrites those ops
into elementwise ``arith`` ops (and ``math.fma``/``math.floor``/
``math.absf``, which lower to vectorizable intrinsics), so whole loops
vectorize. Every value is built from the op's own type (integer twins via
``arith.bitcast``, constants per type), so the expansion is the same for a
scalar and for a ``vector<...>`` of it.

Expanded, by element type:

======= ===================================== ===================================
type    exp exp2 log log2                     sin cos powf
======= ===================================== ===================================
f32     native f32 code                       in f64, rounded to f32
f64     native f64 code                       sin/cos native; powf stays ``llvm.pow``
f16/bf16 in f32 (then as above), rounded back in f32, rounded back
other   untouched (lowered to intrinsics)
======= ===================================== ===================================

The algorithms (all written once, for any IEEE format; numbered as in the
code):

1. exp(x): clamp x to where the result is 0 or inf anyway; n = round(x·log2 e)
   with the add-magic-constant trick (the sum's low bits are n, as an
   integer and as a float); r = r_hi + r_lo = x − n·ln2 with ln2 in two parts
   (fma, so r_hi is exact); p = 1 + (r_hi + (r_lo + r²·q(r))) (f32: Cephes'
   degree-7 minimax; f64: Taylor to r¹³); result p·2^⌊n/2⌋·2^(n−⌊n/2⌋), both factors
   built in the exponent bits, so overflow gives inf and denormal results are
   rounded once.
2. exp2(x): as exp with n = round(x), r = x − n exact, p(r) ≈ 2^r.
3. log(x), log2(x): denormals scaled by 2^mant first; x = 2^k·(1+f) with
   1+f in [√½, √2); log(1+f) = f − f²/2 + s·(f²/2 + R(s²)), s = f/(2+f)
   (fdlibm/musl kernels); log2 splits f − f²/2 into high bits and a tail so
   the multiplication by 1/ln2 stays exact. x < 0 or NaN -> NaN, ±0 -> −inf,
   +inf -> +inf.
4. sin(x), cos(x) (in f64): j = round(x·2/π), r = x − j·π/2 with π/2 in three
   doubles (fma: the first step is exact); the quadrant j mod 4 (+1 for cos)
   picks ±sin(r) or ±cos(r) (fdlibm kernels, |r| <= π/4), on integer bits.
   Exact while |x| < 2^50; from there (and for inf/NaN) the result is that of
   a ``kernel.sincos_large`` (Payne-Hanek's reduction, :func:`sincos_large`),
   which ``expand-large-sincos`` expands behind a branch once loops exist.
   ±inf, NaN -> NaN.
5. powf(x, y) (f32, in f64): 2^(y·log2|x|) with steps 2 and 3 in f64, which
   is exact enough for a correctly rounded f32 result; then C99's special
   cases, as libm's ``powf`` (the previous lowering) and numpy give them:
   x < 0 with odd integer y negates, with non-integer y is NaN; y == 0 or
   x == 1 gives 1 (even for NaN); (−1)^±inf = 1; ±0 and ±inf by the sign of y.

Accuracy (max ulp against float64/long double references; the table is in
``docs/design.md``): under 1 ulp for exp/exp2/log/log2 in both precisions
(every float32 checked), 0.5 for f32 sin/cos/pow, 1.5 for f64 sin/cos (2.8 past 2^50).
"""

from __future__ import annotations

import math as pymath
import struct
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import (
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    VectorType,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)

from mlfuse.dialects import kernel

_INF = float("inf")
_h = float.fromhex
_NAN = float("nan")


def _elem(t: Attribute) -> Attribute:
    return t.element_type if isinstance(t, VectorType) else t


def _like(t: Attribute, elem: Attribute) -> Attribute:
    """``elem``, or a vector of it shaped like ``t``."""
    if isinstance(t, VectorType):
        return VectorType(elem, t.get_shape(), t.scalable_dims)
    return elem


def _round_to(v: float, t: Attribute) -> float:
    """``v`` rounded to float type ``t`` (f32 constants are written as exact f32 values)."""
    if isinstance(t, Float32Type):
        return struct.unpack("<f", struct.pack("<f", v))[0]
    return v


@dataclass(frozen=True)
class _Fmt:
    """An IEEE binary format: its mantissa bits, exponent bias and integer twin."""

    bits: int
    mant: int
    bias: int

    def f2i(self, v: float) -> int:
        """The bit pattern of ``v`` as a signed integer of this width."""
        if self.bits == 32:
            return struct.unpack("<i", struct.pack("<f", v))[0]
        return struct.unpack("<q", struct.pack("<d", v))[0]


_F32 = _Fmt(32, 23, 127)
_F64 = _Fmt(64, 52, 1023)


class _Emitter:
    """Collects the elementwise ops of one expansion, in float type ``t``.

    Methods take and return SSA values; float constants are plain Python
    numbers (rounded to the format), integer ones are marked with ``ci``.
    """

    def __init__(self, t: Attribute):
        self.t = t
        e = _elem(t)
        self.fmt = _F64 if isinstance(e, Float64Type) else _F32
        self.it = _like(t, IntegerType(self.fmt.bits))
        self.bt = _like(t, IntegerType(1))
        self.ops: list[Operation] = []
        self._consts: dict[tuple, SSAValue] = {}

    def _op(self, op: Operation) -> SSAValue:
        self.ops.append(op)
        return op.results[0]

    def _const(self, value: float | int, t: Attribute) -> SSAValue:
        key = (value if not (isinstance(value, float) and value != value) else "nan", str(t))
        if key not in self._consts:
            e = _elem(t)
            if isinstance(t, VectorType):
                attr = DenseIntOrFPElementsAttr.from_list(t, [value])  # type: ignore[arg-type]
            elif isinstance(e, IntegerType):
                attr = IntegerAttr(int(value), e)
            else:
                attr = FloatAttr(_round_to(float(value), e), e)  # type: ignore[arg-type]
            self._consts[key] = self._op(arith.ConstantOp(attr, t))
        return self._consts[key]

    def c(self, v: float) -> SSAValue:
        return self._const(v, self.t)

    def ci(self, v: int) -> SSAValue:
        return self._const(v, self.it)

    def _v(self, x: SSAValue | float) -> SSAValue:
        return x if isinstance(x, SSAValue) else self.c(x)

    # float arithmetic
    def add(self, a, b):
        return self._op(arith.AddfOp(self._v(a), self._v(b)))

    def sub(self, a, b):
        return self._op(arith.SubfOp(self._v(a), self._v(b)))

    def mul(self, a, b):
        return self._op(arith.MulfOp(self._v(a), self._v(b)))

    def div(self, a, b):
        return self._op(arith.DivfOp(self._v(a), self._v(b)))

    def fma(self, a, b, c):
        return self._op(math.FmaOp(self._v(a), self._v(b), self._v(c)))

    def neg(self, a):
        return self._op(arith.NegfOp(a))

    def floor(self, a):
        return self._op(math.FloorOp(a))

    def abs(self, a):
        return self._op(math.AbsFOp(a))

    def horner(self, x, coeffs: list[float]):
        """coeffs[0]·x^(n-1) + ... + coeffs[-1], with fmas."""
        acc = self.c(coeffs[0])
        for k in coeffs[1:]:
            acc = self.fma(acc, x, k)
        return acc

    # comparisons, selects, integers
    def cmp(self, a, b, pred: str):
        return self._op(arith.CmpfOp(self._v(a), self._v(b), pred))

    def sel(self, cond, a, b):
        return self._op(arith.SelectOp(cond, self._v(a), self._v(b)))

    def and_(self, a, b):
        return self._op(arith.AndIOp(a, b))

    def or_(self, a, b):
        return self._op(arith.OrIOp(a, b))

    def not_(self, a):
        return self._op(arith.XOrIOp(a, self._const(-1, self.bt)))

    def to_int(self, x):
        return self._op(arith.BitcastOp(x, self.it))

    def to_float(self, i):
        return self._op(arith.BitcastOp(i, self.t))

    def iadd(self, a, b):
        return self._op(arith.AddiOp(a, b))

    def isub(self, a, b):
        return self._op(arith.SubiOp(a, b))

    def iand(self, a, b):
        return self._op(arith.AndIOp(a, b))

    def shl(self, a, n: int):
        return self._op(arith.ShLIOp(a, self.ci(n)))

    def ashr(self, a, n: int):
        return self._op(arith.ShRSIOp(a, self.ci(n)))

    def shrui(self, a, n: int):
        return self._op(arith.ShRUIOp(a, self.ci(n)))

    def xor(self, a, b):
        return self._op(arith.XOrIOp(a, b))

    def mask(self, a, n: int):
        """All ones where bit ``n`` of integer ``a`` is set, else 0: the condition
        of :meth:`pick`. No i1 on the way: xDSL 0.74 has no vector form of
        compares or ``trunci``, so selects on bits vectorize where these do not."""
        return self.isub(self.ci(0), self.iand(self.shrui(a, n), self.ci(1)))

    def pick(self, mask, a, b):
        """``a`` where ``mask`` (an integer of all ones or zeros) is set, else ``b``."""
        ib = self.to_int(self._v(b))
        return self.to_float(self.xor(ib, self.iand(self.xor(ib, self.to_int(self._v(a))), mask)))

    def inz(self, a):
        """a != 0 (integer)."""
        return self._op(arith.CmpiOp(a, self.ci(0), "ne"))

    def sitofp(self, i):
        return self._op(arith.SIToFPOp(i, self.t))  # type: ignore[arg-type]

    # shared steps
    def round_magic(self, x, scale: float):
        """n = round(x·scale) as (float, integer), exact while |n| < 2^(mant-1)."""
        magic = 1.5 * 2.0**self.fmt.mant
        t = self.fma(x, scale, magic) if scale != 1.0 else self.add(x, magic)
        return self.sub(t, magic), self.isub(self.to_int(t), self.ci(self.fmt.f2i(magic)))

    def scale2(self, p, n):
        """p·2^n for an integer n in [-2·bias, 2·bias], in two exponent-bit factors."""
        f = self.fmt
        n1 = self.ashr(n, 1)
        n2 = self.isub(n, n1)
        s1 = self.to_float(self.shl(self.iadd(n1, self.ci(f.bias)), f.mant))
        s2 = self.to_float(self.shl(self.iadd(n2, self.ci(f.bias)), f.mant))
        return self.mul(self.mul(p, s1), s2)

    def clamp(self, x, lo: float, hi: float):
        """x clamped to [lo, hi]; NaN stays NaN (IEEE minimum/maximum propagate it).
        No compare: a kernel that only clamps stays free of compares, which
        vectorize in fewer forms (xDSL's arith compares produce only i1)."""
        x = self._op(arith.MinimumfOp(x, self._v(hi)))
        return self._op(arith.MaximumfOp(x, self._v(lo)))


# -- constants --------------------------------------------------------------------
_LN2 = _h("0x1.62E42FEFA39EFp-1")
_LOG2E = _h("0x1.71547652B82FEp0")
# exp: clamp bounds (results 0 / inf beyond), ln2 in two parts, q(r) for p = 1 + r + r²·q
_EXP = {
    32: dict(
        lo=-110.0,  # far below ln(2^-150) = -103.97: 0 however the last product rounds
        hi=89.0,
        ln2=(_h("0x1.62E43p-1"), -_h("0x1.05C61p-29")),
        q=[1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2,
           1.6666665459e-1, 5.0000001201e-1],
    ),
    64: dict(
        lo=-760.0,
        hi=710.0,
        ln2=(_LN2, _h("0x1.ABC9E3B39803Fp-56")),
        q=[1.0 / pymath.factorial(k) for k in range(13, 1, -1)],
    ),
}  # fmt: skip
# exp2: p = 1 + r·q(r), r in [-1/2, 1/2]
_EXP2 = {
    32: dict(
        lo=-151.0,
        hi=129.0,
        q=[1.535336188319500e-4, 1.339887440266574e-3, 9.618437357674640e-3,
           5.550332471162809e-2, 2.402264791363012e-1, 6.931472028550421e-1],
    ),
    64: dict(
        lo=-1100.0,
        hi=1025.0,
        q=[_LN2**k / pymath.factorial(k) for k in range(13, 0, -1)],
    ),
}  # fmt: skip
# log: fdlibm/musl R(z) = z·(Lg1 + z·(Lg2 + ...)), ln2 split, 1/ln2 split (log2)
_LOG = {
    32: dict(
        lg=[0xAAAAAA / 2**24, 0xCCCE13 / 2**25, 0x91E9EE / 2**25, 0xF89E26 / 2**26],
        ln2=(6.9313812256e-01, 9.0580006145e-06),
        ivln2=(1.4428710938e00, -1.7605285393e-04),
        hi_mask=-(1 << 12),
    ),
    64: dict(
        lg=[6.666666666666735130e-01, 3.999999999940941908e-01, 2.857142874366239149e-01,
            2.222219843214978396e-01, 1.818357216161805012e-01, 1.531383769920937332e-01,
            1.479819860511658591e-01],
        ln2=(6.93147180369123816490e-01, 1.90821492927058770002e-10),
        ivln2=(1.44269504072144627571e00, 1.67517131648865118353e-10),
        hi_mask=-(1 << 32),
    ),
}  # fmt: skip
# sin/cos (f64): fdlibm kernels on |r| <= pi/4; pi/2 in three doubles
_SIN = [
    1.58969099521155010221e-10, -2.50507602534068634195e-08, 2.75573137070700676789e-06,
    -1.98412698298579493134e-04, 8.33333333332248946124e-03, -1.66666666666666324348e-01,
]  # fmt: skip
_COS = [
    -1.13596475577881948265e-11, 2.08757232129817482790e-09, -2.75573143513906633035e-07,
    2.48015872894767294178e-05, -1.38888888888741095749e-03, 4.16666666666666019037e-02,
]  # fmt: skip
_PIO2 = (_h("0x1.921FB54442D18p0"), _h("0x1.1A62633145C07p-54"), -_h("0x1.F1976B7ED8FBCp-110"))
_TWO_OVER_PI = _h("0x1.45F306DC9C883p-1")


def _pi_fixed(bits: int) -> int:
    """⌊π·2^bits⌋ (Machin's formula in integers, with guard bits)."""
    guard = bits + 32
    one = 1 << guard

    def arctan_inv(n: int) -> int:  # arctan(1/n)·2^guard
        total, term, k, n2 = 0, one // n, 1, n * n
        while term:
            total += term // k if (k // 2) % 2 == 0 else -(term // k)
            term //= n2
            k += 2
        return total

    return (16 * arctan_inv(5) - 4 * arctan_inv(239)) >> 32


def _payne_hanek_table() -> list[list[float]]:
    """G_b = 2^(128b)·2/π mod 4 for b = 0..7, each as 5 doubles summing to it
    within 2^-265 (the slow path of :func:`_rem_pio2_large`)."""
    from fractions import Fraction

    frac_bits = 128 * 7 + 300
    pi = _pi_fixed(frac_bits + 8)
    two_over_pi = (1 << (2 * frac_bits + 9)) // pi  # 2/π·2^frac_bits
    table = []
    for b in range(8):
        g = Fraction((two_over_pi << (128 * b)) % (4 << frac_bits), 1 << frac_bits)
        parts = []
        for _ in range(5):
            parts.append(float(g))
            g -= Fraction(parts[-1])
        table.append(parts)
    return table


_PAYNE_HANEK = _payne_hanek_table()
_SINCOS_R_MAX = 0.9  # |r| bound: pi/4 plus the rounding of j near |x| = 2^50


# -- the expansions (numbered as in the module docstring) ---------------------------
def _exp(e: _Emitter, x: SSAValue) -> SSAValue:
    k = _EXP[e.fmt.bits]
    x = e.clamp(x, k["lo"], k["hi"])
    n, ni = e.round_magic(x, _LOG2E)
    r_hi = e.fma(n, -k["ln2"][0], x)  # exact
    r_lo = e.mul(n, -k["ln2"][1])
    r = e.add(r_hi, r_lo)
    z = e.mul(r, r)
    # 1 + (r_hi + (r_lo + r²·q(r))): r's own rounding error stays out of the linear term
    p = e.add(e.add(r_hi, e.fma(z, e.horner(r, k["q"]), r_lo)), 1.0)
    return e.scale2(p, ni)


def _exp2(e: _Emitter, x: SSAValue) -> SSAValue:
    k = _EXP2[e.fmt.bits]
    x = e.clamp(x, k["lo"], k["hi"])
    n, ni = e.round_magic(x, 1.0)
    r = e.sub(x, n)  # exact
    p = e.fma(r, e.horner(r, k["q"]), 1.0)
    return e.scale2(p, ni)


def _log_reduce(e: _Emitter, x: SSAValue):
    """x = 2^k·(1+f) with 1+f in [√½, √2): (k as float, f); f is exact."""
    fmt = e.fmt
    sub = e.cmp(x, 2.0 ** (1 - fmt.bias), "olt")  # denormal (or <= 0: fixed up later)
    xs = e.sel(sub, e.mul(x, 2.0**fmt.mant), x)
    kadj = e.sel(sub, e.ci(-fmt.mant), e.ci(0))
    one, sqrt_half = fmt.f2i(1.0), fmt.f2i(pymath.sqrt(0.5))
    bits = e.iadd(e.to_int(xs), e.ci(one - sqrt_half))
    ki = e.iadd(e.isub(e.ashr(bits, fmt.mant), e.ci(fmt.bias)), kadj)
    mbits = e.iadd(e.iand(bits, e.ci((1 << fmt.mant) - 1)), e.ci(sqrt_half))
    return e.sitofp(ki), e.sub(e.to_float(mbits), 1.0)


def _log_parts(e: _Emitter, x: SSAValue):
    """x = 2^k·(1+f): (k as float, f, f²/2, s·(f²/2 + R))."""
    k = _LOG[e.fmt.bits]
    kf, f = _log_reduce(e, x)
    s = e.div(f, e.add(f, 2.0))
    z = e.mul(s, s)
    w = e.mul(z, z)
    lg = k["lg"]
    t1 = e.mul(w, e.horner(w, lg[1::2][::-1]))  # w·(Lg2 + w·(Lg4 + ...))
    t2 = e.mul(z, e.horner(w, lg[0::2][::-1]))  # z·(Lg1 + w·(Lg3 + ...))
    hfsq = e.mul(e.mul(f, f), 0.5)
    tail = e.mul(s, e.add(hfsq, e.add(t2, t1)))
    return kf, f, hfsq, tail


def _log_specials(e: _Emitter, x: SSAValue, r: SSAValue) -> SSAValue:
    r = e.sel(e.cmp(x, 0.0, "ult"), _NAN, r)  # x < 0 or NaN
    r = e.sel(e.cmp(x, 0.0, "oeq"), -_INF, r)
    return e.sel(e.cmp(x, _INF, "oeq"), _INF, r)


def _log(e: _Emitter, x: SSAValue) -> SSAValue:
    ln2_hi, ln2_lo = _LOG[e.fmt.bits]["ln2"]
    k, f, hfsq, tail = _log_parts(e, x)
    # k·ln2_hi + (f − (hfsq − (tail + k·ln2_lo)))
    r = e.sub(f, e.sub(hfsq, e.fma(k, ln2_lo, tail)))
    return _log_specials(e, x, e.fma(k, ln2_hi, r))


def _log2(e: _Emitter, x: SSAValue) -> SSAValue:
    kc = _LOG[e.fmt.bits]
    iv_hi, iv_lo = kc["ivln2"]
    k, f, hfsq, tail = _log_parts(e, x)
    hi = e.to_float(e.iand(e.to_int(e.sub(f, hfsq)), e.ci(kc["hi_mask"])))
    lo = e.add(e.sub(e.sub(f, hi), hfsq), tail)
    val_hi = e.mul(hi, iv_hi)  # exact: hi and iv_hi have few bits
    val_lo = e.fma(lo, iv_hi, e.mul(e.add(lo, hi), iv_lo))
    w = e.add(k, val_hi)
    val_lo = e.add(val_lo, e.add(e.sub(k, w), val_hi))
    return _log_specials(e, x, e.add(val_lo, w))


def _mod4(e: _Emitter, p: SSAValue) -> SSAValue:
    """p − 4·⌊p/4 + 1/2⌋, in [−2, 2] (up to [−4, 4] where p/4 + 1/2 rounds): exact
    for any double, and p itself when |p| < 2, however small."""
    return e.fma(e.floor(e.fma(p, 0.25, 0.5)), -4.0, p)


def _rem_pio2_large(e: _Emitter, x: SSAValue, narrow: bool):
    r"""x = (4n + j + f)·π/2 for finite \|x\| >= 2^50: (r = f·π/2 as one double,
    j as an integer), by Payne-Hanek's method, without compares.

    x = m·2^k with m a 53-bit integer; with b = ⌊k/128⌋ (0 when k < 0),
    x = x'·2^(128b) for an integer x' < 2^181 (x' = x when b = 0) and
    x·2/π = x'·(4N_b + G_b), so x·2/π ≡ x'·G_b (mod 4). G_b = 2^(128b)·2/π mod 4
    is a constant per b, in doubles g_0 + g_1 + ... (53 bits each, 2^-265 left
    out); each x'·g_i is an exact double pair (fma), each part reduced mod 4
    exactly (to [−2, 2]); their sum, carried as a double-double, gives
    j = round(sum) and the fraction f to about 2^-100. ``narrow`` inputs (the
    value of an f32, below 2^128) have b = 0 and need four parts."""
    nparts, top = (4, 128) if narrow else (5, 181)
    if narrow:
        xs = x
        parts = [e.c(g) for g in _PAYNE_HANEK[0][:nparts]]
    else:
        k = e.isub(e.iand(e.shrui(e.to_int(x), 52), e.ci(0x7FF)), e.ci(1023 + 52))
        b = e._op(arith.MaxSIOp(e.ashr(k, 7), e.ci(0)))
        xs = e.mul(x, e.to_float(e.shl(e.isub(e.ci(1023), e.shl(b, 7)), 52)))  # x·2^(-128b)
        # G_b by a tree of picks on b's three bits
        level = [[e.c(_PAYNE_HANEK[bi][i]) for bi in range(8)] for i in range(nparts)]
        for bit in range(3):
            take = e.mask(b, bit)
            level = [[e.pick(take, v[n + 1], v[n]) for n in range(0, len(v), 2)] for v in level]
        parts = [v[0] for v in level]
    terms = []
    for i, g in enumerate(parts):  # x'·g_i < 2^(top + 2 − 53i): no reduction below 2^-20
        hi, lo = _two_prod(e, xs, g)
        terms += [
            _mod4(e, hi) if top + 2 - 53 * i > -20 else hi,
            _mod4(e, lo) if top + 2 - 53 * (i + 1) > -20 else lo,
        ]
    s_hi, s_lo = terms[0], e.c(0.0)
    for t in terms[1:]:
        s_hi, err = _two_sum(e, s_hi, t)
        s_lo = e.add(s_lo, err)
    j, ji = e.round_magic(s_hi, 1.0)
    f_hi, f_lo = _two_sum(e, e.sub(s_hi, j), s_lo)  # s_hi − j is exact
    r_hi, r_lo = _two_prod(e, f_hi, _PIO2[0])
    r_lo = e.fma(f_lo, _PIO2[0], e.fma(f_hi, _PIO2[1], r_lo))
    return e.add(r_hi, r_lo), ji


def _sincos_of_reduced(e: _Emitter, r: SSAValue, q: SSAValue) -> SSAValue:
    r"""sin(r + q·π/2) for \|r\| <= π/4 (fdlibm's kernels): q's low bits pick ±sin(r)
    or ±cos(r), on bits (no compares)."""
    r = e.clamp(r, -_SINCOS_R_MAX, _SINCOS_R_MAX)
    z = e.mul(r, r)
    sin_r = e.fma(e.mul(z, r), e.horner(z, _SIN), r)
    hz = e.mul(z, 0.5)
    w = e.sub(1.0, hz)
    cos_r = e.add(w, e.fma(e.mul(z, z), e.horner(z, _COS), e.sub(e.sub(1.0, w), hz)))
    y = e.pick(e.mask(q, 0), cos_r, sin_r)
    sign = e.shl(e.iand(q, e.ci(2)), e.fmt.bits - 2)  # bit 1 of q -> the sign bit
    return e.to_float(e.xor(e.to_int(y), sign))


def _sincos(e: _Emitter, x: SSAValue, cos: bool, narrow: bool = False) -> SSAValue:
    j, ji = e.round_magic(x, _TWO_OVER_PI)
    r = e.fma(j, -_PIO2[0], x)  # exact
    r = e.fma(j, -_PIO2[1], r)
    r = e.fma(j, -_PIO2[2], r)
    q = e.iadd(ji, e.ci(1)) if cos else ji
    y = _sincos_of_reduced(e, r, q)
    if not cos:
        # sin(±0) = ±0: where |x|'s bits are 0, their value less 1 is negative
        abs_bits = e.iand(e.to_int(x), e.ci(2 ** (e.fmt.bits - 1) - 1))
        y = e.pick(e.ashr(e.isub(abs_bits, e.ci(1)), e.fmt.bits - 1), x, y)
    # |x| >= 2^50 (or not finite): j is no longer exact; Payne-Hanek's reduction,
    # expanded later behind a branch (expand-large-sincos). The test is on bits:
    # (2^50 − 1) − |x| is negative exactly then.
    big = e._op(kernel.SinCosLargeOp(x, "cos" if cos else "sin", narrow))
    return e.pick(large_mask(e, x), big, y)


def large_mask(e: _Emitter, x: SSAValue) -> SSAValue:
    r"""All ones where \|x\| >= 2^50 or x is not finite (on bits: (2^50 − 1) − \|x\|
    is then negative), else 0."""
    abs_bits = e.iand(e.to_int(x), e.ci(2**63 - 1))
    return e.ashr(e.isub(e.ci(e.fmt.f2i(2.0**50) - 1), abs_bits), 63)


def sincos_large(e: _Emitter, x: SSAValue, cos: bool, narrow: bool) -> SSAValue:
    r"""The value of ``kernel.sincos_large``: sin or cos of x, \|x\| >= 2^50."""
    r, j = _rem_pio2_large(e, x, narrow)
    return _sincos_of_reduced(e, r, e.iadd(j, e.ci(1)) if cos else j)


def _pow(e: _Emitter, x: SSAValue, y: SSAValue) -> SSAValue:
    ax = e.abs(x)
    return _pow_specials(e, x, y, ax, _exp2(e, e.mul(y, _log2(e, ax))))


# f64 pow: log(1+f) = 2s + (2/3)s³ + s⁵·Q(s²), s = f/(2+f), |s| <= 0.1716
_TWO_THIRDS = (_h("0x1.5555555555555p-1"), _h("0x1.5555555555555p-55"))
_LOG_Q = [2.0 / (2 * k + 1) for k in range(15, 1, -1)]  # 2/31 ... 2/5
_IVLN2 = (_h("0x1.71547652B82FEp0"), _h("0x1.777D0FFDA0D24p-56"))


def _two_prod(e: _Emitter, a, b):
    """a·b = hi + lo exactly (fma)."""
    hi = e.mul(a, b)
    return hi, e.fma(a, b, e.neg(hi))


def _two_sum(e: _Emitter, a, b):
    """a + b = hi + lo exactly (Knuth)."""
    hi = e.add(a, b)
    bb = e.sub(hi, a)
    return hi, e.add(e.sub(a, e.sub(hi, bb)), e.sub(b, bb))


def _log2_dd(e: _Emitter, x: SSAValue):
    """log2(x) for finite x > 0 as hi + lo, to about 2^-66 of its size."""
    k, f = _log_reduce(e, x)
    # s = f / (2 + f) as s_hi + s_lo: 2 + f as d_hi + d_lo, then one correction
    d_hi = e.add(f, 2.0)
    d_lo = e.sub(f, e.sub(d_hi, 2.0))  # exact: |f| < 2
    s_hi = e.div(f, d_hi)
    rem = e.fma(e.neg(s_hi), d_hi, f)  # exact
    s_lo = e.div(e.fma(e.neg(s_hi), d_lo, rem), d_hi)
    # z = s², c = s³, each as hi + lo
    z_hi, z_lo = _two_prod(e, s_hi, s_hi)
    z_lo = e.fma(e.mul(s_hi, 2.0), s_lo, z_lo)
    c_hi, c_lo = _two_prod(e, s_hi, z_hi)
    c_lo = e.fma(s_hi, z_lo, e.fma(s_lo, z_hi, c_lo))
    # t = (2/3)·s³ as hi + lo
    t_hi, t_lo = _two_prod(e, _TWO_THIRDS[0], c_hi)
    t_lo = e.fma(_TWO_THIRDS[0], c_lo, e.fma(_TWO_THIRDS[1], c_hi, t_lo))
    rest = e.mul(e.mul(c_hi, z_hi), e.horner(z_hi, _LOG_Q))  # s⁵·Q(s²), plain doubles
    # L = 2s + t + rest
    l_hi, l_lo = _two_sum(e, e.mul(s_hi, 2.0), t_hi)
    l_lo = e.add(l_lo, e.add(e.fma(s_lo, 2.0, t_lo), rest))
    # log2 = k + L/ln2
    p_hi, p_lo = _two_prod(e, l_hi, _IVLN2[0])
    p_lo = e.fma(l_lo, _IVLN2[0], e.fma(l_hi, _IVLN2[1], p_lo))
    w_hi, w_lo = _two_sum(e, k, p_hi)
    return w_hi, e.add(w_lo, p_lo)


def _pow_f64(e: _Emitter, x: SSAValue, y: SSAValue) -> SSAValue:
    """pow in f64 without libm: 2^(y·log2|x|) with log2 and the product carried
    as double-doubles, so the result is within about an ulp; signs and C99's
    special cases as :func:`_pow`."""
    ax = e.abs(x)
    w_hi, w_lo = _log2_dd(e, ax)
    special = e.or_(e.cmp(ax, 0.0, "ueq"), e.cmp(ax, _INF, "oeq"))  # 0, inf, NaN
    w_hi = _log_specials(e, ax, w_hi)
    w_lo = e.sel(special, 0.0, w_lo)
    q_hi, q_lo = _two_prod(e, y, w_hi)
    q_lo = e.fma(y, w_lo, q_lo)
    k = _EXP2[64]
    # beyond the clamp (inf included) the result is 0 or inf: the low part goes
    inside = e.and_(e.cmp(q_hi, k["lo"], "oge"), e.cmp(q_hi, k["hi"], "ole"))
    q_lo = e.sel(inside, q_lo, 0.0)
    q_hi = e.clamp(q_hi, k["lo"], k["hi"])
    n, ni = e.round_magic(q_hi, 1.0)
    r = e.add(e.sub(q_hi, n), q_lo)  # q_hi − n is exact
    p = e.fma(r, e.horner(r, k["q"]), 1.0)
    return _pow_specials(e, x, y, ax, e.scale2(p, ni))


def _pow_specials(e: _Emitter, x, y, ax, r):
    y_int = e.cmp(e.floor(y), y, "oeq")
    hy = e.mul(y, 0.5)
    y_odd = e.and_(y_int, e.cmp(e.floor(hy), hy, "one"))
    x_signed = e._op(arith.CmpiOp(e.to_int(x), e.ci(0), "slt"))
    r = e.sel(e.and_(x_signed, y_odd), e.neg(r), r)
    neg_finite = e.and_(e.cmp(x, 0.0, "olt"), e.cmp(x, -_INF, "one"))
    r = e.sel(e.and_(neg_finite, e.not_(y_int)), _NAN, r)
    one = e.or_(e.cmp(x, 1.0, "oeq"), e.cmp(y, 0.0, "oeq"))
    one = e.or_(one, e.and_(e.cmp(ax, 1.0, "oeq"), e.cmp(e.abs(y), _INF, "oeq")))
    return e.sel(one, 1.0, r)


_NATIVE = {
    math.ExpOp: lambda e, a: _exp(e, a[0]),
    math.Exp2Op: lambda e, a: _exp2(e, a[0]),
    math.LogOp: lambda e, a: _log(e, a[0]),
    math.Log2Op: lambda e, a: _log2(e, a[0]),
}
_IN_F64 = {
    math.SinOp: lambda e, a: _sincos(e, a[0], cos=False),
    math.CosOp: lambda e, a: _sincos(e, a[0], cos=True),
    math.PowFOp: lambda e, a: _pow(e, a[0], a[1]),
}
_SINCOS_FROM_F32 = {
    math.SinOp: lambda e, a: _sincos(e, a[0], cos=False, narrow=True),
    math.CosOp: lambda e, a: _sincos(e, a[0], cos=True, narrow=True),
}
_NATIVE_F64 = {math.SinOp, math.CosOp}  # powf on f64 keeps llvm.pow unless told otherwise


class ExpandMathOp(RewritePattern):
    """exp/exp2/log/log2/sin/cos/powf(x) -> elementwise arith (per element type)."""

    def __init__(self, f64_pow: bool = False):
        self.f64_pow = f64_pow

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        kind = type(op)
        if kind not in _NATIVE and kind not in _IN_F64:
            return
        if (
            kind is math.PowFOp
            and self.f64_pow
            and isinstance(_elem(op.results[0].type), Float64Type)
        ):
            e = _Emitter(op.results[0].type)
            rewriter.replace(op, e.ops, [_pow_f64(e, *op.operands)])
            return
        t = op.results[0].type
        el = _elem(t)
        if isinstance(el, (Float16Type, BFloat16Type)):
            self._via(op, rewriter, _like(t, Float32Type()))  # the f32 op is expanded next
        elif isinstance(el, Float32Type) and kind in _IN_F64:
            expand = _IN_F64[kind]
            if kind in (math.SinOp, math.CosOp):  # the f64 value of an f32: below 2^128
                expand = _SINCOS_FROM_F32[kind]
            self._via(op, rewriter, _like(t, Float64Type()), expand=expand)
        elif isinstance(el, Float32Type) or (isinstance(el, Float64Type) and kind in _NATIVE):
            e = _Emitter(t)
            res = {**_NATIVE, **_IN_F64}[kind](e, list(op.operands))
            rewriter.replace(op, e.ops, [res])
        elif isinstance(el, Float64Type) and kind in _NATIVE_F64:
            e = _Emitter(t)
            rewriter.replace(op, e.ops, [_IN_F64[kind](e, list(op.operands))])

    @staticmethod
    def _via(op: Operation, rewriter: PatternRewriter, wide: Attribute, expand=None) -> None:
        """op computed in the wider float type ``wide``, rounded back."""
        t = op.results[0].type
        ext = [arith.ExtFOp(a, wide) for a in op.operands]  # type: ignore[arg-type]
        ops: list[Operation] = list(ext)
        if expand is None:
            inner = type(op)(*[x.result for x in ext])
            ops.append(inner)
            res = inner.results[0]
        else:
            e = _Emitter(wide)
            res = expand(e, [x.result for x in ext])
            ops += e.ops
        trunc = arith.TruncFOp(res, t)  # type: ignore[arg-type]
        rewriter.replace(op, [*ops, trunc], [trunc.result])


@dataclass(frozen=True)
class ExpandMath(ModulePass):
    """Rewrite transcendental math ops into vectorizable arith (see the module docstring)."""

    name = "expand-math"

    f64_pow: bool = False
    """Expand f64 ``math.powf`` too (:func:`_pow_f64`), for targets without a
    libm to call (the GPU); otherwise it stays ``llvm.pow``."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier([ExpandMathOp(self.f64_pow)]), apply_recursively=True
        ).rewrite_module(op)
