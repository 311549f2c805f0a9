"""PyTorch's ``torch.testing``: :func:`assert_close` and :func:`make_tensor`::

    mlfuse.testing.assert_close(model(x), expected)          # dtype-aware tolerances
    x = mlfuse.testing.make_tensor(3, 4, dtype=mlfuse.float32, device="cpu", low=-1, high=1)

``assert_close`` compares tensors, numpy arrays, Python numbers and
(nested) sequences and mappings of them, with PyTorch's default tolerances
for the dtype (float32: ``rtol=1.3e-6, atol=1e-5``; float64: ``1e-7, 1e-7``;
float16: ``1e-3, 1e-5``; bfloat16: ``1.6e-2, 1e-5``; integers and bools:
exact), and raises an ``AssertionError`` saying how many elements differ and
where the greatest differences are, as PyTorch's does.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from mlfuse import dtypes

__all__ = ["assert_close", "assert_allclose", "make_tensor"]

_TOLERANCES = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-7, 1e-7),
}


def _fail(msg: str | Callable[[str], str] | None, default: str) -> AssertionError:
    if msg is None:
        return AssertionError(default)
    return AssertionError(msg(default) if callable(msg) else msg)


def _as_array(x, where: str) -> tuple[np.ndarray, dtypes.DType | None, str | None]:
    from mlfuse.tensor import Tensor

    if isinstance(x, Tensor):
        return x.detach().numpy(), x.dtype, x.device
    if isinstance(x, np.ndarray) or isinstance(x, np.generic):
        arr = np.asarray(x)
        try:
            return arr, dtypes.from_numpy(arr.dtype), None
        except TypeError:
            return arr, None, None
    if isinstance(x, (bool, int, float)):
        return np.asarray(x), None, None
    raise TypeError(f"assert_close: cannot compare {type(x).__name__}{where}")


def _is_leaf(x) -> bool:
    from mlfuse.tensor import Tensor

    return isinstance(x, (Tensor, np.ndarray, np.generic, bool, int, float))


def assert_close(actual, expected, *, allow_subclasses: bool = True, rtol: float | None = None,
                 atol: float | None = None, equal_nan: bool = False, check_device: bool = True,
                 check_dtype: bool = True, check_layout: bool = True, check_stride: bool = False,
                 msg: str | Callable[[str], str] | None = None) -> None:  # fmt: skip
    """Raise ``AssertionError`` unless ``actual`` and ``expected`` are close:
    ``|actual - expected| <= atol + rtol * |expected|`` elementwise, same shape
    (and dtype and device unless told not to check), NaNs equal with
    ``equal_nan``. Give both tolerances or neither."""
    if (rtol is None) != (atol is None):
        raise ValueError(
            "assert_close: both 'rtol' and 'atol' must be given, or neither; "
            f"got rtol={rtol}, atol={atol}"
        )
    _compare(actual, expected, "", rtol, atol, equal_nan, check_device, check_dtype, msg)


def _compare(actual, expected, where, rtol, atol, equal_nan, check_device, check_dtype, msg):
    if isinstance(actual, Mapping) and isinstance(expected, Mapping):
        if set(actual) != set(expected):
            raise _fail(msg, f"The keys of the mappings do not match{where}: "
                        f"{sorted(map(str, actual))} != {sorted(map(str, expected))}")  # fmt: skip
        for k in actual:
            _compare(actual[k], expected[k], f"{where}, item [{k!r}]", rtol, atol, equal_nan,
                     check_device, check_dtype, msg)  # fmt: skip
        return
    seqs = (Sequence,)
    if (isinstance(actual, seqs) and isinstance(expected, seqs)
            and not isinstance(actual, str) and not isinstance(expected, str)):  # fmt: skip
        if len(actual) != len(expected):
            raise _fail(msg, f"The length of the sequences mismatch{where}: "
                        f"{len(actual)} != {len(expected)}")  # fmt: skip
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, f"{where}, item [{i}]", rtol, atol, equal_nan, check_device,
                     check_dtype, msg)  # fmt: skip
        return
    if not (_is_leaf(actual) and _is_leaf(expected)):
        if actual == expected:  # other objects: by equality
            return
        raise _fail(msg, f"Objects are not equal{where}: {actual!r} != {expected!r}")
    a, adt, adev = _as_array(actual, where)
    e, edt, edev = _as_array(expected, where)
    if a.shape != e.shape:
        raise _fail(msg, f"The values for attribute 'shape' do not match{where}: "
                    f"{a.shape} != {e.shape}.")  # fmt: skip
    if check_dtype and adt is not None and edt is not None and adt != edt:
        raise _fail(msg, f"The values for attribute 'dtype' do not match{where}: "
                    f"{adt!r} != {edt!r}.")  # fmt: skip
    if check_device and adev is not None and edev is not None and adev != edev:
        raise _fail(msg, f"The values for attribute 'device' do not match{where}: "
                    f"{adev} != {edev}.")  # fmt: skip
    if rtol is None:
        names = [d.name for d in (adt, edt) if d is not None]
        floats = [n for n in names if n in _TOLERANCES]
        if not floats and any(isinstance(x, float) for x in (actual, expected)):
            floats = ["float32"] if not names else ["float64"]
        if floats:
            rtol, atol = max(_TOLERANCES[n] for n in floats)
        else:
            rtol, atol = 0.0, 0.0
    wide = np.complex128 if np.iscomplexobj(a) or np.iscomplexobj(e) else np.float64
    a64, e64 = a.astype(wide), e.astype(wide)
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(a64 - e64)  # complex: the modulus of the difference, as PyTorch's
        ok = diff <= atol + rtol * np.abs(e64)
        ok |= a64 == e64  # equal infinities
        if equal_nan:
            ok |= np.isnan(a64) & np.isnan(e64)
    if ok.all():
        return
    bad = ~ok
    n, total = int(bad.sum()), ok.size
    kind = "Scalars" if a.ndim == 0 else "Tensor-likes"
    with np.errstate(invalid="ignore", divide="ignore"):
        rel = diff / np.abs(e64)
    diff_m = np.where(bad, np.nan_to_num(diff, nan=np.inf), -1.0)
    rel_m = np.where(bad, np.nan_to_num(rel, nan=np.inf), -1.0)
    ia = np.unravel_index(int(np.argmax(diff_m)), a.shape) if a.ndim else ()
    ir = np.unravel_index(int(np.argmax(rel_m)), a.shape) if a.ndim else ()
    at_a = f" at index {tuple(int(i) for i in ia)}" if a.ndim else ""
    at_r = f" at index {tuple(int(i) for i in ir)}" if a.ndim else ""
    lines = [f"{kind} are not close{where}!", ""]
    if a.ndim:
        lines.append(f"Mismatched elements: {n} / {total} ({100.0 * n / total:.1f}%)")
    lines.append(f"Greatest absolute difference: {float(diff[ia]) if a.ndim else float(diff)}"
                 f"{at_a} (up to {atol} allowed)")  # fmt: skip
    lines.append(f"Greatest relative difference: {float(rel[ir]) if a.ndim else float(rel)}"
                 f"{at_r} (up to {rtol} allowed)")  # fmt: skip
    raise _fail(msg, "\n".join(lines))


def assert_allclose(actual, expected, rtol: float | None = None, atol: float | None = None,
                    equal_nan: bool = True, msg: str = "") -> None:  # fmt: skip
    """PyTorch's deprecated spelling: :func:`assert_close` without the dtype check."""
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan,
                 check_dtype=False, msg=msg or None)  # fmt: skip


