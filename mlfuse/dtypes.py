"""Element types: the front end's dtypes and their IR / numpy counterparts."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import Float32Type, Float64Type, IntegerType
from xdsl.ir import Attribute


@dataclass(frozen=True, eq=True)
class DType:
    name: str
    itemsize: int
    kind: str  # "f" float, "i" signed int, "b" bool
    priority: int  # for promotion: bool < ints < floats

    @property
    def np(self) -> np.dtype:
        return np.dtype(_NP_NAMES[self.name])

    @property
    def is_float(self) -> bool:
        return self.kind == "f"

    @property
    def is_int(self) -> bool:
        return self.kind == "i"

    @property
    def is_bool(self) -> bool:
        return self.kind == "b"

    def ir(self) -> Attribute:
        return _IR[self.name]()

    def __repr__(self) -> str:
        return f"dtypes.{self.name}"


bool_ = DType("bool", 1, "b", 0)
int32 = DType("int32", 4, "i", 1)
int64 = DType("int64", 8, "i", 2)
float32 = DType("float32", 4, "f", 3)
float64 = DType("float64", 8, "f", 4)

ALL = (bool_, int32, int64, float32, float64)
default_float = float32
default_int = int64  # Python ints, as in PyTorch and numpy

_NP_NAMES = {
    "bool": "bool",
    "int32": "int32",
    "int64": "int64",
    "float32": "float32",
    "float64": "float64",
}
_IR = {
    "bool": lambda: IntegerType(1),
    "int32": lambda: IntegerType(32),
    "int64": lambda: IntegerType(64),
    "float32": Float32Type,
    "float64": Float64Type,
}
_BY_NAME = {d.name: d for d in ALL}
_BY_NAME["bool_"] = bool_


def from_numpy(dt: np.dtype) -> DType:
    dt = np.dtype(dt)
    for d in ALL:
        if d.np == dt:
            return d
    raise TypeError(
        f"numpy dtype {dt} is not supported; mlfuse has {', '.join(d.name for d in ALL)}"
    )


def from_ir(t: Attribute) -> DType:
    for d in ALL:
        if d.ir() == t:
            return d
    raise TypeError(f"element type {t} has no mlfuse dtype")


def as_dtype(x) -> DType:
    """Accept a DType, a name ('float32'), a numpy dtype or a Python type."""
    if isinstance(x, DType):
        return x
    if x is None:
        raise TypeError(f"dtype must be given; mlfuse has {', '.join(d.name for d in ALL)}")
    if isinstance(x, str):
        if x in _BY_NAME:
            return _BY_NAME[x]
        raise TypeError(f"unknown dtype {x!r}; mlfuse has {', '.join(d.name for d in ALL)}")
    if x is bool:
        return bool_
    if x is int:
        return default_int
    if x is float:
        return default_float
    try:
        return from_numpy(np.dtype(x))
    except TypeError as e:
        raise TypeError(f"not a dtype: {x!r} ({e})") from None


def promote(a: DType, b: DType) -> DType:
    """Result dtype of a binary op on two tensors (the higher of the two)."""
    if a == b:
        return a
    return a if a.priority > b.priority else b


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
        return other if other.is_float else default_float
    raise TypeError(f"cannot combine a tensor with {type(v).__name__} {v!r}")
