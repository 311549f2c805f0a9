"""The ``lazy`` dialect: tensor programs as the front end records them.

Values are builtin ranked tensors (``tensor<4x8xf32>``); realized buffers enter
as block arguments of a ``func.func``. Op families (DESIGN.md):

* sources: ``lazy.const`` (a scalar broadcast to a shape)
* elementwise: unary (``lazy.exp`` ...), binary (``lazy.add`` ...), ternary
  (``lazy.where``, ``lazy.mulacc``), ``lazy.cast`` / ``lazy.bitcast``
* ``lazy.reduce`` over axes, which stay in the result as size-1 dims
* ``lazy.scan``: a running sum/product/maximum/minimum along one dim
* ``lazy.gather``: a read of a source at data-dependent positions along one dim
* movement: ``lazy.reshape/permute/expand/pad/shrink/flip/stride`` and
  ``lazy.view``, which carries a composed ``#lazy.view`` index map
* meta: ``lazy.contiguous``, ``lazy.copy``, ``lazy.assign``

Every op has a custom syntax that round-trips, and a verifier that checks
shapes and element types.
"""

from __future__ import annotations

import functools
from abc import ABC
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    AnyFloat,
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    Signedness,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, Data, Dialect, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from mlfuse.dialects.syntax import (
    array_ints,
    array_pairs,
    attr_value,
    format_number,
    i64_array,
    pairs_array,
    parse_int_list,
    parse_number,
    parse_pair_list,
    print_int_list,
    print_pair_list,
    scalar_attr,
)
from mlfuse.view import View, ViewError, ViewStack, check_reads_within

# ---------------------------------------------------------------------------
# the view attribute
# ---------------------------------------------------------------------------


@irdl_attr_definition
class ViewAttr(Data[ViewStack]):
    """An index map from a logical shape to buffer offsets (a view stack).

    ``#lazy.view<[4, 8] strides [8, 1] offset 0 mask [[0, 4], [1, 8]]>``;
    stacked views are separated by ``|``, the buffer-side view first.
    """

    name = "lazy.view"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> ViewStack:
        with parser.in_angle_brackets():
            views = [cls._parse_one(parser)]
            while parser.parse_optional_punctuation("|") is not None:
                views.append(cls._parse_one(parser))
        if len(views) > 1:
            try:
                check_reads_within(ViewStack(tuple(views[1:])), views[0].size, "the view below")
            except ViewError as e:
                parser.raise_error(str(e))
        return ViewStack(tuple(views))

    @staticmethod
    def _parse_one(parser: AttrParser) -> View:
        shape = parse_int_list(parser)
        if any(s < 0 for s in shape):
            parser.raise_error(f"negative dimension in view shape {shape}")
        parser.parse_keyword("strides")
        strides = parse_int_list(parser)
        parser.parse_keyword("offset")
        neg = parser.parse_optional_punctuation("-") is not None
        offset = parser.parse_integer(allow_negative=False, allow_boolean=False)
        mask = None
        if parser.parse_optional_keyword("mask"):
            mask = tuple(parse_pair_list(parser))
            if len(mask) != len(shape):
                parser.raise_error(f"view mask has {len(mask)} ranges for {len(shape)} dims")
        if len(strides) != len(shape):
            parser.raise_error(f"view has {len(strides)} strides for {len(shape)} dims")
        return View.create(tuple(shape), tuple(strides), -offset if neg else offset, mask)

    def print_parameter(self, printer: Printer) -> None:
        printer.print_string("<" + str(self.data) + ">")

    @property
    def stack(self) -> ViewStack:
        return self.data


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def tensor_type(shape: Sequence[int], element: Attribute) -> TensorType:
    return _tensor_type(tuple(shape), element)


@functools.lru_cache(maxsize=8192)
def _tensor_type(shape: tuple[int, ...], element: Attribute) -> TensorType:
    return TensorType(element, list(shape))  # types are immutable: built once


def shape_of(v: SSAValue | Attribute) -> tuple[int, ...]:
    t = v.type if isinstance(v, SSAValue) else v
    if not isinstance(t, TensorType):
        raise VerifyException(f"expected a ranked tensor, got {t}")
    return tuple(t.get_shape())


def element_of(v: SSAValue | Attribute) -> Attribute:
    t = v.type if isinstance(v, SSAValue) else v
    assert isinstance(t, TensorType)
    return t.element_type


def is_float(t: Attribute) -> bool:
    return isinstance(t, AnyFloat)


def is_bool(t: Attribute) -> bool:
    return isinstance(t, IntegerType) and t.width.data == 1


def is_int(t: Attribute) -> bool:
    return isinstance(t, IntegerType) and t.width.data != 1


def is_unsigned(t: Attribute) -> bool:
    """An unsigned integer element type (``ui8``): its ops are arith's unsigned ones."""
    return isinstance(t, IntegerType) and t.signedness.data == Signedness.UNSIGNED


def signless(t: Attribute) -> Attribute:
    """The type kernel bodies compute in: ``ui8`` -> ``i8`` (arith is signless;
    the ops carry the signedness), anything else unchanged."""
    if isinstance(t, IntegerType) and t.signedness.data != Signedness.SIGNLESS:
        return IntegerType(t.width.data)
    return t


def _check_static(op: Operation, t: Attribute, what: str) -> None:
    if not isinstance(t, TensorType):
        raise VerifyException(f"{op.name}: {what} must be a ranked tensor, got {t}")
    if any(s < 0 for s in t.get_shape()):
        raise VerifyException(f"{op.name}: {what} must have a static shape, got {t}")
    et = t.element_type
    if et not in _element_types():
        raise VerifyException(
            f"{op.name}: {what} has element type {et}; lazy tensors hold "
            + ", ".join(str(e) for e in _element_types())
        )


