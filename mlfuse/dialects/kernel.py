"""The ``kernel`` dialect: outlined kernels and the schedule that runs them.

A ``kernel.func`` reads and writes flat buffers (1-D memrefs) over an
iteration *space* (a static shape). Its body is a dataflow program evaluated
at every point of the space: ``kernel.load`` reads a buffer through a view of
the space (``kernel.gather`` reads it at a position along one dim that a
value gives), ``arith``/``math`` ops compute on scalars, ``kernel.reduce``
combines a value over some axes of the space (its result no longer varies
along them), ``kernel.scan`` is a value's running combination along one dim
(computed in the serial loop over that dim), and ``kernel.store`` writes
through a view. Its *plan* gives the loops that run the space: which dims
form the parallel loop, and the order of the serial ones (see :mod:`mlfuse.loop_nest`)::

    kernel.func @k0 outs(%out: memref<64xf32>) ins(%x: memref<4096xf32>) space [64, 64]
        plan [parallel 0, serial 1] {
      %0 = kernel.load %x <[64, 64] strides [64, 1] offset 0> : memref<4096xf32>
      %1 = kernel.reduce add %0 [1] : f32
      kernel.store %out <[64, 64] strides [1, 0] offset 0>, %1 : memref<64xf32>
    }

Outlining writes the plan; loop optimizations rewrite it; the lowering only
reads it. A kernel parsed without a plan gets the default one of its body.

The schedule is a ``func.func`` of ``kernel.alloc`` / ``kernel.launch`` /
``kernel.free`` in execution order; it returns the output buffers.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import (
    AnyFloat,
    Float64Type,
    UnitAttr,
    VectorType,
    DenseArrayBase,
    FunctionType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    StringAttr,
    SymbolRefAttr,
    i64,
)
from xdsl.ir import Attribute, Block, Data, Dialect, Operation, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    VarConstraint,
    base,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import (
    IsolatedFromAbove,
    NoTerminator,
    Pure,
    SymbolOpInterface,
    SymbolTable,
)
from xdsl.utils.exceptions import VerifyException

from mlfuse.dialects.lazy import REDUCE_KINDS, SCAN_KINDS, ViewAttr, signless
from mlfuse.dialects.syntax import (
    array_ints,
    attr_value,
    format_number,
    i64_array,
    parse_int_list,
    parse_number,
    print_int_list,
    scalar_attr,
)
from mlfuse.loop_nest import (
    LOOP_KINDS,
    Item,
    Loop,
    LoopPlan,
    StoreItem,
    default_plan,
    scan_problems,
)
from mlfuse.view import ViewStack


def buffer_type(size: int, element: Attribute) -> MemRefType:
    return MemRefType(element, [size])


def _check_buffer(op: IRDLOperation, t: Attribute, what: str) -> MemRefType:
    if not isinstance(t, MemRefType) or len(t.get_shape()) != 1 or t.get_shape()[0] < 0:
        raise VerifyException(f"{op.name}: {what} must be a static 1-D memref, got {t}")
    return t


def _parent_kernel(op: IRDLOperation) -> FuncOp:
    p = op.parent_op()
    if not isinstance(p, FuncOp):
        raise VerifyException(f"{op.name} must be directly inside a kernel.func")
    return p


def _check_view(op: IRDLOperation, view: ViewAttr, buf: SSAValue | None) -> None:
    space = _parent_kernel(op).space_shape
    if view.stack.shape != space:
        raise VerifyException(
            f"{op.name}: view shape {list(view.stack.shape)} differs from the kernel space "
            f"{list(space)}"
        )
    if buf is None:
        return
    size = _check_buffer(op, buf.type, "buffer").get_shape()[0]
    rng = view.stack.views[0].offset_range()
    if rng is not None and (rng[0] < 0 or rng[1] >= size):
        raise VerifyException(
            f"{op.name}: view reaches offsets [{rng[0]}, {rng[1]}] outside the buffer of "
            f"{size} elements"
        )


@irdl_attr_definition
class PlanAttr(Data[LoopPlan]):
    """A kernel's loops, outermost first: ``#kernel.plan<[parallel 0, serial 1]>``
    (printed inline on ``kernel.func`` as ``plan [parallel 0, serial 1]``)."""

    name = "kernel.plan"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> LoopPlan:
        with parser.in_angle_brackets():
            return parse_plan(parser)

    def print_parameter(self, printer: Printer) -> None:
        printer.print_string(f"<{self.data}>")

    @property
    def plan(self) -> LoopPlan:
        return self.data


def parse_plan(parser: AttrParser) -> LoopPlan:
    """``[parallel 0, serial 1:256, vector 1:16]``: ``kind dim`` or ``kind dim:size``."""

    def loop() -> Loop:
        kind = parser.parse_identifier()
        if kind not in LOOP_KINDS:
            parser.raise_error(f"unknown loop kind '{kind}' (known: {', '.join(LOOP_KINDS)})")
        dim = parser.parse_integer(allow_negative=False, allow_boolean=False)
        size = None
        if parser.parse_optional_punctuation(":") is not None:
            size = parser.parse_integer(allow_negative=False, allow_boolean=False)
        return Loop(dim, kind, size)

    return LoopPlan(tuple(parser.parse_comma_separated_list(parser.Delimiter.SQUARE, loop)))


@irdl_op_definition
class FuncOp(IRDLOperation):
    """An outlined kernel: buffers ``outs`` then ``ins``, an iteration space, its
    loop plan and a body."""

    name = "kernel.func"
    sym_name = prop_def(StringAttr)
    function_type = prop_def(FunctionType)
    num_outputs = prop_def(IntAttr)
    space = prop_def(DenseArrayBase)
    plan = opt_prop_def(PlanAttr)
    body = region_def("single_block")
    traits = traits_def(SymbolOpInterface(), IsolatedFromAbove(), NoTerminator())

    def __init__(
        self,
        name: str,
        outs: Sequence[Attribute],
        ins: Sequence[Attribute],
        space: Sequence[int],
        body: Region | None = None,
        attributes: dict[str, Attribute] | None = None,
        plan: LoopPlan | None = None,
    ):
        types = [*outs, *ins]
        if body is None:
            body = Region(Block(arg_types=types))
        props: dict[str, Attribute] = {
            "sym_name": StringAttr(name),
            "function_type": FunctionType.from_lists(types, []),
            "num_outputs": IntAttr(len(outs)),
            "space": i64_array(space),
        }
        if plan is not None:
            props["plan"] = PlanAttr(plan)
        super().__init__(properties=props, regions=[body], attributes=attributes)

    @property
    def space_shape(self) -> tuple[int, ...]:
        return array_ints(self.space)

    @property
    def loop_plan(self) -> LoopPlan:
        if self.plan is None:
            raise VerifyException(f"kernel.func @{self.sym_name.data} has no loop plan")
        return self.plan.data

    def set_default_plan(self) -> None:
        """Give the kernel the plan outlining would give its body."""
        self.plan = PlanAttr(default_plan_of(self))

    @property
    def outputs(self) -> tuple[SSAValue, ...]:
        return self.body.block.args[: self.num_outputs.data]

    @property
    def inputs(self) -> tuple[SSAValue, ...]:
        return self.body.block.args[self.num_outputs.data :]

    def verify_(self) -> None:
        args = self.body.block.args
        if tuple(a.type for a in args) != tuple(self.function_type.inputs.data):
            raise VerifyException("kernel.func: block arguments differ from the signature")
        if self.function_type.outputs.data:
            raise VerifyException("kernel.func: a kernel has no results (it stores to its outs)")
        if not 0 <= self.num_outputs.data <= len(args):
            raise VerifyException("kernel.func: bad number of outputs")
        for a in args:
            _check_buffer(self, a.type, "every argument")
        if any(s < 0 for s in self.space_shape):
            raise VerifyException(f"kernel.func: negative extent in space {list(self.space_shape)}")
        defined: set[SSAValue] = set(args)
        for op in self.body.block.ops:
            for v in op.operands:
                if v not in defined:
                    where = (
                        "later in the kernel" if v.owner in self.body.block.ops else "outside it"
                    )
                    raise VerifyException(
                        f"kernel.func @{self.sym_name.data}: '{op.name}' uses a value defined "
                        f"{where} (operands must be defined before their use)"
                    )
            defined.update(op.results)
            if not isinstance(
                op, (LoadOp, GatherOp, ValidOp, ReduceOp, ScanOp, StoreOp, SinCosLargeOp)
            ) and op.dialect_name() not in (
                "arith",
                "math",
            ):
                raise VerifyException(
                    f"kernel.func: '{op.name}' is not allowed in a kernel body (only kernel "
                    "loads, stores, reduces, scans, sincos_large and arith/math scalar ops)"
                )
            for r in op.results:
                if isinstance(r.type, (MemRefType,)):
                    raise VerifyException(f"kernel.func: '{op.name}' must produce scalars")
            if not isinstance(op, StoreOp) and len(op.results) != 1:
                raise VerifyException(f"kernel.func: '{op.name}' must produce one scalar")
        if self.plan is None:
            raise VerifyException(f"kernel.func @{self.sym_name.data} has no loop plan")
        why = plan_problems(self, self.loop_plan)
        if why is not None:
            raise VerifyException(
                f"kernel.func @{self.sym_name.data}: bad plan {self.plan.data}: {why}"
            )

    @classmethod
    def parse(cls, parser: Parser) -> FuncOp:
        name = parser.parse_symbol_name().data

        def arglist(keyword: str) -> list[Parser.Argument]:
            parser.parse_keyword(keyword)
            return parser.parse_comma_separated_list(
                parser.Delimiter.PAREN, lambda: parser.parse_argument(expect_type=True)
            )

        outs = arglist("outs")
        ins = arglist("ins")
        parser.parse_keyword("space")
        space = parse_int_list(parser)
        plan = parse_plan(parser) if parser.parse_optional_keyword("plan") else None
        attrs = parser.parse_optional_attr_dict_with_keyword()
        body = parser.parse_region([*outs, *ins])
        op = cls(
            name,
            [a.type for a in outs],
            [a.type for a in ins],
            space,
            body,
            dict(attrs.data) if attrs else None,
            plan,
        )
        if plan is None:
            try:
                op.set_default_plan()
            except Exception:  # a malformed body: the verifier names the problem
                pass
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        for kw, args in (("outs", self.outputs), ("ins", self.inputs)):
            printer.print_string(f" {kw}(")
            printer.print_list(args, printer.print_block_argument)
            printer.print_string(")")
        printer.print_string(" space ")
        print_int_list(printer, self.space_shape)
        if self.plan is not None:
            printer.print_string(f" plan {self.plan.data}")
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False, print_empty_block=False)


def _signless_memref(t: Attribute) -> Attribute:
    if isinstance(t, MemRefType) and signless(t.element_type) != t.element_type:
        return MemRefType(signless(t.element_type), t.get_shape())
    return t


@irdl_op_definition
class LoadOp(IRDLOperation):
    """Read ``buffer`` at the current point of the space, through ``view``
    (masked points read 0). The value has the signless twin of the element
    type (a ``ui8`` buffer reads ``i8``: the body's ops carry the signedness)."""

    name = "kernel.load"
    buffer = operand_def(MemRefType)
    view = prop_def(ViewAttr)
    result = result_def()
    traits = traits_def(Pure())

    def __init__(self, buffer: SSAValue, view: ViewStack | ViewAttr):
        t = buffer.type
        assert isinstance(t, MemRefType)
        super().__init__(
            operands=[buffer],
            properties={"view": view if isinstance(view, ViewAttr) else ViewAttr(view)},
            result_types=[signless(t.element_type)],
        )

    def verify_(self) -> None:
        t = _check_buffer(self, self.buffer.type, "buffer")
        if self.result.type != signless(t.element_type):
            raise VerifyException(
                f"kernel.load: result type {self.result.type} differs from the buffer's "
                f"element type {signless(t.element_type)}"
            )
        _check_view(self, self.view, self.buffer)

    @classmethod
    def parse(cls, parser: Parser) -> LoadOp:
        buf = parser.parse_unresolved_operand()
        view = ViewAttr(ViewAttr.parse_parameter(parser))
        parser.parse_punctuation(":")
        t = parser.parse_type()
        return cls(parser.resolve_operand(buf, t), view)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.buffer)
        printer.print_string(" ")
        self.view.print_parameter(printer)
        printer.print_string(" : ")
        printer.print_attribute(self.buffer.type)


