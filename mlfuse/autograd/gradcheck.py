"""PyTorch's ``torch.autograd.gradcheck`` and ``gradgradcheck``: a function's
gradients (autograd's vector-Jacobian products) against central differences
of its values, for the float64 tensor inputs that require grad::

    x = mlfuse.randn(4, dtype=mlfuse.float64, requires_grad=True)
    assert mlfuse.autograd.gradcheck(MyFunction.apply, (x,))

Every output element's Jacobian row is compared with ``|analytic - numeric|
<= atol + rtol * |numeric|``; a mismatch raises :class:`GradcheckError` naming
the input, output and worst element (or returns False with
``raise_exception=False``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]


class GradcheckError(RuntimeError):
    """An analytic gradient that differs from the numeric one."""


def _tensors(x) -> tuple:
    from mlfuse.tensor import Tensor

    if isinstance(x, Tensor):
        return (x,)
    if isinstance(x, (tuple, list)):
        return tuple(x)
    raise TypeError(f"gradcheck: inputs must be a Tensor or a tuple, got {type(x).__name__}")


def _outputs(res) -> tuple:
    from mlfuse.tensor import Tensor

    outs = (res,) if isinstance(res, Tensor) else tuple(res)
    for o in outs:
        if not isinstance(o, Tensor):
            raise TypeError(f"gradcheck: the function returned {type(o).__name__}, not tensors")
    return outs


def _numeric(fn, inputs: tuple, k: int, eps: float) -> list[np.ndarray]:
    """d output / d inputs[k] for each float output: (out.numel, in.numel) each."""
    from mlfuse.tensor import Tensor

    base = inputs[k]
    flat = base.detach().numpy().astype(np.float64).reshape(-1)
    cols: list[list[np.ndarray]] = []
    for i in range(flat.size):
        vals = []
        for sign in (1.0, -1.0):
            moved = flat.copy()
            moved[i] += sign * eps
            args = list(inputs)
            args[k] = Tensor(moved.reshape(base.shape), base.dtype, base.device,
                             requires_grad=base.requires_grad)  # fmt: skip
            vals.append([o.detach().numpy().astype(np.float64).reshape(-1)
                         for o in _outputs(fn(*args))])  # fmt: skip
        cols.append([(a - b) / (2 * eps) for a, b in zip(*vals)])
    n_out = len(cols[0]) if cols else 0
    return [np.stack([c[j] for c in cols], axis=1) if cols else np.zeros((0, 0))
            for j in range(n_out)]  # fmt: skip


def _analytic(fn, inputs: tuple, picks: list[int]) -> list[list[np.ndarray]]:
    """[output][input] Jacobians from autograd: one backward per output element."""
    from mlfuse.autograd import grad
    from mlfuse.tensor import Tensor

    outs = _outputs(fn(*inputs))
    result = []
    for o in outs:
        rows = {k: [] for k in picks}
        for i in range(o.numel()):
            seed = np.zeros(o.numel())
            seed[i] = 1.0
            if o.node.tape is None:
                got = [None] * len(picks)
            else:
                got = grad(o, [inputs[k] for k in picks],
                           Tensor(seed.reshape(o.shape), o.dtype, o.device),
                           allow_unused=True, create_graph=False)  # fmt: skip
            for k, g in zip(picks, got):
                size = inputs[k].numel()
                rows[k].append(np.zeros(size) if g is None else
                               g.detach().numpy().astype(np.float64).reshape(-1))  # fmt: skip
        result.append([np.stack(rows[k]) if rows[k] else np.zeros((0, inputs[k].numel()))
                       for k in picks])  # fmt: skip
    return result


def gradcheck(func: Callable, inputs, *, eps: float = 1e-6, atol: float = 1e-5,
              rtol: float = 1e-3, raise_exception: bool = True, nondet_tol: float = 0.0,
              check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
              check_batched_grad: bool = False, check_batched_forward_grad: bool = False,
              check_forward_ad: bool = False, check_backward_ad: bool = True,
              fast_mode: bool = False, masked: bool | None = None) -> bool:  # fmt: skip
    """Whether ``func``'s gradients at ``inputs`` match central differences (see
    the module's documentation). Inputs that require grad should be float64,
    as PyTorch warns: float32 differences are too coarse for the tolerances."""
    import warnings

    ins = _tensors(inputs)
    from mlfuse.tensor import Tensor

    picks = [k for k, t in enumerate(ins) if isinstance(t, Tensor) and t.requires_grad]
    if not picks:
        raise ValueError("gradcheck: expected at least one input tensor that requires grad")
    for k in picks:
        if ins[k].dtype.name != "float64":
            warnings.warn(
                f"gradcheck: input {k} is {ins[k].dtype.name}, not float64; the check may "
                "fail from rounding alone",
                UserWarning,
                stacklevel=2,
            )
    analytic = _analytic(func, ins, picks)
    for j, k in enumerate(picks):
        numeric = _numeric(func, ins, k, eps)
        for o, (num, ana) in enumerate(zip(numeric, (a[j] for a in analytic))):
            if num.shape != ana.shape:
                num = num.reshape(ana.shape)
            bad = np.abs(ana - num) > atol + rtol * np.abs(num)
            if bad.any():
                r, c = np.unravel_index(np.argmax(np.abs(ana - num)), ana.shape)
                got, want = float(ana[r, c]), float(num[r, c])
                msg = (
                    f"gradcheck: Jacobian mismatch for output {o} with respect to input {k}: "
                    f"element ({r}, {c}) is {got!r} by autograd and {want!r} numerically "
                    f"(atol={atol}, rtol={rtol})"
                )
                if raise_exception:
                    raise GradcheckError(msg)
                return False
    return True


def gradgradcheck(func: Callable, inputs, grad_outputs=None, *, eps: float = 1e-6,
                  atol: float = 1e-5, rtol: float = 1e-3, gen_non_contig_grad_outputs=False,
                  raise_exception: bool = True, **kwargs) -> bool:  # fmt: skip
    """:func:`gradcheck` of the gradients themselves: the second derivatives of
    ``func`` (with random ``grad_outputs`` when none are given)."""
    from mlfuse.autograd import grad
    from mlfuse.tensor import Tensor

    ins = _tensors(inputs)
    picks = [k for k, t in enumerate(ins) if isinstance(t, Tensor) and t.requires_grad]
    outs = _outputs(func(*ins))
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = tuple(Tensor(rng.standard_normal(o.shape), o.dtype, o.device) for o in outs)
    gos = _tensors(grad_outputs)

    def first_grads(*args):
        res = _outputs(func(*args))
        got = grad(list(res), [args[k] for k in picks], list(gos), create_graph=True,
                   allow_unused=True, materialize_grads=True)  # fmt: skip
        return tuple(got)

    return gradcheck(first_grads, ins, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)  # fmt: skip