@functools.cache
def _element_types() -> tuple[Attribute, ...]:
    """The element types of mlfuse's dtypes (i1, i8..i64, ui8..ui64, f16, bf16, f32, f64)."""
    from mlfuse.dtypes import ALL

    return tuple(d.ir() for d in ALL)


def _check_lazy_operands(op: Operation) -> None:
    """Lazy ops compute on tensors made by lazy ops or passed in as arguments:
    an operand from another dialect is a verifier error naming its op."""
    for v in op.operands:
        owner = v.owner
        if isinstance(owner, Operation) and owner.dialect_name() != "lazy":
            raise VerifyException(
                f"{op.name}: operand comes from '{owner.name}', which is not a lazy op "
                "(lazy functions hold only lazy.* ops)"
            )


def _parse_attrs(parser: Parser) -> dict[str, Attribute]:
    attrs = parser.parse_optional_attr_dict()
    return dict(attrs) if attrs else {}


def _print_attrs(printer: Printer, op: Operation) -> None:
    printer.print_op_attributes(op.attributes)


# ---------------------------------------------------------------------------
# sources
# ---------------------------------------------------------------------------


@irdl_op_definition
class ConstOp(IRDLOperation):
    """A scalar broadcast to a static shape: ``lazy.const 1.5 : tensor<4xf32>``."""

    name = "lazy.const"
    value = prop_def(Attribute)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def __init__(self, value: float | int | bool, type: TensorType, attributes=None):
        super().__init__(
            properties={"value": scalar_attr(value, type.element_type)},
            result_types=[type],
            attributes=attributes or {},
        )

    @property
    def scalar(self) -> float | int | bool:
        return attr_value(self.value)

    def verify_(self) -> None:
        _check_lazy_operands(self)
        _check_static(self, self.result.type, "result")
        et = element_of(self.result)
        if not isinstance(self.value, (FloatAttr, IntegerAttr)) or self.value.type != et:
            raise VerifyException(
                f"lazy.const: value {self.value} does not have the element type {et}"
            )

    @classmethod
    def parse(cls, parser: Parser) -> ConstOp:
        start = parser.pos
        v = parse_number(parser)
        end = parser.pos
        attrs = _parse_attrs(parser)
        parser.parse_punctuation(":")
        t = parser.parse_type()
        if not isinstance(t, TensorType):
            parser.raise_error(f"lazy.const needs a tensor type, got {t}")
        try:
            return cls(v, t, attrs)
        except ValueError as e:
            parser.raise_error(str(e), start, end)

    def print(self, printer: Printer) -> None:
        printer.print_string(" " + format_number(self.scalar, element_of(self.result)))
        _print_attrs(printer, self)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)


# ---------------------------------------------------------------------------
# elementwise
# ---------------------------------------------------------------------------

# element-type classes an op accepts
FLOAT, NUMERIC, INTEGER, BOOL_OR_INT, ANY = "float", "numeric", "integer", "bool/int", "any"


def _check_elem(op: Operation, et: Attribute, accepts: str) -> None:
    ok = {
        FLOAT: is_float(et),
        NUMERIC: is_float(et) or is_int(et),
        INTEGER: is_int(et),
        BOOL_OR_INT: is_bool(et) or is_int(et),
        ANY: True,
    }[accepts]
    if not ok:
        raise VerifyException(f"{op.name} needs {accepts} elements, got {et}")


class ElementwiseOp(IRDLOperation, ABC):
    """Common base: all operands share one shape; ``kind`` names the scalar op."""

    KIND: ClassVar[str]
    ACCEPTS: ClassVar[str] = NUMERIC
    ZERO_PRESERVING: ClassVar[bool] = False
    """f(0, ..., 0) == 0: a pad may be pushed through it (padding stays 0)."""


class UnaryOp(ElementwiseOp, ABC):
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def __init__(self, x: SSAValue | Operation, attributes=None):
        x = SSAValue.get(x)
        super().__init__(operands=[x], result_types=[x.type], attributes=attributes)

    def verify_(self) -> None:
        _check_lazy_operands(self)
        _check_static(self, self.input.type, "operand")
        if self.input.type != self.result.type:
            raise VerifyException(
                f"{self.name}: result type {self.result.type} differs from operand "
                f"type {self.input.type}"
            )
        _check_elem(self, element_of(self.input), self.ACCEPTS)

    @classmethod
    def parse(cls, parser: Parser):
        x = parser.parse_unresolved_operand()
        attrs = _parse_attrs(parser)
        parser.parse_punctuation(":")
        t = parser.parse_type()
        return cls(parser.resolve_operand(x, t), attrs)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.input)
        _print_attrs(printer, self)
        printer.print_string(" : ")
        printer.print_attribute(self.input.type)


def _unary(name: str, accepts: str, zero_preserving: bool, doc: str):
    cls = type(
        name.capitalize() + "Op",
        (UnaryOp,),
        {
            "name": "lazy." + name,
            "KIND": name,
            "ACCEPTS": accepts,
            "ZERO_PRESERVING": zero_preserving,
            "__doc__": doc,
            "__annotations__": {
                "KIND": ClassVar[str],
                "ACCEPTS": ClassVar[str],
                "ZERO_PRESERVING": ClassVar[bool],
            },
        },
    )
    return irdl_op_definition(cls)


NegOp = _unary("neg", NUMERIC, True, "-x")
RecipOp = _unary("recip", FLOAT, False, "1/x")
SqrtOp = _unary("sqrt", FLOAT, True, "square root")
ExpOp = _unary("exp", FLOAT, False, "e**x")
Exp2Op = _unary("exp2", FLOAT, False, "2**x")
LogOp = _unary("log", FLOAT, False, "natural logarithm")
Log2Op = _unary("log2", FLOAT, False, "base-2 logarithm")
SinOp = _unary("sin", FLOAT, True, "sine")
CosOp = _unary("cos", FLOAT, False, "cosine")
AbsOp = _unary("abs", NUMERIC, True, "|x|")
FloorOp = _unary("floor", FLOAT, True, "round toward -inf")
CeilOp = _unary("ceil", FLOAT, True, "round toward +inf")
NotOp = _unary("not", BOOL_OR_INT, False, "logical not (bool) / bitwise not (int)")