@irdl_op_definition
class GatherOp(IRDLOperation):
    """Read ``buffer`` at a data-dependent position: at each point of the space,
    ``buffer[view(point) + clamp(index, 0, size - 1) * stride]``. ``view`` (a view
    of the space, unmasked) places the point off the gathered dim; ``index`` (an
    integer value) picks the position along it, clamped so that a read never
    leaves the ``size`` positions of that dim. The value has the signless twin of
    the element type, as :class:`LoadOp` reads.

    ``%v = kernel.gather %x <[4, 3] strides [8, 0] offset 0>, %i stride 1 size 8 :
    memref<32xf32>, i64``
    """

    name = "kernel.gather"
    buffer = operand_def(MemRefType)
    index = operand_def(IntegerType)
    view = prop_def(ViewAttr)
    stride = prop_def(IntegerAttr)
    size = prop_def(IntegerAttr)
    result = result_def()
    traits = traits_def(Pure())

    def __init__(
        self,
        buffer: SSAValue,
        view: ViewStack | ViewAttr,
        index: SSAValue,
        stride: int,
        size: int,
    ):
        t = buffer.type
        assert isinstance(t, MemRefType)
        super().__init__(
            operands=[buffer, index],
            properties={
                "view": view if isinstance(view, ViewAttr) else ViewAttr(view),
                "stride": IntegerAttr(stride, 64),
                "size": IntegerAttr(size, 64),
            },
            result_types=[signless(t.element_type)],
        )

    @property
    def gather_stride(self) -> int:
        return self.stride.value.data

    @property
    def gather_size(self) -> int:
        return self.size.value.data

    def verify_(self) -> None:
        t = _check_buffer(self, self.buffer.type, "buffer")
        if self.result.type != signless(t.element_type):
            raise VerifyException(
                f"kernel.gather: result type {self.result.type} differs from the buffer's "
                f"element type {signless(t.element_type)}"
            )
        it = self.index.type
        if not isinstance(it, IntegerType) or it.width.data == 1:
            raise VerifyException(f"kernel.gather: the index must be an integer, got {it}")
        if any(v.mask is not None for v in self.view.stack.views):
            raise VerifyException("kernel.gather: the view must be unmasked")
        n, st = self.gather_size, self.gather_stride
        if n < 1:
            raise VerifyException(f"kernel.gather: size must be at least 1, got {n}")
        _check_view(self, self.view, None)
        size = t.get_shape()[0]
        rng = self.view.stack.views[0].offset_range()
        if rng is not None:
            lo = rng[0] + min(0, (n - 1) * st)
            hi = rng[1] + max(0, (n - 1) * st)
            if lo < 0 or hi >= size:
                raise VerifyException(
                    f"kernel.gather: view and stride {st} x size {n} reach offsets [{lo}, {hi}] "
                    f"outside the buffer of {size} elements"
                )

    @classmethod
    def parse(cls, parser: Parser) -> GatherOp:
        buf = parser.parse_unresolved_operand()
        view = ViewAttr(ViewAttr.parse_parameter(parser))
        parser.parse_punctuation(",")
        idx = parser.parse_unresolved_operand()
        parser.parse_keyword("stride")
        neg = parser.parse_optional_punctuation("-") is not None
        stride = parser.parse_integer(allow_negative=False, allow_boolean=False)
        parser.parse_keyword("size")
        size = parser.parse_integer(allow_negative=False, allow_boolean=False)
        parser.parse_punctuation(":")
        t = parser.parse_type()
        parser.parse_punctuation(",")
        it = parser.parse_type()
        return cls(
            parser.resolve_operand(buf, t),
            view,
            parser.resolve_operand(idx, it),
            -stride if neg else stride,
            size,
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.buffer)
        printer.print_string(" ")
        self.view.print_parameter(printer)
        printer.print_string(", ")
        printer.print_operand(self.index)
        printer.print_string(f" stride {self.gather_stride} size {self.gather_size} : ")
        printer.print_attribute(self.buffer.type)
        printer.print_string(", ")
        printer.print_attribute(self.index.type)


