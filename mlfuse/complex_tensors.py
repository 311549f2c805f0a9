"""Complex tensors: complex64 and complex128 as pairs of real tensors.

A :class:`ComplexTensor` holds its real and imaginary parts as two real lazy
tensors of one shape, dtype (float32 for complex64, float64 for complex128)
and device. Every complex op is written with real ops on the parts, so the
scheduler fuses them like any other elementwise work (``(z * w).real`` is
one kernel), the parts' autograd gives the gradients (PyTorch's convention:
a real loss's gradient is ``dL/dre + 1j * dL/dim``), and both targets run
them with no complex type in the IR.

What PyTorch code uses complex numbers for is here: rotary embeddings
(``view_as_complex``, ``polar``, ``* freqs``, ``view_as_real``), spectra
(:mod:`mlfuse.fft`), complex arithmetic and the elementwise functions of a
complex variable, movement, sums and products of matrices. An op PyTorch has
that complex tensors lack here raises :class:`~mlfuse.errors.DTypeError`
naming it, never a wrong answer.

Differences from PyTorch: ``view_as_real``/``view_as_complex``/``.real``/``.imag``
give new lazy tensors, not views sharing memory (writing into one does not
change the other); in-place ops rebind the complex tensor they are called on.
"""

from __future__ import annotations

import copy
import math
import sys
import warnings

import numpy as np

from mlfuse import dtypes, layouts
from mlfuse.autograd.function import Function
from mlfuse.dtypes import DType
from mlfuse.errors import ArgumentError, DTypeError
from mlfuse.tensor import Tensor, _torch_spellings

_MOVEMENT = (
    # ops that move or select elements: done to both parts alike
    "reshape", "view", "permute", "transpose", "swapaxes", "swapdims", "movedim",
    "moveaxis", "unsqueeze", "squeeze", "flatten", "unflatten", "expand",
    "broadcast_to", "flip", "fliplr", "flipud", "roll", "repeat", "tile", "narrow",
    "diagonal", "diag", "diag_embed", "tril", "triu", "t", "rot90", "repeat_interleave",
    "index_select", "gather", "take", "take_along_dim", "contiguous", "clone",
    "detach", "__getitem__", "unfold", "masked_select", "select",
    # linear reductions: on each part
    "sum", "mean", "cumsum", "trace", "diff", "nansum",
)  # fmt: skip
_SPLITS = ("split", "chunk", "unbind", "tensor_split", "split_with_sizes")


def _caller() -> str:
    """The public function a complex tensor reached without support for it."""
    f = sys._getframe(2)
    while f is not None and f.f_code.co_name.startswith("_"):
        f = f.f_back
    return f.f_code.co_name if f is not None else "this operation"