UNARY_OPS: tuple[type[UnaryOp], ...] = (
    NegOp,
    RecipOp,
    SqrtOp,
    ExpOp,
    Exp2Op,
    LogOp,
    Log2Op,
    SinOp,
    CosOp,
    AbsOp,
    FloorOp,
    CeilOp,
    NotOp,
)


class BinaryOp(ElementwiseOp, ABC):
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    COMPARES: ClassVar[bool] = False

    def __init__(self, a: SSAValue | Operation, b: SSAValue | Operation, attributes=None):
        a, b = SSAValue.get(a), SSAValue.get(b)
        rt = a.type
        if self.COMPARES and isinstance(rt, TensorType):
            rt = tensor_type(rt.get_shape(), IntegerType(1))
        super().__init__(operands=[a, b], result_types=[rt], attributes=attributes)

    def verify_(self) -> None:
        _check_lazy_operands(self)
        _check_static(self, self.lhs.type, "lhs")
        if self.lhs.type != self.rhs.type:
            raise VerifyException(
                f"{self.name}: operand types differ: {self.lhs.type} vs {self.rhs.type}"
            )
        et = element_of(self.lhs)
        _check_elem(self, et, self.ACCEPTS)
        want = tensor_type(shape_of(self.lhs), IntegerType(1) if self.COMPARES else et)
        if self.result.type != want:
            raise VerifyException(
                f"{self.name}: result type must be {want}, got {self.result.type}"
            )

    @classmethod
    def parse(cls, parser: Parser):
        a = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        b = parser.parse_unresolved_operand()
        attrs = _parse_attrs(parser)
        parser.parse_punctuation(":")
        t = parser.parse_type()
        a, b = parser.resolve_operands([a, b], [t, t], parser.pos)
        return cls(a, b, attrs)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.lhs)
        printer.print_string(", ")
        printer.print_operand(self.rhs)
        _print_attrs(printer, self)
        printer.print_string(" : ")
        printer.print_attribute(self.lhs.type)


def _binary(name: str, accepts: str, zero_preserving: bool, doc: str, compares=False):
    cls = type(
        name.capitalize() + "Op",
        (BinaryOp,),
        {
            "name": "lazy." + name,
            "KIND": name,
            "ACCEPTS": accepts,
            "ZERO_PRESERVING": zero_preserving,
            "COMPARES": compares,
            "__doc__": doc,
            "__annotations__": {
                "KIND": ClassVar[str],
                "ACCEPTS": ClassVar[str],
                "ZERO_PRESERVING": ClassVar[bool],
                "COMPARES": ClassVar[bool],
            },
        },
    )
    return irdl_op_definition(cls)


AddOp = _binary("add", NUMERIC, True, "a + b")
SubOp = _binary("sub", NUMERIC, True, "a - b")
MulOp = _binary("mul", NUMERIC, True, "a * b")
DivOp = _binary("div", NUMERIC, False, "a / b (floats); truncating a / b (integers)")
IdivOp = _binary("idiv", INTEGER, False, "floor division of integers (Python //)")
ModOp = _binary("mod", INTEGER, False, "remainder with the sign of b (Python %)")
MaxOp = _binary("max", NUMERIC, True, "elementwise maximum (NaN propagates)")
MinOp = _binary("min", NUMERIC, True, "elementwise minimum (NaN propagates)")
PowOp = _binary("pow", FLOAT, False, "a ** b")
AndOp = _binary("and", BOOL_OR_INT, True, "logical / bitwise and")
OrOp = _binary("or", BOOL_OR_INT, True, "logical / bitwise or")
XorOp = _binary("xor", BOOL_OR_INT, True, "logical / bitwise xor")
ShlOp = _binary("shl", INTEGER, True, "a << b (0 when b is negative or not below the bit width)")
ShrOp = _binary(
    "shr",
    INTEGER,
    True,
    "a >> b: arithmetic for signed, logical for unsigned elements (a negative or "
    "too large b shifts every bit out: the sign fill)",
)
CmpltOp = _binary("cmplt", ANY, True, "a < b", compares=True)
CmpleOp = _binary("cmple", ANY, False, "a <= b", compares=True)
CmpeqOp = _binary("cmpeq", ANY, False, "a == b", compares=True)
CmpneOp = _binary("cmpne", ANY, True, "a != b", compares=True)

BINARY_OPS: tuple[type[BinaryOp], ...] = (
    AddOp,
    SubOp,
    MulOp,
    DivOp,
    IdivOp,
    ModOp,
    MaxOp,
    MinOp,
    PowOp,
    AndOp,
    OrOp,
    XorOp,
    ShlOp,
    ShrOp,
    CmpltOp,
    CmpleOp,
    CmpeqOp,
    CmpneOp,
)