@irdl_op_definition
class ValidOp(IRDLOperation):
    """Whether the current point is inside ``view``'s mask (a masked constant)."""

    name = "kernel.valid"
    view = prop_def(ViewAttr)
    result = result_def(IntegerType(1))
    traits = traits_def(Pure())

    def __init__(self, view: ViewStack | ViewAttr):
        super().__init__(
            properties={"view": view if isinstance(view, ViewAttr) else ViewAttr(view)},
            result_types=[IntegerType(1)],
        )

    def verify_(self) -> None:
        _check_view(self, self.view, None)

    @classmethod
    def parse(cls, parser: Parser) -> ValidOp:
        return cls(ViewAttr(ViewAttr.parse_parameter(parser)))

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        self.view.print_parameter(printer)


@irdl_op_definition
class SinCosLargeOp(IRDLOperation):
    r"""sin (or cos) of an f64 ``x`` where \|x\| >= 2^50, by Payne-Hanek reduction.

    ``expand-math`` reduces smaller arguments inline and selects this op's
    value where \|x\| >= 2^50 (or x is not finite); its value elsewhere is
    unspecified. ``expand-large-sincos`` expands it after the loops exist, behind
    a branch taken only when some lane needs it, so the common case pays a
    compare, not the long reduction. ``narrow`` says x is the value of an f32
    (\|x\| < 2^128), which needs a shorter reduction. Elementwise: scalars or
    vectors of f64 (after vectorization)."""

    name = "kernel.sincos_large"
    T: ClassVar = VarConstraint("T", base(Float64Type) | VectorType.constr(base(Float64Type)))
    x = operand_def(T)
    result = result_def(T)
    kind = prop_def(StringAttr)
    narrow = opt_prop_def(UnitAttr)
    traits = traits_def(Pure())

    def __init__(self, x: SSAValue, kind: str, narrow: bool = False):
        super().__init__(
            operands=[x],
            result_types=[x.type],
            properties={"kind": StringAttr(kind), **({"narrow": UnitAttr()} if narrow else {})},
        )

    def verify_(self) -> None:
        if self.kind.data not in ("sin", "cos"):
            raise VerifyException(
                f'kernel.sincos_large: kind must be "sin" or "cos", not {self.kind.data!r}'
            )

    @classmethod
    def parse(cls, parser: Parser) -> SinCosLargeOp:
        """``kernel.sincos_large sin|cos [narrow] %x : type``"""
        kind = parser.parse_identifier()
        if kind not in ("sin", "cos"):
            parser.raise_error(f"kernel.sincos_large: expected sin or cos, got {kind!r}")
        narrow = parser.parse_optional_keyword("narrow") is not None
        x = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        t = parser.parse_type()
        return cls(parser.resolve_operand(x, t), kind, narrow)

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.kind.data}{' narrow' if self.narrow else ''} ")
        printer.print_operand(self.x)
        printer.print_string(" : ")
        printer.print_attribute(self.x.type)