def make_tensor(*shape, dtype, device="cpu", low: float | None = None, high: float | None = None,
                requires_grad: bool = False, noncontiguous: bool = False,
                exclude_zero: bool = False, memory_format=None):  # fmt: skip
    """A tensor of ``shape`` filled with uniform values in ``[low, high)``
    (PyTorch's defaults: [-9, 9] for floats and signed integers, [0, 10) for
    unsigned ones, 0/1 for bools); ``exclude_zero`` replaces zeros by the
    smallest positive step (floats: the dtype's tiny; integers: 1)."""
    from mlfuse.tensor import Tensor, _rng

    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    dt = dtypes.as_dtype(dtype)
    if low is not None and high is not None and low > high:
        raise ValueError(f"make_tensor: low ({low}) must not be above high ({high})")
    for name, v in (("low", low), ("high", high)):
        if v is not None and isinstance(v, float) and math.isnan(v):
            raise ValueError(f"make_tensor: {name} cannot be NaN")
    g = _rng(None)
    if dt.is_bool:
        vals = g.integers(0, 2, shape).astype(bool)
    elif dt.is_float:
        lo = -9.0 if low is None else float(low)
        hi = 9.0 if high is None else float(high)
        vals = g.uniform(lo, hi, shape)
        if exclude_zero:
            tiny = float(np.finfo(np.float16 if dt.is_half else dt.host).tiny)
            vals = np.where(vals == 0, tiny, vals)
    else:
        info = np.iinfo(np.dtype(dt.np))
        lo = (0 if dt.unsigned else -9) if low is None else math.ceil(low)
        hi = 10 if high is None else math.ceil(high)
        lo, hi = max(lo, info.min), min(hi, info.max)
        vals = g.integers(lo, max(hi, lo + 1), shape)
        if exclude_zero:
            vals = np.where(vals == 0, 1, vals)
    t = Tensor(vals, dt, device)
    if memory_format is not None:
        t = t.contiguous(memory_format=memory_format)
    if noncontiguous and t.numel() > 1:
        t = Tensor.stack(t, t.zeros_like(), dim=-1)[..., 0]  # every other element of a buffer
    if requires_grad:
        t = t.detach().requires_grad_()
    return t