@irdl_op_definition
class WhereOp(ElementwiseOp):
    """``cond ? a : b`` elementwise; ``cond`` is a bool tensor of the same shape."""

    name = "lazy.where"
    KIND: ClassVar[str] = "where"
    ACCEPTS: ClassVar[str] = ANY
    ZERO_PRESERVING: ClassVar[bool] = True
    cond = operand_def(TensorType)
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def __init__(self, c, a, b, attributes=None):
        a = SSAValue.get(a)
        super().__init__(operands=[c, a, b], result_types=[a.type], attributes=attributes)

    def verify_(self) -> None:
        _check_lazy_operands(self)
        _check_static(self, self.lhs.type, "lhs")
        if self.lhs.type != self.rhs.type or self.lhs.type != self.result.type:
            raise VerifyException(
                f"lazy.where: value types differ: {self.lhs.type}, {self.rhs.type} -> "
                f"{self.result.type}"
            )
        want = tensor_type(shape_of(self.lhs), IntegerType(1))
        if self.cond.type != want:
            raise VerifyException(f"lazy.where: condition must be {want}, got {self.cond.type}")

    @classmethod
    def parse(cls, parser: Parser):
        ops = [parser.parse_unresolved_operand()]
        for _ in range(2):
            parser.parse_punctuation(",")
            ops.append(parser.parse_unresolved_operand())
        attrs = _parse_attrs(parser)
        parser.parse_punctuation(":")
        t = parser.parse_type()
        if not isinstance(t, TensorType):
            parser.raise_error(f"lazy.where needs a tensor type, got {t}")
        ct = tensor_type(t.get_shape(), IntegerType(1))
        c, a, b = parser.resolve_operands(ops, [ct, t, t], parser.pos)
        return cls(c, a, b, attrs)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list(self.operands, printer.print_operand)
        _print_attrs(printer, self)
        printer.print_string(" : ")
        printer.print_attribute(self.lhs.type)


@irdl_op_definition
class MulaccOp(ElementwiseOp):
    """``a * b + c`` with one rounding (fused multiply-add)."""

    name = "lazy.mulacc"
    KIND: ClassVar[str] = "mulacc"
    ACCEPTS: ClassVar[str] = FLOAT
    ZERO_PRESERVING: ClassVar[bool] = True
    a = operand_def(TensorType)
    b = operand_def(TensorType)
    c = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def __init__(self, a, b, c, attributes=None):
        a = SSAValue.get(a)
        super().__init__(operands=[a, b, c], result_types=[a.type], attributes=attributes)

    def verify_(self) -> None:
        _check_lazy_operands(self)
        _check_static(self, self.a.type, "operand")
        if not (self.a.type == self.b.type == self.c.type == self.result.type):
            raise VerifyException("lazy.mulacc: all operands and the result must have one type")
        _check_elem(self, element_of(self.a), FLOAT)

    @classmethod
    def parse(cls, parser: Parser):
        ops = [parser.parse_unresolved_operand()]
        for _ in range(2):
            parser.parse_punctuation(",")
            ops.append(parser.parse_unresolved_operand())
        attrs = _parse_attrs(parser)
        parser.parse_punctuation(":")
        t = parser.parse_type()
        return cls(*parser.resolve_operands(ops, [t, t, t], parser.pos), attrs)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list(self.operands, printer.print_operand)
        _print_attrs(printer, self)
        printer.print_string(" : ")
        printer.print_attribute(self.a.type)


class _ConvertOp(ElementwiseOp, ABC):
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    ACCEPTS: ClassVar[str] = ANY

    def __init__(self, x, result_type: Attribute, attributes=None):
        super().__init__(operands=[x], result_types=[result_type], attributes=attributes)

    def verify_(self) -> None:
        _check_lazy_operands(self)
        _check_static(self, self.input.type, "operand")
        _check_static(self, self.result.type, "result")
        if shape_of(self.input) != shape_of(self.result):
            raise VerifyException(
                f"{self.name}: shape changes from {self.input.type} to {self.result.type}"
            )

    @classmethod
    def parse(cls, parser: Parser):
        x = parser.parse_unresolved_operand()
        attrs = _parse_attrs(parser)
        parser.parse_punctuation(":")
        t = parser.parse_type()
        parser.parse_keyword("to")
        rt = parser.parse_type()
        return cls(parser.resolve_operand(x, t), rt, attrs)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.input)
        _print_attrs(printer, self)
        printer.print_string(" : ")
        printer.print_attribute(self.input.type)
        printer.print_string(" to ")
        printer.print_attribute(self.result.type)


@irdl_op_definition
class CastOp(_ConvertOp):
    """Value conversion between element types (float->int truncates toward 0)."""

    name = "lazy.cast"
    KIND: ClassVar[str] = "cast"
    ZERO_PRESERVING: ClassVar[bool] = True


def _bitwidth(t: Attribute) -> int:
    if isinstance(t, IntegerType):
        return t.width.data
    assert isinstance(t, AnyFloat)
    return t.bitwidth


@irdl_op_definition
class BitcastOp(_ConvertOp):
    """Reinterpret the bits of each element as another type of the same width."""

    name = "lazy.bitcast"
    KIND: ClassVar[str] = "bitcast"
    ZERO_PRESERVING: ClassVar[bool] = True

    def verify_(self) -> None:
        _check_lazy_operands(self)
        super().verify_()
        a, b = element_of(self.input), element_of(self.result)
        if is_bool(a) or is_bool(b):
            raise VerifyException(f"lazy.bitcast: cannot reinterpret {a} as {b} (bool elements)")
        if _bitwidth(a) != _bitwidth(b):
            raise VerifyException(f"lazy.bitcast: cannot reinterpret {a} as {b} (widths differ)")


# ---------------------------------------------------------------------------
# reduce
# ---------------------------------------------------------------------------

REDUCE_KINDS = ("add", "max", "mul")