@irdl_op_definition
class ReduceOp(IRDLOperation):
    """Combine ``input`` over ``axes`` of the space; the result is constant along them."""

    name = "kernel.reduce"
    kind = prop_def(StringAttr)
    axes = prop_def(DenseArrayBase)
    input = operand_def()
    result = result_def()
    traits = traits_def(Pure())

    def __init__(self, kind: str, x: SSAValue, axes: Sequence[int]):
        super().__init__(
            operands=[x],
            result_types=[x.type],
            properties={"kind": StringAttr(kind), "axes": i64_array(sorted(axes))},
        )

    @property
    def reduce_axes(self) -> tuple[int, ...]:
        return array_ints(self.axes)

    @property
    def reduce_kind(self) -> str:
        return self.kind.data

    def verify_(self) -> None:
        space = _parent_kernel(self).space_shape
        if self.reduce_kind not in REDUCE_KINDS:
            raise VerifyException(f"kernel.reduce: unknown kind '{self.reduce_kind}'")
        for a in self.reduce_axes:
            if not 0 <= a < len(space):
                raise VerifyException(
                    f"kernel.reduce: axis {a} out of range for a rank-{len(space)} space"
                )
        if self.input.type != self.result.type:
            raise VerifyException("kernel.reduce: result type must equal the input type")
        t = self.input.type
        if not isinstance(t, (AnyFloat, IntegerType)) or (
            isinstance(t, IntegerType) and t.width.data == 1
        ):
            raise VerifyException(f"kernel.reduce: cannot reduce {t} values")

    @classmethod
    def parse(cls, parser: Parser) -> ReduceOp:
        kind = parser.parse_identifier()
        x = parser.parse_unresolved_operand()
        axes = parse_int_list(parser)
        parser.parse_punctuation(":")
        t = parser.parse_type()
        return cls(kind, parser.resolve_operand(x, t), axes)

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.reduce_kind} ")
        printer.print_operand(self.input)
        printer.print_string(" ")
        print_int_list(printer, self.reduce_axes)
        printer.print_string(" : ")
        printer.print_attribute(self.input.type)