class ComplexTensor(Tensor):
    """A complex64 or complex128 tensor: ``mlfuse.complex(re, im)``,
    ``mlfuse.polar(r, theta)``, ``mlfuse.view_as_complex(x)``,
    ``mlfuse.tensor([1 + 2j, 3j])``, ``mlfuse.randn(4, dtype=mlfuse.complex64)``.
    ``z.real`` and ``z.imag`` are its parts (real tensors)."""

    __slots__ = ("_re", "_im")

    def __init__(self, re: Tensor, im: Tensor | None = None, *args, **kwargs):
        try:  # made by ``Tensor(data)`` (Tensor.__new__), which calls __init__ again
            object.__getattribute__(self, "_re")
            return
        except AttributeError:
            pass
        if not (isinstance(re, Tensor) and isinstance(im, Tensor)):
            raise TypeError("ComplexTensor(re, im) takes two real tensors")
        if isinstance(re, ComplexTensor) or isinstance(im, ComplexTensor):
            raise DTypeError("ComplexTensor(re, im): the parts must be real tensors")
        if re.dtype != im.dtype or not re.dtype.is_float:
            raise DTypeError(
                "the real and imaginary parts must be float tensors of one dtype, got "
                f"{re.dtype.name} and {im.dtype.name}"
            )
        if re.dtype.is_half:  # PyTorch's complex32 is not supported: parts in float32
            re, im = re.float(), im.float()
        if re.shape != im.shape:
            shape = _broadcast_shape(re.shape, im.shape)
            re, im = re.expand(shape), im.expand(shape)
        object.__setattr__(self, "_re", re)
        object.__setattr__(self, "_im", im)

    def __del__(self) -> None:  # no graph node of its own: the parts hold theirs
        pass

    # -- parts, shape, dtype -------------------------------------------------------
    @property
    def node(self):
        """Complex tensors have no graph node (their parts do): a real-only op
        that reaches for it gets an error naming that op."""
        raise DTypeError(f"{_caller()} does not support complex tensors ({self.dtype.name})")

    _node = node

    @property
    def real(self) -> Tensor:
        """The real part, a real tensor: ``z.real`` (an in-place op on it, or
        assigning ``z.real = x``, changes ``z``)."""
        return self._re

    @real.setter
    def real(self, value) -> None:
        self._re.assign(_part_value(value, self._re))

    @property
    def imag(self) -> Tensor:
        """The imaginary part, a real tensor: ``z.imag`` (an in-place op on it, or
        assigning ``z.imag = x``, changes ``z``)."""
        return self._im

    @imag.setter
    def imag(self, value) -> None:
        self._im.assign(_part_value(value, self._im))

    @property
    def shape(self):
        """The dims: ``mlfuse.complex(a, b).shape`` is ``a.shape``."""
        return self._re.shape

    @property
    def dtype(self) -> DType:
        """complex64 (float32 parts) or complex128 (float64 parts)."""
        return self._re.dtype.to_complex

    @property
    def device(self) -> str:
        """The device of both parts."""
        return self._re.device

    def is_complex(self) -> bool:
        """True: ``z.is_complex()``."""
        return True

    def is_floating_point(self) -> bool:
        """False, as PyTorch's for complex tensors."""
        return False

    def isreal(self) -> Tensor:
        """Where the imaginary part is zero: ``z.isreal()``."""
        return self._im == 0

    def is_conj(self) -> bool:
        """False: conjugates are computed, not flagged."""
        return False

    def element_size(self) -> int:
        """Bytes per element: 8 for complex64, 16 for complex128."""
        return self.dtype.itemsize

    # -- values ----------------------------------------------------------------
    def realize(self, *others: Tensor) -> ComplexTensor:
        """Compute both parts (and ``others``) in one schedule."""
        Tensor.realize(self._re, self._im, *others)
        return self

    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The values as a numpy complex64/complex128 array (``force`` as :meth:`Tensor.numpy`)."""
        self.realize()
        out = np.empty(self.shape, self.dtype.np)
        out.real, out.imag = self._re.numpy(), self._im.numpy()
        return out

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        arr = self.numpy()
        return arr if dtype is None else arr.astype(dtype)

    def item(self) -> complex:
        """The value of a one-element tensor as a Python complex."""
        if self.numel() != 1:
            raise ArgumentError(f"item() needs exactly one element, the tensor has {self.numel()}")
        return complex(self.numpy().reshape(()).item())

    def tolist(self):
        """The values as nested lists of Python complex numbers."""
        return self.numpy().tolist()

    def __repr__(self) -> str:
        parts = (self._re, self._im)
        if not all(p.node.realized for p in parts):
            return f"<Tensor {self.shape} {self.dtype.name} lazy>"
        body = np.array2string(
            self.numpy(), separator=", ", threshold=200, edgeitems=3, prefix="tensor("
        )
        dev = f", device={self.device!r}" if self.device != "cpu" else ""
        return f"tensor({body}, dtype={self.dtype.name}{dev})"

    __str__ = __repr__

    def __bool__(self) -> bool:
        if self.numel() != 1:
            raise TypeError(
                f"the truth value of a tensor of {self.numel()} elements is ambiguous; "
                "use .any() or .all()"
            )
        return bool(self.item())

    def __reduce__(self):
        return (_unpickle, (self.numpy(), self.device, self.requires_grad))

    def __deepcopy__(self, memo):
        out = ComplexTensor(copy.deepcopy(self._re, memo), copy.deepcopy(self._im, memo))
        memo[id(self)] = out
        return out

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self.shape[0]))

    # -- dtype and device ------------------------------------------------------
    def to(self, *args, device=None, dtype=None, non_blocking=False, copy=False, **kw):
        """On a device and/or of a dtype: ``z.to("cuda")``, ``z.to(mlfuse.complex128)``;
        a real dtype keeps the real part (with PyTorch's warning)."""
        for a in args:
            if isinstance(a, Tensor):
                device, dtype = device or a.device, dtype or a.dtype
            elif isinstance(a, bool):
                continue
            elif isinstance(a, str) and a.removeprefix("torch.") not in dtypes.NAMES:
                device = a
            else:
                dtype = a
        out = self.cast(dtype) if dtype is not None else self
        if device is not None:
            if not isinstance(out, ComplexTensor):
                return out.to(device)
            out = ComplexTensor(out._re.to(device), out._im.to(device))
        return out.clone() if copy and out is self else out

    def cast(self, dtype) -> Tensor:
        """A complex dtype changes the parts' precision; a real one keeps the real
        part (PyTorch warns that the imaginary part is discarded)."""
        dt = dtypes.as_dtype(dtype)
        if dt.is_complex:
            part = dt.to_real
            if part == self._re.dtype:
                return self
            return ComplexTensor(self._re.cast(part), self._im.cast(part))
        if dt.is_bool:  # non-zero: either part
            return (self._re != 0) | (self._im != 0)
        warnings.warn(
            "Casting complex values to real discards the imaginary part", UserWarning, stacklevel=2
        )
        return self._re.cast(dt)

    def type(self, dtype=None, non_blocking: bool = False):
        """The dtype's name without an argument, else :meth:`cast`."""
        return self.dtype.name if dtype is None else self.cast(dtype)

    def cfloat(self, memory_format=None) -> ComplexTensor:
        """As complex64: ``z.cfloat()``."""
        layouts.check_memory_format(memory_format, "cfloat", self.ndim)
        return self.cast(dtypes.complex64)

    def cdouble(self, memory_format=None) -> ComplexTensor:
        """As complex128: ``z.cdouble()``."""
        layouts.check_memory_format(memory_format, "cdouble", self.ndim)
        return self.cast(dtypes.complex128)

    def cpu(self) -> ComplexTensor:
        """On the CPU."""
        return self.to("cpu")

    def cuda(self, device=None) -> ComplexTensor:
        """On the GPU."""
        return self.to(
            "cuda" if device is None else f"cuda:{device}" if isinstance(device, int) else device
        )

    def type_as(self, other: Tensor) -> Tensor:
        """Cast to ``other``'s dtype."""
        return self.cast(other.dtype)

    # -- autograd --------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        """Whether gradients flow to either part."""
        return self._re.requires_grad or self._im.requires_grad

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        self.requires_grad_(flag)

    def requires_grad_(self, requires_grad: bool = True) -> ComplexTensor:
        """Make both parts leaves that collect gradients."""
        self._re.requires_grad_(requires_grad)
        self._im.requires_grad_(requires_grad)
        return self

    @property
    def is_leaf(self) -> bool:
        return self._re.is_leaf and self._im.is_leaf

    @property
    def grad(self) -> ComplexTensor | None:
        """``dL/dre + 1j * dL/dim`` (PyTorch's convention), None before a backward."""
        gr, gi = self._re.grad, self._im.grad
        if gr is None and gi is None:
            return None
        return ComplexTensor(
            gr if gr is not None else self._re.zeros_like(),
            gi if gi is not None else self._im.zeros_like(),
        )

    @grad.setter
    def grad(self, g) -> None:
        if g is None:
            self._re.grad = self._im.grad = None
            return
        re, im = parts(g)
        self._re.grad = re.expand(self.shape)
        self._im.grad = (im if im is not None else re.zeros_like()).expand(self.shape)

    @property
    def grad_fn(self):
        return self._re.grad_fn or self._im.grad_fn

    def retain_grad(self) -> ComplexTensor:
        """Keep this computed tensor's gradient in ``.grad`` on backward."""
        for p in (self._re, self._im):
            if p.requires_grad:
                p.retain_grad()
        return self

    def backward(self, gradient=None, retain_graph=False, create_graph=False, inputs=None):
        """Backward from a complex tensor needs ``gradient`` (PyTorch: a complex
        output's gradient is never implied)."""
        if gradient is None:
            raise RuntimeError("grad can be implicitly created only for real scalar outputs")
        gr, gi = parts(gradient)
        loss = (self._re * gr).sum()
        if gi is not None:
            loss = loss + (self._im * gi).sum()
        loss.backward(retain_graph=retain_graph, create_graph=create_graph, inputs=inputs)

    def detach_(self) -> ComplexTensor:
        self._rebind(self._re.detach(), self._im.detach())
        return self

    # -- arithmetic ------------------------------------------------------------
    def __add__(self, other):
        a, b = self._pair(other)
        return _make(a[0] + b[0], a[1] if b[1] is None else a[1] + b[1])

    def __radd__(self, other):
        return self.__add__(other)

    def __sub__(self, other):
        a, b = self._pair(other)
        return _make(a[0] - b[0], a[1] if b[1] is None else a[1] - b[1])

    def __rsub__(self, other):
        return (-self).__add__(other)

    def __mul__(self, other):
        (a, b), (c, d) = self._pair(other)
        if d is None:
            return _make(a * c, b * c)
        return _make(a * c - b * d, a * d + b * c)

    def __rmul__(self, other):
        return self.__mul__(other)

    def __truediv__(self, other):
        (a, b), (c, d) = self._pair(other)
        if d is None:
            return _make(a / c, b / c)
        return _make(*_divide(a, b, c, d))

    def __rtruediv__(self, other):
        return _lift(other, self).__truediv__(self)

    def __neg__(self):
        return ComplexTensor(-self._re, -self._im)

    def __pos__(self):
        return self

    def __pow__(self, other):
        if isinstance(other, (int, np.integer)) and not isinstance(other, bool) and 0 <= other <= 8:
            out = ComplexTensor(self._re.ones_like(), self._re.zeros_like())
            sq, e = self, int(other)
            while e:
                if e & 1:
                    out = out * sq
                e >>= 1
                if e:
                    sq = sq * sq
            return out
        if isinstance(other, (int, float, np.number)) and float(other) == -1:
            return self.reciprocal()
        if isinstance(other, (int, np.integer)) and not isinstance(other, bool) and -8 <= other < 0:
            return (self ** (-int(other))).reciprocal()
        w = _lift(other, self)
        out = (w * self.log()).exp()
        # 0 ** w: 0 where Re(w) > 0 and 1 where w is 0 (exp(w * log 0) is NaN there)
        zero = (self._re == 0) & (self._im == 0)
        w_zero = (w._re == 0) & (w._im == 0)
        re = w_zero.where(1.0, (w._re > 0).where(0.0, out._re))
        im = w_zero.where(0.0, (w._re > 0).where(0.0, out._im))
        return _make(zero.where(re, out._re), zero.where(im, out._im))

    def __rpow__(self, other):
        return _lift(other, self).__pow__(self)

    def __matmul__(self, other):
        return _matmul(self, other)

    def __rmatmul__(self, other):
        return _matmul(other, self)

    def __eq__(self, other):
        (a, b), (c, d) = self._pair(other)
        return (a == c) & (b == (d if d is not None else 0))

    def __ne__(self, other):
        return (self == other).logical_not()

    __hash__ = Tensor.__hash__

    def __iadd__(self, other):
        return self._rebind_from(self + other)

    def __isub__(self, other):
        return self._rebind_from(self - other)

    def __imul__(self, other):
        return self._rebind_from(self * other)

    def __itruediv__(self, other):
        return self._rebind_from(self / other)

    def _rebind(self, re: Tensor, im: Tensor) -> None:
        object.__setattr__(self, "_re", re)
        object.__setattr__(self, "_im", im)

    def _rebind_from(self, z: ComplexTensor) -> ComplexTensor:
        if z.shape != self.shape:
            raise ArgumentError(f"in-place result of shape {z.shape} for a tensor of {self.shape}")
        z = z.cast(self.dtype)
        self._rebind(z._re, z._im)
        return self

    def add(self, other, alpha=1):
        """``self + alpha * other``."""
        return self + (other * alpha if alpha != 1 else other)

    def sub(self, other, alpha=1):
        """``self - alpha * other``."""
        return self - (other * alpha if alpha != 1 else other)

    def mul(self, other):
        """``self * other``."""
        return self * other

    multiply = mul

    def div(self, other, rounding_mode=None):
        """``self / other`` (complex division has no rounding modes)."""
        if rounding_mode is not None:
            raise DTypeError(f"div: rounding_mode={rounding_mode!r} is not defined for complex")
        return self / other

    divide = true_divide = div

    def neg(self):
        """``-self``."""
        return -self

    negative = neg

    def pow(self, exponent):
        """``self ** exponent`` (principal branch)."""
        return self**exponent

    def matmul(self, other):
        """The matrix product, as ``@``."""
        return _matmul(self, other)

    mm = bmm = matmul

    def eq(self, other) -> Tensor:
        """Where both parts are equal."""
        return self == other

    def ne(self, other) -> Tensor:
        """Where either part differs."""
        return self != other

    def add_(self, other, alpha=1):
        return self._rebind_from(self.add(other, alpha))

    def sub_(self, other, alpha=1):
        return self._rebind_from(self.sub(other, alpha))

    def mul_(self, other):
        return self._rebind_from(self * other)

    def div_(self, other):
        return self._rebind_from(self / other)

    def copy_(self, src, non_blocking: bool = False):
        """Take ``src``'s values (broadcast to this shape)."""
        re, im = parts(src)
        re = re.expand(self.shape).cast(self._re.dtype)
        im = self._re.zeros_like() if im is None else im.expand(self.shape).cast(self._re.dtype)
        self._rebind(re, im)
        return self

    def assign(self, x) -> ComplexTensor:
        """Take ``x``'s values in place (shapes must match; cast to this dtype):
        what ``load_state_dict`` does to a complex buffer."""
        re, im = parts(x)
        if re.shape != self.shape:
            raise ArgumentError(f"assign: shape {re.shape} does not match {self.shape}")
        return self.copy_(ComplexTensor(re, im if im is not None else re.zeros_like()))

    def _detached(self) -> ComplexTensor:
        return self.detach()

    def _become(self, z: ComplexTensor) -> None:
        """Hold ``z``'s parts (a module's ``to()`` swapping a buffer's value in place)."""
        self._rebind(z._re.detach(), z._im.detach())

    def zero_(self):
        self._rebind(self._re.zeros_like(), self._im.zeros_like())
        return self

    def fill_(self, value):
        v = complex(value)
        self._rebind(self._re.full_like(v.real), self._im.full_like(v.imag))
        return self

    # -- functions of a complex variable ----------------------------------------
    def conj(self) -> ComplexTensor:
        """The complex conjugate: ``z.conj()``."""
        return ComplexTensor(self._re, -self._im)

    conj_physical = conj

    def resolve_conj(self) -> ComplexTensor:
        """Itself (conjugates are never lazy flags here)."""
        return self

    resolve_neg = resolve_conj

    def abs(self) -> Tensor:
        """The modulus ``|z|`` (a real tensor), without overflow for large parts."""
        return self._re.hypot(self._im)

    absolute = abs

    def __abs__(self):
        return self.abs()

    def angle(self) -> Tensor:
        """The argument in (-pi, pi] (a real tensor): ``z.angle()``."""
        return self._im.atan2(self._re)

    def sgn(self) -> ComplexTensor:
        """``z / |z|``, 0 where z is 0."""
        r = self.abs()
        zero = r == 0
        safe = zero.where(1.0, r)
        return ComplexTensor(zero.where(0.0, self._re / safe), zero.where(0.0, self._im / safe))

    def exp(self) -> ComplexTensor:
        """``e**z``."""
        m = self._re.exp()
        return _make(m * self._im.cos(), m * self._im.sin())

    def log(self) -> ComplexTensor:
        """The principal logarithm ``log|z| + 1j * angle(z)``."""
        return _make(self.abs().log(), self.angle())

    def sqrt(self) -> ComplexTensor:
        """The principal square root (non-negative real part), computed without
        cancellation: ``z.sqrt()``."""
        if self.requires_grad:  # the derivative 1 / (2 sqrt z), also on the branch cut
            return _holomorphic(self, _sqrt, lambda z: (2 * z.sqrt()).reciprocal())
        return _sqrt(self)

    def rsqrt(self) -> ComplexTensor:
        """``1 / sqrt(z)``."""
        return self.sqrt().reciprocal()

    def reciprocal(self) -> ComplexTensor:
        """``1 / z``."""
        re, im = _divide(self._re.ones_like(), self._re.zeros_like(), self._re, self._im)
        return _make(re, im)

    def square(self) -> ComplexTensor:
        """``z * z``."""
        return self * self

    def sin(self) -> ComplexTensor:
        """``sin z = sin a cosh b + 1j cos a sinh b``."""
        a, b = self._re, self._im
        return _make(a.sin() * b.cosh(), a.cos() * b.sinh())

    def cos(self) -> ComplexTensor:
        """``cos z = cos a cosh b - 1j sin a sinh b``."""
        a, b = self._re, self._im
        return _make(a.cos() * b.cosh(), -(a.sin() * b.sinh()))

    def tan(self) -> ComplexTensor:
        """``sin z / cos z``."""
        return self.sin() / self.cos()

    def sinh(self) -> ComplexTensor:
        """``sinh z = sinh a cos b + 1j cosh a sin b``."""
        a, b = self._re, self._im
        return _make(a.sinh() * b.cos(), a.cosh() * b.sin())

    def cosh(self) -> ComplexTensor:
        """``cosh z = cosh a cos b + 1j sinh a sin b``."""
        a, b = self._re, self._im
        return _make(a.cosh() * b.cos(), a.sinh() * b.sin())

    def tanh(self) -> ComplexTensor:
        """``sinh z / cosh z``."""
        return self.sinh() / self.cosh()

    def sigmoid(self) -> ComplexTensor:
        """``1 / (1 + e**-z)``."""
        return (1 + (-self).exp()).reciprocal()

    def isnan(self) -> Tensor:
        """Where either part is NaN."""
        return self._re.isnan() | self._im.isnan()

    def isinf(self) -> Tensor:
        """Where either part is infinite."""
        return self._re.isinf() | self._im.isinf()

    def isfinite(self) -> Tensor:
        """Where both parts are finite."""
        return self._re.isfinite() & self._im.isfinite()

    def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> Tensor:
        """``|self - other| <= atol + rtol * |other|`` (NumPy's and PyTorch's rule)."""
        w = _lift(other, self)
        close = (self - w).abs() <= atol + rtol * w.abs()
        same = self == w
        if equal_nan:
            same = same | (self.isnan() & w.isnan())
        return close | same

    def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
        """Whether every element :meth:`isclose`."""
        return bool(self.isclose(other, rtol, atol, equal_nan).all().item())

    def where(self, a, b):
        """A complex condition is an error (PyTorch's too): the condition must be real."""
        raise DTypeError("where: the condition must be a real tensor, got complex")

    def prod(self, dim=None, keepdim: bool = False):
        """The product of the elements (over ``dim``)."""
        if dim is None:
            x, d = self.reshape(-1), 0
        else:
            if not -max(self.ndim, 1) <= dim < max(self.ndim, 1):
                raise ArgumentError(f"prod: dim {dim} is out of range for {self.ndim} dims")
            x, d = (self.reshape(1), 0) if self.ndim == 0 else (self, dim % self.ndim)
        x = x.movedim(d, -1)
        if x.shape[-1] == 0:
            x = full(x.shape[:-1] + (1,), 1, self.dtype, self.device)
        while x.shape[-1] > 1:  # pairwise products: log2(n) rounds
            if x.shape[-1] % 2:
                one = full(x.shape[:-1] + (1,), 1, self.dtype, self.device)
                x = cat([x, one], -1)
            pairs = x.reshape(*x.shape[:-1], x.shape[-1] // 2, 2)
            x = pairs[..., 0] * pairs[..., 1]
        out = x.squeeze(-1)
        if dim is not None and keepdim:
            out = out.unsqueeze(d)
        return out if dim is not None or self.ndim else out.reshape(())

    def pad(self, padding, value=0, mode: str = "constant") -> ComplexTensor:
        """:meth:`Tensor.pad` of both parts; a constant ``value`` may be complex."""
        v = complex(value)
        return ComplexTensor(
            self._re.pad(padding, v.real, mode), self._im.pad(padding, v.imag, mode)
        )

    @_torch_spellings
    def var(self, axis=None, keepdim=False, correction=1) -> Tensor:
        """The variance of the values, ``mean(|z - mean(z)|**2)`` with Bessel's
        ``correction``: the real tensor ``re.var() + im.var()``, as PyTorch's."""
        return self._re.var(axis, keepdim, correction) + self._im.var(axis, keepdim, correction)

    @_torch_spellings
    def std(self, axis=None, keepdim=False, correction=1) -> Tensor:
        """The square root of :meth:`var` (a real tensor)."""
        return self.var(axis, keepdim, correction).sqrt()

    def norm(self, p=2, dim=None, keepdim: bool = False):
        """The vector norm of the moduli (a real tensor)."""
        return self.abs().norm(p, dim, keepdim)

    def vdot(self, other) -> ComplexTensor:
        """``sum(conj(self) * other)`` of two vectors."""
        return (self.conj() * other).sum()

    def dot(self, other) -> ComplexTensor:
        """``sum(self * other)`` of two vectors."""
        return (self * other).sum()

    def outer(self, other) -> ComplexTensor:
        """The outer product of two vectors."""
        return self.unsqueeze(1) * _lift(other, self).unsqueeze(0)

    @property
    def T(self) -> ComplexTensor:  # noqa: N802 - PyTorch's name
        return self.permute(*reversed(range(self.ndim)))

    @property
    def mT(self) -> ComplexTensor:  # noqa: N802 - PyTorch's name
        return self.transpose(-2, -1)

    @property
    def H(self) -> ComplexTensor:  # noqa: N802 - PyTorch's name
        """The conjugate transpose of a matrix."""
        return self.T.conj()

    @property
    def mH(self) -> ComplexTensor:  # noqa: N802 - PyTorch's name
        """The conjugate transpose of the last two dims."""
        return self.mT.conj()

    def adjoint(self) -> ComplexTensor:
        """The conjugate transpose of the last two dims: ``z.adjoint()``."""
        return self.mH

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
        """Zeros of this dtype and device."""
        from mlfuse import namespace

        return namespace.zeros(*size, dtype=dtype or self.dtype, device=device or self.device)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
        """Ones of this dtype and device."""
        from mlfuse import namespace

        return namespace.ones(*size, dtype=dtype or self.dtype, device=device or self.device)

    def zeros_like(self, dtype=None, device=None):
        """Zeros of this shape, dtype and device."""
        return full(self.shape, 0, dtype or self.dtype, device or self.device)

    def ones_like(self, dtype=None, device=None):
        """Ones of this shape, dtype and device."""
        return full(self.shape, 1, dtype or self.dtype, device or self.device)

    def full_like(self, fill_value, dtype=None, device=None):
        """``fill_value`` in this shape, dtype and device."""
        return full(self.shape, fill_value, dtype or self.dtype, device or self.device)

    def masked_fill(self, mask, value) -> ComplexTensor:
        """``value`` where ``mask`` is true."""
        v = complex(value.item() if isinstance(value, Tensor) else value)
        return ComplexTensor(self._re.masked_fill(mask, v.real), self._im.masked_fill(mask, v.imag))

    def __setitem__(self, index, value) -> None:
        re, im = parts(value)
        im = im if im is not None else 0.0
        new_re, new_im = self._re.clone(), self._im.clone()
        new_re[index] = re
        new_im[index] = im
        self._rebind(new_re, new_im)

    def _pair(self, other):
        """Both operands as (re, im) pairs of one dtype; a real other's im is None."""
        if isinstance(other, ComplexTensor):
            dt = dtypes.promote(self._re.dtype, other._re.dtype)
            return (self._re.cast(dt), self._im.cast(dt)), (other._re.cast(dt), other._im.cast(dt))
        if isinstance(other, (complex, np.complexfloating)):
            v = complex(other)
            return (self._re, self._im), (v.real, v.imag)
        if isinstance(other, (bool, int, float, np.number)):
            return (self._re, self._im), (other, None)
        if isinstance(other, np.ndarray) and other.dtype.kind == "c":
            return self._pair(from_numpy(other, self.device))
        o = other if isinstance(other, Tensor) else Tensor(other, device=self.device)
        dt = dtypes.promote(self._re.dtype, o.dtype if o.dtype.is_float else self._re.dtype)
        return (self._re.cast(dt), self._im.cast(dt)), (o.cast(dt), None)


def _part_value(value, part: Tensor) -> Tensor:
    """``value`` (real) as a new value of ``part``: its shape and dtype."""
    if isinstance(value, ComplexTensor):
        raise DTypeError("a complex tensor's real or imaginary part takes real values")
    v = value if isinstance(value, Tensor) else Tensor(value, device=part.device)
    return v.cast(part.dtype).expand(part.shape)


def _broadcast_shape(*shapes):
    from mlfuse.tensor import broadcast_shape

    return broadcast_shape(*shapes)


def _make(re, im) -> ComplexTensor:
    """A complex tensor from parts that may be Python numbers or broadcast."""
    if not isinstance(re, Tensor):
        re = im.full_like(re) if isinstance(im, Tensor) else Tensor(float(re))
    if not isinstance(im, Tensor):
        im = re.full_like(im)
    if re.dtype != im.dtype:
        dt = dtypes.promote(re.dtype, im.dtype)
        re, im = re.cast(dt), im.cast(dt)
    return ComplexTensor(re, im)


def _sqrt(z: ComplexTensor) -> ComplexTensor:
    """The principal square root, without cancellation: the larger part of the
    root is ``t = sqrt((|a| + |z|) / 2)``, the other ``b / 2t``."""
    a, b = z._re, z._im
    t = ((a.abs() + z.abs()) / 2).sqrt()
    zero = t == 0
    u = zero.where(0.0, b / (2 * zero.where(1.0, t)))  # b / 2t, signed like b
    pos = a >= 0
    return _make(pos.where(t, u.abs()), pos.where(u, t.copysign(b)))


class _Holomorphic(Function):
    """``f(z)`` whose gradient is ``grad * conj(f'(z))`` (PyTorch's convention for
    a holomorphic f), rather than the derivative of how the parts are computed:
    on a branch cut that differs (sqrt of a negative real)."""

    @staticmethod
    def forward(ctx, re, im, fn, derivative):
        ctx.save_for_backward(re, im)
        ctx.derivative = derivative
        out = fn(ComplexTensor(re, im))
        return out._re, out._im

    @staticmethod
    def backward(ctx, g_re, g_im):
        re, im = ctx.saved_tensors
        g = ComplexTensor(g_re, g_im) * ctx.derivative(ComplexTensor(re, im)).conj()
        return g._re, g._im, None, None


def _holomorphic(z: ComplexTensor, fn, derivative) -> ComplexTensor:
    re, im = _Holomorphic.apply(z._re, z._im, fn, derivative)
    return ComplexTensor(re, im)


def _divide(a, b, c, d):
    """``(a + bi) / (c + di)`` with the divisor scaled by its larger part, so that
    ``c*c + d*d`` neither overflows nor underflows."""
    s = c.abs().maximum(d.abs()) if isinstance(d, Tensor) else c.abs()
    s = (s == 0).where(1.0, s)
    cs, ds = c / s, d / s
    den = c * cs + d * ds
    return (a * cs + b * ds) / den, (b * cs - a * ds) / den


def parts(x) -> tuple[Tensor, Tensor | None]:
    """``(re, im)`` of a complex tensor or Python/numpy complex number, ``(x, None)``
    of a real tensor or number (as a tensor)."""
    if isinstance(x, ComplexTensor):
        return x._re, x._im
    if isinstance(x, (complex, np.complexfloating)):
        v = complex(x)
        return Tensor(v.real), Tensor(v.imag)
    if isinstance(x, np.ndarray) and x.dtype.kind == "c":
        z = from_numpy(x)
        return z._re, z._im
    return (x if isinstance(x, Tensor) else Tensor(x)), None


def _lift(x, like: Tensor) -> ComplexTensor:
    """``x`` (complex or real, tensor or number) as a complex tensor on ``like``'s
    device with at least ``like``'s precision."""
    if isinstance(x, ComplexTensor):
        return x
    part = like._re.dtype if isinstance(like, ComplexTensor) else dtypes.default_float
    if isinstance(x, (complex, np.complexfloating, bool, int, float, np.number)):
        v = complex(x)
        return ComplexTensor(
            Tensor.full((), v.real, part, like.device), Tensor.full((), v.imag, part, like.device)
        )
    re, im = parts(x)
    if not re.dtype.is_float:
        re = re.cast(part)
    return ComplexTensor(re, im if im is not None else re.zeros_like())


def as_complex(x) -> ComplexTensor:
    """``x`` as a complex tensor: a complex tensor itself, a real one with a zero
    imaginary part (integers as complex64)."""
    if isinstance(x, ComplexTensor):
        return x
    re = x if isinstance(x, Tensor) else Tensor(x)
    if not re.dtype.is_float or re.dtype.is_half:
        re = re.cast(dtypes.float32)
    return ComplexTensor(re, re.zeros_like())


def _matmul(x, y) -> ComplexTensor:
    (a, b), (c, d) = parts(x), parts(y)
    if b is None and d is None:
        return a @ c
    dt = dtypes.promote(a.dtype, c.dtype)
    dt = dt if dt.is_float else dtypes.float32
    a, c = a.cast(dt), c.cast(dt)
    if b is None:
        return _make(a @ c, a @ d.cast(dt))
    if d is None:
        return _make(a @ c, b.cast(dt) @ c)
    b, d = b.cast(dt), d.cast(dt)
    return _make(a @ c - b @ d, a @ d + b @ c)


def einsum(equation: str, *operands) -> Tensor:
    """Einstein summation with complex operands: the product is multilinear, so
    it is the sum over the operands' parts of real einsums."""
    from mlfuse.tensor import einsum as real_einsum

    terms = [(1.0, [], False)]  # (sign, parts chosen, imaginary?)
    for op in operands:
        re, im = parts(op)
        nxt = []
        for sign, chosen, imag in terms:
            nxt.append((sign, [*chosen, re], imag))
            if im is not None:  # i * i = -1
                nxt.append((-sign if imag else sign, [*chosen, im], not imag))
        terms = nxt
    real = imag = None
    for sign, chosen, is_imag in terms:
        dt = chosen[0].dtype
        for c in chosen[1:]:
            dt = dtypes.promote(dt, c.dtype)
        v = real_einsum(equation, *(c.cast(dt) for c in chosen))
        v = v if sign > 0 else -v
        if is_imag:
            imag = v if imag is None else imag + v
        else:
            real = v if real is None else real + v
    if imag is None:
        return real
    return _make(real if real is not None else imag.zeros_like(), imag)


def cat(tensors, dim: int = 0) -> ComplexTensor:
    """Join tensors (any complex) along ``dim``; real ones get a zero imaginary part."""
    from mlfuse.tensor import cat as real_cat

    zs = [as_complex(t) for t in tensors]
    dt = zs[0]._re.dtype
    for z in zs[1:]:
        dt = dtypes.promote(dt, z._re.dtype)
    return ComplexTensor(
        real_cat([z._re.cast(dt) for z in zs], dim), real_cat([z._im.cast(dt) for z in zs], dim)
    )


def stack(tensors, dim: int = 0) -> ComplexTensor:
    """Join tensors of one shape (any complex) along a new ``dim``."""
    zs = [as_complex(t) for t in tensors]
    if not zs:
        raise ArgumentError("stack needs at least one tensor")
    d = dim if dim >= 0 else dim + zs[0].ndim + 1
    return cat([z.unsqueeze(d) for z in zs], d)


def where(cond: Tensor, a, b) -> ComplexTensor:
    """``a`` where ``cond`` is true, else ``b`` (either may be complex)."""
    like = a if isinstance(a, ComplexTensor) else b
    za, zb = _lift(a, like), _lift(b, like)
    dt = dtypes.promote(za._re.dtype, zb._re.dtype)
    return ComplexTensor(
        cond.where(za._re.cast(dt), zb._re.cast(dt)), cond.where(za._im.cast(dt), zb._im.cast(dt))
    )


def _unpickle(values: np.ndarray, device: str, requires_grad: bool) -> ComplexTensor:
    z = from_numpy(values, device)
    return z.requires_grad_() if requires_grad else z


# -- making complex tensors ------------------------------------------------------
def from_numpy(arr, device=None, dtype: DType | None = None) -> ComplexTensor:
    """A complex tensor with the values of a numpy (complex or real) array."""
    arr = np.asarray(arr)
    dt = dtype or (dtypes.as_dtype(arr.dtype) if arr.dtype.kind == "c" else dtypes.complex64)
    part = dt.to_real
    return ComplexTensor(
        Tensor(np.ascontiguousarray(arr.real).astype(part.np), device=device),
        Tensor(np.ascontiguousarray(arr.imag).astype(part.np), device=device),
    )


def is_complex_data(data) -> bool:
    """Whether ``data`` (numbers, lists, arrays) holds complex numbers."""
    if isinstance(data, (complex, np.complexfloating)):
        return True
    if isinstance(data, np.ndarray):
        return data.dtype.kind == "c"
    if isinstance(data, (list, tuple)):
        stack = [data]
        while stack:
            for v in stack.pop():
                if isinstance(v, (complex, np.complexfloating)):
                    return True
                if isinstance(v, ComplexTensor):
                    return True
                if isinstance(v, (list, tuple)):
                    stack.append(v)
                elif isinstance(v, np.ndarray) and v.dtype.kind == "c":
                    return True
    return False


def full(shape, value, dtype, device=None) -> ComplexTensor:
    """``value`` (a number or complex) in ``shape``, complex ``dtype``."""
    dt = dtypes.as_dtype(dtype)
    dt = dt if dt.is_complex else dt.to_complex
    v = complex(value)
    part = dt.to_real
    return ComplexTensor(
        Tensor.full(shape, v.real, part, device), Tensor.full(shape, v.imag, part, device)
    )


def randn(shape, dtype, device=None, requires_grad=False, seed=None) -> ComplexTensor:
    """Complex standard normal values: each part N(0, 1/2), as PyTorch's."""
    from mlfuse.tensor import _rng

    dt = dtypes.as_dtype(dtype)
    g = _rng(seed)
    s = tuple(shape)
    vals = (g.standard_normal(s) + 1j * g.standard_normal(s)) * math.sqrt(0.5)
    return _made(from_numpy(vals, device, dt), requires_grad)


def rand(shape, dtype, device=None, requires_grad=False, seed=None) -> ComplexTensor:
    """Complex values with each part uniform in [0, 1), as PyTorch's."""
    dt = dtypes.as_dtype(dtype)
    part = dt.to_real
    re = Tensor.rand(*shape, dtype=part, device=device, seed=seed)
    im = Tensor.rand(
        *shape, dtype=part, device=device, seed=seed + 1 if isinstance(seed, int) else seed
    )
    return _made(ComplexTensor(re, im), requires_grad)


def _made(z: ComplexTensor, requires_grad: bool) -> ComplexTensor:
    return z.requires_grad_() if requires_grad else z


def make_complex(real, imag) -> ComplexTensor:
    """``real + 1j * imag`` from two float tensors of one dtype:
    ``mlfuse.complex(mlfuse.tensor([1.0]), mlfuse.tensor([2.0]))``."""
    for name, t in (("real", real), ("imag", imag)):
        if not isinstance(t, Tensor) or isinstance(t, ComplexTensor):
            raise DTypeError(f"complex: {name} must be a real tensor, got {type(t).__name__}")
        if not t.dtype.is_float or t.dtype.is_half:
            raise DTypeError(
                f"complex: expected float32 or float64 parts, got {name} of {t.dtype.name}"
            )
    if real.dtype != imag.dtype:
        raise DTypeError(
            f"complex: real and imag must have the same dtype, got {real.dtype.name} and "
            f"{imag.dtype.name}"
        )
    return ComplexTensor(real, imag)


def polar(abs, angle) -> ComplexTensor:  # noqa: A002 - PyTorch's names
    """``abs * (cos(angle) + 1j * sin(angle))``: ``mlfuse.polar(r, theta)``
    (rotary embeddings' ``freqs_cis``)."""
    make_complex(abs, angle)  # the same checks
    return _make(abs * angle.cos(), abs * angle.sin())


def view_as_real(input) -> Tensor:  # noqa: A002 - PyTorch's names
    """The parts of a complex tensor stacked in a last dim of 2: ``(..., 2)``."""
    if not isinstance(input, ComplexTensor):
        raise DTypeError(
            f"view_as_real is only supported for complex tensors, got {input.dtype.name}"
            if isinstance(input, Tensor)
            else f"view_as_real expects a complex tensor, got {type(input).__name__}"
        )
    from mlfuse.tensor import stack

    return stack([input._re, input._im], -1)


def view_as_complex(input) -> ComplexTensor:  # noqa: A002 - PyTorch's names
    """A float tensor whose last dim has size 2 as complex numbers ``x[..., 0] +
    1j * x[..., 1]``: ``mlfuse.view_as_complex(x.reshape(*x.shape[:-1], -1, 2))``."""
    if not isinstance(input, Tensor) or isinstance(input, ComplexTensor):
        raise DTypeError("view_as_complex expects a real float tensor")
    if not input.dtype.is_float or input.dtype.is_half:
        raise DTypeError(
            f"view_as_complex is only supported for float32 and float64 tensors, got "
            f"{input.dtype.name}"
        )
    if not input.shape or input.shape[-1] != 2:
        raise ArgumentError(
            f"view_as_complex: the last dim must have size 2, the tensor has shape {input.shape}"
        )
    return ComplexTensor(input[..., 0], input[..., 1])


def real(input) -> Tensor:  # noqa: A002 - PyTorch's names
    """The real part (a real tensor is its own)."""
    return input.real if isinstance(input, Tensor) else Tensor(input)


def imag(input) -> Tensor:  # noqa: A002 - PyTorch's names
    """The imaginary part of a complex tensor (PyTorch refuses real ones)."""
    if not isinstance(input, ComplexTensor):
        raise DTypeError("imag is not implemented for tensors with non-complex dtypes")
    return input.imag


# -- what complex tensors do with the real tensors' machinery ----------------------
def _movement(name: str):
    real_op = getattr(Tensor, name)

    def op(self, *args, **kwargs):
        return ComplexTensor(real_op(self._re, *args, **kwargs), real_op(self._im, *args, **kwargs))

    op.__name__ = name
    op.__doc__ = f"``{name}`` of both parts."
    return op


def _splitting(name: str):
    real_op = getattr(Tensor, name)

    def op(self, *args, **kwargs):
        res = real_op(self._re, *args, **kwargs)
        ims = real_op(self._im, *args, **kwargs)
        return tuple(ComplexTensor(r, i) for r, i in zip(res, ims))

    op.__name__ = name
    op.__doc__ = f"``{name}`` of both parts."
    return op


for _name in _MOVEMENT:
    if hasattr(Tensor, _name):
        setattr(ComplexTensor, _name, _movement(_name))
for _name in _SPLITS:
    if hasattr(Tensor, _name):
        setattr(ComplexTensor, _name, _splitting(_name))


def _cast_to(name: str, dt: DType):
    def op(self):
        return self.cast(dt)

    op.__name__ = name
    op.__doc__ = f"As {dt.name} (a real dtype keeps the real part)."
    return op


for _name, _dt in (
    ("float", dtypes.float32), ("double", dtypes.float64), ("half", dtypes.float16),
    ("bfloat16", dtypes.bfloat16), ("int", dtypes.int32), ("long", dtypes.int64),
    ("short", dtypes.int16), ("char", dtypes.int8), ("byte", dtypes.uint8),
    ("bool", dtypes.bool_),
):  # fmt: skip
    setattr(ComplexTensor, _name, _cast_to(_name, _dt))


ComplexTensor.stft = Tensor.stft  # complex signals: two-sided spectra
ComplexTensor.istft = Tensor.istft


def _expand_as(self, other):
    return self.expand(other.shape)


ComplexTensor.expand_as = _expand_as
ComplexTensor.view_as = lambda self, other: self.reshape(other.shape)  # noqa: E731
ComplexTensor.reshape_as = ComplexTensor.view_as

# Tensor methods complex tensors leave out raise a DTypeError naming them.
_KEEP = {
    "ndim", "numel", "size", "dim", "nelement", "__len__", "ndimension", "is_cuda",
    "is_cpu", "get_device", "nbytes", "itemsize",
    "__class__", "__init_subclass__", "__subclasshook__", "__weakref__", "__slots__",
    "__doc__", "__module__", "__dict__", "__format__", "__sizeof__", "__dir__",
    "__setattr__", "__delattr__", "__init__", "__new__", "__getstate__",
    "__reduce_ex__", "__hash__", "__array_ufunc__", "__array_priority__", "__contains__",
    "__lt__", "__le__", "__gt__", "__ge__",
}  # fmt: skip


def _unsupported(name: str):
    def op(self, *args, **kwargs):
        raise DTypeError(f"{name} is not supported for complex tensors ({self.dtype.name})")

    op.__name__ = name
    return op


def _unsupported_property(name: str):
    def get(self):
        raise DTypeError(f"{name} is not supported for complex tensors ({self.dtype.name})")

    return property(get)


for _name, _value in list(vars(Tensor).items()):
    if _name in ComplexTensor.__dict__ or _name in _KEEP:
        continue
    if _name.startswith("_") and not (_name.startswith("__") and _name.endswith("__")):
        continue  # internal helpers: unreachable except through public ones
    if isinstance(_value, property):
        setattr(ComplexTensor, _name, _unsupported_property(_name))
    elif callable(_value) or isinstance(_value, (staticmethod, classmethod)):
        if isinstance(_value, staticmethod):
            continue  # creation functions: Tensor.zeros(...) makes real tensors
        setattr(ComplexTensor, _name, _unsupported(_name))

for _name in ("__lt__", "__le__", "__gt__", "__ge__"):
    setattr(ComplexTensor, _name, _unsupported(_name))