@irdl_op_definition
class ReduceOp(IRDLOperation):
    """Reduce over ``axes``; reduced dims stay as size 1.

    ``lazy.reduce add %x [1] : tensor<4x8xf32> -> tensor<4x1xf32>``
    """

    name = "lazy.reduce"
    kind = prop_def(StringAttr)
    axes = prop_def(DenseArrayBase)
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def __init__(self, kind: str, x, axes: Sequence[int], attributes=None):
        x = SSAValue.get(x)
        shape = shape_of(x)
        out = tuple(1 if d in axes else s for d, s in enumerate(shape))
        super().__init__(
            operands=[x],
            result_types=[tensor_type(out, element_of(x))],
            properties={"kind": StringAttr(kind), "axes": i64_array(sorted(axes))},
            attributes=attributes or {},
        )

    @property
    def reduce_axes(self) -> tuple[int, ...]:
        return array_ints(self.axes)

    @property
    def reduce_kind(self) -> str:
        return self.kind.data

    def verify_(self) -> None:
        _check_lazy_operands(self)
        _check_static(self, self.input.type, "operand")
        if self.reduce_kind not in REDUCE_KINDS:
            raise VerifyException(
                f"lazy.reduce: unknown kind '{self.reduce_kind}' (expected one of "
                f"{', '.join(REDUCE_KINDS)})"
            )
        shape, axes = shape_of(self.input), self.reduce_axes
        for a in axes:
            if not 0 <= a < len(shape):
                raise VerifyException(
                    f"lazy.reduce: axis {a} out of range for rank {len(shape)} operand"
                )
        if len(set(axes)) != len(axes) or list(axes) != sorted(axes):
            raise VerifyException(f"lazy.reduce: axes {list(axes)} must be sorted and unique")
        et = element_of(self.input)
        if is_bool(et):
            raise VerifyException("lazy.reduce: cannot reduce bool elements (cast first)")
        want = tensor_type(tuple(1 if d in axes else s for d, s in enumerate(shape)), et)
        if self.result.type != want:
            raise VerifyException(
                f"lazy.reduce: result type must be {want}, got {self.result.type}"
            )

    @classmethod
    def parse(cls, parser: Parser):
        kind = parser.parse_identifier()
        x = parser.parse_unresolved_operand()
        axes = parse_int_list(parser)
        attrs = _parse_attrs(parser)
        parser.parse_punctuation(":")
        t = parser.parse_type()
        parser.parse_punctuation("->")
        rt = parser.parse_type()
        x = parser.resolve_operand(x, t)
        if not isinstance(t, TensorType):
            parser.raise_error(f"lazy.reduce needs a tensor operand, got {t}")
        op = cls.create(
            operands=[x],
            result_types=[rt],
            properties={"kind": StringAttr(kind), "axes": i64_array(axes)},
            attributes=attrs,
        )
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.reduce_kind} ")
        printer.print_operand(self.input)
        printer.print_string(" ")
        print_int_list(printer, self.reduce_axes)
        _print_attrs(printer, self)
        printer.print_string(" : ")
        printer.print_attribute(self.input.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)


# ---------------------------------------------------------------------------
# scan
# ---------------------------------------------------------------------------

SCAN_KINDS = ("add", "mul", "max", "min")


@irdl_op_definition
class ScanOp(IRDLOperation):
    """Inclusive scan along ``dim``: ``out[.., i, ..] = x[.., 0, ..] (kind) ... (kind)
    x[.., i, ..]`` (a running sum, product, maximum or minimum); the result has
    the operand's type. Float max/min propagate NaN (as ``torch.cummax``).

    ``lazy.scan add %x dim 1 : tensor<4x8xf32>``
    """

    name = "lazy.scan"
    kind = prop_def(StringAttr)
    dim = prop_def(IntegerAttr)
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def __init__(self, kind: str, x, dim: int, attributes=None):
        x = SSAValue.get(x)
        super().__init__(
            operands=[x],
            result_types=[x.type],
            properties={"kind": StringAttr(kind), "dim": IntegerAttr(dim, 64)},
            attributes=attributes or {},
        )

    @property
    def scan_kind(self) -> str:
        return self.kind.data

    @property
    def scan_dim(self) -> int:
        return self.dim.value.data

    def verify_(self) -> None:
        _check_lazy_operands(self)
        _check_static(self, self.input.type, "operand")
        if self.scan_kind not in SCAN_KINDS:
            raise VerifyException(
                f"lazy.scan: unknown kind '{self.scan_kind}' (expected one of "
                f"{', '.join(SCAN_KINDS)})"
            )
        shape, d = shape_of(self.input), self.scan_dim
        if not 0 <= d < len(shape):
            raise VerifyException(
                f"lazy.scan: dim {d} out of range for a rank-{len(shape)} operand"
            )
        if is_bool(element_of(self.input)):
            raise VerifyException("lazy.scan: cannot scan bool elements (cast first)")
        if self.result.type != self.input.type:
            raise VerifyException(
                f"lazy.scan: result type must be the operand type {self.input.type}, got "
                f"{self.result.type}"
            )

    @classmethod
    def parse(cls, parser: Parser):
        kind = parser.parse_identifier()
        x = parser.parse_unresolved_operand()
        parser.parse_keyword("dim")
        d = parser.parse_integer(allow_negative=False, allow_boolean=False)
        attrs = _parse_attrs(parser)
        parser.parse_punctuation(":")
        t = parser.parse_type()
        if not isinstance(t, TensorType):
            parser.raise_error(f"lazy.scan needs a tensor operand, got {t}")
        return cls(kind, parser.resolve_operand(x, t), d, attrs)

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.scan_kind} ")
        printer.print_operand(self.input)
        printer.print_string(f" dim {self.scan_dim}")
        _print_attrs(printer, self)
        printer.print_string(" : ")
        printer.print_attribute(self.input.type)


# ---------------------------------------------------------------------------
# gather
# ---------------------------------------------------------------------------