@irdl_op_definition
class ScanOp(IRDLOperation):
    """The running combination of ``input`` along space dim ``dim``: at a point
    with index ``i`` along it, ``input`` combined over indices ``0..i`` (the
    other coordinates fixed). It is computed in the plan's serial loop over
    ``dim``, which carries the running value, so that loop must be the one loop
    over ``dim`` and the innermost code loop over the dims the scan varies along.

    ``%1 = kernel.scan add %0 dim 1 : f32``
    """

    name = "kernel.scan"
    kind = prop_def(StringAttr)
    dim = prop_def(IntAttr)
    input = operand_def()
    result = result_def()
    traits = traits_def(Pure())

    def __init__(self, kind: str, x: SSAValue, dim: int):
        super().__init__(
            operands=[x],
            result_types=[x.type],
            properties={"kind": StringAttr(kind), "dim": IntAttr(dim)},
        )

    @property
    def scan_kind(self) -> str:
        return self.kind.data

    @property
    def scan_dim(self) -> int:
        return self.dim.data

    def verify_(self) -> None:
        space = _parent_kernel(self).space_shape
        if self.scan_kind not in SCAN_KINDS:
            raise VerifyException(
                f"kernel.scan: unknown kind '{self.scan_kind}' (expected one of "
                f"{', '.join(SCAN_KINDS)})"
            )
        if not 0 <= self.scan_dim < len(space):
            raise VerifyException(
                f"kernel.scan: dim {self.scan_dim} out of range for a rank-{len(space)} space"
            )
        if self.input.type != self.result.type:
            raise VerifyException("kernel.scan: result type must equal the input type")
        t = self.input.type
        if not isinstance(t, (AnyFloat, IntegerType)) or (
            isinstance(t, IntegerType) and t.width.data == 1
        ):
            raise VerifyException(f"kernel.scan: cannot scan {t} values")

    @classmethod
    def parse(cls, parser: Parser) -> ScanOp:
        kind = parser.parse_identifier()
        x = parser.parse_unresolved_operand()
        parser.parse_keyword("dim")
        d = parser.parse_integer(allow_negative=False, allow_boolean=False)
        parser.parse_punctuation(":")
        t = parser.parse_type()
        return cls(kind, parser.resolve_operand(x, t), d)

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.scan_kind} ")
        printer.print_operand(self.input)
        printer.print_string(f" dim {self.scan_dim} : ")
        printer.print_attribute(self.input.type)


