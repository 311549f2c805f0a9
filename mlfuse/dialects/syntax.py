"""Parse/print helpers shared by the lazy and kernel dialects' custom syntax."""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.dialects.builtin import (
    BFloat16Type,
    DenseArrayBase,
    Float16Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    Signedness,
    i64,
)
from xdsl.ir import Attribute
from xdsl.parser import AttrParser
from xdsl.printer import Printer


def parse_int(parser: AttrParser) -> int:
    neg = parser.parse_optional_punctuation("-") is not None
    v = parser.parse_integer(allow_negative=False, allow_boolean=False)
    return -v if neg else v


def parse_int_list(parser: AttrParser) -> list[int]:
    """``[1, 2, 3]``"""
    return parser.parse_comma_separated_list(parser.Delimiter.SQUARE, lambda: parse_int(parser))


def print_int_list(printer: Printer, xs: Sequence[int]) -> None:
    printer.print_string("[" + ", ".join(str(int(x)) for x in xs) + "]")


def parse_pair_list(parser: AttrParser) -> list[tuple[int, int]]:
    """``[[0, 2], [1, 3]]``"""

    def pair() -> tuple[int, int]:
        xs = parse_int_list(parser)
        if len(xs) != 2:
            parser.raise_error(f"expected a pair [a, b], got {len(xs)} integers")
        return (xs[0], xs[1])

    return parser.parse_comma_separated_list(parser.Delimiter.SQUARE, pair)


def print_pair_list(printer: Printer, xs: Sequence[tuple[int, int]]) -> None:
    printer.print_string("[" + ", ".join(f"[{a}, {b}]" for a, b in xs) + "]")


def i64_array(xs: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, [int(x) for x in xs])


def pairs_array(xs: Sequence[tuple[int, int]]) -> DenseArrayBase:
    """Pairs stored flat: [b0, e0, b1, e1, ...]."""
    return i64_array([v for p in xs for v in p])


def array_pairs(arr: DenseArrayBase) -> tuple[tuple[int, int], ...]:
    flat = tuple(arr.get_values())
    return tuple((flat[i], flat[i + 1]) for i in range(0, len(flat), 2))


def array_ints(arr: DenseArrayBase) -> tuple[int, ...]:
    return tuple(arr.get_values())


def format_number(v: float | int | bool, t: Attribute) -> str:
    """A scalar as it appears in custom syntax: ``true``, ``3``, ``1.5``, ``inf``."""
    if isinstance(t, IntegerType):
        if t.width.data == 1:
            return "true" if v else "false"
        return str(int(v))
    v = float(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    r = repr(v)
    mantissa, e, exponent = r.partition("e")
    if "." not in mantissa:
        mantissa += ".0"  # an MLIR float literal needs its decimal point (1.0e+16)
    return mantissa + e + exponent


def parse_number(parser: AttrParser) -> float | int | bool:
    """Inverse of :func:`format_number` (the type decides the meaning)."""
    if parser.parse_optional_keyword("true"):
        return True
    if parser.parse_optional_keyword("false"):
        return False
    neg = parser.parse_optional_punctuation("-") is not None
    if parser.parse_optional_keyword("inf"):
        return -math.inf if neg else math.inf
    if parser.parse_optional_keyword("nan"):
        return math.nan
    v = parser.parse_number(allow_boolean=False)
    return -v if neg else v


def scalar_attr(v: float | int | bool, t: Attribute) -> Attribute:
    """The typed attribute holding a constant of element type ``t``.

    Raises ValueError when ``v`` is not a value of ``t`` (a fraction, inf or
    nan for an integer type, an integer out of range, a number for i1)."""
    if isinstance(t, IntegerType):
        width = t.width.data
        if isinstance(v, float) and (not math.isfinite(v) or v != int(v)):
            shown = (
                "nan"
                if math.isnan(v)
                else ("inf" if v > 0 else "-inf")
                if math.isinf(v)
                else repr(v)
            )
            raise ValueError(f"constant {shown} is not an integer of type {t}")
        if width == 1 and not isinstance(v, bool) and v not in (0, 1):
            raise ValueError(f"constant {v} is not a value of type i1 (use true or false)")
        iv = int(bool(v)) if width == 1 else int(v)
        if width == 1:
            return IntegerAttr(iv, t)
        if t.signedness.data == Signedness.UNSIGNED:
            lo, hi = 0, (1 << width) - 1
        else:
            lo, hi = -(1 << (width - 1)), (1 << (width - 1)) - 1
        if not lo <= iv <= hi:
            raise ValueError(f"constant {iv} does not fit in {t}")
        return IntegerAttr(iv, t)
    if isinstance(v, bool):
        raise ValueError(f"constant {'true' if v else 'false'} is not a value of type {t}")
    return FloatAttr(round_float(float(v), t), t)


def round_float(v: float, t: Attribute) -> float:
    """``v`` rounded to the 16-bit float type ``t`` (to nearest even), so a constant
    of float16/bfloat16 holds a value of its type; wider types keep ``v``."""
    import numpy as np

    if isinstance(t, BFloat16Type):
        from mlfuse.dtypes import round_bf16

        return float(round_bf16(np.float32(v))[()])
    if isinstance(t, Float16Type):
        return float(np.float16(v))
    return v


def attr_value(a: Attribute) -> float | int | bool:
    if isinstance(a, FloatAttr):
        return a.value.data
    assert isinstance(a, IntegerAttr)
    v = a.value.data
    if isinstance(a.type, IntegerType) and a.type.width.data == 1:
        return bool(v)
    return v