@irdl_op_definition
class GatherOp(IRDLOperation):
    """PyTorch's gather along ``dim``: ``out[i] = src[i with i[dim] := index[i]]``.

    The result has the index's shape and the source's element type; the index
    has the source's rank and, off ``dim``, at most its sizes. Indices are
    clamped to ``[0, src.shape[dim])`` when a kernel reads them (a read never
    leaves the source); the front end wraps negative indices and checks
    realized ones.

    ``lazy.gather %x[%i] dim 1 : tensor<4x8xf32>, tensor<4x3xi64>``
    """

    name = "lazy.gather"
    dim = prop_def(IntegerAttr)
    source = operand_def(TensorType)
    index = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def __init__(self, source, index, dim: int, attributes=None):
        source, index = SSAValue.get(source), SSAValue.get(index)
        super().__init__(
            operands=[source, index],
            result_types=[tensor_type(shape_of(index), element_of(source))],
            properties={"dim": IntegerAttr(dim, 64)},
            attributes=attributes or {},
        )

    @property
    def gather_dim(self) -> int:
        return self.dim.value.data

    def verify_(self) -> None:
        _check_lazy_operands(self)
        _check_static(self, self.source.type, "source")
        _check_static(self, self.index.type, "index")
        src, idx, d = shape_of(self.source), shape_of(self.index), self.gather_dim
        if len(src) != len(idx):
            raise VerifyException(
                f"lazy.gather: index {list(idx)} must have the rank of the source {list(src)}"
            )
        if not 0 <= d < max(len(src), 1) or not src:
            raise VerifyException(f"lazy.gather: dim {d} out of range for a rank-{len(src)} source")
        for k, (i, s) in enumerate(zip(idx, src)):
            if k != d and i > s:
                raise VerifyException(
                    f"lazy.gather: index {list(idx)} is larger than the source {list(src)} "
                    f"along dim {k} (only dim {d} is gathered)"
                )
        if src[d] == 0 and 0 not in idx:
            raise VerifyException(
                f"lazy.gather: source {list(src)} has no elements along dim {d} to gather"
            )
        et = element_of(self.index)
        if not is_int(et) or is_unsigned(et):
            raise VerifyException(
                f"lazy.gather: index elements must be signed integers (i8, i16, i32, i64), got {et}"
            )
        want = tensor_type(idx, element_of(self.source))
        if self.result.type != want:
            raise VerifyException(
                f"lazy.gather: result type must be {want}, got {self.result.type}"
            )

    @classmethod
    def parse(cls, parser: Parser):
        src = parser.parse_unresolved_operand()
        parser.parse_punctuation("[")
        idx = parser.parse_unresolved_operand()
        parser.parse_punctuation("]")
        parser.parse_keyword("dim")
        d = parser.parse_integer(allow_negative=False, allow_boolean=False)
        attrs = _parse_attrs(parser)
        parser.parse_punctuation(":")
        st = parser.parse_type()
        parser.parse_punctuation(",")
        it = parser.parse_type()
        if not isinstance(st, TensorType) or not isinstance(it, TensorType):
            parser.raise_error(f"lazy.gather needs tensor types, got {st} and {it}")
        src, idx = parser.resolve_operands([src, idx], [st, it], parser.pos)
        return cls(src, idx, d, attrs)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.source)
        printer.print_string("[")
        printer.print_operand(self.index)
        printer.print_string(f"] dim {self.gather_dim}")
        _print_attrs(printer, self)
        printer.print_string(" : ")
        printer.print_attribute(self.source.type)
        printer.print_string(", ")
        printer.print_attribute(self.index.type)


# ---------------------------------------------------------------------------
# movement
# ---------------------------------------------------------------------------


class MovementOp(IRDLOperation, ABC):
    """A movement op changes the index map only.

    Subclasses state their algebra once, as :meth:`transform` on a
    :class:`ViewStack`, with the op's Python argument (:attr:`arg`); building
    and verifying both derive the result shape from it.
    """

    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    @classmethod
    def transform(cls, stack: ViewStack, arg) -> ViewStack:
        raise NotImplementedError

    @property
    def arg(self):
        raise NotImplementedError

    @classmethod
    def _props(cls, arg) -> dict[str, Attribute]:
        return {}

    def apply(self, stack: ViewStack) -> ViewStack:
        return self.transform(stack, self.arg)

    @classmethod
    def build(cls, x, arg, attributes=None):
        """The op applying ``arg`` to ``x``; raises ValueError naming a bad argument."""
        x = SSAValue.get(x)
        try:
            out = cls.transform(ViewStack.from_shape(shape_of(x)), arg).shape
        except ViewError as e:
            raise ValueError(f"{cls.name}: {e}") from None
        return cls.create(
            operands=[x],
            result_types=[tensor_type(out, element_of(x))],
            properties=cls._props(arg),
            attributes=attributes or {},
        )

    def verify_(self) -> None:
        _check_lazy_operands(self)
        _check_static(self, self.input.type, "operand")
        _check_static(self, self.result.type, "result")
        if element_of(self.input) != element_of(self.result):
            raise VerifyException(
                f"{self.name}: element type changes from {element_of(self.input)} to "
                f"{element_of(self.result)}"
            )
        try:
            out = self.apply(ViewStack.from_shape(shape_of(self.input))).shape
        except ViewError as e:
            raise VerifyException(f"{self.name}: {e}") from None
        if out != shape_of(self.result):
            raise VerifyException(
                f"{self.name}: result shape must be {list(out)}, got {list(shape_of(self.result))}"
            )

    # syntax: `lazy.op %x <arg> attrs : in -> out`
    @classmethod
    def _parse_arg(cls, parser: Parser) -> dict[str, Attribute]:
        return {}

    def _print_arg(self, printer: Printer) -> None:
        pass

    @classmethod
    def _finish_props(cls, parser: Parser, props: dict, result_type: Attribute) -> None:
        """Complete properties that need the result type (parsed after the argument)."""

    @classmethod
    def parse(cls, parser: Parser):
        x = parser.parse_unresolved_operand()
        props = cls._parse_arg(parser)
        attrs = _parse_attrs(parser)
        parser.parse_punctuation(":")
        t = parser.parse_type()
        parser.parse_punctuation("->")
        rt = parser.parse_type()
        cls._finish_props(parser, props, rt)
        return cls.create(
            operands=[parser.resolve_operand(x, t)],
            result_types=[rt],
            properties=props,
            attributes=attrs,
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.input)
        self._print_arg(printer)
        _print_attrs(printer, self)
        printer.print_string(" : ")
        printer.print_attribute(self.input.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)