@irdl_op_definition
class StoreOp(IRDLOperation):
    """Write ``value`` to ``buffer`` through ``view`` at every point where either varies
    (a value of the element type's signless twin, as :class:`LoadOp` reads)."""

    name = "kernel.store"
    buffer = operand_def(MemRefType)
    value = operand_def()
    view = prop_def(ViewAttr)

    def __init__(self, buffer: SSAValue, view: ViewStack | ViewAttr, value: SSAValue):
        super().__init__(
            operands=[buffer, value],
            properties={"view": view if isinstance(view, ViewAttr) else ViewAttr(view)},
        )

    def verify_(self) -> None:
        t = _check_buffer(self, self.buffer.type, "buffer")
        if self.value.type != signless(t.element_type):
            raise VerifyException(
                f"kernel.store: value type {self.value.type} differs from the buffer's "
                f"element type {signless(t.element_type)}"
            )
        if len(self.view.stack.views) != 1 or self.view.stack.top.mask is not None:
            raise VerifyException("kernel.store: a store view must be a single unmasked view")
        _check_view(self, self.view, self.buffer)

    @classmethod
    def parse(cls, parser: Parser) -> StoreOp:
        buf = parser.parse_unresolved_operand()
        view = ViewAttr(ViewAttr.parse_parameter(parser))
        parser.parse_punctuation(",")
        v = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        t = parser.parse_type()
        if not isinstance(t, MemRefType):
            parser.raise_error(f"kernel.store needs a memref type, got {t}")
        return cls(
            parser.resolve_operand(buf, t),
            view,
            parser.resolve_operand(v, signless(t.element_type)),
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.buffer)
        printer.print_string(" ")
        self.view.print_parameter(printer)
        printer.print_string(", ")
        printer.print_operand(self.value)
        printer.print_string(" : ")
        printer.print_attribute(self.buffer.type)


# ---------------------------------------------------------------------------
# the schedule
# ---------------------------------------------------------------------------


@irdl_op_definition
class AllocOp(IRDLOperation):
    """A new buffer: ``%b = kernel.alloc : memref<64xf32>``."""

    name = "kernel.alloc"
    result = result_def(MemRefType)

    def __init__(self, t: MemRefType, attributes=None):
        super().__init__(result_types=[t], attributes=attributes)

    def verify_(self) -> None:
        _check_buffer(self, self.result.type, "result")

    @classmethod
    def parse(cls, parser: Parser) -> AllocOp:
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        return cls(parser.parse_type(), dict(attrs) if attrs else None)

    def print(self, printer: Printer) -> None:
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)


@irdl_op_definition
class ConstantOp(IRDLOperation):
    """A one-element buffer holding a scalar, for a constant result that needs no
    kernel (read through a broadcasting view): ``%c = kernel.constant 2.0 : memref<1xf32>``."""

    name = "kernel.constant"
    value = prop_def(Attribute)
    result = result_def(MemRefType)

    def __init__(self, value: float | int | bool, t: MemRefType):
        super().__init__(result_types=[t], properties={"value": scalar_attr(value, t.element_type)})

    @property
    def scalar(self) -> float | int | bool:
        return attr_value(self.value)

    def verify_(self) -> None:
        t = _check_buffer(self, self.result.type, "result")
        if t.get_shape()[0] != 1:
            raise VerifyException(f"kernel.constant: result must hold one element, got {t}")
        if getattr(self.value, "type", None) != t.element_type:
            raise VerifyException(
                f"kernel.constant: value {self.value} does not have the element type "
                f"{t.element_type}"
            )

    @classmethod
    def parse(cls, parser: Parser) -> ConstantOp:
        start = parser.pos
        v = parse_number(parser)
        end = parser.pos
        parser.parse_punctuation(":")
        t = parser.parse_type()
        if not isinstance(t, MemRefType):
            parser.raise_error(f"kernel.constant needs a memref type, got {t}")
        try:
            return cls(v, t)
        except ValueError as e:
            parser.raise_error(str(e), start, end)

    def print(self, printer: Printer) -> None:
        t = self.result.type
        assert isinstance(t, MemRefType)
        printer.print_string(" " + format_number(self.scalar, t.element_type) + " : ")
        printer.print_attribute(t)


@irdl_op_definition
class FreeOp(IRDLOperation):
    """The buffer is dead: ``kernel.free %b : memref<64xf32>``."""

    name = "kernel.free"
    buffer = operand_def(MemRefType)

    def __init__(self, buffer: SSAValue):
        super().__init__(operands=[buffer])

    def verify_(self) -> None:
        _check_buffer(self, self.buffer.type, "buffer")

    @classmethod
    def parse(cls, parser: Parser) -> FreeOp:
        b = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        return cls(parser.resolve_operand(b, parser.parse_type()))

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.buffer)
        printer.print_string(" : ")
        printer.print_attribute(self.buffer.type)


