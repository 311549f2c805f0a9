"""The exceptions the front end raises for bad arguments.

Each is a ``ValueError`` (Python's convention for a bad value) and also the
class PyTorch raises for the same mistake, so code written against either
catches it: a shape or argument that does not fit is a ``RuntimeError`` in
PyTorch, a dim out of range an ``IndexError`` (as numpy's ``AxisError``), an
unknown mode a ``NotImplementedError``; an op on a dtype it is not defined
for a ``RuntimeError`` in PyTorch and tinygrad, a ``TypeError`` in Python.
"""

from __future__ import annotations


class ArgumentError(ValueError, RuntimeError):
    """An argument that does not fit the call: shapes that do not broadcast,
    inner dims of a product that differ, a size that cannot be reshaped, an
    option out of its range: ``mlfuse.ones(2, 3) @ mlfuse.ones(2, 3)``."""


class ArgumentTypeError(ArgumentError, TypeError):
    """An argument of the wrong kind where a shape or count is expected (a
    ``TypeError`` in PyTorch, a ``ValueError`` in tinygrad):
    ``mlfuse.zeros((2, 2), 2)``."""


class DimError(ArgumentError, IndexError):
    """A dim (axis) out of range for the tensor's rank: ``x.sum(5)`` on 4 dims."""


class UnsupportedModeError(ArgumentError, NotImplementedError):
    """A mode name that does not exist: ``F.pad(x, (1, 1), mode="typo")``."""


class DTypeError(TypeError, RuntimeError):
    """An op on a dtype it is not defined for (PyTorch and tinygrad raise
    ``RuntimeError``, Python's convention is ``TypeError``): ``Tensor([1.0]) << 2``."""


class PatternError(ArgumentError, AssertionError):
    """A malformed or mismatched einops pattern (tinygrad raises ``AssertionError``,
    einops a ``RuntimeError``): ``x.rearrange("a b -> a c")``."""


class IndexTypeError(IndexError, TypeError):
    """An index of a kind that cannot index (an ``IndexError`` in PyTorch and
    numpy, a ``TypeError`` by Python's convention): ``x[1.5]``, ``x["a"]``."""


class OutOfMemoryError(RuntimeError):
    """A device has no memory left for a buffer (``mlfuse.cuda.OutOfMemoryError``,
    PyTorch's ``torch.cuda.OutOfMemoryError``)."""