class _ShapeMovement(MovementOp, ABC):
    """Movement ops whose argument is the result shape (reshape, expand)."""

    @property
    def arg(self) -> tuple[int, ...]:
        return shape_of(self.result)


@irdl_op_definition
class ReshapeOp(_ShapeMovement):
    """Same elements in row-major order, new shape."""

    name = "lazy.reshape"

    @classmethod
    def transform(cls, stack, arg):
        return stack.reshape(tuple(arg))


@irdl_op_definition
class ExpandOp(_ShapeMovement):
    """Broadcast size-1 dims to the result shape (no copy)."""

    name = "lazy.expand"

    @classmethod
    def transform(cls, stack, arg):
        return stack.expand(tuple(arg))


class _IntsMovement(MovementOp, ABC):
    """Movement ops whose argument is one integer list, kept in property ``_key``."""

    KEY: ClassVar[str]

    @property
    def arg(self) -> tuple[int, ...]:
        return array_ints(self.properties[self.KEY])  # type: ignore[arg-type]

    @classmethod
    def _props(cls, arg):
        return {cls.KEY: i64_array(arg)}

    @classmethod
    def _parse_arg(cls, parser):
        return {cls.KEY: i64_array(parse_int_list(parser))}

    def _print_arg(self, printer):
        printer.print_string(" ")
        print_int_list(printer, self.arg)


@irdl_op_definition
class PermuteOp(_IntsMovement):
    """Reorder dims: result dim i is input dim ``order[i]``."""

    name = "lazy.permute"
    KEY: ClassVar[str] = "order"
    order = prop_def(DenseArrayBase)

    @classmethod
    def transform(cls, stack, arg):
        return stack.permute(tuple(arg))


@irdl_op_definition
class FlipOp(_IntsMovement):
    """Reverse the listed dims."""

    name = "lazy.flip"
    KEY: ClassVar[str] = "dims"
    dims = prop_def(DenseArrayBase)

    @classmethod
    def transform(cls, stack, arg):
        return stack.flip(tuple(arg))


@irdl_op_definition
class StrideOp(_IntsMovement):
    """Every ``steps[d]``-th element of each dim (positive steps)."""

    name = "lazy.stride"
    KEY: ClassVar[str] = "steps"
    steps = prop_def(DenseArrayBase)

    @classmethod
    def transform(cls, stack, arg):
        return stack.stride(tuple(arg))


class _PairsMovement(MovementOp, ABC):
    """Movement ops whose argument is a list of (a, b) pairs."""

    KEY: ClassVar[str]

    @property
    def arg(self) -> tuple[tuple[int, int], ...]:
        return array_pairs(self.properties[self.KEY])  # type: ignore[arg-type]

    def verify_(self) -> None:
        _check_lazy_operands(self)
        n = len(array_ints(self.properties[self.KEY]))  # type: ignore[arg-type]
        if n % 2:
            raise VerifyException(
                f"{self.name}: needs [a, b] pairs (an even number of integers), got {n}"
            )
        super().verify_()

    @classmethod
    def _props(cls, arg):
        return {cls.KEY: pairs_array(arg)}

    @classmethod
    def _parse_arg(cls, parser):
        return {cls.KEY: pairs_array(parse_pair_list(parser))}

    def _print_arg(self, printer):
        printer.print_string(" ")
        print_pair_list(printer, self.arg)


@irdl_op_definition
class ShrinkOp(_PairsMovement):
    """Keep ``[begin, end)`` of each dim."""

    name = "lazy.shrink"
    KEY: ClassVar[str] = "bounds"
    bounds = prop_def(DenseArrayBase)

    @classmethod
    def transform(cls, stack, arg):
        return stack.shrink(arg)


@irdl_op_definition
class PadOp(_PairsMovement):
    """Pad each dim with ``[before, after]`` elements of 0.

    A non-zero ``value`` is written ``lazy.pad %x [[1, 1]] value 1.0``.
    """

    name = "lazy.pad"
    KEY: ClassVar[str] = "padding"
    padding = prop_def(DenseArrayBase)
    value = opt_prop_def(Attribute)

    @classmethod
    def transform(cls, stack, arg):
        return stack.pad(arg)

    @property
    def pad_value(self) -> float | int | bool:
        return attr_value(self.value) if self.value is not None else 0

    @classmethod
    def build(cls, x, arg, attributes=None, value: float | int | bool = 0):
        op = super().build(x, arg, attributes)
        if value != 0:
            op.properties["value"] = scalar_attr(value, element_of(op.result))
        return op

    def verify_(self) -> None:
        _check_lazy_operands(self)
        super().verify_()
        v = self.value
        if v is not None and (
            not isinstance(v, (FloatAttr, IntegerAttr)) or v.type != element_of(self.result)
        ):
            raise VerifyException(
                f"lazy.pad: pad value must have the element type {element_of(self.result)}, got {v}"
            )

    @classmethod
    def _parse_arg(cls, parser):
        props = super()._parse_arg(parser)
        if parser.parse_optional_keyword("value"):
            start = parser.pos
            props["_value"] = (parse_number(parser), start, parser.pos)
        return props

    @classmethod
    def _finish_props(cls, parser, props, result_type):
        if "_value" not in props:
            return
        value, start, end = props.pop("_value")
        if not isinstance(result_type, TensorType):
            parser.raise_error("lazy.pad needs tensor types")
        try:
            props["value"] = scalar_attr(value, result_type.element_type)
        except ValueError as e:
            parser.raise_error(str(e), start, end)

    def _print_arg(self, printer):
        super()._print_arg(printer)
        if self.value is not None:
            printer.print_string(" value " + format_number(self.pad_value, element_of(self.result)))


