"""Element types: the front end's dtypes and their IR / numpy counterparts."""

from __future__ import annotations

import builtins
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    Signedness,
)
from xdsl.ir import Attribute


@dataclass(frozen=True, eq=True)
class DType:
    """One element type: ``mlfuse.float16.itemsize`` is 2, ``mlfuse.uint8.unsigned`` is True."""

    name: str
    itemsize: int
    kind: str  # "f" float, "i" integer (signed or unsigned), "b" bool, "c" complex
    priority: int  # rank among the dtypes of its kind, for promotion
    unsigned: bool = False

    # every graph node's key holds its dtype: hash the name (dtypes are told apart
    # by it) rather than all five fields, and compare the same object first
    def __hash__(self) -> int:
        return hash(self.name)

    def __eq__(self, other) -> bool:
        if self is other:
            return True
        if not isinstance(other, DType):
            return NotImplemented
        return (self.name, self.itemsize, self.kind, self.priority, self.unsigned) == (
            other.name,
            other.itemsize,
            other.kind,
            other.priority,
            other.unsigned,
        )

    @property
    def np(self) -> np.dtype:
        """The numpy dtype of the host storage (bfloat16: :data:`BF16_STORAGE`, its bits)."""
        return _NP[self.name]

    @property
    def host(self) -> np.dtype:
        """The numpy dtype values are read and written as (bfloat16: float32)."""
        return np.dtype(np.float32) if self.name == "bfloat16" else self.np

    @property
    def is_float(self) -> bool:
        return self.kind == "f"

    @property
    def is_int(self) -> bool:
        """Integer, signed or unsigned (not bool)."""
        return self.kind == "i"

    @property
    def is_bool(self) -> bool:
        return self.kind == "b"

    @property
    def is_floating_point(self) -> bool:
        """PyTorch's spelling of :attr:`is_float`: ``mlfuse.float16.is_floating_point``."""
        return self.kind == "f"

    @property
    def is_complex(self) -> bool:
        """complex64 or complex128: values held as a real and an imaginary part
        (see :mod:`mlfuse.complex_tensors`)."""
        return self.kind == "c"

    @property
    def to_real(self) -> DType:
        """The dtype of a complex dtype's parts (complex64: float32); a real dtype
        itself, as ``torch.dtype.to_real``."""
        return _PART.get(self.name, self)

    @property
    def to_complex(self) -> DType:
        """The complex dtype whose parts are this float dtype (float64:
        complex128; float16 and bfloat16: complex64), as ``torch.dtype.to_complex``."""
        if self.is_complex:
            return self
        if not self.is_float:
            raise TypeError(f"to_complex: {self.name} is not a floating point dtype")
        return complex128 if self.itemsize == 8 else complex64

    @property
    def is_signed(self) -> bool:
        """Whether negative values exist: ``mlfuse.int8.is_signed`` (floats too, as torch)."""
        return not self.is_bool and not self.unsigned

    @property
    def bits(self) -> int:
        return 1 if self.is_bool else 8 * self.itemsize

    @property
    def min(self):
        """The smallest value (floats: -inf), tinygrad's ``dtypes.int8.min``."""
        return min(self)

    @property
    def max(self):
        """The largest value (floats: inf), tinygrad's ``dtypes.uint8.max``."""
        return max(self)

    @property
    def is_half(self) -> bool:
        """float16 or bfloat16: stored in 16 bits, computed in float32."""
        return self.is_float and self.itemsize == 2

    def ir(self) -> Attribute:
        found = _IR_MADE.get(self.name)
        if found is None:
            if self.is_complex:
                raise TypeError(
                    f"{self.name} has no IR element type: complex tensors are computed as "
                    "pairs of real tensors (mlfuse.complex_tensors)"
                )
            found = _IR_MADE[self.name] = _IR[self.name]()
        return found

    def __repr__(self) -> str:
        return f"dtypes.{self.name}"


bool_ = DType("bool", 1, "b", 0)
uint8 = DType("uint8", 1, "i", 0, unsigned=True)
int8 = DType("int8", 1, "i", 1)
int16 = DType("int16", 2, "i", 2)
int32 = DType("int32", 4, "i", 3)
int64 = DType("int64", 8, "i", 4)
uint16 = DType("uint16", 2, "i", 2, unsigned=True)
uint32 = DType("uint32", 4, "i", 3, unsigned=True)
uint64 = DType("uint64", 8, "i", 4, unsigned=True)
float16 = DType("float16", 2, "f", 0)
bfloat16 = DType("bfloat16", 2, "f", 0)
float32 = DType("float32", 4, "f", 1)
float64 = DType("float64", 8, "f", 2)
complex64 = DType("complex64", 8, "c", 1)
complex128 = DType("complex128", 16, "c", 2)
COMPLEX = (complex64, complex128)
"""The complex dtypes; not in :data:`ALL`, which lists those kernels compute in."""
_PART = {"complex64": float32, "complex128": float64}