@irdl_op_definition
class WindowOp(IRDLOperation):
    """Elements ``[offset, offset + n)`` of a buffer, as a buffer of ``n`` elements
    that aliases them (no copy), for a launch that reads only that part:
    ``%w = kernel.window %b [32] : memref<128xf32> -> memref<16xf32>``. Kernels
    that differ only in where they read a buffer become one kernel on windows
    (``window-kernel-inputs``). A window is never freed; its source lives at
    least as long."""

    name = "kernel.window"
    source = operand_def(MemRefType)
    offset = prop_def(IntegerAttr)
    result = result_def(MemRefType)

    def __init__(self, source: SSAValue, offset: int, size: int):
        t = source.type
        assert isinstance(t, MemRefType)
        super().__init__(
            operands=[source],
            properties={"offset": IntegerAttr(offset, i64)},
            result_types=[MemRefType(t.element_type, [size])],
        )

    @property
    def start(self) -> int:
        return self.offset.value.data

    def verify_(self) -> None:
        src = _check_buffer(self, self.source.type, "source")
        res = _check_buffer(self, self.result.type, "result")
        if src.element_type != res.element_type:
            raise VerifyException(
                f"kernel.window: element type {res.element_type} differs from the source's "
                f"{src.element_type}"
            )
        n, size = res.get_shape()[0], src.get_shape()[0]
        if self.start < 0 or self.start + n > size:
            raise VerifyException(
                f"kernel.window: elements [{self.start}, {self.start + n}) are not inside the "
                f"source's {size}"
            )

    @classmethod
    def parse(cls, parser: Parser) -> WindowOp:
        b = parser.parse_unresolved_operand()
        parser.parse_punctuation("[")
        offset = parser.parse_integer()
        parser.parse_punctuation("]")
        parser.parse_punctuation(":")
        src = parser.parse_type()
        parser.parse_punctuation("->")
        res = parser.parse_type()
        if not isinstance(src, MemRefType) or not isinstance(res, MemRefType):
            parser.raise_error("kernel.window: expected memref types")
        op = cls(parser.resolve_operand(b, src), offset, res.get_shape()[0])
        if op.result.type != res:
            parser.raise_error(f"kernel.window: a window of {src} is a {op.result.type}, not {res}")
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.source)
        printer.print_string(f" [{self.start}] : ")
        printer.print_attribute(self.source.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)


_symbols: weakref.WeakKeyDictionary[Operation, dict[str, Operation]] = weakref.WeakKeyDictionary()


def lookup_callee(launch: Operation) -> Operation | None:
    """The function a launch calls, through a name -> op map per symbol table
    (xDSL's lookup scans the table: verifying every launch of a schedule with
    it is quadratic). A stale map (the op moved or was renamed) is rebuilt."""
    table = launch.parent_op()
    while table is not None and not table.has_trait(SymbolTable):
        table = table.parent_op()
    if table is None:
        return None
    name = launch.callee.root_reference.data  # type: ignore[attr-defined]
    found = _symbols.get(table, {}).get(name)
    if found is None or found.parent_op() is not table or _sym_name(found) != name:
        _symbols[table] = {
            n: o for o in table.regions[0].block.ops if (n := _sym_name(o)) is not None
        }
        found = _symbols[table].get(name)
    return found


def _sym_name(op: Operation) -> str | None:
    a = op.properties.get("sym_name") or op.attributes.get("sym_name")
    return a.data if isinstance(a, StringAttr) else None


@irdl_op_definition
class LaunchOp(IRDLOperation):
    """Run a kernel: ``kernel.launch @k0 outs(%b : memref<64xf32>) ins(%x : memref<4096xf32>)``."""

    name = "kernel.launch"
    callee = prop_def(SymbolRefAttr)
    num_outputs = prop_def(IntAttr)
    args = var_operand_def(MemRefType)

    def __init__(self, callee: str, outs: Sequence[SSAValue], ins: Sequence[SSAValue]):
        super().__init__(
            operands=[[*outs, *ins]],
            properties={"callee": SymbolRefAttr(callee), "num_outputs": IntAttr(len(outs))},
        )

    @property
    def outs(self) -> tuple[SSAValue, ...]:
        return tuple(self.args[: self.num_outputs.data])

    @property
    def ins(self) -> tuple[SSAValue, ...]:
        return tuple(self.args[self.num_outputs.data :])

    def kernel(self) -> FuncOp:
        k = lookup_callee(self)
        if not isinstance(k, FuncOp):
            raise VerifyException(
                f"kernel.launch: no kernel.func named @{self.callee.string_value()}"
            )
        return k

    def verify_(self) -> None:
        callee = lookup_callee(self)
        if callee is None:
            raise VerifyException(f"kernel.launch: no function named @{self.callee.string_value()}")
        got = tuple(a.type for a in self.args)
        if not isinstance(callee, FuncOp):
            # already lowered (func.func over memrefs, or llvm.func): the buffers
            # lead its arguments
            # (with signless element types: a ui8 buffer is an i8 one below kernels)
            ft = getattr(callee, "function_type", None)
            if isinstance(ft, FunctionType) and tuple(
                _signless_memref(t) for t in ft.inputs.data[: len(got)]
            ) != tuple(_signless_memref(t) for t in got):
                raise VerifyException(
                    f"kernel.launch: argument types differ from @{self.callee.string_value()}'s"
                )
            return
        k = callee
        if k.num_outputs.data != self.num_outputs.data:
            raise VerifyException(
                f"kernel.launch: @{k.sym_name.data} has {k.num_outputs.data} outputs, the launch "
                f"passes {self.num_outputs.data}"
            )
        want = tuple(k.function_type.inputs.data)
        if want != got:
            raise VerifyException(
                f"kernel.launch: argument types {[str(t) for t in got]} differ from "
                f"@{k.sym_name.data}'s {[str(t) for t in want]}"
            )

    @classmethod
    def parse(cls, parser: Parser) -> LaunchOp:
        callee = parser.parse_symbol_name().data

        def group(keyword: str) -> list[SSAValue]:
            parser.parse_keyword(keyword)

            def one() -> SSAValue:
                v = parser.parse_unresolved_operand()
                parser.parse_punctuation(":")
                return parser.resolve_operand(v, parser.parse_type())

            return parser.parse_comma_separated_list(parser.Delimiter.PAREN, one)

        outs = group("outs")
        ins = group("ins")
        return cls(callee, outs, ins)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.callee.string_value())
        for kw, vals in (("outs", self.outs), ("ins", self.ins)):
            printer.print_string(f" {kw}(")

            def one(v: SSAValue) -> None:
                printer.print_operand(v)
                printer.print_string(" : ")
                printer.print_attribute(v.type)

            printer.print_list(vals, one)
            printer.print_string(")")