@irdl_op_definition
class ViewOp(MovementOp):
    """Read the operand (as a row-major buffer) through a composed view.

    ``lazy.view %x <[8, 4] strides [1, 8] offset 0> : tensor<4x8xf32> -> tensor<8x4xf32>``
    (the ``#lazy.view`` parameters, printed inline)
    """

    name = "lazy.view"
    view = prop_def(ViewAttr)

    @property
    def arg(self) -> ViewStack:
        return self.view.stack

    @classmethod
    def transform(cls, stack, arg):
        return stack.compose(arg)

    @classmethod
    def _props(cls, arg):
        return {"view": arg if isinstance(arg, ViewAttr) else ViewAttr(arg)}

    @classmethod
    def _parse_arg(cls, parser):
        return {"view": ViewAttr(ViewAttr.parse_parameter(parser))}

    def _print_arg(self, printer):
        printer.print_string(" ")
        self.view.print_parameter(printer)


MOVEMENT_OPS: tuple[type[MovementOp], ...] = (
    ReshapeOp,
    PermuteOp,
    ExpandOp,
    PadOp,
    ShrinkOp,
    FlipOp,
    StrideOp,
    ViewOp,
)

# ---------------------------------------------------------------------------
# meta
# ---------------------------------------------------------------------------


@irdl_op_definition
class ContiguousOp(IRDLOperation):
    """Force the operand to be materialized in a contiguous buffer."""

    name = "lazy.contiguous"
    input = operand_def(TensorType)
    result = result_def(TensorType)

    def __init__(self, x, attributes=None):
        x = SSAValue.get(x)
        super().__init__(operands=[x], result_types=[x.type], attributes=attributes)

    def verify_(self) -> None:
        _check_lazy_operands(self)
        _check_static(self, self.input.type, "operand")
        if self.input.type != self.result.type:
            raise VerifyException("lazy.contiguous: result type must equal the operand type")

    @classmethod
    def parse(cls, parser: Parser):
        x = parser.parse_unresolved_operand()
        attrs = _parse_attrs(parser)
        parser.parse_punctuation(":")
        t = parser.parse_type()
        return cls(parser.resolve_operand(x, t), attrs)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.input)
        _print_attrs(printer, self)
        printer.print_string(" : ")
        printer.print_attribute(self.input.type)


@irdl_op_definition
class CopyOp(IRDLOperation):
    """Materialize the operand on ``device``: ``lazy.copy %x to "cpu" : tensor<4xf32>``.

    ``device`` must name a registered target (:func:`mlfuse.targets.devices`).
    """

    name = "lazy.copy"
    device = prop_def(StringAttr)
    input = operand_def(TensorType)
    result = result_def(TensorType)

    def __init__(self, x, device: str, attributes=None):
        x = SSAValue.get(x)
        super().__init__(
            operands=[x],
            result_types=[x.type],
            properties={"device": StringAttr(device)},
            attributes=attributes or {},
        )

    def verify_(self) -> None:
        _check_lazy_operands(self)
        _check_static(self, self.input.type, "operand")
        if self.input.type != self.result.type:
            raise VerifyException("lazy.copy: result type must equal the operand type")
        from mlfuse.targets import devices

        if self.device.data not in devices():
            raise VerifyException(
                f"lazy.copy: unknown device '{self.device.data}' (known: {', '.join(devices())})"
            )

    @classmethod
    def parse(cls, parser: Parser):
        x = parser.parse_unresolved_operand()
        parser.parse_keyword("to")
        device = parser.parse_str_literal()
        attrs = _parse_attrs(parser)
        parser.parse_punctuation(":")
        t = parser.parse_type()
        return cls(parser.resolve_operand(x, t), device, attrs)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.input)
        printer.print_string(" to ")
        printer.print_string_literal(self.device.data)
        _print_attrs(printer, self)
        printer.print_string(" : ")
        printer.print_attribute(self.input.type)


@irdl_op_definition
class AssignOp(IRDLOperation):
    """Write ``value`` into the existing buffer ``target`` (a function argument);
    the result is the updated buffer. ``lazy.assign %buf, %v : tensor<4xf32>``"""

    name = "lazy.assign"
    target = operand_def(TensorType)
    value = operand_def(TensorType)
    result = result_def(TensorType)

    def __init__(self, target, value, attributes=None):
        target = SSAValue.get(target)
        super().__init__(
            operands=[target, value], result_types=[target.type], attributes=attributes
        )

    def verify_(self) -> None:
        _check_lazy_operands(self)
        _check_static(self, self.target.type, "target")
        if self.result.type != self.target.type:
            raise VerifyException(
                f"lazy.assign: result type {self.result.type} differs from target type "
                f"{self.target.type}"
            )
        if self.target.type != self.value.type:
            raise VerifyException(
                f"lazy.assign: value type {self.value.type} differs from target type "
                f"{self.target.type}"
            )

    @classmethod
    def parse(cls, parser: Parser):
        a = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        b = parser.parse_unresolved_operand()
        attrs = _parse_attrs(parser)
        parser.parse_punctuation(":")
        t = parser.parse_type()
        a, b = parser.resolve_operands([a, b], [t, t], parser.pos)
        return cls(a, b, attrs)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.target)
        printer.print_string(", ")
        printer.print_operand(self.value)
        _print_attrs(printer, self)
        printer.print_string(" : ")
        printer.print_attribute(self.target.type)


ELEMENTWISE_OPS: tuple[type[ElementwiseOp], ...] = (
    *UNARY_OPS,
    *BINARY_OPS,
    WhereOp,
    MulaccOp,
    CastOp,
    BitcastOp,
)

Lazy = Dialect(
    "lazy",
    [
        ConstOp,
        *ELEMENTWISE_OPS,
        ReduceOp,
        ScanOp,
        GatherOp,
        *MOVEMENT_OPS,
        ContiguousOp,
        CopyOp,
        AssignOp,
    ],
    [ViewAttr],
)