ALL = (
    bool_,
    uint8,
    int8,
    int16,
    int32,
    int64,
    uint16,
    uint32,
    uint64,
    float16,
    bfloat16,
    float32,
    float64,
)
default_float = float32
default_int = int64  # Python ints, as in PyTorch and numpy

BF16_STORAGE = np.dtype([("bfloat16", "<u2")])
"""numpy has no bfloat16: host buffers of bfloat16 hold its bits in this one-field
record dtype (so they are never mistaken for uint16 values, and numpy refuses
arithmetic on them); values cross to and from the host as float32."""

_NP = {
    "bool": np.dtype(np.bool_),
    "uint8": np.dtype(np.uint8),
    "int8": np.dtype(np.int8),
    "int16": np.dtype(np.int16),
    "int32": np.dtype(np.int32),
    "int64": np.dtype(np.int64),
    "uint16": np.dtype(np.uint16),
    "uint32": np.dtype(np.uint32),
    "uint64": np.dtype(np.uint64),
    "float16": np.dtype(np.float16),
    "bfloat16": BF16_STORAGE,
    "float32": np.dtype(np.float32),
    "float64": np.dtype(np.float64),
    "complex64": np.dtype(np.complex64),
    "complex128": np.dtype(np.complex128),
}
_IR = {
    "bool": lambda: IntegerType(1),
    "uint8": lambda: IntegerType(8, Signedness.UNSIGNED),
    "int8": lambda: IntegerType(8),
    "int16": lambda: IntegerType(16),
    "int32": lambda: IntegerType(32),
    "int64": lambda: IntegerType(64),
    "uint16": lambda: IntegerType(16, Signedness.UNSIGNED),
    "uint32": lambda: IntegerType(32, Signedness.UNSIGNED),
    "uint64": lambda: IntegerType(64, Signedness.UNSIGNED),
    "float16": Float16Type,
    "bfloat16": BFloat16Type,
    "float32": Float32Type,
    "float64": Float64Type,
}
_IR_MADE: dict[str, Attribute] = {}  # name -> its element type, made when first asked
_FROM_IR: dict[Attribute, DType] = {}  # element type -> dtype, filled on first use
_BY_NAME = {d.name: d for d in ALL + COMPLEX}
_BY_NAME.update(
    {
        "cfloat": complex64,
        "cdouble": complex128,
        "bool_": bool_,
        "half": float16,
        "float": float32,
        "double": float64,
        "short": int16,
        "int": int32,
        "long": int64,
        "char": int8,
        "byte": uint8,
        "ushort": uint16,  # tinygrad's C names
        "uint": uint32,
        "ulong": uint64,
    }
)
_NAMES = ", ".join(d.name for d in ALL + COMPLEX)
_ALIASES = frozenset(_BY_NAME) - {d.name for d in ALL} | {"bool", "uchar"}