# ---------------------------------------------------------------------------
# the body as a loop nest (shared by the default plan and the lowering)
# ---------------------------------------------------------------------------


def body_items(k: FuncOp) -> tuple[list[Operation], list[Item], list[StoreOp], list[StoreItem]]:
    """The kernel body for :mod:`mlfuse.loop_nest`: value ops and their items
    (numbered in program order), stores and theirs.

    Domains: a load or ``kernel.valid`` varies along the dims its view reads;
    a gather along those and its index's;
    a reduce along its input's dims minus its axes; a scan along its input's
    and its dim; any other op along the union of its operands'.
    """
    ops: list[Operation] = []
    items: list[Item] = []
    stores: list[StoreOp] = []
    store_items: list[StoreItem] = []
    index: dict[SSAValue, int] = {}
    rank = len(k.space_shape)
    for op in k.body.block.ops:
        if isinstance(op, StoreOp):
            v = index.get(op.value)
            if v is None:
                raise VerifyException(f"kernel.store in @{k.sym_name.data} stores a non-scalar")
            top = op.view.stack.top
            view_dims = frozenset(d for d in range(rank) if top.depends_on(d))
            stores.append(op)
            store_items.append(StoreItem(v, items[v].domain | view_dims))
            continue
        operands = tuple(index[x] for x in op.operands if x in index)
        match op:
            case LoadOp() | ValidOp():
                top = op.view.stack.top
                item = Item(frozenset(d for d in range(rank) if top.depends_on(d)), computes=False)
            case GatherOp():
                top = op.view.stack.top
                dom = frozenset(d for d in range(rank) if top.depends_on(d))
                item = Item(dom | items[operands[0]].domain, operands, computes=False)
            case ReduceOp():
                dom = items[operands[0]].domain - set(op.reduce_axes)
                item = Item(dom, operands, tuple(op.reduce_axes))
            case ScanOp():
                dom = items[operands[0]].domain | {op.scan_dim}
                item = Item(dom, operands, scan_dim=op.scan_dim)
            case _:
                dom: frozenset[int] = frozenset()
                for o in operands:
                    dom |= items[o].domain
                item = Item(dom, operands, computes=bool(operands))
        index[op.results[0]] = len(items)
        ops.append(op)
        items.append(item)
    return ops, items, stores, store_items


def default_plan_of(k: FuncOp) -> LoopPlan:
    """The plan outlining gives a kernel with this body."""
    _, items, _, stores = body_items(k)
    reduces = [(it.domain, it.reduce_dims) for it in items if it.reduce_dims is not None]
    scans = [(it.domain, it.scan_dim) for it in items if it.scan_dim is not None]
    return default_plan(len(k.space_shape), reduces, [st.dims for st in stores], scans)


def plan_problems(k: FuncOp, plan: LoopPlan) -> str | None:
    """Why ``k`` cannot run with ``plan`` (None if it can): the plan's own rules
    for the kernel's reduces and scans, and where its scans would be computed."""
    ops = list(k.body.block.ops)
    reduce_dims = [op.reduce_axes for op in ops if isinstance(op, ReduceOp)]
    scan_dims = [op.scan_dim for op in ops if isinstance(op, ScanOp)]
    why = plan.problems(len(k.space_shape), reduce_dims, k.space_shape, scan_dims)
    if why is not None or not scan_dims:
        return why
    _, items, _, stores = body_items(k)
    return scan_problems(items, stores, plan)


def written_args(k: FuncOp) -> set[int]:
    """Indices of the kernel arguments its body stores to."""
    args = list(k.body.block.args)
    return {args.index(op.buffer) for op in k.body.block.ops if isinstance(op, StoreOp)}


SCALAR_DIALECTS = (arith.Arith, math.Math)

Kernel = Dialect(
    "kernel",
    [
        FuncOp,
        LoadOp,
        GatherOp,
        ValidOp,
        SinCosLargeOp,
        ReduceOp,
        ScanOp,
        StoreOp,
        AllocOp,
        ConstantOp,
        FreeOp,
        LaunchOp,
        WindowOp,
    ],
    [PlanAttr],
)