def __getattr__(name: str) -> DType:
    """The aliases PyTorch and tinygrad code spells dtypes with, as attributes:
    ``dtypes.half``, ``dtypes.float``, ``dtypes.long``, ``dtypes.bool``,
    ``dtypes.uchar``... (module attributes looked up here, so the builtins
    ``bool``, ``int`` and ``float`` keep their meaning inside this module)."""
    if name == "uchar":
        return uint8
    if name in _ALIASES:
        return _BY_NAME[name]
    raise AttributeError(f"module 'mlfuse.dtypes' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _ALIASES)


floats = (float16, bfloat16, float32, float64)
ints = (uint8, int8, int16, int32, int64, uint16, uint32, uint64)
uints = (uint8, uint16, uint32, uint64)
sints = (int8, int16, int32, int64)


def is_float(dt) -> bool:
    """tinygrad's spelling of ``dt.is_float``: ``dtypes.is_float(dtypes.half)``."""
    return as_dtype(dt).is_float


def is_int(dt) -> bool:
    """Integer dtype, signed or unsigned (not bool): ``dtypes.is_int(dtypes.uint8)``."""
    return as_dtype(dt).is_int


def is_unsigned(dt) -> bool:
    return as_dtype(dt).unsigned


def is_bool(dt) -> bool:
    return as_dtype(dt).is_bool


def min(dt):  # noqa: A001 - tinygrad's name
    """The smallest value of ``dt``: ``dtypes.min(dtypes.int8)`` is -128, floats -inf."""
    dt = as_dtype(dt)
    if dt.is_bool:
        return False
    if dt.is_float:
        return -np.inf
    return int(np.iinfo(dt.np).min)


def max(dt):  # noqa: A001 - tinygrad's name
    """The largest value of ``dt``: ``dtypes.max(dtypes.uint8)`` is 255, floats inf."""
    dt = as_dtype(dt)
    if dt.is_bool:
        return True
    if dt.is_float:
        return np.inf
    return int(np.iinfo(dt.np).max)


def from_py(x) -> DType:
    """The dtype tinygrad gives a Python value: ``bool``, the default int or the
    default float (complex: complex64), the highest over a list or tuple:
    ``dtypes.from_py([1, 2.5])`` is float32."""
    if isinstance(x, (list, tuple)):
        if not x:
            return default_float
        kinds = [from_py(v) for v in x]
        out = kinds[0]
        for k in kinds[1:]:
            out = promote(out, k)
        return out
    if isinstance(x, bool):
        return bool_
    if isinstance(x, int):
        return default_int
    if isinstance(x, float):
        return default_float
    if isinstance(x, complex):
        return default_float.to_complex
    raise TypeError(f"from_py: no dtype for {type(x).__name__} {x!r}")


def finfo(dt) -> tuple[int, int]:
    """``(exponent bits, mantissa bits)`` of a float dtype, tinygrad's:
    ``dtypes.finfo(dtypes.float32)`` is ``(8, 23)``."""
    dt = as_dtype(dt)
    bits = {"float16": (5, 10), "bfloat16": (8, 7), "float32": (8, 23), "float64": (11, 52)}
    if dt.name not in bits:
        raise TypeError(f"finfo: {dt.name} is not a float dtype")
    return bits[dt.name]


NAMES = frozenset(_BY_NAME)
"""Every name :func:`as_dtype` accepts as a string (PyTorch's aliases included)."""


# -- host conversions of bfloat16 ------------------------------------------------
def bf16_bits(values) -> np.ndarray:
    """float32 values -> bfloat16 bits (uint16), rounded to nearest even; NaN stays a
    quiet NaN of the same sign: ``bf16_bits(np.float32(1.0))`` is ``0x3F80``."""
    x = np.array(values, dtype=np.float32)  # a copy, any shape (0-d too)
    u = x.view(np.uint32).astype(np.uint64)
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    nan = np.isnan(x)
    out = np.where(nan, (u >> 16) | 0x40, rounded)
    return out.astype(np.uint16)


def bf16_values(bits) -> np.ndarray:
    """bfloat16 bits (uint16) -> their float32 values (exact)."""
    b = np.asarray(bits, dtype=np.uint16)
    return (b.astype(np.uint32) << 16).view(np.float32)


def round_bf16(values) -> np.ndarray:
    """float32 values rounded to the nearest bfloat16, as float32: the reference the
    kernels' bfloat16 results match."""
    return bf16_values(bf16_bits(values))


def to_storage(values, dt: DType) -> np.ndarray:
    """Host values -> a host array of ``dt``'s storage (bfloat16: rounded from float32)."""
    if dt == bfloat16:
        arr = np.asarray(values)
        if arr.dtype == BF16_STORAGE:
            return arr
        return bf16_bits(arr.astype(np.float32)).view(BF16_STORAGE)
    if dt.is_float:  # a value past the dtype's range rounds to inf, as PyTorch's
        with np.errstate(over="ignore"):
            return np.asarray(values, dtype=dt.np)
    return np.asarray(values, dtype=dt.np)


def from_storage(arr: np.ndarray, dt: DType) -> np.ndarray:
    """A host array of ``dt``'s storage -> its values (bfloat16: float32)."""
    if dt == bfloat16:
        return bf16_values(arr.view(np.uint16))
    return arr


def from_numpy(dt: np.dtype) -> DType:
    """The dtype of host arrays of numpy dtype ``dt``: ``from_numpy(np.float16)`` is
    float16, ``from_numpy(np.uint32)`` uint32."""
    dt = np.dtype(dt)
    for d in ALL:
        if d.np == dt:
            return d
    raise TypeError(f"numpy dtype {dt} is not supported; mlfuse has {_NAMES}")


def from_ir(t: Attribute) -> DType:
    """The dtype of an IR element type: ``from_ir(IntegerType(8, Signedness.UNSIGNED))``
    is uint8."""
    if not _FROM_IR:
        _FROM_IR.update({d.ir(): d for d in ALL})
    found = _FROM_IR.get(t)
    if found is not None:
        return found
    raise TypeError(f"element type {t} has no mlfuse dtype (mlfuse has {_NAMES})")


def as_dtype(x) -> DType:
    """Accept a DType, a name ('float16', PyTorch's 'half', 'long'...), a numpy
    dtype or a Python type: ``as_dtype("bfloat16")``."""
    if isinstance(x, DType):
        return x
    if x is None:
        raise TypeError(f"dtype must be given; mlfuse has {_NAMES}")
    if isinstance(x, str):
        name = x.removeprefix("torch.")
        if name in _BY_NAME:
            return _BY_NAME[name]
        raise TypeError(f"unknown dtype {x!r}; mlfuse has {_NAMES}")
    if x is bool:
        return bool_
    if x is int:
        return default_int
    if x is float:
        return default_float
    if x is complex:
        return default_float.to_complex
    if type(x).__module__ == "torch" and type(x).__name__ == "dtype":
        return as_dtype(str(x))  # torch.float16 -> "torch.float16"
    try:
        npdt = np.dtype(x)
        if npdt.kind == "c":
            return _BY_NAME[npdt.name] if npdt.name in _BY_NAME else complex128
        return from_numpy(npdt)
    except TypeError as e:
        raise TypeError(f"not a dtype: {x!r} ({e})") from None


def promote(a: DType, b: DType) -> DType:
    """Result dtype of a binary op on tensors of dtypes ``a`` and ``b``, PyTorch's
    table (``torch.promote_types``): bool < integers < floats; an unsigned integer
    with a signed one gives the smallest signed one that holds both (uint8 + int8 ->
    int16, uint32 + int16 -> int64), and uint64 with a signed integer the default
    float, as tinygrad and numpy do (PyTorch refuses to promote uint16/32/64); any
    float wins over any integer (int64 + float16 -> float16); float16 with
    bfloat16 gives float32. Unlike numpy, int32 + float32 is float32."""
    if a == b:
        return a
    if a.is_complex or b.is_complex:  # complex wins; its parts promote as floats
        pa, pb = a.to_real, b.to_real
        part = promote(pa if pa.is_float else float32, pb if pb.is_float else float32)
        return part.to_complex
    if a.kind != b.kind:
        order = "bif"
        return a if order.index(a.kind) > order.index(b.kind) else b
    if a.is_float:
        if a.itemsize == b.itemsize:  # float16 and bfloat16
            return float32
        return a if a.itemsize > b.itemsize else b
    if a.unsigned != b.unsigned:  # an unsigned and a signed integer
        u, s = (a, b) if a.unsigned else (b, a)
        if s.itemsize > u.itemsize:
            return s
        wider = [d for d in sints if d.itemsize > u.itemsize]
        return wider[0] if wider else default_float
    return a if a.itemsize > b.itemsize else b


def promote_types(a, b) -> DType:
    """:func:`promote` of two dtypes given in any form :func:`as_dtype` accepts:
    ``mlfuse.promote_types(mlfuse.uint8, mlfuse.int8)`` is int16."""
    return promote(as_dtype(a), as_dtype(b))


def result_type(*operands) -> DType:
    """The dtype of an elementwise op on ``operands`` (tensors, dtypes, Python
    scalars), as ``torch.result_type``: tensors (and dtypes) promote with
    :func:`promote`; Python scalars are weakly typed and only raise the kind
    (:func:`scalar_dtype`): ``result_type(mlfuse.uint8, 3)`` is uint8,
    ``result_type(mlfuse.int16, 2.5)`` is float32."""
    if not operands:
        raise TypeError("result_type needs at least one operand")
    typed: DType | None = None
    scalars = []
    for x in operands:
        dt = getattr(x, "dtype", None) if not isinstance(x, DType) else x
        if isinstance(dt, DType):
            typed = dt if typed is None else promote(typed, dt)
        elif isinstance(x, (bool, int, float, complex)):
            scalars.append(x)
        else:
            typed = as_dtype(x) if typed is None else promote(typed, as_dtype(x))
    if typed is None:  # scalars only: the kind of the highest one, default sizes
        kinds = {bool: 0, int: 1, float: 2, complex: 3}
        top = builtins.max(scalars, key=lambda v: kinds[type(v)] if type(v) in kinds else 2)
        typed = as_dtype(type(top))
        return typed
    for v in scalars:
        typed = scalar_dtype(v, typed)
    return typed


def scalar_dtype(v, other: DType) -> DType:
    """dtype of a Python scalar combined with a tensor of dtype ``other``.

    Python scalars are weakly typed, as in torch and tinygrad: they take the
    tensor's dtype unless their kind is higher (a float scalar on an int tensor
    gives the default float).
    """
    if isinstance(v, bool):
        return other
    if isinstance(v, int):
        return other if not other.is_bool else default_int
    if isinstance(v, float):
        return other if other.is_float or other.is_complex else default_float
    if isinstance(v, complex):
        return (
            other if other.is_complex else (other if other.is_float else default_float).to_complex
        )
    raise TypeError(f"cannot combine a tensor with {type(v).__name__} {v!r}")
